/*
 * ws_worker_state.h - what the WebSocket protocol's files share (private
 * to ws_worker.c, ws_broadcast.c and ws_report.c): the clients, the
 * thread's state and counts. Calls go one way: ws_worker.c (the clients
 * and the loop's table) uses ws_broadcast.c (the broadcaster and the
 * accounting of broadcasts), ws_report.c reads what both counted.
 */
#ifndef RB_WS_WORKER_STATE_H
#define RB_WS_WORKER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"
#include "worker.h"
#include "ws_conn.h"
#include "ws_http_post.h"
#include "ws_worker.h"

/* The per-second timeline of the setup is kept for this long. */
#define WS_SETUP_SECONDS_KEPT 3600

typedef struct ws_client {
    ws_conn conn;               /* first: the loop's pointer */
    /* echo */
    uint64_t seq;               /* its last message's number (1, 2, ...) */
    uint64_t origin_ns;         /* the awaited echo's latency origin */
    uint64_t echo_deadline_ns;
    int awaiting;               /* an echo is awaited (counted in flight) */
    phase_id phase;             /* the awaited echo's phase */
    struct ws_client *next_free; /* open loop: clients free to send */
    /* broadcast */
    uint64_t *seen;             /* a bit per broadcast number: received */
    uint64_t last_seq;          /* the highest broadcast number received */
    int receiver;               /* ready when the setup ended: every broadcast's addressee */
} ws_client;

/* What a broadcast run's broadcaster did (thread 0 only). */
typedef struct {
    uint64_t next_seq;          /* the next broadcast's number (from 1) */
    uint64_t next_due_ns;       /* when it is due */
    uint64_t scheduled;         /* due in the window */
    uint64_t sent[PHASE_COUNT]; /* sent, by the phase of their send */
    uint64_t first_window_seq, last_window_seq;
    uint64_t last_sent_ns;
    uint64_t failed;            /* window broadcasts that failed on their way out */
    uint64_t lost_broadcaster;  /* of them: its WebSocket was gone */
    histogram *lateness_ns;     /* window: actual send - due */
    uint64_t *sent_ns;          /* by number: when it went out (0: not sent) */
    ws_client *client;          /* the WebSocket broadcaster, or NULL */
    ws_http_post *http;         /* the HTTP one (--broadcast-url), or NULL */
    int published;
} ws_broadcaster;

typedef struct ws_worker {
    worker *w;
    ws_conn_config cfg;
    ws_conn_tally tally;
    ws_client *clients;
    int count;
    int started;                /* the clock is fixed: the run's start was called */
    /* setup */
    uint64_t setup_start_ns;
    int next_to_open;           /* the ramp's next client (index into clients) */
    int unsettled;              /* clients neither ready nor ended */
    int ready;                  /* clients that became ready */
    uint64_t last_ready_ns;
    histogram *connect_ns;      /* each ready client's open to ready */
    uint32_t *ready_per_s;      /* per second of the setup: clients ready */
    uint32_t *failed_per_s;     /* and failed */
    /* echo */
    ws_client *free_stack;      /* open loop */
    uint64_t echo_sent[PHASE_COUNT];
    uint64_t echo_stale;        /* echoes that came after their timeout */
    uint64_t echo_foreign;      /* messages that were no echo of the client's */
    /* broadcast: the receipts of this thread's clients */
    uint64_t max_seq;           /* broadcast numbers run from 1 to this */
    size_t seen_words;          /* uint64 words of each client's bitmap */
    uint32_t *got;              /* by number: receivers that got it (window) */
    uint64_t *slowest_ns;       /* by number: its latest receipt's latency */
    uint64_t receivers;
    uint64_t delivered;         /* window receipts by receivers, each once */
    uint64_t duplicates;        /* a broadcast received again by the same client */
    uint64_t foreign;           /* messages that carried no broadcast of ours */
    int draining;               /* after the window: waiting for the last broadcast */
    ws_broadcaster caster;      /* thread 0 only */
} ws_worker;

static inline ws_worker *ws_of(const worker *w) { return w->protocol_state; }

/* ws_broadcast.c: prepares the broadcast's accounting for this thread's
 * clients and, on thread 0, the broadcaster (its WebSocket client, slot
 * slot, or its HTTP connection). */
void ws_broadcast_create(ws_worker *ws, uint32_t broadcaster_slot);
void ws_broadcast_destroy(ws_worker *ws);

/* ws_broadcast.c: the setup's start: the broadcaster connects. */
void ws_broadcast_setup(ws_worker *ws, uint64_t now_ns);

/* ws_broadcast.c: whether the broadcaster is ready or gone (the setup
 * waits for it as for a client). */
int ws_broadcast_settled(const ws_worker *ws);

/* ws_broadcast.c: the run starts: the receivers are counted, the first
 * broadcast is due at the clock's start. */
void ws_broadcast_start(ws_worker *ws, uint64_t now_ns);

/* ws_broadcast.c: housekeeping: sends what is due (sets the worker's
 * think_due_ns to the next), and after the window ends waits for the last
 * broadcast's receipts. */
void ws_broadcast_tick(ws_worker *ws, uint64_t now_ns);

/* ws_broadcast.c: the window's end: the broadcaster stops and publishes
 * its last broadcast; every thread drains. */
void ws_broadcast_stop(ws_worker *ws, uint64_t now_ns);

/* ws_broadcast.c: a message came to client c. */
void ws_broadcast_received(ws_worker *ws, ws_client *c, const uint8_t *data, size_t len, uint64_t now_ns);

/* ws_broadcast.c: the loop's event for the HTTP broadcaster. */
void ws_broadcast_on_http_event(ws_worker *ws, uint32_t events, uint64_t now_ns);

/* ws_broadcast.c: the run's end: the broadcaster closes. */
void ws_broadcast_finish(ws_worker *ws, uint64_t now_ns);

#endif
