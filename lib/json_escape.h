// SPDX-License-Identifier: Apache-2.0
#ifndef PROFD_LIB_JSON_ESCAPE_H
#define PROFD_LIB_JSON_ESCAPE_H

/* s as the inside of a JSON string (malloc'd): quotes and backslashes
 * escaped, control characters as \u00XX. */
char *json_escape(const char *s);

#endif
