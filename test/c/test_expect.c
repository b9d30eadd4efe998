/*
 * test_expect.c - @expect (expect.h): parsing, statuses and classes, body
 * text with the slot's variables, and the one-line reasons a failed check
 * gives.
 */
#include "check.h"
#include "expect.h"

#include <stdlib.h>
#include <string.h>

static char names[SESSION_MAX_VARIABLES][SESSION_VAR_NAME_BYTES] = {"user.login"};
static char err[256];

static const char *parse(response_expect *e, const char *text) {
    return expect_parse(e, text, strlen(text), names, 1, err, sizeof err);
}

static void test_parse(void) {
    response_expect e;
    memset(&e, 0, sizeof(e));
    CHECK(parse(&e, "status=200") == NULL && e.status == 200);
    CHECK(parse(&e, "status=201") != NULL); /* one per entry */
    CHECK(parse(&e, "body=Signed in as {{user.login}}") == NULL);
    CHECK(e.body && e.body_len == strlen("Signed in as {{user.login}}") && e.part_count == 2);
    CHECK(parse(&e, "body=again") != NULL);
    expect_free(&e);
    CHECK(parse(&e, "status=2xx") == NULL && e.status == 2);
    expect_free(&e);
    CHECK(strcmp(parse(&e, "status=20"), "@expect status= takes a status (200) or a class (2xx)") == 0);
    CHECK(strcmp(parse(&e, "status=x00"), "@expect status= takes a status (200) or a class (2xx)") == 0);
    CHECK(strcmp(parse(&e, "code=200"), "expected @expect status=NNN, status=Nxx or body=TEXT") == 0);
    CHECK(strcmp(parse(&e, "body={{token}}"), "@expect body= uses 'token', which no @capture or @users column names") ==
          0);
    expect_free(&e);
}

static void test_check(void) {
    response_expect e;
    memset(&e, 0, sizeof(e));
    session_vars *vars = calloc(1, sizeof(*vars));
    memcpy(vars->value[0], "alice", 5);
    vars->len[0] = 5;
    vars->set[0] = 1;
    char why[160];
    CHECK(parse(&e, "status=200") == NULL && parse(&e, "body=Signed in as {{user.login}}") == NULL);
    const char *page = "<p>Signed in as alice</p>";
    CHECK(expect_check(&e, 200, page, strlen(page), vars, NULL, 0, why, sizeof why));
    /* Another user's page is not this slot's session. */
    const char *other = "<p>Signed in as bob</p>";
    CHECK(!expect_check(&e, 200, other, strlen(other), vars, NULL, 0, why, sizeof why));
    CHECK(strcmp(why, "status 200: the body does not contain 'Signed in as alice'") == 0);
    /* The redirect to the login page is no success. */
    CHECK(!expect_check(&e, 302, "", 0, vars, "/login", 6, why, sizeof why));
    CHECK(strcmp(why, "status 302 to /login, expected 200") == 0);
    /* The text must lie within the kept bytes. */
    CHECK(!expect_check(&e, 200, page, 10, vars, NULL, 0, why, sizeof why));
    CHECK(!expect_check(&e, 200, NULL, 0, vars, NULL, 0, why, sizeof why));
    /* A variable without a value fails the check instead of matching "". */
    vars->set[0] = 0;
    CHECK(!expect_check(&e, 200, page, strlen(page), vars, NULL, 0, why, sizeof why));
    expect_free(&e);
    CHECK(parse(&e, "status=3xx") == NULL);
    CHECK(expect_check(&e, 303, NULL, 0, vars, NULL, 0, why, sizeof why));
    CHECK(!expect_check(&e, 200, NULL, 0, vars, NULL, 0, why, sizeof why));
    CHECK(strcmp(why, "status 200, expected 3xx") == 0);
    expect_free(&e);
    free(vars);
}

int main(void) {
    test_parse();
    test_check();
    return check_report("expect");
}
