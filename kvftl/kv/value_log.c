/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Value log: blob format, append through the page buffer, reads, flush. */
#include "value_log.h"

#include <string.h>

#include <glib.h>
#include <kvftl/kvftl.h>
#include <xxhash.h>

#include "nand.h"
#include "packing.h"
#include "space.h"

uint64_t blob_checksum(uint8_t type, uint32_t key_bytes, uint32_t value_bytes, uint64_t seq,
                       const void *key, const void *value)
{
    uint64_t seed = seq ^ ((uint64_t)type << 56) ^ ((uint64_t)key_bytes << 32) ^ value_bytes;
    uint64_t h = XXH3_64bits_withSeed(key, key_bytes, seed);
    return XXH3_64bits_withSeed(value_bytes ? value : "", value_bytes, h);
}

void vlog_init(struct value_log *vl, struct space *sp, const struct kvftl_config *cfg)
{
    memset(vl, 0, sizeof(*vl));
    vl->sp = sp;
    pack_init(&vl->pk, sp, cfg);
    vl->pu = cfg->placement_unit_bytes;
    vl->pu_large = cfg->large_blob_unit_bytes ? cfg->large_blob_unit_bytes : vl->pu;
    vl->copy_bytes_per_us = cfg->dram_copy_bytes_per_us;
    sp->sync_programs = cfg->sync_programs;
    vl->next_seq = 1;
    vlog_forget(vl);
}

uint64_t vlog_cpu_run(struct value_log *vl, uint64_t now_ns, uint64_t work_ns)
{
    if (!work_ns) {
        return now_ns;
    }
    uint64_t added;
    uint64_t end = cal_book(&vl->cpu, now_ns, work_ns, &added);
    vl->cpu_work_ns += added;
    return end;
}

uint64_t vlog_cpu_busy_until(struct value_log *vl, uint64_t now_ns, uint64_t until_ns)
{
    if (until_ns <= now_ns) {
        return now_ns;
    }
    vl->cpu_work_ns += cal_mark(&vl->cpu, now_ns, until_ns);
    return until_ns;
}

void vlog_fini(struct value_log *vl)
{
    pack_fini(&vl->pk);
}

void vlog_forget(struct value_log *vl)
{
    stream_forget(vl->sp);
    pack_forget(&vl->pk);
}

/* Pad out the open stripe, program it and close it. -1 on power loss. */
static int vlog_finish_stripe(struct value_log *vl, uint64_t *now_ns)
{
    struct data_stream *ds = &vl->sp->data;
    pack_drain_dlt(&vl->pk, now_ns);
    pack_skip(&vl->pk, ds->wp, vl->sp->nand->geo.stripe_bytes, now_ns);
    ds->wp = ds->frontier = vl->sp->nand->geo.stripe_bytes;
    if (stream_program_upto(vl->sp, vl->sp->nand->geo.pages_per_stripe, *now_ns) != 0) {
        return -1;
    }
    stream_close_stripe(vl->sp);
    return 0;
}

/* A fresh data stripe, with an empty DLT. 0, or -1 if none is free. */
static int vlog_open_stripe(struct value_log *vl, uint64_t *now_ns)
{
    if (stream_open_stripe(vl->sp, now_ns) != 0) {
        return -1;
    }
    pack_forget(&vl->pk);
    return 0;
}

int vlog_append(struct value_log *vl, const struct blob_header *h, const void *key,
                const void *value, bool dma, uint32_t inline_bytes, bool relocation,
                struct placement *out, uint64_t *now_ns)
{
    struct data_stream *ds = &vl->sp->data;
    uint32_t len = BLOB_HEADER_BYTES + h->key_bytes + h->value_bytes;
    uint32_t occ = vlog_occupied(vl, len);
    uint64_t off;
    bool ahead;

    if (ds->stripe == UINT32_MAX && vlog_open_stripe(vl, now_ns) != 0) {
        return -1;
    }
    uint64_t backfills = vl->pk.dlt_backfills, padding = vl->pk.padding_bytes;
    uint64_t programmed = ds->pages_programmed;
    while (pack_place(&vl->pk, occ, dma, &off, &ahead, now_ns) == PACK_STRIPE_FULL) {
        if (vlog_finish_stripe(vl, now_ns) != 0) {
            return -2;
        }
        if (vlog_open_stripe(vl, now_ns) != 0) {
            return -1;
        }
    }
    if (relocation) {
        /* GC copies are not packing decisions of host values */
        vl->pk.dlt_backfills = backfills;
        vl->pk.padding_bytes = padding;
    }

    /* header, key, value: streamed at wp unless placed ahead by backfill */
    ds->streaming = !ahead;
    if (stream_write(vl->sp, off, h, BLOB_HEADER_BYTES, now_ns) != 0 ||
        stream_write(vl->sp, off + BLOB_HEADER_BYTES, key, h->key_bytes, now_ns) != 0 ||
        stream_write(vl->sp, off + BLOB_HEADER_BYTES + h->key_bytes, value, h->value_bytes,
                     now_ns) != 0) {
        return -2;
    }
    if (vl->pk.page_data && occ > vl->pk.page_data) {
        /* a blob split over several data areas: every one of its pages is programmed */
        if (!stream_open_page(vl->sp, (uint32_t)((off + occ - 1) >> vl->sp->nand->geo.page_shift),
                              now_ns)) {
            return -2;
        }
    }
    ds->streaming = false;

    if (!relocation) {
        vl->pk.padding_bytes += occ - len; /* rounding up to the placement unit */
        uint64_t copied;
        if (!dma) {
            copied = h->value_bytes;
        } else if (vl->pk.policy == KVFTL_PACK_ALL && off % DMA_UNIT_BYTES != 0) {
            copied = h->value_bytes; /* landed on a 4 KiB boundary, moved to wp */
        } else {
            copied = inline_bytes;
        }
        vl->memcpy_bytes += copied;
        if (vl->copy_bytes_per_us && copied) {
            /* one firmware CPU does every copy (as on Cosmos+), between commands' other work */
            *now_ns = vlog_cpu_run(
                vl, *now_ns, (copied * 1000 + vl->copy_bytes_per_us - 1) / vl->copy_bytes_per_us);
        }
    }

    struct stripe_info *si = &vl->sp->stripes[ds->stripe];
    si->last_write_ns = *now_ns;
    if (h->seq < si->min_blob_seq) {
        si->min_blob_seq = h->seq;
    }
    out->addr = (uint64_t)ds->stripe * vl->sp->nand->geo.stripe_bytes + off;
    out->occupied = occ;
    out->ahead_of_wp = ahead;

    /* every page wholly before wp is final */
    if (stream_program_upto(vl->sp, (uint32_t)(ds->wp >> vl->sp->nand->geo.page_shift), *now_ns) !=
        0) {
        return -2;
    }
    if (vl->sp->sync_programs && ds->pages_programmed != programmed) {
        /*
         * BandSlim's firmware busy-waits on its one CPU until no NAND
         * request is outstanding (tunables.def): no other command's
         * firmware work runs meanwhile.
         */
        *now_ns = vlog_cpu_busy_until(vl, *now_ns, nand_idle_ns(vl->sp->nand));
    }
    return 0;
}

uint32_t vlog_live_count(const struct value_log *vl, struct live_gauges *g, uint64_t loc)
{
    uint32_t occ = vlog_occupied(vl, loc_len(loc));
    if (loc_tombstone(loc)) {
        g->tombstone_bytes += occ;
    } else {
        g->keys++;
        g->nand_bytes += occ;
        g->user_bytes += loc_len(loc) - BLOB_HEADER_BYTES;
    }
    return occ;
}

/* vlog_live_count() undone. */
static uint32_t live_uncount(const struct value_log *vl, struct live_gauges *g, uint64_t loc)
{
    uint32_t occ = vlog_occupied(vl, loc_len(loc));
    if (loc_tombstone(loc)) {
        g->tombstone_bytes -= occ;
    } else {
        g->keys--;
        g->nand_bytes -= occ;
        g->user_bytes -= loc_len(loc) - BLOB_HEADER_BYTES;
    }
    return occ;
}

void vlog_account_replace(struct value_log *vl, uint64_t oldloc, uint64_t newloc, uint64_t seq)
{
    if (oldloc) {
        uint32_t occ = live_uncount(vl, &vl->live, oldloc);
        space_valid_add(vl->sp, loc_addr(oldloc), -(int64_t)occ, 0);
    }
    if (newloc) {
        uint32_t occ = vlog_live_count(vl, &vl->live, newloc);
        space_valid_add(vl->sp, loc_addr(newloc), occ, seq);
    }
}

/*
 * The backing store's bytes [addr, addr + len), in place or in the view
 * scratch. One scratch of a whole record's size, never moved: a view of a
 * blob's head stays good while the whole blob is read into the same scratch.
 */
static const uint8_t *bytes_view(struct nand *n, uint64_t addr, uint32_t len)
{
    size_t most = BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES + KVFTL_VALUE_MAX_BYTES;
    return nand_view(n, addr, len, nand_scratch_get(&n->view_scratch, len > most ? len : most));
}

const uint8_t *vlog_bytes(struct value_log *vl, uint64_t addr, uint32_t len, uint64_t skip_ppn,
                          uint64_t *last_ppn, uint64_t *now_ns)
{
    /* a stripe is contiguous in the backing store, buffered pages included */
    stream_read(vl->sp, addr, len, skip_ppn, last_ppn, now_ns);
    return bytes_view(vl->sp->nand, addr, len);
}

void vlog_copy(struct value_log *vl, uint64_t addr, uint32_t len, void *dst, uint64_t skip_ppn,
               uint64_t *now_ns)
{
    uint64_t last;
    stream_read(vl->sp, addr, len, skip_ppn, &last, now_ns);
    nand_copy_out(vl->sp->nand, addr, dst, len);
}

const uint8_t *vlog_read_record(struct value_log *vl, uint64_t loc, uint8_t type,
                                uint32_t key_bytes, uint64_t skip_ppn, const uint8_t *record,
                                uint64_t *now_ns)
{
    uint64_t addr = loc_addr(loc), last;
    uint32_t len = loc_len(loc);
    if (len < BLOB_HEADER_BYTES + key_bytes || addr + len > vl->sp->nand->geo.total_bytes) {
        return NULL;
    }
    const uint8_t *p;
    uint32_t shift = vl->sp->nand->geo.page_shift;
    uint64_t more = *now_ns;
    if (record) {
        /* the reads, as below; none when the record is on @skip_ppn alone, as it is for a lookup */
        if ((addr >> shift) != skip_ppn || ((addr + len - 1) >> shift) != skip_ppn) {
            stream_read(vl->sp, addr, len, skip_ppn, &last, now_ns);
        }
        p = record;
    } else {
        p = vlog_bytes(vl, addr, len, skip_ppn, &last, now_ns);
    }
    if ((addr >> shift) == skip_ppn) {
        /* the lookup sensed this page and moved the header and key: the rest still moves */
        uint64_t page_end = (skip_ppn + 1) << shift;
        uint64_t on_page = addr + len < page_end ? len : page_end - addr;
        uint32_t head = BLOB_HEADER_BYTES + key_bytes;
        if (on_page > head) {
            stream_read_more(vl->sp, addr + head, (uint32_t)(on_page - head), &more);
        }
        *now_ns = more > *now_ns ? more : *now_ns;
    }
    struct blob_header h;
    memcpy(&h, p, sizeof(h));
    if (h.type != type || h.key_bytes != key_bytes ||
        h.value_bytes != len - BLOB_HEADER_BYTES - key_bytes) {
        return NULL;
    }
    const uint8_t *key = p + BLOB_HEADER_BYTES;
    if (blob_checksum(h.type, h.key_bytes, h.value_bytes, h.seq, key, key + key_bytes) !=
        h.checksum) {
        return NULL;
    }
    return p;
}

void vlog_prefetch(const struct value_log *vl, uint64_t loc)
{
    uint32_t ahead = loc_len(loc) < 256 ? loc_len(loc) : 256;
    nand_prefetch(vl->sp->nand, loc_addr(loc), ahead);
}

void vlog_prefetch_entry(const struct value_log *vl, uint64_t loc)
{
    const struct nand *n = vl->sp->nand;
    nand_prefetch_entry(n, loc_addr(loc) >> n->geo.page_shift);
}

bool vlog_key_matches(struct value_log *vl, uint64_t loc, const void *key, uint32_t key_bytes,
                      uint64_t *now_ns, const uint8_t **record)
{
    if (record) {
        *record = NULL;
    }
    struct nand *n = vl->sp->nand;
    uint64_t addr = loc_addr(loc), last;
    uint32_t len = loc_len(loc), head = BLOB_HEADER_BYTES + key_bytes;
    if (len < head) {
        return false;
    }
    bool whole = record && (addr & (n->geo.page_size - 1)) + len <= n->geo.page_size &&
                 addr + len <= n->geo.total_bytes;
    const uint8_t *p;
    if (whole) {
        /*
         * The reader goes on to read this record whole: view it whole now
         * (one lookup in the backing store instead of two) and start its
         * value's lines behind the header's. The NAND read is the header
         * and key's, as below.
         */
        stream_read(vl->sp, addr, head, UINT64_MAX, &last, now_ns);
        p = bytes_view(n, addr, len);
        for (uint32_t off = 64; off < len && off < 256; off += 64) {
            __builtin_prefetch(p + off);
        }
    } else {
        /*
         * A hit goes on to copy the value: start loading the blob's next
         * cache lines now, so their misses overlap the header's instead of
         * following it.
         */
        vlog_prefetch(vl, loc);
        p = vlog_bytes(vl, addr, head, UINT64_MAX, &last, now_ns);
    }
    bool match = p[1] == key_bytes && memcmp(p + BLOB_HEADER_BYTES, key, key_bytes) == 0;
    if (match && whole) {
        *record = p;
    }
    return match;
}

int vlog_flush(struct value_log *vl, uint64_t *now_ns)
{
    struct data_stream *ds = &vl->sp->data;
    uint32_t ps = vl->sp->nand->geo.page_size;
    if (ds->stripe == UINT32_MAX) {
        return 0;
    }
    pack_drain_dlt(&vl->pk, now_ns);
    uint64_t end = (ds->wp + ps - 1) & ~(uint64_t)(ps - 1);
    pack_skip(&vl->pk, ds->wp, end, now_ns);
    ds->wp = ds->frontier = end;
    if (stream_program_upto(vl->sp, (uint32_t)(end >> vl->sp->nand->geo.page_shift), *now_ns) !=
        0) {
        return -1;
    }
    if (end == vl->sp->nand->geo.stripe_bytes) {
        stream_close_stripe(vl->sp);
    }
    return 0;
}

void vlog_plp_dump(struct value_log *vl, uint64_t now_ns)
{
    struct data_stream *ds = &vl->sp->data;
    if (ds->stripe == UINT32_MAX) {
        return;
    }
    ds->plp_dump = true;
    if (ds->streaming) {
        /* a blob was being copied: program what is there; its checksum will not match */
        stream_program_upto(vl->sp, ds->open_idx, now_ns);
    } else {
        vlog_flush(vl, &now_ns);
    }
    ds->plp_dump = false;
}
