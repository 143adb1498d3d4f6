// SPDX-License-Identifier: Apache-2.0
/* Threads named as ps -L and top -H show them. */
#ifndef PROFD_LIB_THREAD_NAME_H
#define PROFD_LIB_THREAD_NAME_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

/* Names thread t with fmt's text, cut to the 15 bytes Linux keeps. */
__attribute__((format(printf, 2, 3))) static inline void thread_name(pthread_t t,
                                                                     const char *fmt, ...)
{
    char name[16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    pthread_setname_np(t, name);
}

#endif
