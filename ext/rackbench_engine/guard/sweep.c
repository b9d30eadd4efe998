/* sweep.c - see sweep.h. */
#include "sweep.h"

#include "proc_scan.h"
#include "proc_signal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC: a deadline must not move when the wall clock does. */
static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(uint64_t duration_ms) {
    struct timespec left = {.tv_sec = (time_t)(duration_ms / 1000u),
                            .tv_nsec = (long)(duration_ms % 1000u) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

/* Delivers the round's actions; tells the table which did not arrive. */
static void deliver(const sweep_options *options, sweep_table *table, const sweep_action *actions,
                    long count) {
    for (long i = 0; i < count; i++) {
        int result = proc_signal(options->proc_dir, actions[i].key, actions[i].signal);
        if (result != PROC_SIGNAL_SENT) {
            sweep_table_signal_failed(table, &actions[i], result == PROC_SIGNAL_GONE);
        }
    }
}

uid_t sweep_owner(uid_t euid) { return euid == 0 ? PROC_ANY_UID : euid; }

int sweep_run(const sweep_options *options, sweep_counts *counts, char *reason, size_t reason_size) {
    proc_snapshot snap = PROC_SNAPSHOT_INIT;
    sweep_table table = SWEEP_TABLE_INIT;
    unsigned char *selected = NULL;
    size_t selected_capacity = 0;
    size_t entry_len = strlen(options->entry);
    uid_t uid = sweep_owner(geteuid());
    sweep_phase phase = SWEEP_PHASE_TERM;
    uint64_t deadline_ms = now_ms() + (uint64_t)options->grace_ms;
    int result = 0;

    for (;;) {
        if (proc_snapshot_take(&snap, options->proc_dir, uid, options->entry, entry_len) != 0) {
            snprintf(reason, reason_size, "cannot read %s: %s", options->proc_dir, strerror(errno));
            result = -1;
            break;
        }
        if (snap.count > selected_capacity) {
            unsigned char *grown = realloc(selected, snap.count);
            if (!grown) {
                snprintf(reason, reason_size, "out of memory");
                result = -1;
                break;
            }
            selected = grown;
            selected_capacity = snap.count;
        }
        const sweep_action *actions = NULL;
        long planned = -1;
        if (sweep_select(snap.entries, snap.count, options->protected_keys, options->protected_count,
                         selected) >= 0) {
            planned = sweep_plan_round(&table, snap.entries, snap.count, selected, phase, &actions);
        }
        if (planned < 0) {
            snprintf(reason, reason_size, "out of memory");
            result = -1;
            break;
        }
        deliver(options, &table, actions, planned);
        if (sweep_table_alive(&table) == 0) break;

        uint64_t now = now_ms();
        if (now >= deadline_ms) {
            if (phase == SWEEP_PHASE_KILL) break;
            /* Grace is over: the next round KILLs, at once. */
            phase = SWEEP_PHASE_KILL;
            deadline_ms = now + (uint64_t)options->kill_wait_ms;
            continue;
        }
        uint64_t wait_ms = deadline_ms - now;
        sleep_ms(wait_ms < (uint64_t)options->poll_interval_ms ? wait_ms : (uint64_t)options->poll_interval_ms);
    }
    *counts = sweep_table_counts(&table);
    free(selected);
    sweep_table_free(&table);
    proc_snapshot_free(&snap);
    return result;
}
