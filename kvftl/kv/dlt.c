/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DMA Log Table: bounded circular queue of DMA placements. */
#include "dlt.h"

#include <glib.h>

void dlt_init(struct dlt *d, uint32_t capacity)
{
    d->ring = g_new0(struct dlt_entry, capacity);
    d->capacity = capacity;
    d->head = 0;
    d->count = 0;
}

void dlt_fini(struct dlt *d)
{
    g_free(d->ring);
    d->ring = NULL;
    d->capacity = d->count = d->head = 0;
}

int dlt_push(struct dlt *d, uint64_t page, uint32_t offset, uint32_t size)
{
    if (d->count == d->capacity) {
        return -1;
    }
    struct dlt_entry *e = &d->ring[(d->head + d->count) % d->capacity];
    e->page = page;
    e->offset = offset;
    e->size = size;
    d->count++;
    return 0;
}

const struct dlt_entry *dlt_head(const struct dlt *d)
{
    return d->count ? &d->ring[d->head] : NULL;
}

void dlt_pop(struct dlt *d)
{
    if (d->count) {
        d->head = (d->head + 1) % d->capacity;
        d->count--;
    }
}

void dlt_clear(struct dlt *d)
{
    d->head = 0;
    d->count = 0;
}
