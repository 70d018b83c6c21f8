/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Keys and self-checking values. A key is a pure function of its index; a
 * value is a pure function of (key index, value size, seed), so a read is
 * verified from the key and the size the device reports, with no table of
 * what was written.
 */
#include <string.h>

#include "kvbench.h"

void kb_key_encode(uint64_t index, uint32_t len, uint64_t seed, uint8_t *out)
{
    /* the index big-endian in the first min(len, 8) bytes: sequential = sorted */
    uint32_t n = len < 8 ? len : 8;
    for (uint32_t i = 0; i < n; i++) {
        out[i] = (uint8_t)(index >> (8 * (n - 1 - i)));
    }
    uint64_t x = index ^ (seed * 0x2545f4914f6cdd1dull);
    for (uint32_t i = n; i < len; i += 8) {
        uint64_t w = kb_splitmix64(&x);
        for (uint32_t j = 0; j < 8 && i + j < len; j++) {
            out[i + j] = (uint8_t)(w >> (8 * j));
        }
    }
}

uint32_t kb_key_size(const struct kb_size_dist *d, uint64_t index, uint64_t seed)
{
    if (d->kind == KB_SIZE_FIXED) {
        return d->min;
    }
    struct kb_rng r;
    kb_rng_seed(&r, index * 0x9e3779b97f4a7c15ull ^ seed ^ 0x4b6579u);
    return kb_size_draw(d, &r);
}

static uint64_t value_seed(uint64_t index, uint32_t len, uint64_t seed)
{
    return (index * 0xd6e8feb86659fd93ull) ^ ((uint64_t)len << 40) ^ seed;
}

void kb_value_fill(uint64_t index, uint32_t len, uint64_t seed, uint8_t *out)
{
    uint64_t x = value_seed(index, len, seed);
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = kb_splitmix64(&x);
        memcpy(out + i, &w, 8);
    }
    if (i < len) {
        uint64_t w = kb_splitmix64(&x);
        memcpy(out + i, &w, len - i);
    }
}

uint32_t kb_value_check(uint64_t index, uint32_t full_len, uint64_t seed, const uint8_t *buf,
                        uint32_t len)
{
    uint64_t x = value_seed(index, full_len, seed);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t w = kb_splitmix64(&x);
        uint8_t e[8];
        memcpy(e, &w, 8);
        for (uint32_t j = 0; j < 8 && i + j < len; j++) {
            bad += buf[i + j] != e[j];
        }
    }
    return bad;
}
