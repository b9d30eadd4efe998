/*
 * check.h - the smallest test harness that does the job for the engine's C
 * tests: CHECK records a failure with file and line and carries on, so one
 * run reports every broken expectation; check_report() prints the closing
 * line "N passed, N failed" and returns the process exit status.
 */
#ifndef RB_CHECK_H
#define RB_CHECK_H

#include <stdio.h>

static int check_passed_count;
static int check_failed_count;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) {                                                          \
            check_passed_count++;                                            \
        } else {                                                             \
            check_failed_count++;                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                  \
        }                                                                    \
    } while (0)

#define CHECK_EQ_U64(actual, expected)                                        \
    do {                                                                      \
        unsigned long long check_a_ = (unsigned long long)(actual);           \
        unsigned long long check_e_ = (unsigned long long)(expected);         \
        if (check_a_ == check_e_) {                                           \
            check_passed_count++;                                             \
        } else {                                                              \
            check_failed_count++;                                             \
            fprintf(stderr, "%s:%d: %s == %llu, expected %llu\n", __FILE__,   \
                    __LINE__, #actual, check_a_, check_e_);                   \
        }                                                                     \
    } while (0)

static inline int check_report(const char *suite) {
    printf("%s: %d passed, %d failed\n", suite, check_passed_count,
           check_failed_count);
    return check_failed_count == 0 ? 0 : 1;
}

#endif
