// SPDX-License-Identifier: Apache-2.0
/* Whether an optional string option was given a value. */
#ifndef PROFD_LIB_OPTION_SET_H
#define PROFD_LIB_OPTION_SET_H

#include <stdbool.h>

/* Whether an optional string option is set to something: neither unset
 * (NULL) nor "". */
static inline bool option_set(const char *s)
{
    return s && *s;
}

#endif
