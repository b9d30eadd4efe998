/*
 * watch.h - what --watch does before its sweep: outlive the terminal
 * signals that take the runner down, and wait for the runner to go.
 */
#ifndef RB_WATCH_H
#define RB_WATCH_H

/*
 * Ignores SIGINT, SIGHUP, SIGTERM and SIGPIPE for the rest of the
 * process's life. Why: the runner's end can come with any of them (Ctrl-C,
 * a closed terminal, `kill -- -PGID`, a service manager TERMing everything
 * in the unit), and the watchdog must still be there afterwards to sweep;
 * the end of its stdin, not a signal, is what says the runner is gone.
 * SIGPIPE: the runner that would read the sweep's report may be dead.
 * SIGKILL cannot be ignored: a watchdog killed with -9 sweeps nothing.
 * Never called in the exec guard: ignored signals survive execve and
 * would reach the server.
 */
void watch_ignore_terminal_signals(void);

/*
 * Blocks reading fd, discarding what arrives, until end of file: when the
 * last holder of the pipe's write end (the runner) closes it or dies, by
 * any signal. Returns 0 at end of file, -1 with errno on a read error
 * (EINTR is retried).
 */
int watch_wait_for_eof(int fd);

#endif
