/*
 * http_response.h - incremental HTTP/1.x response parser for the load engine.
 *
 * Bytes are fed as they arrive from the socket, in pieces of any size: a
 * response may be split across many reads, and one read may hold the end of
 * one response and the start of the next. The parser never allocates and
 * never reads outside [buf, buf + len). A header line split across two
 * reads is carried over in a small buffer inside the struct; the common
 * case (the whole header block in one read) is parsed in place.
 *
 * Body framing follows RFC 9112 section 6.3: no body for HEAD requests and
 * for 1xx, 204 and 304 statuses; interim 1xx responses (100 Continue, 103
 * Early Hints) are skipped and parsing continues with the final response;
 * 101 Switching Protocols is an error (the engine cannot follow it);
 * Transfer-Encoding with chunked as its last coding is decoded (chunk
 * extensions and trailers accepted); otherwise Content-Length (conflicting
 * or malformed values are an error); otherwise the body runs until the
 * server closes, which http_response_eof() completes.
 */
#ifndef RB_HTTP_RESPONSE_H
#define RB_HTTP_RESPONSE_H

#include <stddef.h>
#include <stdint.h>

/* Longest line (status, header, chunk size or trailer; counted before its
 * LF, whether or not it was split across reads) and largest header block.
 * Interim 1xx responses share one such budget and trailers have their own,
 * so a server sending endless headers, endless 100 Continue or endless
 * trailers fails with RESP_ERROR and never grows memory. */
#define HTTP_MAX_LINE_BYTES 8192
#define HTTP_MAX_HEADER_BYTES 65536

typedef enum {
    RESP_ERROR = -1,      /* malformed: r->error names the problem */
    RESP_INCOMPLETE = 0,  /* all bytes consumed, the response needs more */
    RESP_COMPLETE = 1     /* a whole response ends at buf + *consumed */
} resp_status;

/* Called once per header of the final response when set (e.g. to collect
 * Set-Cookie). name/value point into transient memory: copy what you keep.
 * Value has surrounding whitespace removed. */
typedef void (*http_header_cb)(void *ctx, const char *name, size_t name_len,
                               const char *value, size_t value_len);

/* Called with each piece of the final response's body (chunk framing
 * removed) when set with http_response_set_body_cb; data is transient. */
typedef void (*http_body_cb)(void *ctx, const char *data, size_t len);

typedef struct {
    /* --- results, valid once RESP_COMPLETE was returned --- */
    int status_code;        /* e.g. 200 */
    int http_minor;         /* 0 for HTTP/1.0, 1 for HTTP/1.1 */
    int keep_alive;         /* 1 if the connection may carry another request:
                               HTTP/1.1 unless "Connection: close"; HTTP/1.0
                               only with "Connection: keep-alive"; never when
                               the body was delimited by the server's close */
    int connection_close;   /* 1 if a Connection header carried "close" */
    uint64_t header_bytes;  /* bytes of status line + headers (final response) */
    uint64_t body_bytes;    /* bytes of body as sent on the wire (chunk framing
                               excluded; only decoded payload is counted) */
    const char *error;      /* static string when RESP_ERROR, else NULL */

    /* --- configuration, set by http_response_reset --- */
    int head_request;
    http_header_cb on_header;
    void *cb_ctx;
    http_body_cb on_body;   /* NULL unless set after the reset */
    void *body_ctx;

    /* --- private state --- */
    int state;
    uint64_t content_length;
    uint64_t remaining;     /* body or chunk bytes still expected */
    int has_content_length;
    int chunked;
    int keep_alive_token;   /* "Connection: keep-alive" seen */
    int seen_status_line;
    int has_transfer_encoding; /* a Transfer-Encoding header was seen */
    uint64_t interim_bytes; /* header bytes of skipped 1xx responses (limit) */
    uint64_t trailer_bytes; /* bytes of chunked trailer fields (limit) */
    size_t line_len;        /* bytes in line[] */
    char line[HTTP_MAX_LINE_BYTES];
} http_response;

/* Prepares r for a new response. head_request: the request was HEAD (the
 * response has no body whatever its headers say). on_header may be NULL. */
void http_response_reset(http_response *r, int head_request,
                         http_header_cb on_header, void *cb_ctx);

/* Asks for the body's bytes (after http_response_reset, which clears it):
 * only request-list entries that capture from the body pay for it. */
void http_response_set_body_cb(http_response *r, http_body_cb on_body, void *ctx);

/* Feeds len bytes. Sets *consumed to the number of bytes used:
 *   RESP_COMPLETE: the response ended at buf + *consumed; the rest of the
 *                  buffer (if any) belongs to the next response.
 *   RESP_INCOMPLETE: *consumed == len; call again with more bytes.
 *   RESP_ERROR: r->error says why; the connection must be dropped.
 * Feeding a response that already returned COMPLETE or ERROR without a
 * reset returns RESP_ERROR. len may be 0. */
resp_status http_response_feed(http_response *r, const char *buf, size_t len,
                               size_t *consumed);

/* The server closed the connection. Returns RESP_COMPLETE if the response
 * was delimited by the close (no Content-Length, not chunked, headers
 * complete) or had already completed, else RESP_ERROR with r->error set
 * ("connection closed before response complete"). */
resp_status http_response_eof(http_response *r);

/* 1 while no byte of the current response has been fed (useful to tell a
 * keep-alive connection closed while idle from one closed mid-response). */
int http_response_untouched(const http_response *r);

#endif
