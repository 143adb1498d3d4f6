// SPDX-License-Identifier: Apache-2.0
#include "binary_lookup.h"

#include "file_io.h"
#include "own_vdso.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *copy(const char *s)
{
    char *c = strdup(s);
    if (!c)
        abort();
    return c;
}

/* Copies of the n items, "~/" made $HOME's when home (kept as it is
 * without HOME). */
static char **copy_all(const char *const *items, size_t n, bool home)
{
    char **out = calloc(n ? n : 1, sizeof(*out));
    if (!out)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!home || !(out[i] = expand_home(items[i])))
            out[i] = copy(items[i]);
    return out;
}

void binary_lookup_init(struct binary_lookup *l, const char *const *dirs, size_t ndirs,
                        const char *const *remap_from, const char *const *remap_to,
                        size_t nremaps, bool recorded_path)
{
    elf_version(EV_CURRENT);
    l->dirs = copy_all(dirs, ndirs, true);
    l->ndirs = ndirs;
    l->remap_from = copy_all(remap_from, nremaps, false);
    l->remap_to = copy_all(remap_to, nremaps, true);
    l->nremaps = nremaps;
    l->recorded_path = recorded_path;
}

void binary_lookup_hex(const unsigned char *id, size_t n, char out[41])
{
    if (n > 20)
        n = 20;
    while (n >= 4 && !memcmp(id + n - 4, "\0\0\0\0", 4))
        n -= 4;
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    out[2 * n] = 0;
}

void binary_lookup_jit_map_name(int32_t pid, char *name, size_t size)
{
    snprintf(name, size, "/tmp/perf-%d.map", (int)pid);
}

bool binary_lookup_is_jit_map(const char *filename, int32_t *pid)
{
    int n = 0, end = 0;
    if (sscanf(filename, "/tmp/perf-%d.map%n", &n, &end) != 1 || !end || filename[end] || n <= 0)
        return false;
    *pid = n;
    return true;
}

size_t binary_lookup_path_length(const char *filename)
{
    static const char deleted[] = " (deleted)";
    size_t len = strlen(filename), n = sizeof(deleted) - 1;
    return len >= n && !strcmp(filename + len - n, deleted) ? len - n : len;
}

bool binary_lookup_is_elf(const char *path, const char *want)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    bool ok = elf && elf_kind(elf) == ELF_K_ELF;
    if (ok && *want) {
        const void *id;
        ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
        char hex[41] = "";
        if (n > 0)
            binary_lookup_hex(id, (size_t)n, hex);
        char trimmed[41];
        snprintf(trimmed, sizeof(trimmed), "%s", want);
        for (size_t len = strlen(trimmed); len >= 8 && !strcmp(trimmed + len - 8, "00000000");
             len -= 8)
            trimmed[len - 8] = 0;
        ok = n > 0 && !strcmp(hex, trimmed);
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return ok;
}

/* Looks for the file with build_id in directory dir by build-id:
 * .build-id/xx/rest, its .debug, and perf's .build-id/xx/rest/elf. True,
 * with the path in path[size], when one is there. */
static bool in_build_id_layouts(const char *dir, const char *build_id, char *path, size_t size)
{
    static const char *const layouts[] = {"%s/.build-id/%.2s/%s", "%s/.build-id/%.2s/%s.debug",
                                          "%s/.build-id/%.2s/%s/elf"};
    for (size_t k = 0; strlen(build_id) > 2 && k < sizeof(layouts) / sizeof(*layouts); k++) {
        snprintf(path, size, layouts[k], dir, build_id, build_id + 2);
        if (binary_lookup_is_elf(path, build_id))
            return true;
    }
    return false;
}

/* The vDSO with build_id: this process's own (when recorded paths are
 * tried: the host's kernel maps the same one into every process), else,
 * by build-id only, perf's build-id cache copy ([vdso]/<id>/vdso) or a
 * file by build-id in the directories (a kernel's debug package). */
static char *find_vdso(const struct binary_lookup *l, const char *build_id)
{
    const char *own = l->recorded_path ? own_vdso_path() : NULL;
    if (own && binary_lookup_is_elf(own, build_id))
        return copy(own);
    char path[4096];
    for (size_t i = 0; *build_id && i < l->ndirs; i++) {
        snprintf(path, sizeof(path), "%s/[vdso]/%s/vdso", l->dirs[i], build_id);
        if (binary_lookup_is_elf(path, build_id) ||
            in_build_id_layouts(l->dirs[i], build_id, path, sizeof(path)))
            return copy(path);
    }
    return NULL;
}

char *binary_lookup_find(const struct binary_lookup *l, const char *recorded, const char *build_id)
{
    if (!strcmp(recorded, "[vdso]"))
        return find_vdso(l, build_id);
    char filename[4096], path[2 * 4096 + 2];   /* room for a directory and a file name */
    snprintf(filename, sizeof(filename), "%.*s", (int)binary_lookup_path_length(recorded), recorded);
    if (l->recorded_path && binary_lookup_is_elf(filename, build_id))
        return copy(filename);
    for (size_t i = 0; i < l->nremaps; i++) {
        size_t n = strlen(l->remap_from[i]);
        if (!strncmp(filename, l->remap_from[i], n) && (!filename[n] || filename[n] == '/')) {
            snprintf(path, sizeof(path), "%s%s", l->remap_to[i], filename + n);
            if (binary_lookup_is_elf(path, build_id))
                return copy(path);
        }
    }
    const char *slash = strrchr(filename, '/');
    const char *base = slash ? slash + 1 : filename;
    for (size_t i = 0; i < l->ndirs; i++) {
        if (in_build_id_layouts(l->dirs[i], build_id, path, sizeof(path)))
            return copy(path);
        snprintf(path, sizeof(path), "%s/%s", l->dirs[i], base);
        if (*base && binary_lookup_is_elf(path, build_id))
            return copy(path);
    }
    return NULL;
}

char *binary_lookup_debug_file(const struct binary_lookup *l, const unsigned char *id, size_t len,
                               char **refused)
{
    char hex[41], path[4096];
    binary_lookup_hex(id, len, hex);
    *refused = NULL;
    for (size_t i = 0; strlen(hex) > 2 && i < l->ndirs; i++) {
        snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", l->dirs[i], hex, hex + 2);
        if (binary_lookup_is_elf(path, hex)) {
            free(*refused);
            *refused = NULL;
            return copy(path);
        }
        if (!*refused && access(path, F_OK) == 0)
            *refused = copy(path);
    }
    return NULL;
}

void binary_lookup_free(struct binary_lookup *l)
{
    for (size_t i = 0; i < l->ndirs; i++)
        free(l->dirs[i]);
    for (size_t i = 0; i < l->nremaps; i++) {
        free(l->remap_from[i]);
        free(l->remap_to[i]);
    }
    free(l->dirs);
    free(l->remap_from);
    free(l->remap_to);
    *l = (struct binary_lookup){0};
}
