// SPDX-License-Identifier: Apache-2.0
/* A small program for fresh `perf record` runs in the tests: the parent
 * burns CPU in two threads, a forked child in its own function, then the
 * child execs /bin/true, so samples span fork, threads and exec. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(double seconds)
{
    double end = now() + seconds;
    while (now() < end)
        for (int i = 0; i < 10000; i++)
            sink += (uint64_t)i * i;
}

__attribute__((noinline)) static void *thread_work(void *arg)
{
    (void)arg;
    spin(0.15);
    return NULL;
}

__attribute__((noinline)) static void child_work(void)
{
    spin(0.1);
}

int main(void)
{
    pid_t child = fork();
    if (child == 0) {
        child_work();
        execl("/bin/true", "true", (char *)NULL);
        _exit(1);
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, thread_work, NULL);
    spin(0.1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    waitpid(child, NULL, 0);
    return 0;
}
