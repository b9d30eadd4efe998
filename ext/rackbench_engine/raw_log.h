/*
 * raw_log.h - --raw: one CSV record per request, streamed to disk.
 *
 * Each thread fills its own 256 KB buffer and hands whole buffers to one
 * shared file descriptor opened with O_APPEND, so records of different
 * threads never interleave inside a line and memory stays bounded however
 * long the run. Columns (see doc/output.md):
 *   phase,start_ns,latency_ns,status,bytes,connection,error
 * start_ns is the request's latency origin (its scheduled time in open
 * loop) relative to the run start; status is 0 and error names the kind
 * for failed requests.
 */
#ifndef RB_RAW_LOG_H
#define RB_RAW_LOG_H

#include <stddef.h>
#include <stdint.h>

#define RAW_BUFFER_BYTES (256 * 1024)

typedef struct {
    int fd;              /* shared; -1 when --raw is off */
    size_t len;
    int failed;          /* a write failed (disk full?): stop writing */
    char *data;
} raw_log;

/* Opens (truncates) path and writes the header line. Returns the fd or -1. */
int raw_log_open_file(const char *path);

void raw_log_init(raw_log *log, int fd);

void raw_log_record(raw_log *log, int phase, uint64_t start_ns, uint64_t latency_ns, int status,
                    uint64_t bytes, uint32_t connection, const char *error);

/* Writes what is buffered. Returns 0, or -1 if any write failed. */
int raw_log_flush(raw_log *log);

void raw_log_free(raw_log *log);

#endif
