# SPDX-License-Identifier: Apache-2.0
"""What /proc says of a process the benchmarks measure: its CPU and its
memory."""
import os


def cpu_seconds(pid):
    """User + system CPU seconds pid has used so far (all its threads)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_kib(pid, field="VmRSS"):
    """pid's resident memory in KiB: now (VmRSS) or at its peak (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0
