/*
 * main.c - rackbench-guard: keeps the processes of an experiment from
 * outliving the runner that started them.
 *
 *   rackbench-guard PARENT_PID COMMAND [ARGS...]
 *       runs COMMAND with the parent-death signal armed (exec_guard.h)
 *   rackbench-guard --sweep NAME=VALUE GRACE_MS
 *       stops now every process of this user (any user's, for root) whose
 *       environment holds the entry NAME=VALUE, and their descendants
 *       (sweep.h); prints
 *       {"termed":N,"killed":N,"survivors":N}
 *   rackbench-guard --watch NAME=VALUE GRACE_MS
 *       waits for end of file on stdin (the runner holds the pipe's write
 *       end and dies, or closes it), then sweeps the same way
 *
 * Exit status of --sweep and --watch: 0 after a sweep (survivors may be
 * non-zero: processes that outlived KILL, such as one stuck in the
 * kernel), 1 when the sweep could not run, 2 on a usage error; the reason
 * is one line on stderr.
 */
#include "environ_match.h"
#include "exec_guard.h"
#include "proc_scan.h"
#include "sweep.h"
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PROC_DIR "/proc"
/* A day: any longer grace is a mistake (a value in microseconds?). */
#define GRACE_MS_MAX 86400000L
/* Ancestors kept from each of the two looks --watch takes. */
#define ANCESTORS_MAX 64

static const char USAGE[] =
    "usage: rackbench-guard PARENT_PID COMMAND [ARGS...]\n"
    "       rackbench-guard --sweep NAME=VALUE GRACE_MS\n"
    "       rackbench-guard --watch NAME=VALUE GRACE_MS\n";

/* Parses GRACE_MS (decimal digits only, at most GRACE_MS_MAX) into *grace_ms.
 * Returns 0, or -1 when text is anything else. */
static int parse_grace_ms(const char *text, long *grace_ms) {
    long value = 0;
    if (*text == '\0') return -1;
    for (const char *c = text; *c; c++) {
        if (*c < '0' || *c > '9') return -1;
        value = value * 10 + (*c - '0');
        if (value > GRACE_MS_MAX) return -1;
    }
    *grace_ms = value;
    return 0;
}

/* Checks argv of --sweep/--watch. Returns 0, or 2 after printing why. */
static int check_arguments(int argc, char **argv, long *grace_ms) {
    if (argc != 4) {
        fputs(USAGE, stderr);
        return 2;
    }
    if (!environ_entry_valid(argv[2])) {
        fprintf(stderr,
                "rackbench-guard: %s: the marker must be NAME=VALUE with a non-empty name and value, got '%s'\n",
                argv[1], argv[2]);
        return 2;
    }
    if (parse_grace_ms(argv[3], grace_ms) != 0) {
        fprintf(stderr,
                "rackbench-guard: %s: GRACE_MS must be a whole number of milliseconds up to %ld, got '%s'\n",
                argv[1], GRACE_MS_MAX, argv[3]);
        return 2;
    }
    return 0;
}

/* Sweeps and prints the counts as one line of JSON. Returns the exit status. */
static int sweep_and_report(const char *entry, long grace_ms, const proc_key *protected_keys,
                            size_t protected_count) {
    sweep_options options = {.proc_dir = PROC_DIR, .entry = entry, .grace_ms = grace_ms,
                             .kill_wait_ms = SWEEP_KILL_WAIT_MS, .poll_interval_ms = SWEEP_POLL_INTERVAL_MS,
                             .protected_keys = protected_keys, .protected_count = protected_count};
    sweep_counts counts;
    char reason[512];
    if (sweep_run(&options, &counts, reason, sizeof reason) != 0) {
        fprintf(stderr, "rackbench-guard: sweep failed: %s\n", reason);
        return 1;
    }
    printf("{\"termed\":%zu,\"killed\":%zu,\"survivors\":%zu}\n", counts.termed, counts.killed,
           counts.survivors);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "rackbench-guard: cannot write the sweep's counts: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

/* --sweep NAME=VALUE GRACE_MS. Returns the exit status. */
static int sweep_main(int argc, char **argv) {
    long grace_ms;
    int usage = check_arguments(argc, argv, &grace_ms);
    if (usage != 0) return usage;
    signal(SIGPIPE, SIG_IGN); /* a caller that stopped reading gets an error line, not a dead sweep */
    proc_key protected_keys[ANCESTORS_MAX];
    size_t protected_count = proc_ancestors(PROC_DIR, getpid(), protected_keys, ANCESTORS_MAX);
    return sweep_and_report(argv[2], grace_ms, protected_keys, protected_count);
}

/* --watch NAME=VALUE GRACE_MS: returns the exit status, once stdin has
 * ended and the sweep is done. */
static int watch_main(int argc, char **argv) {
    long grace_ms;
    int usage = check_arguments(argc, argv, &grace_ms);
    if (usage != 0) return usage;
    if (fcntl(STDIN_FILENO, F_GETFL) < 0) {
        fputs("rackbench-guard: --watch: stdin is not open (it must be the read end of the runner's pipe)\n",
              stderr);
        return 2;
    }
    watch_ignore_terminal_signals();
    /* Protected: the runner and its ancestors as they are now (the runner
     * is gone when the sweep starts, its shell may not be), and the chain
     * this process is reparented into afterwards. */
    proc_key protected_keys[2 * ANCESTORS_MAX];
    size_t protected_count = proc_ancestors(PROC_DIR, getpid(), protected_keys, ANCESTORS_MAX);
    if (watch_wait_for_eof(STDIN_FILENO) != 0) {
        /* The pipe is unusable: nothing can tell any more whether the
         * runner lives, and a watchdog that waits no longer must sweep. */
        fprintf(stderr, "rackbench-guard: --watch: reading stdin: %s; sweeping\n", strerror(errno));
    }
    protected_count += proc_ancestors(PROC_DIR, getpid(), protected_keys + protected_count, ANCESTORS_MAX);
    return sweep_and_report(argv[2], grace_ms, protected_keys, protected_count);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--sweep") == 0) return sweep_main(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "--watch") == 0) return watch_main(argc, argv);
    if (argc >= 2 && strncmp(argv[1], "--", 2) == 0) {
        fputs(USAGE, stderr);
        return 2;
    }
    return exec_guard_main(argc, argv);
}
