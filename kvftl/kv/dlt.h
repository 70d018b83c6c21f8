/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DMA Log Table (BandSlim §3.3.3): a bounded circular queue recording each
 * value placed by page-unit DMA ahead of the write pointer, as (logical
 * NAND page, offset in page, size). The head is the oldest unconsumed
 * entry; the packer checks only the head, so each check is O(1).
 */
#ifndef KVFTL_DLT_H
#define KVFTL_DLT_H

#include <stdbool.h>
#include <stdint.h>

struct dlt_entry {
    uint64_t page;    /* NAND page number where the DMA value starts */
    uint32_t offset;  /* byte offset of the value in that page */
    uint32_t size;    /* bytes the value occupies */
};

struct dlt {
    struct dlt_entry *ring;
    uint32_t capacity;
    uint32_t head;    /* oldest unconsumed entry */
    uint32_t count;
};

void dlt_init(struct dlt *d, uint32_t capacity);
void dlt_fini(struct dlt *d);

static inline bool dlt_empty(const struct dlt *d)
{
    return d->count == 0;
}
static inline bool dlt_full(const struct dlt *d)
{
    return d->count == d->capacity;
}

/* dlt_push() - record a DMA placement at the tail. Returns -1 if full. */
int dlt_push(struct dlt *d, uint64_t page, uint32_t offset, uint32_t size);

/* dlt_head() - the oldest unconsumed entry, or NULL. */
const struct dlt_entry *dlt_head(const struct dlt *d);

/* dlt_pop() - consume the head. */
void dlt_pop(struct dlt *d);

void dlt_clear(struct dlt *d);

#endif
