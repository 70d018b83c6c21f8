#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The kvssd CLI on sim:IMAGE, one process per command, as a user runs it
with no VM: what one command stores the next one reads; a second process
is refused by the image lock while the first has it open, with the
firmware's sentence naming the holder; a bad property is refused with its
sentence. TAP. Usage: test_cli_sim.py KVSSD"""
import os
import subprocess
import sys
import tempfile
import time

KVSSD = sys.argv[1]
results = []


def check(cond, what):
    results.append((bool(cond), what))


def kvssd(cwd, *args, stdin=None):
    return subprocess.run([KVSSD] + list(args), cwd=cwd, capture_output=True, text=True,
                          input=stdin, timeout=60)


def ofd_locked(path):
    """Is an OFD lock held on @path's inode (/proc/locks)?"""
    ino = os.stat(path).st_ino
    with open("/proc/locks") as f:
        return any(l.split()[1] == "OFDLCK" and l.split()[5].endswith(":%d" % ino)
                   for l in f if len(l.split()) > 5)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        # what one process stores, the next reads
        p = kvssd(tmp, "put", "sim:kv.img", "alpha", "one")
        check(p.returncode == 0 and p.stdout == "stored 3 bytes (inline, 1 command)\n",
              "put sim:kv.img alpha one (%d, %r)" % (p.returncode, p.stdout + p.stderr))
        p = kvssd(tmp, "get", "sim:kv.img", "alpha")
        check(p.returncode == 0 and p.stdout == "one",
              "get sim:kv.img alpha in another process prints one (%r)" % p.stdout)
        p = kvssd(tmp, "info", "sim:kv.img")
        check(p.returncode == 0 and
              "model             KVSSD Key-Value SSD simulator (sim:)\n" in p.stdout,
              "info names the simulator as the model")
        p = kvssd(tmp, "del", "sim:kv.img", "alpha")
        q = kvssd(tmp, "exist", "sim:kv.img", "alpha")
        check(p.returncode == 0 and q.returncode == 1,
              "del, then exist in a third process: exit 1 (%d)" % q.returncode)

        # the lock: put opens the image, then waits for its value on stdin
        put = subprocess.Popen([KVSSD, "put", "sim:kv.img", "beta"], cwd=tmp,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        img = os.path.join(tmp, "kv.img")
        for _ in range(1000):
            if ofd_locked(img):
                break
            time.sleep(0.01)
        p = kvssd(tmp, "get", "sim:kv.img", "beta")
        want = ("libkvssd: sim: image_path kv.img is in use by process %d (another QEMU or "
                "kvftl program has it open); an image can back only one device at a time\n"
                "kvssd: cannot open sim:kv.img: not a KV namespace of a kvssd device, or (sim:) an "
                "image the firmware refused\n" % put.pid)
        check(p.returncode == 1 and p.stderr == want,
              "a second process is refused, naming the first (%r)" % p.stderr)
        out, err = put.communicate("two", timeout=60)
        check(put.returncode == 0, "the first process stores its value (%r)" % err)
        p = kvssd(tmp, "get", "sim:kv.img", "beta")
        check(p.returncode == 0 and p.stdout == "two", "then beta reads two (%r)" % p.stdout)

        # a bad property: its sentence, no image touched
        p = kvssd(tmp, "get", "sim:other.img,packing=tight", "beta")
        check(p.returncode == 1 and p.stderr ==
              "libkvssd: sim: packing is 'tight'; it must be block, all, selective or "
              "backfill\nkvssd: cannot open sim:other.img,packing=tight: invalid argument\n" and
              not os.path.exists(os.path.join(tmp, "other.img")),
              "packing=tight is refused with its sentence (%r)" % p.stderr)

    print("1..%d" % len(results))
    for i, (ok, what) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
