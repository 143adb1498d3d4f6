# SPDX-License-Identifier: Apache-2.0
"""Writes burn.expected.json: what the JDK's own `jfr print --json` reads in
burn.jfr.gz, counted the way the pyroscope receiver's profiles count it.
Run from this directory with a JDK's `jfr` on PATH."""
import collections
import gzip
import json
import os
import subprocess
import tempfile

# Allocation events: the field holding each one's bytes.
ALLOCATIONS = {
    "alloc_in_new_tlab": ("jdk.ObjectAllocationInNewTLAB", "tlabSize"),
    "alloc_outside_tlab": ("jdk.ObjectAllocationOutsideTLAB", "allocationSize"),
    "alloc_sample": ("jdk.ObjectAllocationSample", "weight"),
}


def events(recording, name):
    """The recording's events of type name that have a stack trace (those
    without one, a compiler thread's, are left out, as Pyroscope does)."""
    out = subprocess.run(["jfr", "print", "--json", "--events", name, recording],
                         capture_output=True, check=True).stdout
    return [e["values"] for e in json.loads(out)["recording"]["events"]
            if e["values"].get("stackTrace") is not None]


def frame(f):
    return "%s.%s:%d" % (f["method"]["type"]["name"], f["method"]["name"], f["lineNumber"])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        recording = os.path.join(tmp, "burn.jfr")
        with open(recording, "wb") as f:
            f.write(gzip.decompress(open("burn.jfr.gz", "rb").read()))
        stacks = collections.Counter(
            tuple(frame(f) for f in e["stackTrace"]["frames"])
            for e in events(recording, "jdk.ExecutionSample"))
        want = {"cpu_stacks": sorted([[n, list(s)] for s, n in stacks.items()],
                                     key=lambda x: (-x[0], x[1]))}
        for key, (name, size) in ALLOCATIONS.items():
            found = events(recording, name)
            want[key] = {"objects": len(found), "bytes": sum(e[size] for e in found)}
    with open("burn.expected.json", "w") as f:
        json.dump(want, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
