// SPDX-License-Identifier: Apache-2.0
#include "body_budget.h"

bool profd_body_budget_count(struct profd_body_budget *b, size_t *counted, size_t len)
{
    if (len < PROFD_BODY_COUNTED_FROM || len <= *counted)
        return true;
    size_t more = len - *counted;
    size_t held = atomic_load_explicit(&b->held, memory_order_relaxed);
    do {
        if (b->limit && (held > b->limit || more > b->limit - held))
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&b->held, &held, held + more,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed));
    *counted = len;
    return true;
}

void profd_body_budget_release(struct profd_body_budget *b, size_t *counted)
{
    if (*counted)
        atomic_fetch_sub_explicit(&b->held, *counted, memory_order_relaxed);
    *counted = 0;
}
