/* report.c - see report.h and doc/output.md. */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "h2_client.h"
#include "json_writer.h"

static double seconds(uint64_t ns) { return (double)ns / 1e9; }
static double tv_seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }
static double per_second(uint64_t count, uint64_t ns) { return ns ? (double)count / seconds(ns) : 0.0; }

void report_write_latency(json_writer *j, const char *key, const histogram *h) {
    json_key(j, key);
    json_object_begin(j);
    int empty = h->total == 0;
    json_kv_double(j, "min", empty ? 0 : (double)h->min_ns / 1e3, 3);
    json_kv_double(j, "mean", hist_mean_ns(h) / 1e3, 3);
    json_kv_double(j, "stdev", hist_stdev_ns(h) / 1e3, 3);
    json_kv_double(j, "max", (double)h->max_ns / 1e3, 3);
    json_kv_double(j, "p50", (double)hist_percentile_ns(h, 50.0) / 1e3, 3);
    json_kv_double(j, "p90", (double)hist_percentile_ns(h, 90.0) / 1e3, 3);
    json_kv_double(j, "p99", (double)hist_percentile_ns(h, 99.0) / 1e3, 3);
    json_kv_double(j, "p99_9", (double)hist_percentile_ns(h, 99.9) / 1e3, 3);
    json_object_end(j);
}

static void write_counts(json_writer *j, const uint64_t *status, const uint64_t *errors);

/* "entries": per request-list entry, in file order (null for one URL). */
static void write_entries(json_writer *j, const run_result *r) {
    json_key(j, "entries");
    const request_set *set = r->requests;
    if (!set->from_file) {
        json_null(j);
        return;
    }
    entry_stats *merged[PHASE_COUNT];
    for (int p = 0; p < PHASE_COUNT; p++) {
        merged[p] = entry_stats_new(set->count, p == PHASE_MEASURE);
        for (int i = 0; i < r->worker_count; i++)
            for (size_t e = 0; e < set->count; e++) entry_stats_merge(&merged[p][e], &r->workers[i].entries[p][e]);
    }
    /* Items are sorted "first" entries first; the file order is index. */
    const request_template **by_index = calloc(set->count, sizeof(*by_index));
    if (!by_index) { perror("rackbench-engine: out of memory"); exit(1); }
    for (size_t i = 0; i < set->count; i++) by_index[set->items[i].index] = &set->items[i];
    json_array_begin(j);
    for (size_t e = 0; e < set->count; e++) {
        const request_template *t = by_index[e];
        if (t->probe) continue; /* reported under "probes" */
        const entry_stats *m = &merged[PHASE_MEASURE][e], *wu = &merged[PHASE_WARMUP][e];
        json_object_begin(j);
        json_kv_u64(j, "index", e);
        json_kv_string(j, "name", t->name);
        json_kv_bool(j, "first", t->first);
        json_kv_u64(j, "weight", t->weight);
        json_kv_u64(j, "requests", m->requests);
        json_kv_u64(j, "hops", m->hops);
        write_counts(j, m->status, m->errors);
        report_write_latency(j, "latency_us", m->latency);
        report_write_histogram(j, "histogram", m->latency);
        json_key(j, "warmup");
        json_object_begin(j);
        json_kv_u64(j, "requests", wu->requests);
        json_kv_u64(j, "hops", wu->hops);
        write_counts(j, wu->status, wu->errors);
        json_object_end(j);
        json_object_end(j);
    }
    json_array_end(j);
    free(by_index);
    for (int p = 0; p < PHASE_COUNT; p++) entry_stats_free(merged[p], set->count);
}

void report_write_histogram(json_writer *j, const char *key, const histogram *h) {
    json_key(j, key);
    json_object_begin(j);
    json_kv_string(j, "scheme", "log-linear");
    json_kv_string(j, "unit", "ns");
    json_kv_u64(j, "sub_bucket_bits", HIST_SUB_BITS);
    json_kv_u64(j, "total", h->total);
    json_kv_u64(j, "min_ns", h->total ? h->min_ns : 0);
    json_kv_u64(j, "max_ns", h->max_ns);
    json_kv_double(j, "mean_ns", h->mean_ns, 3);
    json_kv_double(j, "m2_ns2", h->m2_ns2, 3);
    json_key(j, "buckets");
    json_array_begin(j);
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        if (!h->counts[i]) continue;
        json_array_begin(j);
        json_u64(j, hist_bucket_low_ns(i));
        json_u64(j, hist_bucket_high_ns(i));
        json_u64(j, h->counts[i]);
        json_array_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

static void write_counts(json_writer *j, const uint64_t *status, const uint64_t *errors) {
    json_key(j, "status");
    json_object_begin(j);
    for (int s = 0; s < STATUS_CODES; s++) {
        if (!status[s]) continue;
        char code[16];
        snprintf(code, sizeof(code), "%d", s);
        json_kv_u64(j, code, status[s]);
    }
    json_object_end(j);
    json_key(j, "errors");
    json_object_begin(j);
    for (int k = 0; k < ERR_KINDS; k++) json_kv_u64(j, error_kind_names[k], errors[k]);
    json_object_end(j);
}

static void write_status_and_errors(json_writer *j, const phase_stats *ps) { write_counts(j, ps->status, ps->errors); }

void report_write_timeline(json_writer *j, const run_result *r, phase_id phase, const char *count_key) {
    phase_stats **list = calloc((size_t)r->worker_count, sizeof(*list));
    if (!list) { perror("rackbench-engine: out of memory"); exit(1); }
    for (int i = 0; i < r->worker_count; i++) list[i] = &r->workers[i].phases[phase];
    timeline_point *points = NULL;
    size_t count = phase_stats_merge_timeline(list, (size_t)r->worker_count, &points);
    json_key(j, "timeline");
    json_array_begin(j);
    for (size_t s = 0; s < count; s++) {
        json_object_begin(j);
        json_kv_u64(j, "second", points[s].second);
        json_kv_u64(j, count_key, points[s].requests);
        json_kv_u64(j, "errors", points[s].errors);
        json_kv_u64(j, "bytes", points[s].bytes);
        json_kv_double(j, "p50_us", (double)points[s].p50_ns / 1e3, 3);
        json_kv_double(j, "p99_us", (double)points[s].p99_ns / 1e3, 3);
        json_object_end(j);
    }
    json_array_end(j);
    free(points);
    free(list);
}

void report_write_settings_tls(json_writer *j, const engine_config *cfg) {
    json_key(j, "tls");
    if (cfg->tls) {
        json_object_begin(j);
        json_kv_bool(j, "verify", cfg->tls_verify);
        json_kv_string(j, "ca_file", cfg->ca_file);
        json_kv_bool(j, "resume", cfg->tls_resume);
        json_object_end(j);
    } else {
        json_null(j);
    }
}

void report_write_cpus(json_writer *j, const engine_config *cfg) {
    json_key(j, "cpus");
    if (cfg->cpu_count > 0) {
        json_array_begin(j);
        for (int i = 0; i < cfg->cpu_count; i++) json_u64(j, (uint64_t)cfg->cpus[i]);
        json_array_end(j);
    } else {
        json_null(j);
    }
}

static void write_settings(json_writer *j, const run_result *r) {
    const engine_config *cfg = r->cfg;
    json_key(j, "settings");
    json_object_begin(j);
    json_kv_string(j, "url", cfg->url);
    json_kv_string(j, "address", cfg->addr_text);
    json_kv_u64(j, "connections", (uint64_t)cfg->connections);
    json_kv_u64(j, "threads", (uint64_t)cfg->threads);
    /* A window of a fixed count has no duration set: it lasts what its
     * N requests take. */
    json_key(j, "duration_s");
    if (cfg->count) json_null(j);
    else json_double(j, seconds(cfg->duration_ns), 3);
    json_key(j, "count");
    if (cfg->count) json_u64(j, cfg->count);
    else json_null(j);
    json_kv_double(j, "warmup_s", seconds(cfg->warmup_ns), 3);
    json_key(j, "warmup_count");
    if (cfg->warmup_count) json_u64(j, cfg->warmup_count);
    else json_null(j);
    json_kv_double(j, "timeout_s", seconds(cfg->timeout_ns), 3);
    json_kv_double(j, "think_s", seconds(cfg->think_ns), 6);
    json_key(j, "rate");
    if (cfg->rate_per_s > 0) json_double(j, cfg->rate_per_s, 3);
    else json_null(j);
    json_kv_string(j, "mode", cfg->rate_per_s > 0 ? "open" : "closed");
    json_kv_bool(j, "keepalive", cfg->keepalive);
    static const char *const protocols[] = {"http1", "h2c", "h2"};
    json_kv_string(j, "protocol", protocols[cfg->protocol]);
    json_kv_u64(j, "streams", (uint64_t)cfg->streams);
    report_write_settings_tls(j, cfg);
    json_kv_string(j, "method", cfg->requests_file ? NULL : cfg->method);
    json_key(j, "headers");
    json_array_begin(j);
    for (int i = 0; i < cfg->header_count; i++) json_string(j, cfg->headers[i]);
    json_array_end(j);
    json_kv_string(j, "requests_file", cfg->requests_file);
    json_kv_u64(j, "request_kinds", r->requests->count);
    json_kv_bool(j, "cookies", cfg->cookies);
    json_kv_u64(j, "seed", cfg->seed);
    json_kv_string(j, "raw_file", cfg->raw_file);
    report_write_cpus(j, cfg);
    json_object_end(j);
}

static void write_late(json_writer *j, const run_result *r, const phase_stats *m) {
    json_key(j, "late");
    if (r->cfg->rate_per_s <= 0) {
        json_null(j);
        return;
    }
    const histogram *h = &m->lateness;
    uint64_t scheduled = m->scheduled;
    json_object_begin(j);
    json_kv_double(j, "threshold_us", (double)LATE_THRESHOLD_NS / 1e3, 3);
    json_kv_u64(j, "requests", m->late_requests);
    json_kv_double(j, "fraction", scheduled ? (double)m->late_requests / (double)scheduled : 0.0, 6);
    json_kv_double(j, "mean_us", hist_mean_ns(h) / 1e3, 3);
    json_kv_double(j, "p50_us", (double)hist_percentile_ns(h, 50.0) / 1e3, 3);
    json_kv_double(j, "p99_us", (double)hist_percentile_ns(h, 99.0) / 1e3, 3);
    json_kv_double(j, "max_us", (double)h->max_ns / 1e3, 3);
    json_kv_u64(j, "scheduled", scheduled);
    json_kv_u64(j, "unsent", m->unsent);
    json_object_end(j);
}

/* Peak resident memory of this program. VmHWM belongs to the address
 * space exec created; ru_maxrss also keeps the peak of the process that
 * exec replaced (a forked Ruby runner of 80 MB, say), so it is only the
 * fallback where /proc is missing. */
uint64_t report_peak_rss_bytes(const struct rusage *usage) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        unsigned long long kb = 0;
        int found = 0;
        while (!found && fgets(line, sizeof(line), f)) found = sscanf(line, "VmHWM: %llu kB", &kb) == 1;
        fclose(f);
        if (found) return (uint64_t)kb * 1024;
    }
    return (uint64_t)usage->ru_maxrss * 1024;
}

/* An object of counts by HTTP/2 error code name, the non-zero ones. */
static void write_codes(json_writer *j, const char *key, const uint64_t *counts) {
    json_key(j, key);
    json_object_begin(j);
    for (uint32_t c = 0; c <= H2_ERROR_CODES; c++)
        if (counts[c]) json_kv_u64(j, c < H2_ERROR_CODES ? h2_error_code_name(c) : "UNKNOWN", counts[c]);
    json_object_end(j);
}

/* "h2": how h2c connections and streams ended (null for http1). */
static void write_h2(json_writer *j, const run_result *r) {
    json_key(j, "h2");
    if (!protocol_is_h2(r->cfg->protocol)) {
        json_null(j);
        return;
    }
    h2_counters t;
    memset(&t, 0, sizeof(t));
    for (int i = 0; i < r->worker_count; i++) {
        const h2_counters *c = &r->workers[i].h2_stats;
        t.not_h2c_connections += c->not_h2c_connections;
        t.protocol_errors += c->protocol_errors;
        t.goaways += c->goaways;
        for (int k = 0; k <= H2_ERROR_CODES; k++) {
            t.goaway_codes[k] += c->goaway_codes[k];
            t.resets[k] += c->resets[k];
        }
        if (c->server_max_streams > t.server_max_streams) t.server_max_streams = c->server_max_streams;
        if (!t.reason[0] && c->reason[0]) memcpy(t.reason, c->reason, sizeof(t.reason));
    }
    json_object_begin(j);
    json_kv_u64(j, "not_h2c_connections", t.not_h2c_connections);
    json_kv_u64(j, "protocol_errors", t.protocol_errors);
    json_kv_string(j, "reason", t.reason[0] ? t.reason : NULL);
    json_kv_u64(j, "goaways", t.goaways);
    write_codes(j, "goaway_codes", t.goaway_codes);
    write_codes(j, "resets", t.resets);
    json_key(j, "server_max_concurrent_streams");
    if (t.server_max_streams) json_u64(j, t.server_max_streams);
    else json_null(j);
    json_object_end(j);
}

static void write_service_totals(json_writer *j, const char *key, const service_totals *t) {
    json_key(j, key);
    json_object_begin(j);
    json_kv_u64(j, "slots", t->slots);
    json_kv_u64(j, "active", t->active);
    json_kv_u64(j, "served", t->served);
    json_kv_u64(j, "unserved", t->active - t->served);
    json_key(j, "unserved_slots");
    json_array_begin(j);
    for (uint32_t i = 0; i < t->unserved_listed; i++) json_u64(j, t->unserved[i]);
    json_array_end(j);
    json_kv_double(j, "max_wait_us", (double)t->max_wait_ns / 1e3, 3);
    json_object_end(j);
}

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void write_probe_totals(json_writer *j, const char *key, const probe_totals *t, uint64_t slots) {
    /* Slots fail in the order their probes end: listed ascending. */
    uint32_t failed[PROBE_LISTED_SLOTS];
    memcpy(failed, t->failed_slots, t->failed_listed * sizeof(uint32_t));
    qsort(failed, t->failed_listed, sizeof(uint32_t), compare_u32);
    json_key(j, key);
    json_object_begin(j);
    json_kv_u64(j, "passed", t->passed);
    json_kv_u64(j, "failed", t->failed);
    json_kv_u64(j, "unchecked", slots - t->passed - t->failed);
    json_key(j, "failed_slots");
    json_array_begin(j);
    for (uint32_t i = 0; i < t->failed_listed; i++) json_u64(j, failed[i]);
    json_array_end(j);
    json_key(j, "reason");
    if (t->reason[0]) {
        char line[PROBE_REASON_BYTES + 32];
        snprintf(line, sizeof(line), "slot %u: %s", t->reason_slot, t->reason);
        json_string(j, line);
    } else {
        json_null(j);
    }
    json_object_end(j);
}

/* "probes": every slot's session probes at the window's start and after
 * its end (probes.h); null without probe entries. */
static void write_probes(json_writer *j, const run_result *r) {
    const request_set *set = r->requests;
    json_key(j, "probes");
    if (!set->probe_count) {
        json_null(j);
        return;
    }
    probe_totals t[PROBE_POINTS];
    memset(t, 0, sizeof(t));
    for (int i = 0; i < r->worker_count; i++)
        for (int p = 0; p < PROBE_POINTS; p++) probe_totals_merge(&t[p], &r->workers[i].probes[p]);
    json_object_begin(j);
    json_key(j, "entries");
    json_array_begin(j);
    for (size_t i = 0; i < set->probe_count; i++) {
        const request_template *pt = &set->items[set->probes[i]];
        json_object_begin(j);
        json_kv_u64(j, "index", pt->index);
        json_kv_string(j, "name", pt->name);
        json_object_end(j);
    }
    json_array_end(j);
    json_kv_u64(j, "slots", (uint64_t)r->cfg->connections);
    write_probe_totals(j, "start", &t[PROBE_START], (uint64_t)r->cfg->connections);
    write_probe_totals(j, "end", &t[PROBE_END], (uint64_t)r->cfg->connections);
    json_object_end(j);
}

/* "users": the @users file and how many users it gave (null without). */
static void write_users(json_writer *j, const run_result *r) {
    const user_table *u = &r->requests->users;
    json_key(j, "users");
    if (!u->row_count) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    json_kv_string(j, "file", u->file);
    json_kv_u64(j, "count", u->row_count);
    json_key(j, "columns");
    json_array_begin(j);
    for (int k = 0; k < u->column_count; k++) json_string(j, u->columns[k]);
    json_array_end(j);
    /* Slots per user: more than 1 means some users hold several sessions. */
    uint64_t conns = (uint64_t)r->cfg->connections;
    json_kv_u64(j, "slots_per_user_max", (conns + u->row_count - 1) / u->row_count);
    json_object_end(j);
}

/* "service": which slots the server answered in the window and the
 * longest wait (slot_service.h); "streams" is HTTP/2's stream slots. */
static void write_service(json_writer *j, const run_result *r) {
    service_totals conns, streams;
    memset(&conns, 0, sizeof(conns));
    memset(&streams, 0, sizeof(streams));
    for (int i = 0; i < r->worker_count; i++) {
        service_totals_merge(&conns, &r->workers[i].conn_service);
        service_totals_merge(&streams, &r->workers[i].stream_service);
    }
    json_key(j, "service");
    json_object_begin(j);
    write_service_totals(j, "connections", &conns);
    if (protocol_is_h2(r->cfg->protocol)) {
        write_service_totals(j, "streams", &streams);
    } else {
        json_key(j, "streams");
        json_null(j);
    }
    json_object_end(j);
}

/* One phase's TLS counts, summed over the threads (histograms merged into
 * full and resumed, which the caller initialised). */
static void merge_tls(const run_result *r, phase_id phase, tls_counters *sum, histogram *full, histogram *resumed) {
    memset(sum, 0, sizeof(*sum));
    for (int i = 0; i < r->worker_count; i++) {
        const tls_counters *c = &r->workers[i].tls[phase];
        sum->handshakes += c->handshakes;
        sum->resumed += c->resumed;
        sum->paid_responses += c->paid_responses;
        for (int k = 0; k < TLS_FAIL_KINDS; k++) sum->failures[k] += c->failures[k];
        if (c->full_ns) hist_merge(full, c->full_ns);
        if (c->resumed_ns) hist_merge(resumed, c->resumed_ns);
    }
}

static void write_tls_counts(json_writer *j, const tls_counters *t, uint64_t responses) {
    json_kv_u64(j, "handshakes", t->handshakes);
    json_kv_u64(j, "resumed", t->resumed);
    json_kv_u64(j, "handshake_responses", t->paid_responses);
    json_kv_double(j, "handshake_response_fraction", responses ? (double)t->paid_responses / (double)responses : 0.0,
                   6);
    json_key(j, "failures");
    json_object_begin(j);
    for (int k = TLS_FAIL_NONE + 1; k < TLS_FAIL_KINDS; k++) json_kv_u64(j, tls_failure_names[k], t->failures[k]);
    json_object_end(j);
}

/* One phase's TLS counts and handshake times, over its responses. */
static void write_tls_phase(json_writer *j, const run_result *r, phase_id phase, uint64_t responses) {
    histogram *full = malloc(sizeof(histogram)), *resumed = malloc(sizeof(histogram));
    if (!full || !resumed) { perror("rackbench-engine: out of memory"); exit(1); }
    hist_init(full);
    hist_init(resumed);
    tls_counters t;
    merge_tls(r, phase, &t, full, resumed);
    write_tls_counts(j, &t, responses);
    report_write_latency(j, "full_handshake_us", full);
    report_write_latency(j, "resumed_handshake_us", resumed);
    free(full);
    free(resumed);
}

/* "tls": an https:// run's handshakes, what paid for them and how TLS
 * failed (null for http://). Counted in the phase of the request that
 * opened the connection. */
static void write_tls(json_writer *j, const run_result *r, const phase_stats *m, const phase_stats *wu) {
    json_key(j, "tls");
    if (!r->cfg->tls) {
        json_null(j);
        return;
    }
    const tls_info *info = NULL;
    const char *reason = NULL;
    for (int i = 0; i < r->worker_count; i++) {
        if (!info && r->workers[i].tls_info.version) info = &r->workers[i].tls_info;
        if (!reason && r->workers[i].tls_reason[0]) reason = r->workers[i].tls_reason;
    }
    json_object_begin(j);
    json_kv_string(j, "version", info ? info->version : NULL);
    json_kv_string(j, "cipher", info ? info->cipher : NULL);
    json_kv_string(j, "alpn", info ? info->alpn : NULL);
    write_tls_phase(j, r, PHASE_MEASURE, m->requests);
    json_kv_string(j, "reason", reason);
    json_key(j, "warmup");
    json_object_begin(j);
    write_tls_phase(j, r, PHASE_WARMUP, wu->requests);
    json_object_end(j);
    json_object_end(j);
}

/* --quiet-pids: how the gate went (quiet.h), or null without it. */
static void write_quiet(json_writer *j, const run_result *r) {
    json_key(j, "quiet");
    if (!r->cfg->quiet_pids_file) {
        json_null(j);
        return;
    }
    uint64_t checks = 0, waits = 0;
    int pids = 0;
    const char *error = NULL;
    for (int i = 0; i < r->worker_count; i++) {
        const quiet_gate *g = &r->workers[i].quiet;
        checks += g->checks;
        waits += g->waits;
        if (g->pid_count > pids) pids = g->pid_count;
        if (!error && g->error[0]) error = g->error;
    }
    json_object_begin(j);
    json_kv_string(j, "pids_file", r->cfg->quiet_pids_file);
    json_kv_u64(j, "pids", (uint64_t)pids);
    json_kv_u64(j, "checks", checks);
    json_kv_u64(j, "waits", waits);
    json_kv_string(j, "error", error);
    json_object_end(j);
}

void report_write_cpu(json_writer *j, const run_result *r, const char *per_key, uint64_t count, int null_when_none) {
    double user_s = tv_seconds(r->cpu_end.ru_utime) - tv_seconds(r->cpu_start.ru_utime);
    double system_s = tv_seconds(r->cpu_end.ru_stime) - tv_seconds(r->cpu_start.ru_stime);
    double wall_s = seconds(r->cpu_wall_ns);
    double utilization = wall_s > 0 ? (user_s + system_s) / (wall_s * r->cfg->threads) : 0.0;
    int pin_failed = 0;
    for (int i = 0; i < r->worker_count; i++) pin_failed |= r->workers[i].pin_failed;
    json_key(j, "cpu");
    json_object_begin(j);
    json_kv_double(j, "user_s", user_s, 6);
    json_kv_double(j, "system_s", system_s, 6);
    json_kv_double(j, "wall_s", wall_s, 6);
    json_kv_double(j, "utilization", utilization, 4);
    json_key(j, per_key);
    if (count) json_double(j, (user_s + system_s) * 1e6 / (double)count, 4);
    else if (null_when_none) json_null(j);
    else json_double(j, 0.0, 4);
    json_kv_u64(j, "threads", (uint64_t)r->cfg->threads);
    json_kv_bool(j, "saturated", utilization > SATURATION_UTILIZATION);
    json_kv_bool(j, "pinned", r->cfg->cpu_count > 0 && !pin_failed);
    json_object_end(j);
}

void report_json(FILE *out, const run_result *r) {
    phase_stats merged[PHASE_COUNT];
    uint64_t connects = 0, attempts = 0, close_ignored = 0, server_closes = 0, idle_closes = 0, abandoned = 0;
    int established = 0;
    for (int p = 0; p < PHASE_COUNT; p++) {
        memset(&merged[p], 0, sizeof(merged[p]));
        hist_init(&merged[p].latency);
        hist_init(&merged[p].lateness);
        for (int i = 0; i < r->worker_count; i++) phase_stats_merge_totals(&merged[p], &r->workers[i].phases[p]);
    }
    for (int i = 0; i < r->worker_count; i++) {
        const worker *w = &r->workers[i];
        connects += w->connects;
        attempts += w->connect_attempts;
        close_ignored += w->close_ignored;
        server_closes += w->server_closes;
        idle_closes += w->idle_closes;
        abandoned += w->abandoned;
        established += w->slots_established;
    }
    const phase_stats *m = &merged[PHASE_MEASURE];
    const phase_stats *wu = &merged[PHASE_WARMUP];

    json_writer jw, *j = &jw;
    json_init(j, out);
    json_object_begin(j);
    json_kv_string(j, "format", "rackbench-engine");
    json_kv_u64(j, "format_version", ENGINE_FORMAT_VERSION);
    json_kv_string(j, "engine_version", ENGINE_VERSION);
    json_kv_bool(j, "interrupted", r->interrupted);
    write_settings(j, r);

    json_kv_u64(j, "requests", m->requests);
    json_kv_double(j, "duration_s", seconds(r->measured_ns), 6);
    json_kv_double(j, "rps", per_second(m->requests, r->measured_ns), 3);
    /* The rate asked of the server over the window as it ran: differs from
     * settings.rate by the schedule's rounding to whole requests, and from
     * rps by whatever the server did not answer. */
    json_key(j, "offered_rps");
    if (r->cfg->rate_per_s > 0) json_double(j, per_second(m->scheduled, r->measured_ns), 3);
    else json_null(j);
    json_kv_u64(j, "bytes", m->bytes);
    json_kv_double(j, "bytes_per_s", per_second(m->bytes, r->measured_ns), 3);
    /* A download's figure: response bodies only, in MB (10^6 bytes) per
     * second of the measured window. */
    json_kv_u64(j, "body_bytes", m->body_bytes);
    json_kv_double(j, "mb_per_s", per_second(m->body_bytes, r->measured_ns) / 1e6, 3);
    write_status_and_errors(j, m);
    report_write_latency(j, "latency_us", &m->latency);
    report_write_histogram(j, "histogram", &m->latency);
    report_write_timeline(j, r, PHASE_MEASURE, "requests");
    write_late(j, r, m);
    write_entries(j, r);
    write_h2(j, r);
    write_service(j, r);
    write_probes(j, r);
    write_users(j, r);
    write_tls(j, r, m, wu);
    write_quiet(j, r);

    json_key(j, "connections");
    json_object_begin(j);
    json_kv_u64(j, "requested", (uint64_t)r->cfg->connections);
    json_kv_u64(j, "established", (uint64_t)established);
    json_kv_u64(j, "connects", connects);
    json_kv_u64(j, "connect_attempts", attempts);
    json_kv_u64(j, "server_closes", server_closes);
    json_kv_u64(j, "close_ignored", close_ignored);
    json_kv_u64(j, "idle_closes", idle_closes);
    json_object_end(j);
    json_kv_u64(j, "abandoned", abandoned);

    json_key(j, "warmup");
    json_object_begin(j);
    json_kv_double(j, "duration_s", seconds(r->warmup_actual_ns), 6);
    json_kv_u64(j, "requests", wu->requests);
    json_kv_double(j, "rps", per_second(wu->requests, r->warmup_actual_ns), 3);
    json_kv_u64(j, "bytes", wu->bytes);
    write_status_and_errors(j, wu);
    report_write_latency(j, "latency_us", &wu->latency);
    report_write_timeline(j, r, PHASE_WARMUP, "requests");
    json_object_end(j);

    report_write_cpu(j, r, "us_per_request", m->requests, 0);

    json_key(j, "memory");
    json_object_begin(j);
    json_kv_u64(j, "max_rss_bytes", report_peak_rss_bytes(&r->cpu_end));
    json_object_end(j);
    json_object_end(j);
    fputc('\n', out);
}
