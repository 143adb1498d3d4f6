// SPDX-License-Identifier: Apache-2.0
/* The symbolize module's kernel symbol tables (a sorted kallsyms file is
 * searched where it lies, anything else is read into a table, and both
 * answer every address alike), its inflated copies of compressed ELF
 * files, a binary's lanes, its PLT's names, this host's vDSO, and the
 * functions threads draft. Compiled in from the module sources. */
#include "check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/arena.h"
#include "../../core/profile.h"
#include "../../lib/binary_lookup.c"
#include "../../lib/own_vdso.c"
#include "../../lib/file_io.c"
#include "../../lib/grow.c"
#include "../../lib/key_map.c"
#include "../../processors/symbolize/debug_search.c"
#include "../../processors/symbolize/demangle.c"
#include "../../processors/symbolize/dwp.c"
#include "../../processors/symbolize/elf_symbols.c"
#include "../../processors/symbolize/frame_cache.c"
#include "../../processors/symbolize/gopclntab.c"
#include "../../processors/symbolize/inflated_cache.c"
#include "../../processors/symbolize/kernel_symbols.c"
#include "../../processors/symbolize/plt_symbols.c"
#include "../../processors/symbolize/profile_functions.c"
#include "../../processors/symbolize/scope_index.c"
#include "smaps.h"

/* kallsyms lines: text symbols with data symbols, an alias pair and a
 * module between them, in address order. */
static const char *const lines[] = {
    "ffffffff81000000 T _text\n",
    "ffffffff81000000 T startup_64\n",
    "ffffffff81000100 t helper\n",
    "ffffffff81000180 d some_data\n",
    "ffffffff81000200 W weak_fn\n",
    "ffffffff81000200 T strong_alias\n",
    "ffffffff81001000 T last_core\n",
    "ffffffffc0001000 t mod_fn\t[mod]\n",
    "ffffffffc0002000 t mod_end\t[mod]\n",
};
#define NLINES (sizeof(lines) / sizeof(*lines))

/* Writes the lines to a temporary file in the given order of indexes. */
static char *write_lines(const int *order)
{
    static char path[64];
    strcpy(path, "/tmp/profd-ksyms-XXXXXX");
    int fd = mkstemp(path);
    for (size_t i = 0; i < NLINES; i++)
        if (write(fd, lines[order[i]], strlen(lines[order[i]])) < 0)
            abort();
    close(fd);
    return path;
}

/* What a lookup gives, "" for none. */
static const char *name_at(struct kernel_symbols *k, uint64_t addr)
{
    const char *n = kernel_symbols_find(k, addr);
    return n ? n : "";
}

static const struct {
    uint64_t addr;
    const char *want;
} cases[] = {
    {0xffffffff80ffffffull, ""},                 /* below the first symbol */
    {0xffffffff81000050ull, "startup_64"},       /* of aliases, the last one listed */
    {0xffffffff810001c0ull, "helper"},           /* data symbols are not functions */
    {0xffffffff81000200ull, "strong_alias"},
    {0xffffffff81000fffull, "strong_alias"},
    {0xffffffffc0001800ull, "mod_fn"},           /* "\t[mod]" is not part of the name */
    {0xffffffffc0002000ull, ""},                 /* the end: past the last symbol */
};

TEST(sorted_file_is_searched_in_place_like_the_table)
{
    int sorted[NLINES];
    for (size_t i = 0; i < NLINES; i++)
        sorted[i] = (int)i;
    char err[256];
    char *path = write_lines(sorted);
    struct kernel_symbols *mapped = kernel_symbols_load(path, err, sizeof(err));
    struct kernel_symbols *table = load_table(path, err, sizeof(err));
    unlink(path);
    CHECK(mapped && mapped->fd >= 0);
    CHECK(table && table->fd < 0);
    if (!mapped || !table)
        return;
    CHECK_INT(kernel_symbols_text(mapped), 0xffffffff81000000ull);
    CHECK_INT(kernel_symbols_text(table), 0xffffffff81000000ull);
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        CHECK_STR(name_at(mapped, cases[i].addr), cases[i].want);
        CHECK_STR(name_at(table, cases[i].addr), cases[i].want);
    }
    int differ = 0;   /* every address in between: the same answer both ways */
    for (uint64_t a = 0xffffffff80fff000ull; a < 0xffffffff81002000ull; a += 7)
        differ += strcmp(name_at(mapped, a), name_at(table, a)) != 0;
    CHECK_INT(differ, 0);
    kernel_symbols_free(mapped);
    kernel_symbols_free(table);
}

TEST(unsorted_file_is_read_into_a_table)
{
    int shuffled[NLINES];
    for (size_t i = 0; i < NLINES; i++)
        shuffled[i] = (int)((i * 4 + 3) % NLINES);   /* 9 lines: a permutation */
    char err[256];
    char *path = write_lines(shuffled);
    struct kernel_symbols *k = kernel_symbols_load(path, err, sizeof(err));
    unlink(path);
    CHECK(k && k->fd < 0);
    if (!k)
        return;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        if (i != 1 && i != 3 && i != 4)   /* which alias wins follows the file's order */
            CHECK_STR(name_at(k, cases[i].addr), cases[i].want);
    kernel_symbols_free(k);
}

/* Many lines, blocks of every size around BLOCK_LINES, with runs of data
 * symbols and aliases that cross block starts: the file searched in place
 * and the table agree at every address. */
TEST(long_file_searched_in_place_agrees_with_the_table)
{
    char path[] = "/tmp/profd-ksyms-XXXXXX", err[256];
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    uint64_t addr = 0xffffffff81000000ull;
    fprintf(f, "%016llx T _text\n", (unsigned long long)addr);
    for (int i = 0; i < 1000; i++) {
        addr += (uint64_t)(i % 7) * 16;   /* some lines share an address */
        char type = i % 13 < 4 ? 'd' : i % 17 == 0 ? 'W' : 't';   /* runs of data */
        fprintf(f, "%016llx %c sym_%d%s\n", (unsigned long long)addr, type, i,
                i > 900 ? "\t[mod]" : "");
    }
    fclose(f);
    struct kernel_symbols *in_place = kernel_symbols_load(path, err, sizeof(err));
    struct kernel_symbols *table = load_table(path, err, sizeof(err));
    unlink(path);
    CHECK(in_place && in_place->fd >= 0 && in_place->nblocks > 10);
    CHECK(table && table->fd < 0);
    if (!in_place || !table)
        return;
    int differ = 0, named = 0;
    for (uint64_t a = 0xffffffff80fffff0ull; a < addr + 64; a += 3) {
        char want[512];
        snprintf(want, sizeof(want), "%s", name_at(table, a));
        differ += strcmp(name_at(in_place, a), want) != 0;
        named += *want != 0;
    }
    CHECK_INT(differ, 0);
    CHECK(named > 1000);
    kernel_symbols_free(in_place);
    kernel_symbols_free(table);
}

TEST(hidden_addresses_are_an_error)
{
    char path[] = "/tmp/profd-ksyms-XXXXXX", err[256] = "";
    int fd = mkstemp(path);
    const char *text = "0000000000000000 T _text\n0000000000000000 T f\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    CHECK(kernel_symbols_load(path, err, sizeof(err)) == NULL);
    CHECK_CONTAINS(err, "kptr_restrict");
    unlink(path);
}

/* ---- inflated copies ---- */

/* Runs a command line through sh; its exit status. */
static int sh(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* A fresh temporary directory (static buffer). */
static const char *temp_dir(void)
{
    static char dir[64];
    strcpy(dir, "/tmp/profd-inflated-XXXXXX");
    return mkdtemp(dir);
}

/* Files in dir. */
static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* This test program with its DWARF compressed (zlib) at path. */
static bool compressed_copy_of_self(const char *path)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib /proc/%d/exe %s",
             (int)getpid(), path);
    return sh(cmd) == 0;
}

/* Compares every section of the copy with the original's, inflated by
 * libelf: the number of sections that differ. */
static int sections_differing(const char *original, int copy_fd)
{
    int fd = open(original, O_RDONLY);
    Elf *a = elf_begin(fd, ELF_C_READ, NULL), *b = elf_begin(copy_fd, ELF_C_READ, NULL);
    size_t na = 0, nb = 0;
    elf_getshdrnum(a, &na);
    elf_getshdrnum(b, &nb);
    int differ = na != nb;
    for (size_t i = 1; !differ && i < na; i++) {
        Elf_Scn *sa = elf_getscn(a, i), *sb = elf_getscn(b, i);
        GElf_Shdr ha, hb;
        gelf_getshdr(sa, &ha);
        if (ha.sh_flags & SHF_COMPRESSED)
            elf_compress(sa, 0, 0);
        gelf_getshdr(sa, &ha);
        gelf_getshdr(sb, &hb);
        Elf_Data *da = elf_rawdata(sa, NULL), *db = elf_rawdata(sb, NULL);
        differ += ha.sh_name != hb.sh_name || ha.sh_type != hb.sh_type ||
                  ha.sh_flags != hb.sh_flags || ha.sh_size != hb.sh_size ||
                  (hb.sh_flags & SHF_COMPRESSED) ||
                  (ha.sh_type != SHT_NOBITS && ha.sh_size &&
                   (!da || !db || memcmp(da->d_buf, db->d_buf, ha.sh_size)));
    }
    elf_end(a);
    elf_end(b);
    close(fd);
    return differ;
}

/* A fresh directory for a cache, and beside it (at src) this test
 * program with its DWARF compressed. */
static const char *dir_and_compressed_self(char *src, size_t len)
{
    elf_version(EV_CURRENT);
    const char *dir = temp_dir();
    snprintf(src, len, "%s.src", dir);
    CHECK(compressed_copy_of_self(src));
    return dir;
}

TEST(copy_holds_every_section_inflated_and_is_found_again)
{
    char src[128];
    const char *dir = dir_and_compressed_self(src, sizeof(src));
    struct inflated_cache *c = inflated_cache_new(dir, 1u << 30);
    int fd = open(src, O_RDONLY);
    int copy = inflated_cache_open(c, fd);
    CHECK(copy != fd && copy >= 0);
    CHECK_INT(inflated_cache_stats(c).made, 1);
    CHECK_INT(sections_differing(src, copy), 0);
    close(copy);
    int again = inflated_cache_open(c, open(src, O_RDONLY));
    CHECK_INT(inflated_cache_stats(c).found, 1);
    CHECK_INT(sections_differing(src, again), 0);
    close(again);
    CHECK_INT(files_in(dir), 1);
    inflated_cache_free(c);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, src);
    sh(cmd);
}

TEST(file_without_compressed_sections_is_read_as_it_is)
{
    elf_version(EV_CURRENT);
    const char *dir = temp_dir();
    struct inflated_cache *c = inflated_cache_new(dir, 1u << 30);
    int fd = open("/proc/self/exe", O_RDONLY);
    CHECK_INT(inflated_cache_open(c, fd), fd);
    CHECK_INT(files_in(dir), 0);
    close(fd);
    inflated_cache_free(c);
    rmdir(dir);
}

TEST(bad_compressed_data_leaves_nothing_and_reads_the_original)
{
    char src[128];
    const char *dir = dir_and_compressed_self(src, sizeof(src));
    /* Garbles the compressed stream of .debug_info past its header. */
    int fd = open(src, O_RDWR);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    size_t names;
    elf_getshdrstrndx(elf, &names);
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        gelf_getshdr(scn, &sh);
        if (!strcmp(elf_strptr(elf, names, sh.sh_name), ".debug_info")) {
            CHECK(sh.sh_flags & SHF_COMPRESSED);
            static const char junk[64] = "not a zlib stream, not at all";
            CHECK(pwrite(fd, junk, sizeof(junk), (off_t)sh.sh_offset + 30) == sizeof(junk));
        }
    }
    elf_end(elf);
    struct inflated_cache *c = inflated_cache_new(dir, 1u << 30);
    CHECK_INT(inflated_cache_open(c, fd), fd);
    CHECK_INT(inflated_cache_stats(c).failed, 1);
    CHECK_CONTAINS(inflated_cache_last_error(c), "bad compressed section");
    CHECK_INT(files_in(dir), 0);
    close(fd);
    inflated_cache_free(c);
    unlink(src);
    rmdir(dir);
}

/* The build-id bytes of the file at path changed (another build, as far
 * as the cache can tell). */
static void give_another_build_id(const char *path)
{
    int fd = open(path, O_RDWR);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    const void *id;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
    uint8_t *was = malloc((size_t)n);
    memcpy(was, id, (size_t)n);
    elf_end(elf);
    struct stat st;
    fstat(fd, &st);
    uint8_t *all = malloc((size_t)st.st_size);
    CHECK(pread(fd, all, (size_t)st.st_size, 0) == st.st_size);
    uint8_t *at = memmem(all, (size_t)st.st_size, was, (size_t)n);
    CHECK(at != NULL);
    uint8_t flipped = at[0] ^ 0xff;
    CHECK(pwrite(fd, &flipped, 1, at - all) == 1);
    free(all);
    free(was);
    close(fd);
}

TEST(least_recently_used_copies_go_when_the_directory_is_full)
{
    elf_version(EV_CURRENT);
    const char *dir = temp_dir();
    char first[128], second[128];
    snprintf(first, sizeof(first), "%s.1", dir);
    snprintf(second, sizeof(second), "%s.2", dir);
    CHECK(compressed_copy_of_self(first) && compressed_copy_of_self(second));
    give_another_build_id(second);
    struct inflated_cache *probe = inflated_cache_new(dir, 1u << 30);
    close(inflated_cache_open(probe, open(first, O_RDONLY)));
    inflated_cache_free(probe);
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)) && e->d_name[0] == '.')
        ;
    char made[512];
    snprintf(made, sizeof(made), "%.200s/%.255s", dir, e->d_name);
    closedir(d);
    struct stat st;
    stat(made, &st);
    struct timespec long_ago[2] = {{1000000000, 0}, {1000000000, 0}};
    utimensat(AT_FDCWD, made, long_ago, 0);   /* last used long ago */
    /* Room for one copy and a half: the second copy pushes the first out. */
    struct inflated_cache *c = inflated_cache_new(dir, (uint64_t)st.st_size * 3 / 2);
    close(inflated_cache_open(c, open(second, O_RDONLY)));
    CHECK_INT(inflated_cache_stats(c).made, 1);
    CHECK_INT(files_in(dir), 1);
    CHECK(access(made, F_OK) != 0);
    inflated_cache_free(c);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s %s", dir, first, second);
    sh(cmd);
}

/* The frames of this test program's code, at every 61st byte of the
 * file, equal in lane 0 and in lane `lane` of it (by content: each lane
 * has strings of its own). Returns how many addresses had frames. */
static size_t lanes_agree(struct elf_binary *b, size_t lane, size_t text_size)
{
    size_t with_frames = 0;
    for (uint64_t off = 0; off < text_size; off += 61) {
        uint64_t vaddr;
        struct elf_frame a[16], z[16];
        if (!elf_binary_vaddr(b, off, &vaddr))
            continue;
        size_t n = elf_binary_frames(b, vaddr, a, 16);
        CHECK_INT(elf_binary_frames(elf_binary_lane(b, lane), vaddr, z, 16), n);
        for (size_t i = 0; i < n; i++) {
            CHECK_STR(a[i].name, z[i].name);
            CHECK_STR(a[i].file, z[i].file);
            CHECK_INT(a[i].line, z[i].line);
        }
        with_frames += n > 0;
    }
    return with_frames;
}

/* This test program as an elf_binary (no debug directories), or NULL. */
static struct elf_binary *open_this_executable(void)
{
    elf_version(EV_CURRENT);
    char err[256];
    struct elf_sources sources = {.debug_path = ""};
    return elf_binary_open("/proc/self/exe", &sources, err, sizeof(err));
}

TEST(lanes_are_copies_that_answer_as_the_binary)
{
    struct elf_binary *b = open_this_executable();
    CHECK(b != NULL);
    CHECK_INT(elf_binary_open_lanes(b, 3), 3);
    CHECK(elf_binary_lane(b, 0) == b);
    CHECK(elf_binary_lane(b, 1) != b && elf_binary_lane(b, 2) != elf_binary_lane(b, 1));
    CHECK_INT(elf_binary_open_lanes(b, 2), 2);   /* there already */
    CHECK_INT(elf_binary_open_lanes(b, 99), ELF_BINARY_MAX_LANES);
    struct stat st;
    CHECK(stat("/proc/self/exe", &st) == 0);
    CHECK(lanes_agree(b, 2, (size_t)st.st_size) > 100);
    elf_binary_close(b);
}

/* This process's vDSO is copied once into a file ELF readers open; a
 * [vdso] mapping is looked up there only when recorded paths are tried
 * (the host's own files), and never for another build-id. */
TEST(own_vdso_is_found_for_vdso_mappings_of_this_host)
{
    elf_version(EV_CURRENT);
    const char *own = own_vdso_path();
    CHECK(own != NULL);
    CHECK(own_vdso_path() == own);
    CHECK(binary_lookup_is_elf(own, ""));
    struct binary_lookup here, elsewhere;
    binary_lookup_init(&here, NULL, 0, NULL, NULL, 0, true);
    binary_lookup_init(&elsewhere, NULL, 0, NULL, NULL, 0, false);
    char *found = binary_lookup_find(&here, "[vdso]", "");
    CHECK(found && !strcmp(found, own));
    free(found);
    CHECK(binary_lookup_find(&here, "[vdso]", "0123456789abcdef0123456789abcdef01234567") == NULL);
    CHECK(binary_lookup_find(&elsewhere, "[vdso]", "") == NULL);
    binary_lookup_free(&here);
    binary_lookup_free(&elsewhere);
}

/* perf's name for a process's anonymous memory, made and read back; a
 * real file under a similar path is not one. */
TEST(jit_map_names_carry_their_pid)
{
    char name[64];
    int32_t pid = 0;
    binary_lookup_jit_map_name(4242, name, sizeof(name));
    CHECK_STR(name, "/tmp/perf-4242.map");
    CHECK(binary_lookup_is_jit_map(name, &pid));
    CHECK_INT(pid, 4242);
    CHECK(!binary_lookup_is_jit_map("/tmp/perf-tools/bin/app", &pid));
    CHECK(!binary_lookup_is_jit_map("/tmp/perf-42.map.old", &pid));
    CHECK(!binary_lookup_is_jit_map("/tmp/perf-0.map", &pid));
    CHECK(!binary_lookup_is_jit_map("//anon", &pid));
}

/* A binary recorded as "<path> (deleted)" is looked for as <path>: here
 * by its name in a directory. */
TEST(deleted_suffix_is_dropped_from_the_recorded_path)
{
    elf_version(EV_CURRENT);
    char dir[] = "/tmp/profd-lookup-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char copy_path[64];
    snprintf(copy_path, sizeof(copy_path), "%s/prog", dir);
    size_t len;
    char *image = read_small_file("/proc/self/exe", 64u << 20, &len);
    int fd = open(copy_path, O_WRONLY | O_CREAT | O_EXCL, 0755);
    CHECK(image && fd >= 0 && write_all(fd, image, len) == 0);
    close(fd);
    const char *dirs[] = {dir};
    struct binary_lookup l;
    binary_lookup_init(&l, dirs, 1, NULL, NULL, 0, true);
    char *found = binary_lookup_find(&l, "/gone/prog (deleted)", "");
    CHECK(found && !strcmp(found, copy_path));
    free(found);
    binary_lookup_free(&l);
    free(image);
    unlink(copy_path);
    rmdir(dir);
}

/* Names as addr2line -C (binutils 2.40) prints them: C++, Rust's legacy scheme
 * (escapes undone, the hash dropped) and v0, in each mode; names that are
 * not mangled, or not validly, stay as they are. */
TEST(names_are_demangled_as_addr2line_reads_them)
{
    static const struct {
        const char *mangled, *full, *templates;
    } cases[] = {
        {"_Z4walki", "walk(int)", "walk"},
        {"_ZNK3Foo3getEv", "Foo::get() const", "Foo::get"},
        {"_ZN1m5inner15Walker$LT$T$GT$3sum17h3515d509fde891acE", "m::inner::Walker<T>::sum",
         "m::inner::Walker<T>::sum"},
        {"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
         "closure$u7d$$u7d$$GT$17h0123456789abcdefE",
         "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>",
         "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>"},
        {"_RNvNtCsjrHSEGnQ3l9_3std2rt4init", "std::rt::init", "std::rt::init"},
        {"_RNvMNtCskK7mfDs1mzF_1m5innerINtB2_6WalkermE3sumB4_", "<m::inner::Walker<u32>>::sum",
         "<m::inner::Walker<u32>>::sum"},
        {"_RNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal0B5_",
         "std::rt::lang_start_internal::{closure#0}", "std::rt::lang_start_internal::{closure#0}"},
        {"main", "main", "main"},
        {"_Rb_helper", "_Rb_helper", "_Rb_helper"},
        {"_Z", "_Z", "_Z"},
        {"_RNvC", "_RNvC", "_RNvC"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *full = demangle(cases[i].mangled, DEMANGLE_FULL);
        char *templates = demangle(cases[i].mangled, DEMANGLE_TEMPLATES);
        char *none = demangle(cases[i].mangled, DEMANGLE_NONE);
        CHECK_STR(full, cases[i].full);
        CHECK_STR(templates, cases[i].templates);
        CHECK_STR(none, cases[i].mangled);
        free(full);
        free(templates);
        free(none);
    }
}

/* This test's own executable calls into libc through its PLT: one entry a
 * jump-slot relocation, 16 bytes apart, named "<function>@plt", then (on
 * x86-64, where the start files test __cxa_finalize's address first) the
 * 8-byte entries of .plt.got; a file that is not ELF has none. */
TEST(plt_entries_of_this_executable_are_named_after_their_functions)
{
    elf_version(EV_CURRENT);
    int fd = open("/proc/self/exe", O_RDONLY);
    CHECK(fd >= 0);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    struct plt_symbols plt;
    plt_symbols_read(elf, &plt);
    CHECK(plt.n > 3);
    bool called = false, finalize = false;
    for (size_t i = 0; i < plt.n; i++) {
        size_t len = strlen(plt.entries[i].name);
        CHECK(len > 4 && !strcmp(plt.entries[i].name + len - 4, "@plt"));
        bool slot = plt.entries[i].size == 16;
        CHECK(slot || plt.entries[i].size == 8);
        if (i && slot)
            CHECK(plt.entries[i].addr - plt.entries[i - 1].addr >= 16 &&
                  (plt.entries[i].addr - plt.entries[i - 1].addr) % 16 == 0);
        called |= slot && !strcmp(plt.entries[i].name, "elf_begin@plt");
        finalize |= !slot && !strcmp(plt.entries[i].name, "__cxa_finalize@plt");
    }
    CHECK(called);
#if defined(__x86_64__)
    CHECK(finalize);
#endif
    plt_symbols_free(&plt);
    elf_end(elf);
    close(fd);
    plt_symbols_read(NULL, &plt);
    CHECK_INT(plt.n, 0);
}

/* A PLT stub is named from its relocation without asking DWARF, which
 * has no unit for it: a unit looked for by its ranges would have every
 * unit's read (the whole of .debug_info of a large debug file), as this
 * executable's stubs did before. The PLT's sections hold their entries
 * and not what follows them. */
TEST(plt_stubs_are_named_without_reading_every_units_ranges)
{
    struct elf_binary *b = open_this_executable();
    CHECK(b != NULL);
    if (!b)
        return;
    read_symbols(b);
    CHECK(b->plt.n > 3 && b->plt.nsections > 0);
    struct elf_frame out[8];
    for (size_t i = 0; i < b->plt.n; i++) {
        const struct plt_entry *e = &b->plt.entries[i];
        CHECK(plt_symbols_holds(&b->plt, e->addr));
        CHECK(plt_symbols_holds(&b->plt, e->addr + e->size - 1));
        CHECK_INT(elf_binary_frames(b, e->addr + 5, out, 8), 1);
        CHECK_STR(out[0].name, e->name);
    }
    CHECK(!b->scopes->spans_read);
    GElf_Addr past = 0;
    for (size_t i = 0; i < b->plt.nsections; i++)
        past = b->plt.sections[i].high > past ? b->plt.sections[i].high : past;
    CHECK(!plt_symbols_holds(&b->plt, past));
    elf_binary_close(b);
}

/* A relocatable file's sections have no addresses of their own (each
 * starts at 0), so a .plt there says nothing of where code lies. */
TEST(relocatable_files_have_no_plt_ranges)
{
    const char *dir = temp_dir();
    CHECK(dir != NULL);
    char cmd[512], obj[128];
    snprintf(obj, sizeof(obj), "%s/o.o", dir);
    snprintf(cmd, sizeof(cmd),
             "printf 'int f(void){return 1;}\\n' > %s/o.c && cc -c %s/o.c -o %s && "
             "head -c 64 /dev/zero > %s/plt && objcopy --add-section .plt=%s/plt "
             "--set-section-flags .plt=alloc,code %s",
             dir, dir, obj, dir, dir, obj);
    CHECK_INT(sh(cmd), 0);
    elf_version(EV_CURRENT);
    int fd = open(obj, O_RDONLY);
    Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
    CHECK(elf != NULL);
    struct plt_symbols plt;
    plt_symbols_read(elf, &plt);
    CHECK_INT(plt.nsections, 0);
    CHECK(!plt_symbols_holds(&plt, 8));
    plt_symbols_free(&plt);
    elf_end(elf);
    if (fd >= 0)
        close(fd);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    sh(cmd);
}

/* libc opened with its debug file, inflated into a mapped copy under a
 * temporary directory: what the tests of pages given back look up in. */
struct libc_fixture {
    const char *dir;
    struct inflated_cache *copies;
    struct binary_lookup dirs;
    struct elf_binary *b;
    const uint8_t *image;   /* the debug file's copy as mapped */
    size_t size;
    uint64_t text;          /* the start of libc's .text */
};

/* Opens libc into f; false (and a note that the test is skipped) when
 * this system has no libc with its debug file. */
static bool libc_fixture_open(struct libc_fixture *f)
{
    const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    *f = (struct libc_fixture){0};
    if (access(libc, R_OK) != 0 || access("/usr/lib/debug/.build-id", R_OK) != 0) {
        fprintf(stderr, "  skipped: no %s with its debug file here\n", libc);
        return false;
    }
    elf_version(EV_CURRENT);
    f->dir = temp_dir();
    CHECK(f->dir != NULL);
    f->copies = inflated_cache_new(f->dir, 1ull << 30);
    char err[256];
    static const char *debug_dirs[] = {"/usr/lib/debug"};
    binary_lookup_init(&f->dirs, debug_dirs, 1, NULL, NULL, 0, true);
    struct elf_sources sources = {&f->dirs, "-:.debug:/usr/lib/debug", .inflated = f->copies};
    f->b = elf_binary_open(libc, &sources, err, sizeof(err));
    CHECK(f->b != NULL);
    GElf_Addr bias;
    Dwarf *dw = f->b ? dwfl_module_getdwarf(f->b->mod, &bias) : NULL;
    f->image = dw ? (const uint8_t *)elf_rawfile(dwarf_getelf(dw), &f->size) : NULL;
    CHECK(f->image != NULL);
    CHECK(f->b && elf_binary_text(f->b, &f->text) && f->text != 0);
    return f->image && f->text;
}

static void libc_fixture_close(struct libc_fixture *f)
{
    elf_binary_close(f->b);
    binary_lookup_free(&f->dirs);
    inflated_cache_free(f->copies);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    sh(cmd);
}

/* Looking up addresses all over libc indexes many of its units; the pages
 * of its DWARF read on the way are given back as it goes, so that what
 * stays resident of the file is a window, not all that was read. */
TEST(pages_read_for_lookups_are_given_back_as_units_are_indexed)
{
    struct libc_fixture f;
    if (libc_fixture_open(&f)) {
        struct elf_frame out[16];
        long most = 0;
        for (uint64_t i = 0; i < 4000; i++) {
            elf_binary_frames(f.b, f.text + i * 331, out, 16);
            long rss = i % 16 ? 0 : smaps_field(f.image, "Rss");
            most = rss > most ? rss : most;
        }
        CHECK(scope_index_unit_bytes(f.b->scopes) > f.size / 8);   /* much of it was read */
        CHECK(most > 0);
        /* 2.8 of its 10 MB with a drop per 256 KiB of units; 7 when only
         * units were dropped */
        CHECK((size_t)most < f.size / 1024 / 3);
    }
    if (f.dir)
        libc_fixture_close(&f);
}

/* A lookup that reads less than the units between two drops still gives
 * its pages back once the thread is done with the binary (as a worker is
 * when its next location is in another one). */
TEST(pages_a_lane_read_are_given_back_when_it_is_done)
{
    struct libc_fixture f;
    if (libc_fixture_open(&f)) {
        struct elf_frame out[16];
        elf_binary_frames(f.b, f.text + 64, out, 16);
        long read = smaps_field(f.image, "Rss");
        elf_binary_lane_done(elf_binary_lane(f.b, 0));
        long after = smaps_field(f.image, "Rss");
        CHECK(read > 0);
        CHECK(after >= 0 && after < read);
        fprintf(stderr, "  %ld KiB resident after one lookup, %ld once done\n", read, after);
    }
    if (f.dir)
        libc_fixture_close(&f);
}

/* The pages of a DWARF package read for a lookup are given back with the
 * binary's once the thread is done with it. */
TEST(pages_of_a_dwarf_package_are_given_back_too)
{
    const char *dir = temp_dir();
    char cmd[512], prog[128];
    snprintf(prog, sizeof(prog), "%s/inl", dir);
    snprintf(cmd, sizeof(cmd), "cd %s && gcc -O2 -g -gsplit-dwarf %s/tests/integration/symbolize/"
             "inl.c -o inl && llvm-dwp -e inl -o inl.dwp && rm inl*.dwo", dir, getenv("PWD"));
    if (sh(cmd) != 0) {
        fprintf(stderr, "  skipped: gcc or llvm-dwp cannot make a package here\n");
    } else {
        elf_version(EV_CURRENT);
        char err[256];
        struct elf_sources sources = {.debug_path = ""};
        struct elf_binary *b = elf_binary_open(prog, &sources, err, sizeof(err));
        uint64_t text = 0;
        CHECK(b && elf_binary_text(b, &text));
        struct elf_frame out[16];
        for (uint64_t at = text; b && at < text + 4096; at += 16)   /* main's unit among them */
            elf_binary_frames(b, at, out, 16);
        size_t size = 0;
        Elf *package = b ? scope_index_package_file(b->scopes) : NULL;
        const char *image = package ? elf_rawfile(package, &size) : NULL;
        CHECK(image != NULL);
        long read = image ? smaps_field(image, "Rss") : -1;
        if (b)
            elf_binary_lane_done(elf_binary_lane(b, 0));
        long after = image ? smaps_field(image, "Rss") : -1;
        CHECK(read > 0);
        CHECK(after == 0);
        fprintf(stderr, "  package: %ld KiB resident after one lookup, %ld once done\n", read, after);
        elf_binary_close(b);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    sh(cmd);
}

/* A binary keeping results (from its second profile) answers an address
 * again from them, with what a lookup gives (the same strings of the same
 * lane), and as a binary without results does. */
TEST(results_answer_again_as_lookups_do)
{
    elf_version(EV_CURRENT);
    char err[256];
    struct elf_sources plain = {.debug_path = ""};
    struct elf_sources kept = {.debug_path = "", .results_bytes = 1u << 20};
    struct elf_binary *b = elf_binary_open("/proc/self/exe", &plain, err, sizeof(err));
    struct elf_binary *r = elf_binary_open("/proc/self/exe", &kept, err, sizeof(err));
    CHECK(b && r);
    if (!b || !r)
        return;
    struct stat st;
    CHECK(stat("/proc/self/exe", &st) == 0);
    uint64_t first_vaddr = 0;
    struct elf_frame one[16];
    CHECK(elf_binary_vaddr(r, 0, &first_vaddr));
    elf_binary_frames(r, first_vaddr, one, 16);
    CHECK(!r->results);   /* its first profile keeps none */
    elf_binary_profile_done(r);
    elf_binary_profile_done(b);
    size_t with_frames = 0, looked_up = 0, long_chains = 0;
    for (uint64_t off = 0; off < (uint64_t)st.st_size; off += 61) {
        uint64_t vaddr;
        struct elf_frame want[16], first[16], again[16];
        if (!elf_binary_vaddr(b, off, &vaddr))
            continue;
        looked_up++;
        size_t n = elf_binary_frames(b, vaddr, want, 16);
        CHECK_INT(elf_binary_frames(r, vaddr, first, 16), n);
        CHECK_INT(elf_binary_frames(r, vaddr, again, 16), n);
        for (size_t i = 0; i < n; i++) {
            CHECK_STR(first[i].name, want[i].name);
            CHECK_INT(first[i].line, want[i].line);
            CHECK(again[i].name == first[i].name && again[i].file == first[i].file &&
                  again[i].line == first[i].line && again[i].column == first[i].column);
        }
        with_frames += n > 0;
        long_chains += n > FRAME_CACHE_FRAMES;
    }
    CHECK(with_frames > 100);
    CHECK(r->results && !b->results);
    if (!r->results)
        return;
    CHECK_INT(r->results->hits, looked_up - long_chains);   /* every second lookup kept */
    CHECK_INT(elf_binary_results_room(r), 2 * 2048);   /* 2048 sets of two fit in a MiB */
    CHECK_INT(elf_binary_results_room(b), 0);
    elf_binary_use_results(r, false);   /* a profile too large for them */
    size_t hits = r->results->hits, used = r->results->used;
    struct elf_frame f[16];
    for (uint64_t off = 0; off < (uint64_t)st.st_size; off += 61) {
        uint64_t vaddr;
        if (elf_binary_vaddr(r, off, &vaddr))
            elf_binary_frames(r, vaddr + 1, f, 16);
    }
    CHECK_INT(r->results->hits, hits);
    CHECK_INT(r->results->used, used);
    elf_binary_close(b);
    elf_binary_close(r);
}

/* n frames named after k, for the cache tests. */
static size_t frames_of(uint64_t k, struct elf_frame *out, size_t n)
{
    static const char *names[] = {"a", "b", "c", "d", "e", "f"};
    for (size_t i = 0; i < n; i++)
        out[i] = (struct elf_frame){names[(k + i) % 6], "f.c", "", (int64_t)(k + i), 0, 0};
    return n;
}

/* Addresses x, y, z that fall in one set of c (found by trying). */
static void same_set(struct frame_cache *c, uint64_t *x, uint64_t *y, uint64_t *z)
{
    uint64_t found[3], n = 0;
    for (uint64_t a = 0x1000; n < 3; a++)
        if (cache_set_of(c, a + 1) == cache_set_of(c, 0x1000 + 1))
            found[n++] = a;
    *x = found[0], *y = found[1], *z = found[2];
}

/* A full set gives up the entry used least recently; a chain longer than
 * the cache keeps, or than the caller has room for, is a miss; an address
 * without frames is kept as such. */
TEST(frame_cache_replaces_the_least_recently_used)
{
    struct frame_cache *c = frame_cache_new(FIRST_SETS * sizeof(struct cache_set));
    CHECK(c != NULL);
    CHECK(!frame_cache_new(FIRST_SETS * sizeof(struct cache_set) - 1));
    uint64_t x, y, z;
    same_set(c, &x, &y, &z);
    struct elf_frame in[8], out[8];
    size_t n;
    frame_cache_put(c, x, in, frames_of(x, in, 2));
    frame_cache_put(c, y, in, frames_of(y, in, 3));
    CHECK(frame_cache_get(c, x, out, 8, &n) && n == 2 && out[1].line == (int64_t)x + 1);
    frame_cache_put(c, z, in, frames_of(z, in, 1));   /* y was used least recently */
    CHECK(!frame_cache_get(c, y, out, 8, &n));
    CHECK(frame_cache_get(c, x, out, 8, &n) && n == 2);
    CHECK(frame_cache_get(c, z, out, 8, &n) && n == 1 && out[0].line == (int64_t)z);
    CHECK(!frame_cache_get(c, x, out, 1, &n));   /* no room for its two frames */
    frame_cache_put(c, 7, in, frames_of(7, in, FRAME_CACHE_FRAMES + 1));
    CHECK(!frame_cache_get(c, 7, out, 8, &n));
    frame_cache_put(c, 9, in, 0);
    CHECK(frame_cache_get(c, 9, out, 8, &n) && n == 0);
    CHECK_INT(frame_cache_footprint(c), sizeof(*c) + FIRST_SETS * sizeof(struct cache_set));
    frame_cache_free(c);
}

/* A cache doubles when half its entries are taken, up to its size: of a
 * thousand addresses (a quarter of what a MiB holds) nearly all are kept
 * (one whose set two others took first is not); at its size it holds no
 * more. */
TEST(frame_cache_grows_to_its_size)
{
    size_t bytes = 1u << 20;
    struct frame_cache *c = frame_cache_new(bytes);
    struct elf_frame in[4], out[4];
    size_t n, kept = 0;
    for (uint64_t a = 0; a < 1000; a++)
        frame_cache_put(c, 0x400000 + 4 * a, in, frames_of(a, in, 1 + a % 4));
    for (uint64_t a = 0; a < 1000; a++)
        kept += frame_cache_get(c, 0x400000 + 4 * a, out, 4, &n) && n == 1 + a % 4 &&
                out[0].line == (int64_t)a;
    CHECK(kept >= 900);
    for (uint64_t a = 1000; a < 100000; a++)
        frame_cache_put(c, 0x400000 + 4 * a, in, frames_of(a, in, 1));
    CHECK(frame_cache_footprint(c) <= bytes);
    CHECK(frame_cache_footprint(c) > bytes / 2);
    frame_cache_free(c);
}

static void *host_alloc(struct profd_profile *p, size_t n)
{
    return profd_arena_alloc(p->arena, n);
}

/* The profile's function ref: name and file as strings. */
static void check_function(const struct profd_profile *p, uint32_t ref, const char *name,
                           const char *system_name, const char *file, int64_t line)
{
    CHECK(ref >= 1 && ref <= p->nfunctions);
    const struct profd_function *f = &p->functions[ref - 1];
    CHECK(profd_profile_str_eq(p, f->name, name));
    CHECK(profd_profile_str_eq(p, f->system_name, system_name));
    CHECK(profd_profile_str_eq(p, f->filename, file));
    CHECK_INT(f->start_line, line);
}

/* The test's profile, the index of its functions and two threads' drafts. */
struct functions_fixture {
    struct profd_host host;
    struct profd_profile *p;
    struct profile_functions pf;
    struct function_drafts drafts[2];
    struct function_drafts *sets[2];
};

static void functions_fixture_init(struct functions_fixture *f)
{
    f->host = (struct profd_host){.profile_alloc = host_alloc,
                                  .profile_intern = profd_profile_intern,
                                  .profile_add_function = profd_profile_add_function};
    f->p = profd_profile_new(0);
    profile_functions_init(&f->pf, &f->host, f->p);
    for (int k = 0; k < 2; k++) {
        function_drafts_init(&f->drafts[k], DEMANGLE_FULL);
        f->sets[k] = &f->drafts[k];
    }
}

static void functions_fixture_free(struct functions_fixture *f)
{
    for (int k = 0; k < 2; k++)
        function_drafts_free(&f->drafts[k]);
    profile_functions_free(&f->pf);
    profd_profile_free(f->p);
}

/* Two threads' frames: strings from two copies of one binary. */
static const char fa[] = "_Z4walki", ga[] = "main", file_a[] = "inl.c", dir_a[] = "/src";
static const char gb[] = "main", hb[] = "helper", file_b[] = "inl.c", dir_b[] = "/src";
static const struct elf_frame walk = {fa, file_a, dir_a, 10, 0, 9},
                              main_a = {ga, file_a, dir_a, 30, 0, 28},
                              main_b = {gb, file_b, dir_b, 31, 0, 28},
                              helper = {hb, file_b, dir_b, 5, 0, 4};

TEST(drafts_become_functions_in_draft_order_once_each)
{
    struct functions_fixture f;
    functions_fixture_init(&f);
    struct function_drafts *one = f.sets[0], *two = f.sets[1];
    CHECK_INT(function_drafts_of_frame(one, &walk, 0), 1);
    CHECK_INT(function_drafts_of_frame(one, &main_a, 1), 2);
    CHECK_INT(function_drafts_of_frame(one, &walk, 2), 1);   /* the same strings: no new draft */
    CHECK_INT(function_drafts_named(one, "schedule", 3), 3);
    CHECK_INT(function_drafts_named(one, "schedule", 4), 3);
    CHECK_INT(function_drafts_of_frame(two, &main_b, 5), 1);
    CHECK_INT(function_drafts_of_frame(two, &helper, 6), 2);
    profile_functions_add(&f.pf, f.sets, 2);
    CHECK_INT(f.p->nfunctions, 4);   /* main once, whichever thread found it */
    check_function(f.p, 1, "walk(int)", "_Z4walki", "/src/inl.c", 9);
    check_function(f.p, 2, "main", "main", "/src/inl.c", 28);
    check_function(f.p, 3, "schedule", "schedule", "", 0);
    check_function(f.p, 4, "helper", "helper", "/src/inl.c", 4);
    CHECK_INT(profile_functions_ref(one, 2), 2);
    CHECK_INT(profile_functions_ref(two, 1), 2);
    CHECK_INT(profile_functions_ref(two, 2), 4);
    functions_fixture_free(&f);
}

/* Drafts go into the profile by their first use, whichever thread drafted
 * them and in whatever order: a thread going down the addresses meets a
 * function last that the profile lists first. */
TEST(drafts_are_added_in_order_of_first_use)
{
    struct functions_fixture f;
    functions_fixture_init(&f);
    struct function_drafts *up = f.sets[0], *down = f.sets[1];
    function_drafts_of_frame(up, &helper, 40);
    function_drafts_of_frame(down, &main_b, 90);
    function_drafts_of_frame(down, &walk, 80);
    function_drafts_of_frame(down, &main_b, 10);   /* main's first use: before helper's */
    profile_functions_add(&f.pf, f.sets, 2);
    CHECK_INT(f.p->nfunctions, 3);
    check_function(f.p, 1, "main", "main", "/src/inl.c", 28);
    check_function(f.p, 2, "helper", "helper", "/src/inl.c", 4);
    check_function(f.p, 3, "walk(int)", "_Z4walki", "/src/inl.c", 9);
    functions_fixture_free(&f);
}

RUN_TESTS()
