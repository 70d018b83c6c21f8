/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hash index: 64-bit key hash -> blob location.
 *
 * Two levels, as an extendible hash: a DRAM directory indexed by the top
 * global_depth bits of the hash names an index page; each index page is
 * an open-addressing table of 16-byte entries { hash, location } that
 * lives in NAND and is cached in DRAM (index_cache.c). A page that fills
 * past 7/8 splits on the next hash bit. Collisions of the full 64-bit hash
 * are resolved by comparing the key stored in the blob.
 */
#ifndef KVFTL_INDEX_H
#define KVFTL_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kvftl/kvftl.h>
#include <xxhash.h>

struct space;
struct value_log;

#define INDEX_PAGE_MAGIC 0x58444e49u /* "INDX" */
#define INDEX_NO_PAGE UINT32_MAX
#define INDEX_MAX_DEPTH 30
/*
 * Directory bound: the global depth never exceeds
 * ceil(log2(index pages)) + INDEX_DEPTH_SLACK. Under a hash the guest cannot
 * predict, a page that deep would need a region of 1/(16 x pages) of the hash
 * space to hold more than a page's split threshold (217 entries at 4 KiB,
 * against about 16 expected): it does not happen. Keys chosen to share their
 * top hash bits hit it after a few splits, so the directory stays at most
 * 2^(INDEX_DEPTH_SLACK+1) = 32 entries (128 bytes) per index page.
 */
#define INDEX_DEPTH_SLACK 4

struct index_entry {
    uint64_t hash;   /* never 0 (0 is remapped to 1) */
    uint64_t loc;    /* 0 = empty slot */
};

struct index_page_header {
    uint32_t magic;
    uint32_t page_id;
    uint32_t count;
    uint32_t local_depth;
};

struct index_frame {
    uint8_t *mem;        /* index page bytes */
    uint32_t page_id;    /* INDEX_NO_PAGE when free */
    uint32_t lru_prev, lru_next;
    bool dirty;
    uint64_t stamp;      /* cache clock when last moved to the front */
};

typedef uint64_t (*index_hash_fn)(const void *key, size_t len);

struct index {
    struct space *sp;        /* index pages are written to its index stream */
    struct value_log *vl;    /* a hash match is confirmed by the key in the blob */
    uint64_t cfg_seed;       /* cfg hash_seed: every new index uses it if not 0 */
    uint64_t nand_bytes;     /* NAND bytes of live index pages */
    struct index_entry *scratch; /* one page's entries (page splits, the iterator's candidates) */
    index_hash_fn hash;      /* a test's injected hash, or NULL: XXH3 seeded with hash_seed */
    uint64_t hash_seed;      /* secret per index (index_reset); kept in the checkpoint */
    uint32_t page_bytes;
    uint32_t slots;          /* entries per page */
    uint32_t split_at;       /* split when count would exceed this */

    uint32_t global_depth;
    uint32_t *dir;           /* 2^global_depth page ids */

    uint32_t npages, pages_cap;
    uint32_t *page_ppn; /* NAND page of the newest written copy, UINT32_MAX if never written */
    uint32_t *page_frame; /* cache frame, UINT32_MAX if not cached */
    uint8_t *page_depth; /* local depth */

    struct index_frame *frames;
    uint32_t nframes, frames_cap, frames_max;
    uint8_t **chunks; /* frame memory, 2 MiB at a time */
    uint32_t chunks_cap;
    uint64_t chunk_bytes;
    uint32_t prefault_from_chunk; /* INDEX_PREFAULT_FROM_CHUNK (index_cache.h); tests lower it */
    uint8_t *write_tmp; /* page-sized staging when index pages are smaller than NAND pages */
    uint32_t lru_head, lru_tail; /* head = most recently used */
    bool lru_sorted; /* the list is in LRU order (from the first eviction on) */
    uint32_t pinned; /* page id that must not be evicted, or INDEX_NO_PAGE */

    /* index stream: the open stripe index pages are written to */

    /* pm983: told after page @page_id's new copy is programmed (NULL for the hash design) */
    void (*page_moved)(struct index *ix, uint32_t page_id, uint64_t *now_ns);

    uint64_t clock; /* cache accesses */
    uint64_t hits, misses, evicted_dirty, pages_written;
};

/* index_page_entries() - the slots of the index page at @mem, after its header. */
static inline const struct index_entry *index_page_entries(const uint8_t *mem)
{
    return (const struct index_entry *)(mem + sizeof(struct index_page_header));
}

/* Position of an entry found by index_find(). */
struct index_pos {
    uint32_t page_id;
    uint32_t slot;
};

/*
 * index_hash() - the key's 64-bit hash, never 0. XXH3 seeded with a secret
 * the guest never sees: keys cannot be chosen offline to share index pages.
 */
/* The slot a hash's linear probe starts from in its index page. */
static inline uint32_t index_home_slot(const struct index *ix, uint64_t hash)
{
    return (uint32_t)(((uint64_t)(uint32_t)hash * ix->slots) >> 32);
}

static inline uint64_t index_hash(const struct index *ix, const void *key, uint32_t len)
{
    uint64_t h = ix->hash ? ix->hash(key, len) : XXH3_64bits_withSeed(key, len, ix->hash_seed);
    return h ? h : 1;
}

/* index_depth_limit() - the largest global depth allowed with @npages index pages. */
static inline uint32_t index_depth_limit(uint32_t npages)
{
    uint32_t log2_ceil = npages <= 1 ? 0 : 32 - (uint32_t)__builtin_clz(npages - 1);
    uint32_t d = log2_ceil + INDEX_DEPTH_SLACK;
    return d < INDEX_MAX_DEPTH ? d : INDEX_MAX_DEPTH;
}

/*
 * index_new_seed() - a fresh secret from getrandom() (glib's generator if the
 * kernel has none): every new or rebuilt index gets one.
 */
uint64_t index_new_seed(void);

/*
 * index_set_seed_for_test() - hash an empty index with @seed instead of its
 * secret (tests that generate colliding keys); the next index_reset() draws
 * a new secret again.
 */
void index_set_seed_for_test(struct index *ix, uint64_t seed);

/* index_page_cached() - is the index page for @hash in DRAM? */
static inline bool index_page_cached(const struct index *ix, uint64_t hash)
{
    uint32_t d = ix->global_depth ? (uint32_t)(hash >> (64 - ix->global_depth)) : 0;
    return ix->page_frame[ix->dir[d]] != UINT32_MAX;
}

/*
 * index_init() - an index of @cfg's index page size, whose pages go to
 * @sp's index stream and whose keys are read from the blobs of @vl.
 */
void index_init(struct index *ix, struct space *sp, struct value_log *vl,
                const struct kvftl_config *cfg);
void index_fini(struct index *ix);
/*
 * index_reset() - an empty index (one empty page) under a new secret seed
 * (cfg.hash_seed if set), all cached pages dropped.
 */
void index_reset(struct index *ix);

/*
 * index_find() - look @key up. Returns true with its location in *@loc
 * (tombstones included) and its position in *@pos. Reading a blob's key
 * to resolve a hash match and loading an uncached page advance *@now_ns.
 */
bool index_find(struct index *ix, uint64_t hash, const void *key, uint32_t key_bytes, uint64_t *loc,
                struct index_pos *pos, uint64_t *now_ns);

/*
 * index_find_record() - index_find() for a caller that reads the record it
 * finds next (a Retrieve): *@record returns the found blob's bytes as the
 * key check viewed them (vlog_key_matches()), for vlog_read_record(); NULL
 * when the key check read only the header and key. Unlike index_find() it
 * does not hint the home slot first: its callers did (index_prefetch()).
 */
bool index_find_record(struct index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                       uint64_t *loc, struct index_pos *pos, uint64_t *now_ns,
                       const uint8_t **record);

/*
 * Software pipelining of lookups (kvftl_retrieve_batch): neither changes
 * any state, simulated time or statistics; both see only cached pages.
 * index_prefetch() starts loading @hash's home slot and its page's cache
 * frame record. index_peek() returns
 * the location of the first entry near the home slot whose hash is @hash
 * (not key-checked; 0 if none or the page is not cached).
 */
void index_prefetch(const struct index *ix, uint64_t hash);
/*
 * index_prefetch_for_update() - a Store's loads: the home slot, the page
 * header (its count, which index_reserve() reads) and the cache frame's
 * record (its LRU stamp), all started at once. Changes nothing.
 */
void index_prefetch_for_update(const struct index *ix, uint64_t hash);
uint64_t index_peek(const struct index *ix, uint64_t hash);

/* index_find_loc() - position of the entry with exactly (@hash, @loc); no key reads. */
bool index_find_loc(struct index *ix, uint64_t hash, uint64_t loc, struct index_pos *pos,
                    uint64_t *now_ns);

/* index_set() - overwrite the location at @pos (from a find with no index change since). */
void index_set(struct index *ix, const struct index_pos *pos, uint64_t loc, uint64_t *now_ns);

/*
 * index_reserve() - make room for one more entry of @hash: split its page
 * (on the next hash bit, as often as needed) until the page holding @hash
 * is at most split_at - 1 full. Returns 0, or -1 if a split is refused: the
 * page is at INDEX_MAX_DEPTH, or it would double the directory past
 * index_depth_limit(). Splits already made stay (the index is valid either
 * way); no entry is added or lost. A Store calls it before its blob goes to
 * the log, so a refused Store leaves nothing there.
 */
int index_reserve(struct index *ix, uint64_t hash, uint64_t *now_ns);

/*
 * index_add() - add a new entry for @hash. Only after a successful
 * index_reserve() of the same hash with no entry added since (finds, sets,
 * removes and cache traffic in between are fine).
 */
void index_add(struct index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns);

/* index_insert() - index_reserve() then index_add(). Returns 0, or -1 (nothing added). */
int index_insert(struct index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns);

/* index_remove() - delete the entry at @pos. */
void index_remove(struct index *ix, const struct index_pos *pos, uint64_t *now_ns);

/* index_page_range() - first hash and last hash covered by the page at directory slot of @hash. */
uint32_t index_page_of(const struct index *ix, uint64_t hash, uint64_t *first, uint64_t *last);

/* index_host_bytes() - host memory the index uses now (directory, tables, cached pages). */
uint64_t index_host_bytes(const struct index *ix);

#endif
