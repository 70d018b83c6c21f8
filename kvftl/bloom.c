/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Blocked Bloom filter. */
#include "bloom.h"

#include <string.h>
#include <sys/mman.h>

#include <glib.h>

/*
 * A filter of at least one huge page is mapped in 2 MiB-aligned huge pages
 * where the kernel allows (MADV_HUGEPAGE): every Store sets bits in one
 * random 64-byte block, and with 4 KiB pages that block's translation
 * misses the TLB (14.6 MiB of filter at 10 M keys is 3,700 pages, more than
 * the second-level TLB holds); in 2 MiB pages it is 8 entries. Smaller
 * filters stay on the heap.
 */
#define BLOOM_HUGE_BYTES (2u << 20)

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
    if (len >= BLOOM_HUGE_BYTES) {
        size_t map = (len + BLOOM_HUGE_BYTES - 1) / BLOOM_HUGE_BYTES * BLOOM_HUGE_BYTES;
        /* one huge page more, so the filter can start on a 2 MiB boundary */
        void *raw = mmap(NULL, map + BLOOM_HUGE_BYTES, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (raw != MAP_FAILED) {
            uintptr_t at = ((uintptr_t)raw + BLOOM_HUGE_BYTES - 1) &
                           ~(uintptr_t)(BLOOM_HUGE_BYTES - 1);
            madvise((void *)at, map, MADV_HUGEPAGE);
            b->map = raw;
            b->map_bytes = map + BLOOM_HUGE_BYTES;
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
