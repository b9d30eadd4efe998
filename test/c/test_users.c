/*
 * test_users.c - the @users CSV reader (users.h): RFC 4180 quoting, line
 * ends, blank lines, and one clear line per malformed file.
 */
#include "check.h"
#include "users.h"

#include <string.h>

static char err[512];

static int cell_is(const user_table *t, size_t row, int column, const char *want) {
    size_t i = row * (size_t)t->column_count + (size_t)column;
    return t->cell_lens[i] == strlen(want) && memcmp(t->cells[i], want, strlen(want)) == 0;
}

static void test_plain_and_quoted(void) {
    user_table t;
    const char *text = "login,password\r\nalice,secret\n\n\"bob, jr\",\"say \"\"hi\"\"\"\r\n\"multi\nline\",\n";
    CHECK(users_parse(&t, text, strlen(text), "users.csv", 1024, err, sizeof err) == NULL);
    CHECK_EQ_U64(t.column_count, 2);
    CHECK_EQ_U64(t.row_count, 3);
    CHECK(strcmp(t.columns[0], "login") == 0 && strcmp(t.columns[1], "password") == 0);
    CHECK(users_column(&t, "password", 8) == 1 && users_column(&t, "pass", 4) == -1);
    if (t.row_count == 3) {
        CHECK(cell_is(&t, 0, 0, "alice") && cell_is(&t, 0, 1, "secret"));
        CHECK(cell_is(&t, 1, 0, "bob, jr") && cell_is(&t, 1, 1, "say \"hi\""));
        CHECK(cell_is(&t, 2, 0, "multi\nline") && cell_is(&t, 2, 1, ""));
    }
    users_free(&t);
    /* No final line break. */
    const char *last = "login\nzed";
    CHECK(users_parse(&t, last, strlen(last), "u.csv", 1024, err, sizeof err) == NULL);
    CHECK(t.row_count == 1 && cell_is(&t, 0, 0, "zed"));
    users_free(&t);
}

static void expect_error(const char *text, size_t max, const char *want) {
    user_table t;
    const char *e = users_parse(&t, text, strlen(text), "u.csv", max, err, sizeof err);
    CHECK(e != NULL && strcmp(e, want) == 0);
    if (e && strcmp(e, want) != 0) fprintf(stderr, "  got:  %s\n  want: %s\n", e, want);
    CHECK(t.row_count == 0 && t.cells == NULL);
}

static void test_errors(void) {
    expect_error("", 1024, "u.csv:1: empty: the first line names the columns");
    expect_error("login\n", 1024, "u.csv:2: no users after the line of column names");
    expect_error("login,password\nalice\n", 1024, "u.csv:2: 1 fields where the first line names 2 columns");
    expect_error("login\n\"open\n", 1024,
                 "u.csv:2: malformed quotes (a quoted field ends with \" and a comma or the line's end; \"\" is a quote)");
    expect_error("login\nal\"ice\n", 1024,
                 "u.csv:2: malformed quotes (a quoted field ends with \" and a comma or the line's end; \"\" is a quote)");
    expect_error("log-in\nx\n", 1024,
                 "u.csv:1: column name 'log-in' must be letters, digits and _ (at most 20), each once");
    expect_error("a,a\nx,y\n", 1024, "u.csv:1: column name 'a' must be letters, digits and _ (at most 20), each once");
    expect_error("login\nabcdef\n", 5, "u.csv:2: a value longer than 5 bytes, or with a NUL byte");
    expect_error("a,b,c,d,e,f,g,h,i\n", 1024, "u.csv:1: more than 8 columns");
}

static void test_load(void) {
    user_table t;
    const char *e = users_load(&t, "/nonexistent/users.csv", 1024, err, sizeof err);
    CHECK(e != NULL && strstr(e, "cannot open @users file /nonexistent/users.csv") == e);
}

int main(void) {
    test_plain_and_quoted();
    test_errors();
    test_load();
    return check_report("users");
}
