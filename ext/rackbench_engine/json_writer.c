/* json_writer.c - see json_writer.h. */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>

void json_init(json_writer *j, FILE *out) {
    j->out = out;
    j->depth = 0;
    j->need_comma[0] = 0;
}

/* Before any value: a comma if a sibling precedes it (keys write their own). */
static void before_value(json_writer *j) {
    if (j->need_comma[j->depth] == 1) fputc(',', j->out);
    j->need_comma[j->depth] = 1;
}

static void write_escaped(json_writer *j, const char *s);

void json_key(json_writer *j, const char *key) {
    if (j->need_comma[j->depth]) fputc(',', j->out);
    write_escaped(j, key);
    fputc(':', j->out);
    /* The value that follows must not add a comma of its own. */
    j->need_comma[j->depth] = 2;
}

static void open_container(json_writer *j, char c) {
    before_value(j);
    fputc(c, j->out);
    if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
    j->need_comma[j->depth] = 0;
}

static void close_container(json_writer *j, char c) {
    fputc(c, j->out);
    if (j->depth > 0) j->depth--;
    j->need_comma[j->depth] = 1;
}

void json_object_begin(json_writer *j) { open_container(j, '{'); }
void json_object_end(json_writer *j) { close_container(j, '}'); }
void json_array_begin(json_writer *j) { open_container(j, '['); }
void json_array_end(json_writer *j) { close_container(j, ']'); }

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not one.
 * Overlong forms, surrogates and values above U+10FFFF are invalid. */
static int utf8_sequence_len(const unsigned char *p) {
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    int n;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; }
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0; /* also stops at the NUL */
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

/* Strings come from the user (URL, headers, file names): control
 * characters are escaped and invalid UTF-8 becomes U+FFFD, so the document
 * is always valid JSON. */
static void write_escaped(json_writer *j, const char *s) {
    FILE *o = j->out;
    fputc('"', o);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        switch (*p) {
        case '"': fputs("\\\"", o); p++; continue;
        case '\\': fputs("\\\\", o); p++; continue;
        case '\n': fputs("\\n", o); p++; continue;
        case '\r': fputs("\\r", o); p++; continue;
        case '\t': fputs("\\t", o); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7f) {
            fprintf(o, "\\u%04x", *p);
            p++;
            continue;
        }
        int n = utf8_sequence_len(p);
        if (n == 0) {
            fputs("\\ufffd", o);
            p++;
        } else {
            fwrite(p, 1, (size_t)n, o);
            p += n;
        }
    }
    fputc('"', o);
}

void json_string(json_writer *j, const char *s) {
    before_value(j);
    write_escaped(j, s);
}

void json_u64(json_writer *j, uint64_t v) {
    before_value(j);
    fprintf(j->out, "%" PRIu64, v);
}

void json_i64(json_writer *j, int64_t v) {
    before_value(j);
    fprintf(j->out, "%" PRId64, v);
}

void json_double(json_writer *j, double v, int decimals) {
    before_value(j);
    if (!isfinite(v)) fputs("null", j->out);
    else fprintf(j->out, "%.*f", decimals, v);
}

void json_bool(json_writer *j, int v) {
    before_value(j);
    fputs(v ? "true" : "false", j->out);
}

void json_null(json_writer *j) {
    before_value(j);
    fputs("null", j->out);
}

void json_kv_u64(json_writer *j, const char *key, uint64_t v) { json_key(j, key); json_u64(j, v); }
void json_kv_double(json_writer *j, const char *key, double v, int decimals) {
    json_key(j, key);
    json_double(j, v, decimals);
}
void json_kv_string(json_writer *j, const char *key, const char *s) {
    json_key(j, key);
    if (s) json_string(j, s);
    else json_null(j);
}
void json_kv_bool(json_writer *j, const char *key, int v) { json_key(j, key); json_bool(j, v); }
