/*
 * h2_worker.c - the h2c protocol's slots: which request each starts, when,
 * and on which connection; timeouts; and the end of each turn of the
 * worker's loop. See h2_worker.h. One connection's socket and session are
 * h2_conn.c's.
 *
 * Each socket is registered once, edge triggered, for input and output,
 * as for HTTP/1.1. nghttp2 works on memory (h2_client.h): what a read
 * brings is fed to the session, and whatever the session then wants to
 * send (WINDOW_UPDATE, SETTINGS ACK, the next requests) goes out in the
 * same turn, so many streams share one write and one read.
 *
 * A stream that ends inside nghttp2's callbacks only marks its slot free:
 * the next request on it is started after the read returns, never from
 * inside the session (which may be about to fail and be freed).
 */
#include "h2_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "h2_worker_state.h"
#include "request_render.h"

/* hc has output to write at the end of this turn (restart_ready). */
static void mark_dirty(h2_conn *hc) {
    struct h2_worker *h = h2_of(hc->w);
    if (hc->dirty) return;
    hc->dirty = 1;
    hc->next_dirty = h->dirty_head;
    h->dirty_head = hc;
}

static void start_request(h2_slot *s, uint64_t start_ns, uint64_t now_ns);

static void *h2_create(worker *w) {
    const engine_config *cfg = w->cfg;
    struct h2_worker *h = worker_xcalloc(1, sizeof(*h));
    h->streams = cfg->streams;
    h->conn_count = w->conn_count;
    h->request_count = w->requests->count;
    h->conns = worker_xcalloc((size_t)w->conn_count, sizeof(h2_conn));
    h->slots = worker_xcalloc((size_t)w->conn_count * (size_t)h->streams, sizeof(h2_slot));
    char err[256];
    if (h2_requests_build(&h->requests, w->requests, cfg, err, sizeof(err))) {
        fprintf(stderr, "rackbench-engine: %s\n", err);
        exit(2);
    }
    for (int i = 0; i < w->conn_count; i++) {
        h2_conn *hc = &h->conns[i];
        hc->w = w;
        hc->fd = -1;
        hc->number = (uint32_t)(w->first_slot + i);
        hc->slots = &h->slots[(size_t)i * (size_t)h->streams];
        hc->out = worker_xcalloc(1, OUT_BUFFER_BYTES);
        if (w->tls_ctx) {
            hc->tls = worker_xcalloc(1, sizeof(tls_conn));
            tls_conn_init(hc->tls);
        }
        for (int k = 0; k < h->streams; k++) {
            h2_slot *s = &hc->slots[k];
            s->hc = hc;
            s->id = (uint32_t)((w->first_slot + i) * h->streams + k);
            /* As for HTTP/1.1: each slot's mix depends on the seed and its
             * number only. */
            rng_seed(&s->rng, cfg->seed * UINT64_C(0x100000001B3) + s->id);
        }
    }
    return h;
}

static void h2_destroy(worker *w) {
    struct h2_worker *h = h2_of(w);
    for (int i = 0; i < h->conn_count; i++) {
        h2_conn *hc = &h->conns[i];
        if (hc->has_client) h2_client_free(&hc->client);
        if (hc->fd >= 0) close(hc->fd);
        free(hc->out);
        if (hc->tls) tls_conn_free(hc->tls);
        free(hc->tls);
    }
    h2_requests_free(h->requests, h->request_count);
    free(h->conns);
    free(h->slots);
    free(h);
}

/* Sends slot s's chosen request: on its connection, opened if closed.
 * After a GOAWAY the connection takes no new stream: the request waits
 * (pending) until the connection's last streams are done, then goes out
 * on a new one. */
static void send_request(h2_slot *s, uint64_t now_ns) {
    h2_conn *hc = s->hc;
    worker *w = hc->w;
    s->pending = 0;
    if (hc->state == H2CONN_OPEN && !h2_client_usable(&hc->client)) {
        if (hc->busy > 0) {
            s->pending = 1;
            h2_push_ready(s);
            return;
        }
        /* A GOAWAY with an error code (ENHANCE_YOUR_CALM...) asks us to
         * back off: the request waits it out, then goes on a new connection. */
        int calm_down = hc->client.goaway && hc->client.goaway_code != NGHTTP2_NO_ERROR;
        h2_conn_close(hc, ERR_GOAWAY, calm_down, now_ns);
        if (calm_down) {
            s->pending = 1; /* looked at again when the backoff ends */
            return;
        }
    }
    const h2_request *hr = &h2_of(w)->requests[s->req - w->requests->items];
    s->deadline_ns = now_ns + w->cfg->timeout_ns;
    s->stream.body = hr->body;
    s->stream.body_len = hr->body_len;
    s->stream.status = 0;
    s->stream.header_bytes = s->stream.body_bytes = 0;
    s->state = SLOT_SENT;
    hc->busy++;
    slot_service_sent(&s->service, now_ns, w->clock->measure_start_ns);
    slot_service_sent(&hc->service, now_ns, w->clock->measure_start_ns);
    /* Over TLS, a request sent before the handshake's end waits for it. */
    s->paid_handshake = hc->tls && !hc->connected;
    /* A failed open counts this request as a connect error (conn_close). */
    if (hc->state == H2CONN_CLOSED && h2_conn_open(hc, s->phase, now_ns) < 0) return;
    if (h2_client_submit(&hc->client, hr->headers, hr->header_count, &s->stream) < 0) {
        /* Stream ids exhausted or the session closing: the connection is
         * done; this request fails with it and the slot starts afresh. */
        h2_conn_close(hc, ERR_H2_PROTOCOL, 0, now_ns);
        return;
    }
    mark_dirty(hc);
}

/* Starts the next request on slot s (free, its connection not in
 * backoff). start_ns is its latency origin. */
static void start_request(h2_slot *s, uint64_t start_ns, uint64_t now_ns) {
    worker *w = s->hc->w;
    s->req = requests_next(w->requests, &s->rng, &s->first_done);
    s->start_ns = start_ns;
    s->phase = worker_phase_of(w, start_ns);
    w->in_flight++;
    send_request(s, now_ns);
}

static int h2_has_free_slot(const worker *w) { return h2_of(w)->free_stack != NULL; }

/* Open loop: the request due at due_ns goes on the free stack's top slot. */
static void h2_start_scheduled(worker *w, uint64_t due_ns, uint64_t now_ns) {
    struct h2_worker *h = h2_of(w);
    h2_slot *s = h->free_stack;
    h->free_stack = s->next_free;
    start_request(s, due_ns, now_ns);
}

/* Gives the slots of the ready list their next request: closed loop at
 * once, open loop through the free stack; requests waiting for their
 * connection (pending) go out. Slots of a connection in backoff wait for
 * it (housekeeping puts them back when it ends). Then every connection
 * with new requests writes them, one send for all of a turn's streams. */
static void restart_ready(worker *w, uint64_t now_ns) {
    struct h2_worker *h = h2_of(w);
    h2_slot *list = h->ready_head;
    h->ready_head = NULL;
    while (list) {
        h2_slot *s = list;
        list = s->next_ready;
        s->ready = 0;
        if (s->state != SLOT_FREE || s->hc->state == H2CONN_BACKOFF) continue;
        if (s->pending) {
            /* Due before the end: it goes out even while draining. */
            send_request(s, now_ns);
        } else if (w->stopping) {
            continue;
        } else if (worker_open_loop(w)) {
            s->next_free = h->free_stack;
            h->free_stack = s;
        } else if (now_ns < w->clock->measure_end_ns) {
            start_request(s, now_ns, now_ns);
        }
    }
    if (worker_open_loop(w) && !w->stopping) worker_dispatch_due(w, now_ns);
    while (h->dirty_head) {
        h2_conn *hc = h->dirty_head;
        h->dirty_head = hc->next_dirty;
        hc->dirty = 0;
        if (hc->state == H2CONN_OPEN) h2_conn_flush(hc, now_ns);
    }
}

static void h2_housekeeping(worker *w, uint64_t now_ns) {
    struct h2_worker *h = h2_of(w);
    for (int i = 0; i < w->conn_count; i++) {
        h2_conn *hc = &h->conns[i];
        if (hc->state == H2CONN_BACKOFF) {
            if (now_ns >= hc->backoff_until_ns || w->stopping) {
                hc->state = H2CONN_CLOSED;
                for (int k = 0; k < h->streams; k++) h2_push_ready(&hc->slots[k]);
            }
            continue;
        }
        if (hc->state != H2CONN_OPEN) continue;
        int cancelled = 0;
        for (int k = 0; k < h->streams; k++) {
            h2_slot *s = &hc->slots[k];
            if (s->state != SLOT_SENT || now_ns < s->deadline_ns) continue;
            if (!hc->connected) {
                /* Not connected in time; over TLS, a handshake the server
                 * is slow to answer counts in the timeout, as for http1. */
                h2_conn_close(hc, hc->handshaking ? ERR_TIMEOUT : ERR_CONNECT, 1, now_ns);
                break;
            }
            /* No answer in time: give the stream up (RST_STREAM CANCEL),
             * keep the connection for the others. */
            h2_client_cancel(&hc->client, &s->stream);
            h2_slot_error(s, ERR_TIMEOUT, now_ns);
            h2_slot_ended(s);
            cancelled = 1;
        }
        if (cancelled && hc->state == H2CONN_OPEN) h2_conn_flush(hc, now_ns);
    }
}

static void h2_start(worker *w, uint64_t now_ns) {
    struct h2_worker *h = h2_of(w);
    /* In slot order: the first streams of every connection first. */
    for (int i = w->conn_count - 1; i >= 0; i--)
        for (int k = h->streams - 1; k >= 0; k--) h2_push_ready(&h->conns[i].slots[k]);
    restart_ready(w, now_ns);
}

/* What is still open at the end (drained, or interrupted) closes here;
 * every wait ends now, and the slots are totalled in slot order. */
static void h2_finish(worker *w) {
    struct h2_worker *h = h2_of(w);
    uint64_t now_ns = clock_now_ns();
    uint64_t measure_start_ns = w->clock->measure_start_ns;
    for (int i = 0; i < w->conn_count; i++) {
        h2_conn *hc = &h->conns[i];
        slot_service_finish(&hc->service, now_ns, measure_start_ns);
        service_totals_add(&w->conn_service, &hc->service, hc->number);
        for (int k = 0; k < h->streams; k++) {
            h2_slot *s = &hc->slots[k];
            slot_service_finish(&s->service, now_ns, measure_start_ns);
            service_totals_add(&w->stream_service, &s->service, s->id);
        }
        if (hc->has_client) h2_client_free(&hc->client);
        hc->has_client = 0;
        if (hc->tls) tls_conn_say_goodbye(hc->tls, hc->fd, now_ns); /* a client's TLS end */
        if (hc->tls) tls_conn_close(hc->tls);
        if (hc->fd >= 0) close(hc->fd);
        hc->fd = -1;
    }
}

static void h2_on_event(void *ptr, uint32_t events, uint64_t now_ns) { h2_conn_on_event(ptr, events, now_ns); }

const worker_protocol h2_protocol = {
    .create = h2_create,
    .destroy = h2_destroy,
    .start = h2_start,
    .on_event = h2_on_event,
    .housekeeping = h2_housekeeping,
    .end_turn = restart_ready,
    .has_free_slot = h2_has_free_slot,
    .start_scheduled = h2_start_scheduled,
    .finish = h2_finish,
};
