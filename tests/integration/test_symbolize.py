# SPDX-License-Identifier: Apache-2.0
"""symbolize processor: function names, files, lines and inline chains equal
what `addr2line -f -i -C` says for the same addresses."""
import glob
import gzip
import itertools
import os
import random
import re
import shutil
import subprocess
import threading
import time
import urllib.request

from harness import (PROFD, ROOT, ProfdTestCase, metric_value, raw_pprof, run, run_command,
                     serve_on_free_port, wait_until)

SOURCE = os.path.join(ROOT, "tests", "integration", "symbolize", "inl.c")
CPLUSPLUS = os.path.join(ROOT, "tests", "integration", "symbolize", "walk.cc")
RUST = os.path.join(ROOT, "tests", "integration", "symbolize", "walk.rs")
BASE = 0x7f0000000000   # where the test "process" loaded its binary


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, value):
    """An int (varint) or bytes (length-delimited) field."""
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    return varint(num << 3 | 2) + varint(len(value)) + value


def pprof(mapping, addresses):
    """A raw pprof profile: one sample per address, all in one mapping
    (start, limit, offset, filename, build_id)."""
    return pprof_mappings([(mapping, addresses)])


def pprof_mappings(parts):
    """The same over several [(mapping, addresses)], locations in turn from
    each mapping."""
    strings = ["", "samples", "count"]
    out = bytearray(field(1, field(1, 1) + field(2, 2)))   # grown in place
    locations = []   # (mapping id, address)
    for m, (mapping, addresses) in enumerate(parts, 1):
        out += field(3, field(1, m) + field(2, mapping[0]) + field(3, mapping[1]) +
                     field(4, mapping[2]) + field(5, len(strings)) + field(6, len(strings) + 1))
        strings += [mapping[3], mapping[4]]
        locations.append([(m, a) for a in addresses])
    interleaved = [loc for turn in itertools.zip_longest(*locations) for loc in turn if loc]
    for i, (m, a) in enumerate(interleaved, 1):
        out += field(2, field(1, i) + field(2, 1))
        out += field(4, field(1, i) + field(2, m) + field(3, a))
    for s in strings:
        out += field(6, s.encode())
    return bytes(out)


def build_id(path):
    notes = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", notes)
    return m.group(1) if m else ""


def compressed_sections(path):
    """Names of the sections of ELF file path stored compressed."""
    out = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True,
                         check=True).stdout
    header = r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+"
    return [m.group(1) for m in re.finditer(header + r"\s+([A-Za-z]*)\s+\d+", out, re.M)
            if "C" in m.group(2)]


def text_segment(path):
    """(p_offset, p_vaddr, p_filesz) of the executable PT_LOAD."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    for m in re.finditer(r"LOAD\s+(0x\w+) (0x\w+) \S+ (0x\w+) \S+ (.*?)\s+0x", out):
        if "E" in m.group(4):
            return int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)
    raise AssertionError("no executable segment in " + path)


def function_addresses(path, names):
    """Every instruction address of the named functions (ELF addresses)."""
    out = subprocess.run(["objdump", "-d", path], capture_output=True, text=True).stdout
    addrs = []
    for name in names:
        body = re.search(r"^[0-9a-f]+ <%s>:\n(.*?)\n\n" % re.escape(name), out, re.M | re.S)
        addrs += [int(a, 16) for a in re.findall(r"^\s+([0-9a-f]+):", body.group(1), re.M)]
    return addrs


def mapping_of(binary, recorded_path):
    """The mapping (as pprof takes it) of binary's text loaded where the
    test "process" loads it, and the base its addresses are moved by."""
    off, vaddr, size = text_segment(binary)
    base = BASE if vaddr < 0x400000 else 0
    return (base + vaddr, base + vaddr + size, off, recorded_path, build_id(binary)), base


def addr2line(path, addrs):
    """{address: [(function, file, line)] innermost first}."""
    out = subprocess.run(["addr2line", "-a", "-f", "-i", "-C", "-e", path] +
                         ["%#x" % a for a in addrs], capture_output=True, text=True,
                         timeout=120).stdout
    return parse_addr2line(out)


def demangle(names):
    """names demangled by c++filt (GNU's demangler, which profd uses too)
    as addr2line -C demangles them: without what c++filt calls
    implementation details (Rust's crate disambiguators, std::string
    spelled out)."""
    return subprocess.run(["c++filt", "--no-verbose"], input="\n".join(names),
                          capture_output=True, text=True, check=True).stdout.splitlines()


def llvm_symbolizer(path, addrs):
    """{address: [(function, file, line)] innermost first}, as
    llvm-symbolizer reads path's DWARF, its names demangled by c++filt
    (LLVM's demangler writes some, such as lambdas', its own way) and
    without the suffix an optimizer's clone of a function has in the
    symbol table (" [clone .isra.0]"), which addr2line and profd leave out."""
    out = subprocess.run(["llvm-symbolizer", "--no-demangle", "--obj=" + path, "-i", "-f"],
                         input="".join("%#x\n" % a for a in addrs), capture_output=True,
                         text=True, check=True, timeout=120).stdout
    blocks = [block.strip("\n").splitlines() for block in out.split("\n\n")][:len(addrs)]
    names = iter(demangle([fn for lines in blocks for fn in lines[0::2]]))
    res = {}
    for a, lines in zip(addrs, blocks):
        res[a] = [(re.sub(r" \[clone \.\w+\.\d+\]$", "", next(names)),
                   "" if file == "??" else file, int(line))
                  for file, line, _ in (w.rsplit(":", 2) for w in lines[1::2])]
    return res


def addr2line_of_rust(path, addrs):
    """addr2line's answers, where it names no line (the padding after a
    function) without the file it names then: the unit's name, which
    rustc makes up (`walk.f7f4dec7-cgu.2`) and no line table has."""
    res = addr2line(path, addrs)
    for a, frames in res.items():
        res[a] = [(fn, "" if not line and re.search(r"-cgu\.\d+$", file) else file, line)
                  for fn, file, line in frames]
    return res


def rustc_command():
    """Debian's rustc when installed, else one on PATH, else None."""
    return "/usr/bin/rustc" if os.access("/usr/bin/rustc", os.X_OK) else shutil.which("rustc")


def parse_addr2line(out):
    """The same from the output of `addr2line -a -f -i`."""
    res = {}
    for group in re.split(r"^(?=0x[0-9a-f]+$)", out, flags=re.M):
        lines = group.splitlines()
        if not lines:
            continue
        frames = []
        for fn, loc in zip(lines[1::2], lines[2::2]):
            loc = re.sub(r" \(discriminator \d+\)$", "", loc)
            file, _, line = loc.rpartition(":")
            frames.append((fn, "" if file == "??" else file, int(line) if line.isdigit() else 0))
        res[int(lines[0], 16)] = frames
    return res


def symbolized_locations(path):
    """[(address, [(function, file, line)] innermost first)], one per
    location, from profd's output, read by `go tool pprof -raw`."""
    raw = raw_pprof(path)
    locs = raw.split("Locations\n")[1].split("Mappings\n")[0]
    res = []
    for line in locs.splitlines():
        m = re.match(r"^ *\d+: (0x[0-9a-f]+) M=\d+ ?(.*)$", line)
        if m:
            res.append((int(m.group(1), 16), []))
            rest = m.group(2)
        else:
            rest = line.strip()
        f = re.match(r"^(.*) (\S*):(\d+) s=\d+(?:\(\S*\))?$", rest)   # (the mangled name)
        if f and res:
            res[-1][1].append((f.group(1), f.group(2), int(f.group(3))))
    return res


def symbolized(path):
    """{address: [(function, file, line)] innermost first} from profd's
    output."""
    return dict(symbolized_locations(path))


CONFIG = """
receivers:
  pprof_file:
    include: [in/*.pb.gz]
    oneshot: true
    after_ingest: keep
    poll_interval: 0s
    source_label: __file__
    filename_pattern: '(?<pid>\\d+)-.*'
processors:
  symbolize:
    debug_directories: [%s]%s
exporters:
  pprof_file: {directory: out, path_template: "{__file__}"}
service:
  telemetry: {metrics: {address: ""}, logs: {level: debug}}
  pipelines:
    profiles: {receivers: [pprof_file], processors: [symbolize], exporters: [pprof_file]}
"""


# Spooled profiles symbolized from debuginfod alone (its URL and the
# cache directory to fill in), written under the spooled file's name: what
# spooled_symbolizer expects.
DEBUGINFOD_ONLY = """
receivers:
  pprof_file: {include: [spool/*.pb.gz], source_label: __file__}
processors:
  symbolize:
    debug_directories: []
    debuginfod_urls: [%s]
    debuginfod_wait: 4s
    debuginfod_cache: %s
exporters:
  pprof_file: {directory: out, path_template: "{__file__}"}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles: {receivers: [pprof_file], processors: [symbolize], exporters: [pprof_file]}
"""


class SymbolizeTest(ProfdTestCase):

    def compile(self, name, *flags):
        path = self.path(name)
        subprocess.run(["gcc", "-O2", "-g"] + list(flags) + [SOURCE, "-o", path], check=True,
                       timeout=120)
        return path

    def run_profd(self, profiles, debug_dirs=(), extra="", where="", env=None):
        """Writes {name: raw pprof} to where/in/, runs profd over them in
        where (with env, when given), returns {name: the path of its
        output}."""
        os.makedirs(self.path(where, "in"))
        for name, data in profiles.items():
            with open(self.path(where, "in", name + ".pb.gz"), "wb") as f:
                f.write(gzip.compress(data))
        with open(self.path(where, "profd.yaml"), "w") as f:
            f.write(CONFIG % (", ".join(debug_dirs), extra))
        r = run_command([PROFD, "--config", "profd.yaml"], cwd=self.path(where),
                        capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.log = r.stderr
        return {name: glob.glob(self.path(where, "out", "**", name + "*"), recursive=True)[0]
                for name in profiles}

    def run_symbolize(self, profiles, debug_dirs=(), extra="", where=""):
        """The same, returning {name: symbolized(output)}."""
        return {name: symbolized(path)
                for name, path in self.run_profd(profiles, debug_dirs, extra, where).items()}

    def check_against_addr2line(self, binary, recorded_path=None, debug_dirs=(), oracle=None,
                                pid=0, extra="", reader=addr2line,
                                functions=("walk", "outer", "main")):
        """Every instruction of functions (their symbols), as a process
        (pid, when not 0) would have it loaded at BASE, symbolized by profd
        and by addr2line (or reader, which reads the DWARF of oracle, else
        of binary, the same way)."""
        addrs = function_addresses(binary, functions)
        off, vaddr, size = text_segment(binary)
        pie = vaddr < 0x400000
        base = BASE if pie else 0
        start = base + vaddr
        mapping = (start, start + size, off, recorded_path or binary, build_id(binary))
        name = "%d-p" % pid if pid else "p"
        got = self.run_symbolize({name: pprof(mapping, [base + a for a in addrs])}, debug_dirs,
                                 extra)[name]
        want = reader(oracle or binary, addrs)
        self.assertEqual(len(want), len(addrs))
        self.assertTrue(any(len(f) > 2 for f in want.values()), "no inline chains to compare")
        # The padding after a function, in no DWARF function (??), is named
        # from the symbol before it.
        demangled = dict(zip(functions, demangle(functions)))
        symbol = {a: demangled[fn] for fn in functions for a in function_addresses(binary, [fn])}
        for a in addrs:
            if want[a] == [("??",) + want[a][0][1:]]:
                want[a] = [(symbol[a],) + want[a][0][1:]]
            self.assertEqual(got.get(base + a), want[a], "address %#x" % a)

    def test_pie_with_inlining_matches_addr2line(self):
        self.check_against_addr2line(self.compile("inl", "-fPIE", "-pie"))

    def test_non_pie_matches_addr2line(self):
        self.check_against_addr2line(self.compile("inl", "-no-pie"))

    def cplusplus_build(self, compiler, *flags, name="walk"):
        """walk.cc built by compiler (with flags, in the test's directory)
        as name, and the symbols of its functions."""
        if not shutil.which(compiler):
            self.skipTest(compiler + " is not installed")
        binary = self.path(name)
        subprocess.run([compiler, "-O2", "-g"] + list(flags) + [CPLUSPLUS, "-o", binary],
                       check=True, timeout=120, cwd=self.dir)
        dump = subprocess.run(["objdump", "-d", binary], capture_output=True, text=True,
                              check=True).stdout
        functions = re.findall(r"^[0-9a-f]+ <(main|_Z[^>]*shop[^>]*)>:$", dump, re.M)
        self.assertGreaterEqual(len(functions), 5)   # main, two walks, two outers
        return binary, functions

    def test_cplusplus_matches_llvm_symbolizer(self):
        """g++'s DWARF for a namespace, a class template's members (declared
        in the class, defined outside it, cloned by the optimizer), a
        lambda and overloads: names demangled with their parameters, as
        llvm-symbolizer gives them (addr2line names glibc's inlined atoi
        main at some of its addresses)."""
        if not shutil.which("llvm-symbolizer"):
            self.skipTest("llvm-symbolizer (llvm) is not installed")
        binary, functions = self.cplusplus_build("g++")
        self.check_against_addr2line(binary, functions=functions, reader=llvm_symbolizer)

    def test_cplusplus_split_dwarf_package_matches_llvm_symbolizer(self):
        """The same program with its split units in a DWARF package (a
        namespace's functions, a class template's members declared in the
        class: names through the split unit's own references): frames as
        llvm-symbolizer gives them for the program built whole."""
        if not shutil.which("llvm-symbolizer") or not shutil.which("llvm-dwp"):
            self.skipTest("llvm-symbolizer or llvm-dwp (llvm) is not installed")
        whole, _ = self.cplusplus_build("g++", name="whole")
        binary, functions = self.cplusplus_build("g++", "-gsplit-dwarf")
        subprocess.run(["llvm-dwp", "-e", binary, "-o", binary + ".dwp"], check=True,
                       timeout=120, cwd=self.dir)
        for dwo in glob.glob(self.path("*.dwo")):
            os.unlink(dwo)
        self.check_against_addr2line(binary, functions=functions, reader=llvm_symbolizer,
                                     oracle=whole)

    def test_cplusplus_by_clang_matches_llvm_symbolizer(self):
        if not shutil.which("llvm-symbolizer"):
            self.skipTest("llvm-symbolizer (llvm) is not installed")
        binary, functions = self.cplusplus_build("clang++")
        self.check_against_addr2line(binary, functions=functions, reader=llvm_symbolizer)

    def rust_build(self, *flags):
        """walk.rs built by rustc with flags, and the symbols of its own
        functions (the crate's, and the C main rustc makes)."""
        rustc = rustc_command()
        if not rustc:
            self.skipTest("rustc is not installed")
        binary = self.path("walk")
        subprocess.run([rustc, "-O", "-g"] + list(flags) + [RUST, "-o", binary], check=True,
                       timeout=300)
        dump = subprocess.run(["objdump", "-d", binary], capture_output=True, text=True,
                              check=True).stdout
        symbols = re.findall(r"^[0-9a-f]+ <([^>]+)>:$", dump, re.M)
        functions = [sym for sym, name in zip(symbols, demangle(symbols))
                     if name == "main" or re.match(r"<?walk::(main|shop::)", name)]
        self.assertGreaterEqual(len(functions), 6)   # main twice, two walks, two prices
        return binary, functions

    def test_rust_legacy_mangling_matches_addr2line(self):
        """rustc's default (legacy) mangling, _ZN...17h<hash>E with $LT$-style
        escapes: names as addr2line -C gives them (generics, trait impls,
        closures, inlined std iterator code), not the C++ demangler's
        half-demangled `Walker$LT$T$GT$`."""
        binary, functions = self.rust_build()
        self.check_against_addr2line(binary, functions=functions, reader=addr2line_of_rust)

    def test_rust_v0_mangling_matches_addr2line(self):
        """Rust's v0 mangling (_R..., what std is built with and newer
        toolchains default to): names as addr2line -C gives them, not left
        mangled."""
        binary, functions = self.rust_build("-C", "symbol-mangling-version=v0")
        self.check_against_addr2line(binary, functions=functions, reader=addr2line_of_rust)

    def test_clang_line_tables_only_matches_llvm_symbolizer(self):
        """clang -gline-tables-only: functions and inlined subroutines with
        their names alone, and the line tables."""
        if not shutil.which("clang") or not shutil.which("llvm-symbolizer"):
            self.skipTest("clang or llvm-symbolizer (llvm) is not installed")
        binary = self.path("inl")
        subprocess.run(["clang", "-O2", "-gline-tables-only", SOURCE, "-o", binary], check=True,
                       timeout=120)
        self.check_against_addr2line(binary, reader=llvm_symbolizer)

    def test_lto_build_matches_llvm_symbolizer(self):
        """-flto: the DWARF of a link-time optimized unit refers to the
        abstract functions of the compile-time units (across units); as
        llvm-symbolizer reads it (addr2line names some lines' file after
        the link-time unit, "<artificial>")."""
        if not shutil.which("llvm-symbolizer"):
            self.skipTest("llvm-symbolizer (llvm) is not installed")
        self.check_against_addr2line(self.compile("inl", "-flto"), reader=llvm_symbolizer)

    def test_clang_build_matches_llvm_symbolizer(self):
        """clang's DWARF 5 (indexed strings, addresses and ranges) and no
        .debug_aranges, where elfutils alone finds no unit for an address:
        frames as llvm-symbolizer gives them (addr2line of binutils 2.40
        leaves out some of clang's inline frames)."""
        if not shutil.which("clang") or not shutil.which("llvm-symbolizer"):
            self.skipTest("clang or llvm-symbolizer (llvm) is not installed")
        binary = self.path("inl")
        subprocess.run(["clang", "-O2", "-g", SOURCE, "-o", binary], check=True, timeout=120)
        self.assertNotIn(".debug_aranges", subprocess.run(
            ["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout)
        self.check_against_addr2line(binary, reader=llvm_symbolizer)

    def test_code_under_an_assembly_label_is_named_after_the_label(self):
        """Code after a label of no type (an entry point written in
        assembly, as the dynamic loader's _start) that no DWARF function
        holds: named after the label, not after the function before it."""
        binary = self.path("label")
        subprocess.run(["gcc", "-O2", "-g", "-fno-toplevel-reorder",
                        os.path.join(ROOT, "tests", "integration", "symbolize", "label.c"), "-o",
                        binary], check=True, timeout=120)
        addrs = function_addresses(binary, ["before_label", "after_label"])
        mapping, base = mapping_of(binary, binary)
        got = self.run_symbolize({"p": pprof(mapping, [base + a for a in addrs])})["p"]
        want = addr2line(binary, addrs)
        self.assertIn("after_label", {frames[0][0] for frames in want.values()})
        for a in addrs:
            self.assertEqual(got.get(base + a), want[a], "address %#x" % a)

    def test_stripped_binary_names_only_the_functions_its_dynamic_symbols_hold(self):
        """A binary stripped but for its dynamic symbols: an exported
        function is named, a static function is not (not after the
        exported one before it, nor after an imported function, whose
        symbol has no address), as llvm-symbolizer reads it; built without
        -rdynamic, it exports none and nothing is named."""
        for flags, exported in ((["-rdynamic"], {"??", "exported_function"}), ([], {"??"})):
            binary = self.path("stripped%s" % "".join(flags))
            subprocess.run(["gcc", "-O2"] + flags + [os.path.join(
                ROOT, "tests", "integration", "symbolize", "stripped.c"), "-o", binary],
                check=True, timeout=120)
            addrs = function_addresses(binary, ["static_function", "exported_function"])
            subprocess.run(["strip", "--strip-all", binary], check=True, timeout=60)
            mapping, base = mapping_of(binary, binary)
            got = self.run_symbolize({"p": pprof(mapping, [base + a for a in addrs])},
                                     where="run%s" % "".join(flags))["p"]
            want = llvm_symbolizer(binary, addrs)
            self.assertEqual({frames[0][0] for frames in want.values()}, exported)
            for a in addrs:
                names = [fn for fn, _, _ in got.get(base + a, [])]
                self.assertEqual(names, [fn for fn, _, _ in want[a] if fn != "??"],
                                 "%s: address %#x" % (flags, a))

    def test_binary_without_debug_file_loads_no_debuginfod_client(self):
        """A stripped binary with no debug file anywhere is named from its
        dynamic symbols, and elfutils' debuginfod client (libdebuginfod,
        with libcurl's dependencies: 7 MB resident) is not loaded to look
        for one, as no server is configured: the dynamic loader's report
        (LD_DEBUG=files) names no libdebuginfod."""
        binary = self.path("stripped")
        subprocess.run(["gcc", "-O2", "-rdynamic", os.path.join(
            ROOT, "tests", "integration", "symbolize", "stripped.c"), "-o", binary],
            check=True, timeout=120)
        addrs = function_addresses(binary, ["exported_function"])
        subprocess.run(["strip", "--strip-all", binary], check=True, timeout=60)
        mapping, base = mapping_of(binary, binary)
        out = self.run_profd({"p": pprof(mapping, [base + a for a in addrs])},
                             env=dict(os.environ, LD_DEBUG="files"))["p"]
        self.assertEqual([fn for fn, _, _ in symbolized(out)[base + addrs[0]]],
                         ["exported_function"])
        self.assertIn("calling init: ", self.log)   # the loader did report
        self.assertFalse("libdebuginfod" in self.log, "libdebuginfod.so.1 was loaded")

    def test_plt_entries_named_as_objdump_names_them(self):
        """The stubs through which calls into shared libraries jump have no
        symbol: named "<function>@plt" from the jump-slot relocations, as
        objdump (and perf) name them, in .plt and, built for IBT, in
        .plt.sec; and in .plt.got (here __cxa_finalize's, whose address the
        start files test before calling it) from the GOT relocation its
        jump goes through. The PLT's header (at .plt's start) is named after
        nothing (not after _init, a symbol without a size, which ends with
        its section)."""
        for flags in ([], ["-fcf-protection=full", "-Wl,-z,ibtplt"]):
            binary = self.path("plt%d" % len(flags))
            subprocess.run(["gcc", "-O1"] + flags + [
                os.path.join(ROOT, "tests", "integration", "symbolize", "stripped.c"), "-o",
                binary], check=True, timeout=120)
            sections = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True,
                                      check=True).stdout
            out = subprocess.run(["objdump", "-d", binary], capture_output=True, text=True,
                                 check=True).stdout
            want, entry_size = {}, {}
            for section in (".plt.sec" if flags else ".plt", ".plt.got"):
                stubs = re.search(r"%s\s+PROGBITS\s+([0-9a-f]+) [0-9a-f]+ ([0-9a-f]+) ([0-9a-f]+)"
                                  % re.escape(section), sections)
                start, size = int(stubs.group(1), 16), int(stubs.group(2), 16)
                found = {int(a, 16): fn for a, fn in re.findall(r"^([0-9a-f]+) <(\w+@plt)>:", out,
                                                                re.M)
                         if start <= int(a, 16) < start + size}
                self.assertTrue(found, "no %s entries in %s" % (section, binary))
                want.update(found)
                entry_size.update((a, int(stubs.group(3), 16) or 16) for a in found)
            self.assertIn("__cxa_finalize@plt", want.values())
            header = int(re.search(r"\.plt\s+PROGBITS\s+([0-9a-f]+) ", sections).group(1), 16)
            addrs = {a + k: a for a in want for k in (0, 5, entry_size[a] - 1)}
            mapping, base = mapping_of(binary, binary)
            got = self.run_symbolize({"p": pprof(mapping, [base + a for a in
                                                           list(addrs) + [header]])},
                                     where="run%d" % len(flags))["p"]
            for a, stub in addrs.items():
                self.assertEqual([fn for fn, _, _ in got.get(base + a, [])], [want[stub]],
                                 "%s: %#x" % (flags, a))
            self.assertEqual(got.get(base + header, []), [], "the PLT's header")

    def test_many_locations_on_threads_as_on_one(self):
        """70,000 locations at the instructions of inl, in random order:
        split among 4 threads (each looking up in a lane of its own), they
        get what one thread gives them, byte for byte, and what addr2line
        says."""
        binary = self.compile("inl", "-fPIE", "-pie")
        addrs = function_addresses(binary, ["walk", "outer", "main"])
        off, vaddr, size = text_segment(binary)
        mapping = (BASE + vaddr, BASE + vaddr + size, off, binary, build_id(binary))
        rnd = random.Random(7)
        profile = pprof(mapping, [BASE + rnd.choice(addrs) for _ in range(70000)])
        outputs = {}
        for threads in (4, 1):
            where = "threads-%d" % threads
            path = self.run_profd({"p": profile}, extra="\n    threads: %d" % threads,
                                  where=where)["p"]
            self.assertIn("70000 locations looked at", self.log)
            self.assertIn("on %d thread" % threads, self.log)
            with gzip.open(path) as f:
                outputs[threads] = f.read()
        self.assertEqual(outputs[4], outputs[1])
        want = addr2line(binary, addrs)
        got = symbolized_locations(path)   # pprof merges locations alike
        self.assertEqual({a for a, _ in got}, set(BASE + a for a in addrs))
        for address, frames in got:
            self.assertEqual(frames, want[address - BASE], "address %#x" % address)

    def test_only_a_large_profile_is_symbolized_on_huge_pages(self):
        """A profile of 32,768 locations or more is symbolized in the
        huge-page arena; a smaller one, whose few blocks would each hold a
        whole huge page for nothing, is not. Sanitizer builds, without
        jemalloc, have no such arena."""
        binary = self.compile("inl", "-fPIE", "-pie")
        addrs = function_addresses(binary, ["walk", "outer", "main"])
        off, vaddr, size = text_segment(binary)
        mapping = (BASE + vaddr, BASE + vaddr + size, off, binary, build_id(binary))
        rnd = random.Random(3)
        self.run_profd({"small": pprof(mapping, [BASE + rnd.choice(addrs) for _ in range(100)]),
                        "large": pprof(mapping, [BASE + rnd.choice(addrs) for _ in range(40000)])})
        arena = dict(re.findall(r"(\d+) locations looked at .*?( in the huge-page arena)?$",
                                self.log, re.M))
        self.assertEqual(arena["100"], "")
        self.assertEqual(arena["40000"], "" if os.environ.get("PROFD_SANITIZED") else
                         " in the huge-page arena")

    def test_stripped_binary_with_debug_file_by_build_id(self):
        full = self.compile("inl.full")
        stripped = self.path("inl")
        bid = build_id(full)
        debug_dir = self.path("debug", ".build-id", bid[:2])
        os.makedirs(debug_dir)
        subprocess.run(["objcopy", "--only-keep-debug", full, os.path.join(debug_dir,
                        bid[2:] + ".debug")], check=True)
        subprocess.run(["objcopy", "--strip-debug", full, stripped], check=True)
        self.check_against_addr2line(stripped, debug_dirs=[self.path("debug")], oracle=full)

    def test_a_debug_file_that_cannot_be_read_is_said_and_the_symbol_table_used(self):
        """A debug file at the binary's build-id place cut short, or not
        ELF at all, or one without its DWARF: frames named from the
        binary's symbol table, and a warning naming the file, once."""
        full = self.compile("inl.full")
        stripped = self.path("inl")
        bid = build_id(full)
        debug = self.path("debug", ".build-id", bid[:2], bid[2:] + ".debug")
        os.makedirs(os.path.dirname(debug))
        subprocess.run(["objcopy", "--strip-debug", full, stripped], check=True)
        addrs = function_addresses(stripped, ["walk", "outer", "main"])
        mapping, base = mapping_of(stripped, stripped)
        want = addr2line(full, addrs)   # the function, at the innermost line

        def truncate(path):
            with open(path, "r+b") as f:
                f.truncate(32)   # inside its ELF header

        def overwrite(path):
            with open(path, "wb") as f:
                f.write(b"not an ELF file")

        def without_dwarf(path):
            subprocess.run(["objcopy", "--remove-section=.debug_info", path], check=True)
        for where, spoil, said in (("cut", truncate, "not an ELF file of this build-id"),
                                   ("not-elf", overwrite, "not an ELF file of this build-id"),
                                   ("no-dwarf", without_dwarf, "no DWARF read from it")):
            subprocess.run(["objcopy", "--only-keep-debug", full, debug], check=True)
            spoil(debug)
            got = self.run_symbolize({"p": pprof(mapping, [base + a for a in addrs]),
                                      "q": pprof(mapping, [base + addrs[0]])},
                                     [self.path("debug")], where=where)["p"]
            self.assertEqual(got, {base + a: [(want[a][-1][0], "", 0)] for a in addrs}, where)
            self.check_one_warning(stripped, "debug file %s: %s" % (debug, said))   # of two

    def split_dwarf_build(self, *flags, compiler="gcc"):
        """inl built by compiler with -gsplit-dwarf (and flags), which
        leaves a skeleton unit in the binary and the DWARF in a .dwo file
        beside it (named relative to the compilation directory), and built
        whole: (split, whole, .dwo)."""
        plain, split = self.path("inl.plain"), self.path("inl")
        for path, split_flags in ((plain, []), (split, ["-gsplit-dwarf"])):
            subprocess.run([compiler, "-O2", "-g"] + split_flags + list(flags) +
                           [SOURCE, "-o", path], check=True, timeout=120, cwd=self.dir)
        dwo = glob.glob(self.path("*.dwo"))
        self.assertEqual(len(dwo), 1)
        return split, plain, dwo[0]

    def test_split_dwarf_is_read_from_its_dwo_file(self):
        """Frames as addr2line gives them for the program built whole."""
        split, plain, _ = self.split_dwarf_build()
        self.check_against_addr2line(split, oracle=plain)

    def test_clang_split_dwarf_matches_llvm_symbolizer(self):
        """clang's skeleton units, with no .debug_aranges either: frames as
        llvm-symbolizer gives them for the program built whole (version 14
        leaves out the inline frames of a .dwo file)."""
        if not shutil.which("clang") or not shutil.which("llvm-symbolizer"):
            self.skipTest("clang or llvm-symbolizer (llvm) is not installed")
        split, plain, _ = self.split_dwarf_build(compiler="clang")
        self.check_against_addr2line(split, oracle=plain, reader=llvm_symbolizer)

    def test_dwarf_4_split_dwarf_is_read_from_its_dwo_file(self):
        """The same with DWARF 4, where split DWARF is GNU's extension."""
        split, plain, _ = self.split_dwarf_build("-gdwarf-4")
        self.check_against_addr2line(split, oracle=plain)

    def packed_split_dwarf(self, packer, *flags, compiler="gcc"):
        """split_dwarf_build's program with its .dwo file packed into
        inl.dwp by packer (dwp or llvm-dwp) and removed: (split, whole)."""
        if not shutil.which(packer) or not shutil.which(compiler):
            self.skipTest(packer + " or " + compiler + " is not installed")
        split, plain, dwo = self.split_dwarf_build(*flags, compiler=compiler)
        subprocess.run([packer, "-e", split, "-o", split + ".dwp"], check=True, timeout=120,
                       cwd=self.dir)
        os.unlink(dwo)
        return split, plain

    def test_split_dwarf_is_read_from_a_dwarf_package(self):
        """gcc's DWARF 5 split units packed by llvm-dwp (binutils' dwp
        reads DWARF 4 only): the frames of the program built whole, inline
        frames included, which the symbol table alone would not give."""
        split, plain = self.packed_split_dwarf("llvm-dwp")
        self.check_against_addr2line(split, oracle=plain)

    def test_a_compressed_dwarf_package_is_read(self):
        """A package whose sections objcopy compressed (zlib)."""
        split, plain = self.packed_split_dwarf("llvm-dwp")
        subprocess.run(["objcopy", "--compress-debug-sections=zlib", split + ".dwp"], check=True)
        self.check_against_addr2line(split, oracle=plain)

    def test_dwarf_4_split_dwarf_is_read_from_a_dwarf_package(self):
        """GNU's DWARF 4 split units (index version 2, range lists in the
        skeleton's file), packed by binutils' dwp."""
        split, plain = self.packed_split_dwarf("dwp", "-gdwarf-4")
        self.check_against_addr2line(split, oracle=plain)

    def test_clang_split_dwarf_package_matches_llvm_symbolizer(self):
        """clang's split units, whose range lists are offsets from the
        skeleton's low_pc, which the package does not hold."""
        if not shutil.which("llvm-symbolizer"):
            self.skipTest("llvm-symbolizer (llvm) is not installed")
        split, plain = self.packed_split_dwarf("llvm-dwp", compiler="clang")
        self.check_against_addr2line(split, oracle=plain, reader=llvm_symbolizer)

    def package_beside_the_debug_file(self, name):
        """A stripped binary whose debug file (by build-id) has the package
        beside it, named name(debug file's path, binary's path)."""
        split, plain = self.packed_split_dwarf("llvm-dwp")
        bid = build_id(split)
        debug_dir = self.path("debug", ".build-id", bid[:2])
        os.makedirs(debug_dir)
        debug = os.path.join(debug_dir, bid[2:] + ".debug")
        subprocess.run(["objcopy", "--only-keep-debug", split, debug], check=True)
        subprocess.run(["objcopy", "--strip-debug", split], check=True)
        os.rename(split + ".dwp", name(debug, split))
        self.check_against_addr2line(split, debug_dirs=[self.path("debug")], oracle=plain)

    def test_dwarf_package_beside_the_debug_file(self):
        """<debug file>.dwp, as lldb looks for it."""
        self.package_beside_the_debug_file(lambda debug, binary: debug + ".dwp")

    def test_dwarf_package_named_after_the_binary_beside_the_debug_file(self):
        """<the binary's name>.dwp in the debug file's directory, as gdb
        looks for it."""
        self.package_beside_the_debug_file(
            lambda debug, binary: os.path.join(os.path.dirname(debug),
                                               os.path.basename(binary) + ".dwp"))

    def test_dwarf_package_in_a_debug_directory(self):
        """<the binary's name>.dwp in one of debug_directories, as gdb and
        lldb look for it."""
        split, plain = self.packed_split_dwarf("llvm-dwp")
        os.makedirs(self.path("debug"))
        os.rename(split + ".dwp", self.path("debug", os.path.basename(split) + ".dwp"))
        self.check_against_addr2line(split, debug_dirs=[self.path("debug")], oracle=plain)

    def test_a_package_without_the_unit_names_functions_from_the_symbol_table(self):
        """A package made for another build of the program (its units of
        other ids) is not used: functions from the symbol table, as
        without one."""
        split, plain = self.packed_split_dwarf("llvm-dwp")
        other = self.path("other")
        os.makedirs(other)
        with open(os.path.join(other, "other.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        subprocess.run(["gcc", "-O2", "-g", "-gsplit-dwarf", "other.c", "-o", "other"],
                       check=True, timeout=120, cwd=other)
        subprocess.run(["llvm-dwp", "-e", "other", "-o", split + ".dwp"], check=True,
                       timeout=120, cwd=other)
        self.check_symbol_table_frames(split, plain)
        self.check_one_warning(split, "split unit %s found neither" % self.path("inl.dwo"))

    def test_a_package_that_cannot_be_read_is_said_and_the_symbol_table_used(self):
        """A file beside the binary where its package is looked for that
        is none (cut short): functions from the symbol table, and a
        warning naming it."""
        split, plain, dwo = self.split_dwarf_build()
        os.unlink(dwo)
        with open(split + ".dwp", "wb") as f:
            f.write(b"\x7fELF")
        self.check_symbol_table_frames(split, plain)
        self.check_one_warning(split, "DWARF package %s.dwp: no unit index read from it" % split)

    def check_symbol_table_frames(self, split, plain):
        """split's functions named from its symbol table at the innermost
        line, as without any split unit."""
        addrs = function_addresses(split, ["walk", "outer", "main"])
        mapping, base = mapping_of(split, split)
        got = self.run_symbolize({"p": pprof(mapping, [base + a for a in addrs])})["p"]
        want = addr2line(plain, addrs)   # the function, at the innermost line
        self.assertEqual(got, {base + a: [(want[a][-1][0],) + want[a][0][1:]] for a in addrs})

    def test_split_dwarf_without_its_dwo_file_names_functions_from_the_symbol_table(self):
        """...and says which split unit was found nowhere."""
        split, plain, dwo = self.split_dwarf_build()
        os.unlink(dwo)
        self.check_symbol_table_frames(split, plain)
        self.check_one_warning(split, "split unit %s found neither as that file nor in a DWARF "
                               "package" % dwo)

    def check_one_warning(self, binary, says):
        """The last run logged one warning, about binary, saying says."""
        warnings = [line for line in self.log.splitlines() if "warn  symbolize: " in line]
        self.assertEqual(len(warnings), 1, self.log)
        self.assertIn("%s build-id %s: %s" % (binary, build_id(binary), says), warnings[0])

    def debuglink_in(self, where, debug_dirs=()):
        """inl stripped, naming its debug file inl.debug by .gnu_debuglink,
        which is put at where(directory of the binary) and not under its
        build-id: checked against addr2line of the unstripped build."""
        full = self.compile("inl.full")
        os.makedirs(self.path("bin"))
        stripped, debug = self.path("bin", "inl"), self.path("bin", "inl.debug")
        subprocess.run(["objcopy", "--only-keep-debug", full, debug], check=True)
        subprocess.run(["objcopy", "--strip-debug", "--add-gnu-debuglink=" + debug, full,
                        stripped], check=True)
        at = where(self.path("bin"))
        if at != debug:
            os.makedirs(os.path.dirname(at), exist_ok=True)
            shutil.move(debug, at)
        self.check_against_addr2line(stripped, debug_dirs=debug_dirs, oracle=full)

    def test_debuglink_beside_the_binary(self):
        self.debuglink_in(lambda d: os.path.join(d, "inl.debug"))

    def test_debuglink_in_the_binarys_dot_debug_directory(self):
        self.debuglink_in(lambda d: os.path.join(d, ".debug", "inl.debug"))

    def test_debuglink_under_a_debug_directory_at_the_binarys_path(self):
        self.debuglink_in(lambda d: self.path("debug") + d + "/inl.debug",
                          debug_dirs=[self.path("debug")])

    def test_debuglink_crc_tells_another_builds_debug_file_apart(self):
        """A binary without a build-id is told its debug file by the CRC
        its .gnu_debuglink gives, as gdb and elfutils tell it: the right
        file by that name is read, another build's by that name is not
        (frames named from the binary's own symbol table, no lines)."""
        full = self.compile("inl.full", "-Wl,--build-id=none")
        other = self.compile("inl.other", "-O0", "-Wl,--build-id=none")
        self.assertEqual(build_id(full), "")
        os.makedirs(self.path("bin"))
        stripped, debug = self.path("bin", "inl"), self.path("bin", "inl.debug")
        subprocess.run(["objcopy", "--only-keep-debug", full, debug], check=True)
        subprocess.run(["objcopy", "--strip-debug", "--add-gnu-debuglink=" + debug, full,
                        stripped], check=True)
        self.check_against_addr2line(stripped, oracle=full)
        subprocess.run(["objcopy", "--only-keep-debug", other, debug], check=True)
        addrs = function_addresses(stripped, ["walk", "outer", "main"])
        mapping, base = mapping_of(stripped, stripped)
        got = self.run_symbolize({"p": pprof(mapping, [base + a for a in addrs])},
                                 where="wrong")["p"]
        names = {a: fn for fn in ("walk", "outer", "main")
                 for a in function_addresses(stripped, [fn])}
        self.assertEqual(got, {base + a: [(names[a], "", 0)] for a in addrs})

    def test_debuglink_of_a_symbolic_link_under_the_path_it_links_to(self):
        """A binary recorded by a symbolic link's path whose debug file is
        filed under a debug directory at the path the link points to (as
        packages file it) is found there, as elfutils finds it."""
        full = self.compile("inl.full")
        os.makedirs(self.path("real"))
        os.makedirs(self.path("link"))
        stripped, debug = self.path("real", "inl"), self.path("inl.debug")
        subprocess.run(["objcopy", "--only-keep-debug", full, debug], check=True)
        subprocess.run(["objcopy", "--strip-debug", "--add-gnu-debuglink=" + debug, full,
                        stripped], check=True)
        os.symlink(stripped, self.path("link", "inl"))
        at = self.path("debug") + self.path("real") + "/inl.debug"
        os.makedirs(os.path.dirname(at))
        shutil.move(debug, at)
        self.check_against_addr2line(stripped, recorded_path=self.path("link", "inl"),
                                     debug_dirs=[self.path("debug")], oracle=full)

    def compressed_debug_file(self, compression):
        """A stripped inl and its debug file (by build-id) whose DWARF is
        compressed; returns (stripped, full, debug file)."""
        full = self.compile("inl.full")
        stripped = self.path("inl")
        bid = build_id(full)
        debug_dir = self.path("debug", ".build-id", bid[:2])
        os.makedirs(debug_dir)
        debug = os.path.join(debug_dir, bid[2:] + ".debug")
        subprocess.run(["objcopy", "--only-keep-debug", "--compress-debug-sections=" + compression,
                        full, debug], check=True)
        subprocess.run(["objcopy", "--strip-debug", full, stripped], check=True)
        self.assertIn(".debug_info", compressed_sections(debug))
        return stripped, full, debug

    def check_inflated_copy(self, compression):
        """The debug file's copy is made under its build-id, without
        compressed sections, and symbolizes as the original would."""
        stripped, full, _ = self.compressed_debug_file(compression)
        cache = self.path("inflated")
        self.check_against_addr2line(stripped, debug_dirs=[self.path("debug")], oracle=full,
                                     extra="\n    inflated_cache: " + cache)
        copy = os.path.join(cache, build_id(full))
        self.assertEqual(os.listdir(cache), [build_id(full)])
        self.assertEqual(compressed_sections(copy), [])
        self.assertEqual(build_id(copy), build_id(full))

    def test_zlib_debug_file_is_read_from_its_inflated_copy(self):
        self.check_inflated_copy("zlib")

    def test_zstd_debug_file_is_read_from_its_inflated_copy(self):
        """elfutils 0.188 cannot read zstd-compressed sections itself."""
        self.check_inflated_copy("zstd")

    def test_compressed_debug_file_read_in_memory_without_a_cache(self):
        stripped, full, _ = self.compressed_debug_file("zlib")
        self.check_against_addr2line(stripped, debug_dirs=[self.path("debug")], oracle=full,
                                     extra='\n    inflated_cache: ""')

    def test_binary_with_compressed_dwarf_is_read_from_its_inflated_copy(self):
        binary = self.compile("inl", "-gz=zlib")
        self.assertIn(".debug_info", compressed_sections(binary))
        cache = self.path("inflated")
        self.check_against_addr2line(binary, extra="\n    inflated_cache: " + cache)
        self.assertEqual(os.listdir(cache), [build_id(binary)])

    def test_unwritable_inflated_cache_is_reported_and_symbolizing_goes_on(self):
        stripped, full, _ = self.compressed_debug_file("zlib")
        blocker = self.path("not-a-directory")
        open(blocker, "w").close()
        self.check_against_addr2line(stripped, debug_dirs=[self.path("debug")], oracle=full,
                                     extra="\n    inflated_cache: " + os.path.join(blocker, "x"))
        self.assertIn("inflated copy not kept", self.log)

    def test_binary_found_through_build_id_directory_by_a_foreign_path(self):
        binary = self.compile("inl")
        bid = build_id(binary)
        d = self.path("cache", ".build-id", bid[:2], bid[2:])
        os.makedirs(d)
        shutil.copy(binary, os.path.join(d, "elf"))   # perf's build-id cache layout
        self.check_against_addr2line(binary, recorded_path="/nonexistent/app/inl",
                                     debug_dirs=[self.path("cache")])

    def test_a_binary_deleted_since_its_process_started_is_read_through_its_mapping(self):
        """A running process whose binary was deleted since (as a package
        upgrade replaces it): /proc/<pid>/maps names it "<path> (deleted)",
        and the file is still there through /proc/<pid>/map_files."""
        binary, oracle = self.compile("inl"), self.path("inl.kept")
        shutil.copy(binary, oracle)
        proc = subprocess.Popen([binary, "1000000"], stdout=subprocess.DEVNULL)   # for minutes
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        maps = "/proc/%d/maps" % proc.pid
        line = wait_until(lambda: [ln for ln in open(maps) if binary in ln and " r-xp " in ln],
                          "the process's text mapping")[0]
        os.unlink(binary)
        self.assertIn(binary + " (deleted)", open(maps).read())
        fields = line.split()
        if not os.access("/proc/%d/map_files" % proc.pid, os.R_OK | os.X_OK):
            self.skipTest("/proc/<pid>/map_files cannot be read here")
        start, limit = (int(x, 16) for x in fields[0].split("-"))
        offset = int(fields[2], 16)
        off, vaddr, _ = text_segment(oracle)
        addrs = function_addresses(oracle, ["walk", "outer", "main"])
        at = {a: start + (a - vaddr + off - offset) for a in addrs}
        mapping = (start, limit, offset, binary + " (deleted)", build_id(oracle))
        name = "%d-p" % proc.pid
        got = self.run_symbolize({name: pprof(mapping, list(at.values()))})[name]
        want = addr2line(oracle, addrs)
        self.assertEqual({a: got.get(at[a]) for a in addrs}, want)

    def test_deleted_suffix_is_dropped_from_the_path_looked_for(self):
        """A mapping read from /proc/<pid>/maps after its file was deleted
        names it "<path> (deleted)" (as Go's runtime/pprof writes it): with
        no process to read it through, the file at <path> is used when its
        build-id is the recorded one."""
        binary = self.compile("inl")
        self.check_against_addr2line(binary, recorded_path=binary + " (deleted)")

    def test_binary_of_a_live_container_found_under_its_proc_root(self):
        """A binary that only a process's own mount namespace has (as in a
        container) is read through /proc/<pid>/root, its build-id checked."""
        if os.geteuid() != 0 or not shutil.which("unshare"):
            self.skipTest("a private mount namespace needs root and unshare")
        hidden, seen, ready = self.path("hidden"), self.path("seen"), self.path("ready")
        os.makedirs(seen)
        os.makedirs(hidden)
        binary = self.compile(os.path.join("hidden", "inl"))
        container = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             'mount --bind "$1" "$2" && touch "$3" && exec sleep 600', "sh", hidden, seen, ready],
            stderr=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: os.path.exists(ready) or container.poll() is not None,
                       "the mount namespace")
            if not os.path.exists(ready):
                self.skipTest("no private mount namespace here: " + container.stderr.read())
            recorded = os.path.join(seen, "inl")
            self.assertFalse(os.path.exists(recorded))   # not on this side of the mount
            self.check_against_addr2line(binary, recorded_path=recorded, pid=container.pid)
        finally:
            container.kill()
            container.wait()

    def test_binary_and_debug_file_fetched_from_debuginfod(self):
        """A binary known only by build-id comes from a debuginfod server
        (elfutils' own), stripped, and then its separate debug file."""
        if not shutil.which("debuginfod"):
            self.skipTest("debuginfod (the server) is not installed")
        full = self.compile("inl.full")
        served = self.path("served")
        os.makedirs(served)
        subprocess.run(["objcopy", "--only-keep-debug", full, os.path.join(served, "inl.debug")],
                       check=True)
        subprocess.run(["objcopy", "--strip-debug", full, os.path.join(served, "inl")], check=True)
        server, port = serve_on_free_port(lambda port: subprocess.Popen(
            ["debuginfod", "-F", served, "-p", str(port), "-d", self.path("db.sqlite")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        url = "http://127.0.0.1:%d" % port

        def indexed():   # both files scanned and served
            if server.poll() is not None:
                raise AssertionError("debuginfod exited: " + server.stderr.read())
            for kind in ("executable", "debuginfo"):
                try:
                    urllib.request.urlopen("%s/buildid/%s/%s" % (url, build_id(full), kind),
                                           timeout=5).close()
                except OSError:
                    return False
            return True

        try:
            wait_until(indexed, "debuginfod to index " + served)
            self.check_against_addr2line(full, recorded_path="/nonexistent/inl", oracle=full,
                                         extra="\n    debuginfod_urls: [%s]\n"
                                               "    debuginfod_cache: %s" % (url, self.path("cache")))
        finally:
            server.terminate()
            server.wait()
        fetched = sorted(os.listdir(os.path.join(self.path("cache"), build_id(full))))
        self.assertEqual(fetched, ["debuginfo", "executable"])

    def serve_gated_debuginfod(self, files, asked=None):
        """A debuginfod server (the HTTP API: /buildid/<id>/<kind>) on a free
        loopback port serving files {(build-id, kind): path}, each only once
        its gate {(build-id, kind): threading.Event} is open, and adding
        every (build-id, kind) asked for to the list asked; its URL and the
        gates."""
        import http.server
        gates = {key: threading.Event() for key in files}
        for gate in gates.values():
            self.addCleanup(gate.set)   # before the server stops (cleanups run in reverse)

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                parts = self.path.split("/")
                key = tuple(parts[2:]) if len(parts) == 4 else None
                if asked is not None:
                    asked.append(key)
                if key not in files:
                    self.send_error(404)
                    return
                gates[key].wait(120)
                try:
                    with open(files[key], "rb") as f:
                        data = f.read()
                except OSError:   # opened at the test's end, its files gone
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass
        return "http://127.0.0.1:%d" % self.serve_http(Handler), gates

    def spooled_symbolizer(self):
        """A function that spools a profile of parts (as pprof_mappings
        takes them) for the running profd (receiver pprof_file on spool/,
        exporter on out/, the file's name kept) and returns its output,
        symbolized(), and the seconds it took."""
        sent = itertools.count()

        def symbolize_one(parts):
            name, started = "p%d" % next(sent), time.monotonic()
            self.spool(name + ".pb.gz", gzip.compress(pprof_mappings(parts)))
            found = wait_until(lambda: glob.glob(self.path("out", "**", name + "*"),
                                                 recursive=True), "the output of " + name)
            return symbolized(found[0]), time.monotonic() - started
        return symbolize_one

    def test_a_slow_debuginfod_holds_profiles_up_no_longer_than_debuginfod_wait(self):
        """Files still on their way from debuginfod: a profile goes on after
        debuginfod_wait in all, however many it waits for, its frames
        addresses, while the fetches go on; profiles after the binary came
        are named from its symbol table, and after its debug file came (the
        binary opened again) get lines and inline frames as addr2line gives
        them. A fetch that hangs does not hold profd's stop up."""
        full = self.compile("inl.full")
        other = self.compile("inl.other", "-O1")   # another build-id, never let through
        stripped, debug = self.path("inl"), self.path("inl.debug")
        subprocess.run(["objcopy", "--only-keep-debug", full, debug], check=True)
        subprocess.run(["objcopy", "--strip-debug", full, stripped], check=True)
        bid = build_id(full)
        url, gates = self.serve_gated_debuginfod({(bid, "executable"): stripped,
                                                  (bid, "debuginfo"): debug,
                                                  (build_id(other), "executable"): other})
        p = self.start(DEBUGINFOD_ONLY % (url, self.path("cache")))

        mapping, base = mapping_of(full, "/nonexistent/inl")
        addrs = function_addresses(full, ["walk", "outer", "main"])
        other_mapping, other_base = mapping_of(other, "/nonexistent/other")
        symbolize_one = self.spooled_symbolizer()

        ours = [(mapping, [base + a for a in addrs])]
        first, took = symbolize_one(ours + [(other_mapping, [other_base + function_addresses(
            other, ["main"])[0]])])   # neither binary here yet: addresses
        self.assertEqual([frames for frames in first.values() if frames], [])
        self.assertGreater(took, 3.5)   # it waited...
        self.assertLess(took, 7.5)      # ...4 s in all, not 4 s a binary
        for b in (bid, build_id(other)):
            p.wait_log("build-id %s: being fetched from debuginfod" % b)
        gates[(bid, "executable")].set()
        named = lambda out: any(frames for frames in out.values())
        symtab_only = wait_until(lambda: [o for o, _ in [symbolize_one(ours)] if named(o)],
                                 "a profile named from the binary's symbol table")[0]
        self.assertEqual({f[0][1:] for f in symtab_only.values() if f}, {("", 0)})
        gates[(bid, "debuginfo")].set()
        want = addr2line(full, addrs)
        wait_until(lambda: symbolize_one(ours)[0] == {base + a: want[a] for a in addrs},
                   "a profile with the debug file's lines and inline frames")
        stopping = time.monotonic()   # the other binary's fetch still hangs
        self.assertEqual(p.stop(), 0)
        self.assertLess(time.monotonic() - stopping, 8)   # not debuginfod_timeout's 10 s

    def test_debuginfod_fetches_files_at_once_as_configured(self):
        """Three binaries missing at once, their fetches held by the server:
        two are asked for at a time by default (the third once one was
        answered), three with debuginfod_fetches: 3; a count out of range
        is refused."""
        binaries = [self.compile("inl.%d" % i, "-O%d" % i) for i in (1, 2, 3)]
        mappings = [mapping_of(b, "/nonexistent/inl.%d" % i) for i, b in enumerate(binaries)]
        parts = [(m, [base + function_addresses(b, ["main"])[0]])
                 for b, (m, base) in zip(binaries, mappings)]
        self.assertEqual(len({m[4] for m, _ in parts}), 3)   # three build-ids
        # no fetch given up meanwhile (debuginfod_timeout), which would free a thread
        patient = DEBUGINFOD_ONLY.replace("debuginfod_wait: 4s",
                                          "debuginfod_wait: 4s\n    debuginfod_timeout: 1h")
        for fetches, config in ((2, patient),
                                (3, patient.replace("debuginfod_wait: 4s",
                                                    "debuginfod_fetches: 3\n"
                                                    "    debuginfod_wait: 4s"))):
            with self.subTest(fetches=fetches):
                asked = []
                url, gates = self.serve_gated_debuginfod(
                    {(build_id(b), "executable"): b for b in binaries}, asked)
                p = self.start(config % (url, self.path("cache-%d" % fetches)))
                self.spooled_symbolizer()(parts)   # back after debuginfod_wait, all queued
                wait_until(lambda: len(asked) >= fetches, "%d fetches at once" % fetches)
                self.assertEqual(len(asked), fetches, asked)   # none answered: no more asked
                gates[asked[0]].set()   # one answered: the next one is asked
                wait_until(lambda: len(asked) == 3, "the third fetch")
                for gate in gates.values():
                    gate.set()
                self.assertEqual(p.stop(), 0)
        with open(self.path("bad.yaml"), "w") as f:
            f.write(DEBUGINFOD_ONLY.replace("debuginfod_wait: 4s", "debuginfod_fetches: 17") %
                    ("http://127.0.0.1:9", self.path("cache")))
        r = run(["--config", self.path("bad.yaml")], cwd=self.dir)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("debuginfod_fetches: 17 is not between 1 and 16", r.stderr)

    def dwz_split(self, recorded):
        """inl built twice alike (to the same build-id), one of them (with
        another program) made smaller by dwz, whose shared DWARF goes to a
        dwz file that the debug files name as recorded; that one stripped
        and its debug file made. (the plain build, the stripped one, its
        debug file, the dwz file)."""
        if not shutil.which("dwz"):
            self.skipTest("dwz is not installed")
        plain = self.compile("inl.plain")
        shrunk, other = self.compile("inl.full"), self.compile("inl.other", "-O1")
        alt = self.path("inl.dwz")
        subprocess.run(["dwz", "-m", alt, "-M", recorded, shrunk, other], check=True, timeout=120)
        stripped, debug = self.path("inl"), self.path("inl.debug")
        subprocess.run(["objcopy", "--only-keep-debug", shrunk, debug], check=True)
        subprocess.run(["objcopy", "--strip-debug", shrunk, stripped], check=True)
        self.assertEqual(build_id(stripped), build_id(plain))   # dwz leaves the code as it was
        return plain, stripped, debug, alt

    def dwz_in_debug_directory(self, recorded, alt_at):
        """dwz_split's files in a debug directory, the debug file by
        build-id and the dwz file at alt_at(its build-id), a path under it,
        checked against addr2line of the plain build, with a debuginfod
        server that has both files and must not be asked for them."""
        plain, stripped, debug, alt = self.dwz_split(recorded)
        by_build_id = lambda bid: ".build-id/%s/%s.debug" % (bid[:2], bid[2:])
        placed = []
        for path, at in ((debug, by_build_id(build_id(stripped))), (alt, alt_at(build_id(alt)))):
            placed.append(self.path("debug", at))
            os.makedirs(os.path.dirname(placed[-1]), exist_ok=True)
            shutil.move(path, placed[-1])
        asked = []
        url, gates = self.serve_gated_debuginfod({(build_id(stripped), "debuginfo"): placed[0],
                                                  (build_id(alt), "debuginfo"): placed[1]}, asked)
        for gate in gates.values():
            gate.set()
        self.check_against_addr2line(stripped, debug_dirs=[self.path("debug")], oracle=plain,
                                     extra="\n    debuginfod_urls: [%s]\n    debuginfod_cache: %s"
                                           % (url, self.path("cache")))
        self.assertEqual(asked, [])

    def test_dwz_file_by_build_id_in_a_debug_directory(self):
        self.dwz_in_debug_directory("/nonexistent/inl.dwz",
                                    lambda bid: ".build-id/%s/%s.debug" % (bid[:2], bid[2:]))

    def test_dwz_file_named_relative_to_the_debug_file(self):
        self.dwz_in_debug_directory("../../.dwz/inl.dwz", lambda bid: ".dwz/inl.dwz")

    def test_dwz_file_at_the_absolute_path_it_is_named_by(self):
        self.dwz_in_debug_directory(self.path("debug", ".dwz", "inl.dwz"),
                                    lambda bid: ".dwz/inl.dwz")

    def test_a_dwz_file_from_debuginfod_is_fetched_like_the_debug_file(self):
        """A debug file made smaller by dwz names a supplementary file
        (.gnu_debugaltlink) holding what it shares with other programs,
        here the inlined functions' names: that file comes from debuginfod
        by its own build-id, in the background as the debug file does (a
        profile waits for it debuginfod_wait at most), and once it came
        the frames are addr2line's for the same program built without dwz.
        Meanwhile functions are named from the symbol table."""
        plain, stripped, debug, alt = self.dwz_split("/nonexistent/inl.dwz")
        bid, alt_id = build_id(stripped), build_id(alt)
        url, gates = self.serve_gated_debuginfod({(bid, "executable"): stripped,
                                                  (bid, "debuginfo"): debug,
                                                  (alt_id, "debuginfo"): alt})
        gates[(bid, "executable")].set()
        gates[(bid, "debuginfo")].set()
        self.start(DEBUGINFOD_ONLY % (url, self.path("cache")))
        mapping, base = mapping_of(stripped, "/nonexistent/inl")
        addrs = function_addresses(plain, ["walk", "outer", "main"])
        symbolize_one = self.spooled_symbolizer()
        want = {base + a: frames for a, frames in addr2line(plain, addrs).items()}
        self.assertIn("mix", {f[0] for frames in want.values() for f in frames})

        first, took = symbolize_one([(mapping, list(want))])
        self.assertGreater(took, 3.5)   # it waited for the dwz file...
        self.assertLess(took, 7.5)      # ...debuginfod_wait, no longer
        self.assertNotEqual(first, want)
        outermost = lambda out: {a: frames[-1][0] for a, frames in out.items()}
        self.assertEqual(outermost(first), outermost(want))   # from the symbol table
        gates[(alt_id, "debuginfo")].set()
        wait_until(lambda: symbolize_one([(mapping, list(want))])[0] == want,
                   "a profile with the dwz file's inlined functions")
        self.assertEqual(sorted(os.listdir(os.path.join(self.path("cache"), alt_id))),
                         ["debuginfo"])

    def go_pclntab_against_dwarf(self, *build_flags, base=0):
        """gofuncs.go built with build_flags, stripped (-ldflags='-s -w': no
        symbol table, no DWARF, only .gopclntab) and not: at every
        instruction of two functions, loaded at base, profd names both as
        llvm-symbolizer names the unstripped one from its DWARF."""
        if not shutil.which("go") or not shutil.which("llvm-symbolizer"):
            self.skipTest("go (golang-go) or llvm-symbolizer (llvm) is not installed")
        source = os.path.join(ROOT, "tests", "integration", "symbolize", "gofuncs.go")
        binary, full = self.path("gofuncs"), self.path("gofuncs.full")
        for path, flags in ((binary, ["-ldflags=-s -w"]), (full, [])):
            subprocess.run(["go", "build"] + list(build_flags) + flags + ["-o", path, source],
                           check=True, timeout=300, cwd=self.dir)
        # Instruction addresses from the unstripped build (same layout).
        dump = subprocess.run(["go", "tool", "objdump", "-s", r"^main\.(sumSquares|main)$", full],
                              capture_output=True, text=True, check=True, timeout=120).stdout
        addrs = [int(a, 16) for a in re.findall(r"\t(0x[0-9a-f]+)\t", dump)]
        self.assertGreater(len(addrs), 20)
        want = {base + a: frames for a, frames in llvm_symbolizer(full, addrs).items()}
        self.assertIn(["main.plusOne", "main.main"], [[f[0] for f in v] for v in want.values()])
        for path in (binary, full):   # the unstripped one from its DWARF
            off, vaddr, size = text_segment(path)
            mapping = (base + vaddr, base + vaddr + size, off, path, "")
            got = self.run_symbolize({"p": pprof(mapping, [base + a for a in addrs])},
                                     where="run-" + os.path.basename(path))["p"]
            self.assertEqual(got, want, path)

    def test_stripped_go_binary_named_from_its_pclntab(self):
        """A Go binary built with -ldflags='-s -w' has no symbol table and no
        DWARF, only .gopclntab: functions, files, lines and inlined calls
        (from the inline trees) come from it as llvm-symbolizer gives them
        from the DWARF of the same program built unstripped, and as profd
        gives them from that DWARF."""
        self.go_pclntab_against_dwarf()

    def test_stripped_go_pie_named_from_its_pclntab(self):
        """The same built as a position-independent executable
        (-buildmode=pie, as Go builds by default on some platforms and
        distributions), loaded at a base of its own: the table is in the
        relocated data, in a section named .data.rel.ro.gopclntab."""
        self.go_pclntab_against_dwarf("-buildmode=pie", base=BASE)

    def test_binaries_beyond_max_memory_stay_open_for_their_profile(self):
        """Two binaries that do not fit in max_memory together, their
        locations interleaved: each is kept open until the profile is done
        (closing one to open the other must not leave the first in use)."""
        pie, fixed = self.compile("inl.pie", "-fPIE", "-pie"), self.compile("inl.fixed", "-no-pie")
        parts, want = [], {}
        for binary, base in ((pie, BASE), (fixed, 0)):
            addrs = function_addresses(binary, ["walk", "outer"])
            off, vaddr, size = text_segment(binary)
            parts.append(((base + vaddr, base + vaddr + size, off, binary, build_id(binary)),
                          [base + a for a in addrs]))
            want.update({base + a: frames for a, frames in addr2line(binary, addrs).items()})
        got = self.run_symbolize({"p": pprof_mappings(parts)}, extra="\n    max_memory: 1")["p"]
        self.assertEqual(got, want)

    def open_bytes_after(self, binary, functions, max_memory):
        """profd_symbolize_open_bytes once a profile of binary's functions
        went through symbolize with max_memory."""
        addrs = function_addresses(binary, functions)
        off, vaddr, tsize = text_segment(binary)
        mapping = (BASE + vaddr, BASE + vaddr + tsize, off, binary, build_id(binary))
        with self.subTest(binary=binary, max_memory=max_memory):
            p = self.start("""
receivers:
  pprof_file: {include: [spool/*.pb.gz]}
processors:
  symbolize: {debug_directories: [], max_memory: %d}
exporters:
  nop: {}
service:
  telemetry: {metrics: {address: "127.0.0.1:0"}}
  pipelines:
    profiles: {receivers: [pprof_file], processors: [symbolize], exporters: [nop]}
""" % max_memory)
            mark = p.mark()
            self.spool("p%d.pb.gz" % max_memory,
                       gzip.compress(pprof(mapping, [BASE + a for a in addrs])))
            p.wait_log("locations looked at", start=mark)

            def published():   # once the batch is done, just after that line
                v = metric_value(p.metrics(), "profd_symbolize_open_bytes",
                                 component="symbolize")
                return None if v is None else [v]
            value = wait_until(published, "profd_symbolize_open_bytes on /metrics")[0]
            self.assertEqual(p.stop(), 0)
            return value

    def test_what_lookups_add_to_a_binary_counts_against_max_memory(self):
        """After a profile, a binary's index and results count with its file
        (profd_symbolize_open_bytes); one that fit max_memory when opened
        but not once its lookups built them is closed when the profile is
        done."""
        binary = self.compile("inl")
        size = os.path.getsize(binary)
        functions = ["walk", "outer", "main"]
        self.assertGreater(self.open_bytes_after(binary, functions, 1 << 30), size)
        self.assertEqual(self.open_bytes_after(binary, functions, size), 0)

    def test_split_units_files_count_against_max_memory(self):
        """The .dwo file split units were read from counts with the binary's
        own file, as does a DWARF package: a binary that fits max_memory
        alone is closed once its split units' file is counted."""
        split, _, dwo = self.split_dwarf_build()
        functions = ["walk", "outer", "main"]
        both = os.path.getsize(split) + os.path.getsize(dwo)
        self.assertGreater(self.open_bytes_after(split, functions, 1 << 30), both)
        self.assertEqual(self.open_bytes_after(split, functions, both - 1), 0)
        if shutil.which("llvm-dwp"):
            subprocess.run(["llvm-dwp", "-e", split, "-o", split + ".dwp"], check=True,
                           timeout=120, cwd=self.dir)
            os.unlink(dwo)
            packed = os.path.getsize(split) + os.path.getsize(split + ".dwp")
            self.assertGreater(self.open_bytes_after(split, functions, 1 << 30), packed)

    def test_pipelines_share_one_symbolizer_cache(self):
        """symbolize listed by two pipelines: one cache, so a binary is
        looked for (and a miss logged) once, and both pipelines' profiles
        are symbolized."""
        binary = self.compile("inl")
        addrs = function_addresses(binary, ["walk"])
        off, vaddr, size = text_segment(binary)
        present = (BASE + vaddr, BASE + vaddr + size, off, binary, build_id(binary))
        missing = (0x10000, 0x20000, 0, "/nonexistent/app", "ab" * 20)
        profile = pprof_mappings([(present, [BASE + a for a in addrs]), (missing, [0x10010])])
        for d in ("a", "b"):
            os.makedirs(self.path("in", d))
            with open(self.path("in", d, "p.pb.gz"), "wb") as f:
                f.write(gzip.compress(profile))
        with open(self.path("profd.yaml"), "w") as f:
            f.write("""
receivers:
  pprof_file/a: {include: [in/a/*.pb.gz], oneshot: true, after_ingest: keep, poll_interval: 0s,
                 source_label: __file__}
  pprof_file/b: {include: [in/b/*.pb.gz], oneshot: true, after_ingest: keep, poll_interval: 0s,
                 source_label: __file__}
processors:
  symbolize: {debug_directories: []}
exporters:
  pprof_file: {directory: out, path_template: "{__file__}"}
service:
  telemetry: {metrics: {address: ""}}
  pipelines:
    profiles/a: {receivers: [pprof_file/a], processors: [symbolize], exporters: [pprof_file]}
    profiles/b: {receivers: [pprof_file/b], processors: [symbolize], exporters: [pprof_file]}
""")
        r = run_command([PROFD, "--config", "profd.yaml"], cwd=self.dir, capture_output=True,
                        text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("/nonexistent/app build-id"), 1, r.stderr)
        want = addr2line(binary, addrs)
        for out in glob.glob(self.path("out", "**", "*.pb.gz"), recursive=True):
            got = symbolized(out)
            for a in addrs:
                self.assertEqual(got.get(BASE + a), want[a])
        self.assertEqual(len(glob.glob(self.path("out", "**", "*.pb.gz"), recursive=True)), 2)

    def test_kernel_module_frames_named_from_their_kernels_table(self):
        """A module's frames ([mymod], in the kernel's half of the address
        space) are named from the module symbols of the recorded kernel's
        kallsyms, when that table has the recorded layout (same _text); the
        kernel's own frames are named either way (KASLR undone)."""
        kid = "5e" * 20
        cache = self.path("cache", "[kernel.kallsyms]", kid)
        os.makedirs(cache)
        with open(os.path.join(cache, "kallsyms"), "w") as f:
            f.write("ffffffff81000000 T _text\nffffffff81000100 T core_fn\n"
                    "ffffffff81001000 T core_end\nffffffffc0001000 t mod_fn_a\t[mymod]\n"
                    "ffffffffc0001800 t mod_fn_b\t[mymod]\nffffffffc0002000 t mod_end\t[mymod]\n")
        notes = self.path("notes")   # the running kernel is another one
        with open(notes, "wb") as f:
            f.write(bytes([4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0]) + b"GNU\0" + bytes(range(20)))
        module = (0xffffffffc0001000, 0xffffffffc0003000, 0, "[mymod]", "")

        def profile(text):   # recorded with _text at `text`
            kernel = (text, text + 0x1000000, text, "[kernel.kallsyms]_text", kid)
            return pprof_mappings([(kernel, [text + 0x150]),
                                   (module, [0xffffffffc0001010, 0xffffffffc0001900])])

        got = self.run_symbolize({"same": profile(0xffffffff81000000),
                                  "other": profile(0xffffffff9a000000)}, [self.path("cache")],
                                 "\n    kernel_notes: " + notes)
        names = {k: {a: [f[0] for f in frames] for a, frames in v.items()} for k, v in got.items()}
        self.assertEqual(names["same"], {0xffffffff81000150: ["core_fn"],
                                         0xffffffffc0001010: ["mod_fn_a"],
                                         0xffffffffc0001900: ["mod_fn_b"]})
        self.assertEqual(names["other"], {0xffffffff9a000150: ["core_fn"],
                                          0xffffffffc0001010: [], 0xffffffffc0001900: []})

    def test_kernel_frames_get_lines_from_a_configured_vmlinux(self):
        """With `vmlinux` set, the recorded kernel's frames get functions,
        files, lines and inline frames from that image's DWARF, as
        addr2line reads them, whatever the KASLR offset of the recording
        (the mapping's offset is _text as recorded, the image's executable
        segment where it was linked); a recording of another kernel is not
        named from it. An ELF of ours built -O2 -g stands in for the
        image (Debian's vmlinux with DWARF is a 1 GB package)."""
        image = self.compile("inl", "-no-pie")
        addrs = function_addresses(image, ["walk", "outer", "main"])
        _, linked, size = text_segment(image)
        text = 0xffffffff9a000000   # _text as recorded

        def profile(kid):
            kernel = (text, text + size, text, "[kernel.kallsyms]_text", kid)
            return pprof(kernel, [text + a - linked for a in addrs])

        got = self.run_symbolize({"same": profile(build_id(image)), "other": profile("5e" * 20)},
                                 extra="\n    vmlinux: " + image)
        want = addr2line(image, addrs)
        self.assertTrue(any(len(f) > 2 for f in want.values()), "no inline chains to compare")
        for a in addrs:
            self.assertEqual(got["same"].get(text + a - linked), want[a], "address %#x" % a)
        self.assertTrue(all(not frames for frames in got["other"].values()), got["other"])

    def test_other_build_is_never_used(self):
        binary = self.compile("inl")
        addrs = function_addresses(binary, ["walk"])
        off, vaddr, size = text_segment(binary)
        mapping = (BASE + vaddr, BASE + vaddr + size, off, binary, "00" * 20)
        got = self.run_symbolize({"p": pprof(mapping, [BASE + a for a in addrs])})["p"]
        self.assertTrue(all(not frames for frames in got.values()), got)
        self.assertIn("not found", self.log)

    def test_jit_code_named_from_perf_map_of_its_pid(self):
        jit = self.path("jit")
        os.makedirs(jit)
        with open(os.path.join(jit, "perf-4242.map"), "w") as f:
            f.write("7f1000001000 100 LazyCompile:*hot app.js:10\n"
                    "7f1000001100 80 Builtin:Call\n"
                    "7f1000001000 40 LazyCompile:*rewritten app.js:10\n")   # later wins
        mapping = (0x7f1000000000, 0x7f1000100000, 0, "//anon", "")
        addrs = [0x7f1000001010, 0x7f1000001050, 0x7f1000001120, 0x7f1000009000]
        got = self.run_symbolize({"4242-a": pprof(mapping, addrs), "77-b": pprof(mapping, addrs)},
                                 extra="\n    perf_map_dir: " + jit)
        names = {a: [f[0] for f in frames] for a, frames in got["4242-a"].items()}
        self.assertEqual(names, {0x7f1000001010: ["LazyCompile:*rewritten app.js:10"],
                                 0x7f1000001050: ["LazyCompile:*hot app.js:10"],
                                 0x7f1000001120: ["Builtin:Call"],
                                 0x7f1000009000: []})
        # another process's JIT map is not used for pid 77
        self.assertTrue(all(not frames for frames in got["77-b"].values()))
        # a mapping named as perf names a process's anonymous memory says
        # whose it is, in a record with no pid label (all processes in one)
        named = (0x7f1000000000, 0x7f1000100000, 0, "/tmp/perf-4242.map", "")
        got = self.run_symbolize({"all": pprof(named, addrs[:1])},
                                 extra="\n    perf_map_dir: " + jit, where="merged")["all"]
        self.assertEqual([f[0] for f in got[addrs[0]]], ["LazyCompile:*rewritten app.js:10"])
