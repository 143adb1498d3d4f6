// SPDX-License-Identifier: Apache-2.0
#include "loop_inbox.h"

#include <event2/event.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "alloc.h"

struct profd_loop_inbox {
    pthread_mutex_t mu;
    struct profd_inbox_link *first, **tail;   /* posted, not yet taken */
    int efd;                                  /* written when the first item is posted */
    struct event *wake;                       /* the loop's watch on efd */
    profd_inbox_take_fn take;
    void *arg;
};

/* Clears efd's count; EAGAIN when it was clear already. */
static void clear_wake(int efd)
{
    uint64_t count;
    ssize_t got = read(efd, &count, sizeof(count));
    (void)got;
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    clear_wake(fd);
    profd_loop_inbox_take(arg);
}

struct profd_loop_inbox *profd_loop_inbox_new(struct event_base *base, profd_inbox_take_fn take,
                                              void *arg)
{
    struct profd_loop_inbox *in = profd_xcalloc(1, sizeof(*in));
    pthread_mutex_init(&in->mu, NULL);
    in->tail = &in->first;
    in->take = take;
    in->arg = arg;
    in->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    in->wake = in->efd >= 0 ? event_new(base, in->efd, EV_READ | EV_PERSIST, on_wake, in) : NULL;
    if (!in->wake || event_add(in->wake, NULL) != 0) {
        profd_loop_inbox_free(in);
        return NULL;
    }
    return in;
}

void profd_loop_inbox_post(struct profd_loop_inbox *in, struct profd_inbox_link *link)
{
    link->next = NULL;
    pthread_mutex_lock(&in->mu);
    bool first = !in->first;
    *in->tail = link;
    in->tail = &link->next;
    pthread_mutex_unlock(&in->mu);
    uint64_t one = 1;
    ssize_t put = first ? write(in->efd, &one, sizeof(one)) : 0;   /* a counter: never full */
    (void)put;
}

void profd_loop_inbox_take(struct profd_loop_inbox *in)
{
    pthread_mutex_lock(&in->mu);
    struct profd_inbox_link *first = in->first;
    in->first = NULL;
    in->tail = &in->first;
    pthread_mutex_unlock(&in->mu);
    if (first)
        in->take(in->arg, first);
}

void profd_loop_inbox_wait(struct profd_loop_inbox *in)
{
    struct pollfd pfd = {.fd = in->efd, .events = POLLIN};
    if (poll(&pfd, 1, -1) > 0)
        clear_wake(in->efd);
}

void profd_loop_inbox_free(struct profd_loop_inbox *in)
{
    if (!in)
        return;
    if (in->wake)
        event_free(in->wake);
    if (in->efd >= 0)
        close(in->efd);
    pthread_mutex_destroy(&in->mu);
    free(in);
}
