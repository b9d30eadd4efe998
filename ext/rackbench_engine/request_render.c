/*
 * request_render.c - see request_render.h. Runs on the request path: it
 * formats into the slot's own buffer and allocates nothing.
 */
#include "request_render.h"

#include <stdio.h>
#include <string.h>

size_t requests_render(const request_template *t, session_vars *vars, char *out, size_t cap, size_t *head_len,
                       int *missing_var) {
    size_t head = session_render(t->wire, t->head_parts, t->head_part_count, vars, out, cap, missing_var);
    if (head == SIZE_MAX) return SIZE_MAX;
    /* The body goes after room for the Content-Length line, then moves up
     * once its length is known. */
    size_t room = t->dynamic_length ? 48 : 0;
    if (head + room + 2 > cap) { *missing_var = -1; return SIZE_MAX; }
    size_t body_at = head + room + 2;
    size_t body = session_render(t->wire, t->body_parts, t->body_part_count, vars, out + body_at, cap - body_at,
                                 missing_var);
    if (body == SIZE_MAX) return SIZE_MAX;
    size_t n = head;
    if (t->dynamic_length) n += (size_t)snprintf(out + n, room, "Content-Length: %zu\r\n", body);
    *head_len = n;
    out[n++] = '\r';
    out[n++] = '\n';
    memmove(out + n, out + body_at, body);
    return n + body;
}

const request_template *requests_next(const request_set *set, rng *r, size_t *first_done) {
    if (*first_done < set->first_count) return &set->items[(*first_done)++];
    if (set->count - set->first_count == 1) return &set->items[set->first_count];
    uint64_t pick = rng_below(r, set->total_weight);
    /* Binary search for the first cumulative weight above pick. */
    size_t lo = 0, hi = set->count - set->first_count - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->cum_weight[mid] > pick) hi = mid;
        else lo = mid + 1;
    }
    return &set->items[set->first_count + lo];
}

void requests_slot_vars(const request_set *set, session_vars *vars, uint64_t seed, uint32_t slot) {
    /* Another stream than the mix's (worker.c seeds that one with seed *
     * FNV prime + slot): the same slot draws other numbers than it picks. */
    rng_seed(&vars->random, (seed ^ UINT64_C(0x5851F42D4C957F2D)) * UINT64_C(0x100000001B3) + slot);
    const user_table *u = &set->users;
    if (!u->row_count) return;
    size_t row = slot % u->row_count;
    for (int k = 0; k < u->column_count; k++) {
        int var = set->user_vars[k];
        size_t n = u->cell_lens[row * (size_t)u->column_count + (size_t)k];
        memcpy(vars->value[var], u->cells[row * (size_t)u->column_count + (size_t)k], n);
        vars->len[var] = (uint16_t)n;
        vars->set[var] = 1;
    }
}
