/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nvm personality's write buffer: whole 4 KiB units in controller
 * DRAM, keyed by logical unit, where partial writes merge without reading
 * the rest of the unit from NAND (docs/kvftl.md, "Write buffer"). Each
 * entry holds the unit's bytes and a mask of the 512-byte sectors written
 * since it entered the buffer; the rest of the unit is its copy on NAND
 * (or zeroes if unmapped), merged in only when the entry leaves. Least
 * recently written leaves first, as in Cosmos+ OpenSSD's data buffer
 * (GreedyFTL 3.0.0, data_buffer.h: an LRU list of page-sized entries).
 *
 * This file keeps the entries, their lookup and their order; blockftl.c
 * does the NAND work of writing one out. Host memory: capacity x (4096 +
 * 17) bytes plus a hash table node per buffered unit.
 *
 * Layer 5 (beside the page map, which empties it on reset): calls nothing
 * of kvftl.
 */
#ifndef KVFTL_WRITE_BUFFER_H
#define KVFTL_WRITE_BUFFER_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#define WRITE_BUFFER_SECTOR_BYTES 512u
#define WRITE_BUFFER_FULL 0xffu /* every sector of the unit is in the entry */
#define WRITE_BUFFER_NONE UINT32_MAX

struct write_buffer {
    uint32_t cap;  /* entries (0: no buffer, a partial unit is read-modify-written at once) */
    uint32_t used; /* entries holding a unit */
    uint64_t *unit;            /* [cap]: the unit an entry holds */
    uint8_t *mask;             /* [cap]: sectors written; bit i = bytes [512 i, 512 (i + 1)) */
    uint32_t *prev, *next;     /* [cap]: the used ones, most recently written first */
    uint32_t head, tail;       /* most and least recently written, or WRITE_BUFFER_NONE */
    uint32_t free_head;        /* unused entries, linked by next */
    uint8_t *data;             /* [cap x 4096] */
    GHashTable *where;         /* unit + 1 -> entry + 1 */
};

/* write_buffer_init() - @cap empty entries. */
void write_buffer_init(struct write_buffer *wb, uint32_t cap);
void write_buffer_fini(struct write_buffer *wb);

/* write_buffer_clear() - every entry dropped (Format, a crash scan, power lost without PLP). */
void write_buffer_clear(struct write_buffer *wb);

/* write_buffer_find() - the entry holding @unit, or WRITE_BUFFER_NONE. */
uint32_t write_buffer_find(const struct write_buffer *wb, uint64_t unit);

/*
 * write_buffer_add() - a new entry for @unit (not buffered; the buffer not
 * full): nothing written yet (mask 0, bytes zero), most recently written.
 */
uint32_t write_buffer_add(struct write_buffer *wb, uint64_t unit);

/*
 * write_buffer_put() - bytes [@in, @in + @n) of entry @e's unit from @src
 * (NULL: zeroes); @in and @n are multiples of 512. The entry becomes the
 * most recently written.
 */
void write_buffer_put(struct write_buffer *wb, uint32_t e, uint32_t in, uint32_t n,
                      const void *src);

/* write_buffer_remove() - entry @e leaves the buffer. */
void write_buffer_remove(struct write_buffer *wb, uint32_t e);

/* write_buffer_oldest() - the least recently written entry, or WRITE_BUFFER_NONE. */
static inline uint32_t write_buffer_oldest(const struct write_buffer *wb)
{
    return wb->tail;
}

/* write_buffer_bytes() - entry @e's 4 KiB. */
static inline uint8_t *write_buffer_bytes(const struct write_buffer *wb, uint32_t e)
{
    return wb->data + ((size_t)e << 12);
}

/* write_buffer_mask_of() - the sectors of bytes [@in, @in + @n) of a unit (multiples of 512). */
static inline uint8_t write_buffer_mask_of(uint32_t in, uint32_t n)
{
    uint32_t first = in / WRITE_BUFFER_SECTOR_BYTES, count = n / WRITE_BUFFER_SECTOR_BYTES;
    return (uint8_t)(((1u << count) - 1) << first);
}

/* write_buffer_host_bytes() - host memory of the buffer's entries. */
uint64_t write_buffer_host_bytes(const struct write_buffer *wb);

#endif
