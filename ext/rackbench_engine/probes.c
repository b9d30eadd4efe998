/* probes.c - see probes.h. */
#include "probes.h"

#include <stdio.h>
#include <string.h>

const request_template *probe_next(slot_probe *p, const request_set *set, probe_point point) {
    if (!set->probe_count) return NULL;
    if (!p->point) {
        if (p->done[point]) return NULL;
        p->point = (uint8_t)(point + 1);
        p->next = 0;
        p->failed = 0;
    }
    if (p->next >= set->probe_count) return NULL;
    return &set->items[set->probes[p->next++]];
}

void probe_outcome(slot_probe *p, probe_totals *t, const request_set *set, uint32_t slot, int ok, const char *why) {
    if (!p->point) return;
    probe_totals *pt = &t[p->point - 1];
    if (!ok) {
        if (!p->failed && (!pt->reason[0] || slot < pt->reason_slot)) {
            snprintf(pt->reason, sizeof(pt->reason), "%s", why && *why ? why : "failed");
            pt->reason_slot = slot;
        }
        p->failed = 1;
    }
    if (p->next < set->probe_count) return;
    if (p->failed) {
        pt->failed++;
        if (pt->failed_listed < PROBE_LISTED_SLOTS) pt->failed_slots[pt->failed_listed++] = slot;
    } else {
        pt->passed++;
    }
    p->done[p->point - 1] = 1;
    p->point = 0;
}

void probe_totals_merge(probe_totals *dst, const probe_totals *src) {
    dst->passed += src->passed;
    dst->failed += src->failed;
    for (uint32_t i = 0; i < src->failed_listed && dst->failed_listed < PROBE_LISTED_SLOTS; i++)
        dst->failed_slots[dst->failed_listed++] = src->failed_slots[i];
    if (src->reason[0] && (!dst->reason[0] || src->reason_slot < dst->reason_slot)) {
        memcpy(dst->reason, src->reason, sizeof(dst->reason));
        dst->reason_slot = src->reason_slot;
    }
}
