/*
 * test_count_window.c - the fixed-count window's tickets and edges
 * (count_window.h): no ticket before the window opens, exactly N after,
 * none beyond, also when many threads claim at once (run under ASan and
 * UBSan, with threads racing for the last tickets), the quiet edge that
 * waits for every thread, the drained end and the close, and a thread's
 * stages: session probes outside the window, never at its edges.
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

/* The end edge: the window's N completed once every thread is drained;
 * the threads' end probes wait for the close. */
static void test_drained_and_closed(void)
{
    count_window cw;
    count_window_init(&cw, 10, 0, 2);
    CHECK(!count_window_all_drained(&cw));
    count_window_drained(&cw);
    CHECK(!count_window_all_drained(&cw));
    count_window_drained(&cw);
    CHECK(count_window_all_drained(&cw));
    CHECK(!count_window_closed(&cw));
    count_window_close(&cw);
    CHECK(count_window_closed(&cw));
}

/* One thread's way through a fixed count's run, with session probes:
 * every stage waits for what is under way (busy), the start probes
 * complete before the thread says it is quiet, and the end probes wait
 * for the window's close. */
static void test_stages(void)
{
    count_window cw;
    count_window_init(&cw, 5, 0, 1);
    count_stage s = COUNT_STAGE_WARMUP;
    /* The warmup goes on while its time or tickets last, and while a
     * request of it is in flight. */
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 0, 0, 0), COUNT_STAGE_WARMUP);
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 1, 2, 0), COUNT_STAGE_WARMUP);
    s = count_window_next_stage(&cw, s, 1, 0, 0);
    CHECK_EQ_U64(s, COUNT_STAGE_START_PROBES);
    CHECK(!count_window_all_quiet(&cw)); /* the probes are still to go */
    /* Start probes in flight (or a slot between two probe entries): not quiet. */
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 1, 3, 0), COUNT_STAGE_START_PROBES);
    CHECK(!count_window_all_quiet(&cw));
    s = count_window_next_stage(&cw, s, 1, 0, 0);
    CHECK_EQ_U64(s, COUNT_STAGE_QUIET);
    CHECK(count_window_all_quiet(&cw));
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 1, 0, 0), COUNT_STAGE_QUIET); /* not open yet */
    count_window_open(&cw, 7);
    s = count_window_next_stage(&cw, s, 1, 0, 0);
    CHECK_EQ_U64(s, COUNT_STAGE_WINDOW);
    /* In the window: drained only once its tickets are gone and nothing
     * is in flight. */
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 1, 0, 0), COUNT_STAGE_WINDOW);
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 1, 1, 1), COUNT_STAGE_WINDOW);
    CHECK(!count_window_all_drained(&cw));
    s = count_window_next_stage(&cw, s, 1, 0, 1);
    CHECK_EQ_U64(s, COUNT_STAGE_DRAINED);
    CHECK(count_window_all_drained(&cw));
    /* The end probes wait for the main thread's close (after 'e' and the
     * caller's hold). */
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 1, 0, 1), COUNT_STAGE_DRAINED);
    count_window_close(&cw);
    s = count_window_next_stage(&cw, s, 1, 0, 1);
    CHECK_EQ_U64(s, COUNT_STAGE_END_PROBES);
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 1, 2, 1), COUNT_STAGE_END_PROBES);
    s = count_window_next_stage(&cw, s, 1, 0, 1);
    CHECK_EQ_U64(s, COUNT_STAGE_DONE);
    CHECK_EQ_U64(count_window_next_stage(&cw, s, 1, 0, 1), COUNT_STAGE_DONE);
}

/* Two threads: the window opens for neither until both are quiet, and
 * the end waits for both to be drained; each says so once only, however
 * often it looks. */
static void test_stages_of_two_threads(void)
{
    count_window cw;
    count_window_init(&cw, 5, 0, 2);
    count_stage a = COUNT_STAGE_WARMUP, b = COUNT_STAGE_WARMUP;
    a = count_window_next_stage(&cw, a, 1, 0, 0); /* start probes */
    a = count_window_next_stage(&cw, a, 1, 0, 0); /* quiet */
    a = count_window_next_stage(&cw, a, 1, 0, 0); /* stays quiet */
    CHECK_EQ_U64(a, COUNT_STAGE_QUIET);
    CHECK(!count_window_all_quiet(&cw)); /* b is still in its warmup */
    b = count_window_next_stage(&cw, b, 1, 1, 0);
    CHECK_EQ_U64(b, COUNT_STAGE_WARMUP);
    b = count_window_next_stage(&cw, b, 1, 0, 0);
    b = count_window_next_stage(&cw, b, 1, 0, 0);
    CHECK(count_window_all_quiet(&cw));
    count_window_open(&cw, 1);
    a = count_window_next_stage(&cw, a, 1, 0, 0);
    b = count_window_next_stage(&cw, b, 1, 0, 0);
    a = count_window_next_stage(&cw, a, 1, 0, 1);
    a = count_window_next_stage(&cw, a, 1, 0, 1);
    CHECK_EQ_U64(a, COUNT_STAGE_DRAINED);
    CHECK(!count_window_all_drained(&cw)); /* b's last request is still out */
    b = count_window_next_stage(&cw, b, 1, 1, 1);
    CHECK(!count_window_all_drained(&cw));
    b = count_window_next_stage(&cw, b, 1, 0, 1);
    CHECK(count_window_all_drained(&cw));
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
    test_drained_and_closed();
    test_stages();
    test_stages_of_two_threads();
    test_racing_threads_get_exactly_n();
    return check_report("count_window");
}
