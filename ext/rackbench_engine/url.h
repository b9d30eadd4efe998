/*
 * url.h - target URL parsing, resolution and the loopback guard.
 */
#ifndef RB_URL_H
#define RB_URL_H

#include "config.h"

/* Splits an http://, https://, ws:// or wss:// URL into cfg->host,
 * cfg->port (80 or 443 unless given), cfg->path, and sets cfg->tls for
 * https and wss, cfg->ws for ws and wss. Returns NULL or a static error
 * text. */
const char *url_parse(engine_config *cfg, const char *url);

/* Resolves cfg->host:cfg->port into cfg->addr. Unless cfg->allow_remote,
 * refuses any address outside 127.0.0.0/8 and ::1: a load test must never
 * hit someone else's machine by a typo. Returns NULL or an error written
 * into err (err_len bytes). */
const char *url_resolve(engine_config *cfg, char *err, size_t err_len);

#endif
