/*
 * expect.h - what a request-list entry says its response must be
 * (doc/requests.md, "Expected responses"): "@expect status=200",
 * "@expect status=2xx", "@expect body=Signed in as {{user.login}}".
 *
 * A response that does not match is an error of its entry ("expect"),
 * counted instead of its status, like a failed request: a redirect to the
 * login page, or a public page that answers 200 to a user who lost the
 * session, is then no success. The check runs on the chain's last
 * response (after @follow's redirects), per response of an entry that has
 * an @expect, on the slot's own buffers; nothing is allocated.
 */
#ifndef RB_EXPECT_H
#define RB_EXPECT_H

#include <stddef.h>

#include "session.h"

/* Longest expected body text, once its {{variables}} are rendered. */
#define EXPECT_BODY_MAX_BYTES 1024

typedef struct {
    int status;                /* 0: any; 100..999: exactly; 1..9: its class (2 = 2xx) */
    char *body;                /* text the body must contain (NULL: none); may hold {{variables}} */
    size_t body_len;
    session_part *parts;       /* the body text's parts */
    int part_count;
} response_expect;

/* Parses the text after "@expect " (len bytes): "status=NNN", "status=Nxx"
 * or "body=TEXT" (the rest of the line, spaces included), into e (one of
 * each at most per entry). names/name_count: the file's variables, for
 * {{references}} in the body text. Returns NULL, or a message (static
 * text, or written into err). */
const char *expect_parse(response_expect *e, const char *text, size_t len, char names[][SESSION_VAR_NAME_BYTES],
                         int name_count, char *err, size_t err_len);

/* 1 if e asks anything. */
static inline int expect_any(const response_expect *e) { return e->status || e->body; }

/* Checks a complete response: status, and body (body_len bytes kept; the
 * text must lie within them) against e, rendering its body text with vars.
 * Returns 1 when it matches; else 0 with why (a short line, e.g.
 * "status 302, expected 200" or "the body does not contain 'Signed in as
 * alice'"). location: the response's Location header (may be NULL). */
int expect_check(const response_expect *e, int status, const char *body, size_t body_len, session_vars *vars,
                 const char *location, size_t location_len, char *why, size_t why_len);

void expect_free(response_expect *e);

#endif
