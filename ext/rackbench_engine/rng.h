/*
 * rng.h - seeded pseudorandom numbers for the request mix.
 *
 * splitmix64 (Steele, Lea, Flood 2014): tiny state, passes BigCrush, and
 * seeding one generator per connection slot with seed + slot id makes the
 * sequence of requests on every slot reproducible run after run, whatever
 * the thread scheduling.
 */
#ifndef RB_RNG_H
#define RB_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
} rng;

static inline void rng_seed(rng *r, uint64_t seed) { r->state = seed; }

static inline uint64_t rng_next(rng *r) {
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [0, bound) without modulo bias (Lemire's multiply-shift with
 * rejection). bound must be > 0. */
static inline uint64_t rng_below(rng *r, uint64_t bound) {
    for (;;) {
        unsigned __int128 m = (unsigned __int128)rng_next(r) * bound;
        uint64_t low = (uint64_t)m;
        if (low >= bound || low >= (-bound) % bound) return (uint64_t)(m >> 64);
    }
}

#endif
