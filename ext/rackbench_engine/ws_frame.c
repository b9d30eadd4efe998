/*
 * ws_frame.c - see ws_frame.h.
 *
 * The reader works on the bytes of one read in place: a frame wholly
 * inside them is handed back as a pointer into them. Only the end of a
 * read that stops inside a frame is copied, into carry, and completed from
 * the next read's first bytes; a fragmented message is joined in msg.
 * Both buffers grow on demand to what a frame or message needs (at most
 * max_message_bytes plus a header) and are given back once drained if
 * they grew large, so a thousand idle connections hold no buffer at all.
 */
#include "ws_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Buffers larger than this are freed once drained, not kept. */
#define KEEP_BUFFER_BYTES (64 * 1024)

size_t ws_frame_size(size_t payload_len) {
    size_t header = 2 + 4;
    if (payload_len > 65535) header += 8;
    else if (payload_len > 125) header += 2;
    return header + payload_len;
}

void ws_mask(uint8_t *data, size_t len, const uint8_t key[4]) {
    /* Eight bytes at a time: the key repeats every four, so a 64-bit
     * pattern of it twice masks any aligned run of eight. */
    uint64_t pattern;
    uint8_t twice[8] = {key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3]};
    memcpy(&pattern, twice, 8);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t word;
        memcpy(&word, data + i, 8);
        word ^= pattern;
        memcpy(data + i, &word, 8);
    }
    for (; i < len; i++) data[i] ^= key[i & 3];
}

static int is_control(int opcode) { return opcode >= 0x8; }

size_t ws_frame_encode(uint8_t *out, size_t cap, ws_opcode op, int fin, uint32_t mask_key, const void *payload,
                       size_t len) {
    if (is_control(op) && (len > WS_MAX_CONTROL_PAYLOAD || !fin)) return 0;
    size_t total = ws_frame_size(len);
    if (total > cap) return 0;
    size_t n = 0;
    out[n++] = (uint8_t)((fin ? 0x80 : 0) | (op & 0x0F));
    if (len <= 125) {
        out[n++] = (uint8_t)(0x80 | len);
    } else if (len <= 65535) {
        out[n++] = 0x80 | 126;
        out[n++] = (uint8_t)(len >> 8);
        out[n++] = (uint8_t)len;
    } else {
        out[n++] = 0x80 | 127;
        for (int shift = 56; shift >= 0; shift -= 8) out[n++] = (uint8_t)((uint64_t)len >> shift);
    }
    uint8_t key[4] = {(uint8_t)(mask_key >> 24), (uint8_t)(mask_key >> 16), (uint8_t)(mask_key >> 8),
                      (uint8_t)mask_key};
    memcpy(out + n, key, 4);
    n += 4;
    if (len) memcpy(out + n, payload, len);
    ws_mask(out + n, len, key);
    return n + len;
}

int ws_frame_header_parse(const uint8_t *buf, size_t len, ws_frame_header *h, int *close_code, const char **why) {
    *close_code = WS_CLOSE_PROTOCOL_ERROR;
    if (len < 2) return 0;
    h->fin = (buf[0] & 0x80) != 0;
    h->opcode = (ws_opcode)(buf[0] & 0x0F);
    h->masked = (buf[1] & 0x80) != 0;
    if (buf[0] & 0x70) {
        *why = "a frame with reserved bits set (no extension was negotiated)";
        return -1;
    }
    switch (h->opcode) {
    case WS_OP_CONTINUATION: case WS_OP_TEXT: case WS_OP_BINARY: case WS_OP_CLOSE: case WS_OP_PING: case WS_OP_PONG:
        break;
    default:
        *why = "a frame with a reserved opcode";
        return -1;
    }
    if (h->masked) {
        *why = "a masked frame (a server must not mask its frames)";
        return -1;
    }
    uint64_t length = buf[1] & 0x7F;
    size_t header = 2;
    if (length == 126) {
        if (len < 4) return 0;
        length = (uint64_t)buf[2] << 8 | buf[3];
        header = 4;
        if (length <= 125) {
            *why = "a frame length not in its shortest form";
            return -1;
        }
    } else if (length == 127) {
        if (len < 10) return 0;
        length = 0;
        for (int i = 2; i < 10; i++) length = length << 8 | buf[i];
        header = 10;
        if (length >> 63) {
            *why = "a frame length with its top bit set";
            return -1;
        }
        if (length <= 65535) {
            *why = "a frame length not in its shortest form";
            return -1;
        }
    }
    if (is_control(h->opcode) && (length > WS_MAX_CONTROL_PAYLOAD || !h->fin)) {
        *why = length > WS_MAX_CONTROL_PAYLOAD ? "a control frame longer than 125 bytes" : "a fragmented control frame";
        return -1;
    }
    memset(h->mask, 0, sizeof(h->mask));
    h->payload_len = length;
    h->header_len = header;
    return 1;
}

int ws_utf8_valid(const uint8_t *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        /* ASCII runs, the common case, eight bytes at a time. */
        if (i + 8 <= len) {
            uint64_t word;
            memcpy(&word, s + i, 8);
            if (!(word & UINT64_C(0x8080808080808080))) {
                i += 8;
                continue;
            }
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { need = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { need = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { need = 3; cp = c & 0x07; }
        else return 0; /* a continuation byte first, an overlong 2-byte lead, or above U+10FFFF */
        if (len - i <= need) return 0;
        for (size_t k = 1; k <= need; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += need + 1;
    }
    return 1;
}

/* Whether a peer may send close code code (RFC 6455 section 7.4, and the
 * IANA registry's 1012-1014). */
static int valid_close_code(int code) {
    if (code >= 1000 && code <= 1003) return 1;
    if (code >= 1007 && code <= 1014) return 1;
    return code >= 3000 && code <= 4999;
}

int ws_close_parse(const uint8_t *payload, size_t len, int *code, const uint8_t **reason, size_t *reason_len,
                   const char **why) {
    *code = WS_CLOSE_NO_STATUS;
    *reason = payload;
    *reason_len = 0;
    if (len == 0) return 0;
    if (len == 1) {
        *why = "a close frame of 1 byte (a code takes 2)";
        return -1;
    }
    *code = payload[0] << 8 | payload[1];
    if (!valid_close_code(*code)) {
        *why = "a close frame with a code a peer must not send";
        return -1;
    }
    *reason = payload + 2;
    *reason_len = len - 2;
    if (!ws_utf8_valid(*reason, *reason_len)) {
        *why = "a close frame whose reason is not UTF-8";
        return -1;
    }
    return 0;
}

/* --- the reader --------------------------------------------------------- */

void ws_reader_init(ws_reader *r, size_t max_message_bytes) {
    memset(r, 0, sizeof(*r));
    r->max_message_bytes = max_message_bytes;
}

void ws_reader_free(ws_reader *r) {
    free(r->carry);
    free(r->msg);
    size_t max = r->max_message_bytes;
    ws_reader_init(r, max);
}

static void grow(uint8_t **buf, size_t *cap, size_t needed) {
    if (needed <= *cap) return;
    size_t c = *cap ? *cap : 256;
    while (c < needed) c *= 2;
    uint8_t *grown = realloc(*buf, c);
    if (!grown) {
        perror("rackbench-engine: out of memory for a WebSocket message");
        exit(1);
    }
    *buf = grown;
    *cap = c;
}

/* A drained buffer that grew large goes back to the allocator. */
static void shrink(uint8_t **buf, size_t *cap) {
    if (*cap <= KEEP_BUFFER_BYTES) return;
    free(*buf);
    *buf = NULL;
    *cap = 0;
}

static ws_read_status fail(ws_reader *r, int close_code, const char *why) {
    r->close_code = close_code;
    r->error = why;
    return WS_READ_ERROR;
}

/* Checks a frame's header against the message in progress before its
 * payload is read: its size, and whether it may come now. */
static ws_read_status check_frame(ws_reader *r, const ws_frame_header *h) {
    if (is_control(h->opcode)) return WS_READ_OK;
    if (h->opcode == WS_OP_CONTINUATION && !r->msg_opcode)
        return fail(r, WS_CLOSE_PROTOCOL_ERROR, "a continuation frame without a message begun");
    if (h->opcode != WS_OP_CONTINUATION && r->msg_opcode)
        return fail(r, WS_CLOSE_PROTOCOL_ERROR, "a new message inside a fragmented one");
    uint64_t so_far = h->opcode == WS_OP_CONTINUATION ? r->msg_len : 0;
    if (h->payload_len > r->max_message_bytes || so_far + h->payload_len > r->max_message_bytes)
        return fail(r, WS_CLOSE_TOO_BIG, "a message larger than the engine accepts (--ws-max-message)");
    return WS_READ_OK;
}

/* Hands a whole message to fn, a text one once checked. */
static ws_read_status deliver(ws_reader *r, ws_opcode op, const uint8_t *data, size_t len, int frames,
                              ws_message_fn fn, void *ctx) {
    if (op == WS_OP_TEXT && !ws_utf8_valid(data, len))
        return fail(r, WS_CLOSE_INVALID_DATA, "a text message that is not UTF-8");
    ws_message m = {.opcode = op, .data = data, .len = len, .frames = frames};
    return fn(ctx, &m) ? WS_READ_STOPPED : WS_READ_OK;
}

/* One whole frame (header checked by check_frame, payload at p). */
static ws_read_status frame(ws_reader *r, const ws_frame_header *h, const uint8_t *p, ws_message_fn fn, void *ctx) {
    size_t len = (size_t)h->payload_len;
    r->frames[h->opcode]++;
    if (is_control(h->opcode)) return deliver(r, h->opcode, p, len, 1, fn, ctx);
    if (h->opcode != WS_OP_CONTINUATION) {
        if (h->fin) return deliver(r, h->opcode, p, len, 1, fn, ctx);
        r->msg_opcode = h->opcode;
        r->msg_frames = 1;
        r->msg_len = 0;
    } else {
        r->msg_frames++;
    }
    grow(&r->msg, &r->msg_cap, r->msg_len + len ? r->msg_len + len : 1);
    if (len) memcpy(r->msg + r->msg_len, p, len);
    r->msg_len += len;
    if (!h->fin) return WS_READ_OK;
    ws_opcode op = r->msg_opcode;
    r->msg_opcode = 0;
    ws_read_status st = deliver(r, op, r->msg, r->msg_len, r->msg_frames, fn, ctx);
    r->msg_len = 0;
    if (st != WS_READ_ERROR) shrink(&r->msg, &r->msg_cap);
    return st;
}

/* Completes the carried frame from data; *used: the bytes taken. */
static ws_read_status finish_carry(ws_reader *r, const uint8_t *data, size_t len, size_t *used, ws_message_fn fn,
                                   void *ctx) {
    *used = 0;
    ws_frame_header h;
    int code;
    const char *why;
    /* The header first, a byte at a time from data until it parses. */
    int got;
    while ((got = ws_frame_header_parse(r->carry, r->carry_len, &h, &code, &why)) == 0) {
        if (*used == len) return WS_READ_OK;
        grow(&r->carry, &r->carry_cap, r->carry_len + 1);
        r->carry[r->carry_len++] = data[(*used)++];
    }
    if (got < 0) return fail(r, code, why);
    if (check_frame(r, &h) != WS_READ_OK) return WS_READ_ERROR;
    size_t total = h.header_len + (size_t)h.payload_len;
    size_t take = total - r->carry_len;
    if (take > len - *used) take = len - *used;
    grow(&r->carry, &r->carry_cap, r->carry_len + take);
    memcpy(r->carry + r->carry_len, data + *used, take);
    r->carry_len += take;
    *used += take;
    if (r->carry_len < total) return WS_READ_OK;
    r->carry_len = 0;
    ws_read_status st = frame(r, &h, r->carry + h.header_len, fn, ctx);
    if (st != WS_READ_ERROR) shrink(&r->carry, &r->carry_cap);
    return st;
}

ws_read_status ws_reader_feed(ws_reader *r, const uint8_t *data, size_t len, ws_message_fn fn, void *ctx) {
    if (r->error) return WS_READ_ERROR;
    r->bytes += len;
    size_t pos = 0;
    if (r->carry_len) {
        ws_read_status st = finish_carry(r, data, len, &pos, fn, ctx);
        if (st != WS_READ_OK || r->carry_len) return st;
    }
    while (pos < len) {
        ws_frame_header h;
        int code;
        const char *why;
        int got = ws_frame_header_parse(data + pos, len - pos, &h, &code, &why);
        if (got < 0) return fail(r, code, why);
        if (got > 0 && check_frame(r, &h) != WS_READ_OK) return WS_READ_ERROR;
        if (got == 0 || h.payload_len > len - pos - h.header_len) {
            /* The read ends inside this frame: keep what came. */
            grow(&r->carry, &r->carry_cap, len - pos);
            memcpy(r->carry, data + pos, len - pos);
            r->carry_len = len - pos;
            return WS_READ_OK;
        }
        ws_read_status st = frame(r, &h, data + pos + h.header_len, fn, ctx);
        if (st != WS_READ_OK) return st;
        pos += h.header_len + (size_t)h.payload_len;
    }
    return WS_READ_OK;
}
