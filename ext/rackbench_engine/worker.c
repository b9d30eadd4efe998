/*
 * worker.c - the engine thread and the event loop its protocols share.
 * See worker.h.
 *
 * System calls per request are what separates load generators on loopback
 * (shared/MEASUREMENT.md): wrk makes four (write, read, and two epoll_ctl
 * re-arming the socket). Here every socket is registered once, edge
 * triggered, for input and output (each protocol does so), and the loop
 * wakes only for events, the next housekeeping pass, the window's end or
 * the next scheduled send. A kept-alive request costs a write, a read and
 * a share of one epoll_wait.
 */
#include "worker.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "clock.h"

volatile sig_atomic_t engine_interrupted;

#define MAX_EVENTS 256
/* Timeouts and backoffs are checked this often: fine enough for a timeout
 * measured in seconds, cheap enough to scan every connection. */
#define HOUSEKEEPING_INTERVAL_NS (5 * NS_PER_MS)

void *worker_xcalloc(size_t n, size_t size) {
    void *p = calloc(n, size);
    if (!p) {
        perror("rackbench-engine: out of memory");
        exit(1);
    }
    return p;
}

void worker_init(worker *w, int id, const engine_config *cfg, const request_set *requests, const run_clock *clock,
                 const worker_protocol *protocol, const tls_context *tls_ctx, int first_slot, int conn_count,
                 double rate_per_s, int raw_fd) {
    memset(w, 0, sizeof(*w));
    w->id = id;
    w->cfg = cfg;
    w->requests = requests;
    w->clock = clock;
    w->protocol = protocol;
    w->first_slot = first_slot;
    w->conn_count = conn_count;
    w->read_buf = worker_xcalloc(1, WORKER_READ_BUFFER_BYTES);
    w->epfd = -1;
    quiet_init(&w->quiet, cfg->quiet_pids_file, NULL);
    raw_log_init(&w->raw, raw_fd);
    if (requests->from_file) {
        w->entries[PHASE_WARMUP] = entry_stats_new(requests->count, 0);
        w->entries[PHASE_MEASURE] = entry_stats_new(requests->count, 1);
    }
    if (rate_per_s > 0) {
        w->interval_ns = 1e9 / rate_per_s;
        /* With a setup, the clock is not fixed yet: run_setup_phase sets it. */
        if (!clock->setup) w->sched_origin_ns = open_loop_origin_ns(clock->start_ns, w->interval_ns, id, cfg->threads);
    }
    w->tls_ctx = tls_ctx;
    if (tls_ctx) {
        w->plain_buf = worker_xcalloc(1, WORKER_PLAIN_BUFFER_BYTES);
        for (int p = 0; p < PHASE_COUNT; p++) {
            w->tls[p].full_ns = worker_xcalloc(1, sizeof(histogram));
            w->tls[p].resumed_ns = worker_xcalloc(1, sizeof(histogram));
            hist_init(w->tls[p].full_ns);
            hist_init(w->tls[p].resumed_ns);
        }
    }
    w->protocol_state = protocol->create(w);
}

void worker_tls_handshake(worker *w, const tls_conn *t, phase_id phase, uint64_t now_ns) {
    tls_counters *c = &w->tls[phase];
    uint64_t start_ns = tls_conn_hello_sent(t) ? t->hello_sent_ns : now_ns;
    c->handshakes++;
    if (t->resumed) c->resumed++;
    hist_record(t->resumed ? c->resumed_ns : c->full_ns, now_ns - start_ns);
    if (!w->tls_info.version) tls_conn_info(t, &w->tls_info);
}

void worker_tls_failure(worker *w, const tls_conn *t, phase_id phase) {
    w->tls[phase].failures[t->failure]++;
    if (!w->tls_reason[0]) snprintf(w->tls_reason, sizeof(w->tls_reason), "%s", t->reason);
}

void worker_free(worker *w) {
    if (w->protocol_state) w->protocol->destroy(w);
    w->protocol_state = NULL;
    for (int p = 0; p < PHASE_COUNT; p++) entry_stats_free(w->entries[p], w->requests->count);
    free(w->read_buf);
    free(w->plain_buf);
    for (int p = 0; p < PHASE_COUNT; p++) {
        free(w->tls[p].full_ns);
        free(w->tls[p].resumed_ns);
    }
    raw_log_free(&w->raw);
    for (int p = 0; p < PHASE_COUNT; p++) phase_stats_free(&w->phases[p]);
    if (w->epfd >= 0) close(w->epfd);
}

static uint64_t next_due_ns(const worker *w) {
    return open_loop_due_ns(w->sched_origin_ns, w->interval_ns, w->next_index);
}

void worker_dispatch_due(worker *w, uint64_t now_ns) {
    while (w->protocol->has_free_slot(w)) {
        uint64_t due_ns = next_due_ns(w);
        if (due_ns > now_ns || due_ns >= w->clock->measure_end_ns) return;
        w->next_index++;
        /* Latency counts from the scheduled time: a stalled server makes
         * requests wait here, and that wait is part of what users feel
         * (no coordinated omission). */
        w->protocol->start_scheduled(w, due_ns, now_ns);
        phase_stats_lateness(&w->phases[worker_phase_of(w, due_ns)], now_ns - due_ns);
    }
}

/* The thread stops starting requests: at the window's end, or at Ctrl-C
 * (interrupted; until_ns is then the moment it was seen).
 *
 * Open loop: the window's schedule is counted here, once: the requests due
 * in it, from the schedule's arithmetic alone, and those never sent, from
 * how far dispatch got. Every request sent ends as a response or an
 * error, so responses + errors + unsent = scheduled is a check of the
 * engine's bookkeeping, not a sum made to match. At the window's end a
 * last dispatch first sends what is due and finds a free slot (a thread
 * that woke a little after the end must not turn its own lateness into
 * unsent requests); what is left had no slot by the end: the server held
 * them all. When interrupted, the window is cut at until_ns and nothing
 * more is sent. Requests due in the warmup but still unsent are the
 * warmup's and are not counted. */
static void stop_dispatching(worker *w, uint64_t until_ns, int interrupted) {
    const run_clock *clock = w->clock;
    if (worker_open_loop(w)) {
        if (!interrupted) worker_dispatch_due(w, until_ns);
        uint64_t window_end_ns = until_ns < clock->measure_end_ns ? until_ns : clock->measure_end_ns;
        phase_stats_schedule(&w->phases[PHASE_MEASURE],
                             open_loop_slots(w->sched_origin_ns, w->interval_ns, clock->measure_start_ns, window_end_ns),
                             open_loop_unsent(w->sched_origin_ns, w->interval_ns, w->next_index,
                                              clock->measure_start_ns, window_end_ns));
    }
    w->stopping = 1;
    w->stop_ns = until_ns;
    if (w->protocol->stop) w->protocol->stop(w, until_ns);
}

static void pin_thread(worker *w) {
    const engine_config *cfg = w->cfg;
    if (cfg->cpu_count <= 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cfg->cpus[w->id % cfg->cpu_count], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) w->pin_failed = 1;
}

/* Waits for events on w->epfd until until_ns. Returns epoll's count, or
 * -1 (errno). */
static int wait_events(worker *w, struct epoll_event *events, uint64_t now_ns, uint64_t until_ns) {
    uint64_t wait_ns = until_ns > now_ns ? until_ns - now_ns : 0;
    struct timespec ts = clock_timespec(wait_ns);
    /* epoll_pwait2 takes a nanosecond timeout: the open-loop schedule needs
     * better than epoll_wait's milliseconds. */
    int n = epoll_pwait2(w->epfd, events, MAX_EVENTS, &ts, NULL);
    if (n < 0 && errno == ENOSYS) {
        int ms = (int)((wait_ns + NS_PER_MS - 1) / NS_PER_MS);
        n = epoll_wait(w->epfd, events, MAX_EVENTS, ms);
    }
    return n;
}

/* One wait of the loop (the run's or the setup's): events until until_ns,
 * each handed to the protocol with the clock read after the wait. */
static void dispatch_events(worker *w, uint64_t now_ns, uint64_t until_ns) {
    struct epoll_event events[MAX_EVENTS];
    int n = wait_events(w, events, now_ns, until_ns);
    if (n < 0) {
        if (errno == EINTR) return;
        perror("rackbench-engine: epoll_wait");
        exit(1);
    }
    if (n > 0) now_ns = clock_now_ns();
    for (int i = 0; i < n; i++) w->protocol->on_event(events[i].data.ptr, events[i].events, now_ns);
}

int worker_may_start(worker *w, uint64_t now_ns) {
    count_window *cw = w->clock->count;
    if (!worker_counted(w)) return now_ns < w->clock->measure_end_ns;
    if (!worker_count_opened(w)) {
        if (w->count_stage != COUNT_STAGE_WARMUP) return 0; /* its start probes, or quiet */
        if (cw->warmup_count) return count_window_claim_warmup(cw);
        return now_ns < w->clock->measure_start_ns;
    }
    if (count_window_claim(cw)) return 1;
    w->stopping = 1;
    w->stop_ns = now_ns;
    return 0;
}

/* A fixed-count run, once per turn: the thread moves through its stages
 * (count_window.h) as far as it can now, and acts on entering each: the
 * start probes once nothing of the warmup is in flight; once the window
 * has opened, the measured phase's seconds count from its start, and the
 * protocol starts every idle slot on a ticket (its start); once the
 * window has closed, the end probes. */
static void count_window_step(worker *w, uint64_t now_ns) {
    count_window *cw = w->clock->count;
    const worker_protocol *proto = w->protocol;
    int probes = w->requests->probe_count && proto->probe;
    for (;;) {
        int warmup_over = count_window_warmup_over(cw, now_ns, w->clock->measure_start_ns);
        count_stage next = count_window_next_stage(cw, w->count_stage, warmup_over, w->in_flight + w->probing,
                                                     w->stopping);
        if (next == w->count_stage) return;
        w->count_stage = next;
        if (next == COUNT_STAGE_START_PROBES && probes) {
            proto->probe(w, PROBE_START, now_ns);
        } else if (next == COUNT_STAGE_WINDOW) {
            uint64_t start_ns = 0;
            count_window_is_open(cw, &start_ns);
            /* Nothing was counted in the phase yet: its timeline starts here. */
            w->phases[PHASE_MEASURE].start_ns = start_ns;
            proto->start(w, now_ns);
        } else if (next == COUNT_STAGE_END_PROBES && probes) {
            proto->probe(w, PROBE_END, now_ns);
        }
    }
}

/* Whether the thread's loop is over (the interrupt aside): a timed run's
 * once its window ended and nothing is in flight; a fixed count's once its
 * end probes completed, after the window closed (count_window.h). */
static int run_over(const worker *w) {
    if (worker_counted(w)) return w->count_stage == COUNT_STAGE_DONE;
    return w->stopping && w->in_flight == 0;
}

/* The loop: from the run's first instant until the window is over and
 * every request in flight has ended (at most one --timeout later). */
static void run_loop(worker *w) {
    const run_clock *clock = w->clock;
    const worker_protocol *proto = w->protocol;
    uint64_t now_ns = clock_now_ns();
    w->think_due_ns = UINT64_MAX;
    proto->start(w, now_ns);
    uint64_t next_housekeeping_ns = now_ns + HOUSEKEEPING_INTERVAL_NS;
    for (;;) {
        now_ns = clock_now_ns();
        if (engine_interrupted) {
            /* Ctrl-C: stop now; what was in flight is reported apart. */
            if (!w->stopping) stop_dispatching(w, now_ns, 1);
            w->abandoned += (uint64_t)w->in_flight;
            break;
        }
        if (!w->stopping && now_ns >= clock->measure_end_ns) stop_dispatching(w, now_ns, 0);
        if (worker_counted(w)) count_window_step(w, now_ns);
        if (worker_open_loop(w) && !w->stopping) worker_dispatch_due(w, now_ns);
        if (now_ns >= next_housekeeping_ns || now_ns >= w->think_due_ns || w->stopping) {
            proto->housekeeping(w, now_ns);
            next_housekeeping_ns = now_ns + HOUSEKEEPING_INTERVAL_NS;
        }
        if (proto->end_turn) proto->end_turn(w, now_ns);
        /* After the window, in-flight requests drain until their own
         * deadline (at most the timeout), then the thread is done. */
        if (run_over(w)) break;
        uint64_t until_ns = next_housekeeping_ns;
        if (!w->stopping && clock->measure_end_ns < until_ns) until_ns = clock->measure_end_ns;
        if (w->think_due_ns < until_ns) until_ns = w->think_due_ns;
        if (worker_open_loop(w) && !w->stopping && proto->has_free_slot(w)) {
            uint64_t due_ns = next_due_ns(w);
            if (due_ns < until_ns) until_ns = due_ns;
        }
        dispatch_events(w, now_ns, until_ns);
    }
    if (proto->finish) proto->finish(w);
}

/* The protocol's setup (run_clock.setup): from the setup's common start
 * until the protocol says it is done or the run is interrupted; then the
 * two meetings with the main thread, which fixes the clock in between. */
static void run_setup_phase(worker *w) {
    run_setup *setup = w->clock->setup;
    const worker_protocol *proto = w->protocol;
    struct timespec start = clock_timespec(setup->start_ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &start, NULL) == EINTR && !engine_interrupted) {
    }
    uint64_t now_ns = clock_now_ns();
    w->think_due_ns = UINT64_MAX;
    proto->setup(w, now_ns);
    uint64_t next_housekeeping_ns = now_ns + HOUSEKEEPING_INTERVAL_NS;
    while (!engine_interrupted && !proto->setup_done(w)) {
        now_ns = clock_now_ns();
        if (now_ns >= next_housekeeping_ns || now_ns >= w->think_due_ns) {
            proto->housekeeping(w, now_ns);
            next_housekeeping_ns = now_ns + HOUSEKEEPING_INTERVAL_NS;
            if (proto->setup_done(w)) break;
        }
        uint64_t until_ns = w->think_due_ns < next_housekeeping_ns ? w->think_due_ns : next_housekeeping_ns;
        dispatch_events(w, now_ns, until_ns);
    }
    pthread_barrier_wait(&setup->done);
    pthread_barrier_wait(&setup->clock_set);
    /* The open loop's schedule counts from the clock fixed just now. */
    if (worker_open_loop(w))
        w->sched_origin_ns = open_loop_origin_ns(w->clock->start_ns, w->interval_ns, w->id, w->cfg->threads);
}

void *worker_run(void *arg) {
    worker *w = arg;
    const run_clock *clock = w->clock;
    pin_thread(w);
    /* The default 50 us timer slack would make open-loop sends late by up
     * to that much: ask the kernel to wake us on time. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (w->epfd < 0) {
        perror("rackbench-engine: epoll_create1");
        exit(1);
    }
    if (clock->setup) run_setup_phase(w);
    phase_stats_init(&w->phases[PHASE_WARMUP], clock->start_ns);
    phase_stats_init(&w->phases[PHASE_MEASURE], clock->measure_start_ns);
    struct timespec start = clock_timespec(clock->start_ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &start, NULL) == EINTR && !engine_interrupted) {
    }
    run_loop(w);
    for (int p = 0; p < PHASE_COUNT; p++) phase_stats_flush(&w->phases[p]);
    raw_log_flush(&w->raw);
    return NULL;
}
