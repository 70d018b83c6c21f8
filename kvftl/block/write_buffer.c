/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The nvm personality's write buffer (write_buffer.h). */
#include "write_buffer.h"

#include <string.h>

#define UNIT_BYTES 4096u

void write_buffer_init(struct write_buffer *wb, uint32_t cap)
{
    memset(wb, 0, sizeof(*wb));
    wb->cap = cap;
    wb->unit = g_new0(uint64_t, cap ? cap : 1);
    wb->mask = g_new0(uint8_t, cap ? cap : 1);
    wb->prev = g_new0(uint32_t, cap ? cap : 1);
    wb->next = g_new0(uint32_t, cap ? cap : 1);
    wb->data = cap ? g_malloc0((size_t)cap * UNIT_BYTES) : NULL;
    wb->where = g_hash_table_new(g_direct_hash, g_direct_equal);
    write_buffer_clear(wb);
}

void write_buffer_fini(struct write_buffer *wb)
{
    g_free(wb->unit);
    g_free(wb->mask);
    g_free(wb->prev);
    g_free(wb->next);
    g_free(wb->data);
    if (wb->where) {
        g_hash_table_destroy(wb->where);
    }
    memset(wb, 0, sizeof(*wb));
}

void write_buffer_clear(struct write_buffer *wb)
{
    wb->used = 0;
    wb->head = wb->tail = WRITE_BUFFER_NONE;
    wb->free_head = wb->cap ? 0 : WRITE_BUFFER_NONE;
    for (uint32_t e = 0; e < wb->cap; e++) {
        wb->next[e] = e + 1 < wb->cap ? e + 1 : WRITE_BUFFER_NONE;
        wb->mask[e] = 0;
    }
    if (wb->where) {
        g_hash_table_remove_all(wb->where);
    }
}

uint32_t write_buffer_find(const struct write_buffer *wb, uint64_t unit)
{
    if (!wb->used) {
        return WRITE_BUFFER_NONE;
    }
    gpointer v = g_hash_table_lookup(wb->where, GSIZE_TO_POINTER((gsize)unit + 1));
    return v ? (uint32_t)(GPOINTER_TO_SIZE(v) - 1) : WRITE_BUFFER_NONE;
}

static void unlink_entry(struct write_buffer *wb, uint32_t e)
{
    uint32_t p = wb->prev[e], n = wb->next[e];
    if (p != WRITE_BUFFER_NONE) {
        wb->next[p] = n;
    } else {
        wb->head = n;
    }
    if (n != WRITE_BUFFER_NONE) {
        wb->prev[n] = p;
    } else {
        wb->tail = p;
    }
}

static void link_front(struct write_buffer *wb, uint32_t e)
{
    wb->prev[e] = WRITE_BUFFER_NONE;
    wb->next[e] = wb->head;
    if (wb->head != WRITE_BUFFER_NONE) {
        wb->prev[wb->head] = e;
    } else {
        wb->tail = e;
    }
    wb->head = e;
}

uint32_t write_buffer_add(struct write_buffer *wb, uint64_t unit)
{
    uint32_t e = wb->free_head;
    g_assert(e != WRITE_BUFFER_NONE);
    wb->free_head = wb->next[e];
    wb->unit[e] = unit;
    wb->mask[e] = 0;
    memset(write_buffer_bytes(wb, e), 0, UNIT_BYTES);
    link_front(wb, e);
    wb->used++;
    g_hash_table_insert(wb->where, GSIZE_TO_POINTER((gsize)unit + 1),
                        GSIZE_TO_POINTER((gsize)e + 1));
    return e;
}

void write_buffer_put(struct write_buffer *wb, uint32_t e, uint32_t in, uint32_t n, const void *src)
{
    uint8_t *d = write_buffer_bytes(wb, e) + in;
    if (src) {
        memcpy(d, src, n);
    } else {
        memset(d, 0, n);
    }
    wb->mask[e] |= write_buffer_mask_of(in, n);
    if (wb->head != e) {
        unlink_entry(wb, e);
        link_front(wb, e);
    }
}

void write_buffer_remove(struct write_buffer *wb, uint32_t e)
{
    g_hash_table_remove(wb->where, GSIZE_TO_POINTER((gsize)wb->unit[e] + 1));
    unlink_entry(wb, e);
    wb->mask[e] = 0;
    wb->next[e] = wb->free_head;
    wb->free_head = e;
    wb->used--;
}

uint64_t write_buffer_host_bytes(const struct write_buffer *wb)
{
    /* the entries, and a GHashTable node (about 24 bytes) per buffered unit */
    return (uint64_t)wb->cap * (UNIT_BYTES + 8 + 1 + 4 + 4) + (uint64_t)wb->used * 24;
}
