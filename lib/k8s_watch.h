// SPDX-License-Identifier: Apache-2.0
/*
 * The objects one URL of the Kubernetes API lists (GET .../pods, or
 * nodes, services, endpointslices, with its selectors; each a k8s_pod as
 * k8s_pods.h reads it), kept as Kubernetes clients keep a cache: listed, then
 * watched from the list's resourceVersion (?watch=1, with bookmarks),
 * every pod added, changed or deleted applied as it comes. The server
 * ends a watch after WATCH_SECONDS; it is started again from the last
 * version seen (after a second when the server ended it at once). A
 * version gone (410) lists again at once; a list or watch that fails is
 * told to the owner and listed again after retry_interval, the pods
 * meanwhile those last known. Transfers run on the event loop's libcurl
 * (http_client.h); a list's JSON is read, and a kubeconfig's exec plugin
 * run when its credential is missing or expired, on the component's own
 * thread (host->run_aside). Everything else is on the loop's thread.
 */
#ifndef PROFD_LIB_K8S_WATCH_H
#define PROFD_LIB_K8S_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "k8s_api.h"
#include "k8s_pods.h"
#include "profd/plugin.h"

struct k8s_watch;

struct k8s_watch_hooks {
    /* The pods changed: pod added or modified (pod as it is now), or
     * deleted (as it was last); pod NULL when a list replaced them all.
     * w's pods are as they are after the change. With take_list set, only
     * deletions come here. */
    void (*changed)(void *arg, const struct k8s_pod *pod, bool deleted);
    void (*failed)(void *arg, const char *why);   /* why names the URL; it lists again later */
    void *arg;
    unsigned drop;   /* what of each object the owner does not need (k8s_pod_trim) */
    /* When set, the watch keeps no pods of its own (k8s_watch_pods is
     * empty): the owner keeps them, taking what each list it reads holds
     * (take_list, in place of changed with NULL) and each pod added or
     * modified (take, in place of changed). */
    void (*take_list)(void *arg, struct k8s_pod_list *pods);
    void (*take)(void *arg, struct k8s_pod *pod);
};

/* A cache of url's pods asked for as access says (both outlive it);
 * nothing is asked before k8s_watch_start. */
struct k8s_watch *k8s_watch_new(const struct profd_host *h, struct profd_component *self,
                                const char *url, const struct k8s_access *access,
                                int64_t retry_interval, const struct k8s_watch_hooks *hooks);

/* Makes the first list; or, given the resourceVersion of a list the owner
 * made itself (NULL: none), watches from it at once: for a watch whose
 * owner keeps the pods (take_list). 0, or -1 when the loop cannot take it. */
int k8s_watch_start(struct k8s_watch *w, const char *resource_version);

/* The pods known now: none before the first list came back, and none
 * when the owner keeps them (take_list). Changed only on the loop's
 * thread, by events and lists. */
const struct k8s_pod_list *k8s_watch_pods(const struct k8s_watch *w);

/* Whether w's first list came back: until then its objects are none
 * because none are known, not because there are none. */
bool k8s_watch_listed(const struct k8s_watch *w);

/* Ends w's transfers and frees it (accepts NULL). Its work on the
 * component's own thread must be over (the component's shutdown). */
void k8s_watch_free(struct k8s_watch *w);

#endif
