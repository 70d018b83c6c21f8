/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NAND page buffer entries. */
#include "buffer.h"

#include <string.h>

#include <glib.h>

void buffer_init(struct page_buffer *b, uint32_t entries, uint32_t page_size)
{
    b->entries = entries;
    b->page_size = page_size;
    b->page = g_new(uint64_t, entries);
    b->free_at_ns = g_new0(uint64_t, entries);
    b->stall_ns = 0;
    buffer_reset(b);
}

void buffer_fini(struct page_buffer *b)
{
    g_free(b->page);
    g_free(b->free_at_ns);
    memset(b, 0, sizeof(*b));
}

void buffer_reset(struct page_buffer *b)
{
    for (uint32_t i = 0; i < b->entries; i++) {
        b->page[i] = UINT64_MAX;
        b->free_at_ns[i] = 0;
    }
}

/* Wait from *@now_ns until entry @e is free. */
static void wait_free(struct page_buffer *b, uint32_t e, uint64_t *now_ns)
{
    if (b->free_at_ns[e] > *now_ns) {
        b->stall_ns += b->free_at_ns[e] - *now_ns;
        *now_ns = b->free_at_ns[e];
    }
}

void buffer_open_page(struct page_buffer *b, uint64_t ppn, uint64_t *now_ns)
{
    uint32_t e = (uint32_t)(ppn % b->entries);
    wait_free(b, e, now_ns);
    b->page[e] = ppn;
}

void buffer_write_page(struct page_buffer *b, uint64_t ppn, uint64_t *now_ns)
{
    uint32_t e = (uint32_t)(ppn % b->entries);
    if (b->page[e] == ppn) {
        wait_free(b, e, now_ns);
    }
}

void buffer_programmed(struct page_buffer *b, uint64_t ppn, uint64_t done_ns)
{
    uint32_t e = (uint32_t)(ppn % b->entries);
    b->free_at_ns[e] = done_ns;
}
