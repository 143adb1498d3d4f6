// SPDX-License-Identifier: Apache-2.0
#include "gzip.h"

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "huge_arena.h"
#include "thread_slot.h"

/* The level by size. Up to 4 MiB (nearly every profile) libdeflate level 5:
 * on real profiles it is smaller than level 6 and twice as fast, and smaller
 * than what Go's compress/gzip writes at its default. Beyond, the time
 * grows with the size while the gain does not: a 37 MB symbolized profile
 * takes 0.75 s at level 5 and 0.28 s at level 1 for 6% more bytes, so
 * level 3 up to 16 MiB and level 1 above, where ISA-L's igzip (level 1)
 * takes 0.10-0.12 s of the 0.20-0.28 s of libdeflate's, for 5% more. */
static int level_for(size_t len)
{
    return len <= (4u << 20) ? 5 : len <= (16u << 20) ? 3 : 1;
}

bool profd_is_gzip(const uint8_t *data, size_t len)
{
    return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/* Each thread keeps its own (de)compressors: they are not thread-safe. */
struct coders {
    struct libdeflate_decompressor *decompressor;
    struct libdeflate_compressor *compressors[6];   /* by level */
    uint8_t *igzip_buffer;                          /* igzip's level 1 tables */
};

static void coders_free(void *arg)
{
    struct coders *c = arg;
    libdeflate_free_decompressor(c->decompressor);
    for (size_t i = 0; i < sizeof(c->compressors) / sizeof(*c->compressors); i++)
        libdeflate_free_compressor(c->compressors[i]);
    free(c->igzip_buffer);
    free(c);
}

static struct profd_thread_slot coders_slot = PROFD_THREAD_SLOT(sizeof(struct coders), coders_free);

static struct libdeflate_decompressor *decompressor(void)
{
    struct coders *c = profd_thread_slot_get(&coders_slot);
    if (!c->decompressor && !(c->decompressor = libdeflate_alloc_decompressor()))
        profd_out_of_memory(sizeof(void *));
    return c->decompressor;
}

static uint32_t member_isize(const uint8_t *data, size_t len)
{
    uint32_t v;
    memcpy(&v, data + len - 4, 4);
    return v;   /* little-endian hosts only, as libdeflate's gzip trailer */
}

int profd_gunzip_into(const uint8_t *data, size_t len, size_t max_out, uint8_t **buf,
                      size_t *cap, size_t *out_len, char *err, size_t errlen)
{
    size_t used = 0, in_off = 0;
    /* The last member's ISIZE is a good first guess when there is one
     * member, and a lie when more than deflate's 1032:1 could make of the
     * input: not taken then, so a forged trailer costs no large buffer. */
    size_t guess = len >= 18 ? member_isize(data, len) : 0;
    if (guess / 1032 > len)
        guess = 0;
    size_t want = guess > 0 && guess <= max_out ? guess : len * 4 + 64;
    if (want > max_out)
        want = max_out;
    if (!*buf || *cap < want) {
        free(*buf);
        *buf = profd_xmalloc_large(want + 1);
        *cap = want;
    }
    /* A buffer kept from a larger output is used up to max_out only. */
    size_t room = *cap < max_out ? *cap : max_out;
    while (in_off < len) {
        if (!profd_is_gzip(data + in_off, len - in_off)) {
            snprintf(err, errlen, "gzip: bad magic at byte %zu", in_off);
            return -1;
        }
        for (;;) {
            size_t in_used = 0, produced = 0;
            enum libdeflate_result r = libdeflate_gzip_decompress_ex(
                decompressor(), data + in_off, len - in_off, *buf + used, room - used, &in_used,
                &produced);
            if (r == LIBDEFLATE_SUCCESS) {
                used += produced;
                in_off += in_used;
                break;
            }
            if (r != LIBDEFLATE_INSUFFICIENT_SPACE) {
                snprintf(err, errlen, "gzip: corrupt stream in member at byte %zu", in_off);
                return -1;
            }
            if (room >= max_out) {
                snprintf(err, errlen, "gzip: decompressed size exceeds the limit of %zu bytes",
                         max_out);
                return -2;
            }
            room = room * 2 > max_out ? max_out : room * 2;
            if (room > *cap) {
                *buf = profd_xrealloc_large(*buf, room + 1);
                *cap = room;
            }
        }
    }
    *out_len = used;
    return 0;
}

int profd_gunzip(const uint8_t *data, size_t len, size_t max_out, uint8_t **out, size_t *out_len,
                 char *err, size_t errlen)
{
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = profd_gunzip_into(data, len, max_out, &buf, &cap, out_len, err, errlen);
    if (rc < 0)
        free(buf);
    else
        *out = buf;
    return rc;
}

/* Makes room for bound more bytes after *out_len. */
static void reserve(size_t bound, uint8_t **out, size_t *out_len, size_t *out_cap)
{
    if (*out_cap - *out_len < bound) {
        *out_cap = *out_len + bound > *out_cap * 2 ? *out_len + bound : *out_cap * 2;
        *out = profd_xrealloc_large(*out, *out_cap);
    }
}

/* Appends data as a member igzip compresses at level 1; false (nothing
 * appended) when it does not fit in the room made for it, which only data
 * that does not compress can take. */
static bool igzip_append(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len,
                         size_t *out_cap)
{
    if (len > UINT32_MAX)
        return false;
    size_t bound = len + len / 16 + ISAL_DEF_MAX_HDR_SIZE + 64;
    reserve(bound, out, out_len, out_cap);
    struct coders *c = profd_thread_slot_get(&coders_slot);
    if (!c->igzip_buffer)
        c->igzip_buffer = profd_xmalloc(ISAL_DEF_LVL1_DEFAULT);
    struct isal_zstream z = {0};   /* the init leaves fields the compressor reads */
    isal_deflate_stateless_init(&z);
    z.gzip_flag = IGZIP_GZIP;
    z.level = 1;
    z.level_buf = c->igzip_buffer;
    z.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    z.end_of_stream = 1;
    z.next_in = (uint8_t *)data;
    z.avail_in = (uint32_t)len;
    z.next_out = *out + *out_len;
    z.avail_out = bound > UINT32_MAX ? UINT32_MAX : (uint32_t)bound;
    if (isal_deflate_stateless(&z) != COMP_OK)
        return false;
    *out_len += z.total_out;
    return true;
}

void profd_gzip_append(const uint8_t *data, size_t len, size_t stream_len, uint8_t **out,
                       size_t *out_len, size_t *out_cap)
{
    int level = level_for(stream_len);
    if (level == 1 && igzip_append(data, len, out, out_len, out_cap))
        return;
    struct libdeflate_compressor **c =
        &((struct coders *)profd_thread_slot_get(&coders_slot))->compressors[level];
    if (!*c && !(*c = libdeflate_alloc_compressor(level)))
        profd_out_of_memory(sizeof(void *));
    size_t bound = libdeflate_gzip_compress_bound(*c, len);
    reserve(bound, out, out_len, out_cap);
    *out_len += libdeflate_gzip_compress(*c, data, len, *out + *out_len, bound);
}

void profd_gzip(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len)
{
    size_t cap = 0;
    *out = NULL;
    *out_len = 0;
    profd_gzip_append(data, len, len, out, out_len, &cap);
}

void profd_gzip_thread_cleanup(void)
{
    profd_thread_slot_release(&coders_slot);
}
