/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Power cuts, clean restarts and format: what the device must hold after
 * each (the reference model's rules, kv_model.h).
 */
#include <stdio.h>

#include "model.h"

void verify_after_recovery(struct run *r, const char *why, bool remounted)
{
    if (!kv_model_read_back_each(&r->m, r->ftl, r->now, r->buf, why, remounted)) {
        fail(r, "%s", r->m.mismatch);
        return;
    }
    /* No key the model does not know: a full-range key-only iteration. */
    iterate_and_check(r, 0, 0, false, false);
    if (!r->failed) {
        check_consistency(r, why);
    }
}

void power_cycle(struct run *r, const char *why)
{
    char err[256] = "";
    oplog_add(r, "power cycle (%s)", why);
    if (kvftl_power_cycle(r->ftl, err, sizeof(err)) != 0) {
        fail(r, "kvftl_power_cycle: %s", err);
        return;
    }
    r->cuts++;
    kv_model_remounted(&r->m);
    /* Completion times restart from the recovered clock at the latest. */
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    if (st.sim_now_ns > r->now) {
        r->now = st.sim_now_ns;
    }
    verify_after_recovery(r, why, true);
}

void clean_restart(struct run *r)
{
    oplog_add(r, "close + open %s", r->image);
    /* a new instance counts from zero: carry this one's counts since the format */
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    r->gc_runs_carried += st.gc_runs - r->gc_runs_at_format;
    r->erased_carried += st.nand_blocks_erased - r->erased_at_format;
    kvftl_close(r->ftl);
    r->ftl = NULL;
    kv_model_durable(&r->m); /* close is a durable point even without PLP */
    if (!open_device(r)) {
        return;
    }
    kvftl_stats_get(r->ftl, &st);
    r->gc_runs_at_format = st.gc_runs;
    r->erased_at_format = st.nand_blocks_erased;
    r->cuts++;
    kv_model_remounted(&r->m);
    verify_after_recovery(r, "clean restart", false);
}

void format_device(struct run *r)
{
    struct kvftl_cpl c;
    uint64_t t = r->now;
    oplog_add(r, "format");
    kvftl_format(r->ftl, t, &c);
    if (!judged(r, kv_model_format(&r->m, t, &c), NULL) ||
        !expect_status(r, "format", &c, t, KVFTL_OK)) {
        return;
    }
    struct kvftl_stats st;
    kvftl_stats_get(r->ftl, &st);
    r->gc_runs_at_format = st.gc_runs;
    r->erased_at_format = st.nand_blocks_erased;
    r->gc_runs_carried = r->erased_carried = 0;
    r->user_bytes_since_format = 0;
    verify_after_recovery(r, "after format", false);
}
