// SPDX-License-Identifier: Apache-2.0
/* The push benchmark's floor: what the kernel charges for the files a
 * pprof_file exporter writes, with nothing else around them. Writes COUNT
 * files, round robin from the contents of FILE..., the k-th input's copies
 * into DIR/k/, each as pprof_file writes one (an unnamed O_TMPFILE made in
 * the directory's open descriptor, one write, linked in by its descriptor
 * under its name in that directory, closed), and prints the CPU (user +
 * system) and the wall time a file took, in microseconds. Then it removes
 * them and writes them again at once, and prints the same two figures for
 * that second pass: its files take the pages the first pass just freed.
 * On a virtual machine that hands the memory its guest frees back to the
 * host, the first pass pays for the host's faults on pages not touched
 * since; the second does not, as a machine whose memory is its own.
 * usage: file_floor DIR COUNT FILE... */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct input {
    char *data;
    size_t len;
    char dir[PATH_MAX];
    int dir_fd;   /* kept open, as pprof_file keeps its directories */
};

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *what, const char *where)
{
    fprintf(stderr, "file_floor: %s %s: %s\n", what, where, strerror(errno));
    exit(1);
}

/* Reads path whole into in, and makes its directory under root. */
static void load(struct input *in, const char *root, int k, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail("cannot open", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    in->data = malloc(len > 0 ? (size_t)len : 1);
    if (!in->data || len < 0 || fread(in->data, 1, (size_t)len, f) != (size_t)len)
        fail("cannot read", path);
    fclose(f);
    in->len = (size_t)len;
    snprintf(in->dir, sizeof(in->dir), "%s/%d", root, k);
    if (mkdir(in->dir, 0755) < 0 && errno != EEXIST)
        fail("cannot create", in->dir);
    in->dir_fd = open(in->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (in->dir_fd < 0)
        fail("cannot open", in->dir);
}

static void file_name(char *name, size_t size, long n)
{
    snprintf(name, size, "%ld.pb.gz", n);
}

/* One file, the way pprof_file writes it. */
static void write_one(const struct input *in, long n)
{
    char name[32];
    file_name(name, sizeof(name), n);
    int fd = openat(in->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        fail("O_TMPFILE in", in->dir);
    if (write(fd, in->data, in->len) != (ssize_t)in->len)
        fail("cannot write in", in->dir);
    if (linkat(fd, "", in->dir_fd, name, AT_EMPTY_PATH) < 0)
        fail("cannot link", name);
    close(fd);
}

/* Writes count files round robin and prints what one took. */
static void write_pass(const struct input *in, int inputs, long count)
{
    double cpu = cpu_seconds(), wall = wall_seconds();
    for (long n = 0; n < count; n++)
        write_one(&in[n % inputs], n);
    printf("%.2f %.2f ", (cpu_seconds() - cpu) * 1e6 / (double)count,
           (wall_seconds() - wall) * 1e6 / (double)count);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: file_floor DIR COUNT FILE...\n");
        return 2;
    }
    long count = atol(argv[2]);
    int inputs = argc - 3;
    struct input *in = calloc((size_t)inputs, sizeof(*in));
    if (!in || count <= 0)
        return 2;
    for (int k = 0; k < inputs; k++)
        load(&in[k], argv[1], k, argv[k + 3]);
    write_pass(in, inputs, count);
    for (long n = 0; n < count; n++) {
        char name[32];
        file_name(name, sizeof(name), n);
        if (unlinkat(in[n % inputs].dir_fd, name, 0) < 0)
            fail("cannot remove", name);
    }
    write_pass(in, inputs, count);
    printf("\n");
    return 0;
}
