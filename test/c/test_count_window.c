/*
 * test_count_window.c - the fixed-count window's tickets and edges
 * (count_window.h): no ticket before the window opens, exactly N after,
 * none beyond, also when many threads claim at once (run under ASan and
 * UBSan, with threads racing for the last tickets), and the quiet edge
 * that waits for every thread.
 */
#include "check.h"
#include "count_window.h"

#include <pthread.h>
#include <stdint.h>

static void test_timed_run_has_no_window(void)
{
    count_window cw;
    count_window_init(&cw, 0, 0, 2);
    CHECK(!count_window_enabled(&cw));
    count_window_open(&cw, 5);
    CHECK(!count_window_claim(&cw)); /* no tickets in a timed run */
}

static void test_tickets(void)
{
    count_window cw;
    count_window_init(&cw, 3, 0, 1);
    CHECK(count_window_enabled(&cw));
    uint64_t start = 0;
    CHECK(!count_window_is_open(&cw, &start));
    CHECK(!count_window_claim(&cw)); /* not open: the slot idles */
    CHECK_EQ_U64(count_window_claimed(&cw), 0);
    count_window_open(&cw, 12345);
    CHECK(count_window_is_open(&cw, &start));
    CHECK_EQ_U64(start, 12345);
    CHECK(count_window_is_open(&cw, NULL));
    CHECK(count_window_claim(&cw));
    CHECK(count_window_claim(&cw));
    CHECK(count_window_claim(&cw));
    CHECK(!count_window_claim(&cw));
    CHECK(!count_window_claim(&cw));
    /* Failed claims do not count as started requests. */
    CHECK_EQ_U64(count_window_claimed(&cw), 3);
}

static void test_quiet_edge(void)
{
    count_window cw;
    count_window_init(&cw, 10, 0, 3);
    CHECK(!count_window_all_quiet(&cw));
    count_window_quiet(&cw);
    count_window_quiet(&cw);
    CHECK(!count_window_all_quiet(&cw));
    count_window_quiet(&cw);
    CHECK(count_window_all_quiet(&cw));
}

/* A warmup of a fixed count: W tickets, then the warmup is over whatever
 * the clock says; a timed warmup ends on the clock. */
static void test_warmup_count(void)
{
    count_window cw;
    count_window_init(&cw, 5, 2, 1);
    CHECK(!count_window_warmup_over(&cw, 100, 0));
    CHECK(count_window_claim_warmup(&cw));
    CHECK(!count_window_warmup_over(&cw, 100, 0));
    CHECK(count_window_claim_warmup(&cw));
    CHECK(!count_window_claim_warmup(&cw));
    CHECK(count_window_warmup_over(&cw, 0, 100));
    CHECK(!count_window_claim(&cw)); /* the window is still to open */
    count_window timed;
    count_window_init(&timed, 5, 0, 1);
    CHECK(!count_window_warmup_over(&timed, 99, 100));
    CHECK(count_window_warmup_over(&timed, 100, 100));
}

/* Threads racing for the tickets: together they get exactly N. */
#define RACERS 8
#define TICKETS 100000

static count_window race_window;
static uint64_t race_taken[RACERS];

static void *racer(void *arg)
{
    uint64_t *taken = arg;
    while (count_window_claim(&race_window)) (*taken)++;
    return NULL;
}

static void test_racing_threads_get_exactly_n(void)
{
    count_window_init(&race_window, TICKETS, 0, RACERS);
    count_window_open(&race_window, 1);
    pthread_t threads[RACERS];
    for (int i = 0; i < RACERS; i++) pthread_create(&threads[i], NULL, racer, &race_taken[i]);
    uint64_t total = 0;
    for (int i = 0; i < RACERS; i++) {
        pthread_join(threads[i], NULL);
        total += race_taken[i];
    }
    CHECK_EQ_U64(total, TICKETS);
    CHECK_EQ_U64(count_window_claimed(&race_window), TICKETS);
}

int main(void)
{
    test_timed_run_has_no_window();
    test_tickets();
    test_quiet_edge();
    test_warmup_count();
    test_racing_threads_get_exactly_n();
    return check_report("count_window");
}
