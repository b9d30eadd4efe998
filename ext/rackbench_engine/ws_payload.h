/*
 * ws_payload.h - the body of each message the engine sends over a
 * WebSocket, and how it recognises that body when it comes back.
 *
 * A body is a JSON object: {"rb_seq":SEQ,"rb_t":NS,"pad":"xx..."}: the
 * message's sequence number (per client for echo, per run for a
 * broadcast), the engine's monotonic clock when it was sent, and padding
 * to the size asked (--message-bytes). Round trips are measured from rb_t
 * by the process that wrote it, so no clock is compared across machines,
 * and the sequence numbers make every message accountable: one that never
 * arrives is counted missing, never silently lost.
 *
 * A server passes the body on as it is (an echo, a plain broadcast), or
 * inside its own JSON (Action Cable wraps it as the "message" value, and
 * may keep it a JSON string: then its quotes are escaped). The search
 * reads both forms; it looks at the bytes it was given only.
 */
#ifndef RB_WS_PAYLOAD_H
#define RB_WS_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

/* The smallest body: no padding, the largest numbers. */
#define WS_PAYLOAD_MIN_BYTES 64

/* Writes the body of message seq sent at sent_ns into out (cap bytes),
 * padded to size bytes when size is larger than the body without
 * padding. Returns its length, or 0 when it does not fit in cap. */
size_t ws_payload_write(char *out, size_t cap, uint64_t seq, uint64_t sent_ns, size_t size);

/* Finds a body's sequence number and send time in len bytes of a
 * message: 1 with both set, 0 when the message holds no body of the
 * engine's (a server's own message). */
int ws_payload_find(const uint8_t *data, size_t len, uint64_t *seq, uint64_t *sent_ns);

#endif
