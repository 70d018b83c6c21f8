/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The edges of the block commands on a namespace larger than one command
 * moves: a write and a read of exactly KVFTL_BLOCK_MAX_XFER_BYTES / lba_bytes
 * blocks (64 MiB) succeed and one block more is refused; the first and last
 * blocks of the namespace; a range that ends exactly at its end and one
 * that passes it by one; a Deallocate and a Write Zeroes of the whole
 * namespace in one command (they move no data, so no transfer limit).
 * Every answer is judged by the sector model and every block read back.
 */
#include <inttypes.h>
#include <stdio.h>

#include "block_model.h"

/* Write then read [@slba, @slba + @nlb) through a buffer of @nlb blocks; false on a failure. */
static bool write_read_big(struct block_run *r, uint8_t *big, size_t big_cap, uint64_t slba,
                           uint32_t nlb)
{
    uint64_t g = sector_model_next_gen(&r->m);
    if ((uint64_t)nlb * r->m.lba_bytes <= big_cap - SECTOR_MODEL_GUARD_BYTES) {
        sector_model_fill_range(&r->m, slba, nlb, g, big);
    }
    struct kvftl_cpl c;
    uint64_t t = r->now;
    block_oplog_add(r, "write lba %" PRIu64 " + %u (generation %" PRIu64 ")", slba, nlb, g);
    kvftl_block_write(r->ftl, slba, nlb, big, false, t, &c);
    if (!block_judged(r, sector_model_write(&r->m, slba, nlb, g, false, t, &c), &c)) {
        return false;
    }
    t = r->now;
    block_oplog_add(r, "read lba %" PRIu64 " + %u", slba, nlb);
    sector_model_guard(&r->m, nlb, big, big_cap);
    kvftl_block_read(r->ftl, slba, nlb, big, t, &c);
    return block_judged(r, sector_model_read(&r->m, slba, nlb, t, &c, big, big_cap), &c);
}

static void whole_namespace(struct block_run *r, bool dealloc)
{
    struct kvftl_cpl c;
    uint64_t t = r->now;
    uint32_t n = (uint32_t)r->m.lbas;
    block_oplog_add(r, "%s of the whole namespace", dealloc ? "deallocate" : "write zeroes");
    if (dealloc) {
        kvftl_block_deallocate(r->ftl, 0, n, t, &c);
        block_judged(r, sector_model_deallocate(&r->m, 0, n, t, &c), &c);
    } else {
        kvftl_block_write_zeroes(r->ftl, 0, n, t, &c);
        block_judged(r, sector_model_write_zeroes(&r->m, 0, n, t, &c), &c);
    }
    if (!r->failed) {
        CU_ASSERT_EQUAL(c.status, KVFTL_OK);
    }
}

static void extremes(const struct block_scenario *sc)
{
    if (block_test_skipped(sc->name)) {
        return;
    }
    struct block_run *r = block_run_new(sc);
    size_t big_cap = KVFTL_BLOCK_MAX_XFER_BYTES + (size_t)sc->lba_bytes + SECTOR_MODEL_GUARD_BYTES;
    uint8_t *big = g_malloc(big_cap);
    if (!block_open_device(r)) {
        goto out;
    }
    uint32_t max = r->m.max_nlb;
    uint64_t lbas = r->m.lbas;
    printf("# %s: namespace %" PRIu64 " blocks of %u B, at most %u a command\n", sc->name, lbas,
           sc->lba_bytes, max);
    CU_ASSERT_FATAL(lbas > (uint64_t)max + 1);
    /* the transfer limit: exactly, then one block more (refused, nothing changes) */
    if (!write_read_big(r, big, big_cap, 1, max) || !write_read_big(r, big, big_cap, 0, max + 1)) {
        goto out;
    }
    CU_ASSERT_EQUAL(r->m.cur[0], 0); /* the model took nothing of the refused write */
    /* the namespace's last block, a range ending at its end, one passing it */
    if (!write_read_big(r, big, big_cap, lbas - 1, 1) ||
        !write_read_big(r, big, big_cap, lbas - 300, 300) ||
        !write_read_big(r, big, big_cap, lbas - 299, 300) ||
        !write_read_big(r, big, big_cap, lbas, 1) ||
        !block_verify_all(r, "after the edges", false)) {
        goto out;
    }
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    CU_ASSERT_EQUAL(st.user_bytes_written, ((uint64_t)max + 1 + 300) * sc->lba_bytes);
    /* one command for the whole namespace: Write Zeroes, then Deallocate */
    whole_namespace(r, false);
    if (r->failed || !block_verify_all(r, "after zeroing the namespace", false)) {
        goto out;
    }
    kvftl_stats_get(r->ftl, &st);
    CU_ASSERT_EQUAL(st.live_keys, 0);
    if (!write_read_big(r, big, big_cap, 7, max)) {
        goto out;
    }
    whole_namespace(r, true);
    if (!r->failed && block_verify_all(r, "after deallocating the namespace", false)) {
        kvftl_stats_get(r->ftl, &st);
        CU_ASSERT_EQUAL(st.live_keys, 0);
    }
out:
    g_free(big);
    block_run_free(r);
}

/* 4 dies x 24 blocks of 272 4 KiB pages: 107 MiB of NAND, a namespace of about 79 MiB. */
#define BIG_4K                                                                            \
    .page_size_bytes = 4096, .pages_per_block = 272, .blocks_per_die = 24, .channels = 2, \
    .dies_per_channel = 2

void test_block_extremes_4k(void)
{
    static const struct block_scenario sc = {
        .name = "extremes_lba4096", .seed = 0xb10c0301, .lba_bytes = 4096, .plp = true, BIG_4K};
    extremes(&sc);
}

void test_block_extremes_512(void)
{
    static const struct block_scenario sc = {
        .name = "extremes_lba512", .seed = 0xb10c0302, .lba_bytes = 512, .plp = false, BIG_4K};
    extremes(&sc);
}
