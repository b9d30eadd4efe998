/*
 * ws_worker.c - the WebSocket protocol's clients on a worker's loop: the
 * setup (connect, ramp, subscribe), the echo workload, and the loop's
 * table. See ws_worker.h; the broadcast's own work is ws_broadcast.c's.
 */
#include "ws_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cable.h"
#include "clock.h"
#include "ws_payload.h"
#include "ws_worker_state.h"

static void client_ready(ws_conn *conn, uint64_t now_ns);
static void client_message(ws_conn *conn, const uint8_t *data, size_t len, uint64_t now_ns);
static void client_ended(ws_conn *conn, uint64_t now_ns);

static const ws_conn_events client_events = {
    .ready = client_ready, .message = client_message, .ended = client_ended};

static void *ws_create(worker *w) {
    const engine_config *cfg = w->cfg;
    ws_worker *ws = worker_xcalloc(1, sizeof(*ws));
    ws->w = w;
    char err[300];
    if (ws_conn_config_init(&ws->cfg, cfg, err, sizeof(err))) {
        fprintf(stderr, "rackbench-engine: %s\n", err);
        exit(2);
    }
    ws->count = w->conn_count;
    ws->clients = worker_xcalloc((size_t)ws->count, sizeof(ws_client));
    for (int i = 0; i < ws->count; i++)
        ws_conn_init(&ws->clients[i].conn, w, &ws->cfg, &client_events, &ws->tally, (uint32_t)(w->first_slot + i),
                     cfg->seed);
    ws->connect_ns = worker_xcalloc(1, sizeof(histogram));
    hist_init(ws->connect_ns);
    ws->ready_per_s = worker_xcalloc(WS_SETUP_SECONDS_KEPT, sizeof(uint32_t));
    ws->failed_per_s = worker_xcalloc(WS_SETUP_SECONDS_KEPT, sizeof(uint32_t));
    /* The broadcaster's slot comes after every client's. */
    if (cfg->ws_workload == WS_WORKLOAD_BROADCAST) ws_broadcast_create(ws, (uint32_t)cfg->connections);
    return ws;
}

static void ws_destroy(worker *w) {
    ws_worker *ws = ws_of(w);
    for (int i = 0; i < ws->count; i++) ws_conn_free(&ws->clients[i].conn);
    ws_broadcast_destroy(ws);
    free(ws->clients);
    free(ws->connect_ns);
    free(ws->ready_per_s);
    free(ws->failed_per_s);
    ws_conn_config_free(&ws->cfg);
    free(ws);
}

static ws_client *client_of(ws_conn *conn) { return (ws_client *)conn; }

/* The second of the setup that now_ns falls in (the last kept for later). */
static size_t setup_second(const ws_worker *ws, uint64_t now_ns) {
    uint64_t s = now_ns > ws->setup_start_ns ? (now_ns - ws->setup_start_ns) / NS_PER_S : 0;
    return s < WS_SETUP_SECONDS_KEPT ? (size_t)s : WS_SETUP_SECONDS_KEPT - 1;
}

/* --- setup: connect, over the ramp ----------------------------------------- */

/* When client slot opens: slots spread evenly over the ramp. */
static uint64_t due_ns(const ws_worker *ws, uint32_t slot) {
    const engine_config *cfg = ws->w->cfg;
    return ws->setup_start_ns + (uint64_t)((double)cfg->ws_ramp_ns * slot / cfg->connections);
}

/* Opens every client due by now; the loop wakes for the next. */
static void open_due(ws_worker *ws, uint64_t now_ns) {
    worker *w = ws->w;
    while (ws->next_to_open < ws->count && !engine_interrupted) {
        ws_client *c = &ws->clients[ws->next_to_open];
        uint64_t due = due_ns(ws, c->conn.slot);
        if (due > now_ns) {
            w->think_due_ns = due;
            return;
        }
        ws->next_to_open++;
        ws_conn_open(&c->conn, now_ns);
    }
    w->think_due_ns = UINT64_MAX;
}

static void ws_setup(worker *w, uint64_t now_ns) {
    ws_worker *ws = ws_of(w);
    ws->setup_start_ns = w->clock->setup->start_ns;
    ws->unsettled = ws->count;
    ws_broadcast_setup(ws, now_ns);
    open_due(ws, now_ns);
}

static int ws_setup_done(const worker *w) {
    const ws_worker *ws = ws_of(w);
    return ws->unsettled == 0 && ws_broadcast_settled(ws);
}

/* --- echo ------------------------------------------------------------------ */

/* The origin of a closed loop's round trip: the moment the message is
 * handed to the socket (echo_send). */
#define ORIGIN_AT_SEND UINT64_MAX

/* Sends client c's next message, its round trip counted from origin_ns:
 * the open loop's schedule (a late send counts its lateness), or
 * ORIGIN_AT_SEND in a closed loop: the clock read just before the send.
 * Why not the loop's time of the pass (now_ns): it was read when the wait
 * returned, before this client's turn (the echo before this message
 * parsed and counted, other clients of the thread served), and that is
 * the engine's time, not the server's. What a round trip still holds
 * beyond the wire's is the engine's wake-up when the echo arrives, which
 * every client that waits for its echo pays (bench/ws_wire_rtt.rb,
 * doc/performance.md). */
static void echo_send(ws_client *c, uint64_t origin_ns, uint64_t now_ns) {
    worker *w = c->conn.w;
    ws_worker *ws = ws_of(w);
    const ws_conn_config *cfg = &ws->cfg;
    c->seq++;
    c->echo_deadline_ns = now_ns + cfg->timeout_ns;
    c->awaiting = 1;
    w->in_flight++;
    size_t n = ws_payload_write(cfg->body, cfg->body_cap, c->seq, now_ns, w->cfg->ws_message_bytes);
    const void *message = cfg->body;
    ws_opcode op = w->cfg->ws_binary ? WS_OP_BINARY : WS_OP_TEXT;
    if (cfg->cable) {
        n = cable_perform(cfg->command, cfg->command_cap, cfg->identifier, w->cfg->ws_echo_action, cfg->body, n);
        message = cfg->command;
        op = WS_OP_TEXT;
    }
    c->origin_ns = origin_ns == ORIGIN_AT_SEND ? clock_now_ns() : origin_ns;
    c->phase = worker_phase_of(w, c->origin_ns);
    ws->echo_sent[c->phase]++;
    ws_conn_send(&c->conn, op, message, n, now_ns);
}

/* Client c is free again: closed loop, its next message now; open loop,
 * it waits for the schedule. */
static void echo_next(ws_client *c, uint64_t now_ns) {
    worker *w = c->conn.w;
    if (c->conn.state != WS_CONN_OPEN || w->stopping) return;
    if (worker_open_loop(w)) {
        ws_worker *ws = ws_of(w);
        c->next_free = ws->free_stack;
        ws->free_stack = c;
        worker_dispatch_due(w, now_ns);
    } else if (worker_may_start(w, now_ns)) {
        echo_send(c, ORIGIN_AT_SEND, now_ns);
    }
}

/* The awaited echo ended (answered, timed out or lost with its
 * connection): no longer in flight. */
static void echo_settle(ws_client *c) {
    c->awaiting = 0;
    c->conn.w->in_flight--;
}

static void echo_received(ws_client *c, const uint8_t *data, size_t len, uint64_t now_ns) {
    worker *w = c->conn.w;
    ws_worker *ws = ws_of(w);
    uint64_t seq, sent_ns;
    if (!ws_payload_find(data, len, &seq, &sent_ns)) {
        ws->echo_foreign++;
        return;
    }
    if (!c->awaiting || seq != c->seq) {
        if (seq < c->seq || (!c->awaiting && seq == c->seq)) ws->echo_stale++;
        else ws->echo_foreign++;
        return;
    }
    phase_stats_response(&w->phases[c->phase], now_ns, now_ns - c->origin_ns, 0, len);
    echo_settle(c);
    echo_next(c, now_ns);
}

static void echo_timeouts(ws_worker *ws, uint64_t now_ns) {
    worker *w = ws->w;
    for (int i = 0; i < ws->count; i++) {
        ws_client *c = &ws->clients[i];
        if (!c->awaiting || now_ns < c->echo_deadline_ns) continue;
        phase_stats_error(&w->phases[c->phase], now_ns, ERR_TIMEOUT, 0);
        echo_settle(c);
        echo_next(c, now_ns);
    }
}

static int ws_has_free_slot(const worker *w) { return ws_of(w)->free_stack != NULL; }

static void ws_start_scheduled(worker *w, uint64_t due_ns, uint64_t now_ns) {
    ws_worker *ws = ws_of(w);
    ws_client *c = ws->free_stack;
    ws->free_stack = c->next_free;
    echo_send(c, due_ns, now_ns);
}

/* --- the clients' events ---------------------------------------------------- */

static void client_ready(ws_conn *conn, uint64_t now_ns) {
    ws_worker *ws = ws_of(conn->w);
    ws->ready++;
    ws->unsettled--;
    ws->last_ready_ns = now_ns;
    hist_record(ws->connect_ns, now_ns - conn->open_ns);
    ws->ready_per_s[setup_second(ws, now_ns)]++;
}

static void client_message(ws_conn *conn, const uint8_t *data, size_t len, uint64_t now_ns) {
    ws_worker *ws = ws_of(conn->w);
    if (!ws->started) return; /* the setup's: nothing was sent yet */
    switch (conn->w->cfg->ws_workload) {
    case WS_WORKLOAD_ECHO: echo_received(client_of(conn), data, len, now_ns); break;
    case WS_WORKLOAD_BROADCAST: ws_broadcast_received(ws, client_of(conn), data, len, now_ns); break;
    default: ws->echo_foreign++; break;
    }
}

static void client_ended(ws_conn *conn, uint64_t now_ns) {
    ws_worker *ws = ws_of(conn->w);
    ws_client *c = client_of(conn);
    if (!conn->was_ready) {
        ws->unsettled--;
        if (conn->end != WS_END_CLIENT) ws->failed_per_s[setup_second(ws, now_ns)]++;
    }
    if (c->awaiting) {
        /* Its echo is lost with the connection. */
        phase_stats_error(&conn->w->phases[c->phase], now_ns, ERR_READ, 0);
        echo_settle(c);
    }
}

/* --- the loop's table ------------------------------------------------------- */

static void ws_start(worker *w, uint64_t now_ns) {
    ws_worker *ws = ws_of(w);
    ws->started = 1;
    w->think_due_ns = UINT64_MAX;
    const engine_config *cfg = w->cfg;
    if (cfg->ws_workload == WS_WORKLOAD_BROADCAST) {
        ws_broadcast_start(ws, now_ns);
    } else if (cfg->ws_workload == WS_WORKLOAD_ECHO) {
        for (int i = ws->count - 1; i >= 0; i--) {
            ws_client *c = &ws->clients[i];
            if (c->conn.state != WS_CONN_OPEN) continue;
            if (worker_open_loop(w)) {
                c->next_free = ws->free_stack;
                ws->free_stack = c;
            }
        }
        for (int i = 0; i < ws->count && !worker_open_loop(w); i++) {
            ws_client *c = &ws->clients[i];
            if (c->conn.state == WS_CONN_OPEN && worker_may_start(w, now_ns)) echo_send(c, ORIGIN_AT_SEND, now_ns);
        }
    }
}

static void ws_on_event(void *ptr, uint32_t events, uint64_t now_ns) {
    ws_item_kind kind = *(const ws_item_kind *)ptr;
    if (kind == WS_ITEM_CONN) {
        ws_conn_on_event(ptr, events, now_ns);
    } else {
        ws_http_post *p = ptr;
        ws_broadcast_on_http_event(ws_of(p->w), events, now_ns);
    }
}

static void ws_housekeeping(worker *w, uint64_t now_ns) {
    ws_worker *ws = ws_of(w);
    if (!ws->started) {
        open_due(ws, now_ns);
        for (int i = 0; i < ws->next_to_open; i++) ws_conn_check_deadline(&ws->clients[i].conn, now_ns);
    }
    if (w->cfg->ws_workload == WS_WORKLOAD_ECHO && ws->started) echo_timeouts(ws, now_ns);
    if (w->cfg->ws_workload == WS_WORKLOAD_BROADCAST) ws_broadcast_tick(ws, now_ns);
}

static void ws_stop(worker *w, uint64_t until_ns) {
    ws_worker *ws = ws_of(w);
    if (w->cfg->ws_workload == WS_WORKLOAD_BROADCAST) ws_broadcast_stop(ws, until_ns);
}

static void ws_finish(worker *w) {
    ws_worker *ws = ws_of(w);
    uint64_t now_ns = clock_now_ns();
    for (int i = 0; i < ws->count; i++) ws_conn_finish(&ws->clients[i].conn, now_ns);
    ws_broadcast_finish(ws, now_ns);
}

const worker_protocol ws_protocol = {
    .create = ws_create,
    .destroy = ws_destroy,
    .start = ws_start,
    .on_event = ws_on_event,
    .housekeeping = ws_housekeeping,
    .end_turn = NULL,
    .has_free_slot = ws_has_free_slot,
    .start_scheduled = ws_start_scheduled,
    .stop = ws_stop,
    .finish = ws_finish,
    .setup = ws_setup,
    .setup_done = ws_setup_done,
};
