// SPDX-License-Identifier: Apache-2.0
/*
 * The data that flows through a pipeline: batches of records, and the
 * pprof-shaped profile model a record decodes into.
 *
 * Profile tables are dense arrays. A reference to a table entry is its
 * position plus one (so it equals the id the pprof encoder emits), and 0 means
 * "none". String references are positions in the string table, whose entry 0
 * is always the empty string. Every array of a profile lives in its arena:
 * freeing the profile frees them all.
 */
#ifndef PROFD_MODEL_H
#define PROFD_MODEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profd_arena;

struct profd_str {
    const char *ptr;   /* not NUL-terminated */
    uint32_t len;
};

struct profd_value_type {
    uint32_t type, unit;   /* string indices */
};

struct profd_sample_label {
    uint32_t key, str;     /* string indices */
    int64_t num;
    uint32_t num_unit;     /* string index */
};

struct profd_sample {
    uint32_t *locations;   /* location refs, leaf first */
    int64_t *values;       /* one per sample type */
    struct profd_sample_label *labels;
    uint32_t nlocations, nlabels;
};

struct profd_mapping {
    uint64_t memory_start, memory_limit, file_offset;
    uint32_t filename, build_id;   /* string indices */
    bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct profd_line {
    uint32_t function;     /* function ref */
    int64_t line, column;
};

struct profd_location {
    uint64_t address;
    uint32_t mapping;      /* mapping ref, 0 = unknown */
    uint32_t nlines;
    struct profd_line *lines;   /* innermost first */
    bool is_folded;
};

struct profd_function {
    uint32_t name, system_name, filename;   /* string indices */
    int64_t start_line;
};

struct profd_profile {
    struct profd_arena *arena;

    struct profd_str *strings;
    uint32_t nstrings, strings_cap;
    struct profd_strindex *string_index;   /* built on first intern */

    struct profd_value_type *sample_types;
    uint32_t nsample_types;
    struct profd_sample *samples;
    size_t nsamples, samples_cap;
    struct profd_mapping *mappings;
    uint32_t nmappings, mappings_cap;
    struct profd_location *locations;
    uint32_t nlocations, locations_cap;
    struct profd_function *functions;
    uint32_t nfunctions, functions_cap;
    int64_t *comments;                     /* string indices */
    uint32_t ncomments;

    uint32_t drop_frames, keep_frames, default_sample_type, doc_url;   /* string indices */
    int64_t time_nanos, duration_nanos, period;
    struct profd_value_type period_type;

    /* Buffer the decoded strings point into (owned), or NULL. */
    uint8_t *backing;
};

enum profd_encoding {
    PROFD_ENC_PPROF_GZIP = 1,
    PROFD_ENC_PPROF_RAW = 2,
};

struct profd_series_label {
    char *name, *value;
};

/* The names of a profile's types, enough to tell its family (Pyroscope's
 * __name__): its period type's and its first PROFD_TYPE_NAMES sample
 * types', each cut to PROFD_TYPE_NAME_SIZE - 1 bytes. cut is set when
 * that left something out (a longer name, more sample types): whoever
 * needs every name in full then reads the profile's model. */
#define PROFD_TYPE_NAMES 8
#define PROFD_TYPE_NAME_SIZE 64
struct profd_type_names {
    char period[PROFD_TYPE_NAME_SIZE];
    char sample[PROFD_TYPE_NAMES][PROFD_TYPE_NAME_SIZE];
    uint32_t nsample;
    bool cut;
};

/* A label set: sorted by name, names unique, strings owned (each label's
 * name and value one malloc'd block, freed through name); changed only
 * through the host's labels_* and record_*_label functions. */
struct profd_labels {
    struct profd_series_label *items;
    size_t n, cap;
};

/* One profile of one series. Read fields directly; change them through the
 * host API so the record's invariants (sorted labels, dirty flag) hold. */
struct profd_record {
    struct profd_labels labels;          /* series labels */
    int64_t time_nanos, duration_nanos;

    enum profd_encoding encoding;
    uint8_t *payload;                    /* original bytes, as received */
    size_t payload_len;
    size_t max_decoded;                  /* decompressed-size limit; 0: the default (1 GiB) */

    struct profd_profile *profile;       /* decoded on demand */
    bool profile_dirty;                  /* model changed since decode */
    pthread_mutex_t decode_lock;

    struct profd_ack *ack;               /* shared completion tracker, or NULL */
    /* Set when payload is a slice of a buffer other records may keep
     * slices of too (a large request's body), which this holds; NULL when
     * payload is the record's own malloc'd buffer. */
    struct profd_shared_bytes *payload_shared;
};

/* A reference-counted list of records. A merged batch (parts != NULL) lists
 * the records of other batches, which it holds a reference to. */
struct profd_batch {
    _Atomic int refs;
    struct profd_record **records;
    size_t nrecords, cap;
    struct profd_batch **parts;
    size_t nparts;
};

#endif
