/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NAND page buffer: N page-sized entries in controller DRAM where values
 * are packed before a page is programmed. Page p of the log uses entry
 * p % N; an entry is reusable once the program of its previous page has
 * completed in simulated time, so a full buffer stalls writes.
 */
#ifndef KVFTL_BUFFER_H
#define KVFTL_BUFFER_H

#include <stddef.h>
#include <stdint.h>

struct page_buffer {
    uint32_t entries;
    uint32_t page_size;
    uint8_t *mem;          /* entries * page_size */
    uint64_t *page;        /* NAND page held by each entry, UINT64_MAX if none */
    uint64_t *free_at_ns;  /* when the entry's last program completes */
    uint64_t stall_ns;     /* total time writes waited for an entry */
};

void buffer_init(struct page_buffer *b, uint32_t entries, uint32_t page_size);
void buffer_fini(struct page_buffer *b);

/*
 * buffer_open_page() - take the entry for NAND page @ppn, zero it, and
 * return its memory. *@now_ns advances to when the entry is free.
 */
uint8_t *buffer_open_page(struct page_buffer *b, uint64_t ppn, uint64_t *now_ns);

/* buffer_page() - the entry holding @ppn, or NULL. */
static inline uint8_t *buffer_page(const struct page_buffer *b, uint64_t ppn)
{
    uint32_t e = (uint32_t)(ppn % b->entries);
    return b->page[e] == ppn ? b->mem + (uint64_t)e * b->page_size : NULL;
}

/* buffer_programmed() - the page in its entry is being programmed until @done_ns. */
void buffer_programmed(struct page_buffer *b, uint64_t ppn, uint64_t done_ns);

/* buffer_reset() - drop every entry (power cycle without PLP, format). */
void buffer_reset(struct page_buffer *b);

#endif
