/*
 * main.c - rackbench-engine: parse the command line, start one worker per
 * thread, sample the engine's own CPU time over the measured window (timed,
 * or a fixed count of requests: count_window.h), merge and print the result
 * as JSON on stdout.
 *
 * Exit status: 0 when the run completed (whatever the server did: its
 * failures are counted in the result), 1 on an internal failure, 2 on a
 * usage error. Every error is one line on stderr.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "h2_worker.h"
#include "http1_conn.h"
#include "nofile.h"
#include "report.h"
#include "requests.h"
#include "tls.h"
#include "worker.h"
#include "ws_report.h"
#include "ws_worker.h"

/* The threads start this long after setup, together, on the same t0. */
#define START_DELAY_NS (20 * NS_PER_MS)

static void on_signal(int sig) {
    (void)sig;
    engine_interrupted = 1;
}

static void install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A server that resets the connection makes write() fail with EPIPE,
     * counted as a write error; it must not kill the engine. */
    signal(SIGPIPE, SIG_IGN);
}

/* Sleeps until deadline_ns or until interrupted. */
static void sleep_until(uint64_t deadline_ns) {
    struct timespec ts = clock_timespec(deadline_ns);
    while (!engine_interrupted && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* --phase-fd: tells the caller a phase began ('m': the measured window,
 * 'e': its end), best effort: a caller that stopped listening costs
 * nothing (SIGPIPE is ignored). Not after an interrupt: nothing more is
 * measured then. */
static void signal_phase(const engine_config *cfg, char phase) {
    if (cfg->phase_fd < 0 || engine_interrupted) return;
    ssize_t n;
    do {
        n = write(cfg->phase_fd, &phase, 1);
    } while (n < 0 && errno == EINTR);
}

/* --hold-fd: after an edge of a fixed-count window the engine waits for one
 * byte from the caller, whose own edge is then in place (valgrind's
 * instrumentation switched on or off in every server process), before it
 * sends the window's first request or closes its connections. End of file,
 * an error or an interrupt end the wait too: a caller that is gone must not
 * hang the engine. */
static void hold_for_caller(const engine_config *cfg) {
    if (cfg->hold_fd < 0 || engine_interrupted) return;
    char byte;
    for (;;) {
        ssize_t n = read(cfg->hold_fd, &byte, 1);
        if (n >= 0 || engine_interrupted) return;
        if (errno == EAGAIN) {
            /* The caller's pipe may be non-blocking (Ruby makes its pipes
             * so, and the flag belongs to the open file, shared with us). */
            struct pollfd pfd = {.fd = cfg->hold_fd, .events = POLLIN};
            poll(&pfd, 1, -1);
        } else if (errno != EINTR) {
            return;
        }
    }
}

/* The window's edges and the workers' end, as the window is timed: the
 * clock opens and closes it, and the workers drain what is in flight. */
static void run_timed_window(const engine_config *cfg, const run_clock *clock, run_result *result,
                             uint64_t *cpu_start_ns, uint64_t *end_ns) {
    sleep_until(clock->measure_start_ns);
    *cpu_start_ns = clock_now_ns();
    getrusage(RUSAGE_SELF, &result->cpu_start);
    signal_phase(cfg, 'm');
    sleep_until(clock->measure_end_ns);
    *end_ns = clock_now_ns();
    signal_phase(cfg, 'e');
    if (cfg->phase_fd >= 0) close(cfg->phase_fd);
    for (int i = 0; i < cfg->threads; i++) pthread_join(result->workers[i].thread, NULL);
}

/* The window's edges as it is a fixed count (count_window.h): once the
 * warmup's time is up and every thread is quiet (its start probes
 * completed), 'm', the caller's hold, then the window opens; it ends when
 * every thread has completed its last request of the N, then 'e' and the
 * caller's hold, the connections still open; only then is it closed for
 * the threads, which send their end probes and end. Sets the warmup's and
 * the window's real bounds. */
static void run_count_window(const engine_config *cfg, const run_clock *clock, run_result *result,
                             uint64_t *cpu_start_ns, uint64_t *end_ns) {
    struct timespec poll = {0, (long)NS_PER_MS};
    sleep_until(clock->measure_start_ns);
    while (!engine_interrupted && !count_window_all_quiet(clock->count)) nanosleep(&poll, NULL);
    result->warmup_end_ns = clock_now_ns();
    signal_phase(cfg, 'm');
    hold_for_caller(cfg);
    *cpu_start_ns = clock_now_ns();
    getrusage(RUSAGE_SELF, &result->cpu_start);
    if (!engine_interrupted) count_window_open(clock->count, *cpu_start_ns);
    while (!engine_interrupted && !count_window_all_drained(clock->count)) nanosleep(&poll, NULL);
    *end_ns = clock_now_ns();
    signal_phase(cfg, 'e');
    hold_for_caller(cfg);
    if (cfg->phase_fd >= 0) close(cfg->phase_fd);
    count_window_close(clock->count);
    for (int i = 0; i < cfg->threads; i++) pthread_join(result->workers[i].thread, NULL);
}

static int pin_process(const engine_config *cfg) {
    if (cfg->cpu_count <= 0) return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < cfg->cpu_count; i++) CPU_SET(cfg->cpus[i], &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        fprintf(stderr, "rackbench-engine: cannot pin to --cpus: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* A WebSocket run's setup (worker.h's run_setup): the threads connect
 * their clients from setup->start_ns; once every thread is done, the
 * clock is fixed from that moment and the threads go on. Sets the
 * setup's bounds and CPU in result. */
static void run_setup_phase(run_setup *setup, run_clock *clock, const engine_config *cfg, run_result *result) {
    result->setup_start_ns = setup->start_ns;
    getrusage(RUSAGE_SELF, &result->setup_cpu_start);
    pthread_barrier_wait(&setup->done);
    result->setup_end_ns = clock_now_ns();
    getrusage(RUSAGE_SELF, &result->setup_cpu_end);
    clock->start_ns = result->setup_end_ns + START_DELAY_NS;
    clock->measure_start_ns = clock->start_ns + cfg->warmup_ns;
    clock->measure_end_ns = clock->measure_start_ns + cfg->duration_ns;
    pthread_barrier_wait(&setup->clock_set);
}

int main(int argc, char **argv) {
    static engine_config cfg;
    uint64_t started_ns = clock_now_ns();
    struct timespec realtime;
    clock_gettime(CLOCK_REALTIME, &realtime);
    int64_t realtime_offset_ns = (int64_t)realtime.tv_sec * 1000000000 + realtime.tv_nsec - (int64_t)started_ns;
    int rc = cli_parse(&cfg, argc, argv);
    if (rc < 0) return 0;
    if (rc > 0) return rc;
    /* Every connection is a descriptor: the limit is raised (or the run
     * refused) before any is opened. */
    nofile_limits nofile;
    char limit_err[512];
    int broadcaster = cfg.ws && cfg.ws_workload == WS_WORKLOAD_BROADCAST;
    if (nofile_ensure((uint64_t)cfg.connections + (uint64_t)broadcaster, cfg.threads, &nofile, limit_err,
                      sizeof(limit_err))) {
        fprintf(stderr, "rackbench-engine: %s\n", limit_err);
        return 2;
    }

    request_set requests;
    char err[1024];
    if (requests_load(&requests, &cfg, err, sizeof(err))) {
        fprintf(stderr, "rackbench-engine: %s\n", err);
        return 2;
    }
    if (protocol_is_h2(cfg.protocol) &&
        (requests.templated || requests.body_captures || requests.header_work || requests.expects ||
         requests.probe_count || requests.users.row_count)) {
        fprintf(stderr, "rackbench-engine: --protocol %s does not support request lists with "
                        "captures, variables, @users, @expect, probes or @follow yet\n",
                cfg.protocol == PROTOCOL_H2 ? "h2" : "h2c");
        requests_free(&requests);
        return 2;
    }
    /* One TLS context for the run, shared by the threads: its CA file is
     * read here, so a missing one is a usage error before any load. */
    tls_context *tls_ctx = NULL;
    if (cfg.tls) {
        tls_options opts = {.verify = cfg.tls_verify, .ca_file = cfg.ca_file,
                            .alpn = cfg.protocol == PROTOCOL_H2 ? "h2" : "http/1.1",
                            .require_alpn = cfg.protocol == PROTOCOL_H2, .resume = cfg.tls_resume, .host = cfg.host};
        tls_ctx = tls_context_new(&opts, err, sizeof(err));
        if (!tls_ctx) {
            fprintf(stderr, "rackbench-engine: %s\n", err);
            requests_free(&requests);
            return 2;
        }
    }
    int raw_fd = -1;
    if (cfg.raw_file) {
        raw_fd = raw_log_open_file(cfg.raw_file);
        if (raw_fd < 0) {
            fprintf(stderr, "rackbench-engine: cannot write --raw file %s: %s\n", cfg.raw_file, strerror(errno));
            return 2;
        }
    }
    if (pin_process(&cfg)) return 2;
    install_signals();
    /* If whoever started the engine dies (a runner killed with -9), stop
     * as on SIGTERM instead of loading a server nobody measures. */
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    /* It may have died before prctl took effect: rackbench says who the
     * parent should be; started by hand, compare with the parent seen. */
    const char *expected = getenv("RACKBENCH_PARENT_PID");
    if (expected) parent = (pid_t)atol(expected);
    if (getppid() != parent) engine_interrupted = 1;

    count_window window;
    count_window_init(&window, cfg.count, cfg.warmup_count, cfg.threads);
    run_clock clock;
    clock.start_ns = clock_now_ns() + START_DELAY_NS;
    clock.measure_start_ns = clock.start_ns + cfg.warmup_ns;
    clock.measure_end_ns = cfg.count ? UINT64_MAX : clock.measure_start_ns + cfg.duration_ns;
    clock.count = &window;
    /* A WebSocket run connects its clients first: its clock is fixed
     * after that setup, however long it took. */
    run_setup setup;
    clock.setup = NULL;
    if (cfg.ws) {
        setup.start_ns = clock.start_ns;
        pthread_barrier_init(&setup.done, NULL, (unsigned)cfg.threads + 1);
        pthread_barrier_init(&setup.clock_set, NULL, (unsigned)cfg.threads + 1);
        clock.setup = &setup;
    }
    ws_shared shared;
    memset(&shared, 0, sizeof(shared));

    worker *workers = calloc((size_t)cfg.threads, sizeof(worker));
    if (!workers) {
        perror("rackbench-engine: out of memory");
        return 1;
    }
    /* Connections are spread so that every one is used: the first
     * (connections % threads) threads take one more. The open-loop rate is
     * split in proportion to each thread's connections. */
    const worker_protocol *protocol = cfg.ws                         ? &ws_protocol
                                      : protocol_is_h2(cfg.protocol) ? &h2_protocol
                                                                     : &http1_protocol;
    int slot = 0;
    for (int i = 0; i < cfg.threads; i++) {
        int count = cfg.connections / cfg.threads + (i < cfg.connections % cfg.threads ? 1 : 0);
        double rate = cfg.rate_per_s * count / cfg.connections;
        worker_init(&workers[i], i, &cfg, &requests, &clock, protocol, tls_ctx, slot, count, rate, raw_fd);
        workers[i].protocol_shared = &shared;
        slot += count;
    }
    for (int i = 0; i < cfg.threads; i++) {
        if (pthread_create(&workers[i].thread, NULL, worker_run, &workers[i]) != 0) {
            fprintf(stderr, "rackbench-engine: cannot start thread %d\n", i);
            /* The threads started wait for the others at the setup's end. */
            if (clock.setup) exit(1);
            engine_interrupted = 1;
            for (int k = 0; k < i; k++) pthread_join(workers[k].thread, NULL);
            return 1;
        }
    }

    run_result result;
    memset(&result, 0, sizeof(result));
    result.started_ns = started_ns;
    result.realtime_offset_ns = realtime_offset_ns;
    result.nofile = nofile;
    if (clock.setup) run_setup_phase(&setup, &clock, &cfg, &result);
    result.cfg = &cfg;
    result.requests = &requests;
    result.clock = &clock;
    result.workers = workers;
    result.worker_count = cfg.threads;

    uint64_t cpu_start_ns = 0, end_ns = 0;
    if (cfg.count) {
        run_count_window(&cfg, &clock, &result, &cpu_start_ns, &end_ns);
    } else {
        run_timed_window(&cfg, &clock, &result, &cpu_start_ns, &end_ns);
    }
    getrusage(RUSAGE_SELF, &result.cpu_end);
    uint64_t joined_ns = clock_now_ns();

    result.interrupted = engine_interrupted != 0;
    /* The measured window as it really ran: shorter if interrupted; a
     * fixed count's from its opening to its last completion (never opened:
     * empty). */
    uint64_t window_end_ns = end_ns < clock.measure_end_ns ? end_ns : clock.measure_end_ns;
    uint64_t window_start_ns = clock.measure_start_ns;
    int opened = !cfg.count || count_window_is_open(&window, &window_start_ns);
    result.measured_ns = opened && window_end_ns > window_start_ns ? window_end_ns - window_start_ns : 0;
    uint64_t warmup_end_ns = cfg.count && result.warmup_end_ns ? result.warmup_end_ns : clock.measure_start_ns;
    if (end_ns < warmup_end_ns) warmup_end_ns = end_ns;
    result.warmup_actual_ns = warmup_end_ns > clock.start_ns ? warmup_end_ns - clock.start_ns : 0;
    result.cpu_wall_ns = joined_ns > cpu_start_ns ? joined_ns - cpu_start_ns : 0;
    if (cfg.ws) ws_report_json(stdout, &result);
    else report_json(stdout, &result);
    fflush(stdout);

    int raw_failed = 0;
    for (int i = 0; i < cfg.threads; i++) {
        raw_failed |= workers[i].raw.failed;
        worker_free(&workers[i]);
    }
    free(workers);
    if (clock.setup) {
        pthread_barrier_destroy(&setup.done);
        pthread_barrier_destroy(&setup.clock_set);
    }
    tls_context_free(tls_ctx);
    requests_free(&requests);
    if (raw_fd >= 0 && close(raw_fd) != 0) raw_failed = 1;
    if (raw_failed) {
        fprintf(stderr, "rackbench-engine: writing the --raw file %s failed (disk full?)\n", cfg.raw_file);
        return 1;
    }
    return 0;
}
