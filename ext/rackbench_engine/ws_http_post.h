/*
 * ws_http_post.h - the HTTP broadcaster of a WebSocket broadcast run
 * (--broadcast-url): one kept-alive HTTP/1.1 connection to an endpoint of
 * the app that broadcasts what it is POSTed (Action Cable:
 * ActionCable.server.broadcast(stream, params); a plain server: to every
 * client), on the worker's event loop beside the WebSocket clients.
 *
 * One POST at a time: a broadcast falls due while the last is unanswered
 * waits for it (the broadcaster counts how late it went out), so a slow
 * endpoint makes the schedule late, visibly, and never doubles the load.
 * A POST that fails (refused, reset, timed out, or answered with a status
 * other than 2xx) is counted with its reason; the next one opens a new
 * connection when the last was lost.
 */
#ifndef RB_WS_HTTP_POST_H
#define RB_WS_HTTP_POST_H

#include <stddef.h>
#include <stdint.h>

#include "http_response.h"
#include "worker.h"
#include "ws_conn.h"

/* Why a POST failed (doc/output.md's names: ws_post_failure_names). */
typedef enum {
    WS_POST_OK = 0,
    WS_POST_CONNECT,    /* the connection could not be made */
    WS_POST_WRITE,      /* it broke while the POST was written */
    WS_POST_READ,       /* it broke, or the answer was not HTTP, before the answer's end */
    WS_POST_TIMEOUT,    /* no answer within --timeout */
    WS_POST_STATUS,     /* an answer other than 2xx */
    WS_POST_KINDS
} ws_post_failure;

extern const char *const ws_post_failure_names[WS_POST_KINDS];

typedef struct ws_http_post ws_http_post;

/* Told when a POST ended: ok, or how it failed. */
typedef void (*ws_post_done_fn)(void *ctx, uint64_t seq, ws_post_failure how, int status, uint64_t now_ns);

struct ws_http_post {
    ws_item_kind item;          /* WS_ITEM_HTTP_BROADCASTER: first, for the loop */
    worker *w;
    const engine_config *cfg;
    ws_post_done_fn done;
    void *done_ctx;
    int fd;
    int connected;
    int busy;                   /* a POST is unanswered */
    uint64_t seq;               /* the broadcast it carries */
    uint64_t deadline_ns;
    char *out;                  /* the request being written */
    size_t out_len, out_sent, out_cap;
    http_response resp;
    uint64_t posts, failures[WS_POST_KINDS];
    int statuses[8];            /* the first distinct non-2xx statuses seen */
    char reason[200];           /* the first failure's reason */
};

/* Prepares p for cfg's --broadcast-url; done hears every POST's end. */
void ws_http_post_init(ws_http_post *p, worker *w, ws_post_done_fn done, void *done_ctx);

/* POSTs body (len bytes, JSON) as broadcast seq. Only when !p->busy.
 * Returns 0 when it is on its way (done follows), -1 when it failed at
 * once (done was called). */
int ws_http_post_send(ws_http_post *p, uint64_t seq, const char *body, size_t len, uint64_t now_ns);

/* What epoll reported for p. */
void ws_http_post_on_event(ws_http_post *p, uint32_t events, uint64_t now_ns);

/* Housekeeping: a POST unanswered past its deadline fails as a timeout. */
void ws_http_post_check(ws_http_post *p, uint64_t now_ns);

/* Closes p's connection and frees what it holds. */
void ws_http_post_free(ws_http_post *p);

#endif
