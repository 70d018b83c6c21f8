/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The firmware's configuration: the presets and the checks of struct kvftl_config. */
#include <kvftl/kvftl.h>

#include <stdio.h>
#include <string.h>

#include "value_log.h"

#define MIB (1024ull * 1024)
#define MIN_STRIPE_BYTES (2 * MIB + 8192)

int kvftl_config_preset(struct kvftl_config *cfg, const char *name)
{
    struct kvftl_config c = {
        .channels = 4,
        .dies_per_channel = 4,
        .blocks_per_die = 128,
        .pages_per_block = 128,
        .page_size_bytes = 16384,
        .read_latency_ns = 50000,
        .program_latency_ns = 500000,
        .erase_latency_ns = 3000000,
        .channel_bytes_per_us = 800,
        .dram_copy_bytes_per_us = 2000,
        .placement_unit_bytes = 1024,
        .packing = KVFTL_PACK_ALL,
        .buffer_entries = 64,
        .dlt_entries = 0,
        .index_dram_bytes = 64 * MIB,
        .index_page_bytes = 0,
        .bloom = true,
        .bloom_bits_per_key = 10,
        .max_keys = 0,
        .overprovision_percent = 7,
        .gc_high_watermark_blocks = 8,
        .gc_low_watermark_blocks = 3,
        .gc_policy = KVFTL_GC_GREEDY,
        .plp = true,
        .image_path = NULL,
    };
    if (!name || strcmp(name, "default") == 0) {
        /* as above */
    } else if (strcmp(name, "pm983") == 0) {
        /* Samsung PM983 KV (the characterization paper): 32 KiB TLC pages, 1 KiB placement */
        c.channels = 8;
        c.dies_per_channel = 4;
        c.blocks_per_die = 256;
        c.pages_per_block = 64;
        c.page_size_bytes = 32768;
        c.read_latency_ns = 60000;
        c.program_latency_ns = 700000;
        c.erase_latency_ns = 3500000;
        c.channel_bytes_per_us = 800;
        c.placement_unit_bytes = 1024;
        /* the PM983 pads only small pairs to 1 KiB (Fig. 7: ~1x from 1 KiB pairs) */
        c.large_blob_unit_bytes = 1;
        /* and starts a value that would straddle a page on a fresh one (Fig. 5) */
        c.page_fit_blobs = true;
        /*
         * Fig. 5's dips at 25 and 49 KB: "32KB [pages], which can fit up to
         * 24KB of value size in addition to metadata and key", the rest
         * reserved ("erasure coding"). 24 KiB of value + 512 B for the blob
         * header and key; a larger blob takes one page per 24.5 KiB.
         */
        c.page_data_bytes = 24 * 1024 + 512;
        c.packing = KVFTL_PACK_ALL;
        c.buffer_entries = 128;
        c.index_dram_bytes = 256 * MIB;
    } else if (strcmp(name, "cosmos") == 0) {
        /* Cosmos+ OpenSSD (BandSlim's testbed): 16 KiB MLC pages, 4 channels x 8 ways */
        c.channels = 4;
        c.dies_per_channel = 8;
        c.blocks_per_die = 256;
        c.pages_per_block = 128;
        c.page_size_bytes = 16384;
        c.read_latency_ns = 60000;
        c.program_latency_ns = 1000000;
        c.erase_latency_ns = 3500000;
        c.channel_bytes_per_us = 200;
        c.dram_copy_bytes_per_us = 1000;
        c.placement_unit_bytes = 1;
        c.packing = KVFTL_PACK_BACKFILL;
        c.buffer_entries = 512;
        c.index_dram_bytes = 128 * MIB;
    } else {
        return -1;
    }
    *cfg = c;
    return 0;
}

static bool is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

#define FAIL(...)                                    \
    do {                                             \
        if (err && err_len) {                        \
            snprintf(err, err_len, __VA_ARGS__);     \
        }                                            \
        return -1;                                   \
    } while (0)

int kvftl_config_check(const struct kvftl_config *c, char *err, size_t err_len)
{
    if (c->channels < 1 || c->channels > 64) {
        FAIL("channels is %u; it must be from 1 to 64", c->channels);
    }
    if (c->dies_per_channel < 1 || c->dies_per_channel > 64) {
        FAIL("dies_per_channel is %u; it must be from 1 to 64", c->dies_per_channel);
    }
    if (c->page_size_bytes < 4096 || c->page_size_bytes > 65536 || !is_pow2(c->page_size_bytes)) {
        FAIL("page_size_bytes is %u; it must be a power of two from 4096 to 65536",
             c->page_size_bytes);
    }
    if (c->pages_per_block < 1 || c->pages_per_block > 65536) {
        FAIL("pages_per_block is %u; it must be from 1 to 65536", c->pages_per_block);
    }
    if (c->gc_low_watermark_blocks < 2) {
        FAIL("gc_low_watermark_blocks is %u; it must be at least 2", c->gc_low_watermark_blocks);
    }
    if (c->gc_high_watermark_blocks < c->gc_low_watermark_blocks) {
        FAIL("gc_high_watermark_blocks is %u; it must be at least gc_low_watermark_blocks (%u)",
             c->gc_high_watermark_blocks, c->gc_low_watermark_blocks);
    }
    uint32_t min_blocks = c->gc_high_watermark_blocks + 4;
    if (c->blocks_per_die < min_blocks || c->blocks_per_die > 1u << 20) {
        FAIL("blocks_per_die is %u; it must be from %u (gc_high_watermark_blocks + 4) to %u",
             c->blocks_per_die, min_blocks, 1u << 20);
    }
    uint64_t stripe = (uint64_t)c->channels * c->dies_per_channel * c->pages_per_block *
                      c->page_size_bytes;
    if (stripe < MIN_STRIPE_BYTES || stripe > 4096 * MIB) {
        FAIL("an erase stripe (channels x dies_per_channel x pages_per_block x page_size_bytes) "
             "is %llu bytes; it must be from %llu (the largest blob) to %llu",
             (unsigned long long)stripe, (unsigned long long)MIN_STRIPE_BYTES,
             (unsigned long long)(4096 * MIB));
    }
    uint64_t total = stripe * c->blocks_per_die;
    if (total > (1ull << LOC_ADDR_BITS) || total / c->page_size_bytes >= UINT32_MAX) {
        FAIL("the device is %llu bytes; it must be at most %llu", (unsigned long long)total,
             (unsigned long long)(1ull << LOC_ADDR_BITS));
    }
    if (c->channel_bytes_per_us < 1) {
        FAIL("channel_bytes_per_us is 0; it must be at least 1");
    }
    if (c->placement_unit_bytes < 1 || c->placement_unit_bytes > 4096 ||
        !is_pow2(c->placement_unit_bytes)) {
        FAIL("placement_unit_bytes is %u; it must be a power of two from 1 to 4096",
             c->placement_unit_bytes);
    }
    if (c->large_blob_unit_bytes &&
        (c->large_blob_unit_bytes > c->placement_unit_bytes || !is_pow2(c->large_blob_unit_bytes))) {
        FAIL("large_blob_unit_bytes is %u; it must be 0 or a power of two from 1 to "
             "placement_unit_bytes (%u)", c->large_blob_unit_bytes, c->placement_unit_bytes);
    }
    /* a blob that fits the data area must still fit it once rounded to its unit */
    uint32_t large_unit = c->large_blob_unit_bytes ? c->large_blob_unit_bytes : c->placement_unit_bytes;
    if (c->page_data_bytes &&
        (c->page_data_bytes < 4096 || c->page_data_bytes > c->page_size_bytes ||
         c->page_data_bytes % large_unit)) {
        FAIL("page_data_bytes is %u; it must be 0 (the whole page) or a multiple of the large "
             "blob unit (%u) from 4096 to page_size_bytes (%u)", c->page_data_bytes,
             large_unit, c->page_size_bytes);
    }
    if (c->page_data_bytes) {
        /* the largest blob occupies one whole page per data area's worth */
        uint64_t largest = BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES + KVFTL_VALUE_MAX_BYTES;
        uint64_t need = (largest + c->page_data_bytes - 1) / c->page_data_bytes * c->page_size_bytes;
        if (stripe < need) {
            FAIL("page_data_bytes is %u; the largest blob would occupy %llu bytes of whole pages, "
                 "more than an erase stripe (%llu bytes): raise it or enlarge the stripe",
                 c->page_data_bytes, (unsigned long long)need, (unsigned long long)stripe);
        }
    }
    if ((unsigned)c->packing > KVFTL_PACK_BACKFILL) {
        FAIL("packing is %u; it must be 0 (block), 1 (all), 2 (selective) or 3 (backfill)",
             (unsigned)c->packing);
    }
    if (c->buffer_entries < 2 || c->buffer_entries > 4096) {
        FAIL("buffer_entries is %u; it must be from 2 to 4096", c->buffer_entries);
    }
    if (c->dlt_entries > c->buffer_entries) {
        FAIL("dlt_entries is %u; it must be from 1 to buffer_entries (%u), or 0 for buffer_entries",
             c->dlt_entries, c->buffer_entries);
    }
    uint32_t ipb = c->index_page_bytes ? c->index_page_bytes : c->page_size_bytes;
    if (ipb < 4096 || ipb > c->page_size_bytes || !is_pow2(ipb)) {
        FAIL("index_page_bytes is %u; it must be a power of two from 4096 to page_size_bytes (%u), "
             "or 0 for page_size_bytes", c->index_page_bytes, c->page_size_bytes);
    }
    if (c->bloom && (c->bloom_bits_per_key < 1 || c->bloom_bits_per_key > 64)) {
        FAIL("bloom_bits_per_key is %u; it must be from 1 to 64", c->bloom_bits_per_key);
    }
    uint64_t min_dram = 2ull * ipb + (c->bloom ? 64 : 0);
    if (c->index_dram_bytes < min_dram) {
        FAIL("index_dram_bytes is %llu; it must be at least %llu (two index pages%s)",
             (unsigned long long)c->index_dram_bytes, (unsigned long long)min_dram,
             c->bloom ? " and a Bloom block" : "");
    }
    if (c->overprovision_percent < 1 || c->overprovision_percent > 50) {
        FAIL("overprovision_percent is %u; it must be from 1 to 50", c->overprovision_percent);
    }
    if ((unsigned)c->gc_policy > KVFTL_GC_COST_BENEFIT) {
        FAIL("gc_policy is %u; it must be 0 (greedy) or 1 (cost-benefit)", (unsigned)c->gc_policy);
    }
    return 0;
}
