// SPDX-License-Identifier: Apache-2.0
/*
 * libcurl's multi interface driven by the daemon's libevent loop: every
 * transfer runs on the main thread without blocking it.
 */
#ifndef PROFD_LIB_HTTP_CLIENT_H
#define PROFD_LIB_HTTP_CLIENT_H

#include <curl/curl.h>

struct event_base;
struct http_client;

/* Called on the loop thread when a transfer finished; arg is the easy
 * handle's CURLOPT_PRIVATE. The handle is already removed from the multi. */
typedef void (*http_done_fn)(void *arg, CURL *easy, CURLcode result);

/* A libcurl multi driven by base's events; done is called for each
 * finished transfer. NULL when out of memory. */
struct http_client *http_client_create(struct event_base *base, http_done_fn done);
/* Starts easy (configured by the caller, CURLOPT_PRIVATE set). 0 or -1.
 * Transfers that finish meanwhile (this one too, if it fails at once) get
 * their done callback before it returns. */
int http_client_add(struct http_client *c, CURL *easy);
/* Stops easy if it is running; its done callback is not called. */
void http_client_cancel(struct http_client *c, CURL *easy);
/* Stops every transfer and frees the client. Accepts NULL. */
void http_client_destroy(struct http_client *c);

#endif
