/*
 * config.h - everything the command line decides, validated once by
 * cli_parse() and read-only afterwards (the only "global" the threads share).
 */
#ifndef RB_CONFIG_H
#define RB_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ENGINE_VERSION "0.1.0"
#define ENGINE_FORMAT_VERSION 1
#define MAX_HEADERS 64
#define MAX_CPUS 256
#define MAX_URL_BYTES 2048

/* --protocol: HTTP/1.1; HTTP/2 over cleartext TCP with prior knowledge
 * (h2c, RFC 9113 section 3.3: the client starts with the preface, no
 * Upgrade dance); or HTTP/2 over TLS, chosen by ALPN (h2, an https://
 * URL). Both HTTP/2 protocols run the same connection code. */
enum { PROTOCOL_HTTP1 = 0, PROTOCOL_H2C = 1, PROTOCOL_H2 = 2 };

/* A ws:// or wss:// URL's workload (doc/websockets.md): clients that
 * connect and hold; echo round trips; broadcasts to every client. */
enum { WS_WORKLOAD_CONNECT = 0, WS_WORKLOAD_ECHO = 1, WS_WORKLOAD_BROADCAST = 2 };
/* Who sends a broadcast: a WebSocket client of its own, or an HTTP POST
 * to an endpoint of the app (--broadcast-url). */
enum { WS_BROADCASTER_CLIENT = 0, WS_BROADCASTER_HTTP = 1 };

/* Whether a protocol is HTTP/2 (h2c or h2). */
static inline int protocol_is_h2(int protocol) { return protocol == PROTOCOL_H2C || protocol == PROTOCOL_H2; }

typedef struct {
    /* target */
    char url[MAX_URL_BYTES];
    char host[256];          /* as written in the URL, without brackets */
    char port[8];
    char path[MAX_URL_BYTES]; /* path and query, starting with '/' */
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char addr_text[64];      /* resolved address, for the JSON settings */
    int allow_remote;
    int tls;                 /* an https:// URL */
    int tls_verify;          /* check the server's certificate (--insecure: 0) */
    const char *ca_file;     /* --cacert: trust these certificates instead of the system's */
    int tls_resume;          /* offer a slot's last session when it reconnects (--no-tls-resume: 0) */

    /* load shape */
    int connections;
    int threads;
    uint64_t duration_ns;
    int duration_set;        /* -d was given (it cannot be with --count) */
    uint64_t count;          /* --count: the window is this many requests (0: timed) */
    uint64_t warmup_ns;
    uint64_t warmup_count;   /* --warmup-count: with --count, the warmup is this many requests */
    uint64_t timeout_ns;
    double rate_per_s;       /* 0: closed loop */
    uint64_t think_ns;       /* --think: closed loop, a connection waits this long
                                after a response before its next request */
    int keepalive;           /* 0: the client closes after every response */
    int protocol;            /* PROTOCOL_HTTP1, PROTOCOL_H2C or PROTOCOL_H2 */
    int streams;             /* HTTP/2: concurrent streams per connection (1 for http1) */

    /* requests (single request from flags, or a request list file) */
    const char *method;
    const char *headers[MAX_HEADERS];
    int header_count;
    const char *body;        /* may contain anything but NUL */
    size_t body_len;
    const char *requests_file;
    int cookies;             /* per-connection cookie jar */
    const char *cookie_presets[MAX_HEADERS]; /* --cookie 'name=value': in every jar from the start */
    int cookie_count;
    uint64_t seed;

    /* output and placement */
    const char *raw_file;
    int cpus[MAX_CPUS];
    int cpu_count;
    /* --phase-fd: a descriptor (inherited from the caller, a pipe) that
     * gets "m" when the measured window starts and "e" when it ends, so the
     * caller can sample the server over exactly the window; -1: none. */
    int phase_fd;
    /* --hold-fd: a descriptor (a pipe from the caller) the engine reads one
     * byte from after each edge of a fixed-count window, before it goes
     * on (count_window.h); -1: none. */
    int hold_fd;
    /* --quiet-pids: the file of the server's pids whose threads must all
     * sleep before a request of the window is sent (quiet.h); NULL: none. */
    const char *quiet_pids_file;

    /* WebSocket: a ws:// or wss:// URL (doc/websockets.md). connections is
     * the number of clients. */
    int ws;
    int ws_workload;         /* WS_WORKLOAD_* */
    int ws_cable;            /* --cable: Action Cable (actioncable-v1-json) over the socket */
    const char *ws_channel;  /* --channel: the Cable channel every client subscribes to */
    const char *ws_channel_params; /* --channel-params: its params, a JSON object */
    const char *ws_echo_action;      /* --echo-action: the channel's action that echoes (cable) */
    const char *ws_broadcast_action; /* --broadcast-action: the one that broadcasts (cable) */
    uint64_t ws_ramp_ns;     /* --ramp: the clients connect over this long (0: all at once) */
    uint64_t ws_interval_ns; /* --interval: one broadcast every */
    int ws_broadcaster;      /* WS_BROADCASTER_* */
    char ws_broadcast_url[MAX_URL_BYTES]; /* --broadcast-url (http://) */
    char ws_broadcast_host[300];           /* its Host header */
    char ws_broadcast_path[MAX_URL_BYTES];
    struct sockaddr_storage ws_broadcast_addr;
    socklen_t ws_broadcast_addr_len;
    size_t ws_message_bytes; /* --message-bytes: the body of each message the engine sends */
    int ws_binary;           /* --binary: send binary messages instead of text */
    size_t ws_fragment_bytes; /* --fragment-bytes: send messages in frames of this many bytes (0: one) */
    size_t ws_max_message_bytes; /* --max-message-bytes: the largest message accepted from the server */
} engine_config;

/* Fills cfg from argv. On a usage problem writes one line
 * "rackbench-engine: ..." to stderr and returns 2; returns -1 after printing
 * --help or --version (exit 0); 0 on success. */
int cli_parse(engine_config *cfg, int argc, char **argv);

/* Parses a duration: "10" (seconds), "10s", "250ms", "1.5m", "100us".
 * Returns 0 and sets *out_ns, or -1. Exposed for the tests. */
int cli_parse_duration(const char *text, uint64_t *out_ns);

/* Parses a CPU list like "0", "1,3", "0-3,6". Returns the count, or -1. */
int cli_parse_cpus(const char *text, int *cpus, int max);

#endif
