/* watch.c - see watch.h. */
#include "watch.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

void watch_ignore_terminal_signals(void) {
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
}

int watch_wait_for_eof(int fd) {
    char discarded[256];
    for (;;) {
        ssize_t n = read(fd, discarded, sizeof discarded);
        if (n == 0) return 0;
        if (n < 0 && errno != EINTR) return -1;
    }
}
