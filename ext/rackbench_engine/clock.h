/*
 * clock.h - the engine's only time source.
 *
 * CLOCK_MONOTONIC, read through the vDSO (about 20 ns, no system call): it
 * never jumps with NTP or the wall clock, so a latency is always a true
 * difference. Every timestamp in the engine is nanoseconds on this clock.
 */
#ifndef RB_CLOCK_H
#define RB_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS_PER_US UINT64_C(1000)
#define NS_PER_MS UINT64_C(1000000)
#define NS_PER_S UINT64_C(1000000000)

static inline uint64_t clock_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static inline struct timespec clock_timespec(uint64_t ns) {
    struct timespec ts = {.tv_sec = (time_t)(ns / NS_PER_S),
                          .tv_nsec = (long)(ns % NS_PER_S)};
    return ts;
}

#endif
