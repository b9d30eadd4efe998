/* request_wire.c - see request_wire.h. */
#include "request_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

int request_header_is(const char *line, size_t line_len, const char *name) {
    size_t n = strlen(name);
    return line_len > n && line[n] == ':' && strncasecmp(line, name, n) == 0;
}

int request_headers_have(const char *const *lines, const size_t *lens, int count, const char *name) {
    for (int i = 0; i < count; i++)
        if (request_header_is(lines[i], lens[i], name)) return 1;
    return 0;
}

static int contains_token_ci(const char *s, size_t n, const char *token) {
    size_t t = strlen(token);
    for (size_t i = 0; i + t <= n; i++)
        if (strncasecmp(s + i, token, t) == 0) return 1;
    return 0;
}

void request_wire_build(request_template *t, const engine_config *cfg, const char *method, size_t method_len,
                        const char *target, size_t target_len, const char *const *lines, const size_t *lens,
                        int count, const char *body, size_t body_len, int body_templated) {
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
        if (!request_headers_have(lines, lens, count, name)) { all[n] = h; all_len[n++] = strlen(h); }
    }
    if (!request_headers_have(all, all_len, n, "Host")) {
        buf_str(&b, "Host: ");
        int ipv6 = strchr(cfg->host, ':') != NULL;
        if (ipv6) buf_str(&b, "[");
        buf_str(&b, cfg->host);
        if (ipv6) buf_str(&b, "]");
        if (strcmp(cfg->port, "80") != 0) { buf_str(&b, ":"); buf_str(&b, cfg->port); }
        buf_str(&b, "\r\n");
    }
    if (!request_headers_have(all, all_len, n, "User-Agent")) buf_str(&b, "User-Agent: rackbench-engine/" ENGINE_VERSION "\r\n");
    t->asks_close = 0;
    for (int i = 0; i < n; i++) {
        buf_add(&b, all[i], all_len[i]);
        buf_str(&b, "\r\n");
        if (request_header_is(all[i], all_len[i], "Connection") && contains_token_ci(all[i], all_len[i], "close"))
            t->asks_close = 1;
    }
    int wants_length = body_len > 0 || (method_len == 4 && memcmp(method, "POST", 4) == 0) ||
                       (method_len == 3 && memcmp(method, "PUT", 3) == 0) ||
                       (method_len == 5 && memcmp(method, "PATCH", 5) == 0);
    t->dynamic_length = wants_length && body_templated;
    if (wants_length && !body_templated && !request_headers_have(all, all_len, n, "Content-Length")) {
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
