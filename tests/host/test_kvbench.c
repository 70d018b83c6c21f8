/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench's pure parts (host/kvbench/dist.c, payload.c, config.c,
 * report.c's histogram, calibrate.c's threshold pick): seeded distributions,
 * key/value encoding, config parsing and presets. No device needed.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <bench/units.h>

#include "kvbench.h"
#include "tap_cunit.h"
#include "units_cases.h"

/* calibrate.c and report.c reference kb_now_ns() from kvbench.c */
uint64_t kb_now_ns(void)
{
    return 0;
}

/* @spec parsed into @d: the draws and the parsed fields are tested from a spec that parses. */
static void size_dist(const char *spec, uint32_t lo, uint32_t hi, const char *what,
                      struct kb_size_dist *d)
{
    char err[256];
    CU_ASSERT_EQUAL(kb_size_parse(spec, lo, hi, what, d, err, sizeof(err)), 0);
}

/* Same seed, same stream; another seed, another stream; kb_rng_below stays below n. */
static void test_rng_reproducible(void)
{
    struct kb_rng a, b, c;
    kb_rng_seed(&a, 42);
    kb_rng_seed(&b, 42);
    kb_rng_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = kb_rng_next(&a);
        CU_ASSERT_EQUAL(x, kb_rng_next(&b));
        differ += x != kb_rng_next(&c);
    }
    CU_ASSERT_EQUAL(differ, 1000);
    for (int i = 0; i < 10000; i++) {
        CU_ASSERT_TRUE(kb_rng_below(&a, 7) < 7);
    }
    double d = kb_rng_double(&a);
    CU_ASSERT_TRUE(d >= 0 && d < 1);
}

/* Size specs: N, fixed:N, uniform:MIN-MAX, weighted:SIZE:W,..., mixgraph (defaults and params). */
static void test_size_parse_forms(void)
{
    struct kb_size_dist d;
    size_dist("16", 1, 255, "key size", &d);
    CU_ASSERT_EQUAL(d.kind, KB_SIZE_FIXED);
    CU_ASSERT_EQUAL(d.min, 16);
    size_dist("fixed:4096", 0, KVSSD_VALUE_MAX, "value size", &d);
    CU_ASSERT_EQUAL(d.min, 4096);
    size_dist("uniform:8-32", 1, 255, "key size", &d);
    CU_ASSERT_EQUAL(d.kind, KB_SIZE_UNIFORM);
    CU_ASSERT_EQUAL(d.min, 8);
    CU_ASSERT_EQUAL(d.max, 32);
    size_dist("weighted:8:9,2048:1", 0, KVSSD_VALUE_MAX, "value size", &d);
    CU_ASSERT_EQUAL(d.kind, KB_SIZE_WEIGHTED);
    CU_ASSERT_EQUAL(d.n, 2);
    CU_ASSERT_DOUBLE_EQUAL(d.cum[0], 0.9, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.cum[1], 1.0, 1e-12);
    CU_ASSERT_EQUAL(d.max, 2048);
    size_dist("mixgraph", 0, KVSSD_VALUE_MAX, "value size", &d);
    CU_ASSERT_EQUAL(d.kind, KB_SIZE_MIXGRAPH);
    CU_ASSERT_DOUBLE_EQUAL(d.k, 0.2615, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d.sigma, 25.45, 1e-12);
    CU_ASSERT_EQUAL(d.max, 1024);
    size_dist("mixgraph:max=512,sigma=30", 0, KVSSD_VALUE_MAX, "value size", &d);
    CU_ASSERT_EQUAL(d.max, 512);
    CU_ASSERT_DOUBLE_EQUAL(d.sigma, 30, 1e-12);
}

/* Bad size specs are sentences naming the value and the allowed range. */
static void test_size_parse_errors(void)
{
    struct kb_size_dist d;
    char err[256];
    CU_ASSERT_EQUAL(kb_size_parse("300", 1, 255, "key size", &d, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "key size is '300'; it must be from 1 to 255 bytes");
    CU_ASSERT_EQUAL(kb_size_parse("0", 1, 255, "key size", &d, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "key size is '0'; it must be from 1 to 255 bytes");
    CU_ASSERT_EQUAL(kb_size_parse("uniform:64-8", 1, 255, "key size", &d, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(
        err, "key size is 'uniform:64-8'; it must be MIN-MAX with MIN at most MAX (64 > 8)");
    CU_ASSERT_EQUAL(kb_size_parse("weighted:8:0", 0, 100, "value size", &d, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "value size weight is '0'; it must be a number above 0");
    CU_ASSERT_EQUAL(kb_size_parse("gauss:5", 0, 100, "value size", &d, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "; it must be N, fixed:N, uniform:MIN-MAX"));
    CU_ASSERT_EQUAL(
        kb_size_parse("2097153", 0, KVSSD_VALUE_MAX, "value size", &d, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "value size is '2097153'; it must be from 0 to 2097152 bytes");
}

/* Uniform 8-32: 100000 seeded draws stay in range and hit both ends. */
static void test_size_uniform_draws(void)
{
    struct kb_size_dist d;
    struct kb_rng r;
    size_dist("uniform:8-32", 1, 255, "key size", &d);
    kb_rng_seed(&r, 7);
    int lo = 0, hi = 0, out = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t s = kb_size_draw(&d, &r);
        out += s < 8 || s > 32;
        lo += s == 8;
        hi += s == 32;
    }
    CU_ASSERT_EQUAL(out, 0);
    CU_ASSERT_TRUE(lo > 3000 && lo < 5000); /* expected 4000 of 25 equal sizes */
    CU_ASSERT_TRUE(hi > 3000 && hi < 5000);
}

/* BandSlim B's 8 B : 2 KiB = 9:1 mix: over 100000 seeded draws, 90% +- 1% are 8 bytes. */
static void test_size_weighted_draws(void)
{
    struct kb_size_dist d;
    struct kb_rng r;
    size_dist("weighted:8:9,2048:1", 0, KVSSD_VALUE_MAX, "value size", &d);
    kb_rng_seed(&r, 11);
    int small = 0, other = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t s = kb_size_draw(&d, &r);
        small += s == 8;
        other += s != 8 && s != 2048;
    }
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT_TRUE(small > 89000 && small < 91000);
}

/*
 * Mixgraph: the Pareto inversion at u = 0.5 is 25.45 * (2^0.2615 - 1) / 0.2615
 * = 19.34 -> 19 bytes; u near 1 clamps to 10; values never exceed 1 KiB; and
 * about 70% fall under 35 bytes (P = 1 - 0.309 = 0.691).
 */
static void test_mixgraph(void)
{
    struct kb_size_dist d;
    struct kb_rng r;
    size_dist("mixgraph", 0, KVSSD_VALUE_MAX, "value size", &d);
    CU_ASSERT_EQUAL(kb_mixgraph_size(&d, 0.5), 19);
    CU_ASSERT_EQUAL(kb_mixgraph_size(&d, 0.999), 10);
    kb_rng_seed(&r, 3);
    int under35 = 0, over = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t s = kb_size_draw(&d, &r);
        under35 += s < 35;
        over += s > 1024 || s < 10;
    }
    CU_ASSERT_EQUAL(over, 0);
    CU_ASSERT_TRUE(under35 > 67000 && under35 < 71000);
}

/*
 * kb_size_counts (kvbench sizes): fixed:32 puts all 1000 draws at 32; weighted 8:1,16:1
 * splits 1000 draws between 8 and 16 only, as the same seed's kb_size_draw stream does;
 * a count array no longer than the largest size, or more than KB_SIZE_DRAWS_MAX draws,
 * is refused.
 */
static void test_size_counts(void)
{
    struct kb_size_dist d;
    struct kb_rng r;
    static uint64_t counts[33];
    size_dist("32", 0, KVSSD_VALUE_MAX, "value size", &d);
    CU_ASSERT_EQUAL(kb_size_counts(&d, 7, 1000, counts, 33), 0);
    CU_ASSERT_EQUAL(counts[32], 1000);
    CU_ASSERT_EQUAL(counts[31], 0);
    CU_ASSERT_EQUAL(kb_size_counts(&d, 7, 1000, counts, 32), -1);
    CU_ASSERT_EQUAL(kb_size_counts(&d, 7, KB_SIZE_DRAWS_MAX + 1, counts, 33), -1);
    size_dist("weighted:8:1,16:1", 0, KVSSD_VALUE_MAX, "value size", &d);
    CU_ASSERT_EQUAL(kb_size_counts(&d, 7, 1000, counts, 33), 0);
    uint64_t eights = 0;
    kb_rng_seed(&r, 7);
    for (int i = 0; i < 1000; i++) {
        eights += kb_size_draw(&d, &r) == 8;
    }
    CU_ASSERT_EQUAL(counts[8], eights);
    CU_ASSERT_EQUAL(counts[8] + counts[16], 1000);
    CU_ASSERT_TRUE(counts[8] > 400 && counts[8] < 600);
}

/* Zipfian(0.99) over 1000 items: item 0 takes ~1/zeta(1000) of the draws, and rank order holds. */
static void test_zipfian(void)
{
    struct kb_zipf z;
    struct kb_rng r;
    static int hist[1000];
    memset(hist, 0, sizeof(hist));
    kb_zipf_init(&z, 1000, 0.99);
    kb_rng_seed(&r, 5);
    for (int i = 0; i < 200000; i++) {
        uint64_t v = kb_zipf_next(&z, &r);
        CU_ASSERT_TRUE_FATAL(v < 1000);
        hist[v]++;
    }
    double p0 = 1.0 / z.zetan;
    CU_ASSERT_TRUE(fabs(hist[0] / 200000.0 - p0) < 0.01);
    CU_ASSERT_TRUE(hist[0] > hist[1] && hist[1] > hist[2] && hist[2] > hist[10]);
    CU_ASSERT_TRUE(hist[10] > hist[500]);
}

/* A uniform load order visits each of 1000 indexes exactly once, not in sequence. */
static void test_permutation(void)
{
    struct kb_perm p;
    static char seen[1000];
    memset(seen, 0, sizeof(seen));
    kb_perm_init(&p, 1000, 9);
    int in_order = 0;
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t v = kb_perm_at(&p, i);
        CU_ASSERT_TRUE_FATAL(v < 1000);
        seen[v]++;
        in_order += v == i;
    }
    for (int i = 0; i < 1000; i++) {
        CU_ASSERT_EQUAL(seen[i], 1);
    }
    CU_ASSERT_TRUE(in_order < 10);
}

/* Keys: the index big-endian in the first min(len, 8) bytes; longer keys add seeded filler. */
static void test_key_encode(void)
{
    uint8_t k[16], k2[16];
    kb_key_encode(0x01020304, 4, 1, k);
    CU_ASSERT_EQUAL(k[0], 1);
    CU_ASSERT_EQUAL(k[3], 4);
    kb_key_encode(0x0102030405060708ull, 16, 1, k);
    CU_ASSERT_EQUAL(k[0], 1);
    CU_ASSERT_EQUAL(k[7], 8);
    kb_key_encode(0x0102030405060708ull, 16, 1, k2);
    CU_ASSERT_EQUAL(memcmp(k, k2, 16), 0); /* deterministic */
    kb_key_encode(0x0102030405060709ull, 16, 1, k2);
    CU_ASSERT_NOT_EQUAL(memcmp(k, k2, 16), 0);
    /* sequential indexes sort in index order for fixed-size keys */
    kb_key_encode(255, 4, 1, k);
    kb_key_encode(256, 4, 1, k2);
    CU_ASSERT_TRUE(memcmp(k, k2, 4) < 0);
}

/* Variable key sizes are a function of the index: the same key always has the same length. */
static void test_key_size_stable(void)
{
    struct kb_size_dist d;
    size_dist("uniform:8-64", 1, 255, "key size", &d);
    for (uint64_t i = 0; i < 100; i++) {
        uint32_t s = kb_key_size(&d, i, 77);
        CU_ASSERT_EQUAL(s, kb_key_size(&d, i, 77));
        CU_ASSERT_TRUE(s >= 8 && s <= 64);
    }
}

/* Self-checking values: a fill verifies clean; one flipped byte is 1 mismatch; another size or key
 * differs. */
static void test_payload_check(void)
{
    uint8_t v[1000];
    kb_value_fill(42, 1000, 1, v);
    CU_ASSERT_EQUAL(kb_value_check(42, 1000, 1, v, 1000), 0);
    CU_ASSERT_EQUAL(kb_value_check(42, 1000, 1, v, 17), 0); /* a partial read checks its prefix */
    v[500] ^= 0x40;
    CU_ASSERT_EQUAL(kb_value_check(42, 1000, 1, v, 1000), 1);
    v[500] ^= 0x40;
    CU_ASSERT_TRUE(kb_value_check(43, 1000, 1, v, 1000) > 900);
    CU_ASSERT_TRUE(kb_value_check(42, 999, 1, v, 999) > 900);
}

/* Mix specs: OP=WEIGHT pairs; unknown ops and all-zero mixes are refused by name. */
static void test_mix_parse(void)
{
    double mix[KB_OP_COUNT];
    char err[256];
    CU_ASSERT_EQUAL(kb_mix_parse("read=90,update=10", mix, err, sizeof(err)), 0);
    CU_ASSERT_DOUBLE_EQUAL(mix[KB_OP_READ], 90, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(mix[KB_OP_UPDATE], 10, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(mix[KB_OP_INSERT], 0, 1e-12);
    CU_ASSERT_EQUAL(kb_mix_parse("seek=1", mix, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(
        err, "mix entry is 'seek'; it must be OP=WEIGHT with OP one of insert, update, "
             "read, delete, exist, iterate (or scan), rmw");
    CU_ASSERT_EQUAL(kb_mix_parse("read=0", mix, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "mix is 'read=0'; it must give an operation a weight above 0");
    CU_ASSERT_EQUAL(kb_mix_parse("read=-1", mix, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "mix weight of read is '-1'; it must be from 0 to 1000000000");
}

/* Settings: ranges named in the refusal (threads 1-64, queue_depth 1-256, theta in (0,1)). */
static void test_config_set_ranges(void)
{
    struct kb_config c;
    char err[256];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "threads", "65", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "threads is '65'; it must be from 1 to 64");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "queue_depth", "257", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "queue_depth is '257'; it must be from 1 to 256");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "queue_depth", "32", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.queue_depth, 32);
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "theta", "1", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "run.theta is '1'; it must be above 0 to 1 (exclusive)");
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "order", "random", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(
        err, "run.order is 'random'; it must be sequential, uniform, zipfian, latest or window");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "transfer_mode", "inline", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.mode, KVSSD_XFER_INLINE);
    CU_ASSERT_EQUAL(kb_config_set(&c, "nope", "x", "1", err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown group [nope]"));
}

/*
 * Units, as every tool reads them (<bench/units.h>): --value-size 4k is
 * 4096 bytes, 1Mi is 1048576; --rawhash-size 64M is 64 MiB; --duration 10s,
 * 1500ms and 250us; --keys 1e6 and 100k (decimal); "two", "1.5" bytes and a
 * negative interval are refused with the range and the suffixes.
 */
static void test_config_units(void)
{
    struct kb_config c;
    char err[256];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(kb_config_set(&c, "values", "size", "4k", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.value_size.min, 4096);
    CU_ASSERT_EQUAL(kb_config_set(&c, "values", "size", "uniform:1Ki-1Mi", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.value_size.min, 1024);
    CU_ASSERT_EQUAL(c.value_size.max, 1048576);
    CU_ASSERT_EQUAL(kb_config_set(&c, "rawhash", "size_bytes", "64M", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.rawhash.size_bytes, 64ull << 20);
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "duration_s", "10s", err, sizeof(err)), 0);
    CU_ASSERT_DOUBLE_EQUAL(c.run.duration_s, 10.0, 1e-12);
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "duration_s", "1500ms", err, sizeof(err)), 0);
    CU_ASSERT_DOUBLE_EQUAL(c.run.duration_s, 1.5, 1e-12);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "report_interval_s", "250ms", err, sizeof(err)),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(c.report_interval_s, 0.25, 1e-12);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "key_count", "1e6", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.key_count, 1000000);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "key_count", "100k", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.key_count, 100000);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "threads", "two", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "threads is 'two'; it must be from 1 to 64");
    CU_ASSERT_EQUAL(kb_config_set(&c, "values", "size", "1.5", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err,
                           "value size is '1.5'; it must be a number of bytes (suffixes K, M, G: "
                           "KiB, MiB, GiB)");
    /* -1 and 0.02: one range, one sentence */
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "report_interval_s", "-1", err, sizeof(err)),
                    -1);
    CU_ASSERT_STRING_EQUAL(err, "report_interval_s is '-1'; it must be 0 (off) "
                                "and 0.1 to 86400 seconds (suffixes s, ms, us)");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "report_interval_s", "0.02", err, sizeof(err)),
                    -1);
    CU_ASSERT_STRING_EQUAL(err, "report_interval_s is '0.02'; it must be 0 (off) "
                                "and 0.1 to 86400 seconds (suffixes s, ms, us)");
}

/*
 * Every number form (tests/common/units_cases.h, the table the firmware's
 * tunables are tested with) through every kvbench entry point: units_u64()
 * and units_seconds() themselves, a byte key (rawhash.size_bytes), a count
 * (key_count), a size distribution (values.size, at most KVSSD_VALUE_MAX)
 * and a time (run.duration_s); each refusal is the one sentence shape.
 */
static void test_config_units_table(void)
{
    struct kb_config c;
    char err[256];

    for (size_t i = 0; i < sizeof(units_cases) / sizeof(units_cases[0]); i++) {
        const struct units_case *u = &units_cases[i];
        uint64_t v = 0;
        bool ok = units_u64(u->text, UNITS_BYTES, &v);
        kb_config_default(&c);
        int rc = kb_config_set(&c, "rawhash", "size_bytes", u->text, err, sizeof(err));
        if (ok != u->bytes_ok || (ok && v != u->bytes) || rc != (u->bytes_ok ? 0 : -1) ||
            (u->bytes_ok && c.rawhash.size_bytes != u->bytes)) {
            printf("# bytes %s: units_u64 %d %llu, size_bytes rc %d %llu\n", u->text, ok,
                   (unsigned long long)v, rc, (unsigned long long)c.rawhash.size_bytes);
            CU_FAIL("bytes");
        }
        bool value_ok = u->bytes_ok && u->bytes <= KVSSD_VALUE_MAX;
        rc = kb_config_set(&c, "values", "size", u->text, err, sizeof(err));
        if (rc != (value_ok ? 0 : -1) || (value_ok && c.value_size.min != u->bytes)) {
            printf("# values.size %s: rc %d %u\n", u->text, rc, c.value_size.min);
            CU_FAIL("values.size");
        }
        ok = units_u64(u->text, UNITS_COUNT, &v);
        rc = kb_config_set(&c, "benchmark", "key_count", u->text, err, sizeof(err));
        if (ok != u->count_ok || (ok && v != u->count) || rc != (u->count_ok ? 0 : -1) ||
            (u->count_ok && c.key_count != u->count)) {
            printf("# count %s: units_u64 %d %llu, key_count rc %d %llu\n", u->text, ok,
                   (unsigned long long)v, rc, (unsigned long long)c.key_count);
            CU_FAIL("count");
        }
    }
    for (size_t i = 0; i < sizeof(units_seconds_cases) / sizeof(units_seconds_cases[0]); i++) {
        const struct units_seconds_case *u = &units_seconds_cases[i];
        double s = -1;
        bool ok = units_seconds(u->text, &s);
        kb_config_default(&c);
        int rc = kb_config_set(&c, "run", "duration_s", u->text, err, sizeof(err));
        if (ok != u->ok || (ok && s != u->seconds) || rc != (u->ok ? 0 : -1) ||
            (u->ok && c.run.duration_s != u->seconds)) {
            printf("# seconds %s: units_seconds %d %g, duration_s rc %d %g\n", u->text, ok, s, rc,
                   c.run.duration_s);
            CU_FAIL("seconds");
        }
    }
    CU_ASSERT_EQUAL(kb_config_set(&c, "rawhash", "size_bytes", "4kk", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "rawhash.size_bytes is '4kk'; it must be from 0 to "
                                "1125899906842624 bytes (suffixes K, M, G: KiB, MiB, GiB)");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "key_count", "1e20", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "key_count is '1e20'; it must be from 1 to 1099511627776");
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "duration_s", "10m", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "run.duration_s is '10m'; it must be 0 to 604800 seconds (suffixes "
                                "s, ms, us)");
}

/* Presets: BandSlim D is nine sizes 8 B..2 KiB in equal shares with 4-byte keys and 1 M random
 * PUTs. */
static void test_presets_bandslim(void)
{
    struct kb_config c;
    char err[512];
    kb_config_default(&c);
    /* the old names (a notice on stderr; test_kvbench_report.c checks it) */
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "D", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.key_count, 1000000);
    CU_ASSERT_EQUAL(c.key_size.min, 4);
    CU_ASSERT_EQUAL(c.value_size.kind, KB_SIZE_WEIGHTED);
    CU_ASSERT_EQUAL(c.value_size.n, 9);
    CU_ASSERT_EQUAL(c.value_size.sizes[0], 8);
    CU_ASSERT_EQUAL(c.value_size.sizes[8], 2048);
    CU_ASSERT_DOUBLE_EQUAL(c.value_size.cum[0], 1.0 / 9, 1e-12);
    CU_ASSERT_EQUAL(c.load.order, KB_ORDER_UNIFORM);
    CU_ASSERT_FALSE(c.run.enabled);
    kb_preset_apply(&c, "A", err, sizeof(err));
    CU_ASSERT_EQUAL(c.load.order, KB_ORDER_SEQUENTIAL);
    CU_ASSERT_EQUAL(c.value_size.kind, KB_SIZE_FIXED);
    kb_preset_apply(&c, "C", err, sizeof(err));
    CU_ASSERT_DOUBLE_EQUAL(c.value_size.cum[0], 0.1, 1e-12);
    kb_preset_apply(&c, "M", err, sizeof(err));
    CU_ASSERT_EQUAL(c.value_size.kind, KB_SIZE_MIXGRAPH);
    CU_ASSERT_EQUAL(c.value_size.max, 1024);
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "Z", err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "preset is 'Z'; it must be one of bandslim-a bandslim-b "
                                       "bandslim-c bandslim-d bandslim-m char-insert-seq"));
}

/* Characterization presets: 16 B keys, 4 KiB values; read-zipfian loads sequentially then reads
 * zipfian. */
static void test_presets_characterization(void)
{
    struct kb_config c;
    char err[512];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "char-read-zipfian", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.run.ops, 100000);
    CU_ASSERT_FALSE(c.run.ops_set); /* a preset's count yields to a --duration */
    CU_ASSERT_EQUAL(c.key_size.min, 16);
    CU_ASSERT_EQUAL(c.value_size.min, 4096);
    CU_ASSERT_EQUAL(c.load.order, KB_ORDER_SEQUENTIAL);
    CU_ASSERT_TRUE(c.run.enabled);
    CU_ASSERT_EQUAL(c.run.order, KB_ORDER_ZIPFIAN);
    CU_ASSERT_DOUBLE_EQUAL(c.run.mix[KB_OP_READ], 1, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.run.mix[KB_OP_UPDATE], 0, 1e-12);
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "char-insert-uniform", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.load.order, KB_ORDER_UNIFORM);
    CU_ASSERT_FALSE(c.run.enabled);
}

/* An INI file: the preset applies first, then the file's keys refine it; an error names file and
 * key. */
static void test_config_file(void)
{
    struct kb_config c;
    char err[512], path[] = "/tmp/kvbench-test-XXXXXX";
    const char *ini = "[benchmark]\npreset=B\nthreads=4\nqueue_depth=16\nengine=async\nseed=99\n"
                      "[values]\nsize=uniform:100-200\n[run]\nenabled=true\nops=5000\n"
                      "mix=read=3,update=1\norder=zipfian\ntheta=0.8\n";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, ini, strlen(ini)) == (ssize_t)strlen(ini));
    close(fd);
    kb_config_default(&c);
    CU_ASSERT_EQUAL(kb_config_load_file(&c, path, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(c.preset, "bandslim-b"); /* an old name is recorded under its new one */
    CU_ASSERT_EQUAL(c.key_size.min, 4); /* from the preset */
    CU_ASSERT_EQUAL(c.value_size.kind, KB_SIZE_UNIFORM); /* the file overrides */
    CU_ASSERT_EQUAL(c.value_size.min, 100);
    CU_ASSERT_EQUAL(c.threads, 4);
    CU_ASSERT_EQUAL(c.queue_depth, 16);
    CU_ASSERT_EQUAL(c.engine, KB_ENGINE_ASYNC);
    CU_ASSERT_EQUAL(c.seed, 99);
    CU_ASSERT_TRUE(c.run.enabled);
    CU_ASSERT_EQUAL(c.run.ops, 5000);
    CU_ASSERT_TRUE(c.run.ops_set); /* explicit: with a duration too, whichever ends first */
    CU_ASSERT_EQUAL(c.run.order, KB_ORDER_ZIPFIAN);
    CU_ASSERT_DOUBLE_EQUAL(c.run.theta, 0.8, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(c.run.mix[KB_OP_READ], 3, 1e-12);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), 0);
    const char *bad = "[benchmark]\nthreads=0\n";
    fd = open(path, O_WRONLY | O_TRUNC);
    CU_ASSERT_FATAL(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
    close(fd);
    CU_ASSERT_EQUAL(kb_config_load_file(&c, path, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, ": threads is '0'; it must be from 1 to 64"));
    unlink(path);
}

/* Cross checks: 2-byte keys cannot name 100000 keys; sync with queue depth > 1 is refused. */
static void test_config_check(void)
{
    struct kb_config c;
    char err[512];
    kb_config_default(&c);
    size_dist("2", 1, 255, "key size", &c.key_size);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "key size 2 bytes holds 65536 distinct keys"));
    kb_config_default(&c);
    kb_config_set(&c, "benchmark", "engine", "sync", err, sizeof(err));
    kb_config_set(&c, "benchmark", "queue_depth", "8", err, sizeof(err));
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(
        err,
        "queue_depth 8 needs engine async (the sync engine has one command in flight per thread)");
}

/*
 * poll: a boolean key (--poll sets it true), off by default; refused on the
 * sync path and with an engine that is not kvssd; accepted with io async.
 */
static void test_poll_config(void)
{
    struct kb_config c;
    char err[512];
    kb_config_default(&c);
    CU_ASSERT_FALSE(c.poll);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "poll", "maybe", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "poll is 'maybe'; it must be true or false");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "poll", "true", err, sizeof(err)), 0);
    CU_ASSERT_TRUE(c.poll);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "poll needs io async (io_uring polls for completions; the sync "
                                "path is an ioctl that sleeps until the interrupt)");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "io", "async", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "engine", "kvssd,rocksdb", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "poll applies to the kvssd engine only; rocksdb does its own I/O");
}

/*
 * Engines: a list in order, all, sync/async still the kvssd I/O path; the
 * [rocksdb] and [rawhash] keys with their defaults and ranges; the checks
 * that only the kvssd engine has a queue depth and rawhash cannot iterate.
 */
static void test_engines_config(void)
{
    struct kb_config c;
    char err[512];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(c.nstores, 1);
    CU_ASSERT_EQUAL(c.stores[0], KB_STORE_KVSSD);
    CU_ASSERT_TRUE(c.rocksdb.wal);
    CU_ASSERT_FALSE(c.rocksdb.sync);
    CU_ASSERT_TRUE(c.rocksdb.direct_io);
    CU_ASSERT_EQUAL(c.rocksdb.block_cache_bytes, 8u << 20);
    CU_ASSERT_EQUAL(c.rocksdb.compression, 0);
    CU_ASSERT_EQUAL(c.rawhash.write_block_bytes, 1u << 20);
    CU_ASSERT_EQUAL(c.rawhash.defrag_lwm_pct, 50);
    CU_ASSERT_FALSE(c.rawhash.commit_to_device);

    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "engine", "rawhash,kvssd", err, 512), 0);
    CU_ASSERT_EQUAL(c.nstores, 2);
    CU_ASSERT_EQUAL(c.stores[0], KB_STORE_RAWHASH);
    CU_ASSERT_EQUAL(c.stores[1], KB_STORE_KVSSD);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "engine", "all", err, 512), 0);
    CU_ASSERT_EQUAL(c.nstores, 3);
    CU_ASSERT_EQUAL(c.stores[1], KB_STORE_ROCKSDB);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "engine", "async", err, 512), 0);
    CU_ASSERT_EQUAL(c.engine, KB_ENGINE_ASYNC);
    CU_ASSERT_EQUAL(c.nstores, 3); /* the I/O path, not the engine list */
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "engine", "leveldb", err, 512), -1);
    CU_ASSERT_STRING_EQUAL(err, "engine is 'leveldb'; it must be kvssd, rocksdb, rawhash, a "
                                "comma-separated list of them (each once), all, or sync/async "
                                "for kvssd's I/O path");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "engine", "kvssd,kvssd", err, 512), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "engine is 'kvssd' (listed twice)"));
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "io", "uring", err, 512), -1);
    CU_ASSERT_STRING_EQUAL(err, "io is 'uring'; it must be sync or async");

    CU_ASSERT_EQUAL(kb_config_set(&c, "rocksdb", "compression", "zstd", err, 512), 0);
    CU_ASSERT_EQUAL(c.rocksdb.compression, 7);
    CU_ASSERT_STRING_EQUAL(kb_compression_name(c.rocksdb.compression), "zstd");
    CU_ASSERT_EQUAL(kb_config_set(&c, "rocksdb", "compression", "lzma", err, 512), -1);
    CU_ASSERT_EQUAL(kb_config_set(&c, "rocksdb", "block_cache_bytes", "0", err, 512), 0);
    CU_ASSERT_EQUAL(kb_config_set(&c, "rocksdb", "sync", "maybe", err, 512), -1);
    CU_ASSERT_STRING_EQUAL(err, "rocksdb.sync is 'maybe'; it must be true or false");
    CU_ASSERT_EQUAL(kb_config_set(&c, "rawhash", "write_block_bytes", "65536", err, 512), -1);
    CU_ASSERT_STRING_EQUAL(
        err, "rawhash.write_block_bytes is '65536'; it must be from 131072 to 8388608 "
             "bytes (suffixes K, M, G: KiB, MiB, GiB)");
    CU_ASSERT_EQUAL(kb_config_set(&c, "rawhash", "write_block_bytes", "393216", err, 512), -1);
    CU_ASSERT_STRING_EQUAL(err, "rawhash.write_block_bytes is '393216'; it must be a power of two "
                                "from 131072 to 8388608");
    CU_ASSERT_EQUAL(kb_config_set(&c, "rawhash", "write_block_bytes", "262144", err, 512), 0);
    CU_ASSERT_EQUAL(c.rawhash.write_block_bytes, 262144);
    CU_ASSERT_EQUAL(kb_config_set(&c, "rawhash", "defrag_lwm_pct", "100", err, 512), -1);
    CU_ASSERT_STRING_EQUAL(err, "rawhash.defrag_lwm_pct is '100'; it must be from 1 to 99");
    CU_ASSERT_EQUAL(kb_config_set(&c, "rawhash", "size", "1", err, 512), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "[rawhash] has no key \"size\""));

    /* rawhash needs its device, cannot iterate, and no engine but kvssd has a queue depth */
    kb_config_default(&c);
    kb_config_set(&c, "benchmark", "engine", "kvssd,rawhash", err, 512);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "the rawhash engine needs rawhash.device (--rawhash-dev): a raw "
                                "block device such as /dev/nvme1n1, or a file");
    kb_config_set(&c, "rawhash", "device", "/dev/nvme1n1", err, 512);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), 0);
    kb_config_set(&c, "values", "size", "1048512", err, 512); /* 32 + 16 + this > 1 MiB - 64 */
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "the rawhash engine stores a record of up to 1048560 bytes in a "
                                "write block of 1048576 (64 for its header); raise "
                                "rawhash.write_block_bytes or lower the value size");
    kb_config_set(&c, "values", "size", "1048464", err, 512); /* exactly a block */
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), 0);
    kb_config_set(&c, "run", "mix", "read=1,iterate=1", err, 512);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "the rawhash engine cannot iterate (a hash index has no key "
                                "order); drop iterate from the mix");
    kb_config_set(&c, "run", "mix", "read=1", err, 512);
    kb_config_set(&c, "benchmark", "queue_depth", "4", err, 512);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "queue_depth 4 applies to the kvssd engine only; rawhash issues "
                                "one operation at a time per thread (use threads for "
                                "concurrency)");
}

/* Histogram: 1..100000 ns uniformly; p50 ~ 50000 and p99 ~ 99000 within the 1.6% bucket width; max
 * exact. */
static void test_histogram(void)
{
    static struct kb_hist h;
    memset(&h, 0, sizeof(h));
    for (uint64_t i = 1; i <= 100000; i++) {
        kb_hist_add(&h, i);
    }
    CU_ASSERT_EQUAL(h.count, 100000);
    CU_ASSERT_EQUAL(h.max_ns, 100000);
    double p50 = (double)kb_hist_percentile(&h, 50), p99 = (double)kb_hist_percentile(&h, 99);
    CU_ASSERT_TRUE(fabs(p50 - 50000) / 50000 < 0.016);
    CU_ASSERT_TRUE(fabs(p99 - 99000) / 99000 < 0.016);
    CU_ASSERT_EQUAL(kb_hist_percentile(&h, 100), 100000);
    /* values under 64 ns are exact */
    static struct kb_hist s;
    memset(&s, 0, sizeof(s));
    kb_hist_add(&s, 5);
    kb_hist_add(&s, 7);
    CU_ASSERT_EQUAL(kb_hist_percentile(&s, 50), 5);
    CU_ASSERT_EQUAL(kb_hist_percentile(&s, 100), 7);
}

/* Threshold pick: the largest size before the first point where the candidate is slower. */
static void test_pick_threshold(void)
{
    uint32_t sizes[] = {4, 8, 16, 32, 64, 128, 256};
    double inl[] = {10, 10, 11, 12, 14, 19, 30};
    double prp[] = {20, 20, 20, 20, 20, 20, 21};
    CU_ASSERT_EQUAL(kb_pick_threshold(sizes, inl, prp, 7), 128);
    double slow[] = {25, 10, 10, 10, 10, 10, 10};
    CU_ASSERT_EQUAL(kb_pick_threshold(sizes, slow, prp, 7), 0);
    /* a later dip below does not extend the threshold past the first crossing */
    double dip[] = {10, 10, 25, 10, 10, 10, 10};
    CU_ASSERT_EQUAL(kb_pick_threshold(sizes, dip, prp, 7), 8);
}

static const struct tap_test tests[] = {
    TAP_TEST(rng_reproducible),    TAP_TEST(size_parse_forms),
    TAP_TEST(size_parse_errors),   TAP_TEST(size_uniform_draws),
    TAP_TEST(size_weighted_draws), TAP_TEST(mixgraph),
    TAP_TEST(size_counts),         TAP_TEST(zipfian),
    TAP_TEST(permutation),         TAP_TEST(key_encode),
    TAP_TEST(key_size_stable),     TAP_TEST(payload_check),
    TAP_TEST(mix_parse),           TAP_TEST(config_set_ranges),
    TAP_TEST(config_units),        TAP_TEST(config_units_table),
    TAP_TEST(presets_bandslim),    TAP_TEST(presets_characterization),
    TAP_TEST(config_file),         TAP_TEST(config_check),
    TAP_TEST(poll_config),         TAP_TEST(engines_config),
    TAP_TEST(histogram),           TAP_TEST(pick_threshold),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("kvbench", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
