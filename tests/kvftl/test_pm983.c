/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pm983 index design (kvftl/kv/index/pm983/): a Store checks membership
 * by signature without a flash read, and a full local index is merged on
 * the Store that finds it full.
 */
#include "helpers.h"

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

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_overwrite_reads_no_flash),
    TAP_TEST_FN(test_full_local_index_merges),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("pm983", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
