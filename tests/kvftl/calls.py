#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
Calls follow the layers, as includes do (layers.py): no file of kvftl/ calls a
function defined in a file of a layer above its own (docs/kvftl.md, "## Layers"
table), and no two files of kvftl/ or of hw/kvssd/ call each other, directly or
round a longer cycle. What a lower layer needs from a higher one it asks
through a callback the owner registers (struct gc_owner), which is no call.

A small C tokenizer, not a compiler: comments, string and character literals
are dropped; a function definition is a name followed by a parenthesised list
and a '{' at file scope; a call is a name followed by '(' inside a body (or a
macro's replacement text), not after '.' or '->'. A call counts when the name
is defined in one of the files scanned: in the caller's own file first (a
static function), else in a header (static inline) or as a non-static function
of a .c. A file and its header (nand.c, nand.h) are one node of the cycle check.

ALLOWED lists the calls that break these rules today, each with the change
that removes it. A listed call that is no longer in the tree fails the check
too, so the list only shrinks when the change lands.

Usage: calls.py SOURCE_ROOT   (prints TAP; exits 1 on any violation)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layers import read_layers, source_files  # noqa: E402

# (caller file, callee function): what the call is, and the change that removes it. One line each.
# fmt: off
ALLOWED = {
}
# fmt: on

KEYWORDS = {
    "if", "for", "while", "switch", "return", "sizeof", "do", "else", "case", "goto",
    "_Alignof", "alignof", "__alignof__", "__attribute__", "__typeof__", "typeof",
    "_Static_assert", "static_assert", "_Generic", "defined", "__asm__", "asm",
    "__builtin_expect", "__builtin_offsetof", "offsetof",
}

TOKEN = re.compile(r"""
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>\.?[0-9][A-Za-z0-9_.]*)
  | (?P<arrow>->)
  | (?P<newline>\n)
  | (?P<punct>[^\sA-Za-z0-9_])
""", re.S | re.X)


def tokens(text):
    """(kind, value, line) of @text: preprocessor lines give ("pp", line text, line)."""
    line = 1
    at_line_start = True
    pos = 0
    n = len(text)
    while pos < n:
        c = text[pos]
        if c in " \t\r\f\v":
            pos += 1
            continue
        if at_line_start and c == "#":
            # a directive to its end, continuation lines included
            end = pos
            while True:
                nl = text.find("\n", end)
                if nl < 0:
                    nl = n
                if nl > 0 and text[nl - 1] == "\\" and nl < n:
                    end = nl + 1
                    continue
                break
            directive = text[pos:nl]
            yield ("pp", directive, line)
            line += directive.count("\n")
            pos = nl
            continue
        m = TOKEN.match(text, pos)
        if not m:
            pos += 1
            continue
        kind = m.lastgroup
        value = m.group(kind)
        pos = m.end()
        if kind == "newline":
            line += 1
            at_line_start = True
            continue
        at_line_start = False
        if kind in ("comment", "string"):
            line += value.count("\n")
            continue
        yield (kind, value, line)


def scan(path):
    """definitions {name: (static, line)} and calls [(caller, callee, line)] of one file."""
    with open(path, encoding="utf-8") as f:
        toks = list(tokens(f.read()))
    defs, calls = {}, []
    depth = 0
    current = "<file scope>"
    storage = []  # identifiers of the declaration being read at file scope
    i = 0
    while i < len(toks):
        kind, value, line = toks[i]
        if kind == "pp":
            m = re.match(r"#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?(.*)", value, re.S)
            if m:
                body = list(tokens(m.group(3).replace("\\\n", " \n")))
                for j, (k, v, ln) in enumerate(body):
                    if (k == "ident" and v not in KEYWORDS and j + 1 < len(body) and body[j + 1][1] == "("
                            and (j == 0 or body[j - 1][1] not in (".", "->"))):
                        calls.append((f"macro {m.group(1)}", v, line + ln - 1))
            i += 1
            continue
        if depth == 0:
            if value in (";", "}"):
                storage = []
            if kind == "ident" and i + 1 < len(toks) and toks[i + 1][1] == "(" and value not in KEYWORDS:
                # find the matching ')' and look past attributes for '{'
                j, par = i + 1, 0
                while j < len(toks):
                    if toks[j][1] == "(":
                        par += 1
                    elif toks[j][1] == ")":
                        par -= 1
                        if par == 0:
                            break
                    j += 1
                k = j + 1
                while k < len(toks) and toks[k][1] == "__attribute__":
                    k += 1
                    par = 0
                    while k < len(toks):
                        if toks[k][1] == "(":
                            par += 1
                        elif toks[k][1] == ")":
                            par -= 1
                            if par == 0:
                                break
                        k += 1
                    k += 1
                if k < len(toks) and toks[k][1] == "{":
                    defs[value] = ("static" in storage, line)
                    current = value
                    storage = []
                    i = k  # the '{' below opens the body
                    continue
            if kind == "ident":
                storage.append(value)
        if value == "{":
            depth += 1
        elif value == "}":
            depth -= 1
            if depth == 0:
                current = "<file scope>"
                storage = []
        elif (depth > 0 and kind == "ident" and value not in KEYWORDS and i + 1 < len(toks)
              and toks[i + 1][1] == "(" and toks[i - 1][1] not in (".", "->")):
            calls.append((current, value, line))
        i += 1
    return defs, calls


def module(path):
    """The node of the cycle check: the file without its extension (nand.c and nand.h are one)."""
    return os.path.splitext(path)[0]


def tarjan(nodes, edges):
    """The strongly connected components of the graph, each a sorted list."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    layers = read_layers(os.path.join(root, "docs", "kvftl.md"))
    files = ["kvftl/" + p for p in source_files(os.path.join(root, "kvftl"))]
    files += ["hw/kvssd/" + p for p in source_files(os.path.join(root, "hw", "kvssd"))]

    defs, calls = {}, {}
    for path in files:
        defs[path], calls[path] = scan(os.path.join(root, path))
    # names a file of another module can call: a header's, or a .c's non-static ones
    visible = {}
    for path in files:
        for name, (static, line) in defs[path].items():
            if path.endswith(".h") or not static:
                visible.setdefault(name, []).append(path)

    ambiguous = []
    # module -> {module: [(caller file, caller, callee, line, allowed)]}: every call, and those not allowed
    everything, edges = {}, {}
    used_allowed = set()
    upward = []
    for path in files:
        own = module(path)
        for caller, callee, line in calls[path]:
            if callee in defs[path]:
                continue
            targets = [t for t in visible.get(callee, ()) if t != path]
            if not targets:
                continue
            if len(targets) > 1:
                if module(path) in {module(t) for t in targets}:
                    continue  # own header's declaration and own .c's definition
                ambiguous.append(f"{path}:{line} {callee}() is defined in {' and '.join(targets)}")
                continue
            target = targets[0]
            if module(target) == own:
                continue
            allowed = (path, callee) in ALLOWED
            if allowed:
                used_allowed.add((path, callee))
            site = (path, caller, callee, line, allowed)
            everything.setdefault(own, {}).setdefault(module(target), []).append(site)
            if not allowed:
                edges.setdefault(own, {}).setdefault(module(target), []).append(site)
            rel, trel = path[len("kvftl/"):], target[len("kvftl/"):]
            if path.startswith("kvftl/") and target.startswith("kvftl/") and rel in layers and trel in layers:
                (r, name), (tr, tname) = layers[rel], layers[trel]
                if tr > r:
                    entry = (f"{path}:{line} {caller}() calls {callee}() of {target}, layer {tr} {tname}, "
                             f"above its own layer {r} {name}")
                    upward.append((allowed, entry, (path, callee)))

    nodes = {module(p) for p in files}
    tests = []

    def report(ok, title, lines):
        tests.append((ok, title, lines))

    up_bad = [e for allowed, e, _ in upward if not allowed]
    up_known = [f"{e} (allowed: {ALLOWED[key]})" for allowed, e, key in upward if allowed]
    report(not up_bad, "kvftl: no call from a layer to a function of a layer above it", up_bad + up_known)

    def cycle_lines(comp, graph):
        lines = []
        for m in comp:
            for t, sites in sorted(graph.get(m, {}).items()):
                if t in comp:
                    for path, caller, callee, line, allowed in sites:
                        why = f" (allowed: {ALLOWED[(path, callee)]})" if allowed else ""
                        lines.append(f"  {path}:{line} {caller}() calls {callee}() of {t}{why}")
        return lines

    for area in ("kvftl", "hw/kvssd"):
        known = [c for c in tarjan(nodes, everything) if len(c) > 1 and c[0].startswith(area + "/")]
        left = [c for c in tarjan(nodes, edges) if len(c) > 1 and c[0].startswith(area + "/")]
        lines = []
        for comp in left:
            lines.append("cycle: " + " <-> ".join(comp))
            lines += cycle_lines(comp, edges)
        for comp in known:
            if comp in left:
                continue
            lines.append("cycle that only ALLOWED calls close: " + " <-> ".join(comp))
            lines += [ln for ln in cycle_lines(comp, everything) if "(allowed: " in ln]
        report(not left, f"{area}: no cycle of calls between its files but through ALLOWED calls", lines)

    stale = [f"{p} no longer calls {c}(): take it off ALLOWED ({why})"
             for (p, c), why in sorted(ALLOWED.items()) if (p, c) not in used_allowed]
    report(not stale, "every call ALLOWED lists is still made", stale)
    report(not ambiguous, "every called name is defined once", ambiguous)

    print(f"1..{len(tests)}")
    for n, (ok, title, lines) in enumerate(tests, 1):
        print(f"{'ok' if ok else 'not ok'} {n} - {title}")
        for line in lines:
            print(f"# {line}")
    return 0 if all(ok for ok, _, _ in tests) else 1


if __name__ == "__main__":
    sys.exit(main())
