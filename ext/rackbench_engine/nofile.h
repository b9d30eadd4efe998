/*
 * nofile.h - the open-file limit a run needs (RLIMIT_NOFILE), checked and
 * raised before any connection is opened.
 *
 * Every connection is a descriptor, and a WebSocket run holds thousands
 * at once; a shell's usual soft limit is 1024. Failing at connection 1021
 * would be measured as the server refusing clients, so the engine raises
 * its soft limit to what the run needs (up to the hard limit, and the
 * hard limit too when it may: root), or stops before the run with one
 * line saying what to do.
 */
#ifndef RB_NOFILE_H
#define RB_NOFILE_H

#include <stddef.h>
#include <stdint.h>

/* Descriptors a run needs beyond its connections: stdio, the epoll of
 * each thread, the raw log, the pipes of --phase-fd and --hold-fd, and
 * OpenSSL's and the C library's own files, with room to spare. */
#define NOFILE_SPARE 64

typedef struct {
    uint64_t needed;        /* what the run needs */
    uint64_t soft_before;   /* the soft limit found */
    uint64_t hard_before;   /* the hard limit found */
    uint64_t soft;          /* the soft limit in force after nofile_ensure */
    int raised;             /* the soft (or hard) limit was raised */
} nofile_limits;

/* Decides, without a system call, the soft and hard limits to set for
 * needed descriptors under the limits found (may_raise_hard: the process
 * may raise its hard limit, as root may). Returns 0 with *soft and *hard
 * (unchanged values when nothing needs raising), or -1 when needed
 * cannot be had. */
int nofile_plan(uint64_t needed, uint64_t soft_found, uint64_t hard_found, int may_raise_hard, uint64_t *soft,
                uint64_t *hard);

/* Makes sure the process may open connections + threads + NOFILE_SPARE
 * descriptors, raising its limits when it must. Returns 0 (limits filled
 * in), or -1 with one line in err naming the numbers and the fix. */
int nofile_ensure(uint64_t connections, int threads, nofile_limits *limits, char *err, size_t err_len);

#endif
