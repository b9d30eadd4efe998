/*
 * histogram.h - log-linear latency histogram (HdrHistogram's idea).
 *
 * Values are nanoseconds. Values below 2^HIST_SUB_BITS are counted exactly;
 * above that every power of two [2^e, 2^(e+1)) is split into
 * 2^HIST_SUB_BITS equal buckets, so a bucket is at most 1/128 of its lower
 * bound wide. Reporting a bucket's midpoint therefore errs by at most 0.4%,
 * well inside the 1% budget from 1 us to 100 s. Values above HIST_MAX_NS
 * (about 1100 s) are clamped into the last bucket (max_ns keeps the truth).
 *
 * Buckets are fixed, so histograms merge exactly by adding counts: across
 * threads here, across batches and hosts later (Ruby rebuilds the same
 * buckets from the JSON). Recording is O(1), no allocation, no locking:
 * each thread owns its histogram and they are merged after the run.
 */
#ifndef RB_HISTOGRAM_H
#define RB_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)         /* 128 */
#define HIST_MAX_EXP 40                               /* 2^40 ns ~ 1100 s */
#define HIST_MAX_NS ((UINT64_C(1) << HIST_MAX_EXP) - 1)
/* exact buckets [0,128) + one group of 128 per exponent 7..39 */
#define HIST_BUCKETS (HIST_SUB_COUNT * (HIST_MAX_EXP - HIST_SUB_BITS + 1))

typedef struct {
    uint64_t counts[HIST_BUCKETS];
    uint64_t total;     /* number of recorded values */
    uint64_t min_ns;    /* exact smallest value recorded (UINT64_MAX when empty) */
    uint64_t max_ns;    /* exact largest value recorded (0 when empty) */
    /* Welford running mean and sum of squared deviations, merged with Chan's
     * formula: a naive sum of squares loses all precision for a tight
     * distribution around a large mean (20 ms +- 1 us). */
    double mean_ns;
    double m2_ns2;
} histogram;

/* Empties h. Must be called before first use. */
void hist_init(histogram *h);

/* Counts one value. O(1), never allocates, never fails. */
void hist_record(histogram *h, uint64_t value_ns);

/* Adds every count of src into dst (exact); min, max, mean, stdev combine. */
void hist_merge(histogram *dst, const histogram *src);

/* Bucket index of a value (values > HIST_MAX_NS map to the last bucket). */
size_t hist_bucket_index(uint64_t value_ns);

/* For the three bucket functions below, i < HIST_BUCKETS (larger indexes
 * are treated as the last bucket). */

/* Smallest value that falls in bucket i. */
uint64_t hist_bucket_low_ns(size_t i);

/* One past the largest value that falls in bucket i. */
uint64_t hist_bucket_high_ns(size_t i);

/* Value reported for bucket i: its midpoint. */
uint64_t hist_bucket_mid_ns(size_t i);

/* Nearest-rank percentile, pct in [0, 100]: the reported value of the bucket
 * holding the ceil(pct/100 * total)-th smallest value (rank at least 1),
 * clamped to [min_ns, max_ns]. pct <= 0 (or NaN) returns min_ns exactly and
 * pct >= 100 max_ns exactly. 0 when empty. */
uint64_t hist_percentile_ns(const histogram *h, double pct);

/* Arithmetic mean and population standard deviation in ns (0 when empty). */
double hist_mean_ns(const histogram *h);
double hist_stdev_ns(const histogram *h);

#endif
