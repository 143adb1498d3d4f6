// SPDX-License-Identifier: Apache-2.0
#include "debuginfod.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/clock.h"
#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "../../lib/hex.h"
#include "../../lib/key_map.h"

/* The longest build-id asked for, in bytes (GNU's are 20). */
#define MAX_BUILD_ID 64

/* No fetch: the end of the queue. */
#define NO_FETCH SIZE_MAX

/* One file of one build-id, asked for once and kept with its outcome. */
struct fetch {
    bool debuginfo;               /* the separate debug file, else the executable */
    unsigned char id[MAX_BUILD_ID];
    size_t len;
    enum { FETCH_QUEUED, FETCH_RUNNING, FETCH_DONE } state;
    bool waited;                  /* a caller waited for it already: later ones do not */
    char *path;                   /* done: the file in the client's cache; NULL: failed */
    int error;                    /* done and failed: a negative errno */
    int64_t done_ns;              /* a failure is asked for again retry_ns after */
    size_t next_queued;           /* queued: the fetch queued after it, or NO_FETCH */
};

/* libdebuginfod, loaded only when servers are configured (it brings
 * libcurl and TLS libraries along), and the fetches its threads make. */
struct remote_debuginfo {
    void *library;
    debuginfod_client *(*begin)(void);
    int (*find_executable)(debuginfod_client *, const unsigned char *, int, char **);
    int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
    void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
    void (*set_user_data)(debuginfod_client *, void *);
    void *(*get_user_data)(debuginfod_client *);
    void (*end)(debuginfod_client *);
    int64_t retry_ns;
    pthread_mutex_t lock;
    pthread_cond_t queued, done;
    struct fetch *fetches;        /* never removed: a file fetched stays known */
    size_t nfetches, fetches_cap;
    struct key_map by_file;       /* file_key -> its index in fetches */
    size_t queue_head, queue_tail;   /* the queued fetches, oldest first (NO_FETCH: none) */
    atomic_bool stopping;
    pthread_t threads[REMOTE_DEBUGINFO_MAX_FETCHES];   /* a fetch each */
    size_t nthreads;
};

/* Loads the library into r. False with err filled when it is missing. */
static bool load(struct remote_debuginfo *r, char *err, size_t errlen)
{
    if (!(r->library = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL))) {
        snprintf(err, errlen, "debuginfod_urls is set but %s cannot be loaded (Debian package "
                 "libdebuginfod1): %s", DEBUGINFOD_SONAME, dlerror());
        return false;
    }
    *(void **)&r->begin = dlsym(r->library, "debuginfod_begin");
    *(void **)&r->find_executable = dlsym(r->library, "debuginfod_find_executable");
    *(void **)&r->find_debuginfo = dlsym(r->library, "debuginfod_find_debuginfo");
    *(void **)&r->set_progressfn = dlsym(r->library, "debuginfod_set_progressfn");
    *(void **)&r->set_user_data = dlsym(r->library, "debuginfod_set_user_data");
    *(void **)&r->get_user_data = dlsym(r->library, "debuginfod_get_user_data");
    *(void **)&r->end = dlsym(r->library, "debuginfod_end");
    if (r->begin && r->find_executable && r->find_debuginfo && r->set_progressfn &&
        r->set_user_data && r->get_user_data && r->end)
        return true;
    snprintf(err, errlen, "%s lacks the client functions", DEBUGINFOD_SONAME);
    return false;
}

/* debuginfod_get_user_data, for the progress hook, which is given the
 * client only (the library is loaded once: every client's is the same). */
static void *(*user_data_of)(debuginfod_client *);

/* libdebuginfod's progress hook: a fetch under way is given up when its
 * client is being freed. */
static int stop_when_stopping(debuginfod_client *client, long done, long total)
{
    (void)done;
    (void)total;
    const struct remote_debuginfo *r = user_data_of(client);
    return atomic_load(&r->stopping) ? 1 : 0;
}

/* Takes the oldest fetch waiting for a thread off the queue, or NULL
 * (r->lock held). */
static struct fetch *next_queued(struct remote_debuginfo *r)
{
    if (r->queue_head == NO_FETCH)
        return NULL;
    struct fetch *f = &r->fetches[r->queue_head];
    r->queue_head = f->next_queued;
    if (r->queue_head == NO_FETCH)
        r->queue_tail = NO_FETCH;
    return f;
}

/* A fetching thread: takes queued fetches one at a time, with a client of
 * its own (a client serves one thread), until the remote is freed. */
static void *fetcher(void *arg)
{
    struct remote_debuginfo *r = arg;
    debuginfod_client *client = r->begin();
    if (client) {
        r->set_user_data(client, r);
        r->set_progressfn(client, stop_when_stopping);
    }
    pthread_mutex_lock(&r->lock);
    for (;;) {
        struct fetch *f;
        while (!(f = next_queued(r)) && !atomic_load(&r->stopping))
            pthread_cond_wait(&r->queued, &r->lock);
        if (atomic_load(&r->stopping))
            break;
        f->state = FETCH_RUNNING;
        struct fetch ask = *f;   /* the array may grow while the lock is let go */
        size_t at = (size_t)(f - r->fetches);
        pthread_mutex_unlock(&r->lock);
        char *path = NULL;
        int fd = !client ? -ENOMEM
                 : (ask.debuginfo ? r->find_debuginfo
                                  : r->find_executable)(client, ask.id, (int)ask.len, &path);
        if (fd >= 0)
            close(fd);
        else
            free(path);
        pthread_mutex_lock(&r->lock);
        f = &r->fetches[at];
        f->state = FETCH_DONE;
        f->path = fd >= 0 ? path : NULL;
        f->error = fd >= 0 ? 0 : fd;
        f->done_ns = monotonic_ns();
        pthread_cond_broadcast(&r->done);
    }
    pthread_mutex_unlock(&r->lock);
    if (client)
        r->end(client);
    return NULL;
}

struct remote_debuginfo *remote_debuginfo_new(const char *const *urls, size_t nurls,
                                              size_t fetches, int64_t timeout_s,
                                              const char *cache_dir, int64_t retry_ns, char *err,
                                              size_t errlen)
{
    if (fetches > REMOTE_DEBUGINFO_MAX_FETCHES)
        fetches = REMOTE_DEBUGINFO_MAX_FETCHES;
    size_t len = 1;
    for (size_t i = 0; i < nurls; i++)
        len += strlen(urls[i]) + 1;
    char *joined = calloc(1, len);
    if (!joined)
        abort();
    for (size_t i = 0; i < nurls; i++) {
        strcat(joined, i ? " " : "");
        strcat(joined, urls[i]);
    }
    char timeout[32];
    snprintf(timeout, sizeof(timeout), "%lld", (long long)(timeout_s > 0 ? timeout_s : 1));
    int rc = setenv(DEBUGINFOD_URLS_ENV_VAR, joined, 1) | setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, timeout, 1) |
             (cache_dir && *cache_dir ? setenv(DEBUGINFOD_CACHE_PATH_ENV_VAR, cache_dir, 1) : 0);
    free(joined);
    struct remote_debuginfo *r = calloc(1, sizeof(*r));
    if (!r)
        abort();
    r->queue_head = r->queue_tail = NO_FETCH;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->queued, NULL);
    monotonic_cond_init(&r->done);   /* waits for a fetch's end */
    r->retry_ns = retry_ns;
    if (!load(r, err, errlen)) {
        remote_debuginfo_free(r);
        return NULL;
    }
    user_data_of = r->get_user_data;
    while (rc == 0 && r->nthreads < fetches &&
           pthread_create(&r->threads[r->nthreads], NULL, fetcher, r) == 0)
        r->nthreads++;
    if (rc != 0 || !r->nthreads) {
        snprintf(err, errlen, "cannot start a debuginfod client");
        remote_debuginfo_free(r);
        return NULL;
    }
    return r;
}

/* What a file is found by in r->by_file. */
static uint64_t file_key(bool debuginfo, const unsigned char *id, size_t len)
{
    return hash_mix(hash_bytes(id, len), debuginfo);
}

/* The fetch of that file (r->lock held), or NULL when it was never asked
 * for (or, should two files' keys ever agree, when the other was asked
 * for last: this one is then fetched again, which costs a fetch, no
 * more). */
static struct fetch *known_fetch(struct remote_debuginfo *r, bool debuginfo,
                                 const unsigned char *id, size_t len)
{
    uint32_t at;
    if (!key_map_get(&r->by_file, file_key(debuginfo, id, len), &at))
        return NULL;
    struct fetch *f = &r->fetches[at];
    return f->debuginfo == debuginfo && f->len == len && !memcmp(f->id, id, len) ? f : NULL;
}

/* Has f, new or done, fetched (again) by a fetching thread (r->lock held). */
static void queue(struct remote_debuginfo *r, struct fetch *f)
{
    f->state = FETCH_QUEUED;
    f->waited = false;
    f->next_queued = NO_FETCH;
    size_t at = (size_t)(f - r->fetches);
    if (r->queue_tail == NO_FETCH)
        r->queue_head = at;
    else
        r->fetches[r->queue_tail].next_queued = at;
    r->queue_tail = at;
    pthread_cond_signal(&r->queued);
}

/* The fetch of that file (r->lock held), asked for now when it never was,
 * or when it failed retry_ns ago or more. */
static struct fetch *fetch_of(struct remote_debuginfo *r, bool debuginfo,
                              const unsigned char *id, size_t len)
{
    struct fetch *f = known_fetch(r, debuginfo, id, len);
    if (!f) {
        r->fetches = grow_array(r->fetches, &r->fetches_cap, r->nfetches + 1, sizeof(*f));
        key_map_put(&r->by_file, file_key(debuginfo, id, len), (uint32_t)r->nfetches);
        f = &r->fetches[r->nfetches++];
        *f = (struct fetch){.debuginfo = debuginfo, .len = len};
        memcpy(f->id, id, len);
        queue(r, f);
    } else if (f->state == FETCH_DONE && !f->path && monotonic_ns() - f->done_ns >= r->retry_ns) {
        queue(r, f);
    }
    return f;
}

/* The file of that kind and build-id: an open descriptor with *path set
 * (malloc'd); -EAGAIN while it is being fetched (the first caller with
 * time left waits for it until deadline_ns, later ones not at all); else
 * a negative errno. */
static int find(struct remote_debuginfo *r, bool debuginfo, const unsigned char *id, size_t len,
                int64_t deadline_ns, char **path)
{
    if (!len || len > MAX_BUILD_ID)
        return -EINVAL;
    pthread_mutex_lock(&r->lock);
    struct fetch *f = fetch_of(r, debuginfo, id, len);
    size_t at = (size_t)(f - r->fetches);
    if (f->state != FETCH_DONE && !f->waited && deadline_ns > monotonic_ns()) {
        f->waited = true;
        struct timespec until = {deadline_ns / 1000000000, deadline_ns % 1000000000};
        while (r->fetches[at].state != FETCH_DONE && !atomic_load(&r->stopping) &&
               pthread_cond_timedwait(&r->done, &r->lock, &until) != ETIMEDOUT)
            ;
        f = &r->fetches[at];
    }
    int rc = f->state != FETCH_DONE ? -EAGAIN : f->path ? 0 : f->error;
    char *copy = rc == 0 ? strdup(f->path) : NULL;
    pthread_mutex_unlock(&r->lock);
    if (rc < 0)
        return rc;
    int fd = copy ? open(copy, O_RDONLY | O_CLOEXEC) : -ENOMEM;
    if (fd < 0) {   /* gone from the client's cache since: fetched again */
        fd = copy ? -errno : fd;
        free(copy);
        pthread_mutex_lock(&r->lock);
        if (r->fetches[at].state == FETCH_DONE) {   /* else another caller queued it again */
            free(r->fetches[at].path);
            r->fetches[at].path = NULL;
            queue(r, &r->fetches[at]);
        }
        pthread_mutex_unlock(&r->lock);
        return fd;
    }
    *path = copy;
    return fd;
}

/* The raw bytes of hex build-id into id; how many, 0 when it is not hex. */
static size_t id_bytes(const char *hex, unsigned char *id)
{
    size_t n = 0;
    for (; hex[0] && n < MAX_BUILD_ID; hex += 2) {
        int b = hex_byte(hex);
        if (b < 0)
            return 0;
        id[n++] = (unsigned char)b;
    }
    return hex[0] ? 0 : n;
}

char *remote_debuginfo_executable(struct remote_debuginfo *r, const char *build_id,
                                  int64_t deadline_ns, char *err, size_t errlen, bool *pending)
{
    unsigned char id[MAX_BUILD_ID];
    char *path = NULL;
    int fd = find(r, false, id, id_bytes(build_id, id), deadline_ns, &path);
    *pending = fd == -EAGAIN;
    if (fd < 0) {
        snprintf(err, errlen, "debuginfod: %s", *pending ? "still being fetched" : strerror(-fd));
        return NULL;
    }
    close(fd);
    return path;
}

int remote_debuginfo_debug_file(struct remote_debuginfo *r, const unsigned char *build_id,
                                size_t len, int64_t deadline_ns, char **path)
{
    return find(r, true, build_id, len, deadline_ns, path);
}

bool remote_debuginfo_debug_file_settled(struct remote_debuginfo *r, const char *build_id)
{
    unsigned char id[MAX_BUILD_ID];
    size_t len = id_bytes(build_id, id);
    pthread_mutex_lock(&r->lock);
    const struct fetch *f = known_fetch(r, true, id, len);
    bool settled = !f || f->state == FETCH_DONE;
    pthread_mutex_unlock(&r->lock);
    return settled;
}

void remote_debuginfo_free(struct remote_debuginfo *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    atomic_store(&r->stopping, true);
    pthread_cond_broadcast(&r->queued);
    pthread_cond_broadcast(&r->done);
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < r->nthreads; i++)
        pthread_join(r->threads[i], NULL);
    for (size_t i = 0; i < r->nfetches; i++)
        free(r->fetches[i].path);
    free(r->fetches);
    key_map_free(&r->by_file);
    /* The library stays loaded: what it and libcurl keep for the process
     * (per-thread state of the fetching threads among it) is theirs to
     * keep, and reachable only through them (dlopen of it again is the
     * same handle). */
    pthread_cond_destroy(&r->done);
    pthread_cond_destroy(&r->queued);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
