/*
 * requests.h - the requests the engine sends: one built from the command
 * line, or a weighted list read from a request file (doc/requests.md).
 *
 * Every request is rendered to its exact wire bytes once, before the run, so
 * sending is a single write of prebuilt bytes: nothing is formatted or
 * allocated per request. With a cookie jar, the bytes are split at the end
 * of the headers so the jar's Cookie line can be slipped in with writev.
 */
#ifndef RB_REQUESTS_H
#define RB_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "rng.h"

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
} request_template;

typedef struct {
    request_template *items;
    size_t count;
    size_t first_count;      /* leading "first" entries (they are sorted first) */
    uint64_t *cum_weight;    /* cumulative weights of the weighted entries */
    uint64_t total_weight;
} request_set;

/* Builds the set from cfg: cfg->requests_file if given, else one request
 * from --method/--header/--body and the URL's path. Returns NULL on success,
 * or an error text written into err ("requests.txt:12: ..."). */
const char *requests_load(request_set *set, const engine_config *cfg, char *err, size_t err_len);

void requests_free(request_set *set);

/* Chooses the next request for a connection slot: its "first" entries in
 * order (*first_done counts them), then weighted random picks from rng. */
const request_template *requests_next(const request_set *set, rng *r, size_t *first_done);

/* Parses a request file held in memory (exposed for tests). */
const char *requests_parse(request_set *set, const engine_config *cfg, const char *text, size_t len,
                           const char *file_name, char *err, size_t err_len);

#endif
