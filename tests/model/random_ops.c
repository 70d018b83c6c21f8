/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The random operations of a scenario and the iterations, each call judged
 * by the reference model (kv_model.h); the draws (sizes, keys, options,
 * offsets, batch sizes) are this file's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

/*
 * Value sizes: mostly small, sometimes large, always the extremes:
 * 1.5% empty, 80% 1..128 B, 15% 129 B..4 KiB, 3% ..32 KiB, 0.45% ..256 KiB,
 * 0.04% ..2 MiB-1, 0.01% exactly 2 MiB.
 */
static uint32_t draw_value_len(struct run *r)
{
    uint64_t x = rng_below(&r->rng, 10000);
    if (x < 150) {
        return 0;
    }
    if (x < 8150) {
        return (uint32_t)rng_range(&r->rng, 1, 128);
    }
    if (x < 9650) {
        return (uint32_t)rng_range(&r->rng, 129, 4096);
    }
    if (x < 9950) {
        return (uint32_t)rng_range(&r->rng, 4097, 32768);
    }
    if (x < 9995) {
        return (uint32_t)rng_range(&r->rng, 32769, 262144);
    }
    if (x < 9999) {
        return (uint32_t)rng_range(&r->rng, 262145, KVFTL_VALUE_MAX_BYTES - 1);
    }
    return KVFTL_VALUE_MAX_BYTES;
}

/* A key number: half the time from a hot 5%; reads sometimes go past the pool (absent keys). */
static uint64_t draw_key_no(struct run *r, bool for_read)
{
    uint64_t pool = r->sc->pool_keys;
    if (for_read && rng_below(&r->rng, 10) == 0) {
        return pool + rng_below(&r->rng, pool);
    }
    if (rng_below(&r->rng, 2) == 0) {
        return rng_below(&r->rng, pool / 20 + 1);
    }
    return rng_below(&r->rng, pool);
}

static const char *model_says(struct run *r, const uint8_t *key, uint32_t klen)
{
    struct kv_model_key *k = kv_model_find(&r->m, key, klen, false);
    return k && k->cur.present ? "present" : "absent";
}

static void op_store(struct run *r, uint8_t *key, uint32_t klen)
{
    uint32_t vlen = draw_value_len(r);
    uint64_t vseed = rng_next(&r->rng);
    uint32_t opt = 0;
    uint64_t x = rng_below(&r->rng, 10);
    if (x == 0) {
        opt = KVFTL_STORE_ONLY_IF_EXISTS;
    } else if (x == 1) {
        opt = KVFTL_STORE_ONLY_IF_ABSENT;
    }
    uint32_t inl;
    x = rng_below(&r->rng, 5);
    if (x < 2) {
        inl = 0;                                          /* all by DMA */
    } else if (x < 4) {
        inl = vlen;                                       /* all inline */
    } else {
        inl = (uint32_t)rng_range(&r->rng, 0, vlen);      /* head inline, rest DMA */
    }
    value_fill(vseed, 0, r->val, vlen);
    struct kvftl_store_req req = {
        .key = key,
        .key_bytes = klen,
        .value = r->val,
        .value_bytes = vlen,
        .options = opt,
        .inline_bytes = inl,
        .arrival_ns = r->now,
    };
    oplog_add(r, "store key %uB first4 0x%08x len %u opt %u inline %u", klen,
              kv_model_first4(key, klen), vlen, opt, inl);
    struct kvftl_cpl c;
    kvftl_store(r->ftl, &req, &c);
    if (!judged(r, kv_model_store(&r->m, r->ftl, &req, vseed, &c), &c)) {
        return;
    }
    if (c.status == KVFTL_CAPACITY_EXCEEDED) {
        r->cap_exceeded++;
    } else if (c.status == KVFTL_OK) {
        r->stores_ok++;
        r->user_bytes_since_format += klen + vlen;
    }
}

static void op_retrieve(struct run *r, uint8_t *key, uint32_t klen)
{
    struct kv_model_key *k = kv_model_find(&r->m, key, klen, false);
    struct kv_model_state s = k ? k->cur : (struct kv_model_state){0};
    uint32_t off = 0, bufb = KVFTL_VALUE_MAX_BYTES;
    uint64_t x = rng_below(&r->rng, 20);
    if (s.present && x < 4) {
        off = (uint32_t)rng_range(&r->rng, 0, s.len);           /* partial: offset.. */
        bufb = (uint32_t)rng_range(&r->rng, 0, s.len - off + 16); /* ..and length */
    } else if (s.present && x == 4) {
        off = s.len + 1 + (uint32_t)rng_below(&r->rng, 100);    /* beyond the value */
    } else if (s.present && x < 7) {
        bufb = (uint32_t)rng_below(&r->rng, s.len + 1);          /* short buffer */
    } else if (x == 7) {
        bufb = s.present ? s.len : (uint32_t)rng_below(&r->rng, 64); /* exact fit */
    }
    oplog_add(r, "retrieve key %uB first4 0x%08x off %u buf %u (model %s len %u)", klen,
              kv_model_first4(key, klen), off, bufb, s.present ? "present" : "absent", s.len);
    struct kvftl_retrieve_req req = {.key = key,
                                     .key_bytes = klen,
                                     .buf = r->buf,
                                     .offset = off,
                                     .buf_bytes = bufb,
                                     .arrival_ns = r->now};
    struct kvftl_cpl c;
    kv_model_guard(&req, RETRIEVE_BUF_CAP); /* the device must not write past its window */
    kvftl_retrieve(r->ftl, key, klen, r->buf, off, bufb, req.arrival_ns, &c);
    r->retrieves++;
    judged(r, kv_model_retrieve(&r->m, &req, RETRIEVE_BUF_CAP, &c), &c);
}

static void op_delete(struct run *r, uint8_t *key, uint32_t klen)
{
    oplog_add(r, "delete key %uB first4 0x%08x (model %s)", klen, kv_model_first4(key, klen),
              model_says(r, key, klen));
    struct kvftl_cpl c;
    uint64_t t = r->now;
    kvftl_delete(r->ftl, key, klen, t, &c);
    r->deletes++;
    judged(r, kv_model_delete(&r->m, key, klen, t, &c), &c);
}

static void op_exist(struct run *r, uint8_t *key, uint32_t klen)
{
    oplog_add(r, "exist key %uB first4 0x%08x (model %s)", klen, kv_model_first4(key, klen),
              model_says(r, key, klen));
    struct kvftl_cpl c;
    uint64_t t = r->now;
    kvftl_exist(r->ftl, key, klen, t, &c);
    judged(r, kv_model_exist(&r->m, key, klen, t, &c), &c);
}

static void op_flush(struct run *r)
{
    oplog_add(r, "flush");
    struct kvftl_cpl c;
    uint64_t t = r->now;
    kvftl_flush(r->ftl, t, &c);
    judged(r, kv_model_flush(&r->m, t, &c), &c);
}

/*
 * Invalid sizes get the exact status and change nothing. (With a cut armed,
 * background GC at the request's arrival may hit it, so INTERNAL_ERROR is
 * then the right answer even for an invalid request.)
 */
static void op_invalid(struct run *r)
{
    static uint8_t big[KVFTL_KEY_MAX_BYTES + 2];
    struct kvftl_cpl c;
    uint64_t t = r->now;
    uint32_t klen = rng_below(&r->rng, 2) ? 0 : KVFTL_KEY_MAX_BYTES + 1;
    memset(big, 'k', sizeof(big));
    switch (rng_below(&r->rng, 5)) {
    case 0: {
        struct kvftl_store_req req = {
            .key = big, .key_bytes = klen, .value = r->val, .value_bytes = 8, .arrival_ns = t};
        oplog_add(r, "store with a %u-byte key", klen);
        kvftl_store(r->ftl, &req, &c);
        judged(r, kv_model_store(&r->m, r->ftl, &req, 0, &c), NULL);
        break;
    }
    case 1: {
        struct kvftl_store_req req = {.key = big,
                                      .key_bytes = 16,
                                      .value = r->val,
                                      .value_bytes = KVFTL_VALUE_MAX_BYTES + 1 +
                                                     (uint32_t)rng_below(&r->rng, 2) * 1000000,
                                      .arrival_ns = t};
        oplog_add(r, "store of %u bytes", req.value_bytes);
        kvftl_store(r->ftl, &req, &c);
        judged(r, kv_model_store(&r->m, r->ftl, &req, 0, &c), NULL);
        break;
    }
    case 2: {
        struct kvftl_retrieve_req req = {
            .key = big, .key_bytes = klen, .buf = r->buf, .buf_bytes = 64, .arrival_ns = t};
        oplog_add(r, "retrieve with a %u-byte key", klen);
        kv_model_guard(&req, RETRIEVE_BUF_CAP);
        kvftl_retrieve(r->ftl, big, klen, r->buf, 0, 64, t, &c);
        judged(r, kv_model_retrieve(&r->m, &req, RETRIEVE_BUF_CAP, &c), NULL);
        break;
    }
    case 3:
        oplog_add(r, "delete with a %u-byte key", klen);
        kvftl_delete(r->ftl, big, klen, t, &c);
        judged(r, kv_model_delete(&r->m, big, klen, t, &c), NULL);
        break;
    default:
        oplog_add(r, "exist with a %u-byte key", klen);
        kvftl_exist(r->ftl, big, klen, t, &c);
        judged(r, kv_model_exist(&r->m, big, klen, t, &c), NULL);
        break;
    }
}

/* ---------------- iterators ---------------- */

static uint32_t pick_mask(struct run *r)
{
    static const uint32_t masks[] = {0, 0xff000000, 0xffff0000, 0xffffff00, 0xffffffff, 0xfffffffe};
    if (rng_below(&r->rng, 5) == 0) {
        return (uint32_t)rng_next(&r->rng);
    }
    return masks[rng_below(&r->rng, sizeof(masks) / sizeof(masks[0]))];
}

/* Every entry offered is judged; the callback refuses r->refuse_pct % of them. */
static int iter_emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                     uint32_t value_bytes)
{
    struct run *r = opaque;
    if (r->failed) {
        return 0;
    }
    bool refuse = r->refuse_pct && rng_below(&r->rng, 100) < r->refuse_pct;
    if (!kv_model_iter_entry(&r->m, key, key_bytes, value, value_bytes, !refuse)) {
        fail(r, "%s", r->m.mismatch);
        return 0;
    }
    return refuse;
}

static void random_mutation(struct run *r);

/*
 * Keys live for the whole iteration must be seen exactly once, a deleted
 * key never (kv_model_iter_next() at the end).
 */
void iterate_and_check(struct run *r, uint32_t prefix, uint32_t mask, bool kv, bool interleave)
{
    enum kvftl_iter_kind kind = kv ? KVFTL_ITER_KEY_VALUES : KVFTL_ITER_KEYS;
    struct kvftl_cpl c;
    uint32_t h = 0xffffffff;
    uint64_t t = r->now;
    r->refuse_pct = rng_below(&r->rng, 3) == 0 ? 10 : 0;
    r->iterations++;
    kvftl_iter_open(r->ftl, prefix, mask, kind, t, &h, &c);
    if (!judged(r, kv_model_iter_open(&r->m, prefix, mask, kind, t, h, &c), NULL) ||
        !expect_status(r, "iter_open", &c, t, KVFTL_OK)) {
        return;
    }
    for (uint64_t batches = 1;; batches++) {
        uint32_t max = (uint32_t)rng_range(&r->rng, 1, 64);
        t = next_arrival(r, &c);
        kv_model_iter_next_begin(&r->m, h);
        kvftl_iter_next(r->ftl, h, max, iter_emit, r, t, &c);
        if (r->failed || !judged(r, kv_model_iter_next(&r->m, h, max, t, &c), NULL)) {
            return;
        }
        if (c.status == KVFTL_ITERATOR_END) {
            break;
        }
        if (batches > 1000000) {
            fail(r, "iterator did not end after 1,000,000 batches");
            return;
        }
        if (interleave && rng_below(&r->rng, 2) == 0) {
            random_mutation(r);
            if (r->failed) {
                return;
            }
        }
    }
    t = r->now;
    kvftl_iter_close(r->ftl, h, t, &c);
    if (!judged(r, kv_model_iter_close(&r->m, h, t, &c), NULL)) {
        return;
    }
    /* A closed handle is invalid for next and close. */
    kv_model_iter_next_begin(&r->m, h);
    kvftl_iter_next(r->ftl, h, 1, iter_emit, r, t, &c);
    judged(r, kv_model_iter_next(&r->m, h, 1, t, &c), NULL);
}

static int refuse_emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                       uint32_t value_bytes)
{
    fail(opaque, "iter_next on an invalid handle called the callback");
    return 1;
}

/* The handle limit: 16 open, the 17th refused, bad kinds and handles rejected. */
static void iterator_limits(struct run *r)
{
    uint32_t h[KVFTL_MAX_ITERATORS + 1];
    struct kvftl_cpl c;
    uint64_t t = r->now;
    uint32_t seen_mask = 0;
    oplog_add(r, "iterator limits");
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        kvftl_iter_open(r->ftl, (uint32_t)rng_next(&r->rng), pick_mask(r), KVFTL_ITER_KEYS, t,
                        &h[i], &c);
        if (!expect_status(r, "iter_open (16 handles)", &c, t, KVFTL_OK)) {
            return;
        }
        if (h[i] >= KVFTL_MAX_ITERATORS || (seen_mask & (1u << h[i]))) {
            fail(r, "iter_open returned handle %u (open so far 0x%04x)", h[i], seen_mask);
            return;
        }
        seen_mask |= 1u << h[i];
    }
    kvftl_iter_open(r->ftl, 0, 0, KVFTL_ITER_KEYS, t, &h[16], &c);
    if (!expect_status(r, "iter_open (17th)", &c, t, KVFTL_ITERATOR_LIMIT)) {
        return;
    }
    kvftl_iter_close(r->ftl, h[3], t, &c);
    expect_status(r, "iter_close", &c, t, KVFTL_OK);
    kvftl_iter_open(r->ftl, 0, 0, KVFTL_ITER_KEY_VALUES, t, &h[3], &c);
    expect_status(r, "iter_open after a close", &c, t, KVFTL_OK);
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS && !r->failed; i++) {
        kvftl_iter_close(r->ftl, h[i], t, &c);
        expect_status(r, "iter_close all", &c, t, KVFTL_OK);
    }
    kvftl_iter_close(r->ftl, h[5], t, &c);
    expect_status(r, "iter_close twice", &c, t, KVFTL_INVALID_ITERATOR);
    kvftl_iter_close(r->ftl, KVFTL_MAX_ITERATORS, t, &c);
    expect_status(r, "iter_close handle 16", &c, t, KVFTL_INVALID_ITERATOR);
    kvftl_iter_next(r->ftl, 0xffffffffu, 4, refuse_emit, r, t, &c);
    expect_status(r, "iter_next handle 0xffffffff", &c, t, KVFTL_INVALID_ITERATOR);
    kvftl_iter_open(r->ftl, 0, 0, (enum kvftl_iter_kind)7, t, &h[0], &c);
    expect_status(r, "iter_open kind 7", &c, t, KVFTL_INVALID_FIELD);
}

/* ---------------- the stream ---------------- */

/* A store or delete on a random key (used between iterator batches). */
static void random_mutation(struct run *r)
{
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint32_t klen = make_key(r->kseed, draw_key_no(r, false), key);
    if (rng_below(&r->rng, 3) == 0) {
        op_delete(r, key, klen);
    } else {
        op_store(r, key, klen);
    }
}

void random_op(struct run *r)
{
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint64_t x = rng_below(&r->rng, 10000);
    if (x < 4200) {
        uint32_t klen = make_key(r->kseed, draw_key_no(r, false), key);
        op_store(r, key, klen);
    } else if (x < 7400) {
        uint32_t klen = make_key(r->kseed, draw_key_no(r, true), key);
        op_retrieve(r, key, klen);
    } else if (x < 8400) {
        uint32_t klen = make_key(r->kseed, draw_key_no(r, false), key);
        op_delete(r, key, klen);
    } else if (x < 9750) {
        uint32_t klen = make_key(r->kseed, draw_key_no(r, true), key);
        op_exist(r, key, klen);
    } else if (x < 9850) {
        op_flush(r);
    } else if (x < 9985) {
        op_invalid(r);
    } else if (r->m.armed) {
        /* no iterators across a power cut */
        op_flush(r);
    } else if (x < 9997) {
        uint8_t k0[KVFTL_KEY_MAX_BYTES];
        uint32_t l0 = make_key(r->kseed, draw_key_no(r, false), k0);
        uint32_t mask = pick_mask(r);
        bool kv = rng_below(&r->rng, 2) == 0;
        bool inter = rng_below(&r->rng, 3) == 0;
        oplog_add(r, "iterate prefix 0x%08x mask 0x%08x kv %d interleaved %d",
                  kv_model_first4(k0, l0), mask, kv, inter);
        iterate_and_check(r, kv_model_first4(k0, l0), mask, kv, inter);
    } else {
        iterator_limits(r);
    }
}
