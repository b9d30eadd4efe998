/*
 * test_slot_service.c - per-slot service accounting (slot_service.h):
 * when a slot counts as active and served in the window, how long its
 * wait is, and how slots are totalled and merged across threads. No real
 * time: every instant is a number chosen here.
 */
#include "check.h"
#include "slot_service.h"

#include <stdint.h>
#include <string.h>

#define S UINT64_C(1000000000)
#define T0 (UINT64_C(259200) * S)
#define WINDOW (T0 + 2 * S)

/* A slot answered in the warmup and in the window: served, its waits short. */
static void test_served_slot(void) {
    slot_service s;
    memset(&s, 0, sizeof(s));
    slot_service_sent(&s, T0, WINDOW);
    slot_service_response(&s, T0 + S / 1000, WINDOW);
    CHECK(!s.active && !s.served);
    CHECK_EQ_U64(s.max_wait_ns, 0); /* a warmup wait does not count */
    slot_service_sent(&s, WINDOW + S, WINDOW);
    slot_service_response(&s, WINDOW + S + 5000, WINDOW);
    slot_service_finish(&s, WINDOW + 3 * S, WINDOW);
    CHECK(s.active && s.served);
    CHECK_EQ_U64(s.max_wait_ns, 5000);
}

/* Timeouts do not end a wait: a slot that sent at t0 and was never
 * answered waited the whole run, and counts as active but not served. */
static void test_never_served(void) {
    slot_service s;
    memset(&s, 0, sizeof(s));
    slot_service_sent(&s, T0, WINDOW);
    slot_service_sent(&s, T0 + 2 * S, WINDOW); /* the retry after a timeout */
    slot_service_finish(&s, WINDOW + 3 * S, WINDOW);
    CHECK(s.active && !s.served);
    CHECK_EQ_U64(s.max_wait_ns, 5 * S);
}

/* A request of the warmup answered in the window: the slot was served in
 * the window, and its wait reached into it. */
static void test_wait_across_the_edge(void) {
    slot_service s;
    memset(&s, 0, sizeof(s));
    slot_service_sent(&s, WINDOW - S, WINDOW);
    slot_service_response(&s, WINDOW + S, WINDOW);
    CHECK(s.active && s.served);
    CHECK_EQ_U64(s.max_wait_ns, 2 * S);
}

/* An open-loop slot the schedule never used in the window is not active. */
static void test_idle_slot(void) {
    slot_service s;
    memset(&s, 0, sizeof(s));
    slot_service_finish(&s, WINDOW + 3 * S, WINDOW);
    CHECK(!s.active && !s.served);
    service_totals t;
    memset(&t, 0, sizeof(t));
    service_totals_add(&t, &s, 0);
    CHECK_EQ_U64(t.slots, 1);
    CHECK_EQ_U64(t.active, 0);
    CHECK_EQ_U64(t.unserved_listed, 0);
}

/* Two threads' totals merge in thread order; the list is bounded. */
static void test_totals(void) {
    service_totals a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    slot_service served = {0}, unserved = {0};
    slot_service_sent(&served, WINDOW, WINDOW);
    slot_service_response(&served, WINDOW + 10, WINDOW);
    slot_service_sent(&unserved, WINDOW, WINDOW);
    slot_service_finish(&unserved, WINDOW + 99, WINDOW);
    service_totals_add(&a, &served, 0);
    service_totals_add(&a, &unserved, 1);
    for (uint32_t i = 2; i < 2 + SERVICE_LISTED_SLOTS; i++) service_totals_add(&b, &unserved, i);
    service_totals_merge(&a, &b);
    CHECK_EQ_U64(a.slots, 2 + SERVICE_LISTED_SLOTS);
    CHECK_EQ_U64(a.active, 2 + SERVICE_LISTED_SLOTS);
    CHECK_EQ_U64(a.served, 1);
    CHECK_EQ_U64(a.max_wait_ns, 99);
    CHECK_EQ_U64(a.unserved_listed, SERVICE_LISTED_SLOTS);
    CHECK_EQ_U64(a.unserved[0], 1);
    CHECK_EQ_U64(a.unserved[1], 2);
    CHECK_EQ_U64(a.unserved[SERVICE_LISTED_SLOTS - 1], SERVICE_LISTED_SLOTS);
}

int main(void) {
    test_served_slot();
    test_never_served();
    test_wait_across_the_edge();
    test_idle_slot();
    test_totals();
    return check_report("slot_service");
}
