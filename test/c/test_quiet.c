/*
 * test_quiet.c - the server-asleep gate of --quiet-pids (quiet.h), against
 * a /proc tree of the test's own: the pids file (good, missing, garbage,
 * too long), a thread's state read after the last ')' of a command name
 * with spaces and parentheses, and every combination of asleep, running,
 * gone and zombie threads and processes, with the checks and waits
 * counted.
 */
#include "check.h"
#include "quiet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* root/PID/task/TID/stat with the given command and state. */
static void thread_stat(int pid, int tid, const char *comm, char state) {
    char path[512];
    snprintf(path, sizeof path, "%s/%d", root, pid);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%d/task", root, pid);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%d/task/%d", root, pid, tid);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%d/task/%d/stat", root, pid, tid);
    char text[256];
    snprintf(text, sizeof text, "%d (%s) %c 1 %d %d 0 -1 4194560 0 0 0 0\n", tid, comm, state, pid, pid);
    write_file(path, text);
}

static void pids_file(const char *name, const char *text, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s", root, name);
    write_file(out, text);
}

static void test_state(void) {
    CHECK(quiet_stat_state("12 (ruby) S 1 2 3") == 'S');
    CHECK(quiet_stat_state("12 (puma srv tp 001) R 1 2 3") == 'R');
    CHECK(quiet_stat_state("12 (a) b) (c)) D 1") == 'D');
    CHECK(quiet_stat_state("12 (ruby)") == 0);
    CHECK(quiet_stat_state("no parenthesis") == 0);
    CHECK(quiet_stat_state("") == 0);
}

static void test_load(void) {
    char path[512];
    quiet_gate g;

    pids_file("good", "101\n\n  202 \n", path, sizeof path);
    quiet_init(&g, path, root);
    CHECK(quiet_enabled(&g));
    CHECK(quiet_load(&g) == 0);
    CHECK_EQ_U64(g.pid_count, 2);
    CHECK_EQ_U64(g.pids[0], 101);
    CHECK_EQ_U64(g.pids[1], 202);
    CHECK(g.error[0] == '\0');

    pids_file("garbage", "101\nputa\n", path, sizeof path);
    quiet_init(&g, path, root);
    CHECK(quiet_load(&g) == -1);
    CHECK_EQ_U64(g.pid_count, 0);
    CHECK(strstr(g.error, "is not a pid") != NULL);

    pids_file("negative", "-5\n", path, sizeof path);
    quiet_init(&g, path, root);
    CHECK(quiet_load(&g) == -1);

    char many[QUIET_MAX_PIDS * 8 + 16] = "";
    for (int i = 0; i <= QUIET_MAX_PIDS; i++) {
        char line[16];
        snprintf(line, sizeof line, "%d\n", 1000 + i);
        strcat(many, line);
    }
    pids_file("many", many, path, sizeof path);
    quiet_init(&g, path, root);
    CHECK(quiet_load(&g) == -1);
    CHECK(strstr(g.error, "more than") != NULL);

    snprintf(path, sizeof path, "%s/missing", root);
    quiet_init(&g, path, root);
    CHECK(quiet_load(&g) == -1);
    CHECK(strstr(g.error, "cannot read") != NULL);
    /* A gate whose file could not be read lets requests through: the
     * report carries the error. */
    CHECK(quiet_asleep(&g) == 1);

    quiet_init(&g, NULL, root);
    CHECK(!quiet_enabled(&g));
}

static void test_asleep(void) {
    char path[512];
    quiet_gate g;
    thread_stat(101, 101, "ruby", 'S');
    thread_stat(101, 102, "puma srv tp 001", 'S');
    thread_stat(101, 103, "puma reactor", 'I');
    thread_stat(202, 202, "ruby (worker)", 'S');
    pids_file("tree", "101\n202\n303\n", path, sizeof path); /* 303 is gone */
    quiet_init(&g, path, root);
    CHECK(quiet_asleep(&g) == 1);
    CHECK_EQ_U64(g.checks, 1);
    CHECK_EQ_U64(g.waits, 0);

    thread_stat(101, 102, "puma srv tp 001", 'R');
    CHECK(quiet_asleep(&g) == 0);
    CHECK_EQ_U64(g.checks, 2);
    CHECK_EQ_U64(g.waits, 1);

    thread_stat(101, 102, "puma srv tp 001", 'S');
    thread_stat(202, 202, "ruby (worker)", 'D');
    CHECK(quiet_asleep(&g) == 0);

    thread_stat(202, 202, "ruby (worker)", 't'); /* stopped by a tracer (vgdb) */
    CHECK(quiet_asleep(&g) == 0);

    thread_stat(202, 202, "ruby (worker)", 'Z');
    CHECK(quiet_asleep(&g) == 1);
    CHECK_EQ_U64(g.checks, 5);
    CHECK_EQ_U64(g.waits, 3);
}

int main(void) {
    char tmpl[] = "/tmp/rackbench-quiet-XXXXXX";
    if (!mkdtemp(tmpl)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(root, sizeof root, "%s", tmpl);
    test_state();
    test_load();
    test_asleep();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
    return check_report("quiet");
}
