/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target over the kvftl public API.
 *
 * The input is decoded into a device configuration and a sequence of API
 * calls with arbitrary sizes, options, offsets, handles and kinds (valid
 * and invalid), run against a small device (17 MiB of NAND, so GC and
 * device-full happen) and a reference model of the key space. Besides
 * crashes and sanitizer reports, any disagreement with the model aborts:
 * statuses, sizes and bytes of every retrieve, iterator output, survival of
 * completed operations across power cuts, the live_keys/live_user_bytes
 * gauges and kvftl_check().
 *
 * Where the API leaves an order of checks open (a store with both a bad key
 * size and a bad value size, unknown option bits, inline_bytes larger than
 * the value) any of the applicable statuses is accepted, and the model
 * follows what the device did.
 *
 * KVFTL_FUZZ_TRACE=1 prints every decoded operation to stderr (for replays).
 *
 * Encoding (see make_corpus.py, which writes the seed corpus):
 *   byte 0: config: bits 0-1 packing, bit 2 plp, bits 3-4 placement unit
 *           (1, 64, 1024, 4096 B), bit 5 bloom, bit 6 cost-benefit GC,
 *           bit 7 tiny index DRAM (12 KiB: 2 index pages + Bloom)
 *   then operations, each an opcode byte (value % 14) and its operands:
 *   0 store    key, vlen, vseed:u8, options:u8 (bit 7: read a raw u32), inline:u8
 *   1 retrieve key, offset-selector:u8 [u32], buffer-selector:u8 [u32]
 *   2 delete   key          3 exist key          4 flush
 *   5 iter_open  prefix:u32 mask:u32 kind:u8
 *   6 iter_next  handle:u8 max:u8 refuse:u8      7 iter_close handle:u8
 *   8 power_cut_after n:u8   9 power_cycle      10 format
 *  11 check      12 idle time:u16 (x 1 us)      13 store+retrieve of the same key
 *   key = len:u8 (0 = 0 B, 255 with next byte odd = 256 B), prefix:u8, fill:u8
 *   vlen = selector:u8 [operands], see decode_vlen()
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include <kvftl/kvftl.h>

#include "fuzz_input.h"
#include "kvftl_capacity.h"
#include "kvftl_readback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 4096
#define VALUE_BUF_BYTES (KVFTL_VALUE_MAX_BYTES + 64)

/* ---------------- input decoding ---------------- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/*
 * Value bytes: the 8-byte word w of the value with seed s is
 * s ^ (w + 1) * K (little-endian), so every position and every value
 * differs, any window can be generated on its own, and filling costs one
 * multiply per word (the fuzzer spends its time in the library, not here).
 */
static void value_fill(uint64_t seed, uint32_t off, uint8_t *dst, uint32_t n)
{
    uint64_t w_ix = off / 8;
    uint32_t skip = off % 8;
    if (skip && n) {
        uint64_t w = seed ^ (w_ix + 1) * 0x9e3779b97f4a7c15ull;
        uint32_t take = 8 - skip < n ? 8 - skip : n;
        memcpy(dst, (uint8_t *)&w + skip, take);
        dst += take;
        n -= take;
        w_ix++;
    }
    for (; n >= 8; n -= 8, dst += 8, w_ix++) {
        uint64_t w = seed ^ (w_ix + 1) * 0x9e3779b97f4a7c15ull;
        memcpy(dst, &w, 8);
    }
    if (n) {
        uint64_t w = seed ^ (w_ix + 1) * 0x9e3779b97f4a7c15ull;
        memcpy(dst, &w, n);
    }
}

static const uint32_t prefixes[] = { 0x00000000, 0x61626364, 0x61626300, 0xffffffff,
                                     0x80000001, 0x75736572, 0x00000100, 0x61000000 };

/* A key: few distinct prefixes and fills so that keys and buckets collide. */
static uint32_t decode_key(struct input *in, uint8_t *key)
{
    uint32_t len = in_u8(in);
    uint8_t pre = in_u8(in), fill = in_u8(in);
    if (len == 255 && (fill & 1)) {
        len = 256; /* one past the maximum */
    }
    uint32_t p = prefixes[pre % 8];
    uint8_t pb[4] = { (uint8_t)(p >> 24), (uint8_t)(p >> 16), (uint8_t)(p >> 8), (uint8_t)p };
    for (uint32_t i = 0; i < len; i++) {
        key[i] = i < 4 ? pb[i] : (uint8_t)(fill + (pre >> 3) * (i & 1));
    }
    return len;
}

/* Value sizes: small mostly, page-sized, page-spanning, the 2 MiB edge, and arbitrary. */
static uint32_t decode_vlen(struct input *in)
{
    uint8_t s = in_u8(in);
    if (s < 160) return s;                                               /* 0..159 */
    if (s < 220) return (uint32_t)(s - 159) * 512 + in_u8(in);           /* .. ~30 KiB */
    if (s < 244) return (uint32_t)(s - 219) * 16384 - 64 + in_u8(in);    /* around page multiples */
    if (s < 248) return (uint32_t)(s - 243) * 131072 + in_u16(in);       /* .. ~570 KiB */
    if (s == 248) return KVFTL_VALUE_MAX_BYTES;
    if (s == 249) return KVFTL_VALUE_MAX_BYTES - 1;
    if (s == 250) return KVFTL_VALUE_MAX_BYTES + 1;
    if (s == 251) return UINT32_MAX;
    return in_u32(in) % (KVFTL_VALUE_MAX_BYTES + 64);                    /* arbitrary within the buffer */
}

/* ---------------- reference model ---------------- */

struct mstate {
    bool present;
    uint32_t len;
    uint64_t vseed;
};

struct mkey {
    uint16_t klen;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    struct mstate cur;
    uint64_t hist_epoch; /* hist holds the states recovery may return while == epoch */
    GArray *hist;
    uint64_t mut_gen;
};

struct handle {
    bool open;
    bool lenient;      /* open across a format: the API leaves its fate open */
    uint32_t prefix, mask;
    bool kv;
    uint64_t open_gen;
    GHashTable *seen;
};

struct fuzz {
    struct kvftl_config cfg;
    struct kvftl *ftl;
    GHashTable *keys;
    uint64_t present, live_user_bytes, epoch, mut_gen, now;
    bool armed, fired;
    struct handle h[KVFTL_MAX_ITERATORS];
    uint8_t *val, *buf, *exp;
    uint64_t opno;
    uint32_t refuse;  /* refusal pattern for the iterator callback */
    uint32_t taken;
    struct handle *cur_h;
};

static guint mkey_hash(gconstpointer p)
{
    const struct mkey *k = p;
    uint64_t h = 0xcbf29ce484222325ull ^ k->klen;
    for (unsigned i = 0; i < k->klen; i++) {
        h = (h ^ k->key[i]) * 0x100000001b3ull;
    }
    return (guint)(h ^ (h >> 32));
}

static gboolean mkey_equal(gconstpointer a, gconstpointer b)
{
    const struct mkey *x = a, *y = b;
    return x->klen == y->klen && memcmp(x->key, y->key, x->klen) == 0;
}

static void mkey_free(gpointer p)
{
    struct mkey *k = p;
    if (k->hist) {
        g_array_free(k->hist, TRUE);
    }
    g_free(k);
}

static void die(struct fuzz *f, const char *fmt, ...) G_GNUC_PRINTF(2, 3) G_GNUC_NORETURN;
static void die(struct fuzz *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kvftl fuzz: model mismatch at op %" PRIu64 ": ", f->opno);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

static struct mkey *find(struct fuzz *f, const uint8_t *key, uint32_t klen, bool create)
{
    struct mkey probe;
    probe.klen = (uint16_t)klen;
    memcpy(probe.key, key, klen);
    struct mkey *k = g_hash_table_lookup(f->keys, &probe);
    if (!k && create) {
        k = g_new0(struct mkey, 1);
        k->klen = (uint16_t)klen;
        memcpy(k->key, key, klen);
        g_hash_table_add(f->keys, k);
    }
    return k;
}

static void note_possible(struct fuzz *f, struct mkey *k, struct mstate s)
{
    if (k->hist_epoch != f->epoch) {
        if (!k->hist) {
            k->hist = g_array_new(FALSE, FALSE, sizeof(struct mstate));
        }
        g_array_set_size(k->hist, 0);
        g_array_append_val(k->hist, k->cur);
        k->hist_epoch = f->epoch;
    }
    g_array_append_val(k->hist, s);
}

static void set_state(struct fuzz *f, struct mkey *k, struct mstate s, bool track)
{
    if (track && !f->cfg.plp) {
        note_possible(f, k, s);
    }
    if (k->cur.present) {
        f->present--;
        f->live_user_bytes -= k->klen + k->cur.len;
    }
    if (s.present) {
        f->present++;
        f->live_user_bytes += k->klen + s.len;
    }
    k->cur = s;
    k->mut_gen = ++f->mut_gen;
}

static uint32_t first4(const uint8_t *key, uint32_t klen)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < 4; i++) {
        v = v << 8 | (i < klen ? key[i] : 0);
    }
    return v;
}

/* A short fingerprint of the key bytes, to tell keys apart in messages. */
static uint32_t key_fp(const uint8_t *key, uint32_t klen)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < klen && i <= KVFTL_KEY_MAX_BYTES; i++) {
        h = (h ^ key[i]) * 16777619u;
    }
    return h;
}

static bool key_size_ok(uint32_t klen)
{
    return klen >= KVFTL_KEY_MIN_BYTES && klen <= KVFTL_KEY_MAX_BYTES;
}

/* ---------------- checks ---------------- */

static int trace = -1; /* KVFTL_FUZZ_TRACE */

static void check_time(struct fuzz *f, const char *op, const struct kvftl_cpl *c, uint64_t t)
{
    if (c->done_ns < t) {
        die(f, "%s: done_ns %" PRIu64 " < arrival %" PRIu64, op, c->done_ns, t);
    }
    f->now = t + 1000;
}

/*
 * After the cut fired every call fails with INTERNAL_ERROR; a call whose
 * arguments are invalid may instead get its argument error. Returns true if
 * the cut state decided the expectation.
 */
static bool fired_check(struct fuzz *f, const char *op, uint16_t st, uint16_t arg_err)
{
    if (!f->fired) {
        return false;
    }
    if (st != KVFTL_INTERNAL_ERROR && !(arg_err && st == arg_err)) {
        die(f, "%s after the power cut fired: status 0x%x, expected INTERNAL_ERROR", op, st);
    }
    return true;
}

static bool just_fired(struct fuzz *f, uint16_t st)
{
    if (st == KVFTL_INTERNAL_ERROR && f->armed && !f->fired) {
        f->fired = true;
        return true;
    }
    return false;
}

/* Does a full retrieve into @buf read as state @s? */
static bool buf_reads_as(struct fuzz *f, const struct mstate *s, const struct kvftl_cpl *c,
                         const uint8_t *buf)
{
    if (!s->present) {
        return c->status == KVFTL_KEY_DOES_NOT_EXIST;
    }
    if (c->status != KVFTL_OK || c->value_bytes != s->len || c->xfer_bytes != s->len) {
        return false;
    }
    value_fill(s->vseed, 0, f->exp, s->len);
    return memcmp(buf, f->exp, s->len) == 0;
}

static void readback_key(gpointer rec, const void **key, uint32_t *key_bytes)
{
    const struct mkey *k = rec;
    *key = k->key;
    *key_bytes = k->klen;
}

struct readback_ctx {
    struct fuzz *f;
    const char *why;
};

/* One key of verify_all(): its retrieve gave @c into @buf. */
static bool verify_one(void *ctx, gpointer rec, const struct kvftl_cpl *c, const uint8_t *buf)
{
    struct readback_ctx *x = ctx;
    struct fuzz *f = x->f;
    struct mkey *k = rec;
    if (trace > 0) {
        fprintf(stderr, "    %s: key %u B fp %08x reads status 0x%x len %u (model %s len %u)\n",
                x->why, k->klen, key_fp(k->key, k->klen), c->status, c->value_bytes,
                k->cur.present ? "present" : "absent", k->cur.len);
    }
    if (buf_reads_as(f, &k->cur, c, buf)) {
        return true;
    }
    if (k->hist_epoch == f->epoch) {
        for (unsigned i = 0; i < k->hist->len; i++) {
            struct mstate s = g_array_index(k->hist, struct mstate, i);
            if (buf_reads_as(f, &s, c, buf)) {
                set_state(f, k, s, false);
                return true;
            }
        }
    }
    die(f, "%s: key of %u B (fp %08x) reads as status 0x%x len %u; model: %s len %u", x->why,
        k->klen, key_fp(k->key, k->klen), c->status, c->value_bytes,
        k->cur.present ? "present" : "absent", k->cur.len);
    return false;
}

/*
 * Every key in one of its allowed states (adopting it), gauges, kvftl_check.
 * @remounted: after a power cycle, when what is read is what is durable;
 * otherwise (a check op) nothing becomes durable by being read. Keys are
 * read back through kvftl_retrieve_batch() (tests/common/kvftl_readback.h),
 * which must answer exactly as kvftl_retrieve().
 */
static void verify_all(struct fuzz *f, const char *why, bool remounted)
{
    struct readback_ctx x = { f, why };
    kvftl_read_back_all(f->ftl, f->keys, f->now, readback_key, verify_one, &x);
    if (remounted) {
        f->epoch++;
    }
    struct kvftl_stats st;
    kvftl_stats_get(f->ftl, &st);
    if (st.live_keys != f->present || st.live_user_bytes != f->live_user_bytes) {
        die(f, "%s: live_keys %" PRIu64 " live_user_bytes %" PRIu64 ", model %" PRIu64 " / %" PRIu64,
            why, st.live_keys, st.live_user_bytes, f->present, f->live_user_bytes);
    }
    char err[512] = "";
    if (kvftl_check(f->ftl, err, sizeof(err)) != 0) {
        die(f, "%s: kvftl_check: %s", why, err);
    }
}

/* ---------------- operations ---------------- */

static void trace_cpl(const char *op, const uint8_t *key, uint32_t klen, uint32_t vlen,
                      const struct kvftl_cpl *c)
{
    if (trace > 0) {
        fprintf(stderr, "    %s key %u B fp %08x len %u -> status 0x%x value_bytes %u\n", op,
                klen, key_fp(key, klen), vlen, c->status,
                c->value_bytes);
    }
}

static void op_store(struct fuzz *f, struct input *in, uint8_t *key, uint32_t klen, uint32_t vlen,
                     uint64_t vseed, uint32_t opt, uint32_t inl)
{
    struct mkey *k = key_size_ok(klen) ? find(f, key, klen, true) : NULL;
    uint32_t src = vlen <= VALUE_BUF_BYTES ? vlen : 0;
    value_fill(vseed, 0, f->val, src);
    struct kvftl_store_req req = { .key = key, .key_bytes = klen, .value = f->val,
                                   .value_bytes = vlen, .options = opt, .inline_bytes = inl,
                                   .arrival_ns = f->now };
    struct kvftl_cpl c;
    kvftl_store(f->ftl, &req, &c);
    trace_cpl("store", key, klen, vlen, &c);
    check_time(f, "store", &c, req.arrival_ns);

    /* Argument errors that apply; any one of them is a correct answer. */
    bool bad_key = !key_size_ok(klen), bad_val = vlen > KVFTL_VALUE_MAX_BYTES;
    bool odd_opt = (opt & ~3u) || opt == 3, odd_inl = inl > vlen;
    if (fired_check(f, "store", c.status, bad_key ? KVFTL_INVALID_KEY_SIZE
                                          : bad_val ? KVFTL_INVALID_VALUE_SIZE : 0)) {
        return;
    }
    if (bad_key || bad_val) {
        if (just_fired(f, c.status)) {
            return;
        }
        if (!((bad_key && c.status == KVFTL_INVALID_KEY_SIZE) ||
              (bad_val && c.status == KVFTL_INVALID_VALUE_SIZE) ||
              ((odd_opt || odd_inl) && c.status == KVFTL_INVALID_FIELD))) {
            die(f, "store key %u B value %u B: status 0x%x, expected a size error", klen, vlen,
                c.status);
        }
        return;
    }
    struct mstate ns = { true, vlen, vseed };
    uint16_t sem = KVFTL_OK;
    if ((opt & KVFTL_STORE_ONLY_IF_EXISTS) && !k->cur.present) {
        sem = KVFTL_KEY_DOES_NOT_EXIST;
    } else if ((opt & KVFTL_STORE_ONLY_IF_ABSENT) && k->cur.present) {
        sem = KVFTL_KEY_EXISTS;
    }
    if (just_fired(f, c.status)) {
        if (sem == KVFTL_OK) {
            note_possible(f, k, ns);
        }
        return;
    }
    if ((odd_opt || odd_inl) && c.status == KVFTL_INVALID_FIELD) {
        return;
    }
    if (sem == KVFTL_OK && c.status == KVFTL_CAPACITY_EXCEEDED) {
        if (!kvftl_refusal_plausible(f->ftl, klen, vlen, !k->cur.present)) {
            struct kvftl_stats st;
            kvftl_stats_get(f->ftl, &st);
            die(f, "store of %u B: CAPACITY_EXCEEDED with room left (live %llu + index %llu of %llu B)",
                vlen, (unsigned long long)st.live_nand_bytes, (unsigned long long)st.index_nand_bytes,
                (unsigned long long)st.capacity_bytes);
        }
        return;
    }
    if (c.status != sem) {
        die(f, "store key %u B value %u B opt 0x%x inline %u: status 0x%x, expected 0x%x", klen,
            vlen, opt, inl, c.status, sem);
    }
    if (sem == KVFTL_OK) {
        if (c.value_bytes != vlen) {
            die(f, "store: cpl.value_bytes %u, stored %u", c.value_bytes, vlen);
        }
        set_state(f, k, ns, true);
    }
}

static void op_retrieve(struct fuzz *f, uint8_t *key, uint32_t klen, uint32_t off, uint32_t bufb)
{
    struct mkey *k = key_size_ok(klen) ? find(f, key, klen, false) : NULL;
    struct mstate s = k ? k->cur : (struct mstate){ 0 };
    memset(f->buf + bufb, 0xa5, VALUE_BUF_BYTES + 16 - bufb < 16 ? VALUE_BUF_BYTES + 16 - bufb : 16);
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_retrieve(f->ftl, key, klen, f->buf, off, bufb, t, &c);
    check_time(f, "retrieve", &c, t);
    if (fired_check(f, "retrieve", c.status, key_size_ok(klen) ? 0 : KVFTL_INVALID_KEY_SIZE) ||
        just_fired(f, c.status)) {
        return;
    }
    enum kvftl_status want = !key_size_ok(klen) ? KVFTL_INVALID_KEY_SIZE
                  : !s.present ? KVFTL_KEY_DOES_NOT_EXIST
                  : off > s.len ? KVFTL_INVALID_FIELD : KVFTL_OK;
    if (c.status != want) {
        die(f, "retrieve key %u B off %u buf %u (model %s len %u): status 0x%x, expected 0x%x",
            klen, off, bufb, s.present ? "present" : "absent", s.len, c.status, want);
    }
    if (want != KVFTL_OK) {
        return;
    }
    uint32_t xfer = s.len - off < bufb ? s.len - off : bufb;
    if (c.value_bytes != s.len || c.xfer_bytes != xfer) {
        die(f, "retrieve off %u buf %u: value_bytes %u xfer %u, expected %u / %u", off, bufb,
            c.value_bytes, c.xfer_bytes, s.len, xfer);
    }
    value_fill(s.vseed, off, f->exp, xfer);
    if (memcmp(f->buf, f->exp, xfer) != 0) {
        die(f, "retrieve off %u buf %u of a %u-byte value: bytes differ", off, bufb, s.len);
    }
    for (uint32_t i = bufb; i < bufb + 16 && i < VALUE_BUF_BYTES + 16; i++) {
        if (f->buf[i] != 0xa5) {
            die(f, "retrieve wrote past its %u-byte buffer", bufb);
        }
    }
}

static void op_delete(struct fuzz *f, uint8_t *key, uint32_t klen)
{
    struct mkey *k = key_size_ok(klen) ? find(f, key, klen, true) : NULL;
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_delete(f->ftl, key, klen, t, &c);
    trace_cpl("delete", key, klen, 0, &c);
    check_time(f, "delete", &c, t);
    if (fired_check(f, "delete", c.status, k ? 0 : KVFTL_INVALID_KEY_SIZE)) {
        return;
    }
    if (!k) {
        if (c.status != KVFTL_INVALID_KEY_SIZE && !just_fired(f, c.status)) {
            die(f, "delete with a %u-byte key: status 0x%x", klen, c.status);
        }
        return;
    }
    if (just_fired(f, c.status)) {
        if (k->cur.present) {
            note_possible(f, k, (struct mstate){ 0 });
        }
        return;
    }
    enum kvftl_status want = k->cur.present ? KVFTL_OK : KVFTL_KEY_DOES_NOT_EXIST;
    if (c.status != want) {
        die(f, "delete key %u B: status 0x%x, expected 0x%x", klen, c.status, want);
    }
    if (k->cur.present) {
        set_state(f, k, (struct mstate){ 0 }, true);
    }
}

static void op_exist(struct fuzz *f, uint8_t *key, uint32_t klen)
{
    struct mkey *k = key_size_ok(klen) ? find(f, key, klen, false) : NULL;
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_exist(f->ftl, key, klen, t, &c);
    check_time(f, "exist", &c, t);
    if (fired_check(f, "exist", c.status, key_size_ok(klen) ? 0 : KVFTL_INVALID_KEY_SIZE) ||
        just_fired(f, c.status)) {
        return;
    }
    enum kvftl_status want = !key_size_ok(klen) ? KVFTL_INVALID_KEY_SIZE
                  : k && k->cur.present ? KVFTL_OK : KVFTL_KEY_DOES_NOT_EXIST;
    if (c.status != want) {
        die(f, "exist key %u B: status 0x%x, expected 0x%x", klen, c.status, want);
    }
}

static int emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                uint32_t value_bytes)
{
    struct fuzz *f = opaque;
    struct handle *h = f->cur_h;
    if (f->refuse & 1) {
        f->refuse >>= 1;
        return 1;
    }
    f->refuse >>= 1;
    if (!h) {
        die(f, "iterator callback called for a handle that is not open");
    }
    if (key_bytes < 1 || key_bytes > KVFTL_KEY_MAX_BYTES) {
        die(f, "iterator emitted a %u-byte key", key_bytes);
    }
    if ((first4(key, key_bytes) & h->mask) != (h->prefix & h->mask)) {
        die(f, "iterator prefix 0x%08x mask 0x%08x emitted first4 0x%08x", h->prefix, h->mask,
            first4(key, key_bytes));
    }
    struct mkey *k = find(f, key, key_bytes, false);
    if (!k || !k->cur.present) {
        die(f, "iterator emitted a key (%u B, first4 0x%08x) that is not live", key_bytes,
            first4(key, key_bytes));
    }
    if (g_hash_table_contains(h->seen, k)) {
        die(f, "iterator emitted a key (%u B) twice", key_bytes);
    }
    if (h->kv != (value != NULL)) {
        die(f, "iterator of kind %d emitted value pointer %p", h->kv, value);
    }
    if (h->kv && k->mut_gen <= h->open_gen) {
        value_fill(k->cur.vseed, 0, f->exp, k->cur.len);
        if (value_bytes != k->cur.len || memcmp(value, f->exp, value_bytes) != 0) {
            die(f, "iterator value (%u B) differs from the model (%u B)", value_bytes, k->cur.len);
        }
    }
    g_hash_table_add(h->seen, k);
    f->taken++;
    return 0;
}

static void close_model_handle(struct handle *h)
{
    if (h->seen) {
        g_hash_table_destroy(h->seen);
    }
    memset(h, 0, sizeof(*h));
}

static unsigned open_handles(struct fuzz *f)
{
    unsigned n = 0;
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        n += f->h[i].open;
    }
    return n;
}

static void op_iter_open(struct fuzz *f, uint32_t prefix, uint32_t mask, uint8_t kind)
{
    uint32_t h = 0xdeadbeef;
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_iter_open(f->ftl, prefix, mask, (enum kvftl_iter_kind)kind, t, &h, &c);
    check_time(f, "iter_open", &c, t);
    /* Handles open across a format may or may not still count (lenient). */
    unsigned lenient = 0;
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        lenient += f->h[i].open && f->h[i].lenient;
    }
    bool bad_kind = kind > KVFTL_ITER_KEY_VALUES, full = open_handles(f) == KVFTL_MAX_ITERATORS;
    if (full && lenient && !bad_kind && c.status == KVFTL_OK) {
        full = false; /* the device dropped the handles at format */
    }
    if (c.status == KVFTL_OK && h < KVFTL_MAX_ITERATORS && f->h[h].open && f->h[h].lenient) {
        close_model_handle(&f->h[h]);
    }
    if (fired_check(f, "iter_open", c.status, bad_kind ? KVFTL_INVALID_FIELD : 0) ||
        just_fired(f, c.status)) {
        return;
    }
    if (bad_kind || full) {
        if (!((bad_kind && c.status == KVFTL_INVALID_FIELD) ||
              (full && c.status == KVFTL_ITERATOR_LIMIT))) {
            die(f, "iter_open kind %u with %u open: status 0x%x", kind, open_handles(f), c.status);
        }
        return;
    }
    if (c.status != KVFTL_OK) {
        die(f, "iter_open: status 0x%x", c.status);
    }
    if (h >= KVFTL_MAX_ITERATORS || f->h[h].open) {
        die(f, "iter_open returned handle %u (open: %d)", h,
            h < KVFTL_MAX_ITERATORS ? f->h[h].open : -1);
    }
    struct handle *m = &f->h[h];
    m->open = true;
    m->prefix = prefix;
    m->mask = mask;
    m->kv = kind == KVFTL_ITER_KEY_VALUES;
    m->open_gen = ++f->mut_gen;
    m->seen = g_hash_table_new(g_direct_hash, g_direct_equal);
}

static void op_iter_next(struct fuzz *f, uint32_t handle, uint32_t max, uint32_t refuse)
{
    struct handle *h = handle < KVFTL_MAX_ITERATORS && f->h[handle].open ? &f->h[handle] : NULL;
    struct kvftl_cpl c;
    uint64_t t = f->now;
    f->cur_h = h;
    f->refuse = refuse;
    f->taken = 0;
    kvftl_iter_next(f->ftl, handle, max, emit, f, t, &c);
    f->cur_h = NULL;
    check_time(f, "iter_next", &c, t);
    if (fired_check(f, "iter_next", c.status, h ? 0 : KVFTL_INVALID_ITERATOR) ||
        just_fired(f, c.status)) {
        return;
    }
    if (h && h->lenient && c.status == KVFTL_INVALID_ITERATOR) {
        close_model_handle(h);
        return;
    }
    if (!h) {
        if (c.status != KVFTL_INVALID_ITERATOR || f->taken) {
            die(f, "iter_next on handle %u (not open): status 0x%x", handle, c.status);
        }
        return;
    }
    if (max == 0 && f->taken == 0 && (c.status == KVFTL_OK ||
                                      c.status == KVFTL_ITERATOR_END ||
                                      c.status == KVFTL_INVALID_FIELD)) {
        return; /* asking for 0 entries: the API leaves the answer open */
    }
    if (c.status != KVFTL_OK && c.status != KVFTL_ITERATOR_END) {
        die(f, "iter_next: status 0x%x", c.status);
    }
    if (c.value_bytes != f->taken || f->taken > max) {
        die(f, "iter_next reported %u entries, callback took %u, max %u", c.value_bytes, f->taken,
            max);
    }
    if (c.status == KVFTL_ITERATOR_END && !h->lenient) {
        GHashTableIter it;
        gpointer kp;
        g_hash_table_iter_init(&it, f->keys);
        while (g_hash_table_iter_next(&it, &kp, NULL)) {
            struct mkey *k = kp;
            if (k->cur.present && k->mut_gen <= h->open_gen &&
                (first4(k->key, k->klen) & h->mask) == (h->prefix & h->mask) &&
                !g_hash_table_contains(h->seen, k)) {
                die(f, "iterator ended without a key live since its open (%u B, first4 0x%08x)",
                    k->klen, first4(k->key, k->klen));
            }
        }
    }
}

static void op_iter_close(struct fuzz *f, uint32_t handle)
{
    struct handle *h = handle < KVFTL_MAX_ITERATORS && f->h[handle].open ? &f->h[handle] : NULL;
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_iter_close(f->ftl, handle, t, &c);
    check_time(f, "iter_close", &c, t);
    if (fired_check(f, "iter_close", c.status, h ? 0 : KVFTL_INVALID_ITERATOR) ||
        just_fired(f, c.status)) {
        if (h && c.status != KVFTL_INTERNAL_ERROR) {
            close_model_handle(h);
        }
        return;
    }
    enum kvftl_status want = h ? KVFTL_OK : KVFTL_INVALID_ITERATOR;
    if (c.status != want && !(h && h->lenient && c.status == KVFTL_INVALID_ITERATOR)) {
        die(f, "iter_close %u: status 0x%x, expected 0x%x", handle, c.status, want);
    }
    if (h) {
        close_model_handle(h);
    }
}

static void power_cycle(struct fuzz *f)
{
    char err[256] = "";
    if (kvftl_power_cycle(f->ftl, err, sizeof(err)) != 0) {
        die(f, "kvftl_power_cycle: %s", err);
    }
    f->armed = f->fired = false;
    /* A remount has no open iterators. */
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        close_model_handle(&f->h[i]);
    }
    struct kvftl_stats st;
    kvftl_stats_get(f->ftl, &st);
    if (st.sim_now_ns > f->now) {
        f->now = st.sim_now_ns;
    }
    verify_all(f, "after power cycle", true);
}

static void op_format(struct fuzz *f)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_format(f->ftl, t, &c);
    check_time(f, "format", &c, t);
    if (fired_check(f, "format", c.status, 0)) {
        return;
    }
    if (just_fired(f, c.status)) {
        /* Whether the format happened is open: every key may be gone. */
        GHashTableIter it;
        gpointer kp;
        g_hash_table_iter_init(&it, f->keys);
        while (g_hash_table_iter_next(&it, &kp, NULL)) {
            struct mkey *k = kp;
            if (k->cur.present) {
                note_possible(f, k, (struct mstate){ 0 });
            }
        }
        return;
    }
    if (c.status != KVFTL_OK) {
        die(f, "format: status 0x%x", c.status);
    }
    GHashTableIter it;
    gpointer kp;
    g_hash_table_iter_init(&it, f->keys);
    while (g_hash_table_iter_next(&it, &kp, NULL)) {
        struct mkey *k = kp;
        if (k->cur.present) {
            set_state(f, k, (struct mstate){ 0 }, false);
        }
    }
    f->epoch++;
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        if (f->h[i].open) {
            f->h[i].lenient = true;
        }
    }
}

static void setup(struct fuzz *f, uint8_t cb)
{
    static const uint32_t units[] = { 1, 64, 1024, 4096 };
    kvftl_config_preset(&f->cfg, "default");
    /*
     * ~17 MiB: 1 channel x 2 dies x 8 blocks of 272 4 KiB pages (an erase
     * stripe must hold the largest blob), the fewest blocks the GC
     * watermarks allow plus one, so GC and device-full come quickly.
     */
    f->cfg.channels = 1;
    f->cfg.dies_per_channel = 2;
    f->cfg.blocks_per_die = 8;
    f->cfg.pages_per_block = 272;
    f->cfg.page_size_bytes = 4096;
    f->cfg.gc_high_watermark_blocks = 3;
    f->cfg.gc_low_watermark_blocks = 2;
    f->cfg.index_page_bytes = 4096;
    f->cfg.buffer_entries = 4;
    f->cfg.dlt_entries = 4;
    f->cfg.packing = (enum kvftl_packing)(cb & 3);
    f->cfg.plp = (cb >> 2) & 1;
    f->cfg.placement_unit_bytes = units[(cb >> 3) & 3];
    f->cfg.bloom = (cb >> 5) & 1;
    f->cfg.gc_policy = (cb >> 6) & 1 ? KVFTL_GC_COST_BENEFIT : KVFTL_GC_GREEDY;
    f->cfg.index_dram_bytes = (cb >> 7) & 1 ? 3 * 4096 : 256 * 1024; /* tiny: 2 pages + Bloom */
    f->cfg.max_keys = 0;
    f->cfg.image_path = NULL;
    f->cfg.hash_seed = 1; /* one index layout per input: a finding replays (the default is a random secret) */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *val, *buf, *exp;
    if (!val) {
        val = g_malloc(VALUE_BUF_BYTES);
        buf = g_malloc(VALUE_BUF_BYTES + 16);
        exp = g_malloc(VALUE_BUF_BYTES);
    }
    struct input in = { data, size };
    struct fuzz f;
    memset(&f, 0, sizeof(f));
    f.val = val;
    f.buf = buf;
    f.exp = exp;
    f.epoch = 1;
    f.now = 1000;
    setup(&f, in_u8(&in));
    char err[256] = "";
    if (kvftl_config_check(&f.cfg, err, sizeof(err)) != 0) {
        die(&f, "config rejected: %s", err);
    }
    f.ftl = kvftl_open(&f.cfg, err, sizeof(err));
    if (!f.ftl) {
        die(&f, "kvftl_open: %s", err);
    }
    f.keys = g_hash_table_new_full(mkey_hash, mkey_equal, NULL, mkey_free);

    uint8_t key[KVFTL_KEY_MAX_BYTES + 1];
    if (trace < 0) {
        trace = getenv("KVFTL_FUZZ_TRACE") != NULL;
    }
    while (in.n && f.opno < MAX_OPS) {
        f.opno++;
        uint8_t op = in_u8(&in) % 14;
        if (trace) {
            static const char *const names[] = { "store", "retrieve", "delete", "exist", "flush",
                "iter_open", "iter_next", "iter_close", "power_cut_after", "power_cycle",
                "format", "check", "idle", "store+retrieve" };
            fprintf(stderr, "op %" PRIu64 ": %s (armed %d fired %d, %" PRIu64 " live keys)\n",
                    f.opno, names[op], f.armed, f.fired, f.present);
        }
        switch (op) {
        case 0: {
            uint32_t klen = decode_key(&in, key);
            uint32_t vlen = decode_vlen(&in);
            uint64_t vseed = mix64(in_u8(&in) + f.opno * 977);
            uint8_t o = in_u8(&in);
            uint32_t opt = o & 0x80 ? in_u32(&in) : (o & 3);
            uint8_t i = in_u8(&in);
            uint32_t inl = i < 100 ? 0 : i < 200 ? vlen : i < 250 ? (vlen ? vlen / 2 : 0)
                         : vlen + (i - 249);
            op_store(&f, &in, key, klen, vlen, vseed, opt, inl);
            break;
        }
        case 1: {
            uint32_t klen = decode_key(&in, key);
            uint8_t os = in_u8(&in), bs = in_u8(&in);
            uint32_t off = os < 200 ? os : os < 250 ? (uint32_t)(os - 199) * 4096 : in_u32(&in);
            uint32_t bufb = bs < 100 ? bs : bs < 250 ? VALUE_BUF_BYTES - 64
                          : in_u32(&in) % (VALUE_BUF_BYTES + 1);
            op_retrieve(&f, key, klen, off, bufb);
            break;
        }
        case 2: {
            uint32_t klen = decode_key(&in, key);
            op_delete(&f, key, klen);
            break;
        }
        case 3: {
            uint32_t klen = decode_key(&in, key);
            op_exist(&f, key, klen);
            break;
        }
        case 4: {
            struct kvftl_cpl c;
            uint64_t t = f.now;
            kvftl_flush(f.ftl, t, &c);
            check_time(&f, "flush", &c, t);
            if (!fired_check(&f, "flush", c.status, 0) && !just_fired(&f, c.status)) {
                if (c.status != KVFTL_OK) {
                    die(&f, "flush: status 0x%x", c.status);
                }
                f.epoch++;
            }
            break;
        }
        case 5: {
            uint32_t prefix = in_u32(&in), mask = in_u32(&in);
            op_iter_open(&f, prefix, mask, in_u8(&in));
            break;
        }
        case 6: {
            uint8_t hb = in_u8(&in), mb = in_u8(&in), rb = in_u8(&in);
            uint32_t handle = hb < 240 ? hb % KVFTL_MAX_ITERATORS : hb == 255 ? UINT32_MAX : hb;
            op_iter_next(&f, handle, mb, rb);
            break;
        }
        case 7: {
            uint8_t hb = in_u8(&in);
            uint32_t handle = hb < 240 ? hb % KVFTL_MAX_ITERATORS : hb == 255 ? UINT32_MAX : hb;
            op_iter_close(&f, handle);
            break;
        }
        case 8: {
            uint8_t n = in_u8(&in);
            if (!f.armed) {
                kvftl_power_cut_after(f.ftl, n);
                f.armed = n != 0;
            }
            break;
        }
        case 9:
            power_cycle(&f);
            break;
        case 10:
            op_format(&f);
            break;
        case 11:
            if (!f.armed) {
                verify_all(&f, "check op", false);
            }
            break;
        case 12:
            f.now += (uint64_t)in_u16(&in) * 1000;
            break;
        default: {
            /* Store then read back the same key (read-your-write across buffer states). */
            uint32_t klen = decode_key(&in, key);
            uint32_t vlen = decode_vlen(&in);
            op_store(&f, &in, key, klen, vlen % (KVFTL_VALUE_MAX_BYTES + 1),
                     mix64(f.opno), 0, in_u8(&in) & 1 ? vlen : 0);
            op_retrieve(&f, key, klen, 0, VALUE_BUF_BYTES);
            break;
        }
        }
    }
    if (f.armed) {
        power_cycle(&f);
    } else {
        verify_all(&f, "end of input", false);
    }
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        close_model_handle(&f.h[i]);
    }
    kvftl_close(f.ftl);
    g_hash_table_destroy(f.keys);
    return 0;
}
