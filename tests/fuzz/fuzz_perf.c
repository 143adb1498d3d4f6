// SPDX-License-Identifier: Apache-2.0
/* libFuzzer driver: the perf.data reader, time ordering and session, on the
 * input as a whole file and again as a stream fed in chunks whose sizes
 * come from the input's last byte. Whatever the bytes, nothing crashes or
 * leaks and the profiles built from them encode as pprof. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/graph.h"
#include "../../core/pprof.h"
#include "../../receivers/perf_data/order.h"
#include "../../receivers/perf_data/perf_file.h"
#include "../../receivers/perf_data/session.h"

static void deliver(void *arg, const struct perf_record *r)
{
    char err[256];
    perf_session_add(arg, r, err, sizeof(err));
}

/* Profiles of the session so far must encode. */
static void flush(struct perf_session *s)
{
    size_t n;
    struct perf_output *outs = perf_session_flush(s, &n);
    for (size_t i = 0; i < n; i++) {
        uint8_t *buf;
        size_t len;
        profd_pprof_encode_raw(outs[i].profile, &buf, &len);
        free(buf);
        profd_host_services.profile_free(outs[i].profile);
        profd_host_services.labels_clear(&outs[i].labels);
    }
    free(outs);
}

/* Reads records until the input ends, needs more, or fails. */
static int pump(struct perf_file *f, struct perf_order *q)
{
    struct perf_record r;
    char err[256];
    int rc;
    while ((rc = perf_next(f, &r, err, sizeof(err))) == 1) {
        if (r.type == PERF_RECORD_FINISHED_ROUND)
            perf_order_round(q);
        else
            perf_order_add(q, &r, !f->stream && r.body >= f->data && r.body < f->data + f->len);
    }
    return rc;
}

static void run(struct perf_file *f, const uint8_t *data, size_t len, size_t chunk)
{
    struct perf_session_options o = {.split = (enum perf_split)(len % 3), .label_tid = true,
                                      .label_comm = true, .label_cpu = true};
    struct perf_session *s = perf_session_new(&profd_host_services, f, &o);
    struct perf_order *q = perf_order_new(f, 4096, deliver, s);
    if (!chunk) {
        pump(f, q);
    } else {
        for (size_t at = 0; at < len; at += chunk) {
            perf_feed(f, data + at, len - at < chunk ? len - at : chunk);
            if (pump(f, q) < 0)
                break;
            if (at % (4 * chunk) == 0) {
                flush(s);
                perf_session_forget_ended(s);
            }
        }
        perf_end_stream(f);
        pump(f, q);
    }
    perf_order_drain(q);
    flush(s);
    perf_order_free(q);
    perf_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    struct perf_file f;
    char err[256];
    if (perf_open(&f, data, len, err, sizeof(err)) == 0)
        run(&f, data, len, 0);
    perf_close(&f);
    perf_open_stream(&f);
    run(&f, data, len, len ? 1 + data[len - 1] % 64 : 1);
    perf_close(&f);
    return 0;
}
