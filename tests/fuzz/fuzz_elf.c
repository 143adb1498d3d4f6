// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the symbolize processor's ELF and DWARF reading, on a
 * (corrupted) binary written to a memory file: open it, translate file
 * offsets, and symbolize addresses across its loadable segments. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../processors/symbolize/elf_symbols.h"

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
    struct elf_binary *b = elf_binary_open(path, "", err, sizeof(err));
    for (uint64_t off = 0; b && off < len; off += 97) {
        uint64_t vaddr;
        struct elf_frame frames[16];
        if (elf_binary_vaddr(b, off, &vaddr))
            elf_binary_frames(b, vaddr, frames, 16);
    }
    elf_binary_close(b);
    close(fd);
    return 0;
}
