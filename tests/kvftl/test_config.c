/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The configuration: presets and per-field checks, from include/kvftl/tunables.def. */
#include "helpers.h"

/* Compare every field of two configs (strings by pointer: presets hold NULL). */
static int config_differs(const struct kvftl_config *a, const struct kvftl_config *b,
                          const char *what)
{
    int n = 0;
#define KVFTL_TUNABLE(f, ...)                   \
    if (a->f != b->f) {                         \
        printf("# %s: %s differs\n", what, #f); \
        n++;                                    \
    }
#include <kvftl/tunables.def>
    return n;
}

/*
 * The three presets hold exactly the values kvftl_config_preset() set by
 * hand before the table existed (kvftl.c at 6bed62a), field by field.
 */
static void test_presets_keep_their_values(void)
{
    struct kvftl_config want_default = {
        .command_set = KVFTL_CMDSET_KV,
        .lba_bytes = 4096,
        .channels = 4,
        .dies_per_channel = 4,
        .blocks_per_die = 128,
        .pages_per_block = 128,
        .page_size_bytes = 16384,
        .read_latency_ns = 50000,
        .program_latency_ns = 500000,
        .erase_latency_ns = 3000000,
        .channel_bytes_per_us = 800,
        .dram_copy_bytes_per_us = 2000,
        .placement_unit_bytes = 1024,
        .packing = KVFTL_PACK_ALL,
        .buffer_entries = 64,
        .dlt_entries = 0,
        .index_dram_bytes = 64ull << 20,
        .index_page_bytes = 0,
        .bloom = true,
        .bloom_bits_per_key = 10,
        .max_keys = 0,
        .overprovision_percent = 7,
        .gc_high_watermark_blocks = 8,
        .gc_low_watermark_blocks = 3,
        .gc_policy = KVFTL_GC_GREEDY,
        .plp = true,
        .image_path = NULL,
    };
    struct kvftl_config want_pm983 = want_default;
    want_pm983.channels = 8;
    want_pm983.dies_per_channel = 4;
    want_pm983.blocks_per_die = 256;
    want_pm983.pages_per_block = 64;
    want_pm983.page_size_bytes = 32768;
    want_pm983.read_latency_ns = 60000;
    want_pm983.program_latency_ns = 700000;
    want_pm983.erase_latency_ns = 3500000;
    want_pm983.large_blob_unit_bytes = 1;
    want_pm983.page_fit_blobs = true;
    want_pm983.page_data_bytes = 25088;
    want_pm983.buffer_entries = 128;
    want_pm983.index_dram_bytes = 256ull << 20;
    struct kvftl_config want_cosmos = want_default;
    want_cosmos.dies_per_channel = 8;
    want_cosmos.blocks_per_die = 256;
    want_cosmos.read_latency_ns = 60000;
    want_cosmos.program_latency_ns = 1000000;
    want_cosmos.erase_latency_ns = 3500000;
    want_cosmos.channel_bytes_per_us = 200;
    want_cosmos.dram_copy_bytes_per_us = 1000;
    want_cosmos.placement_unit_bytes = 1;
    want_cosmos.packing = KVFTL_PACK_BACKFILL;
    want_cosmos.buffer_entries = 512;
    want_cosmos.index_dram_bytes = 128ull << 20;

    struct kvftl_config c;
    CU_ASSERT_EQUAL(kvftl_config_preset(&c, "default"), 0);
    CU_ASSERT_EQUAL(config_differs(&c, &want_default, "default"), 0);
    CU_ASSERT_EQUAL(kvftl_config_preset(&c, NULL), 0);
    CU_ASSERT_EQUAL(config_differs(&c, &want_default, "NULL"), 0);
    CU_ASSERT_EQUAL(kvftl_config_preset(&c, "pm983"), 0);
    CU_ASSERT_EQUAL(config_differs(&c, &want_pm983, "pm983"), 0);
    CU_ASSERT_EQUAL(kvftl_config_preset(&c, "cosmos"), 0);
    CU_ASSERT_EQUAL(config_differs(&c, &want_cosmos, "cosmos"), 0);
    /* an unknown name leaves the config untouched */
    CU_ASSERT_EQUAL(kvftl_config_preset(&c, "pm9a3"), -1);
    CU_ASSERT_EQUAL(config_differs(&c, &want_cosmos, "after unknown"), 0);
    /* and every preset passes its own checks */
    char err[256] = "";
    for (int i = 0; i < KVFTL_PRESETS; i++) {
        CU_ASSERT_EQUAL(kvftl_config_preset(&c, kvftl_preset_names[i]), 0);
        CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), 0);
    }
}

/* One field out of its own range: the sentence names it, its value and the range. */
static void test_each_field_sentence(void)
{
    static const struct {
        const char *field;
        uint64_t value;
        const char *sentence;
    } cases[] = {
        {"channels", 0, "channels is 0; it must be from 1 to 64"},
        {"channels", 65, "channels is 65; it must be from 1 to 64"},
        {"dies_per_channel", 65, "dies_per_channel is 65; it must be from 1 to 64"},
        {"pages_per_block", 0, "pages_per_block is 0; it must be from 1 to 65536"},
        {"page_size_bytes", 3000,
         "page_size_bytes is 3000; it must be a power of two from 4096 to 65536"},
        {"page_size_bytes", 131072,
         "page_size_bytes is 131072; it must be a power of two from 4096 to 65536"},
        {"channel_bytes_per_us", 0, "channel_bytes_per_us is 0; it must be at least 1"},
        {"placement_unit_bytes", 3,
         "placement_unit_bytes is 3; it must be a power of two from 1 to 4096"},
        {"packing", 4,
         "packing is 4; it must be 0 (block), 1 (all), 2 (selective) or 3 (backfill)"},
        {"buffer_entries", 1, "buffer_entries is 1; it must be from 2 to 4096"},
        {"overprovision_percent", 51, "overprovision_percent is 51; it must be from 1 to 50"},
        {"gc_low_watermark_blocks", 1, "gc_low_watermark_blocks is 1; it must be at least 2"},
        {"gc_policy", 2, "gc_policy is 2; it must be 0 (greedy) or 1 (cost-benefit)"},
        {"blocks_per_die", 11,
         "blocks_per_die is 11; it must be from 12 (gc_high_watermark_blocks + 4) to 1048576"},
        {"gc_high_watermark_blocks", 2,
         "gc_high_watermark_blocks is 2; it must be at least gc_low_watermark_blocks (3)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kvftl_config c;
        char err[256] = "";
        kvftl_config_preset(&c, "default");
        const struct kvftl_tunable *t = kvftl_tunable_find(cases[i].field);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        kvftl_tunable_put(&c, t, cases[i].value);
        CU_ASSERT_EQUAL(kvftl_tunable_get(&c, t), cases[i].value);
        CU_ASSERT_EQUAL(kvftl_config_check(&c, err, sizeof(err)), -1);
        if (strcmp(err, cases[i].sentence) != 0) {
            printf("# %s = %llu: got \"%s\"\n", cases[i].field, (unsigned long long)cases[i].value,
                   err);
        }
        CU_ASSERT_STRING_EQUAL(err, cases[i].sentence);
    }
}

/* Text for a tunable, as a flag or property gives it: names, on/off, numbers with K/M/G. */
static void test_parse(void)
{
    struct kvftl_config c;
    char err[256] = "";
    kvftl_config_preset(&c, "default");
    CU_ASSERT_EQUAL(kvftl_tunable_parse(&c, kvftl_tunable_find("packing"), "packing", "backfill",
                                        err, sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(c.packing, KVFTL_PACK_BACKFILL);
    CU_ASSERT_EQUAL(kvftl_tunable_parse(&c, kvftl_tunable_find("gc-policy"), "gc-policy",
                                        "cost-benefit", err, sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(c.gc_policy, KVFTL_GC_COST_BENEFIT);
    CU_ASSERT_EQUAL(
        kvftl_tunable_parse(&c, kvftl_tunable_find("bloom"), "bloom", "off", err, sizeof(err)), 0);
    CU_ASSERT_FALSE(c.bloom);
    CU_ASSERT_EQUAL(kvftl_tunable_parse(&c, kvftl_tunable_find("index_dram_bytes"), "x", "96M", err,
                                        sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(c.index_dram_bytes, 96ull << 20);
    CU_ASSERT_EQUAL(kvftl_tunable_parse(&c, kvftl_tunable_find("image"), "image", "/tmp/x.img", err,
                                        sizeof(err)),
                    0);
    CU_ASSERT_STRING_EQUAL(c.image_path, "/tmp/x.img");

    CU_ASSERT_EQUAL(kvftl_tunable_parse(&c, kvftl_tunable_find("packing"), "packing", "tight", err,
                                        sizeof(err)),
                    -1);
    CU_ASSERT_STRING_EQUAL(err, "packing is 'tight'; it must be block, all, selective or backfill");
    CU_ASSERT_EQUAL(kvftl_tunable_parse(&c, kvftl_tunable_find("placement-unit-bytes"),
                                        "--placement-unit-bytes", "3", err, sizeof(err)),
                    -1);
    CU_ASSERT_STRING_EQUAL(
        err, "--placement-unit-bytes is '3'; it must be a power of two from 1 to 4096");
    CU_ASSERT_EQUAL(
        kvftl_tunable_parse(&c, kvftl_tunable_find("channels"), "channels", "4x", err, sizeof(err)),
        -1);
    CU_ASSERT_STRING_EQUAL(err, "channels is '4x'; it must be from 1 to 64");
    CU_ASSERT_EQUAL(
        kvftl_tunable_parse(&c, kvftl_tunable_find("plp"), "plp", "yes", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "plp is 'yes'; it must be on or off");
    /* a 32-bit field refuses what does not fit it, whatever its range text */
    CU_ASSERT_EQUAL(kvftl_tunable_parse(&c, kvftl_tunable_find("dlt-entries"), "dlt-entries",
                                        "4294967296", err, sizeof(err)),
                    -1);
    CU_ASSERT_EQUAL(c.channels, 4);
}

/*
 * fw_command_ns: on an idle device, a Store, Retrieve, Exist, Delete and a
 * Retrieve of the deleted key each complete exactly fw_command_ns = 1500 ns
 * later than on the same device with 0, whatever else the command costs.
 */
static void test_fw_command_ns_adds_to_every_command(void)
{
    uint64_t done[2][5];
    enum kvftl_status want[5] = {KVFTL_OK, KVFTL_OK, KVFTL_OK, KVFTL_OK, KVFTL_KEY_DOES_NOT_EXIST};
    for (int run = 0; run < 2; run++) {
        struct kvftl_config c = small_config();
        c.hash_seed = 1;
        c.fw_command_ns = run ? 1500 : 0;
        struct kvftl *f = open_or_die(&c);
        struct kvftl_cpl cpl[5];
        uint8_t val[100], buf[100];
        memset(val, 0x5a, sizeof(val));
        /* 10 ms apart: every NAND operation of one command is over before the next arrives */
        struct kvftl_store_req r = {.key = "k1",
                                    .key_bytes = 2,
                                    .value = val,
                                    .value_bytes = sizeof(val),
                                    .arrival_ns = 10000000};
        kvftl_store(f, &r, &cpl[0]);
        kvftl_retrieve(f, "k1", 2, buf, 0, sizeof(buf), 20000000, &cpl[1]);
        kvftl_exist(f, "k1", 2, 30000000, &cpl[2]);
        kvftl_delete(f, "k1", 2, 40000000, &cpl[3]);
        kvftl_retrieve(f, "k1", 2, buf, 0, sizeof(buf), 50000000, &cpl[4]);
        for (int k = 0; k < 5; k++) {
            CU_ASSERT_EQUAL(cpl[k].status, want[k]);
            done[run][k] = cpl[k].done_ns;
        }
        kvftl_close(f);
    }
    for (int k = 0; k < 5; k++) {
        printf("# command %d: done %llu ns with 0, %llu ns with 1500\n", k,
               (unsigned long long)done[0][k], (unsigned long long)done[1][k]);
        CU_ASSERT_EQUAL(done[1][k] - done[0][k], 1500);
        /* an idle device with nothing else to wait for: the arrival time + 1500 */
        CU_ASSERT_EQUAL(done[1][k], (uint64_t)(k + 1) * 10000000 + 1500);
    }
}

static const struct tap_test tests[] = {
    TAP_TEST(presets_keep_their_values),
    TAP_TEST(each_field_sentence),
    TAP_TEST(parse),
    TAP_TEST(fw_command_ns_adds_to_every_command),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("config", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
