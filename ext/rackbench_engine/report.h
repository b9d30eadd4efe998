/*
 * report.h - merges the workers' stats and writes the result document
 * (format described in doc/output.md) as JSON.
 */
#ifndef RB_REPORT_H
#define RB_REPORT_H

#include <stdio.h>
#include <sys/resource.h>

#include "config.h"
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
} run_result;

/* Utilisation (0..1 per engine thread) above which the summary warns that
 * the engine, not the server, may have been the bottleneck. */
#define SATURATION_UTILIZATION 0.90

void report_json(FILE *out, const run_result *r);

#endif
