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
#include "h2_client.h"
#include "h2_request.h"
#include "open_loop.h"

#define READ_BUFFER_BYTES (256 * 1024)
#define HOUSEKEEPING_INTERVAL_NS (5 * NS_PER_MS)
/* After a failed connection (refused, not h2c, protocol error) its slots
 * wait before the next attempt, so a wrong server costs a bounded number
 * of attempts instead of a busy loop. */
#define RECONNECT_BACKOFF_NS (10 * NS_PER_MS)
/* A connection's output buffer: a turn's requests on all its streams
 * (HEADERS of a few dozen bytes each once HPACK has indexed them). */
#define OUT_BUFFER_BYTES (16 * 1024)

typedef enum { SLOT_FREE = 0, SLOT_SENT } slot_state;
typedef enum { H2CONN_CLOSED = 0, H2CONN_OPEN, H2CONN_BACKOFF } h2conn_state;

struct h2_conn;

typedef struct h2_slot {
    h2_stream stream;           /* first member: the client reports it */
    struct h2_conn *hc;
    slot_state state;
    const request_template *req;
    uint64_t start_ns;          /* latency origin: scheduled (open loop) or freed (closed) */
    uint64_t deadline_ns;
    phase_id phase;
    uint32_t id;                /* stream slot number across all threads */
    rng rng;
    size_t first_done;
    int ready;                  /* in the worker's ready list */
    struct h2_slot *next_ready;
    int pending;                /* chosen and counted in flight, waiting for its
                                   connection to drain after a GOAWAY */
    struct h2_slot *next_free;  /* open loop: stack of free slots */
} h2_slot;

typedef struct h2_conn {
    worker *w;
    int fd;
    h2conn_state state;
    int connected;              /* the first write went out */
    int established_once;
    h2_client client;
    int has_client;
    /* Output: nghttp2 hands it over a frame at a time; the frames of a
     * turn are gathered here and written with one send (a send per frame
     * would cost a system call per request). chunk is what nghttp2 gave
     * last and did not fit yet (valid until its next call). */
    uint8_t *out;
    size_t out_len, out_sent;
    const uint8_t *chunk;
    size_t chunk_len;
    int busy;                   /* slots in SLOT_SENT */
    int goaway_counted;
    int dirty;                  /* in the worker's list of connections to flush */
    struct h2_conn *next_dirty;
    uint64_t backoff_until_ns;
    h2_slot *slots;             /* cfg->streams of them */
} h2_conn;

struct h2_worker {
    int conn_count;
    size_t request_count;
    h2_conn *conns;
    h2_slot *slots;
    int streams;
    h2_slot *free_stack;
    /* Slots that came free (or wait for their connection) since the last
     * turn of the loop, and connections with requests submitted since: the
     * loop works through both lists instead of scanning every slot. */
    h2_slot *ready_head;
    h2_conn *dirty_head;
    h2_request *requests;       /* translated set->items, same order */
};

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
static void push_ready(h2_slot *s) {
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

static void on_stream_end(void *ctx, h2_stream *stream, h2_stream_end how, uint32_t code);

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

static void record(h2_slot *s, uint64_t now_ns, int status, const char *error, uint64_t bytes) {
    worker *w = s->hc->w;
    raw_log_record(&w->raw, s->phase, s->start_ns - w->clock->start_ns, now_ns - s->start_ns, status, bytes, s->id,
                   error);
}

/* The slot's request ended (answered or failed): it is free for the next
 * one, started after the current read (see the file comment). */
static void slot_ended(h2_slot *s) {
    worker *w = s->hc->w;
    s->state = SLOT_FREE;
    s->stream.id = 0;
    s->hc->busy--;
    w->in_flight--;
    push_ready(s);
}

static void count_error(h2_slot *s, error_kind kind, uint64_t now_ns) {
    worker *w = s->hc->w;
    uint64_t bytes = s->stream.header_bytes + s->stream.body_bytes;
    phase_stats_error(&w->phases[s->phase], now_ns, kind, bytes);
    record(s, now_ns, s->stream.status, error_kind_names[kind], bytes);
    if (w->entries[s->phase]) w->entries[s->phase][s->req->index].errors[kind]++;
}

static size_t code_index(uint32_t code) { return code < H2_ERROR_CODES ? code : H2_ERROR_CODES; }

static void on_stream_end(void *ctx, h2_stream *stream, h2_stream_end how, uint32_t code) {
    h2_conn *hc = ctx;
    worker *w = hc->w;
    h2_slot *s = (h2_slot *)stream;
    if (s->state != SLOT_SENT) return;
    uint64_t now_ns = clock_now_ns();
    switch (how) {
    case H2_STREAM_COMPLETE: {
        uint64_t bytes = stream->header_bytes + stream->body_bytes;
        phase_stats *ps = &w->phases[s->phase];
        phase_stats_response(ps, now_ns, now_ns - s->start_ns, stream->status, bytes);
        phase_stats_body(ps, stream->body_bytes);
        record(s, now_ns, stream->status, NULL, bytes);
        if (w->entries[s->phase]) {
            entry_stats_response(&w->entries[s->phase][s->req->index], stream->status);
            if (s->phase == PHASE_MEASURE) hist_record(w->entries[PHASE_MEASURE][s->req->index].latency, now_ns - s->start_ns);
        }
        break;
    }
    case H2_STREAM_RESET:
        w->h2_stats.resets[code_index(code)]++;
        count_error(s, ERR_STREAM_RESET, now_ns);
        break;
    case H2_STREAM_GOAWAY: count_error(s, ERR_GOAWAY, now_ns); break;
    case H2_STREAM_LOST: count_error(s, ERR_READ, now_ns); break;
    }
    slot_ended(s);
}

/* Copies the first connection error's reason for the result. */
static void keep_reason(worker *w, const char *reason) {
    if (!w->h2_stats.reason[0]) snprintf(w->h2_stats.reason, sizeof(w->h2_stats.reason), "%s", reason);
}

/* Ends hc: every stream still on it fails under kind; the connection is
 * closed and, after a failure, waits RECONNECT_BACKOFF_NS before its slots
 * go back to work. */
static void conn_close(h2_conn *hc, error_kind kind, int backoff, uint64_t now_ns) {
    worker *w = hc->w;
    for (int k = 0; k < w->h2->streams; k++) {
        h2_slot *s = &hc->slots[k];
        if (s->state != SLOT_SENT) continue;
        count_error(s, kind, now_ns);
        slot_ended(s);
    }
    if (hc->has_client) {
        h2_client_free(&hc->client);
        hc->has_client = 0;
    }
    if (hc->fd >= 0) close(hc->fd); /* also leaves the epoll set */
    hc->fd = -1;
    hc->out_len = hc->out_sent = hc->chunk_len = 0;
    hc->connected = 0;
    hc->goaway_counted = 0;
    if (backoff) {
        hc->state = H2CONN_BACKOFF;
        hc->backoff_until_ns = now_ns + RECONNECT_BACKOFF_NS;
        /* Its slots rest until the backoff ends (housekeeping), out of the
         * open loop's free stack too; pending requests keep their place. */
        struct h2_worker *h = w->h2;
        h2_slot **link = &h->free_stack;
        while (*link) {
            if ((*link)->hc == hc) *link = (*link)->next_free;
            else link = &(*link)->next_free;
        }
    } else {
        hc->state = H2CONN_CLOSED;
    }
}

/* The session failed: classify it once for the result, then close. */
static void conn_failed(h2_conn *hc, uint64_t now_ns) {
    worker *w = hc->w;
    error_kind kind = ERR_H2_PROTOCOL;
    if (hc->client.not_h2) {
        kind = ERR_NOT_H2C;
        w->h2_stats.not_h2c_connections++;
    } else {
        w->h2_stats.protocol_errors++;
    }
    keep_reason(w, hc->client.reason);
    conn_close(hc, kind, 1, now_ns);
}

static void mark_connected(h2_conn *hc) {
    worker *w = hc->w;
    if (hc->connected) return;
    hc->connected = 1;
    w->connects++;
    if (!hc->established_once) {
        hc->established_once = 1;
        w->slots_established++;
    }
}

/* Writes what the session has to send: gathers its frames into hc->out,
 * then sends them together. Returns 0 (all written, or the socket is full:
 * EPOLLOUT resumes), -1 after closing hc. */
static int conn_flush(h2_conn *hc, uint64_t now_ns) {
    for (;;) {
        while (hc->out_len < OUT_BUFFER_BYTES) {
            if (hc->chunk_len == 0) {
                long n = h2_client_pending_output(&hc->client, &hc->chunk);
                if (n < 0) {
                    conn_failed(hc, now_ns);
                    return -1;
                }
                if (n == 0) break;
                hc->chunk_len = (size_t)n;
            }
            size_t room = OUT_BUFFER_BYTES - hc->out_len;
            size_t take = hc->chunk_len < room ? hc->chunk_len : room;
            memcpy(hc->out + hc->out_len, hc->chunk, take);
            hc->out_len += take;
            hc->chunk += take;
            hc->chunk_len -= take;
        }
        if (hc->out_sent == hc->out_len) return 0;
        ssize_t n = send(hc->fd, hc->out + hc->out_sent, hc->out_len - hc->out_sent, MSG_NOSIGNAL);
        if (n > 0) {
            mark_connected(hc);
            hc->out_sent += (size_t)n;
            if (hc->out_sent == hc->out_len) hc->out_sent = hc->out_len = 0;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        conn_close(hc, hc->connected ? ERR_WRITE : ERR_CONNECT, 1, now_ns);
        return -1;
    }
}

/* Opens hc's socket and session. Returns 0, or -1 after closing it. */
static int conn_open(h2_conn *hc, uint64_t now_ns) {
    worker *w = hc->w;
    const engine_config *cfg = w->cfg;
    w->connect_attempts++;
    hc->state = H2CONN_OPEN;
    if (h2_client_init(&hc->client, H2_WINDOW_BYTES, on_stream_end, hc)) {
        perror("rackbench-engine: nghttp2 session");
        exit(1);
    }
    hc->has_client = 1;
    int fd = socket(cfg->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) {
        conn_close(hc, ERR_CONNECT, 1, now_ns);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    hc->fd = fd;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = hc};
    if ((connect(fd, (const struct sockaddr *)&cfg->addr, cfg->addr_len) < 0 && errno != EINPROGRESS) ||
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        conn_close(hc, ERR_CONNECT, 1, now_ns);
        return -1;
    }
    return 0;
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
            push_ready(s);
            return;
        }
        /* A GOAWAY with an error code (ENHANCE_YOUR_CALM...) asks us to
         * back off: the request waits it out, then goes on a new connection. */
        int calm_down = hc->client.goaway && hc->client.goaway_code != NGHTTP2_NO_ERROR;
        conn_close(hc, ERR_GOAWAY, calm_down, now_ns);
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
    /* A failed open counts this request as a connect error (conn_close). */
    if (hc->state == H2CONN_CLOSED && conn_open(hc, now_ns) < 0) return;
    if (h2_client_submit(&hc->client, hr->headers, hr->header_count, &s->stream) < 0) {
        /* Stream ids exhausted or the session closing: the connection is
         * done; this request fails with it and the slot starts afresh. */
        conn_close(hc, ERR_H2_PROTOCOL, 0, now_ns);
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
        if (hc->state == H2CONN_OPEN) conn_flush(hc, now_ns);
    }
}

/* Counts a GOAWAY once per connection: the frame and its code. */
static void note_goaway(h2_conn *hc) {
    worker *w = hc->w;
    if (!hc->has_client || !hc->client.goaway || hc->goaway_counted) return;
    hc->goaway_counted = 1;
    w->h2_stats.goaways++;
    w->h2_stats.goaway_codes[code_index(hc->client.goaway_code)]++;
}

static void on_readable(h2_conn *hc, uint64_t now_ns) {
    worker *w = hc->w;
    for (;;) {
        ssize_t n = recv(hc->fd, w->read_buf, READ_BUFFER_BYTES, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) {
            /* The server closed: after a GOAWAY the streams it did not
             * take are its refusal; otherwise they were lost. An idle
             * connection closed costs nothing. */
            if (hc->busy == 0) w->idle_closes++;
            note_goaway(hc);
            int refused = hc->client.goaway;
            int graceful = refused && hc->client.goaway_code == NGHTTP2_NO_ERROR;
            conn_close(hc, refused ? ERR_GOAWAY : (hc->connected ? ERR_READ : ERR_CONNECT), !graceful, now_ns);
            return;
        }
        if (h2_client_recv(&hc->client, (const uint8_t *)w->read_buf, (size_t)n) < 0) {
            note_goaway(hc);
            conn_failed(hc, now_ns);
            return;
        }
        if ((size_t)n < READ_BUFFER_BYTES) break; /* drained: the next edge brings more */
    }
    note_goaway(hc);
    if (hc->client.peer_max_streams && hc->client.peer_max_streams != UINT32_MAX)
        w->h2_stats.server_max_streams = hc->client.peer_max_streams;
    conn_flush(hc, now_ns);
}

static void on_event(h2_conn *hc, uint32_t events, uint64_t now_ns) {
    if (hc->state != H2CONN_OPEN) return;
    if (!hc->connected && (events & EPOLLERR)) {
        conn_close(hc, ERR_CONNECT, 1, now_ns);
        return;
    }
    if ((events & EPOLLOUT) && conn_flush(hc, now_ns) < 0) return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(hc, now_ns);
}

static void housekeeping(worker *w, uint64_t now_ns) {
    struct h2_worker *h = w->h2;
    for (int i = 0; i < w->conn_count; i++) {
        h2_conn *hc = &h->conns[i];
        if (hc->state == H2CONN_BACKOFF) {
            if (now_ns >= hc->backoff_until_ns || w->stopping) {
                hc->state = H2CONN_CLOSED;
                for (int k = 0; k < h->streams; k++) push_ready(&hc->slots[k]);
            }
            continue;
        }
        if (hc->state != H2CONN_OPEN) continue;
        int cancelled = 0;
        for (int k = 0; k < h->streams; k++) {
            h2_slot *s = &hc->slots[k];
            if (s->state != SLOT_SENT || now_ns < s->deadline_ns) continue;
            if (!hc->connected) {
                conn_close(hc, ERR_CONNECT, 1, now_ns);
                break;
            }
            /* No answer in time: give the stream up (RST_STREAM CANCEL),
             * keep the connection for the others. */
            h2_client_cancel(&hc->client, &s->stream);
            count_error(s, ERR_TIMEOUT, now_ns);
            slot_ended(s);
            cancelled = 1;
        }
        if (cancelled && hc->state == H2CONN_OPEN) conn_flush(hc, now_ns);
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
        for (int k = h->streams - 1; k >= 0; k--) push_ready(&h->conns[i].slots[k]);
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
        for (int i = 0; i < n; i++) on_event(events[i].data.ptr, events[i].events, now_ns);
    }
    /* What is still open at the end (drained, or interrupted) closes here. */
    for (int i = 0; i < w->conn_count; i++) {
        h2_conn *hc = &h->conns[i];
        if (hc->has_client) h2_client_free(&hc->client);
        hc->has_client = 0;
        if (hc->fd >= 0) close(hc->fd);
        hc->fd = -1;
    }
}
