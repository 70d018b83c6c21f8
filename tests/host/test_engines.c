/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench's engine layer without a device: the rawhash store on a
 * temporary file (put/get/overwrite/delete, defragmentation keeps every
 * live record and frees the block, the index rebuilt on reopen, a full
 * store refused), the rocksdb engine on a temporary directory, the same
 * workload through the runner on both (same operations, same outcomes),
 * and the report's JSON fields per engine.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "kvbench.h"
#include "tap_cunit.h"

#define WB (128u * 1024u) /* the smallest write block */

static char dir[128];

static int make_dir(void)
{
    snprintf(dir, sizeof(dir), "%s/kvbench-engines-XXXXXX", getenv("TMPDIR") ?: "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A fresh rawhash store of @blocks write blocks in a file of the test directory. */
static struct rh_store *rh_new(const char *name, uint64_t blocks, uint32_t lwm, bool keep)
{
    struct kb_rawhash_opts o = {0};
    char err[256];
    struct rh_store *s = NULL;
    snprintf(o.dev, sizeof(o.dev), "%s/%s", dir, name);
    o.size_bytes = 4096 + blocks * WB;
    o.write_block_bytes = WB;
    o.defrag_lwm_pct = lwm;
    o.keep = keep;
    int rc = rh_open(&o, &s, err, sizeof(err));
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return s;
}

static void key_of(uint64_t i, uint8_t k[16])
{
    kb_key_encode(i, 16, 7, k);
}

static void value_of(uint64_t i, uint32_t len, uint8_t *v)
{
    kb_value_fill(i, len, 7, v);
}

/* Key @i reads back as value_of(@i, @len) exactly. */
static void assert_reads(struct rh_store *s, uint64_t i, uint32_t len)
{
    uint8_t k[16], *v = malloc(len + 1), *want = malloc(len + 1);
    uint32_t got = 0;
    key_of(i, k);
    value_of(i, len, want);
    CU_ASSERT_EQUAL(rh_get(s, k, 16, v, len, &got), 0);
    CU_ASSERT_EQUAL(got, len);
    CU_ASSERT_EQUAL(memcmp(v, want, len), 0);
    free(v);
    free(want);
}

static void put_i(struct rh_store *s, uint64_t i, uint32_t len)
{
    uint8_t k[16], *v = malloc(len + 1);
    key_of(i, k);
    value_of(i, len, v);
    CU_ASSERT_EQUAL(rh_put(s, k, 16, v, len), 0);
    free(v);
}

/* Put, get, overwrite (another size), delete, get of a deleted and of a never-written key. */
static void test_rawhash_round_trip(void)
{
    struct rh_store *s = rh_new("rt", 8, 50, false);
    uint8_t k[16], buf[5000];
    uint32_t got = 0;
    put_i(s, 1, 100);
    put_i(s, 2, 0);
    assert_reads(s, 1, 100);
    assert_reads(s, 2, 0);
    put_i(s, 1, 4000); /* overwrite: the new size and bytes */
    assert_reads(s, 1, 4000);
    /* a partial read: the full size, the first bytes */
    key_of(1, k);
    CU_ASSERT_EQUAL(rh_get(s, k, 16, buf, 10, &got), 0);
    CU_ASSERT_EQUAL(got, 4000);
    key_of(2, k);
    CU_ASSERT_EQUAL(rh_del(s, k, 16), 0);
    CU_ASSERT_EQUAL(rh_get(s, k, 16, buf, sizeof(buf), &got), -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(rh_del(s, k, 16), 0); /* missing: success, nothing written */
    key_of(3, k);
    CU_ASSERT_EQUAL(rh_del(s, k, 16), 0); /* never written: success, no tombstone */
    CU_ASSERT_EQUAL(rh_get(s, k, 16, buf, sizeof(buf), &got), -KVSSD_ERR_KEY_NOT_FOUND);
    /* a record that does not fit a write block is refused before anything is written */
    uint8_t *big = calloc(1, WB);
    CU_ASSERT_EQUAL(rh_put(s, k, 16, big, WB - 64 - 32 - 16 + 1), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_EQUAL(rh_put(s, k, 16, big, WB - 64 - 32 - 16), 0); /* exactly a block */
    free(big);
    struct rh_stats st;
    rh_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.live_records, 2); /* keys 1 and 3 */
    CU_ASSERT_EQUAL(st.tombstones, 1);  /* key 2 */
    rh_close(s);
}

/*
 * 2000-byte values (2048-byte records): 63 per 128 KiB block. Keys 0..62
 * fill block 0; overwriting keys 0..49 (1990 bytes: 2048-byte records too,
 * which no longer fit block 0) leaves 13 live records in it.
 * Defragmenting block 0 relocates exactly those 13, frees it, and every
 * key reads back its newest value.
 */
static void test_rawhash_defrag_keeps_live(void)
{
    struct rh_store *s = rh_new("gc", 8, 1, false); /* lwm 1 %: no automatic defrag */
    for (uint64_t i = 0; i < 63; i++) {
        put_i(s, i, 2000);
    }
    uint8_t k[16];
    key_of(0, k);
    int64_t b0 = rh_block_of(s, k, 16);
    key_of(62, k);
    CU_ASSERT_EQUAL(rh_block_of(s, k, 16), b0);
    for (uint64_t i = 0; i < 50; i++) {
        put_i(s, i, 1990); /* a 2048-byte record again: block 0 is sealed with 13 live */
    }
    key_of(0, k);
    CU_ASSERT_NOT_EQUAL(rh_block_of(s, k, 16), b0);
    struct rh_stats before, after;
    rh_get_stats(s, &before);
    CU_ASSERT_EQUAL(rh_defrag_block(s, (uint64_t)b0), 0);
    rh_get_stats(s, &after);
    CU_ASSERT_EQUAL(after.defrags, before.defrags + 1);
    CU_ASSERT_EQUAL(after.relocated_records - before.relocated_records, 13);
    CU_ASSERT_EQUAL(after.relocated_bytes - before.relocated_bytes, 13 * 2048);
    CU_ASSERT_EQUAL(after.free_blocks, before.free_blocks + 1);
    CU_ASSERT_EQUAL(after.live_records, 63);
    for (uint64_t i = 0; i < 63; i++) {
        assert_reads(s, i, i < 50 ? 1990 : 2000);
        key_of(i, k);
        CU_ASSERT_NOT_EQUAL(rh_block_of(s, k, 16), b0);
    }
    /* a block that is not sealed (free now) is not defragmented */
    CU_ASSERT_EQUAL(rh_defrag_block(s, (uint64_t)b0), -1);
    rh_close(s);
}

/* Under defrag_lwm_pct, writes defragment by themselves; nothing is lost on the way. */
static void test_rawhash_automatic_defrag(void)
{
    struct rh_store *s = rh_new("auto", 6, 50, false);
    /* 200 keys of 2048-byte records = 400 KiB live in 6 x 128 KiB: 25 rounds need GC */
    for (int round = 0; round < 25; round++) {
        for (uint64_t i = 0; i < 200; i++) {
            put_i(s, i, round % 2 ? 2000 : 1990);
        }
    }
    struct rh_stats st;
    rh_get_stats(s, &st);
    CU_ASSERT_TRUE(st.defrags > 0);
    CU_ASSERT_EQUAL(st.live_records, 200);
    for (uint64_t i = 0; i < 200; i++) {
        assert_reads(s, i, 1990); /* round 24 wrote 1990 */
    }
    rh_close(s);
}

/* Close and reopen with keep: the index is rebuilt from the records on the file. */
static void test_rawhash_rebuild_on_reopen(void)
{
    struct rh_store *s = rh_new("reopen", 8, 1, false);
    uint8_t k[16], buf[64];
    uint32_t got;
    for (uint64_t i = 0; i < 100; i++) {
        put_i(s, i, 1500);
    }
    for (uint64_t i = 0; i < 100; i += 3) {
        put_i(s, i, 700); /* overwritten: 34 keys */
    }
    for (uint64_t i = 1; i < 100; i += 10) {
        key_of(i, k);
        CU_ASSERT_EQUAL(rh_del(s, k, 16), 0); /* deleted: 10 keys */
    }
    key_of(0, k);
    int64_t b = rh_block_of(s, k, 16);
    CU_ASSERT_EQUAL(rh_sync(s), 0);
    rh_close(s);

    s = rh_new("reopen", 8, 1, true);
    struct rh_stats st;
    rh_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.live_records, 90);
    CU_ASSERT_EQUAL(st.tombstones, 10);
    for (uint64_t i = 0; i < 100; i++) {
        if (i % 10 == 1) {
            key_of(i, k);
            CU_ASSERT_EQUAL(rh_get(s, k, 16, buf, sizeof(buf), &got), -KVSSD_ERR_KEY_NOT_FOUND);
        } else {
            assert_reads(s, i, i % 3 == 0 ? 700 : 1500);
        }
    }
    key_of(0, k);
    CU_ASSERT_EQUAL(rh_block_of(s, k, 16), b);
    /* writes continue after the rebuilt state; defragment a block, reopen again */
    put_i(s, 5000, 100);
    /* block 0 holds the first round's keys 0..83: defragmenting it leaves stale copies of
     * the same generation in the freed block, which the next rebuild must not prefer */
    CU_ASSERT_EQUAL(rh_defrag_block(s, 0), 0);
    CU_ASSERT_EQUAL(rh_sync(s), 0);
    rh_close(s);
    s = rh_new("reopen", 8, 1, true);
    rh_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.live_records, 91);
    CU_ASSERT_EQUAL(st.tombstones, 10);
    assert_reads(s, 5000, 100);
    for (uint64_t i = 0; i < 100; i++) {
        if (i % 10 != 1) {
            assert_reads(s, i, i % 3 == 0 ? 700 : 1500);
        }
    }
    rh_close(s);

    /* without keep, the same file is a new, empty store */
    s = rh_new("reopen", 8, 1, false);
    rh_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.live_records, 0);
    CU_ASSERT_EQUAL(st.free_blocks, 8);
    rh_close(s);
    s = rh_new("reopen", 8, 1, true);
    rh_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.live_records, 0); /* the old epoch's blocks are not resurrected */
    rh_close(s);
}

/* A store of 4 blocks keeps 2 for relocation: the third block's worth of live data is refused. */
static void test_rawhash_full(void)
{
    struct rh_store *s = rh_new("full", 4, 50, false);
    int rc = 0;
    uint64_t i = 0;
    while (!rc && i < 1000) {
        uint8_t k[16], v[2000];
        key_of(i, k);
        value_of(i, 2000, v);
        rc = rh_put(s, k, 16, v, 2000);
        i++;
    }
    CU_ASSERT_EQUAL(rc, -KVSSD_ERR_CAPACITY);
    CU_ASSERT_EQUAL(i - 1, 2 * 63); /* two blocks of 63 records */
    for (uint64_t j = 0; j < i - 1; j++) {
        assert_reads(s, j, 2000);
    }
    rh_close(s);
}

/* A workload with every operation but iterate; small enough for a test. */
static void workload(struct kb_config *c)
{
    char err[256];
    kb_config_default(c);
    c->key_count = 2000;
    c->seed = 11;
    c->progress = 0;
    c->run.ops = 6000;
    CU_ASSERT_EQUAL(kb_size_parse("uniform:0-3000", 0, KVSSD_VALUE_MAX, "value size",
                                  &c->value_size, err, sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(
        kb_mix_parse("read=40,update=30,insert=10,delete=10,exist=10", c->run.mix, err, 256), 0);
    snprintf(c->rocksdb.dir, sizeof(c->rocksdb.dir), "%s/rocksdb", dir);
    c->rocksdb.direct_io = false; /* the test directory may be tmpfs */
    snprintf(c->rawhash.dev, sizeof(c->rawhash.dev), "%s/rawhash", dir);
    c->rawhash.size_bytes = 4096 + 64ull * WB;
    c->rawhash.write_block_bytes = WB;
    snprintf(c->nvm_ctrl, sizeof(c->nvm_ctrl), "/nonexistent/ctrl");
}

/* Load + run of @s; @res[0..1]. */
static void run_engine(struct kb_config *c, enum kb_store s, struct kb_result *res)
{
    char err[256];
    struct kb_engine e = {.ops = kb_engine_ops_of(s)};
    struct kb_live live;
    CU_ASSERT_PTR_NOT_NULL_FATAL(e.ops);
    CU_ASSERT_EQUAL_FATAL(e.ops->open(c, &e.st, err, sizeof(err)), 0);
    e.stats = e.ops->stats_dev(e.st);
    CU_ASSERT_PTR_NULL(e.stats); /* no device here */
    CU_ASSERT_EQUAL_FATAL(kb_live_init(&live, c), 0);
    CU_ASSERT_EQUAL(kb_run_phase(c, &e, &c->load, "load", true, &live, &res[0]), 0);
    CU_ASSERT_EQUAL(kb_run_phase(c, &e, &c->run, "run", false, &live, &res[1]), 0);
    kb_live_free(&live);
    e.ops->close(e.st);
}

static struct kb_result results[2][2];
static struct kb_config wcfg;

/* RocksDB in a temporary directory: a put/get/delete round trip through the engine. */
static void test_rocksdb_round_trip(void)
{
    struct kb_config c;
    char err[256];
    void *st;
    uint8_t k[16], v[3000], buf[3000];
    uint32_t got = 0, cmds = 0;
    uint64_t bytes = 0;
    workload(&c);
    const struct kb_engine_ops *ops = kb_engine_ops_of(KB_STORE_ROCKSDB);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ops);
    CU_ASSERT_EQUAL_FATAL(ops->open(&c, &st, err, sizeof(err)), 0);
    key_of(9, k);
    value_of(9, sizeof(v), v);
    CU_ASSERT_EQUAL(ops->put(st, k, 16, v, sizeof(v), &cmds), 0);
    CU_ASSERT_EQUAL(ops->get(st, k, 16, buf, sizeof(buf), &got, &cmds), 0);
    CU_ASSERT_EQUAL(got, sizeof(v));
    CU_ASSERT_EQUAL(memcmp(buf, v, sizeof(v)), 0);
    CU_ASSERT_EQUAL(ops->exist(st, k, 16, &cmds), 0);
    CU_ASSERT_EQUAL(ops->iterate(st, k, 4, 10, &bytes, &cmds), 0);
    CU_ASSERT_EQUAL(bytes, 16); /* the one key with those 4 bytes */
    CU_ASSERT_EQUAL(ops->del(st, k, 16, &cmds), 0);
    CU_ASSERT_EQUAL(ops->get(st, k, 16, buf, sizeof(buf), &got, &cmds), -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(ops->del(st, k, 16, &cmds), 0); /* missing: success, as the KV-SSD's */
    CU_ASSERT_EQUAL(ops->exist(st, k, 16, &cmds), -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(ops->sync(st), 0);
    CU_ASSERT_TRUE(ops->footprint(st) > 0);
    CU_ASSERT_EQUAL(cmds, 0); /* only the kvssd engine counts commands itself */
    ops->close(st);
}

/*
 * The same workload on rawhash and rocksdb: the same operations (op counts,
 * bytes written, live bytes) and the same outcomes (not found, no errors,
 * no mismatches), since keys, sizes and the mix come from the seed alone.
 */
static void test_same_workload_same_ops(void)
{
    workload(&wcfg);
    run_engine(&wcfg, KB_STORE_RAWHASH, results[0]);
    run_engine(&wcfg, KB_STORE_ROCKSDB, results[1]);
    for (int p = 0; p < 2; p++) {
        const struct kb_result *a = &results[0][p], *b = &results[1][p];
        CU_ASSERT_EQUAL(a->ops, p ? 6000 : 2000);
        CU_ASSERT_EQUAL(b->ops, a->ops);
        for (int k = 0; k < KB_OP_COUNT; k++) {
            CU_ASSERT_EQUAL(a->op_count[k], b->op_count[k]);
            CU_ASSERT_EQUAL(a->hist_op[k].count, a->op_count[k]);
        }
        CU_ASSERT_EQUAL(a->errors, 0);
        CU_ASSERT_EQUAL(b->errors, 0);
        CU_ASSERT_EQUAL(a->mismatches, 0);
        CU_ASSERT_EQUAL(b->mismatches, 0);
        CU_ASSERT_EQUAL(a->not_found, b->not_found);
        for (int k = 0; k < KB_OP_COUNT; k++) {
            CU_ASSERT_EQUAL(a->not_found_op[k], b->not_found_op[k]);
        }
        CU_ASSERT_EQUAL(a->not_found, a->not_found_op[KB_OP_READ] + a->not_found_op[KB_OP_DELETE] +
                                          a->not_found_op[KB_OP_EXIST]);
        CU_ASSERT_EQUAL(a->written_bytes, b->written_bytes);
        CU_ASSERT_EQUAL(a->user_bytes, b->user_bytes);
        CU_ASSERT_EQUAL(a->live_user_bytes, b->live_user_bytes);
        CU_ASSERT_STRING_EQUAL(a->engine, "rawhash");
        CU_ASSERT_STRING_EQUAL(b->engine, "rocksdb");
        CU_ASSERT_FALSE(a->have_device);
        CU_ASSERT_TRUE(a->footprint_bytes > 0);
    }
    /* the load wrote every key once: 2000 x 16 B keys + their values */
    CU_ASSERT_EQUAL(results[0][0].op_count[KB_OP_INSERT], 2000);
    CU_ASSERT_EQUAL((uint64_t)results[0][0].live_user_bytes, results[0][0].written_bytes);
    /* reads of deleted keys find none; deletes always succeed (the KV-SSD's Delete without
     * EDNEK) */
    CU_ASSERT_TRUE(results[0][1].not_found_op[KB_OP_READ] > 0);
    CU_ASSERT_EQUAL(results[0][1].not_found_op[KB_OP_DELETE], 0);
}

/* With 3 threads too: each thread's share and stream are fixed, so the op counts agree. */
static void test_same_ops_with_threads(void)
{
    struct kb_config c;
    struct kb_result r[2][2];
    workload(&c);
    c.threads = 3;
    c.run.ops = 6001; /* shares 2001, 2000, 2000 */
    snprintf(c.rocksdb.dir, sizeof(c.rocksdb.dir), "%s/rocksdb3", dir);
    snprintf(c.rawhash.dev, sizeof(c.rawhash.dev), "%s/rawhash3", dir);
    run_engine(&c, KB_STORE_RAWHASH, r[0]);
    run_engine(&c, KB_STORE_ROCKSDB, r[1]);
    CU_ASSERT_EQUAL(r[0][1].ops, 6001);
    CU_ASSERT_EQUAL(r[1][1].ops, 6001);
    for (int k = 0; k < KB_OP_COUNT; k++) {
        CU_ASSERT_EQUAL(r[0][0].op_count[k], r[1][0].op_count[k]);
        CU_ASSERT_EQUAL(r[0][1].op_count[k], r[1][1].op_count[k]);
    }
    CU_ASSERT_EQUAL(r[0][0].op_count[KB_OP_INSERT], 2000);
    CU_ASSERT_EQUAL(r[0][1].errors + r[1][1].errors, 0);
    CU_ASSERT_EQUAL(r[0][1].mismatches + r[1][1].mismatches, 0);
}

/* A small rawhash workload for the runner's newer features: 500 keys, 100-byte values. */
static void small_workload(struct kb_config *c, const char *file)
{
    char err[256];
    workload(c);
    c->key_count = 500;
    CU_ASSERT_EQUAL(
        kb_size_parse("100", 0, KVSSD_VALUE_MAX, "value size", &c->value_size, err, sizeof(err)),
        0);
    snprintf(c->rawhash.dev, sizeof(c->rawhash.dev), "%s/%s", dir, file);
    c->json = true; /* interval lines, if any, to stderr: stdout is TAP */
}

/*
 * rmw (YCSB f): 1000 read-modify-writes of 500 loaded keys are 1000 operations of one type,
 * each reading (verified: no mismatch) and writing 16 + 100 bytes: written 116000 bytes, user
 * bytes 16 + 100 + 100 per operation.
 */
static void test_runner_rmw(void)
{
    struct kb_config c;
    struct kb_result r[2];
    char err[256];
    small_workload(&c, "rawhash-rmw");
    c.run.ops = 1000;
    CU_ASSERT_EQUAL(kb_mix_parse("rmw=1", c.run.mix, err, sizeof(err)), 0);
    run_engine(&c, KB_STORE_RAWHASH, r);
    CU_ASSERT_EQUAL(r[1].ops, 1000);
    CU_ASSERT_EQUAL(r[1].op_count[KB_OP_RMW], 1000);
    CU_ASSERT_EQUAL(r[1].hist_op[KB_OP_RMW].count, 1000);
    CU_ASSERT_EQUAL(r[1].written_bytes, 1000 * 116);
    CU_ASSERT_EQUAL(r[1].user_bytes, 1000 * (16 + 100 + 100));
    CU_ASSERT_EQUAL(r[1].errors, 0);
    CU_ASSERT_EQUAL(r[1].mismatches, 0);
    CU_ASSERT_EQUAL(r[1].not_found, 0);
    CU_ASSERT_EQUAL((uint64_t)r[1].live_user_bytes, 500 * 116);
}

/*
 * readwhilewriting: 2 reader threads issue exactly the 3000 reads; the writer thread's
 * updates come on top (as many as it fits in) and never break a read's verification.
 */
static void test_runner_writer(void)
{
    struct kb_config c;
    struct kb_result r[2];
    char err[256];
    small_workload(&c, "rawhash-writer");
    c.threads = 2;
    c.run.ops = 3000;
    c.run.writer = true;
    CU_ASSERT_EQUAL(kb_mix_parse("read=1", c.run.mix, err, sizeof(err)), 0);
    run_engine(&c, KB_STORE_RAWHASH, r);
    CU_ASSERT_EQUAL(r[1].op_count[KB_OP_READ], 3000);
    CU_ASSERT_EQUAL(r[1].ops, 3000 + r[1].op_count[KB_OP_UPDATE]);
    CU_ASSERT_EQUAL(r[1].written_bytes, r[1].op_count[KB_OP_UPDATE] * 116);
    CU_ASSERT_EQUAL(r[1].errors, 0);
    CU_ASSERT_EQUAL(r[1].mismatches, 0);
    CU_ASSERT_EQUAL(r[1].not_found, 0);
}

/*
 * The window order through the runner: a load of 500 inserts in window order (64-key windows,
 * seed 11) leaves exactly the keys kb_window_at(0..499) names live (448 of windows 0-6, then 52
 * operations of window 7, which wraps from 448 onto 0-11: 494 keys, 6 of 448-499 never
 * written); a run of 500 reads in 100-key windows touches every key once and misses exactly
 * those 6.
 */
static void test_runner_window_order(void)
{
    struct kb_config c;
    struct kb_result r[2];
    char err[256];
    static bool loaded[500];
    struct kb_window w;
    small_workload(&c, "rawhash-window");
    c.load.order = KB_ORDER_WINDOW;
    c.load.window_keys = 64;
    c.run.order = KB_ORDER_WINDOW;
    c.run.window_keys = 100;
    c.run.ops = 500;
    CU_ASSERT_EQUAL(kb_mix_parse("read=1", c.run.mix, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(kb_config_check(&c, err, sizeof(err)), 0);
    memset(loaded, 0, sizeof(loaded));
    kb_window_init(&w, 500, 64, 0, 11);
    uint64_t distinct = 0, missing = 0;
    for (uint64_t i = 0; i < 500; i++) {
        uint64_t k = kb_window_at(&w, i);
        distinct += !loaded[k];
        loaded[k] = true;
    }
    kb_window_init(&w, 500, 100, 0, 11);
    for (uint64_t i = 0; i < 500; i++) {
        missing += !loaded[kb_window_at(&w, i)];
    }
    CU_ASSERT_EQUAL(distinct, 494);
    CU_ASSERT_EQUAL(missing, 6);
    run_engine(&c, KB_STORE_RAWHASH, r);
    CU_ASSERT_EQUAL((uint64_t)r[0].live_user_bytes, distinct * 116);
    CU_ASSERT_EQUAL(r[0].op_count[KB_OP_INSERT], 500);
    CU_ASSERT_EQUAL(r[1].op_count[KB_OP_READ], 500);
    CU_ASSERT_EQUAL(r[1].not_found, missing);
    CU_ASSERT_EQUAL(r[1].mismatches, 0);
}

/*
 * --report-interval on a 0.35 s run: the periods are contiguous from 0, their operations add
 * up to the phase's, and each period's per-op counts add up to its total.
 */
static void test_runner_intervals(void)
{
    struct kb_config c;
    struct kb_result r[2];
    char err[256];
    small_workload(&c, "rawhash-intervals");
    c.report_interval_s = 0.1;
    c.run.ops = 0;
    c.run.duration_s = 0.35;
    CU_ASSERT_EQUAL(kb_mix_parse("read=3,update=1", c.run.mix, err, sizeof(err)), 0);
    run_engine(&c, KB_STORE_RAWHASH, r);
    CU_ASSERT_TRUE_FATAL(r[1].nintervals >= 2);
    uint64_t sum = 0;
    for (unsigned i = 0; i < r[1].nintervals; i++) {
        const struct kb_interval *iv = &r[1].intervals[i];
        CU_ASSERT_DOUBLE_EQUAL(iv->start_s, i ? r[1].intervals[i - 1].end_s : 0.0, 0);
        CU_ASSERT_TRUE(iv->end_s >= iv->start_s);
        CU_ASSERT_EQUAL(iv->op[KB_OP_READ].count + iv->op[KB_OP_UPDATE].count, iv->ops);
        CU_ASSERT_EQUAL(iv->all.count, iv->ops);
        sum += iv->ops;
    }
    CU_ASSERT_EQUAL(sum, r[1].ops);
    CU_ASSERT_EQUAL(r[0].nintervals >= 1, true);
    kb_result_free(&r[0]);
    kb_result_free(&r[1]);
}

/* Capture what @fn prints on stdout. */
static char *captured;
static size_t captured_len;

static char *capture(void (*fn)(void))
{
    FILE *mem = open_memstream(&captured, &captured_len);
    FILE *old = stdout;
    stdout = mem;
    fn();
    fflush(mem);
    stdout = old;
    fclose(mem);
    return captured;
}

static void print_json(void)
{
    kb_report_json_engines(&wcfg, &results[0][0], 2, 2);
}

/* The JSON names each engine with its phases and every metric (null without a device). */
static void test_json_fields_per_engine(void)
{
    char *out = capture(print_json);
    char want[256];
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"engines\":[{\"engine\":\"rawhash\",\"target\":\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "},{\"engine\":\"rocksdb\",\"target\":\""));
    snprintf(want, sizeof(want), "\"op_counts\":{\"insert\":%llu,\"update\":%llu,\"read\":%llu,",
             (unsigned long long)results[0][1].op_count[KB_OP_INSERT],
             (unsigned long long)results[0][1].op_count[KB_OP_UPDATE],
             (unsigned long long)results[0][1].op_count[KB_OP_READ]);
    /* the run phase's op counts appear once per engine */
    size_t first = strstr(out, want) ? (size_t)(strstr(out, want) - out) : 0;
    CU_ASSERT_TRUE(first > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out + first + 1, want));
    static const char *const keys[] = {
        "\"cpu_s\":",
        "\"sync_s\":",
        "\"written_bytes\":",
        "\"live_user_bytes\":",
        "\"footprint_bytes\":",
        "\"latency_by_op_us\":{\"insert\":",
        "\"metrics\":{",
        "\"not_found_by_op\":{\"insert\":0,",
        "\"ops_per_s_wall\":",
        "\"ops_per_s_sim\":null",
        "\"sim_time_s\":null",
        "\"ops_per_s_device_busy\":null",
        "\"cpu_us_per_op\":",
        "\"h2d_bytes_per_op\":null",
        "\"waf\":null",
        "\"space_amp_engine\":",
        "\"space_amp_device\":null",
        "\"device\":null",
        "\"rocksdb\":{\"dir\":",
        "\"compression\":\"none\"",
        "\"rawhash\":{\"device\":",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (!strstr(out, keys[i])) {
            fprintf(stderr, "# missing %s\n", keys[i]);
        }
        CU_ASSERT_PTR_NOT_NULL(strstr(out, keys[i]));
    }
    snprintf(want, sizeof(want), "\"live_user_bytes\":%lld",
             (long long)results[1][1].live_user_bytes);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
    free(out);
}

/* Derived metrics from a made-up pair of statistics logs. */
static void test_metrics(void)
{
    struct kb_result r;
    struct kb_metrics m;
    memset(&r, 0, sizeof(r));
    r.ops = 1000;
    r.elapsed_s = 2;
    r.cpu_s = 0.5;
    r.written_bytes = 1000 * 4112;
    r.live_user_bytes = 4112000;
    r.footprint_bytes = 8224000;
    r.have_device = true;
    r.before.sim_now_ns = 1000000000;
    r.after.sim_now_ns = 1250000000;
    r.after.xfer.sqe_fetch_bytes = 64000;
    r.after.xfer.doorbell_bytes = 8000;
    r.after.xfer.data_h2d_bytes = 4096000;
    r.after.xfer.cqe_post_bytes = 16000;
    r.after.user_bytes_written = 4096000;
    r.after.nand_pages_programmed = 500;     /* 16 KiB pages: 8192000 bytes */
    r.after.waf_milli = 2000;                /* = 8192000 / 4096000 */
    r.after.live_nand_bytes = 6168000;
    r.before.latency_sum_ns[0] = 1000;
    r.after.latency_sum_ns[0] = 100001000; /* stores: 0.1 s */
    r.after.latency_sum_ns[1] = 25000000;  /* retrieves: 0.025 s */
    kb_metrics(&r, &m);
    CU_ASSERT_DOUBLE_EQUAL(m.ops_per_s_wall, 500, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(m.sim_s, 0.25, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(m.ops_per_s_sim, 4000, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(m.device_busy_s, 0.125, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(m.ops_per_s_busy, 8000, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(m.cpu_us_per_op, 500, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(m.h2d_bytes_per_op, 4168, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(m.pcie_bytes_per_op, 4184, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(m.nand_page_bytes, 16384, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.nand_bytes_programmed, 8192000, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.waf, 8192000.0 / 4112000.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(m.device_waf, 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(m.space_amp_engine, 2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(m.space_amp_device, 1.5, 1e-12);
    r.have_device = false;
    r.footprint_bytes = -1;
    kb_metrics(&r, &m);
    CU_ASSERT_TRUE(isnan(m.ops_per_s_sim));
    CU_ASSERT_TRUE(isnan(m.waf));
    CU_ASSERT_TRUE(isnan(m.space_amp_engine));
}

/* Which namespace holds a file system: the /sys/dev/block link targets the kernel gives. */
static void test_namespace_discovery(void)
{
    char out[64];
    CU_ASSERT_EQUAL(kb_nvme_namespace_of("../../devices/pci0000:00/0000:00:04.0/nvme/nvme1/nvme1n1",
                                         out, sizeof(out)),
                    0);
    CU_ASSERT_STRING_EQUAL(out, "/dev/nvme1n1");
    CU_ASSERT_EQUAL(
        kb_nvme_namespace_of("../../devices/pci0000:00/0000:00:05.0/nvme/nvme2/nvme2n1/nvme2n1p3",
                             out, sizeof(out)),
        0);
    CU_ASSERT_STRING_EQUAL(out, "/dev/nvme2n1");
    CU_ASSERT_EQUAL(kb_nvme_namespace_of("../../devices/virtual/block/loop0", out, sizeof(out)),
                    -1);
    CU_ASSERT_EQUAL(kb_nvme_namespace_of("../../devices/virtual/nvme-subsystem/nvme-subsys0/"
                                         "nvme0n1",
                                         out, sizeof(out)),
                    0);
    CU_ASSERT_STRING_EQUAL(out, "/dev/nvme0n1");
    CU_ASSERT_EQUAL(kb_nvme_namespace_of("../../devices/x/nvme0c0n1", out, sizeof(out)), -1);
    CU_ASSERT_EQUAL(kb_nvme_namespace_of("nvme0", out, sizeof(out)), -1);
}

static int setup(void)
{
    return make_dir();
}

static int teardown(void)
{
    return remove_dir();
}

static const struct tap_test tests[] = {
    TAP_TEST(rawhash_round_trip),
    TAP_TEST(rawhash_defrag_keeps_live),
    TAP_TEST(rawhash_automatic_defrag),
    TAP_TEST(rawhash_rebuild_on_reopen),
    TAP_TEST(rawhash_full),
    TAP_TEST(rocksdb_round_trip),
    TAP_TEST(same_workload_same_ops),
    TAP_TEST(same_ops_with_threads),
    TAP_TEST(runner_rmw),
    TAP_TEST(runner_writer),
    TAP_TEST(runner_window_order),
    TAP_TEST(runner_intervals),
    TAP_TEST(json_fields_per_engine),
    TAP_TEST(metrics),
    TAP_TEST(namespace_discovery),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("kvbench-engines", setup, teardown, tests);

    return tap_main(&suite, 1);
}
