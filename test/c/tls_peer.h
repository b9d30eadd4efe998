/*
 * tls_peer.h - an OpenSSL server session over memory BIOs, for the C test
 * and the fuzzer of tls.c: a self-signed certificate made at run time
 * (never a key in the repository), a server context with a choice of TLS
 * version, ALPN answer and session cache, and a pump that carries bytes
 * between a tls_conn and the server until neither has anything to say.
 */
#ifndef RB_TLS_PEER_H
#define RB_TLS_PEER_H

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tls.h"

typedef struct {
    EVP_PKEY *key;
    X509 *cert;
    char cert_path[64]; /* the certificate as PEM, for tls_options.ca_file */
} tls_peer_identity;

static void tls_peer_die(const char *what) {
    fprintf(stderr, "tls_peer: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(2);
}

/* A P-256 key and a certificate for CN=rackbench-test, valid for the IP
 * address 127.0.0.1 and the name localhost, self-signed; written as PEM
 * to a temporary file (removed by tls_peer_identity_free). */
static void tls_peer_identity_make(tls_peer_identity *id) {
    id->key = EVP_EC_gen("P-256");
    id->cert = X509_new();
    if (!id->key || !id->cert) tls_peer_die("cannot make a key");
    X509_set_version(id->cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(id->cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(id->cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(id->cert), 3600L * 24);
    X509_set_pubkey(id->cert, id->key);
    X509_NAME *name = X509_get_subject_name(id->cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"rackbench-test", -1, -1, 0);
    X509_set_issuer_name(id->cert, name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, id->cert, id->cert, NULL, NULL, 0);
    X509_EXTENSION *san = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
    X509_EXTENSION *ca = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints, "critical,CA:TRUE");
    if (!san || !ca || !X509_add_ext(id->cert, san, -1) || !X509_add_ext(id->cert, ca, -1))
        tls_peer_die("cannot add extensions");
    X509_EXTENSION_free(san);
    X509_EXTENSION_free(ca);
    if (!X509_sign(id->cert, id->key, EVP_sha256())) tls_peer_die("cannot sign");
    snprintf(id->cert_path, sizeof(id->cert_path), "/tmp/rackbench-tls-test-XXXXXX");
    int fd = mkstemp(id->cert_path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || !PEM_write_X509(f, id->cert)) tls_peer_die("cannot write the certificate");
    fclose(f);
}

static inline void tls_peer_identity_free(tls_peer_identity *id) {
    unlink(id->cert_path);
    X509_free(id->cert);
    EVP_PKEY_free(id->key);
}

/* What the server answers to ALPN. */
typedef enum { PEER_ALPN_NONE = 0, PEER_ALPN_H2, PEER_ALPN_HTTP11 } peer_alpn;

static int peer_select_h2(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                          unsigned int inlen, void *arg) {
    (void)ssl;
    (void)arg;
    static const unsigned char h2[] = {2, 'h', '2'};
    unsigned char *chosen;
    if (SSL_select_next_proto(&chosen, outlen, h2, sizeof(h2), in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

/* A server that does not serve h2: it chooses http/1.1 when offered, and
 * answers without ALPN (NOACK) when offered h2 only, as such servers do. */
static int peer_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                              unsigned int inlen, void *arg) {
    (void)ssl;
    (void)arg;
    static const unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    unsigned char *chosen;
    if (SSL_select_next_proto(&chosen, outlen, http11, sizeof(http11), in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

/* A server context: max_version 0 for TLS 1.3, else e.g. TLS1_2_VERSION. */
static SSL_CTX *tls_peer_ctx(const tls_peer_identity *id, int max_version, peer_alpn alpn) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx || !SSL_CTX_use_certificate(ctx, id->cert) || !SSL_CTX_use_PrivateKey(ctx, id->key))
        tls_peer_die("cannot make the server context");
    if (max_version) SSL_CTX_set_max_proto_version(ctx, max_version);
    SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"rb", 2);
    if (alpn == PEER_ALPN_H2) SSL_CTX_set_alpn_select_cb(ctx, peer_select_h2, NULL);
    if (alpn == PEER_ALPN_HTTP11) SSL_CTX_set_alpn_select_cb(ctx, peer_select_http11, NULL);
    return ctx;
}

/* One server connection: the client's output goes into rbio, the
 * server's output comes out of wbio. */
typedef struct {
    SSL *ssl;
    BIO *rbio, *wbio;
    int handshake_done;
} tls_peer;

static void tls_peer_open(tls_peer *p, SSL_CTX *ctx) {
    memset(p, 0, sizeof(*p));
    p->ssl = SSL_new(ctx);
    p->rbio = BIO_new(BIO_s_mem());
    p->wbio = BIO_new(BIO_s_mem());
    if (!p->ssl || !p->rbio || !p->wbio) tls_peer_die("cannot make a server connection");
    SSL_set_bio(p->ssl, p->rbio, p->wbio);
    SSL_set_accept_state(p->ssl);
}

static void tls_peer_close(tls_peer *p) {
    if (p->ssl) SSL_free(p->ssl);
    p->ssl = NULL;
}

/* Moves the client's pending output into the server. */
static void tls_peer_take_client_output(tls_peer *p, tls_conn *t) {
    size_t n = tls_conn_pending(t);
    if (n) BIO_write(p->rbio, t->out + t->out_sent, (int)n);
    t->out_sent = t->out_len = 0;
}

/* Lets the server work on what it has: its handshake, or reading (and
 * discarding into sink, when given) application data. */
static void tls_peer_step(tls_peer *p, char *sink, size_t sink_cap, size_t *sunk) {
    ERR_clear_error();
    if (!p->handshake_done) {
        if (SSL_do_handshake(p->ssl) == 1) p->handshake_done = 1;
        ERR_clear_error();
        if (!p->handshake_done) return;
    }
    char buf[4096];
    size_t got;
    while (SSL_read_ex(p->ssl, buf, sizeof(buf), &got) == 1) {
        if (sink && *sunk + got <= sink_cap) memcpy(sink + *sunk, buf, got);
        if (sunk) *sunk += got;
    }
    ERR_clear_error();
}

/* The server's pending output, taken (malloc'd; *len bytes). */
static unsigned char *tls_peer_output(tls_peer *p, size_t *len) {
    char *data;
    long n = BIO_get_mem_data(p->wbio, &data);
    *len = n > 0 ? (size_t)n : 0;
    unsigned char *copy = malloc(*len ? *len : 1);
    if (!copy) tls_peer_die("out of memory");
    if (*len) memcpy(copy, data, *len);
    (void)BIO_reset(p->wbio);
    return copy;
}

#endif
