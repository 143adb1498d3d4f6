// SPDX-License-Identifier: Apache-2.0
/* Building a profile's model: interning, and the tables that grow as
 * entries are added. */
#include "../../core/profile.h"
#include "check.h"

TEST(added_entries_are_zeroed_keep_their_refs_and_survive_growth)
{
    struct profd_profile *p = profd_profile_new(256);
    for (uint32_t i = 1; i <= 300; i++) {
        struct profd_function *f = profd_profile_add_function(p);
        CHECK_INT(f->name, 0);
        CHECK_INT(p->nfunctions, i);   /* its ref */
        f->name = profd_profile_intern(p, "f", 1);
        f->start_line = i;
        struct profd_location *l = profd_profile_add_location(p);
        CHECK_INT(l->nlines, 0);
        l->address = 0x1000 + i;
        struct profd_mapping *m = profd_profile_add_mapping(p);
        CHECK_INT(m->memory_start, 0);
        m->memory_start = i;
    }
    for (int i = 0; i < 1000; i++) {
        struct profd_sample *s = profd_profile_add_sample(p);
        CHECK(s->values == NULL && s->nlocations == 0);
        s->nlocations = (uint32_t)i;
    }
    CHECK(p->functions_cap >= 300 && p->locations_cap >= 300 && p->mappings_cap >= 300);
    CHECK(p->samples_cap >= 1000);
    size_t wrong = 0;
    for (uint32_t i = 0; i < 300; i++)
        wrong += p->functions[i].start_line != i + 1 || p->locations[i].address != 0x1001 + i ||
                 p->mappings[i].memory_start != i + 1 || p->functions[i].name != 1;
    for (uint32_t i = 0; i < 1000; i++)
        wrong += p->samples[i].nlocations != i;
    CHECK_INT(wrong, 0);
    profd_profile_free(p);
}

TEST(interning_gives_one_index_per_string)
{
    struct profd_profile *p = profd_profile_new(64);
    CHECK_INT(profd_profile_intern(p, "", 0), 0);
    uint32_t a = profd_profile_intern(p, "main", 4);
    CHECK(a != 0);
    CHECK_INT(profd_profile_intern(p, "mainly", 4), a);   /* only its first 4 bytes */
    CHECK(profd_profile_intern(p, "other", 5) != a);
    CHECK(profd_profile_str_eq(p, a, "main"));
    profd_profile_free(p);
}

RUN_TESTS()
