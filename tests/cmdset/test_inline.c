/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inline (piggybacked) Store: stock and BandSlim full layouts, hybrid,
 * reassembly across tags and out of order, each misuse status, expiry and
 * the bounded tag table, and the transfer counters.
 */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <glib.h>

#include "fixture.h"
#include "tap_cunit.h"

static const uint8_t key4[4] = {'k', 'e', 'y', '4'};

/*
 * Execute @c in sequence order (head first), expecting every fragment but
 * the last to complete with success, DW1 = 0 and DW0 = bytes so far, and the
 * last with @final_status and DW1 = STORED. @host carries the hybrid part.
 */
static void run_in_order(struct inline_cmds *c, struct fake_host *host, uint16_t final_status)
{
    for (uint32_t i = 0; i < c->n; i++) {
        struct kvssd_req r = fx_exec(&c->sqe[i], i == 0 ? host : NULL);

        if (i + 1 < c->n) {
            CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
            CU_ASSERT_EQUAL(r.dw1, 0);
        } else {
            CU_ASSERT_EQUAL(r.status, final_status);
            CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
        }
    }
}

/* Execute @s, the fragment that completes a Store of @n value bytes: success, DW0 = @n, DW1 = 1. */
static void exec_completes(const struct kvssd_sqe *s, struct fake_host *host, uint32_t n)
{
    struct kvssd_req r = fx_exec(s, host);

    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, n);
    CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
}

/* Stock layout, 4-byte key, 20-byte value: one head command stores it (DW0 = 20, DW1 = 1). */
static void test_stock_head_only_20_bytes(void)
{
    uint8_t v[20];
    struct inline_cmds c;

    fill_pattern(v, 20, 1);
    encode_inline_stock(key4, 4, v, 20, 0, 1, false, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 1);
    exec_completes(&c.sqe[0], NULL, 20);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    fx_assert_stored(key4, 4, v, 20);
    inline_cmds_free(&c);
}

/* 21 bytes need a head (20 bytes, DW0 = 20, DW1 = 0) and one transfer (DW0 = 21, DW1 = 1). */
static void test_stock_21_bytes_one_transfer(void)
{
    uint8_t v[21];
    struct inline_cmds c;
    struct kvssd_req r;

    fill_pattern(v, 21, 2);
    encode_inline_stock(key4, 4, v, 21, 0, 1, false, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    r = fx_exec(&c.sqe[0], NULL);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 20);
    CU_ASSERT_EQUAL(r.dw1, 0);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    CU_ASSERT_EQUAL(fx_exist(key4, 4), KVSSD_SC_KEY_DOES_NOT_EXIST); /* not stored yet */
    exec_completes(&c.sqe[1], NULL, 21);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(kvssd_tags_stream_bytes(fx.ns), 0);
    fx_assert_stored(key4, 4, v, 21);
    inline_cmds_free(&c);
}

/* 100 bytes: DW0 after each fragment is 20, 48, 76, then 100 with DW1 = 1. */
static void test_stock_progress_dw0(void)
{
    static const uint32_t expect[] = {20, 48, 76, 100};
    uint8_t v[100];
    struct inline_cmds c;

    fill_pattern(v, 100, 3);
    encode_inline_stock(key4, 4, v, 100, 0, 2, false, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 4);
    for (uint32_t i = 0; i < 4; i++) {
        struct kvssd_req r = fx_exec(&c.sqe[i], NULL);

        CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(r.dw0, expect[i]);
        CU_ASSERT_EQUAL(r.dw1, i == 3 ? KVSSD_INLINE_DW1_STORED : 0);
    }
    fx_assert_stored(key4, 4, v, 100);
    inline_cmds_free(&c);
}

/*
 * The completion time of a 100-byte stock inline Store (a head and three
 * transfers, all arriving at 1 ms) on a device whose firmware charges
 * @fragment_ns per inline transfer command and nothing else.
 */
static uint64_t inline_store_done_ns(uint64_t fragment_ns)
{
    struct kvftl_config cfg;
    uint8_t v[100];
    struct inline_cmds c;
    struct kvssd_req r = {0};

    fx_close();
    fx_ftl_config(&cfg);
    cfg.fw_inline_fragment_ns = fragment_ns;
    fx_open(NULL, &cfg);
    fill_pattern(v, 100, 4);
    encode_inline_stock(key4, 4, v, 100, 0, 3, false, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 4);
    for (uint32_t i = 0; i < c.n; i++) {
        r = fx_exec_at(&c.sqe[i], NULL, 1000000);
        CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    }
    CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
    fx_assert_stored(key4, 4, v, 100);
    inline_cmds_free(&c);
    return r.done_ns;
}

/*
 * The device tells the firmware how many inline transfer commands carried a
 * Store's value after its head: with fw_inline_fragment_ns = 1000 the Store
 * of a head + 3 transfers completes exactly 3000 ns later than with 0.
 */
static void test_stock_fragments_charged(void)
{
    uint64_t free_ns = inline_store_done_ns(0);
    uint64_t charged_ns = inline_store_done_ns(1000);

    CU_ASSERT_EQUAL(charged_ns - free_ns, 3000);
}

/*
 * Stock layout round trips for 0, 1, 31, 32, 33, 4095, 4096, 4097 and
 * 65536 bytes, in order; each needs 1 + ceil((size - 20) / 28) commands.
 */
static void test_stock_round_trip_sizes(void)
{
    static const uint32_t sizes[] = {0, 1, 31, 32, 33, 4095, 4096, 4097, 65536};
    uint8_t *v = malloc(65536);
    uint64_t commands = 0;

    for (uint32_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        uint32_t n = sizes[i];
        uint32_t expect_cmds = 1 + (n > 20 ? (n - 20 + 27) / 28 : 0);
        struct inline_cmds c;
        uint8_t key[4] = {'s', 'z', 0, (uint8_t)i};

        fill_pattern(v, n, 10 + i);
        encode_inline_stock(key, 4, v, n, 0, 100 + i, false, 0, &c);
        CU_ASSERT_EQUAL(c.n, expect_cmds);
        run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
        commands += expect_cmds;
        fx_assert_stored(key, 4, v, n);
        inline_cmds_free(&c);
    }
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, commands);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 0 + 1 + 31 + 32 + 33 + 4095 + 4096 + 4097 + 65536);
    free(v);
}

/* A 16-byte key leaves 8 head bytes: 8 bytes take 1 command, 9 bytes take 2. */
static void test_stock_key16_head_capacity(void)
{
    uint8_t key[16], v[9];
    struct inline_cmds c;

    fill_pattern(key, 16, 4);
    fill_pattern(v, 9, 5);
    encode_inline_stock(key, 16, v, 8, 0, 3, false, 0, &c);
    CU_ASSERT_EQUAL(c.n, 1);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    fx_assert_stored(key, 16, v, 8);
    inline_cmds_free(&c);
    encode_inline_stock(key, 16, v, 9, 0, 3, false, 0, &c);
    CU_ASSERT_EQUAL(c.n, 2);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    fx_assert_stored(key, 16, v, 9);
    inline_cmds_free(&c);
}

/*
 * A 100-byte staged key: the head names the staged-key tag in CDW2 and
 * carries 20 value bytes from CDW3 on; 50 bytes take a head and 2 transfers.
 */
static void test_stock_long_key(void)
{
    uint8_t key[100], v[50];
    struct inline_cmds c;

    fill_pattern(key, 100, 6);
    fill_pattern(v, 50, 7);
    CU_ASSERT_EQUAL(fx_stage(key, 100, 9), KVSSD_SC_SUCCESS);
    encode_inline_stock(key, 100, v, 50, 0, 9, false, 9, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    fx_assert_stored(key, 100, v, 50);
    inline_cmds_free(&c);
}

/* A long-key head whose staged key is missing: C6h, no stream opened. */
static void test_stock_long_key_not_staged(void)
{
    uint8_t key[40], v[50];
    struct inline_cmds c;

    fill_pattern(key, 40, 6);
    fill_pattern(v, 50, 7);
    encode_inline_stock(key, 40, v, 50, 0, 9, false, 9, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_STAGED_KEY_UNKNOWN);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_INLINE_UNKNOWN_TAG);
    inline_cmds_free(&c);
}

/* Transfers in reverse order: the command delivering the last missing bytes (seq 1) stores. */
static void test_stock_reverse_order(void)
{
    uint8_t v[200];
    struct inline_cmds c;
    struct kvssd_req r;

    fill_pattern(v, 200, 8);
    encode_inline_stock(key4, 4, v, 200, 0, 4, false, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 8); /* 20 + 7 x 28 >= 200 */
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    for (uint32_t s = 7; s >= 2; s--) {
        r = fx_exec(&c.sqe[s], NULL);
        CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(r.dw1, 0);
    }
    exec_completes(&c.sqe[1], NULL, 200);
    fx_assert_stored(key4, 4, v, 200);
    inline_cmds_free(&c);
}

/*
 * Two streams (tags 10 and 11) whose transfers arrive interleaved and out
 * of order, as from two submission queues: both values are stored exactly,
 * each by its own last fragment.
 */
static void test_stock_two_tags_interleaved(void)
{
    static const struct {
        int which;
        uint32_t seq;
    } order[] = {
        {0, 3}, {1, 1}, {0, 1}, {1, 4}, {1, 3}, {0, 2}, {1, 2},
    };
    uint8_t ka[4] = {'A', 0, 0, 1}, kb[4] = {'B', 0, 0, 2};
    uint8_t va[90], vb[120];
    struct inline_cmds c[2];
    uint32_t stored_by[2] = {0, 0};

    fill_pattern(va, 90, 9);
    fill_pattern(vb, 120, 10);
    encode_inline_stock(ka, 4, va, 90, 0, 10, false, 0, &c[0]); /* 20 + 3 x 28 */
    encode_inline_stock(kb, 4, vb, 120, 0, 11, false, 0, &c[1]); /* 20 + 4 x 28 */
    CU_ASSERT_EQUAL_FATAL(c[0].n, 4);
    CU_ASSERT_EQUAL_FATAL(c[1].n, 5);
    CU_ASSERT_EQUAL(fx_exec(&c[1].sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&c[0].sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 2);
    for (uint32_t i = 0; i < G_N_ELEMENTS(order); i++) {
        struct kvssd_req r = fx_exec(&c[order[i].which].sqe[order[i].seq], NULL);

        CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
        if (r.dw1 == KVSSD_INLINE_DW1_STORED) {
            stored_by[order[i].which] = i + 1;
        }
    }
    CU_ASSERT_EQUAL(stored_by[0], 6); /* A's last missing fragment, seq 2, is the 6th */
    CU_ASSERT_EQUAL(stored_by[1], 7); /* B's, seq 2, the 7th */
    fx_assert_stored(ka, 4, va, 90);
    fx_assert_stored(kb, 4, vb, 120);
    inline_cmds_free(&c[0]);
    inline_cmds_free(&c[1]);
}

/*
 * Hybrid 4 KiB + 4: the head's data pointer carries 4096 bytes, its payload
 * the last 4: one command; kvftl sees inline_bytes = 4.
 */
static void test_hybrid_4k_plus_4(void)
{
    uint8_t v[4100];
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, 4096);
    struct kvftl_stats st;

    fill_pattern(v, sizeof(v), 11);
    encode_inline_stock(key4, 4, v, 4100, 0, 12, true, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 1);
    CU_ASSERT_EQUAL(c.dma_bytes, 4096);
    exec_completes(&c.sqe[0], &h, 4100);
    CU_ASSERT_EQUAL(h.from_bytes, 4096);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 4);
    kvftl_stats_get(fx.ftl, &st);
    CU_ASSERT_EQUAL(st.host_bytes_in_inline, 4);
    CU_ASSERT_EQUAL(st.host_bytes_in_dma, 4096);
    fx_assert_stored(key4, 4, v, 4100);
    inline_cmds_free(&c);
}

/* Hybrid 4096 + 60: head (PRP page + 20 bytes) and 2 transfers; DW0 after the head = 4116. */
static void test_hybrid_4k_plus_60(void)
{
    uint8_t v[4156];
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, 4096);
    struct kvssd_req r;

    fill_pattern(v, sizeof(v), 12);
    encode_inline_stock(key4, 4, v, 4156, 0, 13, true, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    r = fx_exec(&c.sqe[0], &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 4116);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[2], NULL).dw1, 0);
    r = fx_exec(&c.sqe[1], NULL);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 60);
    fx_assert_stored(key4, 4, v, 4156);
    inline_cmds_free(&c);
}

/* Hybrid 2 MiB: all of it by data pointer, nothing inline, stored by the head alone. */
static void test_hybrid_2mib(void)
{
    uint8_t *v = malloc(KVFTL_VALUE_MAX_BYTES);
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, KVFTL_VALUE_MAX_BYTES);
    struct kvftl_stats st;

    fill_pattern(v, KVFTL_VALUE_MAX_BYTES, 13);
    encode_inline_stock(key4, 4, v, KVFTL_VALUE_MAX_BYTES, 0, 14, true, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 1);
    exec_completes(&c.sqe[0], &h, KVFTL_VALUE_MAX_BYTES);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 0);
    kvftl_stats_get(fx.ftl, &st);
    CU_ASSERT_EQUAL(st.host_bytes_in_inline, 0);
    CU_ASSERT_EQUAL(st.host_bytes_in_dma, KVFTL_VALUE_MAX_BYTES);
    fx_assert_stored(key4, 4, v, KVFTL_VALUE_MAX_BYTES);
    inline_cmds_free(&c);
    free(v);
}

/* A hybrid head whose data pointer fails: that status, no stream kept, no memory held. */
static void test_hybrid_dptr_failure(void)
{
    uint8_t v[8192 + 100];
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, 8192);

    fill_pattern(v, sizeof(v), 14);
    encode_inline_stock(key4, 4, v, sizeof(v), 0, 15, true, 0, &c);
    h.fail_status = KVSSD_SC_INVALID_PRP_OFFSET;
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], &h).status, KVSSD_SC_INVALID_PRP_OFFSET);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(kvssd_tags_stream_bytes(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_INLINE_UNKNOWN_TAG);
    inline_cmds_free(&c);
}

/* Full layout: a 35-byte value fits the head (CDW11[31:8], CDW4-9, CDW12-13). */
static void test_full_head_35_bytes(void)
{
    uint8_t v[35];
    struct inline_cmds c;

    fill_pattern(v, 35, 15);
    encode_inline_full(key4, 4, v, 35, 0, 20, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 1);
    exec_completes(&c.sqe[0], NULL, 35);
    fx_assert_stored(key4, 4, v, 35);
    inline_cmds_free(&c);
}

/* Full layout: 91 = 35 + 56 bytes take a head and one 56-byte transfer; 92 would take two. */
static void test_full_one_transfer_56(void)
{
    uint8_t v[92];
    struct inline_cmds c;

    fill_pattern(v, 92, 16);
    encode_inline_full(key4, 4, v, 91, 0, 21, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 91);
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, 2);
    fx_assert_stored(key4, 4, v, 91);
    inline_cmds_free(&c);
    encode_inline_full(key4, 4, v, 92, 0, 21, &c);
    CU_ASSERT_EQUAL(c.n, 3);
    inline_cmds_free(&c);
}

/* Full layout round trips of 4096 and 65536 bytes, transfers in reverse order. */
static void test_full_round_trip_reverse(void)
{
    static const uint32_t sizes[] = {4096, 65536};
    uint8_t *v = malloc(65536);

    for (uint32_t i = 0; i < 2; i++) {
        struct inline_cmds c;
        uint8_t key[3] = {'f', 'l', (uint8_t)i};

        fill_pattern(v, sizes[i], 20 + i);
        encode_inline_full(key, 3, v, sizes[i], 0, 200 + i, &c);
        CU_ASSERT_EQUAL(c.n, 1 + (sizes[i] - 35 + 55) / 56);
        CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
        for (uint32_t s = c.n - 1; s >= 1; s--) {
            struct kvssd_req r = fx_exec(&c.sqe[s], NULL);

            CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
            CU_ASSERT_EQUAL(r.dw1, s == 1 ? KVSSD_INLINE_DW1_STORED : 0);
        }
        fx_assert_stored(key, 3, v, sizes[i]);
        inline_cmds_free(&c);
    }
    free(v);
}

/* Full layout, 2 MiB: 1 + 37449 commands, stored exactly. */
static void test_full_2mib(void)
{
    uint8_t *v = malloc(KVFTL_VALUE_MAX_BYTES);
    struct inline_cmds c;

    fill_pattern(v, KVFTL_VALUE_MAX_BYTES, 30);
    encode_inline_full(key4, 4, v, KVFTL_VALUE_MAX_BYTES, 0, 255, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 1 + 37449);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, KVFTL_VALUE_MAX_BYTES);
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, 37450);
    fx_assert_stored(key4, 4, v, KVFTL_VALUE_MAX_BYTES);
    inline_cmds_free(&c);
    free(v);
}

/* A full-layout head with a 17-byte key (only 1..16 fit): INVALID_KEY_SIZE. */
static void test_full_head_long_key(void)
{
    uint8_t key[17] = {1}, v[10] = {2};
    struct inline_cmds c;

    encode_inline_full(key, 16, v, 10, 0, 22, &c);
    c.sqe[0].cdw[10] = kvssd_inline_head_cdw10(10, 0, 17);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_INVALID_KEY_SIZE);
    inline_cmds_free(&c);
}

/* A transfer for a tag with no open stream: INLINE_UNKNOWN_TAG (C0h). */
static void test_unknown_tag(void)
{
    uint8_t v[100] = {0};
    struct inline_cmds c;

    encode_inline_stock(key4, 4, v, 100, 0, 33, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_INLINE_UNKNOWN_TAG);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 0);
    inline_cmds_free(&c);
}

/* The same sequence number twice: INLINE_BAD_SEQUENCE (C1h); the stream still completes. */
static void test_duplicate_sequence(void)
{
    uint8_t v[100];
    struct inline_cmds c;

    fill_pattern(v, 100, 31);
    encode_inline_stock(key4, 4, v, 100, 0, 34, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[2], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[2], NULL).status, KVSSD_SC_INLINE_BAD_SEQUENCE);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 20 + 28);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[3], NULL).dw1, KVSSD_INLINE_DW1_STORED);
    fx_assert_stored(key4, 4, v, 100);
    inline_cmds_free(&c);
}

/* Sequence number 0 (they start at 1): INLINE_BAD_SEQUENCE (C1h). */
static void test_sequence_zero(void)
{
    uint8_t v[100] = {0};
    struct inline_cmds c;
    struct kvssd_sqe s;

    encode_inline_stock(key4, 4, v, 100, 0, 35, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    s = c.sqe[1];
    s.cdw[10] = kvssd_inline_tag_seq(35, 0);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INLINE_BAD_SEQUENCE);
    inline_cmds_free(&c);
}

/* A sequence past the last one the declared 100 bytes need (seq 4 of 3): INLINE_OVERFLOW (C2h). */
static void test_more_bytes_than_declared(void)
{
    uint8_t v[100] = {0};
    struct inline_cmds c;
    struct kvssd_sqe s;

    encode_inline_stock(key4, 4, v, 100, 0, 36, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    s = c.sqe[3];
    s.cdw[10] = kvssd_inline_tag_seq(36, 4);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INLINE_OVERFLOW);
    s.cdw[10] = kvssd_inline_tag_seq(36, KVSSD_INLINE_SEQ_MAX);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INLINE_OVERFLOW);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 20);
    inline_cmds_free(&c);
}

/* A head for a tag whose stream is open: INLINE_TAG_IN_USE (C3h); the open stream is intact. */
static void test_tag_in_use(void)
{
    uint8_t v[50], w[50];
    uint8_t other[4] = {'o', 't', 'h', 'r'};
    struct inline_cmds c, d;

    fill_pattern(v, 50, 32);
    fill_pattern(w, 50, 33);
    encode_inline_stock(key4, 4, v, 50, 0, 37, false, 0, &c);
    encode_inline_stock(other, 4, w, 50, 0, 37, false, 0, &d);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&d.sqe[0], NULL).status, KVSSD_SC_INLINE_TAG_IN_USE);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[2], NULL).dw1, KVSSD_INLINE_DW1_STORED);
    fx_assert_stored(key4, 4, v, 50);
    CU_ASSERT_EQUAL(fx_exist(other, 4), KVSSD_SC_KEY_DOES_NOT_EXIST);
    inline_cmds_free(&c);
    inline_cmds_free(&d);
}

/*
 * kvssd_ns_expire() frees a stream idle longer than inline_timeout_ns: its
 * memory (value + sequence bitmap) is released, a late fragment gets
 * INLINE_EXPIRED (C4h), and the tag can open a new stream.
 */
static void test_expire_frees_stream(void)
{
    struct kvssd_ns_config cfg = {.tag_table_entries = 4, .inline_timeout_ns = 1000000};
    uint8_t v[10000];
    struct inline_cmds c;
    uint64_t t0;

    fx_open(&cfg, NULL);
    fill_pattern(v, sizeof(v), 34);
    encode_inline_stock(key4, 4, v, 10000, 0, 38, false, 0, &c);
    t0 = fx.now;
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    /* 10000 value bytes + bitmap of sequences 0..357: 45 bytes. */
    CU_ASSERT_EQUAL(kvssd_tags_stream_bytes(fx.ns), 10000 + 45);
    kvssd_ns_expire(fx.ns, t0 + 1000000); /* idle exactly the timeout: kept */
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    kvssd_ns_expire(fx.ns, t0 + 1000001);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(kvssd_tags_stream_bytes(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[1], NULL, t0 + 2000000).status, KVSSD_SC_INLINE_EXPIRED);
    /* A new head for the tag opens a fresh stream, which completes. */
    fx.now = t0 + 3000000;
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    fx_assert_stored(key4, 4, v, 10000);
    inline_cmds_free(&c);
}

/* Without an expire call, a fragment arriving after the timeout finds its stream expired: C4h. */
static void test_expire_on_arrival(void)
{
    struct kvssd_ns_config cfg = {.tag_table_entries = 4, .inline_timeout_ns = 1000000};
    uint8_t v[100] = {0};
    struct inline_cmds c;
    uint64_t t0;

    fx_open(&cfg, NULL);
    encode_inline_stock(key4, 4, v, 100, 0, 39, false, 0, &c);
    t0 = fx.now;
    CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[0], NULL, t0).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[1], NULL, t0 + 900000).status, KVSSD_SC_SUCCESS);
    /* Activity restarts the clock: 1.8 ms after the head but 0.9 ms after seq 1. */
    CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[2], NULL, t0 + 1800000).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[3], NULL, t0 + 2900000).status, KVSSD_SC_INLINE_EXPIRED);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(kvssd_tags_stream_bytes(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[3], NULL, t0 + 3000000).status, KVSSD_SC_INLINE_EXPIRED);
    inline_cmds_free(&c);
}

/*
 * The expired-tag ring remembers the last 64 expiries: of 70 expired
 * streams, the first 6 tags are forgotten (C0h), the other 64 give C4h.
 */
static void test_expired_ring_bounded(void)
{
    struct kvssd_ns_config cfg = {.tag_table_entries = 128, .inline_timeout_ns = 1000};
    uint8_t v[50] = {0};
    struct inline_cmds c;

    fx_open(&cfg, NULL);
    for (uint32_t t = 0; t < 70; t++) {
        encode_inline_stock(key4, 4, v, 50, 0, 1000 + t, false, 0, &c);
        CU_ASSERT_EQUAL(fx_exec_at(&c.sqe[0], NULL, 1000000 + t).status, KVSSD_SC_SUCCESS);
        inline_cmds_free(&c);
        /* Expire one at a time so that the ring order is the tag order. */
        kvssd_ns_expire(fx.ns, 1000000 + t + 1001);
    }
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    for (uint32_t t = 0; t < 70; t++) {
        struct kvssd_sqe s = sqe_new(KVSSD_OPC_INLINE_XFER);

        s.cdw[10] = kvssd_inline_tag_seq(1000 + t, 1);
        CU_ASSERT_EQUAL(fx_exec_at(&s, NULL, 5000000).status,
                        t < 6 ? KVSSD_SC_INLINE_UNKNOWN_TAG : KVSSD_SC_INLINE_EXPIRED);
    }
}

/*
 * A table of 2 entries with 2 open streams: a third multi-command head gets
 * TAG_TABLE_FULL (C5h); a head that stores at once still succeeds.
 */
static void test_table_full(void)
{
    struct kvssd_ns_config cfg = {.tag_table_entries = 2, .inline_timeout_ns = 1000000000};
    uint8_t v[100] = {0};
    struct inline_cmds c;

    fx_open(&cfg, NULL);
    for (uint32_t t = 0; t < 3; t++) {
        uint8_t k[4] = {'t', 'f', 0, (uint8_t)t};

        encode_inline_stock(k, 4, v, 100, 0, 40 + t, false, 0, &c);
        CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status,
                        t < 2 ? KVSSD_SC_SUCCESS : KVSSD_SC_TAG_TABLE_FULL);
        inline_cmds_free(&c);
    }
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 2);
    encode_inline_stock(key4, 4, v, 20, 0, 43, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).dw1, KVSSD_INLINE_DW1_STORED);
    inline_cmds_free(&c);
}

/* Staged keys share the table: 2 staged keys fill a 2-entry table, a Key Stage or head gets C5h. */
static void test_table_shared_with_staged_keys(void)
{
    struct kvssd_ns_config cfg = {.tag_table_entries = 2, .inline_timeout_ns = 1000000000};
    uint8_t key[20] = {1}, v[100] = {0};
    struct inline_cmds c;

    fx_open(&cfg, NULL);
    CU_ASSERT_EQUAL(fx_stage(key, 20, 1), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_stage(key, 20, 2), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_stage(key, 20, 3), KVSSD_SC_TAG_TABLE_FULL);
    encode_inline_stock(key4, 4, v, 100, 0, 50, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_TAG_TABLE_FULL);
    inline_cmds_free(&c);
}

/* A full table whose streams went idle is reusable: the next head expires them and succeeds. */
static void test_table_reusable_after_expiry(void)
{
    struct kvssd_ns_config cfg = {.tag_table_entries = 2, .inline_timeout_ns = 1000000};
    uint8_t v[100];
    struct inline_cmds c;

    fx_open(&cfg, NULL);
    fill_pattern(v, 100, 35);
    for (uint32_t t = 0; t < 2; t++) {
        encode_inline_stock(key4, 4, v, 100, 0, 60 + t, false, 0, &c);
        CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
        inline_cmds_free(&c);
    }
    encode_inline_stock(key4, 4, v, 100, 0, 62, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_TAG_TABLE_FULL);
    fx.now += 2000000;
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    fx_assert_stored(key4, 4, v, 100);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    inline_cmds_free(&c);
}

/* ---- Full tail (CDW11[17]): stock head, full-layout transfers ------------ */

/*
 * Hybrid 4 KiB + 100 with the full-tail bit: the head carries 4096 bytes by
 * data pointer and 20 tail bytes; two 8Dh transfers carry 56 and 24 (DW0
 * 4116, 4172, 4196); inline_commands 3, inline_bytes 100; kvftl sees 100
 * inline bytes and 4096 by DMA; the value comes back byte-exact.
 */
static void test_full_tail_hybrid_4k_plus_100(void)
{
    static const uint32_t expect_dw0[] = {4116, 4172, 4196};
    uint8_t v[4196];
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, 4096);
    struct kvftl_stats st;

    fill_pattern(v, sizeof(v), 60);
    encode_inline_full_tail(key4, 4, v, 4196, 0, 200, true, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    CU_ASSERT_EQUAL(c.sqe[0].cdw[0] & 0xff, KVSSD_OPC_INLINE_HEAD);
    CU_ASSERT_EQUAL(c.sqe[1].cdw[0] & 0xff, KVSSD_OPC_INLINE_XFER_FULL);
    for (uint32_t i = 0; i < 3; i++) {
        struct kvssd_req r = fx_exec(&c.sqe[i], i == 0 ? &h : NULL);

        CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(r.dw0, expect_dw0[i]);
        CU_ASSERT_EQUAL(r.dw1, i == 2 ? KVSSD_INLINE_DW1_STORED : 0);
    }
    CU_ASSERT_EQUAL(h.from_bytes, 4096);
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, 3);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 100);
    CU_ASSERT_EQUAL(fx.xfer.commands, 3);
    kvftl_stats_get(fx.ftl, &st);
    CU_ASSERT_EQUAL(st.host_bytes_in_inline, 100);
    CU_ASSERT_EQUAL(st.host_bytes_in_dma, 4096);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    fx_assert_stored(key4, 4, v, 4196);
    inline_cmds_free(&c);
}

/*
 * Hybrid 4 KiB + t with the full-tail bit, t = 1, 20, 21, 56, 57, 76, 77,
 * 100, 2048, 4095: 1 + ceil((t - 20) / 56) commands (1, 1, 2, 2, 2, 2, 3,
 * 3, 38, 74), transfers executed in reverse order, each value byte-exact.
 */
static void test_full_tail_hybrid_round_trips(void)
{
    static const uint32_t tails[] = {1, 20, 21, 56, 57, 76, 77, 100, 2048, 4095};
    static const uint32_t expect_cmds[] = {1, 1, 2, 2, 2, 2, 3, 3, 38, 74};
    uint8_t *v = malloc(8191);
    uint64_t commands = 0, bytes = 0;

    for (uint32_t i = 0; i < G_N_ELEMENTS(tails); i++) {
        uint32_t n = 4096 + tails[i];
        uint8_t key[4] = {'f', 't', 0, (uint8_t)i};
        struct fake_host h = fake_host_over(v, 4096);
        struct inline_cmds c;

        fill_pattern(v, n, 61 + i);
        encode_inline_full_tail(key, 4, v, n, 0, 210 + i, true, 0, &c);
        CU_ASSERT_EQUAL(c.n, expect_cmds[i]);
        CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], &h).status, KVSSD_SC_SUCCESS);
        for (uint32_t s = c.n - 1; s >= 1; s--) {
            struct kvssd_req r = fx_exec(&c.sqe[s], NULL);

            CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
            CU_ASSERT_EQUAL(r.dw1, s == 1 ? KVSSD_INLINE_DW1_STORED : 0);
        }
        commands += c.n;
        bytes += tails[i];
        fx_assert_stored(key, 4, v, n);
        inline_cmds_free(&c);
    }
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, commands);
    CU_ASSERT_EQUAL(commands, 128);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, bytes);
    free(v);
}

/*
 * A stock 85h transfer into a full-tail stream is a transfer of the other
 * layout: 01C0h, nothing consumed (inline_bytes stays 20, the stream stays
 * open and still completes with its 8Dh transfer).
 */
static void test_full_tail_rejects_stock_xfer(void)
{
    uint8_t v[4096 + 50];
    struct inline_cmds c, stock;
    struct fake_host h = fake_host_over(v, 4096);

    fill_pattern(v, sizeof(v), 72);
    encode_inline_full_tail(key4, 4, v, sizeof(v), 0, 220, true, 0, &c);
    encode_inline_stock(key4, 4, v, sizeof(v), 0, 220, true, 0, &stock);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    CU_ASSERT_EQUAL_FATAL(stock.n, 3);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], &h).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&stock.sqe[1], NULL).status, KVSSD_SC_INLINE_UNKNOWN_TAG);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 20);
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, 2);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    exec_completes(&c.sqe[1], NULL, 4146);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 50);
    fx_assert_stored(key4, 4, v, sizeof(v));
    inline_cmds_free(&c);
    inline_cmds_free(&stock);
}

/*
 * Full-tail head with tag 256 (above the full layout's 0..255): 0002h,
 * nothing consumed: the data pointer is not read, no stream is opened,
 * a staged long key stays staged, no inline bytes are counted.
 */
static void test_full_tail_tag_above_255(void)
{
    uint8_t v[4096 + 30], key[20];
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, 4096);

    fill_pattern(v, sizeof(v), 73);
    encode_inline_full_tail(key4, 4, v, sizeof(v), 0, 256, true, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], &h).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(h.from_calls, 0);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 0);
    inline_cmds_free(&c);

    fill_pattern(key, sizeof(key), 74);
    CU_ASSERT_EQUAL(fx_stage(key, 20, 9), KVSSD_SC_SUCCESS);
    encode_inline_full_tail(key, 20, v, sizeof(v), 0, 4095, true, 9, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], &h).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1); /* the key is still staged */
    CU_ASSERT_EQUAL(fx_exist(key, 20), KVSSD_SC_KEY_DOES_NOT_EXIST);
    inline_cmds_free(&c);
}

/*
 * Full tail with a staged 20-byte key, hybrid 4 KiB + 100: Key Stage, head
 * (20 tail bytes from CDW3, CDW12-15) and 2 transfers (56 + 24); stored
 * byte-exact under the long key.
 */
static void test_full_tail_long_key(void)
{
    uint8_t v[4196], key[20];
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, 4096);

    fill_pattern(v, sizeof(v), 75);
    fill_pattern(key, sizeof(key), 76);
    CU_ASSERT_EQUAL(fx_stage(key, 20, 10), KVSSD_SC_SUCCESS);
    encode_inline_full_tail(key, 20, v, sizeof(v), 0, 230, true, 10, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    run_in_order(&c, &h, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 100);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    fx_assert_stored(key, 20, v, sizeof(v));
    inline_cmds_free(&c);
}

/*
 * Without the hybrid bit the full-tail bit makes an inline stream of a
 * stock head and 8Dh transfers: 100 bytes = head (20) + 2 transfers (56 + 24).
 */
static void test_full_tail_without_hybrid(void)
{
    uint8_t v[100];
    struct inline_cmds c;

    fill_pattern(v, sizeof(v), 77);
    encode_inline_full_tail(key4, 4, v, sizeof(v), 0, 240, false, 0, &c);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, 3);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 100);
    fx_assert_stored(key4, 4, v, sizeof(v));
    inline_cmds_free(&c);
}

/*
 * Sequence rules as for any stream: 8Dh seq 0 is 01C1h, a repeated seq is
 * 01C1h, a seq past the two the tail needs is 01C2h; none consumes bytes.
 */
static void test_full_tail_sequence_checks(void)
{
    uint8_t v[4196];
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, 4096);
    struct kvssd_sqe s;

    fill_pattern(v, sizeof(v), 78);
    encode_inline_full_tail(key4, 4, v, sizeof(v), 0, 250, true, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], &h).status, KVSSD_SC_SUCCESS);
    s = c.sqe[1];
    s.cdw[1] = kvssd_inline_tag_seq(250, 0);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INLINE_BAD_SEQUENCE);
    s.cdw[1] = kvssd_inline_tag_seq(250, 3);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INLINE_OVERFLOW);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_INLINE_BAD_SEQUENCE);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 20 + 56);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[2], NULL).dw1, KVSSD_INLINE_DW1_STORED);
    fx_assert_stored(key4, 4, v, sizeof(v));
    inline_cmds_free(&c);
}

/* Head field errors: value > 2 MiB (85h), key length 0 (86h), both options, reserved bits. */
static void test_head_field_errors(void)
{
    uint8_t v[10] = {0};
    struct inline_cmds c;
    struct kvssd_sqe s;

    encode_inline_stock(key4, 4, v, 10, 0, 70, false, 0, &c);
    s = c.sqe[0];
    s.cdw[10] = kvssd_inline_head_cdw10(KVFTL_VALUE_MAX_BYTES + 1, 0, 4);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_VALUE_SIZE);
    s.cdw[10] = kvssd_inline_head_cdw10(10, 0, 0);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_KEY_SIZE);
    s.cdw[10] = kvssd_inline_head_cdw10(10, 3, 4);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_FIELD);
    s = c.sqe[0];
    s.cdw[11] |= 1u << 20;
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exist(key4, 4), KVSSD_SC_KEY_DOES_NOT_EXIST);
    inline_cmds_free(&c);
}

/*
 * A head with two faults gets the status of the first one in this order:
 * a reserved field, a full-tail tag above 255 or the options
 * (INVALID_FIELD), the key length (INVALID_KEY_SIZE; a full-layout head
 * names at most 16 bytes), the value size (INVALID_VALUE_SIZE), the tag's
 * open stream (INLINE_TAG_IN_USE), then the staged key. No stream is
 * opened but the one on tag 5, and no inline byte taken but its 20.
 */
static void test_head_fault_order(void)
{
    const uint32_t too_large = KVFTL_VALUE_MAX_BYTES + 1;
    uint8_t key[40] = {3}, v[100] = {0};
    struct inline_cmds open, c, full, tail;
    struct kvssd_sqe s;

    encode_inline_stock(key4, 4, v, 100, 0, 5, false, 0, &open);
    CU_ASSERT_EQUAL(fx_exec(&open.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    encode_inline_stock(key4, 4, v, 10, 0, 6, false, 0, &c);
    s = c.sqe[0];
    s.cdw[11] |= 1u << 20;
    s.cdw[10] = kvssd_inline_head_cdw10(10, 3, 0);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_FIELD);
    s = c.sqe[0];
    s.cdw[10] = kvssd_inline_head_cdw10(too_large, 3, 0);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_FIELD);
    s.cdw[10] = kvssd_inline_head_cdw10(too_large, 0, 0);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_KEY_SIZE);
    s.cdw[10] = kvssd_inline_head_cdw10(too_large, 0, 4);
    s.cdw[11] = 5; /* the open stream's tag */
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_VALUE_SIZE);
    /* a 40-byte key, not staged, on the open stream's tag */
    inline_cmds_free(&c);
    encode_inline_stock(key, 40, v, 10, 0, 5, false, 9, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_INLINE_TAG_IN_USE);
    c.sqe[0].cdw[2] |= 1u << 12;
    c.sqe[0].cdw[10] = kvssd_inline_head_cdw10(10, 3, 40);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_INVALID_FIELD);
    /* full tail on tag 256 with no key */
    encode_inline_full_tail(key4, 4, v, 10, 0, 256, false, 0, &tail);
    tail.sqe[0].cdw[10] = kvssd_inline_head_cdw10(10, 0, 0);
    CU_ASSERT_EQUAL(fx_exec(&tail.sqe[0], NULL).status, KVSSD_SC_INVALID_FIELD);
    /* full layout: a 17-byte key before the value size, the options before the key */
    encode_inline_full(key4, 4, v, 10, 0, 7, &full);
    full.sqe[0].cdw[10] = kvssd_inline_head_cdw10(too_large, 0, 17);
    CU_ASSERT_EQUAL(fx_exec(&full.sqe[0], NULL).status, KVSSD_SC_INVALID_KEY_SIZE);
    full.sqe[0].cdw[10] = kvssd_inline_head_cdw10(10, 3, 17);
    CU_ASSERT_EQUAL(fx_exec(&full.sqe[0], NULL).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 20);
    inline_cmds_free(&open);
    inline_cmds_free(&c);
    inline_cmds_free(&full);
    inline_cmds_free(&tail);
}

/* A long-key stock head with CDW2[31:12] set (reserved beside the staged tag): INVALID_FIELD. */
static void test_head_long_key_reserved(void)
{
    uint8_t key[30] = {1}, v[10] = {0};
    struct inline_cmds c;

    CU_ASSERT_EQUAL(fx_stage(key, 30, 5), KVSSD_SC_SUCCESS);
    encode_inline_stock(key, 30, v, 10, 0, 71, false, 5, &c);
    c.sqe[0].cdw[2] |= 1u << 12;
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1); /* the key is still staged */
    inline_cmds_free(&c);
}

/*
 * Only-if-absent on an existing key: the last fragment completes with
 * KEY_EXISTS (89h) and DW1 = 1, the old value stays, the stream is freed.
 */
static void test_store_status_on_last_fragment(void)
{
    uint8_t v[60];
    struct inline_cmds c;

    fill_pattern(v, 60, 36);
    CU_ASSERT_EQUAL(fx_store(key4, 4, "old", 3, 0), KVSSD_SC_SUCCESS);
    encode_inline_stock(key4, 4, v, 60, KVSSD_STORE_OPT_ONLY_IF_ABSENT, 72, false, 0, &c);
    run_in_order(&c, NULL, KVSSD_SC_KEY_EXISTS);
    fx_assert_stored(key4, 4, (const uint8_t *)"old", 3);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    inline_cmds_free(&c);
}

/*
 * Counters: a 100-byte stock store (4 commands), a 4 KiB + 4 hybrid (1) and
 * a 40-byte long-key stock store (Key Stage + 2): inline_commands = 7,
 * inline_bytes = 144, key_stage_commands = 1, commands = 8.
 */
static void test_counters_exact(void)
{
    uint8_t v[4100], key[40];
    struct inline_cmds c;
    struct fake_host h = fake_host_over(v, 4096);

    fill_pattern(v, sizeof(v), 37);
    fill_pattern(key, sizeof(key), 38);
    encode_inline_stock(key4, 4, v, 100, 0, 80, false, 0, &c);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    inline_cmds_free(&c);
    encode_inline_stock(key4, 4, v, 4100, 0, 81, true, 0, &c);
    run_in_order(&c, &h, KVSSD_SC_SUCCESS);
    inline_cmds_free(&c);
    CU_ASSERT_EQUAL(fx_stage(key, 40, 3), KVSSD_SC_SUCCESS);
    encode_inline_stock(key, 40, v, 40, 0, 82, false, 3, &c);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    inline_cmds_free(&c);
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, 7);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 100 + 4 + 40);
    CU_ASSERT_EQUAL(fx.xfer.key_stage_commands, 1);
    CU_ASSERT_EQUAL(fx.xfer.commands, 8);
}

/* A full-layout transfer for a stock-layout stream (or vice versa): C0h, no bytes taken. */
static void test_layout_mismatch(void)
{
    uint8_t v[100] = {0};
    struct inline_cmds c;
    struct kvssd_sqe s = sqe_new(KVSSD_OPC_INLINE_XFER_FULL);

    encode_inline_stock(key4, 4, v, 100, 0, 90, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    s.cdw[1] = kvssd_inline_tag_seq(90, 1);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INLINE_UNKNOWN_TAG);
    CU_ASSERT_EQUAL(fx.xfer.inline_bytes, 20);
    inline_cmds_free(&c);
}

/* A fragment replayed after its stream completed: C0h (the stream is gone). */
static void test_fragment_after_completion(void)
{
    uint8_t v[30] = {0};
    struct inline_cmds c;

    encode_inline_stock(key4, 4, v, 30, 0, 91, false, 0, &c);
    run_in_order(&c, NULL, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_INLINE_UNKNOWN_TAG);
    inline_cmds_free(&c);
}

/* Controller reset drops open streams and frees their memory; their fragments then get C0h. */
static void test_reset_drops_streams(void)
{
    uint8_t v[5000] = {0};
    struct inline_cmds c;

    encode_inline_stock(key4, 4, v, 5000, 0, 92, false, 0, &c);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[0], NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT(kvssd_tags_stream_bytes(fx.ns) > 5000);
    kvssd_ns_reset(fx.ns);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(kvssd_tags_stream_bytes(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exec(&c.sqe[1], NULL).status, KVSSD_SC_INLINE_UNKNOWN_TAG);
    inline_cmds_free(&c);
}

static const struct tap_test tests[] = {
    TAP_TEST(stock_head_only_20_bytes),
    TAP_TEST(stock_21_bytes_one_transfer),
    TAP_TEST(stock_progress_dw0),
    TAP_TEST(stock_fragments_charged),
    TAP_TEST(stock_round_trip_sizes),
    TAP_TEST(stock_key16_head_capacity),
    TAP_TEST(stock_long_key),
    TAP_TEST(stock_long_key_not_staged),
    TAP_TEST(stock_reverse_order),
    TAP_TEST(stock_two_tags_interleaved),
    TAP_TEST(hybrid_4k_plus_4),
    TAP_TEST(hybrid_4k_plus_60),
    TAP_TEST(hybrid_2mib),
    TAP_TEST(hybrid_dptr_failure),
    TAP_TEST(full_head_35_bytes),
    TAP_TEST(full_one_transfer_56),
    TAP_TEST(full_round_trip_reverse),
    TAP_TEST(full_2mib),
    TAP_TEST(full_head_long_key),
    TAP_TEST(unknown_tag),
    TAP_TEST(duplicate_sequence),
    TAP_TEST(sequence_zero),
    TAP_TEST(more_bytes_than_declared),
    TAP_TEST(tag_in_use),
    TAP_TEST(expire_frees_stream),
    TAP_TEST(expire_on_arrival),
    TAP_TEST(expired_ring_bounded),
    TAP_TEST(table_full),
    TAP_TEST(table_shared_with_staged_keys),
    TAP_TEST(table_reusable_after_expiry),
    TAP_TEST(head_field_errors),
    TAP_TEST(head_fault_order),
    TAP_TEST(head_long_key_reserved),
    TAP_TEST(store_status_on_last_fragment),
    TAP_TEST(counters_exact),
    TAP_TEST(layout_mismatch),
    TAP_TEST(fragment_after_completion),
    TAP_TEST(reset_drops_streams),
    TAP_TEST(full_tail_hybrid_4k_plus_100),
    TAP_TEST(full_tail_hybrid_round_trips),
    TAP_TEST(full_tail_rejects_stock_xfer),
    TAP_TEST(full_tail_tag_above_255),
    TAP_TEST(full_tail_long_key),
    TAP_TEST(full_tail_without_hybrid),
    TAP_TEST(full_tail_sequence_checks),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE_FIXTURE("inline", fx_setup, fx_teardown, tests);

    return tap_main(&suite, 1);
}
