/* raw_log.c - see raw_log.h. */
#include "raw_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char raw_header[] = "phase,start_ns,latency_ns,status,bytes,connection,error\n";

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int raw_log_open_file(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    if (write_all(fd, raw_header, sizeof(raw_header) - 1)) {
        close(fd);
        return -1;
    }
    return fd;
}

void raw_log_init(raw_log *log, int fd) {
    memset(log, 0, sizeof(*log));
    log->fd = fd;
    if (fd >= 0) {
        log->data = malloc(RAW_BUFFER_BYTES);
        if (!log->data) {
            perror("rackbench-engine: out of memory");
            exit(1);
        }
    }
}

/* Appends the decimal digits of v; snprintf costs ~10x more per record. */
static char *put_u64(char *p, uint64_t v) {
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) *p++ = tmp[--n];
    return p;
}

void raw_log_record(raw_log *log, int phase, uint64_t start_ns, uint64_t latency_ns, int status,
                    uint64_t bytes, uint32_t connection, const char *error) {
    if (log->fd < 0 || log->failed) return;
    /* A record is at most ~140 bytes: flush while there is room for one. */
    if (log->len > RAW_BUFFER_BYTES - 256) raw_log_flush(log);
    char *p = log->data + log->len;
    *p++ = phase ? 'm' : 'w';
    *p++ = ',';
    p = put_u64(p, start_ns);
    *p++ = ',';
    p = put_u64(p, latency_ns);
    *p++ = ',';
    p = put_u64(p, (uint64_t)(status < 0 ? 0 : status));
    *p++ = ',';
    p = put_u64(p, bytes);
    *p++ = ',';
    p = put_u64(p, connection);
    *p++ = ',';
    if (error) {
        size_t n = strlen(error);
        memcpy(p, error, n);
        p += n;
    }
    *p++ = '\n';
    log->len = (size_t)(p - log->data);
}

int raw_log_flush(raw_log *log) {
    if (log->fd < 0 || log->len == 0) return log->failed ? -1 : 0;
    if (!log->failed && write_all(log->fd, log->data, log->len)) log->failed = 1;
    log->len = 0;
    return log->failed ? -1 : 0;
}

void raw_log_free(raw_log *log) {
    free(log->data);
    log->data = NULL;
}
