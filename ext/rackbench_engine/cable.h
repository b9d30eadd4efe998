/*
 * cable.h - Action Cable's protocol (the "actioncable-v1-json"
 * subprotocol) over the engine's WebSocket client: the commands a client
 * sends and what the server's messages are.
 *
 * The exchange (Rails' ActionCable::Connection and its JS client):
 *   server: {"type":"welcome"}                     once the socket is open
 *   client: {"command":"subscribe","identifier":ID}
 *   server: {"identifier":ID,"type":"confirm_subscription"}
 *           (or "reject_subscription")
 *   server: {"identifier":ID,"message":VALUE}      a broadcast or a transmit
 *   server: {"type":"ping","message":UNIX_TIME}    every 3 seconds
 *   server: {"type":"disconnect","reason":R,"reconnect":B}
 *   client: {"command":"message","identifier":ID,"data":JSON_TEXT}
 *           JSON_TEXT holds "action" (a method of the channel) and its
 *           arguments: the engine's own body (ws_payload.h)
 * ID is itself JSON text, {"channel":"NAME",...params}, carried as a
 * string.
 *
 * The server's messages are read with a scanner of the top level of one
 * JSON object: the type, the reason, and where the message's value lies.
 * It reads only the bytes it was given, and a message that is not a JSON
 * object is reported as such, never guessed at.
 */
#ifndef RB_CABLE_H
#define RB_CABLE_H

#include <stddef.h>
#include <stdint.h>

/* The subprotocol offered in the handshake. */
#define CABLE_PROTOCOL "actioncable-v1-json"
/* Longest identifier: a channel name and its params. */
#define CABLE_IDENTIFIER_BYTES 1024

typedef enum {
    CABLE_WELCOME = 0,
    CABLE_PING,
    CABLE_CONFIRM,
    CABLE_REJECT,
    CABLE_DISCONNECT,
    CABLE_MESSAGE,      /* {"identifier":...,"message":...}: the value at value/value_len */
    CABLE_OTHER,        /* a JSON object of another type */
    CABLE_NOT_JSON,     /* not a JSON object */
    CABLE_KINDS
} cable_kind;

typedef struct {
    cable_kind kind;
    const uint8_t *value;   /* CABLE_MESSAGE: the "message" value's bytes */
    size_t value_len;
    const uint8_t *reason;  /* CABLE_DISCONNECT: the "reason" string's bytes (unescaped not) */
    size_t reason_len;
} cable_frame;

/* Reads one server message (len bytes of a text message). */
void cable_read(const uint8_t *data, size_t len, cable_frame *out);

/* Makes the identifier {"channel":"NAME"} with params' members after it
 * (params: a JSON object's text, or NULL). Returns its length, or 0 with
 * a reason in err when the channel name or params cannot be used. */
size_t cable_identifier(char *out, size_t cap, const char *channel, const char *params, char *err, size_t err_len);

/* Writes the subscribe command for identifier into out. Returns its
 * length, or 0 when it does not fit. */
size_t cable_subscribe(char *out, size_t cap, const char *identifier);

/* Writes the message command performing action with body (a JSON
 * object's text, the engine's payload) as its data: body's members after
 * "action". Returns its length, or 0 when it does not fit. */
size_t cable_perform(char *out, size_t cap, const char *identifier, const char *action, const char *body,
                     size_t body_len);

#endif
