#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the seed corpus of fuzz_kvftl_api (the encoding is documented at the
top of fuzz_kvftl_api.c). Run from anywhere: python3 make_corpus.py."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

ALL, BLOCK, SELECTIVE, BACKFILL = 1, 0, 2, 3
PU = {1: 0, 64: 1, 1024: 2, 4096: 3}


def cfg(packing, plp=True, pu=1024, bloom=True, cost_benefit=False, tiny_index=False):
    return bytes([packing | (plp << 2) | (PU[pu] << 3) | (bloom << 5) |
                  (cost_benefit << 6) | (tiny_index << 7)])


def u16(v):
    return struct.pack(">H", v)


def u32(v):
    return struct.pack(">I", v)


def key(length, pre=1, fill=0x41):
    return bytes([length, pre, fill])


def vlen(n):
    """Encode a value length selector for small lengths and named edges."""
    if n < 160:
        return bytes([n])
    if n == 2 * 1024 * 1024:
        return bytes([248])
    if n == 2 * 1024 * 1024 + 1:
        return bytes([250])
    if n == 0xFFFFFFFF:
        return bytes([251])
    return bytes([252]) + u32(n)


def store(k, v, vseed=1, opt=0, inline=0):
    return bytes([0]) + k + vlen(v) + bytes([vseed, opt, inline])


def retrieve(k, off_sel=0, buf_sel=100):
    return bytes([1]) + k + bytes([off_sel, buf_sel])


def delete(k):
    return bytes([2]) + k


def exist(k):
    return bytes([3]) + k


FLUSH, CYCLE, FORMAT, CHECK = bytes([4]), bytes([9]), bytes([10]), bytes([11])


def iter_open(prefix, mask, kind):
    return bytes([5]) + u32(prefix) + u32(mask) + bytes([kind])


def iter_next(h, mx=16, refuse=0):
    return bytes([6, h, mx, refuse])


def iter_close(h):
    return bytes([7, h])


def cut_after(n):
    return bytes([8, n])


def idle(us):
    return bytes([12]) + u16(us)


seeds = {
    "basic": cfg(ALL) + store(key(16), 64) + retrieve(key(16)) + exist(key(16)) +
    delete(key(16)) + exist(key(16)) + retrieve(key(16)) + FLUSH + CHECK,
    "options": cfg(ALL, pu=64) + store(key(8), 10, opt=2) + store(key(8), 20, opt=2) +
    store(key(9), 5, opt=1) + store(key(8), 30, opt=1) + store(key(8), 3, opt=3) +
    store(key(8), 3, opt=0x80) + u32(0x100) + bytes([0]) + retrieve(key(8)) + CHECK,
    "invalid_sizes": cfg(SELECTIVE, pu=1) + store(key(0), 8) + store(bytes([255, 1, 1]), 8) +
    store(key(4), 2 * 1024 * 1024 + 1) + store(key(4), 0xFFFFFFFF) + retrieve(key(0)) +
    delete(bytes([255, 0, 3])) + exist(key(0)) + store(key(1), 0) + retrieve(key(1)) +
    store(key(255, 7, 2), 2 * 1024 * 1024) + retrieve(key(255, 7, 2)),
    "partial_reads": cfg(BACKFILL, pu=1) + store(key(20), 159, inline=150) +
    retrieve(key(20), 10, 5) + retrieve(key(20), 159, 50) + retrieve(key(20), 160, 50) +
    retrieve(key(20), 250, 50) + u32(7) + retrieve(key(20), 0, 0) +
    store(key(21), 20000, inline=120) + retrieve(key(21), 204, 99) + retrieve(key(21), 255, 255) +
    u32(19999) + u32(1),
    "iterators": cfg(ALL) + b"".join(store(key(5 + i, i % 8, i), 10 + i) for i in range(24)) +
    b"".join(iter_open(0x61626364, 0xFFFF0000, i % 2) for i in range(17)) +
    iter_next(0, 4) + iter_next(1, 255) + iter_next(1, 255) + iter_next(2, 3, 0x55) +
    iter_close(3) + iter_close(3) + iter_next(3) + iter_close(255) + iter_next(250) +
    iter_open(0, 0, 9) + iter_open(0, 0, 1) + delete(key(6, 1, 1)) + iter_next(0, 200) +
    iter_next(0, 0) + CHECK,
    "power_cut_plp": cfg(BACKFILL, pu=1024) +
    b"".join(store(key(12, i % 8, i), 1000 + i, inline=(0 if i % 2 else 150)) for i in range(20)) +
    cut_after(3) + b"".join(store(key(12, i % 8, i), 3000 + i) for i in range(20)) +
    delete(key(12, 1, 1)) + CYCLE + CHECK + retrieve(key(12, 2, 2)),
    "power_cut_no_plp": cfg(SELECTIVE, plp=False, pu=64) +
    b"".join(store(key(30, i % 8, i), 100 + 7 * i, inline=150) for i in range(30)) + FLUSH +
    b"".join(delete(key(30, i % 8, i)) for i in range(0, 30, 3)) +
    b"".join(store(key(30, i % 8, i), 140, vseed=9) for i in range(1, 30, 3)) + CYCLE +
    cut_after(1) + b"".join(store(key(30, i % 8, i), 4000, inline=0) for i in range(10)) + CYCLE,
    "large_values_full": cfg(BLOCK, pu=4096) +
    b"".join(store(key(16, 3, i), 2 * 1024 * 1024 if i % 2 else 1024 * 1024 + 5) for i in range(6)) +
    CHECK + delete(key(16, 3, 1)) + store(key(16, 3, 9), 2 * 1024 * 1024) + CHECK +
    retrieve(key(16, 3, 0), 250, 250) + u32(1048000) + u32(4096),
    "format_with_iterator": cfg(ALL, pu=1, bloom=False, cost_benefit=True, tiny_index=True) +
    b"".join(store(key(4 + i % 30, i % 8, i), i * 3) for i in range(60)) +
    iter_open(0, 0, 1) + iter_next(0, 5) + FORMAT + iter_next(0, 5) + iter_close(0) +
    b"".join(store(key(4 + i % 30, i % 8, i), 50) for i in range(10)) + CHECK,
    "gc_churn": cfg(ALL, pu=1024, tiny_index=True) +
    b"".join(store(key(8, i % 3, i % 40), 3000 + (i * 37) % 150, inline=(i * 7) % 256) + idle(i)
             for i in range(300)) + CHECK + CYCLE,
    "read_your_write": cfg(BACKFILL, pu=1) +
    b"".join(bytes([13]) + key(3 + i, i % 8, 7) + vlen((i * 53) % 160) + bytes([i % 2])
             for i in range(50)),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds), OUT))


if __name__ == "__main__":
    main()
