#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every long option a tool's --help prints appears in its man page.

usage: man_options.py TOOL MANPAGE
Runs `TOOL --help`, collects each --option it names, and looks for it in
the roff source (\\- unescaped, font escapes removed). TAP: one line per
option, `not ok` naming the option the man page lacks.
"""
import re
import subprocess
import sys


def main():
    tool, page = sys.argv[1], sys.argv[2]
    help_text = subprocess.run([tool, '--help'], capture_output=True, text=True,
                               check=True).stdout
    opts = sorted(set(re.findall(r'(?<![\w-])--[a-z][a-z0-9-]*', help_text)))
    roff = open(page, encoding='utf-8').read()
    roff = re.sub(r'\\f[BIRP]', '', roff.replace('\\-', '-'))
    if not opts:
        print('1..1\nnot ok 1 - %s --help names no --option' % tool)
        return 1
    print('1..%d' % len(opts))
    failed = 0
    for i, o in enumerate(opts, 1):
        found = re.search(r'(?<![\w-])' + re.escape(o) + r'(?![\w-])', roff) is not None
        failed += not found
        print('%s %d - %s %s' % ('ok' if found else 'not ok', i, o,
                                 'is in the man page' if found else
                                 'is in --help but missing from ' + page))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
