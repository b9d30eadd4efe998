/*
 * http1_session.h - what an HTTP/1.1 connection slot remembers across its
 * requests when a request list uses captures, variables or @follow
 * (doc/requests.md): the variables, the rendered request, the body kept
 * for captures, and the redirect chain in progress.
 *
 * No counting and no sockets here: the connection (http1_conn.c) asks,
 * and counts what the answers say. Allocated before the run, only when
 * the request list needs it.
 */
#ifndef RB_HTTP1_SESSION_H
#define RB_HTTP1_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "http_response.h"
#include "requests.h"
#include "session.h"

typedef struct {
    session_vars vars;
    char *render_buf;           /* templated entry, rendered per request */
    size_t render_cap;
    char *hop_buf;              /* the request of a followed redirect */
    size_t hop_cap;
    char *body;                 /* body kept for captures (+1 for a NUL) */
    size_t body_len;
    char location[SESSION_LOCATION_MAX_BYTES];
    size_t location_len;
    int location_state;         /* 0 none, 1 seen, -1 too long */
    char target[SESSION_LOCATION_MAX_BYTES]; /* the chain's current target */
    size_t target_len;
    const char *first_wire;     /* the chain's first request: model of its hops */
    size_t first_len, first_head_len;
    uint32_t captured;          /* captures of the entry set in this chain */
    int hops;                   /* redirects followed in this chain */
    int as_get;                 /* a 301/302/303 turned the chain into GET */
    int hop_pending;            /* the slot's next request is that hop */
    uint64_t chain_start_ns;    /* the entry's first request: its latency origin */
} slot_session;

/* How a complete response ends the session's work on it. */
typedef enum {
    SESSION_CHAIN_END = 0,      /* the chain's ordinary last response: count it */
    SESSION_HOP,                /* a redirect to follow: count it, then send hop_buf */
    SESSION_REDIRECT_FAILED,    /* a redirect it cannot follow: an ERR_REDIRECT */
    SESSION_CAPTURE_FAILED,     /* a 2xx/3xx without every capture: an ERR_CAPTURE */
    SESSION_EXPECT_FAILED       /* the chain's last response is not what its @expect says */
} session_verdict;

/* A session for a slot of set: buffers sized for its largest rendering and
 * hop. Exits on out-of-memory (before the run). */
slot_session *http1_session_new(const request_set *set);

/* Frees s (NULL is fine). */
void http1_session_free(slot_session *s);

/* A new entry's chain begins; start_ns is the entry's latency origin. */
void http1_session_begin(slot_session *s, uint64_t start_ns);

/* Renders templated req with the slot's variables into s->render_buf.
 * Returns its length and sets *head_len, or SIZE_MAX when a variable no
 * capture has set is needed (the request must not be sent blind). */
size_t http1_session_render(slot_session *s, const request_template *req, size_t *head_len);

/* The chain's first request is wire[0, len) (head_len as in
 * request_template): kept as the model of its hops, and its target as the
 * base of a relative Location. wire must outlive the chain. */
void http1_session_first_request(slot_session *s, const request_template *req, const char *wire, size_t len,
                                 size_t head_len);

/* A response to req is about to be read into resp: forget the last
 * Location, and keep the body when req captures from it or @expect
 * reads it (keeps_body). */
void http1_session_prepare(slot_session *s, const request_template *req, http_response *resp);

/* One header of the response to req (the parser's on_header): Location
 * for @follow and @expect, and req's header captures. */
void http1_session_header(slot_session *s, const request_template *req, const char *name, size_t name_len,
                          const char *value, size_t value_len);

/* The response to req is complete with status: runs body captures, and
 * decides whether the chain follows a redirect (SESSION_HOP: the hop's
 * request is in s->hop_buf, *hop_len bytes with *hop_head as head_len, and
 * s->hop_pending is set), ends, or failed. A capture not found by the
 * chain's end has its variable cleared; the chain's last response is
 * checked against the entry's @expect (SESSION_EXPECT_FAILED, with why it
 * is not, in why: why_len bytes). cfg gives the origin (scheme, host,
 * port) a redirect must stay on. */
session_verdict http1_session_complete(slot_session *s, const request_template *req, const engine_config *cfg,
                                       int status, size_t *hop_len, size_t *hop_head, char *why, size_t why_len);

#endif
