/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parked commands (docs/device.md, Robustness, "Work per main-loop slice"):
 * with may_park, List and Iter Read return from their first call validated
 * and in progress, and walk a bounded part of the index per later call. The
 * results must be byte-identical to the same command run in one call, and a
 * parked command must give back what it holds when cancelled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "fixture.h"
#include "tap_cunit.h"

#define SL_KEYS 3000
#define SL_BUF (64u << 10)

static uint8_t host_a[SL_BUF], host_b[SL_BUF];

/* 3000 keys "key-00000".. on 4 KiB index pages (about 25 of them), every 6th deleted. */
static void sl_open(void)
{
    struct kvftl_config c;
    char key[16];
    uint8_t v[8] = "value!!";

    fx_ftl_config(&c);
    c.index_page_bytes = 4096;
    fx_open(NULL, &c);
    for (int i = 0; i < SL_KEYS; i++) {
        snprintf(key, sizeof(key), "key-%05d", i);
        CU_ASSERT_EQUAL_FATAL(fx_store(key, 9, v, sizeof(v), 0), KVSSD_SC_SUCCESS);
    }
    for (int i = 0; i < SL_KEYS; i += 6) {
        snprintf(key, sizeof(key), "key-%05d", i);
        CU_ASSERT_EQUAL_FATAL(fx_delete(key, 9), KVSSD_SC_SUCCESS);
    }
}

/* One call of @sqe (@park: may park; @cont: the parked state or NULL). */
static struct kvssd_req sl_call(const struct kvssd_sqe *sqe, uint8_t *buf, uint32_t len, bool park,
                                void *cont)
{
    static struct fake_host h; /* a parked command resumes with the same data pointer */
    struct kvssd_req req = {.sqe = sqe, .now_ns = fx.now, .may_park = park, .cont = cont};

    h = fake_host_over(buf, len);
    fake_host_dptr(&req, &h);
    kvssd_kv_execute(fx.ns, &req);
    fx.now += 1000;
    return req;
}

/* Run @sqe as the transport does: again with the same SQE and state while in progress. */
static struct kvssd_req sl_parked(const struct kvssd_sqe *sqe, uint8_t *buf, uint32_t len,
                                  int *calls)
{
    struct kvssd_req req = {0};

    *calls = 0;
    do {
        req = sl_call(sqe, buf, len, true, req.cont);
        (*calls)++;
        CU_ASSERT_FATAL(*calls < 100000);
    } while (req.in_progress);
    return req;
}

/* Run @sqe parked into host_a and in one call into host_b: same status, DW0, bytes. */
static int sl_same_as_one_shot(const struct kvssd_sqe *sqe, uint32_t len)
{
    int calls;

    memset(host_a, 0xa5, sizeof(host_a));
    memset(host_b, 0xa5, sizeof(host_b));
    struct kvssd_req p = sl_parked(sqe, host_a, len, &calls);
    struct kvssd_req o = sl_call(sqe, host_b, len, false, NULL);
    CU_ASSERT_FALSE(o.in_progress);
    CU_ASSERT_EQUAL(p.status, o.status);
    CU_ASSERT_EQUAL(p.dw0, o.dw0);
    CU_ASSERT(memcmp(host_a, host_b, sizeof(host_a)) == 0);
    return calls;
}

/*
 * List from the first key, 64 KiB buffer: 2500 keys, byte-identical to the
 * one-call List, in many calls: the parking call, the walk (index pages of
 * 2048 slots a call, at least 2 calls), then 512 keys written per call (5).
 */
static void test_list_parked_same_result(void)
{
    sl_open();
    struct kvssd_sqe s = sqe_list(NULL, 0, SL_BUF);
    int calls = sl_same_as_one_shot(&s, SL_BUF);
    CU_ASSERT_EQUAL(host_a[0] | host_a[1] << 8, 2500);
    CU_ASSERT(calls >= 1 + 2 + (2500 + 511) / 512);
    fx_close();
}

/*
 * List after "key-01000" with room for 100 entries (the selection evicts and
 * its arena is compacted many times): exactly key-01001.. skipping deleted
 * ones, byte-identical to the one-call List.
 */
static void test_list_parked_small_buffer(void)
{
    sl_open();
    struct kvssd_sqe s = sqe_list("key-01000", 9, 4 + 100 * 12);
    sl_same_as_one_shot(&s, 4 + 100 * 12);
    CU_ASSERT_EQUAL(host_a[0], 100);
    /* the first key after key-01000 is key-01001; key-01002 is deleted (1002 % 6 == 0) */
    CU_ASSERT(memcmp(host_a + 4 + 2, "key-01001", 9) == 0);
    CU_ASSERT(memcmp(host_a + 16 + 2, "key-01003", 9) == 0);
    fx_close();
}

/*
 * List with a staged 20-byte start key: the key is taken once, at the first
 * call; the parked calls do not ask for it again (a second take would fail
 * with 01C6h).
 */
static void test_list_parked_staged_start(void)
{
    const char *start = "key-02000-and-more!!";
    int calls;

    sl_open();
    CU_ASSERT_EQUAL(fx_stage(start, 20, 7), KVSSD_SC_SUCCESS);
    struct kvssd_sqe s = sqe_list(NULL, 0, SL_BUF);
    sqe_use_staged_key(&s, 7);
    s.cdw[11] = 20;
    memset(host_a, 0, sizeof(host_a));
    struct kvssd_req r = sl_parked(&s, host_a, SL_BUF, &calls);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    /* keys after "key-02000-and-more!!": key-02001 .. key-02999 less the deleted */
    CU_ASSERT_EQUAL(r.dw0, 999 - 166);
    CU_ASSERT(memcmp(host_a + 4 + 2, "key-02001", 9) == 0);
    CU_ASSERT(calls > 2);
    fx_close();
}

/*
 * Iter Read, mask 0, 4 KiB buffer (341 entries of 12 bytes): every read
 * parked gives the same bytes as the one-call read of a second iterator
 * opened on the same keys; 8 reads return 2500 keys in all, the 9th End.
 */
static void test_iter_read_parked_same_result(void)
{
    sl_open();
    struct kvssd_sqe o = sqe_iter_open(0, 0, false);
    struct kvssd_req ra = fx_exec(&o, NULL), rb = fx_exec(&o, NULL);
    CU_ASSERT_EQUAL_FATAL(ra.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(rb.status, KVSSD_SC_SUCCESS);
    uint32_t total = 0;
    for (int i = 0; i < 9; i++) {
        struct kvssd_sqe sa = sqe_iter_read(ra.dw0, 4096), sb = sqe_iter_read(rb.dw0, 4096);
        int calls;

        memset(host_a, 0, 4096);
        memset(host_b, 0, 4096);
        struct kvssd_req pa = sl_parked(&sa, host_a, 4096, &calls);
        struct kvssd_req pb = sl_call(&sb, host_b, 4096, false, NULL);
        CU_ASSERT_EQUAL(pa.status, pb.status);
        CU_ASSERT_EQUAL(pa.dw0, pb.dw0);
        CU_ASSERT(memcmp(host_a, host_b, 4096) == 0);
        CU_ASSERT(calls >= 2);
        total += pa.dw0;
        CU_ASSERT_EQUAL(pa.status, i < 8 ? KVSSD_SC_SUCCESS : KVSSD_SC_ITERATOR_END);
    }
    CU_ASSERT_EQUAL(total, 2500);
    fx_close();
}

/* Iter Read with a prefix that matches nothing: End after a walk of many calls, no data. */
static void test_iter_read_parked_matching_nothing(void)
{
    int calls;

    sl_open();
    struct kvssd_sqe o = sqe_iter_open(0x7a7a7a7a, 0xffffffff, false);
    struct kvssd_req r = fx_exec(&o, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
    struct kvssd_sqe s = sqe_iter_read(r.dw0, 4096);
    memset(host_a, 0x5a, 4096);
    r = sl_parked(&s, host_a, 4096, &calls);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_ITERATOR_END);
    CU_ASSERT_EQUAL(r.dw0, 0);
    CU_ASSERT_EQUAL(host_a[0], 0x5a);     /* nothing written */
    CU_ASSERT(calls > 2);
    fx_close();
}

/* The host closes the iterator while a read on it is parked: the read ends with 01C8h. */
static void test_iter_read_parked_closed(void)
{
    sl_open();
    struct kvssd_sqe o = sqe_iter_open(0x7a7a7a7a, 0xffffffff, false);
    struct kvssd_req r = fx_exec(&o, NULL);
    uint32_t h = r.dw0;
    struct kvssd_sqe s = sqe_iter_read(h, 4096);
    r = sl_call(&s, host_a, 4096, true, NULL);
    CU_ASSERT_TRUE(r.in_progress);
    r = sl_call(&s, host_a, 4096, true, r.cont);
    CU_ASSERT_TRUE(r.in_progress);
    struct kvssd_sqe c = sqe_iter_close(h);
    CU_ASSERT_EQUAL(fx_exec(&c, NULL).status, KVSSD_SC_SUCCESS);
    r = sl_call(&s, host_a, 4096, true, r.cont);
    CU_ASSERT_FALSE(r.in_progress);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_INVALID_ITERATOR);
    fx_close();
}

/*
 * Two Lists parked at once: the second waits (it holds no iterator) until
 * the first is done, then walks; both return the 2500 keys. A third List
 * cancelled in the middle of its walk gives back its iterator and the List
 * slot: then the host can open all 16 iterators and a List completes.
 */
static void test_lists_wait_and_cancel(void)
{
    sl_open();
    struct kvssd_sqe s1 = sqe_list(NULL, 0, SL_BUF), s2 = sqe_list(NULL, 0, SL_BUF);
    struct kvssd_req r1 = sl_call(&s1, host_a, SL_BUF, true, NULL);
    struct kvssd_req r2 = sl_call(&s2, host_b, SL_BUF, true, NULL);
    CU_ASSERT_TRUE(r1.in_progress && r2.in_progress);
    r1 = sl_call(&s1, host_a, SL_BUF, true, r1.cont);     /* the first starts walking */
    CU_ASSERT_TRUE(fx.ns->list_busy);
    int rounds = 0;
    while (r1.in_progress || r2.in_progress) {
        if (r2.in_progress) {
            r2 = sl_call(&s2, host_b, SL_BUF, true, r2.cont);
        }
        if (r1.in_progress) {
            r1 = sl_call(&s1, host_a, SL_BUF, true, r1.cont);
        }
        CU_ASSERT_FATAL(++rounds < 10000);
    }
    CU_ASSERT_EQUAL(r1.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r2.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r1.dw0, 2500);
    CU_ASSERT_EQUAL(r2.dw0, 2500);
    CU_ASSERT(memcmp(host_a, host_b, 4 + 2500 * 12) == 0);
    CU_ASSERT_FALSE(fx.ns->list_busy);

    struct kvssd_req r3 = sl_call(&s1, host_a, SL_BUF, true, NULL);
    r3 = sl_call(&s1, host_a, SL_BUF, true, r3.cont);
    r3 = sl_call(&s1, host_a, SL_BUF, true, r3.cont);
    CU_ASSERT_TRUE(r3.in_progress);
    CU_ASSERT_TRUE(fx.ns->list_busy);
    kvssd_kv_cancel(fx.ns, r3.cont);
    CU_ASSERT_FALSE(fx.ns->list_busy);
    uint32_t handles[16];
    for (int i = 0; i < 16; i++) {
        struct kvssd_sqe o = sqe_iter_open(0, 0, false);
        struct kvssd_req r = fx_exec(&o, NULL);
        CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
        handles[i] = r.dw0;
    }
    for (int i = 0; i < 16; i++) {
        struct kvssd_sqe c = sqe_iter_close(handles[i]);
        CU_ASSERT_EQUAL(fx_exec(&c, NULL).status, KVSSD_SC_SUCCESS);
    }
    int calls;
    r3 = sl_parked(&s1, host_a, SL_BUF, &calls);
    CU_ASSERT_EQUAL(r3.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r3.dw0, 2500);
    fx_close();
}

/*
 * A reset (and Format) while a List is parked: the namespace closes the
 * List's iterator; the List walks again from the start on what is stored
 * then (nothing, after the Format) and returns 0 keys.
 */
static void test_list_parked_across_format(void)
{
    sl_open();
    struct kvssd_sqe s = sqe_list(NULL, 0, SL_BUF);
    struct kvssd_req r = sl_call(&s, host_a, SL_BUF, true, NULL);
    r = sl_call(&s, host_a, SL_BUF, true, r.cont);
    CU_ASSERT_TRUE(r.in_progress);
    struct kvftl_cpl cpl;
    kvssd_ns_reset(fx.ns);
    kvftl_format(fx.ftl, fx.now, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_FALSE(fx.ns->list_busy);
    int calls = 0;
    do {
        r = sl_call(&s, host_a, SL_BUF, true, r.cont);
        CU_ASSERT_FATAL(++calls < 1000);
    } while (r.in_progress);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 0);
    CU_ASSERT_FALSE(fx.ns->list_busy);
    fx_close();
}

static const struct tap_test tests[] = {
    TAP_TEST(list_parked_same_result),
    TAP_TEST(list_parked_small_buffer),
    TAP_TEST(list_parked_staged_start),
    TAP_TEST(iter_read_parked_same_result),
    TAP_TEST(iter_read_parked_matching_nothing),
    TAP_TEST(iter_read_parked_closed),
    TAP_TEST(lists_wait_and_cancel),
    TAP_TEST(list_parked_across_format),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("slices", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
