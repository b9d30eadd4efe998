/*
 * fuzz_split.h - how the fuzzers cut a byte stream into the pieces a
 * socket might deliver: whole, one byte at a time, fixed pieces, or
 * pseudo-random sizes (mostly small, sometimes empty, sometimes large),
 * chosen by the input's own bytes so a finding replays exactly.
 */
#ifndef RB_FUZZ_SPLIT_H
#define RB_FUZZ_SPLIT_H

#include <stddef.h>
#include <stdint.h>

/* mode: 0 whole, 1 one byte at a time, 2 pieces of fixed bytes, 3
 * pseudo-random sizes from state. */
typedef struct {
    int mode;
    uint32_t state;
    size_t fixed;
} splitter;

/* The next piece's length, at most left (0 is a piece too). */
static inline size_t next_piece(splitter *s, size_t left)
{
    size_t n;
    switch (s->mode) {
    case 0: n = left; break;
    case 1: n = 1; break;
    case 2: n = s->fixed; break;
    default:
        s->state = s->state * 1103515245u + 12345u;
        /* Mostly small pieces, sometimes empty, sometimes large. */
        n = (s->state >> 16) % 17;
        if ((s->state >> 8 & 7) == 0) n = (s->state >> 12) % 700;
        break;
    }
    return n < left ? n : left;
}

#endif
