/*
 * entry_stats.h - per-entry results of a request list (doc/output.md,
 * "entries"): what one engine thread counts for one entry in one phase.
 *
 * Allocated before the run (one array per thread and phase, indexed by
 * the entry's position in the file) and only for a request list; merged
 * by the main thread after the workers are joined, like phase_stats. The
 * hot path costs one histogram record per completed entry (a redirect
 * chain counts once) and a few counter increments.
 */
#ifndef RB_ENTRY_STATS_H
#define RB_ENTRY_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"
#include "phase_stats.h"

typedef struct {
    uint64_t requests;      /* responses, every redirect hop included */
    uint64_t hops;          /* requests sent to follow redirects (their
                               responses and errors count as any other) */
    uint64_t status[STATUS_CODES];
    uint64_t errors[ERR_KINDS];
    histogram *latency;     /* measured window only (NULL in the warmup):
                               first byte sent to the chain's last response */
} entry_stats;

/* n zeroed entries; with_latency allocates their histograms. Exits on
 * out-of-memory (before the run). */
entry_stats *entry_stats_new(size_t n, int with_latency);
void entry_stats_free(entry_stats *e, size_t n);

static inline void entry_stats_response(entry_stats *e, int status) {
    e->requests++;
    e->status[(unsigned)status < STATUS_CODES ? status : 0]++;
}

/* dst += src (counters and histograms). */
void entry_stats_merge(entry_stats *dst, const entry_stats *src);

#endif
