/*
 * sweep.h - stops, now, every process of this user (of any user for root)
 * that carries one environment entry (the experiment's marker), and
 * whatever they start while being stopped.
 *
 * Rounds of: scan /proc, choose (marked processes and their descendants,
 * never a protected one), signal, wait SWEEP_POLL_INTERVAL_MS. TERM first,
 * to every process as soon as it is seen, for up to grace_ms; then KILL to
 * whatever is left, and whatever appears, for up to kill_wait_ms. It ends
 * as soon as a round finds nothing of the experiment running.
 */
#ifndef RB_SWEEP_H
#define RB_SWEEP_H

#include "proc_entry.h"
#include "sweep_plan.h"

#include <stddef.h>
#include <sys/types.h>

/* How long KILLed processes get to disappear (one may be in the middle of a
 * system call); the same allowance the runner's own stop gives. */
#define SWEEP_KILL_WAIT_MS 5000
/* Between two scans. Each scan reads the stat and environment of every
 * process of the user: 50 ms keeps that below a few percent of a core on a
 * busy machine while a grace period runs, and well inside any grace. */
#define SWEEP_POLL_INTERVAL_MS 50

typedef struct {
    const char *proc_dir;          /* "/proc" */
    const char *entry;             /* "NAME=VALUE", NUL-terminated */
    long grace_ms;                 /* TERM phase, >= 0 */
    long kill_wait_ms;             /* KILL phase, >= 0 */
    long poll_interval_ms;         /* > 0 */
    const proc_key *protected_keys; /* never signalled (self, ancestors) */
    size_t protected_count;
} sweep_options;

/*
 * The owner whose processes a sweep run with effective uid euid scans:
 * euid itself, or every owner (PROC_ANY_UID) for root. A runner started as
 * root starts the services it cannot run as root (PostgreSQL refuses it)
 * under their own accounts, still carrying its marker; root may signal
 * them, and the marker's exact entry keeps every other process out.
 */
uid_t sweep_owner(uid_t euid);

/*
 * Runs one sweep as options say. Returns 0 with *counts filled, or -1 with
 * a one-line reason (no newline) in reason[0, reason_size) when /proc
 * cannot be read or memory runs out; signals already sent stay sent.
 * Allocates only for its own duration.
 */
int sweep_run(const sweep_options *options, sweep_counts *counts, char *reason, size_t reason_size);

#endif
