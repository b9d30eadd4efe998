/*
 * sweep_plan.h - the bookkeeping of a sweep, kept pure (no /proc, no
 * signals, no clock) so the C tests can drive it round by round.
 *
 * A sweep runs in rounds: scan /proc (proc_scan), choose the processes to
 * stop (sweep_select), plan the signals of the round (sweep_plan_round),
 * deliver them (proc_signal) and report back the ones that could not be
 * delivered. The table remembers every process it ever chose by identity
 * (PID and start time), so that
 *   - a process is still stopped after it stops looking like a target (its
 *     marked parent died, or it overwrote its environment with a process
 *     title, which Ruby's $0= does);
 *   - a PID that was reused by an unrelated process is a different key and
 *     never inherits a signal;
 *   - nobody gets the same signal twice: some servers read a second TERM as
 *     "exit now, skip the clean shutdown".
 */
#ifndef RB_SWEEP_PLAN_H
#define RB_SWEEP_PLAN_H

#include "proc_entry.h"

#include <stddef.h>

typedef enum { SWEEP_PHASE_TERM, SWEEP_PHASE_KILL } sweep_phase;

/* One signal to deliver to exactly one process. */
typedef struct {
    proc_key key;
    int signal; /* SIGTERM or SIGKILL */
} sweep_action;

/* A process the sweep has chosen. */
typedef struct {
    proc_key key;
    int termed; /* TERM was delivered */
    int killed; /* KILL was delivered */
    int alive;  /* running as of the latest round */
} sweep_tracked;

/* Owns tracked and actions; zero-initialise (SWEEP_TABLE_INIT), release
 * with sweep_table_free. */
typedef struct {
    sweep_tracked *tracked;
    size_t count;
    size_t capacity;
    sweep_action *actions;
    size_t actions_capacity;
} sweep_table;

#define SWEEP_TABLE_INIT {NULL, 0, 0, NULL, 0}

typedef struct {
    size_t termed;    /* processes TERM was delivered to */
    size_t killed;    /* processes KILL was delivered to */
    size_t survivors; /* tracked processes still running */
} sweep_counts;

/*
 * Chooses the processes of one scan to stop: those marked, and those
 * descended (through the ppid links among entries) from a chosen one, so
 * a worker that overwrote its environment is still found through its
 * master. Never chosen: an exited process, PID 1, and any process whose
 * identity is among the protected_count keys at protected_keys (the sweep
 * itself and its ancestors); a protected process passes nothing on to its
 * children. entries must be sorted by ascending PID. Writes 1 or 0 into
 * selected[i] for each of the count entries and returns how many were
 * chosen, or -1 when out of memory. Allocates only temporaries, freed
 * before it returns.
 */
long sweep_select(const proc_entry *entries, size_t count, const proc_key *protected_keys,
                  size_t protected_count, unsigned char *selected);

/*
 * Plans one round from one scan (entries sorted by ascending PID, selected
 * as sweep_select left it): adds each chosen process that is new to the
 * table, refreshes every tracked process's alive flag (alive: the same
 * PID and start time is in entries and has not exited), then plans TERM
 * (phase SWEEP_PHASE_TERM) or KILL (SWEEP_PHASE_KILL) for each alive
 * tracked process that has not had that signal yet, and counts it as
 * delivered. Returns the number of actions and points *actions at them
 * (owned by the table, valid until the next call), or -1 when out of
 * memory.
 */
long sweep_plan_round(sweep_table *table, const proc_entry *entries, size_t count,
                      const unsigned char *selected, sweep_phase phase, const sweep_action **actions);

/*
 * Records that action could not be delivered: the signal is no longer
 * counted as delivered (a later round of the same phase tries again), and
 * when gone is 1 (the process no longer exists, or its PID now belongs to
 * another process) it is no longer alive. gone 0 means the process is
 * there but refused the signal (another user's): it stays alive and ends
 * up a survivor if it never goes.
 */
void sweep_table_signal_failed(sweep_table *table, const sweep_action *action, int gone);

/* Tracked processes alive as of the latest round. */
size_t sweep_table_alive(const sweep_table *table);

/* What the sweep did; survivors is sweep_table_alive. */
sweep_counts sweep_table_counts(const sweep_table *table);

/* Releases what the table owns and zeroes it. */
void sweep_table_free(sweep_table *table);

#endif
