/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The nvm personality's page map and its DFTL translation-page cache (page_map.h). */
#include "page_map.h"

#include <string.h>

#include <glib.h>
#include <xxhash.h>

#include "nand.h"
#include "space.h"

uint64_t page_map_units_for(uint64_t capacity_bytes, uint32_t page_size)
{
    uint64_t per = page_map_per_tpage(page_size);
    /* per units cost per x 4 KiB of data and one page of map */
    uint64_t group = per * PAGE_MAP_UNIT_BYTES + page_size;
    uint64_t units = capacity_bytes / group * per;
    uint64_t left = capacity_bytes % group;
    if (left > page_size) {
        /* a last, partial translation page and the units it maps */
        units += (left - page_size) / PAGE_MAP_UNIT_BYTES;
    }
    return units;
}

static void lru_unlink(struct page_map *pm, uint32_t t)
{
    uint32_t p = pm->lru_prev[t], n = pm->lru_next[t];
    if (p != PAGE_MAP_NO_PAGE) {
        pm->lru_next[p] = n;
    } else {
        pm->lru_head = n;
    }
    if (n != PAGE_MAP_NO_PAGE) {
        pm->lru_prev[n] = p;
    } else {
        pm->lru_tail = p;
    }
    pm->lru_prev[t] = pm->lru_next[t] = PAGE_MAP_NO_PAGE;
}

static void lru_push_front(struct page_map *pm, uint32_t t)
{
    pm->lru_prev[t] = PAGE_MAP_NO_PAGE;
    pm->lru_next[t] = pm->lru_head;
    if (pm->lru_head != PAGE_MAP_NO_PAGE) {
        pm->lru_prev[pm->lru_head] = t;
    } else {
        pm->lru_tail = t;
    }
    pm->lru_head = t;
}

/* The cache of a device whose map is all unmapped: the first frames_max pages, clean. */
static void cache_fill_empty(struct page_map *pm)
{
    pm->lru_head = pm->lru_tail = PAGE_MAP_NO_PAGE;
    pm->cached = 0;
    for (uint32_t t = 0; t < pm->tpages; t++) {
        pm->tstate[t] = 0;
        pm->lru_prev[t] = pm->lru_next[t] = PAGE_MAP_NO_PAGE;
    }
    /* nothing to read: a map never written is all unmapped */
    for (uint32_t t = pm->tpages < pm->frames_max ? pm->tpages : pm->frames_max; t-- > 0;) {
        pm->tstate[t] = TPAGE_CACHED;
        lru_push_front(pm, t);
        pm->cached++;
    }
}

void page_map_init(struct page_map *pm, struct space *sp, uint64_t units, uint32_t frames_max)
{
    memset(pm, 0, sizeof(*pm));
    pm->sp = sp;
    pm->units = units;
    pm->per = page_map_per_tpage(sp->nand->geo.page_size);
    pm->tpages = (uint32_t)((units + pm->per - 1) / pm->per);
    pm->map = g_new(uint32_t, units ? units : 1);
    pm->tpage_ppn = g_new(uint32_t, pm->tpages ? pm->tpages : 1);
    pm->lru_prev = g_new(uint32_t, pm->tpages ? pm->tpages : 1);
    pm->lru_next = g_new(uint32_t, pm->tpages ? pm->tpages : 1);
    pm->tstate = g_new0(uint8_t, pm->tpages ? pm->tpages : 1);
    pm->page_tmp = g_malloc0(sp->nand->geo.page_size);
    pm->frames_max = frames_max;
    pm->all_cached = frames_max >= pm->tpages;
    page_map_reset(pm);
}

void page_map_fini(struct page_map *pm)
{
    g_free(pm->map);
    g_free(pm->tpage_ppn);
    g_free(pm->lru_prev);
    g_free(pm->lru_next);
    g_free(pm->tstate);
    g_free(pm->page_tmp);
    memset(pm, 0, sizeof(*pm));
}

void page_map_reset(struct page_map *pm)
{
    for (uint64_t u = 0; u < pm->units; u++) {
        pm->map[u] = PAGE_MAP_UNMAPPED;
    }
    for (uint32_t t = 0; t < pm->tpages; t++) {
        pm->tpage_ppn[t] = PAGE_MAP_NO_PAGE;
    }
    pm->mapped = 0;
    pm->nand_bytes = 0;
    cache_fill_empty(pm);
    write_buffer_clear(&pm->wb);
}

void page_map_build_tpage(const struct page_map *pm, uint32_t t, uint8_t *page)
{
    uint32_t ps = pm->sp->nand->geo.page_size;
    uint64_t first = (uint64_t)t * pm->per;
    uint64_t n = pm->units - first < pm->per ? pm->units - first : pm->per;
    uint32_t *e = (uint32_t *)(page + sizeof(struct tpage_header));
    memcpy(e, pm->map + first, n * sizeof(uint32_t));
    for (uint64_t i = n; i < pm->per; i++) {
        e[i] = PAGE_MAP_UNMAPPED; /* past the namespace's last unit */
    }
    size_t used = sizeof(struct tpage_header) + (size_t)pm->per * sizeof(uint32_t);
    memset(page + used, 0, ps - used);
    struct tpage_header h = {
        .magic = TPAGE_MAGIC,
        .tpage = t,
        .write_seq = pm->write_seq,
        .checksum = XXH3_64bits(e, (size_t)pm->per * sizeof(uint32_t)),
        .entries = pm->per,
        .reserved = 0,
    };
    memcpy(page, &h, sizeof(h));
}

/* Program translation page @t (built from the map) to the index stream. 0 or -1. */
static int tpage_write(struct page_map *pm, uint32_t t, uint64_t *now_ns)
{
    uint32_t ps = pm->sp->nand->geo.page_size;
    page_map_build_tpage(pm, t, pm->page_tmp);
    uint64_t ppn = stream_program_index(pm->sp, t, pm->page_tmp, now_ns);
    if (ppn == UINT64_MAX) {
        return -1;
    }
    if (pm->tpage_ppn[t] != PAGE_MAP_NO_PAGE) {
        space_valid_add(pm->sp, (uint64_t)pm->tpage_ppn[t] * ps, -(int64_t)ps, 0);
        pm->nand_bytes -= ps;
    }
    pm->tpage_ppn[t] = (uint32_t)ppn;
    space_valid_add(pm->sp, ppn * ps, ps, 0);
    pm->nand_bytes += ps;
    pm->tpages_written++;
    pm->tstate[t] &= (uint8_t)~TPAGE_DIRTY;
    return 0;
}

/* Room for one more cached page: evict the least recently used (programming it if dirty). */
static void cache_make_room(struct page_map *pm, uint64_t *now_ns)
{
    while (pm->cached >= pm->frames_max && pm->lru_tail != PAGE_MAP_NO_PAGE) {
        uint32_t v = pm->lru_tail;
        if (pm->tstate[v] & TPAGE_DIRTY) {
            if (tpage_write(pm, v, now_ns) != 0) {
                /* no stripe for it (or power lost): keep it and exceed the budget */
                return;
            }
            pm->evicted_dirty++;
        }
        lru_unlink(pm, v);
        pm->tstate[v] = 0;
        pm->cached--;
    }
}

uint32_t page_map_lookup(struct page_map *pm, uint64_t unit, bool dirty, uint64_t *now_ns)
{
    uint32_t t = (uint32_t)(unit / pm->per);
    if (pm->all_cached) {
        pm->hits++;
    } else if (pm->tstate[t] & TPAGE_CACHED) {
        pm->hits++;
        if (pm->lru_head != t) {
            lru_unlink(pm, t);
            lru_push_front(pm, t);
        }
    } else {
        pm->misses++;
        cache_make_room(pm, now_ns);
        if (pm->tpage_ppn[t] != PAGE_MAP_NO_PAGE) {
            *now_ns = nand_read(pm->sp->nand, pm->tpage_ppn[t], pm->sp->nand->geo.page_size,
                                *now_ns);
        }
        pm->tstate[t] = TPAGE_CACHED;
        lru_push_front(pm, t);
        pm->cached++;
    }
    if (dirty) {
        pm->tstate[t] |= TPAGE_DIRTY;
    }
    return pm->map[unit];
}

void page_map_assign(struct page_map *pm, uint64_t unit, uint32_t slot)
{
    uint32_t old = pm->map[unit];
    if (old != PAGE_MAP_UNMAPPED) {
        space_valid_add(pm->sp, (uint64_t)old << PAGE_MAP_UNIT_SHIFT, -(int64_t)PAGE_MAP_UNIT_BYTES,
                        0);
        pm->mapped--;
    }
    if (slot != PAGE_MAP_UNMAPPED) {
        space_valid_add(pm->sp, (uint64_t)slot << PAGE_MAP_UNIT_SHIFT, PAGE_MAP_UNIT_BYTES, 0);
        pm->mapped++;
    }
    pm->map[unit] = slot;
}

int page_map_write_back(struct page_map *pm, uint64_t *now_ns)
{
    for (uint32_t t = 0; t < pm->tpages; t++) {
        if ((pm->tstate[t] & TPAGE_DIRTY) && tpage_write(pm, t, now_ns) != 0) {
            return -1;
        }
    }
    return 0;
}

int page_map_tpage_relocate(struct page_map *pm, uint64_t ppn, uint32_t t, uint64_t *now_ns)
{
    if (t >= pm->tpages || pm->tpage_ppn[t] != ppn) {
        return 0; /* an older copy */
    }
    *now_ns = nand_read(pm->sp->nand, ppn, pm->sp->nand->geo.page_size, *now_ns);
    /* the map array is what the page holds, plus any change made since in DRAM */
    return tpage_write(pm, t, now_ns) == 0 ? 1 : -1;
}

void page_map_drop_cache(struct page_map *pm)
{
    pm->lru_head = pm->lru_tail = PAGE_MAP_NO_PAGE;
    pm->cached = 0;
    for (uint32_t t = 0; t < pm->tpages; t++) {
        pm->tstate[t] = 0;
        pm->lru_prev[t] = pm->lru_next[t] = PAGE_MAP_NO_PAGE;
    }
}

uint64_t page_map_host_bytes(const struct page_map *pm)
{
    return pm->units * sizeof(uint32_t) + (uint64_t)pm->tpages * 13 + pm->sp->nand->geo.page_size;
}

uint64_t page_map_live_units(const struct page_map *pm)
{
    uint64_t n = pm->mapped;
    for (uint32_t e = pm->wb.head; e != WRITE_BUFFER_NONE; e = pm->wb.next[e]) {
        n += pm->map[pm->wb.unit[e]] == PAGE_MAP_UNMAPPED;
    }
    return n;
}
