/*
 * requests.c - see requests.h and doc/requests.md for the file format.
 * Load time only: what is sent per request is request_render.c's.
 */
#include "requests.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request_wire.h"

#define MAX_REQUEST_FILE_BYTES (64u << 20)

static void finish(request_set *set) {
    size_t weighted = set->count - set->first_count;
    set->cum_weight = calloc(weighted ? weighted : 1, sizeof(uint64_t));
    if (!set->cum_weight) { perror("rackbench-engine: out of memory"); exit(1); }
    uint64_t sum = 0;
    for (size_t i = 0; i < weighted; i++) {
        sum += set->items[set->first_count + i].weight;
        set->cum_weight[i] = sum;
    }
    set->total_weight = sum;
}

static const char *fail(char *err, size_t err_len, const char *file, size_t line, const char *msg) {
    snprintf(err, err_len, "%s:%zu: %s", file, line, msg);
    return err;
}

/* One entry being collected by the parser. */
typedef struct {
    size_t line_no;
    uint64_t weight;
    int first;
    char *name;
    const char *method, *target;
    size_t method_len, target_len;
    const char *headers[MAX_HEADERS];
    size_t header_lens[MAX_HEADERS];
    int header_count;
    const char *body;     /* start of body text, or NULL */
    const char *body_end;
    int follow;
    capture_spec captures[SESSION_MAX_CAPTURES];
    int capture_count;
    int probe;
    response_expect expect;
} entry;

static void free_captures(capture_spec *c, int count) {
    for (int i = 0; i < count; i++) {
        free(c[i].arg);
        if (c[i].has_regex) regfree(&c[i].regex);
    }
}

static int var_index(const request_set *set, const char *name, size_t n) {
    for (int i = 0; i < set->var_count; i++)
        if (strlen(set->var_names[i]) == n && memcmp(set->var_names[i], name, n) == 0) return i;
    return -1;
}

static int valid_var_name(const char *s, size_t n) {
    if (n == 0 || n >= SESSION_VAR_NAME_BYTES) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_') return 0;
    return 1;
}

/* "@users PATH" (path relative to the request file's directory): loads
 * the users and declares a variable "user.COLUMN" per column. */
static const char *load_users(request_set *set, const char *arg, size_t n, const char *file, size_t line_no,
                              char *err, size_t err_len) {
    while (n && (*arg == ' ' || *arg == '\t')) { arg++; n--; }
    while (n && (arg[n - 1] == ' ' || arg[n - 1] == '\t' || arg[n - 1] == '\r')) n--;
    if (!n) return fail(err, err_len, file, line_no, "@users needs a file: @users users.csv");
    if (set->users.row_count) return fail(err, err_len, file, line_no, "one @users line per file");
    const char *slash = strrchr(file, '/');
    size_t dir_len = arg[0] == '/' || !slash ? 0 : (size_t)(slash - file + 1);
    char *path = malloc(dir_len + n + 1);
    if (!path) { perror("rackbench-engine: out of memory"); exit(1); }
    memcpy(path, file, dir_len);
    memcpy(path + dir_len, arg, n);
    path[dir_len + n] = '\0';
    char why[512];
    const char *error = users_load(&set->users, path, SESSION_VAR_MAX_BYTES, why, sizeof(why));
    free(path);
    if (error) return fail(err, err_len, file, line_no, why);
    for (int k = 0; k < set->users.column_count; k++) {
        if (set->var_count >= SESSION_MAX_VARIABLES) {
            users_free(&set->users);
            return fail(err, err_len, file, line_no, "too many variables (at most 16, @users columns included)");
        }
        snprintf(set->var_names[set->var_count], SESSION_VAR_NAME_BYTES, "user.%s", set->users.columns[k]);
        set->user_vars[k] = set->var_count++;
    }
    return NULL;
}

/* Pre-pass: the names every "@capture NAME" line declares, so an entry may
 * use a variable captured by an entry further down the file, and the
 * columns of the "@users" file. */
static const char *collect_variables(request_set *set, const char *text, size_t len, const char *file, char *err,
                                     size_t err_len) {
    const char *p = text, *end = text + len;
    size_t line_no = 0;
    int seen_entry = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        line_no++;
        size_t n = (size_t)(line_end - p);
        if (n >= 3 && memcmp(p, "---", 3) == 0) seen_entry = 1;
        if (n > 7 && memcmp(p, "@users", 6) == 0 && (p[6] == ' ' || p[6] == '\t')) {
            if (seen_entry) return fail(err, err_len, file, line_no, "@users goes before the first entry");
            const char *error = load_users(set, p + 7, n - 7, file, line_no, err, err_len);
            if (error) return error;
        }
        if (n > 9 && memcmp(p, "@capture", 8) == 0 && (p[8] == ' ' || p[8] == '\t')) {
            const char *s = p + 9;
            while (s < line_end && (*s == ' ' || *s == '\t')) s++;
            const char *w = s;
            while (s < line_end && *s != ' ' && *s != '\t' && *s != '\r') s++;
            size_t wn = (size_t)(s - w);
            if (!valid_var_name(w, wn))
                return fail(err, err_len, file, line_no, "variable names are letters, digits and _ (at most 31)");
            if (var_index(set, w, wn) < 0) {
                if (set->var_count >= SESSION_MAX_VARIABLES)
                    return fail(err, err_len, file, line_no, "too many variables (at most 16)");
                memcpy(set->var_names[set->var_count], w, wn);
                set->var_names[set->var_count++][wn] = '\0';
            }
        }
        p = nl ? nl + 1 : end;
    }
    return NULL;
}

/* "@follow" or "@capture NAME SOURCE [regex=RE]" (doc/requests.md). */
static const char *parse_directive(request_set *set, entry *e, const char *p, size_t n, size_t line_no,
                                   const char *file, char *err, size_t err_len) {
    if (n == 7 && memcmp(p, "@follow", 7) == 0) { e->follow = 1; return NULL; }
    if (n > 8 && memcmp(p, "@expect", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
        char why[256];
        const char *error = expect_parse(&e->expect, p + 8, n - 8, set->var_names, set->var_count, why, sizeof(why));
        return error ? fail(err, err_len, file, line_no, error) : NULL;
    }
    if (n > 7 && memcmp(p, "@users", 6) == 0 && (p[6] == ' ' || p[6] == '\t'))
        return fail(err, err_len, file, line_no, "@users goes before the first entry");
    if (!(n > 9 && memcmp(p, "@capture", 8) == 0 && (p[8] == ' ' || p[8] == '\t')))
        return fail(err, err_len, file, line_no, "unknown directive (expected @capture, @follow or @expect)");
    if (e->capture_count >= SESSION_MAX_CAPTURES)
        return fail(err, err_len, file, line_no, "too many @capture lines in one entry (at most 8)");
    const char *end = p + n, *s = p + 9;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    const char *w = s;
    while (s < end && *s != ' ' && *s != '\t') s++;
    capture_spec *c = &e->captures[e->capture_count];
    memset(c, 0, sizeof(*c));
    c->var = var_index(set, w, (size_t)(s - w));
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    const char *src = s;
    while (s < end && *s != ' ' && *s != '\t') s++;
    size_t src_len = (size_t)(s - src);
    const char *arg = NULL;
    if (src_len == 4 && memcmp(src, "body", 4) == 0) c->source = CAPTURE_BODY;
    else if (src_len > 7 && memcmp(src, "header=", 7) == 0) { c->source = CAPTURE_HEADER; arg = src + 7; }
    else if (src_len > 5 && memcmp(src, "form=", 5) == 0) { c->source = CAPTURE_FORM; arg = src + 5; }
    else if (src_len > 5 && memcmp(src, "meta=", 5) == 0) { c->source = CAPTURE_META; arg = src + 5; }
    else
        return fail(err, err_len, file, line_no,
                    "expected @capture NAME SOURCE with SOURCE header=Name, body regex=RE, form=field or meta=name");
    if (arg) c->arg = strndup(arg, (size_t)(s - arg));
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    if (s < end) {
        if ((size_t)(end - s) <= 6 || memcmp(s, "regex=", 6) != 0 ||
            (c->source != CAPTURE_BODY && c->source != CAPTURE_HEADER)) {
            free(c->arg);
            return fail(err, err_len, file, line_no, "after the source only regex=RE may follow (body and header)");
        }
        char *pattern = strndup(s + 6, (size_t)(end - s - 6));
        int rc = regcomp(&c->regex, pattern, REG_EXTENDED);
        free(pattern);
        if (rc != 0) {
            char why[128], msg[200];
            regerror(rc, &c->regex, why, sizeof(why));
            snprintf(msg, sizeof(msg), "invalid regex: %s", why);
            free(c->arg);
            return fail(err, err_len, file, line_no, msg);
        }
        c->has_regex = 1;
        if (c->regex.re_nsub < 1) {
            regfree(&c->regex);
            free(c->arg);
            return fail(err, err_len, file, line_no, "the regex needs a group ( ... ): its first group is the value");
        }
    } else if (c->source == CAPTURE_BODY) {
        return fail(err, err_len, file, line_no, "@capture NAME body needs regex=RE");
    }
    e->capture_count++;
    return NULL;
}

/* Splits a rendered templated entry into its parts. */
static const char *parse_templates(request_set *set, request_template *t, size_t line_no, const char *file, char *err,
                                   size_t err_len) {
    size_t body_off = t->head_len + 2, body_len = t->wire_len - body_off;
    int max_parts = 2 * 1024;
    session_part *parts = malloc((size_t)max_parts * sizeof(*parts));
    if (!parts) { perror("rackbench-engine: out of memory"); exit(1); }
    const char *bad = NULL;
    size_t bad_len = 0;
    int head = session_parse_template(t->wire, t->head_len, set->var_names, set->var_count, parts, max_parts, &bad,
                                      &bad_len);
    int body = head < 0 ? head
                        : session_parse_template(t->wire + body_off, body_len, set->var_names, set->var_count,
                                                 parts + head, max_parts - head, &bad, &bad_len);
    if (head < 0 || body < 0) {
        free(parts);
        char msg[160];
        if (head == -2 || body == -2) snprintf(msg, sizeof(msg), "too many {{variable}} references (at most 1000)");
        else if (head == -3 || body == -3) snprintf(msg, sizeof(msg), "%.*s: the lowest value comes first", (int)bad_len, bad);
        else if (memchr(bad, '.', bad_len))
            snprintf(msg, sizeof(msg), "variable '%.*s' is not a column of the @users file", (int)bad_len, bad);
        else snprintf(msg, sizeof(msg), "variable '%.*s' is not captured by any @capture line", (int)bad_len, bad);
        return fail(err, err_len, file, line_no, msg);
    }
    /* Body literals point into the wire after the blank line (a random
     * part's offset is its lowest value, not a position). */
    for (int i = head; i < head + body; i++)
        if (parts[i].var == SESSION_PART_LITERAL) parts[i].offset += (uint32_t)body_off;
    t->head_parts = parts;
    t->head_part_count = head;
    t->body_parts = parts + head;
    t->body_part_count = body;
    /* The Content-Length line's room: 16 + 20 digits + CRLF, then CRLF. */
    t->render_bound = session_render_bound(parts, head + body) + 64;
    if (t->render_bound > set->render_bound) set->render_bound = t->render_bound;
    set->templated = 1;
    return NULL;
}

/* 1 if text holds a {{name}} / {{name:url}} of a known variable. */
static int has_reference(const request_set *set, const char *text, size_t len) {
    session_part parts[3];
    const char *bad;
    size_t bad_len;
    for (size_t i = 0; i + 1 < len; i++) {
        if (text[i] != '{' || text[i + 1] != '{') continue;
        size_t rest = len - i;
        if (rest > 2 + SESSION_VAR_NAME_BYTES + 6) rest = 2 + SESSION_VAR_NAME_BYTES + 6;
        int r = session_parse_template(text + i, rest, (char (*)[SESSION_VAR_NAME_BYTES])set->var_names,
                                       set->var_count, parts, 3, &bad, &bad_len);
        if (r == -1 || r == -3 || (r > 0 && parts[0].var != SESSION_PART_LITERAL)) return 1;
    }
    return 0;
}

static const char *parse_attributes(entry *e, const char *s, const char *end, const char *file, char *err,
                                    size_t err_len) {
    while (s < end) {
        while (s < end && (*s == ' ' || *s == '\t')) s++;
        if (s >= end) break;
        const char *w = s;
        while (s < end && *s != ' ' && *s != '\t') s++;
        size_t n = (size_t)(s - w);
        if (n == 5 && memcmp(w, "first", 5) == 0) {
            e->first = 1;
        } else if (n == 5 && memcmp(w, "probe", 5) == 0) {
            e->probe = 1;
        } else if (n > 7 && memcmp(w, "weight=", 7) == 0) {
            char tmp[32];
            size_t dn = n - 7;
            if (dn >= sizeof(tmp)) return fail(err, err_len, file, e->line_no, "weight too large");
            memcpy(tmp, w + 7, dn);
            tmp[dn] = '\0';
            char *stop;
            errno = 0;
            unsigned long long v = strtoull(tmp, &stop, 10);
            if (errno || *stop || tmp[0] == '-' || v > 1000000000ULL)
                return fail(err, err_len, file, e->line_no, "weight must be an integer 0-1000000000");
            e->weight = v;
        } else if (n > 5 && memcmp(w, "name=", 5) == 0) {
            free(e->name);
            e->name = strndup(w + 5, n - 5);
        } else {
            return fail(err, err_len, file, e->line_no,
                        "unknown entry attribute (expected weight=N, first, probe, name=TEXT)");
        }
    }
    return NULL;
}

static const char *add_entry(request_set *set, const engine_config *cfg, entry *e, const char *file, char *err,
                             size_t err_len) {
    if (!e->method) return fail(err, err_len, file, e->line_no, "entry has no request line (METHOD /path)");
    if (e->probe && e->first) return fail(err, err_len, file, e->line_no, "an entry is first or probe, not both");
    for (int i = 0; i < e->capture_count; i++)
        if (e->captures[i].var < 0) return fail(err, err_len, file, e->line_no, "internal: capture without variable");
    request_template *items = realloc(set->items, (set->count + 1) * sizeof(*items));
    if (!items) { perror("rackbench-engine: out of memory"); exit(1); }
    set->items = items;
    request_template *t = &set->items[set->count++];
    memset(t, 0, sizeof(*t));
    const char *body = e->body;
    size_t body_len = 0;
    if (body) {
        const char *end = e->body_end;
        /* The body's final line breaks separate it from the next entry. */
        while (end > body && (end[-1] == '\n' || end[-1] == '\r')) end--;
        body_len = (size_t)(end - body);
    }
    int body_templated = has_reference(set, body, body_len);
    if (body_templated && request_headers_have(e->headers, e->header_lens, e->header_count, "Content-Length"))
        return fail(err, err_len, file, e->line_no,
                    "an entry whose body uses {{variables}} cannot set Content-Length (it is computed per request)");
    request_wire_build(t, cfg, e->method, e->method_len, e->target, e->target_len, e->headers, e->header_lens,
           e->header_count, body, body_len, body_templated);
    t->name = e->name;
    e->name = NULL;
    t->first = e->first;
    t->probe = e->probe;
    /* A probe is sent at the window's edges only, never picked by the mix. */
    t->weight = e->first || e->probe ? 0 : e->weight;
    t->expect = e->expect; /* owned by t now */
    memset(&e->expect, 0, sizeof(e->expect));
    if (expect_any(&t->expect)) {
        set->expects = 1;
        set->header_work = 1; /* a Location names where a failed check went */
        if (t->expect.body) { t->keeps_body = 1; set->body_captures = 1; }
    }
    t->index = set->count - 1;
    t->follow = e->follow;
    if (e->capture_count) {
        t->captures = malloc((size_t)e->capture_count * sizeof(capture_spec));
        if (!t->captures) { perror("rackbench-engine: out of memory"); exit(1); }
        memcpy(t->captures, e->captures, (size_t)e->capture_count * sizeof(capture_spec));
        t->capture_count = e->capture_count;
        e->capture_count = 0; /* owned by t now */
        for (int i = 0; i < t->capture_count; i++) {
            if (t->captures[i].source == CAPTURE_HEADER) t->header_captures++;
            else t->body_captures++;
        }
        if (t->body_captures) { set->body_captures = 1; t->keeps_body = 1; }
        if (t->header_captures) set->header_work = 1;
    }
    if (t->follow) set->header_work = 1;
    if (has_reference(set, t->wire, t->wire_len)) {
        t->templated = 1;
        return parse_templates(set, t, e->line_no, file, err, err_len);
    }
    return NULL;
}

const char *requests_parse(request_set *set, const engine_config *cfg, const char *text, size_t len,
                           const char *file, char *err, size_t err_len) {
    memset(set, 0, sizeof(*set));
    set->from_file = 1;
    enum { OUTSIDE, REQUEST_LINE, HEADERS, BODY } state = OUTSIDE;
    entry e;
    memset(&e, 0, sizeof(e));
    const char *p = text, *end = text + len;
    size_t line_no = 0;
    const char *error = collect_variables(set, text, len, file, err, err_len);
    if (error) return error;
    while (p < end && !error) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        const char *content_end = line_end > p && line_end[-1] == '\r' ? line_end - 1 : line_end;
        size_t n = (size_t)(content_end - p);
        line_no++;
        if (memchr(p, '\0', (size_t)(line_end - p))) { error = fail(err, err_len, file, line_no, "NUL byte in file"); break; }
        int is_entry = n >= 3 && memcmp(p, "---", 3) == 0 && (n == 3 || p[3] == ' ' || p[3] == '\t');
        if (is_entry) {
            if (state != OUTSIDE) {
                if (state == BODY) e.body_end = p;
                if ((error = add_entry(set, cfg, &e, file, err, err_len))) break;
            }
            free_captures(e.captures, e.capture_count);
            expect_free(&e.expect);
            memset(&e, 0, sizeof(e));
            e.line_no = line_no;
            e.weight = 1;
            error = parse_attributes(&e, p + 3, content_end, file, err, err_len);
            state = REQUEST_LINE;
        } else if (state == OUTSIDE || state == REQUEST_LINE) {
            size_t skip = 0;
            while (skip < n && (p[skip] == ' ' || p[skip] == '\t')) skip++;
            if (skip == n || p[skip] == '#') { p = next; continue; }
            /* @users was read by the pre-pass (collect_variables). */
            if (state == OUTSIDE && n > 7 && memcmp(p, "@users", 6) == 0 && (p[6] == ' ' || p[6] == '\t')) {
                p = next;
                continue;
            }
            if (state == OUTSIDE) { error = fail(err, err_len, file, line_no, "expected an entry line starting with ---"); break; }
            if (p[0] == '@') {
                if ((error = parse_directive(set, &e, p, n, line_no, file, err, err_len))) break;
                p = next;
                continue;
            }
            const char *sp = memchr(p, ' ', n);
            if (!sp || sp == p) { error = fail(err, err_len, file, line_no, "expected a request line: METHOD /path"); break; }
            for (const char *c = p; c < sp; c++)
                if (*c < 'A' || *c > 'Z') { error = fail(err, err_len, file, line_no, "method must be upper-case letters"); break; }
            if (error) break;
            const char *target = sp + 1;
            size_t target_len = (size_t)(content_end - target);
            int bad_char = 0, in_reference = 0;
            for (size_t i = 0; i < target_len; i++) {
                /* "{{random 1..200}}" holds a space; the rendered target does not. */
                if (i + 1 < target_len && target[i] == '{' && target[i + 1] == '{') in_reference = 1;
                if (i > 0 && target[i - 1] == '}' && target[i] == '}') in_reference = 0;
                if (((unsigned char)target[i] <= ' ' && !(in_reference && target[i] == ' ')) || target[i] == 0x7f)
                    bad_char = 1;
            }
            if (target_len == 0 || *target != '/' || bad_char) {
                error = fail(err, err_len, file, line_no, "request target must be a path starting with / and without spaces");
                break;
            }
            e.method = p;
            e.method_len = (size_t)(sp - p);
            e.target = target;
            e.target_len = target_len;
            state = HEADERS;
        } else if (state == HEADERS) {
            if (n == 0) { state = BODY; e.body = next; e.body_end = next; p = next; continue; }
            const char *colon = memchr(p, ':', n);
            if (!colon || colon == p || memchr(p, ' ', (size_t)(colon - p))) {
                error = fail(err, err_len, file, line_no, "expected a header line 'Name: value'");
                break;
            }
            if (e.header_count >= MAX_HEADERS) { error = fail(err, err_len, file, line_no, "too many headers"); break; }
            if (request_header_is(p, n, "Transfer-Encoding")) {
                /* Bodies are sent whole with Content-Length; a chunked body
                 * would need framing this format does not express. */
                error = fail(err, err_len, file, line_no, "Transfer-Encoding is not supported (bodies are sent with Content-Length)");
                break;
            }
            e.headers[e.header_count] = p;
            e.header_lens[e.header_count++] = n;
        } else { /* BODY */
            e.body_end = next;
        }
        p = next;
    }
    if (!error && state != OUTSIDE) error = add_entry(set, cfg, &e, file, err, err_len);
    free(e.name);
    free_captures(e.captures, e.capture_count);
    expect_free(&e.expect);
    if (!error && set->count == 0) error = fail(err, err_len, file, line_no, "no requests in file");
    if (error) { requests_free(set); return error; }
    /* "first" entries keep their file order, ahead of the weighted mix. */
    request_template *sorted = malloc(set->count * sizeof(*sorted));
    if (!sorted) { perror("rackbench-engine: out of memory"); exit(1); }
    size_t k = 0;
    for (size_t i = 0; i < set->count; i++) if (set->items[i].first) sorted[k++] = set->items[i];
    set->first_count = k;
    for (size_t i = 0; i < set->count; i++) if (!set->items[i].first) sorted[k++] = set->items[i];
    free(set->items);
    set->items = sorted;
    finish(set);
    for (size_t i = 0; i < set->count; i++) {
        if (!set->items[i].probe) continue;
        size_t *probes = realloc(set->probes, (set->probe_count + 1) * sizeof(size_t));
        if (!probes) { perror("rackbench-engine: out of memory"); exit(1); }
        set->probes = probes;
        set->probes[set->probe_count++] = i;
    }
    if (set->first_count == set->count || set->total_weight == 0) {
        requests_free(set);
        return fail(err, err_len, file, line_no, "no entry with weight > 0 to choose from");
    }
    return NULL;
}

const char *requests_load(request_set *set, const engine_config *cfg, char *err, size_t err_len) {
    memset(set, 0, sizeof(*set));
    if (!cfg->requests_file) {
        set->items = calloc(1, sizeof(request_template));
        if (!set->items) { perror("rackbench-engine: out of memory"); exit(1); }
        set->count = 1;
        request_wire_build(&set->items[0], cfg, cfg->method, strlen(cfg->method), cfg->path, strlen(cfg->path), NULL,
                           NULL, 0, cfg->body, cfg->body_len, 0);
        set->items[0].weight = 1;
        finish(set);
        return NULL;
    }
    FILE *f = fopen(cfg->requests_file, "rb");
    if (!f) { snprintf(err, err_len, "cannot open --requests file %s: %s", cfg->requests_file, strerror(errno)); return err; }
    /* The whole file in memory, read in chunks into a buffer that doubles. */
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[65536];
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (len + n > MAX_REQUEST_FILE_BYTES) {
            fclose(f);
            free(text);
            snprintf(err, err_len, "--requests file %s is larger than 64 MB", cfg->requests_file);
            return err;
        }
        if (len + n > cap) {
            cap = cap ? cap * 2 : sizeof(chunk);
            while (cap < len + n) cap *= 2;
            char *grown = realloc(text, cap);
            if (!grown) { perror("rackbench-engine: out of memory"); exit(1); }
            text = grown;
        }
        memcpy(text + len, chunk, n);
        len += n;
    }
    int read_failed = ferror(f);
    fclose(f);
    if (read_failed) { free(text); snprintf(err, err_len, "cannot read --requests file %s", cfg->requests_file); return err; }
    const char *r = requests_parse(set, cfg, text ? text : "", len, cfg->requests_file, err, err_len);
    free(text);
    return r;
}

void requests_free(request_set *set) {
    for (size_t i = 0; i < set->count; i++) {
        request_template *t = &set->items[i];
        free(t->wire);
        free(t->name);
        free_captures(t->captures, t->capture_count);
        free(t->captures);
        free(t->head_parts); /* body_parts share its allocation */
        expect_free(&t->expect);
    }
    free(set->items);
    free(set->cum_weight);
    free(set->probes);
    users_free(&set->users);
    memset(set, 0, sizeof(*set));
}

