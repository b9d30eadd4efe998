/*
 * worker.c - the engine's event loop. See worker.h.
 *
 * System calls per request are what separates load generators on loopback
 * (shared/MEASUREMENT.md): wrk makes four (write, read, and two epoll_ctl
 * re-arming the socket). Here every socket is registered once, edge
 * triggered, for input and output; the next request is written straight
 * after a response completes; and a read shorter than the buffer means the
 * socket was drained, so no extra read is spent to see EAGAIN. A kept-alive
 * request costs a write, a read and a share of one epoll_wait.
 */
#include "worker.h"

#include <errno.h>
#include <netinet/in.h>
#include <regex.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "h2_worker.h"
#include "open_loop.h"

volatile sig_atomic_t engine_interrupted;

#define READ_BUFFER_BYTES (256 * 1024)
#define MAX_EVENTS 256
/* Timeouts and backoffs are checked this often: fine enough for a timeout
 * measured in seconds, cheap enough to scan every connection. */
#define HOUSEKEEPING_INTERVAL_NS (5 * NS_PER_MS)
/* After a failed connect a slot waits before retrying, so a dead server
 * costs a bounded number of attempts instead of a busy loop. */
#define CONNECT_BACKOFF_NS (10 * NS_PER_MS)

static void start_request(conn *c, uint64_t start_ns, uint64_t now_ns);
static void mark_connected(conn *c);
static void slot_free(conn *c, uint64_t now_ns);

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n, size);
    if (!p) {
        perror("rackbench-engine: out of memory");
        exit(1);
    }
    return p;
}

/* Stores a captured value in the slot's variable, or reports it too long. */
static int store_var(slot_session *s, const capture_spec *cap, int index, const char *v, size_t n) {
    if (n > SESSION_VAR_MAX_BYTES) return 0;
    memcpy(s->vars.value[cap->var], v, n);
    s->vars.len[cap->var] = (uint16_t)n;
    s->vars.set[cap->var] = 1;
    s->captured |= 1u << index;
    return 1;
}

/* Applies cap's regex (if any) to text (NUL-terminated at text[len]) and
 * stores the first group, or the whole text without a regex. */
static void capture_text(slot_session *s, const capture_spec *cap, int index, const char *text, size_t len) {
    if (!cap->has_regex) {
        store_var(s, cap, index, text, len);
        return;
    }
    regmatch_t m[2];
    if (regexec(&cap->regex, text, 2, m, 0) == 0 && m[1].rm_so >= 0)
        store_var(s, cap, index, text + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
}

static void on_header(void *ctx, const char *name, size_t name_len, const char *value, size_t value_len) {
    conn *c = ctx;
    if (c->jar && name_len == 10 && strncasecmp(name, "set-cookie", 10) == 0) cookie_jar_set(c->jar, value, value_len);
    slot_session *s = c->sess;
    if (!s) return;
    const request_template *req = c->req;
    if ((req->follow || expect_any(&req->expect)) && name_len == 8 && strncasecmp(name, "location", 8) == 0) {
        if (value_len <= sizeof(s->location)) {
            memcpy(s->location, value, value_len);
            s->location_len = value_len;
            s->location_state = 1;
        } else {
            s->location_state = -1;
        }
    }
    for (int i = 0; i < req->capture_count; i++) {
        const capture_spec *cap = &req->captures[i];
        if (cap->source != CAPTURE_HEADER || strlen(cap->arg) != name_len || strncasecmp(cap->arg, name, name_len))
            continue;
        if (cap->has_regex) {
            /* regexec needs a NUL: the value is bounded by the parser's line limit. */
            char text[HTTP_MAX_LINE_BYTES + 1];
            size_t n = value_len < HTTP_MAX_LINE_BYTES ? value_len : HTTP_MAX_LINE_BYTES;
            memcpy(text, value, n);
            text[n] = '\0';
            capture_text(s, cap, i, text, n);
        } else {
            capture_text(s, cap, i, value, value_len);
        }
    }
}

/* Keeps the first SESSION_BODY_MAX_BYTES of a body for the captures. */
static void on_body(void *ctx, const char *data, size_t len) {
    slot_session *s = ((conn *)ctx)->sess;
    size_t room = SESSION_BODY_MAX_BYTES - s->body_len;
    if (len > room) len = room;
    memcpy(s->body + s->body_len, data, len);
    s->body_len += len;
}

/* Runs the entry's body captures on the kept body. */
static void capture_body(conn *c) {
    slot_session *s = c->sess;
    const request_template *req = c->req;
    s->body[s->body_len] = '\0';
    char value[SESSION_VAR_MAX_BYTES];
    for (int i = 0; i < req->capture_count; i++) {
        const capture_spec *cap = &req->captures[i];
        size_t n = 0;
        int r = EXTRACT_MISSING;
        switch (cap->source) {
        case CAPTURE_BODY: capture_text(s, cap, i, s->body, s->body_len); continue;
        case CAPTURE_FORM:
            r = session_extract_attr(s->body, s->body_len, "input", "name", cap->arg, "value", value, sizeof(value), &n);
            break;
        case CAPTURE_META:
            r = session_extract_attr(s->body, s->body_len, "meta", "name", cap->arg, "content", value, sizeof(value), &n);
            break;
        case CAPTURE_HEADER: continue;
        }
        if (r == EXTRACT_FOUND) store_var(s, cap, i, value, n);
    }
}

static slot_session *slot_session_new(const request_set *set) {
    slot_session *s = xcalloc(1, sizeof(slot_session));
    size_t largest = 0;
    for (size_t i = 0; i < set->count; i++)
        if (set->items[i].wire_len > largest) largest = set->items[i].wire_len;
    if (set->render_bound > largest) largest = set->render_bound;
    if (set->templated) {
        s->render_cap = set->render_bound;
        s->render_buf = xcalloc(1, s->render_cap);
    }
    /* A hop is the chain's first request with another target. */
    s->hop_cap = largest + SESSION_LOCATION_MAX_BYTES + 64;
    s->hop_buf = xcalloc(1, s->hop_cap);
    if (set->body_captures) s->body = xcalloc(1, SESSION_BODY_MAX_BYTES + 1);
    return s;
}

static void slot_session_free(slot_session *s) {
    if (!s) return;
    free(s->render_buf);
    free(s->hop_buf);
    free(s->body);
    free(s);
}

void worker_init(worker *w, int id, const engine_config *cfg, const request_set *requests,
                 const run_clock *clock, int first_slot, int conn_count, double rate_per_s, int raw_fd) {
    memset(w, 0, sizeof(*w));
    w->id = id;
    w->cfg = cfg;
    w->requests = requests;
    w->clock = clock;
    w->first_slot = first_slot;
    w->conn_count = conn_count;
    w->conns = xcalloc((size_t)conn_count, sizeof(conn));
    w->read_buf = xcalloc(1, READ_BUFFER_BYTES);
    w->epfd = -1;
    raw_log_init(&w->raw, raw_fd);
    for (int i = 0; i < conn_count; i++) {
        conn *c = &w->conns[i];
        c->w = w;
        c->fd = -1;
        c->slot = (uint32_t)(first_slot + i);
        /* One generator per slot: the mix each slot replays depends only on
         * the seed and the slot number, never on thread timing. */
        rng_seed(&c->rng, cfg->seed * UINT64_C(0x100000001B3) + c->slot);
        if (cfg->cookies) {
            c->jar = xcalloc(1, sizeof(cookie_jar));
            cookie_jar_init(c->jar);
            /* --cookie presets: in every slot's jar from the start. */
            for (int k = 0; k < cfg->cookie_count; k++) cookie_jar_set(c->jar, cfg->cookie_presets[k], strlen(cfg->cookie_presets[k]));
        }
        if (requests->templated || requests->body_captures || requests->header_work) {
            c->sess = slot_session_new(requests);
            requests_slot_vars(requests, &c->sess->vars, cfg->seed, c->slot);
        }
    }
    if (requests->from_file) {
        w->entries[PHASE_WARMUP] = entry_stats_new(requests->count, 0);
        w->entries[PHASE_MEASURE] = entry_stats_new(requests->count, 1);
    }
    if (rate_per_s > 0) {
        w->interval_ns = 1e9 / rate_per_s;
        w->sched_origin_ns = open_loop_origin_ns(clock->start_ns, w->interval_ns, id, cfg->threads);
    }
    if (cfg->protocol == PROTOCOL_H2C) w->h2 = h2_worker_new(w);
}

void worker_free(worker *w) {
    h2_worker_free(w->h2);
    for (int i = 0; i < w->conn_count; i++) {
        if (w->conns[i].fd >= 0) close(w->conns[i].fd);
        free(w->conns[i].jar);
        slot_session_free(w->conns[i].sess);
    }
    for (int p = 0; p < PHASE_COUNT; p++) entry_stats_free(w->entries[p], w->requests->count);
    free(w->conns);
    free(w->read_buf);
    raw_log_free(&w->raw);
    for (int p = 0; p < PHASE_COUNT; p++) phase_stats_free(&w->phases[p]);
    if (w->epfd >= 0) close(w->epfd);
}

static int is_open_loop(const worker *w) { return w->interval_ns > 0; }

static void close_fd(conn *c) {
    if (c->fd >= 0) {
        close(c->fd); /* also removes it from the epoll set */
        c->fd = -1;
    }
    c->requests_on_fd = 0;
}

static void record_raw(conn *c, uint64_t latency_ns, int status, const char *error) {
    worker *w = c->w;
    raw_log_record(&w->raw, c->phase, c->start_ns - w->clock->start_ns, latency_ns, status, c->resp_bytes, c->slot,
                   error);
}

/* A session probe's request ended (probes.h): its outcome is the probe's,
 * never the window's. */
static void probe_ended(conn *c, int ok, const char *why) {
    probe_outcome(&c->probe, c->w->probes, c->w->requests, c->slot, ok, why);
}

/* Counts a failed request once, under one kind (status: a response's, if
 * one came, for the raw log). */
static void count_error(conn *c, error_kind kind, int status, uint64_t now_ns) {
    worker *w = c->w;
    if (probe_active(&c->probe)) {
        char why[64];
        if (status) snprintf(why, sizeof(why), "%s error (status %d)", error_kind_names[kind], status);
        else snprintf(why, sizeof(why), "%s error", error_kind_names[kind]);
        probe_ended(c, 0, why);
        if (c->sess) c->sess->hop_pending = 0;
        return;
    }
    phase_stats_error(&w->phases[c->phase], now_ns, kind, c->resp_bytes);
    record_raw(c, now_ns - c->start_ns, status, error_kind_names[kind]);
    if (w->entries[c->phase]) w->entries[c->phase][c->req->index].errors[kind]++;
    if (c->sess) c->sess->hop_pending = 0;
}

/* The request on c failed: count it once, under one kind, and drop the
 * connection (its state is unknown). */
static void fail(conn *c, error_kind kind, uint64_t now_ns) {
    worker *w = c->w;
    count_error(c, kind, 0, now_ns);
    close_fd(c);
    w->in_flight--;
    if (kind == ERR_CONNECT) {
        c->state = CONN_BACKOFF;
        c->backoff_until_ns = now_ns + CONNECT_BACKOFF_NS;
        return;
    }
    slot_free(c, now_ns);
}

/* The first bytes of a request went out on a new connection: it is up. */
static void mark_connected(conn *c) {
    worker *w = c->w;
    c->state = CONN_WRITING;
    w->connects++;
    if (!c->established_once) {
        c->established_once = 1;
        w->slots_established++;
    }
}

/* Writes the rest of c->req. Returns 0 when all is written or the socket
 * is full, or not yet connected (the edge-triggered EPOLLOUT resumes it),
 * -1 after a failure. */
static int write_request(conn *c, uint64_t now_ns) {
    for (;;) {
        ssize_t n;
        if (c->jar && c->jar->header_len) {
            /* head | Cookie line | CRLF body, skipping what was written. */
            struct iovec iov[3];
            size_t lens[3] = {c->head_len, c->jar->header_len, c->wire_len - c->head_len};
            const char *parts[3] = {c->wire, c->jar->header, c->wire + c->head_len};
            size_t skip = c->written, total = 0;
            int count = 0;
            for (int i = 0; i < 3; i++) {
                total += lens[i];
                if (skip >= lens[i]) { skip -= lens[i]; continue; }
                iov[count].iov_base = (void *)(parts[i] + skip);
                iov[count].iov_len = lens[i] - skip;
                count++;
                skip = 0;
            }
            if (count == 0) break;
            struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)count};
            n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
            if (n > 0 && c->written + (size_t)n == total) {
                if (c->state == CONN_CONNECTING) mark_connected(c);
                c->written = total;
                break;
            }
        } else {
            /* send/recv rather than write/read: the socket calls skip the
             * VFS layer, a few percent of the engine's CPU per request. */
            n = send(c->fd, c->wire + c->written, c->wire_len - c->written, MSG_NOSIGNAL);
            if (n > 0 && c->written + (size_t)n == c->wire_len) {
                if (c->state == CONN_CONNECTING) mark_connected(c);
                c->written += (size_t)n;
                break;
            }
        }
        if (n > 0) {
            if (c->state == CONN_CONNECTING) mark_connected(c);
            c->written += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        /* ENOTCONN: the connect failed underneath us; anything else is a
         * broken connection. */
        fail(c, c->state == CONN_CONNECTING ? ERR_CONNECT : ERR_WRITE, now_ns);
        return -1;
    }
    c->state = CONN_READING;
    return 0;
}

/* Arms c for a new request/response exchange; the deadline covers the
 * connect too when there is one. */
static void prepare_request(conn *c, uint64_t now_ns) {
    slot_session *s = c->sess;
    int headers_wanted = c->jar || (s && (c->req->follow || c->req->header_captures || expect_any(&c->req->expect)));
    http_response_reset(&c->resp, c->is_head, headers_wanted ? on_header : NULL, c);
    if (s) {
        s->location_state = 0;
        if (c->req->keeps_body) {
            s->body_len = 0;
            http_response_set_body_cb(&c->resp, on_body, c);
        }
    }
    c->written = 0;
    c->resp_bytes = 0;
    c->deadline_ns = now_ns + c->w->cfg->timeout_ns;
}

static void send_request(conn *c, uint64_t now_ns) {
    prepare_request(c, now_ns);
    c->state = CONN_WRITING;
    write_request(c, now_ns);
}

/* Opens a non-blocking connection for c. Returns 0 when connecting (or
 * connected), -1 after counting a connect failure. */
static int open_connection(conn *c, uint64_t now_ns) {
    worker *w = c->w;
    const engine_config *cfg = w->cfg;
    w->connect_attempts++;
    int fd = socket(cfg->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) {
        fail(c, ERR_CONNECT, now_ns);
        return -1;
    }
    /* Without TCP_NODELAY, Nagle plus delayed ACK add 40 ms stalls to
     * requests written in more than one piece. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    if (connect(fd, (const struct sockaddr *)&cfg->addr, cfg->addr_len) < 0 && errno != EINPROGRESS) {
        fail(c, ERR_CONNECT, now_ns);
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = c};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        fail(c, ERR_CONNECT, now_ns);
        return -1;
    }
    c->state = CONN_CONNECTING;
    prepare_request(c, now_ns);
    /* On loopback the handshake completes inside connect(), so the request
     * can go out at once, saving a trip through epoll_wait; elsewhere the
     * write says EAGAIN and EPOLLOUT brings us back when connected. */
    return write_request(c, now_ns);
}

/* Sends what c->wire holds, on the open connection or a new one. */
static void send_or_connect(conn *c, uint64_t now_ns) {
    c->w->in_flight++;
    slot_service_sent(&c->service, now_ns, c->w->clock->measure_start_ns);
    if (c->fd >= 0) {
        send_request(c, now_ns);
    } else {
        open_connection(c, now_ns);
    }
}

/* The probe entry slot c sends next (probes.h), or NULL for the mix: the
 * point begun goes on; once the slot's first entries are done, its first
 * request in the window is the start probe (closed loop only: in open
 * loop it would take a scheduled request's place), and its first after
 * the window's end the end probe. */
static const request_template *due_probe(conn *c, uint64_t start_ns) {
    worker *w = c->w;
    const request_set *set = w->requests;
    if (!set->probe_count) return NULL;
    if (probe_active(&c->probe)) return probe_next(&c->probe, set, (probe_point)(c->probe.point - 1));
    if (c->first_done < set->first_count) return NULL;
    /* By the request's own time, not the clock: a request the open loop
     * scheduled inside the window but sends a little after its end is
     * that request, not the end probe. */
    if (w->stopping || start_ns >= w->clock->measure_end_ns) return probe_next(&c->probe, set, PROBE_END);
    if (!is_open_loop(w) && start_ns >= w->clock->measure_start_ns) return probe_next(&c->probe, set, PROBE_START);
    return NULL;
}

/* 1 when slot c, free after the window's end, still has its end probe to
 * send (or the rest of a point begun). */
static int end_probe_due(const conn *c) {
    const request_set *set = c->w->requests;
    if (!set->probe_count || engine_interrupted) return 0;
    return probe_active(&c->probe) || (!c->probe.done[PROBE_END] && c->first_done >= set->first_count);
}

/* Begins the next request on slot c. start_ns is its latency origin. */
static void start_request(conn *c, uint64_t start_ns, uint64_t now_ns) {
    worker *w = c->w;
    const request_template *req = due_probe(c, start_ns);
    if (!req) req = requests_next(w->requests, &c->rng, &c->first_done);
    c->req = req;
    c->start_ns = start_ns;
    c->phase = start_ns < w->clock->measure_start_ns ? PHASE_WARMUP : PHASE_MEASURE;
    c->resp_bytes = 0;
    c->is_head = req->is_head;
    slot_session *s = c->sess;
    if (s) {
        s->captured = 0;
        s->hops = 0;
        s->as_get = 0;
        s->chain_start_ns = start_ns;
    }
    if (req->templated) {
        int missing;
        size_t head_len;
        size_t n = requests_render(req, &s->vars, s->render_buf, s->render_cap, &head_len, &missing);
        if (n == SIZE_MAX) {
            /* A variable no capture has set: the request is not sent
             * blind. The slot waits for the next housekeeping pass rather
             * than picking again at once, so a mix whose every entry needs
             * the variable cannot spin (or recurse) through the window. */
            count_error(c, ERR_CAPTURE, 0, now_ns);
            c->deferred = 1;
            c->state = CONN_IDLE;
            return;
        }
        c->wire = s->render_buf;
        c->wire_len = n;
        c->head_len = head_len;
    } else {
        c->wire = req->wire;
        c->wire_len = req->wire_len;
        c->head_len = req->head_len;
    }
    if (s) {
        s->first_wire = c->wire;
        s->first_len = c->wire_len;
        s->first_head_len = c->head_len;
    }
    if (s && req->follow) {
        /* The target, for resolving a relative Location. */
        const char *sp = memchr(c->wire, ' ', c->head_len);
        const char *end = sp ? memchr(sp + 1, ' ', c->head_len - (size_t)(sp + 1 - c->wire)) : NULL;
        size_t n = end ? (size_t)(end - sp - 1) : 0;
        if (n > sizeof(s->target)) n = sizeof(s->target);
        if (n) memcpy(s->target, sp + 1, n);
        s->target_len = n;
    }
    send_or_connect(c, now_ns);
}

/* Sends the followed redirect built in c->sess->hop_buf: a request of its
 * own (its latency from now), in the chain's phase and entry. */
static void start_hop(conn *c, uint64_t now_ns) {
    slot_session *s = c->sess;
    s->hop_pending = 0;
    c->start_ns = now_ns;
    c->resp_bytes = 0;
    c->wire = s->hop_buf;
    send_or_connect(c, now_ns);
}

static uint64_t next_due_ns(const worker *w) {
    return open_loop_due_ns(w->sched_origin_ns, w->interval_ns, w->next_index);
}

/* Sends every request that is due by now_ns and inside the run's schedule
 * (due before the measured window ends) while a connection slot is free.
 * A request due in the window goes out even after the window's end if a
 * slot frees before the thread stops (see stop_dispatching). */
static void open_loop_dispatch(worker *w, uint64_t now_ns) {
    while (w->free_stack) {
        uint64_t due_ns = next_due_ns(w);
        if (due_ns > now_ns || due_ns >= w->clock->measure_end_ns) return;
        conn *c = w->free_stack;
        w->free_stack = c->next_free;
        w->next_index++;
        /* Latency counts from the scheduled time: a stalled server makes
         * requests wait here, and that wait is part of what users feel
         * (no coordinated omission). */
        start_request(c, due_ns, now_ns);
        phase_stats_lateness(&w->phases[c->phase], now_ns - due_ns);
    }
}

/* Slot c finished a request (or its backoff): give it the next one. In
 * open loop the slot joins the free stack until the thread stops, even past
 * the window's end: the last dispatch (stop_dispatching) must see every
 * slot that was free by then, or requests it could have sent would be
 * counted as unsent. */
static void slot_free(conn *c, uint64_t now_ns) {
    worker *w = c->w;
    c->state = CONN_IDLE;
    /* A redirect chain started goes on even while draining after the
     * window: its hops are bounded (SESSION_MAX_HOPS, each by --timeout). */
    if (c->sess && c->sess->hop_pending && !engine_interrupted) {
        start_hop(c, now_ns);
        return;
    }
    if ((w->stopping || now_ns >= w->clock->measure_end_ns) && end_probe_due(c)) {
        start_request(c, now_ns, now_ns);
        return;
    }
    if (w->stopping) return;
    if (is_open_loop(w)) {
        c->next_free = w->free_stack;
        w->free_stack = c;
        open_loop_dispatch(w, now_ns);
    } else if (now_ns < w->clock->measure_end_ns) {
        start_request(c, now_ns, now_ns);
    }
}

/* The thread stops starting requests: at the window's end, or at Ctrl-C
 * (interrupted; until_ns is then the moment it was seen).
 *
 * Open loop: the window's schedule is counted here, once: the requests due
 * in it, from the schedule's arithmetic alone, and those never sent, from
 * how far dispatch got. Every request sent ends as a response or an
 * error, so responses + errors + unsent = scheduled is a check of the
 * engine's bookkeeping, not a sum made to match. At the window's end a
 * last dispatch first sends what is due and finds a free slot (a thread
 * that woke a little after the end must not turn its own lateness into
 * unsent requests); what is left had no connection by the end: the server
 * held them all. When interrupted, the window is cut at until_ns and
 * nothing more is sent. Requests due in the warmup but still unsent are
 * the warmup's and are not counted. */
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
    /* Open loop: the slots idle at the end send their end probes now
     * (closed-loop slots are all busy, and send theirs as they come free). */
    while (is_open_loop(w) && w->requests->probe_count && w->free_stack) {
        conn *c = w->free_stack;
        w->free_stack = c->next_free;
        if (end_probe_due(c)) start_request(c, until_ns, until_ns);
    }
}

/* Counts a complete response. */
static void count_response(conn *c, int status, uint64_t now_ns) {
    worker *w = c->w;
    if (probe_active(&c->probe)) return; /* its outcome is the probe's (complete) */
    phase_stats_response(&w->phases[c->phase], now_ns, now_ns - c->start_ns, status, c->resp_bytes);
    phase_stats_body(&w->phases[c->phase], c->resp.body_bytes);
    record_raw(c, now_ns - c->start_ns, status, NULL);
    if (w->entries[c->phase]) entry_stats_response(&w->entries[c->phase][c->req->index], status);
}

/* Session work on a complete response (captures, redirects): 1 if it was
 * counted here (a hop to follow, or a capture or redirect failure), 0 if
 * it is the chain's ordinary last response, still to count. */
static int session_complete(conn *c, int status, uint64_t now_ns) {
    slot_session *s = c->sess;
    const request_template *req = c->req;
    const engine_config *cfg = c->w->cfg;
    if (req->body_captures) capture_body(c);
    else if (req->keeps_body) s->body[s->body_len] = '\0';
    if (req->follow && session_is_redirect(status)) {
        char next[SESSION_LOCATION_MAX_BYTES];
        size_t next_len = 0, hop_head = 0, hop_len = SIZE_MAX;
        if (s->location_state == 1 && s->hops < SESSION_MAX_HOPS &&
            session_location_target(s->location, s->location_len, cfg->host, cfg->port, s->target, s->target_len,
                                    next, sizeof(next), &next_len) == 1) {
            memcpy(s->target, next, next_len);
            s->target_len = next_len;
            /* Every hop is modelled on the chain's first request. */
            if (session_redirect_as_get(status, s->first_wire, s->first_len)) s->as_get = 1;
            hop_len = session_redirect_request(s->first_wire, s->first_head_len, s->first_len, s->as_get, s->target,
                                               s->target_len, s->hop_buf, s->hop_cap, &hop_head);
        }
        if (hop_len == SIZE_MAX) {
            /* Another origin, no usable Location, or too many hops. */
            count_error(c, ERR_REDIRECT, status, now_ns);
            return 1;
        }
        count_response(c, status, now_ns);
        c->wire_len = hop_len;
        c->head_len = hop_head;
        s->hops++;
        s->hop_pending = 1;
        /* Counted as sent here: slot_free sends it next (unless the run
         * is interrupted, when it is abandoned with the rest). */
        if (c->w->entries[c->phase]) c->w->entries[c->phase][req->index].hops++;
        return 1;
    }
    /* The chain ends here: every capture must have found its value in one
     * of its responses. A variable not found is cleared. A 2xx/3xx
     * response without it counts as a capture error (the page was not
     * what the session needs); an error status (a 422 login) is counted
     * as that status, which already says what went wrong. */
    uint32_t all = (1u << req->capture_count) - 1;
    if ((s->captured & all) != all) {
        for (int i = 0; i < req->capture_count; i++)
            if (!(s->captured & (1u << i))) s->vars.set[req->captures[i].var] = 0;
        if (status >= 200 && status < 400) {
            count_error(c, ERR_CAPTURE, status, now_ns);
            return 1;
        }
    }
    /* @expect: the chain's last response must be what the entry says; one
     * that is not (the login page instead of the page) is an error. */
    if (expect_any(&req->expect)) {
        char why[160];
        if (!expect_check(&req->expect, status, s->body, s->body ? s->body_len : 0, &s->vars,
                          s->location_state == 1 ? s->location : NULL, s->location_state == 1 ? s->location_len : 0,
                          why, sizeof(why))) {
            if (probe_active(&c->probe)) {
                char line[PROBE_REASON_BYTES];
                snprintf(line, sizeof(line), "%.60s: %s", req->name ? req->name : "probe", why);
                probe_ended(c, 0, line);
                s->hop_pending = 0;
            } else {
                count_error(c, ERR_EXPECT, status, now_ns);
            }
            return 1;
        }
    }
    return 0;
}

static void complete(conn *c, uint64_t now_ns, int peer_closed) {
    worker *w = c->w;
    const engine_config *cfg = w->cfg;
    int status = c->resp.status_code;
    slot_service_response(&c->service, now_ns, w->clock->measure_start_ns);
    if (!c->sess || !session_complete(c, status, now_ns)) {
        count_response(c, status, now_ns);
        if (probe_active(&c->probe)) {
            char why[64];
            snprintf(why, sizeof(why), "status %d", status);
            probe_ended(c, status >= 200 && status < 400, why);
        } else if (w->entries[PHASE_MEASURE] && c->phase == PHASE_MEASURE) {
            /* The entry's latency: from its first request to its last
             * response, redirects included. */
            uint64_t origin_ns = c->sess ? c->sess->chain_start_ns : c->start_ns;
            hist_record(w->entries[PHASE_MEASURE][c->req->index].latency, now_ns - origin_ns);
        }
    }
    c->requests_on_fd++;
    w->in_flight--;
    if (!cfg->keepalive) {
        /* --no-keepalive: the client closes, as a browser that drops the
         * connection would; the request did not say Connection: close. */
        close_fd(c);
    } else if (c->req->asks_close || !c->resp.keep_alive) {
        if (c->req->asks_close && !c->resp.connection_close && c->resp.keep_alive) {
            /* The server ignored Connection: close and would keep the
             * connection open forever: report it, close ourselves. */
            w->close_ignored++;
            close_fd(c);
        } else {
            w->server_closes++;
            if (peer_closed) {
                close_fd(c);
            } else {
                /* Let the server close first, so the TIME_WAIT cost stays
                 * on its side as with real clients; the slot waits. */
                c->state = CONN_CLOSING;
                w->in_flight++;
                return;
            }
        }
    }
    slot_free(c, now_ns);
}

/* Reads what the socket has for c and feeds the parser. */
static void on_readable(conn *c, uint32_t events, uint64_t now_ns) {
    worker *w = c->w;
    for (;;) {
        ssize_t n = recv(c->fd, w->read_buf, READ_BUFFER_BYTES, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return;
            if (c->state == CONN_CLOSING) break; /* reset instead of FIN: still closed */
            if (c->state == CONN_IDLE) {
                /* A kept-alive connection reset while idle: no request was
                 * lost, and the slot is not in flight (nor to be freed). */
                w->idle_closes++;
                close_fd(c);
                return;
            }
            fail(c, ERR_READ, now_ns);
            return;
        }
        if (n == 0) {
            if (c->state == CONN_CLOSING) break;
            if (c->state == CONN_IDLE) { /* the server closed a kept-alive connection */
                w->idle_closes++;
                close_fd(c);
                return;
            }
            /* A response delimited by the close completes here. */
            if (!http_response_untouched(&c->resp) && http_response_eof(&c->resp) == RESP_COMPLETE) {
                close_fd(c);
                complete(c, now_ns, 1);
            } else {
                fail(c, ERR_READ, now_ns);
            }
            return;
        }
        if (c->state == CONN_CLOSING) continue; /* bytes after the end: drain them, wait for EOF */
        if (c->state != CONN_READING && c->state != CONN_WRITING) {
            /* An idle connection got bytes nobody asked for: drop it. */
            w->idle_closes++;
            close_fd(c);
            return;
        }
        c->resp_bytes += (uint64_t)n;
        size_t used = 0;
        resp_status st = http_response_feed(&c->resp, w->read_buf, (size_t)n, &used);
        if (st == RESP_ERROR) {
            fail(c, ERR_PARSE, now_ns);
            return;
        }
        if (st == RESP_COMPLETE) {
            /* Bytes beyond the response are not counted: no request asked. */
            c->resp_bytes -= (uint64_t)n - used;
            int peer_closed = (events & (EPOLLRDHUP | EPOLLHUP)) && (size_t)n < READ_BUFFER_BYTES;
            complete(c, now_ns, peer_closed);
            return;
        }
        /* A short read drained the socket; the next edge brings more. Keep
         * reading only if the peer's close must still be seen. */
        if ((size_t)n < READ_BUFFER_BYTES && !(events & (EPOLLRDHUP | EPOLLHUP))) {
            /* Part of a response came and the rest is pending. A server
             * that writes headers and body separately without TCP_NODELAY
             * (WEBrick) holds the rest back until this part is ACKed
             * (Nagle), while our kernel delays that ACK by up to 40 ms: ACK
             * now. Whole responses, the common case, never get here. */
            int one = 1;
            setsockopt(c->fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
            return;
        }
    }
    /* CONN_CLOSING and the server closed: the slot is free again. */
    close_fd(c);
    w->in_flight--;
    slot_free(c, now_ns);
}

static void on_event(conn *c, uint32_t events, uint64_t now_ns) {
    switch (c->state) {
    case CONN_CONNECTING:
        if (events & (EPOLLERR | EPOLLHUP)) {
            fail(c, ERR_CONNECT, now_ns);
        } else if (events & EPOLLOUT) {
            write_request(c, now_ns);
        }
        return;
    case CONN_WRITING:
        if (events & EPOLLOUT) {
            if (write_request(c, now_ns) < 0) return;
        }
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(c, events, now_ns);
        return;
    case CONN_READING:
    case CONN_CLOSING:
    case CONN_IDLE:
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(c, events, now_ns);
        return;
    case CONN_BACKOFF:
        return;
    }
}

static void housekeeping(worker *w, uint64_t now_ns) {
    for (int i = 0; i < w->conn_count; i++) {
        conn *c = &w->conns[i];
        switch (c->state) {
        case CONN_CONNECTING:
            if (now_ns >= c->deadline_ns) fail(c, ERR_CONNECT, now_ns);
            break;
        case CONN_WRITING:
        case CONN_READING:
            if (now_ns >= c->deadline_ns) fail(c, ERR_TIMEOUT, now_ns);
            break;
        case CONN_CLOSING:
            if (now_ns >= c->deadline_ns) {
                /* Said Connection: close, then never closed. */
                w->close_ignored++;
                close_fd(c);
                w->in_flight--;
                slot_free(c, now_ns);
            }
            break;
        case CONN_BACKOFF:
            if (now_ns >= c->backoff_until_ns || w->stopping) slot_free(c, now_ns);
            break;
        case CONN_IDLE:
            if (c->deferred) {
                c->deferred = 0;
                slot_free(c, now_ns);
            }
            break;
        }
    }
}

static void pin_thread(worker *w) {
    const engine_config *cfg = w->cfg;
    if (cfg->cpu_count <= 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cfg->cpus[w->id % cfg->cpu_count], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) w->pin_failed = 1;
}

/* The thread is done: every slot's wait ends now, and the slots are
 * totalled in slot order. */
static void finish_service(worker *w, uint64_t end_ns) {
    for (int i = 0; i < w->conn_count; i++) {
        conn *c = &w->conns[i];
        slot_service_finish(&c->service, end_ns, w->clock->measure_start_ns);
        service_totals_add(&w->conn_service, &c->service, c->slot);
    }
}

int worker_wait_events(worker *w, struct epoll_event *events, uint64_t now_ns, uint64_t until_ns) {
    uint64_t wait_ns = until_ns > now_ns ? until_ns - now_ns : 0;
    struct timespec ts = clock_timespec(wait_ns);
    /* epoll_pwait2 takes a nanosecond timeout: the open-loop schedule needs
     * better than epoll_wait's milliseconds. */
    int n = epoll_pwait2(w->epfd, events, MAX_EVENTS, &ts, NULL);
    if (n < 0 && errno == ENOSYS) {
        int ms = (int)((wait_ns + NS_PER_MS - 1) / NS_PER_MS);
        n = epoll_wait(w->epfd, events, MAX_EVENTS, ms);
    }
    return n;
}

void *worker_run(void *arg) {
    worker *w = arg;
    const run_clock *clock = w->clock;
    pin_thread(w);
    /* The default 50 us timer slack would make open-loop sends late by up
     * to that much: ask the kernel to wake us on time. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->epfd < 0) {
        perror("rackbench-engine: epoll_create1");
        exit(1);
    }
    phase_stats_init(&w->phases[PHASE_WARMUP], clock->start_ns);
    phase_stats_init(&w->phases[PHASE_MEASURE], clock->measure_start_ns);
    struct timespec start = clock_timespec(clock->start_ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &start, NULL) == EINTR && !engine_interrupted) {
    }
    if (w->h2) {
        /* h2c: the same clock, stats and schedule, another connection model. */
        h2_worker_loop(w);
        for (int p = 0; p < PHASE_COUNT; p++) phase_stats_flush(&w->phases[p]);
        raw_log_flush(&w->raw);
        return NULL;
    }

    uint64_t now_ns = clock_now_ns();
    for (int i = 0; i < w->conn_count; i++) {
        conn *c = &w->conns[i];
        if (is_open_loop(w)) {
            c->next_free = w->free_stack;
            w->free_stack = c;
        } else {
            start_request(c, now_ns, now_ns);
        }
    }
    struct epoll_event events[MAX_EVENTS];
    uint64_t next_housekeeping_ns = now_ns + HOUSEKEEPING_INTERVAL_NS;
    for (;;) {
        now_ns = clock_now_ns();
        if (engine_interrupted) {
            /* Ctrl-C: stop now; what was in flight is reported apart. */
            if (!w->stopping) stop_dispatching(w, now_ns, 1);
            w->abandoned += (uint64_t)w->in_flight;
            break;
        }
        if (!w->stopping && now_ns >= clock->measure_end_ns) stop_dispatching(w, now_ns, 0);
        if (is_open_loop(w) && !w->stopping) open_loop_dispatch(w, now_ns);
        if (now_ns >= next_housekeeping_ns || w->stopping) {
            housekeeping(w, now_ns);
            next_housekeeping_ns = now_ns + HOUSEKEEPING_INTERVAL_NS;
        }
        /* After the window, in-flight requests drain until their own
         * deadline (at most the timeout), then the thread is done. */
        if (w->stopping && w->in_flight == 0) break;
        uint64_t until_ns = next_housekeeping_ns;
        if (!w->stopping && clock->measure_end_ns < until_ns) until_ns = clock->measure_end_ns;
        if (is_open_loop(w) && !w->stopping && w->free_stack) {
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
    for (int p = 0; p < PHASE_COUNT; p++) phase_stats_flush(&w->phases[p]);
    raw_log_flush(&w->raw);
    finish_service(w, clock_now_ns());
    return NULL;
}
