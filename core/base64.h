// SPDX-License-Identifier: Apache-2.0
/* Base64 (RFC 4648), as proto3's JSON mapping writes and reads bytes. */
#ifndef PROFD_BASE64_H
#define PROFD_BASE64_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The length of the padded base64 of len bytes. */
static inline size_t profd_base64_length(size_t len)
{
    return (len + 2) / 3 * 4;
}

/* Writes the padded base64 (standard alphabet) of data[0..len) into out,
 * profd_base64_length(len) characters with no NUL; returns that length. */
size_t profd_base64_encode(char *out, const uint8_t *data, size_t len);
/* Decodes s[0..n), in the standard or the URL-safe alphabet, padded or not
 * (proto3's JSON accepts each), into out (room for n / 4 * 3 + 2 bytes).
 * Returns the byte count, or -1 when s is not base64. */
ssize_t profd_base64_decode(uint8_t *out, const char *s, size_t n);

#endif
