/* cable.c - see cable.h. */
#include "cable.h"

#include <stdio.h>
#include <string.h>

/* --- reading the server's messages -------------------------------------- */

typedef struct {
    const uint8_t *p, *end;
} cursor;

static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')) c->p++;
}

/* A JSON string at the cursor (its opening quote): its bytes between the
 * quotes, escapes left as they are. 0, or -1 when it does not end. */
static int string_span(cursor *c, const uint8_t **s, size_t *len) {
    if (c->p >= c->end || *c->p != '"') return -1;
    const uint8_t *start = ++c->p;
    while (c->p < c->end) {
        if (*c->p == '\\') {
            if (c->end - c->p < 2) return -1;
            c->p += 2;
            continue;
        }
        if (*c->p == '"') {
            *s = start;
            *len = (size_t)(c->p - start);
            c->p++;
            return 0;
        }
        c->p++;
    }
    return -1;
}

/* Skips one JSON value (nested objects and arrays by depth, strings with
 * their escapes, numbers and literals as runs of their characters). 0, or
 * -1 when the bytes end inside it. A value of another shape is skipped as
 * far as it looks like one: the scanner reads, it does not validate. */
static int skip_value(cursor *c) {
    skip_space(c);
    if (c->p >= c->end) return -1;
    if (*c->p == '"') {
        const uint8_t *s;
        size_t n;
        return string_span(c, &s, &n);
    }
    if (*c->p == '{' || *c->p == '[') {
        int depth = 0;
        while (c->p < c->end) {
            uint8_t ch = *c->p;
            if (ch == '"') {
                const uint8_t *s;
                size_t n;
                if (string_span(c, &s, &n)) return -1;
                continue;
            }
            if (ch == '{' || ch == '[') depth++;
            if (ch == '}' || ch == ']') depth--;
            c->p++;
            if (depth == 0) return 0;
        }
        return -1;
    }
    const uint8_t *start = c->p;
    while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ']' && *c->p != ' ' && *c->p != '\t' &&
           *c->p != '\r' && *c->p != '\n')
        c->p++;
    return c->p > start ? 0 : -1;
}

static int is(const uint8_t *s, size_t n, const char *text) { return strlen(text) == n && memcmp(s, text, n) == 0; }

void cable_read(const uint8_t *data, size_t len, cable_frame *out) {
    memset(out, 0, sizeof(*out));
    out->kind = CABLE_NOT_JSON;
    cursor c = {data, data + len};
    skip_space(&c);
    if (c.p >= c.end || *c.p != '{') return;
    c.p++;
    const uint8_t *type = NULL, *message = NULL, *reason = NULL;
    size_t type_len = 0, message_len = 0, reason_len = 0;
    int has_identifier = 0, members = 0;
    for (;;) {
        skip_space(&c);
        if (c.p < c.end && *c.p == '}' && members == 0) break; /* {} */
        members++;
        const uint8_t *key;
        size_t key_len;
        if (string_span(&c, &key, &key_len)) return;
        skip_space(&c);
        if (c.p >= c.end || *c.p != ':') return;
        c.p++;
        skip_space(&c);
        const uint8_t *value = c.p;
        if (is(key, key_len, "type") || is(key, key_len, "reason")) {
            const uint8_t *s = NULL;
            size_t n = 0;
            if (c.p < c.end && *c.p == '"') {
                if (string_span(&c, &s, &n)) return;
            } else if (skip_value(&c)) {
                return;
            }
            if (is(key, key_len, "type")) { type = s; type_len = n; }
            else { reason = s; reason_len = n; }
        } else {
            if (skip_value(&c)) return;
            if (is(key, key_len, "message")) {
                message = value;
                message_len = (size_t)(c.p - value);
            }
            if (is(key, key_len, "identifier")) has_identifier = 1;
        }
        skip_space(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            continue;
        }
        if (c.p < c.end && *c.p == '}') break;
        return;
    }
    c.p++;
    skip_space(&c);
    if (c.p != c.end) return; /* more after the object */
    out->kind = CABLE_OTHER;
    if (type) {
        if (is(type, type_len, "welcome")) out->kind = CABLE_WELCOME;
        else if (is(type, type_len, "ping")) out->kind = CABLE_PING;
        else if (is(type, type_len, "confirm_subscription")) out->kind = CABLE_CONFIRM;
        else if (is(type, type_len, "reject_subscription")) out->kind = CABLE_REJECT;
        else if (is(type, type_len, "disconnect")) out->kind = CABLE_DISCONNECT;
    } else if (message && has_identifier) {
        out->kind = CABLE_MESSAGE;
        out->value = message;
        out->value_len = message_len;
    }
    out->reason = reason;
    out->reason_len = reason_len;
}

/* --- writing the client's commands -------------------------------------- */

/* Appends n bytes of text to out, escaped as the inside of a JSON string
 * when escape is set. Sets *len past cap on overflow. */
static void put(char *out, size_t cap, size_t *len, const char *text, size_t n, int escape) {
    for (size_t i = 0; i < n; i++) {
        char ch = text[i];
        if (escape && (ch == '"' || ch == '\\')) {
            if (*len < cap) out[*len] = '\\';
            (*len)++;
        }
        if (*len < cap) out[*len] = ch;
        (*len)++;
    }
}

static void put_str(char *out, size_t cap, size_t *len, const char *text, int escape) {
    put(out, cap, len, text, strlen(text), escape);
}

size_t cable_identifier(char *out, size_t cap, const char *channel, const char *params, char *err, size_t err_len) {
    if (!channel || !*channel) {
        snprintf(err, err_len, "Action Cable needs a channel (--channel NAME)");
        return 0;
    }
    for (const char *p = channel; *p; p++) {
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) {
            snprintf(err, err_len, "the channel name may not hold quotes, backslashes or control characters");
            return 0;
        }
    }
    const char *inner = NULL;
    size_t inner_len = 0;
    if (params) {
        size_t n = strlen(params);
        while (n && (params[n - 1] == ' ' || params[n - 1] == '\n')) n--;
        const char *p = params;
        while (n && (*p == ' ' || *p == '\n')) { p++; n--; }
        if (n < 2 || p[0] != '{' || p[n - 1] != '}') {
            snprintf(err, err_len, "--channel-params must be a JSON object, e.g. '{\"room\":\"1\"}'");
            return 0;
        }
        inner = p + 1;
        inner_len = n - 2;
        while (inner_len && (*inner == ' ')) { inner++; inner_len--; }
    }
    size_t len = 0;
    put_str(out, cap, &len, "{\"channel\":\"", 0);
    put_str(out, cap, &len, channel, 0);
    put_str(out, cap, &len, "\"", 0);
    if (inner_len) {
        put_str(out, cap, &len, ",", 0);
        put(out, cap, &len, inner, inner_len, 0);
    }
    put_str(out, cap, &len, "}", 0);
    if (len >= cap) {
        snprintf(err, err_len, "the channel's identifier is longer than %zu bytes", cap - 1);
        return 0;
    }
    out[len] = '\0';
    return len;
}

size_t cable_subscribe(char *out, size_t cap, const char *identifier) {
    size_t len = 0;
    put_str(out, cap, &len, "{\"command\":\"subscribe\",\"identifier\":\"", 0);
    put_str(out, cap, &len, identifier, 1);
    put_str(out, cap, &len, "\"}", 0);
    return len <= cap ? len : 0;
}

size_t cable_perform(char *out, size_t cap, const char *identifier, const char *action, const char *body,
                     size_t body_len) {
    size_t len = 0;
    put_str(out, cap, &len, "{\"command\":\"message\",\"identifier\":\"", 0);
    put_str(out, cap, &len, identifier, 1);
    put_str(out, cap, &len, "\",\"data\":\"{\\\"action\\\":\\\"", 0);
    put_str(out, cap, &len, action, 1);
    put_str(out, cap, &len, "\\\"", 0);
    /* The body's members after the action: body is {...}. */
    if (body_len > 2) {
        put_str(out, cap, &len, ",", 0);
        put(out, cap, &len, body + 1, body_len - 2, 1);
    }
    put_str(out, cap, &len, "}\"}", 0);
    return len <= cap ? len : 0;
}
