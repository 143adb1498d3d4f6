// SPDX-License-Identifier: Apache-2.0
#include "debug_search.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../../lib/binary_lookup.h"
#include "../../lib/grow.h"
#include "inflated_cache.h"

/* The build-id (20 bytes at most, into id) of the dwz file whose DWARF the
 * ELF file at path shares (its .gnu_debugaltlink section: the dwz file's
 * name, then its build-id), and that name (malloc'd) in *name; 0 when path
 * names none. */
static size_t dwz_link(const char *path, unsigned char id[20], char **name)
{
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
    size_t names;
    *name = NULL;
    for (Elf_Scn *scn = NULL; elf && elf_getshdrstrndx(elf, &names) == 0 &&
                              (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *section = gelf_getshdr(scn, &sh) ? elf_strptr(elf, names, sh.sh_name) : NULL;
        Elf_Data *d = section && !strcmp(section, ".gnu_debugaltlink") ? elf_getdata(scn, NULL)
                                                                        : NULL;
        const char *at = d ? d->d_buf : NULL, *end = at ? memchr(at, 0, d->d_size) : NULL;
        if (end && end + 1 < at + d->d_size) {
            len = (size_t)(at + d->d_size - (end + 1));
            len = len > 20 ? 20 : len;
            memcpy(id, end + 1, len);
            *name = must_strdup(at);
            break;
        }
    }
    elf_end(elf);
    if (fd >= 0)
        close(fd);
    return len;
}

/* The path of the dwz file name names, from the directory of the file at
 * path when name is relative (malloc'd). */
static char *dwz_path(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    return name[0] == '/' || !slash ? must_strdup(name)
                                    : must_asprintf("%.*s/%s", (int)(slash - path), path, name);
}

/* The file of build-id id that ds looks for (the debug file, or its dwz
 * file): in the lookup's directories, then at local (malloc'd, taken;
 * NULL: none) when it has that build-id, then from the fetch function.
 * Its descriptor with *path set (malloc'd), or -1: none here, or
 * (ds->fetch then DEBUG_PENDING, ds->waiting_for the build-id) still on
 * its way. *refused as binary_lookup_debug_file sets it. */
static int file_by_build_id(struct debug_search *ds, const unsigned char *id, size_t len,
                            char *local, char **path, char **refused)
{
    const struct elf_sources *src = ds->sources;
    char hex[41];
    binary_lookup_hex(id, len, hex);
    *refused = NULL;
    *path = src->lookup ? binary_lookup_debug_file(src->lookup, id, len, refused) : NULL;
    if (!*path && local && binary_lookup_is_elf(local, hex)) {
        *path = local;
        local = NULL;
    }
    free(local);
    int fd = *path ? open(*path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0 || !src->fetch)
        return fd;
    free(*path);
    *path = NULL;
    fd = src->fetch(src->fetch_arg, id, len, path);
    if (fd == -EAGAIN) {
        ds->fetch = DEBUG_PENDING;
        memcpy(ds->waiting_for, hex, sizeof(hex));
    } else if (fd >= 0 && ds->fetch != DEBUG_PENDING) {
        ds->fetch = DEBUG_FETCHED;
    }
    return fd < 0 ? -1 : fd;
}

int debug_search_inflated(const struct elf_sources *sources, int fd)
{
    return fd >= 0 && sources->inflated ? inflated_cache_open(sources->inflated, fd) : fd;
}

/* Whether the file at path has the CRC-32 crc over all its bytes, as the
 * .gnu_debuglink of a binary says of its debug file. */
static bool file_has_crc(const char *path, GElf_Word crc)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    enum { CHUNK = 1 << 16 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf)
        abort();
    uLong sum = crc32(0, NULL, 0);
    ssize_t n;
    while ((n = read(fd, buf, CHUNK)) > 0)
        sum = crc32(sum, buf, (uInt)n);
    free(buf);
    close(fd);
    return n == 0 && sum == crc;
}

/* Whether path is the file looked for by name: an ELF file with build-id
 * want (hex), or when that is not known ("") any ELF file, with CRC-32
 * crc when the debuglink gives one (not 0), as elfutils and gdb check. */
static bool is_the_file(const char *path, const char *want, GElf_Word crc)
{
    return binary_lookup_is_elf(path, want) && (*want || !crc || file_has_crc(path, crc));
}

/* The file named by its name where elfutils and gdb look by default:
 * name (debuglink_file, else the file name of the file asking, file_name,
 * with ".debug") beside file_name, in its .debug directory, then under
 * each debug directory at file_name's own directory; is_the_file says
 * which will do. Done here rather than by elfutils' search, which ends by
 * loading its debuginfod client (libdebuginfod and libcurl's
 * dependencies, 7 MB resident) even with no server configured: servers
 * are the fetch function's. Its descriptor with *found set (malloc'd), or
 * -1. */
static int file_by_name(const struct debug_search *ds, const char *file_name,
                        const char *debuglink_file, const char *want, GElf_Word crc,
                        char **found)
{
    const char *slash = strrchr(file_name, '/');
    int dir_len = slash ? (int)(slash - file_name) : 0;
    char *own_name = debuglink_file ? NULL
                                    : must_asprintf("%s.debug", slash ? slash + 1 : file_name);
    const char *name = debuglink_file ? debuglink_file : own_name;
    const struct binary_lookup *l = ds->sources->lookup;
    size_t ndirs = l ? l->ndirs : 0;
    int fd = -1;
    for (size_t i = 0; fd < 0 && i < ndirs + 2; i++) {
        char *path = i == 0   ? must_asprintf("%.*s/%s", dir_len, file_name, name)
                     : i == 1 ? must_asprintf("%.*s/.debug/%s", dir_len, file_name, name)
                              : must_asprintf("%s%.*s/%s", l->dirs[i - 2], dir_len, file_name,
                                              name);
        if (strcmp(path, file_name) && is_the_file(path, want, crc))
            fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            *found = path;
        else
            free(path);
    }
    free(own_name);
    return fd;
}

int debug_search_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                      const char *file_name, const char *debuglink_file,
                      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    struct debug_search *ds = *userdata;
    unsigned char dwz_id[20];
    const unsigned char *id = NULL;
    char *dwz_name = NULL, *path = NULL;
    /* elfutils asks for a dwz file with no CRC: a binary's debuglink (with
     * one) does not have the file it names opened to be told apart */
    size_t len = ds && file_name && debuglink_file && !debuglink_crc
                     ? dwz_link(file_name, dwz_id, &dwz_name)
                     : 0;
    char want[41] = "";   /* the build-id of the file looked for, when known */
    if (len && !strcmp(dwz_name, debuglink_file)) {
        id = dwz_id;
        binary_lookup_hex(id, len, want);
    } else {
        GElf_Addr vaddr;
        int n = dwfl_module_build_id(mod, &id, &vaddr);
        if (n > 0)
            binary_lookup_hex(id, (size_t)n, want);
        len = ds && n > 0 && file_name && !strcmp(file_name, ds->binary) ? (size_t)n : 0;
    }
    free(dwz_name);
    char *local = id == dwz_id ? dwz_path(file_name, debuglink_file) : NULL;
    char *refused = NULL;   /* a file at the debug file's build-id place that is not it */
    int fd = len ? file_by_build_id(ds, id, len, local, &path, &refused) : -1;
    if (ds && id != dwz_id && refused) {
        free(ds->refused_file);
        ds->refused_file = refused;
    } else {
        free(refused);
    }
    if (!ds)
        return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
                                            debuglink_file, debuglink_crc, debuginfo_file_name);
    /* still fetching: without it for now, rather than another file by name */
    if (fd < 0 && !(len && ds->fetch == DEBUG_PENDING)) {
        const char *named = file_name ? file_name : ds->binary;
        fd = file_by_name(ds, named, debuglink_file, want, debuglink_crc, &path);
        /* a symbolic link's debug file may be filed under what it links to */
        char *real = fd < 0 ? realpath(named, NULL) : NULL;
        if (real && strcmp(real, named))
            fd = file_by_name(ds, real, debuglink_file, want, debuglink_crc, &path);
        free(real);
    }
    if (fd < 0)
        return -1;
    ds->dwz_found |= id == dwz_id;
    free(*debuginfo_file_name);
    *debuginfo_file_name = path;
    return debug_search_inflated(ds->sources, fd);
}
