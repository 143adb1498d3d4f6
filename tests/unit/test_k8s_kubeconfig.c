// SPDX-License-Identifier: Apache-2.0
/* Kubeconfig files as kubectl writes them: the current context or a named
 * one, certificates inline or as paths relative to the file, tokens, and
 * the ways one can be wrong. */
#include "check.h"

#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/file_io.c"
#include "../../lib/grow.c"
#include "../../lib/k8s_exec.c"
#include "../../lib/k8s_kubeconfig.c"

/* "PEM\n" in base64, split over two lines as some tools write it. */
#define PEM_B64 "UE\n        VNCg=="

static const char KUBECONFIG[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: dev\n"
    "clusters:\n"
    "- name: local\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443/\n"
    "    certificate-authority-data: \"" PEM_B64 "\"\n"
    "- name: far\n"
    "  cluster:\n"
    "    server: https://k8s.example:443\n"
    "    proxy-url: http://proxy:3128\n"
    "    tls-server-name: kubernetes.internal\n"
    "    disable-compression: true\n"
    "    certificate-authority: certs/ca.pem\n"
    "    insecure-skip-tls-verify: True\n"
    "contexts:\n"
    "- name: dev\n"
    "  context: {cluster: local, user: admin, namespace: shop}\n"
    "- name: prod\n"
    "  context: {cluster: far, user: reader}\n"
    "- name: plugin\n"
    "  context: {cluster: far, user: cloud}\n"
    "- name: lost\n"
    "  context: {cluster: nowhere, user: reader}\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    client-certificate-data: " PEM_B64 "\n"
    "    client-key-data: UEVNCg==\n"
    "- name: reader\n"
    "  user: {tokenFile: /run/token, client-certificate: me.crt, client-key: /keys/me.key,"
    " as: admin, as-uid: '42', as-groups: [ops, 'system:masters'],"
    " as-user-extra: {acme.com/project: [shop, web], scopes%: [openid]}}\n"
    "- name: cloud\n"
    "  user:\n"
    "    auth-provider: {name: gcp, config: {cmd-path: gcloud}}\n";

/* Writes text to a kubeconfig in a new directory; its path in path. */
static void write_kubeconfig(char *path, size_t len, const char *text)
{
    char dir[] = "/tmp/profd-kubeconfig-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, len, "%s/config", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Writes text to a kubeconfig in a new directory (its path into path)
 * and reads its current context into *kc, which must work. */
static void write_and_load(char *path, size_t len, const char *text, struct k8s_kubeconfig *kc)
{
    char why[256];
    write_kubeconfig(path, len, text);
    CHECK_INT(k8s_kubeconfig_load(path, NULL, kc, why, sizeof(why)), 0);
}

static void remove_kubeconfig(const char *path)
{
    unlink(path);
    char dir[256];
    snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
    rmdir(dir);
}

TEST(the_current_context_with_certificates_inline)
{
    char path[256];
    struct k8s_kubeconfig kc;
    write_and_load(path, sizeof(path), KUBECONFIG, &kc);
    CHECK_STR(kc.server, "https://127.0.0.1:6443");
    CHECK_STR(kc.namespace, "shop");
    CHECK_STR(kc.ca_pem, "PEM\n");
    CHECK_STR(kc.cert_pem, "PEM\n");
    CHECK_STR(kc.key_pem, "PEM\n");
    CHECK(!kc.ca_file && !kc.cert_file && !kc.key_file && !kc.token && !kc.token_file);
    CHECK(!kc.insecure_skip_verify);
    CHECK(!kc.tls_server_name && !kc.proxy_url && !kc.disable_compression && !kc.impersonation);
    k8s_kubeconfig_clear(&kc);
    CHECK(!kc.server && !kc.ca_pem);
    remove_kubeconfig(path);
}

TEST(a_named_context_with_paths_relative_to_the_file)
{
    char path[256], why[256], want[300];
    write_kubeconfig(path, sizeof(path), KUBECONFIG);
    struct k8s_kubeconfig kc;
    CHECK_INT(k8s_kubeconfig_load(path, "prod", &kc, why, sizeof(why)), 0);
    CHECK_STR(kc.server, "https://k8s.example:443");
    CHECK_STR(kc.namespace, "default");   /* the context names none */
    snprintf(want, sizeof(want), "%.*s/certs/ca.pem", (int)(strrchr(path, '/') - path), path);
    CHECK_STR(kc.ca_file, want);
    snprintf(want, sizeof(want), "%.*s/me.crt", (int)(strrchr(path, '/') - path), path);
    CHECK_STR(kc.cert_file, want);
    CHECK_STR(kc.key_file, "/keys/me.key");   /* absolute: as it is */
    CHECK_STR(kc.token_file, "/run/token");
    CHECK(kc.insecure_skip_verify);
    CHECK_STR(kc.proxy_url, "http://proxy:3128");
    CHECK_STR(kc.tls_server_name, "kubernetes.internal");
    CHECK(kc.disable_compression);
    /* impersonation as kubectl sends it: an extra's key percent-encoded
     * where a header name cannot hold it (and its '%') */
    static const char *const want_headers[] = {
        "Impersonate-User: admin", "Impersonate-Uid: 42", "Impersonate-Group: ops",
        "Impersonate-Group: system:masters", "Impersonate-Extra-acme.com%2Fproject: shop",
        "Impersonate-Extra-acme.com%2Fproject: web", "Impersonate-Extra-scopes%25: openid", NULL};
    for (size_t i = 0; want_headers[i]; i++)
        CHECK_STR(kc.impersonation ? kc.impersonation[i] : NULL, want_headers[i]);
    CHECK(kc.impersonation && !kc.impersonation[7]);
    k8s_kubeconfig_clear(&kc);
    remove_kubeconfig(path);
}

/* The path of the file name beside the kubeconfig at kubeconfig. */
static void beside(const char *kubeconfig, const char *name, char path[300])
{
    snprintf(path, 300, "%.*s/%s", (int)(strrchr(kubeconfig, '/') - kubeconfig), kubeconfig,
             name);
}

/* Writes an executable shell script beside the kubeconfig. */
static void write_plugin(const char *kubeconfig, const char *name, const char *script)
{
    char path[300];
    beside(kubeconfig, name, path);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "#!/bin/sh\n%s", script);
        fclose(f);
    }
    chmod(path, 0755);
}

static void remove_plugin(const char *kubeconfig, const char *name)
{
    char path[300];
    beside(kubeconfig, name, path);
    unlink(path);
}

static const char EXEC_KUBECONFIG[] =
    "current-context: c\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    "clusters: [{name: c, cluster: {server: 'https://k8s.example',"
    " certificate-authority-data: UEVNCg==}}]\n"
    "users:\n- name: u\n  user:\n    exec:\n"
    "      apiVersion: client.authentication.k8s.io/v1beta1\n"
    "      provideClusterInfo: true\n"
    "      command: ./plugin\n"   /* relative to the kubeconfig's directory */
    "      args: [get-token, --cluster, prod]\n"
    "      env: [{name: PLUGIN_GREETING, value: hello}]\n";

TEST(an_exec_plugin_gives_a_token_kept_until_it_expires)
{
    char path[256], why[256];
    struct k8s_kubeconfig kc;
    write_and_load(path, sizeof(path), EXEC_KUBECONFIG, &kc);   /* reading it runs nothing */
    /* the token says what the plugin was given: its args, its env, the
     * API version asked for; the first run's token expires at once */
    write_plugin(path, "plugin",
                 "case \"$KUBERNETES_EXEC_INFO\" in\n"
                 "*'\"interactive\":false'*) ;; *) exit 9;; esac\n"
                 "case \"$KUBERNETES_EXEC_INFO\" in *'\"server\":\"https://k8s.example\"'*) ;;"
                 " *) exit 8;; esac\n"
                 "case \"$KUBERNETES_EXEC_INFO\" in *'\"certificate-authority-data\":\"UEVNCg==\"'*)"
                 " ;; *) exit 7;; esac\n"
                 "v=$(echo \"$KUBERNETES_EXEC_INFO\" | sed 's/.*v1beta1.*/beta/')\n"
                 "n=$(cat \"$0.runs\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$0.runs\"\n"
                 "exp=2000-01-01T00:00:00Z; [ $n -gt 1 ] && exp=2999-01-01T00:00:00.5+02:00\n"
                 "echo \"{\\\"kind\\\": \\\"ExecCredential\\\", \\\"status\\\": {\\\"token\\\": "
                 "\\\"$1$2$3-$PLUGIN_GREETING-$v-$n\\\", "
                 "\\\"expirationTimestamp\\\": \\\"$exp\\\"}}\"\n");
    CHECK(kc.exec != NULL);
    if (!kc.exec) {
        remove_kubeconfig(path);
        return;
    }
    CHECK(!k8s_exec_fresh(kc.exec));
    CHECK_INT(k8s_exec_refresh(kc.exec, 5000000000LL, why, sizeof(why)), 0);
    char *token, *cert, *key;
    k8s_exec_credential(kc.exec, &token, &cert, &key);
    CHECK_STR(token, "get-token--clusterprod-hello-beta-1");
    CHECK(!cert && !key);
    free(token);
    CHECK(!k8s_exec_fresh(kc.exec));   /* expired in 2000 */
    CHECK_INT(k8s_exec_refresh(kc.exec, 5000000000LL, why, sizeof(why)), 0);
    CHECK(k8s_exec_fresh(kc.exec));
    CHECK_INT(k8s_exec_refresh(kc.exec, 5000000000LL, why, sizeof(why)), 0);   /* kept */
    k8s_exec_credential(kc.exec, &token, &cert, &key);
    CHECK_STR(token, "get-token--clusterprod-hello-beta-2");
    free(token);
    k8s_exec_forget(kc.exec);   /* the API refused it */
    CHECK(!k8s_exec_fresh(kc.exec));
    CHECK_INT(k8s_exec_refresh(kc.exec, 5000000000LL, why, sizeof(why)), 0);
    k8s_exec_credential(kc.exec, &token, &cert, &key);
    CHECK_STR(token, "get-token--clusterprod-hello-beta-3");
    free(token);
    k8s_kubeconfig_clear(&kc);
    remove_plugin(path, "plugin.runs");
    remove_plugin(path, "plugin");
    remove_kubeconfig(path);
}

TEST(an_exec_plugin_that_fails_says_why)
{
    char path[256], why[256];
    struct k8s_kubeconfig kc;
    write_and_load(path, sizeof(path), EXEC_KUBECONFIG, &kc);
    static const struct {
        const char *script, *why;
    } cases[] = {
        {"echo 'no such cluster' >&2; exit 3\n", "/plugin failed: no such cluster"},
        {"echo '{\"kind\": \"Status\"}'\n", "printed no ExecCredential with a status"},
        {"echo '{\"kind\": \"ExecCredential\", \"status\": {}}'\n",
         "gave neither a token nor a client certificate and key"},
        {"echo '{\"kind\": \"ExecCredential\", \"status\": {\"token\": \"t\","
         " \"expirationTimestamp\": \"soon\"}}'\n", "an expirationTimestamp that is not one: soon"},
        {"echo 'not json'\n", "printed no JSON"},
        {"exit 0\n", "printed nothing"},
        {"exec sleep 5\n", "/plugin took too long"},
    };
    for (size_t i = 0; kc.exec && i < sizeof(cases) / sizeof(*cases); i++) {
        write_plugin(path, "plugin", cases[i].script);
        CHECK_INT(k8s_exec_refresh(kc.exec, 300000000LL, why, sizeof(why)), -1);
        CHECK_CONTAINS(why, cases[i].why);
        CHECK(!k8s_exec_fresh(kc.exec));
    }
    k8s_kubeconfig_clear(&kc);
    remove_plugin(path, "plugin");
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), 0);
    CHECK_INT(k8s_exec_refresh(kc.exec, 300000000LL, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, "cannot run ");   /* no plugin there at all */
    k8s_kubeconfig_clear(&kc);
    remove_kubeconfig(path);
}

TEST(rfc3339_times)
{
    CHECK(k8s_rfc3339_ns("2026-11-26T19:00:00Z") == 1795719600LL * 1000000000);
    CHECK(k8s_rfc3339_ns("2026-11-26T19:00:00.25Z") == 1795719600LL * 1000000000 + 250000000);
    CHECK(k8s_rfc3339_ns("2026-11-26T21:00:00+02:00") == 1795719600LL * 1000000000);
    CHECK(k8s_rfc3339_ns("2026-11-26T18:30:00-00:30") == 1795719600LL * 1000000000);
    CHECK(k8s_rfc3339_ns("2026-11-26 19:00:00") == -1);
    CHECK(k8s_rfc3339_ns("2026-11-26T19:00:00") == -1);   /* no zone */
    CHECK(k8s_rfc3339_ns("tomorrow") == -1);
    CHECK(k8s_rfc3339_ns("2999-01-01T00:00:00Z") == INT64_MAX);
    CHECK(k8s_rfc3339_ns("1969-12-31T23:59:59Z") == -1);
    CHECK(k8s_rfc3339_ns("0584-11-26T21:00:00.5+02:00") == -1);   /* found by fuzz_k8s */
}

TEST(what_cannot_be_used_is_said_with_its_line)
{
    char path[256], why[256];
    struct k8s_kubeconfig kc;
    write_kubeconfig(path, sizeof(path), KUBECONFIG);
    CHECK_INT(k8s_kubeconfig_load(path, "plugin", &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, ":37: user 'cloud' gets its credentials from an auth-provider");
    CHECK(!kc.server);   /* nothing kept from a context refused */
    CHECK_INT(k8s_kubeconfig_load(path, "lost", &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, "no cluster named 'nowhere' in clusters");
    CHECK_INT(k8s_kubeconfig_load(path, "staging", &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, "no context named 'staging' in contexts");
    remove_kubeconfig(path);

    write_kubeconfig(path, sizeof(path), "clusters: [{name: c, cluster: {server: x}}]\n");
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, "no current-context");
    remove_kubeconfig(path);

    write_kubeconfig(path, sizeof(path),
                     "current-context: c\ncontexts: [{name: c, context: {cluster: c}}]\n"
                     "clusters:\n- name: c\n  cluster: {server: x, certificate-authority-data: "
                     "\"not base64!\"}\n");
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, ":5: certificate-authority-data is not base64");
    remove_kubeconfig(path);

    write_kubeconfig(path, sizeof(path), "current-context: c\ncontexts: [\n  {name: c,\n");
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, path);
    CHECK_CONTAINS(why, ":4: ");   /* where the YAML broke */
    remove_kubeconfig(path);

    write_kubeconfig(path, sizeof(path), "- just a list\n");
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, "not a kubeconfig");
    remove_kubeconfig(path);

    CHECK_INT(k8s_kubeconfig_load("/nonexistent/kubeconfig", NULL, &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, "/nonexistent/kubeconfig cannot be read");
}

/* A kubeconfig of one context whose cluster has cluster_fields and whose
 * user has user_fields (flow mappings' insides). */
static void write_one_context(char *path, size_t len, const char *cluster_fields,
                              const char *user_fields)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "current-context: c\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://k8s.example'%s}\n"
             "users:\n- name: u\n  user: {token: t%s}\n", cluster_fields, user_fields);
    write_kubeconfig(path, len, text);
}

TEST(proxies_names_and_impersonation_are_checked)
{
    char path[256], why[256];
    struct k8s_kubeconfig kc;
    write_one_context(path, sizeof(path), ", proxy-url: 'socks5://127.0.0.1:1080'", "");
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), 0);
    CHECK_STR(kc.proxy_url, "socks5h://127.0.0.1:1080");   /* names resolved by the proxy */
    k8s_kubeconfig_clear(&kc);
    remove_kubeconfig(path);
    static const struct {
        const char *cluster, *user, *why;
    } cases[] = {
        {", proxy-url: 'ftp://proxy'", "", ":5: proxy-url 'ftp://proxy' is not http://"},
        {", tls-server-name: 'k8s/evil'", "", ":5: tls-server-name 'k8s/evil' is not a host"},
        {"", ", as-groups: [ops]", ":8: user 'u' impersonates with as-uid, as-groups or "
         "as-user-extra but no as"},
        {"", ", as: me, as-groups: ops", ":8: as-groups is not a list"},
        {"", ", as: me, as-groups: ['']", ":8: as-groups: each value must be a non-empty text"},
        {"", ", as: \"me\\r\\nX-Evil: 1\"", ":8: as: a value has a line break"},
        {"", ", as: me, as-user-extra: [a]", ":8: as-user-extra is not a mapping"},
        {"", ", as: me, as-user-extra: {k: v}", ":8: as-user-extra is not a list"},
        {"", ", exec: {command: p, interactiveMode: Always}",
         ":8: user 'u' has an exec plugin that must be interactive"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        write_one_context(path, sizeof(path), cases[i].cluster, cases[i].user);
        CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), -1);
        CHECK_CONTAINS(why, cases[i].why);
        CHECK(!kc.server && !kc.impersonation && !kc.proxy_url);   /* nothing kept */
        remove_kubeconfig(path);
    }
    /* fields given empty or null are not given, as kubectl reads them */
    write_one_context(path, sizeof(path), "",
                      ", as: '', as-uid: null, as-groups: ~, as-user-extra: ''");
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), 0);
    CHECK(kc.impersonation == NULL);
    k8s_kubeconfig_clear(&kc);
    remove_kubeconfig(path);
    /* a plugin that may be interactive is run without a terminal */
    write_one_context(path, sizeof(path), "", ", exec: {command: p, interactiveMode: IfAvailable}");
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), 0);
    CHECK(kc.exec != NULL);
    k8s_kubeconfig_clear(&kc);
    remove_kubeconfig(path);
}

TEST(a_context_without_a_user_has_no_credentials)
{
    char path[256], why[256];
    write_kubeconfig(path, sizeof(path),
                     "current-context: c\ncontexts: [{name: c, context: {cluster: c}}]\n"
                     "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:8001'}}]\n");
    struct k8s_kubeconfig kc;
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), 0);
    CHECK_STR(kc.server, "http://127.0.0.1:8001");
    CHECK(!kc.token && !kc.cert_pem && !kc.username);
    k8s_kubeconfig_clear(&kc);
    remove_kubeconfig(path);
}

RUN_TESTS()
