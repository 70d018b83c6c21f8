/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The configuration: presets and per-field checks, from include/kvftl/tunables.def. */
#include "helpers.h"

#include <kvftl/block.h>

#include "units_cases.h"

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
 * hand before the table existed (kvftl.c at 6bed62a), field by field, and
 * the firmware-time values issue 13 gave pm983 and cosmos (default: 0).
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
    want_pm983.index = KVFTL_INDEX_PM983; /* local index merged into the global one */
    /* nvm write buffer: Cosmos+ OpenSSD's 16 page-sized entries per die */
    want_pm983.write_buffer_pages_per_die = 16;
    /* firmware time (docs/kvftl.md, "Firmware time"): bounded by the datasheet's 540K IOPS */
    want_pm983.fw_fetch_decode_ns = 600;
    want_pm983.fw_index_probe_ns = 300;
    want_pm983.fw_inline_fragment_ns = 1000;
    want_pm983.fw_dma_setup_ns = 250;
    want_pm983.fw_completion_ns = 400;
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
    want_cosmos.index = KVFTL_INDEX_LSM; /* BandSlim's Cosmos+ firmware: an LSM-tree */
    want_cosmos.sync_programs = true;    /* its PUT waits for the NAND (tunables.def) */
    want_cosmos.write_buffer_pages_per_die = 16;
    /* firmware time: cycle estimates of one 1 GHz Cortex-A9 (docs/kvftl.md) */
    want_cosmos.fw_fetch_decode_ns = 2000;
    want_cosmos.fw_index_probe_ns = 1000;
    want_cosmos.fw_inline_fragment_ns = 3000;
    want_cosmos.fw_dma_setup_ns = 600;
    want_cosmos.fw_completion_ns = 1000;

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
 * Numbers as every tool reads them (tests/common/units_cases.h): a byte
 * tunable (index-dram-bytes) takes 4k = 4Ki = 4096, 64Mi, 1e6, 0x10; a count
 * (max-keys) takes 4k = 4000, 1e6; both refuse -1, 4kk and past 64 bits.
 * The sim: properties and the tunable flags of kvftl-bench and
 * kvssd-cmd-bench go through kvftl_tunable_parse().
 */
static void test_parse_units(void)
{
    const struct kvftl_tunable *bytes = kvftl_tunable_find("index-dram-bytes");
    const struct kvftl_tunable *count = kvftl_tunable_find("max-keys");
    char err[256];

    for (size_t i = 0; i < sizeof(units_cases) / sizeof(units_cases[0]); i++) {
        const struct units_case *u = &units_cases[i];
        struct kvftl_config c;
        kvftl_config_preset(&c, "default");
        int rc = kvftl_tunable_parse(&c, bytes, "index-dram-bytes", u->text, err, sizeof(err));
        if (rc != (u->bytes_ok ? 0 : -1) || (u->bytes_ok && c.index_dram_bytes != u->bytes)) {
            printf("# index-dram-bytes=%s: rc %d, %llu; want %d, %llu\n", u->text, rc,
                   (unsigned long long)c.index_dram_bytes, u->bytes_ok ? 0 : -1,
                   (unsigned long long)u->bytes);
            CU_FAIL("index-dram-bytes");
        }
        rc = kvftl_tunable_parse(&c, count, "max-keys", u->text, err, sizeof(err));
        if (rc != (u->count_ok ? 0 : -1) || (u->count_ok && c.max_keys != u->count)) {
            printf("# max-keys=%s: rc %d, %llu; want %d, %llu\n", u->text, rc,
                   (unsigned long long)c.max_keys, u->count_ok ? 0 : -1,
                   (unsigned long long)u->count);
            CU_FAIL("max-keys");
        }
    }
    struct kvftl_config c;
    kvftl_config_preset(&c, "default");
    CU_ASSERT_EQUAL(kvftl_tunable_parse(&c, count, "max-keys", "4kk", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "max-keys is '4kk'; it must be any number");
}

/* A config with firmware time and no memcpy time, so each sum below is firmware time only. */
static struct kvftl_config fw_config(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_HASH; /* the sums count the hash design's index probes */
    c.hash_seed = 1;
    c.dram_copy_bytes_per_us = 0;
    c.fw_fetch_decode_ns = 2000;
    c.fw_index_probe_ns = 1000;
    c.fw_inline_fragment_ns = 3000;
    c.fw_dma_setup_ns = 600;
    c.fw_completion_ns = 1000;
    return c;
}

static uint64_t probes_of(struct kvftl *f)
{
    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    return st.index_cache_hits + st.index_cache_misses;
}

/*
 * The two Stores of the firmware-time tests on @f: key "k1" new by an
 * inline head and 3 transfer commands of 100 bytes at 10 ms, then
 * overwritten by 5000 bytes of DMA at 20 ms; each one's index probes and
 * completion time in @probes and @done.
 */
static void two_stores(struct kvftl *f, uint64_t probes[2], uint64_t done[2])
{
    static uint8_t val[5000];
    memset(val, 0x5a, sizeof(val));
    const struct kvftl_store_req reqs[2] = {
        {.key = "k1",
         .key_bytes = 2,
         .value = val,
         .value_bytes = 100,
         .inline_bytes = 100,
         .inline_xfer_commands = 3,
         .arrival_ns = 10000000},
        {.key = "k1", .key_bytes = 2, .value = val, .value_bytes = 5000, .arrival_ns = 20000000}};
    for (int i = 0; i < 2; i++) {
        struct kvftl_cpl cpl;
        uint64_t p0 = probes_of(f);
        kvftl_store(f, &reqs[i], &cpl);
        CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
        probes[i] = probes_of(f) - p0;
        done[i] = cpl.done_ns;
    }
}

/*
 * On an idle device (10 ms apart, every NAND operation over), a Store's
 * firmware time is fetch + decode + N inline fragments + its index probes
 * + one DMA setup per 4 KiB of its DMA part + completion: 2000 + 3 * 3000
 * + 3 * 1000 + 1000 = 15,000 ns for a new key of 100 inline bytes in a
 * head and 3 transfer commands (3 probes of the key's index page: the
 * lookup, the room reserved, the insert), and
 * 2000 + 2 * 1000 + 2 * 600 + 1000 = 6200 ns for an overwrite by 5000
 * bytes of DMA (two 4 KiB units). The page buffer takes both (no NAND
 * time), so each completes its firmware time after its arrival, and the
 * statistics count exactly that time, under Store.
 */
static void test_fw_store_inline_fragments(void)
{
    struct kvftl_config c = fw_config();
    struct kvftl *f = open_or_die(&c);
    uint64_t probes[2], done[2];
    two_stores(f, probes, done);
    CU_ASSERT_EQUAL(probes[0], 3);
    CU_ASSERT_EQUAL(done[0], 10000000 + 2000 + 3 * 3000 + 3 * 1000 + 1000);
    CU_ASSERT_EQUAL(probes[1], 2);
    CU_ASSERT_EQUAL(done[1], 20000000 + 2000 + 2 * 1000 + 2 * 600 + 1000);

    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    CU_ASSERT_EQUAL(st.fw_op_ns[KVFTL_OP_STORE], 15000 + 6200);
    CU_ASSERT_EQUAL(st.fw_cpu_ns, 15000 + 6200);
    CU_ASSERT_EQUAL(st.fw_op_ns[KVFTL_OP_RETRIEVE], 0);
    kvftl_close(f);
}

/*
 * The same two Stores under the pm983 and lsm designs: each searches the
 * design's DRAM structure once (the local index, the memtable) and reads no
 * index page, so each charges one probe: 2000 + 3 * 3000 + 1000 + 1000 =
 * 13,000 ns for the new key, 2000 + 1000 + 2 * 600 + 1000 = 5200 ns for
 * the overwrite.
 */
static void test_fw_store_one_probe_per_design(void)
{
    const enum kvftl_index designs[2] = {KVFTL_INDEX_PM983, KVFTL_INDEX_LSM};
    for (int d = 0; d < 2; d++) {
        struct kvftl_config c = fw_config();
        c.index = designs[d];
        struct kvftl *f = open_or_die(&c);
        uint64_t probes[2], done[2];
        two_stores(f, probes, done);
        CU_ASSERT_EQUAL(probes[0], 1);
        CU_ASSERT_EQUAL(done[0], 10000000 + 13000);
        CU_ASSERT_EQUAL(probes[1], 1);
        CU_ASSERT_EQUAL(done[1], 20000000 + 5200);
        kvftl_close(f);
    }
}

/* One page's channel transfer under @c, ns (nand_transfer_ns()'s rounding). */
static uint64_t page_xfer_ns(const struct kvftl_config *c)
{
    return (c->page_size_bytes * 1000ull + c->channel_bytes_per_us - 1) / c->channel_bytes_per_us;
}

/* Store @bytes (<= 9000) of value under the 2-byte key @tag@i arriving at @arrival_ns: done_ns. */
static uint64_t store_at(struct kvftl *f, char tag, int i, uint32_t bytes, uint64_t arrival_ns)
{
    static uint8_t val[9000];
    memset(val, tag, sizeof(val));
    char key[2] = {tag, (char)('0' + i)};
    const struct kvftl_store_req r = {
        .key = key, .key_bytes = 2, .value = val, .value_bytes = bytes, .arrival_ns = arrival_ns};
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
    return cpl.done_ns;
}

/*
 * Three Stores of 2000-byte values 10 ms apart (2048-byte blobs, two to a
 * 4 KiB page) on an idle device: the second fills page 0, which its append
 * programs. Each Store's completion time in @done.
 */
static void three_page_stores(bool sync, uint64_t done[3], uint64_t *cpu_ns)
{
    struct kvftl_config c = fw_config();
    c.sync_programs = sync;
    struct kvftl *f = open_or_die(&c);
    for (int i = 0; i < 3; i++) {
        done[i] = store_at(f, 'a', i, 2000, 10000000ull * (uint64_t)(i + 1));
    }
    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 1);
    *cpu_ns = st.fw_cpu_ns;
    kvftl_close(f);
}

/*
 * sync-programs (BandSlim's firmware, tunables.def): the Store whose
 * append programs page 0 completes only when the program has, so exactly
 * one page transfer + tPROG later than with programs in the background,
 * and the controller CPU is busy (waiting) for all of it; the Stores that
 * program nothing complete at the same time either way.
 */
static void test_sync_programs_store_waits_for_program(void)
{
    struct kvftl_config c = fw_config();
    uint64_t off[3], on[3], cpu_off, cpu_on;
    three_page_stores(false, off, &cpu_off);
    three_page_stores(true, on, &cpu_on);
    uint64_t xfer = page_xfer_ns(&c);
    CU_ASSERT_EQUAL(on[0], off[0]);
    CU_ASSERT_EQUAL(on[1], off[1] + xfer + c.program_latency_ns);
    CU_ASSERT_EQUAL(on[2], off[2]);
    CU_ASSERT_EQUAL(cpu_on, cpu_off + xfer + c.program_latency_ns);
    CU_ASSERT(c.program_latency_ns > 0);
}

/*
 * One Store of a 9000-byte value on two dies (each on its own channel):
 * its blob fills pages 0 and 1, which its append programs. In the
 * background they program side by side and the Store does not wait;
 * under sync-programs one at a time (BandSlim's firmware takes them one
 * buffer entry at a time), so it completes exactly two page transfers +
 * two tPROG later.
 */
static uint64_t two_page_store(bool sync)
{
    struct kvftl_config c = fw_config();
    c.channels = 2;
    c.sync_programs = sync;
    struct kvftl *f = open_or_die(&c);
    uint64_t done = store_at(f, 'b', 0, 9000, 10000000);
    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    CU_ASSERT_EQUAL(st.nand_pages_programmed, 2);
    kvftl_close(f);
    return done;
}

static void test_sync_programs_one_page_at_a_time(void)
{
    struct kvftl_config c = fw_config();
    uint64_t xfer = page_xfer_ns(&c);
    CU_ASSERT_EQUAL(two_page_store(true),
                    two_page_store(false) + 2 * (xfer + c.program_latency_ns));
}

/*
 * A busy-wait ends when the NAND is idle, also for a command that arrived
 * before an earlier command's wait (a host faster than the device, as the
 * dilated BandSlim boots run): 2000-byte Stores (two to a 4 KiB page) at
 * 10 and 20 ms fill page 0, the second waiting for its program; then
 * Stores arriving at 12 and 13 ms fill page 1. The last one's program
 * starts when page 0's ends, so it completes exactly one page transfer +
 * tPROG after the 20 ms Store. (Marked as a run of CPU work instead, its
 * wait went after the 20 ms Store's spans and ended ~8 ms late.)
 */
static void test_sync_programs_wait_ends_at_idle(void)
{
    struct kvftl_config c = fw_config();
    c.sync_programs = true;
    struct kvftl *f = open_or_die(&c);
    const uint64_t arrive[4] = {10000000, 20000000, 12000000, 13000000};
    uint64_t done[4];
    for (int i = 0; i < 4; i++) {
        done[i] = store_at(f, 'w', i, 2000, arrive[i]);
    }
    CU_ASSERT_EQUAL(done[3], done[1] + page_xfer_ns(&c) + c.program_latency_ns);
    kvftl_close(f);
}

/*
 * Commands queue on the one CPU: two Retrieves of a 100-byte value in the
 * page buffer arriving at the same ns complete exactly one command's CPU
 * time apart: 2000 + 1 probe * 1000 + 1 DMA * 600 + 1000 = 4600 ns, the
 * first at its arrival + 4600, the second at + 9200 (its fetch waits for
 * the first's completion). A refused Retrieve (key of 0 bytes) costs
 * fetch + decode + completion = 3000 ns and counts in fw_cpu_ns only.
 */
static void test_fw_commands_queue_on_cpu(void)
{
    struct kvftl_config c = fw_config();
    struct kvftl *f = open_or_die(&c);
    uint8_t val[100], buf[100];
    memset(val, 0x5a, sizeof(val));
    struct kvftl_cpl cpl[3];
    struct kvftl_store_req r = {
        .key = "k1", .key_bytes = 2, .value = val, .value_bytes = 100, .arrival_ns = 10000000};
    kvftl_store(f, &r, &cpl[0]);
    CU_ASSERT_EQUAL(cpl[0].status, KVFTL_OK);
    kvftl_stats_reset(f);
    kvftl_retrieve(f, "k1", 2, buf, 0, sizeof(buf), 20000000, &cpl[0]);
    kvftl_retrieve(f, "k1", 2, buf, 0, sizeof(buf), 20000000, &cpl[1]);
    CU_ASSERT_EQUAL(cpl[0].status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl[1].status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpl[0].done_ns, 20000000 + 4600);
    CU_ASSERT_EQUAL(cpl[1].done_ns, 20000000 + 2 * 4600);
    kvftl_retrieve(f, "", 0, buf, 0, sizeof(buf), 30000000, &cpl[2]);
    CU_ASSERT_EQUAL(cpl[2].status, KVFTL_INVALID_KEY_SIZE);
    CU_ASSERT_EQUAL(cpl[2].done_ns, 30000000 + 3000);
    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    CU_ASSERT_EQUAL(st.fw_op_ns[KVFTL_OP_RETRIEVE], 2 * 4600);
    CU_ASSERT_EQUAL(st.fw_cpu_ns, 2 * 4600 + 3000);
    CU_ASSERT_EQUAL(st.latency[KVFTL_OP_RETRIEVE].count, 2);
    kvftl_close(f);
}

/*
 * The nvm personality pays the same costs: a Write of 2 blocks of 4 KiB
 * takes fetch + decode + 2 map lookups + 2 DMA setups + completion = 2000
 * + 2 * 1000 + 2 * 600 + 1000 = 6200 ns on an idle device, and so does
 * the Read of them: each completes exactly 6200 ns later than on the same
 * device without firmware time (the Read's NAND read starts 2000 ns later,
 * after its fetch and decode, and takes as long).
 */
static void test_fw_nvm_read(void)
{
    uint64_t done[2][2];
    uint64_t fw[2][3];
    for (int run = 0; run < 2; run++) {
        struct kvftl_config c = run ? fw_config() : small_config();
        c.index = KVFTL_INDEX_HASH;
        c.hash_seed = 1;
        c.dram_copy_bytes_per_us = 0;
        c.command_set = KVFTL_CMDSET_NVM;
        struct kvftl *f = open_or_die(&c);
        static uint8_t data[8192], back[8192];
        memset(data, 0xa5, sizeof(data));
        struct kvftl_cpl cpl;
        kvftl_block_write(f, 4, 2, data, false, 10000000, &cpl);
        CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
        done[run][0] = cpl.done_ns;
        kvftl_block_read(f, 4, 2, back, 20000000, &cpl);
        CU_ASSERT_EQUAL(cpl.status, KVFTL_OK);
        done[run][1] = cpl.done_ns;
        CU_ASSERT_EQUAL(memcmp(back, data, sizeof(data)), 0);
        struct kvftl_stats st;
        kvftl_stats_get(f, &st);
        fw[run][0] = st.fw_op_ns[KVFTL_OP_STORE];
        fw[run][1] = st.fw_op_ns[KVFTL_OP_RETRIEVE];
        fw[run][2] = st.fw_cpu_ns;
        kvftl_close(f);
    }
    printf("# nvm Write done %llu / %llu ns, Read done %llu / %llu ns (without / with)\n",
           (unsigned long long)done[0][0], (unsigned long long)done[1][0],
           (unsigned long long)done[0][1], (unsigned long long)done[1][1]);
    CU_ASSERT_EQUAL(done[0][0], 10000000); /* the Write lands in the page buffer */
    CU_ASSERT_EQUAL(done[1][0], 10000000 + 6200);
    CU_ASSERT_EQUAL(done[1][1] - done[0][1], 6200);
    CU_ASSERT_EQUAL(fw[0][2], 0);
    CU_ASSERT_EQUAL(fw[1][0], 6200);
    CU_ASSERT_EQUAL(fw[1][1], 6200);
    CU_ASSERT_EQUAL(fw[1][2], 2 * 6200);
}

/*
 * The CPU is free while a command waits for NAND: of two Retrieves
 * arriving at the same ns, the first needs a NAND read (its pair was
 * flushed), the second's pair is in the page buffer. The second's fetch
 * runs right after the first's (2000 ns) and its end (1 probe + 1 DMA +
 * completion = 2600 ns) before the first's read is done: it completes at
 * arrival + 2 * 2000 + 2600 = 6600 ns, before the first, which completes
 * 4600 ns (its own firmware time) later than on a device without
 * firmware time.
 */
static void test_fw_cpu_free_during_nand(void)
{
    uint64_t first[2], second[2];
    for (int run = 0; run < 2; run++) {
        struct kvftl_config c = run ? fw_config() : small_config();
        c.index = KVFTL_INDEX_HASH;
        c.hash_seed = 1;
        c.dram_copy_bytes_per_us = 0;
        struct kvftl *f = open_or_die(&c);
        uint8_t val[100], buf[100];
        memset(val, 0x5a, sizeof(val));
        struct kvftl_cpl cpl[2];
        struct kvftl_store_req r = {
            .key = "k1", .key_bytes = 2, .value = val, .value_bytes = 100, .arrival_ns = 10000000};
        kvftl_store(f, &r, &cpl[0]);
        kvftl_flush(f, 20000000, &cpl[0]);
        CU_ASSERT_EQUAL(cpl[0].status, KVFTL_OK);
        r.key = "k2";
        r.arrival_ns = 30000000;
        kvftl_store(f, &r, &cpl[0]);
        CU_ASSERT_EQUAL(cpl[0].status, KVFTL_OK);
        kvftl_retrieve(f, "k1", 2, buf, 0, sizeof(buf), 40000000, &cpl[0]);
        kvftl_retrieve(f, "k2", 2, buf, 0, sizeof(buf), 40000000, &cpl[1]);
        CU_ASSERT_EQUAL(cpl[0].status, KVFTL_OK);
        CU_ASSERT_EQUAL(cpl[1].status, KVFTL_OK);
        first[run] = cpl[0].done_ns;
        second[run] = cpl[1].done_ns;
        kvftl_close(f);
    }
    printf("# first Retrieve done %llu / %llu ns, second %llu / %llu ns (without / with)\n",
           (unsigned long long)first[0], (unsigned long long)first[1],
           (unsigned long long)second[0], (unsigned long long)second[1]);
    CU_ASSERT(first[0] > 40000000 + 10000); /* a NAND read: longer than all the firmware work */
    CU_ASSERT_EQUAL(second[0], 40000000);   /* the page buffer: no time without firmware */
    CU_ASSERT_EQUAL(first[1] - first[0], 4600);
    CU_ASSERT_EQUAL(second[1], 40000000 + 2 * 2000 + 2600);
}

static const struct tap_test tests[] = {
    TAP_TEST(presets_keep_their_values),
    TAP_TEST(each_field_sentence),
    TAP_TEST(parse),
    TAP_TEST(parse_units),
    TAP_TEST(fw_store_inline_fragments),
    TAP_TEST(fw_store_one_probe_per_design),
    TAP_TEST(sync_programs_store_waits_for_program),
    TAP_TEST(sync_programs_one_page_at_a_time),
    TAP_TEST(sync_programs_wait_ends_at_idle),
    TAP_TEST(fw_commands_queue_on_cpu),
    TAP_TEST(fw_nvm_read),
    TAP_TEST(fw_cpu_free_during_nand),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("config", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
