/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

struct fixture fx;

void fx_ftl_config(struct kvftl_config *cfg)
{
    kvftl_config_preset(cfg, "default");
    /* 2 x 2 dies x 32 blocks x 64 pages x 16 KiB = 128 MiB: room for 2 MiB values. */
    cfg->channels = 2;
    cfg->dies_per_channel = 2;
    cfg->blocks_per_die = 32;
    cfg->pages_per_block = 64;
    cfg->page_size_bytes = 16384;
}

void fx_close(void)
{
    kvssd_ns_free(fx.ns);
    if (fx.ftl) {
        kvftl_close(fx.ftl);
    }
    memset(&fx, 0, sizeof(fx));
}

void fx_open(const struct kvssd_ns_config *ns_cfg, const struct kvftl_config *ftl_cfg)
{
    struct kvftl_config c;
    char err[256] = "";

    fx_close();
    if (ftl_cfg) {
        c = *ftl_cfg;
    } else {
        fx_ftl_config(&c);
    }
    fx.ftl = kvftl_open(&c, err, sizeof(err));
    if (!fx.ftl) {
        fprintf(stderr, "kvftl_open: %s\n", err);
        abort();
    }
    fx.ns = kvssd_ns_new(fx.ftl, ns_cfg, &fx.xfer, err, sizeof(err));
    if (!fx.ns) {
        fprintf(stderr, "kvssd_ns_new: %s\n", err);
        abort();
    }
    fx.now = 1000000;
}

void fx_setup(void)
{
    fx_open(NULL, NULL);
}

void fx_teardown(void)
{
    fx_close();
}

/*
 * The status of a transfer of @len bytes at @offset: the injected failure,
 * DATA_XFER_ERROR past the end of the buffer, else success.
 */
static uint16_t fake_transfer(const struct fake_host *h, uint64_t offset, uint32_t len)
{
    if (h->fail_status) {
        return h->fail_status;
    }
    if (offset > h->len || len > h->len - offset) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    return KVSSD_SC_SUCCESS;
}

static uint16_t fake_from_host(void *opaque, uint64_t offset, void *buf, uint32_t len)
{
    struct fake_host *h = opaque;
    uint16_t st = fake_transfer(h, offset, len);

    h->from_calls++;
    if (st == KVSSD_SC_SUCCESS) {
        memcpy(buf, h->buf + offset, len);
        h->from_bytes += len;
    }
    return st;
}

static uint16_t fake_to_host(void *opaque, uint64_t offset, const void *buf, uint32_t len)
{
    struct fake_host *h = opaque;
    uint16_t st = fake_transfer(h, offset, len);

    h->to_calls++;
    if (st == KVSSD_SC_SUCCESS) {
        memcpy(h->buf + offset, buf, len);
        h->to_bytes += len;
    }
    return st;
}

struct fake_host fake_host_over(void *buf, uint32_t len)
{
    struct fake_host h = {.buf = buf, .len = len};
    return h;
}

void fake_host_dptr(struct kvssd_req *req, struct fake_host *host)
{
    req->dptr.opaque = host;
    req->dptr.from_host = fake_from_host;
    req->dptr.to_host = fake_to_host;
}

struct kvssd_req fx_exec_at(const struct kvssd_sqe *sqe, struct fake_host *host, uint64_t now)
{
    struct kvssd_req req = {.sqe = sqe, .now_ns = now};

    if (host) {
        fake_host_dptr(&req, host);
    }
    /* Results are poisoned so that a field the device forgets shows. */
    req.status = 0xdead;
    req.dw0 = req.dw1 = 0xdeadbeef;
    kvssd_kv_execute(fx.ns, &req);
    return req;
}

struct kvssd_req fx_exec(const struct kvssd_sqe *sqe, struct fake_host *host)
{
    struct kvssd_req r = fx_exec_at(sqe, host, fx.now);
    fx.now += 1000;
    return r;
}

/* ---- SQE builders ------------------------------------------------------- */

static uint16_t next_cid;

struct kvssd_sqe sqe_new(uint8_t opcode)
{
    struct kvssd_sqe s;

    memset(&s, 0, sizeof(s));
    s.cdw[0] = opcode | (uint32_t)(next_cid++) << 16;
    s.cdw[1] = 1; /* NSID */
    return s;
}

/* A command that names a key (1..16 bytes in the SQE; 0: none), with CDW10 and CDW11. */
static struct kvssd_sqe sqe_keyed(uint8_t opcode, const void *key, uint32_t key_len, uint32_t cdw10,
                                  uint32_t cdw11)
{
    struct kvssd_sqe s = sqe_new(opcode);

    if (key_len) {
        kvssd_sqe_set_key(&s, key, key_len);
    }
    s.cdw[10] = cdw10;
    s.cdw[11] = cdw11;
    return s;
}

/* A command of CDW10 and CDW11 alone. */
static struct kvssd_sqe sqe_dwords(uint8_t opcode, uint32_t cdw10, uint32_t cdw11)
{
    return sqe_keyed(opcode, NULL, 0, cdw10, cdw11);
}

struct kvssd_sqe sqe_store(const void *key, uint32_t key_len, uint32_t value_len, uint32_t options)
{
    return sqe_keyed(KVSSD_OPC_STORE, key, key_len, value_len, kvssd_cdw11(key_len, options));
}

struct kvssd_sqe sqe_retrieve(const void *key, uint32_t key_len, uint32_t buf_len)
{
    return sqe_keyed(KVSSD_OPC_RETRIEVE, key, key_len, buf_len, kvssd_cdw11(key_len, 0));
}

struct kvssd_sqe sqe_delete(const void *key, uint32_t key_len)
{
    return sqe_keyed(KVSSD_OPC_DELETE, key, key_len, 0, kvssd_cdw11(key_len, 0));
}

struct kvssd_sqe sqe_exist(const void *key, uint32_t key_len)
{
    return sqe_keyed(KVSSD_OPC_EXIST, key, key_len, 0, kvssd_cdw11(key_len, 0));
}

struct kvssd_sqe sqe_list(const void *key, uint32_t key_len, uint32_t buf_len)
{
    return sqe_keyed(KVSSD_OPC_LIST, key, key_len, buf_len, kvssd_cdw11(key_len, 0));
}

struct kvssd_sqe sqe_key_stage(uint32_t key_len, uint32_t tag)
{
    return sqe_dwords(KVSSD_OPC_KEY_STAGE, key_len, tag);
}

struct kvssd_sqe sqe_iter_open(uint32_t prefix, uint32_t mask, bool key_values)
{
    struct kvssd_sqe s = sqe_dwords(KVSSD_OPC_ITER_OPEN, prefix, mask);

    s.cdw[12] = key_values ? KVSSD_ITER_FLAG_KEY_VALUE : 0;
    return s;
}

struct kvssd_sqe sqe_iter_read(uint32_t handle, uint32_t buf_len)
{
    return sqe_dwords(KVSSD_OPC_ITER_READ, buf_len, handle);
}

struct kvssd_sqe sqe_iter_close(uint32_t handle)
{
    return sqe_dwords(KVSSD_OPC_ITER_CLOSE, handle, 0);
}

void sqe_use_staged_key(struct kvssd_sqe *sqe, uint32_t tag)
{
    sqe->cdw[2] = tag;
    sqe->cdw[3] = 0;
    sqe->cdw[14] = 0;
    sqe->cdw[15] = 0;
}

/* ---- Whole operations ---------------------------------------------------- */

#define FX_LONG_KEY_TAG 7

uint16_t fx_stage(const void *key, uint32_t key_len, uint32_t tag)
{
    struct kvssd_sqe s = sqe_key_stage(key_len, tag);
    struct fake_host h = fake_host_over((void *)key, key_len);

    return fx_exec(&s, &h).status;
}

/* Run @s, first staging the key if it is long. */
static struct kvssd_req fx_keyed(struct kvssd_sqe *s, const void *key, uint32_t key_len,
                                 struct fake_host *h)
{
    if (key_len > KVSSD_KEY_INLINE_MAX) {
        uint16_t st = fx_stage(key, key_len, FX_LONG_KEY_TAG);

        CU_ASSERT_EQUAL(st, KVSSD_SC_SUCCESS);
        sqe_use_staged_key(s, FX_LONG_KEY_TAG);
    }
    return fx_exec(s, h);
}

uint16_t fx_store(const void *key, uint32_t key_len, const void *value, uint32_t value_len,
                  uint32_t options)
{
    struct kvssd_sqe s = sqe_store(key, key_len, value_len, options);
    struct fake_host h = fake_host_over((void *)value, value_len);

    return fx_keyed(&s, key, key_len, &h).status;
}

uint16_t fx_retrieve(const void *key, uint32_t key_len, void *buf, uint32_t buf_len, uint32_t *dw0)
{
    struct kvssd_sqe s = sqe_retrieve(key, key_len, buf_len);
    struct fake_host h = fake_host_over(buf, buf_len);
    struct kvssd_req r = fx_keyed(&s, key, key_len, &h);

    if (dw0) {
        *dw0 = r.dw0;
    }
    return r.status;
}

uint16_t fx_delete(const void *key, uint32_t key_len)
{
    struct kvssd_sqe s = sqe_delete(key, key_len);

    return fx_keyed(&s, key, key_len, NULL).status;
}

uint16_t fx_exist(const void *key, uint32_t key_len)
{
    struct kvssd_sqe s = sqe_exist(key, key_len);

    return fx_keyed(&s, key, key_len, NULL).status;
}

void fx_assert_stored(const void *key, uint32_t key_len, const void *value, uint32_t n)
{
    uint8_t *back = malloc(n + 1);
    uint32_t dw0 = 0;

    memset(back, 0xee, n + 1);
    CU_ASSERT_EQUAL(fx_retrieve(key, key_len, back, n + 1, &dw0), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(dw0, n);
    CU_ASSERT(memcmp(back, value, n) == 0);
    free(back);
}

void fill_pattern(uint8_t *buf, uint32_t len, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;

    for (uint32_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (uint8_t)x;
    }
}

/* ---- Inline encoder ------------------------------------------------------ */

/* Spread @n bytes over the listed dwords, little endian; the rest stays zero. */
static void put_payload(struct kvssd_sqe *s, const uint8_t *dwords, uint32_t ndw,
                        const uint8_t *bytes, uint32_t n)
{
    for (uint32_t i = 0; i < ndw; i++) {
        uint32_t d = 0;

        for (uint32_t b = 0; b < 4; b++) {
            uint32_t at = 4 * i + b;

            if (at < n) {
                d |= (uint32_t)bytes[at] << (8 * b);
            }
        }
        s->cdw[dwords[i]] = d;
    }
}

static uint32_t div_round_up(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

/*
 * The transfers of a stream, out->sqe[1 .. out->n - 1]: value bytes from
 * @from on, 56 per full-layout transfer (8Dh) or 28 per stock one (85h).
 */
static void put_xfers(struct inline_cmds *out, uint32_t tag, const uint8_t *value, uint32_t from,
                      uint32_t value_len, bool full)
{
    static const uint8_t xfer_dw[] = {2, 3, 11, 12, 13, 14, 15};
    static const uint8_t xfer_full_dw[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    uint32_t per = full ? 56 : 28;
    for (uint32_t seq = 1; seq < out->n; seq++) {
        uint32_t off = from + (seq - 1) * per;
        uint32_t n = value_len - off < per ? value_len - off : per;
        struct kvssd_sqe *s = &out->sqe[seq];

        if (full) {
            *s = sqe_new(KVSSD_OPC_INLINE_XFER_FULL);
            s->cdw[1] = kvssd_inline_tag_seq(tag, seq); /* no NSID in this layout */
            put_payload(s, xfer_full_dw, 14, value + off, n);
        } else {
            *s = sqe_new(KVSSD_OPC_INLINE_XFER);
            s->cdw[1] = 1;
            s->cdw[10] = kvssd_inline_tag_seq(tag, seq);
            put_payload(s, xfer_dw, 7, value + off, n);
        }
    }
}

/*
 * A stream opened by a stock head (81h): the key (or staged-key tag) and
 * the first bytes of the inline part in the head, the rest in stock 28-byte
 * transfers (85h), or with @full_tail (KVSSD_INLINE_FULL_TAIL) in full-layout
 * 56-byte transfers (8Dh). @hybrid: whole 4 KiB pages go by DMA.
 */
static void encode_stock_head(const uint8_t *key, uint32_t key_len, const uint8_t *value,
                              uint32_t value_len, uint32_t options, uint32_t tag, bool hybrid,
                              uint32_t staged_tag, bool full_tail, struct inline_cmds *out)
{
    static const uint8_t head_dw[] = {2, 3, 12, 13, 14, 15};
    static const uint8_t head_staged_dw[] = {3, 12, 13, 14, 15};
    uint32_t per = full_tail ? 56 : 28;
    uint32_t dma = hybrid ? value_len / 4096 * 4096 : 0;
    uint32_t inl = value_len - dma;
    uint32_t cap = key_len > 16 ? 20 : 24 - key_len;
    uint32_t head = inl < cap ? inl : cap;
    uint32_t xfers = div_round_up(inl - head, per);
    uint8_t p[24];
    struct kvssd_sqe *s;

    out->n = 1 + xfers;
    out->dma_bytes = dma;
    out->sqe = calloc(out->n, sizeof(*out->sqe));
    s = &out->sqe[0];
    *s = sqe_new(KVSSD_OPC_INLINE_HEAD);
    s->cdw[10] = kvssd_inline_head_cdw10(value_len, options, key_len);
    s->cdw[11] = tag | (full_tail ? KVSSD_INLINE_FULL_TAIL : 0) |
                 (hybrid ? KVSSD_INLINE_HYBRID : 0);
    memset(p, 0, sizeof(p));
    if (key_len > 16) {
        memcpy(p, value + dma, head);
        put_payload(s, head_staged_dw, 5, p, head);
        s->cdw[2] = staged_tag;
    } else {
        memcpy(p, key, key_len);
        memcpy(p + key_len, value + dma, head);
        put_payload(s, head_dw, 6, p, key_len + head);
    }
    put_xfers(out, tag, value, dma + head, value_len, full_tail);
}

void encode_inline_stock(const uint8_t *key, uint32_t key_len, const uint8_t *value,
                         uint32_t value_len, uint32_t options, uint32_t tag, bool hybrid,
                         uint32_t staged_tag, struct inline_cmds *out)
{
    encode_stock_head(key, key_len, value, value_len, options, tag, hybrid, staged_tag, false, out);
}

void encode_inline_full(const uint8_t *key, uint32_t key_len, const uint8_t *value,
                        uint32_t value_len, uint32_t options, uint32_t tag, struct inline_cmds *out)
{
    static const uint8_t head_dw[] = {4, 5, 6, 7, 8, 9, 12, 13};
    uint32_t head = value_len < 35 ? value_len : 35;
    uint32_t xfers = div_round_up(value_len - head, 56);
    uint8_t p[35];
    struct kvssd_sqe *s;

    out->n = 1 + xfers;
    out->dma_bytes = 0;
    out->sqe = calloc(out->n, sizeof(*out->sqe));
    s = &out->sqe[0];
    *s = sqe_new(KVSSD_OPC_INLINE_HEAD_FULL);
    kvssd_sqe_set_key(s, key, key_len);
    s->cdw[10] = kvssd_inline_head_cdw10(value_len, options, key_len);
    memset(p, 0, sizeof(p));
    memcpy(p, value, head);
    s->cdw[11] = tag | (uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24;
    put_payload(s, head_dw, 8, p + 3, head > 3 ? head - 3 : 0);
    put_xfers(out, tag, value, head, value_len, true);
}

void encode_inline_full_tail(const uint8_t *key, uint32_t key_len, const uint8_t *value,
                             uint32_t value_len, uint32_t options, uint32_t tag, bool hybrid,
                             uint32_t staged_tag, struct inline_cmds *out)
{
    encode_stock_head(key, key_len, value, value_len, options, tag, hybrid, staged_tag, true, out);
}

void inline_cmds_free(struct inline_cmds *c)
{
    free(c->sqe);
    c->sqe = NULL;
    c->n = 0;
}
