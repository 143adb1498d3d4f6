// SPDX-License-Identifier: Apache-2.0
/* Profiles built from a session's aggregated outputs: sample types, the
 * mappings, locations and samples as they were gathered (nothing copied),
 * and each profile's series labels. */
#include <stdio.h>
#include <string.h>

#include "../../lib/binary_lookup.h"
#include "../../lib/grow.h"
#include "session_state.h"

static uint32_t str(const struct profd_host *h, struct profd_profile *p, const char *s)
{
    return h->profile_intern(p, s, strlen(s));
}

static const char *event_unit(const struct perf_attr *a)
{
    return a->type == 1 && a->config <= 1 ? "nanoseconds" : "count";   /* cpu-/task-clock */
}

static void set_types(struct perf_session *s, struct profd_profile *p)
{
    const struct profd_host *h = s->h;
    size_t nattrs = s->ncolumns / 2;
    p->sample_types = h->profile_alloc(p, s->ncolumns * sizeof(*p->sample_types));
    p->nsample_types = (uint32_t)s->ncolumns;
    for (size_t i = 0; i < nattrs; i++) {
        char buf[32], col[300];
        const char *name = perf_event_name(s->f, i, buf, sizeof(buf));
        snprintf(col, sizeof(col), "%s_samples", name);
        p->sample_types[2 * i] = (struct profd_value_type){str(h, p, col), str(h, p, "count")};
        p->sample_types[2 * i + 1] =
            (struct profd_value_type){str(h, p, name), str(h, p, event_unit(&s->f->attrs[i]))};
    }
    if (nattrs) {
        const struct perf_attr *last = &s->f->attrs[nattrs - 1];
        p->period_type = p->sample_types[s->ncolumns - 1];
        p->default_sample_type = p->period_type.type;
        if (last->flags & PERF_ATTR_FLAG_FREQ)
            p->period = last->sample_period && !strcmp(event_unit(last), "nanoseconds")
                            ? (int64_t)(1000000000 / last->sample_period)
                            : 0;
        else
            p->period = (int64_t)last->sample_period;
    }
}

/* The index of o's main program mapping, which pprof's convention puts
 * first (tools name a profile after it): the first of o's mappings that
 * names a program; when no frame is in one (a JVM's threads run in libjvm
 * and JIT code, not in its launcher), the program its process runs (the
 * one it mapped last: after an exec, the new one), added to o (a profile
 * per process). 0 when there is none either. */
static size_t main_mapping(struct perf_session *s, struct out *o)
{
    for (size_t i = 0; i < o->nmaps; i++)
        if (processes_names_a_program(o->maps[i]->filename))
            return i;
    const struct process *p = s->o.split == SPLIT_PID ? processes_get(&s->procs, o->pid) : NULL;
    if (!p || !p->program)
        return 0;
    o->maps = grow_array(o->maps, &o->maps_cap, o->nmaps + 1, sizeof(*o->maps));
    o->maps[o->nmaps] = p->program;
    return o->nmaps++;
}

/* Where o's mapping at index i goes in the profile: the main one (index
 * main) first, the others in their order. */
static uint32_t mapping_position(size_t i, size_t main)
{
    return i == main ? 0 : i < main ? (uint32_t)i + 1 : (uint32_t)i;
}

/* Completes o's profile (sample locations and values are in it already)
 * and hands it over; the lookups are dropped first to keep the peak low. */
struct profd_profile *perf_build_profile(struct perf_session *s, struct out *o)
{
    const struct profd_host *h = s->h;
    struct profd_profile *p = o->profile;
    o->profile = NULL;
    index_clear(&o->sample_index);
    index_clear(&o->loc_index);
    index_clear(&o->map_index);
    set_types(s, p);
    size_t main = main_mapping(s, o);
    p->mappings = h->profile_alloc(p, (o->nmaps + 1) * sizeof(*p->mappings));
    for (size_t i = 0; i < o->nmaps; i++) {
        const struct map *m = o->maps[i];
        p->mappings[mapping_position(i, main)] = (struct profd_mapping){
            .memory_start = m->start, .memory_limit = m->limit, .file_offset = m->pgoff,
            .filename = str(h, p, m->filename), .build_id = str(h, p, m->build_id)};
    }
    p->nmappings = (uint32_t)o->nmaps;
    p->locations = h->profile_alloc(p, (o->nlocs + 1) * sizeof(*p->locations));
    for (size_t i = 0; i < o->nlocs; i++) {
        uint32_t ref = o->locs[i].mapping;   /* 0: none */
        p->locations[i] = (struct profd_location){.address = o->locs[i].address};
        if (ref)
            p->locations[i].mapping = mapping_position(ref - 1, main) + 1;
    }
    p->nlocations = (uint32_t)o->nlocs;
    bool labeled = s->labeled;
    uint32_t k_tid = labeled ? str(h, p, "tid") : 0, k_cpu = labeled ? str(h, p, "cpu") : 0,
             k_comm = labeled ? str(h, p, "comm") : 0;
    p->samples = h->profile_alloc(p, (o->nsamples + 1) * sizeof(*p->samples));
    for (size_t i = 0; i < o->nsamples; i++) {
        const struct sample *sm = &o->samples[i];
        struct profd_sample *ps = &p->samples[i];
        *ps = (struct profd_sample){(uint32_t *)(sm->values + s->ncolumns), sm->values, NULL,
                                    sm->nframes, 0};
        if (!labeled)
            continue;
        const struct sample_tags *t = tags_of(sm);
        ps->labels = h->profile_alloc(p, 3 * sizeof(*ps->labels));
        if (t->tid >= 0)
            ps->labels[ps->nlabels++] = (struct profd_sample_label){.key = k_tid, .num = t->tid};
        if (t->cpu >= 0)
            ps->labels[ps->nlabels++] = (struct profd_sample_label){.key = k_cpu, .num = t->cpu};
        if (t->comm)
            ps->labels[ps->nlabels++] =
                (struct profd_sample_label){.key = k_comm, .str = str(h, p, t->comm)};
    }
    p->nsamples = o->nsamples;
    p->duration_nanos = (int64_t)(o->last_time - o->first_time);
    const struct perf_meta *m = &s->f->meta;
    if (m->clock_wall_ns && o->first_time)   /* perf clock -> wall clock */
        p->time_nanos = (int64_t)(m->clock_wall_ns + (o->first_time - m->clock_ref_ns));
    if (s->lost_in_window) {
        char note[96];
        snprintf(note, sizeof(note), "perf: %llu samples lost while recording (not included)",
                 (unsigned long long)s->lost_in_window);
        p->comments = h->profile_alloc(p, sizeof(*p->comments));
        p->comments[0] = str(h, p, note);
        p->ncomments = 1;
    }
    return p;
}

void perf_out_labels(struct perf_session *s, const struct out *o, struct profd_labels *l)
{
    const struct profd_host *h = s->h;
    const struct perf_meta *m = &s->f->meta;
    char buf[64];
    const char *event = s->ncolumns ? perf_event_name(s->f, s->o.split == SPLIT_EVENT ? o->attr : 0,
                                                      buf, sizeof(buf))
                                    : "perf";
    char name[128];
    snprintf(name, sizeof(name), "perf_%s", event);
    for (char *c = name; *c; c++)
        if (*c == '-')
            *c = '_';
    h->labels_set(l, "__name__", name);
    if (s->o.split == SPLIT_PID) {   /* the process's name now: after an exec, the new one */
        h->labels_set(l, "service_name", processes_get(&s->procs, o->pid)->comm);
        if (s->o.label_pid) {
            snprintf(buf, sizeof(buf), "%d", o->pid);
            h->labels_set(l, "pid", buf);
        }
    } else {
        h->labels_set(l, "service_name", "perf");
    }
    if (m->hostname)
        h->labels_set(l, "hostname", m->hostname);
    if (m->osrelease)
        h->labels_set(l, "os_release", m->osrelease);
}
