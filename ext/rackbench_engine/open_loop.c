/* open_loop.c - see open_loop.h. */
#include "open_loop.h"

#include <math.h>

uint64_t open_loop_origin_ns(uint64_t start_ns, double interval_ns, int thread_id, int threads) {
    return start_ns + (uint64_t)(interval_ns * thread_id / (threads > 0 ? threads : 1));
}

uint64_t open_loop_first_slot_at(uint64_t origin_ns, double interval_ns, uint64_t t_ns) {
    if (t_ns <= origin_ns) return 0;
    /* The quotient lands within a slot or two of the answer (the due times
     * are truncated products); the two walks make it exact against the
     * very formula the dispatcher uses. Each walk takes at most a step or
     * two, so the cost does not grow with the window. */
    uint64_t k = (uint64_t)ceil((double)(t_ns - origin_ns) / interval_ns);
    while (k > 0 && open_loop_due_ns(origin_ns, interval_ns, k - 1) >= t_ns) k--;
    while (open_loop_due_ns(origin_ns, interval_ns, k) < t_ns) k++;
    return k;
}

uint64_t open_loop_slots(uint64_t origin_ns, double interval_ns, uint64_t from_ns, uint64_t to_ns) {
    return open_loop_unsent(origin_ns, interval_ns, 0, from_ns, to_ns);
}

uint64_t open_loop_unsent(uint64_t origin_ns, double interval_ns, uint64_t next_index, uint64_t from_ns,
                          uint64_t to_ns) {
    if (to_ns <= from_ns) return 0;
    uint64_t first = open_loop_first_slot_at(origin_ns, interval_ns, from_ns);
    uint64_t end = open_loop_first_slot_at(origin_ns, interval_ns, to_ns);
    if (next_index > first) first = next_index;
    return end > first ? end - first : 0;
}
