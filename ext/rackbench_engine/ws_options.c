/* ws_options.c - see ws_options.h. */
#include "ws_options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "url.h"

/* The largest message the engine sends or accepts. */
#define MAX_MESSAGE_BYTES (16u << 20)

const struct option ws_long_options[] = {
    {"workload", required_argument, NULL, OPT_WS_WORKLOAD},
    {"cable", no_argument, NULL, OPT_WS_CABLE},
    {"channel", required_argument, NULL, OPT_WS_CHANNEL},
    {"channel-params", required_argument, NULL, OPT_WS_CHANNEL_PARAMS},
    {"echo-action", required_argument, NULL, OPT_WS_ECHO_ACTION},
    {"broadcast-action", required_argument, NULL, OPT_WS_BROADCAST_ACTION},
    {"ramp", required_argument, NULL, OPT_WS_RAMP},
    {"interval", required_argument, NULL, OPT_WS_INTERVAL},
    {"broadcast-url", required_argument, NULL, OPT_WS_BROADCAST_URL},
    {"message-bytes", required_argument, NULL, OPT_WS_MESSAGE_BYTES},
    {"binary", no_argument, NULL, OPT_WS_BINARY},
    {"fragment-bytes", required_argument, NULL, OPT_WS_FRAGMENT_BYTES},
    {"max-message-bytes", required_argument, NULL, OPT_WS_MAX_MESSAGE_BYTES},
    {NULL, 0, NULL, 0}};

const char ws_usage_text[] =
    "WebSocket (a ws:// or wss:// URL; -c is the number of clients):\n"
    "      --workload W      connect: the clients connect (--ramp) and hold;\n"
    "                        echo (default): each client sends a message and\n"
    "                        waits for it back (--rate: open loop);\n"
    "                        broadcast: one broadcast every --interval to all\n"
    "      --ramp D          connect the clients evenly over D (default 0: all\n"
    "                        at once, an avalanche)\n"
    "      --interval D      broadcast: one broadcast every D (default 1s)\n"
    "      --broadcast-url U broadcast: POST each broadcast to the app at U\n"
    "                        (http://) instead of sending it from a client\n"
    "      --message-bytes N the body of each message sent (default 64)\n"
    "      --binary          send binary messages instead of text\n"
    "      --fragment-bytes N send each message in frames of N bytes\n"
    "      --max-message-bytes N  the largest message accepted (default 1048576)\n"
    "      --cable           speak Action Cable (actioncable-v1-json): welcome,\n"
    "                        subscribe, confirm, messages, pings\n"
    "      --channel NAME    the channel subscribed to (default BenchmarkChannel)\n"
    "      --channel-params J  its params, a JSON object: '{\"room\":\"1\"}'\n"
    "      --echo-action A   the channel's action that echoes (default echo)\n"
    "      --broadcast-action A  the one that broadcasts (default broadcast)\n";

void ws_options_defaults(engine_config *cfg) {
    cfg->ws_workload = WS_WORKLOAD_ECHO;
    cfg->ws_channel = "BenchmarkChannel";
    cfg->ws_echo_action = "echo";
    cfg->ws_broadcast_action = "broadcast";
    cfg->ws_interval_ns = NS_PER_S;
    cfg->ws_broadcaster = WS_BROADCASTER_CLIENT;
    cfg->ws_message_bytes = 64;
    cfg->ws_max_message_bytes = 1u << 20;
}

static const char *failed(char *err, size_t err_len, const char *fmt, const char *arg) {
    snprintf(err, err_len, fmt, arg);
    return err;
}

/* A byte count from 1 to max: 0 and *out, or -1. */
static int parse_bytes(const char *text, size_t max, size_t *out) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || n < 1 || n > max) return -1;
    *out = (size_t)n;
    return 0;
}

/* An action or channel name: printable, without quotes or backslashes. */
static int plain_name(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"' || *s == '\\') return 0;
    return 1;
}

const char *ws_options_apply(engine_config *cfg, int opt, const char *arg, char *err, size_t err_len) {
    switch (opt) {
    case OPT_WS_WORKLOAD:
        if (strcmp(arg, "connect") == 0) cfg->ws_workload = WS_WORKLOAD_CONNECT;
        else if (strcmp(arg, "echo") == 0) cfg->ws_workload = WS_WORKLOAD_ECHO;
        else if (strcmp(arg, "broadcast") == 0) cfg->ws_workload = WS_WORKLOAD_BROADCAST;
        else return failed(err, err_len, "invalid --workload '%s' (expected connect, echo or broadcast)", arg);
        return NULL;
    case OPT_WS_CABLE: cfg->ws_cable = 1; return NULL;
    case OPT_WS_CHANNEL:
        if (!plain_name(arg)) return failed(err, err_len, "invalid --channel '%s' (a name without quotes)", arg);
        cfg->ws_channel = arg;
        return NULL;
    case OPT_WS_CHANNEL_PARAMS: cfg->ws_channel_params = arg; return NULL;
    case OPT_WS_ECHO_ACTION:
    case OPT_WS_BROADCAST_ACTION:
        if (!plain_name(arg)) return failed(err, err_len, "invalid action '%s' (a name without quotes)", arg);
        if (opt == OPT_WS_ECHO_ACTION) cfg->ws_echo_action = arg;
        else cfg->ws_broadcast_action = arg;
        return NULL;
    case OPT_WS_RAMP:
        if (cli_parse_duration(arg, &cfg->ws_ramp_ns))
            return failed(err, err_len, "invalid --ramp '%s' (expected e.g. 10s, 0)", arg);
        return NULL;
    case OPT_WS_INTERVAL:
        if (cli_parse_duration(arg, &cfg->ws_interval_ns) || cfg->ws_interval_ns < NS_PER_MS)
            return failed(err, err_len, "invalid --interval '%s' (expected e.g. 1s, 100ms; at least 1ms)", arg);
        return NULL;
    case OPT_WS_BROADCAST_URL:
        if (strncmp(arg, "http://", 7) != 0)
            return failed(err, err_len, "invalid --broadcast-url '%s' (expected an http:// URL of the app)", arg);
        if (strlen(arg) >= sizeof(cfg->ws_broadcast_url)) return failed(err, err_len, "--broadcast-url too long%s", "");
        strcpy(cfg->ws_broadcast_url, arg);
        cfg->ws_broadcaster = WS_BROADCASTER_HTTP;
        return NULL;
    case OPT_WS_MESSAGE_BYTES:
        if (parse_bytes(arg, MAX_MESSAGE_BYTES, &cfg->ws_message_bytes))
            return failed(err, err_len, "invalid --message-bytes '%s' (expected 1 to 16777216)", arg);
        return NULL;
    case OPT_WS_BINARY: cfg->ws_binary = 1; return NULL;
    case OPT_WS_FRAGMENT_BYTES:
        if (parse_bytes(arg, MAX_MESSAGE_BYTES, &cfg->ws_fragment_bytes))
            return failed(err, err_len, "invalid --fragment-bytes '%s' (expected 1 to 16777216)", arg);
        return NULL;
    case OPT_WS_MAX_MESSAGE_BYTES:
        if (parse_bytes(arg, MAX_MESSAGE_BYTES, &cfg->ws_max_message_bytes))
            return failed(err, err_len, "invalid --max-message-bytes '%s' (expected 1 to 16777216)", arg);
        return NULL;
    default: return failed(err, err_len, "internal: unknown WebSocket option%s", "");
    }
}

/* Resolves --broadcast-url into cfg's ws_broadcast_* fields. */
static const char *resolve_broadcast_url(engine_config *cfg, char *err, size_t err_len) {
    engine_config *tmp = calloc(1, sizeof(*tmp));
    if (!tmp) return failed(err, err_len, "out of memory%s", "");
    tmp->allow_remote = cfg->allow_remote;
    const char *why = url_parse(tmp, cfg->ws_broadcast_url);
    if (why) {
        snprintf(err, err_len, "invalid --broadcast-url '%s': %s", cfg->ws_broadcast_url, why);
        free(tmp);
        return err;
    }
    char resolve_err[400];
    if (url_resolve(tmp, resolve_err, sizeof(resolve_err))) {
        snprintf(err, err_len, "--broadcast-url: %s", resolve_err);
        free(tmp);
        return err;
    }
    int ipv6 = strchr(tmp->host, ':') != NULL;
    snprintf(cfg->ws_broadcast_host, sizeof(cfg->ws_broadcast_host), ipv6 ? "[%s]:%s" : "%s:%s", tmp->host, tmp->port);
    snprintf(cfg->ws_broadcast_path, sizeof(cfg->ws_broadcast_path), "%s", tmp->path);
    memcpy(&cfg->ws_broadcast_addr, &tmp->addr, sizeof(tmp->addr));
    cfg->ws_broadcast_addr_len = tmp->addr_len;
    free(tmp);
    return NULL;
}

const char *ws_options_check(engine_config *cfg, int given, char *err, size_t err_len) {
    if (!cfg->ws) {
        if (given) return failed(err, err_len, "the WebSocket options apply to ws:// and wss:// URLs only%s", "");
        return NULL;
    }
    const char *http_only = NULL;
    if (cfg->requests_file) http_only = "--requests";
    else if (cfg->body || strcmp(cfg->method, "GET") != 0) http_only = "--method and --body";
    else if (cfg->cookies) http_only = "--cookies and --cookie";
    else if (cfg->protocol != PROTOCOL_HTTP1 || cfg->streams != 1) http_only = "--protocol and --streams";
    else if (cfg->count || cfg->warmup_count) http_only = "--count and --warmup-count";
    else if (cfg->think_ns) http_only = "--think";
    else if (!cfg->keepalive) http_only = "--no-keepalive";
    else if (cfg->raw_file) http_only = "--raw";
    else if (cfg->hold_fd >= 0) http_only = "--hold-fd";
    if (http_only) return failed(err, err_len, "%s: for HTTP URLs only, not a WebSocket one", http_only);
    if (cfg->rate_per_s > 0 && cfg->ws_workload != WS_WORKLOAD_ECHO)
        return failed(err, err_len, "--rate paces the echo workload's messages: it does not apply to %s",
                      cfg->ws_workload == WS_WORKLOAD_CONNECT ? "connect" : "broadcast");
    if (cfg->ws_broadcaster == WS_BROADCASTER_HTTP && cfg->ws_workload != WS_WORKLOAD_BROADCAST)
        return failed(err, err_len, "--broadcast-url needs --workload broadcast%s", "");
    if (!cfg->ws_cable && (cfg->ws_channel_params || strcmp(cfg->ws_channel, "BenchmarkChannel") != 0 ||
                           strcmp(cfg->ws_echo_action, "echo") != 0 ||
                           strcmp(cfg->ws_broadcast_action, "broadcast") != 0))
        return failed(err, err_len, "--channel, --channel-params and the actions need --cable%s", "");
    if (cfg->ws_message_bytes > cfg->ws_max_message_bytes)
        return failed(err, err_len, "--message-bytes is larger than --max-message-bytes: its echo would be refused%s",
                      "");
    if (cfg->ws_cable && cfg->ws_binary)
        return failed(err, err_len, "--binary cannot be combined with --cable (Action Cable speaks JSON text)%s", "");
    if (cfg->ws_broadcaster == WS_BROADCASTER_HTTP) return resolve_broadcast_url(cfg, err, err_len);
    return NULL;
}
