/*
 * histogram.c - log-linear latency histogram, see histogram.h.
 *
 * Bucket layout (HIST_SUB_BITS = 7, so 128 sub-buckets per power of two):
 *
 *   value_ns             index                        width
 *   [0, 128)             value_ns                     1
 *   [2^e, 2^(e+1))       (e - 6) * 128 + sub          2^(e - 7)
 *     for e in 7..39     sub = (value_ns >> (e - 7)) - 128, in [0, 128)
 *
 * The first group [128, 256) has width 1 too, so it continues the exact
 * range without a seam: index == value_ns for every value below 256.
 */
#include "histogram.h"

#include <math.h>
#include <string.h>

#define HIST_LAST_BUCKET ((size_t)HIST_BUCKETS - 1)

void hist_init(histogram *h) {
    memset(h->counts, 0, sizeof(h->counts));
    h->total = 0;
    h->min_ns = UINT64_MAX;
    h->max_ns = 0;
    h->mean_ns = 0.0;
    h->m2_ns2 = 0.0;
}

/*
 * Branch-free: OR-ing in bit 7 makes the exponent at least 7, so values
 * below 128 get shift 0 and index == value_ns with no special case, and
 * __builtin_clzll never sees 0. For v >= 128 the bit is already below the
 * leading one and changes nothing. With shift = e - 7 the header's
 * (shift + 1) * 128 + ((v >> shift) - 128) simplifies to
 * shift * 128 + (v >> shift). The clamp compiles to a conditional move.
 */
size_t hist_bucket_index(uint64_t value_ns) {
    uint64_t v = value_ns > HIST_MAX_NS ? HIST_MAX_NS : value_ns;
    unsigned exp = 63u - (unsigned)__builtin_clzll(v | HIST_SUB_COUNT);
    unsigned shift = exp - HIST_SUB_BITS;
    return ((size_t)shift << HIST_SUB_BITS) + (size_t)(v >> shift);
}

/* Out-of-range indexes are read as the last bucket: a bad caller then gets
 * a wrong number rather than a shift by 64 or more (undefined behaviour). */
static size_t bucket_clamp(size_t i) {
    return i > HIST_LAST_BUCKET ? HIST_LAST_BUCKET : i;
}

/* log2 of the width of bucket i (0 for the exact buckets and group 1). */
static unsigned bucket_shift(size_t i) {
    size_t group = i >> HIST_SUB_BITS;
    return group == 0 ? 0 : (unsigned)(group - 1);
}

uint64_t hist_bucket_low_ns(size_t i) {
    i = bucket_clamp(i);
    if (i < HIST_SUB_COUNT) return i;
    uint64_t sub = i & (HIST_SUB_COUNT - 1);
    return (HIST_SUB_COUNT + sub) << bucket_shift(i);
}

uint64_t hist_bucket_high_ns(size_t i) {
    i = bucket_clamp(i);
    return hist_bucket_low_ns(i) + (UINT64_C(1) << bucket_shift(i));
}

/* Widths are powers of two, so the midpoint is exact: low + width / 2, and
 * low itself for the width-1 buckets. */
uint64_t hist_bucket_mid_ns(size_t i) {
    i = bucket_clamp(i);
    return hist_bucket_low_ns(i) + ((UINT64_C(1) << bucket_shift(i)) >> 1);
}

/*
 * Hot path (one call per response). Welford's update keeps mean_ns and
 * m2_ns2 accurate for any spread; the division is the costliest part and
 * is still a few ns. min/max compile to conditional moves.
 */
void hist_record(histogram *h, uint64_t value_ns) {
    h->counts[hist_bucket_index(value_ns)]++;
    h->total++;
    h->min_ns = value_ns < h->min_ns ? value_ns : h->min_ns;
    h->max_ns = value_ns > h->max_ns ? value_ns : h->max_ns;

    double x = (double)value_ns;
    double delta = x - h->mean_ns;
    h->mean_ns += delta / (double)h->total;
    h->m2_ns2 += delta * (x - h->mean_ns);
}

/*
 * Chan, Golub and LeVeque's pairwise combination:
 *   mean = mean_a + delta * n_b / n
 *   m2   = m2_a + m2_b + delta^2 * n_a * n_b / n,  delta = mean_b - mean_a
 * Every input is read before dst changes, so hist_merge(h, h) works too.
 * An empty side is special-cased so merging into a fresh histogram copies
 * the statistics bit for bit.
 */
void hist_merge(histogram *dst, const histogram *src) {
    uint64_t n_a = dst->total;
    uint64_t n_b = src->total;
    if (n_b == 0) return;

    double mean_a = dst->mean_ns, m2_a = dst->m2_ns2;
    double mean_b = src->mean_ns, m2_b = src->m2_ns2;

    for (size_t i = 0; i < HIST_BUCKETS; i++) dst->counts[i] += src->counts[i];
    dst->total = n_a + n_b;
    if (src->min_ns < dst->min_ns) dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns) dst->max_ns = src->max_ns;

    if (n_a == 0) {
        dst->mean_ns = mean_b;
        dst->m2_ns2 = m2_b;
        return;
    }
    double n = (double)(n_a + n_b);
    double delta = mean_b - mean_a;
    dst->mean_ns = mean_a + delta * ((double)n_b / n);
    dst->m2_ns2 = m2_a + m2_b + delta * delta * ((double)n_a * (double)n_b / n);
}

/*
 * Nearest rank: rank = ceil(pct / 100 * total). The product is inexact in
 * binary (99.9 is stored as 99.900000000000006, and 3 * 0.1 is
 * 0.30000000000000004), which would push an exact integer rank such as
 * 999 of 1000 up to 1000. Shrinking it by a relative 1e-12 first absorbs
 * that rounding (a few ulps, about 1e-16 relative). The price: a pct
 * within 1e-12 relative above a rank boundary counts as on it, which no
 * caller can mean.
 */
static uint64_t percentile_rank(uint64_t total, double pct) {
    double exact = pct / 100.0 * (double)total;
    double rank = ceil(exact - exact * 1e-12);
    if (rank < 1.0) return 1;
    if (rank >= (double)total) return total;
    return (uint64_t)rank;
}

uint64_t hist_percentile_ns(const histogram *h, double pct) {
    if (h->total == 0) return 0;
    if (!(pct > 0.0)) return h->min_ns; /* also NaN: never a rank from it */
    if (pct >= 100.0) return h->max_ns;

    uint64_t rank = percentile_rank(h->total, pct);
    uint64_t seen = 0;
    size_t i = 0;
    for (; i < HIST_LAST_BUCKET; i++) {
        seen += h->counts[i];
        if (seen >= rank) break;
    }
    /* The bucket holds the rank-th value, and so do min and max when they
     * are in it: clamping keeps the answer inside that bucket. */
    uint64_t value_ns = hist_bucket_mid_ns(i);
    if (value_ns < h->min_ns) value_ns = h->min_ns;
    if (value_ns > h->max_ns) value_ns = h->max_ns;
    return value_ns;
}

double hist_mean_ns(const histogram *h) {
    return h->total == 0 ? 0.0 : h->mean_ns;
}

/* Population standard deviation. m2 can end a rounding error below zero
 * when every value is equal; that is reported as 0, not NaN. */
double hist_stdev_ns(const histogram *h) {
    if (h->total == 0 || !(h->m2_ns2 > 0.0)) return 0.0;
    return sqrt(h->m2_ns2 / (double)h->total);
}
