// SPDX-License-Identifier: Apache-2.0
#include "validate.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../lib/option_set.h"
#include "config.h"
#include "presets.h"

/* The roles a selector may have in a kubernetes_sd_config of role: those
 * of the objects it lists; NULL when role is none of profd's. */
static const char *selector_roles(const char *role)
{
    return !strcmp(role, "pod")             ? "pod, node"
           : !strcmp(role, "node")          ? "node"
           : !strcmp(role, "endpointslice") ? "endpointslice, service, pod, node"
           : !strcmp(role, "endpoints")     ? "endpoints, service, pod, node"
           : !strcmp(role, "service")       ? "service"
           : !strcmp(role, "ingress")       ? "ingress"
                                            : NULL;
}

/* Whether word is one of the words of list (separated by ", "). */
static bool among(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; n && (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* kubernetes_sd_configs: the roles pod, node, endpointslice, endpoints,
 * service and ingress. */
/* http_sd_configs: an http or https URL, a refresh interval, the
 * client's credentials and TLS. */
static int validate_http_sd(const struct profd_host *host, struct profd_diag *d,
                            const struct job *j)
{
    const struct http_sd_config *hc = j->http_sd_configs.items;
    int rc = PROFD_OK;
    char what[160];
    snprintf(what, sizeof(what), "job '%s': http_sd_configs: ", j->job_name);
    for (size_t k = 0; k < j->http_sd_configs.n; k++) {
        if (!hc[k].url || (strncmp(hc[k].url, "http://", 7) && strncmp(hc[k].url, "https://", 8))) {
            host->diag(d, &hc[k].url, "%surl '%s' is not http:// or https://", what,
                       hc[k].url ? hc[k].url : "");
            rc = PROFD_ERR;
        }
        if (hc[k].refresh_interval < 1000000) {
            host->diag(d, &hc[k].refresh_interval, "%srefresh_interval must be at least 1ms",
                       what);
            rc = PROFD_ERR;
        }
        if (client_auth_validate(host, d, &hc[k].auth, what) != PROFD_OK ||
            http_headers_validate(host, d, &hc[k].http_headers, what) != PROFD_OK ||
            client_tls_validate(host, d, &hc[k].tls_config, what) != PROFD_OK)
            rc = PROFD_ERR;
    }
    return rc;
}

static int validate_k8s(const struct profd_host *host, struct profd_diag *d, const struct job *j)
{
    const struct kubernetes_sd_config *kc = j->kubernetes_sd_configs.items;
    int rc = PROFD_OK;
    for (size_t k = 0; k < j->kubernetes_sd_configs.n; k++) {
        const char *roles = selector_roles(kc[k].role);
        if (!roles) {
            host->diag(d, &kc[k].role, "job '%s': kubernetes_sd_configs role '%s' is not "
                       "supported (pod, node, endpointslice, endpoints, service, ingress)",
                       j->job_name, kc[k].role);
            rc = PROFD_ERR;
            roles = "";
        }
        const struct k8s_selector *sel = kc[k].selectors.items;
        for (size_t i = 0; i < kc[k].selectors.n; i++) {
            bool once = true;   /* the first of its role */
            for (size_t e = 0; e < i; e++)
                once = once && strcmp(sel[e].role, sel[i].role) != 0;
            if (*roles && !among(roles, sel[i].role)) {
                host->diag(d, &sel[i].role, "job '%s': a selector of role '%s' in a "
                           "kubernetes_sd_config of role '%s' (%s)", j->job_name,
                           sel[i].role, kc[k].role, roles);
                rc = PROFD_ERR;
            } else if (!once) {
                host->diag(d, &sel[i].role, "job '%s': more than one selector of role '%s'",
                           j->job_name, sel[i].role);
                rc = PROFD_ERR;
            }
        }
        const struct client_tls *tls = &kc[k].tls_config;
        const struct client_auth *auth = &kc[k].auth;
        if (option_set(kc[k].kubeconfig_file) &&
            (option_set(kc[k].api_server) || client_auth_credentials_set(auth) ||
             option_set(auth->proxy.proxy_url) || kc[k].http_headers.n || tls->ca_file ||
             tls->cert_file || tls->key_file || tls->insecure_skip_verify || tls->server_name)) {
            host->diag(d, &kc[k].kubeconfig_file, "job '%s': kubeconfig_file gives the server, "
                       "the credentials and the proxy: api_server, credentials, proxy_url, "
                       "http_headers and tls_config cannot be set with it", j->job_name);
            rc = PROFD_ERR;
        }
        char what[160];
        snprintf(what, sizeof(what), "job '%s': kubernetes_sd_configs: ", j->job_name);
        if (client_auth_validate(host, d, auth, what) != PROFD_OK ||
            http_headers_validate(host, d, &kc[k].http_headers, what) != PROFD_OK)
            rc = PROFD_ERR;
        if (kc[k].retry_interval <= 0 || kc[k].timeout <= 0) {
            host->diag(d, &kc[k].retry_interval, "job '%s': kubernetes_sd_configs "
                       "retry_interval and timeout must be more than 0", j->job_name);
            rc = PROFD_ERR;
        }
    }
    return rc;
}

int scrape_config_validate(const struct profd_host *host, struct profd_diag *d, const void *cfgp)
{
    const struct config *cfg = cfgp;
    const struct job *jobs = cfg->scrape_configs.items;
    int rc = PROFD_OK;
    for (size_t i = 0; i < cfg->scrape_configs.n; i++) {
        const struct job *j = &jobs[i];
        char err[256];
        size_t n;
        struct profile_def *defs = presets_resolve(j, &n, err, sizeof(err));
        if (!defs) {
            host->diag(d, &j->profiling_config, "job '%s': %s", j->job_name, err);
            rc = PROFD_ERR;
        }
        presets_free(defs, defs ? n : 0);
        if (j->scrape_interval < 1000000000LL) {
            host->diag(d, &j->scrape_interval, "job '%s': scrape_interval must be at least 1s",
                       j->job_name);
            rc = PROFD_ERR;
        }
        if (strcmp(j->scheme, "http") && strcmp(j->scheme, "https")) {
            host->diag(d, &j->scheme, "job '%s': scheme must be http or https", j->job_name);
            rc = PROFD_ERR;
        }
        if (j->shard.total < 0 || (j->shard.total && (j->shard.index < 0 ||
                                                      j->shard.index >= j->shard.total))) {
            host->diag(d, &j->shard, "job '%s': shard.index must be in [0, total)", j->job_name);
            rc = PROFD_ERR;
        }
        char what[160];
        snprintf(what, sizeof(what), "job '%s': ", j->job_name);
        if (validate_k8s(host, d, j) != PROFD_OK || validate_http_sd(host, d, j) != PROFD_OK ||
            client_auth_validate(host, d, &j->auth, what) != PROFD_OK)
            rc = PROFD_ERR;
        if (http_headers_validate(host, d, &j->http_headers, what) != PROFD_OK)
            rc = PROFD_ERR;
        if (client_tls_validate(host, d, &j->tls_config, what) != PROFD_OK)
            rc = PROFD_ERR;
        for (size_t k = 0; k < j->kubernetes_sd_configs.n; k++) {
            const struct kubernetes_sd_config *kc = j->kubernetes_sd_configs.items;
            if (client_tls_validate(host, d, &kc[k].tls_config, what) != PROFD_OK)
                rc = PROFD_ERR;
        }
        for (size_t k = 0; k < i; k++)
            if (!strcmp(jobs[k].job_name, j->job_name)) {
                host->diag(d, &j->job_name, "job_name '%s' is used twice", j->job_name);
                rc = PROFD_ERR;
            }
    }
    return rc;
}
