/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block model suite's scenarios: one nvm device configuration each
 * (logical block size, PLP, page size, the map's DRAM budget, GC policy,
 * geometry), run through the same random stream with power cuts or a
 * format at evenly spaced points; the GC bound each must meet; the suite's
 * volume; main(). See block_model.h for the whole suite.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "block_model.h"

static uint64_t g_total_ops; /* random operations run by the scenarios of this process */

/*
 * The GC bound. The writes that succeeded since the last format covered U
 * units, each programmed whole (a partial one read-modify-written), i.e.
 * at least ceil(U x 4096 / page) pages. The device can program total_pages
 * before it must erase, and an erase frees pages_per_block pages, so at
 * least (ceil(U x 4096 / page) - total_pages) / pages_per_block blocks were
 * erased, every one reclaimed by a GC run.
 */
static uint64_t gc_erase_lower_bound(const struct block_run *r)
{
    const struct kvftl_config *c = &r->cfg;
    uint64_t total_pages = (uint64_t)c->channels * c->dies_per_channel * c->blocks_per_die *
                           c->pages_per_block;
    uint64_t min_pages = (r->units_programmed_since_format * KVFTL_BLOCK_UNIT_BYTES +
                          c->page_size_bytes - 1) /
                         c->page_size_bytes;
    return min_pages > total_pages ? (min_pages - total_pages) / c->pages_per_block : 0;
}

/* The operations scenario @sc runs (KVFTL_MODEL_OPS replaces its own count). */
static uint32_t planned_ops(const struct block_scenario *sc)
{
    return (uint32_t)block_env_u64("KVFTL_MODEL_OPS", sc->ops);
}

/* Print the run's counters and the device's statistics, and check the scenario's bounds. */
static void report(struct block_run *r)
{
    const struct block_scenario *sc = r->sc;
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    uint64_t lb = gc_erase_lower_bound(r);
    uint64_t erased = st.nand_blocks_erased - r->erased_at_format + r->erased_carried;
    uint64_t gc_runs = st.gc_runs - r->gc_runs_at_format + r->gc_runs_carried;
    uint64_t dies = (uint64_t)r->cfg.channels * r->cfg.dies_per_channel;
    printf("# scenario %s: %" PRIu64 " ops: %" PRIu64 " writes (%" PRIu64 " FUA, %" PRIu64
           " blocks), %" PRIu64 " reads (%" PRIu64 " blocks), %" PRIu64 " write zeroes, %" PRIu64
           " deallocates, %" PRIu64 " flushes, %" PRIu64 " invalid ranges, %" PRIu64
           " clean restarts, %" PRIu64 " power cycles (%" PRIu64 " cuts fired, %" PRIu64
           " units came back older)\n",
           sc->name, r->opno, r->writes, r->fua_writes, r->blocks_written, r->reads, r->blocks_read,
           r->zeroes, r->deallocs, r->flushes, r->invalid, r->restarts, r->cuts, r->m.cuts_fired,
           r->m.adopted);
    printf("# scenario %s: gc_runs %" PRIu64 ", blocks erased %" PRIu64 " (lower bound %" PRIu64
           "), relocated %" PRIu64 " B, WAF %.2f, mapped units %" PRIu64 " of %" PRIu64
           ", map cache hits %" PRIu64 " misses %" PRIu64 " dirty evictions %" PRIu64
           ", read-modify-write copies %" PRIu64 " B, %" PRIu64 " units read back\n",
           sc->name, gc_runs, erased, lb, st.gc_relocated_bytes, st.write_amplification,
           st.live_keys, r->m.units, st.index_cache_hits, st.index_cache_misses,
           st.index_pages_evicted_dirty, st.memcpy_bytes, r->units_verified);
    fflush(stdout);
    /*
     * Erases come only from GC here (format resets the baseline; a reopen
     * carries it over); a run collects one stripe.
     */
    CU_ASSERT(erased >= lb);
    CU_ASSERT(gc_runs >= lb / dies);
    CU_ASSERT(lb >= 50); /* the workload is sized so that GC runs many times */
    CU_ASSERT_EQUAL(r->cuts, sc->power_cuts);
    CU_ASSERT_EQUAL(r->restarts, sc->restarts);
    CU_ASSERT(st.write_amplification >= 1.0);
    /*
     * The counters docs/kvftl.md gives nvm: stores = Writes + Write Zeroes,
     * deletes = Deallocates (successful ones), user_bytes_written and
     * host_bytes_in_dma = blocks written x lba_bytes. A power cycle or a
     * reopen remounts the counters too, so only runs without either are
     * counted from open.
     */
    if (r->cuts == 0 && r->restarts == 0) {
        CU_ASSERT_EQUAL(st.stores, r->writes + r->zeroes);
        CU_ASSERT_EQUAL(st.deletes, r->deallocs);
        CU_ASSERT_EQUAL(st.user_bytes_written, r->blocks_written * sc->lba_bytes);
        CU_ASSERT_EQUAL(st.host_bytes_in_dma, r->blocks_written * sc->lba_bytes);
    }
    /* each scenario exercises the mechanism it is named after */
    if (sc->index_dram_bytes && sc->index_dram_bytes <= 4ull * sc->page_size_bytes) {
        CU_ASSERT(st.index_cache_misses > 0);
        CU_ASSERT(st.index_pages_evicted_dirty > 0);
    }
    if (sc->lba_bytes < KVFTL_BLOCK_UNIT_BYTES) {
        CU_ASSERT(st.memcpy_bytes > 0); /* partial units were merged */
    }
}

static void run_scenario(const struct block_scenario *sc_in)
{
    struct block_scenario scv = *sc_in;
    scv.seed = block_env_u64("KVFTL_MODEL_SEED", scv.seed);
    scv.ops = planned_ops(sc_in);
    const struct block_scenario *sc = &scv;
    if (block_test_skipped(sc->name)) {
        return;
    }
    struct block_run *r = block_run_new(sc);
    printf("# scenario %s: seed 0x%" PRIx64 ", %u ops, lba %u B, plp %d, map DRAM %" PRIu64
           " B, gc %d, %u x %u-page blocks of %u B (%" PRIu64 " B raw)\n",
           sc->name, sc->seed, sc->ops, sc->lba_bytes, sc->plp, r->cfg.index_dram_bytes,
           sc->gc_policy, r->cfg.channels * r->cfg.dies_per_channel * r->cfg.blocks_per_die,
           r->cfg.pages_per_block, r->cfg.page_size_bytes, block_raw_bytes(&r->cfg));
    fflush(stdout);
    char err[256];
    if (kvftl_config_check(&r->cfg, err, sizeof(err)) != 0) {
        block_fail(r, "config rejected: %s", err);
        goto out;
    }
    if (!block_open_device(r)) {
        goto out;
    }
    printf("# scenario %s: namespace %" PRIu64 " blocks (%" PRIu64 " units)\n", sc->name, r->m.lbas,
           r->m.units);

    /*
     * Events at evenly spaced operation numbers: a format first (if any),
     * then the cuts, a clean restart after each of the first ones.
     */
    enum { EV_CUT, EV_RESTART, EV_FORMAT } evs[40];
    uint32_t nev = 0;
    if (sc->format_midway) {
        evs[nev++] = EV_FORMAT;
    }
    for (uint32_t i = 0; i < sc->power_cuts || i < sc->restarts; i++) {
        if (i < sc->power_cuts && nev < G_N_ELEMENTS(evs)) {
            evs[nev++] = EV_CUT;
        }
        if (i < sc->restarts && nev < G_N_ELEMENTS(evs)) {
            evs[nev++] = EV_RESTART;
        }
    }
    uint32_t next_event = 0;
    uint64_t event_at = (uint64_t)sc->ops / (nev + 1);
    uint64_t cut_deadline = 0;
    for (r->opno = 0; r->opno < sc->ops && !r->failed; r->opno++) {
        if (next_event < nev && r->opno >= event_at && !r->m.armed) {
            switch (evs[next_event]) {
            case EV_FORMAT:
                block_format(r);
                break;
            case EV_RESTART:
                block_clean_restart(r);
                break;
            case EV_CUT:
                block_arm_cut(r);
                cut_deadline = r->opno + 20000;
                break;
            }
            next_event++;
            event_at = (uint64_t)sc->ops * (next_event + 1) / (nev + 1);
            continue;
        }
        block_random_op(r);
        if (r->m.armed && !r->failed &&
            ((r->m.fired && r->m.ops_after_fire >= 8) || r->opno >= cut_deadline)) {
            block_power_cycle(r, r->m.fired ? "power cut" : "power cut (not fired: cut now)");
        }
        if (!r->m.armed && !r->failed && r->opno % CHECK_EVERY == CHECK_EVERY - 1) {
            block_check(r, "periodic check");
        }
        if (!r->m.armed && !r->failed && r->opno % VERIFY_EVERY == VERIFY_EVERY - 1) {
            block_verify_all(r, "periodic read-back", false);
        }
    }
    if (r->m.armed && !r->failed) {
        block_power_cycle(r, "power cut at the end");
    }
    if (r->failed || !block_verify_all(r, "final read-back", false)) {
        goto out;
    }
    report(r);
    g_total_ops += r->opno;
out:
    block_run_free(r);
}

#define OPS 60000

/* The common small device: 1 channel x 2 dies x 12 blocks of 272 4 KiB pages (25.5 MiB). */
#define SMALL_4K .page_size_bytes = 4096, .pages_per_block = 272, .blocks_per_die = 12

static const struct block_scenario scenarios[] = {
    /* 4 KiB blocks, PLP, the map wholly in DRAM: the baseline. */
    {.name = "nvm_lba4096_plp",
     .seed = 0xb10c0001,
     .ops = OPS,
     .lba_bytes = 4096,
     .plp = true,
     SMALL_4K},
    /* 512 B blocks: partial units read-modify-written; 16 KiB pages (4 units a page). */
    {.name = "nvm_lba512_plp_16k_pages",
     .seed = 0xb10c0002,
     .ops = OPS,
     .lba_bytes = 512,
     .plp = true,
     .page_size_bytes = 16384,
     .pages_per_block = 68,
     .blocks_per_die = 12},
    /* No PLP: FUA and Flush are the durable points; cost-benefit GC; a format midway. */
    {.name = "nvm_lba4096_plp_off_costbenefit",
     .seed = 0xb10c0003,
     .ops = OPS,
     .lba_bytes = 4096,
     .plp = false,
     .gc_policy = KVFTL_GC_COST_BENEFIT,
     .format_midway = true,
     SMALL_4K},
    /*
     * DFTL: three translation pages of DRAM for a map of four, so map pages
     * miss and dirty ones are evicted (the least the budget allows: two
     * index pages and a Bloom block, 8256 B).
     */
    {.name = "nvm_dftl_three_map_pages",
     .seed = 0xb10c0004,
     .ops = OPS,
     .lba_bytes = 4096,
     .plp = true,
     .index_dram_bytes = 3 * 4096,
     SMALL_4K},
    /* Skewed writes (80 % to an eighth of the namespace): GC picks hot and cold stripes. */
    {.name = "nvm_lba512_hot_cold",
     .seed = 0xb10c0005,
     .ops = OPS,
     .lba_bytes = 512,
     .plp = true,
     .hot_pct = 80,
     SMALL_4K},
    /* BandSlim's Cosmos+ shape: 4 channels x 8 ways of 16 KiB pages, striping over 32 dies. */
    {.name = "nvm_cosmos_4ch_8way",
     .seed = 0xb10c0006,
     .ops = OPS,
     .lba_bytes = 4096,
     .plp = true,
     .page_size_bytes = 16384,
     .pages_per_block = 5,
     .blocks_per_die = 12,
     .channels = 4,
     .dies_per_channel = 8},
};
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/*
 * Power cuts: a cut armed at a random program count eight times a run,
 * each followed by a power cycle and a read-back of every unit, with and
 * without PLP, 4 KiB and 512 B blocks, and the map cached DFTL-style.
 */
static const struct block_scenario cut_scenarios[] = {
    {.name = "nvm_power_cuts_lba4096_plp",
     .seed = 0xb10c0101,
     .ops = OPS,
     .lba_bytes = 4096,
     .plp = true,
     .power_cuts = 8,
     SMALL_4K},
    {.name = "nvm_power_cuts_lba512_plp_off",
     .seed = 0xb10c0102,
     .ops = OPS,
     .lba_bytes = 512,
     .plp = false,
     .power_cuts = 8,
     SMALL_4K},
    {.name = "nvm_power_cuts_lba4096_plp_off_dftl",
     .seed = 0xb10c0103,
     .ops = OPS,
     .lba_bytes = 4096,
     .plp = false,
     .index_dram_bytes = 3 * 4096,
     .power_cuts = 8,
     SMALL_4K},
    {.name = "nvm_power_cuts_lba512_plp_dftl",
     .seed = 0xb10c0104,
     .ops = OPS,
     .lba_bytes = 512,
     .plp = true,
     .index_dram_bytes = 3 * 4096,
     .power_cuts = 8,
     SMALL_4K},
    /*
     * The write buffer (16 pages per die: 32 units) holding partial units:
     * with PLP the capacitor dump keeps them, without it the cut loses the
     * unflushed ones, whole; the DFTL map makes write-outs miss and evict.
     */
    {.name = "nvm_power_cuts_lba512_wbuf_plp",
     .seed = 0xb10c0106,
     .ops = OPS,
     .lba_bytes = 512,
     .plp = true,
     .write_buffer_pages_per_die = 16,
     .power_cuts = 8,
     SMALL_4K},
    {.name = "nvm_power_cuts_lba512_wbuf_plp_off_dftl",
     .seed = 0xb10c0107,
     .ops = OPS,
     .lba_bytes = 512,
     .plp = false,
     .write_buffer_pages_per_die = 16,
     .index_dram_bytes = 3 * 4096,
     .power_cuts = 8,
     SMALL_4K},
    /* In an image file: clean restarts (the checkpoint) between the cuts, without PLP. */
    {.name = "nvm_image_restarts_and_cuts_plp_off",
     .seed = 0xb10c0105,
     .ops = OPS,
     .lba_bytes = 4096,
     .plp = false,
     .power_cuts = 4,
     .restarts = 4,
     .file_backed = true,
     SMALL_4K},
};
#define N_CUT_SCENARIOS (sizeof(cut_scenarios) / sizeof(cut_scenarios[0]))

#define SCENARIO_TEST(i)                \
    static void test_scenario_##i(void) \
    {                                   \
        run_scenario(&scenarios[i]);    \
    }
SCENARIO_TEST(0)
SCENARIO_TEST(1)
SCENARIO_TEST(2)
SCENARIO_TEST(3)
SCENARIO_TEST(4)
SCENARIO_TEST(5)

#define CUT_SCENARIO_TEST(i)                \
    static void test_cut_scenario_##i(void) \
    {                                       \
        run_scenario(&cut_scenarios[i]);    \
    }
CUT_SCENARIO_TEST(0)
CUT_SCENARIO_TEST(1)
CUT_SCENARIO_TEST(2)
CUT_SCENARIO_TEST(3)
CUT_SCENARIO_TEST(4)
CUT_SCENARIO_TEST(5)
CUT_SCENARIO_TEST(6)

/*
 * The suite's volume, counted from the plan, so that the test holds on its
 * own (KVFTL_MODEL_ONLY=total_operations): a scenario runs every operation
 * it plans or fails its own test.
 */
static void test_total_operations(void)
{
    uint64_t planned = 0;
    for (unsigned i = 0; i < N_SCENARIOS; i++) {
        planned += planned_ops(&scenarios[i]);
    }
    for (unsigned i = 0; i < N_CUT_SCENARIOS; i++) {
        planned += planned_ops(&cut_scenarios[i]);
    }
    printf("# total random operations: %" PRIu64 " planned, %" PRIu64 " run in this process\n",
           planned, g_total_ops);
    CU_ASSERT(planned >= 300000);
}

int main(void)
{
    static void (*const fns[])(void) = {
        test_scenario_0, test_scenario_1, test_scenario_2,
        test_scenario_3, test_scenario_4, test_scenario_5,
    };
    static void (*const cut_fns[])(void) = {
        test_cut_scenario_0, test_cut_scenario_1, test_cut_scenario_2, test_cut_scenario_3,
        test_cut_scenario_4, test_cut_scenario_5, test_cut_scenario_6,
    };
    G_STATIC_ASSERT(sizeof(fns) / sizeof(fns[0]) == N_SCENARIOS);
    G_STATIC_ASSERT(sizeof(cut_fns) / sizeof(cut_fns[0]) == N_CUT_SCENARIOS);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (CU_initialize_registry() != CUE_SUCCESS) {
        return 1;
    }
    CU_pSuite s = CU_add_suite("block_model", NULL, NULL);
    for (unsigned i = 0; i < N_SCENARIOS; i++) {
        CU_add_test(s, scenarios[i].name, fns[i]);
    }
    for (unsigned i = 0; i < N_CUT_SCENARIOS; i++) {
        CU_add_test(s, cut_scenarios[i].name, cut_fns[i]);
    }
    CU_add_test(s, "occupancy_95pct_lba4096", test_block_occupancy_4k);
    CU_add_test(s, "occupancy_95pct_lba512", test_block_occupancy_512);
    CU_add_test(s, "extremes_lba4096", test_block_extremes_4k);
    CU_add_test(s, "extremes_lba512", test_block_extremes_512);
    CU_add_test(s, "total_operations", test_total_operations);
    return tap_cunit_run();
}
