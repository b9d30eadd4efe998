/*
 * count_window.h - the fixed-count window (--count N): closed loop, the
 * measured window sends exactly N requests and ends when the last of them
 * has completed, with a response or an error. Rails Ruby Bench's batches of
 * N requests: every configuration does the same work in its window, however
 * fast it is (a duration means very different work per configuration under
 * valgrind, where the speed depends on the instrumentation).
 *
 * Both edges are quiet. The warmup ends on the clock, as in a timed run;
 * from then on no thread starts a request until every thread has nothing in
 * flight (count_window_quiet, count_window_all_quiet). Only then does the
 * window open (count_window_open), so no request of the warmup is still
 * being served in it, and the caller (rackbench, through --hold-fd) can put
 * its own edge in place (switch valgrind's instrumentation on in every
 * server process) before the first request of the window is sent. At the
 * end, N requests were sent and every one completed, so nothing is in
 * flight either.
 *
 * Why tickets: the N requests are shared by all the engine's threads and
 * connections as they free up (closed loop), so a faster connection sends
 * more of them, as in a timed window. A thread takes a ticket before it
 * starts a request of the window (count_window_claim); when none is left it
 * stops sending, and ends once its last request completed. A redirect
 * followed (@follow) is part of the request that caused it: it takes no
 * ticket of its own.
 *
 * Shared by the threads: every field but the configuration is atomic, and
 * nothing here takes a lock. The main thread waits on these counters by
 * polling; the worker threads check them once per pass of their loops.
 */
#ifndef RB_COUNT_WINDOW_H
#define RB_COUNT_WINDOW_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct {
    uint64_t count;               /* N; 0 for a timed window (no tickets) */
    uint64_t warmup_count;        /* --warmup-count W: the warmup is W requests (0: timed) */
    int threads;                  /* the engine threads that take part */
    atomic_uint_fast64_t claimed; /* tickets taken: requests of the window started */
    atomic_uint_fast64_t warmup_claimed; /* the warmup's tickets taken */
    atomic_int quiet_threads;     /* threads with nothing in flight since the warmup ended */
    atomic_int open;              /* 1 once the window has started */
    atomic_uint_fast64_t start_ns;/* when it started (CLOCK_MONOTONIC) */
} count_window;

/* Prepares cw for a window of count requests shared by threads threads,
 * after a warmup of warmup_count requests (0: the warmup is timed); count
 * 0 prepares a timed run's (count_window_enabled is then false). */
void count_window_init(count_window *cw, uint64_t count, uint64_t warmup_count, int threads);

/* Whether the run's window is a fixed count of requests. */
static inline int count_window_enabled(const count_window *cw) { return cw->count > 0; }

/* Takes one ticket of the open window. Returns 1 when the caller may start
 * a request of the window, 0 when all N have been taken (the caller stops
 * sending) or the window is not open yet. Never hands out more than N. */
int count_window_claim(count_window *cw);

/* A warmup of a fixed count (warmup_count > 0): takes one of its tickets.
 * Returns 1 when the caller may start a request of the warmup, 0 when
 * all W have been taken (the warmup is over for the caller). Under
 * valgrind a warmup's duration means very different work per
 * configuration (a JIT's server answers a tenth of the interpreter's
 * requests while it compiles): a count warms every one as far. */
int count_window_claim_warmup(count_window *cw);

/* Whether the warmup is over for a thread at now_ns: its W tickets are
 * taken, or its time (measure_start_ns) is up. */
int count_window_warmup_over(count_window *cw, uint64_t now_ns, uint64_t measure_start_ns);

/* Called once by each thread when, after the warmup ended, it has nothing
 * in flight. */
void count_window_quiet(count_window *cw);

/* Whether every thread has called count_window_quiet. */
int count_window_all_quiet(count_window *cw);

/* Opens the window at now_ns: from now on count_window_claim hands out
 * tickets. Called once, by the main thread, after count_window_all_quiet. */
void count_window_open(count_window *cw, uint64_t now_ns);

/* Whether the window is open; *start_ns (when not NULL) gets its start. */
int count_window_is_open(count_window *cw, uint64_t *start_ns);

/* Requests of the window started so far (at most N). */
uint64_t count_window_claimed(count_window *cw);

#endif
