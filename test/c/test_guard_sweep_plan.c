/*
 * test_guard_sweep_plan.c - the sweep's bookkeeping, round by round, on
 * made-up scans: which processes are chosen (marked ones, their
 * descendants, never a protected one), who gets which signal and when
 * (each signal once per process, newcomers too), PID reuse, and the counts
 * the guard prints.
 */
#include "check.h"
#include "sweep_plan.h"

#include <signal.h>
#include <string.h>

#define MAX_ENTRIES 32

/* entry(pid, start, ppid, marked, exited) */
static proc_entry entry(pid_t pid, unsigned long long start, pid_t ppid, int marked, int exited)
{
    proc_entry e = {.key = {.pid = pid, .start_ticks = start}, .ppid = ppid, .marked = marked, .exited = exited};
    return e;
}

static int chosen(const proc_entry *entries, size_t count, const unsigned char *selected, pid_t pid)
{
    for (size_t i = 0; i < count; i++) {
        if (entries[i].key.pid == pid) return selected[i];
    }
    return -1;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void test_select(void)
{
    /* Sorted by PID, as a snapshot is. */
    proc_entry entries[] = {
        entry(1, 1, 0, 1, 0),        /* init, even if marked */
        entry(5, 50, 100, 0, 0),     /* child of 100, listed before its parent */
        entry(10, 10, 1, 1, 0),      /* marked */
        entry(11, 11, 10, 0, 0),     /* its child, environment overwritten */
        entry(12, 12, 11, 0, 0),     /* grandchild */
        entry(20, 20, 1, 0, 0),      /* unrelated */
        entry(21, 21, 20, 0, 0),
        entry(30, 30, 1, 1, 1),      /* marked zombie */
        entry(40, 40, 1, 1, 0),      /* marked but protected (the runner) */
        entry(41, 41, 40, 0, 0),     /* unmarked child of the protected one */
        entry(42, 42, 40, 1, 0),     /* marked child of the protected one */
        entry(43, 43, 42, 0, 0),
        entry(50, 50, 999, 0, 0),    /* parent not in the scan */
        entry(60, 60, 61, 0, 0),     /* a loop of parent links */
        entry(61, 61, 60, 0, 0),
        entry(70, 70, 60, 1, 0),     /* marked, hanging off the loop */
        entry(71, 71, 70, 0, 1),     /* exited child of a chosen one */
        entry(100, 100, 1, 1, 0),
    };
    proc_key protected_keys[] = {{.pid = 40, .start_ticks = 40}, {.pid = 7, .start_ticks = 7}};
    unsigned char selected[COUNT(entries)];
    long n = sweep_select(entries, COUNT(entries), protected_keys, COUNT(protected_keys), selected);
    CHECK_EQ_U64(n, 8);
    CHECK(chosen(entries, COUNT(entries), selected, 1) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 5) == 1);
    CHECK(chosen(entries, COUNT(entries), selected, 10) == 1);
    CHECK(chosen(entries, COUNT(entries), selected, 11) == 1);
    CHECK(chosen(entries, COUNT(entries), selected, 12) == 1);
    CHECK(chosen(entries, COUNT(entries), selected, 20) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 21) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 30) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 40) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 41) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 42) == 1);
    CHECK(chosen(entries, COUNT(entries), selected, 43) == 1);
    CHECK(chosen(entries, COUNT(entries), selected, 50) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 60) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 61) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 70) == 1);
    CHECK(chosen(entries, COUNT(entries), selected, 71) == 0);
    CHECK(chosen(entries, COUNT(entries), selected, 100) == 1);

    /* Protection is by identity: PID 40 reused by a marked newcomer is not
     * the protected runner. */
    proc_entry reused[] = {entry(40, 4000, 1, 1, 0), entry(41, 41, 40, 0, 0)};
    unsigned char selected_reused[2];
    CHECK_EQ_U64(sweep_select(reused, 2, protected_keys, COUNT(protected_keys), selected_reused), 2);
    CHECK(selected_reused[0] == 1 && selected_reused[1] == 1);

    /* Nothing marked, nothing chosen; an empty scan. */
    proc_entry quiet[] = {entry(1, 1, 0, 0, 0), entry(2, 2, 1, 0, 0)};
    unsigned char selected_quiet[2] = {9, 9};
    CHECK_EQ_U64(sweep_select(quiet, 2, NULL, 0, selected_quiet), 0);
    CHECK(selected_quiet[0] == 0 && selected_quiet[1] == 0);
    CHECK_EQ_U64(sweep_select(NULL, 0, NULL, 0, NULL), 0);
}

/* One scan, for the round functions. */
typedef struct {
    proc_entry entries[MAX_ENTRIES];
    unsigned char selected[MAX_ENTRIES];
    size_t count;
} scan;

static void add(scan *s, proc_entry e) { s->entries[s->count++] = e; }

static long round_of(sweep_table *table, scan *s, sweep_phase phase, const sweep_action **actions)
{
    CHECK(sweep_select(s->entries, s->count, NULL, 0, s->selected) >= 0);
    return sweep_plan_round(table, s->entries, s->count, s->selected, phase, actions);
}

static int planned(const sweep_action *actions, long count, pid_t pid, unsigned long long start, int signal)
{
    for (long i = 0; i < count; i++) {
        if (actions[i].key.pid == pid && actions[i].key.start_ticks == start && actions[i].signal == signal) return 1;
    }
    return 0;
}

/* A master (10) ignoring TERM, a worker (11) that exits on TERM and a
 * replacement (12) forked meanwhile; 11's PID is then reused by an
 * unrelated process, which must never be signalled. */
static void test_rounds(void)
{
    sweep_table table = SWEEP_TABLE_INIT;
    const sweep_action *actions;
    scan s;

    memset(&s, 0, sizeof s);
    add(&s, entry(1, 1, 0, 0, 0));
    add(&s, entry(10, 100, 1, 1, 0));
    add(&s, entry(11, 110, 10, 1, 0));
    long n = round_of(&table, &s, SWEEP_PHASE_TERM, &actions);
    CHECK_EQ_U64(n, 2);
    CHECK(planned(actions, n, 10, 100, SIGTERM));
    CHECK(planned(actions, n, 11, 110, SIGTERM));
    CHECK_EQ_U64(sweep_table_alive(&table), 2);

    /* Same scan again: nobody gets TERM twice. A newcomer gets it. */
    add(&s, entry(12, 120, 10, 1, 0));
    n = round_of(&table, &s, SWEEP_PHASE_TERM, &actions);
    CHECK_EQ_U64(n, 1);
    CHECK(planned(actions, n, 12, 120, SIGTERM));
    CHECK_EQ_U64(sweep_table_alive(&table), 3);

    /* 11 exited (a zombie), 12 is gone. */
    memset(&s, 0, sizeof s);
    add(&s, entry(1, 1, 0, 0, 0));
    add(&s, entry(10, 100, 1, 1, 0));
    add(&s, entry(11, 110, 10, 1, 1));
    n = round_of(&table, &s, SWEEP_PHASE_TERM, &actions);
    CHECK_EQ_U64(n, 0);
    CHECK_EQ_U64(sweep_table_alive(&table), 1);

    /* Grace over. 11's PID now belongs to an unrelated process, unmarked. */
    memset(&s, 0, sizeof s);
    add(&s, entry(1, 1, 0, 0, 0));
    add(&s, entry(10, 100, 1, 1, 0));
    add(&s, entry(11, 999, 1, 0, 0));
    n = round_of(&table, &s, SWEEP_PHASE_KILL, &actions);
    CHECK_EQ_U64(n, 1);
    CHECK(planned(actions, n, 10, 100, SIGKILL));
    CHECK(!planned(actions, n, 11, 999, SIGKILL));
    CHECK(!planned(actions, n, 11, 110, SIGKILL));
    n = round_of(&table, &s, SWEEP_PHASE_KILL, &actions);
    CHECK_EQ_U64(n, 0); /* no second KILL */
    CHECK_EQ_U64(sweep_table_alive(&table), 1);

    /* Everything gone. */
    memset(&s, 0, sizeof s);
    add(&s, entry(1, 1, 0, 0, 0));
    add(&s, entry(11, 999, 1, 0, 0));
    n = round_of(&table, &s, SWEEP_PHASE_KILL, &actions);
    CHECK_EQ_U64(n, 0);
    CHECK_EQ_U64(sweep_table_alive(&table), 0);
    sweep_counts counts = sweep_table_counts(&table);
    CHECK_EQ_U64(counts.termed, 3);
    CHECK_EQ_U64(counts.killed, 1);
    CHECK_EQ_U64(counts.survivors, 0);
    sweep_table_free(&table);
    CHECK(table.tracked == NULL && table.count == 0);
}

/* Once chosen, a process is followed by identity even when it no longer
 * looks like a target (its marked parent died, its environment was
 * overwritten by a process title), and a PID reused by another process of
 * the experiment is a new process with its own TERM. */
static void test_identity(void)
{
    sweep_table table = SWEEP_TABLE_INIT;
    const sweep_action *actions;
    scan s;

    memset(&s, 0, sizeof s);
    add(&s, entry(10, 100, 1, 1, 0));
    add(&s, entry(11, 110, 10, 0, 0));
    CHECK_EQ_U64(round_of(&table, &s, SWEEP_PHASE_TERM, &actions), 2);

    /* 10 exited; 11 is an orphan without the marker: still followed. And
     * 10's PID came back, marked: another process of the experiment. */
    memset(&s, 0, sizeof s);
    add(&s, entry(10, 105, 1, 1, 0));
    add(&s, entry(11, 110, 1, 0, 0));
    long n = round_of(&table, &s, SWEEP_PHASE_TERM, &actions);
    CHECK_EQ_U64(n, 1);
    CHECK(planned(actions, n, 10, 105, SIGTERM));
    CHECK_EQ_U64(sweep_table_alive(&table), 2);
    n = round_of(&table, &s, SWEEP_PHASE_KILL, &actions);
    CHECK_EQ_U64(n, 2);
    CHECK(planned(actions, n, 11, 110, SIGKILL));
    CHECK(planned(actions, n, 10, 105, SIGKILL));
    sweep_counts counts = sweep_table_counts(&table);
    CHECK_EQ_U64(counts.termed, 3);
    CHECK_EQ_U64(counts.killed, 2);
    CHECK_EQ_U64(counts.survivors, 2);
    sweep_table_free(&table);
}

/* Signals that could not be delivered: to a process gone meanwhile (not
 * counted, no longer alive) or refused (counted as a survivor, tried
 * again next round). */
static void test_failed_signals(void)
{
    sweep_table table = SWEEP_TABLE_INIT;
    const sweep_action *actions;
    scan s;

    memset(&s, 0, sizeof s);
    add(&s, entry(10, 100, 1, 1, 0));
    add(&s, entry(20, 200, 1, 1, 0));
    long n = round_of(&table, &s, SWEEP_PHASE_TERM, &actions);
    CHECK_EQ_U64(n, 2);
    sweep_action gone = {.key = {.pid = 10, .start_ticks = 100}, .signal = SIGTERM};
    sweep_action refused = {.key = {.pid = 20, .start_ticks = 200}, .signal = SIGTERM};
    sweep_table_signal_failed(&table, &gone, 1);
    sweep_table_signal_failed(&table, &refused, 0);
    sweep_counts counts = sweep_table_counts(&table);
    CHECK_EQ_U64(counts.termed, 0);
    CHECK_EQ_U64(counts.survivors, 1);

    /* Unknown processes are ignored. */
    sweep_action stranger = {.key = {.pid = 30, .start_ticks = 300}, .signal = SIGKILL};
    sweep_table_signal_failed(&table, &stranger, 1);
    CHECK_EQ_U64(sweep_table_alive(&table), 1);

    memset(&s, 0, sizeof s);
    add(&s, entry(20, 200, 1, 1, 0));
    n = round_of(&table, &s, SWEEP_PHASE_TERM, &actions);
    CHECK_EQ_U64(n, 1);
    CHECK(planned(actions, n, 20, 200, SIGTERM));
    n = round_of(&table, &s, SWEEP_PHASE_KILL, &actions);
    CHECK_EQ_U64(n, 1);
    sweep_action refused_kill = {.key = {.pid = 20, .start_ticks = 200}, .signal = SIGKILL};
    sweep_table_signal_failed(&table, &refused_kill, 0);
    counts = sweep_table_counts(&table);
    CHECK_EQ_U64(counts.termed, 1);
    CHECK_EQ_U64(counts.killed, 0);
    CHECK_EQ_U64(counts.survivors, 1);
    sweep_table_free(&table);
}

/* Many processes: the table and its action list grow. */
static void test_growth(void)
{
    static proc_entry many[1000];
    static unsigned char selected[1000];
    for (int i = 0; i < 1000; i++) many[i] = entry(i + 2, (unsigned long long)i, 1, i % 2, 0);
    sweep_table table = SWEEP_TABLE_INIT;
    const sweep_action *actions;
    CHECK_EQ_U64(sweep_select(many, 1000, NULL, 0, selected), 500);
    CHECK_EQ_U64(sweep_plan_round(&table, many, 1000, selected, SWEEP_PHASE_TERM, &actions), 500);
    CHECK_EQ_U64(sweep_table_counts(&table).termed, 500);
    CHECK_EQ_U64(sweep_plan_round(&table, NULL, 0, NULL, SWEEP_PHASE_KILL, &actions), 0);
    CHECK_EQ_U64(sweep_table_alive(&table), 0);
    sweep_table_free(&table);
}

int main(void)
{
    test_select();
    test_rounds();
    test_identity();
    test_failed_signals();
    test_growth();
    return check_report("guard sweep_plan");
}
