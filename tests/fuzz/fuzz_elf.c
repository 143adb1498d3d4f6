// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the symbolize processor's file readers on bytes written
 * to a memory file: ELF and DWARF (open, through an inflated copy when
 * sections are compressed, translate file offsets, symbolize addresses
 * across the loadable segments, in the binary and in a lane of it), the
 * kernel notes build-id, the kallsyms
 * table and a JIT perf map; the bytes as the DWARF package of a
 * split-DWARF build among the seeds, and as a package's unit index and
 * range lists of both versions; the demangler on the names found and on
 * the bytes themselves as a name. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../processors/symbolize/demangle.h"
#include "../../processors/symbolize/dwp.h"
#include "../../processors/symbolize/elf_symbols.h"
#include "../../processors/symbolize/gopclntab.h"
#include "../../processors/symbolize/inflated_cache.h"
#include "../../processors/symbolize/kernel_symbols.h"
#include "../../processors/symbolize/perf_map.h"
#include "../../lib/file_io.h"

/* The bytes as the DWARF package beside a split-DWARF build among the
 * seeds (whose own package is a seed too), symbolized across its code. */
static void as_package_of_seed_binary(const uint8_t *data, size_t len,
                                      const struct elf_sources *sources)
{
    static const char binary[] = "build-fuzz/package/inl", package[] = "build-fuzz/package/inl.dwp";
    static bool copied;
    if (!copied) {
        size_t n;
        char *bytes = read_small_file("tests/fuzz/seeds/elf/package-dwarf-5", 1 << 20, &n);
        bool dir = mkdir("build-fuzz/package", 0755) == 0 || errno == EEXIST;
        int fd = bytes && dir ? open(binary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
        copied = fd >= 0 && write_all(fd, bytes, n) == 0;
        if (fd >= 0)
            close(fd);
        free(bytes);
        if (!copied)
            abort();   /* run from the repository's root, as run.sh does */
    }
    int fd = open(package, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write_all(fd, data, len) != 0)
        abort();
    close(fd);
    char err[256];
    uint64_t text;
    struct elf_binary *b = elf_binary_open(binary, sources, err, sizeof(err));
    for (uint64_t a = 0; b && elf_binary_text(b, &text) && a < 0x300; a += 3) {
        struct elf_frame frames[16];
        elf_binary_frames(b, text + a, frames, 16);
    }
    elf_binary_close(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    int fd = memfd_create("elf", MFD_CLOEXEC);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char path[64], err[256];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    static struct inflated_cache *inflated;   /* in the fuzz build directory, kept small */
    if (!inflated)
        inflated = inflated_cache_new("build-fuzz/inflated", 16u << 20);
    struct elf_sources sources = {.debug_path = "", .inflated = inflated};
    struct elf_binary *b = elf_binary_open(path, &sources, err, sizeof(err));
    size_t lanes = b ? elf_binary_open_lanes(b, 2) : 0;
    for (uint64_t off = 0; b && off < len; off += 97) {
        uint64_t vaddr;
        struct elf_frame frames[16];
        size_t n = elf_binary_vaddr(b, off, &vaddr)
                       ? elf_binary_frames(elf_binary_lane(b, off % lanes), vaddr, frames, 16)
                       : 0;
        for (size_t i = 0; i < n; i++)
            free(demangle(frames[i].name, DEMANGLE_TEMPLATES));
    }
    elf_binary_close(b);
    char id[41];
    kernel_build_id(path, id);
    struct kernel_symbols *k = kernel_symbols_load(path, err, sizeof(err));
    for (uint64_t a = 0; k && a < 64; a++)
        kernel_symbols_find(k, kernel_symbols_text(k) + a * 4099);
    kernel_symbols_free(k);
    /* The same bytes as the contents of a Go binary's .gopclntab, which are
     * also the data searched for module data and inline trees. */
    struct go_section section = {0x4b9000, data, len};
    struct go_pclntab *g = go_pclntab_open(data, len, section.addr, 0x401000, &section, 1);
    for (uint64_t a = 0; g && a < 64; a++) {
        struct go_frame frames[16];
        go_pclntab_frames(g, 0x401000 + a * 4099, frames, 16);
    }
    go_pclntab_free(g);
    struct perf_map *m = perf_map_load(path);
    for (uint64_t a = 0; m && a < 64; a++)
        perf_map_find(m, a * 4099);
    perf_map_free(m);
    as_package_of_seed_binary(data, len, &sources);
    struct dwp_index index;
    for (uint64_t id = 0; dwp_index_read(&index, data, len) && id < 64; id++) {
        uint32_t off, size;
        dwp_index_slice(&index, dwp_index_row(&index, id * 0x100000001ull), DWP_INFO, &off,
                        &size);
    }
    for (uint8_t version = 4; version <= 5; version++) {
        struct dwp_range_lists lists = {data, len, data, len, 0x1000, 8, version};
        struct dwp_range_walk walk = {0, lists.base};
        Dwarf_Addr low, high;
        while (dwp_range_next(&lists, &walk, &low, &high) == 1)
            ;
    }
    char *name = strndup((const char *)data, len < 4096 ? len : 4096);
    free(demangle(name, DEMANGLE_FULL));
    free(name);
    close(fd);
    return 0;
}
