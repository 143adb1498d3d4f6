// SPDX-License-Identifier: Apache-2.0
/* Transparent huge pages asked for by hand (Debian's kernels give them
 * only to memory marked for them): where a page fault is dear, a 2 MiB
 * page is one fault and one TLB entry where 4 KiB pages are 512. */
#ifndef PROFD_HUGE_PAGES_H
#define PROFD_HUGE_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/* A transparent huge page's size on the systems profd runs on. */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
/* From this size a buffer filled at once is worth huge pages: at least one
 * whole page lies inside it wherever it starts. */
#define HUGE_PAGES_FROM (2 * HUGE_PAGE_BYTES)

/* Marks the whole huge pages within [p, p + n) for transparent huge pages
 * (what lies off the 2 MiB boundaries stays in small pages); nothing when
 * no whole one fits. */
static inline void huge_pages_mark(void *p, size_t n)
{
    uintptr_t start = ((uintptr_t)p + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
    uintptr_t end = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
    if (p && end > start)
        madvise((void *)start, end - start, MADV_HUGEPAGE);
}

#endif
