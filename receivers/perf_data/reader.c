// SPDX-License-Identifier: Apache-2.0
#include "reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../lib/memory_release.h"

#define ORDER_MAX_BYTES (64u << 20)   /* queued records before an early flush */
#define LOGGED_SKIPS 10
#define CHECK_STEP (1u << 20)        /* input bytes between progress/release checks */

struct perf_reader *perf_reader_new(const struct profd_host *h, struct profd_component *self,
                                    const char *path)
{
    struct perf_reader *rd = calloc(1, sizeof(*rd));
    if (!rd || !(rd->path = strdup(path)))
        abort();
    rd->h = h;
    rd->self = self;
    rd->shown_percent = -1;
    return rd;
}

static void deliver(void *arg, const struct perf_record *r)
{
    struct perf_reader *rd = arg;
    char err[256];
    if (perf_session_add(rd->session, r, err, sizeof(err)) == 0)
        return;
    if (rd->skipped++ < LOGGED_SKIPS)
        rd->h->log(rd->self, PROFD_LOG_WARN, "%s: %s (record skipped)", rd->path, err);
}

void perf_reader_start(struct perf_reader *rd, const struct perf_session_options *o)
{
    rd->session = perf_session_new(rd->h, &rd->file, o);
    rd->order = perf_order_new(&rd->file, ORDER_MAX_BYTES, deliver, rd);
}

/* "\rpath: 42% (120 of 285 MiB)" on stderr when the percentage moves. */
static void show_progress(struct perf_reader *rd)
{
    const struct perf_file *f = &rd->file;
    if (!f->end)
        return;
    int percent = (int)(100.0 * (double)f->pos / (double)f->end);
    if (percent == rd->shown_percent)
        return;
    rd->shown_percent = percent;
    fprintf(stderr, "\r%s: %3d%% (%zu of %zu MiB)%s", rd->path, percent, f->pos >> 20,
            f->end >> 20, percent == 100 ? "\n" : "");
}

/* Drops the mapped pages already read and no longer queued (records not
 * copied stay readable where they are), so a file's resident memory stays
 * a window, not the whole file. */
static void release_read_pages(struct perf_reader *rd)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint64_t keep = perf_order_oldest_stable(rd->order);   /* queued bodies read from here */
    size_t upto = (keep < rd->file.pos ? keep : rd->file.pos) / page * page;
    if (upto <= rd->released)
        return;
    madvise((void *)(uintptr_t)(rd->file.data + rd->released), upto - rd->released, MADV_DONTNEED);
    rd->released = upto;
}

int perf_reader_pump(struct perf_reader *rd, char *err, size_t errlen)
{
    struct perf_record r;
    int rc;
    size_t next_check = rd->file.pos + CHECK_STEP;
    while ((rc = perf_next(&rd->file, &r, err, errlen)) == 1) {
        if (r.type == PERF_RECORD_FINISHED_ROUND)
            perf_order_round(rd->order);
        else
            perf_order_add(rd->order, &r, rd->mapped && r.body >= rd->file.data &&
                                              r.body < rd->file.data + rd->file.len);
        if (rd->file.pos < next_check)
            continue;
        next_check = rd->file.pos + CHECK_STEP;
        if (rd->progress)
            show_progress(rd);
        if (rd->mapped)
            release_read_pages(rd);
    }
    if (rd->progress && rc == 0)
        show_progress(rd);
    return rc;
}

size_t perf_reader_flush(struct perf_reader *rd, bool final, bool discard)
{
    const struct profd_host *h = rd->h;
    if (final)
        perf_order_drain(rd->order);
    size_t n;
    struct perf_output *outs = perf_session_flush(rd->session, &n);
    struct profd_batch *b = h->batch_new();
    for (size_t i = 0; i < n; i++) {
        if (discard) {
            h->profile_free(outs[i].profile);
        } else {
            struct profd_record *r = h->record_add_profile(b, outs[i].profile);
            h->labels_copy(&r->labels, &outs[i].labels);
            h->record_set_label(r, "__file__", rd->path);
            r->time_nanos = outs[i].profile->time_nanos;
            r->duration_nanos = outs[i].profile->duration_nanos;
        }
        h->labels_clear(&outs[i].labels);
    }
    free(outs);
    if (!final)   /* a stream goes on: what ended is not needed again */
        perf_session_forget_ended(rd->session);
    memory_release();   /* the aggregation's freed tables go back before the pipeline works */
    if (!discard && n && h->emit(rd->self, b) == PROFD_ERETRY)
        h->log(rd->self, PROFD_LOG_WARN, "%s: pipeline full, profiles dropped", rd->path);
    h->batch_unref(b);
    return discard ? 0 : n;
}

void perf_reader_free(struct perf_reader *rd)
{
    if (!rd)
        return;
    perf_order_free(rd->order);
    perf_session_free(rd->session);
    perf_close(&rd->file);
    free(rd->path);
    free(rd);
}
