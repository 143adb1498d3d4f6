// SPDX-License-Identifier: Apache-2.0
/* The profile family (the __name__ label) a profile's types say. */
#ifndef PROFD_LIB_PROFILE_FAMILY_H
#define PROFD_LIB_PROFILE_FAMILY_H

#include <stddef.h>

#include "profd/model.h"

/*
 * The profile family as Pyroscope and Parca name it, from the names of the
 * period and sample types: wall, process_cpu (a type naming cpu), memory
 * (alloc_*, inuse_*, space, objects), goroutine, threadcreate, mutex or
 * block (mutex_* and block_* types, as Pyroscope's SDKs rename them; Go
 * writes both with contentions and delay, so then hint, a file or
 * application name, tells: block when it mentions "block", else mutex),
 * else the first sample type, else "unknown". Returns a static string or
 * the first sample type copied into buf.
 */
const char *profile_family_of_types(const struct profd_type_names *t, const char *hint,
                                    char *buf, size_t buflen);

#endif
