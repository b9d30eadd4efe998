/* proc_signal.c - see proc_signal.h. */
#include "proc_signal.h"

#include "proc_scan.h"
#include "proc_stat.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Returns 1 when the process key names still runs under that identity. */
static int still_the_same(const char *proc_dir, proc_key key) {
    proc_stat stat;
    return proc_read_stat(proc_dir, key.pid, &stat) == 0 && stat.start_ticks == key.start_ticks &&
           !proc_stat_exited(&stat);
}

/* The PROC_SIGNAL_* result of a kill()-like call that returned rc. */
static int result_of(int rc) {
    if (rc == 0) return PROC_SIGNAL_SENT;
    return errno == EPERM ? PROC_SIGNAL_DENIED : PROC_SIGNAL_GONE;
}

int proc_signal(const char *proc_dir, proc_key key, int signal) {
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
    int pidfd = (int)syscall(SYS_pidfd_open, key.pid, 0);
    if (pidfd >= 0) {
        int result = PROC_SIGNAL_GONE;
        if (still_the_same(proc_dir, key)) {
            result = result_of((int)syscall(SYS_pidfd_send_signal, pidfd, signal, NULL, 0));
        }
        close(pidfd);
        return result;
    }
    if (errno == ESRCH) return PROC_SIGNAL_GONE;
    /* ENOSYS (an old kernel), EMFILE and the like: the fallback below. */
#endif
    if (!still_the_same(proc_dir, key)) return PROC_SIGNAL_GONE;
    return result_of(kill(key.pid, signal));
}
