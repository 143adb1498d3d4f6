// SPDX-License-Identifier: Apache-2.0
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/alloc.h"
#include "tree.h"

struct diag_origin {
    const void *field;
    const struct cfg_node *node;
};

void profd_diag_add(struct profd_diag *d, const struct cfg_node *at, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    profd_grow(&d->msgs, &d->cap, d->n + 1, sizeof(*d->msgs));
    d->msgs[d->n++] = at ? profd_xasprintf("%s:%d:%d: %s", at->file, at->line, at->col, msg)
                         : profd_xstrdup(msg);
}

void profd_diag_track(struct profd_diag *d, const void *field, const struct cfg_node *node)
{
    profd_grow(&d->origins, &d->origins_cap, d->norigins + 1, sizeof(*d->origins));
    d->origins[d->norigins++] = (struct diag_origin){field, node};
}

const struct cfg_node *profd_diag_origin(const struct profd_diag *d, const void *field)
{
    for (size_t i = d->norigins; i-- > 0;)
        if (d->origins[i].field == field)
            return d->origins[i].node;
    return NULL;
}

void profd_diag_forget_origins(struct profd_diag *d)
{
    free(d->origins);
    d->origins = NULL;
    d->norigins = d->origins_cap = 0;
}

void profd_diag_print(const struct profd_diag *d, void *file)
{
    for (size_t i = 0; i < d->n; i++)
        fprintf(file, "error: %s\n", d->msgs[i]);
}

void profd_diag_free(struct profd_diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->msgs[i]);
    free(d->msgs);
    profd_diag_forget_origins(d);
    d->msgs = NULL;
    d->n = d->cap = 0;
}
