/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench's YCSB and db_bench behaviours without a device: YCSB's scrambled
 * zipfian (first values for a seed against an independent computation of
 * YCSB's algorithm, FNV-1a 64 as YCSB's Utils.fnvhash64, the popular keys
 * spread over the key space), the zeta sum over YCSB's 10^10 items, scan
 * lengths (scanlengthdistribution uniform/zipfian/fixed), db_bench's write
 * rate limiter's schedule on an injected clock, and their config keys.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "kvbench.h"
#include "tap_cunit.h"

uint64_t kb_now_ns(void)
{
    return 0;
}

/* ---- YCSB's zipfian -------------------------------------------------- */

/*
 * FNV-1a 64 over the 8 bytes, low byte first (YCSB's Utils.fnvhash64): 0
 * hashes to 0xa8c7f832281a39c5 (FNV-1a of eight zero bytes), which Java's
 * Math.abs() turns into 2^64 - that = 6284781860667377211.
 */
static void test_fnvhash64(void)
{
    CU_ASSERT_EQUAL(kb_fnvhash64(0), 6284781860667377211ull);
    CU_ASSERT_EQUAL((uint64_t)0 - kb_fnvhash64(0), 0xa8c7f832281a39c5ull);
    CU_ASSERT_EQUAL(kb_fnvhash64(1), 8517097267634966620ull);
    CU_ASSERT_EQUAL(kb_fnvhash64(0x0102030405060708ull), 895447315735140821ull);
}

/*
 * zeta(10^10 + 1, 0.99) by Euler-Maclaurin is YCSB's constant ZETAN
 * 26.46902820178302 to 1e-11 relative (it gives 26.4690282018774: YCSB's
 * constant is a double's sum of 10^10 terms, 1.2e-12 off); at 2 000 000
 * items it equals the term-by-term sum to 1e-13 relative.
 */
static void test_zeta_large(void)
{
    double z = kb_zeta(KB_SZIPF_ITEMS + 1, 0.99);
    CU_ASSERT_DOUBLE_EQUAL(z, KB_SZIPF_ZETAN, KB_SZIPF_ZETAN * 1e-11);
    double exact = 0;
    for (uint64_t i = 1; i <= 2000000; i++) {
        exact += 1.0 / pow((double)i, 0.8);
    }
    CU_ASSERT_DOUBLE_EQUAL(kb_zeta(2000000, 0.8), exact, exact * 1e-13);
}

/*
 * Seed 1, 100000 items: the first ten keys of YCSB's ScrambledZipfianGenerator
 * computed independently (Python, from YCSB 0.17's ZipfianGenerator,
 * ScrambledZipfianGenerator and Utils.fnvhash64 over kvbench's RNG): the
 * zipfian ranks 14862956, 218311, 769571, 9858, 13049007, 19, 2, 7697,
 * 572961339, 455778 hashed onto the keys.
 */
static void test_scrambled_first_values(void)
{
    static const uint64_t want[10] = {68663, 55853, 35337, 55535, 59303,
                                      60490, 98393, 1302,  34264, 60579};
    struct kb_szipf s;
    struct kb_rng r;
    kb_szipf_init(&s, 100000, 0.99);
    kb_rng_seed(&r, 1);
    for (int i = 0; i < 10; i++) {
        CU_ASSERT_EQUAL(kb_szipf_next(&s, &r), want[i]);
    }
    CU_ASSERT_EQUAL(s.z.n, 10000000001ull);
    CU_ASSERT_DOUBLE_EQUAL(s.z.zetan, 26.46902820178302, 0);
}

/*
 * The hottest keys are the hashes of ranks 0 and 1 (77211 and 66620 of
 * 100000), not keys 0 and 1: over 200000 draws key 77211 is the most drawn,
 * 66620 the second, and key 0 is drawn no more often than a cold key
 * (under 20 times). The unscrambled zipfian's hottest is key 0.
 */
static void test_scrambled_spreads_hot_keys(void)
{
    static uint32_t count[100000];
    struct kb_szipf s;
    struct kb_zipf z;
    struct kb_rng r;
    memset(count, 0, sizeof(count));
    kb_szipf_init(&s, 100000, 0.99);
    kb_rng_seed(&r, 7);
    for (int i = 0; i < 200000; i++) {
        count[kb_szipf_next(&s, &r)]++;
    }
    uint32_t best = 0, second = 0;
    for (uint32_t k = 0; k < 100000; k++) {
        if (count[k] > count[best]) {
            second = best;
            best = k;
        } else if (k != best && count[k] > count[second]) {
            second = k;
        }
    }
    CU_ASSERT_EQUAL(best, 77211);
    CU_ASSERT_EQUAL(second, 66620);
    CU_ASSERT_TRUE(count[0] < 20);
    memset(count, 0, sizeof(count));
    kb_zipf_init(&z, 100000, 0.99);
    kb_rng_seed(&r, 7);
    for (int i = 0; i < 200000; i++) {
        count[kb_zipf_next(&z, &r)]++;
    }
    best = 0;
    for (uint32_t k = 0; k < 100000; k++) {
        best = count[k] > count[best] ? k : best;
    }
    CU_ASSERT_EQUAL(best, 0);
}

/* A zipfian grown from 1000 to 1500 items has zeta(1500) and the eta of 1500 items. */
static void test_zipf_grow(void)
{
    struct kb_zipf a, b;
    kb_zipf_init(&a, 1000, 0.99);
    kb_zipf_grow(&a, 1500);
    kb_zipf_init(&b, 1500, 0.99);
    CU_ASSERT_EQUAL(a.n, 1500);
    CU_ASSERT_DOUBLE_EQUAL(a.zetan, b.zetan, b.zetan * 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(a.eta, b.eta, fabs(b.eta) * 1e-12);
    kb_zipf_grow(&a, 1200); /* never shrinks */
    CU_ASSERT_EQUAL(a.n, 1500);
}

/* YCSB's presets: zipfian scrambled (a, b, c, e, f), d latest; the item space with inserts. */
static void test_ycsb_presets_scrambled(void)
{
    struct kb_config c;
    char err[256];
    static const char *const names[] = {"ycsb-a", "ycsb-b", "ycsb-c", "ycsb-e", "ycsb-f"};
    for (int i = 0; i < 5; i++) {
        kb_config_default(&c);
        CU_ASSERT_EQUAL(kb_preset_apply(&c, names[i], err, sizeof(err)), 0);
        CU_ASSERT_EQUAL(c.run.order, KB_ORDER_ZIPFIAN);
        CU_ASSERT_TRUE(c.run.zipfian_scrambled);
    }
    kb_config_default(&c);
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "ycsb-a", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_szipf_itemcount(&c, &c.run, false), 100000);
    /* e: 100000 records + (int)(100000 ops x 0.05 inserts x 2.0) = 110000 */
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "ycsb-e", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_szipf_itemcount(&c, &c.run, false), 110000);
    CU_ASSERT_EQUAL(kb_szipf_itemcount(&c, &c.load, true), 100000);
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "ycsb-d", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.run.order, KB_ORDER_LATEST);
    /* the unscrambled zipfian: run.zipfian_scrambled = false; a preset restores it */
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "zipfian_scrambled", "false", err, sizeof(err)), 0);
    CU_ASSERT_FALSE(c.run.zipfian_scrambled);
    CU_ASSERT_EQUAL(kb_config_set(&c, "load", "zipfian_scrambled", "no", err, sizeof(err)), 0);
    CU_ASSERT_FALSE(c.load.zipfian_scrambled);
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "char-read-zipfian", err, sizeof(err)), 0);
    CU_ASSERT_TRUE(c.run.zipfian_scrambled);
    CU_ASSERT_TRUE(c.load.zipfian_scrambled);
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "zipfian_scrambled", "maybe", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "run.zipfian_scrambled is 'maybe'; it must be true or "
                                "false");
}

/* ---- scan lengths ---------------------------------------------------- */

/*
 * ycsb-e's scans: uniform over 1..100 (YCSB's workload e). 100000 draws
 * from seed 1: shortest 1, longest 100, mean within 50.5 +- 0.46 (5 standard
 * errors: sd sqrt((100^2 - 1) / 12) = 28.87, / sqrt(100000) = 0.0913), and
 * each length drawn 1000 +- 160 times (5 sd of a binomial(100000, 0.01): 31.5).
 */
static void test_scan_uniform(void)
{
    struct kb_config c;
    struct kb_scanlen s;
    struct kb_rng r;
    char err[256];
    static uint32_t hist[101];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "ycsb-e", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.scan_dist, KB_SCAN_UNIFORM);
    CU_ASSERT_EQUAL(c.scan_min, 1);
    CU_ASSERT_EQUAL(c.iterate_entries, 100);
    kb_scanlen_init(&s, c.scan_dist, c.scan_min, c.iterate_entries);
    kb_rng_seed(&r, 1);
    uint32_t lo = UINT32_MAX, hi = 0;
    double sum = 0;
    memset(hist, 0, sizeof(hist));
    for (int i = 0; i < 100000; i++) {
        uint32_t l = kb_scanlen_next(&s, &r);
        lo = l < lo ? l : lo;
        hi = l > hi ? l : hi;
        sum += l;
        if (l <= 100) {
            hist[l]++;
        }
    }
    CU_ASSERT_EQUAL(lo, 1);
    CU_ASSERT_EQUAL(hi, 100);
    CU_ASSERT_DOUBLE_EQUAL(sum / 100000, 50.5, 0.46);
    for (int l = 1; l <= 100; l++) {
        CU_ASSERT_TRUE(hist[l] >= 840 && hist[l] <= 1160);
    }
}

/*
 * zipfian scans (YCSB's ZipfianGenerator(min, max), 0.99) over 10..60:
 * within 10..60, the shortest the most common: P(10) = 1 / zeta(51, 0.99)
 * = 0.2175, so 100000 draws give 21754 +- 655 (5 sd) of length 10.
 * fixed: always the maximum (kvbench's scans before YCSB's workloads).
 */
static void test_scan_zipfian_and_fixed(void)
{
    struct kb_scanlen s;
    struct kb_rng r;
    kb_scanlen_init(&s, KB_SCAN_ZIPFIAN, 10, 60);
    kb_rng_seed(&r, 3);
    uint32_t lo = UINT32_MAX, hi = 0, shortest = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t l = kb_scanlen_next(&s, &r);
        lo = l < lo ? l : lo;
        hi = l > hi ? l : hi;
        shortest += l == 10;
    }
    double p = 1.0 / kb_zeta(51, 0.99);
    CU_ASSERT_DOUBLE_EQUAL(p, 0.2175, 0.0001);
    CU_ASSERT_EQUAL(lo, 10);
    CU_ASSERT_TRUE(hi <= 60 && hi >= 55);
    CU_ASSERT_DOUBLE_EQUAL(shortest, 100000 * p, 655);
    kb_scanlen_init(&s, KB_SCAN_FIXED, 1, 100);
    for (int i = 0; i < 1000; i++) {
        CU_ASSERT_EQUAL(kb_scanlen_next(&s, &r), 100);
    }
}

/* The scan keys: names, ranges and the sentences of their refusals; presets reset them. */
static void test_scan_config(void)
{
    struct kb_config c;
    char err[256];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(c.scan_dist, KB_SCAN_FIXED);
    CU_ASSERT_EQUAL(
        kb_config_set(&c, "benchmark", "scan_length_distribution", "zipfian", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.scan_dist, KB_SCAN_ZIPFIAN);
    CU_ASSERT_EQUAL(
        kb_config_set(&c, "benchmark", "scan_length_distribution", "gaussian", err, sizeof(err)),
        -1);
    CU_ASSERT_STRING_EQUAL(err, "scan_length_distribution is 'gaussian'; it must be uniform, "
                                "zipfian or fixed");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "max_scan_length", "20", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.iterate_entries, 20);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "min_scan_length", "0", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "min_scan_length is '0'; it must be from 1 to 65536");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "min_scan_length", "50", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "min_scan_length is 50; it must be from 1 to max_scan_length "
                                "(iterate_entries, 20)");
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "ycsb-c", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.scan_dist, KB_SCAN_FIXED);
    CU_ASSERT_EQUAL(c.scan_min, 1);
    CU_ASSERT_EQUAL(c.iterate_entries, 100);
}

/* ---- db_bench's write rate limit --------------------------------------- */

#define T0 1000000000ull
#define MS 1000000ull

/*
 * 1000 B/s: a refill of 100 bytes every 100 ms. 60 B at T0: the first
 * refill is due, granted at once (40 left). 60 B at T0+1ms: the 40 left,
 * then the refill at T0+100ms (80 left). 60 B at T0+100ms: from what is
 * left, at once (20 left). 250 B: 20 left, then refills at +200, +300 and
 * +400 ms, granted at T0+400ms (70 left). After 10 s idle, 100 B: 70 left
 * and one refill at once (one refill, not 96 accumulated).
 */
static void test_rate_schedule(void)
{
    struct kb_rate rl;
    kb_rate_init(&rl, 1000, T0);
    CU_ASSERT_EQUAL(rl.refill_bytes, 100);
    CU_ASSERT_EQUAL(kb_rate_request(&rl, 60, T0), T0);
    CU_ASSERT_EQUAL(rl.available, 40);
    CU_ASSERT_EQUAL(kb_rate_request(&rl, 60, T0 + 1 * MS), T0 + 100 * MS);
    CU_ASSERT_EQUAL(rl.available, 80);
    CU_ASSERT_EQUAL(kb_rate_request(&rl, 60, T0 + 100 * MS), T0 + 100 * MS);
    CU_ASSERT_EQUAL(rl.available, 20);
    CU_ASSERT_EQUAL(kb_rate_request(&rl, 250, T0 + 100 * MS), T0 + 400 * MS);
    CU_ASSERT_EQUAL(rl.available, 70);
    CU_ASSERT_EQUAL(rl.next_refill_ns, T0 + 500 * MS);
    CU_ASSERT_EQUAL(kb_rate_request(&rl, 100, T0 + 10400 * MS), T0 + 10400 * MS);
    CU_ASSERT_EQUAL(rl.available, 70);
    CU_ASSERT_EQUAL(rl.next_refill_ns, T0 + 10500 * MS);
}

/*
 * readwhilewriting's writer at 11600 B/s, 116-byte writes (16 B keys + 100 B
 * values), each issued when granted: the first 10 at once (the first
 * refill's 1160 bytes), the 11th at +100 ms, write k at (ceil(116 k / 1160)
 * - 1) x 100 ms, the 1000th (116000 bytes, 10 s of the rate) at +9.9 s.
 * Unlimited (0): every write at once.
 */
static void test_rate_writer_pace(void)
{
    struct kb_rate rl;
    uint64_t now = T0;
    kb_rate_init(&rl, 11600, T0);
    for (uint64_t k = 1; k <= 1000; k++) {
        now = kb_rate_request(&rl, 116, now);
        CU_ASSERT_EQUAL(now, T0 + ((116 * k + 1159) / 1160 - 1) * 100 * MS);
        if (k == 10) {
            CU_ASSERT_EQUAL(now, T0);
        }
        if (k == 11) {
            CU_ASSERT_EQUAL(now, T0 + 100 * MS);
        }
    }
    CU_ASSERT_EQUAL(now, T0 + 9900 * MS);
    kb_rate_init(&rl, 0, T0);
    CU_ASSERT_EQUAL(kb_rate_request(&rl, 1u << 20, T0 + 5), T0 + 5);
}

/* The key: 0 or 10-2^40 bytes/s, a sentence otherwise; only with the writer thread. */
static void test_rate_config(void)
{
    struct kb_config c;
    char err[256];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(c.write_rate_bytes_per_s, 0);
    CU_ASSERT_EQUAL(
        kb_config_set(&c, "benchmark", "write_rate_limit_bytes_per_s", "5", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "write_rate_limit_bytes_per_s is '5'; it must be 0 "
                                "(unlimited) or 10 to 1099511627776 bytes per second");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "write_rate_limit_bytes_per_s", "1099511627777",
                                  err, sizeof(err)),
                    -1);
    CU_ASSERT_EQUAL(
        kb_config_set(&c, "benchmark", "write_rate_limit_bytes_per_s", "-1", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "write_rate_limit_bytes_per_s is '-1'; it must be "
                                "0 (unlimited) or 10 to 1099511627776 bytes per second");
    CU_ASSERT_EQUAL(
        kb_config_set(&c, "benchmark", "write_rate_limit_bytes_per_s", "10", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.write_rate_bytes_per_s, 10);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "write_rate_limit_bytes_per_s 10 limits the writer thread "
                                "(run.writer, readwhilewriting's), which this workload does not "
                                "run; add --writer or drop the limit");
    CU_ASSERT_EQUAL(kb_preset_apply(&c, "readwhilewriting", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.write_rate_bytes_per_s, 10); /* a preset keeps it, as it keeps threads */
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), 0);
}

static const struct tap_test tests[] = {
    TAP_TEST(fnvhash64),
    TAP_TEST(zeta_large),
    TAP_TEST(scrambled_first_values),
    TAP_TEST(scrambled_spreads_hot_keys),
    TAP_TEST(zipf_grow),
    TAP_TEST(ycsb_presets_scrambled),
    TAP_TEST(scan_uniform),
    TAP_TEST(scan_zipfian_and_fixed),
    TAP_TEST(scan_config),
    TAP_TEST(rate_schedule),
    TAP_TEST(rate_writer_pace),
    TAP_TEST(rate_config),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("kvbench-ycsb", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
