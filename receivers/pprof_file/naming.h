// SPDX-License-Identifier: Apache-2.0
/* Series labels for an ingested file: from its name and from its profile. */
#ifndef PPROF_FILE_NAMING_H
#define PPROF_FILE_NAMING_H

#include <stdbool.h>

#include "profd/model.h"

/*
 * The profile type name (the __name__ label) as Pyroscope and Parca spell it,
 * inferred from the sample and period types: process_cpu, memory, goroutine,
 * threadcreate, mutex or block (from the file name, as Go writes both alike),
 * else the first sample type. Returns a static or profile-owned string copied
 * into buf.
 */
const char *pprof_file_infer_name(const struct profd_profile *p, const char *file_name, char *buf,
                                  size_t buflen);

#endif
