/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the kvftl batch calls against the same calls one at a
 * time.
 *
 * kvftl_store_batch() and kvftl_retrieve_batch() promise to be
 * kvftl_store() and kvftl_retrieve() on their requests in order: the same
 * statuses, copied bytes, simulated times, statistics and stored pairs
 * (include/kvftl/kvftl.h). Nothing else checks that promise under inputs
 * nobody chose. The input is decoded into a device configuration and a
 * sequence of steps, run on two devices of that configuration (twins: one
 * hash seed, so one index layout). A batch step goes to twin B as one batch
 * call and to twin S as the same requests one call at a time; every other
 * step (delete, exist, flush, idle time, power cut, power cycle, format)
 * goes to both alike, and so do iterators (open, next, close), whose
 * entries must agree too. After every step the twins must agree: each
 * completion (status, done_ns, value_bytes, xfer_bytes), every byte of the
 * retrieve buffers, the whole struct kvftl_stats. Besides, a Retrieve may
 * write nothing of its window past what it says it copied, a power cycle
 * must mount both, and at the end every key the input named is retrieved
 * whole from both and compared and kvftl_check() passes on both. Any
 * difference aborts, naming the step, the request and the field.
 *
 * The other target, fuzz_kvftl_api.c, judges single calls against the
 * reference model; with this one the batch calls are judged by transitivity.
 *
 * KVFTL_FUZZ_TRACE=1 prints every decoded step to stderr (for replays).
 *
 * Encoding (see make_batch_corpus.py, which writes the seed corpus; key,
 * vlen, options and windows decode as in fuzz_kv_decode.h):
 *   byte 0: config, as fuzz_kvftl_api's (fuzz_kv_config())
 *   then steps, each a step byte (value % 13) and its operands:
 *   0 store batch     n:u8 (1 + n % 80 requests), each request:
 *                     key, vlen, vseed:u8, options:u8 [u32], inline:u8, how:u8
 *   1 retrieve batch  n:u8, each request: key, offset:u8 [u32], buffer:u8 [u32], how:u8
 *   2 store batch, then a retrieve batch of its keys, whole values:
 *                     n:u8, each request as for a store batch
 *   3 delete key      4 exist key      5 flush      6 idle time:u16 (x 1 us)
 *   7 power_cut_after n:u8 (both twins: a later batch may be cut inside)
 *   8 power_cycle     9 format
 *  10 iter_open prefix:u32 mask:u32 kind:u8
 *  11 iter_next handle:u8 max:u8 refuse:u8 (bit i: refuse the i-th entry offered)
 *  12 iter_close handle:u8
 *   how: bits 0-4 the request's arrival after the previous one (x 100 ns),
 *        bits 5-6 a Store's inline_xfer_commands, bit 7 a NULL value or
 *        buffer pointer (a refusal when bytes are to move)
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include <kvftl/kvftl.h>

#include "fuzz_kv_decode.h"
#include "kv_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_STEPS 512
#define MAX_BATCH 80
/* Value bytes a Store reads: windows of one pattern, each request at its own offset. */
#define POOL_BYTES (2u * KVFTL_VALUE_MAX_BYTES)
/* A retrieve batch's buffers, one after another; what a batch asks beyond it is cut. */
#define AREA_BYTES (4u * 1024 * 1024)
#define FILL 0xee
/* Keys remembered for the final read-back. */
#define MAX_KEYS 1024

static const char *const step_names[] = {
    "store batch", "retrieve batch",  "store+retrieve batch", "delete", "exist",     "flush",
    "idle",        "power_cut_after", "power_cycle",          "format", "iter_open", "iter_next",
    "iter_close"};

struct twin_run {
    struct kvftl *b, *s; /* the batch twin, the single-call twin */
    uint64_t now;
    uint32_t step, op;  /* step number, its decoded step */
    bool armed;         /* a power cut is armed or has fired */
    uint8_t *area_b, *area_s;
    uint8_t keys[MAX_KEYS][KVFTL_KEY_MAX_BYTES];
    uint32_t key_bytes[MAX_KEYS], nkeys;
};

static int trace = -1; /* KVFTL_FUZZ_TRACE */

static void die(struct twin_run *t, const char *fmt, ...) G_GNUC_PRINTF(2, 3) G_GNUC_NORETURN;
static void die(struct twin_run *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kvftl batch fuzz: twins differ at step %u (%s): ", t->step,
            t->op < G_N_ELEMENTS(step_names) ? step_names[t->op] : "end of input");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

static void same_cpl(struct twin_run *t, const char *what, uint32_t i, const struct kvftl_cpl *b,
                     const struct kvftl_cpl *s)
{
    if (b->status != s->status || b->done_ns != s->done_ns || b->value_bytes != s->value_bytes ||
        b->xfer_bytes != s->xfer_bytes) {
        die(t,
            "%s %u: batch status %s done_ns %" PRIu64 " value_bytes %u xfer_bytes %u, single "
            "status %s done_ns %" PRIu64 " value_bytes %u xfer_bytes %u",
            what, i, kvftl_status_name(b->status), b->done_ns, b->value_bytes, b->xfer_bytes,
            kvftl_status_name(s->status), s->done_ns, s->value_bytes, s->xfer_bytes);
    }
}

/* Every field of struct kvftl_stats is a 64-bit counter, gauge or double: compared word by word. */
static void same_stats(struct twin_run *t)
{
    struct kvftl_stats sb, ss;
    memset(&sb, 0, sizeof(sb));
    memset(&ss, 0, sizeof(ss));
    kvftl_stats_get(t->b, &sb);
    kvftl_stats_get(t->s, &ss);
    G_STATIC_ASSERT(sizeof(struct kvftl_stats) % 8 == 0);
    const uint8_t *pb = (const uint8_t *)&sb, *ps = (const uint8_t *)&ss;
    for (size_t w = 0; w < sizeof(sb); w += 8) {
        if (memcmp(pb + w, ps + w, 8) != 0) {
            uint64_t vb, vs;
            memcpy(&vb, pb + w, 8);
            memcpy(&vs, ps + w, 8);
            die(t,
                "struct kvftl_stats differs at byte %zu (live_keys at %zu, sim_now_ns at %zu): "
                "batch %" PRIu64 ", single %" PRIu64,
                w, offsetof(struct kvftl_stats, live_keys),
                offsetof(struct kvftl_stats, sim_now_ns), vb, vs);
        }
    }
    if (sb.sim_now_ns > t->now) {
        t->now = sb.sim_now_ns;
    }
}

static void remember_key(struct twin_run *t, const uint8_t *key, uint32_t klen)
{
    if (klen < 1 || klen > KVFTL_KEY_MAX_BYTES) {
        return;
    }
    for (uint32_t k = 0; k < t->nkeys; k++) {
        if (t->key_bytes[k] == klen && memcmp(t->keys[k], key, klen) == 0) {
            return;
        }
    }
    if (t->nkeys < MAX_KEYS) {
        memcpy(t->keys[t->nkeys], key, klen);
        t->key_bytes[t->nkeys++] = klen;
    }
}

/* ---------------- batches ---------------- */

struct batch {
    uint32_t n;
    uint8_t key[MAX_BATCH][KVFTL_KEY_MAX_BYTES + 1];
    struct kvftl_store_req st[MAX_BATCH];
    struct kvftl_retrieve_req rb[MAX_BATCH], rs[MAX_BATCH];
    struct kvftl_cpl cb[MAX_BATCH], cs[MAX_BATCH];
};

/* The next request's arrival: @how's bits 0-4 x 100 ns after the previous one. */
static uint64_t arrive(struct twin_run *t, uint8_t how)
{
    t->now += (uint64_t)(how & 31) * 100;
    return t->now;
}

static void decode_stores(struct twin_run *t, struct input *in, struct batch *bt,
                          const uint8_t *pool)
{
    bt->n = 1 + in_u8(in) % MAX_BATCH;
    for (uint32_t i = 0; i < bt->n; i++) {
        uint32_t klen = decode_key(in, bt->key[i]);
        uint32_t vlen = decode_vlen(in);
        uint64_t vseed = mix64(in_u8(in) + (uint64_t)t->step * 977 + i);
        uint32_t opt, inl;
        decode_store_options(in, vlen, &opt, &inl);
        uint8_t how = in_u8(in);
        /* POOL_BYTES covers the offset and any length the device reads (at most MAX + 63) */
        const uint8_t *value = how & 0x80 ? NULL : pool + vseed % (KVFTL_VALUE_MAX_BYTES - 64);
        bt->st[i] = (struct kvftl_store_req){.key = bt->key[i],
                                             .key_bytes = klen,
                                             .value = value,
                                             .value_bytes = vlen,
                                             .options = opt,
                                             .inline_bytes = inl,
                                             .inline_xfer_commands = (how >> 5) & 3,
                                             .arrival_ns = arrive(t, how)};
        remember_key(t, bt->key[i], klen);
    }
}

static void run_stores(struct twin_run *t, struct batch *bt)
{
    kvftl_store_batch(t->b, bt->st, bt->cb, bt->n);
    for (uint32_t i = 0; i < bt->n; i++) {
        kvftl_store(t->s, &bt->st[i], &bt->cs[i]);
    }
    for (uint32_t i = 0; i < bt->n; i++) {
        if (trace > 0) {
            fprintf(stderr,
                    "    store %u: key %u B fp %08x value %u B options %#x inline %u -> %s\n", i,
                    bt->st[i].key_bytes, kv_model_key_fp(bt->st[i].key, bt->st[i].key_bytes),
                    bt->st[i].value_bytes, bt->st[i].options, bt->st[i].inline_bytes,
                    kvftl_status_name(bt->cb[i].status));
        }
        same_cpl(t, "store", i, &bt->cb[i], &bt->cs[i]);
    }
    t->now += 1000;
    same_stats(t);
}

/*
 * Request @i's window of the areas: what is left of them at most. @null: a
 * NULL buffer instead (kvftl_retrieve() refuses it when bytes are to move).
 */
static void set_window(struct twin_run *t, struct batch *bt, uint32_t i, uint32_t *cursor,
                       uint32_t klen, uint32_t off, uint32_t bufb, bool null, uint64_t at)
{
    uint32_t room = AREA_BYTES - *cursor;
    bufb = bufb < room ? bufb : room;
    bt->rb[i] = (struct kvftl_retrieve_req){.key = bt->key[i],
                                            .key_bytes = klen,
                                            .buf = null ? NULL : t->area_b + *cursor,
                                            .offset = off,
                                            .buf_bytes = bufb,
                                            .arrival_ns = at};
    bt->rs[i] = bt->rb[i];
    bt->rs[i].buf = null ? NULL : t->area_s + *cursor;
    if (!null) {
        *cursor += bufb;
    }
}

static void run_retrieves(struct twin_run *t, struct batch *bt, uint32_t used)
{
    memset(t->area_b, FILL, used);
    memset(t->area_s, FILL, used);
    kvftl_retrieve_batch(t->b, bt->rb, bt->cb, bt->n);
    for (uint32_t i = 0; i < bt->n; i++) {
        const struct kvftl_retrieve_req *r = &bt->rs[i];
        kvftl_retrieve(t->s, r->key, r->key_bytes, r->buf, r->offset, r->buf_bytes, r->arrival_ns,
                       &bt->cs[i]);
    }
    for (uint32_t i = 0; i < bt->n; i++) {
        const struct kvftl_retrieve_req *r = &bt->rb[i];
        if (trace > 0) {
            fprintf(stderr, "    retrieve %u: key %u B fp %08x offset %u buffer %u -> %s, %u B\n",
                    i, r->key_bytes, kv_model_key_fp(r->key, r->key_bytes), r->offset, r->buf_bytes,
                    kvftl_status_name(bt->cb[i].status), bt->cb[i].xfer_bytes);
        }
        same_cpl(t, "retrieve", i, &bt->cb[i], &bt->cs[i]);
        if (!r->buf) {
            continue;
        }
        const uint8_t *w = r->buf;
        for (uint32_t k = bt->cb[i].xfer_bytes; k < r->buf_bytes; k++) {
            if (w[k] != FILL) {
                die(t, "retrieve %u copied %u bytes but wrote byte %u of its %u-byte buffer", i,
                    bt->cb[i].xfer_bytes, k, r->buf_bytes);
            }
        }
    }
    if (memcmp(t->area_b, t->area_s, used) != 0) {
        for (uint32_t k = 0; k < used; k++) {
            if (t->area_b[k] != t->area_s[k]) {
                die(t, "the retrieve buffers differ at byte %u of %u (batch %#x, single %#x)", k,
                    used, t->area_b[k], t->area_s[k]);
            }
        }
    }
    t->now += 1000;
    same_stats(t);
}

static void decode_retrieves(struct twin_run *t, struct input *in, struct batch *bt)
{
    bt->n = 1 + in_u8(in) % MAX_BATCH;
    uint32_t cursor = 0;
    for (uint32_t i = 0; i < bt->n; i++) {
        uint32_t klen = decode_key(in, bt->key[i]);
        uint32_t off, bufb;
        decode_read_window(in, KVFTL_VALUE_MAX_BYTES, &off, &bufb);
        uint8_t how = in_u8(in);
        set_window(t, bt, i, &cursor, klen, off, bufb, how & 0x80, arrive(t, how));
    }
    run_retrieves(t, bt, cursor);
}

/* The store batch's keys read back whole, in its order, as far as the areas go. */
static void retrieve_stored(struct twin_run *t, struct batch *bt)
{
    uint32_t cursor = 0;
    for (uint32_t i = 0; i < bt->n; i++) {
        uint32_t want = bt->st[i].value_bytes <= KVFTL_VALUE_MAX_BYTES ? bt->st[i].value_bytes : 0;
        set_window(t, bt, i, &cursor, bt->st[i].key_bytes, 0, want, false, t->now);
    }
    run_retrieves(t, bt, cursor);
}

/* ---------------- steps on both twins alike ---------------- */

typedef void (*key_op_fn)(struct kvftl *, const void *, uint32_t, uint64_t, struct kvftl_cpl *);

static void both_key_op(struct twin_run *t, key_op_fn fn, const uint8_t *key, uint32_t klen)
{
    struct kvftl_cpl cb, cs;
    fn(t->b, key, klen, t->now, &cb);
    fn(t->s, key, klen, t->now, &cs);
    same_cpl(t, "command", 0, &cb, &cs);
    t->now += 1000;
    same_stats(t);
}

typedef void (*device_op_fn)(struct kvftl *, uint64_t, struct kvftl_cpl *);

/* A command without a key (kvftl_flush(), kvftl_format()) on both. */
static void both_device_op(struct twin_run *t, device_op_fn fn)
{
    struct kvftl_cpl cb, cs;
    fn(t->b, t->now, &cb);
    fn(t->s, t->now, &cs);
    same_cpl(t, "command", 0, &cb, &cs);
    t->now += 1000;
    same_stats(t);
}

static void both_check(struct twin_run *t, const char *why)
{
    char err[256] = "";
    if (kvftl_check(t->b, err, sizeof(err)) != 0) {
        die(t, "kvftl_check of the batch twin %s: %s", why, err);
    }
    if (kvftl_check(t->s, err, sizeof(err)) != 0) {
        die(t, "kvftl_check of the single-call twin %s: %s", why, err);
    }
}

static void both_power_cycle(struct twin_run *t)
{
    char err[256] = "";
    if (kvftl_power_cycle(t->b, err, sizeof(err)) != 0) {
        die(t, "kvftl_power_cycle of the batch twin: %s", err);
    }
    if (kvftl_power_cycle(t->s, err, sizeof(err)) != 0) {
        die(t, "kvftl_power_cycle of the single-call twin: %s", err);
    }
    t->armed = false;
    same_stats(t);
    both_check(t, "after a power cycle");
}

/* ---------------- iterators on both twins alike ---------------- */

/* What a twin's iter_next offered: a digest of every entry, and the refusal pattern. */
struct emitted {
    uint64_t digest;
    uint32_t offered;
    uint32_t refuse; /* bit i: refuse the i-th entry offered (the first 32) */
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

static int emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                uint32_t value_bytes)
{
    struct emitted *e = opaque;
    uint32_t lens[2] = {key_bytes, value ? value_bytes : UINT32_MAX};
    e->digest = fnv1a(e->digest, lens, sizeof(lens));
    e->digest = fnv1a(e->digest, key, key_bytes);
    if (value) {
        e->digest = fnv1a(e->digest, value, value_bytes);
    }
    int refuse = e->offered < 32 && (e->refuse >> e->offered & 1);
    e->offered++;
    return refuse;
}

static void both_iter_open(struct twin_run *t, uint32_t prefix, uint32_t mask, uint8_t kind)
{
    struct kvftl_cpl cb, cs;
    uint32_t hb = UINT32_MAX, hs = UINT32_MAX;
    kvftl_iter_open(t->b, prefix, mask, (enum kvftl_iter_kind)kind, t->now, &hb, &cb);
    kvftl_iter_open(t->s, prefix, mask, (enum kvftl_iter_kind)kind, t->now, &hs, &cs);
    if (trace > 0) {
        fprintf(stderr, "    -> %s, handle %u\n", kvftl_status_name(cb.status), hb);
    }
    same_cpl(t, "iter_open", 0, &cb, &cs);
    if (cb.status == KVFTL_OK && hb != hs) {
        die(t, "iter_open gave handles %u and %u", hb, hs);
    }
    t->now += 1000;
    same_stats(t);
}

static void both_iter_next(struct twin_run *t, uint32_t handle, uint32_t max, uint32_t refuse)
{
    struct kvftl_cpl cb, cs;
    struct emitted eb = {.digest = 0xcbf29ce484222325ull, .refuse = refuse}, es = eb;
    kvftl_iter_next(t->b, handle, max, emit, &eb, t->now, &cb);
    kvftl_iter_next(t->s, handle, max, emit, &es, t->now, &cs);
    if (trace > 0) {
        fprintf(stderr, "    -> %s, %u entries offered, %u taken\n", kvftl_status_name(cb.status),
                eb.offered, cb.value_bytes);
    }
    same_cpl(t, "iter_next", 0, &cb, &cs);
    if (eb.offered != es.offered || eb.digest != es.digest) {
        die(t, "iter_next offered %u entries (digest %016" PRIx64 ") and %u (%016" PRIx64 ")",
            eb.offered, eb.digest, es.offered, es.digest);
    }
    t->now += 1000;
    same_stats(t);
}

static void both_iter_close(struct twin_run *t, uint32_t handle)
{
    struct kvftl_cpl cb, cs;
    kvftl_iter_close(t->b, handle, t->now, &cb);
    kvftl_iter_close(t->s, handle, t->now, &cs);
    if (trace > 0) {
        fprintf(stderr, "    -> %s\n", kvftl_status_name(cb.status));
    }
    same_cpl(t, "iter_close", 0, &cb, &cs);
    t->now += 1000;
    same_stats(t);
}

/* Every remembered key, whole, from both twins, one call at a time. */
static void read_back(struct twin_run *t, uint8_t *vb, uint8_t *vs)
{
    for (uint32_t k = 0; k < t->nkeys; k++) {
        struct kvftl_cpl cb, cs;
        kvftl_retrieve(t->b, t->keys[k], t->key_bytes[k], vb, 0, KVFTL_VALUE_MAX_BYTES, t->now,
                       &cb);
        kvftl_retrieve(t->s, t->keys[k], t->key_bytes[k], vs, 0, KVFTL_VALUE_MAX_BYTES, t->now,
                       &cs);
        same_cpl(t, "read-back of key", k, &cb, &cs);
        if (cb.xfer_bytes && memcmp(vb, vs, cb.xfer_bytes) != 0) {
            die(t, "key %u (%u B, fp %08x) reads back different values of %u bytes", k,
                t->key_bytes[k], kv_model_key_fp(t->keys[k], t->key_bytes[k]), cb.xfer_bytes);
        }
        t->now += 1000;
    }
    same_stats(t);
}

static struct kvftl *open_twin(struct twin_run *t, const struct kvftl_config *cfg)
{
    char err[256] = "";
    struct kvftl *f = kvftl_open(cfg, err, sizeof(err));
    if (!f) {
        die(t, "kvftl_open: %s", err);
    }
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *pool, *vb, *vs;
    static struct twin_run *t;
    static struct batch *bt;
    if (!pool) {
        pool = g_malloc(POOL_BYTES);
        value_fill(0x6261746368ull, 0, pool, POOL_BYTES); /* "batch" */
        vb = g_malloc(KVFTL_VALUE_MAX_BYTES);
        vs = g_malloc(KVFTL_VALUE_MAX_BYTES);
        t = g_malloc(sizeof(*t));
        t->area_b = g_malloc(AREA_BYTES);
        t->area_s = g_malloc(AREA_BYTES);
        bt = g_malloc(sizeof(*bt));
    }
    if (trace < 0) {
        trace = getenv("KVFTL_FUZZ_TRACE") != NULL;
    }
    struct input in = {data, size};
    t->now = 1000;
    t->step = 0;
    t->op = 0;
    t->armed = false;
    t->nkeys = 0;
    struct kvftl_config cfg;
    fuzz_kv_config(&cfg, in_u8(&in));
    char err[256] = "";
    if (kvftl_config_check(&cfg, err, sizeof(err)) != 0) {
        die(t, "config rejected: %s", err);
    }
    t->b = open_twin(t, &cfg);
    t->s = open_twin(t, &cfg);

    uint8_t key[KVFTL_KEY_MAX_BYTES + 1];
    while (in.n && t->step < MAX_STEPS) {
        t->step++;
        t->op = in_u8(&in) % 13;
        if (trace > 0) {
            fprintf(stderr, "step %u: %s\n", t->step, step_names[t->op]);
        }
        switch (t->op) {
        case 0:
            decode_stores(t, &in, bt, pool);
            run_stores(t, bt);
            break;
        case 1:
            decode_retrieves(t, &in, bt);
            break;
        case 2:
            decode_stores(t, &in, bt, pool);
            run_stores(t, bt);
            retrieve_stored(t, bt);
            break;
        case 3:
        case 4: {
            uint32_t klen = decode_key(&in, key);
            both_key_op(t, t->op == 3 ? kvftl_delete : kvftl_exist, key, klen);
            break;
        }
        case 5:
        case 9:
            both_device_op(t, t->op == 9 ? kvftl_format : kvftl_flush);
            break;
        case 6:
            t->now += (uint64_t)in_u16(&in) * 1000;
            break;
        case 7: {
            uint8_t n = in_u8(&in);
            if (!t->armed) {
                kvftl_power_cut_after(t->b, n);
                kvftl_power_cut_after(t->s, n);
                t->armed = n != 0;
            }
            break;
        }
        case 8:
            both_power_cycle(t);
            break;
        case 10: {
            uint32_t prefix = in_u32(&in), mask = in_u32(&in);
            both_iter_open(t, prefix, mask, in_u8(&in));
            break;
        }
        case 11: {
            uint32_t handle = decode_handle(&in);
            uint8_t mb = in_u8(&in), rb = in_u8(&in);
            both_iter_next(t, handle, mb, rb);
            break;
        }
        default:
            both_iter_close(t, decode_handle(&in));
            break;
        }
    }
    t->op = G_N_ELEMENTS(step_names);
    if (t->armed) {
        both_power_cycle(t);
    }
    read_back(t, vb, vs);
    both_check(t, "at the end of the input");
    if (trace > 0) {
        struct kvftl_stats st;
        kvftl_stats_get(t->b, &st);
        fprintf(stderr,
                "end: %u keys read back; %" PRIu64 " live keys, %" PRIu64 " GC runs, %" PRIu64
                " index cache misses, %" PRIu64 " NAND pages programmed\n",
                t->nkeys, st.live_keys, st.gc_runs, st.index_cache_misses,
                st.nand_pages_programmed);
    }
    kvftl_close(t->b);
    kvftl_close(t->s);
    return 0;
}
