/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pm983 index design (kvftl/kv/index/pm983/): a Store checks membership
 * by signature without a flash read, a full local index is merged on the
 * Store that finds it full, and the global index has levels of directory
 * pages (pm983_levels.c) that grow with the keys, are read one per level
 * on a cold look-up, checked on a mount and moved by GC.
 */
#include "helpers.h"
#include "kvftl_image.h"

static char image[64];

static void image_new(void)
{
    image_path_new(image, sizeof(image), "pm983");
}

static struct kvftl *open_design(enum kvftl_index design)
{
    struct kvftl_config c = small_config();
    c.index = design;
    c.hash_seed = 1;
    return open_or_die(&c);
}

/*
 * Overwrite a key whose blob is programmed (after a Flush) and whose entry
 * is in the global index (merged): the hash design confirms the match with
 * the stored key, one NAND page read; pm983 checks the signature, none.
 */
static void test_overwrite_reads_no_flash(void)
{
    const uint64_t want_reads[2] = {1, 0};
    for (int d = 0; d < 2; d++) {
        struct kvftl *f = open_design(d ? KVFTL_INDEX_PM983 : KVFTL_INDEX_HASH);
        CU_ASSERT_EQUAL_FATAL(put(f, "key-a", 3000, 1, false), 0);
        flush(f);
        uint64_t now = 0;
        kv_index_settle(&f->index, &now);
        CU_ASSERT_EQUAL(f->index.pm983.count, 0);
        uint64_t before = stats(f).nand_pages_read;
        CU_ASSERT_EQUAL(put(f, "key-a", 3000, 2, false), 0);
        CU_ASSERT_EQUAL(stats(f).nand_pages_read - before, want_reads[d]);
        CU_ASSERT_EQUAL(get_check(f, "key-a", 3000, 2), 0);
        kvftl_close(f);
    }
}

/*
 * small_config(): 8 buffer entries of 4 KiB pages, so the local index holds
 * 8 x 4096 / 1024 = 32 keys. 32 Stores of new keys fill it without a merge;
 * the 33rd merges all 32 into the global index and is the one local entry
 * left. Every key reads back, from either index.
 */
static void test_full_local_index_merges(void)
{
    struct kvftl *f = open_design(KVFTL_INDEX_PM983);
    CU_ASSERT_EQUAL(f->index.pm983.max, 32);
    char key[16];
    for (int i = 0; i < 32; i++) {
        snprintf(key, sizeof(key), "k%03d", i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 100, (uint8_t)i, false), 0);
    }
    CU_ASSERT_EQUAL(f->index.pm983.count, 32);
    CU_ASSERT_EQUAL(f->index.pm983.merges, 0);
    CU_ASSERT_EQUAL(put(f, "k032", 100, 32, false), 0);
    CU_ASSERT_EQUAL(f->index.pm983.merges, 1);
    CU_ASSERT_EQUAL(f->index.pm983.merged, 32);
    CU_ASSERT_EQUAL(f->index.pm983.count, 1);
    for (int i = 0; i <= 32; i++) {
        snprintf(key, sizeof(key), "k%03d", i);
        CU_ASSERT_EQUAL(get_check(f, key, 100, (uint8_t)i), 0);
    }
    CU_ASSERT_EQUAL(stats(f).live_keys, 33);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    kvftl_close(f);
}

/*
 * A merge meets each leaf once: 2,000 keys over 2 cached frames of leaves,
 * then updates of keys 0-31 fill the local index, and the next Store (key
 * 32) merges them. It misses and reads each leaf those 32 signatures fall
 * in once (14 with seed 1; none of them still cached when reached) and no
 * other page. In the local index's slot order it read 23: with 2 frames a
 * leaf was read again for each entry of it met after another leaf's.
 */
static void test_merge_reads_each_leaf_once(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_PM983;
    c.hash_seed = 1;
    c.bloom = false;
    c.index_dram_bytes = 2 * 4096;
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 2000, 1);
    uint64_t now = 0;
    kv_index_settle(&f->index, &now);
    fill(f, 0, 32, 2);
    CU_ASSERT_EQUAL_FATAL(f->index.pm983.count, 32);
    const struct index *x = &f->index.hash.idx;
    uint32_t want = 0, seen[32];
    char key[17];
    for (int i = 0; i < 32; i++) {
        key_of(key, i);
        uint64_t first, last;
        uint32_t pid = index_page_of(x, kv_index_hash(&f->index, key, 16), &first, &last);
        bool again = false;
        for (uint32_t k = 0; k < want && !again; k++) {
            again = seen[k] == pid;
        }
        if (!again) {
            seen[want++] = pid;
        }
    }
    CU_ASSERT_EQUAL(want, 14); /* distinct leaves of the 32 signatures */
    uint64_t reads = stats(f).nand_pages_read, merges = f->index.pm983.merges;
    uint64_t misses = stats(f).index_cache_misses;
    fill(f, 32, 33, 2);
    CU_ASSERT_EQUAL(f->index.pm983.merges, merges + 1);
    CU_ASSERT_EQUAL(stats(f).index_cache_misses - misses, want);
    CU_ASSERT_EQUAL(stats(f).nand_pages_read - reads, want);
    CU_ASSERT_EQUAL(count_bad(f, 0, 33, 2), 0);
    CU_ASSERT_EQUAL(count_bad(f, 33, 2000, 1), 0);
    kvftl_close(f);
}

/*
 * A pm983 device of small_config() with directory pages of 4 entries
 * (pm983_test_fanout_log = 2) so that a few thousand keys need three
 * levels, on image @image when @img.
 */
static struct kvftl_config levels_config(bool img)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_PM983;
    c.hash_seed = 1;
    if (img) {
        image_new();
        c.image_path = image;
    }
    pm983_test_fanout_log = 2;
    return c;
}

/*
 * The levels grow with the keys: 2^gd directory slots in DRAM while they
 * fit one directory page (4 here), then pages of 4 in flash, a level more
 * each time the level above would exceed 4. With seed 1: 300 keys, 2
 * leaves, depth 1: 1 level; 1,000 keys, 8 leaves, depth 3: 2 directory
 * pages, 2 levels; 5,000 keys, 32 leaves, depth 5: 8 + 2 directory pages,
 * 3 levels. Every key reads back and kvftl_check() passes.
 */
static void test_levels_grow_with_keys(void)
{
    const int keys[3] = {300, 1000, 5000};
    const struct {
        uint32_t leaves, gd, levels, dir_pages;
    } want[3] = {{2, 1, 1, 0}, {8, 3, 2, 2}, {32, 5, 3, 10}};
    for (int t = 0; t < 3; t++) {
        struct kvftl_config c = levels_config(false);
        struct kvftl *f = open_or_die(&c);
        fill(f, 0, keys[t], 7);
        uint64_t now = 0;
        kv_index_settle(&f->index, &now);
        CU_ASSERT_EQUAL(f->index.hash.idx.npages, want[t].leaves);
        CU_ASSERT_EQUAL(f->index.hash.idx.global_depth, want[t].gd);
        CU_ASSERT_EQUAL(pm983_levels_count(&f->index), want[t].levels);
        CU_ASSERT_EQUAL(f->index.pm983.lv.npages, want[t].dir_pages);
        CU_ASSERT_EQUAL(count_bad(f, 0, keys[t], 7), 0);
        char err[256];
        CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
        kvftl_close(f);
    }
    pm983_test_fanout_log = 0;
}

/*
 * A cold look-up (after a clean close and mount, nothing cached) of a key
 * of a 3-level index: one NAND read and one index cache miss per level,
 * then the blob's page (4 reads, 3 misses); the same look-up again reads
 * only the blob (1 read, 4 hits: the 3 pages and the local index's search).
 */
static void test_cold_lookup_reads_each_level(void)
{
    struct kvftl_config c = levels_config(true);
    c.index_dram_bytes = 64 << 10; /* 16 frames: leaves 12 (after the filter), directory 2 */
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 5000, 7);
    kvftl_close(f);
    f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_EQUAL(pm983_levels_count(&f->index), 3);
    struct kvftl_stats s0 = stats(f);
    CU_ASSERT_EQUAL(get_check(f, "key-000000000042", 50, 7), 0);
    CU_ASSERT_EQUAL(stats(f).nand_pages_read - s0.nand_pages_read, 3 + 1);
    CU_ASSERT_EQUAL(stats(f).index_cache_misses - s0.index_cache_misses, 3);
    s0 = stats(f);
    CU_ASSERT_EQUAL(get_check(f, "key-000000000042", 50, 7), 0);
    CU_ASSERT_EQUAL(stats(f).nand_pages_read - s0.nand_pages_read, 1); /* the blob */
    CU_ASSERT_EQUAL(stats(f).index_cache_misses - s0.index_cache_misses, 0);
    CU_ASSERT_EQUAL(stats(f).index_cache_hits - s0.index_cache_hits, 4);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    kvftl_close(f);
    unlink(image);
    pm983_test_fanout_log = 0;
}

/*
 * The 5,000-key, 3-level image of test_cold_lookup_reads_each_level(),
 * closed cleanly; *@ppn is the NAND page of directory page @i of level @k,
 * *@leaf and *@leaf_ppn what its entry 0 names (level 1).
 */
static struct kvftl_config levels_image(uint32_t k, uint32_t i, uint32_t *ppn, uint32_t *leaf,
                                        uint32_t *leaf_ppn)
{
    struct kvftl_config c = levels_config(true);
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 5000, 7);
    kvftl_close(f);
    f = open_or_die(&c); /* mounted from the checkpoint: the levels' NAND pages are known */
    const struct pm983_levels *lv = &f->index.pm983.lv;
    CU_ASSERT_EQUAL_FATAL(lv->dir_levels, 2);
    *ppn = lv->ppn[lv->first[k] + i];
    *leaf = f->index.hash.idx.dir[0];
    *leaf_ppn = f->index.hash.idx.page_ppn[*leaf];
    kvftl_close(f); /* nothing dirty: the same pages */
    return c;
}

/* The image mounts by scanning the log with a reason holding @why; every key is back. */
static void expect_rescan(const struct kvftl_config *c, const char *why)
{
    expect_mount_rescan(c, why, 5000);
}

/*
 * Level-1 directory page 0 (below the top, so no checksum in the
 * checkpoint) says its first leaf is one NAND page further: the walk
 * compares every entry with the checkpoint's directory and refuses it.
 */
static void test_damaged_directory_entry_refused(void)
{
    uint32_t ppn, leaf, leaf_ppn;
    struct kvftl_config c = levels_image(1, 0, &ppn, &leaf, &leaf_ppn);
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    static uint8_t page[4096];
    CU_ASSERT(kvftl_image_read(&im, kvftl_image_page_off(&im, ppn), page, sizeof(page)));
    struct pm983_dir_entry *e = (struct pm983_dir_entry *)(page + sizeof(struct pm983_dir_header));
    CU_ASSERT_EQUAL(e[0].id, leaf);
    CU_ASSERT_EQUAL(e[0].ppn, leaf_ppn);
    e[0].ppn = leaf_ppn + 1;
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_page_off(&im, ppn), page, sizeof(page)));
    kvftl_image_close(&im);
    char why[160];
    snprintf(why, sizeof(why),
             "directory page 0 of level 1 entry 0 names page %u at NAND page %u; the checkpoint "
             "says page %u at %u",
             leaf, leaf_ppn + 1, leaf, leaf_ppn);
    expect_rescan(&c, why);
}

/* A byte past level-1 page 0's 4 entries (16 + 4 x 8 = byte 48) is not zero: refused. */
static void test_directory_padding_refused(void)
{
    uint32_t ppn, leaf, leaf_ppn;
    struct kvftl_config c = levels_image(1, 0, &ppn, &leaf, &leaf_ppn);
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    static uint8_t page[4096];
    CU_ASSERT(kvftl_image_read(&im, kvftl_image_page_off(&im, ppn), page, sizeof(page)));
    CU_ASSERT_EQUAL(page[48], 0);
    page[48] = 1;
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_page_off(&im, ppn), page, sizeof(page)));
    kvftl_image_close(&im);
    char why[160];
    snprintf(why, sizeof(why),
             "directory page 0 of level 1 (NAND page %u) has a byte at 48 past its 4 entries", ppn);
    expect_rescan(&c, why);
}

/* The top level's page 0 overwritten: it no longer matches the checksum the checkpoint keeps. */
static void test_damaged_top_page_refused(void)
{
    uint32_t ppn, leaf, leaf_ppn;
    struct kvftl_config c = levels_image(2, 0, &ppn, &leaf, &leaf_ppn);
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    static uint8_t junk[4096];
    memset(junk, 0xa5, sizeof(junk));
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_page_off(&im, ppn), junk, sizeof(junk)));
    kvftl_image_close(&im);
    char why[160];
    snprintf(why, sizeof(why),
             "directory page 0 of level 2 (NAND page %u) does not match its checksum", ppn);
    expect_rescan(&c, why);
}

/*
 * GC of a device whose index has 3 levels and 2 frames for directory
 * pages, so they are programmed often: 5,000 keys written five times
 * (about 25 MiB through a 23 MiB device) run GC over index stripes holding
 * directory page copies; every key reads back with its last bytes and
 * kvftl_check() finds the valid bytes and the directory pages right.
 */
static void test_gc_over_directory_pages(void)
{
    struct kvftl_config c = levels_config(false);
    c.index_dram_bytes = 64 << 10; /* 16 frames: leaves 12 (after the filter), directory 2 */
    struct kvftl *f = open_or_die(&c);
    for (uint8_t round = 1; round <= 5; round++) {
        fill(f, 0, 5000, round);
    }
    CU_ASSERT_EQUAL(pm983_levels_count(&f->index), 3);
    CU_ASSERT_EQUAL(f->index.pm983.lv.frames_max, 2);
    CU_ASSERT(stats(f).gc_runs > 0);
    CU_ASSERT(f->index.pm983.lv.programs > f->index.pm983.lv.npages);
    CU_ASSERT_EQUAL(count_bad(f, 0, 5000, 5), 0);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    kvftl_close(f);
    pm983_test_fanout_log = 0;
}

/*
 * GC moves a live directory page (level 1, page 0, written back by a
 * checkpoint's write-back): it is read (1 NAND read: its cached parent
 * needs none) and programmed anew (1 program), its parent is dirtied, the old copy stops being
 * valid (kvftl_check() agrees), and the old copy offered again is not moved (0).
 */
static void test_relocate_directory_page(void)
{
    struct kvftl_config c = levels_config(false);
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 5000, 7);
    uint64_t now = 0;
    CU_ASSERT_EQUAL_FATAL(kv_index_write_back(&f->index, &now), 0);
    struct pm983_levels *lv = &f->index.pm983.lv;
    uint32_t n = lv->first[1], parent = lv->first[2];
    uint32_t old = lv->ppn[n];
    CU_ASSERT_FATAL(old != UINT32_MAX);
    CU_ASSERT_EQUAL(lv->state[parent] & 2, 0); /* clean after the write-back */
    uint64_t reads = stats(f).nand_pages_read, programs = lv->programs;
    CU_ASSERT_EQUAL(kv_index_page_relocate(&f->index, old, PM983_DIR_TAG | n, &now), 1);
    CU_ASSERT_NOT_EQUAL(lv->ppn[n], old);
    CU_ASSERT_EQUAL(lv->relocated, 1);
    CU_ASSERT_EQUAL(lv->programs - programs, 1);
    CU_ASSERT_EQUAL(stats(f).nand_pages_read - reads, 1); /* the page; its parent is cached */
    CU_ASSERT_EQUAL(lv->state[parent], 3);                /* cached and dirty */
    CU_ASSERT_EQUAL(kv_index_page_relocate(&f->index, old, PM983_DIR_TAG | n, &now), 0);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(count_bad(f, 0, 5000, 7), 0);
    kvftl_close(f);
    pm983_test_fanout_log = 0;
}

/*
 * The merge is bounded per command: with 32 local entries (small_config)
 * and 3 levels cached in 16 frames, no merge of 5,000 keys written twice
 * read more than 32 x 3 = 96 index pages or programmed more than 96 plus
 * the leaves it created (312 merges; the most, in signature order: 35 reads, 35 programs).
 */
static void test_merge_bounded(void)
{
    struct kvftl_config c = levels_config(false);
    c.index_dram_bytes = 64 << 10;
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 5000, 1);
    fill(f, 0, 5000, 2);
    const struct pm983_local *l = &f->index.pm983;
    CU_ASSERT_EQUAL(pm983_levels_count(&f->index), 3);
    CU_ASSERT_EQUAL(l->max, 32);
    CU_ASSERT_EQUAL(l->merges, 312);
    CU_ASSERT(l->merge_reads_max <= 32 * 3);
    CU_ASSERT(l->merge_programs_max <= 32 * 3);
    CU_ASSERT_EQUAL(l->merge_reads_max, 35); /* measured: the bound is not reached */
    CU_ASSERT_EQUAL(l->merge_programs_max, 35);
    CU_ASSERT_EQUAL(count_bad(f, 0, 5000, 2), 0);
    kvftl_close(f);
    pm983_test_fanout_log = 0;
}

/*
 * kvftl_check() compares each clean directory page's NAND copy with the
 * index: level-1 page 0's first entry pointing one NAND page off is
 * refused with the page's level, index and NAND page.
 */
static void test_check_refuses_stale_directory_page(void)
{
    struct kvftl_config c = levels_config(false);
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 5000, 7);
    uint64_t now = 0;
    CU_ASSERT_EQUAL_FATAL(kv_index_write_back(&f->index, &now), 0);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    const struct pm983_levels *lv = &f->index.pm983.lv;
    uint32_t ppn = lv->ppn[lv->first[1]];
    struct pm983_dir_entry *e = (struct pm983_dir_entry *)(nand_page_ptr(&f->nand, ppn) +
                                                           sizeof(struct pm983_dir_header));
    e[0].ppn++;
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), -1);
    char want[160];
    snprintf(want, sizeof(want),
             "directory page 0 of level 1 (NAND page %u) does not say what the index says", ppn);
    CU_ASSERT_STRING_EQUAL(err, want);
    e[0].ppn--;
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    kvftl_close(f);
    pm983_test_fanout_log = 0;
}

/*
 * Keys whose hashes share their top 12 bits (a guest that could predict the
 * hash), as test_index.c's test_directory_bound_chosen_hashes: 217 fit a
 * 4 KiB leaf, the 218th would need a split past the directory bound. The
 * hash design refuses that Store; pm983 must too, before its blob is
 * appended, or a later merge could not place an entry already acknowledged
 * (the write-back and kvftl_check() would fail with the key only local).
 * Its admission counts the leaf's entries once, when the 218th comes.
 */
static void test_directory_bound_refused_before_merge(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_PM983;
    c.index_page_bytes = 4096;
    c.placement_unit_bytes = 64;
    struct kvftl *f = open_or_die(&c);
    kvftl_set_hash_for_test(f, key_is_hash);
    for (uint64_t i = 0; i < 217; i++) {
        CU_ASSERT_EQUAL_FATAL(put_h(f, chosen_hash(i + 1), 8), 0);
    }
    uint64_t wp = f->space.data.wp;
    CU_ASSERT_EQUAL(put_h(f, chosen_hash(218), 8), KVFTL_CAPACITY_EXCEEDED);
    CU_ASSERT_EQUAL(f->space.data.wp, wp);
    CU_ASSERT_EQUAL(f->index.pm983.admit_reads, 1);
    CU_ASSERT_EQUAL(put_h(f, chosen_hash(219), 8), KVFTL_CAPACITY_EXCEEDED);
    uint64_t now = 0;
    CU_ASSERT_EQUAL(kv_index_write_back(&f->index, &now), 0);
    CU_ASSERT_EQUAL(f->index.pm983.count, 0);
    CU_ASSERT_EQUAL(count_bad_chosen(f, 217), 0);
    CU_ASSERT_EQUAL(put_h(f, chosen_hash(1), 8), 0); /* an overwrite needs no entry */
    CU_ASSERT_EQUAL(put_h(f, 0x123ull << 52 | 7, 8), 0);      /* a key elsewhere */
    CU_ASSERT_EQUAL(stats(f).live_keys, 218);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    kvftl_close(f);
}

/*
 * The same bound before any merge: with 64 buffer entries the local index
 * holds 256 keys, more than a leaf's 217, and on a new device the only
 * leaf has never been written (no bytes to look at: it is empty). The
 * 218th chosen key must be refused all the same, on the admissions alone.
 */
static void test_directory_bound_before_first_merge(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_PM983;
    c.index_page_bytes = 4096;
    c.placement_unit_bytes = 64;
    c.buffer_entries = 64;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->index.pm983.max, 256);
    kvftl_set_hash_for_test(f, key_is_hash);
    for (uint64_t i = 1; i <= 217; i++) {
        CU_ASSERT_EQUAL_FATAL(put_h(f, chosen_hash(i), 8), 0);
    }
    CU_ASSERT_EQUAL(f->index.pm983.merges, 0);
    CU_ASSERT_EQUAL(put_h(f, chosen_hash(218), 8), KVFTL_CAPACITY_EXCEEDED);
    uint64_t now = 0;
    CU_ASSERT_EQUAL(kv_index_write_back(&f->index, &now), 0);
    CU_ASSERT_EQUAL(count_bad_chosen(f, 217), 0);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    kvftl_close(f);
}

/*
 * Admissions whose Stores then fail (no free stripe, a power cut) add no
 * local entry, so they could outnumber the local index: the admission map
 * (cap = 64 slots for max = 32) is merged once it holds max prefixes. 3,000
 * keys make 16 leaves, so the bound's depth is 9 bits (512 prefixes); 500
 * reservations of new signatures with no Store after them must neither fill
 * the map (its probe would never end) nor leave the index inconsistent.
 */
static void test_admissions_without_stores_bounded(void)
{
    struct kvftl *f = open_design(KVFTL_INDEX_PM983);
    char key[16];
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "k%05d", i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 100, (uint8_t)i, false), 0);
    }
    uint64_t now = 0;
    kv_index_settle(&f->index, &now);
    const struct pm983_local *l = &f->index.pm983;
    CU_ASSERT_EQUAL(l->cap, 64);
    CU_ASSERT_EQUAL(l->pend_depth, 9);
    uint32_t most = 0;
    for (uint64_t i = 1; i <= 500; i++) {
        CU_ASSERT_EQUAL(kv_index_reserve(&f->index, i * 0x9e3779b97f4a7c15ull, &now), 0);
        most = l->pend_used > most ? l->pend_used : most;
    }
    CU_ASSERT_EQUAL(most, 32);
    CU_ASSERT_EQUAL(l->count, 0);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(get_check(f, "k00042", 100, 42), 0);
    kvftl_close(f);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_directory_bound_before_first_merge),
    TAP_TEST_FN(test_admissions_without_stores_bounded),
    TAP_TEST_FN(test_directory_bound_refused_before_merge),
    TAP_TEST_FN(test_check_refuses_stale_directory_page),
    TAP_TEST_FN(test_merge_bounded),
    TAP_TEST_FN(test_gc_over_directory_pages),
    TAP_TEST_FN(test_relocate_directory_page),
    TAP_TEST_FN(test_damaged_directory_entry_refused),
    TAP_TEST_FN(test_damaged_top_page_refused),
    TAP_TEST_FN(test_directory_padding_refused),
    TAP_TEST_FN(test_levels_grow_with_keys),
    TAP_TEST_FN(test_cold_lookup_reads_each_level),
    TAP_TEST_FN(test_overwrite_reads_no_flash),
    TAP_TEST_FN(test_full_local_index_merges),
    TAP_TEST_FN(test_merge_reads_each_leaf_once),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("pm983", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
