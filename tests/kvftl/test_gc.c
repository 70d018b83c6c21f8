/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Garbage collection on the small device: 10 stripes of 2.25 MiB (2304
 * blobs of 1 KiB each), watermarks 3 (background) and 2 (foreground).
 */
#include "helpers.h"

#define STRIPE_BYTES 2359296u
#define BLOBS_PER_STRIPE 2304

/*
 * A cost-benefit device whose stripe 1 is half valid and written at t=0,
 * and stripe 2 a quarter valid and written at t=9.
 */
static struct kvftl *open_old_half_and_young_quarter(void)
{
    struct kvftl_config c = small_config();
    c.gc_policy = KVFTL_GC_COST_BENEFIT;
    struct kvftl *f = open_or_die(&c);
    f->space.stripes[1] = (struct stripe_info){
        .state = STRIPE_DATA, .valid_bytes = STRIPE_BYTES / 2, .last_write_ns = 0};
    f->space.stripes[2] = (struct stripe_info){
        .state = STRIPE_DATA, .valid_bytes = STRIPE_BYTES / 4, .last_write_ns = 9};
    return f;
}

/*
 * Stripe 0 filled with 2304 blobs (keys 0..2303, byte 1), then all but the
 * last two overwritten with byte 2 (they go to stripe 1): stripe 0 holds
 * the two live blobs of keys 2302 and 2303, 2048 valid bytes.
 */
static void fill_stripe0_two_live(struct kvftl *f)
{
    fill(f, 0, BLOBS_PER_STRIPE, 1);
    fill(f, 0, BLOBS_PER_STRIPE - 2, 2);
}

/* Every key of fill_stripe0_two_live() reads back its last value; the gauges hold. */
static void assert_two_live_read_back(struct kvftl *f)
{
    CU_ASSERT_EQUAL(count_bad(f, BLOBS_PER_STRIPE - 2, BLOBS_PER_STRIPE, 1), 0);
    CU_ASSERT_EQUAL(count_bad(f, 0, BLOBS_PER_STRIPE - 2, 2), 0);
    assert_consistent(f);
}

/*
 * 3000 keys overwritten 10 times back to back, all at t=0 (30,000 KiB into
 * a 22.5 MiB device): the last value of every key is byte 9.
 */
static struct kvftl *overwrite_3000_keys_10_times(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    for (int round = 0; round < 10; round++) {
        fill(f, 0, 3000, (uint8_t)round);
    }
    return f;
}

/* Greedy: the closed stripe with the fewest valid bytes; open and full stripes never. */
static void test_greedy_victim(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    f->space.stripes[1] = (struct stripe_info){.state = STRIPE_DATA, .valid_bytes = 1000};
    f->space.stripes[2] = (struct stripe_info){.state = STRIPE_DATA, .valid_bytes = 500};
    f->space.stripes[3] = (struct stripe_info){.state = STRIPE_INDEX, .valid_bytes = 800};
    f->space.stripes[4] = (struct stripe_info){.state = STRIPE_OPEN_DATA, .valid_bytes = 0};
    f->space.stripes[5] = (struct stripe_info){.state = STRIPE_DATA, .valid_bytes = STRIPE_BYTES};
    CU_ASSERT_EQUAL(gc_pick_victim(f, 0), 2);
    f->space.stripes[2].valid_bytes = 900;
    CU_ASSERT_EQUAL(gc_pick_victim(f, 0), 3);
    for (int s = 1; s <= 5; s++) {
        f->space.stripes[s].state = STRIPE_FREE;
    }
    CU_ASSERT_EQUAL(gc_pick_victim(f, 0), UINT32_MAX);
    kvftl_close(f);
}

/*
 * Cost-benefit at t=10: stripe 1 (u = 1/2, written at 0, age 11) scores
 * 0.5*11/1.5 = 3.67; stripe 2 (u = 1/4, written at 9, age 2) scores
 * 0.75*2/1.25 = 1.2: the older stripe wins although greedy picks stripe 2.
 */
static void test_cost_benefit_victim(void)
{
    struct kvftl *f = open_old_half_and_young_quarter();
    CU_ASSERT_EQUAL(gc_pick_victim(f, 10), 1);
    f->cfg.gc_policy = KVFTL_GC_GREEDY;
    CU_ASSERT_EQUAL(gc_pick_victim(f, 10), 2);
    kvftl_close(f);
}

/*
 * Stripe 0 with two live blobs (fill_stripe0_two_live): collecting it
 * relocates exactly those two blobs (2048 bytes), updates the index and
 * erases it.
 */
static void test_collect_relocates_live_blobs(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    fill_stripe0_two_live(f);
    CU_ASSERT_EQUAL(f->space.stripes[0].state, STRIPE_DATA);
    CU_ASSERT_EQUAL(f->space.stripes[0].valid_bytes, 2048);
    uint32_t free_before = f->space.free_stripes;
    uint64_t now = 0;
    CU_ASSERT_EQUAL(gc_collect(f, 0, &now), 0);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.gc_runs, 1);
    CU_ASSERT_EQUAL(st.gc_relocated_bytes, 2048);
    CU_ASSERT_EQUAL(st.nand_blocks_erased, 1);
    CU_ASSERT_EQUAL(f->space.stripes[0].state, STRIPE_FREE);
    CU_ASSERT_EQUAL(f->space.free_stripes, free_before + 1);
    char key[17];
    key_of(key, BLOBS_PER_STRIPE - 1);
    CU_ASSERT(addr_of(f, key) >= STRIPE_BYTES);
    assert_two_live_read_back(f);
    kvftl_close(f);
}

/*
 * 3000 keys overwritten 10 times (overwrite_3000_keys_10_times): GC runs,
 * every key holds its last value, free stripes stay at or above the low
 * watermark, and the accounting stays consistent.
 */
static void test_overwrites_drive_gc(void)
{
    struct kvftl *f = overwrite_3000_keys_10_times();
    struct kvftl_stats st = stats(f);
    CU_ASSERT(st.gc_runs > 0);
    CU_ASSERT(st.free_stripes >= 2);
    CU_ASSERT(st.write_amplification > 1.0);
    CU_ASSERT_EQUAL(st.live_keys, 3000);
    CU_ASSERT_EQUAL(count_bad(f, 0, 3000, 9), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * Capacity: (10 stripes - 2 low watermark - 2 open) x 2359296 B x 93% =
 * 13,164,801 bytes of live data: 12,856 blobs of 1 KiB. The 12,857th store
 * is CAPACITY_EXCEEDED and every earlier key is intact; overwrites still
 * succeed (GC makes room); after deleting 10 keys, 10 new keys fit again
 * (tombstones live in the reserve, not in the user capacity).
 */
static void test_device_full(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_HASH; /* the whole index in DRAM: every stripe for the log */
    c.max_keys = 1000000;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->capacity_bytes, 13164801);
    fill(f, 0, 12856, 7);
    char key[17];
    key_of(key, 12856);
    CU_ASSERT_EQUAL(put(f, key, 50, 7, false), KVFTL_CAPACITY_EXCEEDED);
    CU_ASSERT_EQUAL(put(f, "x", 1, 7, false), KVFTL_CAPACITY_EXCEEDED);
    CU_ASSERT_EQUAL(count_bad(f, 0, 12856, 7), 0);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.live_keys, 12856);
    /* the refusal is visible in the gauges: used + one more 1 KiB blob > capacity */
    CU_ASSERT_EQUAL(st.capacity_bytes, 13164801);
    CU_ASSERT_EQUAL(st.live_nand_bytes, 12856 * 1024);
    CU_ASSERT_EQUAL(st.index_nand_bytes, 0); /* the whole index is still in DRAM */
    fill(f, 0, 12000, 8); /* overwrites at full capacity: GC must make room */
    CU_ASSERT_EQUAL(count_bad(f, 0, 12000, 8), 0);
    CU_ASSERT_EQUAL(count_bad(f, 12000, 12856, 7), 0);
    for (int i = 0; i < 10; i++) {
        key_of(key, i);
        CU_ASSERT_EQUAL(del(f, key), 0);
    }
    for (int i = 12856; i < 12866; i++) {
        key_of(key, i);
        CU_ASSERT_EQUAL(put(f, key, 50, 9, false), 0);
    }
    CU_ASSERT(stats(f).gc_runs > 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * Capacity with a page data area (page_data_bytes 12 KiB of each 16 KiB
 * page, as the pm983 preset keeps 24.5 of 32 KiB): (10 stripes - 2 - 2) x
 * 192 pages x 12288 B x 93% = 13,164,801 bytes: 12,856 blobs of 1 KiB, 12
 * to a page. The 12,857th Store is CAPACITY_EXCEEDED; at that fill every
 * key can still be overwritten twice, GC making the room. Counted over
 * whole pages, the capacity would be 17,553,099 bytes, and a fill to 80 %
 * of it would already reach into GC's reserve.
 */
static void test_device_full_page_data_area(void)
{
    struct kvftl_config c = small_config();
    c.pages_per_block = 192;
    c.page_size_bytes = 16384;
    c.page_data_bytes = 12288;
    c.index = KVFTL_INDEX_HASH; /* the whole index in DRAM: every stripe for the log */
    c.max_keys = 1000000;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(stats(f).capacity_bytes, 13164801);
    fill(f, 0, 12856, 7);
    char key[17];
    key_of(key, 12856);
    CU_ASSERT_EQUAL(put(f, key, 50, 7, false), KVFTL_CAPACITY_EXCEEDED);
    CU_ASSERT_EQUAL(stats(f).live_nand_bytes, 12856 * 1024);
    fill(f, 0, 12856, 8);
    fill(f, 0, 12856, 9);
    CU_ASSERT_EQUAL(count_bad(f, 0, 12856, 9), 0);
    CU_ASSERT(stats(f).gc_runs > 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * Requests arriving back to back (all at t=0) leave no idle time, so GC
 * only runs when a write finds fewer than 2 free stripes: the write stalls
 * (foreground GC) and its latency includes at least one erase (3 ms).
 */
static void test_foreground_gc_stalls_writes(void)
{
    struct kvftl *f = overwrite_3000_keys_10_times();
    struct kvftl_stats st = stats(f);
    CU_ASSERT(st.gc_foreground_stalls > 0);
    CU_ASSERT(st.gc_stall_ns >= 3000000);
    CU_ASSERT_EQUAL(f->gc_background_runs, 0);
    CU_ASSERT(st.latency[KVFTL_OP_STORE].max_ns >= 3000000);
    CU_ASSERT_EQUAL(count_bad(f, 0, 3000, 9), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * Requests 10 ms apart leave the device idle between them: below the high
 * watermark GC runs in the idle time and writes never stall.
 */
static void test_background_gc_in_idle_time(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    static uint8_t v[50];
    char key[17];
    uint64_t t = 0;
    for (int round = 0; round < 10; round++) {
        memset(v, round, sizeof(v));
        for (int i = 0; i < 3000; i++) {
            key_of(key, i);
            t += 10000000;
            struct kvftl_store_req r = {.key = key,
                                        .key_bytes = 16,
                                        .value = v,
                                        .value_bytes = 50,
                                        .inline_bytes = 50,
                                        .arrival_ns = t};
            struct kvftl_cpl cpl;
            kvftl_store(f, &r, &cpl);
            CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
        }
    }
    struct kvftl_stats st = stats(f);
    CU_ASSERT(f->gc_background_runs > 0);
    CU_ASSERT_EQUAL(st.gc_runs, f->gc_background_runs);
    CU_ASSERT_EQUAL(st.gc_foreground_stalls, 0);
    CU_ASSERT(st.free_stripes >= 2);
    CU_ASSERT_EQUAL(count_bad(f, 0, 3000, 9), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * A tombstone whose key has no older version left anywhere is dropped by
 * GC: key "gone" and its tombstone both sit in stripe 0; every blob
 * outside stripe 0 is newer, so collecting stripe 0 removes the index
 * entry. After a crash mount the key is still absent.
 */
static void test_gc_drops_unneeded_tombstone(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    put(f, "gone-key", 50, 1, false);
    del(f, "gone-key");
    fill(f, 0, BLOBS_PER_STRIPE - 2, 1);        /* stripe 0 is full */
    fill(f, 0, BLOBS_PER_STRIPE - 2, 2);        /* all of it is overwritten in stripe 1 */
    CU_ASSERT_EQUAL(f->vl.live.tombstone_bytes, 1024);
    CU_ASSERT_EQUAL(f->space.stripes[0].valid_bytes, 1024); /* the tombstone only */
    uint64_t now = 0;
    CU_ASSERT_EQUAL(gc_collect(f, 0, &now), 0);
    CU_ASSERT_EQUAL(f->vl.live.tombstone_bytes, 0);
    CU_ASSERT_EQUAL(stats(f).gc_relocated_bytes, 0);
    CU_ASSERT_EQUAL(exist(f, "gone-key"), KVFTL_KEY_DOES_NOT_EXIST);
    assert_consistent(f);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(exist(f, "gone-key"), KVFTL_KEY_DOES_NOT_EXIST);
    kvftl_close(f);
}

/*
 * A tombstone is kept (relocated) while an older version of its key lives
 * in another stripe: "old-key" in stripe 0, its tombstone in stripe 1.
 * Collecting stripe 1 moves the tombstone; after a crash mount the old
 * version in stripe 0 is not resurrected.
 */
static void test_gc_keeps_needed_tombstone(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_HASH; /* stripe 1 is the log's: no index page took a stripe */
    struct kvftl *f = open_or_die(&c);
    put(f, "old-key", 50, 1, false);
    fill(f, 0, BLOBS_PER_STRIPE - 1, 1);        /* stripe 0 full, "old-key" in it */
    del(f, "old-key");                           /* tombstone at the start of stripe 1 */
    fill(f, 0, BLOBS_PER_STRIPE - 1, 2);        /* stripe 1 full */
    fill(f, 0, BLOBS_PER_STRIPE - 1, 3);        /* stripe 1's pairs now stale */
    CU_ASSERT_EQUAL(f->space.stripes[1].valid_bytes, 1024);
    uint64_t now = 0;
    CU_ASSERT_EQUAL(gc_collect(f, 1, &now), 0);
    CU_ASSERT_EQUAL(stats(f).gc_relocated_bytes, 1024);
    CU_ASSERT_EQUAL(f->vl.live.tombstone_bytes, 1024);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(exist(f, "old-key"), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(count_bad(f, 0, BLOBS_PER_STRIPE - 1, 3), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * PLP off: GC relocates the two live blobs of stripe 0
 * (fill_stripe0_two_live) into the page buffer; they must be programmed
 * before stripe 0 (their only durable copy) is erased, so a crash right
 * after the collection loses nothing.
 */
static void test_gc_without_plp_programs_before_erase(void)
{
    struct kvftl_config c = small_config();
    c.plp = false;
    struct kvftl *f = open_or_die(&c);
    fill_stripe0_two_live(f);
    flush(f);
    uint64_t now = 0;
    CU_ASSERT_EQUAL(gc_collect(f, 0, &now), 0);
    CU_ASSERT_EQUAL(f->space.data.wp % 4096, 0); /* the relocated blobs were flushed */
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
    assert_two_live_read_back(f);
    kvftl_close(f);
}

/*
 * Foreground GC is short of room: whatever the policy it takes the victim
 * that frees the most (here stripe 2, u = 1/4, not the older stripe 1 that
 * cost-benefit prefers).
 */
static void test_foreground_gc_is_greedy(void)
{
    struct kvftl *f = open_old_half_and_young_quarter();
    CU_ASSERT_EQUAL(gc_pick_victim(f, 10), 1);
    CU_ASSERT_EQUAL(gc_pick_victim_policy(f, 10, KVFTL_GC_GREEDY), 2);
    kvftl_close(f);
}

/*
 * GC of a stripe laid out with a per-page data area (8 KiB pages, 6144
 * bytes of data each, byte placement, 8-byte keys): L (7000 B, blob 7032,
 * two whole pages) at 0 and S (100 B, blob 132) at 16384 stay live while
 * 7000-byte fillers close stripe 0 and are then overwritten with 100-byte
 * values elsewhere. Stripe 0 then holds 16384 + 132 valid bytes; collecting
 * it relocates exactly those, L again at a page boundary with its two
 * pages and S right after them, and every key reads back.
 */
static void test_collect_data_area_layout(void)
{
    struct kvftl_config c = small_config();
    c.page_size_bytes = 8192;
    c.placement_unit_bytes = 1;
    c.page_data_bytes = 6144;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "L-------", 7000, 0x1, false), 0);
    CU_ASSERT_EQUAL(put(f, "S-------", 100, 0x2, false), 0);
    CU_ASSERT_EQUAL(addr_of(f, "L-------"), 0);
    CU_ASSERT_EQUAL(addr_of(f, "S-------"), 16384);
    char key[16];
    int n = 0;
    while (f->space.data.stripe == 0) {
        snprintf(key, sizeof(key), "f%07d", n++);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 7000, 0x3, false), 0);
    }
    /* pages 0-1 L, 2 S, then two pages per filler: 286 fit up to page 574 */
    CU_ASSERT_EQUAL(n, 287);
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "f%07d", i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 100, 0x4, false), 0);
    }
    CU_ASSERT_EQUAL(f->space.stripes[0].state, STRIPE_DATA);
    CU_ASSERT_EQUAL(f->space.stripes[0].valid_bytes, 16384 + 132);
    uint64_t now = 0;
    uint64_t relocated = stats(f).gc_relocated_bytes;
    CU_ASSERT_EQUAL(gc_collect(f, 0, &now), 0);
    CU_ASSERT_EQUAL(stats(f).gc_relocated_bytes - relocated, 16384 + 132);
    CU_ASSERT_EQUAL(f->space.stripes[0].state, STRIPE_FREE);
    uint64_t l = addr_of(f, "L-------");
    CU_ASSERT(l >= f->nand.geo.stripe_bytes);
    CU_ASSERT_EQUAL(l % 8192, 0);
    CU_ASSERT_EQUAL(addr_of(f, "S-------"), l + 16384);
    CU_ASSERT_EQUAL(get_check(f, "L-------", 7000, 0x1), 0);
    CU_ASSERT_EQUAL(get_check(f, "S-------", 100, 0x2), 0);
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "f%07d", i);
        CU_ASSERT_EQUAL(get_check(f, key, 100, 0x4), 0);
    }
    assert_consistent(f);
    kvftl_close(f);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_greedy_victim),
    TAP_TEST_FN(test_cost_benefit_victim),
    TAP_TEST_FN(test_collect_relocates_live_blobs),
    TAP_TEST_FN(test_overwrites_drive_gc),
    TAP_TEST_FN(test_device_full),
    TAP_TEST_FN(test_device_full_page_data_area),
    TAP_TEST_FN(test_foreground_gc_stalls_writes),
    TAP_TEST_FN(test_background_gc_in_idle_time),
    TAP_TEST_FN(test_gc_drops_unneeded_tombstone),
    TAP_TEST_FN(test_gc_keeps_needed_tombstone),
    TAP_TEST_FN(test_gc_without_plp_programs_before_erase),
    TAP_TEST_FN(test_foreground_gc_is_greedy),
    TAP_TEST_FN(test_collect_data_area_layout),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("gc", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
