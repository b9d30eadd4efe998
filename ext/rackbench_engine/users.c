/* users.c - see users.h. */
#include "users.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t size) {
    void *q = realloc(p, size ? size : 1);
    if (!q) { perror("rackbench-engine: out of memory"); exit(1); }
    return q;
}

static const char *fail(char *err, size_t err_len, const char *file, size_t line, const char *msg) {
    snprintf(err, err_len, "%s:%zu: %s", file, line, msg);
    return err;
}

/* One field at text[*i]: its unquoted value copied into a new string.
 * Advances *i past it (to the comma, the line end, or len); *line counts
 * the line breaks inside quotes. NULL with err set on a bad quote. */
static char *read_field(const char *text, size_t len, size_t *i, size_t *line, size_t *out_len, int *bad) {
    size_t cap = 32, n = 0;
    char *v = xrealloc(NULL, cap);
    int quoted = *i < len && text[*i] == '"';
    if (quoted) (*i)++;
    for (;;) {
        if (*i >= len) {
            if (quoted) { *bad = 1; free(v); return NULL; }
            break;
        }
        char c = text[*i];
        if (quoted) {
            if (c == '"') {
                if (*i + 1 < len && text[*i + 1] == '"') { *i += 2; c = '"'; }
                else {
                    (*i)++;
                    /* After the closing quote: a comma or a line end only. */
                    if (*i < len && text[*i] != ',' && text[*i] != '\n' && text[*i] != '\r') {
                        *bad = 1;
                        free(v);
                        return NULL;
                    }
                    break;
                }
            } else {
                if (c == '\n') (*line)++;
                (*i)++;
            }
        } else {
            if (c == ',' || c == '\n' || c == '\r') break;
            if (c == '"') { *bad = 1; free(v); return NULL; }
            (*i)++;
        }
        if (n + 2 > cap) { cap *= 2; v = xrealloc(v, cap); }
        v[n++] = c;
    }
    v[n] = '\0';
    *out_len = n;
    return v;
}

static int valid_column(const char *s) {
    if (!*s || strlen(s) > 20) return 0; /* "user." + 20 fits a variable name */
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

const char *users_parse(user_table *t, const char *text, size_t len, const char *file, size_t max_value_bytes,
                        char *err, size_t err_len) {
    memset(t, 0, sizeof(*t));
    size_t i = 0, line = 1, cap_cells = 0;
    int header = 1;
    char msg[160];
    while (i < len) {
        /* A blank line (or a CR LF alone) is skipped. */
        if (text[i] == '\n' || text[i] == '\r') {
            if (text[i] == '\n') line++;
            i++;
            continue;
        }
        size_t row_line = line;
        char *fields[USERS_MAX_COLUMNS];
        size_t lens[USERS_MAX_COLUMNS];
        int count = 0;
        for (;;) {
            int bad = 0;
            size_t n = 0;
            char *v = read_field(text, len, &i, &line, &n, &bad);
            if (bad) {
                for (int k = 0; k < count; k++) free(fields[k]);
                users_free(t);
                return fail(err, err_len, file, row_line, "malformed quotes (a quoted field ends with \" and a comma or the line's end; \"\" is a quote)");
            }
            if (count >= USERS_MAX_COLUMNS || n > max_value_bytes || memchr(v, '\0', n)) {
                int too_many = count >= USERS_MAX_COLUMNS;
                free(v);
                for (int k = 0; k < count; k++) free(fields[k]);
                users_free(t);
                if (too_many) snprintf(msg, sizeof(msg), "more than %d columns", USERS_MAX_COLUMNS);
                else snprintf(msg, sizeof(msg), "a value longer than %zu bytes, or with a NUL byte", max_value_bytes);
                return fail(err, err_len, file, row_line, msg);
            }
            fields[count] = v;
            lens[count++] = n;
            if (i < len && text[i] == ',') { i++; continue; }
            break;
        }
        if (i < len && text[i] == '\r') i++;
        if (i < len && text[i] == '\n') { i++; line++; }
        if (header) {
            for (int k = 0; k < count; k++) {
                if (!valid_column(fields[k]) || users_column(t, fields[k], lens[k]) >= 0) {
                    snprintf(msg, sizeof(msg), "column name '%.40s' must be letters, digits and _ (at most 20), each once",
                             fields[k]);
                    for (int m = k; m < count; m++) free(fields[m]);
                    users_free(t);
                    return fail(err, err_len, file, row_line, msg);
                }
                t->columns[t->column_count++] = fields[k];
            }
            header = 0;
            continue;
        }
        if (count != t->column_count) {
            for (int k = 0; k < count; k++) free(fields[k]);
            snprintf(msg, sizeof(msg), "%d fields where the first line names %d columns", count, t->column_count);
            users_free(t);
            return fail(err, err_len, file, row_line, msg);
        }
        if (t->row_count >= USERS_MAX_ROWS) {
            for (int k = 0; k < count; k++) free(fields[k]);
            users_free(t);
            snprintf(msg, sizeof(msg), "more than %d users", USERS_MAX_ROWS);
            return fail(err, err_len, file, row_line, msg);
        }
        size_t need = (t->row_count + 1) * (size_t)t->column_count;
        if (need > cap_cells) {
            cap_cells = cap_cells ? cap_cells * 2 : 64;
            while (cap_cells < need) cap_cells *= 2;
            t->cells = xrealloc(t->cells, cap_cells * sizeof(char *));
            t->cell_lens = xrealloc(t->cell_lens, cap_cells * sizeof(size_t));
        }
        for (int k = 0; k < count; k++) {
            t->cells[t->row_count * (size_t)t->column_count + (size_t)k] = fields[k];
            t->cell_lens[t->row_count * (size_t)t->column_count + (size_t)k] = lens[k];
        }
        t->row_count++;
    }
    if (header) { users_free(t); return fail(err, err_len, file, line, "empty: the first line names the columns"); }
    if (t->row_count == 0) { users_free(t); return fail(err, err_len, file, line, "no users after the line of column names"); }
    return NULL;
}

const char *users_load(user_table *t, const char *path, size_t max_value_bytes, char *err, size_t err_len) {
    memset(t, 0, sizeof(*t));
    FILE *f = fopen(path, "rb");
    if (!f) { snprintf(err, err_len, "cannot open @users file %s: %s", path, strerror(errno)); return err; }
    char *data = NULL;
    size_t len = 0, cap = 0;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (len + n > USERS_MAX_FILE_BYTES) {
            fclose(f);
            free(data);
            snprintf(err, err_len, "@users file %s is larger than 64 MB", path);
            return err;
        }
        if (len + n > cap) { cap = (len + n) * 2; data = xrealloc(data, cap); }
        memcpy(data + len, chunk, n);
        len += n;
    }
    int failed = ferror(f);
    fclose(f);
    if (failed) { free(data); snprintf(err, err_len, "cannot read @users file %s", path); return err; }
    const char *r = users_parse(t, data ? data : "", len, path, max_value_bytes, err, err_len);
    free(data);
    if (!r) t->file = strdup(path);
    return r;
}

int users_column(const user_table *t, const char *name, size_t name_len) {
    for (int k = 0; k < t->column_count; k++)
        if (strlen(t->columns[k]) == name_len && memcmp(t->columns[k], name, name_len) == 0) return k;
    return -1;
}

void users_free(user_table *t) {
    for (int k = 0; k < t->column_count; k++) free(t->columns[k]);
    for (size_t c = 0; c < t->row_count * (size_t)t->column_count; c++) free(t->cells[c]);
    free(t->cells);
    free(t->cell_lens);
    free(t->file);
    memset(t, 0, sizeof(*t));
}
