/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NAND page buffer: N page-sized entries in controller DRAM where values
 * are packed before a page is programmed. Page p of the log uses entry
 * p % N; an entry is reusable once the program of its previous page has
 * completed in simulated time, so a full buffer stalls writes.
 *
 * The bytes of a buffered page are kept where the page will be programmed
 * (in the NAND backing store), so programming does not copy them; what
 * the buffer models is which pages are not yet durable (lost on power loss
 * without PLP, see stream_discard_unprogrammed()) and the entries' timing.
 */
#ifndef KVFTL_BUFFER_H
#define KVFTL_BUFFER_H

#include <stddef.h>
#include <stdint.h>

struct page_buffer {
    uint32_t entries;
    uint32_t page_size;
    uint64_t *page;        /* NAND page held by each entry, UINT64_MAX if none */
    uint64_t *free_at_ns;  /* when the entry's last program completes */
    uint64_t stall_ns;     /* total time writes waited for an entry */
};

void buffer_init(struct page_buffer *b, uint32_t entries, uint32_t page_size);
void buffer_fini(struct page_buffer *b);

/*
 * buffer_open_page() - take the entry for NAND page @ppn. *@now_ns
 * advances to when the entry is free.
 */
void buffer_open_page(struct page_buffer *b, uint64_t ppn, uint64_t *now_ns);

/*
 * buffer_write_page() - bytes go into open page @ppn's entry: not before
 * the entry was free to hold them, whatever the request's own time (a
 * request that arrived earlier than the page's opening in simulated time
 * still waits for it). *@now_ns advances to that time.
 */
void buffer_write_page(struct page_buffer *b, uint64_t ppn, uint64_t *now_ns);

/* buffer_programmed() - the page in its entry is being programmed until @done_ns. */
void buffer_programmed(struct page_buffer *b, uint64_t ppn, uint64_t done_ns);

/* buffer_reset() - drop every entry (power cycle, format). */
void buffer_reset(struct page_buffer *b);

#endif
