/*
 * test_nofile.c - the open-file limit a run needs (nofile.h): the plan
 * for every case of soft and hard limits, and the real limit raised in
 * this process and put back.
 */
#include "check.h"
#include "nofile.h"

#include <string.h>
#include <sys/resource.h>

static void test_plan(void) {
    uint64_t soft, hard;
    CHECK(nofile_plan(500, 1024, 4096, 0, &soft, &hard) == 0 && soft == 1024 && hard == 4096); /* enough */
    CHECK(nofile_plan(3000, 1024, 4096, 0, &soft, &hard) == 0 && soft == 3000 && hard == 4096); /* soft raised */
    CHECK(nofile_plan(5000, 1024, 4096, 0, &soft, &hard) == -1);                                /* cannot */
    CHECK(nofile_plan(5000, 1024, 4096, 1, &soft, &hard) == 0 && soft == 5000 && hard == 5000); /* root */
    CHECK(nofile_plan(5000, RLIM_INFINITY, RLIM_INFINITY, 0, &soft, &hard) == 0 && soft == RLIM_INFINITY);
    CHECK(nofile_plan(5000, 1024, RLIM_INFINITY, 0, &soft, &hard) == 0 && soft == 5000 && hard == RLIM_INFINITY);
}

static void test_ensure(void) {
    struct rlimit before;
    CHECK(getrlimit(RLIMIT_NOFILE, &before) == 0);
    /* Lowered first, so that the run must raise it. */
    struct rlimit low = {.rlim_cur = 256, .rlim_max = before.rlim_max};
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    nofile_limits limits;
    char err[512];
    uint64_t want = before.rlim_max == RLIM_INFINITY || before.rlim_max > 2000 ? 1000 : before.rlim_max / 2;
    CHECK(nofile_ensure(want, 2, &limits, err, sizeof(err)) == 0);
    CHECK(limits.soft_before == 256);
    CHECK(limits.needed == want + 4 + NOFILE_SPARE);
    struct rlimit now;
    getrlimit(RLIMIT_NOFILE, &now);
    if (limits.needed > 256) {
        CHECK(limits.raised);
        CHECK(now.rlim_cur >= limits.needed);
    }
    /* Already enough: nothing changes. */
    CHECK(nofile_ensure(10, 1, &limits, err, sizeof(err)) == 0 && !limits.raised);
    CHECK(setrlimit(RLIMIT_NOFILE, &before) == 0);
}

int main(void) {
    test_plan();
    test_ensure();
    return check_report("nofile");
}
