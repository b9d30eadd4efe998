/* http1_session.c - see http1_session.h. */
#include "http1_session.h"

#include "expect.h"
#include "request_render.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "worker.h"

/* Stores a captured value in the slot's variable, or reports it too long. */
static int store_var(slot_session *s, const capture_spec *cap, int index, const char *v, size_t n) {
    if (n > SESSION_VAR_MAX_BYTES) return 0;
    memcpy(s->vars.value[cap->var], v, n);
    s->vars.len[cap->var] = (uint16_t)n;
    s->vars.set[cap->var] = 1;
    s->captured |= 1u << index;
    return 1;
}

/* Applies cap's regex (if any) to text (NUL-terminated at text[len]) and
 * stores the first group, or the whole text without a regex. */
static void capture_text(slot_session *s, const capture_spec *cap, int index, const char *text, size_t len) {
    if (!cap->has_regex) {
        store_var(s, cap, index, text, len);
        return;
    }
    regmatch_t m[2];
    if (regexec(&cap->regex, text, 2, m, 0) == 0 && m[1].rm_so >= 0)
        store_var(s, cap, index, text + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
}

void http1_session_header(slot_session *s, const request_template *req, const char *name, size_t name_len,
                          const char *value, size_t value_len) {
    if ((req->follow || expect_any(&req->expect)) && name_len == 8 && strncasecmp(name, "location", 8) == 0) {
        if (value_len <= sizeof(s->location)) {
            memcpy(s->location, value, value_len);
            s->location_len = value_len;
            s->location_state = 1;
        } else {
            s->location_state = -1;
        }
    }
    for (int i = 0; i < req->capture_count; i++) {
        const capture_spec *cap = &req->captures[i];
        if (cap->source != CAPTURE_HEADER || strlen(cap->arg) != name_len || strncasecmp(cap->arg, name, name_len))
            continue;
        if (cap->has_regex) {
            /* regexec needs a NUL: the value is bounded by the parser's line limit. */
            char text[HTTP_MAX_LINE_BYTES + 1];
            size_t n = value_len < HTTP_MAX_LINE_BYTES ? value_len : HTTP_MAX_LINE_BYTES;
            memcpy(text, value, n);
            text[n] = '\0';
            capture_text(s, cap, i, text, n);
        } else {
            capture_text(s, cap, i, value, value_len);
        }
    }
}

/* Keeps the first SESSION_BODY_MAX_BYTES of a body for the captures. */
static void on_body(void *ctx, const char *data, size_t len) {
    slot_session *s = ctx;
    size_t room = SESSION_BODY_MAX_BYTES - s->body_len;
    if (len > room) len = room;
    memcpy(s->body + s->body_len, data, len);
    s->body_len += len;
}

/* Runs the entry's body captures on the kept body. */
static void capture_body(slot_session *s, const request_template *req) {
    s->body[s->body_len] = '\0';
    char value[SESSION_VAR_MAX_BYTES];
    for (int i = 0; i < req->capture_count; i++) {
        const capture_spec *cap = &req->captures[i];
        size_t n = 0;
        int r = EXTRACT_MISSING;
        switch (cap->source) {
        case CAPTURE_BODY: capture_text(s, cap, i, s->body, s->body_len); continue;
        case CAPTURE_FORM:
            r = session_extract_attr(s->body, s->body_len, "input", "name", cap->arg, "value", value, sizeof(value), &n);
            break;
        case CAPTURE_META:
            r = session_extract_attr(s->body, s->body_len, "meta", "name", cap->arg, "content", value, sizeof(value), &n);
            break;
        case CAPTURE_HEADER: continue;
        }
        if (r == EXTRACT_FOUND) store_var(s, cap, i, value, n);
    }
}

slot_session *http1_session_new(const request_set *set) {
    slot_session *s = worker_xcalloc(1, sizeof(slot_session));
    size_t largest = 0;
    for (size_t i = 0; i < set->count; i++)
        if (set->items[i].wire_len > largest) largest = set->items[i].wire_len;
    if (set->render_bound > largest) largest = set->render_bound;
    if (set->templated) {
        s->render_cap = set->render_bound;
        s->render_buf = worker_xcalloc(1, s->render_cap);
    }
    /* A hop is the chain's first request with another target. */
    s->hop_cap = largest + SESSION_LOCATION_MAX_BYTES + 64;
    s->hop_buf = worker_xcalloc(1, s->hop_cap);
    if (set->body_captures) s->body = worker_xcalloc(1, SESSION_BODY_MAX_BYTES + 1);
    return s;
}

void http1_session_free(slot_session *s) {
    if (!s) return;
    free(s->render_buf);
    free(s->hop_buf);
    free(s->body);
    free(s);
}

void http1_session_begin(slot_session *s, uint64_t start_ns) {
    s->captured = 0;
    s->hops = 0;
    s->as_get = 0;
    s->chain_start_ns = start_ns;
}

size_t http1_session_render(slot_session *s, const request_template *req, size_t *head_len) {
    int missing;
    return requests_render(req, &s->vars, s->render_buf, s->render_cap, head_len, &missing);
}

void http1_session_first_request(slot_session *s, const request_template *req, const char *wire, size_t len,
                                 size_t head_len) {
    s->first_wire = wire;
    s->first_len = len;
    s->first_head_len = head_len;
    if (!req->follow) return;
    /* The target, for resolving a relative Location. */
    const char *sp = memchr(wire, ' ', head_len);
    const char *end = sp ? memchr(sp + 1, ' ', head_len - (size_t)(sp + 1 - wire)) : NULL;
    size_t n = end ? (size_t)(end - sp - 1) : 0;
    if (n > sizeof(s->target)) n = sizeof(s->target);
    if (n) memcpy(s->target, sp + 1, n);
    s->target_len = n;
}

void http1_session_prepare(slot_session *s, const request_template *req, http_response *resp) {
    s->location_state = 0;
    if (req->keeps_body) {
        s->body_len = 0;
        http_response_set_body_cb(resp, on_body, s);
    }
}

session_verdict http1_session_complete(slot_session *s, const request_template *req, const engine_config *cfg,
                                       int status, size_t *hop_len, size_t *hop_head, char *why, size_t why_len) {
    if (req->body_captures) capture_body(s, req);
    else if (req->keeps_body) s->body[s->body_len] = '\0';
    if (req->follow && session_is_redirect(status)) {
        char next[SESSION_LOCATION_MAX_BYTES];
        size_t next_len = 0, head = 0, len = SIZE_MAX;
        if (s->location_state == 1 && s->hops < SESSION_MAX_HOPS &&
            session_location_target(s->location, s->location_len, cfg->host, cfg->port, cfg->tls, s->target, s->target_len,
                                    next, sizeof(next), &next_len) == 1) {
            memcpy(s->target, next, next_len);
            s->target_len = next_len;
            /* Every hop is modelled on the chain's first request. */
            if (session_redirect_as_get(status, s->first_wire, s->first_len)) s->as_get = 1;
            len = session_redirect_request(s->first_wire, s->first_head_len, s->first_len, s->as_get, s->target,
                                           s->target_len, s->hop_buf, s->hop_cap, &head);
        }
        /* Another origin, no usable Location, or too many hops. */
        if (len == SIZE_MAX) return SESSION_REDIRECT_FAILED;
        *hop_len = len;
        *hop_head = head;
        s->hops++;
        s->hop_pending = 1;
        return SESSION_HOP;
    }
    /* The chain ends here: every capture must have found its value in one
     * of its responses. A variable not found is cleared. A 2xx/3xx
     * response without it counts as a capture error (the page was not
     * what the session needs); an error status (a 422 login) is counted
     * as that status, which already says what went wrong. */
    uint32_t all = (1u << req->capture_count) - 1;
    if ((s->captured & all) != all) {
        for (int i = 0; i < req->capture_count; i++)
            if (!(s->captured & (1u << i))) s->vars.set[req->captures[i].var] = 0;
        if (status >= 200 && status < 400) return SESSION_CAPTURE_FAILED;
    }
    /* @expect: the chain's last response must be what the entry says; one
     * that is not (the login page instead of the page) is an error. */
    if (expect_any(&req->expect) &&
        !expect_check(&req->expect, status, s->body, s->body ? s->body_len : 0, &s->vars,
                      s->location_state == 1 ? s->location : NULL, s->location_state == 1 ? s->location_len : 0,
                      why, why_len))
        return SESSION_EXPECT_FAILED;
    return SESSION_CHAIN_END;
}
