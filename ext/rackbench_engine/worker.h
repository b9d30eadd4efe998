/*
 * worker.h - one engine thread: an epoll event loop driving its share of
 * the connections, closed or open loop, and counting what happens.
 *
 * Each thread owns everything it touches (connections, buffers, stats), so
 * the request path takes no lock; the main thread merges the stats after
 * every worker has been joined.
 */
#ifndef RB_WORKER_H
#define RB_WORKER_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "config.h"
#include "cookie_jar.h"
#include "entry_stats.h"
#include "http_response.h"
#include "phase_stats.h"
#include "probes.h"
#include "raw_log.h"
#include "requests.h"
#include "rng.h"
#include "slot_service.h"

/* Set by the SIGINT/SIGTERM handler: every worker stops at once. */
extern volatile sig_atomic_t engine_interrupted;

/* The shared clock marks of one run, fixed before the threads start. */
typedef struct {
    uint64_t start_ns;          /* t0: the warmup starts */
    uint64_t measure_start_ns;  /* t0 + warmup */
    uint64_t measure_end_ns;    /* t0 + warmup + duration */
} run_clock;

typedef struct worker worker;

/* What an h2c run counts beyond requests and errors: how connections and
 * streams ended, for the result's "h2" object (doc/output.md). */
#define H2_ERROR_CODES 14
typedef struct {
    uint64_t not_h2c_connections;   /* connections whose server did not speak h2c */
    uint64_t protocol_errors;       /* other HTTP/2 connection errors */
    uint64_t goaways;               /* GOAWAY frames received */
    uint64_t goaway_codes[H2_ERROR_CODES + 1]; /* by code; the last: unknown codes */
    uint64_t resets[H2_ERROR_CODES + 1];       /* RST_STREAM by code */
    uint32_t server_max_streams;    /* SETTINGS_MAX_CONCURRENT_STREAMS seen (0: none) */
    char reason[160];               /* the first not-h2c or protocol error, verbatim */
} h2_counters;

struct h2_worker;

typedef enum {
    CONN_IDLE = 0,      /* no request in progress; fd open (kept alive) or -1 */
    CONN_CONNECTING,    /* connecting for req */
    CONN_WRITING,       /* req partly written */
    CONN_READING,       /* waiting for / reading the response */
    CONN_CLOSING,       /* response done; waiting for the server's close */
    CONN_BACKOFF        /* a connect failed; retry after backoff_until_ns */
} conn_state;

/* What a connection slot keeps for a session with captures, variables or
 * redirects (doc/requests.md); allocated before the run, only when the
 * request list uses them. */
typedef struct {
    session_vars vars;
    char *render_buf;           /* templated entry, rendered per request */
    size_t render_cap;
    char *hop_buf;              /* the request of a followed redirect */
    size_t hop_cap;
    char *body;                 /* body kept for captures (+1 for a NUL) */
    size_t body_len;
    char location[SESSION_LOCATION_MAX_BYTES];
    size_t location_len;
    int location_state;         /* 0 none, 1 seen, -1 too long */
    char target[SESSION_LOCATION_MAX_BYTES]; /* the chain's current target */
    size_t target_len;
    const char *first_wire;     /* the chain's first request: model of its hops */
    size_t first_len, first_head_len;
    uint32_t captured;          /* captures of the entry set in this chain */
    int hops;                   /* redirects followed in this chain */
    int as_get;                 /* a 301/302/303 turned the chain into GET */
    int hop_pending;            /* the slot's next request is that hop */
    uint64_t chain_start_ns;    /* the entry's first request: its latency origin */
} slot_session;

typedef struct conn {
    worker *w;
    int fd;
    conn_state state;
    uint32_t slot;              /* connection number across all threads */
    const request_template *req;
    const char *wire;           /* bytes of the request being sent: the
                                   entry's prebuilt wire, or a rendering */
    size_t wire_len, head_len;
    int is_head;
    int deferred;               /* idle until housekeeping: a request was not
                                   sent for want of a variable */
    slot_session *sess;         /* NULL unless the list needs it */
    size_t written;
    uint64_t start_ns;          /* latency origin: scheduled time (open loop)
                                   or when the slot became free (closed loop) */
    uint64_t deadline_ns;
    uint64_t backoff_until_ns;
    uint64_t resp_bytes;
    phase_id phase;
    int established_once;
    uint32_t requests_on_fd;
    rng rng;
    size_t first_done;
    cookie_jar *jar;            /* NULL unless --cookies */
    slot_service service;       /* was it served in the window (slot_service.h) */
    slot_probe probe;           /* its session probes (probes.h) */
    struct conn *next_free;     /* open loop: stack of idle slots */
    http_response resp;
} conn;

struct worker {
    int id;
    pthread_t thread;
    const engine_config *cfg;
    const request_set *requests;
    const run_clock *clock;
    int epfd;
    conn *conns;
    int conn_count;
    int first_slot;
    char *read_buf;
    raw_log raw;
    phase_stats phases[PHASE_COUNT];
    entry_stats *entries[PHASE_COUNT]; /* per request-list entry; NULL for one URL */

    /* open loop: slot k is due at open_loop_due_ns(sched_origin_ns,
     * interval_ns, k) (open_loop.h); slots are sent in order of k */
    double interval_ns;
    uint64_t sched_origin_ns;
    uint64_t next_index;        /* the next slot to send */
    conn *free_stack;

    int in_flight;              /* requests started and not finished */
    int stopping;
    uint64_t stop_ns;

    /* connection accounting */
    uint64_t connects;          /* successful connects */
    uint64_t connect_attempts;
    uint64_t close_ignored;     /* asked Connection: close, server kept it open */
    uint64_t server_closes;     /* server closed after a response */
    uint64_t idle_closes;       /* server closed an idle kept-alive connection */
    uint64_t abandoned;         /* in flight when interrupted */
    int slots_established;      /* slots that connected at least once */
    int pin_failed;

    /* What the slots came to once the thread is done (slot_service.h):
     * connections, and h2c's stream slots (unused for http1). */
    service_totals conn_service;
    service_totals stream_service;
    probe_totals probes[PROBE_POINTS]; /* the slots' session probes (probes.h) */

    struct h2_worker *h2;       /* --protocol h2c: its connections and streams */
    h2_counters h2_stats;
};

/* Prepares w (allocations happen here, before the run). */
void worker_init(worker *w, int id, const engine_config *cfg, const request_set *requests,
                 const run_clock *clock, int first_slot, int conn_count, double rate_per_s, int raw_fd);

/* Thread entry: waits for clock->start_ns, runs, returns when done. */
void *worker_run(void *arg);

void worker_free(worker *w);

/* Waits for events on w->epfd until until_ns (nanosecond precision where
 * the kernel has epoll_pwait2). Returns epoll's count, or -1 (errno). */
struct epoll_event;
int worker_wait_events(worker *w, struct epoll_event *events, uint64_t now_ns, uint64_t until_ns);
#define WORKER_MAX_EVENTS 256

#endif
