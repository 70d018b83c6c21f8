/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Free space: stripe allocation, per-stripe valid-byte accounting, and
 * garbage collection (greedy or cost-benefit victims, valid blobs and
 * index pages relocated, the index updated).
 */
#ifndef KVFTL_GC_H
#define KVFTL_GC_H

#include <stdbool.h>
#include <stdint.h>

#include <kvftl/kvftl.h>

struct kvftl;

enum stripe_state {
    STRIPE_FREE = 0,
    STRIPE_OPEN_DATA,
    STRIPE_OPEN_INDEX,
    STRIPE_DATA,
    STRIPE_INDEX,
};

struct stripe_info {
    uint8_t state;
    bool erased;            /* nothing programmed since the last erase */
    uint64_t valid_bytes;   /* bytes of live blobs (rounded to the unit) or live index pages */
    uint64_t open_seq;      /* order in which stripes were opened */
    uint64_t min_blob_seq;  /* smallest blob sequence number written to it */
    uint64_t last_write_ns; /* for cost-benefit age */
};

void gc_init(struct kvftl *ftl);
void gc_fini(struct kvftl *ftl);

/*
 * stripe_alloc() - take a free stripe (erasing it if needed) and mark it
 * open in @state. Returns UINT32_MAX if none is free.
 */
uint32_t stripe_alloc(struct kvftl *ftl, enum stripe_state state, uint64_t *now_ns);

/* stripe_free_count() */
uint32_t stripe_free_count(const struct kvftl *ftl);

/* gc_valid_add() - add (or with negative @delta remove) live bytes at device address @addr. */
void gc_valid_add(struct kvftl *ftl, uint64_t addr, int64_t delta, uint64_t blob_seq);

/* gc_pick_victim() - closed stripe to collect under the configured policy, or UINT32_MAX. */
uint32_t gc_pick_victim(struct kvftl *ftl, uint64_t now_ns);
uint32_t gc_pick_victim_policy(struct kvftl *ftl, uint64_t now_ns, enum kvftl_gc_policy policy);

/*
 * gc_collect() - relocate the live contents of @victim and erase it.
 * Returns 0, or -1 on power loss / no space to relocate.
 */
int gc_collect(struct kvftl *ftl, uint32_t victim, uint64_t *now_ns);

/*
 * gc_before_write() - foreground GC: while fewer than the low watermark of
 * stripes are free, collect (the caller's request stalls: *@now_ns moves).
 */
void gc_before_write(struct kvftl *ftl, uint64_t *now_ns);

/*
 * gc_background() - below the high watermark, if the device is idle at
 * @arrival_ns, collect one victim in the idle time.
 */
void gc_background(struct kvftl *ftl, uint64_t arrival_ns);

#endif
