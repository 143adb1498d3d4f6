// SPDX-License-Identifier: Apache-2.0
#include "unwind.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/binary_lookup.h"
#include "util.h"

/* perf's x86-64 register numbers (asm/perf_regs.h) for DWARF registers
 * 0..15 (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15), then the IP. */
static const int perf_reg_of_dwarf[17] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
#define PERF_REG_SP 7

/* Where a recorded binary was found here (path NULL: nowhere). */
struct binary {
    char *filename;         /* as recorded */
    char build_id[41];
    char *path;
};

/* A process's Dwfl, valid while its maps_version holds. */
struct proc_dwfl {
    int32_t pid;
    uint64_t version;
    Dwfl *dwfl;
    bool usable;            /* attached, with at least one module */
};

struct unwinder {
    struct binary_lookup lookup;
    struct binary *binaries;
    size_t nbinaries, binaries_cap;
    struct proc_dwfl *procs;
    size_t nprocs, procs_cap;
    /* The sample being unwound, read by the callbacks. */
    const struct perf_file *f;
    const struct process *p;
    const struct user_context *c;
    uint64_t sp;
    uint64_t *pcs;
    uint32_t npcs, max;
};

struct unwinder *unwinder_new(const char *const *dirs, size_t ndirs)
{
    struct unwinder *u = calloc(1, sizeof(*u));
    if (!u)
        abort();
    binary_lookup_init(&u->lookup, dirs, ndirs, NULL, NULL, 0, true);
    return u;
}

/* ---- finding binaries ---- */

/* Where m's file is here, looked up once per (file, build-id). */
static const char *binary_for(struct unwinder *u, const struct map *m)
{
    for (size_t i = 0; i < u->nbinaries; i++)
        if (!strcmp(u->binaries[i].filename, m->filename) &&
            !strcmp(u->binaries[i].build_id, m->build_id))
            return u->binaries[i].path;
    u->binaries = grow_array(u->binaries, &u->binaries_cap, u->nbinaries + 1, sizeof(*u->binaries));
    struct binary *b = &u->binaries[u->nbinaries++];
    b->filename = must_strdup(m->filename);
    memcpy(b->build_id, m->build_id, sizeof(b->build_id));
    b->path = m->filename[0] == '/' || !strcmp(m->filename, "[vdso]")
                  ? binary_lookup_find(&u->lookup, m->filename, m->build_id)
                  : NULL;
    return b->path;
}

/* ---- the thread state elfutils asks for ---- */

static uint64_t reg(const struct unwinder *u, int perf_reg)
{
    uint64_t mask = u->c->regs_mask;
    if (!(mask >> perf_reg & 1))
        return 0;
    int at = __builtin_popcountll(mask & ((1ull << perf_reg) - 1));
    return perf_u64(u->f, u->c->regs + 8 * at);
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
    (void)dwfl;
    struct unwinder *u = arg;
    if (*thread_arg)
        return 0;
    *thread_arg = u;
    return u->c->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
    (void)dwfl;
    (void)tid;
    *thread_arg = arg;
    return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    struct unwinder *u = arg;
    if (addr < u->sp || addr - u->sp > u->c->stack_size || u->c->stack_size - (addr - u->sp) < 8)
        return false;
    *result = perf_u64(u->f, u->c->stack + (addr - u->sp));
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    struct unwinder *u = arg;
    Dwarf_Word regs[17];
    for (int i = 0; i < 17; i++)
        regs[i] = reg(u, perf_reg_of_dwarf[i]);
    return dwfl_thread_state_registers(thread, 0, 17, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/* No separate debug files: unwinding reads .eh_frame, and .debug_frame
 * only where the binary itself has it. A debug file would be opened, and
 * its compressed DWARF inflated whole, for the frame where a stack ends. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink_file,
                        GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink_file;
    (void)debuglink_crc, (void)debuginfo_file_name;
    return -1;
}

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = no_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* ---- per-process Dwfl ---- */

/* Reports every file p maps (once, at its first mapping) and attaches. */
static void build_dwfl(struct unwinder *u, struct proc_dwfl *pd, const struct process *p)
{
    pd->dwfl = dwfl_begin(&offline_callbacks);
    pd->usable = false;
    if (!pd->dwfl)
        return;
    dwfl_report_begin(pd->dwfl);
    size_t modules = 0;
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct map *m = p->maps[i];
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = p->maps[k]->filename == m->filename;
        const char *path = seen ? NULL : binary_for(u, m);
        if (path && dwfl_report_elf(pd->dwfl, m->filename, path, -1, m->start - m->pgoff, false))
            modules++;
    }
    dwfl_report_end(pd->dwfl, NULL, NULL);
    pd->usable = modules && dwfl_attach_state(pd->dwfl, NULL, p->pid, &thread_callbacks, u);
}

static struct proc_dwfl *dwfl_for(struct unwinder *u, const struct process *p)
{
    struct proc_dwfl *pd = NULL;
    for (size_t i = 0; i < u->nprocs && !pd; i++)
        if (u->procs[i].pid == p->pid)
            pd = &u->procs[i];
    if (!pd) {
        u->procs = grow_array(u->procs, &u->procs_cap, u->nprocs + 1, sizeof(*u->procs));
        pd = &u->procs[u->nprocs++];
        *pd = (struct proc_dwfl){.pid = p->pid, .version = p->maps_version};
        build_dwfl(u, pd, p);
    } else if (pd->version != p->maps_version) {
        if (pd->dwfl)
            dwfl_end(pd->dwfl);
        pd->version = p->maps_version;
        build_dwfl(u, pd, p);
    }
    return pd;
}

static int on_frame(Dwfl_Frame *frame, void *arg)
{
    struct unwinder *u = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(frame, &pc, &activation))
        return DWARF_CB_ABORT;
    if (u->npcs && pc == u->pcs[u->npcs - 1] && !activation)
        return DWARF_CB_ABORT;   /* no progress: a broken CFI loop */
    u->pcs[u->npcs++] = pc;      /* a 0 ends the stack, kept as perf keeps it */
    /* A frame in no code the process mapped (a return address read where
     * a CFI or a half-made stack put none, often an address in the stack)
     * ends the stack there, as it ends in perf: elfutils would go on from
     * it by frame pointers, from whatever the registers then hold. */
    bool in_code = processes_find_map(NULL, u->p, activation ? pc : pc - 1) != NULL;
    return pc && in_code && u->npcs < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

uint32_t unwinder_unwind(struct unwinder *u, const struct perf_file *f, const struct process *p,
                         const struct user_context *c, uint64_t *pcs, uint32_t max)
{
    if (!max)
        return 0;
    u->f = f;
    u->p = p;
    u->c = c;
    u->sp = reg(u, PERF_REG_SP);
    u->pcs = pcs;
    u->max = max;
    u->npcs = 0;
    struct proc_dwfl *pd = dwfl_for(u, p);
    if (pd->usable)
        dwfl_getthread_frames(pd->dwfl, c->tid, on_frame, u);
    if (!u->npcs)   /* no binary or no CFI: the sampled IP alone */
        pcs[u->npcs++] = reg(u, perf_reg_of_dwarf[16]);
    return u->npcs;
}

static void binary_clear(struct binary *b)
{
    free(b->filename);
    free(b->path);
}

void unwinder_forget_gone(struct unwinder *u, const struct processes *ps)
{
    size_t kept = 0;
    for (size_t i = 0; i < u->nprocs; i++) {
        if (processes_find(ps, u->procs[i].pid))
            u->procs[kept++] = u->procs[i];
        else if (u->procs[i].dwfl)
            dwfl_end(u->procs[i].dwfl);
    }
    u->nprocs = kept;
    kept = 0;
    for (size_t i = 0; i < u->nbinaries; i++) {
        if (processes_names(ps, u->binaries[i].filename))
            u->binaries[kept++] = u->binaries[i];
        else
            binary_clear(&u->binaries[i]);
    }
    u->nbinaries = kept;
}

void unwinder_free(struct unwinder *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->nprocs; i++)
        if (u->procs[i].dwfl)
            dwfl_end(u->procs[i].dwfl);
    free(u->procs);
    for (size_t i = 0; i < u->nbinaries; i++)
        binary_clear(&u->binaries[i]);
    free(u->binaries);
    binary_lookup_free(&u->lookup);
    free(u);
}
