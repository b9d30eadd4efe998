/* proc_scan.c - see proc_scan.h. */
#include "proc_scan.h"

#include "environ_match.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STAT_LINE_MAX_BYTES 4096
#define ENVIRON_INITIAL_BYTES (16u << 10)

/* Reads what fd holds into buf (cap bytes). Returns the byte count, or -1. */
static ssize_t read_into(int fd, char *buf, size_t cap) {
    size_t len = 0;
    while (len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        len += (size_t)n;
    }
    return (ssize_t)len;
}

/* Reads the stat line of the process whose directory is dir_fd. */
static int read_stat_at(int dir_fd, proc_stat *out) {
    char line[STAT_LINE_MAX_BYTES];
    int fd = openat(dir_fd, "stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t len = read_into(fd, line, sizeof line);
    close(fd);
    if (len <= 0) return -1;
    return proc_stat_parse(line, (size_t)len, out);
}

/*
 * Reads the environment of the process whose directory is dir_fd into the
 * snapshot's buffer, growing it up to PROC_ENVIRON_MAX_BYTES. Returns the
 * usable length (a read cut at the cap ends at its last whole entry), -1
 * when unreadable, -2 when out of memory.
 */
static ssize_t read_environ_at(proc_snapshot *snap, int dir_fd) {
    int fd = openat(dir_fd, "environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t len = 0;
    for (;;) {
        if (len == snap->environ_capacity) {
            if (snap->environ_capacity >= PROC_ENVIRON_MAX_BYTES) break;
            size_t cap = snap->environ_capacity ? snap->environ_capacity * 2 : ENVIRON_INITIAL_BYTES;
            char *grown = realloc(snap->environ_buf, cap);
            if (!grown) {
                close(fd);
                return -2;
            }
            snap->environ_buf = grown;
            snap->environ_capacity = cap;
        }
        ssize_t n = read(fd, snap->environ_buf + len, snap->environ_capacity - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            close(fd);
            return -1;
        }
        if (n == 0) {
            close(fd);
            return (ssize_t)len;
        }
        len += (size_t)n;
    }
    close(fd);
    /* Cut at the cap: the last entry may be a prefix of a longer one, and a
     * prefix must never match. */
    const char *buf = snap->environ_buf;
    while (len > 0 && buf[len - 1] != '\0') len--;
    return (ssize_t)len;
}

/* Appends a copy of entry, growing the snapshot. Returns 0, or -1 when out
 * of memory (the snapshot is unchanged). */
static int push_entry(proc_snapshot *snap, const proc_entry *entry) {
    if (snap->count == snap->capacity) {
        size_t cap = snap->capacity ? snap->capacity * 2 : 256;
        proc_entry *grown = realloc(snap->entries, cap * sizeof *grown);
        if (!grown) return -1;
        snap->entries = grown;
        snap->capacity = cap;
    }
    snap->entries[snap->count++] = *entry;
    return 0;
}

/* qsort order of proc_entry: ascending PID. */
static int by_pid(const void *a, const void *b) {
    pid_t x = ((const proc_entry *)a)->key.pid, y = ((const proc_entry *)b)->key.pid;
    return (x > y) - (x < y);
}

/* Returns the PID a /proc directory name stands for, or 0 for any other name. */
static pid_t pid_of_name(const char *name) {
    long pid = 0;
    if (*name == '\0') return 0;
    for (const char *c = name; *c; c++) {
        if (*c < '0' || *c > '9' || pid > 100000000) return 0;
        pid = pid * 10 + (*c - '0');
    }
    return (pid_t)pid;
}

/*
 * Reads one process into *out. Returns 1 when it belongs to uid (any owner
 * for PROC_ANY_UID) and was
 * read, 0 when it is to be left out, -1 when out of memory. The files are
 * opened through the process's directory: if the process exits and its PID
 * is reused meanwhile, the reads fail instead of reading the newcomer.
 */
static int read_process(proc_snapshot *snap, int proc_fd, const char *name, pid_t pid, uid_t uid,
                        const char *entry, size_t entry_len, proc_entry *out) {
    int dir_fd = openat(proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return 0;
    struct stat owner;
    proc_stat stat;
    int result = 0;
    if (fstat(dir_fd, &owner) == 0 && (uid == PROC_ANY_UID || owner.st_uid == uid) && read_stat_at(dir_fd, &stat) == 0 &&
        stat.pid == pid) {
        ssize_t environ_len = proc_stat_exited(&stat) ? -1 : read_environ_at(snap, dir_fd);
        if (environ_len == -2) {
            result = -1;
        } else {
            out->key.pid = pid;
            out->key.start_ticks = stat.start_ticks;
            out->ppid = stat.ppid;
            out->exited = proc_stat_exited(&stat);
            out->marked = environ_len > 0 &&
                          environ_has_entry(snap->environ_buf, (size_t)environ_len, entry, entry_len);
            result = 1;
        }
    }
    close(dir_fd);
    return result;
}

int proc_snapshot_take(proc_snapshot *snap, const char *proc_dir, uid_t uid, const char *entry,
                       size_t entry_len) {
    snap->count = 0;
    int proc_fd = open(proc_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc_fd < 0) return -1;
    DIR *dir = fdopendir(proc_fd);
    if (!dir) {
        int saved = errno;
        close(proc_fd);
        errno = saved;
        return -1;
    }
    int result = 0;
    struct dirent *item;
    errno = 0;
    while ((item = readdir(dir)) != NULL) {
        pid_t pid = pid_of_name(item->d_name);
        if (pid <= 0) continue;
        proc_entry found;
        int read = read_process(snap, proc_fd, item->d_name, pid, uid, entry, entry_len, &found);
        if (read < 0 || (read == 1 && push_entry(snap, &found) != 0)) {
            result = -1;
            errno = ENOMEM;
            break;
        }
        errno = 0;
    }
    if (result == 0 && errno != 0) result = -1; /* readdir failed */
    int saved = errno;
    closedir(dir);
    errno = saved;
    if (result == 0) qsort(snap->entries, snap->count, sizeof *snap->entries, by_pid);
    return result;
}

void proc_snapshot_free(proc_snapshot *snap) {
    free(snap->entries);
    free(snap->environ_buf);
    memset(snap, 0, sizeof *snap);
}

int proc_read_stat(const char *proc_dir, pid_t pid, proc_stat *out) {
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%d", proc_dir, (int)pid);
    if (n < 0 || (size_t)n >= sizeof path) return -1;
    int dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return -1;
    int result = read_stat_at(dir_fd, out);
    close(dir_fd);
    return result == 0 && out->pid == pid ? 0 : -1;
}

size_t proc_ancestors(const char *proc_dir, pid_t pid, proc_key *keys, size_t max_keys) {
    size_t count = 0;
    while (pid > 0 && count < max_keys) {
        proc_stat stat;
        if (proc_read_stat(proc_dir, pid, &stat) != 0) break;
        keys[count].pid = pid;
        keys[count].start_ticks = stat.start_ticks;
        count++;
        if (stat.ppid == pid) break; /* a malformed fake tree; /proc never says so */
        pid = stat.ppid;
    }
    return count;
}
