/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The key orders of both benchmarks: kvbench's (host/kvbench, in the guest)
 * and kvftl-bench's (tools/, against the firmware library). Each visits the
 * keys 0 .. n-1 as i -> (mul * i + add) mod n, which reaches every key once
 * when mul and n are coprime. They pick mul their own way (kvbench redraws
 * it, kvftl-bench steps up to the next coprime) so that each keeps its
 * numbers for a seed; the test is written once, here. Header-only: both
 * builds reach include/, and neither links the other's sources.
 */
#ifndef BENCH_KEY_ORDER_H
#define BENCH_KEY_ORDER_H

#include <stdbool.h>
#include <stdint.h>

/* Whether i -> (mul * i + add) mod n is a bijection on [0, n): gcd(mul, n) == 1. */
static inline bool key_order_coprime(uint64_t mul, uint64_t n)
{
    uint64_t a = mul, b = n;
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a == 1;
}

#endif /* BENCH_KEY_ORDER_H */
