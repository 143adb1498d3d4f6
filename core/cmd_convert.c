// SPDX-License-Identifier: Apache-2.0
/*
 * `profd convert IN... -o OUT`: builds a one-shot pipeline config (the
 * pprof_file receiver reading the inputs once, or perf_data when the first
 * input is a perf.data file, then symbolize when that module is present;
 * the pprof_file exporter writing OUT) and runs it through the same modules
 * the daemon uses.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "cli.h"
#include "daemon.h"
#include "loader.h"
#include "metrics.h"
#include "text.h"

/* Appends s as a double-quoted YAML scalar; glob escapes metacharacters
 * so a literal file name is not taken for a pattern. */
static void add_quoted(struct profd_text *t, const char *s, bool glob)
{
    profd_text_add(t, "\"");
    for (; *s; s++) {
        char c[2] = {*s, 0};
        if (glob && strchr("*?[\\", *s))
            profd_text_add(t, "\\\\");   /* a glob escape, written as YAML */
        if (*s == '"' || *s == '\\')
            profd_text_add(t, "\\");   /* the YAML escape of the character itself */
        profd_text_add(t, c);
    }
    profd_text_add(t, "\"");
}

/* Prints convert's usage to out; returns code. */
static int usage(FILE *out, int code)
{
    fprintf(out, "usage: profd convert IN... -o OUT\n"
                 "       perf.data only: [--split pid|event|none] [--sample-labels tid,comm,cpu]\n"
                 "                       [--partial] [--binary-dir DIR]... [--no-symbolize]\n"
                 "       (IN '-' is a pipe-mode perf.data on standard input; OUT '-' is\n"
                 "       standard output; several inputs, or a perf.data split by pid or\n"
                 "       event, need OUT to be a directory)\n");
    return code;
}

/* Says why the command line is wrong (printf-style), then the usage;
 * returns 2. */
static int misuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int misuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("profd convert: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    return usage(stderr, 2);
}

/* True when the file at path starts with the perf.data magic. */
static bool is_perf_data(const char *path)
{
    char magic[8] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(magic, 1, sizeof(magic), f);
    fclose(f);
    return n == 8 && (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8));
}

/* "tid,comm,cpu" as label_<name>: true options; false on an unknown name. */
static bool add_sample_labels(struct profd_text *t, const char *list)
{
    static const char *const known[] = {"tid", "comm", "cpu"};
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        size_t k = 0;
        while (k < 3 && (strlen(known[k]) != n || strncmp(p, known[k], n)))
            k++;
        if (k == 3)
            return false;
        profd_text_add(t, "\n    label_");
        profd_text_add(t, known[k]);
        profd_text_add(t, ": true");
        p += n + (p[n] == ',');
    }
    return true;
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static uint64_t counter_sum(const char *id, const char *kind, const enum profd_counter *cs, int n)
{
    struct profd_metrics *m = profd_metrics_get(id, kind);
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += atomic_load(&m->counters[cs[i]]);
    return sum;
}

/* Whether option arg is followed by its value. */
static bool takes_value(const char *arg)
{
    static const char *const with_value[] = {"-o", "--split", "--sample-labels", "--binary-dir"};
    for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
        if (!strcmp(arg, with_value[k]))
            return true;
    return false;
}

/* The first argument that is an input rather than an option or an option's
 * value, or NULL. "-" (standard input) counts as an input. */
static const char *first_input(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (takes_value(argv[i]))
            i++;
        else if (argv[i][0] != '-' || !argv[i][1])
            return argv[i];
    }
    return NULL;
}

int profd_cmd_convert(int argc, char **argv, struct profd_loader *l)
{
    const char *out = NULL, *split = NULL, *sample_labels = NULL;
    struct profd_text binary_dirs = {0};   /* YAML flow list items */
    bool partial = false, no_symbolize = false;
    struct profd_text t = {0};
    size_t ninputs = 0;
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout, 0);
    const char *first = first_input(argc, argv);
    bool perf = first && (!strcmp(first, "-") || is_perf_data(first));
    if (perf)
        profd_text_add(&t, "receivers:\n  perf_data:\n    include: [");
    else
        profd_text_add(&t, "receivers:\n  pprof_file:\n    oneshot: true\n    after_ingest: keep\n"
                           "    rejected_directory: \"\"\n    source_label: __file__\n"
                           "    poll_interval: 0s\n    include: [");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--split") && i + 1 < argc) {
            split = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--sample-labels") && i + 1 < argc) {
            sample_labels = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--binary-dir") && i + 1 < argc) {
            profd_text_add(&binary_dirs, binary_dirs.len ? ", " : "");
            add_quoted(&binary_dirs, argv[++i], false);
            continue;
        }
        if (!strcmp(argv[i], "--no-symbolize")) {
            no_symbolize = true;
            continue;
        }
        if (!strcmp(argv[i], "--partial")) {
            partial = true;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            free(t.s), free(binary_dirs.s);
            return misuse(takes_value(argv[i]) ? "%s needs a value" : "unknown option %s",
                          argv[i]);
        }
        profd_text_add(&t, ninputs++ ? ", " : "");
        add_quoted(&t, argv[i], true);
    }
    const char *perf_only = split           ? "--split"
                            : sample_labels ? "--sample-labels"
                            : partial       ? "--partial"
                            : binary_dirs.len ? "--binary-dir"
                                              : NULL;
    if (!out || !ninputs || (perf_only && !perf)) {
        free(t.s), free(binary_dirs.s);
        return !ninputs ? misuse("no input")
               : !out   ? misuse("no output: -o OUT")
                        : misuse("%s is for perf.data, and %s is not a perf.data file", perf_only,
                                 first);
    }
    if (perf) {   /* a single output file holds one profile: merge unless told */
        profd_text_add(&t, "]\n    split: ");
        add_quoted(&t, split ? split : is_dir(out) ? "pid" : "none", false);
        if (split && strcmp(split, "none") && !is_dir(out)) {
            fprintf(stderr, "profd convert: --split %s writes several profiles: %s must be a "
                            "directory\n", split, out);
            free(t.s);
            return 2;
        }
        if (!add_sample_labels(&t, sample_labels)) {
            free(t.s);
            return misuse("--sample-labels takes tid, comm and cpu, not %s", sample_labels);
        }
        profd_text_add(&t, partial ? "\n    partial: true" : "");
        if (binary_dirs.len) {   /* before the defaults, which stay */
            profd_text_add(&t, "\n    binary_directories: [");
            profd_text_add(&t, binary_dirs.s);
            profd_text_add(&t, ", ~/.debug, /usr/lib/debug]");
        }
        profd_text_add(&t, isatty(2) ? "\n    progress: true" : "");
    }
    profd_text_add(&t, perf ? "\n" : "]\n");
    profd_text_add(&t, "exporters:\n  pprof_file:\n    reencode: true\n    overwrite: true\n");
    if (!strcmp(out, "-")) {
        profd_text_add(&t, "    to_stdout: true\n");
    } else if (perf && is_dir(out)) {
        profd_text_add(&t, "    path_template: \"{service_name}.{pid}.{__name__}.pb.gz\"\n"
                           "    directory: ");
        add_quoted(&t, out, false);
        profd_text_add(&t, "\n");
    } else if (ninputs > 1 || is_dir(out)) {
        if (!is_dir(out)) {
            fprintf(stderr, "profd convert: with several inputs, %s must be a directory\n", out);
            free(t.s);
            return 2;
        }
        profd_text_add(&t, "    path_template: \"{__file__}\"\n    directory: ");
        add_quoted(&t, out, false);
        profd_text_add(&t, "\n");
    } else {
        char *copy = profd_xstrdup(out), *slash = strrchr(copy, '/');
        const char *base = slash ? slash + 1 : copy;
        if (slash)
            *slash = '\0';
        profd_text_add(&t, "    directory: ");
        add_quoted(&t, slash ? (copy[0] ? copy : "/") : ".", false);
        profd_text_add(&t, "\n    path_template: ");
        add_quoted(&t, base, false);
        profd_text_add(&t, "\n");
        free(copy);
    }
    /* perf.data holds bare addresses: symbolize them when the module is here. */
    char err[512];
    bool symbolize = perf && !no_symbolize &&
                     profd_loader_get(l, PROFD_PROCESSOR, "symbolize", err, sizeof(err));
    if (symbolize) {
        profd_text_add(&t, "processors:\n  symbolize:\n    debug_directories: [");
        profd_text_add(&t, binary_dirs.s ? binary_dirs.s : "");
        profd_text_add(&t, binary_dirs.len ? ", " : "");
        profd_text_add(&t, "/usr/lib/debug, ~/.debug]\n");
        /* one profile: nothing to keep the binaries open for once it is done */
        profd_text_add(&t, "    max_memory: 0\n");
    }
    profd_text_add(&t, "service:\n  telemetry: {metrics: {address: \"\"}, logs: {level: warn}}\n"
            "  pipelines:\n    profiles:\n      receivers: [");
    profd_text_add(&t, perf ? "perf_data" : "pprof_file");
    profd_text_add(&t, symbolize ? "]\n      processors: [symbolize]\n" : "]\n");
    profd_text_add(&t, "      exporters: [pprof_file]\n");
    struct profd_run_options o = {.config_text = t.s, .loader = l, .oneshot = true,
                                  .log_level = -1};
    int rc = profd_daemon_run(&o);
    free(t.s);
    free(binary_dirs.s);
    static const enum profd_counter bad_in[] = {PROFD_C_REFUSED_RECORDS};
    static const enum profd_counter bad_out[] = {PROFD_C_FAILED_RECORDS, PROFD_C_DROPPED_RECORDS};
    if (rc == 0 && (counter_sum(perf ? "perf_data" : "pprof_file", "receiver", bad_in, 1) ||
                    counter_sum("pprof_file", "exporter", bad_out, 2)))
        rc = 1;
    return rc;
}
