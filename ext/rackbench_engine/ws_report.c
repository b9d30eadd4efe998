/* ws_report.c - see ws_report.h and doc/output.md ("rackbench-engine-ws"). */
#include "ws_report.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "json_writer.h"
#include "ws_worker_state.h"

static double seconds(uint64_t ns) { return (double)ns / 1e9; }
static double tv_seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }
static double cpu_seconds(const struct rusage *a, const struct rusage *b) {
    return tv_seconds(b->ru_utime) - tv_seconds(a->ru_utime) + tv_seconds(b->ru_stime) - tv_seconds(a->ru_stime);
}

static const ws_worker *ws_at(const run_result *r, int i) { return r->workers[i].protocol_state; }

/* A latency object as HTTP's (report_write_latency), with the p95 that
 * the WebSocket anchors report and a broadcast target is set on. */
static void write_percentiles(json_writer *j, const char *key, const histogram *h) {
    json_key(j, key);
    json_object_begin(j);
    int empty = h->total == 0;
    json_kv_double(j, "min", empty ? 0 : (double)h->min_ns / 1e3, 3);
    json_kv_double(j, "mean", hist_mean_ns(h) / 1e3, 3);
    json_kv_double(j, "stdev", hist_stdev_ns(h) / 1e3, 3);
    json_kv_double(j, "max", (double)h->max_ns / 1e3, 3);
    static const struct { const char *name; double pct; } points[] = {
        {"p50", 50.0}, {"p90", 90.0}, {"p95", 95.0}, {"p99", 99.0}, {"p99_9", 99.9}};
    for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
        json_kv_double(j, points[i].name, (double)hist_percentile_ns(h, points[i].pct) / 1e3, 3);
    json_object_end(j);
}

static const char *const workload_names[] = {"connect", "echo", "broadcast"};

/* An instant of the run: seconds since the engine started, and its Unix
 * time (for lining up samples of the server taken by the clock). */
static void write_edge(json_writer *j, const run_result *r, const char *name, uint64_t at_ns) {
    char key[64];
    snprintf(key, sizeof(key), "%s_s", name);
    json_key(j, key);
    if (at_ns && at_ns != UINT64_MAX) json_double(j, seconds(at_ns - r->started_ns), 6);
    else json_null(j);
    snprintf(key, sizeof(key), "%s_unix", name);
    json_key(j, key);
    if (at_ns && at_ns != UINT64_MAX) json_double(j, ((double)at_ns + (double)r->realtime_offset_ns) / 1e9, 6);
    else json_null(j);
}

static void write_settings(json_writer *j, const run_result *r) {
    const engine_config *cfg = r->cfg;
    const ws_worker *ws0 = ws_at(r, 0);
    json_key(j, "settings");
    json_object_begin(j);
    json_kv_string(j, "url", cfg->url);
    json_kv_string(j, "address", cfg->addr_text);
    json_kv_string(j, "workload", workload_names[cfg->ws_workload]);
    json_kv_u64(j, "clients", (uint64_t)cfg->connections);
    json_kv_u64(j, "threads", (uint64_t)cfg->threads);
    json_kv_bool(j, "cable", cfg->ws_cable);
    json_kv_string(j, "channel", cfg->ws_cable ? cfg->ws_channel : NULL);
    json_kv_string(j, "identifier", cfg->ws_cable ? ws0->cfg.identifier : NULL);
    json_kv_double(j, "ramp_s", seconds(cfg->ws_ramp_ns), 3);
    json_kv_double(j, "warmup_s", seconds(cfg->warmup_ns), 3);
    json_kv_double(j, "duration_s", seconds(cfg->duration_ns), 3);
    json_kv_double(j, "timeout_s", seconds(cfg->timeout_ns), 3);
    json_key(j, "rate");
    if (cfg->rate_per_s > 0) json_double(j, cfg->rate_per_s, 3);
    else json_null(j);
    json_kv_string(j, "mode", cfg->rate_per_s > 0 ? "open" : "closed");
    int broadcast = cfg->ws_workload == WS_WORKLOAD_BROADCAST;
    json_key(j, "interval_s");
    if (broadcast) json_double(j, seconds(cfg->ws_interval_ns), 6);
    else json_null(j);
    json_kv_string(j, "broadcaster", !broadcast ? NULL : cfg->ws_broadcaster == WS_BROADCASTER_HTTP ? "http" : "client");
    json_kv_string(j, "broadcast_url", broadcast && cfg->ws_broadcaster == WS_BROADCASTER_HTTP ? cfg->ws_broadcast_url : NULL);
    json_kv_u64(j, "message_bytes", cfg->ws_message_bytes);
    json_kv_bool(j, "binary", cfg->ws_binary);
    json_key(j, "fragment_bytes");
    if (cfg->ws_fragment_bytes) json_u64(j, cfg->ws_fragment_bytes);
    else json_null(j);
    json_kv_u64(j, "max_message_bytes", cfg->ws_max_message_bytes);
    json_key(j, "headers");
    json_array_begin(j);
    for (int i = 0; i < cfg->header_count; i++) json_string(j, cfg->headers[i]);
    json_array_end(j);
    json_kv_u64(j, "seed", cfg->seed);
    report_write_cpus(j, cfg);
    report_write_settings_tls(j, cfg);
    json_object_end(j);
}

/* Counts by kind of end, every kind but none and client, and the first
 * reason of each that has one. */
static void write_ends(json_writer *j, const char *counts_key, const uint64_t *counts,
                       const char reasons[][WS_REASON_BYTES]) {
    json_key(j, counts_key);
    json_object_begin(j);
    for (int k = WS_END_NONE + 1; k < WS_END_CLIENT; k++) json_kv_u64(j, ws_end_names[k], counts[k]);
    json_object_end(j);
    json_key(j, "reasons");
    json_object_begin(j);
    for (int k = WS_END_NONE + 1; k < WS_END_CLIENT; k++)
        if (counts[k] && reasons[k][0]) json_kv_string(j, ws_end_names[k], reasons[k]);
    json_object_end(j);
}

static uint64_t sum_ends(const uint64_t *counts) {
    uint64_t n = 0;
    for (int k = WS_END_NONE + 1; k < WS_END_CLIENT; k++) n += counts[k];
    return n;
}

static void write_connect(json_writer *j, const run_result *r, const ws_conn_tally *t) {
    histogram *latency = malloc(sizeof(histogram));
    if (!latency) { perror("rackbench-engine: out of memory"); exit(1); }
    hist_init(latency);
    uint64_t connected = 0, last_ready_ns = 0;
    for (int i = 0; i < r->worker_count; i++) {
        const ws_worker *ws = ws_at(r, i);
        hist_merge(latency, ws->connect_ns);
        connected += (uint64_t)ws->ready;
        if (ws->last_ready_ns > last_ready_ns) last_ready_ns = ws->last_ready_ns;
    }
    uint64_t requested = (uint64_t)r->cfg->connections, failed = sum_ends(t->failed);
    json_key(j, "connect");
    json_object_begin(j);
    json_kv_u64(j, "requested", requested);
    json_kv_u64(j, "connected", connected);
    json_kv_u64(j, "failed", failed);
    json_kv_u64(j, "unfinished", requested - connected - failed);
    write_ends(j, "failures", t->failed, t->reason);
    uint64_t start_ns = r->setup_start_ns;
    json_key(j, "time_to_all_s");
    if (connected == requested && last_ready_ns) json_double(j, seconds(last_ready_ns - start_ns), 6);
    else json_null(j);
    json_key(j, "last_connected_s");
    if (last_ready_ns) json_double(j, seconds(last_ready_ns - start_ns), 6);
    else json_null(j);
    json_kv_double(j, "duration_s", seconds(r->setup_end_ns > start_ns ? r->setup_end_ns - start_ns : 0), 6);
    write_percentiles(j, "latency_us", latency);
    report_write_histogram(j, "histogram", latency);
    /* Per second of the setup, every thread's. */
    size_t seconds_used = 0;
    for (int i = 0; i < r->worker_count; i++)
        for (size_t s = 0; s < WS_SETUP_SECONDS_KEPT; s++)
            if ((ws_at(r, i)->ready_per_s[s] || ws_at(r, i)->failed_per_s[s]) && s + 1 > seconds_used) seconds_used = s + 1;
    json_key(j, "timeline");
    json_array_begin(j);
    for (size_t s = 0; s < seconds_used; s++) {
        uint64_t ready = 0, fail = 0;
        for (int i = 0; i < r->worker_count; i++) {
            ready += ws_at(r, i)->ready_per_s[s];
            fail += ws_at(r, i)->failed_per_s[s];
        }
        json_object_begin(j);
        json_kv_u64(j, "second", s);
        json_kv_u64(j, "connected", ready);
        json_kv_u64(j, "failed", fail);
        json_object_end(j);
    }
    json_array_end(j);
    double cpu_s = cpu_seconds(&r->setup_cpu_start, &r->setup_cpu_end);
    json_kv_double(j, "cpu_s", cpu_s, 6);
    json_kv_double(j, "cpu_us_per_connection", connected ? cpu_s * 1e6 / (double)connected : 0.0, 3);
    json_object_end(j);
    free(latency);
}

static void write_lost(json_writer *j, const ws_conn_tally *t) {
    json_key(j, "lost");
    json_object_begin(j);
    json_kv_u64(j, "total", sum_ends(t->lost));
    write_ends(j, "by_kind", t->lost, t->reason);
    json_object_end(j);
}

static void write_close_codes(json_writer *j, const ws_conn_tally *t) {
    json_key(j, "close_codes");
    json_object_begin(j);
    for (int i = 0; i < WS_CLOSE_CODES_KEPT; i++) {
        if (!t->close_code_counts[i]) continue;
        char code[16];
        snprintf(code, sizeof(code), "%d", t->close_codes[i]);
        json_kv_u64(j, code, t->close_code_counts[i]);
    }
    if (t->close_codes_other) json_kv_u64(j, "other", t->close_codes_other);
    json_object_end(j);
}

static void write_opcodes(json_writer *j, const char *key, const uint64_t *frames) {
    static const struct { int op; const char *name; } names[] = {
        {WS_OP_TEXT, "text"}, {WS_OP_BINARY, "binary"}, {WS_OP_CONTINUATION, "continuation"},
        {WS_OP_PING, "ping"}, {WS_OP_PONG, "pong"},     {WS_OP_CLOSE, "close"}};
    json_key(j, key);
    json_object_begin(j);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) json_kv_u64(j, names[i].name, frames[names[i].op]);
    json_object_end(j);
}

static void write_frames(json_writer *j, const ws_conn_tally *t) {
    json_key(j, "frames");
    json_object_begin(j);
    write_opcodes(j, "received", t->frames_in);
    write_opcodes(j, "sent", t->frames_out);
    json_kv_u64(j, "bytes_received", t->bytes_in);
    json_kv_u64(j, "bytes_sent", t->bytes_out);
    json_kv_u64(j, "fragmented_messages", t->fragmented_in);
    json_kv_u64(j, "pongs_sent", t->pongs_sent);
    json_object_end(j);
}

static void write_cable(json_writer *j, const run_result *r, const ws_conn_tally *t) {
    json_key(j, "cable");
    if (!r->cfg->ws_cable) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    json_kv_u64(j, "welcomes", t->cable_welcomes);
    json_kv_u64(j, "confirms", t->cable_confirms);
    json_kv_u64(j, "pings", t->cable_pings);
    json_kv_u64(j, "unexpected", t->cable_unexpected);
    json_object_end(j);
}

static void write_tls(json_writer *j, const run_result *r) {
    json_key(j, "tls");
    if (!r->cfg->tls) {
        json_null(j);
        return;
    }
    histogram *full = malloc(sizeof(histogram)), *resumed = malloc(sizeof(histogram));
    if (!full || !resumed) { perror("rackbench-engine: out of memory"); exit(1); }
    hist_init(full);
    hist_init(resumed);
    uint64_t handshakes = 0, resumptions = 0, failures[TLS_FAIL_KINDS] = {0};
    const tls_info *info = NULL;
    const char *reason = NULL;
    for (int i = 0; i < r->worker_count; i++) {
        const worker *w = &r->workers[i];
        for (int p = 0; p < PHASE_COUNT; p++) {
            handshakes += w->tls[p].handshakes;
            resumptions += w->tls[p].resumed;
            for (int k = 0; k < TLS_FAIL_KINDS; k++) failures[k] += w->tls[p].failures[k];
            hist_merge(full, w->tls[p].full_ns);
            hist_merge(resumed, w->tls[p].resumed_ns);
        }
        if (!info && w->tls_info.version) info = &w->tls_info;
        if (!reason && w->tls_reason[0]) reason = w->tls_reason;
    }
    json_object_begin(j);
    json_kv_string(j, "version", info ? info->version : NULL);
    json_kv_string(j, "cipher", info ? info->cipher : NULL);
    json_kv_u64(j, "handshakes", handshakes);
    json_kv_u64(j, "resumed", resumptions);
    json_key(j, "failures");
    json_object_begin(j);
    for (int k = TLS_FAIL_NONE + 1; k < TLS_FAIL_KINDS; k++) json_kv_u64(j, tls_failure_names[k], failures[k]);
    json_object_end(j);
    json_kv_string(j, "reason", reason);
    report_write_latency(j, "full_handshake_us", full);
    report_write_latency(j, "resumed_handshake_us", resumed);
    json_object_end(j);
    free(full);
    free(resumed);
}

/* The threads' phase totals (echo: round trips; broadcast: receipts). */
static void merge_phases(const run_result *r, phase_stats *merged) {
    for (int p = 0; p < PHASE_COUNT; p++) {
        memset(&merged[p], 0, sizeof(merged[p]));
        hist_init(&merged[p].latency);
        hist_init(&merged[p].lateness);
        for (int i = 0; i < r->worker_count; i++) phase_stats_merge_totals(&merged[p], &r->workers[i].phases[p]);
    }
}

static void write_echo(json_writer *j, const run_result *r, const phase_stats *merged) {
    json_key(j, "echo");
    if (r->cfg->ws_workload != WS_WORKLOAD_ECHO) {
        json_null(j);
        return;
    }
    uint64_t sent[PHASE_COUNT] = {0}, stale = 0, foreign = 0;
    for (int i = 0; i < r->worker_count; i++) {
        const ws_worker *ws = ws_at(r, i);
        for (int p = 0; p < PHASE_COUNT; p++) sent[p] += ws->echo_sent[p];
        stale += ws->echo_stale;
        foreign += ws->echo_foreign;
    }
    const phase_stats *m = &merged[PHASE_MEASURE], *wu = &merged[PHASE_WARMUP];
    json_object_begin(j);
    json_kv_u64(j, "sent", sent[PHASE_MEASURE]);
    json_kv_u64(j, "messages", m->requests);
    json_kv_double(j, "messages_per_s", r->measured_ns ? (double)m->requests / seconds(r->measured_ns) : 0.0, 3);
    json_kv_u64(j, "timeouts", m->errors[ERR_TIMEOUT]);
    json_kv_u64(j, "lost", m->errors[ERR_READ]);
    json_kv_u64(j, "stale", stale);
    json_kv_u64(j, "foreign", foreign);
    write_percentiles(j, "latency_us", &m->latency);
    report_write_histogram(j, "histogram", &m->latency);
    report_write_timeline(j, r, PHASE_MEASURE, "messages");
    json_key(j, "late");
    if (r->cfg->rate_per_s > 0) {
        json_object_begin(j);
        json_kv_u64(j, "scheduled", m->scheduled);
        json_kv_u64(j, "unsent", m->unsent);
        json_kv_u64(j, "late", m->late_requests);
        json_kv_double(j, "p99_us", (double)hist_percentile_ns(&m->lateness, 99.0) / 1e3, 3);
        json_kv_double(j, "max_us", (double)m->lateness.max_ns / 1e3, 3);
        json_object_end(j);
    } else {
        json_null(j);
    }
    json_key(j, "warmup");
    json_object_begin(j);
    json_kv_u64(j, "sent", sent[PHASE_WARMUP]);
    json_kv_u64(j, "messages", wu->requests);
    json_kv_u64(j, "timeouts", wu->errors[ERR_TIMEOUT]);
    json_object_end(j);
    json_object_end(j);
}

/* Per broadcast number, across the threads: receivers that got it and
 * its slowest receipt. */
typedef struct {
    uint64_t *got, *slowest_ns;
} merged_receipts;

static void merge_receipts(const run_result *r, uint64_t max_seq, merged_receipts *mr) {
    mr->got = calloc(max_seq + 1, sizeof(uint64_t));
    mr->slowest_ns = calloc(max_seq + 1, sizeof(uint64_t));
    if (!mr->got || !mr->slowest_ns) { perror("rackbench-engine: out of memory"); exit(1); }
    for (int i = 0; i < r->worker_count; i++) {
        const ws_worker *ws = ws_at(r, i);
        for (uint64_t s = 1; s <= max_seq; s++) {
            mr->got[s] += ws->got[s];
            if (ws->slowest_ns[s] > mr->slowest_ns[s]) mr->slowest_ns[s] = ws->slowest_ns[s];
        }
    }
}

static void write_http_broadcaster(json_writer *j, const ws_http_post *p) {
    json_key(j, "http");
    if (!p) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    json_kv_u64(j, "posts", p->posts);
    json_kv_u64(j, "ok", p->failures[WS_POST_OK]);
    json_key(j, "failures");
    json_object_begin(j);
    for (int k = WS_POST_OK + 1; k < WS_POST_KINDS; k++) json_kv_u64(j, ws_post_failure_names[k], p->failures[k]);
    json_object_end(j);
    json_key(j, "statuses");
    json_array_begin(j);
    for (int i = 0; i < 8 && p->statuses[i]; i++) json_u64(j, (uint64_t)p->statuses[i]);
    json_array_end(j);
    json_kv_string(j, "reason", p->reason[0] ? p->reason : NULL);
    json_object_end(j);
}

static void write_broadcast(json_writer *j, const run_result *r, const phase_stats *merged) {
    json_key(j, "broadcast");
    if (r->cfg->ws_workload != WS_WORKLOAD_BROADCAST) {
        json_null(j);
        return;
    }
    const ws_worker *ws0 = ws_at(r, 0);
    const ws_broadcaster *b = &ws0->caster;
    uint64_t max_seq = ws0->max_seq, receivers = 0, delivered = 0, duplicates = 0, foreign = 0;
    for (int i = 0; i < r->worker_count; i++) {
        const ws_worker *ws = ws_at(r, i);
        receivers += ws->receivers;
        delivered += ws->delivered;
        duplicates += ws->duplicates;
        foreign += ws->foreign;
    }
    merged_receipts mr;
    merge_receipts(r, max_seq, &mr);
    histogram *rtt = malloc(sizeof(histogram));
    if (!rtt) { perror("rackbench-engine: out of memory"); exit(1); }
    hist_init(rtt);
    uint64_t window = b->sent[PHASE_MEASURE], complete = 0;
    for (uint64_t s = b->first_window_seq; s && s <= b->last_window_seq; s++) {
        /* The round trip of a broadcast is its last receiver's receipt:
         * only a broadcast every receiver got has one. */
        if (!b->sent_ns[s] || receivers == 0 || mr.got[s] < receivers) continue;
        complete++;
        hist_record(rtt, mr.slowest_ns[s]);
    }
    uint64_t expected = window * receivers;
    const phase_stats *m = &merged[PHASE_MEASURE];
    json_object_begin(j);
    json_kv_u64(j, "broadcasts", window);
    json_kv_u64(j, "scheduled", b->scheduled);
    json_kv_u64(j, "unsent", b->scheduled > window ? b->scheduled - window : 0);
    json_kv_u64(j, "failed", b->failed);
    json_kv_u64(j, "broadcaster_lost", b->lost_broadcaster);
    json_kv_u64(j, "receivers", receivers);
    json_kv_u64(j, "expected", expected);
    json_kv_u64(j, "delivered", delivered);
    json_kv_u64(j, "missing", expected - delivered);
    json_kv_u64(j, "duplicates", duplicates);
    json_kv_u64(j, "foreign", foreign);
    json_key(j, "delivery_ratio");
    if (expected) json_double(j, (double)delivered / (double)expected, 6);
    else json_null(j);
    json_kv_u64(j, "complete", complete);
    json_kv_u64(j, "incomplete", window - complete);
    write_percentiles(j, "rtt_us", rtt);
    report_write_histogram(j, "rtt_histogram", rtt);
    write_percentiles(j, "delivery_us", &m->latency);
    report_write_histogram(j, "delivery_histogram", &m->latency);
    report_write_timeline(j, r, PHASE_MEASURE, "deliveries");
    json_key(j, "late_sends");
    json_object_begin(j);
    const histogram *late = b->lateness_ns;
    json_kv_double(j, "p50_us", (double)hist_percentile_ns(late, 50.0) / 1e3, 3);
    json_kv_double(j, "p99_us", (double)hist_percentile_ns(late, 99.0) / 1e3, 3);
    json_kv_double(j, "max_us", (double)late->max_ns / 1e3, 3);
    json_object_end(j);
    json_key(j, "per_broadcast");
    json_array_begin(j);
    for (uint64_t s = b->first_window_seq; s && s <= b->last_window_seq; s++) {
        if (!b->sent_ns[s]) continue;
        json_object_begin(j);
        json_kv_u64(j, "seq", s);
        json_kv_double(j, "sent_s", seconds(b->sent_ns[s] - r->clock->measure_start_ns), 6);
        json_kv_u64(j, "received", mr.got[s]);
        json_key(j, "last_us");
        if (mr.got[s]) json_double(j, (double)mr.slowest_ns[s] / 1e3, 3);
        else json_null(j);
        json_object_end(j);
    }
    json_array_end(j);
    write_http_broadcaster(j, b->http);
    json_key(j, "warmup");
    json_object_begin(j);
    json_kv_u64(j, "broadcasts", b->sent[PHASE_WARMUP]);
    json_kv_u64(j, "deliveries", merged[PHASE_WARMUP].requests);
    json_object_end(j);
    json_object_end(j);
    free(rtt);
    free(mr.got);
    free(mr.slowest_ns);
}

void ws_report_json(FILE *out, const run_result *r) {
    const engine_config *cfg = r->cfg;
    ws_conn_tally *tally = calloc(1, sizeof(*tally));
    phase_stats *merged = calloc(PHASE_COUNT, sizeof(phase_stats));
    if (!tally || !merged) { perror("rackbench-engine: out of memory"); exit(1); }
    for (int i = 0; i < r->worker_count; i++) ws_conn_tally_merge(tally, &ws_at(r, i)->tally);
    merge_phases(r, merged);

    json_writer jw, *j = &jw;
    json_init(j, out);
    json_object_begin(j);
    json_kv_string(j, "format", "rackbench-engine-ws");
    json_kv_u64(j, "format_version", WS_FORMAT_VERSION);
    json_kv_string(j, "engine_version", ENGINE_VERSION);
    json_kv_bool(j, "interrupted", r->interrupted);
    json_kv_string(j, "workload", workload_names[cfg->ws_workload]);
    write_settings(j, r);
    json_key(j, "nofile");
    json_object_begin(j);
    json_kv_u64(j, "needed", r->nofile.needed);
    json_kv_u64(j, "soft_before", r->nofile.soft_before);
    json_kv_u64(j, "hard_before", r->nofile.hard_before);
    json_kv_u64(j, "soft", r->nofile.soft);
    json_kv_bool(j, "raised", r->nofile.raised);
    json_object_end(j);
    json_key(j, "edges");
    json_object_begin(j);
    write_edge(j, r, "setup_start", r->setup_start_ns);
    write_edge(j, r, "setup_end", r->setup_end_ns);
    write_edge(j, r, "measure_start", r->measured_ns || !r->interrupted ? r->clock->measure_start_ns : 0);
    write_edge(j, r, "measure_end", r->measured_ns ? r->clock->measure_start_ns + r->measured_ns : 0);
    json_object_end(j);
    json_kv_double(j, "duration_s", seconds(r->measured_ns), 6);
    json_key(j, "warmup");
    json_object_begin(j);
    json_kv_double(j, "duration_s", seconds(r->warmup_actual_ns), 6);
    json_object_end(j);
    write_connect(j, r, tally);
    write_lost(j, tally);
    write_close_codes(j, tally);
    write_echo(j, r, merged);
    write_broadcast(j, r, merged);
    write_frames(j, tally);
    write_cable(j, r, tally);
    write_tls(j, r);
    report_write_cpu(j, r, "us_per_message", cfg->ws_workload == WS_WORKLOAD_CONNECT ? 0 : merged[PHASE_MEASURE].requests, 1);
    json_key(j, "memory");
    json_object_begin(j);
    json_kv_u64(j, "max_rss_bytes", report_peak_rss_bytes(&r->cpu_end));
    json_object_end(j);
    json_object_end(j);
    fputc('\n', out);
    free(tally);
    free(merged);
}
