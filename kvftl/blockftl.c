/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nvm personality (include/kvftl/block.h): a page-mapping block FTL on
 * the NAND, page buffer, stripes, GC and statistics the KV personality
 * uses (docs/kvftl.md, "The nvm personality").
 *
 * Every logical 4 KiB unit that holds data lives in one 4 KiB slot of a
 * data stripe; the page map (page_map.h) names it. A write places each
 * unit at the data stream's write pointer (always a slot boundary: nothing
 * else is written to an nvm data stripe), records the slot's reverse map
 * {unit, write sequence number} in its unit spare area as the slot is
 * written, re-points the map and moves 4 KiB of valid bytes from the old
 * slot's stripe to the new one's. A unit that a write covers in part
 * merges in the write buffer (write_buffer.h) and is written whole when
 * it leaves it, read first from NAND only if sectors of it were never
 * buffered (without a buffer: at once, a NAND read unless the old copy
 * is still in the page buffer). GC (gc.c) collects data stripes
 * through collect_data() below: a slot is live iff the map still names
 * it, found through its unit spare area.
 */
#include <kvftl/block.h>

#include <string.h>

#include <glib.h>

#include "block_recovery.h"
#include "ftl.h"
#include "fw_time.h"
#include "gc.h"
#include "nand.h"
#include "page_map.h"
#include "space.h"
#include "stats.h"

#define UNIT PAGE_MAP_UNIT_BYTES

/* ---- time ---- */

/* The controller CPU copies @bytes (merging a partial unit): it is one CPU, shared. */
static void cpu_copy(struct kvftl *ftl, uint64_t bytes, uint64_t *now_ns)
{
    uint64_t rate = ftl->cfg.dram_copy_bytes_per_us;
    ftl->blk_memcpy_bytes += bytes;
    if (rate && bytes) {
        *now_ns = vlog_cpu_run(&ftl->vl, *now_ns, (bytes * 1000 + rate - 1) / rate);
    }
}

/* ---- the data stream, in 4 KiB slots ---- */

static uint64_t slot_addr(uint32_t slot)
{
    return (uint64_t)slot << PAGE_MAP_UNIT_SHIFT;
}

/*
 * Write @data (one unit) as the newest copy of @unit at the write pointer:
 * the slot's spare area, the map and the valid bytes follow. The caller
 * has looked the unit up with dirty = true. 0, -1 (no free stripe), -2
 * (power lost).
 */
static int unit_put(struct kvftl *ftl, uint64_t unit, const void *data, uint64_t *now_ns)
{
    struct space *sp = &ftl->space;
    struct data_stream *ds = &sp->data;
    const struct nand_geometry *geo = &ftl->nand.geo;
    if (ds->stripe == UINT32_MAX && stream_open_stripe(sp, now_ns) != 0) {
        return -1;
    }
    uint64_t off = ds->wp;
    if (stream_write(sp, off, data, UNIT, now_ns) != 0) {
        return -2;
    }
    uint64_t ppn = ds->base_ppn + (off >> geo->page_shift);
    struct nand_unit_spare *us = nand_unit_spares(&ftl->nand, ppn);
    us[(off & (geo->page_size - 1)) >> PAGE_MAP_UNIT_SHIFT] = (struct nand_unit_spare){
        .unit = unit,
        .seq = ++ftl->pmap.write_seq,
    };
    ds->wp = ds->frontier = off + UNIT;
    sp->stripes[ds->stripe].last_write_ns = *now_ns;
    uint64_t addr = (uint64_t)ds->stripe * geo->stripe_bytes + off;
    page_map_assign(&ftl->pmap, unit, (uint32_t)(addr >> PAGE_MAP_UNIT_SHIFT));
    /* every page wholly before the write pointer is final */
    if (stream_program_upto(sp, (uint32_t)(ds->wp >> geo->page_shift), *now_ns) != 0) {
        return -2;
    }
    if (ds->wp == geo->stripe_bytes) {
        stream_close_stripe(sp);
    }
    return 0;
}

/*
 * Program the open data stripe's buffered pages, the partial last one too
 * (its empty slots are left: padding_bytes); the write pointer moves to the
 * next page. 0, or -1 on power loss.
 */
static int data_flush(struct kvftl *ftl, uint64_t *now_ns)
{
    struct space *sp = &ftl->space;
    struct data_stream *ds = &sp->data;
    const struct nand_geometry *geo = &ftl->nand.geo;
    if (ds->stripe == UINT32_MAX) {
        return 0;
    }
    uint64_t end = (ds->wp + geo->page_size - 1) & ~(uint64_t)(geo->page_size - 1);
    if (!ds->plp_dump) {
        ftl->blk_padding_bytes += end - ds->wp;
    }
    ds->wp = ds->frontier = end;
    if (stream_program_upto(sp, (uint32_t)(end >> geo->page_shift), *now_ns) != 0) {
        return -1;
    }
    if (end == geo->stripe_bytes) {
        stream_close_stripe(sp);
    }
    return 0;
}

/* The latest busy-until of every die: when the last program issued completes. */
static uint64_t dies_idle(const struct kvftl *ftl, uint64_t now)
{
    for (uint32_t d = 0; d < ftl->nand.geo.dies; d++) {
        if (ftl->nand.die_busy_ns[d] > now) {
            now = ftl->nand.die_busy_ns[d];
        }
    }
    return now;
}

/* The unit spare area of slot @slot (inside the device). */
static const struct nand_unit_spare *slot_spare(const struct kvftl *ftl, uint32_t slot)
{
    /* a page's slots' spare areas are consecutive, and pages' follow each other */
    return ftl->nand.unit_spare + slot;
}

/*
 * The unit's stored copy in slot @slot is the one its spare area names
 * (a damaged image may say otherwise: then it is not returned).
 */
static bool slot_holds(const struct kvftl *ftl, uint32_t slot, uint64_t unit)
{
    if (slot_addr(slot) + UNIT > ftl->nand.geo.total_bytes) {
        return false;
    }
    const struct nand_unit_spare *s = slot_spare(ftl, slot);
    return s->seq != 0 && s->unit == unit;
}

/* ---- GC ---- */

/*
 * GC's data victim (struct gc_owner.collect_data): every slot whose spare
 * area names a unit the map still points at is read (its page once) and
 * written at the write pointer with a new write sequence number (so a
 * crash mount prefers it to whatever a translation page programmed
 * earlier says); the map moves. Without PLP the copies are programmed
 * before the victim is erased.
 */
static int blk_collect_data(void *ctx, uint32_t victim, uint64_t *now_ns)
{
    struct kvftl *ftl = ctx;
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
        bool read = false;
        for (uint32_t j = 0; j < per_page; j++) {
            if (!us[j].seq || us[j].unit >= pm->units) {
                continue;
            }
            uint32_t slot = (uint32_t)((ppn * geo->page_size >> PAGE_MAP_UNIT_SHIFT) + j);
            /*
             * Which slots are live the firmware knows without its map
             * pages (a valid bit per slot, as FTLs keep per block; here the
             * host's map array answers): only a live unit's translation
             * page is loaded, to be changed.
             */
            if (pm->map[us[j].unit] != slot) {
                continue; /* an older copy, or the unit was deallocated */
            }
            if (!read) {
                *now_ns = nand_read(&ftl->nand, ppn, geo->page_size, *now_ns);
                read = true;
            }
            page_map_lookup(pm, us[j].unit, true, now_ns);
            uint8_t ubuf[UNIT];
            const uint8_t *u = nand_view(&ftl->nand, ppn * geo->page_size + (size_t)j * UNIT, UNIT,
                                         ubuf);
            int rc = unit_put(ftl, us[j].unit, u, now_ns);
            if (rc != 0) {
                return -1;
            }
            ftl->st.gc_relocated_bytes += UNIT;
        }
    }
    if (!ftl->cfg.plp && data_flush(ftl, now_ns) != 0) {
        return -1;
    }
    return block_recovery_before_erase(ftl, victim, now_ns);
}

static bool blk_blob_live(void *ctx, const struct blob_header *h, const uint8_t *key, uint64_t loc,
                          uint64_t *now_ns)
{
    (void)ctx, (void)h, (void)key, (void)loc, (void)now_ns;
    return false; /* an nvm device writes no value-log records (collect_data instead) */
}

static void blk_relocate(void *ctx, uint64_t old_loc, uint64_t new_loc, uint64_t *now_ns)
{
    (void)ctx, (void)old_loc, (void)new_loc, (void)now_ns;
}

static int blk_page_relocate(void *ctx, uint64_t ppn, uint32_t tag, uint64_t *now_ns)
{
    struct kvftl *ftl = ctx;
    return page_map_tpage_relocate(&ftl->pmap, ppn, tag, now_ns);
}

/* ---- the shared calls' nvm part ---- */

void blockftl_open(struct kvftl *ftl)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    uint64_t units = page_map_units_for(ftl->capacity_bytes, geo->page_size);
    uint64_t frames = ftl->cfg.index_dram_bytes / geo->page_size;
    page_map_init(&ftl->pmap, &ftl->space, units,
                  frames > UINT32_MAX ? UINT32_MAX : (uint32_t)(frames < 2 ? 2 : frames));
    ftl->blk_lbas = units * (UNIT / ftl->cfg.lba_bytes);
    ftl->blk_unit = g_malloc0(UNIT);
    /*
     * The write buffer: dies x write_buffer_pages_per_die pages. Off with
     * PLP and an image: it lives in host memory only, and a killed process
     * would lose what PLP promises.
     */
    uint64_t wb_units = (uint64_t)geo->dies * ftl->cfg.write_buffer_pages_per_die *
                        (geo->page_size / UNIT);
    if (ftl->cfg.plp && ftl->cfg.image_path) {
        wb_units = 0;
    }
    write_buffer_init(&ftl->pmap.wb, (uint32_t)wb_units);
    ftl->gc_owner = (struct gc_owner){
        .ctx = ftl,
        .blob_live = blk_blob_live,
        .relocate = blk_relocate,
        .page_relocate = blk_page_relocate,
        .collect_data = blk_collect_data,
    };
    ftl->recovery_owner.flush = blockftl_flush;
}

void blockftl_free(struct kvftl *ftl)
{
    write_buffer_fini(&ftl->pmap.wb);
    page_map_fini(&ftl->pmap);
    g_free(ftl->blk_unit);
    ftl->blk_unit = NULL;
}

static int wbuf_drain(struct kvftl *ftl, bool dump, uint64_t *now_ns);

int blockftl_flush(struct kvftl *ftl, uint64_t *now_ns)
{
    if (wbuf_drain(ftl, false, now_ns) != 0 || data_flush(ftl, now_ns) != 0 ||
        page_map_write_back(&ftl->pmap, now_ns) != 0) {
        return -1;
    }
    return 0;
}

void blockftl_plp_dump(struct kvftl *ftl, uint64_t now_ns)
{
    /* the capacitors write the write buffer out and program every buffered page */
    ftl->space.data.plp_dump = true;
    wbuf_drain(ftl, true, &now_ns);
    data_flush(ftl, &now_ns);
    ftl->space.data.plp_dump = false;
}

/* ---- commands ---- */

uint64_t kvftl_block_lbas(const struct kvftl *ftl)
{
    return ftl->nvm ? ftl->blk_lbas : 0;
}

/*
 * The opening every block command shares: @cpl reset to success at the
 * arrival time; unless the device lost power (then no firmware runs), the
 * command fetched and decoded on the controller CPU (fw_time.h; *@now
 * moves to its end, as for KV commands); then a kv device
 * (INVALID_FIELD), a device that lost power (INTERNAL_ERROR), a command
 * that @writes on a device whose image could not back a page
 * (INTERNAL_ERROR: nand_back_page()), a range outside the namespace or a
 * transfer longer than KVFTL_BLOCK_MAX_XFER_BYTES (@xfer; INVALID_FIELD)
 * refused.
 */
static bool blk_begin(struct kvftl *ftl, uint64_t slba, uint32_t nlb, bool xfer, bool writes,
                      struct fw_cmd *fc, uint64_t *now, struct kvftl_cpl *cpl)
{
    cpl->status = KVFTL_OK;
    cpl->done_ns = *now;
    cpl->value_bytes = cpl->xfer_bytes = 0;
    bool powered = ftl_powered(ftl);
    if (powered) {
        fw_cmd_begin(ftl, fc, 0, now);
    }
    if (!ftl->nvm) {
        cpl->status = KVFTL_INVALID_FIELD;
    } else if (!powered || (writes && !nand_writable(&ftl->nand))) {
        cpl->status = KVFTL_INTERNAL_ERROR;
    } else if (nlb == 0 || slba >= ftl->blk_lbas || nlb > ftl->blk_lbas - slba ||
               (xfer && nlb > KVFTL_BLOCK_MAX_XFER_BYTES / ftl->cfg.lba_bytes)) {
        cpl->status = KVFTL_INVALID_FIELD;
    }
    if (cpl->status != KVFTL_OK) {
        if (powered) {
            fw_cmd_refuse(ftl, fc, *now, cpl);
        }
        return false;
    }
    return true;
}

/* unit_put()'s -1 (no free stripe) is CAPACITY_EXCEEDED unless the image could not back a page */
static enum kvftl_status put_status(const struct kvftl *ftl, int rc)
{
    return rc == -1 && nand_writable(&ftl->nand) ? KVFTL_CAPACITY_EXCEEDED : KVFTL_INTERNAL_ERROR;
}

/*
 * The unit at device slot @old read into the staging buffer ftl->blk_unit
 * (zeroes when @old is PAGE_MAP_UNMAPPED), for a merge; returns the buffer.
 */
static uint8_t *unit_read_old(struct kvftl *ftl, uint32_t old, uint64_t *now_ns)
{
    uint8_t *u = ftl->blk_unit;
    if (old != PAGE_MAP_UNMAPPED) {
        uint64_t last;
        stream_read(&ftl->space, slot_addr(old), UNIT, UINT64_MAX, &last, now_ns);
        nand_copy_out(&ftl->nand, slot_addr(old), u, UNIT);
    } else {
        memset(u, 0, UNIT);
    }
    return u;
}

/*
 * Write bytes [@in, @in + @n) of @unit from @src (NULL: zeroes), the rest
 * of the unit kept: the old copy is read (a NAND read unless it is in the
 * buffer) and merged by the controller CPU. A unit that was unmapped
 * merges with zeroes. 0, -1, -2 as unit_put().
 */
static int unit_merge(struct kvftl *ftl, uint64_t unit, uint32_t in, uint32_t n, const void *src,
                      uint64_t *now_ns)
{
    uint8_t *u = unit_read_old(ftl, page_map_lookup(&ftl->pmap, unit, true, now_ns), now_ns);
    cpu_copy(ftl, UNIT - n, now_ns);
    if (src) {
        memcpy(u + in, src, n);
    } else {
        memset(u + in, 0, n);
    }
    return unit_put(ftl, unit, u, now_ns);
}

/* ---- the write buffer (write_buffer.h) ---- */

/*
 * Write buffer entry @e out: a partial one merged over its unit's copy on
 * NAND (read; zeroes if unmapped) by the controller CPU, then written as
 * unit_put(); on success the entry leaves the buffer. @dump: the
 * capacitor-powered dump after a cut (no map cache traffic, no GC: the
 * crash mount rebuilds the map from the spare areas). 0, -1, -2 as
 * unit_put().
 */
static int wbuf_write_out(struct kvftl *ftl, uint32_t e, bool dump, uint64_t *now_ns)
{
    struct write_buffer *wb = &ftl->pmap.wb;
    uint64_t unit = wb->unit[e];
    uint8_t mask = wb->mask[e];
    const uint8_t *src = write_buffer_bytes(wb, e);
    if (!dump) {
        gc_before_write(ftl, now_ns);
    }
    uint32_t old = dump ? ftl->pmap.map[unit] : page_map_lookup(&ftl->pmap, unit, true, now_ns);
    if (mask != WRITE_BUFFER_FULL) {
        uint8_t *u = unit_read_old(ftl, old, now_ns);
        for (uint32_t i = 0; i < UNIT / WRITE_BUFFER_SECTOR_BYTES; i++) {
            if (mask & (1u << i)) {
                size_t at = (size_t)i * WRITE_BUFFER_SECTOR_BYTES;
                memcpy(u + at, src + at, WRITE_BUFFER_SECTOR_BYTES);
            }
        }
        cpu_copy(ftl, UNIT - (uint64_t)__builtin_popcount(mask) * WRITE_BUFFER_SECTOR_BYTES,
                 now_ns);
        src = u;
    }
    int rc = unit_put(ftl, unit, src, now_ns);
    if (rc == 0) {
        write_buffer_remove(wb, e);
    }
    return rc;
}

/* Write every buffered unit out, least recently written first. 0, -1, -2 as unit_put(). */
static int wbuf_drain(struct kvftl *ftl, bool dump, uint64_t *now_ns)
{
    struct write_buffer *wb = &ftl->pmap.wb;
    while (wb->used) {
        int rc = wbuf_write_out(ftl, write_buffer_oldest(wb), dump, now_ns);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/*
 * Write bytes [@in, @in + @n) of @unit from @src (NULL: zeroes), the rest
 * of the unit kept. With a write buffer the bytes merge into the unit's
 * entry (a new one, the least recently written written out first if the
 * buffer is full); no NAND read. Without: unit_merge(). 0, -1, -2 as
 * unit_put().
 */
static int unit_write_part(struct kvftl *ftl, uint64_t unit, uint32_t in, uint32_t n,
                           const void *src, uint64_t *now_ns)
{
    struct write_buffer *wb = &ftl->pmap.wb;
    if (!wb->cap) {
        return unit_merge(ftl, unit, in, n, src, now_ns);
    }
    uint32_t e = write_buffer_find(wb, unit);
    if (e == WRITE_BUFFER_NONE) {
        if (wb->used == wb->cap) {
            int rc = wbuf_write_out(ftl, write_buffer_oldest(wb), false, now_ns);
            if (rc != 0) {
                return rc;
            }
        }
        e = write_buffer_add(wb, unit);
    }
    write_buffer_put(wb, e, in, n, src);
    return 0;
}

/* A whole-unit write or an unmap supersedes @unit's buffered bytes: they are dropped. */
static void wbuf_drop(struct kvftl *ftl, uint64_t unit)
{
    uint32_t e = write_buffer_find(&ftl->pmap.wb, unit);
    if (e != WRITE_BUFFER_NONE) {
        write_buffer_remove(&ftl->pmap.wb, e);
    }
}

/* FUA: the buffered units of [@first, @last] are written out. 0, -1, -2 as unit_put(). */
static int wbuf_write_out_range(struct kvftl *ftl, uint64_t first, uint64_t last, uint64_t *now_ns)
{
    for (uint64_t u = first; u <= last && ftl->pmap.wb.used; u++) {
        uint32_t e = write_buffer_find(&ftl->pmap.wb, u);
        if (e != WRITE_BUFFER_NONE) {
            int rc = wbuf_write_out(ftl, e, false, now_ns);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

void kvftl_block_write(struct kvftl *ftl, uint64_t slba, uint32_t nlb, const void *buf, bool fua,
                       uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct fw_cmd fc;
    if (!blk_begin(ftl, slba, nlb, true, true, &fc, &now, cpl)) {
        return;
    }
    if (!buf) {
        cpl->status = KVFTL_INVALID_FIELD;
        fw_cmd_refuse(ftl, &fc, now, cpl);
        return;
    }
    /* the data was moved by page-unit DMA before the firmware placed it */
    uint64_t dma = fw_dma_units((uint64_t)nlb * ftl->cfg.lba_bytes);
    gc_background(ftl, arrival_ns);

    uint32_t lb = ftl->cfg.lba_bytes;
    uint64_t pos = slba * lb, end = (slba + nlb) * lb;
    const uint8_t *src = buf;
    while (pos < end) {
        uint64_t unit = pos / UNIT;
        uint32_t in = (uint32_t)(pos % UNIT);
        uint32_t n = end - pos < UNIT - in ? (uint32_t)(end - pos) : UNIT - in;
        int rc;
        /* a write may fill several stripes: GC keeps its reserve between units */
        gc_before_write(ftl, &now);
        if (n == UNIT) {
            /* a whole unit: the host's DMA lands in its slot, nothing to merge */
            wbuf_drop(ftl, unit);
            page_map_lookup(&ftl->pmap, unit, true, &now);
            rc = unit_put(ftl, unit, src, &now);
        } else {
            rc = unit_write_part(ftl, unit, in, n, src, &now);
        }
        if (rc != 0) {
            cpl->status = put_status(ftl, rc);
            fw_cmd_finish(ftl, KVFTL_OP_STORE, arrival_ns, now, &fc, dma, cpl);
            return;
        }
        src += n;
        pos += n;
    }
    if (fua) {
        /* Force Unit Access: the units leave the write buffer, their pages are programmed */
        if (wbuf_write_out_range(ftl, slba * lb / UNIT, (end - 1) / UNIT, &now) != 0 ||
            data_flush(ftl, &now) != 0) {
            cpl->status = KVFTL_INTERNAL_ERROR;
        }
        now = dies_idle(ftl, now);
    }
    ftl->st.stores++;
    ftl->st.user_bytes_written += (uint64_t)nlb * lb;
    ftl->st.host_bytes_in_dma += (uint64_t)nlb * lb;
    fw_cmd_finish(ftl, KVFTL_OP_STORE, arrival_ns, now, &fc, dma, cpl);
}

/*
 * Copy bytes [@pos, @end) of the namespace into @dst: a unit's buffered
 * sectors from the write buffer, and unless they cover what is wanted of
 * it, its slot's bytes (zeroes if unmapped) under them. The NAND reads are
 * issued at @issue, together (dies work in parallel); units in consecutive
 * slots (written by one command, in order) are one span: each NAND page of
 * it is read once (one tR) and moves the bytes wanted from it, as a
 * controller reads a page that holds several units. *@now_ns moves to the
 * last read's end. Returns true if a slot does not hold its unit (damaged).
 */
static bool read_units(struct kvftl *ftl, uint64_t pos, uint64_t end, uint8_t *dst, uint64_t issue,
                       uint64_t *now_ns)
{
    const struct write_buffer *wb = &ftl->pmap.wb;
    uint64_t span_addr = 0, span_len = 0, lastp;
    while (pos < end) {
        uint64_t unit = pos / UNIT;
        uint32_t in = (uint32_t)(pos % UNIT);
        uint32_t n = end - pos < UNIT - in ? (uint32_t)(end - pos) : UNIT - in;
        uint32_t slot = ftl->pmap.map[unit];
        uint32_t e = write_buffer_find(wb, unit);
        uint8_t want = write_buffer_mask_of(in, n);
        if (e != WRITE_BUFFER_NONE && (wb->mask[e] & want) == want) {
            memcpy(dst, write_buffer_bytes(wb, e) + in, n);
            dst += n;
            pos += n;
            continue;
        }
        if (slot == PAGE_MAP_UNMAPPED) {
            memset(dst, 0, n);
        } else if (!slot_holds(ftl, slot, unit)) {
            return true;
        } else {
            uint64_t a = slot_addr(slot) + in;
            if (span_len && a != span_addr + span_len) {
                uint64_t t = issue;
                stream_read(&ftl->space, span_addr, (uint32_t)span_len, UINT64_MAX, &lastp, &t);
                *now_ns = t > *now_ns ? t : *now_ns;
                span_len = 0;
            }
            if (!span_len) {
                span_addr = a;
            }
            span_len += n;
            nand_copy_out(&ftl->nand, a, dst, n);
        }
        for (uint32_t i = in / WRITE_BUFFER_SECTOR_BYTES;
             e != WRITE_BUFFER_NONE && i < (in + n) / WRITE_BUFFER_SECTOR_BYTES; i++) {
            if (wb->mask[e] & (1u << i)) {
                uint32_t at = i * WRITE_BUFFER_SECTOR_BYTES;
                memcpy(dst + (at - in), write_buffer_bytes(wb, e) + at, WRITE_BUFFER_SECTOR_BYTES);
            }
        }
        dst += n;
        pos += n;
    }
    if (span_len) {
        uint64_t t = issue;
        stream_read(&ftl->space, span_addr, (uint32_t)span_len, UINT64_MAX, &lastp, &t);
        *now_ns = t > *now_ns ? t : *now_ns;
    }
    return false;
}

void kvftl_block_read(struct kvftl *ftl, uint64_t slba, uint32_t nlb, void *buf,
                      uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct fw_cmd fc;
    if (!blk_begin(ftl, slba, nlb, true, false, &fc, &now, cpl)) {
        return;
    }
    if (!buf) {
        cpl->status = KVFTL_INVALID_FIELD;
        fw_cmd_refuse(ftl, &fc, now, cpl);
        return;
    }
    uint32_t lb = ftl->cfg.lba_bytes;
    uint64_t pos = slba * lb, end = (slba + nlb) * lb;
    uint64_t first = pos / UNIT, last = (end - 1) / UNIT;
    /*
     * The map lookups first (misses read translation pages one after
     * another); each mapped unit's spare area and first bytes are loaded
     * into the host cache at once, so those loads overlap instead of
     * following each other in the loop below.
     */
    for (uint64_t u = first; u <= last; u++) {
        /* the write buffer answers first: a unit whose wanted sectors it holds needs no map */
        uint64_t a = u * UNIT > pos ? u * UNIT : pos,
                 b = (u + 1) * UNIT < end ? (u + 1) * UNIT : end;
        uint8_t want = write_buffer_mask_of((uint32_t)(a % UNIT), (uint32_t)(b - a));
        uint32_t e = write_buffer_find(&ftl->pmap.wb, u);
        if (e != WRITE_BUFFER_NONE && (ftl->pmap.wb.mask[e] & want) == want) {
            continue;
        }
        uint32_t slot = page_map_lookup(&ftl->pmap, u, false, &now);
        if (slot != PAGE_MAP_UNMAPPED && slot_addr(slot) + UNIT <= ftl->nand.geo.total_bytes) {
            __builtin_prefetch(slot_spare(ftl, slot));
            nand_prefetch(&ftl->nand, slot_addr(slot), 256);
        }
    }
    /* then the units' NAND reads, issued together */
    bool damaged = read_units(ftl, pos, end, buf, now, &now);
    if (damaged) {
        /* a drive whose ECC fails returns no data: what was copied is not reported */
        cpl->status = KVFTL_UNRECOVERED_ERROR;
        ftl->st.media_errors++;
        fw_cmd_finish(ftl, KVFTL_OP_RETRIEVE, arrival_ns, now, &fc, 0, cpl);
        return;
    }
    ftl->st.retrieves++;
    ftl->st.host_bytes_out += (uint64_t)nlb * lb;
    cpl->xfer_bytes = (uint32_t)((uint64_t)nlb * lb <= UINT32_MAX ? (uint64_t)nlb * lb : 0);
    fw_cmd_finish(ftl, KVFTL_OP_RETRIEVE, arrival_ns, now, &fc, fw_dma_units((uint64_t)nlb * lb),
                  cpl);
}

/*
 * A batch is a software pipeline over a window of reads: start loading the
 * map entry of each one's first unit; then, those loaded, its slot's spare
 * area and data; then run the reads one by one, in order, exactly as
 * kvftl_block_read(), the next read's data streamed in while this one
 * copies. The hints touch no state (no cache order, no time, no counter):
 * results and statistics are those of the calls one at a time.
 */
#define READ_BATCH_WINDOW 16u

/* The slot of the first unit of a read that may proceed, or PAGE_MAP_UNMAPPED. */
static uint32_t batch_first_slot(const struct kvftl *ftl, const struct kvftl_block_read_req *r)
{
    if (!ftl->nvm || !r->nlb || r->slba >= ftl->blk_lbas) {
        return PAGE_MAP_UNMAPPED;
    }
    uint32_t slot = ftl->pmap.map[r->slba * ftl->cfg.lba_bytes / UNIT];
    if (slot == PAGE_MAP_UNMAPPED || slot_addr(slot) + UNIT > ftl->nand.geo.total_bytes) {
        return PAGE_MAP_UNMAPPED;
    }
    return slot;
}

void kvftl_block_read_batch(struct kvftl *ftl, const struct kvftl_block_read_req *reqs,
                            struct kvftl_cpl *cpls, size_t n)
{
    uint32_t slot[READ_BATCH_WINDOW];
    for (size_t base = 0; base < n; base += READ_BATCH_WINDOW) {
        size_t w = n - base < READ_BATCH_WINDOW ? n - base : READ_BATCH_WINDOW;
        const struct kvftl_block_read_req *r = reqs + base;
        if (ftl->nvm) {
            for (size_t i = 0; i < w; i++) {
                if (r[i].slba < ftl->blk_lbas) {
                    __builtin_prefetch(&ftl->pmap.map[r[i].slba * ftl->cfg.lba_bytes / UNIT]);
                }
            }
        }
        for (size_t i = 0; i < w; i++) {
            slot[i] = batch_first_slot(ftl, &r[i]);
            if (slot[i] != PAGE_MAP_UNMAPPED) {
                __builtin_prefetch(slot_spare(ftl, slot[i]));
                nand_prefetch(&ftl->nand, slot_addr(slot[i]), 1);
            }
        }
        for (size_t i = 0; i < w; i++) {
            if (i + 1 < w && slot[i + 1] != PAGE_MAP_UNMAPPED) {
                nand_prefetch(&ftl->nand, slot_addr(slot[i + 1]) + 64, UNIT - 64);
            }
            kvftl_block_read(ftl, r[i].slba, r[i].nlb, r[i].buf, r[i].arrival_ns, &cpls[base + i]);
        }
    }
}

/*
 * Unmap the whole units of [@slba, @slba + @nlb); @zero_partial: the
 * partial units at its ends are written with zeroes where the range covers
 * them (Write Zeroes), else left as they are (Deallocate). Returns 0 or
 * the failed unit_write_part()'s code.
 */
static int unmap_range(struct kvftl *ftl, uint64_t slba, uint32_t nlb, bool zero_partial,
                       uint64_t *now_ns)
{
    uint32_t lb = ftl->cfg.lba_bytes;
    uint64_t pos = slba * lb, end = (slba + (uint64_t)nlb) * lb;
    while (pos < end) {
        uint64_t unit = pos / UNIT;
        uint32_t in = (uint32_t)(pos % UNIT);
        uint32_t n = end - pos < UNIT - in ? (uint32_t)(end - pos) : UNIT - in;
        if (n == UNIT) {
            wbuf_drop(ftl, unit);
            if (page_map_lookup(&ftl->pmap, unit, false, now_ns) != PAGE_MAP_UNMAPPED) {
                page_map_lookup(&ftl->pmap, unit, true, now_ns);
                page_map_assign(&ftl->pmap, unit, PAGE_MAP_UNMAPPED);
            }
        } else if (zero_partial &&
                   (write_buffer_find(&ftl->pmap.wb, unit) != WRITE_BUFFER_NONE ||
                    page_map_lookup(&ftl->pmap, unit, false, now_ns) != PAGE_MAP_UNMAPPED)) {
            /* an unmapped unit with nothing buffered already reads zeroes */
            gc_before_write(ftl, now_ns);
            int rc = unit_write_part(ftl, unit, in, n, NULL, now_ns);
            if (rc != 0) {
                return rc;
            }
        }
        pos += n;
    }
    /* with PLP the unmap is durable when it completes: the unmap log (block_recovery.h) */
    uint64_t first = (slba * lb + UNIT - 1) / UNIT, last = end / UNIT;
    if (last > first && block_recovery_log_unmap(ftl, first, last - first, now_ns) != 0) {
        return -2;
    }
    return 0;
}

/*
 * The blocks of [@slba, @slba + @nlb) that lie in the first @max_units
 * units the range touches: @nlb when it touches no more, else up to the
 * unit boundary after those units (a unit is never cut in two, so the
 * whole units of the rest stay whole for the next call).
 */
static uint32_t units_prefix(const struct kvftl *ftl, uint64_t slba, uint32_t nlb,
                             uint32_t max_units)
{
    uint32_t per = UNIT / ftl->cfg.lba_bytes;
    uint64_t first = slba / per, last = (slba + nlb + per - 1) / per;
    if (last - first <= max_units) {
        return nlb;
    }
    return (uint32_t)((first + max_units) * per - slba);
}

/*
 * Write Zeroes (@zero_partial: a partial unit is read-modify-written) and
 * Deallocate (partial units left): both program no data, so only the unmap
 * log's record or a partial unit's write can fail. At most @max_units of
 * the units the range touches; returns the blocks done (0 on a refusal or
 * failure). @op and @counter: what the command counts as (the counter once
 * the call reaches the range's end).
 */
static uint32_t unmap_command(struct kvftl *ftl, uint64_t slba, uint32_t nlb, uint32_t max_units,
                              bool zero_partial, enum kvftl_op op, uint64_t *counter,
                              uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct fw_cmd fc;
    /* no unit to unmap is a refusal, as an empty range is */
    if (!blk_begin(ftl, slba, max_units ? nlb : 0, false, true, &fc, &now, cpl)) {
        return 0;
    }
    gc_background(ftl, arrival_ns);
    uint32_t n = units_prefix(ftl, slba, nlb, max_units);
    int rc = unmap_range(ftl, slba, n, zero_partial, &now);
    if (rc != 0) {
        cpl->status = put_status(ftl, rc);
    } else if (n == nlb) {
        (*counter)++;
    }
    fw_cmd_finish(ftl, op, arrival_ns, now, &fc, 0, cpl);
    return cpl->status == KVFTL_OK ? n : 0;
}

void kvftl_block_write_zeroes(struct kvftl *ftl, uint64_t slba, uint32_t nlb, uint64_t arrival_ns,
                              struct kvftl_cpl *cpl)
{
    unmap_command(ftl, slba, nlb, UINT32_MAX, true, KVFTL_OP_STORE, &ftl->st.stores, arrival_ns,
                  cpl);
}

void kvftl_block_deallocate(struct kvftl *ftl, uint64_t slba, uint32_t nlb, uint64_t arrival_ns,
                            struct kvftl_cpl *cpl)
{
    unmap_command(ftl, slba, nlb, UINT32_MAX, false, KVFTL_OP_DELETE, &ftl->st.deletes, arrival_ns,
                  cpl);
}

uint32_t kvftl_block_deallocate_units(struct kvftl *ftl, uint64_t slba, uint32_t nlb,
                                      uint32_t max_units, uint64_t arrival_ns,
                                      struct kvftl_cpl *cpl)
{
    return unmap_command(ftl, slba, nlb, max_units, false, KVFTL_OP_DELETE, &ftl->st.deletes,
                         arrival_ns, cpl);
}
