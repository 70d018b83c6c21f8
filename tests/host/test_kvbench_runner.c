/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench's runner (host/kvbench/runner.c) on an in-memory engine that
 * records what it is asked: the scan lengths YCSB's scanlengthdistribution
 * gives reach the engine's iterate, and db_bench's write rate limit holds
 * the readwhilewriting writer to at most one refill (rate / 10 bytes) per
 * 100 ms of the phase.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "kvbench.h"
#include "tap_cunit.h"

/* ---- an engine that records ---------------------------------------- */

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t scan_hist[65537]; /* iterate calls by their max */
static uint64_t scans, put_bytes, nputs;
static long get_sleep_ns; /* each read takes this long (the readers' pace) */

static int rec_open(const struct kb_config *c, void **st, char *err, size_t errlen)
{
    *st = NULL;
    return 0;
}

static void rec_close(void *st)
{
}

static int rec_put(void *st, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl,
                   uint32_t *commands)
{
    pthread_mutex_lock(&rec_lock);
    put_bytes += kl + vl;
    nputs++;
    pthread_mutex_unlock(&rec_lock);
    return 0;
}

static int rec_get(void *st, const uint8_t *k, uint32_t kl, uint8_t *buf, uint32_t cap,
                   uint32_t *vlen, uint32_t *commands)
{
    if (get_sleep_ns) {
        struct timespec ts = {0, get_sleep_ns};
        nanosleep(&ts, NULL);
    }
    *vlen = 0;
    return 0;
}

static int rec_del(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands)
{
    return 0;
}

static int rec_exist(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands)
{
    return 0;
}

static int rec_iterate(void *st, const uint8_t *prefix, uint32_t plen, uint32_t max,
                       uint64_t *bytes, uint32_t *commands)
{
    pthread_mutex_lock(&rec_lock);
    scan_hist[max <= 65536 ? max : 0]++;
    scans++;
    pthread_mutex_unlock(&rec_lock);
    return 0;
}

static struct kvssd_dev *rec_stats_dev(void *st)
{
    return NULL;
}

static const char *const rec_device_ops[5] = {"a", "b", "c", "d", "e"};

static const struct kb_engine_ops rec_engine = {
    .name = "recorder",
    .open = rec_open,
    .close = rec_close,
    .put = rec_put,
    .get = rec_get,
    .del = rec_del,
    .exist = rec_exist,
    .iterate = rec_iterate,
    .stats_dev = rec_stats_dev,
    .device_ops = rec_device_ops,
};

static void reset_records(void)
{
    memset(scan_hist, 0, sizeof(scan_hist));
    scans = put_bytes = nputs = 0;
    get_sleep_ns = 0;
}

static void config(struct kb_config *c, const char *preset)
{
    char err[256];
    kb_config_default(c);
    CU_ASSERT_EQUAL(kb_preset_apply(c, preset, err, sizeof(err)), 0);
    c->progress = 0;
    c->verify = false;
}

/*
 * ycsb-e's run (2000 operations over 1000 keys, seed 1): every scan reaches
 * the engine with a length drawn uniformly from 1..100: as many scans as
 * the phase counts, shortest 1, longest 100, mean within 50.5 +- 3.3 (5
 * standard errors over ~1900 scans: 5 x 28.87 / sqrt(1900)).
 */
static void test_ycsb_e_scan_lengths(void)
{
    struct kb_config c;
    struct kb_result res;
    struct kb_engine e = {.ops = &rec_engine};
    reset_records();
    config(&c, "ycsb-e");
    c.key_count = 1000;
    c.run.ops = 2000;
    CU_ASSERT_EQUAL(kb_run_phase(&c, &e, &c.run, "run", false, NULL, &res), 0);
    CU_ASSERT_EQUAL(res.op_count[KB_OP_ITERATE], scans);
    CU_ASSERT_TRUE(scans > 1800);
    uint32_t lo = 0, hi = 0;
    double sum = 0;
    for (uint32_t l = 65536; l >= 1; l--) {
        if (scan_hist[l]) {
            lo = l;
            hi = hi ? hi : l;
            sum += (double)l * scan_hist[l];
        }
    }
    CU_ASSERT_EQUAL(scan_hist[0], 0);
    CU_ASSERT_EQUAL(lo, 1);
    CU_ASSERT_EQUAL(hi, 100);
    CU_ASSERT_DOUBLE_EQUAL(sum / (double)scans, 50.5, 3.3);
    kb_result_free(&res);
}

/* scan_length_distribution fixed with 37 entries: every one of 500 scans asks for 37. */
static void test_fixed_scan_length(void)
{
    struct kb_config c;
    struct kb_result res;
    struct kb_engine e = {.ops = &rec_engine};
    char err[256];
    reset_records();
    config(&c, "ycsb-e");
    c.key_count = 1000;
    c.run.ops = 500;
    CU_ASSERT_EQUAL(
        kb_config_set(&c, "benchmark", "scan_length_distribution", "fixed", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "iterate_entries", "37", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_run_phase(&c, &e, &c.run, "run", false, NULL, &res), 0);
    CU_ASSERT_EQUAL(scan_hist[37], scans);
    CU_ASSERT_EQUAL(res.op_count[KB_OP_ITERATE], scans);
    kb_result_free(&res);
}

/*
 * readwhilewriting with --benchmark_write_rate_limit 11600 (16 B keys + 100
 * B values: 116 bytes a write): 100 reads of 2 ms each keep the phase
 * open; the writer's bytes never exceed 1160 (a refill) x (the phase's 100
 * ms periods begun), whatever the scheduling, and every byte the engine
 * got is the writer's updates' (116 each).
 */
static void test_writer_rate_limit(void)
{
    struct kb_config c;
    struct kb_result res;
    struct kb_engine e = {.ops = &rec_engine};
    char err[256];
    reset_records();
    config(&c, "readwhilewriting");
    c.key_count = 1000;
    c.run.ops = 100;
    CU_ASSERT_EQUAL(
        kb_config_set(&c, "benchmark", "write_rate_limit_bytes_per_s", "11600", err, sizeof(err)),
        0);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), 0);
    get_sleep_ns = 2000000;
    CU_ASSERT_EQUAL(kb_run_phase(&c, &e, &c.run, "run", false, NULL, &res), 0);
    double ops_s = res.elapsed_s - res.sync_s;
    /* in whole ns (1 us of slack for the seconds' rounding): the periods begun */
    uint64_t periods = ((uint64_t)llround(ops_s * 1e9) + 1000) / 100000000ull + 1;
    CU_ASSERT_EQUAL(res.op_count[KB_OP_READ], 100);
    CU_ASSERT_EQUAL(res.op_count[KB_OP_UPDATE], nputs);
    CU_ASSERT_EQUAL(put_bytes, nputs * 116);
    CU_ASSERT_TRUE(put_bytes <= 1160 * periods);
    printf("# writer: %llu updates (%llu bytes) in %.3f s, limit %llu bytes\n",
           (unsigned long long)nputs, (unsigned long long)put_bytes, ops_s,
           (unsigned long long)(1160 * periods));
    kb_result_free(&res);
}

static const struct tap_test tests[] = {
    TAP_TEST(ycsb_e_scan_lengths),
    TAP_TEST(fixed_scan_length),
    TAP_TEST(writer_rate_limit),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("kvbench-runner", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
