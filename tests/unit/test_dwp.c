// SPDX-License-Identifier: Apache-2.0
/* DWARF packages' formats: the unit index (found by probing as its hash
 * table is laid out, version 2's columns mapped onto version 5's, an index
 * that does not fit refused) and the range lists of split units (DWARF 5's
 * entries and DWARF 4's pairs, from the skeleton's base address). The
 * package read whole, with elfutils, is tested against real compilers'
 * packages in the integration tests. */
#include "check.h"

#include <dwarf.h>

#include "../../lib/grow.c"
#include "../../processors/symbolize/dwp.c"

/* Bytes written little-endian into a buffer. */
struct bytes {
    uint8_t b[1024];
    size_t n;
};

static void put(struct bytes *o, uint64_t v, size_t size)
{
    for (size_t i = 0; i < size; i++)
        o->b[o->n++] = (uint8_t)(v >> (8 * i));
}

static void put_uleb(struct bytes *o, uint64_t v)
{
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        o->b[o->n++] = b | (v ? 0x80 : 0);
    } while (v);
}

/* An index of version, 8 slots, units of ids (row i + 1 each) and two
 * columns of the given kinds; unit i's slice of column c at offset
 * 100 * i + c, size 10 + i. */
static struct bytes index_of(uint32_t version, const uint64_t *ids, uint32_t n,
                             const uint32_t kinds[2])
{
    struct bytes o = {.n = 0};
    put(&o, version, 4);
    put(&o, 2, 4);
    put(&o, n, 4);
    put(&o, 8, 4);
    uint64_t slot_id[8] = {0};
    uint32_t slot_row[8] = {0};
    for (uint32_t i = 0; i < n; i++) {   /* as dwp lays them out: probing from the id */
        uint32_t slot = (uint32_t)ids[i] & 7, step = ((uint32_t)(ids[i] >> 32) & 7) | 1;
        while (slot_row[slot])
            slot = (slot + step) & 7;
        slot_id[slot] = ids[i];
        slot_row[slot] = i + 1;
    }
    for (int s = 0; s < 8; s++)
        put(&o, slot_id[s], 8);
    for (int s = 0; s < 8; s++)
        put(&o, slot_row[s], 4);
    put(&o, kinds[0], 4);
    put(&o, kinds[1], 4);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t c = 0; c < 2; c++)
            put(&o, 100 * i + c, 4);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t c = 0; c < 2; c++)
            put(&o, 10 + i, 4);
    return o;
}

TEST(units_are_found_by_id_past_collisions)
{
    /* the first two share a first slot, where the third's probe starts too */
    const uint64_t ids[] = {0x1111111100000003ull, 0x2222222200000003ull, 0x000000050000000bull};
    const uint32_t kinds[2] = {DWP_INFO, DWP_RNGLISTS};
    struct bytes o = index_of(5, ids, 3, kinds);
    struct dwp_index ix;
    CHECK(dwp_index_read(&ix, o.b, o.n));
    for (uint32_t i = 0; i < 3; i++)
        CHECK_INT(dwp_index_row(&ix, ids[i]), i + 1);
    CHECK_INT(dwp_index_row(&ix, 0x3333333300000003ull), 0);
    CHECK_INT(dwp_index_row(&ix, 4), 0);
    uint32_t off, size;
    CHECK(dwp_index_slice(&ix, 3, DWP_RNGLISTS, &off, &size));
    CHECK_INT(off, 201);
    CHECK_INT(size, 12);
    CHECK(dwp_index_slice(&ix, 2, DWP_INFO, &off, &size));
    CHECK_INT(off, 100);
    CHECK(!dwp_index_slice(&ix, 2, DWP_ABBREV, &off, &size));   /* no such column */
    CHECK(!dwp_index_slice(&ix, 4, DWP_INFO, &off, &size));     /* no such row */
}

TEST(version_2_columns_are_read_as_version_5_kinds)
{
    const uint64_t id = 42;
    const uint32_t kinds[2] = {5 /* .debug_loc */, 6 /* .debug_str_offsets */};
    struct bytes o = index_of(2, &id, 1, kinds);
    struct dwp_index ix;
    uint32_t off, size;
    CHECK(dwp_index_read(&ix, o.b, o.n));
    CHECK(dwp_index_slice(&ix, 1, DWP_LOC, &off, &size));
    CHECK_INT(off, 0);
    CHECK(!dwp_index_slice(&ix, 1, DWP_LOCLISTS, &off, &size));
    CHECK(dwp_index_slice(&ix, 1, DWP_STR_OFFSETS, &off, &size));
    CHECK_INT(off, 1);
}

TEST(an_index_that_does_not_fit_is_refused)
{
    const uint64_t id = 42;
    const uint32_t kinds[2] = {DWP_INFO, DWP_ABBREV};
    struct bytes o = index_of(5, &id, 1, kinds);
    struct dwp_index ix;
    CHECK(!dwp_index_read(&ix, o.b, o.n - 1));   /* the last size cut */
    struct bytes bad = o;
    bad.b[0] = 3;   /* no such version */
    CHECK(!dwp_index_read(&ix, bad.b, bad.n));
    bad = o;
    bad.b[12] = 6;   /* slots not a power of two */
    CHECK(!dwp_index_read(&ix, bad.b, bad.n));
    bad = o;
    bad.b[8] = 9;   /* more units than slots */
    CHECK(!dwp_index_read(&ix, bad.b, bad.n));
    bad = o;
    memset(bad.b + 4, 0xff, 4);   /* columns past any size */
    CHECK(!dwp_index_read(&ix, bad.b, bad.n));
}

/* Walks the list at offset of l into out (low, high pairs); the last
 * dwp_range_next result. */
static int walk_ranges(const struct dwp_range_lists *l, size_t offset, Dwarf_Addr *out,
                       size_t *n)
{
    struct dwp_range_walk w = {offset, l->base};
    int r;
    *n = 0;
    while ((r = dwp_range_next(l, &w, &out[*n], &out[*n + 1])) == 1)
        *n += 2;
    return r;
}

TEST(dwarf_5_range_lists_take_the_skeletons_base_and_addresses)
{
    struct bytes addrs = {.n = 0}, lists = {.n = 0};
    put(&addrs, 0x401000, 8);
    put(&addrs, 0x402000, 8);
    lists.b[lists.n++] = DW_RLE_offset_pair;   /* from the unit's base */
    put_uleb(&lists, 0x10);
    put_uleb(&lists, 0x20);
    lists.b[lists.n++] = DW_RLE_base_addressx;
    put_uleb(&lists, 1);
    lists.b[lists.n++] = DW_RLE_offset_pair;   /* from the new base */
    put_uleb(&lists, 4);
    put_uleb(&lists, 8);
    lists.b[lists.n++] = DW_RLE_offset_pair;   /* empty: passed over */
    put_uleb(&lists, 8);
    put_uleb(&lists, 8);
    lists.b[lists.n++] = DW_RLE_startx_length;
    put_uleb(&lists, 0);
    put_uleb(&lists, 0x30);
    lists.b[lists.n++] = DW_RLE_start_end;
    put(&lists, 0x500000, 8);
    put(&lists, 0x500010, 8);
    lists.b[lists.n++] = DW_RLE_end_of_list;
    struct dwp_range_lists l = {lists.b, lists.n, addrs.b, addrs.n, 0x1150, 8, 5};
    Dwarf_Addr got[16];
    size_t n;
    CHECK_INT(walk_ranges(&l, 0, got, &n), 0);
    CHECK_INT(n, 8);
    const Dwarf_Addr want[] = {0x1160, 0x1170, 0x402004, 0x402008,
                               0x401000, 0x401030, 0x500000, 0x500010};
    for (size_t i = 0; i < 8; i++)
        CHECK_INT(got[i], want[i]);
    l.addrs_len = 8;   /* the second address is not there */
    CHECK_INT(walk_ranges(&l, 0, got, &n), -1);
    CHECK_INT(n, 2);
    l.lists_len = 2;   /* an entry cut short */
    CHECK_INT(walk_ranges(&l, 0, got, &n), -1);
}

TEST(dwarf_4_range_pairs_take_the_skeletons_base)
{
    struct bytes lists = {.n = 0};
    put(&lists, 0x10, 4);
    put(&lists, 0x20, 4);
    put(&lists, 0xffffffff, 4);   /* base address selection */
    put(&lists, 0x9000, 4);
    put(&lists, 0x0, 4);
    put(&lists, 0x4, 4);
    put(&lists, 0, 4);
    put(&lists, 0, 4);
    struct dwp_range_lists l = {lists.b, lists.n, NULL, 0, 0x1000, 4, 4};
    Dwarf_Addr got[8];
    size_t n;
    CHECK_INT(walk_ranges(&l, 0, got, &n), 0);
    CHECK_INT(n, 4);
    CHECK_INT(got[0], 0x1010);
    CHECK_INT(got[1], 0x1020);
    CHECK_INT(got[2], 0x9000);
    CHECK_INT(got[3], 0x9004);
    CHECK_INT(walk_ranges(&l, 28, got, &n), -1);   /* a pair cut short */
}

RUN_TESTS()
