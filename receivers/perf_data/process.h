// SPDX-License-Identifier: Apache-2.0
/*
 * Processes and threads of a recording as COMM, FORK, EXIT and MMAP records
 * describe them: each process's mappings (sorted, non-overlapping: a new
 * mmap replaces what it covers), each thread's comm. The kernel's mappings
 * live apart and serve every process. Maps and the strings they name are
 * freed only by processes_forget_ended (between a session's outputs), so
 * frames built before it may point at them.
 */
#ifndef PROFD_PERF_PROCESS_H
#define PROFD_PERF_PROCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "index.h"
#include "perf_file.h"

#define PERF_COMM_LEN 32

struct map {
    uint64_t start, limit, pgoff;
    const char *filename;   /* owned by the processes table */
    char build_id[41];      /* lowercase hex, or "" */
};

struct thread {
    int32_t tid, pid;
    const char *comm;       /* interned: equal comms are the same pointer */
    bool ended;             /* an EXIT record said so, and nothing of it came since */
};

struct process {
    int32_t pid;
    char comm[PERF_COMM_LEN];
    struct map **maps;      /* sorted by start */
    size_t nmaps, cap;
    const struct map *program;   /* the last program it mapped (after an exec, the new one) */
    uint64_t maps_version;  /* changes whenever maps change; never reused */
    bool ended;             /* its main thread's EXIT came, and no FORK, COMM or MMAP since */
};

struct processes {
    struct process *procs;
    size_t nprocs, procs_cap;
    struct index proc_index;
    struct thread *threads;
    size_t nthreads, threads_cap;
    struct index thread_index;
    struct process kernel;
    struct map **all_maps;  /* every map ever made, for freeing */
    size_t nall, all_cap;
    char **strings;         /* interned file names and comms */
    size_t nstrings, strings_cap;
    struct index string_index;
    uint64_t versions;      /* the last maps_version handed out */
};

/* The process pid, created (named "[pid]") when first seen. */
struct process *processes_get(struct processes *ps, int32_t pid);
/* The thread tid of pid, created when first seen with the process's comm. */
const struct thread *processes_thread(struct processes *ps, int32_t pid, int32_t tid);
/* The map holding addr in p (the kernel's when p is NULL, the one case that
 * reads ps), or NULL. */
const struct map *processes_find_map(const struct processes *ps, const struct process *p,
                                     uint64_t addr);
/* True when a map's name is the path of a file: not anonymous memory
 * (named /tmp/perf-<pid>.map, as perf names it), a memfd, or a pseudo-file
 * such as "[heap]" or "[vdso]". */
bool processes_names_a_file(const char *filename);
/* True when filename (a " (deleted)" suffix aside) names a program: the
 * path of a file, not a shared library (".so", ".so.N", ".so_N") nor a
 * kernel module. */
bool processes_names_a_program(const char *filename);
/* An mmap of pid (-1: the kernel). The build-id comes from m, else from the
 * recording's build-id list by file name; anonymous memory ("//anon",
 * "/dev/zero", "/anon_hugepage") is named as perf names it,
 * /tmp/perf-<pid>.map. */
void processes_add_map(struct processes *ps, int32_t pid, const struct map *m, const char *name,
                       const struct perf_file *f);
/* A COMM record; with exec it renames the process (mappings stay). */
void processes_comm(struct processes *ps, int32_t pid, int32_t tid, const char *comm, bool exec);
/* An EXIT record: thread tid of pid ended (with tid == pid, the main
 * thread: the process ends once no thread of it is left). */
void processes_exit(struct processes *ps, int32_t pid, int32_t tid);
/* Forgets the processes and threads that ended, the maps no process
 * holds any more (trimmed by later mmaps, or an ended process's), and the
 * file names and comms no map or thread left holds, so that a long stream
 * keeps only what its live processes map. Pointers to processes, threads,
 * maps and their strings taken before do not hold after it. */
void processes_forget_ended(struct processes *ps);
/* Whether name is the file name of a map, or the comm of a thread, that
 * the table holds or held since the last processes_forget_ended. */
bool processes_names(const struct processes *ps, const char *name);
/* The process pid, or NULL when there is none (it never came, or was
 * forgotten). */
const struct process *processes_find(const struct processes *ps, int32_t pid);
/* A FORK record: a new process copies its parent's mappings and comm. */
void processes_fork(struct processes *ps, int32_t pid, int32_t ppid, int32_t tid, int32_t ptid);
void processes_free(struct processes *ps);

#endif
