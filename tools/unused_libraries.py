#!/usr/bin/env python3
"""Finds the shared libraries a program is linked against but never uses, so that empty stand-ins can replace them.

Debian's libtorch_cpu names OpenCV, FFmpeg, ZeroMQ, LMDB and LevelDB in its DT_NEEDED entries (Caffe2 operators
built against them) yet imports no symbol from any of them. Loading them drags in ~230 more libraries (GDAL, Qt 5,
GTK, codecs) and their constructors: a third of every start of a program linked to libtorch. An empty library
with the same soname satisfies the loader, and nothing is lost because nothing was called.

A soname is replaceable when every object that needs it, in what is still loaded, imports none of its symbols and
requires none of its symbol versions. Replacing it unloads its whole subtree, which can make more sonames
replaceable; the search repeats until nothing changes. The result is then checked as a whole: no symbol that a
remaining object imports may be defined by an object that is no longer loaded (that catches a library relying on
another one's dependencies, and a definition that would have interposed).

  unused_libraries.py list ROOT... [-- OTHER...]  print the sonames replaceable among what the ROOTs load and
                                               the OTHERs do not, when all are loaded
  unused_libraries.py check STANDINS [--opens LIBRARY]... PROGRAM...
                                               exit 1 unless every stand-in in STANDINS is replaceable for each
                                               PROGRAM and each PROGRAM loads them instead of the real libraries;
                                               a LIBRARY the programs open at run time (libtorch's side of the
                                               engine, with libtorch) counts as theirs, found from the program
"""
import os
import re
import subprocess
import sys
from functools import lru_cache

# The C library's parts are never replaced: the loader treats them specially and everything uses them.
PROTECTED = re.compile(r"^(ld-linux.*|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl)\.so(\.|$)")
SYMBOL = re.compile(r"^\s*\d+:\s+[0-9a-f]+\s+\S+\s+\S+\s+(\S+)\s+\S+\s+(\S+)\s+(\S+)")


class Elf:
    def __init__(self, path):
        self.path = path
        self.soname, self.needed, self.runpath, self.rpath = None, [], [], []
        self.imports, self.weak_imports, self.exports, self.version_files = set(), set(), set(), set()
        text = subprocess.run(["readelf", "-W", "-d", "--dyn-syms", "-V", path], capture_output=True, text=True,
                              check=True).stdout
        for line in text.splitlines():
            if "(SONAME)" in line:
                self.soname = line.split("[", 1)[1].rstrip("]")
            elif "(NEEDED)" in line:
                self.needed.append(line.split("[", 1)[1].rstrip("]"))
            elif "(RUNPATH)" in line or "(RPATH)" in line:
                dirs = line.split("[", 1)[1].rstrip("]").split(":")
                origin = os.path.dirname(os.path.realpath(path))
                dirs = [d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin) for d in dirs if d]
                (self.runpath if "(RUNPATH)" in line else self.rpath).extend(dirs)
            elif "File: " in line:
                self.version_files.add(line.split("File: ", 1)[1].split()[0])
            else:
                match = SYMBOL.match(line)
                if not match:
                    continue
                bind, index, name = match.groups()
                name = name.split("@", 1)[0]
                if not name or bind == "LOCAL":
                    continue
                if index == "UND":
                    (self.weak_imports if bind == "WEAK" else self.imports).add(name)
                else:
                    self.exports.add(name)


@lru_cache(maxsize=None)
def elf(path):
    return Elf(path)


@lru_cache(maxsize=None)
def ldconfig_cache():
    found = {}
    text = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in text.splitlines():
        match = re.match(r"^\s*(\S+) \(([^)]*)\) => (\S+)$", line)
        if match and "x86-64" in match.group(2) and match.group(1) not in found:
            found[match.group(1)] = match.group(3)
    return found


def resolve(soname, loader, program, ignored_dirs):
    """The file the loader would open for soname, as ld.so(8) orders the search (without LD_LIBRARY_PATH)."""
    if "/" in soname:
        return soname
    dirs = loader.runpath if loader.runpath else loader.rpath + (program.rpath if program else [])
    for directory in dirs:
        candidate = os.path.join(directory, soname)
        if os.path.realpath(directory) not in ignored_dirs and os.path.exists(candidate):
            return candidate
    if soname in ldconfig_cache():
        return ldconfig_cache()[soname]
    for directory in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"):
        candidate = os.path.join(directory, soname)
        if os.path.exists(candidate):
            return candidate
    return None


def closure(roots, skipped, ignored_dirs):
    """Every object loaded for roots (the first may be a program) when the sonames in skipped load nothing:
    {real path: Elf}, and {soname: [Elf that needs it]} for every soname named by a loaded object."""
    loaded, users = {}, {}
    queue = [os.path.realpath(root) for root in roots]
    program = elf(queue[0])
    while queue:
        path = queue.pop(0)
        if path in loaded:
            continue
        loaded[path] = elf(path)
        for soname in loaded[path].needed:
            users.setdefault(soname, []).append(loaded[path])
            if soname in skipped:
                continue
            target = resolve(soname, loaded[path], program, ignored_dirs)
            if target is None:
                raise SystemExit(f"unused_libraries: {soname} (needed by {path}) is not found")
            queue.append(os.path.realpath(target))
    return loaded, users


def first_definitions(loaded):
    """{symbol: the object that defines it first in the loader's search order (breadth first, as loaded)}."""
    first = {}
    for path, info in loaded.items():
        for name in info.exports:
            first.setdefault(name, path)
    return first


def replaceable(roots, ignored_dirs=(), others=()):
    """The replaceable sonames among what roots load, when others are loaded too; only libraries that roots load
    and others do not are candidates (what Qt or libzip loads stays whole, whether it uses it or not)."""
    root_names = {elf(os.path.realpath(root)).soname for root in list(roots) + list(others)}
    allowed = set(closure(roots, set(), ignored_dirs)[0])
    if others:
        allowed -= set(closure(others, set(), ignored_dirs)[0])
    roots = list(roots) + list(others)
    full, _ = closure(roots, set(), ignored_dirs)
    skipped = set()
    while True:
        loaded, users = closure(roots, skipped, ignored_dirs)
        grown = set()
        for soname, needers in users.items():
            if soname in skipped or PROTECTED.match(soname) or soname in root_names:
                continue
            target = resolve(soname, needers[0], None, ignored_dirs)
            if target is None or os.path.realpath(target) not in allowed:
                continue
            exports = elf(os.path.realpath(target)).exports
            if all(not (user.imports | user.weak_imports) & exports and soname not in user.version_files
                   for user in needers):
                grown.add(soname)
        if not grown:
            break
        skipped |= grown
    loaded, users = closure(roots, skipped, ignored_dirs)
    before, after = first_definitions(full), first_definitions(loaded)
    for user in loaded.values():
        for name in sorted(user.imports | user.weak_imports):
            if before.get(name) != after.get(name):
                raise SystemExit(f"unused_libraries: {user.path} would bind {name} to {after.get(name)} instead of "
                                 f"{before.get(name)}: nothing is replaced")
    return sorted(s for s in skipped if s in users), len(full), len(loaded)


def check(program, standins, opens=()):
    present = sorted(name for name in os.listdir(standins) if ".so" in name)
    names, before, _ = replaceable([program, *opens], ignored_dirs={standins})
    unsafe = [name for name in present if name not in names]
    if unsafe:
        print(f"{program}: stand-ins for libraries it uses: {', '.join(unsafe)}", file=sys.stderr)
        return 1
    env = dict(os.environ, LD_TRACE_LOADED_OBJECTS="1")
    env.pop("LD_LIBRARY_PATH", None)
    trace = subprocess.run([program], env=env, capture_output=True, text=True).stdout
    mapping = dict(re.findall(r"^\s*(\S+) => (\S+)", trace, re.M))
    loaded = len(re.findall(r"^\s*\S+ (=>|\()", trace, re.M))
    # What the opened libraries load is not in the program's trace: resolved as the loader would, from the program.
    if opens:
        opened, _ = closure([program, *opens], set(), ())
        for path, info in opened.items():
            if info.soname:
                mapping.setdefault(info.soname, path)
        loaded = len(opened)
    wrong = [name for name in present
             if name not in mapping or os.path.dirname(os.path.realpath(mapping[name])) != standins]
    if wrong or not present:
        print(f"{program}: loads the real {', '.join(wrong) or 'libraries (no stand-ins)'}", file=sys.stderr)
        return 1
    print(f"{program}: {len(present)} stand-ins; {loaded} objects loaded, {before} without them")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "list":
        roots = argv[1:argv.index("--")] if "--" in argv else argv[1:]
        others = argv[argv.index("--") + 1:] if "--" in argv else []
        names, before, after = replaceable(roots, others=others)
        print(f"# {len(names)} sonames replaced: {before} objects loaded -> {after}", file=sys.stderr)
        print(";".join(names))
        return 0
    if len(argv) >= 3 and argv[0] == "check":
        standins = os.path.realpath(argv[1])
        rest, opens = argv[2:], []
        while len(rest) >= 2 and rest[0] == "--opens":
            opens.append(rest[1])
            rest = rest[2:]
        return max(check(program, standins, opens) for program in rest)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
