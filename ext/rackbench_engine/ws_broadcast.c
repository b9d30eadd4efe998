/*
 * ws_broadcast.c - the broadcast workload: the broadcaster (thread 0's
 * WebSocket client of its own, or its HTTP connection to --broadcast-url)
 * and every thread's account of what its clients received.
 *
 * Each broadcast carries its number and its send time (ws_payload.h).
 * Numbers run from 1, one every --interval from the clock's start, and a
 * broadcast belongs to the phase its send time falls in, for the
 * broadcaster and the receivers alike. The receivers are the clients
 * ready when the setup ended; each keeps a bit per number, so a broadcast
 * received twice is a duplicate, and one never received is missing from
 * the count of deliveries: delivered / (window broadcasts x receivers) is
 * the delivery ratio, and nothing lost goes uncounted. A broadcast's
 * round trip is its slowest receipt, across every thread (merged by
 * number after the run), and exists only for broadcasts every receiver
 * got: one that some client never received has no "last client".
 *
 * After the window the broadcaster publishes its last broadcast
 * (ws_shared), and each thread waits until every receiver still connected
 * has had it or a later one, or --timeout after it went out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cable.h"
#include "clock.h"
#include "ws_payload.h"
#include "ws_worker_state.h"

static void caster_ready(ws_conn *conn, uint64_t now_ns) {
    (void)conn;
    (void)now_ns;
}

/* What the server sends the broadcaster (its own broadcasts, with a
 * server that sends them to everyone) is no receipt. */
static void caster_message(ws_conn *conn, const uint8_t *data, size_t len, uint64_t now_ns) {
    (void)conn;
    (void)data;
    (void)len;
    (void)now_ns;
}

static void caster_ended(ws_conn *conn, uint64_t now_ns) {
    (void)conn;
    (void)now_ns;
}

static const ws_conn_events caster_events = {.ready = caster_ready, .message = caster_message, .ended = caster_ended};

static void post_done(void *ctx, uint64_t seq, ws_post_failure how, int status, uint64_t now_ns);

void ws_broadcast_create(ws_worker *ws, uint32_t broadcaster_slot) {
    worker *w = ws->w;
    const engine_config *cfg = w->cfg;
    /* Every number the schedule can reach, and one to spare. */
    ws->max_seq = (cfg->warmup_ns + cfg->duration_ns) / cfg->ws_interval_ns + 2;
    ws->seen_words = (size_t)(ws->max_seq / 64 + 1);
    for (int i = 0; i < ws->count; i++) ws->clients[i].seen = worker_xcalloc(ws->seen_words, sizeof(uint64_t));
    ws->got = worker_xcalloc((size_t)ws->max_seq + 1, sizeof(uint32_t));
    ws->slowest_ns = worker_xcalloc((size_t)ws->max_seq + 1, sizeof(uint64_t));
    if (w->id != 0) return;
    ws_broadcaster *b = &ws->caster;
    b->sent_ns = worker_xcalloc((size_t)ws->max_seq + 1, sizeof(uint64_t));
    b->lateness_ns = worker_xcalloc(1, sizeof(histogram));
    hist_init(b->lateness_ns);
    if (cfg->ws_broadcaster == WS_BROADCASTER_HTTP) {
        b->http = worker_xcalloc(1, sizeof(ws_http_post));
        ws_http_post_init(b->http, w, post_done, ws);
    } else {
        b->client = worker_xcalloc(1, sizeof(ws_client));
        ws_conn_init(&b->client->conn, w, &ws->cfg, &caster_events, &ws->tally, broadcaster_slot, cfg->seed);
    }
}

void ws_broadcast_destroy(ws_worker *ws) {
    for (int i = 0; i < ws->count; i++) free(ws->clients[i].seen);
    free(ws->got);
    free(ws->slowest_ns);
    ws_broadcaster *b = &ws->caster;
    if (b->client) ws_conn_free(&b->client->conn);
    if (b->http) ws_http_post_free(b->http);
    free(b->client);
    free(b->http);
    free(b->sent_ns);
    free(b->lateness_ns);
}

void ws_broadcast_setup(ws_worker *ws, uint64_t now_ns) {
    if (ws->caster.client) ws_conn_open(&ws->caster.client->conn, now_ns);
}

int ws_broadcast_settled(const ws_worker *ws) {
    const ws_client *c = ws->caster.client;
    return !c || c->conn.state == WS_CONN_OPEN || c->conn.state == WS_CONN_DONE;
}

void ws_broadcast_start(ws_worker *ws, uint64_t now_ns) {
    (void)now_ns;
    for (int i = 0; i < ws->count; i++) {
        ws_client *c = &ws->clients[i];
        c->receiver = c->conn.state == WS_CONN_OPEN;
        ws->receivers += (uint64_t)c->receiver;
    }
    if (ws->w->id != 0) return;
    ws->caster.next_seq = 1;
    ws->caster.next_due_ns = ws->w->clock->start_ns;
    ws->w->think_due_ns = ws->caster.next_due_ns;
}

/* A window broadcast failed on its way out. */
static void count_failure(ws_broadcaster *b, uint64_t seq) {
    if (seq >= b->first_window_seq && b->first_window_seq) b->failed++;
}

/* The HTTP broadcaster's POST of broadcast seq ended. */
static void post_done(void *ctx, uint64_t seq, ws_post_failure how, int status, uint64_t now_ns) {
    (void)status;
    ws_worker *ws = ctx;
    if (how != WS_POST_OK) count_failure(&ws->caster, seq);
    ws->w->in_flight--;
    /* The next broadcast may be overdue: send it now, not at the next
     * housekeeping pass. */
    if (!ws->w->stopping) ws->w->think_due_ns = now_ns;
}

/* Sends broadcast number seq, due at due_ns. */
static void send_one(ws_worker *ws, uint64_t seq, uint64_t due_ns, uint64_t now_ns) {
    worker *w = ws->w;
    ws_broadcaster *b = &ws->caster;
    const ws_conn_config *cfg = &ws->cfg;
    phase_id phase = worker_phase_of(w, now_ns);
    if (phase == PHASE_MEASURE) {
        if (!b->first_window_seq) b->first_window_seq = seq;
        b->last_window_seq = seq;
        hist_record(b->lateness_ns, now_ns - due_ns);
    }
    b->sent[phase]++;
    b->sent_ns[seq] = now_ns;
    b->last_sent_ns = now_ns;
    size_t n = ws_payload_write(cfg->body, cfg->body_cap, seq, now_ns, w->cfg->ws_message_bytes);
    if (b->http) {
        w->in_flight++;
        ws_http_post_send(b->http, seq, cfg->body, n, now_ns);
        return;
    }
    ws_conn *conn = &b->client->conn;
    if (conn->state != WS_CONN_OPEN) {
        b->lost_broadcaster += phase == PHASE_MEASURE;
        count_failure(b, seq);
        return;
    }
    int failed;
    if (cfg->cable) {
        n = cable_perform(cfg->command, cfg->command_cap, cfg->identifier, w->cfg->ws_broadcast_action, cfg->body, n);
        failed = ws_conn_send(conn, WS_OP_TEXT, cfg->command, n, now_ns) < 0;
    } else {
        failed = ws_conn_send(conn, w->cfg->ws_binary ? WS_OP_BINARY : WS_OP_TEXT, cfg->body, n, now_ns) < 0;
    }
    if (failed) {
        b->lost_broadcaster += phase == PHASE_MEASURE;
        count_failure(b, seq);
    }
}

/* Thread 0, while the window lasts: every broadcast due by now goes out
 * (the HTTP one only when its last POST was answered: the rest wait, and
 * their lateness says so). */
static void send_due(ws_worker *ws, uint64_t now_ns) {
    worker *w = ws->w;
    ws_broadcaster *b = &ws->caster;
    while (b->next_due_ns <= now_ns && b->next_due_ns < w->clock->measure_end_ns && b->next_seq <= ws->max_seq) {
        if (b->http && b->http->busy) break;
        if (b->next_due_ns >= w->clock->measure_start_ns) b->scheduled++;
        send_one(ws, b->next_seq, b->next_due_ns, now_ns);
        b->next_seq++;
        b->next_due_ns += w->cfg->ws_interval_ns;
    }
    if (b->http && b->http->busy) w->think_due_ns = UINT64_MAX; /* post_done wakes it */
    else if (b->next_due_ns < w->clock->measure_end_ns) w->think_due_ns = b->next_due_ns;
    else w->think_due_ns = UINT64_MAX;
}

/* Whether this thread has seen the last broadcast through: every receiver
 * still connected has had it or a later one, or it went out longer than
 * --timeout ago. */
static int drained(ws_worker *ws, uint64_t now_ns) {
    ws_shared *shared = ws->w->protocol_shared;
    if (!__atomic_load_n(&shared->published, __ATOMIC_ACQUIRE)) return 0;
    uint64_t last = shared->last_seq;
    if (last == 0 || now_ns >= shared->last_sent_ns + ws->w->cfg->timeout_ns) return 1;
    for (int i = 0; i < ws->count; i++) {
        const ws_client *c = &ws->clients[i];
        if (c->receiver && c->conn.state == WS_CONN_OPEN && c->last_seq < last) return 0;
    }
    return 1;
}

void ws_broadcast_tick(ws_worker *ws, uint64_t now_ns) {
    worker *w = ws->w;
    if (!ws->started) {
        if (ws->caster.client) ws_conn_check_deadline(&ws->caster.client->conn, now_ns);
        return;
    }
    if (ws->caster.http) ws_http_post_check(ws->caster.http, now_ns);
    if (w->id == 0 && !w->stopping) send_due(ws, now_ns);
    if (ws->draining && drained(ws, now_ns)) {
        ws->draining = 0;
        w->in_flight--;
    }
}

void ws_broadcast_stop(ws_worker *ws, uint64_t now_ns) {
    worker *w = ws->w;
    if (w->id == 0 && !ws->caster.published) {
        /* A broadcast due before the end that has not gone out: now, or
         * counted unsent. */
        if (!engine_interrupted) send_due(ws, now_ns);
        ws_shared *shared = w->protocol_shared;
        shared->last_seq = ws->caster.last_window_seq;
        shared->last_sent_ns = ws->caster.last_sent_ns;
        __atomic_store_n(&shared->published, 1, __ATOMIC_RELEASE);
        ws->caster.published = 1;
        w->think_due_ns = UINT64_MAX;
    }
    ws->draining = 1;
    w->in_flight++;
}

void ws_broadcast_received(ws_worker *ws, ws_client *c, const uint8_t *data, size_t len, uint64_t now_ns) {
    worker *w = ws->w;
    uint64_t seq, sent_ns;
    if (!ws_payload_find(data, len, &seq, &sent_ns) || seq == 0 || seq > ws->max_seq) {
        ws->foreign++;
        return;
    }
    uint64_t bit = UINT64_C(1) << (seq % 64);
    if (c->seen[seq / 64] & bit) {
        ws->duplicates++;
        return;
    }
    c->seen[seq / 64] |= bit;
    if (seq > c->last_seq) c->last_seq = seq;
    uint64_t latency_ns = now_ns > sent_ns ? now_ns - sent_ns : 0;
    phase_id phase = worker_phase_of(w, sent_ns);
    phase_stats_response(&w->phases[phase], now_ns, latency_ns, 0, len);
    if (phase != PHASE_MEASURE || !c->receiver) return;
    ws->delivered++;
    ws->got[seq]++;
    if (latency_ns > ws->slowest_ns[seq]) ws->slowest_ns[seq] = latency_ns;
}

void ws_broadcast_on_http_event(ws_worker *ws, uint32_t events, uint64_t now_ns) {
    if (ws->caster.http) ws_http_post_on_event(ws->caster.http, events, now_ns);
}

void ws_broadcast_finish(ws_worker *ws, uint64_t now_ns) {
    if (ws->caster.client) ws_conn_finish(&ws->caster.client->conn, now_ns);
    if (ws->caster.http) ws_http_post_free(ws->caster.http);
}
