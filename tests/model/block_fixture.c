/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A run of the block model suite: its device, model, randomness, failure report (block_model.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "block_model.h"
#include "kvftl_small.h"

bool block_test_skipped(const char *name)
{
    const char *only = getenv("KVFTL_MODEL_ONLY");
    if (only && *only && strcmp(only, name) != 0) {
        printf("# %s: not run (KVFTL_MODEL_ONLY=%s)\n", name, only);
        return true;
    }
    return false;
}

uint64_t block_env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/*
 * A small nvm device, so that GC runs constantly: 1 channel x 2 dies
 * unless the scenario says otherwise, the fewest blocks per die the GC
 * watermarks allow plus a few, and the map's DRAM budget the scenario asks
 * for (the preset's holds every translation page).
 */
static void make_config(struct block_run *r)
{
    const struct block_scenario *sc = r->sc;
    kvftl_config_small(&r->cfg,
                       (struct kvftl_small_geometry){
                           .channels = sc->channels ? sc->channels : 1,
                           .dies_per_channel = sc->dies_per_channel ? sc->dies_per_channel : 2,
                           .blocks_per_die = sc->blocks_per_die,
                           .pages_per_block = sc->pages_per_block,
                           .page_size_bytes = sc->page_size_bytes});
    r->cfg.command_set = KVFTL_CMDSET_NVM;
    r->cfg.lba_bytes = sc->lba_bytes;
    r->cfg.plp = sc->plp;
    r->cfg.gc_policy = sc->gc_policy;
    r->cfg.gc_high_watermark_blocks = 4;
    r->cfg.gc_low_watermark_blocks = 2;
    r->cfg.index_page_bytes = sc->page_size_bytes;
    r->cfg.buffer_entries = 8;
    r->cfg.dlt_entries = 8;
    r->cfg.hash_seed = 1;
    r->cfg.write_buffer_pages_per_die = sc->write_buffer_pages_per_die;
    r->cfg.image_path = NULL;
    if (sc->index_dram_bytes) {
        r->cfg.index_dram_bytes = sc->index_dram_bytes;
    }
    if (sc->file_backed) {
        snprintf(r->image, sizeof(r->image), "/tmp/kvftl-block-model-%d-%s.img", (int)getpid(),
                 sc->name);
        unlink(r->image);
        r->cfg.image_path = r->image;
    }
}

struct block_run *block_run_new(const struct block_scenario *sc)
{
    struct block_run *r = g_new0(struct block_run, 1);
    r->sc = sc;
    r->rng.s = sc->seed;
    r->now = 1000;
    r->buf = g_malloc(RUN_BUF_CAP);
    r->wbuf = g_malloc((size_t)MAX_CMD_BLOCKS * KVFTL_BLOCK_UNIT_BYTES);
    make_config(r);
    return r;
}

void block_run_free(struct block_run *r)
{
    if (r->ftl) {
        kvftl_close(r->ftl);
    }
    if (r->image[0]) {
        unlink(r->image);
    }
    if (r->m.cur) {
        sector_model_destroy(&r->m);
    }
    g_free(r->buf);
    g_free(r->wbuf);
    g_free(r);
}

bool block_open_device(struct block_run *r)
{
    char err[256] = "";
    r->ftl = kvftl_open(&r->cfg, err, sizeof(err));
    if (!r->ftl) {
        block_fail(r, "kvftl_open: %s", err);
        return false;
    }
    uint64_t lbas = kvftl_block_lbas(r->ftl);
    if (r->m.cur) {
        /* a reopened image: the same namespace, and the model goes on */
        if (lbas != r->m.lbas) {
            block_fail(r, "reopened: kvftl_block_lbas() is %" PRIu64 ", was %" PRIu64, lbas,
                       r->m.lbas);
            return false;
        }
        return true;
    }
    if (lbas < 8 * MAX_CMD_BLOCKS) {
        block_fail(r, "kvftl_block_lbas() is %" PRIu64 "; the scenario needs at least %u", lbas,
                   8 * MAX_CMD_BLOCKS);
        return false;
    }
    sector_model_init(&r->m, r->cfg.lba_bytes, lbas, r->cfg.plp);
    return true;
}

uint64_t block_raw_bytes(const struct kvftl_config *c)
{
    return (uint64_t)c->channels * c->dies_per_channel * c->blocks_per_die * c->pages_per_block *
           c->page_size_bytes;
}

void block_oplog_add(struct block_run *r, const char *fmt, ...)
{
    struct block_oplog *l = &r->log[r->opno % BLOCK_OPLOG_LEN];
    l->n = r->opno;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->what, sizeof(l->what), fmt, ap);
    va_end(ap);
}

void block_fail(struct block_run *r, const char *fmt, ...)
{
    if (r->failed) {
        return;
    }
    r->failed = true;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    printf("# FAIL scenario %s seed 0x%" PRIx64 " op %" PRIu64 ": %s\n", r->sc->name, r->sc->seed,
           r->opno, msg);
    printf("# last operations:\n");
    uint64_t from = r->opno + 1 > BLOCK_OPLOG_LEN ? r->opno + 1 - BLOCK_OPLOG_LEN : 0;
    for (uint64_t i = from; i <= r->opno; i++) {
        struct block_oplog *l = &r->log[i % BLOCK_OPLOG_LEN];
        if (l->n == i && l->what[0]) {
            printf("#   %" PRIu64 ": %s\n", l->n, l->what);
        }
    }
    fflush(stdout);
    CU_FAIL(msg);
}

/* Arrival of the next request: sometimes right after the last one (queued), sometimes idle. */
static void next_arrival(struct block_run *r, const struct kvftl_cpl *c)
{
    uint64_t x = rng_below(&r->rng, 8);
    if (x == 0) {
        r->now = c->done_ns > r->now ? c->done_ns : r->now; /* QD1: wait for it */
    } else if (x == 1) {
        r->now += rng_below(&r->rng, 2000000); /* idle up to 2 ms: background GC */
    } else {
        r->now += rng_below(&r->rng, 5000); /* queued */
    }
}

bool block_judged(struct block_run *r, bool ok, const struct kvftl_cpl *c)
{
    if (!ok) {
        block_fail(r, "%s", r->m.mismatch);
        return false;
    }
    if (c && c->status != KVFTL_INTERNAL_ERROR) {
        next_arrival(r, c);
    }
    return true;
}

bool block_check(struct block_run *r, const char *why)
{
    if (!sector_model_check_device(&r->m, r->ftl, why)) {
        block_fail(r, "%s", r->m.mismatch);
        return false;
    }
    return true;
}

bool block_verify_all(struct block_run *r, const char *why, bool remounted)
{
    if (!sector_model_read_back(&r->m, r->ftl, r->now, r->buf, RUN_BUF_BYTES, why, remounted,
                                &r->units_verified)) {
        block_fail(r, "%s", r->m.mismatch);
        return false;
    }
    return block_check(r, why);
}
