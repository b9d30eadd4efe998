/*
 * ws_conn.c - see ws_conn.h.
 *
 * As HTTP/1.1's connections do (http1_conn.c), a read shorter than the
 * worker's buffer means the socket is drained (edge triggered), and what
 * is written goes out at once with one send; only what the socket does not
 * take is copied, into the connection's own buffer, for EPOLLOUT. Reads go
 * through TLS for wss:// the same way (tls_conn_receive).
 *
 * The connection's memory is what an idle one needs: its struct, and for
 * wss:// OpenSSL's state. The handshake's answer, a frame split across
 * reads, a fragmented message and unsent output each take a buffer only
 * while they last (ws_frame.h), so thousands of idle clients are cheap.
 */
#include "ws_conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cable.h"
#include "clock.h"
#include "ws_payload.h"

const char *const ws_end_names[WS_END_KINDS] = {
    "none",      "refused",      "connect", "timeout",    "tls",    "status", "handshake",
    "rejected",  "malformed",    "server_close", "dropped", "disconnect", "client"};

/* --- configuration ------------------------------------------------------ */

int ws_conn_config_init(ws_conn_config *cfg, const engine_config *engine, char *err, size_t err_len) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->engine = engine;
    int ipv6 = strchr(engine->host, ':') != NULL;
    int default_port = strcmp(engine->port, engine->tls ? "443" : "80") == 0;
    snprintf(cfg->host_header, sizeof(cfg->host_header), "%s%s%s%s%s", ipv6 ? "[" : "", engine->host,
             ipv6 ? "]" : "", default_port ? "" : ":", default_port ? "" : engine->port);
    /* Browsers send the page's origin, and Action Cable refuses an
     * upgrade from an origin it does not allow: the target's own is what
     * a page served by the same app would send (-H 'Origin: ...' replaces it). */
    snprintf(cfg->origin, sizeof(cfg->origin), "%s://%s", engine->tls ? "https" : "http", cfg->host_header);
    cfg->request.path = engine->path;
    cfg->request.host = cfg->host_header;
    cfg->request.origin = cfg->origin;
    cfg->request.protocol = engine->ws_cable ? CABLE_PROTOCOL : NULL;
    cfg->request.headers = engine->headers;
    cfg->request.header_count = engine->header_count;
    cfg->cable = engine->ws_cable;
    if (cfg->cable &&
        !cable_identifier(cfg->identifier, sizeof(cfg->identifier), engine->ws_channel, engine->ws_channel_params,
                          err, err_len))
        return -1;
    cfg->max_message_bytes = engine->ws_max_message_bytes;
    cfg->fragment_bytes = engine->ws_fragment_bytes;
    cfg->timeout_ns = engine->timeout_ns;
    /* The largest message: a Cable command around the body, its quotes
     * escaped (at most doubling), in frames of fragment_bytes. */
    cfg->body_cap = engine->ws_message_bytes + WS_PAYLOAD_MIN_BYTES;
    cfg->command_cap = 2 * cfg->body_cap + 2 * sizeof(cfg->identifier) + 512;
    size_t frames = cfg->fragment_bytes ? cfg->command_cap / cfg->fragment_bytes + 1 : 1;
    cfg->scratch_cap = cfg->command_cap + frames * WS_MAX_HEADER_BYTES + 64;
    if (cfg->scratch_cap < 32 * 1024) cfg->scratch_cap = 32 * 1024; /* the Upgrade request with its -H lines */
    cfg->body = worker_xcalloc(1, cfg->body_cap);
    cfg->command = worker_xcalloc(1, cfg->command_cap);
    cfg->scratch = worker_xcalloc(1, cfg->scratch_cap);
    return 0;
}

void ws_conn_config_free(ws_conn_config *cfg) {
    free(cfg->body);
    free(cfg->command);
    free(cfg->scratch);
    cfg->body = cfg->command = NULL;
    cfg->scratch = NULL;
}

/* --- the connection's life ----------------------------------------------- */

void ws_conn_init(ws_conn *c, worker *w, const ws_conn_config *cfg, const ws_conn_events *events,
                  ws_conn_tally *tally, uint32_t slot, uint64_t seed) {
    memset(c, 0, sizeof(*c));
    c->item = WS_ITEM_CONN;
    c->w = w;
    c->cfg = cfg;
    c->events = events;
    c->tally = tally;
    c->fd = -1;
    c->slot = slot;
    /* Mask keys only need to be unpredictable to a proxy's cache (RFC 6455
     * section 10.3); a seeded generator per client keeps runs repeatable. */
    rng_seed(&c->rng, (seed ^ UINT64_C(0x5753574D41534B21)) * UINT64_C(0x100000001B3) + slot);
    ws_reader_init(&c->reader, cfg->max_message_bytes);
    if (w->tls_ctx) {
        c->tls = worker_xcalloc(1, sizeof(tls_conn));
        tls_conn_init(c->tls);
    }
}

static void keep_reason(ws_conn_tally *t, ws_end kind, const char *fmt, const char *detail) {
    if (t->reason[kind][0]) return;
    snprintf(t->reason[kind], WS_REASON_BYTES, fmt, detail ? detail : "");
    for (char *p = t->reason[kind]; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
}

/* Releases the socket and every buffer; the state goes to DONE. */
static void release(ws_conn *c) {
    if (c->fd >= 0) close(c->fd); /* also leaves the epoll set */
    c->fd = -1;
    if (c->tls) tls_conn_close(c->tls);
    free(c->answer);
    c->answer = NULL;
    c->answer_len = 0;
    free(c->out);
    c->out = NULL;
    c->out_len = c->out_sent = c->out_cap = 0;
    ws_reader_free(&c->reader);
    c->state = WS_CONN_DONE;
}

/* c ended as kind: counted (a failure to connect before it was ready, a
 * lost connection after; the engine's own close neither), its first
 * reason kept, and the workload told. fmt has one %s for detail. */
static void end_conn(ws_conn *c, ws_end kind, const char *fmt, const char *detail, uint64_t now_ns) {
    if (c->state == WS_CONN_DONE) return;
    release(c);
    c->end = kind;
    if (kind != WS_END_CLIENT) {
        if (c->was_ready) c->tally->lost[kind]++;
        else c->tally->failed[kind]++;
        keep_reason(c->tally, kind, fmt, detail);
    }
    c->events->ended(c, now_ns);
}

/* The connect failed (err: its errno). */
static void connect_failed(ws_conn *c, int err, uint64_t now_ns) {
    if (err == ECONNREFUSED) end_conn(c, WS_END_REFUSED, "the connection was refused%s", "", now_ns);
    else end_conn(c, WS_END_CONNECT, "connect failed: %s", strerror(err), now_ns);
}

/* wss://: TLS failed; the run's "tls" object counts how. */
static void tls_failed(ws_conn *c, uint64_t now_ns) {
    worker_tls_failure(c->w, c->tls, PHASE_WARMUP);
    end_conn(c, WS_END_TLS, "%s", c->tls->reason, now_ns);
}

/* The socket failed under a send or a receive (err: errno; 0 for the
 * server's FIN). */
static void socket_failed(ws_conn *c, int err, uint64_t now_ns) {
    if (!c->connected) {
        connect_failed(c, err ? err : ECONNRESET, now_ns);
        return;
    }
    if (c->state == WS_CONN_TLS) {
        if (tls_conn_lost_in_handshake(c->tls, err != 0)) tls_failed(c, now_ns);
        else connect_failed(c, err ? err : ECONNRESET, now_ns);
        return;
    }
    const char *midway = ws_reader_midway(&c->reader) ? " in the middle of a frame" : "";
    if (c->state == WS_CONN_UPGRADING)
        end_conn(c, WS_END_DROPPED,
                 err ? "the server reset the connection before answering the Upgrade%s"
                     : "the server closed the connection before answering the Upgrade%s",
                 "", now_ns);
    else if (err)
        end_conn(c, WS_END_DROPPED, "the server reset the connection without a close frame%s", midway, now_ns);
    else
        end_conn(c, WS_END_DROPPED, "the server closed the connection without a close frame%s", midway, now_ns);
}

/* --- output -------------------------------------------------------------- */

/* Keeps bytes the socket did not take, after those already waiting. */
static void keep_output(ws_conn *c, const uint8_t *bytes, size_t n) {
    if (c->out_sent == c->out_len) c->out_sent = c->out_len = 0;
    if (c->out_len + n > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + n) cap *= 2;
        uint8_t *grown = realloc(c->out, cap);
        if (!grown) {
            perror("rackbench-engine: out of memory for WebSocket output");
            exit(1);
        }
        c->out = grown;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, bytes, n);
    c->out_len += n;
}

/* Sends what waits for c's socket. 0 (all of it went, or the socket is
 * full: EPOLLOUT resumes), -1 when c ended. */
static int flush(ws_conn *c, uint64_t now_ns) {
    if (c->tls) {
        if (tls_conn_send(c->tls, c->fd, now_ns) < 0) {
            socket_failed(c, errno, now_ns);
            return -1;
        }
        if (tls_conn_hello_sent(c->tls)) c->connected = 1;
        return 0;
    }
    while (c->out_sent < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_sent += (size_t)n;
            c->connected = 1;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        socket_failed(c, n < 0 ? errno : EPIPE, now_ns);
        return -1;
    }
    c->out_sent = c->out_len = 0;
    if (c->out_cap > 64 * 1024) {
        /* A burst's buffer goes back: idle clients hold none. */
        free(c->out);
        c->out = NULL;
        c->out_cap = 0;
    }
    return 0;
}

/* Writes n bytes of the WebSocket stream: encrypted for wss://, then out
 * with one send; 0, or -1 when c ended. */
static int write_bytes(ws_conn *c, const uint8_t *bytes, size_t n, uint64_t now_ns) {
    if (c->tls) {
        if (tls_conn_write(c->tls, bytes, n)) {
            tls_failed(c, now_ns);
            return -1;
        }
        return flush(c, now_ns);
    }
    keep_output(c, bytes, n);
    return flush(c, now_ns);
}

int ws_conn_send(ws_conn *c, ws_opcode op, const void *data, size_t len, uint64_t now_ns) {
    if (c->state == WS_CONN_DONE || c->fd < 0) return -1;
    const ws_conn_config *cfg = c->cfg;
    const uint8_t *p = data;
    size_t frag = cfg->fragment_bytes && op < WS_OP_CLOSE ? cfg->fragment_bytes : len;
    if (frag == 0) frag = 1;
    size_t n = 0, off = 0;
    int frames = 0;
    do {
        size_t part = len - off < frag ? len - off : frag;
        int fin = off + part == len;
        ws_opcode frame_op = frames == 0 ? op : WS_OP_CONTINUATION;
        size_t wrote = ws_frame_encode(cfg->scratch + n, cfg->scratch_cap - n, frame_op, fin, (uint32_t)rng_next(&c->rng),
                                       p + off, part);
        if (!wrote) {
            fprintf(stderr, "rackbench-engine: internal: a WebSocket message of %zu bytes does not fit the buffer\n", len);
            exit(1);
        }
        c->tally->frames_out[frame_op]++;
        n += wrote;
        off += part;
        frames++;
    } while (off < len);
    c->tally->bytes_out += n;
    return write_bytes(c, cfg->scratch, n, now_ns);
}

/* Sends the Upgrade request (the TCP connect, or the TLS handshake, is
 * done or under way). */
static int send_upgrade(ws_conn *c, uint64_t now_ns) {
    uint8_t nonce[16];
    uint64_t a = rng_next(&c->rng), b = rng_next(&c->rng);
    memcpy(nonce, &a, 8);
    memcpy(nonce + 8, &b, 8);
    char key[WS_KEY_CHARS + 1];
    ws_handshake_key(nonce, key);
    if (ws_handshake_accept(key, c->accept)) {
        fprintf(stderr, "rackbench-engine: SHA-1 failed in OpenSSL\n");
        exit(1);
    }
    size_t n = ws_handshake_request((char *)c->cfg->scratch, c->cfg->scratch_cap, &c->cfg->request, key);
    if (!n) {
        fprintf(stderr, "rackbench-engine: the WebSocket Upgrade request does not fit its buffer\n");
        exit(1);
    }
    c->state = WS_CONN_UPGRADING;
    return write_bytes(c, c->cfg->scratch, n, now_ns);
}

int ws_conn_open(ws_conn *c, uint64_t now_ns) {
    worker *w = c->w;
    const engine_config *cfg = w->cfg;
    w->connect_attempts++;
    c->open_ns = now_ns;
    c->deadline_ns = now_ns + c->cfg->timeout_ns;
    c->state = WS_CONN_CONNECTING;
    int fd = socket(cfg->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) {
        connect_failed(c, errno, now_ns);
        return -1;
    }
    /* Messages are small and each is written whole: without TCP_NODELAY,
     * Nagle and delayed ACKs would add 40 ms to round trips. */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    if (connect(fd, (const struct sockaddr *)&cfg->addr, cfg->addr_len) < 0 && errno != EINPROGRESS) {
        connect_failed(c, errno, now_ns);
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = c};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        connect_failed(c, errno, now_ns);
        return -1;
    }
    if (c->tls) {
        if (tls_conn_open(c->tls, w->tls_ctx)) {
            perror("rackbench-engine: out of memory for TLS");
            exit(1);
        }
        c->state = WS_CONN_TLS;
        return flush(c, now_ns);
    }
    return send_upgrade(c, now_ns);
}

/* --- input --------------------------------------------------------------- */

/* The connection is ready for the workload. */
static void become_ready(ws_conn *c, uint64_t now_ns) {
    c->state = WS_CONN_OPEN;
    c->was_ready = 1;
    c->ready_ns = now_ns;
    worker *w = c->w;
    w->connects++;
    w->slots_established++;
    c->events->ready(c, now_ns);
}

/* The server broke the protocol: it is told why (a close frame with the
 * RFC's code, best effort), and the connection ends. */
static void malformed(ws_conn *c, int close_code, const char *why, uint64_t now_ns) {
    uint8_t payload[2] = {(uint8_t)(close_code >> 8), (uint8_t)close_code};
    if (c->state != WS_CONN_UPGRADING && c->fd >= 0) {
        size_t n = ws_frame_encode(c->cfg->scratch, c->cfg->scratch_cap, WS_OP_CLOSE, 1, (uint32_t)rng_next(&c->rng),
                                   payload, 2);
        if (c->tls) {
            if (!tls_conn_write(c->tls, c->cfg->scratch, n)) tls_conn_send(c->tls, c->fd, now_ns);
        } else {
            send(c->fd, c->cfg->scratch, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
    }
    end_conn(c, WS_END_MALFORMED, "the server sent %s", why, now_ns);
}

static void count_close_code(ws_conn_tally *t, int code, uint64_t n) {
    for (int i = 0; i < WS_CLOSE_CODES_KEPT; i++) {
        if (t->close_code_counts[i] && t->close_codes[i] != code) continue;
        t->close_codes[i] = code;
        t->close_code_counts[i] += n;
        return;
    }
    t->close_codes_other += n;
}

/* The server's close frame: answered with the same code (section 5.5.1),
 * and the connection ends. */
static void on_close_frame(ws_conn *c, const ws_message *m) {
    int code;
    const uint8_t *reason;
    size_t reason_len;
    const char *why;
    if (ws_close_parse(m->data, m->len, &code, &reason, &reason_len, &why)) {
        malformed(c, WS_CLOSE_PROTOCOL_ERROR, why, c->now_ns);
        return;
    }
    c->close_code = code;
    count_close_code(c->tally, code, 1);
    int answer = code == WS_CLOSE_NO_STATUS ? WS_CLOSE_NORMAL : code;
    uint8_t payload[2] = {(uint8_t)(answer >> 8), (uint8_t)answer};
    if (ws_conn_send(c, WS_OP_CLOSE, payload, 2, c->now_ns) < 0) return;
    char detail[WS_REASON_BYTES];
    snprintf(detail, sizeof(detail), "%d%s%.*s", code, reason_len ? ": " : "", (int)(reason_len < 120 ? reason_len : 120),
             (const char *)reason);
    end_conn(c, WS_END_SERVER_CLOSE, "the server closed the WebSocket with %s", detail, c->now_ns);
}

/* Action Cable's own messages, and the workload's inside them. */
static void on_cable_text(ws_conn *c, const ws_message *m) {
    cable_frame f;
    cable_read(m->data, m->len, &f);
    ws_conn_tally *t = c->tally;
    switch (f.kind) {
    case CABLE_WELCOME:
        t->cable_welcomes++;
        if (c->state == WS_CONN_SUBSCRIBING && !c->welcomed) {
            c->welcomed = 1;
            size_t n = cable_subscribe(c->cfg->command, c->cfg->command_cap, c->cfg->identifier);
            ws_conn_send(c, WS_OP_TEXT, c->cfg->command, n, c->now_ns);
        }
        return;
    case CABLE_CONFIRM:
        t->cable_confirms++;
        if (c->state == WS_CONN_SUBSCRIBING && c->welcomed) become_ready(c, c->now_ns);
        return;
    case CABLE_REJECT:
        end_conn(c, WS_END_REJECTED, "Action Cable rejected the subscription to %s", c->cfg->identifier, c->now_ns);
        return;
    case CABLE_PING: t->cable_pings++; return;
    case CABLE_DISCONNECT: {
        char reason[80];
        size_t n = f.reason_len < sizeof(reason) - 1 ? f.reason_len : sizeof(reason) - 1;
        memcpy(reason, f.reason ? (const char *)f.reason : "", n);
        reason[n] = '\0';
        end_conn(c, WS_END_DISCONNECT, "Action Cable disconnected the client: %s", n ? reason : "no reason given",
                 c->now_ns);
        return;
    }
    case CABLE_MESSAGE:
        if (c->state == WS_CONN_OPEN) c->events->message(c, f.value, f.value_len, c->now_ns);
        else t->cable_unexpected++;
        return;
    case CABLE_OTHER:
    case CABLE_NOT_JSON:
    case CABLE_KINDS: t->cable_unexpected++; return;
    }
}

/* The reader's callback: one message or control frame. Non-zero once c
 * ended (the rest of the read is dropped with it). */
static int on_frame_message(void *ctx, const ws_message *m) {
    ws_conn *c = ctx;
    if (m->frames > 1) c->tally->fragmented_in++;
    switch (m->opcode) {
    case WS_OP_PING:
        c->tally->pongs_sent++;
        ws_conn_send(c, WS_OP_PONG, m->data, m->len, c->now_ns);
        break;
    case WS_OP_PONG: break;
    case WS_OP_CLOSE: on_close_frame(c, m); break;
    case WS_OP_TEXT:
    case WS_OP_BINARY:
        if (c->cfg->cable) {
            if (m->opcode == WS_OP_TEXT) on_cable_text(c, m);
            else c->tally->cable_unexpected++;
        } else if (c->state == WS_CONN_OPEN) {
            c->events->message(c, m->data, m->len, c->now_ns);
        }
        break;
    default: break;
    }
    return c->state == WS_CONN_DONE;
}

/* Frames from the server. 0, or -1 when c ended. */
static int read_frames(ws_conn *c, const uint8_t *data, size_t len, uint64_t now_ns) {
    c->now_ns = now_ns;
    uint64_t before[WS_OPCODES];
    memcpy(before, c->reader.frames, sizeof(before));
    ws_read_status st = ws_reader_feed(&c->reader, data, len, on_frame_message, c);
    if (c->state != WS_CONN_DONE)
        for (int op = 0; op < WS_OPCODES; op++) c->tally->frames_in[op] += c->reader.frames[op] - before[op];
    if (st == WS_READ_ERROR) {
        malformed(c, c->reader.close_code, c->reader.error, now_ns);
        return -1;
    }
    return c->state == WS_CONN_DONE ? -1 : 0;
}

/* The answer to the Upgrade so far; once it is whole and right, what came
 * after it is the server's first frames. 0, or -1 when c ended. */
static int read_answer(ws_conn *c, const uint8_t *data, size_t len, uint64_t now_ns) {
    const char *answer = (const char *)data;
    size_t answer_len = len;
    if (c->answer_len) {
        char *grown = realloc(c->answer, c->answer_len + len);
        if (!grown) {
            perror("rackbench-engine: out of memory for a WebSocket handshake");
            exit(1);
        }
        memcpy(grown + c->answer_len, data, len);
        c->answer = grown;
        c->answer_len += len;
        answer = c->answer;
        answer_len = c->answer_len;
    }
    ws_handshake_result res;
    int r = ws_handshake_check(answer, answer_len, c->accept, c->cfg->request.protocol, &res);
    if (r == 0) {
        if (!c->answer_len) {
            /* Its start: kept until the rest comes. */
            c->answer = malloc(len);
            if (!c->answer) {
                perror("rackbench-engine: out of memory for a WebSocket handshake");
                exit(1);
            }
            memcpy(c->answer, data, len);
            c->answer_len = len;
        }
        return 0;
    }
    if (r < 0) {
        end_conn(c, res.failure == WS_HS_STATUS ? WS_END_STATUS : WS_END_HANDSHAKE, "%s", res.reason, now_ns);
        return -1;
    }
    /* Upgraded: the frames after the header block are read from a copy
     * of their own when the answer came in pieces (its buffer goes). */
    size_t rest = answer_len - res.header_bytes;
    uint8_t *copy = NULL;
    const uint8_t *frames = (const uint8_t *)answer + res.header_bytes;
    if (c->answer_len && rest) {
        copy = malloc(rest);
        if (!copy) {
            perror("rackbench-engine: out of memory for a WebSocket handshake");
            exit(1);
        }
        memcpy(copy, frames, rest);
        frames = copy;
    }
    free(c->answer);
    c->answer = NULL;
    c->answer_len = 0;
    if (c->cfg->cable) c->state = WS_CONN_SUBSCRIBING;
    else become_ready(c, now_ns);
    int result = 0;
    if (c->state != WS_CONN_DONE && rest) result = read_frames(c, frames, rest, now_ns);
    free(copy);
    return c->state == WS_CONN_DONE ? -1 : result;
}

/* Plaintext from the server, by the connection's state. */
static int read_plain(ws_conn *c, const uint8_t *data, size_t len, uint64_t now_ns) {
    c->tally->bytes_in += len;
    if (c->state == WS_CONN_UPGRADING) return read_answer(c, data, len, now_ns);
    return read_frames(c, data, len, now_ns);
}

/* wss://: the n bytes in read_buf go through TLS; its handshake's end
 * sends the Upgrade. Plaintext is read as ws:// reads it. 0 to go on
 * reading, -1 when c ended. */
static int read_tls(ws_conn *c, size_t n, uint64_t now_ns) {
    worker *w = c->w;
    size_t len;
    int handshake_ended;
    tls_status st = tls_conn_receive(c->tls, w->read_buf, n, w->plain_buf, WORKER_PLAIN_BUFFER_BYTES, &len,
                                     &handshake_ended);
    if (c->state == WS_CONN_TLS) {
        if (st == TLS_FAILED && !handshake_ended) {
            tls_failed(c, now_ns);
            return -1;
        }
        if (flush(c, now_ns) < 0) return -1; /* the client's next flight */
        if (!handshake_ended) return 0;
        worker_tls_handshake(w, c->tls, PHASE_WARMUP, now_ns);
        if (send_upgrade(c, now_ns) < 0) return -1;
    }
    if (len && read_plain(c, (const uint8_t *)w->plain_buf, len, now_ns) < 0) return -1;
    if (st == TLS_AGAIN) return 0;
    if (st == TLS_CLOSED) {
        socket_failed(c, 0, now_ns);
        return -1;
    }
    tls_failed(c, now_ns);
    return -1;
}

static void on_readable(ws_conn *c, uint64_t now_ns) {
    worker *w = c->w;
    while (c->state != WS_CONN_DONE) {
        ssize_t n = recv(c->fd, w->read_buf, WORKER_READ_BUFFER_BYTES, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) {
            socket_failed(c, n < 0 ? errno : 0, now_ns);
            return;
        }
        if (c->tls) {
            if (read_tls(c, (size_t)n, now_ns) < 0) return;
        } else if (read_plain(c, (const uint8_t *)w->read_buf, (size_t)n, now_ns) < 0) {
            return;
        }
        if ((size_t)n < WORKER_READ_BUFFER_BYTES) return; /* drained: the next edge brings more */
    }
}

void ws_conn_on_event(ws_conn *c, uint32_t events, uint64_t now_ns) {
    if (c->state == WS_CONN_DONE || c->state == WS_CONN_IDLE) return;
    if (!c->connected && (events & (EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        connect_failed(c, err ? err : ECONNREFUSED, now_ns);
        return;
    }
    if ((events & EPOLLOUT) && flush(c, now_ns) < 0) return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(c, now_ns);
}

void ws_conn_check_deadline(ws_conn *c, uint64_t now_ns) {
    if (c->state == WS_CONN_DONE || c->state == WS_CONN_IDLE || c->state == WS_CONN_OPEN) return;
    if (now_ns < c->deadline_ns) return;
    static const char *const waiting[] = {
        [WS_CONN_CONNECTING] = "the TCP connect", [WS_CONN_TLS] = "the TLS handshake",
        [WS_CONN_UPGRADING] = "the answer to the Upgrade",
        [WS_CONN_SUBSCRIBING] = "Action Cable's welcome and confirmation"};
    end_conn(c, WS_END_TIMEOUT, "not ready within --timeout: still waiting for %s", waiting[c->state], now_ns);
}

void ws_conn_finish(ws_conn *c, uint64_t now_ns) {
    if (c->state == WS_CONN_DONE || c->state == WS_CONN_IDLE) return;
    if (c->state == WS_CONN_OPEN) {
        /* 1000: the purpose the connection was made for is fulfilled. */
        uint8_t payload[2] = {WS_CLOSE_NORMAL >> 8, WS_CLOSE_NORMAL & 0xFF};
        if (ws_conn_send(c, WS_OP_CLOSE, payload, 2, now_ns) < 0) return;
        if (c->tls) tls_conn_say_goodbye(c->tls, c->fd, now_ns);
    }
    end_conn(c, WS_END_CLIENT, "%s", "", now_ns);
}

void ws_conn_free(ws_conn *c) {
    release(c);
    if (c->tls) tls_conn_free(c->tls);
    free(c->tls);
    c->tls = NULL;
}

void ws_conn_tally_merge(ws_conn_tally *dst, const ws_conn_tally *src) {
    for (int op = 0; op < WS_OPCODES; op++) {
        dst->frames_in[op] += src->frames_in[op];
        dst->frames_out[op] += src->frames_out[op];
    }
    dst->bytes_in += src->bytes_in;
    dst->bytes_out += src->bytes_out;
    dst->fragmented_in += src->fragmented_in;
    dst->pongs_sent += src->pongs_sent;
    dst->cable_welcomes += src->cable_welcomes;
    dst->cable_confirms += src->cable_confirms;
    dst->cable_pings += src->cable_pings;
    dst->cable_unexpected += src->cable_unexpected;
    for (int k = 0; k < WS_END_KINDS; k++) {
        dst->failed[k] += src->failed[k];
        dst->lost[k] += src->lost[k];
        if (!dst->reason[k][0]) memcpy(dst->reason[k], src->reason[k], WS_REASON_BYTES);
    }
    for (int i = 0; i < WS_CLOSE_CODES_KEPT; i++)
        if (src->close_code_counts[i]) count_close_code(dst, src->close_codes[i], src->close_code_counts[i]);
    dst->close_codes_other += src->close_codes_other;
}
