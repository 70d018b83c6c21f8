/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libkvssd.so on a KV-SSD exported by Linux's nvmet passthru target over
 * NVMe/TCP, as the initiator sees it: the in-process device of
 * tests/snia/loopdev.c in its passthru-target mode refuses Identify CNS
 * 05h (4001h), reports MDTS 7 (512 KiB) and fails a longer transfer with
 * EINVAL before sending it. kvssd_open() must read the KV Identify page
 * from log C2h instead.
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
 * Identify, log C2h, Identify Controller; a local open takes two).
 */
static void test_open_identify_refused(void)
{
    struct kvssd_dev_info local;

    CU_ASSERT_EQUAL_FATAL(kvssd_open(LOOPDEV_PATH, &dev), 0);
    local = *kvssd_dev_info(dev);
    kvssd_close(dev);
    dev = NULL;

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
}

static const struct tap_test tests[] = {
    TAP_TEST(open_identify_refused),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE_FIXTURE("fabrics", setup, teardown, tests);

    return tap_main(&suite, 1);
}
