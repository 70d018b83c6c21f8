#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
kvftl's folders and includes follow its layers: every file of kvftl/ sits in
the folder its layer's row names, no file includes a header of a layer above
its own, and none includes a wire header (<kvssd/...>).

The layers are written once, in the "## Layers" table of docs/kvftl.md:
each row is "| <rank> <name> | <paths in backticks> | <what it owns> |",
rank 0 at the bottom, each path relative to kvftl/ ("media/nand.c"). Every
file of kvftl/ (its folders included) must be in exactly one row, at the
path the row gives: a file moved to another folder is in no row until the
table says which layer that folder is. Every folder is an include directory
(kvftl/meson.build), so a file includes another's header by its name alone:
names are unique across the folders. A file may include its own layer's
headers and those of lower layers, system and library headers (<...>), and
the firmware's public headers (<kvftl/...>).

The calls follow the same table: calls.py (test kvftl_calls).

Usage: layers.py SOURCE_ROOT   (prints TAP; exits 1 on any violation)
"""
import os
import re
import sys


def read_layers(doc):
    """{path under kvftl/: (rank, layer name)} from the Layers table of docs/kvftl.md."""
    layers = {}
    in_section = False
    with open(doc, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_section = line.strip() == "## Layers"
                continue
            if not in_section:
                continue
            m = re.match(r"\|\s*(\d+)\s+([^|]+?)\s*\|([^|]*)\|", line)
            if not m:
                continue
            rank, name = int(m.group(1)), m.group(2)
            for path in re.findall(r"`([^`]+)`", m.group(3)):
                if path in layers:
                    raise SystemExit(f"{doc}: {path} is in two layers")
                layers[path] = (rank, name)
    return layers


def source_files(src):
    """The .c and .h files under @src, as paths relative to it, sorted."""
    found = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for name in filenames:
            if name.endswith((".c", ".h")):
                found.append(os.path.relpath(os.path.join(dirpath, name), src))
    return sorted(found)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    doc = os.path.join(root, "docs", "kvftl.md")
    src = os.path.join(root, "kvftl")
    layers = read_layers(doc)
    if not layers:
        print("1..1")
        print(f"not ok 1 - no Layers table in {doc}")
        return 1
    files = source_files(src)
    by_name = {}
    for path in files:
        by_name.setdefault(os.path.basename(path), []).append(path)
    by_table_name = {os.path.basename(p): p for p in layers}
    print(f"1..{len(files) + 2}")
    failed = 0
    for n, path in enumerate(files, 1):
        problems = []
        name = os.path.basename(path)
        if len(by_name[name]) > 1:
            problems.append(f"{name} is in {len(by_name[name])} folders ({' '.join(by_name[name])}): "
                            "a file includes a header by its name alone")
        if path not in layers:
            if name in by_table_name:
                want = by_table_name[name]
                rank, layer = layers[want]
                problems.append(f"{path} is in folder {os.path.dirname(path) or '.'}/, but its layer "
                                f"{rank} {layer} is in {os.path.dirname(want) or '.'}/ (docs/kvftl.md "
                                f"names {want})")
            else:
                problems.append(f"{path} is in no layer of the Layers table in docs/kvftl.md")
        else:
            rank, layer = layers[path]
            with open(os.path.join(src, path), encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
                    if not m:
                        continue
                    kind, inc = m.groups()
                    where = f"{path}:{lineno}"
                    if kind == "<":
                        if inc.startswith("kvssd/"):
                            problems.append(f"{where} includes the wire header <{inc}>: the firmware "
                                            "speaks its own API (include/kvftl/kvftl.h)")
                        continue
                    target = by_table_name.get(inc)
                    if "/" in inc or target is None:
                        problems.append(f'{where} includes "{inc}", which is in no layer (a header '
                                        "is included by its name, its folder is an include directory)")
                        continue
                    irank, ilayer = layers[target]
                    if irank > rank:
                        problems.append(f'{where} includes "{inc}" of layer {irank} {ilayer}, above '
                                        f"its own layer {rank} {layer}")
        if problems:
            failed += 1
            print(f"not ok {n} - {path}")
            for p in problems:
                print(f"# {p}")
        else:
            rank, layer = layers[path]
            print(f"ok {n} - {path} (layer {rank} {layer})")
    missing = sorted(set(layers) - set(files))
    if missing:
        failed += 1
        print(f"not ok {len(files) + 1} - the Layers table names only files of kvftl/")
        print(f"# not in kvftl/: {' '.join(missing)}")
    else:
        print(f"ok {len(files) + 1} - the Layers table names only files of kvftl/")
    # kvftl/meson.build's include directories are the folders that hold a header.
    want_dirs = sorted({os.path.dirname(p) or "." for p in files if p.endswith(".h")})
    with open(os.path.join(src, "meson.build"), encoding="utf-8") as f:
        m = re.search(r"kvftl_internal\s*=\s*include_directories\(([^)]*)\)", f.read())
    have_dirs = sorted(re.findall(r"'([^']+)'", m.group(1))) if m else []
    if have_dirs != want_dirs:
        failed += 1
        print(f"not ok {len(files) + 2} - kvftl/meson.build's kvftl_internal is every folder with a header")
        print(f"# kvftl_internal: {' '.join(have_dirs) or '(none)'}; folders with a header: "
              f"{' '.join(want_dirs)}")
    else:
        print(f"ok {len(files) + 2} - kvftl/meson.build's kvftl_internal is every folder with a header")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
