/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lsm index design (kvftl/kv/index/lsm/): what a memtable flush, a
 * compaction step and a lookup cost in index pages, deletion markers
 * dropping at the last level, two keys sharing a signature kept apart
 * through every path, and a clean mount that refuses a damaged lsm page
 * or manifest and rebuilds by scanning the log. The unit tests
 * drive the index with chosen signatures (4 KiB index pages: 255 entries
 * a page) so that every page range, and so every count, follows from them.
 */
#include <sys/stat.h>

#include "gc.h"
#include "helpers.h"
#include "kvftl_image.h"

static char image[64];

static struct kvftl *open_lsm(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_LSM;
    c.index_page_bytes = 4096;
    c.hash_seed = 1;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL_FATAL(f->index.lsm.slots, 255);
    /* no level pinned, no automatic compaction: each test sets what it measures */
    for (int v = 0; v < LSM_MAX_LEVELS; v++) {
        f->index.lsm.lv[v].pinned = false;
        f->index.lsm.lv[v].target = UINT64_MAX;
    }
    return f;
}

/* A location in the value log's first stripe, a 100-byte pair: never read by these tests. */
static uint64_t loc_of(uint64_t hash)
{
    return loc_make(hash * 128, 100, false);
}

/* Index signatures @first, @first + @step, ... (@n of them) into the memtable. */
static void add_run(struct kvftl *f, uint64_t first, uint64_t step, uint32_t n)
{
    uint64_t now = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t h = first + step * i;
        CU_ASSERT_EQUAL_FATAL(kv_index_reserve(&f->index, h, &now), 0);
        kv_index_add(&f->index, h, loc_of(h), &now);
    }
}

static int flush_now(struct kvftl *f)
{
    uint64_t now = 0;
    return lsm_flush(&f->index, &now);
}

static int compact_now(struct kvftl *f, uint32_t v)
{
    uint64_t now = 0;
    return lsm_compact_step(&f->index, v, &now);
}

/*
 * A memtable of 1000 signatures flushed into an empty L0 writes exactly
 * ceil(1000 / 255) = 4 pages (255, 255, 255, 235 entries) and reads none.
 */
static void test_flush_writes_pages(void)
{
    struct kvftl *f = open_lsm();
    struct lsm_index *l = &f->index.lsm;
    l->mmax = 1000;
    add_run(f, 1, 1, 1000);
    CU_ASSERT_EQUAL(l->mcount, 1000);
    CU_ASSERT_EQUAL(l->pages_written, 0);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(l->pages_written, 4);
    CU_ASSERT_EQUAL(l->pages_read, 0);
    CU_ASSERT_EQUAL(l->mcount, 0);
    CU_ASSERT_EQUAL(l->lv[0].n, 4);
    CU_ASSERT_EQUAL(l->lv[0].pg[3].count, 235);
    CU_ASSERT_EQUAL(l->lv[0].pg[3].first, 766);
    CU_ASSERT_EQUAL(l->lv[0].pg[3].last, 1000);
    CU_ASSERT_EQUAL(kv_index_nand_bytes(&f->index), 4 * 4096);
    kvftl_close(f);
}

/*
 * L1 holds even signatures 2..1020 in two pages, [2, 510] and [512, 1020].
 * The odd signatures 1..509 flushed into L0 are one page [1, 509], which
 * overlaps only L1's first page: the step reads 1 + 1 pages and programs
 * (255 + 255) / 255 = 2; L1 has 3 pages, L0 none.
 */
static void test_compaction_reads_and_programs(void)
{
    struct kvftl *f = open_lsm();
    struct lsm_index *l = &f->index.lsm;
    l->mmax = 510;
    add_run(f, 2, 2, 510);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(compact_now(f, 0), 0);
    CU_ASSERT_EQUAL(compact_now(f, 0), 0);
    CU_ASSERT_EQUAL(l->lv[0].n, 0);
    CU_ASSERT_EQUAL_FATAL(l->lv[1].n, 2);
    CU_ASSERT_EQUAL(l->lv[1].pg[0].last, 510);
    CU_ASSERT_EQUAL(l->lv[1].pg[1].first, 512);
    add_run(f, 1, 2, 255);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(l->lv[0].n, 1);
    uint64_t read = l->pages_read, written = l->pages_written;
    uint64_t nand_read = stats(f).nand_pages_read;
    CU_ASSERT_EQUAL(compact_now(f, 0), 0);
    CU_ASSERT_EQUAL(l->pages_read - read, 2);
    CU_ASSERT_EQUAL(stats(f).nand_pages_read - nand_read, 2);
    CU_ASSERT_EQUAL(l->pages_written - written, 2);
    CU_ASSERT_EQUAL(l->lv[0].n, 0);
    CU_ASSERT_EQUAL(l->lv[1].n, 3);
    /* every signature is found once, in order, by the walk */
    const struct kv_index_entry *e;
    uint32_t n;
    uint64_t last, now = 0;
    kv_index_walk(&f->index, 0, &e, &n, &last, &now);
    CU_ASSERT_EQUAL(n, 255);   /* the chunk: L1's first page, [0, 255] */
    CU_ASSERT_EQUAL(last, 255);
    CU_ASSERT_EQUAL(e[0].hash, 1);
    CU_ASSERT_EQUAL(e[254].hash, 255);
    kvftl_close(f);
}

/*
 * Signature 100 in L2 alone; L0 holds 90 and 110, L1 80 and 120, both
 * pinned: a lookup searches L0's and L1's pages in DRAM (two hits) and
 * reads L2's page from flash, exactly one tR.
 */
static void test_lookup_l2_costs_one_read(void)
{
    struct kvftl *f = open_lsm();
    struct lsm_index *l = &f->index.lsm;
    l->lv[0].pinned = l->lv[1].pinned = true;
    add_run(f, 100, 1, 1);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(compact_now(f, 0), 0);
    CU_ASSERT_EQUAL(compact_now(f, 1), 0);
    add_run(f, 80, 40, 2);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(compact_now(f, 0), 0);
    add_run(f, 90, 20, 2);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(l->lv[0].n, 1);
    CU_ASSERT_EQUAL(l->lv[1].n, 1);
    CU_ASSERT_EQUAL(l->lv[2].n, 1);
    uint64_t hits = l->hits, misses = l->misses, nand_read = stats(f).nand_pages_read;
    struct kv_index_pos pos;
    uint64_t now = 0;
    CU_ASSERT_TRUE(kv_index_find_loc(&f->index, 100, loc_of(100), &pos, &now));
    CU_ASSERT_EQUAL(l->hits - hits, 2);
    CU_ASSERT_EQUAL(l->misses - misses, 1);
    CU_ASSERT_EQUAL(stats(f).nand_pages_read - nand_read, 1);
    kvftl_close(f);
}

/*
 * GC removes signature 20 (kv_index_remove()): a deletion marker in the
 * memtable, kept in L0 while L1 holds 10, 20, 30, dropped when the step
 * merges it into L1, the last level, with the entry it deletes.
 */
static void test_deletion_marker_drops_at_last_level(void)
{
    struct kvftl *f = open_lsm();
    struct lsm_index *l = &f->index.lsm;
    add_run(f, 10, 10, 3);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(compact_now(f, 0), 0);
    struct kv_index_pos pos;
    uint64_t now = 0;
    CU_ASSERT_TRUE(kv_index_find_loc(&f->index, 20, loc_of(20), &pos, &now));
    kv_index_remove(&f->index, &pos, &now);
    CU_ASSERT_FALSE(kv_index_find_loc(&f->index, 20, loc_of(20), &pos, &now));
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL_FATAL(l->lv[0].n, 1);
    CU_ASSERT_EQUAL(l->lv[0].pg[0].count, 1);
    CU_ASSERT_EQUAL(l->dels_dropped, 0);
    CU_ASSERT_EQUAL(compact_now(f, 0), 0);
    CU_ASSERT_EQUAL(l->dels_dropped, 1);
    CU_ASSERT_EQUAL_FATAL(l->lv[1].n, 1);
    CU_ASSERT_EQUAL(l->lv[1].pg[0].count, 2);
    CU_ASSERT_EQUAL(l->lv[1].pg[0].first, 10);
    CU_ASSERT_EQUAL(l->lv[1].pg[0].last, 30);
    CU_ASSERT_FALSE(kv_index_find_loc(&f->index, 20, loc_of(20), &pos, &now));
    kvftl_close(f);
}

/*
 * A flush of 146,880 + 255 signatures writes 577 pages: the first index
 * stripe's 576 pages, then one more. GC collecting that stripe moves
 * every page (page_relocate: 576 reads, 576 programs) into the open one
 * and later ones; the levels keep their ranges, every signature is found,
 * the stripe is free again and the index's NAND bytes are unchanged.
 */
static void test_gc_relocates_lsm_pages(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_LSM;
    c.index_page_bytes = 4096;
    c.buffer_entries = 600;
    c.index_dram_bytes = 64ull << 20;
    struct kvftl *f = open_or_die(&c);
    struct lsm_index *l = &f->index.lsm;
    for (int v = 0; v < LSM_MAX_LEVELS; v++) {
        l->lv[v].pinned = false;
        l->lv[v].target = UINT64_MAX;
    }
    CU_ASSERT_EQUAL_FATAL(l->mmax, 600 * 255);
    add_run(f, 1, 1, 576 * 255 + 255);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL_FATAL(l->lv[0].n, 577);
    uint32_t s = nand_stripe_of(&f->nand, l->id_ppn[l->lv[0].pg[0].id]);
    CU_ASSERT_EQUAL(nand_stripe_of(&f->nand, l->id_ppn[l->lv[0].pg[575].id]), s);
    CU_ASSERT_NOT_EQUAL(nand_stripe_of(&f->nand, l->id_ppn[l->lv[0].pg[576].id]), s);
    CU_ASSERT_EQUAL(f->space.stripes[s].state, STRIPE_INDEX);
    uint64_t nand_bytes = kv_index_nand_bytes(&f->index), written = l->pages_written;
    uint64_t now = 0;
    CU_ASSERT_EQUAL(gc_collect(f, s, &now), 0);
    CU_ASSERT_EQUAL(l->pages_written - written, 576);
    CU_ASSERT_EQUAL(kv_index_nand_bytes(&f->index), nand_bytes);
    CU_ASSERT_EQUAL(f->space.stripes[s].state, STRIPE_FREE);
    for (uint32_t p = 0; p < 577; p++) {
        CU_ASSERT_NOT_EQUAL(nand_stripe_of(&f->nand, l->id_ppn[l->lv[0].pg[p].id]), s);
    }
    struct kv_index_pos pos;
    for (uint64_t h = 1; h <= 576 * 255 + 255; h += 997) {
        CU_ASSERT_TRUE(kv_index_find_loc(&f->index, h, loc_of(h), &pos, &now));
    }
    kvftl_close(f);
}

/*
 * Signature 255 twice (two keys: the second add while the first has an
 * entry) among 1..265: 266 entries, but the first page ends at 254 (254
 * entries) rather than split 255's two keys; the second holds 255..265
 * (12). GC's look-up finds each key's location, and removing the second
 * key leaves the first.
 */
static void test_page_keeps_a_signatures_keys(void)
{
    struct kvftl *f = open_lsm();
    struct lsm_index *l = &f->index.lsm;
    l->mmax = 1000;
    add_run(f, 1, 1, 255);
    uint64_t now = 0, second = loc_make(300 * 128, 100, false);
    CU_ASSERT_EQUAL_FATAL(kv_index_reserve(&f->index, 255, &now), 0);
    kv_index_add(&f->index, 255, second, &now);
    CU_ASSERT_EQUAL(l->dup_keys, 1);
    add_run(f, 256, 1, 10);
    CU_ASSERT_EQUAL(l->mcount, 266);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL_FATAL(l->lv[0].n, 2);
    CU_ASSERT_EQUAL(l->lv[0].pg[0].count, 254);
    CU_ASSERT_EQUAL(l->lv[0].pg[0].last, 254);
    CU_ASSERT_EQUAL(l->lv[0].pg[1].count, 12);
    CU_ASSERT_EQUAL(l->lv[0].pg[1].first, 255);
    struct kv_index_pos pos;
    CU_ASSERT_TRUE(kv_index_find_loc(&f->index, 255, loc_of(255), &pos, &now));
    CU_ASSERT_EQUAL(pos.c, 0);
    CU_ASSERT_TRUE(kv_index_find_loc(&f->index, 255, second, &pos, &now));
    CU_ASSERT_EQUAL(pos.c, 1);
    kv_index_remove(&f->index, &pos, &now);
    CU_ASSERT_FALSE(kv_index_find_loc(&f->index, 255, second, &pos, &now));
    CU_ASSERT_TRUE(kv_index_find_loc(&f->index, 255, loc_of(255), &pos, &now));
    /* reserve() of 255 again: its second key is free (a marker), nothing refused */
    CU_ASSERT_EQUAL(kv_index_reserve(&f->index, 255, &now), 0);
    kvftl_close(f);
}

/* Every "twin-" key of 6 bytes has this signature (twin_hash()). */
#define TWIN_SIG 0x4242424242424242ull

static uint64_t twin_hash(const void *key, size_t len)
{
    return len == 6 && memcmp(key, "twin-", 5) == 0 ? TWIN_SIG : XXH3_64bits(key, len);
}

/*
 * A clean close's checkpoint, then the mount kvftl_open() makes of it, on
 * this instance: the test's hash stays installed, so the twins still
 * share their signature after the mount.
 */
static void remount_in_place(struct kvftl *f)
{
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(recovery_checkpoint(f), 0);
    ftl_reset_state(f);
    struct stat st; /* what nand_init() finds at the next open */
    CU_ASSERT_EQUAL_FATAL(fstat(f->nand.fd, &st), 0);
    f->nand.file_bytes = (uint64_t)st.st_size;
    f->nand.file_existed = true;
    int rc = recovery_mount(f, err, sizeof(err));
    if (rc) {
        printf("# recovery_mount: %s\n", err);
    }
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    if (f->mount.scanned) {
        printf("# rescanned: %s\n", f->mount.why);
    }
    CU_ASSERT_FALSE(f->mount.scanned);
}

/* Entries of signature TWIN_SIG the prefix walk returns (live keys only). */
static uint32_t twins_walked(struct kvftl *f)
{
    const struct kv_index_entry *e;
    uint32_t n, k = 0;
    uint64_t last, now = 0;
    kv_index_walk(&f->index, TWIN_SIG, &e, &n, &last, &now);
    for (uint32_t i = 0; i < n && e[i].hash == TWIN_SIG; i++) {
        k++;
    }
    return k;
}

/* kvftl_iter_next()'s emit: bit 1 for "twin-a", 2 for "twin-b", 4 for another key or a repeat. */
static int twin_emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                     uint32_t value_bytes)
{
    (void)value;
    (void)value_bytes;
    uint32_t *seen = opaque, bit = 4;
    if (key_bytes == 6 && memcmp(key, "twin-", 5) == 0) {
        bit = ((const char *)key)[5] == 'a' ? 1 : ((const char *)key)[5] == 'b' ? 2 : 4;
    }
    *seen |= *seen & bit ? 4 : bit;
    return 0;
}

/* What an iterator over the prefix "twin" emits (twin_emit()'s bits). */
static uint32_t twins_iterated(struct kvftl *f)
{
    uint32_t h, seen = 0;
    struct kvftl_cpl cpl;
    kvftl_iter_open(f, 0x7477696e /* "twin" */, 0xffffffff, KVFTL_ITER_KEYS, 0, &h, &cpl);
    CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
    for (int i = 0; i < 10000; i++) {
        kvftl_iter_next(f, h, 16, twin_emit, &seen, 0, &cpl);
        if (cpl.status == KVFTL_ITERATOR_END) {
            break;
        }
        CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
    }
    kvftl_iter_close(f, h, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    return seen;
}

/*
 * "twin-a" and "twin-b" share their signature: two keys, each with its
 * own value (and each iterated once), from the memtable, from L0, L1 and L2 (compacted page by
 * page), after an overwrite, a delete of one, a checkpoint and mount, GC
 * of their stripe and a crash scan. A third key of the signature is
 * absent, and its Store is refused (Capacity Exceeded).
 */
static void test_equal_signatures_are_two_keys(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_LSM;
    c.index_page_bytes = 4096;
    image_path_new(image, sizeof(image), "lsm");
    c.image_path = image;
    struct kvftl *f = open_or_die(&c);
    struct lsm_index *l = &f->index.lsm;
    for (int v = 0; v < LSM_MAX_LEVELS; v++) {
        l->lv[v].pinned = false;
        l->lv[v].target = UINT64_MAX;
    }
    kvftl_set_hash_for_test(f, twin_hash);
    CU_ASSERT_EQUAL(put(f, "twin-a", 40, 1, false), 0);
    CU_ASSERT_EQUAL(put(f, "twin-b", 40, 2, false), 0);
    fill(f, 0, 600, 7);
    CU_ASSERT_EQUAL(stats(f).live_keys, 602);
    CU_ASSERT_EQUAL(get_check(f, "twin-a", 40, 1), 0);
    CU_ASSERT_EQUAL(get_check(f, "twin-b", 40, 2), 0);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(l->lv[0].n, 3);
    for (uint32_t v = 0; v < 2; v++) {
        while (l->lv[v].n) {
            CU_ASSERT_EQUAL_FATAL(compact_now(f, v), 0);
        }
        CU_ASSERT_EQUAL(get_check(f, "twin-a", 40, 1), 0);
        CU_ASSERT_EQUAL(get_check(f, "twin-b", 40, 2), 0);
    }
    CU_ASSERT_EQUAL(l->lv[2].n, 3);
    CU_ASSERT_EQUAL(twins_walked(f), 2);
    CU_ASSERT_EQUAL(twins_iterated(f), 3);

    /* the second key's new version in L0 above both in L2 */
    CU_ASSERT_EQUAL(put(f, "twin-b", 40, 3, false), 0);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL(get_check(f, "twin-a", 40, 1), 0);
    CU_ASSERT_EQUAL(get_check(f, "twin-b", 40, 3), 0);
    CU_ASSERT_EQUAL(exist(f, "twin-c"), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(put(f, "twin-c", 40, 9, false), KVFTL_CAPACITY_EXCEEDED);
    CU_ASSERT_EQUAL(stats(f).live_keys, 602);

    CU_ASSERT_EQUAL(del(f, "twin-a"), 0);
    CU_ASSERT_EQUAL(get_check(f, "twin-a", 40, 1), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(get_check(f, "twin-b", 40, 3), 0);
    CU_ASSERT_EQUAL(twins_walked(f), 1);
    CU_ASSERT_EQUAL(twins_iterated(f), 2);
    CU_ASSERT_EQUAL(stats(f).live_keys, 601);
    assert_consistent(f);

    remount_in_place(f);
    CU_ASSERT_EQUAL(exist(f, "twin-a"), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(get_check(f, "twin-b", 40, 3), 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 601);
    CU_ASSERT_EQUAL(count_bad(f, 0, 600, 7), 0);
    assert_consistent(f);

    /* 1800 more keys close stripe 0; GC moves the second key out, its entry with it */
    fill(f, 600, 2400, 7);
    CU_ASSERT_EQUAL(addr_of(f, "twin-b") / f->nand.geo.stripe_bytes, 0);
    CU_ASSERT_NOT_EQUAL(f->space.data.stripe, 0);
    uint64_t now = 0;
    CU_ASSERT_EQUAL(gc_collect(f, 0, &now), 0);
    CU_ASSERT_NOT_EQUAL(addr_of(f, "twin-b") / f->nand.geo.stripe_bytes, 0);
    CU_ASSERT_EQUAL(exist(f, "twin-a"), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(get_check(f, "twin-b", 40, 3), 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 2401);
    assert_consistent(f);

    /* the first key back over its tombstone, then a crash: the scan finds both */
    CU_ASSERT_EQUAL(put(f, "twin-a", 40, 4, false), 0);
    flush(f);
    char err[256] = "";
    CU_ASSERT_EQUAL_FATAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(get_check(f, "twin-a", 40, 4), 0);
    CU_ASSERT_EQUAL(get_check(f, "twin-b", 40, 3), 0);
    CU_ASSERT_EQUAL(twins_walked(f), 2);
    CU_ASSERT_EQUAL(twins_iterated(f), 3);
    CU_ASSERT_EQUAL(stats(f).live_keys, 2402);
    CU_ASSERT_EQUAL(count_bad(f, 0, 2400, 7), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

#define LSM_KEYS 3000

/*
 * 3000 keys through the KV API (memtable of 8 x 255 = 2040 entries: one
 * flush, and the rest written back by the checkpoint) closed cleanly.
 */
static struct kvftl_config lsm_image(void)
{
    image_path_new(image, sizeof(image), "lsm");
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_LSM;
    c.index_page_bytes = 4096;
    c.image_path = image;
    c.hash_seed = 0x0123456789abcdefull;
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, LSM_KEYS, 7);
    assert_consistent(f);
    kvftl_close(f);
    return c;
}

/* The mount rescans, says @why, and every key is back. */
static void expect_lsm_rescan(const struct kvftl_config *c, const char *why)
{
    expect_mount_rescan(c, why, LSM_KEYS);
}

/* A clean close and open: the manifest is the index, no rescan, every key back. */
static void test_clean_mount_from_manifest(void)
{
    struct kvftl_config c = lsm_image();
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_PTR_NULL(kvftl_mount_note(f));
    CU_ASSERT(f->index.lsm.lv[0].n > 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, LSM_KEYS);
    CU_ASSERT_EQUAL(count_bad(f, 0, LSM_KEYS, 7), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

/*
 * 2400 keys fill stripe 0 and open stripe 1; their entries go to L1. GC
 * collects stripe 0: the new locations go to the memtable, and L1 keeps
 * the old ones, shadowed, naming a free stripe. The clean mount takes the
 * manifest (a shadowed entry's blob need not exist) and every key is back.
 */
static void test_clean_mount_after_data_gc(void)
{
    image_path_new(image, sizeof(image), "lsm");
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_LSM;
    c.index_page_bytes = 4096;
    c.image_path = image;
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 2400, 7);
    CU_ASSERT_NOT_EQUAL(f->space.data.stripe, 0);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    while (f->index.lsm.lv[0].n) {
        CU_ASSERT_EQUAL_FATAL(compact_now(f, 0), 0);
    }
    uint64_t now = 0;
    CU_ASSERT_EQUAL(gc_collect(f, 0, &now), 0);
    CU_ASSERT_EQUAL(f->space.stripes[0].state, STRIPE_FREE);
    kvftl_close(f);
    f = open_or_die(&c);
    if (f->mount.scanned) {
        printf("# rescanned: %s\n", f->mount.why);
    }
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_EQUAL(stats(f).live_keys, 2400);
    CU_ASSERT_EQUAL(count_bad(f, 0, 2400, 7), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

/* The checkpoint's manifest: its bytes after the head and the stripe table. */
static uint64_t manifest_off(struct kvftl_image *im, struct checkpoint_head *ch)
{
    CU_ASSERT_FATAL(kvftl_image_read(im, im->ckpt_off, ch, sizeof(*ch)));
    return im->ckpt_off + sizeof(*ch) + (uint64_t)ch->stripes * sizeof(struct stripe_info);
}

/* The header's length and checksum again after a test changed the checkpoint. */
static void reseal(struct kvftl_image *im)
{
    size_t len = 0;
    uint8_t *b = kvftl_image_checkpoint(im, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    im->h.checkpoint_checksum = XXH3_64bits(b, len);
    CU_ASSERT(kvftl_image_write(im, 0, &im->h, sizeof(im->h)));
    g_free(b);
}

/* A flipped byte in an lsm page on flash: its checksum in the manifest fails. */
static void test_damaged_lsm_page(void)
{
    struct kvftl_config c = lsm_image();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    struct checkpoint_head ch;
    uint64_t off = manifest_off(&im, &ch);
    uint32_t first_ppn, first_id;
    CU_ASSERT(kvftl_image_read(&im, off + LSM_MAX_LEVELS * 4, &first_id, 4));
    CU_ASSERT(kvftl_image_read(&im, off + LSM_MAX_LEVELS * 4 + 4, &first_ppn, 4));
    uint8_t b;
    uint64_t at = kvftl_image_page_off(&im, first_ppn) + 100;
    CU_ASSERT(kvftl_image_read(&im, at, &b, 1));
    b ^= 0x10;
    CU_ASSERT(kvftl_image_write(&im, at, &b, 1));
    kvftl_image_close(&im);
    char why[128];
    snprintf(why, sizeof(why), "lsm page %u (NAND page %u) does not match its checksum", first_id,
             first_ppn);
    expect_lsm_rescan(&c, why);
}

/* A manifest whose level 7 claims pages the head's level count does not have. */
static void test_damaged_manifest_levels(void)
{
    struct kvftl_config c = lsm_image();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    struct checkpoint_head ch;
    uint64_t off = manifest_off(&im, &ch);
    uint32_t n = 1;
    CU_ASSERT(kvftl_image_write(&im, off + 7 * 4, &n, 4));
    reseal(&im);
    kvftl_image_close(&im);
    expect_lsm_rescan(&c, "level 7 holds 1 pages; the checkpoint has");
}

/* A head counting more index pages than the device has: refused before any is read. */
static void test_damaged_manifest_count(void)
{
    struct kvftl_config c = lsm_image();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    struct checkpoint_head ch;
    manifest_off(&im, &ch);
    ch.npages = UINT32_MAX;
    CU_ASSERT(kvftl_image_write(&im, im.ckpt_off, &ch, sizeof(ch)));
    reseal(&im);
    kvftl_image_close(&im);
    expect_lsm_rescan(&c, "it holds 4294967295 index pages; the device has 5760");
}

/*
 * L0 holds the even signatures 2..20400 in 40 full pages, page k from
 * 2 + 510k to 510 + 510k. 40 odd signatures, one inside each page, are
 * frozen (the memtable's budget set to 40: the 41st key's reserve freezes
 * them). One merge step meets only L0's first 16 pages: it reads 16,
 * takes the 16 odd signatures inside them, and programs the 16 x 255 + 16
 * entries as 17 pages ending where page 15 did; the other 24 stay frozen,
 * still found.
 */
static void test_merge_step_meets_at_most_16_pages(void)
{
    struct kvftl *f = open_lsm();
    struct lsm_index *l = &f->index.lsm;
    l->mmax = 40 * 255;
    add_run(f, 2, 2, 40 * 255);
    CU_ASSERT_EQUAL(flush_now(f), 0);
    CU_ASSERT_EQUAL_FATAL(l->lv[0].n, 40);
    l->mmax = 40;
    add_run(f, 3, 510, 41);
    CU_ASSERT_EQUAL(l->imm_n - l->imm_at, 40);
    CU_ASSERT_EQUAL(l->mcount, 1);
    uint64_t read = l->pages_read, written = l->pages_written, now = 0;
    CU_ASSERT_EQUAL(lsm_merge_step(&f->index, &now), 0);
    CU_ASSERT_EQUAL(l->pages_read - read, 16);
    CU_ASSERT_EQUAL(l->pages_written - written, 17);
    CU_ASSERT_EQUAL(l->imm_n - l->imm_at, 24);
    CU_ASSERT_EQUAL(l->lv[0].n, 40 - 16 + 17);
    CU_ASSERT_EQUAL(l->lv[0].pg[16].last, 510 * 16); /* the last of old page 15 */
    CU_ASSERT_EQUAL(l->lv[0].pg[17].first, 2 + 510 * 16);
    struct kv_index_pos pos;
    for (uint64_t h = 3; h < 3 + 510 * 41; h += 510) {
        CU_ASSERT_TRUE(kv_index_find_loc(&f->index, h, loc_of(h), &pos, &now));
    }
    kvftl_close(f);
}

/* How many of keys [0, @n) do not read back as 8 bytes of fill 6 (those in @over) or 5. */
static int count_bad_small(struct kvftl *f, int n, const uint8_t *over)
{
    char key[17];
    int bad = 0;
    for (int i = 0; i < n; i++) {
        key_of(key, i);
        bad += get_check(f, key, 8, over && over[i] ? 6 : 5) != 0;
    }
    return bad;
}

/* Index pages one command read or programmed (flush, compaction step, GC relocation). */
static uint64_t index_pages_moved(const struct lsm_index *l)
{
    return l->pages_read + l->pages_written;
}

/*
 * 200,000 Stores of new keys (memtable 8 x 255 entries, L0 pinned, L1 not,
 * 40 stripes): no Store reads plus programs more index pages than
 * lsm_command_pages_max(), 70 (a merge step: 16 + 18; a compaction step:
 * 17 + 19), while the levels grow to L0 80 and L1 730 pages. A flush that
 * merged all of L0 at once moved 122 pages in one Store.
 */
static void test_command_index_work_is_bounded(void)
{
    struct kvftl_config c;
    kvftl_config_small(&c, (struct kvftl_small_geometry){.channels = 1,
                                                         .dies_per_channel = 1,
                                                         .blocks_per_die = 40,
                                                         .pages_per_block = 576,
                                                         .page_size_bytes = 4096});
    c.buffer_entries = 8;
    c.dlt_entries = 0;
    c.index_dram_bytes = 1 << 20;
    c.gc_high_watermark_blocks = 3;
    c.gc_low_watermark_blocks = 2;
    c.index = KVFTL_INDEX_LSM;
    c.index_page_bytes = 4096;
    c.placement_unit_bytes = 32;
    c.hash_seed = 7;
    struct kvftl *f = open_or_die(&c);
    struct lsm_index *l = &f->index.lsm;
    uint64_t most = 0, bound = lsm_command_pages_max(&f->index);
    uint32_t at = 0;
    char key[17];
    for (int i = 0; i < 200000; i++) {
        uint64_t before = index_pages_moved(l);
        key_of(key, i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 8, 5, false), 0);
        if (index_pages_moved(l) - before > most) {
            most = index_pages_moved(l) - before;
            at = (uint32_t)i;
        }
    }
    printf("# most index pages one Store moved: %llu (Store %u), bound %llu, L0..L3 %u %u %u %u "
           "pages, %llu GC runs\n",
           (unsigned long long)most, at, (unsigned long long)bound, l->lv[0].n, l->lv[1].n,
           l->lv[2].n, l->lv[3].n, (unsigned long long)stats(f).gc_runs);
    CU_ASSERT_EQUAL(bound, 70);
    CU_ASSERT(most <= bound);
    CU_ASSERT_EQUAL(count_bad_small(f, 200000, NULL), 0);
    kvftl_close(f);
}

/*
 * A 10-stripe device under lsm (32-byte units: index pages are a large
 * share) filled with new keys until a Store is refused: the refusal is
 * Capacity Exceeded and so are the next 100 new keys; overwrites of the
 * first 2000 keys either succeed or are Capacity Exceeded; every
 * acknowledged key reads back, the check passes, and after close the
 * image mounts from its checkpoint with every key.
 */
static void test_full_device_refuses_stores(void)
{
    image_path_new(image, sizeof(image), "lsm");
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_LSM;
    c.index_page_bytes = 4096;
    c.placement_unit_bytes = 32;
    c.max_keys = 10000000;
    c.hash_seed = 3;
    c.image_path = image;
    struct kvftl *f = open_or_die(&c);
    char key[17];
    int acked = 0;
    uint16_t st = 0;
    for (; acked < 2000000; acked++) {
        key_of(key, acked);
        st = put(f, key, 8, 5, false);
        if (st != 0) {
            break;
        }
    }
    printf("# %d Stores acknowledged, then status %u\n", acked, st);
    CU_ASSERT_EQUAL(st, KVFTL_CAPACITY_EXCEEDED);
    int refused = 0;
    for (int i = acked; i < acked + 100; i++) {
        key_of(key, i);
        refused += put(f, key, 8, 5, false) == KVFTL_CAPACITY_EXCEEDED;
    }
    CU_ASSERT_EQUAL(refused, 100);
    uint8_t *over = g_new0(uint8_t, acked);
    int overwritten = 0, other = 0;
    for (int i = 0; i < 2000 && i < acked; i++) {
        key_of(key, i);
        st = put(f, key, 8, 6, false);
        over[i] = st == 0;
        overwritten += st == 0;
        other += st != 0 && st != KVFTL_CAPACITY_EXCEEDED;
    }
    printf("# %d of 2000 overwrites acknowledged\n", overwritten);
    CU_ASSERT_EQUAL(other, 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, (uint64_t)acked);
    CU_ASSERT_EQUAL(count_bad_small(f, acked, over), 0);
    assert_consistent(f);
    kvftl_close(f);
    f = open_or_die(&c);
    if (f->mount.scanned) {
        printf("# rescanned: %s\n", f->mount.why);
    }
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_EQUAL(stats(f).live_keys, (uint64_t)acked);
    CU_ASSERT_EQUAL(count_bad_small(f, acked, over), 0);
    assert_consistent(f);
    kvftl_close(f);
    g_free(over);
    unlink(image);
}

/*
 * The index finds no free stripe: every free stripe of a 10-stripe device
 * (*@c, an image) is taken as an open index stripe, which GC never
 * collects, after 1000 keys. The memtable (2040 entries) freezes at key
 * 2040 and its merge steps fail; the next 2040 new keys fill the memtable
 * again, so Store 4080 is Capacity Exceeded, as is every new key after
 * it. The stripes taken: @taken (*@nt).
 */
static struct kvftl *no_stripe_for_the_index(struct kvftl_config *c, uint32_t *taken, uint32_t *nt)
{
    image_path_new(image, sizeof(image), "lsm");
    *c = small_config();
    c->index = KVFTL_INDEX_LSM;
    c->index_page_bytes = 4096;
    c->placement_unit_bytes = 32;
    c->hash_seed = 3;
    c->image_path = image;
    struct kvftl *f = open_or_die(c);
    struct lsm_index *l = &f->index.lsm;
    CU_ASSERT_EQUAL_FATAL(l->mmax, 2040);
    char key[17];
    for (int i = 0; i < 1000; i++) {
        key_of(key, i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 8, 5, false), 0);
    }
    uint64_t now = 0;
    *nt = 0;
    while (f->space.free_stripes && *nt < 16) {
        taken[(*nt)++] = space_alloc(&f->space, STRIPE_OPEN_INDEX, &now);
    }
    CU_ASSERT_EQUAL(f->space.free_stripes, 0);
    int acked = 1000;
    uint16_t st = 0;
    for (; acked < 100000; acked++) {
        key_of(key, acked);
        st = put(f, key, 8, 5, false);
        if (st != 0) {
            break;
        }
    }
    CU_ASSERT_EQUAL(acked, 4080);
    CU_ASSERT_EQUAL(st, KVFTL_CAPACITY_EXCEEDED);
    CU_ASSERT_EQUAL(l->imm_n - l->imm_at, 2040);
    CU_ASSERT_EQUAL(l->mcount, 2040);
    int refused = 0;
    for (int i = acked; i < acked + 100; i++) {
        key_of(key, i);
        refused += put(f, key, 8, 5, false) == KVFTL_CAPACITY_EXCEEDED;
    }
    CU_ASSERT_EQUAL(refused, 100);
    CU_ASSERT_EQUAL(count_bad_small(f, 4080, NULL), 0);
    return f;
}

/*
 * On the device no_stripe_for_the_index() leaves, overwrites of keys
 * 0..999 succeed (the memtable grows past its budget to 3040); with the
 * stripes back the next Store merges on, every key reads back, the check
 * passes and the image mounts from its checkpoint.
 */
static void test_no_stripe_for_the_index(void)
{
    struct kvftl_config c;
    uint32_t taken[16], nt;
    struct kvftl *f = no_stripe_for_the_index(&c, taken, &nt);
    struct lsm_index *l = &f->index.lsm;
    uint8_t over[4081] = {0};
    char key[17];
    int ok = 0;
    for (int i = 0; i < 1000; i++) {
        key_of(key, i);
        over[i] = 1;
        ok += put(f, key, 8, 6, false) == 0;
    }
    CU_ASSERT_EQUAL(ok, 1000);
    CU_ASSERT_EQUAL(l->mcount, 3040);
    CU_ASSERT_EQUAL(stats(f).live_keys, 4080);
    CU_ASSERT_EQUAL(count_bad_small(f, 4080, over), 0);
    for (uint32_t i = 0; i < nt; i++) {
        f->space.stripes[taken[i]].state = STRIPE_FREE;
        f->space.free_stripes++;
    }
    key_of(key, 4080);
    CU_ASSERT_EQUAL(put(f, key, 8, 5, false), 0);
    CU_ASSERT(l->imm_n - l->imm_at < 2040);
    CU_ASSERT_EQUAL(count_bad_small(f, 4081, over), 0);
    assert_consistent(f);
    kvftl_close(f);
    f = open_or_die(&c);
    if (f->mount.scanned) {
        printf("# rescanned: %s\n", f->mount.why);
    }
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_EQUAL(stats(f).live_keys, 4081);
    CU_ASSERT_EQUAL(count_bad_small(f, 4081, over), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

/*
 * Closed while no_stripe_for_the_index() holds: the checkpoint cannot
 * write the index back, so the mount rescans the log, and the 4080 keys
 * acknowledged are back and consistent.
 */
static void test_close_with_no_stripe_for_the_index(void)
{
    struct kvftl_config c;
    uint32_t taken[16], nt;
    struct kvftl *f = no_stripe_for_the_index(&c, taken, &nt);
    kvftl_close(f);
    f = open_or_die(&c);
    CU_ASSERT_TRUE(f->mount.scanned);
    CU_ASSERT_STRING_EQUAL(f->mount.why, ""); /* not closed */
    CU_ASSERT_EQUAL(f->mount.keys, 4080);
    CU_ASSERT_EQUAL(stats(f).live_keys, 4080);
    CU_ASSERT_EQUAL(count_bad_small(f, 4080, NULL), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_flush_writes_pages),
    TAP_TEST_FN(test_compaction_reads_and_programs),
    TAP_TEST_FN(test_lookup_l2_costs_one_read),
    TAP_TEST_FN(test_deletion_marker_drops_at_last_level),
    TAP_TEST_FN(test_gc_relocates_lsm_pages),
    TAP_TEST_FN(test_page_keeps_a_signatures_keys),
    TAP_TEST_FN(test_equal_signatures_are_two_keys),
    TAP_TEST_FN(test_clean_mount_from_manifest),
    TAP_TEST_FN(test_clean_mount_after_data_gc),
    TAP_TEST_FN(test_damaged_lsm_page),
    TAP_TEST_FN(test_damaged_manifest_levels),
    TAP_TEST_FN(test_damaged_manifest_count),
    TAP_TEST_FN(test_merge_step_meets_at_most_16_pages),
    TAP_TEST_FN(test_command_index_work_is_bounded),
    TAP_TEST_FN(test_full_device_refuses_stores),
    TAP_TEST_FN(test_no_stripe_for_the_index),
    TAP_TEST_FN(test_close_with_no_stripe_for_the_index),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("lsm", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
