/*
 * ws_conn.h - one WebSocket client connection of the engine: its socket
 * (and TLS for wss://, tls.h), the opening handshake (ws_handshake.h),
 * Action Cable's welcome and subscription when the run speaks it
 * (cable.h), frames both ways (ws_frame.h), the control frames a client
 * must answer (a ping's pong, a close's close) and how it ended.
 *
 * What a connection carries, and when, is the workload's (ws_worker.c):
 * it hears through ws_conn_events that the connection is ready, that a
 * message of the application came (a whole text or binary message; with
 * Action Cable, the "message" value of a broadcast or a transmit), and
 * that it ended. Counts that no workload needs to interpret (frames,
 * bytes, pings, Cable's own messages, ends by kind with their first
 * reason) go straight into the thread's ws_conn_tally.
 *
 * A connection runs once: it is not reopened after it ended (a client
 * that failed to connect is a failure of the server's, counted, not
 * retried until it passes). Every socket is registered once, edge
 * triggered, for input and output, as the HTTP connections are.
 */
#ifndef RB_WS_CONN_H
#define RB_WS_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"
#include "rng.h"
#include "tls.h"
#include "worker.h"
#include "ws_frame.h"
#include "ws_handshake.h"

typedef enum {
    WS_CONN_IDLE = 0,       /* not opened yet (a ramp's later client) */
    WS_CONN_CONNECTING,     /* the TCP connect is in progress */
    WS_CONN_TLS,            /* wss://: the TLS handshake */
    WS_CONN_UPGRADING,      /* the Upgrade was sent: waiting for 101 */
    WS_CONN_SUBSCRIBING,    /* Action Cable: waiting for welcome, then the confirmation */
    WS_CONN_OPEN,           /* ready: the workload's messages flow */
    WS_CONN_DONE            /* ended (c->end says how): no socket */
} ws_conn_state;

/* How a connection ended; doc/output.md's names are ws_end_names. Before
 * it was ready these are the run's connect failures, after it its lost
 * connections. */
typedef enum {
    WS_END_NONE = 0,
    WS_END_REFUSED,         /* the TCP connect was refused */
    WS_END_CONNECT,         /* another connect error (no port left, unreachable) */
    WS_END_TIMEOUT,         /* not ready within --timeout of its start */
    WS_END_TLS,             /* wss://: TLS failed (the run's "tls" object says how) */
    WS_END_STATUS,          /* the server answered the Upgrade with another status */
    WS_END_HANDSHAKE,       /* a 101 that is not right (accept, upgrade, subprotocol) or no HTTP */
    WS_END_REJECTED,        /* Action Cable rejected the subscription */
    WS_END_MALFORMED,       /* the server broke the WebSocket protocol (a malformed frame) */
    WS_END_SERVER_CLOSE,    /* the server sent a close frame */
    WS_END_DROPPED,         /* the server closed or reset the socket without a close frame */
    WS_END_DISCONNECT,      /* Action Cable's own "disconnect" message */
    WS_END_CLIENT,          /* the engine closed it at the end of the run */
    WS_END_KINDS
} ws_end;

extern const char *const ws_end_names[WS_END_KINDS];

/* The longest reason kept per kind of end. */
#define WS_REASON_BYTES 200
/* Distinct close codes counted apart; more fall into "other". */
#define WS_CLOSE_CODES_KEPT 16

/* What a thread's connections counted (merged across threads for the
 * result). */
typedef struct {
    uint64_t frames_in[WS_OPCODES], frames_out[WS_OPCODES];
    uint64_t bytes_in, bytes_out;     /* WebSocket bytes, after TLS */
    uint64_t fragmented_in;           /* messages that came in more than one frame */
    uint64_t pongs_sent;              /* pings answered */
    uint64_t cable_welcomes, cable_confirms, cable_pings, cable_unexpected;
    uint64_t failed[WS_END_KINDS];    /* ended before ready, by kind */
    uint64_t lost[WS_END_KINDS];      /* ended after ready, before the run's end, by kind */
    char reason[WS_END_KINDS][WS_REASON_BYTES]; /* the first reason of each kind */
    int close_codes[WS_CLOSE_CODES_KEPT];       /* the server's close codes, and their counts */
    uint64_t close_code_counts[WS_CLOSE_CODES_KEPT];
    uint64_t close_codes_other;
} ws_conn_tally;

/* What every connection of a thread is made with (read-only once built by
 * ws_conn_config_init, but its scratch buffer, which is the thread's). */
typedef struct {
    const engine_config *engine;
    ws_request_parts request;   /* the Upgrade's path, Host, Origin, subprotocol, -H */
    char host_header[300];
    char origin[320];
    int cable;                  /* Action Cable: welcome and subscription before ready */
    char identifier[1024];      /* Cable: the channel's identifier */
    size_t max_message_bytes;
    size_t fragment_bytes;      /* frames of this many bytes (0: one per message) */
    uint64_t timeout_ns;        /* from open to ready */
    /* The thread's buffers: a message's body (ws_payload.h) is written
     * into body, a Cable command around it into command, and either is
     * framed into scratch before it is sent. */
    char *body;
    size_t body_cap;
    char *command;
    size_t command_cap;
    uint8_t *scratch;
    size_t scratch_cap;
} ws_conn_config;

typedef struct ws_conn ws_conn;

/* The workload's side of a connection. Each is called on the thread's
 * loop; none may free the connection. */
typedef struct {
    /* The connection is ready (open; with Cable, subscribed). */
    void (*ready)(ws_conn *c, uint64_t now_ns);
    /* A message of the application: data and len of the whole message
     * (Cable: the "message" value's JSON text). */
    void (*message)(ws_conn *c, const uint8_t *data, size_t len, uint64_t now_ns);
    /* The connection ended (c->end, c->was_ready). */
    void (*ended)(ws_conn *c, uint64_t now_ns);
} ws_conn_events;

/* The event loop's pointer: a WebSocket connection or the HTTP
 * broadcaster; the first member of each says which. */
typedef enum { WS_ITEM_CONN = 1, WS_ITEM_HTTP_BROADCASTER } ws_item_kind;

struct ws_conn {
    ws_item_kind item;          /* WS_ITEM_CONN: first, for the loop */
    worker *w;
    const ws_conn_config *cfg;
    const ws_conn_events *events;
    ws_conn_tally *tally;
    int fd;
    ws_conn_state state;
    uint32_t slot;              /* the client's number across all threads */
    tls_conn *tls;              /* wss:// only */
    ws_reader reader;
    char *answer;               /* the handshake's answer so far (while upgrading) */
    size_t answer_len;
    char accept[WS_ACCEPT_CHARS + 1];
    int welcomed;               /* Cable: the welcome came */
    int was_ready;              /* it got to WS_CONN_OPEN */
    ws_end end;                 /* WS_END_NONE until it ended */
    int close_code;             /* the server's close code, when it sent one */
    /* Output the socket did not take (ws://; TLS keeps its own). */
    uint8_t *out;
    size_t out_len, out_sent, out_cap;
    uint64_t open_ns;           /* its connect began */
    uint64_t ready_ns;
    uint64_t deadline_ns;       /* until ready: the timeout */
    uint64_t now_ns;            /* the turn's clock, while the reader calls back */
    int connected;              /* the TCP connect completed (a byte went out) */
    rng rng;                    /* mask keys and the handshake's key */
};

/* Builds what a thread's connections share from the run's configuration.
 * Returns 0, or -1 with a reason in err (a Cable identifier that cannot
 * be made). */
int ws_conn_config_init(ws_conn_config *cfg, const engine_config *engine, char *err, size_t err_len);
void ws_conn_config_free(ws_conn_config *cfg);

/* Prepares c (idle, nothing allocated but TLS's state for wss://). */
void ws_conn_init(ws_conn *c, worker *w, const ws_conn_config *cfg, const ws_conn_events *events,
                  ws_conn_tally *tally, uint32_t slot, uint64_t seed);

/* Starts connecting: socket, connect, and the Upgrade (or the TLS
 * handshake first). Returns 0, or -1 when it ended at once (ended was
 * called). */
int ws_conn_open(ws_conn *c, uint64_t now_ns);

/* What epoll reported for c. */
void ws_conn_on_event(ws_conn *c, uint32_t events, uint64_t now_ns);

/* Housekeeping: a connection not ready by its deadline ends as a timeout. */
void ws_conn_check_deadline(ws_conn *c, uint64_t now_ns);

/* Sends one message (WS_OP_TEXT or WS_OP_BINARY, fragmented as the
 * configuration says) of len bytes, or a control frame. What the socket
 * does not take now goes out on its next EPOLLOUT. Returns 0, or -1 when
 * the connection ended (ended was called). */
int ws_conn_send(ws_conn *c, ws_opcode op, const void *data, size_t len, uint64_t now_ns);

/* The run's end: an open connection says goodbye with a close frame
 * (1000: its purpose is fulfilled) and closes without waiting for the
 * answer, so that thousands of clients end at once; one still connecting
 * (an interrupted setup) just closes. ended is called with WS_END_CLIENT. */
void ws_conn_finish(ws_conn *c, uint64_t now_ns);

/* Frees what c holds. */
void ws_conn_free(ws_conn *c);

/* Merges src's counts into dst. */
void ws_conn_tally_merge(ws_conn_tally *dst, const ws_conn_tally *src);

#endif
