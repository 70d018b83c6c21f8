/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Chosen keys against the hash index (issue 10, item 3), driven as a hostile
 * guest would. The firmware used to hash keys with unseeded XXH3-64, so a
 * guest could compute keys sharing their top hash bits: one Store of such a
 * key split the same index page once per shared bit, doubling the directory
 * each time (22 shared bits: a 2^23-entry, 32 MiB directory, and 32 bits
 * more would abort QEMU in g_new). Now the hash is seeded with a secret kept
 * in the image, and the directory depth is bounded by the number of index
 * pages, so the same keys are ordinary keys.
 */
#include "kvssd-common.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define IX_PROPS "index-page-bytes=4096"
#define IX_KEYS 230          /* a 4 KiB index page splits past 217 entries */
#define IX_KEY_BYTES 16
#define IX_SHARED_BITS 22
#define IX_VALUE_BYTES 64
#define IX_WARMUP_KEYS 10    /* stored before the memory baseline */

/*
 * What the 220 Stores after the warm-up may cost QEMU (VmRSS growth): the
 * Bloom filter and NAND pages they touch (under 1.2 MiB) and a few index
 * pages; measured: 0 +- 0.6 MiB. The old firmware grew by 32 MiB (its
 * directory: 2^23 entries of 4 bytes).
 */
#define IX_RSS_BOUND_KIB (8 * 1024)
/*
 * The index's own host memory (stats log index_host_bytes): with P index
 * pages the directory is at most 4 B x 2^(ceil(log2 P) + 4); 230 keys under
 * an unpredictable hash need P <= 3 pages, so it grows by at most 256 B.
 */
#define IX_INDEX_BOUND_BYTES (64 * 1024)

static uint8_t ix_keys[IX_KEYS][IX_KEY_BYTES];

static uint64_t rd64le(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64_to_cpu(v);
}

/* The inverse of XXH3's final mix (xorshift 37, multiply, xorshift 32). */
static uint64_t xxh3_avalanche_inverse(uint64_t h)
{
    const uint64_t m = 0x165667919E3779F9ULL;
    uint64_t inv = m;
    for (int i = 0; i < 6; i++) {
        inv *= 2 - m * inv; /* Newton: m x inv = 1 mod 2^64 */
    }
    h ^= h >> 32;
    h *= inv;
    h ^= h >> 37;
    return h;
}

/*
 * IX_KEYS 16-byte keys whose unseeded XXH3-64 (the old firmware's key hash)
 * share their top IX_SHARED_BITS bits, the rest spread. No search is
 * needed: for a 9..16-byte input XXH3 computes lo = first 8 bytes ^ bf1,
 * hi = last 8 bytes ^ bf2 (bf1, bf2 from its public default secret),
 * acc = len + swap64(lo) + hi + fold64(lo x hi) and hash = avalanche(acc),
 * and avalanche is invertible. First 8 bytes = bf1 makes lo = 0, so
 * hi = avalanche^-1(target) - 16 reaches any target hash. Each key is
 * checked against XXH3_64bits() itself.
 */
static void ix_make_keys(void)
{
    const uint8_t *secret = XXH3_kSecret;
    uint64_t bf1 = rd64le(secret + 24) ^ rd64le(secret + 32);
    uint64_t bf2 = rd64le(secret + 40) ^ rd64le(secret + 48);
    const uint64_t prefix = 0x2c5a71ull << (64 - IX_SHARED_BITS);

    for (uint64_t i = 0; i < IX_KEYS; i++) {
        uint64_t target = prefix | ((i + 1) * 0x9E3779B97F4A7C15ull >> IX_SHARED_BITS);
        uint64_t hi = (xxh3_avalanche_inverse(target) - IX_KEY_BYTES) ^ bf2;
        uint64_t lo_le = cpu_to_le64(bf1), hi_le = cpu_to_le64(hi);
        memcpy(ix_keys[i], &lo_le, 8);
        memcpy(ix_keys[i] + 8, &hi_le, 8);
        g_assert_cmphex(XXH3_64bits(ix_keys[i], IX_KEY_BYTES), ==, target);
        g_assert_cmphex(XXH3_64bits(ix_keys[i], IX_KEY_BYTES) >> (64 - IX_SHARED_BITS), ==,
                        prefix >> (64 - IX_SHARED_BITS));
    }
}

static void ix_value(uint8_t *v, int i)
{
    for (int b = 0; b < IX_VALUE_BYTES; b++) {
        v[b] = (uint8_t)(i * 7 + b);
    }
}

/* Store/Retrieve with a binary key (its bytes may be 0). */
static uint16_t ix_store(KvDev *d, int i)
{
    uint8_t v[IX_VALUE_BYTES];
    ix_value(v, i);
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_STORE, 1);
    qtest_memwrite(d->qts, KV_DATA, v, sizeof(v));
    kvssd_sqe_set_key(&s, ix_keys[i], IX_KEY_BYTES);
    s.cdw[10] = sizeof(v);
    s.cdw[11] = kvssd_cdw11(IX_KEY_BYTES, 0);
    kv_prp_for(d, &s, KV_DATA, sizeof(v));
    return kv_cmd(d, 1, &s).status;
}

/* 0 if key @i reads back with its exact value, else the status (0xffff: wrong bytes). */
static uint16_t ix_check(KvDev *d, int i)
{
    uint8_t want[IX_VALUE_BYTES], got[IX_VALUE_BYTES];
    ix_value(want, i);
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_RETRIEVE, 1);
    qtest_memset(d->qts, KV_DATA2, 0, sizeof(got));
    kvssd_sqe_set_key(&s, ix_keys[i], IX_KEY_BYTES);
    s.cdw[10] = sizeof(got);
    s.cdw[11] = kvssd_cdw11(IX_KEY_BYTES, 0);
    kv_prp_for(d, &s, KV_DATA2, sizeof(got));
    KvCqe c = kv_cmd(d, 1, &s);
    if (c.status) {
        return c.status;
    }
    qtest_memread(d->qts, KV_DATA2, got, sizeof(got));
    return c.dw0 == IX_VALUE_BYTES && memcmp(want, got, sizeof(got)) == 0 ? 0 : 0xffff;
}

static struct kvssd_stats_log ix_stats(KvDev *d)
{
    struct kvssd_stats_log l;
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_STATS, 0, sizeof(l), 0, &l), ==, 0);
    return l;
}

static void ix_ftl_check_passes(KvDev *d)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
}

/*
 * 230 keys that collide on their top 22 bits under the old unseeded hash:
 * every Store succeeds (they are ordinary keys under the device's secret
 * seed); over the 220 Stores after the first 10, QEMU's resident set grows
 * by less than IX_RSS_BOUND_KIB and the index's host memory by less than
 * IX_INDEX_BOUND_BYTES; every key reads back with its bytes.
 */
static void test_chosen_keys_bounded(void)
{
    KvDev *d = kv_ready(IX_PROPS);
    /* the first Stores open a stripe and the page buffer: measure after them */
    for (int i = 0; i < IX_WARMUP_KEYS; i++) {
        g_assert_cmphex(ix_store(d, i), ==, 0);
    }
    struct kvssd_stats_log before = ix_stats(d);
    uint64_t rss0 = kv_qemu_status_kib(d, "VmRSS");

    for (int i = IX_WARMUP_KEYS; i < IX_KEYS; i++) {
        g_assert_cmphex(ix_store(d, i), ==, 0);
    }
    uint64_t rss1 = kv_qemu_status_kib(d, "VmRSS");
    struct kvssd_stats_log after = ix_stats(d);
    g_test_message("VmRSS %" PRIu64 " -> %" PRIu64 " KiB; index_host_bytes %" PRIu64 " -> %" PRIu64,
                   rss0, rss1, before.index_host_bytes, after.index_host_bytes);
    g_assert_cmpuint(after.live_keys, ==, IX_KEYS);
    g_assert_cmpuint(rss1 > rss0 ? rss1 - rss0 : 0, <, IX_RSS_BOUND_KIB);
    g_assert_cmpuint(after.index_host_bytes - before.index_host_bytes, <, IX_INDEX_BOUND_BYTES);

    for (int i = 0; i < IX_KEYS; i++) {
        g_assert_cmphex(ix_check(d, i), ==, 0);
    }
    ix_ftl_check_passes(d);
    kv_stop(d);
}

/*
 * The seed is part of the image: keys stored before QEMU exits are found
 * after a restart on the same image. The restart mounts from the
 * checkpoint (no NAND page read at mount), whose index pages were hashed
 * with the seed it restores: under a new seed the keys would not be found.
 */
static void test_seed_survives_restart(void)
{
    g_autofree char *dir = g_dir_make_tmp("kvssd-index-XXXXXX", NULL);
    g_autofree char *img = g_build_filename(dir, "nand.img", NULL);
    g_autofree char *props = g_strdup_printf(IX_PROPS ",image=%s", img);

    KvDev *d = kv_ready(props);
    for (int i = 0; i < IX_KEYS; i++) {
        g_assert_cmphex(ix_store(d, i), ==, 0);
    }
    kv_stop(d);

    d = kv_ready(props);
    g_assert_cmpuint(ix_stats(d).nand_pages_read, ==, 0);
    for (int i = 0; i < IX_KEYS; i++) {
        g_assert_cmphex(ix_check(d, i), ==, 0);
    }
    g_assert_cmpuint(ix_stats(d).live_keys, ==, IX_KEYS);
    ix_ftl_check_passes(d);
    kv_stop(d);
    unlink(img);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    ix_make_keys();
    qtest_add_func("/kvssd/index/chosen-keys-bounded", test_chosen_keys_bounded);
    qtest_add_func("/kvssd/index/seed-survives-restart", test_seed_survives_restart);
    return g_test_run();
}
