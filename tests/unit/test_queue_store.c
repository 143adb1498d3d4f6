// SPDX-License-Identifier: Apache-2.0
/* An exporter queue's records on disk (core/queue_store.c): the file form
 * read back as it was written, every malformed file refused saying where,
 * and the directory's files written, removed and read back in order. */
#include "check.h"

#include <dirent.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/pprof.h"
#include "../../core/queue_store.h"
#include "../../core/record.h"

/* A valid pprof: an empty profile, its string table alone. */
static const uint8_t EMPTY_PPROF[] = {0x32, 0x00};

static struct profd_batch *labeled_batch(int n)
{
    struct profd_batch *b = profd_batch_new();
    for (int i = 0; i < n; i++) {
        uint8_t *payload = malloc(sizeof(EMPTY_PPROF));
        memcpy(payload, EMPTY_PPROF, sizeof(EMPTY_PPROF));
        struct profd_record *r = profd_record_add(b, payload, sizeof(EMPTY_PPROF),
                                                  PROFD_ENC_PPROF_RAW);
        char value[16];
        snprintf(value, sizeof(value), "%d", i);
        profd_record_set_label(r, "__name__", "process_cpu");
        profd_record_set_label(r, "service_name", "shop");
        profd_record_set_label(r, "i", value);
        r->time_nanos = 1700000000000000000 + i;
        r->duration_nanos = 10000000000;
        r->max_decoded = 4096;
    }
    return b;
}

/* The file form of b's first record (a failed encode fails the case). */
static uint8_t *encode_first(struct profd_batch *b, size_t *len)
{
    uint8_t *data = NULL;
    char err[256];
    CHECK_INT(queue_store_encode(b->records[0], &data, len, err, sizeof(err)), 0);
    return data;
}

TEST(a_record_reads_back_as_it_was_written)
{
    struct profd_batch *b = labeled_batch(1), *back = profd_batch_new();
    size_t len;
    uint8_t *data = encode_first(b, &len);
    char err[256];
    struct profd_record *r = queue_store_decode(back, data, len, err, sizeof(err));
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->labels.n, 3);
        CHECK_STR(profd_record_label(r, "__name__"), "process_cpu");
        CHECK_STR(profd_record_label(r, "service_name"), "shop");
        CHECK_STR(profd_record_label(r, "i"), "0");
        CHECK(r->time_nanos == 1700000000000000000 && r->duration_nanos == 10000000000);
        CHECK_INT(r->max_decoded, 4096);
        const uint8_t *pprof;
        size_t plen;
        uint8_t *owned;
        CHECK_INT(profd_record_pprof_view(r, false, false, &pprof, &plen, &owned, err,
                                          sizeof(err)), 0);
        CHECK(plen == sizeof(EMPTY_PPROF) && !memcmp(pprof, EMPTY_PPROF, plen));
        free(owned);
    }
    /* every file cut short is refused, saying where */
    for (size_t cut = 0; cut < len; cut++) {
        err[0] = '\0';
        CHECK(queue_store_decode(back, data, cut, err, sizeof(err)) == NULL);
        CHECK(err[0] != '\0');
    }
    CHECK_INT(back->nrecords, 1);
    free(data);
    /* a limit larger than the default's is read back as the default's */
    b->records[0]->max_decoded = (size_t)1 << 40;
    data = encode_first(b, &len);
    r = queue_store_decode(back, data, len, err, sizeof(err));
    CHECK(r && r->max_decoded == PROFD_PPROF_MAX_DECODED);
    free(data);
    profd_batch_unref(b);
    profd_batch_unref(back);
}

TEST(malformed_files_are_refused_with_what_and_where)
{
    struct profd_batch *b = labeled_batch(1), *back = profd_batch_new();
    size_t len;
    uint8_t *data = encode_first(b, &len);
    char err[256];
    CHECK(queue_store_decode(back, (const uint8_t *)"PROFDQR2", 8, err, sizeof(err)) == NULL);
    CHECK_STR(err, "not a queued record (no PROFDQR1 at byte 0)");
    /* the first label's name ("__name__", at byte 36 after its length) with a NUL */
    uint8_t *bad = malloc(len);
    memcpy(bad, data, len);
    bad[36 + 4 + 2] = 0;
    CHECK(queue_store_decode(back, bad, len, err, sizeof(err)) == NULL);
    CHECK_STR(err, "label 0 at byte 36: cut short, or a NUL byte in it");
    /* an empty name */
    memcpy(bad, data, len);
    bad[36] = 0;   /* its length 0: "__name__" read as the value's length */
    CHECK(queue_store_decode(back, bad, len, err, sizeof(err)) == NULL);
    CHECK_CONTAINS(err, "label 0 at byte 36: ");
    /* the profile not a pprof: its one string's length past its end */
    memcpy(bad, data, len);
    bad[len - 1] = 5;
    CHECK(queue_store_decode(back, bad, len, err, sizeof(err)) == NULL);
    CHECK_CONTAINS(err, "the profile at byte ");
    /* bytes after the profile */
    uint8_t *longer = malloc(len + 1);
    memcpy(longer, data, len);
    longer[len] = 0;
    CHECK(queue_store_decode(back, longer, len + 1, err, sizeof(err)) == NULL);
    CHECK_CONTAINS(err, "is not the rest of the file");
    CHECK_INT(back->nrecords, 0);
    free(longer);
    free(bad);
    free(data);
    profd_batch_unref(b);
    profd_batch_unref(back);
}

/* The stored gauge g of exporter m. */
static int64_t stored(struct profd_metrics *m, enum profd_exporter_gauge g)
{
    return atomic_load(&m->gauges[g]);
}

/* The size of file id in directory dir. */
static int64_t file_size(const char *dir, uint64_t id)
{
    char path[400];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%020" PRIu64 ".rec", dir, id);
    return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

TEST(files_are_written_removed_and_read_back_in_order)
{
    char dir[] = "/tmp/profd-qs-XXXXXX", why[256];
    CHECK(mkdtemp(dir) != NULL);
    struct profd_metrics *m = profd_metrics_get("otlp/backend", "exporter");
    struct queue_store *s = queue_store_open(dir, m, false, why, sizeof(why));
    CHECK(s != NULL);
    if (!s)
        return;
    char own[300];
    snprintf(own, sizeof(own), "%s/otlp_backend", dir);
    CHECK_STR(queue_store_path(s), own);
    struct profd_batch *b = labeled_batch(3);
    struct stored_file ids[3];
    queue_store_write(s, b, ids);
    CHECK(ids[0].id == 1 && ids[1].id == 2 && ids[2].id == 3);
    CHECK_INT((int64_t)ids[1].bytes, file_size(own, 2));
    CHECK_INT(stored(m, PROFD_G_STORED_RECORDS), 3);
    int64_t kept = file_size(own, 1) + file_size(own, 3);
    CHECK_INT(stored(m, PROFD_G_STORED_BYTES), kept + file_size(own, 2));
    queue_store_remove(s, ids[1]);
    CHECK_INT(stored(m, PROFD_G_STORED_RECORDS), 2);
    CHECK_INT(stored(m, PROFD_G_STORED_BYTES), kept);
    queue_store_close(s);
    /* a write a crash cut short leaves a temporary file: removed */
    char tmp[400];
    snprintf(tmp, sizeof(tmp), "%s/00000000000000000004.tmp", own);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    s = queue_store_open(dir, m, true, why, sizeof(why));   /* synced from here on */
    CHECK(s != NULL);
    if (!s)
        return;
    CHECK_INT(stored(m, PROFD_G_STORED_RECORDS), 0);   /* counted as they are listed */
    struct stored_file *listed, loaded[2];
    size_t n;
    CHECK_INT(queue_store_list(s, &listed, &n), 0);
    CHECK_INT(n, 2);
    CHECK(listed[0].id == 1 && listed[1].id == 3);
    CHECK_INT((int64_t)(listed[0].bytes + listed[1].bytes), kept);
    CHECK_INT(stored(m, PROFD_G_STORED_RECORDS), 2);
    CHECK_INT(stored(m, PROFD_G_STORED_BYTES), kept);
    CHECK(access(tmp, F_OK) != 0);
    struct profd_batch *back = profd_batch_new();
    CHECK_INT(queue_store_load(s, listed, 2, back, loaded), 2);
    CHECK(back->nrecords == 2 && loaded[0].id == 1 && loaded[1].id == 3);
    CHECK_STR(profd_record_label(back->records[0], "i"), "0");
    CHECK_STR(profd_record_label(back->records[1], "i"), "2");
    /* a file that no longer reads back is moved aside, and no longer counted */
    char path[400];
    snprintf(path, sizeof(path), "%s/00000000000000000003.rec", own);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("not a record", f);
        fclose(f);
    }
    CHECK_INT(queue_store_load(s, listed, 2, back, loaded), 1);
    CHECK(back->nrecords == 3 && loaded[0].id == 1);
    CHECK_INT(stored(m, PROFD_G_STORED_RECORDS), 1);
    snprintf(path, sizeof(path), "%s/rejected/00000000000000000003.rec.error", own);
    CHECK(access(path, F_OK) == 0);
    free(listed);
    profd_batch_unref(back);
    struct stored_file next[1];
    struct profd_batch *one = labeled_batch(1);
    queue_store_write(s, one, next);
    CHECK(next[0].id == 4);   /* after the last id found */
    CHECK_INT(stored(m, PROFD_G_STORED_RECORDS), 2);
    CHECK_INT(stored(m, PROFD_G_STORED_BYTES), file_size(own, 1) + file_size(own, 4));
    queue_store_close(s);
    CHECK(queue_store_open("/proc/none", profd_metrics_get("x", "exporter"), false, why,
                           sizeof(why)) == NULL);
    CHECK_CONTAINS(why, "/proc/none/x/ cannot be made: ");
    profd_batch_unref(b);
    profd_batch_unref(one);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

RUN_TESTS()
