/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The index seam: what the KV personality asks of an index design (key ->
 * blob location), whichever design cfg.index picks. A design fills a
 * struct kv_index_ops; the personality, GC's owner, the iterators, the
 * crash scan and the statistics call only the kv_index_*() functions
 * below. The designs sit beside this file, one folder each (hash/).
 *
 * Every key is named by its 64-bit hash signature under the design's
 * secret seed (kv_index_hash()); a design confirms a signature match with
 * the key stored in the blob when it must (the hash design does, on every
 * lookup). Locations are the value log's (loc_make(), value_log.h); 0 is
 * no location. A position (struct kv_index_pos) is where a lookup found an
 * entry: valid for kv_index_set() and kv_index_remove() until the index
 * changes otherwise.
 */
#ifndef KVFTL_KV_INDEX_H
#define KVFTL_KV_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include <kvftl/kvftl.h>

#include "hash_index.h"
#include "pm983_index.h"

struct kv_index;
struct space;
struct value_log;

/* A design's position of an entry (the hash design: index page and slot). */
struct kv_index_pos {
    uint32_t a, b;
};

/* One entry, for the prefix walk: the key's signature and its location. */
struct kv_index_entry {
    uint64_t hash;
    uint64_t loc;
};

/* The counters a design keeps of its DRAM cache (struct kvftl_stats). */
struct kv_index_counters {
    uint64_t cache_hits, cache_misses, pages_evicted_dirty;
};

struct kv_index_ops {
    /* A design over @sp's index stream whose keys are checked in @vl's blobs. */
    void (*init)(struct kv_index *ix, struct space *sp, struct value_log *vl,
                 const struct kvftl_config *cfg);
    void (*fini)(struct kv_index *ix);
    /* Empty (Format, before a crash scan), under a new secret seed (cfg hash_seed if set). */
    void (*reset)(struct kv_index *ix);
    uint64_t (*hash)(const struct kv_index *ix, const void *key, uint32_t key_bytes);
    /* Start loading what a lookup (@for_update: a Store) of @hash will touch; changes nothing. */
    void (*prefetch)(const struct kv_index *ix, uint64_t hash, bool for_update);
    /* A location for @hash from DRAM alone, not key-checked (0: none); changes nothing. */
    uint64_t (*peek)(const struct kv_index *ix, uint64_t hash);
    /*
     * A Store's (and the crash scan's) look-up of @key: true with its
     * location (tombstones included) and position.
     */
    bool (*find)(struct kv_index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                 uint64_t *loc, struct kv_index_pos *pos, uint64_t *now_ns);
    /*
     * A Retrieve's, Delete's or Exist's: find(), but a DRAM filter may answer
     * absent first (*@filtered set), and @record (NULL: not wanted) returns
     * the blob bytes the key check read, for vlog_read_record().
     */
    bool (*lookup)(struct kv_index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                   uint64_t *loc, struct kv_index_pos *pos, uint64_t *now_ns,
                   const uint8_t **record, bool *filtered);
    /* Room for one new key of @hash before its blob is appended: 0, or -1 (refused). */
    int (*reserve)(struct kv_index *ix, uint64_t hash, uint64_t *now_ns);
    /* Add a new key after a successful reserve() of the same hash. */
    void (*add)(struct kv_index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns);
    void (*set)(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t loc,
                uint64_t *now_ns);
    void (*remove)(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t *now_ns);
    /* GC validity: is (@hash, @loc) the key's current entry? No key reads. */
    bool (*find_loc)(struct kv_index *ix, uint64_t hash, uint64_t loc, struct kv_index_pos *pos,
                     uint64_t *now_ns);
    /*
     * GC moves the index page @tag whose copy is at NAND page @ppn: 1 when
     * rewritten, 0 when @ppn is not its newest copy, -1 when it cannot be.
     */
    int (*page_relocate)(struct kv_index *ix, uint64_t ppn, uint32_t tag, uint64_t *now_ns);
    /*
     * Prefix walk, in signature order: the live entries (no tombstones) of
     * the chunk of the signature space holding @from, with signatures from
     * @from on, sorted by (hash, loc) into *@ents (*@n of them, the
     * design's buffer, valid until the next call); *@last is the chunk's
     * last signature.
     */
    void (*walk)(struct kv_index *ix, uint64_t from, const struct kv_index_entry **ents,
                 uint32_t *n, uint64_t *last, uint64_t *now_ns);
    /* Before a checkpoint: write every dirty index page back. 0, or -1. */
    int (*write_back)(struct kv_index *ix, uint64_t *now_ns);
    /* Before a walk of the whole index (kvftl_check()): apply what is pending in DRAM. */
    void (*settle)(struct kv_index *ix, uint64_t *now_ns);
    /* After a checkpoint's install or a crash scan: rebuild what DRAM derives (filters). */
    void (*rebuilt)(struct kv_index *ix);
    uint64_t (*nand_bytes)(const struct kv_index *ix); /* NAND bytes of its live pages */
    uint64_t (*host_bytes)(const struct kv_index *ix); /* host memory it uses now */
    void (*counters)(const struct kv_index *ix, struct kv_index_counters *c);
};

/* One index: the design cfg.index picked, its operations and its state. */
struct kv_index {
    enum kvftl_index design;
    const struct kv_index_ops *ops;
    struct hash_index hash; /* KVFTL_INDEX_HASH; pm983's global index */
    struct pm983_local pm983; /* KVFTL_INDEX_PM983: the local index */
};

/* kv_index_init() - the design @cfg->index names (checked by kvftl_config_check()). */
void kv_index_init(struct kv_index *ix, struct space *sp, struct value_log *vl,
                   const struct kvftl_config *cfg);

static inline void kv_index_fini(struct kv_index *ix)
{
    ix->ops->fini(ix);
}

static inline void kv_index_reset(struct kv_index *ix)
{
    ix->ops->reset(ix);
}

static inline uint64_t kv_index_hash(const struct kv_index *ix, const void *key, uint32_t len)
{
    return ix->ops->hash(ix, key, len);
}

static inline void kv_index_prefetch(const struct kv_index *ix, uint64_t hash, bool for_update)
{
    ix->ops->prefetch(ix, hash, for_update);
}

static inline uint64_t kv_index_peek(const struct kv_index *ix, uint64_t hash)
{
    return ix->ops->peek(ix, hash);
}

static inline bool kv_index_find(struct kv_index *ix, uint64_t hash, const void *key,
                                 uint32_t key_bytes, uint64_t *loc, struct kv_index_pos *pos,
                                 uint64_t *now_ns)
{
    return ix->ops->find(ix, hash, key, key_bytes, loc, pos, now_ns);
}

static inline bool kv_index_lookup(struct kv_index *ix, uint64_t hash, const void *key,
                                   uint32_t key_bytes, uint64_t *loc, struct kv_index_pos *pos,
                                   uint64_t *now_ns, const uint8_t **record, bool *filtered)
{
    return ix->ops->lookup(ix, hash, key, key_bytes, loc, pos, now_ns, record, filtered);
}

static inline int kv_index_reserve(struct kv_index *ix, uint64_t hash, uint64_t *now_ns)
{
    return ix->ops->reserve(ix, hash, now_ns);
}

static inline void kv_index_add(struct kv_index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns)
{
    ix->ops->add(ix, hash, loc, now_ns);
}

static inline void kv_index_set(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t loc,
                                uint64_t *now_ns)
{
    ix->ops->set(ix, pos, loc, now_ns);
}

static inline void kv_index_remove(struct kv_index *ix, const struct kv_index_pos *pos,
                                   uint64_t *now_ns)
{
    ix->ops->remove(ix, pos, now_ns);
}

static inline bool kv_index_find_loc(struct kv_index *ix, uint64_t hash, uint64_t loc,
                                     struct kv_index_pos *pos, uint64_t *now_ns)
{
    return ix->ops->find_loc(ix, hash, loc, pos, now_ns);
}

static inline int kv_index_page_relocate(struct kv_index *ix, uint64_t ppn, uint32_t tag,
                                         uint64_t *now_ns)
{
    return ix->ops->page_relocate(ix, ppn, tag, now_ns);
}

static inline void kv_index_walk(struct kv_index *ix, uint64_t from,
                                 const struct kv_index_entry **ents, uint32_t *n, uint64_t *last,
                                 uint64_t *now_ns)
{
    ix->ops->walk(ix, from, ents, n, last, now_ns);
}

static inline int kv_index_write_back(struct kv_index *ix, uint64_t *now_ns)
{
    return ix->ops->write_back(ix, now_ns);
}

static inline void kv_index_settle(struct kv_index *ix, uint64_t *now_ns)
{
    ix->ops->settle(ix, now_ns);
}

static inline void kv_index_rebuilt(struct kv_index *ix)
{
    ix->ops->rebuilt(ix);
}

static inline uint64_t kv_index_nand_bytes(const struct kv_index *ix)
{
    return ix->ops->nand_bytes(ix);
}

static inline uint64_t kv_index_host_bytes(const struct kv_index *ix)
{
    return ix->ops->host_bytes(ix);
}

static inline void kv_index_counters(const struct kv_index *ix, struct kv_index_counters *c)
{
    ix->ops->counters(ix, c);
}

#endif
