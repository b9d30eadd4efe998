/*
 * quiet.h - --quiet-pids FILE: in a fixed-count run (its warmup and its
 * window), a connection's next request waits until the server is asleep,
 * every thread of every process listed in FILE (pids, one per line,
 * written by rackbench when the server is up and again at the window's
 * start edge) blocked in the kernel (state S or I in
 * /proc/PID/task/TID/stat), and nothing else of the engine is in flight.
 *
 * Why: an instructions trial counts what the server executes per request,
 * and a server does different work for a request that finds it idle than
 * for one that arrives while it is still finishing the last (Puma serves a
 * request already waiting at once; it parks an idle connection in its
 * reactor first). With only a think time between requests, which of the
 * two a request gets depends on whether the server was scheduled soon
 * enough, that is on the machine's load: under two busy loops, 4.6% of
 * rack-hello's requests on Puma took the shorter path after a 10 ms
 * pause, and its count fell by 0.5%; over two connections, by 6.5%
 * (doc/methodology.md). Asleep is a state, not a time: whatever the load,
 * every request of the window finds the same server.
 *
 * Under valgrind a thread waiting for valgrind's lock sleeps too, but then
 * another thread holds it and runs: every thread asleep at once means
 * nothing of the server will run before an event from outside (a
 * request, or one of its own timers).
 */
#ifndef RB_QUIET_H
#define RB_QUIET_H

#include <stddef.h>
#include <stdint.h>

#define QUIET_MAX_PIDS 256
#define QUIET_ERROR_BYTES 256
/* How long a connection waits before it looks again at a server that was
 * not asleep: short beside a request under valgrind (milliseconds), long
 * enough that looking costs the engine little. */
#define QUIET_RECHECK_NS 1000000ULL

typedef struct {
    const char *path;       /* FILE; NULL: no gate */
    const char *proc_dir;   /* "/proc"; tests give a tree of their own */
    int pids[QUIET_MAX_PIDS];
    int pid_count;
    int loaded;             /* FILE was read (at the window's first check) */
    char error[QUIET_ERROR_BYTES]; /* why FILE could not be read; "" when it was */
    uint64_t checks;        /* times the server was looked at */
    uint64_t waits;         /* times it was not asleep */
} quiet_gate;

/* Prepares g for FILE path (NULL: the gate is off) under proc_dir. */
void quiet_init(quiet_gate *g, const char *path, const char *proc_dir);

/* Whether the gate is on. */
static inline int quiet_enabled(const quiet_gate *g) { return g->path != NULL; }

/* Reads g's FILE once: its pids, decimal, one per line (blank lines
 * skipped). Returns 0, or -1 with g->error set (no such file, a line that
 * is no pid, more than QUIET_MAX_PIDS); the gate then lets every request
 * through and the report carries the error, which rackbench turns into
 * a failed trial. */
int quiet_load(quiet_gate *g);

/* Has the next quiet_asleep read FILE again (the runner rewrites it at the
 * window's start edge with every process then running). */
static inline void quiet_reload(quiet_gate *g) { g->loaded = 0; g->pid_count = 0; g->error[0] = '\0'; }

/* Whether every thread of every listed process is asleep (a process or a
 * thread that is gone counts as asleep). Loads FILE at its first call.
 * Counts the check, and the wait when it returns 0. */
int quiet_asleep(quiet_gate *g);

/* The state letter in the text of a /proc/PID/task/TID/stat file (after
 * the last ')' of the command's name, which may hold spaces and ')'), or
 * 0 when there is none. Exposed for the tests. */
char quiet_stat_state(const char *stat_text);

#endif
