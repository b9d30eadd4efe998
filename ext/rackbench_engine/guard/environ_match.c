/* environ_match.c - see environ_match.h. */
#include "environ_match.h"

#include <string.h>

int environ_has_entry(const char *buf, size_t buf_len, const char *entry, size_t entry_len) {
    if (entry_len == 0) return 0;
    size_t start = 0;
    while (start < buf_len) {
        const char *nul = memchr(buf + start, '\0', buf_len - start);
        size_t end = nul ? (size_t)(nul - buf) : buf_len;
        if (end - start == entry_len && memcmp(buf + start, entry, entry_len) == 0) return 1;
        start = end + 1;
    }
    return 0;
}

int environ_entry_valid(const char *entry) {
    const char *equals = strchr(entry, '=');
    return equals != NULL && equals != entry && equals[1] != '\0';
}
