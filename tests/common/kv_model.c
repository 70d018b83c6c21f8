/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The crash-aware reference model of a KV store: see kv_model.h. */
#include "kv_model.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "kvftl_capacity.h"
#include "kvftl_readback.h"

#define GUARD_BYTE 0xa5
#define NO_HANDLE UINT32_MAX

static bool mismatch(struct kv_model *m, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool mismatch(struct kv_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->mismatch, sizeof(m->mismatch), fmt, ap);
    va_end(ap);
    return false;
}

/* How a key is named in a mismatch: its length, iterator group and fingerprint. */
struct key_desc {
    char s[64];
};

static struct key_desc key_desc(const void *key, uint32_t klen)
{
    struct key_desc d;
    snprintf(d.s, sizeof(d.s), "key (%u B, first4 0x%08x, fp %08x)", klen,
             kv_model_first4(key, klen), kv_model_key_fp(key, klen));
    return d;
}

static const char *state_name(const struct kv_model_state *s)
{
    return s->present ? "present" : "absent";
}

uint32_t kv_model_first4(const void *key, uint32_t klen)
{
    const uint8_t *k = key;
    uint32_t v = 0;
    for (unsigned i = 0; i < 4; i++) {
        v = v << 8 | (i < klen ? k[i] : 0);
    }
    return v;
}

uint32_t kv_model_key_fp(const void *key, uint32_t klen)
{
    const uint8_t *k = key;
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < klen && i <= KVFTL_KEY_MAX_BYTES; i++) {
        h = (h ^ k[i]) * 16777619u;
    }
    return h;
}

static bool key_size_ok(uint32_t klen)
{
    return klen >= KVFTL_KEY_MIN_BYTES && klen <= KVFTL_KEY_MAX_BYTES;
}

/* ---------------- keys and states ---------------- */

static guint key_hash(gconstpointer p)
{
    const struct kv_model_key *k = p;
    uint64_t h = 0xcbf29ce484222325ull ^ k->klen;
    for (unsigned i = 0; i < k->klen; i++) {
        h = (h ^ k->key[i]) * 0x100000001b3ull;
    }
    return (guint)(h ^ (h >> 32));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const struct kv_model_key *x = a, *y = b;
    return x->klen == y->klen && memcmp(x->key, y->key, x->klen) == 0;
}

static void key_free(gpointer p)
{
    struct kv_model_key *k = p;
    if (k->hist) {
        g_array_free(k->hist, TRUE);
    }
    g_free(k);
}

static void iter_drop(struct kv_model_iter *h)
{
    if (h->seen) {
        g_hash_table_destroy(h->seen);
    }
    memset(h, 0, sizeof(*h));
}

void kv_model_init(struct kv_model *m, bool plp, kv_model_fill_fn fill, uint8_t *exp)
{
    memset(m, 0, sizeof(*m));
    m->keys = g_hash_table_new_full(key_hash, key_equal, NULL, key_free);
    m->epoch = 1;
    m->plp = plp;
    m->fill = fill;
    m->exp = exp;
    m->next_handle = NO_HANDLE;
}

void kv_model_destroy(struct kv_model *m)
{
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        iter_drop(&m->iter[i]);
    }
    g_hash_table_destroy(m->keys);
    m->keys = NULL;
}

struct kv_model_key *kv_model_find(struct kv_model *m, const void *key, uint32_t klen, bool create)
{
    struct kv_model_key probe;
    probe.klen = klen;
    memcpy(probe.key, key, klen);
    struct kv_model_key *k = g_hash_table_lookup(m->keys, &probe);
    if (!k && create) {
        k = g_new0(struct kv_model_key, 1);
        k->klen = klen;
        memcpy(k->key, key, klen);
        g_hash_table_add(m->keys, k);
    }
    return k;
}

/* Remember @s as a state a remount may return for @k (its current one is always allowed). */
static void note_possible(struct kv_model *m, struct kv_model_key *k, struct kv_model_state s)
{
    if (k->hist_epoch != m->epoch) {
        if (!k->hist) {
            k->hist = g_array_new(FALSE, FALSE, sizeof(struct kv_model_state));
        }
        g_array_set_size(k->hist, 0);
        g_array_append_val(k->hist, k->cur);
        k->hist_epoch = m->epoch;
    }
    g_array_append_val(k->hist, s);
}

void kv_model_set(struct kv_model *m, struct kv_model_key *k, struct kv_model_state s,
                  bool completed)
{
    if (completed && !m->plp) {
        note_possible(m, k, s);
    }
    if (k->cur.present) {
        m->present--;
        m->live_user_bytes -= k->klen + k->cur.len;
    }
    if (s.present) {
        m->present++;
        m->live_user_bytes += k->klen + s.len;
    }
    k->cur = s;
    k->mut_gen = ++m->mut_gen;
}

/* ---------------- power cuts ---------------- */

void kv_model_cut_armed(struct kv_model *m, uint64_t nand_programs)
{
    m->armed = nand_programs != 0;
}

void kv_model_durable(struct kv_model *m)
{
    m->epoch++;
}

void kv_model_remounted(struct kv_model *m)
{
    m->armed = m->fired = false;
    m->ops_after_fire = 0;
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        iter_drop(&m->iter[i]);
    }
}

/*
 * Once the cut has fired, every operation fails with INTERNAL_ERROR, or
 * with @arg_err (KVFTL_OK: none) when its arguments are invalid. Returns
 * true when the cut decides the verdict, in *@ok.
 */
static bool after_fire(struct kv_model *m, const char *op, enum kvftl_status st,
                       enum kvftl_status arg_err, bool *ok)
{
    if (!m->fired) {
        return false;
    }
    m->ops_after_fire++;
    *ok = st == KVFTL_INTERNAL_ERROR || (arg_err != KVFTL_OK && st == arg_err);
    if (!*ok) {
        mismatch(m, "%s after the power cut fired: status %s, expected INTERNAL_ERROR%s%s", op,
                 kvftl_status_name(st), arg_err != KVFTL_OK ? " or " : "",
                 arg_err != KVFTL_OK ? kvftl_status_name(arg_err) : "");
    }
    return true;
}

static bool in_time(struct kv_model *m, const char *op, const struct kvftl_cpl *c, uint64_t arrival)
{
    if (c->done_ns < arrival) {
        return mismatch(m, "%s: done_ns %" PRIu64 " before arrival %" PRIu64, op, c->done_ns,
                        arrival);
    }
    return true;
}

/*
 * What every judge checks first: the completion's time, then a cut that has
 * fired (after_fire). Returns true when they settle the verdict, in *@ok.
 */
static bool settled(struct kv_model *m, const char *op, const struct kvftl_cpl *c, uint64_t arrival,
                    enum kvftl_status arg_err, bool *ok)
{
    if (!in_time(m, op, c, arrival)) {
        *ok = false;
        return true;
    }
    return after_fire(m, op, c->status, arg_err, ok);
}

/* An INTERNAL_ERROR while a cut is armed is the cut firing. */
static bool fires_now(struct kv_model *m, enum kvftl_status st)
{
    if (st == KVFTL_INTERNAL_ERROR && m->armed && !m->fired) {
        m->fired = true;
        m->cuts_fired++;
        return true;
    }
    return false;
}

/* ---------------- operations ---------------- */

bool kv_model_store(struct kv_model *m, struct kvftl *ftl, const struct kvftl_store_req *req,
                    uint64_t vseed, const struct kvftl_cpl *c)
{
    const uint32_t known = KVFTL_STORE_ONLY_IF_EXISTS | KVFTL_STORE_ONLY_IF_ABSENT;
    uint32_t klen = req->key_bytes, vlen = req->value_bytes, opt = req->options;
    enum kvftl_status st = c->status;
    bool bad_key = !key_size_ok(klen), bad_val = vlen > KVFTL_VALUE_MAX_BYTES;
    bool odd_opt = (opt & ~known) || opt == known, odd_inl = req->inline_bytes > vlen;
    /* a valid key is remembered even when the store fails: it must stay as it was */
    struct kv_model_key *k = bad_key ? NULL : kv_model_find(m, req->key, klen, true);
    enum kvftl_status arg_err = bad_key   ? KVFTL_INVALID_KEY_SIZE
                                : bad_val ? KVFTL_INVALID_VALUE_SIZE
                                          : KVFTL_OK;
    bool ok;
    if (settled(m, "store", c, req->arrival_ns, arg_err, &ok)) {
        return ok;
    }
    if (bad_key || bad_val) {
        if (fires_now(m, st) || (bad_key && st == KVFTL_INVALID_KEY_SIZE) ||
            (bad_val && st == KVFTL_INVALID_VALUE_SIZE) ||
            ((odd_opt || odd_inl) && st == KVFTL_INVALID_FIELD)) {
            return true;
        }
        return mismatch(m, "store of a %u-byte key and a %u-byte value: status %s, expected %s",
                        klen, vlen, kvftl_status_name(st),
                        bad_key && bad_val ? "INVALID_KEY_SIZE or INVALID_VALUE_SIZE"
                        : bad_key          ? "INVALID_KEY_SIZE"
                                           : "INVALID_VALUE_SIZE");
    }
    struct kv_model_state ns = {.present = true, .len = vlen, .vseed = vseed};
    enum kvftl_status sem = KVFTL_OK;
    if ((opt & KVFTL_STORE_ONLY_IF_EXISTS) && !k->cur.present) {
        sem = KVFTL_KEY_DOES_NOT_EXIST;
    } else if ((opt & KVFTL_STORE_ONLY_IF_ABSENT) && k->cur.present) {
        sem = KVFTL_KEY_EXISTS;
    }
    if (fires_now(m, st)) {
        if (sem == KVFTL_OK) {
            note_possible(m, k, ns); /* it may have been stored, whole */
        }
        return true;
    }
    if ((odd_opt || odd_inl) && st == KVFTL_INVALID_FIELD) {
        return true;
    }
    if (sem == KVFTL_OK && st == KVFTL_CAPACITY_EXCEEDED) {
        if (!kvftl_refusal_plausible(ftl, klen, vlen, !k->cur.present)) {
            struct kvftl_stats s;
            kvftl_stats_get(ftl, &s);
            return mismatch(m,
                            "store of %u B returned CAPACITY_EXCEEDED with room left: live "
                            "%" PRIu64 " + index %" PRIu64 " of %" PRIu64 " B (%" PRIu64 " keys; "
                            "free stripes %" PRIu64 " of %" PRIu64 ", gc_runs %" PRIu64 ", index "
                            "pages evicted dirty %" PRIu64 ")",
                            vlen, s.live_nand_bytes, s.index_nand_bytes, s.capacity_bytes,
                            s.live_keys, s.free_stripes, s.total_stripes, s.gc_runs,
                            s.index_pages_evicted_dirty);
        }
        return true;
    }
    if (st != sem) {
        return mismatch(m,
                        "store of a %s and a %u-byte value, options 0x%x, inline %u (model: %s): "
                        "status %s, expected %s",
                        key_desc(req->key, klen).s, vlen, opt, req->inline_bytes,
                        state_name(&k->cur), kvftl_status_name(st), kvftl_status_name(sem));
    }
    if (sem == KVFTL_OK) {
        if (c->value_bytes != vlen) {
            return mismatch(m, "store: cpl.value_bytes %u, stored %u", c->value_bytes, vlen);
        }
        kv_model_set(m, k, ns, true);
    }
    return true;
}

static uint32_t guard_len(uint32_t buf_bytes, size_t buf_cap)
{
    if (buf_bytes >= buf_cap) {
        return 0;
    }
    return buf_cap - buf_bytes < KV_MODEL_GUARD_BYTES ? (uint32_t)(buf_cap - buf_bytes)
                                                      : KV_MODEL_GUARD_BYTES;
}

void kv_model_guard(const struct kvftl_retrieve_req *req, size_t buf_cap)
{
    memset((uint8_t *)req->buf + req->buf_bytes, GUARD_BYTE, guard_len(req->buf_bytes, buf_cap));
}

bool kv_model_retrieve(struct kv_model *m, const struct kvftl_retrieve_req *req, size_t buf_cap,
                       const struct kvftl_cpl *c)
{
    uint32_t klen = req->key_bytes, off = req->offset, bufb = req->buf_bytes;
    const uint8_t *buf = req->buf;
    enum kvftl_status st = c->status;
    struct kv_model_key *k = key_size_ok(klen) ? kv_model_find(m, req->key, klen, false) : NULL;
    struct kv_model_state s = k ? k->cur : (struct kv_model_state){0};
    bool ok;
    for (uint32_t i = 0; i < guard_len(bufb, buf_cap); i++) {
        if (buf[bufb + i] != GUARD_BYTE) {
            return mismatch(m, "retrieve (status %s) wrote past its %u-byte buffer (byte %u)",
                            kvftl_status_name(st), bufb, bufb + i);
        }
    }
    if (settled(m, "retrieve", c, req->arrival_ns,
                key_size_ok(klen) ? KVFTL_OK : KVFTL_INVALID_KEY_SIZE, &ok)) {
        return ok;
    }
    if (fires_now(m, st)) {
        return true;
    }
    enum kvftl_status want = !key_size_ok(klen) ? KVFTL_INVALID_KEY_SIZE
                             : !s.present       ? KVFTL_KEY_DOES_NOT_EXIST
                             : off > s.len      ? KVFTL_INVALID_FIELD
                                                : KVFTL_OK;
    if (st != want) {
        return mismatch(m,
                        "retrieve of a %s at offset %u into %u B (model: %s, %u B): status %s, "
                        "expected %s",
                        key_desc(req->key, klen).s, off, bufb, state_name(&s), s.len,
                        kvftl_status_name(st), kvftl_status_name(want));
    }
    if (want != KVFTL_OK) {
        return true;
    }
    uint32_t xfer = s.len - off < bufb ? s.len - off : bufb;
    if (c->value_bytes != s.len || c->xfer_bytes != xfer) {
        return mismatch(m,
                        "retrieve at offset %u into %u B: value_bytes %u xfer_bytes %u, "
                        "expected %u and %u",
                        off, bufb, c->value_bytes, c->xfer_bytes, s.len, xfer);
    }
    m->fill(s.vseed, off, m->exp, xfer);
    if (memcmp(buf, m->exp, xfer) != 0) {
        uint32_t i = 0;
        while (buf[i] == m->exp[i]) {
            i++;
        }
        return mismatch(m,
                        "retrieve at offset %u into %u B of a %u-byte value: byte %u of the "
                        "window (value offset %u) is 0x%02x, expected 0x%02x",
                        off, bufb, s.len, i, off + i, buf[i], m->exp[i]);
    }
    return true;
}

bool kv_model_delete(struct kv_model *m, const void *key, uint32_t klen, uint64_t arrival_ns,
                     const struct kvftl_cpl *c)
{
    enum kvftl_status st = c->status;
    struct kv_model_key *k = key_size_ok(klen) ? kv_model_find(m, key, klen, true) : NULL;
    bool ok;
    if (settled(m, "delete", c, arrival_ns, k ? KVFTL_OK : KVFTL_INVALID_KEY_SIZE, &ok)) {
        return ok;
    }
    if (fires_now(m, st)) {
        if (k && k->cur.present) {
            note_possible(m, k, (struct kv_model_state){0}); /* it may be gone */
        }
        return true;
    }
    enum kvftl_status want = !k               ? KVFTL_INVALID_KEY_SIZE
                             : k->cur.present ? KVFTL_OK
                                              : KVFTL_KEY_DOES_NOT_EXIST;
    if (st != want) {
        return mismatch(m, "delete of a %s (model: %s): status %s, expected %s",
                        key_desc(key, klen).s, k ? state_name(&k->cur) : "invalid",
                        kvftl_status_name(st), kvftl_status_name(want));
    }
    if (want == KVFTL_OK) {
        kv_model_set(m, k, (struct kv_model_state){0}, true);
    }
    return true;
}

bool kv_model_exist(struct kv_model *m, const void *key, uint32_t klen, uint64_t arrival_ns,
                    const struct kvftl_cpl *c)
{
    enum kvftl_status st = c->status;
    struct kv_model_key *k = key_size_ok(klen) ? kv_model_find(m, key, klen, false) : NULL;
    bool ok;
    if (settled(m, "exist", c, arrival_ns, key_size_ok(klen) ? KVFTL_OK : KVFTL_INVALID_KEY_SIZE,
                &ok)) {
        return ok;
    }
    if (fires_now(m, st)) {
        return true;
    }
    enum kvftl_status want = !key_size_ok(klen)    ? KVFTL_INVALID_KEY_SIZE
                             : k && k->cur.present ? KVFTL_OK
                                                   : KVFTL_KEY_DOES_NOT_EXIST;
    if (st != want) {
        return mismatch(m, "exist of a %s (model: %s): status %s, expected %s",
                        key_desc(key, klen).s, k && k->cur.present ? "present" : "absent",
                        kvftl_status_name(st), kvftl_status_name(want));
    }
    return true;
}

bool kv_model_flush(struct kv_model *m, uint64_t arrival_ns, const struct kvftl_cpl *c)
{
    bool ok;
    if (settled(m, "flush", c, arrival_ns, KVFTL_OK, &ok)) {
        return ok;
    }
    if (fires_now(m, c->status)) {
        return true;
    }
    if (c->status != KVFTL_OK) {
        return mismatch(m, "flush: status %s, expected OK", kvftl_status_name(c->status));
    }
    m->epoch++; /* everything so far is durable, with or without PLP */
    return true;
}

bool kv_model_format(struct kv_model *m, uint64_t arrival_ns, const struct kvftl_cpl *c)
{
    GHashTableIter it;
    gpointer kp;
    bool ok;
    if (settled(m, "format", c, arrival_ns, KVFTL_OK, &ok)) {
        return ok;
    }
    if (fires_now(m, c->status)) {
        /* Whether the format happened is open: every key may be gone. */
        g_hash_table_iter_init(&it, m->keys);
        while (g_hash_table_iter_next(&it, &kp, NULL)) {
            struct kv_model_key *k = kp;
            if (k->cur.present) {
                note_possible(m, k, (struct kv_model_state){0});
            }
        }
        return true;
    }
    if (c->status != KVFTL_OK) {
        return mismatch(m, "format: status %s, expected OK", kvftl_status_name(c->status));
    }
    g_hash_table_iter_init(&it, m->keys);
    while (g_hash_table_iter_next(&it, &kp, NULL)) {
        struct kv_model_key *k = kp;
        if (k->cur.present) {
            kv_model_set(m, k, (struct kv_model_state){0}, false);
        }
    }
    m->epoch++;
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        if (m->iter[i].open) {
            m->iter[i].lenient = true;
        }
    }
    return true;
}

/* ---------------- iterators ---------------- */

static unsigned iter_count(const struct kv_model *m, bool lenient_only)
{
    unsigned n = 0;
    for (unsigned i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        n += m->iter[i].open && (!lenient_only || m->iter[i].lenient);
    }
    return n;
}

static struct kv_model_iter *open_iter(struct kv_model *m, uint32_t handle)
{
    return handle < KVFTL_MAX_ITERATORS && m->iter[handle].open ? &m->iter[handle] : NULL;
}

bool kv_model_iter_open(struct kv_model *m, uint32_t prefix, uint32_t mask, uint32_t kind,
                        uint64_t arrival_ns, uint32_t handle, const struct kvftl_cpl *c)
{
    enum kvftl_status st = c->status;
    bool bad_kind = kind > KVFTL_ITER_KEY_VALUES;
    bool full = iter_count(m, false) == KVFTL_MAX_ITERATORS;
    bool ok;
    if (settled(m, "iter_open", c, arrival_ns, bad_kind ? KVFTL_INVALID_FIELD : KVFTL_OK, &ok)) {
        return ok;
    }
    if (fires_now(m, st)) {
        return true;
    }
    /* Handles open across a format may or may not still count. */
    if (full && iter_count(m, true) && !bad_kind && st == KVFTL_OK) {
        full = false; /* the device dropped them at the format */
    }
    if (st == KVFTL_OK && handle < KVFTL_MAX_ITERATORS && m->iter[handle].open &&
        m->iter[handle].lenient) {
        iter_drop(&m->iter[handle]);
    }
    if (bad_kind || full) {
        if ((bad_kind && st == KVFTL_INVALID_FIELD) || (full && st == KVFTL_ITERATOR_LIMIT)) {
            return true;
        }
        return mismatch(m, "iter_open of kind %u with %u handles open: status %s, expected %s",
                        kind, iter_count(m, false), kvftl_status_name(st),
                        bad_kind && full ? "INVALID_FIELD or ITERATOR_LIMIT"
                        : bad_kind       ? "INVALID_FIELD"
                                         : "ITERATOR_LIMIT");
    }
    if (st != KVFTL_OK) {
        return mismatch(m, "iter_open (prefix 0x%08x mask 0x%08x kind %u): status %s, expected OK",
                        prefix, mask, kind, kvftl_status_name(st));
    }
    if (handle >= KVFTL_MAX_ITERATORS || m->iter[handle].open) {
        return mismatch(m, "iter_open returned handle %u, %s", handle,
                        handle >= KVFTL_MAX_ITERATORS ? "out of range" : "which is already open");
    }
    struct kv_model_iter *h = &m->iter[handle];
    h->open = true;
    h->prefix = prefix;
    h->mask = mask;
    h->kv = kind == KVFTL_ITER_KEY_VALUES;
    h->open_gen = m->mut_gen;
    h->seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    return true;
}

void kv_model_iter_next_begin(struct kv_model *m, uint32_t handle)
{
    m->next_handle = handle;
    m->next_offered = m->next_taken = 0;
}

bool kv_model_iter_entry(struct kv_model *m, const void *key, uint32_t key_bytes, const void *value,
                         uint32_t value_bytes, bool taken)
{
    struct kv_model_iter *h = open_iter(m, m->next_handle);
    m->next_offered++;
    if (!h) {
        return mismatch(m, "iter_next on handle %u, which is not open, offered an entry",
                        m->next_handle);
    }
    if (key_bytes < KVFTL_KEY_MIN_BYTES || key_bytes > KVFTL_KEY_MAX_BYTES) {
        return mismatch(m, "iterator emitted a key of %u bytes", key_bytes);
    }
    uint32_t first4 = kv_model_first4(key, key_bytes);
    if ((first4 & h->mask) != (h->prefix & h->mask)) {
        return mismatch(m, "iterator (prefix 0x%08x mask 0x%08x) emitted a key with first4 0x%08x",
                        h->prefix, h->mask, first4);
    }
    struct kv_model_key *k = kv_model_find(m, key, key_bytes, false);
    if (!k || !k->cur.present) {
        return mismatch(m, "iterator emitted a %s the model says is %s", key_desc(key, key_bytes).s,
                        k ? "deleted" : "never stored");
    }
    if (g_hash_table_contains(h->seen, k)) {
        return mismatch(m, "iterator emitted a %s twice", key_desc(key, key_bytes).s);
    }
    if (h->kv && !value) {
        return mismatch(m, "key+value iterator emitted a NULL value");
    }
    if (!h->kv && value) {
        return mismatch(m, "key-only iterator emitted a value");
    }
    /* a key changed during the iteration may be seen in either state */
    if (h->kv && k->mut_gen <= h->open_gen) {
        if (value_bytes != k->cur.len) {
            return mismatch(m, "iterator value of %u bytes, model %u", value_bytes, k->cur.len);
        }
        m->fill(k->cur.vseed, 0, m->exp, k->cur.len);
        if (memcmp(value, m->exp, k->cur.len) != 0) {
            return mismatch(m, "iterator value bytes differ from the model (len %u)", k->cur.len);
        }
    }
    if (taken) {
        g_hash_table_add(h->seen, k);
        m->next_taken++;
    }
    return true;
}

/* At the end of @h: every key live and unchanged since the open was returned. */
static bool iter_complete(struct kv_model *m, struct kv_model_iter *h)
{
    GHashTableIter it;
    gpointer kp;
    uint64_t expected = 0;
    g_hash_table_iter_init(&it, m->keys);
    while (g_hash_table_iter_next(&it, &kp, NULL)) {
        struct kv_model_key *k = kp;
        if (!k->cur.present ||
            (kv_model_first4(k->key, k->klen) & h->mask) != (h->prefix & h->mask) ||
            k->mut_gen > h->open_gen) {
            continue;
        }
        expected++;
        if (!g_hash_table_contains(h->seen, k)) {
            return mismatch(m,
                            "iterator (prefix 0x%08x mask 0x%08x) ended without a %s live "
                            "since its open",
                            h->prefix, h->mask, key_desc(k->key, k->klen).s);
        }
    }
    if (m->mut_gen == h->open_gen && g_hash_table_size(h->seen) != expected) {
        return mismatch(m,
                        "iterator (prefix 0x%08x mask 0x%08x) returned %u keys, model has "
                        "%" PRIu64,
                        h->prefix, h->mask, g_hash_table_size(h->seen), expected);
    }
    return true;
}

bool kv_model_iter_next(struct kv_model *m, uint32_t handle, uint32_t max_entries,
                        uint64_t arrival_ns, const struct kvftl_cpl *c)
{
    enum kvftl_status st = c->status;
    struct kv_model_iter *h = open_iter(m, handle);
    uint32_t taken = m->next_taken, offered = m->next_offered;
    bool ok;
    m->next_handle = NO_HANDLE;
    if (settled(m, "iter_next", c, arrival_ns, h ? KVFTL_OK : KVFTL_INVALID_ITERATOR, &ok)) {
        return ok;
    }
    if (fires_now(m, st)) {
        return true;
    }
    if (h && h->lenient && st == KVFTL_INVALID_ITERATOR) {
        iter_drop(h);
        return true;
    }
    if (!h) {
        if (st != KVFTL_INVALID_ITERATOR || offered) {
            return mismatch(m,
                            "iter_next on handle %u, which is not open: status %s after %u "
                            "entries offered, expected INVALID_ITERATOR and none",
                            handle, kvftl_status_name(st), offered);
        }
        return true;
    }
    if (max_entries == 0 && taken == 0 &&
        (st == KVFTL_OK || st == KVFTL_ITERATOR_END || st == KVFTL_INVALID_FIELD)) {
        return true; /* asking for 0 entries: the API leaves the answer open */
    }
    if (st != KVFTL_OK && st != KVFTL_ITERATOR_END) {
        return mismatch(m, "iter_next: status %s, expected OK or ITERATOR_END",
                        kvftl_status_name(st));
    }
    if (c->value_bytes != taken || taken > max_entries) {
        return mismatch(m, "iter_next reported %u entries, the callback took %u (max %u)",
                        c->value_bytes, taken, max_entries);
    }
    if (st == KVFTL_ITERATOR_END && !h->lenient) {
        return iter_complete(m, h);
    }
    return true;
}

bool kv_model_iter_close(struct kv_model *m, uint32_t handle, uint64_t arrival_ns,
                         const struct kvftl_cpl *c)
{
    enum kvftl_status st = c->status;
    struct kv_model_iter *h = open_iter(m, handle);
    bool ok;
    if (settled(m, "iter_close", c, arrival_ns, h ? KVFTL_OK : KVFTL_INVALID_ITERATOR, &ok)) {
        return ok;
    }
    if (fires_now(m, st)) {
        return true;
    }
    enum kvftl_status want = h ? KVFTL_OK : KVFTL_INVALID_ITERATOR;
    if (st != want && !(h && h->lenient && st == KVFTL_INVALID_ITERATOR)) {
        return mismatch(m, "iter_close of handle %u: status %s, expected %s", handle,
                        kvftl_status_name(st), kvftl_status_name(want));
    }
    if (h) {
        iter_drop(h);
    }
    return true;
}

/* ---------------- reading everything back ---------------- */

/* Does a whole-value retrieve that answered @c into @buf read as state @s? */
static bool reads_as(struct kv_model *m, const struct kv_model_state *s, const struct kvftl_cpl *c,
                     const uint8_t *buf)
{
    if (!s->present) {
        return c->status == KVFTL_KEY_DOES_NOT_EXIST;
    }
    if (c->status != KVFTL_OK || c->value_bytes != s->len || c->xfer_bytes != s->len) {
        return false;
    }
    m->fill(s->vseed, 0, m->exp, s->len);
    return memcmp(buf, m->exp, s->len) == 0;
}

bool kv_model_judge_read(struct kv_model *m, struct kv_model_key *k, const struct kvftl_cpl *c,
                         const uint8_t *buf, bool remounted, const char *why)
{
    if (reads_as(m, &k->cur, c, buf)) {
        return true;
    }
    bool open = remounted && k->hist_epoch == m->epoch;
    for (unsigned i = 0; open && i < k->hist->len; i++) {
        struct kv_model_state s = g_array_index(k->hist, struct kv_model_state, i);
        if (reads_as(m, &s, c, buf)) {
            kv_model_set(m, k, s, false); /* the state recovery chose */
            return true;
        }
    }
    char allowed[64] = "";
    if (open) {
        snprintf(allowed, sizeof(allowed), " (or one of %u states a remount may return)",
                 k->hist->len);
    }
    return mismatch(m, "%s: %s reads as %s, %u B (xfer %u); model: %s, %u B%s", why,
                    key_desc(k->key, k->klen).s, kvftl_status_name(c->status), c->value_bytes,
                    c->xfer_bytes, state_name(&k->cur), k->cur.len, allowed);
}

bool kv_model_read_back_key(struct kv_model *m, struct kvftl *ftl, struct kv_model_key *k,
                            uint64_t arrival_ns, uint8_t *buf, const char *why, bool remounted)
{
    bool definite = !remounted || k->hist_epoch != m->epoch;
    struct kvftl_cpl c;
    kvftl_retrieve(ftl, k->key, k->klen, buf, 0, KVFTL_VALUE_MAX_BYTES, arrival_ns, &c);
    if (!in_time(m, "retrieve", &c, arrival_ns) ||
        !kv_model_judge_read(m, k, &c, buf, remounted, why)) {
        return false;
    }
    if (!definite) {
        return true;
    }
    kvftl_exist(ftl, k->key, k->klen, arrival_ns, &c);
    enum kvftl_status want = k->cur.present ? KVFTL_OK : KVFTL_KEY_DOES_NOT_EXIST;
    if (c.status != want) {
        return mismatch(m, "%s: exist of a %s gave %s, expected %s", why,
                        key_desc(k->key, k->klen).s, kvftl_status_name(c.status),
                        kvftl_status_name(want));
    }
    return true;
}

bool kv_model_read_back_each(struct kv_model *m, struct kvftl *ftl, uint64_t arrival_ns,
                             uint8_t *buf, const char *why, bool remounted)
{
    GHashTableIter it;
    gpointer kp;
    bool ok = true;
    g_hash_table_iter_init(&it, m->keys);
    while (ok && g_hash_table_iter_next(&it, &kp, NULL)) {
        ok = kv_model_read_back_key(m, ftl, kp, arrival_ns, buf, why, remounted);
    }
    if (remounted) {
        m->epoch++; /* what was read is what is durable */
    }
    return ok;
}

struct read_back {
    struct kv_model *m;
    const char *why;
    uint64_t arrival_ns;
    bool remounted, ok;
};

static void read_back_key(gpointer rec, const void **key, uint32_t *key_bytes)
{
    const struct kv_model_key *k = rec;
    *key = k->key;
    *key_bytes = k->klen;
}

static bool read_back_check(void *ctx, gpointer rec, const struct kvftl_cpl *c, const uint8_t *buf)
{
    struct read_back *x = ctx;
    struct kv_model_key *k = rec;
    if (x->m->trace) {
        fprintf(x->m->trace, "    %s: key %u B fp %08x reads status %s len %u (model %s len %u)\n",
                x->why, k->klen, kv_model_key_fp(k->key, k->klen), kvftl_status_name(c->status),
                c->value_bytes, state_name(&k->cur), k->cur.len);
    }
    x->ok = in_time(x->m, "batched retrieve", c, x->arrival_ns) &&
            kv_model_judge_read(x->m, k, c, buf, x->remounted, x->why);
    return x->ok;
}

bool kv_model_read_back_batched(struct kv_model *m, struct kvftl *ftl, uint64_t arrival_ns,
                                const char *why, bool remounted, uint64_t *reads)
{
    struct read_back x = {m, why, arrival_ns, remounted, true};
    uint64_t n = kvftl_read_back_all(ftl, m->keys, arrival_ns, read_back_key, read_back_check, &x);
    if (reads) {
        *reads += n;
    }
    if (remounted) {
        m->epoch++; /* what was read is what is durable */
    }
    return x.ok;
}

bool kv_model_check_device(struct kv_model *m, struct kvftl *ftl, const char *why)
{
    char err[400] = "";
    if (kvftl_check(ftl, err, sizeof(err)) != 0) {
        return mismatch(m, "%s: kvftl_check: %s", why, err);
    }
    struct kvftl_stats st;
    kvftl_stats_get(ftl, &st);
    if (st.live_keys != m->present || st.live_user_bytes != m->live_user_bytes) {
        return mismatch(m,
                        "%s: stats live_keys %" PRIu64 " live_user_bytes %" PRIu64 ", model "
                        "%" PRIu64 " keys %" PRIu64 " bytes",
                        why, st.live_keys, st.live_user_bytes, m->present, m->live_user_bytes);
    }
    return true;
}
