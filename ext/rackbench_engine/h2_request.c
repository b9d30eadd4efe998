/* h2_request.c - see h2_request.h. */
#include "h2_request.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Header fields that describe one HTTP/1.1 connection: an HTTP/2 request
 * carrying them is malformed (RFC 9113 section 8.2.2). Host becomes
 * :authority. */
static int dropped_header(const char *name, size_t len) {
    static const char *const names[] = {"host", "connection", "keep-alive", "proxy-connection",
                                        "transfer-encoding", "upgrade", "te"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == len && strncasecmp(names[i], name, len) == 0) return 1;
    return 0;
}

static void set_nv(nghttp2_nv *nv, char *name, size_t name_len, char *value, size_t value_len) {
    nv->name = (uint8_t *)name;
    nv->namelen = name_len;
    nv->value = (uint8_t *)value;
    nv->valuelen = value_len;
    nv->flags = NGHTTP2_NV_FLAG_NONE;
}

/* Copies n bytes of src into *cursor (lowercased if asked) and returns
 * where they went. */
static char *put(char **cursor, const char *src, size_t n, int lower) {
    char *dst = *cursor;
    for (size_t i = 0; i < n; i++) dst[i] = lower ? (char)tolower((unsigned char)src[i]) : src[i];
    *cursor += n;
    return dst;
}

int h2_request_from_wire(h2_request *r, const char *wire, size_t wire_len, size_t head_len, const char *authority) {
    memset(r, 0, sizeof(*r));
    const char *line_end = memchr(wire, '\r', head_len);
    const char *sp1 = line_end ? memchr(wire, ' ', (size_t)(line_end - wire)) : NULL;
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
    if (!sp2 || sp1 == wire || sp2 == sp1 + 1) return -1;
    size_t lines = 0;
    for (size_t i = 0; i < head_len; i++) lines += wire[i] == '\n';
    r->headers = calloc(lines + 4, sizeof(nghttp2_nv));
    /* Everything fits in the head plus the authority and the pseudo names. */
    r->storage = malloc(head_len + strlen(authority) + 64);
    if (!r->headers || !r->storage) return -1;
    char *cursor = r->storage;
    size_t n = 0;
    char *method = put(&cursor, wire, (size_t)(sp1 - wire), 0);
    set_nv(&r->headers[n++], put(&cursor, ":method", 7, 0), 7, method, (size_t)(sp1 - wire));
    set_nv(&r->headers[n++], put(&cursor, ":scheme", 7, 0), 7, put(&cursor, "http", 4, 0), 4);
    size_t authority_index = n++;
    char *auth = put(&cursor, authority, strlen(authority), 0);
    set_nv(&r->headers[authority_index], put(&cursor, ":authority", 10, 0), 10, auth, strlen(authority));
    size_t path_len = (size_t)(sp2 - sp1 - 1);
    char *path = put(&cursor, sp1 + 1, path_len, 0);
    set_nv(&r->headers[n++], put(&cursor, ":path", 5, 0), 5, path, path_len);
    const char *p = line_end + 2;
    const char *end = wire + head_len;
    while (p < end) {
        const char *eol = memchr(p, '\r', (size_t)(end - p));
        if (!eol) eol = end;
        const char *colon = memchr(p, ':', (size_t)(eol - p));
        if (colon && colon > p) {
            size_t name_len = (size_t)(colon - p);
            const char *v = colon + 1;
            while (v < eol && (*v == ' ' || *v == '\t')) v++;
            size_t value_len = (size_t)(eol - v);
            if (name_len == 4 && strncasecmp(p, "host", 4) == 0) {
                /* The request's own Host wins over the URL's. */
                r->headers[authority_index].value = (uint8_t *)put(&cursor, v, value_len, 0);
                r->headers[authority_index].valuelen = value_len;
            } else if (!dropped_header(p, name_len)) {
                char *name = put(&cursor, p, name_len, 1);
                set_nv(&r->headers[n++], name, name_len, put(&cursor, v, value_len, 0), value_len);
            }
        }
        p = eol + 2;
    }
    r->header_count = n;
    if (wire_len > head_len + 2) {
        r->body = (const uint8_t *)wire + head_len + 2;
        r->body_len = wire_len - head_len - 2;
    }
    return 0;
}

const char *h2_requests_build(h2_request **out, const request_set *set, const engine_config *cfg, char *err,
                              size_t err_len) {
    char authority[300];
    int ipv6 = strchr(cfg->host, ':') != NULL;
    snprintf(authority, sizeof(authority), ipv6 ? "[%s]:%s" : "%s:%s", cfg->host, cfg->port);
    h2_request *reqs = calloc(set->count ? set->count : 1, sizeof(h2_request));
    if (!reqs) {
        snprintf(err, err_len, "out of memory");
        return err;
    }
    for (size_t i = 0; i < set->count; i++) {
        const request_template *t = &set->items[i];
        if (h2_request_from_wire(&reqs[i], t->wire, t->wire_len, t->head_len, authority)) {
            h2_requests_free(reqs, i + 1);
            snprintf(err, err_len, "request %zu cannot be sent over HTTP/2 (malformed request line)", t->index + 1);
            return err;
        }
        /* The second field is :scheme, "http" as translated: https:// says https. */
        if (cfg->tls) {
            reqs[i].headers[1].value = (uint8_t *)"https";
            reqs[i].headers[1].valuelen = 5;
        }
    }
    *out = reqs;
    return NULL;
}

void h2_requests_free(h2_request *reqs, size_t count) {
    if (!reqs) return;
    for (size_t i = 0; i < count; i++) {
        free(reqs[i].headers);
        free(reqs[i].storage);
    }
    free(reqs);
}
