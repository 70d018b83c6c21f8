/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Index page cache: index pages live in NAND; at most frames_max of them
 * are held in DRAM (the index_dram_bytes budget), least recently used
 * evicted first. A miss costs a NAND page read; evicting a dirty page
 * costs a program to the index stream (an open stripe of index pages).
 */
#include "index_cache.h"

#include <string.h>
#include <sys/mman.h>

#include <glib.h>

#include "index.h"
#include "nand.h"
#include "prefault.h"
#include "space.h"

static void lru_unlink(struct index *ix, uint32_t f)
{
    struct index_frame *fr = &ix->frames[f];
    if (fr->lru_prev != UINT32_MAX) {
        ix->frames[fr->lru_prev].lru_next = fr->lru_next;
    } else {
        ix->lru_head = fr->lru_next;
    }
    if (fr->lru_next != UINT32_MAX) {
        ix->frames[fr->lru_next].lru_prev = fr->lru_prev;
    } else {
        ix->lru_tail = fr->lru_prev;
    }
    fr->lru_prev = fr->lru_next = UINT32_MAX;
}

static void lru_push_front(struct index *ix, uint32_t f)
{
    struct index_frame *fr = &ix->frames[f];
    fr->lru_prev = UINT32_MAX;
    fr->lru_next = ix->lru_head;
    if (ix->lru_head != UINT32_MAX) {
        ix->frames[ix->lru_head].lru_prev = f;
    } else {
        ix->lru_tail = f;
    }
    ix->lru_head = f;
}

static int stamp_cmp(const void *a, const void *b, void *opaque)
{
    const struct index_frame *fr = opaque;
    uint64_t x = fr[*(const uint32_t *)a].stamp, y = fr[*(const uint32_t *)b].stamp;
    return x > y ? -1 : x < y; /* most recent first */
}

/*
 * While frames are still free nothing is evicted, so hits only record
 * their time; the first eviction orders the list by those times.
 */
static void lru_sort(struct index *ix)
{
    uint32_t *order = g_new(uint32_t, ix->nframes);
    for (uint32_t f = 0; f < ix->nframes; f++) {
        order[f] = f;
    }
    g_qsort_with_data(order, (gint)ix->nframes, sizeof(uint32_t), stamp_cmp, ix->frames);
    ix->lru_head = ix->lru_tail = UINT32_MAX;
    for (uint32_t i = ix->nframes; i-- > 0;) {
        lru_push_front(ix, order[i]);
    }
    g_free(order);
    ix->lru_sorted = true;
}

int index_page_write(struct index *ix, uint32_t page_id, const uint8_t *mem, uint64_t *now_ns)
{
    const struct nand_geometry *geo = &ix->sp->nand->geo;
    const uint8_t *src = mem;
    if (ix->page_bytes < geo->page_size) {
        /* an index page smaller than a NAND page: the rest is unused */
        if (!ix->write_tmp) {
            ix->write_tmp = g_malloc0(geo->page_size);
        }
        memcpy(ix->write_tmp, mem, ix->page_bytes);
        src = ix->write_tmp;
    }
    uint64_t ppn = stream_program_index(ix->sp, page_id, src, now_ns);
    if (ppn == UINT64_MAX) {
        return -1;
    }
    if (ix->page_ppn[page_id] != UINT32_MAX) {
        space_valid_add(ix->sp, (uint64_t)ix->page_ppn[page_id] * geo->page_size,
                        -(int64_t)geo->page_size, 0);
        ix->nand_bytes -= geo->page_size;
    }
    ix->page_ppn[page_id] = (uint32_t)ppn;
    space_valid_add(ix->sp, ppn * geo->page_size, geo->page_size, 0);
    ix->nand_bytes += geo->page_size;
    ix->pages_written++;
    if (ix->page_moved) {
        ix->page_moved(ix, page_id, now_ns);
    }
    return 0;
}

/* Chunk @c of frame memory (see frame_mem()), allocated if it is not. */
static uint8_t *chunk_get(struct index *ix, uint32_t c)
{
    uint32_t per_chunk = HUGE_PAGE_BYTES / ix->page_bytes;
    if (c >= ix->chunks_cap) {
        uint32_t cap = ix->chunks_cap ? ix->chunks_cap * 2 : 8;
        while (cap <= c) {
            cap *= 2;
        }
        ix->chunks = g_renew(uint8_t *, ix->chunks, cap);
        for (uint32_t i = ix->chunks_cap; i < cap; i++) {
            ix->chunks[i] = NULL;
        }
        ix->chunks_cap = cap;
    }
    if (!ix->chunks[c]) {
        uint64_t left = (uint64_t)ix->frames_max - (uint64_t)c * per_chunk;
        uint32_t n = left < per_chunk ? (uint32_t)left : per_chunk;
        if (n == 0) {
            n = 1;
        }
        size_t bytes = (size_t)n * ix->page_bytes;
        if (bytes == HUGE_PAGE_BYTES) {
            ix->chunks[c] = g_aligned_alloc(1, bytes, HUGE_PAGE_BYTES);
            madvise(ix->chunks[c], bytes, MADV_HUGEPAGE);
        } else {
            ix->chunks[c] = g_aligned_alloc(1, bytes, 4096);
        }
        ix->chunk_bytes += bytes;
    }
    return ix->chunks[c];
}

/*
 * Frame memory comes in chunks of up to 2 MiB (huge pages where the kernel
 * allows: index probes are random), never more than the budget allows.
 * Frames are taken in order, so when a chunk's first frame is taken the
 * next chunk is allocated too and populated by the NAND's prefault helper
 * (prefault.h) while this one fills: the split that takes its first frame
 * does not wait on the host for fresh memory. One chunk (2 MiB) ahead at
 * most, within the budget, and only from chunk ix->prefault_from_chunk on
 * (INDEX_PREFAULT_FROM_CHUNK).
 */
static uint8_t *frame_mem(struct index *ix, uint32_t f)
{
    uint32_t per_chunk = HUGE_PAGE_BYTES / ix->page_bytes;
    uint32_t c = f / per_chunk;
    uint8_t *mem = chunk_get(ix, c);
    if (f % per_chunk == 0 && c + 1 >= ix->prefault_from_chunk &&
        (uint64_t)(c + 2) * per_chunk <= ix->frames_max &&
        (c + 1 >= ix->chunks_cap || !ix->chunks[c + 1])) {
        prefault_ask(&ix->sp->nand->prefault, chunk_get(ix, c + 1), HUGE_PAGE_BYTES);
    }
    return mem + (size_t)(f % per_chunk) * ix->page_bytes;
}

static uint32_t frame_add(struct index *ix)
{
    if (ix->nframes == ix->frames_cap) {
        ix->frames_cap = ix->frames_cap ? ix->frames_cap * 2 : 16;
        ix->frames = g_renew(struct index_frame, ix->frames, ix->frames_cap);
    }
    uint32_t f = ix->nframes++;
    ix->frames[f].mem = f < ix->frames_max ? frame_mem(ix, f) : g_malloc(ix->page_bytes);
    ix->frames[f].page_id = INDEX_NO_PAGE;
    ix->frames[f].dirty = false;
    ix->frames[f].lru_prev = ix->frames[f].lru_next = UINT32_MAX;
    return f;
}

/* A frame for a page: a new one while under budget, else the LRU victim. */
static uint32_t frame_take(struct index *ix, uint64_t *now_ns)
{
    if (ix->nframes < ix->frames_max) {
        return frame_add(ix);
    }
    if (!ix->lru_sorted) {
        lru_sort(ix);
    }
    uint32_t f = ix->lru_tail;
    while (f != UINT32_MAX && ix->frames[f].page_id == ix->pinned) {
        f = ix->frames[f].lru_prev;
    }
    g_assert(f != UINT32_MAX);
    struct index_frame *fr = &ix->frames[f];
    if (fr->dirty) {
        if (index_page_write(ix, fr->page_id, fr->mem, now_ns) != 0 && !ix->sp->nand->power_lost) {
            /* no stripe for index pages: keep the page and exceed the budget */
            return frame_add(ix);
        }
        ix->evicted_dirty++;
        fr->dirty = false;
    }
    lru_unlink(ix, f);
    ix->page_frame[fr->page_id] = UINT32_MAX;
    fr->page_id = INDEX_NO_PAGE;
    return f;
}

uint8_t *index_cache_get(struct index *ix, uint32_t page_id, uint64_t *now_ns)
{
    uint32_t f = ix->page_frame[page_id];
    ix->clock++;
    if (f != UINT32_MAX) {
        struct index_frame *fr = &ix->frames[f];
        ix->hits++;
        if (!ix->lru_sorted) {
            /* nothing can be evicted yet: remember the access, order the list later */
            fr->stamp = ix->clock;
            return fr->mem;
        }
        /*
         * Lazy promotion: a page moved to the front within the last quarter of
         * the cache's accesses is still in its most recent quarter; moving it
         * again would only touch its neighbours. Exact LRU below 64 frames.
         */
        if (ix->lru_head != f &&
            ix->clock - fr->stamp > (ix->nframes >= 64 ? ix->nframes / 4 : 0)) {
            lru_unlink(ix, f);
            lru_push_front(ix, f);
            fr->stamp = ix->clock;
        }
        return fr->mem;
    }
    ix->misses++;
    f = frame_take(ix, now_ns);
    struct index_frame *fr = &ix->frames[f];
    uint32_t ppn = ix->page_ppn[page_id];
    g_assert(ppn != UINT32_MAX);
    *now_ns = nand_read(ix->sp->nand, ppn, ix->page_bytes, *now_ns);
    memcpy(fr->mem, nand_page_ptr(ix->sp->nand, ppn), ix->page_bytes);
    fr->page_id = page_id;
    fr->dirty = false;
    fr->stamp = ix->clock;
    ix->page_frame[page_id] = f;
    lru_push_front(ix, f);
    return fr->mem;
}

uint8_t *index_cache_new(struct index *ix, uint32_t page_id, uint64_t *now_ns)
{
    uint32_t f = frame_take(ix, now_ns);
    struct index_frame *fr = &ix->frames[f];
    memset(fr->mem, 0, ix->page_bytes);
    struct index_page_header *h = (struct index_page_header *)fr->mem;
    h->magic = INDEX_PAGE_MAGIC;
    h->page_id = page_id;
    fr->page_id = page_id;
    fr->dirty = true;
    fr->stamp = ++ix->clock;
    ix->page_frame[page_id] = f;
    lru_push_front(ix, f);
    return fr->mem;
}

void index_cache_dirty(struct index *ix, uint32_t page_id)
{
    ix->frames[ix->page_frame[page_id]].dirty = true;
}

int index_cache_write_back(struct index *ix, uint64_t *now_ns)
{
    for (uint32_t f = 0; f < ix->nframes; f++) {
        struct index_frame *fr = &ix->frames[f];
        if (fr->page_id != INDEX_NO_PAGE && fr->dirty) {
            if (index_page_write(ix, fr->page_id, fr->mem, now_ns) != 0) {
                return -1;
            }
            fr->dirty = false;
        }
    }
    return 0;
}

void index_cache_drop(struct index *ix)
{
    for (uint32_t f = ix->frames_max; f < ix->nframes; f++) {
        g_free(ix->frames[f].mem); /* over-budget frames (no stripe to evict into) */
    }
    for (uint32_t c = 0; c < ix->chunks_cap; c++) {
        if (ix->chunks[c]) {
            prefault_forget(&ix->sp->nand->prefault, ix->chunks[c], HUGE_PAGE_BYTES);
        }
        g_aligned_free(ix->chunks[c]);
    }
    g_free(ix->chunks);
    ix->chunks = NULL;
    ix->chunks_cap = 0;
    ix->chunk_bytes = 0;
    g_free(ix->frames);
    ix->frames = NULL;
    ix->nframes = ix->frames_cap = 0;
    ix->lru_head = ix->lru_tail = UINT32_MAX;
    ix->lru_sorted = false;
    for (uint32_t p = 0; p < ix->npages; p++) {
        ix->page_frame[p] = UINT32_MAX;
    }
}

const uint8_t *index_page_peek(const struct index *ix, uint32_t page_id)
{
    uint32_t f = ix->page_frame[page_id];
    if (f != UINT32_MAX) {
        return ix->frames[f].mem;
    }
    if (ix->page_ppn[page_id] != UINT32_MAX) {
        return nand_page_ptr(ix->sp->nand, ix->page_ppn[page_id]);
    }
    return NULL;
}
