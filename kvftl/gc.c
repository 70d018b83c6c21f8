/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Garbage collection.
 *
 * Stripes (block b of every die, space.c) are the erase unit. Each closed
 * stripe carries its valid bytes: live blobs rounded to the placement unit, live
 * tombstones, live index pages. The collector picks a victim (greedy:
 * fewest valid bytes; cost-benefit: highest (1-u)*age/(1+u)), re-reads it,
 * relocates every blob its owner still references (and every index page
 * the owner still names: struct gc_owner, gc.h), tells the owner where each
 * went, and erases the stripe. An owner whose data stripes hold something
 * other than value-log records (the nvm personality's 4 KiB slots)
 * relocates a data victim itself through gc_owner.collect_data().
 * Below the high watermark of free stripes, a write that arrives while the
 * device is idle (nothing outstanding in simulated time) first lets one
 * victim be collected in the idle time (background GC: its NAND work
 * occupies the dies, so the write may still wait for a die); below the low
 * watermark writes wait for GC to finish (foreground stall); foreground
 * GC always picks greedily, since it is short of room to relocate into.
 */
#include "gc.h"

#include <string.h>

#include <glib.h>

#include "ftl.h"
#include "nand.h"
#include "space.h"
#include "value_log.h"

uint32_t gc_pick_victim(struct kvftl *ftl, uint64_t now_ns)
{
    return gc_pick_victim_policy(ftl, now_ns, ftl->cfg.gc_policy);
}

uint32_t gc_pick_victim_policy(struct kvftl *ftl, uint64_t now_ns, enum kvftl_gc_policy policy)
{
    uint64_t sb = ftl->nand.geo.stripe_bytes;
    uint32_t best = UINT32_MAX;
    double best_score = -1.0;
    for (uint32_t s = 0; s < ftl->nand.geo.stripes; s++) {
        const struct stripe_info *si = &ftl->space.stripes[s];
        if ((si->state != STRIPE_DATA && si->state != STRIPE_INDEX) || si->valid_bytes >= sb) {
            continue;
        }
        double score;
        if (policy == KVFTL_GC_COST_BENEFIT) {
            double u = (double)si->valid_bytes / (double)sb;
            double age = (double)(now_ns > si->last_write_ns ? now_ns - si->last_write_ns : 0) +
                         1.0;
            score = (1.0 - u) * age / (1.0 + u);
        } else {
            score = (double)(sb - si->valid_bytes);
        }
        if (score > best_score) {
            best_score = score;
            best = s;
        }
    }
    return best;
}

/* Smallest blob sequence number in any data stripe other than @victim. */
static uint64_t oldest_other_blob_seq(const struct kvftl *ftl, uint32_t victim)
{
    uint64_t m = UINT64_MAX;
    for (uint32_t s = 0; s < ftl->nand.geo.stripes; s++) {
        const struct stripe_info *si = &ftl->space.stripes[s];
        if (s != victim && (si->state == STRIPE_DATA || si->state == STRIPE_OPEN_DATA) &&
            si->min_blob_seq < m) {
            m = si->min_blob_seq;
        }
    }
    return m;
}

static int collect_data(struct kvftl *ftl, uint32_t victim, uint64_t *now_ns)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    uint64_t base = (uint64_t)victim * geo->stripe_bytes;
    uint64_t base_ppn = (uint64_t)victim * geo->pages_per_stripe;
    uint64_t oldest_other = oldest_other_blob_seq(ftl, victim);
    uint64_t read_upto = 0; /* pages [0, read_upto) have been read */
    uint64_t pos = 0;
    struct nand_scratch scratch = {0}; /* a record that is not contiguous in the store */

    while (pos + 1 <= geo->stripe_bytes) {
        uint64_t idx = pos / geo->page_size;
        if (!nand_page_programmed(&ftl->nand, base_ppn + idx)) {
            break;
        }
        uint8_t hbuf[BLOB_HEADER_BYTES];
        uint64_t avail = geo->stripe_bytes - pos;
        const uint8_t *p = nand_view(&ftl->nand, base + pos,
                                     avail < sizeof(hbuf) ? avail : sizeof(hbuf), hbuf);
        uint8_t type = p[0];
        if (type == REC_PAD1) {
            pos++;
            continue;
        }
        if (type == REC_PAD) {
            uint32_t len = stream_pad_len(p, geo->stripe_bytes - pos);
            if (!len) {
                break; /* not a pad record we wrote */
            }
            pos += len;
            continue;
        }
        if ((type != REC_PAIR && type != REC_TOMBSTONE) ||
            pos + BLOB_HEADER_BYTES > geo->stripe_bytes) {
            break;
        }
        struct blob_header h;
        memcpy(&h, p, sizeof(h));
        uint64_t len = BLOB_HEADER_BYTES + (uint64_t)h.key_bytes + h.value_bytes;
        if (h.key_bytes == 0 || h.value_bytes > KVFTL_VALUE_MAX_BYTES ||
            pos + len > geo->stripe_bytes) {
            break;
        }
        /* the controller reads the pages the blob covers */
        uint64_t last_idx = (pos + len - 1) / geo->page_size;
        uint64_t t = *now_ns;
        for (; read_upto <= last_idx; read_upto++) {
            if (read_upto >= idx) {
                uint64_t d = nand_read(&ftl->nand, base_ppn + read_upto, geo->page_size, t);
                if (d > *now_ns) {
                    *now_ns = d;
                }
            }
        }
        p = nand_view(&ftl->nand, base + pos, len, nand_scratch_get(&scratch, len));
        bool tomb = type == REC_TOMBSTONE;
        uint64_t loc = loc_make(base + pos, (uint32_t)len, tomb);
        uint32_t occ = vlog_occupied(&ftl->vl, (uint32_t)len);
        const uint8_t *key = p + BLOB_HEADER_BYTES;
        const struct gc_owner *own = &ftl->gc_owner;
        if (own->blob_live(own->ctx, &h, key, loc, now_ns)) {
            if (tomb && h.seq < oldest_other) {
                /* no older version of the key is left anywhere: drop the tombstone */
                own->relocate(own->ctx, loc, 0, now_ns);
                vlog_account_replace(&ftl->vl, loc, 0, 0);
            } else {
                struct placement pl;
                int rc = vlog_append(&ftl->vl, &h, key, key + h.key_bytes, false, 0, true, &pl,
                                     now_ns);
                if (rc != 0) {
                    nand_scratch_free(&scratch);
                    return -1;
                }
                uint64_t newloc = loc_make(pl.addr, (uint32_t)len, tomb);
                own->relocate(own->ctx, loc, newloc, now_ns);
                vlog_account_replace(&ftl->vl, loc, newloc, h.seq);
                ftl->st.gc_relocated_bytes += occ;
            }
        }
        pos += occ;
    }
    nand_scratch_free(&scratch);
    return 0;
}

static int collect_index(struct kvftl *ftl, uint32_t victim, uint64_t *now_ns)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct gc_owner *own = &ftl->gc_owner;
    uint64_t base_ppn = (uint64_t)victim * geo->pages_per_stripe;
    for (uint32_t i = 0; i < geo->pages_per_stripe; i++) {
        uint64_t ppn = base_ppn + i;
        const struct nand_oob *oob = &ftl->nand.oob[ppn];
        if (oob->kind != NAND_PAGE_INDEX) {
            continue;
        }
        int rc = own->page_relocate(own->ctx, ppn, oob->tag, now_ns);
        if (rc < 0) {
            return -1;
        }
        if (rc > 0) {
            ftl->st.gc_relocated_bytes += geo->page_size;
        }
    }
    return 0;
}

int gc_collect(struct kvftl *ftl, uint32_t victim, uint64_t *now_ns)
{
    struct stripe_info *si = &ftl->space.stripes[victim];
    bool was_active = ftl->gc_active;
    ftl->gc_active = true;
    const struct gc_owner *own = &ftl->gc_owner;
    bool own_data = si->state == STRIPE_DATA && own->collect_data;
    int rc = own_data                   ? own->collect_data(own->ctx, victim, now_ns)
             : si->state == STRIPE_DATA ? collect_data(ftl, victim, now_ns)
                                        : collect_index(ftl, victim, now_ns);
    if (rc == 0 && si->state == STRIPE_DATA && !own_data && !ftl->cfg.plp) {
        /*
         * Without power-loss protection the relocated copies must reach NAND
         * before the only durable copies are erased.
         */
        rc = vlog_flush(&ftl->vl, now_ns);
    }
    ftl->gc_active = was_active;
    if (rc != 0 || !ftl_powered(ftl)) {
        return -1;
    }
    if (si->valid_bytes != 0) {
        /* something live was not found by the scan: never erase it */
        return -1;
    }
    *now_ns = space_release(&ftl->space, victim, *now_ns);
    ftl->st.gc_runs++;
    return 0;
}

void gc_before_write(struct kvftl *ftl, uint64_t *now_ns)
{
    if (ftl->gc_active || ftl->space.free_stripes >= ftl->cfg.gc_low_watermark_blocks) {
        return;
    }
    uint64_t start = *now_ns;
    for (uint32_t i = 0;
         i < ftl->nand.geo.stripes && ftl->space.free_stripes < ftl->cfg.gc_low_watermark_blocks;
         i++) {
        /*
         * Short of free stripes, reclaim the most space per relocated byte
         * whatever the policy: an old but nearly full victim (cost-benefit's
         * choice) could need more room than is left to relocate it.
         */
        uint32_t v = gc_pick_victim_policy(ftl, *now_ns, KVFTL_GC_GREEDY);
        if (v == UINT32_MAX || gc_collect(ftl, v, now_ns) != 0) {
            break;
        }
    }
    ftl->st.gc_foreground_stalls++;
    ftl->st.gc_stall_ns += *now_ns - start;
}

void gc_background(struct kvftl *ftl, uint64_t arrival_ns)
{
    /* only in idle time: nothing outstanding when the request arrives */
    if (ftl->gc_active || ftl->space.free_stripes >= ftl->cfg.gc_high_watermark_blocks ||
        !ftl_powered(ftl) || arrival_ns <= ftl->now_max_ns) {
        return;
    }
    uint64_t t = ftl->now_max_ns;
    uint32_t v = gc_pick_victim(ftl, t);
    if (v != UINT32_MAX && gc_collect(ftl, v, &t) == 0) {
        ftl->gc_background_runs++;
    }
    if (t > ftl->now_max_ns) {
        ftl->now_max_ns = t;
    }
}
