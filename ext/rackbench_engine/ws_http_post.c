/* ws_http_post.c - see ws_http_post.h. */
#include "ws_http_post.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

const char *const ws_post_failure_names[WS_POST_KINDS] = {"ok", "connect", "write", "read", "timeout", "status"};

void ws_http_post_init(ws_http_post *p, worker *w, ws_post_done_fn done, void *done_ctx) {
    memset(p, 0, sizeof(*p));
    p->item = WS_ITEM_HTTP_BROADCASTER;
    p->w = w;
    p->cfg = w->cfg;
    p->done = done;
    p->done_ctx = done_ctx;
    p->fd = -1;
}

static void close_socket(ws_http_post *p) {
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
    p->connected = 0;
}

/* The POST in progress ended as how (status: the answer's, if one came). */
static void finish(ws_http_post *p, ws_post_failure how, int status, const char *reason, uint64_t now_ns) {
    p->busy = 0;
    p->out_len = p->out_sent = 0;
    p->failures[how]++;
    if (how != WS_POST_OK) {
        close_socket(p);
        if (!p->reason[0]) snprintf(p->reason, sizeof(p->reason), "%s", reason);
        if (how == WS_POST_STATUS)
            for (int i = 0; i < 8; i++) {
                if (p->statuses[i] == status) break;
                if (!p->statuses[i]) {
                    p->statuses[i] = status;
                    break;
                }
            }
    }
    p->done(p->done_ctx, p->seq, how, status, now_ns);
}

static int open_socket(ws_http_post *p, uint64_t now_ns) {
    const engine_config *cfg = p->cfg;
    int fd = socket(cfg->ws_broadcast_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) {
        finish(p, WS_POST_CONNECT, 0, strerror(errno), now_ns);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    p->fd = fd;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = p};
    if ((connect(fd, (const struct sockaddr *)&cfg->ws_broadcast_addr, cfg->ws_broadcast_addr_len) < 0 &&
         errno != EINPROGRESS) ||
        epoll_ctl(p->w->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        char why[160];
        snprintf(why, sizeof(why), "cannot connect to --broadcast-url %.100s: %s", cfg->ws_broadcast_url, strerror(errno));
        finish(p, WS_POST_CONNECT, 0, why, now_ns);
        return -1;
    }
    return 0;
}

/* Writes what is left of the POST. 0, or -1 after failing it. */
static int write_post(ws_http_post *p, uint64_t now_ns) {
    while (p->out_sent < p->out_len) {
        ssize_t n = send(p->fd, p->out + p->out_sent, p->out_len - p->out_sent, MSG_NOSIGNAL);
        if (n > 0) {
            p->out_sent += (size_t)n;
            p->connected = 1;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 0;
        char why[200];
        int err = n < 0 ? errno : EPIPE;
        if (!p->connected) {
            snprintf(why, sizeof(why), "cannot connect to --broadcast-url %.100s: %s", p->cfg->ws_broadcast_url,
                     strerror(err));
            finish(p, WS_POST_CONNECT, 0, why, now_ns);
        } else {
            snprintf(why, sizeof(why), "writing a broadcast's POST failed: %s", strerror(err));
            finish(p, WS_POST_WRITE, 0, why, now_ns);
        }
        return -1;
    }
    return 0;
}

int ws_http_post_send(ws_http_post *p, uint64_t seq, const char *body, size_t len, uint64_t now_ns) {
    const engine_config *cfg = p->cfg;
    p->busy = 1;
    p->seq = seq;
    p->posts++;
    p->deadline_ns = now_ns + cfg->timeout_ns;
    char head[MAX_URL_BYTES + 512];
    int head_len = snprintf(head, sizeof(head),
                            "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: rackbench-engine/" ENGINE_VERSION
                            "\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                            cfg->ws_broadcast_path, cfg->ws_broadcast_host, len);
    size_t need = (size_t)head_len + len;
    if (need > p->out_cap) {
        char *grown = realloc(p->out, need);
        if (!grown) {
            perror("rackbench-engine: out of memory for a broadcast");
            exit(1);
        }
        p->out = grown;
        p->out_cap = need;
    }
    memcpy(p->out, head, (size_t)head_len);
    memcpy(p->out + head_len, body, len);
    p->out_len = need;
    p->out_sent = 0;
    http_response_reset(&p->resp, 0, NULL, NULL);
    if (p->fd < 0 && open_socket(p, now_ns) < 0) return -1;
    return write_post(p, now_ns);
}

static void on_readable(ws_http_post *p, uint64_t now_ns) {
    char *buf = p->w->read_buf;
    for (;;) {
        ssize_t n = recv(p->fd, buf, WORKER_READ_BUFFER_BYTES, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) {
            if (!p->busy) {
                close_socket(p); /* an idle kept-alive connection closed: the next POST reopens */
            } else if (n == 0 && !http_response_untouched(&p->resp) && http_response_eof(&p->resp) == RESP_COMPLETE) {
                int status = p->resp.status_code;
                close_socket(p);
                finish(p, status >= 200 && status < 300 ? WS_POST_OK : WS_POST_STATUS, status,
                       "the broadcast endpoint answered with an error status", now_ns);
            } else {
                finish(p, p->connected ? WS_POST_READ : WS_POST_CONNECT, 0,
                       "the broadcast endpoint closed the connection before answering", now_ns);
            }
            return;
        }
        if (!p->busy) {
            close_socket(p); /* bytes nobody asked for */
            return;
        }
        size_t used;
        resp_status st = http_response_feed(&p->resp, buf, (size_t)n, &used);
        if (st == RESP_ERROR) {
            char why[200];
            snprintf(why, sizeof(why), "the broadcast endpoint's answer is not HTTP: %s", p->resp.error);
            finish(p, WS_POST_READ, 0, why, now_ns);
            return;
        }
        if (st == RESP_COMPLETE) {
            int status = p->resp.status_code;
            if (!p->resp.keep_alive) close_socket(p);
            char why[200];
            snprintf(why, sizeof(why), "the broadcast endpoint %.100s answered %d", p->cfg->ws_broadcast_url, status);
            finish(p, status >= 200 && status < 300 ? WS_POST_OK : WS_POST_STATUS, status, why, now_ns);
            return;
        }
        if ((size_t)n < WORKER_READ_BUFFER_BYTES) return;
    }
}

void ws_http_post_on_event(ws_http_post *p, uint32_t events, uint64_t now_ns) {
    if (p->fd < 0) return;
    if (!p->connected && p->busy && (events & (EPOLLERR | EPOLLHUP))) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        char why[200];
        snprintf(why, sizeof(why), "cannot connect to --broadcast-url %.100s: %s", p->cfg->ws_broadcast_url,
                 strerror(err ? err : ECONNREFUSED));
        finish(p, WS_POST_CONNECT, 0, why, now_ns);
        return;
    }
    if ((events & EPOLLOUT) && p->busy && write_post(p, now_ns) < 0) return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(p, now_ns);
}

void ws_http_post_check(ws_http_post *p, uint64_t now_ns) {
    if (p->busy && now_ns >= p->deadline_ns)
        finish(p, WS_POST_TIMEOUT, 0, "the broadcast endpoint did not answer within --timeout", now_ns);
}

void ws_http_post_free(ws_http_post *p) {
    close_socket(p);
    free(p->out);
    p->out = NULL;
}
