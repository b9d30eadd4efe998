/*
 * ws_options.h - the command line's WebSocket options (a ws:// or wss://
 * URL; doc/websockets.md), parsed into engine_config beside cli.c's, and
 * their checks against each other and against the HTTP options once the
 * URL is known. Errors are one line of text; cli.c prints them.
 */
#ifndef RB_WS_OPTIONS_H
#define RB_WS_OPTIONS_H

#include <getopt.h>
#include <stddef.h>

#include "config.h"

/* getopt_long's values of the WebSocket options (above cli.c's own). */
enum {
    OPT_WS_WORKLOAD = 512, OPT_WS_CABLE, OPT_WS_CHANNEL, OPT_WS_CHANNEL_PARAMS, OPT_WS_ECHO_ACTION,
    OPT_WS_BROADCAST_ACTION, OPT_WS_RAMP, OPT_WS_INTERVAL, OPT_WS_BROADCAST_URL, OPT_WS_MESSAGE_BYTES,
    OPT_WS_BINARY, OPT_WS_FRAGMENT_BYTES, OPT_WS_MAX_MESSAGE_BYTES
};

/* The options' getopt_long entries, ending with a zeroed one. */
extern const struct option ws_long_options[];

/* Their lines of --help. */
extern const char ws_usage_text[];

/* Sets the WebSocket defaults in cfg (before the options are read). */
void ws_options_defaults(engine_config *cfg);

/* Applies option opt (one of OPT_WS_*) with arg. Returns NULL, or err
 * with the problem written into it (err_len bytes). */
const char *ws_options_apply(engine_config *cfg, int opt, const char *arg, char *err, size_t err_len);

/* After the URL is parsed: checks the WebSocket options against the URL
 * and the other options, and resolves --broadcast-url (a loopback
 * address unless --allow-remote). given: how many WebSocket options the
 * command line set. Returns NULL, or err with the problem. */
const char *ws_options_check(engine_config *cfg, int given, char *err, size_t err_len);

#endif
