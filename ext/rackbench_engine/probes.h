/*
 * probes.h - every connection slot proves its session (doc/requests.md,
 * "Session probes"): a request list's "probe" entries are sent by each
 * slot as its first request of the measured window and once more after
 * the window's end, and each must get a 2xx/3xx response that meets its
 * @expect. A slot whose probe fails has lost its session (a server that
 * keeps at most N sessions per user logged the slot out), and the result
 * names how many slots did and why.
 *
 * Why per slot, and at both edges: replaying the login on one connection
 * before the run proves the login works, not that sixteen slots kept
 * their sessions; a slot logged out during the warmup browses anonymously
 * for the whole window, with public pages still answering 200.
 *
 * Probe requests are counted here only, never in the window's figures: a
 * probe is not part of the mix being measured. The start probe does take
 * one request's time of each slot inside the window. In open loop only the
 * end probe is sent: a start probe would take a scheduled request's place.
 * A fixed count's window sends its probes outside the window and off its
 * edges (count_window.h): the start probes before it opens, the end
 * probes after it closed.
 */
#ifndef RB_PROBES_H
#define RB_PROBES_H

#include <stdint.h>

#include "requests.h"

typedef enum { PROBE_START = 0, PROBE_END = 1, PROBE_POINTS = 2 } probe_point;

/* Slot numbers listed in the result for failed probes, at most. */
#define PROBE_LISTED_SLOTS 64
#define PROBE_REASON_BYTES 240

/* A slot's progress through its probes. */
typedef struct {
    uint8_t point;              /* the point being probed + 1; 0: not probing */
    uint8_t next;               /* the next probe entry of that point */
    uint8_t failed;             /* an entry of the point failed */
    uint8_t done[PROBE_POINTS]; /* the point's verdict is in */
} slot_probe;

/* What the slots' probes at one point came to. */
typedef struct {
    uint64_t passed, failed;    /* slots */
    uint32_t failed_slots[PROBE_LISTED_SLOTS]; /* in the order the slots' probes ended (the first 64) */
    uint32_t failed_listed;
    uint32_t reason_slot;       /* the slot of the reason below */
    char reason[PROBE_REASON_BYTES]; /* the lowest slot's first failure; "" none */
} probe_totals;

/* The probe entry slot p is to send now at point, advancing p; NULL when
 * the point is done for the slot (or the list has no probe entry). A
 * point once begun goes on until each of its entries was sent. */
const request_template *probe_next(slot_probe *p, const request_set *set, probe_point point);

/* 1 while p is in the middle of a point's probes. */
static inline int probe_active(const slot_probe *p) { return p->point != 0; }

/* The probe request of slot number slot ended: ok, or failed with why. When
 * it was the point's last entry, the slot's verdict goes into t[point]. */
void probe_outcome(slot_probe *p, probe_totals *t, const request_set *set, uint32_t slot, int ok, const char *why);

/* dst += src; src's failed slots follow dst's (merge threads in order),
 * and the reason of the lower slot is kept. */
void probe_totals_merge(probe_totals *dst, const probe_totals *src);

#endif
