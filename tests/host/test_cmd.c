/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libkvssd command encoding (host/lib/cmd.c): every operation's SQE dwords,
 * byte for byte, against <kvssd/nvme_kv.h> and <kvssd/ext.h>; and the
 * decoding of List / Iter Read data. No device needed.
 */
#include <string.h>

#include <CUnit/CUnit.h>
#include <kvssd/libkvssd.h>

#include "tap_cunit.h"

#define NSID 1u

static const uint8_t key16[16] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
                                  0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};

/* The key field (CDW2-3, CDW14-15) and CDW11 of a command are exactly these. */
static void check_key_dwords(const struct kvssd_cmd *c, uint32_t cdw2, uint32_t cdw3,
                             uint32_t cdw14, uint32_t cdw15, uint32_t cdw11)
{
    CU_ASSERT_EQUAL(c->sqe.cdw[2], cdw2);
    CU_ASSERT_EQUAL(c->sqe.cdw[3], cdw3);
    CU_ASSERT_EQUAL(c->sqe.cdw[14], cdw14);
    CU_ASSERT_EQUAL(c->sqe.cdw[15], cdw15);
    CU_ASSERT_EQUAL(c->sqe.cdw[11], cdw11);
}

/* Store of a 4-byte key and 100-byte value: opcode 01h, key in CDW2, CDW10 = size, CDW11 = klen. */
static void test_store_short_key(void)
{
    struct kvssd_cmd c;
    uint8_t v[100] = {0};
    kvssd_cmd_store(&c, NSID, "abcd", 4, 0, v, sizeof(v), 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x01);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], NSID);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x64636261); /* key byte 0 is the low byte */
    CU_ASSERT_EQUAL(c.sqe.cdw[3], 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 100);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 4);
    CU_ASSERT_EQUAL(c.sqe.cdw[14], 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[15], 0);
    CU_ASSERT_PTR_EQUAL(c.data, v);
    CU_ASSERT_EQUAL(c.data_len, 100);
    CU_ASSERT_FALSE(c.admin);
}

/* A 16-byte key fills CDW2-3 and CDW14-15; only-if-absent is bit 1 of CDW11[15:8]. */
static void test_store_16_byte_key_only_if_absent(void)
{
    struct kvssd_cmd c;
    kvssd_cmd_store(&c, NSID, key16, 16, 0, "x", 1, KVSSD_STORE_OPT_ONLY_IF_ABSENT);
    check_key_dwords(&c, 0x13121110, 0x17161514, 0x1b1a1918, 0x1f1e1d1c, 0x0210);
}

/* Only-if-exists is bit 0 of the Store Options byte: CDW11 = klen | 0x100. */
static void test_store_only_if_exists(void)
{
    struct kvssd_cmd c;
    kvssd_cmd_store(&c, NSID, "k", 1, 0, "v", 1, KVSSD_STORE_OPT_ONLY_IF_EXISTS);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0x0101);
}

/* A 255-byte key is not carried: CDW2[11:0] is the staged-key tag, the rest of the key field 0. */
static void test_store_long_key_tag_reference(void)
{
    struct kvssd_cmd c;
    uint8_t key[255];
    memset(key, 0xaa, sizeof(key));
    kvssd_cmd_store(&c, NSID, key, 255, 0xabc, "v", 1, 0);
    check_key_dwords(&c, 0xabc, 0, 0, 0, 0xff);
}

/* Key Stage (91h): CDW10[7:0] = 255, CDW11[11:0] = tag, the data pointer is the key. */
static void test_key_stage_255(void)
{
    struct kvssd_cmd c;
    uint8_t key[255] = {0};
    kvssd_cmd_key_stage(&c, NSID, key, 255, 4095);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x91);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], NSID);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 255);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 4095);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0);
    CU_ASSERT_PTR_EQUAL(c.data, key);
    CU_ASSERT_EQUAL(c.data_len, 255);
}

/* Retrieve: CDW10 = buffer size; size-only is a 0-byte buffer with no data pointer. */
static void test_retrieve_whole_and_size_only(void)
{
    struct kvssd_cmd c;
    uint8_t buf[512];
    kvssd_cmd_retrieve(&c, NSID, "key1", 4, 0, buf, sizeof(buf));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x02);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x3179656b);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 512);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 4);
    CU_ASSERT_PTR_EQUAL(c.data, buf);
    CU_ASSERT_EQUAL(c.data_len, 512);
    kvssd_cmd_retrieve(&c, NSID, "key1", 4, 0, buf, 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 0);
    CU_ASSERT_PTR_NULL(c.data);
    CU_ASSERT_EQUAL(c.data_len, 0);
}

/* Delete (10h) and Exist (14h) carry only the key; CDW10 stays 0. */
static void test_delete_exist(void)
{
    struct kvssd_cmd c;
    kvssd_cmd_delete(&c, NSID, "ab", 2, 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x10);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x6261);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 2);
    CU_ASSERT_PTR_NULL(c.data);
    kvssd_cmd_exist(&c, NSID, "ab", 2, 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x14);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 2);
}

/* List (06h): from the beginning CDW11 = 0 and no key; from a start key CDW11 = its length. */
static void test_list(void)
{
    struct kvssd_cmd c;
    uint8_t buf[4096];
    kvssd_cmd_list(&c, NSID, NULL, 0, 0, buf, sizeof(buf));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x06);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 4096);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0);
    kvssd_cmd_list(&c, NSID, "m", 1, 0, buf, sizeof(buf));
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x6d);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 1);
}

/* Flush (00h): opcode 0 and the NSID, nothing else. */
static void test_flush(void)
{
    struct kvssd_cmd c;
    kvssd_cmd_flush(&c, 7);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], 7);
    for (int i = 2; i < 16; i++) {
        CU_ASSERT_EQUAL(c.sqe.cdw[i], 0);
    }
}

/* Iterators: Open CDW10 prefix / CDW11 mask / CDW12[0] values; Read CDW10 size, CDW11 handle; Close
 * CDW10 handle. */
static void test_iterator_commands(void)
{
    struct kvssd_cmd c;
    uint8_t buf[8192];
    kvssd_cmd_iter_open(&c, NSID, 0x61620000, 0xffff0000, true);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x90);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 0x61620000);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0xffff0000);
    CU_ASSERT_EQUAL(c.sqe.cdw[12], 1);
    kvssd_cmd_iter_open(&c, NSID, 0, 0, false);
    CU_ASSERT_EQUAL(c.sqe.cdw[12], 0);
    kvssd_cmd_iter_read(&c, NSID, 15, buf, sizeof(buf));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x92);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 8192);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 15);
    CU_ASSERT_EQUAL(c.data_len, 8192);
    kvssd_cmd_iter_close(&c, NSID, 3);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x94);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 3);
}

/* Prefix word: key byte 0 in bits 31:24; the mask covers the given bytes; only 4 bytes count. */
static void test_prefix_word(void)
{
    uint32_t w, m;
    kvssd_prefix_word("ab", 2, &w, &m);
    CU_ASSERT_EQUAL(w, 0x61620000);
    CU_ASSERT_EQUAL(m, 0xffff0000);
    kvssd_prefix_word("abcdef", 6, &w, &m);
    CU_ASSERT_EQUAL(w, 0x61626364);
    CU_ASSERT_EQUAL(m, 0xffffffff);
    kvssd_prefix_word(NULL, 0, &w, &m);
    CU_ASSERT_EQUAL(w, 0);
    CU_ASSERT_EQUAL(m, 0);
}

/* Stock head, 4-byte key + 20-byte value: everything fits in CDW2,3,12-15; CDW10 = 20 | 4 << 24. */
static void test_inline_head_fits(void)
{
    struct kvssd_cmd c;
    uint8_t v[20];
    for (int i = 0; i < 20; i++) {
        v[i] = (uint8_t)(0xa0 + i);
    }
    uint32_t n = kvssd_cmd_inline_head(&c, NSID, "KEY!", 4, 0, 77, 20, 0, false, NULL, v, 20);
    CU_ASSERT_EQUAL(n, 20);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x81);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], NSID);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x2159454b);
    CU_ASSERT_EQUAL(c.sqe.cdw[3], 0xa3a2a1a0);
    CU_ASSERT_EQUAL(c.sqe.cdw[12], 0xa7a6a5a4);
    CU_ASSERT_EQUAL(c.sqe.cdw[13], 0xabaaa9a8);
    CU_ASSERT_EQUAL(c.sqe.cdw[14], 0xafaeadac);
    CU_ASSERT_EQUAL(c.sqe.cdw[15], 0xb3b2b1b0);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 20u | 4u << 24);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 77);
    CU_ASSERT_PTR_NULL(c.data);
    CU_ASSERT_EQUAL(c.data_len, 0);
}

/* Stock head, 3-byte key: value bytes follow the key without padding (value byte 0 in CDW2[31:24]).
 */
static void test_inline_head_odd_key_packing(void)
{
    struct kvssd_cmd c;
    uint8_t v[100];
    for (int i = 0; i < 100; i++) {
        v[i] = (uint8_t)i;
    }
    uint32_t n = kvssd_cmd_inline_head(&c, NSID, "abc", 3, 0, 1, 100,
                                       KVSSD_STORE_OPT_ONLY_IF_EXISTS, false, NULL, v, 100);
    CU_ASSERT_EQUAL(n, 21);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x00636261);
    CU_ASSERT_EQUAL(c.sqe.cdw[3], 0x04030201);
    CU_ASSERT_EQUAL(c.sqe.cdw[15], 0x14131211);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 100u | 1u << 22 | 3u << 24);
}

/* Stock head with a staged key: CDW2 = key tag, the payload starts at CDW3 (20 bytes). */
static void test_inline_head_long_key(void)
{
    struct kvssd_cmd c;
    uint8_t key[200], v[64];
    memset(key, 1, sizeof(key));
    memset(v, 0x5a, sizeof(v));
    uint32_t n = kvssd_cmd_inline_head(&c, NSID, key, 200, 0x123, 0x456, 64, 0, false, NULL, v, 64);
    CU_ASSERT_EQUAL(n, 20);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x123);
    CU_ASSERT_EQUAL(c.sqe.cdw[3], 0x5a5a5a5a);
    CU_ASSERT_EQUAL(c.sqe.cdw[15], 0x5a5a5a5a);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 64u | 200u << 24);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0x456);
}

/* Hybrid head of 4096+30 bytes: CDW11[16] set, the data pointer carries 4096 bytes, the tail is
 * inline. */
static void test_inline_head_hybrid(void)
{
    static uint8_t v[4096 + 30];
    struct kvssd_cmd c;
    v[4096] = 0xee;
    uint32_t n = kvssd_cmd_inline_head(&c, NSID, "kk", 2, 0, 9, sizeof(v), 0, true, v, v + 4096,
                                       30);
    CU_ASSERT_EQUAL(n, 22);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 9u | KVSSD_INLINE_HYBRID);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 4126u | 2u << 24);
    CU_ASSERT_PTR_EQUAL(c.data, v);
    CU_ASSERT_EQUAL(c.data_len, 4096);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x00ee6b6b);
}

/* Stock transfer: CDW10 = tag | seq << 12; payload CDW2,3,11,12,13,14,15; a short tail zero-fills
 * the rest. */
static void test_inline_xfer(void)
{
    struct kvssd_cmd c;
    uint8_t v[40];
    for (int i = 0; i < 40; i++) {
        v[i] = (uint8_t)(i + 1);
    }
    uint32_t n = kvssd_cmd_inline_xfer(&c, NSID, 0xfff, 0xfffff, v, 40);
    CU_ASSERT_EQUAL(n, 28);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x85);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], NSID);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 0xffffffff);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x04030201);
    CU_ASSERT_EQUAL(c.sqe.cdw[3], 0x08070605);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0x0c0b0a09);
    CU_ASSERT_EQUAL(c.sqe.cdw[15], 0x1c1b1a19);
    n = kvssd_cmd_inline_xfer(&c, NSID, 5, 2, v, 5);
    CU_ASSERT_EQUAL(n, 5);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 5u | 2u << 12);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x04030201);
    CU_ASSERT_EQUAL(c.sqe.cdw[3], 0x05);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0);
}

/* Full head (89h): key in the key field, CDW11[7:0] tag, 35 payload bytes in CDW11[31:8], CDW4-9,
 * CDW12-13. */
static void test_inline_head_full(void)
{
    struct kvssd_cmd c;
    uint8_t v[40];
    for (int i = 0; i < 40; i++) {
        v[i] = (uint8_t)(0x40 + i);
    }
    uint32_t n = kvssd_cmd_inline_head_full(&c, NSID, "abcd", 4, 0x1ab, 40, 0, v, 40);
    CU_ASSERT_EQUAL(n, 35);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x89);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x64636261);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0x424140abu); /* tag masked to 8 bits */
    CU_ASSERT_EQUAL(c.sqe.cdw[4], 0x46454443);
    CU_ASSERT_EQUAL(c.sqe.cdw[9], 0x5a595857);
    CU_ASSERT_EQUAL(c.sqe.cdw[12], 0x5e5d5c5b);
    CU_ASSERT_EQUAL(c.sqe.cdw[13], 0x6261605f);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 40u | 4u << 24);
}

/* Full transfer (8Dh): CDW1 = tag | seq << 12 (no NSID), 56 payload bytes in CDW2..CDW15. */
static void test_inline_xfer_full(void)
{
    struct kvssd_cmd c;
    uint8_t v[60];
    for (int i = 0; i < 60; i++) {
        v[i] = (uint8_t)i;
    }
    uint32_t n = kvssd_cmd_inline_xfer_full(&c, 0x12, 3, v, 60);
    CU_ASSERT_EQUAL(n, 56);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x8d);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], 0x12u | 3u << 12);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x03020100);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 0x23222120);
    CU_ASSERT_EQUAL(c.sqe.cdw[15], 0x37363534);
}

/* An Identify Namespace (KV) page with KVMKL @kvmkl and, when @long_max is
 * nonzero, our vendor area with signature @sig and that long-key maximum. */
static void id_page(uint8_t *id, uint16_t kvmkl, const char *sig, uint16_t long_max)
{
    memset(id, 0, 4096);
    id[0] = 0x00;
    id[1] = 0x10; /* NSZE 4096 */
    id[16] = 0x00;
    id[17] = 0x02; /* NUSE 512 */
    id[32] = 0x00;
    id[33] = 0x01; /* NOVG 256 */
    id[72] = (uint8_t)kvmkl;
    id[73] = (uint8_t)(kvmkl >> 8);
    id[76] = 0x00;
    id[77] = 0x00;
    id[78] = 0x20; /* KVMVL 2 MiB */
    id[80] = 100; /* KVMNK */
    if (long_max) {
        memcpy(id + 3840, sig, 8);
        id[3848] = 1;
        id[3850] = (uint8_t)long_max;
        id[3851] = (uint8_t)(long_max >> 8);
    }
}

/* Long-key discovery from Identify: our page (KVMKL 16, vendor area
 * "KVSSDEXT" with 255) gives max_key_bytes 255 and format_max_key_bytes 16;
 * a standard device's page (KVMKL 16 or even 255, no vendor area) gives 16,
 * since without Key Stage a standard command carries 16; a vendor area with
 * another signature or a maximum outside 17..255 is ignored (16); KVMKL 0 is
 * not a KV namespace. */
static void test_id_ns_kv_decode(void)
{
    static uint8_t id[4096];
    struct kvssd_dev_info info;

    id_page(id, 16, "KVSSDEXT", 255);
    memset(&info, 0, sizeof(info));
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 255);
    CU_ASSERT_EQUAL(info.format_max_key_bytes, 16);
    CU_ASSERT_EQUAL(info.max_value_bytes, 2u * 1024 * 1024);
    CU_ASSERT_EQUAL(info.max_keys, 100);
    CU_ASSERT_EQUAL(info.nsze_bytes, 4096);
    CU_ASSERT_EQUAL(info.nuse_bytes, 512);
    CU_ASSERT_EQUAL(info.optimal_value_granularity_bytes, 256);

    id_page(id, 16, "KVSSDEXT", 40);
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 40);

    id_page(id, 16, NULL, 0);
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 16);
    CU_ASSERT_EQUAL(info.format_max_key_bytes, 16);

    id_page(id, 255, NULL, 0);
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 16);
    CU_ASSERT_EQUAL(info.format_max_key_bytes, 255);

    id_page(id, 8, NULL, 0);
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 8);

    id_page(id, 16, "KVSSDEXU", 255);
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 16);
    id_page(id, 16, "KVSSDEXT", 256);
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 16);
    id_page(id, 16, "KVSSDEXT", 16);
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 16);

    id_page(id, 0, "KVSSDEXT", 255);
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(id, &info), -KVSSD_ERR_NO_DEVICE);
}

/* Admin commands: Identify CNS 05h CSI 01h; Get Log Page C0h of 1024 dwords; Get Log Page C2h
 * of NSID 3, 1024 dwords; Set Features C0h; Format NVM. */
static void test_admin_commands(void)
{
    struct kvssd_cmd c;
    static uint8_t id[4096];
    static struct kvssd_stats_log log;
    kvssd_cmd_identify(&c, 3, KVSSD_CNS_CSI_NS, KVSSD_CSI_KV, id);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_ADM_IDENTIFY);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], 3);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], KVSSD_CNS_CSI_NS);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0x01000000);
    CU_ASSERT_EQUAL(c.data_len, KVSSD_IDENTIFY_BYTES);
    CU_ASSERT_TRUE(c.admin);
    kvssd_cmd_get_stats_log(&c, &log);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_ADM_GET_LOG_PAGE);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], KVSSD_NSID_ALL);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 0x03ff00c0); /* NUMDL 3FFh, LID C0h */
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0);
    CU_ASSERT_EQUAL(c.data_len, 4096);
    CU_ASSERT_TRUE(c.admin);
    kvssd_cmd_get_id_ns_kv_log(&c, 3, (struct kvssd_id_ns_kv *)id);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_ADM_GET_LOG_PAGE);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], 3);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 0x03ff00c2); /* NUMDL 3FFh, LID C2h */
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0);
    CU_ASSERT_PTR_EQUAL(c.data, id);
    CU_ASSERT_EQUAL(c.data_len, 4096);
    CU_ASSERT_TRUE(c.admin);
    kvssd_cmd_reset_stats(&c);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_ADM_SET_FEATURES);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], KVSSD_FID_RESET_STATS);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 1);
    kvssd_cmd_format(&c, 1);
    CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_ADM_FORMAT_NVM);
    CU_ASSERT_EQUAL(c.sqe.cdw[1], 1);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 0);
    CU_ASSERT_TRUE(c.admin);
}

/* List data: 3 keys of 1, 4 and 5 bytes padded to 4; the parser returns each and stops at the end.
 */
static void test_list_parse(void)
{
    uint8_t buf[64] = {3,   0,   0, 0, 1, 0, 'a', 0,   4,   0,   'b', 'c',
                       'd', 'e', 0, 0, 5, 0, 'f', 'g', 'h', 'i', 'j', 0};
    uint32_t off = 0, kl;
    const uint8_t *k;
    CU_ASSERT_EQUAL(kvssd_list_parse(buf, 24, &off, &k, &kl), 1);
    CU_ASSERT_EQUAL(kl, 1);
    CU_ASSERT_EQUAL(k[0], 'a');
    CU_ASSERT_EQUAL(kvssd_list_parse(buf, 24, &off, &k, &kl), 1);
    CU_ASSERT_EQUAL(kl, 4);
    CU_ASSERT_EQUAL(memcmp(k, "bcde", 4), 0);
    CU_ASSERT_EQUAL(kvssd_list_parse(buf, 24, &off, &k, &kl), 1);
    CU_ASSERT_EQUAL(kl, 5);
    CU_ASSERT_EQUAL(off, 24);
    CU_ASSERT_EQUAL(kvssd_list_parse(buf, 24, &off, &k, &kl), 0);
    /* a key length running past the data is malformed */
    off = 0;
    uint8_t bad[8] = {1, 0, 0, 0, 9, 0, 'x', 0};
    CU_ASSERT_EQUAL(kvssd_list_parse(bad, 8, &off, &k, &kl), -KVSSD_ERR_TRANSFER);
}

/* Iter Read entries: keys-only (2 + key, padded) and key+value (adds a 4-byte length and the
 * value). */
static void test_iter_entry_parse(void)
{
    uint8_t e1[8] = {3, 0, 'a', 'b', 'c', 0, 0, 0};
    uint8_t e2[16] = {2, 0, 'k', 'v', 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', 0, 0, 0};
    const uint8_t *k, *v;
    uint32_t kl, vl;
    CU_ASSERT_EQUAL(kvssd_iter_parse_entry(e1, 8, false, &k, &kl, &v, &vl), 8);
    CU_ASSERT_EQUAL(kl, 3);
    CU_ASSERT_PTR_NULL(v);
    CU_ASSERT_EQUAL(kvssd_iter_parse_entry(e2, 16, true, &k, &kl, &v, &vl), 16);
    CU_ASSERT_EQUAL(kl, 2);
    CU_ASSERT_EQUAL(vl, 5);
    CU_ASSERT_EQUAL(memcmp(v, "hello", 5), 0);
    /* a value length past the buffer is rejected */
    CU_ASSERT_EQUAL(kvssd_iter_parse_entry(e2, 10, true, &k, &kl, &v, &vl), 0);
}

static const struct tap_test tests[] = {
    TAP_TEST(store_short_key),
    TAP_TEST(store_16_byte_key_only_if_absent),
    TAP_TEST(store_only_if_exists),
    TAP_TEST(store_long_key_tag_reference),
    TAP_TEST(key_stage_255),
    TAP_TEST(retrieve_whole_and_size_only),
    TAP_TEST(delete_exist),
    TAP_TEST(list),
    TAP_TEST(flush),
    TAP_TEST(iterator_commands),
    TAP_TEST(prefix_word),
    TAP_TEST(inline_head_fits),
    TAP_TEST(inline_head_odd_key_packing),
    TAP_TEST(inline_head_long_key),
    TAP_TEST(inline_head_hybrid),
    TAP_TEST(inline_xfer),
    TAP_TEST(inline_head_full),
    TAP_TEST(inline_xfer_full),
    TAP_TEST(id_ns_kv_decode),
    TAP_TEST(admin_commands),
    TAP_TEST(list_parse),
    TAP_TEST(iter_entry_parse),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("host_cmd", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
