/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Packing policies, BandSlim §3.3 and Fig. 7. Byte-granular placement,
 * 4 KiB pages, 8-byte keys: a blob is 32 bytes + value. Requests:
 *   A: 100 B inline (blob 132)   B: 200 B inline (blob 232)
 *   C: 5000 B by DMA (blob 5032) D: 300 B inline (blob 332)
 */
#include "helpers.h"

static struct kvftl *open_policy(enum kvftl_packing p)
{
    struct kvftl_config c = small_config();
    c.placement_unit_bytes = 1;
    c.packing = p;
    return open_or_die(&c);
}

static void fig7_requests(struct kvftl *f)
{
    CU_ASSERT_EQUAL(put(f, "A-------", 100, 0xa, false), 0);
    CU_ASSERT_EQUAL(put(f, "B-------", 200, 0xb, false), 0);
    CU_ASSERT_EQUAL(put(f, "C-------", 5000, 0xc, true), 0);
    CU_ASSERT_EQUAL(put(f, "D-------", 300, 0xd, false), 0);
}

static void small_tail(struct kvftl *f, int n)
{
    char key[9];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "s%07d", i);
        CU_ASSERT_EQUAL(put(f, key, 300, (uint8_t)i, false), 0);
    }
}

/*
 * Fig. 7(a), selective: A at 0, B at 132, C at the next 4 KiB boundary
 * (4096) and the write pointer moves past it to 9128, D at 9128. The gap
 * 364..4096 (3732 bytes) is lost; only inline values are copied (600 B).
 */
static void test_fig7_selective(void)
{
    struct kvftl *f = open_policy(KVFTL_PACK_SELECTIVE);
    fig7_requests(f);
    CU_ASSERT_EQUAL(addr_of(f, "A-------"), 0);
    CU_ASSERT_EQUAL(addr_of(f, "B-------"), 132);
    CU_ASSERT_EQUAL(addr_of(f, "C-------"), 4096);
    CU_ASSERT_EQUAL(addr_of(f, "D-------"), 9128);
    CU_ASSERT_EQUAL(f->space.data.wp, 9460);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.padding_bytes, 3732);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 600);
    CU_ASSERT_EQUAL(st.dlt_backfills, 0);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, 2); /* pages 0 and 1 are behind wp */
    kvftl_close(f);
}

/*
 * Fig. 7(b), backfill: C still lands at 4096 (recorded in the DLT as page
 * 1, offset 0, 5032 bytes) but the write pointer stays at 364, so D
 * fills the gap at 364 and wp is 696. Nothing is padded, nothing programmed yet.
 * (With 4 KiB pages, byte 4096 is page 1, offset 0.)
 */
static void test_fig7_backfill(void)
{
    struct kvftl *f = open_policy(KVFTL_PACK_BACKFILL);
    fig7_requests(f);
    CU_ASSERT_EQUAL(addr_of(f, "C-------"), 4096);
    CU_ASSERT_EQUAL(addr_of(f, "D-------"), 364);
    CU_ASSERT_EQUAL(f->space.data.wp, 696);
    CU_ASSERT_EQUAL(f->space.data.frontier, 9128);
    CU_ASSERT_EQUAL(f->vl.pk.dlt.count, 1);
    CU_ASSERT_EQUAL(dlt_head(&f->vl.pk.dlt)->page, 1);
    CU_ASSERT_EQUAL(dlt_head(&f->vl.pk.dlt)->offset, 0);
    CU_ASSERT_EQUAL(dlt_head(&f->vl.pk.dlt)->size, 5032);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.padding_bytes, 0);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 600);
    CU_ASSERT_EQUAL(st.dlt_backfills, 1);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, 0);
    kvftl_close(f);
}

/*
 * Backfill, then E (3500 B inline, blob 3532): 696 + 3532 passes the DLT
 * head at 4096, so wp jumps past C (the 3400-byte gap is padded) and E
 * goes to 9128; wp 12660, the DLT is empty, pages 0-2 are programmed.
 */
static void test_backfill_jumps_past_dma_value(void)
{
    struct kvftl *f = open_policy(KVFTL_PACK_BACKFILL);
    fig7_requests(f);
    CU_ASSERT_EQUAL(put(f, "E-------", 3500, 0xe, false), 0);
    CU_ASSERT_EQUAL(addr_of(f, "E-------"), 9128);
    CU_ASSERT_EQUAL(f->space.data.wp, 12660);
    CU_ASSERT_TRUE(dlt_empty(&f->vl.pk.dlt));
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.padding_bytes, 3400);
    CU_ASSERT_EQUAL(st.dlt_backfills, 1);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, 3);
    kvftl_close(f);
}

/*
 * Fig. 7 followed by ten more 300-byte inline values, then Flush.
 * Selective: they follow D (9460 + 10 x 332 = 12780): 4 pages programmed.
 * Backfill: they fill the gap before C (696 + 3320 = 4016): 3 pages.
 */
static void test_fig7_pages_selective_vs_backfill(void)
{
    struct kvftl *sel = open_policy(KVFTL_PACK_SELECTIVE);
    struct kvftl *bf = open_policy(KVFTL_PACK_BACKFILL);
    fig7_requests(sel);
    fig7_requests(bf);
    small_tail(sel, 10);
    small_tail(bf, 10);
    CU_ASSERT_EQUAL(addr_of(sel, "s0000009"), 12448);
    CU_ASSERT_EQUAL(addr_of(bf, "s0000009"), 3684);
    CU_ASSERT_EQUAL(bf->space.data.wp, 4016);
    flush(sel);
    flush(bf);
    struct kvftl_stats s1 = stats(sel), s2 = stats(bf);
    CU_ASSERT_EQUAL(s1.nand_data_pages_programmed, 4);
    CU_ASSERT_EQUAL(s2.nand_data_pages_programmed, 3);
    CU_ASSERT_EQUAL(s1.padding_bytes, 3732 + 3604);
    CU_ASSERT_EQUAL(s2.padding_bytes, 80 + 3160);
    CU_ASSERT_EQUAL(s2.dlt_backfills, 11);
    CU_ASSERT_EQUAL(s1.memcpy_bytes, s2.memcpy_bytes);
    /* the interleaved layout reads back and survives a crash mount */
    CU_ASSERT_EQUAL(get_check(bf, "C-------", 5000, 0xc), 0);
    CU_ASSERT_EQUAL(get_check(bf, "s0000009", 300, 9), 0);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(bf, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(get_check(bf, "D-------", 300, 0xd), 0);
    CU_ASSERT_EQUAL(get_check(bf, "C-------", 5000, 0xc), 0);
    CU_ASSERT_EQUAL(stats(bf).live_keys, 14);
    assert_consistent(bf);
    kvftl_close(sel);
    kvftl_close(bf);
}

/* Block: every blob at a 4 KiB boundary: 0, 4096, 8192, 16384; 10988 bytes of padding. */
static void test_block_policy(void)
{
    struct kvftl *f = open_policy(KVFTL_PACK_BLOCK);
    fig7_requests(f);
    CU_ASSERT_EQUAL(addr_of(f, "B-------"), 4096);
    CU_ASSERT_EQUAL(addr_of(f, "C-------"), 8192);
    CU_ASSERT_EQUAL(addr_of(f, "D-------"), 16384);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.padding_bytes, 3964 + 3864 + 3160);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 600);
    kvftl_close(f);
}

/*
 * All (KAML): everything at the write pointer; C's DMA landed on a 4 KiB
 * boundary and is copied to 364, so memcpy counts 100+200+5000+300.
 */
static void test_all_policy_copies_dma_values(void)
{
    struct kvftl *f = open_policy(KVFTL_PACK_ALL);
    fig7_requests(f);
    CU_ASSERT_EQUAL(addr_of(f, "C-------"), 364);
    CU_ASSERT_EQUAL(addr_of(f, "D-------"), 5396);
    CU_ASSERT_EQUAL(f->space.data.wp, 5728);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 5600);
    CU_ASSERT_EQUAL(st.padding_bytes, 0);
    kvftl_close(f);
}

/*
 * One firmware CPU does every packing copy (2000 B/us). Under "all", A
 * (100 B inline, copy 50 ns) and C (5000 B by DMA landed on a 4 KiB
 * boundary, copied to 132: 2500 ns) both arrive at t=0: A is done at 50
 * and C's copy waits for the CPU, so C is done at 50 + 2500 = 2550, not
 * 2500. D (300 B inline, 150 ns) arrives at 10000, after the CPU went idle,
 * and is done at 10150 without waiting.
 */
static void test_copies_serialise_on_one_cpu(void)
{
    struct kvftl *f = open_policy(KVFTL_PACK_ALL);
    static uint8_t v[5000];
    struct kvftl_store_req reqs[] = {
        {.key = "A-------",
         .key_bytes = 8,
         .value = v,
         .value_bytes = 100,
         .inline_bytes = 100,
         .arrival_ns = 0},
        {.key = "C-------",
         .key_bytes = 8,
         .value = v,
         .value_bytes = 5000,
         .inline_bytes = 0,
         .arrival_ns = 0},
        {.key = "D-------",
         .key_bytes = 8,
         .value = v,
         .value_bytes = 300,
         .inline_bytes = 300,
         .arrival_ns = 10000},
    };
    uint64_t want[] = {50, 2550, 10150};
    for (int i = 0; i < 3; i++) {
        struct kvftl_cpl cpl;
        kvftl_store(f, &reqs[i], &cpl);
        CU_ASSERT_EQUAL(cpl.status, 0);
        CU_ASSERT_EQUAL(cpl.done_ns, want[i]);
    }
    CU_ASSERT_EQUAL(stats(f).memcpy_bytes, 5400);
    kvftl_close(f);
}

/* All: a DMA value whose landing address is the write pointer (0) needs no copy. */
static void test_all_policy_aligned_dma_not_copied(void)
{
    struct kvftl *f = open_policy(KVFTL_PACK_ALL);
    CU_ASSERT_EQUAL(put(f, "C-------", 5000, 0xc, true), 0);
    CU_ASSERT_EQUAL(stats(f).memcpy_bytes, 0);
    kvftl_close(f);
}

/*
 * Hybrid value (4096 B by DMA + 904 B inline) is placed as a DMA value;
 * only its inline part is copied. Host bytes are split by arrival.
 */
static void test_hybrid_value_placed_as_dma(void)
{
    struct kvftl *f = open_policy(KVFTL_PACK_SELECTIVE);
    static uint8_t v[5000];
    put(f, "A-------", 100, 0xa, false);
    struct kvftl_store_req r = {
        .key = "H-------", .key_bytes = 8, .value = v, .value_bytes = 5000, .inline_bytes = 904};
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    CU_ASSERT_EQUAL(addr_of(f, "H-------"), 4096);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.memcpy_bytes, 100 + 904);
    CU_ASSERT_EQUAL(st.host_bytes_in_inline, 100 + 904);
    CU_ASSERT_EQUAL(st.host_bytes_in_dma, 4096);
    kvftl_close(f);
}

/*
 * DLT of 2 entries: C1 at 4096 and C2 at 12288 go ahead of wp; C3 finds
 * the table full, so it is drained (wp jumps past C1 and C2, gaps padded)
 * and C3 is placed as under selective at 20480.
 */
static void test_dlt_full_drains(void)
{
    struct kvftl_config c = small_config();
    c.placement_unit_bytes = 1;
    c.packing = KVFTL_PACK_BACKFILL;
    c.dlt_entries = 2;
    struct kvftl *f = open_or_die(&c);
    put(f, "A-------", 100, 0xa, false);
    put(f, "C1------", 5000, 1, true);
    put(f, "C2------", 5000, 2, true);
    CU_ASSERT_EQUAL(addr_of(f, "C2------"), 12288);
    CU_ASSERT_EQUAL(f->space.data.wp, 132);
    CU_ASSERT_TRUE(dlt_full(&f->vl.pk.dlt));
    put(f, "C3------", 5000, 3, true);
    CU_ASSERT_EQUAL(addr_of(f, "C3------"), 20480);
    CU_ASSERT_EQUAL(f->space.data.wp, 25512);
    CU_ASSERT_TRUE(dlt_empty(&f->vl.pk.dlt));
    CU_ASSERT_EQUAL(stats(f).padding_bytes, (4096 - 132) + (12288 - 9128) + (20480 - 17320));
    CU_ASSERT_EQUAL(get_check(f, "C2------", 5000, 2), 0);
    kvftl_close(f);
}

/*
 * With 2 buffer entries the DMA value at 4096..9128 would need page 2,
 * outside the window [0, 2): it is placed as under selective instead.
 */
static void test_backfill_window_too_small(void)
{
    struct kvftl_config c = small_config();
    c.placement_unit_bytes = 1;
    c.packing = KVFTL_PACK_BACKFILL;
    c.buffer_entries = 2;
    struct kvftl *f = open_or_die(&c);
    put(f, "A-------", 100, 0xa, false);
    put(f, "C-------", 5000, 0xc, true);
    CU_ASSERT_EQUAL(addr_of(f, "C-------"), 4096);
    CU_ASSERT_EQUAL(f->space.data.wp, 9128);
    CU_ASSERT_TRUE(dlt_empty(&f->vl.pk.dlt));
    CU_ASSERT_EQUAL(stats(f).padding_bytes, 3964);
    kvftl_close(f);
}

/*
 * A stripe finished while the page buffer's window is full and the write
 * pointer is past it (backfill, 4 buffer entries, 4 KiB pages, 1 KiB
 * placement; a fuzzer's finding): the stripe's last blob does not fit, so
 * the rest of the stripe is padded from the write pointer, which must
 * program the window's oldest page as a blob written there would. It was a
 * failed assertion, a crash of the device.
 */
static void test_pad_past_full_window(void)
{
    struct kvftl_config c;
    kvftl_config_small(&c, (struct kvftl_small_geometry){.channels = 1,
                                                         .dies_per_channel = 2,
                                                         .blocks_per_die = 8,
                                                         .pages_per_block = 272,
                                                         .page_size_bytes = 4096});
    c.gc_high_watermark_blocks = 3;
    c.gc_low_watermark_blocks = 2;
    c.index_page_bytes = 4096;
    c.index_dram_bytes = 256 * 1024;
    c.buffer_entries = 4;
    c.dlt_entries = 4;
    c.packing = KVFTL_PACK_BACKFILL;
    c.plp = true;
    c.placement_unit_bytes = 1024;
    struct kvftl *f = open_or_die(&c);
    static const struct {
        const char *key;
        uint32_t value_bytes;
        bool dma;
    } st[] = {
        {"key-0-12byte", 1828922, false},
        {"key-1-12byte", 1019, true},
        {"key-2-of-thirty-bytes--------", 4000, true},
        {"key-3-of-thirty-bytes--------", 4000, true},
        {"key-4-of-thirty-bytes--------", 2083392, true},
    };
    for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
        CU_ASSERT_EQUAL(put(f, st[i].key, st[i].value_bytes, (uint8_t)(0x41 + i), st[i].dma),
                        KVFTL_OK);
    }
    CU_ASSERT_EQUAL(f->space.data.stripe, 1u); /* the last blob opened the second stripe */
    for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
        CU_ASSERT_EQUAL(get_check(f, st[i].key, st[i].value_bytes, (uint8_t)(0x41 + i)), 0);
    }
    assert_consistent(f);
    kvftl_close(f);
}

/* ------------------------------------------------------------------ */
/* Per-page data area (page_data_bytes)                                */
/* ------------------------------------------------------------------ */

/* 8 KiB pages of which 6 KiB hold blobs, byte placement, packing @p. */
static struct kvftl_config data_area_config(enum kvftl_packing p)
{
    struct kvftl_config c = small_config();
    c.page_size_bytes = 8192;
    c.placement_unit_bytes = 1;
    c.page_data_bytes = 6144;
    c.packing = p;
    return c;
}

/*
 * The pm983 preset's layout (32 KiB pages, 24.5 KiB data area, 1 KiB unit
 * for small blobs only), 16-byte keys: a 24 KiB value (blob 24616) fits one
 * data area, so 4 of them program 4 pages, one page each at 0, 32768,
 * 65536, 98304; a 25 KiB value (blob 25640) does not, so it occupies two
 * whole pages and 4 of them program 8 pages, at 0, 65536, 131072, 196608.
 * This is the characterization paper's Fig. 5 step at 25 KB.
 */
static void test_data_area_24k_vs_25k_values(void)
{
    for (int big = 0; big < 2; big++) {
        struct kvftl_config c = small_config();
        c.page_size_bytes = 32768;
        c.pages_per_block = 96;
        c.large_blob_unit_bytes = 1;
        c.page_data_bytes = 24 * 1024 + 512;
        c.packing = KVFTL_PACK_ALL;
        struct kvftl *f = open_or_die(&c);
        uint32_t vlen = big ? 25 * 1024 : 24 * 1024;
        char key[17];
        for (int i = 0; i < 4; i++) {
            key_of(key, i);
            CU_ASSERT_EQUAL(put(f, key, vlen, (uint8_t)i, true), 0);
            CU_ASSERT_EQUAL(addr_of(f, key), (uint64_t)i * (big ? 65536 : 32768));
        }
        flush(f);
        struct kvftl_stats st = stats(f);
        CU_ASSERT_EQUAL(st.nand_data_pages_programmed, big ? 8 : 4);
        CU_ASSERT_EQUAL(st.live_nand_bytes, big ? 4 * 65536 : 4 * 24616);
        for (int i = 0; i < 4; i++) {
            key_of(key, i);
            CU_ASSERT_EQUAL(get_check(f, key, vlen, (uint8_t)i), 0);
        }
        assert_consistent(f);
        kvftl_close(f);
    }
}

/*
 * 8 KiB pages, 6144-byte data areas, packing all, 8-byte keys:
 *   A 4000 B -> blob 4032 at 0
 *   B 2000 B -> blob 2032 at 4032 (ends at 6064, inside the data area)
 *   C  100 B -> blob  132 would end at 6196, past the data area: next page,
 *               8192 (2128 bytes padded)
 *   D 7000 B -> blob 7032, larger than a data area: two whole pages,
 *               starting a page: 16384 (8060 padded before, 9352 after)
 *   E   10 B -> blob 42 at 32768, right after D's two pages
 * Live NAND bytes 4032 + 2032 + 132 + 16384 + 42; padding 2128 + 8060 + 9352;
 * after a flush 5 pages are programmed. Without the data area (page_fit
 * only) C would have gone at 6064 and D at 6196.
 */
static void test_data_area_small_blob_starts_next_page(void)
{
    struct kvftl_config c = data_area_config(KVFTL_PACK_ALL);
    struct kvftl *f = open_or_die(&c);
    static const struct placed_pair pairs[] = {
        {"A-------", 4000, 1, false, 0},   {"B-------", 2000, 2, false, 4032},
        {"C-------", 100, 3, false, 8192}, {"D-------", 7000, 4, false, 16384},
        {"E-------", 10, 5, false, 32768},
    };
    put_placed(f, pairs, 5);
    CU_ASSERT_EQUAL(f->space.data.wp, 32810);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.live_nand_bytes, 4032 + 2032 + 132 + 16384 + 42);
    CU_ASSERT_EQUAL(st.padding_bytes, 2128 + 8060 + 9352);
    flush(f);
    CU_ASSERT_EQUAL(stats(f).nand_data_pages_programmed, 5);
    assert_placed_read_back(f, pairs, 5);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * Block policy with the data area: every blob at a 4 KiB boundary and
 * within its page's 6144 bytes. A 1000 B DMA value (blob 1032) at 0; B
 * 2000 B (blob 2032) at 4096 would end at 6128, inside; C 2100 B (blob
 * 2132) at 12288 would end at 6228 in its page, past 6144: next page, 16384.
 */
static void test_data_area_block_policy(void)
{
    struct kvftl_config c = data_area_config(KVFTL_PACK_BLOCK);
    struct kvftl *f = open_or_die(&c);
    static const struct placed_pair pairs[] = {
        {"A-------", 1000, 1, true, 0},
        {"B-------", 2000, 2, true, 4096},
        {"X-------", 100, 3, true, 8192},
        {"C-------", 2100, 4, true, 16384},
    };
    put_placed(f, pairs, 4);
    CU_ASSERT_EQUAL(get_check(f, "C-------", 2100, 4), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * Backfill with the data area, 8-byte keys:
 *   I1 1968 B inline -> blob 2000 at 0
 *   M1 3000 B by DMA -> blob 3032; 4096 + 3032 passes the data area, so it
 *                       goes ahead of the write pointer at 8192 (DLT)
 *   I2 3000 B inline -> blob 3032 fills the gap at 2000 (ends at 5032,
 *                       inside the data area): one backfill
 *   I3 4200 B inline -> blob 4232 at 5032 would pass 6144, and the next
 *                       page is M1's: the DLT head is consumed (5032..8192
 *                       padded), wp = 11224, and I3 (3032 + 4232 > 6144 in
 *                       that page) starts page 2, 16384
 * Without the data-area check I3 would have "fit" the gap at 5032.
 */
static void test_data_area_backfill_gap(void)
{
    struct kvftl_config c = data_area_config(KVFTL_PACK_BACKFILL);
    struct kvftl *f = open_or_die(&c);
    static const struct placed_pair pairs[] = {
        {"I1------", 1968, 1, false, 0},
        {"M1------", 3000, 2, true, 8192},
        {"I2------", 3000, 3, false, 2000},
        {"I3------", 4200, 4, false, 16384},
    };
    put_placed(f, pairs, 4);
    CU_ASSERT_EQUAL(f->space.data.wp, 16384 + 4232);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.dlt_backfills, 1);
    CU_ASSERT_EQUAL(st.padding_bytes, (8192 - 5032) + (16384 - 11224));
    CU_ASSERT_EQUAL(get_check(f, "M1------", 3000, 2), 0);
    CU_ASSERT_EQUAL(get_check(f, "I3------", 4200, 4), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/* page_data_bytes is checked: range, unit, and the largest blob must fit a stripe. */
static void test_data_area_config_check(void)
{
    char err[256];
    struct kvftl_config c = data_area_config(KVFTL_PACK_ALL);
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), 0);
    c.page_data_bytes = 2048;
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "page_data_bytes is 2048; it must be 0 (the whole page) or a "
                                "multiple of the large blob unit (1) from 4096 to "
                                "page_size_bytes (8192)");
    c.page_data_bytes = 8193;
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
    c = data_area_config(KVFTL_PACK_ALL);
    c.placement_unit_bytes = 1024;
    c.page_data_bytes = 6000; /* not a multiple of the 1 KiB unit */
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "page_data_bytes is 6000; it must be 0 (the whole page) or a "
                                "multiple of the large blob unit (1024) from 4096 to "
                                "page_size_bytes (8192)");
    /* 2 MiB + 279 B in 4096-byte data areas: 513 pages of 8 KiB, more than 300 */
    c = data_area_config(KVFTL_PACK_ALL);
    c.pages_per_block = 300;
    c.page_data_bytes = 4096;
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "page_data_bytes is 4096; the largest blob would occupy 4202496 "
                                "bytes of whole pages, more than an erase stripe (2457600 "
                                "bytes): raise it or enlarge the stripe");
    c.page_data_bytes = 0;
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), 0);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_fig7_selective),
    TAP_TEST_FN(test_fig7_backfill),
    TAP_TEST_FN(test_backfill_jumps_past_dma_value),
    TAP_TEST_FN(test_fig7_pages_selective_vs_backfill),
    TAP_TEST_FN(test_block_policy),
    TAP_TEST_FN(test_all_policy_copies_dma_values),
    TAP_TEST_FN(test_all_policy_aligned_dma_not_copied),
    TAP_TEST_FN(test_copies_serialise_on_one_cpu),
    TAP_TEST_FN(test_hybrid_value_placed_as_dma),
    TAP_TEST_FN(test_dlt_full_drains),
    TAP_TEST_FN(test_backfill_window_too_small),
    TAP_TEST_FN(test_pad_past_full_window),
    TAP_TEST_FN(test_data_area_24k_vs_25k_values),
    TAP_TEST_FN(test_data_area_small_blob_starts_next_page),
    TAP_TEST_FN(test_data_area_block_policy),
    TAP_TEST_FN(test_data_area_backfill_gap),
    TAP_TEST_FN(test_data_area_config_check),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("packing", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
