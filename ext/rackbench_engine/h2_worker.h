/*
 * h2_worker.h - HTTP/2 (h2c) as a protocol of the worker (worker.h): its
 * connections, each carrying --streams concurrent streams, driven by the
 * same epoll loop, clock, schedule and statistics as HTTP/1.1.
 *
 * A stream slot is to h2c what a connection is to HTTP/1.1: it carries
 * one request at a time. Closed loop: every slot of every connection
 * keeps one request in flight (connections x streams). Open loop: each
 * scheduled request goes on a free slot of any connection; its latency
 * counts from its scheduled time, so waiting for a free stream is part of
 * it (no coordinated omission).
 */
#ifndef RB_H2_WORKER_H
#define RB_H2_WORKER_H

#include "worker.h"

/* The protocol table main.c gives the workers for --protocol h2c. Its
 * create() exits with status 2 when a request cannot be translated into
 * HTTP/2 header fields. */
extern const worker_protocol h2_protocol;

#endif
