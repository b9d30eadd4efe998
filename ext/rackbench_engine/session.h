/*
 * session.h - what a request list needs to behave like a browser session
 * (doc/requests.md, "Captures and variables", "Redirects"): extracting a
 * value from a response (an HTML form field, a <meta> tag, a regular
 * expression), percent-encoding it, rendering a templated request with the
 * slot's variables, and resolving a redirect's Location on the run's own
 * origin.
 *
 * Everything here works on caller-provided, bounded buffers and never
 * allocates: it runs per response on the request path, but only for
 * entries that capture, use variables or follow redirects.
 */
#ifndef RB_SESSION_H
#define RB_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

#define SESSION_MAX_VARIABLES 16      /* distinct variable names in a file */
#define SESSION_VAR_NAME_BYTES 32     /* longest variable name */
#define SESSION_VAR_MAX_BYTES 1024    /* longest captured value */
#define SESSION_MAX_CAPTURES 8        /* @capture lines per entry */
#define SESSION_BODY_MAX_BYTES (256 * 1024) /* body kept for captures */
#define SESSION_MAX_HOPS 5            /* redirects followed per entry */
#define SESSION_LOCATION_MAX_BYTES 2048

/* One slot's variables: set[i] says whether variable i holds a value.
 * random: the slot's own stream for {{random LO..HI}}, seeded from the
 * run's seed and the slot number and apart from the mix's generator, so a
 * list that draws values picks the same pages as one that does not. */
typedef struct {
    uint8_t set[SESSION_MAX_VARIABLES];
    uint16_t len[SESSION_MAX_VARIABLES];
    char value[SESSION_MAX_VARIABLES][SESSION_VAR_MAX_BYTES];
    rng random;
} session_vars;

/* Results of the extractors. */
enum { EXTRACT_FOUND = 1, EXTRACT_MISSING = 0, EXTRACT_TOO_LONG = -1 };

/* Finds the first <tag ...> element (case-insensitive names) whose
 * key_attr equals key_value exactly, and copies its value_attr, with HTML
 * entities decoded (&amp; &lt; &gt; &quot; &#39; &apos; &#NN; &#xHH;), into
 * out (at most cap bytes, not NUL-terminated). Attributes may come in any
 * order, quoted with " or ' or unquoted. A tag cut off by the end of the
 * text does not count. An element without value_attr yields "".
 * Forms: ("input", "name", field, "value"); Rails' token in the page head:
 * ("meta", "name", "csrf-token", "content"). */
int session_extract_attr(const char *text, size_t len, const char *tag, const char *key_attr, const char *key_value,
                         const char *value_attr, char *out, size_t cap, size_t *out_len);

/* Percent-encodes in as application/x-www-form-urlencoded does (WHATWG
 * URL standard): A-Z a-z 0-9 * - . _ stay, space becomes +, every other
 * byte %XX. Returns the encoded length, or SIZE_MAX if it exceeds cap. */
size_t session_url_encode(const char *in, size_t len, char *out, size_t cap);

/* One piece of a templated request: literal text, a variable, or a
 * random number. */
typedef struct {
    uint32_t offset, len;   /* literal: bytes of the template's text;
                               random: the lowest and highest value */
    int16_t var;            /* SESSION_PART_LITERAL, SESSION_PART_RANDOM,
                               or the variable's index */
    uint8_t url_encode;     /* {{name:url}} */
} session_part;

#define SESSION_PART_LITERAL (-1)
#define SESSION_PART_RANDOM (-2)
/* Digits of the largest {{random}} value (2^32 - 1). */
#define SESSION_RANDOM_MAX_DIGITS 10

/* Splits text into parts at {{name}} and {{name:url}} references (names:
 * letters, digits, _ and . ; up to SESSION_VAR_NAME_BYTES - 1; a list's
 * @users columns are the names "user.COLUMN") and at {{random LO..HI}}
 * (decimal integers, 0 <= LO <= HI < 2^32: a value drawn uniformly, both
 * ends included, from the slot's vars->random per rendering). Anything
 * else, including a lone {{, is literal. names/name_count is the file's
 * list of variable names; lookup fails for a name not in it. Returns the
 * number of parts written (at most max_parts), or -1 with *bad_name set
 * to the unknown name's start (and *bad_len its length), or -2 if more
 * than max_parts parts are needed, or -3 with *bad_name and *bad_len on a
 * {{random LO..HI}} whose LO is above HI. */
int session_parse_template(const char *text, size_t len, char names[][SESSION_VAR_NAME_BYTES], int name_count,
                           session_part *parts, int max_parts, const char **bad_name, size_t *bad_len);

/* Renders parts (over text) with vars into out, drawing {{random}}
 * values from vars->random (vars is the caller's: its stream advances).
 * Returns the length, or SIZE_MAX when a variable is not set
 * (*missing_var: its index) or the result would exceed cap
 * (*missing_var = -1). */
size_t session_render(const char *text, const session_part *parts, int part_count, session_vars *vars,
                      char *out, size_t cap, int *missing_var);

/* Bytes session_render can need at most for these parts. */
size_t session_render_bound(const session_part *parts, int part_count);

/* 1 for the statuses @follow follows: 301 302 303 307 308. */
int session_is_redirect(int status);

/* Where a redirect's Location points, if on the run's origin: a path
 * ("/x"), a relative reference ("x", "../x", "?q": resolved against
 * base_target's directory), scheme-relative "//host:port/x" or absolute
 * "http://host:port/x" (tls: "https://host:port/x") naming host and port
 * (the scheme's default port, 80 or 443, may be omitted; host compared
 * case-insensitively; IPv6 in brackets). Fragments are dropped. Writes
 * the request target into out. Returns 1 on the same origin, 0 for
 * another origin or scheme (not followed: https from an http:// run,
 * http from an https:// one), -1 if empty, malformed (spaces, control
 * bytes) or longer than cap. */
int session_location_target(const char *loc, size_t len, const char *host, const char *port, int tls,
                            const char *base_target, size_t base_len, char *out, size_t cap, size_t *out_len);

/* The request a followed redirect sends, built from the chain's first
 * request (wire: request line, headers up to head_len, CRLF, body):
 * as_get (301/302/303 after a method other than GET/HEAD) makes it a GET
 * without body, Content-Length and Content-Type; otherwise (307/308, or
 * already GET/HEAD) the method, headers and body stay. The target is
 * replaced. Returns the length and sets *out_head_len, or SIZE_MAX if it
 * does not fit cap or wire has no request line. */
size_t session_redirect_request(const char *wire, size_t head_len, size_t wire_len, int as_get, const char *target,
                                size_t target_len, char *out, size_t cap, size_t *out_head_len);

/* 1 if the redirect status changes a request with this method to GET. */
int session_redirect_as_get(int status, const char *wire, size_t wire_len);

#endif
