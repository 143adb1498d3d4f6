// SPDX-License-Identifier: Apache-2.0
/*
 * HTTP/1.1 requests through libevent's evhttp: each goes through
 * profd_server_http and the status, content type and body it leaves are
 * sent back.
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

static void on_request(struct evhttp_request *r, void *arg)
{
    struct profd_server *s = arg;
    struct evkeyvalq *in_headers = evhttp_request_get_input_headers(r);
    const char *ctype = evhttp_find_header(in_headers, "Content-Type");
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(r);
    const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
    const char *query = uri ? evhttp_uri_get_query(uri) : NULL;
    struct profd_rpc_request req = {.protocol = PROFD_RPC_HTTP,
                                    .path = path ? path : evhttp_request_get_uri(r),
                                    .content_type = ctype ? ctype : "",
                                    .header = request_header,
                                    .impl = r,
                                    .query = query ? query : ""};
    struct profd_rpc_response res = {0};
    char peer[96];
    peer_of(r, peer, sizeof(peer));
    struct evbuffer *in = evhttp_request_get_input_buffer(r);
    size_t raw_len = evbuffer_get_length(in);
    profd_server_http(s, peer, evhttp_request_get_command(r) == EVHTTP_REQ_POST,
                      evhttp_find_header(in_headers, "Content-Encoding"),
                      evbuffer_pullup(in, -1), raw_len, &req, &res);
    struct evkeyvalq *out_headers = evhttp_request_get_output_headers(r);
    if (res.http_status == 405)
        evhttp_add_header(out_headers, "Allow", "POST");
    if (res.content_type)
        evhttp_add_header(out_headers, "Content-Type", res.content_type);
    struct evbuffer *out = evbuffer_new();
    if (res.len)
        evbuffer_add(out, res.body, res.len);
    free(res.body);
    evhttp_send_reply(r, res.http_status, NULL, out);
    evbuffer_free(out);
}

static struct bufferevent *tls_bufferevent(struct event_base *base, void *arg)
{
    struct profd_server *s = arg;
    return bufferevent_openssl_socket_new(base, -1, SSL_new(s->tls), BUFFEREVENT_SSL_ACCEPTING,
                                          BEV_OPT_CLOSE_ON_FREE);
}

void profd_http1_serve(struct profd_server *s)
{
    s->http = evhttp_new(s->base);
    /* the compressed body may not be larger than the decompressed limit */
    evhttp_set_max_body_size(s->http, (ev_ssize_t)s->o.max_body);
    evhttp_set_allowed_methods(s->http, EVHTTP_REQ_POST | EVHTTP_REQ_GET | EVHTTP_REQ_PUT |
                                            EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD);
    evhttp_set_gencb(s->http, on_request, s);
    if (s->tls)
        evhttp_set_bevcb(s->http, tls_bufferevent, s);
    evhttp_bind_listener(s->http, s->listener);
}
