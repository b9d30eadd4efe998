/*
 * worker.h - one engine thread: its clock, statistics and schedule, and the
 * epoll event loop that every protocol shares.
 *
 * A protocol (http1_conn.h, h2_worker.h) owns its connections and says how
 * they start, react to events and time out, through a worker_protocol
 * table; the loop here owns the time: the window's start and end, the
 * open-loop schedule, housekeeping and waiting. The loop knows no
 * protocol, and the protocols call into it, never the other way round.
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
#include "count_window.h"
#include "quiet.h"
#include "entry_stats.h"
#include "open_loop.h"
#include "phase_stats.h"
#include "probes.h"
#include "raw_log.h"
#include "requests.h"
#include "slot_service.h"
#include "tls.h"

/* Set by the SIGINT/SIGTERM handler: every worker stops at once. */
extern volatile sig_atomic_t engine_interrupted;

/* The size of a worker's read buffer, shared by its connections: one
 * recv takes what a response brings in one call (a read shorter than it
 * means the socket is drained). */
#define WORKER_READ_BUFFER_BYTES (256 * 1024)
/* https://: what one read decrypts to. Less than the read itself, plus at
 * most one record begun by the read before (16 KiB of plaintext). */
#define WORKER_PLAIN_BUFFER_BYTES (WORKER_READ_BUFFER_BYTES + 32 * 1024)

/* A protocol's setup before the run's clock (WebSocket clients connect
 * and subscribe, which takes as long as it takes): every thread runs its
 * own from start_ns, then waits at done; the main thread, also at done,
 * learns that the setup is over, fixes the clock and meets the threads at
 * clock_set. The barriers are what make the clock's fields, written by
 * the main thread in between, safe for the threads to read. */
typedef struct {
    uint64_t start_ns;          /* every thread's setup starts here (a ramp counts from it) */
    pthread_barrier_t done;     /* the threads and the main thread: setup over */
    pthread_barrier_t clock_set; /* the same: the clock is fixed */
} run_setup;

/* The shared clock marks of one run, fixed before the threads start (or,
 * with a setup, once every thread's setup is over). */
typedef struct {
    uint64_t start_ns;          /* t0: the warmup starts */
    uint64_t measure_start_ns;  /* t0 + warmup */
    uint64_t measure_end_ns;    /* t0 + warmup + duration; never with --count */
    /* --count: the shared tickets and edges of the fixed-count window
     * (count_window.h); a timed run's is not enabled. */
    count_window *count;
    /* NULL, or the setup before the clock (worker_protocol.setup). */
    run_setup *setup;
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

/* What an https:// run counts per phase (the phase of the request that
 * opened the connection), for the result's "tls" object (doc/output.md).
 * A handshake's time runs from the ClientHello's send to the handshake's
 * end, as the client saw it. */
typedef struct {
    uint64_t handshakes;            /* completed */
    uint64_t resumed;               /* of them, on a resumed session */
    uint64_t paid_responses;        /* responses whose latency included a handshake */
    uint64_t failures[TLS_FAIL_KINDS]; /* connections that failed, by kind */
    histogram *full_ns;             /* full handshakes' times (NULL unless https) */
    histogram *resumed_ns;          /* resumed ones' */
} tls_counters;

/*
 * A protocol as the loop drives it. Every function runs on the worker's
 * thread; now_ns is the loop's clock reading for this turn.
 *
 * A "slot" is what carries one request at a time: an HTTP/1.1 connection,
 * an HTTP/2 stream slot. The protocol keeps w->in_flight true (requests
 * started and not finished); the loop stops when the window is over and
 * in_flight is back to 0.
 */
typedef struct {
    /* Allocates w's connections and slots (before the run); exits on
     * out-of-memory. Returns the state kept in w->protocol_state. */
    void *(*create)(worker *w);
    /* Frees what create made (after the run; w's fds may still be open). */
    void (*destroy)(worker *w);
    /* The run starts (its first instant): closed loop, every slot starts
     * a request; open loop, every slot becomes free. */
    void (*start)(worker *w, uint64_t now_ns);
    /* epoll reported events for ptr, the data.ptr the protocol registered. */
    void (*on_event)(void *ptr, uint32_t events, uint64_t now_ns);
    /* Every few milliseconds, and on every turn once stopping: timeouts,
     * backoffs ending, deferred slots. */
    void (*housekeeping)(worker *w, uint64_t now_ns);
    /* Optional (NULL): the end of each turn before the loop waits, for
     * work gathered during the turn (h2: freed slots, output to flush). */
    void (*end_turn)(worker *w, uint64_t now_ns);
    /* Open loop: whether a slot is free for the next scheduled request. */
    int (*has_free_slot)(const worker *w);
    /* Open loop: starts the request due at due_ns (its latency origin) on
     * a free slot; only called when has_free_slot said yes. */
    void (*start_scheduled)(worker *w, uint64_t due_ns, uint64_t now_ns);
    /* Optional (NULL): the thread stops starting requests at until_ns (the
     * window's end, or an interrupt); w->stopping is set. The protocol's
     * last word on its idle slots (HTTP/1.1: open-loop slots idle at the
     * end send their end probes, probes.h). */
    void (*stop)(worker *w, uint64_t until_ns);
    /* Optional (NULL: the protocol takes no probe entries): a fixed
     * count's run reached the point's probes (count_window.h: the start
     * probes once the warmup is over and nothing of it is in flight, the
     * end probes once the window closed). Every idle slot with the
     * point's probes still to send starts them (at the start, after the
     * `first` entries the warmup left unfinished, so that the window
     * holds no login); a slot goes on through them as each completes. */
    void (*probe)(worker *w, probe_point point, uint64_t now_ns);
    /* Optional (NULL): the loop is over; every slot's wait ends and what
     * is still open closes. */
    void (*finish)(worker *w);
    /* Optional (NULL, with setup_done): the protocol's setup before the
     * run's clock exists (run_setup): called once at its start; the loop
     * then turns (events, housekeeping, and w->think_due_ns for a ramp's
     * next step) until setup_done says 1 or the run is interrupted. The
     * clock's fields must not be read until start. */
    void (*setup)(worker *w, uint64_t now_ns);
    int (*setup_done)(const worker *w);
} worker_protocol;

struct worker {
    int id;
    pthread_t thread;
    const engine_config *cfg;
    const request_set *requests;
    const run_clock *clock;
    const worker_protocol *protocol;
    void *protocol_state;       /* the protocol's connections and slots */
    void *protocol_shared;      /* what the protocol's threads share (made by main), or NULL */
    int epfd;
    int conn_count;             /* this thread's connections */
    int first_slot;             /* the number of its first, across all threads */
    char *read_buf;             /* WORKER_READ_BUFFER_BYTES */
    raw_log raw;
    phase_stats phases[PHASE_COUNT];
    entry_stats *entries[PHASE_COUNT]; /* per request-list entry; NULL for one URL */

    /* open loop: slot k is due at open_loop_due_ns(sched_origin_ns,
     * interval_ns, k) (open_loop.h); slots are sent in order of k */
    double interval_ns;
    uint64_t sched_origin_ns;
    uint64_t next_index;        /* the next slot to send */

    int in_flight;              /* requests started and not finished */
    int stopping;
    uint64_t stop_ns;
    /* --count: this thread's stage of the fixed-count run (count_window.h) */
    count_stage count_stage;
    /* Slots in the middle of a session probe point (probes.h), sent or
     * not yet (a failed connect's backoff): a fixed count's stage waits
     * for them as for a request in flight. */
    int probing;
    /* --think: the earliest end of a slot's pause (UINT64_MAX: none); the
     * protocol keeps it, the loop wakes for it. */
    uint64_t think_due_ns;
    /* --think or --quiet-pids: slots pausing before their next request
     * (counted in in_flight too), and the server-asleep gate (quiet.h). */
    int thinking;
    quiet_gate quiet;

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
     * connections, and HTTP/2's stream slots (unused for http1). */
    service_totals conn_service;
    service_totals stream_service;
    probe_totals probes[PROBE_POINTS]; /* the slots' session probes (probes.h) */

    h2_counters h2_stats;       /* --protocol h2c or h2 */

    /* https:// only (tls_ctx NULL otherwise) */
    const tls_context *tls_ctx; /* the run's, shared by every thread */
    char *plain_buf;            /* WORKER_PLAIN_BUFFER_BYTES: what read_buf decrypts to */
    tls_counters tls[PHASE_COUNT];
    tls_info tls_info;          /* what the first handshake negotiated */
    char tls_reason[TLS_REASON_BYTES]; /* the first failure, verbatim */
};

/* Prepares w to run protocol (its create() allocates here, before the
 * run). rate_per_s > 0: this thread's share of an open-loop rate. tls_ctx:
 * the run's TLS context for an https:// URL, else NULL. */
void worker_init(worker *w, int id, const engine_config *cfg, const request_set *requests, const run_clock *clock,
                 const worker_protocol *protocol, const tls_context *tls_ctx, int first_slot, int conn_count,
                 double rate_per_s, int raw_fd);

/* Thread entry: waits for clock->start_ns, runs the loop until the window
 * is over and nothing is in flight (or until interrupted), returns NULL. */
void *worker_run(void *arg);

/* Frees what worker_init and the protocol allocated; closes w's epoll. */
void worker_free(worker *w);

/* Whether w runs an open loop (a rate), rather than a closed one. */
static inline int worker_open_loop(const worker *w) { return w->interval_ns > 0; }

/* Whether the run's window is a fixed count of requests (count_window.h). */
static inline int worker_counted(const worker *w) { return w->clock->count && count_window_enabled(w->clock->count); }

/* Whether this thread of a fixed-count run has seen its window open
 * (whether or not it has closed since). */
static inline int worker_count_opened(const worker *w) { return w->count_stage >= COUNT_STAGE_WINDOW; }

/* The phase a request belongs to: the one its latency origin falls in. A
 * fixed count's by the window, whose requests are all started after this
 * thread saw it open (its warmup may be a count of requests, whose end no
 * clock knows in advance). */
static inline phase_id worker_phase_of(const worker *w, uint64_t start_ns) {
    if (worker_counted(w)) return worker_count_opened(w) ? PHASE_MEASURE : PHASE_WARMUP;
    return start_ns < w->clock->measure_start_ns ? PHASE_WARMUP : PHASE_MEASURE;
}

/* Closed loop: whether a freed slot starts its next request now. A timed
 * window: until the window's end. A fixed count (count_window.h): during
 * the warmup (its time, or its tickets); then only on a ticket of the open
 * window, and a slot freed before this thread saw the window open idles
 * until the loop starts it (the protocol's start). Once the tickets are
 * gone the thread stops sending (w->stopping) and ends when its last
 * request completed. */
int worker_may_start(worker *w, uint64_t now_ns);

/* Open loop: sends every request that is due by now_ns and inside the
 * run's schedule (due before the measured window ends) while the protocol
 * has a free slot. Protocols call it when a slot comes free; it may be
 * re-entered from inside start_scheduled (a send that fails at once frees
 * its slot), which is why the schedule advances before each start. */
void worker_dispatch_due(worker *w, uint64_t now_ns);

/* Counts a handshake of conn t that completed at now_ns, opened for a
 * request of phase (its time from t->hello_sent_ns), and keeps what the
 * run's first handshake negotiated. */
void worker_tls_handshake(worker *w, const tls_conn *t, phase_id phase, uint64_t now_ns);

/* Counts a connection whose TLS failed (t->failure, t->reason: the first
 * reason is kept). */
void worker_tls_failure(worker *w, const tls_conn *t, phase_id phase);

/* Exits the process with "rackbench-engine: out of memory" if calloc
 * fails: allocations happen before the run, where there is no way on. */
void *worker_xcalloc(size_t n, size_t size);

#endif
