/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pm983 design's answers to the index seam (pm983_index.h): a local
 * index in DRAM over the hash design's global index (ix->hash).
 */
#include "pm983_index.h"

#include <glib.h>
#include <string.h>

#include "index_cache.h"
#include "kv_index.h"
#include "nand.h"
#include "space.h"
#include "value_log.h"

/*
 * The local index holds the keys of the page buffer: "Once the indexing
 * information for a key is merged in the global/main index, the KVP is
 * programmed on NAND flash pages" (characterization paper, Sec. II), so
 * it covers the pairs of buffer_entries pages at the PM983's smallest pair
 * of 1 KiB ("KVPs are internally limited to a 1KB minimum size", Sec. III).
 */
#define PM983_MIN_PAIR_BYTES 1024u

static struct pm983_local *local_of(struct kv_index *ix)
{
    return &ix->pm983;
}

static uint32_t local_home(const struct pm983_local *l, uint64_t hash)
{
    return (uint32_t)(hash ^ (hash >> 29)) & (l->cap - 1);
}

/* The slot of @hash in the local index, or UINT32_MAX. DRAM only. */
static uint32_t local_find(const struct pm983_local *l, uint64_t hash)
{
    uint32_t i = local_home(l, hash);
    for (uint32_t n = 0; n < l->cap && l->op[i] != PM983_EMPTY; n++) {
        if (l->hash[i] == hash) {
            return i;
        }
        i = (i + 1) & (l->cap - 1);
    }
    return UINT32_MAX;
}

static void local_put(struct pm983_local *l, uint64_t hash, uint64_t loc, enum pm983_op op)
{
    uint32_t i = local_home(l, hash);
    while (l->op[i] != PM983_EMPTY && l->hash[i] != hash) {
        i = (i + 1) & (l->cap - 1);
    }
    if (l->op[i] == PM983_EMPTY) {
        l->count++;
    }
    l->hash[i] = hash;
    l->loc[i] = loc;
    l->op[i] = (uint8_t)op;
}

/* The signature prefix the directory bound groups by: its top pend_depth bits, + 1. */
static uint64_t pend_key(const struct pm983_local *l, uint64_t hash)
{
    return (hash >> (64 - l->pend_depth)) + 1;
}

/* The slot of @key in the admission map (its own, or the empty one it would take). */
static uint32_t pend_slot(const struct pm983_local *l, uint64_t key)
{
    uint32_t i = (uint32_t)(key ^ (key >> 29)) * 2654435761u & (l->cap - 1);
    while (l->pend_prefix[i] && l->pend_prefix[i] != key) {
        i = (i + 1) & (l->cap - 1);
    }
    return i;
}

/* Forget the admissions (after a merge) under the bound @x allows now. */
static void pend_clear(struct pm983_local *l, const struct index *x)
{
    memset(l->pend_prefix, 0, (size_t)l->cap * sizeof(*l->pend_prefix));
    memset(l->pend_n, 0, (size_t)l->cap * sizeof(*l->pend_n));
    l->pend_used = 0;
    l->pend_depth = index_depth_limit(x->npages + 1);
}

/*
 * The slot of the first entry of the index page entries @e whose signature
 * is @hash, by the hash design's linear probe from the home slot: true with
 * it in *@slot, false at an empty slot or after every slot.
 */
static bool page_probe(const struct index *x, const struct index_entry *e, uint64_t hash,
                       uint32_t *slot)
{
    uint32_t i = index_home_slot(x, hash);
    for (uint32_t n = 0; n < x->slots && e[i].loc; n++) {
        if (e[i].hash == hash) {
            *slot = i;
            return true;
        }
        i = i + 1 == x->slots ? 0 : i + 1;
    }
    return false;
}

/*
 * The global entry whose signature is @hash (no key read): true with its
 * position. The walk reads each level whose page is not cached.
 */
static bool global_find(struct kv_index *ix, uint64_t hash, struct index_pos *pos, uint64_t *loc,
                        uint64_t *now_ns)
{
    struct index *x = &ix->hash.idx;
    uint64_t first, last;
    pm983_levels_walk(ix, hash, now_ns);
    uint32_t pid = index_page_of(x, hash, &first, &last);
    const struct index_entry *e = index_page_entries(index_cache_get(x, pid, now_ns));
    uint32_t i;
    if (!page_probe(x, e, hash, &i)) {
        return false;
    }
    *pos = (struct index_pos){pid, i};
    *loc = e[i].loc;
    return true;
}

/* The same look-up in the page's bytes as they are, without the cache, its clock or time. */
static bool global_peek(const struct index *x, uint64_t hash, uint64_t *loc)
{
    uint64_t first, last;
    const uint8_t *mem = index_page_peek(x, index_page_of(x, hash, &first, &last));
    if (!mem) {
        return false;
    }
    const struct index_entry *e = index_page_entries(mem);
    uint32_t i;
    if (!page_probe(x, e, hash, &i)) {
        return false;
    }
    *loc = e[i].loc;
    return true;
}

/* One local entry into the global index: false if its page could not take it. */
static bool merge_one(struct kv_index *ix, uint64_t hash, uint64_t loc, enum pm983_op op,
                      uint64_t *now_ns)
{
    struct index *x = &ix->hash.idx;
    struct index_pos pos;
    uint64_t old, first, last;
    bool found = global_find(ix, hash, &pos, &old, now_ns);
    if (op == PM983_REMOVE) {
        if (found) {
            index_remove(x, &pos, now_ns);
        }
        return true;
    }
    if (found) {
        index_set(x, &pos, loc, now_ns);
        return true;
    }
    uint32_t gd0 = x->global_depth, np0 = x->npages;
    uint32_t ld0 = x->page_depth[index_page_of(x, hash, &first, &last)];
    int rc = index_reserve(x, hash, now_ns);
    if (x->npages != np0) {
        pm983_levels_changed(ix, hash, gd0, ld0, now_ns); /* splits, even if refused later */
    }
    if (rc != 0) {
        return false;
    }
    index_add(x, hash, loc, now_ns);
    return true;
}

/* Local slots by ascending signature (@ctx: the local index's signatures). */
static int by_signature(const void *a, const void *b, void *ctx)
{
    const uint64_t *h = ctx;
    uint64_t x = h[*(const uint32_t *)a], y = h[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

/*
 * Merge every local entry into the global index, on *@now_ns, in ascending
 * signature order: a leaf holds one signature range (index_page_of()), so
 * the batch meets each leaf once, one read and one dirtying, as a merge of
 * two sorted indexes does, and a DRAM budget of a few frames does not
 * re-read a leaf for each of its entries. Each entry walks the levels
 * (pm983_levels.c) and its leaf, reading what is not cached. The Store
 * that finds the local index full waits for all of it, as the sources say
 * (pm983_index.h). Bound: at most L reads per entry (its walk), each load
 * evicting at most one page (one program), and one program per leaf a
 * split creates; in signature order, at most one leaf read per leaf
 * touched. One merge of max entries: at most max x L reads and max x L
 * programs plus one per leaf created; a directory doubling marks its
 * pages dirty and costs none. The pm983 preset (max 4,096; 32 KiB index
 * pages, E = 2,048: L = 1 to about 2 million keys, 2 to a few billion):
 * at most 8,192 reads and 8,192 programs, plus splits.
 * An entry a page refused (a split past the directory bound) stays local.
 */
static void merge(struct kv_index *ix, uint64_t *now_ns)
{
    struct pm983_local *l = local_of(ix);
    if (!l->count) {
        if (l->pend_used) {
            pend_clear(l, &ix->hash.idx); /* admissions whose Stores failed after them */
        }
        return;
    }
    uint32_t kept = 0;
    struct index *x = &ix->hash.idx;
    const struct nand *nd = x->sp->nand;
    uint64_t reads0 = nd->pages_read, progs0 = nd->pages_programmed, leaves0 = x->npages;
    uint64_t *kh = g_new(uint64_t, l->count), *kl = g_new(uint64_t, l->count);
    uint8_t *ko = g_new(uint8_t, l->count);
    uint32_t *order = g_new(uint32_t, l->count), n = 0;
    for (uint32_t i = 0; i < l->cap && n < l->count; i++) {
        if (l->op[i] != PM983_EMPTY) {
            order[n++] = i;
        }
    }
    g_qsort_with_data(order, (gint)n, sizeof(*order), by_signature, l->hash);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        if (!merge_one(ix, l->hash[i], l->loc[i], l->op[i], now_ns)) {
            kh[kept] = l->hash[i];
            kl[kept] = l->loc[i];
            ko[kept++] = l->op[i];
        } else {
            l->merged++;
        }
    }
    g_free(order);
    memset(l->op, 0, l->cap);
    l->count = 0;
    pend_clear(l, x);
    for (uint32_t k = 0; k < kept; k++) {
        local_put(l, kh[k], kl[k], ko[k]);
    }
    g_free(kh);
    g_free(kl);
    g_free(ko);
    l->merges++;
    uint64_t reads = nd->pages_read - reads0;
    uint64_t progs = nd->pages_programmed - progs0, made = x->npages - leaves0;
    progs = progs > made ? progs - made : 0;
    l->merge_reads_max = reads > l->merge_reads_max ? reads : l->merge_reads_max;
    l->merge_programs_max = progs > l->merge_programs_max ? progs : l->merge_programs_max;
}

static void pm983_init(struct kv_index *ix, struct space *sp, struct value_log *vl,
                       const struct kvftl_config *cfg)
{
    hash_index_ops.init(ix, sp, vl, cfg);
    pm983_levels_init(ix, cfg);
    struct pm983_local *l = local_of(ix);
    uint32_t per_page = cfg->page_size_bytes / PM983_MIN_PAIR_BYTES;
    l->max = cfg->buffer_entries * (per_page ? per_page : 1);
    l->cap = 16;
    while (l->cap < 2 * l->max) {
        l->cap *= 2;
    }
    l->hash = g_new0(uint64_t, l->cap);
    l->loc = g_new0(uint64_t, l->cap);
    l->op = g_new0(uint8_t, l->cap);
    l->pend_prefix = g_new0(uint64_t, l->cap);
    l->pend_n = g_new0(uint32_t, l->cap);
    pend_clear(l, &ix->hash.idx);
}

static void pm983_fini(struct kv_index *ix)
{
    struct pm983_local *l = local_of(ix);
    g_free(l->hash);
    g_free(l->loc);
    g_free(l->op);
    g_free(l->pend_prefix);
    g_free(l->pend_n);
    pm983_levels_fini(ix);
    hash_index_ops.fini(ix);
}

static void pm983_reset(struct kv_index *ix)
{
    struct pm983_local *l = local_of(ix);
    memset(l->op, 0, l->cap);
    l->count = 0;
    hash_index_ops.reset(ix);
    pm983_levels_reset(ix);
    pend_clear(l, &ix->hash.idx);
}

static uint64_t pm983_hash(const struct kv_index *ix, const void *key, uint32_t key_bytes)
{
    return hash_index_ops.hash(ix, key, key_bytes);
}

static void pm983_prefetch(const struct kv_index *ix, uint64_t hash, bool for_update)
{
    const struct pm983_local *l = &ix->pm983;
    __builtin_prefetch(&l->op[local_home(l, hash)]);
    if (!for_update) {
        hash_index_ops.prefetch(ix, hash, false);
    }
}

static uint64_t pm983_peek(const struct kv_index *ix, uint64_t hash)
{
    const struct pm983_local *l = &ix->pm983;
    uint32_t i = local_find(l, hash);
    if (i != UINT32_MAX) {
        return l->op[i] == PM983_SET ? l->loc[i] : 0;
    }
    return hash_index_ops.peek(ix, hash);
}

/*
 * A Store's membership check by signature ("key hashing, membership
 * checking, and merging of the local and global index have to be executed
 * for each key"): the local index in DRAM, then the global entry's bytes as
 * they stand. No flash read is charged: the global page is read, and paid
 * for, by the merge that applies the Store.
 */
static bool pm983_find(struct kv_index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                       uint64_t *loc, struct kv_index_pos *pos, uint64_t *now_ns)
{
    struct pm983_local *l = local_of(ix);
    l->probes += now_ns != NULL;
    *pos = kv_index_pos_of_hash(hash);
    uint32_t i = local_find(l, hash);
    if (i != UINT32_MAX) {
        *loc = l->loc[i];
        return l->op[i] == PM983_SET;
    }
    return global_peek(&ix->hash.idx, hash, loc);
}

/*
 * A read's: the local index, the key confirmed in its blob (which is in
 * the page buffer or flash), then the hash design's look-up in the global
 * index (Bloom filter, index page, key check).
 */
static bool pm983_lookup(struct kv_index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                         uint64_t *loc, struct kv_index_pos *pos, uint64_t *now_ns,
                         const uint8_t **record, bool *filtered)
{
    struct pm983_local *l = local_of(ix);
    l->probes += now_ns != NULL;
    uint32_t i = local_find(l, hash);
    if (i == UINT32_MAX) {
        /* the hash design's look-up, each level above the leaf walked first */
        struct hash_index *h = &ix->hash;
        *pos = kv_index_pos_of_hash(hash);
        if (h->bloom_on && !index_page_cached(&h->idx, hash) && !bloom_maybe(&h->bloom, hash)) {
            *filtered = true;
            return false;
        }
        pm983_levels_walk(ix, hash, now_ns);
        struct index_pos p;
        return index_find_record(&h->idx, hash, key, key_bytes, loc, &p, now_ns, record);
    }
    *pos = kv_index_pos_of_hash(hash);
    if (l->op[i] != PM983_SET) {
        return false;
    }
    *loc = l->loc[i];
    const uint8_t *view = NULL;
    bool match = vlog_key_matches(ix->hash.idx.vl, *loc, key, key_bytes, now_ns, &view);
    if (record) {
        *record = match ? view : NULL;
    }
    return match;
}

/*
 * Will the merge take one more new key of @hash? The hash design refuses a
 * split past its directory bound (index_depth_limit()), so a leaf at the
 * bound's depth holds at most split_at entries: the keys sharing @hash's
 * top pend_depth bits, in the global index and admitted since the last
 * merge, must stay within that, or the merge could not place the entry of
 * a Store already acknowledged. The leaf's entry count decides without a
 * look at its entries unless it is nearly full; then they are counted.
 * DRAM and host work only, no device time: natural keys under the secret
 * seed (odds of a prefix holding split_at keys: nil) never get a refusal,
 * chosen keys get Capacity Exceeded as under the hash design.
 */
static bool admit(struct pm983_local *l, const struct index *x, uint64_t hash)
{
    uint64_t key = pend_key(l, hash), first, last;
    uint32_t slot = pend_slot(l, key), pending = l->pend_prefix[slot] ? l->pend_n[slot] : 0;
    const uint8_t *mem = index_page_peek(x, index_page_of(x, hash, &first, &last));
    uint32_t have = mem ? ((const struct index_page_header *)mem)->count : 0;
    if (have + pending + 1 > x->split_at) {
        if (mem) { /* a leaf never written holds nothing: the admissions alone decide */
            const struct index_entry *e = index_page_entries(mem);
            l->admit_reads++;
            have = 0;
            for (uint32_t i = 0; i < x->slots; i++) {
                have += e[i].loc && pend_key(l, e[i].hash) == key;
            }
        }
        if (have + pending + 1 > x->split_at) {
            return false;
        }
    }
    l->pend_used += !l->pend_prefix[slot];
    l->pend_prefix[slot] = key;
    l->pend_n[slot] = pending + 1;
    return true;
}

/*
 * Room for a new key: a full local index is merged first, on this Store's
 * time; then the merge to come must be able to place it (admit()).
 */
static int pm983_reserve(struct kv_index *ix, uint64_t hash, uint64_t *now_ns)
{
    struct pm983_local *l = local_of(ix);
    if (local_find(l, hash) != UINT32_MAX) {
        return 0;
    }
    /*
     * A full local index is merged; so is a full admission map, which only
     * Stores refused after their admission (a full device) leave fuller
     * than the local index: it holds at most max prefixes of cap slots.
     */
    if (l->count >= l->max || l->pend_used >= l->max) {
        merge(ix, now_ns);
    }
    if (l->count >= l->max || !admit(l, &ix->hash.idx, hash)) {
        return -1;
    }
    return 0;
}

static void pm983_add(struct kv_index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns)
{
    local_put(local_of(ix), hash, loc, PM983_SET);
    if (ix->hash.bloom_on && !loc_tombstone(loc)) {
        bloom_add(&ix->hash.bloom, hash);
    }
}

static void pm983_set(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t loc,
                      uint64_t *now_ns)
{
    uint64_t hash = kv_index_pos_hash(pos);
    struct pm983_local *l = local_of(ix);
    if (local_find(l, hash) == UINT32_MAX && l->count >= l->max) {
        merge(ix, now_ns);
    }
    pm983_add(ix, hash, loc, now_ns);
}

static void pm983_remove(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t *now_ns)
{
    uint64_t hash = kv_index_pos_hash(pos);
    struct pm983_local *l = local_of(ix);
    if (local_find(l, hash) == UINT32_MAX && l->count >= l->max) {
        merge(ix, now_ns);
    }
    local_put(l, hash, 0, PM983_REMOVE);
}

/*
 * GC validity: the local index decides a key it holds (its search is one
 * probe, as every GC index search is), the global index the others.
 */
static bool pm983_find_loc(struct kv_index *ix, uint64_t hash, uint64_t loc,
                           struct kv_index_pos *pos, uint64_t *now_ns)
{
    struct pm983_local *l = local_of(ix);
    l->probes += now_ns != NULL;
    *pos = kv_index_pos_of_hash(hash);
    uint32_t i = local_find(l, hash);
    if (i != UINT32_MAX) {
        return l->op[i] == PM983_SET && l->loc[i] == loc;
    }
    struct index_pos p;
    pm983_levels_walk(ix, hash, now_ns);
    return index_find_loc(&ix->hash.idx, hash, loc, &p, now_ns);
}

static int pm983_page_relocate(struct kv_index *ix, uint64_t ppn, uint32_t tag, uint64_t *now_ns)
{
    if (tag & PM983_DIR_TAG) {
        return pm983_levels_relocate(ix, ppn, tag, now_ns);
    }
    return hash_index_ops.page_relocate(ix, ppn, tag, now_ns);
}

/* The prefix walk reads the global index: the local one is merged first. */
static void pm983_walk(struct kv_index *ix, uint64_t from, const struct kv_index_entry **ents,
                       uint32_t *n, uint64_t *last, uint64_t *now_ns)
{
    merge(ix, now_ns);
    pm983_levels_walk(ix, from, now_ns);
    hash_index_ops.walk(ix, from, ents, n, last, now_ns);
}

static int pm983_write_back(struct kv_index *ix, uint64_t *now_ns)
{
    merge(ix, now_ns);
    if (local_of(ix)->count || hash_index_ops.write_back(ix, now_ns) != 0) {
        return -1;
    }
    return pm983_levels_write_back(ix, now_ns);
}

static void pm983_settle(struct kv_index *ix, uint64_t *now_ns)
{
    merge(ix, now_ns);
}

static void pm983_rebuilt(struct kv_index *ix)
{
    uint64_t now = 0; /* a mount's work: no command waits on it */
    merge(ix, &now);
    pend_clear(local_of(ix), &ix->hash.idx); /* the bound of the pages installed or scanned */
    hash_index_ops.rebuilt(ix);
}

static uint64_t pm983_nand_bytes(const struct kv_index *ix)
{
    return hash_index_ops.nand_bytes(ix) + ix->pm983.lv.nand_bytes;
}

static uint64_t pm983_host_bytes(const struct kv_index *ix)
{
    return hash_index_ops.host_bytes(ix) + (uint64_t)ix->pm983.cap * (3 * sizeof(uint64_t) + 5) +
           pm983_levels_host_bytes(ix);
}

static void pm983_counters(const struct kv_index *ix, struct kv_index_counters *c)
{
    const struct pm983_levels *lv = &ix->pm983.lv;
    hash_index_ops.counters(ix, c);
    c->cache_hits += lv->hits + ix->pm983.probes;
    c->cache_misses += lv->misses;
    c->pages_evicted_dirty += lv->evicted_dirty;
}

const struct kv_index_ops pm983_index_ops = {
    .init = pm983_init,
    .fini = pm983_fini,
    .reset = pm983_reset,
    .hash = pm983_hash,
    .prefetch = pm983_prefetch,
    .peek = pm983_peek,
    .find = pm983_find,
    .lookup = pm983_lookup,
    .reserve = pm983_reserve,
    .add = pm983_add,
    .set = pm983_set,
    .remove = pm983_remove,
    .find_loc = pm983_find_loc,
    .page_relocate = pm983_page_relocate,
    .walk = pm983_walk,
    .write_back = pm983_write_back,
    .settle = pm983_settle,
    .rebuilt = pm983_rebuilt,
    .nand_bytes = pm983_nand_bytes,
    .host_bytes = pm983_host_bytes,
    .counters = pm983_counters,
    .ckpt_save = pm983_ckpt_save,
    .ckpt_length = pm983_ckpt_length,
    .ckpt_max_length = pm983_ckpt_max_length,
    .ckpt_check = pm983_ckpt_check,
    .ckpt_install = pm983_ckpt_install,
    .check_pages = pm983_check_pages,
    .check_page = pm983_check_page,
};
