// SPDX-License-Identifier: Apache-2.0
/*
 * A minimal test harness: TEST(name) defines a case, CHECK* record failures
 * without stopping the case, and RUN_TESTS() in main runs every case and
 * prints "N passed, N failed". Cases register themselves at load time.
 */
#ifndef PROFD_CHECK_H
#define PROFD_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct check_case {
    const char *name;
    void (*fn)(void);
};

extern struct check_case check_cases[256];
extern int check_ncases, check_case_failed;

#define TEST(name)                                                                   \
    static void test_##name(void);                                                   \
    __attribute__((constructor)) static void register_##name(void)                   \
    {                                                                                \
        check_cases[check_ncases++] = (struct check_case){#name, test_##name};       \
    }                                                                                \
    static void test_##name(void)

#define CHECK_FAIL_(fmt, ...)                                                        \
    do {                                                                             \
        fprintf(stderr, "  %s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__);      \
        check_case_failed = 1;                                                       \
    } while (0)

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond))                                                                 \
            CHECK_FAIL_("CHECK(%s) failed", #cond);                                  \
    } while (0)

#define CHECK_INT(a, b)                                                              \
    do {                                                                             \
        long long a_ = (long long)(a), b_ = (long long)(b);                          \
        if (a_ != b_)                                                                \
            CHECK_FAIL_("%s == %lld, want %s == %lld", #a, a_, #b, b_);              \
    } while (0)

#define CHECK_STR(a, b)                                                              \
    do {                                                                             \
        const char *a_ = (a), *b_ = (b);                                             \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                                       \
            CHECK_FAIL_("%s == \"%s\", want \"%s\"", #a, a_ ? a_ : "(null)",         \
                        b_ ? b_ : "(null)");                                         \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                  \
    do {                                                                             \
        const char *h_ = (hay), *n_ = (needle);                                      \
        if (!h_ || !strstr(h_, n_))                                                  \
            CHECK_FAIL_("%s == \"%s\" lacks \"%s\"", #hay, h_ ? h_ : "(null)", n_); \
    } while (0)

/* Defines the case table; RUN_TESTS() does it for the usual main. */
#define CHECK_STORAGE()                                                              \
    struct check_case check_cases[256];                                              \
    int check_ncases, check_case_failed

/* Runs every case; prints "N passed, N failed"; returns the exit code. */
static inline int check_run_all(void)
{
    int passed = 0, failed = 0;
    for (int i = 0; i < check_ncases; i++) {
        check_case_failed = 0;
        check_cases[i].fn();
        if (check_case_failed) {
            failed++;
            fprintf(stderr, "FAIL %s\n", check_cases[i].name);
        } else {
            passed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#define RUN_TESTS()                                                                  \
    CHECK_STORAGE();                                                                 \
    int main(void)                                                                   \
    {                                                                                \
        return check_run_all();                                                      \
    }

/* Reads a whole file into a malloc'd buffer; aborts when it cannot. */
static inline unsigned char *check_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        abort();
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        abort();
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The shared corpus directory: $PROFD_CORPUS, else ../shared/corpus. */
static inline const char *check_corpus(void)
{
    const char *c = getenv("PROFD_CORPUS");
    return c ? c : "../shared/corpus";
}

#endif
