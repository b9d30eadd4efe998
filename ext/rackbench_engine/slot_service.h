/*
 * slot_service.h - whether the server really served each connection slot
 * (and each HTTP/2 stream slot) during the measured window, and how long a
 * slot waited for a response.
 *
 * Why: a server that accepts more connections than it serves at once
 * (WEBrick keeps one keep-alive connection per thread) leaves the other
 * slots queued until their timeout, again and again. The totals then
 * describe the few slots it served, not the load that was named, and
 * nothing in requests/s or latency shows it. Counting per slot does.
 *
 * A slot "waits" from the moment it sends a request while it has no other
 * request unanswered, until a complete response arrives (any status): a
 * timeout or a broken connection does not end the wait, since the slot
 * still has had no answer. A slot is "active" in the window when it sent a
 * request in it, or was still waiting when it began (in open loop, an idle
 * slot that the schedule never needed is not active); it is "served" when
 * a response completed at or after the window's start (the drain after
 * its end included: those are the window's requests).
 *
 * Per request this costs a few comparisons on the slot's own struct.
 */
#ifndef RB_SLOT_SERVICE_H
#define RB_SLOT_SERVICE_H

#include <stdint.h>

typedef struct {
    uint64_t waiting_since_ns; /* send time of the oldest unanswered request; 0: not waiting */
    uint64_t max_wait_ns;      /* longest wait that reached into the window */
    uint8_t active;            /* sent or waited in the window */
    uint8_t served;            /* a response completed in the window */
} slot_service;

/* Slot numbers listed in the result for unserved slots, at most. */
#define SERVICE_LISTED_SLOTS 64

/* What a set of slots (one thread's, then all threads') came to. */
typedef struct {
    uint64_t slots;            /* slots counted */
    uint64_t active;           /* of them, active in the window */
    uint64_t served;           /* of them, served in the window */
    uint64_t max_wait_ns;      /* longest wait of any slot */
    uint32_t unserved[SERVICE_LISTED_SLOTS]; /* numbers of active slots not served, ascending */
    uint32_t unserved_listed;
} service_totals;

/* A request went out on the slot at now_ns (a redirect hop too). Starts
 * the slot's wait unless it is already waiting. */
void slot_service_sent(slot_service *s, uint64_t now_ns, uint64_t window_start_ns);

/* A complete response arrived at now_ns: the wait ends. */
void slot_service_response(slot_service *s, uint64_t now_ns, uint64_t window_start_ns);

/* The slot's thread is done at end_ns: a wait still open ends there. */
void slot_service_finish(slot_service *s, uint64_t end_ns, uint64_t window_start_ns);

/* Adds slot number slot's (finished) state into t. Slots must be added in
 * ascending order for the list of unserved slots to be ascending. */
void service_totals_add(service_totals *t, const slot_service *s, uint32_t slot);

/* dst += src; src's unserved slots follow dst's (threads own ascending
 * ranges of slot numbers: merge them in thread order). */
void service_totals_merge(service_totals *dst, const service_totals *src);

#endif
