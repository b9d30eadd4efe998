/*
 * test_http_response.c - tests of the incremental HTTP/1.x response parser.
 *
 * Every input goes through run(), which feeds it in pieces and records the
 * outcome of each response in it (pipelining: after COMPLETE the parser is
 * reset and the rest of the piece is fed on). check_case() runs an input
 * fed whole, split in two at every byte position, one byte at a time and
 * in random pieces, and requires the same outcomes every time; expectations
 * are then checked on the whole-feed outcome.
 *
 * Each piece is copied so that it ends right before a PROT_NONE page (and,
 * for the whole input, once more so that it starts right after one), as
 * picohttpparser's tests do: any read outside [buf, buf + len) segfaults.
 */
#include "check.h"
#include "http_response.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- guard pages -------------------------------------------------------- */

#define GUARDED_DATA_BYTES (256 * 1024)

static char *guard_data; /* GUARDED_DATA_BYTES between two PROT_NONE pages */

static void guard_init(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t total = page + GUARDED_DATA_BYTES + page;
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    if (mprotect(base, page, PROT_NONE) != 0 ||
        mprotect(base + page + GUARDED_DATA_BYTES, page, PROT_NONE) != 0) {
        perror("mprotect");
        exit(2);
    }
    guard_data = base + page;
}

/* Copies s[0, n) so that it ends right before the trailing guard page. */
static const char *place_before_guard(const char *s, size_t n)
{
    if (n > GUARDED_DATA_BYTES) abort();
    char *dst = guard_data + GUARDED_DATA_BYTES - n;
    if (n > 0) memcpy(dst, s, n);
    return dst;
}

/* Copies s[0, n) so that it starts right after the leading guard page. */
static const char *place_after_guard(const char *s, size_t n)
{
    if (n > GUARDED_DATA_BYTES) abort();
    if (n > 0) memcpy(guard_data, s, n);
    return guard_data;
}

/* ---- recording outcomes --------------------------------------------------- */

#define MAX_OUTCOMES 8
#define HEADER_LOG_BYTES 2048

typedef struct {
    char log[HEADER_LOG_BYTES]; /* "name=value\n" per on_header call */
    size_t len;
    int overflow;
} header_log;

typedef struct {
    int status;           /* RESP_COMPLETE, RESP_ERROR, or RESP_INCOMPLETE
                             when the input ran out (no eof requested) */
    int by_eof;           /* the verdict came from http_response_eof */
    size_t end_offset;    /* COMPLETE by feed: input offset after it */
    int status_code;
    int http_minor;
    int keep_alive;
    int connection_close;
    uint64_t header_bytes;
    uint64_t body_bytes;
    const char *error;
    header_log headers;
} outcome;

typedef struct {
    outcome out[MAX_OUTCOMES];
    int n;
    int invariant_failures; /* consumed/status contract violations seen */
} run_result;

static void log_header(void *ctx, const char *name, size_t name_len,
                       const char *value, size_t value_len)
{
    header_log *h = ctx;
    if (h->len + name_len + value_len + 2 > sizeof h->log) {
        h->overflow = 1;
        return;
    }
    memcpy(h->log + h->len, name, name_len);
    h->len += name_len;
    h->log[h->len++] = '=';
    memcpy(h->log + h->len, value, value_len);
    h->len += value_len;
    h->log[h->len++] = '\n';
}

static http_response parser; /* static: 8 KB, and reused by every run */
static header_log current_headers;

static void start_response(int head)
{
    memset(&current_headers, 0, sizeof current_headers);
    http_response_reset(&parser, head, log_header, &current_headers);
}

static void record(run_result *res, int status, int by_eof, size_t end_offset)
{
    if (res->n == MAX_OUTCOMES) {
        res->invariant_failures++;
        return;
    }
    outcome *o = &res->out[res->n++];
    memset(o, 0, sizeof *o);
    o->status = status;
    o->by_eof = by_eof;
    o->end_offset = status == RESP_COMPLETE && !by_eof ? end_offset : 0;
    o->status_code = parser.status_code;
    o->http_minor = parser.http_minor;
    o->keep_alive = parser.keep_alive;
    o->connection_close = parser.connection_close;
    o->header_bytes = parser.header_bytes;
    o->body_bytes = parser.body_bytes;
    o->error = parser.error;
    o->headers = current_headers;
    /* Only the verdict and the error are meaningful after ERROR. */
    if (status == RESP_ERROR) {
        o->status_code = o->http_minor = o->keep_alive = o->connection_close = 0;
        o->header_bytes = o->body_bytes = 0;
        memset(&o->headers, 0, sizeof o->headers);
    }
}

/* Feeds in[0, len) in pieces ending at the offsets cuts[0..ncuts) (sorted,
 * each <= len; empty pieces allowed) then one last piece up to len. Each
 * piece is placed against a guard page (after_guard: at its start). At the
 * end, http_response_eof is called when call_eof and the response in
 * progress has been touched. */
static void run(const char *in, size_t len, int head, int call_eof,
                const size_t *cuts, size_t ncuts, int after_guard, run_result *res)
{
    memset(res, 0, sizeof *res);
    start_response(head);
    size_t start = 0;
    for (size_t piece = 0; piece <= ncuts; piece++) {
        size_t stop = piece < ncuts ? cuts[piece] : len;
        size_t plen = stop - start;
        const char *buf = after_guard ? place_after_guard(in + start, plen)
                                      : place_before_guard(in + start, plen);
        size_t off = 0;
        do {
            size_t used = (size_t)-1;
            resp_status st = http_response_feed(&parser, buf + off, plen - off, &used);
            if (used > plen - off) res->invariant_failures++;
            if ((st == RESP_ERROR) != (parser.error != NULL)) res->invariant_failures++;
            if (st == RESP_COMPLETE) {
                record(res, st, 0, start + off + used);
                off += used;
                start_response(head);
            } else if (st == RESP_ERROR) {
                record(res, st, 0, 0);
                /* Fed again, an errored parser keeps saying so. */
                size_t again;
                if (http_response_feed(&parser, "x", 1, &again) != RESP_ERROR)
                    res->invariant_failures++;
                return;
            } else {
                if (used != plen - off) res->invariant_failures++;
                off = plen;
            }
        } while (off < plen);
        start = stop;
    }
    if (http_response_untouched(&parser)) return; /* idle at the end */
    if (call_eof) {
        resp_status st = http_response_eof(&parser);
        if ((st == RESP_ERROR) != (parser.error != NULL)) res->invariant_failures++;
        record(res, st, 1, 0);
    } else {
        record(res, RESP_INCOMPLETE, 0, 0);
    }
}

static int same_error(const char *a, const char *b)
{
    if (a == NULL || b == NULL) return a == b;
    return strcmp(a, b) == 0;
}

static int outcome_equal(const outcome *a, const outcome *b)
{
    return a->status == b->status && a->by_eof == b->by_eof &&
           a->end_offset == b->end_offset && a->status_code == b->status_code &&
           a->http_minor == b->http_minor && a->keep_alive == b->keep_alive &&
           a->connection_close == b->connection_close &&
           a->header_bytes == b->header_bytes && a->body_bytes == b->body_bytes &&
           same_error(a->error, b->error) && a->headers.len == b->headers.len &&
           a->headers.overflow == b->headers.overflow &&
           memcmp(a->headers.log, b->headers.log, a->headers.len) == 0;
}

static int results_equal(const run_result *a, const run_result *b)
{
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (!outcome_equal(&a->out[i], &b->out[i])) return 0;
    return 1;
}

static void describe(const char *label, const run_result *res)
{
    fprintf(stderr, "    %s: %d outcome(s)%s\n", label, res->n,
            res->invariant_failures ? ", INVARIANT FAILURES" : "");
    for (int i = 0; i < res->n; i++) {
        const outcome *o = &res->out[i];
        fprintf(stderr,
                "      [%d] status=%d eof=%d end=%zu code=%d minor=%d ka=%d close=%d "
                "hdr=%llu body=%llu error=%s\n",
                i, o->status, o->by_eof, o->end_offset, o->status_code, o->http_minor,
                o->keep_alive, o->connection_close, (unsigned long long)o->header_bytes,
                (unsigned long long)o->body_bytes, o->error ? o->error : "(null)");
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng_next(void)
{
    /* xorshift64*: deterministic, so failures reproduce. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

static int compare_sizes(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Runs in[0, len) whole (against both guards), split in two at every
 * position, one byte at a time and in 30 random splits; checks they agree
 * and that no run broke the feed contract. Returns the whole-feed result. */
static void check_case(const char *name, const char *in, size_t len, int head,
                       int call_eof, run_result *whole)
{
    static run_result other;
    static size_t cuts[GUARDED_DATA_BYTES];
    int mismatches = 0, invariant_failures = 0;
    const char *first_mode = NULL;

    run(in, len, head, call_eof, NULL, 0, 0, whole);
    invariant_failures += whole->invariant_failures;

#define COMPARE(mode)                                                   \
    do {                                                                \
        invariant_failures += other.invariant_failures;                 \
        if (!results_equal(whole, &other)) {                            \
            if (mismatches++ == 0) {                                    \
                first_mode = (mode);                                    \
                describe("whole", whole);                               \
                describe(mode, &other);                                 \
            }                                                           \
        }                                                               \
    } while (0)

    run(in, len, head, call_eof, NULL, 0, 1, &other);
    COMPARE("whole, after guard");

    for (size_t k = 0; k <= len; k++) {
        cuts[0] = k;
        run(in, len, head, call_eof, cuts, 1, 0, &other);
        if (!results_equal(whole, &other) && mismatches == 0)
            fprintf(stderr, "    split at %zu differs\n", k);
        COMPARE("split in two");
    }

    for (size_t k = 0; k < len; k++) cuts[k] = k + 1;
    run(in, len, head, call_eof, cuts, len > 0 ? len - 1 : 0, 0, &other);
    COMPARE("one byte at a time");

    for (int round = 0; round < 30; round++) {
        size_t n = len == 0 ? 0 : (size_t)(rng_next() % 8);
        for (size_t i = 0; i < n; i++) cuts[i] = (size_t)(rng_next() % (len + 1));
        qsort(cuts, n, sizeof cuts[0], compare_sizes);
        run(in, len, head, call_eof, cuts, n, 0, &other);
        COMPARE("random pieces");
    }
#undef COMPARE

    if (mismatches != 0)
        fprintf(stderr, "%s: %d split runs differ from the whole feed (first: %s)\n",
                name, mismatches, first_mode);
    if (invariant_failures != 0)
        fprintf(stderr, "%s: %d feed contract violations\n", name, invariant_failures);
    CHECK(mismatches == 0);
    CHECK(invariant_failures == 0);
}

/* ---- expectations --------------------------------------------------------- */

#define S(lit) (lit), (sizeof(lit) - 1)

/* One complete response (by feed) and nothing after it. */
static void expect_one(const char *name, const char *in, size_t len, int head,
                       int code, int minor, int keep_alive, uint64_t header_bytes,
                       uint64_t body_bytes)
{
    static run_result res;
    check_case(name, in, len, head, 1, &res);
    CHECK_EQ_U64(res.n, 1);
    const outcome *o = &res.out[0];
    if (o->status != RESP_COMPLETE || o->by_eof)
        fprintf(stderr, "%s: status %d by_eof %d error %s\n", name, o->status,
                o->by_eof, o->error ? o->error : "-");
    CHECK(o->status == RESP_COMPLETE);
    CHECK(!o->by_eof);
    CHECK_EQ_U64(o->end_offset, len);
    CHECK_EQ_U64(o->status_code, code);
    CHECK_EQ_U64(o->http_minor, minor);
    CHECK_EQ_U64(o->keep_alive, keep_alive);
    CHECK_EQ_U64(o->header_bytes, header_bytes);
    CHECK_EQ_U64(o->body_bytes, body_bytes);
    CHECK(o->error == NULL);
}

/* The first response ends in ERROR with this message. */
static void expect_error(const char *name, const char *in, size_t len, int head,
                         const char *message)
{
    static run_result res;
    check_case(name, in, len, head, 1, &res);
    if (res.n < 1) {
        fprintf(stderr, "%s: no outcome\n", name);
        CHECK(res.n >= 1);
        return;
    }
    const outcome *o = &res.out[res.n - 1];
    int ok = o->status == RESP_ERROR && o->error != NULL && strcmp(o->error, message) == 0;
    if (!ok)
        fprintf(stderr, "%s: expected error \"%s\", got status %d error \"%s\"\n",
                name, message, o->status, o->error ? o->error : "(null)");
    CHECK(ok);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_content_length(void)
{
    static const char in[] =
        "HTTP/1.1 200 OK\r\n"
        "Server: nginx/1.24.0\r\n"
        "Content-Type: text/plain\r\n"
        "Content-Length: 12\r\n"
        "\r\n"
        "hello world\n";
    expect_one("content-length", S(in), 0, 200, 1, 1, sizeof(in) - 1 - 12, 12);

    static const char zero[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    expect_one("content-length 0", S(zero), 0, 200, 1, 1, sizeof(zero) - 1, 0);

    static const char no_reason[] = "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx";
    expect_one("no reason phrase", S(no_reason), 0, 200, 1, 1, sizeof(no_reason) - 2, 1);

    static const char empty_reason[] = "HTTP/1.1 404 \r\nContent-Length: 1\r\n\r\nx";
    expect_one("empty reason phrase", S(empty_reason), 0, 404, 1, 1,
               sizeof(empty_reason) - 2, 1);

    static const char bare_lf[] = "HTTP/1.1 200 OK\nContent-Length: 3\n\nabc";
    expect_one("bare LF line ends", S(bare_lf), 0, 200, 1, 1, sizeof(bare_lf) - 4, 3);

    static const char mixed_case[] =
        "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh:    4   \r\n\r\nbody";
    expect_one("case-insensitive Content-Length", S(mixed_case), 0, 200, 1, 1,
               sizeof(mixed_case) - 5, 4);

    static const char repeated[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok";
    expect_one("repeated identical Content-Length", S(repeated), 0, 200, 1, 1,
               sizeof(repeated) - 3, 2);

    static const char listed[] = "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok";
    expect_one("Content-Length list of identical values", S(listed), 0, 200, 1, 1,
               sizeof(listed) - 3, 2);

    static const char obs_text[] =
        "HTTP/1.1 200 D\xc3\xa9j\xc3\xa0 vu\r\nX-Name: caf\xc3\xa9\tau lait\r\n"
        "Content-Length: 1\r\n\r\nx";
    expect_one("obs-text and HTAB in reason and value", S(obs_text), 0, 200, 1, 1,
               sizeof(obs_text) - 2, 1);

    static const char other_version[] = "HTTP/1.7 200 OK\r\nContent-Length: 1\r\n\r\nx";
    expect_one("HTTP/1.7 treated as 1.x", S(other_version), 0, 200, 7, 1,
               sizeof(other_version) - 2, 1);

    /* A large body in many pieces: body_bytes counts every byte once. */
    static char big[40000];
    int h = snprintf(big, sizeof big, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", 30000);
    memset(big + h, 'b', 30000);
    static run_result res;
    static size_t cuts[20];
    for (size_t i = 0; i < 20; i++) cuts[i] = (i + 1) * 1499;
    run(big, (size_t)h + 30000, 0, 1, cuts, 20, 0, &res);
    CHECK_EQ_U64(res.n, 1);
    CHECK(res.out[0].status == RESP_COMPLETE);
    CHECK_EQ_U64(res.out[0].body_bytes, 30000);
    CHECK_EQ_U64(res.out[0].end_offset, (size_t)h + 30000);
}

static void test_no_body(void)
{
    static const char head[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/html\r\n\r\n";
    expect_one("HEAD with Content-Length", S(head), 1, 200, 1, 1, sizeof(head) - 1, 0);

    static const char head_chunked[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    expect_one("HEAD with chunked", S(head_chunked), 1, 200, 1, 1,
               sizeof(head_chunked) - 1, 0);

    static const char no_content[] = "HTTP/1.1 204 No Content\r\nServer: x\r\n\r\n";
    expect_one("204", S(no_content), 0, 204, 1, 1, sizeof(no_content) - 1, 0);

    static const char not_modified[] =
        "HTTP/1.1 304 Not Modified\r\nETag: \"abc\"\r\nContent-Length: 1234\r\n\r\n";
    expect_one("304 with Content-Length", S(not_modified), 0, 304, 1, 1,
               sizeof(not_modified) - 1, 0);

    /* The bytes after a 304 are the next response, not its body. */
    static const char after_304[] =
        "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    static run_result res;
    check_case("304 then 200", S(after_304), 0, 1, &res);
    CHECK_EQ_U64(res.n, 2);
    CHECK_EQ_U64(res.out[0].status_code, 304);
    CHECK_EQ_U64(res.out[0].end_offset, 48);
    CHECK_EQ_U64(res.out[1].status_code, 200);
    CHECK_EQ_U64(res.out[1].body_bytes, 5);
    CHECK_EQ_U64(res.out[1].end_offset, sizeof(after_304) - 1);
}

static void test_chunked(void)
{
    static const char in[] =
        "HTTP/1.1 200 OK\r\n"
        "Transfer-Encoding: chunked\r\n"
        "\r\n"
        "4\r\nWiki\r\n"
        "5;name=value;flag\r\npedia\r\n"
        "E ; spaced=\"quoted ext\"\r\n in\r\n\r\nchunks.\r\n"
        "1a\r\nabcdefghijklmnopqrstuvwxyz\r\n"
        "1A\r\nABCDEFGHIJKLMNOPQRSTUVWXYZ\r\n"
        "000\r\n"
        "Expires: never\r\n"
        "X-Checksum: 1234\r\n"
        "\r\n";
    expect_one("chunked with extensions and trailers", S(in), 0, 200, 1, 1, 47,
               4 + 5 + 14 + 26 + 26);

    static const char minimal[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    expect_one("chunked, empty body", S(minimal), 0, 200, 1, 1, 47, 0);

    static const char bare_lf[] =
        "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n";
    expect_one("chunked with bare LF", S(bare_lf), 0, 200, 1, 1, 44, 3);

    static const char te_list[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, CHUNKED\r\n\r\n2\r\nok\r\n0\r\n\r\n";
    expect_one("Transfer-Encoding gzip, chunked", S(te_list), 0, 200, 1, 1, 53, 2);

    /* Transfer-Encoding wins over Content-Length. */
    static const char te_and_cl[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
        "2\r\nok\r\n0\r\n\r\n";
    expect_one("chunked overrides Content-Length", S(te_and_cl), 0, 200, 1, 1,
               sizeof(te_and_cl) - 1 - 12, 2);

    /* A chunked response followed by a pipelined one. */
    static const char two[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nhi";
    static run_result res;
    check_case("chunked then pipelined", S(two), 0, 1, &res);
    CHECK_EQ_U64(res.n, 2);
    CHECK_EQ_U64(res.out[0].body_bytes, 3);
    CHECK_EQ_U64(res.out[0].end_offset, 60);
    CHECK_EQ_U64(res.out[1].status_code, 201);
    CHECK_EQ_U64(res.out[1].end_offset, sizeof(two) - 1);

    /* Not chunked as last coding: the body runs until close. */
    static const char gzip_only[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabcdef";
    check_case("Transfer-Encoding without chunked", S(gzip_only), 0, 1, &res);
    CHECK_EQ_U64(res.n, 1);
    CHECK(res.out[0].status == RESP_COMPLETE && res.out[0].by_eof);
    CHECK_EQ_U64(res.out[0].body_bytes, 6);
    CHECK_EQ_U64(res.out[0].keep_alive, 0);
}

static void test_until_close(void)
{
    static const char in[] = "HTTP/1.1 200 OK\r\nServer: x\r\n\r\nstreamed until close";
    static run_result res;
    check_case("body until close", S(in), 0, 1, &res);
    CHECK_EQ_U64(res.n, 1);
    CHECK(res.out[0].status == RESP_COMPLETE);
    CHECK(res.out[0].by_eof);
    CHECK_EQ_U64(res.out[0].keep_alive, 0);
    CHECK_EQ_U64(res.out[0].header_bytes, 30);
    CHECK_EQ_U64(res.out[0].body_bytes, 20);

    /* Without eof it stays incomplete: it cannot know the body ended. */
    check_case("body until close, no eof", S(in), 0, 0, &res);
    CHECK_EQ_U64(res.n, 1);
    CHECK(res.out[0].status == RESP_INCOMPLETE);

    static const char empty_body[] = "HTTP/1.0 200 OK\r\n\r\n";
    check_case("empty body until close", S(empty_body), 0, 1, &res);
    CHECK_EQ_U64(res.n, 1);
    CHECK(res.out[0].status == RESP_COMPLETE && res.out[0].by_eof);
    CHECK_EQ_U64(res.out[0].body_bytes, 0);

    /* Connection: keep-alive cannot save a close-delimited body. */
    static const char ka[] = "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nxyz";
    check_case("until close with keep-alive token", S(ka), 0, 1, &res);
    CHECK(res.out[0].status == RESP_COMPLETE && res.out[0].by_eof);
    CHECK_EQ_U64(res.out[0].keep_alive, 0);
}

static void test_eof_errors(void)
{
    static const char *const closed = "connection closed before response complete";
    expect_error("eof mid status line", S("HTTP/1.1 20"), 0, closed);
    expect_error("eof mid headers", S("HTTP/1.1 200 OK\r\nContent-Len"), 0, closed);
    expect_error("eof before empty line", S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"),
                 0, closed);
    expect_error("eof mid body", S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel"),
                 0, closed);
    expect_error("eof mid chunk",
                 S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"), 0,
                 closed);
    expect_error("eof in trailers",
                 S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n"),
                 0, closed);
    expect_error("eof after interim response",
                 S("HTTP/1.1 100 Continue\r\n\r\n"), 0, closed);

    /* eof on an untouched parser is an error too (the engine tells an idle
     * close from a broken response with http_response_untouched). */
    http_response r;
    http_response_reset(&r, 0, NULL, NULL);
    CHECK(http_response_untouched(&r));
    CHECK(http_response_eof(&r) == RESP_ERROR);
    CHECK(r.error != NULL && strcmp(r.error, closed) == 0);
}

static void test_keep_alive(void)
{
    static const char v10[] = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    expect_one("HTTP/1.0 closes by default", S(v10), 0, 200, 0, 0, sizeof(v10) - 3, 2);

    static const char v10_ka[] =
        "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi";
    expect_one("HTTP/1.0 with keep-alive", S(v10_ka), 0, 200, 0, 1, sizeof(v10_ka) - 3, 2);

    static const char v10_list[] =
        "HTTP/1.0 200 OK\r\nConnection: Keep-Alive, Upgrade\r\nContent-Length: 2\r\n\r\nhi";
    expect_one("HTTP/1.0 Connection: Keep-Alive, Upgrade", S(v10_list), 0, 200, 0, 1,
               sizeof(v10_list) - 3, 2);

    static const char close[] =
        "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi";
    expect_one("Connection: close", S(close), 0, 200, 1, 0, sizeof(close) - 3, 2);

    static const char close_list[] =
        "HTTP/1.1 200 OK\r\nConnection: Upgrade ,CLOSE\r\nContent-Length: 2\r\n\r\nhi";
    expect_one("Connection: Upgrade ,CLOSE", S(close_list), 0, 200, 1, 0,
               sizeof(close_list) - 3, 2);

    /* "closed" and "keep-alive-ish" are other tokens, not close/keep-alive. */
    static const char not_close[] =
        "HTTP/1.1 200 OK\r\nConnection: closed, x-close\r\nContent-Length: 2\r\n\r\nhi";
    expect_one("Connection tokens are whole", S(not_close), 0, 200, 1, 1,
               sizeof(not_close) - 3, 2);

    static const char v10_te[] =
        "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
        "0\r\n\r\n";
    expect_one("HTTP/1.0 with Transfer-Encoding closes", S(v10_te), 0, 200, 0, 0,
               sizeof(v10_te) - 6, 0);

    static run_result res;
    check_case("connection_close flag", S(close), 0, 1, &res);
    CHECK_EQ_U64(res.out[0].connection_close, 1);
    check_case("connection_close flag (list)", S(close_list), 0, 1, &res);
    CHECK_EQ_U64(res.out[0].connection_close, 1);
    check_case("connection_close flag (absent)", S(v10_ka), 0, 1, &res);
    CHECK_EQ_U64(res.out[0].connection_close, 0);
}

static void test_interim(void)
{
    static const char cont[] =
        "HTTP/1.1 100 Continue\r\n\r\n"
        "HTTP/1.1 200 OK\r\nX-Final: yes\r\nContent-Length: 2\r\n\r\nok";
    expect_one("100 Continue then 200", S(cont), 0, 200, 1, 1, sizeof(cont) - 1 - 25 - 2, 2);

    static const char hints[] =
        "HTTP/1.1 103 Early Hints\r\n"
        "Link: </style.css>; rel=preload; as=style\r\n"
        "Connection: close\r\n"
        "Content-Length: 999\r\n"
        "\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    /* The interim's Connection and Content-Length do not leak. */
    expect_one("103 Early Hints then 200", S(hints), 0, 200, 1, 1, 38, 2);

    static const char two_interim[] =
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n"
        "HTTP/1.1 204 No Content\r\n\r\n";
    expect_one("two interim responses then 204", S(two_interim), 0, 204, 1, 1, 27, 0);

    /* Callbacks only for the final response's headers. */
    static run_result res;
    check_case("interim headers not reported", S(hints), 0, 1, &res);
    static const char want[] = "Content-Length=2\n";
    CHECK_EQ_U64(res.out[0].headers.len, sizeof(want) - 1);
    CHECK(memcmp(res.out[0].headers.log, want, sizeof(want) - 1) == 0);

    expect_error("101 Switching Protocols",
                 S("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"), 0,
                 "101 Switching Protocols is not supported");
}

static void test_pipelined(void)
{
    static const char in[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
        "HTTP/1.1 404 Not Found\r\nContent-Length: 6\r\n\r\nsecond"
        "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nrest";
    static run_result res;
    check_case("pipelined", S(in), 0, 1, &res);
    CHECK_EQ_U64(res.n, 4);
    CHECK_EQ_U64(res.out[0].status_code, 200);
    CHECK_EQ_U64(res.out[0].end_offset, 43);
    CHECK_EQ_U64(res.out[0].body_bytes, 5);
    CHECK_EQ_U64(res.out[1].status_code, 404);
    CHECK_EQ_U64(res.out[1].end_offset, 43 + 51);
    CHECK_EQ_U64(res.out[1].body_bytes, 6);
    CHECK_EQ_U64(res.out[1].keep_alive, 1);
    CHECK_EQ_U64(res.out[2].end_offset, 43 + 51 + 38);
    CHECK_EQ_U64(res.out[2].body_bytes, 0);
    CHECK(res.out[3].status == RESP_COMPLETE && res.out[3].by_eof);
    CHECK_EQ_U64(res.out[3].body_bytes, 4);
    CHECK_EQ_U64(res.out[3].keep_alive, 0);

    /* By hand: consumed offsets of two responses in one buffer. */
    static const char two[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
        "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndefg";
    http_response r;
    size_t used = 0;
    http_response_reset(&r, 0, NULL, NULL);
    CHECK(http_response_feed(&r, two, sizeof(two) - 1, &used) == RESP_COMPLETE);
    CHECK_EQ_U64(used, 41);
    CHECK_EQ_U64(r.body_bytes, 3);
    /* Without a reset, feeding on is an error. */
    size_t again;
    CHECK(http_response_feed(&r, two + used, sizeof(two) - 1 - used, &again) == RESP_ERROR);
    CHECK(r.error != NULL);
    http_response_reset(&r, 0, NULL, NULL);
    size_t used2 = 0;
    CHECK(http_response_feed(&r, two + used, sizeof(two) - 1 - used, &used2) == RESP_COMPLETE);
    CHECK_EQ_U64(used + used2, sizeof(two) - 1);
    CHECK_EQ_U64(r.body_bytes, 4);
    CHECK(r.error == NULL);
}

static void test_set_cookie(void)
{
    static const char in[] =
        "HTTP/1.1 200 OK\r\n"
        "Set-Cookie: session=abc123; Path=/; HttpOnly\r\n"
        "set-cookie:   theme=dark  \r\n"
        "SET-COOKIE:\tq=\"a b\"; Max-Age=60\t \r\n"
        "Set-Cookie:\r\n"
        "Content-Length: 0\r\n"
        "\r\n";
    static run_result res;
    check_case("Set-Cookie values", S(in), 0, 1, &res);
    static const char want[] =
        "Set-Cookie=session=abc123; Path=/; HttpOnly\n"
        "set-cookie=theme=dark\n"
        "SET-COOKIE=q=\"a b\"; Max-Age=60\n"
        "Set-Cookie=\n"
        "Content-Length=0\n";
    CHECK_EQ_U64(res.n, 1);
    CHECK_EQ_U64(res.out[0].headers.len, sizeof(want) - 1);
    CHECK(memcmp(res.out[0].headers.log, want, sizeof(want) - 1) == 0);
}

/* expect_error on a chunked response whose body is `body`. */
static void expect_chunked_error(const char *name, const char *body, const char *message)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    static char in[256];
    int n = snprintf(in, sizeof in, "%s%s", head, body);
    expect_error(name, in, (size_t)n, 0, message);
}

static void test_malformed(void)
{
    static const char *const status = "malformed status line";
    expect_error("hello", S("hello\r\n"), 0, status);
    expect_error("hello without newline", S("hello"), 0, status);
    expect_error("empty line", S("\r\nHTTP/1.1 200 OK\r\n\r\n"), 0, status);
    expect_error("HTTP/2", S("HTTP/2 200 OK\r\n\r\n"), 0, status);
    expect_error("HTTP/1.1 2000", S("HTTP/1.1 2000 OK\r\n\r\n"), 0, status);
    expect_error("two-digit status", S("HTTP/1.1 20 OK\r\n\r\n"), 0, status);
    expect_error("status 099", S("HTTP/1.1 099 OK\r\n\r\n"), 0, status);
    expect_error("short status line", S("HTTP/1.1 20\r\n"), 0,
                 status);
    expect_error("lowercase http", S("http/1.1 200 OK\r\n\r\n"), 0, status);
    expect_error("tab before status", S("HTTP/1.1\t200 OK\r\n\r\n"), 0, status);
    expect_error("tab before reason", S("HTTP/1.1 200\tOK\r\n\r\n"), 0, status);
    expect_error("CTL in reason", S("HTTP/1.1 200 O\x01K\r\n\r\n"), 0, status);
    expect_error("bare CR in reason", S("HTTP/1.1 200 O\rK\r\n\r\n"), 0, status);
    expect_error("NUL in status", S("HTTP/1.1 200 \0K\r\n\r\n"), 0, status);

    static const char *const name = "malformed header name";
    expect_error("space before colon", S("HTTP/1.1 200 OK\r\nName : value\r\n\r\n"), 0, name);
    expect_error("no colon", S("HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n"), 0, name);
    expect_error("empty name", S("HTTP/1.1 200 OK\r\n: value\r\n\r\n"), 0, name);
    expect_error("bad name char", S("HTTP/1.1 200 OK\r\nX(y): value\r\n\r\n"), 0, name);
    expect_error("obs-fold",
                 S("HTTP/1.1 200 OK\r\nX-Long: a\r\n  continued\r\nContent-Length: 0\r\n\r\n"),
                 0, "obsolete line folding in header");
    expect_error("CTL in value", S("HTTP/1.1 200 OK\r\nX: a\x7f\r\n\r\n"), 0,
                 "malformed header value");
    expect_error("bare CR in value", S("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n"), 0,
                 "malformed header value");
    /* Long values are checked eight bytes at a time: CTLs at every offset. */
    for (size_t at = 0; at < 40; at++) {
        static const unsigned char bad[] = {0x00, 0x01, 0x0b, 0x1f, 0x7f};
        static char line[128];
        unsigned char ctl = bad[at % sizeof bad];
        int n = snprintf(line, sizeof line, "HTTP/1.1 200 OK\r\nX: ");
        memset(line + n, (at & 1) ? 'v' : '\x80', 48);
        line[n + 1 + (int)at] = (char)ctl;
        memcpy(line + n + 48, "\r\n\r\n", 4);
        expect_error("CTL in long value", line, (size_t)n + 52, 0, "malformed header value");
        n = snprintf(line, sizeof line, "HTTP/1.1 200 ");
        memset(line + n, 'r', 48);
        line[n + 1 + (int)at] = (char)ctl;
        memcpy(line + n + 48, "\r\n\r\n", 4);
        expect_error("CTL in long reason", line, (size_t)n + 52, 0, "malformed status line");
    }

    static const char *const cl = "malformed Content-Length";
    expect_error("negative Content-Length", S("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
                 0, cl);
    expect_error("empty Content-Length", S("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n"), 0, cl);
    expect_error("Content-Length 12abc",
                 S("HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n"), 0, cl);
    expect_error("Content-Length +5", S("HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n"), 0, cl);
    expect_error("Content-Length 1 2", S("HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n"), 0,
                 cl);
    expect_error("Content-Length 0x10", S("HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n"),
                 0, cl);
    expect_error("overflowing Content-Length",
                 S("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n"), 0,
                 "Content-Length overflow");
    expect_error("conflicting Content-Length",
                 S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello"),
                 0, "conflicting Content-Length");
    expect_error("conflicting Content-Length list",
                 S("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello"), 0,
                 "conflicting Content-Length");
    /* The largest value fits (the body then never ends, but that is legal). */
    static run_result res;
    check_case("Content-Length UINT64_MAX",
               S("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nab"), 0, 0,
               &res);
    CHECK(res.out[0].status == RESP_INCOMPLETE);
    expect_error("empty Transfer-Encoding",
                 S("HTTP/1.1 200 OK\r\nTransfer-Encoding: ,\r\n\r\n"), 0,
                 "malformed Transfer-Encoding");

    static const char *const chunk = "malformed chunk size";
    expect_chunked_error("non-hex chunk size", "xyz\r\nabc\r\n0\r\n\r\n", chunk);
    expect_chunked_error("0x chunk size", "0x10\r\n", chunk);
    expect_chunked_error("negative chunk size", "-1\r\n", chunk);
    expect_chunked_error("empty chunk size", "\r\n", chunk);
    expect_chunked_error("chunk size then junk", "5 x\r\nhello\r\n", chunk);
    expect_chunked_error("overflowing chunk size", "10000000000000000\r\n", "chunk size overflow");
    expect_chunked_error("no CRLF after chunk data", "3\r\nabcd\r\n0\r\n\r\n", "missing CRLF after chunk data");
    expect_chunked_error("CR without LF after chunk data", "3\r\nabc\rX0\r\n\r\n", "missing CRLF after chunk data");
    expect_chunked_error("bad trailer", "0\r\nnot a field\r\n\r\n", name);
    /* The largest chunk size that fits is accepted. */
    check_case("chunk size UINT64_MAX",
               S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "00ffffffffffffffff\r\nabc"), 0, 0, &res);
    CHECK(res.out[0].status == RESP_INCOMPLETE);
}

/* Random bytes, and random bytes after a plausible start: never a crash,
 * never a hang, the same verdict at every split; pure noise is an error. */
static void test_random_garbage(void)
{
    static char in[600];
    static run_result res;
    int noise_errors = 0;
    for (int round = 0; round < 40; round++) {
        size_t len = 1 + (size_t)(rng_next() % 300);
        for (size_t i = 0; i < len; i++) in[i] = (char)rng_next();
        if (in[0] == 'H') in[0] = 'h';
        check_case("random bytes", in, len, round & 1, 1, &res);
        noise_errors += res.n >= 1 && res.out[res.n - 1].status == RESP_ERROR;
    }
    CHECK_EQ_U64(noise_errors, 40);

    static const char *const starts[] = {
        "HTTP/1.1 200 OK\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    };
    for (int round = 0; round < 60; round++) {
        const char *start = starts[round % 3];
        size_t n = strlen(start);
        memcpy(in, start, n);
        size_t len = n + (size_t)(rng_next() % 200);
        /* Mostly printable with some CR/LF, to reach deeper states. */
        static const char alphabet[] = "\r\n\r\n: ;,0123456789abcdefABCDEFxyz\t\x80\x01";
        for (size_t i = n; i < len; i++)
            in[i] = alphabet[rng_next() % (sizeof(alphabet) - 1)];
        check_case("plausible start then noise", in, len, 0, 1, &res);
    }
}

/* Writes a complete header block (Content-Length: 0) of exactly `total`
 * bytes, padded with "X: y" fields and one sized field. */
static size_t build_header_block(char *out, size_t total)
{
    static const char status[] = "HTTP/1.1 200 OK\r\n";
    static const char tail[] = "Content-Length: 0\r\n\r\n";
    size_t n = sizeof(status) - 1, t = sizeof(tail) - 1;
    memcpy(out, status, n);
    while (n + 6 + t + 6 <= total) {
        memcpy(out + n, "X: y\r\n", 6);
        n += 6;
    }
    size_t pad = total - n - t; /* 6..11: "P: " + at least one 'p' + CRLF */
    memcpy(out + n, "P: ", 3);
    memset(out + n + 3, 'p', pad - 5);
    memcpy(out + n + pad - 2, "\r\n", 2);
    n += pad;
    memcpy(out + n, tail, t);
    return n + t;
}

/* A server sending headers forever must hit RESP_ERROR once the block
 * passes HTTP_MAX_HEADER_BYTES, whatever the feed size. */
static void test_endless_headers(void)
{
    static const char status[] = "HTTP/1.1 200 OK\r\n";
    static const char header[] = "X: y\r\n";
    static char stream[HTTP_MAX_HEADER_BYTES + 8192];
    size_t n = 0;
    memcpy(stream, status, sizeof(status) - 1);
    n = sizeof(status) - 1;
    while (n + sizeof(header) - 1 <= sizeof stream) {
        memcpy(stream + n, header, sizeof(header) - 1);
        n += sizeof(header) - 1;
    }
    static const size_t piece_sizes[] = {1, 7, 4096, sizeof stream};
    for (size_t i = 0; i < sizeof piece_sizes / sizeof piece_sizes[0]; i++) {
        size_t piece = piece_sizes[i];
        http_response r;
        http_response_reset(&r, 0, NULL, NULL);
        size_t fed = 0;
        resp_status st = RESP_INCOMPLETE;
        while (fed < n && st == RESP_INCOMPLETE) {
            size_t take = n - fed < piece ? n - fed : piece;
            const char *buf = place_before_guard(stream + fed, take);
            size_t used;
            st = http_response_feed(&r, buf, take, &used);
            fed += take;
        }
        if (st != RESP_ERROR)
            fprintf(stderr, "endless headers, pieces of %zu: status %d after %zu bytes\n",
                    piece, st, fed);
        CHECK(st == RESP_ERROR);
        CHECK(r.error != NULL && strcmp(r.error, "headers too large") == 0);
        /* Caught in the feed that crossed the limit, not later. */
        CHECK(fed > HTTP_MAX_HEADER_BYTES);
        CHECK(fed <= HTTP_MAX_HEADER_BYTES + piece);
        if (piece == 1) CHECK_EQ_U64(fed, HTTP_MAX_HEADER_BYTES + 1);
    }

    /* Exactly at the limit is fine, one byte more is not. */
    static char exact[HTTP_MAX_HEADER_BYTES + 16];
    static run_result res;
    static size_t cuts[4] = {1000, 30000, 60000, 65535};
    for (size_t extra = 0; extra <= 1; extra++) {
        size_t e = build_header_block(exact, HTTP_MAX_HEADER_BYTES + extra);
        CHECK_EQ_U64(e, HTTP_MAX_HEADER_BYTES + extra);
        run(exact, e, 0, 1, NULL, 0, 0, &res);
        CHECK_EQ_U64(res.n, 1);
        if (extra == 0) {
            CHECK(res.out[0].status == RESP_COMPLETE);
            CHECK_EQ_U64(res.out[0].header_bytes, HTTP_MAX_HEADER_BYTES);
        } else {
            CHECK(res.out[0].status == RESP_ERROR);
            CHECK(res.out[0].error && strcmp(res.out[0].error, "headers too large") == 0);
        }
        static run_result split;
        run(exact, e, 0, 1, cuts, 4, 0, &split);
        CHECK(results_equal(&res, &split));
    }

    /* Endless interim responses share one budget. */
    static char interim[HTTP_MAX_HEADER_BYTES + 4096];
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    size_t m = 0;
    while (m + sizeof(cont) - 1 <= sizeof interim) {
        memcpy(interim + m, cont, sizeof(cont) - 1);
        m += sizeof(cont) - 1;
    }
    static const size_t cut_pieces[] = {1, 4096};
    for (size_t i = 0; i < 2; i++) {
        http_response r;
        http_response_reset(&r, 0, NULL, NULL);
        size_t fed = 0, piece = cut_pieces[i];
        resp_status st = RESP_INCOMPLETE;
        while (fed < m && st == RESP_INCOMPLETE) {
            size_t take = m - fed < piece ? m - fed : piece;
            size_t used;
            st = http_response_feed(&r, place_before_guard(interim + fed, take), take, &used);
            fed += take;
        }
        CHECK(st == RESP_ERROR);
        CHECK(r.error != NULL && strcmp(r.error, "headers too large") == 0);
        CHECK(fed <= HTTP_MAX_HEADER_BYTES + 26 + piece);
    }

    /* Endless trailers. */
    static char trailers[HTTP_MAX_HEADER_BYTES + 4096];
    static const char chunked_head[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
    size_t t = sizeof(chunked_head) - 1;
    memcpy(trailers, chunked_head, t);
    while (t + 6 <= sizeof trailers) {
        memcpy(trailers + t, header, 6);
        t += 6;
    }
    run(trailers, t, 0, 1, NULL, 0, 0, &res);
    CHECK(res.n == 1 && res.out[0].status == RESP_ERROR);
    CHECK(res.out[0].error && strcmp(res.out[0].error, "trailers too large") == 0);
}

static void test_long_lines(void)
{
    static char in[24 * 1024];
    static const char status[] = "HTTP/1.1 200 OK\r\n";
    const size_t s = sizeof(status) - 1;
    static run_result res;

    /* A 20 KB header line. */
    memcpy(in, status, s);
    memcpy(in + s, "X-Big: ", 7);
    memset(in + s + 7, 'a', 20 * 1024);
    size_t n = s + 7 + 20 * 1024;
    memcpy(in + n, "\r\n\r\n", 4);
    n += 4;
    static const size_t pieces[] = {1, 100, 4096, 24 * 1024};
    for (size_t i = 0; i < 4; i++) {
        http_response r;
        http_response_reset(&r, 0, NULL, NULL);
        size_t fed = 0;
        resp_status st = RESP_INCOMPLETE;
        while (fed < n && st == RESP_INCOMPLETE) {
            size_t take = n - fed < pieces[i] ? n - fed : pieces[i];
            size_t used;
            st = http_response_feed(&r, place_before_guard(in + fed, take), take, &used);
            fed += take;
        }
        CHECK(st == RESP_ERROR);
        CHECK(r.error != NULL && strcmp(r.error, "header line too long") == 0);
        if (pieces[i] == 1) CHECK_EQ_U64(fed, s + HTTP_MAX_LINE_BYTES + 1);
    }

    /* HTTP_MAX_LINE_BYTES before the CRLF... the CR counts, the LF does not:
     * a line of exactly the limit passes, one more byte fails. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t value = HTTP_MAX_LINE_BYTES - 3 - 1 + (size_t)extra; /* "X: " + CR */
        memcpy(in, status, s);
        memcpy(in + s, "X: ", 3);
        memset(in + s + 3, 'v', value);
        n = s + 3 + value;
        memcpy(in + n, "\r\nContent-Length: 0\r\n\r\n", 23);
        n += 23;
        size_t cuts[1] = {s + 100};
        run(in, n, 0, 1, cuts, 1, 0, &res);
        if (extra == 0) {
            CHECK(res.n == 1 && res.out[0].status == RESP_COMPLETE);
        } else {
            CHECK(res.n == 1 && res.out[0].status == RESP_ERROR);
            CHECK(res.out[0].error && strcmp(res.out[0].error, "header line too long") == 0);
        }
        run(in, n, 0, 1, NULL, 0, 0, &res);
        CHECK(res.n == 1 && res.out[0].status == (extra == 0 ? RESP_COMPLETE : RESP_ERROR));
    }

    /* A garbage line without LF is rejected from its first bytes. */
    memset(in, 'z', 20 * 1024);
    run(in, 20 * 1024, 0, 0, NULL, 0, 0, &res);
    CHECK(res.n == 1 && res.out[0].status == RESP_ERROR);
    CHECK(res.out[0].error && strcmp(res.out[0].error, "malformed status line") == 0);

    /* A status line that stays plausible is rejected at the line limit. */
    memcpy(in, "HTTP/1.1 200 ", 13);
    memset(in + 13, 'r', 20 * 1024);
    run(in, 13 + 20 * 1024, 0, 0, NULL, 0, 0, &res);
    CHECK(res.n == 1 && res.out[0].status == RESP_ERROR);
    CHECK(res.out[0].error && strcmp(res.out[0].error, "header line too long") == 0);

    /* A chunk extension past the line limit. */
    static const char chunked_head[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    size_t c = sizeof(chunked_head) - 1;
    memcpy(in, chunked_head, c);
    memcpy(in + c, "1;", 2);
    memset(in + c + 2, 'e', 10000);
    run(in, c + 10002, 0, 0, NULL, 0, 0, &res);
    CHECK(res.n == 1 && res.out[0].status == RESP_ERROR);
    CHECK(res.out[0].error && strcmp(res.out[0].error, "chunk size line too long") == 0);
}

static void test_api_details(void)
{
    http_response r;
    size_t used = 99;

    http_response_reset(&r, 0, NULL, NULL);
    CHECK(http_response_untouched(&r));
    CHECK(http_response_feed(&r, NULL, 0, &used) == RESP_INCOMPLETE);
    CHECK_EQ_U64(used, 0);
    CHECK(http_response_untouched(&r));
    CHECK(http_response_feed(&r, "H", 1, &used) == RESP_INCOMPLETE);
    CHECK_EQ_U64(used, 1);
    CHECK(!http_response_untouched(&r));
    CHECK(r.error == NULL);

    /* After a whole interim response the parser is no longer untouched. */
    http_response_reset(&r, 0, NULL, NULL);
    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    CHECK(http_response_feed(&r, cont, sizeof(cont) - 1, &used) == RESP_INCOMPLETE);
    CHECK_EQ_U64(used, sizeof(cont) - 1);
    CHECK(!http_response_untouched(&r));

    /* Errors are sticky until reset; COMPLETE then feed is an error. */
    http_response_reset(&r, 0, NULL, NULL);
    CHECK(http_response_feed(&r, "nope\r\n", 6, &used) == RESP_ERROR);
    CHECK(used <= 6);
    CHECK(http_response_feed(&r, "HTTP/1.1 200 OK\r\n", 17, &used) == RESP_ERROR);
    CHECK(http_response_eof(&r) == RESP_ERROR);
    CHECK(!http_response_untouched(&r));
    http_response_reset(&r, 0, NULL, NULL);
    CHECK(r.error == NULL);
    CHECK(http_response_untouched(&r));
    static const char ok[] = "HTTP/1.1 204 No Content\r\n\r\n";
    CHECK(http_response_feed(&r, ok, sizeof(ok) - 1, &used) == RESP_COMPLETE);
    CHECK(http_response_feed(&r, NULL, 0, &used) == RESP_ERROR);
    CHECK(r.error != NULL);

    /* A COMPLETE response stays complete when the server then closes. */
    http_response_reset(&r, 0, NULL, NULL);
    CHECK(http_response_feed(&r, ok, sizeof(ok) - 1, &used) == RESP_COMPLETE);
    CHECK(http_response_eof(&r) == RESP_COMPLETE);
    CHECK(r.error == NULL);

    /* head_request and callbacks are taken from reset. */
    header_log log;
    memset(&log, 0, sizeof log);
    http_response_reset(&r, 1, log_header, &log);
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
    CHECK(http_response_feed(&r, head, sizeof(head) - 1, &used) == RESP_COMPLETE);
    CHECK_EQ_U64(used, sizeof(head) - 1);
    CHECK_EQ_U64(log.len, sizeof("Content-Length=5\n") - 1);
}

/* The body callback gets exactly the payload, chunk framing removed,
 * however the response is split into feeds; it is off after a reset. */
typedef struct { char data[256]; size_t len; int calls; } body_sink;

static void sink_body(void *ctx, const char *data, size_t len)
{
    body_sink *s = ctx;
    if (s->len + len <= sizeof(s->data)) memcpy(s->data + s->len, data, len);
    s->len += len;
    s->calls++;
}

static void test_body_callback(void)
{
    static const struct { const char *wire; const char *body; } cases[] = {
        {"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", "hello world"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n",
         "hello world"},
        {"HTTP/1.1 204 No Content\r\n\r\n", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = strlen(cases[i].wire);
        for (size_t split = 1; split <= len; split++) {
            http_response r;
            body_sink sink = {0};
            http_response_reset(&r, 0, NULL, NULL);
            http_response_set_body_cb(&r, sink_body, &sink);
            size_t used = 0, used2 = 0;
            resp_status st = http_response_feed(&r, cases[i].wire, split, &used);
            if (st == RESP_INCOMPLETE) st = http_response_feed(&r, cases[i].wire + split, len - split, &used2);
            CHECK(st == RESP_COMPLETE);
            CHECK_EQ_U64(sink.len, strlen(cases[i].body));
            CHECK(sink.len == strlen(cases[i].body) && memcmp(sink.data, cases[i].body, sink.len) == 0);
        }
    }
    /* Until close: the bytes as they come; a reset turns the callback off. */
    http_response r;
    body_sink sink = {0};
    http_response_reset(&r, 0, NULL, NULL);
    http_response_set_body_cb(&r, sink_body, &sink);
    size_t used;
    const char *close_delimited = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc";
    CHECK(http_response_feed(&r, close_delimited, strlen(close_delimited), &used) == RESP_INCOMPLETE);
    CHECK(http_response_eof(&r) == RESP_COMPLETE);
    CHECK(sink.len == 3 && memcmp(sink.data, "abc", 3) == 0);
    http_response_reset(&r, 0, NULL, NULL);
    sink.len = 0;
    sink.calls = 0;
    const char *wire = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    CHECK(http_response_feed(&r, wire, strlen(wire), &used) == RESP_COMPLETE);
    CHECK_EQ_U64(sink.calls, 0);
}

int main(void)
{
    guard_init();
    test_body_callback();
    test_content_length();
    test_no_body();
    test_chunked();
    test_until_close();
    test_eof_errors();
    test_keep_alive();
    test_interim();
    test_pipelined();
    test_set_cookie();
    test_malformed();
    test_random_garbage();
    test_endless_headers();
    test_long_lines();
    test_api_details();
    return check_report("http_response");
}
