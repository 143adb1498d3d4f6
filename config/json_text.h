// SPDX-License-Identifier: Apache-2.0
/*
 * JSON text made fit for the YAML reader (tree.h), which reads JSON as
 * YAML does but for one thing: a character beyond the BMP escaped as a
 * UTF-16 surrogate pair ("\ud83d\ude00", what Python's json module writes
 * for an emoji unless told otherwise), which YAML has no such escape for.
 */
#ifndef PROFD_JSON_TEXT_H
#define PROFD_JSON_TEXT_H

#include "tree.h"

/* A malloc'd copy of text (NUL-terminated JSON) with each surrogate pair
 * escape in its strings made the one \U escape YAML reads
 * ("\U0001F600"), and a lone surrogate U+FFFD, as Go's encoding/json
 * reads it. The two characters a pair saves go back as spaces after its
 * string, so that positions past the string are the text's. NULL when
 * text has no surrogate escape: it reads as it is. */
char *cfg_json_for_yaml(const char *text);

/* JSON text, or the JSON file at path, read into a tree as cfg_load_string
 * and cfg_load_file read YAML, made fit first (cfg_json_for_yaml). */
struct cfg_node *cfg_load_json_string(const char *name, const char *text, struct profd_diag *d);
struct cfg_node *cfg_load_json_file(const char *path, struct profd_diag *d);

#endif
