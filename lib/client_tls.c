// SPDX-License-Identifier: Apache-2.0
#include "client_tls.h"

#include <curl/curl.h>

void client_tls_apply(void *easy, const struct client_tls *t)
{
    CURL *h = easy;
    if (t && t->ca_file && *t->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, t->ca_file);
    if (t && t->cert_file && *t->cert_file)
        curl_easy_setopt(h, CURLOPT_SSLCERT, t->cert_file);
    if (t && t->key_file && *t->key_file)
        curl_easy_setopt(h, CURLOPT_SSLKEY, t->key_file);
    if (t && t->insecure_skip_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}
