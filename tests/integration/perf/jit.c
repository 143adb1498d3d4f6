// SPDX-License-Identifier: Apache-2.0
/* A program with a JIT of its own (x86-64): it copies a loop's machine
 * code into anonymous executable memory, lists it in /tmp/perf-<pid>.map
 * as JITs do for perf, and runs it for a third of a second. Prints the
 * map's path; whoever runs it removes that file. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static const unsigned char spin_code[] = {
    0xb9, 0xa0, 0x86, 0x01, 0x00,   /* mov $100000, %ecx */
    0xff, 0xc9,                     /* dec %ecx */
    0x75, 0xfc,                     /* jnz back to the dec */
    0xc3,                           /* ret */
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
    unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return 1;
    memcpy(code, spin_code, sizeof(spin_code));
    char path[64];
    snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
    FILE *map = fopen(path, "w");
    if (!map)
        return 1;
    fprintf(map, "%lx %zx jitted_spin\n", (unsigned long)code, sizeof(spin_code));
    fclose(map);
    puts(path);
    void (*spin)(void) = (void (*)(void))code;
    for (double end = now() + 0.3; now() < end;)
        spin();
    return 0;
}
