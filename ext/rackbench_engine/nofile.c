/* nofile.c - see nofile.h. */
#include "nofile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

int nofile_plan(uint64_t needed, uint64_t soft_found, uint64_t hard_found, int may_raise_hard, uint64_t *soft,
                uint64_t *hard) {
    *soft = soft_found;
    *hard = hard_found;
    if (soft_found == RLIM_INFINITY || soft_found >= needed) return 0;
    if (hard_found == RLIM_INFINITY || hard_found >= needed) {
        *soft = needed;
        return 0;
    }
    if (!may_raise_hard) return -1;
    *soft = *hard = needed;
    return 0;
}

int nofile_ensure(uint64_t connections, int threads, nofile_limits *limits, char *err, size_t err_len) {
    memset(limits, 0, sizeof(*limits));
    limits->needed = connections + 2 * (uint64_t)threads + NOFILE_SPARE;
    struct rlimit found;
    if (getrlimit(RLIMIT_NOFILE, &found) != 0) {
        snprintf(err, err_len, "cannot read the open-file limit: %s", strerror(errno));
        return -1;
    }
    limits->soft_before = found.rlim_cur;
    limits->hard_before = found.rlim_max;
    limits->soft = found.rlim_cur;
    uint64_t soft, hard;
    /* Whether the hard limit may rise is known only by trying (root, or
     * CAP_SYS_RESOURCE): plan as if it may, and say so if the kernel says no. */
    if (nofile_plan(limits->needed, found.rlim_cur, found.rlim_max, 1, &soft, &hard) == 0 &&
        (soft != found.rlim_cur || hard != found.rlim_max)) {
        struct rlimit wanted = {.rlim_cur = soft, .rlim_max = hard};
        if (setrlimit(RLIMIT_NOFILE, &wanted) != 0) {
            snprintf(err, err_len,
                     "%llu connections need %llu open files, and the limit is %llu (hard %llu), which this user "
                     "cannot raise (%s): run `ulimit -n %llu` first (as root, or after raising the hard limit in "
                     "/etc/security/limits.conf)",
                     (unsigned long long)connections, (unsigned long long)limits->needed,
                     (unsigned long long)found.rlim_cur, (unsigned long long)found.rlim_max, strerror(errno),
                     (unsigned long long)limits->needed);
            return -1;
        }
        limits->soft = soft;
        limits->raised = 1;
    }
    return 0;
}
