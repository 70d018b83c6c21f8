#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A machine without CUnit and libxxhash-dev still builds the host tools.

usage: minimal_build.py SOURCE_ROOT

Simulates the missing packages without uninstalling anything: pkg-config
sees a directory holding every system .pc file except cunit.pc and
libxxhash.pc (PKG_CONFIG_LIBDIR). With the default options (tests and
firmware `auto`), meson setup must succeed with the unit tests and the
firmware off, ninja must build libkvssd, the kvssd CLI, libkvapi and kvbench (without
its rawhash engine, which needs xxhash.h), and
`meson install --destdir` must install them. TAP.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HIDDEN = ('cunit.pc', 'libxxhash.pc')


def main():
    src = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix='kvssd-minimal-')
    results = []

    def check(ok, what):
        results.append((bool(ok), what))
        return ok

    try:
        pcdir = os.path.join(tmp, 'pc')
        os.mkdir(pcdir)
        path = subprocess.run(['pkg-config', '--variable', 'pc_path', 'pkg-config'],
                              capture_output=True, text=True).stdout.strip()
        for d in path.split(':') + os.environ.get('PKG_CONFIG_PATH', '').split(':'):
            for f in glob.glob(os.path.join(d, '*.pc')) if d else []:
                b = os.path.basename(f)
                if b not in HIDDEN and not os.path.exists(os.path.join(pcdir, b)):
                    os.symlink(f, os.path.join(pcdir, b))
        env = dict(os.environ, PKG_CONFIG_LIBDIR=pcdir)
        env.pop('PKG_CONFIG_PATH', None)
        build = os.path.join(tmp, 'build')
        r = subprocess.run(['meson', 'setup', build, src], capture_output=True, text=True, env=env)
        if check(r.returncode == 0, 'meson setup succeeds without cunit.pc and libxxhash.pc'):
            targets = {t['name'] for t in json.load(
                open(os.path.join(build, 'meson-info', 'intro-targets.json')))}
            check('kvftl' not in targets and not any(t.startswith('test_') for t in targets),
                  'neither kvftl nor a unit test is a target (firmware and tests auto: off)')
            check({'kvssd', 'kvapi', 'kvbench'} <= targets,
                  'libkvssd, kvssd, libkvapi and kvbench are targets')
            n = subprocess.run(['ninja', '-C', build], capture_output=True, text=True, env=env)
            if check(n.returncode == 0, 'ninja builds them'):
                v = subprocess.run([os.path.join(build, 'host', 'kvssd'), '--version'],
                                   capture_output=True, text=True)
                check(v.returncode == 0 and v.stdout.startswith('kvssd '),
                      'the built kvssd runs (--version: %r)' % v.stdout.strip())
                kb = subprocess.run([os.path.join(build, 'host', 'kvbench'), '--engine', 'rawhash',
                                     '--rawhash-dev', '/nonexistent'],
                                    capture_output=True, text=True)
                check(kb.returncode == 2 and 'built without xxhash.h' in kb.stderr,
                      'the built kvbench refuses the rawhash engine with a sentence (%r)'
                      % kb.stderr.strip())
                dest = os.path.join(tmp, 'root')
                i = subprocess.run(['meson', 'install', '-C', build, '--destdir', dest,
                                    '--no-rebuild', '--quiet'], capture_output=True, text=True)
                installed = sorted(os.path.relpath(os.path.join(dp, f), dest)
                                   for dp, _, fs in os.walk(dest) for f in fs)
                for f in installed:
                    print('# installed: ' + f)
                check(i.returncode == 0 and any(f.endswith('bin/kvssd') for f in installed)
                      and any(f.endswith('pkgconfig/libkvssd.pc') for f in installed),
                      'meson install --destdir installs bin/kvssd and libkvssd.pc')
            else:
                print('# ' + n.stdout[-3000:].replace('\n', '\n# '))
        else:
            print('# ' + (r.stdout + r.stderr)[-3000:].replace('\n', '\n# '))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('1..%d' % len(results))
    for n, (ok, what) in enumerate(results, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', n, what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
