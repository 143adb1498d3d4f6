// SPDX-License-Identifier: Apache-2.0
/* A request's body lent to the records made from it: see body_lend.h. */
#include "body_lend.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "alloc.h"

struct profd_shared_bytes {
    _Atomic int refs;
    uint8_t *buf;
};

/* What this thread lends: the body, the size of the buffer it lies in (as
 * far as the server knows it: what a slice keeps alive), where that buffer
 * is kept, and the buffer once taken (the lending's own hold). */
struct lending {
    const uint8_t *body;
    size_t len, held;
    const struct profd_body_lender *lender;
    struct profd_shared_bytes *taken;
};

static __thread struct lending lent;

void profd_body_lend_begin(const uint8_t *body, size_t len, const struct profd_body_lender *lender)
{
    size_t cap = lender && lender->cap ? *lender->cap : 0;
    lent = (struct lending){
        .body = body, .len = len, .held = cap > len ? cap : len, .lender = lender};
}

void profd_body_lend_end(void)
{
    profd_shared_bytes_unref(lent.taken);
    lent = (struct lending){0};
}

struct profd_shared_bytes *profd_body_borrow(const uint8_t *data, size_t len)
{
    uintptr_t at = (uintptr_t)data, body = (uintptr_t)lent.body;
    if (!lent.lender || lent.len < PROFD_BODY_LEND_FROM || at < body || len > lent.len ||
        at - body > lent.len - len || len < lent.held - lent.held / 2)
        return NULL;
    if (!lent.taken) {
        uint8_t **slot = lent.lender->buf;
        if (!*slot)
            return NULL;
        lent.taken = profd_xmalloc(sizeof(*lent.taken));
        atomic_init(&lent.taken->refs, 1);
        lent.taken->buf = *slot;
        *slot = NULL;
        if (lent.lender->cap)
            *lent.lender->cap = 0;
    }
    profd_shared_bytes_ref(lent.taken);
    return lent.taken;
}

void profd_shared_bytes_ref(struct profd_shared_bytes *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void profd_shared_bytes_unref(struct profd_shared_bytes *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(s->buf);
    free(s);
}
