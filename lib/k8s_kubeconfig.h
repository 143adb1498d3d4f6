// SPDX-License-Identifier: Apache-2.0
/*
 * A kubeconfig file (kubectl's ~/.kube/config) read as clients outside a
 * cluster read it: its current context (or the one named), that context's
 * cluster (server, certificate-authority[-data], insecure-skip-tls-verify,
 * tls-server-name, proxy-url, disable-compression) and user (token,
 * tokenFile, client-certificate[-data], client-key[-data], username and
 * password, or an exec credential plugin: k8s_exec.h; impersonation's as,
 * as-uid, as-groups, as-user-extra), and the context's namespace. Paths in
 * the file (a plugin's command too, when it has a '/') are relative to the
 * file's directory, as kubectl takes them. A user of an auth-provider (the
 * plugins' forerunner) is refused, and so is a plugin that must be
 * interactive (profd runs plugins without a terminal).
 */
#ifndef PROFD_LIB_K8S_KUBECONFIG_H
#define PROFD_LIB_K8S_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "k8s_exec.h"

/* What a context says; every string malloc'd or NULL (not given). The
 * *_pem fields are the decoded *-data fields. */
struct k8s_kubeconfig {
    char *server;      /* without a trailing '/' */
    char *namespace;   /* the context's; "default" when it names none */
    char *ca_file, *ca_pem;
    char *cert_file, *cert_pem;
    char *key_file, *key_pem;
    char *token, *token_file;   /* token_file read again before each request */
    char *username, *password;
    bool insecure_skip_verify;
    /* the name the server's certificate is checked against and TLS's SNI
     * says, instead of the server's host */
    char *tls_server_name;
    /* the proxy (http, https, or socks5 as socks5h: names resolved by the
     * proxy, as kubectl has it), instead of the environment's */
    char *proxy_url;
    bool disable_compression;   /* responses asked for uncompressed */
    struct k8s_exec *exec;      /* the user's exec plugin, or NULL */
    /* impersonation, as the header lines it makes (Impersonate-User,
     * -Uid, -Group, -Extra-<key>), NULL-terminated; NULL when none */
    char **impersonation;
};

/*
 * Reads the kubeconfig at path into *kc, for context (NULL or "": the
 * file's current-context). 0, or -1 with why saying what is wrong and
 * where (a YAML error's line, the context, cluster or user missing, a
 * field not base64, an exec plugin without a command or that must be
 * interactive, an auth-provider, impersonation without as, a proxy-url
 * of another scheme, a header value with a line break); *kc is then
 * empty.
 */
int k8s_kubeconfig_load(const char *path, const char *context, struct k8s_kubeconfig *kc,
                        char *why, size_t whylen);

/* k8s_kubeconfig_load of the text[0..len) of the file at path (which
 * names it in why and is where relative paths start). */
int k8s_kubeconfig_parse(const char *path, const char *text, size_t len, const char *context,
                         struct k8s_kubeconfig *kc, char *why, size_t whylen);

/* Frees what *kc holds and empties it. */
void k8s_kubeconfig_clear(struct k8s_kubeconfig *kc);

#endif
