/* slot_service.c - see slot_service.h. */
#include "slot_service.h"

/* A wait that ended at until_ns counts when it reached into the window. */
static void end_wait(slot_service *s, uint64_t until_ns, uint64_t window_start_ns) {
    if (!s->waiting_since_ns) return;
    if (until_ns >= window_start_ns) {
        s->active = 1;
        uint64_t wait_ns = until_ns > s->waiting_since_ns ? until_ns - s->waiting_since_ns : 0;
        if (wait_ns > s->max_wait_ns) s->max_wait_ns = wait_ns;
    }
    s->waiting_since_ns = 0;
}

void slot_service_sent(slot_service *s, uint64_t now_ns, uint64_t window_start_ns) {
    if (now_ns >= window_start_ns) s->active = 1;
    /* 0 means "not waiting": the monotonic clock is never 0 after boot,
     * but a caller's synthetic clock might be. */
    if (!s->waiting_since_ns) s->waiting_since_ns = now_ns ? now_ns : 1;
}

void slot_service_response(slot_service *s, uint64_t now_ns, uint64_t window_start_ns) {
    if (now_ns >= window_start_ns) s->served = 1;
    end_wait(s, now_ns, window_start_ns);
}

void slot_service_finish(slot_service *s, uint64_t end_ns, uint64_t window_start_ns) {
    end_wait(s, end_ns, window_start_ns);
}

void service_totals_add(service_totals *t, const slot_service *s, uint32_t slot) {
    t->slots++;
    if (s->active) t->active++;
    if (s->served) t->served++;
    if (s->max_wait_ns > t->max_wait_ns) t->max_wait_ns = s->max_wait_ns;
    if (s->active && !s->served && t->unserved_listed < SERVICE_LISTED_SLOTS) t->unserved[t->unserved_listed++] = slot;
}

void service_totals_merge(service_totals *dst, const service_totals *src) {
    dst->slots += src->slots;
    dst->active += src->active;
    dst->served += src->served;
    if (src->max_wait_ns > dst->max_wait_ns) dst->max_wait_ns = src->max_wait_ns;
    for (uint32_t i = 0; i < src->unserved_listed && dst->unserved_listed < SERVICE_LISTED_SLOTS; i++)
        dst->unserved[dst->unserved_listed++] = src->unserved[i];
}
