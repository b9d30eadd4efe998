/*
 * tls.h - TLS client connections over memory, on OpenSSL.
 *
 * No socket here but in tls_conn_send: the connection code receives
 * ciphertext with its own recv (so it still knows when the socket is
 * drained, and a response still costs one read) and hands it over with
 * tls_conn_feed; tls_conn_read gives the plaintext back; tls_conn_write
 * encrypts into the connection's output, which tls_conn_send writes. The
 * C tests pair a client with an OpenSSL server session through plain
 * buffers, and the fuzzer drives the read path with arbitrary bytes.
 *
 * What the engine needs beyond OpenSSL's defaults, decided here:
 * - session resumption: the last session a server gave a slot (a TLS 1.3
 *   ticket, or a TLS 1.2 session) is offered on the slot's next
 *   connection; the session outlives the connection (tls_conn_close);
 * - certificate checking: on by default (system trust store, or a CA file
 *   such as rackbench's own self-signed certificate, with the URL's host
 *   name or IP address checked), off on request for a self-signed
 *   certificate in local benchmarking;
 * - ALPN: the protocol offered ("http/1.1", or "h2" for HTTP/2 over TLS);
 *   for h2 a server that does not choose it fails the handshake, since
 *   sending HTTP/2 to a server that did not agree to it measures nothing;
 * - failures with a reason a user can act on: the certificate's own
 *   verification error, "the server answered in something not TLS:
 *   "HTTP/1.1 400 Bad Request"", the alert the server sent.
 *
 * Ownership: a tls_context is made once per run and shared read-only by
 * every thread (OpenSSL's SSL_CTX is safe for that); a tls_conn belongs to
 * one connection slot and its thread.
 */
#ifndef RB_TLS_H
#define RB_TLS_H

#include <stddef.h>
#include <stdint.h>

/* OpenSSL's types, opaque to the engine's other files. */
struct ssl_st;
struct ssl_session_st;
struct bio_st;
typedef struct tls_context tls_context;

/* Longest reason kept for a failure. */
#define TLS_REASON_BYTES 200

typedef struct {
    int verify;              /* check the server's certificate and name */
    const char *ca_file;     /* PEM file of trusted certificates; NULL: the system's */
    const char *alpn;        /* protocol to offer ("h2", "http/1.1"), or NULL */
    int require_alpn;        /* the server must choose alpn (h2) */
    int resume;              /* offer a slot's last session on its next connection */
    const char *host;        /* the URL's host: SNI and the checked name, or an IP address */
} tls_options;

typedef enum {
    TLS_OK = 0,     /* done: the handshake completed, or plaintext was read */
    TLS_AGAIN,      /* needs more input from the peer (output may be pending) */
    TLS_CLOSED,     /* the peer sent close_notify: no more data */
    TLS_FAILED      /* the connection is unusable; failure and reason say why */
} tls_status;

typedef enum {
    TLS_FAIL_NONE = 0,
    TLS_FAIL_NOT_TLS,       /* the peer answered in something else (plain HTTP) */
    TLS_FAIL_VERIFY,        /* the certificate or its name did not check out */
    TLS_FAIL_ALPN,          /* require_alpn, and the server chose another protocol or none */
    TLS_FAIL_HANDSHAKE,     /* any other handshake failure (an alert, no shared cipher) */
    TLS_FAIL_PROTOCOL,      /* after the handshake: a bad record, an alert */
    TLS_FAIL_KINDS
} tls_failure;

/* The JSON names of the failures (doc/output.md, "tls"), by tls_failure. */
extern const char *const tls_failure_names[TLS_FAIL_KINDS];

typedef struct {
    struct ssl_st *ssl;             /* NULL between connections */
    struct bio_st *bio;             /* both directions; owned by ssl */
    const tls_context *ctx;
    struct ssl_session_st *session; /* the last session the server gave this slot */
    /* Input being fed: ciphertext the caller owns, read by OpenSSL through
     * the BIO; consumed entirely before tls_conn_read says TLS_AGAIN. */
    const unsigned char *in;
    size_t in_len;
    /* Output: records OpenSSL wrote, not yet sent (out[sent, len)). */
    unsigned char *out;
    size_t out_len, out_sent, out_cap;
    int handshake_done;
    /* When the connection's first bytes (its ClientHello) left through
     * tls_conn_send: the handshake's time counts from here, and a send
     * that fails before it is the connect's failure, not TLS's. 0: not yet. */
    uint64_t hello_sent_ns;
    int resumed;                    /* the last handshake resumed a session */
    int received_any;               /* some bytes came from the peer */
    unsigned char first_bytes[32];  /* the first of them: the reason when not TLS */
    size_t first_len;
    tls_failure failure;
    char reason[TLS_REASON_BYTES];
} tls_conn;

/* What a completed handshake negotiated (static strings, valid while the
 * run lasts). */
typedef struct {
    const char *version;    /* "TLSv1.3" */
    const char *cipher;     /* "TLS_AES_256_GCM_SHA384" */
    const char *alpn;       /* "h2", "http/1.1", or NULL when none was chosen */
} tls_info;

/* Makes the context of a run from opts (copied). Returns it, or NULL with
 * a one-line reason in err (an unreadable CA file, OpenSSL out of
 * memory). */
tls_context *tls_context_new(const tls_options *opts, char *err, size_t err_len);

/* Frees ctx (NULL is fine); every tls_conn made from it must be freed first. */
void tls_context_free(tls_context *ctx);

/* The options ctx was made with. */
const tls_options *tls_context_options(const tls_context *ctx);

/* Prepares t for a slot: no connection, no session yet. Allocates
 * nothing. */
void tls_conn_init(tls_conn *t);

/* Starts a client connection on ctx for a new TCP connection: offers the
 * slot's last session (when ctx resumes) and queues the ClientHello in
 * t's output. Returns 0, or -1 when OpenSSL cannot allocate (the caller
 * exits: nothing sensible can follow). */
int tls_conn_open(tls_conn *t, const tls_context *ctx);

/* Hands over len bytes of ciphertext received from the peer. They are not
 * copied: data must stay valid and unchanged until tls_conn_read (or
 * tls_conn_handshake) has returned something other than TLS_OK, by which
 * time every byte has been consumed. */
void tls_conn_feed(tls_conn *t, const void *data, size_t len);

/* Advances the handshake with what was fed. TLS_OK once it has completed
 * (now, or earlier: then it does nothing); TLS_AGAIN when it needs the
 * peer's next bytes (send the output first); TLS_FAILED with t->failure
 * and t->reason set. After TLS_OK, t->resumed says whether the slot's
 * session was resumed. */
tls_status tls_conn_handshake(tls_conn *t);

/* Reads plaintext into buf (cap > 0 bytes): TLS_OK with *got > 0 bytes;
 * TLS_AGAIN when every fed byte is consumed and no plaintext is left
 * (post-handshake messages such as session tickets are handled inside);
 * TLS_CLOSED after the peer's close_notify; TLS_FAILED (failure, reason).
 * Call it until it returns something other than TLS_OK. Before the
 * handshake completed, it returns TLS_FAILED. */
tls_status tls_conn_read(tls_conn *t, void *buf, size_t cap, size_t *got);

/* Reads all the plaintext the fed bytes hold into buf (cap bytes), *len
 * bytes in all: TLS_AGAIN when every fed byte is consumed (the usual end,
 * *len may be 0: a session ticket, a handshake flight); TLS_CLOSED when
 * the peer's close_notify followed the *len bytes; TLS_FAILED (failure,
 * reason), also when more plaintext came than cap holds. What a
 * connection does with each received batch of ciphertext. */
tls_status tls_conn_read_all(tls_conn *t, void *buf, size_t cap, size_t *len);

/* Encrypts len bytes of plaintext into t's output (one record per 16 KiB).
 * Returns 0, or -1 with failure and reason set (before the handshake
 * completed, after a failure, out of memory). */
int tls_conn_write(tls_conn *t, const void *data, size_t len);

/* Bytes of output waiting to be sent. */
static inline size_t tls_conn_pending(const tls_conn *t) { return t->out_len - t->out_sent; }

/* Sends t's pending output on the non-blocking socket fd. Returns 1 when
 * all of it went out, 0 when the socket is full (the rest is kept for the
 * next call), -1 on a socket error (errno). The first bytes to leave a new
 * connection (its ClientHello) stamp t->hello_sent_ns with now_ns. */
int tls_conn_send(tls_conn *t, int fd, uint64_t now_ns);

/* Whether t's ClientHello went out: a send or receive that fails before
 * it failed the TCP connect, and no TLS failure is recorded for it. */
static inline int tls_conn_hello_sent(const tls_conn *t) { return t->hello_sent_ns != 0; }

/* What a connection does with each batch of ciphertext it received (n
 * bytes at data, not copied; all consumed before it returns): while the
 * handshake runs, advances it (the client's next flight is then in t's
 * output, to send); once it has completed, decrypts what follows into
 * plain (cap bytes), *len bytes in all. Returns as tls_conn_read_all:
 * TLS_AGAIN when every byte was consumed (the usual end, *len may be 0:
 * the handshake goes on, a session ticket), TLS_CLOSED when the peer's
 * close_notify followed the *len bytes, TLS_FAILED (failure, reason).
 * *handshake_ended is 1 when this batch completed the handshake: the
 * caller counts it (its time: t->hello_sent_ns to now) before it looks at
 * the status or the plaintext. */
tls_status tls_conn_receive(tls_conn *t, const void *data, size_t n, void *plain, size_t cap, size_t *len,
                            int *handshake_ended);

/* The peer ended the connection (reset: with a reset, else with its FIN)
 * before the handshake completed. Returns 0 when the ClientHello had not
 * gone out (the connect itself failed: nothing recorded), 1 after t
 * failed with TLS_FAIL_HANDSHAKE and the reason. */
int tls_conn_lost_in_handshake(tls_conn *t, int reset);

/* Records a failure the connection code saw itself (the server closed
 * the connection during the handshake): t fails with kind and reason,
 * unless it had already failed (the first reason is the cause). */
void tls_conn_fail(tls_conn *t, tls_failure kind, const char *reason);

/* A client's end of a healthy connection on fd: a close_notify queued and
 * sent at once, best effort (a full socket or an error drops it), so the
 * server knows it did not lose the connection. Does nothing before the
 * handshake completed or after a failure. */
void tls_conn_say_goodbye(tls_conn *t, int fd, uint64_t now_ns);

/* Ends t's connection: frees its OpenSSL state and drops unsent output;
 * keeps the session for the slot's next connection, and the output
 * buffer's memory. Safe without a connection. */
void tls_conn_close(tls_conn *t);

/* Frees everything t holds, the session too. */
void tls_conn_free(tls_conn *t);

/* What the completed handshake on t negotiated. */
void tls_conn_info(const tls_conn *t, tls_info *info);

#endif
