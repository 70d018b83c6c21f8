/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The expiry scan's shortcut (hw/kvssd/inline.c, idle_floor_ns): the
 * transport runs kvssd_ns_expire() before every batch of commands, one
 * command each at queue depth 1, and it returns at once while no slot in
 * use can have been idle longer than the timeout. These cases prove it
 * frees exactly what the full scan frees, whatever order the clock of the
 * slots' activity came in.
 */
#include <CUnit/CUnit.h>

#include "fixture.h"
#include "tap_cunit.h"

#define TIMEOUT_NS 1000000u

static const uint8_t key_a[4] = {'k', 'e', 'y', 'a'};
static const uint8_t key_b[4] = {'k', 'e', 'y', 'b'};

static void open_with_timeout(void)
{
    struct kvssd_ns_config cfg = {.tag_table_entries = 8, .inline_timeout_ns = TIMEOUT_NS};

    fx_open(&cfg, NULL);
}

/*
 * Stream A opens at t0 + 4 ms, then stream B at t0 (a clock that went
 * back: a test clock, or two queues' commands timed before they ran). At
 * t0 + 1.5 ms B has been idle 1.5 ms and is freed, A (idle -2.5 ms) is
 * kept; at t0 + 5 ms + 1 ns A is freed: one slot at each scan, B's late
 * fragment gets INLINE_EXPIRED (C4h), A's too.
 */
static void test_expire_after_clock_went_back(void)
{
    uint8_t v[100] = {0};
    struct inline_cmds a, b;
    uint64_t t0;

    open_with_timeout();
    encode_inline_stock(key_a, 4, v, 100, 0, 10, false, 0, &a);
    encode_inline_stock(key_b, 4, v, 100, 0, 11, false, 0, &b);
    t0 = fx.now;
    CU_ASSERT_EQUAL(fx_exec_at(&a.sqe[0], NULL, t0 + 4000000).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec_at(&b.sqe[0], NULL, t0).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 2);
    kvssd_ns_expire(fx.ns, t0 + 1500000);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    CU_ASSERT_EQUAL(fx_exec_at(&b.sqe[1], NULL, t0 + 1500000).status, KVSSD_SC_INLINE_EXPIRED);
    kvssd_ns_expire(fx.ns, t0 + 4000000 + TIMEOUT_NS); /* A idle exactly the timeout: kept */
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    kvssd_ns_expire(fx.ns, t0 + 4000000 + TIMEOUT_NS + 1);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(kvssd_tags_stream_bytes(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exec_at(&a.sqe[1], NULL, t0 + 6000000).status, KVSSD_SC_INLINE_EXPIRED);
    inline_cmds_free(&a);
    inline_cmds_free(&b);
}

/*
 * Each scan that runs leaves the next one exact, and a transfer's activity
 * moves its stream's expiry: A opens at t0, B at t0 + 0.3 ms, C at
 * t0 + 0.6 ms, C's first transfer comes at t0 + 0.9 ms. Scans 1 ns after
 * t0 + 1 ms, 1.3 ms, 1.6 ms and 1.9 ms free A, then B, then nothing (C was
 * active at 0.9 ms), then C.
 */
static void test_activity_moves_the_expiry(void)
{
    static const uint8_t key_c[4] = {'k', 'e', 'y', 'c'};
    uint8_t v[100] = {0};
    struct inline_cmds a, b, c;
    uint64_t t0;

    open_with_timeout();
    encode_inline_stock(key_a, 4, v, 100, 0, 12, false, 0, &a);
    encode_inline_stock(key_b, 4, v, 100, 0, 14, false, 0, &b);
    encode_inline_stock(key_c, 4, v, 100, 0, 15, false, 0, &c);
    t0 = fx.now;
    CU_ASSERT_EQUAL(fx_exec_at(&a.sqe[0], NULL, t0).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec_at(&b.sqe[0], NULL, t0 + 300000).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[0], NULL, t0 + 600000).status, KVSSD_SC_SUCCESS);
    kvssd_ns_expire(fx.ns, t0 + 900000);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 3);
    CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[1], NULL, t0 + 900000).status, KVSSD_SC_SUCCESS);
    kvssd_ns_expire(fx.ns, t0 + TIMEOUT_NS + 1);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 2);
    kvssd_ns_expire(fx.ns, t0 + 300000 + TIMEOUT_NS + 1);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    CU_ASSERT_EQUAL(fx_exec_at(&b.sqe[1], NULL, t0 + 300000 + TIMEOUT_NS + 1).status,
                    KVSSD_SC_INLINE_EXPIRED);
    kvssd_ns_expire(fx.ns, t0 + 600000 + TIMEOUT_NS + 1);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    kvssd_ns_expire(fx.ns, t0 + 900000 + TIMEOUT_NS + 1);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    inline_cmds_free(&a);
    inline_cmds_free(&b);
    inline_cmds_free(&c);
}

/*
 * A staged key expires like a stream: staged at t0, a stream opened at
 * t0 + 0.5 ms; the scan at t0 + 1 ms + 1 ns frees the key only, and a
 * Store naming it gets Invalid Key Size (86h: no key staged under the tag).
 */
static void test_staged_key_expires_alone(void)
{
    uint8_t long_key[40];
    uint8_t v[100] = {0};
    struct inline_cmds a;
    struct kvssd_sqe s;
    struct fake_host h;
    uint64_t t0;

    open_with_timeout();
    fill_pattern(long_key, sizeof(long_key), 3);
    t0 = fx.now;
    s = sqe_key_stage(sizeof(long_key), 20);
    h = fake_host_over(long_key, sizeof(long_key));
    CU_ASSERT_EQUAL(fx_exec_at(&s, &h, t0).status, KVSSD_SC_SUCCESS);
    encode_inline_stock(key_a, 4, v, 100, 0, 13, false, 0, &a);
    CU_ASSERT_EQUAL(fx_exec_at(&a.sqe[0], NULL, t0 + 500000).status, KVSSD_SC_SUCCESS);
    kvssd_ns_expire(fx.ns, t0 + TIMEOUT_NS + 1);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    s = sqe_store(key_a, 4, 8, 0);
    s.cdw[11] = kvssd_cdw11(sizeof(long_key), 0);
    sqe_use_staged_key(&s, 20);
    h = fake_host_over(v, 8);
    CU_ASSERT_EQUAL(fx_exec_at(&s, &h, t0 + TIMEOUT_NS + 2).status, KVSSD_SC_INVALID_KEY_SIZE);
    inline_cmds_free(&a);
}

static const struct tap_test tests[] = {
    TAP_TEST(expire_after_clock_went_back),
    TAP_TEST(activity_moves_the_expiry),
    TAP_TEST(staged_key_expires_alone),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE_FIXTURE("expiry", fx_setup, fx_teardown, tests);

    return tap_main(&suite, 1);
}
