/*
 * tls.c - see tls.h.
 *
 * OpenSSL talks to the network through one BIO of our own per connection
 * (both directions): its reads copy from the ciphertext the caller fed
 * (no copy into a memory BIO first), its writes append records to the
 * connection's output buffer, which tls_conn_send writes with one send.
 * A read with nothing fed says "retry", so OpenSSL never makes a system
 * call of its own: the connection's loop decides when to recv and send.
 *
 * OpenSSL's error queue (per thread) must be empty before an SSL call for
 * SSL_get_error to be right. Clearing it costs more instructions than
 * the rest of a small record's read (about 1,200 per call, measured with
 * callgrind), so the hot calls (tls_conn_read, tls_conn_write) do not:
 * instead every function here leaves the queue empty, reading and
 * clearing it where a call failed (openssl_error) or may have queued
 * something (the handshake, shutdown). Only this file calls OpenSSL on an
 * engine thread.
 */
#include "tls.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

/* The output buffer's first size: a request, or a turn's HTTP/2 frames,
 * in a record or two; it doubles when a larger write needs it. */
#define OUT_INITIAL_BYTES (16 * 1024)

const char *const tls_failure_names[TLS_FAIL_KINDS] = {"none", "not_tls", "verify", "alpn", "handshake", "protocol"};

struct tls_context {
    SSL_CTX *ssl_ctx;
    BIO_METHOD *bio_method;
    tls_options opts;             /* strings point into the fields below */
    char host[256];
    char ca_file[4096];
    char alpn[32];
};

static void set_reason(tls_conn *t, tls_failure failure, const char *fmt, ...) {
    if (t->failure != TLS_FAIL_NONE) return; /* the first reason is the cause */
    t->failure = failure;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->reason, sizeof(t->reason), fmt, ap);
    va_end(ap);
}

/* OpenSSL's account of the last error, as text (its queue is emptied: a
 * later call on this thread must not see it). */
static const char *openssl_error(char *buf, size_t len) {
    unsigned long code = ERR_peek_last_error();
    const char *text = code ? ERR_reason_error_string(code) : NULL;
    snprintf(buf, len, "%s", text ? text : "no error given by OpenSSL");
    ERR_clear_error();
    return buf;
}

/* --- the BIO between OpenSSL and the caller's buffers ------------------ */

static int bio_read(BIO *b, char *buf, size_t len, size_t *readbytes) {
    tls_conn *t = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (t->in_len == 0) {
        BIO_set_retry_read(b); /* "come back with more": never an EOF */
        *readbytes = 0;
        return 0;
    }
    size_t n = len < t->in_len ? len : t->in_len;
    memcpy(buf, t->in, n);
    t->in += n;
    t->in_len -= n;
    *readbytes = n;
    return 1;
}

static int bio_write(BIO *b, const char *data, size_t len, size_t *written) {
    tls_conn *t = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    if (t->out_sent == t->out_len) t->out_sent = t->out_len = 0;
    if (t->out_len + len > t->out_cap) {
        size_t cap = t->out_cap ? t->out_cap : OUT_INITIAL_BYTES;
        while (cap < t->out_len + len) cap *= 2;
        unsigned char *grown = realloc(t->out, cap);
        if (!grown) return 0;
        t->out = grown;
        t->out_cap = cap;
    }
    memcpy(t->out + t->out_len, data, len);
    t->out_len += len;
    *written = len;
    return 1;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
    (void)num;
    (void)ptr;
    tls_conn *t = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH: return 1;               /* tls_conn_send flushes */
    case BIO_CTRL_PENDING: return t ? (long)t->in_len : 0;
    case BIO_CTRL_WPENDING: return t ? (long)tls_conn_pending(t) : 0;
    default: return 0;
    }
}

static int bio_create(BIO *b) {
    BIO_set_init(b, 1);
    return 1;
}

/* --- the context ----------------------------------------------------- */

/* A slot's new session (a TLS 1.3 ticket arrives after the handshake, a
 * TLS 1.2 session at its end): kept as the one to offer next time. */
static int on_new_session(SSL *ssl, SSL_SESSION *session) {
    tls_conn *t = SSL_get_app_data(ssl);
    if (!t || !t->ctx->opts.resume || !SSL_SESSION_is_resumable(session)) return 0;
    if (t->session) SSL_SESSION_free(t->session);
    t->session = session;
    return 1; /* we keep OpenSSL's reference */
}

static int is_ip_address(const char *host) {
    unsigned char addr[16];
    return inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1;
}

tls_context *tls_context_new(const tls_options *opts, char *err, size_t err_len) {
    char why[160];
    tls_context *ctx = calloc(1, sizeof(*ctx));
    if (!ctx) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    ctx->opts = *opts;
    snprintf(ctx->host, sizeof(ctx->host), "%s", opts->host ? opts->host : "");
    ctx->opts.host = ctx->host;
    if (opts->ca_file) {
        snprintf(ctx->ca_file, sizeof(ctx->ca_file), "%s", opts->ca_file);
        ctx->opts.ca_file = ctx->ca_file;
    }
    if (opts->alpn) {
        if (strlen(opts->alpn) >= sizeof(ctx->alpn) - 1) {
            snprintf(err, err_len, "ALPN protocol name too long");
            free(ctx);
            return NULL;
        }
        snprintf(ctx->alpn, sizeof(ctx->alpn), "%s", opts->alpn);
        ctx->opts.alpn = ctx->alpn;
    }
    ERR_clear_error();
    ctx->ssl_ctx = SSL_CTX_new(TLS_client_method());
    ctx->bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rackbench");
    if (!ctx->ssl_ctx || !ctx->bio_method || !BIO_meth_set_read_ex(ctx->bio_method, bio_read) ||
        !BIO_meth_set_write_ex(ctx->bio_method, bio_write) || !BIO_meth_set_ctrl(ctx->bio_method, bio_ctrl) ||
        !BIO_meth_set_create(ctx->bio_method, bio_create)) {
        snprintf(err, err_len, "cannot set up OpenSSL: %s", openssl_error(why, sizeof(why)));
        tls_context_free(ctx);
        return NULL;
    }
    SSL_CTX *c = ctx->ssl_ctx;
    /* TLS 1.2 and 1.3: what servers offer today; older versions would
     * measure a handshake nobody should still make. */
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    /* Read whole batches of records from what was fed, not a record
     * header and then its body. */
    SSL_CTX_set_read_ahead(c, 1);
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(c, on_new_session);
    if (ctx->opts.alpn) {
        unsigned char wire[sizeof(ctx->alpn) + 1];
        size_t n = strlen(ctx->alpn);
        wire[0] = (unsigned char)n;
        memcpy(wire + 1, ctx->alpn, n);
        if (SSL_CTX_set_alpn_protos(c, wire, (unsigned)(n + 1)) != 0) { /* 0 is success here */
            snprintf(err, err_len, "cannot offer ALPN %s: %s", ctx->alpn, openssl_error(why, sizeof(why)));
            tls_context_free(ctx);
            return NULL;
        }
    }
    if (opts->verify) {
        SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
        /* OpenSSL says "system lib" for a missing file: say which error. */
        FILE *probe = ctx->opts.ca_file ? fopen(ctx->opts.ca_file, "r") : NULL;
        if (ctx->opts.ca_file && !probe) {
            snprintf(err, err_len, "cannot read the CA file %s: %s", ctx->opts.ca_file, strerror(errno));
            tls_context_free(ctx);
            return NULL;
        }
        if (probe) fclose(probe);
        int loaded = ctx->opts.ca_file ? SSL_CTX_load_verify_locations(c, ctx->opts.ca_file, NULL)
                                       : SSL_CTX_set_default_verify_paths(c);
        if (!loaded) {
            if (ctx->opts.ca_file)
                snprintf(err, err_len, "cannot read the CA file %s: %s", ctx->opts.ca_file,
                         openssl_error(why, sizeof(why)));
            else
                snprintf(err, err_len, "cannot load the system's trusted certificates: %s",
                         openssl_error(why, sizeof(why)));
            tls_context_free(ctx);
            return NULL;
        }
        /* The certificate must name the host the URL names: an IP address
         * is checked against the certificate's IP addresses. */
        X509_VERIFY_PARAM *param = SSL_CTX_get0_param(c);
        int named = is_ip_address(ctx->host) ? X509_VERIFY_PARAM_set1_ip_asc(param, ctx->host)
                                             : X509_VERIFY_PARAM_set1_host(param, ctx->host, 0);
        if (!named) {
            snprintf(err, err_len, "cannot check the certificate against host %s", ctx->host);
            tls_context_free(ctx);
            return NULL;
        }
    } else {
        SSL_CTX_set_verify(c, SSL_VERIFY_NONE, NULL);
    }
    return ctx;
}

void tls_context_free(tls_context *ctx) {
    if (!ctx) return;
    if (ctx->ssl_ctx) SSL_CTX_free(ctx->ssl_ctx);
    if (ctx->bio_method) BIO_meth_free(ctx->bio_method);
    free(ctx);
}

const tls_options *tls_context_options(const tls_context *ctx) { return &ctx->opts; }

/* --- a connection ---------------------------------------------------- */

void tls_conn_init(tls_conn *t) { memset(t, 0, sizeof(*t)); }

int tls_conn_open(tls_conn *t, const tls_context *ctx) {
    tls_conn_close(t);
    t->ctx = ctx;
    t->handshake_done = 0;
    t->hello_sent_ns = 0;
    t->resumed = 0;
    t->received_any = 0;
    t->first_len = 0;
    t->failure = TLS_FAIL_NONE;
    t->reason[0] = '\0';
    t->in = NULL;
    t->in_len = 0;
    t->out_len = t->out_sent = 0;
    ERR_clear_error();
    t->ssl = SSL_new(ctx->ssl_ctx);
    BIO *bio = t->ssl ? BIO_new(ctx->bio_method) : NULL;
    if (!bio) {
        tls_conn_close(t);
        return -1;
    }
    BIO_set_data(bio, t);
    SSL_set_bio(t->ssl, bio, bio); /* one BIO both ways: ssl owns it */
    t->bio = bio;
    SSL_set_app_data(t->ssl, t);
    SSL_set_connect_state(t->ssl);
    /* SNI names a host, never an address (RFC 6066 section 3). */
    if (!is_ip_address(ctx->host) && ctx->host[0] && !SSL_set_tlsext_host_name(t->ssl, ctx->host)) {
        tls_conn_close(t);
        return -1;
    }
    if (ctx->opts.resume && t->session) SSL_set_session(t->ssl, t->session);
    /* The ClientHello goes into the output now. */
    int r = SSL_do_handshake(t->ssl);
    if (r != 1 && SSL_get_error(t->ssl, r) != SSL_ERROR_WANT_READ) {
        char why[160];
        set_reason(t, TLS_FAIL_HANDSHAKE, "cannot start the handshake: %s", openssl_error(why, sizeof(why)));
    }
    return 0;
}

void tls_conn_feed(tls_conn *t, const void *data, size_t len) {
    if (!t->received_any && len > 0) {
        t->received_any = 1;
        t->first_len = len < sizeof(t->first_bytes) ? len : sizeof(t->first_bytes);
        memcpy(t->first_bytes, data, t->first_len);
    }
    t->in = data;
    t->in_len = len;
}

/* Nothing fed stays referenced once t has failed or closed. */
static tls_status give_up(tls_conn *t, tls_status status) {
    t->in = NULL;
    t->in_len = 0;
    return status;
}

/* Whether the peer's first bytes cannot start a TLS record: a content
 * type of 20-24 and a major version of 3 (SSL 3.0 to TLS 1.3). */
static int peer_not_tls(const tls_conn *t) {
    if (!t->received_any) return 0;
    if (t->first_bytes[0] < 20 || t->first_bytes[0] > 24) return 1;
    return t->first_len > 1 && t->first_bytes[1] != 3;
}

/* The reason for a peer that is not TLS: its first bytes, as one
 * printable line. */
static void fail_not_tls(tls_conn *t) {
    char shown[sizeof(t->first_bytes) + 1];
    size_t n = 0;
    for (; n < t->first_len; n++) {
        unsigned char c = t->first_bytes[n];
        if (c == '\r' || c == '\n') break;
        shown[n] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    shown[n] = '\0';
    set_reason(t, TLS_FAIL_NOT_TLS, "the server answered in something not TLS: \"%s\"", shown);
}

/* Classifies a handshake that OpenSSL gave up on. */
static void fail_handshake(tls_conn *t) {
    char why[160];
    long verify = SSL_get_verify_result(t->ssl);
    if (peer_not_tls(t)) {
        ERR_clear_error();
        fail_not_tls(t);
    } else if (verify != X509_V_OK) {
        ERR_clear_error();
        set_reason(t, TLS_FAIL_VERIFY, "the server's certificate did not check out: %s",
                   X509_verify_cert_error_string(verify));
    } else {
        set_reason(t, TLS_FAIL_HANDSHAKE, "handshake failed: %s", openssl_error(why, sizeof(why)));
    }
}

/* require_alpn: the server must have chosen our protocol. */
static int check_alpn(tls_conn *t) {
    const tls_options *o = &t->ctx->opts;
    if (!o->alpn || !o->require_alpn) return 0;
    const unsigned char *chosen = NULL;
    unsigned int len = 0;
    SSL_get0_alpn_selected(t->ssl, &chosen, &len);
    if (len == strlen(o->alpn) && memcmp(chosen, o->alpn, len) == 0) return 0;
    if (len == 0) {
        set_reason(t, TLS_FAIL_ALPN, "the server chose no protocol by ALPN (offered %s)", o->alpn);
    } else {
        char name[64];
        size_t n = len < sizeof(name) - 1 ? len : sizeof(name) - 1;
        for (size_t i = 0; i < n; i++) name[i] = (chosen[i] < 0x20 || chosen[i] >= 0x7f) ? '?' : (char)chosen[i];
        name[n] = '\0';
        set_reason(t, TLS_FAIL_ALPN, "the server chose \"%s\" by ALPN, not %s", name, o->alpn);
    }
    return -1;
}

tls_status tls_conn_handshake(tls_conn *t) {
    if (t->failure != TLS_FAIL_NONE || !t->ssl) return give_up(t, TLS_FAILED);
    if (t->handshake_done) return TLS_OK;
    ERR_clear_error();
    int r = SSL_do_handshake(t->ssl);
    if (r == 1) {
        t->handshake_done = 1;
        t->resumed = SSL_session_reused(t->ssl);
        if (check_alpn(t)) return give_up(t, TLS_FAILED);
        return TLS_OK;
    }
    /* Wanting to read means every fed byte was taken. */
    if (SSL_get_error(t->ssl, r) == SSL_ERROR_WANT_READ && t->in_len == 0) return TLS_AGAIN;
    fail_handshake(t);
    return give_up(t, TLS_FAILED);
}

tls_status tls_conn_read(tls_conn *t, void *buf, size_t cap, size_t *got) {
    *got = 0;
    if (t->failure != TLS_FAIL_NONE || !t->ssl) return give_up(t, TLS_FAILED);
    if (!t->handshake_done) {
        set_reason(t, TLS_FAIL_PROTOCOL, "read before the handshake completed");
        return give_up(t, TLS_FAILED);
    }
    /* Nothing fed is left and OpenSSL holds no record: nothing to read,
     * and no SSL call is spent to hear it say so. */
    if (t->in_len == 0 && !SSL_has_pending(t->ssl)) return TLS_AGAIN;
    int r = SSL_read_ex(t->ssl, buf, cap, got);
    if (r == 1) return TLS_OK;
    *got = 0;
    char why[160];
    switch (SSL_get_error(t->ssl, r)) {
    case SSL_ERROR_WANT_READ:
        if (t->in_len == 0) return TLS_AGAIN;
        set_reason(t, TLS_FAIL_PROTOCOL, "OpenSSL stopped reading with input left");
        return give_up(t, TLS_FAILED);
    case SSL_ERROR_ZERO_RETURN: return give_up(t, TLS_CLOSED);
    default:
        set_reason(t, TLS_FAIL_PROTOCOL, "%s", openssl_error(why, sizeof(why)));
        return give_up(t, TLS_FAILED);
    }
}

tls_status tls_conn_read_all(tls_conn *t, void *buf, size_t cap, size_t *len) {
    *len = 0;
    for (;;) {
        size_t got = 0;
        tls_status st = tls_conn_read(t, (unsigned char *)buf + *len, cap - *len, &got);
        if (st != TLS_OK) return st;
        *len += got;
        if (*len == cap) {
            set_reason(t, TLS_FAIL_PROTOCOL, "more plaintext than %zu bytes in one read", cap);
            return give_up(t, TLS_FAILED);
        }
    }
}

int tls_conn_write(tls_conn *t, const void *data, size_t len) {
    if (t->failure != TLS_FAIL_NONE || !t->ssl) return -1;
    if (!t->handshake_done) {
        set_reason(t, TLS_FAIL_PROTOCOL, "write before the handshake completed");
        return -1;
    }
    if (len == 0) return 0;
    size_t written = 0;
    if (SSL_write_ex(t->ssl, data, len, &written) == 1 && written == len) return 0;
    char why[160];
    set_reason(t, TLS_FAIL_PROTOCOL, "cannot encrypt: %s", openssl_error(why, sizeof(why)));
    return -1;
}

int tls_conn_send(tls_conn *t, int fd, uint64_t now_ns) {
    while (t->out_sent < t->out_len) {
        ssize_t n = send(fd, t->out + t->out_sent, t->out_len - t->out_sent, MSG_NOSIGNAL);
        if (n > 0) {
            t->out_sent += (size_t)n;
            /* A connection's first output is its ClientHello: the
             * handshake's time counts from when it left, not from when it
             * was queued behind a connect still in progress. */
            if (!t->hello_sent_ns && !t->handshake_done) t->hello_sent_ns = now_ns;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        if (n == 0) errno = EPIPE;
        return -1;
    }
    t->out_sent = t->out_len = 0;
    return 1;
}

tls_status tls_conn_receive(tls_conn *t, const void *data, size_t n, void *plain, size_t cap, size_t *len,
                            int *handshake_ended) {
    *len = 0;
    *handshake_ended = 0;
    tls_conn_feed(t, data, n);
    if (!t->handshake_done) {
        tls_status st = tls_conn_handshake(t);
        if (st != TLS_OK) return st;
        *handshake_ended = 1;
    }
    return tls_conn_read_all(t, plain, cap, len);
}

int tls_conn_lost_in_handshake(tls_conn *t, int reset) {
    if (!tls_conn_hello_sent(t)) return 0;
    tls_conn_fail(t, TLS_FAIL_HANDSHAKE, reset ? "the server reset the connection during the handshake"
                                               : "the server closed the connection during the handshake");
    return 1;
}

void tls_conn_fail(tls_conn *t, tls_failure kind, const char *reason) {
    set_reason(t, kind, "%s", reason);
    give_up(t, TLS_FAILED);
}

void tls_conn_say_goodbye(tls_conn *t, int fd, uint64_t now_ns) {
    if (fd < 0 || !t->ssl || !t->handshake_done || t->failure != TLS_FAIL_NONE) return;
    ERR_clear_error();
    SSL_shutdown(t->ssl); /* queues close_notify; the answer is not awaited */
    ERR_clear_error();
    tls_conn_send(t, fd, now_ns);
}

void tls_conn_close(tls_conn *t) {
    if (t->ssl && t->handshake_done && t->failure == TLS_FAIL_NONE) {
        /* A connection that ends without close_notify both ways would make
         * OpenSSL mark its session unusable; a kept-alive connection the
         * server closes, or one we close after a response, ended well. */
        SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    } else if (t->ssl && t->failure != TLS_FAIL_NONE && t->session) {
        /* After a failure, the next connection starts afresh. */
        SSL_SESSION_free(t->session);
        t->session = NULL;
    }
    if (t->ssl) SSL_free(t->ssl); /* frees the BIO too */
    t->ssl = NULL;
    t->bio = NULL;
    t->in = NULL;
    t->in_len = 0;
    t->out_len = t->out_sent = 0;
}

void tls_conn_free(tls_conn *t) {
    tls_conn_close(t);
    if (t->session) SSL_SESSION_free(t->session);
    t->session = NULL;
    free(t->out);
    t->out = NULL;
    t->out_cap = 0;
}

void tls_conn_info(const tls_conn *t, tls_info *info) {
    memset(info, 0, sizeof(*info));
    if (!t->ssl) return;
    info->version = SSL_get_version(t->ssl);
    const SSL_CIPHER *cipher = SSL_get_current_cipher(t->ssl);
    info->cipher = cipher ? SSL_CIPHER_get_name(cipher) : NULL;
    const unsigned char *chosen = NULL;
    unsigned int len = 0;
    SSL_get0_alpn_selected(t->ssl, &chosen, &len);
    const char *offered = t->ctx->opts.alpn;
    if (len && offered && len == strlen(offered) && memcmp(chosen, offered, len) == 0) info->alpn = offered;
    else if (len) info->alpn = "other";
}
