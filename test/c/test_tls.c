/*
 * test_tls.c - the engine's TLS client (tls.h) against an OpenSSL server
 * session over memory (tls_peer.h): no network but one socketpair for
 * tls_conn_send. What the server sends reaches the client in pieces
 * placed against an unreadable page (fenced_bytes.h), whole or a byte at
 * a time, so a read outside what was fed crashes at once; after every
 * piece the client must have taken all of it (tls.h's feed contract).
 *
 * Covered: handshakes on TLS 1.3 and 1.2; data both ways; session
 * resumption on the next connection (and none when switched off);
 * certificate checking against a CA file, the system's store, a wrong
 * host, and switched off; ALPN h2 chosen, refused, or not answered; a
 * peer that answers in plain HTTP; close_notify; a corrupted record;
 * output through a full socket; and what the engine's connections share:
 * the ClientHello's send time, a batch of ciphertext taken whole
 * (tls_conn_receive), a peer lost during the handshake, and a client's
 * close_notify sent on its way out.
 */
#include "check.h"
#include "fenced_bytes.h"
#include "tls.h"
#include "tls_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static tls_peer_identity identity;

/* What a client saw of the server's bytes. */
typedef struct {
    char plain[64 * 1024];
    size_t plain_len;
    char server_got[64 * 1024]; /* application data the server read */
    size_t server_got_len;
} transcript;

/* Feeds data to t in pieces of piece bytes (0: whole), each fenced, and
 * drives the handshake and then reads; returns the last status (TLS_AGAIN
 * when t waits for more). */
static tls_status client_receive(tls_conn *t, const unsigned char *data, size_t len, size_t piece, transcript *tr) {
    tls_status st = TLS_AGAIN;
    size_t off = 0;
    int placement = 0;
    while (off < len) {
        size_t k = piece && piece < len - off ? piece : len - off;
        const char *fenced = (placement++ & 1) ? fenced_start((const char *)data + off, k)
                                               : fenced_end((const char *)data + off, k);
        tls_conn_feed(t, fenced, k);
        off += k;
        if (!t->handshake_done) {
            st = tls_conn_handshake(t);
            if (st == TLS_FAILED) return st;
            if (st == TLS_AGAIN) {
                CHECK(t->in_len == 0);
                continue;
            }
        }
        for (;;) {
            size_t got = 0;
            size_t room = sizeof(tr->plain) - tr->plain_len;
            st = tls_conn_read(t, tr->plain + tr->plain_len, room ? room : 1, &got);
            if (st != TLS_OK) break;
            tr->plain_len += got;
        }
        CHECK(t->in_len == 0);
        if (st != TLS_AGAIN) return st;
    }
    return st;
}

/* Carries bytes both ways until neither side has more to say. */
static tls_status exchange(tls_conn *t, tls_peer *p, size_t piece, transcript *tr) {
    tls_status st = TLS_AGAIN;
    for (int round = 0; round < 16; round++) {
        int moved = tls_conn_pending(t) > 0;
        tls_peer_take_client_output(p, t);
        tls_peer_step(p, tr->server_got, sizeof(tr->server_got), &tr->server_got_len);
        size_t n;
        unsigned char *out = tls_peer_output(p, &n);
        if (n) {
            st = client_receive(t, out, n, piece, tr);
            moved = 1;
        }
        free(out);
        if (st == TLS_FAILED || st == TLS_CLOSED || !moved) break;
    }
    return st;
}

static tls_context *context(int verify, const char *ca_file, const char *host, const char *alpn, int resume) {
    tls_options o = {.verify = verify, .ca_file = ca_file, .alpn = alpn, .require_alpn = alpn && !strcmp(alpn, "h2"),
                     .resume = resume, .host = host};
    char err[256] = "";
    tls_context *ctx = tls_context_new(&o, err, sizeof(err));
    if (!ctx) fprintf(stderr, "tls_context_new: %s\n", err);
    return ctx;
}

/* One connection: handshake, a request, a response; returns whether it
 * resumed, or -1 when it failed. */
static int one_connection(tls_conn *t, const tls_context *ctx, SSL_CTX *server_ctx, size_t piece) {
    transcript *tr = calloc(1, sizeof(*tr));
    tls_peer p;
    tls_peer_open(&p, server_ctx);
    CHECK(tls_conn_open(t, ctx) == 0);
    CHECK(tls_conn_pending(t) > 0); /* the ClientHello */
    tls_status st = exchange(t, &p, piece, tr);
    int result = -1;
    if (st == TLS_AGAIN && t->handshake_done) {
        static const char request[] = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        CHECK(tls_conn_write(t, request, sizeof(request) - 1) == 0);
        exchange(t, &p, piece, tr);
        CHECK_EQ_U64(tr->server_got_len, sizeof(request) - 1);
        CHECK(memcmp(tr->server_got, request, sizeof(request) - 1) == 0);
        static const char response[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        CHECK(SSL_write(p.ssl, response, sizeof(response) - 1) == (int)(sizeof(response) - 1));
        size_t before = tr->plain_len;
        CHECK(exchange(t, &p, piece, tr) == TLS_AGAIN);
        CHECK_EQ_U64(tr->plain_len - before, sizeof(response) - 1);
        CHECK(memcmp(tr->plain + before, response, sizeof(response) - 1) == 0);
        result = t->resumed;
    }
    tls_peer_close(&p);
    tls_conn_close(t);
    free(tr);
    return result;
}

static void test_tls13_and_resumption(void) {
    tls_context *ctx = context(1, identity.cert_path, "127.0.0.1", "http/1.1", 1);
    CHECK(ctx != NULL);
    SSL_CTX *server = tls_peer_ctx(&identity, 0, PEER_ALPN_HTTP11);
    tls_conn t;
    tls_conn_init(&t);
    CHECK(one_connection(&t, ctx, server, 0) == 0);
    CHECK(t.session != NULL); /* a ticket came after the handshake */
    CHECK(one_connection(&t, ctx, server, 0) == 1);
    CHECK(one_connection(&t, ctx, server, 1) == 1); /* byte by byte, a fresh ticket each time */
    tls_conn_free(&t);
    tls_context_free(ctx);

    /* resume off: a full handshake every time, no session kept */
    ctx = context(1, identity.cert_path, "127.0.0.1", "http/1.1", 0);
    tls_conn_init(&t);
    CHECK(one_connection(&t, ctx, server, 0) == 0);
    CHECK(t.session == NULL);
    CHECK(one_connection(&t, ctx, server, 0) == 0);
    tls_conn_free(&t);
    tls_context_free(ctx);
    SSL_CTX_free(server);
}

static void test_tls12(void) {
    tls_context *ctx = context(1, identity.cert_path, "localhost", NULL, 1);
    SSL_CTX *server = tls_peer_ctx(&identity, TLS1_2_VERSION, PEER_ALPN_NONE);
    tls_conn t;
    tls_conn_init(&t);
    CHECK(one_connection(&t, ctx, server, 0) == 0);
    CHECK(t.session != NULL);
    CHECK(one_connection(&t, ctx, server, 7) == 1);
    tls_conn_free(&t);
    tls_context_free(ctx);
    SSL_CTX_free(server);
}

/* The client's handshake against server, fed whole: its status. */
static tls_status handshake_status(tls_conn *t, const tls_context *ctx, SSL_CTX *server) {
    transcript *tr = calloc(1, sizeof(*tr));
    tls_peer p;
    tls_peer_open(&p, server);
    tls_conn_open(t, ctx);
    tls_status st = exchange(t, &p, 0, tr);
    tls_peer_close(&p);
    free(tr);
    return st == TLS_AGAIN && t->handshake_done ? TLS_OK : st;
}

static void test_verification(void) {
    SSL_CTX *server = tls_peer_ctx(&identity, 0, PEER_ALPN_NONE);
    tls_conn t;
    tls_conn_init(&t);

    /* the system's store does not know a self-signed certificate */
    tls_context *ctx = context(1, NULL, "127.0.0.1", NULL, 1);
    CHECK(handshake_status(&t, ctx, server) == TLS_FAILED);
    CHECK(t.failure == TLS_FAIL_VERIFY);
    CHECK(strstr(t.reason, "self-signed") || strstr(t.reason, "self signed"));
    tls_conn_close(&t);
    tls_context_free(ctx);

    /* trusted, but issued for other names */
    ctx = context(1, identity.cert_path, "127.0.0.2", NULL, 1);
    CHECK(handshake_status(&t, ctx, server) == TLS_FAILED);
    CHECK(t.failure == TLS_FAIL_VERIFY);
    CHECK(strstr(t.reason, "mismatch") != NULL);
    tls_conn_close(&t);
    tls_context_free(ctx);
    ctx = context(1, identity.cert_path, "example.org", NULL, 1);
    CHECK(handshake_status(&t, ctx, server) == TLS_FAILED);
    CHECK(t.failure == TLS_FAIL_VERIFY);
    tls_conn_close(&t);
    tls_context_free(ctx);

    /* switched off: anything goes */
    ctx = context(0, NULL, "example.org", NULL, 1);
    CHECK(handshake_status(&t, ctx, server) == TLS_OK);
    CHECK(t.failure == TLS_FAIL_NONE);
    tls_conn_close(&t);
    tls_context_free(ctx);

    /* an unreadable CA file is refused before any connection */
    tls_options o = {.verify = 1, .ca_file = "/nonexistent/ca.pem", .host = "127.0.0.1"};
    char err[256] = "";
    CHECK(tls_context_new(&o, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "/nonexistent/ca.pem") != NULL);

    tls_conn_free(&t);
    SSL_CTX_free(server);
}

static void test_alpn(void) {
    tls_conn t;
    tls_conn_init(&t);
    tls_context *ctx = context(1, identity.cert_path, "127.0.0.1", "h2", 1);

    SSL_CTX *server = tls_peer_ctx(&identity, 0, PEER_ALPN_H2);
    CHECK(handshake_status(&t, ctx, server) == TLS_OK);
    tls_info info;
    tls_conn_info(&t, &info);
    CHECK(info.alpn && strcmp(info.alpn, "h2") == 0);
    CHECK(info.version && strcmp(info.version, "TLSv1.3") == 0);
    CHECK(info.cipher != NULL);
    tls_conn_close(&t);
    SSL_CTX_free(server);

    server = tls_peer_ctx(&identity, 0, PEER_ALPN_HTTP11);
    CHECK(handshake_status(&t, ctx, server) == TLS_FAILED);
    CHECK(t.failure == TLS_FAIL_ALPN);
    CHECK(strstr(t.reason, "no protocol") != NULL);
    tls_conn_close(&t);
    SSL_CTX_free(server);

    server = tls_peer_ctx(&identity, 0, PEER_ALPN_NONE);
    CHECK(handshake_status(&t, ctx, server) == TLS_FAILED);
    CHECK(t.failure == TLS_FAIL_ALPN);
    tls_conn_close(&t);
    SSL_CTX_free(server);
    tls_context_free(ctx);

    /* http/1.1 is offered, not required: a server without ALPN is fine */
    ctx = context(1, identity.cert_path, "127.0.0.1", "http/1.1", 1);
    server = tls_peer_ctx(&identity, 0, PEER_ALPN_NONE);
    CHECK(handshake_status(&t, ctx, server) == TLS_OK);
    tls_conn_info(&t, &info);
    CHECK(info.alpn == NULL);
    tls_conn_close(&t);
    SSL_CTX_free(server);
    tls_context_free(ctx);
    tls_conn_free(&t);
}

static void test_not_tls(void) {
    tls_context *ctx = context(0, NULL, "127.0.0.1", NULL, 1);
    tls_conn t;
    tls_conn_init(&t);
    static const char answer[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    for (size_t piece = 0; piece <= 1; piece++) {
        transcript *tr = calloc(1, sizeof(*tr));
        CHECK(tls_conn_open(&t, ctx) == 0);
        CHECK(client_receive(&t, (const unsigned char *)answer, sizeof(answer) - 1, piece, tr) == TLS_FAILED);
        CHECK(t.failure == TLS_FAIL_NOT_TLS);
        /* The reason quotes what came: the whole line, or its first byte
         * when bytes arrive one at a time (OpenSSL fails on the first). */
        CHECK(strstr(t.reason, piece ? "\"H\"" : "\"HTTP/1.1 400 Bad Request\"") != NULL);
        CHECK(t.in_len == 0);
        /* failures stay failures */
        size_t got = 99;
        char buf[16];
        CHECK(tls_conn_read(&t, buf, sizeof(buf), &got) == TLS_FAILED && got == 0);
        CHECK(tls_conn_write(&t, "x", 1) == -1);
        tls_conn_close(&t);
        free(tr);
    }
    tls_conn_free(&t);
    tls_context_free(ctx);
}

/* An established connection; the caller closes p and t. */
static void establish(tls_conn *t, tls_peer *p, const tls_context *ctx, SSL_CTX *server, transcript *tr) {
    tls_peer_open(p, server);
    tls_conn_open(t, ctx);
    exchange(t, p, 0, tr);
    CHECK(t->handshake_done);
}

static void test_close_and_corruption(void) {
    tls_context *ctx = context(1, identity.cert_path, "127.0.0.1", NULL, 1);
    SSL_CTX *server = tls_peer_ctx(&identity, 0, PEER_ALPN_NONE);
    tls_conn t;
    tls_conn_init(&t);
    transcript *tr = calloc(1, sizeof(*tr));
    tls_peer p;

    /* data, then close_notify: the data, then TLS_CLOSED */
    establish(&t, &p, ctx, server, tr);
    tr->plain_len = 0;
    CHECK(SSL_write(p.ssl, "bye", 3) == 3);
    SSL_shutdown(p.ssl);
    CHECK(exchange(&t, &p, 0, tr) == TLS_CLOSED);
    CHECK_EQ_U64(tr->plain_len, 3);
    CHECK(t.in_len == 0);
    tls_peer_close(&p);

    /* a byte of a record changed on the way: the record fails */
    establish(&t, &p, ctx, server, tr);
    tr->plain_len = 0;
    CHECK(SSL_write(p.ssl, "0123456789", 10) == 10);
    size_t n;
    unsigned char *out = tls_peer_output(&p, &n);
    CHECK(n > 20);
    out[n - 3] ^= 0x40;
    CHECK(client_receive(&t, out, n, 0, tr) == TLS_FAILED);
    CHECK(t.failure == TLS_FAIL_PROTOCOL);
    CHECK(t.reason[0] != '\0');
    CHECK_EQ_U64(tr->plain_len, 0);
    free(out);
    tls_peer_close(&p);

    /* reading or writing before the handshake is refused */
    tls_conn_open(&t, ctx);
    size_t got;
    char buf[8];
    CHECK(tls_conn_write(&t, "x", 1) == -1);
    CHECK(tls_conn_read(&t, buf, sizeof(buf), &got) == TLS_FAILED);
    tls_conn_close(&t);

    free(tr);
    tls_conn_free(&t);
    SSL_CTX_free(server);
    tls_context_free(ctx);
}

/* tls_conn_send through a socket whose buffer fills: 0 and the rest kept,
 * then 1 once the reader drained it; every byte arrives once, in order. */
static void test_send(void) {
    tls_context *ctx = context(1, identity.cert_path, "127.0.0.1", NULL, 1);
    SSL_CTX *server = tls_peer_ctx(&identity, 0, PEER_ALPN_NONE);
    tls_conn t;
    tls_conn_init(&t);
    transcript *tr = calloc(1, sizeof(*tr));
    tls_peer p;
    establish(&t, &p, ctx, server, tr);

    size_t big = 1024 * 1024;
    char *payload = malloc(big);
    for (size_t i = 0; i < big; i++) payload[i] = (char)(i * 7);
    CHECK(tls_conn_write(&t, payload, big) == 0);
    size_t expected = tls_conn_pending(&t);
    CHECK(expected > big);

    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    int small = 4096;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    unsigned char *received = malloc(expected);
    size_t received_len = 0;
    int fulls = 0, rc;
    while ((rc = tls_conn_send(&t, sv[0], 1)) == 0) {
        fulls++;
        ssize_t r;
        while ((r = recv(sv[1], received + received_len, expected - received_len, MSG_DONTWAIT)) > 0)
            received_len += (size_t)r;
    }
    CHECK(rc == 1);
    CHECK(fulls > 0);
    CHECK_EQ_U64(tls_conn_pending(&t), 0);
    ssize_t r;
    while (received_len < expected && (r = recv(sv[1], received + received_len, expected - received_len, 0)) > 0)
        received_len += (size_t)r;
    CHECK_EQ_U64(received_len, expected);

    /* the server decrypts exactly the payload */
    BIO_write(p.rbio, received, (int)received_len);
    char *back = malloc(big);
    size_t back_len = 0, got;
    while (back_len < big && SSL_read_ex(p.ssl, back + back_len, big - back_len, &got) == 1) back_len += got;
    CHECK_EQ_U64(back_len, big);
    CHECK(memcmp(back, payload, big) == 0);

    /* a closed peer is a socket error */
    close(sv[1]);
    CHECK(tls_conn_write(&t, "x", 1) == 0);
    CHECK(tls_conn_send(&t, sv[0], 1) == -1);
    close(sv[0]);

    free(back);
    free(received);
    free(payload);
    free(tr);
    tls_peer_close(&p);
    tls_conn_free(&t);
    SSL_CTX_free(server);
    tls_context_free(ctx);
}

/* Moves what sits in the socket at fd into the server. */
static void peer_take_socket(tls_peer *p, int fd) {
    char buf[16 * 1024];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) BIO_write(p->rbio, buf, (int)n);
}

/* What the engine's connections do with TLS: the ClientHello's send
 * stamps the handshake's start once; each batch the server sends is taken
 * whole by tls_conn_receive, which says once that the handshake ended and
 * then gives plaintext; a peer gone before the hello left is the
 * connect's failure, after it a handshake's; a client's goodbye is a
 * close_notify the server reads. */
static void test_connection_helpers(void) {
    tls_context *ctx = context(1, identity.cert_path, "127.0.0.1", NULL, 1);
    SSL_CTX *server = tls_peer_ctx(&identity, 0, PEER_ALPN_NONE);
    tls_conn t;
    tls_conn_init(&t);
    tls_peer p;
    tls_peer_open(&p, server);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);

    CHECK(tls_conn_open(&t, ctx) == 0);
    CHECK(!tls_conn_hello_sent(&t));
    /* gone before the hello left: nothing recorded, the connect failed */
    CHECK(tls_conn_lost_in_handshake(&t, 1) == 0);
    CHECK(t.failure == TLS_FAIL_NONE);
    CHECK(tls_conn_send(&t, sv[0], 1000) == 1);
    CHECK_EQ_U64(t.hello_sent_ns, 1000);

    char plain[4096];
    size_t len = 0;
    int ended = 0, ends = 0;
    tls_status st = TLS_AGAIN;
    for (int round = 0; round < 8 && !t.handshake_done; round++) {
        peer_take_socket(&p, sv[1]);
        tls_peer_step(&p, NULL, 0, NULL);
        size_t n;
        unsigned char *out = tls_peer_output(&p, &n);
        if (n) {
            const char *fenced = fenced_end((const char *)out, n);
            st = tls_conn_receive(&t, fenced, n, plain, sizeof(plain), &len, &ended);
            CHECK(t.in_len == 0);
            ends += ended;
        }
        free(out);
        CHECK(st == TLS_AGAIN);
        CHECK(tls_conn_send(&t, sv[0], 2000 + (uint64_t)round) >= 0);
    }
    CHECK(t.handshake_done);
    CHECK(ends == 1);
    CHECK_EQ_U64(t.hello_sent_ns, 1000); /* later flights do not move it */

    /* after the handshake: plaintext, and no second end */
    peer_take_socket(&p, sv[1]);
    tls_peer_step(&p, NULL, 0, NULL);
    CHECK(SSL_write(p.ssl, "hello", 5) == 5);
    size_t n;
    unsigned char *out = tls_peer_output(&p, &n);
    st = tls_conn_receive(&t, fenced_start((const char *)out, n), n, plain, sizeof(plain), &len, &ended);
    free(out);
    CHECK(st == TLS_AGAIN);
    CHECK(!ended);
    CHECK_EQ_U64(len, 5);
    CHECK(memcmp(plain, "hello", 5) == 0);

    /* the client's goodbye: a close_notify the server reads as the end */
    tls_conn_say_goodbye(&t, sv[0], 3000);
    peer_take_socket(&p, sv[1]);
    char sink[16];
    size_t got;
    CHECK(SSL_read_ex(p.ssl, sink, sizeof(sink), &got) == 0);
    CHECK(SSL_get_error(p.ssl, 0) == SSL_ERROR_ZERO_RETURN);
    ERR_clear_error();
    tls_peer_close(&p);
    tls_conn_close(&t);

    /* gone after the hello left: a handshake failure with the reason */
    tls_peer_open(&p, server);
    CHECK(tls_conn_open(&t, ctx) == 0);
    CHECK(tls_conn_send(&t, sv[0], 4000) == 1);
    CHECK(tls_conn_lost_in_handshake(&t, 0) == 1);
    CHECK(t.failure == TLS_FAIL_HANDSHAKE);
    CHECK(strstr(t.reason, "closed the connection during the handshake") != NULL);
    /* no goodbye after a failure: nothing more is sent */
    peer_take_socket(&p, sv[1]);
    tls_conn_say_goodbye(&t, sv[0], 5000);
    CHECK(recv(sv[1], sink, sizeof(sink), MSG_DONTWAIT) < 0);
    tls_conn_close(&t);
    tls_conn_open(&t, ctx);
    tls_conn_send(&t, sv[0], 6000);
    CHECK(tls_conn_lost_in_handshake(&t, 1) == 1);
    CHECK(strstr(t.reason, "reset the connection during the handshake") != NULL);

    close(sv[0]);
    close(sv[1]);
    tls_peer_close(&p);
    tls_conn_free(&t);
    SSL_CTX_free(server);
    tls_context_free(ctx);
}

int main(void) {
    fenced_init();
    tls_peer_identity_make(&identity);
    test_tls13_and_resumption();
    test_tls12();
    test_verification();
    test_alpn();
    test_not_tls();
    test_close_and_corruption();
    test_send();
    test_connection_helpers();
    tls_peer_identity_free(&identity);
    return check_report("tls");
}
