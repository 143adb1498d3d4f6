// SPDX-License-Identifier: Apache-2.0
/* Durations and sizes as people write them in configuration. */
#ifndef PROFD_UNITS_H
#define PROFD_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/* Go-style durations: "15s", "1m30s", "250ms", "1h", "0". Nanoseconds out. */
bool profd_parse_duration(const char *s, int64_t *ns);
/* Sizes: "4096", "64MiB", "10MB", "1.5GiB", "512KiB", "2k". Bytes out. */
bool profd_parse_size(const char *s, uint64_t *bytes);
/* Decimal integer with optional sign, the whole string. */
bool profd_parse_int(const char *s, int64_t *v);
/* true/false (also yes/no/on/off, any case). */
bool profd_parse_bool(const char *s, bool *v);

#endif
