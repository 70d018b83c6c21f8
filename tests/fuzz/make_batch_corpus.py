#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the seed corpus of fuzz_kvftl_batch (the encoding is documented at the
top of fuzz_kvftl_batch.c). Run from anywhere: python3 make_batch_corpus.py."""
import os

# the configuration byte and the big-endian fields, as the API target's corpus writes them
from make_corpus import ALL, BACKFILL, BLOCK, SELECTIVE, cfg, u16, u32

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch-corpus")
MAX = 2 * 1024 * 1024


def key(length, fill, pre=1):
    return bytes([length, pre, fill])


def vlen(n):
    """A value length selector: small lengths and named edges, else a raw u32."""
    if n < 160:
        return bytes([n])
    if n == MAX:
        return bytes([248])
    if n == MAX - 1:
        return bytes([249])
    if n == MAX + 1:
        return bytes([250])
    if n == 0xFFFFFFFF:
        return bytes([251])
    return bytes([252]) + u32(n)


def how(gap=1, xfer=0, null=False):
    return bytes([gap | (xfer << 5) | (null << 7)])


def st(k, v, vseed=1, opt=0, inline=0, h=None, raw_opt=None):
    """One Store of a batch; inline: 0 none, 100 all, 200 half, 250.. past the value."""
    o = bytes([0x80]) + u32(raw_opt) if raw_opt is not None else bytes([opt])
    return k + vlen(v) + bytes([vseed]) + o + bytes([inline]) + (h or how())


def rt(k, off_sel=0, buf_sel=100, h=None, raw_off=None, raw_buf=None):
    """One Retrieve of a batch; buf_sel < 100: that many bytes, 100..249: 2 MiB;
    raw_off, raw_buf: a raw u32 offset, buffer size (< 2 MiB + 65)."""
    if raw_off is not None:
        off_sel = 250
    if raw_buf is not None:
        buf_sel = 250
    return (k + bytes([off_sel, buf_sel]) + (u32(raw_off) if raw_off is not None else b"") +
            (u32(raw_buf) if raw_buf is not None else b"") + (h or how()))


def store_batch(reqs):
    return bytes([0, len(reqs) - 1]) + b"".join(reqs)


def retrieve_batch(reqs):
    return bytes([1, len(reqs) - 1]) + b"".join(reqs)


def store_retrieve_batch(reqs):
    return bytes([2, len(reqs) - 1]) + b"".join(reqs)


def delete(k):
    return bytes([3]) + k


def exist(k):
    return bytes([4]) + k


FLUSH, CYCLE, FORMAT = bytes([5]), bytes([8]), bytes([9])


def iter_open(prefix, mask, kind):
    return bytes([10]) + u32(prefix) + u32(mask) + bytes([kind])


def iter_next(h, mx=16, refuse=0):
    return bytes([11, h, mx, refuse])


def iter_close(h):
    return bytes([12, h])


def idle(us):
    return bytes([6]) + u16(us)


def cut_after(n):
    return bytes([7, n])


def keys(n, length=16, base=0, pre=1):
    return [key(length, (base + i) % 256, pre) for i in range(n)]


CORPUS = {
    # 40 pairs stored and read back in one batch each, then partial reads and absent keys
    "basic": cfg(ALL) + store_retrieve_batch([st(k, 64, vseed=i) for i, k in enumerate(keys(40))]) +
    retrieve_batch([rt(k, off_sel=(i * 7) % 64, buf_sel=i % 100) for i, k in enumerate(keys(60))]),
    # overwrites inside a batch, the options, and every refusal a Store has
    "refusals": cfg(ALL) + store_batch(
        [st(key(16, 1), 100), st(key(16, 1), 50, vseed=2), st(key(16, 2), 30, opt=1),
         st(key(16, 1), 70, vseed=3, opt=1), st(key(16, 1), 70, opt=2),
         st(key(0, 0), 10), st(key(255, 3, 3), 10), st(key(16, 4), MAX + 1),
         st(key(16, 5), 0xFFFFFFFF), st(key(16, 6), 64, h=how(null=True)),
         st(key(16, 7), 64, inline=252), st(key(16, 8), 64, raw_opt=0x80000001),
         st(key(16, 9), 0, h=how(null=True)), st(key(16, 10), 0)]) +
    retrieve_batch([rt(key(16, i)) for i in range(12)] +
                   [rt(key(16, 1), raw_off=77, raw_buf=0),
                    rt(key(16, 1), buf_sel=40, h=how(null=True)),
                    rt(key(16, 1), off_sel=71, buf_sel=0)]),
    # a two-page index DRAM: 800 keys: the batches' hints meet evictions and misses
    "tiny_index": cfg(ALL, tiny_index=True) +
    b"".join(store_batch([st(k, 40 + i % 100, vseed=i) for i, k in enumerate(keys(80, 12, b, p))])
             for b, p in ((0, 1), (80, 1), (160, 9), (0, 17), (0, 2), (0, 10), (0, 3),
                          (0, 11), (0, 4), (0, 12))) +
    retrieve_batch([rt(k) for k in keys(80, 12, 40, 9)]),
    # 64 KiB values overwritten in batches until GC runs, background GC in idle time
    "gc_churn": cfg(ALL, pu=4096, bloom=False) +
    b"".join(store_batch([st(k, 65536 - 64 + r, vseed=r) for k in keys(20, 20)]) +
             (idle(3000) if r % 4 == 3 else b"") for r in range(16)) +
    retrieve_batch([rt(k, raw_buf=4096) for k in keys(20, 20)]),
    # the same under cost-benefit GC and greedy packing with inline parts
    "gc_inline": cfg(SELECTIVE, cost_benefit=True, pu=64) +
    b"".join(store_batch([st(k, 24000 + 7 * i, vseed=r, inline=(100, 200, 0)[i % 3],
                              h=how(xfer=i % 4)) for i, k in enumerate(keys(30, 8))])
             for r in range(20)) +
    store_retrieve_batch([st(k, 90, inline=100) for k in keys(30, 8)]),
    # large values until the device is full inside a batch
    "device_full": cfg(BLOCK, bloom=False) +
    b"".join(store_batch([st(k, 300000 + 4096 * r, vseed=r) for k in keys(6, 32, 10 * r)])
             for r in range(5)) + FLUSH +
    retrieve_batch([rt(k, off_sel=200 + 4 * i, raw_buf=100000) for i, k in enumerate(keys(12, 32))]),
    # a power cut inside a store batch, with and without PLP
    "cut_inside_plp": cfg(ALL) + store_batch([st(k, 120) for k in keys(60)]) + cut_after(2) +
    store_batch([st(k, 1000 + i, vseed=5) for i, k in enumerate(keys(80, 16, 30))]) + CYCLE +
    retrieve_batch([rt(k) for k in keys(80, 16, 20)]),
    "cut_inside_no_plp": cfg(BACKFILL, plp=False) +
    store_batch([st(k, 120, inline=100) for k in keys(60)]) + FLUSH + cut_after(3) +
    store_batch([st(k, 2000 + i, vseed=6, inline=(0, 100)[i % 2]) for i, k in
                 enumerate(keys(80, 16, 30))]) + CYCLE +
    retrieve_batch([rt(k) for k in keys(80, 16, 20)]),
    # iterators open across store batches that overwrite, delete and run GC; refusals, bad handles
    "iterators": cfg(ALL, pu=64) +
    store_batch([st(key(5 + i % 20, i, i % 8), 10 + i) for i in range(48)]) +
    iter_open(0x61626364, 0xFFFF0000, 1) + iter_open(0, 0, 0) + iter_open(0x61626364, 0, 9) +
    iter_next(0, 5) + iter_next(1, 7, 0x5) +
    b"".join(store_batch([st(key(5 + i % 20, i, i % 8), 3000 + 100 * r + i, vseed=r)
                          for i in range(48)]) + iter_next(0, 3) + iter_next(1, 4, 0x2)
             for r in range(12)) +
    iter_next(0, 255) + iter_next(1, 255) + iter_close(1) + iter_next(1) + iter_close(250) +
    iter_next(255) + b"".join(iter_open(0x61000000, 0xFF000000, 1) for _ in range(16)) +
    iter_next(2, 30) + FORMAT + iter_next(0, 4),
    # deletes and exists between batches, tombstones read in a batch, format
    "deletes_format": cfg(BACKFILL, pu=1) +
    store_batch([st(k, 33 + i) for i, k in enumerate(keys(50, 24))]) +
    b"".join(delete(k) for k in keys(50, 24)[::3]) + exist(key(24, 1)) + exist(key(24, 3)) +
    retrieve_batch([rt(k) for k in keys(50, 24)]) + FORMAT +
    store_retrieve_batch([st(k, 64) for k in keys(20, 24, 5)]),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in CORPUS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
