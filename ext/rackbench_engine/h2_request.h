/*
 * h2_request.h - the engine's requests as HTTP/2 header lists.
 *
 * The request set (requests.h) renders every request to HTTP/1.1 wire
 * bytes once, before the run. For h2c each is translated once too, into
 * nghttp2 name/value pairs: :method, :scheme (https for an https:// URL),
 * :authority (from Host, else
 * the URL's host:port), :path, then the other headers lowercased, less
 * the connection-specific ones HTTP/2 forbids (RFC 9113 section 8.2.2):
 * Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding, Upgrade,
 * TE. Nothing is built per request.
 */
#ifndef RB_H2_REQUEST_H
#define RB_H2_REQUEST_H

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "requests.h"

typedef struct {
    nghttp2_nv *headers;     /* pseudo-headers first */
    size_t header_count;
    const uint8_t *body;     /* points into the template's wire */
    size_t body_len;
    char *storage;           /* lowercased names and values (owned) */
} h2_request;

/* Builds one h2_request per item of set, in set->items order, into *out
 * (malloc'd; free with h2_requests_free). Returns NULL, or an error text
 * written into err (a request line or header it cannot translate). */
const char *h2_requests_build(h2_request **out, const request_set *set, const engine_config *cfg, char *err,
                              size_t err_len);

/* Translates one HTTP/1.1 request (wire, head_len as in request_template)
 * into r. Returns 0, or -1 when the request line is malformed. */
int h2_request_from_wire(h2_request *r, const char *wire, size_t wire_len, size_t head_len, const char *authority);

void h2_requests_free(h2_request *reqs, size_t count);

#endif
