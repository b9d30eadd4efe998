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
 * Session probes (probes.h) stay outside the window, at neither of its
 * edges. Each slot's start probe is sent once the warmup is over and
 * nothing of the thread's warmup is in flight, and the thread says it is
 * quiet only once those probes completed: they are served before the
 * window opens, before 'm' and the caller's edge, never at the same time
 * as a request of the window. A slot whose login (its `first` entries) is
 * not done by then sends no start probe (it is unchecked there, as a slot
 * whose login never finished): a probe in the middle of the window would
 * be a request of no window that the caller's edges still enclose. The
 * end probes wait for the window to close: each thread, once its last
 * request of the N completed, says it is drained
 * (count_window_drained) and waits, its connections open; the main thread
 * sees every thread drained (count_window_all_drained), ends the window,
 * tells the caller ('e' and its hold), and only then closes it
 * (count_window_close): the threads send their end probes, after the
 * caller's edge is in place, and end once those completed. So neither
 * probe takes a ticket, and each edge stays quiet.
 *
 * A thread's way through the run is a sequence of stages
 * (count_window_next_stage), the same for every protocol; the protocol
 * only acts on entering one (worker.c's count_window_step).
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
    atomic_int drained_threads;   /* threads whose last request of the window completed */
    atomic_int closed;            /* 1 once the main thread ended the window (end probes may go) */
} count_window;

/* A thread's stage in a fixed-count run, in the order it goes through
 * them (count_window_next_stage). */
typedef enum {
    COUNT_STAGE_WARMUP = 0,   /* the warmup: requests on its time or its tickets */
    COUNT_STAGE_START_PROBES, /* warmup over, none of its requests in flight: the slots' start probes */
    COUNT_STAGE_QUIET,        /* said quiet (count_window_quiet): waits for the window to open */
    COUNT_STAGE_WINDOW,       /* the window is open: requests on its tickets */
    COUNT_STAGE_DRAINED,      /* tickets gone, nothing in flight (count_window_drained): waits for the close */
    COUNT_STAGE_END_PROBES,   /* the window closed: the slots' end probes */
    COUNT_STAGE_DONE          /* the end probes completed: the thread ends */
} count_stage;

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

/* Called once by each thread when, after the window opened, its tickets
 * are gone and its last request completed. */
void count_window_drained(count_window *cw);

/* Whether every thread has called count_window_drained: the window's N
 * requests have all completed. */
int count_window_all_drained(count_window *cw);

/* Ends the window for the threads: from now on they send their end
 * probes and finish. Called once, by the main thread, after
 * count_window_all_drained and the caller's edge (or on an interrupt). */
void count_window_close(count_window *cw);

/* Whether count_window_close was called. */
int count_window_closed(count_window *cw);

/* The stage a thread moves to from stage, given what it sees now: whether
 * its warmup is over (count_window_warmup_over), how much of its work is
 * under way (busy: requests in flight, probes included, and slots in the
 * middle of a probe point), and whether it stopped taking tickets.
 * Moves one stage at most; returns stage itself when the thread stays.
 * Moving into COUNT_STAGE_QUIET calls count_window_quiet, into
 * COUNT_STAGE_DRAINED count_window_drained, each once per thread: the
 * caller keeps the stage returned. Pure but for those two counters. */
count_stage count_window_next_stage(count_window *cw, count_stage stage, int warmup_over, int busy, int stopping);

#endif
