/*
 * proc_signal.h - sends a signal to one process identified by PID and
 * start time, and never to a process that reused its PID.
 */
#ifndef RB_PROC_SIGNAL_H
#define RB_PROC_SIGNAL_H

#include "proc_entry.h"

enum { PROC_SIGNAL_SENT = 0, PROC_SIGNAL_GONE = 1, PROC_SIGNAL_DENIED = 2 };

/*
 * Delivers signal to the process whose identity is key. Returns
 * PROC_SIGNAL_SENT; PROC_SIGNAL_GONE when it has exited, or its PID now
 * belongs to another process (nothing was sent); PROC_SIGNAL_DENIED when
 * it may not be signalled (EPERM).
 *
 * Why a pidfd: pidfd_open pins whatever process the PID names at that
 * moment; checking the start time through proc_dir afterwards proves it is
 * the tracked one, and pidfd_send_signal then cannot reach a newcomer even
 * if the process exits and its PID is reused a microsecond later. Kernels
 * without pidfds (before 5.3) fall back to check-then-kill(), which leaves
 * the window of one system call.
 */
int proc_signal(const char *proc_dir, proc_key key, int signal);

#endif
