/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The page map of the nvm personality: logical 4 KiB unit -> the device
 * slot (4 KiB of NAND) holding its newest copy, as in "DFTL: A Flash
 * Translation Layer Employing Demand-based Selective Caching of Page-level
 * Address Mappings". The map is cut into translation pages of one NAND
 * page each (a header and page_map_per_tpage() 4-byte entries); at most
 * frames_max of them are held in controller DRAM (the index_dram_bytes
 * budget), least recently used evicted first. A miss costs the NAND read
 * of the translation page's last copy (nothing if it was never written);
 * evicting a dirty one programs it through the space layer's index stream
 * (tag = its number) and moves its valid bytes there. A budget that holds
 * every translation page caches them all from the start: no translation
 * page traffic but what Flush and close write back.
 *
 * The host keeps the whole map array (the truth the cached and programmed
 * translation pages are views of: a translation page not in DRAM equals
 * its last programmed copy, since it is only changed after a miss loads
 * it), so a translation page's bytes are built from the array when it is
 * programmed. Host memory: units x 4 + translation pages x 13 bytes.
 *
 * Layer 5 (beside the KV index): it calls the space layer only.
 */
#ifndef KVFTL_PAGE_MAP_H
#define KVFTL_PAGE_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "space.h"
#include "write_buffer.h"

#define PAGE_MAP_UNIT_BYTES 4096u
#define PAGE_MAP_UNIT_SHIFT 12
#define PAGE_MAP_UNMAPPED UINT32_MAX /* the unit reads as zeroes */
#define PAGE_MAP_NO_PAGE UINT32_MAX

/*
 * The on-flash translation page: this header, then page_map_per_tpage()
 * little-endian uint32_t entries (units tpage * per .. , device slot =
 * byte address / 4096, PAGE_MAP_UNMAPPED for none), then zero bytes to
 * the end of the NAND page. Its spare area: kind NAND_PAGE_INDEX, tag =
 * tpage. A crash mount takes its entries as the map at write_seq and
 * replays the unit spares of slots written after it (seq > write_seq).
 */
#define TPAGE_MAGIC 0x50414d54u /* "TMAP" */

struct tpage_header {
    uint32_t magic;
    uint32_t tpage;     /* its number: it maps units [tpage * per, (tpage + 1) * per) */
    uint64_t write_seq; /* the map's write sequence number when it was built */
    uint64_t checksum;  /* XXH3-64 of its entries (the bytes after this header, per x 4) */
    uint32_t entries;   /* per: entries in this page (page_map_per_tpage()) */
    uint32_t reserved;  /* 0 */
};

struct page_map {
    struct space *sp;
    uint64_t units;          /* logical 4 KiB units of the namespace */
    uint32_t *map;           /* [units]: device slot, or PAGE_MAP_UNMAPPED */
    uint64_t mapped;         /* units mapped */
    uint64_t write_seq;      /* the last sequence number given to a written slot */

    /* translation pages and their DRAM cache */
    uint32_t per;            /* entries per translation page */
    uint32_t tpages;
    uint32_t *tpage_ppn;     /* [tpages]: NAND page of its last program, PAGE_MAP_NO_PAGE never */
    uint32_t *lru_prev, *lru_next; /* [tpages]: the cached ones, most recently used first */
    uint8_t *tstate;         /* [tpages]: TPAGE_CACHED | TPAGE_DIRTY */
    uint32_t lru_head, lru_tail;
    uint32_t frames_max;     /* DRAM budget in translation pages */
    uint32_t cached;         /* translation pages in DRAM */
    bool all_cached;         /* frames_max >= tpages: nothing is ever evicted */
    uint8_t *page_tmp;       /* one NAND page: a translation page being built */

    uint64_t nand_bytes;     /* translation pages in NAND (their latest copies) */
    uint64_t hits, misses, evicted_dirty, tpages_written; /* counters */

    /* the write buffer of partial units (blockftl.c fills and drains it; a reset empties it) */
    struct write_buffer wb;
};

#define TPAGE_CACHED 1u
#define TPAGE_DIRTY 2u

/* page_map_per_tpage() - entries of one translation page of @page_size bytes. */
static inline uint32_t page_map_per_tpage(uint32_t page_size)
{
    return (uint32_t)((page_size - sizeof(struct tpage_header)) / sizeof(uint32_t));
}

/*
 * page_map_units_for() - the most units whose data (4 KiB each) and
 * translation pages (one NAND page per page_map_per_tpage() units) fit in
 * @capacity_bytes.
 */
uint64_t page_map_units_for(uint64_t capacity_bytes, uint32_t page_size);

/*
 * page_map_init() - a map of @units units, all unmapped, nothing in NAND,
 * a cache of @frames_max translation pages holding the first ones.
 */
void page_map_init(struct page_map *pm, struct space *sp, uint64_t units, uint32_t frames_max);
void page_map_fini(struct page_map *pm);

/*
 * page_map_reset() - every unit unmapped, no translation page in NAND, the
 * write buffer empty (Format, a crash scan).
 */
void page_map_reset(struct page_map *pm);

/*
 * page_map_lookup() - the slot of @unit through the DRAM cache: a miss
 * loads its translation page (*@now_ns moves by the NAND read, and by the
 * program of a dirty page evicted for it). @dirty: the caller will change
 * the entry (page_map_assign()), so the translation page becomes dirty.
 */
uint32_t page_map_lookup(struct page_map *pm, uint64_t unit, bool dirty, uint64_t *now_ns);

/*
 * page_map_assign() - the one function that changes the map: @unit now
 * names @slot (PAGE_MAP_UNMAPPED: unmapped). The old slot's 4 KiB stop
 * being valid, the new slot's start; the mapped count follows. No cache
 * or time: page_map_lookup(.., dirty = true) first when the firmware does
 * it; a mount that rebuilds the map calls it directly.
 */
void page_map_assign(struct page_map *pm, uint64_t unit, uint32_t slot);

/* page_map_build_tpage() - the bytes translation page @t would be programmed with, into @page. */
void page_map_build_tpage(const struct page_map *pm, uint32_t t, uint8_t *page);

/*
 * page_map_write_back() - program every dirty cached translation page
 * (Flush, close). 0, or -1 if no stripe is free or power is lost.
 */
int page_map_write_back(struct page_map *pm, uint64_t *now_ns);

/*
 * page_map_tpage_relocate() - GC found translation page @t at NAND page
 * @ppn: if that is its latest copy, program it anew (read, then write).
 * Returns 1 (relocated), 0 (an older copy: nothing done) or -1 (no free
 * stripe or power lost).
 */
int page_map_tpage_relocate(struct page_map *pm, uint64_t ppn, uint32_t t, uint64_t *now_ns);

/*
 * page_map_drop_cache() - forget what DRAM held (power cycle): nothing
 * cached, nothing dirty; a mount re-caches.
 */
void page_map_drop_cache(struct page_map *pm);

/*
 * page_map_live_units() - units holding data: the mapped ones and those
 * whose only data is in the write buffer (their entry still unmapped).
 */
uint64_t page_map_live_units(const struct page_map *pm);

/* page_map_host_bytes() - host memory of the map and its bookkeeping. */
uint64_t page_map_host_bytes(const struct page_map *pm);

#endif
