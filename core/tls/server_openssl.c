// SPDX-License-Identifier: Apache-2.0
/*
 * profd-tls.so: the core servers' TLS through OpenSSL and libevent's
 * OpenSSL bufferevents (see core/tls_server.h for why it is a library of
 * its own). TLS 1.2 at least; ALPN picks h2 when offered, else http/1.1
 * for HTTP servers.
 */
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>

#include "../tls_server.h"

/* OpenSSL's first queued error, in words (its reason alone can be NULL,
 * as for a file that cannot be opened). */
static const char *tls_error(void)
{
    static _Thread_local char text[256];
    unsigned long e = ERR_get_error();
    if (!e)
        return "unknown error";
    ERR_error_string_n(e, text, sizeof(text));
    ERR_clear_error();
    return text;
}

/* Whether the ALPN list in offers want; *out points at it then. */
static bool alpn_find(const unsigned char *in, unsigned int inlen, const char *want,
                      const unsigned char **out)
{
    for (unsigned int i = 0; i < inlen;) {
        unsigned int n = in[i];
        if (i + 1 + n > inlen)
            return false;
        if (n == strlen(want) && memcmp(in + i + 1, want, n) == 0) {
            *out = in + i + 1;
            return true;
        }
        i += 1 + n;
    }
    return false;
}

/* ALPN: h2 when offered; http/1.1 otherwise when arg (non-NULL) says so. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    if (alpn_find(in, inlen, "h2", out)) {
        *outlen = 2;
        return SSL_TLSEXT_ERR_OK;
    }
    if (arg && alpn_find(in, inlen, "http/1.1", out)) {
        *outlen = 8;
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

static void *context_new(const char *cert, const char *key, const char *client_ca, bool http1,
                         char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        snprintf(err, errlen, "TLS: %s", tls_error());
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        snprintf(err, errlen, "TLS certificate %s: %s", cert, tls_error());
    } else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        snprintf(err, errlen, "TLS key %s: %s", key, tls_error());
    } else if (client_ca && *client_ca &&
               SSL_CTX_load_verify_locations(ctx, client_ca, NULL) != 1) {
        snprintf(err, errlen, "TLS client CA %s: %s", client_ca, tls_error());
    } else {
        if (client_ca && *client_ca)
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        /* Any non-NULL argument says http/1.1; the context is one. */
        SSL_CTX_set_alpn_select_cb(ctx, select_alpn, http1 ? ctx : NULL);
        return ctx;
    }
    SSL_CTX_free(ctx);
    return NULL;
}

static void context_free(void *ctx)
{
    SSL_CTX_free(ctx);
}

static struct bufferevent *bufferevent_new(void *ctx, struct event_base *base, evutil_socket_t fd)
{
    return bufferevent_openssl_socket_new(base, fd, SSL_new(ctx), BUFFEREVENT_SSL_ACCEPTING,
                                          BEV_OPT_CLOSE_ON_FREE);
}

static bool chose_h2(struct bufferevent *bev)
{
    const unsigned char *proto = NULL;
    unsigned int n = 0;
    SSL_get0_alpn_selected(bufferevent_openssl_get_ssl(bev), &proto, &n);
    return n == 2 && !memcmp(proto, "h2", 2);
}

__attribute__((visibility("default"))) const struct profd_tls_server_ops profd_tls_server_ops_v1 = {
    context_new,
    context_free,
    bufferevent_new,
    chose_h2,
};
