# SPDX-License-Identifier: Apache-2.0
"""What /proc says of a process the benchmarks measure: its CPU and its
memory."""
import os


def _ticks(path):
    """User + system clock ticks of a /proc .../stat file."""
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _oncpu_ns(pid, tid):
    """Nanoseconds thread tid of pid has run on a CPU (its schedstat)."""
    with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
        return int(f.read().split()[0])


def cpu_seconds(pid):
    """CPU seconds pid has used so far, all its threads: each live thread's
    time on a CPU to the nanosecond (its schedstat), and in clock ticks
    what the process's threads that have ended used. Ticks alone (10 ms)
    are a tenth of what a scrape cycle or a short run costs."""
    live_ticks, live_ns = 0, 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            ticks = _ticks("/proc/%d/task/%s/stat" % (pid, tid))
            ns = _oncpu_ns(pid, tid)
        except (OSError, ValueError, IndexError):
            continue   # the thread ended meanwhile: counted in the process's ticks
        live_ticks += ticks
        live_ns += ns
    ended_ticks = max(0, _ticks("/proc/%d/stat" % pid) - live_ticks)
    return ended_ticks / os.sysconf("SC_CLK_TCK") + live_ns / 1e9


def thread_cpu_seconds(pid, name):
    """CPU seconds the live threads of pid named name (their comm) have
    used so far, to the nanosecond (their schedstat)."""
    ns = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() != name:
                    continue
            ns += _oncpu_ns(pid, tid)
        except (OSError, ValueError, IndexError):
            continue   # the thread ended meanwhile
    return ns / 1e9


def memory_kib(pid, field="VmRSS"):
    """pid's resident memory in KiB: now (VmRSS) or at its peak (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0
