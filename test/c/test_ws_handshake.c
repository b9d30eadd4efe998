/*
 * test_ws_handshake.c - the WebSocket opening handshake (ws_handshake.h):
 * the key and accept of RFC 6455's own example, the Upgrade request's
 * exact bytes, and the check of the server's answer: a right 101 whole
 * and cut at every byte, with frames after it; every way it can be
 * wrong, each with its kind and a reason naming the problem. Answers are
 * fenced (fenced_bytes.h): the check reads nothing past what came.
 */
#include "check.h"
#include "fenced_bytes.h"
#include "ws_handshake.h"

#include <stdio.h>
#include <string.h>

/* RFC 6455 section 1.3's example. */
#define RFC_KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define RFC_ACCEPT "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static void test_key_and_accept(void) {
    char accept[WS_ACCEPT_CHARS + 1];
    CHECK(ws_handshake_accept(RFC_KEY, accept) == 0);
    CHECK(strcmp(accept, RFC_ACCEPT) == 0);
    /* "the sample nonce", the RFC's 16 bytes */
    char key[WS_KEY_CHARS + 1];
    ws_handshake_key((const uint8_t *)"the sample nonce", key);
    CHECK(strcmp(key, RFC_KEY) == 0);
    CHECK(strlen(key) == WS_KEY_CHARS);
}

static void test_request(void) {
    const char *headers[] = {"Cookie: session=1", "Origin: http://elsewhere"};
    ws_request_parts p = {.path = "/cable?x=1", .host = "127.0.0.1:3000", .origin = "http://127.0.0.1:3000",
                          .protocol = "actioncable-v1-json", .headers = headers, .header_count = 2};
    char out[1024];
    size_t n = ws_handshake_request(out, sizeof(out), &p, RFC_KEY);
    const char *want = "GET /cable?x=1 HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nUser-Agent: rackbench-engine/0.1.0\r\n"
                       "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                       "Sec-WebSocket-Key: " RFC_KEY "\r\nSec-WebSocket-Protocol: actioncable-v1-json\r\n"
                       "Cookie: session=1\r\nOrigin: http://elsewhere\r\n\r\n";
    CHECK_EQ_U64(n, strlen(want));
    CHECK(n == strlen(want) && memcmp(out, want, n) == 0);
    if (n != strlen(want) || memcmp(out, want, n) != 0) fprintf(stderr, "  got: %.*s\n", (int)n, out);
    /* no room: 0 */
    CHECK(ws_handshake_request(out, 40, &p, RFC_KEY) == 0);
    ws_request_parts bare = {.path = "/", .host = "h"};
    n = ws_handshake_request(out, sizeof(out), &bare, RFC_KEY);
    CHECK(n > 0 && !memmem(out, n, "Origin", 6) && !memmem(out, n, "Protocol", 8));
}

/* Checks answer placed against the fence after it, then before it: both
 * verdicts must agree. */
static int check(const char *answer, size_t len, const char *protocol, ws_handshake_result *res) {
    int before = ws_handshake_check(fenced_start(answer, len), len, RFC_ACCEPT, protocol, res);
    int after = ws_handshake_check(fenced_end(answer, len), len, RFC_ACCEPT, protocol, res);
    CHECK(before == after);
    return after;
}

static void test_right_answer(void) {
    const char *answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n"
                         "Sec-WebSocket-Accept: " RFC_ACCEPT "\r\nSec-WebSocket-Protocol: actioncable-v1-json\r\n\r\n";
    size_t len = strlen(answer);
    char with_frame[512];
    snprintf(with_frame, sizeof(with_frame), "%s\x81\x05hello", answer);
    ws_handshake_result res;
    CHECK(check(with_frame, len + 7, "actioncable-v1-json", &res) == 1);
    CHECK_EQ_U64(res.header_bytes, len);
    CHECK(res.status == 101);
    /* every shorter prefix: more is needed, nothing read past it */
    int wrong = 0;
    for (size_t k = 0; k < len; k++)
        if (check(answer, k, "actioncable-v1-json", &res) != 0) wrong++;
    CHECK(wrong == 0);
    /* bare LF line ends */
    const char *lf = "HTTP/1.1 101 OK\nUpgrade: websocket\nConnection: upgrade\nSec-WebSocket-Accept: " RFC_ACCEPT "\n\n";
    CHECK(check(lf, strlen(lf), NULL, &res) == 1);
}

static void expect_failure(const char *answer, const char *protocol, ws_handshake_failure kind, const char *says) {
    ws_handshake_result res;
    CHECK(check(answer, strlen(answer), protocol, &res) == -1);
    CHECK(res.failure == kind);
    CHECK(strstr(res.reason, says) != NULL);
    if (!strstr(res.reason, says)) fprintf(stderr, "  reason: %s\n", res.reason);
}

static void test_wrong_answers(void) {
    expect_failure("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", NULL, WS_HS_STATUS, "\"404 Not Found\", not 101");
    expect_failure("HTTP/1.1 200 OK\r\n\r\n", NULL, WS_HS_STATUS, "200 OK");
    expect_failure("SSH-2.0-OpenSSH\r\n", NULL, WS_HS_NOT_HTTP, "not HTTP: \"SSH-2.0-OpenSSH??\"");
    expect_failure("HTTP/1.1 1O1 x\r\n\r\n", NULL, WS_HS_NOT_HTTP, "status line");
    expect_failure("HTTP/1.1 101 S\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " RFC_ACCEPT "\r\n\r\n", NULL,
                   WS_HS_UPGRADE, "Upgrade: websocket");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " RFC_ACCEPT "\r\n\r\n",
                   NULL, WS_HS_UPGRADE, "Upgrade: websocket");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgraded\r\nSec-WebSocket-Accept: " RFC_ACCEPT
                   "\r\n\r\n", NULL, WS_HS_UPGRADE, "Connection: upgrade");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n", NULL, WS_HS_ACCEPT,
                   "no Sec-WebSocket-Accept");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: abc\r\n\r\n",
                   NULL, WS_HS_ACCEPT, "\"abc\" is not the one");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: " RFC_ACCEPT
                   "\r\nSec-WebSocket-Accept: x\r\n\r\n", NULL, WS_HS_ACCEPT, "is not the one");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: " RFC_ACCEPT
                   "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n", NULL, WS_HS_EXTENSION, "extension");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: " RFC_ACCEPT
                   "\r\n\r\n", "actioncable-v1-json", WS_HS_PROTOCOL, "did not choose the subprotocol actioncable-v1-json");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: " RFC_ACCEPT
                   "\r\nSec-WebSocket-Protocol: actioncable-unsupported\r\n\r\n", "actioncable-v1-json", WS_HS_PROTOCOL,
                   "\"actioncable-unsupported\", which was not offered");
    expect_failure("HTTP/1.1 101 S\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: " RFC_ACCEPT
                   "\r\nSec-WebSocket-Protocol: chat\r\n\r\n", NULL, WS_HS_PROTOCOL, "though none was offered");
    expect_failure("HTTP/1.1 101 S\r\n: no name\r\n\r\n", NULL, WS_HS_NOT_HTTP, "without a name");
    /* endless headers */
    static char endless[WS_HANDSHAKE_MAX_BYTES + 100];
    memcpy(endless, "HTTP/1.1 101 S\r\n", 16);
    for (size_t i = 16; i < sizeof(endless); i++) endless[i] = (i % 40 == 39) ? '\n' : 'x';
    ws_handshake_result res;
    CHECK(ws_handshake_check(endless, sizeof(endless), RFC_ACCEPT, NULL, &res) == -1);
    CHECK(res.failure == WS_HS_TOO_BIG);
}

int main(void) {
    fenced_init();
    test_key_and_accept();
    test_request();
    test_right_answer();
    test_wrong_answers();
    return check_report("ws_handshake");
}
