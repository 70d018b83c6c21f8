/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hash design's part of the checkpoint and of kvftl_check() (the
 * index seam's ckpt_* and check_* operations, kv_index.h): the directory,
 * each index page's NAND page, local depth and XXH3-64, checked field by
 * field on a mount before anything is installed.
 */
#include "hash_index.h"

#include <string.h>

#include <glib.h>
#include <xxhash.h>

#include "index_cache.h"
#include "kv_index.h"
#include "nand.h"
#include "refuse.h"
#include "space.h"
#include "value_log.h"

/* The part's bytes: directory, index page ppn, local depth, checksum. */
static uint64_t part_length(uint32_t global_depth, uint32_t npages)
{
    return ((uint64_t)sizeof(uint32_t) << global_depth) +
           (uint64_t)npages * (sizeof(uint32_t) + 1 + sizeof(uint64_t));
}

void hash_ckpt_save(struct kv_index *ix, struct kv_index_ckpt_head *h, GByteArray *b)
{
    struct index *x = &ix->hash.idx;
    *h = (struct kv_index_ckpt_head){
        .count_a = x->global_depth,
        .count_b = x->npages,
        .hash_seed = x->hash_seed,
        .nand_bytes = x->nand_bytes,
    };
    g_byte_array_append(b, (const guint8 *)x->dir, (sizeof(uint32_t) << x->global_depth));
    g_byte_array_append(b, (const guint8 *)x->page_ppn, x->npages * sizeof(uint32_t));
    g_byte_array_append(b, (const guint8 *)x->page_depth, x->npages);
    /* every page was just written back: its NAND copy is what the next mount will load */
    for (uint32_t p = 0; p < x->npages; p++) {
        uint64_t sum = x->page_ppn[p] == UINT32_MAX
                           ? 0
                           : XXH3_64bits(nand_page_ptr(x->sp->nand, x->page_ppn[p]), x->page_bytes);
        g_byte_array_append(b, (const guint8 *)&sum, sizeof(sum));
    }
}

uint64_t hash_ckpt_length(const struct kv_index *ix, const struct kv_index_ckpt_head *h,
                          uint64_t total_pages, char *why, size_t why_len)
{
    (void)ix;
    if (h->count_b == 0 || h->count_b > total_pages) {
        refuse(why, why_len, "it holds %u index pages; it must hold from 1 to %llu", h->count_b,
               (unsigned long long)total_pages);
        return UINT64_MAX;
    }
    if (h->count_a > index_depth_limit(h->count_b)) {
        refuse(why, why_len, "its global depth is %u; it must be at most %u for %u index pages",
               h->count_a, index_depth_limit(h->count_b), h->count_b);
        return UINT64_MAX;
    }
    return part_length(h->count_a, h->count_b);
}

uint64_t hash_ckpt_max_length(const struct kv_index *ix, uint64_t total_pages)
{
    (void)ix;
    uint32_t pages = total_pages > UINT32_MAX ? UINT32_MAX : (uint32_t)total_pages;
    return part_length(index_depth_limit(pages), pages);
}

/* A part being checked: its arrays, and what the checks derive. */
struct hash_ckpt {
    const struct kv_index_ckpt_head *h;
    const uint8_t *dir, *ppn, *depth, *sum;
    uint8_t *seen;    /* [npages]: the directory names the page */
    uint32_t *prefix; /* [npages]: its hash prefix (local depth bits) */
};

static void hash_ckpt_arrays(struct hash_ckpt *c, const struct kv_index_ckpt_head *h,
                             const uint8_t *p)
{
    c->h = h;
    c->dir = p;
    c->ppn = c->dir + ((uint64_t)sizeof(uint32_t) << h->count_a);
    c->depth = c->ppn + (uint64_t)h->count_b * sizeof(uint32_t);
    c->sum = c->depth + h->count_b;
}

/* The directory: every page names one aligned run of 2^(global - local depth) slots. */
static int directory_check(struct hash_ckpt *c, char *why, size_t why_len)
{
    uint32_t gd = c->h->count_a, np = c->h->count_b;
    uint64_t nslots = 1ull << gd;
    for (uint64_t i = 0; i < nslots;) {
        uint32_t pid;
        memcpy(&pid, c->dir + 4 * i, 4);
        if (pid >= np) {
            return refuse(why, why_len, "directory slot %llu names index page %u; there are %u",
                          (unsigned long long)i, pid, np);
        }
        uint32_t ld = c->depth[pid];
        if (ld > gd) {
            return refuse(why, why_len, "index page %u has local depth %u; the global depth is %u",
                          pid, ld, gd);
        }
        uint64_t span = 1ull << (gd - ld);
        bool run = !c->seen[pid] && i % span == 0;
        for (uint64_t j = i; run && j < i + span; j++) {
            uint32_t q;
            memcpy(&q, c->dir + 4 * j, 4);
            run = q == pid;
        }
        if (!run) {
            return refuse(why, why_len,
                          "index page %u is named by directory slots that do not form one run of "
                          "%llu",
                          pid, (unsigned long long)span);
        }
        c->seen[pid] = 1;
        c->prefix[pid] = (uint32_t)(i >> (gd - ld));
        i += span;
    }
    return 0;
}

/* One blob of an index page is read back: its header must match entry @e and its key hash. */
static int blob_sample(const struct kv_index *ix, const struct hash_ckpt *c,
                       const struct kv_index_ckpt_ctx *ctx, uint32_t p, uint32_t i,
                       const struct index_entry *e, char *why, size_t why_len)
{
    /*
     * Its key must hash to the entry under the checkpoint's seed (a wrong
     * seed would lose every key without a word). A clean mount reads no
     * other blob; the FTL check (C4h) reads them all.
     */
    uint8_t buf[BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES];
    uint32_t key_bytes;
    const uint8_t *key = ctx->blob_key(ctx->opaque, e->loc, buf, &key_bytes);
    uint64_t h2 = 0;
    if (key) {
        const struct index *x = &ix->hash.idx;
        h2 = x->hash ? x->hash(key, key_bytes)
                     : XXH3_64bits_withSeed(key, key_bytes, c->h->hash_seed);
        h2 = h2 ? h2 : 1;
    }
    if (h2 != e->hash) {
        return refuse(why, why_len, "index page %u slot %u names the blob at %llu, which %s", p, i,
                      (unsigned long long)loc_addr(e->loc),
                      h2 ? "holds another key (or the hash seed is wrong)"
                         : "does not match the entry");
    }
    return 0;
}

/*
 * Entry @e in slot @i of index page @p (local depth @ld; @n slots walked
 * from the empty slot @empty, the current probe run starting at
 * @run_start): a hash that belongs to the page, reachable from its home
 * slot by the linear probe, a location inside the value log with a
 * possible blob length.
 */
static int entry_check(const struct kv_index *ix, const struct hash_ckpt *c,
                       const struct kv_index_ckpt_ctx *ctx, uint32_t p, uint32_t ld, uint32_t i,
                       uint32_t n, uint32_t empty, uint32_t run_start, const struct index_entry *e,
                       char *why, size_t why_len)
{
    const struct index *x = &ix->hash.idx;
    if (!e->hash || (ld && (uint32_t)(e->hash >> (64 - ld)) != c->prefix[p])) {
        return refuse(why, why_len,
                      "index page %u slot %u holds hash %#llx, which belongs to another page", p, i,
                      (unsigned long long)e->hash);
    }
    uint32_t home = index_home_slot(x, e->hash);
    uint32_t home_n = (home + x->slots - empty) % x->slots; /* its position in this walk */
    if (home_n == 0 || home_n < run_start || home_n > n) {
        return refuse(why, why_len, "index page %u slot %u cannot be reached from its home slot %u",
                      p, i, home);
    }
    uint64_t addr = loc_addr(e->loc);
    uint32_t len = loc_len(e->loc);
    bool tomb = loc_tombstone(e->loc);
    uint64_t max = BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES + (tomb ? 0 : KVFTL_VALUE_MAX_BYTES);
    if (len < BLOB_HEADER_BYTES + 1 || len > max) {
        return refuse(why, why_len, "index page %u slot %u names a blob of %u bytes", p, i, len);
    }
    if (!ctx->blob_inside(ctx->opaque, addr, len)) {
        return refuse(why, why_len,
                      "index page %u slot %u points outside the value log (address %llu, %u bytes)",
                      p, i, (unsigned long long)addr, len);
    }
    return 0;
}

/*
 * The header of index page @p (bytes @mem, local depth @ld) and its first
 * empty slot, in *@empty: the probe runs start after one.
 */
static int page_head_check(const struct index *x, uint32_t p, const uint8_t *mem, uint32_t ld,
                           struct index_page_header *h, uint32_t *empty, char *why, size_t why_len)
{
    memcpy(h, mem, sizeof(*h));
    if (h->magic != INDEX_PAGE_MAGIC || h->page_id != p || h->local_depth != ld ||
        h->count > x->slots - 1) {
        return refuse(why, why_len,
                      "index page %u has a bad header (magic %#x, id %u, local depth %u, %u "
                      "entries)",
                      p, h->magic, h->page_id, h->local_depth, h->count);
    }
    const uint8_t *ents = mem + sizeof(struct index_page_header);
    *empty = UINT32_MAX;
    for (uint32_t i = 0; i < x->slots && *empty == UINT32_MAX; i++) {
        uint64_t loc;
        memcpy(&loc, ents + (size_t)i * sizeof(struct index_entry) + 8, 8);
        *empty = loc ? UINT32_MAX : i;
    }
    if (*empty == UINT32_MAX) {
        return refuse(why, why_len, "index page %u has no empty slot", p);
    }
    return 0;
}

/*
 * The entries of index page @p (bytes @mem) are checked one by one
 * (entry_check()), one blob read back (blob_sample()); their live bytes
 * are added to ctx->valid and the gauges ctx->t.
 */
static int page_check(const struct kv_index *ix, const struct hash_ckpt *c,
                      struct kv_index_ckpt_ctx *ctx, uint32_t p, const uint8_t *mem, char *why,
                      size_t why_len)
{
    const struct index *x = &ix->hash.idx;
    uint32_t ld = c->depth[p];
    struct index_page_header h;
    uint32_t empty, count = 0;
    if (page_head_check(x, p, mem, ld, &h, &empty, why, why_len) != 0) {
        return -1;
    }
    const uint8_t *ents = mem + sizeof(struct index_page_header);
    bool sampled = false;
    uint32_t run_start = 0; /* slots walked since the last empty one */
    for (uint32_t n = 1; n <= x->slots; n++) {
        uint32_t i = (empty + n) % x->slots;
        struct index_entry e;
        memcpy(&e, ents + (size_t)i * sizeof(e), sizeof(e));
        if (!e.loc) {
            run_start = n + 1;
            if (e.hash) {
                return refuse(why, why_len, "index page %u slot %u is empty but holds a hash", p,
                              i);
            }
            continue;
        }
        count++;
        if (entry_check(ix, c, ctx, p, ld, i, n, empty, run_start, &e, why, why_len) != 0 ||
            (!sampled && blob_sample(ix, c, ctx, p, i, &e, why, why_len) != 0)) {
            return -1;
        }
        sampled = true;
        uint32_t s = (uint32_t)(loc_addr(e.loc) / x->sp->nand->geo.stripe_bytes);
        ctx->valid[s] += vlog_live_count(x->vl, ctx->t, e.loc);
    }
    if (count != h.count) {
        return refuse(why, why_len, "index page %u counts %u entries but holds %u", p, h.count,
                      count);
    }
    return 0;
}

/* The index pages: where they are, their checksums, their entries (page_check()). */
static int pages_check(const struct kv_index *ix, const struct hash_ckpt *c,
                       struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len)
{
    const struct index *x = &ix->hash.idx;
    struct nand *nd = x->sp->nand;
    for (uint32_t pg = 0; pg < c->h->count_b; pg++) {
        uint32_t ppn;
        uint64_t sum;
        memcpy(&ppn, c->ppn + 4ull * pg, 4);
        memcpy(&sum, c->sum + 8ull * pg, 8);
        if (!c->seen[pg]) {
            return refuse(why, why_len, "index page %u is not in the directory", pg);
        }
        if (ctx->page_at(ctx->opaque, ppn, pg, why, why_len) != 0) {
            return -1;
        }
        const uint8_t *mem = nand_page_ptr(nd, ppn);
        if (XXH3_64bits(mem, x->page_bytes) != sum) {
            return refuse(why, why_len,
                          "index page %u (NAND page %u) does not match its checksum in the "
                          "checkpoint",
                          pg, ppn);
        }
        if (page_check(ix, c, ctx, pg, mem, why, why_len) != 0) {
            return -1;
        }
        ctx->valid[nand_stripe_of(nd, ppn)] += nd->geo.page_size;
        ctx->index_bytes += nd->geo.page_size;
    }
    return 0;
}

int hash_ckpt_check(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p,
                    struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len)
{
    struct hash_ckpt c = {0};
    hash_ckpt_arrays(&c, h, p);
    c.seen = g_new0(uint8_t, h->count_b);
    c.prefix = g_new(uint32_t, h->count_b);
    int rc = directory_check(&c, why, why_len) == 0 && pages_check(ix, &c, ctx, why, why_len) == 0
                 ? 0
                 : -1;
    g_free(c.seen);
    g_free(c.prefix);
    return rc;
}

void hash_ckpt_install(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p)
{
    struct index *x = &ix->hash.idx;
    struct hash_ckpt c;
    hash_ckpt_arrays(&c, h, p);
    uint32_t gd = h->count_a, np = h->count_b;
    index_cache_drop(x);
    g_free(x->dir);
    x->global_depth = gd;
    x->dir = g_memdup2(c.dir, sizeof(uint32_t) << gd);
    g_free(x->page_ppn);
    g_free(x->page_frame);
    g_free(x->page_depth);
    uint32_t cap = 16;
    while (cap < np) {
        cap *= 2;
    }
    x->page_ppn = g_new(uint32_t, cap);
    x->page_frame = g_new(uint32_t, cap);
    x->page_depth = g_new(uint8_t, cap);
    x->pages_cap = cap;
    x->npages = np;
    memcpy(x->page_ppn, c.ppn, np * sizeof(uint32_t));
    memcpy(x->page_depth, c.depth, np);
    for (uint32_t i = 0; i < np; i++) {
        x->page_frame[i] = UINT32_MAX;
    }
    x->hash_seed = h->hash_seed;
    x->nand_bytes = h->nand_bytes;
}

uint32_t hash_check_pages(const struct kv_index *ix)
{
    return ix->hash.idx.npages;
}

int hash_check_page(struct kv_index *ix, uint32_t p, const struct kv_index_entry **ents,
                    uint32_t *n, uint32_t *ppn, uint32_t *bytes, char *err, size_t err_len)
{
    struct index *x = &ix->hash.idx;
    const uint8_t *mem = index_page_peek(x, p);
    if (!mem) {
        return refuse(err, err_len, "index page %u is neither cached nor in NAND", p);
    }
    const struct index_page_header *h = (const struct index_page_header *)mem;
    const struct index_entry *e = index_page_entries(mem);
    if (h->magic != INDEX_PAGE_MAGIC || h->page_id != p) {
        return refuse(err, err_len, "index page %u has a bad header (magic %#x, id %u)", p,
                      h->magic, h->page_id);
    }
    *n = 0;
    for (uint32_t i = 0; i < x->slots; i++) {
        uint64_t first, last;
        if (!e[i].loc) {
            continue;
        }
        if (index_page_of(x, e[i].hash, &first, &last) != p) {
            return refuse(err, err_len,
                          "index page %u holds hash %#llx that the directory sends elsewhere", p,
                          (unsigned long long)e[i].hash);
        }
        x->scratch[(*n)++] = e[i];
    }
    if (*n != h->count) {
        return refuse(err, err_len, "index page %u counts %u entries but holds %u", p, h->count,
                      *n);
    }
    *ents = (const struct kv_index_entry *)x->scratch;
    *ppn = x->page_ppn[p];
    *bytes = x->page_bytes;
    return 0;
}
