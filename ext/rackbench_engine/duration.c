/*
 * duration.c - the command line's durations (config.h's
 * cli_parse_duration), in a file of their own: cli.c and ws_options.c
 * both read them, and neither may call the other.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"

int cli_parse_duration(const char *text, uint64_t *out_ns) {
    if (!text || !*text) return -1;
    errno = 0;
    char *end = NULL;
    double value = strtod(text, &end);
    if (errno || end == text || !isfinite(value) || value < 0) return -1;
    double scale;
    if (*end == '\0' || strcmp(end, "s") == 0) scale = 1e9;
    else if (strcmp(end, "ms") == 0) scale = 1e6;
    else if (strcmp(end, "us") == 0) scale = 1e3;
    else if (strcmp(end, "m") == 0) scale = 60e9;
    else if (strcmp(end, "h") == 0) scale = 3600e9;
    else return -1;
    double ns = value * scale;
    if (ns > 1e15) return -1; /* about 11 days: surely a typo */
    *out_ns = (uint64_t)llround(ns);
    return 0;
}
