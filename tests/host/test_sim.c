/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sim transport (host/lib/sim.c): libkvssd's own calls on
 * "sim:IMAGE[,prop=value...]", the device's command sets and firmware in
 * this process, persistent in IMAGE. Each test makes its images in a
 * fresh temporary directory, on a 128 MiB geometry (GEOMETRY).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <kvssd/libkvssd.h>

#include "sim.h"
#include "tap_cunit.h"

#define GEOMETRY \
    "channels=2,dies-per-channel=2,blocks-per-die=32,pages-per-block=64,page-size-bytes=16384"

static char dir[64];
static char image[128];
static char spec[512]; /* "sim:IMAGE,GEOMETRY" */

static int make_dir(void)
{
    snprintf(dir, sizeof(dir), "/tmp/kvssd-test-sim-XXXXXX");
    if (!mkdtemp(dir)) {
        return -1;
    }
    snprintf(image, sizeof(image), "%s/kv.img", dir);
    snprintf(spec, sizeof(spec), "sim:%s,%s", image, GEOMETRY);
    return 0;
}

static int remove_dir(void)
{
    unlink(image);
    return rmdir(dir);
}

/* A fresh image for each test. */
static struct kvssd_dev *open_fresh(void)
{
    struct kvssd_dev *dev = NULL;
    unlink(image);
    CU_ASSERT_EQUAL_FATAL(kvssd_open(spec, &dev), 0);
    return dev;
}

/* Store alpha=one, read it back, exist, delete: each call's exact outcome. */
static void test_put_get_exist_delete(void)
{
    struct kvssd_dev *dev = open_fresh();
    char buf[16] = {0};
    uint32_t len = 0;

    CU_ASSERT_EQUAL(kvssd_store(dev, "alpha", 5, "one", 3, 0, NULL), 0);
    CU_ASSERT_EQUAL(kvssd_retrieve(dev, "alpha", 5, buf, sizeof(buf), &len, NULL), 0);
    CU_ASSERT_EQUAL(len, 3);
    CU_ASSERT_EQUAL(memcmp(buf, "one", 3), 0);
    CU_ASSERT_EQUAL(kvssd_exist(dev, "alpha", 5, NULL), 0);
    CU_ASSERT_EQUAL(kvssd_store(dev, "alpha", 5, "two", 3, KVSSD_STORE_OPT_ONLY_IF_ABSENT, NULL),
                    -KVSSD_ERR_KEY_EXISTS);
    CU_ASSERT_EQUAL(kvssd_delete(dev, "alpha", 5, NULL), 0);
    CU_ASSERT_EQUAL(kvssd_exist(dev, "alpha", 5, NULL), -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(kvssd_retrieve(dev, "alpha", 5, buf, sizeof(buf), &len, NULL),
                    -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_STRING_EQUAL(kvssd_dev_info(dev)->model, "KVSSD Key-Value SSD simulator (sim:)");
    CU_ASSERT_EQUAL(kvssd_dev_info(dev)->nsid, 1);
    kvssd_close(dev);
}

/*
 * A 40-byte key (Key Stage) with a 5000-byte value by each transfer method:
 * prp, inline and hybrid all store it, and the bytes come back.
 */
static void test_transfer_methods(void)
{
    static const enum kvssd_xfer_mode modes[] = {KVSSD_XFER_PRP, KVSSD_XFER_INLINE,
                                                 KVSSD_XFER_HYBRID};
    struct kvssd_dev *dev = open_fresh();
    uint8_t key[40], value[5000], out[5000];
    struct kvssd_result res;
    uint32_t len;

    for (unsigned m = 0; m < 3; m++) {
        memset(key, 'k', sizeof(key));
        key[0] = (uint8_t)('0' + m);
        for (unsigned i = 0; i < sizeof(value); i++) {
            value[i] = (uint8_t)(i * 7 + m);
        }
        kvssd_set_xfer_mode(dev, modes[m]);
        CU_ASSERT_EQUAL(kvssd_store(dev, key, sizeof(key), value, sizeof(value), 0, &res), 0);
        memset(out, 0, sizeof(out));
        len = 0;
        CU_ASSERT_EQUAL(kvssd_retrieve(dev, key, sizeof(key), out, sizeof(out), &len, NULL), 0);
        CU_ASSERT_EQUAL(len, sizeof(value));
        CU_ASSERT_EQUAL(memcmp(out, value, sizeof(value)), 0);
    }
    kvssd_close(dev);
}

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Five keys under "usr0" and two others: List returns all 7, a "usr0" iterator exactly the 5. */
static void test_list_and_iterate(void)
{
    static const char *const keys[] = {"usr0a", "usr0b", "usr0c", "usr0d", "usr0e", "zeta", "eta"};
    struct kvssd_dev *dev = open_fresh();
    uint8_t buf[4096] = {0}; /* List data ends at the first zero key length */
    char seen[8][32];
    const char *sorted[8];
    const uint8_t *k, *v;
    uint32_t off = 0, klen, vlen;
    int n = 0;

    for (unsigned i = 0; i < 7; i++) {
        CU_ASSERT_EQUAL(kvssd_store(dev, keys[i], (uint32_t)strlen(keys[i]), "v", 1, 0, NULL), 0);
    }
    CU_ASSERT_EQUAL(kvssd_list(dev, NULL, 0, buf, sizeof(buf), NULL), 7);
    while (n < 8 && kvssd_list_parse(buf, sizeof(buf), &off, &k, &klen) == 1) {
        snprintf(seen[n], sizeof(seen[n]), "%.*s", (int)klen, (const char *)k);
        sorted[n] = seen[n];
        n++;
    }
    CU_ASSERT_EQUAL_FATAL(n, 7);
    qsort(sorted, 7, sizeof(sorted[0]), compare_keys);
    CU_ASSERT_STRING_EQUAL(sorted[0], "eta");
    CU_ASSERT_STRING_EQUAL(sorted[1], "usr0a");
    CU_ASSERT_STRING_EQUAL(sorted[5], "usr0e");
    CU_ASSERT_STRING_EQUAL(sorted[6], "zeta");

    struct kvssd_iter it;
    n = 0;
    CU_ASSERT_EQUAL_FATAL(kvssd_iter_open(dev, &it, "usr0", 4, true, 4096), 0);
    while (kvssd_iter_next(&it, &k, &klen, &v, &vlen) == 1 && n < 8) {
        CU_ASSERT_EQUAL(klen, 5);
        CU_ASSERT_EQUAL(memcmp(k, "usr0", 4), 0);
        CU_ASSERT_EQUAL(vlen, 1);
        CU_ASSERT_EQUAL(v[0], 'v');
        n++;
    }
    CU_ASSERT_EQUAL(n, 5);
    CU_ASSERT_EQUAL(kvssd_iter_close(&it), 0);
    kvssd_close(dev);
}

struct async_count {
    int done, errors;
};

static void count_cb(void *arg, int err, const struct kvssd_result *res)
{
    struct async_count *c = arg;
    (void)res;
    c->done++;
    c->errors += err != 0;
}

/* 32 stores then 32 retrieves through a queue of depth 8: all 64 called back, values exact. */
static void test_async(void)
{
    struct kvssd_dev *dev = open_fresh();
    struct kvssd_queue *q;
    struct async_count c = {0};
    char keys[32][24], values[32][8], out[32][8];

    CU_ASSERT_EQUAL_FATAL(kvssd_queue_create(dev, 8, &q), 0);
    for (int i = 0; i < 32; i++) {
        snprintf(keys[i], sizeof(keys[i]), "async-key-%02d-long-one", i); /* 22 bytes: staged */
        snprintf(values[i], sizeof(values[i]), "val%04d", i);
        while (kvssd_store_async(q, keys[i], 22, values[i], 7, 0, count_cb, &c) ==
               -KVSSD_ERR_BUSY) {
            CU_ASSERT_FATAL(kvssd_queue_poll(q, 1) >= 0);
        }
    }
    while (kvssd_queue_outstanding(q)) {
        CU_ASSERT_FATAL(kvssd_queue_poll(q, 1) >= 0);
    }
    CU_ASSERT_EQUAL(c.done, 32);
    for (int i = 0; i < 32; i++) {
        while (kvssd_retrieve_async(q, keys[i], 22, out[i], 7, count_cb, &c) == -KVSSD_ERR_BUSY) {
            CU_ASSERT_FATAL(kvssd_queue_poll(q, 1) >= 0);
        }
    }
    while (kvssd_queue_outstanding(q)) {
        CU_ASSERT_FATAL(kvssd_queue_poll(q, 1) >= 0);
    }
    CU_ASSERT_EQUAL(c.done, 64);
    CU_ASSERT_EQUAL(c.errors, 0);
    for (int i = 0; i < 32; i++) {
        CU_ASSERT_EQUAL(memcmp(out[i], values[i], 7), 0);
    }
    kvssd_queue_destroy(q);
    kvssd_close(dev);
}

/* What was stored is there after close and reopen of the image; a deleted key stays deleted. */
static void test_persists(void)
{
    struct kvssd_dev *dev = open_fresh();
    char buf[16] = {0};
    uint32_t len = 0;

    CU_ASSERT_EQUAL(kvssd_store(dev, "kept", 4, "value-1", 7, 0, NULL), 0);
    CU_ASSERT_EQUAL(kvssd_store(dev, "gone", 4, "x", 1, 0, NULL), 0);
    CU_ASSERT_EQUAL(kvssd_delete(dev, "gone", 4, NULL), 0);
    kvssd_close(dev);

    CU_ASSERT_EQUAL_FATAL(kvssd_open(spec, &dev), 0);
    CU_ASSERT_EQUAL(kvssd_retrieve(dev, "kept", 4, buf, sizeof(buf), &len, NULL), 0);
    CU_ASSERT_EQUAL(len, 7);
    CU_ASSERT_EQUAL(memcmp(buf, "value-1", 7), 0);
    CU_ASSERT_EQUAL(kvssd_exist(dev, "gone", 4, NULL), -KVSSD_ERR_KEY_NOT_FOUND);
    kvssd_close(dev);
}

/* A second opener of an open image is refused by the image lock, with the firmware's sentence. */
static void test_lock_refuses_second_opener(void)
{
    struct kvssd_dev *dev = open_fresh();
    struct kvssd_dev *second = NULL;
    struct kvssd_sim *sim = NULL;
    char err[512], want[512];

    CU_ASSERT_EQUAL(kvssd_sim_open(spec + 4, &sim, err, sizeof(err)), -KVSSD_ERR_NO_DEVICE);
    CU_ASSERT_PTR_NULL(sim);
    /* our own lock: F_GETLK does not name this process to itself */
    snprintf(want, sizeof(want),
             "image_path %s is in use by another device or process (its process id is not "
             "known); an image can back only one device at a time",
             image);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(kvssd_open(spec, &second), -KVSSD_ERR_NO_DEVICE);
    kvssd_close(dev);
    /* closed: the lock is gone */
    CU_ASSERT_EQUAL(kvssd_open(spec, &second), 0);
    kvssd_close(second);
}

/* Bad properties: refused before any file is touched, each with the sentence naming it. */
static void test_bad_property(void)
{
    struct kvssd_sim_config *cfg = malloc(sizeof(*cfg));
    struct kvssd_dev *dev = NULL;
    char err[512];
    char big[KVSSD_SIM_SPEC_MAX + 2];

    CU_ASSERT_FATAL(cfg != NULL);
    unlink(image);
    CU_ASSERT_EQUAL(kvssd_sim_parse("a.img,packing=tight", cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "packing is 'tight'; it must be block, all, selective or backfill");
    CU_ASSERT_EQUAL(kvssd_sim_parse("a.img,colour=red", cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "'colour' is not a property of the device; the properties are "
                                "those of -device kvssd (docs/properties.md)");
    CU_ASSERT_EQUAL(kvssd_sim_parse("a.img,mdts=8", cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "mdts is '8'; it must be from 9 (2 MiB) to 12 (16 MiB) (a power "
                                "of two of 4 KiB pages)");
    CU_ASSERT_EQUAL(kvssd_sim_parse("a.img,preset=pm984", cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "preset is 'pm984'; it must be default, pm983 or cosmos");
    CU_ASSERT_EQUAL(kvssd_sim_parse("a.img,latency", cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "property 'latency' is not prop=value");
    CU_ASSERT_EQUAL(kvssd_sim_parse(",preset=pm983", cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "no image file: give one as sim:IMAGE[,prop=value...]");
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    CU_ASSERT_EQUAL(kvssd_sim_parse(big, cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "the image and properties are longer than 4096 bytes");
    snprintf(big, sizeof(big), "sim:%s,packing=tight", image);
    CU_ASSERT_EQUAL(kvssd_open(big, &dev), -KVSSD_ERR_INVALID_ARGUMENT);
    CU_ASSERT_EQUAL(access(image, F_OK), -1); /* no image made */
    free(cfg);
}

/* The preset applies first wherever it is written; the other properties land on their fields. */
static void test_properties_applied(void)
{
    struct kvssd_sim_config *cfg = malloc(sizeof(*cfg));
    char err[512] = "";

    CU_ASSERT_FATAL(cfg != NULL);
    CU_ASSERT_EQUAL(kvssd_sim_parse("b.img,packing=all,serial=SIM42,tag-table-entries=64,"
                                    "dma-unit=64K,preset=pm983",
                                    cfg, err, sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_STRING_EQUAL(cfg->ftl.image_path, "b.img");
    CU_ASSERT_EQUAL(cfg->ftl.packing, KVFTL_PACK_ALL);
    CU_ASSERT_EQUAL(cfg->ftl.page_size_bytes, 32768); /* pm983's */
    CU_ASSERT_STRING_EQUAL(cfg->props.serial, "SIM42");
    CU_ASSERT_EQUAL(cfg->props.tag_table_entries, 64);
    CU_ASSERT_EQUAL(cfg->props.dma_unit, 65536);
    CU_ASSERT_EQUAL(cfg->props.mdts, 9); /* properties.def's default */
    free(cfg);
}

/*
 * Numbers in sim: properties as every tool reads them (<bench/units.h>):
 * a size property or tunable takes 4Ki and 64Mi, a count 1e6 and 10k
 * (decimal); "4kk" is refused with the property's range. As -device kvssd
 * (hw/kvssd/properties.h), a tunable's 0 leaves the preset's value:
 * channels=0 with pm983 is pm983's 8 channels.
 */
static void test_property_units(void)
{
    struct kvssd_sim_config *cfg = malloc(sizeof(*cfg));
    char err[512] = "";

    CU_ASSERT_FATAL(cfg != NULL);
    CU_ASSERT_EQUAL(kvssd_sim_parse("c.img,dma-unit=4Ki,completion-poll-ns=1e6,"
                                    "index-dram-bytes=64Mi,max-keys=10k,tag-table-entries=0x10",
                                    cfg, err, sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL(cfg->props.dma_unit, 4096);
    CU_ASSERT_EQUAL(cfg->props.completion_poll_ns, 1000000);
    CU_ASSERT_EQUAL(cfg->ftl.index_dram_bytes, 64ull << 20);
    CU_ASSERT_EQUAL(cfg->ftl.max_keys, 10000);
    CU_ASSERT_EQUAL(cfg->props.tag_table_entries, 16);
    CU_ASSERT_EQUAL(kvssd_sim_parse("c.img,dma-unit=4kk", cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "dma-unit is '4kk'; it must be a power of two from 1 to 65536");
    CU_ASSERT_EQUAL(kvssd_sim_parse("c.img,preset=pm983,channels=0", cfg, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(cfg->ftl.channels, 8);
    CU_ASSERT_EQUAL(kvssd_sim_parse("c.img,channels=65", cfg, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "channels is '65'; it must be from 1 to 64");
    free(cfg);
}

/*
 * An image written through sim: is the device's image: the firmware's own
 * open path (kvftl_open, as -device kvssd,image= realizes) mounts it from
 * its checkpoint and returns the value.
 */
static void test_image_mounts_in_firmware(void)
{
    struct kvssd_dev *dev = open_fresh();
    struct kvssd_sim_config *cfg = malloc(sizeof(*cfg));
    struct kvftl_cpl cpl;
    char err[512], buf[16] = {0};

    CU_ASSERT_FATAL(cfg != NULL);
    CU_ASSERT_EQUAL(kvssd_store(dev, "mounted", 7, "by-kvftl", 8, 0, NULL), 0);
    kvssd_close(dev);

    CU_ASSERT_EQUAL_FATAL(kvssd_sim_parse(spec + 4, cfg, err, sizeof(err)), 0);
    struct kvftl *ftl = kvftl_open(&cfg->ftl, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(ftl);
    CU_ASSERT_PTR_NULL(kvftl_mount_note(ftl)); /* a clean close: from the checkpoint */
    kvftl_retrieve(ftl, "mounted", 7, buf, 0, sizeof(buf), 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl.value_bytes, 8);
    CU_ASSERT_EQUAL(memcmp(buf, "by-kvftl", 8), 0);
    kvftl_close(ftl);
    free(cfg);
}

/*
 * The configuration log (C1h) of a sim: device names the preset and the
 * latency property it was opened with, as a QEMU device's does.
 */
static void test_config_log_names_the_properties(void)
{
    char cosmos[sizeof(spec) + 32];
    struct kvssd_dev *dev = NULL;
    struct kvssd_config_log log;

    unlink(image);
    snprintf(cosmos, sizeof(cosmos), "%s,preset=cosmos,latency=on", spec);
    CU_ASSERT_EQUAL_FATAL(kvssd_open(cosmos, &dev), 0);
    CU_ASSERT_EQUAL(kvssd_get_config(dev, &log, NULL), 0);
    CU_ASSERT_STRING_EQUAL(log.preset, "cosmos");
    CU_ASSERT_STRING_EQUAL(log.index, "lsm"); /* cosmos's design (tunables.def) */
    CU_ASSERT_EQUAL(log.latency, 1);
    kvssd_close(dev);
}

/*
 * An image keeps its index design: made with preset=pm983,index=hash and
 * opened again with preset=pm983 and no index (the preset's is pm983), it
 * mounts with hash and returns its value; index=lsm is refused, and
 * index=auto is the image's too. (page-data-bytes=0: pm983's 25088 is
 * more than GEOMETRY's 16 KiB page.)
 */
static void test_image_keeps_its_index_design(void)
{
    char made[sizeof(spec) + 64], again[sizeof(spec) + 64], buf[16] = {0};
    struct kvssd_dev *dev = NULL;
    struct kvssd_config_log log;
    uint32_t got = 0;

    unlink(image);
    snprintf(made, sizeof(made), "%s,preset=pm983,page-data-bytes=0,index=hash", spec);
    CU_ASSERT_EQUAL_FATAL(kvssd_open(made, &dev), 0);
    CU_ASSERT_EQUAL(kvssd_store(dev, "kept", 4, "hash", 4, 0, NULL), 0);
    kvssd_close(dev);
    const char *const reopen[] = {"preset=pm983,page-data-bytes=0",
                                  "preset=pm983,page-data-bytes=0,index=auto"};
    for (size_t i = 0; i < sizeof(reopen) / sizeof(reopen[0]); i++) {
        snprintf(again, sizeof(again), "%s,%s", spec, reopen[i]);
        CU_ASSERT_EQUAL_FATAL(kvssd_open(again, &dev), 0);
        CU_ASSERT_EQUAL(kvssd_get_config(dev, &log, NULL), 0);
        CU_ASSERT_STRING_EQUAL(log.preset, "pm983");
        CU_ASSERT_STRING_EQUAL(log.index, "hash");
        CU_ASSERT_EQUAL(kvssd_retrieve(dev, "kept", 4, buf, sizeof(buf), &got, NULL), 0);
        CU_ASSERT_EQUAL(got, 4);
        CU_ASSERT_EQUAL(memcmp(buf, "hash", 4), 0);
        kvssd_close(dev);
    }
    snprintf(again, sizeof(again), "%s,preset=pm983,page-data-bytes=0,index=lsm", spec);
    CU_ASSERT_EQUAL(kvssd_open(again, &dev), -KVSSD_ERR_NO_DEVICE);
}

static const struct tap_test host_sim_tests[] = {
    TAP_TEST(put_get_exist_delete),
    TAP_TEST(transfer_methods),
    TAP_TEST(list_and_iterate),
    TAP_TEST(async),
    TAP_TEST(persists),
    TAP_TEST(lock_refuses_second_opener),
    TAP_TEST(bad_property),
    TAP_TEST(properties_applied),
    TAP_TEST(property_units),
    TAP_TEST(image_mounts_in_firmware),
    TAP_TEST(config_log_names_the_properties),
    TAP_TEST(image_keeps_its_index_design),
};

int main(void)
{
    const struct tap_suite suites[] = {
        TAP_SUITE("host_sim", make_dir, remove_dir, host_sim_tests),
    };

    return tap_main(suites, sizeof(suites) / sizeof(suites[0]));
}
