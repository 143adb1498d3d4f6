// SPDX-License-Identifier: Apache-2.0
#include "targets.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../lib/grow.h"
#include "../../lib/hash.h"
#include "../../lib/transport_labels.h"

struct text {
    char *s;
    size_t len, cap;
};

static void put(struct text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *ns = realloc(t->s, cap);
        if (!ns)
            abort();
        t->s = ns;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

static void set_default(const struct profd_host *h, struct profd_labels *l, const char *name,
                        const char *value)
{
    if (!h->labels_get(l, name))
        h->labels_set(l, name, value);
}

/* URL-encodes s into t (RFC 3986 unreserved characters pass). */
static void put_escaped(struct text *t, const char *s)
{
    for (; *s; s++) {
        char c[4] = {*s, 0};
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("-._~/", *s)))
            snprintf(c, sizeof(c), "%%%02X", (unsigned char)*s);
        put(t, c);
    }
}

static char *build_url(const struct profd_labels *l, const char *address)
{
    const char *scheme = NULL, *path = "";
    struct text t = {0};
    for (size_t i = 0; i < l->n; i++) {
        if (!strcmp(l->items[i].name, "__scheme__"))
            scheme = l->items[i].value;
        if (!strcmp(l->items[i].name, "__profile_path__"))
            path = l->items[i].value;
    }
    put(&t, scheme && *scheme ? scheme : "http");
    put(&t, "://");
    put(&t, address);
    put(&t, path);
    bool query = strchr(path, '?') != NULL;
    for (size_t i = 0; i < l->n; i++) {
        if (strncmp(l->items[i].name, "__param_", 8) != 0)
            continue;
        put(&t, query ? "&" : "?");
        query = true;
        put_escaped(&t, l->items[i].name + 8);
        put(&t, "=");
        put_escaped(&t, l->items[i].value);
    }
    return t.s;
}

/* Turns one target of one group into the unit for profile def, or returns
 * false when relabeling or sharding leaves it out. */
static bool make_unit(const struct profd_host *h, const struct job *job, const char *address,
                      const struct profd_labels *group, const struct profile_def *def,
                      struct scrape_unit *u)
{
    struct profd_labels l = {0};
    h->labels_copy(&l, group);
    h->labels_set(&l, "__address__", address);
    set_default(h, &l, "job", job->job_name);
    set_default(h, &l, "__scheme__", job->scheme);
    set_default(h, &l, "__name__", def->name);
    /* Pyroscope's mark, as Alloy sets it: the cumulative columns hold
     * deltas already, which a Pyroscope server must not make deltas again */
    if (def->delta || def->profiler_deltas)
        set_default(h, &l, DELTA_LABEL, "false");
    char *path;
    if (asprintf(&path, "%s%s", job->profiling_config.path_prefix, def->path) < 0)
        abort();
    set_default(h, &l, "__profile_path__", path);
    free(path);
    for (size_t i = 0; i < job->params.n; i++) {
        char name[256];
        snprintf(name, sizeof(name), "__param_%s", job->params.keys[i]);
        set_default(h, &l, name, job->params.values[i]);
    }
    if (def->seconds > 0) {
        char secs[32];
        snprintf(secs, sizeof(secs), "%lld", (long long)(def->seconds / 1000000000LL));
        set_default(h, &l, "__param_seconds", secs);
    }
    const char *addr = NULL;
    bool keep = h->relabel(job->relabel_configs, &l) && (addr = h->labels_get(&l, "__address__")) &&
                *addr;
    if (keep && job->shard.total > 0)
        keep = h->hash_mod(addr, (uint64_t)job->shard.total) == (uint64_t)job->shard.index;
    if (!keep) {
        h->labels_clear(&l);
        return false;
    }
    u->url = build_url(&l, addr);
    u->address = strdup(addr);
    set_default(h, &l, "instance", addr);
    /* Labels starting with __ are for relabeling only; __name__,
     * __delta__ and __tenant_id__ (the tenant exporters send) stay. */
    for (size_t i = l.n; i-- > 0;)
        if (!strncmp(l.items[i].name, "__", 2) && strcmp(l.items[i].name, "__name__") &&
            !transport_label(l.items[i].name))
            h->labels_del(&l, l.items[i].name);
    set_default(h, &l, "service_name", h->labels_get(&l, "job") ? h->labels_get(&l, "job") : "");
    struct text key = {0};
    put(&key, u->url);
    for (size_t i = 0; i < l.n; i++) {
        put(&key, "\n");
        put(&key, l.items[i].name);
        put(&key, "=");
        put(&key, l.items[i].value);
    }
    u->key = key.s;
    u->key_hash = unit_key_hash(u->key);
    u->labels = l;
    return true;
}

static void add_units(const struct profd_host *h, const struct job *job, size_t job_index,
                      const struct profile_def *defs, size_t ndefs, const struct profd_str_list *tg,
                      const struct profd_labels *labels, struct scrape_unit **units, size_t *n,
                      size_t *cap)
{
    for (size_t t = 0; t < tg->n; t++) {
        for (size_t d = 0; d < ndefs; d++) {
            if (*n == *cap) {
                *cap = *cap ? *cap * 2 : 16;
                struct scrape_unit *nu = realloc(*units, *cap * sizeof(**units));
                if (!nu)
                    abort();
                *units = nu;
            }
            struct scrape_unit *u = &(*units)[*n];
            memset(u, 0, sizeof(*u));
            if (make_unit(h, job, tg->items[t], labels, &defs[d], u)) {
                u->job = job_index;
                u->def = d;
                (*n)++;
            }
        }
    }
}

uint64_t target_group_hash(const struct profd_target_group *g)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < g->targets.n; i++)
        h = hash_bytes(g->targets.items[i], strlen(g->targets.items[i]) + 1) ^ (h * 31);
    for (size_t i = 0; i < g->labels.n; i++) {
        h = hash_bytes(g->labels.items[i].name, strlen(g->labels.items[i].name) + 1) ^ (h * 31);
        h = hash_bytes(g->labels.items[i].value, strlen(g->labels.items[i].value) + 1) ^ (h * 31);
    }
    return h;
}

/* Records in m that the group of hash group made units [first, n). */
static void memo_put(struct unit_memo *m, uint64_t group, size_t first, size_t n)
{
    m->ranges = grow_array(m->ranges, &m->ranges_cap, m->nranges + 1, sizeof(*m->ranges));
    m->ranges[m->nranges] = (struct memo_range){first, n - first};
    key_map_put(&m->by_group, group, (uint32_t)m->nranges++);
}

uint64_t unit_key_hash(const char *key)
{
    return hash_string(key);
}

void unit_memo_clear(struct unit_memo *m)
{
    free(m->ranges);
    free(m->pairs);
    free(m->slots);
    key_map_free(&m->by_group);
    *m = (struct unit_memo){0};
}

/* Adds the units of a found group, whose hash is group: units of its
 * pairs alone when last has it. */
static void add_found(const struct profd_host *h, const struct job *job, size_t job_index,
                      const struct profile_def *defs, size_t ndefs,
                      const struct profd_target_group *g, uint64_t group,
                      const struct unit_memo *last, struct unit_memo *next,
                      struct scrape_unit **units, size_t *n, size_t *cap)
{
    size_t first = *n;
    uint32_t at;
    if (last && key_map_get(&last->by_group, group, &at)) {
        const struct memo_range *r = &last->ranges[at];
        *units = grow_array(*units, cap, *n + r->n, sizeof(**units));
        for (size_t i = r->first; i < r->first + r->n; i++)
            (*units)[(*n)++] = (struct scrape_unit){.pair = last->pairs[i],
                                                    .slot = last->slots[i], .job = job_index};
    } else {
        add_units(h, job, job_index, defs, ndefs, &g->targets, &g->labels, units, n, cap);
    }
    memo_put(next, group, first, *n);
}

int targets_build(const struct profd_host *h, const struct job *job, size_t job_index,
                  const struct profile_def *defs, size_t ndefs, const struct found_groups *found,
                  size_t nfound, const struct unit_memo *last, struct unit_memo *next,
                  struct scrape_unit **units, size_t *n, char *err, size_t errlen)
{
    size_t cap = 0;
    *units = NULL;
    *n = 0;
    const struct static_config *sc = job->static_configs.items;
    for (size_t i = 0; i < job->static_configs.n; i++) {
        struct profd_labels labels = {0};
        for (size_t k = 0; k < sc[i].labels.n; k++)
            h->labels_set(&labels, sc[i].labels.keys[k], sc[i].labels.values[k]);
        add_units(h, job, job_index, defs, ndefs, &sc[i].targets, &labels, units, n, &cap);
        h->labels_clear(&labels);
    }
    for (size_t i = 0; i < nfound; i++)
        for (size_t k = 0; k < found[i].n; k++)
            add_found(h, job, job_index, defs, ndefs, &found[i].groups[k],
                      found[i].hashes[k], last, next, units, n, &cap);
    const struct file_sd_config *fc = job->file_sd_configs.items;
    int rc = 0;
    for (size_t i = 0; i < job->file_sd_configs.n && rc == 0; i++) {
        for (size_t f = 0; f < fc[i].files.n && rc == 0; f++) {
            glob_t gl;
            if (glob(fc[i].files.items[f], 0, NULL, &gl) != 0)
                continue;
            for (size_t g = 0; g < gl.gl_pathc && rc == 0; g++) {
                struct profd_target_group *groups;
                size_t ngroups;
                rc = h->sd_file_read(gl.gl_pathv[g], &groups, &ngroups, err, errlen);
                for (size_t k = 0; k < ngroups; k++) {
                    h->labels_set(&groups[k].labels, "__meta_filepath", gl.gl_pathv[g]);
                    add_units(h, job, job_index, defs, ndefs, &groups[k].targets,
                              &groups[k].labels, units, n, &cap);
                }
                if (rc == 0)
                    h->sd_groups_free(groups, ngroups);
            }
            globfree(&gl);
        }
    }
    if (rc < 0) {
        for (size_t i = 0; i < *n; i++)
            scrape_unit_clear(h, &(*units)[i]);
        free(*units);
        *units = NULL;
        *n = 0;
    }
    return rc;
}

char *targets_sd_signature(const struct job *job)
{
    struct text t = {0};
    put(&t, "");
    const struct file_sd_config *fc = job->file_sd_configs.items;
    for (size_t i = 0; i < job->file_sd_configs.n; i++) {
        for (size_t f = 0; f < fc[i].files.n; f++) {
            glob_t gl;
            if (glob(fc[i].files.items[f], 0, NULL, &gl) != 0)
                continue;
            for (size_t g = 0; g < gl.gl_pathc; g++) {
                struct stat st;
                char line[4200];
                if (stat(gl.gl_pathv[g], &st) == 0)
                    snprintf(line, sizeof(line), "%s:%lld.%09ld:%lld\n", gl.gl_pathv[g],
                             (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                             (long long)st.st_size);
                else
                    snprintf(line, sizeof(line), "%s:gone\n", gl.gl_pathv[g]);
                put(&t, line);
            }
            globfree(&gl);
        }
    }
    return t.s;
}

char *escape_label_value(const char *v)
{
    size_t n = 0;
    for (const char *p = v; *p; p++)
        n += (*p == '"' || *p == '\\' || *p == '\n') ? 2 : 1;
    char *out = malloc(n + 1), *o = out;
    if (!out)
        abort();
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '\n')
            *o++ = '\\';
        *o++ = *p == '\n' ? 'n' : *p;
    }
    *o = '\0';
    return out;
}

void scrape_unit_clear(const struct profd_host *h, struct scrape_unit *u)
{
    free(u->key);
    free(u->url);
    free(u->address);
    h->labels_clear(&u->labels);
    memset(u, 0, sizeof(*u));
}
