// SPDX-License-Identifier: Apache-2.0
/* The relabel engine: one table of cases covering every action and its edge
 * cases, and the config errors a rule list can have. */
#include "check.h"

#include <unistd.h>

#include "../../config/bind.h"
#include "../../config/tree.h"
#include "../../core/alloc.h"
#include "../../core/labels.h"
#include "../../core/relabel.h"

struct rules_holder {
    struct profd_relabel *rules;
};

static const struct profd_option holder_options[] = {
    {"rules", PROFD_OPT_RELABEL, offsetof(struct rules_holder, rules), NULL, "rules"},
    {0},
};

/* Compiles the YAML rule list `yaml` (a flow sequence); NULL on errors,
 * which go to d. */
static struct profd_relabel *compile(const char *yaml, struct profd_diag *d)
{
    char *doc = profd_xasprintf("rules: %s\n", yaml);
    struct cfg_node *root = cfg_load_string("r.yaml", doc, d);
    free(doc);
    struct rules_holder h = {0};
    struct profd_bind_section s = {holder_options, &h};
    int rc = root ? profd_bind(&s, 1, root, "p", d) : -1;
    cfg_free(root);
    if (rc < 0) {
        profd_unbind(holder_options, &h);
        return NULL;
    }
    return h.rules;
}

/* "a=1,b=2" -> label set. */
static void parse_labels(const char *text, struct profd_labels *l)
{
    profd_labels_clear(l);
    char *copy = profd_xstrdup(text), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        *eq = '\0';
        profd_labels_set(l, t, eq + 1);
    }
    free(copy);
}

static char *format_labels(const struct profd_labels *l)
{
    char buf[1024] = "";
    for (size_t i = 0; i < l->n; i++) {
        size_t n = strlen(buf);
        snprintf(buf + n, sizeof(buf) - n, "%s%s=%s", i ? "," : "", l->items[i].name,
                 l->items[i].value);
    }
    return profd_xstrdup(buf);
}

static const struct {
    const char *rules, *in, *out;   /* out NULL: dropped */
} cases[] = {
    /* replace: defaults copy the joined sources */
    {"[{source_labels: [a], target_label: b}]", "a=x", "a=x,b=x"},
    {"[{source_labels: [a], regex: 'f(.*)', replacement: '${1}bar', target_label: x}]",
     "a=foo", "a=foo,x=oobar"},
    {"[{source_labels: [a], regex: 'f(.*)', replacement: '$1bar', target_label: x}]",
     "a=foo", "a=foo"},                              /* $1bar names group "1bar": empty -> delete */
    {"[{source_labels: [a], regex: 'no', target_label: x}]", "a=foo,x=1", "a=foo,x=1"},
    {"[{source_labels: [a], regex: 'fo', target_label: x}]", "a=foo", "a=foo"},   /* anchored */
    {"[{source_labels: [a], regex: '(?i)FOO', replacement: hit, target_label: x}]", "a=foo",
     "a=foo,x=hit"},
    {"[{source_labels: [missing], target_label: x}]", "x=old", ""},   /* "" matches: delete x */
    {"[{source_labels: [missing], regex: 'a.*', target_label: x}]", "x=old", "x=old"},
    {"[{source_labels: [a, b], separator: '/', target_label: j}]", "a=1,b=2", "a=1,b=2,j=1/2"},
    {"[{source_labels: [a, b], target_label: j}]", "a=1,b=2", "a=1,b=2,j=1;2"},
    {"[{source_labels: [a], regex: '(.*)', target_label: '${1}', replacement: v}]", "a=dyn",
     "a=dyn,dyn=v"},                                 /* target_label expands too */
    {"[{source_labels: [a], target_label: '${1}', replacement: v}]", "a=1bad", "a=1bad"},
    {"[{source_labels: [a], regex: '(?P<first>\\w+)-(\\w+)', replacement: '$first:${2}$$', "
     "target_label: x}]",
     "a=ab-cd", "a=ab-cd,x=ab:cd$"},
    {"[{source_labels: [a], regex: '(.*)', replacement: 'cost $ 5', target_label: x}]", "a=1",
     "a=1,x=cost $ 5"},
    {"[{source_labels: [a], regex: '(.*)', replacement: '${1', target_label: x}]", "a=1",
     "a=1,x=${1"},
    /* keep, drop */
    {"[{source_labels: [env], regex: prod, action: keep}]", "env=prod", "env=prod"},
    {"[{source_labels: [env], regex: prod, action: keep}]", "env=dev", NULL},
    {"[{source_labels: [env], regex: prod, action: keep}]", "other=1", NULL},
    {"[{source_labels: [env], regex: 'te.*', action: drop}]", "env=test", NULL},
    {"[{source_labels: [env], regex: 'te.*', action: drop}]", "env=prod", "env=prod"},
    /* keepequal, dropequal */
    {"[{source_labels: [a], target_label: b, action: keepequal}]", "a=1,b=1", "a=1,b=1"},
    {"[{source_labels: [a], target_label: b, action: keepequal}]", "a=1,b=2", NULL},
    {"[{source_labels: [a], target_label: b, action: dropequal}]", "a=1,b=1", NULL},
    {"[{source_labels: [a], target_label: b, action: dropequal}]", "a=1", "a=1"},
    /* hashmod: md5, last 8 bytes big-endian, mod modulus (values from hashlib) */
    {"[{source_labels: [a], modulus: 1000, target_label: h, action: hashmod}]", "a=foo",
     "a=foo,h=696"},
    {"[{source_labels: [__address__, job], modulus: 3, target_label: s, action: hashmod}]",
     "__address__=127.0.0.1:6060,job=job", "__address__=127.0.0.1:6060,job=job,s=2"},
    {"[{source_labels: [none], modulus: 7, target_label: h, action: hashmod}]", "", "h=1"},
    {"[{source_labels: [a], modulus: 2, target_label: h, action: hashmod},"
     " {source_labels: [h], regex: '1', action: keep}]",
     "a=a", "a=a,h=1"},
    /* labelmap, labeldrop, labelkeep */
    {"[{regex: '__meta_(.+)', action: labelmap}]", "__meta_pod=p,__meta_ns=n,x=1",
     "__meta_ns=n,__meta_pod=p,ns=n,pod=p,x=1"},
    {"[{regex: '__meta_(.+)', replacement: 'k_$1', action: labelmap}]", "__meta_pod=p",
     "__meta_pod=p,k_pod=p"},
    {"[{regex: '__.*', action: labeldrop}]", "__a=1,__name__=cpu,b=2", "b=2"},
    {"[{regex: 'job|instance', action: labelkeep}]", "job=j,instance=i,x=1", "instance=i,job=j"},
    /* $ is the very end, as in Go: not before a final newline */
    {"[{source_labels: [a], regex: 'x|y', action: keep}]", "a=x\n", NULL},
    {"[{source_labels: [a], regex: 'x$', action: keep}]", "a=x\n", NULL},
    {"[{source_labels: [a], regex: 'x\\n', action: keep}]", "a=x\n", "a=x\n"},
    /* a regex of plain text is compared, still whole: not a prefix, suffix or part */
    {"[{regex: '__tenant_id__', action: labeldrop}]",
     "__tenant_id__=t,__tenant_id__x=1,a__tenant_id__=2,__tenant_id=3",
     "__tenant_id=3,__tenant_id__x=1,a__tenant_id__=2"},
    {"[{regex: 'job', action: labelkeep}]", "job=j,jobs=2,ajob=3", "job=j"},
    {"[{source_labels: [env], regex: '', action: drop}]", "other=1", NULL},
    {"[{source_labels: [env], regex: '', action: drop}]", "env=x", "env=x"},
    {"[{source_labels: [env], regex: 'caf\u00e9-1', action: keep}]", "env=caf\u00e9-1",
     "env=caf\u00e9-1"},
    {"[{source_labels: [env], regex: 'caf\u00e9-1', action: keep}]", "env=caf\u00e9-10", NULL},
    /* lowercase, uppercase */
    {"[{source_labels: [a], target_label: l, action: lowercase}]", "a=MiXeD", "a=MiXeD,l=mixed"},
    {"[{source_labels: [a, b], target_label: u, action: uppercase}]", "a=x,b=y", "a=x,b=y,u=X;Y"},
    /* a group the regex does not have is empty, whatever an earlier rule's
     * regex with more groups matched */
    {"[{source_labels: [a], regex: '(a)(b)(c)', replacement: '$3', target_label: x},"
     " {source_labels: [x], regex: '(.)', replacement: '[$3]', target_label: y}]",
     "a=abc", "a=abc,x=c,y=[]"},
    /* rules run in order; a drop stops the list */
    {"[{source_labels: [a], target_label: b}, {source_labels: [b], regex: x, action: drop},"
     " {target_label: never, replacement: set}]",
     "a=x", NULL},
};

TEST(every_action_and_edge_case)
{
    struct profd_labels l = {0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct profd_diag d = {0};
        struct profd_relabel *rs = compile(cases[i].rules, &d);
        for (size_t k = 0; k < d.n; k++)
            fprintf(stderr, "  case %zu: %s\n", i, d.msgs[k]);
        CHECK(rs != NULL);
        profd_diag_free(&d);
        if (!rs)
            continue;
        parse_labels(cases[i].in, &l);
        bool keep = profd_relabel_apply(rs, &l);
        char *got = format_labels(&l);
        if (keep != (cases[i].out != NULL) || (keep && strcmp(got, cases[i].out) != 0)) {
            fprintf(stderr, "  case %zu: %s on {%s}: got %s {%s}, want %s\n", i, cases[i].rules,
                    cases[i].in, keep ? "kept" : "dropped", got,
                    cases[i].out ? cases[i].out : "dropped");
            check_case_failed = 1;
        }
        free(got);
        profd_relabel_free(rs);
    }
    profd_labels_clear(&l);
}

TEST(bad_rules_are_config_errors_with_location)
{
    struct {
        const char *rules, *want;
    } bad[] = {
        {"[{source_labels: [a], regex: 'a(b', target_label: x}]",
         "r.yaml:1:37: p.rules[0]: invalid regex 'a(b': missing closing parenthesis"},
        {"[{source_labels: [a], regex: 'a(?!b)', target_label: x}]",
         "r.yaml:1:37: p.rules[0]: invalid regex 'a(?!b)': a group Go's regexp does not have "
         "(lookaround, atomic, recursion, comment), at offset 1 (Prometheus would refuse it)"},
        {"[{source_labels: [a]}]", "r.yaml:1:9: p.rules[0]: replace needs target_label"},
        {"[{source_labels: [a], target_label: h, action: hashmod}]",
         "p.rules[0]: hashmod needs a modulus above 0"},
        {"[{action: keep}]", "keep and drop need source_labels"},
        {"[{action: explode}]", "r.yaml:1:18: p.rules[0].action: 'explode' is not one of: replace"},
        {"{a: b}", "p.rules must be a list, not a map"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct profd_diag d = {0};
        struct profd_relabel *rs = compile(bad[i].rules, &d);
        CHECK(rs == NULL);
        CHECK_CONTAINS(d.n ? d.msgs[0] : "", bad[i].want);
        profd_diag_free(&d);
        profd_relabel_free(rs);
    }
    CHECK(profd_relabel_apply(NULL, &(struct profd_labels){0}));
}

/* ---- the same regexes in Go's regexp, which Prometheus relabels with ---- */

/* Regexes and a replacement each, tried on every value below. */
static const struct {
    const char *regex, *replacement;
} go_rules[] = {
    {"(.*)", "<$0|$1>"},
    {"", "<$0>"},
    {"x", "<$0>"},
    {"x|y", "<$0>"},
    {"x$", "<$0>"},
    {"^x", "<$0>"},
    {"a.c", "<$0>"},
    {"(a+)(a*)", "<$1|$2>"},
    {"(?U)(a+)(a*)", "<$1|$2>"},
    {"a{2,3}", "<$0>"},
    {"(?i)strasse|k", "<$0>"},
    {"(?i)stra\u00dfe", "<$0>"},
    {"[[:alpha:]]+", "<$0>"},
    {"\\d+|\\w+", "<$0>"},
    {"\\pL+", "<$0>"},
    {"[^a]", "<$0>"},
    {"(?P<first>\\w+)-(\\w+)", "<$first:${2}$$>"},
    {"(\\w+)-(\\w+)", "<$1x|${1}x|$3|$>"},
    {"\\Qa.b\\E", "<$0>"},
    {"(?s:.)+", "<$0>"},
    {"\\x{e9}", "<$0>"},
    {"(a)|(b)", "<$1|$2>"},
    {"a\ufffdc|\ufffd", "<$0>"},   /* U+FFFD, which a stray byte reads as */
    {"(a)(\\C)?", "<$1>"},
    {"\\s", "<$0>"},
    {"\\v|\\t", "<$0>"},
    {"[\\s\\v]", "<$0>"},
    {"\\101", "<$0>"},
    {"x{,3}", "<$0>"},
    {"[\\s\\-z]", "<$0>"},   /* Go's [\s-z]; PCRE2 refuses a range from a class */
    {"[\\s-z]", "<$0>"},   /* the same, as Go reads it */
    {"[\\d-z]+|[[:alpha:]-5]+|[\\pL-]|[\\p{Greek}-x]", "<$0>"},
    /* What PCRE2 takes and Go refuses (Prometheus would not load it) */
    {"a(?=b)|x", "<$0>"},
    {"(?<!a)b", "<$0>"},
    {"(a)\\1", "<$0>"},
    {"(?>a+)b", "<$0>"},
    {"a*+", "<$0>"},
    {"a{2}+", "<$0>"},
    {"a???", "<$0>"},
    {"x\\Z", "<$0>"},
    {"\\Kx", "<$0>"},
    {"\\h", "<$0>"},
    {"[\\h]", "<$0>"},
    {"\\g1", "<$0>"},
    {"(?#note)x", "<$0>"},
    {"(*FAIL)|x", "<$0>"},
    {"(?x) x", "<$0>"},
    {"a{1001}", "<$0>"},
    {"\\o{101}", "<$0>"},
    {"\\xA|x", "<$0>"},
    /* ... and what both take, near those */
    {"a*?b|a{2}?|x??", "<$0>"},
    {"\\x{41}|\\x41|\\12|\\0", "<$0>"},
    {"(?P<n>a)b|(?i-s:K)|\\pL+", "<$0>"},
    {"[[:alpha:]]+\\_?", "<$0>"},
    {"\\Qa(*+\\E|x", "<$0>"},
};

static const char *const go_values[] = {
    "x", "x\n", "", "abc", "a\nc", "aaa", "STRASSE", "stra\u00dfe", "K", "\u212a",
    "ab-cd", "a.b", "\u00e9", "\xff", "a\xff\x63", "b", "12", "ab", "\v", "\xc2\x85", "\u2028",
    "\t", " ", "A", "x{,3}", "-", "m",
};

/* Bytes as hex, "-" for none: the Go side's input. */
static void put_hex(FILE *f, const char *s)
{
    if (!*s)
        fputs("-", f);   /* a field of its own, read as empty */
    for (; *s; s++)
        fprintf(f, "%02x", (unsigned char)*s);
}

/* One rule on one value: replace into x (regex, replacement), or
 * lowercase or uppercase into x. */
struct go_case {
    const char *action, *regex, *value, *replacement;
};

/* What profd does with c, in the Go side's words: "C", "N" or "M <hex>"
 * (x's new value; a rule whose result is empty removes x: "M "). */
static void profd_answer(const struct go_case *c, char *out, size_t cap)
{
    char *sources[1] = {"a"};
    int action = 0;
    while (strcmp(profd_relabel_actions[action], c->action) != 0)
        action++;
    struct profd_relabel_rule_cfg rule = {
        .source_labels = {1, sources}, .separator = ";", .regex = (char *)c->regex,
        .target_label = "x", .replacement = (char *)c->replacement, .action = action,
    };
    char err[256];
    size_t bad;
    struct profd_relabel *rs = profd_relabel_compile(&rule, 1, err, sizeof(err), &bad);
    if (!rs) {
        snprintf(out, cap, "C");
        return;
    }
    struct profd_labels l = {0};
    profd_labels_set(&l, "a", c->value);
    profd_labels_set(&l, "x", "\x01");
    profd_relabel_apply(rs, &l);
    const char *x = profd_labels_get(&l, "x");
    if (x && !strcmp(x, "\x01")) {
        snprintf(out, cap, "N");
    } else {
        size_t n = (size_t)snprintf(out, cap, "M ");
        for (; x && *x && n + 3 < cap; x++)
            n += (size_t)snprintf(out + n, cap - n, "%02x", (unsigned char)*x);
    }
    profd_labels_clear(&l);
    profd_relabel_free(rs);
}

/* Runs the cases through Go (build/tests/relabel_go, or $BUILD's) and
 * through profd, and reports every case they answer differently. */
static void compare_with_go(const struct go_case *cases, size_t n)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char input[] = "/tmp/profd-relabel-go-XXXXXX";
    int fd = mkstemp(input);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (size_t i = 0; f && i < n; i++) {
        fprintf(f, "%s ", cases[i].action);
        put_hex(f, cases[i].regex);
        fputc(' ', f);
        put_hex(f, cases[i].value);
        fputc(' ', f);
        put_hex(f, cases[i].replacement);
        fputc('\n', f);
    }
    if (f)
        fclose(f);
    char *cmd = profd_xasprintf("%s/tests/relabel_go < %s", build, input);
    FILE *go = popen(cmd, "r");
    free(cmd);
    CHECK(go != NULL);
    char want[512], got[512];
    size_t answered = 0;
    while (go && answered < n && fgets(want, sizeof(want), go)) {
        const struct go_case *c = &cases[answered++];
        want[strcspn(want, "\n")] = '\0';
        profd_answer(c, got, sizeof(got));
        if (strcmp(want, got) != 0)
            CHECK_FAIL_("%s '%s' on '%s': Go %s, profd %s", c->action, c->regex, c->value, want,
                        got);
    }
    CHECK(go && pclose(go) == 0);
    CHECK(answered == n);
    unlink(input);
}

/* Every rule of go_rules on every value of go_values, through replace. */
TEST(regexes_do_what_gos_regexp_does)
{
    size_t nrules = sizeof(go_rules) / sizeof(*go_rules);
    size_t nvalues = sizeof(go_values) / sizeof(*go_values);
    struct go_case *cases = profd_xcalloc(nrules * nvalues, sizeof(*cases));
    for (size_t r = 0; r < nrules; r++)
        for (size_t v = 0; v < nvalues; v++)
            cases[r * nvalues + v] = (struct go_case){"replace", go_rules[r].regex, go_values[v],
                                                      go_rules[r].replacement};
    compare_with_go(cases, nrules * nvalues);
    free(cases);
}

/* lowercase and uppercase, as Go's strings.ToLower and ToUpper, on every
 * value of go_values and letters of other scripts. */
TEST(case_changes_do_what_gos_strings_do)
{
    static const char *const more[] = {
        "\u00c9COLE", "\u03a3\u03c3\u03c2", "\u1e9e\u00df", "\u0130i", "\u01c5", "\U00010400",
        "\u0410\u0431\u0412", "MiXeD 123", "\xc3", "\xe2\x82\x41", "\xed\xa0\x80",
    };
    size_t nvalues = sizeof(go_values) / sizeof(*go_values), nmore = sizeof(more) / sizeof(*more);
    struct go_case *cases = profd_xcalloc(2 * (nvalues + nmore), sizeof(*cases));
    size_t n = 0;
    for (int upper = 0; upper < 2; upper++)
        for (size_t v = 0; v < nvalues + nmore; v++)
            cases[n++] = (struct go_case){upper ? "uppercase" : "lowercase", "(.*)",
                                          v < nvalues ? go_values[v] : more[v - nvalues], "$1"};
    compare_with_go(cases, n);
    free(cases);
}

RUN_TESTS()
