// SPDX-License-Identifier: Apache-2.0
#include "k8s_watch.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "grow.h"
#include "http_client.h"

/* How long the server keeps a watch open, and how much longer the
 * transfer may take before it counts as failed. */
#define WATCH_SECONDS 300
#define WATCH_GRACE_MS 30000
/* A watch the server ended sooner than this starts again this much later. */
#define WATCH_MIN_NS 1000000000LL

enum watch_state { AUTHORIZING, LISTING, READING, WATCHING, WAITING };

struct k8s_watch {
    const struct profd_host *h;
    struct profd_component *self;
    const char *url;
    const struct k8s_access *access;
    int64_t retry_interval;
    struct k8s_watch_hooks hooks;
    struct http_client *http;
    struct event *retry;          /* WAITING: lists (or watches) again when it fires */
    enum watch_state state;
    CURL *easy;
    struct k8s_request request;   /* what the transfer reads */
    struct k8s_response body;     /* a list's JSON, or a watch's line not ended yet */
    struct k8s_pod_list pods;     /* what it knows now */
    struct k8s_pod_list listed;   /* READING: the list as the component's thread reads it */
    bool relist;                  /* WATCHING: the watch's version is gone */
    bool rewatch;                 /* WAITING, AUTHORIZING: watches, not lists, next */
    bool authorized;              /* the exec plugin just ran: go on whatever it gave */
    bool failed;
    char why[1024];
    int64_t watch_started;        /* monotonic ns */
};

static void start_list(struct k8s_watch *w);
static void start_watch(struct k8s_watch *w);

/* Ends w's transfer, if any, and empties what it read. */
static void end_transfer(struct k8s_watch *w)
{
    if (w->easy) {
        http_client_cancel(w->http, w->easy);
        curl_easy_cleanup(w->easy);
        w->easy = NULL;
    }
    k8s_request_end(&w->request);
    free(w->body.data);
    w->body = (struct k8s_response){0};
}

static void retry_in(struct k8s_watch *w, int64_t ns, bool rewatch)
{
    w->state = WAITING;
    w->rewatch = rewatch;
    struct timeval tv = {ns / 1000000000, ns % 1000000000 / 1000};
    evtimer_add(w->retry, &tv);
}

/* Tells the owner of w's failure (w->why) and lists again later. */
static void fail(struct k8s_watch *w)
{
    char why[1200];
    snprintf(why, sizeof(why), "%s: %s", w->url, w->why);
    end_transfer(w);
    retry_in(w, w->retry_interval, false);
    w->hooks.failed(w->hooks.arg, why);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct k8s_watch *w = arg;
    if (w->rewatch)
        start_watch(w);
    else
        start_list(w);
}

/* Applies one watch event, a line of the stream; false when the stream
 * cannot be trusted from there on (w->why says why). */
static bool apply_event(struct k8s_watch *w, const char *line, size_t len)
{
    struct k8s_watch_event ev;
    char why[256];
    if (k8s_watch_event_parse(line, len, &ev, why, sizeof(why)) < 0) {
        snprintf(w->why, sizeof(w->why), "the watch sent %s", why);
        return false;
    }
    bool ok = true;
    if (ev.type == K8S_ERROR) {
        snprintf(w->why, sizeof(w->why), "the watch ended with %ld: %.200s", ev.code,
                 ev.message);
        w->relist = ev.code == 410;   /* gone: list again at once */
        ok = false;
    } else {
        if (*ev.resource_version) {
            free(w->pods.resource_version);
            w->pods.resource_version = ev.resource_version;
            ev.resource_version = NULL;
        }
        if (ev.type == K8S_ADDED || ev.type == K8S_MODIFIED) {
            k8s_pod_trim(&ev.pod, w->hooks.drop);
            if (w->hooks.take_list) {
                w->hooks.take(w->hooks.arg, &ev.pod);
                ev.pod = (struct k8s_pod){0};   /* the owner's now */
            } else {
                w->hooks.changed(w->hooks.arg, k8s_pod_list_put(&w->pods, &ev.pod), false);
            }
        } else if (ev.type == K8S_DELETED) {
            k8s_pod_list_remove(&w->pods, ev.pod.uid);
            w->hooks.changed(w->hooks.arg, &ev.pod, true);
        }
    }
    k8s_watch_event_free(&ev);
    return ok;
}

/* A watch's bytes as they come: each whole line an event. */
static size_t on_watch_data(char *p, size_t size, size_t n, void *arg)
{
    struct k8s_watch *w = arg;
    struct k8s_response *b = &w->body;
    if (w->failed || b->len + size * n > K8S_MAX_RESPONSE)
        return 0;   /* the transfer ends */
    b->data = grow_array(b->data, &b->cap, b->len + size * n + 1, 1);
    memcpy(b->data + b->len, p, size * n);
    b->len += size * n;
    size_t start = 0;
    for (char *nl; !w->failed && (nl = memchr(b->data + start, '\n', b->len - start));) {
        size_t end = (size_t)(nl - b->data);
        if (end > start && !apply_event(w, b->data + start, end - start))
            w->failed = true;
        start = end + 1;
    }
    memmove(b->data, b->data + start, b->len - start);
    b->len -= start;
    b->data[b->len] = '\0';   /* a refusal's text is printed */
    return w->failed ? 0 : size * n;
}

/* Sets up a transfer of url on w->easy; false (w->why set) when libcurl
 * cannot, or a header file gives no value. */
static bool begin_transfer(struct k8s_watch *w, const char *url)
{
    if (!(w->easy = curl_easy_init())) {
        snprintf(w->why, sizeof(w->why), "libcurl cannot be set up");
        return false;
    }
    curl_easy_setopt(w->easy, CURLOPT_PRIVATE, w);
    return k8s_api_prepare(w->easy, url, w->access, &w->body, &w->request, w->why,
                           sizeof(w->why));
}

/* On the component's own thread: the kubeconfig's exec plugin run. */
static void authorize(void *arg)
{
    struct k8s_watch *w = arg;
    w->failed = k8s_api_authorize(w->access, w->why, sizeof(w->why)) < 0;
}

/* Back on the loop's thread: the list or watch it ran for. */
static void authorized(void *arg)
{
    struct k8s_watch *w = arg;
    if (w->failed) {
        fail(w);
        return;
    }
    w->authorized = true;
    if (w->rewatch)
        start_watch(w);
    else
        start_list(w);
}

/* Whether the credentials are at hand for a list (or with watch, a
 * watch); else the exec plugin is run first, the list or watch after. */
static bool ready(struct k8s_watch *w, bool watch)
{
    if (w->authorized || k8s_api_authorized(w->access)) {
        w->authorized = false;
        return true;
    }
    w->state = AUTHORIZING;
    w->rewatch = watch;
    w->failed = false;
    w->h->run_aside(w->self, authorize, authorized, w);
    return false;
}

static void run_transfer(struct k8s_watch *w)
{
    if (http_client_add(w->http, w->easy) < 0) {
        snprintf(w->why, sizeof(w->why), "libcurl cannot start a transfer");
        fail(w);
    }
}

static void start_watch(struct k8s_watch *w)
{
    if (!ready(w, true))
        return;
    char *url = must_asprintf("%s%cwatch=1&allowWatchBookmarks=true&timeoutSeconds=%d"
                              "&resourceVersion=%s", w->url, strchr(w->url, '?') ? '&' : '?',
                              WATCH_SECONDS, w->pods.resource_version);
    w->state = WATCHING;
    w->relist = w->failed = false;
    w->watch_started = monotonic_ns();
    bool ok = begin_transfer(w, url);
    free(url);
    if (!ok) {
        fail(w);
        return;
    }
    curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, on_watch_data);
    curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(w->easy, CURLOPT_TIMEOUT_MS, (long)WATCH_SECONDS * 1000 + WATCH_GRACE_MS);
    run_transfer(w);
}

static void start_list(struct k8s_watch *w)
{
    if (!ready(w, false))
        return;
    w->state = LISTING;
    w->failed = false;
    if (begin_transfer(w, w->url))
        run_transfer(w);
    else
        fail(w);
}

/* On the component's own thread: the list's JSON read. */
static void read_list(void *arg)
{
    struct k8s_watch *w = arg;
    char why[256];
    if (k8s_pod_list_parse(w->body.data, w->body.len, w->hooks.drop, &w->listed, why,
                           sizeof(why)) < 0) {
        snprintf(w->why, sizeof(w->why), "%s", why);
        w->failed = true;
    }
}

/* Back on the loop's thread: the list in place of what w knew, and a
 * watch from its version. */
static void list_read(void *arg)
{
    struct k8s_watch *w = arg;
    end_transfer(w);
    if (w->failed) {
        fail(w);
        return;
    }
    k8s_pod_list_free(&w->pods);
    if (w->hooks.take_list) {   /* the owner's, but for the version watched from */
        w->pods.resource_version = must_strdup_or_null(w->listed.resource_version);
        w->hooks.take_list(w->hooks.arg, &w->listed);
        k8s_pod_list_free(&w->listed);   /* whatever the owner left */
    } else {
        w->pods = w->listed;
        w->listed = (struct k8s_pod_list){0};
    }
    start_watch(w);
    if (!w->hooks.take_list)
        w->hooks.changed(w->hooks.arg, NULL, false);
}

static void on_done(void *arg, CURL *easy, CURLcode result)
{
    struct k8s_watch *w = arg;
    char why[512];
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (w->state == LISTING) {
        if (!k8s_api_succeeded(easy, result, &w->body, w->access, w->why, sizeof(w->why))) {
            fail(w);
            return;
        }
        w->state = READING;
        w->h->run_aside(w->self, read_list, list_read, w);
        return;
    }
    /* a watch: the server ended it, its version is gone, or it failed */
    bool gone = w->relist || status == 410;
    bool ended = !w->failed && result == CURLE_OK && status == 200;
    if (!w->failed && !k8s_api_succeeded(easy, result, &w->body, w->access, why, sizeof(why)))
        snprintf(w->why, sizeof(w->why), "the watch failed: %s", why);
    end_transfer(w);
    if (gone) {
        w->h->log(w->self, PROFD_LOG_DEBUG, "%s: the watch's version is gone; listing again",
                  w->url);
        start_list(w);
    } else if (ended && monotonic_ns() - w->watch_started < WATCH_MIN_NS) {
        retry_in(w, WATCH_MIN_NS, true);   /* a server ending watches at once: not in a loop */
    } else if (ended) {
        start_watch(w);
    } else {
        fail(w);
    }
}

struct k8s_watch *k8s_watch_new(const struct profd_host *h, struct profd_component *self,
                                const char *url, const struct k8s_access *access,
                                int64_t retry_interval, const struct k8s_watch_hooks *hooks)
{
    struct k8s_watch *w = calloc(1, sizeof(*w));
    if (!w)
        abort();
    *w = (struct k8s_watch){.h = h, .self = self, .url = url, .access = access,
                            .retry_interval = retry_interval, .hooks = *hooks};
    return w;
}

int k8s_watch_start(struct k8s_watch *w, const char *resource_version)
{
    struct event_base *base = w->h->event_base(w->self);
    if (!(w->http = http_client_create(base, on_done)) ||
        !(w->retry = evtimer_new(base, on_retry, w)))
        return -1;
    if (!resource_version) {
        start_list(w);
        return 0;
    }
    w->pods.resource_version = must_strdup(resource_version);
    start_watch(w);
    return 0;
}

const struct k8s_pod_list *k8s_watch_pods(const struct k8s_watch *w)
{
    return &w->pods;
}

bool k8s_watch_listed(const struct k8s_watch *w)
{
    return w->pods.resource_version != NULL;
}

void k8s_watch_free(struct k8s_watch *w)
{
    if (!w)
        return;
    end_transfer(w);
    http_client_destroy(w->http);
    if (w->retry)
        event_free(w->retry);
    k8s_pod_list_free(&w->pods);
    k8s_pod_list_free(&w->listed);
    free(w);
}
