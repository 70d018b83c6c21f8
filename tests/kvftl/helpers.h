/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared fixtures for the kvftl unit suites: a small device whose numbers
 * are easy to compute by hand, and one-line wrappers around the API.
 *
 * The small device: 1 channel x 1 die, 4 KiB pages, 576 pages per block
 * (one 2.25 MiB erase stripe per block), 10 blocks; tR 50 us, tPROG 500 us,
 * tBERS 3 ms, 800 B/us channel, 2000 B/us controller copy; 1 KiB placement,
 * packing "all", 8 buffer entries, GC watermarks 3 (high) and 2 (low).
 */
#ifndef TESTS_KVFTL_HELPERS_H
#define TESTS_KVFTL_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <kvftl/kvftl.h>

#include "ftl.h"
#include "kvftl_small.h"
#include "tap_cunit.h"

/*
 * image_path_new() - a fresh image file name /tmp/kvftl-TAG-PID-XXXXXX in
 * @path (@len bytes): the name mkstemp() made unique, the file removed
 * again, so that kvftl_open() creates the device there.
 */
static inline void image_path_new(char *path, size_t len, const char *tag)
{
    snprintf(path, len, "/tmp/kvftl-%s-%d-XXXXXX", tag, (int)getpid());
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    unlink(path);
}

/*
 * test_index_design() - the index design KVFTL_TEST_INDEX names (hash if
 * unset): meson runs the suites that are not about one design's internals
 * once per design (tests/kvftl/meson.build). A test about the hash design's
 * internals sets .index = KVFTL_INDEX_HASH itself.
 */
static inline enum kvftl_index test_index_design(void)
{
    const char *design = getenv("KVFTL_TEST_INDEX");
    for (uint32_t d = 0; design && d <= KVFTL_INDEX_LSM; d++) {
        if (strcmp(design, kvftl_index_names[d]) == 0) {
            return (enum kvftl_index)d;
        }
    }
    return KVFTL_INDEX_HASH;
}

static inline struct kvftl_config small_config(void)
{
    struct kvftl_config c;
    kvftl_config_small(&c, (struct kvftl_small_geometry){.channels = 1,
                                                         .dies_per_channel = 1,
                                                         .blocks_per_die = 10,
                                                         .pages_per_block = 576,
                                                         .page_size_bytes = 4096});
    c.buffer_entries = 8;
    c.dlt_entries = 0;
    c.index_dram_bytes = 1 << 20;
    c.gc_high_watermark_blocks = 3;
    c.gc_low_watermark_blocks = 2;
    c.index = test_index_design();
    /* pm983's directory pages of 2^n entries, so that a few keys make levels (pm983_levels.h) */
    const char *fanout = getenv("KVFTL_TEST_PM983_FANOUT_LOG");
    if (fanout) {
        pm983_test_fanout_log = (uint32_t)atoi(fanout);
    }
    return c;
}

/* 4 KiB pages of [p, p + bytes) (p page-aligned) the kernel has mapped in (mincore()). */
static inline uint32_t resident_pages(const uint8_t *p, size_t bytes)
{
    size_t n = bytes / 4096;
    unsigned char *vec = g_malloc(n);
    CU_ASSERT_FATAL(mincore((void *)p, bytes, vec) == 0);
    uint32_t r = 0;
    for (size_t i = 0; i < n; i++) {
        r += vec[i] & 1;
    }
    g_free(vec);
    return r;
}

static inline struct kvftl *open_or_die(const struct kvftl_config *c)
{
    char err[256];
    struct kvftl *f = kvftl_open(c, err, sizeof(err));
    if (!f) {
        fprintf(stderr, "kvftl_open: %s\n", err);
        abort();
    }
    return f;
}

/* Store with every value byte = @fill; @dma: the value came by page-unit DMA. */
static inline uint16_t put(struct kvftl *f, const char *key, uint32_t vlen, uint8_t fill, bool dma)
{
    static uint8_t buf[KVFTL_VALUE_MAX_BYTES];
    memset(buf, fill, vlen);
    struct kvftl_store_req r = {
        .key = key,
        .key_bytes = (uint32_t)strlen(key),
        .value = buf,
        .value_bytes = vlen,
        .inline_bytes = dma ? 0 : vlen,
    };
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    return cpl.status;
}

/* Retrieve and check every byte is @fill; returns the status, or 0xffff on a data mismatch. */
static inline uint16_t get_check(struct kvftl *f, const char *key, uint32_t vlen, uint8_t fill)
{
    static uint8_t buf[KVFTL_VALUE_MAX_BYTES];
    struct kvftl_cpl cpl;
    kvftl_retrieve(f, key, (uint32_t)strlen(key), buf, 0, sizeof(buf), 0, &cpl);
    if (cpl.status) {
        return cpl.status;
    }
    if (cpl.value_bytes != vlen || cpl.xfer_bytes != vlen) {
        return 0xffff;
    }
    for (uint32_t i = 0; i < vlen; i++) {
        if (buf[i] != fill) {
            return 0xffff;
        }
    }
    return 0;
}

/* Key number @i: "key-" and 12 digits, 16 bytes (17 with the NUL). */
static inline void key_of(char *key, int i)
{
    snprintf(key, 17, "key-%012d", i);
}

/* Store keys [from, to) with a 50-byte value of byte @fill_byte: one 1 KiB blob each. */
static inline void fill(struct kvftl *f, int from, int to, uint8_t fill_byte)
{
    char key[17];
    for (int i = from; i < to; i++) {
        key_of(key, i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 50, fill_byte, false), 0);
    }
}

/* How many of keys [from, to) do not read back as fill()'s 50 bytes of @fill_byte. */
static inline int count_bad(struct kvftl *f, int from, int to, uint8_t fill_byte)
{
    char key[17];
    int bad = 0;
    for (int i = from; i < to; i++) {
        key_of(key, i);
        bad += get_check(f, key, 50, fill_byte) != 0;
    }
    return bad;
}

static inline uint16_t del(struct kvftl *f, const char *key)
{
    struct kvftl_cpl cpl;
    kvftl_delete(f, key, (uint32_t)strlen(key), 0, &cpl);
    return cpl.status;
}

static inline uint16_t exist(struct kvftl *f, const char *key)
{
    struct kvftl_cpl cpl;
    kvftl_exist(f, key, (uint32_t)strlen(key), 0, &cpl);
    return cpl.status;
}

static inline void flush(struct kvftl *f)
{
    struct kvftl_cpl cpl;
    kvftl_flush(f, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
}

static inline struct kvftl_stats stats(struct kvftl *f)
{
    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    return st;
}

/* Device address of a live key (UINT64_MAX if absent). */
static inline uint64_t addr_of(struct kvftl *f, const char *key)
{
    uint64_t loc, now = 0;
    struct kv_index_pos pos;
    uint32_t kb = (uint32_t)strlen(key);
    uint64_t h = kv_index_hash(&f->index, key, kb);
    if (!kv_index_find(&f->index, h, key, kb, &loc, &pos, &now) || loc_tombstone(loc)) {
        return UINT64_MAX;
    }
    return loc_addr(loc);
}

/*
 * One pair of a placement test: its key, value length and value byte,
 * whether the value came by page-unit DMA, and the device address its
 * blob must land at.
 */
struct placed_pair {
    const char *key;
    uint32_t value_bytes;
    uint8_t fill;
    bool dma;
    uint64_t addr;
};

/* Each of @n pairs sits at its address. */
static inline void assert_placed_at(struct kvftl *f, const struct placed_pair *p, int n)
{
    for (int i = 0; i < n; i++) {
        uint64_t at = addr_of(f, p[i].key);
        if (at != p[i].addr) {
            printf("# %s at %llu, want %llu\n", p[i].key, (unsigned long long)at,
                   (unsigned long long)p[i].addr);
        }
        CU_ASSERT_EQUAL(at, p[i].addr);
    }
}

/* Store @n pairs in order: each succeeds, and then each sits at its address. */
static inline void put_placed(struct kvftl *f, const struct placed_pair *p, int n)
{
    for (int i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(put(f, p[i].key, p[i].value_bytes, p[i].fill, p[i].dma), 0);
    }
    assert_placed_at(f, p, n);
}

/* Each of @n pairs reads back its whole value. */
static inline void assert_placed_read_back(struct kvftl *f, const struct placed_pair *p, int n)
{
    for (int i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(get_check(f, p[i].key, p[i].value_bytes, p[i].fill), 0);
    }
}

static inline void assert_consistent(struct kvftl *f)
{
    char err[512];
    int rc = kvftl_check(f, err, sizeof(err));
    if (rc) {
        printf("# kvftl_check: %s\n", err);
    }
    CU_ASSERT_EQUAL(rc, 0);
}

/*
 * expect_mount_rescan() - @c's image mounts by scanning the log, with a
 * reason holding @why; keys 0..@keys-1 of fill(.., 7) are all back and the
 * check passes. The image is removed after.
 */
static inline void expect_mount_rescan(const struct kvftl_config *c, const char *why, int keys)
{
    struct kvftl *f = open_or_die(c);
    CU_ASSERT_TRUE(f->mount.scanned);
    bool found = strstr(f->mount.why, why) != NULL;
    if (!found) {
        printf("# expected a reason with \"%s\", got \"%s\"\n", why, f->mount.why);
    }
    CU_ASSERT_TRUE(found);
    CU_ASSERT_EQUAL(stats(f).live_keys, (uint64_t)keys);
    CU_ASSERT_EQUAL(count_bad(f, 0, keys, 7), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(c->image_path);
}

/*
 * Injected hashes: with kvftl_set_hash_for_test(f, key_is_hash) an 8-byte
 * key *is* its hash (big endian), so a test decides which index page and
 * which slot every key goes to.
 */
static inline uint64_t key_is_hash(const void *key, size_t len)
{
    const uint8_t *k = key;
    uint64_t h = 0;
    for (size_t i = 0; i < 8 && i < len; i++) {
        h = h << 8 | k[i];
    }
    return h;
}

/* @k = the 8-byte key whose injected hash is @h. */
static inline void be64(uint8_t k[8], uint64_t h)
{
    for (int i = 7; i >= 0; i--) {
        k[i] = (uint8_t)h;
        h >>= 8;
    }
}

/* Store the key of hash @h with @vlen bytes (at most 4096) of value, each the low byte of @h,
 * inline. */
static inline uint16_t put_h(struct kvftl *f, uint64_t h, uint32_t vlen)
{
    static uint8_t v[4096];
    uint8_t k[8];
    be64(k, h);
    memset(v, (uint8_t)h, vlen);
    struct kvftl_store_req r = {
        .key = k, .key_bytes = 8, .value = v, .value_bytes = vlen, .inline_bytes = vlen};
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    return cpl.status;
}

/* Retrieve put_h()'s pair; returns the status, or 0xffff when its size or end bytes differ. */
static inline uint16_t get_h(struct kvftl *f, uint64_t h, uint32_t vlen)
{
    static uint8_t v[4096];
    uint8_t k[8];
    be64(k, h);
    struct kvftl_cpl cpl;
    kvftl_retrieve(f, k, 8, v, 0, sizeof(v), 0, &cpl);
    if (cpl.status) {
        return cpl.status;
    }
    return cpl.xfer_bytes == vlen && v[0] == (uint8_t)h && v[vlen - 1] == (uint8_t)h ? 0 : 0xffff;
}

/*
 * The directory-bound attack with injected hashes (test_index.c,
 * test_pm983.c): chosen key @i (from 1) has a hash whose top 12 bits are
 * 0xabc, its low bits spread over the slots.
 */
static inline uint64_t chosen_hash(uint64_t i)
{
    return 0xabcull << 52 | i * 2654435761u;
}

/* How many of chosen keys 1..@n, stored by put_h() with 8-byte values, do not read back. */
static inline int count_bad_chosen(struct kvftl *f, uint64_t n)
{
    int bad = 0;
    for (uint64_t i = 1; i <= n; i++) {
        bad += get_h(f, chosen_hash(i), 8) != 0;
    }
    return bad;
}

/* top two hash bits select the quarter, the low bits spread the slots */
static inline uint64_t hq(unsigned quarter, uint64_t i)
{
    return (uint64_t)quarter << 62 | (i + 1) * 2654435761u;
}

/*
 * Keys a guest would choose to blow up the index, found by brute force:
 * @n 16-byte keys ("col-" + 12 digits; 17 bytes with the NUL) whose
 * XXH3_64bits_withSeed(@seed) share their top @bits bits with the first key
 * tried. About n x 2^bits hashes.
 */
static inline void colliding_keys(uint64_t seed, unsigned bits, uint32_t n, char (*keys)[17])
{
    uint64_t want = 0;
    uint32_t found = 0;
    for (uint64_t i = 0; found < n; i++) {
        char k[17];
        snprintf(k, sizeof(k), "col-%012llu", (unsigned long long)i);
        uint64_t top = XXH3_64bits_withSeed(k, 16, seed) >> (64 - bits);
        if (i == 0) {
            want = top;
        }
        if (top == want) {
            memcpy(keys[found++], k, sizeof(k));
        }
    }
}

/* The seed the directory-bound attack tests give a device (index_set_seed_for_test). */
#define KNOWN_SEED 0x5eed5eed5eed5eedull

/*
 * The directory-bound attack on @f, its seed set to KNOWN_SEED: @keys gets
 * 218 keys sharing their top 10 hash bits (colliding_keys); keys 0..216
 * are stored, key i with @value_bytes bytes of i, and key 217 (bytes of
 * @refused_fill) is refused with CAPACITY_EXCEEDED.
 */
static inline void store_colliding_keys(struct kvftl *f, char (*keys)[17], uint32_t value_bytes,
                                        uint8_t refused_fill)
{
    colliding_keys(KNOWN_SEED, 10, 218, keys);
    index_set_seed_for_test(&f->index.hash.idx, KNOWN_SEED);
    for (int i = 0; i < 217; i++) {
        CU_ASSERT_EQUAL_FATAL(put(f, keys[i], value_bytes, (uint8_t)i, false), 0);
    }
    CU_ASSERT_EQUAL(put(f, keys[217], value_bytes, refused_fill, false), KVFTL_CAPACITY_EXCEEDED);
}

/* How many of the 217 keys store_colliding_keys() stored do not read back. */
static inline int count_bad_colliding(struct kvftl *f, char (*keys)[17], uint32_t value_bytes)
{
    int bad = 0;
    for (int i = 0; i < 217; i++) {
        bad += get_check(f, keys[i], value_bytes, (uint8_t)i) != 0;
    }
    return bad;
}

#endif
