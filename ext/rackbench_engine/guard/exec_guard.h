/*
 * exec_guard.h - rackbench-guard PARENT_PID COMMAND [ARGS...]
 *
 * Runs COMMAND (a server) so that it cannot outlive the rackbench runner
 * that started it: the kernel sends it SIGTERM when its parent dies (the
 * parent-death signal survives execve). setpriv --pdeathsig does the same
 * but leaves a race: if the runner is killed between fork and prctl, the
 * signal is never sent and the server runs on forever. Here the parent's
 * PID is passed in and checked after prctl, closing that window.
 *
 * It reaches the server's main process only, with TERM only: a server that
 * ignores TERM, and what it started in a group or session of its own, are
 * for the watchdog's sweep (sweep.h).
 */
#ifndef RB_EXEC_GUARD_H
#define RB_EXEC_GUARD_H

/*
 * argv[1] is PARENT_PID, argv[2..] the command. Does not return when the
 * command starts (it replaces this process). Otherwise returns the exit
 * status: 1 when the parent is already gone (or prctl fails), 2 on a usage
 * error, 127 when COMMAND cannot be run; the reason is on stderr.
 */
int exec_guard_main(int argc, char **argv);

#endif
