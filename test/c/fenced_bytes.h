/*
 * fenced_bytes.h - places test input right against an unreadable page, so
 * that reading one byte past (or before) it crashes at once instead of
 * passing by luck: what the guard's parsers read has no terminating NUL.
 */
#ifndef RB_FENCED_BYTES_H
#define RB_FENCED_BYTES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A file may want more room (the TLS fuzzer's records): define it first. */
#ifndef FENCED_BYTES_MAX
#define FENCED_BYTES_MAX (64 * 1024)
#endif

static char *fenced_area; /* FENCED_BYTES_MAX between two PROT_NONE pages */

static void fenced_init(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t total = page + FENCED_BYTES_MAX + page;
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED || mprotect(base, page, PROT_NONE) != 0 ||
        mprotect(base + page + FENCED_BYTES_MAX, page, PROT_NONE) != 0) {
        perror("fenced_init");
        exit(2);
    }
    fenced_area = base + page;
}

/* Copies bytes[0, len) so that it ends right before the trailing fence. */
static const char *fenced_end(const char *bytes, size_t len)
{
    if (len > FENCED_BYTES_MAX) abort();
    char *at = fenced_area + FENCED_BYTES_MAX - len;
    if (len > 0) memcpy(at, bytes, len);
    return at;
}

/* Copies bytes[0, len) so that it starts right after the leading fence. */
static const char *fenced_start(const char *bytes, size_t len)
{
    if (len > FENCED_BYTES_MAX) abort();
    if (len > 0) memcpy(fenced_area, bytes, len);
    return fenced_area;
}

#endif
