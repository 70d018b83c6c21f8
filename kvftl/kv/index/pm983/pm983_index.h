/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pm983 design behind the index seam (kv_index.h), after the
 * characterization paper's Samsung PM983 KV firmware: "During store
 * operations, the key is hashed ... and temporarily stored in a local index
 * before merging it with the global index". A DRAM local index of key
 * signatures absorbs every index change; a full local index is merged, as
 * one batch, into the global index (the hash design's flash-resident pages
 * and their cache), reading and programming index pages on the Store that
 * found it full. Reads look in the local index first.
 */
#ifndef KVFTL_PM983_INDEX_H
#define KVFTL_PM983_INDEX_H

#include <stdint.h>

#include "pm983_levels.h"

struct kv_index_ops;

/* One pending change of the local index. */
enum pm983_op {
    PM983_EMPTY = 0,
    PM983_SET = 1,    /* the key's location is loc */
    PM983_REMOVE = 2, /* the key's entry goes (GC dropped its tombstone) */
};

struct pm983_local {
    uint64_t *hash;   /* key signature */
    uint64_t *loc;
    uint8_t *op;      /* enum pm983_op */
    uint32_t cap;     /* slots, a power of two at least twice max */
    uint32_t count;   /* slots in use */
    uint32_t max;     /* entries before a merge */
    /*
     * New keys admitted since the last merge, counted per signature prefix
     * of the directory bound's depth (pm983_reserve()): an open-addressing
     * map of cap slots, prefix + 1 (0: empty) and its count.
     */
    uint64_t *pend_prefix;
    uint32_t *pend_n;
    uint32_t pend_depth; /* the prefix's bits: the bound at the last merge */
    uint32_t pend_used;  /* prefixes in the map: at most max (a full map is merged first) */
    uint64_t admit_reads; /* leaf pages an admission had to count entries of */
    uint64_t merges;  /* merges run */
    uint64_t merged;  /* entries merged */
    /* local index searches by a Store, a read or GC's validity check: a probe each */
    uint64_t probes;
    /*
     * The most NAND page reads one merge made, and programs less the
     * leaves its splits created: at most max x levels each (pm983_index.c).
     */
    uint64_t merge_reads_max, merge_programs_max;
    struct pm983_levels lv; /* the global index's directory levels */
};

extern const struct kv_index_ops pm983_index_ops;

#endif
