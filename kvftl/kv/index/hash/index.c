/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hash index: extendible hash directory over open-addressing index pages. */
#include "index.h"

#include <string.h>
#include <sys/random.h>

#include <glib.h>
#include <kvftl/kvftl.h>
#include <xxhash.h>

#include "index_cache.h"
#include "value_log.h"

uint64_t index_new_seed(void)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
        seed = (uint64_t)g_random_int() << 32 | g_random_int();
    }
    return seed;
}

void index_set_seed_for_test(struct index *ix, uint64_t seed)
{
    ix->hash_seed = seed;
}

static inline struct index_page_header *page_hdr(uint8_t *mem)
{
    return (struct index_page_header *)mem;
}

static inline struct index_entry *page_entries(uint8_t *mem)
{
    return (struct index_entry *)index_page_entries(mem);
}

static inline uint32_t dir_slot(const struct index *ix, uint64_t hash)
{
    return ix->global_depth ? (uint32_t)(hash >> (64 - ix->global_depth)) : 0;
}

uint32_t index_page_of(const struct index *ix, uint64_t hash, uint64_t *first, uint64_t *last)
{
    uint32_t pid = ix->dir[dir_slot(ix, hash)];
    uint32_t ld = ix->page_depth[pid];
    if (ld == 0) {
        *first = 0;
        *last = UINT64_MAX;
    } else {
        uint64_t span_mask = UINT64_MAX >> ld;
        *first = hash & ~span_mask;
        *last = *first | span_mask;
    }
    return pid;
}

static void pages_reserve(struct index *ix, uint32_t n)
{
    if (n <= ix->pages_cap) {
        return;
    }
    uint32_t cap = ix->pages_cap ? ix->pages_cap : 16;
    while (cap < n) {
        cap *= 2;
    }
    ix->page_ppn = g_renew(uint32_t, ix->page_ppn, cap);
    ix->page_frame = g_renew(uint32_t, ix->page_frame, cap);
    ix->page_depth = g_renew(uint8_t, ix->page_depth, cap);
    ix->pages_cap = cap;
}

static uint32_t page_new(struct index *ix, uint32_t depth, uint64_t *now_ns)
{
    pages_reserve(ix, ix->npages + 1);
    uint32_t pid = ix->npages++;
    ix->page_ppn[pid] = UINT32_MAX;
    ix->page_frame[pid] = UINT32_MAX;
    ix->page_depth[pid] = (uint8_t)depth;
    uint8_t *mem = index_cache_new(ix, pid, now_ns);
    page_hdr(mem)->local_depth = depth;
    return pid;
}

void index_init(struct index *ix, struct space *sp, struct value_log *vl,
                const struct kvftl_config *cfg)
{
    memset(ix, 0, sizeof(*ix));
    ix->sp = sp;
    ix->vl = vl;
    ix->cfg_seed = cfg->hash_seed;
    ix->hash = NULL;
    ix->page_bytes = cfg->index_page_bytes;
    ix->slots = (ix->page_bytes - sizeof(struct index_page_header)) / sizeof(struct index_entry);
    ix->split_at = ix->slots / 8 * 7;
    ix->prefault_from_chunk = INDEX_PREFAULT_FROM_CHUNK;
    ix->pinned = INDEX_NO_PAGE;
    ix->lru_head = ix->lru_tail = UINT32_MAX;
    ix->scratch = g_new(struct index_entry, ix->slots);
}

void index_fini(struct index *ix)
{
    index_cache_drop(ix);
    g_free(ix->write_tmp);
    g_free(ix->dir);
    g_free(ix->page_ppn);
    g_free(ix->page_frame);
    g_free(ix->page_depth);
    g_free(ix->scratch);
    ix->scratch = NULL;
    ix->frames = NULL;
    ix->dir = NULL;
}

void index_reset(struct index *ix)
{
    uint64_t now = 0;
    ix->nand_bytes = 0;
    index_cache_drop(ix);
    ix->npages = 0;
    ix->global_depth = 0;
    g_free(ix->dir);
    ix->dir = g_new(uint32_t, 1);
    /* a new index, a new secret: nothing hashed under the old one remains */
    ix->hash_seed = ix->cfg_seed ? ix->cfg_seed : index_new_seed();
    ix->dir[0] = page_new(ix, 0, &now);
}

/*
 * The entries of @hash's index page if it is cached, else NULL. A cached
 * frame's memory follows from its number (frames are carved from 2 MiB
 * chunks), so this needs neither the frame record nor the LRU bookkeeping:
 * it reads nothing an in-flight miss would wait on, and changes nothing.
 */
static inline const struct index_entry *cached_entries(const struct index *ix, uint64_t hash)
{
    uint32_t f = ix->page_frame[ix->dir[dir_slot(ix, hash)]];
    if (f >= ix->frames_max) {
        return NULL;
    }
    uint32_t shift = 21 - (uint32_t)__builtin_ctz(ix->page_bytes); /* frames per 2 MiB chunk */
    uint32_t c = f >> shift;
    if (c >= ix->chunks_cap || !ix->chunks[c]) {
        return NULL;
    }
    uint8_t *m = ix->chunks[c] + ((size_t)(f & ((1u << shift) - 1)) << (21 - shift));
    return page_entries(m);
}

void index_prefetch(const struct index *ix, uint64_t hash)
{
    const struct index_entry *e = cached_entries(ix, hash);
    if (e) {
        __builtin_prefetch(e + index_home_slot(ix, hash));
        __builtin_prefetch(&ix->frames[ix->page_frame[ix->dir[dir_slot(ix, hash)]]], 1);
    }
}

void index_prefetch_for_update(const struct index *ix, uint64_t hash)
{
    uint32_t f = ix->page_frame[ix->dir[dir_slot(ix, hash)]];
    const struct index_entry *e = cached_entries(ix, hash);
    if (e) {
        __builtin_prefetch(e + index_home_slot(ix, hash), 1);
        __builtin_prefetch((const uint8_t *)e - sizeof(struct index_page_header), 1);
        __builtin_prefetch(&ix->frames[f], 1);
    }
}

uint64_t index_peek(const struct index *ix, uint64_t hash)
{
    const struct index_entry *e = cached_entries(ix, hash);
    if (!e) {
        return 0;
    }
    uint32_t i = index_home_slot(ix, hash);
    /* the home slot's cache line and the next: a longer probe is rare */
    for (uint32_t n = 0; n < 4; n++) {
        if (e[i].loc == 0) {
            return 0;
        }
        if (e[i].hash == hash) {
            return e[i].loc;
        }
        i = i + 1 == ix->slots ? 0 : i + 1;
    }
    return 0;
}

bool index_find_record(struct index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                       uint64_t *loc, struct index_pos *pos, uint64_t *now_ns,
                       const uint8_t **record)
{
    uint32_t pid = ix->dir[dir_slot(ix, hash)];
    uint32_t i = index_home_slot(ix, hash);
    uint8_t *mem = index_cache_get(ix, pid, now_ns);
    struct index_entry *e = page_entries(mem);
    for (uint32_t n = 0; n < ix->slots; n++) {
        if (e[i].loc == 0) {
            break;
        }
        if (e[i].hash == hash &&
            vlog_key_matches(ix->vl, e[i].loc, key, key_bytes, now_ns, record)) {
            *loc = e[i].loc;
            pos->page_id = pid;
            pos->slot = i;
            return true;
        }
        i = i + 1 == ix->slots ? 0 : i + 1;
    }
    return false;
}

bool index_find(struct index *ix, uint64_t hash, const void *key, uint32_t key_bytes, uint64_t *loc,
                struct index_pos *pos, uint64_t *now_ns)
{
    /* the home slot is almost always a cache miss: start it before the frame's bookkeeping */
    index_prefetch(ix, hash);
    return index_find_record(ix, hash, key, key_bytes, loc, pos, now_ns, NULL);
}

bool index_find_loc(struct index *ix, uint64_t hash, uint64_t loc, struct index_pos *pos,
                    uint64_t *now_ns)
{
    uint32_t pid = ix->dir[dir_slot(ix, hash)];
    uint8_t *mem = index_cache_get(ix, pid, now_ns);
    struct index_entry *e = page_entries(mem);
    uint32_t i = index_home_slot(ix, hash);
    for (uint32_t n = 0; n < ix->slots; n++) {
        if (e[i].loc == 0) {
            break;
        }
        if (e[i].hash == hash && e[i].loc == loc) {
            pos->page_id = pid;
            pos->slot = i;
            return true;
        }
        i = i + 1 == ix->slots ? 0 : i + 1;
    }
    return false;
}

void index_set(struct index *ix, const struct index_pos *pos, uint64_t loc, uint64_t *now_ns)
{
    uint8_t *mem = index_cache_get(ix, pos->page_id, now_ns);
    page_entries(mem)[pos->slot].loc = loc;
    index_cache_dirty(ix, pos->page_id);
}

static void page_put(struct index *ix, uint8_t *mem, uint64_t hash, uint64_t loc)
{
    struct index_entry *e = page_entries(mem);
    uint32_t i = index_home_slot(ix, hash);
    while (e[i].loc != 0) {
        i = i + 1 == ix->slots ? 0 : i + 1;
    }
    e[i].hash = hash;
    e[i].loc = loc;
    page_hdr(mem)->count++;
}

/*
 * Split page @pid on its next hash bit. -1 (nothing changed) if it is at the
 * maximum depth, or if the directory would have to double past the bound
 * for the page count after the split.
 */
static int page_split(struct index *ix, uint32_t pid, uint64_t hash, uint64_t *now_ns)
{
    uint32_t ld = ix->page_depth[pid];
    if (ld >= INDEX_MAX_DEPTH) {
        return -1;
    }
    if (ld == ix->global_depth && ld + 1 > index_depth_limit(ix->npages + 1)) {
        return -1;
    }
    if (ld == ix->global_depth) {
        uint32_t n = 1u << ix->global_depth;
        uint32_t *dir = g_new(uint32_t, 2 * n);
        for (uint32_t i = 0; i < 2 * n; i++) {
            dir[i] = ix->dir[i >> 1];
        }
        g_free(ix->dir);
        ix->dir = dir;
        ix->global_depth++;
    }
    ix->pinned = pid;
    uint32_t q = page_new(ix, ld + 1, now_ns);
    uint8_t *qmem = index_cache_get(ix, q, now_ns);
    uint8_t *pmem = index_cache_get(ix, pid, now_ns);
    ix->pinned = INDEX_NO_PAGE;
    ix->page_depth[pid] = (uint8_t)(ld + 1);

    /* move the entries whose next bit is 1 to the new page */
    struct index_entry *old = ix->scratch;
    memcpy(old, page_entries(pmem), ix->slots * sizeof(*old));
    memset(page_entries(pmem), 0, ix->slots * sizeof(*old));
    page_hdr(pmem)->count = 0;
    page_hdr(pmem)->local_depth = ld + 1;
    page_hdr(qmem)->local_depth = ld + 1;
    uint64_t bit = 1ULL << (63 - ld);
    for (uint32_t i = 0; i < ix->slots; i++) {
        if (old[i].loc) {
            page_put(ix, (old[i].hash & bit) ? qmem : pmem, old[i].hash, old[i].loc);
        }
    }
    index_cache_dirty(ix, pid);
    index_cache_dirty(ix, q);

    /* directory slots of the upper half now name the new page */
    uint32_t gd = ix->global_depth;
    uint32_t prefix = (uint32_t)(hash >> (64 - ld - 1)) >> 1; /* top ld bits */
    uint32_t span = 1u << (gd - ld);
    uint32_t first = ld ? prefix << (gd - ld) : 0;
    for (uint32_t i = first + span / 2; i < first + span; i++) {
        ix->dir[i] = q;
    }
    return 0;
}

int index_reserve(struct index *ix, uint64_t hash, uint64_t *now_ns)
{
    /* each split deepens @hash's page by one bit: at most INDEX_MAX_DEPTH rounds */
    for (;;) {
        uint32_t pid = ix->dir[dir_slot(ix, hash)];
        uint8_t *mem = index_cache_get(ix, pid, now_ns);
        if (page_hdr(mem)->count + 1 <= ix->split_at) {
            return 0;
        }
        /*
         * A page that may not split stays at its threshold: probes stay
         * short, and one hash prefix cannot take the index further.
         */
        if (page_split(ix, pid, hash, now_ns) != 0) {
            return -1;
        }
    }
}

void index_add(struct index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns)
{
    /* reserved: the page has fewer than split_at (< slots) entries, page_put finds a free slot */
    uint32_t pid = ix->dir[dir_slot(ix, hash)];
    uint8_t *mem = index_cache_get(ix, pid, now_ns);
    page_put(ix, mem, hash, loc);
    index_cache_dirty(ix, pid);
}

int index_insert(struct index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns)
{
    if (index_reserve(ix, hash, now_ns) != 0) {
        return -1;
    }
    index_add(ix, hash, loc, now_ns);
    return 0;
}

void index_remove(struct index *ix, const struct index_pos *pos, uint64_t *now_ns)
{
    uint8_t *mem = index_cache_get(ix, pos->page_id, now_ns);
    struct index_entry *e = page_entries(mem);
    uint32_t i = pos->slot, j = i;
    e[i].hash = e[i].loc = 0;
    /* backward-shift deletion keeps every probe sequence unbroken */
    for (;;) {
        j = j + 1 == ix->slots ? 0 : j + 1;
        if (e[j].loc == 0) {
            break;
        }
        uint32_t k = index_home_slot(ix, e[j].hash);
        bool move = (j > i) ? (k <= i || k > j) : (k <= i && k > j);
        if (move) {
            e[i] = e[j];
            e[j].hash = e[j].loc = 0;
            i = j;
        }
    }
    page_hdr(mem)->count--;
    index_cache_dirty(ix, pos->page_id);
}

uint64_t index_host_bytes(const struct index *ix)
{
    uint64_t b = ((uint64_t)sizeof(uint32_t) << ix->global_depth) +
                 (uint64_t)ix->pages_cap * (2 * sizeof(uint32_t) + 1) + ix->chunk_bytes +
                 (uint64_t)ix->frames_cap * sizeof(struct index_frame);
    if (ix->nframes > ix->frames_max) {
        b += (uint64_t)(ix->nframes - ix->frames_max) * ix->page_bytes;
    }
    return b;
}
