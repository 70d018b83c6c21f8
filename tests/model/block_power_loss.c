/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Power cuts, clean restarts and Format on the nvm personality, and what
 * must hold after each (the sector model's rules, sector_model.h).
 */
#include <inttypes.h>
#include <stdio.h>

#include "block_model.h"

void block_arm_cut(struct block_run *r)
{
    /* within the next few pages of a write: data, GC copies or translation pages */
    uint64_t n = rng_range(&r->rng, 1, 48);
    block_oplog_add(r, "power cut armed after %" PRIu64 " programs", n);
    kvftl_power_cut_after(r->ftl, n);
    sector_model_cut_armed(&r->m, n);
}

void block_power_cycle(struct block_run *r, const char *why)
{
    char err[256] = "";
    block_oplog_add(r, "power cycle (%s)", why);
    if (kvftl_power_cycle(r->ftl, err, sizeof(err)) != 0) {
        block_fail(r, "kvftl_power_cycle: %s", err);
        return;
    }
    r->cuts++;
    sector_model_remounted(&r->m);
    /* completion times restart from the recovered clock at the latest */
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    if (st.sim_now_ns > r->now) {
        r->now = st.sim_now_ns;
    }
    block_verify_all(r, why, true);
}

void block_format(struct block_run *r)
{
    struct kvftl_cpl c;
    uint64_t t = r->now;
    block_oplog_add(r, "format");
    kvftl_format(r->ftl, t, &c);
    if (!block_judged(r, sector_model_format(&r->m, t, &c), &c)) {
        return;
    }
    if (c.status != KVFTL_OK) {
        return; /* the cut fired during it: the power cycle that follows verifies */
    }
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    if (st.live_keys != 0) {
        block_fail(r, "after format: %" PRIu64 " units mapped, expected 0", st.live_keys);
        return;
    }
    r->gc_runs_at_format = st.gc_runs;
    r->erased_at_format = st.nand_blocks_erased;
    r->gc_runs_carried = r->erased_carried = 0;
    r->units_programmed_since_format = 0;
    block_verify_all(r, "after format", false);
}

void block_clean_restart(struct block_run *r)
{
    block_oplog_add(r, "close + open %s", r->image);
    /* the counters start over at the open: carry GC's work since the format over */
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    r->erased_carried += st.nand_blocks_erased - r->erased_at_format;
    r->gc_runs_carried += st.gc_runs - r->gc_runs_at_format;
    kvftl_close(r->ftl);
    r->ftl = NULL;
    sector_model_durable(&r->m); /* close is a durable point even without PLP */
    if (!block_open_device(r)) {
        return;
    }
    const char *note = kvftl_mount_note(r->ftl);
    if (note) {
        block_fail(r, "a clean reopen scanned the log: %s", note);
        return;
    }
    kvftl_stats_get(r->ftl, &st);
    r->erased_at_format = st.nand_blocks_erased;
    r->gc_runs_at_format = st.gc_runs;
    r->restarts++;
    sector_model_remounted(&r->m);
    block_verify_all(r, "clean restart", false);
}
