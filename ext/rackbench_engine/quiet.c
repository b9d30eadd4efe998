/*
 * quiet.c - the server-asleep gate of a fixed-count window (quiet.h).
 */
#include "quiet.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void quiet_init(quiet_gate *g, const char *path, const char *proc_dir) {
    memset(g, 0, sizeof(*g));
    g->path = path;
    g->proc_dir = proc_dir ? proc_dir : "/proc";
}

/* One line of FILE: a pid, or -1. */
static int parse_pid(const char *line) {
    char *end;
    errno = 0;
    long pid = strtol(line, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\r') end++;
    if (errno || end == line || *end || pid <= 0 || pid > 0x3fffffff) return -1;
    return (int)pid;
}

int quiet_load(quiet_gate *g) {
    g->loaded = 1;
    FILE *f = fopen(g->path, "r");
    if (!f) {
        snprintf(g->error, sizeof(g->error), "cannot read --quiet-pids %s: %s", g->path, strerror(errno));
        return -1;
    }
    char line[64];
    int rc = 0;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[strspn(line, " \t\r")] == '\0') continue;
        int pid = parse_pid(line);
        if (pid < 0) {
            snprintf(g->error, sizeof(g->error), "--quiet-pids %s: '%.32s' is not a pid", g->path, line);
            rc = -1;
            break;
        }
        if (g->pid_count == QUIET_MAX_PIDS) {
            snprintf(g->error, sizeof(g->error), "--quiet-pids %s: more than %d pids", g->path, QUIET_MAX_PIDS);
            rc = -1;
            break;
        }
        g->pids[g->pid_count++] = pid;
    }
    fclose(f);
    if (rc) g->pid_count = 0;
    return rc;
}

char quiet_stat_state(const char *stat_text) {
    const char *paren = strrchr(stat_text, ')');
    if (!paren || paren[1] != ' ' || paren[2] == '\0') return 0;
    return paren[2];
}

/* Whether the thread whose stat file is path sleeps: S (interruptible
 * sleep) or I (idle); gone, a zombie or dead counts as asleep; R, D, a
 * stopped or traced thread does not. */
static int thread_asleep(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    char text[1024];
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0) return 1;
    text[n] = '\0';
    char state = quiet_stat_state(text);
    return state == 'S' || state == 'I' || state == 'Z' || state == 'X' || state == 0;
}

static int process_asleep(const quiet_gate *g, int pid) {
    char dir_path[256];
    snprintf(dir_path, sizeof(dir_path), "%s/%d/task", g->proc_dir, pid);
    DIR *dir = opendir(dir_path);
    if (!dir) return 1; /* gone */
    int asleep = 1;
    struct dirent *e;
    while (asleep && (e = readdir(dir)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char stat_path[sizeof(dir_path) + sizeof(e->d_name) + 8];
        snprintf(stat_path, sizeof(stat_path), "%s/%s/stat", dir_path, e->d_name);
        asleep = thread_asleep(stat_path);
    }
    closedir(dir);
    return asleep;
}

int quiet_asleep(quiet_gate *g) {
    if (!g->loaded) quiet_load(g);
    g->checks++;
    for (int i = 0; i < g->pid_count; i++) {
        if (!process_asleep(g, g->pids[i])) {
            g->waits++;
            return 0;
        }
    }
    return 1;
}
