/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hash design's answers to the index seam (kv_index.h), over index.c, index_cache.c, bloom.c.
 */
#include "hash_index.h"

#include <stdlib.h>
#include <string.h>

#include "index_cache.h"
#include "kv_index.h"
#include "nand.h"
#include "space.h"
#include "value_log.h"

static struct index *idx_of(struct kv_index *ix)
{
    return &ix->hash.idx;
}

static void hash_init(struct kv_index *ix, struct space *sp, struct value_log *vl,
                      const struct kvftl_config *cfg)
{
    struct hash_index *h = &ix->hash;
    /* DRAM budget: the Bloom filter first (at most 1/8 of it), index pages in the rest */
    uint64_t bloom_b = 0;
    h->bloom_on = cfg->bloom && cfg->command_set != KVFTL_CMDSET_NVM; /* no keys to filter on nvm */
    if (h->bloom_on) {
        bloom_b = cfg->max_keys * cfg->bloom_bits_per_key / 8;
        uint64_t cap = cfg->index_dram_bytes / 8;
        bloom_b = bloom_b > cap ? cap : bloom_b;
        bloom_b = bloom_b < 64 ? 64 : bloom_b & ~63ull;
        bloom_init(&h->bloom, bloom_b, cfg->bloom_bits_per_key);
    }
    index_init(&h->idx, sp, vl, cfg);
    uint64_t frames = (cfg->index_dram_bytes - bloom_b) / cfg->index_page_bytes;
    h->idx.frames_max = frames > UINT32_MAX ? UINT32_MAX : (uint32_t)(frames < 2 ? 2 : frames);
}

static void hash_fini(struct kv_index *ix)
{
    index_fini(&ix->hash.idx);
    if (ix->hash.bloom_on) {
        bloom_fini(&ix->hash.bloom);
    }
}

static void hash_reset(struct kv_index *ix)
{
    index_reset(&ix->hash.idx);
    if (ix->hash.bloom_on) {
        bloom_clear(&ix->hash.bloom);
    }
}

static uint64_t hash_hash(const struct kv_index *ix, const void *key, uint32_t key_bytes)
{
    return index_hash(&ix->hash.idx, key, key_bytes);
}

static void hash_prefetch(const struct kv_index *ix, uint64_t hash, bool for_update)
{
    if (!for_update) {
        index_prefetch(&ix->hash.idx, hash);
        return;
    }
    index_prefetch_for_update(&ix->hash.idx, hash);
    if (ix->hash.bloom_on) {
        bloom_prefetch(&ix->hash.bloom, hash);
    }
}

static uint64_t hash_peek(const struct kv_index *ix, uint64_t hash)
{
    return index_peek(&ix->hash.idx, hash);
}

static bool hash_find(struct kv_index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                      uint64_t *loc, struct kv_index_pos *pos, uint64_t *now_ns)
{
    struct index_pos p;
    bool found = index_find(idx_of(ix), hash, key, key_bytes, loc, &p, now_ns);
    *pos = (struct kv_index_pos){p.page_id, p.slot, 0};
    return found;
}

static bool hash_lookup(struct kv_index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                        uint64_t *loc, struct kv_index_pos *pos, uint64_t *now_ns,
                        const uint8_t **record, bool *filtered)
{
    struct hash_index *h = &ix->hash;
    /*
     * A cached index page answers absence without flash reads by itself; the
     * Bloom filter is consulted when the page would have to be read from NAND.
     */
    if (h->bloom_on && !index_page_cached(&h->idx, hash) && !bloom_maybe(&h->bloom, hash)) {
        *filtered = true;
        return false;
    }
    struct index_pos p;
    bool found = index_find_record(&h->idx, hash, key, key_bytes, loc, &p, now_ns, record);
    *pos = (struct kv_index_pos){p.page_id, p.slot, 0};
    return found;
}

static int hash_reserve(struct kv_index *ix, uint64_t hash, uint64_t *now_ns)
{
    return index_reserve(idx_of(ix), hash, now_ns);
}

static void hash_add(struct kv_index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns)
{
    index_add(idx_of(ix), hash, loc, now_ns);
    if (ix->hash.bloom_on && !loc_tombstone(loc)) {
        bloom_add(&ix->hash.bloom, hash);
    }
}

/* The hash of the entry at @pos, without touching the cache's clock or counters. */
static uint64_t hash_of_pos(struct kv_index *ix, const struct kv_index_pos *pos)
{
    return index_page_entries(index_page_peek(idx_of(ix), pos->a))[pos->b].hash;
}

static void hash_set(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t loc,
                     uint64_t *now_ns)
{
    index_set(idx_of(ix), &(struct index_pos){pos->a, pos->b}, loc, now_ns);
    /* a Store over a tombstone: the filter holds live keys only (hash_rebuilt()) */
    if (ix->hash.bloom_on && !loc_tombstone(loc)) {
        bloom_add(&ix->hash.bloom, hash_of_pos(ix, pos));
    }
}

static void hash_remove(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t *now_ns)
{
    index_remove(idx_of(ix), &(struct index_pos){pos->a, pos->b}, now_ns);
}

static bool hash_find_loc(struct kv_index *ix, uint64_t hash, uint64_t loc,
                          struct kv_index_pos *pos, uint64_t *now_ns)
{
    struct index_pos p;
    bool found = index_find_loc(idx_of(ix), hash, loc, &p, now_ns);
    *pos = (struct kv_index_pos){p.page_id, p.slot, 0};
    return found;
}

static int hash_page_relocate(struct kv_index *ix, uint64_t ppn, uint32_t tag, uint64_t *now_ns)
{
    struct index *x = idx_of(ix);
    if (tag >= x->npages || x->page_ppn[tag] != ppn) {
        return 0; /* an older copy of the page */
    }
    struct nand *n = x->sp->nand;
    *now_ns = nand_read(n, ppn, x->page_bytes, *now_ns);
    return index_page_write(x, tag, nand_page_ptr(n, ppn), now_ns) == 0 ? 1 : -1;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct index_entry *x = a, *y = b;
    if (x->hash != y->hash) {
        return x->hash < y->hash ? -1 : 1;
    }
    return x->loc < y->loc ? -1 : x->loc > y->loc;
}

/* The chunk of the prefix walk is the index page holding @from. */
static void hash_walk(struct kv_index *ix, uint64_t from, const struct kv_index_entry **ents,
                      uint32_t *n, uint64_t *last, uint64_t *now_ns)
{
    struct index *x = idx_of(ix);
    uint64_t first;
    uint32_t pid = index_page_of(x, from, &first, last);
    const struct index_entry *e = index_page_entries(index_cache_get(x, pid, now_ns));
    struct index_entry *cand = x->scratch;
    *n = 0;
    for (uint32_t i = 0; i < x->slots; i++) {
        if (e[i].loc && !loc_tombstone(e[i].loc) && e[i].hash >= from) {
            cand[(*n)++] = e[i];
        }
    }
    qsort(cand, *n, sizeof(*cand), entry_cmp);
    _Static_assert(sizeof(struct index_entry) == sizeof(struct kv_index_entry), "one layout");
    *ents = (const struct kv_index_entry *)cand;
}

static int hash_write_back(struct kv_index *ix, uint64_t *now_ns)
{
    return index_cache_write_back(idx_of(ix), now_ns);
}

static void hash_settle(struct kv_index *ix, uint64_t *now_ns)
{
    (void)ix; /* nothing pending: every change is in the index pages */
    (void)now_ns;
}

/* The Bloom filter again from every live key of every index page (a mount). */
static void hash_rebuilt(struct kv_index *ix)
{
    struct hash_index *h = &ix->hash;
    if (!h->bloom_on) {
        return;
    }
    bloom_clear(&h->bloom);
    for (uint32_t p = 0; p < h->idx.npages; p++) {
        const uint8_t *mem = index_page_peek(&h->idx, p);
        if (!mem) {
            continue;
        }
        const struct index_entry *e = index_page_entries(mem);
        for (uint32_t i = 0; i < h->idx.slots; i++) {
            if (e[i].loc && !loc_tombstone(e[i].loc)) {
                bloom_add(&h->bloom, e[i].hash);
            }
        }
    }
}

static uint64_t hash_nand_bytes(const struct kv_index *ix)
{
    return ix->hash.idx.nand_bytes;
}

static uint64_t hash_host_bytes(const struct kv_index *ix)
{
    return index_host_bytes(&ix->hash.idx) + (ix->hash.bloom_on ? bloom_bytes(&ix->hash.bloom) : 0);
}

static void hash_counters(const struct kv_index *ix, struct kv_index_counters *c)
{
    c->cache_hits = ix->hash.idx.hits;
    c->cache_misses = ix->hash.idx.misses;
    c->pages_evicted_dirty = ix->hash.idx.evicted_dirty;
}

const struct kv_index_ops hash_index_ops = {
    .init = hash_init,
    .fini = hash_fini,
    .reset = hash_reset,
    .hash = hash_hash,
    .prefetch = hash_prefetch,
    .peek = hash_peek,
    .find = hash_find,
    .lookup = hash_lookup,
    .reserve = hash_reserve,
    .add = hash_add,
    .set = hash_set,
    .remove = hash_remove,
    .find_loc = hash_find_loc,
    .page_relocate = hash_page_relocate,
    .walk = hash_walk,
    .write_back = hash_write_back,
    .settle = hash_settle,
    .rebuilt = hash_rebuilt,
    .nand_bytes = hash_nand_bytes,
    .host_bytes = hash_host_bytes,
    .counters = hash_counters,
    .ckpt_save = hash_ckpt_save,
    .ckpt_length = hash_ckpt_length,
    .ckpt_max_length = hash_ckpt_max_length,
    .ckpt_check = hash_ckpt_check,
    .ckpt_install = hash_ckpt_install,
    .check_pages = hash_check_pages,
    .check_page = hash_check_page,
};
