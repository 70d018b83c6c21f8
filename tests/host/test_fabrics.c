/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libkvssd.so on a KV-SSD exported by Linux's nvmet passthru target over
 * NVMe/TCP, as the initiator sees it: the in-process device of
 * tests/snia/loopdev.c in its passthru-target mode refuses Identify CNS
 * 05h (4001h), reports MDTS 7 (512 KiB) and fails a longer transfer with
 * EINVAL before sending it. kvssd_open() must read the KV Identify page
 * from log C2h instead, and Stores past MDTS must be refused with a
 * sentence before any command is sent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <kvssd/libkvssd.h>

#include "loopdev.h"
#include "tap_cunit.h"

#define KiB 1024u
#define MiB (1024u * 1024u)
#define TARGET_MDTS 7 /* what 6.12's passthru target exports behind nvme-pci */

static struct kvssd_dev *dev;
static uint8_t *value, *buf;

static void setup(void)
{
    value = malloc(2 * MiB);
    buf = malloc(2 * MiB);
    for (uint32_t i = 0; i < 2 * MiB; i++) {
        value[i] = (uint8_t)(i * 131u + 7u);
    }
    if (!value || !buf || loopdev_start() != 0) {
        printf("Bail out! the in-process device did not start\n");
        exit(1);
    }
    dev = NULL;
}

static void teardown(void)
{
    kvssd_close(dev);
    loopdev_stop();
    free(value);
    free(buf);
}

/* Open LOOPDEV_PATH behind the passthru target; a failed open ends the test. */
static void open_behind_target(void)
{
    loopdev_passthru_target(TARGET_MDTS);
    CU_ASSERT_EQUAL_FATAL(kvssd_open(LOOPDEV_PATH, &dev), 0);
}

/*
 * Identify CNS 05h refused with 4001h: kvssd_open() succeeds with the limits
 * a local open reads (NSZE, NUSE, keys of 255 bytes, KVMKL 16, values of
 * 2097152 bytes, KVMNK, NOVG), from three admin commands (the refused
 * Identify, log C2h, Identify Controller; a local open takes two), and
 * learns MDTS 7 = 524288 bytes per transfer (a local controller: none).
 */
static void test_open_identify_refused(void)
{
    struct kvssd_dev_info local;

    CU_ASSERT_EQUAL_FATAL(kvssd_open(LOOPDEV_PATH, &dev), 0);
    local = *kvssd_dev_info(dev);
    kvssd_close(dev);
    dev = NULL;
    CU_ASSERT_EQUAL(local.mdts, 0);
    CU_ASSERT_EQUAL(local.max_transfer_bytes, 0);

    uint64_t admin_before = loopdev_counts().admin_ioctls;
    open_behind_target();
    const struct kvssd_dev_info *i = kvssd_dev_info(dev);
    CU_ASSERT_EQUAL(loopdev_counts().admin_ioctls - admin_before, 3);
    CU_ASSERT_EQUAL(i->nsid, 1);
    CU_ASSERT_EQUAL(i->nsze_bytes, local.nsze_bytes);
    CU_ASSERT_EQUAL(i->nuse_bytes, local.nuse_bytes);
    CU_ASSERT_EQUAL(i->max_key_bytes, 255);
    CU_ASSERT_EQUAL(i->format_max_key_bytes, 16);
    CU_ASSERT_EQUAL(i->max_value_bytes, 2 * MiB);
    CU_ASSERT_EQUAL(i->max_keys, local.max_keys);
    CU_ASSERT_EQUAL(i->optimal_value_granularity_bytes, local.optimal_value_granularity_bytes);
    CU_ASSERT_STRING_EQUAL(i->serial, "SNIA01");
    CU_ASSERT_EQUAL(i->mdts, 7);
    CU_ASSERT_EQUAL(i->max_transfer_bytes, 512 * KiB);
}

/*
 * MDTS 7 and the prp method: a 2097152-byte Store is -KVSSD_ERR_VALUE_SIZE
 * with no command sent and the sentence naming size, limit and what fits;
 * 524289 bytes likewise; 524288 bytes is stored and read back whole
 * through a 2 MiB buffer (the Retrieve asks for 524288 bytes).
 */
static void test_store_past_mdts_prp(void)
{
    struct kvssd_result r;
    uint32_t len = 0;
    char why[256];

    open_behind_target();
    kvssd_set_xfer_mode(dev, KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL(kvssd_store_check(dev, 2 * MiB, why, sizeof(why)), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_STRING_EQUAL(why, "value of 2097152 bytes exceeds the controller's maximum transfer "
                                "of 524288 bytes (MDTS 7); a prp Store carries at most 524288 "
                                "bytes, an inline one any size");
    uint64_t io_before = loopdev_counts().io_ioctls;
    CU_ASSERT_EQUAL(kvssd_store(dev, "big", 3, value, 2 * MiB, 0, &r), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_EQUAL(r.commands, 0);
    CU_ASSERT_EQUAL(kvssd_store(dev, "big", 3, value, 512 * KiB + 1, 0, &r), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_EQUAL(loopdev_counts().io_ioctls, io_before);

    CU_ASSERT_EQUAL(kvssd_store_check(dev, 512 * KiB, why, sizeof(why)), 0);
    CU_ASSERT_EQUAL(kvssd_store(dev, "fits", 4, value, 512 * KiB, 0, &r), 0);
    CU_ASSERT_EQUAL(r.commands, 1);
    CU_ASSERT_EQUAL(kvssd_retrieve(dev, "fits", 4, buf, 2 * MiB, &len, &r), 0);
    CU_ASSERT_EQUAL(len, 512 * KiB);
    CU_ASSERT_EQUAL(memcmp(buf, value, 512 * KiB), 0);
}

/*
 * MDTS 7, hybrid: the data pointer carries the whole 4 KiB pages, so
 * 528383 bytes (524288 by PRP, 4095 inline) is stored; 528385 bytes
 * (528384 by PRP) is refused naming 528383 bytes as what fits. The
 * adaptive default sends 2097152 bytes by PRP: refused, naming prp.
 */
static void test_store_past_mdts_hybrid_adaptive(void)
{
    struct kvssd_result r;
    char why[256];

    open_behind_target();
    kvssd_set_xfer_mode(dev, KVSSD_XFER_HYBRID);
    CU_ASSERT_EQUAL(kvssd_store(dev, "h", 1, value, 528383, 0, &r), 0);
    CU_ASSERT_EQUAL(kvssd_store_check(dev, 528385, why, sizeof(why)), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_STRING_EQUAL(why, "value of 528385 bytes exceeds the controller's maximum transfer "
                                "of 524288 bytes (MDTS 7); a hybrid Store carries at most 528383 "
                                "bytes, an inline one any size");
    CU_ASSERT_EQUAL(kvssd_store(dev, "h", 1, value, 528385, 0, &r), -KVSSD_ERR_VALUE_SIZE);

    kvssd_set_xfer_mode(dev, KVSSD_XFER_ADAPTIVE);
    CU_ASSERT_EQUAL(kvssd_store_check(dev, 2 * MiB, why, sizeof(why)), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_STRING_EQUAL(why, "value of 2097152 bytes exceeds the controller's maximum transfer "
                                "of 524288 bytes (MDTS 7); a prp Store carries at most 524288 "
                                "bytes, an inline one any size");
}

/*
 * MDTS 7, inline: 1 MiB travels in commands (no data pointer) and is
 * stored; reading it back through a 2 MiB buffer, one transfer holds
 * 524288 bytes only: -KVSSD_ERR_VALUE_SIZE with the value's size, 1048576,
 * never a silent short read. A 1 MiB buffer gets the same answer.
 */
static void test_inline_past_mdts_and_read_back(void)
{
    struct kvssd_result r;
    uint32_t len = 0;

    open_behind_target();
    kvssd_set_xfer_mode(dev, KVSSD_XFER_INLINE);
    CU_ASSERT_EQUAL(kvssd_store_check(dev, 1 * MiB, NULL, 0), 0);
    CU_ASSERT_EQUAL(kvssd_store(dev, "in", 2, value, 1 * MiB, 0, &r), 0);
    CU_ASSERT_EQUAL(kvssd_retrieve(dev, "in", 2, buf, 2 * MiB, &len, &r), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_EQUAL(len, 1 * MiB);
    len = 0;
    CU_ASSERT_EQUAL(kvssd_retrieve(dev, "in", 2, buf, 1 * MiB, &len, &r), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_EQUAL(len, 1 * MiB);
}

static void async_done(void *arg, int err, const struct kvssd_result *res)
{
    int *out = arg;
    (void)res;
    *out = err;
}

/*
 * The asynchronous calls make the same checks: a 2097152-byte PRP Store is
 * refused at submission (-KVSSD_ERR_VALUE_SIZE), a 524288-byte one is
 * stored, and a Retrieve with a 2 MiB buffer of a 1 MiB inline-stored
 * value completes with -KVSSD_ERR_VALUE_SIZE.
 */
static void test_async_past_mdts(void)
{
    struct kvssd_queue *q;
    struct kvssd_result r;
    int err = 1;

    open_behind_target();
    kvssd_set_xfer_mode(dev, KVSSD_XFER_INLINE);
    CU_ASSERT_EQUAL_FATAL(kvssd_store(dev, "in", 2, value, 1 * MiB, 0, &r), 0);
    kvssd_set_xfer_mode(dev, KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL_FATAL(kvssd_queue_create(dev, 4, &q), 0);
    CU_ASSERT_EQUAL(kvssd_store_async(q, "big", 3, value, 2 * MiB, 0, async_done, &err),
                    -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_EQUAL(kvssd_store_async(q, "fits", 4, value, 512 * KiB, 0, async_done, &err), 0);
    CU_ASSERT_EQUAL(kvssd_queue_poll(q, 1), 1);
    CU_ASSERT_EQUAL(err, 0);
    err = 1;
    CU_ASSERT_EQUAL(kvssd_retrieve_async(q, "in", 2, buf, 2 * MiB, async_done, &err), 0);
    CU_ASSERT_EQUAL(kvssd_queue_poll(q, 1), 1);
    CU_ASSERT_EQUAL(err, -KVSSD_ERR_VALUE_SIZE);
    kvssd_queue_destroy(q);
}

static const struct tap_test tests[] = {
    TAP_TEST(open_identify_refused),
    TAP_TEST(store_past_mdts_prp),
    TAP_TEST(store_past_mdts_hybrid_adaptive),
    TAP_TEST(inline_past_mdts_and_read_back),
    TAP_TEST(async_past_mdts),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE_FIXTURE("fabrics", setup, teardown, tests);

    return tap_main(&suite, 1);
}
