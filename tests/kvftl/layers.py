#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
kvftl's includes follow its layers: no file of kvftl/ includes a header of a
layer above its own, and none includes a wire header (<kvssd/...>).

The layers are written once, in the "## Layers" table of docs/kvftl.md:
each row is "| <rank> <name> | <files in backticks> | <what it owns> |",
rank 0 at the bottom. Every file of kvftl/ must be in exactly one row. A
file may include its own layer's headers and those of lower layers, system
and library headers (<...>), and the firmware's public headers
(<kvftl/...>).

Usage: layers.py SOURCE_ROOT   (prints TAP; exits 1 on any violation)
"""
import os
import re
import sys


def read_layers(doc):
    """{file: (rank, layer name)} from the Layers table of docs/kvftl.md."""
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


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    doc = os.path.join(root, "docs", "kvftl.md")
    src = os.path.join(root, "kvftl")
    layers = read_layers(doc)
    if not layers:
        print("1..1")
        print(f"not ok 1 - no Layers table in {doc}")
        return 1
    files = sorted(f for f in os.listdir(src) if f.endswith((".c", ".h")))
    print(f"1..{len(files) + 1}")
    failed = 0
    for n, name in enumerate(files, 1):
        problems = []
        if name not in layers:
            problems.append(f"{name} is in no layer of the Layers table in docs/kvftl.md")
        else:
            rank, layer = layers[name]
            with open(os.path.join(src, name), encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
                    if not m:
                        continue
                    kind, inc = m.groups()
                    where = f"{name}:{lineno}"
                    if kind == "<":
                        if inc.startswith("kvssd/"):
                            problems.append(f"{where} includes the wire header <{inc}>: the firmware "
                                            "speaks its own API (include/kvftl/kvftl.h)")
                        continue
                    if inc not in layers:
                        problems.append(f'{where} includes "{inc}", which is in no layer')
                        continue
                    irank, ilayer = layers[inc]
                    if irank > rank:
                        problems.append(f'{where} includes "{inc}" of layer {irank} {ilayer}, above '
                                        f"its own layer {rank} {layer}")
        if problems:
            failed += 1
            print(f"not ok {n} - {name}")
            for p in problems:
                print(f"# {p}")
        else:
            rank, layer = layers[name]
            print(f"ok {n} - {name} (layer {rank} {layer})")
    missing = sorted(set(layers) - set(files))
    if missing:
        failed += 1
        print(f"not ok {len(files) + 1} - the Layers table names only files of kvftl/")
        print(f"# not in kvftl/: {' '.join(missing)}")
    else:
        print(f"ok {len(files) + 1} - the Layers table names only files of kvftl/")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
