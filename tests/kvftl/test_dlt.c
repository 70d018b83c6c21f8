/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DMA Log Table: bounded circular queue of (page, offset, size). */
#include "helpers.h"

/* Entries come out oldest first with the exact fields they went in with. */
static void test_fifo_order(void)
{
    struct dlt d;
    dlt_init(&d, 4);
    CU_ASSERT_TRUE(dlt_empty(&d));
    CU_ASSERT_PTR_NULL(dlt_head(&d));
    CU_ASSERT_EQUAL(dlt_push(&d, 10, 4096, 5032), 0);
    CU_ASSERT_EQUAL(dlt_push(&d, 11, 0, 8192), 0);
    const struct dlt_entry *e = dlt_head(&d);
    CU_ASSERT_EQUAL(e->page, 10);
    CU_ASSERT_EQUAL(e->offset, 4096);
    CU_ASSERT_EQUAL(e->size, 5032);
    dlt_pop(&d);
    CU_ASSERT_EQUAL(dlt_head(&d)->page, 11);
    dlt_pop(&d);
    CU_ASSERT_TRUE(dlt_empty(&d));
    dlt_fini(&d);
}

/* The table is capped: a push into a full table fails and changes nothing. */
static void test_full_rejects_push(void)
{
    struct dlt d;
    dlt_init(&d, 2);
    CU_ASSERT_EQUAL(dlt_push(&d, 1, 0, 1), 0);
    CU_ASSERT_EQUAL(dlt_push(&d, 2, 0, 1), 0);
    CU_ASSERT_TRUE(dlt_full(&d));
    CU_ASSERT_EQUAL(dlt_push(&d, 3, 0, 1), -1);
    CU_ASSERT_EQUAL(d.count, 2);
    CU_ASSERT_EQUAL(dlt_head(&d)->page, 1);
    dlt_fini(&d);
}

/*
 * Wrap-around: capacity 3, push p1 p2 p3, pop two, push p4 p5. The ring
 * now holds p3 (slot 2), p4 (slot 0), p5 (slot 1); they come out in order.
 */
static void test_wrap_around(void)
{
    struct dlt d;
    dlt_init(&d, 3);
    for (uint64_t p = 1; p <= 3; p++) {
        dlt_push(&d, p, (uint32_t)p * 100, (uint32_t)p);
    }
    dlt_pop(&d);
    dlt_pop(&d);
    CU_ASSERT_EQUAL(d.head, 2);
    CU_ASSERT_EQUAL(dlt_push(&d, 4, 400, 4), 0);
    CU_ASSERT_EQUAL(dlt_push(&d, 5, 500, 5), 0);
    CU_ASSERT_TRUE(dlt_full(&d));
    CU_ASSERT_EQUAL(d.ring[0].page, 4);
    CU_ASSERT_EQUAL(d.ring[1].page, 5);
    uint64_t want[] = {3, 4, 5};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(dlt_head(&d)->page, want[i]);
        CU_ASSERT_EQUAL(dlt_head(&d)->offset, want[i] * 100);
        dlt_pop(&d);
    }
    CU_ASSERT_TRUE(dlt_empty(&d));
    dlt_fini(&d);
}

/* The device's DLT has buffer_entries entries unless dlt_entries says fewer. */
static void test_capacity_from_config(void)
{
    struct kvftl_config c = small_config();
    c.packing = KVFTL_PACK_BACKFILL;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->vl.pk.dlt.capacity, 8);
    CU_ASSERT_EQUAL(kvftl_get_config(f)->dlt_entries, 8);
    kvftl_close(f);
    c.dlt_entries = 3;
    f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->vl.pk.dlt.capacity, 3);
    kvftl_close(f);
    c.dlt_entries = 9;
    char err[256];
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(
        err, "dlt_entries is 9; it must be from 1 to buffer_entries (8), or 0 for buffer_entries");
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_fifo_order),
    TAP_TEST_FN(test_full_rejects_push),
    TAP_TEST_FN(test_wrap_around),
    TAP_TEST_FN(test_capacity_from_config),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("dlt", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
