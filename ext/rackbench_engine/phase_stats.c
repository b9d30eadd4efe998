/* phase_stats.c - see phase_stats.h. */
#include "phase_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

const char *const error_kind_names[ERR_KINDS] = {"connect", "read", "write", "timeout", "parse", "capture", "redirect",
                                                   "stream_reset", "goaway", "not_h2c", "h2_protocol",
                                                   "expect", "tls"};

static void *checked_realloc(void *p, size_t bytes) {
    void *q = realloc(p, bytes);
    if (!q) {
        perror("rackbench-engine: out of memory");
        exit(1);
    }
    return q;
}

void phase_stats_init(phase_stats *ps, uint64_t start_ns) {
    memset(ps, 0, sizeof(*ps));
    ps->start_ns = start_ns;
    hist_init(&ps->latency);
    hist_init(&ps->lateness);
    ps->bin_hist = checked_realloc(NULL, sizeof(histogram));
    hist_init(ps->bin_hist);
}

void phase_stats_free(phase_stats *ps) {
    free(ps->bin_hist);
    free(ps->bins);
    free(ps->entries);
    ps->bin_hist = NULL;
    ps->bins = NULL;
    ps->entries = NULL;
}

static void close_bin(phase_stats *ps) {
    if (!ps->bin_open) return;
    timeline_bin *b = &ps->current;
    b->first_entry = ps->entry_count;
    b->entry_count = 0;
    if (b->requests) {
        for (size_t i = 0; i < HIST_BUCKETS; i++) {
            uint64_t c = ps->bin_hist->counts[i];
            if (!c) continue;
            if (ps->entry_count == ps->entry_cap) {
                ps->entry_cap = ps->entry_cap ? ps->entry_cap * 2 : 1024;
                ps->entries = checked_realloc(ps->entries, ps->entry_cap * sizeof(sparse_count));
            }
            /* A second holds far fewer than 2^32 responses per bucket. */
            ps->entries[ps->entry_count++] = (sparse_count){(uint32_t)i, (uint32_t)c};
            b->entry_count++;
        }
        memset(ps->bin_hist->counts, 0, sizeof(ps->bin_hist->counts));
    }
    if (ps->bin_count == ps->bin_cap) {
        ps->bin_cap = ps->bin_cap ? ps->bin_cap * 2 : 64;
        ps->bins = checked_realloc(ps->bins, ps->bin_cap * sizeof(timeline_bin));
    }
    ps->bins[ps->bin_count++] = *b;
    ps->bin_open = 0;
}

/* Makes the bin holding now_ns the open one. Completion times of one thread
 * only move forward, so an earlier second never needs reopening; a time
 * before the phase start (impossible but harmless) lands in second 0. */
static timeline_bin *bin_for(phase_stats *ps, uint64_t now_ns) {
    if (ps->bin_open && now_ns < ps->bin_end_ns) return &ps->current;
    uint64_t second = now_ns > ps->start_ns ? (now_ns - ps->start_ns) / NS_PER_S : 0;
    if (ps->bin_open && second <= ps->current.second) return &ps->current;
    close_bin(ps);
    memset(&ps->current, 0, sizeof(ps->current));
    ps->current.second = second;
    ps->bin_end_ns = ps->start_ns + (second + 1) * NS_PER_S;
    ps->bin_open = 1;
    return &ps->current;
}

void phase_stats_response(phase_stats *ps, uint64_t now_ns, uint64_t latency_ns, int status, uint64_t bytes) {
    hist_record(&ps->latency, latency_ns);
    ps->requests++;
    ps->bytes += bytes;
    ps->status[(unsigned)status < STATUS_CODES ? status : 0]++;
    timeline_bin *b = bin_for(ps, now_ns);
    b->requests++;
    b->bytes += bytes;
    /* Counts only: the per-second percentiles need nothing more, and this
     * skips hist_record's running mean on the hot path. */
    ps->bin_hist->counts[hist_bucket_index(latency_ns)]++;
}

void phase_stats_error(phase_stats *ps, uint64_t now_ns, error_kind kind, uint64_t bytes) {
    ps->errors[kind]++;
    ps->bytes += bytes;
    timeline_bin *b = bin_for(ps, now_ns);
    b->errors++;
    b->bytes += bytes;
}

void phase_stats_lateness(phase_stats *ps, uint64_t late_ns) {
    hist_record(&ps->lateness, late_ns);
    if (late_ns >= LATE_THRESHOLD_NS) ps->late_requests++;
}

void phase_stats_schedule(phase_stats *ps, uint64_t scheduled, uint64_t unsent) {
    ps->scheduled += scheduled;
    ps->unsent += unsent;
}

void phase_stats_flush(phase_stats *ps) { close_bin(ps); }

void phase_stats_merge_totals(phase_stats *dst, const phase_stats *src) {
    hist_merge(&dst->latency, &src->latency);
    hist_merge(&dst->lateness, &src->lateness);
    dst->late_requests += src->late_requests;
    dst->scheduled += src->scheduled;
    dst->unsent += src->unsent;
    dst->requests += src->requests;
    dst->bytes += src->bytes;
    dst->body_bytes += src->body_bytes;
    for (int k = 0; k < ERR_KINDS; k++) dst->errors[k] += src->errors[k];
    for (int s = 0; s < STATUS_CODES; s++) dst->status[s] += src->status[s];
}

size_t phase_stats_merge_timeline(phase_stats *const *stats, size_t n, timeline_point **out) {
    uint64_t last = 0;
    int any = 0;
    for (size_t t = 0; t < n; t++) {
        if (stats[t]->bin_count) {
            uint64_t s = stats[t]->bins[stats[t]->bin_count - 1].second;
            if (!any || s > last) last = s;
            any = 1;
        }
    }
    *out = NULL;
    if (!any) return 0;
    size_t count = (size_t)last + 1;
    timeline_point *points = checked_realloc(NULL, count * sizeof(timeline_point));
    size_t *cursor = checked_realloc(NULL, (n ? n : 1) * sizeof(size_t));
    memset(cursor, 0, (n ? n : 1) * sizeof(size_t));
    histogram *merged = checked_realloc(NULL, sizeof(histogram));
    for (size_t s = 0; s < count; s++) {
        timeline_point *pt = &points[s];
        memset(pt, 0, sizeof(*pt));
        pt->second = s;
        hist_init(merged);
        for (size_t t = 0; t < n; t++) {
            const phase_stats *ps = stats[t];
            /* Bins are in increasing second order within a thread. */
            while (cursor[t] < ps->bin_count && ps->bins[cursor[t]].second == s) {
                const timeline_bin *b = &ps->bins[cursor[t]++];
                pt->requests += b->requests;
                pt->errors += b->errors;
                pt->bytes += b->bytes;
                for (size_t e = 0; e < b->entry_count; e++) {
                    const sparse_count *sc = &ps->entries[b->first_entry + e];
                    merged->counts[sc->bucket] += sc->count;
                    merged->total += sc->count;
                }
            }
        }
        if (merged->total) {
            /* min/max are unknown per second: give the percentile walk the
             * widest clamp so it reports bucket midpoints. */
            merged->min_ns = 0;
            merged->max_ns = UINT64_MAX;
            pt->p50_ns = hist_percentile_ns(merged, 50.0);
            pt->p99_ns = hist_percentile_ns(merged, 99.0);
        }
    }
    free(merged);
    free(cursor);
    *out = points;
    return count;
}
