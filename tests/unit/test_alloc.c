// SPDX-License-Identifier: Apache-2.0
/* alloc: growth of arrays, and large buffers marked for transparent huge
 * pages (told by the kernel's THPeligible flag of the mapping that holds
 * them, where the system gives huge pages on request only). */
#include "check.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

#include "../../core/alloc.h"
#include "smaps.h"

/* Whether this system gives huge pages to mappings that ask, and only to them. */
static bool huge_pages_on_request(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (f) {
        if (!fgets(mode, sizeof(mode), f))
            mode[0] = '\0';
        fclose(f);
    }
    return strstr(mode, "[madvise]") != NULL;
}

TEST(large_buffers_are_marked_for_huge_pages_and_small_ones_are_not)
{
    if (!huge_pages_on_request()) {
        fprintf(stderr, "  skipped: transparent huge pages are not given on request here\n");
        return;
    }
    size_t large = 16u << 20, small = 3u << 20;
    uint8_t *a = mmap(NULL, large, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *b = mmap(NULL, small, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED && b != MAP_FAILED);
    if (a == MAP_FAILED || b == MAP_FAILED)
        return;
    profd_advise_huge(a + 4096, large - 4096);   /* not on a 2 MiB boundary */
    profd_advise_huge(b, small);
    CHECK_INT(smaps_field(a + (8u << 20), "THPeligible"), 1);
    CHECK_INT(smaps_field(b, "THPeligible"), 0);
    munmap(a, large);
    munmap(b, small);
}

TEST(arrays_grow_by_doubling_to_what_they_need)
{
    CHECK_INT(profd_grown_cap(0, 1), 8);
    CHECK_INT(profd_grown_cap(8, 9), 16);
    CHECK_INT(profd_grown_cap(8, 100), 128);
    int *items = NULL;
    size_t cap = 0;
    profd_grow(&items, &cap, 20, sizeof(*items));
    CHECK_INT(cap, 32);
    items[19] = 7;
    profd_grow(&items, &cap, 10, sizeof(*items));   /* fits: unchanged */
    CHECK_INT(cap, 32);
    CHECK_INT(items[19], 7);
    free(items);
}

RUN_TESTS()
