/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Blocked Bloom filter. */
#include "bloom.h"

#include <string.h>

#include <glib.h>

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
    b->bits = g_malloc0(b->nblocks * 64);
}

void bloom_fini(struct bloom *b)
{
    g_free(b->bits);
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
