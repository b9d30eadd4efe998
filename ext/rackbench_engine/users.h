/*
 * users.h - the users of a request list's "@users FILE" (doc/requests.md,
 * "Many users"): a CSV file whose first line names the columns, one user
 * per following line. Connection slot n takes user n mod the count, so
 * every slot logs in as its own user while there are enough of them, and
 * the same slot is the same user run after run.
 *
 * The format is RFC 4180's: fields separated by commas, a field in double
 * quotes may hold commas, line breaks and "" for a quote; LF or CRLF line
 * ends; a final line break is optional; blank lines are skipped. Read once
 * before the run; nothing here runs on the request path.
 */
#ifndef RB_USERS_H
#define RB_USERS_H

#include <stddef.h>

#define USERS_MAX_COLUMNS 8        /* columns of a users file */
#define USERS_MAX_ROWS 1000000     /* users in a file */
#define USERS_MAX_FILE_BYTES (64u << 20)

typedef struct {
    char *file;                    /* the path as resolved */
    int column_count;
    char *columns[USERS_MAX_COLUMNS]; /* names: letters, digits and _ */
    size_t row_count;
    char **cells;                  /* row-major: cells[row * column_count + column] */
    size_t *cell_lens;
} user_table;

/* Parses CSV text (len bytes) into t, whose cells are copies (t owns
 * them). Values longer than max_value_bytes are refused. Returns NULL, or
 * an error written into err: "users.csv:3: ..." (file names the text). */
const char *users_parse(user_table *t, const char *text, size_t len, const char *file, size_t max_value_bytes,
                        char *err, size_t err_len);

/* Reads and parses path. Same returns as users_parse. */
const char *users_load(user_table *t, const char *path, size_t max_value_bytes, char *err, size_t err_len);

/* The column's index, or -1. */
int users_column(const user_table *t, const char *name, size_t name_len);

void users_free(user_table *t);

#endif
