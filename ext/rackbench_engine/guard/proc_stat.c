/* proc_stat.c - see proc_stat.h. */
#include "proc_stat.h"

#include <limits.h>
#include <string.h>

/* Parses the decimal digits at line[*at, len) up to the next space, newline
 * or the end into *value and advances *at past them. Returns 0, or -1 when there
 * is no digit, a non-digit, or an overflow. */
static int parse_u64(const char *line, size_t len, size_t *at, unsigned long long *value) {
    size_t i = *at;
    unsigned long long v = 0;
    if (i >= len || line[i] < '0' || line[i] > '9') return -1;
    for (; i < len && line[i] != ' ' && line[i] != '\n'; i++) {
        if (line[i] < '0' || line[i] > '9') return -1;
        unsigned digit = (unsigned)(line[i] - '0');
        if (v > (ULLONG_MAX - digit) / 10) return -1;
        v = v * 10 + digit;
    }
    *at = i;
    *value = v;
    return 0;
}

/* Advances *at past the field that starts there and the space after it.
 * Returns 0, or -1 when the line ends first. */
static int skip_field(const char *line, size_t len, size_t *at) {
    size_t i = *at;
    if (i >= len || line[i] == ' ') return -1;
    while (i < len && line[i] != ' ') i++;
    if (i >= len) return -1;
    *at = i + 1;
    return 0;
}

/* parse_u64 for a pid_t (0 to INT_MAX). Returns 0 or -1. */
static int parse_pid(const char *line, size_t len, size_t *at, pid_t *pid) {
    unsigned long long v;
    if (parse_u64(line, len, at, &v) != 0 || v > INT_MAX) return -1;
    *pid = (pid_t)v;
    return 0;
}

int proc_stat_parse(const char *line, size_t line_len, proc_stat *out) {
    const char *open = memchr(line, '(', line_len);
    const char *close = memrchr(line, ')', line_len);
    if (!open || !close || close < open) return -1;

    size_t at = 0;
    if (parse_pid(line, line_len, &at, &out->pid) != 0 || out->pid <= 0) return -1;
    if (line + at + 1 != open || line[at] != ' ') return -1;

    /* After ")": " S PPID ...", state is field 3. */
    at = (size_t)(close - line) + 1;
    if (at + 3 > line_len || line[at] != ' ' || line[at + 2] != ' ') return -1;
    out->state = line[at + 1];
    at += 3;
    if (parse_pid(line, line_len, &at, &out->ppid) != 0) return -1;
    if (at >= line_len) return -1;
    at++;
    /* Fields 5 (pgrp) to 21 (itrealvalue): 17 fields to skip. */
    for (int field = 5; field <= 21; field++) {
        if (skip_field(line, line_len, &at) != 0) return -1;
    }
    return parse_u64(line, line_len, &at, &out->start_ticks);
}

int proc_stat_exited(const proc_stat *stat) {
    return stat->state == 'Z' || stat->state == 'X' || stat->state == 'x';
}
