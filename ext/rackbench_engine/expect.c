/* expect.c - see expect.h. */
#include "expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPECT_MAX_PARTS 64

static const char *parse_status(response_expect *e, const char *v, size_t n) {
    if (e->status) return "one @expect status= per entry";
    if (n == 3 && v[0] >= '1' && v[0] <= '9' && v[1] == 'x' && v[2] == 'x') {
        e->status = v[0] - '0';
        return NULL;
    }
    if (n == 3 && v[0] >= '1' && v[0] <= '9' && v[1] >= '0' && v[1] <= '9' && v[2] >= '0' && v[2] <= '9') {
        e->status = (v[0] - '0') * 100 + (v[1] - '0') * 10 + (v[2] - '0');
        return NULL;
    }
    return "@expect status= takes a status (200) or a class (2xx)";
}

const char *expect_parse(response_expect *e, const char *text, size_t len, char names[][SESSION_VAR_NAME_BYTES],
                         int name_count, char *err, size_t err_len) {
    if (len > 7 && memcmp(text, "status=", 7) == 0) return parse_status(e, text + 7, len - 7);
    if (!(len > 5 && memcmp(text, "body=", 5) == 0))
        return "expected @expect status=NNN, status=Nxx or body=TEXT";
    if (e->body) return "one @expect body= per entry";
    const char *v = text + 5;
    size_t n = len - 5;
    session_part parts[EXPECT_MAX_PARTS];
    const char *bad = NULL;
    size_t bad_len = 0;
    int count = session_parse_template(v, n, names, name_count, parts, EXPECT_MAX_PARTS, &bad, &bad_len);
    if (count == -2) return "too many {{references}} in @expect body=";
    if (count < 0) {
        snprintf(err, err_len, "@expect body= uses '%.*s', which no @capture or @users column names", (int)bad_len, bad);
        return err;
    }
    if (session_render_bound(parts, count) > EXPECT_BODY_MAX_BYTES * 2)
        return "@expect body= text is too long (at most 1024 bytes once rendered)";
    e->body = strndup(v, n);
    e->parts = malloc((size_t)(count ? count : 1) * sizeof(*parts));
    if (!e->body || !e->parts) { perror("rackbench-engine: out of memory"); exit(1); }
    memcpy(e->parts, parts, (size_t)count * sizeof(*parts));
    e->part_count = count;
    e->body_len = n;
    return NULL;
}

static int status_matches(int want, int status) {
    if (!want) return 1;
    if (want < 10) return status / 100 == want;
    return status == want;
}

int expect_check(const response_expect *e, int status, const char *body, size_t body_len, session_vars *vars,
                 const char *location, size_t location_len, char *why, size_t why_len) {
    if (!status_matches(e->status, status)) {
        char want[16];
        if (e->status < 10) snprintf(want, sizeof(want), "%dxx", e->status);
        else snprintf(want, sizeof(want), "%d", e->status);
        if (location && location_len)
            snprintf(why, why_len, "status %d to %.*s, expected %s", status, (int)(location_len > 120 ? 120 : location_len),
                     location, want);
        else
            snprintf(why, why_len, "status %d, expected %s", status, want);
        return 0;
    }
    if (!e->body) return 1;
    char text[EXPECT_BODY_MAX_BYTES * 2];
    int missing;
    size_t n = session_render(e->body, e->parts, e->part_count, vars, text, sizeof(text), &missing);
    if (n == SIZE_MAX) {
        snprintf(why, why_len, "the expected body text could not be rendered (a variable without a value)");
        return 0;
    }
    if (n == 0 || (body && memmem(body, body_len, text, n))) return 1;
    if (location && location_len)
        snprintf(why, why_len, "status %d to %.*s: the body does not contain '%.*s'", status,
                 (int)(location_len > 120 ? 120 : location_len), location, (int)(n > 80 ? 80 : n), text);
    else
        snprintf(why, why_len, "status %d: the body does not contain '%.*s'", status, (int)(n > 80 ? 80 : n), text);
    return 0;
}

void expect_free(response_expect *e) {
    free(e->body);
    free(e->parts);
    memset(e, 0, sizeof(*e));
}
