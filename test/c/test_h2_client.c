/*
 * test_h2_client.c - the engine's HTTP/2 client (h2_client.h) against
 * nghttp2's own server session, paired through memory buffers: no socket,
 * no clock. The server here answers by path:
 *
 *   /hello          200, "hello"
 *   /missing        404, empty body
 *   /big            200, BIG_BYTES of body (far beyond HTTP/2's default
 *                   64 KiB windows: flow control must keep it moving)
 *   /reset          RST_STREAM(INTERNAL_ERROR) instead of a response
 *   /goaway         GOAWAY(NO_ERROR) with last stream id 1, then answers
 *                   stream 1 only
 *   /echo           200, body = the number of request body bytes received
 *
 * Also: a peer that answers the preface in HTTP/1.1 or with an HTML page
 * is told apart from a protocol error, and a request's HTTP/1.1 wire is
 * translated into HTTP/2 header fields (h2_request.h).
 */
#include "check.h"
#include "h2_client.h"
#include "h2_request.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG_BYTES (5 * 1024 * 1024)
#define MAX_STREAMS 16

/* ---- the server: nghttp2's server session and a response per path ---- */

typedef struct {
    int32_t id;
    char path[64];
    uint64_t request_body;
    size_t body_len, body_sent;
    char body[32];         /* small bodies; /big streams zeros */
} server_stream;

typedef struct {
    nghttp2_session *session;
    server_stream streams[MAX_STREAMS];
    int count;
    int goaway_sent;
} test_server;

static server_stream *server_stream_of(test_server *srv, int32_t id) {
    for (int i = 0; i < srv->count; i++)
        if (srv->streams[i].id == id) return &srv->streams[i];
    if (srv->count == MAX_STREAMS) return NULL;
    server_stream *s = &srv->streams[srv->count++];
    memset(s, 0, sizeof(*s));
    s->id = id;
    return s;
}

static ssize_t server_read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
                                uint32_t *data_flags, nghttp2_data_source *source, void *user_data) {
    (void)session;
    (void)stream_id;
    (void)user_data;
    server_stream *s = source->ptr;
    size_t left = s->body_len - s->body_sent;
    size_t n = left < length ? left : length;
    if (s->body_len == BIG_BYTES) memset(buf, 'z', n);
    else memcpy(buf, s->body + s->body_sent, n);
    s->body_sent += n;
    if (s->body_sent == s->body_len) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static void respond(test_server *srv, server_stream *s, const char *status, size_t body_len) {
    nghttp2_nv nv[] = {{(uint8_t *)":status", (uint8_t *)status, 7, 3, NGHTTP2_NV_FLAG_NONE}};
    s->body_len = body_len;
    nghttp2_data_provider dp = {.source.ptr = s, .read_callback = server_read_body};
    nghttp2_submit_response(srv->session, s->id, nv, 1, body_len ? &dp : NULL);
}

static void answer(test_server *srv, server_stream *s) {
    if (strcmp(s->path, "/hello") == 0) {
        memcpy(s->body, "hello", 5);
        respond(srv, s, "200", 5);
    } else if (strcmp(s->path, "/big") == 0) {
        respond(srv, s, "200", BIG_BYTES);
    } else if (strcmp(s->path, "/reset") == 0) {
        nghttp2_submit_rst_stream(srv->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_INTERNAL_ERROR);
    } else if (strcmp(s->path, "/goaway") == 0) {
        if (!srv->goaway_sent) {
            srv->goaway_sent = 1;
            nghttp2_submit_goaway(srv->session, NGHTTP2_FLAG_NONE, 1, NGHTTP2_NO_ERROR, NULL, 0);
        }
        if (s->id == 1) {
            memcpy(s->body, "first", 5);
            respond(srv, s, "200", 5);
        }
    } else if (strcmp(s->path, "/echo") == 0) {
        int n = snprintf(s->body, sizeof(s->body), "%llu", (unsigned long long)s->request_body);
        respond(srv, s, "200", (size_t)n);
    } else {
        respond(srv, s, "404", 0);
    }
}

static int server_on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                            size_t name_len, const uint8_t *value, size_t value_len, uint8_t flags,
                            void *user_data) {
    (void)session;
    (void)flags;
    test_server *srv = user_data;
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    server_stream *s = server_stream_of(srv, frame->hd.stream_id);
    if (s && name_len == 5 && memcmp(name, ":path", 5) == 0 && value_len < sizeof(s->path)) {
        memcpy(s->path, value, value_len);
        s->path[value_len] = '\0';
    }
    return 0;
}

static int server_on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data,
                          size_t len, void *user_data) {
    (void)session;
    (void)flags;
    (void)data;
    server_stream *s = server_stream_of(user_data, stream_id);
    if (s) s->request_body += len;
    return 0;
}

static int server_on_frame(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    (void)session;
    test_server *srv = user_data;
    if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        server_stream *s = server_stream_of(srv, frame->hd.stream_id);
        if (s) answer(srv, s);
    }
    return 0;
}

static void server_init(test_server *srv) {
    memset(srv, 0, sizeof(*srv));
    nghttp2_session_callbacks *cbs;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_on_header_callback(cbs, server_on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, server_on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, server_on_frame);
    nghttp2_session_server_new(&srv->session, cbs, srv);
    nghttp2_session_callbacks_del(cbs);
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
    nghttp2_submit_settings(srv->session, NGHTTP2_FLAG_NONE, settings, 1);
}

/* ---- the client side: what ended, and how ---- */

typedef struct {
    int ends;
    h2_stream_end how[MAX_STREAMS];
    uint32_t code[MAX_STREAMS];
    h2_stream *stream[MAX_STREAMS];
} ends_seen;

static void on_end(void *ctx, h2_stream *s, h2_stream_end how, uint32_t code) {
    ends_seen *e = ctx;
    if (e->ends == MAX_STREAMS) return;
    e->stream[e->ends] = s;
    e->how[e->ends] = how;
    e->code[e->ends] = code;
    e->ends++;
}

/* Moves bytes both ways until neither side has anything to send (or a
 * side fails). Returns the number of exchanges, -1 on a client failure. */
static int pump(h2_client *c, test_server *srv) {
    int rounds = 0;
    for (;;) {
        int moved = 0;
        const uint8_t *out;
        long n;
        while ((n = h2_client_pending_output(c, &out)) > 0) {
            CHECK(nghttp2_session_mem_recv(srv->session, out, (size_t)n) == n);
            moved = 1;
        }
        if (n < 0) return -1;
        ssize_t m;
        while ((m = nghttp2_session_mem_send(srv->session, &out)) > 0) {
            /* Fed in pieces, as a socket would deliver them. */
            for (ssize_t off = 0; off < m; off += 16384) {
                size_t piece = (size_t)(m - off) < 16384 ? (size_t)(m - off) : 16384;
                if (h2_client_recv(c, out + off, piece) < 0) return -1;
            }
            moved = 1;
        }
        if (!moved) return rounds;
        rounds++;
    }
}

static nghttp2_nv nv(const char *name, const char *value) {
    return (nghttp2_nv){(uint8_t *)name, (uint8_t *)value, strlen(name), strlen(value), NGHTTP2_NV_FLAG_NONE};
}

static int32_t get(h2_client *c, const char *path, h2_stream *s) {
    nghttp2_nv h[] = {nv(":method", "GET"), nv(":scheme", "http"), nv(":authority", "test"), nv(":path", path)};
    memset(s, 0, sizeof(*s));
    return h2_client_submit(c, h, 4, s);
}

static void test_requests_and_statuses(void) {
    test_server srv;
    server_init(&srv);
    ends_seen e = {0};
    h2_client c;
    CHECK(h2_client_init(&c, H2_WINDOW_BYTES, on_end, &e) == 0);
    h2_stream hello, missing;
    CHECK(get(&c, "/hello", &hello) == 1);
    CHECK(get(&c, "/missing", &missing) == 3);
    CHECK_EQ_U64(c.open_streams, 2);
    CHECK(pump(&c, &srv) > 0);
    CHECK_EQ_U64(e.ends, 2);
    for (int i = 0; i < e.ends; i++) CHECK(e.how[i] == H2_STREAM_COMPLETE);
    CHECK_EQ_U64(hello.status, 200);
    CHECK_EQ_U64(hello.body_bytes, 5);
    CHECK(hello.header_bytes >= 10); /* ":status" "200" */
    CHECK_EQ_U64(missing.status, 404);
    CHECK_EQ_U64(missing.body_bytes, 0);
    CHECK_EQ_U64(c.open_streams, 0);
    CHECK(c.peer_settings_seen);
    CHECK_EQ_U64(c.peer_max_streams, 100);
    CHECK(h2_client_usable(&c));
    h2_client_free(&c);
    nghttp2_session_del(srv.session);
}

/* A body far beyond the default windows arrives whole, with the client's
 * large window and with HTTP/2's default one (WINDOW_UPDATEs needed). */
static void test_large_body_flow_control(uint32_t window) {
    test_server srv;
    server_init(&srv);
    ends_seen e = {0};
    h2_client c;
    CHECK(h2_client_init(&c, window, on_end, &e) == 0);
    h2_stream a, b;
    get(&c, "/big", &a);
    get(&c, "/big", &b);
    CHECK(pump(&c, &srv) > 0);
    CHECK_EQ_U64(e.ends, 2);
    CHECK(e.how[0] == H2_STREAM_COMPLETE && e.how[1] == H2_STREAM_COMPLETE);
    CHECK_EQ_U64(a.body_bytes, BIG_BYTES);
    CHECK_EQ_U64(b.body_bytes, BIG_BYTES);
    CHECK_EQ_U64(nghttp2_session_get_local_settings(c.session, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE), window);
    h2_client_free(&c);
    nghttp2_session_del(srv.session);
}

static void test_reset_stream(void) {
    test_server srv;
    server_init(&srv);
    ends_seen e = {0};
    h2_client c;
    h2_client_init(&c, H2_WINDOW_BYTES, on_end, &e);
    h2_stream reset, ok;
    get(&c, "/reset", &reset);
    get(&c, "/hello", &ok);
    pump(&c, &srv);
    CHECK_EQ_U64(e.ends, 2);
    for (int i = 0; i < e.ends; i++) {
        if (e.stream[i] == &reset) {
            CHECK(e.how[i] == H2_STREAM_RESET);
            CHECK_EQ_U64(e.code[i], NGHTTP2_INTERNAL_ERROR);
        } else {
            CHECK(e.how[i] == H2_STREAM_COMPLETE);
        }
    }
    /* A reset stream leaves the connection usable. */
    CHECK(h2_client_usable(&c));
    CHECK(strcmp(h2_error_code_name(NGHTTP2_INTERNAL_ERROR), "INTERNAL_ERROR") == 0);
    CHECK(strcmp(h2_error_code_name(99), "UNKNOWN") == 0);
    h2_client_free(&c);
    nghttp2_session_del(srv.session);
}

static void test_goaway(void) {
    test_server srv;
    server_init(&srv);
    ends_seen e = {0};
    h2_client c;
    h2_client_init(&c, H2_WINDOW_BYTES, on_end, &e);
    h2_stream s1, s3, s5;
    get(&c, "/goaway", &s1);
    get(&c, "/goaway", &s3);
    get(&c, "/goaway", &s5);
    pump(&c, &srv);
    CHECK(c.goaway);
    CHECK_EQ_U64(c.goaway_last_stream_id, 1);
    CHECK_EQ_U64(e.ends, 3);
    int complete = 0, refused = 0;
    for (int i = 0; i < e.ends; i++) {
        if (e.how[i] == H2_STREAM_COMPLETE) complete++;
        if (e.how[i] == H2_STREAM_GOAWAY) refused++;
    }
    CHECK_EQ_U64(complete, 1);
    CHECK_EQ_U64(refused, 2);
    CHECK_EQ_U64(s1.body_bytes, 5);
    /* No new stream after a GOAWAY. */
    CHECK(!h2_client_usable(&c));
    h2_stream later;
    CHECK(get(&c, "/hello", &later) == -1);
    h2_client_free(&c);
    nghttp2_session_del(srv.session);
}

static void test_cancel_is_not_reported(void) {
    test_server srv;
    server_init(&srv);
    ends_seen e = {0};
    h2_client c;
    h2_client_init(&c, H2_WINDOW_BYTES, on_end, &e);
    h2_stream slow, ok;
    get(&c, "/big", &slow);
    get(&c, "/hello", &ok);
    h2_client_cancel(&c, &slow);
    CHECK_EQ_U64(c.open_streams, 1);
    pump(&c, &srv);
    CHECK_EQ_U64(e.ends, 1);
    CHECK(e.stream[0] == &ok);
    CHECK(h2_client_usable(&c));
    h2_client_free(&c);
    nghttp2_session_del(srv.session);
}

static void test_request_body(void) {
    test_server srv;
    server_init(&srv);
    ends_seen e = {0};
    h2_client c;
    h2_client_init(&c, H2_WINDOW_BYTES, on_end, &e);
    /* Larger than the server's default 64 KiB window: the body waits for
     * its WINDOW_UPDATEs. */
    size_t len = 200000;
    uint8_t *body = calloc(1, len);
    h2_stream s;
    memset(&s, 0, sizeof(s));
    s.body = body;
    s.body_len = len;
    nghttp2_nv h[] = {nv(":method", "POST"), nv(":scheme", "http"), nv(":authority", "test"), nv(":path", "/echo")};
    CHECK(h2_client_submit(&c, h, 4, &s) == 1);
    pump(&c, &srv);
    CHECK_EQ_U64(e.ends, 1);
    CHECK(e.how[0] == H2_STREAM_COMPLETE);
    CHECK_EQ_U64(srv.streams[0].request_body, len);
    CHECK_EQ_U64(s.body_bytes, 6); /* "200000" */
    free(body);
    h2_client_free(&c);
    nghttp2_session_del(srv.session);
}

/* Peers that do not speak HTTP/2: the verdict and its reason. */
static void test_not_h2(void) {
    ends_seen e = {0};
    h2_client c;
    h2_client_init(&c, H2_WINDOW_BYTES, on_end, &e);
    const char *http1 = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    CHECK(h2_client_recv(&c, (const uint8_t *)http1, strlen(http1)) == -1);
    CHECK(c.failed && c.not_h2);
    CHECK(strstr(c.reason, "HTTP/1.1 400 Bad Request") != NULL);
    CHECK(strchr(c.reason, '\r') == NULL);
    h2_client_free(&c);

    h2_client_init(&c, H2_WINDOW_BYTES, on_end, &e);
    const char *html = "<!DOCTYPE HTML>\n<html><body>Error code: 505</body></html>";
    CHECK(h2_client_recv(&c, (const uint8_t *)html, strlen(html)) == -1);
    CHECK(c.failed && c.not_h2);
    CHECK(strstr(c.reason, "<!DOCTYPE HTML>") != NULL);
    h2_client_free(&c);

    /* After a proper SETTINGS, a broken frame is a protocol error, not
     * "not HTTP/2". */
    test_server srv;
    server_init(&srv);
    h2_client_init(&c, H2_WINDOW_BYTES, on_end, &e);
    h2_stream s;
    get(&c, "/hello", &s);
    pump(&c, &srv);
    CHECK(c.peer_settings_seen);
    /* A DATA frame on stream 0 is a connection error (RFC 9113 6.1). */
    const uint8_t bad[] = {0, 0, 1, NGHTTP2_DATA, 0, 0, 0, 0, 0, 'x'};
    h2_client_recv(&c, bad, sizeof(bad));
    /* nghttp2 answers with GOAWAY(PROTOCOL_ERROR) when it next sends. */
    const uint8_t *out;
    CHECK(h2_client_pending_output(&c, &out) == -1);
    CHECK(c.failed);
    CHECK(strstr(c.reason, "PROTOCOL_ERROR") != NULL);
    CHECK(!c.not_h2);
    CHECK(c.reason[0] != '\0');
    h2_client_free(&c);
    nghttp2_session_del(srv.session);
    CHECK_EQ_U64(e.ends, 1);
}

static const char *value_of(const h2_request *r, const char *name) {
    static char text[256];
    for (size_t i = 0; i < r->header_count; i++) {
        if (r->headers[i].namelen == strlen(name) && memcmp(r->headers[i].name, name, strlen(name)) == 0) {
            snprintf(text, sizeof(text), "%.*s", (int)r->headers[i].valuelen, r->headers[i].value);
            return text;
        }
    }
    return NULL;
}

static void test_request_from_wire(void) {
    const char *wire = "POST /p?q=1 HTTP/1.1\r\nHost: example:8080\r\nConnection: close\r\nX-Thing: A b\r\n"
                       "Content-Length: 3\r\n\r\nabc";
    size_t head_len = strstr(wire, "\r\n\r\n") + 2 - wire;
    h2_request r;
    CHECK(h2_request_from_wire(&r, wire, strlen(wire), head_len, "127.0.0.1:80") == 0);
    CHECK(strcmp(value_of(&r, ":method"), "POST") == 0);
    CHECK(strcmp(value_of(&r, ":scheme"), "http") == 0);
    CHECK(strcmp(value_of(&r, ":authority"), "example:8080") == 0); /* the request's Host wins */
    CHECK(strcmp(value_of(&r, ":path"), "/p?q=1") == 0);
    CHECK(strcmp(value_of(&r, "x-thing"), "A b") == 0);              /* lowercased name, value kept */
    CHECK(strcmp(value_of(&r, "content-length"), "3") == 0);
    CHECK(value_of(&r, "connection") == NULL);
    CHECK(value_of(&r, "host") == NULL);
    CHECK(memcmp(r.headers[0].name, ":method", 7) == 0);              /* pseudo-headers first */
    CHECK_EQ_U64(r.header_count, 6);
    CHECK_EQ_U64(r.body_len, 3);
    CHECK(r.body && memcmp(r.body, "abc", 3) == 0);
    free(r.headers);
    free(r.storage);

    const char *get_wire = "GET / HTTP/1.1\r\nUser-Agent: t\r\n\r\n";
    CHECK(h2_request_from_wire(&r, get_wire, strlen(get_wire), strlen(get_wire) - 2, "127.0.0.1:80") == 0);
    CHECK(strcmp(value_of(&r, ":authority"), "127.0.0.1:80") == 0);
    CHECK_EQ_U64(r.body_len, 0);
    free(r.headers);
    free(r.storage);

    CHECK(h2_request_from_wire(&r, "GARBAGE\r\n\r\n", 11, 9, "a") == -1);
    free(r.headers);
    free(r.storage);
}

int main(void) {
    test_requests_and_statuses();
    test_large_body_flow_control(H2_WINDOW_BYTES);
    test_large_body_flow_control(65535);
    test_reset_stream();
    test_goaway();
    test_cancel_is_not_reported();
    test_request_body();
    test_not_h2();
    test_request_from_wire();
    return check_report("test_h2_client");
}
