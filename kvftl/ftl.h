/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * struct kvftl: the firmware instance (layer 6 of docs/kvftl.md's Layers),
 * holding one of each layer below it -- the NAND model, the space (stripes,
 * valid bytes, the write streams and the page buffer), the value log with
 * its packer, the KV index behind its seam (kv_index.h) -- and the
 * state of the policies on top (GC and its owner, iterators, the mount's
 * report, statistics). The layers below do not see it: each takes its own
 * struct. It includes the headers of what it holds; a file that calls a
 * layer includes that layer's header itself. Internal: tests include it to
 * check exact internal state.
 */
#ifndef KVFTL_FTL_H
#define KVFTL_FTL_H

#include <kvftl/kvftl.h>

#include "gc.h"
#include "iterator.h"
#include "kv_index.h"
#include "nand.h"
#include "page_map.h"
#include "recovery.h"
#include "space.h"
#include "stats.h"
#include "value_log.h"

struct kvftl {
    struct kvftl_config cfg;      /* derived values filled in */
    struct nand nand;
    struct value_log vl;
    struct kv_index index;        /* the index design cfg.index picks (kv/index/kv_index.h) */

    struct space space;           /* stripes, allocation, valid bytes */
    bool gc_active;
    struct gc_owner gc_owner;     /* GC asks it what is live (kvftl.c: the index) */
    struct kv_index_pos gc_pos;   /* the entry of the blob GC found live last */
    struct recovery_owner recovery_owner; /* what a mount asks of the personality */

    /* the live-data gauges are the value log's (vl.live) and the index's (kv_index_nand_bytes()) */
    uint64_t capacity_bytes; /* limit on live data + tombstones + index pages */

    struct iterator iters[KVFTL_MAX_ITERATORS];
    struct recovery_report mount; /* what the last mount of an image found */

    /* counters (struct kvftl_stats fields that are counters) */
    struct kvftl_stats st;
    bool fw_on; /* a firmware-time tunable is nonzero (fw_time.h) */
    uint64_t gc_background_runs; /* collections done in idle time (st.gc_runs counts all) */
    struct latency_hist hist[KVFTL_OP__COUNT];
    /* baselines of counters kept by components, for kvftl_stats_reset() */
    uint64_t base_pages_read, base_pages_programmed, base_blocks_erased;
    uint64_t base_data_pages, base_memcpy, base_padding, base_backfills;
    uint64_t base_hits, base_misses, base_evicted;
    uint64_t base_stall_ns;
    uint64_t base_cpu_work_ns;
    uint64_t now_max_ns;

    uint8_t *iter_value; /* one value, for key+value iteration */

    /*
     * The nvm personality (blockftl.c, include/kvftl/block.h); unused by kv.
     * The map (pmap.map), its translation pages (pmap.tpage_ppn) and the
     * slots' write sequence number (pmap.write_seq) are what a mount
     * rebuilds; page_map_assign() is the one call that changes an entry.
     */
    bool nvm; /* cfg.command_set == KVFTL_CMDSET_NVM */
    struct page_map pmap;
    uint64_t blk_lbas; /* namespace size in lba_bytes blocks (kvftl_block_lbas()) */
    uint64_t blk_memcpy_bytes; /* bytes copied to merge partial units (counter) */
    uint64_t blk_padding_bytes; /* slot bytes left empty by Flush and FUA (counter) */
    uint8_t *blk_unit; /* one unit being merged */
};

/* ftl_powered() - false after a power cut until kvftl_power_cycle(). */
static inline bool ftl_powered(const struct kvftl *ftl)
{
    return !ftl->nand.power_lost;
}

/* Internal hooks for unit tests. */
void kvftl_set_hash_for_test(struct kvftl *ftl, index_hash_fn fn);

/* ftl_reset_state() - empty DRAM state over an erased or to-be-scanned device. */
void ftl_reset_state(struct kvftl *ftl);

/*
 * The nvm personality's part of the shared calls (blockftl.c): open after
 * the NAND and space are up (the map sized from capacity_bytes, gc_owner
 * registered), free, Flush's data + map write-back, and the power-loss
 * dump of the open data stripe's buffered pages. Format's reset is
 * ftl_reset_state() (page_map_reset() for nvm).
 */
void blockftl_open(struct kvftl *ftl);
void blockftl_free(struct kvftl *ftl);
int blockftl_flush(struct kvftl *ftl, uint64_t *now_ns);
void blockftl_plp_dump(struct kvftl *ftl, uint64_t now_ns);

#endif
