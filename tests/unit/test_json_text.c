// SPDX-License-Identifier: Apache-2.0
/* JSON text made fit for the YAML reader (config/json_text.c): surrogate
 * pair escapes become YAML's \U escapes, a lone surrogate U+FFFD, what
 * is not in a string or is escaped otherwise stays, and positions past a
 * string are kept; the tree read from it holds the characters. */
#include "check.h"

#include "../../config/diag.h"
#include "../../config/json_text.h"

/* Checks that text made fit reads want (NULL: left as it is). */
static void check_fit(const char *text, const char *want)
{
    char *fit = cfg_json_for_yaml(text);
    if (!want)
        CHECK(fit == NULL);
    else
        CHECK_STR(fit ? fit : "(left as it is)", want);
    free(fit);
}

TEST(surrogate_pairs_become_one_escape_and_positions_past_the_string_stay)
{
    check_fit("[\"\\ud83d\\ude00\", 1]", "[\"\\U0001F600\"  , 1]");
    check_fit("{\"k\\uD834\\uDD1Ev\": \"\\ud83d\\ude00\\ud83d\\ude01\"}",
              "{\"k\\U0001D11Ev\"  : \"\\U0001F600\\U0001F601\"    }");
    check_fit("[\"\\udc00 \\ud83d x\"]", "[\"\\uFFFD \\uFFFD x\"]");   /* alone */
    check_fit("[\"\\\\ud83d\\\\ude00\", \"\\u00e9\"]", NULL);   /* an escaped backslash */
    check_fit("[\"a\\\"\\ud83d\\ude00\"]", "[\"a\\\"\\U0001F600\"  ]");
    check_fit("[\"\\ud83d\\ude0", "[\"\\uFFFD\\ude0");   /* cut short */
    check_fit("plain", NULL);
}

TEST(the_tree_read_holds_the_characters_and_the_text_positions)
{
    struct profd_diag d = {0};
    struct cfg_node *root =
        cfg_load_json_string("t", "[{\"e\": \"\\ud83d\\ude00\", \"f\": x}]", &d);
    CHECK(root && root->kind == CFG_SEQ);
    const struct cfg_node *group = root ? root->items[0] : NULL;
    CHECK_STR(group ? cfg_get(group, "e")->value : "", "\xf0\x9f\x98\x80");
    const struct cfg_node *f = group ? cfg_get(group, "f") : NULL;
    CHECK(f && f->line == 1 && f->col == 29);   /* where x stands in the text */
    cfg_free(root);
    profd_diag_free(&d);
}

RUN_TESTS()
