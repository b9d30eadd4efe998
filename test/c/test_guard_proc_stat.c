/*
 * test_guard_proc_stat.c - the /proc/PID/stat parser of rackbench-guard:
 * command names with spaces and parentheses (fields are counted from the
 * last ")"), malformed lines, and lines without a NUL placed against an
 * unreadable page, so a read past the line crashes.
 */
#include "check.h"
#include "fenced_bytes.h"
#include "proc_scan.h"
#include "proc_stat.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A stat line as the kernel writes it (fields 1-25, newline-terminated),
 * with tpgid -1 as for a process without a terminal. */
static size_t stat_line(char *buf, size_t cap, const char *pid, const char *comm, char state, const char *ppid,
                        const char *start_ticks)
{
    int n = snprintf(buf, cap,
                     "%s (%s) %c %s 4242 4242 0 -1 4194560 1200 0 0 0 31 7 0 0 20 0 3 0 %s 123456789 2048 "
                     "18446744073709551615\n",
                     pid, comm, state, ppid, start_ticks);
    return n < 0 ? 0 : (size_t)n;
}

/* Parses line[0, len) at the end fence and at the start fence; both
 * placements must agree. Returns the parser's result. */
static int parse(const char *line, size_t len, proc_stat *out)
{
    proc_stat other;
    int at_end = proc_stat_parse(fenced_end(line, len), len, out);
    int at_start = proc_stat_parse(fenced_start(line, len), len, &other);
    CHECK(at_end == at_start);
    if (at_end == 0 && at_start == 0) {
        CHECK(other.pid == out->pid && other.ppid == out->ppid && other.state == out->state &&
              other.start_ticks == out->start_ticks);
    }
    return at_end;
}

static int parse_text(const char *line, proc_stat *out) { return parse(line, strlen(line), out); }

static void test_plain_line(void)
{
    char line[512];
    proc_stat st;
    size_t len = stat_line(line, sizeof line, "4242", "ruby", 'S', "17", "98765");
    CHECK(parse(line, len, &st) == 0);
    CHECK_EQ_U64(st.pid, 4242);
    CHECK_EQ_U64(st.ppid, 17);
    CHECK(st.state == 'S');
    CHECK_EQ_U64(st.start_ticks, 98765);
    /* Without the newline, and cut right after field 22. */
    CHECK(parse(line, len - 1, &st) == 0);
    CHECK(parse_text("7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555", &st) == 0);
    CHECK_EQ_U64(st.start_ticks, 555);
    CHECK(parse_text("7 (x) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555\n", &st) == 0);
    CHECK_EQ_U64(st.start_ticks, 555);
    /* The largest start time. */
    len = stat_line(line, sizeof line, "1", "init", 'S', "0", "18446744073709551615");
    CHECK(parse(line, len, &st) == 0);
    CHECK(st.start_ticks == 18446744073709551615ULL);
    CHECK_EQ_U64(st.ppid, 0);
}

static void test_command_names(void)
{
    char line[512];
    proc_stat st;
    const char *names[] = {"puma 6.4 (tcp)", "a) (b", ")", "(", "x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19",
                           "", " ", "))"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len = stat_line(line, sizeof line, "31337", names[i], 'Z', "4", "1234567");
        int ok = parse(line, len, &st) == 0;
        CHECK(ok);
        if (!ok) fprintf(stderr, "  command name: \"%s\"\n", names[i]);
        CHECK_EQ_U64(st.pid, 31337);
        CHECK_EQ_U64(st.ppid, 4);
        CHECK(st.state == 'Z');
        CHECK_EQ_U64(st.start_ticks, 1234567);
    }
}

static void test_malformed(void)
{
    char line[512];
    proc_stat st;
    CHECK(parse("", 0, &st) == -1);
    CHECK(parse_text("4242", &st) == -1);
    CHECK(parse_text("4242 ruby S 1 2 3", &st) == -1);                 /* no parentheses */
    CHECK(parse_text("4242 (ruby S 1 2 3", &st) == -1);                /* no ")" */
    CHECK(parse_text("4242 )ruby( S 1 2 3", &st) == -1);               /* ")" before "(" */
    CHECK(parse_text("4242 (ruby)", &st) == -1);                       /* nothing after */
    CHECK(parse_text("4242 (ruby) S", &st) == -1);
    CHECK(parse_text("4242 (ruby) S ", &st) == -1);
    CHECK(parse_text("4242 (ruby)S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st) == -1);
    CHECK(parse_text("4242 (ruby) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0", &st) == -1);   /* 21 fields */
    CHECK(parse_text("4242 (ruby) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ", &st) == -1);  /* empty field 22 */
    CHECK(parse_text("4242 (ruby) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1  5", &st) == -1);  /* double space */
    CHECK(parse_text("x42 (ruby) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st) == -1);
    CHECK(parse_text("0 (ruby) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st) == -1);
    CHECK(parse_text("4242  (ruby) S 1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st) == -1);
    CHECK(parse_text("4242 (ruby) S -1 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5", &st) == -1);
    size_t len = stat_line(line, sizeof line, "4242", "ruby", 'S', "1", "12x");
    CHECK(parse(line, len, &st) == -1);
    len = stat_line(line, sizeof line, "4242", "ruby", 'S', "1", "18446744073709551616"); /* overflows */
    CHECK(parse(line, len, &st) == -1);
    len = stat_line(line, sizeof line, "99999999999", "ruby", 'S', "1", "5"); /* not a pid_t */
    CHECK(parse(line, len, &st) == -1);
}

static void test_exited(void)
{
    proc_stat st = {.pid = 1, .ppid = 0, .start_ticks = 0, .state = 'Z'};
    CHECK(proc_stat_exited(&st));
    st.state = 'X';
    CHECK(proc_stat_exited(&st));
    st.state = 'x';
    CHECK(proc_stat_exited(&st));
    const char running[] = "RSDTtIWKP";
    for (size_t i = 0; i < sizeof running - 1; i++) {
        st.state = running[i];
        CHECK(!proc_stat_exited(&st));
    }
}

/* The real kernel's line for this very process. */
static void test_real_proc(void)
{
    proc_stat st;
    CHECK(proc_read_stat("/proc", getpid(), &st) == 0);
    CHECK_EQ_U64(st.pid, getpid());
    CHECK_EQ_U64(st.ppid, getppid());
    CHECK(st.state == 'R');
    CHECK(st.start_ticks > 0);
}

int main(void)
{
    fenced_init();
    test_plain_line();
    test_command_names();
    test_malformed();
    test_exited();
    test_real_proc();
    return check_report("guard proc_stat");
}
