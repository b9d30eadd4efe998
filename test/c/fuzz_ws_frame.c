/*
 * fuzz_ws_frame.c - libFuzzer target for what a WebSocket server sends the
 * engine: its frames (ws_frame.h's reader), its answer to the Upgrade
 * (ws_handshake.h), Action Cable's messages (cable.h) and the engine's
 * bodies inside them (ws_payload.h).
 *
 * Input layout: byte 0 picks the target (bits 0-1: 0 and 1 the frame
 * reader, 2 the handshake check, 3 a Cable message) and the split (bits
 * 2-3, as fuzz_split.h: whole, byte by byte, fixed pieces, random sizes);
 * byte 1 seeds the split; the rest is what the server sent. Any broken
 * invariant aborts:
 *   - the reader gives the same messages and the same verdict (and close
 *     code) fed whole as fed split: how bytes arrive changes nothing;
 *   - every message is at most max_message_bytes; a control frame at most
 *     125 bytes; a text message is UTF-8; a close frame's status follows;
 *   - the reader's buffers stay within twice the largest frame it accepts;
 *   - a handshake answer found whole keeps its verdict and header length
 *     when more bytes follow it, and its header length is within the bytes;
 *   - a Cable message's value and reason lie inside the message.
 * Every piece is placed against an unreadable page (fenced_bytes.h), so a
 * read outside it faults.
 *
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined ... (see Rakefile)
 */
#define FENCED_BYTES_MAX (128 * 1024)
#include "cable.h"
#include "fenced_bytes.h"
#include "fuzz_split.h"
#include "ws_frame.h"
#include "ws_handshake.h"
#include "ws_payload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MESSAGE 4096
#define MAX_SEEN 256

static void check(int ok) {
    if (!ok) abort();
}

typedef struct {
    int ops[MAX_SEEN];
    size_t lens[MAX_SEEN];
    uint64_t hashes[MAX_SEEN];
    int n;
} seen;

static int collect(void *ctx, const ws_message *m) {
    seen *s = ctx;
    check(m->len <= MAX_MESSAGE);
    if (m->opcode >= WS_OP_CLOSE) check(m->len <= WS_MAX_CONTROL_PAYLOAD);
    if (m->opcode == WS_OP_TEXT) check(ws_utf8_valid(m->data, m->len));
    if (m->opcode == WS_OP_CLOSE) {
        int code;
        const uint8_t *reason;
        size_t reason_len;
        const char *why;
        if (ws_close_parse(m->data, m->len, &code, &reason, &reason_len, &why) == 0)
            check(reason_len <= m->len && (m->len == 0 || reason == m->data + 2));
    }
    uint64_t seq, t;
    ws_payload_find(m->data, m->len, &seq, &t);
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < m->len; i++) h = (h ^ m->data[i]) * 1099511628211ULL;
    if (s->n < MAX_SEEN) {
        s->ops[s->n] = m->opcode;
        s->lens[s->n] = m->len;
        s->hashes[s->n] = h;
    }
    s->n++;
    return 0;
}

/* Feeds the stream in pieces from sp; returns the verdict. */
static ws_read_status read_stream(const uint8_t *data, size_t len, splitter sp, seen *s, int *close_code) {
    ws_reader r;
    ws_reader_init(&r, MAX_MESSAGE);
    ws_read_status st = WS_READ_OK;
    size_t off = 0;
    int placement = 0;
    while (off < len && st == WS_READ_OK) {
        size_t n = next_piece(&sp, len - off);
        if (n == 0 && sp.mode != 3) n = 1;
        const char *piece = (placement++ & 1) ? fenced_start((const char *)data + off, n)
                                              : fenced_end((const char *)data + off, n);
        st = ws_reader_feed(&r, (const uint8_t *)piece, n, collect, s);
        off += n;
        check(r.carry_cap <= 2 * (MAX_MESSAGE + WS_MAX_HEADER_BYTES) + 256);
        check(r.msg_cap <= 2 * MAX_MESSAGE + 256);
    }
    *close_code = st == WS_READ_ERROR ? r.close_code : 0;
    ws_reader_free(&r);
    return st;
}

static void fuzz_reader(const uint8_t *data, size_t len, splitter sp) {
    seen whole = {0}, split = {0};
    int code_whole, code_split;
    splitter all = {.mode = 0};
    ws_read_status a = read_stream(data, len, all, &whole, &code_whole);
    ws_read_status b = read_stream(data, len, sp, &split, &code_split);
    check(a == b && code_whole == code_split);
    check(whole.n == split.n);
    for (int i = 0; i < whole.n && i < MAX_SEEN; i++)
        check(whole.ops[i] == split.ops[i] && whole.lens[i] == split.lens[i] && whole.hashes[i] == split.hashes[i]);
}

static void fuzz_handshake(const uint8_t *data, size_t len) {
    static const char accept[] = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
    ws_handshake_result res;
    const char *answer = fenced_end((const char *)data, len);
    int r = ws_handshake_check(answer, len, accept, (len & 1) ? "actioncable-v1-json" : NULL, &res);
    if (r == 1) {
        check(res.header_bytes <= len && res.header_bytes > 0 && res.status == 101);
        /* Frames after it change nothing. */
        static char longer[FENCED_BYTES_MAX];
        if (len + 3 <= sizeof(longer)) {
            memcpy(longer, data, len);
            memcpy(longer + len, "\x81\x01x", 3);
            ws_handshake_result again;
            const char *more = fenced_start(longer, len + 3);
            check(ws_handshake_check(more, len + 3, accept, (len & 1) ? "actioncable-v1-json" : NULL, &again) == 1);
            check(again.header_bytes == res.header_bytes);
        }
    } else if (r == -1) {
        check(res.failure != WS_HS_OK && res.reason[0]);
    }
}

static void fuzz_cable(const uint8_t *data, size_t len) {
    const uint8_t *msg = (const uint8_t *)fenced_end((const char *)data, len);
    cable_frame f;
    cable_read(msg, len, &f);
    if (f.value) check(f.value >= msg && f.value + f.value_len <= msg + len);
    if (f.reason) check(f.reason >= msg && f.reason + f.reason_len <= msg + len);
    uint64_t seq, t;
    ws_payload_find(msg, len, &seq, &t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready;
    if (!ready) {
        fenced_init();
        ready = 1;
    }
    if (size < 2 || size - 2 > FENCED_BYTES_MAX) return 0;
    splitter sp = {.mode = (data[0] >> 2) & 3, .state = data[1], .fixed = (size_t)data[1] % 32 + 1};
    const uint8_t *stream = data + 2;
    size_t len = size - 2;
    switch (data[0] & 3) {
    case 0:
    case 1: fuzz_reader(stream, len, sp); break;
    case 2: fuzz_handshake(stream, len); break;
    default: fuzz_cable(stream, len); break;
    }
    return 0;
}
