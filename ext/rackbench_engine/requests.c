/* requests.c - see requests.h and doc/requests.md for the file format. */
#include "requests.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQUEST_FILE_BYTES (64u << 20)

/* A growable byte buffer used only while building requests, before the run. */
typedef struct {
    char *data;
    size_t len, cap;
} buf;

static void buf_add(buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *data = realloc(b->data, cap);
        if (!data) { perror("rackbench-engine: out of memory"); exit(1); }
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void buf_str(buf *b, const char *s) { buf_add(b, s, strlen(s)); }

/* Case-insensitive "does this header block line start with name:" */
static int header_is(const char *line, size_t line_len, const char *name) {
    size_t n = strlen(name);
    return line_len > n && line[n] == ':' && strncasecmp(line, name, n) == 0;
}

static int has_header(const char *const *lines, const size_t *lens, int count, const char *name) {
    for (int i = 0; i < count; i++)
        if (header_is(lines[i], lens[i], name)) return 1;
    return 0;
}

static int contains_token_ci(const char *s, size_t n, const char *token) {
    size_t t = strlen(token);
    for (size_t i = 0; i + t <= n; i++)
        if (strncasecmp(s + i, token, t) == 0) return 1;
    return 0;
}

/* Renders one request. lines/lens: the entry's own header lines; the
 * command line's -H headers follow unless the entry set the same name. */
static void render(request_template *t, const engine_config *cfg, const char *method, size_t method_len,
                   const char *target, size_t target_len, const char *const *lines, const size_t *lens,
                   int count, const char *body, size_t body_len) {
    buf b = {0};
    buf_add(&b, method, method_len);
    buf_str(&b, " ");
    buf_add(&b, target, target_len);
    buf_str(&b, " HTTP/1.1\r\n");
    const char *all[MAX_HEADERS * 2];
    size_t all_len[MAX_HEADERS * 2];
    int n = 0;
    for (int i = 0; i < count; i++) { all[n] = lines[i]; all_len[n++] = lens[i]; }
    for (int i = 0; i < cfg->header_count; i++) {
        const char *h = cfg->headers[i];
        size_t name_len = (size_t)(strchr(h, ':') - h);
        char name[256];
        if (name_len >= sizeof(name)) name_len = sizeof(name) - 1;
        memcpy(name, h, name_len);
        name[name_len] = '\0';
        if (!has_header(lines, lens, count, name)) { all[n] = h; all_len[n++] = strlen(h); }
    }
    if (!has_header(all, all_len, n, "Host")) {
        buf_str(&b, "Host: ");
        int ipv6 = strchr(cfg->host, ':') != NULL;
        if (ipv6) buf_str(&b, "[");
        buf_str(&b, cfg->host);
        if (ipv6) buf_str(&b, "]");
        if (strcmp(cfg->port, "80") != 0) { buf_str(&b, ":"); buf_str(&b, cfg->port); }
        buf_str(&b, "\r\n");
    }
    if (!has_header(all, all_len, n, "User-Agent")) buf_str(&b, "User-Agent: rackbench-engine/" ENGINE_VERSION "\r\n");
    t->asks_close = 0;
    for (int i = 0; i < n; i++) {
        buf_add(&b, all[i], all_len[i]);
        buf_str(&b, "\r\n");
        if (header_is(all[i], all_len[i], "Connection") && contains_token_ci(all[i], all_len[i], "close"))
            t->asks_close = 1;
    }
    int wants_length = body_len > 0 || (method_len == 4 && memcmp(method, "POST", 4) == 0) ||
                       (method_len == 3 && memcmp(method, "PUT", 3) == 0) ||
                       (method_len == 5 && memcmp(method, "PATCH", 5) == 0);
    if (wants_length && !has_header(all, all_len, n, "Content-Length")) {
        char cl[48];
        snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n", body_len);
        buf_str(&b, cl);
    }
    t->head_len = b.len;
    buf_str(&b, "\r\n");
    if (body_len) buf_add(&b, body, body_len);
    t->wire = b.data;
    t->wire_len = b.len;
    t->is_head = method_len == 4 && memcmp(method, "HEAD", 4) == 0;
}

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
} entry;

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
                        "unknown entry attribute (expected weight=N, first, name=TEXT)");
        }
    }
    return NULL;
}

static const char *add_entry(request_set *set, const engine_config *cfg, entry *e, const char *file, char *err,
                             size_t err_len) {
    if (!e->method) return fail(err, err_len, file, e->line_no, "entry has no request line (METHOD /path)");
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
    render(t, cfg, e->method, e->method_len, e->target, e->target_len, e->headers, e->header_lens,
           e->header_count, body, body_len);
    t->name = e->name;
    e->name = NULL;
    t->first = e->first;
    t->weight = e->first ? 0 : e->weight;
    return NULL;
}

const char *requests_parse(request_set *set, const engine_config *cfg, const char *text, size_t len,
                           const char *file, char *err, size_t err_len) {
    memset(set, 0, sizeof(*set));
    enum { OUTSIDE, REQUEST_LINE, HEADERS, BODY } state = OUTSIDE;
    entry e;
    memset(&e, 0, sizeof(e));
    const char *p = text, *end = text + len;
    size_t line_no = 0;
    const char *error = NULL;
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
            memset(&e, 0, sizeof(e));
            e.line_no = line_no;
            e.weight = 1;
            error = parse_attributes(&e, p + 3, content_end, file, err, err_len);
            state = REQUEST_LINE;
        } else if (state == OUTSIDE || state == REQUEST_LINE) {
            size_t skip = 0;
            while (skip < n && (p[skip] == ' ' || p[skip] == '\t')) skip++;
            if (skip == n || p[skip] == '#') { p = next; continue; }
            if (state == OUTSIDE) { error = fail(err, err_len, file, line_no, "expected an entry line starting with ---"); break; }
            const char *sp = memchr(p, ' ', n);
            if (!sp || sp == p) { error = fail(err, err_len, file, line_no, "expected a request line: METHOD /path"); break; }
            for (const char *c = p; c < sp; c++)
                if (*c < 'A' || *c > 'Z') { error = fail(err, err_len, file, line_no, "method must be upper-case letters"); break; }
            if (error) break;
            const char *target = sp + 1;
            size_t target_len = (size_t)(content_end - target);
            int bad_char = 0;
            for (size_t i = 0; i < target_len; i++)
                if ((unsigned char)target[i] <= ' ' || target[i] == 0x7f) bad_char = 1;
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
            if (header_is(p, n, "Transfer-Encoding")) {
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
        render(&set->items[0], cfg, cfg->method, strlen(cfg->method), cfg->path, strlen(cfg->path), NULL, NULL, 0,
               cfg->body, cfg->body_len);
        set->items[0].weight = 1;
        finish(set);
        return NULL;
    }
    FILE *f = fopen(cfg->requests_file, "rb");
    if (!f) { snprintf(err, err_len, "cannot open --requests file %s: %s", cfg->requests_file, strerror(errno)); return err; }
    buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (b.len + n > MAX_REQUEST_FILE_BYTES) {
            fclose(f);
            free(b.data);
            snprintf(err, err_len, "--requests file %s is larger than 64 MB", cfg->requests_file);
            return err;
        }
        buf_add(&b, chunk, n);
    }
    int read_failed = ferror(f);
    fclose(f);
    if (read_failed) { free(b.data); snprintf(err, err_len, "cannot read --requests file %s", cfg->requests_file); return err; }
    const char *r = requests_parse(set, cfg, b.data ? b.data : "", b.len, cfg->requests_file, err, err_len);
    free(b.data);
    return r;
}

void requests_free(request_set *set) {
    for (size_t i = 0; i < set->count; i++) { free(set->items[i].wire); free(set->items[i].name); }
    free(set->items);
    free(set->cum_weight);
    memset(set, 0, sizeof(*set));
}

const request_template *requests_next(const request_set *set, rng *r, size_t *first_done) {
    if (*first_done < set->first_count) return &set->items[(*first_done)++];
    if (set->count - set->first_count == 1) return &set->items[set->first_count];
    uint64_t pick = rng_below(r, set->total_weight);
    /* Binary search for the first cumulative weight above pick. */
    size_t lo = 0, hi = set->count - set->first_count - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->cum_weight[mid] > pick) hi = mid;
        else lo = mid + 1;
    }
    return &set->items[set->first_count + lo];
}
