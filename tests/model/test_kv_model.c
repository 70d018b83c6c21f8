/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reference model (tests/common/kv_model.h) says no: each test feeds it
 * one firmware answer that is wrong and checks the exact mismatch it
 * reports, after checking that it takes the right answer. Completions are
 * made up where the model judges them alone; the read-backs and the device
 * check run against a real kvftl whose contents were changed behind the
 * model's back.
 */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include <kvftl/kvftl.h>

#include "kv_model.h"
#include "kvftl_small.h"
#include "tap_cunit.h"

static uint8_t exp_buf[KVFTL_VALUE_MAX_BYTES];
static uint8_t buf[KVFTL_VALUE_MAX_BYTES + KV_MODEL_GUARD_BYTES];

/* Value bytes: seed + position. */
static void fill(uint64_t vseed, uint32_t off, uint8_t *dst, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        dst[i] = (uint8_t)(vseed + off + i);
    }
}

/* A completion at the arrival time. */
static struct kvftl_cpl cpl(enum kvftl_status st, uint32_t value_bytes, uint32_t xfer_bytes)
{
    return (struct kvftl_cpl){
        .status = st, .done_ns = 1000, .value_bytes = value_bytes, .xfer_bytes = xfer_bytes};
}

/* The store of an 8-byte value (seed @vseed) under "key-0" answered @st, judged with no device. */
static bool store_key0(struct kv_model *m, uint32_t options, uint64_t vseed, enum kvftl_status st)
{
    struct kvftl_store_req req = {
        .key = "key-0", .key_bytes = 5, .value_bytes = 8, .options = options, .arrival_ns = 1000};
    struct kvftl_cpl c = cpl(st, st == KVFTL_OK ? 8 : 0, 0);
    return kv_model_store(m, NULL, &req, vseed, &c);
}

/* A whole-value read of "key-0" answered @c (bytes in buf). */
static bool judge_read_key0(struct kv_model *m, struct kvftl_cpl c, bool remounted, const char *why)
{
    return kv_model_judge_read(m, kv_model_find(m, "key-0", 5, false), &c, buf, remounted, why);
}

/* ONLY_IF_ABSENT on a present key: OK is wrong, KEY_EXISTS right. */
static void test_store_only_if_absent_on_present_key(void)
{
    struct kv_model m;
    kv_model_init(&m, true, fill, exp_buf);
    CU_ASSERT(store_key0(&m, 0, 1, KVFTL_OK));
    CU_ASSERT(store_key0(&m, KVFTL_STORE_ONLY_IF_ABSENT, 2, KVFTL_KEY_EXISTS));
    CU_ASSERT_FALSE(store_key0(&m, KVFTL_STORE_ONLY_IF_ABSENT, 3, KVFTL_OK));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "store of a key (5 B, first4 0x6b65792d, fp 58e035d9) and "
                           "a 8-byte value, options 0x2, inline 0 (model: present): status OK, "
                           "expected KEY_EXISTS");
    CU_ASSERT_EQUAL(m.present, 1);
    CU_ASSERT_EQUAL(m.live_user_bytes, 5 + 8);
    kv_model_destroy(&m);
}

/* A retrieve whose fourth byte differs from the value stored. */
static void test_retrieve_wrong_byte(void)
{
    struct kv_model m;
    kv_model_init(&m, true, fill, exp_buf);
    CU_ASSERT(store_key0(&m, 0, 0x40, KVFTL_OK));
    struct kvftl_retrieve_req req = {
        .key = "key-0", .key_bytes = 5, .buf = buf, .buf_bytes = 64, .arrival_ns = 1000};
    struct kvftl_cpl c = cpl(KVFTL_OK, 8, 8);
    kv_model_guard(&req, sizeof(buf));
    fill(0x40, 0, buf, 8);
    CU_ASSERT(kv_model_retrieve(&m, &req, sizeof(buf), &c));
    buf[3] ^= 0xff;
    CU_ASSERT_FALSE(kv_model_retrieve(&m, &req, sizeof(buf), &c));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "retrieve at offset 0 into 64 B of a 8-byte value: byte 3 "
                                       "of the window (value offset 3) is 0xbc, expected 0x43");
    kv_model_destroy(&m);
}

/* A retrieve that wrote one byte past the buffer it was given. */
static void test_retrieve_past_buffer(void)
{
    struct kv_model m;
    kv_model_init(&m, true, fill, exp_buf);
    CU_ASSERT(store_key0(&m, 0, 0x40, KVFTL_OK));
    struct kvftl_retrieve_req req = {
        .key = "key-0", .key_bytes = 5, .buf = buf, .buf_bytes = 4, .arrival_ns = 1000};
    struct kvftl_cpl c = cpl(KVFTL_OK, 8, 4);
    kv_model_guard(&req, sizeof(buf));
    fill(0x40, 0, buf, 5);
    CU_ASSERT_FALSE(kv_model_retrieve(&m, &req, sizeof(buf), &c));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "retrieve (status OK) wrote past its 4-byte buffer (byte 4)");
    kv_model_destroy(&m);
}

/* Without PLP, a remount may return a state since the last Flush, never one before it. */
static void test_plp_off_state_before_flush(void)
{
    struct kv_model m;
    kv_model_init(&m, false, fill, exp_buf);
    CU_ASSERT(store_key0(&m, 0, 0x10, KVFTL_OK));
    struct kvftl_cpl c = cpl(KVFTL_OK, 0, 0);
    CU_ASSERT(kv_model_flush(&m, 1000, &c));
    CU_ASSERT(store_key0(&m, 0, 0x20, KVFTL_OK));
    kv_model_remounted(&m);
    /* the key as it was before the flush: absent */
    CU_ASSERT_FALSE(
        judge_read_key0(&m, cpl(KVFTL_KEY_DOES_NOT_EXIST, 0, 0), true, "after power cycle"));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "after power cycle: key (5 B, first4 0x6b65792d, fp "
                           "58e035d9) reads as KEY_DOES_NOT_EXIST, 0 B (xfer 0); model: present, "
                           "8 B (or one of 2 states a remount may return)");
    /* the flushed value is one of them: adopted */
    fill(0x10, 0, buf, 8);
    CU_ASSERT(judge_read_key0(&m, cpl(KVFTL_OK, 8, 8), true, "after power cycle"));
    CU_ASSERT_EQUAL(kv_model_find(&m, "key-0", 5, false)->cur.vseed, 0x10);
    kv_model_destroy(&m);
}

/* On a live device (no remount) a key reads as its current state only. */
static void test_live_read_of_older_state(void)
{
    struct kv_model m;
    kv_model_init(&m, false, fill, exp_buf);
    CU_ASSERT(store_key0(&m, 0, 0x10, KVFTL_OK));
    CU_ASSERT(store_key0(&m, 0, 0x20, KVFTL_OK));
    fill(0x10, 0, buf, 8);
    CU_ASSERT_FALSE(judge_read_key0(&m, cpl(KVFTL_OK, 8, 8), false, "check"));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "check: key (5 B, first4 0x6b65792d, fp "
                                       "58e035d9) reads as OK, 8 B (xfer 8); model: present, 8 B");
    kv_model_destroy(&m);
}

/* Once the cut fired, an Exist that succeeds is wrong. */
static void test_success_after_the_cut_fired(void)
{
    struct kv_model m;
    kv_model_init(&m, true, fill, exp_buf);
    kv_model_cut_armed(&m, 5);
    CU_ASSERT(store_key0(&m, 0, 1, KVFTL_INTERNAL_ERROR));
    CU_ASSERT(m.fired);
    struct kvftl_cpl c = cpl(KVFTL_OK, 0, 0);
    CU_ASSERT_FALSE(kv_model_exist(&m, "key-0", 5, 1000, &c));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "exist after the power cut fired: status OK, expected "
                                       "INTERNAL_ERROR");
    kv_model_destroy(&m);
}

/* An iteration that ends without a key live for all of it. */
static void test_iterator_misses_a_live_key(void)
{
    struct kv_model m;
    kv_model_init(&m, true, fill, exp_buf);
    CU_ASSERT(store_key0(&m, 0, 1, KVFTL_OK));
    struct kvftl_cpl c = cpl(KVFTL_OK, 0, 0);
    CU_ASSERT(kv_model_iter_open(&m, 0x6b000000, 0xff000000, KVFTL_ITER_KEYS, 1000, 3, &c));
    c = cpl(KVFTL_ITERATOR_END, 0, 0);
    kv_model_iter_next_begin(&m, 3);
    CU_ASSERT_FALSE(kv_model_iter_next(&m, 3, 8, 1000, &c));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "iterator (prefix 0x6b000000 mask 0xff000000) ended "
                           "without a key (5 B, first4 0x6b65792d, fp 58e035d9) live since its "
                           "open");
    kv_model_destroy(&m);
}

static struct kvftl *open_small(bool plp)
{
    struct kvftl_config cfg;
    char err[256] = "";
    kvftl_config_small(&cfg, (struct kvftl_small_geometry){.channels = 1,
                                                           .dies_per_channel = 2,
                                                           .blocks_per_die = 8,
                                                           .pages_per_block = 272,
                                                           .page_size_bytes = 4096});
    cfg.gc_high_watermark_blocks = 3;
    cfg.gc_low_watermark_blocks = 2;
    cfg.index_page_bytes = 4096;
    cfg.plp = plp;
    struct kvftl *ftl = kvftl_open(&cfg, err, sizeof(err));
    if (!ftl) {
        printf("# kvftl_open: %s\n", err);
    }
    CU_ASSERT_FATAL(ftl != NULL);
    return ftl;
}

/* Store "key-0" through the device and the model; flush. */
static void store_and_flush(struct kvftl *ftl, struct kv_model *m)
{
    uint8_t val[8];
    fill(0x30, 0, val, sizeof(val));
    struct kvftl_store_req req = {.key = "key-0",
                                  .key_bytes = 5,
                                  .value = val,
                                  .value_bytes = sizeof(val),
                                  .arrival_ns = 1000};
    struct kvftl_cpl c;
    kvftl_store(ftl, &req, &c);
    CU_ASSERT(kv_model_store(m, ftl, &req, 0x30, &c));
    kvftl_flush(ftl, 2000, &c);
    CU_ASSERT(kv_model_flush(m, 2000, &c));
}

/*
 * A durable key lost by a remount (deleted behind the model's back, then a
 * power cycle): both read-backs and the gauge check say so.
 */
static void test_durable_key_lost_by_remount(void)
{
    struct kvftl *ftl = open_small(true);
    struct kv_model m;
    kv_model_init(&m, true, fill, exp_buf);
    store_and_flush(ftl, &m);
    CU_ASSERT(kv_model_read_back_batched(&m, ftl, 3000, "before the loss", false, NULL));
    CU_ASSERT(kv_model_check_device(&m, ftl, "before the loss"));
    struct kvftl_cpl c;
    kvftl_delete(ftl, "key-0", 5, 3000, &c);
    CU_ASSERT_EQUAL(c.status, KVFTL_OK);
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(kvftl_power_cycle(ftl, err, sizeof(err)), 0);
    kv_model_remounted(&m);
    uint64_t reads = 0;
    CU_ASSERT_FALSE(
        kv_model_read_back_batched(&m, ftl, 1000000000, "after power cycle", true, &reads));
    CU_ASSERT_EQUAL(reads, 1);
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "after power cycle: key (5 B, first4 0x6b65792d, fp "
                           "58e035d9) reads as KEY_DOES_NOT_EXIST, 0 B (xfer 0); model: present, "
                           "8 B");
    m.mismatch[0] = '\0';
    CU_ASSERT_FALSE(kv_model_read_back_each(&m, ftl, 1000000000, buf, "after power cycle", true));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "after power cycle: key (5 B, first4 0x6b65792d, fp "
                           "58e035d9) reads as KEY_DOES_NOT_EXIST, 0 B (xfer 0); model: present, "
                           "8 B");
    CU_ASSERT_FALSE(kv_model_check_device(&m, ftl, "after power cycle"));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "after power cycle: stats live_keys 0 live_user_bytes 0, "
                                       "model 1 keys 13 bytes");
    kv_model_destroy(&m);
    kvftl_close(ftl);
}

/* CAPACITY_EXCEEDED for an 8-byte value on an empty device. */
static void test_capacity_refused_with_room(void)
{
    struct kvftl *ftl = open_small(true);
    struct kv_model m;
    kv_model_init(&m, true, fill, exp_buf);
    struct kvftl_store_req req = {
        .key = "key-0", .key_bytes = 5, .value_bytes = 8, .arrival_ns = 1000};
    struct kvftl_cpl c = cpl(KVFTL_CAPACITY_EXCEEDED, 0, 0);
    struct kvftl_stats st;
    kvftl_stats_get(ftl, &st);
    CU_ASSERT_FALSE(kv_model_store(&m, ftl, &req, 1, &c));
    char want[512];
    snprintf(want, sizeof(want),
             "store of 8 B returned CAPACITY_EXCEEDED with room left: live 0 "
             "+ index 0 of %llu B (0 keys; free stripes %llu of %llu, gc_runs 0, index pages "
             "evicted dirty 0)",
             (unsigned long long)st.capacity_bytes, (unsigned long long)st.free_stripes,
             (unsigned long long)st.total_stripes);
    CU_ASSERT_STRING_EQUAL(m.mismatch, want);
    kv_model_destroy(&m);
    kvftl_close(ftl);
}

static const struct tap_test kv_model_tests[] = {
    TAP_TEST(store_only_if_absent_on_present_key),
    TAP_TEST(retrieve_wrong_byte),
    TAP_TEST(retrieve_past_buffer),
    TAP_TEST(plp_off_state_before_flush),
    TAP_TEST(live_read_of_older_state),
    TAP_TEST(success_after_the_cut_fired),
    TAP_TEST(iterator_misses_a_live_key),
    TAP_TEST(durable_key_lost_by_remount),
    TAP_TEST(capacity_refused_with_room),
};

int main(void)
{
    static const struct tap_suite suites[] = {
        TAP_SUITE("kv_model", NULL, NULL, kv_model_tests),
    };
    return tap_main(suites, 1);
}
