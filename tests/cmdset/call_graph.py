#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""
The command sets' files call each other one way: no file of hw/kvssd's
native library (libkvssd_cmdset.a: kv.c, inline.c, nvm.c, admin.c) calls,
directly or through others, a file that calls it. What a lower file needs
of its owner it asks through a struct of callbacks the owner registers
(inline.c's struct kvssd_inline_owner), so it names none of the owner's
symbols.

Who calls whom is read from the objects: `nm -A` of the archive, an
undefined symbol of one member defined by another member is an edge.

Usage: call_graph.py LIBKVSSD_CMDSET_A   (prints TAP; exits 1 on a cycle)
"""
import os
import subprocess
import sys


def edges(archive):
    """{member: {member it calls}} and the members, from nm -A."""
    out = subprocess.run(["nm", "-A", archive], capture_output=True, text=True, check=True).stdout
    defined, undefined, members = {}, {}, set()
    for line in out.splitlines():
        # "ARCHIVE:MEMBER:ADDRESS KIND NAME"; an undefined symbol has no address
        fields = line.split()
        if len(fields) < 3:
            continue
        member = os.path.basename(fields[0].split(":")[1])
        kind, name = fields[-2], fields[-1]
        members.add(member)
        if kind == "U":
            undefined.setdefault(member, set()).add(name)
        elif kind in "TDBRC":
            defined[name] = member
    graph = {m: set() for m in members}
    for member, names in undefined.items():
        for name in names:
            owner = defined.get(name)
            if owner and owner != member:
                graph[member].add(owner)
    return graph


def cycle_through(graph, start):
    """A call path start -> ... -> start, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(graph[node]):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def main():
    graph = edges(sys.argv[1])
    members = sorted(graph)
    failed = False
    print(f"1..{len(members) + 1}")
    n = 1
    wanted = {"kv.c.o", "inline.c.o", "nvm.c.o", "admin.c.o"}
    missing = wanted - set(members)
    print(f"{'not ok' if missing else 'ok'} {n} - the archive holds {', '.join(sorted(wanted))}"
          + (f" (missing: {', '.join(sorted(missing))})" if missing else ""))
    failed |= bool(missing)
    for m in members:
        n += 1
        path = cycle_through(graph, m)
        calls = ", ".join(sorted(graph[m])) or "nothing"
        if path:
            failed = True
            print(f"not ok {n} - {m} is called back by a file it calls: {' -> '.join(path)}")
        else:
            print(f"ok {n} - {m} calls {calls}, none of which calls it back")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
