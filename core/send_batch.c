// SPDX-License-Identifier: Apache-2.0
#include "send_batch.h"

#include <liburing.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "alloc.h"

struct queued {
    int fd;
    const void *data;
    size_t len;
    void *tag;
    bool reported;
};

struct profd_send_batch {
    profd_send_done done;
    struct queued *q;
    unsigned n, max;
    bool uring;   /* ring below is set up */
    struct io_uring ring;
};

struct profd_send_batch *profd_send_batch_new(unsigned max, bool try_uring,
                                              profd_send_done done)
{
    struct profd_send_batch *b = profd_xcalloc(1, sizeof(*b));
    b->max = max ? max : 1;
    b->done = done;
    b->q = profd_xcalloc(b->max, sizeof(*b->q));
    b->uring = try_uring && io_uring_queue_init(b->max, &b->ring, 0) == 0;
    return b;
}

bool profd_send_batch_uses_uring(const struct profd_send_batch *b)
{
    return b->uring;
}

static void report(struct profd_send_batch *b, struct queued *w, ssize_t sent)
{
    w->reported = true;
    b->done(w->tag, sent > 0 ? (size_t)sent : 0);
}

/* Sends the queued writes that io_uring took in one call (MSG_DONTWAIT: a
 * full socket completes at once with EAGAIN, rather than the ring waiting
 * for room). A submission the kernel refuses in part gives the ring up:
 * what it did not take is left for plain sends. */
static void flush_uring(struct profd_send_batch *b)
{
    for (unsigned i = 0; i < b->n; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);   /* room: n <= entries */
        io_uring_prep_send(sqe, b->q[i].fd, b->q[i].data, b->q[i].len,
                           MSG_NOSIGNAL | MSG_DONTWAIT);
        io_uring_sqe_set_data(sqe, &b->q[i]);
    }
    int submitted = io_uring_submit_and_wait(&b->ring, b->n);
    struct io_uring_cqe *cqe;
    for (int i = 0; i < submitted && io_uring_wait_cqe(&b->ring, &cqe) == 0; i++) {
        struct queued *w = io_uring_cqe_get_data(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&b->ring, cqe);
        report(b, w, res);
    }
    if (submitted != (int)b->n) {
        io_uring_queue_exit(&b->ring);
        b->uring = false;
    }
}

void profd_send_batch_flush(struct profd_send_batch *b)
{
    if (!b->n)
        return;
    if (b->uring)
        flush_uring(b);
    for (unsigned i = 0; i < b->n; i++)
        if (!b->q[i].reported)
            report(b, &b->q[i], send(b->q[i].fd, b->q[i].data, b->q[i].len,
                                     MSG_NOSIGNAL | MSG_DONTWAIT));
    b->n = 0;
}

void profd_send_batch_add(struct profd_send_batch *b, int fd, const void *data, size_t len,
                          void *tag)
{
    if (b->n == b->max)
        profd_send_batch_flush(b);
    b->q[b->n++] = (struct queued){fd, data, len, tag, false};
}

void profd_send_batch_free(struct profd_send_batch *b)
{
    if (!b)
        return;
    profd_send_batch_flush(b);
    if (b->uring)
        io_uring_queue_exit(&b->ring);
    free(b->q);
    free(b);
}
