/* cli.c - command line parsing for rackbench-engine. See config.h. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "url.h"
#include "ws_options.h"

static const char usage_text[] =
    "Usage: rackbench-engine [options] URL\n"
    "Drives HTTP/1.1 or HTTP/2 load at URL (http:// or https://), or WebSocket\n"
    "clients (ws:// or wss://), and prints one JSON document on stdout.\n"
    "  -c, --connections N   concurrent connections (default 10)\n"
    "  -t, --threads N       engine threads, each with its own event loop (default 1)\n"
    "  -d, --duration D      measured window: 10s, 500ms, 2m (default 10s)\n"
    "  -n, --count N         measured window of exactly N requests instead, closed\n"
    "                        loop: it opens once the warmup's requests are done and\n"
    "                        ends when the N have completed\n"
    "  -w, --warmup D        warmup before the measured window (default 0)\n"
    "      --warmup-count N  with --count: a warmup of N requests instead\n"
    "  -R, --rate R          open loop: R requests/s overall, latency from the\n"
    "                        scheduled send time (default: closed loop)\n"
    "      --think D         closed loop: in the measured window, each connection\n"
    "                        waits D after a response before its next request\n"
    "                        (default 0; the warmup runs without pauses)\n"
    "  -k, --no-keepalive    close on the client side after every response\n"
    "      --protocol P      http1 (default); h2c (HTTP/2 over cleartext, prior\n"
    "                        knowledge, http:// URL); h2 (HTTP/2 over TLS by\n"
    "                        ALPN, https:// URL)\n"
    "      --streams N       HTTP/2: concurrent streams per connection (default 1)\n"
    "      --cacert FILE     https: trust the certificates in FILE (PEM) instead\n"
    "                        of the system's\n"
    "      --insecure        https: do not check the server's certificate (a\n"
    "                        self-signed one in local benchmarking)\n"
    "      --no-tls-resume   https: a full handshake on every new connection (by\n"
    "                        default a reconnecting slot resumes its session)\n"
    "  -H, --header 'K: V'   add a request header (repeatable)\n"
    "  -m, --method M        request method (default GET)\n"
    "      --body TEXT       request body\n"
    "      --timeout D       give up on a response after D (default 2s)\n"
    "      --requests FILE   request list (see doc/requests.md)\n"
    "      --cookies         keep a cookie jar per connection\n"
    "      --cookie 'N=V'    put this cookie in every connection's jar from the\n"
    "                        start (repeatable; implies --cookies)\n"
    "      --seed N          seed of the request mix (default 1)\n"
    "      --raw FILE        write one CSV record per request to FILE\n"
    "      --cpus LIST       pin engine threads to these CPUs, e.g. 1 or 0-3\n"
    "      --phase-fd N      write 'm' to descriptor N when the measured window\n"
    "                        starts and 'e' when it ends\n"
    "      --hold-fd N       with --count and --phase-fd: after each of the window's\n"
    "                        edges, wait for one byte on descriptor N before going on\n"
    "      --quiet-pids FILE with --count: each request of the warmup and the window\n"
    "                        waits until every thread of the processes listed in FILE\n"
    "                        (pids, one a line, read again when the window starts)\n"
    "                        sleeps; the warmup then pauses --think too\n"
    "      --allow-remote    allow a target that is not a loopback address\n"
    "  -V, --version         print the version\n"
    "  -h, --help            print this help\n";

static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    for (char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    fprintf(stderr, "rackbench-engine: %s\n", msg);
    va_end(ap);
    return 2;
}

int cli_parse_cpus(const char *text, int *cpus, int max) {
    int count = 0;
    const char *p = text;
    if (!p || !*p) return -1;
    while (*p) {
        char *end;
        errno = 0;
        long first = strtol(p, &end, 10);
        if (end == p || errno || first < 0 || first > 4095) return -1;
        long last = first;
        p = end;
        if (*p == '-') {
            p++;
            last = strtol(p, &end, 10);
            if (end == p || errno || last < first || last > 4095) return -1;
            p = end;
        }
        for (long c = first; c <= last; c++) {
            if (count >= max) return -1;
            cpus[count++] = (int)c;
        }
        if (*p == ',') { p++; if (*p == '\0') return -1; }
        else if (*p != '\0') return -1;
    }
    return count;
}

static int parse_int(const char *text, long min, long max, int *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min || v > max) return -1;
    *out = (int)v;
    return 0;
}

/* A count of requests, at least min and at most 10^12: 0 and sets *out,
 * or -1. */
static int parse_count(const char *text, unsigned long long min, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || n < min || n > 1000000000000ULL) return -1;
    *out = n;
    return 0;
}

static int valid_header(const char *h) {
    const char *colon = strchr(h, ':');
    if (!colon || colon == h) return 0;
    for (const char *c = h; c < colon; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f) return 0;
    for (const char *c = colon; *c; c++)
        if (*c == '\r' || *c == '\n') return 0;
    return 1;
}

enum { OPT_BODY = 256, OPT_TIMEOUT, OPT_REQUESTS, OPT_COOKIES, OPT_SEED, OPT_RAW, OPT_CPUS,
       OPT_ALLOW_REMOTE, OPT_PHASE_FD, OPT_COOKIE, OPT_PROTOCOL, OPT_STREAMS, OPT_CACERT, OPT_INSECURE,
       OPT_NO_TLS_RESUME, OPT_HOLD_FD, OPT_THINK, OPT_WARMUP_COUNT, OPT_QUIET_PIDS };

/* name=value with a non-empty token name and a value without ; or
 * control bytes (RFC 6265 cookie-pair, leniently). */
static int valid_cookie(const char *c) {
    const char *eq = strchr(c, '=');
    if (!eq || eq == c) return 0;
    for (const char *p = c; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch < 0x20 || ch == 0x7f || ch == ';') return 0;
        if (p < eq && (ch == ' ' || ch == ',' || ch == '"')) return 0;
    }
    return strlen(c) <= 4096;
}

/* What --count, --hold-fd and --think cannot be combined with; 2 after
 * printing the usage error, 0 when the combination is fine. */
static int check_count_window(const engine_config *cfg) {
    if (cfg->think_ns && cfg->rate_per_s > 0)
        return usage_error("--think is a closed-loop client's pause: it cannot be combined with --rate");
    if (cfg->think_ns && cfg->protocol != PROTOCOL_HTTP1)
        return usage_error("--think is not supported with --protocol h2c or h2 yet");
    if (cfg->count && cfg->duration_set)
        return usage_error("--count and --duration both end the measured window: give one");
    if (cfg->count && cfg->rate_per_s > 0)
        return usage_error("--count is a closed-loop window: it cannot be combined with --rate");
    if (cfg->count && cfg->protocol != PROTOCOL_HTTP1)
        return usage_error("--count is not supported with --protocol h2c or h2 yet");
    if (cfg->hold_fd >= 0 && !cfg->count) return usage_error("--hold-fd needs --count (a timed window's edges are the clock's)");
    if (cfg->hold_fd >= 0 && cfg->phase_fd < 0) return usage_error("--hold-fd needs --phase-fd (the edges it holds at)");
    if (cfg->hold_fd >= 0 && cfg->hold_fd == cfg->phase_fd) return usage_error("--hold-fd and --phase-fd must differ");
    if (cfg->quiet_pids_file && !cfg->count) return usage_error("--quiet-pids needs --count (it gates the requests of a fixed-count window)");
    /* One thread sees every request of the engine in flight: the gate also
     * waits for those (quiet.h). */
    if (cfg->quiet_pids_file && cfg->threads > 1) return usage_error("--quiet-pids needs a single engine thread (-t 1)");
    return 0;
}

int cli_parse(engine_config *cfg, int argc, char **argv) {
    static const struct option http_options[] = {
        {"connections", required_argument, NULL, 'c'},
        {"threads", required_argument, NULL, 't'},
        {"duration", required_argument, NULL, 'd'},
        {"count", required_argument, NULL, 'n'},
        {"warmup", required_argument, NULL, 'w'},
        {"rate", required_argument, NULL, 'R'},
        {"no-keepalive", no_argument, NULL, 'k'},
        {"header", required_argument, NULL, 'H'},
        {"method", required_argument, NULL, 'm'},
        {"body", required_argument, NULL, OPT_BODY},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"requests", required_argument, NULL, OPT_REQUESTS},
        {"cookies", no_argument, NULL, OPT_COOKIES},
        {"cookie", required_argument, NULL, OPT_COOKIE},
        {"seed", required_argument, NULL, OPT_SEED},
        {"raw", required_argument, NULL, OPT_RAW},
        {"cpus", required_argument, NULL, OPT_CPUS},
        {"allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE},
        {"phase-fd", required_argument, NULL, OPT_PHASE_FD},
        {"hold-fd", required_argument, NULL, OPT_HOLD_FD},
        {"think", required_argument, NULL, OPT_THINK},
        {"warmup-count", required_argument, NULL, OPT_WARMUP_COUNT},
        {"quiet-pids", required_argument, NULL, OPT_QUIET_PIDS},
        {"protocol", required_argument, NULL, OPT_PROTOCOL},
        {"streams", required_argument, NULL, OPT_STREAMS},
        {"cacert", required_argument, NULL, OPT_CACERT},
        {"insecure", no_argument, NULL, OPT_INSECURE},
        {"no-tls-resume", no_argument, NULL, OPT_NO_TLS_RESUME},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    /* The HTTP options, then the WebSocket ones (ws_options.h). */
    enum { HTTP_OPTIONS = sizeof(http_options) / sizeof(http_options[0]) - 1 };
    static struct option options[HTTP_OPTIONS + 32];
    size_t ws_count = 0;
    while (ws_long_options[ws_count].name) ws_count++;
    memcpy(options, http_options, HTTP_OPTIONS * sizeof(struct option));
    memcpy(options + HTTP_OPTIONS, ws_long_options, (ws_count + 1) * sizeof(struct option));
    int ws_given = 0;
    char ws_err[600];

    memset(cfg, 0, sizeof(*cfg));
    cfg->connections = 10;
    cfg->threads = 1;
    cfg->duration_ns = 10 * NS_PER_S;
    cfg->timeout_ns = 2 * NS_PER_S;
    cfg->keepalive = 1;
    cfg->method = "GET";
    cfg->seed = 1;
    cfg->phase_fd = -1;
    cfg->hold_fd = -1;
    cfg->protocol = PROTOCOL_HTTP1;
    cfg->streams = 1;
    cfg->tls_verify = 1;
    cfg->tls_resume = 1;
    ws_options_defaults(cfg);
    int tls_flags = 0; /* --cacert, --insecure, --no-tls-resume given */

    opterr = 0;
    optind = 0;
    int opt;
    int warmup_set = 0;
    while ((opt = getopt_long(argc, argv, ":c:t:d:n:w:R:kH:m:Vh", options, NULL)) != -1) {
        switch (opt) {
        case 'c':
            if (parse_int(optarg, 1, 1000000, &cfg->connections))
                return usage_error("invalid --connections '%s' (expected an integer >= 1)", optarg);
            break;
        case 't':
            if (parse_int(optarg, 1, 1024, &cfg->threads))
                return usage_error("invalid --threads '%s' (expected an integer 1-1024)", optarg);
            break;
        case 'd':
            if (cli_parse_duration(optarg, &cfg->duration_ns) || cfg->duration_ns == 0)
                return usage_error("invalid --duration '%s' (expected e.g. 10s, 500ms, 2m)", optarg);
            cfg->duration_set = 1;
            break;
        case 'n':
            if (parse_count(optarg, 1, &cfg->count))
                return usage_error("invalid --count '%s' (expected an integer >= 1)", optarg);
            break;
        case OPT_WARMUP_COUNT:
            if (parse_count(optarg, 0, &cfg->warmup_count))
                return usage_error("invalid --warmup-count '%s' (expected an integer >= 0)", optarg);
            break;
        case 'w':
            if (cli_parse_duration(optarg, &cfg->warmup_ns))
                return usage_error("invalid --warmup '%s' (expected e.g. 5s, 0)", optarg);
            warmup_set = 1;
            break;
        case 'R': {
            char *end;
            errno = 0;
            cfg->rate_per_s = strtod(optarg, &end);
            if (errno || end == optarg || *end || !isfinite(cfg->rate_per_s) || cfg->rate_per_s <= 0 ||
                cfg->rate_per_s > 1e8)
                return usage_error("invalid --rate '%s' (expected requests/s > 0)", optarg);
            break;
        }
        case 'k': cfg->keepalive = 0; break;
        case 'H':
            if (cfg->header_count >= MAX_HEADERS) return usage_error("too many --header options (max %d)", MAX_HEADERS);
            if (!valid_header(optarg)) return usage_error("invalid --header '%s' (expected 'Name: value')", optarg);
            cfg->headers[cfg->header_count++] = optarg;
            break;
        case 'm':
            for (const char *c = optarg; *c; c++)
                if (*c < 'A' || *c > 'Z') return usage_error("invalid --method '%s' (expected e.g. GET, POST)", optarg);
            if (!*optarg) return usage_error("empty --method");
            cfg->method = optarg;
            break;
        case OPT_BODY: cfg->body = optarg; cfg->body_len = strlen(optarg); break;
        case OPT_TIMEOUT:
            if (cli_parse_duration(optarg, &cfg->timeout_ns) || cfg->timeout_ns < NS_PER_MS)
                return usage_error("invalid --timeout '%s' (expected e.g. 2s, at least 1ms)", optarg);
            break;
        case OPT_REQUESTS: cfg->requests_file = optarg; break;
        case OPT_COOKIES: cfg->cookies = 1; break;
        case OPT_COOKIE:
            if (cfg->cookie_count >= MAX_HEADERS) return usage_error("too many --cookie options (max %d)", MAX_HEADERS);
            if (!valid_cookie(optarg)) return usage_error("invalid --cookie '%s' (expected 'name=value')", optarg);
            cfg->cookie_presets[cfg->cookie_count++] = optarg;
            cfg->cookies = 1;
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-')
                return usage_error("invalid --seed '%s' (expected a non-negative integer)", optarg);
            cfg->seed = s;
            break;
        }
        case OPT_RAW: cfg->raw_file = optarg; break;
        case OPT_CPUS:
            cfg->cpu_count = cli_parse_cpus(optarg, cfg->cpus, MAX_CPUS);
            if (cfg->cpu_count <= 0) return usage_error("invalid --cpus '%s' (expected e.g. 1, 0-3, 1,3)", optarg);
            break;
        case OPT_ALLOW_REMOTE: cfg->allow_remote = 1; break;
        case OPT_PHASE_FD:
            /* 0-2 are the engine's own stdin, stdout (the JSON) and stderr. */
            if (parse_int(optarg, 3, 65535, &cfg->phase_fd))
                return usage_error("invalid --phase-fd '%s' (expected a descriptor number >= 3)", optarg);
            break;
        case OPT_THINK:
            if (cli_parse_duration(optarg, &cfg->think_ns))
                return usage_error("invalid --think '%s' (expected e.g. 10ms, 0)", optarg);
            break;
        case OPT_QUIET_PIDS: cfg->quiet_pids_file = optarg; break;
        case OPT_HOLD_FD:
            if (parse_int(optarg, 3, 65535, &cfg->hold_fd))
                return usage_error("invalid --hold-fd '%s' (expected a descriptor number >= 3)", optarg);
            break;
        case OPT_PROTOCOL:
            if (strcmp(optarg, "http1") == 0) cfg->protocol = PROTOCOL_HTTP1;
            else if (strcmp(optarg, "h2c") == 0) cfg->protocol = PROTOCOL_H2C;
            else if (strcmp(optarg, "h2") == 0) cfg->protocol = PROTOCOL_H2;
            else return usage_error("invalid --protocol '%s' (expected http1, h2c or h2)", optarg);
            break;
        case OPT_STREAMS:
            if (parse_int(optarg, 1, 10000, &cfg->streams))
                return usage_error("invalid --streams '%s' (expected an integer 1-10000)", optarg);
            break;
        case OPT_CACERT:
            if (!*optarg) return usage_error("empty --cacert");
            cfg->ca_file = optarg;
            tls_flags++;
            break;
        case OPT_INSECURE: cfg->tls_verify = 0; tls_flags++; break;
        case OPT_NO_TLS_RESUME: cfg->tls_resume = 0; tls_flags++; break;
        case 'V': printf("rackbench-engine %s\n", ENGINE_VERSION); return -1;
        case 'h': fputs(usage_text, stdout); fputs(ws_usage_text, stdout); return -1;
        case ':': return usage_error("option %s needs a value", argv[optind - 1]);
        case OPT_WS_WORKLOAD: case OPT_WS_CABLE: case OPT_WS_CHANNEL: case OPT_WS_CHANNEL_PARAMS:
        case OPT_WS_ECHO_ACTION: case OPT_WS_BROADCAST_ACTION: case OPT_WS_RAMP: case OPT_WS_INTERVAL:
        case OPT_WS_BROADCAST_URL: case OPT_WS_MESSAGE_BYTES: case OPT_WS_BINARY: case OPT_WS_FRAGMENT_BYTES:
        case OPT_WS_MAX_MESSAGE_BYTES:
            if (ws_options_apply(cfg, opt, optarg, ws_err, sizeof(ws_err))) return usage_error("%s", ws_err);
            ws_given++;
            break;
        default:
            if (optopt > 0 && optopt < 256) return usage_error("unknown option '-%c' (see --help)", optopt);
            return usage_error("unknown option '%s' (see --help)", argv[optind - 1]);
        }
    }
    if (cfg->warmup_count && !cfg->count) return usage_error("--warmup-count needs --count");
    if (cfg->warmup_count && warmup_set) return usage_error("--warmup-count and --warmup both end the warmup: give one");
    if (optind >= argc) return usage_error("missing URL (see --help)");
    if (optind + 1 < argc) return usage_error("unexpected argument '%s' (one URL only)", argv[optind + 1]);
    const char *err = url_parse(cfg, argv[optind]);
    if (err) return usage_error("invalid URL '%s': %s", argv[optind], err);
    if (cfg->requests_file && (cfg->body || strcmp(cfg->method, "GET") != 0))
        return usage_error("--requests cannot be combined with --method or --body (put them in the file)");
    if (cfg->protocol == PROTOCOL_HTTP1 && cfg->streams != 1)
        return usage_error("--streams %d needs --protocol h2c or h2 (HTTP/1.1 carries one request at a time)",
                           cfg->streams);
    const char *h2_name = cfg->protocol == PROTOCOL_H2 ? "h2" : "h2c";
    if (protocol_is_h2(cfg->protocol) && !cfg->keepalive)
        return usage_error("--no-keepalive cannot be combined with --protocol %s (streams share the connection)",
                           h2_name);
    if (protocol_is_h2(cfg->protocol) && cfg->cookies)
        return usage_error("--cookies and --cookie are not supported with --protocol %s yet", h2_name);
    if (cfg->protocol == PROTOCOL_H2C && cfg->tls)
        return usage_error("--protocol h2c is HTTP/2 over cleartext: use --protocol h2 for an https:// URL");
    if (cfg->protocol == PROTOCOL_H2 && !cfg->tls)
        return usage_error("--protocol h2 is HTTP/2 over TLS: it needs an https:// URL (h2c is the cleartext one)");
    if (tls_flags && !cfg->tls)
        return usage_error("--cacert, --insecure and --no-tls-resume apply to https:// and wss:// URLs only");
    if (cfg->ca_file && !cfg->tls_verify)
        return usage_error("--cacert and --insecure contradict each other: trust a certificate, or check none");
    if (ws_options_check(cfg, ws_given, ws_err, sizeof(ws_err))) return usage_error("%s", ws_err);
    if (check_count_window(cfg)) return 2;
    /* Every requested connection is used: threads never outnumber them
     * (wrk silently drops connections that do not divide evenly). */
    if (cfg->threads > cfg->connections)
        return usage_error("--threads %d exceeds --connections %d: every thread needs a connection", cfg->threads,
                           cfg->connections);
    char resolve_err[512];
    if (url_resolve(cfg, resolve_err, sizeof(resolve_err))) return usage_error("%s", resolve_err);
    return 0;
}
