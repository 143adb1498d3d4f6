// SPDX-License-Identifier: Apache-2.0
#include "dir_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/clock.h"
#include "../../lib/hash.h"

/* Directories kept open: a path's entry is in one of DIR_PROBE slots from
 * the one its hash names. */
#define DIR_SLOTS 64
#define DIR_PROBE 8
/* How long an open directory is used before it is opened again: a file
 * written this soon after its directory was renamed lands in the renamed
 * one, as a file written just before the rename would. */
#define DIR_TTL_NS 100000000LL

struct dir_entry {
    char *path;
    uint64_t hash;
    int fd;
    int users;         /* holders between get and put */
    unsigned slot;     /* its slot while the cache has it; else its last holder frees it */
    int64_t opened_ns;
};

struct dir_cache {
    pthread_mutex_t lock;
    struct dir_entry *slots[DIR_SLOTS];
};

static void entry_free(struct dir_entry *e)
{
    close(e->fd);
    free(e->path);
    free(e);
}

/* Called with the lock held: whether the cache has e. */
static bool cached(const struct dir_cache *c, const struct dir_entry *e)
{
    return c->slots[e->slot] == e;
}

/* Called with the lock held: e leaves its slot, freed now or by its last holder. */
static void evict(struct dir_cache *c, struct dir_entry *e)
{
    c->slots[e->slot] = NULL;
    if (e->users == 0)
        entry_free(e);
}

struct dir_cache *dir_cache_new(void)
{
    struct dir_cache *c = calloc(1, sizeof(*c));
    if (c)
        pthread_mutex_init(&c->lock, NULL);
    return c;
}

void dir_cache_free(struct dir_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < DIR_SLOTS; i++)
        if (c->slots[i])
            entry_free(c->slots[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* A new entry for path, opened, held once; NULL with errno. */
static struct dir_entry *entry_open(const char *path, size_t len, uint64_t hash)
{
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct dir_entry *e = malloc(sizeof(*e));
    char *copy = malloc(len + 1);
    if (!e || !copy) {
        free(e);
        free(copy);
        close(fd);
        errno = ENOMEM;
        return NULL;
    }
    memcpy(copy, path, len + 1);
    *e = (struct dir_entry){copy, hash, fd, 1, 0, monotonic_ns()};
    return e;
}

/* Called with the lock held: the slot of dir's entry when it is there and
 * fresh (*hit set), else the slot a new entry for it goes to: its stale
 * entry's, an empty one, or the one opened longest ago. */
static unsigned slot_of(struct dir_cache *c, const char *dir, uint64_t hash, int64_t now, bool *hit)
{
    unsigned victim = hash % DIR_SLOTS;
    for (unsigned k = 0; k < DIR_PROBE; k++) {
        unsigned i = (unsigned)((hash + k) % DIR_SLOTS);
        struct dir_entry *e = c->slots[i];
        if (e && e->hash == hash && !strcmp(e->path, dir)) {
            *hit = now - e->opened_ns < DIR_TTL_NS;
            return i;
        }
        struct dir_entry *v = c->slots[victim];
        if (v && (!e || e->opened_ns < v->opened_ns))
            victim = i;
    }
    *hit = false;
    return victim;
}

struct dir_entry *dir_cache_get(struct dir_cache *c, const char *dir, int *fd)
{
    size_t len = strlen(dir);
    uint64_t hash = hash_bytes(dir, len);
    int64_t now = monotonic_ns();
    bool hit;
    pthread_mutex_lock(&c->lock);
    unsigned i = slot_of(c, dir, hash, now, &hit);
    struct dir_entry *e = c->slots[i];
    if (hit) {
        e->users++;
        pthread_mutex_unlock(&c->lock);
        *fd = e->fd;
        return e;
    }
    pthread_mutex_unlock(&c->lock);
    /* Opened without the lock: a path walk is what the cache saves the others. */
    struct dir_entry *fresh = entry_open(dir, len, hash);
    if (!fresh)
        return NULL;
    pthread_mutex_lock(&c->lock);
    if (c->slots[i])
        evict(c, c->slots[i]);
    fresh->slot = i;
    c->slots[i] = fresh;
    pthread_mutex_unlock(&c->lock);
    *fd = fresh->fd;
    return fresh;
}

/* Drops one hold of e, evicting it first when forget is set. */
static void release(struct dir_cache *c, struct dir_entry *e, bool forget)
{
    pthread_mutex_lock(&c->lock);
    e->users--;
    if (forget && cached(c, e))
        evict(c, e);
    else if (!cached(c, e) && e->users == 0)
        entry_free(e);
    pthread_mutex_unlock(&c->lock);
}

void dir_cache_put(struct dir_cache *c, struct dir_entry *e)
{
    release(c, e, false);
}

void dir_cache_forget(struct dir_cache *c, struct dir_entry *e)
{
    release(c, e, true);
}
