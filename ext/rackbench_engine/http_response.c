/*
 * http_response.c - incremental HTTP/1.x response parser (RFC 9112).
 *
 * The parser is a state machine driven by http_response_feed(). Line-based
 * states (status line, header fields, chunk-size lines, trailer fields) find
 * the end of the line with memchr and parse it in place; only a line split
 * across two feeds is copied into r->line. Body states just count bytes.
 *
 * Every error is a deterministic function of the byte stream, not of how
 * it was split into feeds: limits are evaluated as if the bytes had arrived
 * one at a time (see line_limit_error), and early rejection of a partial
 * status line looks at the same bytes whether they came in one piece or in
 * several. The tests and the fuzz target rely on this to compare a whole
 * feed against every split of the same input.
 */
#include "http_response.h"

#include <string.h>

enum {
    S_STATUS_LINE = 0,    /* zero so a zeroed struct starts sensibly */
    S_HEADER_LINE,
    S_BODY_LENGTH,        /* r->remaining bytes of Content-Length body */
    S_BODY_UNTIL_CLOSE,   /* body ends when the server closes */
    S_CHUNK_SIZE_LINE,
    S_CHUNK_DATA,         /* r->remaining bytes of the current chunk */
    S_CHUNK_DATA_CR,      /* expecting the CR (or bare LF) after chunk data */
    S_CHUNK_DATA_LF,      /* expecting the LF after that CR */
    S_TRAILER_LINE,
    S_DONE,
    S_ERROR
};

/* What a handler tells the feed loop. */
enum { STEP_CONTINUE, STEP_COMPLETE, STEP_ERROR };

/* Character classes of RFC 9110 section 5.6.2 (tchar) and 5.5 (field-vchar,
 * plus SP and HTAB, which may appear inside a field value). obs-text
 * (0x80-0xff) is allowed in values and reason phrases as RFC 9110 says a
 * recipient must accept it; CTLs (including CR, NUL and DEL) never are: a
 * bare CR in a field is the classic response-splitting vector. */
#define C_TCHAR 1
#define C_FIELD 2
#define T (C_TCHAR | C_FIELD)
#define F C_FIELD
static const unsigned char char_class[256] = {
    /* 0x00 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, F, 0, 0, 0, 0, 0, 0,
    /* 0x10 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x20 */ F, T, F, T, T, T, T, T, F, F, T, T, F, T, T, F, /*  !"#$%&'()*+,-./ */
    /* 0x30 */ T, T, T, T, T, T, T, T, T, T, F, F, F, F, F, F, /* 0-9 :;<=>?       */
    /* 0x40 */ F, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, /* @A-O             */
    /* 0x50 */ T, T, T, T, T, T, T, T, T, T, T, F, F, F, T, T, /* P-Z [\]^_        */
    /* 0x60 */ T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, /* `a-o             */
    /* 0x70 */ T, T, T, T, T, T, T, T, T, T, T, F, T, F, T, 0, /* p-z {|}~ DEL     */
    /* 0x80 */ F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
    /* 0x90 */ F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
    /* 0xa0 */ F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
    /* 0xb0 */ F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
    /* 0xc0 */ F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
    /* 0xd0 */ F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
    /* 0xe0 */ F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
    /* 0xf0 */ F, F, F, F, F, F, F, F, F, F, F, F, F, F, F, F,
};
#undef T
#undef F

static inline int is_tchar(unsigned char c) { return char_class[c] & C_TCHAR; }
static inline int is_field_char(unsigned char c) { return char_class[c] & C_FIELD; }
static inline int is_digit(unsigned char c) { return (unsigned)(c - '0') < 10u; }
static inline int is_ows(char c) { return c == ' ' || c == '\t'; }

/* Field values are usually plain printable ASCII, so test eight bytes at a
 * time for "any byte < 0x20 or == 0x7f" (the only rejected bytes; 0x80+ is
 * obs-text and allowed) and fall back to the table only around a hit, e.g.
 * an HTAB. This halves the cost of validating a typical header block. */
static int field_value_ok(const char *s, size_t n)
{
    const uint64_t ones = UINT64_C(0x0101010101010101);
    const uint64_t highs = UINT64_C(0x8080808080808080);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        /* A byte b < 0x20 makes (b - 0x20) borrow into its high bit; b ==
         * 0x7f becomes 0x80 after adding 1. Bytes >= 0x80 set high bits too,
         * so "maybe bad" also fires on obs-text; the exact check sorts it. */
        uint64_t low = (x - ones * 0x20) | (x + ones);
        if (((low | x) & highs) != 0) {
            for (size_t j = i; j < i + 8; j++)
                if (!is_field_char((unsigned char)s[j])) return 0;
        }
    }
    for (; i < n; i++)
        if (!is_field_char((unsigned char)s[i])) return 0;
    return 1;
}

/* Case-insensitive comparison of s[0, n) with a lowercase literal made of
 * letters and '-'. OR-ing 0x20 lowercases ASCII letters; no other byte that
 * can reach here (tokens and validated field values: no CR) maps onto a
 * letter or '-' that way, so the shortcut is exact. */
static inline int lower_equal(const char *s, const char *lower, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] | 0x20) != (unsigned char)lower[i]) return 0;
    return 1;
}

static inline resp_status fail(http_response *r, const char *message)
{
    r->state = S_ERROR;
    r->error = message;
    return RESP_ERROR;
}

void http_response_reset(http_response *r, int head_request,
                         http_header_cb on_header, void *cb_ctx)
{
    /* Field by field, not memset: r->line is 8 KB and this runs once per
     * response on the hot path. line[] needs no clearing (line_len = 0). */
    r->status_code = 0;
    r->http_minor = 0;
    r->keep_alive = 0;
    r->connection_close = 0;
    r->header_bytes = 0;
    r->body_bytes = 0;
    r->error = NULL;
    r->head_request = head_request;
    r->on_header = on_header;
    r->cb_ctx = cb_ctx;
    r->on_body = NULL;
    r->state = S_STATUS_LINE;
    r->content_length = 0;
    r->remaining = 0;
    r->has_content_length = 0;
    r->chunked = 0;
    r->keep_alive_token = 0;
    r->seen_status_line = 0;
    r->line_len = 0;
    r->has_transfer_encoding = 0;
    r->interim_bytes = 0;
    r->trailer_bytes = 0;
}

int http_response_untouched(const http_response *r)
{
    /* Every fed byte either waits in line[] or completes a line, and the
     * first completed line is a status line (which sets seen_status_line) or
     * an error; so nothing was fed iff all three hold. */
    return r->state == S_STATUS_LINE && r->line_len == 0 && !r->seen_status_line;
}

resp_status http_response_eof(http_response *r)
{
    switch (r->state) {
    case S_BODY_UNTIL_CLOSE:
        r->state = S_DONE;
        r->keep_alive = 0;
        return RESP_COMPLETE;
    case S_DONE:
        /* Closing after a complete response is the normal end of a
         * connection, not a failure of that response. */
        return RESP_COMPLETE;
    case S_ERROR:
        return RESP_ERROR;
    default:
        return fail(r, "connection closed before response complete");
    }
}

/* ---- status line ------------------------------------------------------ */

/* Can s[0, n) (the first bytes of a line, CR not stripped) still begin a
 * valid status line "HTTP/1.D DDD[ reason]"? Checking partial lines lets
 * garbage ("hello", binary noise, "HTTP/2 200") fail at once instead of
 * after HTTP_MAX_LINE_BYTES; the limit on positions 0..12 keeps it O(1). */
static int status_prefix_ok(const char *s, size_t n)
{
    static const char proto[] = "HTTP/1.";
    if (n > 13) n = 13;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int ok;
        if (i < 7)
            ok = c == (unsigned char)proto[i];
        else if (i == 8)
            ok = c == ' ';
        else if (i == 9)
            ok = c >= '1' && c <= '9'; /* status codes are 100..999 */
        else if (i == 12)
            ok = c == ' ' || c == '\r'; /* reason follows, or line ends */
        else
            ok = is_digit(c); /* 7: minor version; 10, 11: code */
        if (!ok) return 0;
    }
    return 1;
}

/* status_prefix_ok over the carried bytes followed by the new ones. */
static int status_start_ok(const http_response *r, const char *p, size_t n)
{
    if (r->line_len == 0) return status_prefix_ok(p, n);
    if (r->line_len >= 13) return 1; /* checked when they were carried */
    char start[13];
    size_t have = r->line_len;
    memcpy(start, r->line, have);
    size_t more = 13 - have < n ? 13 - have : n;
    memcpy(start + have, p, more);
    return status_prefix_ok(start, have + more);
}

static int parse_status_line(http_response *r, const char *s, size_t n)
{
    if (n < 12 || !status_prefix_ok(s, 12)) {
        fail(r, "malformed status line");
        return STEP_ERROR;
    }
    if (n > 12) {
        /* RFC 9112 4: status-code SP [ reason-phrase ]; the reason is
         * meaningless, but a CTL in it means the stream is not HTTP. */
        if (s[12] != ' ' || !field_value_ok(s + 13, n - 13)) {
            fail(r, "malformed status line");
            return STEP_ERROR;
        }
    }
    r->http_minor = s[7] - '0';
    r->status_code = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
    r->seen_status_line = 1;
    if (r->status_code == 101) {
        /* After 101 the connection speaks another protocol; a load
         * generator sending HTTP/1.1 requests cannot follow. */
        fail(r, "101 Switching Protocols is not supported");
        return STEP_ERROR;
    }
    r->state = S_HEADER_LINE;
    return STEP_CONTINUE;
}

/* ---- header fields ---------------------------------------------------- */

/* Splits "name: value" (CR already stripped, n > 0) and trims the value's
 * optional whitespace. Returns NULL or the error. */
static const char *split_field(const char *s, size_t n, size_t *name_len,
                               const char **value, size_t *value_len)
{
    if (is_ows(s[0])) {
        /* obs-fold (RFC 9112 5.2): a line continuing the previous value.
         * Deprecated; folding rules differ between implementations, which
         * is what smuggling attacks exploit, so refuse rather than guess. */
        return "obsolete line folding in header";
    }
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)s[i])) i++;
    /* RFC 9112 5.1: no whitespace between name and colon ("name : v"). */
    if (i == 0 || i == n || s[i] != ':') return "malformed header name";
    *name_len = i;
    size_t v = i + 1;
    while (v < n && is_ows(s[v])) v++;
    size_t e = n;
    while (e > v && is_ows(s[e - 1])) e--;
    if (!field_value_ok(s + v, e - v)) return "malformed header value";
    *value = s + v;
    *value_len = e - v;
    return NULL;
}

/* Content-Length = 1*DIGIT. A list of identical values ("42, 42") is
 * accepted as RFC 9110 8.6 allows (a proxy merged duplicates); repeated
 * headers must agree with each other, since a disagreement means we cannot
 * know where the body ends. */
static const char *parse_content_length(http_response *r, const char *v, size_t n)
{
    size_t i = 0;
    for (;;) {
        while (i < n && is_ows(v[i])) i++;
        if (i == n || !is_digit((unsigned char)v[i]))
            return "malformed Content-Length";
        uint64_t x = 0;
        while (i < n && is_digit((unsigned char)v[i])) {
            unsigned d = (unsigned char)v[i] - '0';
            if (x > (UINT64_MAX - d) / 10) return "Content-Length overflow";
            x = x * 10 + d;
            i++;
        }
        while (i < n && is_ows(v[i])) i++;
        if (r->has_content_length && x != r->content_length)
            return "conflicting Content-Length";
        r->has_content_length = 1;
        r->content_length = x;
        if (i == n) return NULL;
        if (v[i] != ',') return "malformed Content-Length";
        i++;
    }
}

/* Transfer-Encoding is a list; only whether its last coding is "chunked"
 * matters (RFC 9112 6.3). Several headers form one list, so each later
 * header decides anew. */
static const char *parse_transfer_encoding(http_response *r, const char *v, size_t n)
{
    size_t e = n;
    /* Skip empty trailing list elements ("chunked, ") as #rule allows. */
    while (e > 0 && (is_ows(v[e - 1]) || v[e - 1] == ',')) e--;
    if (e == 0) return "malformed Transfer-Encoding";
    size_t b = e;
    while (b > 0 && v[b - 1] != ',') b--;
    while (b < e && is_ows(v[b])) b++;
    r->has_transfer_encoding = 1;
    r->chunked = e - b == 7 && lower_equal(v + b, "chunked", 7);
    return NULL;
}

/* Connection is a list of tokens; only "close" and "keep-alive" matter. */
static void parse_connection(http_response *r, const char *v, size_t n)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (is_ows(v[i]) || v[i] == ',')) i++;
        size_t b = i;
        while (i < n && v[i] != ',') i++;
        size_t e = i;
        while (e > b && is_ows(v[e - 1])) e--;
        if (e - b == 5 && lower_equal(v + b, "close", 5))
            r->connection_close = 1;
        else if (e - b == 10 && lower_equal(v + b, "keep-alive", 10))
            r->keep_alive_token = 1;
    }
}

static inline int is_interim(const http_response *r)
{
    return r->status_code >= 100 && r->status_code < 200;
}

/* The empty line after the headers: decide how the body is delimited
 * (RFC 9112 6.3, in its order of precedence). */
static int end_of_headers(http_response *r)
{
    if (is_interim(r)) {
        /* 100 Continue, 103 Early Hints...: no body; the final response
         * follows. Its header_bytes and callbacks start afresh. */
        r->interim_bytes += r->header_bytes;
        r->header_bytes = 0;
        r->status_code = 0;
        r->state = S_STATUS_LINE;
        return STEP_CONTINUE;
    }
    r->keep_alive = !r->connection_close &&
                    (r->http_minor >= 1 || r->keep_alive_token);
    /* RFC 9112 6.1: Transfer-Encoding in an HTTP/1.0 message means the
     * framing is suspect; process it, then close. */
    if (r->http_minor == 0 && r->has_transfer_encoding) r->keep_alive = 0;

    if (r->head_request || r->status_code == 204 || r->status_code == 304) {
        r->state = S_DONE;
        return STEP_COMPLETE;
    }
    if (r->has_transfer_encoding) {
        /* Transfer-Encoding overrides Content-Length. Without chunked last,
         * only the close can end the body. */
        if (r->chunked) {
            r->state = S_CHUNK_SIZE_LINE;
            return STEP_CONTINUE;
        }
        r->keep_alive = 0;
        r->state = S_BODY_UNTIL_CLOSE;
        return STEP_CONTINUE;
    }
    if (r->has_content_length) {
        if (r->content_length == 0) {
            r->state = S_DONE;
            return STEP_COMPLETE;
        }
        r->remaining = r->content_length;
        r->state = S_BODY_LENGTH;
        return STEP_CONTINUE;
    }
    r->keep_alive = 0;
    r->state = S_BODY_UNTIL_CLOSE;
    return STEP_CONTINUE;
}

static int parse_header_line(http_response *r, const char *s, size_t n)
{
    if (n == 0) return end_of_headers(r);
    size_t name_len, value_len;
    const char *value;
    const char *err = split_field(s, n, &name_len, &value, &value_len);
    if (err != NULL) {
        fail(r, err);
        return STEP_ERROR;
    }
    /* Headers of interim responses are validated but otherwise ignored:
     * an interim Connection or Content-Length says nothing about the final
     * response, so they must not reach its state. */
    if (is_interim(r)) return STEP_CONTINUE;

    /* Dispatch on length first: most headers are none of the three. */
    if (name_len == 14 && lower_equal(s, "content-length", 14)) {
        err = parse_content_length(r, value, value_len);
    } else if (name_len == 17 && lower_equal(s, "transfer-encoding", 17)) {
        err = parse_transfer_encoding(r, value, value_len);
    } else if (name_len == 10 && lower_equal(s, "connection", 10)) {
        parse_connection(r, value, value_len);
    }
    if (err != NULL) {
        fail(r, err);
        return STEP_ERROR;
    }
    if (r->on_header != NULL)
        r->on_header(r->cb_ctx, s, name_len, value, value_len);
    return STEP_CONTINUE;
}

/* ---- chunked body ----------------------------------------------------- */

/* chunk-size [ chunk-ext ] (RFC 9112 7.1), CR already stripped. */
static int parse_chunk_size_line(http_response *r, const char *s, size_t n)
{
    size_t i = 0;
    uint64_t size = 0;
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        unsigned d;
        if (is_digit(c))
            d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (c | 0x20) - 'a' + 10;
        else
            break;
        if (size > (UINT64_MAX >> 4)) {
            fail(r, "chunk size overflow");
            return STEP_ERROR;
        }
        size = size << 4 | d;
    }
    if (i == 0) {
        fail(r, "malformed chunk size");
        return STEP_ERROR;
    }
    /* chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS value ] ): ignored,
     * but it must start with ';' and hold no CTL. */
    while (i < n && is_ows(s[i])) i++;
    if (i < n && (s[i] != ';' || !field_value_ok(s + i, n - i))) {
        fail(r, "malformed chunk size");
        return STEP_ERROR;
    }
    if (size == 0) {
        r->state = S_TRAILER_LINE;
    } else {
        r->remaining = size;
        r->state = S_CHUNK_DATA;
    }
    return STEP_CONTINUE;
}

static int parse_trailer_line(http_response *r, const char *s, size_t n)
{
    if (n == 0) {
        r->state = S_DONE;
        return STEP_COMPLETE;
    }
    /* Trailer fields are validated like headers but not reported: they are
     * not part of the header block the callback describes. */
    size_t name_len, value_len;
    const char *value;
    const char *err = split_field(s, n, &name_len, &value, &value_len);
    if (err != NULL) {
        fail(r, err);
        return STEP_ERROR;
    }
    return STEP_CONTINUE;
}

/* ---- line assembly ---------------------------------------------------- */

/* Size limits for the line being read, of which `have` bytes are known;
 * `complete`: the last of them is its LF. Evaluated as if the bytes came one
 * at a time, so the verdict does not depend on the split: the line limit is
 * crossed at the (HTTP_MAX_LINE_BYTES + 1)-th byte before the LF, the block
 * limit at the byte that takes the block past its maximum; the earlier one
 * names the error (the line limit on a tie). */
static const char *line_limit_error(const http_response *r, size_t have, int complete)
{
    size_t content = complete ? have - 1 : have;
    if (r->state == S_CHUNK_SIZE_LINE)
        return content > HTTP_MAX_LINE_BYTES ? "chunk size line too long" : NULL;

    uint64_t base;
    const char *block_error;
    if (r->state == S_TRAILER_LINE) {
        base = r->trailer_bytes;
        block_error = "trailers too large";
    } else {
        /* Interim 1xx blocks share one budget, so a server sending endless
         * 100 Continue responses is caught like one sending endless
         * headers; the final response keeps a full budget of its own. */
        base = r->header_bytes + (is_interim(r) ? r->interim_bytes : 0);
        block_error = "headers too large";
    }
    uint64_t budget = base >= HTTP_MAX_HEADER_BYTES ? 0 : HTTP_MAX_HEADER_BYTES - base;
    uint64_t line_pos = content > HTTP_MAX_LINE_BYTES ? HTTP_MAX_LINE_BYTES + 1 : UINT64_MAX;
    uint64_t block_pos = have > budget ? budget + 1 : UINT64_MAX;
    if (line_pos == UINT64_MAX && block_pos == UINT64_MAX) return NULL;
    return line_pos <= block_pos ? "header line too long" : block_error;
}

void http_response_set_body_cb(http_response *r, http_body_cb on_body, void *ctx)
{
    r->on_body = on_body;
    r->body_ctx = ctx;
}

resp_status http_response_feed(http_response *r, const char *buf, size_t len,
                               size_t *consumed)
{
    *consumed = 0;
    if (r->state == S_ERROR) return RESP_ERROR;
    if (r->state == S_DONE) return fail(r, "response fed after it was complete");
    /* Also keeps memchr/memcpy away from a NULL buf with len 0. */
    if (len == 0) return RESP_INCOMPLETE;

    const char *p = buf;
    const char *end = buf + len;
    int step;

    for (;;) {
        switch (r->state) {
        case S_STATUS_LINE:
        case S_HEADER_LINE:
        case S_CHUNK_SIZE_LINE:
        case S_TRAILER_LINE: {
            if (p == end) goto incomplete;
            /* Never scan past the longest allowed line: a megabyte without
             * LF is rejected after HTTP_MAX_LINE_BYTES + 1 bytes. */
            size_t scan = (size_t)(end - p);
            size_t room = HTTP_MAX_LINE_BYTES + 1 - r->line_len;
            if (scan > room) scan = room;
            const char *nl = memchr(p, '\n', scan);
            if (nl == NULL) {
                /* Partial line: check what can be checked now, carry it. */
                if (r->state == S_STATUS_LINE && !status_start_ok(r, p, scan)) {
                    fail(r, "malformed status line");
                    goto error;
                }
                const char *err = line_limit_error(r, r->line_len + scan, 0);
                if (err != NULL) {
                    fail(r, err);
                    goto error;
                }
                /* Here scan == end - p: a capped scan exceeds the limit. */
                memcpy(r->line + r->line_len, p, scan);
                r->line_len += scan;
                p = end;
                goto incomplete;
            }

            size_t seg = (size_t)(nl - p);
            size_t wire = r->line_len + seg + 1;
            if (r->state == S_STATUS_LINE && !status_start_ok(r, p, seg)) {
                fail(r, "malformed status line");
                goto error;
            }
            const char *err = line_limit_error(r, wire, 1);
            if (err != NULL) {
                fail(r, err);
                goto error;
            }
            const char *s;
            size_t n;
            if (r->line_len == 0) {
                s = p; /* the common case: parse in place */
                n = seg;
            } else {
                /* Fits: line_limit_error bounds line_len + seg. */
                memcpy(r->line + r->line_len, p, seg);
                s = r->line;
                n = r->line_len + seg;
                r->line_len = 0;
            }
            p = nl + 1;
            if (n > 0 && s[n - 1] == '\r') n--; /* CRLF or bare LF */

            switch (r->state) {
            case S_STATUS_LINE:
                r->header_bytes += wire;
                step = parse_status_line(r, s, n);
                break;
            case S_HEADER_LINE:
                r->header_bytes += wire;
                step = parse_header_line(r, s, n);
                break;
            case S_CHUNK_SIZE_LINE:
                step = parse_chunk_size_line(r, s, n);
                break;
            default: /* S_TRAILER_LINE */
                r->trailer_bytes += wire;
                step = parse_trailer_line(r, s, n);
                break;
            }
            if (step == STEP_COMPLETE) goto complete;
            if (step == STEP_ERROR) goto error;
            break;
        }

        case S_BODY_LENGTH:
        case S_CHUNK_DATA: {
            if (p == end) goto incomplete;
            size_t avail = (size_t)(end - p);
            size_t take = r->remaining < avail ? (size_t)r->remaining : avail;
            if (r->on_body && take) r->on_body(r->body_ctx, p, take);
            p += take;
            r->remaining -= take;
            r->body_bytes += take;
            if (r->remaining > 0) goto incomplete;
            if (r->state == S_BODY_LENGTH) {
                r->state = S_DONE;
                goto complete;
            }
            r->state = S_CHUNK_DATA_CR;
            break;
        }

        case S_BODY_UNTIL_CLOSE:
            if (r->on_body && end > p) r->on_body(r->body_ctx, p, (size_t)(end - p));
            r->body_bytes += (uint64_t)(end - p);
            p = end;
            goto incomplete;

        case S_CHUNK_DATA_CR:
            if (p == end) goto incomplete;
            if (*p == '\r') {
                r->state = S_CHUNK_DATA_LF;
            } else if (*p == '\n') {
                r->state = S_CHUNK_SIZE_LINE;
            } else {
                fail(r, "missing CRLF after chunk data");
                goto error;
            }
            p++;
            break;

        case S_CHUNK_DATA_LF:
            if (p == end) goto incomplete;
            if (*p != '\n') {
                fail(r, "missing CRLF after chunk data");
                goto error;
            }
            p++;
            r->state = S_CHUNK_SIZE_LINE;
            break;

        default: /* S_DONE / S_ERROR cannot be reached inside the loop */
            fail(r, "internal parser state error");
            goto error;
        }
    }

complete:
    *consumed = (size_t)(p - buf);
    return RESP_COMPLETE;
incomplete:
    *consumed = len;
    return RESP_INCOMPLETE;
error:
    *consumed = (size_t)(p - buf);
    return RESP_ERROR;
}
