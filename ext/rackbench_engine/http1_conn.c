/*
 * http1_conn.c - HTTP/1.1 connections of a worker. See http1_conn.h.
 *
 * Every socket is registered once, edge triggered, for input and output;
 * the next request is written straight after a response completes; and a
 * read shorter than the buffer means the socket was drained, so no extra
 * read is spent to see EAGAIN. A kept-alive request costs a write and a
 * read (worker.c: and a share of one epoll_wait).
 *
 * https:// keeps that shape (tls.h): the same recv and send, with the
 * ciphertext decrypted into the worker's plain_buf and the request
 * encrypted into the connection's TLS output. A new connection's request
 * waits for the handshake (CONN_HANDSHAKING) and goes out with the client's
 * last handshake flight.
 */
#include "http1_conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "expect.h"
#include "request_render.h"

/* After a failed connect a slot waits before retrying, so a dead server
 * costs a bounded number of attempts instead of a busy loop. */
#define CONNECT_BACKOFF_NS (10 * NS_PER_MS)

/* The protocol's state in worker.protocol_state. */
typedef struct {
    conn *conns;                /* w->conn_count of them */
    conn *free_stack;           /* open loop: idle slots */
} http1_state;

static http1_state *state_of(const worker *w) { return w->protocol_state; }

static void start_request(conn *c, uint64_t start_ns, uint64_t now_ns);
static void slot_free(conn *c, uint64_t now_ns);
static void think(conn *c, uint64_t now_ns, uint64_t pause_ns);

/* The parser's header callback: Set-Cookie for the jar, then the session's
 * Location and header captures. */
static void on_header(void *ctx, const char *name, size_t name_len, const char *value, size_t value_len) {
    conn *c = ctx;
    if (c->jar && name_len == 10 && strncasecmp(name, "set-cookie", 10) == 0) cookie_jar_set(c->jar, value, value_len);
    if (c->sess) http1_session_header(c->sess, c->req, name, name_len, value, value_len);
}

static void *http1_create(worker *w) {
    const engine_config *cfg = w->cfg;
    const request_set *requests = w->requests;
    http1_state *st = worker_xcalloc(1, sizeof(*st));
    st->conns = worker_xcalloc((size_t)w->conn_count, sizeof(conn));
    for (int i = 0; i < w->conn_count; i++) {
        conn *c = &st->conns[i];
        c->w = w;
        c->fd = -1;
        c->slot = (uint32_t)(w->first_slot + i);
        /* One generator per slot: the mix each slot replays depends only on
         * the seed and the slot number, never on thread timing. */
        rng_seed(&c->rng, cfg->seed * UINT64_C(0x100000001B3) + c->slot);
        if (cfg->cookies) {
            c->jar = worker_xcalloc(1, sizeof(cookie_jar));
            cookie_jar_init(c->jar);
            /* --cookie presets: in every slot's jar from the start. */
            for (int k = 0; k < cfg->cookie_count; k++) cookie_jar_set(c->jar, cfg->cookie_presets[k], strlen(cfg->cookie_presets[k]));
        }
        if (requests->templated || requests->body_captures || requests->header_work) {
            c->sess = http1_session_new(requests);
            requests_slot_vars(requests, &c->sess->vars, cfg->seed, c->slot);
        }
        if (w->tls_ctx) {
            c->tls = worker_xcalloc(1, sizeof(tls_conn));
            tls_conn_init(c->tls);
        }
    }
    return st;
}

static void http1_destroy(worker *w) {
    http1_state *st = state_of(w);
    for (int i = 0; i < w->conn_count; i++) {
        if (st->conns[i].fd >= 0) close(st->conns[i].fd);
        free(st->conns[i].jar);
        http1_session_free(st->conns[i].sess);
        if (st->conns[i].tls) tls_conn_free(st->conns[i].tls);
        free(st->conns[i].tls);
    }
    free(st->conns);
    free(st);
}

static void close_fd(conn *c) {
    if (c->fd >= 0) {
        close(c->fd); /* also removes it from the epoll set */
        c->fd = -1;
    }
    if (c->tls) tls_conn_close(c->tls); /* the session stays for the next connection */
    c->requests_on_fd = 0;
}

/* The client ends a healthy connection (--no-keepalive, or a server that
 * ignored Connection: close): over TLS it says so first with close_notify,
 * best effort, as a browser's TLS stack does. */
static void close_fd_as_client(conn *c, uint64_t now_ns) {
    if (c->tls) tls_conn_say_goodbye(c->tls, c->fd, now_ns);
    close_fd(c);
}

static void record_raw(conn *c, uint64_t latency_ns, int status, const char *error) {
    worker *w = c->w;
    raw_log_record(&w->raw, c->phase, c->start_ns - w->clock->start_ns, latency_ns, status, c->resp_bytes, c->slot,
                   error);
}

/* A session probe's request ended (probes.h): its outcome is the probe's,
 * never the window's. */
static void probe_ended(conn *c, int ok, const char *why) {
    int was_active = probe_active(&c->probe);
    probe_outcome(&c->probe, c->w->probes, c->w->requests, c->slot, ok, why);
    if (was_active && !probe_active(&c->probe)) c->w->probing--;
}

/* The next entry of slot c's probes at point (probe_next), keeping
 * w->probing: the slots in the middle of a point. */
static const request_template *next_probe(conn *c, probe_point point) {
    int was_active = probe_active(&c->probe);
    const request_template *req = probe_next(&c->probe, c->w->requests, point);
    if (!was_active && probe_active(&c->probe)) c->w->probing++;
    return req;
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
        c->paid_handshake = 0;
        return;
    }
    phase_stats_error(&w->phases[c->phase], now_ns, kind, c->resp_bytes);
    record_raw(c, now_ns - c->start_ns, status, error_kind_names[kind]);
    if (w->entries[c->phase]) w->entries[c->phase][c->req->index].errors[kind]++;
    if (c->sess) c->sess->hop_pending = 0;
    c->paid_handshake = 0;
}

/* The request on c failed: count it once, under one kind, and drop the
 * connection (its state is unknown). */
static void fail(conn *c, error_kind kind, uint64_t now_ns) {
    worker *w = c->w;
    count_error(c, kind, 0, now_ns);
    close_fd(c);
    w->in_flight--;
    /* A connection that cannot be made (refused, or its TLS fails) is not
     * tried again at once: a wrong server costs bounded attempts. */
    if (kind == ERR_CONNECT || kind == ERR_TLS) {
        c->state = CONN_BACKOFF;
        c->backoff_until_ns = now_ns + CONNECT_BACKOFF_NS;
        return;
    }
    slot_free(c, now_ns);
}

/* The TLS of c's connection failed (c->tls says how): counted for the
 * result's "tls" object, and the request fails as ERR_TLS. */
static void fail_tls(conn *c, uint64_t now_ns) {
    worker_tls_failure(c->w, c->tls, c->phase);
    fail(c, ERR_TLS, now_ns);
}

/* Sends what TLS has queued for c (a handshake flight, the request).
 * Returns 1 when all of it went out, 0 when the socket is full (EPOLLOUT
 * resumes), -1 after failing the request. */
static int send_tls(conn *c, uint64_t now_ns) {
    int r = tls_conn_send(c->tls, c->fd, now_ns);
    /* Before the ClientHello left, the connect itself failed. */
    if (r < 0) fail(c, tls_conn_hello_sent(c->tls) ? ERR_WRITE : ERR_CONNECT, now_ns);
    return r;
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

/* https://: hands c->req to TLS once (head, Cookie line and rest as
 * written below), then sends the records. Returns as write_request. */
static int write_request_tls(conn *c, uint64_t now_ns) {
    tls_conn *t = c->tls;
    if (c->written == 0) {
        int bad;
        if (c->jar && c->jar->header_len) {
            bad = tls_conn_write(t, c->wire, c->head_len) || tls_conn_write(t, c->jar->header, c->jar->header_len) ||
                  tls_conn_write(t, c->wire + c->head_len, c->wire_len - c->head_len);
        } else {
            bad = tls_conn_write(t, c->wire, c->wire_len);
        }
        if (bad) {
            fail_tls(c, now_ns);
            return -1;
        }
        c->written = c->wire_len;
    }
    c->state = CONN_WRITING;
    int r = send_tls(c, now_ns);
    if (r < 0) return -1;
    if (r == 1) c->state = CONN_READING;
    return 0;
}

/* Writes the rest of c->req. Returns 0 when all is written or the socket
 * is full, or not yet connected (the edge-triggered EPOLLOUT resumes it),
 * -1 after a failure. */
static int write_request(conn *c, uint64_t now_ns) {
    if (c->tls) return write_request_tls(c, now_ns);
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
    if (s) http1_session_prepare(s, c->req, &c->resp);
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
    if (c->tls) {
        /* The same on loopback for TLS: the ClientHello goes out at once;
         * the request waits for the handshake's end. */
        if (tls_conn_open(c->tls, w->tls_ctx)) {
            perror("rackbench-engine: out of memory for TLS");
            exit(1);
        }
        c->state = CONN_HANDSHAKING;
        c->paid_handshake = 1;
        return send_tls(c, now_ns) < 0 ? -1 : 0;
    }
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
 * the window's end the end probe. A fixed count's probes go at its own
 * stages instead (count_window.h): between the warmup and the window,
 * and after the window closed, never in it. */
static const request_template *due_probe(conn *c, uint64_t start_ns) {
    worker *w = c->w;
    const request_set *set = w->requests;
    if (!set->probe_count) return NULL;
    if (probe_active(&c->probe)) return next_probe(c, (probe_point)(c->probe.point - 1));
    if (c->first_done < set->first_count) return NULL;
    if (worker_counted(w)) {
        if (w->count_stage == COUNT_STAGE_START_PROBES) return next_probe(c, PROBE_START);
        if (w->count_stage == COUNT_STAGE_END_PROBES) return next_probe(c, PROBE_END);
        return NULL;
    }
    /* By the request's own time, not the clock: a request the open loop
     * scheduled inside the window but sends a little after its end is
     * that request, not the end probe. */
    if (w->stopping || start_ns >= w->clock->measure_end_ns) return next_probe(c, PROBE_END);
    if (!worker_open_loop(w) && start_ns >= w->clock->measure_start_ns) return next_probe(c, PROBE_START);
    return NULL;
}

/* 1 when slot c still has point's probes to send (or the rest of a
 * point begun). */
static int probe_due(const conn *c, probe_point point) {
    const request_set *set = c->w->requests;
    if (!set->probe_count || engine_interrupted) return 0;
    return probe_active(&c->probe) || (!c->probe.done[point] && c->first_done >= set->first_count);
}

/* 1 when slot c, free after the window's end, still has its end probe to
 * send (or the rest of a point begun). */
static int end_probe_due(const conn *c) { return probe_due(c, PROBE_END); }

/* Whether a slot freed now sends its end probe: after a timed window's
 * end (or the thread's stop), after a fixed count's close. */
static int end_probes_begun(const worker *w, uint64_t now_ns) {
    if (worker_counted(w)) return w->count_stage == COUNT_STAGE_END_PROBES;
    return w->stopping || now_ns >= w->clock->measure_end_ns;
}

/* A fixed count with probes (count_window.h): 1 when slot c has work of
 * its thread's probe stage to do: the rest of a probe point begun; at
 * the start, its login (the `first` entries the warmup did not finish),
 * then its start probe, so that the window holds neither; at the end,
 * its end probe. */
static int count_probe_work(const conn *c) {
    const worker *w = c->w;
    const request_set *set = w->requests;
    if (!set->probe_count || engine_interrupted) return 0;
    if (probe_active(&c->probe)) return 1;
    if (w->count_stage == COUNT_STAGE_START_PROBES)
        return c->first_done < set->first_count || probe_due(c, PROBE_START);
    if (w->count_stage == COUNT_STAGE_END_PROBES) return probe_due(c, PROBE_END);
    return 0;
}

/* Begins the next request on slot c. start_ns is its latency origin. */
static void start_request(conn *c, uint64_t start_ns, uint64_t now_ns) {
    worker *w = c->w;
    const request_template *req = due_probe(c, start_ns);
    if (!req) req = requests_next(w->requests, &c->rng, &c->first_done);
    c->req = req;
    c->start_ns = start_ns;
    c->phase = worker_phase_of(w, start_ns);
    c->resp_bytes = 0;
    c->is_head = req->is_head;
    slot_session *s = c->sess;
    if (s) http1_session_begin(s, start_ns);
    if (req->templated) {
        size_t head_len;
        size_t n = http1_session_render(s, req, &head_len);
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
    if (s) http1_session_first_request(s, req, c->wire, c->wire_len, c->head_len);
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

/* Slot c finished a request (or its backoff): give it the next one. In
 * open loop the slot joins the free stack until the thread stops, even past
 * the window's end: the last dispatch (worker.c's stop_dispatching) must
 * see every slot that was free by then, or requests it could have sent
 * would be counted as unsent. */
static void slot_free(conn *c, uint64_t now_ns) {
    worker *w = c->w;
    c->state = CONN_IDLE;
    /* A redirect chain started goes on even while draining after the
     * window: its hops are bounded (SESSION_MAX_HOPS, each by --timeout). */
    if (c->sess && c->sess->hop_pending && !engine_interrupted) {
        start_hop(c, now_ns);
        return;
    }
    /* A fixed count's probe stage goes on at once: the stage waits for
     * its slots, and no ticket or think pause applies to them. */
    if (worker_counted(w) && count_probe_work(c)) {
        start_request(c, now_ns, now_ns);
        return;
    }
    if (end_probes_begun(w, now_ns) && end_probe_due(c)) {
        start_request(c, now_ns, now_ns);
        return;
    }
    if (w->stopping) return;
    if (worker_open_loop(w)) {
        http1_state *st = state_of(w);
        c->next_free = st->free_stack;
        st->free_stack = c;
        worker_dispatch_due(w, now_ns);
    } else if (quiet_enabled(&w->quiet) || (w->cfg->think_ns && worker_phase_of(w, now_ns) == PHASE_MEASURE)) {
        think(c, now_ns, w->cfg->think_ns);
    } else if (worker_may_start(w, now_ns)) {
        start_request(c, now_ns, now_ns);
    }
}

/* --think: in the measured window, the slot pauses before its next
 * request, as a user reading a page does. Counted in flight, so that
 * neither a thread's end nor a fixed count's quiet edge passes a slot that
 * is still to send. Its connection stays open. Why a pause: a request that
 * arrives while the server is idle takes the same path through it whenever
 * it arrives (Puma parks an idle connection in its reactor; one whose next
 * request is already there it serves at once), so what the server does
 * per request no longer depends on how promptly this client answered: on
 * a busy machine, instruction counts then vary by a tenth of what they do
 * without it (doc/methodology.md). The warmup does not pause: it is there
 * to bring the server to its steady state, which takes thousands of
 * requests (a 2 s warmup with 10 ms pauses left Puma's rack-hello 40%
 * above its steady count of instructions per request).
 *
 * With --quiet-pids the pause also lasts until the server is asleep and
 * nothing else of the engine is in flight (quiet.h): a pause of any length
 * is a guess at how soon the server is done; asleep is what it must be.
 * Then the warmup pauses too: a request that finds the server asleep
 * takes a path through it that one arriving at once does not (Puma's
 * reactor), and a JIT that first meets that path in the window compiles
 * it there (Ruby 3.4's YJIT: 3 million instructions in one batch's window
 * of 500 requests and none in the next, a CV of 2.9%). */
static void think(conn *c, uint64_t now_ns, uint64_t pause_ns) {
    worker *w = c->w;
    c->state = CONN_THINKING;
    c->backoff_until_ns = now_ns + pause_ns;
    if (c->backoff_until_ns < w->think_due_ns) w->think_due_ns = c->backoff_until_ns;
    w->in_flight++;
    w->thinking++;
}

/* The pause is over (or the thread stops): the next request, if the
 * window still wants one. Its latency counts from now. A server not yet
 * asleep, or another request in flight, extends the pause by
 * QUIET_RECHECK_NS. */
static void think_over(conn *c, uint64_t now_ns) {
    worker *w = c->w;
    if (!w->stopping && quiet_enabled(&w->quiet) &&
        (w->in_flight > w->thinking || !quiet_asleep(&w->quiet))) {
        c->backoff_until_ns = now_ns + QUIET_RECHECK_NS;
        if (c->backoff_until_ns < w->think_due_ns) w->think_due_ns = c->backoff_until_ns;
        return;
    }
    w->thinking--;
    w->in_flight--;
    c->state = CONN_IDLE;
    if (!w->stopping && worker_may_start(w, now_ns)) start_request(c, now_ns, now_ns);
}

/* Counts a complete response. */
static void count_response(conn *c, int status, uint64_t now_ns) {
    worker *w = c->w;
    if (probe_active(&c->probe)) return; /* its outcome is the probe's (complete) */
    phase_stats_response(&w->phases[c->phase], now_ns, now_ns - c->start_ns, status, c->resp_bytes);
    phase_stats_body(&w->phases[c->phase], c->resp.body_bytes);
    record_raw(c, now_ns - c->start_ns, status, NULL);
    if (w->entries[c->phase]) entry_stats_response(&w->entries[c->phase][c->req->index], status);
    if (c->paid_handshake) {
        w->tls[c->phase].paid_responses++;
        c->paid_handshake = 0;
    }
}

/* Session work on a complete response (captures, redirects): 1 if it was
 * counted here (a hop to follow, or a capture or redirect failure), 0 if
 * it is the chain's ordinary last response, still to count. */
static int session_complete(conn *c, int status, uint64_t now_ns) {
    size_t hop_len = 0, hop_head = 0;
    char why[160];
    switch (http1_session_complete(c->sess, c->req, c->w->cfg, status, &hop_len, &hop_head, why, sizeof(why))) {
    case SESSION_CHAIN_END: return 0;
    case SESSION_REDIRECT_FAILED: count_error(c, ERR_REDIRECT, status, now_ns); return 1;
    case SESSION_CAPTURE_FAILED: count_error(c, ERR_CAPTURE, status, now_ns); return 1;
    case SESSION_EXPECT_FAILED:
        if (probe_active(&c->probe)) {
            char line[PROBE_REASON_BYTES];
            snprintf(line, sizeof(line), "%.60s: %s", c->req->name ? c->req->name : "probe", why);
            probe_ended(c, 0, line);
            c->sess->hop_pending = 0;
        } else {
            count_error(c, ERR_EXPECT, status, now_ns);
        }
        return 1;
    case SESSION_HOP: break;
    }
    count_response(c, status, now_ns);
    c->wire_len = hop_len;
    c->head_len = hop_head;
    /* Counted as sent here: slot_free sends it next (unless the run is
     * interrupted, when it is abandoned with the rest). */
    if (c->w->entries[c->phase]) c->w->entries[c->phase][c->req->index].hops++;
    return 1;
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
        close_fd_as_client(c, now_ns);
    } else if (c->req->asks_close || !c->resp.keep_alive) {
        if (c->req->asks_close && !c->resp.connection_close && c->resp.keep_alive) {
            /* The server ignored Connection: close and would keep the
             * connection open forever: report it, close ourselves. */
            w->close_ignored++;
            close_fd_as_client(c, now_ns);
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

/* The server closed c's connection (its FIN, or TLS close_notify). */
static void on_server_close(conn *c, uint64_t now_ns) {
    worker *w = c->w;
    switch (c->state) {
    case CONN_CLOSING: /* what the response said would happen: the slot is free again */
        close_fd(c);
        w->in_flight--;
        slot_free(c, now_ns);
        return;
    case CONN_IDLE: /* the server closed a kept-alive connection */
    case CONN_THINKING:
        w->idle_closes++;
        close_fd(c);
        return;
    case CONN_HANDSHAKING:
        if (tls_conn_lost_in_handshake(c->tls, 0)) fail_tls(c, now_ns);
        else fail(c, ERR_CONNECT, now_ns); /* the connect failed under the ClientHello */
        return;
    default:
        /* A response delimited by the close completes here. */
        if (!http_response_untouched(&c->resp) && http_response_eof(&c->resp) == RESP_COMPLETE) {
            close_fd(c);
            complete(c, now_ns, 1);
        } else {
            fail(c, ERR_READ, now_ns);
        }
    }
}

/* https://: the n bytes recv put in read_buf go through TLS (tls.h's
 * tls_conn_receive): the handshake advances (its end counted, and the
 * request sent with the client's last flight), and what follows is
 * decrypted into plain_buf (*len bytes). Returns 0 to go on with the
 * plaintext, 1 when the server's close_notify came after it (go on, then
 * treat it as the server's close), -1 when c failed or closed here. Every
 * fed byte is consumed before it returns, so read_buf is free for the
 * next recv. */
static int tls_received(conn *c, size_t n, uint64_t now_ns, size_t *len) {
    worker *w = c->w;
    tls_conn *t = c->tls;
    int handshake_ended;
    tls_status st = tls_conn_receive(t, w->read_buf, n, w->plain_buf, WORKER_PLAIN_BUFFER_BYTES, len, &handshake_ended);
    if (c->state == CONN_HANDSHAKING) {
        if (st == TLS_FAILED && !handshake_ended) {
            fail_tls(c, now_ns);
            return -1;
        }
        if (send_tls(c, now_ns) < 0) return -1;
        if (!handshake_ended) return 0;
        worker_tls_handshake(w, t, c->phase, now_ns);
        mark_connected(c);
        if (write_request(c, now_ns) < 0) return -1;
    }
    if (st == TLS_AGAIN) return 0;
    if (st == TLS_CLOSED) return 1;
    if (c->state == CONN_READING || c->state == CONN_WRITING) {
        fail_tls(c, now_ns);
    } else {
        /* Idle or closing: no request is lost with the connection. */
        worker_tls_failure(w, t, c->phase);
        *len = 0;
        on_server_close(c, now_ns);
    }
    return -1;
}

/* Reads what the socket has for c and feeds the parser. */
static void on_readable(conn *c, uint32_t events, uint64_t now_ns) {
    worker *w = c->w;
    for (;;) {
        ssize_t n = recv(c->fd, w->read_buf, WORKER_READ_BUFFER_BYTES, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return;
            if (c->state == CONN_CLOSING || c->state == CONN_IDLE || c->state == CONN_THINKING) {
                /* Reset instead of FIN: still closed; a kept-alive
                 * connection reset while idle lost no request. */
                on_server_close(c, now_ns);
                return;
            }
            if (c->state == CONN_HANDSHAKING) {
                if (errno != ECONNREFUSED && tls_conn_lost_in_handshake(c->tls, 1)) fail_tls(c, now_ns);
                else fail(c, ERR_CONNECT, now_ns); /* the connect failed under the ClientHello */
                return;
            }
            fail(c, ERR_READ, now_ns);
            return;
        }
        if (n == 0) {
            on_server_close(c, now_ns);
            return;
        }
        const char *data = w->read_buf;
        size_t len = (size_t)n;
        int closed = 0; /* TLS: close_notify came after the plaintext */
        if (c->tls) {
            closed = tls_received(c, (size_t)n, now_ns, &len);
            if (closed < 0) return;
            data = w->plain_buf;
        }
        int drained = (size_t)n < WORKER_READ_BUFFER_BYTES;
        if (len == 0) {
            /* Only handshake records or a session ticket: nothing for HTTP. */
            if (closed) {
                on_server_close(c, now_ns);
                return;
            }
            if (drained && !(events & (EPOLLRDHUP | EPOLLHUP))) return;
            continue;
        }
        if (c->state == CONN_CLOSING) {
            /* Bytes after the end: drain them, wait for EOF. */
            if (closed) {
                on_server_close(c, now_ns);
                return;
            }
            continue;
        }
        if (c->state != CONN_READING && c->state != CONN_WRITING) {
            /* An idle connection got bytes nobody asked for: drop it. */
            w->idle_closes++;
            close_fd(c);
            return;
        }
        c->resp_bytes += (uint64_t)len;
        size_t used = 0;
        resp_status st = http_response_feed(&c->resp, data, len, &used);
        if (st == RESP_ERROR) {
            fail(c, ERR_PARSE, now_ns);
            return;
        }
        if (st == RESP_COMPLETE) {
            /* Bytes beyond the response are not counted: no request asked. */
            c->resp_bytes -= (uint64_t)len - used;
            int peer_closed = closed || ((events & (EPOLLRDHUP | EPOLLHUP)) && drained);
            complete(c, now_ns, peer_closed);
            return;
        }
        if (closed) {
            on_server_close(c, now_ns);
            return;
        }
        /* A short read drained the socket; the next edge brings more. Keep
         * reading only if the peer's close must still be seen. */
        if (drained && !(events & (EPOLLRDHUP | EPOLLHUP))) {
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
}

static void http1_on_event(void *ptr, uint32_t events, uint64_t now_ns) {
    conn *c = ptr;
    switch (c->state) {
    case CONN_CONNECTING:
        if (events & (EPOLLERR | EPOLLHUP)) {
            fail(c, ERR_CONNECT, now_ns);
        } else if (events & EPOLLOUT) {
            write_request(c, now_ns);
        }
        return;
    case CONN_HANDSHAKING:
        if ((events & EPOLLOUT) && send_tls(c, now_ns) < 0) return;
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(c, events, now_ns);
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
    case CONN_THINKING:
        if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(c, events, now_ns);
        return;
    case CONN_BACKOFF:
        return;
    }
}

static void http1_housekeeping(worker *w, uint64_t now_ns) {
    http1_state *st = state_of(w);
    w->think_due_ns = UINT64_MAX; /* recomputed from the slots still pausing */
    for (int i = 0; i < w->conn_count; i++) {
        conn *c = &st->conns[i];
        switch (c->state) {
        case CONN_CONNECTING:
            if (now_ns >= c->deadline_ns) fail(c, ERR_CONNECT, now_ns);
            break;
        case CONN_HANDSHAKING: /* the server is slow to answer: its handshake counts in the timeout */
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
        case CONN_THINKING:
            if (now_ns >= c->backoff_until_ns || w->stopping) think_over(c, now_ns);
            else if (c->backoff_until_ns < w->think_due_ns) w->think_due_ns = c->backoff_until_ns;
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

/* The run's first instant, and a fixed count's window opening (worker.c):
 * closed loop, every idle slot starts a request if the window wants one. */
static void http1_start(worker *w, uint64_t now_ns) {
    http1_state *st = state_of(w);
    for (int i = 0; i < w->conn_count && !w->stopping; i++) {
        conn *c = &st->conns[i];
        if (worker_open_loop(w)) {
            c->next_free = st->free_stack;
            st->free_stack = c;
        } else if (c->state == CONN_IDLE && !c->deferred && quiet_enabled(&w->quiet) && worker_count_opened(w)) {
            /* The window's first requests pass the gate too, one at a time,
             * with the pids written at its start edge (workers a server
             * started during the warmup among them). */
            quiet_reload(&w->quiet);
            think(c, now_ns, 0);
        } else if (c->state == CONN_IDLE && !c->deferred && worker_may_start(w, now_ns)) {
            start_request(c, now_ns, now_ns);
        }
    }
}

/* The run is over: every slot's wait ends now, and the slots are
 * totalled in slot order; connections still open end as a client ends
 * them (close_notify over TLS, so that a server does not log a truncated
 * connection for each). */
static void http1_finish(worker *w) {
    http1_state *st = state_of(w);
    uint64_t now_ns = clock_now_ns();
    for (int i = 0; i < w->conn_count; i++) {
        conn *c = &st->conns[i];
        slot_service_finish(&c->service, now_ns, w->clock->measure_start_ns);
        service_totals_add(&w->conn_service, &c->service, c->slot);
        if (c->fd >= 0) close_fd_as_client(c, now_ns);
    }
}

/* The thread stops starting requests: in open loop, the slots idle at the
 * end send their end probes now (closed-loop slots are all busy, and send
 * theirs as they come free, slot_free). */
static void http1_stop(worker *w, uint64_t until_ns) {
    http1_state *st = state_of(w);
    while (worker_open_loop(w) && w->requests->probe_count && st->free_stack) {
        conn *c = st->free_stack;
        st->free_stack = c->next_free;
        if (end_probe_due(c)) start_request(c, until_ns, until_ns);
    }
}

/* A fixed count's probes of point (worker_protocol.probe): every idle
 * slot starts its work of the stage (count_probe_work: at the start its
 * login first, if the warmup left it unfinished); slot_free carries each
 * on as its requests complete. A request that could not be rendered
 * (a variable no capture set) leaves the slot idle: it goes on to the
 * next at once. A slot waiting out a failed connect is unchecked there. */
static void http1_probe(worker *w, probe_point point, uint64_t now_ns) {
    http1_state *st = state_of(w);
    (void)point; /* the thread's stage says it (due_probe) */
    for (int i = 0; i < w->conn_count; i++) {
        conn *c = &st->conns[i];
        while (c->state == CONN_IDLE && count_probe_work(c)) {
            c->deferred = 0;
            start_request(c, now_ns, now_ns);
        }
    }
}

static int http1_has_free_slot(const worker *w) { return state_of(w)->free_stack != NULL; }

static void http1_start_scheduled(worker *w, uint64_t due_ns, uint64_t now_ns) {
    http1_state *st = state_of(w);
    conn *c = st->free_stack;
    st->free_stack = c->next_free;
    start_request(c, due_ns, now_ns);
}

const worker_protocol http1_protocol = {
    .create = http1_create,
    .destroy = http1_destroy,
    .start = http1_start,
    .on_event = http1_on_event,
    .housekeeping = http1_housekeeping,
    .end_turn = NULL,
    .has_free_slot = http1_has_free_slot,
    .start_scheduled = http1_start_scheduled,
    .stop = http1_stop,
    .probe = http1_probe,
    .finish = http1_finish,
};
