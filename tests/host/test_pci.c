/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of libkvssd's pci transport: Store plans in BandSlim's
 * full layout (host/lib/transfer.c with KVSSD_WIRE_FULL: command counts and
 * the exact byte lanes of 89h heads and 8Dh transfers), which Stores keep
 * the stock layout on that transport (long keys, hybrid), PRP entries built
 * from a fake page table (host/lib/prp.c) and /proc/self/pagemap decoding.
 * The controller bring-up itself runs in the guest suite (cases/pci.sh).
 */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <kvssd/libkvssd.h>

#include "kvssd_priv.h"
#include "tap_cunit.h"

#define NSID 1u
#define MiB (1024u * 1024u)

static uint8_t byte_of(const struct kvssd_sqe *s, int dw, int b)
{
    return (uint8_t)(s->cdw[dw] >> (8 * b));
}

/* The full head's payload lanes in order: CDW11[31:8], CDW4..CDW9, CDW12, CDW13. */
static void full_head_payload(const struct kvssd_sqe *s, uint8_t out[35])
{
    int n = 0;
    for (int b = 1; b < 4; b++) {
        out[n++] = byte_of(s, 11, b);
    }
    static const int dws[] = {4, 5, 6, 7, 8, 9, 12, 13};
    for (int i = 0; i < 8; i++) {
        for (int b = 0; b < 4; b++) {
            out[n++] = byte_of(s, dws[i], b);
        }
    }
}

static uint8_t *pattern(uint32_t len, uint32_t seed)
{
    uint8_t *v = malloc(len ? len : 1);
    for (uint32_t i = 0; i < len; i++) {
        v[i] = (uint8_t)(i * 131u + seed * 7u + (i >> 8));
    }
    return v;
}

/* An inline head of this namespace: its opcode, CDW2 (key bytes 0-3) and CDW10, exactly. */
static void check_head(const struct kvssd_cmd *c, uint8_t opcode, uint32_t cdw2, uint32_t cdw10)
{
    CU_ASSERT_EQUAL(c->sqe.cdw[0], opcode);
    CU_ASSERT_EQUAL(c->sqe.cdw[1], NSID);
    CU_ASSERT_EQUAL(c->sqe.cdw[2], cdw2);
    CU_ASSERT_EQUAL(c->sqe.cdw[10], cdw10);
}

/* 4-byte key + 32-byte value, inline, full layout: ONE 89h command with
 * the key in CDW2 and value bytes 0-2 in CDW11[31:8], 3-26 in CDW4-9,
 * 27-30 in CDW12 and 31 in CDW13[7:0] (the stock layout needs 2). */
static void test_full_4b_key_32b_value_one_command(void)
{
    const uint8_t key[4] = {'k', 'e', 'y', '4'};
    uint8_t *v = pattern(32, 1);
    struct kvssd_store_plan p;
    struct kvssd_cmd c;
    uint8_t pl[35];

    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_INLINE, 4, 32), 1);
    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_STOCK, KVSSD_XFER_INLINE, 4, 32), 2);
    CU_ASSERT_EQUAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, key, 4, 0, 200, v, 32,
                                                 0, KVSSD_XFER_INLINE),
                    0);
    CU_ASSERT_EQUAL(p.layout, KVSSD_WIRE_FULL);
    CU_ASSERT_EQUAL(p.total, 1);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    /* "key4" little endian */
    check_head(&c, KVSSD_OPC_INLINE_HEAD_FULL, 0x3479656bu, 32u | 4u << 24);
    CU_ASSERT_EQUAL(c.sqe.cdw[11] & 0xffu, 200u);
    CU_ASSERT_EQUAL(c.data_len, 0);
    CU_ASSERT_PTR_NULL(c.data);
    full_head_payload(&c.sqe, pl);
    CU_ASSERT_EQUAL(memcmp(pl, v, 32), 0);
    CU_ASSERT_EQUAL(byte_of(&c.sqe, 11, 1), v[0]);
    CU_ASSERT_EQUAL(byte_of(&c.sqe, 4, 0), v[3]);
    CU_ASSERT_EQUAL(byte_of(&c.sqe, 9, 3), v[26]);
    CU_ASSERT_EQUAL(byte_of(&c.sqe, 12, 0), v[27]);
    CU_ASSERT_EQUAL(byte_of(&c.sqe, 13, 0), v[31]);
    CU_ASSERT_EQUAL(c.sqe.cdw[13] >> 8, 0); /* nothing past the value */
    CU_ASSERT_FALSE(kvssd_store_plan_next(&p, &c));
    free(v);
}

/* Full-layout command counts: 35 bytes in the head whatever the key's
 * length (1..16), then 56 per 8Dh transfer; the paper's 3 commands at
 * 128 B, docs/protocol.md's table (64 B: 2, 1 KiB: 19, 4 KiB: 74). */
static void test_full_command_counts(void)
{
    static const struct {
        uint32_t key, value, full, stock;
    } t[] = {
        {4, 0, 1, 1},  {4, 4, 1, 1},   {4, 20, 1, 1},      {4, 35, 1, 2},      {4, 36, 2, 2},
        {4, 64, 2, 3}, {4, 128, 3, 5}, {4, 1024, 19, 37},  {4, 4096, 74, 147}, {16, 35, 1, 2},
        {1, 91, 2, 4}, {1, 92, 3, 4},  {4, 4196, 76, 151},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        CU_ASSERT_EQUAL(
            kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_INLINE, t[i].key, t[i].value),
            t[i].full);
        CU_ASSERT_EQUAL(
            kvssd_store_commands_layout(KVSSD_WIRE_STOCK, KVSSD_XFER_INLINE, t[i].key, t[i].value),
            t[i].stock);
    }
    /* 2 MiB: 1 + ceil((2097152 - 35) / 56) = 37450 */
    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_INLINE, 4, 2 * MiB),
                    37450);
}

/* A 1000-byte value, full layout: head (35 bytes) + 18 transfers of 56
 * (the last one 13 bytes), CDW1 = tag | seq << 12, payload CDW2..CDW15;
 * reassembling the lanes gives the value back byte for byte. */
static void test_full_plan_reassembles(void)
{
    const uint8_t key[16] = "sixteen-byte-key";
    uint8_t *v = pattern(1000, 3), got[1000], pl[35];
    struct kvssd_store_plan p;
    struct kvssd_cmd c;
    uint32_t off = 0, n = 0;

    CU_ASSERT_EQUAL_FATAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, key, 16, 0, 255,
                                                       v, 1000, KVSSD_STORE_OPT_ONLY_IF_ABSENT,
                                                       KVSSD_XFER_INLINE),
                          0);
    CU_ASSERT_EQUAL(p.total, 19);
    while (kvssd_store_plan_next(&p, &c)) {
        if (n == 0) {
            CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_OPC_INLINE_HEAD_FULL);
            CU_ASSERT_EQUAL(c.sqe.cdw[10],
                            1000u | KVSSD_STORE_OPT_ONLY_IF_ABSENT << 22 | 16u << 24);
            CU_ASSERT_EQUAL(c.sqe.cdw[11] & 0xffu, 255u);
            full_head_payload(&c.sqe, pl);
            memcpy(got, pl, 35);
            off = 35;
        } else {
            uint32_t len = 1000 - off < 56 ? 1000 - off : 56;
            CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_OPC_INLINE_XFER_FULL);
            CU_ASSERT_EQUAL(c.sqe.cdw[1], 255u | n << 12);
            for (uint32_t j = 0; j < len; j++) {
                got[off + j] = byte_of(&c.sqe, 2 + (int)(j / 4), (int)(j % 4));
            }
            off += len;
        }
        n++;
    }
    CU_ASSERT_EQUAL(n, 19);
    CU_ASSERT_EQUAL(off, 1000);
    CU_ASSERT_EQUAL(memcmp(got, v, 1000), 0);
    free(v);
}

/* On the pci transport an inline Store of a long key keeps the stock layout
 * (the full head has no staged-key tag); a hybrid Store keeps the stock head
 * (it has the data pointer) with the full-tail bit and 8Dh transfers:
 * 4 KiB + 100 B hybrid with a 4-byte key is one 81h head with 4096 bytes by
 * PRP and 20 inline + 2 transfers of 56 = 3 commands (4 on passthrough);
 * 4 KiB + 100 B inline is 76 full-layout commands instead of 151. */
static void test_full_transport_keeps_stock_where_needed(void)
{
    uint8_t key[255];
    uint8_t *v = pattern(4196, 5);
    struct kvssd_store_plan p;
    struct kvssd_cmd c;

    memset(key, 'L', sizeof(key));
    CU_ASSERT_EQUAL(kvssd_store_layout(KVSSD_WIRE_FULL, KVSSD_XFER_HYBRID, 4), KVSSD_WIRE_FULL);
    CU_ASSERT_EQUAL(kvssd_store_layout(KVSSD_WIRE_FULL, KVSSD_XFER_HYBRID, 255), KVSSD_WIRE_FULL);
    CU_ASSERT_EQUAL(kvssd_store_layout(KVSSD_WIRE_STOCK, KVSSD_XFER_HYBRID, 4), KVSSD_WIRE_STOCK);
    CU_ASSERT_EQUAL(kvssd_store_layout(KVSSD_WIRE_FULL, KVSSD_XFER_INLINE, 17), KVSSD_WIRE_STOCK);
    CU_ASSERT_EQUAL(kvssd_store_layout(KVSSD_WIRE_FULL, KVSSD_XFER_INLINE, 16), KVSSD_WIRE_FULL);
    CU_ASSERT_EQUAL(kvssd_store_layout(KVSSD_WIRE_STOCK, KVSSD_XFER_INLINE, 4), KVSSD_WIRE_STOCK);

    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_HYBRID, 4, 4196), 3);
    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_STOCK, KVSSD_XFER_HYBRID, 4, 4196), 4);
    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_INLINE, 4, 4196), 76);
    CU_ASSERT_EQUAL_FATAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, key, 4, 0, 200, v,
                                                       4196, 0, KVSSD_XFER_HYBRID),
                          0);
    CU_ASSERT_EQUAL(p.layout, KVSSD_WIRE_FULL);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_OPC_INLINE_HEAD);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 200u | KVSSD_INLINE_HYBRID | KVSSD_INLINE_FULL_TAIL);
    CU_ASSERT_EQUAL(c.data_len, 4096);

    /* 255-byte key, 32-byte value: Key Stage + stock head (20) + 1 transfer */
    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_INLINE, 255, 32), 3);
    CU_ASSERT_EQUAL_FATAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, key, 255, 7, 3000,
                                                       v, 32, 0, KVSSD_XFER_INLINE),
                          0);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_OPC_KEY_STAGE);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_OPC_INLINE_HEAD);
    free(v);
}

/*
 * Hybrid on the pci transport, 4-byte key, value 4096 + t: commands per
 * Store for t = 4 ... 4096 (powers of two). Full tail: 1 + ceil((t - 20) /
 * 56); stock: 1 + ceil((t - 20) / 28); a whole second page (t = 4096) is
 * one hybrid head with no inline bytes.
 */
static void test_hybrid_full_tail_counts(void)
{
    static const struct {
        uint32_t tail, full, stock;
    } t[] = {
        {4, 1, 1},    {8, 1, 1},     {16, 1, 1},     {32, 2, 2},     {64, 2, 3},      {128, 3, 5},
        {256, 6, 10}, {512, 10, 19}, {1024, 19, 37}, {2048, 38, 74}, {4095, 74, 147}, {4096, 1, 1},
    };

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        CU_ASSERT_EQUAL(
            kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_HYBRID, 4, 4096 + t[i].tail),
            t[i].full);
        CU_ASSERT_EQUAL(
            kvssd_store_commands_layout(KVSSD_WIRE_STOCK, KVSSD_XFER_HYBRID, 4, 4096 + t[i].tail),
            t[i].stock);
    }
    /* a staged key: Key Stage + head (20 tail bytes) + ceil((100 - 20) / 56) */
    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_HYBRID, 40, 4196), 4);
    /* a 16-byte key leaves 8 tail bytes in the head: 1 + ceil(92 / 56) */
    CU_ASSERT_EQUAL(kvssd_store_commands_layout(KVSSD_WIRE_FULL, KVSSD_XFER_HYBRID, 16, 4196), 3);
}

/*
 * Byte lanes of a full-tail hybrid plan, 4 KiB + 100 B, key "hk01", tag 9:
 * head 81h: CDW2 = key, CDW3/CDW12-15 = tail bytes 0..19, CDW10 = value
 * size | key length << 24, CDW11 = 9 | hybrid | full tail, data = the
 * first 4096 bytes; transfer 1 (8Dh): CDW1 = 9 | 1 << 12, CDW2-15 = tail
 * bytes 20..75; transfer 2: CDW1 = 9 | 2 << 12, tail bytes 76..99 in
 * CDW2-7, CDW8-15 zero.
 */
static void test_hybrid_full_tail_lanes(void)
{
    uint8_t *v = pattern(4196, 9);
    struct kvssd_store_plan p;
    struct kvssd_cmd c;
    uint8_t got[100] = {0};

    CU_ASSERT_EQUAL_FATAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, "hk01", 4, 0, 9,
                                                       v, 4196, 0, KVSSD_XFER_HYBRID),
                          0);
    CU_ASSERT_EQUAL(p.total, 3);
    CU_ASSERT_TRUE_FATAL(kvssd_store_plan_next(&p, &c));
    /* "hk01" little endian */
    check_head(&c, KVSSD_OPC_INLINE_HEAD, 0x31306b68u, 4196u | 4u << 24);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 9u | KVSSD_INLINE_HYBRID | KVSSD_INLINE_FULL_TAIL);
    CU_ASSERT_PTR_EQUAL(c.data, v);
    CU_ASSERT_EQUAL(c.data_len, 4096);
    for (int d = 0; d < 5; d++) {
        static const int lane[] = {3, 12, 13, 14, 15};
        for (int b = 0; b < 4; b++) {
            got[4 * d + b] = (uint8_t)(c.sqe.cdw[lane[d]] >> (8 * b));
        }
    }
    for (uint32_t seq = 1; seq <= 2; seq++) {
        CU_ASSERT_TRUE_FATAL(kvssd_store_plan_next(&p, &c));
        CU_ASSERT_EQUAL(c.sqe.cdw[0], KVSSD_OPC_INLINE_XFER_FULL);
        CU_ASSERT_EQUAL(c.sqe.cdw[1], 9u | seq << 12);
        CU_ASSERT_EQUAL(c.data_len, 0);
        for (int d = 2; d < 16; d++) {
            for (int b = 0; b < 4; b++) {
                uint32_t at = 20 + (seq - 1) * 56 + 4 * (uint32_t)(d - 2) + (uint32_t)b;
                uint8_t byte = (uint8_t)(c.sqe.cdw[d] >> (8 * b));
                if (at < 100) {
                    got[at] = byte;
                } else {
                    CU_ASSERT_EQUAL(byte, 0);
                }
            }
        }
    }
    CU_ASSERT_FALSE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(memcmp(got, v + 4096, 100), 0);
    free(v);
}

/* Full-layout streams have 8-bit tags: a full-layout plan, inline or hybrid
 * (full tail), refuses tag 256; the same hybrid plan on the stock transport
 * takes it. */
static void test_full_tag_range(void)
{
    uint8_t v[8] = {0};
    uint8_t *big = pattern(5000, 1);
    struct kvssd_store_plan p;
    CU_ASSERT_EQUAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, "k", 1, 0, 256, v, 8, 0,
                                                 KVSSD_XFER_INLINE),
                    -KVSSD_ERR_INVALID_ARGUMENT);
    CU_ASSERT_EQUAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, "k", 1, 0, 255, v, 8, 0,
                                                 KVSSD_XFER_INLINE),
                    0);
    CU_ASSERT_EQUAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, "k", 1, 0, 256, big,
                                                 5000, 0, KVSSD_XFER_HYBRID),
                    -KVSSD_ERR_INVALID_ARGUMENT);
    CU_ASSERT_EQUAL(kvssd_store_plan_init_layout(&p, KVSSD_WIRE_STOCK, NSID, "k", 1, 0, 256, big,
                                                 5000, 0, KVSSD_XFER_HYBRID),
                    0);
    CU_ASSERT_EQUAL(kvssd_store_plan_init_layout(&p, (enum kvssd_wire_layout)7, NSID, "k", 1, 0, 1,
                                                 v, 8, 0, KVSSD_XFER_INLINE),
                    -KVSSD_ERR_INVALID_ARGUMENT);
    free(big);
}

/* PRPs from a fake page table whose pages are scattered: 1 page -> PRP1
 * only; 2 pages -> PRP2 = the second page; 3 pages -> PRP2 = the list,
 * holding pages 2 and 3; 2 MiB -> a list of 511 entries; 0 bytes -> none. */
static void test_prp_build(void)
{
    static uint64_t phys[512];
    static uint64_t list[512];
    struct kvssd_prp prp;
    for (uint32_t i = 0; i < 512; i++) {
        phys[i] = 0x40000000ull + (uint64_t)(511 - i) * 0x3000; /* descending, gaps */
    }

    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 512, 0, list, 0x9000, &prp), 0);
    CU_ASSERT_EQUAL(prp.prp1, 0);
    CU_ASSERT_EQUAL(prp.prp2, 0);

    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 512, 1, list, 0x9000, &prp), 0);
    CU_ASSERT_EQUAL(prp.prp1, phys[0]);
    CU_ASSERT_EQUAL(prp.prp2, 0);
    CU_ASSERT_EQUAL(prp.list_entries, 0);

    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 512, 4096, list, 0x9000, &prp), 0);
    CU_ASSERT_EQUAL(prp.prp2, 0);

    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 512, 4097, list, 0x9000, &prp), 0);
    CU_ASSERT_EQUAL(prp.prp1, phys[0]);
    CU_ASSERT_EQUAL(prp.prp2, phys[1]);
    CU_ASSERT_EQUAL(prp.list_entries, 0);

    memset(list, 0, sizeof(list));
    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 512, 3 * 4096, list, 0x9000, &prp), 0);
    CU_ASSERT_EQUAL(prp.prp1, phys[0]);
    CU_ASSERT_EQUAL(prp.prp2, 0x9000);
    CU_ASSERT_EQUAL(prp.list_entries, 2);
    CU_ASSERT_EQUAL(list[0], phys[1]);
    CU_ASSERT_EQUAL(list[1], phys[2]);
    CU_ASSERT_EQUAL(list[2], 0);

    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 512, 2 * MiB, list, 0x9000, &prp), 0);
    CU_ASSERT_EQUAL(prp.list_entries, 511);
    CU_ASSERT_EQUAL(list[510], phys[511]);
}

/* PRP refusals: more bytes than the buffer's pages, or a page address that
 * is not 4 KiB aligned. */
static void test_prp_refusals(void)
{
    uint64_t phys[3] = {0x1000, 0x2000, 0x3008};
    uint64_t list[512];
    struct kvssd_prp prp;
    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 2, 2 * 4096 + 1, list, 0x9000, &prp),
                    -KVSSD_ERR_INVALID_ARGUMENT);
    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 3, 3 * 4096, list, 0x9000, &prp),
                    -KVSSD_ERR_INVALID_ARGUMENT);
    CU_ASSERT_EQUAL(kvssd_prp_build(phys, 3, 2 * 4096, list, 0x9000, &prp), 0);
}

/* pagemap: bit 63 present, bits 54:0 the PFN; the physical address keeps
 * the offset within the page; an absent page or a hidden PFN (0, what
 * non-root readers see) is refused. */
static void test_pagemap_decode(void)
{
    uint64_t phys = 0;
    CU_ASSERT_EQUAL(kvssd_pagemap_phys((1ull << 63) | 0x12345, 0x7f0000001234ull, &phys), 0);
    CU_ASSERT_EQUAL(phys, 0x12345000ull + 0x234);
    /* bit 55 (soft-dirty) and 61 (file page) are not part of the PFN */
    CU_ASSERT_EQUAL(kvssd_pagemap_phys((1ull << 63) | (1ull << 55) | (1ull << 61) | 7, 0, &phys),
                    0);
    CU_ASSERT_EQUAL(phys, 0x7000);
    CU_ASSERT_EQUAL(kvssd_pagemap_phys(0x12345, 0, &phys), -KVSSD_ERR_SYSTEM);
    CU_ASSERT_EQUAL(kvssd_pagemap_phys(1ull << 63, 0, &phys), -KVSSD_ERR_SYSTEM);
}

static const struct tap_test tests[] = {
    TAP_TEST(full_4b_key_32b_value_one_command),
    TAP_TEST(full_command_counts),
    TAP_TEST(full_plan_reassembles),
    TAP_TEST(full_transport_keeps_stock_where_needed),
    TAP_TEST(hybrid_full_tail_counts),
    TAP_TEST(hybrid_full_tail_lanes),
    TAP_TEST(full_tag_range),
    TAP_TEST(prp_build),
    TAP_TEST(prp_refusals),
    TAP_TEST(pagemap_decode),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("host_pci", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
