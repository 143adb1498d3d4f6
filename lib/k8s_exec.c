// SPDX-License-Identifier: Apache-2.0
#include "k8s_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/base64.h"
#include "clock.h"
#include "grow.h"

extern char **environ;

/* The most of its output kept: a credential is a few KB. */
#define MAX_OUTPUT (1u << 20)

struct k8s_exec {
    char **argv, **env;   /* env: profd's environment, the plugin's, KUBERNETES_EXEC_INFO */
    pthread_mutex_t run;  /* one run at a time */
    pthread_mutex_t mu;   /* the credential, held only to read or set it */
    char *token, *cert_pem, *key_pem;
    int64_t expires_ns;   /* Unix ns; 0 never (until forgotten) */
    bool have;
};

static size_t count_strings(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

/* Copies of the strings of v into c, from c[at] on; the next free index. */
static size_t copy_strings(char **c, size_t at, char *const *v)
{
    for (size_t i = 0; v && v[i]; i++)
        c[at++] = must_asprintf("%s", v[i]);
    return at;
}

/* KUBERNETES_EXEC_INFO: the ExecCredential the plugin is asked for. */
static char *exec_info(const char *api_version, bool cluster_info, const char *server,
                       const char *ca_pem)
{
    json_t *spec = json_pack("{s:b}", "interactive", 0);
    if (cluster_info) {   /* bytes are base64 in the API's JSON */
        json_t *cluster = json_pack("{s:s}", "server", server ? server : "");
        if (ca_pem) {
            char *b64 = must_malloc(profd_base64_length(strlen(ca_pem)) + 1);
            b64[profd_base64_encode(b64, (const uint8_t *)ca_pem, strlen(ca_pem))] = '\0';
            json_object_set_new(cluster, "certificate-authority-data", json_string(b64));
            free(b64);
        }
        json_object_set_new(spec, "cluster", cluster);
    }
    json_t *info = json_pack("{s:s, s:s, s:o}", "apiVersion", api_version, "kind",
                             "ExecCredential", "spec", spec);
    char *text = json_dumps(info, JSON_COMPACT);
    json_decref(info);
    char *var = must_asprintf("KUBERNETES_EXEC_INFO=%s", text ? text : "{}");
    free(text);
    return var;
}

struct k8s_exec *k8s_exec_new(char *const *argv, char *const *env, const char *api_version,
                              bool cluster_info, const char *server, const char *ca_pem)
{
    struct k8s_exec *e = calloc(1, sizeof(*e));
    if (!e)
        abort();
    e->argv = calloc(count_strings(argv) + 1, sizeof(char *));
    e->env = calloc(count_strings(environ) + count_strings(env) + 2, sizeof(char *));
    if (!e->argv || !e->env)
        abort();
    copy_strings(e->argv, 0, argv);
    size_t n = copy_strings(e->env, copy_strings(e->env, 0, environ), env);
    e->env[n] = exec_info(api_version, cluster_info, server, ca_pem);
    pthread_mutex_init(&e->run, NULL);
    pthread_mutex_init(&e->mu, NULL);
    return e;
}

/* Forgets the credential (e->mu held). */
static void clear_credential(struct k8s_exec *e)
{
    free(e->token);
    free(e->cert_pem);
    free(e->key_pem);
    e->token = e->cert_pem = e->key_pem = NULL;
    e->have = false;
}

void k8s_exec_free(struct k8s_exec *e)
{
    if (!e)
        return;
    clear_credential(e);
    free_string_array(e->argv);
    free_string_array(e->env);
    pthread_mutex_destroy(&e->run);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

bool k8s_exec_fresh(struct k8s_exec *e)
{
    pthread_mutex_lock(&e->mu);
    bool fresh = e->have && (!e->expires_ns || realtime_ns() < e->expires_ns);
    pthread_mutex_unlock(&e->mu);
    return fresh;
}

int64_t k8s_rfc3339_ns(const char *s)
{
    struct tm tm = {0};
    const char *rest = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!rest)
        return -1;
    int64_t frac = 0, scale = 100000000;
    if (*rest == '.')
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, scale /= 10)
            frac += (*rest - '0') * scale;
    int offset = 0, hh, mm;
    if ((*rest == '+' || *rest == '-') && sscanf(rest + 1, "%2d:%2d", &hh, &mm) == 2 &&
        strlen(rest) == 6)
        offset = (*rest == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
    else if (strcmp(rest, "Z") && strcmp(rest, "z"))
        return -1;
    int64_t seconds = (int64_t)timegm(&tm) - offset;
    if (seconds < 0)
        return -1;   /* before 1970: no credential's, and far enough back it overflows */
    if (seconds >= INT64_MAX / 1000000000 - 1)
        return INT64_MAX;   /* past 2262: as good as never */
    return seconds * 1000000000 + frac;
}

/* Reads what the plugin writes to fd out (stdout) and err (stderr) until
 * both close or deadline_ns (monotonic) passes: false on the deadline. */
static bool read_output(int out, int err, int64_t deadline_ns, char **stdout_text,
                        size_t *stdout_len, char *stderr_text, size_t stderr_size)
{
    size_t cap = 0, err_len = 0;
    int fds[2] = {out, err};
    bool open[2] = {true, true};
    while (open[0] || open[1]) {
        int64_t left = deadline_ns - monotonic_ns();
        if (left <= 0)
            return false;
        struct pollfd p[2] = {{open[0] ? fds[0] : -1, POLLIN, 0}, {open[1] ? fds[1] : -1, POLLIN, 0}};
        if (poll(p, 2, (int)(left / 1000000) + 1) < 0 && errno != EINTR)
            return false;
        char buf[4096];
        for (int i = 0; i < 2; i++) {
            if (!open[i] || !p[i].revents)
                continue;
            ssize_t got = read(fds[i], buf, sizeof(buf));
            if (got <= 0) {
                open[i] = got < 0 && errno == EINTR;
                continue;
            }
            if (i == 0 && *stdout_len + (size_t)got <= MAX_OUTPUT) {
                *stdout_text = grow_array(*stdout_text, &cap, *stdout_len + (size_t)got + 1, 1);
                memcpy(*stdout_text + *stdout_len, buf, (size_t)got);
                *stdout_len += (size_t)got;
                (*stdout_text)[*stdout_len] = '\0';
            } else if (i == 1 && err_len + 1 < stderr_size) {
                size_t take = (size_t)got < stderr_size - err_len - 1 ? (size_t)got
                                                                       : stderr_size - err_len - 1;
                memcpy(stderr_text + err_len, buf, take);
                stderr_text[err_len += take] = '\0';
            }
        }
    }
    return true;
}

/* Runs the plugin; its stdout (malloc'd) into *out, or NULL with why. */
static char *run_plugin(struct k8s_exec *e, int64_t timeout_ns, size_t *len, char *why,
                        size_t whylen)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) < 0) {
        snprintf(why, whylen, "cannot make a pipe: %s", strerror(errno));
        return NULL;
    }
    if (pipe2(err, O_CLOEXEC) < 0) {
        snprintf(why, whylen, "cannot make a pipe: %s", strerror(errno));
        close(out[0]);
        close(out[1]);
        return NULL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, e->argv[0], &fa, NULL, e->argv, e->env);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    char *text = NULL, stderr_text[256] = "";
    *len = 0;
    if (rc != 0) {
        snprintf(why, whylen, "cannot run %s: %s", e->argv[0], strerror(rc));
    } else {
        bool done = read_output(out[0], err[0], monotonic_ns() + timeout_ns, &text, len,
                                stderr_text, sizeof(stderr_text));
        if (!done)
            kill(pid, SIGKILL);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (done && WIFEXITED(status) && WEXITSTATUS(status) == 127 && !*stderr_text) {
            snprintf(why, whylen, "cannot run %s", e->argv[0]);   /* exec failed in the child */
            free(text);
            text = NULL;
        } else if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            snprintf(why, whylen, "%s %s: %.200s", e->argv[0],
                     !done ? "took too long" : "failed", stderr_text);
            free(text);
            text = NULL;
        }
    }
    close(out[0]);
    close(err[0]);
    if (!text && rc == 0 && !*why)
        snprintf(why, whylen, "%s printed nothing", e->argv[0]);
    return text;
}

/* A string member of obj, copied, or NULL. */
static char *copy_member(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && *s ? must_strdup(s) : NULL;
}

/* Keeps the credential of ExecCredential JSON text: 0, or -1 with why. */
static int keep_credential(struct k8s_exec *e, const char *text, size_t len, char *why,
                           size_t whylen)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    json_t *status = json_object_get(root, "status");
    const char *kind = json_string_value(json_object_get(root, "kind"));
    int rc = -1;
    if (!root) {
        snprintf(why, whylen, "%s printed no JSON: %s", e->argv[0], je.text);
    } else if (!kind || strcmp(kind, "ExecCredential") || !json_is_object(status)) {
        snprintf(why, whylen, "%s printed no ExecCredential with a status", e->argv[0]);
    } else {
        char *token = copy_member(status, "token");
        char *cert = copy_member(status, "clientCertificateData");
        char *key = copy_member(status, "clientKeyData");
        const char *expiry = json_string_value(json_object_get(status, "expirationTimestamp"));
        int64_t expires = expiry ? k8s_rfc3339_ns(expiry) : 0;
        if (!token && !(cert && key)) {
            snprintf(why, whylen, "%s gave neither a token nor a client certificate and key",
                     e->argv[0]);
        } else if (expires < 0) {
            snprintf(why, whylen, "%s gave an expirationTimestamp that is not one: %.60s",
                     e->argv[0], expiry);
        } else {
            pthread_mutex_lock(&e->mu);
            clear_credential(e);
            e->token = token;
            e->cert_pem = cert;
            e->key_pem = key;
            e->expires_ns = expires;
            e->have = true;
            pthread_mutex_unlock(&e->mu);
            token = cert = key = NULL;
            rc = 0;
        }
        free(token);
        free(cert);
        free(key);
    }
    json_decref(root);
    return rc;
}

int k8s_exec_refresh(struct k8s_exec *e, int64_t timeout_ns, char *why, size_t whylen)
{
    pthread_mutex_lock(&e->run);   /* the credential stays readable meanwhile */
    int rc = 0;
    if (!k8s_exec_fresh(e)) {
        size_t len;
        *why = '\0';
        char *text = run_plugin(e, timeout_ns, &len, why, whylen);
        rc = text ? keep_credential(e, text, len, why, whylen) : -1;
        free(text);
    }
    pthread_mutex_unlock(&e->run);
    return rc;
}

void k8s_exec_forget(struct k8s_exec *e)
{
    pthread_mutex_lock(&e->mu);
    clear_credential(e);
    pthread_mutex_unlock(&e->mu);
}

void k8s_exec_credential(struct k8s_exec *e, char **token, char **cert_pem, char **key_pem)
{
    pthread_mutex_lock(&e->mu);
    *token = must_strdup_or_null(e->token);
    *cert_pem = must_strdup_or_null(e->cert_pem);
    *key_pem = must_strdup_or_null(e->key_pem);
    pthread_mutex_unlock(&e->mu);
}
