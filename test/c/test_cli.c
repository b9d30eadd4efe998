/*
 * test_cli.c - tests of the command line: URL parsing, the loopback guard,
 * durations, CPU lists and cli_parse on whole argument vectors.
 *
 * cli_parse writes one usage line to stderr (or the help and version text
 * to stdout); cli() captures both, so each refusal is checked for its exit
 * status and for a single "rackbench-engine: ..." line naming the problem.
 *
 * Name resolution only ever sees literal addresses and "localhost" (from
 * /etc/hosts): no test needs the network, and nothing connects anywhere.
 */
#include "check.h"
#include "config.h"
#include "url.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static engine_config cfg; /* 6 KB: off the stack */
static char out_text[8192], err_text[8192];

/* --- capturing cli_parse ------------------------------------------------ */

static void read_all(FILE *f, char *dst, size_t cap)
{
    rewind(f);
    size_t n = fread(dst, 1, cap - 1, f);
    dst[n] = '\0';
    fclose(f);
}

static int cli(int argc, char **argv)
{
    fflush(stdout);
    fflush(stderr);
    FILE *fo = tmpfile(), *fe = tmpfile();
    if (!fo || !fe) {
        perror("tmpfile");
        exit(2);
    }
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(fo), 1);
    dup2(fileno(fe), 2);
    int rc = cli_parse(&cfg, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    read_all(fo, out_text, sizeof out_text);
    read_all(fe, err_text, sizeof err_text);
    return rc;
}

#define ARGS(...) ((char *[]){"rackbench-engine", __VA_ARGS__, NULL})
#define CLI(...) cli((int)(sizeof(ARGS(__VA_ARGS__)) / sizeof(char *)) - 1, ARGS(__VA_ARGS__))

/* A usage error: status 2, nothing on stdout, exactly one stderr line
 * "rackbench-engine: ..." containing needle. */
static int usage_error_is(int rc, const char *needle)
{
    size_t n = strlen(err_text);
    int ok = rc == 2 && out_text[0] == '\0' && strncmp(err_text, "rackbench-engine: ", 18) == 0 && n > 18 &&
             err_text[n - 1] == '\n' && strchr(err_text, '\n') == err_text + n - 1 && strstr(err_text, needle);
    if (!ok) fprintf(stderr, "  status %d, stderr: %s  want a line containing: %s\n", rc, err_text, needle);
    return ok;
}

static int parsed_ok(int rc)
{
    if (rc == 0 && err_text[0] == '\0' && out_text[0] == '\0') return 1;
    fprintf(stderr, "  status %d, stderr: %s", rc, err_text);
    return 0;
}

/* --- url_parse ---------------------------------------------------------- */

static void test_url_parse_accepts(void)
{
    static const struct {
        const char *url, *host, *port, *path;
    } cases[] = {
        {"http://127.0.0.1:8080/path?q", "127.0.0.1", "8080", "/path?q"},
        {"http://[::1]:9/x", "::1", "9", "/x"},
        {"http://[::1]/", "::1", "80", "/"},
        {"http://[::1]", "::1", "80", "/"},
        {"http://localhost/", "localhost", "80", "/"},
        {"http://localhost", "localhost", "80", "/"},
        {"http://h?x", "h", "80", "/?x"},
        {"http://h:81?x=1&y=2", "h", "81", "/?x=1&y=2"},
        {"http://h/a/b#frag", "h", "80", "/a/b"},
        {"http://h#frag", "h", "80", "/"},
        {"http://h?x#y", "h", "80", "/?x"},
        {"http://h/?", "h", "80", "/?"},
        {"http://h:1", "h", "1", "/"},
        {"http://h:65535/", "h", "65535", "/"},
        {"http://h:080/", "h", "80", "/"},
        {"http://Example.TEST/A%20B", "Example.TEST", "80", "/A%20B"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&cfg, 0x5A, sizeof cfg);
        const char *e = url_parse(&cfg, cases[i].url);
        int ok = e == NULL && strcmp(cfg.host, cases[i].host) == 0 && strcmp(cfg.port, cases[i].port) == 0 &&
                 strcmp(cfg.path, cases[i].path) == 0 && strcmp(cfg.url, cases[i].url) == 0;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  url %s: error %s, host '%.255s' port '%.7s' path '%.100s'\n", cases[i].url,
                    e ? e : "none", cfg.host, cfg.port, cfg.path);
    }

    /* The longest host and URL that fit. */
    static char url[MAX_URL_BYTES + 16];
    memset(url, 0, sizeof url);
    strcpy(url, "http://");
    memset(url + 7, 'h', 255);
    strcat(url, "/");
    memset(&cfg, 0, sizeof cfg);
    CHECK(url_parse(&cfg, url) == NULL);
    CHECK_EQ_U64(strlen(cfg.host), 255);

    memset(url, 0, sizeof url);
    strcpy(url, "http://h/");
    memset(url + 9, 'p', MAX_URL_BYTES - 1 - 9);
    CHECK_EQ_U64(strlen(url), MAX_URL_BYTES - 1);
    CHECK(url_parse(&cfg, url) == NULL);
    CHECK_EQ_U64(strlen(cfg.path), MAX_URL_BYTES - 1 - 8);
}

static void test_url_parse_rejects(void)
{
    static const struct {
        const char *url, *needle;
    } cases[] = {
        {"ftp://127.0.0.1/", "http://, https://, ws:// or wss://"},
        {"https://", "no host"},
        {"HTTPS://h/", "http://"},
        {"127.0.0.1:8080/", "http://"},
        {"", "http://"},
        {"http://", "no host"},
        {"http:///x", "no host"},
        {"http://:8080/", "no host"},
        {"http://?x", "no host"},
        {"http://[]/", "no host"},
        {"http://h:0/", "port"},
        {"http://h:65536/", "port"},
        {"http://h:99999/", "port"},
        {"http://h:123456/", "port"},
        {"http://h:abc/", "port"},
        {"http://h:/", "port"},
        {"http://h:-1/", "port"},
        {"http://h:80x/", "after host"},
        {"http://[::1/", "IPv6"},
        {"http://[::1]x/", "after host"},
        {"http://[::1]:/", "port"},
        {"http://h/a b", "spaces"},
        {"http://h/a\tb", "spaces"},
        {"http://h/a\x7f", "spaces"},
        {"http://h?a b", "spaces"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&cfg, 0, sizeof cfg);
        const char *e = url_parse(&cfg, cases[i].url);
        int ok = e != NULL && strstr(e, cases[i].needle) != NULL;
        CHECK(ok);
        if (!ok) fprintf(stderr, "  url '%s': error %s, want one mentioning %s\n", cases[i].url, e ? e : "none",
                         cases[i].needle);
    }

    static char url[MAX_URL_BYTES + 16];
    memset(url, 0, sizeof url);
    strcpy(url, "http://");
    memset(url + 7, 'h', 256);
    strcat(url, "/");
    const char *e = url_parse(&cfg, url);
    CHECK(e != NULL && strstr(e, "host") != NULL);

    memset(url, 0, sizeof url);
    strcpy(url, "http://h/");
    memset(url + 9, 'p', MAX_URL_BYTES - 9);
    e = url_parse(&cfg, url);
    CHECK(e != NULL && strstr(e, "too long") != NULL);
}

/* --- url_resolve and the loopback guard --------------------------------- */

static const char *resolve(const char *host, const char *port, int allow_remote, char *err, size_t err_len)
{
    memset(&cfg, 0, sizeof cfg);
    strcpy(cfg.host, host);
    strcpy(cfg.port, port);
    cfg.allow_remote = allow_remote;
    memset(err, 0, err_len);
    return url_resolve(&cfg, err, err_len);
}

static void test_resolve_loopback(void)
{
    char err[512];
    CHECK(resolve("127.0.0.1", "8080", 0, err, sizeof err) == NULL);
    CHECK(strcmp(cfg.addr_text, "127.0.0.1") == 0);
    CHECK_EQ_U64(cfg.addr_len, sizeof(struct sockaddr_in));
    CHECK_EQ_U64(cfg.addr.ss_family, AF_INET);
    const struct sockaddr_in *in = (const struct sockaddr_in *)&cfg.addr;
    CHECK_EQ_U64(ntohs(in->sin_port), 8080);
    CHECK_EQ_U64(ntohl(in->sin_addr.s_addr), 0x7F000001);

    CHECK(resolve("127.1.2.3", "80", 0, err, sizeof err) == NULL);
    CHECK(strcmp(cfg.addr_text, "127.1.2.3") == 0);
    CHECK(resolve("127.255.255.254", "1", 0, err, sizeof err) == NULL);

    CHECK(resolve("::1", "9", 0, err, sizeof err) == NULL);
    CHECK(strcmp(cfg.addr_text, "::1") == 0);
    CHECK_EQ_U64(cfg.addr.ss_family, AF_INET6);
    CHECK_EQ_U64(cfg.addr_len, sizeof(struct sockaddr_in6));
    CHECK_EQ_U64(ntohs(((const struct sockaddr_in6 *)&cfg.addr)->sin6_port), 9);

    CHECK(resolve("::ffff:127.0.0.1", "80", 0, err, sizeof err) == NULL);

    const char *e = resolve("localhost", "3000", 0, err, sizeof err);
    CHECK(e == NULL);
    if (e) fprintf(stderr, "  localhost: %s\n", e);
    CHECK(strcmp(cfg.addr_text, "127.0.0.1") == 0 || strcmp(cfg.addr_text, "::1") == 0);
}

static void test_resolve_remote(void)
{
    static const char *const remote[] = {"10.1.2.3", "8.8.8.8", "128.0.0.1", "126.255.255.255",
                                         "0.0.0.0",  "2001:db8::1", "::ffff:8.8.8.8", "::"};
    char err[512];
    for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++) {
        const char *e = resolve(remote[i], "80", 0, err, sizeof err);
        int ok = e == err && strstr(err, "--allow-remote") != NULL && strstr(err, remote[i]) != NULL;
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s: %s\n", remote[i], e ? e : "accepted");
        CHECK_EQ_U64(cfg.addr_len, 0); /* nothing filled in */
    }

    CHECK(resolve("10.1.2.3", "8080", 1, err, sizeof err) == NULL);
    CHECK(strcmp(cfg.addr_text, "10.1.2.3") == 0);
    CHECK_EQ_U64(ntohs(((const struct sockaddr_in *)&cfg.addr)->sin_port), 8080);
    CHECK(resolve("2001:db8::1", "80", 1, err, sizeof err) == NULL);
    CHECK(strcmp(cfg.addr_text, "2001:db8::1") == 0);

    /* A short error buffer truncates. */
    char small[16];
    memset(small, 'Z', sizeof small);
    CHECK(resolve("8.8.8.8", "80", 0, small, 10) == small);
    CHECK_EQ_U64(strlen(small), 9);
}

/* --- durations and CPU lists -------------------------------------------- */

static void test_durations(void)
{
    static const struct {
        const char *text;
        uint64_t ns;
    } good[] = {
        {"10", 10000000000ull},   {"10s", 10000000000ull}, {"250ms", 250000000ull},
        {"1.5m", 90000000000ull}, {"100us", 100000ull},    {"1h", 3600000000000ull},
        {"0", 0},                 {"0.5", 500000000ull},   {"2m", 120000000000ull},
        {"1.5ms", 1500000ull},    {"1us", 1000ull},        {"0.0005ms", 500ull},
        {"240h", 864000000000000ull},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        uint64_t ns = 12345;
        int rc = cli_parse_duration(good[i].text, &ns);
        CHECK(rc == 0 && ns == good[i].ns);
        if (rc != 0 || ns != good[i].ns)
            fprintf(stderr, "  duration '%s': rc %d, %llu ns\n", good[i].text, rc, (unsigned long long)ns);
    }
    static const char *const bad[] = {"",   "-1",  "10x", "abc",   "1e30", "s",   "ms",  "10 s",
                                      "10S", "1d", "nan", "inf",  "-inf", "10sec", "1mss", "300h"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t ns = 0;
        int rc = cli_parse_duration(bad[i], &ns);
        CHECK(rc == -1);
        if (rc != -1) fprintf(stderr, "  duration '%s' accepted as %llu ns\n", bad[i], (unsigned long long)ns);
    }
    uint64_t ns;
    CHECK(cli_parse_duration(NULL, &ns) == -1);
}

static void test_cpus(void)
{
    int cpus[MAX_CPUS];
    CHECK(cli_parse_cpus("0", cpus, MAX_CPUS) == 1 && cpus[0] == 0);
    CHECK(cli_parse_cpus("1,3", cpus, MAX_CPUS) == 2 && cpus[0] == 1 && cpus[1] == 3);
    CHECK(cli_parse_cpus("0-3,6", cpus, MAX_CPUS) == 5 && cpus[0] == 0 && cpus[1] == 1 && cpus[2] == 2 &&
          cpus[3] == 3 && cpus[4] == 6);
    CHECK(cli_parse_cpus("5-5", cpus, MAX_CPUS) == 1 && cpus[0] == 5);
    CHECK(cli_parse_cpus("7,2-3", cpus, MAX_CPUS) == 3 && cpus[0] == 7 && cpus[1] == 2 && cpus[2] == 3);
    CHECK(cli_parse_cpus("4095", cpus, MAX_CPUS) == 1 && cpus[0] == 4095);
    CHECK(cli_parse_cpus("0-255", cpus, MAX_CPUS) == 256 && cpus[255] == 255);

    /* max is respected: never a write past cpus[max - 1]. */
    int four[5] = {-1, -1, -1, -1, -7};
    CHECK(cli_parse_cpus("0-3", four, 4) == 4 && four[3] == 3);
    four[4] = -7;
    CHECK(cli_parse_cpus("0-4", four, 4) == -1);
    CHECK(cli_parse_cpus("0,1,2,3,4", four, 4) == -1);
    CHECK(four[4] == -7);
    CHECK(cli_parse_cpus("0-256", cpus, MAX_CPUS) == -1);

    static const char *const bad[] = {"3-1", "a", "1,,2", "", ",1", "1-", "-1", "1-a", "1;2",
                                      "4096", "0-4096", "1 2", "1-2-3", "1,"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = cli_parse_cpus(bad[i], cpus, MAX_CPUS);
        CHECK(rc == -1);
        if (rc != -1) fprintf(stderr, "  cpus '%s' accepted (%d)\n", bad[i], rc);
    }
    CHECK(cli_parse_cpus(NULL, cpus, MAX_CPUS) == -1);
}

/* --- cli_parse ---------------------------------------------------------- */

static void test_defaults(void)
{
    memset(&cfg, 0x5A, sizeof cfg);
    CHECK(parsed_ok(CLI("http://127.0.0.1:8080/p?q=1")));
    CHECK_EQ_U64(cfg.connections, 10);
    CHECK_EQ_U64(cfg.threads, 1);
    CHECK_EQ_U64(cfg.duration_ns, 10000000000ull);
    CHECK_EQ_U64(cfg.warmup_ns, 0);
    CHECK_EQ_U64(cfg.timeout_ns, 2000000000ull);
    CHECK(cfg.rate_per_s == 0);
    CHECK_EQ_U64(cfg.keepalive, 1);
    CHECK(cfg.method && strcmp(cfg.method, "GET") == 0);
    CHECK_EQ_U64(cfg.header_count, 0);
    CHECK(cfg.body == NULL);
    CHECK_EQ_U64(cfg.body_len, 0);
    CHECK(cfg.requests_file == NULL);
    CHECK_EQ_U64(cfg.cookies, 0);
    CHECK_EQ_U64(cfg.cookie_count, 0);
    CHECK_EQ_U64(cfg.seed, 1);
    CHECK(cfg.raw_file == NULL);
    CHECK_EQ_U64(cfg.cpu_count, 0);
    CHECK_EQ_U64(cfg.allow_remote, 0);
    CHECK(cfg.phase_fd == -1);
    CHECK(strcmp(cfg.url, "http://127.0.0.1:8080/p?q=1") == 0);
    CHECK(strcmp(cfg.host, "127.0.0.1") == 0);
    CHECK(strcmp(cfg.port, "8080") == 0);
    CHECK(strcmp(cfg.path, "/p?q=1") == 0);
    CHECK(strcmp(cfg.addr_text, "127.0.0.1") == 0);
    CHECK_EQ_U64(cfg.addr.ss_family, AF_INET);
    CHECK_EQ_U64(ntohs(((const struct sockaddr_in *)&cfg.addr)->sin_port), 8080);
}

static void test_all_options(void)
{
    CHECK(parsed_ok(CLI("-c", "50", "-t", "4", "-d", "2m", "-w", "500ms", "-R", "1000.5", "-k", "-H", "X-A: 1",
                        "-H", "X-B:2", "-m", "POST", "--body", "x=1&y=2", "--timeout", "250ms", "--cookies",
                        "--seed", "42", "--raw", "/tmp/raw.csv", "--cpus", "0-1,3", "http://localhost:3000/p")));
    CHECK_EQ_U64(cfg.connections, 50);
    CHECK_EQ_U64(cfg.threads, 4);
    CHECK_EQ_U64(cfg.duration_ns, 120000000000ull);
    CHECK_EQ_U64(cfg.warmup_ns, 500000000ull);
    CHECK(cfg.rate_per_s == 1000.5);
    CHECK_EQ_U64(cfg.keepalive, 0);
    CHECK_EQ_U64(cfg.header_count, 2);
    CHECK(cfg.headers[0] && strcmp(cfg.headers[0], "X-A: 1") == 0);
    CHECK(cfg.headers[1] && strcmp(cfg.headers[1], "X-B:2") == 0);
    CHECK(cfg.method && strcmp(cfg.method, "POST") == 0);
    CHECK(cfg.body && strcmp(cfg.body, "x=1&y=2") == 0);
    CHECK_EQ_U64(cfg.body_len, 7);
    CHECK_EQ_U64(cfg.timeout_ns, 250000000ull);
    CHECK_EQ_U64(cfg.cookies, 1);
    CHECK_EQ_U64(cfg.seed, 42);
    CHECK(cfg.raw_file && strcmp(cfg.raw_file, "/tmp/raw.csv") == 0);
    CHECK_EQ_U64(cfg.cpu_count, 3);
    CHECK(cfg.cpus[0] == 0 && cfg.cpus[1] == 1 && cfg.cpus[2] == 3);
    CHECK(strcmp(cfg.host, "localhost") == 0 && strcmp(cfg.port, "3000") == 0 && strcmp(cfg.path, "/p") == 0);

    /* Long forms, with "=" and separate values, options after the URL. */
    CHECK(parsed_ok(CLI("http://[::1]:9/", "--connections=3", "--threads", "3", "--duration=1.5s", "--warmup", "1s",
                        "--rate=20", "--no-keepalive", "--header=Accept: */*", "--method", "PUT", "--body=",
                        "--seed=18446744073709551615", "--allow-remote", "--timeout=1ms")));
    CHECK_EQ_U64(cfg.connections, 3);
    CHECK_EQ_U64(cfg.threads, 3);
    CHECK_EQ_U64(cfg.duration_ns, 1500000000ull);
    CHECK_EQ_U64(cfg.warmup_ns, 1000000000ull);
    CHECK(cfg.rate_per_s == 20);
    CHECK_EQ_U64(cfg.keepalive, 0);
    CHECK_EQ_U64(cfg.header_count, 1);
    CHECK(cfg.headers[0] && strcmp(cfg.headers[0], "Accept: */*") == 0);
    CHECK(cfg.method && strcmp(cfg.method, "PUT") == 0);
    CHECK(cfg.body && cfg.body[0] == '\0');
    CHECK_EQ_U64(cfg.body_len, 0);
    CHECK_EQ_U64(cfg.seed, UINT64_MAX);
    CHECK_EQ_U64(cfg.allow_remote, 1);
    CHECK_EQ_U64(cfg.timeout_ns, 1000000ull);
    CHECK(strcmp(cfg.host, "::1") == 0 && strcmp(cfg.addr_text, "::1") == 0);

    /* The phase descriptor: 3 and up (0-2 are the engine's own). */
    CHECK(parsed_ok(CLI("--phase-fd", "3", "http://127.0.0.1/")));
    CHECK(cfg.phase_fd == 3);
    CHECK(parsed_ok(CLI("--phase-fd=65535", "http://127.0.0.1/")));
    CHECK(cfg.phase_fd == 65535);
    CHECK(usage_error_is(CLI("--phase-fd", "2", "http://127.0.0.1/"), "invalid --phase-fd '2'"));
    CHECK(usage_error_is(CLI("--phase-fd", "x", "http://127.0.0.1/"), "invalid --phase-fd 'x'"));

    /* Each parse starts from the defaults, not from the previous one. */
    CHECK(parsed_ok(CLI("http://127.0.0.1/")));
    CHECK(cfg.phase_fd == -1);
    CHECK_EQ_U64(cfg.connections, 10);
    CHECK_EQ_U64(cfg.header_count, 0);
    CHECK_EQ_U64(cfg.keepalive, 1);
    CHECK(cfg.body == NULL);
    CHECK_EQ_U64(cfg.seed, 1);
    CHECK_EQ_U64(cfg.allow_remote, 0);
    CHECK(strcmp(cfg.port, "80") == 0);

    /* 64 headers are accepted. */
    char *argv[2 + 2 * MAX_HEADERS + 2 + 1];
    static char names[MAX_HEADERS + 1][24];
    int argc = 0;
    argv[argc++] = "rackbench-engine";
    for (int i = 0; i < MAX_HEADERS; i++) {
        snprintf(names[i], sizeof names[i], "X-%d: v", i);
        argv[argc++] = "-H";
        argv[argc++] = names[i];
    }
    argv[argc++] = "http://127.0.0.1/";
    argv[argc] = NULL;
    CHECK(parsed_ok(cli(argc, argv)));
    CHECK_EQ_U64(cfg.header_count, MAX_HEADERS);
    CHECK(strcmp(cfg.headers[MAX_HEADERS - 1], "X-63: v") == 0);

    /* The 65th is refused. */
    argc--;
    snprintf(names[MAX_HEADERS], sizeof names[MAX_HEADERS], "X-64: v");
    argv[argc++] = "-H";
    argv[argc++] = names[MAX_HEADERS];
    argv[argc++] = "http://127.0.0.1/";
    argv[argc] = NULL;
    CHECK(usage_error_is(cli(argc, argv), "too many --header"));
}

static void test_invalid_values(void)
{
    static const struct {
        const char *args[6];
        const char *needle;
    } cases[] = {
        {{"-c", "0"}, "--connections '0'"},
        {{"-c", "abc"}, "--connections 'abc'"},
        {{"-c", "5x"}, "--connections '5x'"},
        {{"-c", ""}, "--connections ''"},
        {{"-c", "-3"}, "--connections '-3'"},
        {{"-c", "1000001"}, "--connections"},
        {{"--connections=99999999999999999999"}, "--connections"},
        {{"-t", "0"}, "--threads '0'"},
        {{"-t", "1025"}, "--threads '1025'"},
        {{"-t", "two"}, "--threads"},
        {{"-d", "0"}, "--duration '0'"},
        {{"-d", "abc"}, "--duration"},
        {{"-d", "10x"}, "--duration"},
        {{"-d", "-1s"}, "--duration"},
        {{"-d", "1e30"}, "--duration"},
        {{"-w", "-1"}, "--warmup '-1'"},
        {{"-w", "soon"}, "--warmup"},
        {{"-R", "0"}, "--rate '0'"},
        {{"-R", "-5"}, "--rate"},
        {{"-R", "abc"}, "--rate"},
        {{"-R", "10/s"}, "--rate"},
        {{"-R", "inf"}, "--rate"},
        {{"-R", "nan"}, "--rate"},
        {{"-R", "1e9"}, "--rate"},
        {{"-R", ""}, "--rate"},
        {{"-H", "novalue"}, "--header 'novalue'"},
        {{"-H", ": v"}, "--header"},
        {{"-H", "X A: 1"}, "--header"},
        {{"-H", "X-A: a\r\nInjected: 1"}, "--header"},
        {{"-H", "X-A: a\nB: c"}, "--header"},
        {{"-H", ""}, "--header"},
        {{"-m", "get"}, "--method 'get'"},
        {{"-m", "GE T"}, "--method"},
        {{"-m", "GET\r\n"}, "--method"},
        {{"-m", ""}, "method"},
        {{"--timeout", "0"}, "--timeout '0'"},
        {{"--timeout", "500us"}, "--timeout '500us'"},
        {{"--timeout", "x"}, "--timeout"},
        {{"--seed", "-1"}, "--seed '-1'"},
        {{"--seed", "abc"}, "--seed"},
        {{"--seed", "18446744073709551616"}, "--seed"},
        {{"--seed", ""}, "--seed"},
        {{"--cpus", "3-1"}, "--cpus '3-1'"},
        {{"--cpus", ""}, "--cpus"},
        {{"--cpus", "a"}, "--cpus"},
        {{"--bogus"}, "unknown option '--bogus'"},
        {{"--co", "5"}, "unknown option '--co'"}, /* ambiguous: connections, cookies */
        {{"-x"}, "unknown option '-x'"},
        {{"--cookies=yes"}, "--cookies"},
        {{"--cookie", "novalue"}, "invalid --cookie 'novalue' (expected 'name=value')"},
        {{"--cookie", "=v"}, "--cookie"},
        {{"--cookie", "a=b; c=d"}, "--cookie"},
        {{"--cookie", "a b=c"}, "--cookie"},
        {{"--cookie", "a=b\r\n"}, "--cookie"},
        {{"--connections"}, "option --connections needs a value"},
        {{"-c"}, "option -c needs a value"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *argv[10];
        int argc = 0;
        argv[argc++] = "rackbench-engine";
        /* The URL first for the options that end in a missing value. */
        argv[argc++] = "http://127.0.0.1:8080/";
        for (int k = 0; k < 6 && cases[i].args[k]; k++) argv[argc++] = (char *)cases[i].args[k];
        argv[argc] = NULL;
        int rc = cli(argc, argv);
        CHECK_EQ_U64(rc, 2);
        int ok = usage_error_is(rc, cases[i].needle);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  (case %zu: %s %s)\n", i, cases[i].args[0], cases[i].args[1] ? cases[i].args[1] : "");
    }
}

static void test_cookie_presets(void)
{
    CHECK(parsed_ok(CLI("--cookie", "sid=abc", "--cookie", "theme=dark=1", "http://127.0.0.1:8080/")));
    CHECK_EQ_U64(cfg.cookie_count, 2);
    CHECK_EQ_U64(cfg.cookies, 1); /* a preset needs the jar */
    CHECK(cfg.cookie_count == 2 && strcmp(cfg.cookie_presets[0], "sid=abc") == 0 &&
          strcmp(cfg.cookie_presets[1], "theme=dark=1") == 0);
    CHECK(parsed_ok(CLI("--cookies", "http://127.0.0.1:8080/")));
    CHECK_EQ_U64(cfg.cookie_count, 0);
    CHECK_EQ_U64(cfg.cookies, 1);
}

static void test_arguments(void)
{
    char *no_url[] = {"rackbench-engine", NULL};
    CHECK(usage_error_is(cli(1, no_url), "missing URL"));
    CHECK(usage_error_is(CLI("-c", "5"), "missing URL"));
    CHECK(usage_error_is(CLI("http://127.0.0.1/a", "http://127.0.0.1/b"), "unexpected argument 'http://127.0.0.1/b'"));
    CHECK(usage_error_is(CLI("http://127.0.0.1/a", "-k", "extra"), "unexpected argument 'extra'"));
    CHECK(usage_error_is(CLI("ftp://127.0.0.1/"), "invalid URL"));
    CHECK(usage_error_is(CLI("http://127.0.0.1:0/"), "port"));
    CHECK(usage_error_is(CLI("127.0.0.1:8080"), "http://"));

    /* "--" ends the options: a URL-like word after it is the URL. */
    CHECK(parsed_ok(CLI("-c", "3", "--", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.connections, 3);
}

static void test_threads_and_connections(void)
{
    /* threads defaults to 1, connections are at least 1. */
    CHECK(parsed_ok(CLI("-c", "1", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.connections, 1);
    CHECK_EQ_U64(cfg.threads, 1);
    CHECK(parsed_ok(CLI("-c", "4", "-t", "4", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.threads, 4);
    CHECK(parsed_ok(CLI("-t", "2", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.threads, 2);
    CHECK_EQ_U64(cfg.connections, 10);
    CHECK(usage_error_is(CLI("-c", "2", "-t", "4", "http://127.0.0.1/"), "--threads 4 exceeds --connections 2"));
    CHECK(usage_error_is(CLI("-t", "11", "http://127.0.0.1/"), "--threads 11 exceeds --connections 10"));
}

/* --protocol and --streams: http1 with one stream unless told; h2c with
 * N streams; what h2c cannot be combined with. */
static void test_protocol_and_streams(void)
{
    CHECK(parsed_ok(CLI("http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.protocol, PROTOCOL_HTTP1);
    CHECK_EQ_U64(cfg.streams, 1);
    CHECK(parsed_ok(CLI("--protocol", "h2c", "--streams", "10", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.protocol, PROTOCOL_H2C);
    CHECK_EQ_U64(cfg.streams, 10);
    CHECK(parsed_ok(CLI("--protocol=http1", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.protocol, PROTOCOL_HTTP1);
    CHECK(usage_error_is(CLI("--protocol", "h3", "http://127.0.0.1/"), "invalid --protocol 'h3' (expected http1, h2c or h2)"));
    CHECK(usage_error_is(CLI("--protocol", "h2c", "--streams", "0", "http://127.0.0.1/"), "invalid --streams '0'"));
    CHECK(usage_error_is(CLI("--protocol", "h2c", "--streams", "10001", "http://127.0.0.1/"), "invalid --streams"));
    CHECK(usage_error_is(CLI("--streams", "4", "http://127.0.0.1/"), "--streams 4 needs --protocol h2c"));
    CHECK(usage_error_is(CLI("--protocol", "h2c", "-k", "http://127.0.0.1/"),
                         "--no-keepalive cannot be combined with --protocol h2c"));
    CHECK(usage_error_is(CLI("--protocol", "h2c", "--cookies", "http://127.0.0.1/"), "not supported with --protocol h2c"));
    CHECK(usage_error_is(CLI("--protocol", "h2c", "--cookie", "a=b", "http://127.0.0.1/"),
                         "not supported with --protocol h2c"));
}

/* --count: a window of N requests, closed loop; --hold-fd holds its edges. */
static void test_count_window(void)
{
    CHECK(parsed_ok(CLI("http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.count, 0);
    CHECK(cfg.hold_fd == -1);
    CHECK(parsed_ok(CLI("--count", "20000", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.count, 20000);
    CHECK(parsed_ok(CLI("-n", "1", "-w", "2s", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.count, 1);
    CHECK(parsed_ok(CLI("-n", "5", "--phase-fd", "3", "--hold-fd", "4", "http://127.0.0.1/")));
    CHECK(cfg.hold_fd == 4);
    CHECK(usage_error_is(CLI("-n", "0", "http://127.0.0.1/"), "invalid --count '0' (expected an integer >= 1)"));
    CHECK(usage_error_is(CLI("-n", "-3", "http://127.0.0.1/"), "invalid --count '-3'"));
    CHECK(usage_error_is(CLI("-n", "5x", "http://127.0.0.1/"), "invalid --count '5x'"));
    CHECK(usage_error_is(CLI("-n", "5", "-d", "2s", "http://127.0.0.1/"),
                         "--count and --duration both end the measured window: give one"));
    CHECK(usage_error_is(CLI("-n", "5", "-R", "100", "http://127.0.0.1/"), "cannot be combined with --rate"));
    CHECK(usage_error_is(CLI("-n", "5", "--protocol", "h2c", "http://127.0.0.1/"),
                         "--count is not supported with --protocol h2c or h2 yet"));
    CHECK(usage_error_is(CLI("--phase-fd", "3", "--hold-fd", "4", "http://127.0.0.1/"), "--hold-fd needs --count"));
    CHECK(usage_error_is(CLI("-n", "5", "--hold-fd", "4", "http://127.0.0.1/"), "--hold-fd needs --phase-fd"));
    CHECK(usage_error_is(CLI("-n", "5", "--phase-fd", "4", "--hold-fd", "4", "http://127.0.0.1/"), "must differ"));
    CHECK(usage_error_is(CLI("-n", "5", "--phase-fd", "3", "--hold-fd", "1", "http://127.0.0.1/"),
                         "invalid --hold-fd '1'"));
}

/* --warmup-count: with --count, a warmup of N requests. */
static void test_warmup_count(void)
{
    CHECK(parsed_ok(CLI("-n", "100", "--warmup-count", "500", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.warmup_count, 500);
    CHECK(parsed_ok(CLI("-n", "100", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.warmup_count, 0);
    CHECK(usage_error_is(CLI("--warmup-count", "5", "http://127.0.0.1/"), "--warmup-count needs --count"));
    CHECK(usage_error_is(CLI("-n", "9", "--warmup-count", "5", "-w", "1s", "http://127.0.0.1/"),
                         "--warmup-count and --warmup both end the warmup: give one"));
    CHECK(usage_error_is(CLI("-n", "9", "--warmup-count", "x", "http://127.0.0.1/"), "invalid --warmup-count 'x'"));
}

/* --think: a closed-loop client's pause between a response and its next request. */
static void test_think(void)
{
    CHECK(parsed_ok(CLI("http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.think_ns, 0);
    CHECK(parsed_ok(CLI("--think", "10ms", "-n", "100", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.think_ns, 10000000);
    CHECK(parsed_ok(CLI("--think=0", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.think_ns, 0);
    CHECK(usage_error_is(CLI("--think", "soon", "http://127.0.0.1/"), "invalid --think 'soon'"));
    CHECK(usage_error_is(CLI("--think", "5ms", "-R", "10", "http://127.0.0.1/"), "cannot be combined with --rate"));
    CHECK(usage_error_is(CLI("--think", "5ms", "--protocol", "h2c", "http://127.0.0.1/"),
                         "--think is not supported with --protocol h2c or h2 yet"));
}

/* https:// URLs: TLS on, port 443 unless given, the certificate checked
 * and sessions resumed unless told; h2 is HTTP/2 over TLS, h2c over
 * cleartext; the TLS options need https. */
static void test_tls(void)
{
    CHECK(parsed_ok(CLI("http://127.0.0.1/")));
    CHECK(!cfg.tls);
    CHECK(parsed_ok(CLI("https://127.0.0.1/x")));
    CHECK(cfg.tls && strcmp(cfg.port, "443") == 0 && strcmp(cfg.path, "/x") == 0);
    CHECK(cfg.tls_verify && cfg.tls_resume && cfg.ca_file == NULL);
    CHECK(parsed_ok(CLI("--cacert", "ca.pem", "--no-tls-resume", "https://127.0.0.1:8443/")));
    CHECK(strcmp(cfg.port, "8443") == 0 && cfg.ca_file && strcmp(cfg.ca_file, "ca.pem") == 0);
    CHECK(cfg.tls_verify && !cfg.tls_resume);
    CHECK(parsed_ok(CLI("--insecure", "https://[::1]:8443/")));
    CHECK(!cfg.tls_verify && strcmp(cfg.host, "::1") == 0);
    CHECK(parsed_ok(CLI("--protocol", "h2", "--streams", "8", "https://127.0.0.1/")));
    CHECK_EQ_U64(cfg.protocol, PROTOCOL_H2);
    CHECK_EQ_U64(cfg.streams, 8);
    CHECK(usage_error_is(CLI("--protocol", "h2", "http://127.0.0.1/"), "--protocol h2 is HTTP/2 over TLS"));
    CHECK(usage_error_is(CLI("--protocol", "h2c", "https://127.0.0.1/"), "use --protocol h2 for an https:// URL"));
    CHECK(usage_error_is(CLI("--protocol", "h2", "-k", "https://127.0.0.1/"),
                         "--no-keepalive cannot be combined with --protocol h2"));
    CHECK(usage_error_is(CLI("--protocol", "h2", "--cookies", "https://127.0.0.1/"), "not supported with --protocol h2"));
    CHECK(usage_error_is(CLI("--insecure", "http://127.0.0.1/"), "apply to https:// and wss:// URLs only"));
    CHECK(usage_error_is(CLI("--cacert", "ca.pem", "http://127.0.0.1/"), "apply to https:// and wss:// URLs only"));
    CHECK(usage_error_is(CLI("--no-tls-resume", "http://127.0.0.1/"), "apply to https:// and wss:// URLs only"));
    CHECK(usage_error_is(CLI("--cacert", "ca.pem", "--insecure", "https://127.0.0.1/"), "contradict"));
    CHECK(usage_error_is(CLI("--cacert=", "https://127.0.0.1/"), "empty --cacert"));
}

static void test_requests_file_combinations(void)
{
    CHECK(parsed_ok(CLI("--requests", "/nonexistent/reqs.txt", "http://127.0.0.1/")));
    CHECK(cfg.requests_file && strcmp(cfg.requests_file, "/nonexistent/reqs.txt") == 0);
    CHECK(parsed_ok(CLI("--requests=r.txt", "--cookies", "-H", "X-A: 1", "http://127.0.0.1/")));
    CHECK(usage_error_is(CLI("--requests", "r.txt", "--method", "POST", "http://127.0.0.1/"), "--requests"));
    CHECK(usage_error_is(CLI("-m", "POST", "--requests", "r.txt", "http://127.0.0.1/"), "--requests"));
    CHECK(usage_error_is(CLI("--requests", "r.txt", "--body", "x", "http://127.0.0.1/"), "--requests"));
    CHECK(usage_error_is(CLI("--requests", "r.txt", "--body=", "http://127.0.0.1/"), "--requests"));
}

static void test_remote_targets(void)
{
    CHECK(usage_error_is(CLI("http://10.1.2.3:8080/"), "--allow-remote"));
    CHECK(strstr(err_text, "10.1.2.3") != NULL);
    CHECK(usage_error_is(CLI("http://8.8.8.8/"), "--allow-remote"));
    CHECK(usage_error_is(CLI("http://[2001:db8::1]/"), "--allow-remote"));
    CHECK(parsed_ok(CLI("--allow-remote", "http://10.1.2.3:8080/")));
    CHECK(strcmp(cfg.addr_text, "10.1.2.3") == 0);
    CHECK_EQ_U64(cfg.allow_remote, 1);
    CHECK(parsed_ok(CLI("http://127.1.2.3:8080/")));
    CHECK(parsed_ok(CLI("http://localhost:8080/")));
    CHECK(parsed_ok(CLI("http://[::1]:8080/")));
}

static void test_help_and_version(void)
{
    CHECK_EQ_U64(CLI("--help"), -1);
    CHECK(strncmp(out_text, "Usage: rackbench-engine [options] URL\n", 38) == 0);
    CHECK(strstr(out_text, "--allow-remote") != NULL);
    CHECK(err_text[0] == '\0');
    CHECK_EQ_U64(CLI("-h"), -1);
    CHECK(strncmp(out_text, "Usage: ", 7) == 0);

    CHECK_EQ_U64(CLI("--version"), -1);
    CHECK(strcmp(out_text, "rackbench-engine " ENGINE_VERSION "\n") == 0);
    CHECK(err_text[0] == '\0');
    CHECK_EQ_U64(CLI("-V", "http://127.0.0.1/"), -1);
    CHECK(strcmp(out_text, "rackbench-engine " ENGINE_VERSION "\n") == 0);

    /* Help wins over a broken rest of the line that comes after it. */
    CHECK_EQ_U64(CLI("-h", "-c", "0"), -1);
}

/* cli_parse resets getopt itself, so it can run again in one process even
 * after it stopped in the middle of a bundle of short options. */
static void test_reparse_after_bundle(void)
{
    CHECK_EQ_U64(CLI("-Vk", "http://127.0.0.1/"), -1);
    CHECK(parsed_ok(CLI("http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.keepalive, 1); /* the 'k' of "-Vk" must not leak in */

    CHECK(usage_error_is(CLI("-xk", "http://127.0.0.1/"), "-x"));
    CHECK(parsed_ok(CLI("http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.keepalive, 1);

    /* Bundles that run to completion. */
    CHECK(parsed_ok(CLI("-kc5", "-t2", "http://127.0.0.1/")));
    CHECK_EQ_U64(cfg.keepalive, 0);
    CHECK_EQ_U64(cfg.connections, 5);
    CHECK_EQ_U64(cfg.threads, 2);
}

/* ws:// and wss://: the WebSocket options, their defaults, and what they
 * cannot be combined with. */
static void test_websocket(void) {
    CHECK(parsed_ok(CLI("ws://127.0.0.1:3000/cable")));
    CHECK(cfg.ws && !cfg.tls);
    CHECK(strcmp(cfg.port, "3000") == 0 && strcmp(cfg.path, "/cable") == 0);
    CHECK(cfg.ws_workload == WS_WORKLOAD_ECHO);
    CHECK_EQ_U64(cfg.ws_message_bytes, 64);
    CHECK_EQ_U64(cfg.ws_interval_ns, 1000000000ULL);
    CHECK(parsed_ok(CLI("wss://127.0.0.1/", "--insecure")));
    CHECK(cfg.ws && cfg.tls && strcmp(cfg.port, "443") == 0);
    CHECK(parsed_ok(CLI("-c", "2000", "--workload", "connect", "--ramp", "5s", "ws://127.0.0.1/")));
    CHECK(cfg.ws_workload == WS_WORKLOAD_CONNECT && cfg.ws_ramp_ns == 5000000000ULL && cfg.connections == 2000);
    CHECK(parsed_ok(CLI("--workload", "broadcast", "--interval", "100ms", "--cable", "--channel", "Room",
                        "--channel-params", "{\"room\":\"1\"}", "--broadcast-url", "http://127.0.0.1:3000/broadcast",
                        "ws://127.0.0.1:3000/cable")));
    CHECK(cfg.ws_workload == WS_WORKLOAD_BROADCAST && cfg.ws_cable && cfg.ws_broadcaster == WS_BROADCASTER_HTTP);
    CHECK(strcmp(cfg.ws_broadcast_path, "/broadcast") == 0 && strcmp(cfg.ws_broadcast_host, "127.0.0.1:3000") == 0);
    CHECK(cfg.ws_broadcast_addr_len > 0);
    CHECK(parsed_ok(CLI("--binary", "--fragment-bytes", "10", "--message-bytes", "1000", "-R", "500",
                        "ws://127.0.0.1/")));
    CHECK(cfg.ws_binary && cfg.ws_fragment_bytes == 10 && cfg.ws_message_bytes == 1000);

    CHECK(usage_error_is(CLI("--workload", "echo", "http://127.0.0.1/"), "apply to ws:// and wss:// URLs only"));
    CHECK(usage_error_is(CLI("--workload", "storm", "ws://127.0.0.1/"), "expected connect, echo or broadcast"));
    CHECK(usage_error_is(CLI("--requests", "r.txt", "ws://127.0.0.1/"), "--requests: for HTTP URLs only"));
    CHECK(usage_error_is(CLI("--count", "10", "ws://127.0.0.1/"), "for HTTP URLs only"));
    CHECK(usage_error_is(CLI("-k", "ws://127.0.0.1/"), "--no-keepalive: for HTTP URLs only"));
    CHECK(usage_error_is(CLI("--protocol", "h2c", "ws://127.0.0.1/"), "for HTTP URLs only"));
    CHECK(usage_error_is(CLI("-R", "10", "--workload", "broadcast", "ws://127.0.0.1/"), "does not apply to broadcast"));
    CHECK(usage_error_is(CLI("--broadcast-url", "http://127.0.0.1/b", "ws://127.0.0.1/"), "needs --workload broadcast"));
    CHECK(usage_error_is(CLI("--broadcast-url", "ws://127.0.0.1/b", "ws://127.0.0.1/"), "an http:// URL"));
    CHECK(usage_error_is(CLI("--workload", "broadcast", "--broadcast-url", "http://8.8.8.8/b", "ws://127.0.0.1/"),
                         "not a loopback address"));
    CHECK(usage_error_is(CLI("--channel", "Room", "ws://127.0.0.1/"), "need --cable"));
    CHECK(usage_error_is(CLI("--channel", "a\"b", "--cable", "ws://127.0.0.1/"), "invalid --channel"));
    CHECK(usage_error_is(CLI("--cable", "--binary", "ws://127.0.0.1/"), "Action Cable speaks JSON text"));
    CHECK(usage_error_is(CLI("--message-bytes", "0", "ws://127.0.0.1/"), "invalid --message-bytes"));
    CHECK(usage_error_is(CLI("--message-bytes", "2000", "--max-message-bytes", "1000", "ws://127.0.0.1/"),
                         "larger than --max-message-bytes"));
    CHECK(usage_error_is(CLI("--interval", "0", "--workload", "broadcast", "ws://127.0.0.1/"), "invalid --interval"));
    CHECK(usage_error_is(CLI("ws://8.8.8.8/"), "not a loopback address"));
}

int main(void)
{
    test_cookie_presets();
    test_url_parse_accepts();
    test_url_parse_rejects();
    test_resolve_loopback();
    test_resolve_remote();
    test_durations();
    test_cpus();
    test_defaults();
    test_all_options();
    test_invalid_values();
    test_arguments();
    test_threads_and_connections();
    test_protocol_and_streams();
    test_count_window();
    test_think();
    test_warmup_count();
    test_tls();
    test_requests_file_combinations();
    test_remote_targets();
    test_help_and_version();
    test_websocket();
    test_reparse_after_bundle();
    return check_report("cli");
}
