// SPDX-License-Identifier: Apache-2.0
/* huge_arena: a thread inside allocates from an arena of its own whose
 * memory the kernel may back with huge pages, and from its own arena
 * again once it leaves; large buffers come from that arena in whole huge
 * pages. Linked with the daemon's allocator; where that is not jemalloc
 * (sanitizer builds) entering does nothing and says so. */
#include "check.h"
#include "smaps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "../../core/huge_arena.h"

extern int profd_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
                         size_t newlen) __asm__("mallctl") __attribute__((weak));

/* The calling thread's arena, -1 without jemalloc. */
static int thread_arena(void)
{
    unsigned arena;
    size_t len = sizeof(arena);
    if (!profd_mallctl || profd_mallctl("thread.arena", &arena, &len, NULL, 0))
        return -1;
    return (int)arena;
}

/* Whether this system gives transparent huge pages to memory marked for
 * them (its mode is not "never"). */
static bool huge_pages_on_request(void)
{
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof(mode), f))
            mode[0] = 0;
        fclose(f);
    }
    return mode[0] && !strstr(mode, "[never]");
}

/* The system's count of huge page faults that fell back to small pages
 * (none to be had), or -1. */
static long huge_page_fallbacks(void)
{
    char line[128];
    long n = -1;
    FILE *f = fopen("/proc/vmstat", "r");
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "thp_fault_fallback %ld", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

/* Page faults the calling thread took so far. */
static long thread_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
}

/* Whether this build's allocator is jemalloc, which the arena needs. */
static bool arena_served(void)
{
    int before = profd_huge_arena_enter();
    profd_huge_arena_leave(before);
    if (before < 0)
        CHECK(getenv("PROFD_SANITIZED") && *getenv("PROFD_SANITIZED"));
    return before >= 0;
}

TEST(buffers_start_in_huge_pages_whatever_size_the_arena_maps_them_by)
{
    if (!arena_served() || !huge_pages_on_request())
        return;
    /* each one past what the arena has: a mapping of its own (of one of
     * jemalloc's size classes, not all multiples of 2 MiB while the arena
     * is young, so this test comes first), which the system would put
     * right below a mapping of 1 MiB made just before, off the 2 MiB
     * boundaries. Where exactly is up to the address space's randomness:
     * mappings put as they came show in six runs of ten, not in all. */
    const size_t mib = 1u << 20,
                 sizes[] = {9 * mib / 2, 11 * mib / 2, 13 * mib / 2, 15 * mib / 2, 9 * mib,
                          11 * mib, 13 * mib};
    enum { N = sizeof(sizes) / sizeof(*sizes) };
    char *p[N];
    void *spacer[N];
    long fallbacks = huge_page_fallbacks(), faults = 0;
    for (size_t i = 0; i < N; i++) {
        spacer[i] = mmap(NULL, mib, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        p[i] = profd_xmalloc_large(sizes[i]);
        long before = thread_faults();
        memset(p[i], 1, mib);   /* its first MiB: one fault in a huge page, 256 in small ones */
        faults += thread_faults() - before;
    }
    CHECK(faults <= 4 * N || huge_page_fallbacks() != fallbacks);
    for (size_t i = 0; i < N; i++) {
        free(p[i]);
        munmap(spacer[i], mib);
    }
}

TEST(a_thread_inside_allocates_memory_marked_for_huge_pages_and_leaves)
{
    if (!arena_served())
        return;
    int own = thread_arena();
    int before = profd_huge_arena_enter();
    CHECK_INT(before, own);
    CHECK(thread_arena() != own);
    enum { N = 16384, SIZE = 1024 };   /* 16 MiB in small blocks, as libdw makes them */
    char **blocks = malloc(N * sizeof(*blocks));
    for (size_t i = 0; i < N; i++) {
        blocks[i] = malloc(SIZE);
        memset(blocks[i], 1, SIZE);
    }
    if (huge_pages_on_request()) {
        /* the arena's memory comes 2 MiB and more at a time, marked but
         * for what lies past a mapping's last whole huge page */
        int eligible = 0, looked = 0;
        for (size_t i = 0; i < N; i += 256, looked++)
            eligible += smaps_field(blocks[i], "THPeligible") == 1;
        CHECK(eligible * 2 >= looked);
    }
    profd_huge_arena_leave(before);
    CHECK_INT(thread_arena(), own);
    CHECK_INT(profd_huge_arena_enter(), own);   /* the same arena again, made once */
    profd_huge_arena_leave(own);
    for (size_t i = 0; i < N; i++)
        free(blocks[i]);   /* outside: a block goes back to the arena it came from */
    free(blocks);
}

/* Fills a large buffer and says whether it took a fault per huge page or
 * so (a few more for the arena's own records), not one per 4 KiB page.
 * True where the system had no huge page to give (nothing to tell then). */
static bool filled_in_huge_pages(char *p, size_t n)
{
    long fallbacks = huge_page_fallbacks(), faults = thread_faults();
    memset(p, 7, n);
    faults = thread_faults() - faults;
    return faults <= (long)(n >> 21) + 8 || huge_page_fallbacks() != fallbacks;
}

TEST(a_large_buffer_comes_in_whole_huge_pages)
{
    if (!arena_served() || !huge_pages_on_request())
        return;
    const size_t n = (6u << 20) + 12345;
    for (int round = 0; round < 3; round++) {   /* fresh memory, then memory given back */
        char *p = profd_xmalloc_large(n);
        CHECK(filled_in_huge_pages(p, n));
        free(p);
    }
}

TEST(a_small_buffer_grown_large_moves_into_huge_pages_with_its_bytes)
{
    char *p = profd_xrealloc_large(NULL, 1000);   /* small: as malloc gives it */
    for (int i = 0; i < 1000; i++)
        p[i] = (char)i;
    const size_t n = 5u << 20;
    p = profd_xrealloc_large(p, n);
    for (int i = 0; i < 1000; i++)
        CHECK_INT(p[i], (char)i);
    if (arena_served() && huge_pages_on_request())
        CHECK(filled_in_huge_pages(p + 1000, n - 1000));
    else
        memset(p + 1000, 7, n - 1000);
    p = profd_xrealloc_large(p, 2 * n);   /* grown in the arena */
    CHECK_INT(p[999], (char)999);
    CHECK_INT(p[n - 1], 7);
    free(p);
}

RUN_TESTS()
