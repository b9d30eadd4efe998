/*
 * request_wire.h - one request's exact HTTP/1.1 bytes, built once before
 * the run for the request set (requests.h): the request line, the entry's
 * own headers, the command line's -H headers it did not set itself, Host
 * and User-Agent unless given, Content-Length for a body (a templated
 * body's is written per request, request_render.h), the blank line and
 * the body. Sending is then a single write of these bytes.
 */
#ifndef RB_REQUEST_WIRE_H
#define RB_REQUEST_WIRE_H

#include <stddef.h>

#include "config.h"
#include "requests.h"

/* Builds t->wire (malloc'd, NUL-terminated past wire_len; exits on
 * out-of-memory), wire_len, head_len (where a Cookie line goes: before
 * the blank line), asks_close, is_head and dynamic_length. lines/lens:
 * the entry's own header lines (count of them); body_templated: the body
 * holds {{variables}}, so its Content-Length is the rendered one's. */
void request_wire_build(request_template *t, const engine_config *cfg, const char *method, size_t method_len,
                        const char *target, size_t target_len, const char *const *lines, const size_t *lens,
                        int count, const char *body, size_t body_len, int body_templated);

/* Whether a header line (line_len bytes, no CRLF) is "name: ...", the
 * name compared without case. */
int request_header_is(const char *line, size_t line_len, const char *name);

/* Whether one of count header lines is named name. */
int request_headers_have(const char *const *lines, const size_t *lens, int count, const char *name);

#endif
