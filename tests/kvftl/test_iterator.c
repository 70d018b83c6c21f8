/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Iterators: 4-byte prefix/mask buckets, key or key+value, 16 handles, deleted keys never returned.
 */
#include <glib.h>
#include <string.h>

#include "helpers.h"

struct seen {
    GHashTable *keys; /* key -> number of times emitted */
    int emitted;
    int refuse_at; /* refuse the entry with this ordinal (-1: never) */
    bool values_ok;
};

static int collect(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                   uint32_t value_bytes)
{
    struct seen *s = opaque;
    if (s->emitted == s->refuse_at) {
        s->refuse_at = -1;
        return 1;
    }
    char *k = g_strndup(key, key_bytes);
    int n = GPOINTER_TO_INT(g_hash_table_lookup(s->keys, k));
    g_hash_table_replace(s->keys, k, GINT_TO_POINTER(n + 1));
    if (value) {
        /* every test value is value_bytes copies of the key's last character */
        const uint8_t *v = value;
        for (uint32_t i = 0; i < value_bytes; i++) {
            s->values_ok &= v[i] == ((const uint8_t *)key)[key_bytes - 1];
        }
    }
    s->emitted++;
    return 0;
}

static void seen_init(struct seen *s)
{
    s->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s->emitted = 0;
    s->refuse_at = -1;
    s->values_ok = true;
}

static int times(struct seen *s, const char *key)
{
    return GPOINTER_TO_INT(g_hash_table_lookup(s->keys, key));
}

/* Drain an iterator in batches of @batch; returns the number of next calls. */
static int drain(struct kvftl *f, uint32_t prefix, uint32_t mask, enum kvftl_iter_kind kind,
                 uint32_t batch, struct seen *s)
{
    uint32_t h;
    struct kvftl_cpl cpl;
    kvftl_iter_open(f, prefix, mask, kind, 0, &h, &cpl);
    CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
    int calls = 0;
    for (;;) {
        kvftl_iter_next(f, h, batch, collect, s, 0, &cpl);
        calls++;
        if (cpl.status == KVFTL_ITERATOR_END) {
            break;
        }
        CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
        CU_ASSERT(cpl.value_bytes <= batch);
    }
    kvftl_iter_close(f, h, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    return calls;
}

/*
 * Draining the bucket (@prefix, @mask) of keys in batches of 10 yields
 * exactly the @n keys of @want, each once.
 */
static void assert_bucket(struct kvftl *f, uint32_t prefix, uint32_t mask, const char *const *want,
                          int n)
{
    struct seen s;
    seen_init(&s);
    drain(f, prefix, mask, KVFTL_ITER_KEYS, 10, &s);
    CU_ASSERT_EQUAL(s.emitted, n);
    for (int i = 0; i < n; i++) {
        if (times(&s, want[i]) != 1) {
            printf("# %s emitted %d times\n", want[i], times(&s, want[i]));
        }
        CU_ASSERT_EQUAL(times(&s, want[i]), 1);
    }
    g_hash_table_destroy(s.keys);
}

/*
 * small_config() on 4 KiB index pages, blobs placed byte by byte: a few
 * thousand short keys fill many index pages.
 */
static struct kvftl *open_small_pages(void)
{
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_HASH; /* its tests count the hash design's index pages */
    c.index_page_bytes = 4096;
    c.placement_unit_bytes = 1;
    return open_or_die(&c);
}

static struct kvftl *four_keys(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    const char *keys[] = {"aaaa1", "aaaa2", "aabb3", "bbbb4"};
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(put(f, keys[i], 10, (uint8_t)keys[i][4], false), 0);
    }
    return f;
}

/* Prefix "aaaa" with a full mask returns aaaa1 and aaaa2, each once. */
static void test_full_mask(void)
{
    struct kvftl *f = four_keys();
    assert_bucket(f, 0x61616161, 0xffffffff, (const char *[]){"aaaa1", "aaaa2"}, 2);
    kvftl_close(f);
}

/* Mask 0xffff0000 groups by the first two bytes: "aa" matches three keys; mask 0 matches all. */
static void test_partial_mask(void)
{
    struct kvftl *f = four_keys();
    assert_bucket(f, 0x61610000, 0xffff0000, (const char *[]){"aaaa1", "aaaa2", "aabb3"}, 3);
    assert_bucket(f, 0, 0, (const char *[]){"aaaa1", "aaaa2", "aabb3", "bbbb4"}, 4);
    kvftl_close(f);
}

/* A key shorter than 4 bytes is zero padded: "ab" is in bucket 0x61620000. */
static void test_short_key_zero_padded(void)
{
    struct kvftl *f = four_keys();
    put(f, "ab", 3, 'b', false);
    assert_bucket(f, 0x61620000, 0xffffffff, (const char *[]){"ab"}, 1);
    CU_ASSERT_EQUAL(iter_first4("ab", 2), 0x61620000);
    kvftl_close(f);
}

/* A deleted key is never returned, whether deleted before the open or during the walk. */
static void test_deleted_keys_not_returned(void)
{
    struct kvftl *f = four_keys();
    del(f, "aaaa1");
    uint32_t h;
    struct kvftl_cpl cpl;
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEYS, 0, &h, &cpl);
    del(f, "bbbb4");
    struct seen s;
    seen_init(&s);
    while (kvftl_iter_next(f, h, 100, collect, &s, 0, &cpl), cpl.status == 0) {
    }
    CU_ASSERT_EQUAL(cpl.status, KVFTL_ITERATOR_END);
    CU_ASSERT_EQUAL(s.emitted, 2);
    CU_ASSERT_EQUAL(times(&s, "aaaa1"), 0);
    CU_ASSERT_EQUAL(times(&s, "bbbb4"), 0);
    kvftl_iter_close(f, h, 0, &cpl);
    g_hash_table_destroy(s.keys);
    kvftl_close(f);
}

/* Key+value iteration hands over each value exactly; host_bytes_out counts the value bytes. */
static void test_key_values(void)
{
    struct kvftl *f = four_keys();
    struct seen s;
    seen_init(&s);
    uint64_t out = stats(f).host_bytes_out;
    drain(f, 0, 0, KVFTL_ITER_KEY_VALUES, 10, &s);
    CU_ASSERT_EQUAL(s.emitted, 4);
    CU_ASSERT_TRUE(s.values_ok);
    CU_ASSERT_EQUAL(stats(f).host_bytes_out - out, 40);
    g_hash_table_destroy(s.keys);
    kvftl_close(f);
}

/*
 * 16 handles at most; the 17th is ITERATOR_LIMIT; closed or bogus handles
 * are INVALID_ITERATOR; a bad kind, no handle pointer or no callback is
 * INVALID_FIELD.
 */
static void test_handle_limit(void)
{
    struct kvftl *f = four_keys();
    uint32_t h[KVFTL_MAX_ITERATORS], extra;
    struct kvftl_cpl cpl;
    for (int i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEYS, 0, &h[i], &cpl);
        CU_ASSERT_EQUAL(cpl.status, 0);
        CU_ASSERT_EQUAL(h[i], (uint32_t)i);
    }
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEYS, 0, &extra, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_ITERATOR_LIMIT);
    kvftl_iter_close(f, 3, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    kvftl_iter_close(f, 3, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_ITERATOR);
    struct seen s;
    seen_init(&s);
    kvftl_iter_next(f, 3, 1, collect, &s, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_ITERATOR);
    kvftl_iter_next(f, 99, 1, collect, &s, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_ITERATOR);
    kvftl_iter_open(f, 0, 0, (enum kvftl_iter_kind)7, 0, &extra, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEYS, 0, NULL, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_iter_next(f, 0, 1, NULL, NULL, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_INVALID_FIELD);
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEYS, 0, &extra, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    CU_ASSERT_EQUAL(extra, 3); /* the freed handle is reused */
    g_hash_table_destroy(s.keys);
    kvftl_close(f);
}

/*
 * A refused entry is offered first by the next call: refusing the 3rd of
 * 4 keys in a batch of 10 returns 2, then the remaining 2, then END.
 */
static void test_refused_entry_offered_again(void)
{
    struct kvftl *f = four_keys();
    uint32_t h;
    struct kvftl_cpl cpl;
    struct seen s;
    seen_init(&s);
    s.refuse_at = 2;
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEYS, 0, &h, &cpl);
    kvftl_iter_next(f, h, 10, collect, &s, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    CU_ASSERT_EQUAL(cpl.value_bytes, 2);
    kvftl_iter_next(f, h, 10, collect, &s, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    CU_ASSERT_EQUAL(cpl.value_bytes, 2);
    kvftl_iter_next(f, h, 10, collect, &s, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_ITERATOR_END);
    CU_ASSERT_EQUAL(g_hash_table_size(s.keys), 4);
    CU_ASSERT_EQUAL(s.emitted, 4);
    g_hash_table_destroy(s.keys);
    kvftl_close(f);
}

/*
 * 3000 keys over many 4 KiB index pages, walked one entry per call while
 * 1000 new keys are stored (splitting pages) and GC-free overwrites move
 * blobs: each of the original keys is returned exactly once.
 */
static void test_exactly_once_under_splits(void)
{
    struct kvftl *f = open_small_pages();
    char key[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "old-%05d", i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 8, 'x', false), 0);
    }
    uint32_t pages_before = f->index.hash.idx.npages;
    uint32_t h;
    struct kvftl_cpl cpl;
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEYS, 0, &h, &cpl);
    struct seen s;
    seen_init(&s);
    int added = 0;
    while (kvftl_iter_next(f, h, 1, collect, &s, 0, &cpl), cpl.status == 0) {
        if (added < 1000) {
            snprintf(key, sizeof(key), "new-%05d", added++);
            put(f, key, 8, 'y', false);
            snprintf(key, sizeof(key), "old-%05d", added);
            put(f, key, 8, 'x', false); /* overwrite: the blob moves */
        }
    }
    CU_ASSERT_EQUAL(cpl.status, KVFTL_ITERATOR_END);
    CU_ASSERT(f->index.hash.idx.npages > pages_before);
    int once = 0, other = 0;
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "old-%05d", i);
        once += times(&s, key) == 1;
        other += times(&s, key) != 1;
    }
    CU_ASSERT_EQUAL(once, 3000);
    CU_ASSERT_EQUAL(other, 0);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, s.keys);
    int dup = 0;
    while (g_hash_table_iter_next(&it, &k, &v)) {
        dup += GPOINTER_TO_INT(v) > 1;
    }
    CU_ASSERT_EQUAL(dup, 0);
    kvftl_iter_close(f, h, 0, &cpl);
    g_hash_table_destroy(s.keys);
    kvftl_close(f);
}

/* ---- Bounded steps (kvftl_iter_step): what a device runs per main-loop slice ---- */

/* 3000 keys over many 4 KiB index pages, a few of them deleted. */
static struct kvftl *many_pages(void)
{
    struct kvftl *f = open_small_pages();
    char key[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "%c%c-%05d", 'a' + i % 3, 'a' + i % 3, i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 8, key[strlen(key) - 1], false), 0);
    }
    for (int i = 0; i < 3000; i += 7) {
        snprintf(key, sizeof(key), "%c%c-%05d", 'a' + i % 3, 'a' + i % 3, i);
        CU_ASSERT_EQUAL_FATAL(del(f, key), 0);
    }
    uint64_t now = 0;
    kv_index_settle(&f->index, &now); /* a design's pending changes: before the walks are counted */
    CU_ASSERT_FATAL(f->index.hash.idx.npages >= 16);
    return f;
}

/*
 * Drain with kvftl_iter_step(@pages per step). Every step must look at most
 * @pages index pages: counted by the index cache's access clock (one access
 * per page walked), not by time. Returns the number of steps.
 */
static int drain_steps(struct kvftl *f, uint32_t prefix, uint32_t mask, uint32_t pages,
                       struct seen *s)
{
    uint32_t h;
    struct kvftl_cpl cpl;
    kvftl_iter_open(f, prefix, mask, KVFTL_ITER_KEYS, 0, &h, &cpl);
    CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
    int steps = 0;
    for (;;) {
        uint64_t clock = f->index.hash.idx.clock;
        kvftl_iter_step(f, h, UINT32_MAX, pages, collect, s, 0, &cpl);
        steps++;
        CU_ASSERT(f->index.hash.idx.clock - clock <= pages);
        if (cpl.status == KVFTL_ITERATOR_END) {
            break;
        }
        CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
        CU_ASSERT_FATAL(steps <= 100000);
    }
    kvftl_iter_close(f, h, 0, &cpl);
    return steps;
}

static bool same_sets(struct seen *a, struct seen *b)
{
    if (g_hash_table_size(a->keys) != g_hash_table_size(b->keys)) {
        return false;
    }
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, a->keys);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        if (g_hash_table_lookup(b->keys, k) != v) {
            return false;
        }
    }
    return true;
}

/*
 * Mask 0 over 2571 live keys: steps of 1 and of 3 index pages return exactly
 * the keys of the one-shot walk, each once; every step walks at most its
 * budget; and there are at least as many steps as pages / budget.
 */
static void test_steps_match_one_shot(void)
{
    struct kvftl *f = many_pages();
    uint32_t npages = f->index.hash.idx.npages;
    struct seen one, s1, s3;
    seen_init(&one);
    seen_init(&s1);
    seen_init(&s3);
    drain(f, 0, 0, KVFTL_ITER_KEYS, UINT32_MAX, &one);
    CU_ASSERT_EQUAL(one.emitted, 3000 - 429);
    CU_ASSERT_EQUAL(g_hash_table_size(one.keys), 3000 - 429);
    int steps1 = drain_steps(f, 0, 0, 1, &s1);
    int steps3 = drain_steps(f, 0, 0, 3, &s3);
    CU_ASSERT_EQUAL(s1.emitted, 3000 - 429);
    CU_ASSERT_EQUAL(s3.emitted, 3000 - 429);
    CU_ASSERT(same_sets(&one, &s1));
    CU_ASSERT(same_sets(&one, &s3));
    /* one step per page, plus the one that reports the end */
    CU_ASSERT_EQUAL(steps1, (int)npages + 1);
    CU_ASSERT(steps3 >= (int)(npages + 2) / 3);
    g_hash_table_destroy(one.keys);
    g_hash_table_destroy(s1.keys);
    g_hash_table_destroy(s3.keys);
    kvftl_close(f);
}

/*
 * A prefix that matches nothing ("zzzz"): every step returns success with 0
 * entries until the walk has visited every page once, the last step Iterator End;
 * the one-shot walk returns End at once. Same (empty) result, bounded steps.
 */
static void test_steps_prefix_matching_nothing(void)
{
    struct kvftl *f = many_pages();
    uint32_t npages = f->index.hash.idx.npages;
    struct seen s;
    seen_init(&s);
    uint64_t clock = f->index.hash.idx.clock;
    int steps = drain_steps(f, 0x7a7a7a7a, 0xffffffff, 2, &s);
    CU_ASSERT_EQUAL(s.emitted, 0);
    /* the step that walks the last page finds nothing after it: End at once */
    CU_ASSERT_EQUAL(steps, (int)(npages + 1) / 2);
    CU_ASSERT_EQUAL(f->index.hash.idx.clock - clock, npages);
    struct seen one;
    seen_init(&one);
    CU_ASSERT_EQUAL(drain(f, 0x7a7a7a7a, 0xffffffff, KVFTL_ITER_KEYS, UINT32_MAX, &one), 1);
    CU_ASSERT_EQUAL(one.emitted, 0);
    g_hash_table_destroy(s.keys);
    g_hash_table_destroy(one.keys);
    kvftl_close(f);
}

/* Prefix "bb" (mask ffff0000): steps of 1 page give exactly the 857 live "bb" keys. */
static void test_steps_partial_prefix(void)
{
    struct kvftl *f = many_pages();
    struct seen one, st;
    seen_init(&one);
    seen_init(&st);
    drain(f, 0x62620000, 0xffff0000, KVFTL_ITER_KEYS, UINT32_MAX, &one);
    drain_steps(f, 0x62620000, 0xffff0000, 1, &st);
    /* keys i = 1 mod 3 (1000 of them) minus those with i = 0 mod 7 (143) */
    CU_ASSERT_EQUAL(one.emitted, 857);
    CU_ASSERT_EQUAL(st.emitted, 857);
    CU_ASSERT(same_sets(&one, &st));
    g_hash_table_destroy(one.keys);
    g_hash_table_destroy(st.keys);
    kvftl_close(f);
}

/* ---- The FTL check in bounded steps (kvftl_check_step) ---- */

/* Run the stepped check with @budget bytes a step; returns its result, steps in *@steps. */
static int check_in_steps(struct kvftl *f, uint64_t budget, char *err, size_t err_len, int *steps,
                          uint64_t *pages, uint64_t *blobs)
{
    struct kvftl_check_walk *w = kvftl_check_begin(f);
    uint64_t bytes_before = 0;
    int rc;
    *steps = 0;
    do {
        rc = kvftl_check_step(f, w, budget, err, err_len);
        (*steps)++;
        uint64_t p, b, bytes;
        kvftl_check_progress(w, &p, &b, &bytes);
        /* a step may pass its budget by one item at most: one index page or one small blob */
        CU_ASSERT(bytes - bytes_before <= budget + f->index.hash.idx.page_bytes);
        bytes_before = bytes;
        *pages = p;
        *blobs = b;
        CU_ASSERT_FATAL(*steps <= 1000000);
    } while (rc == 1);
    kvftl_check_end(w);
    return rc;
}

/*
 * A consistent device: the stepped check passes like the one-shot check,
 * after examining every index page once and every live entry (2571 pairs
 * and 429 tombstones) once, in many steps of at most ~8 KiB each.
 */
static void test_check_steps_pass(void)
{
    struct kvftl *f = many_pages();
    char err[512] = "";
    int steps;
    uint64_t pages, blobs;
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(check_in_steps(f, 8192, err, sizeof(err), &steps, &pages, &blobs), 0);
    CU_ASSERT_EQUAL(pages, f->index.hash.idx.npages);
    CU_ASSERT_EQUAL(blobs, 3000);
    CU_ASSERT(steps > (int)f->index.hash.idx.npages / 2);
    kvftl_close(f);
}

/*
 * A damaged accounting (one stripe's valid bytes off by one): the stepped
 * check fails with exactly the sentence of the one-shot check.
 */
static void test_check_steps_same_failure(void)
{
    struct kvftl *f = many_pages();
    char one[512] = "", stepped[512] = "";
    int steps;
    uint64_t pages, blobs;
    uint64_t addr = addr_of(f, "bb-00001");
    uint32_t s = (uint32_t)(addr / f->nand.geo.stripe_bytes);
    f->space.stripes[s].valid_bytes += 1;
    CU_ASSERT_EQUAL(kvftl_check(f, one, sizeof(one)), -1);
    CU_ASSERT_EQUAL(check_in_steps(f, 4096, stepped, sizeof(stepped), &steps, &pages, &blobs), -1);
    CU_ASSERT_STRING_EQUAL(one, stepped);
    CU_ASSERT(strstr(one, "valid bytes") != NULL);
    CU_ASSERT(steps > 1);
    f->space.stripes[s].valid_bytes -= 1;
    kvftl_close(f);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_full_mask),
    TAP_TEST_FN(test_partial_mask),
    TAP_TEST_FN(test_short_key_zero_padded),
    TAP_TEST_FN(test_deleted_keys_not_returned),
    TAP_TEST_FN(test_key_values),
    TAP_TEST_FN(test_handle_limit),
    TAP_TEST_FN(test_refused_entry_offered_again),
    TAP_TEST_FN(test_exactly_once_under_splits),
    TAP_TEST_FN(test_steps_match_one_shot),
    TAP_TEST_FN(test_steps_prefix_matching_nothing),
    TAP_TEST_FN(test_steps_partial_prefix),
    TAP_TEST_FN(test_check_steps_pass),
    TAP_TEST_FN(test_check_steps_same_failure),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("iterator", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
