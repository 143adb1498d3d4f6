// SPDX-License-Identifier: Apache-2.0
#include "loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"

struct module {
    char *path;
    void *handle;
    const struct profd_plugin *plugin;
};

struct profd_loader {
    char **dirs;
    size_t ndirs, dirs_cap;
    struct module *mods;
    size_t nmods, mods_cap;
};

static const char *kind_prefix(enum profd_kind k)
{
    return k == PROFD_RECEIVER ? "receiver" : k == PROFD_PROCESSOR ? "processor" : "exporter";
}

static void add_dir(struct profd_loader *l, const char *dir)
{
    if (!*dir)
        return;
    profd_grow(&l->dirs, &l->dirs_cap, l->ndirs + 1, sizeof(*l->dirs));
    l->dirs[l->ndirs++] = profd_xstrdup(dir);
}

bool profd_executable_dir(char *dir)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    snprintf(dir, PATH_MAX, "%s", dirname(exe));
    return true;
}

struct profd_loader *profd_loader_create(const char *const *extra_dirs, size_t nextra)
{
    struct profd_loader *l = profd_xcalloc(1, sizeof(*l));
    for (size_t i = 0; i < nextra; i++)
        add_dir(l, extra_dirs[i]);
    const char *env = getenv("PROFD_MODULE_PATH");
    if (env) {
        char *copy = profd_xstrdup(env), *save = NULL;
        for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
            add_dir(l, t);
        free(copy);
    }
    char dir[PATH_MAX];
    if (profd_executable_dir(dir)) {
        char *a = profd_xasprintf("%s/modules", dir), *b = profd_xasprintf("%s/../lib/profd/modules", dir);
        add_dir(l, a);
        add_dir(l, b);
        free(a);
        free(b);
    }
    return l;
}

void profd_loader_destroy(struct profd_loader *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nmods; i++) {
        if (l->mods[i].handle)
            dlclose(l->mods[i].handle);
        free(l->mods[i].path);
    }
    for (size_t i = 0; i < l->ndirs; i++)
        free(l->dirs[i]);
    free(l->mods);
    free(l->dirs);
    free(l);
}

int profd_loader_check(const struct profd_plugin *p, const char *path, char *err, size_t errlen)
{
    if (p->abi_version != PROFD_ABI_VERSION) {
        snprintf(err, errlen, "%s: module built for ABI version %u, this profd speaks version %u",
                 path, p->abi_version, PROFD_ABI_VERSION);
        return -1;
    }
    if (p->struct_size != sizeof(struct profd_plugin)) {
        snprintf(err, errlen, "%s: module descriptor is %u bytes, this profd expects %zu", path,
                 p->struct_size, sizeof(struct profd_plugin));
        return -1;
    }
    if (!p->type || !p->create || !p->destroy ||
        (p->kind != PROFD_RECEIVER && !p->consume)) {
        snprintf(err, errlen, "%s: module descriptor lacks a required function", path);
        return -1;
    }
    return 0;
}

static const struct profd_plugin *open_module(struct profd_loader *l, const char *path, char *err,
                                              size_t errlen)
{
    for (size_t i = 0; i < l->nmods; i++)
        if (strcmp(l->mods[i].path, path) == 0)
            return l->mods[i].plugin;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "%s", dlerror());
        return NULL;
    }
    profd_plugin_entry_fn entry = (profd_plugin_entry_fn)dlsym(h, PROFD_PLUGIN_ENTRY_NAME);
    const struct profd_plugin *p = entry ? entry() : NULL;
    if (!p) {
        snprintf(err, errlen, "%s: no %s symbol: not a profd module", path,
                 PROFD_PLUGIN_ENTRY_NAME);
        dlclose(h);
        return NULL;
    }
    if (profd_loader_check(p, path, err, errlen) < 0) {
        dlclose(h);
        return NULL;
    }
    profd_grow(&l->mods, &l->mods_cap, l->nmods + 1, sizeof(*l->mods));
    l->mods[l->nmods++] = (struct module){profd_xstrdup(path), h, p};
    return p;
}

int profd_loader_register(struct profd_loader *l, const struct profd_plugin *p, char *err,
                          size_t errlen)
{
    if (profd_loader_check(p, p->type ? p->type : "(built-in)", err, errlen) < 0)
        return -1;
    profd_grow(&l->mods, &l->mods_cap, l->nmods + 1, sizeof(*l->mods));
    l->mods[l->nmods++] = (struct module){profd_xasprintf("(built-in %s)", p->type), NULL, p};
    return 0;
}

const struct profd_plugin *profd_loader_get(struct profd_loader *l, enum profd_kind kind,
                                            const char *type, char *err, size_t errlen)
{
    for (size_t i = 0; i < l->nmods; i++)
        if (!l->mods[i].handle && l->mods[i].plugin->kind == kind &&
            !strcmp(l->mods[i].plugin->type, type))
            return l->mods[i].plugin;
    char tried[2048] = "";
    for (size_t i = 0; i < l->ndirs; i++) {
        char *path = profd_xasprintf("%s/%s_%s.so", l->dirs[i], kind_prefix(kind), type);
        if (access(path, F_OK) == 0) {
            const struct profd_plugin *p = open_module(l, path, err, errlen);
            free(path);
            if (p && (p->kind != kind || strcmp(p->type, type) != 0)) {
                snprintf(err, errlen, "module for %s '%s' describes itself as %s '%s'",
                         kind_prefix(kind), type, kind_prefix(p->kind), p->type);
                return NULL;
            }
            return p;
        }
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? ", " : "", path);
        free(path);
    }
    snprintf(err, errlen, "no module for %s '%s' (looked for %s)", kind_prefix(kind), type,
             tried[0] ? tried : "nothing: the module search path is empty");
    return NULL;
}

/* Drops the module loaded last when one of its kind and type was loaded
 * among the first `before`: an earlier directory's (the one
 * profd_loader_get would take), or the same file reached by another path. */
static void drop_if_loaded_before(struct profd_loader *l, size_t before)
{
    if (l->nmods == before)
        return;   /* already loaded from this very path */
    const struct profd_plugin *p = l->mods[l->nmods - 1].plugin;
    for (size_t i = 0; i < before; i++)
        if (l->mods[i].plugin->kind == p->kind && !strcmp(l->mods[i].plugin->type, p->type)) {
            struct module *last = &l->mods[--l->nmods];
            dlclose(last->handle);
            free(last->path);
            return;
        }
}

size_t profd_loader_load_all(struct profd_loader *l, void (*warn)(const char *msg))
{
    for (size_t i = 0; i < l->ndirs; i++) {
        DIR *d = opendir(l->dirs[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 4 || strcmp(e->d_name + n - 3, ".so") != 0)
                continue;
            char *path = profd_xasprintf("%s/%s", l->dirs[i], e->d_name);
            char err[512];
            size_t before = l->nmods;
            if (!open_module(l, path, err, sizeof(err)))
                warn(err);
            else
                drop_if_loaded_before(l, before);
            free(path);
        }
        closedir(d);
    }
    return l->nmods;
}

const struct profd_plugin *profd_loader_at(const struct profd_loader *l, size_t i)
{
    return i < l->nmods ? l->mods[i].plugin : NULL;
}
