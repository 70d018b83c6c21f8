#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A functional check of kvssd-cmd-bench (no timing is asserted).

usage: check_json.py KVSSD_CMD_BENCH
Runs a tiny sequence (--keys 8 --reps 2 --json): it exits 0 (every command
completed with the status, DW0 and DW1 the protocol names, every value read
back), prints one JSON object with every scenario once, with the commands
per Store that libkvssd's plan gives, and numbers where the times go.
TAP, one line per check.
"""
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError:  # python3-jsonschema: the provenance check is then by fields only
    jsonschema = None

PROVENANCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'host',
                          'schemas', 'provenance.schema.json')

# scenario -> (kind, value bytes, commands per op) for 16-byte keys:
# stock head 24 - 16 = 8 bytes, full head 35, stock transfer 28, full 56.
EXPECTED = {
    'store-64': ('store', 64, 1),
    'store-4k': ('store', 4096, 1),
    'retrieve-64': ('retrieve', 64, 1),
    'retrieve-4k': ('retrieve', 4096, 1),
    'exist-64': ('exist', 64, 1),
    'exist-4k': ('exist', 4096, 1),
    'inline-stock-64': ('store', 64, 1 + 2),        # 8 + 28 + 28
    'inline-full-64': ('store', 64, 1 + 1),         # 35 + 29
    'inline-stock-4k': ('store', 4096, 1 + 146),    # 8 + 146 x 28 >= 4096
    'inline-full-4k': ('store', 4096, 1 + 73),      # 35 + 73 x 56 >= 4096
    'hybrid-stock-4k+64': ('store', 4160, 1 + 2),   # 4096 by pointer, 8 + 2 x 28
    'hybrid-full-4k+64': ('store', 4160, 1 + 1),    # 4096 by pointer, 8 + 56
}
SUMMARIES = ['ns_per_command', 'ns_per_op', 'firmware_ns_per_op', 'cmdset_ns_per_op']


def main():
    results = []

    def check(ok, what):
        results.append((bool(ok), what))
        return ok

    run = subprocess.run([sys.argv[1], '--keys', '8', '--reps', '2', '--json'],
                         capture_output=True, text=True)
    check(run.returncode == 0, 'exit status 0 (got %d: %s)' % (run.returncode, run.stderr.strip()))
    try:
        doc = json.loads(run.stdout)
    except ValueError as e:
        check(False, 'the output is one JSON object (%s)' % e)
        return report(results)
    check(doc.get('errors') == 0, 'no unexpected completion (errors %r)' % doc.get('errors'))
    check(doc.get('verify_mismatches') == 0,
          'every value reads back (mismatches %r)' % doc.get('verify_mismatches'))
    check(doc.get('keys') == 8 and doc.get('reps') == 2, 'keys 8 and reps 2 are echoed')
    prov = doc.get('provenance', {})
    dev = prov.get('device') or {}
    got = (prov.get('tool'), prov.get('command_line', [None])[1:], dev.get('preset'),
           dev.get('index'), dev.get('firmware'))
    want = ('kvssd-cmd-bench', ['--keys', '8', '--reps', '2', '--json'], 'default', 'hash',
            'kvftl1.0')
    check(got == want, 'provenance: tool, command line, device configuration %r' % (got,))
    if jsonschema is not None:
        with open(PROVENANCE, encoding='utf-8') as f:
            errs = list(jsonschema.Draft202012Validator(json.load(f)).iter_errors(prov))
        check(not errs, 'provenance validates against provenance.schema.json %s' %
              [e.message for e in errs[:2]])
    # numbers as every tool reads them (include/bench/units.h): 1e1 is 10, 0x2 is 2;
    # --batch 1k (1000) is past KVSSD_BH_BATCH, 128
    run2 = subprocess.run([sys.argv[1], '--keys', '1e1', '--reps', '0x2', '--batch', '1k',
                           '--json'], capture_output=True, text=True)
    check(run2.returncode == 2 and run2.stderr ==
          "kvssd-cmd-bench: --batch is '1k'; it must be a number from 1 to %d\n"
          "(run kvssd-cmd-bench --help for usage)\n"
          % 128, "--batch 1k: exit 2 and the sentence (%r)" % run2.stderr)
    run2 = subprocess.run([sys.argv[1], '--keys', '1e1', '--reps', '0x2', '--json'],
                          capture_output=True, text=True)
    doc2 = json.loads(run2.stdout) if run2.returncode == 0 else {}
    check((doc2.get('keys'), doc2.get('reps')) == (10, 2),
          '--keys 1e1 --reps 0x2 are 10 and 2 (exit %d: %s)' % (run2.returncode,
                                                               run2.stderr.strip()))
    names = [s.get('name') for s in doc.get('scenarios', [])]
    check(sorted(names) == sorted(EXPECTED), 'every scenario once (got %r)' % names)
    for s in doc.get('scenarios', []):
        want = EXPECTED.get(s.get('name'))
        if not want:
            continue
        got = (s.get('kind'), s.get('value_bytes'), s.get('commands_per_op'))
        check(got == want, '%s: kind, value bytes, commands per op %r (expected %r)'
              % (s['name'], got, want))
        check(s.get('errors') == 0 and s.get('ops') == 8, '%s: 8 ops, no error' % s['name'])
        check(all(isinstance(s.get(k), dict) and
                  s[k].get('best', 1) <= s[k].get('median', 0) <= s[k].get('worst', -1)
                  for k in SUMMARIES),
              '%s: median, best and worst of every time' % s['name'])
        check(0 <= s.get('firmware_share', -1) and s['ns_per_op']['median'] > 0,
              '%s: a firmware share and a positive time' % s['name'])
    return report(results)


def report(results):
    print('1..%d' % len(results))
    for i, (ok, what) in enumerate(results, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', i, what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
