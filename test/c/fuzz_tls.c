/*
 * fuzz_tls.c - libFuzzer target for the read path of the engine's TLS
 * client (tls.h): what a server sends, fed through tls_conn_feed and read
 * back with tls_conn_handshake and tls_conn_read.
 *
 * Input layout: byte 0 picks the mode and the split, byte 1 seeds the
 * split pattern:
 *   bit 0 of byte 0: 0 "handshake": the rest of the input is the server's
 *                    answer to our ClientHello, raw (bytes no server
 *                    would send, cut anywhere);
 *                    1 "established": a real handshake with an OpenSSL
 *                    server first (tls_peer.h), then the server sends
 *                    the input's plaintext as records, which are damaged
 *                    as bytes 2-5 say before the client reads them
 *   bits 1-2:        split (fuzz_split.h): 0 whole, 1 one byte at a time,
 *                    2 fixed pieces of (byte 1 + 1) bytes, 3 pseudo-random
 *                    piece sizes
 *   bit 3:           the client requires ALPN h2
 * Established mode: byte 2 + 1 is the plaintext bytes per record; byte 3
 * the damage (0 none, 1 a byte flipped, 2 cut short, 3 close_notify
 * after the data, 4 garbage inserted, 5 a record replayed); bytes 4-5 an
 * offset into the ciphertext; the plaintext follows from byte 6.
 *
 * Broken invariants abort:
 *   - after every piece, every fed byte was taken (in_len == 0), whatever
 *     the status (tls.h's feed contract: the buffer is the caller's again);
 *   - a failure is sticky, has a kind in range and a non-empty reason;
 *   - the plaintext read is a prefix of what the server sent, never more
 *     (AEAD: a damaged record is never delivered), and all of it when
 *     nothing was damaged; TLS_CLOSED only after a close_notify.
 * Every piece lies against a PROT_NONE page (fenced_bytes.h), alternately
 * ending right before one and starting right after one, so reading one
 * byte outside what was fed faults. Reads go through tls_conn_read_all,
 * as the engine's connections read.
 *
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined ... (see Rakefile)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A damaged stream of small records is many times its plaintext. */
#define FENCED_BYTES_MAX (1024 * 1024)
#include "fenced_bytes.h"
#include "fuzz_split.h"
#include "tls.h"
#include "tls_peer.h"

#define MAX_PLAIN (64 * 1024)

static void check(int ok) {
    if (!ok) abort();
}

static int ready;
static tls_peer_identity identity;
static SSL_CTX *server_ctx;
static tls_context *client_plain, *client_h2;
static tls_conn conn; /* kept across inputs: its session makes later handshakes short */

static void setup(void) {
    fenced_init();
    tls_peer_identity_make(&identity);
    server_ctx = tls_peer_ctx(&identity, 0, PEER_ALPN_H2);
    char err[256];
    tls_options o = {.verify = 0, .alpn = "http/1.1", .resume = 1, .host = "127.0.0.1"};
    client_plain = tls_context_new(&o, err, sizeof(err));
    o.alpn = "h2";
    o.require_alpn = 1;
    client_h2 = tls_context_new(&o, err, sizeof(err));
    check(client_plain && client_h2);
    tls_conn_init(&conn);
    /* The certificate file is not needed past here (verify is off). */
    unlink(identity.cert_path);
    ready = 1;
}

static const unsigned char *place(const unsigned char *s, size_t n, int at_end) {
    check(n <= FENCED_BYTES_MAX);
    return (const unsigned char *)(at_end ? fenced_end((const char *)s, n) : fenced_start((const char *)s, n));
}

/* What the client made of a byte stream. */
typedef struct {
    unsigned char plain[MAX_PLAIN];
    size_t plain_len;
    tls_status last;
} reading;

/* Feeds stream to conn split by sp, running the handshake (while not
 * done) and then reads, checking the invariants after every piece. */
static void feed_all(const unsigned char *stream, size_t len, splitter sp, reading *r) {
    size_t pos = 0;
    int placements = 0;
    r->last = TLS_AGAIN;
    while (pos < len) {
        size_t n = next_piece(&sp, len - pos);
        tls_conn_feed(&conn, place(stream + pos, n, ++placements & 1), n);
        pos += n;
        tls_status st = TLS_AGAIN;
        if (!conn.handshake_done) st = tls_conn_handshake(&conn);
        if (conn.handshake_done && st != TLS_FAILED) {
            /* One byte of room more than the server can send: a full
             * buffer would be a failure of its own. */
            static unsigned char batch[MAX_PLAIN + 1];
            size_t got = 0;
            st = tls_conn_read_all(&conn, batch, sizeof(batch), &got);
            check(st != TLS_OK);
            check(r->plain_len + got <= MAX_PLAIN); /* never more than the server sent (checked later) */
            memcpy(r->plain + r->plain_len, batch, got);
            r->plain_len += got;
        }
        check(conn.in_len == 0);
        r->last = st;
        if (st == TLS_FAILED) {
            check(conn.failure > TLS_FAIL_NONE && conn.failure < TLS_FAIL_KINDS);
            check(conn.reason[0] != '\0');
            size_t got = 1;
            unsigned char b;
            check(tls_conn_read(&conn, &b, 1, &got) == TLS_FAILED && got == 0);
            check(tls_conn_handshake(&conn) == TLS_FAILED);
            return;
        }
        if (st == TLS_CLOSED) return;
    }
}

/* Runs the handshake with the OpenSSL server to its end (whole pieces). */
static int establish(tls_peer *p, const tls_context *ctx) {
    tls_peer_open(p, server_ctx);
    if (tls_conn_open(&conn, ctx) != 0) return -1;
    for (int round = 0; round < 8 && conn.failure == TLS_FAIL_NONE; round++) {
        tls_peer_take_client_output(p, &conn);
        tls_peer_step(p, NULL, 0, NULL);
        size_t n;
        unsigned char *out = tls_peer_output(p, &n);
        static reading r;
        r.plain_len = 0;
        splitter whole = {.mode = 0};
        if (n) feed_all(out, n, whole, &r);
        free(out);
        check(r.plain_len == 0);
        if (conn.handshake_done && tls_conn_pending(&conn) == 0 && n == 0) return 0;
    }
    return conn.handshake_done ? 0 : -1;
}

static void fuzz_handshake(const uint8_t *data, size_t size, splitter sp, int h2) {
    static reading r;
    r.plain_len = 0;
    check(tls_conn_open(&conn, h2 ? client_h2 : client_plain) == 0);
    feed_all(data, size, sp, &r);
    /* Random bytes never complete a handshake, so never give plaintext. */
    check(r.plain_len == 0);
    tls_conn_close(&conn);
}

static void fuzz_established(const uint8_t *data, size_t size, splitter sp, int h2) {
    if (size < 4) return;
    size_t record = (size_t)data[0] + 1;
    int damage = data[1] % 6;
    size_t offset = (size_t)data[2] | (size_t)data[3] << 8;
    const uint8_t *plain = data + 4;
    size_t plain_len = size - 4;
    if (plain_len > MAX_PLAIN) plain_len = MAX_PLAIN;

    tls_peer p;
    if (establish(&p, h2 ? client_h2 : client_plain) != 0) {
        tls_peer_close(&p);
        tls_conn_close(&conn);
        return;
    }
    for (size_t off = 0; off < plain_len; off += record) {
        size_t n = plain_len - off < record ? plain_len - off : record;
        check(SSL_write(p.ssl, plain + off, (int)n) == (int)n);
    }
    if (damage == 3) SSL_shutdown(p.ssl);
    size_t n;
    unsigned char *cipher = tls_peer_output(&p, &n);
    size_t at = n ? offset % n : 0;
    unsigned char *stream = malloc(n + 64);
    check(stream != NULL);
    size_t len = n;
    memcpy(stream, cipher, n);
    switch (damage) {
    case 1: if (n) stream[at] ^= (unsigned char)(1u << (offset >> 13 & 7)); break;
    case 2: len = at; break;
    case 4:
        memmove(stream + at + 16, stream + at, n - at);
        memcpy(stream + at, plain_len >= 16 ? plain : (const uint8_t *)"garbage-garbage!", 16);
        len = n + 16;
        break;
    case 5:
        /* the first record again at the end: a replay must not be taken */
        if (n >= 5) {
            size_t first = 5 + ((size_t)stream[3] << 8 | stream[4]);
            if (first <= n && first <= 64) {
                memcpy(stream + n, stream, first);
                len = n + first;
            }
        }
        break;
    default: break;
    }
    static reading r;
    r.plain_len = 0;
    feed_all(stream, len, sp, &r);

    check(r.plain_len <= plain_len);
    check(memcmp(r.plain, plain, r.plain_len) == 0);
    if (damage == 0 || damage == 3) {
        check(r.plain_len == plain_len);
        check(r.last == (damage == 3 ? TLS_CLOSED : TLS_AGAIN));
    }
    if (r.last == TLS_CLOSED) check(damage == 3);
    free(stream);
    free(cipher);
    tls_peer_close(&p);
    tls_conn_close(&conn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 2) return 0;
    splitter sp = {.mode = data[0] >> 1 & 3, .state = data[1], .fixed = (size_t)data[1] + 1};
    int h2 = data[0] >> 3 & 1;
    if (data[0] & 1) fuzz_established(data + 2, size - 2, sp, h2);
    else fuzz_handshake(data + 2, size - 2, sp, h2);
    return 0;
}
