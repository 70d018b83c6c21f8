/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Occupancy: 95 % of kvftl_block_lbas() written sequentially, then three
 * times that many blocks overwritten at random places inside it. The
 * namespace is the user capacity (block.h): GC must always find room, so
 * no write may be refused (the sector model calls CAPACITY_EXCEEDED wrong),
 * every block must read back as its last write, and the write
 * amplification of a nearly full device is printed (the characterization
 * paper's Fig. 6a asks it of the block SSD).
 */
#include <inttypes.h>
#include <stdio.h>

#include "block_model.h"

static void occupancy(const struct block_scenario *sc)
{
    if (block_test_skipped(sc->name)) {
        return;
    }
    struct block_run *r = block_run_new(sc);
    if (!block_open_device(r)) {
        block_run_free(r);
        return;
    }
    uint32_t lpu = r->m.lbas_per_unit;
    uint64_t fill = r->m.lbas * 95 / 100 / lpu * lpu; /* whole units */
    printf("# %s: namespace %" PRIu64 " blocks of %u B, filling %" PRIu64 " (95 %%), then "
           "overwriting %" PRIu64 " at random\n",
           sc->name, r->m.lbas, sc->lba_bytes, fill, 3 * fill);
    uint32_t chunk = MAX_CMD_BLOCKS;
    for (uint64_t lba = 0; lba < fill && !r->failed; lba += chunk, r->opno++) {
        uint32_t n = fill - lba < chunk ? (uint32_t)(fill - lba) : chunk;
        block_write(r, lba, n, false);
    }
    if (r->failed || !block_verify_all(r, "after the fill", false)) {
        goto out;
    }
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    CU_ASSERT_EQUAL(st.live_keys, fill / lpu);
    kvftl_stats_reset(r->ftl);
    uint64_t written = 0;
    while (written < 3 * fill && !r->failed) {
        /* random places, 1 to 32 units long, unit-aligned half of the time */
        uint32_t n = (uint32_t)rng_range(&r->rng, 1, 32 * lpu);
        uint64_t slba = rng_below(&r->rng, fill - n + 1);
        if (rng_below(&r->rng, 2) == 0) {
            slba -= slba % lpu;
            n = (n + lpu - 1) / lpu * lpu;
        }
        if (block_write(r, slba, n, false) && rng_below(&r->rng, 16) == 0) {
            block_read(r, slba, n);
        }
        written += n;
        r->opno++;
        if (r->opno % CHECK_EVERY == 0 && !r->failed) {
            block_check(r, "periodic check");
        }
    }
    if (r->failed || !block_verify_all(r, "after the overwrites", false)) {
        goto out;
    }
    kvftl_stats_get(r->ftl, &st);
    printf("# %s: %" PRIu64 " writes, %" PRIu64 " blocks overwritten; WAF %.3f (NAND pages "
           "programmed %" PRIu64 ", GC runs %" PRIu64 ", relocated %" PRIu64 " B, foreground "
           "GC stalls %" PRIu64 "), mapped units %" PRIu64 " of %" PRIu64 "\n",
           sc->name, r->writes, written, st.write_amplification, st.nand_pages_programmed,
           st.gc_runs, st.gc_relocated_bytes, st.gc_foreground_stalls, st.live_keys, r->m.units);
    CU_ASSERT_EQUAL(st.live_keys, fill / lpu); /* the overwrites stay inside the filled part */
    CU_ASSERT_EQUAL(st.user_bytes_written, written * sc->lba_bytes); /* since the reset */
    CU_ASSERT(st.gc_runs > 0);
    CU_ASSERT(st.write_amplification >= 1.0);
out:
    block_run_free(r);
}

void test_block_occupancy_4k(void)
{
    static const struct block_scenario sc = {.name = "occupancy_95pct_lba4096",
                                             .seed = 0xb10c0201,
                                             .lba_bytes = 4096,
                                             .plp = true,
                                             .page_size_bytes = 4096,
                                             .pages_per_block = 272,
                                             .blocks_per_die = 16};
    occupancy(&sc);
}

void test_block_occupancy_512(void)
{
    static const struct block_scenario sc = {.name = "occupancy_95pct_lba512",
                                             .seed = 0xb10c0202,
                                             .lba_bytes = 512,
                                             .plp = true,
                                             .page_size_bytes = 16384,
                                             .pages_per_block = 68,
                                             .blocks_per_die = 16};
    occupancy(&sc);
}
