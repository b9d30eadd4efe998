/*
 * test_cable.c - Action Cable's protocol (cable.h) and the engine's
 * message bodies (ws_payload.h): the commands written byte for byte, the
 * server's messages of every type read (with nested values, escapes and
 * spaces that must not fool the scanner), and a body found again inside
 * an echo, a Cable message, and a Cable message that keeps it a string.
 * Messages are fenced (fenced_bytes.h): nothing is read past them.
 */
#include "cable.h"
#include "check.h"
#include "fenced_bytes.h"
#include "ws_payload.h"

#include <stdio.h>
#include <string.h>

static void read_msg(const char *text, cable_frame *f) {
    size_t n = strlen(text);
    cable_read((const uint8_t *)fenced_end(text, n), n, f);
}

static int value_is(const cable_frame *f, const char *want) {
    return f->value_len == strlen(want) && memcmp(f->value, want, f->value_len) == 0;
}

static void test_read(void) {
    cable_frame f;
    read_msg("{\"type\":\"welcome\"}", &f);
    CHECK(f.kind == CABLE_WELCOME);
    read_msg(" { \"type\" : \"welcome\" , \"sid\":\"abc\" } ", &f);
    CHECK(f.kind == CABLE_WELCOME);
    read_msg("{\"type\":\"ping\",\"message\":1700000000}", &f);
    CHECK(f.kind == CABLE_PING);
    read_msg("{\"identifier\":\"{\\\"channel\\\":\\\"B\\\"}\",\"type\":\"confirm_subscription\"}", &f);
    CHECK(f.kind == CABLE_CONFIRM);
    read_msg("{\"identifier\":\"{\\\"channel\\\":\\\"B\\\"}\",\"type\":\"reject_subscription\"}", &f);
    CHECK(f.kind == CABLE_REJECT);
    read_msg("{\"type\":\"disconnect\",\"reason\":\"unauthorized\",\"reconnect\":false}", &f);
    CHECK(f.kind == CABLE_DISCONNECT);
    CHECK(f.reason_len == 12 && memcmp(f.reason, "unauthorized", 12) == 0);
    /* a message whose value holds "type" must stay a message */
    read_msg("{\"identifier\":\"{\\\"channel\\\":\\\"B\\\"}\",\"message\":{\"type\":\"ping\",\"list\":[1,{\"a\":\"}\"}]}}", &f);
    CHECK(f.kind == CABLE_MESSAGE);
    CHECK(value_is(&f, "{\"type\":\"ping\",\"list\":[1,{\"a\":\"}\"}]}"));
    read_msg("{\"identifier\":\"x\",\"message\":\"a \\\"quoted\\\" string\"}", &f);
    CHECK(f.kind == CABLE_MESSAGE);
    CHECK(value_is(&f, "\"a \\\"quoted\\\" string\""));
    read_msg("{\"identifier\":\"x\",\"message\":42}", &f);
    CHECK(f.kind == CABLE_MESSAGE && value_is(&f, "42"));
    read_msg("{\"type\":\"something_new\"}", &f);
    CHECK(f.kind == CABLE_OTHER);
    read_msg("{\"message\":1}", &f); /* no identifier: not a channel's */
    CHECK(f.kind == CABLE_OTHER);
    const char *broken[] = {"", "[]", "hello", "{", "{\"type\"", "{\"type\":", "{\"type\":\"welc", "{\"a\":1,}x",
                            "{\"message\":{\"a\":[1,2}", "{\"a\":\"\\", "{\"a\" 1}", "{\"a\":1 \"b\":2}"};
    for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
        read_msg(broken[i], &f);
        CHECK(f.kind == CABLE_NOT_JSON);
        if (f.kind != CABLE_NOT_JSON) fprintf(stderr, "  read as %d: %s\n", f.kind, broken[i]);
    }
}

static void test_commands(void) {
    char id[CABLE_IDENTIFIER_BYTES], err[200], out[2048];
    CHECK(cable_identifier(id, sizeof(id), "BenchmarkChannel", NULL, err, sizeof(err)) > 0);
    CHECK(strcmp(id, "{\"channel\":\"BenchmarkChannel\"}") == 0);
    CHECK(cable_identifier(id, sizeof(id), "Room", " {\"room\":\"1\", \"n\":2} ", err, sizeof(err)) > 0);
    CHECK(strcmp(id, "{\"channel\":\"Room\",\"room\":\"1\", \"n\":2}") == 0);
    CHECK(cable_identifier(id, sizeof(id), "Room", "{}", err, sizeof(err)) > 0);
    CHECK(strcmp(id, "{\"channel\":\"Room\"}") == 0);
    CHECK(cable_identifier(id, sizeof(id), "Room", "[1]", err, sizeof(err)) == 0);
    CHECK(strstr(err, "JSON object") != NULL);
    CHECK(cable_identifier(id, sizeof(id), "a\"b", NULL, err, sizeof(err)) == 0);
    CHECK(cable_identifier(id, 10, "LongChannelName", NULL, err, sizeof(err)) == 0);

    cable_identifier(id, sizeof(id), "Room", "{\"room\":\"1\"}", err, sizeof(err));
    size_t n = cable_subscribe(out, sizeof(out), id);
    const char *sub = "{\"command\":\"subscribe\",\"identifier\":\"{\\\"channel\\\":\\\"Room\\\",\\\"room\\\":\\\"1\\\"}\"}";
    CHECK(n == strlen(sub) && memcmp(out, sub, n) == 0);
    CHECK(cable_subscribe(out, 20, id) == 0);

    const char *body = "{\"rb_seq\":7,\"rb_t\":99}";
    n = cable_perform(out, sizeof(out), id, "echo", body, strlen(body));
    const char *perform = "{\"command\":\"message\",\"identifier\":\"{\\\"channel\\\":\\\"Room\\\",\\\"room\\\":\\\"1\\\"}\","
                          "\"data\":\"{\\\"action\\\":\\\"echo\\\",\\\"rb_seq\\\":7,\\\"rb_t\\\":99}\"}";
    CHECK(n == strlen(perform) && memcmp(out, perform, n) == 0);
    if (n != strlen(perform) || memcmp(out, perform, n) != 0) fprintf(stderr, "  got: %.*s\n", (int)n, out);
    CHECK(cable_perform(out, 30, id, "echo", body, strlen(body)) == 0);
}

static void test_payload(void) {
    char body[256];
    size_t n = ws_payload_write(body, sizeof(body), 12, 3456789, 100);
    CHECK_EQ_U64(n, 100);
    CHECK(memcmp(body, "{\"rb_seq\":12,\"rb_t\":3456789,\"pad\":\"x", 36) == 0 && body[99] == '}');
    n = ws_payload_write(body, sizeof(body), 12, 3456789, 1);
    CHECK(n == strlen("{\"rb_seq\":12,\"rb_t\":3456789}") && memcmp(body, "{\"rb_seq\":12,\"rb_t\":3456789}", n) == 0);
    CHECK(ws_payload_write(body, 20, 12, 3456789, 100) == 0);
    CHECK(ws_payload_write(body, WS_PAYLOAD_MIN_BYTES, UINT64_MAX, UINT64_MAX, 1) > 0);

    uint64_t seq, t;
    const char *found[] = {
        "{\"rb_seq\":12,\"rb_t\":3456789,\"pad\":\"xx\"}",
        "{\"identifier\":\"x\",\"message\":{\"rb_t\":3456789, \"rb_seq\" : 12}}",
        "{\"identifier\":\"x\",\"message\":\"{\\\"rb_seq\\\":12,\\\"rb_t\\\":3456789}\"}",
    };
    for (size_t i = 0; i < sizeof(found) / sizeof(found[0]); i++) {
        size_t len = strlen(found[i]);
        seq = t = 0;
        CHECK(ws_payload_find((const uint8_t *)fenced_end(found[i], len), len, &seq, &t) == 1);
        CHECK(seq == 12 && t == 3456789);
    }
    const char *missing[] = {"", "{\"type\":\"ping\"}", "{\"rb_seq\":12}", "{\"rb_seq\":\"12\",\"rb_t\":1}",
                             "{\"xrb_seq\":1,\"rb_t\":1}", "{\"rb_seq\":12,\"rb_t\":", "\"rb_seq",
                             "{\"rb_seq\":12345678901234567890123,\"rb_t\":1}"};
    for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++) {
        size_t len = strlen(missing[i]);
        CHECK(ws_payload_find((const uint8_t *)fenced_start(missing[i], len), len, &seq, &t) == 0);
    }
}

int main(void) {
    fenced_init();
    test_read();
    test_commands();
    test_payload();
    return check_report("cable");
}
