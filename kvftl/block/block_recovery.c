/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Durability of the nvm personality: checkpoint, clean mount, crash mount,
 * unmap log (block_recovery.h).
 *
 * What is on flash: data stripes of 4 KiB slots, each with a unit spare
 * area {unit, seq} written with the slot (seq: the write sequence number,
 * 1.., given once per written slot, GC relocations included); translation
 * pages (page_map.h) in index stripes, each a copy of the map's entries for
 * its units at the write_seq in its header. A unit's state is its
 * translation page's newest copy, unless a slot naming the unit with a
 * larger seq exists: the newest such slot is the unit's copy ("replay").
 * The unmap log (nand.h) then unmaps every logged unit whose copy is not
 * newer than the log entry.
 */
#include "block_recovery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <xxhash.h>

#include "checkpoint.h"
#include "ftl.h"
#include "gc.h"
#include "nand.h"
#include "page_map.h"
#include "recovery.h"
#include "refuse.h"
#include "space.h"

#define UNIT PAGE_MAP_UNIT_BYTES

uint64_t block_checkpoint_length(uint32_t stripes, uint32_t tpages)
{
    return sizeof(struct block_checkpoint_head) + (uint64_t)stripes * sizeof(struct stripe_info) +
           (uint64_t)tpages * sizeof(uint32_t);
}

/* The unit spare area of device slot @slot (slot < total slots). */
static const struct nand_unit_spare *slot_spare(const struct nand *n, uint64_t slot)
{
    uint64_t addr = slot << PAGE_MAP_UNIT_SHIFT;
    return nand_unit_spares(n, addr >> n->geo.page_shift) +
           ((addr & (n->geo.page_size - 1)) >> PAGE_MAP_UNIT_SHIFT);
}

static uint64_t total_slots(const struct nand_geometry *geo)
{
    return geo->total_bytes >> PAGE_MAP_UNIT_SHIFT;
}

/* Is @p a translation page of number @t with intact header and entries? NULL, or what is wrong. */
static const char *tpage_bad(const struct page_map *pm, const uint8_t *p, uint32_t t,
                             struct tpage_header *h)
{
    memcpy(h, p, sizeof(*h));
    if (h->magic != TPAGE_MAGIC) {
        return "bad magic";
    }
    if (h->tpage != t) {
        return "its header names another translation page";
    }
    if (h->entries != pm->per || h->reserved) {
        return "bad entry count";
    }
    if (h->write_seq > BLOCK_SEQ_LIMIT) {
        return "a write sequence number from the future";
    }
    if (XXH3_64bits(p + sizeof(*h), (size_t)pm->per * sizeof(uint32_t)) != h->checksum) {
        return "its entries fail their checksum";
    }
    return NULL;
}

static uint32_t tpage_entry(const uint8_t *p, uint32_t i)
{
    uint32_t e;
    memcpy(&e, p + sizeof(struct tpage_header) + (size_t)i * sizeof(uint32_t), sizeof(e));
    return e;
}

/* ---- the unmap log ---- */

static uint64_t unmap_check(const struct nand_unmap_entry *e, uint32_t i)
{
    uint64_t f[3] = {e->first_unit, e->units, e->seq};
    return XXH3_64bits_withSeed(f, sizeof(f), i);
}

void block_recovery_log_clear(struct kvftl *ftl)
{
    struct nand_unmap_log *log = ftl->nand.unmap_log;
    if (log && log->used) {
        log->used = 0;
    }
}

int block_recovery_log_unmap(struct kvftl *ftl, uint64_t first, uint64_t units, uint64_t *now_ns)
{
    struct nand_unmap_log *log = ftl->nand.unmap_log;
    if (!ftl->cfg.plp || !log || !units) {
        return 0;
    }
    if (log->magic != NAND_UNMAP_LOG_MAGIC || log->used > NAND_UNMAP_LOG_ENTRIES) {
        log->used = 0;
        log->magic = NAND_UNMAP_LOG_MAGIC;
    }
    if (log->used == NAND_UNMAP_LOG_ENTRIES) {
        /* full: the translation pages take over what the log held */
        if (page_map_write_back(&ftl->pmap, now_ns) != 0) {
            return -1;
        }
        log->used = 0;
    }
    uint32_t i = log->used;
    struct nand_unmap_entry e = {.first_unit = first, .units = units, .seq = ftl->pmap.write_seq};
    e.check = unmap_check(&e, i);
    log->e[i] = e;
    /* the entry first, then the count: a process killed between leaves the entry unread */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    log->used = i + 1;
    return 0;
}

/* ---- GC's erase without PLP ---- */

int block_recovery_before_erase(struct kvftl *ftl, uint32_t victim, uint64_t *now_ns)
{
    if (ftl->cfg.plp) {
        return 0; /* the unmap log keeps every completed unmap durable */
    }
    const struct nand_geometry *geo = &ftl->nand.geo;
    struct page_map *pm = &ftl->pmap;
    uint32_t per_page = geo->unit_spares_per_page;
    uint64_t base_ppn = (uint64_t)victim * geo->pages_per_stripe;
    for (uint32_t i = 0; i < geo->pages_per_stripe; i++) {
        uint64_t ppn = base_ppn + i;
        if (!nand_page_programmed(&ftl->nand, ppn)) {
            continue;
        }
        const struct nand_unit_spare *us = nand_unit_spares(&ftl->nand, ppn);
        for (uint32_t j = 0; j < per_page; j++) {
            if (!us[j].seq || us[j].unit >= pm->units) {
                continue;
            }
            /*
             * A slot of a unit now unmapped whose translation page is
             * dirty: its unmap lives only in DRAM, and this slot may be
             * what supersedes an older copy at a crash mount. Program the
             * map first, so the mount never needs this slot.
             */
            if (pm->map[us[j].unit] == PAGE_MAP_UNMAPPED &&
                (pm->tstate[us[j].unit / pm->per] & TPAGE_DIRTY)) {
                return page_map_write_back(pm, now_ns);
            }
        }
    }
    return 0;
}

/* ---- checkpoint (orderly close) ---- */

GByteArray *block_recovery_checkpoint(struct kvftl *ftl)
{
    uint64_t now = ftl->now_max_ns;
    if (ftl->recovery_owner.flush(ftl, &now) != 0) {
        return NULL;
    }
    if (now > ftl->now_max_ns) {
        ftl->now_max_ns = now;
    }
    block_recovery_log_clear(ftl);
    const struct page_map *pm = &ftl->pmap;
    const struct space *sp = &ftl->space;
    struct block_checkpoint_head ch = {
        .magic = BLOCK_CHECKPOINT_MAGIC,
        .layout = BLOCK_CHECKPOINT_LAYOUT,
        .stripes = ftl->nand.geo.stripes,
        .units = pm->units,
        .tpages = pm->tpages,
        .per = pm->per,
        .write_seq = pm->write_seq,
        .stripe_seq = sp->stripe_seq,
        .mapped = pm->mapped,
        .tpage_bytes = pm->nand_bytes,
        .alloc_cursor = sp->alloc_cursor,
        .data_stripe = sp->data.stripe,
        .data_wp = sp->data.stripe == UINT32_MAX ? 0 : sp->data.wp,
        .index_stripe = sp->index.stripe,
        .index_idx = sp->index.idx,
    };
    GByteArray *b = g_byte_array_new();
    g_byte_array_append(b, (const guint8 *)&ch, sizeof(ch));
    g_byte_array_append(b, (const guint8 *)sp->stripes, ch.stripes * sizeof(struct stripe_info));
    g_byte_array_append(b, (const guint8 *)pm->tpage_ppn, pm->tpages * sizeof(uint32_t));
    return b;
}

/* ---- clean mount ---- */

/*
 * An nvm checkpoint being checked (block_recovery_load()): its head, and
 * what the checks derive. Each step returns 0, or -1 with a sentence
 * fragment in (why, why_len): the first problem found.
 */
struct block_checkpoint {
    struct block_checkpoint_head ch;
    struct checkpoint_streams cs;
    struct stripe_info *st; /* the stripe table */
    const uint8_t *ppn;     /* tpage_ppn[tpages], after it */
    uint64_t *newest;       /* [units]: the newest slot's seq naming each unit */
    uint32_t *map;          /* [units]: the map the translation pages hold */
    uint64_t *valid;        /* [stripes]: the valid bytes the map references */
    uint64_t mapped, tbytes;
};

/*
 * Is device slot @slot the stored copy of @unit written no later than @seq,
 * in a stripe of @st that holds data (before @wp_page in the open one)?
 * Its seq in *@got.
 */
static bool slot_valid(const struct kvftl *ftl, const struct stripe_info *st, uint32_t data_stripe,
                       uint64_t wp, uint64_t slot, uint64_t unit, uint64_t seq, uint64_t *got)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    if (slot >= total_slots(geo)) {
        return false;
    }
    uint64_t addr = slot << PAGE_MAP_UNIT_SHIFT;
    uint32_t s = (uint32_t)(addr / geo->stripe_bytes);
    uint64_t ppn = addr >> geo->page_shift;
    if (st[s].state != STRIPE_DATA && st[s].state != STRIPE_OPEN_DATA) {
        return false;
    }
    if (s == data_stripe && addr % geo->stripe_bytes >= wp) {
        return false;
    }
    if (ftl->nand.oob[ppn].kind != NAND_PAGE_DATA) {
        return false;
    }
    const struct nand_unit_spare *sp = slot_spare(&ftl->nand, slot);
    if (!sp->seq || sp->unit != unit || sp->seq > seq) {
        return false;
    }
    *got = sp->seq;
    return true;
}

/* The head's identity and counts: the device's, and the checkpoint's length @len. */
static int head_check(const struct kvftl *ftl, struct block_checkpoint *c, const uint8_t *b,
                      uint64_t len, char *why, size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct page_map *pm = &ftl->pmap;
    const struct block_checkpoint_head *ch = &c->ch;
    if (len < sizeof(c->ch)) {
        return refuse(why, why_len, "the checkpoint is %llu bytes, shorter than its %zu-byte head",
                      (unsigned long long)len, sizeof(c->ch));
    }
    memcpy(&c->ch, b, sizeof(c->ch));
    if (ch->magic != BLOCK_CHECKPOINT_MAGIC) {
        return refuse(why, why_len,
                      "the checkpoint has a bad magic number (it is not an nvm checkpoint)");
    }
    if (ch->layout != BLOCK_CHECKPOINT_LAYOUT) {
        return refuse(why, why_len,
                      "the checkpoint was written by another kvftl (nvm layout %u; this one reads "
                      "layout %u)",
                      ch->layout, BLOCK_CHECKPOINT_LAYOUT);
    }
    if (ch->stripes != geo->stripes || ch->units != pm->units || ch->tpages != pm->tpages ||
        ch->per != pm->per) {
        return refuse(why, why_len,
                      "it describes %u stripes, %llu units and %u translation pages of %u "
                      "entries; the device has %u, %llu, %u and %u",
                      ch->stripes, (unsigned long long)ch->units, ch->tpages, ch->per, geo->stripes,
                      (unsigned long long)pm->units, pm->tpages, pm->per);
    }
    uint64_t want = block_checkpoint_length(ch->stripes, ch->tpages);
    if (len != want) {
        return refuse(why, why_len, "the checkpoint is %llu bytes; its counts make %llu",
                      (unsigned long long)len, (unsigned long long)want);
    }
    return 0;
}

/* The write sequence number, the open streams, the cursor, and an empty unmap log. */
static int streams_check(const struct kvftl *ftl, struct block_checkpoint *c, char *why,
                         size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct block_checkpoint_head *ch = &c->ch;
    if (ch->write_seq > BLOCK_SEQ_LIMIT) {
        return refuse(why, why_len,
                      "its write sequence number %llu is from the future (above %llu)",
                      (unsigned long long)ch->write_seq, (unsigned long long)BLOCK_SEQ_LIMIT);
    }
    if (ch->data_stripe != UINT32_MAX &&
        (ch->data_stripe >= geo->stripes || ch->data_wp % geo->page_size ||
         ch->data_wp >= geo->stripe_bytes)) {
        return refuse(why, why_len,
                      "the open data stripe %u with write pointer %llu is not a stripe with a page "
                      "boundary inside it",
                      ch->data_stripe, (unsigned long long)ch->data_wp);
    }
    if (ch->index_stripe != UINT32_MAX &&
        (ch->index_stripe >= geo->stripes || ch->index_idx > geo->pages_per_stripe)) {
        return refuse(why, why_len,
                      "the index stream's stripe %u and next page %u are not in the geometry",
                      ch->index_stripe, ch->index_idx);
    }
    if (ch->alloc_cursor >= geo->stripes) {
        return refuse(why, why_len, "the allocation cursor is %u; it must be below %u",
                      ch->alloc_cursor, geo->stripes);
    }
    const struct nand_unmap_log *log = ftl->nand.unmap_log;
    if (log->magic == NAND_UNMAP_LOG_MAGIC && log->used) {
        return refuse(why, why_len,
                      "the unmap log holds %u entries, which an orderly close empties", log->used);
    }
    c->cs = (struct checkpoint_streams){
        .data_stripe = ch->data_stripe,
        .data_wp = ch->data_wp,
        .index_stripe = ch->index_stripe,
        .index_idx = ch->index_idx,
        .stripe_seq = ch->stripe_seq,
    };
    return 0;
}

/*
 * Every written slot of the data stripes: a unit of the namespace and a
 * write not after the checkpoint's last; the newest slot of each unit in
 * c->newest (no mapped unit may have a newer slot than its mapped one: a
 * later crash mount would take that one for the unit's newest copy). Host
 * memory reads only.
 */
static int slots_check(const struct kvftl *ftl, struct block_checkpoint *c, char *why,
                       size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct page_map *pm = &ftl->pmap;
    c->newest = g_new0(uint64_t, pm->units ? pm->units : 1);
    for (uint64_t ppn = 0; ppn < geo->total_pages; ppn++) {
        uint8_t state = c->st[ppn / geo->pages_per_stripe].state;
        if ((state != STRIPE_DATA && state != STRIPE_OPEN_DATA) ||
            ftl->nand.oob[ppn].kind == NAND_PAGE_ERASED) {
            continue;
        }
        const struct nand_unit_spare *us = nand_unit_spares(&ftl->nand, ppn);
        for (uint32_t j = 0; j < geo->unit_spares_per_page; j++) {
            if (!us[j].seq) {
                continue;
            }
            if (us[j].unit >= pm->units || us[j].seq > c->ch.write_seq) {
                return refuse(
                    why, why_len,
                    "slot %llu's spare area names unit %llu written at %llu; the namespace has "
                    "%llu units and the last write was %llu",
                    (unsigned long long)((ppn * geo->page_size >> PAGE_MAP_UNIT_SHIFT) + j),
                    (unsigned long long)us[j].unit, (unsigned long long)us[j].seq,
                    (unsigned long long)pm->units, (unsigned long long)c->ch.write_seq);
            }
            uint64_t *n = &c->newest[us[j].unit];
            *n = us[j].seq > *n ? us[j].seq : *n;
        }
    }
    return 0;
}

/*
 * The entries of translation page @t (bytes @mem, header @h) for units
 * [@first, @first + @n): each unit's slot holds it, written no later than
 * the page and as its newest slot; the entries past the namespace are
 * unmapped. The map, valid bytes and count go to @c.
 */
static int tpage_entries_check(const struct kvftl *ftl, struct block_checkpoint *c, uint32_t t,
                               const uint8_t *mem, const struct tpage_header *h, uint64_t first,
                               uint64_t n, char *why, size_t why_len)
{
    const struct page_map *pm = &ftl->pmap;
    for (uint32_t i = 0; i < pm->per; i++) {
        uint32_t e = tpage_entry(mem, i);
        uint64_t u = first + i;
        if (i >= n) {
            if (e != PAGE_MAP_UNMAPPED) {
                return refuse(why, why_len,
                              "translation page %u maps unit %llu, past the namespace (%llu units)",
                              t, (unsigned long long)u, (unsigned long long)pm->units);
            }
            continue;
        }
        c->map[u] = e;
        if (e == PAGE_MAP_UNMAPPED) {
            continue;
        }
        uint64_t got;
        if (!slot_valid(ftl, c->st, c->ch.data_stripe, c->ch.data_wp, e, u, h->write_seq, &got)) {
            return refuse(why, why_len,
                          "translation page %u maps unit %llu to slot %u, which does not hold it",
                          t, (unsigned long long)u, e);
        }
        if (got != c->newest[u]) {
            return refuse(why, why_len,
                          "unit %llu maps to slot %u written at %llu, but a slot written at %llu "
                          "names it",
                          (unsigned long long)u, e, (unsigned long long)got,
                          (unsigned long long)c->newest[u]);
        }
        c->valid[((uint64_t)e << PAGE_MAP_UNIT_SHIFT) / ftl->nand.geo.stripe_bytes] += UNIT;
        c->mapped++;
    }
    return 0;
}

/* Translation page @t's live copy: where it is, its header and checksum, its entries. */
static int tpage_check(const struct kvftl *ftl, struct block_checkpoint *c, uint32_t t, char *why,
                       size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct page_map *pm = &ftl->pmap;
    uint32_t ppn;
    memcpy(&ppn, c->ppn + 4ull * t, 4);
    uint64_t first = (uint64_t)t * pm->per;
    uint64_t n = pm->units - first < pm->per ? pm->units - first : pm->per;
    if (ppn == PAGE_MAP_NO_PAGE) {
        for (uint64_t i = 0; i < n; i++) {
            c->map[first + i] = PAGE_MAP_UNMAPPED;
        }
        return 0;
    }
    enum index_page_at at = checkpoint_index_page_at(ftl, c->st, c->ch.index_idx, ppn, t);
    if (at == INDEX_PAGE_PAST_END) {
        return refuse(why, why_len,
                      "translation page %u is at NAND page %u, past the last page (%llu)", t, ppn,
                      (unsigned long long)geo->total_pages - 1);
    }
    if (at == INDEX_PAGE_NOT_HELD) {
        return refuse(why, why_len,
                      "translation page %u is at NAND page %u, which does not hold it (spare area "
                      "kind %#x, tag %u)",
                      t, ppn, ftl->nand.oob[ppn].kind, ftl->nand.oob[ppn].tag);
    }
    const uint8_t *mem = nand_page_ptr(&ftl->nand, ppn);
    struct tpage_header h;
    const char *bad = tpage_bad(pm, mem, t, &h);
    if (bad) {
        return refuse(why, why_len, "translation page %u (NAND page %u): %s", t, ppn, bad);
    }
    if (h.write_seq > c->ch.write_seq) {
        return refuse(why, why_len,
                      "translation page %u reflects write %llu, after the checkpoint's last (%llu)",
                      t, (unsigned long long)h.write_seq, (unsigned long long)c->ch.write_seq);
    }
    if (tpage_entries_check(ftl, c, t, mem, &h, first, n, why, why_len) != 0) {
        return -1;
    }
    c->valid[nand_stripe_of(&ftl->nand, ppn)] += geo->page_size;
    c->tbytes += geo->page_size;
    return 0;
}

/* Every translation page (tpage_check()), then the accounting the map implies. */
static int map_check(const struct kvftl *ftl, struct block_checkpoint *c, char *why, size_t why_len)
{
    const struct page_map *pm = &ftl->pmap;
    c->valid = g_new0(uint64_t, ftl->nand.geo.stripes);
    c->map = g_new(uint32_t, pm->units ? pm->units : 1);
    for (uint32_t t = 0; t < c->ch.tpages; t++) {
        if (tpage_check(ftl, c, t, why, why_len) != 0) {
            return -1;
        }
    }
    if (checkpoint_valid_match(ftl, c->st, c->valid, "the map", why, why_len) != 0) {
        return -1;
    }
    if (c->mapped != c->ch.mapped || c->tbytes != c->ch.tpage_bytes) {
        return refuse(why, why_len,
                      "the checkpoint counts %llu mapped units and %llu translation page bytes; "
                      "the map holds %llu and %llu",
                      (unsigned long long)c->ch.mapped, (unsigned long long)c->ch.tpage_bytes,
                      (unsigned long long)c->mapped, (unsigned long long)c->tbytes);
    }
    return 0;
}

/* All checked: the checkpoint becomes the space's state and the page map. */
static void checkpoint_install(struct kvftl *ftl, const struct block_checkpoint *c)
{
    struct space *sp = &ftl->space;
    struct page_map *pm = &ftl->pmap;
    stream_forget(sp);
    checkpoint_install_space(ftl, c->st, &c->cs, c->ch.alloc_cursor);
    sp->index.idx = c->ch.index_stripe == UINT32_MAX ? 0 : c->ch.index_idx;
    memcpy(pm->map, c->map, pm->units * sizeof(uint32_t));
    memcpy(pm->tpage_ppn, c->ppn, pm->tpages * sizeof(uint32_t));
    pm->mapped = c->mapped;
    pm->nand_bytes = c->tbytes;
    pm->write_seq = c->ch.write_seq;
    /* DRAM holds no translation page yet: a lookup's miss reads it (DFTL) */
    page_map_drop_cache(pm);
}

int block_recovery_load(struct kvftl *ftl, const uint8_t *b, uint64_t len, char *why,
                        size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    struct block_checkpoint c = {0};
    int rc = -1;
    if (head_check(ftl, &c, b, len, why, why_len) == 0 &&
        streams_check(ftl, &c, why, why_len) == 0) {
        /* the stripe table, and the erased pages later programs need */
        c.st = g_new(struct stripe_info, geo->stripes);
        c.ppn = b + sizeof(c.ch) + (uint64_t)geo->stripes * sizeof(struct stripe_info);
        if (checkpoint_stripes_parse(ftl, b + sizeof(c.ch), &c.cs, c.st, why, why_len) == 0 &&
            slots_check(ftl, &c, why, why_len) == 0 && map_check(ftl, &c, why, why_len) == 0) {
            checkpoint_install(ftl, &c);
            rc = 0;
        }
    }
    g_free(c.st);
    g_free(c.valid);
    g_free(c.newest);
    g_free(c.map);
    return rc;
}

/* ---- crash mount ---- */

/* One intact copy of a translation page found in an index stripe. */
struct tpage_copy {
    uint32_t tpage;
    uint32_t ppn;
    uint64_t seq;        /* the write_seq it reflects */
    uint64_t stripe_seq; /* when its stripe was opened: the later of two equal copies wins */
};

static int copy_cmp(const void *a, const void *b)
{
    const struct tpage_copy *x = a, *y = b;
    if (x->tpage != y->tpage) {
        return x->tpage < y->tpage ? -1 : 1;
    }
    if (x->seq != y->seq) {
        return x->seq > y->seq ? -1 : 1; /* newest first */
    }
    if (x->stripe_seq != y->stripe_seq) {
        return x->stripe_seq > y->stripe_seq ? -1 : 1;
    }
    return x->ppn > y->ppn ? -1 : x->ppn < y->ppn;
}

/*
 * Pages the page buffer held when the power went or the process died: with
 * PLP their marks (BUFD) make them programmed, as the capacitor dump would
 * have; without it they never reached NAND. The unit spare areas of pages
 * that are not programmed are cleared either way (a killed process without
 * PLP leaves them written but unmarked). Returns, per stripe in @dirty,
 * whether such leftovers were found (the stripe needs an erase before use).
 */
static void resolve_buffered(struct kvftl *ftl, bool *dirty)
{
    struct nand *n = &ftl->nand;
    const struct nand_geometry *geo = &n->geo;
    for (uint64_t ppn = 0; ppn < geo->total_pages; ppn++) {
        struct nand_oob *o = &n->oob[ppn];
        if (o->kind == NAND_PAGE_BUFFERED) {
            o->kind = ftl->cfg.plp ? NAND_PAGE_DATA : NAND_PAGE_ERASED;
            dirty[ppn / geo->pages_per_stripe] = true;
        }
        if (o->kind != NAND_PAGE_ERASED) {
            continue;
        }
        struct nand_unit_spare *us = nand_unit_spares(n, ppn);
        for (uint32_t j = 0; j < geo->unit_spares_per_page; j++) {
            if (us[j].seq || us[j].unit) {
                memset(us, 0, (size_t)geo->unit_spares_per_page * sizeof(*us));
                dirty[ppn / geo->pages_per_stripe] = true;
                break;
            }
        }
    }
}

/*
 * The last page of stripe @s that is programmed, if every page after it is
 * erased (spare area and unit spare areas) and it is not the stripe's last
 * page: the stream that wrote the stripe can go on after it. -1 otherwise.
 */
static int64_t resume_point(const struct nand *n, uint32_t s)
{
    const struct nand_geometry *geo = &n->geo;
    uint64_t base = (uint64_t)s * geo->pages_per_stripe;
    int64_t last = -1;
    for (uint32_t i = 0; i < geo->pages_per_stripe; i++) {
        last = nand_page_programmed(n, base + i) ? i : last;
    }
    if (last < 0 || last + 1 >= (int64_t)geo->pages_per_stripe ||
        checkpoint_first_used_page(n, s, (uint32_t)last + 1) >= 0) {
        return -1;
    }
    return last;
}

/* Reopen the data and the index stream in their newest stripes (block_recovery_scan()). */
static void resume_streams(struct kvftl *ftl)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    struct space *sp = &ftl->space;
    uint32_t newest[2] = {UINT32_MAX, UINT32_MAX}; /* data, index */
    for (uint32_t s = 0; s < geo->stripes; s++) {
        uint8_t st = sp->stripes[s].state;
        int k = st == STRIPE_DATA ? 0 : st == STRIPE_INDEX ? 1 : -1;
        if (k >= 0 && (newest[k] == UINT32_MAX ||
                       sp->stripes[s].open_seq > sp->stripes[newest[k]].open_seq)) {
            newest[k] = s;
        }
    }
    for (int k = 0; k < 2; k++) {
        uint32_t s = newest[k];
        int64_t last = s == UINT32_MAX ? -1 : resume_point(&ftl->nand, s);
        if (last < 0) {
            continue;
        }
        uint32_t next = (uint32_t)last + 1;
        if (k == 0) {
            struct data_stream *ds = &sp->data;
            sp->stripes[s].state = STRIPE_OPEN_DATA;
            ds->stripe = s;
            ds->base_ppn = (uint64_t)s * geo->pages_per_stripe;
            ds->wp = ds->frontier = (uint64_t)next * geo->page_size;
            ds->prog_idx = ds->open_idx = next;
        } else {
            sp->stripes[s].state = STRIPE_OPEN_INDEX;
            sp->index.stripe = s;
            sp->index.idx = next;
        }
    }
}

/* The boundaries of the unmap log's ranges, sorted (replay_unmaps()). */
static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * Apply the unmap log to the rebuilt map (@nslot, @nseq per unit): each
 * intact entry unmaps its units whose copy is not newer than the entry.
 * Only the largest seq of the entries covering a unit matters, so the
 * ranges are cut at their boundaries (at most 2 per entry) and each piece
 * is walked once with the largest seq covering it: units + entries^2
 * steps at most, whatever the (hostile) log says.
 */
static void replay_unmaps(struct kvftl *ftl, uint32_t *nslot, uint64_t *nseq, uint8_t *changed,
                          uint64_t *max_seq)
{
    const struct nand_unmap_log *log = ftl->nand.unmap_log;
    const struct page_map *pm = &ftl->pmap;
    struct recovery_report *r = &ftl->mount;
    if (log->magic != NAND_UNMAP_LOG_MAGIC) {
        return;
    }
    uint32_t used = log->used <= NAND_UNMAP_LOG_ENTRIES ? log->used : NAND_UNMAP_LOG_ENTRIES;
    if (log->used > NAND_UNMAP_LOG_ENTRIES) {
        r->bad_unmaps++;
    }
    struct nand_unmap_entry *ok = g_new(struct nand_unmap_entry, used ? used : 1);
    uint64_t *cut = g_new(uint64_t, 2 * (size_t)(used ? used : 1));
    uint32_t n = 0;
    for (uint32_t i = 0; i < used; i++) {
        struct nand_unmap_entry e = log->e[i];
        if (e.check != unmap_check(&e, i) || e.units == 0 || e.first_unit >= pm->units ||
            e.units > pm->units - e.first_unit || e.seq > BLOCK_SEQ_LIMIT) {
            r->bad_unmaps++;
            continue;
        }
        *max_seq = e.seq > *max_seq ? e.seq : *max_seq;
        cut[2 * n] = e.first_unit;
        cut[2 * n + 1] = e.first_unit + e.units;
        ok[n++] = e;
    }
    qsort(cut, 2 * (size_t)n, sizeof(*cut), u64_cmp);
    for (uint32_t k = 0; k + 1 < 2 * n; k++) {
        uint64_t from = cut[k], to = cut[k + 1];
        bool covered = false;
        uint64_t seq = 0;
        for (uint32_t i = 0; i < n && from < to; i++) {
            if (ok[i].first_unit <= from && to <= ok[i].first_unit + ok[i].units) {
                seq = !covered || ok[i].seq > seq ? ok[i].seq : seq;
                covered = true;
            }
        }
        for (uint64_t u = from; covered && u < to; u++) {
            if (nslot[u] != PAGE_MAP_UNMAPPED && nseq[u] <= seq) {
                nslot[u] = PAGE_MAP_UNMAPPED;
                nseq[u] = 0;
                changed[u / pm->per] = 1;
                r->units_unmapped++;
            }
        }
    }
    g_free(ok);
    g_free(cut);
}

/*
 * A crash mount in progress (block_recovery_scan()). Host memory: stripes
 * x (1 + 4 + 8) bytes, units x 12 bytes (the newest slot of each unit and
 * its seq), 24 bytes per translation page copy (at most the pages of the
 * index stripes) and tpages x 1 byte.
 */
struct map_scan {
    uint64_t now;
    uint64_t max_seq;        /* the largest write sequence number seen */
    uint64_t max_stripe_seq; /* the next stripe open sequence number */
    bool *dirty;             /* [stripes]: leftovers of the page buffer (resolve_buffered()) */
    uint32_t *kind;          /* [stripes]: NAND_PAGE_DATA, _INDEX or _ERASED, by vote */
    uint64_t *open_seq;      /* [stripes] */
    GArray *copies;          /* struct tpage_copy: every intact one, sorted by copy_cmp() */
    uint64_t *nseq;          /* [units]: the seq of the newest slot naming the unit, */
    uint32_t *nslot;         /* and that slot; then the rebuilt map's */
    uint8_t *changed;        /* [tpages]: the rebuilt map differs from the newest copy */
};

/* What each stripe holds, by a vote of its pages' spare areas (as the KV scan). */
static void scan_classify_stripes(struct kvftl *ftl, struct map_scan *m)
{
    struct nand *n = &ftl->nand;
    const struct nand_geometry *geo = &n->geo;
    struct space *sp = &ftl->space;
    struct recovery_report *r = &ftl->mount;
    for (uint32_t s = 0; s < geo->stripes; s++) {
        uint64_t first = (uint64_t)s * geo->pages_per_stripe;
        uint32_t nd = 0, ni = 0, fd = 0, fi = 0;
        bool any = n->torn_ppn >= first && n->torn_ppn < first + geo->pages_per_stripe;
        for (uint32_t i = 0; i < geo->pages_per_stripe; i++) {
            uint32_t k = n->oob[first + i].kind;
            any |= nand_page_programmed(n, first + i);
            if (k == NAND_PAGE_DATA) {
                fd = nd++ ? fd : i;
            } else if (k == NAND_PAGE_INDEX) {
                fi = ni++ ? fi : i;
            }
        }
        uint32_t kind = nd >= ni ? (nd ? NAND_PAGE_DATA : NAND_PAGE_ERASED) : NAND_PAGE_INDEX;
        m->kind[s] = kind;
        for (uint32_t i = 0; i < geo->pages_per_stripe; i++) {
            uint32_t k = n->oob[first + i].kind;
            if (k != NAND_PAGE_ERASED && k != kind && !r->bad_spares++) {
                r->bad_spare_page = first + i;
                r->bad_spare_kind = k;
            }
        }
        struct stripe_info *si = &sp->stripes[s];
        /* a hole is erased: not read (on a full tmpfs the read fault raises SIGBUS) */
        si->erased = !any && !m->dirty[s] &&
                     (nand_page_hole(n, first) || nand_byte(n, first * geo->page_size) == 0);
        si->state = STRIPE_FREE;
        if (kind != NAND_PAGE_ERASED) {
            m->open_seq[s] = n->oob[first + (kind == NAND_PAGE_DATA ? fd : fi)].seq;
            uint64_t next = m->open_seq[s] == UINT64_MAX ? UINT64_MAX : m->open_seq[s] + 1;
            m->max_stripe_seq = next > m->max_stripe_seq ? next : m->max_stripe_seq;
            si->state = kind == NAND_PAGE_DATA ? STRIPE_DATA : STRIPE_INDEX;
            si->open_seq = m->open_seq[s];
            si->last_write_ns = m->now;
            sp->free_stripes--;
        }
    }
}

/* Every intact copy of every translation page (the controller reads them all). */
static void scan_collect_copies(struct kvftl *ftl, struct map_scan *m)
{
    struct nand *n = &ftl->nand;
    const struct nand_geometry *geo = &n->geo;
    const struct page_map *pm = &ftl->pmap;
    struct recovery_report *r = &ftl->mount;
    m->copies = g_array_new(FALSE, FALSE, sizeof(struct tpage_copy));
    uint64_t issue = m->now;
    for (uint64_t ppn = 0; ppn < geo->total_pages; ppn++) {
        uint32_t s = (uint32_t)(ppn / geo->pages_per_stripe);
        if (m->kind[s] != NAND_PAGE_INDEX || n->oob[ppn].kind != NAND_PAGE_INDEX) {
            continue;
        }
        uint64_t d = nand_read(n, ppn, geo->page_size, issue);
        m->now = d > m->now ? d : m->now;
        struct tpage_header h;
        uint32_t t = n->oob[ppn].tag;
        const char *bad = t >= pm->tpages ? "its tag names no translation page"
                                          : tpage_bad(pm, nand_page_ptr(n, ppn), t, &h);
        if (bad) {
            if (!r->bad_tpages++) {
                r->bad_tpage_ppn = ppn;
                g_strlcpy(r->bad_tpage_what, bad, sizeof(r->bad_tpage_what));
            }
            continue;
        }
        struct tpage_copy c = {
            .tpage = t, .ppn = (uint32_t)ppn, .seq = h.write_seq, .stripe_seq = m->open_seq[s]};
        g_array_append_val(m->copies, c);
        m->max_seq = h.write_seq > m->max_seq ? h.write_seq : m->max_seq;
    }
    g_array_sort(m->copies, copy_cmp);
}

/* One unit spare area @us of slot @slot: a unit of the namespace, a seq not from the future. */
static void scan_slot(struct kvftl *ftl, struct map_scan *m, uint64_t slot,
                      const struct nand_unit_spare *us)
{
    struct recovery_report *r = &ftl->mount;
    if (!us->seq) {
        return; /* never written (padding of a Flush, or the end of the log) */
    }
    if (us->unit >= ftl->pmap.units) {
        if (!r->bad_unit_slots++) {
            r->bad_unit_slot = slot;
            r->bad_unit = us->unit;
        }
        return;
    }
    if (us->seq > BLOCK_SEQ_LIMIT) {
        if (!r->future_slots++) {
            r->future_slot = slot;
            r->future_seq = us->seq;
        }
        return;
    }
    uint64_t u = us->unit;
    /* equal numbers cannot happen (each write takes a new one): the first found stays */
    if (us->seq > m->nseq[u]) {
        m->nseq[u] = us->seq;
        m->nslot[u] = (uint32_t)slot;
    }
    m->max_seq = us->seq > m->max_seq ? us->seq : m->max_seq;
}

/* The newest slot of every unit (the unit spare areas of every programmed data page). */
static void scan_newest_slots(struct kvftl *ftl, struct map_scan *m)
{
    struct nand *n = &ftl->nand;
    const struct nand_geometry *geo = &n->geo;
    const struct page_map *pm = &ftl->pmap;
    m->nseq = g_new0(uint64_t, pm->units ? pm->units : 1);
    m->nslot = g_new(uint32_t, pm->units ? pm->units : 1);
    for (uint64_t u = 0; u < pm->units; u++) {
        m->nslot[u] = PAGE_MAP_UNMAPPED;
    }
    uint64_t issue = m->now;
    for (uint64_t ppn = 0; ppn < geo->total_pages; ppn++) {
        uint32_t s = (uint32_t)(ppn / geo->pages_per_stripe);
        if (m->kind[s] != NAND_PAGE_DATA || n->oob[ppn].kind != NAND_PAGE_DATA) {
            continue;
        }
        /* the spare areas only: the controller reads each page's, dies in parallel */
        uint64_t d = nand_read(n, ppn, geo->unit_spares_per_page * sizeof(struct nand_unit_spare),
                               issue);
        m->now = d > m->now ? d : m->now;
        const struct nand_unit_spare *us = nand_unit_spares(n, ppn);
        for (uint32_t j = 0; j < geo->unit_spares_per_page; j++) {
            scan_slot(ftl, m, (ppn * geo->page_size >> PAGE_MAP_UNIT_SHIFT) + j, &us[j]);
        }
    }
}

/*
 * Unit @u (entry @i of translation page @t, whose copies are [@c0, @c1)):
 * the newest copy whose entry is usable (unmapped, or a slot that holds
 * the unit written no later than the copy) is its base; an entry naming a
 * slot that no longer holds the unit (erased by GC after the map moved on,
 * or without PLP a slot that never reached NAND) sends it to the next older
 * copy. A slot newer than the base's copy replaces it.
 */
static void scan_unit_base(struct kvftl *ftl, struct map_scan *m, uint32_t t, uint64_t u,
                           uint32_t i, uint32_t c0, uint32_t c1)
{
    struct recovery_report *r = &ftl->mount;
    uint32_t slot = PAGE_MAP_UNMAPPED, newest_entry = PAGE_MAP_UNMAPPED;
    uint64_t seq = 0, base_seq = 0;
    bool bad = false;
    for (uint32_t c = c0; c < c1; c++) {
        const struct tpage_copy *cp = &g_array_index(m->copies, struct tpage_copy, c);
        uint32_t e = tpage_entry(nand_page_ptr(&ftl->nand, cp->ppn), i);
        uint64_t got;
        if (c == c0) {
            newest_entry = e;
        }
        if (e == PAGE_MAP_UNMAPPED) {
            base_seq = cp->seq;
            break;
        }
        if (slot_valid(ftl, ftl->space.stripes, UINT32_MAX, 0, e, u, cp->seq, &got)) {
            slot = e;
            seq = got;
            base_seq = cp->seq;
            break;
        }
        if (!bad && !r->bad_entries++) {
            r->bad_entry_unit = u;
            r->bad_entry_slot = e;
        }
        bad = true;
    }
    if (m->nseq[u] > base_seq) {
        slot = m->nslot[u];
        seq = m->nseq[u];
        r->units_replayed++;
    }
    if (slot != newest_entry) {
        m->changed[t] = 1;
    }
    m->nslot[u] = slot;
    m->nseq[u] = slot == PAGE_MAP_UNMAPPED ? 0 : seq;
}

/* Each unit's state from its translation page's copies and its newest slot (scan_unit_base()). */
static void scan_choose_bases(struct kvftl *ftl, struct map_scan *m)
{
    const struct page_map *pm = &ftl->pmap;
    m->changed = g_new0(uint8_t, pm->tpages ? pm->tpages : 1);
    uint32_t ci = 0;
    for (uint32_t t = 0; t < pm->tpages; t++) {
        uint32_t c0 = ci;
        while (ci < m->copies->len && g_array_index(m->copies, struct tpage_copy, ci).tpage == t) {
            ci++;
        }
        ftl->mount.tpages_used += c0 < ci; /* without a copy its units start unmapped */
        uint64_t first = (uint64_t)t * pm->per;
        uint64_t cnt = pm->units - first < pm->per ? pm->units - first : pm->per;
        for (uint64_t i = 0; i < cnt; i++) {
            scan_unit_base(ftl, m, t, first + i, (uint32_t)i, c0, ci);
        }
    }
}

/* Install: the map and its valid bytes, the translation pages' live copies. */
static void scan_install(struct kvftl *ftl, struct map_scan *m)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    struct page_map *pm = &ftl->pmap;
    struct space *sp = &ftl->space;
    for (uint64_t u = 0; u < pm->units; u++) {
        if (m->nslot[u] != PAGE_MAP_UNMAPPED) {
            page_map_assign(pm, u, m->nslot[u]);
        }
    }
    const GArray *copies = m->copies;
    uint32_t ci = 0;
    for (uint32_t t = 0; t < pm->tpages; t++) {
        if (ci < copies->len && g_array_index(copies, struct tpage_copy, ci).tpage == t) {
            uint32_t ppn = g_array_index(copies, struct tpage_copy, ci).ppn;
            pm->tpage_ppn[t] = ppn;
            space_valid_add(sp, (uint64_t)ppn * geo->page_size, geo->page_size, 0);
            pm->nand_bytes += geo->page_size;
            while (ci < copies->len && g_array_index(copies, struct tpage_copy, ci).tpage == t) {
                ci++;
            }
        }
        if (m->changed[t]) {
            pm->tstate[t] |= TPAGE_DIRTY;
        }
    }
    pm->write_seq = m->max_seq;
    sp->stripe_seq = m->max_stripe_seq;
    ftl->mount.units_mapped = pm->mapped;
}

/*
 * The streams go on where they stopped: the newest data stripe and the
 * newest index stripe are open again after their last programmed page (a
 * crash must not cost two stripes each time, or repeated cuts would eat
 * GC's reserve). A stripe nothing live is left in is free now (erased
 * before reuse), and GC restores the low watermark of free stripes before
 * the rebuilt map is programmed.
 */
static void scan_reopen(struct kvftl *ftl, struct map_scan *m)
{
    struct space *sp = &ftl->space;
    resume_streams(ftl);
    for (uint32_t s = 0; s < ftl->nand.geo.stripes; s++) {
        struct stripe_info *si = &sp->stripes[s];
        if ((si->state == STRIPE_DATA || si->state == STRIPE_INDEX) && !si->valid_bytes) {
            si->state = STRIPE_FREE;
            si->erased = false;
            sp->free_stripes++;
        }
    }
    gc_before_write(ftl, &m->now);
}

/* What a crash mount reports, zeroed before it (a clean mount leaves the report zero). */
static void scan_report_reset(struct recovery_report *r)
{
    r->keys = r->bad_checksums = r->unindexed = r->unread_bytes = 0;
    r->cut_stripes = r->bad_spares = 0;
    r->units_mapped = r->units_replayed = r->units_unmapped = 0;
    r->tpages_used = r->bad_tpages = r->bad_unmaps = 0;
    r->bad_unit_slots = r->future_slots = r->bad_entries = 0;
}

int block_recovery_scan(struct kvftl *ftl, char *err, size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    struct page_map *pm = &ftl->pmap;
    struct map_scan m = {
        .now = ftl->now_max_ns,
        .max_seq = pm->write_seq, /* never give a number twice, even if its slot is lost */
    };

    ftl->recovery_owner.reset_state(ftl);
    scan_report_reset(&ftl->mount);
    m.dirty = g_new0(bool, geo->stripes);
    m.kind = g_new0(uint32_t, geo->stripes);
    m.open_seq = g_new0(uint64_t, geo->stripes);
    m.max_stripe_seq = ftl->space.stripe_seq;
    resolve_buffered(ftl, m.dirty);
    scan_classify_stripes(ftl, &m);
    scan_collect_copies(ftl, &m);
    scan_newest_slots(ftl, &m);
    scan_choose_bases(ftl, &m);
    /* the unmap log: completed unmaps whose translation pages were not programmed yet */
    replay_unmaps(ftl, m.nslot, m.nseq, m.changed, &m.max_seq);
    scan_install(ftl, &m);
    scan_reopen(ftl, &m);
    g_array_free(m.copies, TRUE);
    g_free(m.nseq);
    g_free(m.nslot);
    g_free(m.changed);
    g_free(m.dirty);
    g_free(m.kind);
    g_free(m.open_seq);

    /*
     * The map now differs from flash where slots were replayed, unmaps
     * applied or entries repaired: those translation pages are programmed
     * now, so the next crash mount starts from them and the log is empty.
     */
    int rc = 0;
    if (page_map_write_back(pm, &m.now) != 0) {
        rc = refuse(err, err_len,
                    "image_path %s: the rebuilt map's translation pages cannot be programmed: %s",
                    ftl->cfg.image_path ? ftl->cfg.image_path : "(memory)",
                    nand_writable(&ftl->nand) ? "no stripe is free"
                                              : "the image file has no room for them");
    } else {
        block_recovery_log_clear(ftl);
    }
    /* DRAM holds no translation page after the power cycle: a lookup's miss reads it (DFTL) */
    page_map_drop_cache(pm);
    if (m.now > ftl->now_max_ns) {
        ftl->now_max_ns = m.now;
    }
    return rc;
}

void block_recovery_note(struct kvftl *ftl)
{
    struct recovery_report *r = &ftl->mount;
    const char *path = ftl->cfg.image_path ? ftl->cfg.image_path : "(memory)";
    GString *s = g_string_new(NULL);
    if (r->why[0]) {
        g_string_append_printf(s, "image_path %s: %s; the map was rebuilt", path, r->why);
    } else {
        g_string_append_printf(s, "image_path %s was not closed cleanly; the map was rebuilt",
                               path);
    }
    g_string_append_printf(
        s,
        " from %u translation page%s and the unit spare areas: %llu units "
        "mapped, %llu written after their translation page, %llu unmapped by "
        "the unmap log",
        r->tpages_used, r->tpages_used == 1 ? "" : "s", (unsigned long long)r->units_mapped,
        (unsigned long long)r->units_replayed, (unsigned long long)r->units_unmapped);
    if (r->bad_unit_slots) {
        g_string_append_printf(
            s,
            "; %llu slot%s whose spare area names a unit beyond the namespace (%llu units) %s "
            "skipped (the first: slot %llu, unit %llu)",
            (unsigned long long)r->bad_unit_slots, r->bad_unit_slots == 1 ? "" : "s",
            (unsigned long long)ftl->pmap.units, r->bad_unit_slots == 1 ? "was" : "were",
            (unsigned long long)r->bad_unit_slot, (unsigned long long)r->bad_unit);
    }
    if (r->future_slots) {
        g_string_append_printf(
            s,
            "; %llu slot%s whose spare area holds a write sequence number from "
            "the future (above %llu) %s skipped (the first: slot %llu, "
            "sequence %llu)",
            (unsigned long long)r->future_slots, r->future_slots == 1 ? "" : "s",
            (unsigned long long)BLOCK_SEQ_LIMIT, r->future_slots == 1 ? "was" : "were",
            (unsigned long long)r->future_slot, (unsigned long long)r->future_seq);
    }
    if (r->bad_tpages) {
        g_string_append_printf(s,
                               "; %u translation page cop%s failed %s check and %s skipped (the "
                               "first: NAND page %llu, %s)",
                               r->bad_tpages, r->bad_tpages == 1 ? "y" : "ies",
                               r->bad_tpages == 1 ? "its" : "their",
                               r->bad_tpages == 1 ? "was" : "were",
                               (unsigned long long)r->bad_tpage_ppn, r->bad_tpage_what);
    }
    if (r->bad_entries) {
        g_string_append_printf(s,
                               "; %llu map entr%s named a slot that does not hold %s unit, and an "
                               "older copy or the slots decided (the first: unit %llu, slot %u)",
                               (unsigned long long)r->bad_entries,
                               r->bad_entries == 1 ? "y" : "ies",
                               r->bad_entries == 1 ? "its" : "their",
                               (unsigned long long)r->bad_entry_unit, r->bad_entry_slot);
    }
    if (r->bad_unmaps) {
        g_string_append_printf(s, "; %u damaged unmap log entr%s skipped", r->bad_unmaps,
                               r->bad_unmaps == 1 ? "y was" : "ies were");
    }
    if (r->bad_spares) {
        g_string_append_printf(s,
                               "; %u page%s %s a damaged spare area (the first: page %llu, kind "
                               "%#x)",
                               r->bad_spares, r->bad_spares == 1 ? "" : "s",
                               r->bad_spares == 1 ? "has" : "have",
                               (unsigned long long)r->bad_spare_page, r->bad_spare_kind);
    }
    g_string_append_c(s, '.');
    g_strlcpy(r->note, s->str, sizeof(r->note));
    g_string_free(s, TRUE);
}
