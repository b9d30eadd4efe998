/* url.c - see url.h. */
#include "url.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static int copy_bounded(char *dst, size_t dst_len, const char *src, size_t n) {
    if (n >= dst_len) return -1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

const char *url_parse(engine_config *cfg, const char *url) {
    if (strlen(url) >= sizeof(cfg->url)) return "URL too long";
    strcpy(cfg->url, url);
    /* The scheme: ws:// and wss:// are HTTP's and HTTPS's ports and
     * transports, upgraded to WebSocket (RFC 6455 section 3). */
    size_t scheme_len;
    if (strncmp(url, "https://", 8) == 0) { cfg->tls = 1; cfg->ws = 0; scheme_len = 8; }
    else if (strncmp(url, "http://", 7) == 0) { cfg->tls = 0; cfg->ws = 0; scheme_len = 7; }
    else if (strncmp(url, "wss://", 6) == 0) { cfg->tls = 1; cfg->ws = 1; scheme_len = 6; }
    else if (strncmp(url, "ws://", 5) == 0) { cfg->tls = 0; cfg->ws = 1; scheme_len = 5; }
    else return "URL must start with http://, https://, ws:// or wss://";
    const char *p = url + scheme_len;
    const char *host_end;
    const char *after_host;
    if (*p == '[') {
        host_end = strchr(p, ']');
        if (!host_end) return "malformed IPv6 address in URL";
        if (copy_bounded(cfg->host, sizeof(cfg->host), p + 1, (size_t)(host_end - p - 1)))
            return "host name too long";
        after_host = host_end + 1;
    } else {
        host_end = p + strcspn(p, ":/?#");
        if (copy_bounded(cfg->host, sizeof(cfg->host), p, (size_t)(host_end - p)))
            return "host name too long";
        after_host = host_end;
    }
    if (cfg->host[0] == '\0') return "URL has no host";
    const char *path = after_host;
    if (*after_host == ':') {
        const char *digits = after_host + 1;
        size_t n = strspn(digits, "0123456789");
        if (n == 0 || n > 5) return "malformed port in URL";
        long port = 0;
        for (size_t i = 0; i < n; i++) port = port * 10 + (digits[i] - '0');
        if (port < 1 || port > 65535) return "port out of range 1-65535";
        snprintf(cfg->port, sizeof(cfg->port), "%ld", port);
        path = digits + n;
    } else {
        strcpy(cfg->port, cfg->tls ? "443" : "80");
    }
    if (*path != '\0' && *path != '/' && *path != '?' && *path != '#') return "malformed URL after host";
    size_t fragment = strcspn(path, "#");
    if (*path == '\0' || *path == '#') {
        strcpy(cfg->path, "/");
    } else if (*path == '?') {
        if (fragment + 1 >= sizeof(cfg->path)) return "URL path too long";
        cfg->path[0] = '/';
        memcpy(cfg->path + 1, path, fragment);
        cfg->path[fragment + 1] = '\0';
    } else if (copy_bounded(cfg->path, sizeof(cfg->path), path, fragment)) {
        return "URL path too long";
    }
    for (const char *c = cfg->path; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f) return "URL path contains spaces or control characters";
    return NULL;
}

static int is_loopback(const struct sockaddr *sa) {
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return 1;
        /* ::ffff:127.x.y.z */
        return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
    }
    return 0;
}

const char *url_resolve(engine_config *cfg, char *err, size_t err_len) {
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(cfg->host, cfg->port, &hints, &res);
    if (rc != 0) {
        snprintf(err, err_len, "cannot resolve host '%s': %s", cfg->host, gai_strerror(rc));
        return err;
    }
    /* The first address is used; every address must be loopback, so that a
     * name resolving to both 127.0.0.1 and a public address is refused. */
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if (!cfg->allow_remote && !is_loopback(ai->ai_addr)) {
            char text[64] = "?";
            const void *a = ai->ai_family == AF_INET
                                ? (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr
                                : (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
            inet_ntop(ai->ai_family, a, text, sizeof(text));
            snprintf(err, err_len,
                     "refusing to load %s (%s): not a loopback address; pass --allow-remote "
                     "to load a machine you own",
                     cfg->host, text);
            freeaddrinfo(res);
            return err;
        }
    }
    memcpy(&cfg->addr, res->ai_addr, res->ai_addrlen);
    cfg->addr_len = res->ai_addrlen;
    const void *a = res->ai_family == AF_INET
                        ? (const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr
                        : (const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr;
    inet_ntop(res->ai_family, a, cfg->addr_text, sizeof(cfg->addr_text));
    freeaddrinfo(res);
    return NULL;
}
