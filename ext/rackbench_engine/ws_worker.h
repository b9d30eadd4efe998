/*
 * ws_worker.h - WebSocket clients as a protocol of the worker (worker.h):
 * each thread's clients on its one event loop, beside what HTTP/1.1 and
 * HTTP/2 do with theirs, and the three workloads (doc/websockets.md).
 *
 * The run has a setup before its clock (worker.h's run_setup): every
 * client connects, all at once or spread over --ramp, and subscribes when
 * the run speaks Action Cable; the setup ends when each has become ready
 * or failed (each within --timeout of its start). Then the clock's warmup
 * and measured window run as for HTTP:
 *   connect:   the clients hold their connections; nothing is sent (pings
 *              are answered), so the server's memory per connection can be
 *              sampled over the window;
 *   echo:      each client sends a message and waits for it to come back
 *              (closed loop), or the messages go out at --rate (open loop,
 *              the round trip counted from the scheduled send);
 *   broadcast: one broadcaster sends a message every --interval, which
 *              the server sends to every client; its round trip runs from
 *              the send to the last client's receipt, and every client's
 *              receipt of every numbered broadcast is accounted for.
 */
#ifndef RB_WS_WORKER_H
#define RB_WS_WORKER_H

#include <stdint.h>

#include "worker.h"

/* What the threads of a broadcast run share (main.c makes it, every
 * worker's protocol_shared points at it). The broadcaster's thread
 * publishes, once it stops, the window's last broadcast, so that the
 * other threads know what to wait for before they end; they read it with
 * acquire after published (release) says it is there. */
typedef struct {
    uint64_t last_seq;          /* the window's last broadcast sent (0: none) */
    uint64_t last_sent_ns;      /* when it went out */
    int published;
} ws_shared;

/* The protocol table main.c gives the workers for a ws:// or wss:// URL.
 * Its create() exits with status 2 when the run cannot be set up (a Cable
 * identifier that cannot be made). */
extern const worker_protocol ws_protocol;

#endif
