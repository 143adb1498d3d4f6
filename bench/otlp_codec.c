// SPDX-License-Identifier: Apache-2.0
/*
 * The OTLP codec's cost per profile, side by side with the pprof decoder on
 * the same profile: for each pprof file given, the time to decode it as
 * served (gzip'd) and raw, to prove it valid raw as the push receivers do
 * (profd_pprof_quick_valid), to encode it as one OTLP request, and to
 * decode and translate that request back into a record (the receiver's
 * work).
 * With -w DIR, also writes each request to DIR/<n>.otlp, and as OTLP/JSON to
 * DIR/<n>.json, for load tests.
 * Prints one Markdown row per file.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/gzip.h"
#include "../core/otlp.h"
#include "../core/pprof.h"
#include "../core/profile.h"
#include "../core/proto_json.h"
#include "../core/record.h"

/* Writes the len bytes at data to dir/<n>.<ext>; -1 when it cannot. */
static int write_request(const char *dir, int n, const char *ext, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%d.%s", dir, n, ext);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok)
        fprintf(stderr, "cannot write %s\n", path);
    return ok ? 0 : -1;
}

/* Writes the OTLP request otlp as OTLP/JSON to dir/<n>.json. */
static int write_json(const char *dir, int n, const uint8_t *otlp, size_t len)
{
    size_t json_len;
    char *json = profd_proto_to_json(PROFD_MSG_OTLP_REQUEST, otlp, len, &json_len);
    int rc = json ? write_request(dir, n, "json", json, json_len) : -1;
    free(json);
    return rc;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Microseconds per run of the statements, repeated for at least 0.2 s. */
#define TIME_US(result, ...)                                                     \
    do {                                                                         \
        size_t iters_ = 0;                                                       \
        double start_ = now(), took_;                                            \
        do {                                                                     \
            __VA_ARGS__;                                                         \
            iters_++;                                                            \
        } while ((took_ = now() - start_) < 0.2);                                \
        result = took_ * 1e6 / (double)iters_;                                   \
    } while (0)

int main(int argc, char **argv)
{
    const char *out_dir = NULL;
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "-w")) {
        out_dir = argv[2];
        first = 3;
    }
    printf("| profile | pprof gz / raw / OTLP bytes | pprof decode gz | pprof decode raw | "
           "pprof proof raw | OTLP encode | OTLP decode + translate | "
           "OTLP decode / pprof decode raw |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int i = first; i < argc; i++) {
        size_t gz_len, raw_len;
        uint8_t *gz = read_file(argv[i], &gz_len), *raw;
        char err[512];
        if (!gz || profd_gunzip(gz, gz_len, PROFD_PPROF_MAX_DECODED, &raw, &raw_len, err,
                                sizeof(err)) < 0) {
            fprintf(stderr, "%s: cannot read a gzip'd pprof\n", argv[i]);
            return 1;
        }
        struct profd_batch *b = profd_batch_new();
        struct profd_record *r = profd_record_add_profile(
            b, profd_pprof_decode(gz, gz_len, PROFD_PPROF_MAX_DECODED, err, sizeof(err)));
        profd_record_set_label(r, "service_name", "bench");
        uint8_t *otlp;
        size_t otlp_len, skipped;
        profd_otlp_encode(b->records, 1, &otlp, &otlp_len, &skipped, err, sizeof(err));
        double dec_gz, dec_raw, proof, enc, dec_otlp;
        TIME_US(dec_gz, profd_profile_free(profd_pprof_decode(gz, gz_len, PROFD_PPROF_MAX_DECODED,
                                                              err, sizeof(err))));
        TIME_US(dec_raw, profd_profile_free(profd_pprof_decode(
                             raw, raw_len, PROFD_PPROF_MAX_DECODED, err, sizeof(err))));
        TIME_US(proof, {
            int64_t time_nanos, duration_nanos;
            if (!profd_pprof_quick_valid(raw, raw_len, &time_nanos, &duration_nanos)) {
                fprintf(stderr, "%s: not proven valid quickly\n", argv[i]);
                return 1;
            }
        });
        TIME_US(enc, {
            uint8_t *o;
            size_t n, s;
            profd_otlp_encode(b->records, 1, &o, &n, &s, err, sizeof(err));
            free(o);
        });
        TIME_US(dec_otlp, {
            struct profd_batch *d = profd_batch_new();
            struct profd_otlp_result res;
            if (profd_otlp_decode(otlp, otlp_len, 0, d, &res, err, sizeof(err)) < 0) {
                fprintf(stderr, "%s: %s\n", argv[i], err);
                return 1;
            }
            profd_batch_unref(d);
        });
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        printf("| %s | %zu / %zu / %zu | %.0f us | %.0f us | %.1f us | %.0f us | %.0f us | %.2f |\n",
               name, gz_len, raw_len, otlp_len, dec_gz, dec_raw, proof, enc, dec_otlp,
               dec_otlp / dec_raw);
        if (out_dir && (write_request(out_dir, i - first, "otlp", otlp, otlp_len) < 0 ||
                        write_json(out_dir, i - first, otlp, otlp_len) < 0))
            return 1;
        free(otlp);
        free(gz);
        free(raw);
        profd_batch_unref(b);
    }
    return 0;
}
