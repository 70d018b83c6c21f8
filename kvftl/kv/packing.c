/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Packing policies (BandSlim §3.3): where in the NAND page buffer a blob
 * goes, given how its value arrived.
 *
 *  block      every blob at the next 4 KiB boundary (a block SSD's buffer)
 *  all        every blob at the write pointer (KAML); a DMA value that did
 *             not land at the write pointer is copied there
 *  selective  inline blobs at the write pointer; a DMA blob at the next
 *             4 KiB boundary, and the write pointer moves past it
 *  backfill   like selective, but the write pointer stays: the DMA blob
 *             is recorded in the DMA Log Table and later inline blobs fill
 *             the gap before it. Before packing an inline blob, the packer
 *             checks the DLT head only (O(1)): if wp + size passes the
 *             oldest unconsumed DMA blob, wp jumps past that blob.
 *
 * The DMA blob goes ahead of wp only if it fits in the buffer window and
 * the DLT has room; otherwise the DLT is drained (gaps padded) and the
 * blob is placed as under selective.
 *
 * With a per-page data area (page_data_bytes, the rest of each page being
 * reserved for ECC / parity), every policy keeps blobs out of the reserved
 * tails: a blob that fits a data area but not the rest of its page's moves
 * to the next page, and a larger one starts a page (vlog_occupied() gives
 * it whole pages, one per data area's worth). Blobs stay contiguous in the
 * stripe, so reads, GC and the recovery scan need nothing more.
 */
#include "packing.h"

#include <string.h>

#include <kvftl/kvftl.h>

#include "dlt.h"
#include "space.h"

static inline uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

void pack_init(struct packer *pk, struct space *sp, const struct kvftl_config *cfg)
{
    memset(pk, 0, sizeof(*pk));
    pk->sp = sp;
    dlt_init(&pk->dlt, cfg->dlt_entries);
    pk->policy = cfg->packing;
    pk->page_fit = cfg->page_fit_blobs;
    pk->page_data = cfg->page_data_bytes;
    pk->page_bytes = cfg->page_size_bytes;
}

void pack_fini(struct packer *pk)
{
    dlt_fini(&pk->dlt);
}

void pack_forget(struct packer *pk)
{
    dlt_clear(&pk->dlt);
}

void pack_skip(struct packer *pk, uint64_t from, uint64_t to, uint64_t *now_ns)
{
    if (to <= from) {
        return;
    }
    pk->padding_bytes += to - from;
    stream_pad(pk->sp, from, to, now_ns);
}

static uint64_t dlt_entry_offset(const struct packer *pk, const struct dlt_entry *e)
{
    return (e->page - pk->sp->data.base_ppn) * pk->sp->nand->geo.page_size + e->offset;
}

void pack_drain_dlt(struct packer *pk, uint64_t *now_ns)
{
    struct data_stream *ds = &pk->sp->data;
    const struct dlt_entry *e;
    while ((e = dlt_head(&pk->dlt))) {
        uint64_t start = dlt_entry_offset(pk, e);
        pack_skip(pk, ds->wp, start, now_ns);
        ds->wp = start + e->size;
        dlt_pop(&pk->dlt);
    }
    if (ds->frontier > ds->wp) {
        ds->wp = ds->frontier;
    }
    ds->frontier = ds->wp;
}

/*
 * The first offset from @pos where a blob of @occupied bytes keeps within
 * the data areas of its pages: @pos itself, or the start of the next page.
 */
static uint64_t data_area_pos(const struct packer *pk, uint64_t pos, uint32_t occupied)
{
    uint64_t in_page = pos & (pk->page_bytes - 1);
    if (pk->page_data && in_page && in_page + occupied > pk->page_data) {
        return pos - in_page + pk->page_bytes;
    }
    return pos;
}

/* Place at the next DMA boundary; the write pointer moves past the blob. */
static int place_aligned(struct packer *pk, uint32_t occupied, uint64_t *off, uint64_t *now_ns)
{
    struct data_stream *ds = &pk->sp->data;
    uint64_t pos = data_area_pos(pk, align_up(ds->wp, DMA_UNIT_BYTES), occupied);
    if (pos + occupied > pk->sp->nand->geo.stripe_bytes) {
        return PACK_STRIPE_FULL;
    }
    pack_skip(pk, ds->wp, pos, now_ns);
    ds->wp = ds->frontier = pos + occupied;
    *off = pos;
    return PACK_OK;
}

static int place_at_wp(struct packer *pk, uint32_t occupied, uint64_t *off, uint64_t *now_ns)
{
    struct data_stream *ds = &pk->sp->data;
    uint32_t ps = pk->sp->nand->geo.page_size;
    uint64_t in_page = ds->wp & (ps - 1);
    uint64_t pos = ds->wp;
    if (pk->page_fit && occupied <= ps && in_page + occupied > ps) {
        pos = ds->wp - in_page + ps; /* fits one page, not this one's rest: next page */
    }
    pos = data_area_pos(pk, pos, occupied);
    if (pos + occupied > pk->sp->nand->geo.stripe_bytes) {
        return PACK_STRIPE_FULL;
    }
    pack_skip(pk, ds->wp, pos, now_ns);
    ds->wp = pos;
    *off = ds->wp;
    ds->wp += occupied;
    if (ds->frontier < ds->wp) {
        ds->frontier = ds->wp;
    }
    return PACK_OK;
}

static int place_backfill_inline(struct packer *pk, uint32_t occupied, uint64_t *off,
                                 uint64_t *now_ns)
{
    struct data_stream *ds = &pk->sp->data;
    const struct dlt_entry *e;
    while ((e = dlt_head(&pk->dlt))) {
        uint64_t start = dlt_entry_offset(pk, e);
        if (data_area_pos(pk, ds->wp, occupied) + occupied <= start) {
            break;
        }
        pack_skip(pk, ds->wp, start, now_ns);
        ds->wp = start + e->size;
        dlt_pop(&pk->dlt);
    }
    if (dlt_empty(&pk->dlt)) {
        if (ds->frontier > ds->wp) {
            ds->wp = ds->frontier;
        }
        return place_at_wp(pk, occupied, off, now_ns);
    }
    /* there is a DMA blob ahead: this one fills the gap before it */
    uint64_t pos = data_area_pos(pk, ds->wp, occupied);
    pack_skip(pk, ds->wp, pos, now_ns);
    *off = pos;
    ds->wp = pos + occupied;
    pk->dlt_backfills++;
    return PACK_OK;
}

static int place_backfill_dma(struct packer *pk, uint32_t occupied, uint64_t *off, bool *ahead,
                              uint64_t *now_ns)
{
    struct data_stream *ds = &pk->sp->data;
    uint32_t ps = pk->sp->nand->geo.page_size;
    uint64_t pos = data_area_pos(
        pk, align_up(ds->frontier > ds->wp ? ds->frontier : ds->wp, DMA_UNIT_BYTES), occupied);
    uint64_t last_idx = (pos + occupied - 1) >> pk->sp->nand->geo.page_shift;
    bool fits_stripe = pos + occupied <= pk->sp->nand->geo.stripe_bytes;
    bool fits_window = last_idx < (uint64_t)ds->prog_idx + ds->buf.entries;

    if (fits_stripe && fits_window && !dlt_full(&pk->dlt) && pos > ds->wp) {
        dlt_push(&pk->dlt, ds->base_ppn + (pos >> pk->sp->nand->geo.page_shift),
                 (uint32_t)(pos & (ps - 1)), occupied);
        ds->frontier = pos + occupied;
        *off = pos;
        *ahead = true;
        return PACK_OK;
    }
    pack_drain_dlt(pk, now_ns);
    return place_aligned(pk, occupied, off, now_ns);
}

int pack_place(struct packer *pk, uint32_t occupied, bool dma, uint64_t *off, bool *ahead,
               uint64_t *now_ns)
{
    *ahead = false;
    switch (pk->policy) {
    case KVFTL_PACK_BLOCK:
        return place_aligned(pk, occupied, off, now_ns);
    case KVFTL_PACK_ALL:
        return place_at_wp(pk, occupied, off, now_ns);
    case KVFTL_PACK_SELECTIVE:
        return dma ? place_aligned(pk, occupied, off, now_ns)
                   : place_at_wp(pk, occupied, off, now_ns);
    case KVFTL_PACK_BACKFILL:
    default:
        return dma ? place_backfill_dma(pk, occupied, off, ahead, now_ns)
                   : place_backfill_inline(pk, occupied, off, now_ns);
    }
}
