// SPDX-License-Identifier: Apache-2.0
/* The perf_data module's processes table (process.c): what FORK, COMM,
 * MMAP and EXIT records make of it, and what forgetting the ended keeps:
 * live processes, their threads and the maps they hold, nothing else.
 * Compiled in from the module sources. */
#include "check.h"

#include "../../lib/binary_lookup.c"
#include "../../lib/own_vdso.c"
#include "../../lib/file_io.c"
#include "../../lib/grow.c"
#include "../../receivers/perf_data/index.c"
#include "../../receivers/perf_data/process.c"
#include "../../receivers/perf_data/util.c"

/* Maps [start, start + 0x1000) of pid to a file named name. */
static void map_at(struct processes *ps, int32_t pid, uint64_t start, const char *name)
{
    static const struct perf_file no_build_ids;
    struct map m = {.start = start, .limit = start + 0x1000};
    processes_add_map(ps, pid, &m, name, &no_build_ids);
}

TEST(ended_processes_threads_and_maps_no_one_holds_are_forgotten)
{
    struct processes ps = {0};
    map_at(&ps, -1, 0xffffffff81000000, "[kernel.kallsyms]_text");
    map_at(&ps, 10, 0x400000, "/usr/bin/server");
    processes_comm(&ps, 10, 10, "server", false);
    processes_comm(&ps, 10, 11, "worker", false);
    /* A child that maps its own program over its parent's, then ends. */
    processes_fork(&ps, 20, 10, 20, 10);
    map_at(&ps, 20, 0x400000, "/usr/bin/child");
    map_at(&ps, 20, 0x800000, "/usr/lib/libchild.so");
    /* The server's worker thread ends; a second mmap trims the first. */
    processes_exit(&ps, 10, 11);
    map_at(&ps, 10, 0x400800, "/usr/bin/server.new");
    processes_exit(&ps, 20, 20);
    /* A process whose main thread ended while another still runs. */
    processes_comm(&ps, 30, 30, "leader", false);
    processes_comm(&ps, 30, 31, "runner", false);
    map_at(&ps, 30, 0x500000, "/usr/bin/leader");
    processes_exit(&ps, 30, 30);
    CHECK_INT(ps.nprocs, 3);
    CHECK_INT(ps.nthreads, 5);
    size_t maps_before = ps.nall;

    processes_forget_ended(&ps);

    CHECK_INT(ps.nprocs, 2);
    CHECK(processes_find(&ps, 10) != NULL);
    CHECK(processes_find(&ps, 20) == NULL);
    CHECK(processes_find(&ps, 30) != NULL);
    CHECK_INT(ps.nthreads, 2);   /* 10's main thread and 31 */
    /* Kept: the server's two maps (what the second left of the first,
     * and the second, its program now), the leader's and the kernel's;
     * the first map whole, and the child's three, are gone. */
    const struct process *server = processes_find(&ps, 10);
    CHECK_INT(server ? server->nmaps : 0, 2);
    CHECK_INT(ps.nall, 4);
    CHECK(ps.nall < maps_before);
    CHECK_STR(server && processes_find_map(&ps, server, 0x400100)
                  ? processes_find_map(&ps, server, 0x400100)->filename
                  : "",
              "/usr/bin/server");
    CHECK_STR(server && server->program ? server->program->filename : "", "/usr/bin/server.new");
    CHECK(processes_find_map(&ps, NULL, 0xffffffff81000010) != NULL);
    /* The names kept are those of the maps and threads kept. */
    CHECK(processes_names(&ps, "/usr/bin/server") && processes_names(&ps, "/usr/bin/leader"));
    CHECK(processes_names(&ps, "server") && processes_names(&ps, "runner"));
    CHECK(!processes_names(&ps, "/usr/bin/child") && !processes_names(&ps, "worker"));
    CHECK(!processes_names(&ps, "/usr/lib/libchild.so"));
    CHECK_INT(ps.nstrings, 6);   /* 4 map names (the kernel's too), the 2 threads' comms */

    /* A pid seen again after it was forgotten starts anew. */
    CHECK_STR(processes_get(&ps, 20)->comm, "[20]");
    CHECK_INT(processes_get(&ps, 20)->nmaps, 0);
    processes_free(&ps);
}

TEST(a_process_heard_from_after_its_exit_is_kept)
{
    struct processes ps = {0};
    map_at(&ps, 40, 0x400000, "/usr/bin/again");
    processes_comm(&ps, 40, 40, "again", false);
    processes_exit(&ps, 40, 40);
    processes_comm(&ps, 40, 40, "again", true);   /* the pid reused by an exec'd program */
    processes_forget_ended(&ps);
    CHECK(processes_find(&ps, 40) != NULL);
    CHECK_INT(ps.nthreads, 1);
    CHECK_INT(ps.nall, 1);
    processes_free(&ps);
}

TEST(a_stream_of_short_lived_processes_keeps_what_the_live_ones_name)
{
    struct processes ps = {0};
    char name[64];
    for (int32_t pid = 100; pid < 10100; pid++) {   /* each its own JIT map, then gone */
        snprintf(name, sizeof(name), "/tmp/perf-%d.map", pid);
        map_at(&ps, pid, 0x7f0000000000, name);
        processes_comm(&ps, pid, pid, "job", false);
        processes_exit(&ps, pid, pid);
        if (pid % 1000 == 0)
            processes_forget_ended(&ps);
    }
    processes_forget_ended(&ps);
    CHECK_INT(ps.nprocs, 0);
    CHECK_INT(ps.nstrings, 0);
    CHECK(!processes_names(&ps, "/tmp/perf-10099.map"));
    map_at(&ps, 7, 0x400000, "/usr/bin/next");   /* interned anew */
    CHECK(processes_names(&ps, "/usr/bin/next"));
    processes_free(&ps);
}

RUN_TESTS()
