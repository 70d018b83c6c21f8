/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvftl_check(): cross-check the index against the value log and the
 * free-space accounting (nvm: the page map against the unit spare areas,
 * the translation pages and the accounting). Reads without touching the
 * clock, the cache or the counters.
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
#include <xxhash.h>

#include "block_recovery.h"
#include "kv_index.h"
#include "nand.h"
#include "page_map.h"
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
    struct live_gauges live;  /* the gauges the index references */
    uint64_t index_bytes;
    uint64_t pages_seen, blobs_seen, bytes_seen;
    /* nvm: phase 0 reads the unit spare areas, 1 the map, 2 the translation pages */
    uint32_t phase;
    uint64_t *newest; /* [units]: the largest seq of a slot naming the unit */
    uint64_t ppn;     /* next page of phase 0 */
    uint64_t unit;    /* next unit of phase 1 */
    uint32_t tpage;   /* next translation page of phase 2 */
    uint64_t mapped, tpage_bytes;
};

#define BAD(...) return refuse(err, err_len, __VA_ARGS__)

/* Copy @len bytes at @addr (buffered or programmed), no accounting. */
static void raw_read(const struct kvftl *ftl, uint64_t addr, uint32_t len, uint8_t *dst)
{
    nand_copy_out(&ftl->nand, addr, dst, len);
}

struct kvftl_check_walk *kvftl_check_begin(struct kvftl *ftl)
{
    struct kvftl_check_walk *w = g_new0(struct kvftl_check_walk, 1);
    w->valid = g_new0(uint64_t, ftl->nand.geo.stripes);
    if (ftl->nvm) {
        w->newest = g_new0(uint64_t, ftl->pmap.units ? ftl->pmap.units : 1);
    } else {
        uint64_t now = ftl->now_max_ns; /* the walk reads the index pages: nothing may be pending */
        kv_index_settle(&ftl->index, &now);
    }
    return w;
}

void kvftl_check_end(struct kvftl_check_walk *w)
{
    if (!w) {
        return;
    }
    g_free(w->valid);
    g_free(w->newest);
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
static int check_entry(struct kvftl *ftl, struct kvftl_check_walk *w,
                       const struct kv_index_entry *e, char *err, size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
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
    if (kv_index_hash(&ftl->index, key, bh.key_bytes) != e->hash) {
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
        w->index_bytes != kv_index_nand_bytes(&ftl->index)) {
        BAD("gauges disagree with the index: keys %llu/%llu, user bytes %llu/%llu, nand bytes "
            "%llu/%llu, tombstone bytes %llu/%llu, index bytes %llu/%llu",
            (unsigned long long)g->keys, (unsigned long long)w->live.keys,
            (unsigned long long)g->user_bytes, (unsigned long long)w->live.user_bytes,
            (unsigned long long)g->nand_bytes, (unsigned long long)w->live.nand_bytes,
            (unsigned long long)g->tombstone_bytes, (unsigned long long)w->live.tombstone_bytes,
            (unsigned long long)kv_index_nand_bytes(&ftl->index),
            (unsigned long long)w->index_bytes);
    }
    return 0;
}

/*
 * The nvm personality: every mapped unit's slot lies in a data stripe and
 * its unit spare area names the unit with the newest seq of any slot
 * naming it; no slot's seq is after the map's last; each translation page's
 * live copy is an intact copy of its number in the index stream, equal to
 * the map unless DRAM holds it dirty; valid bytes per stripe = mapped
 * units in it x 4096 + live translation pages x page size; the free count
 * and the mapped count agree. Host memory: units x 8 bytes + stripes x 8.
 */
#define NVM_CHECK_UNIT_COST 64u /* budget bytes per mapped unit: one cache line */

static bool nvm_page_holds_slots(const struct kvftl *ftl, uint64_t ppn)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct data_stream *ds = &ftl->space.data;
    uint32_t s = (uint32_t)(ppn / geo->pages_per_stripe);
    uint8_t state = ftl->space.stripes[s].state;
    if (state != STRIPE_DATA && state != STRIPE_OPEN_DATA) {
        return false;
    }
    if (s == ds->stripe) {
        return ppn < ds->base_ppn + ds->open_idx; /* programmed, or in the buffer */
    }
    return ftl->nand.oob[ppn].kind == NAND_PAGE_DATA;
}

/*
 * Phase 0: each page's spare areas; the newest write of each unit in
 * w->newest. Phases 0-2 return 1 when the step's budget (@max_bytes, of
 * which *@spent is used) ends before them, -1 with a sentence, 0 when done.
 */
static int nvm_check_slots(struct kvftl *ftl, struct kvftl_check_walk *w, uint64_t max_bytes,
                           uint64_t *spent, char *err, size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct page_map *pm = &ftl->pmap;
    uint64_t spares_bytes = (uint64_t)geo->unit_spares_per_page * sizeof(struct nand_unit_spare);
    for (; w->phase == 0 && w->ppn < geo->total_pages; w->ppn++) {
        bool holds_slots = nvm_page_holds_slots(ftl, w->ppn);
        uint64_t cost = sizeof(struct nand_oob) + (holds_slots ? spares_bytes : 0);
        if (*spent && *spent + cost > max_bytes) {
            return 1;
        }
        *spent += cost;
        if (!holds_slots) {
            continue;
        }
        const struct nand_unit_spare *us = nand_unit_spares(&ftl->nand, w->ppn);
        for (uint32_t j = 0; j < geo->unit_spares_per_page; j++) {
            uint64_t slot = (w->ppn * geo->page_size >> PAGE_MAP_UNIT_SHIFT) + j;
            if (!us[j].seq) {
                continue;
            }
            if (us[j].unit >= pm->units || us[j].seq > BLOCK_SEQ_LIMIT) {
                continue; /* damage the mount skipped and named (kvftl_mount_note()) */
            }
            if (us[j].seq > pm->write_seq) {
                BAD("slot %llu's spare area holds write %llu, after the map's last (%llu)",
                    (unsigned long long)slot, (unsigned long long)us[j].seq,
                    (unsigned long long)pm->write_seq);
            }
            if (us[j].seq > w->newest[us[j].unit]) {
                w->newest[us[j].unit] = us[j].seq;
            }
        }
    }
    return 0;
}

/* Phase 1: each mapped unit's slot names the unit, as its newest write. */
static int nvm_check_units(struct kvftl *ftl, struct kvftl_check_walk *w, uint64_t max_bytes,
                           uint64_t *spent, char *err, size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct page_map *pm = &ftl->pmap;
    uint64_t slots = geo->total_bytes >> PAGE_MAP_UNIT_SHIFT;
    for (; w->phase == 1 && w->unit < pm->units; w->unit++) {
        uint32_t slot = pm->map[w->unit];
        if (slot == PAGE_MAP_UNMAPPED) {
            continue;
        }
        if (*spent && *spent + NVM_CHECK_UNIT_COST > max_bytes) {
            return 1;
        }
        *spent += NVM_CHECK_UNIT_COST;
        w->blobs_seen++;
        w->bytes_seen += sizeof(struct nand_unit_spare);
        uint64_t addr = (uint64_t)slot << PAGE_MAP_UNIT_SHIFT;
        if (slot >= slots || !nvm_page_holds_slots(ftl, addr >> geo->page_shift)) {
            BAD("unit %llu maps to slot %u, which is not a written slot of a data stripe",
                (unsigned long long)w->unit, slot);
        }
        const struct nand_unit_spare *us = nand_unit_spares(&ftl->nand, addr >> geo->page_shift) +
                                           ((addr & (geo->page_size - 1)) >> PAGE_MAP_UNIT_SHIFT);
        if (us->unit != w->unit || us->seq != w->newest[w->unit]) {
            BAD("unit %llu maps to slot %u, whose spare area names unit %llu written at %llu; "
                "the unit's newest copy was written at %llu",
                (unsigned long long)w->unit, slot, (unsigned long long)us->unit,
                (unsigned long long)us->seq, (unsigned long long)w->newest[w->unit]);
        }
        w->valid[addr / geo->stripe_bytes] += PAGE_MAP_UNIT_BYTES;
        w->mapped++;
    }
    return 0;
}

/* Phase 2: each translation page's live copy, and the map where DRAM holds it clean. */
static int nvm_check_tpages(struct kvftl *ftl, struct kvftl_check_walk *w, uint64_t max_bytes,
                            uint64_t *spent, char *err, size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct page_map *pm = &ftl->pmap;
    for (; w->phase == 2 && w->tpage < pm->tpages; w->tpage++) {
        uint32_t t = w->tpage, ppn = pm->tpage_ppn[t];
        uint64_t first = (uint64_t)t * pm->per;
        uint64_t n = pm->units - first < pm->per ? pm->units - first : pm->per;
        bool dirty = pm->tstate[t] & TPAGE_DIRTY;
        if (*spent && *spent + geo->page_size > max_bytes) {
            return 1;
        }
        *spent += geo->page_size;
        w->pages_seen++;
        w->bytes_seen += geo->page_size;
        if (ppn == PAGE_MAP_NO_PAGE) {
            for (uint64_t i = 0; !dirty && i < n; i++) {
                if (pm->map[first + i] != PAGE_MAP_UNMAPPED) {
                    BAD("translation page %u was never programmed and is not dirty, but unit "
                        "%llu is mapped",
                        t, (unsigned long long)(first + i));
                }
            }
            continue;
        }
        if (ppn >= geo->total_pages) {
            BAD("translation page %u is at NAND page %u, past the last page (%llu)", t, ppn,
                (unsigned long long)geo->total_pages - 1);
        }
        uint32_t s = ppn / geo->pages_per_stripe;
        const struct nand_oob *oob = &ftl->nand.oob[ppn];
        uint8_t state = ftl->space.stripes[s].state;
        if ((state != STRIPE_INDEX && state != STRIPE_OPEN_INDEX) || oob->kind != NAND_PAGE_INDEX ||
            oob->tag != t) {
            BAD("translation page %u is at NAND page %u, which does not hold it (kind %#x, tag %u)",
                t, ppn, oob->kind, oob->tag);
        }
        const uint8_t *mem = nand_page_ptr(&ftl->nand, ppn);
        struct tpage_header h;
        memcpy(&h, mem, sizeof(h));
        const uint32_t *e = (const uint32_t *)(mem + sizeof(h));
        if (h.magic != TPAGE_MAGIC || h.tpage != t || h.entries != pm->per ||
            h.write_seq > pm->write_seq ||
            XXH3_64bits(e, (size_t)pm->per * sizeof(uint32_t)) != h.checksum) {
            BAD("translation page %u's copy at NAND page %u is damaged (magic %#x, number %u, "
                "%u entries, write %llu)",
                t, ppn, h.magic, h.tpage, h.entries, (unsigned long long)h.write_seq);
        }
        for (uint64_t i = 0; !dirty && i < n; i++) {
            if (e[i] != pm->map[first + i]) {
                BAD("translation page %u is clean but its copy maps unit %llu to %u; the map "
                    "says %u",
                    t, (unsigned long long)(first + i), e[i], pm->map[first + i]);
            }
        }
        w->valid[s] += geo->page_size;
        w->tpage_bytes += geo->page_size;
    }
    return 0;
}

/* Phase 3: valid bytes per stripe, the free count, the mapped count. */
static int nvm_check_totals(struct kvftl *ftl, struct kvftl_check_walk *w, char *err,
                            size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct page_map *pm = &ftl->pmap;
    uint32_t free_count = 0;
    for (uint32_t s = 0; s < geo->stripes; s++) {
        free_count += ftl->space.stripes[s].state == STRIPE_FREE;
        if (w->valid[s] != ftl->space.stripes[s].valid_bytes) {
            BAD("stripe %u accounts %llu valid bytes; the map references %llu", s,
                (unsigned long long)ftl->space.stripes[s].valid_bytes,
                (unsigned long long)w->valid[s]);
        }
    }
    if (free_count != ftl->space.free_stripes) {
        BAD("%u stripes are free but the free count is %u", free_count, ftl->space.free_stripes);
    }
    if (w->mapped != pm->mapped || w->tpage_bytes != pm->nand_bytes) {
        BAD("the map counts %llu mapped units and %llu translation page bytes; it holds %llu and "
            "%llu",
            (unsigned long long)pm->mapped, (unsigned long long)pm->nand_bytes,
            (unsigned long long)w->mapped, (unsigned long long)w->tpage_bytes);
    }
    return 0;
}

static int nvm_check_step(struct kvftl *ftl, struct kvftl_check_walk *w, uint64_t max_bytes,
                          char *err, size_t err_len)
{
    uint64_t spent = 0;
    /*
     * A step's budget counts the memory it reads: each page's spare area
     * (16 bytes) and, for a page of slots, its unit spare areas; a cache
     * line (64 bytes) per mapped unit, whose slot's spare area is a random
     * access; whole translation pages (C4h's 256 KiB: under 0.1 ms of CPU
     * a slice, docs/kvftl.md).
     */
    int rc = nvm_check_slots(ftl, w, max_bytes, &spent, err, err_len);
    if (rc != 0) {
        return rc;
    }
    w->phase = w->phase ? w->phase : 1;
    rc = nvm_check_units(ftl, w, max_bytes, &spent, err, err_len);
    if (rc != 0) {
        return rc;
    }
    w->phase = w->phase > 2 ? w->phase : 2;
    rc = nvm_check_tpages(ftl, w, max_bytes, &spent, err, err_len);
    if (rc != 0) {
        return rc;
    }
    w->phase = 3;
    return nvm_check_totals(ftl, w, err, err_len);
}

int kvftl_check_step(struct kvftl *ftl, struct kvftl_check_walk *w, uint64_t max_bytes, char *err,
                     size_t err_len)
{
    if (ftl->nvm) {
        return nvm_check_step(ftl, w, max_bytes, err, err_len);
    }
    const struct nand_geometry *geo = &ftl->nand.geo;
    uint64_t spent = 0;

    while (w->page < kv_index_check_pages(&ftl->index)) {
        uint32_t p = w->page, n, ppn, bytes;
        const struct kv_index_entry *e;
        /* the page's header and structure, and its current entries (the design's) */
        if (kv_index_check_page(&ftl->index, p, &e, &n, &ppn, &bytes, err, err_len) != 0) {
            return -1;
        }
        if (!w->in_page) {
            if (spent && spent + bytes > max_bytes) {
                return 1;
            }
            spent += bytes;
            w->pages_seen++;
            w->bytes_seen += bytes;
            w->slot = 0;
            w->in_page = true;
        }
        for (; w->slot < n; w->slot++) {
            uint32_t len = loc_len(e[w->slot].loc);
            if (spent && spent + len > max_bytes) {
                return 1;
            }
            if (check_entry(ftl, w, &e[w->slot], err, err_len) != 0) {
                return -1;
            }
            spent += len;
        }
        if (ppn != UINT32_MAX) {
            w->valid[ppn / geo->pages_per_stripe] += geo->page_size;
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
