/*
 * test_phase_stats.c - what one thread counts in one phase (phase_stats.h)
 * and the per-second timeline merged over threads, which the report's
 * "warmup too short" flag reads.
 *
 * Completion times are numbers chosen here (no clock). Percentiles of a
 * merged second are checked two ways: against a dense histogram of the
 * same values, and against the exact nearest-rank value of the sorted
 * values, reported as its bucket's midpoint (what the timeline promises).
 * Random data comes from a fixed-seed xorshift64*: every run checks the
 * same numbers.
 */
#include "check.h"
#include "histogram.h"
#include "phase_stats.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define S UINT64_C(1000000000)
#define MS UINT64_C(1000000)
#define US UINT64_C(1000)
#define T0 (UINT64_C(86400) * S + UINT64_C(987654321))

/* phase_stats and histograms hold ~35 KB arrays each: keep them static. */
static phase_stats threads_ps[4];
static phase_stats merged;

static uint64_t rng_state;

static void rng_seed(uint64_t seed) { rng_state = seed; }

static uint64_t rng_next(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Log-uniform in [lo, hi): latencies spread over many buckets. */
static uint64_t rng_latency_ns(double lo, double hi) {
    double u = (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
    return (uint64_t)exp(log(lo) + u * (log(hi) - log(lo)));
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank, in integers: the ceil(pct * n / 100)-th smallest (at
 * least the first), reported as its bucket's midpoint. */
static uint64_t exact_percentile_mid_ns(uint64_t *values, size_t n, unsigned pct) {
    qsort(values, n, sizeof(values[0]), cmp_u64);
    size_t rank = (pct * n + 99) / 100;
    if (rank < 1) rank = 1;
    return hist_bucket_mid_ns(hist_bucket_index(values[rank - 1]));
}

/* The dense histogram's percentile with the same widened clamp the merge
 * uses (a second's min and max are not kept): the bucket midpoint. */
static uint64_t dense_percentile_ns(histogram *h, double pct) {
    h->min_ns = 0;
    h->max_ns = UINT64_MAX;
    return hist_percentile_ns(h, pct);
}

static void free_all(void) {
    for (int t = 0; t < 4; t++) phase_stats_free(&threads_ps[t]);
}

static size_t merge(int n, timeline_point **points) {
    phase_stats *list[4];
    for (int t = 0; t < n; t++) list[t] = &threads_ps[t];
    return phase_stats_merge_timeline(list, (size_t)n, points);
}

/* --- tests ---------------------------------------------------------------- */

static void test_responses_and_errors_land_in_their_second(void) {
    phase_stats *ps = &threads_ps[0];
    phase_stats_init(ps, T0);
    phase_stats_response(ps, T0, 100 * US, 200, 50);                 /* second 0, first ns */
    phase_stats_response(ps, T0 + S - 1, 200 * US, 200, 50);         /* second 0, last ns */
    phase_stats_response(ps, T0 + S, 300 * US, 503, 60);             /* second 1, first ns */
    phase_stats_error(ps, T0 + S + 1, ERR_TIMEOUT, 7);               /* second 1 */
    phase_stats_error(ps, T0 + 2 * S + S / 2, ERR_CONNECT, 0);       /* second 2 */
    phase_stats_response(ps, T0 + 2 * S + S / 2 + 1, 1 * MS, 1000, 5); /* status out of range */
    phase_stats_response(ps, T0 + 2 * S + S / 2 + 2, 1 * MS, -1, 5);   /* negative too */
    phase_stats_flush(ps);

    CHECK_EQ_U64(ps->bin_count, 3);
    CHECK_EQ_U64(ps->bins[0].second, 0);
    CHECK_EQ_U64(ps->bins[0].requests, 2);
    CHECK_EQ_U64(ps->bins[0].errors, 0);
    CHECK_EQ_U64(ps->bins[0].bytes, 100);
    CHECK_EQ_U64(ps->bins[1].second, 1);
    CHECK_EQ_U64(ps->bins[1].requests, 1);
    CHECK_EQ_U64(ps->bins[1].errors, 1);
    CHECK_EQ_U64(ps->bins[1].bytes, 67);
    CHECK_EQ_U64(ps->bins[2].second, 2);
    CHECK_EQ_U64(ps->bins[2].requests, 2);
    CHECK_EQ_U64(ps->bins[2].errors, 1);
    /* An error-only second keeps no latency entries; bin 1 has one. */
    CHECK_EQ_U64(ps->bins[1].entry_count, 1);

    /* Totals: every response and error once, by code and kind. */
    CHECK_EQ_U64(ps->requests, 5);
    CHECK_EQ_U64(ps->latency.total, 5);
    CHECK_EQ_U64(ps->bytes, 100 + 67 + 0 + 10);
    CHECK_EQ_U64(ps->errors[ERR_TIMEOUT], 1);
    CHECK_EQ_U64(ps->errors[ERR_CONNECT], 1);
    CHECK_EQ_U64(ps->errors[ERR_READ], 0);
    CHECK_EQ_U64(ps->status[200], 2);
    CHECK_EQ_U64(ps->status[503], 1);
    CHECK_EQ_U64(ps->status[0], 2); /* codes outside 0..999 are kept under 0 */
    CHECK_EQ_U64(ps->latency.min_ns, 100 * US);
    CHECK_EQ_U64(ps->latency.max_ns, 1 * MS);

    timeline_point *points = NULL;
    size_t count = merge(1, &points);
    CHECK_EQ_U64(count, 3);
    if (count == 3) {
        CHECK_EQ_U64(points[1].requests, 1);
        CHECK_EQ_U64(points[1].errors, 1);
        CHECK_EQ_U64(points[1].p50_ns, hist_bucket_mid_ns(hist_bucket_index(300 * US)));
        CHECK_EQ_U64(points[1].p99_ns, hist_bucket_mid_ns(hist_bucket_index(300 * US)));
    }
    free(points);
    phase_stats_free(ps);

    /* Seconds opened by an event on their very last nanosecond. */
    phase_stats_init(ps, T0);
    phase_stats_response(ps, T0 + S - 1, 1 * MS, 200, 1);
    phase_stats_error(ps, T0 + 2 * S - 1, ERR_READ, 0);
    phase_stats_response(ps, T0 + 4 * S - 1, 1 * MS, 200, 1);
    phase_stats_flush(ps);
    CHECK_EQ_U64(ps->bin_count, 3);
    CHECK_EQ_U64(ps->bins[0].second, 0);
    CHECK_EQ_U64(ps->bins[1].second, 1);
    CHECK_EQ_U64(ps->bins[2].second, 3);
    phase_stats_free(ps);
}

static void test_quiet_seconds_are_empty_points(void) {
    phase_stats_init(&threads_ps[0], T0);
    phase_stats_init(&threads_ps[1], T0);
    phase_stats_init(&threads_ps[2], T0);
    /* Thread 0: seconds 0 and 3; thread 1: second 5 only; thread 2: idle. */
    phase_stats_response(&threads_ps[0], T0 + 10 * MS, 1 * MS, 200, 10);
    phase_stats_response(&threads_ps[0], T0 + 3 * S + 10 * MS, 2 * MS, 200, 10);
    phase_stats_error(&threads_ps[1], T0 + 5 * S, ERR_READ, 3);
    for (int t = 0; t < 3; t++) phase_stats_flush(&threads_ps[t]);
    CHECK_EQ_U64(threads_ps[2].bin_count, 0);

    timeline_point *points = NULL;
    size_t count = merge(3, &points);
    CHECK_EQ_U64(count, 6);
    int bad = 0;
    for (size_t s = 0; s < count; s++) {
        if (points[s].second != s) bad++;
        int active = s == 0 || s == 3 || s == 5;
        if (!active && (points[s].requests || points[s].errors || points[s].bytes || points[s].p50_ns ||
                        points[s].p99_ns))
            bad++;
    }
    CHECK(bad == 0);
    if (count == 6) {
        CHECK_EQ_U64(points[0].requests, 1);
        CHECK_EQ_U64(points[3].requests, 1);
        CHECK_EQ_U64(points[5].requests, 0);
        CHECK_EQ_U64(points[5].errors, 1);
        CHECK_EQ_U64(points[5].bytes, 3);
        CHECK_EQ_U64(points[5].p50_ns, 0); /* no responses: no percentile */
    }
    free(points);

    /* Nothing at all: no points, and *out is set to NULL. */
    phase_stats *idle = &threads_ps[2];
    points = (timeline_point *)&points;
    CHECK_EQ_U64(phase_stats_merge_timeline(&idle, 1, &points), 0);
    CHECK(points == NULL);
    CHECK_EQ_U64(phase_stats_merge_timeline(NULL, 0, &points), 0);
    CHECK(points == NULL);
    free_all();
}

#define THREADS 3
#define SECONDS 6
#define PER_THREAD_PER_SECOND 700
static uint64_t second_values[SECONDS][THREADS * PER_THREAD_PER_SECOND];

/* Three threads, six seconds, latencies over four decades: each merged
 * second's p50/p99 equals a dense histogram's and the exact nearest rank's
 * bucket midpoint; counts and bytes add up. */
static void test_merged_percentiles_match_dense(void) {
    static histogram per_second[SECONDS];
    uint64_t requests[SECONDS] = {0}, errors[SECONDS] = {0}, bytes[SECONDS] = {0};
    size_t filled[SECONDS] = {0};
    for (int s = 0; s < SECONDS; s++) hist_init(&per_second[s]);
    rng_seed(42);
    for (int t = 0; t < THREADS; t++) {
        phase_stats *ps = &threads_ps[t];
        phase_stats_init(ps, T0);
        for (int s = 0; s < SECONDS; s++) {
            /* Thread 1 is silent in second 2; thread 2 answers half as much. */
            int n = (t == 1 && s == 2) ? 0 : (t == 2 ? PER_THREAD_PER_SECOND / 2 : PER_THREAD_PER_SECOND);
            for (int i = 0; i < n; i++) {
                /* Completion times move forward within the second. */
                uint64_t now = T0 + (uint64_t)s * S + (uint64_t)i * (S / PER_THREAD_PER_SECOND);
                uint64_t latency = rng_latency_ns(10e3, 100e6);
                uint64_t b = 100 + rng_next() % 50;
                if (i % 97 == 13) {
                    phase_stats_error(ps, now, ERR_PARSE, b);
                    errors[s]++;
                } else {
                    phase_stats_response(ps, now, latency, 200, b);
                    hist_record(&per_second[s], latency);
                    second_values[s][filled[s]++] = latency;
                    requests[s]++;
                }
                bytes[s] += b;
            }
        }
        phase_stats_flush(ps);
    }
    timeline_point *points = NULL;
    size_t count = merge(THREADS, &points);
    CHECK_EQ_U64(count, SECONDS);
    int bad_counts = 0, bad_dense = 0, bad_exact = 0;
    for (size_t s = 0; s < count && s < SECONDS; s++) {
        if (points[s].requests != requests[s] || points[s].errors != errors[s] || points[s].bytes != bytes[s])
            bad_counts++;
        uint64_t dense_p50 = dense_percentile_ns(&per_second[s], 50.0);
        uint64_t dense_p99 = dense_percentile_ns(&per_second[s], 99.0);
        if (points[s].p50_ns != dense_p50 || points[s].p99_ns != dense_p99) {
            if (!bad_dense)
                fprintf(stderr, "  second %zu: p50 %llu vs %llu, p99 %llu vs %llu\n", s,
                        (unsigned long long)points[s].p50_ns, (unsigned long long)dense_p50,
                        (unsigned long long)points[s].p99_ns, (unsigned long long)dense_p99);
            bad_dense++;
        }
        if (points[s].p50_ns != exact_percentile_mid_ns(second_values[s], filled[s], 50) ||
            points[s].p99_ns != exact_percentile_mid_ns(second_values[s], filled[s], 99))
            bad_exact++;
    }
    CHECK(bad_counts == 0);
    CHECK(bad_dense == 0);
    CHECK(bad_exact == 0);
    /* The seconds really differ (thread mix changes): not a trivial pass. */
    CHECK(points[0].p99_ns > points[0].p50_ns);
    free(points);
    free_all();
}

/* Totals of several threads add up exactly, lateness and unsent included,
 * and the merged histograms answer as one. */
static void test_totals_merge(void) {
    phase_stats *a = &threads_ps[0], *b = &threads_ps[1];
    phase_stats_init(a, T0);
    phase_stats_init(b, T0);
    phase_stats_response(a, T0 + 1, 100 * US, 200, 10);
    phase_stats_response(a, T0 + 2, 300 * US, 404, 20);
    phase_stats_error(a, T0 + 3, ERR_WRITE, 1);
    phase_stats_lateness(a, LATE_THRESHOLD_NS - 1); /* just on time */
    phase_stats_lateness(a, LATE_THRESHOLD_NS);     /* late from here */
    phase_stats_schedule(a, 10, 3);
    phase_stats_response(b, T0 + 4, 50 * US, 200, 30);
    phase_stats_error(b, T0 + 5, ERR_WRITE, 2);
    phase_stats_error(b, T0 + 6, ERR_TIMEOUT, 0);
    phase_stats_lateness(b, 5 * MS);
    phase_stats_lateness(b, 0);
    phase_stats_schedule(b, 20, 4);
    phase_stats_schedule(b, 1, 0);

    CHECK_EQ_U64(a->late_requests, 1);
    CHECK_EQ_U64(b->late_requests, 1);

    /* As report.c builds its merged phase: zeroed, histograms emptied. */
    memset(&merged, 0, sizeof(merged));
    hist_init(&merged.latency);
    hist_init(&merged.lateness);
    phase_stats_merge_totals(&merged, a);
    phase_stats_merge_totals(&merged, b);
    CHECK_EQ_U64(merged.requests, 3);
    CHECK_EQ_U64(merged.bytes, 10 + 20 + 1 + 30 + 2);
    CHECK_EQ_U64(merged.errors[ERR_WRITE], 2);
    CHECK_EQ_U64(merged.errors[ERR_TIMEOUT], 1);
    CHECK_EQ_U64(merged.errors[ERR_CONNECT], 0);
    CHECK_EQ_U64(merged.status[200], 2);
    CHECK_EQ_U64(merged.status[404], 1);
    CHECK_EQ_U64(merged.late_requests, 2);
    CHECK_EQ_U64(merged.scheduled, 31);
    CHECK_EQ_U64(merged.unsent, 7);
    CHECK_EQ_U64(merged.lateness.total, 4);
    CHECK_EQ_U64(merged.lateness.max_ns, 5 * MS);
    CHECK_EQ_U64(merged.lateness.min_ns, 0);
    CHECK_EQ_U64(merged.latency.total, 3);
    CHECK_EQ_U64(merged.latency.min_ns, 50 * US);
    CHECK_EQ_U64(merged.latency.max_ns, 300 * US);
    CHECK(fabs(hist_mean_ns(&merged.latency) - 150e3) < 1e-6);

    /* Merging totals leaves the sources' timelines alone and takes none. */
    CHECK_EQ_U64(merged.bin_count, 0);
    CHECK(merged.bin_hist == NULL);
    free_all();
}

/* A completion before the phase's start (the clock cannot go back, but a
 * phase may be initialised after a thread read its time) counts in
 * second 0, as does everything in the phase's first second. */
static void test_completion_before_phase_start(void) {
    phase_stats *ps = &threads_ps[0];
    phase_stats_init(ps, T0 + 5 * S);
    phase_stats_response(ps, T0, 1 * MS, 200, 1);                 /* 5 s before the start */
    phase_stats_response(ps, T0 + 5 * S - 1, 1 * MS, 200, 1);     /* 1 ns before */
    phase_stats_response(ps, T0 + 5 * S + S / 2, 1 * MS, 200, 1); /* inside second 0 */
    phase_stats_response(ps, T0 + 6 * S, 1 * MS, 200, 1);         /* second 1 */
    phase_stats_flush(ps);
    CHECK_EQ_U64(ps->bin_count, 2);
    CHECK_EQ_U64(ps->bins[0].second, 0);
    CHECK_EQ_U64(ps->bins[0].requests, 3);
    CHECK_EQ_U64(ps->bins[1].second, 1);
    CHECK_EQ_U64(ps->bins[1].requests, 1);
    phase_stats_free(ps);

    /* The first event of a phase may be the early one. */
    phase_stats_init(ps, T0 + 5 * S);
    phase_stats_error(ps, T0 + 1, ERR_CONNECT, 0);
    phase_stats_flush(ps);
    CHECK_EQ_U64(ps->bin_count, 1);
    CHECK_EQ_U64(ps->bins[0].second, 0);
    CHECK_EQ_U64(ps->bins[0].errors, 1);
    phase_stats_free(ps);
}

/* Flushing twice closes nothing twice; flushing an idle phase adds no
 * second; a response after a flush is still merged into its second. */
static void test_flush_is_idempotent(void) {
    phase_stats *ps = &threads_ps[0];
    phase_stats_init(ps, T0);
    phase_stats_flush(ps);
    phase_stats_flush(ps);
    CHECK_EQ_U64(ps->bin_count, 0);

    phase_stats_response(ps, T0 + S / 4, 2 * MS, 200, 8);
    phase_stats_response(ps, T0 + S / 2, 4 * MS, 200, 8);
    phase_stats_flush(ps);
    size_t bins = ps->bin_count, entries = ps->entry_count;
    phase_stats_flush(ps);
    phase_stats_flush(ps);
    CHECK_EQ_U64(ps->bin_count, bins);
    CHECK_EQ_U64(ps->entry_count, entries);
    CHECK_EQ_U64(bins, 1);
    CHECK_EQ_U64(entries, 2);

    timeline_point *points = NULL;
    size_t count = merge(1, &points);
    CHECK_EQ_U64(count, 1);
    if (count == 1) CHECK_EQ_U64(points[0].requests, 2);
    free(points);

    /* Same second after the flush: a second bin, merged into one point. */
    phase_stats_response(ps, T0 + S * 3 / 4, 8 * MS, 200, 8);
    phase_stats_flush(ps);
    count = merge(1, &points);
    CHECK_EQ_U64(count, 1);
    if (count == 1) {
        CHECK_EQ_U64(points[0].requests, 3);
        CHECK_EQ_U64(points[0].bytes, 24);
        CHECK_EQ_U64(points[0].p50_ns, hist_bucket_mid_ns(hist_bucket_index(4 * MS)));
        CHECK_EQ_U64(points[0].p99_ns, hist_bucket_mid_ns(hist_bucket_index(8 * MS)));
    }
    free(points);
    phase_stats_free(ps);
    phase_stats_free(ps); /* freeing twice is harmless too */
}

/* Hours of seconds: the bins and entries arrays grow many times over (they
 * start at 64 bins and 1024 entries) and keep every second intact; a gap
 * of a day of silence becomes that many empty points. */
static void test_many_seconds_grow_the_arrays(void) {
    enum { LONG_SECONDS = 5000 };
    phase_stats *ps = &threads_ps[0];
    phase_stats *other = &threads_ps[1];
    phase_stats_init(ps, T0);
    phase_stats_init(other, T0);
    for (uint64_t s = 0; s < LONG_SECONDS; s++) {
        uint64_t base = T0 + s * S;
        /* Three buckets a second, one value depending on the second. */
        phase_stats_response(ps, base + 1, 100 * US, 200, 1);
        phase_stats_response(ps, base + 2, 1 * MS, 200, 1);
        phase_stats_response(ps, base + 3, 10 * MS + s * US, 200, 1);
        if (s % 1000 == 999) phase_stats_response(other, base + 4, 50 * MS, 200, 1);
    }
    phase_stats_flush(ps);
    phase_stats_flush(other);
    CHECK_EQ_U64(ps->bin_count, LONG_SECONDS);
    CHECK(ps->bin_cap >= LONG_SECONDS);
    CHECK_EQ_U64(ps->entry_count, 3 * LONG_SECONDS);
    CHECK(ps->entry_cap >= 3 * LONG_SECONDS);
    CHECK_EQ_U64(ps->bins[LONG_SECONDS - 1].second, LONG_SECONDS - 1);
    CHECK_EQ_U64(ps->bins[LONG_SECONDS - 1].first_entry, 3 * (LONG_SECONDS - 1));

    timeline_point *points = NULL;
    size_t count = merge(2, &points);
    CHECK_EQ_U64(count, LONG_SECONDS);
    int bad = 0;
    for (size_t s = 0; s < count; s++) {
        int extra = s % 1000 == 999;
        uint64_t want_p99 = hist_bucket_mid_ns(hist_bucket_index(extra ? 50 * MS : 10 * MS + s * US));
        if (points[s].second != s || points[s].requests != (uint64_t)(3 + extra) ||
            points[s].p50_ns != hist_bucket_mid_ns(hist_bucket_index(1 * MS)) || points[s].p99_ns != want_p99)
            bad++;
    }
    CHECK(bad == 0);
    free(points);
    free_all();

    /* One response now, one a day later: a day of empty points between. */
    phase_stats_init(ps, T0);
    phase_stats_response(ps, T0, 1 * MS, 200, 1);
    phase_stats_response(ps, T0 + 86400 * S, 1 * MS, 200, 1);
    phase_stats_flush(ps);
    CHECK_EQ_U64(ps->bin_count, 2);
    count = merge(1, &points);
    CHECK_EQ_U64(count, 86401);
    if (count == 86401) {
        CHECK_EQ_U64(points[43200].second, 43200);
        CHECK_EQ_U64(points[43200].requests, 0);
        CHECK_EQ_U64(points[86400].requests, 1);
    }
    free(points);
    phase_stats_free(ps);
}

int main(void) {
    test_responses_and_errors_land_in_their_second();
    test_quiet_seconds_are_empty_points();
    test_merged_percentiles_match_dense();
    test_totals_merge();
    test_completion_before_phase_start();
    test_flush_is_idempotent();
    test_many_seconds_grow_the_arrays();
    return check_report("phase_stats");
}
