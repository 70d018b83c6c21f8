/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Value log: blob format, placement unit, page spanning, buffer, option and size semantics. */
#include "helpers.h"

static const char *K16[] = {"key-000000000000", "key-000000000001", "key-000000000002"};

/* A stored pair is on flash as header {0xb1, 4, 50, seq 1, XXH3 checksum} + key + value. */
/*
 * A pad record's length is bytes 4..7. One that starts fewer than 8 bytes
 * before its stripe's end holds no length inside the stripe: it is not a
 * pad record we wrote (0), and nothing past the stripe is read. The records
 * sit at the very end of exact-size heap blocks, so ASan flags any over-read.
 */
static void test_pad_length_bounded_by_stripe(void)
{
    uint8_t *tail = malloc(4);
    memcpy(tail, (uint8_t[]){REC_PAD, 0, 0, 0}, 4);
    CU_ASSERT_EQUAL(stream_pad_len(tail, 4), 0);
    free(tail);
    uint8_t *seven = malloc(7);
    memcpy(seven, (uint8_t[]){REC_PAD, 0, 0, 0, 0x10, 0, 0}, 7);
    CU_ASSERT_EQUAL(stream_pad_len(seven, 7), 0);
    free(seven);
    uint8_t *whole = malloc(8);
    memcpy(whole, (uint8_t[]){REC_PAD, 0, 0, 0, 0x10, 0, 0, 0}, 8);
    CU_ASSERT_EQUAL(stream_pad_len(whole, 8), 16);
    whole[4] = 7; /* shorter than the record itself */
    CU_ASSERT_EQUAL(stream_pad_len(whole, 8), 0);
    free(whole);
}

static void test_blob_header_on_flash(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "key1", 50, 0x11, false), 0);
    flush(f);
    uint8_t p[78];
    nand_copy_out(&f->nand, 0, p, sizeof(p));
    struct blob_header h;
    memcpy(&h, p, sizeof(h));
    CU_ASSERT_EQUAL(h.type, REC_PAIR);
    CU_ASSERT_EQUAL(h.key_bytes, 4);
    CU_ASSERT_EQUAL(h.value_bytes, 50);
    CU_ASSERT_EQUAL(h.seq, 1);
    CU_ASSERT_EQUAL(memcmp(p + 24, "key1", 4), 0);
    CU_ASSERT_EQUAL(p[28], 0x11);
    CU_ASSERT_EQUAL(p[77], 0x11);
    CU_ASSERT_EQUAL(h.checksum, blob_checksum(REC_PAIR, 4, 50, 1, p + 24, p + 28));
    kvftl_close(f);
}

/* 1 KiB placement: three 90-byte blobs start at 0, 1024, 2048; the write pointer is at 3072. */
static void test_placement_unit_1k(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(put(f, K16[i], 50, (uint8_t)i, false), 0);
    }
    CU_ASSERT_EQUAL(addr_of(f, K16[0]), 0);
    CU_ASSERT_EQUAL(addr_of(f, K16[1]), 1024);
    CU_ASSERT_EQUAL(addr_of(f, K16[2]), 2048);
    CU_ASSERT_EQUAL(f->space.data.wp, 3072);
    kvftl_close(f);
}

/*
 * Space amplification of 50-byte values with 16-byte keys at 1 KiB
 * placement (the characterization paper's Fig. 7 case): each pair holds
 * 1024 NAND bytes for 66 user bytes, 1024/66 = 15.5151...
 */
static void test_space_amplification_1k_50b(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 100, 1);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.live_keys, 100);
    CU_ASSERT_EQUAL(st.live_user_bytes, 6600);
    CU_ASSERT_EQUAL(st.live_nand_bytes, 102400);
    CU_ASSERT_DOUBLE_EQUAL(st.space_amplification, 1024.0 / 66.0, 1e-12);
    kvftl_close(f);
}

/* Byte-granular placement packs the same blobs back to back: 0, 90, 180; SA = 90/66. */
static void test_placement_unit_1_byte(void)
{
    struct kvftl_config c = small_config();
    c.placement_unit_bytes = 1;
    struct kvftl *f = open_or_die(&c);
    for (int i = 0; i < 3; i++) {
        put(f, K16[i], 50, (uint8_t)i, false);
    }
    CU_ASSERT_EQUAL(addr_of(f, K16[1]), 90);
    CU_ASSERT_EQUAL(addr_of(f, K16[2]), 180);
    CU_ASSERT_EQUAL(f->space.data.wp, 270);
    CU_ASSERT_DOUBLE_EQUAL(stats(f).space_amplification, 90.0 / 66.0, 1e-12);
    CU_ASSERT_EQUAL(get_check(f, K16[1], 50, 1), 0);
    kvftl_close(f);
}

/* 4 KiB placement (block-SSD baseline): blobs at 0 and 4096, 8192 NAND bytes live. */
static void test_placement_unit_4k(void)
{
    struct kvftl_config c = small_config();
    c.placement_unit_bytes = 4096;
    struct kvftl *f = open_or_die(&c);
    put(f, K16[0], 50, 0, false);
    put(f, K16[1], 50, 1, false);
    CU_ASSERT_EQUAL(addr_of(f, K16[1]), 4096);
    CU_ASSERT_EQUAL(stats(f).live_nand_bytes, 8192);
    kvftl_close(f);
}

/*
 * A 10000-byte value with a 3-byte key is a 10027-byte blob occupying
 * 10240 bytes: pages 0 and 1 are full and programmed at once, page 2 waits
 * in the buffer until Flush pads it. Padding: 213 (unit) + 2048 (flush).
 */
static void test_page_spanning_blob(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "big", 10000, 0xc3, false), 0);
    CU_ASSERT_EQUAL(stats(f).nand_data_pages_programmed, 2);
    CU_ASSERT_EQUAL(get_check(f, "big", 10000, 0xc3),
                    0); /* pages 0-1 from NAND, 2 from the buffer */
    flush(f);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, 3);
    CU_ASSERT_EQUAL(st.padding_bytes, 2261);
    CU_ASSERT_EQUAL(get_check(f, "big", 10000, 0xc3), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * A Retrieve's key check views the record whole (one lookup in the backing
 * store) and the read verifies that view: the bytes, the simulated times and
 * the NAND reads are those of the header-and-key check followed by a read
 * of the whole record. Two identical devices, one each way. A record over
 * two NAND pages is checked the old way (no view returned), a different key
 * returns none, and a damaged record read from the view is refused.
 */
static void test_record_view_on_key_check(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_HASH; /* the hash design's find_record() */
    c.hash_seed = 7;
    struct kvftl *a = open_or_die(&c), *b = open_or_die(&c);
    struct kvftl *dev[2] = {a, b};
    for (int d = 0; d < 2; d++) {
        CU_ASSERT_EQUAL(put(dev[d], "key1", 50, 0x11, false), 0);
        CU_ASSERT_EQUAL(put(dev[d], "big", 10000, 0xc3, false), 0);
        flush(dev[d]);
    }
    uint64_t loc[2], t[2];
    const uint8_t *rec[2] = {NULL, NULL}, *blob[2];
    for (int d = 0; d < 2; d++) {
        struct index_pos pos;
        uint64_t h = index_hash(&dev[d]->index.hash.idx, "key1", 4);
        t[d] = 1000;
        CU_ASSERT_TRUE(index_find_record(&dev[d]->index.hash.idx, h, "key1", 4, &loc[d], &pos,
                                         &t[d], d ? &rec[d] : NULL));
        blob[d] = vlog_read_record(&dev[d]->vl, loc[d], REC_PAIR, 4,
                                   loc_addr(loc[d]) >> dev[d]->nand.geo.page_shift, rec[d], &t[d]);
    }
    CU_ASSERT_EQUAL(loc[0], loc[1]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rec[1]);
    CU_ASSERT_PTR_EQUAL(blob[1], rec[1]); /* the view, verified, not a second read of it */
    CU_ASSERT_PTR_NOT_NULL_FATAL(blob[0]);
    CU_ASSERT_EQUAL(memcmp(blob[0], blob[1], 24 + 4 + 50), 0);
    CU_ASSERT_EQUAL(blob[1][28], 0x11);
    CU_ASSERT_EQUAL(blob[1][77], 0x11);
    CU_ASSERT_EQUAL(t[0], t[1]);
    CU_ASSERT(t[1] > 1000); /* the header and key came from NAND */
    CU_ASSERT_EQUAL(a->nand.pages_read, b->nand.pages_read);
    CU_ASSERT_EQUAL(b->nand.pages_read, 1);

    /* over two pages: checked and read as before, no view (both devices read alike) */
    for (int d = 0; d < 2; d++) {
        uint64_t tb = 0, bigloc;
        struct index_pos pos;
        const uint8_t *r = (const uint8_t *)"not cleared";
        CU_ASSERT_TRUE(index_find_record(&dev[d]->index.hash.idx,
                                         index_hash(&dev[d]->index.hash.idx, "big", 3), "big", 3,
                                         &bigloc, &pos, &tb, &r));
        CU_ASSERT_PTR_NULL(r);
        CU_ASSERT_EQUAL(loc_len(bigloc), 24 + 3 + 10000);
        /* another key at key1's place: no match, no view */
        r = (const uint8_t *)"not cleared";
        CU_ASSERT_FALSE(vlog_key_matches(&dev[d]->vl, loc[d], "key2", 4, &tb, &r));
        CU_ASSERT_PTR_NULL(r);
    }

    /* a damaged value under an intact key: the view is refused as the read is */
    for (int d = 0; d < 2; d++) {
        nand_page_ptr(&dev[d]->nand, loc_addr(loc[d]) >> dev[d]->nand.geo.page_shift)[40] ^= 1;
        t[d] = 0;
        struct index_pos p2;
        CU_ASSERT_TRUE(index_find_record(&dev[d]->index.hash.idx,
                                         index_hash(&dev[d]->index.hash.idx, "key1", 4), "key1", 4,
                                         &loc[d], &p2, &t[d], d ? &rec[d] : NULL));
        CU_ASSERT_PTR_NULL(vlog_read_record(&dev[d]->vl, loc[d], REC_PAIR, 4,
                                            loc_addr(loc[d]) >> dev[d]->nand.geo.page_shift, rec[d],
                                            &t[d]));
    }
    CU_ASSERT_PTR_NOT_NULL(rec[1]);
    CU_ASSERT_EQUAL(t[0], t[1]);
    kvftl_close(a);
    kvftl_close(b);
}

/*
 * A Retrieve senses the blob's page once and moves all of its bytes over
 * the channel: from idle at t = 1 s, tR 50 us, then the header and key
 * (25 B at 800 B/us: 32 ns) for the key check and the 1000-byte value
 * (1,250 ns): done at 1 s + 51,282 ns.
 */
static void test_retrieve_moves_value_over_channel(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "k", 1000, 0x6b, false), 0);
    flush(f);
    uint64_t read_before = f->nand.pages_read;
    static uint8_t buf[1000];
    struct kvftl_cpl cpl;
    kvftl_retrieve(f, "k", 1, buf, 0, sizeof(buf), 1000000000, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.xfer_bytes, 1000);
    CU_ASSERT_EQUAL(buf[999], 0x6b);
    CU_ASSERT_EQUAL(f->nand.pages_read - read_before, 1);
    CU_ASSERT_EQUAL(cpl.done_ns, 1000000000 + 50000 + 32 + 1250);
    kvftl_close(f);
}

/* Retrieve at an offset copies from there; offset == size is an empty success; beyond is
 * INVALID_FIELD. */
static void test_partial_retrieve(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    uint8_t v[100], out[100];
    for (int i = 0; i < 100; i++) {
        v[i] = (uint8_t)i;
    }
    struct kvftl_store_req r = {
        .key = "p", .key_bytes = 1, .value = v, .value_bytes = 100, .inline_bytes = 100};
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.value_bytes, 100);
    kvftl_retrieve(f, "p", 1, out, 40, 10, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    CU_ASSERT_EQUAL(cpl.value_bytes, 100);
    CU_ASSERT_EQUAL(cpl.xfer_bytes, 10);
    CU_ASSERT_EQUAL(out[0], 40);
    CU_ASSERT_EQUAL(out[9], 49);
    kvftl_retrieve(f, "p", 1, out, 100, 10, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    CU_ASSERT_EQUAL(cpl.xfer_bytes, 0);
    kvftl_retrieve(f, "p", 1, out, 101, 10, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    CU_ASSERT_EQUAL(cpl.value_bytes, 100);
    kvftl_retrieve(f, "p", 1, out, 0, 30, 0, &cpl); /* short buffer: partial copy, success */
    CU_ASSERT_EQUAL(cpl.status, 0);
    CU_ASSERT_EQUAL(cpl.xfer_bytes, 30);
    kvftl_close(f);
}

/* Key 1..255 bytes and value 0..2 MiB; outside gets the KV status codes. 2 MiB and 255 B work. */
static void test_invalid_sizes(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    static uint8_t v[KVFTL_VALUE_MAX_BYTES + 1];
    char key[257];
    memset(key, 'k', sizeof(key));
    struct kvftl_store_req r = {.key = key, .key_bytes = 0, .value = v, .value_bytes = 1};
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_KEY_SIZE);
    r.key_bytes = 256;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_KEY_SIZE);
    r.key_bytes = 255;
    r.value_bytes = KVFTL_VALUE_MAX_BYTES + 1;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_VALUE_SIZE);
    kvftl_retrieve(f, key, 0, v, 0, 1, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_KEY_SIZE);
    kvftl_delete(f, key, 256, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_KEY_SIZE);
    kvftl_exist(f, key, 0, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_KEY_SIZE);
    CU_ASSERT_EQUAL(stats(f).stores, 0);

    key[255] = 0;
    CU_ASSERT_EQUAL(put(f, key, KVFTL_VALUE_MAX_BYTES, 0x42, true), 0);
    CU_ASSERT_EQUAL(get_check(f, key, KVFTL_VALUE_MAX_BYTES, 0x42), 0);
    CU_ASSERT_EQUAL(put(f, "empty", 0, 0, false), 0);
    CU_ASSERT_EQUAL(get_check(f, "empty", 0, 0), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/* Store options: only-if-exists / only-if-absent, both at once is an invalid field. */
static void test_store_options(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    uint8_t v[8] = {0};
    struct kvftl_store_req r = {.key = "opt",
                                .key_bytes = 3,
                                .value = v,
                                .value_bytes = 8,
                                .inline_bytes = 8,
                                .options = KVFTL_STORE_ONLY_IF_EXISTS};
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_KEY_DOES_NOT_EXIST);
    r.options = KVFTL_STORE_ONLY_IF_ABSENT;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_KEY_EXISTS);
    r.options = KVFTL_STORE_ONLY_IF_EXISTS;
    v[0] = 9;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    r.options = KVFTL_STORE_ONLY_IF_EXISTS | KVFTL_STORE_ONLY_IF_ABSENT;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    r.options = 4;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    uint8_t out[8];
    kvftl_retrieve(f, "opt", 3, out, 0, 8, 0, &cpl);
    CU_ASSERT_EQUAL(out[0], 9);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.live_keys, 1);
    CU_ASSERT_EQUAL(st.stores, 2);
    /* after a delete the key is absent again for the options */
    del(f, "opt");
    r.options = KVFTL_STORE_ONLY_IF_EXISTS;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_KEY_DOES_NOT_EXIST);
    kvftl_close(f);
}

/* Delete makes Retrieve/Exist/Delete report KEY_DOES_NOT_EXIST and writes a 1 KiB tombstone. */
static void test_delete_and_exist(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(exist(f, "d"), KVFTL_KEY_DOES_NOT_EXIST);
    put(f, "d", 10, 1, false);
    CU_ASSERT_EQUAL(exist(f, "d"), 0);
    CU_ASSERT_EQUAL(del(f, "d"), 0);
    CU_ASSERT_EQUAL(exist(f, "d"), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(get_check(f, "d", 10, 1), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(del(f, "d"), KVFTL_KEY_DOES_NOT_EXIST);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.live_keys, 0);
    CU_ASSERT_EQUAL(st.live_nand_bytes, 0);
    CU_ASSERT_EQUAL(f->vl.live.tombstone_bytes, 1024);
    CU_ASSERT_EQUAL(f->space.data.wp, 2048);
    CU_ASSERT_EQUAL(st.deletes, 1);
    assert_consistent(f);
    kvftl_close(f);
}

/* Flush pads the partial page and programs it; a second Flush has nothing to do. */
static void test_flush_pads_partial_page(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    put(f, K16[0], 50, 0, false);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.padding_bytes, 934);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, 0);
    flush(f);
    st = stats(f);
    CU_ASSERT_EQUAL(st.padding_bytes, 4006);
    CU_ASSERT_EQUAL(st.nand_data_pages_programmed, 1);
    CU_ASSERT_EQUAL(f->space.data.wp, 4096);
    flush(f);
    CU_ASSERT_EQUAL(stats(f).nand_data_pages_programmed, 1);
    /* the next blob starts on the next page */
    put(f, K16[1], 50, 1, false);
    CU_ASSERT_EQUAL(addr_of(f, K16[1]), 4096);
    kvftl_close(f);
}

/*
 * Two buffer entries, 4096-byte blobs, everything arriving at t=0. Store 1
 * finishes after its 4064-byte copy (2032 ns at 2000 B/us); store 2's copy
 * waits for the firmware CPU, so it ends at 2032 + 2032 = 4064. Store 3
 * needs entry 0 again, whose page program ends at 2032 + 5120 + 500000 =
 * 507152; the CPU is free by then, so it completes at 507152 + 2032 = 509184.
 */
static void test_buffer_full_stalls_store(void)
{
    struct kvftl_config c = small_config();
    c.buffer_entries = 2;
    c.placement_unit_bytes = 4096;
    struct kvftl *f = open_or_die(&c);
    static uint8_t v[4064];
    const char *keys[] = {"key00001", "key00002", "key00003"};
    uint64_t want[] = {2032, 4064, 509184};
    for (int i = 0; i < 3; i++) {
        struct kvftl_store_req r = {.key = keys[i],
                                    .key_bytes = 8,
                                    .value = v,
                                    .value_bytes = 4064,
                                    .inline_bytes = 4064,
                                    .arrival_ns = 0};
        struct kvftl_cpl cpl;
        kvftl_store(f, &r, &cpl);
        CU_ASSERT_EQUAL(cpl.status, 0);
        CU_ASSERT_EQUAL(cpl.done_ns, want[i]);
    }
    CU_ASSERT_EQUAL(f->space.data.buf.stall_ns, 507152);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_STORE].count, 3);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_STORE].max_ns, 509184);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_STORE].p50_ns, 4064);
    kvftl_close(f);
}

/*
 * large_blob_unit_bytes = 1 with a 1 KiB placement unit (the pm983 preset's
 * choice): a blob smaller than 1 KiB takes one whole unit, a larger one
 * only its bytes. 8-byte keys, 24-byte header:
 *   A  50 B -> blob   82, padded to 1024, at 0
 *   B 1000 B -> blob 1032, not padded,    at 1024
 *   C  10 B -> blob   42, padded to 1024, at 2056 (units need not be aligned)
 * live NAND bytes 1024 + 1032 + 1024 = 3080 for 1060 key+value bytes;
 * padding 942 + 982 = 1924. Values read back and the check passes.
 */
static void test_large_blob_unit(void)
{
    struct kvftl_config c = small_config();
    c.large_blob_unit_bytes = 1;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "A-------", 50, 0xa, false), 0);
    CU_ASSERT_EQUAL(put(f, "B-------", 1000, 0xb, false), 0);
    CU_ASSERT_EQUAL(put(f, "C-------", 10, 0xc, false), 0);
    CU_ASSERT_EQUAL(addr_of(f, "A-------"), 0);
    CU_ASSERT_EQUAL(addr_of(f, "B-------"), 1024);
    CU_ASSERT_EQUAL(addr_of(f, "C-------"), 2056);
    CU_ASSERT_EQUAL(f->space.data.wp, 3080);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.live_nand_bytes, 3080);
    CU_ASSERT_EQUAL(st.padding_bytes, 1924);
    CU_ASSERT_EQUAL(get_check(f, "A-------", 50, 0xa), 0);
    CU_ASSERT_EQUAL(get_check(f, "B-------", 1000, 0xb), 0);
    CU_ASSERT_EQUAL(get_check(f, "C-------", 10, 0xc), 0);
    assert_consistent(f);
    kvftl_close(f);
    /* the unit must be a power of two no larger than placement_unit_bytes */
    char err[256];
    c.large_blob_unit_bytes = 2048;
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "large_blob_unit_bytes is 2048; it must be 0 or a power of two "
                                "from 1 to placement_unit_bytes (1024)");
}

/*
 * page_fit_blobs on 4 KiB pages, byte placement, packing all, 8-byte keys:
 *   A 3000 B -> blob 3032 at 0
 *   B 2000 B -> blob 2032: the page's rest (1064) is too small, one page is
 *               enough, so B starts at 4096 (1064 bytes padded); without
 *               page_fit it would be at 3032
 *   C 5000 B -> blob 5032, larger than a page: at the write pointer, 6128,
 *               straddling
 *   D  100 B -> blob 132 fits the rest of C's last page: at 11160
 */
static void test_page_fit_blobs(void)
{
    struct kvftl_config c = small_config();
    c.placement_unit_bytes = 1;
    c.page_fit_blobs = true;
    struct kvftl *f = open_or_die(&c);
    static const struct placed_pair pairs[] = {
        {"A-------", 3000, 0xa, false, 0},
        {"B-------", 2000, 0xb, false, 4096},
        {"C-------", 5000, 0xc, false, 6128},
        {"D-------", 100, 0xd, false, 11160},
    };
    put_placed(f, pairs, 4);
    CU_ASSERT_EQUAL(f->space.data.wp, 11292);
    CU_ASSERT_EQUAL(stats(f).padding_bytes, 1064);
    assert_placed_read_back(f, pairs, 4);
    assert_consistent(f);
    kvftl_close(f);
}

/* Config errors name the field, the value and the range; presets are valid and exact. */
static void test_config_check_and_presets(void)
{
    struct kvftl_config c = small_config();
    char err[256];
    c.placement_unit_bytes = 3;
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err,
                           "placement_unit_bytes is 3; it must be a power of two from 1 to 4096");
    c = small_config();
    c.page_size_bytes = 3000;
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err,
                           "page_size_bytes is 3000; it must be a power of two from 4096 to 65536");
    c = small_config();
    c.pages_per_block = 8;
    CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
    c = small_config();
    CU_ASSERT_EQUAL(kvftl_config_preset(&c, "no-such"), -1);
    CU_ASSERT_EQUAL(c.pages_per_block, 576); /* untouched */
    const char *names[] = {"default", "pm983", "cosmos"};
    uint32_t page[] = {16384, 32768, 16384};
    uint32_t unit[] = {1024, 1024, 1};
    uint32_t dies[] = {16, 32, 32};
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(kvftl_config_preset(&c, names[i]), 0);
        CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), 0);
        CU_ASSERT_EQUAL(c.page_size_bytes, page[i]);
        CU_ASSERT_EQUAL(c.placement_unit_bytes, unit[i]);
        CU_ASSERT_EQUAL(c.channels * c.dies_per_channel, dies[i]);
    }
    CU_ASSERT_EQUAL(c.packing, KVFTL_PACK_BACKFILL);
}

/* Every preset opens and round-trips a small, a page-spanning and a 2 MiB value. */
static void test_presets_round_trip(void)
{
    const char *names[] = {"default", "pm983", "cosmos"};
    for (int i = 0; i < 3; i++) {
        struct kvftl_config c;
        kvftl_config_preset(&c, names[i]);
        struct kvftl *f = open_or_die(&c);
        CU_ASSERT_EQUAL(put(f, "small", 50, 1, false), 0);
        CU_ASSERT_EQUAL(put(f, "span", 40000, 2, true), 0);
        CU_ASSERT_EQUAL(put(f, "max", KVFTL_VALUE_MAX_BYTES, 3, true), 0);
        CU_ASSERT_EQUAL(get_check(f, "small", 50, 1), 0);
        CU_ASSERT_EQUAL(get_check(f, "span", 40000, 2), 0);
        CU_ASSERT_EQUAL(get_check(f, "max", KVFTL_VALUE_MAX_BYTES, 3), 0);
        char err[256];
        CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
        CU_ASSERT_EQUAL(get_check(f, "max", KVFTL_VALUE_MAX_BYTES, 3), 0);
        CU_ASSERT_EQUAL(stats(f).live_keys, 3);
        assert_consistent(f);
        kvftl_close(f);
    }
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_blob_header_on_flash),
    TAP_TEST_FN(test_placement_unit_1k),
    TAP_TEST_FN(test_space_amplification_1k_50b),
    TAP_TEST_FN(test_placement_unit_1_byte),
    TAP_TEST_FN(test_placement_unit_4k),
    TAP_TEST_FN(test_page_spanning_blob),
    TAP_TEST_FN(test_record_view_on_key_check),
    TAP_TEST_FN(test_retrieve_moves_value_over_channel),
    TAP_TEST_FN(test_partial_retrieve),
    TAP_TEST_FN(test_invalid_sizes),
    TAP_TEST_FN(test_store_options),
    TAP_TEST_FN(test_delete_and_exist),
    TAP_TEST_FN(test_flush_pads_partial_page),
    TAP_TEST_FN(test_buffer_full_stalls_store),
    TAP_TEST_FN(test_large_blob_unit),
    TAP_TEST_FN(test_page_fit_blobs),
    TAP_TEST_FN(test_config_check_and_presets),
    TAP_TEST_FN(test_presets_round_trip),
    TAP_TEST_FN(test_pad_length_bounded_by_stripe),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("value_log", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
