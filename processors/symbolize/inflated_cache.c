// SPDX-License-Identifier: Apache-2.0
#include "inflated_cache.h"

#include "../../lib/file_io.h"
#include "../../lib/grow.h"

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

#define COPY_CHUNK (128u << 10)
#define MAX_BUILD_ID 64
#define MAX_SECTION (UINT64_C(1) << 40)

struct inflated_cache {
    char *dir;
    uint64_t max_bytes;
    struct inflated_cache_stats stats;
    char last_error[256];
};

struct inflated_cache *inflated_cache_new(const char *dir, uint64_t max_bytes)
{
    struct inflated_cache *c = calloc(1, sizeof(*c));
    if (!c || !(c->dir = strdup(dir)))
        abort();
    c->max_bytes = max_bytes;
    return c;
}

void inflated_cache_free(struct inflated_cache *c)
{
    if (!c)
        return;
    free(c->dir);
    free(c);
}

struct inflated_cache_stats inflated_cache_stats(const struct inflated_cache *c)
{
    return c->stats;
}

const char *inflated_cache_last_error(const struct inflated_cache *c)
{
    return c->last_error;
}

/* ---- the copy ---- */

/* A section as the copy lays it out. */
struct section {
    GElf_Shdr sh;            /* the copy's header (offset, size, flags) */
    uint64_t from, stored;   /* where its bytes are in the source, how many */
    uint32_t compression;    /* ELFCOMPRESS_*, 0 when stored plainly */
};

/* What the source file looks like to the copy. */
struct layout {
    struct section *sections;   /* in header order */
    size_t n;
    struct section **moved;     /* those after the prefix, in the copy's order */
    size_t nmoved;
    uint64_t prefix;         /* bytes copied as they are: up to the first
                              * compressed section */
    uint64_t inflated_size;  /* the copy's size */
    int elf_class;
};

static uint64_t align_up(uint64_t at, uint64_t align)
{
    return align > 1 ? (at + align - 1) / align * align : at;
}

static int by_source_offset(const void *a, const void *b)
{
    const struct section *x = *(const struct section *const *)a;
    const struct section *y = *(const struct section *const *)b;
    return x->from < y->from ? -1 : x->from > y->from;
}

/* Reads the compression header of a section stored at offset off of fd
 * (in the host's byte order, which plan requires). */
static bool read_chdr(int fd, int elf_class, uint64_t off, GElf_Chdr *ch)
{
    if (elf_class == ELFCLASS64) {
        Elf64_Chdr h;
        if (pread(fd, &h, sizeof(h), (off_t)off) != sizeof(h))
            return false;
        *ch = (GElf_Chdr){h.ch_type, h.ch_reserved, h.ch_size, h.ch_addralign};
        return true;
    }
    Elf32_Chdr h;
    if (pread(fd, &h, sizeof(h), (off_t)off) != sizeof(h))
        return false;
    *ch = (GElf_Chdr){h.ch_type, 0, h.ch_size, h.ch_addralign};
    return true;
}

/* Reads the section headers of elf (open on fd) and plans the copy: false
 * when the file has no compressed section or a layout the copy would
 * break. */
static bool plan(Elf *elf, int fd, struct layout *l)
{
    GElf_Ehdr eh;
    size_t n, nph;
    static const uint16_t host_order = 1;
    int host_data = *(const uint8_t *)&host_order ? ELFDATA2LSB : ELFDATA2MSB;
    if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != host_data ||
        elf_getshdrnum(elf, &n) != 0 || n < 2)
        return false;
    l->elf_class = eh.e_ident[EI_CLASS];
    uint64_t chdr_size = l->elf_class == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
    l->sections = calloc(n, sizeof(*l->sections));
    l->moved = calloc(n, sizeof(*l->moved));
    if (!l->sections || !l->moved)
        abort();
    l->n = n;
    l->prefix = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        struct section *s = &l->sections[i];
        Elf_Scn *scn = elf_getscn(elf, i);
        if (!scn || !gelf_getshdr(scn, &s->sh))
            return false;
        s->from = s->sh.sh_offset;
        s->stored = s->sh.sh_type == SHT_NOBITS ? 0 : s->sh.sh_size;
        GElf_Chdr ch;
        if ((s->sh.sh_flags & SHF_COMPRESSED) && s->stored) {
            if (s->stored < chdr_size || !read_chdr(fd, l->elf_class, s->from, &ch) ||
                (ch.ch_type != ELFCOMPRESS_ZLIB && ch.ch_type != ELFCOMPRESS_ZSTD))
                return false;
            s->compression = ch.ch_type;
            s->from += chdr_size;   /* the compressed stream */
            s->stored -= chdr_size;
            s->sh.sh_size = ch.ch_size;
            s->sh.sh_addralign = ch.ch_addralign;
            s->sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
            if (s->sh.sh_offset < l->prefix)
                l->prefix = s->sh.sh_offset;
        }
    }
    if (l->prefix == UINT64_MAX)
        return false;
    /* The headers and segments stay where they are: the copy keeps the
     * program headers, and elfutils finds notes through them. */
    if (elf_getphdrnum(elf, &nph) != 0 || eh.e_phoff + (uint64_t)nph * eh.e_phentsize > l->prefix)
        return false;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || (ph.p_filesz && ph.p_offset + ph.p_filesz > l->prefix))
            return false;
    }
    /* Sections from the first compressed one on are laid out again, in
     * file order; none may straddle that point. */
    for (size_t i = 0; i < n; i++) {
        struct section *s = &l->sections[i];
        if (s->stored && s->from < l->prefix && s->from + s->stored > l->prefix)
            return false;
        if (s->stored && s->from >= l->prefix)
            l->moved[l->nmoved++] = s;
    }
    qsort(l->moved, l->nmoved, sizeof(*l->moved), by_source_offset);
    uint64_t at = l->prefix;
    for (size_t i = 0; i < l->nmoved; i++) {
        struct section *s = l->moved[i];
        if (s->sh.sh_addralign > 4096 || s->sh.sh_size > MAX_SECTION)
            return false;   /* not a real file's: no sum below may wrap */
        at = align_up(at, s->sh.sh_addralign);
        s->sh.sh_offset = at;
        at += s->sh.sh_size;
    }
    l->inflated_size = at;
    return true;
}

/* Copies len bytes of in from offset from to out's current position. */
static bool copy_bytes(int in, uint64_t from, uint64_t len, int out, uint8_t *buf)
{
    while (len) {
        ssize_t n = pread(in, buf, len < COPY_CHUNK ? len : COPY_CHUNK, (off_t)from);
        if (n <= 0 || write_all(out, buf, (size_t)n) < 0)
            return false;
        from += (uint64_t)n;
        len -= (uint64_t)n;
    }
    return true;
}

/* Inflates a zlib stream of len bytes at offset from of in into out; true
 * when it gives exactly want bytes. */
static bool inflate_zlib(int in, uint64_t from, uint64_t len, int out, uint64_t want,
                         uint8_t *src, uint8_t *dst)
{
    z_stream z = {0};
    if (inflateInit(&z) != Z_OK)
        return false;
    uint64_t got = 0;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (!z.avail_in && len) {
            ssize_t n = pread(in, src, len < COPY_CHUNK ? len : COPY_CHUNK, (off_t)from);
            if (n <= 0)
                break;
            z.next_in = src;
            z.avail_in = (uInt)n;
            from += (uint64_t)n;
            len -= (uint64_t)n;
        }
        z.next_out = dst;
        z.avail_out = COPY_CHUNK;
        rc = inflate(&z, Z_NO_FLUSH);
        size_t made = COPY_CHUNK - z.avail_out;
        got += made;
        if ((rc != Z_OK && rc != Z_STREAM_END) || got > want || write_all(out, dst, made) < 0 ||
            (!made && !z.avail_in && !len))   /* cut short: nothing more will come */
            break;
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END && got == want;
}

/* The same for a zstd frame. */
static bool inflate_zstd(int in, uint64_t from, uint64_t len, int out, uint64_t want,
                         uint8_t *src, uint8_t *dst)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    if (!z)
        abort();
    uint64_t got = 0;
    size_t rc = 1;   /* 0: a frame ended */
    ZSTD_inBuffer input = {src, 0, 0};
    while (rc != 0) {
        if (input.pos == input.size && len) {
            ssize_t n = pread(in, src, len < COPY_CHUNK ? len : COPY_CHUNK, (off_t)from);
            if (n <= 0)
                break;
            input = (ZSTD_inBuffer){src, (size_t)n, 0};
            from += (uint64_t)n;
            len -= (uint64_t)n;
        }
        ZSTD_outBuffer output = {dst, COPY_CHUNK, 0};
        rc = ZSTD_decompressStream(z, &output, &input);
        got += output.pos;
        if (ZSTD_isError(rc) || got > want || write_all(out, dst, output.pos) < 0 ||
            (!output.pos && input.pos == input.size && !len))   /* cut short */
            break;
    }
    ZSTD_freeDStream(z);
    return rc == 0 && got == want;
}

/* Writes a section header as the file's class stores it. */
static bool write_shdr(int out, int elf_class, const GElf_Shdr *s)
{
    if (elf_class == ELFCLASS64) {
        Elf64_Shdr h = {s->sh_name, s->sh_type, s->sh_flags, s->sh_addr, s->sh_offset,
                        s->sh_size, s->sh_link, s->sh_info, s->sh_addralign, s->sh_entsize};
        return write_all(out, &h, sizeof(h)) == 0;
    }
    Elf32_Shdr h = {s->sh_name, s->sh_type, (Elf32_Word)s->sh_flags, (Elf32_Addr)s->sh_addr,
                    (Elf32_Off)s->sh_offset, (Elf32_Word)s->sh_size, s->sh_link, s->sh_info,
                    (Elf32_Word)s->sh_addralign, (Elf32_Word)s->sh_entsize};
    return write_all(out, &h, sizeof(h)) == 0;
}

/* Pads out with zeros from at to to. */
static bool pad(int out, uint64_t at, uint64_t to)
{
    static const uint8_t zeros[64];
    while (at < to) {
        size_t n = to - at < sizeof(zeros) ? (size_t)(to - at) : sizeof(zeros);
        if (write_all(out, zeros, n) < 0)
            return false;
        at += n;
    }
    return true;
}

/* Writes the copy planned in l from in to out (empty, at offset 0). */
static bool write_copy(int in, const struct layout *l, int out)
{
    uint8_t *src = must_malloc(COPY_CHUNK), *dst = must_malloc(COPY_CHUNK);
    bool ok = copy_bytes(in, 0, l->prefix, out, src);
    uint64_t at = l->prefix;
    for (size_t i = 0; ok && i < l->nmoved; i++) {
        const struct section *s = l->moved[i];
        ok = pad(out, at, s->sh.sh_offset);
        if (ok && s->compression == ELFCOMPRESS_ZLIB)
            ok = inflate_zlib(in, s->from, s->stored, out, s->sh.sh_size, src, dst);
        else if (ok && s->compression == ELFCOMPRESS_ZSTD)
            ok = inflate_zstd(in, s->from, s->stored, out, s->sh.sh_size, src, dst);
        else if (ok)
            ok = copy_bytes(in, s->from, s->stored, out, src);
        at = s->sh.sh_offset + s->sh.sh_size;
    }
    uint64_t shoff = align_up(at, 8);
    ok = ok && pad(out, at, shoff);
    for (size_t i = 0; ok && i < l->n; i++)
        ok = write_shdr(out, l->elf_class, &l->sections[i].sh);
    /* The section header table's new place, in the ELF header. */
    if (l->elf_class == ELFCLASS64) {
        Elf64_Off off = shoff;
        ok = ok && pwrite(out, &off, sizeof(off), offsetof(Elf64_Ehdr, e_shoff)) == sizeof(off);
    } else {
        Elf32_Off off = (Elf32_Off)shoff;
        ok = ok && shoff == off &&
             pwrite(out, &off, sizeof(off), offsetof(Elf32_Ehdr, e_shoff)) == sizeof(off);
    }
    free(src);
    free(dst);
    return ok;
}

/* ---- the directory ---- */

struct entry {
    char *name;
    off_t size;
    struct timespec used;
};

static int by_last_use(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec)
        return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* Removes the least recently used files until the directory holds at
 * most max_bytes. */
static void trim(struct inflated_cache *c)
{
    DIR *d = opendir(c->dir);
    if (!d)
        return;
    struct entry *e = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    for (struct dirent *de; (de = readdir(d));) {
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        e = grow_array(e, &cap, n + 1, sizeof(*e));
        if (!(e[n].name = strdup(de->d_name)))
            abort();
        e[n].size = st.st_size;
        e[n++].used = st.st_mtim;
        total += (uint64_t)st.st_size;
    }
    qsort(e, n, sizeof(*e), by_last_use);
    for (size_t i = 0; i < n; i++) {
        if (total > c->max_bytes && unlinkat(dirfd(d), e[i].name, 0) == 0)
            total -= (uint64_t)e[i].size;
        free(e[i].name);
    }
    free(e);
    closedir(d);
}

/* True when some section of elf is compressed. */
static bool has_compressed_section(Elf *elf)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS)
            return true;
    }
    return false;
}

/* True when fd is an ELF file with that build-id and no compressed
 * section: a copy this cache made. */
static bool is_copy_of(int fd, const void *id, size_t id_len)
{
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    const void *found;
    bool ok = elf && dwelf_elf_gnu_build_id(elf, &found) == (ssize_t)id_len &&
              !memcmp(found, id, id_len) && !has_compressed_section(elf);
    elf_end(elf);
    return ok;
}

/* Makes the copy of in at path through a temporary file: its descriptor,
 * or -1 when it could not be made (nothing is left behind). */
static int make_copy(struct inflated_cache *c, int in, const struct layout *l, const char *path)
{
    char *tmp = must_asprintf("%s.tmp.XXXXXX", path);
    int out = make_parents(tmp) == 0 ? mkostemp(tmp, O_CLOEXEC) : -1;
    bool ok = out >= 0;
    if (ok) {
        errno = 0;   /* bad compressed data sets none */
        ok = write_copy(in, l, out) && fchmod(out, 0644) == 0 && rename(tmp, path) == 0;
    }
    if (!ok)
        snprintf(c->last_error, sizeof(c->last_error), "%s: %s", out < 0 ? c->dir : path,
                 errno ? strerror(errno) : "bad compressed section");
    if (!ok && out >= 0) {
        close(out);
        unlink(tmp);
        out = -1;
    }
    free(tmp);
    if (ok)
        trim(c);
    return out;
}

/* Plans and makes the copy of elf (open on fd) at path: its descriptor,
 * or -1 (counted when the plan was possible but the copy failed). */
static int make_from(struct inflated_cache *c, Elf *elf, int fd, const char *path)
{
    struct layout l = {0};
    int copy = -1;
    if (plan(elf, fd, &l) && l.inflated_size <= c->max_bytes) {
        copy = make_copy(c, fd, &l, path);
        if (copy >= 0)
            c->stats.made++;
        else
            c->stats.failed++;
    }
    free(l.sections);
    free(l.moved);
    return copy;
}

int inflated_cache_open(struct inflated_cache *c, int fd)
{
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    const void *id;
    ssize_t id_len = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
    int copy = -1;
    if (id_len > 0 && id_len <= MAX_BUILD_ID && has_compressed_section(elf)) {
        char hex[2 * MAX_BUILD_ID + 1];
        for (ssize_t i = 0; i < id_len; i++)
            snprintf(hex + 2 * i, 3, "%02x", ((const uint8_t *)id)[i]);
        char *path = must_asprintf("%s/%s", c->dir, hex);
        if ((copy = open(path, O_RDONLY | O_CLOEXEC)) >= 0 && is_copy_of(copy, id, (size_t)id_len)) {
            futimens(copy, NULL);   /* its last use, for trim */
            c->stats.found++;
        } else {
            if (copy >= 0)
                close(copy);
            copy = make_from(c, elf, fd, path);
        }
        free(path);
    }
    elf_end(elf);
    if (copy < 0)
        return fd;
    close(fd);
    return copy;
}
