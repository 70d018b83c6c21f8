/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Long commands in main-loop slices (docs/device.md, "Work per main-loop
 * slice"): List, Iter Read and the FTL check (C4h) walk the index a few
 * pages per bottom-half run, parked on their SQ in between. These tests
 * run them over a device whose index needs many slices (4 KiB index pages,
 * 6000 keys: about 40 pages, KVSSD_SLICE_INDEX_PAGES = 8 per slice) and
 * check exact results, and a controller reset while one is parked.
 */
#include "kvssd-common.h"

#define SLICES_PROPS "index-page-bytes=4096"
#define SLICES_KEYS 6000
#define SLICES_BUF (128u << 10)     /* List / Iter Read buffer: 6000 entries of 12 bytes fit */

static void slices_key(int i, char *key, size_t len)
{
    snprintf(key, len, "k-%05d", i);
}

/* A device holding keys k-00000 .. k-05999, each with a 24-byte value. */
static KvDev *slices_device(void)
{
    KvDev *d = kv_ready(SLICES_PROPS);
    char key[16], val[24];

    for (int i = 0; i < SLICES_KEYS; i++) {
        slices_key(i, key, sizeof(key));
        memset(val, 'a' + i % 26, sizeof(val));
        g_assert_cmphex(kv_store(d, key, val, sizeof(val), 0), ==, 0);
    }
    return d;
}

/* A List (06h) SQE into KV_DATA2, @buf bytes, from the start key @start (NULL: the first). */
static struct kvssd_sqe list_sqe(KvDev *d, const char *start, uint32_t buf)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_LIST, 1);
    uint32_t klen = start ? strlen(start) : 0;

    if (klen) {
        kvssd_sqe_set_key(&s, start, klen);
    }
    s.cdw[10] = buf;
    s.cdw[11] = klen;
    qtest_memset(d->qts, KV_DATA2, 0, buf);
    kv_prp_for(d, &s, KV_DATA2, buf);
    return s;
}

/* Check that the @n keys at KV_DATA2 + @off (entries of 12 bytes) are k-@first.. in order. */
static void check_list_entries(KvDev *d, uint32_t off, int first, int n)
{
    g_autofree uint8_t *b = g_malloc((size_t)n * 12);
    char key[16];

    qtest_memread(d->qts, KV_DATA2 + off, b, (size_t)n * 12);
    for (int i = 0; i < n; i++) {
        slices_key(first + i, key, sizeof(key));
        g_assert_cmpuint(le16p(b + i * 12), ==, 7);
        g_assert(memcmp(b + i * 12 + 2, key, 7) == 0);
    }
}

/*
 * List from the first key with a 128 KiB buffer returns all 6000 keys in
 * order; List after "k-02999" with room for 100 entries returns exactly
 * k-03000 .. k-03099. Both walk the whole index in several slices.
 */
static void test_list_across_slices(void)
{
    KvDev *d = slices_device();
    uint8_t hdr[4];

    struct kvssd_sqe s = list_sqe(d, NULL, SLICES_BUF);
    KvCqe c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, SLICES_KEYS);
    qtest_memread(d->qts, KV_DATA2, hdr, 4);
    g_assert_cmpuint(le32p(hdr), ==, SLICES_KEYS);
    check_list_entries(d, 4, 0, SLICES_KEYS);

    s = list_sqe(d, "k-02999", 4 + 100 * 12);
    c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 100);
    qtest_memread(d->qts, KV_DATA2, hdr, 4);
    g_assert_cmpuint(le32p(hdr), ==, 100);
    check_list_entries(d, 4, 3000, 100);
    kv_stop(d);
}

/* Iter Open (90h) with @prefix/@mask, keys only; returns the handle. */
static uint32_t iter_open(KvDev *d, uint32_t prefix, uint32_t mask)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_ITER_OPEN, 1);
    s.cdw[10] = prefix;
    s.cdw[11] = mask;
    KvCqe c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    return c.dw0;
}

static KvCqe iter_read(KvDev *d, uint32_t handle, uint32_t buf)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_ITER_READ, 1);
    s.cdw[10] = buf;
    s.cdw[11] = handle;
    qtest_memset(d->qts, KV_DATA2, 0, buf);
    kv_prp_for(d, &s, KV_DATA2, buf);
    return kv_cmd(d, 1, &s);
}

static uint16_t iter_close(KvDev *d, uint32_t handle)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_ITER_CLOSE, 1);
    s.cdw[10] = handle;
    return kv_cmd(d, 1, &s).status;
}

/*
 * Iter Read with an empty prefix (mask 0) and a 128 KiB buffer returns all
 * 6000 keys, each once (header: 6000 entries, 72000 bytes); the next read
 * is Iterator End. A prefix that matches nothing ("zzzz") walks the whole
 * index in slices and ends with Iterator End (01C9h) and no entries.
 */
static void test_iter_read_across_slices(void)
{
    KvDev *d = slices_device();
    g_autofree uint8_t *b = g_malloc(SLICES_BUF);
    g_autofree uint8_t *seen = g_malloc0(SLICES_KEYS);

    uint32_t h = iter_open(d, 0, 0);
    KvCqe c = iter_read(d, h, SLICES_BUF);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, SLICES_KEYS);
    qtest_memread(d->qts, KV_DATA2, b, SLICES_BUF);
    g_assert_cmpuint(le32p(b), ==, SLICES_KEYS);
    g_assert_cmpuint(le32p(b + 4), ==, SLICES_KEYS * 12);
    for (int i = 0; i < SLICES_KEYS; i++) {
        const uint8_t *e = b + 8 + i * 12;
        g_assert_cmpuint(le16p(e), ==, 7);
        g_assert(e[0 + 2] == 'k' && e[1 + 2] == '-');
        int n = atoi((const char *)e + 4);
        g_assert_cmpint(n, >=, 0);
        g_assert_cmpint(n, <, SLICES_KEYS);
        g_assert_cmpuint(seen[n], ==, 0);
        seen[n] = 1;
    }
    g_assert_cmphex(iter_read(d, h, SLICES_BUF).status, ==, KVSSD_SC_ITERATOR_END);
    g_assert_cmphex(iter_close(d, h), ==, 0);

    h = iter_open(d, 0x7a7a7a7a, 0xffffffff);
    c = iter_read(d, h, SLICES_BUF);
    g_assert_cmphex(c.status, ==, KVSSD_SC_ITERATOR_END);
    g_assert_cmpuint(c.dw0, ==, 0);
    g_assert_cmphex(iter_close(d, h), ==, 0);
    kv_stop(d);
}

/*
 * The FTL check (C4h) runs in slices of 256 KiB of index pages and blobs:
 * over 6000 keys (40-odd 4 KiB index pages and their blobs) it passes and
 * reports in DW0 the slices it took, more than one.
 */
static void test_ftl_check_across_slices(void)
{
    KvDev *d = slices_device();
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    KvCqe c = kv_cmd(d, 0, &s);

    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, >, 1);
    kv_stop(d);
}

/*
 * A controller reset while a List is parked frees it: 17 times, ring a List
 * over the whole index and reset at once. If a parked List kept its
 * firmware iterator, the 16 Iter Opens after that would fail (01C7h); if it
 * kept the device's List slot, the next List would never complete. Under
 * ASan a use after free of the parked state aborts QEMU.
 */
static void test_reset_while_parked(void)
{
    KvDev *d = slices_device();
    uint32_t h[16];

    for (int round = 0; round < 17; round++) {
        struct kvssd_sqe s = list_sqe(d, NULL, SLICES_BUF);
        kv_put(d, 1, &s, false);
        kv_ring(d, 1);
        kv_disable(d);
        kv_enable(d);
        kv_io_queue(d, 64);
    }
    for (int i = 0; i < 16; i++) {
        h[i] = iter_open(d, 0, 0);
    }
    for (int i = 0; i < 16; i++) {
        g_assert_cmphex(iter_close(d, h[i]), ==, 0);
    }
    struct kvssd_sqe s = list_sqe(d, NULL, SLICES_BUF);
    KvCqe c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, SLICES_KEYS);
    check_list_entries(d, 4, 0, SLICES_KEYS);
    s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
}

/*
 * Deleting the I/O SQ while its List is parked completes the List as
 * aborted by SQ deletion (0008h) and frees it: the SQ is created again and
 * a new List returns every key.
 */
static void test_delete_sq_while_parked(void)
{
    KvDev *d = slices_device();
    struct kvssd_sqe s = list_sqe(d, NULL, SLICES_BUF);
    uint16_t cid = kv_put(d, 1, &s, false);

    kv_ring(d, 1);
    g_assert_cmphex(kv_delete_sq(d, 1), ==, 0);
    /* the List completed before the deletion, or was aborted by it: one CQE either way */
    KvCqe c = kv_wait(d, 1);
    g_assert_cmpuint(c.cid, ==, cid);
    g_assert(c.status == 0 || c.status == 0x0008);
    g_assert_cmphex(kv_create_sq(d, 1, 64, 1), ==, 0);
    s = list_sqe(d, NULL, SLICES_BUF);
    c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, SLICES_KEYS);
    kv_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/slices/list", test_list_across_slices);
    qtest_add_func("/kvssd/slices/iter-read", test_iter_read_across_slices);
    qtest_add_func("/kvssd/slices/ftl-check", test_ftl_check_across_slices);
    qtest_add_func("/kvssd/slices/reset-while-parked", test_reset_while_parked);
    qtest_add_func("/kvssd/slices/delete-sq-while-parked", test_delete_sq_while_parked);
    return g_test_run();
}
