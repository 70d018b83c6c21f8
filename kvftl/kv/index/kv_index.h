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
#include <stddef.h>
#include <stdint.h>

#include <glib.h>
#include <kvftl/kvftl.h>

#include "hash_index.h"
#include "lsm_index.h"
#include "pm983_index.h"

struct kv_index;
struct live_gauges;
struct space;
struct value_log;

/* A design's position of an entry (hash: index page and slot; lsm: signature, key of it in c). */
struct kv_index_pos {
    uint32_t a, b, c;
};

/* A position that is the entry's signature (designs keyed by it: pm983, lsm). */
static inline struct kv_index_pos kv_index_pos_of_hash(uint64_t hash)
{
    return (struct kv_index_pos){(uint32_t)(hash >> 32), (uint32_t)hash, 0};
}

static inline uint64_t kv_index_pos_hash(const struct kv_index_pos *pos)
{
    return (uint64_t)pos->a << 32 | pos->b;
}

/* One entry, for the prefix walk: the key's signature and its location. */
struct kv_index_entry {
    uint64_t hash;
    uint64_t loc;
};

/* The counters a design keeps of its DRAM cache (struct kvftl_stats). */
struct kv_index_counters {
    uint64_t cache_hits, cache_misses, pages_evicted_dirty;
};

/*
 * The design's fields of the checkpoint head (recovery.h's struct
 * checkpoint_head): two counts whose meaning is the design's (hash: the
 * directory's global depth and the index pages), the key-hash seed and the
 * NAND bytes of its index pages.
 */
struct kv_index_ckpt_head {
    uint32_t count_a, count_b;
    uint64_t hash_seed;
    uint64_t nand_bytes;
};

/*
 * What a design's checkpoint check asks of the mount (recovery.c), which
 * knows the checkpoint's stripe table; and what the check adds up.
 */
struct kv_index_ckpt_ctx {
    const void *opaque;
    /* May a live blob of @len bytes be at @addr (inside the value log as checkpointed)? */
    bool (*blob_inside)(const void *opaque, uint64_t addr, uint32_t len);
    /* Does NAND page @ppn hold index page @tag? 0, or -1 with a sentence in @why. */
    int (*page_at)(const void *opaque, uint32_t ppn, uint32_t tag, char *why, size_t why_len);
    /*
     * The key of the blob at @loc when its header matches @loc (type,
     * length): a pointer to its @key_bytes, or NULL. @buf holds the bytes.
     */
    const uint8_t *(*blob_key)(const void *opaque, uint64_t loc, uint8_t *buf, uint32_t *key_bytes);
    uint64_t *valid;       /* [stripes]: the valid bytes the index references, added to */
    struct live_gauges *t; /* the gauges its live entries add up to */
    uint64_t index_bytes;  /* NAND bytes of its index pages, added to */
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
    /*
     * The checkpoint's index part, after write_back(): its head fields in
     * *@h, its bytes appended to @b.
     */
    void (*ckpt_save)(struct kv_index *ix, struct kv_index_ckpt_head *h, GByteArray *b);
    /*
     * The part's length for head @h, or UINT64_MAX with a sentence in @why
     * when @h's counts are out of the bounds @total_pages NAND pages allow.
     */
    uint64_t (*ckpt_length)(const struct kv_index *ix, const struct kv_index_ckpt_head *h,
                            uint64_t total_pages, char *why, size_t why_len);
    /* The longest part a device of @total_pages NAND pages can have. */
    uint64_t (*ckpt_max_length)(const struct kv_index *ix, uint64_t total_pages);
    /*
     * Check the part @p (ckpt_length() bytes, hostile) field by field and
     * its pages against @ctx, adding up what it references there. Changes
     * nothing of @ix. 0, or -1 with a sentence in @why.
     */
    int (*ckpt_check)(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p,
                      struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len);
    /* A checked part becomes the index (its DRAM state dropped first). */
    void (*ckpt_install)(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p);
    /* kvftl_check()'s walk, after settle(): how many index pages it examines. */
    uint32_t (*check_pages)(const struct kv_index *ix);
    /*
     * Index page @p: its header and structure checked (-1 with a sentence
     * in @err), its current entries (tombstones included, shadowed older
     * versions left out) in *@ents (*@n, the design's buffer), its NAND page
     * in *@ppn (UINT32_MAX: not written yet) and bytes in *@bytes.
     */
    int (*check_page)(struct kv_index *ix, uint32_t p, const struct kv_index_entry **ents,
                      uint32_t *n, uint32_t *ppn, uint32_t *bytes, char *err, size_t err_len);
};

/* One index: the design cfg.index picked, its operations and its state. */
struct kv_index {
    enum kvftl_index design;
    const struct kv_index_ops *ops;
    struct hash_index hash; /* KVFTL_INDEX_HASH; pm983's global index */
    struct pm983_local pm983; /* KVFTL_INDEX_PM983: the local index */
    struct lsm_index lsm; /* KVFTL_INDEX_LSM (its key hash: hash.idx's seed) */
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

static inline void kv_index_ckpt_save(struct kv_index *ix, struct kv_index_ckpt_head *h,
                                      GByteArray *b)
{
    ix->ops->ckpt_save(ix, h, b);
}

static inline uint64_t kv_index_ckpt_length(const struct kv_index *ix,
                                            const struct kv_index_ckpt_head *h,
                                            uint64_t total_pages, char *why, size_t why_len)
{
    return ix->ops->ckpt_length(ix, h, total_pages, why, why_len);
}

static inline uint64_t kv_index_ckpt_max_length(const struct kv_index *ix, uint64_t total_pages)
{
    return ix->ops->ckpt_max_length(ix, total_pages);
}

static inline int kv_index_ckpt_check(struct kv_index *ix, const struct kv_index_ckpt_head *h,
                                      const uint8_t *p, struct kv_index_ckpt_ctx *ctx, char *why,
                                      size_t why_len)
{
    return ix->ops->ckpt_check(ix, h, p, ctx, why, why_len);
}

static inline void kv_index_ckpt_install(struct kv_index *ix, const struct kv_index_ckpt_head *h,
                                         const uint8_t *p)
{
    ix->ops->ckpt_install(ix, h, p);
}

static inline uint32_t kv_index_check_pages(const struct kv_index *ix)
{
    return ix->ops->check_pages(ix);
}

static inline int kv_index_check_page(struct kv_index *ix, uint32_t p,
                                      const struct kv_index_entry **ents, uint32_t *n,
                                      uint32_t *ppn, uint32_t *bytes, char *err, size_t err_len)
{
    return ix->ops->check_page(ix, p, ents, n, ppn, bytes, err, err_len);
}

#endif
