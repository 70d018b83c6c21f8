/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Garbage collection: greedy or cost-benefit victims among the stripes of
 * the space layer, their live blobs and index pages relocated, the victim
 * erased. What is live is the owner's to say: GC parses the victim's log
 * and asks the personality above it (the KV API, whose index names every
 * live blob) through struct gc_owner, and never reads the index itself.
 * An owner with another data format (the nvm personality) relocates a data
 * victim's contents itself through the collect_data() hook.
 */
#ifndef KVFTL_GC_H
#define KVFTL_GC_H

#include <stdbool.h>
#include <stdint.h>

#include <kvftl/kvftl.h>

#include "value_log.h"

struct kvftl;

/*
 * The owner of the blobs and index pages in the stripes GC collects,
 * registered in struct kvftl (gc_owner) by the personality that wrote them.
 */
struct gc_owner {
    void *ctx;
    /*
     * blob_live() - is the blob at @loc (header @h, key @key, read from the
     * victim) still referenced? A true answer is followed at once by
     * relocate() of the same blob.
     */
    bool (*blob_live)(void *ctx, const struct blob_header *h, const uint8_t *key, uint64_t loc,
                      uint64_t *now_ns);
    /*
     * relocate() - the blob at @old_loc (the last one found live) now lives
     * at @new_loc; 0: it was dropped (a tombstone no older version of its key
     * outlives).
     */
    void (*relocate)(void *ctx, uint64_t old_loc, uint64_t new_loc, uint64_t *now_ns);
    /*
     * page_relocate() - NAND page @ppn holds index page @tag by its spare
     * area: if it is still the owner's copy, read it and write it anew.
     * Returns 1 (relocated), 0 (not live: nothing done) or -1 (no free
     * stripe or power lost).
     */
    int (*page_relocate)(void *ctx, uint64_t ppn, uint32_t tag, uint64_t *now_ns);
    /*
     * collect_data() - for an owner that does not write value-log records
     * (the nvm personality's 4 KiB slots): relocate every live thing of data
     * stripe @victim itself, and without PLP program the copies before
     * returning (the victim is erased next). NULL: GC parses the victim's
     * value-log records and asks blob_live()/relocate(). Returns 0, or -1
     * (no free stripe or power lost).
     */
    int (*collect_data)(void *ctx, uint32_t victim, uint64_t *now_ns);
};

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
