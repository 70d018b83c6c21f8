/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pm983 design's multi-level global index (pm983_levels.h).
 *
 * Where each choice comes from:
 * - Levels of flash pages, read one per level on a miss: "If an entry is
 *   not found in the index cache, then it would invoke a series of flash
 *   page reads to access the desired index entry from a large multi-level
 *   index structure" (characterization paper, Sec. IV, "Impact of index
 *   occupancy"). So a look-up walks from the top down and every level whose
 *   page is not cached costs one NAND page read.
 * - Levels that grow with the keys: "an increase in the size of the index,
 *   upon insertion of more keys, may make the index structure too large to
 *   fit in SSD DRAM, directing index operations to flash" (same paragraph).
 *   The directory is in DRAM while it fits in one index page's worth of
 *   entries; beyond, it goes to flash in pages of E entries, and a level is
 *   added each time the level above would exceed E.
 * - Hash-keyed at every level: "a multi-level hash table for fast point
 *   query as a global index structure" and "variable-length keys are
 *   transformed into fixed-length key hashes. Then these key hashes are
 *   used for physical page translations" (Sec. IV). Every level is
 *   addressed by the signature's top bits (the extendible hash's
 *   directory slot), the leaves are the hash design's pages.
 * - "Global and Local Hash tables" (Samsung, "Towards Building a
 *   High-Performance, Scale-In Key-Value Storage System", slides): the
 *   local one is pm983_index.c's.
 * The sources are silent on the page format, the fan-out, how the levels
 * share the DRAM budget and when a directory page is written: each
 * directory entry is a (page, NAND page) pointer of 8 bytes, E is the
 * largest power of two that fits an index page (256 at 4 KiB), cached
 * directory pages take 1/8 of the index page frames (at least 2), and a
 * directory page is programmed when it is evicted dirty or at a
 * checkpoint, as the leaves are (index_cache.c). A page's program changes
 * its pointer in the page above, which is marked dirty without a flash
 * operation and read (if not cached) and programmed in its turn when next
 * touched and evicted, or at the checkpoint, up to the top level in DRAM:
 * no operation sets off a chain of them (pm983_index.c's merge bound).
 */
#include "pm983_levels.h"

#include <string.h>

#include <xxhash.h>

#include "hash_index.h"
#include "index_cache.h"
#include "kv_index.h"
#include "nand.h"
#include "refuse.h"
#include "space.h"

#define PM983_DIR_CACHED 1u
#define PM983_DIR_DIRTY 2u

uint32_t pm983_test_fanout_log;

static struct pm983_levels *lv_of(struct kv_index *ix)
{
    return &ix->pm983.lv;
}

static struct index *leaves_of(struct kv_index *ix)
{
    return &ix->hash.idx;
}

/* The directory levels in flash for 2^@gd slots at fan-out 2^@flog, and their page counts. */
static uint32_t shape_of(uint32_t gd, uint32_t flog, uint32_t *count)
{
    uint32_t levels = 0;
    uint32_t bits = gd; /* log2 of the entries the next level up must hold */
    while (bits > flog && levels < PM983_MAX_DIR_LEVELS) {
        bits -= flog;
        levels++;
        if (count) {
            count[levels] = 1u << bits;
        }
    }
    return levels;
}

/* --- the DRAM cache of directory pages: an LRU list of page numbers --- */

static void lru_unlink(struct pm983_levels *lv, uint32_t n)
{
    uint32_t p = lv->lru_prev[n], q = lv->lru_next[n];
    if (p != UINT32_MAX) {
        lv->lru_next[p] = q;
    } else {
        lv->lru_head = q;
    }
    if (q != UINT32_MAX) {
        lv->lru_prev[q] = p;
    } else {
        lv->lru_tail = p;
    }
}

static void lru_front(struct pm983_levels *lv, uint32_t n)
{
    lv->lru_prev[n] = UINT32_MAX;
    lv->lru_next[n] = lv->lru_head;
    if (lv->lru_head != UINT32_MAX) {
        lv->lru_prev[lv->lru_head] = n;
    } else {
        lv->lru_tail = n;
    }
    lv->lru_head = n;
}

/* Level and index of directory page @n. */
static uint32_t level_of(const struct pm983_levels *lv, uint32_t n, uint32_t *i)
{
    uint32_t k = lv->dir_levels;
    while (k > 1 && n < lv->first[k]) {
        k--;
    }
    *i = n - lv->first[k];
    return k;
}

/* Page @n's bytes as the index stands: header, then its pointers (8 bytes each). */
static void page_generate(struct kv_index *ix, uint32_t n, uint8_t *mem)
{
    struct pm983_levels *lv = lv_of(ix);
    const struct index *x = leaves_of(ix);
    uint32_t i, k = level_of(lv, n, &i);
    uint32_t e = 1u << lv->fanout_log;
    uint32_t below = k == 1 ? 1u << lv->gd : lv->count[k - 1];
    uint32_t cnt = below - i * e < e ? below - i * e : e;
    memset(mem, 0, x->page_bytes);
    struct pm983_dir_header h = {PM983_DIR_MAGIC, k, i, cnt};
    memcpy(mem, &h, sizeof(h));
    struct pm983_dir_entry *d = (struct pm983_dir_entry *)(mem + sizeof(h));
    for (uint32_t j = 0; j < cnt; j++) {
        uint32_t c = i * e + j;
        if (k == 1) {
            d[j] = (struct pm983_dir_entry){x->dir[c], x->page_ppn[x->dir[c]]};
        } else {
            d[j] = (struct pm983_dir_entry){c, lv->ppn[lv->first[k - 1] + c]};
        }
    }
}

static void leaf_moved(struct index *x, uint32_t page_id, uint64_t *now_ns);

/*
 * Program directory page @n (its newest bytes) and mark its parent dirty:
 * the parent's pointer to it changed. 0, or -1.
 */
static int page_program(struct kv_index *ix, uint32_t n, uint64_t *now_ns)
{
    struct pm983_levels *lv = lv_of(ix);
    struct space *sp = leaves_of(ix)->sp;
    uint32_t psz = sp->nand->geo.page_size;
    memset(lv->buf, 0, psz);
    page_generate(ix, n, lv->buf);
    uint64_t ppn = stream_program_index(sp, PM983_DIR_TAG | n, lv->buf, now_ns);
    if (ppn == UINT64_MAX) {
        return -1;
    }
    if (lv->ppn[n] != UINT32_MAX) {
        space_valid_add(sp, (uint64_t)lv->ppn[n] * psz, -(int64_t)psz, 0);
        lv->nand_bytes -= psz;
    }
    lv->ppn[n] = (uint32_t)ppn;
    space_valid_add(sp, ppn * psz, psz, 0);
    lv->nand_bytes += psz;
    lv->programs++;
    lv->state[n] &= (uint8_t)~PM983_DIR_DIRTY;
    uint32_t i, k = level_of(lv, n, &i);
    if (k < lv->dir_levels) {
        lv->state[lv->first[k + 1] + (i >> lv->fanout_log)] |= PM983_DIR_DIRTY;
    }
    return 0;
}

/*
 * Make room for one more cached page: the least recently used goes,
 * programmed first if dirty. Its parent is only marked dirty (read and
 * rewritten when next touched, or at the checkpoint): one eviction, at
 * most one program, no read.
 */
static void make_room(struct kv_index *ix, uint64_t *now_ns)
{
    struct pm983_levels *lv = lv_of(ix);
    while (lv->cached >= lv->frames_max && lv->lru_tail != UINT32_MAX) {
        uint32_t n = lv->lru_tail;
        lru_unlink(lv, n);
        lv->cached--;
        uint8_t was = lv->state[n];
        lv->state[n] = 0;
        if (!(was & PM983_DIR_DIRTY)) {
            continue;
        }
        if (page_program(ix, n, now_ns) != 0) {
            /* no stripe for index pages (or no power): keep it, over budget */
            lv->state[n] = was;
            lru_front(lv, n);
            lv->cached++;
            return;
        }
        lv->evicted_dirty++;
    }
}

/* Page @n into the cache: a NAND read if it is not cached and has a copy. */
static void touch(struct kv_index *ix, uint32_t n, uint64_t *now_ns)
{
    struct pm983_levels *lv = lv_of(ix);
    if (lv->state[n] & PM983_DIR_CACHED) {
        lv->hits++;
        if (lv->lru_head != n) {
            lru_unlink(lv, n);
            lru_front(lv, n);
        }
    } else {
        lv->misses++;
        make_room(ix, now_ns);
        if (lv->ppn[n] != UINT32_MAX) {
            struct nand *nd = leaves_of(ix)->sp->nand;
            *now_ns = nand_read(nd, lv->ppn[n], leaves_of(ix)->page_bytes, *now_ns);
            lv->reads++;
        }
        lv->state[n] |= PM983_DIR_CACHED;
        lru_front(lv, n);
        lv->cached++;
    }
}

/* --- shape --- */

/* Directory pages for depth @gd, none cached, none written. */
static void shape_set(struct pm983_levels *lv, uint32_t gd)
{
    lv->gd = gd;
    memset(lv->count, 0, sizeof(lv->count));
    lv->dir_levels = shape_of(gd, lv->fanout_log, lv->count);
    lv->npages = 0;
    for (uint32_t k = 1; k <= lv->dir_levels; k++) {
        lv->first[k] = lv->npages;
        lv->npages += lv->count[k];
    }
    if (lv->npages > lv->cap) {
        lv->cap = lv->npages;
        lv->ppn = g_renew(uint32_t, lv->ppn, lv->cap);
        lv->state = g_renew(uint8_t, lv->state, lv->cap);
        lv->lru_prev = g_renew(uint32_t, lv->lru_prev, lv->cap);
        lv->lru_next = g_renew(uint32_t, lv->lru_next, lv->cap);
    }
    for (uint32_t n = 0; n < lv->npages; n++) {
        lv->ppn[n] = UINT32_MAX;
        lv->state[n] = 0;
    }
    lv->lru_head = lv->lru_tail = UINT32_MAX;
    lv->cached = 0;
}

/* leaf_slot[] from the directory (a mount, a reset): one pass over its 2^gd slots. */
static void leaf_slots_scan(struct kv_index *ix)
{
    struct pm983_levels *lv = lv_of(ix);
    const struct index *x = leaves_of(ix);
    if (x->npages > lv->leaf_cap) {
        lv->leaf_cap = x->npages * 2;
        lv->leaf_slot = g_renew(uint32_t, lv->leaf_slot, lv->leaf_cap);
    }
    for (uint32_t s = (1u << x->global_depth); s-- > 0;) {
        lv->leaf_slot[x->dir[s]] = s;
    }
    lv->leaf_n = x->npages;
}

void pm983_levels_init(struct kv_index *ix, const struct kvftl_config *cfg)
{
    struct pm983_levels *lv = lv_of(ix);
    struct index *x = leaves_of(ix);
    memset(lv, 0, sizeof(*lv));
    uint32_t e = (cfg->index_page_bytes - sizeof(struct pm983_dir_header)) /
                 sizeof(struct pm983_dir_entry);
    lv->fanout_log = 31 - (uint32_t)__builtin_clz(e);
    if (pm983_test_fanout_log >= PM983_MIN_FANOUT_LOG && pm983_test_fanout_log < lv->fanout_log) {
        lv->fanout_log = pm983_test_fanout_log;
    }
    uint32_t dir_frames = x->frames_max / 8 < 2 ? 2 : x->frames_max / 8;
    if (x->frames_max >= dir_frames + 2) {
        x->frames_max -= dir_frames;
    }
    lv->frames_max = dir_frames;
    lv->buf = g_malloc0(cfg->page_size_bytes);
    shape_set(lv, 0);
    x->page_moved = leaf_moved;
}

void pm983_levels_fini(struct kv_index *ix)
{
    struct pm983_levels *lv = lv_of(ix);
    g_free(lv->ppn);
    g_free(lv->state);
    g_free(lv->lru_prev);
    g_free(lv->lru_next);
    g_free(lv->leaf_slot);
    g_free(lv->buf);
}

void pm983_levels_reset(struct kv_index *ix)
{
    struct pm983_levels *lv = lv_of(ix);
    lv->nand_bytes = 0; /* as the leaves': the space is reset with them */
    shape_set(lv, leaves_of(ix)->global_depth);
    leaf_slots_scan(ix);
}

uint32_t pm983_levels_count(const struct kv_index *ix)
{
    return ix->pm983.lv.dir_levels + 1;
}

void pm983_levels_walk(struct kv_index *ix, uint64_t hash, uint64_t *now_ns)
{
    struct pm983_levels *lv = lv_of(ix);
    if (!lv->dir_levels) {
        return;
    }
    uint32_t slot = (uint32_t)(hash >> (64 - lv->gd));
    for (uint32_t k = lv->dir_levels; k >= 1; k--) {
        touch(ix, lv->first[k] + (slot >> (k * lv->fanout_log)), now_ns);
    }
}

/* Dirty the level-1 pages holding directory slots [@s, @s + @span). */
static void dirty_slots(struct kv_index *ix, uint32_t s, uint32_t span)
{
    struct pm983_levels *lv = lv_of(ix);
    if (!lv->dir_levels) {
        return;
    }
    for (uint32_t i = s >> lv->fanout_log; i <= (s + span - 1) >> lv->fanout_log; i++) {
        lv->state[lv->first[1] + i] |= PM983_DIR_DIRTY;
    }
}

/* index_page_write()'s hook: leaf @page_id has a new NAND page; its level-1 pointers change. */
static void leaf_moved(struct index *x, uint32_t page_id, uint64_t *now_ns)
{
    struct kv_index *ix = (struct kv_index *)((char *)x - offsetof(struct kv_index, hash.idx));
    struct pm983_levels *lv = lv_of(ix);
    /* a leaf this merge split, or a directory not reshaped yet: pm983_levels_changed() dirties */
    if (lv->gd != x->global_depth || page_id >= lv->leaf_n) {
        return;
    }
    (void)now_ns; /* the pointer is rewritten with its page: later, when that is programmed */
    dirty_slots(ix, lv->leaf_slot[page_id], 1u << (lv->gd - x->page_depth[page_id]));
}

void pm983_levels_changed(struct kv_index *ix, uint64_t hash, uint32_t gd0, uint32_t ld0,
                          uint64_t *now_ns)
{
    struct pm983_levels *lv = lv_of(ix);
    struct index *x = leaves_of(ix);
    uint32_t d = x->global_depth - gd0;
    if (d) {
        /*
         * The directory doubled: every slot moved, so every directory page
         * is new. The old copies stop being valid; the new pages are dirty,
         * built when first touched and programmed when evicted or at the
         * checkpoint, so the doubling itself costs no flash operation.
         */
        struct space *sp = x->sp;
        uint32_t psz = sp->nand->geo.page_size;
        for (uint32_t n = 0; n < lv->npages; n++) {
            if (lv->ppn[n] != UINT32_MAX) {
                space_valid_add(sp, (uint64_t)lv->ppn[n] * psz, -(int64_t)psz, 0);
                lv->nand_bytes -= psz;
            }
        }
        shape_set(lv, x->global_depth);
        for (uint32_t p = 0; p < lv->leaf_n; p++) {
            lv->leaf_slot[p] <<= d;
        }
        if (lv->npages) { /* none while the directory fits in DRAM: no state array */
            memset(lv->state, PM983_DIR_DIRTY, lv->npages);
        }
    }
    /* the splits were all inside the old leaf's slots: name each leaf there again */
    uint32_t span0 = 1u << (gd0 - ld0);
    uint32_t s0 = gd0 ? (uint32_t)(hash >> (64 - gd0)) & ~(span0 - 1) : 0;
    if (x->npages > lv->leaf_cap) {
        lv->leaf_cap = x->npages * 2;
        lv->leaf_slot = g_renew(uint32_t, lv->leaf_slot, lv->leaf_cap);
    }
    for (uint32_t s = (s0 + span0) << d; s-- > s0 << d;) {
        lv->leaf_slot[x->dir[s]] = s;
    }
    lv->leaf_n = x->npages;
    if (!d) {
        dirty_slots(ix, s0, span0);
    }
}

int pm983_levels_write_back(struct kv_index *ix, uint64_t *now_ns)
{
    struct pm983_levels *lv = lv_of(ix);
    /* level by level: a program dirties only the level above, written after it */
    for (uint32_t n = 0; n < lv->npages; n++) {
        if (!(lv->state[n] & PM983_DIR_DIRTY)) {
            continue;
        }
        if (!(lv->state[n] & PM983_DIR_CACHED) && lv->ppn[n] != UINT32_MAX) {
            /* a page dirtied while not cached is read to be rewritten */
            struct index *x = leaves_of(ix);
            *now_ns = nand_read(x->sp->nand, lv->ppn[n], x->page_bytes, *now_ns);
            lv->reads++;
        }
        if (page_program(ix, n, now_ns) != 0) {
            return -1;
        }
    }
    return 0;
}

int pm983_levels_relocate(struct kv_index *ix, uint64_t ppn, uint32_t tag, uint64_t *now_ns)
{
    struct pm983_levels *lv = lv_of(ix);
    uint32_t n = tag & ~PM983_DIR_TAG;
    if (n >= lv->npages || lv->ppn[n] != ppn) {
        return 0; /* an older copy */
    }
    struct nand *nd = leaves_of(ix)->sp->nand;
    *now_ns = nand_read(nd, ppn, leaves_of(ix)->page_bytes, *now_ns);
    if (page_program(ix, n, now_ns) != 0) {
        return -1;
    }
    lv->relocated++;
    return 1;
}

uint64_t pm983_levels_host_bytes(const struct kv_index *ix)
{
    const struct pm983_levels *lv = &ix->pm983.lv;
    return (uint64_t)lv->cap * (3 * sizeof(uint32_t) + 1) +
           (uint64_t)lv->leaf_cap * sizeof(uint32_t);
}

/* --- checkpoint: the hash design's part, then the top level (NAND page, XXH3-64 each) --- */

static uint32_t top_pages(const struct kv_index *ix, uint32_t gd)
{
    uint32_t count[PM983_MAX_DIR_LEVELS + 1];
    uint32_t levels = shape_of(gd, ix->pm983.lv.fanout_log, count);
    return levels ? count[levels] : 0;
}

static uint64_t hash_part_length(uint32_t gd, uint32_t npages)
{
    /* hash_ckpt.c's part_length() */
    return ((uint64_t)sizeof(uint32_t) << gd) +
           (uint64_t)npages * (sizeof(uint32_t) + 1 + sizeof(uint64_t));
}

void pm983_ckpt_save(struct kv_index *ix, struct kv_index_ckpt_head *h, GByteArray *b)
{
    struct pm983_levels *lv = lv_of(ix);
    hash_ckpt_save(ix, h, b);
    h->nand_bytes += lv->nand_bytes;
    uint32_t top = top_pages(ix, lv->gd);
    uint32_t first = lv->dir_levels ? lv->first[lv->dir_levels] : 0;
    struct nand *nd = leaves_of(ix)->sp->nand;
    for (uint32_t i = 0; i < top; i++) {
        g_byte_array_append(b, (const guint8 *)&lv->ppn[first + i], sizeof(uint32_t));
    }
    for (uint32_t i = 0; i < top; i++) {
        uint64_t sum = XXH3_64bits(nand_page_ptr(nd, lv->ppn[first + i]),
                                   leaves_of(ix)->page_bytes);
        g_byte_array_append(b, (const guint8 *)&sum, sizeof(sum));
    }
}

uint64_t pm983_ckpt_length(const struct kv_index *ix, const struct kv_index_ckpt_head *h,
                           uint64_t total_pages, char *why, size_t why_len)
{
    uint64_t len = hash_ckpt_length(ix, h, total_pages, why, why_len);
    if (len == UINT64_MAX) {
        return len;
    }
    return len + (uint64_t)top_pages(ix, h->count_a) * (sizeof(uint32_t) + sizeof(uint64_t));
}

uint64_t pm983_ckpt_max_length(const struct kv_index *ix, uint64_t total_pages)
{
    uint32_t pages = total_pages > UINT32_MAX ? UINT32_MAX : (uint32_t)total_pages;
    return hash_ckpt_max_length(ix, total_pages) +
           (uint64_t)top_pages(ix, index_depth_limit(pages)) *
               (sizeof(uint32_t) + sizeof(uint64_t));
}

/*
 * Directory page @n (level @k, index @i) at NAND page @ppn, checked field
 * by field against the checkpoint's directory @dir and leaf table @leaf_ppn
 * (level 1) or its position (above); the NAND pages it names go to @below.
 */
static int dir_page_check(const struct kv_index *ix, const uint32_t *count, const uint8_t *mem,
                          uint32_t gd, uint32_t k, uint32_t i, uint32_t ppn, const uint8_t *dir,
                          const uint8_t *leaf_ppn, uint32_t *below, char *why, size_t why_len)
{
    uint32_t flog = ix->pm983.lv.fanout_log, e = 1u << flog;
    uint32_t nbelow = k == 1 ? 1u << gd : count[k - 1];
    uint32_t want = nbelow - i * e < e ? nbelow - i * e : e;
    struct pm983_dir_header h;
    memcpy(&h, mem, sizeof(h));
    if (h.magic != PM983_DIR_MAGIC || h.level != k || h.index != i || h.count != want) {
        return refuse(why, why_len,
                      "directory page %u of level %u (NAND page %u) has a bad header (magic %#x, "
                      "level %u, index %u, %u entries)",
                      i, k, ppn, h.magic, h.level, h.index, h.count);
    }
    const uint8_t *ents = mem + sizeof(h);
    for (uint32_t j = 0; j < want; j++) {
        struct pm983_dir_entry d;
        memcpy(&d, ents + (size_t)j * sizeof(d), sizeof(d));
        uint32_t c = i * e + j, id = c, at;
        if (k == 1) {
            memcpy(&id, dir + 4ull * c, 4);
            memcpy(&at, leaf_ppn + 4ull * id, 4);
        } else {
            at = d.ppn;
            below[c] = d.ppn;
        }
        if (d.id != id || d.ppn != at) {
            return refuse(why, why_len,
                          "directory page %u of level %u entry %u names page %u at NAND page %u; "
                          "the checkpoint says page %u at %u",
                          i, k, j, d.id, d.ppn, id, at);
        }
    }
    /* the rest of the page is zero as programmed: no field hides there */
    for (size_t b = sizeof(h) + (size_t)want * sizeof(struct pm983_dir_entry);
         b < ix->hash.idx.page_bytes; b++) {
        if (mem[b]) {
            return refuse(why, why_len,
                          "directory page %u of level %u (NAND page %u) has a byte at %zu past its "
                          "%u entries",
                          i, k, ppn, b, want);
        }
    }
    return 0;
}

/*
 * Walk the directory levels from the top (the part's NAND pages and
 * checksums) down to the leaves, each page checked (dir_page_check());
 * with @ctx (a mount's check) each page's place is checked and its bytes
 * added up, with @ppn_out (an install) the NAND pages are recorded.
 */
static int levels_walk(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p,
                       struct kv_index_ckpt_ctx *ctx, uint32_t *ppn_out, char *why, size_t why_len)
{
    const struct index *x = leaves_of(ix);
    struct nand *nd = x->sp->nand;
    uint32_t gd = h->count_a, np = h->count_b, flog = ix->pm983.lv.fanout_log;
    uint32_t count[PM983_MAX_DIR_LEVELS + 1], first[PM983_MAX_DIR_LEVELS + 1];
    uint32_t levels = shape_of(gd, flog, count);
    if (!levels) {
        return 0;
    }
    uint32_t total = 0;
    for (uint32_t k = 1; k <= levels; k++) {
        first[k] = total;
        total += count[k];
    }
    const uint8_t *dir = p, *leaf_ppn = p + ((uint64_t)sizeof(uint32_t) << gd);
    const uint8_t *top = p + hash_part_length(gd, np);
    const uint8_t *sums = top + 4ull * count[levels];
    uint32_t *ppns = g_new(uint32_t, total);
    memcpy(&ppns[first[levels]], top, 4ull * count[levels]);
    int rc = 0;
    for (uint32_t k = levels; k >= 1 && rc == 0; k--) {
        for (uint32_t i = 0; i < count[k] && rc == 0; i++) {
            uint32_t n = first[k] + i, ppn = ppns[n];
            if (ctx) {
                if (ctx->page_at(ctx->opaque, ppn, PM983_DIR_TAG | n, why, why_len) != 0) {
                    rc = -1;
                    break;
                }
            } else if (ppn >= nd->geo.total_pages) {
                rc = -1; /* checked before any install */
                break;
            }
            const uint8_t *mem = nand_page_ptr(nd, ppn);
            uint64_t sum;
            if (k == levels &&
                (memcpy(&sum, sums + 8ull * i, 8), XXH3_64bits(mem, x->page_bytes) != sum)) {
                rc = refuse(why, why_len,
                            "directory page %u of level %u (NAND page %u) does not match its "
                            "checksum in the checkpoint",
                            i, k, ppn);
                break;
            }
            rc = dir_page_check(ix, count, mem, gd, k, i, ppn, dir, leaf_ppn,
                                k > 1 ? &ppns[first[k - 1]] : NULL, why, why_len);
            if (rc == 0 && ctx) {
                ctx->valid[nand_stripe_of(nd, ppn)] += nd->geo.page_size;
                ctx->index_bytes += nd->geo.page_size;
            }
        }
    }
    if (rc == 0 && ppn_out) {
        memcpy(ppn_out, ppns, 4ull * total);
    }
    g_free(ppns);
    return rc;
}

int pm983_ckpt_check(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p,
                     struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len)
{
    if (hash_ckpt_check(ix, h, p, ctx, why, why_len) != 0) {
        return -1;
    }
    return levels_walk(ix, h, p, ctx, NULL, why, why_len);
}

void pm983_ckpt_install(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p)
{
    struct pm983_levels *lv = lv_of(ix);
    struct index *x = leaves_of(ix);
    hash_ckpt_install(ix, h, p);
    shape_set(lv, x->global_depth);
    char why[8];
    if (levels_walk(ix, h, p, NULL, lv->ppn, why, sizeof(why)) != 0) {
        g_assert_not_reached(); /* pm983_ckpt_check() passed */
    }
    lv->nand_bytes = (uint64_t)lv->npages * x->sp->nand->geo.page_size;
    x->nand_bytes = h->nand_bytes - lv->nand_bytes;
    leaf_slots_scan(ix);
}

uint32_t pm983_check_pages(const struct kv_index *ix)
{
    return hash_check_pages(ix) + ix->pm983.lv.npages;
}

/*
 * kvftl_check()'s walk: the leaves as the hash design checks them, then
 * each directory page: a clean one's NAND copy must say what the index
 * says (a dirty one's is an older copy, still counted).
 */
int pm983_check_page(struct kv_index *ix, uint32_t p, const struct kv_index_entry **ents,
                     uint32_t *n, uint32_t *ppn, uint32_t *bytes, char *err, size_t err_len)
{
    struct index *x = leaves_of(ix);
    if (p < x->npages) {
        return hash_check_page(ix, p, ents, n, ppn, bytes, err, err_len);
    }
    struct pm983_levels *lv = lv_of(ix);
    uint32_t d = p - x->npages, i, k = level_of(lv, d, &i);
    *n = 0;
    *ents = NULL;
    *ppn = lv->ppn[d];
    *bytes = x->page_bytes;
    if (lv->ppn[d] != UINT32_MAX && !(lv->state[d] & PM983_DIR_DIRTY)) {
        page_generate(ix, d, lv->buf);
        if (memcmp(lv->buf, nand_page_ptr(x->sp->nand, lv->ppn[d]), x->page_bytes) != 0) {
            return refuse(err, err_len,
                          "directory page %u of level %u (NAND page %u) does not say what the "
                          "index says",
                          i, k, lv->ppn[d]);
        }
    }
    return 0;
}
