// SPDX-License-Identifier: Apache-2.0
#include "k8s_kubeconfig.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../core/base64.h"
#include "file_io.h"
#include "grow.h"
#include "proxy_url.h"

/* The largest kubeconfig read: certificates inline make them a few KB. */
#define MAX_KUBECONFIG (4u << 20)

/* A document being read, and where to say what is wrong. */
struct reader {
    yaml_document_t doc;
    const char *path;
    char *dir;   /* the file's directory, for relative paths */
    char *why;
    size_t whylen;
};

static int fail(struct reader *r, const yaml_node_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Says (in r->why) what is wrong, where: the file and, given a node, its
 * line. Returns -1. */
static int fail(struct reader *r, const yaml_node_t *at, const char *fmt, ...)
{
    int n = at ? snprintf(r->why, r->whylen, "%s:%zu: ", r->path, at->start_mark.line + 1)
               : snprintf(r->why, r->whylen, "%s: ", r->path);
    if (n < 0 || (size_t)n >= r->whylen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why + n, r->whylen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static yaml_node_t *node(struct reader *r, int id)
{
    return yaml_document_get_node(&r->doc, id);
}

static bool is_scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE;
}

static const char *text_of(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* The value under key in the mapping m, or NULL (m not a mapping either). */
static yaml_node_t *get(struct reader *r, const yaml_node_t *m, const char *key)
{
    if (!m || m->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(r, p->key);
        if (is_scalar(k) && !strcmp(text_of(k), key))
            return node(r, p->value);
    }
    return NULL;
}

/* The text under key in m: NULL when missing or empty. */
static const char *get_text(struct reader *r, const yaml_node_t *m, const char *key)
{
    yaml_node_t *v = get(r, m, key);
    return is_scalar(v) && v->data.scalar.length ? text_of(v) : NULL;
}

/* Whether the text under key in m is YAML's true (true, True, TRUE). */
static bool get_bool(struct reader *r, const yaml_node_t *m, const char *key)
{
    const char *t = get_text(r, m, key);
    return t && (!strcmp(t, "true") || !strcmp(t, "True") || !strcmp(t, "TRUE"));
}

/* In the list under list_key of the top mapping (clusters, contexts,
 * users), the item named name: its field item_key (cluster, context,
 * user). NULL, with why, when there is none. */
static yaml_node_t *named(struct reader *r, const char *list_key, const char *name,
                          const char *item_key)
{
    yaml_node_t *root = yaml_document_get_root_node(&r->doc);
    yaml_node_t *list = get(r, root, list_key);
    if (list && list->type == YAML_SEQUENCE_NODE)
        for (yaml_node_item_t *i = list->data.sequence.items.start;
             i < list->data.sequence.items.top; i++) {
            const char *n = get_text(r, node(r, *i), "name");
            if (n && !strcmp(n, name)) {
                yaml_node_t *item = get(r, node(r, *i), item_key);
                if (!item || item->type != YAML_MAPPING_NODE)
                    fail(r, node(r, *i), "%s '%s' has no %s", list_key, name, item_key);
                return item && item->type == YAML_MAPPING_NODE ? item : NULL;
            }
        }
    fail(r, list, "no %s named '%s' in %s", item_key, name, list_key);
    return NULL;
}

/* A copy of the text under key, NULL when not given. */
static char *copy_text(struct reader *r, const yaml_node_t *m, const char *key)
{
    const char *t = get_text(r, m, key);
    return t ? must_strdup(t) : NULL;
}

/* path, made relative to the file's directory when it is relative. */
static char *resolved(const struct reader *r, const char *path)
{
    return path[0] == '/' ? must_strdup(path) : must_asprintf("%s/%s", r->dir, path);
}

/* The path under key, resolved; NULL when not given. */
static char *copy_path(struct reader *r, const yaml_node_t *m, const char *key)
{
    const char *t = get_text(r, m, key);
    return t ? resolved(r, t) : NULL;
}

/* The base64 text under key decoded into *out (NUL-terminated, as PEM is
 * text); line breaks and spaces in it are skipped. 0, or -1 with why. */
static int copy_decoded(struct reader *r, const yaml_node_t *m, const char *key, char **out)
{
    yaml_node_t *v = get(r, m, key);
    *out = NULL;
    if (!is_scalar(v) || !v->data.scalar.length)
        return 0;
    size_t n = 0;
    char *digits = must_malloc(v->data.scalar.length + 1);
    for (const char *s = text_of(v); *s; s++)
        if (!strchr(" \t\r\n", *s))
            digits[n++] = *s;
    *out = must_malloc(n / 4 * 3 + 3);
    ssize_t len = profd_base64_decode((uint8_t *)*out, digits, n);
    free(digits);
    if (len < 0) {
        free(*out);
        *out = NULL;
        return fail(r, v, "%s is not base64", key);
    }
    (*out)[len] = '\0';
    return 0;
}

/* The cluster c's tls-server-name into kc: a host name (it takes the
 * server's host in the URLs requested). */
static int read_tls_server_name(struct reader *r, const yaml_node_t *c, struct k8s_kubeconfig *kc)
{
    const char *name = get_text(r, c, "tls-server-name");
    if (!name)
        return 0;
    if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
        strlen(name))
        return fail(r, get(r, c, "tls-server-name"), "tls-server-name '%s' is not a host name",
                    name);
    kc->tls_server_name = must_strdup(name);
    return 0;
}

/* The cluster c's proxy-url into kc, as libcurl takes it (proxy_url.h). */
static int read_proxy_url(struct reader *r, const yaml_node_t *c, struct k8s_kubeconfig *kc)
{
    const char *url = get_text(r, c, "proxy-url");
    if (url && !(kc->proxy_url = proxy_url_for_curl(url)))
        return fail(r, get(r, c, "proxy-url"), "proxy-url '%s' is not http://, https:// or "
                    "socks5://", url);
    return 0;
}

/* The cluster named name into kc. */
static int read_cluster(struct reader *r, const char *name, struct k8s_kubeconfig *kc)
{
    yaml_node_t *c = named(r, "clusters", name, "cluster");
    if (!c)
        return -1;
    const char *server = get_text(r, c, "server");
    if (!server)
        return fail(r, c, "cluster '%s' has no server", name);
    kc->server = must_strdup(server);
    for (size_t n = strlen(kc->server); n && kc->server[n - 1] == '/'; n--)
        kc->server[n - 1] = '\0';
    kc->insecure_skip_verify = get_bool(r, c, "insecure-skip-tls-verify");
    kc->disable_compression = get_bool(r, c, "disable-compression");
    if (read_tls_server_name(r, c, kc) < 0 || read_proxy_url(r, c, kc) < 0)
        return -1;
    kc->ca_file = copy_path(r, c, "certificate-authority");
    return copy_decoded(r, c, "certificate-authority-data", &kc->ca_pem);
}

/* What item makes of each item of the sequence under key in m (those it
 * makes nothing of left out), NULL-terminated, with room for one more. */
static char **strings_of(struct reader *r, const yaml_node_t *m, const char *key,
                         char *(*item)(struct reader *r, yaml_node_t *n))
{
    yaml_node_t *seq = get(r, m, key);
    size_t n = seq && seq->type == YAML_SEQUENCE_NODE
                   ? (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start)
                   : 0;
    char **v = calloc(n + 2, sizeof(char *));   /* room for a command before them */
    if (!v)
        abort();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char *s = item(r, node(r, seq->data.sequence.items.start[i]));
        if (s)
            v[k++] = s;
    }
    return v;
}

static char *arg_item(struct reader *r, yaml_node_t *n)
{
    (void)r;
    return is_scalar(n) ? must_asprintf("%s", text_of(n)) : NULL;
}

static char *env_item(struct reader *r, yaml_node_t *n)
{
    const char *name = get_text(r, n, "name");
    yaml_node_t *value = get(r, n, "value");
    return name && is_scalar(value) ? must_asprintf("%s=%s", name, text_of(value)) : NULL;
}

/* The exec plugin of user u (named name) into kc, the cluster read. */
static int read_exec(struct reader *r, const yaml_node_t *u, const char *name,
                     struct k8s_kubeconfig *kc)
{
    yaml_node_t *x = get(r, u, "exec");
    const char *command = get_text(r, x, "command");
    if (!command)
        return fail(r, x, "user '%s' has an exec plugin without a command", name);
    const char *mode = get_text(r, x, "interactiveMode");
    if (mode && !strcmp(mode, "Always"))
        return fail(r, get(r, x, "interactiveMode"), "user '%s' has an exec plugin that must be "
                    "interactive (interactiveMode: Always): profd runs it without a terminal",
                    name);
    const char *version = get_text(r, x, "apiVersion");
    char **args = strings_of(r, x, "args", arg_item), **env = strings_of(r, x, "env", env_item);
    size_t n = 0;
    while (args[n])
        n++;
    memmove(args + 1, args, (n + 1) * sizeof(char *));
    /* a bare name is looked up in PATH, a path is the file's */
    args[0] = strchr(command, '/') ? resolved(r, command) : must_strdup(command);
    kc->exec = k8s_exec_new(args, env, version ? version : "client.authentication.k8s.io/v1",
                            get_bool(r, x, "provideClusterInfo"), kc->server, kc->ca_pem);
    free_string_array(args);
    free_string_array(env);
    return 0;
}

/* A list of header lines being made. */
struct lines {
    char **v;   /* NULL-terminated */
    size_t n, cap;
};

/* Adds the line "<name>: <the text of v>"; -1 with why when v is not a
 * non-empty text that can be a header's value (without a line break). */
static int add_header(struct reader *r, struct lines *l, const char *name, const yaml_node_t *v,
                      const char *field)
{
    if (!is_scalar(v) || !v->data.scalar.length)
        return fail(r, v, "%s: each value must be a non-empty text", field);
    if (strpbrk(text_of(v), "\r\n"))
        return fail(r, v, "%s: a value has a line break", field);
    l->v = grow_array(l->v, &l->cap, l->n + 2, sizeof(char *));
    l->v[l->n++] = must_asprintf("%s: %s", name, text_of(v));
    l->v[l->n] = NULL;
    return 0;
}

/* Adds a line named name for each item of the sequence s (field). */
static int add_headers(struct reader *r, struct lines *l, const char *name, const yaml_node_t *s,
                       const char *field)
{
    if (!s)
        return 0;
    if (s->type != YAML_SEQUENCE_NODE)
        return fail(r, s, "%s is not a list", field);
    for (yaml_node_item_t *i = s->data.sequence.items.start; i < s->data.sequence.items.top; i++)
        if (add_header(r, l, name, node(r, *i), field) < 0)
            return -1;
    return 0;
}

/* key as an Impersonate-Extra- header name ends, as kubectl writes it:
 * every byte that is not a header name's (RFC 7230 tchar), and '%',
 * percent-encoded. malloc'd. */
static char *extra_header_name(const char *key)
{
    static const char tchar[] = "!#$&'*+-.^_`|~0123456789"
                                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char *out = must_malloc(sizeof("Impersonate-Extra-") + 3 * strlen(key)), *o = out;
    o += sprintf(o, "Impersonate-Extra-");
    for (const unsigned char *k = (const unsigned char *)key; *k; k++) {
        if (strchr(tchar, *k))
            *o++ = (char)*k;
        else
            o += sprintf(o, "%%%02X", *k);
    }
    *o = '\0';
    return out;
}

/* The value under key in m unless it is empty or YAML's null (what
 * kubectl takes for a field not given), else NULL. */
static yaml_node_t *given(struct reader *r, const yaml_node_t *m, const char *key)
{
    yaml_node_t *v = get(r, m, key);
    if (!is_scalar(v))
        return v;
    bool plain = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    bool null = plain && (!strcmp(text_of(v), "null") || !strcmp(text_of(v), "~"));
    return !v->data.scalar.length || null ? NULL : v;
}

/* User u's impersonation (as, as-uid, as-groups, as-user-extra) into kc
 * as header lines. */
static int read_impersonation(struct reader *r, const yaml_node_t *u, const char *name,
                              struct k8s_kubeconfig *kc)
{
    struct lines l = {0};
    yaml_node_t *as = given(r, u, "as"), *uid = given(r, u, "as-uid");
    yaml_node_t *groups = given(r, u, "as-groups"), *extra = given(r, u, "as-user-extra");
    int rc = 0;
    if (!as && (uid || groups || extra))
        rc = fail(r, u, "user '%s' impersonates with as-uid, as-groups or as-user-extra but "
                  "no as (the user to be)", name);
    if (!rc && as)
        rc = add_header(r, &l, "Impersonate-User", as, "as");
    if (!rc && uid)
        rc = add_header(r, &l, "Impersonate-Uid", uid, "as-uid");
    if (!rc)
        rc = add_headers(r, &l, "Impersonate-Group", groups, "as-groups");
    if (!rc && extra && extra->type != YAML_MAPPING_NODE)
        rc = fail(r, extra, "as-user-extra is not a mapping of keys to lists");
    for (yaml_node_pair_t *p = extra ? extra->data.mapping.pairs.start : NULL;
         !rc && extra && p < extra->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(r, p->key);
        if (!is_scalar(k) || !k->data.scalar.length) {
            rc = fail(r, k, "as-user-extra: a key is not a text");
            break;
        }
        char *header = extra_header_name(text_of(k));
        rc = add_headers(r, &l, header, node(r, p->value), "as-user-extra");
        free(header);
    }
    kc->impersonation = l.v;   /* freed with kc, also on an error */
    return rc;
}

/* The user named name into kc, the cluster read. */
static int read_user(struct reader *r, const char *name, struct k8s_kubeconfig *kc)
{
    yaml_node_t *u = named(r, "users", name, "user");
    if (!u)
        return -1;
    if (get(r, u, "auth-provider"))
        return fail(r, u, "user '%s' gets its credentials from an auth-provider, which profd "
                    "does not run: give it an exec plugin, a token, tokenFile or client "
                    "certificate instead", name);
    if ((get(r, u, "exec") && read_exec(r, u, name, kc) < 0) ||
        read_impersonation(r, u, name, kc) < 0)
        return -1;
    kc->token = copy_text(r, u, "token");
    kc->token_file = copy_path(r, u, "tokenFile");
    kc->username = copy_text(r, u, "username");
    kc->password = copy_text(r, u, "password");
    kc->cert_file = copy_path(r, u, "client-certificate");
    kc->key_file = copy_path(r, u, "client-key");
    if (copy_decoded(r, u, "client-certificate-data", &kc->cert_pem) < 0 ||
        copy_decoded(r, u, "client-key-data", &kc->key_pem) < 0)
        return -1;
    return 0;
}

/* The document's context (context, else its current-context) into kc. */
static int read_context(struct reader *r, const char *context, struct k8s_kubeconfig *kc)
{
    yaml_node_t *root = yaml_document_get_root_node(&r->doc);
    if (!root || root->type != YAML_MAPPING_NODE)
        return fail(r, root, "not a kubeconfig (a mapping with clusters, contexts and users)");
    const char *name = context && *context ? context : get_text(r, root, "current-context");
    if (!name)
        return fail(r, root, "no current-context, and no context was named");
    yaml_node_t *ctx = named(r, "contexts", name, "context");
    if (!ctx)
        return -1;
    const char *cluster = get_text(r, ctx, "cluster"), *user = get_text(r, ctx, "user");
    if (!cluster)
        return fail(r, ctx, "context '%s' names no cluster", name);
    const char *ns = get_text(r, ctx, "namespace");
    kc->namespace = must_asprintf("%s", ns ? ns : "default");
    if (read_cluster(r, cluster, kc) < 0)
        return -1;
    return user ? read_user(r, user, kc) : 0;   /* no user: no credentials */
}

int k8s_kubeconfig_parse(const char *path, const char *text, size_t len, const char *context,
                         struct k8s_kubeconfig *kc, char *why, size_t whylen)
{
    memset(kc, 0, sizeof(*kc));
    const char *slash = strrchr(path, '/');
    struct reader r = {.path = path, .why = why, .whylen = whylen,
                       .dir = !slash        ? must_asprintf(".")
                              : slash == path ? must_asprintf("/")
                                              : must_asprintf("%.*s", (int)(slash - path), path)};
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = -1;
    if (!yaml_parser_load(&parser, &r.doc)) {
        snprintf(why, whylen, "%s:%zu: %s", path, parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "not YAML");
    } else {
        rc = read_context(&r, context, kc);
        yaml_document_delete(&r.doc);
    }
    yaml_parser_delete(&parser);
    free(r.dir);
    if (rc < 0)
        k8s_kubeconfig_clear(kc);
    return rc;
}

int k8s_kubeconfig_load(const char *path, const char *context, struct k8s_kubeconfig *kc,
                        char *why, size_t whylen)
{
    size_t len;
    char *text = read_small_file(path, MAX_KUBECONFIG, &len);
    if (!text) {
        memset(kc, 0, sizeof(*kc));
        snprintf(why, whylen, "%s cannot be read (or is over 4 MiB)", path);
        return -1;
    }
    int rc = k8s_kubeconfig_parse(path, text, len, context, kc, why, whylen);
    free(text);
    return rc;
}

void k8s_kubeconfig_clear(struct k8s_kubeconfig *kc)
{
    char **fields[] = {&kc->server, &kc->namespace, &kc->ca_file, &kc->ca_pem, &kc->cert_file,
                       &kc->cert_pem, &kc->key_file, &kc->key_pem, &kc->token,
                       &kc->token_file, &kc->username, &kc->password, &kc->tls_server_name,
                       &kc->proxy_url};
    for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
        free(*fields[i]);
    k8s_exec_free(kc->exec);
    free_string_array(kc->impersonation);
    memset(kc, 0, sizeof(*kc));
}
