/*
 * test_requests.c - tests of the request list parser and the request mix.
 *
 * Every rendered request is compared byte for byte with the wire text it
 * must produce, so a stray space, a missing CRLF or a header in the wrong
 * order fails. Configurations are filled by hand (reset_cfg) except where
 * the test is about what the command line hands over (cli_parse).
 *
 * The mix is driven by the engine's own seeded rng, so the frequency
 * checks are deterministic: same seed, same picks, every run.
 */
#include "check.h"
#include "config.h"
#include "requests.h"
#include "request_render.h"
#include "rng.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UA "User-Agent: rackbench-engine/" ENGINE_VERSION "\r\n"
#define HOST "Host: 127.0.0.1:8080\r\n"

static engine_config cfg; /* 6 KB: off the stack */
static char err[512];

static void reset_cfg(void)
{
    memset(&cfg, 0, sizeof cfg);
    strcpy(cfg.host, "127.0.0.1");
    strcpy(cfg.port, "8080");
    strcpy(cfg.path, "/");
    strcpy(cfg.url, "http://127.0.0.1:8080/");
    cfg.method = "GET";
    cfg.connections = 10;
    cfg.threads = 1;
    cfg.seed = 1;
    cfg.keepalive = 1;
}

/* --- helpers ------------------------------------------------------------ */

static void print_escaped(const char *label, const char *s, size_t n)
{
    fprintf(stderr, "  %s (%zu bytes): \"", label, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\r') fputs("\\r", stderr);
        else if (c == '\n') fputs("\\n", stderr);
        else if (c == '"' || c == '\\') fprintf(stderr, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f) fprintf(stderr, "\\x%02x", c);
        else fputc(c, stderr);
    }
    fputs("\"\n", stderr);
}

/* 1 if bytes [s, s+n) equal the string want; prints both otherwise. */
static int bytes_are(const char *s, size_t n, const char *want)
{
    size_t wn = strlen(want);
    if (s && n == wn && memcmp(s, want, n) == 0) return 1;
    print_escaped("got ", s ? s : "", s ? n : 0);
    print_escaped("want", want, wn);
    return 0;
}

static int wire_is(const request_template *t, const char *want)
{
    return bytes_are(t->wire, t->wire_len, want);
}

/* Invariants of every rendered request: the head ends with CRLF, the blank
 * line's CRLF sits at head_len, the wire is NUL-terminated for debugging. */
static int head_split_ok(const request_template *t)
{
    return t->head_len >= 2 && t->head_len + 2 <= t->wire_len &&
           memcmp(t->wire + t->head_len - 2, "\r\n", 2) == 0 &&
           memcmp(t->wire + t->head_len, "\r\n", 2) == 0 &&
           memmem(t->wire, t->head_len, "\r\n\r\n", 4) == NULL;
}

static const char *parse_n(request_set *set, const char *text, size_t len)
{
    memset(err, 0, sizeof err);
    return requests_parse(set, &cfg, text, len, "reqs.txt", err, sizeof err);
}

static const char *parse(request_set *set, const char *text)
{
    return parse_n(set, text, strlen(text));
}

/* The text must be refused with exactly this message, leaving the set
 * empty (requests_free after a failure must be harmless). */
static void expect_error(const char *text, size_t len, const char *message)
{
    request_set set;
    memset(&set, 0xA5, sizeof set);
    const char *e = parse_n(&set, text, len);
    CHECK(e == err);
    if (!e || strcmp(e, message) != 0) {
        fprintf(stderr, "  input: ");
        print_escaped("input", text, len);
        fprintf(stderr, "  error: %s\n  want:  %s\n", e ? e : "(none)", message);
        check_failed_count++;
    } else {
        check_passed_count++;
    }
    CHECK(set.items == NULL);
    CHECK_EQ_U64(set.count, 0);
    CHECK(set.cum_weight == NULL);
    requests_free(&set);
}

#define EXPECT_ERROR(text, message) expect_error(text, sizeof(text) - 1, message)

/* --- rendering ---------------------------------------------------------- */

static void test_minimal_entry(void)
{
    reset_cfg();
    request_set set;
    CHECK(parse(&set, "---\nGET /a?b=1\n") == NULL);
    CHECK_EQ_U64(set.count, 1);
    CHECK_EQ_U64(set.first_count, 0);
    CHECK_EQ_U64(set.total_weight, 1);
    if (set.count == 1) {
        const request_template *t = &set.items[0];
        CHECK(wire_is(t, "GET /a?b=1 HTTP/1.1\r\n" HOST UA "\r\n"));
        CHECK_EQ_U64(t->head_len, t->wire_len - 2);
        CHECK(head_split_ok(t));
        CHECK(t->name == NULL);
        CHECK_EQ_U64(t->weight, 1);
        CHECK(!t->first);
        CHECK(!t->is_head);
        CHECK(!t->asks_close);
    }
    requests_free(&set);
    CHECK(set.items == NULL && set.count == 0);

    /* No final newline, comments and blank lines around the entry. */
    CHECK(parse(&set, "# a comment\n\n   \n\t# indented comment\n---\n\n  # before the request line\nDELETE /x") ==
          NULL);
    CHECK_EQ_U64(set.count, 1);
    if (set.count == 1) CHECK(wire_is(&set.items[0], "DELETE /x HTTP/1.1\r\n" HOST UA "\r\n"));
    requests_free(&set);
}

static void test_host_header(void)
{
    request_set set;
    struct {
        const char *host, *port, *want;
    } cases[] = {
        {"127.0.0.1", "80", "Host: 127.0.0.1\r\n"},
        {"127.0.0.1", "8080", "Host: 127.0.0.1:8080\r\n"},
        {"localhost", "3000", "Host: localhost:3000\r\n"},
        {"localhost", "80", "Host: localhost\r\n"},
        {"::1", "9", "Host: [::1]:9\r\n"},
        {"::1", "80", "Host: [::1]\r\n"},
        {"localhost", "800", "Host: localhost:800\r\n"}, /* "80" is compared whole */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        reset_cfg();
        strcpy(cfg.host, cases[i].host);
        strcpy(cfg.port, cases[i].port);
        CHECK(parse(&set, "---\nGET /\n") == NULL);
        char want[256];
        snprintf(want, sizeof want, "GET / HTTP/1.1\r\n%s" UA "\r\n", cases[i].want);
        if (set.count == 1) CHECK(wire_is(&set.items[0], want));
        requests_free(&set);
    }

    /* A Host header in the entry, in any case, replaces the automatic one. */
    reset_cfg();
    CHECK(parse(&set, "---\nGET /\nhost: example.test\n") == NULL);
    if (set.count == 1) CHECK(wire_is(&set.items[0], "GET / HTTP/1.1\r\n" UA "host: example.test\r\n\r\n"));
    requests_free(&set);

    /* "Hostname: x" is not a Host header. */
    CHECK(parse(&set, "---\nGET /\nHostname: x\n") == NULL);
    if (set.count == 1) CHECK(wire_is(&set.items[0], "GET / HTTP/1.1\r\n" HOST UA "Hostname: x\r\n\r\n"));
    requests_free(&set);
}

static void test_entry_headers(void)
{
    reset_cfg();
    request_set set;
    CHECK(parse(&set, "---\nGET /\nAccept: */*\nUser-Agent: me/1.0\nX-Empty:\nX-Colons: a:b:c\n") == NULL);
    if (set.count == 1)
        CHECK(wire_is(&set.items[0],
                      "GET / HTTP/1.1\r\n" HOST "Accept: */*\r\nUser-Agent: me/1.0\r\nX-Empty:\r\nX-Colons: a:b:c\r\n\r\n"));
    requests_free(&set);

    /* user-agent in lower case also replaces the default. */
    CHECK(parse(&set, "---\nGET /\nuser-agent: x\n") == NULL);
    if (set.count == 1) CHECK(wire_is(&set.items[0], "GET / HTTP/1.1\r\n" HOST "user-agent: x\r\n\r\n"));
    requests_free(&set);
}

static void test_command_line_headers(void)
{
    reset_cfg();
    cfg.headers[0] = "X-B: from-cli";
    cfg.headers[1] = "x-a: from-cli";   /* the entry sets X-A: dropped */
    cfg.headers[2] = "Authorization: Bearer t";
    cfg.header_count = 3;
    request_set set;
    CHECK(parse(&set, "---\nGET /one\nX-A: from-file\n---\nGET /two\n") == NULL);
    CHECK_EQ_U64(set.count, 2);
    if (set.count == 2) {
        CHECK(wire_is(&set.items[0], "GET /one HTTP/1.1\r\n" HOST UA
                                     "X-A: from-file\r\nX-B: from-cli\r\nAuthorization: Bearer t\r\n\r\n"));
        CHECK(wire_is(&set.items[1], "GET /two HTTP/1.1\r\n" HOST UA
                                     "X-B: from-cli\r\nx-a: from-cli\r\nAuthorization: Bearer t\r\n\r\n"));
    }
    requests_free(&set);

    /* -H Host and -H User-Agent replace the automatic ones. */
    reset_cfg();
    cfg.headers[0] = "Host: cli.test";
    cfg.headers[1] = "User-Agent: cli";
    cfg.header_count = 2;
    CHECK(parse(&set, "---\nGET /\n") == NULL);
    if (set.count == 1) CHECK(wire_is(&set.items[0], "GET / HTTP/1.1\r\nHost: cli.test\r\nUser-Agent: cli\r\n\r\n"));
    requests_free(&set);

    /* ... unless the entry sets its own Host: then the file wins. */
    CHECK(parse(&set, "---\nGET /\nHost: file.test\n") == NULL);
    if (set.count == 1) CHECK(wire_is(&set.items[0], "GET / HTTP/1.1\r\nHost: file.test\r\nUser-Agent: cli\r\n\r\n"));
    requests_free(&set);

    /* The entry's header must be the same name, not a name with the same
     * prefix: X-A-B does not replace -H X-A. */
    reset_cfg();
    cfg.headers[0] = "X-A: cli";
    cfg.header_count = 1;
    CHECK(parse(&set, "---\nGET /\nX-A-B: file\n") == NULL);
    if (set.count == 1) CHECK(wire_is(&set.items[0], "GET / HTTP/1.1\r\n" HOST UA "X-A-B: file\r\nX-A: cli\r\n\r\n"));
    requests_free(&set);
}

static void test_bodies(void)
{
    reset_cfg();
    request_set set;
    static const char file[] =
        "--- name=login\n"
        "POST /login\n"
        "Content-Type: application/x-www-form-urlencoded\n"
        "\n"
        "user=a&pass=b\n"
        "\n"
        "\n"
        "--- name=multi\n"
        "PUT /doc\n"
        "\n"
        "line one\n"
        "\n"
        "line three\n"
        "--- name=nobody\n"
        "POST /empty\n"
        "--- name=emptybody\n"
        "PATCH /p\n"
        "\n"
        "\n"
        "--- name=get-with-body\n"
        "GET /search\n"
        "\n"
        "q=1\n"
        "--- name=delete\n"
        "DELETE /thing\n"
        "--- name=explicit-length\n"
        "POST /raw\n"
        "content-length: 3\n"
        "\n"
        "abc\n"
        "--- name=last\n"
        "POST /last\n"
        "\n"
        "  indented -- not an entry\n"
        "----\n"
        "tail";
    CHECK(parse(&set, file) == NULL);
    CHECK_EQ_U64(set.count, 8);
    if (set.count == 8) {
        const request_template *t = set.items;
        CHECK(t[0].name && strcmp(t[0].name, "login") == 0);
        CHECK(wire_is(&t[0], "POST /login HTTP/1.1\r\n" HOST UA
                             "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 13\r\n\r\n"
                             "user=a&pass=b"));
        CHECK(bytes_are(t[0].wire + t[0].head_len, t[0].wire_len - t[0].head_len, "\r\nuser=a&pass=b"));
        CHECK(wire_is(&t[1], "PUT /doc HTTP/1.1\r\n" HOST UA "Content-Length: 20\r\n\r\nline one\n\nline three"));
        CHECK(wire_is(&t[2], "POST /empty HTTP/1.1\r\n" HOST UA "Content-Length: 0\r\n\r\n"));
        CHECK(wire_is(&t[3], "PATCH /p HTTP/1.1\r\n" HOST UA "Content-Length: 0\r\n\r\n"));
        CHECK(wire_is(&t[4], "GET /search HTTP/1.1\r\n" HOST UA "Content-Length: 3\r\n\r\nq=1"));
        CHECK(wire_is(&t[5], "DELETE /thing HTTP/1.1\r\n" HOST UA "\r\n"));
        CHECK(wire_is(&t[6], "POST /raw HTTP/1.1\r\n" HOST UA "content-length: 3\r\n\r\nabc"));
        CHECK(wire_is(&t[7], "POST /last HTTP/1.1\r\n" HOST UA
                             "Content-Length: 36\r\n\r\n  indented -- not an entry\n----\ntail"));
        for (size_t i = 0; i < set.count; i++) CHECK(head_split_ok(&t[i]));
        CHECK(t[7].name && strcmp(t[7].name, "last") == 0);
    }
    requests_free(&set);

    /* A body line that is an entry line ends the body: "--- " and "---\t". */
    CHECK(parse(&set, "---\nPOST /a\n\nx\n---\tweight=2\nPOST /b\n\ny\n--- \nGET /c\n") == NULL);
    CHECK_EQ_U64(set.count, 3);
    if (set.count == 3) {
        CHECK(wire_is(&set.items[0], "POST /a HTTP/1.1\r\n" HOST UA "Content-Length: 1\r\n\r\nx"));
        CHECK(wire_is(&set.items[1], "POST /b HTTP/1.1\r\n" HOST UA "Content-Length: 1\r\n\r\ny"));
        CHECK_EQ_U64(set.items[1].weight, 2);
        CHECK(wire_is(&set.items[2], "GET /c HTTP/1.1\r\n" HOST UA "\r\n"));
    }
    requests_free(&set);
}

/* The worker writes wire[0, head_len), the jar's Cookie line, then the rest:
 * the result must be the request with the Cookie header in its head. */
static void test_cookie_insertion_point(void)
{
    reset_cfg();
    request_set set;
    CHECK(parse(&set, "---\nPOST /cart\nX-A: 1\n\nitem=7\n---\nGET /\n") == NULL);
    static const char cookie[] = "Cookie: s=abc\r\n";
    for (size_t i = 0; i < set.count; i++) {
        const request_template *t = &set.items[i];
        char joined[1024];
        size_t n = 0;
        CHECK(t->head_len + sizeof(cookie) - 1 + (t->wire_len - t->head_len) < sizeof joined);
        memcpy(joined, t->wire, t->head_len);
        n += t->head_len;
        memcpy(joined + n, cookie, sizeof(cookie) - 1);
        n += sizeof(cookie) - 1;
        memcpy(joined + n, t->wire + t->head_len, t->wire_len - t->head_len);
        n += t->wire_len - t->head_len;
        const char *want = i == 0 ? "POST /cart HTTP/1.1\r\n" HOST UA "X-A: 1\r\nContent-Length: 6\r\nCookie: s=abc\r\n\r\nitem=7"
                                  : "GET / HTTP/1.1\r\n" HOST UA "Cookie: s=abc\r\n\r\n";
        CHECK(bytes_are(joined, n, want));
    }
    requests_free(&set);
}

static void test_flags(void)
{
    reset_cfg();
    request_set set;
    static const char file[] =
        "---\nHEAD /h\n"
        "---\nGET /c\nConnection: close\n"
        "---\nGET /c2\nconnection: Keep-Alive, CLOSE\n"
        "---\nGET /k\nConnection: keep-alive\n"
        "---\nGET /x\nX-Note: close\n"
        "---\nHEADER /not-head\n";
    CHECK(parse(&set, file) == NULL);
    CHECK_EQ_U64(set.count, 6);
    if (set.count == 6) {
        CHECK(set.items[0].is_head && !set.items[0].asks_close);
        CHECK(wire_is(&set.items[0], "HEAD /h HTTP/1.1\r\n" HOST UA "\r\n"));
        CHECK(!set.items[1].is_head && set.items[1].asks_close);
        CHECK(set.items[2].asks_close);
        CHECK(!set.items[3].asks_close);
        CHECK(!set.items[4].asks_close); /* "close" in another header */
        CHECK(!set.items[5].is_head);
    }
    requests_free(&set);

    /* Connection: close from the command line counts too. */
    reset_cfg();
    cfg.headers[0] = "Connection: close";
    cfg.header_count = 1;
    CHECK(parse(&set, "---\nGET /\n---\nGET /keep\nConnection: keep-alive\n") == NULL);
    if (set.count == 2) {
        CHECK(set.items[0].asks_close);
        CHECK(!set.items[1].asks_close); /* the entry's own Connection wins */
        CHECK(wire_is(&set.items[1], "GET /keep HTTP/1.1\r\n" HOST UA "Connection: keep-alive\r\n\r\n"));
    }
    requests_free(&set);
}

static void test_attributes_and_order(void)
{
    reset_cfg();
    request_set set;
    static const char file[] =
        "# file order: A, B(first), C, D(first), E\n"
        "--- weight=3 name=A\nGET /a\n"
        "--- first name=B\nPOST /login\n\nu=1\n"
        "---   name=C\t weight=1\nGET /c\n"
        "--- name=D first weight=7\nGET /d\n"
        "--- weight=0 name=E\nGET /e\n";
    CHECK(parse(&set, file) == NULL);
    CHECK_EQ_U64(set.count, 5);
    CHECK_EQ_U64(set.first_count, 2);
    CHECK_EQ_U64(set.total_weight, 4);
    if (set.count == 5) {
        const char *names[] = {"B", "D", "A", "C", "E"};
        const uint64_t weights[] = {0, 0, 3, 1, 0};
        const int firsts[] = {1, 1, 0, 0, 0};
        for (int i = 0; i < 5; i++) {
            CHECK(set.items[i].name && strcmp(set.items[i].name, names[i]) == 0);
            CHECK_EQ_U64(set.items[i].weight, weights[i]);
            CHECK_EQ_U64(set.items[i].first, firsts[i]);
        }
        CHECK(wire_is(&set.items[0], "POST /login HTTP/1.1\r\n" HOST UA "Content-Length: 3\r\n\r\nu=1"));
        CHECK(wire_is(&set.items[1], "GET /d HTTP/1.1\r\n" HOST UA "\r\n"));
        CHECK(wire_is(&set.items[2], "GET /a HTTP/1.1\r\n" HOST UA "\r\n"));
        CHECK_EQ_U64(set.cum_weight[0], 3);
        CHECK_EQ_U64(set.cum_weight[1], 4);
        CHECK_EQ_U64(set.cum_weight[2], 4);
    }
    requests_free(&set);

    /* Limits of weight=: 1000000000 is the largest, a later name= wins. */
    CHECK(parse(&set, "--- weight=1000000000 name=x name=y\nGET /\n--- weight=1\nGET /b\n") == NULL);
    CHECK_EQ_U64(set.total_weight, 1000000001);
    if (set.count == 2) {
        CHECK_EQ_U64(set.items[0].weight, 1000000000);
        CHECK(set.items[0].name && strcmp(set.items[0].name, "y") == 0);
        CHECK(set.items[1].name == NULL);
    }
    requests_free(&set);
}

static void test_crlf_file(void)
{
    reset_cfg();
    request_set set;
    static const char file[] =
        "# windows file\r\n"
        "\r\n"
        "--- weight=2 name=w\r\n"
        "POST /x\r\n"
        "X-A: 1\r\n"
        "\r\n"
        "l1\r\n"
        "l2\r\n"
        "\r\n"
        "---\r\n"
        "GET /y\r\n"
        "Connection: close\r\n";
    CHECK(parse(&set, file) == NULL);
    CHECK_EQ_U64(set.count, 2);
    if (set.count == 2) {
        CHECK(wire_is(&set.items[0], "POST /x HTTP/1.1\r\n" HOST UA "X-A: 1\r\nContent-Length: 6\r\n\r\nl1\r\nl2"));
        CHECK(set.items[0].name && strcmp(set.items[0].name, "w") == 0);
        CHECK_EQ_U64(set.items[0].weight, 2);
        CHECK(wire_is(&set.items[1], "GET /y HTTP/1.1\r\n" HOST UA "Connection: close\r\n\r\n"));
        CHECK(set.items[1].asks_close);
        CHECK(head_split_ok(&set.items[0]) && head_split_ok(&set.items[1]));
    }
    requests_free(&set);
}

/* --- errors ------------------------------------------------------------- */

static void test_errors(void)
{
    reset_cfg();
    EXPECT_ERROR("--- weight=x\nGET /\n", "reqs.txt:1: weight must be an integer 0-1000000000");
    EXPECT_ERROR("--- weight=-1\nGET /\n", "reqs.txt:1: weight must be an integer 0-1000000000");
    EXPECT_ERROR("--- weight=1000000001\nGET /\n", "reqs.txt:1: weight must be an integer 0-1000000000");
    EXPECT_ERROR("--- weight=99999999999999999999\nGET /\n", "reqs.txt:1: weight must be an integer 0-1000000000");
    EXPECT_ERROR("--- weight=5x\nGET /\n", "reqs.txt:1: weight must be an integer 0-1000000000");
    EXPECT_ERROR("--- weight=123456789012345678901234567890123\nGET /\n", "reqs.txt:1: weight too large");
    EXPECT_ERROR("\n\n--- name=a bogus\nGET /\n",
                 "reqs.txt:3: unknown entry attribute (expected weight=N, first, probe, name=TEXT)");
    EXPECT_ERROR("--- firstly\nGET /\n", "reqs.txt:1: unknown entry attribute (expected weight=N, first, probe, name=TEXT)");
    EXPECT_ERROR("--- Weight=2\nGET /\n", "reqs.txt:1: unknown entry attribute (expected weight=N, first, probe, name=TEXT)");
    EXPECT_ERROR("---\n", "reqs.txt:1: entry has no request line (METHOD /path)");
    EXPECT_ERROR("---\nGET /\n# c\n---\n\n# only a comment\n---\nGET /b\n",
                 "reqs.txt:3: expected a header line 'Name: value'");
    EXPECT_ERROR("---\nGET /\n\n---\n\n# only a comment\n---\nGET /b\n",
                 "reqs.txt:4: entry has no request line (METHOD /path)");
    EXPECT_ERROR("---\nGET /\n--- weight=2\n", "reqs.txt:3: entry has no request line (METHOD /path)");
    EXPECT_ERROR("---\nget /\n", "reqs.txt:2: method must be upper-case letters");
    EXPECT_ERROR("---\nGet /\n", "reqs.txt:2: method must be upper-case letters");
    EXPECT_ERROR("---\nGET1 /\n", "reqs.txt:2: method must be upper-case letters");
    EXPECT_ERROR("---\nGET x\n", "reqs.txt:2: request target must be a path starting with / and without spaces");
    EXPECT_ERROR("---\nGET http://h/\n",
                 "reqs.txt:2: request target must be a path starting with / and without spaces");
    EXPECT_ERROR("---\nGET /a b\n", "reqs.txt:2: request target must be a path starting with / and without spaces");
    EXPECT_ERROR("---\nGET / HTTP/1.1\n",
                 "reqs.txt:2: request target must be a path starting with / and without spaces");
    EXPECT_ERROR("---\nGET \n", "reqs.txt:2: request target must be a path starting with / and without spaces");
    EXPECT_ERROR("---\nGET\n", "reqs.txt:2: expected a request line: METHOD /path");
    EXPECT_ERROR("---\n GET /\n", "reqs.txt:2: expected a request line: METHOD /path");
    EXPECT_ERROR("---\nGET /\nX-A 1\n", "reqs.txt:3: expected a header line 'Name: value'");
    EXPECT_ERROR("---\nGET /\nX A: 1\n", "reqs.txt:3: expected a header line 'Name: value'");
    EXPECT_ERROR("---\nGET /\n: v\n", "reqs.txt:3: expected a header line 'Name: value'");
    EXPECT_ERROR("---\r\nGET /\r\nX-A: 1\r\nbad header\r\n", "reqs.txt:4: expected a header line 'Name: value'");
    EXPECT_ERROR("GET /\n", "reqs.txt:1: expected an entry line starting with ---");
    EXPECT_ERROR("# c\n----\nGET /\n", "reqs.txt:2: expected an entry line starting with ---");
    EXPECT_ERROR("---x\nGET /\n", "reqs.txt:1: expected an entry line starting with ---");
    EXPECT_ERROR("---\nGET /\nX-A: 1\0\n", "reqs.txt:3: NUL byte in file");
    EXPECT_ERROR("---\nPOST /\n\nab\0cd\n", "reqs.txt:4: NUL byte in file");
    EXPECT_ERROR("---\nGET /\n---\nGET /b\0", "reqs.txt:4: NUL byte in file");
    EXPECT_ERROR("", "reqs.txt:0: no requests in file");
    EXPECT_ERROR("# nothing\n\n", "reqs.txt:2: no requests in file");
    EXPECT_ERROR("--- first\nGET /\n", "reqs.txt:2: no entry with weight > 0 to choose from");
    EXPECT_ERROR("--- first weight=5\nGET /\n--- first\nGET /b\n",
                 "reqs.txt:4: no entry with weight > 0 to choose from");
    EXPECT_ERROR("--- weight=0\nGET /\n--- weight=0 first\nGET /b\n--- weight=0\nGET /c\n",
                 "reqs.txt:6: no entry with weight > 0 to choose from");

    /* 64 headers are fine, 65 are not. */
    char big[4096];
    size_t n = (size_t)snprintf(big, sizeof big, "---\nGET /\n");
    for (int i = 0; i < 64; i++) n += (size_t)snprintf(big + n, sizeof big - n, "X-%d: v\n", i);
    request_set set;
    CHECK(parse_n(&set, big, n) == NULL);
    CHECK_EQ_U64(set.count, 1);
    if (set.count == 1) CHECK(memmem(set.items[0].wire, set.items[0].wire_len, "X-63: v\r\n\r\n", 11) != NULL);
    requests_free(&set);
    n += (size_t)snprintf(big + n, sizeof big - n, "X-64: v\n");
    expect_error(big, n, "reqs.txt:67: too many headers");

    /* A short err buffer truncates, never overflows. */
    char small[8];
    memset(small, 'Z', sizeof small);
    const char *e = requests_parse(&set, &cfg, "GET /\n", 6, "reqs.txt", small, 6);
    CHECK(e == small);
    CHECK(strcmp(small, "reqs.") == 0);
    CHECK(small[6] == 'Z' && small[7] == 'Z');
}

/* Control characters other than space in the target would be sent as they
 * are and break the request line; the URL parser refuses them too. */
/* A chunked request body cannot be expressed: refused, not sent broken. */
static void test_transfer_encoding_refused(void)
{
    EXPECT_ERROR("---\nPOST /x\ntransfer-encoding: chunked\n\n0\n",
                 "reqs.txt:3: Transfer-Encoding is not supported (bodies are sent with Content-Length)");
}

static void test_target_control_characters(void)
{
    reset_cfg();
    request_set set;
    const char *e = parse(&set, "---\nGET /a\tb\n");
    CHECK(e != NULL);
    if (!e) requests_free(&set);
    e = parse(&set, "---\nGET /a\x7f\n");
    CHECK(e != NULL);
    if (!e) requests_free(&set);
}

/* --- the mix ------------------------------------------------------------ */

static void test_next_first_entries(void)
{
    reset_cfg();
    request_set set;
    CHECK(parse(&set, "--- first name=f1\nGET /1\n--- name=w\nGET /w\n--- first name=f2\nGET /2\n") == NULL);
    CHECK_EQ_U64(set.first_count, 2);
    if (set.count != 3) { requests_free(&set); return; }
    rng r;
    rng_seed(&r, 7);
    for (int slot = 0; slot < 3; slot++) {
        size_t first_done = 0;
        CHECK(requests_next(&set, &r, &first_done) == &set.items[0]);
        CHECK_EQ_U64(first_done, 1);
        CHECK(requests_next(&set, &r, &first_done) == &set.items[1]);
        CHECK_EQ_U64(first_done, 2);
        for (int i = 0; i < 50; i++) CHECK(requests_next(&set, &r, &first_done) == &set.items[2]);
        CHECK_EQ_U64(first_done, 2);
    }
    requests_free(&set);
}

/* Counts picks per item over n calls after the first entries. */
static void count_picks(const request_set *set, uint64_t seed, size_t n, size_t *counts)
{
    rng r;
    rng_seed(&r, seed);
    size_t first_done = set->first_count;
    memset(counts, 0, set->count * sizeof(*counts));
    for (size_t i = 0; i < n; i++) {
        const request_template *t = requests_next(set, &r, &first_done);
        if (t >= set->items && t < set->items + set->count) counts[t - set->items]++;
    }
}

static int within(size_t got, double want, double tolerance)
{
    double d = (double)got - want;
    if (d < 0) d = -d;
    if (d <= tolerance) return 1;
    fprintf(stderr, "  count %zu, expected %.0f +- %.0f\n", got, want, tolerance);
    return 0;
}

static void test_next_weights(void)
{
    enum { PICKS = 100000 };
    reset_cfg();
    request_set set;
    size_t counts[8];

    CHECK(parse(&set, "--- weight=3\nGET /a\n--- weight=1\nGET /b\n--- weight=0\nGET /c\n") == NULL);
    if (set.count == 3) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            count_picks(&set, seed, PICKS, counts);
            CHECK(within(counts[0], PICKS * 0.75, PICKS * 0.01));
            CHECK(within(counts[1], PICKS * 0.25, PICKS * 0.01));
            CHECK_EQ_U64(counts[2], 0);
            CHECK_EQ_U64(counts[0] + counts[1] + counts[2], PICKS);
        }
    }
    requests_free(&set);

    /* Zero weights first, last and between; first entries never come up in
     * the weighted phase. */
    CHECK(parse(&set, "--- weight=0\nGET /z1\n--- first\nGET /f\n--- weight=5\nGET /a\n--- weight=0\nGET /z2\n"
                      "--- weight=3\nGET /b\n--- weight=2\nGET /c\n--- weight=0\nGET /z3\n") == NULL);
    CHECK_EQ_U64(set.first_count, 1);
    CHECK_EQ_U64(set.total_weight, 10);
    if (set.count == 7) {
        /* items: f, z1, a, z2, b, c, z3 */
        count_picks(&set, 99, PICKS, counts);
        CHECK_EQ_U64(counts[0], 0);
        CHECK_EQ_U64(counts[1], 0);
        CHECK(within(counts[2], PICKS * 0.5, PICKS * 0.01));
        CHECK_EQ_U64(counts[3], 0);
        CHECK(within(counts[4], PICKS * 0.3, PICKS * 0.01));
        CHECK(within(counts[5], PICKS * 0.2, PICKS * 0.01));
        CHECK_EQ_U64(counts[6], 0);
    }
    requests_free(&set);

    /* Equal weights over several entries. */
    CHECK(parse(&set, "---\nGET /0\n---\nGET /1\n---\nGET /2\n---\nGET /3\n---\nGET /4\n") == NULL);
    if (set.count == 5) {
        count_picks(&set, 5, PICKS, counts);
        for (int i = 0; i < 5; i++) CHECK(within(counts[i], PICKS * 0.2, PICKS * 0.01));
    }
    requests_free(&set);

    /* A large weight ratio: the light entry still comes up, rarely. */
    CHECK(parse(&set, "--- weight=1000\nGET /heavy\n--- weight=1\nGET /light\n") == NULL);
    if (set.count == 2) {
        count_picks(&set, 11, PICKS, counts);
        CHECK(counts[1] > 30 && counts[1] < 200); /* expected 99.9 */
    }
    requests_free(&set);
}

static void test_next_reproducible(void)
{
    reset_cfg();
    request_set set;
    CHECK(parse(&set, "--- first\nGET /f\n--- weight=2\nGET /a\n---\nGET /b\n--- weight=4\nGET /c\n") == NULL);
    if (set.count != 4) { requests_free(&set); return; }
    enum { N = 2000 };
    static const request_template *a[N], *b[N], *c[N];
    rng ra, rb, rc;
    rng_seed(&ra, 42);
    rng_seed(&rb, 42);
    rng_seed(&rc, 43);
    size_t fa = 0, fb = 0, fc = 0;
    for (int i = 0; i < N; i++) {
        a[i] = requests_next(&set, &ra, &fa);
        b[i] = requests_next(&set, &rb, &fb);
        c[i] = requests_next(&set, &rc, &fc);
    }
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(a[0] == &set.items[0] && c[0] == &set.items[0]);
    CHECK(memcmp(a, c, sizeof a) != 0);
    requests_free(&set);
}

/* --- requests_load ------------------------------------------------------ */

static void test_load_from_flags(void)
{
    reset_cfg();
    request_set set;
    CHECK(requests_load(&set, &cfg, err, sizeof err) == NULL);
    CHECK_EQ_U64(set.count, 1);
    CHECK_EQ_U64(set.first_count, 0);
    CHECK_EQ_U64(set.total_weight, 1);
    if (set.count == 1) {
        CHECK(wire_is(&set.items[0], "GET / HTTP/1.1\r\n" HOST UA "\r\n"));
        CHECK_EQ_U64(set.items[0].weight, 1);
        CHECK(set.items[0].name == NULL);
        rng r;
        rng_seed(&r, 3);
        size_t first_done = 0;
        for (int i = 0; i < 10; i++) CHECK(requests_next(&set, &r, &first_done) == &set.items[0]);
    }
    requests_free(&set);

    /* The body is body_len bytes: it may hold line breaks and "---". */
    reset_cfg();
    strcpy(cfg.host, "::1");
    strcpy(cfg.port, "80");
    strcpy(cfg.path, "/submit?x=1");
    cfg.method = "POST";
    cfg.body = "a=1\n---\nb=2\n\nIGNORED";
    cfg.body_len = 13;
    cfg.headers[0] = "X-Token: t";
    cfg.headers[1] = "Connection: close";
    cfg.header_count = 2;
    CHECK(requests_load(&set, &cfg, err, sizeof err) == NULL);
    if (set.count == 1) {
        CHECK(wire_is(&set.items[0], "POST /submit?x=1 HTTP/1.1\r\nHost: [::1]\r\n" UA
                                     "X-Token: t\r\nConnection: close\r\nContent-Length: 13\r\n\r\na=1\n---\nb=2\n\n"));
        CHECK(set.items[0].asks_close);
        CHECK(head_split_ok(&set.items[0]));
    }
    requests_free(&set);

    reset_cfg();
    cfg.method = "HEAD";
    CHECK(requests_load(&set, &cfg, err, sizeof err) == NULL);
    if (set.count == 1) {
        CHECK(set.items[0].is_head);
        CHECK(wire_is(&set.items[0], "HEAD / HTTP/1.1\r\n" HOST UA "\r\n"));
    }
    requests_free(&set);

    reset_cfg();
    cfg.method = "PUT";
    CHECK(requests_load(&set, &cfg, err, sizeof err) == NULL);
    if (set.count == 1) CHECK(wire_is(&set.items[0], "PUT / HTTP/1.1\r\n" HOST UA "Content-Length: 0\r\n\r\n"));
    requests_free(&set);
}

static void test_load_from_cli(void)
{
    char *argv[] = {"rackbench-engine", "-m", "POST", "--body", "k=v", "-H", "Accept: text/plain",
                    "http://[::1]:9/x?y", NULL};
    int rc = cli_parse(&cfg, 8, argv);
    CHECK_EQ_U64(rc, 0);
    if (rc != 0) return;
    request_set set;
    CHECK(requests_load(&set, &cfg, err, sizeof err) == NULL);
    if (set.count == 1)
        CHECK(wire_is(&set.items[0], "POST /x?y HTTP/1.1\r\nHost: [::1]:9\r\n" UA
                                     "Accept: text/plain\r\nContent-Length: 3\r\n\r\nk=v"));
    requests_free(&set);
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(text, 1, len, f) == len);
    fclose(f);
}

static void test_load_from_file(void)
{
    char path[] = "/tmp/rackbench-requests-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);

    reset_cfg();
    cfg.requests_file = path;
    static const char file[] = "--- first\nPOST /login\n\nu=1\n--- weight=2\nGET /a\n";
    write_file(path, file, sizeof(file) - 1);
    request_set set;
    CHECK(requests_load(&set, &cfg, err, sizeof err) == NULL);
    CHECK_EQ_U64(set.count, 2);
    CHECK_EQ_U64(set.first_count, 1);
    CHECK_EQ_U64(set.total_weight, 2);
    if (set.count == 2) {
        CHECK(wire_is(&set.items[0], "POST /login HTTP/1.1\r\n" HOST UA "Content-Length: 3\r\n\r\nu=1"));
        CHECK(wire_is(&set.items[1], "GET /a HTTP/1.1\r\n" HOST UA "\r\n"));
    }
    requests_free(&set);

    /* Errors name the file as given. */
    static const char bad[] = "---\nGET /\n\n---\nget /x\n";
    write_file(path, bad, sizeof(bad) - 1);
    char want[256];
    snprintf(want, sizeof want, "%s:5: method must be upper-case letters", path);
    const char *e = requests_load(&set, &cfg, err, sizeof err);
    CHECK(e != NULL && strcmp(e, want) == 0);
    CHECK(set.items == NULL && set.count == 0);

    write_file(path, "", 0);
    snprintf(want, sizeof want, "%s:0: no requests in file", path);
    e = requests_load(&set, &cfg, err, sizeof err);
    CHECK(e != NULL && strcmp(e, want) == 0);

    unlink(path);
    e = requests_load(&set, &cfg, err, sizeof err);
    snprintf(want, sizeof want, "cannot open --requests file %s: No such file or directory", path);
    CHECK(e != NULL && strcmp(e, want) == 0);
    CHECK(set.items == NULL && set.count == 0);
}

/* --- sessions: directives, captures, templates ---------------------------- */

static void test_directives(void)
{
    reset_cfg();
    request_set set;
    const char *text =
        "--- first name=form\n"
        "@capture token form=authenticity_token\n"
        "@capture meta_token meta=csrf-token\n"
        "@capture sid header=X-Session regex=id=([0-9]+)\n"
        "@capture id body regex=post-([0-9]+) \"x\"\n"
        "GET /login\n"
        "\n"
        "--- first name=login\n"
        "@follow\n"
        "POST /login?sid={{sid}}\n"
        "Content-Type: application/x-www-form-urlencoded\n"
        "\n"
        "authenticity_token={{token:url}}&user=a\n"
        "\n"
        "--- weight=2 name=plain\n"
        "GET /posts\n";
    CHECK(parse(&set, text) == NULL);
    CHECK_EQ_U64(set.count, 3);
    CHECK_EQ_U64(set.var_count, 4);
    CHECK(strcmp(set.var_names[0], "token") == 0 && strcmp(set.var_names[3], "id") == 0);
    CHECK(set.from_file && set.templated && set.body_captures && set.header_work);
    if (set.count == 3) {
        const request_template *form = &set.items[0], *login = &set.items[1], *plain = &set.items[2];
        CHECK_EQ_U64(form->index, 0);
        CHECK_EQ_U64(login->index, 1);
        CHECK_EQ_U64(plain->index, 2);
        CHECK_EQ_U64(form->capture_count, 4);
        CHECK_EQ_U64(form->body_captures, 3);
        CHECK_EQ_U64(form->header_captures, 1);
        CHECK(form->captures[0].source == CAPTURE_FORM && strcmp(form->captures[0].arg, "authenticity_token") == 0);
        CHECK(form->captures[1].source == CAPTURE_META && strcmp(form->captures[1].arg, "csrf-token") == 0);
        CHECK(form->captures[2].source == CAPTURE_HEADER && form->captures[2].has_regex);
        CHECK(form->captures[3].source == CAPTURE_BODY && form->captures[3].var == 3);
        /* The regex is the rest of the line, spaces included. */
        regmatch_t m[2];
        CHECK(regexec(&form->captures[3].regex, "a post-17 \"x\"", 2, m, 0) == 0 && m[1].rm_so == 7);
        CHECK(regexec(&form->captures[3].regex, "a post-17", 2, m, 0) != 0);
        CHECK(!form->templated && !form->follow);
        CHECK(login->follow && login->templated && login->dynamic_length);
        CHECK(!plain->templated && !plain->follow && plain->capture_count == 0);
        CHECK(wire_is(plain, "GET /posts HTTP/1.1\r\n" HOST UA "\r\n"));

        session_vars *vars = calloc(1, sizeof(*vars));
        char *out = malloc(login->render_bound);
        size_t head_len = 0;
        int missing = 0;
        CHECK(login->render_bound <= set.render_bound);
        CHECK(requests_render(login, vars, out, login->render_bound, &head_len, &missing) == SIZE_MAX);
        CHECK_EQ_U64(missing, 2); /* sid, in the request line, comes first */
        memcpy(vars->value[2], "77", 2);
        vars->len[2] = 2;
        vars->set[2] = 1;
        memcpy(vars->value[0], "a+b/c=", 6);
        vars->len[0] = 6;
        vars->set[0] = 1;
        size_t n = requests_render(login, vars, out, login->render_bound, &head_len, &missing);
        CHECK(bytes_are(out, n == SIZE_MAX ? 0 : n,
                        "POST /login?sid=77 HTTP/1.1\r\n" HOST UA
                        "Content-Type: application/x-www-form-urlencoded\r\n"
                        "Content-Length: 38\r\n\r\n"
                        "authenticity_token=a%2Bb%2Fc%3D&user=a"));
        CHECK(n != SIZE_MAX && memcmp(out + head_len, "\r\n", 2) == 0 && memcmp(out + head_len - 2, "\r\n", 2) == 0);
        /* The longest values still fit render_bound. */
        memset(vars->value[0], '/', SESSION_VAR_MAX_BYTES);
        vars->len[0] = SESSION_VAR_MAX_BYTES;
        memset(vars->value[2], '9', SESSION_VAR_MAX_BYTES);
        vars->len[2] = SESSION_VAR_MAX_BYTES;
        n = requests_render(login, vars, out, login->render_bound, &head_len, &missing);
        CHECK(n != SIZE_MAX && n <= login->render_bound);
        free(out);
        free(vars);
    }
    requests_free(&set);

    /* A variable used before (in file order) the entry that captures it. */
    CHECK(parse(&set, "---\nGET /a/{{later}}\n--- first\n@capture later header=X\nGET /b\n") == NULL);
    if (set.count == 2) CHECK(set.items[1].templated && set.items[1].index == 0);
    requests_free(&set);

    /* {{ that names no variable's syntax stays literal (prebuilt bytes). */
    CHECK(parse(&set, "---\nPOST /a\n\n{\"a\": {{1, 2}}, \"b\": \"{{ x }}\"}\n") == NULL);
    if (set.count == 1) {
        CHECK(!set.items[0].templated);
        CHECK(wire_is(&set.items[0], "POST /a HTTP/1.1\r\n" HOST UA "Content-Length: 31\r\n\r\n"
                                      "{\"a\": {{1, 2}}, \"b\": \"{{ x }}\"}"));
    }
    requests_free(&set);
}

static void test_directive_errors(void)
{
    reset_cfg();
    EXPECT_ERROR("---\n@capture t\nGET /\n",
                 "reqs.txt:2: expected @capture NAME SOURCE with SOURCE header=Name, body regex=RE, form=field or meta=name");
    EXPECT_ERROR("---\n@capture t form=\nGET /\n",
                 "reqs.txt:2: expected @capture NAME SOURCE with SOURCE header=Name, body regex=RE, form=field or meta=name");
    EXPECT_ERROR("---\n@capture t-x form=a\nGET /\n", "reqs.txt:2: variable names are letters, digits and _ (at most 31)");
    EXPECT_ERROR("---\n@capture t body\nGET /\n", "reqs.txt:2: @capture NAME body needs regex=RE");
    EXPECT_ERROR("---\n@capture t body regex=(\nGET /\n", "reqs.txt:2: invalid regex: Unmatched ( or \\(");
    EXPECT_ERROR("---\n@capture t body regex=abc\nGET /\n",
                 "reqs.txt:2: the regex needs a group ( ... ): its first group is the value");
    EXPECT_ERROR("---\n@capture t form=a regex=(a)\nGET /\n",
                 "reqs.txt:2: after the source only regex=RE may follow (body and header)");
    EXPECT_ERROR("---\n@redirect\nGET /\n", "reqs.txt:2: unknown directive (expected @capture, @follow or @expect)");
    EXPECT_ERROR("---\nGET /{{nope}}\n", "reqs.txt:1: variable 'nope' is not captured by any @capture line");
    EXPECT_ERROR("---\n@capture t form=a\nPOST /\nContent-Length: 3\n\n{{t}}\n",
                 "reqs.txt:1: an entry whose body uses {{variables}} cannot set Content-Length (it is computed per request)");
    EXPECT_ERROR("---\n@capture a form=a\n@capture b form=a\n@capture c form=a\n@capture d form=a\n"
                 "@capture e form=a\n@capture f form=a\n@capture g form=a\n@capture h form=a\n@capture i form=a\nGET /\n",
                 "reqs.txt:10: too many @capture lines in one entry (at most 8)");
    char many[2048] = "";
    for (int i = 0; i < 17; i++) {
        char line[64];
        snprintf(line, sizeof line, "---\n@capture v%d form=a\nGET /\n", i);
        strcat(many, line);
    }
    expect_error(many, strlen(many), "reqs.txt:50: too many variables (at most 16)");
}

/* --- probes, @expect, @users and {{random}} ----------------------------- */

static void test_probes_expect_users(void)
{
    reset_cfg();
    request_set set;
    char dir[] = "/tmp/rackbench-test-requests-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char users[128], list[128];
    snprintf(users, sizeof users, "%s/users.csv", dir);
    snprintf(list, sizeof list, "%s/mix.requests", dir);
    FILE *f = fopen(users, "w");
    fputs("login,password\nalice,a+1\nbob,b 2\n", f);
    fclose(f);
    const char *text =
        "# users, then entries\n"
        "@users users.csv\n"
        "--- first name=login\n"
        "@expect status=200\n"
        "POST /login\n"
        "\n"
        "login={{user.login:url}}&password={{user.password:url}}\n"
        "--- weight=3 name=post\n"
        "GET /posts/{{random 1..200}}\n"
        "--- probe name=whoami\n"
        "@expect body=Signed in as {{user.login}}\n"
        "GET /\n";
    const char *parsed = requests_parse(&set, &cfg, text, strlen(text), list, err, sizeof err);
    CHECK(parsed == NULL);
    if (parsed) { fprintf(stderr, "  %s\n", parsed); return; }
    CHECK_EQ_U64(set.users.row_count, 2);
    CHECK_EQ_U64(set.var_count, 2);
    CHECK(strcmp(set.var_names[0], "user.login") == 0 && strcmp(set.var_names[1], "user.password") == 0);
    CHECK_EQ_U64(set.probe_count, 1);
    CHECK(set.expects && set.templated && set.body_captures);
    if (set.count == 3) {
        const request_template *login = &set.items[0], *post = &set.items[1], *probe = &set.items[2];
        CHECK(login->expect.status == 200 && login->templated);
        CHECK(post->templated && post->weight == 3);
        CHECK(probe->probe && probe->weight == 0 && probe->keeps_body && probe->expect.body);
        CHECK_EQ_U64(set.probes[0], 2);
        /* Slot 3 is user 3 mod 2 = bob. */
        session_vars *vars = calloc(1, sizeof(*vars));
        requests_slot_vars(&set, vars, 1, 3);
        char out[4096];
        size_t head;
        int missing;
        size_t n = requests_render(login, vars, out, sizeof out, &head, &missing);
        CHECK(n != SIZE_MAX && strstr(out, "login=bob&password=b+2") != NULL);
        n = requests_render(post, vars, out, sizeof out, &head, &missing);
        CHECK(n != SIZE_MAX && memcmp(out, "GET /posts/", 11) == 0);
        /* {{random}} in a body: its bounds stay bounds. */
        request_set body_set;
        const char *body_text = "---\nPOST /x\n\nid={{random 7..7}}&n={{random 1..2}}\n";
        CHECK(requests_parse(&body_set, &cfg, body_text, strlen(body_text), "reqs.txt", err, sizeof err) == NULL);
        n = requests_render(&body_set.items[0], vars, out, sizeof out, &head, &missing);
        CHECK(n != SIZE_MAX && n > 10 && (memcmp(out + n - 8, "id=7&n=1", 8) == 0 || memcmp(out + n - 8, "id=7&n=2", 8) == 0));
        CHECK(n != SIZE_MAX && strstr(out, "Content-Length: 8\r\n") != NULL);
        requests_free(&body_set);
        free(vars);
    }
    /* The mix never picks the probe. */
    rng r;
    rng_seed(&r, 1);
    size_t first_done = 1;
    for (int i = 0; i < 200; i++) CHECK(!requests_next(&set, &r, &first_done)->probe);
    requests_free(&set);
    EXPECT_ERROR("--- first probe\nGET /\n---\nGET /\n", "reqs.txt:1: an entry is first or probe, not both");
    EXPECT_ERROR("---\nGET /\n---\n@users u.csv\nGET /\n", "reqs.txt:4: @users goes before the first entry");
    EXPECT_ERROR("---\n@expect code=2\nGET /\n",
                 "reqs.txt:2: expected @expect status=NNN, status=Nxx or body=TEXT");
    EXPECT_ERROR("---\nGET /{{random 3..1}}\n", "reqs.txt:1: {{random 3..1}}: the lowest value comes first");
    EXPECT_ERROR("---\nGET /{{user.login}}\n", "reqs.txt:1: variable 'user.login' is not a column of the @users file");
    char missing_users[300];
    snprintf(missing_users, sizeof missing_users, "@users nope.csv\n---\nGET /\n");
    CHECK(requests_parse(&set, &cfg, missing_users, strlen(missing_users), list, err, sizeof err) != NULL);
    CHECK(strstr(err, "mix.requests:1: cannot open @users file /tmp/rackbench-test-requests-") != NULL);
    unlink(users);
    rmdir(dir);
}

int main(void)
{
    test_minimal_entry();
    test_host_header();
    test_entry_headers();
    test_command_line_headers();
    test_bodies();
    test_cookie_insertion_point();
    test_flags();
    test_attributes_and_order();
    test_crlf_file();
    test_errors();
    test_target_control_characters();
    test_transfer_encoding_refused();
    test_next_first_entries();
    test_next_weights();
    test_next_reproducible();
    test_load_from_flags();
    test_load_from_cli();
    test_load_from_file();
    test_directives();
    test_directive_errors();
    test_probes_expect_users();
    return check_report("requests");
}
