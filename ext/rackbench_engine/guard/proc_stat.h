/*
 * proc_stat.h - parses one /proc/PID/stat line (proc(5)).
 *
 * Field 2, the command name, is in parentheses and may itself hold spaces
 * and parentheses ("(a) b)" is a valid name), so the fields after it are
 * counted from the LAST ")" of the line.
 */
#ifndef RB_PROC_STAT_H
#define RB_PROC_STAT_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;                       /* field 1 */
    char state;                      /* field 3: R, S, D, Z, X, ... */
    pid_t ppid;                      /* field 4 */
    unsigned long long start_ticks;  /* field 22: clock ticks after boot */
} proc_stat;

/*
 * Parses the line_len bytes at line into *out. Returns 0 on success, -1
 * when the line is malformed (no "(...)", too few fields, a number that is
 * not one); *out is then unspecified. The line needs no terminating NUL:
 * no byte outside line[0, line_len) is read. Allocates nothing.
 */
int proc_stat_parse(const char *line, size_t line_len, proc_stat *out);

/* Returns 1 when the state says the process has exited (a zombie, Z, or
 * dead, X or x): it runs no code and holds nothing but its exit status. */
int proc_stat_exited(const proc_stat *stat);

#endif
