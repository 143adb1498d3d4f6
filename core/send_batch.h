// SPDX-License-Identifier: Apache-2.0
/*
 * Small writes to many sockets, sent together: through io_uring, one
 * system call for up to a batch of them, or where io_uring cannot be had
 * (an old kernel, a seccomp profile that forbids it) one send() each.
 *
 * Why: each send to a loopback or local peer wakes that peer, and a woken
 * peer preempts the sender as the system call returns. Sent one call each,
 * a round of responses to a client with many connections makes it run once
 * per response; sent in one call, it finds them all when it runs.
 */
#ifndef PROFD_SEND_BATCH_H
#define PROFD_SEND_BATCH_H

#include <stdbool.h>
#include <stddef.h>

/* Told, for each write, how many of its bytes the socket took (0 on an
 * error or a full socket buffer; the caller keeps the rest). */
typedef void (*profd_send_done)(void *tag, size_t sent);

struct profd_send_batch;

/* A batch of up to max writes at once (more are sent in several), which
 * tries io_uring when try_uring is true. Never NULL. */
struct profd_send_batch *profd_send_batch_new(unsigned max, bool try_uring,
                                              profd_send_done done);
/* Queues len bytes of data, which must stay valid until done is called
 * for tag, to the non-blocking socket fd; a full batch is sent first. */
void profd_send_batch_add(struct profd_send_batch *b, int fd, const void *data, size_t len,
                          void *tag);
/* Sends what is queued; done is called for each write before it returns. */
void profd_send_batch_flush(struct profd_send_batch *b);
/* Whether the batch sends through io_uring. */
bool profd_send_batch_uses_uring(const struct profd_send_batch *b);
/* Frees the batch; what is queued is sent first. Accepts NULL. */
void profd_send_batch_free(struct profd_send_batch *b);

#endif
