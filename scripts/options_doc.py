# SPDX-License-Identifier: Apache-2.0
"""Writes docs/options.md, the reference of every component's options, from
what the modules themselves declare (`profd components --json`), so that
the reference cannot say other than the code.

usage: options_doc.py PROFD [OUT]   (OUT: default docs/options.md; '-' is stdout)

`make docs` runs it; the CLI tests check that the file in the tree is what
it writes.
"""
import json
import os
import subprocess
import sys

KINDS = ("receiver", "processor", "exporter")

HEAD = """# Options

Every option of every component, as the modules declare them (`profd
components` prints the same). What each component does is in
[components.md](components.md). Sizes are bytes (`4096`, `64MiB`, `10MB`),
durations `15s`, `1m30s`, `250ms`.

This file is written by `make docs` (`scripts/options_doc.py`) from the
modules; edit their option tables, not this file.
"""


def cell(text):
    """text made safe for one markdown table cell."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def rows(options, prefix=""):
    """Table rows of options, those of an object under their dotted names."""
    out = []
    for o in options:
        name = prefix + o["name"]
        default = o.get("default")
        kind = o["type"] + (": " + ", ".join(o["choices"]) if o.get("choices") else "")
        out.append("| `%s` | %s | %s | %s |" % (
            name, cell(kind), "`%s`" % cell(default) if default not in (None, "") else "",
            cell(o.get("help", ""))))
        out += rows(o.get("options", []), name + ".")
    return out


def table(options):
    return ["| option | type | default | meaning |", "|---|---|---|---|"] + rows(options)


def shared_by_exporters(modules):
    """The names of the options every exporter declares alike: the
    exporter helper's, documented once."""
    exporters = [m for m in modules if m["kind"] == "exporter"]
    if not exporters:
        return set()
    first = {o["name"]: o for o in exporters[0]["options"]}
    return {name for name, o in first.items()
            if all(o in e["options"] for e in exporters[1:])}


def document(modules):
    """The markdown of the whole reference."""
    modules = sorted(modules, key=lambda m: (KINDS.index(m["kind"]) if m["kind"] in KINDS
                                              else len(KINDS), m["type"]))
    shared = shared_by_exporters(modules)
    lines = [HEAD]
    for m in modules:
        about = m.get("description", "")
        lines += ["## %s `%s`" % (m["kind"], m["type"]), "",
                  about[:1].upper() + about[1:] + ("" if about.endswith(".") else "."), ""]
        own = [o for o in m["options"] if not (m["kind"] == "exporter" and o["name"] in shared)]
        if m["kind"] == "exporter" and shared:
            lines += ["Also every exporter's options ([below](#every-exporter)).", ""]
        lines += table(own) if own else ["No options."]
        lines.append("")
    if shared:
        exporters = [m for m in modules if m["kind"] == "exporter"]
        lines += ["## Every exporter", "",
                  "The exporter helper's options, which every exporter takes: its queue, "
                  "retries and shutdown.", ""]
        lines += table([o for o in exporters[0]["options"] if o["name"] in shared])
        lines.append("")
    return "\n".join(lines)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(next(l for l in __doc__.splitlines() if l.startswith("usage:")))
    r = subprocess.run([sys.argv[1], "components", "--json"], capture_output=True, text=True,
                       check=True)
    text = document(json.loads(r.stdout))
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "options.md")
    if out == "-":
        sys.stdout.write(text)
        return
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
