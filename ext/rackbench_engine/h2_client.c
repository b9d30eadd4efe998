/* h2_client.c - see h2_client.h. */
#include "h2_client.h"

#include <stdio.h>
#include <string.h>

/* Writes text into the reason from offset p, as one printable line
 * (control bytes become '?'; it stops at a line end). */
static void set_reason_at(h2_client *c, size_t p, const char *text, size_t len) {
    for (size_t i = 0; i < len && p + 1 < sizeof(c->reason); i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\r' || ch == '\n') break;
        c->reason[p++] = (ch < 0x20 || ch >= 0x7f) ? '?' : (char)ch;
    }
    c->reason[p] = '\0';
}

/* prefix, then text as a printable one-line reason. */
static void set_reason(h2_client *c, const char *prefix, const char *text, size_t len) {
    size_t p = (size_t)snprintf(c->reason, sizeof(c->reason), "%s", prefix);
    if (p >= sizeof(c->reason)) return;
    set_reason_at(c, p, text, len);
}

static void fail_with(h2_client *c, int not_h2, const char *prefix, const char *text) {
    if (c->failed) return; /* the first reason is the cause; later ones follow from it */
    c->failed = 1;
    c->not_h2 = not_h2;
    set_reason(c, prefix, text, strlen(text));
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t name_len,
                     const uint8_t *value, size_t value_len, uint8_t flags, void *user_data) {
    (void)flags;
    (void)user_data;
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
    if (!s) return 0;
    s->header_bytes += name_len + value_len;
    if (name_len == 7 && memcmp(name, ":status", 7) == 0 && value_len == 3) {
        int code = (value[0] - '0') * 100 + (value[1] - '0') * 10 + (value[2] - '0');
        /* A 1xx is interim: the final response's status replaces it. */
        if (code >= 100 && code <= 999) s->status = code;
    }
    return 0;
}

static int on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id, const uint8_t *data, size_t len,
                         void *user_data) {
    (void)flags;
    (void)data;
    (void)user_data;
    h2_stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (s) s->body_bytes += len;
    /* The window is given back by nghttp2 itself (automatic WINDOW_UPDATE
     * once half of it is consumed): the body is consumed as it arrives. */
    return 0;
}

static int on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    h2_client *c = user_data;
    switch (frame->hd.type) {
    case NGHTTP2_DATA:
    case NGHTTP2_HEADERS: {
        h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (s && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) s->end_stream = 1;
        break;
    }
    case NGHTTP2_RST_STREAM: {
        h2_stream *s = nghttp2_session_get_stream_user_data(session, frame->hd.stream_id);
        if (s) s->reset_code = frame->rst_stream.error_code;
        break;
    }
    case NGHTTP2_GOAWAY:
        c->goaway = 1;
        c->goaway_last_stream_id = frame->goaway.last_stream_id;
        c->goaway_code = frame->goaway.error_code;
        break;
    case NGHTTP2_SETTINGS:
        if (frame->hd.flags & NGHTTP2_FLAG_ACK) break;
        c->peer_settings_seen = 1;
        c->peer_max_streams =
                nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
        break;
    default: break;
    }
    return 0;
}

static int on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code, void *user_data) {
    h2_client *c = user_data;
    h2_stream *s = nghttp2_session_get_stream_user_data(session, stream_id);
    if (!s) return 0; /* cancelled by us: already accounted for */
    nghttp2_session_set_stream_user_data(session, stream_id, NULL);
    h2_stream_end how;
    if (s->end_stream && error_code == NGHTTP2_NO_ERROR) how = H2_STREAM_COMPLETE;
    else if (c->goaway && stream_id > c->goaway_last_stream_id) how = H2_STREAM_GOAWAY;
    else if (s->reset_code || error_code != NGHTTP2_NO_ERROR) how = H2_STREAM_RESET;
    else how = H2_STREAM_LOST;
    uint32_t code = s->reset_code ? s->reset_code : error_code;
    if (how == H2_STREAM_GOAWAY) code = c->goaway_code;
    s->id = 0;
    c->open_streams--;
    if (c->on_end) c->on_end(c->ctx, s, how, code);
    return 0;
}

/* nghttp2's own account of a connection error (a frame it could not
 * accept, a peer that sent no SETTINGS first): the reason we report. */
static int on_error(nghttp2_session *session, int lib_error_code, const char *msg, size_t len, void *user_data) {
    (void)session;
    h2_client *c = user_data;
    if (c->failed) return 0;
    c->failed = 1;
    /* An error before the server's first SETTINGS: it does not speak
     * HTTP/2 (prior knowledge), whatever bytes it sent. */
    (void)lib_error_code;
    c->not_h2 = !c->peer_settings_seen;
    if (c->not_h2) {
        /* What it sent says more than nghttp2's "expected SETTINGS". */
        set_reason(c, "it sent \"", c->first_bytes, c->first_len);
        size_t l = strlen(c->reason);
        snprintf(c->reason + l, sizeof(c->reason) - l, "\" instead of a SETTINGS frame");
    } else {
        set_reason(c, "", msg, len);
    }
    return 0;
}

/* A frame nghttp2 refused: kept as the reason should the connection end
 * for it (it ends with our GOAWAY, not with an error code). */
static int on_invalid_frame(nghttp2_session *session, const nghttp2_frame *frame, int lib_error_code,
                            void *user_data) {
    (void)session;
    h2_client *c = user_data;
    if (!c->reason[0])
        snprintf(c->reason, sizeof(c->reason), "invalid frame (type %u) on stream %d: %s", frame->hd.type,
                 frame->hd.stream_id, nghttp2_strerror(lib_error_code));
    return 0;
}

/* nghttp2 ends a connection it cannot go on with (a frame on the wrong
 * stream, a bad window) by sending GOAWAY with an error code and a debug
 * text: that is the connection's failure and its reason. */
static int on_frame_send(nghttp2_session *session, const nghttp2_frame *frame, void *user_data) {
    (void)session;
    h2_client *c = user_data;
    if (frame->hd.type != NGHTTP2_GOAWAY || frame->goaway.error_code == NGHTTP2_NO_ERROR || c->failed) return 0;
    c->failed = 1;
    c->not_h2 = !c->peer_settings_seen;
    if (!c->reason[0]) {
        int n = snprintf(c->reason, sizeof(c->reason), "engine ended the connection with GOAWAY(%s): ",
                         h2_error_code_name(frame->goaway.error_code));
        if (n > 0 && (size_t)n < sizeof(c->reason))
            set_reason_at(c, (size_t)n, (const char *)frame->goaway.opaque_data, frame->goaway.opaque_data_len);
    }
    return 0;
}

static ssize_t read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *data_flags, nghttp2_data_source *source, void *user_data) {
    (void)session;
    (void)stream_id;
    (void)user_data;
    h2_stream *s = source->ptr;
    size_t left = s->body_len - s->body_sent;
    size_t n = left < length ? left : length;
    memcpy(buf, s->body + s->body_sent, n);
    s->body_sent += n;
    if (s->body_sent == s->body_len) *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

int h2_client_init(h2_client *c, uint32_t window_bytes, h2_stream_end_cb on_end, void *ctx) {
    memset(c, 0, sizeof(*c));
    c->on_end = on_end;
    c->ctx = ctx;
    nghttp2_session_callbacks *cbs;
    if (nghttp2_session_callbacks_new(&cbs)) return -1;
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    nghttp2_session_callbacks_set_error_callback2(cbs, on_error);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cbs, on_invalid_frame);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
    int rv = nghttp2_session_client_new(&c->session, cbs, c);
    nghttp2_session_callbacks_del(cbs);
    if (rv) return -1;
    nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, window_bytes},
    };
    if (nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 2) ||
        nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, (int32_t)window_bytes)) {
        nghttp2_session_del(c->session);
        c->session = NULL;
        return -1;
    }
    return 0;
}

void h2_client_free(h2_client *c) {
    if (c->session) nghttp2_session_del(c->session);
    c->session = NULL;
}

int32_t h2_client_submit(h2_client *c, const nghttp2_nv *headers, size_t header_count, h2_stream *s) {
    s->id = 0;
    s->status = 0;
    s->body_bytes = 0;
    s->header_bytes = 0;
    s->end_stream = 0;
    s->reset_code = 0;
    s->body_sent = 0;
    if (c->failed || c->goaway) return -1;
    nghttp2_data_provider body = {.source.ptr = s, .read_callback = read_body};
    int32_t id = nghttp2_submit_request(c->session, NULL, headers, header_count, s->body_len ? &body : NULL, s);
    if (id < 0) return -1;
    s->id = id;
    c->open_streams++;
    return id;
}

void h2_client_cancel(h2_client *c, h2_stream *s) {
    if (s->id <= 0) return;
    /* Forget the stream first: its close (now or when the RST_STREAM goes
     * out) must not be reported. */
    nghttp2_session_set_stream_user_data(c->session, s->id, NULL);
    nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
    s->id = 0;
    c->open_streams--;
}

int h2_client_recv(h2_client *c, const uint8_t *data, size_t len) {
    if (c->failed) return -1;
    if (!c->received_any && len > 0) {
        c->received_any = 1;
        c->first_len = len < sizeof(c->first_bytes) ? len : sizeof(c->first_bytes);
        memcpy(c->first_bytes, data, c->first_len);
        /* The commonest wrong peer: an HTTP/1.x server answering the
         * preface ("PRI * HTTP/2.0") with a 400 or 505. */
        size_t n = len < 5 ? len : 5;
        if (memcmp(data, "HTTP/", n) == 0) {
            c->failed = 1;
            c->not_h2 = 1;
            set_reason(c, "it answered \"", (const char *)data, len);
            size_t l = strlen(c->reason);
            if (l + 1 < sizeof(c->reason)) snprintf(c->reason + l, sizeof(c->reason) - l, "\"");
            return -1;
        }
    }
    ssize_t rv = nghttp2_session_mem_recv(c->session, data, len);
    if (rv < 0) {
        fail_with(c, 0, "", nghttp2_strerror((int)rv));
        return -1;
    }
    return c->failed ? -1 : 0;
}

long h2_client_pending_output(h2_client *c, const uint8_t **out) {
    if (c->failed) return -1;
    ssize_t n = nghttp2_session_mem_send(c->session, out);
    if (n < 0) {
        fail_with(c, 0, "", nghttp2_strerror((int)n));
        return -1;
    }
    /* Our GOAWAY(error) just went into *out: the connection is over. */
    return c->failed ? -1 : (long)n;
}

int h2_client_usable(const h2_client *c) {
    return c->session && !c->failed && !c->goaway &&
           (nghttp2_session_want_read(c->session) || nghttp2_session_want_write(c->session));
}

const char *h2_error_code_name(uint32_t code) {
    static const char *const names[] = {"NO_ERROR",        "PROTOCOL_ERROR",     "INTERNAL_ERROR",  "FLOW_CONTROL_ERROR",
                                        "SETTINGS_TIMEOUT", "STREAM_CLOSED",      "FRAME_SIZE_ERROR", "REFUSED_STREAM",
                                        "CANCEL",          "COMPRESSION_ERROR", "CONNECT_ERROR",   "ENHANCE_YOUR_CALM",
                                        "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"};
    return code < sizeof(names) / sizeof(names[0]) ? names[code] : "UNKNOWN";
}
