/*
 * proc_entry.h - the few facts about one process that the sweep needs,
 * shared by the /proc reader (proc_scan) and the pure bookkeeping
 * (sweep_plan), which never reads /proc itself.
 */
#ifndef RB_PROC_ENTRY_H
#define RB_PROC_ENTRY_H

#include <sys/types.h>

/*
 * A process identity that survives PID reuse: the PID plus the start time
 * (field 22 of /proc/PID/stat, clock ticks since boot). A PID that was
 * freed and handed to another process comes back with another start time.
 */
typedef struct {
    pid_t pid;
    unsigned long long start_ticks;
} proc_key;

/* One process as seen by one scan of /proc. */
typedef struct {
    proc_key key;
    pid_t ppid;
    int exited; /* 1: a zombie, gone but for its exit status */
    int marked; /* 1: its environment holds the sweep's entry */
} proc_entry;

#endif
