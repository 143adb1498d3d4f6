// SPDX-License-Identifier: Apache-2.0
/* Headers a client adds to its requests (lib/http_headers.c): which names
 * and values are taken, and the lines each value makes, files read at the
 * time. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"

#include "../../config/diag.h"
#include "../../core/graph.h"
#include "../../lib/file_io.c"
#include "../../lib/grow.c"
#include "../../lib/http_headers.c"

static const struct profd_host *host = &profd_host_services;

/* A map of one header, name, with values, secrets and files (NULL-ended
 * lists, or NULL for none), its storage in h. */
static struct profd_map one_header(const char **name, struct http_header *h, char **values,
                                   char **secrets, char **files)
{
    size_t n;
    for (n = 0; values && values[n]; n++) {}
    h->values = (struct profd_str_list){n, values};
    for (n = 0; secrets && secrets[n]; n++) {}
    h->secrets = (struct profd_str_list){n, secrets};
    for (n = 0; files && files[n]; n++) {}
    h->files = (struct profd_str_list){n, files};
    return (struct profd_map){1, (char **)name, h};
}

/* What http_headers_validate says of the header name with value (NULL:
 * nothing, it was taken). */
static char *refusal(const char *name, char *value)
{
    char *values[] = {value, NULL};
    struct http_header h;
    struct profd_map m = one_header(&name, &h, values, NULL, NULL);
    struct profd_diag d = {0};
    int rc = http_headers_validate(host, &d, &m, "job 'j': ");
    CHECK_INT(d.n, rc == PROFD_OK ? 0 : 1);
    char *said = d.n ? strdup(d.msgs[0]) : NULL;
    profd_diag_free(&d);
    return said;
}

static void check_refused(const char *name, char *value, const char *why)
{
    char *said = refusal(name, value);
    CHECK(said && strstr(said, why));
    if (said && !strstr(said, why))
        fprintf(stderr, "  said: %s\n", said);
    free(said);
}

TEST(names_profd_sets_or_no_names_and_broken_lines_are_refused)
{
    CHECK(!refusal("X-Scope-OrgID", "team-a"));
    CHECK(!refusal("x_custom.v1~", ""));
    check_refused("AUTHORIZATION", "x", "'AUTHORIZATION': one profd sets itself");
    check_refused("user-agent", "x", "'user-agent': one profd sets itself");
    check_refused("Transfer-Encoding", "x", "changes the connection");
    check_refused("Bad Name", "x", "'Bad Name': not a header name");
    check_refused("", "x", "not a header name");
    check_refused("X-Colon:", "x", "not a header name");
    check_refused("X-A", "a\r\nX-Evil: b", "'X-A': a value holds a line break");
    check_refused("X-A", "a\nb", "a line break");

    const char *names[] = {"X-A", "x-a"};
    char *v[] = {"1", NULL};
    struct http_header h[2] = {{.values = {1, v}}, {.values = {1, v}}};
    struct profd_map twice = {2, (char **)names, h};
    struct profd_diag d = {0};
    CHECK_INT(http_headers_validate(host, &d, &twice, ""), PROFD_ERR);
    CHECK(d.n == 1 && strstr(d.msgs[0], "'x-a': given twice"));
    profd_diag_free(&d);
}

/* The lines of l, one string, each ended by '|'. */
static char *lines_of(const struct curl_slist *l)
{
    char *out = strdup("");
    for (; l; l = l->next) {
        char *more = must_asprintf("%s%s|", out, l->data);
        free(out);
        out = more;
    }
    return out;
}

TEST(each_value_secret_and_file_makes_a_line_in_that_order)
{
    char path[] = "/tmp/profd-test-header-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_INT(write_all(fd, " \t tok \n\n", 9), 0);
    close(fd);
    const char *name = "X-Token";
    char *values[] = {"a", "", NULL}, *secrets[] = {"s", NULL}, *files[] = {path, NULL};
    struct http_header h;
    struct profd_map m = one_header(&name, &h, values, secrets, files);
    struct curl_slist *list = curl_slist_append(NULL, "Authorization: Bearer x");
    char err[256];
    CHECK(http_headers_append(&m, &list, err, sizeof(err)));
    char *got = lines_of(list);
    CHECK_STR(got, "Authorization: Bearer x|X-Token: a|X-Token;|X-Token: s|X-Token: tok|");
    free(got);
    curl_slist_free_all(list);

    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK_INT(write_all(fd, "one\ntwo\n", 8), 0);
    close(fd);
    list = NULL;
    CHECK(!http_headers_append(&m, &list, err, sizeof(err)));
    CHECK(strstr(err, "'X-Token': ") && strstr(err, "holds more than one line"));
    got = lines_of(list);   /* the lines before the file's */
    CHECK_STR(got, "X-Token: a|X-Token;|X-Token: s|");
    free(got);
    curl_slist_free_all(list);

    unlink(path);
    list = NULL;
    CHECK(!http_headers_append(&m, &list, err, sizeof(err)));
    CHECK(strstr(err, "cannot read ") && strstr(err, path));
    curl_slist_free_all(list);
}

RUN_TESTS()
