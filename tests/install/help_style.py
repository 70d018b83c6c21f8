#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every tool's --help and usage errors follow CONTRIBUTING.md "Help style".

usage: help_style.py TOOL=REF...    (REF: the man page, kvssd(1), or a doc)
For each TOOL, one TAP line per rule:
  --help: exit 0, stdout only; first line "usage: NAME" then " ..."; an
  "options:" line (and "commands:" before it when the usage line names
  <command> or [a|b]); every option's text starts at column 28, or on the
  next line there when the option is longer; "default" only as a last
  "Default: X." of an option's text; the last line "See [... and ]REF.".
  `TOOL --no-such-option` and `TOOL no-such-argument`: exit 2, stdout empty, stderr "NAME: sentence"
  then "(run NAME --help for usage)" as its last line.
  A value out of range (RANGE_ERRORS, one per tool): exit 2, stdout empty,
  stderr exactly the refusal, "NAME is 'X'; it must be RANGE", then that line.
  kvssd and kvbench with no argument (BARE_USAGE): exit 2, stdout empty,
  stderr exactly what --help prints (the usage with the commands), as
  nvme-cli: kvbench does not run a benchmark on a device nobody named.
"""
import os
import re
import subprocess
import sys

COLUMN = 28
n = failed = 0

# A value out of range per tool: its arguments and its exact refusal (bench/usage.h's first line).
RANGE_ERRORS = {
    'kvssd': (['list', '--max-keys', 'x'],
              "kvssd: --max-keys is 'x'; it must be from 0 to 1099511627776"),
    'kvbench': (['--threads', '65'], "kvbench: threads is '65'; it must be from 1 to 64"),
    'kvftl-bench': (['--channels', '65'], "kvftl-bench: --channels is '65'; it must be from 1 to 64"),
    'kvssd-cmd-bench': (['--keys', 'x'],
                        "kvssd-cmd-bench: --keys is 'x'; it must be a number from 1 to 100000"),
}
# The tools that, given no argument, print the usage and exit 2 (the others run their defaults).
BARE_USAGE = {'kvssd', 'kvbench'}


def check(ok, what):
    global n, failed
    n += 1
    failed += not ok
    print('%s %d - %s' % ('ok' if ok else 'not ok', n, what))


def options(lines):
    """(line number, text) of each option: its line and the lines indented below it."""
    opts, cur = [], None
    for i, l in enumerate(lines):
        if re.match(r'  (-\w, |    )?--?\w', l):
            cur = [i, l]
            opts.append(cur)
        elif cur and l.startswith(' ' * COLUMN):
            cur[1] += '\n' + l
        else:
            cur = None
    return opts


def help_rules(tool, name, ref):
    p = subprocess.run([tool, '--help'], capture_output=True, text=True)
    check(p.returncode == 0 and p.stderr == '' and p.stdout,
          '%s --help exits 0 (got %d) on stdout, nothing on stderr (got %r)'
          % (name, p.returncode, p.stderr[:80]))
    lines = p.stdout.rstrip('\n').split('\n')
    check(re.fullmatch(r'usage: %s( \S.*)?' % re.escape(name), lines[0]) is not None,
          '%s --help: first line "usage: %s ..." (got %r)' % (name, name, lines[0]))
    has_cmds = re.search(r'<command>|\[[a-z-]+(\|[a-z-]+)+\]', lines[0]) is not None
    want = ['commands:', 'options:'] if has_cmds else ['options:']
    got = [l for l in lines if l in ('commands:', 'options:')]
    check(got == want, '%s --help: sections %s (got %s)' % (name, want, got))
    opts = options(lines[lines.index('options:'):] if 'options:' in lines else lines)
    bad = []
    for _, text in opts:
        first = text.split('\n')[0]
        spec = re.match(r'  ((-\w, |    )?--?[\w-]+( [^ ]+)?)', first).group(1)
        if len(first) > COLUMN and first[COLUMN - 1] == ' ' and first[COLUMN] != ' ' \
                and first[2 + len(spec):COLUMN].strip() == '':
            continue  # text at the column
        if first.rstrip() == first[:2 + len(spec)] and '\n' in text:
            continue  # a long option, its text on the next line
        bad.append(first.strip()[:40])
    check(opts and not bad, '%s --help: %d options, each text at column %d%s'
          % (name, len(opts), COLUMN, '' if not bad else '; not: %s' % bad[:5]))
    bad = []
    for _, text in opts:
        flat = ' '.join(text.split())
        m = re.search(r'Default: ', flat)
        rest = re.sub(r' Default: [^\n]*\.$', '', flat)
        if re.search(r'\bdefault\b(?!,)', rest, re.I) and not re.search(r': (\S+, )*default,', rest) \
                or (m and rest == flat):
            bad.append(flat[:60])
    check(not bad, '%s --help: a default only as the last "Default: X."%s'
          % (name, '' if not bad else '; not: %s' % bad[:3]))
    check(re.fullmatch(r'See (.+ and )?%s\.' % re.escape(ref), lines[-1]) is not None,
          '%s --help: last line "See %s." (got %r)' % (name, ref, lines[-1]))


def run(tool, args):
    env = dict(os.environ)
    env.pop('KVSSD_DEVICE', None)  # no device: a tool that ran would fail, not use one
    return subprocess.run([tool] + args, capture_output=True, text=True, env=env, timeout=60)


def usage_error_rules(tool, name, arg):
    p = run(tool, [arg])
    err = p.stderr.rstrip('\n').split('\n')
    check(p.returncode == 2 and p.stdout == '',
          '%s %s exits 2 (got %d), stdout empty' % (name, arg, p.returncode))
    check(len(err) >= 2 and re.fullmatch(r'%s: \S.*' % re.escape(name), err[0]) is not None
          and err[-1] == '(run %s --help for usage)' % name,
          '%s %s: stderr "%s: ..." then "(run %s --help for usage)" (got %r)'
          % (name, arg, name, name, p.stderr[:160]))


def range_error_rule(tool, name):
    if name not in RANGE_ERRORS:
        check(False, '%s: no value-out-of-range case in RANGE_ERRORS' % name)
        return
    args, refusal = RANGE_ERRORS[name]
    p = run(tool, args)
    want = '%s\n(run %s --help for usage)\n' % (refusal, name)
    check((p.returncode, p.stdout, p.stderr) == (2, '', want),
          '%s %s: exit 2 (got %d), stderr %r (got %r)'
          % (name, ' '.join(args), p.returncode, want, p.stderr[:200]))


def bare_rule(tool, name):
    p, h = run(tool, []), run(tool, ['--help'])
    check((p.returncode, p.stdout) == (2, '') and h.stdout and p.stderr == h.stdout,
          '%s with no argument: exit 2 (got %d), stdout empty, stderr the --help text '
          '(got %r)' % (name, p.returncode, p.stderr[:120]))


def main():
    for arg in sys.argv[1:]:
        tool, ref = arg.rsplit('=', 1)
        name = os.path.basename(tool)
        help_rules(tool, name, ref)
        usage_error_rules(tool, name, '--no-such-option')
        usage_error_rules(tool, name, 'no-such-argument')
        range_error_rule(tool, name)
        if name in BARE_USAGE:
            bare_rule(tool, name)
    print('1..%d' % n)
    return 1 if failed or not n else 0


if __name__ == '__main__':
    sys.exit(main())
