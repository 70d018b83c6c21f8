/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Deterministic randomness (splitmix64): the same seed gives the same run,
 * so a failure's seed replays it. Shared by the KV model suite (model.h),
 * the block model suite (block_model.h), the sector model's block contents
 * (sector_model.c) and the kvftl API fuzz targets' values (fuzz_kv_decode.h).
 */
#ifndef KVSSD_TESTS_MODEL_RNG_H
#define KVSSD_TESTS_MODEL_RNG_H

#include <stdint.h>

static inline uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct rng {
    uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return mix64(r->s);
}

/* Uniform in [0, n); n > 0. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
    return rng_next(r) % n;
}

/* Uniform in [lo, hi]. */
static inline uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
    return lo + rng_below(r, hi - lo + 1);
}

#endif
