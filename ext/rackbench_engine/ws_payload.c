/* ws_payload.c - see ws_payload.h. */
#include "ws_payload.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

size_t ws_payload_write(char *out, size_t cap, uint64_t seq, uint64_t sent_ns, size_t size) {
    char head[80];
    int n = snprintf(head, sizeof(head), "{\"rb_seq\":%" PRIu64 ",\"rb_t\":%" PRIu64, seq, sent_ns);
    size_t head_len = (size_t)n;
    /* ,"pad":"" and } around the padding. */
    size_t frame = head_len + 10;
    size_t pad = size > frame ? size - frame : 0;
    size_t total = pad ? frame + pad : head_len + 1;
    if (total > cap) return 0;
    memcpy(out, head, head_len);
    size_t len = head_len;
    if (pad) {
        memcpy(out + len, ",\"pad\":\"", 8);
        len += 8;
        memset(out + len, 'x', pad);
        len += pad;
        out[len++] = '"';
    }
    out[len++] = '}';
    return len;
}

/* The number after key in data: skips the key's closing quote (escaped
 * or not), the colon and spaces. 1 with *value set, 0 when absent. */
static int number_after(const uint8_t *data, size_t len, const char *key, uint64_t *value) {
    size_t key_len = strlen(key);
    const uint8_t *p = data, *end = data + len;
    while (p < end) {
        const uint8_t *hit = memmem(p, (size_t)(end - p), key, key_len);
        if (!hit) return 0;
        const uint8_t *q = hit + key_len;
        p = hit + 1;
        /* The key must start a JSON key: a quote, maybe escaped, before it. */
        if (hit == data || hit[-1] != '"') continue;
        if (q < end && *q == '\\') q++;
        if (q >= end || *q != '"') continue;
        q++;
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        if (q >= end || *q != ':') continue;
        q++;
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        if (q >= end || *q < '0' || *q > '9') continue;
        uint64_t v = 0;
        int digits = 0;
        for (; q < end && *q >= '0' && *q <= '9'; q++) {
            if (++digits > 19) return 0; /* beyond any clock reading or count of ours */
            v = v * 10 + (uint64_t)(*q - '0');
        }
        *value = v;
        return 1;
    }
    return 0;
}

int ws_payload_find(const uint8_t *data, size_t len, uint64_t *seq, uint64_t *sent_ns) {
    return number_after(data, len, "rb_seq", seq) && number_after(data, len, "rb_t", sent_ns);
}
