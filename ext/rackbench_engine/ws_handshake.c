/* ws_handshake.c - see ws_handshake.h. */
#include "ws_handshake.h"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config.h"

/* RFC 6455 section 1.3: the GUID a server appends to the key. */
static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

const char *const ws_handshake_failure_names[WS_HS_KINDS] = {"ok",        "status",  "not_http", "upgrade",
                                                            "accept",    "protocol", "extension", "too_big"};

void ws_handshake_key(const uint8_t nonce[16], char key[WS_KEY_CHARS + 1]) {
    EVP_EncodeBlock((unsigned char *)key, nonce, 16);
}

int ws_handshake_accept(const char *key, char accept[WS_ACCEPT_CHARS + 1]) {
    char joined[128];
    int n = snprintf(joined, sizeof(joined), "%s%s", key, ws_guid);
    if (n < 0 || (size_t)n >= sizeof(joined)) return -1;
    unsigned char digest[SHA_DIGEST_LENGTH];
    if (!SHA1((const unsigned char *)joined, (size_t)n, digest)) return -1;
    EVP_EncodeBlock((unsigned char *)accept, digest, SHA_DIGEST_LENGTH);
    return 0;
}

/* Whether one of the -H lines names header name. */
static int overridden(const ws_request_parts *p, const char *name) {
    size_t n = strlen(name);
    for (int i = 0; i < p->header_count; i++)
        if (strncasecmp(p->headers[i], name, n) == 0 && p->headers[i][n] == ':') return 1;
    return 0;
}

/* Appends text to out at *len (cap bytes); sets *len past cap on overflow. */
static void put(char *out, size_t cap, size_t *len, const char *text) {
    size_t n = strlen(text);
    if (*len + n < cap) memcpy(out + *len, text, n);
    *len += n;
}

size_t ws_handshake_request(char *out, size_t cap, const ws_request_parts *p, const char *key) {
    size_t len = 0;
    put(out, cap, &len, "GET ");
    put(out, cap, &len, p->path);
    put(out, cap, &len, " HTTP/1.1\r\n");
    if (!overridden(p, "Host")) {
        put(out, cap, &len, "Host: ");
        put(out, cap, &len, p->host);
        put(out, cap, &len, "\r\n");
    }
    if (!overridden(p, "User-Agent")) put(out, cap, &len, "User-Agent: rackbench-engine/" ENGINE_VERSION "\r\n");
    put(out, cap, &len, "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ");
    put(out, cap, &len, key);
    put(out, cap, &len, "\r\n");
    if (p->protocol) {
        put(out, cap, &len, "Sec-WebSocket-Protocol: ");
        put(out, cap, &len, p->protocol);
        put(out, cap, &len, "\r\n");
    }
    if (p->origin && !overridden(p, "Origin")) {
        put(out, cap, &len, "Origin: ");
        put(out, cap, &len, p->origin);
        put(out, cap, &len, "\r\n");
    }
    for (int i = 0; i < p->header_count; i++) {
        put(out, cap, &len, p->headers[i]);
        put(out, cap, &len, "\r\n");
    }
    put(out, cap, &len, "\r\n");
    return len < cap ? len : 0;
}

static int fail(ws_handshake_result *res, ws_handshake_failure kind, const char *fmt, const char *a, size_t a_len) {
    res->failure = kind;
    char shown[96];
    size_t n = 0;
    for (; n < a_len && n < sizeof(shown) - 1; n++) {
        unsigned char c = (unsigned char)a[n];
        shown[n] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    shown[n] = '\0';
    snprintf(res->reason, sizeof(res->reason), fmt, shown);
    return -1;
}

/* Whether a comma-separated header value holds token (any case). */
static int has_token(const char *v, size_t len, const char *token) {
    size_t t = strlen(token), i = 0;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ',')) i++;
        size_t start = i;
        while (i < len && v[i] != ',') i++;
        size_t end = i;
        while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t')) end--;
        if (end - start == t && strncasecmp(v + start, token, t) == 0) return 1;
    }
    return 0;
}

static int equals(const char *v, size_t len, const char *text) { return strlen(text) == len && memcmp(v, text, len) == 0; }

/* What the header lines said. */
typedef struct {
    int upgrade, connection, accept_ok, accept_seen, extension;
    const char *protocol;
    size_t protocol_len;
    const char *accept;
    size_t accept_len;
} seen_headers;

static void read_header(seen_headers *s, const char *name, size_t name_len, const char *v, size_t v_len,
                        const char *accept) {
    if (name_len == 7 && strncasecmp(name, "Upgrade", 7) == 0) {
        s->upgrade = v_len == 9 && strncasecmp(v, "websocket", 9) == 0;
    } else if (name_len == 10 && strncasecmp(name, "Connection", 10) == 0) {
        s->connection |= has_token(v, v_len, "upgrade");
    } else if (name_len == 20 && strncasecmp(name, "Sec-WebSocket-Accept", 20) == 0) {
        /* Every Accept line must be the right one. */
        s->accept_ok = (s->accept_seen ? s->accept_ok : 1) && equals(v, v_len, accept);
        s->accept_seen = 1;
        s->accept = v;
        s->accept_len = v_len;
    } else if (name_len == 22 && strncasecmp(name, "Sec-WebSocket-Protocol", 22) == 0) {
        s->protocol = v;
        s->protocol_len = v_len;
    } else if (name_len == 24 && strncasecmp(name, "Sec-WebSocket-Extensions", 24) == 0) {
        s->extension = v_len > 0;
    }
}

/* The end of the header block in data: the index past its blank line, or
 * 0 when it has not come yet. Lines end in CRLF, or LF alone. */
static size_t block_end(const char *data, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (data[i] != '\n') continue;
        if (i + 1 < len && data[i + 1] == '\n') return i + 2;
        if (i + 2 < len && data[i + 1] == '\r' && data[i + 2] == '\n') return i + 3;
    }
    return 0;
}

int ws_handshake_check(const char *data, size_t len, const char *accept, const char *protocol,
                       ws_handshake_result *res) {
    memset(res, 0, sizeof(*res));
    size_t first = len < 5 ? len : 5;
    if (memcmp(data, "HTTP/", first) != 0) return fail(res, WS_HS_NOT_HTTP, "the server answered in something not HTTP: \"%s\"", data, len < 40 ? len : 40);
    size_t end = block_end(data, len);
    if (!end) {
        if (len > WS_HANDSHAKE_MAX_BYTES)
            return fail(res, WS_HS_TOO_BIG, "the server's answer to the Upgrade has more than 16 KB of headers%s", "", 0);
        return 0;
    }
    if (end > WS_HANDSHAKE_MAX_BYTES)
        return fail(res, WS_HS_TOO_BIG, "the server's answer to the Upgrade has more than 16 KB of headers%s", "", 0);
    const char *line_end = memchr(data, '\n', end);
    size_t status_len = (size_t)(line_end - data);
    if (status_len && data[status_len - 1] == '\r') status_len--;
    /* "HTTP/1.1 101 Switching Protocols" */
    if (status_len < 12 || (memcmp(data, "HTTP/1.1 ", 9) != 0 && memcmp(data, "HTTP/1.0 ", 9) != 0) ||
        data[9] < '1' || data[9] > '9' || data[10] < '0' || data[10] > '9' || data[11] < '0' || data[11] > '9' ||
        (status_len > 12 && data[12] != ' '))
        return fail(res, WS_HS_NOT_HTTP, "the server's status line is not HTTP/1.1's: \"%s\"", data, status_len);
    res->status = (data[9] - '0') * 100 + (data[10] - '0') * 10 + (data[11] - '0');
    if (res->status != 101)
        return fail(res, WS_HS_STATUS, "the server answered \"%s\", not 101 Switching Protocols", data + 9,
                    status_len - 9);
    seen_headers s;
    memset(&s, 0, sizeof(s));
    const char *p = line_end + 1, *stop = data + end;
    while (p < stop) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        size_t n = (size_t)(nl - p);
        if (n && p[n - 1] == '\r') n--;
        if (n == 0) break;
        const char *colon = memchr(p, ':', n);
        if (!colon || colon == p)
            return fail(res, WS_HS_NOT_HTTP, "the server sent a header line without a name: \"%s\"", p, n);
        const char *v = colon + 1, *v_end = p + n;
        while (v < v_end && (*v == ' ' || *v == '\t')) v++;
        while (v_end > v && (v_end[-1] == ' ' || v_end[-1] == '\t')) v_end--;
        read_header(&s, p, (size_t)(colon - p), v, (size_t)(v_end - v), accept);
        p = nl + 1;
    }
    if (!s.upgrade) return fail(res, WS_HS_UPGRADE, "the server's 101 lacks \"Upgrade: websocket\"%s", "", 0);
    if (!s.connection) return fail(res, WS_HS_UPGRADE, "the server's 101 lacks \"Connection: upgrade\"%s", "", 0);
    if (!s.accept_seen) return fail(res, WS_HS_ACCEPT, "the server's 101 has no Sec-WebSocket-Accept%s", "", 0);
    if (!s.accept_ok)
        return fail(res, WS_HS_ACCEPT, "the server's Sec-WebSocket-Accept \"%s\" is not the one the key calls for",
                    s.accept, s.accept_len);
    if (s.extension)
        return fail(res, WS_HS_EXTENSION, "the server chose an extension though none was offered%s", "", 0);
    if (protocol && !(s.protocol && equals(s.protocol, s.protocol_len, protocol))) {
        if (!s.protocol) {
            snprintf(res->reason, sizeof(res->reason), "the server did not choose the subprotocol %s", protocol);
            res->failure = WS_HS_PROTOCOL;
            return -1;
        }
        return fail(res, WS_HS_PROTOCOL, "the server chose the subprotocol \"%s\", which was not offered", s.protocol,
                    s.protocol_len);
    }
    if (!protocol && s.protocol)
        return fail(res, WS_HS_PROTOCOL, "the server chose the subprotocol \"%s\", though none was offered",
                    s.protocol, s.protocol_len);
    res->header_bytes = end;
    return 1;
}
