// SPDX-License-Identifier: Apache-2.0
#include "server_auth.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* s in base64 (standard alphabet, padded) into out, which has room. */
static void base64(const char *s, size_t n, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        out[o++] = abc[v >> 18 & 63];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = i + 1 < n ? abc[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? abc[v & 63] : '=';
    }
    out[o] = '\0';
}

/* Whether an Authorization value is scheme ("Bearer", "Basic") + want. */
static bool credentials_are(const char *auth, const char *scheme, const char *want)
{
    size_t n = strlen(scheme);
    return auth && !strncasecmp(auth, scheme, n) && auth[n] == ' ' && !strcmp(auth + n + 1, want);
}

bool server_authorized(const struct server_auth *a, const struct profd_rpc_request *req)
{
    const char *auth = req->header(req, "authorization");
    if (a->bearer_token && *a->bearer_token && !credentials_are(auth, "Bearer", a->bearer_token))
        return false;
    const char *user = a->basic_auth.username, *pass = a->basic_auth.password;
    if (!user || !*user)
        return true;
    size_t n = strlen(user) + 1 + (pass ? strlen(pass) : 0);
    char *plain = malloc(n + 1), *encoded = malloc(4 * (n / 3 + 1) + 1);
    if (!plain || !encoded)
        abort();
    strcpy(plain, user);
    strcat(plain, ":");
    strcat(plain, pass ? pass : "");
    base64(plain, n, encoded);
    bool ok = credentials_are(auth, "Basic", encoded);
    free(plain);
    free(encoded);
    return ok;
}
