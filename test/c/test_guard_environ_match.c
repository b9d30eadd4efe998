/*
 * test_guard_environ_match.c - the watchdog's marker test: an exact entry
 * of a /proc/PID/environ buffer, never a substring, never a read past the
 * buffer (every buffer is placed against an unreadable page, both ends).
 */
#include "check.h"
#include "environ_match.h"
#include "fenced_bytes.h"

#include <string.h>

static const char MARKER[] = "RACKBENCH_RESULTS_DIR=/r";

/* Does the environ buffer env (env_len bytes, NULs inside) hold MARKER,
 * checked with the buffer against the end fence and again against the
 * start fence? Both placements must agree. */
static int holds_marker(const char *env, size_t env_len)
{
    int at_end = environ_has_entry(fenced_end(env, env_len), env_len, MARKER, strlen(MARKER));
    int at_start = environ_has_entry(fenced_start(env, env_len), env_len, MARKER, strlen(MARKER));
    CHECK(at_end == at_start);
    return at_end;
}

#define HOLDS(literal) holds_marker(literal, sizeof(literal) - 1)

static void test_positions(void)
{
    CHECK(HOLDS("RACKBENCH_RESULTS_DIR=/r\0A=1\0B=2\0"));  /* first */
    CHECK(HOLDS("A=1\0RACKBENCH_RESULTS_DIR=/r\0B=2\0"));  /* middle */
    CHECK(HOLDS("A=1\0B=2\0RACKBENCH_RESULTS_DIR=/r\0"));  /* last */
    CHECK(HOLDS("RACKBENCH_RESULTS_DIR=/r\0"));            /* alone */
    /* The last entry without its NUL still counts as a whole entry. */
    CHECK(HOLDS("A=1\0RACKBENCH_RESULTS_DIR=/r"));
    CHECK(HOLDS("RACKBENCH_RESULTS_DIR=/r"));
    /* A variable set twice: any exact entry counts. */
    CHECK(HOLDS("RACKBENCH_RESULTS_DIR=/other\0RACKBENCH_RESULTS_DIR=/r\0"));
}

static void test_look_alikes(void)
{
    /* Another results directory whose path starts with ours. */
    CHECK(!HOLDS("RACKBENCH_RESULTS_DIR=/r2\0"));
    CHECK(!HOLDS("RACKBENCH_RESULTS_DIR=/r/x\0"));
    CHECK(!HOLDS("RACKBENCH_RESULTS_DIR=/r2"));
    CHECK(!HOLDS("A=1\0RACKBENCH_RESULTS_DIR=/r "));
    /* Ours is a suffix of another entry. */
    CHECK(!HOLDS("X_RACKBENCH_RESULTS_DIR=/r\0"));
    CHECK(!HOLDS("OLD=RACKBENCH_RESULTS_DIR=/r\0"));
    /* A prefix of ours, cut short. */
    CHECK(!HOLDS("RACKBENCH_RESULTS_DIR=/\0"));
    CHECK(!HOLDS("RACKBENCH_RESULTS_DIR=\0"));
    CHECK(!HOLDS("RACKBENCH_RESULTS_DIR=/"));
    /* The entry split across two entries by a NUL. */
    CHECK(!HOLDS("RACKBENCH_RESULTS_DIR=\0/r\0"));
    /* Same name, another value; same value, another name. */
    CHECK(!HOLDS("RACKBENCH_RESULTS_DIR=/R\0"));
    CHECK(!HOLDS("RACKBENCH_TRIAL_DIR=/r\0"));
}

static void test_odd_buffers(void)
{
    CHECK(!holds_marker("", 0));
    CHECK(!HOLDS("\0"));
    CHECK(!HOLDS("\0\0\0"));
    /* Empty values and entries without '=' around ours do not disturb it. */
    CHECK(HOLDS("EMPTY=\0JUNK\0\0RACKBENCH_RESULTS_DIR=/r\0=\0"));
    CHECK(!HOLDS("EMPTY=\0JUNK\0\0=\0"));
    /* A process title written over the area (Ruby's $0=): no NULs at all. */
    CHECK(!HOLDS("puma: cluster worker 0: 4242 [app] RACKBENCH_RESULTS_DIR=/r"));
    CHECK(HOLDS("puma: cluster worker 0\0\0\0\0RACKBENCH_RESULTS_DIR=/r\0"));
}

static void test_entry_edges(void)
{
    const char env[] = "A=\0B\0";
    const char *buf = fenced_end(env, sizeof env - 1);
    /* Exact matches of an empty value and of an entry without '='. */
    CHECK(environ_has_entry(buf, sizeof env - 1, "A=", 2));
    CHECK(environ_has_entry(buf, sizeof env - 1, "B", 1));
    CHECK(!environ_has_entry(buf, sizeof env - 1, "A", 1));
    /* An empty entry never matches, not even the empty entry of "\0\0". */
    CHECK(!environ_has_entry(fenced_end("\0\0", 2), 2, "", 0));
    /* An entry longer than the buffer. */
    CHECK(!environ_has_entry(fenced_end("A=1", 3), 3, "A=12", 4));
}

static void test_entry_valid(void)
{
    CHECK(environ_entry_valid("RACKBENCH_RESULTS_DIR=/r"));
    CHECK(environ_entry_valid("A=B"));
    CHECK(environ_entry_valid("A=B=C"));
    CHECK(environ_entry_valid("A=="));
    CHECK(!environ_entry_valid("A="));
    CHECK(!environ_entry_valid("=B"));
    CHECK(!environ_entry_valid("="));
    CHECK(!environ_entry_valid("AB"));
    CHECK(!environ_entry_valid(""));
}

int main(void)
{
    fenced_init();
    test_positions();
    test_look_alikes();
    test_odd_buffers();
    test_entry_edges();
    test_entry_valid();
    return check_report("guard environ_match");
}
