#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the seed corpus of fuzz_block_api (the encoding is documented at the
top of fuzz_block_api.c). Run from anywhere: python3 make_block_corpus.py."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "block-corpus")

PAGE = {4096: 0, 8192: 1, 16384: 2}


def cfg(plp=True, lba=4096, tiny_map=False, cost_benefit=False, page=4096, image=False):
    return bytes([plp | ((lba == 512) << 1) | (tiny_map << 2) | (cost_benefit << 3) |
                  (PAGE[page] << 4) | (image << 6)])


def u16(v):
    return struct.pack(">H", v)


def u32(v):
    return struct.pack(">I", v)


# starts
def at(lba):
    """lba (< 65536) modulo the namespace."""
    return bytes([0]) + u16(lba)


def at_unit(lba):
    """lba modulo the namespace, rounded down to its unit."""
    return bytes([128]) + u16(lba)


def near_end(back):
    """the namespace's last block minus back (< 64)."""
    return bytes([192, back])


def past_end(k=0):
    """k (0..3) blocks past the namespace."""
    return bytes([224, k])


def at_raw(v):
    return bytes([240]) + u32(v)


def at_max(k=0):
    """UINT64_MAX - k."""
    return bytes([255, k])


# lengths
def n(blocks):
    """1..16 or 1..256 blocks."""
    if 1 <= blocks <= 16:
        return bytes([blocks - 1])
    assert 1 <= blocks <= 256
    return bytes([128, blocks - 1])


def units(u):
    """u (1..32) whole units."""
    return bytes([192, u - 1])


NONE = bytes([224])  # 0 blocks


def xfer_limit(plus=0):
    """the transfer limit (+1)."""
    return bytes([232, plus])


def n_raw(v):
    """a raw u32 (write, read); modulo namespace + 2 for zeroes and deallocate."""
    return bytes([240]) + u32(v)


def write(s, ln, fua=False):
    return bytes([0]) + s + ln + bytes([fua])


def read(s, ln):
    return bytes([1]) + s + ln


def zeroes(s, ln):
    return bytes([2]) + s + ln


def dealloc(s, ln):
    return bytes([3]) + s + ln


FLUSH, FORMAT, CYCLE, CHECK, REOPEN = bytes([4]), bytes([5]), bytes([7]), bytes([8]), bytes([12])


def cut_after(k):
    return bytes([6, k])


def idle(us):
    return bytes([9]) + u16(us)


def write_read(s, ln):
    return bytes([10]) + s + ln


def fill(s, count):
    return bytes([11]) + s + bytes([count])


seeds = {
    "basic": cfg() + write(at(10), n(8)) + read(at(10), n(8)) + zeroes(at(12), n(2)) +
    read(at(8), n(12)) + dealloc(at(10), n(4)) + read(at(6), n(16)) + FLUSH + CHECK,
    "lba512_partial_units": cfg(lba=512) + write(at(3), n(5)) + read(at(0), n(16)) +
    write(at(6), n(1)) + zeroes(at(5), n(2)) + read(at(0), n(8)) + write(at(0), n(24)) +
    dealloc(at(4), n(16)) + read(at(0), n(24)) + zeroes(at(9), n(14)) + read(at(0), n(32)) +
    write_read(at(7), n(2)) + CHECK,
    "invalid_ranges": cfg() + write(at(0), NONE) + read(past_end(0), n(1)) +
    write(near_end(0), n(2)) + zeroes(at_max(0), n(2)) + dealloc(past_end(3), n(1)) +
    read(at(0), xfer_limit(1)) + write(at(0), xfer_limit(1)) + read(at_raw(0xFFFFFFFF), n(1)) +
    dealloc(at(0), NONE) + write(near_end(3), n(4)) + read(near_end(3), n(4)) + CHECK,
    "gc_fill": cfg() + fill(at(0), 60) +
    b"".join(write(at(i * 37 % 4000), n(1 + i % 16)) for i in range(200)) + CHECK +
    fill(at(100), 20) + CHECK,
    "dftl_tiny_map": cfg(tiny_map=True) + fill(at(0), 30) +
    b"".join(read(at(i * 997 % 4000), n(4)) for i in range(100)) +
    b"".join(write(at(i * 613 % 4000), n(2)) for i in range(100)) + FLUSH + CHECK,
    "plp_off_flush_fua": cfg(plp=False) + write(at(1), n(4)) + FLUSH + write(at(1), n(4), fua=True) +
    write(at(3), n(4)) + cut_after(2) + write(at(20), units(8)) + CYCLE + CHECK,
    "power_cut_plp": cfg() + fill(at(0), 8) + cut_after(3) +
    b"".join(write(at(i * 11), n(1 + i % 16)) for i in range(30)) + dealloc(at(0), n(64)) +
    CYCLE + CHECK + read(at(0), n(64)),
    "power_cut_no_plp_512": cfg(plp=False, lba=512) +
    b"".join(write(at(i * 9), n(1 + i % 16)) for i in range(40)) + FLUSH +
    b"".join(dealloc(at_unit(i * 16), n(16)) for i in range(10)) +
    b"".join(write(at(i * 5 + 1), n(3)) for i in range(20)) + CYCLE + cut_after(1) +
    fill(at(0), 4) + CYCLE + CHECK,
    "format": cfg(cost_benefit=True) + fill(at(0), 10) + FORMAT + read(at(0), n(256)) +
    write(at(5), n(5)) + CHECK + FORMAT + CHECK,
    "long_ranges": cfg(lba=512, page=8192) + fill(at(0), 40) + dealloc(at(0), n_raw(0xFFFFFFFF)) +
    CHECK + fill(at(0), 20) + zeroes(at(3), n_raw(100000)) + read(at(0), n(256)) + CHECK,
    "pages_16k_cost_benefit": cfg(cost_benefit=True, page=16384) + fill(at(0), 30) +
    b"".join(write(at(i * 101 % 3000), units(1 + i % 32)) + idle(i * 50) for i in range(120)) +
    CHECK,
    "power_cut_during_gc": cfg(plp=False) + fill(at(0), 40) + FLUSH + cut_after(30) +
    fill(at(500), 10) + CYCLE + CHECK + fill(at(0), 12) + cut_after(5) +
    b"".join(write(at(i * 53 % 2000), n(1 + i % 16), fua=(i % 3 == 0)) for i in range(40)) +
    CYCLE + CHECK,
    "dftl_cuts_512": cfg(plp=True, lba=512, tiny_map=True) + fill(at(0), 30) +
    b"".join(dealloc(at(i * 977 % 16000), n(16 + i % 64)) for i in range(30)) + cut_after(4) +
    b"".join(write(at(i * 613 % 16000), n(1 + i % 16)) for i in range(60)) + CYCLE +
    zeroes(at(100), n(200)) + cut_after(2) + fill(at(0), 3) + CYCLE + CHECK,
    "image_reopen": cfg(plp=False, lba=512, image=True) + fill(at(0), 20) +
    dealloc(at(100), n(200)) + zeroes(at(3), n(5)) + write(at(7), n(3)) + REOPEN +
    read(at(0), n(256)) + fill(at(1000), 30) + FLUSH + REOPEN + CHECK,
    "image_cut_then_reopen": cfg(plp=False, image=True) + fill(at(0), 12) + FLUSH +
    b"".join(write(at(i * 29 % 2000), n(1 + i % 16)) for i in range(30)) + cut_after(6) +
    fill(at(300), 4) + REOPEN + write(at(9), n(9)) + REOPEN + CHECK,
}

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("wrote %d seeds to %s" % (len(seeds), OUT))
