/* cookie_jar.c - see cookie_jar.h. */
#include "cookie_jar.h"

#include <string.h>
#include <strings.h>

void cookie_jar_init(cookie_jar *jar) { memset(jar, 0, sizeof(*jar)); }

static void rebuild_header(cookie_jar *jar) {
    jar->header_len = 0;
    if (jar->count == 0) return;
    char *h = jar->header;
    size_t n = 0;
    memcpy(h, "Cookie: ", 8);
    n = 8;
    for (int i = 0; i < jar->count; i++) {
        if (i) { memcpy(h + n, "; ", 2); n += 2; }
        memcpy(h + n, jar->text + jar->offset[i], jar->pair_len[i]);
        n += jar->pair_len[i];
    }
    memcpy(h + n, "\r\n", 2);
    jar->header_len = n + 2;
}

static int attribute_deletes(const char *attrs, size_t len) {
    /* Max-Age=0 (or negative) asks the client to forget the cookie. */
    for (size_t i = 0; i + 8 <= len; i++) {
        if (strncasecmp(attrs + i, "max-age=", 8) == 0) {
            const char *v = attrs + i + 8;
            size_t rest = len - i - 8;
            if (rest > 0 && v[0] == '-') return 1;
            size_t digits = 0;
            while (digits < rest && v[digits] == '0') digits++;
            return digits > 0 && (digits == rest || v[digits] < '0' || v[digits] > '9');
        }
    }
    return 0;
}

/* Removes cookie i's text from the packed buffer, closing the gap; its
 * entry stays (the caller reuses or removes it). */
static void cut_text(cookie_jar *jar, int i) {
    size_t start = jar->offset[i], len = jar->pair_len[i];
    memmove(jar->text + start, jar->text + start + len, jar->used - start - len);
    jar->used -= len;
    for (int k = 0; k < jar->count; k++)
        if (jar->offset[k] > start) jar->offset[k] -= len;
    jar->pair_len[i] = 0;
}

void cookie_jar_set(cookie_jar *jar, const char *value, size_t value_len) {
    const char *semi = memchr(value, ';', value_len);
    size_t pair_len = semi ? (size_t)(semi - value) : value_len;
    while (pair_len && (value[pair_len - 1] == ' ' || value[pair_len - 1] == '\t')) pair_len--;
    const char *eq = memchr(value, '=', pair_len);
    if (!eq || eq == value) return; /* not name=value: ignore */
    size_t name_len = (size_t)(eq - value);
    int deletes = eq + 1 == value + pair_len ||
                  (semi && attribute_deletes(semi, value_len - (size_t)(semi - value)));
    int found = -1;
    for (int i = 0; i < jar->count; i++)
        if (jar->name_len[i] == name_len && memcmp(jar->text + jar->offset[i], value, name_len) == 0) found = i;
    if (deletes) {
        if (found >= 0) {
            cut_text(jar, found);
            for (int i = found; i + 1 < jar->count; i++) {
                jar->offset[i] = jar->offset[i + 1];
                jar->pair_len[i] = jar->pair_len[i + 1];
                jar->name_len[i] = jar->name_len[i + 1];
            }
            jar->count--;
            rebuild_header(jar);
        }
        return;
    }
    /* Too large, too many, or no room left: dropped and counted, and the
     * jar (including an older value of the same cookie) stays as it was. */
    size_t freed = found >= 0 ? jar->pair_len[found] : 0;
    if (pair_len > COOKIE_PAIR_MAX_BYTES || jar->used - freed + pair_len > COOKIE_JAR_BYTES ||
        (found < 0 && jar->count >= COOKIE_JAR_MAX)) {
        jar->dropped++;
        return;
    }
    if (found >= 0) cut_text(jar, found);
    else found = jar->count++;
    memcpy(jar->text + jar->used, value, pair_len);
    jar->offset[found] = jar->used;
    jar->used += pair_len;
    jar->pair_len[found] = pair_len;
    jar->name_len[found] = name_len;
    rebuild_header(jar);
}
