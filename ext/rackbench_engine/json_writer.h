/*
 * json_writer.h - a minimal streaming JSON writer: enough for the engine's
 * one result document, with correct string escaping and commas placed by
 * the writer (so no caller can produce invalid JSON by forgetting one).
 */
#ifndef RB_JSON_WRITER_H
#define RB_JSON_WRITER_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

typedef struct {
    FILE *out;
    int depth;
    int need_comma[JSON_MAX_DEPTH];
} json_writer;

void json_init(json_writer *j, FILE *out);
void json_object_begin(json_writer *j);  /* as a value (top level or in an array) */
void json_object_end(json_writer *j);
void json_array_begin(json_writer *j);
void json_array_end(json_writer *j);
void json_key(json_writer *j, const char *key); /* inside an object, before a value */
void json_string(json_writer *j, const char *s);
void json_u64(json_writer *j, uint64_t v);
void json_i64(json_writer *j, int64_t v);
/* Finite doubles with up to `decimals` digits after the point; NaN and
 * infinities become null (JSON has no such numbers). */
void json_double(json_writer *j, double v, int decimals);
void json_bool(json_writer *j, int v);
void json_null(json_writer *j);

/* key + value shorthands */
void json_kv_u64(json_writer *j, const char *key, uint64_t v);
void json_kv_double(json_writer *j, const char *key, double v, int decimals);
void json_kv_string(json_writer *j, const char *key, const char *s);
void json_kv_bool(json_writer *j, const char *key, int v);

#endif
