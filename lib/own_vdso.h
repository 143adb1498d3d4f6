// SPDX-License-Identifier: Apache-2.0
/*
 * This process's vDSO (the kernel's code mapped into every process, where
 * clock_gettime and friends run) as a file that ELF readers can open: all
 * processes on one kernel map the same image, so a profile's [vdso] frames
 * from this host are named from it (its build-id tells it is the one).
 */
#ifndef PROFD_OWN_VDSO_H
#define PROFD_OWN_VDSO_H

/* The path of a memfd holding a copy of this process's vDSO
 * ("/proc/self/fd/N"), made at the first call and kept open until the
 * module holding this file is unloaded; NULL when there is no vDSO or no
 * memfd. Thread-safe. */
const char *own_vdso_path(void);

#endif
