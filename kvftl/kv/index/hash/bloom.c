/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Blocked Bloom filter. */
#include "bloom.h"

#include <string.h>
#include <sys/mman.h>

#include <glib.h>

#include "prefault.h"

/*
 * A filter of at least one huge page is mapped in huge pages (huge_map()):
 * every Store sets bits in one random 64-byte block, and with 4 KiB pages
 * that block's translation misses the TLB (14.6 MiB of filter at 10 M keys
 * is 3,700 pages, more than the second-level TLB holds); in 2 MiB pages it
 * is 8 entries. Smaller filters stay on the heap.
 */

void bloom_init(struct bloom *b, size_t bytes, uint32_t bits_per_key)
{
    b->nblocks = bytes / 64;
    if (b->nblocks == 0) {
        b->nblocks = 1;
    }
    if (b->nblocks > UINT32_MAX) {
        b->nblocks = UINT32_MAX;
    }
    /* optimal probe count k = bits_per_key * ln 2 */
    uint32_t k = (bits_per_key * 693 + 500) / 1000;
    b->probes = k < 1 ? 1 : k > 16 ? 16 : k;
    size_t len = b->nblocks * 64;
    b->map_bytes = 0;
    if (len >= HUGE_PAGE_BYTES) {
        uint8_t *raw;
        uint8_t *at = huge_map(len, &raw, &b->map_bytes);
        if (at) {
            b->map = raw;
            b->bits = (uint64_t *)at;
            return;
        }
    }
    b->bits = g_malloc0(len);
}

void bloom_fini(struct bloom *b)
{
    if (b->map_bytes) {
        munmap(b->map, b->map_bytes);
    } else {
        g_free(b->bits);
    }
    memset(b, 0, sizeof(*b));
}

void bloom_clear(struct bloom *b)
{
    memset(b->bits, 0, b->nblocks * 64);
}

size_t bloom_bytes(const struct bloom *b)
{
    return b->nblocks * 64;
}
