/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pm983 design's global index is a multi-level hash: "the KV-FTL ...
 * uses a multi-level hash table structure as the main index" and "a
 * multi-level hash table for fast point query as a global index structure"
 * (characterization paper, "KV-SSD: What Is It Good For?", Secs. II and
 * IV). Its leaves are the hash design's index pages (index.h: open
 * addressing over 64-bit signatures, split on the next hash bit); above
 * them, directory pages in flash hold the extendible hash's directory,
 * each slot naming a leaf and the NAND page of its newest copy; above
 * those, directory pages naming the directory pages below and their NAND
 * pages; the top level is in DRAM. See pm983_levels.c for which sentence
 * each choice comes from.
 */
#ifndef KVFTL_PM983_LEVELS_H
#define KVFTL_PM983_LEVELS_H

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

struct kv_index;
struct kv_index_ckpt_ctx;
struct kv_index_ckpt_head;
struct kv_index_entry;
struct kvftl_config;

#define PM983_DIR_MAGIC 0x52444d50u /* "PMDR" */
/* The index stream tag of directory page n: PM983_DIR_TAG | n (leaves: their page id). */
#define PM983_DIR_TAG 0x80000000u
/* Directory levels at most: 2^30 slots (INDEX_MAX_DEPTH) over a fan-out of at least 4. */
#define PM983_MAX_DIR_LEVELS 15
#define PM983_MIN_FANOUT_LOG 2u

struct pm983_dir_header {
    uint32_t magic;
    uint32_t level; /* 1: its entries are directory slots naming leaves */
    uint32_t index; /* its position in its level */
    uint32_t count; /* entries */
};

/* Level 1: leaf page id and NAND page. Above: the child's index in its level and NAND page. */
struct pm983_dir_entry {
    uint32_t id;
    uint32_t ppn;
};

/*
 * The directory levels, their NAND copies and their DRAM cache. The page
 * contents follow from the hash design's directory and page table (the
 * simulator's shadow of what the directory pages say), so a cached page is
 * a record in the LRU list, not a copy: it is generated when programmed.
 */
struct pm983_levels {
    uint32_t fanout_log; /* E = 2^fanout_log entries per directory page */
    uint32_t gd;         /* the directory depth the shape is for */
    uint32_t dir_levels; /* directory levels in flash: the index has dir_levels + 1 */
    uint32_t count[PM983_MAX_DIR_LEVELS + 1]; /* pages of level k (1..dir_levels) */
    uint32_t first[PM983_MAX_DIR_LEVELS + 1]; /* number of level k's first page */
    uint32_t npages, cap;                     /* directory pages, all levels; allocated */
    uint32_t *ppn;                            /* [npages]: newest copy, UINT32_MAX: none */
    uint8_t *state;                           /* [npages]: PM983_DIR_CACHED | PM983_DIR_DIRTY */
    uint32_t *lru_prev, *lru_next;
    uint32_t lru_head, lru_tail, cached, frames_max;
    uint32_t *leaf_slot; /* [leaf_n]: the first directory slot naming leaf p, at depth gd */
    uint32_t leaf_n, leaf_cap;
    uint64_t nand_bytes; /* NAND bytes of live directory pages */
    uint64_t reads, programs, relocated; /* NAND reads and programs; pages moved by GC */
    uint64_t hits, misses,
        evicted_dirty; /* the cache's, added to the leaves' (kv_index_counters) */
    uint8_t *buf; /* one NAND page: a directory page being programmed or checked */
};

/* Tests: a fan-out of 2^n (>= 4) for every index opened after, instead of the page's; 0: off. */
extern uint32_t pm983_test_fanout_log;

void pm983_levels_init(struct kv_index *ix, const struct kvftl_config *cfg);
void pm983_levels_fini(struct kv_index *ix);
/* Empty, for the hash design's index just reset (one leaf, depth 0). */
void pm983_levels_reset(struct kv_index *ix);
/* The index's levels in flash, leaves included (1: the directory fits in DRAM). */
uint32_t pm983_levels_count(const struct kv_index *ix);
/* A look-up's walk from the top to @hash's leaf: each level not cached is read. */
void pm983_levels_walk(struct kv_index *ix, uint64_t hash, uint64_t *now_ns);
/*
 * After @hash's entry went into the leaves (index_reserve() may have split
 * its leaf, whose depth was @ld0, and doubled the directory from @gd0):
 * the directory pages whose slots changed are dirtied.
 */
void pm983_levels_changed(struct kv_index *ix, uint64_t hash, uint32_t gd0, uint32_t ld0,
                          uint64_t *now_ns);
/* Program every dirty directory page, bottom level first. 0, or -1. */
int pm983_levels_write_back(struct kv_index *ix, uint64_t *now_ns);
/* GC: directory page of @tag at @ppn moved (kv_index.h's page_relocate()). */
int pm983_levels_relocate(struct kv_index *ix, uint64_t ppn, uint32_t tag, uint64_t *now_ns);
uint64_t pm983_levels_host_bytes(const struct kv_index *ix);

/* The checkpoint's index part: the hash design's, then the top level's pages (kv_index.h). */
void pm983_ckpt_save(struct kv_index *ix, struct kv_index_ckpt_head *h, GByteArray *b);
uint64_t pm983_ckpt_length(const struct kv_index *ix, const struct kv_index_ckpt_head *h,
                           uint64_t total_pages, char *why, size_t why_len);
uint64_t pm983_ckpt_max_length(const struct kv_index *ix, uint64_t total_pages);
int pm983_ckpt_check(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p,
                     struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len);
void pm983_ckpt_install(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p);
uint32_t pm983_check_pages(const struct kv_index *ix);
int pm983_check_page(struct kv_index *ix, uint32_t p, const struct kv_index_entry **ents,
                     uint32_t *n, uint32_t *ppn, uint32_t *bytes, char *err, size_t err_len);

#endif
