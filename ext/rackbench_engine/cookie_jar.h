/*
 * cookie_jar.h - a per-connection-slot cookie jar, so a request list can
 * replay sessions: log in once, then carry the session cookie.
 *
 * Fixed-size (no allocation on the request path): up to COOKIE_JAR_MAX
 * cookies of up to COOKIE_PAIR_MAX_BYTES of "name=value" each (RFC 6265,
 * 6.1: a client should take at least 4096 bytes per cookie; a Rails
 * session cookie is several hundred), packed into COOKIE_JAR_BYTES. It
 * keeps name=value from Set-Cookie, replaces by name, deletes on
 * Max-Age=0 or an empty value; other attributes (Path, Domain, Expires)
 * are ignored: the engine talks to one origin.
 */
#ifndef RB_COOKIE_JAR_H
#define RB_COOKIE_JAR_H

#include <stddef.h>

#define COOKIE_JAR_MAX 16
#define COOKIE_PAIR_MAX_BYTES 4096
#define COOKIE_JAR_BYTES 8192

typedef struct {
    int count;
    size_t name_len[COOKIE_JAR_MAX];
    size_t pair_len[COOKIE_JAR_MAX];      /* "name=value" length */
    size_t offset[COOKIE_JAR_MAX];        /* where the pair starts in text */
    size_t used;                          /* bytes of text in use, packed */
    char text[COOKIE_JAR_BYTES];
    /* "Cookie: a=1; b=2\r\n", rebuilt when the jar changes; empty if none */
    char header[COOKIE_JAR_BYTES + 2 * COOKIE_JAR_MAX + 16];
    size_t header_len;
    unsigned long dropped;               /* cookies too large or too many */
} cookie_jar;

void cookie_jar_init(cookie_jar *jar);

/* Takes one Set-Cookie header value. */
void cookie_jar_set(cookie_jar *jar, const char *value, size_t value_len);

#endif
