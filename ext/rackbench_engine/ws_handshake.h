/*
 * ws_handshake.h - the opening handshake of the engine's WebSocket client
 * (RFC 6455 section 4): the Upgrade request it sends and the check of the
 * server's answer.
 *
 * The answer must be "101 Switching Protocols" with "Upgrade: websocket",
 * a Connection header holding the "upgrade" token, the
 * Sec-WebSocket-Accept that the request's key calls for (section 4.2.2:
 * base64 of the SHA-1 of the key and the RFC's GUID), the subprotocol
 * offered (Action Cable's "actioncable-v1-json") when one was, and no
 * extension (none is offered: a server that compresses anyway would send
 * frames this client cannot read). Anything else fails the connection
 * with a reason a user can act on: the status line when it is not 101, or
 * which header was wrong.
 *
 * The check works on the bytes received so far, which may end anywhere
 * and may go on past the header block (a server's first frames: Action
 * Cable's welcome comes at once); it never reads outside them.
 */
#ifndef RB_WS_HANDSHAKE_H
#define RB_WS_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

/* A key: base64 of 16 bytes. An accept: base64 of a 20-byte SHA-1. */
#define WS_KEY_CHARS 24
#define WS_ACCEPT_CHARS 28
/* The server's header block may take this much; more is a failure. */
#define WS_HANDSHAKE_MAX_BYTES 16384

typedef enum {
    WS_HS_OK = 0,
    WS_HS_STATUS,       /* the status was not 101 (an error page, a redirect) */
    WS_HS_NOT_HTTP,     /* the answer is not HTTP/1.x at all */
    WS_HS_UPGRADE,      /* Upgrade or Connection missing or wrong */
    WS_HS_ACCEPT,       /* Sec-WebSocket-Accept missing or not the key's */
    WS_HS_PROTOCOL,     /* the subprotocol offered was not chosen, or another was */
    WS_HS_EXTENSION,    /* an extension was chosen though none was offered */
    WS_HS_TOO_BIG,      /* the header block exceeds WS_HANDSHAKE_MAX_BYTES */
    WS_HS_KINDS
} ws_handshake_failure;

/* The reason text's room. */
#define WS_HS_REASON_BYTES 200

typedef struct {
    int status;                 /* the status code read (0: none yet) */
    ws_handshake_failure failure;
    char reason[WS_HS_REASON_BYTES];
    size_t header_bytes;        /* on success: the bytes of the header block */
} ws_handshake_result;

/* Writes the key for 16 random bytes: WS_KEY_CHARS and a NUL into key. */
void ws_handshake_key(const uint8_t nonce[16], char key[WS_KEY_CHARS + 1]);

/* Writes the Sec-WebSocket-Accept a server must answer to key (NUL
 * terminated). Returns 0, or -1 when OpenSSL's SHA-1 fails. */
int ws_handshake_accept(const char *key, char accept[WS_ACCEPT_CHARS + 1]);

/* What the request carries beyond the RFC's own headers. */
typedef struct {
    const char *path;           /* path and query, from '/' */
    const char *host;           /* the Host header's value, e.g. "127.0.0.1:3000" */
    const char *origin;         /* the Origin header's value, or NULL for none */
    const char *protocol;       /* Sec-WebSocket-Protocol offered, or NULL */
    const char *const *headers; /* more "Name: value" lines (-H), header_count of them */
    int header_count;
} ws_request_parts;

/* Writes the Upgrade request for key into out (cap bytes). A header the
 * -H lines set (Host, Origin, User-Agent) replaces the default. Returns
 * its length, or 0 when it does not fit. */
size_t ws_handshake_request(char *out, size_t cap, const ws_request_parts *parts, const char *key);

/* Checks the server's answer so far (len bytes at data) against accept
 * and the protocol offered (NULL: none). Returns 1 when the header block
 * is whole and right (res->header_bytes: its length; frames may follow),
 * 0 when more bytes are needed, -1 when it failed (res->failure,
 * res->reason, res->status when one was read). */
int ws_handshake_check(const char *data, size_t len, const char *accept, const char *protocol,
                       ws_handshake_result *res);

/* The JSON names of the failures (doc/output.md), by ws_handshake_failure. */
extern const char *const ws_handshake_failure_names[WS_HS_KINDS];

#endif
