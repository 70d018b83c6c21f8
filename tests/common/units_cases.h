/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The numbers every tool and config file takes (include/bench/units.h), as
 * a table: each text with what it is as a byte count and as a count, or
 * refused. Run against every entry point that reads a number: units_u64()
 * itself and kvbench's config (tests/host/test_kvbench.c), the firmware's
 * tunables (tests/kvftl/test_config.c: sim: properties, kvftl-bench's and
 * kvssd-cmd-bench's tunable flags). Every value fits 1..2^40, so every
 * entry point's range takes it.
 */
#ifndef KVSSD_TESTS_UNITS_CASES_H
#define KVSSD_TESTS_UNITS_CASES_H

#include <stdbool.h>
#include <stdint.h>

struct units_case {
    const char *text;
    bool bytes_ok; /* as a byte count (K/M/G/T and Ki/Mi/Gi/Ti binary) */
    uint64_t bytes;
    bool count_ok; /* as a count (K/M/G decimal, no Ki) */
    uint64_t count;
};

#define UNITS_REFUSED false, 0

static const struct units_case units_cases[] = {
    {"4096", true, 4096, true, 4096},
    {"4k", true, 4096, true, 4000},
    {"4K", true, 4096, true, 4000},
    {"4Ki", true, 4096, UNITS_REFUSED},
    {"64M", true, 64ull << 20, true, 64000000},
    {"64Mi", true, 64ull << 20, UNITS_REFUSED},
    {"1G", true, 1ull << 30, true, 1000000000},
    {"1Gi", true, 1ull << 30, UNITS_REFUSED},
    {"1T", true, 1ull << 40, UNITS_REFUSED},
    {"1e6", true, 1000000, true, 1000000},
    {"2.5e5", true, 250000, true, 250000},
    {"0x10", true, 16, true, 16},
    {"0X1f", true, 31, true, 31},
    {"010", true, 10, true, 10}, /* decimal, not octal */
    {"1.5k", true, 1536, true, 1500},
    /* not whole */
    {"1.1k", UNITS_REFUSED, true, 1100},
    {"1.5", UNITS_REFUSED, UNITS_REFUSED},
    /* not a number, or not one of these forms */
    {"-1", UNITS_REFUSED, UNITS_REFUSED},
    {"+1", UNITS_REFUSED, UNITS_REFUSED},
    {"4kk", UNITS_REFUSED, UNITS_REFUSED},
    {"4KiB", UNITS_REFUSED, UNITS_REFUSED},
    {"4 k", UNITS_REFUSED, UNITS_REFUSED},
    {" 4k", UNITS_REFUSED, UNITS_REFUSED},
    {"4x", UNITS_REFUSED, UNITS_REFUSED},
    {"two", UNITS_REFUSED, UNITS_REFUSED},
    {"", UNITS_REFUSED, UNITS_REFUSED},
    {"0x", UNITS_REFUSED, UNITS_REFUSED},
    {"inf", UNITS_REFUSED, UNITS_REFUSED},
    {"nan", UNITS_REFUSED, UNITS_REFUSED},
    /* past 64 bits */
    {"18446744073709551616", UNITS_REFUSED, UNITS_REFUSED},
    {"0x10000000000000000", UNITS_REFUSED, UNITS_REFUSED},
    {"16777216T", UNITS_REFUSED, UNITS_REFUSED},
    {"1e20", UNITS_REFUSED, UNITS_REFUSED},
};

struct units_seconds_case {
    const char *text;
    bool ok;
    double seconds;
};

static const struct units_seconds_case units_seconds_cases[] = {
    {"10", true, 10},        {"10s", true, 10},     {"0.5", true, 0.5}, {"500ms", true, 0.5},
    {"250us", true, 250e-6}, {"1500ms", true, 1.5}, {"-1", false, 0},   {"10m", false, 0},
    {"10 s", false, 0},      {"s", false, 0},       {"", false, 0},     {"1e400", false, 0},
    {"inf", false, 0},       {"10sec", false, 0},
};

#endif /* KVSSD_TESTS_UNITS_CASES_H */
