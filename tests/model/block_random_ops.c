/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block model suite's random commands, each judged by the sector
 * model (block_model.h): writes of 1 to 256 blocks, aligned to the 4 KiB
 * unit or not, FUA sometimes; reads; Write Zeroes; Deallocate; Flush; and
 * ranges the firmware must refuse.
 */
#include <inttypes.h>
#include <stdio.h>

#include "block_model.h"

/* A length: mostly short, sometimes up to MAX_CMD_BLOCKS. */
static uint32_t pick_nlb(struct block_run *r)
{
    uint64_t x = rng_below(&r->rng, 100);
    if (x < 60) {
        return (uint32_t)rng_range(&r->rng, 1, 8);
    }
    if (x < 90) {
        return (uint32_t)rng_range(&r->rng, 9, 64);
    }
    return (uint32_t)rng_range(&r->rng, 65, MAX_CMD_BLOCKS);
}

/*
 * A range of @nlb blocks inside the namespace: half of them aligned to the
 * 4 KiB unit at both ends (with 512 B blocks: slba and nlb multiples of 8),
 * and with the scenario's hot share in its first eighth.
 */
static uint64_t pick_slba(struct block_run *r, uint32_t *nlb)
{
    uint32_t lpu = r->m.lbas_per_unit;
    uint64_t span = r->m.lbas;
    if (r->sc->hot_pct && rng_below(&r->rng, 100) < r->sc->hot_pct) {
        span = r->m.lbas / 8;
    }
    if (*nlb > span) {
        *nlb = (uint32_t)span;
    }
    uint64_t slba = rng_below(&r->rng, span - *nlb + 1);
    if (lpu > 1 && rng_below(&r->rng, 2) == 0) {
        slba -= slba % lpu;
        *nlb = (*nlb + lpu - 1) / lpu * lpu;
        if (*nlb > span - slba) {
            *nlb = (uint32_t)((span - slba) / lpu * lpu);
        }
    }
    return slba;
}

bool block_write(struct block_run *r, uint64_t slba, uint32_t nlb, bool fua)
{
    uint64_t g = sector_model_next_gen(&r->m);
    uint32_t fill = nlb <= MAX_CMD_BLOCKS * (KVFTL_BLOCK_UNIT_BYTES / r->m.lba_bytes) ? nlb : 0;
    sector_model_fill_range(&r->m, slba, fill, g, r->wbuf);
    struct kvftl_cpl c;
    uint64_t t = r->now;
    block_oplog_add(r, "write%s lba %" PRIu64 " + %u (generation %" PRIu64 ")", fua ? " fua" : "",
                    slba, nlb, g);
    kvftl_block_write(r->ftl, slba, nlb, r->wbuf, fua, t, &c);
    if (!block_judged(r, sector_model_write(&r->m, slba, nlb, g, fua, t, &c), &c)) {
        return false;
    }
    if (c.status == KVFTL_OK) {
        uint32_t lpu = r->m.lbas_per_unit;
        r->writes++;
        r->fua_writes += fua;
        r->blocks_written += nlb;
        r->units_programmed_since_format += (slba + nlb - 1) / lpu - slba / lpu + 1;
    }
    return true;
}

bool block_read(struct block_run *r, uint64_t slba, uint32_t nlb)
{
    struct kvftl_cpl c;
    uint64_t t = r->now;
    block_oplog_add(r, "read lba %" PRIu64 " + %u", slba, nlb);
    sector_model_guard(&r->m, nlb, r->buf, RUN_BUF_CAP);
    kvftl_block_read(r->ftl, slba, nlb, r->buf, t, &c);
    if (!block_judged(r, sector_model_read(&r->m, slba, nlb, t, &c, r->buf, RUN_BUF_CAP), &c)) {
        return false;
    }
    if (c.status == KVFTL_OK) {
        r->reads++;
        r->blocks_read += nlb;
    }
    return true;
}

static void zeroes(struct block_run *r, uint64_t slba, uint32_t nlb)
{
    struct kvftl_cpl c;
    uint64_t t = r->now;
    block_oplog_add(r, "write zeroes lba %" PRIu64 " + %u", slba, nlb);
    kvftl_block_write_zeroes(r->ftl, slba, nlb, t, &c);
    if (block_judged(r, sector_model_write_zeroes(&r->m, slba, nlb, t, &c), &c) &&
        c.status == KVFTL_OK) {
        r->zeroes++;
    }
}

static void deallocate(struct block_run *r, uint64_t slba, uint32_t nlb)
{
    struct kvftl_cpl c;
    uint64_t t = r->now;
    block_oplog_add(r, "deallocate lba %" PRIu64 " + %u", slba, nlb);
    kvftl_block_deallocate(r->ftl, slba, nlb, t, &c);
    if (block_judged(r, sector_model_deallocate(&r->m, slba, nlb, t, &c), &c) &&
        c.status == KVFTL_OK) {
        r->deallocs++;
    }
}

static void flush(struct block_run *r)
{
    struct kvftl_cpl c;
    uint64_t t = r->now;
    block_oplog_add(r, "flush");
    kvftl_flush(r->ftl, t, &c);
    if (block_judged(r, sector_model_flush(&r->m, t, &c), &c) && c.status == KVFTL_OK) {
        r->flushes++;
    }
}

/*
 * A range the firmware must refuse with INVALID_FIELD, through one of the
 * four commands: 0 blocks, one block past the namespace, a start past it,
 * the largest start, or (read and write) one block more than a command
 * moves (the buffers are not touched: the firmware checks first).
 */
static void invalid_range(struct block_run *r)
{
    uint64_t lbas = r->m.lbas;
    uint64_t slba;
    uint32_t nlb;
    uint64_t kind = rng_below(&r->rng, 5);
    switch (kind) {
    case 0:
        slba = rng_below(&r->rng, lbas);
        nlb = 0;
        break;
    case 1:
        nlb = (uint32_t)rng_range(&r->rng, 1, MAX_CMD_BLOCKS);
        slba = lbas - nlb + 1;
        break;
    case 2:
        slba = lbas + rng_below(&r->rng, 3);
        nlb = 1;
        break;
    case 3:
        slba = UINT64_MAX;
        nlb = 2;
        break;
    default:
        slba = 0;
        nlb = r->m.max_nlb + 1;
        break;
    }
    r->invalid++;
    switch (rng_below(&r->rng, kind == 4 ? 2 : 4)) {
    case 0:
        block_write(r, slba, nlb, false);
        break;
    case 1:
        block_read(r, slba, nlb);
        break;
    case 2:
        zeroes(r, slba, nlb);
        break;
    default:
        deallocate(r, slba, nlb);
        break;
    }
}

void block_random_op(struct block_run *r)
{
    uint64_t x = rng_below(&r->rng, 1000);
    uint32_t nlb = pick_nlb(r);
    if (x < 420) {
        uint64_t slba = pick_slba(r, &nlb);
        bool fua = rng_below(&r->rng, 20) == 0;
        if (block_write(r, slba, nlb, fua) && rng_below(&r->rng, 8) == 0) {
            block_read(r, slba, nlb); /* read your write (in the buffer still, often) */
        }
    } else if (x < 740) {
        uint64_t slba = pick_slba(r, &nlb);
        block_read(r, slba, nlb);
    } else if (x < 800) {
        uint64_t slba = pick_slba(r, &nlb);
        zeroes(r, slba, nlb);
    } else if (x < 890) {
        uint64_t slba = pick_slba(r, &nlb);
        deallocate(r, slba, nlb);
    } else if (x < 893) {
        /* a long range: Write Zeroes and Deallocate move no data, so no transfer limit */
        uint64_t slba = rng_below(&r->rng, r->m.lbas / 2);
        uint32_t n = (uint32_t)rng_range(&r->rng, 1, r->m.lbas - slba);
        if (x & 1) {
            zeroes(r, slba, n);
        } else {
            deallocate(r, slba, n);
        }
    } else if (x < 930) {
        flush(r);
    } else if (x < 950) {
        invalid_range(r);
    } else {
        /* a small write next to a large one's edge: partial units of both */
        uint64_t slba = pick_slba(r, &nlb);
        uint32_t small = (uint32_t)rng_range(&r->rng, 1, r->m.lbas_per_unit);
        if (block_write(r, slba, nlb, false) && slba + nlb + small <= r->m.lbas) {
            block_write(r, slba + nlb, small, false);
            block_read(r, slba + nlb - 1, 1 + small);
        }
    }
}
