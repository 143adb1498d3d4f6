// SPDX-License-Identifier: Apache-2.0
/* MD5 (RFC 1321): relabel's hashmod is defined by it (as Prometheus does). */
#ifndef PROFD_MD5_H
#define PROFD_MD5_H

#include <stddef.h>
#include <stdint.h>

/* The MD5 digest of data[0..len). */
void profd_md5(const void *data, size_t len, uint8_t digest[16]);

#endif
