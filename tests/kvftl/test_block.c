/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nvm personality (include/kvftl/block.h) on the small device of
 * helpers.h: 10 stripes of 576 pages of 4 KiB (each page one 4 KiB slot),
 * GC watermarks 3 and 2. User capacity (10 - 2 - 2) x 2359296 / 100 x 93 =
 * 13,164,801 bytes; a translation page maps (4096 - 32) / 4 = 1016 units,
 * so 3 groups of 1016 units + 1 page of map (4,165,632 bytes each) and
 * (667,905 - 4096) / 4096 = 162 more units: 3210 units, 4 translation
 * pages.
 */
#include <glib.h>
#include <kvftl/block.h>

#include "helpers.h"
#include "page_map.h"

#define UNITS 3210u
#define TPAGE_UNITS 1016u

static struct kvftl_config nvm_config(uint32_t lba_bytes)
{
    struct kvftl_config c = small_config();
    c.command_set = KVFTL_CMDSET_NVM;
    c.lba_bytes = lba_bytes;
    return c;
}

static struct kvftl *open_nvm(uint32_t lba_bytes)
{
    struct kvftl_config c = nvm_config(lba_bytes);
    return open_or_die(&c);
}

static struct kvftl_stats stats_of(struct kvftl *f)
{
    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    return st;
}

/* Write @nlb blocks at @slba, every byte @fill. Returns the status. */
static enum kvftl_status blk_fill(struct kvftl *f, uint64_t slba, uint32_t nlb, uint8_t fill)
{
    uint32_t lb = kvftl_get_config(f)->lba_bytes;
    uint8_t *buf = g_malloc((size_t)nlb * lb);
    memset(buf, fill, (size_t)nlb * lb);
    struct kvftl_cpl cpl;
    kvftl_block_write(f, slba, nlb, buf, false, 0, &cpl);
    g_free(buf);
    return cpl.status;
}

/*
 * Read @nlb blocks at @slba and compare block i with @expect[i] (every
 * byte). Returns the status, or 0xffff on a data mismatch.
 */
static unsigned blk_expect(struct kvftl *f, uint64_t slba, uint32_t nlb, const uint8_t *expect)
{
    uint32_t lb = kvftl_get_config(f)->lba_bytes;
    uint8_t *buf = g_malloc((size_t)nlb * lb);
    memset(buf, 0xa5, (size_t)nlb * lb);
    struct kvftl_cpl cpl;
    kvftl_block_read(f, slba, nlb, buf, 0, &cpl);
    unsigned rc = cpl.status;
    for (uint32_t b = 0; rc == KVFTL_OK && b < nlb; b++) {
        for (uint32_t i = 0; i < lb; i++) {
            if (buf[(size_t)b * lb + i] != expect[b]) {
                rc = 0xffff;
                break;
            }
        }
    }
    g_free(buf);
    return rc;
}

/* Sum of the valid bytes of every stripe. */
static uint64_t valid_total(struct kvftl *f)
{
    uint64_t v = 0;
    for (uint32_t s = 0; s < f->nand.geo.stripes; s++) {
        v += f->space.stripes[s].valid_bytes;
    }
    return v;
}

/* The namespace's size: 3210 units of 4 KiB blocks, 8 times as many 512-byte blocks. */
static void test_namespace_size(void)
{
    struct kvftl *f = open_nvm(4096);
    CU_ASSERT_EQUAL(kvftl_block_lbas(f), UNITS);
    CU_ASSERT_EQUAL(f->pmap.tpages, 4);
    CU_ASSERT_EQUAL(stats_of(f).capacity_bytes, (uint64_t)UNITS * 4096);
    kvftl_close(f);
    f = open_nvm(512);
    CU_ASSERT_EQUAL(kvftl_block_lbas(f), UNITS * 8u);
    kvftl_close(f);
}

/* A range past the namespace, an empty one and one that wraps are INVALID_FIELD. */
static void test_lba_out_of_range(void)
{
    struct kvftl *f = open_nvm(4096);
    uint8_t buf[2 * 4096] = {0};
    struct kvftl_cpl cpl;
    kvftl_block_read(f, UNITS, 1, buf, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_block_write(f, UNITS - 1, 2, buf, false, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_block_read(f, 0, 0, buf, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_block_read(f, UINT64_MAX, 1, buf, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_block_write_zeroes(f, UNITS, 1, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_block_deallocate(f, 1, UNITS, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    /* the last block is in range */
    kvftl_block_write(f, UNITS - 1, 1, buf, false, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).stores, 1);
    kvftl_close(f);
}

/* A block never written reads as zeroes and costs no NAND read. */
static void test_unwritten_reads_zeroes(void)
{
    struct kvftl *f = open_nvm(4096);
    static const uint8_t zero[8] = {0};
    CU_ASSERT_EQUAL(blk_expect(f, 100, 8, zero), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.nand_pages_read, 0);
    CU_ASSERT_EQUAL(st.retrieves, 1);
    CU_ASSERT_EQUAL(st.host_bytes_out, 8 * 4096);
    kvftl_close(f);
}

/* Written blocks read back; each 4 KiB unit programmed one 4 KiB page. */
static void test_write_read_back(void)
{
    struct kvftl *f = open_nvm(4096);
    CU_ASSERT_EQUAL(blk_fill(f, 10, 3, 0x5a), KVFTL_OK);
    static const uint8_t expect[5] = {0, 0x5a, 0x5a, 0x5a, 0};
    CU_ASSERT_EQUAL(blk_expect(f, 9, 5, expect), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 3);
    CU_ASSERT_EQUAL(st.nand_pages_read, 3);
    CU_ASSERT_EQUAL(st.live_keys, 3);
    CU_ASSERT_EQUAL(st.user_bytes_written, 3 * 4096);
    CU_ASSERT_EQUAL(st.host_bytes_in_dma, 3 * 4096);
    CU_ASSERT_EQUAL(st.write_amplification, 1.0);
    CU_ASSERT_EQUAL(f->pmap.write_seq, 3);
    kvftl_close(f);
}

/*
 * 512-byte blocks: writing block 3 of unit 0 reads the unit's old copy
 * (one NAND page), merges 3584 bytes of it and keeps blocks 0-2 and 4-7.
 */
static void test_512_rmw_keeps_neighbours(void)
{
    struct kvftl *f = open_nvm(512);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 8, 0x11), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 0);
    CU_ASSERT_EQUAL(blk_fill(f, 3, 1, 0x22), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.nand_pages_read, 1);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 3584);
    CU_ASSERT_EQUAL(st.user_bytes_written, 9 * 512);
    static const uint8_t expect[8] = {0x11, 0x11, 0x11, 0x22, 0x11, 0x11, 0x11, 0x11};
    CU_ASSERT_EQUAL(blk_expect(f, 0, 8, expect), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).live_keys, 1);
    kvftl_close(f);
}

/* A 512-byte write to a unit never written merges with zeroes: no NAND read. */
static void test_512_write_unmapped_unit(void)
{
    struct kvftl *f = open_nvm(512);
    CU_ASSERT_EQUAL(blk_fill(f, 9, 1, 0x33), KVFTL_OK);
    static const uint8_t expect[8] = {0, 0x33, 0, 0, 0, 0, 0, 0};
    CU_ASSERT_EQUAL(blk_expect(f, 8, 8, expect), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 3584);
    CU_ASSERT_EQUAL(st.nand_pages_read, 1); /* the read above, not the merge */
    kvftl_close(f);
}

/* An overwrite moves a unit's 4096 valid bytes: 10 units, 3 overwritten, 40960 valid. */
static void test_overwrite_frees_valid_bytes(void)
{
    struct kvftl *f = open_nvm(4096);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 10, 1), KVFTL_OK);
    CU_ASSERT_EQUAL(valid_total(f), 10 * 4096);
    CU_ASSERT_EQUAL(blk_fill(f, 2, 3, 2), KVFTL_OK);
    CU_ASSERT_EQUAL(valid_total(f), 10 * 4096);
    CU_ASSERT_EQUAL(f->space.stripes[0].valid_bytes, 10 * 4096);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.live_keys, 10);
    CU_ASSERT_EQUAL(st.live_nand_bytes, 10 * 4096);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 13);
    kvftl_close(f);
}

/* Deallocated units read zeroes and hold no valid bytes; their neighbours keep their data. */
static void test_deallocate_reads_zeroes(void)
{
    struct kvftl *f = open_nvm(4096);
    CU_ASSERT_EQUAL(blk_fill(f, 20, 4, 0x44), KVFTL_OK);
    struct kvftl_cpl cpl;
    kvftl_block_deallocate(f, 21, 2, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    static const uint8_t expect[4] = {0x44, 0, 0, 0x44};
    CU_ASSERT_EQUAL(blk_expect(f, 20, 4, expect), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.live_keys, 2);
    CU_ASSERT_EQUAL(st.deletes, 1);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_DELETE].count, 1);
    CU_ASSERT_EQUAL(valid_total(f), 2 * 4096);
    kvftl_close(f);
}

/* Deallocate leaves a unit it covers in part as it was (512-byte blocks 1..6 of unit 0). */
static void test_deallocate_partial_unit_left(void)
{
    struct kvftl *f = open_nvm(512);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 16, 0x55), KVFTL_OK);
    struct kvftl_cpl cpl;
    kvftl_block_deallocate(f, 1, 6, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    kvftl_block_deallocate(f, 7, 9, 0, &cpl); /* block 7 of unit 0 and all of unit 1 */
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    static const uint8_t expect[16] = {0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55};
    CU_ASSERT_EQUAL(blk_expect(f, 0, 16, expect), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).live_keys, 1);
    kvftl_close(f);
}

/*
 * Deallocate in bounded calls, 512-byte blocks: [3, 37) touches units 0..4
 * (0 and 4 in part). Two units per call: blocks 3..15 (13: unit 0's part
 * and unit 1), then 16..31 (16: units 2 and 3), then 32..36 (the rest, 5).
 * Units 1-3 read zeroes, 0 and 4 keep their data, exactly as one
 * kvftl_block_deallocate() of the range; three DELETE operations, one
 * range counted in deletes (on the last call).
 */
static void test_deallocate_units_steps(void)
{
    struct kvftl *f = open_nvm(512);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 40, 0x66), KVFTL_OK);
    struct kvftl_cpl cpl;
    CU_ASSERT_EQUAL(kvftl_block_deallocate_units(f, 3, 34, 2, 0, &cpl), 13);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).live_keys, 4);
    CU_ASSERT_EQUAL(stats_of(f).deletes, 0);
    CU_ASSERT_EQUAL(kvftl_block_deallocate_units(f, 16, 21, 2, 0, &cpl), 16);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).live_keys, 2);
    CU_ASSERT_EQUAL(kvftl_block_deallocate_units(f, 32, 5, 2, 0, &cpl), 5);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    uint8_t expect[40];
    memset(expect, 0x66, 8);
    memset(expect + 8, 0, 24);
    memset(expect + 32, 0x66, 8);
    CU_ASSERT_EQUAL(blk_expect(f, 0, 40, expect), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.live_keys, 2);
    CU_ASSERT_EQUAL(st.deletes, 1);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_DELETE].count, 3);
    CU_ASSERT_EQUAL(valid_total(f), 2 * 4096);
    kvftl_close(f);
}

/*
 * The whole namespace (3210 units of 4 KiB) 1000 units per call: 1000,
 * 1000, 1000, then the last 210; every unit unmapped, no valid byte left.
 * A range that touches exactly @max_units units is done in one call. A
 * @max_units of 0 or a range past the namespace: INVALID_FIELD, 0 blocks,
 * nothing unmapped.
 */
static void test_deallocate_units_whole_namespace(void)
{
    struct kvftl *f = open_nvm(4096);
    struct kvftl_cpl cpl;
    CU_ASSERT_EQUAL(blk_fill(f, 0, 1024, 0x77), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, UNITS - 8, 8, 0x78), KVFTL_OK);
    CU_ASSERT_EQUAL(kvftl_block_deallocate_units(f, 0, UNITS, 0, 0, &cpl), 0);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    CU_ASSERT_EQUAL(kvftl_block_deallocate_units(f, 1, UNITS, 1000, 0, &cpl), 0);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    CU_ASSERT_EQUAL(stats_of(f).live_keys, 1032);
    CU_ASSERT_EQUAL(stats_of(f).latency[KVFTL_OP_DELETE].count, 0);

    CU_ASSERT_EQUAL(kvftl_block_deallocate_units(f, 0, 4, 4, 0, &cpl), 4);
    CU_ASSERT_EQUAL(stats_of(f).deletes, 1);
    CU_ASSERT_EQUAL(stats_of(f).live_keys, 1028);

    static const uint32_t want[4] = {1000, 1000, 1000, 210};
    uint64_t done = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t n = kvftl_block_deallocate_units(f, done, (uint32_t)(UNITS - done), 1000, 0, &cpl);
        CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
        CU_ASSERT_EQUAL(n, want[i]);
        done += n;
    }
    CU_ASSERT_EQUAL(done, UNITS);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.live_keys, 0);
    CU_ASSERT_EQUAL(st.deletes, 2);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_DELETE].count, 5);
    CU_ASSERT_EQUAL(valid_total(f), 0);
    static const uint8_t zero[8] = {0};
    CU_ASSERT_EQUAL(blk_expect(f, UNITS - 8, 8, zero), KVFTL_OK);
    kvftl_close(f);
}

/*
 * Write Zeroes: a partial unit is read-modify-written (blocks 2-3 of unit
 * 0: 3072 bytes merged), a whole unit is unmapped.
 */
static void test_write_zeroes(void)
{
    struct kvftl *f = open_nvm(512);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 16, 0x66), KVFTL_OK);
    struct kvftl_cpl cpl;
    kvftl_block_write_zeroes(f, 2, 2, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    kvftl_block_write_zeroes(f, 8, 8, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    static const uint8_t expect[16] = {0x66, 0x66, 0, 0, 0x66, 0x66, 0x66, 0x66};
    CU_ASSERT_EQUAL(blk_expect(f, 0, 16, expect), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 3072);
    CU_ASSERT_EQUAL(st.live_keys, 1);
    CU_ASSERT_EQUAL(st.stores, 3);
    CU_ASSERT_EQUAL(valid_total(f), 4096);
    kvftl_close(f);
}

/*
 * Flush on 16 KiB pages: the partial page of one unit is programmed (12
 * KiB of empty slots) and the dirty translation page written back.
 */
static void test_flush_programs_partial_page_and_map(void)
{
    struct kvftl_config c = nvm_config(4096);
    c.pages_per_block = 144;
    c.page_size_bytes = 16384;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(blk_fill(f, 7, 1, 0x77), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_programmed, 0);
    struct kvftl_cpl cpl;
    kvftl_flush(f, 1000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 2);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, 1);
    CU_ASSERT_EQUAL(st.padding_bytes, 12288);
    CU_ASSERT_EQUAL(st.index_nand_bytes, 16384);
    /* the data program (500 us) completes the flush; the map page's program follows it */
    CU_ASSERT(cpl.done_ns >= 1000 + 500000);
    /* the next unit starts the next page */
    CU_ASSERT_EQUAL(blk_fill(f, 8, 1, 0x78), KVFTL_OK);
    CU_ASSERT_EQUAL(f->pmap.map[8], 4);
    static const uint8_t expect[2] = {0x77, 0x78};
    CU_ASSERT_EQUAL(blk_expect(f, 7, 2, expect), KVFTL_OK);
    kvftl_close(f);
}

/* Format unmaps every unit. */
static void test_format_unmaps(void)
{
    struct kvftl *f = open_nvm(4096);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 50, 0x12), KVFTL_OK);
    struct kvftl_cpl cpl;
    kvftl_format(f, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    static const uint8_t zero[50] = {0};
    CU_ASSERT_EQUAL(blk_expect(f, 0, 50, zero), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).live_keys, 0);
    CU_ASSERT_EQUAL(valid_total(f), 0);
    kvftl_close(f);
}

/* The KV commands on an nvm device, and the block commands on a kv device, are INVALID_FIELD. */
static void test_kv_calls_refused_on_nvm(void)
{
    struct kvftl *f = open_nvm(4096);
    struct kvftl_store_req r = {.key = "k", .key_bytes = 1, .value = "v", .value_bytes = 1};
    struct kvftl_cpl cpl;
    uint8_t buf[16];
    uint32_t h;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_retrieve(f, "k", 1, buf, 0, sizeof(buf), 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_delete(f, "k", 1, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_exist(f, "k", 1, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEYS, 0, &h, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_iter_close(f, 0, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    CU_ASSERT_EQUAL(stats_of(f).stores, 0);
    kvftl_close(f);

    struct kvftl_config c = small_config();
    f = open_or_die(&c);
    CU_ASSERT_EQUAL(kvftl_block_lbas(f), 0);
    kvftl_block_read(f, 0, 1, buf, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_block_write(f, 0, 1, buf, false, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_block_write_zeroes(f, 0, 1, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_block_deallocate(f, 0, 1, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_close(f);
}

/* Each written slot's unit spare area names its unit and a fresh write sequence number. */
static void test_unit_spares_written(void)
{
    struct kvftl *f = open_nvm(4096);
    CU_ASSERT_EQUAL(blk_fill(f, 42, 1, 1), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 42, 1, 2), KVFTL_OK);
    uint32_t slot = f->pmap.map[42];
    CU_ASSERT_EQUAL(slot, 1);
    const struct nand_unit_spare *us = nand_unit_spares(&f->nand, slot);
    CU_ASSERT_EQUAL(us[0].unit, 42);
    CU_ASSERT_EQUAL(us[0].seq, 2);
    CU_ASSERT_EQUAL(nand_unit_spares(&f->nand, 0)[0].seq, 1);
    kvftl_close(f);
}

/* A unit whose slot's spare area names another unit (a damaged image) is UNRECOVERED_ERROR. */
static void test_damaged_spare_unrecovered(void)
{
    struct kvftl *f = open_nvm(4096);
    CU_ASSERT_EQUAL(blk_fill(f, 5, 1, 9), KVFTL_OK);
    nand_unit_spares(&f->nand, f->pmap.map[5])[0].unit = 6;
    uint8_t buf[4096];
    struct kvftl_cpl cpl;
    kvftl_block_read(f, 5, 1, buf, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_UNRECOVERED_ERROR);
    CU_ASSERT_EQUAL(stats_of(f).media_errors, 1);
    kvftl_close(f);
}

/* The small device with 16 KiB pages (4 slots each): 144 pages per 2.25 MiB stripe. */
static struct kvftl_config nvm_16k_config(void)
{
    struct kvftl_config c = nvm_config(4096);
    c.pages_per_block = 144;
    c.page_size_bytes = 16384;
    return c;
}

/*
 * FUA on 16 KiB pages: the write of one unit at t=1000 programs its partial
 * page (16384 B over the 800 B/us channel: 20,480 ns, then tPROG 500 us)
 * and completes with it at 521,480 ns; without FUA it completes on arrival.
 */
static void test_fua_programs_before_completion(void)
{
    struct kvftl_config c = nvm_16k_config();
    struct kvftl *f = open_or_die(&c);
    uint8_t buf[4096];
    memset(buf, 0x3c, sizeof(buf));
    struct kvftl_cpl cpl;
    kvftl_block_write(f, 0, 1, buf, false, 1000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.done_ns, 1000);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_programmed, 0);
    kvftl_block_write(f, 1, 1, buf, true, 2000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.done_ns, 2000 + 20480 + 500000);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 1);
    CU_ASSERT_EQUAL(st.padding_bytes, 8192);
    kvftl_close(f);
}

/*
 * A page buffer entry holds bytes only from when it is free. Two entries
 * of 16 KiB pages, twelve one-unit writes all arriving at t=0: units 0-3
 * fill page 0 (entry 0), programmed from t=0 until 20,480 ns of transfer
 * + tPROG 500 us = 520,480 ns; units 4-7 fill page 1 (entry 1); unit 8
 * opens page 2 in entry 0 and waits for it until 520,480 ns, and so do
 * units 9-11 written into that page, though they arrived at t=0 too.
 */
static void test_buffer_entry_holds_writes_until_free(void)
{
    struct kvftl_config c = nvm_16k_config();
    c.buffer_entries = 2;
    struct kvftl *f = open_or_die(&c);
    uint8_t buf[4096];
    memset(buf, 0x5e, sizeof(buf));
    struct kvftl_cpl cpl[12];
    for (uint32_t u = 0; u < 12; u++) {
        kvftl_block_write(f, u, 1, buf, false, 0, &cpl[u]);
        CU_ASSERT_EQUAL(cpl[u].status, KVFTL_OK);
    }
    for (uint32_t u = 0; u < 8; u++) {
        CU_ASSERT_EQUAL(cpl[u].done_ns, 0);
    }
    for (uint32_t u = 8; u < 12; u++) {
        CU_ASSERT_EQUAL(cpl[u].done_ns, 20480 + 500000);
    }
    kvftl_close(f);
}

/*
 * One channel, 4 dies, 4 KiB pages: units 0-3 sit on dies 0-3. Read
 * together at t=1 s they are sensed in parallel (tR 50 us) and moved over
 * the one channel one after another (5,120 ns each): done at +70,480 ns;
 * one unit alone: +55,120 ns.
 */
static void test_read_units_on_dies_in_parallel(void)
{
    struct kvftl_config c = nvm_config(4096);
    c.dies_per_channel = 4;
    c.pages_per_block = 144;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 4, 0x4d), KVFTL_OK);
    uint8_t buf[4 * 4096];
    struct kvftl_cpl cpl;
    kvftl_block_read(f, 0, 4, buf, 1000000000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.done_ns, 1000000000 + 50000 + 4 * 5120);
    CU_ASSERT_EQUAL(cpl.xfer_bytes, 4 * 4096);
    kvftl_block_read(f, 2, 1, buf, 2000000000, &cpl);
    CU_ASSERT_EQUAL(cpl.done_ns, 2000000000 + 50000 + 5120);
    kvftl_close(f);
}

/*
 * Two dies on one channel, 16 KiB pages: one Write of units 0-3 fills one
 * page (die 0), units 4-7 the next (die 1). An 8 KiB read of
 * units 1-2 at t=1 s senses that page once (tR 50 us) and moves both units
 * over the channel (2 x 5,120 ns): done at +60,240 ns, not the +110,240 ns
 * of two reads of the same page on one die. A read of units 3-4 crosses to
 * the next page, on the other die: sensed in parallel, moved one after
 * the other, +60,240 ns too.
 */
static void test_read_units_of_one_page_sense_it_once(void)
{
    struct kvftl_config c = nvm_config(4096);
    c.dies_per_channel = 2;
    c.pages_per_block = 144;
    c.page_size_bytes = 16384;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 8, 0x5e), KVFTL_OK);
    CU_ASSERT_EQUAL(f->pmap.map[1] / 4, f->pmap.map[2] / 4); /* one page */
    CU_ASSERT_NOT_EQUAL(f->pmap.map[3] / 4, f->pmap.map[4] / 4);
    uint8_t buf[2 * 4096];
    struct kvftl_cpl cpl;
    uint64_t reads = stats_of(f).nand_pages_read;
    kvftl_block_read(f, 1, 2, buf, 1000000000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.done_ns, 1000000000 + 50000 + 2 * 5120);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read - reads, 1);
    CU_ASSERT_EQUAL(buf[0], 0x5e);
    CU_ASSERT_EQUAL(buf[2 * 4096 - 1], 0x5e);
    kvftl_block_read(f, 3, 2, buf, 2000000000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.done_ns, 2000000000 + 50000 + 2 * 5120);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read - reads, 3);
    kvftl_close(f);
}

/*
 * Stripe 0 (576 slots on 16 KiB pages) filled with units 0-575, then
 * units 0-573 overwritten and unit 2000 written (stripe 1's slots 0-574):
 * units 574 and 575 are stripe 0's two live slots. Collecting it relocates
 * them (8192 bytes) with new sequence numbers: the first fills stripe 1's
 * last page (programmed), the second starts a fresh stripe's first page,
 * which with PLP off is programmed before the erase (12,288 bytes of
 * padding) and with PLP on stays in the buffer.
 */
static void gc_two_live(bool plp)
{
    struct kvftl_config c = nvm_16k_config();
    c.plp = plp;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 576, 1), KVFTL_OK);
    CU_ASSERT_EQUAL(f->space.stripes[0].state, STRIPE_DATA);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 574, 2), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 2000, 1, 3), KVFTL_OK);
    CU_ASSERT_EQUAL(f->space.stripes[0].valid_bytes, 8192);
    uint64_t seq = f->pmap.write_seq, padding = stats_of(f).padding_bytes;
    uint64_t programmed = stats_of(f).nand_data_pages_programmed;
    uint64_t now = 0;
    CU_ASSERT_EQUAL(gc_collect(f, 0, &now), 0);
    CU_ASSERT_EQUAL(f->space.stripes[0].state, STRIPE_FREE);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.gc_relocated_bytes, 8192);
    CU_ASSERT_EQUAL(f->pmap.write_seq, seq + 2);
    const struct nand_unit_spare *us = nand_unit_spares(&f->nand, f->pmap.map[575] / 4);
    CU_ASSERT_EQUAL(us[f->pmap.map[575] % 4].unit, 575);
    CU_ASSERT_EQUAL(us[f->pmap.map[575] % 4].seq, seq + 2);
    CU_ASSERT_EQUAL(st.padding_bytes - padding, plp ? 0 : 12288);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed - programmed, plp ? 1 : 2);
    CU_ASSERT_EQUAL(f->pmap.map[575] % 576, 0); /* a fresh stripe's first slot */
    uint8_t expect[576];
    memset(expect, 2, 574);
    expect[574] = expect[575] = 1;
    CU_ASSERT_EQUAL(blk_expect(f, 0, 576, expect), KVFTL_OK);
    CU_ASSERT_EQUAL(valid_total(f), 577 * 4096);
    kvftl_close(f);
}

static void test_gc_relocates_live_slots_plp(void)
{
    gc_two_live(true);
}

static void test_gc_without_plp_programs_before_erase(void)
{
    gc_two_live(false);
}

/*
 * One Write of all 3210 units (12.5 MiB, more than five 2.25 MiB stripes)
 * over a full device: GC runs between its units, and every unit reads the
 * new bytes.
 */
static void test_long_write_over_full_device(void)
{
    struct kvftl *f = open_nvm(4096);
    CU_ASSERT_EQUAL(blk_fill(f, 0, UNITS, 0x10), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 0, UNITS, 0x20), KVFTL_OK);
    uint8_t *expect = g_malloc(UNITS);
    memset(expect, 0x20, UNITS);
    CU_ASSERT_EQUAL(blk_expect(f, 0, UNITS, expect), KVFTL_OK);
    g_free(expect);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT(st.gc_runs > 0);
    CU_ASSERT_EQUAL(st.live_keys, UNITS);
    CU_ASSERT_EQUAL(valid_total(f), (uint64_t)UNITS * 4096);
    kvftl_close(f);
}

/* A unit still in the page buffer (16 KiB pages, one slot written) is read without a NAND read. */
static void test_read_from_buffer_costs_no_nand_read(void)
{
    struct kvftl_config c = nvm_16k_config();
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(blk_fill(f, 3, 1, 0x5b), KVFTL_OK);
    uint8_t buf[4096];
    struct kvftl_cpl cpl;
    kvftl_block_read(f, 3, 1, buf, 7000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.done_ns, 7000);
    CU_ASSERT(buf[0] == 0x5b && buf[4095] == 0x5b);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 0);
    kvftl_close(f);
}

/*
 * 512-byte blocks 5-20: unit 0 from block 5 (1536 bytes new, 2560 kept),
 * unit 1 whole, unit 2 up to block 20 (2560 new, 1536 kept): 4096 bytes
 * merged, and the blocks around the range stay zero.
 */
static void test_512_write_spanning_units(void)
{
    struct kvftl *f = open_nvm(512);
    CU_ASSERT_EQUAL(blk_fill(f, 5, 16, 0x6e), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).memcpy_bytes, 4096);
    uint8_t expect[24] = {0};
    memset(expect + 5, 0x6e, 16);
    CU_ASSERT_EQUAL(blk_expect(f, 0, 24, expect), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).live_keys, 3);
    kvftl_close(f);
}

/* Write Zeroes on part of a unit never written changes nothing: no copy, nothing mapped. */
static void test_write_zeroes_partial_unmapped_unit(void)
{
    struct kvftl *f = open_nvm(512);
    struct kvftl_cpl cpl;
    kvftl_block_write_zeroes(f, 1, 3, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 0);
    CU_ASSERT_EQUAL(st.live_keys, 0);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 0);
    kvftl_close(f);
}

/* ---- the write buffer of partial units (write_buffer_pages_per_die) ---- */

/*
 * 512-byte blocks and a write buffer of 4 units (one die x 4 pages of 4
 * KiB); units 0-5 written whole (0x11) and flushed, so that their copies
 * are on NAND and nothing has been read yet.
 */
static struct kvftl *open_wbuf(bool plp)
{
    struct kvftl_config c = nvm_config(512);
    c.write_buffer_pages_per_die = 4;
    c.plp = plp;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->pmap.wb.cap, 4);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 6 * 8, 0x11), KVFTL_OK);
    struct kvftl_cpl cpl;
    kvftl_flush(f, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 0);
    return f;
}

/*
 * A 512-byte write to a flushed unit lands in the write buffer: no NAND
 * read, nothing merged; reading the block back is served from the buffer
 * (still no NAND read); reading the whole unit reads its NAND copy once
 * under the buffered block. Without the buffer the write alone read one
 * page and merged 3584 bytes.
 */
static void test_wbuf_512_write_read_no_nand_read(void)
{
    struct kvftl *f = open_wbuf(true);
    CU_ASSERT_EQUAL(blk_fill(f, 3, 1, 0x22), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.nand_pages_read, 0);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 0);
    CU_ASSERT_EQUAL(f->pmap.wb.used, 1);
    static const uint8_t one[1] = {0x22};
    CU_ASSERT_EQUAL(blk_expect(f, 3, 1, one), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 0);
    static const uint8_t all[8] = {0x11, 0x11, 0x11, 0x22, 0x11, 0x11, 0x11, 0x11};
    CU_ASSERT_EQUAL(blk_expect(f, 0, 8, all), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 1);
    kvftl_close(f);
}

/*
 * Two 512-byte writes to one flushed unit cost no NAND read; Flush drains
 * the buffer: one read-modify-write (one page read, 3072 bytes merged),
 * one unit programmed, the buffer empty, the data as written.
 */
static void test_wbuf_two_partial_writes_then_flush(void)
{
    struct kvftl *f = open_wbuf(true);
    uint64_t programmed = stats_of(f).nand_data_pages_programmed;
    CU_ASSERT_EQUAL(blk_fill(f, 3, 1, 0x22), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 5, 1, 0x33), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 0);
    CU_ASSERT_EQUAL(f->pmap.wb.used, 1);
    struct kvftl_cpl cpl;
    kvftl_flush(f, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.nand_pages_read, 1);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 3072);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, programmed + 1);
    CU_ASSERT_EQUAL(f->pmap.wb.used, 0);
    static const uint8_t all[8] = {0x11, 0x11, 0x11, 0x22, 0x11, 0x33, 0x11, 0x11};
    CU_ASSERT_EQUAL(blk_expect(f, 0, 8, all), KVFTL_OK);
    kvftl_close(f);
}

/*
 * Partial writes that together cover a unit (blocks 0-2, then 3-7, as a
 * 23 KiB write's tail and the next one's head would) leave it whole in the
 * buffer: its write-out reads nothing and merges nothing.
 */
static void test_wbuf_partials_covering_unit_read_nothing(void)
{
    struct kvftl *f = open_wbuf(true);
    CU_ASSERT_EQUAL(blk_fill(f, 8, 3, 0x44), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 11, 5, 0x55), KVFTL_OK);
    struct kvftl_cpl cpl;
    kvftl_flush(f, 0, &cpl);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.nand_pages_read, 0);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 0);
    static const uint8_t all[8] = {0x44, 0x44, 0x44, 0x55, 0x55, 0x55, 0x55, 0x55};
    CU_ASSERT_EQUAL(blk_expect(f, 8, 8, all), KVFTL_OK);
    kvftl_close(f);
}

/*
 * A full buffer writes out its least recently written unit: units 0-3
 * buffered, unit 0 written again, then unit 4 evicts unit 1 (one
 * read-modify-write), and units 0, 2, 3, 4 stay buffered.
 */
static void test_wbuf_full_evicts_least_recently_written(void)
{
    struct kvftl *f = open_wbuf(true);
    for (uint64_t u = 0; u < 4; u++) {
        CU_ASSERT_EQUAL(blk_fill(f, u * 8 + 1, 1, 0x60 + (uint8_t)u), KVFTL_OK);
    }
    CU_ASSERT_EQUAL(blk_fill(f, 2, 1, 0x6f), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 0);
    CU_ASSERT_EQUAL(blk_fill(f, 4 * 8 + 1, 1, 0x64), KVFTL_OK);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 1);
    CU_ASSERT_EQUAL(f->pmap.wb.used, 4);
    CU_ASSERT_EQUAL(write_buffer_find(&f->pmap.wb, 1), WRITE_BUFFER_NONE);
    CU_ASSERT_NOT_EQUAL(write_buffer_find(&f->pmap.wb, 0), WRITE_BUFFER_NONE);
    CU_ASSERT_NOT_EQUAL(write_buffer_find(&f->pmap.wb, 4), WRITE_BUFFER_NONE);
    static const uint8_t u1[8] = {0x11, 0x61, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11};
    CU_ASSERT_EQUAL(blk_expect(f, 8, 8, u1), KVFTL_OK);
    kvftl_close(f);
}

/*
 * A whole-unit write, a Deallocate of the whole unit and Write Zeroes
 * supersede buffered bytes: units 0 and 1 buffered; unit 0 written whole
 * (0x77) and unit 1 deallocated drop their entries; Write Zeroes of block
 * 2 of buffered unit 2 merges in the buffer. Flush then reads only unit
 * 2's old copy.
 */
static void test_wbuf_superseded_by_write_and_unmap(void)
{
    struct kvftl *f = open_wbuf(true);
    CU_ASSERT_EQUAL(blk_fill(f, 1, 1, 0x21), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 9, 1, 0x22), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 17, 1, 0x23), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 8, 0x77), KVFTL_OK);
    struct kvftl_cpl cpl;
    kvftl_block_deallocate(f, 8, 8, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    kvftl_block_write_zeroes(f, 18, 1, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(f->pmap.wb.used, 1);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 0);
    kvftl_flush(f, 0, &cpl);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 1);
    static const uint8_t u0[8] = {0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77};
    static const uint8_t u1[8] = {0};
    static const uint8_t u2[8] = {0x11, 0x23, 0, 0x11, 0x11, 0x11, 0x11, 0x11};
    CU_ASSERT_EQUAL(blk_expect(f, 0, 8, u0), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_expect(f, 8, 8, u1), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_expect(f, 16, 8, u2), KVFTL_OK);
    kvftl_close(f);
}

/* A FUA write takes its units out of the buffer: programmed when it completes. */
static void test_wbuf_fua_writes_unit_out(void)
{
    struct kvftl *f = open_wbuf(true);
    uint64_t programmed = stats_of(f).nand_data_pages_programmed;
    uint8_t b[512];
    memset(b, 0x5f, sizeof(b));
    struct kvftl_cpl cpl;
    kvftl_block_write(f, 3, 1, b, true, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(f->pmap.wb.used, 0);
    CU_ASSERT_EQUAL(stats_of(f).nand_pages_read, 1);
    CU_ASSERT_EQUAL(stats_of(f).nand_data_pages_programmed, programmed + 1);
    kvftl_close(f);
}

/*
 * A power cut: unit 0's 512-byte write was flushed, unit 1's is only in
 * the buffer. With PLP the capacitors write it out (both survive);
 * without, unit 1 comes back whole as flushed (0x11), never a mix.
 */
static void wbuf_power_cut(bool plp, uint8_t unit1_block1)
{
    struct kvftl *f = open_wbuf(plp);
    CU_ASSERT_EQUAL(blk_fill(f, 1, 1, 0x31), KVFTL_OK);
    struct kvftl_cpl cpl;
    kvftl_flush(f, 0, &cpl);
    CU_ASSERT_EQUAL(blk_fill(f, 9, 1, 0x32), KVFTL_OK);
    CU_ASSERT_EQUAL(f->pmap.wb.used, 1);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(f->pmap.wb.used, 0);
    const uint8_t u0[8] = {0x11, 0x31, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11};
    const uint8_t u1[8] = {0x11, unit1_block1, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11};
    CU_ASSERT_EQUAL(blk_expect(f, 0, 8, u0), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_expect(f, 8, 8, u1), KVFTL_OK);
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    kvftl_close(f);
}

/*
 * The capacitor dump opens a stripe: the open data stripe has 2 of its
 * 576 slots left (units 0-5 flushed, 568 more written whole) when 4
 * partial units are buffered and power is cut; with PLP all 4 come back,
 * 2 of them from the next stripe.
 */
static void test_wbuf_plp_dump_opens_a_stripe(void)
{
    struct kvftl *f = open_wbuf(true);
    CU_ASSERT_EQUAL(blk_fill(f, 6 * 8, 568 * 8, 0x12), KVFTL_OK);
    CU_ASSERT_EQUAL(f->space.data.wp, 574 * 4096);
    for (uint64_t u = 0; u < 4; u++) {
        CU_ASSERT_EQUAL(blk_fill(f, u * 8 + 7, 1, 0x70 + (uint8_t)u), KVFTL_OK);
    }
    CU_ASSERT_EQUAL(f->pmap.wb.used, 4);
    uint32_t stripe = f->space.data.stripe;
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
    for (uint64_t u = 0; u < 4; u++) {
        uint8_t e[8] = {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x70 + (uint8_t)u};
        CU_ASSERT_EQUAL(blk_expect(f, u * 8, 8, e), KVFTL_OK);
    }
    CU_ASSERT_NOT_EQUAL(f->pmap.map[3] / 576, stripe);
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    kvftl_close(f);
}

static void test_wbuf_power_cut_plp_keeps_buffered(void)
{
    wbuf_power_cut(true, 0x32);
}

static void test_wbuf_power_cut_no_plp_loses_unflushed(void)
{
    wbuf_power_cut(false, 0x11);
}

/*
 * kvftl_block_read_batch() is kvftl_block_read() in order: two devices
 * given the same writes (512-byte blocks, a 2-page map budget so reads also
 * miss), then the same 40 reads (single and multi-unit, unwritten, one out
 * of range, one of 0 blocks), one device through the batch call and one a
 * read at a time, agree on every completion, byte and statistic.
 */
static void test_read_batch_equals_single_reads(void)
{
    struct kvftl_config c = nvm_config(512);
    c.index_dram_bytes = 8192;
    c.bloom = false;
    struct kvftl *a = open_or_die(&c), *b = open_or_die(&c);
    uint8_t data[8 * 512];
    for (uint32_t i = 0; i < 60; i++) {
        uint64_t slba = (uint64_t)(i * 2654435761u % (UNITS * 8 - 8));
        memset(data, (uint8_t)i, sizeof(data));
        struct kvftl_cpl ca, cb;
        kvftl_block_write(a, slba, 1 + i % 8, data, false, i * 1000, &ca);
        kvftl_block_write(b, slba, 1 + i % 8, data, false, i * 1000, &cb);
        CU_ASSERT_EQUAL(ca.status, KVFTL_OK);
    }
    enum { N = 40 };
    struct kvftl_block_read_req req[N];
    struct kvftl_cpl ca[N], cb[N];
    static uint8_t bufa[N][16 * 512], bufb[N][16 * 512];
    memset(bufa, 0, sizeof(bufa));
    memset(bufb, 0, sizeof(bufb));
    for (uint32_t i = 0; i < N; i++) {
        req[i] = (struct kvftl_block_read_req){
            .slba = (uint64_t)(i * 2654435761u % (UNITS * 8 - 16)),
            .nlb = 1 + i % 16,
            .buf = bufa[i],
            .arrival_ns = 1000000000ull + i * 20000,
        };
    }
    req[7].slba = UNITS * 8; /* out of range */
    req[13].nlb = 0;
    kvftl_block_read_batch(a, req, ca, N);
    for (uint32_t i = 0; i < N; i++) {
        kvftl_block_read(b, req[i].slba, req[i].nlb, bufb[i], req[i].arrival_ns, &cb[i]);
    }
    unsigned differ = 0;
    for (uint32_t i = 0; i < N; i++) {
        differ += ca[i].status != cb[i].status || ca[i].done_ns != cb[i].done_ns ||
                  ca[i].xfer_bytes != cb[i].xfer_bytes;
    }
    CU_ASSERT_EQUAL(differ, 0);
    CU_ASSERT_EQUAL(ca[7].status, KVFTL_INVALID_FIELD);
    CU_ASSERT_EQUAL(ca[13].status, KVFTL_INVALID_FIELD);
    CU_ASSERT_EQUAL(memcmp(bufa, bufb, sizeof(bufa)), 0);
    struct kvftl_stats sa = stats_of(a), sb = stats_of(b);
    CU_ASSERT(sa.index_cache_misses > 0);
    CU_ASSERT_EQUAL(sa.index_cache_misses, sb.index_cache_misses);
    CU_ASSERT_EQUAL(sa.index_cache_hits, sb.index_cache_hits);
    CU_ASSERT_EQUAL(sa.nand_pages_read, sb.nand_pages_read);
    CU_ASSERT_EQUAL(sa.retrieves, sb.retrieves);
    CU_ASSERT_EQUAL(sa.host_bytes_out, sb.host_bytes_out);
    CU_ASSERT_EQUAL(sa.sim_now_ns, sb.sim_now_ns);
    kvftl_close(a);
    kvftl_close(b);
}

/*
 * Background GC: overwrites (arriving back to back) until 2 stripes are
 * free, under the high watermark of 3; a write arriving after 1 s of idle
 * time first lets one victim be collected in it (no foreground stall).
 */
static void test_background_gc_in_idle_time(void)
{
    struct kvftl *f = open_nvm(4096);
    uint8_t b[4096] = {0};
    struct kvftl_cpl cpl;
    uint32_t u = 0;
    while (f->space.free_stripes > 2) {
        kvftl_block_write(f, u, 1, b, false, 0, &cpl);
        CU_ASSERT_EQUAL_FATAL(cpl.status, KVFTL_OK);
        u = (u + 1) % UNITS;
    }
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.gc_runs, 0);
    uint64_t stalls = st.gc_foreground_stalls;
    kvftl_block_write(f, u, 1, b, false, st.sim_now_ns + 1000000000ull, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    st = stats_of(f);
    CU_ASSERT_EQUAL(f->gc_background_runs, 1);
    CU_ASSERT_EQUAL(st.gc_runs, 1);
    CU_ASSERT_EQUAL(st.gc_foreground_stalls, stalls);
    CU_ASSERT_EQUAL(f->space.free_stripes, 3);
    kvftl_close(f);
}

/* Unit @u's content at @version: its number and the version, then a byte pattern. */
static void stamp(uint8_t *b, uint32_t u, uint32_t version)
{
    memset(b, (uint8_t)(u * 7 + version), 4096);
    memcpy(b, &u, 4);
    memcpy(b + 4, &version, 4);
}

/*
 * Every unit written, then 3 device-fills of random overwrites (9630
 * writes into 5760 slots) on a device with @index_dram_bytes of map
 * budget: GC runs, relocates, and every unit reads its last version; WAF
 * > 1; the stripes' valid bytes are the mapped units' and the translation
 * pages'.
 */
static struct kvftl *random_overwrites(uint64_t index_dram_bytes)
{
    struct kvftl_config c = nvm_config(4096);
    c.index_dram_bytes = index_dram_bytes;
    c.bloom = false;
    struct kvftl *f = open_or_die(&c);
    uint32_t *version = g_new0(uint32_t, UNITS);
    uint8_t b[4096];
    struct kvftl_cpl cpl;
    uint64_t t = 0;
    for (uint32_t u = 0; u < UNITS; u++) {
        stamp(b, u, 0);
        kvftl_block_write(f, u, 1, b, false, t, &cpl);
        CU_ASSERT_EQUAL_FATAL(cpl.status, KVFTL_OK);
        t = cpl.done_ns;
    }
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < 3 * UNITS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t u = (uint32_t)(x % UNITS);
        stamp(b, u, ++version[u]);
        kvftl_block_write(f, u, 1, b, false, t, &cpl);
        CU_ASSERT_EQUAL_FATAL(cpl.status, KVFTL_OK);
        t = cpl.done_ns;
    }
    unsigned bad = 0;
    uint8_t want[4096];
    for (uint32_t u = 0; u < UNITS; u++) {
        kvftl_block_read(f, u, 1, b, t, &cpl);
        stamp(want, u, version[u]);
        bad += cpl.status != KVFTL_OK || memcmp(b, want, 4096) != 0;
    }
    CU_ASSERT_EQUAL(bad, 0);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT(st.gc_runs > 0);
    CU_ASSERT(st.gc_relocated_bytes > 0);
    CU_ASSERT(st.write_amplification > 1.0);
    CU_ASSERT_EQUAL(st.live_keys, UNITS);
    CU_ASSERT_EQUAL(valid_total(f), (uint64_t)UNITS * 4096 + f->pmap.nand_bytes);
    g_free(version);
    return f;
}

static void test_gc_keeps_data_under_random_overwrites(void)
{
    struct kvftl *f = random_overwrites(1 << 20);
    CU_ASSERT_EQUAL(stats_of(f).index_cache_misses, 0);
    kvftl_close(f);
}

/*
 * The same with 2 translation pages of DRAM for 4: dirty pages are
 * evicted to index stripes, and GC collects those too (their live pages
 * relocated): the data stays.
 */
static void test_gc_keeps_data_with_tiny_map_budget(void)
{
    struct kvftl *f = random_overwrites(8192);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT(st.index_cache_misses > 0);
    CU_ASSERT(st.index_pages_evicted_dirty > 0);
    kvftl_close(f);
}

/*
 * A budget of 2 translation pages for 4 (index_dram_bytes 8192): the cache
 * starts with pages 0 and 1 (0 most recent). Writing units 0 (page 0: hit),
 * 2032 (page 2: miss, evicts clean page 1), 3048 (page 3: miss, evicts
 * dirty page 0: programmed) and reading unit 0 (page 0: miss, evicts dirty
 * page 2: programmed; page 0 read from NAND): 1 hit, 3 misses, 2 dirty
 * evictions, 3 data + 2 map pages programmed, 1 map page read. The read,
 * at t=1 s on the one die: the eviction's program (5,120 ns transfer +
 * 500 us) holds the die, then map page 0 is read (50 us + 5,120 ns), then
 * the data (the same): done at +615,360 ns.
 */
static void test_dftl_miss_count_tiny_budget(void)
{
    struct kvftl_config c = nvm_config(4096);
    c.index_dram_bytes = 8192;
    c.bloom = false;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->pmap.frames_max, 2);
    CU_ASSERT_EQUAL(blk_fill(f, 0, 1, 0xa0), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 2 * TPAGE_UNITS, 1, 0xa2), KVFTL_OK);
    CU_ASSERT_EQUAL(blk_fill(f, 3 * TPAGE_UNITS, 1, 0xa3), KVFTL_OK);
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.index_cache_hits, 1);
    CU_ASSERT_EQUAL(st.index_cache_misses, 2);
    CU_ASSERT_EQUAL(st.index_pages_evicted_dirty, 1);
    uint64_t read_before = st.nand_pages_read;
    uint8_t buf[4096];
    struct kvftl_cpl cpl;
    kvftl_block_read(f, 0, 1, buf, 1000000000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.done_ns, 1000000000 + 5120 + 500000 + 2 * (50000 + 5120));
    CU_ASSERT(buf[0] == 0xa0 && buf[4095] == 0xa0);
    st = stats_of(f);
    CU_ASSERT_EQUAL(st.index_cache_hits, 1);
    CU_ASSERT_EQUAL(st.index_cache_misses, 3);
    CU_ASSERT_EQUAL(st.index_pages_evicted_dirty, 2);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 5);
    CU_ASSERT_EQUAL(st.nand_pages_read - read_before, 2); /* map page 0, then the data */
    CU_ASSERT_EQUAL(st.index_nand_bytes, 2 * 4096);
    kvftl_close(f);
}

/* A budget that holds the map: no translation page is ever read or programmed by writes. */
static void test_dftl_budget_holds_map(void)
{
    struct kvftl *f = open_nvm(4096);
    for (uint32_t u = 0; u < UNITS; u += 100) {
        CU_ASSERT_EQUAL(blk_fill(f, u, 1, 1), KVFTL_OK);
    }
    struct kvftl_stats st = stats_of(f);
    CU_ASSERT_EQUAL(st.index_cache_misses, 0);
    CU_ASSERT_EQUAL(st.index_pages_evicted_dirty, 0);
    CU_ASSERT_EQUAL(st.index_nand_bytes, 0);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 33);
    kvftl_close(f);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_namespace_size),
    TAP_TEST_FN(test_lba_out_of_range),
    TAP_TEST_FN(test_unwritten_reads_zeroes),
    TAP_TEST_FN(test_write_read_back),
    TAP_TEST_FN(test_512_rmw_keeps_neighbours),
    TAP_TEST_FN(test_512_write_unmapped_unit),
    TAP_TEST_FN(test_overwrite_frees_valid_bytes),
    TAP_TEST_FN(test_deallocate_reads_zeroes),
    TAP_TEST_FN(test_deallocate_partial_unit_left),
    TAP_TEST_FN(test_deallocate_units_steps),
    TAP_TEST_FN(test_deallocate_units_whole_namespace),
    TAP_TEST_FN(test_write_zeroes),
    TAP_TEST_FN(test_flush_programs_partial_page_and_map),
    TAP_TEST_FN(test_format_unmaps),
    TAP_TEST_FN(test_kv_calls_refused_on_nvm),
    TAP_TEST_FN(test_unit_spares_written),
    TAP_TEST_FN(test_damaged_spare_unrecovered),
    TAP_TEST_FN(test_fua_programs_before_completion),
    TAP_TEST_FN(test_buffer_entry_holds_writes_until_free),
    TAP_TEST_FN(test_read_units_on_dies_in_parallel),
    TAP_TEST_FN(test_read_units_of_one_page_sense_it_once),
    TAP_TEST_FN(test_gc_relocates_live_slots_plp),
    TAP_TEST_FN(test_gc_without_plp_programs_before_erase),
    TAP_TEST_FN(test_read_from_buffer_costs_no_nand_read),
    TAP_TEST_FN(test_512_write_spanning_units),
    TAP_TEST_FN(test_write_zeroes_partial_unmapped_unit),
    TAP_TEST_FN(test_wbuf_512_write_read_no_nand_read),
    TAP_TEST_FN(test_wbuf_two_partial_writes_then_flush),
    TAP_TEST_FN(test_wbuf_partials_covering_unit_read_nothing),
    TAP_TEST_FN(test_wbuf_full_evicts_least_recently_written),
    TAP_TEST_FN(test_wbuf_superseded_by_write_and_unmap),
    TAP_TEST_FN(test_wbuf_fua_writes_unit_out),
    TAP_TEST_FN(test_wbuf_plp_dump_opens_a_stripe),
    TAP_TEST_FN(test_wbuf_power_cut_plp_keeps_buffered),
    TAP_TEST_FN(test_wbuf_power_cut_no_plp_loses_unflushed),
    TAP_TEST_FN(test_read_batch_equals_single_reads),
    TAP_TEST_FN(test_background_gc_in_idle_time),
    TAP_TEST_FN(test_long_write_over_full_device),
    TAP_TEST_FN(test_gc_keeps_data_under_random_overwrites),
    TAP_TEST_FN(test_gc_keeps_data_with_tiny_map_budget),
    TAP_TEST_FN(test_dftl_miss_count_tiny_budget),
    TAP_TEST_FN(test_dftl_budget_holds_map),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("block", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
