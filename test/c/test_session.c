/*
 * test_session.c - tests of the session helpers (session.h): the HTML
 * form-field and <meta> extractors, form URL-encoding, template parsing
 * and rendering with their bounds, redirect Location resolution and the
 * request a followed redirect sends.
 *
 * Values are compared byte for byte; every bound is tested at its edge
 * (fits exactly / one byte too many), and texts cut short are fed from
 * exact-size heap copies so ASan sees any read past their end.
 */
#include "check.h"
#include "session.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same(const char *s, size_t n, const char *want) {
    if (n == strlen(want) && memcmp(s, want, n) == 0) return 1;
    fprintf(stderr, "  got \"%.*s\" (%zu bytes), want \"%s\"\n", (int)n, s, n, want);
    return 0;
}

/* Extracts from an exact-size heap copy of text (no NUL after it). */
static int extract(const char *text, const char *tag, const char *key_attr, const char *key, const char *value_attr,
                   char *out, size_t cap, size_t *n) {
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    memcpy(copy, text, len);
    int r = session_extract_attr(copy, len, tag, key_attr, key, value_attr, out, cap, n);
    free(copy);
    return r;
}

static int form(const char *html, const char *field, char *out, size_t *n) {
    return extract(html, "input", "name", field, "value", out, SESSION_VAR_MAX_BYTES, n);
}

static void test_form_field(void) {
    char out[SESSION_VAR_MAX_BYTES];
    size_t n = 0;
    /* name before value, value before name, single quotes, unquoted. */
    CHECK(form("<input type=\"hidden\" name=\"authenticity_token\" value=\"abc+/=\">", "authenticity_token", out, &n) ==
          EXTRACT_FOUND);
    CHECK(same(out, n, "abc+/="));
    CHECK(form("<input value=\"v1\" type=hidden name=\"tok\" />", "tok", out, &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "v1"));
    CHECK(form("<INPUT NAME='tok' VALUE='it''s'>", "tok", out, &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "it"));
    CHECK(form("<input name=tok value=plain>", "tok", out, &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "plain"));
    /* The right input among several; other tags and attributes skipped. */
    CHECK(form("<form><input name=\"user\" value=\"u\"><inputx name=tok value=no>"
               "<input\n  data-x=\"a > b\"\n  name=\"tok\"\n  value=\"yes\"></form>",
               "tok", out, &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "yes"));
    /* Exact name match only. */
    CHECK(form("<input name=\"tok2\" value=\"no\"><input name=\"to\" value=\"no\">", "tok", out, &n) == EXTRACT_MISSING);
    /* Entities decoded. */
    CHECK(form("<input name=t value=\"a&amp;b&lt;c&gt;d&quot;e&#39;f&#x2F;g&#47;h&apos;i\">", "t", out, &n) ==
          EXTRACT_FOUND);
    CHECK(same(out, n, "a&b<c>d\"e'f/g/h'i"));
    /* Unknown and malformed entities stay as written; non-ASCII as UTF-8. */
    CHECK(form("<input name=t value=\"&nbsp;&#;&#xZZ;&amp &#233;\">", "t", out, &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "&nbsp;&#;&#xZZ;&amp \xc3\xa9"));
    /* No value attribute: found, empty. */
    CHECK(form("<input name=\"t\">", "t", out, &n) == EXTRACT_FOUND);
    CHECK_EQ_U64(n, 0);
    /* Missing field, no tags, empty text. */
    CHECK(form("<input name=\"other\" value=\"x\">", "t", out, &n) == EXTRACT_MISSING);
    CHECK(form("no html here", "t", out, &n) == EXTRACT_MISSING);
    CHECK(form("", "t", out, &n) == EXTRACT_MISSING);
}

static void test_truncated_body(void) {
    char out[SESSION_VAR_MAX_BYTES];
    size_t n;
    const char *whole = "<input name=\"t\" value=\"abcdef\">";
    /* Every prefix that cuts the tag before its '>' finds nothing, and
     * reads nothing past its end (heap copies of the exact size). */
    for (size_t cut = 0; cut < strlen(whole); cut++) {
        char prefix[64];
        memcpy(prefix, whole, cut);
        prefix[cut] = '\0';
        CHECK(form(prefix, "t", out, &n) == EXTRACT_MISSING);
    }
    CHECK(form(whole, "t", out, &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "abcdef"));
    /* The tag name at the very end, and "<input" alone. */
    CHECK(form("<input", "t", out, &n) == EXTRACT_MISSING);
    CHECK(form("<", "t", out, &n) == EXTRACT_MISSING);
}

static void test_value_bounds(void) {
    char out[8];
    size_t n;
    CHECK(extract("<input name=t value=\"12345678\">", "input", "name", "t", "value", out, 8, &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "12345678"));
    CHECK(extract("<input name=t value=\"123456789\">", "input", "name", "t", "value", out, 8, &n) == EXTRACT_TOO_LONG);
    /* An entity that decodes past the end. */
    CHECK(extract("<input name=t value=\"1234567&#233;\">", "input", "name", "t", "value", out, 8, &n) ==
          EXTRACT_TOO_LONG);
}

static void test_meta(void) {
    char out[SESSION_VAR_MAX_BYTES];
    size_t n;
    const char *head = "<head><meta name=\"csrf-param\" content=\"authenticity_token\" />\n"
                       "<meta content=\"Zx+9/q==\" name=\"csrf-token\" /></head>";
    CHECK(extract(head, "meta", "name", "csrf-token", "content", out, sizeof(out), &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "Zx+9/q=="));
    CHECK(extract(head, "meta", "name", "csrf-param", "content", out, sizeof(out), &n) == EXTRACT_FOUND);
    CHECK(same(out, n, "authenticity_token"));
    CHECK(extract(head, "meta", "name", "viewport", "content", out, sizeof(out), &n) == EXTRACT_MISSING);
}

static void test_url_encode(void) {
    char out[64];
    size_t n = session_url_encode("a+b/c=d e&f~*-._Z9", 18, out, sizeof(out));
    CHECK(same(out, n, "a%2Bb%2Fc%3Dd+e%26f%7E*-._Z9"));
    const char high[] = {(char)0xc3, (char)0xa9, 0};
    n = session_url_encode(high, 2, out, sizeof(out));
    CHECK(same(out, n, "%C3%A9"));
    CHECK_EQ_U64(session_url_encode("", 0, out, sizeof(out)), 0);
    /* Bounds: "/" needs 3 bytes. */
    CHECK_EQ_U64(session_url_encode("a/", 2, out, 4), 4);
    CHECK(session_url_encode("a/", 2, out, 3) == SIZE_MAX);
    CHECK(session_url_encode("ab", 2, out, 1) == SIZE_MAX);
}

static char names[SESSION_MAX_VARIABLES][SESSION_VAR_NAME_BYTES] = {"token", "id"};

static void test_template(void) {
    session_part parts[16];
    const char *bad = NULL;
    size_t bad_len = 0;
    const char *text = "a={{token:url}}&b={{id}}{{ x }}{{id:raw}}{{";
    int count = session_parse_template(text, strlen(text), names, 2, parts, 16, &bad, &bad_len);
    CHECK_EQ_U64(count, 5);
    session_vars *vars = calloc(1, sizeof(*vars));
    char out[256];
    int missing = 99;
    /* Nothing set yet: the first variable used is reported missing. */
    CHECK(session_render(text, parts, count, vars, out, sizeof(out), &missing) == SIZE_MAX);
    CHECK_EQ_U64(missing, 0);
    memcpy(vars->value[0], "x+/=", 4);
    vars->len[0] = 4;
    vars->set[0] = 1;
    CHECK(session_render(text, parts, count, vars, out, sizeof(out), &missing) == SIZE_MAX);
    CHECK_EQ_U64(missing, 1);
    memcpy(vars->value[1], "42", 2);
    vars->len[1] = 2;
    vars->set[1] = 1;
    size_t n = session_render(text, parts, count, vars, out, sizeof(out), &missing);
    CHECK(same(out, n, "a=x%2B%2F%3D&b=42{{ x }}{{id:raw}}{{"));
    /* Exactly fits; one byte short. */
    CHECK_EQ_U64(session_render(text, parts, count, vars, out, n, &missing), n);
    CHECK(session_render(text, parts, count, vars, out, n - 1, &missing) == SIZE_MAX);
    CHECK(missing == -1);
    /* The bound covers the longest values, url-encoded. */
    size_t bound = session_render_bound(parts, count);
    CHECK_EQ_U64(bound, strlen("a=&b={{ x }}{{id:raw}}{{") + 3 * SESSION_VAR_MAX_BYTES + SESSION_VAR_MAX_BYTES);
    memset(vars->value[0], '/', SESSION_VAR_MAX_BYTES);
    vars->len[0] = SESSION_VAR_MAX_BYTES;
    memset(vars->value[1], 'z', SESSION_VAR_MAX_BYTES);
    vars->len[1] = SESSION_VAR_MAX_BYTES;
    char *big = malloc(bound);
    CHECK_EQ_U64(session_render(text, parts, count, vars, big, bound, &missing), bound);
    free(big);
    free(vars);
    /* Unknown variable names are reported with their position. */
    const char *unknown = "x {{nope:url}} y";
    CHECK(session_parse_template(unknown, strlen(unknown), names, 2, parts, 16, &bad, &bad_len) == -1);
    CHECK(same(bad, bad_len, "nope"));
    /* Too many parts. */
    const char *many = "{{id}}-{{id}}-{{id}}";
    CHECK(session_parse_template(many, strlen(many), names, 2, parts, 4, &bad, &bad_len) == -2);
    CHECK_EQ_U64(session_parse_template(many, strlen(many), names, 2, parts, 5, &bad, &bad_len), 5);
    /* A name of 31 bytes is a reference; 32 is literal text. */
    char long_names[1][SESSION_VAR_NAME_BYTES];
    memset(long_names[0], 'n', 31);
    long_names[0][31] = '\0';
    char ref[64];
    snprintf(ref, sizeof(ref), "{{%s}}", long_names[0]);
    CHECK_EQ_U64(session_parse_template(ref, strlen(ref), long_names, 1, parts, 4, &bad, &bad_len), 1);
    CHECK(parts[0].var == 0);
    snprintf(ref, sizeof(ref), "{{%sn}}", long_names[0]);
    CHECK_EQ_U64(session_parse_template(ref, strlen(ref), long_names, 1, parts, 4, &bad, &bad_len), 1);
    CHECK(parts[0].var == -1);
}

/* {{random LO..HI}}: drawn per rendering from the slot's own stream,
 * both ends included, reproducible from the same seed; malformed ones are
 * literal text, LO above HI an error. Dotted names ("user.login") are
 * variables like any other. */
static void test_random_and_user_names(void) {
    char user_names[SESSION_MAX_VARIABLES][SESSION_VAR_NAME_BYTES] = {"user.login"};
    session_part parts[8];
    const char *bad = NULL;
    size_t bad_len = 0;
    const char *text = "/posts/{{random 1..3}}?u={{user.login:url}}{{random 1..}}{{random 5..5}}";
    int count = session_parse_template(text, strlen(text), user_names, 1, parts, 8, &bad, &bad_len);
    CHECK_EQ_U64(count, 6);
    CHECK(parts[1].var == SESSION_PART_RANDOM && parts[1].offset == 1 && parts[1].len == 3);
    CHECK(parts[3].var == 0 && parts[3].url_encode);
    CHECK(parts[4].var == SESSION_PART_LITERAL); /* "{{random 1..}}" */
    session_vars *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    memcpy(a->value[0], "al ice", 6);
    a->len[0] = 6;
    a->set[0] = 1;
    *b = *a;
    rng_seed(&a->random, 7);
    rng_seed(&b->random, 7);
    int seen[4] = {0};
    char out[128], other[128];
    int missing;
    for (int i = 0; i < 300; i++) {
        size_t n = session_render(text, parts, count, a, out, sizeof(out), &missing);
        size_t m = session_render(text, parts, count, b, other, sizeof(other), &missing);
        CHECK(n != SIZE_MAX && n == m && memcmp(out, other, n) == 0);
        CHECK(n > 8 && out[7] >= '1' && out[7] <= '3');
        if (n > 8 && out[7] >= '1' && out[7] <= '3') seen[out[7] - '0']++;
        CHECK(same(out + 8, n - 8, "?u=al+ice{{random 1..}}5"));
    }
    CHECK(seen[1] > 50 && seen[2] > 50 && seen[3] > 50);
    /* The bound covers ten digits per random value. */
    CHECK_EQ_U64(session_render_bound(parts, count),
                 strlen("/posts/?u={{random 1..}}") + 2 * SESSION_RANDOM_MAX_DIGITS + 3 * SESSION_VAR_MAX_BYTES);
    const char *biggest = "{{random 4294967295..4294967295}}";
    CHECK_EQ_U64(session_parse_template(biggest, strlen(biggest), user_names, 1, parts, 8, &bad, &bad_len), 1);
    CHECK(same(out, session_render(biggest, parts, 1, a, out, sizeof(out), &missing), "4294967295"));
    const char *too_big = "{{random 1..4294967296}}";
    CHECK_EQ_U64(session_parse_template(too_big, strlen(too_big), user_names, 1, parts, 8, &bad, &bad_len), 1);
    CHECK(parts[0].var == SESSION_PART_LITERAL);
    const char *reversed = "x{{random 9..2}}";
    CHECK(session_parse_template(reversed, strlen(reversed), user_names, 1, parts, 8, &bad, &bad_len) == -3);
    CHECK(same(bad, bad_len, "{{random 9..2}}"));
    free(a);
    free(b);
}

static int target(const char *loc, const char *base, char *out, size_t cap, size_t *n) {
    return session_location_target(loc, strlen(loc), "127.0.0.1", "8080", 0, base, strlen(base), out, cap, n);
}

static void test_location(void) {
    char out[SESSION_LOCATION_MAX_BYTES];
    size_t n;
    CHECK(target("/posts", "/login", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/posts"));
    CHECK(target("/posts?page=2#top", "/login", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/posts?page=2"));
    CHECK(target("http://127.0.0.1:8080/posts", "/", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/posts"));
    CHECK(target("HTTP://127.0.0.1:8080", "/", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/"));
    CHECK(target("http://127.0.0.1:8080?x=1", "/", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/?x=1"));
    CHECK(target("//127.0.0.1:8080/a", "/", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/a"));
    /* Relative references against the base's directory. */
    CHECK(target("b", "/relative/a?q=1", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/relative/b"));
    CHECK(target("../up/x?y=2", "/a/b/c", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/a/up/x?y=2"));
    CHECK(target("./x", "/a/b", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/a/x"));
    CHECK(target("../../../x", "/a/b", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/x"));
    CHECK(target("?page=3", "/posts?page=2", out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/posts?page=3"));
    /* Other origins: host, port, scheme. */
    CHECK(target("http://example.com/", "/", out, sizeof(out), &n) == 0);
    CHECK(target("http://127.0.0.1:8081/", "/", out, sizeof(out), &n) == 0);
    CHECK(target("http://127.0.0.1/", "/", out, sizeof(out), &n) == 0);
    CHECK(target("https://127.0.0.1:8080/", "/", out, sizeof(out), &n) == 0);
    CHECK(target("//example.com/x", "/", out, sizeof(out), &n) == 0);
    CHECK(target("mailto:a@b", "/", out, sizeof(out), &n) == 0);
    /* Port 80 may be left out; IPv6 in brackets. */
    CHECK(session_location_target("http://LOCALHOST/x", 18, "localhost", "80", 0, "/", 1, out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/x"));
    CHECK(session_location_target("http://[::1]:9/x", 16, "::1", "9", 0, "/", 1, out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/x"));
    CHECK(session_location_target("http://[::1]/x", 14, "::1", "9", 0, "/", 1, out, sizeof(out), &n) == 0);
    /* An https:// run: https on the same host and port is the origin (443
     * may be left out), http is another one (a downgrade is not followed). */
    const char *tls_cases[][2] = {{"https://127.0.0.1:8443/posts", "1"}, {"HTTPS://127.0.0.1:8443", "1"},
                                  {"//127.0.0.1:8443/a", "1"},           {"/a", "1"},
                                  {"http://127.0.0.1:8443/posts", "0"},  {"https://127.0.0.1/x", "0"},
                                  {"https://127.0.0.1:8080/x", "0"}};
    for (size_t i = 0; i < sizeof(tls_cases) / sizeof(tls_cases[0]); i++) {
        const char *loc = tls_cases[i][0];
        int got = session_location_target(loc, strlen(loc), "127.0.0.1", "8443", 1, "/", 1, out, sizeof(out), &n);
        CHECK(got == tls_cases[i][1][0] - '0');
        if (got != tls_cases[i][1][0] - '0') fprintf(stderr, "  tls location %s: %d\n", loc, got);
    }
    CHECK(session_location_target("https://localhost/x", 19, "localhost", "443", 1, "/", 1, out, sizeof(out), &n) == 1);
    CHECK(same(out, n, "/x"));
    /* Malformed or too long. */
    CHECK(target("", "/", out, sizeof(out), &n) == -1);
    CHECK(target("/a b", "/", out, sizeof(out), &n) == -1);
    CHECK(target("/a\x01", "/", out, sizeof(out), &n) == -1);
    CHECK(target("http:/x", "/", out, sizeof(out), &n) == -1);
    CHECK(target("/abcd", "/", out, 5, &n) == 1);
    CHECK(target("/abcde", "/", out, 5, &n) == -1);
    CHECK(target("bcde", "/", out, 5, &n) == 1);
    CHECK(target("bcdef", "/", out, 5, &n) == -1);
}

static void test_redirect_request(void) {
    const char *post = "POST /login HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                       "Content-Length: 3\r\nX-A: 1\r\n\r\na=b";
    size_t head_len = strstr(post, "\r\n\r\n") - post + 2;
    char out[512];
    size_t out_head = 0;
    CHECK(session_redirect_as_get(303, post, strlen(post)));
    CHECK(session_redirect_as_get(302, post, strlen(post)));
    CHECK(!session_redirect_as_get(307, post, strlen(post)));
    CHECK(!session_redirect_as_get(308, post, strlen(post)));
    CHECK(!session_redirect_as_get(301, "GET / HTTP/1.1\r\n\r\n", 18));
    CHECK(!session_redirect_as_get(301, "HEAD / HTTP/1.1\r\n\r\n", 19));
    size_t n = session_redirect_request(post, head_len, strlen(post), 1, "/posts", 6, out, sizeof(out), &out_head);
    CHECK(same(out, n, "GET /posts HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n\r\n"));
    CHECK_EQ_U64(out_head, n - 2);
    n = session_redirect_request(post, head_len, strlen(post), 0, "/again", 6, out, sizeof(out), &out_head);
    CHECK(same(out, n,
               "POST /again HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\n"
               "Content-Length: 3\r\nX-A: 1\r\n\r\na=b"));
    CHECK_EQ_U64(out_head, n - 5);
    /* Exactly fits; one byte short. */
    size_t exact = n;
    CHECK_EQ_U64(session_redirect_request(post, head_len, strlen(post), 0, "/again", 6, out, exact, &out_head), exact);
    CHECK(session_redirect_request(post, head_len, strlen(post), 0, "/again", 6, out, exact - 1, &out_head) == SIZE_MAX);
    CHECK(session_is_redirect(301) && session_is_redirect(302) && session_is_redirect(303) &&
          session_is_redirect(307) && session_is_redirect(308));
    CHECK(!session_is_redirect(300) && !session_is_redirect(304) && !session_is_redirect(200));
}

int main(void) {
    test_form_field();
    test_truncated_body();
    test_value_bounds();
    test_meta();
    test_url_encode();
    test_template();
    test_random_and_user_names();
    test_location();
    test_redirect_request();
    return check_report("test_session");
}
