// SPDX-License-Identifier: Apache-2.0
/* What jfr_reader.c and jfr_chunk.c share: a cursor over a JFR chunk, the
 * chunk's classes (from its metadata) and constant pools, and the reads
 * every part of a chunk is made of. Not for use outside the JFR reader. */
#ifndef PROFD_PYROSCOPE_JFR_CHUNK_H
#define PROFD_PYROSCOPE_JFR_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/key_map.h"

#define JFR_HEADER_SIZE 68
#define JFR_MAX_DEPTH 16   /* classes inline in classes, deepest */

struct str {
    const char *p;
    uint32_t len;
};

/* A cursor over the chunk; on the first error err is set and every read
 * fails from then on. */
struct rd {
    const uint8_t *p, *end, *base;
    bool compressed;
    const char *err;
    size_t err_at;
};

enum prim { P_OBJECT, P_BOOLEAN, P_BYTE, P_CHAR, P_SHORT, P_INT, P_LONG, P_FLOAT, P_DOUBLE,
            P_STRING };

struct field {
    struct str name;
    uint64_t type;
    bool cp, array;
};

struct class {
    uint64_t id;
    struct str name;
    enum prim prim;
    struct field *fields;
    size_t nfields, cap;
};

/* Stack frames as pooled: the method's key and the line. */
struct pool_frame {
    uint64_t method;
    int32_t line;
};

struct chunk {
    struct rd r;
    int64_t ticks_per_second;
    struct str *meta_strings;
    size_t nmeta_strings;
    struct class *classes;   /* sorted by id once read */
    size_t nclasses, classes_cap;
    /* constant pools, by key: strings and symbols (index into strs),
     * classes (their name's symbol key), methods (their class's and name's
     * keys), stack traces (a run of frames) */
    struct key_map strings, symbols, states, class_names, methods, stacks;
    struct str *strs;
    size_t nstrs, strs_cap;
    uint64_t (*name_refs)[2];   /* a method's class key and name symbol key; a class's 0 and
                                   name symbol key */
    size_t nrefs, refs_cap;
    struct pool_frame *frames;
    size_t nframes, frames_cap;
    uint32_t (*stack_runs)[2];   /* first frame, count */
    size_t nstacks, stacks_cap;
    char **owned;   /* strings made UTF-8 here */
    size_t nowned, owned_cap;
};

/* Sets r's error (the first one wins), at the byte r is at, and ends r.
 * Returns false, for `return jfr_fail(...)`. */
bool jfr_fail(struct rd *r, const char *what);
/* One byte; false at the end. */
bool jfr_byte(struct rd *r, uint8_t *v);
/* n bytes, big-endian. */
bool jfr_big_endian(struct rd *r, int n, uint64_t *v);
/* An integer: a varint when the chunk compresses integers (the 9th byte
 * holds 8 bits), else n bytes big-endian. */
bool jfr_integer(struct rd *r, int n, uint64_t *v);
/* A count of things still to come, each at least a byte: more than the
 * bytes left is an error. */
bool jfr_count(struct rd *r, uint64_t *n);
/* Whether s is the C string c. */
bool jfr_str_is(struct str s, const char *c);
/* The class of id in c's metadata, or NULL. */
const struct class *jfr_class_by_id(const struct chunk *c, uint64_t id);
/* A string field into *out (pointing into the chunk or into memory c
 * keeps): null and empty are empty, a key into the String pool is that
 * string, UTF-16 and Latin-1 are made UTF-8. */
bool jfr_string(struct chunk *c, struct rd *r, struct str *out);
/* A record at r: its size and type; *body the rest of it, r past it. */
bool jfr_record(struct rd *r, struct rd *body, uint64_t *type);
/* c's classes from the metadata record at offset, sorted by id; false
 * with c->r's error set. */
bool jfr_read_metadata(struct chunk *c, uint64_t offset);

#endif
