/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lsm design behind the index seam (kv_index.h), after BandSlim's
 * firmware ("A pair of key and value address is stored in the LSM-tree,
 * and a value is stored in the vLog") and PinK ("PinK: High-speed
 * In-storage Key-value Store with Bounded Tails"), which pins the upper
 * levels in DRAM. Keys map to value-log locations: a DRAM memtable,
 * frozen when full into a sorted run that merges into L0 a bounded step
 * per new memtable entry, and levels L0..Ln on flash, each one
 * sorted run of index pages written to the index stream, LSM_RATIO times
 * larger than the one above, compacted one page of the upper level at a
 * time (at most LSM_OVERLAP_MAX pages of the lower one).
 *
 * A key is exact: its 64-bit signature and which of the signature's keys
 * it is (LSM_DUP), each confirmed by the key in its blob, as the hash
 * design confirms. PinK keeps keys in its index pages instead; at up to
 * 255 bytes a 4 KiB page would hold 15 of them against 255 entries of 16
 * bytes, and two keys sharing a signature (odds ~n^2/2^65 under the
 * secret seed) do not pay for that. The bit of which key must be in the
 * entry, not read from a blob: an entry shadowed by a newer one may name
 * a blob GC has freed.
 */
#ifndef KVFTL_LSM_INDEX_H
#define KVFTL_LSM_INDEX_H

#include <stdbool.h>
#include <stdint.h>

struct kv_index_ops;

#define LSM_PAGE_MAGIC 0x504d534cu /* "LSMP" */
#define LSM_MAX_LEVELS 8
/* LevelDB's level size multiplier: each level holds 10 times the one above. */
#define LSM_RATIO 10
/* A compaction step merges one upper page into at most this many lower pages. */
#define LSM_OVERLAP_MAX 16
/*
 * An entry is one key: its signature and, in the location's top length bit
 * (no blob is 4 MiB long), which of at most two keys sharing the signature
 * it is (the second key stored while the first has an entry). Entries sort
 * by (signature, that bit); a page never splits a signature's two.
 */
#define LSM_DUP (1ull << 62)
/* A deletion marker's location (an entry GC removed): no blob can have it (LSM_DUP inverted). */
#define LSM_DEL UINT64_MAX

/* The header of an lsm index page; its entries (struct kv_index_entry) follow, sorted. */
struct lsm_page_header {
    uint32_t magic;
    uint32_t id;    /* the page's tag in the index stream */
    uint32_t level;
    uint32_t count; /* entries, 1 .. slots */
};

/* One page of a level: its key range; its bytes pinned in DRAM or on flash (id_ppn). */
struct lsm_page {
    uint32_t id;
    uint32_t count;
    uint64_t first, last; /* its first and last signature */
    uint8_t *mem;         /* the pinned copy, or NULL */
};

struct lsm_level {
    struct lsm_page *pg; /* sorted by key range, disjoint */
    uint32_t n, cap;
    uint32_t cursor;   /* the next page a compaction step takes */
    uint64_t target;   /* pages before it is compacted into the next */
    bool pinned;       /* its pages are held in DRAM */
};

struct lsm_index {
    /* the memtable: open addressing over (signature, LSM_DUP) */
    uint64_t *mhash, *mloc;
    uint8_t *mused;
    uint32_t mcap, mcount, mmax;
    /*
     * The frozen memtable: sorted, its entries [imm_at, imm_n) not yet in
     * L0, newer than L0 and older than the memtable. A merge step runs
     * before each new memtable entry and takes at least one, so it is
     * empty again before the memtable fills (mmax entries).
     */
    struct kv_index_entry *imm;
    uint32_t imm_at, imm_n, imm_cap;
    struct lsm_level lv[LSM_MAX_LEVELS];
    uint32_t nlevels; /* levels that have ever held a page */
    /* index page ids: the NAND page of each, UINT32_MAX when free */
    uint32_t *id_ppn;
    uint32_t ids_cap, ids_used, id_hint;
    uint32_t page_bytes, slots;
    uint8_t *wbuf; /* one NAND page being written */
    struct kv_index_entry *buf; /* merges and walks */
    uint32_t buf_cap;
    uint64_t nand_bytes, pinned_bytes;
    uint64_t flushes, merges, compactions, pages_read, pages_written, hits, misses;
    /*
     * Memtable searches by a Store or a read: one index probe of
     * controller-CPU time each (fw-index-probe-ns), counted with the hits.
     */
    uint64_t mem_probes;
    uint64_t dels_dropped;
    uint64_t dup_keys; /* entries with LSM_DUP made (or mounted): 0, no look-up seeks them */
    uint64_t free_hash; /* 0, or the signature whose free key free_dup is (a Store's miss) */
    uint32_t free_dup;
};

extern const struct kv_index_ops lsm_index_ops;

struct kv_index;

/*
 * lsm_merge_step() - one step of the frozen memtable into L0: its first
 * entries, at most one page of them and none past the LSM_OVERLAP_MAX
 * L0 pages their range meets, merged with those pages (read, tR each
 * unless pinned) into new ones. 0 (also when nothing is frozen), or -1
 * (no stripe, power lost) with nothing changed.
 */
int lsm_merge_step(struct kv_index *ix, uint64_t *now_ns);

/*
 * lsm_flush() - the whole memtable into L0: the frozen run merged, the
 * memtable frozen and merged, step by step (a checkpoint's, a test's).
 * 0, or -1 (no stripe, power lost): the steps done stay, the rest frozen.
 */
int lsm_flush(struct kv_index *ix, uint64_t *now_ns);

/*
 * lsm_compact_step() - one compaction step of level @v (with pages) into
 * @v + 1: the page at the level's cursor merged with the lower pages its
 * range overlaps, at most LSM_OVERLAP_MAX of them (its entries past them
 * stay, rewritten as a smaller page); deletion markers drop when @v + 1
 * is the deepest level. Reads 1 + the overlapped pages, programs the
 * merged pages (and the rest). 0, or -1 with nothing changed.
 */
int lsm_compact_step(struct kv_index *ix, uint32_t v, uint64_t *now_ns);

/*
 * lsm_command_pages_max() - the most index pages (reads + programs) that
 * a new memtable entry's work costs: one merge step and one compaction
 * step (docs/kvftl.md, "Index design lsm"); 70 for 4 KiB pages.
 */
uint64_t lsm_command_pages_max(const struct kv_index *ix);

#endif
