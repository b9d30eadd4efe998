/*
 * test_ws_frame.c - the WebSocket frames the engine writes and the reader
 * of a server's frames (ws_frame.h).
 *
 * Writing: every length form (7-bit, 16-bit, 64-bit) and the mask, read
 * back as a server unmasks them. Reading: a stream of every kind of
 * message (a fragmented one with a ping between its fragments, binary,
 * multi-byte UTF-8, a close) is fed whole, a byte at a time, and cut at
 * every pair of points, each piece placed against an unreadable page
 * (fenced_bytes.h), and must come out as the same messages every time.
 * Each malformed frame the RFC names fails the reader with its close
 * code; UTF-8 and close payloads are checked against their edge cases.
 */
#define FENCED_BYTES_MAX (256 * 1024) /* the stream with its 70 KB message */
#include "check.h"
#include "fenced_bytes.h"
#include "ws_frame.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A server frame: unmasked, FIN as fin. */
static size_t server_frame(uint8_t *out, int op, int fin, const void *payload, size_t len) {
    size_t n = 0;
    out[n++] = (uint8_t)((fin ? 0x80 : 0) | op);
    if (len <= 125) {
        out[n++] = (uint8_t)len;
    } else if (len <= 65535) {
        out[n++] = 126;
        out[n++] = (uint8_t)(len >> 8);
        out[n++] = (uint8_t)len;
    } else {
        out[n++] = 127;
        for (int s = 56; s >= 0; s -= 8) out[n++] = (uint8_t)((uint64_t)len >> s);
    }
    memcpy(out + n, payload, len);
    return n + len;
}

/* --- writing --------------------------------------------------------------- */

static void test_encode_lengths(void) {
    static uint8_t payload[70000], out[70100];
    for (size_t i = 0; i < sizeof(payload); i++) payload[i] = (uint8_t)(i * 31 + 7);
    const size_t lengths[] = {0, 1, 125, 126, 127, 65535, 65536, 70000};
    for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
        size_t len = lengths[k];
        size_t n = ws_frame_encode(out, sizeof(out), WS_OP_BINARY, 1, 0xA1B2C3D4u, payload, len);
        CHECK_EQ_U64(n, ws_frame_size(len));
        CHECK(out[0] == 0x82);
        CHECK(out[1] & 0x80); /* masked */
        size_t header = len <= 125 ? 6 : len <= 65535 ? 8 : 14;
        CHECK_EQ_U64(n, header + len);
        const uint8_t *key = out + header - 4;
        CHECK(key[0] == 0xA1 && key[1] == 0xB2 && key[2] == 0xC3 && key[3] == 0xD4);
        uint8_t *body = out + header;
        ws_mask(body, len, key);
        CHECK(len == 0 || memcmp(body, payload, len) == 0);
    }
    /* too small a buffer, or a control frame too long or fragmented */
    CHECK(ws_frame_encode(out, 10, WS_OP_TEXT, 1, 1, payload, 10) == 0);
    CHECK(ws_frame_encode(out, sizeof(out), WS_OP_PING, 1, 1, payload, 126) == 0);
    CHECK(ws_frame_encode(out, sizeof(out), WS_OP_CLOSE, 0, 1, payload, 2) == 0);
    CHECK(ws_frame_encode(out, sizeof(out), WS_OP_PING, 1, 1, payload, 125) == 131);
}

static void test_mask_odd_lengths(void) {
    const uint8_t key[4] = {1, 2, 3, 4};
    uint8_t data[37], copy[37];
    for (size_t len = 0; len <= sizeof(data); len++) {
        for (size_t i = 0; i < len; i++) data[i] = copy[i] = (uint8_t)(i + 100);
        ws_mask(data, len, key);
        for (size_t i = 0; i < len; i++) CHECK(data[i] == (uint8_t)(copy[i] ^ key[i % 4]));
        ws_mask(data, len, key);
        CHECK(len == 0 || memcmp(data, copy, len) == 0);
    }
}

/* --- headers --------------------------------------------------------------- */

static int header(const uint8_t *bytes, size_t len, int *code, const char **why) {
    ws_frame_header h;
    return ws_frame_header_parse((const uint8_t *)fenced_end((const char *)bytes, len), len, &h, code, why);
}

static void test_header_errors(void) {
    int code;
    const char *why;
    struct { uint8_t bytes[10]; size_t len; int expect; const char *says; } cases[] = {
        {{0x81, 0x05}, 2, 1, NULL},
        {{0x81}, 1, 0, NULL},
        {{0x81, 126, 0}, 3, 0, NULL},
        {{0x82, 127, 0, 0, 0, 0, 0, 1, 0}, 9, 0, NULL},
        {{0xC1, 0x00}, 2, -1, "reserved bits"},
        {{0xA1, 0x00}, 2, -1, "reserved bits"},
        {{0x83, 0x00}, 2, -1, "reserved opcode"},
        {{0x8B, 0x00}, 2, -1, "reserved opcode"},
        {{0x81, 0x81, 1, 2, 3, 4}, 6, -1, "masked"},
        {{0x81, 126, 0, 125}, 4, -1, "shortest form"},
        {{0x81, 127, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF}, 10, -1, "shortest form"},
        {{0x81, 127, 0x80, 0, 0, 0, 0, 1, 0, 0}, 10, -1, "top bit"},
        {{0x89, 126, 0, 200}, 4, -1, "longer than 125"},
        {{0x09, 0x00}, 2, -1, "fragmented control"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        why = NULL;
        int r = header(cases[i].bytes, cases[i].len, &code, &why);
        CHECK(r == cases[i].expect);
        if (cases[i].says) {
            CHECK(why && strstr(why, cases[i].says));
            CHECK(code == WS_CLOSE_PROTOCOL_ERROR);
        }
    }
}

/* --- UTF-8 and close payloads ------------------------------------------------ */

static int utf8(const char *s, size_t n) {
    return ws_utf8_valid((const uint8_t *)fenced_end(s, n), n);
}

static void test_utf8(void) {
    CHECK(utf8("", 0));
    CHECK(utf8("plain ascii, long enough for the eight-byte path", 48));
    CHECK(utf8("\xC3\xA9t\xC3\xA9", 6));                 /* été */
    CHECK(utf8("\xE2\x82\xAC", 3));                      /* € */
    CHECK(utf8("\xF0\x9F\x98\x80", 4));                  /* U+1F600 */
    CHECK(utf8("\xF4\x8F\xBF\xBF", 4));                  /* U+10FFFF */
    CHECK(utf8("abcdefg\xC3\xA9", 9));                   /* after an ASCII run */
    CHECK(!utf8("\xC3", 1));                             /* truncated */
    CHECK(!utf8("\xE2\x82", 2));
    CHECK(!utf8("\xC0\x80", 2));                         /* overlong */
    CHECK(!utf8("\xC1\xBF", 2));
    CHECK(!utf8("\xE0\x80\x80", 3));
    CHECK(!utf8("\xF0\x80\x80\x80", 4));
    CHECK(!utf8("\xED\xA0\x80", 3));                     /* a surrogate */
    CHECK(!utf8("\xF4\x90\x80\x80", 4));                 /* above U+10FFFF */
    CHECK(!utf8("\xF5\x80\x80\x80", 4));
    CHECK(!utf8("\x80", 1));                             /* a continuation first */
    CHECK(!utf8("\xC3\x28", 2));
}

static void test_close_payloads(void) {
    int code;
    const uint8_t *reason;
    size_t reason_len;
    const char *why;
    CHECK(ws_close_parse((const uint8_t *)"", 0, &code, &reason, &reason_len, &why) == 0);
    CHECK(code == WS_CLOSE_NO_STATUS && reason_len == 0);
    CHECK(ws_close_parse((const uint8_t *)"\x03", 1, &code, &reason, &reason_len, &why) == -1);
    CHECK(ws_close_parse((const uint8_t *)"\x03\xE8" "bye", 5, &code, &reason, &reason_len, &why) == 0);
    CHECK(code == 1000 && reason_len == 3 && memcmp(reason, "bye", 3) == 0);
    const int valid[] = {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4999};
    const int invalid[] = {0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535};
    for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
        uint8_t p[2] = {(uint8_t)(valid[i] >> 8), (uint8_t)valid[i]};
        CHECK(ws_close_parse(p, 2, &code, &reason, &reason_len, &why) == 0 && code == valid[i]);
    }
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        uint8_t p[2] = {(uint8_t)(invalid[i] >> 8), (uint8_t)invalid[i]};
        CHECK(ws_close_parse(p, 2, &code, &reason, &reason_len, &why) == -1);
    }
    CHECK(ws_close_parse((const uint8_t *)"\x03\xE8\xC3", 3, &code, &reason, &reason_len, &why) == -1);
    CHECK(strstr(why, "UTF-8") != NULL);
}

/* --- the reader -------------------------------------------------------------- */

#define MAX_SEEN 16

typedef struct {
    int ops[MAX_SEEN];
    size_t lens[MAX_SEEN];
    int frames[MAX_SEEN];
    uint64_t hashes[MAX_SEEN];
    int n;
    int stop_after; /* 0: never */
} seen;

static int collect(void *ctx, const ws_message *m) {
    seen *s = ctx;
    if (s->n < MAX_SEEN) {
        uint64_t h = 1469598103934665603ULL;
        for (size_t i = 0; i < m->len; i++) h = (h ^ m->data[i]) * 1099511628211ULL;
        s->ops[s->n] = m->opcode;
        s->lens[s->n] = m->len;
        s->frames[s->n] = m->frames;
        s->hashes[s->n] = h;
    }
    s->n++;
    return s->stop_after && s->n >= s->stop_after;
}

static uint8_t stream[200000];
static size_t stream_len;
static uint8_t big[70000];

/* Every kind of message, and every length form. */
static void build_stream(void) {
    size_t n = 0;
    n += server_frame(stream + n, WS_OP_TEXT, 1, "hello", 5);
    n += server_frame(stream + n, WS_OP_TEXT, 0, "frag", 4);
    n += server_frame(stream + n, WS_OP_PING, 1, "ping!", 5);
    n += server_frame(stream + n, WS_OP_CONTINUATION, 0, "men\xC3", 4); /* UTF-8 split across fragments */
    n += server_frame(stream + n, WS_OP_CONTINUATION, 1, "\xA9ted", 4);
    n += server_frame(stream + n, WS_OP_BINARY, 1, "\x00\x01\xFF", 3);
    for (size_t i = 0; i < 300; i++) big[i] = (uint8_t)('a' + i % 26);
    n += server_frame(stream + n, WS_OP_TEXT, 1, big, 300);
    for (size_t i = 0; i < sizeof(big); i++) big[i] = (uint8_t)i;
    n += server_frame(stream + n, WS_OP_BINARY, 1, big, sizeof(big));
    n += server_frame(stream + n, WS_OP_PONG, 1, "", 0);
    n += server_frame(stream + n, WS_OP_CLOSE, 1, "\x03\xE8", 2);
    stream_len = n;
}

/* Feeds stream cut at a and b (a <= b), each piece fenced. */
static ws_read_status feed_cut(ws_reader *r, seen *s, size_t a, size_t b) {
    size_t cuts[4] = {0, a, b, stream_len};
    ws_read_status st = WS_READ_OK;
    for (int i = 0; i < 3 && st == WS_READ_OK; i++) {
        size_t len = cuts[i + 1] - cuts[i];
        const char *piece = (i & 1) ? fenced_start((const char *)stream + cuts[i], len)
                                    : fenced_end((const char *)stream + cuts[i], len);
        st = ws_reader_feed(r, (const uint8_t *)piece, len, collect, s);
    }
    return st;
}

static void check_messages(const seen *s, const seen *want) {
    CHECK(s->n == want->n);
    for (int i = 0; i < want->n && i < s->n && i < MAX_SEEN; i++) {
        CHECK(s->ops[i] == want->ops[i]);
        CHECK_EQ_U64(s->lens[i], want->lens[i]);
        CHECK(s->hashes[i] == want->hashes[i]);
        CHECK(s->frames[i] == want->frames[i]);
    }
}

static void test_reader_splits(void) {
    build_stream();
    ws_reader r;
    seen whole = {0};
    ws_reader_init(&r, 1 << 20);
    CHECK(feed_cut(&r, &whole, stream_len, stream_len) == WS_READ_OK);
    CHECK(!ws_reader_midway(&r));
    ws_reader_free(&r);
    CHECK(whole.n == 8);
    CHECK(whole.ops[0] == WS_OP_TEXT && whole.lens[0] == 5);
    CHECK(whole.ops[1] == WS_OP_PING); /* between the fragments, handed back at once */
    CHECK(whole.ops[2] == WS_OP_TEXT && whole.lens[2] == 12 && whole.frames[2] == 3);
    CHECK(whole.ops[3] == WS_OP_BINARY && whole.lens[3] == 3);
    CHECK(whole.ops[5] == WS_OP_BINARY && whole.lens[5] == sizeof(big));
    CHECK(whole.ops[6] == WS_OP_PONG && whole.lens[6] == 0);
    CHECK(whole.ops[7] == WS_OP_CLOSE);

    /* a byte at a time */
    seen bytes = {0};
    ws_reader_init(&r, 1 << 20);
    ws_read_status st = WS_READ_OK;
    for (size_t i = 0; i < stream_len && st == WS_READ_OK; i++)
        st = ws_reader_feed(&r, (const uint8_t *)fenced_end((const char *)stream + i, 1), 1, collect, &bytes);
    CHECK(st == WS_READ_OK);
    ws_reader_free(&r);
    check_messages(&bytes, &whole);

    /* every pair of cuts in the small frames' part, and some in the big one */
    size_t small_end = 60;
    int failures = 0;
    for (size_t a = 0; a <= small_end; a++) {
        for (size_t b = a; b <= small_end; b++) {
            seen s = {0};
            ws_reader_init(&r, 1 << 20);
            if (feed_cut(&r, &s, a, b) != WS_READ_OK || s.n != whole.n) failures++;
            else check_messages(&s, &whole);
            ws_reader_free(&r);
        }
    }
    for (size_t a = small_end; a < stream_len; a += 4099) {
        seen s = {0};
        ws_reader_init(&r, 1 << 20);
        if (feed_cut(&r, &s, a, a + (stream_len - a) / 2) != WS_READ_OK) failures++;
        else check_messages(&s, &whole);
        ws_reader_free(&r);
    }
    CHECK(failures == 0);
}

static void test_reader_stop_and_memory(void) {
    build_stream();
    ws_reader r;
    ws_reader_init(&r, 1 << 20);
    seen s = {0};
    s.stop_after = 2;
    CHECK(ws_reader_feed(&r, stream, stream_len, collect, &s) == WS_READ_STOPPED);
    CHECK(s.n == 2);
    ws_reader_free(&r);

    /* a large frame carried across reads: its buffer goes once drained */
    ws_reader_init(&r, 1 << 20);
    static uint8_t frame[70100];
    size_t n = server_frame(frame, WS_OP_BINARY, 1, big, sizeof(big));
    seen t = {0};
    CHECK(ws_reader_feed(&r, frame, 1000, collect, &t) == WS_READ_OK);
    CHECK(ws_reader_midway(&r));
    CHECK(ws_reader_feed(&r, frame + 1000, n - 1000, collect, &t) == WS_READ_OK);
    CHECK(t.n == 1 && t.lens[0] == sizeof(big));
    CHECK(r.carry == NULL && r.carry_cap == 0);
    CHECK(!ws_reader_midway(&r));
    ws_reader_free(&r);
}

/* One malformed stream: the reader's status, code and reason. */
static void expect_error(const uint8_t *bytes, size_t len, size_t max, int code, const char *says) {
    ws_reader r;
    ws_reader_init(&r, max);
    seen s = {0};
    ws_read_status st = ws_reader_feed(&r, (const uint8_t *)fenced_end((const char *)bytes, len), len, collect, &s);
    CHECK(st == WS_READ_ERROR);
    CHECK(r.close_code == code);
    CHECK(r.error && strstr(r.error, says));
    if (!(r.error && strstr(r.error, says))) fprintf(stderr, "  got: %s\n", r.error ? r.error : "(none)");
    /* sticky */
    CHECK(ws_reader_feed(&r, (const uint8_t *)"\x81\x00", 2, collect, &s) == WS_READ_ERROR);
    ws_reader_free(&r);
}

static void test_reader_errors(void) {
    uint8_t b[300];
    size_t n;
    n = server_frame(b, WS_OP_CONTINUATION, 1, "x", 1);
    expect_error(b, n, 1024, WS_CLOSE_PROTOCOL_ERROR, "continuation frame without");
    n = server_frame(b, WS_OP_TEXT, 0, "a", 1);
    n += server_frame(b + n, WS_OP_TEXT, 1, "b", 1);
    expect_error(b, n, 1024, WS_CLOSE_PROTOCOL_ERROR, "new message inside");
    n = server_frame(b, WS_OP_TEXT, 1, "\xC3\x28", 2);
    expect_error(b, n, 1024, WS_CLOSE_INVALID_DATA, "not UTF-8");
    n = server_frame(b, WS_OP_TEXT, 0, "\xC3", 1);
    n += server_frame(b + n, WS_OP_CONTINUATION, 1, "x", 1);
    expect_error(b, n, 1024, WS_CLOSE_INVALID_DATA, "not UTF-8");
    uint8_t z[150];
    memset(z, 'z', sizeof(z));
    n = server_frame(b, WS_OP_BINARY, 1, z, 150);
    expect_error(b, n, 100, WS_CLOSE_TOO_BIG, "larger than");
    n = server_frame(b, WS_OP_BINARY, 0, z, 60);
    n += server_frame(b + n, WS_OP_CONTINUATION, 1, z, 60);
    expect_error(b, n, 100, WS_CLOSE_TOO_BIG, "larger than");
    const uint8_t masked[] = {0x81, 0x81, 0, 0, 0, 0, 'x'};
    expect_error(masked, sizeof(masked), 1024, WS_CLOSE_PROTOCOL_ERROR, "masked");
    /* binary may be anything */
    ws_reader r;
    ws_reader_init(&r, 1024);
    seen s = {0};
    n = server_frame(b, WS_OP_BINARY, 1, "\xC3\x28", 2);
    CHECK(ws_reader_feed(&r, b, n, collect, &s) == WS_READ_OK && s.n == 1);
    ws_reader_free(&r);
}

int main(void) {
    fenced_init();
    test_encode_lengths();
    test_mask_odd_lengths();
    test_header_errors();
    test_utf8();
    test_close_payloads();
    test_reader_splits();
    test_reader_stop_and_memory();
    test_reader_errors();
    return check_report("ws_frame");
}
