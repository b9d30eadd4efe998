/*
 * environ_match.h - does a process's environment hold one exact entry?
 *
 * The watchdog finds the processes of an experiment by the marker every one
 * of them inherits, RACKBENCH_RESULTS_DIR=<results directory>. The test is
 * an exact entry match over /proc/PID/environ, never a substring search: a
 * marker for /r must not match the entries of /r2 or /r/x, or a sweep for
 * one results directory would stop the processes of another.
 */
#ifndef RB_ENVIRON_MATCH_H
#define RB_ENVIRON_MATCH_H

#include <stddef.h>

/*
 * Returns 1 when buf holds an entry exactly equal to the entry_len bytes at
 * entry, else 0. buf is buf_len bytes of NUL-separated entries, as
 * /proc/PID/environ gives them; its last entry may lack the terminating
 * NUL (a process that overwrote its environment area, or a read cut
 * short) and still counts as a whole entry. Reads no byte outside
 * buf[0, buf_len) or entry[0, entry_len); allocates nothing. An empty
 * entry (entry_len 0) never matches.
 */
int environ_has_entry(const char *buf, size_t buf_len, const char *entry, size_t entry_len);

/*
 * Returns 1 when entry (NUL-terminated) is a marker a sweep may use:
 * "NAME=VALUE" with a non-empty NAME and a non-empty VALUE, else 0. An
 * empty VALUE is refused because it is what an unset variable expands to
 * ("RACKBENCH_RESULTS_DIR=$DIR"), and would match unrelated processes.
 */
int environ_entry_valid(const char *entry);

#endif
