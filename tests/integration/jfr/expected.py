# SPDX-License-Identifier: Apache-2.0
"""Writes burn.expected.json and wall.expected.json: what the JDK's own
`jfr print --json` reads in burn.jfr.gz and wall.jfr.gz, counted the way the
pyroscope receiver's profiles count it. Run from this directory with a
JDK's `jfr` on PATH."""
import collections
import gzip
import json
import os
import subprocess
import tempfile

# Events whose samples each carry an amount (bytes, or samples for a
# wall-clock sample): the field holding it.
SIZED = {
    "alloc_in_new_tlab": ("jdk.ObjectAllocationInNewTLAB", "tlabSize"),
    "alloc_outside_tlab": ("jdk.ObjectAllocationOutsideTLAB", "allocationSize"),
    "alloc_sample": ("jdk.ObjectAllocationSample", "weight"),
    "malloc": ("profiler.Malloc", "size"),
    "wall_clock": ("profiler.WallClockSample", "samples"),
}


def events(recording, name):
    """The recording's events of type name that have a stack trace (those
    without one, a compiler thread's, are left out, as Pyroscope does)."""
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events", name,
                          recording],
                         capture_output=True, check=True).stdout
    return [e["values"] for e in json.loads(out)["recording"]["events"]
            if e["values"].get("stackTrace") is not None]


def frame(f):
    """class.method:line, an unknown line (-1) as pprof's unknown, 0."""
    return "%s.%s:%d" % (f["method"]["type"]["name"], f["method"]["name"],
                         max(f["lineNumber"], 0))


def expected(recording, sized):
    """The distinct stacks of jdk.ExecutionSample with their counts, and
    the number of the events of each of sized and the sum of their amounts."""
    stacks = collections.Counter(
        tuple(frame(f) for f in e["stackTrace"]["frames"])
        for e in events(recording, "jdk.ExecutionSample"))
    want = {"cpu_stacks": sorted([[n, list(s)] for s, n in stacks.items()],
                                 key=lambda x: (-x[0], x[1]))}
    for key in sized:
        name, amount = SIZED[key]
        found = events(recording, name)
        want[key] = {"events": len(found), "sum": sum(e[amount] for e in found)}
    return want


def main():
    for name, sized in (("burn", ["alloc_in_new_tlab", "alloc_outside_tlab", "alloc_sample"]),
                        ("wall", ["malloc", "wall_clock"])):
        with tempfile.TemporaryDirectory() as tmp:
            recording = os.path.join(tmp, name + ".jfr")
            with open(recording, "wb") as f:
                f.write(gzip.decompress(open(name + ".jfr.gz", "rb").read()))
            want = expected(recording, sized)
        with open(name + ".expected.json", "w") as f:
            json.dump(want, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
