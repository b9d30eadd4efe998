/*
 * h2_worker.c - the h2c event loop. See h2_worker.h.
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

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "h2_worker_state.h"
#include "open_loop.h"

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n, size);
    if (!p) {
        perror("rackbench-engine: out of memory");
        exit(1);
    }
    return p;
}

static int is_open_loop(const worker *w) { return w->interval_ns > 0; }

/* Slot s is to be looked at on the loop's next turn (restart_ready). */
void h2_push_ready(h2_slot *s) {
    struct h2_worker *h = s->hc->w->h2;
    if (s->ready) return;
    s->ready = 1;
    s->next_ready = h->ready_head;
    h->ready_head = s;
}

/* hc has output to write on the loop's next turn. */
static void mark_dirty(h2_conn *hc) {
    struct h2_worker *h = hc->w->h2;
    if (hc->dirty) return;
    hc->dirty = 1;
    hc->next_dirty = h->dirty_head;
    h->dirty_head = hc;
}

static void start_request(h2_slot *s, uint64_t start_ns, uint64_t now_ns);

struct h2_worker *h2_worker_new(worker *w) {
    const engine_config *cfg = w->cfg;
    struct h2_worker *h = xcalloc(1, sizeof(*h));
    h->streams = cfg->streams;
    h->conn_count = w->conn_count;
    h->request_count = w->requests->count;
    h->conns = xcalloc((size_t)w->conn_count, sizeof(h2_conn));
    h->slots = xcalloc((size_t)w->conn_count * (size_t)h->streams, sizeof(h2_slot));
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
        hc->out = xcalloc(1, OUT_BUFFER_BYTES);
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

void h2_worker_free(struct h2_worker *h) {
    if (!h) return;
    for (int i = 0; i < h->conn_count; i++) {
        h2_conn *hc = &h->conns[i];
        if (hc->has_client) h2_client_free(&hc->client);
        if (hc->fd >= 0) close(hc->fd);
        free(hc->out);
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
    const h2_request *hr = &w->h2->requests[s->req - w->requests->items];
    s->deadline_ns = now_ns + w->cfg->timeout_ns;
    s->stream.body = hr->body;
    s->stream.body_len = hr->body_len;
    s->stream.status = 0;
    s->stream.header_bytes = s->stream.body_bytes = 0;
    s->state = SLOT_SENT;
    hc->busy++;
    slot_service_sent(&s->service, now_ns, w->clock->measure_start_ns);
    slot_service_sent(&hc->service, now_ns, w->clock->measure_start_ns);
    /* A failed open counts this request as a connect error (conn_close). */
    if (hc->state == H2CONN_CLOSED && h2_conn_open(hc, now_ns) < 0) return;
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
    s->phase = start_ns < w->clock->measure_start_ns ? PHASE_WARMUP : PHASE_MEASURE;
    w->in_flight++;
    send_request(s, now_ns);
}

static uint64_t next_due_ns(const worker *w) {
    return open_loop_due_ns(w->sched_origin_ns, w->interval_ns, w->next_index);
}

/* Open loop: sends every request due by now_ns (and inside the schedule)
 * while a stream slot is free, as worker.c does with connections. */
static void open_loop_dispatch(worker *w, uint64_t now_ns) {
    struct h2_worker *h = w->h2;
    while (h->free_stack) {
        uint64_t due_ns = next_due_ns(w);
        if (due_ns > now_ns || due_ns >= w->clock->measure_end_ns) return;
        h2_slot *s = h->free_stack;
        h->free_stack = s->next_free;
        w->next_index++;
        /* Latency counts from the scheduled time (no coordinated omission). */
        start_request(s, due_ns, now_ns);
        phase_stats_lateness(&w->phases[s->phase], now_ns - due_ns);
    }
}

/* Gives the slots of the ready list their next request: closed loop at
 * once, open loop through the free stack; requests waiting for their
 * connection (pending) go out. Slots of a connection in backoff wait for
 * it (housekeeping puts them back when it ends). Then every connection
 * with new requests writes them, one send for all of a turn's streams. */
static void restart_ready(worker *w, uint64_t now_ns) {
    struct h2_worker *h = w->h2;
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
        } else if (is_open_loop(w)) {
            s->next_free = h->free_stack;
            h->free_stack = s;
        } else if (now_ns < w->clock->measure_end_ns) {
            start_request(s, now_ns, now_ns);
        }
    }
    if (is_open_loop(w) && !w->stopping) open_loop_dispatch(w, now_ns);
    while (h->dirty_head) {
        h2_conn *hc = h->dirty_head;
        h->dirty_head = hc->next_dirty;
        hc->dirty = 0;
        if (hc->state == H2CONN_OPEN) h2_conn_flush(hc, now_ns);
    }
}

static void housekeeping(worker *w, uint64_t now_ns) {
    struct h2_worker *h = w->h2;
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
                h2_conn_close(hc, ERR_CONNECT, 1, now_ns);
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

/* As worker.c's stop_dispatching: the open-loop window's schedule is
 * counted once, when the thread stops sending. */
static void stop_dispatching(worker *w, uint64_t until_ns, int interrupted) {
    const run_clock *clock = w->clock;
    if (is_open_loop(w)) {
        if (!interrupted) open_loop_dispatch(w, until_ns);
        uint64_t window_end_ns = until_ns < clock->measure_end_ns ? until_ns : clock->measure_end_ns;
        phase_stats_schedule(&w->phases[PHASE_MEASURE],
                             open_loop_slots(w->sched_origin_ns, w->interval_ns, clock->measure_start_ns, window_end_ns),
                             open_loop_unsent(w->sched_origin_ns, w->interval_ns, w->next_index,
                                              clock->measure_start_ns, window_end_ns));
    }
    w->stopping = 1;
    w->stop_ns = until_ns;
}

void h2_worker_loop(worker *w) {
    const run_clock *clock = w->clock;
    struct h2_worker *h = w->h2;
    uint64_t now_ns = clock_now_ns();
    /* In slot order: the first streams of every connection first. */
    for (int i = w->conn_count - 1; i >= 0; i--)
        for (int k = h->streams - 1; k >= 0; k--) h2_push_ready(&h->conns[i].slots[k]);
    restart_ready(w, now_ns);
    struct epoll_event events[WORKER_MAX_EVENTS];
    uint64_t next_housekeeping_ns = now_ns + HOUSEKEEPING_INTERVAL_NS;
    for (;;) {
        now_ns = clock_now_ns();
        if (engine_interrupted) {
            if (!w->stopping) stop_dispatching(w, now_ns, 1);
            w->abandoned += (uint64_t)w->in_flight;
            break;
        }
        if (!w->stopping && now_ns >= clock->measure_end_ns) stop_dispatching(w, now_ns, 0);
        if (now_ns >= next_housekeeping_ns || w->stopping) {
            housekeeping(w, now_ns);
            next_housekeeping_ns = now_ns + HOUSEKEEPING_INTERVAL_NS;
        }
        restart_ready(w, now_ns);
        if (w->stopping && w->in_flight == 0) break;
        uint64_t until_ns = next_housekeeping_ns;
        if (!w->stopping && clock->measure_end_ns < until_ns) until_ns = clock->measure_end_ns;
        if (is_open_loop(w) && !w->stopping && h->free_stack) {
            uint64_t due_ns = next_due_ns(w);
            if (due_ns < until_ns) until_ns = due_ns;
        }
        int n = worker_wait_events(w, events, now_ns, until_ns);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("rackbench-engine: epoll_wait");
            exit(1);
        }
        if (n > 0) now_ns = clock_now_ns();
        for (int i = 0; i < n; i++) h2_conn_on_event(events[i].data.ptr, events[i].events, now_ns);
    }
    /* What is still open at the end (drained, or interrupted) closes here;
     * every wait ends now, and the slots are totalled in slot order. */
    now_ns = clock_now_ns();
    for (int i = 0; i < w->conn_count; i++) {
        h2_conn *hc = &h->conns[i];
        slot_service_finish(&hc->service, now_ns, clock->measure_start_ns);
        service_totals_add(&w->conn_service, &hc->service, hc->number);
        for (int k = 0; k < h->streams; k++) {
            h2_slot *s = &hc->slots[k];
            slot_service_finish(&s->service, now_ns, clock->measure_start_ns);
            service_totals_add(&w->stream_service, &s->service, s->id);
        }
        if (hc->has_client) h2_client_free(&hc->client);
        hc->has_client = 0;
        if (hc->fd >= 0) close(hc->fd);
        hc->fd = -1;
    }
}
