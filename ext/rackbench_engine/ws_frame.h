/*
 * ws_frame.h - WebSocket frames (RFC 6455 section 5) as the engine's
 * client writes and reads them.
 *
 * Writing: a client frame is always masked (section 5.3), with a key the
 * caller draws per frame; the payload is copied and masked into the
 * caller's buffer, never in place.
 *
 * Reading: a ws_reader takes the bytes a server sent, in pieces of any
 * size (a frame split across reads, many frames in one read), and hands
 * back whole messages: a text or binary message reassembled from its
 * fragments, and every control frame (ping, pong, close) as it comes,
 * also between the fragments of a message. A frame wholly inside one
 * read is handed back in place, without a copy; only what a read leaves
 * unfinished is carried over in the reader's own buffer.
 *
 * A server that breaks the protocol fails the reader with the close code
 * the RFC names and a reason; the connection is then dropped (the run goes
 * on). What counts as broken, each checked before the payload is used:
 * reserved bits set (no extension was negotiated), a reserved opcode, a
 * masked frame (servers must not mask, section 5.1), a control frame
 * longer than 125 bytes or fragmented, a length not in its shortest form
 * or with the top bit set, a continuation without a message begun or a
 * new message inside a fragmented one, a text message that is not UTF-8
 * (1007), a message larger than the reader's bound (1009), a close frame
 * whose code or reason is malformed.
 *
 * The reader never reads outside the bytes it was given, and its memory
 * is bounded by its max_message_bytes (the fuzz target checks both).
 */
#ifndef RB_WS_FRAME_H
#define RB_WS_FRAME_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    WS_OP_CONTINUATION = 0x0,
    WS_OP_TEXT = 0x1,
    WS_OP_BINARY = 0x2,
    WS_OP_CLOSE = 0x8,
    WS_OP_PING = 0x9,
    WS_OP_PONG = 0xA
} ws_opcode;

/* The opcodes a reader counts, by their number (0-15). */
#define WS_OPCODES 16
/* A frame's header: 2 bytes, 8 more for a 64-bit length, 4 for a mask. */
#define WS_MAX_HEADER_BYTES 14
/* Control frames carry at most this much (section 5.5). */
#define WS_MAX_CONTROL_PAYLOAD 125

/* Close codes (section 7.4.1) the engine sends or reads. */
#define WS_CLOSE_NORMAL 1000
#define WS_CLOSE_GOING_AWAY 1001
#define WS_CLOSE_PROTOCOL_ERROR 1002
#define WS_CLOSE_NO_STATUS 1005     /* never on the wire: a close frame without a code */
#define WS_CLOSE_INVALID_DATA 1007
#define WS_CLOSE_TOO_BIG 1009

/* The bytes a client frame of payload_len takes on the wire. */
size_t ws_frame_size(size_t payload_len);

/* Writes one client frame into out (cap bytes, at least
 * ws_frame_size(len)): FIN as fin, opcode op, masked with mask_key, then
 * the masked payload. Returns the bytes written, or 0 when out is too
 * small or a control frame would be longer than 125 bytes or fragmented. */
size_t ws_frame_encode(uint8_t *out, size_t cap, ws_opcode op, int fin, uint32_t mask_key, const void *payload,
                       size_t len);

/* XORs len bytes of data with the 4-byte key, starting at key position 0. */
void ws_mask(uint8_t *data, size_t len, const uint8_t key[4]);

/* A frame's header as read. */
typedef struct {
    int fin;
    ws_opcode opcode;
    int masked;
    uint8_t mask[4];
    uint64_t payload_len;
    size_t header_len;
} ws_frame_header;

/* Reads the header of a server's frame at buf (len bytes). Returns 1 with
 * *h filled when the whole header is there, 0 when more bytes are needed
 * (nothing is kept), -1 when it is malformed: *close_code and *why (a
 * static text) say how. */
int ws_frame_header_parse(const uint8_t *buf, size_t len, ws_frame_header *h, int *close_code, const char **why);

/* Whether len bytes are well-formed UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
int ws_utf8_valid(const uint8_t *data, size_t len);

/* Reads a close frame's payload: *code (WS_CLOSE_NO_STATUS when empty)
 * and the reason's bytes. Returns 0, or -1 when the payload is 1 byte
 * long, the code is one a peer must not send (below 1000, 1004-1006,
 * 1012-2999 but the IANA-registered 1012-1014, 5000 and above) or the
 * reason is not UTF-8; *why says which. */
int ws_close_parse(const uint8_t *payload, size_t len, int *code, const uint8_t **reason, size_t *reason_len,
                   const char **why);

/* A message as the reader hands it back: a whole text or binary message
 * (fragments joined), or one control frame. data is valid until the
 * callback returns. */
typedef struct {
    ws_opcode opcode;
    const uint8_t *data;
    size_t len;
    int frames;             /* frames it came in: more than 1 when fragmented */
} ws_message;

/* Called for each message; returns 0 to go on, non-zero to stop (the
 * connection ended: the rest of the bytes is dropped). */
typedef int (*ws_message_fn)(void *ctx, const ws_message *m);

typedef enum { WS_READ_OK = 0, WS_READ_STOPPED, WS_READ_ERROR } ws_read_status;

typedef struct {
    size_t max_message_bytes;   /* the largest message accepted (1009 above it) */
    /* An unfinished frame carried over to the next feed. */
    uint8_t *carry;
    size_t carry_len, carry_cap;
    /* A fragmented message being joined (msg_opcode 0: none). */
    uint8_t *msg;
    size_t msg_len, msg_cap;
    ws_opcode msg_opcode;
    int msg_frames;
    uint64_t frames[WS_OPCODES]; /* frames read, by opcode */
    uint64_t bytes;             /* bytes fed */
    int close_code;             /* after WS_READ_ERROR: the code to close with */
    const char *error;          /* after WS_READ_ERROR: why (static text) */
} ws_reader;

/* Prepares r for a connection: messages up to max_message_bytes.
 * Allocates nothing yet. */
void ws_reader_init(ws_reader *r, size_t max_message_bytes);

/* Frees what r holds (it may be initialised again). */
void ws_reader_free(ws_reader *r);

/* Reads len bytes a server sent, calling fn for each message they
 * complete. WS_READ_OK: every byte was taken (the end of an unfinished
 * frame is kept for the next call); WS_READ_STOPPED: fn returned
 * non-zero; WS_READ_ERROR: the server broke the protocol (r->error,
 * r->close_code): the reader is unusable. Exits the process when memory
 * for a carried frame or a fragmented message cannot be had. */
ws_read_status ws_reader_feed(ws_reader *r, const uint8_t *data, size_t len, ws_message_fn fn, void *ctx);

/* Whether r holds part of a frame or of a fragmented message (a server
 * that closed now closed in the middle of one). */
static inline int ws_reader_midway(const ws_reader *r) { return r->carry_len > 0 || r->msg_opcode != 0; }

#endif
