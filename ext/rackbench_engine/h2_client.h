/*
 * h2_client.h - one HTTP/2 client connection (h2c, prior knowledge) as a
 * state machine over memory buffers, built on nghttp2's session API.
 *
 * nghttp2 does the framing, HPACK, stream states and flow control; this
 * file decides what the engine needs of it: a large receive window (so a
 * download is never throttled by the client), streams whose end is
 * reported exactly once with why they ended (complete, reset with a code,
 * refused by a GOAWAY, the connection lost), and a clear verdict when the
 * peer does not speak HTTP/2 at all.
 *
 * No socket here: the caller feeds received bytes with h2_client_recv and
 * sends what h2_client_pending_output returns. The C tests pair a client
 * with nghttp2's own server session through plain buffers.
 */
#ifndef RB_H2_CLIENT_H
#define RB_H2_CLIENT_H

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdint.h>

/* Receive window the client announces, for every stream
 * (SETTINGS_INITIAL_WINDOW_SIZE) and for the connection: 16 MiB, so that
 * a loopback download runs at the speed of the server, not of our window
 * updates (nghttp2's default of 64 KiB stalls a large body every 64 KiB). */
#ifndef H2_WINDOW_BYTES
#define H2_WINDOW_BYTES (16 * 1024 * 1024)
#endif

/* Longest text kept for a "not HTTP/2" or protocol-error reason. */
#define H2_REASON_BYTES 160

typedef enum {
    H2_STREAM_COMPLETE = 0, /* response with END_STREAM */
    H2_STREAM_RESET,        /* RST_STREAM from the server (error_code set) */
    H2_STREAM_GOAWAY,       /* refused: above a GOAWAY's last stream id */
    H2_STREAM_LOST          /* the stream closed otherwise (code set if any) */
} h2_stream_end;

/* One request/response exchange. The caller owns it (embedded in its slot)
 * and must keep it alive until its end is reported or it is cancelled. */
typedef struct h2_stream {
    int32_t id;             /* 0 when not submitted */
    int status;             /* :status of the final response; 0 if none */
    uint64_t body_bytes;    /* DATA payload received */
    uint64_t header_bytes;  /* name + value bytes of the response's headers */
    int end_stream;         /* END_STREAM seen from the server */
    uint32_t reset_code;    /* RST_STREAM's code when reset */
    const uint8_t *body;    /* request body to send (not copied) */
    size_t body_len, body_sent;
} h2_stream;

/* Told once per submitted stream that ends (not for cancelled ones). */
typedef void (*h2_stream_end_cb)(void *ctx, h2_stream *s, h2_stream_end how, uint32_t error_code);

typedef struct {
    nghttp2_session *session;
    h2_stream_end_cb on_end;
    void *ctx;
    int received_any;       /* some bytes came from the peer */
    char first_bytes[40];   /* the first of them: the reason when not HTTP/2 */
    size_t first_len;
    int failed;             /* the connection is unusable (reason set) */
    int not_h2;             /* the peer answered in something not HTTP/2 */
    char reason[H2_REASON_BYTES];
    int goaway;             /* a GOAWAY came */
    int32_t goaway_last_stream_id;
    uint32_t goaway_code;
    int peer_settings_seen; /* the server's first SETTINGS came: it speaks HTTP/2 */
    uint32_t peer_max_streams; /* the server's SETTINGS_MAX_CONCURRENT_STREAMS (0: not seen) */
    int open_streams;       /* submitted and not yet ended or cancelled */
} h2_client;

/* Starts a client session: queues the connection preface and our SETTINGS
 * (no push, window_bytes per stream and for the connection). Returns 0,
 * or -1 when nghttp2 cannot allocate. */
int h2_client_init(h2_client *c, uint32_t window_bytes, h2_stream_end_cb on_end, void *ctx);

/* Frees the session. Streams still open are not reported: the caller
 * knows its in-flight streams and fails them itself. */
void h2_client_free(h2_client *c);

/* Submits a request with the given header fields (pseudo-headers first)
 * and s->body (if s->body_len > 0). Returns the stream id (> 0), or -1
 * (ids exhausted, session closing, failed). */
int32_t h2_client_submit(h2_client *c, const nghttp2_nv *headers, size_t header_count, h2_stream *s);

/* Cancels a stream still open (a timeout): sends RST_STREAM(CANCEL); its
 * end is not reported. */
void h2_client_cancel(h2_client *c, h2_stream *s);

/* Feeds bytes received from the peer. Ends of streams are reported from
 * inside. Returns 0, or -1 when the connection failed: c->reason says why
 * (c->not_h2 when the peer answered the preface in something else, e.g.
 * "HTTP/1.1 400 Bad Request"). */
int h2_client_recv(h2_client *c, const uint8_t *data, size_t len);

/* The next bytes to send, or 0 when nothing is pending; -1 when the session
 * failed. *out stays valid until the next call (nghttp2's buffer): send all
 * of it, or keep the rest, before calling again. */
long h2_client_pending_output(h2_client *c, const uint8_t **out);

/* Whether the session can still carry new streams: not failed, no GOAWAY,
 * and nghttp2 still wants to read or write. */
int h2_client_usable(const h2_client *c);

/* The registered name of an HTTP/2 error code ("PROTOCOL_ERROR", ...), or
 * "UNKNOWN" for codes outside RFC 9113's table. */
const char *h2_error_code_name(uint32_t code);

#endif
