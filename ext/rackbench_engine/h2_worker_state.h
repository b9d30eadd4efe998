/*
 * h2_worker_state.h - what the h2c protocol's two files share (private to
 * h2_worker.c and h2_conn.c): stream slots, connections and the worker's
 * lists, and what h2_conn.c offers h2_worker.c. Calls go one way:
 * h2_worker.c (the schedule) uses h2_conn.c (a connection), never back.
 */
#ifndef RB_H2_WORKER_STATE_H
#define RB_H2_WORKER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "h2_client.h"
#include "h2_request.h"
#include "tls.h"
#include "worker.h"

/* After a failed connection (refused, not h2c, protocol error) its slots
 * wait before the next attempt, so a wrong server costs a bounded number
 * of attempts instead of a busy loop. */
#define RECONNECT_BACKOFF_NS (10 * NS_PER_MS)
/* A connection's output buffer: a turn's requests on all its streams
 * (HEADERS of a few dozen bytes each once HPACK has indexed them). */
#define OUT_BUFFER_BYTES (16 * 1024)

typedef enum { SLOT_FREE = 0, SLOT_SENT } slot_state;
typedef enum { H2CONN_CLOSED = 0, H2CONN_OPEN, H2CONN_BACKOFF } h2conn_state;

struct h2_conn;

typedef struct h2_slot {
    h2_stream stream;           /* first member: the client reports it */
    struct h2_conn *hc;
    slot_state state;
    const request_template *req;
    uint64_t start_ns;          /* latency origin: scheduled (open loop) or freed (closed) */
    uint64_t deadline_ns;
    phase_id phase;
    uint32_t id;                /* stream slot number across all threads */
    rng rng;
    size_t first_done;
    int paid_handshake;         /* https://: sent before its connection's handshake ended */
    int ready;                  /* in the worker's ready list */
    struct h2_slot *next_ready;
    int pending;                /* chosen and counted in flight, waiting for its
                                   connection to drain after a GOAWAY */
    struct h2_slot *next_free;  /* open loop: stack of free slots */
    slot_service service;       /* the stream slot served in the window? */
} h2_slot;

typedef struct h2_conn {
    worker *w;
    int fd;
    h2conn_state state;
    int connected;              /* the first write went out */
    int established_once;
    h2_client client;
    int has_client;
    /* Output: nghttp2 hands it over a frame at a time; the frames of a
     * turn are gathered here and written with one send (a send per frame
     * would cost a system call per request). chunk is what nghttp2 gave
     * last and did not fit yet (valid until its next call). */
    uint8_t *out;
    size_t out_len, out_sent;
    const uint8_t *chunk;
    size_t chunk_len;
    int busy;                   /* slots in SLOT_SENT */
    int goaway_counted;
    int dirty;                  /* in the worker's list of connections to flush */
    struct h2_conn *next_dirty;
    uint64_t backoff_until_ns;
    h2_slot *slots;             /* cfg->streams of them */
    slot_service service;       /* the connection: served when any stream was */
    uint32_t number;            /* connection number across all threads */
    /* https:// (--protocol h2): the connection's TLS (its session outlives
     * connections), NULL otherwise. While handshaking, only the handshake's
     * flights go out; the session's frames wait in nghttp2. */
    tls_conn *tls;
    int handshaking;
    phase_id open_phase;        /* the phase of the request that opened it */
} h2_conn;

struct h2_worker {
    int conn_count;
    size_t request_count;
    h2_conn *conns;
    h2_slot *slots;
    int streams;
    h2_slot *free_stack;
    /* Slots that came free (or wait for their connection) since the last
     * turn of the loop, and connections with requests submitted since: the
     * loop works through both lists instead of scanning every slot. */
    h2_slot *ready_head;
    h2_conn *dirty_head;
    h2_request *requests;       /* translated set->items, same order */
};

/* The protocol's state in worker.protocol_state. */
static inline struct h2_worker *h2_of(const worker *w) { return w->protocol_state; }

/* h2_conn.c: slot s is to be looked at at the end of this turn (the
 * worker's ready list); a slot already in the list stays once. */
void h2_push_ready(h2_slot *s);

/* h2_conn.c: the request on slot s ended (answered or failed): its slot is
 * free for the next one, started on the loop's next turn. */
void h2_slot_ended(h2_slot *s);

/* h2_conn.c: counts slot s's request as failed under kind. */
void h2_slot_error(h2_slot *s, error_kind kind, uint64_t now_ns);

/* h2_conn.c: ends hc (its streams fail under kind), with a backoff before
 * its slots go back to work when asked. */
void h2_conn_close(h2_conn *hc, error_kind kind, int backoff, uint64_t now_ns);

/* h2_conn.c: writes what hc's session has to send. 0, or -1 after closing hc. */
int h2_conn_flush(h2_conn *hc, uint64_t now_ns);

/* h2_conn.c: opens hc's socket and session (and its TLS) for a request of
 * phase. 0, or -1 after closing it. */
int h2_conn_open(h2_conn *hc, phase_id phase, uint64_t now_ns);

/* h2_conn.c: what epoll reported for hc. */
void h2_conn_on_event(h2_conn *hc, uint32_t events, uint64_t now_ns);

#endif
