/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvftl_check(): cross-check the index against the value log and the
 * free-space accounting. Reads without touching the clock, the cache or
 * the counters.
 *
 * The walk is resumable (kvftl_check_begin/step/end): a step examines index
 * pages and blobs up to a byte budget and keeps its place as (index page,
 * slot), so a device can run the check of millions of blobs in slices that
 * each hold its main loop for a bounded time. kvftl_check() is the same
 * walk with an unlimited budget.
 */
#include "ftl.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "index.h"
#include "index_cache.h"
#include "refuse.h"
#include "space.h"
#include "value_log.h"

struct kvftl_check_walk {
    uint64_t *valid;         /* valid bytes per stripe the index references */
    uint8_t *blob;           /* one blob's bytes */
    uint32_t blob_cap;
    uint32_t page;           /* next index page to examine */
    uint32_t slot;           /* next slot of that page */
    bool in_page;            /* that page's header has been examined */
    uint32_t page_count;     /* entries counted so far on that page */
    struct live_gauges live;  /* the gauges the index references */
    uint64_t index_bytes;
    uint64_t pages_seen, blobs_seen, bytes_seen;
};

#define BAD(...) return refuse(err, err_len, __VA_ARGS__)

/* Copy @len bytes at @addr (buffered or programmed), no accounting. */
static void raw_read(const struct kvftl *ftl, uint64_t addr, uint32_t len, uint8_t *dst)
{
    memcpy(dst, ftl->nand.data + addr, len);
}

struct kvftl_check_walk *kvftl_check_begin(struct kvftl *ftl)
{
    struct kvftl_check_walk *w = g_new0(struct kvftl_check_walk, 1);
    w->valid = g_new0(uint64_t, ftl->nand.geo.stripes);
    return w;
}

void kvftl_check_end(struct kvftl_check_walk *w)
{
    if (!w) {
        return;
    }
    g_free(w->valid);
    g_free(w->blob);
    g_free(w);
}

void kvftl_check_progress(const struct kvftl_check_walk *w, uint64_t *index_pages, uint64_t *blobs,
                          uint64_t *bytes)
{
    *index_pages = w->pages_seen;
    *blobs = w->blobs_seen;
    *bytes = w->bytes_seen;
}

/* One index entry and its blob. 0, or -1 with a sentence in @err. */
static int check_entry(struct kvftl *ftl, struct kvftl_check_walk *w, uint32_t p,
                       const struct index_entry *e, char *err, size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct index *ix = &ftl->idx;
    uint64_t first, last;

    if (index_page_of(ix, e->hash, &first, &last) != p) {
        BAD("index page %u holds hash %#llx that the directory sends elsewhere", p,
            (unsigned long long)e->hash);
    }
    uint64_t addr = loc_addr(e->loc);
    uint32_t len = loc_len(e->loc);
    uint32_t s = (uint32_t)(addr / geo->stripe_bytes);
    if (addr + len > geo->total_bytes || len < BLOB_HEADER_BYTES + 1 ||
        (ftl->space.stripes[s].state != STRIPE_DATA &&
         ftl->space.stripes[s].state != STRIPE_OPEN_DATA)) {
        BAD("index entry %#llx points outside the value log (address %llu, %u bytes)",
            (unsigned long long)e->hash, (unsigned long long)addr, len);
    }
    if (len > w->blob_cap) {
        w->blob = g_realloc(w->blob, len);
        w->blob_cap = len;
    }
    raw_read(ftl, addr, len, w->blob);
    w->blobs_seen++;
    w->bytes_seen += len;
    struct blob_header bh;
    memcpy(&bh, w->blob, sizeof(bh));
    bool is_tomb = loc_tombstone(e->loc);
    if (bh.type != (is_tomb ? REC_TOMBSTONE : REC_PAIR) ||
        BLOB_HEADER_BYTES + bh.key_bytes + bh.value_bytes != len) {
        BAD("blob at %llu does not match its index entry (type %#x, %u+%u bytes)",
            (unsigned long long)addr, bh.type, bh.key_bytes, bh.value_bytes);
    }
    const uint8_t *key = w->blob + BLOB_HEADER_BYTES;
    if (blob_checksum(bh.type, bh.key_bytes, bh.value_bytes, bh.seq, key, key + bh.key_bytes) !=
        bh.checksum) {
        BAD("blob at %llu fails its checksum", (unsigned long long)addr);
    }
    if (index_hash(ix, key, bh.key_bytes) != e->hash) {
        BAD("blob at %llu has a key whose hash is not its entry's", (unsigned long long)addr);
    }
    w->valid[s] += vlog_live_count(&ftl->vl, &w->live, e->loc);
    return 0;
}

/* The totals, once every index page has been examined. */
static int check_totals(struct kvftl *ftl, struct kvftl_check_walk *w, char *err, size_t err_len)
{
    uint32_t n = ftl->nand.geo.stripes;
    uint32_t free_count = 0;

    for (uint32_t s = 0; s < n; s++) {
        free_count += ftl->space.stripes[s].state == STRIPE_FREE;
        if (w->valid[s] != ftl->space.stripes[s].valid_bytes) {
            BAD("stripe %u accounts %llu valid bytes; the index references %llu", s,
                (unsigned long long)ftl->space.stripes[s].valid_bytes,
                (unsigned long long)w->valid[s]);
        }
    }
    if (free_count != ftl->space.free_stripes) {
        BAD("%u stripes are free but the free count is %u", free_count, ftl->space.free_stripes);
    }
    const struct live_gauges *g = &ftl->vl.live;
    if (w->live.keys != g->keys || w->live.user_bytes != g->user_bytes ||
        w->live.nand_bytes != g->nand_bytes || w->live.tombstone_bytes != g->tombstone_bytes ||
        w->index_bytes != ftl->idx.nand_bytes) {
        BAD("gauges disagree with the index: keys %llu/%llu, user bytes %llu/%llu, nand bytes "
            "%llu/%llu, tombstone bytes %llu/%llu, index bytes %llu/%llu",
            (unsigned long long)g->keys, (unsigned long long)w->live.keys,
            (unsigned long long)g->user_bytes, (unsigned long long)w->live.user_bytes,
            (unsigned long long)g->nand_bytes, (unsigned long long)w->live.nand_bytes,
            (unsigned long long)g->tombstone_bytes, (unsigned long long)w->live.tombstone_bytes,
            (unsigned long long)ftl->idx.nand_bytes, (unsigned long long)w->index_bytes);
    }
    return 0;
}

int kvftl_check_step(struct kvftl *ftl, struct kvftl_check_walk *w, uint64_t max_bytes, char *err,
                     size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct index *ix = &ftl->idx;
    uint64_t spent = 0;

    while (w->page < ix->npages) {
        uint32_t p = w->page;
        const uint8_t *mem = index_page_peek(&ftl->idx, p);
        if (!mem) {
            BAD("index page %u is neither cached nor in NAND", p);
        }
        const struct index_page_header *h = (const struct index_page_header *)mem;
        const struct index_entry *e = index_page_entries(mem);
        if (!w->in_page) {
            /* the page itself: its header and a scan of its slots */
            if (spent && spent + ix->page_bytes > max_bytes) {
                return 1;
            }
            if (h->magic != INDEX_PAGE_MAGIC || h->page_id != p) {
                BAD("index page %u has a bad header (magic %#x, id %u)", p, h->magic, h->page_id);
            }
            spent += ix->page_bytes;
            w->pages_seen++;
            w->bytes_seen += ix->page_bytes;
            w->page_count = 0;
            w->slot = 0;
            w->in_page = true;
        }
        for (; w->slot < ix->slots; w->slot++) {
            if (!e[w->slot].loc) {
                continue;
            }
            uint32_t len = loc_len(e[w->slot].loc);
            if (spent && spent + len > max_bytes) {
                return 1;
            }
            if (check_entry(ftl, w, p, &e[w->slot], err, err_len) != 0) {
                return -1;
            }
            spent += len;
            w->page_count++;
        }
        if (w->page_count != h->count) {
            BAD("index page %u counts %u entries but holds %u", p, h->count, w->page_count);
        }
        if (ix->page_ppn[p] != UINT32_MAX) {
            w->valid[ix->page_ppn[p] / geo->pages_per_stripe] += geo->page_size;
            w->index_bytes += geo->page_size;
        }
        w->page++;
        w->in_page = false;
    }
    return check_totals(ftl, w, err, err_len);
}

int kvftl_check(struct kvftl *ftl, char *err, size_t err_len)
{
    struct kvftl_check_walk *w = kvftl_check_begin(ftl);
    int rc = kvftl_check_step(ftl, w, UINT64_MAX, err, err_len);
    kvftl_check_end(w);
    return rc;
}
