/*
 * h2_conn.c - one h2c connection of the worker (h2_worker.h): its socket
 * and nghttp2 session, what it reads and writes, how its streams end and
 * how it ends. The schedule and the slots' next requests are
 * h2_worker.c's; a slot that ends here only joins the ready list it reads.
 */
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

void h2_push_ready(h2_slot *s) {
    struct h2_worker *h = h2_of(s->hc->w);
    if (s->ready) return;
    s->ready = 1;
    s->next_ready = h->ready_head;
    h->ready_head = s;
}

static void record(h2_slot *s, uint64_t now_ns, int status, const char *error, uint64_t bytes) {
    worker *w = s->hc->w;
    raw_log_record(&w->raw, s->phase, s->start_ns - w->clock->start_ns, now_ns - s->start_ns, status, bytes, s->id,
                   error);
}

/* The slot's request ended (answered or failed): it is free for the next
 * one, started after the current read (see the file comment). */
void h2_slot_ended(h2_slot *s) {
    worker *w = s->hc->w;
    s->state = SLOT_FREE;
    s->stream.id = 0;
    s->hc->busy--;
    w->in_flight--;
    h2_push_ready(s);
}

void h2_slot_error(h2_slot *s, error_kind kind, uint64_t now_ns) {
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
        slot_service_response(&s->service, now_ns, w->clock->measure_start_ns);
        slot_service_response(&hc->service, now_ns, w->clock->measure_start_ns);
        /* Its other streams still wait: so does the connection, from now. */
        if (hc->busy > 1) slot_service_sent(&hc->service, now_ns, w->clock->measure_start_ns);
        phase_stats *ps = &w->phases[s->phase];
        phase_stats_response(ps, now_ns, now_ns - s->start_ns, stream->status, bytes);
        phase_stats_body(ps, stream->body_bytes);
        record(s, now_ns, stream->status, NULL, bytes);
        if (s->paid_handshake) w->tls[s->phase].paid_responses++;
        if (w->entries[s->phase]) {
            entry_stats_response(&w->entries[s->phase][s->req->index], stream->status);
            if (s->phase == PHASE_MEASURE) hist_record(w->entries[PHASE_MEASURE][s->req->index].latency, now_ns - s->start_ns);
        }
        break;
    }
    case H2_STREAM_RESET:
        w->h2_stats.resets[code_index(code)]++;
        h2_slot_error(s, ERR_STREAM_RESET, now_ns);
        break;
    case H2_STREAM_GOAWAY: h2_slot_error(s, ERR_GOAWAY, now_ns); break;
    case H2_STREAM_LOST: h2_slot_error(s, ERR_READ, now_ns); break;
    }
    h2_slot_ended(s);
}

/* Copies the first connection error's reason for the result. */
static void keep_reason(worker *w, const char *reason) {
    if (!w->h2_stats.reason[0]) snprintf(w->h2_stats.reason, sizeof(w->h2_stats.reason), "%s", reason);
}

/* Ends hc: every stream still on it fails under kind; the connection is
 * closed and, after a failure, waits RECONNECT_BACKOFF_NS before its slots
 * go back to work. */
void h2_conn_close(h2_conn *hc, error_kind kind, int backoff, uint64_t now_ns) {
    worker *w = hc->w;
    for (int k = 0; k < h2_of(w)->streams; k++) {
        h2_slot *s = &hc->slots[k];
        if (s->state != SLOT_SENT) continue;
        h2_slot_error(s, kind, now_ns);
        h2_slot_ended(s);
    }
    if (hc->has_client) {
        h2_client_free(&hc->client);
        hc->has_client = 0;
    }
    if (hc->fd >= 0) close(hc->fd); /* also leaves the epoll set */
    hc->fd = -1;
    if (hc->tls) tls_conn_close(hc->tls); /* the session stays for the next connection */
    hc->handshaking = 0;
    hc->out_len = hc->out_sent = hc->chunk_len = 0;
    hc->connected = 0;
    hc->goaway_counted = 0;
    if (backoff) {
        hc->state = H2CONN_BACKOFF;
        hc->backoff_until_ns = now_ns + RECONNECT_BACKOFF_NS;
        /* Its slots rest until the backoff ends (housekeeping), out of the
         * open loop's free stack too; pending requests keep their place. */
        struct h2_worker *h = h2_of(w);
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
    h2_conn_close(hc, kind, 1, now_ns);
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

/* Gathers what the session has to send into hc->out, up to its size.
 * Returns 0, or -1 after closing hc (the session failed). */
static int gather_output(h2_conn *hc, uint64_t now_ns) {
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
    return 0;
}

/* The TLS of hc failed (hc->tls says how): counted for the result's "tls"
 * object; its streams fail as ERR_TLS, and it backs off. */
static void fail_tls(h2_conn *hc, uint64_t now_ns) {
    worker_tls_failure(hc->w, hc->tls, hc->open_phase);
    h2_conn_close(hc, ERR_TLS, 1, now_ns);
}

/* Sends what TLS has queued for hc: 1 when all of it went out, 0 when the
 * socket is full, -1 after closing hc. */
static int send_tls(h2_conn *hc, uint64_t now_ns) {
    int r = tls_conn_send(hc->tls, hc->fd, now_ns);
    /* Before the ClientHello left, the connect itself failed. */
    if (r < 0) h2_conn_close(hc, tls_conn_hello_sent(hc->tls) ? ERR_WRITE : ERR_CONNECT, 1, now_ns);
    return r;
}

/* https://: as h2_conn_flush, with a turn's frames encrypted together
 * (one record per gathering, not one per frame) before they are sent.
 * While the handshake runs, only its own flights go out. */
static int flush_tls(h2_conn *hc, uint64_t now_ns) {
    for (;;) {
        int r = send_tls(hc, now_ns);
        if (r <= 0) return r; /* the socket is full: EPOLLOUT resumes */
        if (hc->handshaking) return 0;
        if (gather_output(hc, now_ns) < 0) return -1;
        if (hc->out_len == 0) return 0;
        if (tls_conn_write(hc->tls, hc->out, hc->out_len)) {
            fail_tls(hc, now_ns);
            return -1;
        }
        hc->out_len = hc->out_sent = 0;
    }
}

/* Writes what the session has to send: gathers its frames into hc->out,
 * then sends them together. Returns 0 (all written, or the socket is full:
 * EPOLLOUT resumes), -1 after closing hc. */
int h2_conn_flush(h2_conn *hc, uint64_t now_ns) {
    if (hc->tls) return flush_tls(hc, now_ns);
    for (;;) {
        if (gather_output(hc, now_ns) < 0) return -1;
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
        h2_conn_close(hc, hc->connected ? ERR_WRITE : ERR_CONNECT, 1, now_ns);
        return -1;
    }
}

/* Opens hc's socket and session. Returns 0, or -1 after closing it. */
int h2_conn_open(h2_conn *hc, phase_id phase, uint64_t now_ns) {
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
        h2_conn_close(hc, ERR_CONNECT, 1, now_ns);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    hc->fd = fd;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = hc};
    if ((connect(fd, (const struct sockaddr *)&cfg->addr, cfg->addr_len) < 0 && errno != EINPROGRESS) ||
        epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        h2_conn_close(hc, ERR_CONNECT, 1, now_ns);
        return -1;
    }
    if (hc->tls) {
        /* The ClientHello goes out at once on loopback (the connect is
         * done); the connection preface waits for the handshake's end. */
        if (tls_conn_open(hc->tls, w->tls_ctx)) {
            perror("rackbench-engine: out of memory for TLS");
            exit(1);
        }
        hc->handshaking = 1;
        hc->open_phase = phase;
        if (send_tls(hc, now_ns) < 0) return -1;
    }
    return 0;
}

/* Counts a GOAWAY once per connection: the frame and its code. */
static void note_goaway(h2_conn *hc) {
    worker *w = hc->w;
    if (!hc->has_client || !hc->client.goaway || hc->goaway_counted) return;
    hc->goaway_counted = 1;
    w->h2_stats.goaways++;
    w->h2_stats.goaway_codes[code_index(hc->client.goaway_code)]++;
}

/* The server closed hc (its FIN, a reset, or TLS close_notify): after a
 * GOAWAY the streams it did not take are its refusal; otherwise they were
 * lost. An idle connection closed costs nothing. */
static void on_server_close(h2_conn *hc, int reset, uint64_t now_ns) {
    worker *w = hc->w;
    if (hc->handshaking) {
        if (tls_conn_lost_in_handshake(hc->tls, reset)) fail_tls(hc, now_ns);
        else h2_conn_close(hc, ERR_CONNECT, 1, now_ns); /* the connect failed under the ClientHello */
        return;
    }
    if (hc->busy == 0) w->idle_closes++;
    note_goaway(hc);
    int refused = hc->client.goaway;
    int graceful = refused && hc->client.goaway_code == NGHTTP2_NO_ERROR;
    h2_conn_close(hc, refused ? ERR_GOAWAY : (hc->connected ? ERR_READ : ERR_CONNECT), !graceful, now_ns);
}

/* https://: the n bytes recv put in read_buf go through TLS (tls.h's
 * tls_conn_receive): the handshake advances (its end counted; the client's
 * next flight, then the session's preface and requests, go out with the
 * flush that ends on_readable), and what follows is decrypted into
 * plain_buf (*len bytes). Returns 0 to go on with the plaintext, 1 when
 * the server's close_notify came after it, -1 when hc failed here. Every
 * fed byte is consumed before it returns. */
static int tls_received(h2_conn *hc, size_t n, uint64_t now_ns, size_t *len) {
    worker *w = hc->w;
    tls_conn *t = hc->tls;
    int handshake_ended;
    tls_status st = tls_conn_receive(t, w->read_buf, n, w->plain_buf, WORKER_PLAIN_BUFFER_BYTES, len, &handshake_ended);
    if (handshake_ended) {
        hc->handshaking = 0;
        worker_tls_handshake(w, t, hc->open_phase, now_ns);
        mark_connected(hc);
    }
    if (st == TLS_AGAIN) return 0;
    if (st == TLS_CLOSED) return 1;
    fail_tls(hc, now_ns);
    return -1;
}

static void on_readable(h2_conn *hc, uint64_t now_ns) {
    worker *w = hc->w;
    for (;;) {
        ssize_t n = recv(hc->fd, w->read_buf, WORKER_READ_BUFFER_BYTES, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) {
            on_server_close(hc, n < 0, now_ns);
            return;
        }
        const uint8_t *data = (const uint8_t *)w->read_buf;
        size_t len = (size_t)n;
        int closed = 0;
        if (hc->tls) {
            closed = tls_received(hc, (size_t)n, now_ns, &len);
            if (closed < 0) return;
            data = (const uint8_t *)w->plain_buf;
        }
        if (len && h2_client_recv(&hc->client, data, len) < 0) {
            note_goaway(hc);
            conn_failed(hc, now_ns);
            return;
        }
        if (closed) {
            on_server_close(hc, 0, now_ns);
            return;
        }
        if ((size_t)n < WORKER_READ_BUFFER_BYTES) break; /* drained: the next edge brings more */
    }
    note_goaway(hc);
    if (hc->client.peer_max_streams && hc->client.peer_max_streams != UINT32_MAX)
        w->h2_stats.server_max_streams = hc->client.peer_max_streams;
    h2_conn_flush(hc, now_ns);
}

void h2_conn_on_event(h2_conn *hc, uint32_t events, uint64_t now_ns) {
    if (hc->state != H2CONN_OPEN) return;
    if (!hc->connected && (events & EPOLLERR)) {
        h2_conn_close(hc, ERR_CONNECT, 1, now_ns);
        return;
    }
    if ((events & EPOLLOUT) && h2_conn_flush(hc, now_ns) < 0) return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(hc, now_ns);
}
