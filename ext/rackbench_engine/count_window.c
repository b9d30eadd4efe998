/* count_window.c - see count_window.h. */
#include "count_window.h"

#include <stddef.h>

void count_window_init(count_window *cw, uint64_t count, uint64_t warmup_count, int threads) {
    cw->count = count;
    cw->warmup_count = warmup_count;
    cw->threads = threads;
    atomic_init(&cw->claimed, 0);
    atomic_init(&cw->warmup_claimed, 0);
    atomic_init(&cw->quiet_threads, 0);
    atomic_init(&cw->open, 0);
    atomic_init(&cw->start_ns, 0);
    atomic_init(&cw->drained_threads, 0);
    atomic_init(&cw->closed, 0);
}

/* Takes one of limit tickets from counter. A compare-and-swap loop rather
 * than a fetch_add: a failed claim must not push the counter past the
 * limit, so that the counter stays the number of requests really started. */
static int claim(atomic_uint_fast64_t *counter, uint64_t limit) {
    uint_fast64_t taken = atomic_load_explicit(counter, memory_order_relaxed);
    while (taken < limit) {
        if (atomic_compare_exchange_weak_explicit(counter, &taken, taken + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return 1;
    }
    return 0;
}

int count_window_claim(count_window *cw) {
    if (!atomic_load_explicit(&cw->open, memory_order_acquire)) return 0;
    return claim(&cw->claimed, cw->count);
}

int count_window_claim_warmup(count_window *cw) { return claim(&cw->warmup_claimed, cw->warmup_count); }

int count_window_warmup_over(count_window *cw, uint64_t now_ns, uint64_t measure_start_ns) {
    if (!cw->warmup_count) return now_ns >= measure_start_ns;
    return atomic_load_explicit(&cw->warmup_claimed, memory_order_relaxed) >= cw->warmup_count;
}

void count_window_quiet(count_window *cw) { atomic_fetch_add_explicit(&cw->quiet_threads, 1, memory_order_release); }

int count_window_all_quiet(count_window *cw) {
    return atomic_load_explicit(&cw->quiet_threads, memory_order_acquire) >= cw->threads;
}

void count_window_open(count_window *cw, uint64_t now_ns) {
    atomic_store_explicit(&cw->start_ns, now_ns, memory_order_relaxed);
    /* Release: a thread that sees open also sees start_ns. */
    atomic_store_explicit(&cw->open, 1, memory_order_release);
}

int count_window_is_open(count_window *cw, uint64_t *start_ns) {
    if (!atomic_load_explicit(&cw->open, memory_order_acquire)) return 0;
    if (start_ns) *start_ns = atomic_load_explicit(&cw->start_ns, memory_order_relaxed);
    return 1;
}

uint64_t count_window_claimed(count_window *cw) { return atomic_load_explicit(&cw->claimed, memory_order_relaxed); }

void count_window_drained(count_window *cw) {
    atomic_fetch_add_explicit(&cw->drained_threads, 1, memory_order_release);
}

int count_window_all_drained(count_window *cw) {
    return atomic_load_explicit(&cw->drained_threads, memory_order_acquire) >= cw->threads;
}

void count_window_close(count_window *cw) { atomic_store_explicit(&cw->closed, 1, memory_order_release); }

int count_window_closed(count_window *cw) { return atomic_load_explicit(&cw->closed, memory_order_acquire); }

count_stage count_window_next_stage(count_window *cw, count_stage stage, int warmup_over, int busy, int stopping) {
    switch (stage) {
    case COUNT_STAGE_WARMUP:
        /* Nothing of the warmup in flight: the start probes may go, and
         * none of them meets a warmup request at the server. */
        return warmup_over && busy == 0 ? COUNT_STAGE_START_PROBES : stage;
    case COUNT_STAGE_START_PROBES:
        /* Quiet only once the start probes completed: they are served
         * before the window opens. */
        if (busy > 0) return stage;
        count_window_quiet(cw);
        return COUNT_STAGE_QUIET;
    case COUNT_STAGE_QUIET:
        return count_window_is_open(cw, NULL) ? COUNT_STAGE_WINDOW : stage;
    case COUNT_STAGE_WINDOW:
        if (!stopping || busy > 0) return stage;
        count_window_drained(cw);
        return COUNT_STAGE_DRAINED;
    case COUNT_STAGE_DRAINED:
        return count_window_closed(cw) ? COUNT_STAGE_END_PROBES : stage;
    case COUNT_STAGE_END_PROBES:
        return busy == 0 ? COUNT_STAGE_DONE : stage;
    case COUNT_STAGE_DONE:
        break;
    }
    return stage;
}
