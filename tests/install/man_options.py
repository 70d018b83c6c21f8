#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every long option a tool's --help prints appears in its man page.

usage: man_options.py TOOL MANPAGE [DOC.md...]
Runs `TOOL --help`, collects each --option it names, and looks for it in
the roff source (\\- unescaped, font escapes removed). TAP: one line per
option, `not ok` naming the option the man page lacks.

A tool with --list-presets (kvbench): the man page's --preset paragraph and
each DOC's preset list (docs/kvbench.md's "Presets" section: its table's
first column, else its bullet list, else its first paragraph) name exactly the presets `TOOL --list-presets` prints,
which is the tool's preset table. A list may write a range `a` .. `f`
(or …) in the table's order, `char-{insert,update,read}-{seq,uniform,zipfian}`
and `char-insert-*`; one more TAP line per list.
"""
import fnmatch
import re
import subprocess
import sys


def expand(names, token):
    """The presets @token stands for: a name, a brace form or a glob."""
    m = re.fullmatch(r'([^{]*)\{([^}]*)\}(.*)', token)
    if m:
        return [x for alt in m.group(2).split(',') for x in expand(names, m.group(1) + alt + m.group(3))]
    if '*' in token:
        return fnmatch.filter(names, token)
    return [token]


def listed_presets(names, text):
    """The presets a list names: its code (`x`) or bold (\\fBx\\fR) spans, `x` .. `y` a range."""
    spans = [(m.start(), m.end(), (m.group(1) or m.group(2)).replace('\\-', '-'))
             for m in re.finditer(r'`([^`]+)`|\\fB(.+?)\\fR', text)]
    got = []
    for i, (start, _, tok) in enumerate(spans):
        if not re.fullmatch(r'[a-z][a-z0-9{},*-]*', tok):
            continue  # an option, an old name (A .. D), a field
        prev = spans[i - 1][2] if i else None
        if (prev in names and tok in names and
                re.fullmatch(r'\s*(\.\.|…)\s*', text[spans[i - 1][1]:start])):
            got += names[names.index(prev) + 1:names.index(tok) + 1]
        else:
            got += expand(names, tok)
    return got


def preset_lists(page_roff, docs):
    """(where, text) of each list of presets: the man page's --preset paragraph, each doc's."""
    lists = []
    m = re.search(r'\.TP\n\\fB\\-\\-preset\\fR.*?\n(.*?)\n\.TP', page_roff, re.S)
    lists.append(('the man page\'s --preset paragraph', m.group(1) if m else ''))
    for doc in docs:
        text = open(doc, encoding='utf-8').read()
        m = re.search(r'\n##+ Presets[^\n]*\n(.*?)(?=\n##|\Z)', text, re.S)
        section = m.group(1) if m else ''
        rows = [l.split('|')[1] for l in section.split('\n') if l.startswith('| `')]
        # a table: its first column; else its bullet list (up to the first
        # paragraph after it); else the section's first paragraph
        bullets = re.search(r'(?:^|\n)(- .*?)(?=\n\n(?!  )|\Z)', section, re.S)
        body = ('\n'.join(rows) if rows else bullets.group(1) if bullets
                else section.strip().split('\n\n')[0])
        lists.append((doc + '\'s Presets', body))
    return lists


def check_presets(tool, page_roff, docs, n):
    """TAP lines from @n + 1: each list of presets names exactly --list-presets'."""
    out = subprocess.run([tool, '--list-presets'], capture_output=True, text=True,
                         check=True).stdout
    names = [l.split()[0] for l in out.splitlines() if l.strip()]
    failed = 0
    for where, text in preset_lists(page_roff, docs):
        n += 1
        got = listed_presets(names, text)
        missing = [x for x in names if x not in got]
        extra = sorted(set(x for x in got if x not in names))
        ok = bool(names) and not missing and not extra
        failed += not ok
        print('%s %d - %s names the %d presets of --list-presets%s' % (
            'ok' if ok else 'not ok', n, where, len(names),
            '' if ok else ': missing %s, not presets %s' % (missing, extra)))
    return failed


def main():
    tool, page, docs = sys.argv[1], sys.argv[2], sys.argv[3:]
    help_text = subprocess.run([tool, '--help'], capture_output=True, text=True,
                               check=True).stdout
    opts = sorted(set(re.findall(r'(?<![\w-])--[a-z][a-z0-9-]*', help_text)))
    page_roff = open(page, encoding='utf-8').read()
    roff = re.sub(r'\\f[BIRP]', '', page_roff.replace('\\-', '-'))
    if not opts:
        print('1..1\nnot ok 1 - %s --help names no --option' % tool)
        return 1
    presets = '--list-presets' in opts
    print('1..%d' % (len(opts) + (1 + len(docs) if presets else 0)))
    failed = 0
    for i, o in enumerate(opts, 1):
        found = re.search(r'(?<![\w-])' + re.escape(o) + r'(?![\w-])', roff) is not None
        failed += not found
        print('%s %d - %s %s' % ('ok' if found else 'not ok', i, o,
                                 'is in the man page' if found else
                                 'is in --help but missing from ' + page))
    if presets:
        failed += check_presets(tool, page_roff, docs, len(opts))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
