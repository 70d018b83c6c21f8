#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`meson install --destdir` into a temporary directory, then use the tree
the way a user or another simulator would.

usage: install_check.py BUILD_ROOT SRC_DIR PREFIX LIBDIR BINDIR MANDIR VERSION
                        FIRMWARE(0|1) KVBENCH(0|1) RELOCATABLE(0|1)

Checks (TAP, one line each): the expected files are installed; a C
program builds with `pkg-config --cflags --libs libkvssd` (and, with the
firmware, `kvftl`) from the installed .pc files alone (they are
relocatable: PKG_CONFIG_PATH is the only pointer to the tree; a build
directory configured before pkgconfig.relocatable=true became the default
keeps absolute prefixes, and then copies of the .pc files with the prefix
pointed at the destdir are used, said in a TAP comment) and runs;
the installed tools print the project version for --version and find
libkvssd.so through their rpath. The listing of the tree is printed as TAP
comments.
"""
import os
import shutil
import subprocess
import sys
import tempfile

results = []


def check(ok, what):
    results.append((bool(ok), what))
    return ok


def run(cmd, env=None, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)


def main():
    (build, src, prefix, libdir, bindir, mandir, version, firmware, kvbench,
     relocatable) = sys.argv[1:11]
    firmware, kvbench = firmware == '1', kvbench == '1'
    relocatable = relocatable == '1'
    tmp = tempfile.mkdtemp(prefix='kvssd-install-')
    try:
        return body(tmp, build, src, prefix, libdir, bindir, mandir, version, firmware, kvbench,
                    relocatable)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def body(tmp, build, src, prefix, libdir, bindir, mandir, version, firmware, kvbench,
         relocatable):
    dest = os.path.join(tmp, 'root')
    # Not --no-rebuild: `meson test --suite install` builds only the tests' own
    # dependencies, and install needs every installed target (it builds them;
    # is_parallel: false keeps other tests from running meanwhile).
    r = run(['meson', 'install', '-C', build, '--destdir', dest, '--quiet'])
    if not check(r.returncode == 0, 'meson install --destdir succeeds'):
        print('# ' + (r.stdout + r.stderr).replace('\n', '\n# '))
        return report()
    root = dest + prefix
    lib, bin_, man1 = (os.path.join(root, d) for d in (libdir, bindir, os.path.join(mandir, 'man1')))
    for dirpath, _, files in sorted(os.walk(dest)):
        for f in sorted(files):
            print('# installed: ' + os.path.relpath(os.path.join(dirpath, f), dest))

    expected = [os.path.join(bin_, 'kvssd'), os.path.join(lib, 'libkvssd.so'),
                os.path.join(lib, 'libkvssd.a'), os.path.join(lib, 'pkgconfig/libkvssd.pc'),
                os.path.join(root, 'include/kvssd/libkvssd.h'),
                os.path.join(root, 'include/kvssd/nvme_kv.h'),
                os.path.join(root, 'include/kvssd/ext.h'),
                os.path.join(root, 'include/kvssd/kv_opcodes.def'),
                os.path.join(root, 'include/kvssd/nvme.h'), os.path.join(man1, 'kvssd.1')]
    # bash-completion's completionsdir, without bash-completion's .pc as with it
    completions = os.path.join(root, 'share/bash-completion/completions')
    expected += [os.path.join(completions, 'kvssd')]
    if kvbench:
        expected += [os.path.join(bin_, 'kvbench'), os.path.join(man1, 'kvbench.1'),
                     os.path.join(completions, 'kvbench')]
    if firmware:
        expected += [os.path.join(bin_, 'kvftl-bench'), os.path.join(man1, 'kvftl-bench.1'),
                     os.path.join(lib, 'libkvftl.a'), os.path.join(lib, 'pkgconfig/kvftl.pc'),
                     os.path.join(root, 'include/kvftl/kvftl.h'),
                     os.path.join(root, 'include/kvftl/block.h'),
                     os.path.join(root, 'include/kvftl/tunables.def')]
    for f in expected:
        check(os.path.isfile(f), 'installed ' + os.path.relpath(f, dest))

    pc = run(['pkg-config', '--print-requires-private', 'libkvssd'],
             env=dict(os.environ, PKG_CONFIG_PATH=os.path.join(lib, 'pkgconfig')))
    check(pc.returncode == 0 and 'liburing' in pc.stdout.split(),
          'libkvssd.pc: Requires.private names liburing (got %r)' % pc.stdout.strip())

    pcdir = os.path.join(lib, 'pkgconfig')
    if relocatable:
        for pc in ('libkvssd.pc', 'kvftl.pc') if firmware else ('libkvssd.pc',):
            first = open(os.path.join(pcdir, pc)).readline().strip()
            check(first.startswith('prefix=${pcfiledir}/'),
                  '%s is relocatable (%s)' % (pc, first))
    else:
        print('# pkgconfig.relocatable=false in this build directory (configured before it '
              'was a default; meson configure -Dpkgconfig.relocatable=true): .pc copies '
              'with prefix=DESTDIR%s' % prefix)
        fixed = os.path.join(tmp, 'pc')
        os.mkdir(fixed)
        for pc in os.listdir(pcdir):
            lines = open(os.path.join(pcdir, pc)).read().split('\n')
            lines = ['prefix=' + root if ln.startswith('prefix=') else ln for ln in lines]
            open(os.path.join(fixed, pc), 'w').write('\n'.join(lines))
        pcdir = fixed
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
    consumers = [('libkvssd', 'consumer_kvssd.c')]
    if firmware:
        consumers.append(('kvftl', 'consumer_kvftl.c'))
    cc = os.environ.get('CC', 'cc')
    for pkg, csrc in consumers:
        flags = run(['pkg-config', '--cflags', '--libs', pkg], env=env)
        if not check(flags.returncode == 0, 'pkg-config --cflags --libs %s from the installed tree' % pkg):
            print('# ' + flags.stderr.strip())
            continue
        out = os.path.join(tmp, pkg + '-consumer')
        cmd = [cc, os.path.join(src, csrc), '-o', out] + flags.stdout.split()
        b = run(cmd)
        shown = ' '.join(cmd[:2] + cmd[4:]).replace(dest, 'DESTDIR')
        if not check(b.returncode == 0, '%s builds with `%s`' % (csrc, shown)):
            print('# ' + b.stderr.strip().replace('\n', '\n# '))
            continue
        # -I/-L of the installed tree, not of the source or build tree
        check(all(not a.startswith(('-I' + src, '-L' + src)) for a in flags.stdout.split()),
              '%s.pc points into the installed tree only' % pkg)
        x = run([out], env=dict(os.environ, LD_LIBRARY_PATH=lib))
        check(x.returncode == 0 and 'not ok' not in x.stdout,
              'the %s program runs (exit %d)' % (pkg, x.returncode))
        print('# ' + x.stdout.strip().replace('\n', '\n# '))

    tools = ['kvssd'] + (['kvbench'] if kvbench else []) + (['kvftl-bench'] if firmware else [])
    clean = {k: v for k, v in os.environ.items() if k != 'LD_LIBRARY_PATH'}
    for t in tools:
        v = run([os.path.join(bin_, t), '--version'], env=clean)
        first = v.stdout.split('\n')[0]
        check(v.returncode == 0 and (first == '%s %s' % (t, version)
                                     or first.startswith('%s %s (git ' % (t, version))),
              'installed %s --version prints "%s %s" (got %r; rpath finds libkvssd.so)'
              % (t, t, version, first or v.stderr.strip()))
    return report()


def report():
    print('1..%d' % len(results))
    for i, (ok, what) in enumerate(results, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', i, what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == '__main__':
    sys.exit(main())
