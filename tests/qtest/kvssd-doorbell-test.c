/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtests of shadow doorbells (Doorbell Buffer Config, admin 7Ch): the
 * command's checks, an I/O SQ's tail and CQ's head read from the host's
 * shadow page at every bottom half, the event indexes the device publishes
 * (the SQ tail it has seen; the CQ head when the CQ is full with
 * completions waiting), a shadow value past the queue refused, and a
 * controller reset forgetting the pages.
 */
#include "kvssd-common.h"

#define DBBUF_CONFIG KVSSD_ADM_DBBUF_CONFIG
#define OACS_DBBUF (1u << 8)     /* Identify Controller OACS bit 8 */
#define KV_DBS 0x5000000ull      /* shadow doorbells */
#define KV_EIS 0x5001000ull      /* event indexes */
#define SQ_SLOT(q) ((uint64_t)(q) * 8)
#define CQ_SLOT(q) ((uint64_t)(q) * 8 + 4)

static uint16_t dbbuf_config(KvDev *d, uint64_t dbs, uint64_t eis, uint8_t psdt)
{
    struct kvssd_sqe s = kv_sqe(DBBUF_CONFIG, 0);

    s.cdw[0] |= (uint32_t)psdt << 14;
    kv_set_prp(&s, dbs, eis);
    return kv_admin_status(d, &s);
}

/* An Exist of key "k" on @qid, not rung; its cid. */
static uint16_t put_exist(KvDev *d, uint16_t qid)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_EXIST, 1);

    kvssd_sqe_set_key(&s, "k", 1);
    s.cdw[11] = 1;
    return kv_put(d, qid, &s, false);
}

/* The next CQE of @qid, which must be there: Exist of @cid, Key Does Not Exist. */
static void expect_exist_cqe(KvDev *d, uint16_t qid, uint16_t cid)
{
    KvCqe c;

    g_assert(kv_try_cqe(d, qid, &c));
    g_assert_cmpuint(c.sqid, ==, qid);
    g_assert_cmpuint(c.cid, ==, cid);
    g_assert_cmphex(c.status, ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* An admin round trip: the bottom half that answers it has run every SQ. */
static void admin_round_trip(KvDev *d)
{
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CTRL, 0, 0, NULL), ==, 0);
}

/*
 * Identify Controller says the command is supported (OACS bit 8); PRP1 or
 * PRP2 zero or not page aligned, or an SGL, is Invalid Field in Command
 * with DNR; page-aligned PRPs succeed.
 */
static void test_config_checks(void)
{
    KvDev *d = kv_start(NULL);
    uint8_t id[KVSSD_IDENTIFY_BYTES];

    kv_enable(d);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CTRL, 0, 0, id), ==, 0);
    g_assert_cmphex(le16p(id + 256) & OACS_DBBUF, ==, OACS_DBBUF);
    const uint16_t bad = KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    g_assert_cmphex(dbbuf_config(d, KV_DBS + 8, KV_EIS, 0), ==, bad);
    g_assert_cmphex(dbbuf_config(d, KV_DBS, KV_EIS + 512, 0), ==, bad);
    g_assert_cmphex(dbbuf_config(d, 0, KV_EIS, 0), ==, bad);
    g_assert_cmphex(dbbuf_config(d, KV_DBS, 0, 0), ==, bad);
    g_assert_cmphex(dbbuf_config(d, KV_DBS, KV_EIS, 1), ==, bad);
    g_assert_cmphex(dbbuf_config(d, KV_DBS, KV_EIS, 0), ==, 0);
    kv_stop(d);
}

/*
 * With the pages given, the I/O SQ's tail is its shadow: three commands
 * with the shadow at 3 and a stale MMIO write of 1 all run, and the event
 * index becomes 3; two more with only the shadow written (no MMIO) run in
 * the next bottom half (here: an admin command's), event index 5.
 */
static void test_shadow_sq_tail(void)
{
    KvDev *d = kv_start(NULL);
    uint16_t cid[5];

    kv_enable(d);
    qtest_memset(d->qts, KV_DBS, 0, 8192);
    g_assert_cmphex(dbbuf_config(d, KV_DBS, KV_EIS, 0), ==, 0);
    g_assert_cmphex(kv_create_cq(d, 1, 64, 0, KVSSD_QUEUE_PC), ==, 0);
    g_assert_cmphex(kv_create_sq(d, 1, 64, 1), ==, 0);
    for (int i = 0; i < 3; i++) {
        cid[i] = put_exist(d, 1);
    }
    kv_mem_wr32(d, KV_DBS + SQ_SLOT(1), 3);
    kv_wr32(d, kvssd_sq_tail_doorbell(1, 0), 1);
    admin_round_trip(d);
    for (int i = 0; i < 3; i++) {
        expect_exist_cqe(d, 1, cid[i]);
    }
    g_assert_cmpuint(kv_mem_rd32(d, KV_EIS + SQ_SLOT(1)), ==, 3);
    cid[3] = put_exist(d, 1);
    cid[4] = put_exist(d, 1);
    kv_mem_wr32(d, KV_DBS + SQ_SLOT(1), 5);
    kv_mem_wr32(d, KV_DBS + CQ_SLOT(1), 3);
    admin_round_trip(d);
    expect_exist_cqe(d, 1, cid[3]);
    expect_exist_cqe(d, 1, cid[4]);
    g_assert_cmpuint(kv_mem_rd32(d, KV_EIS + SQ_SLOT(1)), ==, 5);
    kv_stop(d);
}

/*
 * A CQ of 4 entries (3 slots) and 6 commands: 3 completions fill it and
 * the device publishes the head it has seen (0) as the CQ's event index
 * (it was 7), so the host's next head update rings the MMIO doorbell. The
 * host consumes 3 and writes 3 to the shadow head, and a stale 1 to the
 * MMIO doorbell: the device takes the shadow's 3 and posts the other 3.
 */
static void test_shadow_cq_head(void)
{
    KvDev *d = kv_start(NULL);
    uint16_t cid[6];

    kv_enable(d);
    qtest_memset(d->qts, KV_DBS, 0, 8192);
    g_assert_cmphex(dbbuf_config(d, KV_DBS, KV_EIS, 0), ==, 0);
    g_assert_cmphex(kv_create_cq(d, 1, 4, 0, KVSSD_QUEUE_PC), ==, 0);
    g_assert_cmphex(kv_create_sq(d, 1, 16, 1), ==, 0);
    kv_mem_wr32(d, KV_EIS + CQ_SLOT(1), 7);
    for (int i = 0; i < 6; i++) {
        cid[i] = put_exist(d, 1);
    }
    kv_mem_wr32(d, KV_DBS + SQ_SLOT(1), 6);
    kv_ring(d, 1);
    admin_round_trip(d);
    for (int i = 0; i < 3; i++) {
        expect_exist_cqe(d, 1, cid[i]);
    }
    KvCqe c;
    g_assert(!kv_try_cqe(d, 1, &c));
    g_assert_cmpuint(kv_mem_rd32(d, KV_EIS + CQ_SLOT(1)), ==, 0);
    kv_mem_wr32(d, KV_DBS + CQ_SLOT(1), 3);
    kv_wr32(d, kvssd_cq_head_doorbell(1, 0), 1);
    admin_round_trip(d);
    for (int i = 3; i < 6; i++) {
        expect_exist_cqe(d, 1, cid[i]);
    }
    g_assert(!kv_try_cqe(d, 1, &c));
    kv_stop(d);
}

/*
 * A shadow tail past the SQ (100 of 64 entries) is refused: the tail the
 * MMIO doorbell gave (1) stays, the one command runs, the controller is
 * not fatal, and nothing more runs.
 */
static void test_shadow_value_past_queue(void)
{
    KvDev *d = kv_start(NULL);
    KvCqe c;

    kv_enable(d);
    qtest_memset(d->qts, KV_DBS, 0, 8192);
    g_assert_cmphex(dbbuf_config(d, KV_DBS, KV_EIS, 0), ==, 0);
    g_assert_cmphex(kv_create_cq(d, 1, 64, 0, KVSSD_QUEUE_PC), ==, 0);
    g_assert_cmphex(kv_create_sq(d, 1, 64, 1), ==, 0);
    uint16_t cid = put_exist(d, 1);
    kv_mem_wr32(d, KV_DBS + SQ_SLOT(1), 100);
    kv_ring(d, 1);
    admin_round_trip(d);
    expect_exist_cqe(d, 1, cid);
    g_assert(!kv_try_cqe(d, 1, &c));
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS) & KVSSD_CSTS_CFS, ==, 0);
    kv_stop(d);
}

/*
 * A controller reset forgets the pages: after disable and enable, the
 * MMIO doorbell alone says the tail (1, with 5 in the old shadow slot) and
 * no event index is written (the 7 there stays).
 */
static void test_reset_forgets(void)
{
    KvDev *d = kv_start(NULL);
    KvCqe c;

    kv_enable(d);
    g_assert_cmphex(dbbuf_config(d, KV_DBS, KV_EIS, 0), ==, 0);
    kv_disable(d);
    kv_enable(d);
    g_assert_cmphex(kv_create_cq(d, 1, 64, 0, KVSSD_QUEUE_PC), ==, 0);
    g_assert_cmphex(kv_create_sq(d, 1, 64, 1), ==, 0);
    kv_mem_wr32(d, KV_DBS + SQ_SLOT(1), 5);
    kv_mem_wr32(d, KV_EIS + SQ_SLOT(1), 7);
    uint16_t cid = put_exist(d, 1);
    kv_ring(d, 1);
    admin_round_trip(d);
    expect_exist_cqe(d, 1, cid);
    g_assert(!kv_try_cqe(d, 1, &c));
    g_assert_cmpuint(kv_mem_rd32(d, KV_EIS + SQ_SLOT(1)), ==, 7);
    kv_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/doorbell/config-checks", test_config_checks);
    qtest_add_func("/kvssd/doorbell/shadow-sq-tail", test_shadow_sq_tail);
    qtest_add_func("/kvssd/doorbell/shadow-cq-head", test_shadow_cq_head);
    qtest_add_func("/kvssd/doorbell/shadow-value-past-queue", test_shadow_value_past_queue);
    qtest_add_func("/kvssd/doorbell/reset-forgets", test_reset_forgets);
    return g_test_run();
}
