/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reference model of the nvm personality (tests/common/sector_model.h)
 * says no: each test feeds it one firmware answer that is wrong and checks
 * the exact mismatch it reports, after checking that it takes the right
 * answer. Completions and read buffers are made up where the model judges
 * them alone; the read-back and the device check run against a real nvm
 * kvftl whose contents were changed behind the model's back.
 */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include <kvftl/block.h>

#include "kvftl_small.h"
#include "sector_model.h"
#include "tap_cunit.h"

/* Room for 4 units and the guard. */
static uint8_t buf[4 * KVFTL_BLOCK_UNIT_BYTES + SECTOR_MODEL_GUARD_BYTES];

/* A completion at the arrival time (1000). */
static struct kvftl_cpl cpl(enum kvftl_status st)
{
    return (struct kvftl_cpl){.status = st, .done_ns = 1000};
}

/* Write @nlb blocks at @slba as a fresh generation, answered @st; returns the generation. */
static uint64_t write_as(struct sector_model *m, uint64_t slba, uint32_t nlb, bool fua,
                         enum kvftl_status st, bool *ok)
{
    uint64_t g = sector_model_next_gen(m);
    struct kvftl_cpl c = cpl(st);
    *ok = sector_model_write(m, slba, nlb, g, fua, 1000, &c);
    return g;
}

static bool flush_ok(struct sector_model *m)
{
    struct kvftl_cpl c = cpl(KVFTL_OK);
    return sector_model_flush(m, 1000, &c);
}

/* The contents: every block of every generation differs, and zeroes are generation 0. */
static void test_fill_names_lba_and_generation(void)
{
    uint8_t a[512], b[512];
    sector_model_fill(512, 7, 3, a);
    CU_ASSERT_EQUAL(a[0], 7);
    CU_ASSERT_EQUAL(a[8], 3);
    sector_model_fill(512, 7, 4, b);
    CU_ASSERT(memcmp(a + 16, b + 16, 512 - 16) != 0);
    sector_model_fill(512, 8, 3, b);
    CU_ASSERT(memcmp(a + 16, b + 16, 512 - 16) != 0);
    sector_model_fill(512, 8, 0, b);
    static const uint8_t zero[512];
    CU_ASSERT_EQUAL(memcmp(b, zero, 512), 0);
}

/* A read whose byte 100 of its second block differs from what was written. */
static void test_read_wrong_byte(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, true);
    bool ok;
    uint64_t g = write_as(&m, 10, 2, false, KVFTL_OK, &ok);
    CU_ASSERT(ok);
    sector_model_guard(&m, 2, buf, sizeof(buf));
    sector_model_fill_range(&m, 10, 2, g, buf);
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT(sector_model_read(&m, 10, 2, 1000, &c, buf, sizeof(buf)));
    uint8_t want = buf[4096 + 100];
    buf[4096 + 100] ^= 0x01;
    CU_ASSERT_FALSE(sector_model_read(&m, 10, 2, 1000, &c, buf, sizeof(buf)));
    char exp[300];
    snprintf(exp, sizeof(exp),
             "read of 2 blocks at lba 10: lba 11 byte 100 is 0x%02x, expected 0x%02x: it reads "
             "as no write's data (its header: lba 11 generation 1); model: generation 1",
             want ^ 0x01, want);
    CU_ASSERT_STRING_EQUAL(m.mismatch, exp);
    sector_model_destroy(&m);
}

/* A read that returns the data of another block (a misdirected map entry). */
static void test_read_of_another_lba(void)
{
    struct sector_model m;
    sector_model_init(&m, 512, 64, true);
    bool ok;
    uint64_t g = write_as(&m, 0, 16, false, KVFTL_OK, &ok);
    CU_ASSERT(ok);
    sector_model_fill_range(&m, 0, 1, g, buf);
    sector_model_fill_range(&m, 9, 1, g, buf + 512); /* lba 1 reads as lba 9 */
    sector_model_guard(&m, 2, buf, sizeof(buf));
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT_FALSE(sector_model_read(&m, 0, 2, 1000, &c, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "read of 2 blocks at lba 0: lba 1 byte 0 is 0x09, expected 0x01: it "
                           "reads as the data of lba 9 generation 1; model: generation 1");
    sector_model_destroy(&m);
}

/* Never-written blocks read zeroes; a read that returns old bytes there is wrong. */
static void test_unwritten_block_reads_zeroes(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, true);
    memset(buf, 0, 4096);
    sector_model_guard(&m, 1, buf, sizeof(buf));
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT(sector_model_read(&m, 63, 1, 1000, &c, buf, sizeof(buf)));
    buf[4095] = 1;
    CU_ASSERT_FALSE(sector_model_read(&m, 63, 1, 1000, &c, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "read of 1 blocks at lba 63: lba 63 byte 4095 is 0x01, "
                                       "expected 0x00: it reads as no write's data (its header: "
                                       "lba 0 generation 0); model: zeroes");
    sector_model_destroy(&m);
}

/* A read that wrote one byte past the buffer it was given. */
static void test_read_past_buffer(void)
{
    struct sector_model m;
    sector_model_init(&m, 512, 64, true);
    memset(buf, 0, 512);
    sector_model_guard(&m, 1, buf, sizeof(buf));
    buf[512] = 0;
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT_FALSE(sector_model_read(&m, 5, 1, 1000, &c, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(
        m.mismatch, "read of 1 blocks (status OK) wrote past its 512-byte buffer (byte 512)");
    sector_model_destroy(&m);
}

/* Ranges: one block past the namespace, 0 blocks, more than one command moves. */
static void test_range_statuses(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, true);
    bool ok;
    write_as(&m, 63, 2, false, KVFTL_INVALID_FIELD, &ok);
    CU_ASSERT(ok);
    write_as(&m, 63, 1, false, KVFTL_OK, &ok);
    CU_ASSERT(ok);
    struct kvftl_cpl c = cpl(KVFTL_INVALID_FIELD);
    CU_ASSERT(sector_model_deallocate(&m, 0, 0, 1000, &c));
    CU_ASSERT(sector_model_write_zeroes(&m, UINT64_MAX, 1, 1000, &c));
    CU_ASSERT(sector_model_read(&m, 0, KVFTL_BLOCK_MAX_XFER_BYTES / 4096 + 1, 1000, &c, buf,
                                sizeof(buf)));
    write_as(&m, 64, 1, false, KVFTL_OK, &ok);
    CU_ASSERT_FALSE(ok);
    CU_ASSERT_STRING_EQUAL(m.mismatch, "write of 1 blocks at lba 64 (namespace 64 blocks, at most "
                                       "16384 a command): status OK, expected INVALID_FIELD");
    c = cpl(KVFTL_OK);
    CU_ASSERT_FALSE(sector_model_read(&m, 0, 65, 1000, &c, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "read of 65 blocks at lba 0 (namespace 64 blocks): status "
                                       "OK, expected INVALID_FIELD");
    sector_model_destroy(&m);
}

/* CAPACITY_EXCEEDED is a firmware bug on this contract. */
static void test_capacity_exceeded_is_wrong(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, false);
    bool ok;
    write_as(&m, 0, 8, false, KVFTL_CAPACITY_EXCEEDED, &ok);
    CU_ASSERT_FALSE(ok);
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "write of 8 blocks at lba 0: status CAPACITY_EXCEEDED, expected OK");
    sector_model_destroy(&m);
}

/*
 * plp off, 512 B blocks: a unit flushed as generation A, then rewritten
 * whole as B. After a remount it may read A or B, never half of each.
 */
static void test_torn_unit_after_remount(void)
{
    struct sector_model m;
    sector_model_init(&m, 512, 64, false);
    bool ok;
    uint64_t a = write_as(&m, 8, 8, false, KVFTL_OK, &ok);
    CU_ASSERT(flush_ok(&m));
    uint64_t b = write_as(&m, 8, 8, false, KVFTL_OK, &ok);
    CU_ASSERT(ok);
    sector_model_remounted(&m);
    sector_model_fill_range(&m, 8, 4, b, buf);
    sector_model_fill_range(&m, 12, 4, a, buf + 4 * 512);
    CU_ASSERT_FALSE(sector_model_judge_unit(&m, 1, buf, true, "after power cycle"));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "after power cycle: unit 1 (lba 8-15): lba 12 reads as the data of lba "
                           "12 generation 1; model: generation 2 (nor any of the 1 other states a "
                           "remount may return)");
    /* whole A is allowed, and adopted */
    sector_model_fill_range(&m, 8, 8, a, buf);
    CU_ASSERT(sector_model_judge_unit(&m, 1, buf, true, "after power cycle"));
    CU_ASSERT_EQUAL(m.cur[8], a);
    CU_ASSERT_EQUAL(m.adopted, 1);
    sector_model_destroy(&m);
}

/* plp off: a block may come back as it was at the last Flush or later, never before it. */
static void test_plp_off_state_before_flush(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, false);
    bool ok;
    uint64_t a = write_as(&m, 3, 1, false, KVFTL_OK, &ok);
    uint64_t b = write_as(&m, 3, 1, false, KVFTL_OK, &ok);
    CU_ASSERT(flush_ok(&m));
    write_as(&m, 3, 1, false, KVFTL_OK, &ok);
    CU_ASSERT(ok);
    sector_model_remounted(&m);
    sector_model_fill_range(&m, 3, 1, a, buf);
    CU_ASSERT_FALSE(sector_model_judge_unit(&m, 3, buf, true, "after power cycle"));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "after power cycle: unit 3 (lba 3-3): lba 3 reads as the data of lba 3 "
                           "generation 1; model: generation 3 (nor any of the 1 other states a "
                           "remount may return)");
    sector_model_fill_range(&m, 3, 1, b, buf);
    CU_ASSERT(sector_model_judge_unit(&m, 3, buf, true, "after power cycle"));
    CU_ASSERT_EQUAL(m.cur[3], b);
    sector_model_destroy(&m);
}

/* With plp, a completed write survives a cut: its older state is wrong after the remount. */
static void test_plp_on_completed_write_lost(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, true);
    bool ok;
    uint64_t a = write_as(&m, 5, 1, false, KVFTL_OK, &ok);
    write_as(&m, 5, 1, false, KVFTL_OK, &ok);
    sector_model_remounted(&m);
    sector_model_fill_range(&m, 5, 1, a, buf);
    CU_ASSERT_FALSE(sector_model_judge_unit(&m, 5, buf, true, "after power cycle"));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "after power cycle: unit 5 (lba 5-5): lba 5 reads as the "
                                       "data of lba 5 generation 1; model: generation 2");
    sector_model_destroy(&m);
}

/*
 * With plp a completed Deallocate is durable at once (block_recovery.c's
 * unmap log): its old data after a remount is wrong, flushed or not.
 */
static void test_plp_on_deallocate_durable(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, true);
    bool ok;
    uint64_t a = write_as(&m, 30, 2, false, KVFTL_OK, &ok);
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT(sector_model_deallocate(&m, 30, 2, 1000, &c));
    sector_model_remounted(&m);
    sector_model_fill_range(&m, 31, 1, a, buf);
    CU_ASSERT_FALSE(sector_model_judge_unit(&m, 31, buf, true, "after power cycle"));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "after power cycle: unit 31 (lba 31-31): lba 31 reads as "
                                       "the data of lba 31 generation 1; model: zeroes");
    sector_model_destroy(&m);
}

/* A FUA write without plp is durable at once: the older state is no longer allowed. */
static void test_fua_write_durable(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, false);
    bool ok;
    uint64_t a = write_as(&m, 6, 1, false, KVFTL_OK, &ok);
    write_as(&m, 6, 1, true, KVFTL_OK, &ok);
    sector_model_remounted(&m);
    sector_model_fill_range(&m, 6, 1, a, buf);
    CU_ASSERT_FALSE(sector_model_judge_unit(&m, 6, buf, true, "after power cycle"));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "after power cycle: unit 6 (lba 6-6): lba 6 reads as the "
                                       "data of lba 6 generation 1; model: generation 2");
    sector_model_destroy(&m);
}

/*
 * A deallocate flushed, then a cut: the old data coming back (recovery
 * resurrecting a trimmed unit from its spare area) is wrong. Before the
 * flush it would have been allowed.
 */
static void test_resurrected_deallocate(void)
{
    struct kvftl_cpl c = cpl(KVFTL_OK);
    bool ok;
    for (int flushed = 0; flushed <= 1; flushed++) {
        struct sector_model m;
        sector_model_init(&m, 4096, 64, false);
        uint64_t a = write_as(&m, 20, 4, false, KVFTL_OK, &ok);
        CU_ASSERT(flush_ok(&m));
        CU_ASSERT(sector_model_deallocate(&m, 20, 4, 1000, &c));
        CU_ASSERT_EQUAL(m.cur[21], 0);
        if (flushed) {
            CU_ASSERT(flush_ok(&m));
        }
        sector_model_remounted(&m);
        sector_model_fill_range(&m, 21, 1, a, buf);
        if (!flushed) {
            /* not yet flushed: a remount may return the old data (and the model adopts it) */
            CU_ASSERT(sector_model_judge_unit(&m, 21, buf, true, "after power cycle"));
            CU_ASSERT_EQUAL(m.cur[21], a);
        } else {
            CU_ASSERT_FALSE(sector_model_judge_unit(&m, 21, buf, true, "after power cycle"));
            CU_ASSERT_STRING_EQUAL(m.mismatch,
                                   "after power cycle: unit 21 (lba 21-21): lba 21 reads as the "
                                   "data of lba 21 generation 1; model: zeroes");
        }
        sector_model_destroy(&m);
    }
}

/*
 * Deallocate with 512 B blocks over lba 4..19: unit 1 (8-15) is covered
 * whole and reads zeroes; units 0 and 2 are partial and keep their data.
 */
static void test_deallocate_partial_units_kept(void)
{
    struct sector_model m;
    sector_model_init(&m, 512, 64, true);
    bool ok;
    uint64_t a = write_as(&m, 0, 24, false, KVFTL_OK, &ok);
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT(sector_model_deallocate(&m, 4, 16, 1000, &c));
    CU_ASSERT_EQUAL(m.cur[4], a);
    CU_ASSERT_EQUAL(m.cur[8], 0);
    CU_ASSERT_EQUAL(m.cur[15], 0);
    CU_ASSERT_EQUAL(m.cur[16], a);
    CU_ASSERT_EQUAL(m.nonzero_units, 2);
    /* a firmware that zeroed lba 16 (a partial unit) is wrong */
    memset(buf, 0, 512);
    sector_model_guard(&m, 1, buf, sizeof(buf));
    CU_ASSERT_FALSE(sector_model_read(&m, 16, 1, 1000, &c, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "read of 1 blocks at lba 16: lba 16 byte 0 is 0x00, "
                                       "expected 0x10: it reads as zeroes; model: generation 1");
    sector_model_destroy(&m);
}

/* Write zeroes of part of a unit zeroes just those blocks (read-modify-write). */
static void test_write_zeroes_partial_unit(void)
{
    struct sector_model m;
    sector_model_init(&m, 512, 64, true);
    bool ok;
    uint64_t a = write_as(&m, 0, 8, false, KVFTL_OK, &ok);
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT(sector_model_write_zeroes(&m, 2, 3, 1000, &c));
    CU_ASSERT_EQUAL(m.cur[1], a);
    CU_ASSERT_EQUAL(m.cur[2], 0);
    CU_ASSERT_EQUAL(m.cur[4], 0);
    CU_ASSERT_EQUAL(m.cur[5], a);
    sector_model_fill_range(&m, 0, 8, a, buf);
    sector_model_guard(&m, 8, buf, sizeof(buf));
    CU_ASSERT_FALSE(sector_model_read(&m, 0, 8, 1000, &c, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "read of 8 blocks at lba 0: lba 2 byte 0 is 0x02, "
                                       "expected 0x00: it reads as the data of lba 2 generation "
                                       "1; model: zeroes");
    sector_model_destroy(&m);
}

/*
 * The write the cut interrupted (INTERNAL_ERROR) may have reached each of
 * its units or not, whole; nothing after it succeeds.
 */
static void test_interrupted_write_and_after(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, true);
    bool ok;
    uint64_t a = write_as(&m, 0, 2, false, KVFTL_OK, &ok);
    sector_model_cut_armed(&m, 3);
    uint64_t b = write_as(&m, 0, 2, false, KVFTL_INTERNAL_ERROR, &ok);
    CU_ASSERT(ok);
    CU_ASSERT(m.fired);
    CU_ASSERT_EQUAL(m.cur[0], a);
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT_FALSE(sector_model_flush(&m, 1000, &c));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "flush after the power cut fired: status OK, expected INTERNAL_ERROR");
    sector_model_remounted(&m);
    sector_model_fill_range(&m, 0, 1, b, buf); /* unit 0: new */
    CU_ASSERT(sector_model_judge_unit(&m, 0, buf, true, "after power cycle"));
    sector_model_fill_range(&m, 1, 1, a, buf); /* unit 1: old */
    CU_ASSERT(sector_model_judge_unit(&m, 1, buf, true, "after power cycle"));
    CU_ASSERT_EQUAL(m.cur[0], b);
    CU_ASSERT_EQUAL(m.cur[1], a);
    sector_model_destroy(&m);
}

/* A format, then a remount that brings a block back. */
static void test_format_then_old_data(void)
{
    struct sector_model m;
    sector_model_init(&m, 4096, 64, false);
    bool ok;
    uint64_t a = write_as(&m, 40, 1, false, KVFTL_OK, &ok);
    struct kvftl_cpl c = cpl(KVFTL_OK);
    CU_ASSERT(sector_model_format(&m, 1000, &c));
    CU_ASSERT_EQUAL(m.nonzero_units, 0);
    sector_model_remounted(&m);
    sector_model_fill_range(&m, 40, 1, a, buf);
    CU_ASSERT_FALSE(sector_model_judge_unit(&m, 40, buf, true, "after power cycle"));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "after power cycle: unit 40 (lba 40-40): lba 40 reads as "
                                       "the data of lba 40 generation 1; model: zeroes");
    sector_model_destroy(&m);
}

/* A memory-only nvm device of 4 KiB blocks: 1 channel x 2 dies x 8 blocks of 272 4 KiB pages. */
static struct kvftl *open_nvm(void)
{
    struct kvftl_config cfg;
    char err[256] = "";
    kvftl_config_small(&cfg, (struct kvftl_small_geometry){.channels = 1,
                                                           .dies_per_channel = 2,
                                                           .blocks_per_die = 8,
                                                           .pages_per_block = 272,
                                                           .page_size_bytes = 4096});
    cfg.command_set = KVFTL_CMDSET_NVM;
    cfg.lba_bytes = 4096;
    cfg.gc_high_watermark_blocks = 3;
    cfg.gc_low_watermark_blocks = 2;
    cfg.index_page_bytes = 4096;
    struct kvftl *ftl = kvftl_open(&cfg, err, sizeof(err));
    if (!ftl) {
        printf("# kvftl_open: %s\n", err);
    }
    CU_ASSERT_FATAL(ftl != NULL);
    return ftl;
}

/*
 * Two units written through the device and the model, then one of them
 * deallocated behind the model's back: the read-back names the block and
 * the gauge check the mapped units.
 */
static void test_unit_lost_behind_the_model(void)
{
    struct kvftl *ftl = open_nvm();
    struct sector_model m;
    sector_model_init(&m, 4096, kvftl_block_lbas(ftl), true);
    uint64_t g = sector_model_next_gen(&m);
    sector_model_fill_range(&m, 100, 2, g, buf);
    struct kvftl_cpl c;
    kvftl_block_write(ftl, 100, 2, buf, false, 1000, &c);
    CU_ASSERT(sector_model_write(&m, 100, 2, g, false, 1000, &c));
    uint64_t units = 0;
    CU_ASSERT(sector_model_read_back(&m, ftl, 2000, buf, sizeof(buf) - SECTOR_MODEL_GUARD_BYTES,
                                     "before the loss", false, &units));
    CU_ASSERT_EQUAL(units, m.units);
    units = 0;
    CU_ASSERT(sector_model_read_back_batched(&m, ftl, 2000, buf,
                                             sizeof(buf) - SECTOR_MODEL_GUARD_BYTES,
                                             "before the loss", false, &units));
    CU_ASSERT_EQUAL(units, m.units);
    CU_ASSERT(sector_model_check_gauges(&m, ftl, "before the loss"));
    kvftl_block_deallocate(ftl, 101, 1, 3000, &c);
    CU_ASSERT_EQUAL(c.status, KVFTL_OK);
    CU_ASSERT_FALSE(sector_model_read_back(
        &m, ftl, 4000, buf, sizeof(buf) - SECTOR_MODEL_GUARD_BYTES, "after the loss", false, NULL));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "after the loss: unit 101 (lba 101-101): lba 101 reads as "
                                       "zeroes; model: generation 1");
    CU_ASSERT_FALSE(sector_model_read_back_batched(
        &m, ftl, 4000, buf, sizeof(buf) - SECTOR_MODEL_GUARD_BYTES, "batched", false, NULL));
    CU_ASSERT_STRING_EQUAL(m.mismatch,
                           "batched: unit 101 (lba 101-101): lba 101 reads as zeroes; model: "
                           "generation 1");
    CU_ASSERT_FALSE(sector_model_check_gauges(&m, ftl, "after the loss"));
    CU_ASSERT_STRING_EQUAL(m.mismatch, "after the loss: stats live_keys (mapped units) 1, model 2");
    sector_model_destroy(&m);
    kvftl_close(ftl);
}

static const struct tap_test sector_model_tests[] = {
    TAP_TEST(fill_names_lba_and_generation),
    TAP_TEST(read_wrong_byte),
    TAP_TEST(read_of_another_lba),
    TAP_TEST(unwritten_block_reads_zeroes),
    TAP_TEST(read_past_buffer),
    TAP_TEST(range_statuses),
    TAP_TEST(capacity_exceeded_is_wrong),
    TAP_TEST(torn_unit_after_remount),
    TAP_TEST(plp_off_state_before_flush),
    TAP_TEST(plp_on_completed_write_lost),
    TAP_TEST(fua_write_durable),
    TAP_TEST(plp_on_deallocate_durable),
    TAP_TEST(resurrected_deallocate),
    TAP_TEST(deallocate_partial_units_kept),
    TAP_TEST(write_zeroes_partial_unit),
    TAP_TEST(interrupted_write_and_after),
    TAP_TEST(format_then_old_data),
    TAP_TEST(unit_lost_behind_the_model),
};

int main(void)
{
    static const struct tap_suite suites[] = {
        TAP_SUITE("sector_model", NULL, NULL, sector_model_tests),
    };
    return tap_main(suites, 1);
}
