// SPDX-License-Identifier: Apache-2.0
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

bool perf_fail(char *err, size_t errlen, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(err, errlen, "byte %llu: ", (unsigned long long)off);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}
