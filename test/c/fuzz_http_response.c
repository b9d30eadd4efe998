/*
 * fuzz_http_response.c - libFuzzer target for the response parser.
 *
 * Input layout: byte 0 picks the mode, byte 1 seeds the split pattern, the
 * rest is the byte stream a server sent:
 *   bit 0 of byte 0: head_request
 *   bits 1-2:        split: 0 whole, 1 one byte at a time, 2 fixed pieces of
 *                    (byte 1 + 1) bytes, 3 pseudo-random piece sizes
 * The stream is parsed twice, fed whole and fed split, each as a sequence of
 * pipelined responses (reset after COMPLETE, feed on with the rest), ending
 * with http_response_eof. Any broken invariant aborts:
 *   - consumed <= len; INCOMPLETE consumes everything; COMPLETE consumes at
 *     least one byte (so the pipelining loop always progresses);
 *   - error is set iff the verdict is ERROR; errors are sticky;
 *   - a COMPLETE response is final (not 1xx or 101), has a sane version,
 *     and header_bytes + body_bytes fit in the bytes it consumed;
 *   - on_header names are tokens, values carry no CTL and no edge OWS;
 *   - the split run gives exactly the outcomes of the whole run (the
 *     parser promises a verdict independent of how bytes are split).
 * Every piece is copied next to a PROT_NONE page, alternately ending right
 * before one and starting right after one, so a read even one byte outside
 * [buf, buf + len) faults. (Guard pages rather than an exact-size malloc per
 * piece: per-piece heap blocks fill ASan's quarantine and push the fuzzer's
 * RSS towards its limit.)
 *
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined ... (see Rakefile)
 */
#include "fuzz_split.h"
#include "http_response.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_OUTCOMES 64

typedef struct {
    int status;
    int by_eof;
    size_t end_offset;
    int status_code;
    int http_minor;
    int keep_alive;
    int connection_close;
    uint64_t header_bytes;
    uint64_t body_bytes;
    const char *error;
    uint64_t header_hash; /* of every on_header call, in order */
    size_t header_count;
} outcome;

typedef struct {
    outcome out[MAX_OUTCOMES];
    size_t n;
    size_t dropped; /* outcomes past MAX_OUTCOMES, counted only */
} run_result;

typedef struct {
    uint64_t hash;
    size_t count;
} header_seen;

static void check(int ok)
{
    if (!ok) abort();
}

static int is_ows(unsigned char c) { return c == ' ' || c == '\t'; }

static int is_tchar(unsigned char c)
{
    if (c >= '0' && c <= '9') return 1;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static void on_header(void *ctx, const char *name, size_t name_len,
                      const char *value, size_t value_len)
{
    header_seen *seen = ctx;
    check(name_len > 0);
    uint64_t h = seen->hash ^ 0xcbf29ce484222325u;
    for (size_t i = 0; i < name_len; i++) {
        unsigned char c = (unsigned char)name[i];
        check(is_tchar(c));
        h = (h ^ c) * 0x100000001b3u;
    }
    h = (h ^ 0x100) * 0x100000001b3u; /* separator no byte can produce */
    if (value_len > 0) {
        check(!is_ows((unsigned char)value[0]));
        check(!is_ows((unsigned char)value[value_len - 1]));
    }
    for (size_t i = 0; i < value_len; i++) {
        unsigned char c = (unsigned char)value[i];
        check(c == '\t' || (c >= 0x20 && c != 0x7f));
        h = (h ^ c) * 0x100000001b3u;
    }
    seen->hash = h;
    seen->count++;
}

static http_response parser;
static header_seen seen;

static void start(int head)
{
    seen.hash = 0;
    seen.count = 0;
    http_response_reset(&parser, head, on_header, &seen);
    check(http_response_untouched(&parser));
    check(parser.error == NULL);
}

static void record(run_result *res, int status, int by_eof, size_t end_offset)
{
    if (res->n == MAX_OUTCOMES) {
        res->dropped++;
        return;
    }
    outcome *o = &res->out[res->n++];
    memset(o, 0, sizeof *o);
    o->status = status;
    o->by_eof = by_eof;
    o->error = parser.error;
    if (status == RESP_ERROR) return; /* only the message is meaningful */
    o->end_offset = end_offset;
    o->status_code = parser.status_code;
    o->http_minor = parser.http_minor;
    o->keep_alive = parser.keep_alive;
    o->connection_close = parser.connection_close;
    o->header_bytes = parser.header_bytes;
    o->body_bytes = parser.body_bytes;
    o->header_hash = seen.hash;
    o->header_count = seen.count;
}

/* Checks a COMPLETE response that used stream[begin, end). */
static void check_complete(size_t begin, size_t end)
{
    check(parser.error == NULL);
    check(parser.status_code >= 200 && parser.status_code <= 999);
    check(parser.http_minor >= 0 && parser.http_minor <= 9);
    check(parser.keep_alive == 0 || parser.keep_alive == 1);
    check(parser.connection_close == 0 || parser.connection_close == 1);
    check(!(parser.keep_alive && parser.connection_close));
    check(parser.header_bytes >= 13); /* "HTTP/1.1 200\n" + "\n" at least */
    check(parser.header_bytes + parser.body_bytes <= end - begin);
    if (parser.head_request || parser.status_code == 204 || parser.status_code == 304)
        check(parser.body_bytes == 0);
}

#define GUARDED_BYTES (1024 * 1024) /* well above libFuzzer's -max_len */

static char *guarded; /* GUARDED_BYTES between two PROT_NONE pages */

static void guard_init(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *base = mmap(NULL, page + GUARDED_BYTES + page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    check(base != MAP_FAILED);
    check(mprotect(base, page, PROT_NONE) == 0);
    check(mprotect(base + page + GUARDED_BYTES, page, PROT_NONE) == 0);
    guarded = base + page;
}

/* Copies a piece against a guard page: at_end, ending right before the
 * trailing one, else starting right after the leading one. */
static const char *place(const uint8_t *s, size_t n, int at_end)
{
    check(n <= GUARDED_BYTES);
    char *dst = at_end ? guarded + GUARDED_BYTES - n : guarded;
    if (n > 0) memcpy(dst, s, n);
    return dst;
}


static void run(const uint8_t *stream, size_t len, int head, splitter sp, run_result *res)
{
    size_t placements = 0;
    memset(res, 0, sizeof *res);
    start(head);
    size_t pos = 0;          /* start of the next piece in stream */
    size_t response_at = 0;  /* start of the response in progress */
    int pieces_left_after_end = 1; /* feed one empty piece at the end too */
    while (pos < len || pieces_left_after_end-- > 0) {
        size_t plen = next_piece(&sp, len - pos);
        const char *piece = place(stream + pos, plen, (int)(++placements & 1));
        size_t off = 0;
        do {
            size_t used = (size_t)-1;
            resp_status st = http_response_feed(&parser, piece + off, plen - off, &used);
            check(used <= plen - off);
            check((st == RESP_ERROR) == (parser.error != NULL));
            if (st == RESP_COMPLETE) {
                check(used >= 1);
                size_t end = pos + off + used;
                check_complete(response_at, end);
                record(res, st, 0, end);
                off += used;
                response_at = end;
                start(head);
            } else if (st == RESP_ERROR) {
                check(parser.error[0] != '\0');
                record(res, st, 0, 0);
                size_t again;
                const char *message = parser.error;
                check(http_response_feed(&parser, "HTTP/1.1 200 OK\r\n", 17, &again) ==
                      RESP_ERROR);
                check(http_response_eof(&parser) == RESP_ERROR);
                check(parser.error == message);
                return;
            } else {
                check(st == RESP_INCOMPLETE);
                check(used == plen - off);
                check(!http_response_untouched(&parser) || plen - off == 0);
                off = plen;
            }
        } while (off < plen);
        pos += plen;
    }
    if (http_response_untouched(&parser)) return;
    resp_status st = http_response_eof(&parser);
    check((st == RESP_ERROR) == (parser.error != NULL));
    if (st == RESP_COMPLETE) {
        check_complete(response_at, len);
        check(parser.keep_alive == 0);
    } else {
        check(st == RESP_ERROR);
    }
    record(res, st, 1, 0);
    /* A finished response stays finished. */
    size_t again;
    check(http_response_feed(&parser, "x", 1, &again) == RESP_ERROR);
}

static int same_outcome(const outcome *a, const outcome *b)
{
    if (a->status != b->status || a->by_eof != b->by_eof) return 0;
    if ((a->error == NULL) != (b->error == NULL)) return 0;
    if (a->error != NULL && strcmp(a->error, b->error) != 0) return 0;
    return a->end_offset == b->end_offset && a->status_code == b->status_code &&
           a->http_minor == b->http_minor && a->keep_alive == b->keep_alive &&
           a->connection_close == b->connection_close &&
           a->header_bytes == b->header_bytes && a->body_bytes == b->body_bytes &&
           a->header_hash == b->header_hash && a->header_count == b->header_count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static run_result whole, split;
    if (guarded == NULL) guard_init();
    if (size < 2 || size - 2 > GUARDED_BYTES) return 0;
    int head = data[0] & 1;
    splitter sp = {.mode = data[0] >> 1 & 3, .state = data[1], .fixed = (size_t)data[1] + 1};
    const uint8_t *stream = data + 2;
    size_t len = size - 2;

    splitter one_piece = {.mode = 0};
    run(stream, len, head, one_piece, &whole);
    run(stream, len, head, sp, &split);

    check(whole.n == split.n && whole.dropped == split.dropped);
    for (size_t i = 0; i < whole.n; i++) check(same_outcome(&whole.out[i], &split.out[i]));

    uint64_t body_total = 0;
    for (size_t i = 0; i < whole.n; i++) body_total += whole.out[i].body_bytes;
    check(body_total <= len);
    return 0;
}
