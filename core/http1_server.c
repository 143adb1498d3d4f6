// SPDX-License-Identifier: Apache-2.0
/*
 * HTTP/1.1 requests through libevent's evhttp: POST bodies are limited,
 * decompressed per Content-Encoding and handed to the module's handler,
 * whose status, content type and body are sent back.
 */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "compression.h"
#include "rpc_server.h"

static const char *request_header(const struct profd_rpc_request *req, const char *name)
{
    return evhttp_find_header(evhttp_request_get_input_headers(req->impl), name);
}

static void peer_of(struct evhttp_request *r, char *out, size_t n)
{
    const char *host = "?";
    ev_uint16_t port = 0;
    struct evhttp_connection *conn = evhttp_request_get_connection(r);
    if (conn)
        evhttp_connection_get_peer(conn, (char **)&host, &port);
    snprintf(out, n, "%s:%u", host, port);
}

static void reply_text(struct profd_server *s, struct evhttp_request *r, int status,
                       const char *why)
{
    char peer[96];
    peer_of(r, peer, sizeof(peer));
    profd_server_refused(s, peer, evhttp_request_get_uri(r), why);
    struct evbuffer *out = evbuffer_new();
    evbuffer_add_printf(out, "%s\n", why);
    evhttp_add_header(evhttp_request_get_output_headers(r), "Content-Type", "text/plain");
    evhttp_send_reply(r, status, NULL, out);
    evbuffer_free(out);
}

static void on_request(struct evhttp_request *r, void *arg)
{
    struct profd_server *s = arg;
    if (evhttp_request_get_command(r) != EVHTTP_REQ_POST) {
        evhttp_add_header(evhttp_request_get_output_headers(r), "Allow", "POST");
        return reply_text(s, r, 405, "only POST is served");
    }
    struct evkeyvalq *in_headers = evhttp_request_get_input_headers(r);
    const char *enc = evhttp_find_header(in_headers, "Content-Encoding");
    char why[300];
    if (enc && !profd_encoding_known(enc)) {
        snprintf(why, sizeof(why), "Content-Encoding \"%s\" is not supported (gzip, zstd)", enc);
        return reply_text(s, r, 415, why);
    }
    struct evbuffer *in = evhttp_request_get_input_buffer(r);
    size_t raw_len = evbuffer_get_length(in);
    uint8_t *body;
    size_t len;
    int rc = profd_decompress(enc ? enc : "", evbuffer_pullup(in, -1), raw_len, s->o.max_body,
                              &body, &len, why, sizeof(why));
    if (rc < 0)
        return reply_text(s, r, rc == PROFD_DECOMPRESS_TOO_LARGE ? 413 : 400, why);
    const char *ctype = evhttp_find_header(in_headers, "Content-Type");
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(r);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    const char *query = uri ? evhttp_uri_get_query(uri) : NULL;
    struct profd_rpc_request req = {.protocol = PROFD_RPC_HTTP,
                                    .path = path ? path : evhttp_request_get_uri(r),
                                    .content_type = ctype ? ctype : "",
                                    .body = body,
                                    .len = len,
                                    .header = request_header,
                                    .impl = r,
                                    .query = query ? query : ""};
    struct profd_rpc_response res = {0};
    s->fn(s->arg, &req, &res);
    free(body);
    int status = res.http_status ? res.http_status : 200;
    if (status >= 400) {
        char peer[96];
        peer_of(r, peer, sizeof(peer));
        profd_server_refused(s, peer, req.path, res.message);
    }
    struct evbuffer *out = evbuffer_new();
    if (res.len)
        evbuffer_add(out, res.body, res.len);
    free(res.body);
    if (res.content_type)
        evhttp_add_header(evhttp_request_get_output_headers(r), "Content-Type", res.content_type);
    evhttp_send_reply(r, status, NULL, out);
    evbuffer_free(out);
}

static struct bufferevent *tls_bufferevent(struct event_base *base, void *arg)
{
    struct profd_server *s = arg;
    return bufferevent_openssl_socket_new(base, -1, SSL_new(s->tls), BUFFEREVENT_SSL_ACCEPTING,
                                          BEV_OPT_CLOSE_ON_FREE);
}

int profd_http1_listen(struct profd_server *s, const char *host, int port, char *err,
                       size_t errlen)
{
    s->http = evhttp_new(s->base);
    /* the compressed body may not be larger than the decompressed limit */
    evhttp_set_max_body_size(s->http, (ev_ssize_t)s->o.max_body);
    evhttp_set_allowed_methods(s->http, EVHTTP_REQ_POST | EVHTTP_REQ_GET | EVHTTP_REQ_PUT |
                                            EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD);
    evhttp_set_gencb(s->http, on_request, s);
    if (s->tls)
        evhttp_set_bevcb(s->http, tls_bufferevent, s);
    struct evhttp_bound_socket *bound =
        evhttp_bind_socket_with_handle(s->http, host[0] ? host : "0.0.0.0", (ev_uint16_t)port);
    if (!bound) {
        snprintf(err, errlen, "cannot listen on %s", s->o.endpoint);
        return -1;
    }
    profd_server_note_address(s, evhttp_bound_socket_get_fd(bound));
    return 0;
}
