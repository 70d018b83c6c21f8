/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libkvssd transfer methods (host/lib/transfer.c) and status mapping
 * (host/lib/error.c): command counts and the dwords of whole Store plans
 * (2 MiB inline and hybrid values, 255-byte keys), adaptive selection at
 * the thresholds, the threshold config file, and every status code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <kvssd/libkvssd.h>

#include "tap_cunit.h"

#define NSID 1u
#define MiB (1024u * 1024u)

/* Stock-layout payload lanes, to reassemble a plan the way the device does. */
static const int head_dw[] = {2, 3, 12, 13, 14, 15};
static const int xfer_dw[] = {2, 3, 11, 12, 13, 14, 15};

static void gather(const struct kvssd_sqe *s, const int *dws, int n, uint8_t *out)
{
    for (int i = 0; i < n; i++) {
        for (int b = 0; b < 4; b++) {
            out[4 * i + b] = (uint8_t)(s->cdw[dws[i]] >> (8 * b));
        }
    }
}

struct replay {
    uint32_t commands;
    uint32_t key_stages, heads, stores, xfers;
    struct kvssd_cmd last;
    uint8_t *value; /* reassembled */
    uint32_t value_len;
    bool in_order;
};

/* Run a plan to its end, reassembling the value from PRP data + inline payloads. */
static void replay_plan(struct kvssd_store_plan *p, struct replay *r)
{
    struct kvssd_cmd c;
    uint32_t off = 0, expect_seq = 1, key_len = p->key_len;
    memset(r, 0, sizeof(*r));
    r->value = calloc(1, p->value_len + 64);
    r->value_len = p->value_len;
    r->in_order = true;
    while (kvssd_store_plan_next(p, &c)) {
        uint8_t buf[28];
        r->commands++;
        switch (kvssd_sqe_opcode(&c.sqe)) {
        case KVSSD_OPC_KEY_STAGE:
            r->key_stages++;
            break;
        case KVSSD_OPC_STORE:
            r->stores++;
            memcpy(r->value, c.data, c.data_len);
            off = c.data_len;
            break;
        case KVSSD_OPC_INLINE_HEAD: {
            r->heads++;
            uint32_t dma = c.data_len, skip = key_len <= 16 ? key_len : 4;
            if (dma) {
                memcpy(r->value, c.data, dma);
            }
            off = dma;
            gather(&c.sqe, head_dw, 6, buf);
            uint32_t n = 24 - skip;
            if (n > p->value_len - off) {
                n = p->value_len - off;
            }
            memcpy(r->value + off, buf + skip, n);
            off += n;
            break;
        }
        case KVSSD_OPC_INLINE_XFER: {
            r->xfers++;
            if ((c.sqe.cdw[10] >> 12) != expect_seq++) {
                r->in_order = false;
            }
            gather(&c.sqe, xfer_dw, 7, buf);
            uint32_t n = 28;
            if (n > p->value_len - off) {
                n = p->value_len - off;
            }
            memcpy(r->value + off, buf, n);
            off += n;
            break;
        }
        }
        r->last = c;
    }
}

static uint8_t *pattern(uint32_t len)
{
    uint8_t *v = malloc(len ? len : 1);
    uint32_t x = 12345;
    for (uint32_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        v[i] = (uint8_t)(x >> 16);
    }
    return v;
}

/* Inline command counts: a 4-byte key leaves 20 head bytes; each transfer carries 28. */
static void test_inline_command_counts(void)
{
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_INLINE, 4, 0), 1);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_INLINE, 4, 20), 1);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_INLINE, 4, 21), 2);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_INLINE, 4, 48), 2);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_INLINE, 4, 49), 3);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_INLINE, 16, 8), 1);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_INLINE, 16, 9), 2);
    /* a long key adds its Key Stage and leaves 20 head bytes */
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_INLINE, 17, 20), 2);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_PRP, 255, 100), 2);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_PRP, 4, 2 * MiB), 1);
}

/*
 * 2 MiB inline with a 4-byte key: 20 bytes in the head, 2097132 in 74898
 * transfers; the last (seq 74898) carries 16 bytes in CDW2, CDW3, CDW11,
 * CDW12 and leaves CDW13-15 zero. The payloads reassemble to the value.
 */
static void test_plan_2mib_inline(void)
{
    struct kvssd_store_plan p;
    struct replay r;
    uint8_t *v = pattern(2 * MiB);
    CU_ASSERT_EQUAL(
        kvssd_store_plan_init(&p, NSID, "abcd", 4, 0, 0x7ff, v, 2 * MiB, 0, KVSSD_XFER_INLINE), 0);
    CU_ASSERT_EQUAL(p.total, 74899);
    replay_plan(&p, &r);
    CU_ASSERT_EQUAL(r.commands, 74899);
    CU_ASSERT_EQUAL(r.heads, 1);
    CU_ASSERT_EQUAL(r.xfers, 74898);
    CU_ASSERT_TRUE(r.in_order);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[0], 0x85);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[10], 0x7ffu | 74898u << 12);
    const uint8_t *t = v + 2 * MiB - 16;
    CU_ASSERT_EQUAL(r.last.sqe.cdw[2],
                    (uint32_t)t[0] | t[1] << 8 | t[2] << 16 | (uint32_t)t[3] << 24);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[12],
                    (uint32_t)t[12] | t[13] << 8 | t[14] << 16 | (uint32_t)t[15] << 24);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[13], 0);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[14], 0);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[15], 0);
    CU_ASSERT_EQUAL(memcmp(r.value, v, 2 * MiB), 0);
    free(r.value);
    free(v);
}

/* 2 MiB in hybrid mode is whole pages only: the method degenerates to one PRP Store. */
static void test_plan_2mib_hybrid_is_prp(void)
{
    struct kvssd_xfer_config cfg;
    kvssd_xfer_config_default(&cfg);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_HYBRID, &cfg, 2 * MiB), KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL(kvssd_store_commands(KVSSD_XFER_PRP, 4, 2 * MiB), 1);
}

/*
 * 2 MiB - 1 hybrid: the head's data pointer carries 2 MiB - 4096 bytes,
 * the 4095-byte tail goes inline: 20 in the head + 146 transfers, the last
 * (seq 146) with 15 bytes (CDW2, CDW3, CDW11, CDW12[23:0]; CDW12[31:24]
 * and CDW13-15 zero).
 */
static void test_plan_2mib_hybrid_tail(void)
{
    struct kvssd_store_plan p;
    struct replay r;
    uint32_t len = 2 * MiB - 1;
    uint8_t *v = pattern(len);
    struct kvssd_xfer_config cfg;
    kvssd_xfer_config_default(&cfg);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_HYBRID, &cfg, len), KVSSD_XFER_HYBRID);
    CU_ASSERT_EQUAL(kvssd_store_plan_init(&p, NSID, "abcd", 4, 0, 5, v, len, 0, KVSSD_XFER_HYBRID),
                    0);
    CU_ASSERT_EQUAL(p.total, 147);
    /* the head: hybrid bit, 2 MiB - 4 KiB by PRP */
    struct kvssd_cmd head;
    struct kvssd_store_plan p2 = p;
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p2, &head));
    CU_ASSERT_EQUAL(head.sqe.cdw[0], 0x81);
    CU_ASSERT_EQUAL(head.sqe.cdw[11], 5u | KVSSD_INLINE_HYBRID);
    CU_ASSERT_EQUAL(head.sqe.cdw[10], (2 * MiB - 1) | 4u << 24);
    CU_ASSERT_EQUAL(head.data_len, 2 * MiB - 4096);
    replay_plan(&p, &r);
    CU_ASSERT_EQUAL(r.commands, 147);
    CU_ASSERT_EQUAL(r.xfers, 146);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[10], 5u | 146u << 12);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[12] >> 24, 0);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[13], 0);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[14], 0);
    CU_ASSERT_EQUAL(r.last.sqe.cdw[15], 0);
    CU_ASSERT_EQUAL(memcmp(r.value, v, len), 0);
    free(r.value);
    free(v);
}

/*
 * 255-byte key, 100-byte inline value: Key Stage (tag 0x10) first, then the
 * head referencing tag 0x10 in CDW2 with 20 value bytes from CDW3, then 3
 * transfers of stream 0x20 (28 + 28 + 24 bytes).
 */
static void test_plan_long_key_inline(void)
{
    struct kvssd_store_plan p;
    struct kvssd_cmd c;
    uint8_t key[255];
    uint8_t *v = pattern(100);
    memset(key, 'K', sizeof(key));
    CU_ASSERT_EQUAL(
        kvssd_store_plan_init(&p, NSID, key, 255, 0x10, 0x20, v, 100, 0, KVSSD_XFER_INLINE), 0);
    CU_ASSERT_EQUAL(p.total, 5);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x91);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 255);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0x10);
    CU_ASSERT_EQUAL(c.data_len, 255);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x81);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0x10);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 100u | 255u << 24);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0x20);
    CU_ASSERT_EQUAL(c.sqe.cdw[3], (uint32_t)v[0] | v[1] << 8 | v[2] << 16 | (uint32_t)v[3] << 24);
    int n = 0;
    while (kvssd_store_plan_next(&p, &c)) {
        n++;
        CU_ASSERT_EQUAL(c.sqe.cdw[10], 0x20u | (uint32_t)n << 12);
    }
    CU_ASSERT_EQUAL(n, 3);
    free(v);
}

/* 255-byte key by PRP: Key Stage, then Store with CDW2 = tag and CDW11 = 0xff. */
static void test_plan_long_key_prp(void)
{
    struct kvssd_store_plan p;
    struct kvssd_cmd c;
    uint8_t key[255] = {0};
    CU_ASSERT_EQUAL(kvssd_store_plan_init(&p, NSID, key, 255, 0xfff, 0, "v", 1,
                                          KVSSD_STORE_OPT_ONLY_IF_ABSENT, KVSSD_XFER_PRP),
                    0);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x91);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0xfff);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(c.sqe.cdw[0], 0x01);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 0xfff);
    CU_ASSERT_EQUAL(c.sqe.cdw[11], 0x2ff);
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 1);
    CU_ASSERT_FALSE(kvssd_store_plan_next(&p, &c));
}

/* A 16-byte key leaves 8 head bytes; a 1000-byte value takes 1 + 36 commands and reassembles
 * exactly. */
static void test_plan_16_byte_key_reassembles(void)
{
    struct kvssd_store_plan p;
    struct replay r;
    uint8_t *v = pattern(1000);
    CU_ASSERT_EQUAL(kvssd_store_plan_init(&p, NSID, "0123456789abcdef", 16, 0, 1, v, 1000, 0,
                                          KVSSD_XFER_INLINE),
                    0);
    replay_plan(&p, &r);
    CU_ASSERT_EQUAL(r.commands, 37);
    CU_ASSERT_EQUAL(memcmp(r.value, v, 1000), 0);
    free(r.value);
    free(v);
}

/* A 0-byte value inline is one head declaring size 0 and carrying only the key. */
static void test_plan_empty_value_inline(void)
{
    struct kvssd_store_plan p;
    struct kvssd_cmd c;
    CU_ASSERT_EQUAL(kvssd_store_plan_init(&p, NSID, "k", 1, 0, 3, NULL, 0, 0, KVSSD_XFER_INLINE),
                    0);
    CU_ASSERT_TRUE(kvssd_store_plan_next(&p, &c));
    CU_ASSERT_EQUAL(c.sqe.cdw[10], 1u << 24);
    CU_ASSERT_EQUAL(c.sqe.cdw[2], 'k');
    CU_ASSERT_EQUAL(c.sqe.cdw[3], 0);
    CU_ASSERT_FALSE(kvssd_store_plan_next(&p, &c));
}

/* Plan refusals: key 0 / 256 bytes, value 2 MiB + 1, both store options, hybrid below a page. */
static void test_plan_refusals(void)
{
    struct kvssd_store_plan p;
    uint8_t key[256] = {0};
    CU_ASSERT_EQUAL(kvssd_store_plan_init(&p, NSID, key, 0, 0, 0, "v", 1, 0, KVSSD_XFER_PRP),
                    -KVSSD_ERR_KEY_SIZE);
    CU_ASSERT_EQUAL(kvssd_store_plan_init(&p, NSID, key, 256, 0, 0, "v", 1, 0, KVSSD_XFER_PRP),
                    -KVSSD_ERR_KEY_SIZE);
    CU_ASSERT_EQUAL(
        kvssd_store_plan_init(&p, NSID, key, 4, 0, 0, key, 2 * MiB + 1, 0, KVSSD_XFER_PRP),
        -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_EQUAL(kvssd_store_plan_init(&p, NSID, key, 4, 0, 0, "v", 1, 3, KVSSD_XFER_PRP),
                    -KVSSD_ERR_INVALID_ARGUMENT);
    CU_ASSERT_EQUAL(kvssd_store_plan_init(&p, NSID, key, 4, 0, 0, "v", 1, 0, KVSSD_XFER_HYBRID),
                    -KVSSD_ERR_INVALID_ARGUMENT);
}

/* Adaptive with defaults (128, 64, 1, 1): inline <= 128 < PRP; hybrid for 4K multiples + 1..64. */
static void test_adaptive_thresholds(void)
{
    struct kvssd_xfer_config cfg;
    kvssd_xfer_config_default(&cfg);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 0), KVSSD_XFER_INLINE);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 128), KVSSD_XFER_INLINE);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 129), KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 4096), KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 4096 + 1), KVSSD_XFER_HYBRID);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 4096 + 64), KVSSD_XFER_HYBRID);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 4096 + 65), KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 8192 + 64), KVSSD_XFER_HYBRID);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 2 * MiB), KVSSD_XFER_PRP);
}

/* alpha and beta scale the thresholds: alpha 2 moves inline to 256; beta 0 disables hybrid. */
static void test_adaptive_alpha_beta(void)
{
    struct kvssd_xfer_config cfg = {
        .threshold1_bytes = 128, .threshold2_bytes = 64, .alpha = 2.0, .beta = 0.0};
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 256), KVSSD_XFER_INLINE);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 257), KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 4097), KVSSD_XFER_PRP);
    cfg.beta = 1.5;
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 4096 + 96), KVSSD_XFER_HYBRID);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_ADAPTIVE, &cfg, 4096 + 97), KVSSD_XFER_PRP);
}

/* Fixed modes: prp and inline as asked; hybrid is inline below a page and PRP for whole pages. */
static void test_fixed_modes(void)
{
    struct kvssd_xfer_config cfg;
    kvssd_xfer_config_default(&cfg);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_PRP, &cfg, 8), KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_INLINE, &cfg, 2 * MiB), KVSSD_XFER_INLINE);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_HYBRID, &cfg, 4095), KVSSD_XFER_INLINE);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_HYBRID, &cfg, 4096), KVSSD_XFER_PRP);
    CU_ASSERT_EQUAL(kvssd_xfer_choose(KVSSD_XFER_HYBRID, &cfg, 4097), KVSSD_XFER_HYBRID);
    CU_ASSERT_EQUAL(kvssd_xfer_mode_parse("adaptive"), KVSSD_XFER_ADAPTIVE);
    CU_ASSERT_EQUAL(kvssd_xfer_mode_parse("dma"), -1);
    CU_ASSERT_STRING_EQUAL(kvssd_xfer_mode_name(KVSSD_XFER_HYBRID), "hybrid");
}

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/kvssd-test-cfg-XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* The config file: [transfer] keys are read, other groups ignored; save + load round-trips. */
static void test_config_load_save(void)
{
    struct kvssd_xfer_config cfg, back;
    char err[200];
    kvssd_xfer_config_default(&cfg);
    char *path = write_tmp("# calibrated\n[kvbench]\nthreshold1_bytes=9\n[transfer]\n"
                           "threshold1_bytes = 256\nthreshold2_bytes=128\nalpha=1.5\n");
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(cfg.threshold1_bytes, 256);
    CU_ASSERT_EQUAL(cfg.threshold2_bytes, 128);
    CU_ASSERT_DOUBLE_EQUAL(cfg.alpha, 1.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(cfg.beta, 1.0, 1e-12);
    CU_ASSERT_EQUAL(kvssd_xfer_config_save(path, &cfg, "test"), 0);
    kvssd_xfer_config_default(&back);
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &back, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(back.threshold1_bytes, 256);
    CU_ASSERT_DOUBLE_EQUAL(back.alpha, 1.5, 1e-12);
    unlink(path);
}

/*
 * The example of docs/host.md ("Threshold file"), inline comments and all,
 * loads: threshold1 128, threshold2 64, alpha and beta 1 (here with other
 * values, so that the defaults cannot pass for them). A '#' inside a value
 * without white space before it stays part of the value, and is refused.
 */
static void test_config_inline_comments(void)
{
    struct kvssd_xfer_config cfg;
    char err[300];
    kvssd_xfer_config_default(&cfg);
    char *path = write_tmp(
        "[transfer]\n"
        "threshold1_bytes=200   # inline up to alpha * this; default 128 (BandSlim's switch "
        "point)\n"
        "threshold2_bytes=32    # hybrid for tails up to beta * this past a 4 KiB multiple; "
        "default 64\n"
        "alpha=2                # default 1.0; > 1 favours inline, 0..1000000\n"
        "beta=0.5               ; default 1.0; > 1 favours hybrid; 0 disables hybrid\n");
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(cfg.threshold1_bytes, 200);
    CU_ASSERT_EQUAL(cfg.threshold2_bytes, 32);
    CU_ASSERT_DOUBLE_EQUAL(cfg.alpha, 2.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(cfg.beta, 0.5, 1e-12);
    unlink(path);
    path = write_tmp("[transfer]\nthreshold1_bytes=12#3\n");
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, err, sizeof(err)), -KVSSD_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, ":2: threshold1_bytes must be 0..2097152 bytes"));
    unlink(path);
}

/* A bad value is refused with a sentence naming file, line and range; cfg is left unchanged. */
static void test_config_errors(void)
{
    struct kvssd_xfer_config cfg;
    char err[300];
    kvssd_xfer_config_default(&cfg);
    char *path = write_tmp("[transfer]\nalpha=2\nthreshold1_bytes=-5\n");
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, err, sizeof(err)), -KVSSD_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, ":3: threshold1_bytes must be 0..2097152 bytes"));
    CU_ASSERT_DOUBLE_EQUAL(cfg.alpha, 1.0, 1e-12);
    unlink(path);
    path = write_tmp("[transfer]\ngamma=1\n");
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, err, sizeof(err)), -KVSSD_ERR_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown key \"gamma\""));
    unlink(path);
    CU_ASSERT_EQUAL(kvssd_xfer_config_load("/nonexistent/kvssd.conf", &cfg, err, sizeof(err)),
                    -KVSSD_ERR_SYSTEM);
}

/* KV statuses (SCT 1) map to their codes; DNR and More bits are ignored. */
static void test_status_kv(void)
{
    CU_ASSERT_EQUAL(kvssd_status_to_err(0), 0);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0085), -KVSSD_ERR_VALUE_SIZE);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0086), -KVSSD_ERR_KEY_SIZE);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0087), -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x4087), -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x6087), -KVSSD_ERR_KEY_NOT_FOUND);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0088), -KVSSD_ERR_UNRECOVERED);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0089), -KVSSD_ERR_KEY_EXISTS);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0081), -KVSSD_ERR_CAPACITY);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0082), -KVSSD_ERR_NOT_READY);
    CU_ASSERT_STRING_EQUAL(kvssd_status_str(0x4087), "KEY_DOES_NOT_EXIST");
}

/* Generic statuses: each maps to its code; an unknown one to KVSSD_ERR_NVME. */
static void test_status_generic(void)
{
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0001), -KVSSD_ERR_INVALID_OPCODE);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0002), -KVSSD_ERR_INVALID_FIELD);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0003), -KVSSD_ERR_CID_CONFLICT);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0004), -KVSSD_ERR_TRANSFER);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0005), -KVSSD_ERR_ABORTED);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0006), -KVSSD_ERR_INTERNAL);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0007), -KVSSD_ERR_ABORTED);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0008), -KVSSD_ERR_ABORTED);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x000b), -KVSSD_ERR_INVALID_NSID);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x000c), -KVSSD_ERR_SEQUENCE);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x000d), -KVSSD_ERR_TRANSFER);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x000e), -KVSSD_ERR_TRANSFER);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x000f), -KVSSD_ERR_TRANSFER);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0011), -KVSSD_ERR_TRANSFER);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x0013), -KVSSD_ERR_TRANSFER);
    CU_ASSERT_EQUAL(kvssd_status_to_err(0x01ff), -KVSSD_ERR_NVME);
    CU_ASSERT_STRING_EQUAL(kvssd_status_str(0x01ff), "UNKNOWN_STATUS");
}

/* Extension statuses C0h..C9h each map to their own code and name. */
static void test_status_extensions(void)
{
    static const int expect[] = {
        KVSSD_ERR_INLINE_UNKNOWN_TAG, KVSSD_ERR_INLINE_BAD_SEQUENCE, KVSSD_ERR_INLINE_OVERFLOW,
        KVSSD_ERR_INLINE_TAG_IN_USE,  KVSSD_ERR_INLINE_EXPIRED,      KVSSD_ERR_TAG_TABLE_FULL,
        KVSSD_ERR_STAGED_KEY_UNKNOWN, KVSSD_ERR_ITERATOR_LIMIT,      KVSSD_ERR_INVALID_ITERATOR,
        KVSSD_ERR_ITERATOR_END,
    };
    for (int i = 0; i < 10; i++) {
        CU_ASSERT_EQUAL(kvssd_status_to_err((uint16_t)(0x01c0 + i)), -expect[i]);
    }
    CU_ASSERT_STRING_EQUAL(kvssd_status_str(KVSSD_SC_TAG_TABLE_FULL), "TAG_TABLE_FULL");
    CU_ASSERT_STRING_EQUAL(kvssd_status_str(KVSSD_SC_ITERATOR_END), "ITERATOR_END");
}

/* Every error code has its own non-empty message; foreign values say "unknown error". */
static void test_strerror(void)
{
    for (int i = 0; i < KVSSD_ERR_LAST; i++) {
        CU_ASSERT_PTR_NOT_NULL_FATAL(kvssd_strerror(-i));
        CU_ASSERT_TRUE(strlen(kvssd_strerror(-i)) > 5);
        for (int j = 0; j < i; j++) {
            CU_ASSERT_STRING_NOT_EQUAL(kvssd_strerror(i), kvssd_strerror(j));
        }
    }
    CU_ASSERT_STRING_EQUAL(kvssd_strerror(-KVSSD_ERR_LAST), "unknown error");
    CU_ASSERT_STRING_EQUAL(kvssd_strerror(-KVSSD_ERR_KEY_NOT_FOUND), "the key does not exist");
}

static const struct tap_test host_transfer_tests[] = {
    TAP_TEST(inline_command_counts),
    TAP_TEST(plan_2mib_inline),
    TAP_TEST(plan_2mib_hybrid_is_prp),
    TAP_TEST(plan_2mib_hybrid_tail),
    TAP_TEST(plan_long_key_inline),
    TAP_TEST(plan_long_key_prp),
    TAP_TEST(plan_16_byte_key_reassembles),
    TAP_TEST(plan_empty_value_inline),
    TAP_TEST(plan_refusals),
    TAP_TEST(adaptive_thresholds),
    TAP_TEST(adaptive_alpha_beta),
    TAP_TEST(fixed_modes),
    TAP_TEST(config_load_save),
    TAP_TEST(config_inline_comments),
    TAP_TEST(config_errors),
};

static const struct tap_test host_error_tests[] = {
    TAP_TEST(status_kv),
    TAP_TEST(status_generic),
    TAP_TEST(status_extensions),
    TAP_TEST(strerror),
};

int main(void)
{
    const struct tap_suite suites[] = {
        TAP_SUITE("host_transfer", NULL, NULL, host_transfer_tests),
        TAP_SUITE("host_error", NULL, NULL, host_error_tests),
    };

    return tap_main(suites, sizeof(suites) / sizeof(suites[0]));
}
