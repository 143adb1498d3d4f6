// SPDX-License-Identifier: Apache-2.0
/*
 * A kubeconfig user's exec credential plugin (client.authentication.k8s.io,
 * as kubectl runs `aws eks get-token` or `gke-gcloud-auth-plugin`): the
 * command run with its args and env, and KUBERNETES_EXEC_INFO saying it is
 * not interactive; the ExecCredential it prints (a token, or a client
 * certificate and key) kept until its expirationTimestamp, or, without
 * one, until the API refuses it (401). Running it blocks: callers on an
 * event loop run it on another thread. Thread-safe.
 */
#ifndef PROFD_LIB_K8S_EXEC_H
#define PROFD_LIB_K8S_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct k8s_exec;

/* What to run: argv (NULL-terminated, argv[0] the command, looked up in
 * PATH), env (NULL-terminated "NAME=value" added to profd's), the
 * ExecCredential apiVersion to ask for, and with cluster_info the
 * cluster's server and CA (PEM, or NULL) passed in KUBERNETES_EXEC_INFO.
 * Everything is copied. */
struct k8s_exec *k8s_exec_new(char *const *argv, char *const *env, const char *api_version,
                              bool cluster_info, const char *server, const char *ca_pem);

/* Frees e and the credential it keeps (accepts NULL). */
void k8s_exec_free(struct k8s_exec *e);

/* Whether a credential is kept that has not expired. */
bool k8s_exec_fresh(struct k8s_exec *e);

/*
 * Runs the plugin unless a fresh credential is kept (another thread may
 * have just run it), for at most timeout_ns; 0, or -1 with why saying
 * what went wrong (it could not start, exited with a status, with the
 * start of what it wrote to stderr, printed no ExecCredential, took too
 * long).
 */
int k8s_exec_refresh(struct k8s_exec *e, int64_t timeout_ns, char *why, size_t whylen);

/* Forgets the credential kept (the API refused it). */
void k8s_exec_forget(struct k8s_exec *e);

/* Copies of the credential kept (malloc'd, NULL each that it has not):
 * the token, the client certificate and key (PEM). */
void k8s_exec_credential(struct k8s_exec *e, char **token, char **cert_pem, char **key_pem);

/* The time (Unix ns) an RFC 3339 timestamp (2026-11-26T19:00:00Z, with
 * fractions of a second or an offset) stands for, INT64_MAX past what
 * that holds; -1 when it is not one, or is before 1970. */
int64_t k8s_rfc3339_ns(const char *s);

#endif
