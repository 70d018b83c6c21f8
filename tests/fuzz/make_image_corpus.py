#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the seed corpus of fuzz_image (the encoding is documented at the top
of fuzz_image.c): real images built by a workload, each damaged one way.
Run from anywhere: python3 make_image_corpus.py."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image-corpus")

BLOCK, ALL, SELECTIVE, BACKFILL = 0, 1, 2, 3
PU = {1: 0, 64: 1, 1024: 2, 4096: 3}
KEYS = {5: 0, 40: 1, 250: 2, 700: 3}
SMALL, MEDIUM, LARGE, MIXED = 0, 1, 2, 3
RESEAL = 0x80

# struct image_header offsets (kvftl/kv/recovery.h)
H_MAGIC, H_CHANNELS, H_PAGE_SIZE, H_CKPT_BYTES, H_CKPT_SUM = 0, 16, 32, 48, 56
# struct checkpoint_head offsets
C_LIVE_KEYS, C_VL_WP, C_DEPTH, C_NPAGES, C_STREAM_IDX, C_VL_STRIPE, C_CURSOR, C_LAYOUT, C_SEED = \
    24, 64, 72, 76, 84, 88, 92, 100, 104
C_STRIPES = 112            # the stripe table starts after the 112-byte head
C_DIR = C_STRIPES + 8 * 40  # 8 stripes of 40 bytes


def cfg(packing=ALL, plp=True, pu=1024, page_fit=False, bloom=True):
    return bytes([packing | (plp << 2) | (PU[pu] << 3) | (page_fit << 5) | (bloom << 6)])


def work(keys=250, lens=MEDIUM, deletes=True, overwrites=False, power_lost=False):
    return bytes([KEYS[keys] | (lens << 2) | (deletes << 4) | (overwrites << 5) | (power_lost << 6)])


def u16(v):
    return struct.pack(">H", v)


def u32(v):
    return struct.pack(">I", v)


def data(b):
    return bytes([len(b) - 1]) + b


def header(off, b):
    return bytes([0]) + u16(off) + data(b)


def checkpoint(off, b, reseal=False):
    return bytes([1 | (RESEAL if reseal else 0)]) + u32(off) + data(b)


def index_page(page, off, b, reseal=False):
    return bytes([2 | (RESEAL if reseal else 0)]) + bytes([page]) + u16(off) + data(b)


def data_page(page, unit, off, b):
    return bytes([3]) + u16(page) + u16(unit) + bytes([off]) + data(b)


def spare(page, off, b):
    return bytes([4]) + u16(page) + bytes([off]) + data(b)


def truncate(sel):
    return bytes([5, sel])


def clean_flag(v):
    return bytes([6, v])


def fill(which, byte, reseal=False):
    return bytes([7 | (RESEAL if reseal else 0), which, byte])


SEEDS = {
    "intact_clean": cfg() + work(),
    "intact_dirty": cfg() + work(power_lost=True),
    "intact_dirty_no_plp_backfill": cfg(BACKFILL, plp=False, pu=1) + work(700, MIXED, power_lost=True),
    "header_magic": cfg() + work() + header(H_MAGIC, b"\x00"),
    "header_geometry": cfg() + work() + header(H_CHANNELS, b"\x02"),
    "header_page_size": cfg() + work() + header(H_PAGE_SIZE, b"\x00\x30"),
    "header_checkpoint_bytes": cfg() + work() + header(H_CKPT_BYTES, b"\xff\xff\xff\xff\xff\xff\xff\x7f"),
    "header_checkpoint_checksum": cfg() + work() + header(H_CKPT_SUM, b"\x01"),
    "clean_flag_zero": cfg() + work() + clean_flag(0),
    "clean_flag_other": cfg() + work() + clean_flag(2),
    "checkpoint_flip": cfg() + work(700, SMALL) + checkpoint(200, b"\x10"),
    "checkpoint_forged_live_keys": cfg() + work() + checkpoint(C_LIVE_KEYS, b"\x07", True),
    "checkpoint_forged_write_pointer": cfg() + work() + checkpoint(C_VL_WP, b"\x00\x00", True),
    "checkpoint_forged_depth": cfg() + work(700, SMALL) + checkpoint(C_DEPTH, b"\x1f", True),
    "checkpoint_forged_npages": cfg() + work(700, SMALL) + checkpoint(C_NPAGES, b"\xff\xff", True),
    "checkpoint_forged_stream": cfg() + work() + checkpoint(C_STREAM_IDX, b"\x00", True),
    "checkpoint_forged_vl_stripe": cfg() + work() + checkpoint(C_VL_STRIPE, b"\x63", True),
    "checkpoint_forged_cursor": cfg() + work() + checkpoint(C_CURSOR, b"\x40", True),
    "checkpoint_forged_layout": cfg() + work() + checkpoint(C_LAYOUT, b"\x00", True),
    "checkpoint_forged_seed": cfg() + work() + checkpoint(C_SEED, b"\x5a", True),
    "checkpoint_forged_stripe_state": cfg() + work() + checkpoint(C_STRIPES + 40 * 3, b"\x09", True),
    "checkpoint_forged_erased": cfg() + work() + checkpoint(C_STRIPES + 40 * 5 + 1, b"\x02", True),
    "checkpoint_forged_dir": cfg() + work(700, SMALL) + checkpoint(C_DIR, b"\x05", True),
    "index_page_overwritten": cfg() + work(700, SMALL) + index_page(1, 100, b"\xa5" * 8),
    "index_page_forged_entry": cfg() + work(700, SMALL) + index_page(0, 16 + 8 + 4, b"\x7f", True),
    "index_page_forged_count": cfg() + work(700, SMALL) + index_page(2, 8, b"\x00", True),
    "index_page_filled": cfg() + work(700, SMALL) + fill(0, 0xff),
    "index_page_filled_forged": cfg() + work(250, SMALL) + fill(2, 0x00, True),
    "data_record_type_dirty": cfg() + work(power_lost=True) + data_page(3, 1, 0, b"\x77"),
    "data_record_lengths_dirty": cfg() + work(power_lost=True) + data_page(2, 0, 1, b"\xff\xff\xff"),
    "data_value_byte_clean": cfg() + work() + data_page(1, 2, 30, b"\x00"),
    "data_key_length_clean": cfg() + work() + data_page(4, 1, 1, b"\xfa"),
    "data_pad_dirty_fine_units": cfg(BACKFILL, pu=1, page_fit=True) + work(250, MIXED, power_lost=True) +
                                 data_page(0, 7, 4, b"\x02\x00\x00\x00\x03\x00\x00\x00"),
    "data_page_filled_dirty": cfg() + work(power_lost=True) + fill(5, 0xb1),
    "spare_kind_dirty": cfg() + work(power_lost=True) + spare(0, 0, b"\x78\x56\x34\x12"),
    "spare_seq_dirty": cfg() + work(power_lost=True) + spare(3, 8, b"\xff" * 8),
    "spare_index_tag_clean": cfg() + work(700, SMALL) + spare(200, 4, b"\x09"),
    "truncate_half": cfg() + work() + truncate(64),
    "truncate_header": cfg() + work() + truncate(0),
    "truncate_checkpoint": cfg() + work() + truncate(200),
    "truncate_before_checkpoint": cfg() + work(700, SMALL) + truncate(128),
    "mixed_damage_block_packing": cfg(BLOCK, pu=4096) + work(40, LARGE, overwrites=True) +
                                  checkpoint(150, b"\x01") + data_page(9, 0, 0, b"\x00") + clean_flag(1),
    "mixed_damage_selective_no_plp": cfg(SELECTIVE, plp=False, pu=64) + work(250, MIXED, overwrites=True,
                                                                            power_lost=True) +
                                     spare(40, 0, b"\x41\x54\x41\x44") + data_page(20, 3, 0, b"\x02\x00"),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, blob in sorted(SEEDS.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(blob)
    print("wrote %d seeds to %s" % (len(SEEDS), OUT))


if __name__ == "__main__":
    main()
