/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Space: the stripe table, allocation, valid-byte accounting, the write streams. */
#include "space.h"

#include <string.h>

#include <glib.h>

#include "buffer.h"
#include "nand.h"

void space_init(struct space *sp, struct nand *nand, uint32_t buffer_entries, bool plp)
{
    uint32_t n = nand->geo.stripes;
    memset(sp, 0, sizeof(*sp));
    sp->nand = nand;
    sp->plp = plp;
    buffer_init(&sp->data.buf, buffer_entries, nand->geo.page_size);
    stream_forget(sp);
    sp->index.stripe = UINT32_MAX;
    sp->stripes = g_new0(struct stripe_info, n);
    for (uint32_t s = 0; s < n; s++) {
        sp->stripes[s].state = STRIPE_FREE;
        sp->stripes[s].erased = true;
        sp->stripes[s].min_blob_seq = UINT64_MAX;
    }
    sp->free_stripes = n;
    sp->alloc_cursor = 0;
}

void space_fini(struct space *sp)
{
    buffer_fini(&sp->data.buf);
    g_free(sp->stripes);
    sp->stripes = NULL;
}

void space_reset(struct space *sp)
{
    for (uint32_t s = 0; s < sp->nand->geo.stripes; s++) {
        struct stripe_info *si = &sp->stripes[s];
        si->state = STRIPE_FREE;
        si->valid_bytes = 0;
        si->min_blob_seq = UINT64_MAX;
    }
    sp->free_stripes = sp->nand->geo.stripes;
    stream_forget(sp);
    sp->index.stripe = UINT32_MAX;
    sp->index.idx = 0;
}

uint32_t space_alloc(struct space *sp, enum stripe_state state, uint64_t *now_ns)
{
    uint32_t n = sp->nand->geo.stripes;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = (sp->alloc_cursor + i) % n;
        struct stripe_info *si = &sp->stripes[s];
        if (si->state != STRIPE_FREE) {
            continue;
        }
        if (!si->erased) {
            /* erase ahead of use: the dies are busy, the caller does not wait */
            nand_erase_stripe(sp->nand, s, *now_ns);
            si->erased = true;
        }
        si->state = (uint8_t)state;
        si->valid_bytes = 0;
        si->open_seq = sp->stripe_seq++;
        si->min_blob_seq = UINT64_MAX;
        si->last_write_ns = *now_ns;
        sp->free_stripes--;
        sp->alloc_cursor = (s + 1) % n;
        return s;
    }
    return UINT32_MAX;
}

void space_valid_add(struct space *sp, uint64_t addr, int64_t delta, uint64_t blob_seq)
{
    struct stripe_info *si =
        &sp->stripes[nand_stripe_of(sp->nand, addr >> sp->nand->geo.page_shift)];
    si->valid_bytes = (uint64_t)((int64_t)si->valid_bytes + delta);
    if (delta > 0 && blob_seq && blob_seq < si->min_blob_seq) {
        si->min_blob_seq = blob_seq;
    }
}

uint64_t space_release(struct space *sp, uint32_t stripe, uint64_t at_ns)
{
    struct stripe_info *si = &sp->stripes[stripe];
    uint64_t done = nand_erase_stripe(sp->nand, stripe, at_ns);
    si->state = STRIPE_FREE;
    si->erased = true;
    si->valid_bytes = 0;
    si->min_blob_seq = UINT64_MAX;
    sp->free_stripes++;
    return done;
}

uint64_t space_erase_all(struct space *sp, uint64_t at_ns)
{
    uint64_t done = at_ns;
    for (uint32_t s = 0; s < sp->nand->geo.stripes; s++) {
        if (!sp->stripes[s].erased) {
            uint64_t d = nand_erase_stripe(sp->nand, s, at_ns);
            done = d > done ? d : done;
            sp->stripes[s].erased = true;
        }
    }
    return done;
}

/* ---- the data stream ---- */

void stream_forget(struct space *sp)
{
    struct data_stream *ds = &sp->data;
    buffer_reset(&ds->buf);
    ds->stripe = UINT32_MAX;
    ds->base_ppn = 0;
    ds->wp = ds->frontier = 0;
    ds->prog_idx = ds->open_idx = 0;
    ds->streaming = false;
}

int stream_program_upto(struct space *sp, uint32_t idx, uint64_t now_ns)
{
    struct data_stream *ds = &sp->data;
    while (ds->prog_idx < idx) {
        uint32_t p = ds->prog_idx;
        if (p < ds->open_idx) {
            uint64_t ppn = ds->base_ppn + p;
            struct nand_oob oob = {
                .kind = NAND_PAGE_DATA,
                .tag = 0,
                .seq = sp->stripes[ds->stripe].open_seq,
            };
            uint64_t done, at = now_ns;
            if (sp->sync_programs) {
                uint64_t idle = nand_idle_ns(sp->nand);
                at = idle > at ? idle : at;
            }
            if (nand_program(sp->nand, ppn, nand_page_ptr(sp->nand, ppn), &oob, at, ds->plp_dump,
                             &done) != 0) {
                return -1;
            }
            buffer_programmed(&ds->buf, ppn, done);
            ds->pages_programmed++;
        }
        ds->prog_idx = p + 1;
    }
    if (ds->open_idx < ds->prog_idx) {
        ds->open_idx = ds->prog_idx;
    }
    return 0;
}

uint8_t *stream_open_page(struct space *sp, uint32_t idx, uint64_t *now_ns)
{
    struct data_stream *ds = &sp->data;
    g_assert(idx >= ds->prog_idx && idx < sp->nand->geo.pages_per_stripe);
    while (ds->open_idx <= idx) {
        if (ds->open_idx - ds->prog_idx >= ds->buf.entries) {
            /* window full: only a record streamed at wp may push older pages out */
            g_assert(ds->streaming);
            if (stream_program_upto(sp, ds->prog_idx + 1, *now_ns) != 0) {
                return NULL;
            }
            continue;
        }
        uint64_t ppn = ds->base_ppn + ds->open_idx;
        if (nand_back_page(sp->nand, ppn) != 0) {
            return NULL; /* the image cannot hold it: nothing may be stored there */
        }
        buffer_open_page(&ds->buf, ppn, now_ns);
        if (sp->plp) {
            /*
             * The buffer's directory entry, in the page's spare-area slot: in
             * an image file it outlives the process (one 16-byte store, no
             * syscall), so a crash mount can replay the PLP dump.
             */
            sp->nand->oob[ppn] = (struct nand_oob){
                .kind = NAND_PAGE_BUFFERED,
                .tag = 0,
                .seq = sp->stripes[ds->stripe].open_seq,
            };
        }
        ds->open_idx++;
        sp->stripes[ds->stripe].erased = false;
    }
    return nand_page_ptr(sp->nand, ds->base_ppn + idx);
}

int stream_write(struct space *sp, uint64_t off, const void *src, uint32_t n, uint64_t *now_ns)
{
    struct data_stream *ds = &sp->data;
    uint32_t ps = sp->nand->geo.page_size, shift = sp->nand->geo.page_shift;
    const uint8_t *s = src;
    while (n) {
        uint32_t idx = (uint32_t)(off >> shift), in = (uint32_t)(off & (ps - 1));
        uint32_t chunk = n < ps - in ? n : ps - in;
        uint8_t *mem;
        if (idx < ds->open_idx) {
            buffer_write_page(&ds->buf, ds->base_ppn + idx, now_ns);
            mem = nand_page_ptr(sp->nand, ds->base_ppn + idx);
        } else {
            mem = stream_open_page(sp, idx, now_ns);
        }
        if (!mem) {
            return -1;
        }
        memcpy(mem + in, s, chunk);
        s += chunk;
        off += chunk;
        n -= chunk;
    }
    return 0;
}

void stream_pad(struct space *sp, uint64_t from, uint64_t to, uint64_t *now_ns)
{
    struct data_stream *ds = &sp->data;
    uint32_t ps = sp->nand->geo.page_size;
    if (to <= from) {
        return;
    }
    uint8_t rec[8];
    uint32_t n = stream_pad_record(rec, to - from);
    /*
     * A pad is written at the write pointer, as a streamed record is: every
     * page before it is complete, so when the buffer's window is full the
     * oldest page is programmed to open the pad's (stream_open_page()).
     */
    g_assert(from == ds->wp);
    bool streaming = ds->streaming;
    ds->streaming = true;
    /* the record may straddle a page boundary */
    uint64_t off = from;
    uint32_t done = 0;
    while (done < n) {
        uint32_t idx = (uint32_t)(off >> sp->nand->geo.page_shift), in = (uint32_t)(off & (ps - 1));
        uint32_t chunk = n - done < ps - in ? n - done : ps - in;
        uint8_t *mem = stream_open_page(sp, idx, now_ns);
        if (!mem) {
            break;
        }
        memcpy(mem + in, rec + done, chunk);
        done += chunk;
        off += chunk;
    }
    ds->streaming = streaming;
}

void stream_close_stripe(struct space *sp)
{
    struct data_stream *ds = &sp->data;
    if (ds->stripe != UINT32_MAX) {
        sp->stripes[ds->stripe].state = STRIPE_DATA;
    }
    ds->stripe = UINT32_MAX;
}

int stream_open_stripe(struct space *sp, uint64_t *now_ns)
{
    struct data_stream *ds = &sp->data;
    uint32_t s = space_alloc(sp, STRIPE_OPEN_DATA, now_ns);
    if (s == UINT32_MAX) {
        return -1;
    }
    ds->stripe = s;
    ds->base_ppn = (uint64_t)s * sp->nand->geo.pages_per_stripe;
    ds->wp = ds->frontier = 0;
    ds->prog_idx = ds->open_idx = 0;
    return 0;
}

bool stream_in_buffer(const struct space *sp, uint64_t addr)
{
    const struct data_stream *ds = &sp->data;
    uint64_t ppn = addr >> sp->nand->geo.page_shift;
    return ds->stripe != UINT32_MAX && ppn >= ds->base_ppn + ds->prog_idx &&
           ppn < ds->base_ppn + sp->nand->geo.pages_per_stripe;
}

void stream_read(struct space *sp, uint64_t addr, uint32_t len, uint64_t skip_ppn,
                 uint64_t *last_ppn, uint64_t *now_ns)
{
    uint32_t ps = sp->nand->geo.page_size, shift = sp->nand->geo.page_shift;
    const struct data_stream *ds = &sp->data;
    uint64_t start = *now_ns, done = start;
    /* pages from here on are in the buffer (the open stripe's unprogrammed pages) */
    uint64_t buffered = ds->stripe != UINT32_MAX ? ds->base_ppn + ds->prog_idx : UINT64_MAX;
    uint64_t stripe_end = ds->stripe != UINT32_MAX ? ds->base_ppn + sp->nand->geo.pages_per_stripe
                                                   : 0;
    *last_ppn = UINT64_MAX;
    if (!len) {
        return;
    }
    for (uint64_t ppn = addr >> shift; ppn <= (addr + len - 1) >> shift; ppn++) {
        if (ppn >= buffered && ppn < stripe_end) {
            continue;
        }
        if (ppn != skip_ppn) {
            uint64_t first = ppn * ps > addr ? ppn * ps : addr;
            uint64_t end = (ppn + 1) * ps < addr + len ? (ppn + 1) * ps : addr + len;
            uint64_t d = nand_read(sp->nand, ppn, (uint32_t)(end - first), start);
            if (d > done) {
                done = d;
            }
        }
        *last_ppn = ppn;
    }
    *now_ns = done;
}

void stream_read_more(struct space *sp, uint64_t addr, uint32_t len, uint64_t *now_ns)
{
    if (!len || stream_in_buffer(sp, addr)) {
        return;
    }
    *now_ns = nand_read_more(sp->nand, addr >> sp->nand->geo.page_shift, len, *now_ns);
}

void stream_discard_unprogrammed(struct space *sp)
{
    struct data_stream *ds = &sp->data;
    struct nand *n = sp->nand;
    if (ds->stripe == UINT32_MAX) {
        return;
    }
    for (uint32_t p = ds->prog_idx; p < ds->open_idx; p++) {
        uint64_t ppn = ds->base_ppn + p;
        if (ppn == n->torn_ppn) {
            /* half of it reached the cells before the power went */
            memset(nand_page_ptr(n, ppn) + n->geo.page_size / 2, 0, n->geo.page_size / 2);
        } else {
            memset(nand_page_ptr(n, ppn), 0, n->geo.page_size);
        }
        if (n->oob[ppn].kind == NAND_PAGE_BUFFERED) {
            n->oob[ppn].kind = NAND_PAGE_ERASED; /* the buffer's entry is gone with it */
        }
        if (n->unit_spare) {
            /* nvm: the slots' reverse maps were never programmed either (a torn page's too) */
            memset(nand_unit_spares(n, ppn), 0,
                   (size_t)n->geo.unit_spares_per_page * sizeof(struct nand_unit_spare));
        }
    }
}

/* ---- the index stream ---- */

/*
 * nvm without PLP: a translation page names slots of the data stream, some
 * perhaps still in the (volatile) page buffer. Those pages are programmed
 * first (the partial last one padded with empty slots), so that a power
 * cut never leaves a programmed map entry naming a slot that never reached
 * NAND: the crash mount would then have to guess the unit's older state.
 * The KV index is rebuilt from the log and needs no such order.
 */
static int data_before_map(struct space *sp, uint64_t now_ns)
{
    struct data_stream *ds = &sp->data;
    const struct nand_geometry *geo = &sp->nand->geo;
    if (sp->plp || !sp->nand->unit_spare || ds->stripe == UINT32_MAX ||
        ds->open_idx <= ds->prog_idx) {
        return 0;
    }
    uint64_t end = (ds->wp + geo->page_size - 1) & ~(uint64_t)(geo->page_size - 1);
    ds->wp = ds->frontier = end;
    if (stream_program_upto(sp, (uint32_t)(end >> geo->page_shift), now_ns) != 0) {
        return -1;
    }
    if (end == geo->stripe_bytes) {
        stream_close_stripe(sp);
    }
    return 0;
}

uint64_t stream_program_index(struct space *sp, uint32_t tag, const void *page, uint64_t *now_ns)
{
    struct page_stream *is = &sp->index;
    const struct nand_geometry *geo = &sp->nand->geo;
    if (data_before_map(sp, *now_ns) != 0) {
        return UINT64_MAX;
    }
    if (is->stripe == UINT32_MAX || is->idx == geo->pages_per_stripe) {
        if (is->stripe != UINT32_MAX) {
            sp->stripes[is->stripe].state = STRIPE_INDEX;
        }
        is->stripe = space_alloc(sp, STRIPE_OPEN_INDEX, now_ns);
        is->idx = 0;
        if (is->stripe == UINT32_MAX) {
            return UINT64_MAX;
        }
    }
    uint64_t ppn = (uint64_t)is->stripe * geo->pages_per_stripe + is->idx;
    struct nand_oob oob = {
        .kind = NAND_PAGE_INDEX,
        .tag = tag,
        .seq = sp->stripes[is->stripe].open_seq,
    };
    uint64_t done;
    if (nand_program(sp->nand, ppn, page, &oob, *now_ns, false, &done) != 0) {
        return UINT64_MAX;
    }
    is->idx++;
    sp->stripes[is->stripe].erased = false;
    sp->stripes[is->stripe].last_write_ns = *now_ns;
    /* the program runs in the background; the caller only waits for the transfer */
    (void)done;
    return ppn;
}
