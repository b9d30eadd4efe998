/*
 * test_json_writer.c - tests of the streaming JSON writer.
 *
 * Every document is written into memory (open_memstream) and compared with
 * the exact text expected: the writer adds no whitespace, so any stray or
 * missing comma, quote or escape shows.
 */
#include "check.h"
#include "json_writer.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_writer j;
static FILE *mem;
static char *mem_buf;
static size_t mem_len;

static void start(void)
{
    mem_buf = NULL;
    mem_len = 0;
    mem = open_memstream(&mem_buf, &mem_len);
    if (!mem) {
        perror("open_memstream");
        exit(2);
    }
    json_init(&j, mem);
}

/* Ends the document and compares it with want. */
static int document_is(const char *want)
{
    fclose(mem);
    int ok = mem_len == strlen(want) && memcmp(mem_buf, want, mem_len) == 0;
    if (!ok) fprintf(stderr, "  got:  %s\n  want: %s\n", mem_buf, want);
    free(mem_buf);
    return ok;
}

static void test_empty_containers(void)
{
    start();
    json_object_begin(&j);
    json_object_end(&j);
    CHECK(document_is("{}"));

    start();
    json_array_begin(&j);
    json_array_end(&j);
    CHECK(document_is("[]"));

    start();
    json_array_begin(&j);
    json_array_begin(&j);
    json_array_end(&j);
    json_object_begin(&j);
    json_object_end(&j);
    json_array_begin(&j);
    json_array_end(&j);
    json_array_end(&j);
    CHECK(document_is("[[],{},[]]"));
}

static void test_nested_document(void)
{
    start();
    json_object_begin(&j);
    json_kv_u64(&j, "a", 1);
    json_kv_string(&j, "b", "x");
    json_key(&j, "c");
    json_array_begin(&j);
    json_u64(&j, 1);
    json_i64(&j, -2);
    json_object_begin(&j);
    json_key(&j, "d");
    json_null(&j);
    json_object_end(&j);
    json_array_begin(&j);
    json_array_end(&j);
    json_string(&j, "s");
    json_array_end(&j);
    json_key(&j, "e");
    json_object_begin(&j);
    json_key(&j, "f");
    json_object_begin(&j);
    json_kv_bool(&j, "g", 1);
    json_object_end(&j);
    json_kv_bool(&j, "h", 0);
    json_object_end(&j);
    json_key(&j, "i");
    json_bool(&j, 1);
    json_key(&j, "k");
    json_array_begin(&j);
    json_array_end(&j);
    json_kv_double(&j, "l", 0.5, 2);
    json_object_end(&j);
    CHECK(document_is("{\"a\":1,\"b\":\"x\",\"c\":[1,-2,{\"d\":null},[],\"s\"],\"e\":{\"f\":{\"g\":true},\"h\":false},"
                      "\"i\":true,\"k\":[],\"l\":0.50}"));

    /* An array of objects, each with several members. */
    start();
    json_array_begin(&j);
    for (int i = 0; i < 3; i++) {
        json_object_begin(&j);
        json_kv_u64(&j, "n", (uint64_t)i);
        json_kv_string(&j, "v", i == 1 ? NULL : "t");
        json_object_end(&j);
    }
    json_array_end(&j);
    CHECK(document_is("[{\"n\":0,\"v\":\"t\"},{\"n\":1,\"v\":null},{\"n\":2,\"v\":\"t\"}]"));
}

/* 31 containers deep (JSON_MAX_DEPTH - 1), a sibling after each close. */
static void test_deep_nesting(void)
{
    enum { LEVELS = JSON_MAX_DEPTH - 1 };
    char want[1024];
    size_t n = 0;
    start();
    for (int i = 0; i < LEVELS; i++) {
        json_array_begin(&j);
        json_u64(&j, (uint64_t)i);
        n += (size_t)snprintf(want + n, sizeof want - n, "%s[%d", i ? "," : "", i);
    }
    for (int i = LEVELS - 1; i >= 0; i--) {
        json_array_end(&j);
        n += (size_t)snprintf(want + n, sizeof want - n, "]");
        if (i > 0) {
            json_u64(&j, (uint64_t)(1000 + i));
            n += (size_t)snprintf(want + n, sizeof want - n, ",%d", 1000 + i);
        }
    }
    CHECK(n < sizeof want);
    CHECK(document_is(want));

    /* The same depth with objects: keys at every level. */
    n = 0;
    start();
    for (int i = 0; i < LEVELS; i++) {
        json_object_begin(&j);
        json_kv_u64(&j, "v", (uint64_t)i);
        json_key(&j, "o");
        n += (size_t)snprintf(want + n, sizeof want - n, "{\"v\":%d,\"o\":", i);
    }
    json_null(&j);
    n += (size_t)snprintf(want + n, sizeof want - n, "null");
    for (int i = LEVELS - 1; i >= 0; i--) {
        json_kv_bool(&j, "z", 0);
        json_object_end(&j);
        n += (size_t)snprintf(want + n, sizeof want - n, ",\"z\":false}");
    }
    CHECK(n < sizeof want);
    CHECK(document_is(want));
}

static void test_string_escaping(void)
{
    start();
    json_string(&j, "q\"b\\s/n\nr\rt\tb\bf\f\x01\x1f\x7f \xc3\xa9~");
    CHECK(document_is("\"q\\\"b\\\\s/n\\nr\\rt\\tb\\u0008f\\u000c\\u0001\\u001f\\u007f \xc3\xa9~\""));

    start();
    json_object_begin(&j);
    json_kv_string(&j, "k\"e\\y\n", "");
    json_kv_string(&j, "", "v");
    json_key(&j, "\x02");
    json_string(&j, "\"\"");
    json_object_end(&j);
    CHECK(document_is("{\"k\\\"e\\\\y\\n\":\"\",\"\":\"v\",\"\\u0002\":\"\\\"\\\"\"}"));

    /* Every control character is escaped, with four lower-case hex digits. */
    char all[32];
    for (int c = 1; c < 32; c++) all[c - 1] = (char)c;
    all[31] = '\0';
    start();
    json_string(&j, all);
    CHECK(document_is("\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\u0008\\t\\n\\u000b\\u000c\\r"
                      "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019"
                      "\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\""));
}

static void test_numbers(void)
{
    start();
    json_array_begin(&j);
    json_u64(&j, 0);
    json_u64(&j, UINT64_MAX);
    json_i64(&j, INT64_MIN);
    json_i64(&j, INT64_MAX);
    json_i64(&j, 0);
    json_array_end(&j);
    CHECK(document_is("[0,18446744073709551615,-9223372036854775808,9223372036854775807,0]"));

    start();
    json_array_begin(&j);
    json_double(&j, 1.5, 3);
    json_double(&j, 2.4, 0);
    json_double(&j, NAN, 3);
    json_double(&j, INFINITY, 3);
    json_double(&j, -INFINITY, 0);
    json_double(&j, -0.25, 3);
    json_double(&j, 1e-9, 3);
    json_double(&j, 123456.789, 1);
    json_array_end(&j);
    CHECK(document_is("[1.500,2,null,null,null,-0.250,0.000,123456.8]"));

    start();
    json_object_begin(&j);
    json_kv_double(&j, "nan", NAN, 3);
    json_kv_double(&j, "inf", INFINITY, 3);
    json_kv_double(&j, "x", 99.125, 2);
    json_kv_string(&j, "s", NULL);
    json_kv_u64(&j, "u", 7);
    json_kv_bool(&j, "t", 1);
    json_kv_string(&j, "last", NULL);
    json_object_end(&j);
    CHECK(document_is("{\"nan\":null,\"inf\":null,\"x\":99.12,\"s\":null,\"u\":7,\"t\":true,\"last\":null}"));
}

/* A writer can be reused: json_init starts a fresh document. */
static void test_reinit(void)
{
    start();
    json_array_begin(&j);
    json_u64(&j, 1);
    json_array_end(&j);
    CHECK(document_is("[1]"));
    start();
    json_u64(&j, 2);
    CHECK(document_is("2"));
}

/* User strings may hold any bytes: invalid UTF-8 becomes U+FFFD so the
 * document stays valid JSON; valid multi-byte characters pass through. */
static void test_invalid_utf8(void)
{
    start();
    json_string(&j, "a\xff" "b\xc3\xa9" "c\xc3" "d\xe2\x82\xac" "e\xed\xa0\x80" "f\xc0\xaf" "g\xf4\x90\x80\x80");
    CHECK(document_is("\"a\\ufffdb\xc3\xa9" "c\\ufffdd\xe2\x82\xac" "e\\ufffd\\ufffd\\ufffdf\\ufffd\\ufffdg"
                      "\\ufffd\\ufffd\\ufffd\\ufffd\""));
}

int main(void)
{
    test_invalid_utf8();
    test_empty_containers();
    test_nested_document();
    test_deep_nesting();
    test_string_escaping();
    test_numbers();
    test_reinit();
    return check_report("json_writer");
}
