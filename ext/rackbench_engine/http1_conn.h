/*
 * http1_conn.h - HTTP/1.1 as a protocol of the worker (worker.h): each
 * connection is a slot carrying one request at a time, kept alive across
 * requests unless the run or the server says otherwise.
 *
 * Closed loop: every connection keeps one request in flight. Open loop:
 * each scheduled request goes on a free connection; its latency counts
 * from its scheduled time.
 */
#ifndef RB_HTTP1_CONN_H
#define RB_HTTP1_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "cookie_jar.h"
#include "http1_session.h"
#include "probes.h"
#include "slot_service.h"
#include "http_response.h"
#include "requests.h"
#include "rng.h"
#include "tls.h"
#include "worker.h"

typedef enum {
    CONN_IDLE = 0,      /* no request in progress; fd open (kept alive) or -1 */
    CONN_CONNECTING,    /* connecting for req */
    CONN_HANDSHAKING,   /* https://: connected, TLS handshake in progress for req */
    CONN_WRITING,       /* req partly written */
    CONN_READING,       /* waiting for / reading the response */
    CONN_CLOSING,       /* response done; waiting for the server's close */
    CONN_BACKOFF,       /* a connect failed; retry after backoff_until_ns */
    CONN_THINKING       /* --think: response done; the next request after
                           backoff_until_ns (the connection stays open) */
} conn_state;

typedef struct conn {
    worker *w;
    int fd;
    conn_state state;
    uint32_t slot;              /* connection number across all threads */
    const request_template *req;
    const char *wire;           /* bytes of the request being sent: the
                                   entry's prebuilt wire, or a rendering */
    size_t wire_len, head_len;
    int is_head;
    int deferred;               /* idle until housekeeping: a request was not
                                   sent for want of a variable */
    slot_session *sess;         /* NULL unless the list needs it */
    size_t written;
    uint64_t start_ns;          /* latency origin: scheduled time (open loop)
                                   or when the slot became free (closed loop) */
    uint64_t deadline_ns;
    uint64_t backoff_until_ns;
    uint64_t resp_bytes;
    phase_id phase;
    int established_once;
    uint32_t requests_on_fd;
    rng rng;
    size_t first_done;
    cookie_jar *jar;            /* NULL unless --cookies */
    slot_service service;       /* was it served in the window (slot_service.h) */
    slot_probe probe;           /* its session probes (probes.h) */
    tls_conn *tls;              /* https://: the slot's TLS (its session outlives
                                   connections); NULL otherwise */
    int paid_handshake;         /* the request in progress waited for a handshake */
    struct conn *next_free;     /* open loop: stack of idle slots */
    http_response resp;
} conn;

/* The protocol table main.c gives the workers for --protocol http1. */
extern const worker_protocol http1_protocol;

#endif
