/*
 * proc_scan.h - reads the processes of one user from /proc.
 *
 * Every function takes proc_dir ("/proc" in the guard) so the C tests can
 * point it at a fake tree of PID directories holding stat and environ
 * files.
 */
#ifndef RB_PROC_SCAN_H
#define RB_PROC_SCAN_H

#include "proc_entry.h"
#include "proc_stat.h"

#include <stddef.h>
#include <sys/types.h>

/* An environment larger than this is read only this far (the entry cut at
 * the end is dropped, never half-matched). Linux allows far larger ones in
 * theory; real servers carry a few kilobytes. */
#define PROC_ENVIRON_MAX_BYTES (8u << 20)

/*
 * One scan. The snapshot owns entries and its read buffer; both are
 * reused by the next proc_snapshot_take and released by
 * proc_snapshot_free. Zero-initialise it (or use PROC_SNAPSHOT_INIT)
 * before the first take.
 */
typedef struct {
    proc_entry *entries; /* sorted by ascending pid */
    size_t count;
    size_t capacity;
    char *environ_buf;
    size_t environ_capacity;
} proc_snapshot;

#define PROC_SNAPSHOT_INIT {NULL, 0, 0, NULL, 0}

/* The uid proc_snapshot_take reads as "every owner" ((uid_t)-1 is no
 * account's: the kernel reserves it). */
#define PROC_ANY_UID ((uid_t)-1)

/*
 * Replaces the snapshot's entries by every process under proc_dir whose
 * directory belongs to uid (any owner for PROC_ANY_UID), each marked when its environment holds the
 * entry_len bytes at entry exactly (see environ_has_entry). A process that
 * vanishes while being read is left out; one whose environment cannot be
 * read (not dumpable) is kept, unmarked. Returns 0, or -1 with errno set
 * when proc_dir cannot be read or memory runs out (the entries are then
 * unspecified but the snapshot may still be freed).
 */
int proc_snapshot_take(proc_snapshot *snap, const char *proc_dir, uid_t uid, const char *entry,
                       size_t entry_len);

/* Releases what the snapshot owns and zeroes it. */
void proc_snapshot_free(proc_snapshot *snap);

/*
 * Reads proc_dir/PID/stat into *out. Returns 0, or -1 when the process
 * does not exist (any more) or its line is malformed.
 */
int proc_read_stat(const char *proc_dir, pid_t pid, proc_stat *out);

/*
 * Writes the identity of pid and of each of its ancestors (parent,
 * grandparent, ... up to PID 1 or a process that cannot be read) into
 * keys, at most max_keys of them, pid first. Returns how many were
 * written. These are the processes a sweep must never signal: itself, and
 * the runner and shell that started it.
 */
size_t proc_ancestors(const char *proc_dir, pid_t pid, proc_key *keys, size_t max_keys);

#endif
