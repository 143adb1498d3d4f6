// SPDX-License-Identifier: Apache-2.0
/* JFR recordings as the pyroscope receiver reads them (format=jfr): the
 * JDK's recording in tests/integration/jfr, cut short anywhere, and
 * pyroscope-java's context labels. Compiled in from the module sources. */
#include "check.h"

#include "../../core/graph.h"
#include "../../core/gzip.h"
#include "../../core/pb.h"
#include "../../core/profile.h"
#include "../../lib/grow.c"
#include "../../lib/key_map.c"
#include "../../receivers/pyroscope/jfr.c"
#include "../../receivers/pyroscope/jfr_chunk.c"
#include "../../receivers/pyroscope/jfr_reader.c"
#include "../../receivers/pyroscope/multipart.c"

/* The recording tests/integration/jfr/<name>.jfr.gz, inflated. */
static uint8_t *recording_named(const char *name, size_t *len)
{
    size_t gz_len;
    char err[256], path[256];
    snprintf(path, sizeof(path), "tests/integration/jfr/%s.jfr.gz", name);
    unsigned char *gz = check_read_file(path, &gz_len);
    uint8_t *data;
    CHECK_INT(profd_gunzip(gz, gz_len, 1 << 24, &data, len, err, sizeof(err)), 0);
    free(gz);
    return data;
}

/* The JDK's recording of Burn.java. */
static uint8_t *recording(size_t *len)
{
    return recording_named("burn", len);
}

/* Counts samples by kind, and in counts[JFR_KINDS] those without frames. */
static bool count_kinds(void *arg, const struct jfr_sample *s)
{
    size_t *counts = arg;
    counts[s->kind]++;
    counts[JFR_KINDS] += s->nframes == 0;
    for (uint32_t i = 0; i < s->nframes; i++)
        CHECK(s->frames[i].class_len > 0 && s->frames[i].method_len > 0);
    return true;
}

/* The numbers of events the JDK's jfr tool reads (burn.expected.json)
 * with a stack trace: two allocations by a compiler thread have none and
 * are left out, as Pyroscope leaves them out; one (at exit) has a stack of
 * no frames. */
TEST(every_sample_of_the_recording)
{
    size_t len, counts[JFR_KINDS + 1] = {0};
    uint8_t *data = recording(&len);
    struct jfr_span span;
    char why[256];
    CHECK(jfr_read(data, len, count_kinds, counts, &span, why, sizeof(why)) ==
          173 + 1688 + 1 + 399);
    CHECK_INT(counts[JFR_CPU], 173);
    CHECK_INT(counts[JFR_ALLOC_IN_TLAB], 1688);
    CHECK_INT(counts[JFR_ALLOC_OUTSIDE], 1);
    CHECK_INT(counts[JFR_ALLOC_SAMPLE], 399);
    CHECK_INT(counts[JFR_KINDS], 1);
    CHECK(span.start_nanos > 1700000000LL * 1000000000 && span.duration_nanos > 1000000000);
    uint8_t *twice = malloc(2 * len);   /* two chunks, as a longer recording has them */
    memcpy(twice, data, len);
    memcpy(twice + len, data, len);
    CHECK(jfr_read(twice, 2 * len, count_kinds, counts, &span, why, sizeof(why)) ==
          2 * (173 + 1688 + 1 + 399));
    CHECK_INT(counts[JFR_CPU], 3 * 173);
    free(twice);
    free(data);
}

static bool count_all(void *arg, const struct jfr_sample *s)
{
    (void)s;
    ++*(long *)arg;
    return true;
}

/* A recording cut anywhere is refused with the byte it ends at, or (cut
 * between chunks) read as far as it goes: never read past its end, which
 * the sanitizers would see. */
TEST(a_recording_cut_short_is_an_error_at_its_end)
{
    size_t len;
    uint8_t *data = recording(&len);
    char why[256];
    struct jfr_span span;
    for (size_t cut = 0; cut < len; cut += cut < 200 ? 1 : 61) {
        uint8_t *part = malloc(cut ? cut : 1);   /* its own block: an overread is caught */
        memcpy(part, data, cut);
        long n = 0;
        CHECK(jfr_read(part, cut, count_all, &n, &span, why, sizeof(why)) == -1);
        CHECK(cut == 0 || strstr(why, "JFR: ") == why);
        free(part);
    }
    data[5] = 1;   /* version 1 */
    CHECK(jfr_read(data, len, count_all, &(long){0}, &span, why, sizeof(why)) == -1);
    CHECK_STR(why, "JFR: a JFR version other than 2 at byte 0");
    free(data);
}

/* Swaps the n bytes of a and b wherever either is in data. */
static void swap_strings(uint8_t *data, size_t len, const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i + n <= len; i++) {
        bool is_a = !memcmp(data + i, a, n);
        if (is_a || !memcmp(data + i, b, n)) {
            memcpy(data + i, is_a ? b : a, n);
            i += n - 1;
        }
    }
}

/* A sample of a thread asleep is no CPU (as in Pyroscope): the recording
 * with its thread states' names swapped has every ExecutionSample asleep. */
TEST(samples_of_threads_asleep_are_no_cpu)
{
    size_t len, counts[JFR_KINDS + 1] = {0};
    uint8_t *data = recording(&len);
    struct jfr_span span;
    char why[256];
    swap_strings(data, len, "STATE_RUNNABLE", "STATE_SLEEPING", 14);
    CHECK(jfr_read(data, len, count_kinds, counts, &span, why, sizeof(why)) == 1688 + 1 + 399);
    CHECK_INT(counts[JFR_CPU], 0);
    CHECK_INT(counts[JFR_ALLOC_IN_TLAB], 1688);
    free(data);
}

/* async-profiler's wall mode (an ActiveSetting event=wall): each of the
 * 38 execution samples is CPU and wall time; its 159 WallClockSamples and
 * 159 Mallocs are read too (wall.expected.json). */
TEST(wall_mode_and_async_profiler_events)
{
    size_t len, counts[JFR_KINDS + 1] = {0};
    uint8_t *data = recording_named("wall", &len);
    struct jfr_span span;
    char why[256];
    CHECK(jfr_read(data, len, count_kinds, counts, &span, why, sizeof(why)) == 38 * 2 + 159 * 2);
    CHECK_INT(counts[JFR_CPU], 38);
    CHECK_INT(counts[JFR_WALL], 38 + 159);
    CHECK_INT(counts[JFR_MALLOC], 159);
    swap_strings(data, len, "wall", "walk", 4);   /* event=walk: no wall mode */
    memset(counts, 0, sizeof(counts));
    CHECK(jfr_read(data, len, count_kinds, counts, &span, why, sizeof(why)) == 38 + 159 * 2);
    CHECK_INT(counts[JFR_WALL], 159);
    free(data);
}

/* pyroscope-java's LabelsSnapshot: a sample's contextId gives it that
 * context's labels, as pprof sample labels. */
TEST(context_labels_from_the_snapshot)
{
    struct pb_writer w = {0};
    size_t entry = pb_begin(&w, 1), ctx, pair;   /* contexts {7: {labels {1: 2, 1: 3}}} */
    pb_put_uint(&w, 1, 7);
    ctx = pb_begin(&w, 2);
    for (uint64_t value = 2; value <= 3; value++) {
        pair = pb_begin(&w, 1);
        pb_put_uint(&w, 1, 1);
        pb_put_uint(&w, 2, value);
        pb_end(&w, pair);
    }
    pb_end(&w, ctx);
    pb_end(&w, entry);
    const char *texts[] = {"", "span", "checkout", "pay"};
    for (uint64_t id = 1; id <= 3; id++) {   /* strings {1: span, 2: checkout, 3: pay} */
        entry = pb_begin(&w, 2);
        pb_put_uint(&w, 1, id);
        pb_put_bytes(&w, 2, texts[id], strlen(texts[id]));
        pb_end(&w, entry);
    }
    struct snapshot snap = {0};
    CHECK(read_snapshot(w.buf, w.len, &snap));
    struct builder bl = {.host = &profd_host_services, .cpu_period = 10, .labels = &snap};
    struct jfr_frame frame = {"a/B", "run", 3, 3, 12};
    struct jfr_sample with = {JFR_CPU, &frame, 1, 0, 7}, without = {JFR_CPU, &frame, 1, 0, 8};
    CHECK(add_sample(&bl, &with) && add_sample(&bl, &without));
    struct profd_profile *p = bl.kinds[JFR_CPU].p;
    CHECK_INT(p->nsamples, 2);
    CHECK_INT(p->samples[0].nlabels, 2);
    CHECK(profd_profile_str_eq(p, p->samples[0].labels[0].key, "span"));
    CHECK(profd_profile_str_eq(p, p->samples[0].labels[1].str, "pay"));
    CHECK_INT(p->samples[1].nlabels, 0);   /* a context the snapshot does not have */
    CHECK_INT(p->nlocations, 1);           /* one function and line: one location */
    CHECK(profd_profile_str_eq(p, p->functions[0].name, "a/B.run"));
    profd_profile_free(p);
    key_map_free(&bl.kinds[JFR_CPU].functions);
    key_map_free(&bl.kinds[JFR_CPU].locations);
    free(bl.name);
    snapshot_free(&snap);
    free(w.buf);
}

RUN_TESTS()
