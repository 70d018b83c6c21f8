/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Blocked Bloom filter over the 64-bit key hash: all probes of a key fall
 * in one 64-byte block, so a check costs one cache line. Answers "surely
 * absent" for Exist/Retrieve without touching the index or flash.
 * Deleted keys stay set until the filter is rebuilt (mount, format).
 */
#ifndef KVFTL_BLOOM_H
#define KVFTL_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bloom {
    uint64_t *bits;      /* nblocks * 8 words */
    uint64_t nblocks;
    uint32_t probes;
    void *map;           /* the huge-page mapping holding bits, when map_bytes != 0 */
    size_t map_bytes;    /* 0: bits is a heap allocation */
};

/* bloom_init() - @bytes of filter (rounded down to 64-byte blocks, >= 1 block). */
void bloom_init(struct bloom *b, size_t bytes, uint32_t bits_per_key);
void bloom_fini(struct bloom *b);
void bloom_clear(struct bloom *b);
size_t bloom_bytes(const struct bloom *b);

static inline uint64_t bloom_mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static inline void bloom_add(struct bloom *b, uint64_t hash)
{
    uint64_t *blk = b->bits + (((hash >> 32) * b->nblocks) >> 32) * 8;
    uint64_t h2 = bloom_mix(hash);
    uint32_t a = (uint32_t)h2, d = (uint32_t)(h2 >> 32) | 1;
    for (uint32_t i = 0; i < b->probes; i++) {
        uint32_t bit = (a + i * d) & 511;
        blk[bit >> 6] |= 1ULL << (bit & 63);
    }
}

static inline void bloom_prefetch(const struct bloom *b, uint64_t hash)
{
    __builtin_prefetch(b->bits + (((hash >> 32) * b->nblocks) >> 32) * 8, 1);
}

static inline bool bloom_maybe(const struct bloom *b, uint64_t hash)
{
    const uint64_t *blk = b->bits + (((hash >> 32) * b->nblocks) >> 32) * 8;
    uint64_t h2 = bloom_mix(hash);
    uint32_t a = (uint32_t)h2, d = (uint32_t)(h2 >> 32) | 1;
    for (uint32_t i = 0; i < b->probes; i++) {
        uint32_t bit = (a + i * d) & 511;
        if (!(blk[bit >> 6] & (1ULL << (bit & 63)))) {
            return false;
        }
    }
    return true;
}

#endif
