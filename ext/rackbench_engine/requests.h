/*
 * requests.h - the requests the engine sends: one built from the command
 * line, or a weighted list read from a request file (doc/requests.md),
 * parsed and built before the run (requests.c, the request-list fuzz
 * target's unit).
 *
 * Every request is rendered to its exact wire bytes once, before the run
 * (request_wire.h), so sending is a single write of prebuilt bytes:
 * nothing is formatted or allocated per request but a templated entry's
 * rendering into its slot's buffer (request_render.h, with the choice of
 * the next request). With a cookie jar, the bytes are split at the end of
 * the headers so the jar's Cookie line can be slipped in with writev.
 */
#ifndef RB_REQUESTS_H
#define RB_REQUESTS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "expect.h"
#include "rng.h"
#include "session.h"
#include "users.h"

typedef enum { CAPTURE_HEADER, CAPTURE_BODY, CAPTURE_FORM, CAPTURE_META } capture_source;

/* One "@capture NAME SOURCE" line (doc/requests.md). */
typedef struct {
    int var;                 /* index into request_set.var_names */
    capture_source source;
    char *arg;               /* header name, form field or meta name */
    int has_regex;
    regex_t regex;           /* compiled once at load; group 1 is the value */
} capture_spec;

typedef struct {
    char *name;          /* from the file's name= attribute, or NULL */
    char *wire;          /* whole request: request line, headers, CRLF, body */
    size_t wire_len;
    size_t head_len;     /* bytes of wire before the blank line's CRLF: the
                            cookie line is inserted at this offset */
    uint64_t weight;     /* 0 for "first" entries */
    int first;           /* sent once per connection slot, in file order */
    int is_head;         /* HEAD: the response has no body */
    int asks_close;      /* the request carries "Connection: close" */
    size_t index;        /* position in the file: per-entry results */
    int follow;          /* @follow: redirects on the same origin are followed */
    capture_spec *captures;
    int capture_count;
    int body_captures;   /* captures reading the body (it must be kept) */
    int header_captures; /* captures reading a header */
    /* Templated entries (using {{variables}}): wire holds the text with the
     * references and is rendered per request (request_render.h); head_parts
     * cover wire[0, head_len), body_parts the body after the blank line. */
    int templated;
    session_part *head_parts, *body_parts;
    int head_part_count, body_part_count;
    int dynamic_length;  /* Content-Length is the rendered body's */
    size_t render_bound; /* most bytes a rendering can take */
    int probe;           /* sent by every slot at the window's edges (probes.h) */
    response_expect expect; /* @expect: what the response must be (expect.h) */
    int keeps_body;      /* the body is kept: body captures or @expect body= */
} request_template;

typedef struct {
    request_template *items;
    size_t count;
    size_t first_count;      /* leading "first" entries (they are sorted first) */
    uint64_t *cum_weight;    /* cumulative weights of the weighted entries */
    uint64_t total_weight;
    char var_names[SESSION_MAX_VARIABLES][SESSION_VAR_NAME_BYTES];
    int var_count;
    size_t render_bound;     /* largest render_bound of a templated entry */
    int templated;           /* some entry uses variables */
    int body_captures;       /* some entry captures from a body */
    int header_work;         /* some entry captures a header or follows */
    int from_file;           /* a request list (per-entry results) */
    size_t *probes;          /* indexes into items of the "probe" entries, in file order */
    size_t probe_count;
    int expects;             /* some entry has an @expect */
    user_table users;        /* @users FILE (row_count 0: none) */
    int user_vars[USERS_MAX_COLUMNS]; /* each column's variable ("user.COLUMN") */
} request_set;

/* Builds the set from cfg: cfg->requests_file if given, else one request
 * from --method/--header/--body and the URL's path. Returns NULL on success,
 * or an error text written into err ("requests.txt:12: ..."). */
const char *requests_load(request_set *set, const engine_config *cfg, char *err, size_t err_len);

void requests_free(request_set *set);

/* Parses a request file held in memory (exposed for tests). */
const char *requests_parse(request_set *set, const engine_config *cfg, const char *text, size_t len,
                           const char *file_name, char *err, size_t err_len);

#endif
