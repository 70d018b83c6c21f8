/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The text of -device kvssd's number properties (hw/kvssd/properties.h),
 * the parse that the device's property setter (ctrl.c, kvssd_number_set())
 * and sim: (host/lib/sim.c) both call: a number as every tool reads it
 * (<bench/units.h>: 64Mi, 1e6, 0x10), exact values, and the one refusal
 * sentence "NAME is 'TEXT'; it must be RANGE". QEMU's own integer and size
 * properties refused 64Mi and 1e6; tests/qtest/kvssd-props-test.c runs the
 * same texts through QEMU.
 */
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "properties.h"
#include "tap_cunit.h"
#include "units_cases.h"

/* The row of properties.def named @prop. */
static const struct kvssd_property *row(const char *prop)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);

    for (size_t i = 0; i < count; i++) {
        if (!strcmp(p[i].prop, prop)) {
            return &p[i];
        }
    }
    CU_FAIL_FATAL("no such row of properties.def");
    return NULL;
}

/* @prop=@text through the device's parse: true and *@v, or false and the sentence in @err. */
static bool device_prop(const char *prop, const char *text, uint64_t *v, char *err, size_t len)
{
    const struct kvftl_tunable *t = kvftl_tunable_find(prop);

    err[0] = '\0';
    *v = 0xdeadbeef;
    if (t) {
        CU_ASSERT_FATAL(t->qemu && !strcmp(t->prop, prop));
        return kvssd_tunable_property_parse(t, text, v, err, len);
    }
    return kvssd_property_parse(row(prop), text, v, err, len);
}

#define ACCEPTS(prop, text, want)                                     \
    do {                                                              \
        uint64_t v_;                                                  \
        char e_[512];                                                 \
        CU_ASSERT_TRUE(device_prop(prop, text, &v_, e_, sizeof(e_))); \
        CU_ASSERT_EQUAL(v_, (uint64_t)(want));                        \
    } while (0)

#define REFUSES(prop, text, sentence)                                  \
    do {                                                               \
        uint64_t v_;                                                   \
        char e_[512];                                                  \
        CU_ASSERT_FALSE(device_prop(prop, text, &v_, e_, sizeof(e_))); \
        CU_ASSERT_STRING_EQUAL(e_, sentence);                          \
    } while (0)

/*
 * A byte count of properties.def (dma-unit, SIZE32) takes 64K = 64Ki and
 * hexadecimal; a count (inline-timeout-ms, completion-poll-ns, mdts) 1e3,
 * 10k and 2.5e3, and refuses Ki. Out of range, or no number: the sentence.
 */
static void test_device_property_numbers(void)
{
    ACCEPTS("dma-unit", "64Ki", 65536);
    ACCEPTS("dma-unit", "64K", 65536);
    ACCEPTS("dma-unit", "4k", 4096);
    ACCEPTS("dma-unit", "0x1000", 4096);
    ACCEPTS("dma-unit", "1", 1);
    REFUSES("dma-unit", "3K", "dma-unit is '3K'; it must be a power of two from 1 to 65536");
    REFUSES("dma-unit", "128Ki", "dma-unit is '128Ki'; it must be a power of two from 1 to 65536");
    ACCEPTS("inline-timeout-ms", "1e3", 1000);
    ACCEPTS("inline-timeout-ms", "10k", 10000);
    ACCEPTS("inline-timeout-ms", "2.5e3", 2500);
    REFUSES("inline-timeout-ms", "1Ki", "inline-timeout-ms is '1Ki'; it must be from 1 to 3600000");
    REFUSES("inline-timeout-ms", "0", "inline-timeout-ms is '0'; it must be from 1 to 3600000");
    ACCEPTS("completion-poll-ns", "1e6", 1000000);
    REFUSES("completion-poll-ns", "10000001",
            "completion-poll-ns is '10000001'; it must be from 0 to 10000000");
    ACCEPTS("mdts", "0xa", 10);
    REFUSES(
        "mdts", "2",
        "mdts is '2'; it must be from 9 (2 MiB) to 12 (16 MiB) (a power of two of 4 KiB pages)");
    REFUSES("max-ioqpairs", "two", "max-ioqpairs is 'two'; it must be from 1 to 64");
}

/*
 * A firmware tunable's property reads its number as kvftl_tunable_parse()
 * (the tools' tunable flags): index-dram-bytes=64Mi, max-keys=1e6,
 * page-size-bytes=32Ki; the range and sentence are the tunable's.
 */
static void test_tunable_property_numbers(void)
{
    ACCEPTS("index-dram-bytes", "64Mi", 64ull << 20);
    ACCEPTS("index-dram-bytes", "64M", 64ull << 20);
    ACCEPTS("index-dram-bytes", "1e6", 1000000);
    REFUSES("index-dram-bytes", "64x",
            "index-dram-bytes is '64x'; it must be at least two index pages (and 64 with bloom)");
    ACCEPTS("max-keys", "1e6", 1000000);
    ACCEPTS("max-keys", "100k", 100000);
    REFUSES("max-keys", "1Mi", "max-keys is '1Mi'; it must be any number");
    ACCEPTS("page-size-bytes", "32Ki", 32768);
    REFUSES("page-size-bytes", "64M",
            "page-size-bytes is '64M'; it must be a power of two from 4096 to 65536");
    ACCEPTS("channels", "0x8", 8);
    REFUSES("channels", "65", "channels is '65'; it must be from 1 to 64");
    REFUSES("channels", "4Ki", "channels is '4Ki'; it must be from 1 to 64");
}

/*
 * The unset value leaves the preset's: 0 (channels=0, though 0 is below
 * the range), or all ones where 0 is a value (KVFTL_TUNABLE_UNSET_MAX:
 * page-data-bytes=0 is "the whole page", 4294967295 the preset's).
 */
static void test_tunable_property_unset(void)
{
    ACCEPTS("channels", "0", 0);
    ACCEPTS("channels", "0x0", 0);
    ACCEPTS("page-data-bytes", "0", 0);
    ACCEPTS("page-data-bytes", "4294967295", UINT32_MAX);
    CU_ASSERT_EQUAL(kvssd_tunable_unset(kvftl_tunable_find("channels")), 0);
    CU_ASSERT_EQUAL(kvssd_tunable_unset(kvftl_tunable_find("page-data-bytes")), UINT32_MAX);
    /* one past a 32-bit field: no number of it, not the unset value */
    REFUSES("page-data-bytes", "4294967296",
            "page-data-bytes is '4294967296'; it must be 0 (the whole page) or a multiple of the "
            "large blob unit from 4096 to page-size-bytes");
}

/*
 * The units table (tests/common/units_cases.h) through the device's parse:
 * index-dram-bytes as a byte count, max-keys as a count, the same values
 * as units_u64() and kvftl_tunable_parse() give.
 */
static void test_units_table(void)
{
    for (size_t i = 0; i < sizeof(units_cases) / sizeof(units_cases[0]); i++) {
        const struct units_case *u = &units_cases[i];
        uint64_t v;
        char err[512];
        bool ok = device_prop("index-dram-bytes", u->text, &v, err, sizeof(err));
        if (ok != u->bytes_ok || (ok && v != u->bytes)) {
            printf("# index-dram-bytes=%s: %d, %llu; want %d, %llu\n", u->text, ok,
                   (unsigned long long)v, u->bytes_ok, (unsigned long long)u->bytes);
            CU_FAIL("index-dram-bytes");
        }
        ok = device_prop("max-keys", u->text, &v, err, sizeof(err));
        if (ok != u->count_ok || (ok && v != u->count)) {
            printf("# max-keys=%s: %d, %llu; want %d, %llu\n", u->text, ok, (unsigned long long)v,
                   u->count_ok, (unsigned long long)u->count);
            CU_FAIL("max-keys");
        }
    }
}

static const struct tap_test tests[] = {
    TAP_TEST(device_property_numbers),
    TAP_TEST(tunable_property_numbers),
    TAP_TEST(tunable_property_unset),
    TAP_TEST(units_table),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("properties", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
