// SPDX-License-Identifier: Apache-2.0
/*
 * Prometheus relabeling. Regexes are PCRE2 (JIT when available), anchored
 * the way Prometheus anchors them: ^(?s:REGEX)$, and made to do what Go's
 * regexp does: $ matches only at the very end (PCRE2's would also match
 * before a final newline), \C is refused, \s, \S and \v are Go's
 * (go_regex.h), and a value that is not UTF-8 is read with each stray byte
 * as U+FFFD. Replacements expand $1, ${1}, $name and ${name} as Go's
 * regexp.Expand does.
 */
#include "relabel.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "../config/bind.h"
#include "alloc.h"
#include "go_regex.h"
#include "labels.h"
#include "md5.h"
#include "text.h"
#include "thread_slot.h"
#include "utf8.h"

const char *const profd_relabel_actions[] = {
    "replace", "keep", "drop", "keepequal", "dropequal", "hashmod", "labelmap", "labeldrop",
    "labelkeep", "lowercase", "uppercase", NULL,
};

enum action {
    A_REPLACE, A_KEEP, A_DROP, A_KEEPEQUAL, A_DROPEQUAL, A_HASHMOD, A_LABELMAP, A_LABELDROP,
    A_LABELKEEP, A_LOWERCASE, A_UPPERCASE,
};

const struct profd_option profd_relabel_rule_options[] = {
    {"source_labels", PROFD_OPT_STRING_LIST, offsetof(struct profd_relabel_rule_cfg, source_labels),
     NULL, "labels whose values are joined and matched"},
    {"separator", PROFD_OPT_STRING, offsetof(struct profd_relabel_rule_cfg, separator), "\";\"",
     "placed between the joined source label values"},
    {"regex", PROFD_OPT_STRING, offsetof(struct profd_relabel_rule_cfg, regex), "\"(.*)\"",
     "fully anchored regular expression"},
    {"modulus", PROFD_OPT_INT, offsetof(struct profd_relabel_rule_cfg, modulus), "0",
     "modulus of the hash (hashmod)"},
    {"target_label", PROFD_OPT_STRING, offsetof(struct profd_relabel_rule_cfg, target_label), NULL,
     "label the result is written to"},
    {"replacement", PROFD_OPT_STRING, offsetof(struct profd_relabel_rule_cfg, replacement),
     "\"$1\"", "value written, with $1, ${1}, ${name} references to the regex groups"},
    {"action", PROFD_OPT_ENUM, offsetof(struct profd_relabel_rule_cfg, action), "replace",
     "replace, keep, drop, keepequal, dropequal, hashmod, labelmap, labeldrop, labelkeep, "
     "lowercase or uppercase",
     .choices = profd_relabel_actions},
    {0},
};

struct rule {
    enum action action;
    char **source;
    size_t nsource;
    char *separator, *target, *replacement;
    uint64_t modulus;
    pcre2_code *re;
    uint32_t groups;   /* the regex's, the whole match included */
    char *literal;     /* the regex, when it has no special characters */
    size_t literal_len;
};

struct profd_relabel {
    struct rule *rules;
    size_t n;
    uint32_t max_groups;   /* sizes one match-data block for every rule */
};

/* ---- compile ---- */

/* The PCRE2 code of an anchored pattern, or NULL and its error's message
 * and offset in pattern. */
static pcre2_code *compile_anchored(const char *pattern, int *code, PCRE2_SIZE *off)
{
    char *anchored = profd_xasprintf("^(?s:%s)$", pattern);
    /* as Go: $ only at the very end, and no \C (one byte of a character) */
    uint32_t options = PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C;
    pcre2_code *c =
        pcre2_compile((PCRE2_SPTR)anchored, PCRE2_ZERO_TERMINATED, options, code, off, NULL);
    free(anchored);
    *off = *off >= 5 ? *off - 5 : 0;   /* past "^(?s:" */
    return c;
}

/* re, in Go's syntax, compiled to do what Go's regexp does with it (its
 * rewrite, go_regex.h, where the two read it differently). Errors are
 * those of re as written, so that their offsets are the user's. */
static pcre2_code *compile_regex(const char *re, char *err, size_t errlen)
{
    int code;
    PCRE2_SIZE off;
    char *rewritten = profd_go_regex_for_pcre2(re);
    pcre2_code *c = compile_anchored(rewritten ? rewritten : re, &code, &off);
    if (!c && rewritten) {
        pcre2_code *as_written = compile_anchored(re, &code, &off);
        if (as_written) {
            pcre2_code_free(as_written);
            snprintf(err, errlen, "invalid regex '%s': its \\s, \\S or \\v cannot be read as Go's",
                     re);
            free(rewritten);
            return NULL;
        }
    }
    free(rewritten);
    if (!c) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof(msg));
        snprintf(err, errlen, "invalid regex '%s': %s at offset %zu", re, (char *)msg,
                 off < strlen(re) ? (size_t)off : strlen(re));
        return NULL;
    }
    size_t at;
    const char *unsupported = profd_go_regex_unsupported(re, &at);
    if (unsupported) {
        snprintf(err, errlen, "invalid regex '%s': %s, at offset %zu (Prometheus would refuse it)",
                 re, unsupported, at);
        pcre2_code_free(c);
        return NULL;
    }
    pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);   /* falls back to the interpreter */
    return c;
}

/* The regex itself when it matches only its own text (no character with a
 * meaning in a regex, and no U+FFFD, which a value's stray byte also reads
 * as), so that a match is a comparison; else NULL. */
static char *literal_of(const char *re)
{
    if (re[strcspn(re, "\\^$.|?*+()[]{}")] || strstr(re, UTF8_REPLACEMENT))
        return NULL;
    return profd_xstrdup(re);
}

static bool valid_label_name(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

/* Checks the fields each action needs, as Prometheus's config validation does. */
static const char *check_rule(const struct profd_relabel_rule_cfg *c)
{
    bool has_target = c->target_label && *c->target_label;
    switch (c->action) {
    case A_REPLACE:
        return has_target ? NULL : "replace needs target_label";
    case A_HASHMOD:
        if (!has_target)
            return "hashmod needs target_label";
        return c->modulus > 0 ? NULL : "hashmod needs a modulus above 0";
    case A_KEEPEQUAL:
    case A_DROPEQUAL:
    case A_LOWERCASE:
    case A_UPPERCASE:
        if (!has_target)
            return "this action needs target_label";
        return c->source_labels.n ? NULL : "this action needs source_labels";
    case A_LABELDROP:
    case A_LABELKEEP:
        return c->source_labels.n || has_target ? "labeldrop and labelkeep take only regex" : NULL;
    case A_KEEP:
    case A_DROP:
        return c->source_labels.n ? NULL : "keep and drop need source_labels";
    default:
        return NULL;
    }
}

struct profd_relabel *profd_relabel_compile(const struct profd_relabel_rule_cfg *cfgs, size_t n,
                                            char *err, size_t errlen, size_t *bad_rule)
{
    struct profd_relabel *rs = profd_xcalloc(1, sizeof(*rs));
    rs->rules = profd_xcalloc(n ? n : 1, sizeof(*rs->rules));
    for (size_t i = 0; i < n; i++, rs->n++) {
        const struct profd_relabel_rule_cfg *c = &cfgs[i];
        struct rule *r = &rs->rules[i];
        const char *why = check_rule(c);
        if (why) {
            snprintf(err, errlen, "%s", why);
            goto fail;
        }
        r->re = compile_regex(c->regex, err, errlen);
        if (!r->re)
            goto fail;
        r->literal = literal_of(c->regex);
        r->literal_len = r->literal ? strlen(r->literal) : 0;
        r->action = (enum action)c->action;
        r->nsource = c->source_labels.n;
        r->source = profd_xcalloc(r->nsource ? r->nsource : 1, sizeof(*r->source));
        for (size_t k = 0; k < r->nsource; k++)
            r->source[k] = profd_xstrdup(c->source_labels.items[k]);
        r->separator = profd_xstrdup(c->separator ? c->separator : "");
        r->target = c->target_label ? profd_xstrdup(c->target_label) : NULL;
        r->replacement = profd_xstrdup(c->replacement ? c->replacement : "");
        r->modulus = (uint64_t)c->modulus;
        uint32_t captures = 0;
        pcre2_pattern_info(r->re, PCRE2_INFO_CAPTURECOUNT, &captures);
        r->groups = captures + 1;
        if (r->groups > rs->max_groups)
            rs->max_groups = r->groups;
        continue;
    fail:
        *bad_rule = i;
        profd_relabel_free(rs);
        return NULL;
    }
    return rs;
}

void profd_relabel_free(struct profd_relabel *rs)
{
    if (!rs)
        return;
    for (size_t i = 0; i < rs->n; i++) {
        struct rule *r = &rs->rules[i];
        for (size_t k = 0; k < r->nsource; k++)
            free(r->source[k]);
        free(r->source);
        free(r->separator);
        free(r->target);
        free(r->replacement);
        free(r->literal);
        pcre2_code_free(r->re);
    }
    free(rs->rules);
    free(rs);
}

/* ---- apply ---- */

static void join_sources(const struct rule *r, const struct profd_labels *l,
                         struct profd_text *out)
{
    out->len = 0;
    profd_text_put(out, "", 0);
    for (size_t k = 0; k < r->nsource; k++) {
        const char *v = profd_labels_get(l, r->source[k]);
        if (k)
            profd_text_add(out, r->separator);
        if (v)
            profd_text_add(out, v);
    }
}

/* What applying rules needs besides the labels, kept by each thread for
 * its next set (rules run once per record: a push, a scrape), freed as
 * the thread exits. */
struct scratch {
    pcre2_match_data *md;
    uint32_t md_groups;
    struct profd_text val, tmp, name;   /* joined sources, expansions, a target's name */
    struct profd_text as_go;   /* a subject that is not UTF-8, as Go reads it */
    size_t *origin, origin_cap;   /* where as_go's bytes come from in the subject */
};

/* Makes sc->as_go s as Go's regexp reads it, every byte that starts no
 * UTF-8 character made U+FFFD, and sc->origin, for each of its bytes and
 * its end, where in s the character it belongs to starts (or s's end). */
static void read_as_go(const char *s, size_t len, struct scratch *sc)
{
    const size_t replacement_len = sizeof(UTF8_REPLACEMENT) - 1;
    sc->as_go.len = 0;
    profd_text_put(&sc->as_go, "", 0);
    /* at most every byte made U+FFFD */
    profd_grow(&sc->origin, &sc->origin_cap, len * replacement_len + 1, sizeof(*sc->origin));
    for (size_t i = 0; i < len;) {
        size_t n = utf8_char_len((const uint8_t *)s + i, len - i);
        size_t out = n ? n : replacement_len;
        for (size_t k = 0; k < out; k++)
            sc->origin[sc->as_go.len + k] = i;
        profd_text_put(&sc->as_go, n ? s + i : UTF8_REPLACEMENT, out);
        i += n ? n : 1;
    }
    sc->origin[sc->as_go.len] = len;
}

/* Matches s against the rule's regex; sc->md holds the groups, as offsets
 * in s, on success. A subject that is not UTF-8 (PCRE2 refuses it) is
 * matched as Go's regexp would, and its groups mapped back to s. */
static bool match(const struct rule *r, const char *s, size_t len, struct scratch *sc)
{
    int rc = pcre2_match(r->re, (PCRE2_SPTR)s, len, 0, 0, sc->md, NULL);
    if (rc >= 0)
        return true;
    if (rc > PCRE2_ERROR_UTF8_ERR1 || rc < PCRE2_ERROR_UTF8_ERR21)
        return false;
    read_as_go(s, len, sc);
    if (pcre2_match(r->re, (PCRE2_SPTR)sc->as_go.s, sc->as_go.len, 0, 0, sc->md, NULL) < 0)
        return false;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(sc->md);
    for (uint32_t i = 0; i < 2 * r->groups; i++)   /* past them: an earlier match's */
        if (ov[i] != PCRE2_UNSET && ov[i] <= sc->as_go.len)
            ov[i] = sc->origin[ov[i]];
    return true;
}

/* Whether s matches the rule's regex, for actions that use no groups. */
static bool matches(const struct rule *r, const char *s, size_t len, struct scratch *sc)
{
    if (r->literal)
        return len == r->literal_len && !memcmp(s, r->literal, len);
    return match(r, s, len, sc);
}

/* Go's regexp.Expand: $1, ${1}, $name, ${name}; $$ is a dollar; a $ that
 * starts no valid reference is copied as is. */
static void expand(const struct rule *r, const char *tmpl, const char *subject,
                   pcre2_match_data *md, struct profd_text *out)
{
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    /* the match data may be larger: what lies past the regex's own groups
     * is an earlier match's */
    uint32_t ngroups = r->groups;
    out->len = 0;
    profd_text_put(out, "", 0);
    for (const char *p = tmpl; *p;) {
        if (*p != '$') {
            size_t n = strcspn(p, "$");
            profd_text_put(out, p, n);
            p += n;
            continue;
        }
        if (p[1] == '$') {
            profd_text_put(out, "$", 1);
            p += 2;
            continue;
        }
        bool braced = p[1] == '{';
        const char *name = p + 1 + braced;
        size_t n = 0;
        while (isalnum((unsigned char)name[n]) || name[n] == '_')
            n++;
        if (n == 0 || (braced && name[n] != '}')) {
            profd_text_put(out, "$", 1);   /* malformed: the $ is plain text */
            p++;
            continue;
        }
        char ref[64];
        snprintf(ref, sizeof(ref), "%.*s", (int)(n < 63 ? n : 63), name);
        p = name + n + braced;
        int group = -1;
        if (strspn(ref, "0123456789") == strlen(ref))
            group = atoi(ref);
        else
            group = pcre2_substring_number_from_name(r->re, (PCRE2_SPTR)ref);
        if (group >= 0 && (uint32_t)group < ngroups && ov[2 * group] != PCRE2_UNSET)
            profd_text_put(out, subject + ov[2 * group], ov[2 * group + 1] - ov[2 * group]);
    }
}

uint64_t profd_hash_mod(const char *s, size_t len, uint64_t modulus)
{
    uint8_t digest[16];
    profd_md5(s, len, digest);
    uint64_t v = 0;
    for (int i = 8; i < 16; i++)   /* Prometheus: big-endian uint64 of bytes 8..15 */
        v = (v << 8) | digest[i];
    return v % modulus;
}

static void set_or_delete(struct profd_labels *l, const char *name,
                          const struct profd_text *value)
{
    if (value->len)
        profd_labels_setn(l, name, value->s, value->len);
    else
        profd_labels_del(l, name);
}

/* Applies one rule; false when the label set is to be dropped. */
static bool apply_rule(const struct rule *r, struct profd_labels *l, struct scratch *sc)
{
    pcre2_match_data *md = sc->md;
    struct profd_text *val = &sc->val, *tmp = &sc->tmp;
    join_sources(r, l, val);
    switch (r->action) {
    case A_KEEP:
        return matches(r, val->s, val->len, sc);
    case A_DROP:
        return !matches(r, val->s, val->len, sc);
    case A_KEEPEQUAL:
    case A_DROPEQUAL: {
        const char *t = profd_labels_get(l, r->target);
        bool equal = !strcmp(val->s, t ? t : "");
        return r->action == A_KEEPEQUAL ? equal : !equal;
    }
    case A_REPLACE: {
        if (!match(r, val->s, val->len, sc))
            return true;
        expand(r, r->target, val->s, md, &sc->name);
        if (valid_label_name(sc->name.s)) {
            expand(r, r->replacement, val->s, md, tmp);
            set_or_delete(l, sc->name.s, tmp);
        }
        return true;
    }
    case A_HASHMOD: {
        char num[24];
        snprintf(num, sizeof(num), "%llu",
                 (unsigned long long)profd_hash_mod(val->s, val->len, r->modulus));
        profd_labels_set(l, r->target, num);
        return true;
    }
    case A_LOWERCASE:
    case A_UPPERCASE:
        tmp->len = 0;
        profd_utf8_change_case(val->s, val->len, r->action == A_UPPERCASE, tmp);
        set_or_delete(l, r->target, tmp);
        return true;
    case A_LABELMAP: {
        /* New names are computed from the original set, then added. */
        struct profd_labels add = {0};
        for (size_t i = 0; i < l->n; i++) {
            const char *nm = l->items[i].name;
            if (!match(r, nm, strlen(nm), sc))
                continue;
            expand(r, r->replacement, nm, md, tmp);
            if (valid_label_name(tmp->s))
                profd_labels_set(&add, tmp->s, l->items[i].value);
        }
        for (size_t i = 0; i < add.n; i++)
            profd_labels_set(l, add.items[i].name, add.items[i].value);
        profd_labels_clear(&add);
        return true;
    }
    case A_LABELDROP:
    case A_LABELKEEP:
        for (size_t i = l->n; i-- > 0;) {
            bool m = matches(r, l->items[i].name, strlen(l->items[i].name), sc);
            if (m == (r->action == A_LABELDROP))
                profd_labels_del_at(l, i);
        }
        return true;
    }
    return true;
}


static void scratch_free(void *arg)
{
    struct scratch *sc = arg;
    pcre2_match_data_free(sc->md);
    free(sc->val.s);
    free(sc->tmp.s);
    free(sc->name.s);
    free(sc->as_go.s);
    free(sc->origin);
    free(sc);
}

static struct profd_thread_slot scratch_slot =
    PROFD_THREAD_SLOT(sizeof(struct scratch), scratch_free);

/* The thread's scratch, with match data for groups groups. */
static struct scratch *scratch_for(uint32_t groups)
{
    struct scratch *sc = profd_thread_slot_get(&scratch_slot);
    if (!sc->md || sc->md_groups < groups) {
        pcre2_match_data_free(sc->md);
        sc->md = pcre2_match_data_create(groups, NULL);
        sc->md_groups = groups;
    }
    return sc;
}

bool profd_relabel_apply(const struct profd_relabel *rs, struct profd_labels *l)
{
    if (!rs || !rs->n)
        return true;
    struct scratch *sc = scratch_for(rs->max_groups);
    bool keep = true;
    for (size_t i = 0; i < rs->n && keep; i++)
        keep = apply_rule(&rs->rules[i], l, sc);
    return keep;
}
