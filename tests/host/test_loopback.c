/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loopback: the commands libkvssd encodes (host/lib/cmd.c, transfer.c) run
 * through the device's QEMU-free KV command set (hw/kvssd/kv.c, inline.c)
 * over an in-memory kvftl. This proves host and device agree on the wire
 * format - every dword, inline layout and status - without QEMU or Linux.
 * Only the transport (PRP walking, queues) is left to the guest suite.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <kvssd/libkvssd.h>

#include "admin.h"
#include "cmdset.h"
#include "kvftl_small.h"
#include "tap_cunit.h"

#define NSID 1u
#define MiB (1024u * 1024u)

static struct kvftl *ftl;
static struct kvssd_ns *ns;
static struct kvssd_xfer_counters xfer;
static uint64_t now = 1000000;

struct host_buf {
    uint8_t *p;
    uint32_t len;
};

static uint16_t from_host(void *opaque, uint64_t off, void *buf, uint32_t len)
{
    struct host_buf *h = opaque;
    if (off > h->len || len > h->len - off) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(buf, h->p + off, len);
    return KVSSD_SC_SUCCESS;
}

static uint16_t to_host(void *opaque, uint64_t off, const void *buf, uint32_t len)
{
    struct host_buf *h = opaque;
    if (off > h->len || len > h->len - off) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(h->p + off, buf, len);
    return KVSSD_SC_SUCCESS;
}

/* Execute one encoded command the way the transport would; fill a kvssd_result. */
static int exec(struct kvssd_cmd *c, struct kvssd_result *r)
{
    struct host_buf h = {c->data, c->data_len};
    struct kvssd_req req = {.sqe = &c->sqe, .now_ns = now};
    now += 1000;
    if (c->data_len) {
        req.dptr = (struct kvssd_dptr){&h, from_host, to_host};
    }
    kvssd_kv_execute(ns, &req);
    r->commands++;
    r->status = req.status;
    r->dw0 = req.dw0;
    r->dw1 = req.dw1;
    return kvssd_status_to_err(req.status);
}

static int setup(void)
{
    struct kvftl_config c;
    char err[256];
    kvftl_config_small(&c, (struct kvftl_small_geometry){.channels = 2,
                                                         .dies_per_channel = 2,
                                                         .blocks_per_die = 32,
                                                         .pages_per_block = 64,
                                                         .page_size_bytes = 16384});
    ftl = kvftl_open(&c, err, sizeof(err));
    if (!ftl) {
        return 1;
    }
    ns = kvssd_ns_new(ftl, NULL, &xfer, err, sizeof(err));
    return ns ? 0 : 1;
}

static int teardown(void)
{
    kvssd_ns_free(ns);
    kvftl_close(ftl);
    return 0;
}

/* Run a whole Store plan; returns the mapped status of the first failing command. */
static int store(const void *key, uint32_t klen, const void *v, uint32_t vlen, uint32_t opts,
                 enum kvssd_xfer_mode method, struct kvssd_result *r)
{
    struct kvssd_store_plan p;
    struct kvssd_cmd c;
    static uint32_t tag = 100;
    memset(r, 0, sizeof(*r));
    int rc = kvssd_store_plan_init(&p, NSID, key, klen, tag, tag + 1, v, vlen, opts, method);
    tag = (tag + 2) % 4000;
    while (!rc && kvssd_store_plan_next(&p, &c)) {
        rc = exec(&c, r);
    }
    return rc;
}

static int retrieve(const void *key, uint32_t klen, void *buf, uint32_t len, struct kvssd_result *r)
{
    struct kvssd_cmd c;
    int rc = 0;
    memset(r, 0, sizeof(*r));
    if (klen > 16) {
        kvssd_cmd_key_stage(&c, NSID, key, klen, 3000);
        rc = exec(&c, r);
    }
    kvssd_cmd_retrieve(&c, NSID, key, klen, 3000, buf, len);
    return rc ? rc : exec(&c, r);
}

static uint8_t *pattern(uint32_t len, uint32_t seed)
{
    uint8_t *v = malloc(len ? len : 1);
    for (uint32_t i = 0; i < len; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (uint8_t)(seed >> 16);
    }
    return v;
}

/* A 100-byte inline Store (head + 3 transfers) completes with DW1 = STORED and reads back equal. */
static void test_inline_100(void)
{
    struct kvssd_result r;
    uint8_t *v = pattern(100, 1), buf[128];
    CU_ASSERT_EQUAL(store("in01", 4, v, 100, 0, KVSSD_XFER_INLINE, &r), 0);
    CU_ASSERT_EQUAL(r.commands, 4);
    CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
    CU_ASSERT_EQUAL(retrieve("in01", 4, buf, sizeof(buf), &r), 0);
    CU_ASSERT_EQUAL(r.dw0, 100);
    CU_ASSERT_EQUAL(memcmp(buf, v, 100), 0);
    free(v);
}

/* A 2 MiB inline Store: 74899 commands, the last completes the stream; the value reads back equal.
 */
static void test_inline_2mib(void)
{
    struct kvssd_result r;
    uint8_t *v = pattern(2 * MiB, 2), *buf = malloc(2 * MiB);
    CU_ASSERT_EQUAL(store("big1", 4, v, 2 * MiB, 0, KVSSD_XFER_INLINE, &r), 0);
    CU_ASSERT_EQUAL(r.commands, 74899);
    CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
    CU_ASSERT_EQUAL(retrieve("big1", 4, buf, 2 * MiB, &r), 0);
    CU_ASSERT_EQUAL(r.dw0, 2 * MiB);
    CU_ASSERT_EQUAL(memcmp(buf, v, 2 * MiB), 0);
    free(v);
    free(buf);
}

/* Hybrid 4096+30: one page by data pointer, the tail in the head and one transfer. */
static void test_hybrid(void)
{
    struct kvssd_result r;
    uint32_t len = 4096 + 30;
    uint8_t *v = pattern(len, 3), *buf = malloc(8192);
    CU_ASSERT_EQUAL(store("hyb1", 4, v, len, 0, KVSSD_XFER_HYBRID, &r), 0);
    CU_ASSERT_EQUAL(r.commands, 2);
    CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
    CU_ASSERT_EQUAL(retrieve("hyb1", 4, buf, 8192, &r), 0);
    CU_ASSERT_EQUAL(r.dw0, len);
    CU_ASSERT_EQUAL(memcmp(buf, v, len), 0);
    free(v);
    free(buf);
}

/* 255-byte keys: Key Stage + Store (PRP), Key Stage + inline head; both read back via Key Stage +
 * Retrieve. */
static void test_long_keys(void)
{
    struct kvssd_result r;
    uint8_t k1[255], k2[255], buf[64];
    memset(k1, 'a', sizeof(k1));
    memset(k2, 'a', sizeof(k2));
    k2[254] = 'b';
    CU_ASSERT_EQUAL(store(k1, 255, "prp-value", 9, 0, KVSSD_XFER_PRP, &r), 0);
    CU_ASSERT_EQUAL(r.commands, 2);
    CU_ASSERT_EQUAL(
        store(k2, 255, "inline-value-of-40-bytes-xxxxxxxxxxxxxxx", 40, 0, KVSSD_XFER_INLINE, &r),
        0);
    CU_ASSERT_EQUAL(r.commands, 3); /* stage, head (20 B), 1 transfer (20 B) */
    CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
    CU_ASSERT_EQUAL(retrieve(k1, 255, buf, sizeof(buf), &r), 0);
    CU_ASSERT_EQUAL(r.dw0, 9);
    CU_ASSERT_EQUAL(memcmp(buf, "prp-value", 9), 0);
    CU_ASSERT_EQUAL(retrieve(k2, 255, buf, sizeof(buf), &r), 0);
    CU_ASSERT_EQUAL(r.dw0, 40);
    CU_ASSERT_EQUAL(memcmp(buf, "inline-value", 12), 0);
}

/* Store options through both layouts: only-if-absent on a present key -> KEY_EXISTS; only-if-exists
 * on an absent key -> KEY_NOT_FOUND. */
static void test_store_options(void)
{
    struct kvssd_result r;
    CU_ASSERT_EQUAL(store("opt1", 4, "v1", 2, 0, KVSSD_XFER_PRP, &r), 0);
    CU_ASSERT_EQUAL(store("opt1", 4, "v2", 2, KVSSD_STORE_OPT_ONLY_IF_ABSENT, KVSSD_XFER_PRP, &r),
                    -KVSSD_ERR_KEY_EXISTS);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_KEY_EXISTS);
    CU_ASSERT_EQUAL(
        store("opt1", 4, "v2", 2, KVSSD_STORE_OPT_ONLY_IF_ABSENT, KVSSD_XFER_INLINE, &r),
        -KVSSD_ERR_KEY_EXISTS);
    CU_ASSERT_EQUAL(store("opt2", 4, "v", 1, KVSSD_STORE_OPT_ONLY_IF_EXISTS, KVSSD_XFER_PRP, &r),
                    -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(store("opt2", 4, "v", 1, KVSSD_STORE_OPT_ONLY_IF_EXISTS, KVSSD_XFER_INLINE, &r),
                    -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(
        store("opt1", 4, "v3", 2, KVSSD_STORE_OPT_ONLY_IF_EXISTS, KVSSD_XFER_INLINE, &r), 0);
}

/* Exist / Delete / Retrieve of a deleted key, and a size-only Retrieve. */
static void test_exist_delete_size_only(void)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd c;
    uint8_t *v = pattern(3000, 4);
    CU_ASSERT_EQUAL(store("del1", 4, v, 3000, 0, KVSSD_XFER_PRP, &r), 0);
    kvssd_cmd_exist(&c, NSID, "del1", 4, 0);
    CU_ASSERT_EQUAL(exec(&c, &r), 0);
    CU_ASSERT_EQUAL(retrieve("del1", 4, NULL, 0, &r), 0);
    CU_ASSERT_EQUAL(r.dw0, 3000);
    kvssd_cmd_delete(&c, NSID, "del1", 4, 0);
    CU_ASSERT_EQUAL(exec(&c, &r), 0);
    kvssd_cmd_exist(&c, NSID, "del1", 4, 0);
    CU_ASSERT_EQUAL(exec(&c, &r), -KVSSD_ERR_KEY_NOT_FOUND);
    free(v);
}

/* A partial Retrieve returns the first bytes and DW0 = the full size. */
static void test_partial_retrieve(void)
{
    struct kvssd_result r;
    uint8_t *v = pattern(5000, 5), buf[100];
    CU_ASSERT_EQUAL(store("part", 4, v, 5000, 0, KVSSD_XFER_PRP, &r), 0);
    CU_ASSERT_EQUAL(retrieve("part", 4, buf, 100, &r), 0);
    CU_ASSERT_EQUAL(r.dw0, 5000);
    CU_ASSERT_EQUAL(memcmp(buf, v, 100), 0);
    free(v);
}

/* Adaptive sizes 1..9000 in steps: whatever method is chosen, every value reads back equal. */
static void test_adaptive_roundtrip(void)
{
    struct kvssd_xfer_config cfg;
    struct kvssd_result r;
    kvssd_xfer_config_default(&cfg);
    uint8_t *buf = malloc(16384);
    uint32_t sizes[] = {0, 1, 20, 21, 128, 129, 4095, 4096, 4097, 4160, 4161, 8192 + 7, 9000};
    int methods[3] = {0};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char key[8];
        snprintf(key, sizeof(key), "ad%04zu", i);
        uint8_t *v = pattern(sizes[i], (uint32_t)i + 10);
        enum kvssd_xfer_mode m = kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, sizes[i]);
        methods[m]++;
        CU_ASSERT_EQUAL(store(key, 6, v, sizes[i], 0, m, &r), 0);
        CU_ASSERT_EQUAL(retrieve(key, 6, buf, 16384, &r), 0);
        CU_ASSERT_EQUAL(r.dw0, sizes[i]);
        CU_ASSERT_EQUAL(memcmp(buf, v, sizes[i]), 0);
        free(v);
    }
    CU_ASSERT_EQUAL(methods[KVSSD_XFER_INLINE], 5);
    CU_ASSERT_EQUAL(methods[KVSSD_XFER_HYBRID], 3);
    CU_ASSERT_EQUAL(methods[KVSSD_XFER_PRP], 5);
    free(buf);
}

/* List from a start key returns the keys after it (the start key itself optionally), sorted, as
 * kvssd_list_parse() walks them. */
static void test_list_roundtrip(void)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd c;
    static uint8_t buf[65536];
    CU_ASSERT_EQUAL(store("zz1", 3, "a", 1, 0, KVSSD_XFER_PRP, &r), 0);
    CU_ASSERT_EQUAL(store("zz2", 3, "b", 1, 0, KVSSD_XFER_INLINE, &r), 0);
    CU_ASSERT_EQUAL(store("zz3", 3, "c", 1, 0, KVSSD_XFER_PRP, &r), 0);
    kvssd_cmd_list(&c, NSID, "zz1", 3, 0, buf, sizeof(buf));
    CU_ASSERT_EQUAL(exec(&c, &r), 0);
    /* "zz" keys sort after every other key of this suite; the start key may or may not be included
     */
    uint32_t off = 0, kl;
    const uint8_t *k;
    CU_ASSERT_EQUAL(kvssd_list_parse(buf, sizeof(buf), &off, &k, &kl), 1);
    CU_ASSERT_EQUAL(kl, 3);
    if (memcmp(k, "zz1", 3) == 0) {
        CU_ASSERT_EQUAL(r.dw0, 3);
        CU_ASSERT_EQUAL(kvssd_list_parse(buf, sizeof(buf), &off, &k, &kl), 1);
    } else {
        CU_ASSERT_EQUAL(r.dw0, 2);
    }
    CU_ASSERT_EQUAL(memcmp(k, "zz2", 3), 0);
    CU_ASSERT_EQUAL(kvssd_list_parse(buf, sizeof(buf), &off, &k, &kl), 1);
    CU_ASSERT_EQUAL(memcmp(k, "zz3", 3), 0);
    CU_ASSERT_EQUAL(kvssd_list_parse(buf, sizeof(buf), &off, &k, &kl), 0);
}

/* A prefix iterator over "pfx" keys: Iter Open/Read/Close, entries decoded with values. */
static void test_iterator_roundtrip(void)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd c;
    static uint8_t buf[65536];
    uint32_t w, m;
    CU_ASSERT_EQUAL(store("pfxA", 4, "1", 1, 0, KVSSD_XFER_PRP, &r), 0);
    CU_ASSERT_EQUAL(store("pfxB", 4, "22", 2, 0, KVSSD_XFER_INLINE, &r), 0);
    kvssd_prefix_word("pfx", 3, &w, &m);
    kvssd_cmd_iter_open(&c, NSID, w, m, true);
    CU_ASSERT_EQUAL_FATAL(exec(&c, &r), 0);
    uint32_t handle = r.dw0;
    kvssd_cmd_iter_read(&c, NSID, handle, buf, sizeof(buf));
    CU_ASSERT_EQUAL(exec(&c, &r), 0);
    CU_ASSERT_EQUAL(r.dw0, 2);
    struct kvssd_iter_header hdr;
    memcpy(&hdr, buf, sizeof(hdr));
    CU_ASSERT_EQUAL(hdr.entries, 2);
    const uint8_t *k, *v;
    uint32_t kl, vl, off = sizeof(hdr), total = 0;
    for (int i = 0; i < 2; i++) {
        uint32_t n = kvssd_iter_parse_entry(buf + off, sizeof(hdr) + hdr.bytes - off, true, &k, &kl,
                                            &v, &vl);
        CU_ASSERT_TRUE_FATAL(n > 0);
        CU_ASSERT_EQUAL(kl, 4);
        CU_ASSERT_EQUAL(memcmp(k, "pfx", 3), 0);
        total += vl;
        off += n;
    }
    CU_ASSERT_EQUAL(total, 3);
    kvssd_cmd_iter_read(&c, NSID, handle, buf, sizeof(buf));
    CU_ASSERT_EQUAL(exec(&c, &r), -KVSSD_ERR_ITERATOR_END);
    kvssd_cmd_iter_close(&c, NSID, handle);
    CU_ASSERT_EQUAL(exec(&c, &r), 0);
}

/* The full layout encoders (89h/8Dh) drive the device's full-layout reassembly too. */
static void test_full_layout(void)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd c;
    uint8_t *v = pattern(200, 6), buf[256];
    uint32_t off = kvssd_cmd_inline_head_full(&c, NSID, "full", 4, 7, 200, 0, v, 200);
    CU_ASSERT_EQUAL(exec(&c, &r), 0);
    for (uint32_t seq = 1; off < 200; seq++) {
        off += kvssd_cmd_inline_xfer_full(&c, 7, seq, v + off, 200 - off);
        CU_ASSERT_EQUAL(exec(&c, &r), 0);
    }
    CU_ASSERT_EQUAL(r.commands, 4); /* 35 + 56 + 56 + 53 */
    CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
    CU_ASSERT_EQUAL(retrieve("full", 4, buf, sizeof(buf), &r), 0);
    CU_ASSERT_EQUAL(memcmp(buf, v, 200), 0);
    free(v);
}

/*
 * Whole Store plans of the pci transport (KVSSD_WIRE_FULL) through the
 * device: 4-byte key + 32 B is one 89h command counted as one inline
 * command; 4 KiB + 100 B inline is 76 commands (head 35 + 75 transfers of
 * 56); a 2 MiB inline value is 37450 commands. Hybrid uses the stock head
 * with the full-tail bit and 8Dh transfers: with a 6-byte key the head
 * carries 18 tail bytes, so 4 KiB + 1 is 1 command, 4 KiB + 100 is 3
 * (18 + 56 + 26), 4 KiB + 2 KiB is 38, 4 KiB + 4095 is 74; a 20-byte
 * (staged) key is Key Stage + head (20) + 2 transfers for 4 KiB + 100.
 * Every value reads back byte for byte.
 */
static void test_full_layout_plans(void)
{
    static const struct {
        const char *key;
        uint32_t len;
        enum kvssd_xfer_mode method;
        uint32_t commands;
        uint32_t inline_commands;
    } t[] = {
        {"fp32", 32, KVSSD_XFER_INLINE, 1, 1},
        {"fp35", 35, KVSSD_XFER_INLINE, 1, 1},
        {"fp36", 36, KVSSD_XFER_INLINE, 2, 2},
        {"fp4k1", 4196, KVSSD_XFER_INLINE, 76, 76},
        {"fph4k1", 4196, KVSSD_XFER_HYBRID, 3, 3},
        {"fph4k2", 4097, KVSSD_XFER_HYBRID, 1, 1},
        {"fph4k3", 4096 + 2048, KVSSD_XFER_HYBRID, 38, 38},
        {"fph4k4", 4096 + 4095, KVSSD_XFER_HYBRID, 74, 74},
        {"fph-staged-key-20-b", 4196, KVSSD_XFER_HYBRID, 4, 3},
        {"fp2m", 2 * MiB, KVSSD_XFER_INLINE, 37450, 37450},
    };
    uint8_t *buf = malloc(2 * MiB);
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        struct kvssd_store_plan p;
        struct kvssd_cmd c;
        struct kvssd_result r = {0};
        uint8_t *v = pattern(t[i].len, 40 + (uint32_t)i);
        uint64_t inline_before = xfer.inline_commands;
        int rc = kvssd_store_plan_init_layout(&p, KVSSD_WIRE_FULL, NSID, t[i].key,
                                              (uint32_t)strlen(t[i].key), 0, 17, v, t[i].len, 0,
                                              t[i].method);
        CU_ASSERT_EQUAL(rc, 0);
        while (!rc && kvssd_store_plan_next(&p, &c)) {
            rc = exec(&c, &r);
        }
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(r.commands, t[i].commands);
        CU_ASSERT_EQUAL(xfer.inline_commands - inline_before, t[i].inline_commands);
        CU_ASSERT_EQUAL(r.dw1, KVSSD_INLINE_DW1_STORED);
        CU_ASSERT_EQUAL(retrieve(t[i].key, (uint32_t)strlen(t[i].key), buf, 2 * MiB, &r), 0);
        CU_ASSERT_EQUAL(r.dw0, t[i].len);
        CU_ASSERT_EQUAL(memcmp(buf, v, t[i].len), 0);
        free(v);
    }
    free(buf);
}

/*
 * Long-key discovery end to end: Identify CNS 05h/CSI 01h run by the
 * device's admin command set and decoded by the library gives
 * max_key_bytes 255 (from our extension's vendor area) while the KV format
 * says 16; a 255-byte key then round-trips (staged by the library), and a
 * 17-byte Store naming a tag with no staged key is refused by the device
 * with 86h, which the library maps to -KVSSD_ERR_KEY_SIZE.
 */
static void test_identify_long_key_max(void)
{
    static struct kvssd_admin a;
    uint8_t *page = calloc(1, 4096);
    struct host_buf h = {page, 4096};
    struct kvssd_dev_info info;
    struct kvssd_result r;
    struct kvssd_cmd c;
    uint8_t key[255], back[64];

    memset(&a, 0, sizeof(a));
    snprintf(a.serial, sizeof(a.serial), "LOOP01");
    a.ftl = ftl;
    a.ns = ns;
    a.xfer = &xfer;
    a.max_ioqpairs = 1;
    kvssd_admin_init(&a);
    kvssd_cmd_identify(&c, NSID, KVSSD_CNS_CSI_NS, KVSSD_CSI_KV, page);
    struct kvssd_admin_req req = {.sqe = &c.sqe, .now_ns = now, .dptr = {&h, from_host, to_host}};
    kvssd_admin_execute(&a, &req);
    CU_ASSERT_EQUAL(req.status, KVSSD_SC_SUCCESS);
    memset(&info, 0, sizeof(info));
    CU_ASSERT_EQUAL(kvssd_id_ns_kv_decode(page, &info), 0);
    CU_ASSERT_EQUAL(info.max_key_bytes, 255);
    CU_ASSERT_EQUAL(info.format_max_key_bytes, 16);
    CU_ASSERT_EQUAL(info.max_value_bytes, 2 * MiB);
    free(page);

    for (uint32_t i = 0; i < sizeof(key); i++) {
        key[i] = (uint8_t)(i * 3 + 1);
    }
    CU_ASSERT_EQUAL(store(key, info.max_key_bytes, "long-key", 8, 0, KVSSD_XFER_PRP, &r), 0);
    CU_ASSERT_EQUAL(retrieve(key, info.max_key_bytes, back, sizeof(back), &r), 0);
    CU_ASSERT_EQUAL(r.dw0, 8);
    CU_ASSERT_EQUAL(memcmp(back, "long-key", 8), 0);

    kvssd_cmd_store(&c, NSID, key, 17, 3999, "v", 1, 0);
    memset(&r, 0, sizeof(r));
    CU_ASSERT_EQUAL(exec(&c, &r), -KVSSD_ERR_KEY_SIZE);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_INVALID_KEY_SIZE);
}

/* Device refusals reach the host as the mapped error: a 0-byte key, a transfer for an unknown tag.
 */
static void test_device_refusals(void)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd c;
    kvssd_cmd_store(&c, NSID, "", 0, 0, "v", 1, 0);
    CU_ASSERT_EQUAL(exec(&c, &r), -KVSSD_ERR_KEY_SIZE);
    kvssd_cmd_inline_xfer(&c, NSID, 4001, 1, "abc", 3);
    CU_ASSERT_EQUAL(exec(&c, &r), -KVSSD_ERR_INLINE_UNKNOWN_TAG);
    CU_ASSERT_EQUAL(r.status, KVSSD_SC_INLINE_UNKNOWN_TAG);
}

static const struct tap_test tests[] = {
    TAP_TEST(inline_100),         TAP_TEST(inline_2mib),           TAP_TEST(hybrid),
    TAP_TEST(long_keys),          TAP_TEST(store_options),         TAP_TEST(exist_delete_size_only),
    TAP_TEST(partial_retrieve),   TAP_TEST(adaptive_roundtrip),    TAP_TEST(list_roundtrip),
    TAP_TEST(iterator_roundtrip), TAP_TEST(full_layout),           TAP_TEST(full_layout_plans),
    TAP_TEST(device_refusals),    TAP_TEST(identify_long_key_max),
};

int main(void)
{
    const struct tap_suite suite = TAP_SUITE("host_loopback", setup, teardown, tests);

    return tap_main(&suite, 1);
}
