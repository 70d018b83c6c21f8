/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench's report and workload definitions without a device: the latency
 * histogram's exact bucket bounds and error, --percentiles, the presets
 * (YCSB a-f, db_bench's names, BandSlim's renamed ones and their old
 * names), the sliding-window key order's exact sequences, and the --json
 * object walked field by field (schema_version, every field the scripts
 * read, escaping by json-c, per-op percentiles and intervals), and its
 * latency_histogram: exact buckets, percentiles recomputed from them, merging.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <json-c/json.h>

#include "kvbench.h"
#include "tap_cunit.h"

uint64_t kb_now_ns(void)
{
    return 0;
}

/* ---- histogram -------------------------------------------------------- */

/* Exact below 64 ns; 64-127 one ns wide; 128-255 two; 1000 ns in [1000, 1007]; 1 ms in
 * [999424, 1007615]. */
static void test_hist_bucket_bounds(void)
{
    uint64_t lo, hi;
    CU_ASSERT_EQUAL(kb_hist_bucket(0, &lo, &hi), 0);
    CU_ASSERT_EQUAL(lo, 0);
    CU_ASSERT_EQUAL(hi, 0);
    CU_ASSERT_EQUAL(kb_hist_bucket(63, &lo, &hi), 63);
    CU_ASSERT_EQUAL(lo, 63);
    CU_ASSERT_EQUAL(hi, 63);
    CU_ASSERT_EQUAL(kb_hist_bucket(64, &lo, &hi), 64);
    CU_ASSERT_EQUAL(lo, 64);
    CU_ASSERT_EQUAL(hi, 64);
    CU_ASSERT_EQUAL(kb_hist_bucket(127, &lo, &hi), 127);
    CU_ASSERT_EQUAL(lo, 127);
    CU_ASSERT_EQUAL(hi, 127);
    CU_ASSERT_EQUAL(kb_hist_bucket(129, &lo, &hi), 128);
    CU_ASSERT_EQUAL(lo, 128);
    CU_ASSERT_EQUAL(hi, 129);
    CU_ASSERT_EQUAL(kb_hist_bucket(1003, &lo, &hi), 4 * 64 + 61);
    CU_ASSERT_EQUAL(lo, 1000);
    CU_ASSERT_EQUAL(hi, 1007);
    CU_ASSERT_EQUAL(kb_hist_bucket(1000000, &lo, &hi), 14 * 64 + 58);
    CU_ASSERT_EQUAL(lo, 999424);
    CU_ASSERT_EQUAL(hi, 1007615);
}

/* Every bucket from 64 ns to 2^62 ns is at most 1/64 of its lower bound wide, the first of each
 * power of two exactly 1/64; buckets tile the line with no gap. */
static void test_hist_relative_error(void)
{
    uint64_t lo, hi, prev_hi = 63;
    double worst = 0;
    for (uint64_t v = 64; v < (1ull << 62); v = hi + 1) {
        kb_hist_bucket(v, &lo, &hi);
        CU_ASSERT_EQUAL_FATAL(lo, prev_hi + 1);
        double rel = (double)(hi - lo + 1) / (double)lo;
        worst = rel > worst ? rel : worst;
        prev_hi = hi;
        if (hi - lo > (1ull << 40)) {
            break; /* 2^46 and up: same arithmetic, fewer steps */
        }
    }
    CU_ASSERT_DOUBLE_EQUAL(worst, 1.0 / 64, 1e-15);
}

/* A percentile reports its bucket's midpoint, clamped to the exact maximum: 1000 samples of
 * 1003 ns and one of 5000 -> p50 1003.5 rounds down to 1003 (the bucket [1000,1007] midpoint
 * 1004, clamped? no: max is 5000) = 1004; p100 = 5000. */
static void test_hist_percentile_midpoint(void)
{
    static struct kb_hist h;
    memset(&h, 0, sizeof(h));
    for (int i = 0; i < 1000; i++) {
        kb_hist_add(&h, 1003);
    }
    kb_hist_add(&h, 5000);
    CU_ASSERT_EQUAL(kb_hist_percentile(&h, 50), 1004);
    CU_ASSERT_EQUAL(kb_hist_percentile(&h, 99.9), 1004);
    CU_ASSERT_EQUAL(kb_hist_percentile(&h, 100), 5000);
    /* one sample: every percentile is that sample's bucket, clamped to it */
    memset(&h, 0, sizeof(h));
    kb_hist_add(&h, 1003);
    CU_ASSERT_EQUAL(kb_hist_percentile(&h, 50), 1003);
}

/* --percentiles: ascending, 1-16 values in (0, 100]; each refusal names the value. */
static void test_percentiles_parse(void)
{
    double p[KB_PCT_MAX];
    unsigned n = 0;
    char err[256];
    CU_ASSERT_EQUAL(kb_percentiles_parse("50,99,99.9", p, &n, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_DOUBLE_EQUAL(p[0], 50, 0);
    CU_ASSERT_DOUBLE_EQUAL(p[1], 99, 0);
    CU_ASSERT_DOUBLE_EQUAL(p[2], 99.9, 0);
    CU_ASSERT_EQUAL(kb_percentiles_parse("0", p, &n, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "percentile is '0'; it must be above 0 and at most 100");
    CU_ASSERT_EQUAL(kb_percentiles_parse("50,100.5", p, &n, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "percentile is '100.5'; it must be above 0 and at most 100");
    CU_ASSERT_EQUAL(kb_percentiles_parse("99,50", p, &n, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err,
                           "percentile 50 follows 99; list them in ascending order, each once");
    CU_ASSERT_EQUAL(
        kb_percentiles_parse("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", p, &n, err, sizeof(err)),
        -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "; it must name 1 to 16"));
    CU_ASSERT_EQUAL(n, 3); /* unchanged by a refusal */
    struct kb_config c;
    kb_config_default(&c);
    CU_ASSERT_EQUAL(c.npercentiles, 5);
    CU_ASSERT_DOUBLE_EQUAL(c.percentiles[3], 99.9, 0);
    CU_ASSERT_DOUBLE_EQUAL(c.percentiles[4], 99.99, 0);
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "report_interval_s", "0.05", err, sizeof(err)),
                    -1);
    CU_ASSERT_STRING_EQUAL(err, "report_interval_s is '0.05'; it must be 0 (off) "
                                "and 0.1 to 86400 seconds (suffixes s, ms, us)");
    CU_ASSERT_EQUAL(kb_config_set(&c, "benchmark", "report_interval_s", "2.5", err, sizeof(err)),
                    0);
    CU_ASSERT_DOUBLE_EQUAL(c.report_interval_s, 2.5, 0);
}

/* ---- presets ----------------------------------------------------------- */

/* Run @fn's kb_preset_apply of @name with stderr captured into @buf. */
static int apply_capturing(struct kb_config *c, const char *name, char *buf, size_t len)
{
    char err[512];
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    int rc = kb_preset_apply(c, name, err, sizeof(err));
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(buf, 1, len - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
    return rc;
}

static void check_mix(const struct kb_config *c, double ins, double upd, double rd, double it,
                      double rmw)
{
    CU_ASSERT_DOUBLE_EQUAL(c->run.mix[KB_OP_INSERT], ins, 0);
    CU_ASSERT_DOUBLE_EQUAL(c->run.mix[KB_OP_UPDATE], upd, 0);
    CU_ASSERT_DOUBLE_EQUAL(c->run.mix[KB_OP_READ], rd, 0);
    CU_ASSERT_DOUBLE_EQUAL(c->run.mix[KB_OP_DELETE], 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(c->run.mix[KB_OP_EXIST], 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(c->run.mix[KB_OP_ITERATE], it, 0);
    CU_ASSERT_DOUBLE_EQUAL(c->run.mix[KB_OP_RMW], rmw, 0);
}

/* YCSB a-f: 100000 records of 24 B keys / 1000 B values loaded in a uniform permutation, 100000
 * operations, zipfian 0.99 (d: latest), the core workloads' mixes; e scans 100 keys. */
static void test_presets_ycsb(void)
{
    struct kb_config c;
    char out[256];
    static const struct {
        const char *name;
        double ins, upd, rd, it, rmw;
        enum kb_order order;
    } w[] = {
        {"ycsb-a", 0, 50, 50, 0, 0, KB_ORDER_ZIPFIAN},
        {"ycsb-b", 0, 5, 95, 0, 0, KB_ORDER_ZIPFIAN},
        {"ycsb-c", 0, 0, 100, 0, 0, KB_ORDER_ZIPFIAN},
        {"ycsb-d", 5, 0, 95, 0, 0, KB_ORDER_LATEST},
        {"ycsb-e", 5, 0, 0, 95, 0, KB_ORDER_ZIPFIAN},
        {"ycsb-f", 0, 0, 50, 0, 50, KB_ORDER_ZIPFIAN},
    };
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
        kb_config_default(&c);
        kb_preset_apply(&c, "char-update-seq", out, sizeof(out)); /* a preset before: overridden */
        CU_ASSERT_EQUAL(apply_capturing(&c, w[i].name, out, sizeof(out)), 0);
        CU_ASSERT_STRING_EQUAL(out, ""); /* no notice for a current name */
        CU_ASSERT_STRING_EQUAL(c.preset, w[i].name);
        CU_ASSERT_EQUAL(c.key_count, 100000);
        CU_ASSERT_EQUAL(c.key_size.kind, KB_SIZE_FIXED);
        CU_ASSERT_EQUAL(c.key_size.min, 24);
        CU_ASSERT_EQUAL(c.value_size.min, 1000);
        CU_ASSERT_EQUAL(c.value_size.max, 1000);
        CU_ASSERT_TRUE(c.load.enabled);
        CU_ASSERT_EQUAL(c.load.ops, 0);
        CU_ASSERT_EQUAL(c.load.order, KB_ORDER_UNIFORM);
        CU_ASSERT_TRUE(c.run.enabled);
        CU_ASSERT_EQUAL(c.run.ops, 100000);
        CU_ASSERT_FALSE(c.run.ops_set);
        CU_ASSERT_DOUBLE_EQUAL(c.run.duration_s, 0, 0);
        CU_ASSERT_EQUAL(c.run.order, w[i].order);
        CU_ASSERT_DOUBLE_EQUAL(c.run.theta, 0.99, 0);
        CU_ASSERT_FALSE(c.run.writer);
        check_mix(&c, w[i].ins, w[i].upd, w[i].rd, w[i].it, w[i].rmw);
        CU_ASSERT_EQUAL(c.iterate_entries, 100);
    }
}

/* db_bench: 1M keys of 16 B with 100 B values; fillseq loads only; fillrandom has no load and
 * 1M uniform updates; readrandom/overwrite/readwhilewriting load then read/update/read+writer. */
static void test_presets_dbbench(void)
{
    struct kb_config c;
    char out[256];
    static const struct {
        const char *name;
        bool load, run, writer;
        double upd, rd;
    } b[] = {
        {"fillseq", true, false, false, 0, 1},        {"fillrandom", false, true, false, 1, 0},
        {"readrandom", true, true, false, 0, 1},      {"overwrite", true, true, false, 1, 0},
        {"readwhilewriting", true, true, true, 0, 1},
    };
    for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
        kb_config_default(&c);
        CU_ASSERT_EQUAL(apply_capturing(&c, b[i].name, out, sizeof(out)), 0);
        CU_ASSERT_STRING_EQUAL(out, "");
        CU_ASSERT_STRING_EQUAL(c.preset, b[i].name);
        CU_ASSERT_EQUAL(c.key_count, 1000000);
        CU_ASSERT_EQUAL(c.key_size.min, 16);
        CU_ASSERT_EQUAL(c.value_size.min, 100);
        CU_ASSERT_EQUAL(c.load.enabled, b[i].load);
        CU_ASSERT_EQUAL(c.load.order, KB_ORDER_SEQUENTIAL);
        CU_ASSERT_EQUAL(c.run.enabled, b[i].run);
        CU_ASSERT_EQUAL(c.run.writer, b[i].writer);
        if (b[i].run) {
            CU_ASSERT_EQUAL(c.run.ops, 1000000);
            CU_ASSERT_EQUAL(c.run.order, KB_ORDER_UNIFORM);
            check_mix(&c, 0, b[i].upd, b[i].rd, 0, 0);
        }
    }
}

/* BandSlim's presets under their new names; the old A-D and M give the same configuration, the
 * new name in "preset", and one notice line on stderr. */
static void test_presets_bandslim_renamed(void)
{
    static const char *const old[] = {"A", "B", "C", "D", "M"};
    static const char *const now[] = {"bandslim-a", "bandslim-b", "bandslim-c", "bandslim-d",
                                      "bandslim-m"};
    for (int i = 0; i < 5; i++) {
        struct kb_config a, b;
        char out[256], want[256];
        kb_config_default(&a);
        kb_config_default(&b);
        CU_ASSERT_EQUAL(apply_capturing(&a, now[i], out, sizeof(out)), 0);
        CU_ASSERT_STRING_EQUAL(out, "");
        CU_ASSERT_EQUAL(apply_capturing(&b, old[i], out, sizeof(out)), 0);
        snprintf(want, sizeof(want),
                 "kvbench: preset \"%s\" is now called \"%s\" (the old name still works)\n", old[i],
                 now[i]);
        CU_ASSERT_STRING_EQUAL(out, want);
        CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof(a)), 0);
        CU_ASSERT_STRING_EQUAL(b.preset, now[i]);
        CU_ASSERT_STRING_EQUAL(kb_preset_canonical(old[i]), now[i]);
        CU_ASSERT_EQUAL(b.key_count, 1000000);
        CU_ASSERT_EQUAL(b.key_size.min, 4);
        CU_ASSERT_FALSE(b.run.enabled);
    }
    struct kb_config c;
    char out[256];
    kb_config_default(&c);
    apply_capturing(&c, "bandslim-b", out, sizeof(out));
    CU_ASSERT_EQUAL(c.load.order, KB_ORDER_UNIFORM);
    CU_ASSERT_EQUAL(c.value_size.kind, KB_SIZE_WEIGHTED);
    CU_ASSERT_EQUAL(c.value_size.sizes[0], 8);
    CU_ASSERT_EQUAL(c.value_size.sizes[1], 2048);
    CU_ASSERT_DOUBLE_EQUAL(c.value_size.cum[0], 0.9, 1e-12);
    CU_ASSERT_STRING_EQUAL(kb_preset_canonical("ycsb-a"), "ycsb-a");
    CU_ASSERT_EQUAL(apply_capturing(&c, "a", out, sizeof(out)), -1); /* YCSB's are ycsb-a.. */
}

/* ---- sliding-window order --------------------------------------------- */

/* window_keys 1: the window is one key moving by window_step: i * step mod n. */
static void test_window_degenerate(void)
{
    struct kb_window w;
    kb_window_init(&w, 10, 1, 3, 7);
    static const uint64_t want[] = {0, 3, 6, 9, 2, 5, 8, 1, 4, 7, 0};
    for (uint64_t i = 0; i < 11; i++) {
        CU_ASSERT_EQUAL(kb_window_at(&w, i), want[i]);
    }
    /* 0 = defaults: 1024 keys capped at n, step = keys */
    kb_window_init(&w, 100, 0, 0, 1);
    CU_ASSERT_EQUAL(w.keys, 100);
    CU_ASSERT_EQUAL(w.step, 100);
    kb_window_init(&w, 1 << 20, 0, 0, 1);
    CU_ASSERT_EQUAL(w.keys, 1024);
    CU_ASSERT_EQUAL(w.step, 1024);
}

/* n 10, 4 keys per window, step 4, seed 1: windows {0-3}, {4-7}, {8,9,0,1}, {2-5} ... each
 * window's keys once each, in the order of its own bijection (exact sequence). */
static void test_window_sequence(void)
{
    struct kb_window w;
    kb_window_init(&w, 10, 4, 4, 1);
    static const uint64_t want[16] = {3, 2, 1, 0, 4, 7, 6, 5, 8, 1, 0, 9, 2, 5, 4, 3};
    for (uint64_t i = 0; i < 16; i++) {
        CU_ASSERT_EQUAL(kb_window_at(&w, i), want[i]);
    }
    /* each window: exactly the keys base..base+3 mod 10 */
    for (uint64_t j = 0; j < 4; j++) {
        int seen[10] = {0};
        for (uint64_t r = 0; r < 4; r++) {
            seen[kb_window_at(&w, j * 4 + r)]++;
        }
        for (uint64_t k = 0; k < 4; k++) {
            CU_ASSERT_EQUAL(seen[(j * 4 + k) % 10], 1);
        }
    }
    /* overlapping windows (step 2 of 4): windows start at 0, 2, 4, ... */
    kb_window_init(&w, 10, 4, 2, 1);
    static const uint64_t want2[12] = {3, 2, 1, 0, 2, 5, 4, 3, 4, 7, 6, 5};
    for (uint64_t i = 0; i < 12; i++) {
        CU_ASSERT_EQUAL(kb_window_at(&w, i), want2[i]);
    }
}

/* 16 windows of 64 keys over n = 1000 (1024 ops): every op stays within its window
 * [64 j, 64 j + 63] mod n; the windows tile the key space, the last (960-1023) wrapping onto
 * 0-23, so keys 0-23 are touched twice and the other 976 once. */
static void test_window_pass_covers(void)
{
    struct kb_window w;
    static int seen[1000];
    memset(seen, 0, sizeof(seen));
    kb_window_init(&w, 1000, 64, 64, 42);
    for (uint64_t i = 0; i < 1024; i++) {
        uint64_t k = kb_window_at(&w, i), base = (i / 64) * 64;
        seen[k]++;
        CU_ASSERT_TRUE((k + 1000 - base) % 1000 < 64);
    }
    int once = 0, twice = 0;
    for (int k = 0; k < 1000; k++) {
        once += seen[k] == 1;
        twice += seen[k] == 2 && k < 24;
    }
    CU_ASSERT_EQUAL(once, 976);
    CU_ASSERT_EQUAL(twice, 24);
}

/* Config: order window, run.window_keys/window_step, checks naming the ranges. */
static void test_window_config(void)
{
    struct kb_config c;
    char err[512];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "order", "window", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(c.run.order, KB_ORDER_WINDOW);
    CU_ASSERT_STRING_EQUAL(kb_order_name(KB_ORDER_WINDOW), "window");
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "window_keys", "200000", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "run.window_keys is 200000; it must be from 1 to "
                                "key_count (100000)");
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "window_keys", "100", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "window_step", "101", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "run.window_step is 101; it must be from 1 to "
                                       "window_keys (100)"));
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "window_step", "50", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_set(&c, "run", "order", "sliding", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "run.order is 'sliding'; it must be sequential, uniform, "
                                "zipfian, latest or window");
    double mix[KB_OP_COUNT];
    CU_ASSERT_EQUAL(kb_mix_parse("scan=95,insert=5", mix, err, sizeof(err)), 0);
    CU_ASSERT_DOUBLE_EQUAL(mix[KB_OP_ITERATE], 95, 0);
    CU_ASSERT_EQUAL(kb_mix_parse("read=1,rmw=1", mix, err, sizeof(err)), 0);
    CU_ASSERT_DOUBLE_EQUAL(mix[KB_OP_RMW], 1, 0);
}

/* ---- JSON --------------------------------------------------------------- */

/* The keys of object @o, space-separated, in order. */
static void keys_of(struct json_object *o, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    json_object_object_foreach(o, k, v)
    {
        (void)v;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", k);
    }
}

static struct json_object *at(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    CU_ASSERT_TRUE_FATAL(json_object_object_get_ex(o, key, &v));
    return v;
}

/* A result with known counts: 4 reads of 1003 ns and 1 update of 5000 ns; one interval. */
static void fake_result(struct kb_result *r, const struct kb_config *c)
{
    memset(r, 0, sizeof(*r));
    r->phase = "run";
    r->engine = "kvssd";
    r->ops = 5;
    r->op_count[KB_OP_READ] = 4;
    r->op_count[KB_OP_UPDATE] = 1;
    r->elapsed_s = 0.5;
    r->commands = 5;
    r->user_bytes = 100;
    r->live_user_bytes = -1;
    r->footprint_bytes = -1;
    for (int i = 0; i < 4; i++) {
        kb_hist_add(&r->hist, 1003);
        kb_hist_add(&r->hist_op[KB_OP_READ], 1003);
    }
    kb_hist_add(&r->hist, 5000);
    kb_hist_add(&r->hist_op[KB_OP_UPDATE], 5000);
    r->intervals = calloc(1, sizeof(*r->intervals));
    r->nintervals = 1;
    r->intervals[0].start_s = 0;
    r->intervals[0].end_s = 0.5;
    r->intervals[0].ops = 5;
    kb_lat_summarize(c, &r->hist, &r->intervals[0].all);
    kb_lat_summarize(c, &r->hist_op[KB_OP_READ], &r->intervals[0].op[KB_OP_READ]);
}

/* The --json object of one kvssd run phase: schema_version 1 first, every field of the
 * pre-versioning output in place (names and nesting), the new ones added; --percentiles
 * 50,99,99.9 keys "50" "99" "99.9"; the device path escaped by json-c. */
static void test_json_object_fields(void)
{
    static struct kb_config c;
    static struct kb_result r;
    char err[256], keys[2048];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(
        kb_percentiles_parse("50,99,99.9", c.percentiles, &c.npercentiles, err, sizeof(err)), 0);
    snprintf(c.device, sizeof(c.device), "%s", "/dev/\"ng\\0\n\xff");
    fake_result(&r, &c);
    struct json_object *o = kb_report_json_object(&c, &r, 1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    keys_of(o, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(
        keys,
        "schema_version provenance preset device_path seed threads queue_depth engine io poll "
        "transfer_mode key_count key_size value_size report_interval_s "
        "percentiles ops_per_s latency_us commands_per_op mismatches phases "
        "device_phase device rocksdb rawhash engines");
    CU_ASSERT_EQUAL(json_object_get_int(at(o, "schema_version")), 1);
    CU_ASSERT_EQUAL(json_object_get_int64(at(o, "key_count")), 100000);
    CU_ASSERT_PTR_NULL(at(o, "device")); /* no statistics log: null */
    /* not UTF-8 (0xff): the bytes in hex, as the kvssd CLI writes them */
    CU_ASSERT_STRING_EQUAL(json_object_get_string(at(at(o, "device_path"), "hex")),
                           "2f6465762f226e675c300aff");
    /* valid UTF-8 with a quote, a backslash and a newline: a string, escaped by json-c */
    snprintf(c.rocksdb.dir, sizeof(c.rocksdb.dir), "%s", "/mnt/\"db\\\n\xc3\xa9");
    json_object_put(o);
    o = kb_report_json_object(&c, &r, 1, 1);
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"device_path\":{\"hex\":\"2f6465762f226e675c300aff\"}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"rocksdb\":{\"dir\":\"/mnt/\\\"db\\\\\\n\xc3\xa9\","));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"ops_per_s\":10.0,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"errors\":0,"));
    keys_of(at(o, "latency_us"), keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "p50 p90 p99 p999 max p9999 percentiles");
    struct json_object *ph = json_object_array_get_idx(at(o, "phases"), 0);
    keys_of(ph, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "phase ops elapsed_s ops_per_s op_counts latency_us commands "
                                 "commands_per_op errors not_found mismatches user_bytes engine "
                                 "cpu_s sync_s written_bytes live_user_bytes footprint_bytes "
                                 "latency_by_op_us latency_histogram not_found_by_op metrics "
                                 "device intervals "
                                 "intervals_dropped");
    keys_of(at(ph, "op_counts"), keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "insert update read delete exist iterate rmw");
    keys_of(at(ph, "latency_us"), keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "p50 p90 p99 p999 max mean p9999 percentiles");
    struct json_object *by = at(ph, "latency_by_op_us");
    keys_of(by, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "update read");
    struct json_object *rd = at(by, "read");
    keys_of(rd, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "count mean p50 p90 p99 p999 max p9999 percentiles");
    CU_ASSERT_EQUAL(json_object_get_int(at(rd, "count")), 4);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(rd, "max")), 1.003, 1e-12);
    keys_of(at(rd, "percentiles"), keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "50 99 99.9");
    /* 4 samples in [1000, 1007]: the midpoint 1004 is above the max 1003, so 1003 */
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(at(rd, "percentiles"), "99.9")), 1.003, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(at(by, "update"), "p50")), 5.0, 1e-12);
    struct json_object *iv = json_object_array_get_idx(at(ph, "intervals"), 0);
    keys_of(iv, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "start_s end_s ops ops_per_s latency_us latency_by_op_us");
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(iv, "ops_per_s")), 10.0, 0);
    keys_of(at(iv, "latency_us"), keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "count mean max percentiles");
    CU_ASSERT_DOUBLE_EQUAL(
        json_object_get_double(at(at(at(iv, "latency_us"), "percentiles"), "99")), 5.0, 1e-12);
    keys_of(at(iv, "latency_by_op_us"), keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "read");
    struct json_object *eng = json_object_array_get_idx(at(o, "engines"), 0);
    keys_of(eng, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "engine target phases");
    json_object_put(o);
    kb_result_free(&r);
}

/* The buckets of histogram object @h as "[lo,hi,n] ...", and their counts' sum in *@total. */
static void buckets_of(struct json_object *h, char *buf, size_t len, uint64_t *total)
{
    struct json_object *a = at(h, "buckets");
    size_t n = 0;
    buf[0] = '\0';
    *total = 0;
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        struct json_object *b = json_object_array_get_idx(a, i);
        CU_ASSERT_EQUAL_FATAL(json_object_array_length(b), 3);
        uint64_t lo = json_object_get_uint64(json_object_array_get_idx(b, 0));
        uint64_t hi = json_object_get_uint64(json_object_array_get_idx(b, 1));
        uint64_t c = json_object_get_uint64(json_object_array_get_idx(b, 2));
        n += (size_t)snprintf(buf + n, len - n, "%s[%llu,%llu,%llu]", n ? " " : "",
                              (unsigned long long)lo, (unsigned long long)hi,
                              (unsigned long long)c);
        *total += c;
    }
}

/* Percentile @p in ns from histogram object @h alone, by docs/kvbench.md "JSON"'s rule. */
static uint64_t pct_from_buckets(struct json_object *h, double p)
{
    uint64_t count = json_object_get_uint64(at(h, "count"));
    uint64_t max = json_object_get_uint64(at(h, "max"));
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)count), seen = 0;
    rank = rank < 1 ? 1 : rank;
    if (rank >= count) {
        return max;
    }
    struct json_object *a = at(h, "buckets");
    for (size_t i = 0; i < json_object_array_length(a); i++) {
        struct json_object *b = json_object_array_get_idx(a, i);
        uint64_t lo = json_object_get_uint64(json_object_array_get_idx(b, 0));
        uint64_t hi = json_object_get_uint64(json_object_array_get_idx(b, 1));
        seen += json_object_get_uint64(json_object_array_get_idx(b, 2));
        if (seen >= rank) {
            uint64_t mid = lo + (hi - lo + 1) / 2;
            return mid < max ? mid : max;
        }
    }
    return max;
}

/* The run phase of a report on @r with @c, as the JSON object of its latency_histogram. */
static struct json_object *phase_histograms(const struct kb_config *c, const struct kb_result *r,
                                            struct json_object **report)
{
    *report = kb_report_json_object(c, r, 1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(*report);
    return at(json_object_array_get_idx(at(*report, "phases"), 0), "latency_histogram");
}

/* Ten reads of known latencies and one update: latency_histogram holds exactly their
 * buckets (exact below 128 ns, [1000, 1007] for 1000..1007, [999424, 1007615] for 1 ms),
 * per type that ran, the counts adding up to the phase's op count for the type. */
static void test_json_histogram_buckets(void)
{
    static const uint64_t reads[] = {0, 5, 63, 64, 65, 1000, 1003, 1007, 1008, 1000000};
    static struct kb_config c;
    static struct kb_result r;
    struct json_object *o;
    char keys[4096];
    uint64_t total;
    kb_config_default(&c);
    memset(&r, 0, sizeof(r));
    r.phase = "run";
    r.engine = "kvssd";
    r.ops = 11;
    r.op_count[KB_OP_READ] = 10;
    r.op_count[KB_OP_UPDATE] = 1;
    r.live_user_bytes = r.footprint_bytes = -1;
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        kb_hist_add(&r.hist, reads[i]);
        kb_hist_add(&r.hist_op[KB_OP_READ], reads[i]);
    }
    kb_hist_add(&r.hist, 5000);
    kb_hist_add(&r.hist_op[KB_OP_UPDATE], 5000);
    struct json_object *hs = phase_histograms(&c, &r, &o);
    keys_of(hs, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "update read");
    struct json_object *rd = at(hs, "read");
    keys_of(rd, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "unit count sum max buckets");
    CU_ASSERT_STRING_EQUAL(json_object_get_string(at(rd, "unit")), "ns");
    CU_ASSERT_EQUAL(json_object_get_uint64(at(rd, "count")), 10);
    CU_ASSERT_EQUAL(json_object_get_uint64(at(rd, "sum")), 1004215);
    CU_ASSERT_EQUAL(json_object_get_uint64(at(rd, "max")), 1000000);
    buckets_of(rd, keys, sizeof(keys), &total);
    CU_ASSERT_STRING_EQUAL(keys, "[0,0,1] [5,5,1] [63,63,1] [64,64,1] [65,65,1] [1000,1007,3] "
                                 "[1008,1015,1] [999424,1007615,1]");
    CU_ASSERT_EQUAL(total, r.op_count[KB_OP_READ]);
    buckets_of(at(hs, "update"), keys, sizeof(keys), &total);
    CU_ASSERT_STRING_EQUAL(keys, "[4992,5055,1]");
    CU_ASSERT_EQUAL(total, r.op_count[KB_OP_UPDATE]);
    json_object_put(o);
}

/* The percentiles kvbench prints for the ten reads above, recomputed from the buckets,
 * count and max alone: p50 65 ns (rank 5), p90 1012 ns (rank 9: [1008, 1015]'s middle),
 * p99 and up the max, every field of latency_by_op_us.read equal. */
static void test_json_histogram_percentiles(void)
{
    static const uint64_t reads[] = {1000000, 1008, 1007, 1003, 1000, 65, 64, 63, 5, 0};
    static const struct {
        const char *field;
        double p;
        double us;
    } want[] = {{"p50", 50, 0.065},
                {"p90", 90, 1.012},
                {"p99", 99, 1000.0},
                {"p999", 99.9, 1000.0},
                {"p9999", 99.99, 1000.0}};
    static struct kb_config c;
    static struct kb_result r;
    struct json_object *o;
    char err[256];
    kb_config_default(&c);
    CU_ASSERT_EQUAL(
        kb_percentiles_parse("10,25,50,75,90", c.percentiles, &c.npercentiles, err, sizeof(err)),
        0);
    memset(&r, 0, sizeof(r));
    r.phase = "run";
    r.ops = r.op_count[KB_OP_READ] = 10;
    r.live_user_bytes = r.footprint_bytes = -1;
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        kb_hist_add(&r.hist, reads[i]);
        kb_hist_add(&r.hist_op[KB_OP_READ], reads[i]);
    }
    struct json_object *h = at(phase_histograms(&c, &r, &o), "read");
    struct json_object *lat = at(
        at(json_object_array_get_idx(at(o, "phases"), 0), "latency_by_op_us"), "read");
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(lat, want[i].field)), want[i].us, 0);
        CU_ASSERT_DOUBLE_EQUAL((double)pct_from_buckets(h, want[i].p) / 1e3, want[i].us, 0);
    }
    CU_ASSERT_DOUBLE_EQUAL((double)json_object_get_uint64(at(h, "max")) / 1e3,
                           json_object_get_double(at(lat, "max")), 0);
    /* --percentiles 10,25,50,75,90: ranks 1, 3, 5, 8, 9 */
    static const double pcts[] = {10, 25, 50, 75, 90}, us[] = {0, 0.063, 0.065, 1.004, 1.012};
    for (size_t i = 0; i < 5; i++) {
        char key[32];
        kb_pct_key(pcts[i], key, sizeof(key));
        CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(at(lat, "percentiles"), key)), us[i], 0);
        CU_ASSERT_DOUBLE_EQUAL((double)pct_from_buckets(h, pcts[i]) / 1e3, us[i], 0);
    }
    json_object_put(o);
}

/* Two reports merged by adding equal buckets' counts give exactly the buckets of one
 * report over both sample sets (kb_hist_merge): the bounds are the same in every report. */
static void test_json_histogram_merge(void)
{
    static struct kb_config c;
    static struct kb_result a, b, ab;
    struct json_object *oa, *ob, *oab;
    char ka[1024], kb[1024], kab[1024];
    uint64_t ta, tb, tab;
    kb_config_default(&c);
    struct kb_result *rs[3] = {&a, &b, &ab};
    for (int i = 0; i < 3; i++) {
        memset(rs[i], 0, sizeof(*rs[i]));
        rs[i]->phase = "run";
        rs[i]->live_user_bytes = rs[i]->footprint_bytes = -1;
    }
    kb_hist_add(&a.hist_op[KB_OP_READ], 1003);
    kb_hist_add(&a.hist_op[KB_OP_READ], 5000);
    kb_hist_add(&b.hist_op[KB_OP_READ], 1007);
    kb_hist_add(&b.hist_op[KB_OP_READ], 2000000);
    kb_hist_merge(&ab.hist_op[KB_OP_READ], &a.hist_op[KB_OP_READ]);
    kb_hist_merge(&ab.hist_op[KB_OP_READ], &b.hist_op[KB_OP_READ]);
    buckets_of(at(phase_histograms(&c, &a, &oa), "read"), ka, sizeof(ka), &ta);
    buckets_of(at(phase_histograms(&c, &b, &ob), "read"), kb, sizeof(kb), &tb);
    buckets_of(at(phase_histograms(&c, &ab, &oab), "read"), kab, sizeof(kab), &tab);
    CU_ASSERT_STRING_EQUAL(ka, "[1000,1007,1] [4992,5055,1]");
    CU_ASSERT_STRING_EQUAL(kb, "[1000,1007,1] [1998848,2015231,1]");
    CU_ASSERT_STRING_EQUAL(kab, "[1000,1007,2] [4992,5055,1] [1998848,2015231,1]");
    CU_ASSERT_EQUAL(tab, ta + tb);
    json_object_put(oa);
    json_object_put(ob);
    json_object_put(oab);
}

/* With the statistics log: the "device" object keeps every field reproduce reads, and
 * sim_latency_us has count/mean/p50/p99/p999/max per device operation. */
static void test_json_device_fields(void)
{
    static struct kb_config c;
    static struct kb_result r;
    char keys[2048];
    kb_config_default(&c);
    fake_result(&r, &c);
    r.have_device = true;
    r.after.latency[0][0] = 10;
    r.after.latency[0][1] = 12000;
    r.after.latency[0][2] = 30000;
    r.after.latency_sum_ns[0] = 150000;
    r.after.xfer.commands = 5;
    struct json_object *o = kb_report_json_object(&c, &r, 1, 1);
    struct json_object *d = at(o, "device");
    keys_of(d, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "h2d_bytes d2h_bytes pcie_bytes commands inline_commands "
                                 "key_stage_commands nand_pages_programmed "
                                 "nand_data_pages_programmed nand_pages_read nand_blocks_erased "
                                 "gc_runs waf space_amp taf clock sim_time_s sim_ops_per_s "
                                 "sim_latency_us");
    CU_ASSERT_STRING_EQUAL(json_object_get_string(at(d, "clock")), "vm");
    keys_of(at(d, "h2d_bytes"), keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "sqe doorbell mmio_other prp_list data inline_value");
    struct json_object *st = at(at(d, "sim_latency_us"), "store");
    keys_of(st, keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "count mean p50 p99 p999 max");
    CU_ASSERT_EQUAL(json_object_get_int(at(st, "count")), 10);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(st, "mean")), 15.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(st, "p50")), 12.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double(at(st, "p99")), 30.0, 0);
    keys_of(at(d, "sim_latency_us"), keys, sizeof(keys));
    CU_ASSERT_STRING_EQUAL(keys, "store retrieve delete exist iterate");
    json_object_put(o);
    /* a sim: device: its device time follows the simulator's arrivals */
    snprintf(c.device, sizeof(c.device), "sim:a.img");
    o = kb_report_json_object(&c, &r, 1, 1);
    CU_ASSERT_STRING_EQUAL(json_object_get_string(at(at(o, "device"), "clock")), "sim");
    json_object_put(o);
    kb_result_free(&r);
}

/* The table's latency lines: all operations, then each type that ran, at --percentiles. */
static void test_table_latency_lines(void)
{
    static struct kb_config c;
    static struct kb_result r;
    char err[128], out[4096];
    kb_config_default(&c);
    kb_percentiles_parse("50,99", c.percentiles, &c.npercentiles, err, sizeof(err));
    fake_result(&r, &c);
    fflush(stdout);
    int saved = dup(1);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 1);
    kb_report_table(&c, &r);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, sizeof(out) - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    CU_ASSERT_PTR_NOT_NULL(strstr(out,
                                  "   latency   p50 1.0  p99 5.0  max 5.0  mean 1.8 us (5 ops)\n"
                                  "   update    p50 5.0  p99 5.0  max 5.0  mean 5.0 us (1 ops)\n"
                                  "   read      p50 1.0  p99 1.0  max 1.0  mean 1.0 us (4 ops)\n"));
    kb_result_free(&r);
}

/* The interval line of the table: phase, period, ops/s, the configured percentiles, max. */
static void test_interval_line(void)
{
    static struct kb_config c;
    struct kb_interval iv;
    char err[128], line[256];
    kb_config_default(&c);
    kb_percentiles_parse("50,99.9", c.percentiles, &c.npercentiles, err, sizeof(err));
    memset(&iv, 0, sizeof(iv));
    iv.start_s = 1;
    iv.end_s = 2;
    iv.ops = 1234;
    iv.all.pct_us[0] = 12.25;
    iv.all.pct_us[1] = 99.5;
    iv.all.max_us = 150;
    kb_interval_line(&c, "run", &iv, line, sizeof(line));
    CU_ASSERT_STRING_EQUAL(line, "[run 1.0-2.0 s] 1234 ops/s, latency us p50 12.2 p99.9 99.5 max "
                                 "150.0");
}

static const struct tap_test tests[] = {
    TAP_TEST(hist_bucket_bounds),
    TAP_TEST(hist_relative_error),
    TAP_TEST(hist_percentile_midpoint),
    TAP_TEST(percentiles_parse),
    TAP_TEST(presets_ycsb),
    TAP_TEST(presets_dbbench),
    TAP_TEST(presets_bandslim_renamed),
    TAP_TEST(window_degenerate),
    TAP_TEST(window_sequence),
    TAP_TEST(window_pass_covers),
    TAP_TEST(window_config),
    TAP_TEST(json_object_fields),
    TAP_TEST(json_histogram_buckets),
    TAP_TEST(json_histogram_percentiles),
    TAP_TEST(json_histogram_merge),
    TAP_TEST(json_device_fields),
    TAP_TEST(table_latency_lines),
    TAP_TEST(interval_line),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("kvbench-report", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
