// SPDX-License-Identifier: Apache-2.0
/*
 * The directories an exporter writes into, kept open: a file made by
 * descriptor (openat, linkat) costs the kernel a walk of its own name, not
 * of every directory above it. An entry is opened again once it is 100 ms
 * old, so a directory renamed or replaced meanwhile is followed within
 * 100 ms. Thread-safe: consumers of one exporter share the cache.
 */
#ifndef PROFD_PPROF_FILE_DIR_CACHE_H
#define PROFD_PPROF_FILE_DIR_CACHE_H

struct dir_cache;
struct dir_entry;

/* An empty cache; NULL when out of memory. */
struct dir_cache *dir_cache_new(void);
/* Closes every directory of c and frees it; no entry may be held. Accepts NULL. */
void dir_cache_free(struct dir_cache *c);
/* The open directory dir (a path), held until given back with
 * dir_cache_put or dir_cache_forget; its descriptor (O_PATH) in *fd. NULL
 * with errno (ENOENT: it does not exist) when it cannot be opened. */
struct dir_entry *dir_cache_get(struct dir_cache *c, const char *dir, int *fd);
/* Gives back an entry dir_cache_get handed out. */
void dir_cache_put(struct dir_cache *c, struct dir_entry *e);
/* Gives back an entry whose directory was found gone: the next
 * dir_cache_get of its path opens it again. */
void dir_cache_forget(struct dir_cache *c, struct dir_entry *e);

#endif
