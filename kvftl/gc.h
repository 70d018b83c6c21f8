/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Garbage collection: greedy or cost-benefit victims among the stripes of
 * the space layer, valid blobs and index pages relocated, the index
 * updated, the victim erased.
 */
#ifndef KVFTL_GC_H
#define KVFTL_GC_H

#include <stdbool.h>
#include <stdint.h>

#include <kvftl/kvftl.h>

struct kvftl;

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
