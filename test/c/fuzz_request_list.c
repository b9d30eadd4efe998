/*
 * fuzz_request_list.c - libFuzzer target for what a request list brings
 * in before a run: the request-list parser (entries, @capture, @expect,
 * probe entries, {{variables}} and {{random LO..HI}}) and the @users CSV
 * reader.
 *
 * Input layout: byte 0 picks the target (even: request list, odd: users
 * CSV); the rest is the file's text. Any broken invariant aborts:
 *   - a parsed list has at least one weighted entry; its probe indexes
 *     point at probe entries; every templated entry renders into its
 *     render_bound with every variable set (random values included);
 *   - an @expect check on any body never reads outside it;
 *   - a parsed users file has rows of exactly its column count, each
 *     value within the bound and of the length recorded.
 * Both parsers must free everything on every path (LeakSanitizer).
 *
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined ... (see Rakefile)
 */
#include "requests.h"
#include "request_render.h"
#include "users.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static engine_config cfg;

static void check_list(const char *text, size_t len) {
    request_set set;
    char err[512];
    if (requests_parse(&set, &cfg, text, len, "fuzz.requests", err, sizeof err)) return;
    if (set.total_weight == 0) abort();
    for (size_t i = 0; i < set.probe_count; i++)
        if (set.probes[i] >= set.count || !set.items[set.probes[i]].probe) abort();
    session_vars *vars = calloc(1, sizeof(*vars));
    if (!vars) abort();
    for (int v = 0; v < SESSION_MAX_VARIABLES; v++) {
        vars->set[v] = 1;
        vars->len[v] = SESSION_VAR_MAX_BYTES;
        memset(vars->value[v], '/', SESSION_VAR_MAX_BYTES);
    }
    for (size_t i = 0; i < set.count; i++) {
        const request_template *t = &set.items[i];
        if (t->templated) {
            char *out = malloc(t->render_bound);
            size_t head;
            int missing;
            size_t n = requests_render(t, vars, out, t->render_bound, &head, &missing);
            if (n == SIZE_MAX || n > t->render_bound || head > n) abort();
            free(out);
        }
        if (expect_any(&t->expect)) {
            char why[160];
            /* A body of exactly its length (malloc'd: ASan sees over-reads). */
            size_t body_len = len % 64;
            char *body = malloc(body_len ? body_len : 1);
            memcpy(body, text, body_len);
            expect_check(&t->expect, 200, body, body_len, vars, "/login", 6, why, sizeof why);
            free(body);
        }
    }
    free(vars);
    requests_free(&set);
}

static void check_users(const char *text, size_t len) {
    user_table t;
    char err[512];
    if (users_parse(&t, text, len, "fuzz.csv", 64, err, sizeof err)) return;
    if (t.column_count < 1 || t.column_count > USERS_MAX_COLUMNS || t.row_count < 1) abort();
    for (size_t c = 0; c < t.row_count * (size_t)t.column_count; c++)
        if (t.cell_lens[c] > 64 || strlen(t.cells[c]) != t.cell_lens[c]) abort();
    users_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    strcpy(cfg.host, "127.0.0.1");
    strcpy(cfg.port, "8080");
    /* The parsers take text of a given length: copied so that a read past
     * it faults under ASan. */
    size_t len = size - 1;
    char *text = malloc(len ? len : 1);
    memcpy(text, data + 1, len);
    if (data[0] & 1) check_users(text, len);
    else check_list(text, len);
    free(text);
    return 0;
}
