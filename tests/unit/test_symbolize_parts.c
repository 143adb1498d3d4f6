// SPDX-License-Identifier: Apache-2.0
/* The symbolize module's kernel symbol tables: a sorted kallsyms file is
 * searched where it lies, anything else is read into a table, and both
 * answer every address alike. Compiled in from the module sources. */
#include "check.h"

#include <unistd.h>

#include "../../lib/grow.c"
#include "../../processors/symbolize/kernel_symbols.c"

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
    CHECK(mapped && mapped->map);
    CHECK(table && !table->map);
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
    CHECK(k && !k->map);
    if (!k)
        return;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        if (i != 1 && i != 3 && i != 4)   /* which alias wins follows the file's order */
            CHECK_STR(name_at(k, cases[i].addr), cases[i].want);
    kernel_symbols_free(k);
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

RUN_TESTS()
