/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Index page cache: the index pages live in NAND (the space layer's index
 * stream); at most frames_max of them are held in DRAM (the
 * index_dram_bytes budget), least recently used evicted first. A miss
 * costs a NAND page read; evicting a dirty page programs it to the index
 * stream (space.h) and moves its valid bytes there. Its state (frames, LRU
 * list, page table) is part of struct index (index.h); the hash index
 * reaches its pages only through these calls.
 */
#ifndef KVFTL_INDEX_CACHE_H
#define KVFTL_INDEX_CACHE_H

#include <stdint.h>

struct index;

/*
 * The first chunk of frame memory (2 MiB) allocated ahead of the frames in
 * use and populated on the NAND's prefault helper: chunk 8, allocated when
 * chunk 7 takes its first frame. The chunk ahead is then at most an eighth
 * of the chunks in use (at 10 M keys of the defaults, 128 in use: 0.8 %),
 * and a small index, which takes little fresh memory, pays nothing for it.
 */
#define INDEX_PREFAULT_FROM_CHUNK 8u

/*
 * index_cache_get() - the DRAM copy of page @page_id, loading it from NAND
 * on a miss (and evicting the least recently used page, programming it if
 * dirty). Marks it most recently used.
 */
uint8_t *index_cache_get(struct index *ix, uint32_t page_id, uint64_t *now_ns);

/* index_cache_new() - a cached, dirty, zeroed frame for a page that has never been written. */
uint8_t *index_cache_new(struct index *ix, uint32_t page_id, uint64_t *now_ns);

void index_cache_dirty(struct index *ix, uint32_t page_id);

/* index_cache_write_back() - program every dirty page (checkpoint). -1 on power loss. */
int index_cache_write_back(struct index *ix, uint64_t *now_ns);

/* index_cache_drop() - forget every cached page (reset, power cycle). */
void index_cache_drop(struct index *ix);

/*
 * index_page_write() - program page @page_id's bytes to the index stream;
 * its previous NAND copy, if any, stops being valid. 0, or -1 if no stripe
 * is free or power is lost.
 */
int index_page_write(struct index *ix, uint32_t page_id, const uint8_t *mem, uint64_t *now_ns);

/*
 * index_page_peek() - read-only bytes of page @page_id without touching the
 * cache or the clock (consistency check, iteration of uncached pages uses
 * index_cache_get instead).
 */
const uint8_t *index_page_peek(const struct index *ix, uint32_t page_id);

#endif
