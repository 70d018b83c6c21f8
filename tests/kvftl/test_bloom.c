/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bloom filter: no false negatives, bounded false positives, absent keys answered without flash
 * reads. */
#include <xxhash.h>

#include "helpers.h"
#include "index_cache.h"

/* 10 bits per key gives 7 probes; every added hash answers "maybe". */
static void test_no_false_negatives(void)
{
    struct bloom b;
    bloom_init(&b, 12500, 10);
    CU_ASSERT_EQUAL(b.probes, 7);
    CU_ASSERT_EQUAL(bloom_bytes(&b), 12480); /* 195 blocks of 64 bytes */
    for (uint64_t i = 0; i < 10000; i++) {
        bloom_add(&b, XXH3_64bits(&i, sizeof(i)));
    }
    int missing = 0;
    for (uint64_t i = 0; i < 10000; i++) {
        missing += !bloom_maybe(&b, XXH3_64bits(&i, sizeof(i)));
    }
    CU_ASSERT_EQUAL(missing, 0);
    bloom_clear(&b);
    CU_ASSERT_FALSE(bloom_maybe(&b, XXH3_64bits("x", 1)));
    bloom_fini(&b);
}

/*
 * A filter of 3 MiB + 64 bytes is mapped on a 2 MiB boundary (huge pages:
 * its random block per Store must not miss the TLB), two huge pages of
 * filter plus one of alignment slack; it starts zeroed, holds what is added
 * at both ends and clears. A 12,480-byte filter stays on the heap.
 */
static void test_large_filter_in_huge_pages(void)
{
    struct bloom b;
    bloom_init(&b, (3u << 20) + 64, 10);
    CU_ASSERT_EQUAL(bloom_bytes(&b), (3u << 20) + 64);
    CU_ASSERT_EQUAL((uintptr_t)b.bits % (2u << 20), 0);
    CU_ASSERT_EQUAL(b.map_bytes, 3u * (2u << 20));
    CU_ASSERT_EQUAL(b.bits[0], 0);
    CU_ASSERT_EQUAL(b.bits[b.nblocks * 8 - 1], 0);
    uint64_t first = 1, last = UINT64_MAX; /* block 0 and block nblocks - 1 */
    bloom_add(&b, first);
    bloom_add(&b, last);
    CU_ASSERT_TRUE(bloom_maybe(&b, first));
    CU_ASSERT_TRUE(bloom_maybe(&b, last));
    CU_ASSERT_NOT_EQUAL(b.bits[b.nblocks * 8 - 8] | b.bits[b.nblocks * 8 - 1], 0);
    bloom_clear(&b);
    CU_ASSERT_FALSE(bloom_maybe(&b, last));
    bloom_fini(&b);
    CU_ASSERT_PTR_NULL(b.bits);

    bloom_init(&b, 12500, 10);
    CU_ASSERT_EQUAL(b.map_bytes, 0);
    bloom_fini(&b);
}

/* 10,000 keys at 10 bits each: fewer than 2% of 100,000 other hashes pass. */
static void test_false_positive_rate(void)
{
    struct bloom b;
    bloom_init(&b, 12500, 10);
    for (uint64_t i = 0; i < 10000; i++) {
        bloom_add(&b, XXH3_64bits(&i, sizeof(i)));
    }
    int fp = 0;
    for (uint64_t i = 1000000; i < 1100000; i++) {
        fp += bloom_maybe(&b, XXH3_64bits(&i, sizeof(i)));
    }
    printf("# false positives: %d of 100000\n", fp);
    CU_ASSERT(fp < 2000);
    bloom_fini(&b);
}

/* three_pages()' key @n: the first 100 in hash quarter 0, the others alternating quarters 2 and 3.
 */
static uint64_t three_pages_hash(uint64_t n)
{
    return n < 100 ? hq(0, n) : hq(2 + n % 2, n);
}

/*
 * Build three index pages under a two-page budget so that page 0
 * (quarter 0 of the hash space) is in NAND only, then ask about an absent
 * quarter-0 key.
 */
static struct kvftl *three_pages(bool bloom)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_HASH; /* the hash design's pages and filter */
    c.index_page_bytes = 4096;
    c.bloom = bloom;
    c.max_keys = 1000;
    c.index_dram_bytes = bloom ? 10240 : 8192; /* Bloom: 1216 bytes, then two pages */
    c.placement_unit_bytes = 64;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->index.hash.idx.frames_max, 2);
    kvftl_set_hash_for_test(f, key_is_hash);
    for (uint64_t n = 0; n < 318; n++) {
        CU_ASSERT_EQUAL(put_h(f, three_pages_hash(n), 16), 0);
    }
    CU_ASSERT_EQUAL(f->index.hash.idx.npages, 3);
    CU_ASSERT_EQUAL(f->index.hash.idx.page_frame[0], UINT32_MAX);
    return f;
}

/*
 * Ask three_pages()' device about an absent quarter-0 key (@k): Exist
 * answers KEY_DOES_NOT_EXIST. @before: the statistics before the question.
 */
static struct kvftl_cpl exist_absent(struct kvftl *f, uint8_t k[8], struct kvftl_stats *before)
{
    be64(k, hq(0, 5000));
    *before = stats(f);
    struct kvftl_cpl cpl;
    kvftl_exist(f, k, 8, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_KEY_DOES_NOT_EXIST);
    return cpl;
}

/* Bloom on: Exist of an absent key whose index page is in NAND costs no flash read. */
static void test_absent_key_without_flash_read(void)
{
    struct kvftl *f = three_pages(true);
    uint8_t k[8];
    struct kvftl_stats before;
    struct kvftl_cpl cpl = exist_absent(f, k, &before);
    kvftl_retrieve(f, k, 8, NULL, 0, 0, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_KEY_DOES_NOT_EXIST);
    struct kvftl_stats after = stats(f);
    CU_ASSERT_EQUAL(after.bloom_negatives - before.bloom_negatives, 2);
    CU_ASSERT_EQUAL(after.nand_pages_read - before.nand_pages_read, 0);
    CU_ASSERT_EQUAL(after.index_cache_misses - before.index_cache_misses, 0);
    CU_ASSERT_EQUAL(cpl.done_ns, 0); /* answered in no simulated time */
    kvftl_close(f);
}

/* Bloom off: the same question reads index page 0 from NAND (one miss, one read). */
static void test_bloom_off_reads_index_page(void)
{
    struct kvftl *f = three_pages(false);
    uint8_t k[8];
    struct kvftl_stats before;
    struct kvftl_cpl cpl = exist_absent(f, k, &before);
    struct kvftl_stats after = stats(f);
    CU_ASSERT_EQUAL(after.bloom_negatives, 0);
    CU_ASSERT_EQUAL(after.nand_pages_read - before.nand_pages_read, 1);
    CU_ASSERT_EQUAL(after.index_cache_misses - before.index_cache_misses, 1);
    CU_ASSERT(cpl.done_ns >= 50000 + 5120); /* at least tR + 4 KiB over the channel */
    kvftl_close(f);
}

/* After a crash mount the filter is rebuilt from the index: stored keys are still found. */
static void test_rebuilt_after_power_cycle(void)
{
    struct kvftl *f = three_pages(true);
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
    int missing = 0;
    for (uint64_t n = 0; n < 318; n++) {
        uint8_t k[8];
        be64(k, three_pages_hash(n));
        struct kvftl_cpl cpl;
        kvftl_exist(f, k, 8, 0, &cpl);
        missing += cpl.status != 0;
    }
    CU_ASSERT_EQUAL(missing, 0);
    assert_consistent(f);
    kvftl_close(f);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_no_false_negatives),         TAP_TEST_FN(test_false_positive_rate),
    TAP_TEST_FN(test_large_filter_in_huge_pages), TAP_TEST_FN(test_absent_key_without_flash_read),
    TAP_TEST_FN(test_bloom_off_reads_index_page), TAP_TEST_FN(test_rebuilt_after_power_cycle),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("bloom", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
