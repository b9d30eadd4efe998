/*
 * test_cookie_jar.c - tests of the per-connection cookie jar.
 *
 * The jar's header text is what goes on the wire, so it is compared
 * exactly after every change. Set-Cookie values are passed with an explicit
 * length and without a terminating NUL where it matters (set_n), as the
 * response parser hands them over.
 */
#include "check.h"
#include "cookie_jar.h"

#include <stdio.h>
#include <string.h>

static cookie_jar jar;

static void set(const char *value) { cookie_jar_set(&jar, value, strlen(value)); }

/* Passes value_len bytes copied to the end of a buffer followed by junk, so
 * a read past value_len would change the result. */
static void set_n(const char *value, size_t value_len)
{
    static char buf[2 * COOKIE_PAIR_MAX_BYTES + 32];
    CHECK(value_len + 14 <= sizeof buf);
    if (value_len + 14 > sizeof buf) return;
    memset(buf, ';', sizeof buf);
    memcpy(buf, value, value_len);
    memcpy(buf + value_len, "X=Y; Max-Age=0", 14);
    cookie_jar_set(&jar, buf, value_len);
}

static int header_is(const char *want)
{
    size_t n = strlen(want);
    if (jar.header_len == n && memcmp(jar.header, want, n) == 0) return 1;
    fprintf(stderr, "  header (%zu bytes): \"%.*s\"\n  want   (%zu bytes): \"%s\"\n", jar.header_len,
            (int)(jar.header_len < sizeof jar.header ? jar.header_len : sizeof jar.header), jar.header, n, want);
    return 0;
}

static void test_set_replace_delete(void)
{
    cookie_jar_init(&jar);
    CHECK_EQ_U64(jar.count, 0);
    CHECK_EQ_U64(jar.header_len, 0);
    CHECK_EQ_U64(jar.dropped, 0);

    set("a=1");
    CHECK(header_is("Cookie: a=1\r\n"));
    set("b=2; Path=/; HttpOnly; Secure; SameSite=Lax");
    CHECK(header_is("Cookie: a=1; b=2\r\n"));
    CHECK_EQ_U64(jar.count, 2);

    /* Replacing keeps the position. */
    set("a=3; Domain=example.test");
    CHECK(header_is("Cookie: a=3; b=2\r\n"));
    CHECK_EQ_U64(jar.count, 2);

    /* Names are compared whole and case-sensitively. */
    set("A=4");
    set("ab=5");
    CHECK(header_is("Cookie: a=3; b=2; A=4; ab=5\r\n"));
    set("ab=6");
    CHECK(header_is("Cookie: a=3; b=2; A=4; ab=6\r\n"));

    /* Values may contain '=' and be quoted. */
    set("t=x=y==");
    CHECK(header_is("Cookie: a=3; b=2; A=4; ab=6; t=x=y==\r\n"));
    set("t=\"q v\"");
    CHECK(header_is("Cookie: a=3; b=2; A=4; ab=6; t=\"q v\"\r\n"));

    /* Deletion: Max-Age=0 (any case), negative Max-Age, empty value. */
    set("a=gone; Max-Age=0");
    CHECK(header_is("Cookie: b=2; A=4; ab=6; t=\"q v\"\r\n"));
    set("A=x; path=/; max-age=0");
    CHECK(header_is("Cookie: b=2; ab=6; t=\"q v\"\r\n"));
    set("ab=x;MAX-AGE=-1");
    CHECK(header_is("Cookie: b=2; t=\"q v\"\r\n"));
    set("t=");
    CHECK(header_is("Cookie: b=2\r\n"));
    CHECK_EQ_U64(jar.count, 1);

    /* Deleting an unknown cookie changes nothing. */
    set("zz=; Max-Age=0");
    set("zz=1; Max-Age=0");
    CHECK(header_is("Cookie: b=2\r\n"));

    /* Max-Age > 0 and Expires keep the cookie. */
    set("b=7; Max-Age=3600");
    CHECK(header_is("Cookie: b=7\r\n"));
    set("b=8; Expires=Thu, 01 Jan 2099 00:00:00 GMT");
    CHECK(header_is("Cookie: b=8\r\n"));

    set("b=; Path=/");
    CHECK_EQ_U64(jar.count, 0);
    CHECK_EQ_U64(jar.header_len, 0);
    CHECK_EQ_U64(jar.dropped, 0);
}

static void test_parsing_details(void)
{
    cookie_jar_init(&jar);
    /* Not name=value: ignored without counting as dropped. */
    set("novalue");
    set("=x");
    set("");
    set("; a=1");
    CHECK_EQ_U64(jar.count, 0);
    CHECK_EQ_U64(jar.header_len, 0);
    CHECK_EQ_U64(jar.dropped, 0);

    /* Blanks before ';' are not part of the value. */
    set("s=abc \t ; Path=/");
    CHECK(header_is("Cookie: s=abc\r\n"));
    /* "s=   ;" is an empty value: deletion. */
    set("s=   ; Path=/");
    CHECK_EQ_U64(jar.count, 0);

    /* Only value_len bytes are read. */
    set_n("k=v", 3);
    CHECK(header_is("Cookie: k=v\r\n"));
    set_n("k=vw; Path=/", 4);
    CHECK(header_is("Cookie: k=vw\r\n"));
    set_n("k=1; Max-Age=", 13); /* Max-Age without a value: keeps */
    CHECK(header_is("Cookie: k=1\r\n"));
    set_n("k", 1);
    CHECK(header_is("Cookie: k=1\r\n"));

    /* Max-Age only counts as an attribute, not inside the value. */
    set("m=max-age=0");
    CHECK(header_is("Cookie: k=1; m=max-age=0\r\n"));
}

/* RFC 6265 5.2.2: Max-Age is a number of seconds; only <= 0 expires it. */
static void test_max_age_values(void)
{
    cookie_jar_init(&jar);
    set("a=1; Max-Age=05");
    CHECK(header_is("Cookie: a=1\r\n"));
    set("b=2; Max-Age=10");
    CHECK(header_is("Cookie: a=1; b=2\r\n"));
}

static void test_capacity(void)
{
    char v[64];
    cookie_jar_init(&jar);
    for (int i = 0; i < COOKIE_JAR_MAX; i++) {
        snprintf(v, sizeof v, "c%d=%d", i, i);
        set(v);
    }
    CHECK_EQ_U64(jar.count, COOKIE_JAR_MAX);
    CHECK_EQ_U64(jar.dropped, 0);
    static const char full[] =
        "Cookie: c0=0; c1=1; c2=2; c3=3; c4=4; c5=5; c6=6; c7=7; c8=8; c9=9; c10=10; c11=11; c12=12; "
        "c13=13; c14=14; c15=15\r\n";
    CHECK(header_is(full));

    /* The 17th is dropped and counted; the jar is unchanged. */
    set("c16=16");
    CHECK_EQ_U64(jar.count, COOKIE_JAR_MAX);
    CHECK_EQ_U64(jar.dropped, 1);
    CHECK(header_is(full));
    set("c17=17; Path=/");
    CHECK_EQ_U64(jar.dropped, 2);

    /* A full jar still replaces and deletes. */
    set("c15=x");
    CHECK_EQ_U64(jar.dropped, 2);
    CHECK(memcmp(jar.header + jar.header_len - 9, "; c15=x\r\n", 9) == 0);
    set("c0=; Max-Age=0");
    CHECK_EQ_U64(jar.count, COOKIE_JAR_MAX - 1);
    CHECK(memcmp(jar.header, "Cookie: c1=1; c2=2;", 19) == 0);

    /* Room again: the new cookie goes last. */
    set("c16=16");
    CHECK_EQ_U64(jar.count, COOKIE_JAR_MAX);
    CHECK_EQ_U64(jar.dropped, 2);
    CHECK(header_is("Cookie: c1=1; c2=2; c3=3; c4=4; c5=5; c6=6; c7=7; c8=8; c9=9; c10=10; c11=11; c12=12; "
                    "c13=13; c14=14; c15=x; c16=16\r\n"));
}

static void test_pair_size(void)
{
    const size_t max = COOKIE_PAIR_MAX_BYTES;
    static char v[2 * COOKIE_PAIR_MAX_BYTES];
    cookie_jar_init(&jar);

    /* A pair of exactly max bytes fits. */
    memset(v, 'x', sizeof v);
    memcpy(v, "big=", 4);
    set_n(v, max);
    CHECK_EQ_U64(jar.count, 1);
    CHECK_EQ_U64(jar.header_len, 8 + max + 2);
    CHECK_EQ_U64(jar.dropped, 0);

    /* One more byte is dropped and counted, and the old value stays. */
    set_n(v, max + 1);
    CHECK_EQ_U64(jar.count, 1);
    CHECK_EQ_U64(jar.dropped, 1);
    CHECK_EQ_U64(jar.header_len, 8 + max + 2);

    /* A new too-long cookie is dropped too, attributes not counted. */
    memcpy(v, "new=", 4);
    set_n(v, max + 300);
    CHECK_EQ_U64(jar.count, 1);
    CHECK_EQ_U64(jar.dropped, 2);
    memcpy(v + max - 1, "; Path=/; HttpOnly", 18);
    set_n(v, max - 1 + 18);
    CHECK_EQ_U64(jar.count, 2);
    CHECK_EQ_U64(jar.dropped, 2);

    /* A deletion of a long cookie is not a drop. */
    memset(v, 'x', sizeof v);
    memcpy(v, "big=", 4);
    memcpy(v + 300, "; Max-Age=0", 11);
    set_n(v, 311);
    CHECK_EQ_U64(jar.count, 1);
    CHECK_EQ_U64(jar.dropped, 2);
    CHECK(memcmp(jar.header, "Cookie: new=xxx", 15) == 0);
}

/* Sixteen cookies that fill the jar's text exactly: the header must fit
 * its buffer and be exactly right. */
static void test_maximum_content(void)
{
    const size_t max = COOKIE_JAR_BYTES / COOKIE_JAR_MAX;
    static char want[4 * COOKIE_JAR_BYTES];
    size_t wn = 0;
    memcpy(want, "Cookie: ", 8);
    wn = 8;
    cookie_jar_init(&jar);
    for (int i = 0; i < COOKIE_JAR_MAX; i++) {
        char v[COOKIE_JAR_BYTES / COOKIE_JAR_MAX + 1];
        int n = snprintf(v, sizeof v, "n%02d=", i);
        memset(v + n, 'a' + i, max - (size_t)n);
        set_n(v, max);
        if (i) { memcpy(want + wn, "; ", 2); wn += 2; }
        memcpy(want + wn, v, max);
        wn += max;
    }
    memcpy(want + wn, "\r\n", 2);
    wn += 2;
    CHECK_EQ_U64(jar.count, COOKIE_JAR_MAX);
    CHECK_EQ_U64(jar.dropped, 0);
    CHECK_EQ_U64(jar.header_len, wn);
    CHECK(jar.header_len <= sizeof(jar.header));
    CHECK(jar.header_len == wn && memcmp(jar.header, want, wn) == 0);

    /* Replacing every one with another maximum-size value keeps it right. */
    for (int i = COOKIE_JAR_MAX - 1; i >= 0; i--) {
        char v[COOKIE_JAR_BYTES / COOKIE_JAR_MAX + 1];
        int n = snprintf(v, sizeof v, "n%02d=", i);
        memset(v + n, 'A' + i, max - (size_t)n);
        set_n(v, max);
        memcpy(want + 8 + (size_t)i * (max + 2), v, max);
    }
    CHECK_EQ_U64(jar.header_len, wn);
    CHECK(jar.header_len <= sizeof(jar.header));
    CHECK(jar.header_len == wn && memcmp(jar.header, want, wn) == 0);

    /* Delete from the middle: the rest closes up in order. */
    set("n07=; Max-Age=0");
    CHECK_EQ_U64(jar.count, COOKIE_JAR_MAX - 1);
    CHECK_EQ_U64(jar.header_len, wn - max - 2);
    CHECK(memcmp(jar.header, want, 8 + 7 * (max + 2)) == 0);
    CHECK(memcmp(jar.header + 8 + 7 * (max + 2), want + 8 + 8 * (max + 2), wn - 8 - 8 * (max + 2)) == 0);
}

/* The jar's text is shared: a cookie that fits alone but not in what is
 * left is dropped, and fits once another is deleted. */
static void test_total_size(void)
{
    static char v[COOKIE_PAIR_MAX_BYTES + 1];
    cookie_jar_init(&jar);
    memset(v, 'a', sizeof v);
    memcpy(v, "a=", 2);
    set_n(v, COOKIE_PAIR_MAX_BYTES);
    memcpy(v, "b=", 2);
    set_n(v, COOKIE_PAIR_MAX_BYTES);
    CHECK_EQ_U64(jar.count, 2);
    CHECK_EQ_U64(jar.used, COOKIE_JAR_BYTES);
    set("c=1");
    CHECK_EQ_U64(jar.count, 2);
    CHECK_EQ_U64(jar.dropped, 1);
    /* Replacing a cookie by a shorter value frees room. */
    set("a=short");
    set("c=1");
    CHECK_EQ_U64(jar.count, 3);
    CHECK_EQ_U64(jar.dropped, 1);
    CHECK(memcmp(jar.header, "Cookie: a=short; b=aaa", 22) == 0);
    CHECK(memcmp(jar.header + jar.header_len - 7, "; c=1\r\n", 7) == 0);
    set("b=; Max-Age=0");
    CHECK_EQ_U64(jar.used, strlen("a=short") + strlen("c=1"));
    CHECK_EQ_U64(jar.header_len, strlen("Cookie: a=short; c=1\r\n"));
    CHECK(memcmp(jar.header, "Cookie: a=short; c=1\r\n", jar.header_len) == 0);
}

int main(void)
{
    test_set_replace_delete();
    test_parsing_details();
    test_max_age_values();
    test_capacity();
    test_pair_size();
    test_maximum_content();
    test_total_size();
    return check_report("cookie_jar");
}
