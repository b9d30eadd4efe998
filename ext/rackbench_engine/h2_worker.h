/*
 * h2_worker.h - one engine thread's HTTP/2 (h2c) load: its connections,
 * each carrying --streams concurrent streams, driven by the same epoll
 * loop, clock, schedule and statistics as HTTP/1.1 (worker.h).
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

/* Prepares w's h2c state: its connections, stream slots and translated
 * requests (allocations happen here, before the run). Exits on
 * out-of-memory. */
struct h2_worker *h2_worker_new(worker *w);

void h2_worker_free(struct h2_worker *h);

/* Runs w's load from the run's start to its end (called on w's thread
 * after the start instant); returns when every stream has ended. */
void h2_worker_loop(worker *w);

#endif
