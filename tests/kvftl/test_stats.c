/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Statistics: amplification, counters vs gauges, latency percentiles; kvftl_check. */
#include "helpers.h"

/*
 * Ten 4096-byte blobs (8-byte key, 4064-byte value) at 4 KiB placement:
 * each fills and programs one page. WA = 10 x 4096 / (10 x 4072).
 */
static void test_write_amplification(void)
{
    struct kvftl_config c = small_config();
    c.placement_unit_bytes = 4096;
    struct kvftl *f = open_or_die(&c);
    char key[9];
    for (int i = 0; i < 10; i++) {
        snprintf(key, sizeof(key), "key%05d", i);
        CU_ASSERT_EQUAL(put(f, key, 4064, 1, true), 0);
    }
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 10);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, 10);
    CU_ASSERT_EQUAL(st.user_bytes_written, 40720);
    CU_ASSERT_DOUBLE_EQUAL(st.write_amplification, 4096.0 / 4072.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(st.space_amplification, 4096.0 / 4072.0, 1e-12);
    CU_ASSERT_EQUAL(st.host_bytes_in_dma, 40640);
    CU_ASSERT_EQUAL(st.host_bytes_in_inline, 0);
    kvftl_close(f);
}

/* Reset zeroes the counters and histograms, not the live / free gauges. */
static void test_reset_keeps_gauges(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    put(f, "a", 10, 1, false);
    put(f, "b", 20, 1, false);
    get_check(f, "a", 10, 1);
    flush(f);
    kvftl_stats_reset(f);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.stores, 0);
    CU_ASSERT_EQUAL(st.retrieves, 0);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 0);
    CU_ASSERT_EQUAL(st.padding_bytes, 0);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_STORE].count, 0);
    CU_ASSERT_EQUAL(st.live_keys, 2);
    CU_ASSERT_EQUAL(st.live_user_bytes, 32);
    CU_ASSERT_EQUAL(st.live_nand_bytes, 2048);
    CU_ASSERT_EQUAL(st.free_stripes, 9);
    CU_ASSERT_EQUAL(st.total_stripes, 10);
    get_check(f, "b", 20, 1);
    st = stats(f);
    CU_ASSERT_EQUAL(st.retrieves, 1);
    CU_ASSERT_EQUAL(st.host_bytes_out, 20);
    kvftl_close(f);
}

/*
 * Samples 1..1000 ns: p50 falls in bucket [496, 503], p99 in [976, 991],
 * p99.9 in [992, 1007]; each reports the largest sample of its bucket.
 */
static void test_latency_percentiles(void)
{
    static struct latency_hist h;
    memset(&h, 0, sizeof(h));
    for (uint64_t v = 1; v <= 1000; v++) {
        hist_record(&h, v);
    }
    CU_ASSERT_EQUAL(h.count, 1000);
    CU_ASSERT_EQUAL(hist_percentile(&h, 5000), 503);
    CU_ASSERT_EQUAL(hist_percentile(&h, 9900), 991);
    CU_ASSERT_EQUAL(hist_percentile(&h, 9990), 1000);
    CU_ASSERT_EQUAL(h.max_ns, 1000);
    CU_ASSERT_EQUAL(hist_bucket(63), 63);
    CU_ASSERT_EQUAL(hist_bucket(64), 64);
    CU_ASSERT_EQUAL(hist_bucket_upper(hist_bucket(500)), 503);
}

/* Latency is done - arrival; sim_now_ns is the latest completion seen; sum_ns adds them. */
static void test_latency_from_arrival(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    static uint8_t v[4000];
    struct kvftl_store_req r = {.key = "k",
                                .key_bytes = 1,
                                .value = v,
                                .value_bytes = 4000,
                                .inline_bytes = 4000,
                                .arrival_ns = 1000000};
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.done_ns, 1000000 + 2000); /* 4000 B copied at 2000 B/us */
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_STORE].p50_ns, 2000);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_STORE].max_ns, 2000);
    CU_ASSERT_EQUAL(st.sim_now_ns, 1002000);
    /* a second key's Store of 1000 B arriving later: 500 ns; the sum makes the mean 1250 ns */
    r.key = "j";
    r.value_bytes = r.inline_bytes = 1000;
    r.arrival_ns = 2000000;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.done_ns, 2000000 + 500);
    st = stats(f);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_STORE].count, 2);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_STORE].sum_ns, 2500);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_RETRIEVE].sum_ns, 0);
    kvftl_stats_reset(f);
    CU_ASSERT_EQUAL(stats(f).latency[KVFTL_OP_STORE].sum_ns, 0);
    kvftl_close(f);
}

/* kvftl_check finds a blob whose bytes changed on flash and says where. */
static void test_check_detects_corruption(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    put(f, "first", 100, 1, false);
    put(f, "second", 100, 2, false);
    flush(f);
    assert_consistent(f);
    nand_page_ptr(&f->nand, 0)[1024 + 24 + 6 + 50] ^= 0xff; /* a value byte of "second" */
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "blob at 1024 fails its checksum");
    nand_page_ptr(&f->nand, 0)[1024 + 24 + 6 + 50] ^= 0xff;
    f->space.stripes[0].valid_bytes += 1;
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "stripe 0 accounts 2049 valid bytes; the index references 2048");
    kvftl_close(f);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_write_amplification),      TAP_TEST_FN(test_reset_keeps_gauges),
    TAP_TEST_FN(test_latency_percentiles),      TAP_TEST_FN(test_latency_from_arrival),
    TAP_TEST_FN(test_check_detects_corruption),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("stats", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
