/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The lsm index design (kvftl/kv/index/lsm/): what a memtable flush, a
 * compaction step and a lookup cost in index pages, deletion markers
 * dropping at the last level, and a clean mount that refuses a damaged
 * lsm page or manifest and rebuilds by scanning the log. The unit tests
 * drive the index with chosen signatures (4 KiB index pages: 255 entries
 * a page) so that every page range, and so every count, follows from them.
 */
#include "gc.h"
#include "helpers.h"
#include "kvftl_image.h"

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

static char image[64];
#define LSM_KEYS 3000

/*
 * 3000 keys through the KV API (memtable of 8 x 255 = 2040 entries: one
 * flush, and the rest written back by the checkpoint) closed cleanly.
 */
static struct kvftl_config lsm_image(void)
{
    snprintf(image, sizeof(image), "/tmp/kvftl-lsm-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(image);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    unlink(image);
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
    struct kvftl *f = open_or_die(c);
    CU_ASSERT_TRUE(f->mount.scanned);
    bool found = strstr(f->mount.why, why) != NULL;
    if (!found) {
        printf("# expected a reason with \"%s\", got \"%s\"\n", why, f->mount.why);
    }
    CU_ASSERT_TRUE(found);
    CU_ASSERT_EQUAL(stats(f).live_keys, LSM_KEYS);
    CU_ASSERT_EQUAL(count_bad(f, 0, LSM_KEYS, 7), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
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

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_flush_writes_pages),
    TAP_TEST_FN(test_compaction_reads_and_programs),
    TAP_TEST_FN(test_lookup_l2_costs_one_read),
    TAP_TEST_FN(test_deletion_marker_drops_at_last_level),
    TAP_TEST_FN(test_gc_relocates_lsm_pages),
    TAP_TEST_FN(test_clean_mount_from_manifest),
    TAP_TEST_FN(test_damaged_lsm_page),
    TAP_TEST_FN(test_damaged_manifest_levels),
    TAP_TEST_FN(test_damaged_manifest_count),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("lsm", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
