// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the symbolize processor's file readers on bytes written
 * to a memory file: ELF and DWARF (open, through an inflated copy when
 * sections are compressed, translate file offsets, symbolize addresses
 * across the loadable segments, in the binary and in a lane of it), the
 * kernel notes build-id, the kallsyms
 * table and a JIT perf map; the demangler on the names found and on the
 * bytes themselves as a name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../processors/symbolize/demangle.h"
#include "../../processors/symbolize/elf_symbols.h"
#include "../../processors/symbolize/gopclntab.h"
#include "../../processors/symbolize/inflated_cache.h"
#include "../../processors/symbolize/kernel_symbols.h"
#include "../../processors/symbolize/perf_map.h"

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
    char *name = strndup((const char *)data, len < 4096 ? len : 4096);
    free(demangle(name, DEMANGLE_FULL));
    free(name);
    close(fd);
    return 0;
}
