/* exec_guard.c - see exec_guard.h. */
#include "exec_guard.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int exec_guard_main(int argc, char **argv) {
    if (argc < 3) {
        fputs("usage: rackbench-guard PARENT_PID COMMAND [ARGS...]\n", stderr);
        return 2;
    }
    char *end;
    long parent = strtol(argv[1], &end, 10);
    if (*end != '\0' || parent <= 0) {
        fprintf(stderr, "rackbench-guard: invalid parent PID '%s'\n", argv[1]);
        return 2;
    }
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
        fprintf(stderr, "rackbench-guard: prctl: %s\n", strerror(errno));
        return 1;
    }
    /* The parent may have died before prctl took effect. */
    if (getppid() != (pid_t)parent) return 1;
    execvp(argv[2], argv + 2);
    fprintf(stderr, "rackbench-guard: cannot run %s: %s\n", argv[2], strerror(errno));
    return 127;
}
