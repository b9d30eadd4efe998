/*
 * phase_stats.h - what one engine thread counts in one phase (warmup or the
 * measured window): latency histogram, status codes, errors by kind, bytes,
 * open-loop lateness, and a per-second timeline.
 *
 * A request belongs to the phase in which it was started (its scheduled
 * time in open loop), so the warmup never leaks into the measurement. Its
 * timeline second is counted from the phase start to its completion time.
 *
 * The timeline keeps exact per-second percentiles at bounded cost: the
 * current second is a dense histogram; when a completion falls in a later
 * second, the dense one is compacted into (bucket, count) pairs appended to
 * a growing array and cleared. Latencies within a second cluster in a few
 * hundred buckets, so a second costs a few KB instead of 34 KB.
 */
#ifndef RB_PHASE_STATS_H
#define RB_PHASE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"

typedef enum { PHASE_WARMUP = 0, PHASE_MEASURE = 1, PHASE_COUNT = 2 } phase_id;

/* ERR_CAPTURE: a request list's @capture found nothing in a response, or a
 * request needed a variable no capture had set (not sent); ERR_REDIRECT:
 * an @follow entry got a redirect it cannot follow (doc/requests.md). */
/* HTTP/2 (h2c) only: ERR_STREAM_RESET, the server reset the stream
 * (RST_STREAM); ERR_GOAWAY, the stream was refused by the server's GOAWAY
 * (above its last stream id); ERR_NOT_H2C, the server does not speak HTTP/2
 * with prior knowledge (it answered the preface with HTTP/1.x, or sent
 * no SETTINGS first); ERR_H2_PROTOCOL, any other HTTP/2 connection error. */
/* ERR_EXPECT: a response that does not meet its entry's @expect (a
 * status, or a text its body must contain; doc/requests.md). */
/* https:// only: ERR_TLS, the TLS handshake failed (the certificate did not
 * check out, ALPN refused h2, the peer is not TLS, an alert) or a record
 * could not be read; the "tls" object of the result says which. */
typedef enum {
    ERR_CONNECT = 0, ERR_READ, ERR_WRITE, ERR_TIMEOUT, ERR_PARSE, ERR_CAPTURE, ERR_REDIRECT,
    ERR_STREAM_RESET, ERR_GOAWAY, ERR_NOT_H2C, ERR_H2_PROTOCOL, ERR_EXPECT, ERR_TLS, ERR_KINDS
} error_kind;

extern const char *const error_kind_names[ERR_KINDS];

#define STATUS_CODES 1000
/* A request sent this much or more after its scheduled time is "late". */
#define LATE_THRESHOLD_NS (1000 * 1000)

typedef struct {
    uint32_t bucket;
    uint32_t count;
} sparse_count;

typedef struct {
    uint64_t second;        /* seconds since the phase start */
    uint64_t requests;      /* responses completed in that second */
    uint64_t errors;
    uint64_t bytes;
    size_t first_entry;     /* into phase_stats.entries */
    size_t entry_count;
} timeline_bin;

typedef struct {
    uint64_t start_ns;      /* phase start (absolute, monotonic) */
    histogram latency;
    histogram lateness;     /* open loop only: actual send - scheduled send */
    uint64_t late_requests; /* lateness >= LATE_THRESHOLD_NS */
    /* Open loop, measured window only, counted once when the thread stops
     * sending: the requests the schedule put in the window (as it ran),
     * and those of them never sent (no free connection by its end). */
    uint64_t scheduled;
    uint64_t unsent;
    uint64_t requests;      /* complete responses (any status) */
    uint64_t bytes;         /* bytes received, headers and body */
    uint64_t body_bytes;    /* response body bytes of complete responses */
    uint64_t errors[ERR_KINDS];
    uint64_t status[STATUS_CODES];

    /* timeline */
    histogram *bin_hist;    /* dense counts of the open second (counts only) */
    int bin_open;
    timeline_bin current;
    uint64_t bin_end_ns;    /* absolute end of the open second */
    timeline_bin *bins;
    size_t bin_count, bin_cap;
    sparse_count *entries;
    size_t entry_count, entry_cap;
} phase_stats;

/* Initialises ps for a phase starting at start_ns. Allocates the dense
 * second histogram; exits the process on out-of-memory (before the run). */
void phase_stats_init(phase_stats *ps, uint64_t start_ns);
void phase_stats_free(phase_stats *ps);

/* A complete response at now_ns. */
void phase_stats_response(phase_stats *ps, uint64_t now_ns, uint64_t latency_ns, int status, uint64_t bytes);

/* The body bytes of a complete response (counted with
 * phase_stats_response): the figure of a download, MB/s. */
static inline void phase_stats_body(phase_stats *ps, uint64_t body_bytes) { ps->body_bytes += body_bytes; }

/* A failed request at now_ns. bytes: any bytes received before it failed. */
void phase_stats_error(phase_stats *ps, uint64_t now_ns, error_kind kind, uint64_t bytes);

/* Open loop: how late a request went out. */
void phase_stats_lateness(phase_stats *ps, uint64_t late_ns);

/* Open loop: the phase's schedule as it ended: scheduled requests were
 * due in it, unsent of them never went out. */
void phase_stats_schedule(phase_stats *ps, uint64_t scheduled, uint64_t unsent);

/* Closes the open second (call once the phase's thread is done). */
void phase_stats_flush(phase_stats *ps);

/* Adds src's totals (histograms and counters, not the timeline) into dst. */
void phase_stats_merge_totals(phase_stats *dst, const phase_stats *src);

/* One second of the merged timeline. */
typedef struct {
    uint64_t second, requests, errors, bytes;
    uint64_t p50_ns, p99_ns;
} timeline_point;

/* Merges the timelines of n threads' stats for the same phase into points
 * (one per second from 0 to the last second with activity, empty seconds
 * included). Returns the number of points; *out is malloc'd (caller frees). */
size_t phase_stats_merge_timeline(phase_stats *const *stats, size_t n, timeline_point **out);

#endif
