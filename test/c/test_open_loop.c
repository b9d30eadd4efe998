/*
 * test_open_loop.c - the open-loop schedule arithmetic (open_loop.h): when
 * slots are due, the first slot at a time, and the count of a window's
 * slots that were never sent, at its edges and against a brute-force walk
 * of the schedule. No real time: every instant is a number chosen here.
 *
 * The brute force counts with open_loop_due_ns itself, slot by slot, the
 * way the worker dispatches; the functions under test must agree with it
 * to the slot, float rounding of fractional intervals included.
 */
#include "check.h"
#include "open_loop.h"

#include <stdint.h>

#define S UINT64_C(1000000000)
#define MS UINT64_C(1000000)
/* A realistic monotonic clock reading (about 3 days after boot): the sums
 * then carry the same magnitudes as in a real run. */
#define T0 (UINT64_C(259200) * S + UINT64_C(123456789))

/* Slots k >= next_index due in [from, to), one by one. */
static uint64_t brute_unsent(uint64_t origin, double interval, uint64_t next_index, uint64_t from, uint64_t to) {
    uint64_t count = 0;
    for (uint64_t k = next_index;; k++) {
        uint64_t due = open_loop_due_ns(origin, interval, k);
        if (due >= to) break;
        if (due >= from) count++;
    }
    return count;
}

static uint64_t brute_first_at(uint64_t origin, double interval, uint64_t t) {
    uint64_t k = 0;
    while (open_loop_due_ns(origin, interval, k) < t) k++;
    return k;
}

static void test_due_times(void) {
    CHECK_EQ_U64(open_loop_due_ns(T0, 1e6, 0), T0);
    CHECK_EQ_U64(open_loop_due_ns(T0, 1e6, 3), T0 + 3 * MS);
    /* 3 req/s: 333333333.33 ns apart, truncated per slot, never drifting. */
    CHECK_EQ_U64(open_loop_due_ns(T0, 1e9 / 3, 1), T0 + 333333333);
    CHECK_EQ_U64(open_loop_due_ns(T0, 1e9 / 3, 3), T0 + S);
    CHECK_EQ_U64(open_loop_due_ns(T0, 1e9 / 3, 3000), T0 + 1000 * S);
}

static void test_origins_are_staggered(void) {
    /* 4 threads at 10 ms: a quarter interval apart, thread 0 at the start. */
    CHECK_EQ_U64(open_loop_origin_ns(T0, 10e6, 0, 4), T0);
    CHECK_EQ_U64(open_loop_origin_ns(T0, 10e6, 1, 4), T0 + 2500000);
    CHECK_EQ_U64(open_loop_origin_ns(T0, 10e6, 3, 4), T0 + 7500000);
    CHECK_EQ_U64(open_loop_origin_ns(T0, 10e6, 0, 1), T0);
    CHECK_EQ_U64(open_loop_origin_ns(T0, 10e6, 0, 0), T0); /* threads 0 taken as 1 */
}

static void test_first_slot_at(void) {
    double interval = 10e6; /* 100 req/s */
    CHECK_EQ_U64(open_loop_first_slot_at(T0, interval, 0), 0);
    CHECK_EQ_U64(open_loop_first_slot_at(T0, interval, T0 - 1), 0);
    CHECK_EQ_U64(open_loop_first_slot_at(T0, interval, T0), 0);
    CHECK_EQ_U64(open_loop_first_slot_at(T0, interval, T0 + 1), 1);
    CHECK_EQ_U64(open_loop_first_slot_at(T0, interval, T0 + 10 * MS), 1);     /* exactly on slot 1 */
    CHECK_EQ_U64(open_loop_first_slot_at(T0, interval, T0 + 10 * MS + 1), 2);
    CHECK_EQ_U64(open_loop_first_slot_at(T0, interval, T0 + 10 * S), 1000);
}

/* The edges the brief names, on one thread at 100 req/s with a window of
 * [T0 + 1 s, T0 + 2 s): slots 100 .. 199 are the window's. */
static void test_unsent_edges(void) {
    double interval = 10e6;
    uint64_t from = T0 + S, to = T0 + 2 * S;

    /* The window's schedule, whatever was sent. */
    CHECK_EQ_U64(open_loop_slots(T0, interval, from, to), 100);
    CHECK_EQ_U64(open_loop_slots(T0, interval, from, to + 1), 101);
    CHECK_EQ_U64(open_loop_slots(T0, interval, from + 1, to), 99);
    CHECK_EQ_U64(open_loop_slots(T0, interval, to, from), 0);

    /* None due yet (nothing sent): the whole window is unsent. */
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 0, from, to), 100);
    /* Everything up to the end was sent: none unsent. */
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 200, from, to), 0);
    /* Sent past the end (cannot happen, but must not go negative). */
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 500, from, to), 0);
    /* Stuck in the middle: slots 150 .. 199 unsent. */
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 150, from, to), 50);
    /* The last slot of the window unsent, alone. */
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 199, from, to), 1);

    /* A slot exactly at the window's end is outside it; one nanosecond
     * more takes it in. Slot 200 is due at exactly `to`. */
    CHECK_EQ_U64(open_loop_due_ns(T0, interval, 200), to);
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 199, from, to), 1);
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 199, from, to + 1), 2);
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 200, from, to), 0);
    /* A slot exactly at the window's start is inside it. */
    CHECK_EQ_U64(open_loop_due_ns(T0, interval, 100), from);
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 0, from, from + 1), 1);
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 0, from + 1, from + 10 * MS), 0);

    /* Stuck since the warmup: the warmup's unsent slots (below 100) are
     * the warmup's, only the window's 100 count. */
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 40, from, to), 100);

    /* Empty or inverted windows (an interrupt during the warmup). */
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 0, from, from), 0);
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 0, to, from), 0);
    /* A window shorter than one interval, between two slots. */
    CHECK_EQ_U64(open_loop_unsent(T0, interval, 0, from + 1, from + 2), 0);
    /* A window that ends before the schedule starts. */
    CHECK_EQ_U64(open_loop_unsent(T0 + 5 * S, interval, 0, from, to), 0);
    /* A schedule that starts inside the window: slots 0 .. 49. */
    CHECK_EQ_U64(open_loop_unsent(from + 500 * MS, interval, 0, from, to), 50);
}

/* The engine's split of a rate over threads (main.c and worker_init): each
 * thread's rate in proportion to its connections, origins staggered. With
 * nothing sent, the threads' unsent add up to the window's whole schedule,
 * and each agrees with the slot-by-slot count. */
static void test_unsent_over_staggered_threads(void) {
    const double rate = 1000.0;
    const int connections = 10, threads = 3;
    const uint64_t warmup = 500 * MS, duration = 2 * S;
    uint64_t from = T0 + warmup, to = from + duration;
    uint64_t total = 0;
    int fails = 0;
    for (int id = 0; id < threads; id++) {
        int count = connections / threads + (id < connections % threads ? 1 : 0); /* 4, 3, 3 */
        double interval = 1e9 / (rate * count / connections);
        uint64_t origin = open_loop_origin_ns(T0, interval, id, threads);
        uint64_t slots = open_loop_slots(origin, interval, from, to);
        if (slots != brute_unsent(origin, interval, 0, from, to)) fails++;
        if (open_loop_unsent(origin, interval, 0, from, to) != slots) fails++;
        total += slots;
        /* A thread stuck since some slot of the window: all after it. */
        uint64_t stuck_at = open_loop_first_slot_at(origin, interval, from + 700 * MS);
        if (open_loop_unsent(origin, interval, stuck_at, from, to) != brute_unsent(origin, interval, stuck_at, from, to))
            fails++;
    }
    CHECK(fails == 0);
    /* 400 + 300 + 300 req/s over 2 s. */
    CHECK_EQ_U64(total, 2000);
}

/* Fractional intervals, every offset: the arithmetic against the walk. */
static void test_unsent_matches_brute_force(void) {
    static const double rates[] = {1.0, 3.0, 7.0, 100.0, 333.0, 1000.0, 12345.0, 99999.0};
    uint64_t state = 0x9E3779B97F4A7C15ull;
    int checked = 0, fails = 0;
    for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
        double interval = 1e9 / rates[r];
        for (int trial = 0; trial < 200; trial++) {
            /* xorshift64*: the same numbers on every run. */
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            uint64_t x = state * 0x2545F4914F6CDD1Dull;
            uint64_t origin = T0 + x % (uint64_t)interval;
            uint64_t from = T0 + (x >> 8) % (2 * S);
            uint64_t to = from + (x >> 24) % S;
            uint64_t span = to > origin ? brute_first_at(origin, interval, to) : 0;
            uint64_t next = span ? (x >> 40) % (span + 2) : 0;
            if (open_loop_first_slot_at(origin, interval, from) != brute_first_at(origin, interval, from)) fails++;
            /* What the engine reports: the window's slots are those sent in
             * it (from its first slot up to next_index) plus the unsent. */
            uint64_t first = brute_first_at(origin, interval, from);
            uint64_t sent_in_window = next > first ? next - first : 0;
            uint64_t slots = open_loop_slots(origin, interval, from, to);
            if (next <= span && slots != sent_in_window + open_loop_unsent(origin, interval, next, from, to)) fails++;
            if (open_loop_unsent(origin, interval, next, from, to) != brute_unsent(origin, interval, next, from, to)) {
                if (!fails)
                    fprintf(stderr, "  rate %.0f origin %llu next %llu window [%llu, %llu)\n", rates[r],
                            (unsigned long long)origin, (unsigned long long)next, (unsigned long long)from,
                            (unsigned long long)to);
                fails++;
            }
            checked++;
        }
    }
    CHECK(fails == 0);
    CHECK(checked == 1600);
}

/* Window edges placed on a due time and one nanosecond either side, for
 * intervals that are not whole nanoseconds (where truncation bites). */
static void test_unsent_at_exact_due_times(void) {
    static const double rates[] = {3.0, 7.0, 333.0, 12345.0};
    int fails = 0;
    for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
        double interval = 1e9 / rates[r];
        uint64_t origin = T0 + 17;
        for (uint64_t k = 0; k < 60; k++) {
            uint64_t due = open_loop_due_ns(origin, interval, k);
            for (int d = -1; d <= 1; d++) {
                uint64_t edge = due + (uint64_t)(int64_t)d;
                uint64_t from = origin > 5 ? origin - 5 : 0;
                if (open_loop_unsent(origin, interval, 0, from, edge) != brute_unsent(origin, interval, 0, from, edge))
                    fails++;
                if (open_loop_unsent(origin, interval, 0, edge, due + 100 * S) !=
                    brute_unsent(origin, interval, 0, edge, due + 100 * S))
                    fails++;
            }
            /* The window ending exactly on slot k holds slots 0 .. k-1. */
            if (open_loop_unsent(origin, interval, 0, origin, due) != k) fails++;
        }
    }
    CHECK(fails == 0);
}

int main(void) {
    test_due_times();
    test_origins_are_staggered();
    test_first_slot_at();
    test_unsent_edges();
    test_unsent_over_staggered_threads();
    test_unsent_matches_brute_force();
    test_unsent_at_exact_due_times();
    return check_report("open_loop");
}
