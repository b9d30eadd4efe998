/* count_window.c - see count_window.h. */
#include "count_window.h"

void count_window_init(count_window *cw, uint64_t count, int threads) {
    cw->count = count;
    cw->threads = threads;
    atomic_init(&cw->claimed, 0);
    atomic_init(&cw->quiet_threads, 0);
    atomic_init(&cw->open, 0);
    atomic_init(&cw->start_ns, 0);
}

int count_window_claim(count_window *cw) {
    if (!atomic_load_explicit(&cw->open, memory_order_acquire)) return 0;
    /* A compare-and-swap loop rather than a fetch_add: a failed claim must
     * not push the counter past N, so that count_window_claimed stays the
     * number of requests really started. */
    uint_fast64_t taken = atomic_load_explicit(&cw->claimed, memory_order_relaxed);
    while (taken < cw->count) {
        if (atomic_compare_exchange_weak_explicit(&cw->claimed, &taken, taken + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            return 1;
    }
    return 0;
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
