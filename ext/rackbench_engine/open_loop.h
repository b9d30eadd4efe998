/*
 * open_loop.h - the open-loop schedule as plain arithmetic: when each
 * request of a thread is due, and how many of a window's due requests were
 * never sent. No clock, no state: the worker asks these functions, and the
 * C tests check them at their edges without real time.
 *
 * One thread's schedule: slot k (k = 0, 1, 2, ...) is due at
 *
 *     origin_ns + (uint64_t)(k * interval_ns)
 *
 * interval_ns is a double (1e9 / the thread's rate) so that rates that do
 * not divide a second do not drift: the error stays below 1 ns per slot
 * instead of accumulating. The worker dispatches slots strictly in order
 * of k and counts the next one to send in next_index, so "never sent" is
 * exactly "k >= next_index".
 *
 * Preconditions everywhere: interval_ns > 0 and every time below 2^63 ns
 * (CLOCK_MONOTONIC counts from boot: centuries of headroom), so
 * k * interval_ns stays within uint64_t.
 */
#ifndef RB_OPEN_LOOP_H
#define RB_OPEN_LOOP_H

#include <stdint.h>

/* When slot k is due. The only formula for it: the dispatcher, its wake-up
 * and the unsent count must agree to the nanosecond at a window edge. */
static inline uint64_t open_loop_due_ns(uint64_t origin_ns, double interval_ns, uint64_t k) {
    return origin_ns + (uint64_t)((double)k * interval_ns);
}

/* The origin of thread thread_id's schedule (0 <= thread_id < threads):
 * start_ns plus thread_id / threads of one interval. Staggered so the
 * threads do not all send at the same instant; thread 0 starts at start_ns.
 * threads <= 0 is taken as 1. */
uint64_t open_loop_origin_ns(uint64_t start_ns, double interval_ns, int thread_id, int threads);

/* The first slot due at or after t_ns: the smallest k with
 * open_loop_due_ns(origin_ns, interval_ns, k) >= t_ns (0 when t_ns <=
 * origin_ns). Exact for the due formula above, float rounding included. */
uint64_t open_loop_first_slot_at(uint64_t origin_ns, double interval_ns, uint64_t t_ns);

/* How many slots are due in the half-open window [from_ns, to_ns): a slot
 * due exactly at to_ns is outside (it belongs to what comes after), one
 * due exactly at from_ns is inside. 0 when to_ns <= from_ns. Computed from
 * the schedule alone, whatever was sent: the engine's "scheduled" count. */
uint64_t open_loop_slots(uint64_t origin_ns, double interval_ns, uint64_t from_ns, uint64_t to_ns);

/* How many slots due in [from_ns, to_ns) were never dispatched, given that
 * slots 0 .. next_index-1 were: the count of k >= next_index among
 * open_loop_slots' slots. Slots before from_ns that are still unsent are
 * not counted (they belong to the phase before the window). */
uint64_t open_loop_unsent(uint64_t origin_ns, double interval_ns, uint64_t next_index, uint64_t from_ns,
                          uint64_t to_ns);

#endif
