/*
 * test_histogram.c - unit tests of the log-linear latency histogram.
 *
 * Sweeps over thousands of values count their failures and CHECK the count
 * once, printing the first offender, so the pass total stays readable and
 * a failure still names a value. Random data comes from a fixed-seed
 * xorshift64* generator: every run checks the same numbers.
 */
#include "check.h"
#include "histogram.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LAST_BUCKET ((size_t)HIST_BUCKETS - 1)
#define MAX_VALUES 200000

/* Histograms are 35 KB each: keep them off the stack. */
static histogram whole, part_a, part_b, parts[8];
static uint64_t values[MAX_VALUES];
static uint64_t sorted[MAX_VALUES];

/* --- helpers ------------------------------------------------------------ */

static uint64_t rng_state;

static void rng_seed(uint64_t seed) {
    rng_state = seed ? seed : 0x9E3779B97F4A7C15ull;
}

/* xorshift64* (Vigna): plenty for test data, and the same on every host. */
static uint64_t rng_next(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_unit(void) {
    return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [lo, hi]. The modulo bias is irrelevant here. */
static uint64_t rng_range(uint64_t lo, uint64_t hi) {
    return lo + rng_next() % (hi - lo + 1);
}

/* Log-uniform integer in [lo, hi): as many values per decade everywhere. */
static uint64_t rng_log_range(double lo, double hi) {
    return (uint64_t)exp(log(lo) + rng_unit() * (log(hi) - log(lo)));
}

static double rel_err(double got, double want) {
    if (want == 0.0) return fabs(got);
    return fabs(got - want) / fabs(want);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void record_all(histogram *h, const uint64_t *vals, size_t n) {
    hist_init(h);
    for (size_t i = 0; i < n; i++) hist_record(h, vals[i]);
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* Reference mean and population stdev, two passes in long double. */
static void two_pass(const uint64_t *vals, size_t n, double *mean_ns,
                     double *stdev_ns) {
    long double sum = 0;
    for (size_t i = 0; i < n; i++) sum += (long double)vals[i];
    long double mean = sum / (long double)n;
    long double sq = 0;
    for (size_t i = 0; i < n; i++) {
        long double d = (long double)vals[i] - mean;
        sq += d * d;
    }
    *mean_ns = (double)mean;
    *stdev_ns = (double)sqrtl(sq / (long double)n);
}

/* --- bucket layout ------------------------------------------------------ */

static void test_layout_constants(void) {
    CHECK_EQ_U64(HIST_BUCKETS, 4352); /* 128 exact + 33 groups of 128 */
    CHECK_EQ_U64(HIST_MAX_NS, 1099511627775ull);
    CHECK_EQ_U64(hist_bucket_low_ns(0), 0);
    CHECK_EQ_U64(hist_bucket_high_ns(LAST_BUCKET), HIST_MAX_NS + 1);
    CHECK_EQ_U64(hist_bucket_index(HIST_MAX_NS), LAST_BUCKET);
}

/* Worked by hand from the header's formula, so a self-consistent but
 * different scheme cannot pass the round-trip tests alone. */
static void test_known_buckets(void) {
    CHECK_EQ_U64(hist_bucket_index(127), 127);
    CHECK_EQ_U64(hist_bucket_index(128), 128);
    CHECK_EQ_U64(hist_bucket_index(255), 255);

    /* e = 8, shift = 1: width 2 starts at 256 */
    CHECK_EQ_U64(hist_bucket_index(256), 256);
    CHECK_EQ_U64(hist_bucket_index(257), 256);
    CHECK_EQ_U64(hist_bucket_index(258), 257);
    CHECK_EQ_U64(hist_bucket_low_ns(256), 256);
    CHECK_EQ_U64(hist_bucket_high_ns(256), 258);
    CHECK_EQ_U64(hist_bucket_mid_ns(256), 257);

    /* 1 us: e = 9, shift = 2, 3*128 + (250 - 128) = 506 */
    CHECK_EQ_U64(hist_bucket_index(1000), 506);
    CHECK_EQ_U64(hist_bucket_low_ns(506), 1000);
    CHECK_EQ_U64(hist_bucket_high_ns(506), 1004);
    CHECK_EQ_U64(hist_bucket_mid_ns(506), 1002);

    /* 1 ms: e = 19, shift = 12, 1e6 >> 12 = 244, 13*128 + 116 = 1780 */
    CHECK_EQ_U64(hist_bucket_index(1000000), 1780);
    CHECK_EQ_U64(hist_bucket_low_ns(1780), 999424);
    CHECK_EQ_U64(hist_bucket_high_ns(1780), 1003520);
    CHECK_EQ_U64(hist_bucket_mid_ns(1780), 1001472);

    /* 20 ms: e = 24, shift = 17, 2e7 >> 17 = 152, 18*128 + 24 = 2328 */
    CHECK_EQ_U64(hist_bucket_index(20000000), 2328);
    CHECK_EQ_U64(hist_bucket_low_ns(2328), 19922944);
    CHECK_EQ_U64(hist_bucket_high_ns(2328), 20054016);
    CHECK_EQ_U64(hist_bucket_mid_ns(2328), 19988480);

    /* 2^39: the last group, e = 39, shift = 32, 33*128 = 4224 */
    CHECK_EQ_U64(hist_bucket_index(UINT64_C(1) << 39), 4224);
    CHECK_EQ_U64(hist_bucket_low_ns(LAST_BUCKET), UINT64_C(255) << 32);
}

static void test_exact_below_128(void) {
    size_t bad = 0;
    for (uint64_t v = 0; v < 128; v++) {
        if (hist_bucket_index(v) != v || hist_bucket_low_ns(v) != v ||
            hist_bucket_high_ns(v) != v + 1 || hist_bucket_mid_ns(v) != v) {
            if (bad++ == 0) fprintf(stderr, "  not exact: %llu\n",
                                    (unsigned long long)v);
        }
    }
    CHECK_EQ_U64(bad, 0);
}

/* For every bucket: low maps to it, high - 1 maps to it, buckets tile the
 * range with no gap or overlap, widths are powers of two at most 1/128 of
 * low, and mid is the exact integer midpoint. */
static void test_round_trip_every_bucket(void) {
    size_t bad = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        uint64_t low = hist_bucket_low_ns(i);
        uint64_t high = hist_bucket_high_ns(i);
        uint64_t mid = hist_bucket_mid_ns(i);
        uint64_t width = high - low;
        int ok = low < high && hist_bucket_index(low) == i &&
                 hist_bucket_index(high - 1) == i &&
                 (width & (width - 1)) == 0 && mid == low + width / 2 &&
                 mid >= low && mid < high;
        if (i + 1 < HIST_BUCKETS) ok = ok && high == hist_bucket_low_ns(i + 1);
        if (i >= HIST_SUB_COUNT) ok = ok && width * HIST_SUB_COUNT <= low;
        if (!ok && bad++ == 0) {
            fprintf(stderr, "  bucket %zu: low %llu high %llu mid %llu\n", i,
                    (unsigned long long)low, (unsigned long long)high,
                    (unsigned long long)mid);
        }
    }
    CHECK_EQ_U64(bad, 0);
}

static void test_monotonic_index(void) {
    /* Consecutive values: the index steps by 0 or 1, never skips. */
    size_t bad = 0;
    size_t prev = hist_bucket_index(0);
    for (uint64_t v = 1; v <= (UINT64_C(1) << 20); v++) {
        size_t idx = hist_bucket_index(v);
        if ((idx != prev && idx != prev + 1) && bad++ == 0)
            fprintf(stderr, "  index jumps at %llu\n", (unsigned long long)v);
        prev = idx;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(prev, hist_bucket_index(UINT64_C(1) << 20));

    /* Geometric sweep to past the top: never decreasing. */
    bad = 0;
    prev = 0;
    for (double x = 1.0; x < 4.0e12; x *= 1.0007) {
        uint64_t v = (uint64_t)x;
        size_t idx = hist_bucket_index(v);
        if (idx < prev && bad++ == 0)
            fprintf(stderr, "  index decreases at %llu\n",
                    (unsigned long long)v);
        prev = idx;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(prev, LAST_BUCKET);

    /* Each power of two opens a new bucket. */
    bad = 0;
    for (unsigned e = 1; e < HIST_MAX_EXP; e++) {
        uint64_t p = UINT64_C(1) << e;
        if (hist_bucket_index(p) != hist_bucket_index(p - 1) + 1 && bad++ == 0)
            fprintf(stderr, "  no new bucket at 2^%u\n", e);
    }
    CHECK_EQ_U64(bad, 0);
}

/* Reporting mid for a value errs by at most half a bucket, and a bucket is
 * at most 1/128 of its lower bound wide: |mid - v| / v <= 1/256. */
static size_t mid_error_check(uint64_t v, double limit, double *worst) {
    double err = rel_err((double)hist_bucket_mid_ns(hist_bucket_index(v)),
                         (double)v);
    if (err > *worst) *worst = err;
    if (err > limit) {
        fprintf(stderr, "  mid error %.5f%% at %llu\n", err * 100,
                (unsigned long long)v);
        return 1;
    }
    return 0;
}

static void test_mid_relative_error(void) {
    const uint64_t lo = 1000, hi = 100000000000ull; /* 1 us .. 100 s */
    double worst = 0;
    size_t bad = 0, checked = 0;

    for (double x = (double)lo; x <= (double)hi; x *= 1.0007) {
        bad += mid_error_check((uint64_t)x, 0.005, &worst);
        checked++;
    }
    /* Bucket edges are where the error peaks: low and high - 1. */
    for (size_t i = hist_bucket_index(lo); i <= hist_bucket_index(hi); i++) {
        uint64_t low = hist_bucket_low_ns(i), last = hist_bucket_high_ns(i) - 1;
        if (low >= lo && low <= hi) bad += mid_error_check(low, 0.005, &worst);
        if (last >= lo && last <= hi)
            bad += mid_error_check(last, 0.005, &worst);
        checked += 2;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK(checked > 30000);
    CHECK(worst <= 1.0 / 256 + 1e-15);
    CHECK(worst > 0.003); /* the edges were really visited */

    /* The 1/256 bound holds for every value the histogram keeps. */
    bad = 0;
    worst = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        uint64_t low = hist_bucket_low_ns(i);
        if (low == 0) continue;
        bad += mid_error_check(low, 1.0 / 256 + 1e-15, &worst);
        bad += mid_error_check(hist_bucket_high_ns(i) - 1, 1.0 / 256 + 1e-15,
                               &worst);
    }
    CHECK_EQ_U64(bad, 0);
}

static void test_clamp_above_max(void) {
    CHECK_EQ_U64(hist_bucket_index(HIST_MAX_NS + 1), LAST_BUCKET);
    CHECK_EQ_U64(hist_bucket_index(UINT64_C(1) << 40), LAST_BUCKET);
    CHECK_EQ_U64(hist_bucket_index(UINT64_C(1) << 63), LAST_BUCKET);
    CHECK_EQ_U64(hist_bucket_index(UINT64_MAX), LAST_BUCKET);
    CHECK_EQ_U64(hist_bucket_index(HIST_MAX_NS), LAST_BUCKET);
    CHECK_EQ_U64(hist_bucket_index(hist_bucket_low_ns(LAST_BUCKET) - 1),
                 LAST_BUCKET - 1);

    /* Clamped values count in the last bucket; max_ns keeps the truth. */
    histogram *h = &whole;
    hist_init(h);
    hist_record(h, UINT64_MAX);
    CHECK_EQ_U64(h->counts[LAST_BUCKET], 1);
    CHECK_EQ_U64(h->max_ns, UINT64_MAX);
    CHECK_EQ_U64(hist_percentile_ns(h, 50), UINT64_MAX);
    CHECK_EQ_U64(hist_percentile_ns(h, 100), UINT64_MAX);

    /* Both far above the top: the bucket midpoint is below min, so the
     * answer is clamped up to min. */
    hist_init(h);
    hist_record(h, UINT64_C(1) << 45);
    hist_record(h, UINT64_C(1) << 50);
    CHECK_EQ_U64(h->counts[LAST_BUCKET], 2);
    CHECK_EQ_U64(hist_percentile_ns(h, 50), UINT64_C(1) << 45);
    CHECK_EQ_U64(hist_percentile_ns(h, 100), UINT64_C(1) << 50);
    CHECK(rel_err(hist_mean_ns(h), ((double)(UINT64_C(1) << 45) +
                                    (double)(UINT64_C(1) << 50)) / 2) < 1e-12);
}

/* --- recording ---------------------------------------------------------- */

static void test_empty(void) {
    histogram *h = &whole;
    memset(h, 0xA5, sizeof(*h)); /* init must not rely on zeroed memory */
    hist_init(h);
    size_t nonzero = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++) nonzero += h->counts[i] != 0;
    CHECK_EQ_U64(nonzero, 0);
    CHECK_EQ_U64(h->total, 0);
    CHECK_EQ_U64(h->min_ns, UINT64_MAX);
    CHECK_EQ_U64(h->max_ns, 0);
    CHECK_EQ_U64(hist_percentile_ns(h, 0), 0);
    CHECK_EQ_U64(hist_percentile_ns(h, 50), 0);
    CHECK_EQ_U64(hist_percentile_ns(h, 99.9), 0);
    CHECK_EQ_U64(hist_percentile_ns(h, 100), 0);
    CHECK(hist_mean_ns(h) == 0.0);
    CHECK(hist_stdev_ns(h) == 0.0);
}

static void test_record_counts(void) {
    static const uint64_t vals[] = {
        0,    1,    127,  128, 255,     256,      257,         1000,
        1003, 1004, 1000, 5,   1000000, 20000000, HIST_MAX_NS, UINT64_MAX};
    const size_t n = sizeof(vals) / sizeof(vals[0]);
    histogram *h = &whole;
    record_all(h, vals, n);

    CHECK_EQ_U64(h->total, n);
    CHECK_EQ_U64(h->min_ns, 0);
    CHECK_EQ_U64(h->max_ns, UINT64_MAX);
    CHECK_EQ_U64(h->counts[0], 1);
    CHECK_EQ_U64(h->counts[5], 1);
    CHECK_EQ_U64(h->counts[256], 2);  /* 256 and 257 */
    CHECK_EQ_U64(h->counts[506], 3);  /* 1000, 1000, 1003 */
    CHECK_EQ_U64(h->counts[507], 1);  /* 1004 opens the next bucket */
    CHECK_EQ_U64(h->counts[1780], 1);
    CHECK_EQ_U64(h->counts[LAST_BUCKET], 2);
    uint64_t sum = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++) sum += h->counts[i];
    CHECK_EQ_U64(sum, n);
}

static void test_single_value(void) {
    histogram *h = &whole;
    hist_init(h);
    hist_record(h, 12345);
    CHECK_EQ_U64(h->min_ns, 12345);
    CHECK_EQ_U64(h->max_ns, 12345);
    CHECK_EQ_U64(hist_percentile_ns(h, 0), 12345);
    CHECK_EQ_U64(hist_percentile_ns(h, 50), 12345); /* mid clamped to value */
    CHECK_EQ_U64(hist_percentile_ns(h, 99.99), 12345);
    CHECK_EQ_U64(hist_percentile_ns(h, 100), 12345);
    CHECK(hist_mean_ns(h) == 12345.0);
    CHECK(hist_stdev_ns(h) == 0.0);
}

/* --- percentiles -------------------------------------------------------- */

/* Percentiles in units of 1e-4 percent, so the test's own nearest rank is
 * integer arithmetic and independent of the code under test. */
static const uint64_t pct_e4_table[] = {
    0,      1,      10,     100,    1000,   5000,   10000,  100000,
    250000, 333333, 500000, 500001, 666667, 750000, 900000, 950000,
    990000, 999000, 999900, 999990, 1000000};

static uint64_t expected_percentile(const uint64_t *sorted_vals, size_t n,
                                    uint64_t pct_e4) {
    uint64_t rank = (pct_e4 * n + 999999) / 1000000; /* ceil */
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted_vals[rank - 1];
}

/* Compares every percentile of the table and every whole percent with the
 * brute-force answer from the sorted values: within 1%, in the same bucket
 * (a neighbouring bucket would be only 0.8% off), exactly the contract's
 * clamped midpoint, and p0/p100 exact. */
static void check_percentiles(const char *name, const uint64_t *vals,
                              size_t n) {
    histogram *h = &whole;
    record_all(h, vals, n);
    memcpy(sorted, vals, n * sizeof(vals[0]));
    qsort(sorted, n, sizeof(sorted[0]), cmp_u64);
    uint64_t min = sorted[0], max = sorted[n - 1];

    size_t bad = 0, checked = 0;
    const size_t table_len = sizeof(pct_e4_table) / sizeof(pct_e4_table[0]);
    for (size_t k = 0; k < table_len + 101; k++) {
        uint64_t pct_e4 =
            k < table_len ? pct_e4_table[k] : (k - table_len) * 10000;
        double pct = (double)pct_e4 / 10000.0;
        uint64_t want = expected_percentile(sorted, n, pct_e4);
        uint64_t got = hist_percentile_ns(h, pct);
        /* Clamping alone does not make p0/p100 exact (the midpoint can lie
         * strictly between min and max): they are answered from min/max. */
        uint64_t mid = hist_bucket_mid_ns(hist_bucket_index(want));
        uint64_t contract = pct_e4 == 0         ? min
                            : pct_e4 == 1000000 ? max
                                                : clamp_u64(mid, min, max);
        int ok = rel_err((double)got, (double)want) <= 0.01 &&
                 hist_bucket_index(got) == hist_bucket_index(want) &&
                 got == contract;
        if (!ok && bad++ == 0) {
            fprintf(stderr, "  %s: p%g = %llu, brute force %llu\n", name, pct,
                    (unsigned long long)got, (unsigned long long)want);
        }
        checked++;
    }
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(hist_percentile_ns(h, 0), min);
    CHECK_EQ_U64(hist_percentile_ns(h, 100), max);
    CHECK(checked == table_len + 101);
}

static void test_percentiles_random(void) {
    size_t n = 100000;

    rng_seed(1);
    for (size_t i = 0; i < n; i++) values[i] = rng_range(1000, 100000000);
    check_percentiles("uniform 1us..100ms", values, n);

    rng_seed(2);
    for (size_t i = 0; i < n; i++) values[i] = rng_log_range(1e3, 1e11);
    check_percentiles("log-uniform 1us..100s", values, n);

    rng_seed(3);
    for (size_t i = 0; i < n; i++) {
        values[i] = rng_next() % 10 == 0 ? rng_range(40000000, 60000000)
                                         : rng_range(150000, 250000);
    }
    check_percentiles("bimodal 200us/50ms", values, n);

    for (size_t i = 0; i < 1000; i++) values[i] = 777777;
    check_percentiles("all equal", values, 1000);

    rng_seed(4);
    for (size_t i = 0; i < MAX_VALUES; i++)
        values[i] = rng_log_range(1, 1e12); /* exact range up to the top */
    check_percentiles("log-uniform 1ns..1000s", values, MAX_VALUES);

    static const size_t small_n[] = {1, 2, 3, 7, 10, 101};
    for (size_t k = 0; k < sizeof(small_n) / sizeof(small_n[0]); k++) {
        rng_seed(100 + k);
        for (size_t i = 0; i < small_n[k]; i++)
            values[i] = rng_log_range(1e3, 1e9);
        check_percentiles("small n", values, small_n[k]);
    }
}

/* Below 256 every bucket is one value wide, so percentiles are exact. */
static void test_percentiles_exact_small_values(void) {
    size_t n = 0;
    for (uint64_t v = 0; v < 256; v++)
        for (uint64_t c = 0; c < v % 7 + 1; c++) values[n++] = v;
    histogram *h = &whole;
    record_all(h, values, n);
    size_t bad = 0;
    for (uint64_t pct_e4 = 0; pct_e4 <= 1000000; pct_e4 += 2500) {
        double pct = (double)pct_e4 / 10000.0;
        uint64_t want = expected_percentile(values, n, pct_e4); /* sorted */
        if (hist_percentile_ns(h, pct) != want && bad++ == 0)
            fprintf(stderr, "  exact p%g wrong\n", pct);
    }
    CHECK_EQ_U64(bad, 0);
}

/* 1000 values 2% apart, so each sits alone in its bucket and a rank off by
 * one lands in another bucket: this is what catches floating-point ranks. */
static void test_percentile_rank_rounding(void) {
    const size_t n = 1000;
    double x = 1000.0;
    for (size_t i = 0; i < n; i++, x *= 1.02) values[i] = (uint64_t)x;
    histogram *h = &whole;
    record_all(h, values, n);

    size_t distinct = 1;
    for (size_t i = 1; i < n; i++)
        distinct +=
            hist_bucket_index(values[i]) != hist_bucket_index(values[i - 1]);
    CHECK_EQ_U64(distinct, n);

#define RANK_IS(pct, rank) \
    CHECK_EQ_U64(hist_bucket_index(hist_percentile_ns(h, (pct))), \
                 hist_bucket_index(values[(rank) - 1]))

    RANK_IS(99.9, 999); /* 99.9 * 1000 / 100 is 999.0000000000001 */
    RANK_IS(99.99, 1000);
    RANK_IS(50.0, 500);
    RANK_IS(50.0 + 1e-9, 501); /* a real fraction, however small, rounds up */
    RANK_IS(0.1, 1);
    RANK_IS(0.1001, 2);
    RANK_IS(1e-9, 1);
    RANK_IS(33.3, 333);
    RANK_IS(66.7, 667);
#undef RANK_IS

    /* Every k/1000 spelled two ways: k / 10.0 and k * 0.1 round differently
     * (3 * 0.1 is 0.30000000000000004), and both must give rank k. */
    size_t bad = 0;
    for (size_t k = 1; k < n; k++) {
        size_t want = hist_bucket_index(values[k - 1]);
        size_t by_div = hist_bucket_index(hist_percentile_ns(h, k / 10.0));
        size_t by_mul = hist_bucket_index(hist_percentile_ns(h, k * 0.1));
        if (by_div != want || by_mul != want) {
            if (bad++ == 0) fprintf(stderr, "  rank %zu of 1000 wrong\n", k);
        }
    }
    CHECK_EQ_U64(bad, 0);

    /* Thirds of 3 values. */
    hist_init(h);
    hist_record(h, 1000);
    hist_record(h, 1000000);
    hist_record(h, 1000000000);
    uint64_t mid_1us = hist_bucket_mid_ns(hist_bucket_index(1000));
    uint64_t mid_1ms = hist_bucket_mid_ns(hist_bucket_index(1000000));
    CHECK_EQ_U64(mid_1us, 1002);
    CHECK_EQ_U64(hist_percentile_ns(h, 100.0 / 3), mid_1us);
    CHECK_EQ_U64(hist_percentile_ns(h, 100.0 / 3 * 2), mid_1ms);
    CHECK_EQ_U64(hist_percentile_ns(h, 34), mid_1ms);
    CHECK_EQ_U64(hist_percentile_ns(h, 67), 1000000000);
}

static void test_percentile_out_of_range(void) {
    histogram *h = &whole;
    hist_init(h);
    hist_record(h, 5000);
    hist_record(h, 7000);
    hist_record(h, 9000);
    CHECK_EQ_U64(hist_percentile_ns(h, -5), 5000);
    CHECK_EQ_U64(hist_percentile_ns(h, 0), 5000);
    CHECK_EQ_U64(hist_percentile_ns(h, 150), 9000);
    CHECK_EQ_U64(hist_percentile_ns(h, 100), 9000);
    /* A bucket midpoint is below 9000 here: p100 must not report it. */
    CHECK(hist_bucket_mid_ns(hist_bucket_index(9000)) != 9000);
}

/* --- mean and standard deviation ---------------------------------------- */

static void check_moments(const char *name, const uint64_t *vals, size_t n) {
    histogram *h = &whole;
    record_all(h, vals, n);
    double mean, stdev;
    two_pass(vals, n, &mean, &stdev);
    double mean_err = rel_err(hist_mean_ns(h), mean);
    double stdev_err = rel_err(hist_stdev_ns(h), stdev);
    if (mean_err > 1e-9 || stdev_err > 1e-9) {
        fprintf(stderr, "  %s: mean %.6f vs %.6f, stdev %.6f vs %.6f\n", name,
                hist_mean_ns(h), mean, hist_stdev_ns(h), stdev);
    }
    CHECK(mean_err <= 1e-9);
    CHECK(stdev_err <= 1e-9);
}

static void test_mean_stdev(void) {
    /* The textbook set: mean 5, population stdev 2. */
    static const uint64_t textbook[] = {2, 4, 4, 4, 5, 5, 7, 9};
    record_all(&whole, textbook, 8);
    CHECK(fabs(hist_mean_ns(&whole) - 5.0) < 1e-12);
    CHECK(fabs(hist_stdev_ns(&whole) - 2.0) < 1e-12);

    size_t n = 100000;
    rng_seed(10);
    for (size_t i = 0; i < n; i++) values[i] = rng_range(1000, 100000000);
    check_moments("uniform", values, n);

    rng_seed(11);
    for (size_t i = 0; i < n; i++) values[i] = rng_log_range(1e3, 1e11);
    check_moments("log-uniform", values, n);

    /* 20 ms +- 1 us: sum of squares is ~8e19 against a variance of ~3e5,
     * which E[x^2] - mean^2 in doubles cannot resolve. */
    rng_seed(12);
    for (size_t i = 0; i < MAX_VALUES; i++)
        values[i] = rng_range(20000000 - 1000, 20000000 + 1000);
    check_moments("tight 20ms +- 1us", values, MAX_VALUES);
    CHECK(hist_stdev_ns(&whole) > 500 && hist_stdev_ns(&whole) < 650);

    for (size_t i = 0; i < n; i++) values[i] = 20000000;
    record_all(&whole, values, n);
    CHECK(hist_mean_ns(&whole) == 20000000.0);
    CHECK(hist_stdev_ns(&whole) == 0.0);
}

/* --- merging ------------------------------------------------------------ */

/* dst must equal the histogram of all the values: counts, total, min and
 * max exactly, mean and stdev within 1e-9, percentiles identical. */
static void check_same(const char *name, const histogram *got,
                       const histogram *want) {
    size_t diff = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        diff += got->counts[i] != want->counts[i];
    int ok = diff == 0 && got->total == want->total &&
             got->min_ns == want->min_ns && got->max_ns == want->max_ns &&
             rel_err(hist_mean_ns(got), hist_mean_ns(want)) <= 1e-9 &&
             rel_err(hist_stdev_ns(got), hist_stdev_ns(want)) <= 1e-9 &&
             hist_percentile_ns(got, 50) == hist_percentile_ns(want, 50) &&
             hist_percentile_ns(got, 99.9) == hist_percentile_ns(want, 99.9);
    if (!ok) {
        fprintf(stderr,
                "  %s: %zu buckets differ, total %llu/%llu, mean %.9g/%.9g, "
                "stdev %.9g/%.9g\n",
                name, diff, (unsigned long long)got->total,
                (unsigned long long)want->total, hist_mean_ns(got),
                hist_mean_ns(want), hist_stdev_ns(got), hist_stdev_ns(want));
    }
    CHECK(ok);
}

static void check_split_merge(const char *name, const uint64_t *vals, size_t n,
                              size_t split) {
    record_all(&whole, vals, n);
    record_all(&part_a, vals, split);
    record_all(&part_b, vals + split, n - split);
    hist_merge(&part_a, &part_b);
    check_same(name, &part_a, &whole);
}

static void test_merge(void) {
    size_t n = 100000;
    rng_seed(20);
    for (size_t i = 0; i < n; i++) values[i] = rng_log_range(1e3, 1e11);
    check_split_merge("halves", values, n, n / 2);
    check_split_merge("1 + rest", values, n, 1);
    check_split_merge("rest + 1", values, n, n - 1);

    /* Halves with far-apart means: the delta^2 term of Chan's formula
     * carries almost all of the variance. */
    for (size_t i = 0; i < n; i++) values[i] = i < n / 2 ? 1000 : 1000000000;
    check_split_merge("far-apart halves", values, n, n / 2);
    double mean, stdev;
    two_pass(values, n, &mean, &stdev);
    CHECK(rel_err(hist_stdev_ns(&part_a), stdev) <= 1e-9);

    /* Tight around 20 ms, as eight threads would record it, merged in
     * sequence. */
    rng_seed(21);
    for (size_t i = 0; i < n; i++) values[i] = rng_range(19999000, 20001000);
    record_all(&whole, values, n);
    for (size_t t = 0; t < 8; t++) hist_init(&parts[t]);
    for (size_t i = 0; i < n; i++) hist_record(&parts[i % 8], values[i]);
    hist_init(&part_a);
    for (size_t t = 0; t < 8; t++) hist_merge(&part_a, &parts[t]);
    check_same("8 threads", &part_a, &whole);
    two_pass(values, n, &mean, &stdev);
    CHECK(rel_err(hist_mean_ns(&part_a), mean) <= 1e-9);
    CHECK(rel_err(hist_stdev_ns(&part_a), stdev) <= 1e-9);
}

static void test_merge_empty(void) {
    rng_seed(30);
    for (size_t i = 0; i < 1000; i++) values[i] = rng_log_range(1e3, 1e9);
    record_all(&whole, values, 1000);

    /* Into an empty histogram: an exact copy. */
    hist_init(&part_a);
    hist_merge(&part_a, &whole);
    CHECK(memcmp(&part_a, &whole, sizeof(whole)) == 0);

    /* From an empty histogram: nothing changes. */
    hist_init(&part_b);
    hist_merge(&part_a, &part_b);
    CHECK(memcmp(&part_a, &whole, sizeof(whole)) == 0);

    /* Empty into empty: still empty. */
    hist_init(&part_a);
    hist_merge(&part_a, &part_b);
    CHECK_EQ_U64(part_a.total, 0);
    CHECK_EQ_U64(part_a.min_ns, UINT64_MAX);
    CHECK_EQ_U64(part_a.max_ns, 0);
    CHECK_EQ_U64(hist_percentile_ns(&part_a, 50), 0);
    CHECK(hist_mean_ns(&part_a) == 0.0 && hist_stdev_ns(&part_a) == 0.0);

    /* A histogram merged into itself doubles its counts. */
    part_a = whole;
    hist_merge(&part_a, &part_a);
    size_t bad = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        bad += part_a.counts[i] != 2 * whole.counts[i];
    CHECK_EQ_U64(bad, 0);
    CHECK_EQ_U64(part_a.total, 2000);
    CHECK_EQ_U64(part_a.min_ns, whole.min_ns);
    CHECK_EQ_U64(part_a.max_ns, whole.max_ns);
    CHECK(rel_err(hist_mean_ns(&part_a), hist_mean_ns(&whole)) <= 1e-12);
    CHECK(rel_err(hist_stdev_ns(&part_a), hist_stdev_ns(&whole)) <= 1e-12);
}

int main(void) {
    test_layout_constants();
    test_known_buckets();
    test_exact_below_128();
    test_round_trip_every_bucket();
    test_monotonic_index();
    test_mid_relative_error();
    test_clamp_above_max();
    test_empty();
    test_record_counts();
    test_single_value();
    test_percentiles_random();
    test_percentiles_exact_small_values();
    test_percentile_rank_rounding();
    test_percentile_out_of_range();
    test_mean_stdev();
    test_merge();
    test_merge_empty();
    return check_report("histogram");
}
