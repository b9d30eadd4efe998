/*
 * report.h - merges the workers' stats and writes the result document
 * (format described in doc/output.md) as JSON.
 */
#ifndef RB_REPORT_H
#define RB_REPORT_H

#include <stdio.h>
#include <sys/resource.h>

#include "config.h"
#include "json_writer.h"
#include "nofile.h"
#include "requests.h"
#include "worker.h"

typedef struct {
    const engine_config *cfg;
    const request_set *requests;
    const run_clock *clock;
    worker *workers;
    int worker_count;
    uint64_t warmup_actual_ns;   /* warmup as it ran (shorter if interrupted) */
    uint64_t warmup_end_ns;      /* --count: when every thread was quiet (0: timed) */
    uint64_t measured_ns;        /* measured window as it ran */
    struct rusage cpu_start;     /* at the start of the measured window */
    struct rusage cpu_end;       /* after the last worker finished */
    uint64_t cpu_wall_ns;        /* wall time between those two */
    int interrupted;
    /* A run with a setup before its clock (WebSocket): when it began and
     * ended, and the engine's CPU over it. */
    uint64_t setup_start_ns, setup_end_ns;
    struct rusage setup_cpu_start, setup_cpu_end;
    uint64_t started_ns;         /* the engine's start (monotonic) */
    int64_t realtime_offset_ns;  /* CLOCK_REALTIME minus CLOCK_MONOTONIC at the start */
    nofile_limits nofile;        /* the open-file limit the run checked */
} run_result;

/* Utilisation (0..1 per engine thread) above which the summary warns that
 * the engine, not the server, may have been the bottleneck. */
#define SATURATION_UTILIZATION 0.90

void report_json(FILE *out, const run_result *r);

/* The pieces every result document writes the same way (ws_report.c's
 * too): a latency object in microseconds under key, a histogram's
 * buckets under key, a phase's per-second timeline merged over the
 * threads (its completions under count_key), and the process's peak
 * resident memory. */
void report_write_latency(json_writer *j, const char *key, const histogram *h);
void report_write_histogram(json_writer *j, const char *key, const histogram *h);
void report_write_timeline(json_writer *j, const run_result *r, phase_id phase, const char *count_key);
uint64_t report_peak_rss_bytes(const struct rusage *usage);

/* settings.tls (null but for https:// and wss://) and settings.cpus. */
void report_write_settings_tls(json_writer *j, const engine_config *cfg);
void report_write_cpus(json_writer *j, const engine_config *cfg);

/* "cpu": the engine's CPU over the window and its drain, and per_key: the
 * CPU microseconds per one of count (0 when count is 0, or null with
 * null_when_none). */
void report_write_cpu(json_writer *j, const run_result *r, const char *per_key, uint64_t count, int null_when_none);

#endif
