// SPDX-License-Identifier: Apache-2.0
/* Kubeconfig files as kubectl writes them: the current context or a named
 * one, certificates inline or as paths relative to the file, tokens, and
 * the ways one can be wrong. */
#include "check.h"

#include <unistd.h>

#include "../../lib/file_io.c"
#include "../../lib/grow.c"
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
    "    certificate-authority: certs/ca.pem\n"
    "    insecure-skip-tls-verify: true\n"
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
    "  user: {tokenFile: /run/token, client-certificate: me.crt, client-key: /keys/me.key}\n"
    "- name: cloud\n"
    "  user:\n"
    "    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: gke-auth}\n";

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

static void remove_kubeconfig(const char *path)
{
    unlink(path);
    char dir[256];
    snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
    rmdir(dir);
}

TEST(the_current_context_with_certificates_inline)
{
    char path[256], why[256];
    write_kubeconfig(path, sizeof(path), KUBECONFIG);
    struct k8s_kubeconfig kc;
    CHECK_INT(k8s_kubeconfig_load(path, NULL, &kc, why, sizeof(why)), 0);
    CHECK_STR(kc.server, "https://127.0.0.1:6443");
    CHECK_STR(kc.namespace, "shop");
    CHECK_STR(kc.ca_pem, "PEM\n");
    CHECK_STR(kc.cert_pem, "PEM\n");
    CHECK_STR(kc.key_pem, "PEM\n");
    CHECK(!kc.ca_file && !kc.cert_file && !kc.key_file && !kc.token && !kc.token_file);
    CHECK(!kc.insecure_skip_verify);
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
    k8s_kubeconfig_clear(&kc);
    remove_kubeconfig(path);
}

TEST(what_cannot_be_used_is_said_with_its_line)
{
    char path[256], why[256];
    struct k8s_kubeconfig kc;
    write_kubeconfig(path, sizeof(path), KUBECONFIG);
    CHECK_INT(k8s_kubeconfig_load(path, "plugin", &kc, why, sizeof(why)), -1);
    CHECK_CONTAINS(why, ":34: user 'cloud' gets its credentials from an exec plugin");
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
