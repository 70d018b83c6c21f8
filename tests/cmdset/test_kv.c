/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The standard KV commands and the long-key and iterator extensions, run
 * through kvssd_kv_execute() on a real kvftl instance with byte-exact SQEs.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <glib.h>

#include "fixture.h"
#include "tap_cunit.h"

static const uint32_t value_sizes[] = {0,    1,    31,   32,    33,
                                       4095, 4096, 4097, 65536, KVFTL_VALUE_MAX_BYTES};

/*
 * Store then Retrieve each of the ten value sizes of value_sizes (0 B, both
 * sides of 32 B and 4 KiB, 64 KiB, 2 MiB) with a key of @key_len bytes into
 * a 2 MiB buffer: each Retrieve returns success, DW0 = the size, and the
 * exact bytes, and writes nothing past them.
 */
static void round_trip_with_key_len(uint32_t key_len)
{
    uint8_t key[255];
    uint8_t *value = malloc(KVFTL_VALUE_MAX_BYTES);
    uint8_t *back = malloc(KVFTL_VALUE_MAX_BYTES);

    for (uint32_t i = 0; i < G_N_ELEMENTS(value_sizes); i++) {
        uint32_t n = value_sizes[i];
        uint32_t dw0 = 0;

        fill_pattern(key, key_len, 1000 + i);
        fill_pattern(value, n, i);
        memset(back, 0xee, KVFTL_VALUE_MAX_BYTES);
        CU_ASSERT_EQUAL(fx_store(key, key_len, value, n, 0), KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(fx_retrieve(key, key_len, back, KVFTL_VALUE_MAX_BYTES, &dw0),
                        KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(dw0, n);
        CU_ASSERT(memcmp(back, value, n) == 0);
        if (n < KVFTL_VALUE_MAX_BYTES) {
            CU_ASSERT_EQUAL(back[n], 0xee); /* nothing past the value was written */
        }
    }
    free(value);
    free(back);
}

/* 1-byte key: the ten value sizes from 0 B to 2 MiB round-trip exactly. */
static void test_round_trip_key1(void)
{
    round_trip_with_key_len(1);
}
/* 16-byte key (the largest in the SQE): the ten value sizes round-trip. */
static void test_round_trip_key16(void)
{
    round_trip_with_key_len(16);
}
/* 17-byte key (the smallest staged key): the ten value sizes round-trip. */
static void test_round_trip_key17(void)
{
    round_trip_with_key_len(17);
    /* Each Store and each Retrieve staged its key: 2 x 10 extra commands. */
    CU_ASSERT_EQUAL(fx.xfer.key_stage_commands, 20);
}
/* 255-byte key (the largest): the ten value sizes round-trip. */
static void test_round_trip_key255(void)
{
    round_trip_with_key_len(255);
}

/* Store of 2 MiB + 1 bytes: INVALID_VALUE_SIZE (85h), no data moved. */
static void test_store_value_too_large(void)
{
    struct kvssd_sqe s = sqe_store("k", 1, KVFTL_VALUE_MAX_BYTES + 1, 0);
    uint8_t b[16];
    struct fake_host h = fake_host_over(b, sizeof(b));
    struct kvssd_req r = fx_exec(&s, &h);

    CU_ASSERT_EQUAL(r.status, KVSSD_SC_INVALID_VALUE_SIZE);
    CU_ASSERT_EQUAL(h.from_calls, 0);
}

/* Key length 0 is INVALID_KEY_SIZE (86h) for Store, Retrieve, Delete and Exist. */
static void test_key_len_zero(void)
{
    struct kvssd_sqe s[4] = {sqe_store("k", 0, 1, 0), sqe_retrieve("k", 0, 16), sqe_delete("k", 0),
                             sqe_exist("k", 0)};
    uint8_t b[16] = {0};
    struct fake_host h = fake_host_over(b, sizeof(b));

    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(fx_exec(&s[i], &h).status, KVSSD_SC_INVALID_KEY_SIZE);
    }
}

/* Store Options with both bits (must exist and must not exist): INVALID_FIELD. */
static void test_store_options_both_bits(void)
{
    struct kvssd_sqe s = sqe_store("k", 1, 1,
                                   KVSSD_STORE_OPT_ONLY_IF_EXISTS | KVSSD_STORE_OPT_ONLY_IF_ABSENT);
    uint8_t v = 1;
    struct fake_host h = fake_host_over(&v, 1);

    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(fx_exist("k", 1), KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* A Store Options bit beyond the valid mask (bit 2): INVALID_FIELD. */
static void test_store_options_unknown_bit(void)
{
    struct kvssd_sqe s = sqe_store("k", 1, 1, 0x04);
    uint8_t v = 1;
    struct fake_host h = fake_host_over(&v, 1);

    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
}

/* "Only if exists" on a missing key: KEY_DOES_NOT_EXIST (87h), nothing stored. */
static void test_store_only_if_exists_missing(void)
{
    CU_ASSERT_EQUAL(fx_store("abc", 3, "v", 1, KVSSD_STORE_OPT_ONLY_IF_EXISTS),
                    KVSSD_SC_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(fx_exist("abc", 3), KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* "Only if absent" on a stored key: KEY_EXISTS (89h), the old value stays. */
static void test_store_only_if_absent_present(void)
{
    CU_ASSERT_EQUAL(fx_store("abc", 3, "old", 3, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("abc", 3, "newer", 5, KVSSD_STORE_OPT_ONLY_IF_ABSENT),
                    KVSSD_SC_KEY_EXISTS);
    fx_assert_stored("abc", 3, "old", 3);
}

/* "Only if exists" on a stored key overwrites it. */
static void test_store_only_if_exists_overwrites(void)
{
    CU_ASSERT_EQUAL(fx_store("abc", 3, "old", 3, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("abc", 3, "newer", 5, KVSSD_STORE_OPT_ONLY_IF_EXISTS),
                    KVSSD_SC_SUCCESS);
    fx_assert_stored("abc", 3, "newer", 5);
}

/* Reserved fields of Store (CDW11[31:16], CDW12, CDW13) set: INVALID_FIELD each. */
static void test_store_reserved_fields(void)
{
    uint8_t v[4] = {1, 2, 3, 4};
    struct fake_host h = fake_host_over(v, 4);
    struct kvssd_sqe s;

    s = sqe_store("k", 1, 4, 0);
    s.cdw[11] |= 1u << 16;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    s = sqe_store("k", 1, 4, 0);
    s.cdw[12] = 1;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    s = sqe_store("k", 1, 4, 0);
    s.cdw[13] = 0x80000000u;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(h.from_calls, 0);
    CU_ASSERT_EQUAL(fx_exist("k", 1), KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/*
 * A Store with two faults gets the status of the first one in this order:
 * a reserved field or the options (INVALID_FIELD), the key length
 * (INVALID_KEY_SIZE), the value size (INVALID_VALUE_SIZE), then the staged
 * key. No byte is moved, nothing is stored, the staged key stays staged.
 */
static void test_store_fault_order(void)
{
    const uint32_t both = KVSSD_STORE_OPT_ONLY_IF_EXISTS | KVSSD_STORE_OPT_ONLY_IF_ABSENT;
    const uint32_t too_large = KVFTL_VALUE_MAX_BYTES + 1;
    uint8_t key[40], v[8] = {0};
    struct fake_host h = fake_host_over(v, sizeof(v));
    struct kvssd_sqe s;

    fill_pattern(key, sizeof(key), 50);
    s = sqe_store("k", 0, 1, both);
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    s = sqe_store("k", 0, 1, 0x04);
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    s = sqe_store("k", 0, too_large, 0);
    s.cdw[13] = 1;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    s = sqe_store("k", 1, too_large, both);
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    s = sqe_store("k", 0, too_large, 0);
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_KEY_SIZE);
    /* a 40-byte key, not staged: the value size is checked before the key is looked up */
    s = sqe_store(key, 40, too_large, 0);
    sqe_use_staged_key(&s, 12);
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_VALUE_SIZE);
    /* staged, with CDW3 (reserved in the long-key form) set too */
    CU_ASSERT_EQUAL(fx_stage(key, 40, 12), KVSSD_SC_SUCCESS);
    s.cdw[3] = 1;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_VALUE_SIZE);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    CU_ASSERT_EQUAL(h.from_calls, 0);
    CU_ASSERT_EQUAL(fx_exist("k", 1), KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* Reserved fields of Retrieve/Delete/Exist (CDW11[31:8], CDW10 of Delete): INVALID_FIELD. */
static void test_reserved_fields_other_commands(void)
{
    uint8_t b[8];
    struct fake_host h = fake_host_over(b, sizeof(b));
    struct kvssd_sqe s;

    CU_ASSERT_EQUAL(fx_store("k", 1, "v", 1, 0), KVSSD_SC_SUCCESS);
    s = sqe_retrieve("k", 1, 8);
    s.cdw[11] |= 0x100; /* no Retrieve options are defined */
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
    s = sqe_delete("k", 1);
    s.cdw[10] = 5;
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_FIELD);
    s = sqe_exist("k", 1);
    s.cdw[12] = 1;
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(fx_exist("k", 1), KVSSD_SC_SUCCESS); /* the Delete did not run */
}

/*
 * NVMe/TCP puts its null SGL descriptor (address 0, length 0, type 5Ah in
 * byte 15) in CDW6-9 of a command without data, with PSDT 01b; nvmet's
 * passthru hands those dwords to the device. Exist, Delete, Flush,
 * Iterator Open and Close carrying them, with no data pointer behind
 * them, run as without: Exist 0, Delete 0, Exist 0087h, Flush 0, Open 0
 * with handle 0, Close 0.
 */
static void test_no_data_commands_ignore_tcp_null_sgl(void)
{
    struct kvssd_sqe s[6] = {sqe_exist("k", 1),          sqe_delete("k", 1),
                             sqe_exist("k", 1),          sqe_new(KVSSD_OPC_FLUSH),
                             sqe_iter_open(0, 0, false), sqe_iter_close(0)};
    static const uint16_t want[6] = {
        KVSSD_SC_SUCCESS, KVSSD_SC_SUCCESS, KVSSD_SC_KEY_DOES_NOT_EXIST,
        KVSSD_SC_SUCCESS, KVSSD_SC_SUCCESS, KVSSD_SC_SUCCESS};

    CU_ASSERT_EQUAL(fx_store("k", 1, "v", 1, 0), KVSSD_SC_SUCCESS);
    for (int i = 0; i < 6; i++) {
        s[i].cdw[0] |= 1u << 14; /* PSDT 01b: SGL */
        s[i].cdw[6] = 0;
        s[i].cdw[7] = 0;
        s[i].cdw[8] = 0;
        s[i].cdw[9] = 0x5au << 24;
        struct kvssd_req r = fx_exec(&s[i], NULL);
        CU_ASSERT_EQUAL(r.status, want[i]);
        if (i == 4) {
            CU_ASSERT_EQUAL(r.dw0, 0);
        }
    }
}

/* Retrieve of a 100-byte value into a 40-byte buffer: success, DW0 = 100, 40 bytes moved. */
static void test_retrieve_short_buffer(void)
{
    uint8_t value[100], back[64];
    struct kvssd_sqe s = sqe_retrieve("key", 3, 40);
    struct fake_host h = fake_host_over(back, 40);
    struct kvssd_req r;

    fill_pattern(value, sizeof(value), 5);
    memset(back, 0xee, sizeof(back));
    CU_ASSERT_EQUAL(fx_store("key", 3, value, 100, 0), KVSSD_SC_SUCCESS);
    r = fx_exec(&s, &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 100);
    CU_ASSERT_EQUAL(h.to_bytes, 40);
    CU_ASSERT(memcmp(back, value, 40) == 0);
    CU_ASSERT_EQUAL(back[40], 0xee);
}

/* Retrieve with a 0-byte buffer: success, DW0 = the value size, no transfer. */
static void test_retrieve_zero_buffer_reports_size(void)
{
    uint8_t value[300];
    struct kvssd_sqe s = sqe_retrieve("key", 3, 0);
    struct fake_host h = fake_host_over(NULL, 0);
    struct kvssd_req r;

    fill_pattern(value, sizeof(value), 6);
    CU_ASSERT_EQUAL(fx_store("key", 3, value, 300, 0), KVSSD_SC_SUCCESS);
    r = fx_exec(&s, &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 300);
    CU_ASSERT_EQUAL(h.to_calls, 0);
}

/* Retrieve of a key never stored: KEY_DOES_NOT_EXIST (87h), no transfer. */
static void test_retrieve_missing(void)
{
    uint8_t b[8];
    struct kvssd_sqe s = sqe_retrieve("nope", 4, 8);
    struct fake_host h = fake_host_over(b, 8);

    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(h.to_calls, 0);
}

/* Delete of a missing key with EDNEK off (the default): success. */
static void test_delete_missing_without_ednek(void)
{
    CU_ASSERT_FALSE(kvssd_ns_get_ednek(fx.ns));
    CU_ASSERT_EQUAL(fx_delete("gone", 4), KVSSD_SC_SUCCESS);
}

/* Delete of a missing key with EDNEK on: KEY_DOES_NOT_EXIST (87h). */
static void test_delete_missing_with_ednek(void)
{
    kvssd_ns_set_ednek(fx.ns, true);
    CU_ASSERT_TRUE(kvssd_ns_get_ednek(fx.ns));
    CU_ASSERT_EQUAL(fx_delete("gone", 4), KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* Delete removes the key: Exist then gives 87h; before it gave success. */
static void test_delete_then_exist(void)
{
    CU_ASSERT_EQUAL(fx_store("k1", 2, "v", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exist("k1", 2), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_delete("k1", 2), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exist("k1", 2), KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* A long-key command naming a tag with no staged key: INVALID_KEY_SIZE (86h). */
static void test_long_key_not_staged(void)
{
    struct kvssd_sqe s = sqe_exist("x", 1);

    s.cdw[11] = kvssd_cdw11(40, 0);
    sqe_use_staged_key(&s, 12);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_KEY_SIZE);
}

/*
 * The five standard keyed opcodes (Store, Retrieve, Exist, List, Delete, in
 * an order that works on one key) as a standard host (nvme-cli, SPDK, xNVMe)
 * builds them, with key length @key_len: the first 16 key bytes in
 * CDW2-3/CDW14-15, value size or buffer size in CDW10. @key may be all zero
 * (then CDW2[31:12], CDW3, CDW14, CDW15 are zero, as in our long-key form).
 */
static void standard_sqes(const uint8_t *key, uint32_t key_len, struct kvssd_sqe s[5])
{
    s[0] = sqe_store(key, key_len, 8, 0);
    s[1] = sqe_retrieve(key, key_len, 8);
    s[2] = sqe_exist(key, key_len);
    s[3] = sqe_list(key, key_len, 64);
    s[4] = sqe_delete(key, key_len);
}

/*
 * Store, Retrieve, Delete, Exist and List with key length 17 and 255 and no
 * staged key, from a standard host: each gets INVALID_KEY_SIZE (86h), the
 * status the KV Command Set names for a key longer than the KV format's
 * maximum (16), with no data moved and nothing stored. Both a key with
 * nonzero bytes 4..15 (what such a host sends) and an all-zero key (which
 * looks like our long-key form naming tag 0) are refused the same way.
 */
static void test_standard_long_key_without_stage(void)
{
    static const uint32_t lens[] = {17, 255};
    uint8_t key[255], zero[255] = {0};
    uint8_t b[64];

    fill_pattern(key, sizeof(key), 21);
    for (uint32_t l = 0; l < G_N_ELEMENTS(lens); l++) {
        for (int z = 0; z < 2; z++) {
            struct kvssd_sqe s[5];

            standard_sqes(z ? zero : key, lens[l], s);
            for (int i = 0; i < 5; i++) {
                struct fake_host h = fake_host_over(b, sizeof(b));

                memset(b, 0x5a, sizeof(b));
                CU_ASSERT_EQUAL(fx_exec(&s[i], &h).status, KVSSD_SC_INVALID_KEY_SIZE);
                CU_ASSERT_EQUAL(h.from_calls + h.to_calls, 0);
            }
        }
    }
    /* Nothing was stored under the 16-byte prefix either. */
    CU_ASSERT_EQUAL(fx_exist(key, 16), KVSSD_SC_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(fx_exist(zero, 16), KVSSD_SC_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
}

/*
 * The same five opcodes with key length 17 and 255 after Key Stage (91h):
 * Store succeeds, Exist succeeds, Retrieve returns the 8 value bytes, List
 * from the staged start key succeeds (DW0 = 0 keys: nothing sorts after
 * the only key), Delete succeeds and a later Exist gets 87h.
 */
static void test_standard_long_key_with_stage(void)
{
    static const uint32_t lens[] = {17, 255};
    static const uint8_t value[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    for (uint32_t l = 0; l < G_N_ELEMENTS(lens); l++) {
        uint8_t key[255], b[64];
        struct kvssd_sqe s[5];
        struct kvssd_req r;

        fill_pattern(key, sizeof(key), 30 + l);
        standard_sqes(key, lens[l], s);
        for (int i = 0; i < 5; i++) {
            struct fake_host h = fake_host_over(b, sizeof(b));

            memset(b, 0, sizeof(b));
            if (i == 0) {
                memcpy(b, value, sizeof(value));
            }
            CU_ASSERT_EQUAL(fx_stage(key, lens[l], 40 + i), KVSSD_SC_SUCCESS);
            sqe_use_staged_key(&s[i], 40 + i);
            r = fx_exec(&s[i], &h);
            CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
            if (i == 1) {
                CU_ASSERT_EQUAL(r.dw0, 8);
                CU_ASSERT(memcmp(b, value, 8) == 0);
            }
            if (i == 3) {
                CU_ASSERT_EQUAL(r.dw0, 0);
            }
        }
        CU_ASSERT_EQUAL(fx_exist(key, lens[l]), KVSSD_SC_KEY_DOES_NOT_EXIST);
        CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    }
}

/* A staged key is consumed by the command that uses it: a second use gets 86h. */
static void test_staged_key_consumed_once(void)
{
    uint8_t key[40];
    struct kvssd_sqe s = sqe_exist("x", 1);

    fill_pattern(key, sizeof(key), 3);
    CU_ASSERT_EQUAL(fx_store(key, 40, "v", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_stage(key, 40, 99), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    s.cdw[11] = kvssd_cdw11(40, 0);
    sqe_use_staged_key(&s, 99);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_KEY_SIZE);
}

/* Long-key form with CDW3 set (reserved there): INVALID_FIELD, the key stays staged. */
static void test_long_key_reserved_field(void)
{
    uint8_t key[20];
    struct kvssd_sqe s = sqe_exist("x", 1);

    fill_pattern(key, sizeof(key), 4);
    CU_ASSERT_EQUAL(fx_stage(key, 20, 5), KVSSD_SC_SUCCESS);
    s.cdw[11] = kvssd_cdw11(20, 0);
    sqe_use_staged_key(&s, 5);
    s.cdw[3] = 1;
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_FIELD);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
    s.cdw[3] = 0;
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
}

/* Key Stage of a 16-byte key (fits in the SQE) or of 0 bytes: INVALID_KEY_SIZE. */
static void test_key_stage_short_key(void)
{
    uint8_t key[16] = {0};

    CU_ASSERT_EQUAL(fx_stage(key, 16, 1), KVSSD_SC_INVALID_KEY_SIZE);
    CU_ASSERT_EQUAL(fx_stage(key, 0, 1), KVSSD_SC_INVALID_KEY_SIZE);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
}

/* Key Stage to a tag that already holds a staged key: INLINE_TAG_IN_USE (C3h). */
static void test_key_stage_tag_in_use(void)
{
    uint8_t key[30];

    fill_pattern(key, sizeof(key), 8);
    CU_ASSERT_EQUAL(fx_stage(key, 30, 77), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_stage(key, 30, 77), KVSSD_SC_INLINE_TAG_IN_USE);
    CU_ASSERT_EQUAL(fx_stage(key, 30, 78), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 2);
}

/* A command whose key length differs from the staged key's: 86h, the key stays. */
static void test_staged_key_length_mismatch(void)
{
    uint8_t key[30];
    struct kvssd_sqe s = sqe_exist("x", 1);

    fill_pattern(key, sizeof(key), 9);
    CU_ASSERT_EQUAL(fx_stage(key, 30, 3), KVSSD_SC_SUCCESS);
    s.cdw[11] = kvssd_cdw11(31, 0);
    sqe_use_staged_key(&s, 3);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_KEY_SIZE);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 1);
}

/* Key Stage whose data pointer fails: that status, nothing staged. */
static void test_key_stage_dptr_failure(void)
{
    uint8_t key[30] = {0};
    struct kvssd_sqe s = sqe_key_stage(30, 4);
    struct fake_host h = fake_host_over(key, 30);

    h.fail_status = KVSSD_SC_INVALID_PRP_OFFSET;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_PRP_OFFSET);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
}

/* A staged key idle longer than inline_timeout_ns is freed: using it gets 86h. */
static void test_staged_key_expires(void)
{
    struct kvssd_ns_config cfg = {.tag_table_entries = 8, .inline_timeout_ns = 1000000};
    uint8_t key[20];
    struct kvssd_sqe s = sqe_exist("x", 1);

    fx_open(&cfg, NULL);
    fill_pattern(key, sizeof(key), 10);
    CU_ASSERT_EQUAL(fx_stage(key, 20, 6), KVSSD_SC_SUCCESS);
    kvssd_ns_expire(fx.ns, fx.now + 2000000);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    s.cdw[11] = kvssd_cdw11(20, 0);
    sqe_use_staged_key(&s, 6);
    CU_ASSERT_EQUAL(fx_exec_at(&s, NULL, fx.now + 2000000).status, KVSSD_SC_INVALID_KEY_SIZE);
}

/* Opcodes the KV command set does not define: INVALID_OPCODE (0001h). */
static void test_unknown_opcode(void)
{
    static const uint8_t bad[] = {0x03, 0x04, 0x05, 0x08, 0x11, 0x7f, 0x80, 0x93, 0xff};

    for (uint32_t i = 0; i < sizeof(bad); i++) {
        struct kvssd_sqe s = sqe_new(bad[i]);

        CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_OPCODE);
        CU_ASSERT_FALSE(kvssd_kv_opcode_supported(bad[i]));
    }
}

/* The Commands Supported bitmap names exactly the 14 opcodes the set executes. */
static void test_opcode_supported(void)
{
    static const uint8_t good[] = {0x00, 0x01, 0x02, 0x06, 0x10, 0x14, 0x81,
                                   0x85, 0x89, 0x8d, 0x90, 0x91, 0x92, 0x94};
    uint32_t n = 0;

    for (uint32_t i = 0; i < sizeof(good); i++) {
        CU_ASSERT_TRUE(kvssd_kv_opcode_supported(good[i]));
    }
    for (uint32_t op = 0; op < 256; op++) {
        n += kvssd_kv_opcode_supported((uint8_t)op);
    }
    CU_ASSERT_EQUAL(n, 14);
}

/* A Store whose data pointer fails (bad PRP offset): that exact status, nothing stored. */
static void test_store_dptr_failure(void)
{
    uint8_t v[64] = {0};
    struct kvssd_sqe s = sqe_store("key", 3, 64, 0);
    struct fake_host h = fake_host_over(v, 64);

    h.fail_status = KVSSD_SC_INVALID_PRP_OFFSET;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_PRP_OFFSET);
    CU_ASSERT_EQUAL(fx_exist("key", 3), KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* A Store whose buffer lies partly outside guest RAM: DATA_XFER_ERROR (04h). */
static void test_store_dptr_outside_ram(void)
{
    uint8_t v[64] = {0};
    struct kvssd_sqe s = sqe_store("key", 3, 100, 0);
    struct fake_host h = fake_host_over(v, 64);

    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_DATA_XFER_ERROR);
    CU_ASSERT_EQUAL(fx_exist("key", 3), KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* A Retrieve whose data pointer fails: that status propagates (SGL type invalid). */
static void test_retrieve_dptr_failure(void)
{
    uint8_t b[8];
    struct kvssd_sqe s = sqe_retrieve("key", 3, 8);
    struct fake_host h = fake_host_over(b, 8);

    CU_ASSERT_EQUAL(fx_store("key", 3, "value", 5, 0), KVSSD_SC_SUCCESS);
    h.fail_status = KVSSD_SC_SGL_DESCR_TYPE_INVALID;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_SGL_DESCR_TYPE_INVALID);
}

/* Filling a tiny device: the firmware's CAPACITY_EXCEEDED (81h) reaches the CQE. */
static void test_capacity_exceeded(void)
{
    struct kvftl_config c;
    uint8_t *v = malloc(KVFTL_VALUE_MAX_BYTES);
    uint16_t st = KVSSD_SC_SUCCESS;
    uint32_t i;

    fx_ftl_config(&c);
    /* 6 erase blocks of 1 x 1 x 256 x 16 KiB = 24 MiB of NAND. */
    c.channels = 1;
    c.dies_per_channel = 1;
    c.pages_per_block = 256;
    c.page_size_bytes = 16384;
    c.gc_low_watermark_blocks = 2;
    c.gc_high_watermark_blocks = 2;
    c.blocks_per_die = 6;
    fx_open(NULL, &c);
    fill_pattern(v, KVFTL_VALUE_MAX_BYTES, 1);
    for (i = 0; i < 64 && st == KVSSD_SC_SUCCESS; i++) {
        st = fx_store(&i, sizeof(i), v, KVFTL_VALUE_MAX_BYTES, 0);
    }
    /* 24 MiB of NAND cannot hold 64 distinct 2 MiB values. */
    CU_ASSERT_EQUAL(st, KVSSD_SC_CAPACITY_EXCEEDED);
    CU_ASSERT(i > 1 && i < 64);
    /* The pair that did not fit is not there; the first one still is. */
    i--;
    CU_ASSERT_EQUAL(fx_exist(&i, sizeof(i)), KVSSD_SC_KEY_DOES_NOT_EXIST);
    i = 0;
    CU_ASSERT_EQUAL(fx_exist(&i, sizeof(i)), KVSSD_SC_SUCCESS);
    free(v);
}

/* Flush: success, completion not before the arrival time. */
static void test_flush(void)
{
    struct kvssd_sqe s = sqe_new(KVSSD_OPC_FLUSH);
    struct kvssd_req r;

    CU_ASSERT_EQUAL(fx_store("k", 1, "v", 1, 0), KVSSD_SC_SUCCESS);
    r = fx_exec_at(&s, NULL, 5000000);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT(r.done_ns >= 5000000);
    CU_ASSERT_EQUAL(r.dw0, 0);
    CU_ASSERT_EQUAL(r.dw1, 0);
}

/*
 * Simulated time: the arrival time reaches the firmware and its completion
 * time comes back. A Retrieve after a Flush reads NAND, so it completes at
 * least tR (read_latency_ns) after it arrived; a rejected command completes
 * at its arrival time.
 */
static void test_times(void)
{
    uint8_t b[8];
    struct kvssd_sqe s = sqe_retrieve("key", 3, 8);
    struct kvssd_sqe flush = sqe_new(KVSSD_OPC_FLUSH);
    struct kvssd_sqe bad = sqe_new(0x7f);
    struct fake_host h = fake_host_over(b, 8);
    uint64_t tr = kvftl_get_config(fx.ftl)->read_latency_ns;
    struct kvssd_req r;

    CU_ASSERT_EQUAL(fx_store("key", 3, "value", 5, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exec(&flush, NULL).status, KVSSD_SC_SUCCESS);
    r = fx_exec_at(&s, &h, 900000000);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT(tr > 0);
    CU_ASSERT(r.done_ns >= 900000000 + tr);
    r = fx_exec_at(&bad, NULL, 900000000);
    CU_ASSERT_EQUAL(r.done_ns, 900000000);
}

/* Every command executed counts once in xfer.commands, whatever its status. */
static void test_commands_counter(void)
{
    struct kvssd_sqe bad = sqe_new(0x7f);

    CU_ASSERT_EQUAL(fx.xfer.commands, 0);
    CU_ASSERT_EQUAL(fx_store("k", 1, "v", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_exist("k", 1), KVSSD_SC_SUCCESS);
    fx_exec(&bad, NULL);
    CU_ASSERT_EQUAL(fx.xfer.commands, 3);
    CU_ASSERT_EQUAL(fx.xfer.inline_commands, 0);
    CU_ASSERT_EQUAL(fx.xfer.key_stage_commands, 0);
}

/* ---- List ------------------------------------------------------------- */

/*
 * List after @start (NULL: from the first key) into a host buffer of
 * @buf_len (<= 64) bytes: success, DW0 = @keys, and the @expect_len bytes
 * of @expect are exactly what reaches the host.
 */
static void assert_list(const char *start, uint32_t buf_len, uint32_t keys, const uint8_t *expect,
                        uint32_t expect_len)
{
    uint8_t buf[64];
    struct kvssd_sqe s = sqe_list(start, start ? strlen(start) : 0, buf_len);
    struct fake_host h = fake_host_over(buf, buf_len);
    struct kvssd_req r;

    memset(buf, 0xee, sizeof(buf));
    r = fx_exec(&s, &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, keys);
    CU_ASSERT_EQUAL(h.to_bytes, expect_len);
    CU_ASSERT(memcmp(buf, expect, expect_len) == 0);
    CU_ASSERT_EQUAL(buf[expect_len], 0xee);
}

/*
 * List from the beginning over keys "b", "a", "ccc", "ab": the exact data
 * layout (count, then 2-byte length + key padded to 4) in byte order
 * a, ab, b, ccc; DW0 = 4.
 */
static void test_list_layout(void)
{
    static const uint8_t expect[] = {
        4, 0, 0, 0, 1, 0, 'a', 0, 2, 0, 'a', 'b', 1, 0, 'b', 0, 3, 0, 'c', 'c', 'c', 0, 0, 0,
    };

    CU_ASSERT_EQUAL(fx_store("b", 1, "1", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("a", 1, "2", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("ccc", 3, "3", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("ab", 2, "4", 1, 0), KVSSD_SC_SUCCESS);
    assert_list(NULL, 64, 4, expect, sizeof(expect));
}

/* List after start key "ab" returns only the keys after it: b, ccc (exclusive). */
static void test_list_after_start_key(void)
{
    static const uint8_t expect[] = {
        2, 0, 0, 0, 1, 0, 'b', 0, 3, 0, 'c', 'c', 'c', 0, 0, 0,
    };

    CU_ASSERT_EQUAL(fx_store("b", 1, "1", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("a", 1, "2", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("ccc", 3, "3", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("ab", 2, "4", 1, 0), KVSSD_SC_SUCCESS);
    assert_list("ab", 64, 2, expect, sizeof(expect));
}

/* A start key that is not stored ("aa") starts after where it would sort: ab, b. */
static void test_list_start_key_absent(void)
{
    static const uint8_t expect[] = {
        2, 0, 0, 0, 2, 0, 'a', 'b', 1, 0, 'b', 0,
    };

    CU_ASSERT_EQUAL(fx_store("a", 1, "1", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("ab", 2, "2", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("b", 1, "3", 1, 0), KVSSD_SC_SUCCESS);
    assert_list("aa", 64, 2, expect, sizeof(expect));
}

/*
 * List after a staged 20-byte start key "kkkkkkkkkkkkkkkkkkkk": of the keys
 * "k" x 19, "k" x 20, "k" x 21 and "l", only "k" x 21 and "l" follow it.
 */
static void test_list_long_start_key(void)
{
    uint8_t k19[19], k20[20], k21[21], buf[128];
    struct kvssd_sqe s = sqe_list(NULL, 0, sizeof(buf));
    struct fake_host h = fake_host_over(buf, sizeof(buf));
    struct kvssd_req r;

    memset(k19, 'k', sizeof(k19));
    memset(k20, 'k', sizeof(k20));
    memset(k21, 'k', sizeof(k21));
    CU_ASSERT_EQUAL(fx_store(k19, 19, "1", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store(k20, 20, "2", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store(k21, 21, "3", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("l", 1, "4", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_stage(k20, 20, 30), KVSSD_SC_SUCCESS);
    s.cdw[11] = kvssd_cdw11(20, 0);
    sqe_use_staged_key(&s, 30);
    r = fx_exec(&s, &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 2);
    CU_ASSERT_EQUAL(buf[4], 21);
    CU_ASSERT(memcmp(buf + 6, k21, 21) == 0);
    CU_ASSERT_EQUAL(buf[4 + 24], 1); /* entry of 21 bytes: 2 + 21 padded to 24 */
    CU_ASSERT_EQUAL(buf[4 + 24 + 2], 'l');
    CU_ASSERT_EQUAL(h.to_bytes, 4 + 24 + 4);
}

/* A 16-byte buffer holds the header and 3 one-byte-key entries: the first 3 keys. */
static void test_list_buffer_limits_entries(void)
{
    static const uint8_t expect[] = {3, 0, 0, 0, 1, 0, 'a', 0, 1, 0, 'b', 0, 1, 0, 'c', 0};

    for (const char *k = "edcba"; *k; k++) {
        CU_ASSERT_EQUAL(fx_store(k, 1, "v", 1, 0), KVSSD_SC_SUCCESS);
    }
    assert_list(NULL, 16, 3, expect, sizeof(expect));
}

static int u32_be_order(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * Paging through 500 keys with a 256-byte buffer, each List starting after
 * the last key returned, yields every key exactly once in ascending order.
 */
static void test_list_paging_covers_all(void)
{
    uint32_t keys[500];
    uint8_t buf[256];
    uint8_t start[4];
    uint32_t start_len = 0, seen = 0;

    for (uint32_t i = 0; i < 500; i++) {
        uint8_t k[4];

        keys[i] = i * 2654435761u;
        k[0] = keys[i] >> 24;
        k[1] = keys[i] >> 16;
        k[2] = keys[i] >> 8;
        k[3] = keys[i];
        CU_ASSERT_EQUAL(fx_store(k, 4, "v", 1, 0), KVSSD_SC_SUCCESS);
    }
    qsort(keys, 500, sizeof(keys[0]), u32_be_order);
    for (;;) {
        struct kvssd_sqe s = sqe_list(start, start_len, sizeof(buf));
        struct fake_host h = fake_host_over(buf, sizeof(buf));
        struct kvssd_req r = fx_exec(&s, &h);

        CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
        if (r.dw0 == 0) {
            break;
        }
        CU_ASSERT_EQUAL(r.dw0, MIN(31, 500 - seen)); /* (256 - 4) / 8 per page */
        for (uint32_t i = 0; i < r.dw0 && seen < 500; i++) {
            const uint8_t *e = buf + 4 + 8 * i;
            uint32_t v = (uint32_t)e[2] << 24 | (uint32_t)e[3] << 16 | (uint32_t)e[4] << 8 | e[5];

            CU_ASSERT_EQUAL(e[0], 4);
            CU_ASSERT_EQUAL(v, keys[seen]);
            seen++;
            memcpy(start, e + 2, 4);
        }
        start_len = 4;
    }
    CU_ASSERT_EQUAL(seen, 500);
}

/* List with a buffer smaller than its 4-byte header: INVALID_FIELD. */
static void test_list_buffer_too_small(void)
{
    uint8_t buf[4];
    struct kvssd_sqe s = sqe_list(NULL, 0, 3);
    struct fake_host h = fake_host_over(buf, sizeof(buf));

    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD);
}

/* ---- Iterators -------------------------------------------------------- */

/* Read every entry of @handle with a big buffer; returns the keys-only entries count. */
static uint32_t iter_drain_keys(uint32_t handle, char names[][8], uint32_t max)
{
    uint8_t buf[4096];
    uint32_t n = 0;

    for (;;) {
        struct kvssd_sqe s = sqe_iter_read(handle, sizeof(buf));
        struct fake_host h = fake_host_over(buf, sizeof(buf));
        struct kvssd_req r = fx_exec(&s, &h);
        uint32_t off = 8;

        if (r.status == KVSSD_SC_ITERATOR_END) {
            break;
        }
        CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
        for (uint32_t i = 0; i < r.dw0; i++) {
            uint32_t kl = buf[off] | buf[off + 1] << 8;

            if (n < max && kl < 8) {
                memcpy(names[n], buf + off + 2, kl);
                names[n][kl] = 0;
            }
            n++;
            off += kvssd_iter_entry_bytes(kl, 0, 0);
        }
        CU_ASSERT_EQUAL(off - 8, buf[4] | buf[5] << 8 | buf[6] << 16 | (uint32_t)buf[7] << 24);
    }
    return n;
}

/*
 * A device on an image file holding "dk0", "dk1", "dk2" (100-byte values of
 * 'v'), closed cleanly; then one byte of @damaged's value flipped in the file
 * (the key is found in the file: keys appear only in their blobs), and the
 * image mounted again. @order gets the keys in iteration order, found before
 * the damage.
 */
static void damaged_image_device(char *path, size_t path_len, int damaged_pos, char order[3][8])
{
    struct kvftl_config c;
    uint8_t value[100];
    int fd;

    snprintf(path, path_len, "/tmp/kvssd-cmdset-dmg-%d-XXXXXX", (int)getpid());
    fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    unlink(path);
    fx_ftl_config(&c);
    c.image_path = path;
    fx_open(NULL, &c);
    memset(value, 'v', sizeof(value));
    for (int i = 0; i < 3; i++) {
        char key[4] = {'d', 'k', (char)('0' + i), 0};
        CU_ASSERT_EQUAL_FATAL(fx_store(key, 3, value, sizeof(value), 0), KVSSD_SC_SUCCESS);
    }
    struct kvssd_sqe s = sqe_iter_open(0, 0, false);
    struct kvssd_req r = fx_exec(&s, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL_FATAL(iter_drain_keys(r.dw0, order, 3), 3);
    s = sqe_iter_close(r.dw0);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_SUCCESS);
    fx_close();

    gsize len;
    gchar *img;
    CU_ASSERT_FATAL(g_file_get_contents(path, &img, &len, NULL));
    uint8_t *at = memmem(img, len, order[damaged_pos], 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    CU_ASSERT_PTR_NULL(
        memmem(at + 1, len - (gsize)(at + 1 - (uint8_t *)img), order[damaged_pos], 3));
    CU_ASSERT_EQUAL(at[3 + 10], 'v');
    at[3 + 10] ^= 0x01;
    CU_ASSERT_FATAL(g_file_set_contents(path, img, (gssize)len, NULL));
    g_free(img);
    fx_open(NULL, &c);
}

/*
 * A value damaged in the image: Retrieve completes with Unrecovered Error
 * (the firmware's status, KVSSD_SC_UNRECOVERED_ERROR) and nothing reaches
 * the host; the other keys read back.
 */
static void test_retrieve_damaged_value_unrecovered(void)
{
    char path[64], order[3][8];
    uint8_t back[128];
    uint32_t dw0 = 0;

    damaged_image_device(path, sizeof(path), 1, order);
    struct kvssd_sqe s = sqe_retrieve(order[1], 3, sizeof(back));
    struct fake_host h = fake_host_over(back, sizeof(back));
    struct kvssd_req r = fx_exec(&s, &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_UNRECOVERED_ERROR);
    CU_ASSERT_EQUAL(h.to_calls, 0);
    CU_ASSERT_EQUAL(fx_retrieve(order[0], 3, back, sizeof(back), &dw0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(dw0, 100);
    CU_ASSERT_EQUAL(fx_retrieve(order[2], 3, back, sizeof(back), &dw0), KVSSD_SC_SUCCESS);
    fx_close();
    unlink(path);
}

/*
 * Iter Read of keys and values over the same damage, on the last key in
 * iteration order: the first read returns the two intact pairs (entries
 * gathered before a damaged blob are never dropped), the second completes
 * with Unrecovered Error and transfers nothing, the third is the end.
 */
static void test_iter_read_damaged_value(void)
{
    char path[64], order[3][8];
    uint8_t buf[4096];

    damaged_image_device(path, sizeof(path), 2, order);
    struct kvssd_sqe s = sqe_iter_open(0, 0, true);
    struct kvssd_req r = fx_exec(&s, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
    uint32_t handle = r.dw0;
    uint16_t want[3] = {KVSSD_SC_SUCCESS, KVSSD_SC_UNRECOVERED_ERROR, KVSSD_SC_ITERATOR_END};
    uint32_t entries[3] = {2, 0, 0};
    for (int i = 0; i < 3; i++) {
        struct fake_host h = fake_host_over(buf, sizeof(buf));
        s = sqe_iter_read(handle, sizeof(buf));
        r = fx_exec(&s, &h);
        CU_ASSERT_EQUAL(r.status, want[i]);
        if (want[i] == KVSSD_SC_SUCCESS) {
            CU_ASSERT_EQUAL(r.dw0, entries[i]);
            CU_ASSERT(memcmp(buf + 8 + 2, order[0], 3) == 0);
        } else {
            CU_ASSERT_EQUAL(h.to_calls, 0);
        }
    }
    s = sqe_iter_close(handle);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_SUCCESS);
    fx_close();
    unlink(path);
}

static int str_order(const void *a, const void *b)
{
    return strcmp(a, b);
}

/*
 * Prefix "ab" with mask FFFF0000h returns exactly the keys whose first two
 * bytes are "ab" (abc, abd, ab), not ac or b (prefix bytes read big-endian).
 */
static void test_iter_prefix_mask(void)
{
    static const char *stored[] = {"abc", "abd", "ab", "acx", "b", "xab"};
    char names[8][8];
    struct kvssd_sqe s = sqe_iter_open(0x61620000u, 0xffff0000u, false);
    struct kvssd_req r;
    uint32_t n;

    for (uint32_t i = 0; i < G_N_ELEMENTS(stored); i++) {
        CU_ASSERT_EQUAL(fx_store(stored[i], strlen(stored[i]), "v", 1, 0), KVSSD_SC_SUCCESS);
    }
    r = fx_exec(&s, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT(r.dw0 < KVSSD_ITER_MAX_HANDLES);
    n = iter_drain_keys(r.dw0, names, 8);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    qsort(names, n, sizeof(names[0]), str_order);
    CU_ASSERT_STRING_EQUAL(names[0], "ab");
    CU_ASSERT_STRING_EQUAL(names[1], "abc");
    CU_ASSERT_STRING_EQUAL(names[2], "abd");
}

/* Mask 0 matches every key: all 6 stored keys, each once. */
static void test_iter_mask_zero_all(void)
{
    static const char *stored[] = {"abc", "abd", "ab", "acx", "b", "xab"};
    char names[8][8];
    struct kvssd_sqe s = sqe_iter_open(0x12345678u, 0, false);
    struct kvssd_req r;

    for (uint32_t i = 0; i < G_N_ELEMENTS(stored); i++) {
        CU_ASSERT_EQUAL(fx_store(stored[i], strlen(stored[i]), "v", 1, 0), KVSSD_SC_SUCCESS);
    }
    r = fx_exec(&s, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(iter_drain_keys(r.dw0, names, 8), 6);
    qsort(names, 6, sizeof(names[0]), str_order);
    CU_ASSERT_STRING_EQUAL(names[0], "ab");
    CU_ASSERT_STRING_EQUAL(names[5], "xab");
}

/*
 * Key+value iteration of one pair ("kv1" -> "hello"): header {1, 16}, then
 * length 3, "kv1", value length 5, "hello", padded to 16 bytes.
 */
static void test_iter_key_value_layout(void)
{
    static const uint8_t expect[] = {
        1, 0, 0, 0, 16, 0, 0, 0, 3, 0, 'k', 'v', '1', 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', 0, 0,
    };
    uint8_t buf[64];
    struct kvssd_sqe o = sqe_iter_open(0x6b763100u, 0xffffff00u, true);
    struct kvssd_req r;
    struct kvssd_sqe s;
    struct fake_host h = fake_host_over(buf, sizeof(buf));

    CU_ASSERT_EQUAL(fx_store("kv1", 3, "hello", 5, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("zz", 2, "other", 5, 0), KVSSD_SC_SUCCESS);
    r = fx_exec(&o, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
    s = sqe_iter_read(r.dw0, sizeof(buf));
    memset(buf, 0xee, sizeof(buf));
    r = fx_exec(&s, &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 1);
    CU_ASSERT_EQUAL(h.to_bytes, sizeof(expect));
    CU_ASSERT(memcmp(buf, expect, sizeof(expect)) == 0);
}

/* An Iter Read whose data pointer fails: that status (a bad PRP offset) comes back. */
static void test_iter_read_dptr_failure(void)
{
    uint8_t buf[64];
    struct kvssd_sqe o = sqe_iter_open(0, 0, false);
    struct fake_host h = fake_host_over(buf, sizeof(buf));
    struct kvssd_req r;
    struct kvssd_sqe s;

    CU_ASSERT_EQUAL(fx_store("only", 4, "v", 1, 0), KVSSD_SC_SUCCESS);
    r = fx_exec(&o, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
    s = sqe_iter_read(r.dw0, sizeof(buf));
    h.fail_status = KVSSD_SC_INVALID_PRP_OFFSET;
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_PRP_OFFSET);
}

/* After the last entry was read, Iter Read gets ITERATOR_END (C9h) with no data. */
static void test_iter_end(void)
{
    uint8_t buf[64];
    struct kvssd_sqe o = sqe_iter_open(0, 0, false);
    struct fake_host h = fake_host_over(buf, sizeof(buf));
    struct kvssd_req r;
    struct kvssd_sqe s;

    CU_ASSERT_EQUAL(fx_store("only", 4, "v", 1, 0), KVSSD_SC_SUCCESS);
    r = fx_exec(&o, NULL);
    s = sqe_iter_read(r.dw0, sizeof(buf));
    r = fx_exec(&s, &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 1);
    h.to_calls = 0;
    r = fx_exec(&s, &h);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_ITERATOR_END);
    CU_ASSERT_EQUAL(r.dw0, 0);
    CU_ASSERT_EQUAL(h.to_calls, 0);
}

/* A 13-byte buffer holds the 8-byte header and one 4-byte entry: three reads of one key each. */
static void test_iter_small_buffer_pages(void)
{
    uint8_t buf[16];
    struct kvssd_sqe o = sqe_iter_open(0, 0, false);
    struct kvssd_req r;
    struct kvssd_sqe s;

    CU_ASSERT_EQUAL(fx_store("k1", 2, "v", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("k2", 2, "v", 1, 0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(fx_store("k3", 2, "v", 1, 0), KVSSD_SC_SUCCESS);
    r = fx_exec(&o, NULL);
    s = sqe_iter_read(r.dw0, 13); /* entry = 2-byte length + "kN" = 4 bytes; two need 16 */
    for (int i = 0; i < 3; i++) {
        struct fake_host h = fake_host_over(buf, sizeof(buf));

        r = fx_exec(&s, &h);
        CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(r.dw0, 1);
        CU_ASSERT_EQUAL(h.to_bytes, 12);
    }
    r = fx_exec(&s, NULL);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_ITERATOR_END);
}

/* The 17th open iterator gets ITERATOR_LIMIT (C7h); closing one frees a handle. */
static void test_iter_limit(void)
{
    struct kvssd_sqe o = sqe_iter_open(0, 0, false);
    uint32_t handles = 0;
    struct kvssd_req r;
    struct kvssd_sqe c;

    for (int i = 0; i < 16; i++) {
        r = fx_exec(&o, NULL);
        CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
        handles |= 1u << r.dw0;
    }
    CU_ASSERT_EQUAL(handles, 0xffff);
    CU_ASSERT_EQUAL(fx_exec(&o, NULL).status, KVSSD_SC_ITERATOR_LIMIT);
    c = sqe_iter_close(9);
    CU_ASSERT_EQUAL(fx_exec(&c, NULL).status, KVSSD_SC_SUCCESS);
    r = fx_exec(&o, NULL);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(r.dw0, 9);
}

/* Read or Close of a handle never opened (5) or out of range (200): INVALID_ITERATOR (C8h). */
static void test_iter_invalid_handle(void)
{
    uint8_t buf[64];
    struct fake_host h = fake_host_over(buf, sizeof(buf));
    struct kvssd_sqe s;

    s = sqe_iter_read(5, sizeof(buf));
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_ITERATOR);
    s = sqe_iter_read(200, sizeof(buf));
    CU_ASSERT_EQUAL(fx_exec(&s, &h).status, KVSSD_SC_INVALID_ITERATOR);
    s = sqe_iter_close(5);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_ITERATOR);
}

/* Iter Open with a reserved bit (CDW12 bit 1) or Iter Read with a 7-byte buffer: INVALID_FIELD. */
static void test_iter_reserved_fields(void)
{
    struct kvssd_sqe o = sqe_iter_open(0, 0, false);
    struct kvssd_req r;
    struct kvssd_sqe s;

    o.cdw[12] = 2;
    CU_ASSERT_EQUAL(fx_exec(&o, NULL).status, KVSSD_SC_INVALID_FIELD);
    o.cdw[12] = 0;
    r = fx_exec(&o, NULL);
    CU_ASSERT_EQUAL_FATAL(r.status, KVSSD_SC_SUCCESS);
    s = sqe_iter_read(r.dw0, 7);
    CU_ASSERT_EQUAL(fx_exec(&s, NULL).status, KVSSD_SC_INVALID_FIELD);
}

/* Controller reset closes the host's iterators and drops staged keys. */
static void test_reset_drops_state(void)
{
    uint8_t key[20] = {1};
    struct kvssd_sqe o = sqe_iter_open(0, 0, false);
    struct kvssd_req r = fx_exec(&o, NULL);
    struct kvssd_sqe rd = sqe_iter_read(r.dw0, 64);

    CU_ASSERT_EQUAL(fx_stage(key, 20, 1), KVSSD_SC_SUCCESS);
    kvssd_ns_reset(fx.ns);
    CU_ASSERT_EQUAL(kvssd_tags_in_use(fx.ns), 0);
    CU_ASSERT_EQUAL(fx_exec(&rd, NULL).status, KVSSD_SC_INVALID_ITERATOR);
    for (int i = 0; i < 16; i++) {
        CU_ASSERT_EQUAL(fx_exec(&o, NULL).status, KVSSD_SC_SUCCESS); /* all 16 free again */
    }
}

/* kvssd_ns_new rejects 0 and 4097 table entries and a 0 timeout with a sentence. */
static void test_ns_config_errors(void)
{
    struct kvssd_ns_config c = {.tag_table_entries = 0, .inline_timeout_ns = 1};
    char err[128];

    CU_ASSERT_PTR_NULL(kvssd_ns_new(fx.ftl, &c, NULL, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "tag_table_entries is 0; it must be from 1 to 4096");
    c.tag_table_entries = 4097;
    CU_ASSERT_PTR_NULL(kvssd_ns_new(fx.ftl, &c, NULL, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "tag_table_entries is 4097; it must be from 1 to 4096");
    c.tag_table_entries = 4096;
    c.inline_timeout_ns = 0;
    CU_ASSERT_PTR_NULL(kvssd_ns_new(fx.ftl, &c, NULL, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "inline_timeout_ns is 0; it must be at least 1 (ns)");
}

static const struct tap_test tests[] = {
    TAP_TEST(round_trip_key1),
    TAP_TEST(round_trip_key16),
    TAP_TEST(round_trip_key17),
    TAP_TEST(round_trip_key255),
    TAP_TEST(store_value_too_large),
    TAP_TEST(key_len_zero),
    TAP_TEST(store_options_both_bits),
    TAP_TEST(store_options_unknown_bit),
    TAP_TEST(store_only_if_exists_missing),
    TAP_TEST(store_only_if_absent_present),
    TAP_TEST(store_only_if_exists_overwrites),
    TAP_TEST(store_reserved_fields),
    TAP_TEST(store_fault_order),
    TAP_TEST(reserved_fields_other_commands),
    TAP_TEST(no_data_commands_ignore_tcp_null_sgl),
    TAP_TEST(retrieve_short_buffer),
    TAP_TEST(retrieve_zero_buffer_reports_size),
    TAP_TEST(retrieve_missing),
    TAP_TEST(delete_missing_without_ednek),
    TAP_TEST(delete_missing_with_ednek),
    TAP_TEST(delete_then_exist),
    TAP_TEST(long_key_not_staged),
    TAP_TEST(standard_long_key_without_stage),
    TAP_TEST(standard_long_key_with_stage),
    TAP_TEST(staged_key_consumed_once),
    TAP_TEST(long_key_reserved_field),
    TAP_TEST(key_stage_short_key),
    TAP_TEST(key_stage_tag_in_use),
    TAP_TEST(staged_key_length_mismatch),
    TAP_TEST(key_stage_dptr_failure),
    TAP_TEST(staged_key_expires),
    TAP_TEST(unknown_opcode),
    TAP_TEST(opcode_supported),
    TAP_TEST(store_dptr_failure),
    TAP_TEST(store_dptr_outside_ram),
    TAP_TEST(retrieve_dptr_failure),
    TAP_TEST(capacity_exceeded),
    TAP_TEST(flush),
    TAP_TEST(times),
    TAP_TEST(commands_counter),
    TAP_TEST(list_layout),
    TAP_TEST(list_after_start_key),
    TAP_TEST(list_start_key_absent),
    TAP_TEST(list_long_start_key),
    TAP_TEST(list_buffer_limits_entries),
    TAP_TEST(list_paging_covers_all),
    TAP_TEST(list_buffer_too_small),
    TAP_TEST(iter_prefix_mask),
    TAP_TEST(iter_mask_zero_all),
    TAP_TEST(iter_key_value_layout),
    TAP_TEST(iter_read_dptr_failure),
    TAP_TEST(iter_end),
    TAP_TEST(iter_small_buffer_pages),
    TAP_TEST(iter_limit),
    TAP_TEST(iter_invalid_handle),
    TAP_TEST(iter_reserved_fields),
    TAP_TEST(reset_drops_state),
    TAP_TEST(ns_config_errors),
    TAP_TEST(retrieve_damaged_value_unrecovered),
    TAP_TEST(iter_read_damaged_value),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE_FIXTURE("kv", fx_setup, fx_teardown, tests);

    return tap_main(&suite, 1);
}
