/* entry_stats.c - see entry_stats.h. */
#include "entry_stats.h"

#include <stdio.h>
#include <stdlib.h>

entry_stats *entry_stats_new(size_t n, int with_latency) {
    entry_stats *e = calloc(n ? n : 1, sizeof(*e));
    if (!e) { perror("rackbench-engine: out of memory"); exit(1); }
    for (size_t i = 0; i < n && with_latency; i++) {
        e[i].latency = malloc(sizeof(histogram));
        if (!e[i].latency) { perror("rackbench-engine: out of memory"); exit(1); }
        hist_init(e[i].latency);
    }
    return e;
}

void entry_stats_free(entry_stats *e, size_t n) {
    if (!e) return;
    for (size_t i = 0; i < n; i++) free(e[i].latency);
    free(e);
}

void entry_stats_merge(entry_stats *dst, const entry_stats *src) {
    dst->requests += src->requests;
    dst->hops += src->hops;
    for (int s = 0; s < STATUS_CODES; s++) dst->status[s] += src->status[s];
    for (int k = 0; k < ERR_KINDS; k++) dst->errors[k] += src->errors[k];
    if (dst->latency && src->latency) hist_merge(dst->latency, src->latency);
}
