/* session.c - see session.h and doc/requests.md. */
#include "session.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
static int is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* Reads a decimal integer below 2^32 at text[*i, len). 1 and advances *i,
 * or 0. */
static int read_u32(const char *text, size_t len, size_t *i, uint32_t *out) {
    uint64_t v = 0;
    size_t start = *i;
    while (*i < len && text[*i] >= '0' && text[*i] <= '9' && *i - start < SESSION_RANDOM_MAX_DIGITS) {
        v = v * 10 + (uint64_t)(text[*i] - '0');
        (*i)++;
    }
    if (*i == start || v > UINT32_MAX) return 0;
    *out = (uint32_t)v;
    return 1;
}

/* "{{random LO..HI}}" at text[i] ("{{" included): 1 with the bounds and
 * *end just past it, or 0 when it is not one. */
static int random_reference(const char *text, size_t len, size_t i, uint32_t *lo, uint32_t *hi, size_t *end) {
    size_t j = i + 2;
    if (j + 7 > len || memcmp(text + j, "random ", 7) != 0) return 0;
    j += 7;
    if (!read_u32(text, len, &j, lo) || j + 2 > len || text[j] != '.' || text[j + 1] != '.') return 0;
    j += 2;
    if (!read_u32(text, len, &j, hi) || j + 2 > len || text[j] != '}' || text[j + 1] != '}') return 0;
    *end = j + 2;
    return 1;
}
static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Appends code point cp as UTF-8. Returns 0, or -1 when out is full. */
static int put_utf8(unsigned long cp, char *out, size_t cap, size_t *n) {
    unsigned char b[4];
    size_t k;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    if (cp < 0x80) { b[0] = (unsigned char)cp; k = 1; }
    else if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | (cp >> 6)); b[1] = (unsigned char)(0x80 | (cp & 0x3F)); k = 2; }
    else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        b[0] = (unsigned char)(0xF0 | (cp >> 18));
        b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (unsigned char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    if (*n + k > cap) return -1;
    memcpy(out + *n, b, k);
    *n += k;
    return 0;
}

/* Decodes the entities an attribute value carries; an unknown or
 * malformed one stays as written. Returns 0, or -1 when out is full. */
static int decode_entities(const char *s, size_t len, char *out, size_t cap, size_t *out_len) {
    static const struct { const char *name; char c; } named[] = {
        {"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        if (s[i] == '&') {
            size_t rest = len - i - 1;
            const char *e = s + i + 1;
            int done = 0;
            for (size_t k = 0; k < sizeof(named) / sizeof(named[0]) && !done; k++) {
                size_t nl = strlen(named[k].name);
                if (rest >= nl && memcmp(e, named[k].name, nl) == 0) {
                    if (n + 1 > cap) return -1;
                    out[n++] = named[k].c;
                    i += 1 + nl;
                    done = 1;
                }
            }
            if (!done && rest >= 3 && e[0] == '#') {
                int hex = e[1] == 'x' || e[1] == 'X';
                size_t j = hex ? 2 : 1;
                unsigned long cp = 0;
                size_t digits = 0;
                while (j < rest && digits < 8) {
                    int v = hex ? hex_value(e[j]) : (e[j] >= '0' && e[j] <= '9' ? e[j] - '0' : -1);
                    if (v < 0) break;
                    cp = cp * (hex ? 16 : 10) + (unsigned long)v;
                    j++;
                    digits++;
                }
                if (digits > 0 && j < rest && e[j] == ';') {
                    if (put_utf8(cp, out, cap, &n)) return -1;
                    i += 1 + j + 1;
                    done = 1;
                }
            }
            if (done) continue;
        }
        if (n + 1 > cap) return -1;
        out[n++] = s[i++];
    }
    *out_len = n;
    return 0;
}

typedef struct {
    const char *name, *value;
    size_t name_len, value_len;
    int has_value;
} html_attr;

/* Parses the next attribute of a tag at *p (before end). Returns 1 with
 * *a filled, 0 at the tag's '>', -1 when the text ends first. */
static int next_attr(const char **p, const char *end, html_attr *a) {
    const char *s = *p;
    while (s < end && (is_space(*s) || *s == '/')) s++;
    if (s >= end) return -1;
    if (*s == '>') { *p = s + 1; return 0; }
    a->name = s;
    while (s < end && !is_space(*s) && *s != '=' && *s != '>' && *s != '/') s++;
    a->name_len = (size_t)(s - a->name);
    if (a->name_len == 0) { s++; *p = s; a->has_value = 0; a->name_len = 0; return 1; } /* stray '=' */
    while (s < end && is_space(*s)) s++;
    a->has_value = 0;
    a->value = NULL;
    a->value_len = 0;
    if (s < end && *s == '=') {
        s++;
        while (s < end && is_space(*s)) s++;
        if (s >= end) return -1;
        a->has_value = 1;
        if (*s == '"' || *s == '\'') {
            char q = *s++;
            const char *close = memchr(s, q, (size_t)(end - s));
            if (!close) return -1;
            a->value = s;
            a->value_len = (size_t)(close - s);
            s = close + 1;
        } else {
            a->value = s;
            while (s < end && !is_space(*s) && *s != '>') s++;
            a->value_len = (size_t)(s - a->value);
        }
    }
    if (s >= end) return -1;
    *p = s;
    return 1;
}

static int attr_is(const html_attr *a, const char *name) {
    size_t n = strlen(name);
    return a->name_len == n && strncasecmp(a->name, name, n) == 0;
}

int session_extract_attr(const char *text, size_t len, const char *tag, const char *key_attr, const char *key_value,
                         const char *value_attr, char *out, size_t cap, size_t *out_len) {
    size_t tag_len = strlen(tag), key_len = strlen(key_value);
    const char *end = text + len;
    const char *p = text;
    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt) return EXTRACT_MISSING;
        p = lt + 1;
        if ((size_t)(end - p) <= tag_len || strncasecmp(p, tag, tag_len) != 0 || !is_space(p[tag_len])) continue;
        p += tag_len;
        html_attr a = {0}, value = {0};
        int key_matches = 0, r;
        while ((r = next_attr(&p, end, &a)) == 1) {
            if (attr_is(&a, key_attr))
                key_matches = a.has_value && a.value_len == key_len && memcmp(a.value, key_value, key_len) == 0;
            else if (attr_is(&a, value_attr)) value = a;
        }
        if (r < 0) return EXTRACT_MISSING; /* the text ends inside the tag */
        if (!key_matches) continue;
        if (!value.has_value) { *out_len = 0; return EXTRACT_FOUND; }
        return decode_entities(value.value, value.value_len, out, cap, out_len) ? EXTRACT_TOO_LONG : EXTRACT_FOUND;
    }
    return EXTRACT_MISSING;
}

size_t session_url_encode(const char *in, size_t len, char *out, size_t cap) {
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '*' ||
                   c == '-' || c == '.' || c == '_';
        if (keep || c == ' ') {
            if (n + 1 > cap) return SIZE_MAX;
            out[n++] = c == ' ' ? '+' : (char)c;
        } else {
            if (n + 3 > cap) return SIZE_MAX;
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    return n;
}

int session_parse_template(const char *text, size_t len, char names[][SESSION_VAR_NAME_BYTES], int name_count,
                           session_part *parts, int max_parts, const char **bad_name, size_t *bad_len) {
    int count = 0;
    size_t literal_start = 0, i = 0;
    while (i + 1 < len) {
        if (text[i] != '{' || text[i + 1] != '{') { i++; continue; }
        uint32_t lo, hi;
        size_t random_end;
        if (random_reference(text, len, i, &lo, &hi, &random_end)) {
            if (lo > hi) {
                *bad_name = text + i;
                *bad_len = random_end - i;
                return -3;
            }
            if (i > literal_start) {
                if (count >= max_parts) return -2;
                parts[count++] = (session_part){(uint32_t)literal_start, (uint32_t)(i - literal_start), -1, 0};
            }
            if (count >= max_parts) return -2;
            parts[count++] = (session_part){lo, hi, SESSION_PART_RANDOM, 0};
            i = random_end;
            literal_start = i;
            continue;
        }
        size_t j = i + 2, name_start = j;
        while (j < len && is_name_char(text[j])) j++;
        size_t name_len = j - name_start;
        int url = 0;
        if (j + 4 <= len && memcmp(text + j, ":url", 4) == 0) { url = 1; j += 4; }
        if (name_len == 0 || name_len >= SESSION_VAR_NAME_BYTES || j + 2 > len || text[j] != '}' ||
            text[j + 1] != '}') {
            i++;
            continue; /* not a reference: literal text */
        }
        int var = -1;
        for (int k = 0; k < name_count; k++)
            if (strlen(names[k]) == name_len && memcmp(names[k], text + name_start, name_len) == 0) var = k;
        if (var < 0) {
            *bad_name = text + name_start;
            *bad_len = name_len;
            return -1;
        }
        if (i > literal_start) {
            if (count >= max_parts) return -2;
            parts[count++] = (session_part){(uint32_t)literal_start, (uint32_t)(i - literal_start), -1, 0};
        }
        if (count >= max_parts) return -2;
        parts[count++] = (session_part){0, 0, (int16_t)var, (uint8_t)url};
        i = j + 2;
        literal_start = i;
    }
    if (len > literal_start) {
        if (count >= max_parts) return -2;
        parts[count++] = (session_part){(uint32_t)literal_start, (uint32_t)(len - literal_start), -1, 0};
    }
    return count;
}

size_t session_render(const char *text, const session_part *parts, int part_count, session_vars *vars,
                      char *out, size_t cap, int *missing_var) {
    size_t n = 0;
    *missing_var = -1;
    for (int i = 0; i < part_count; i++) {
        const session_part *p = &parts[i];
        if (p->var == SESSION_PART_LITERAL) {
            if (n + p->len > cap) return SIZE_MAX;
            memcpy(out + n, text + p->offset, p->len);
            n += p->len;
            continue;
        }
        if (p->var == SESSION_PART_RANDOM) {
            uint64_t value = p->offset + rng_below(&vars->random, (uint64_t)p->len - p->offset + 1);
            char digits[SESSION_RANDOM_MAX_DIGITS + 1];
            int d = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)value);
            if (n + (size_t)d > cap) return SIZE_MAX;
            memcpy(out + n, digits, (size_t)d);
            n += (size_t)d;
            continue;
        }
        if (!vars->set[p->var]) {
            *missing_var = p->var;
            return SIZE_MAX;
        }
        const char *v = vars->value[p->var];
        size_t vlen = vars->len[p->var];
        if (p->url_encode) {
            size_t e = session_url_encode(v, vlen, out + n, cap - n);
            if (e == SIZE_MAX) return SIZE_MAX;
            n += e;
        } else {
            if (n + vlen > cap) return SIZE_MAX;
            memcpy(out + n, v, vlen);
            n += vlen;
        }
    }
    return n;
}

size_t session_render_bound(const session_part *parts, int part_count) {
    size_t n = 0;
    for (int i = 0; i < part_count; i++)
        n += parts[i].var == SESSION_PART_LITERAL  ? parts[i].len
             : parts[i].var == SESSION_PART_RANDOM ? SESSION_RANDOM_MAX_DIGITS
                                                   : (parts[i].url_encode ? 3 : 1) * (size_t)SESSION_VAR_MAX_BYTES;
    return n;
}

int session_is_redirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* Compares "host[:port]" (authority, brackets for IPv6) with the run's;
 * a port left out is the scheme's default, default_port. */
static int same_authority(const char *a, size_t n, const char *host, const char *port, const char *default_port) {
    const char *h = a, *p = NULL;
    size_t hn, pn = 0;
    if (n > 0 && a[0] == '[') {
        const char *close = memchr(a, ']', n);
        if (!close) return 0;
        h = a + 1;
        hn = (size_t)(close - h);
        const char *after = close + 1;
        if (after < a + n) {
            if (*after != ':') return 0;
            p = after + 1;
            pn = (size_t)(a + n - p);
        }
    } else {
        const char *colon = memchr(a, ':', n);
        hn = colon ? (size_t)(colon - a) : n;
        if (colon) { p = colon + 1; pn = (size_t)(a + n - p); }
    }
    if (hn != strlen(host) || strncasecmp(h, host, hn) != 0) return 0;
    if (p && pn > 0) return pn == strlen(port) && memcmp(p, port, pn) == 0;
    return strcmp(port, default_port) == 0;
}

int session_location_target(const char *loc, size_t len, const char *host, const char *port, int tls,
                            const char *base_target, size_t base_len, char *out, size_t cap, size_t *out_len) {
    const char *scheme = tls ? "https" : "http";
    size_t scheme_len = tls ? 5 : 4;
    if (len == 0) return -1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)loc[i] <= ' ' || loc[i] == 0x7f) return -1;
    const char *hash = memchr(loc, '#', len);
    if (hash) len = (size_t)(hash - loc);
    const char *path = NULL;
    size_t path_len = 0;
    /* A scheme: letters, digits, + - . before a ':' that precedes any '/'. */
    size_t k = 0;
    while (k < len && ((loc[k] >= 'a' && loc[k] <= 'z') || (loc[k] >= 'A' && loc[k] <= 'Z') ||
                       (k > 0 && ((loc[k] >= '0' && loc[k] <= '9') || loc[k] == '+' || loc[k] == '-' || loc[k] == '.'))))
        k++;
    const char *authority = NULL;
    if (k > 0 && k < len && loc[k] == ':') {
        /* Another scheme (mailto, or http from an https:// run and back) is another origin. */
        if (k != scheme_len || strncasecmp(loc, scheme, scheme_len) != 0) return 0;
        if (len < k + 3 || loc[k + 1] != '/' || loc[k + 2] != '/') return -1;
        authority = loc + k + 3;
    } else if (len >= 2 && loc[0] == '/' && loc[1] == '/') {
        authority = loc + 2;
    }
    if (authority) {
        const char *stop = authority;
        while (stop < loc + len && *stop != '/' && *stop != '?') stop++;
        if (!same_authority(authority, (size_t)(stop - authority), host, port, tls ? "443" : "80")) return 0;
        path = stop;
        path_len = (size_t)(loc + len - stop);
        size_t n = 0;
        if (path_len == 0 || path[0] != '/') { if (cap < 1) return -1; out[n++] = '/'; }
        if (n + path_len > cap) return -1;
        memcpy(out + n, path, path_len);
        *out_len = n + path_len;
        return 1;
    }
    if (loc[0] == '/') {
        if (len > cap) return -1;
        memcpy(out, loc, len);
        *out_len = len;
        return 1;
    }
    /* Relative reference: the base's directory (or the base itself for a
     * query-only reference), then the reference; dot segments resolved. */
    const char *q = memchr(base_target, '?', base_len);
    size_t base_path_len = q ? (size_t)(q - base_target) : base_len;
    size_t n = 0;
    if (loc[0] == '?') {
        if (base_path_len + len > cap) return -1;
        memcpy(out, base_target, base_path_len);
        memcpy(out + base_path_len, loc, len);
        *out_len = base_path_len + len;
        return 1;
    }
    size_t dir_len = base_path_len;
    while (dir_len > 0 && base_target[dir_len - 1] != '/') dir_len--;
    if (dir_len == 0) { if (cap < 1) return -1; out[n++] = '/'; }
    else { if (dir_len > cap) return -1; memcpy(out, base_target, dir_len); n = dir_len; }
    const char *s = loc, *end = loc + len;
    while (s < end) {
        const char *seg_end = s;
        while (seg_end < end && *seg_end != '/' && *seg_end != '?') seg_end++;
        size_t seg = (size_t)(seg_end - s);
        if (seg == 1 && s[0] == '.') {
            /* stays in the directory */
        } else if (seg == 2 && s[0] == '.' && s[1] == '.') {
            if (n > 1) {
                n--; /* the trailing '/' */
                while (n > 0 && out[n - 1] != '/') n--;
            }
        } else {
            if (n + seg > cap) return -1;
            memcpy(out + n, s, seg);
            n += seg;
            if (seg_end < end && *seg_end == '?') {
                if (n + (size_t)(end - seg_end) > cap) return -1;
                memcpy(out + n, seg_end, (size_t)(end - seg_end));
                n += (size_t)(end - seg_end);
                break;
            }
            if (seg_end < end) { if (n + 1 > cap) return -1; out[n++] = '/'; }
            s = seg_end < end ? seg_end + 1 : end;
            continue;
        }
        if (seg_end < end && *seg_end == '?') {
            if (n + (size_t)(end - seg_end) > cap) return -1;
            memcpy(out + n, seg_end, (size_t)(end - seg_end));
            n += (size_t)(end - seg_end);
            break;
        }
        s = seg_end < end ? seg_end + 1 : end;
    }
    *out_len = n;
    return 1;
}

int session_redirect_as_get(int status, const char *wire, size_t wire_len) {
    if (status != 301 && status != 302 && status != 303) return 0;
    if (wire_len >= 4 && (memcmp(wire, "GET ", 4) == 0)) return 0;
    if (wire_len >= 5 && (memcmp(wire, "HEAD ", 5) == 0)) return 0;
    return 1;
}

static int line_is_header(const char *line, size_t n, const char *name) {
    size_t k = strlen(name);
    return n > k && line[k] == ':' && strncasecmp(line, name, k) == 0;
}

size_t session_redirect_request(const char *wire, size_t head_len, size_t wire_len, int as_get, const char *target,
                                size_t target_len, char *out, size_t cap, size_t *out_head_len) {
    const char *sp = memchr(wire, ' ', head_len);
    const char *eol = memchr(wire, '\n', head_len);
    if (!sp || !eol || eol < sp) return SIZE_MAX;
    const char *sp2 = memchr(sp + 1, ' ', (size_t)(eol - sp - 1));
    if (!sp2) return SIZE_MAX;
    size_t n = 0;
#define PUT(p, len)                                   \
    do {                                              \
        if (n + (len) > cap) return SIZE_MAX;         \
        memcpy(out + n, (p), (len));                  \
        n += (len);                                   \
    } while (0)
    if (as_get) PUT("GET", 3);
    else PUT(wire, (size_t)(sp - wire));
    PUT(" ", 1);
    PUT(target, target_len);
    PUT(sp2, (size_t)(eol + 1 - sp2)); /* " HTTP/1.1\r\n" */
    const char *line = eol + 1, *head_end = wire + head_len;
    while (line < head_end) {
        const char *nl = memchr(line, '\n', (size_t)(head_end - line));
        const char *next = nl ? nl + 1 : head_end;
        size_t len = (size_t)(next - line);
        if (!(as_get && (line_is_header(line, len, "Content-Length") || line_is_header(line, len, "Content-Type"))))
            PUT(line, len);
        line = next;
    }
    *out_head_len = n;
    PUT("\r\n", 2);
    if (!as_get && wire_len > head_len + 2) PUT(wire + head_len + 2, wire_len - head_len - 2);
#undef PUT
    return n;
}
