/*
 * test_guard_proc_scan.c - rackbench-guard's /proc reader, pointed at a
 * fake /proc tree in a temporary directory (PID directories holding stat
 * and environ files), then at the real /proc for this very process.
 */
#include "check.h"
#include "proc_scan.h"
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char MARKER[] = "RACKBENCH_RESULTS_DIR=/r";
static char root[] = "/tmp/rackbench-proc-XXXXXX";

static void write_file(const char *dir, const char *name, const char *bytes, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", root, dir, name);
    FILE *file = fopen(path, "wb");
    if (!file || (len > 0 && fwrite(bytes, 1, len, file) != len) || fclose(file) != 0) {
        perror(path);
        exit(2);
    }
}

static void make_dir(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, dir);
    if (mkdir(path, 0700) != 0) {
        perror(path);
        exit(2);
    }
}

/* A fake process: dir is its name under root, stat_pid what its stat line
 * says (they differ for a directory whose process was replaced). A NULL
 * environ leaves the file out (unreadable). */
static void fake_process(const char *dir, int stat_pid, char state, int ppid, unsigned long long start_ticks,
                         const char *environ, size_t environ_len)
{
    char line[256];
    int n = snprintf(line, sizeof line, "%d (fake %s) %c %d %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n",
                     stat_pid, dir, state, ppid, stat_pid, stat_pid, start_ticks);
    make_dir(dir);
    write_file(dir, "stat", line, (size_t)n);
    if (environ) write_file(dir, "environ", environ, environ_len);
}

#define ENV(literal) literal, sizeof(literal) - 1

static void build_tree(void)
{
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        exit(2);
    }
    fake_process("1", 1, 'S', 0, 1, ENV("HOME=/\0"));
    fake_process("10", 10, 'S', 1, 1000, ENV("A=1\0RACKBENCH_RESULTS_DIR=/r\0"));
    fake_process("11", 11, 'S', 10, 1100, ENV("A=1\0"));
    fake_process("12", 12, 'Z', 10, 1200, ENV(""));
    fake_process("5", 5, 'S', 11, 500, NULL, 0);
    fake_process("200", 200, 'R', 1, 20000, ENV("RACKBENCH_RESULTS_DIR=/r2\0"));
    fake_process("300", 300, 'S', 1, 30000, ENV("RACKBENCH_RESULTS_DIR=/r"));
    fake_process("99", 98, 'S', 1, 9900, ENV("RACKBENCH_RESULTS_DIR=/r\0")); /* stat says another PID */
    make_dir("13");
    write_file("13", "stat", ENV("13 (broken"));
    make_dir("self");
    make_dir("1a");
    write_file(".", "uptime", ENV("1.0 1.0\n"));
    /* An environment larger than the reader's first buffer, marker last. */
    static char big[100 * 1024];
    memset(big, 'x', sizeof big);
    for (size_t i = 1000; i < sizeof big; i += 1000) big[i] = '\0';
    size_t tail = sizeof big - sizeof MARKER;
    big[tail - 1] = '\0';
    memcpy(big + tail, MARKER, sizeof MARKER); /* with its NUL */
    fake_process("400", 400, 'S', 1, 40000, big, sizeof big);
}

static void remove_tree(void)
{
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    if (system(command) != 0) fprintf(stderr, "could not remove %s\n", root);
}

static const proc_entry *find(const proc_snapshot *snap, pid_t pid)
{
    for (size_t i = 0; i < snap->count; i++) {
        if (snap->entries[i].key.pid == pid) return &snap->entries[i];
    }
    return NULL;
}

static void test_snapshot(void)
{
    proc_snapshot snap = PROC_SNAPSHOT_INIT;
    /* Twice: the second take reuses the buffers and must give the same. */
    for (int round = 0; round < 2; round++) {
        CHECK(proc_snapshot_take(&snap, root, geteuid(), MARKER, strlen(MARKER)) == 0);
        CHECK_EQ_U64(snap.count, 8); /* 1 5 10 11 12 200 300 400; not 13, 99, self, 1a */
        for (size_t i = 1; i < snap.count; i++) CHECK(snap.entries[i - 1].key.pid < snap.entries[i].key.pid);
        const proc_entry *e = find(&snap, 10);
        CHECK(e && e->marked && !e->exited && e->ppid == 1 && e->key.start_ticks == 1000);
        e = find(&snap, 11);
        CHECK(e && !e->marked && e->ppid == 10 && e->key.start_ticks == 1100);
        e = find(&snap, 12);
        CHECK(e && e->exited && !e->marked);
        e = find(&snap, 5);
        CHECK(e && !e->marked && e->ppid == 11); /* no environ: kept, unmarked */
        e = find(&snap, 200);
        CHECK(e && !e->marked);
        e = find(&snap, 300);
        CHECK(e && e->marked); /* no trailing NUL */
        e = find(&snap, 400);
        CHECK(e && e->marked);
        CHECK(find(&snap, 13) == NULL);
        CHECK(find(&snap, 99) == NULL);
        CHECK(find(&snap, 98) == NULL);
    }
    /* Another user's processes are left out. */
    CHECK(proc_snapshot_take(&snap, root, geteuid() + 1, MARKER, strlen(MARKER)) == 0);
    CHECK_EQ_U64(snap.count, 0);
    /* Every owner's with PROC_ANY_UID (root's sweep: the services it runs
     * under their own accounts), marked the same way. */
    CHECK(proc_snapshot_take(&snap, root, PROC_ANY_UID, MARKER, strlen(MARKER)) == 0);
    CHECK_EQ_U64(snap.count, 8);
    CHECK(find(&snap, 10) && find(&snap, 10)->marked);
    proc_snapshot_free(&snap);
    CHECK(snap.entries == NULL && snap.environ_buf == NULL && snap.count == 0);
}

/* Root sweeps every owner's processes; anyone else only their own. */
static void test_sweep_owner(void)
{
    CHECK(sweep_owner(0) == PROC_ANY_UID);
    CHECK(sweep_owner(1000) == 1000);
}

static void test_missing_dir(void)
{
    proc_snapshot snap = PROC_SNAPSHOT_INIT;
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none", root);
    errno = 0;
    CHECK(proc_snapshot_take(&snap, missing, geteuid(), MARKER, strlen(MARKER)) == -1);
    CHECK(errno == ENOENT);
    proc_snapshot_free(&snap);
}

static void test_read_stat_and_ancestors(void)
{
    proc_stat st;
    CHECK(proc_read_stat(root, 11, &st) == 0);
    CHECK_EQ_U64(st.ppid, 10);
    CHECK(proc_read_stat(root, 77, &st) == -1); /* no such process */
    CHECK(proc_read_stat(root, 13, &st) == -1); /* malformed */
    CHECK(proc_read_stat(root, 99, &st) == -1); /* its line names another PID */

    proc_key keys[8];
    size_t n = proc_ancestors(root, 5, keys, 8);
    CHECK_EQ_U64(n, 4); /* 5 -> 11 -> 10 -> 1 */
    if (n == 4) {
        CHECK(keys[0].pid == 5 && keys[0].start_ticks == 500);
        CHECK(keys[1].pid == 11 && keys[1].start_ticks == 1100);
        CHECK(keys[2].pid == 10 && keys[2].start_ticks == 1000);
        CHECK(keys[3].pid == 1 && keys[3].start_ticks == 1);
    }
    CHECK_EQ_U64(proc_ancestors(root, 5, keys, 2), 2);
    CHECK_EQ_U64(proc_ancestors(root, 77, keys, 8), 0);
}

/* The real /proc: this process is found, marked by an entry of its own
 * initial environment and not by a look-alike of it. */
static void test_real_proc(void)
{
    char env[4096];
    int fd = open("/proc/self/environ", O_RDONLY);
    ssize_t len = fd >= 0 ? read(fd, env, sizeof env - 1) : -1;
    if (fd >= 0) close(fd);
    CHECK(len > 0);
    if (len <= 0) return;
    env[len] = '\0';
    const char *first = env; /* the first entry, NUL-terminated */
    char look_alike[4200];
    snprintf(look_alike, sizeof look_alike, "%sX", first);

    proc_snapshot snap = PROC_SNAPSHOT_INIT;
    CHECK(proc_snapshot_take(&snap, "/proc", geteuid(), first, strlen(first)) == 0);
    const proc_entry *self = find(&snap, getpid());
    CHECK(self && self->marked && !self->exited && self->ppid == getppid());
    CHECK(proc_snapshot_take(&snap, "/proc", geteuid(), look_alike, strlen(look_alike)) == 0);
    self = find(&snap, getpid());
    CHECK(self && !self->marked);
    proc_snapshot_free(&snap);

    proc_key keys[64];
    size_t n = proc_ancestors("/proc", getpid(), keys, 64);
    CHECK(n >= 2);
    if (n >= 2) {
        CHECK(keys[0].pid == getpid());
        CHECK(keys[1].pid == getppid());
    }
}

int main(void)
{
    build_tree();
    test_snapshot();
    test_sweep_owner();
    test_missing_dir();
    test_read_stat_and_ancestors();
    test_real_proc();
    remove_tree();
    return check_report("guard proc_scan");
}
