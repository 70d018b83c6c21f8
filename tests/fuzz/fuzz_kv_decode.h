/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decoding that the kvftl API's fuzz targets share: tests/fuzz/
 * fuzz_kvftl_api.c (one call at a time against the reference model) and
 * tests/fuzz/fuzz_kvftl_batch.c (batches against single calls on a twin
 * device). The committed corpora and regressions of fuzz_kvftl_api were
 * written against it (make_corpus.py mirrors it), so it must not change.
 */
#ifndef KVSSD_TESTS_FUZZ_KV_DECODE_H
#define KVSSD_TESTS_FUZZ_KV_DECODE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kvftl/kvftl.h>

#include "fuzz_input.h"
#include "kvftl_small.h"
#include "rng.h"

extern uint32_t pm983_test_fanout_log; /* kvftl/kv/index/pm983/pm983_levels.h */

/*
 * Value bytes: the 8-byte word w of the value with seed s is
 * s ^ (w + 1) * K (little-endian), so every position and every value
 * differs, any window can be generated on its own, and filling costs one
 * multiply per word (the fuzzer spends its time in the library, not here).
 */
static inline void value_fill(uint64_t seed, uint32_t off, uint8_t *dst, uint32_t n)
{
    uint64_t w_ix = off / 8;
    uint32_t skip = off % 8;
    if (skip && n) {
        uint64_t w = seed ^ (w_ix + 1) * 0x9e3779b97f4a7c15ull;
        uint32_t take = 8 - skip < n ? 8 - skip : n;
        memcpy(dst, (uint8_t *)&w + skip, take);
        dst += take;
        n -= take;
        w_ix++;
    }
    for (; n >= 8; n -= 8, dst += 8, w_ix++) {
        uint64_t w = seed ^ (w_ix + 1) * 0x9e3779b97f4a7c15ull;
        memcpy(dst, &w, 8);
    }
    if (n) {
        uint64_t w = seed ^ (w_ix + 1) * 0x9e3779b97f4a7c15ull;
        memcpy(dst, &w, n);
    }
}

static const uint32_t prefixes[] = {0x00000000, 0x61626364, 0x61626300, 0xffffffff,
                                    0x80000001, 0x75736572, 0x00000100, 0x61000000};

/* A key: few distinct prefixes and fills so that keys and buckets collide. */
static inline uint32_t decode_key(struct input *in, uint8_t *key)
{
    uint32_t len = in_u8(in);
    uint8_t pre = in_u8(in), fill = in_u8(in);
    if (len == 255 && (fill & 1)) {
        len = 256; /* one past the maximum */
    }
    uint32_t p = prefixes[pre % 8];
    uint8_t pb[4] = {(uint8_t)(p >> 24), (uint8_t)(p >> 16), (uint8_t)(p >> 8), (uint8_t)p};
    for (uint32_t i = 0; i < len; i++) {
        key[i] = i < 4 ? pb[i] : (uint8_t)(fill + (pre >> 3) * (i & 1));
    }
    return len;
}

/* Value sizes: small mostly, page-sized, page-spanning, the 2 MiB edge, and arbitrary. */
static inline uint32_t decode_vlen(struct input *in)
{
    uint8_t s = in_u8(in);
    if (s < 160) {
        return s;                                               /* 0..159 */
    }
    if (s < 220) {
        return (uint32_t)(s - 159) * 512 + in_u8(in);           /* .. ~30 KiB */
    }
    if (s < 244) {
        return (uint32_t)(s - 219) * 16384 - 64 + in_u8(in);    /* around page multiples */
    }
    if (s < 248) {
        return (uint32_t)(s - 243) * 131072 + in_u16(in);       /* .. ~570 KiB */
    }
    if (s == 248) {
        return KVFTL_VALUE_MAX_BYTES;
    }
    if (s == 249) {
        return KVFTL_VALUE_MAX_BYTES - 1;
    }
    if (s == 250) {
        return KVFTL_VALUE_MAX_BYTES + 1;
    }
    if (s == 251) {
        return UINT32_MAX;
    }
    return in_u32(in) % (KVFTL_VALUE_MAX_BYTES + 64); /* arbitrary within the buffer */
}

/* An iterator handle: mostly one that can be open, sometimes far out of range. */
static inline uint32_t decode_handle(struct input *in)
{
    uint8_t hb = in_u8(in);
    return hb < 240 ? hb % KVFTL_MAX_ITERATORS : hb == 255 ? UINT32_MAX : hb;
}

/*
 * A Store's options and inline part: a byte (bit 7: the options are a raw
 * u32 that follows, else its bits 0-1), then a byte choosing inline_bytes
 * (< 100: none, < 200: all of @vlen, < 250: half, else 1-6 bytes more than
 * the value).
 */
static inline void decode_store_options(struct input *in, uint32_t vlen, uint32_t *opt,
                                        uint32_t *inl)
{
    uint8_t o = in_u8(in);
    *opt = o & 0x80 ? in_u32(in) : (o & 3);
    uint8_t i = in_u8(in);
    *inl = i < 100 ? 0 : i < 200 ? vlen : i < 250 ? (vlen ? vlen / 2 : 0) : vlen + (i - 249);
}

/*
 * A Retrieve's window: an offset byte (< 200: itself, < 250: that many 4 KiB
 * pages less 199, else a raw u32), then a buffer byte (< 100: itself, < 250:
 * @big bytes, else a raw u32 modulo @big + 65).
 */
static inline void decode_read_window(struct input *in, uint32_t big, uint32_t *off,
                                      uint32_t *buf_bytes)
{
    uint8_t os = in_u8(in), bs = in_u8(in);
    *off = os < 200 ? os : os < 250 ? (uint32_t)(os - 199) * 4096 : in_u32(in);
    *buf_bytes = bs < 100 ? bs : bs < 250 ? big : in_u32(in) % (big + 65);
}

/*
 * fuzz_kv_config() - @cfg from the input's first byte @cb: bits 0-1
 * packing, bit 2 plp, bits 3-4 placement unit (1, 64, 1024, 4096 B), bit 5
 * bloom, bit 6 cost-benefit GC, bit 7 tiny index DRAM (12 KiB: 2 index
 * pages + Bloom).
 */
static inline void fuzz_kv_config(struct kvftl_config *cfg, uint8_t cb)
{
    static const uint32_t units[] = {1, 64, 1024, 4096};
    /*
     * ~17 MiB: 1 channel x 2 dies x 8 blocks of 272 4 KiB pages (an erase
     * stripe must hold the largest blob), the fewest blocks the GC
     * watermarks allow plus one, so GC and device-full come quickly.
     */
    kvftl_config_small(cfg, (struct kvftl_small_geometry){.channels = 1,
                                                          .dies_per_channel = 2,
                                                          .blocks_per_die = 8,
                                                          .pages_per_block = 272,
                                                          .page_size_bytes = 4096});
    cfg->gc_high_watermark_blocks = 3;
    cfg->gc_low_watermark_blocks = 2;
    cfg->index_page_bytes = 4096;
    cfg->buffer_entries = 4;
    cfg->dlt_entries = 4;
    cfg->packing = (enum kvftl_packing)(cb & 3);
    cfg->plp = (cb >> 2) & 1;
    cfg->placement_unit_bytes = units[(cb >> 3) & 3];
    cfg->bloom = (cb >> 5) & 1;
    cfg->gc_policy = (cb >> 6) & 1 ? KVFTL_GC_COST_BENEFIT : KVFTL_GC_GREEDY;
    cfg->index_dram_bytes = (cb >> 7) & 1 ? 3 * 4096 : 256 * 1024; /* tiny: 2 pages + Bloom */
    cfg->max_keys = 0;
    cfg->image_path = NULL;
    /* one index layout per input: a finding replays (the default is a random secret) */
    cfg->hash_seed = 1;
    kvftl_config_fuzz_index(cfg);
    /* KVFTL_TEST_PM983_FANOUT_LOG=n: pm983's directory pages of 2^n entries (*_pm983_levels) */
    const char *fanout = getenv("KVFTL_TEST_PM983_FANOUT_LOG");
    if (fanout) {
        pm983_test_fanout_log = (uint32_t)atoi(fanout);
    }
}

#endif
