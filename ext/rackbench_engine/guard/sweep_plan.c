/* sweep_plan.c - see sweep_plan.h. */
#include "sweep_plan.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* 1 when a and b name the same process (PID and start time). */
static int same_key(proc_key a, proc_key b) { return a.pid == b.pid && a.start_ticks == b.start_ticks; }

/* The index of pid among the count entries (sorted by PID), or -1. */
static long find_pid(const proc_entry *entries, size_t count, pid_t pid) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (entries[mid].key.pid == pid) return (long)mid;
        if (entries[mid].key.pid < pid) low = mid + 1;
        else high = mid;
    }
    return -1;
}

/* 1 when key is one of the protected_count keys. */
static int is_protected(proc_key key, const proc_key *protected_keys, size_t protected_count) {
    for (size_t i = 0; i < protected_count; i++) {
        if (same_key(key, protected_keys[i])) return 1;
    }
    return 0;
}

enum { UNKNOWN = 0, CHOSEN = 1, LEFT = 2, VISITING = 3 };

long sweep_select(const proc_entry *entries, size_t count, const proc_key *protected_keys,
                  size_t protected_count, unsigned char *selected) {
    if (count == 0) return 0;
    unsigned char *state = calloc(count, 1);
    size_t *path = malloc(count * sizeof *path);
    if (!state || !path) {
        free(state);
        free(path);
        return -1;
    }
    long chosen = 0;
    for (size_t i = 0; i < count; i++) {
        /* Walk up the parent links until a process whose answer is known
         * or decided by itself; every process on the way shares it. */
        size_t depth = 0;
        size_t j = i;
        while (state[j] == UNKNOWN) {
            const proc_entry *entry = &entries[j];
            if (entry->exited || entry->key.pid <= 1 ||
                is_protected(entry->key, protected_keys, protected_count)) {
                state[j] = LEFT;
                break;
            }
            if (entry->marked) {
                state[j] = CHOSEN;
                break;
            }
            long parent = find_pid(entries, count, entry->ppid);
            if (parent < 0) {
                state[j] = LEFT;
                break;
            }
            state[j] = VISITING;
            path[depth++] = j;
            j = (size_t)parent;
        }
        /* VISITING here is a loop of parent links, which a scan that is not
         * atomic can show around a reused PID: nobody on it is chosen. */
        unsigned char answer = state[j] == CHOSEN ? CHOSEN : LEFT;
        while (depth > 0) state[path[--depth]] = answer;
    }
    for (size_t i = 0; i < count; i++) {
        selected[i] = state[i] == CHOSEN;
        chosen += selected[i];
    }
    free(state);
    free(path);
    return chosen;
}

/* The index of key in the table, or -1. */
static long find_tracked(const sweep_table *table, proc_key key) {
    for (size_t i = 0; i < table->count; i++) {
        if (same_key(table->tracked[i].key, key)) return (long)i;
    }
    return -1;
}

/* Adds key to the table, no signal delivered, not yet alive. Returns 0, or
 * -1 when out of memory (the table is unchanged). */
static int track(sweep_table *table, proc_key key) {
    if (table->count == table->capacity) {
        size_t cap = table->capacity ? table->capacity * 2 : 16;
        sweep_tracked *grown = realloc(table->tracked, cap * sizeof *grown);
        if (!grown) return -1;
        table->tracked = grown;
        table->capacity = cap;
    }
    sweep_tracked *added = &table->tracked[table->count++];
    memset(added, 0, sizeof *added);
    added->key = key;
    return 0;
}

long sweep_plan_round(sweep_table *table, const proc_entry *entries, size_t count,
                      const unsigned char *selected, sweep_phase phase, const sweep_action **actions) {
    for (size_t i = 0; i < count; i++) {
        if (selected[i] && find_tracked(table, entries[i].key) < 0 && track(table, entries[i].key) != 0) {
            return -1;
        }
    }
    if (table->actions_capacity < table->count) {
        sweep_action *grown = realloc(table->actions, table->capacity * sizeof *grown);
        if (!grown) return -1;
        table->actions = grown;
        table->actions_capacity = table->capacity;
    }
    long planned = 0;
    int signal = phase == SWEEP_PHASE_TERM ? SIGTERM : SIGKILL;
    for (size_t i = 0; i < table->count; i++) {
        sweep_tracked *tracked = &table->tracked[i];
        long at = find_pid(entries, count, tracked->key.pid);
        tracked->alive = at >= 0 && same_key(entries[at].key, tracked->key) && !entries[at].exited;
        if (!tracked->alive) continue;
        int *delivered = phase == SWEEP_PHASE_TERM ? &tracked->termed : &tracked->killed;
        if (*delivered) continue;
        *delivered = 1;
        table->actions[planned].key = tracked->key;
        table->actions[planned].signal = signal;
        planned++;
    }
    *actions = table->actions;
    return planned;
}

void sweep_table_signal_failed(sweep_table *table, const sweep_action *action, int gone) {
    long at = find_tracked(table, action->key);
    if (at < 0) return;
    sweep_tracked *tracked = &table->tracked[at];
    if (action->signal == SIGTERM) tracked->termed = 0;
    else tracked->killed = 0;
    if (gone) tracked->alive = 0;
}

size_t sweep_table_alive(const sweep_table *table) {
    size_t alive = 0;
    for (size_t i = 0; i < table->count; i++) alive += table->tracked[i].alive != 0;
    return alive;
}

sweep_counts sweep_table_counts(const sweep_table *table) {
    sweep_counts counts = {0, 0, 0};
    for (size_t i = 0; i < table->count; i++) {
        counts.termed += table->tracked[i].termed != 0;
        counts.killed += table->tracked[i].killed != 0;
        counts.survivors += table->tracked[i].alive != 0;
    }
    return counts;
}

void sweep_table_free(sweep_table *table) {
    free(table->tracked);
    free(table->actions);
    memset(table, 0, sizeof *table);
}
