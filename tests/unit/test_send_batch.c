// SPDX-License-Identifier: Apache-2.0
/* Writes sent together, through io_uring and through plain sends: every
 * byte arrives where it was sent, a full socket reports what it took, and a
 * batch larger than its size goes out in several. */
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../core/send_batch.h"
#include "check.h"

#define SOCKETS 40

struct write_seen {
    size_t sent;
    int calls;
};

static void record_sent(void *tag, size_t sent)
{
    struct write_seen *w = tag;
    w->sent += sent;
    w->calls++;
}

/* A connected pair of stream sockets, [0] non-blocking. */
static void socket_pair(int fds[2])
{
    CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
}

static void sends_arrive(bool try_uring, unsigned batch_size)
{
    int fds[SOCKETS][2];
    char text[SOCKETS][32];
    struct write_seen seen[SOCKETS] = {{0}};
    struct profd_send_batch *b = profd_send_batch_new(batch_size, try_uring, record_sent);
    for (int i = 0; i < SOCKETS; i++) {
        socket_pair(fds[i]);
        snprintf(text[i], sizeof(text[i]), "response %d", i);
        profd_send_batch_add(b, fds[i][0], text[i], strlen(text[i]), &seen[i]);
    }
    profd_send_batch_flush(b);
    for (int i = 0; i < SOCKETS; i++) {
        CHECK_INT(seen[i].calls, 1);
        CHECK_INT(seen[i].sent, strlen(text[i]));
        char got[64] = "";
        CHECK_INT(read(fds[i][1], got, sizeof(got) - 1), strlen(text[i]));
        CHECK_STR(got, text[i]);
        close(fds[i][0]);
        close(fds[i][1]);
    }
    profd_send_batch_free(b);
}

TEST(writes_arrive_through_io_uring_in_one_batch_or_several)
{
    struct profd_send_batch *probe = profd_send_batch_new(4, true, record_sent);
    bool uring = profd_send_batch_uses_uring(probe);
    profd_send_batch_free(probe);
    if (!uring) {
        fprintf(stderr, "  (io_uring is not available here: plain sends only)\n");
        return;
    }
    sends_arrive(true, 64);
    sends_arrive(true, 7);
}

TEST(writes_arrive_through_plain_sends)
{
    struct profd_send_batch *b = profd_send_batch_new(8, false, record_sent);
    CHECK(!profd_send_batch_uses_uring(b));
    profd_send_batch_free(b);
    sends_arrive(false, 64);
    sends_arrive(false, 7);
}

/* A socket whose buffer is full takes part of a write, then nothing; the
 * batch says so instead of waiting. */
static void full_socket_reports_what_it_took(bool try_uring)
{
    int fds[2];
    socket_pair(fds);
    int small = 4096;
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    size_t len = 1 << 20;
    char *big = calloc(1, len);
    struct write_seen first = {0}, second = {0};
    struct profd_send_batch *b = profd_send_batch_new(4, try_uring, record_sent);
    profd_send_batch_add(b, fds[0], big, len, &first);
    profd_send_batch_flush(b);
    CHECK_INT(first.calls, 1);
    CHECK(first.sent > 0 && first.sent < len);
    profd_send_batch_add(b, fds[0], big, len, &second);
    profd_send_batch_free(b);   /* sends what is queued */
    CHECK_INT(second.calls, 1);
    CHECK_INT(second.sent, 0);
    size_t got = 0;
    ssize_t n;
    fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    while ((n = read(fds[1], big, len)) > 0)
        got += (size_t)n;
    CHECK_INT(got, first.sent);
    close(fds[0]);
    close(fds[1]);
    free(big);
}

TEST(a_full_socket_reports_what_it_took)
{
    full_socket_reports_what_it_took(true);
    full_socket_reports_what_it_took(false);
}

RUN_TESTS()
