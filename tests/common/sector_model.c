/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The crash-aware reference model of a block device: see sector_model.h. */
#include "sector_model.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "rng.h"

#define GUARD_BYTE 0x5a

static bool mismatch(struct sector_model *m, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool mismatch(struct sector_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->mismatch, sizeof(m->mismatch), fmt, ap);
    va_end(ap);
    return false;
}

/* ---------------- contents ---------------- */

/*
 * The fuzz build instruments every comparison for coverage; the model's
 * byte generators and comparisons are not what the fuzzer explores and
 * took most of its time, so they are left out.
 */
#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

static void put_le64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

/*
 * Word w (from 2) of block (lba, gen) is seed ^ w * K with seed a hash of
 * both: every block of every write differs in every word, and a block
 * costs one multiply per 8 bytes to generate.
 */
NO_COVERAGE void sector_model_fill(uint32_t lba_bytes, uint64_t lba, uint64_t gen, uint8_t *dst)
{
    if (gen == 0) {
        memset(dst, 0, lba_bytes);
        return;
    }
    put_le64(dst, lba);
    put_le64(dst + 8, gen);
    uint64_t seed = mix64(gen ^ mix64(lba));
    for (uint32_t w = 2; w < lba_bytes / 8; w++) {
        uint64_t v = seed ^ (w * 0x9e3779b97f4a7c15ull);
        memcpy(dst + 8 * w, &v, 8);
    }
}

void sector_model_fill_range(const struct sector_model *m, uint64_t slba, uint32_t nlb,
                             uint64_t gen, uint8_t *dst)
{
    for (uint32_t i = 0; i < nlb; i++) {
        sector_model_fill(m->lba_bytes, slba + i, gen, dst + (size_t)i * m->lba_bytes);
    }
}

static bool all_zero(const uint8_t *p, uint32_t n)
{
    return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Does block @blk read as block @lba of generation @gen? */
NO_COVERAGE static bool block_is(struct sector_model *m, uint64_t lba, uint64_t gen,
                                 const uint8_t *blk)
{
    if (gen == 0) {
        return all_zero(blk, m->lba_bytes);
    }
    if (get_le64(blk) != lba || get_le64(blk + 8) != gen) {
        return false;
    }
    sector_model_fill(m->lba_bytes, lba, gen, m->exp);
    return memcmp(blk, m->exp, m->lba_bytes) == 0;
}

/* What block @blk holds, in words: zeroes, a write's data, or neither. */
struct blk_desc {
    char s[96];
};

static struct blk_desc describe(struct sector_model *m, const uint8_t *blk)
{
    struct blk_desc d;
    uint64_t lba = get_le64(blk), gen = get_le64(blk + 8);
    if (all_zero(blk, m->lba_bytes)) {
        snprintf(d.s, sizeof(d.s), "zeroes");
    } else if (gen != 0 && block_is(m, lba, gen, blk)) {
        snprintf(d.s, sizeof(d.s), "the data of lba %" PRIu64 " generation %" PRIu64, lba, gen);
    } else {
        snprintf(d.s, sizeof(d.s),
                 "no write's data (its header: lba %" PRIu64 " generation %" PRIu64 ")", lba, gen);
    }
    return d;
}

static struct blk_desc gen_desc(uint64_t gen)
{
    struct blk_desc d;
    if (gen == 0) {
        snprintf(d.s, sizeof(d.s), "zeroes");
    } else {
        snprintf(d.s, sizeof(d.s), "generation %" PRIu64, gen);
    }
    return d;
}

/* ---------------- units and states ---------------- */

static uint64_t *unit_state(struct sector_model *m, uint64_t u)
{
    return m->cur + u * m->lbas_per_unit;
}

/* The blocks of unit @u inside the namespace (the last unit may be short). */
static uint32_t unit_blocks(const struct sector_model *m, uint64_t u)
{
    uint64_t first = u * m->lbas_per_unit;
    uint64_t left = m->lbas - first;
    return left < m->lbas_per_unit ? (uint32_t)left : m->lbas_per_unit;
}

static bool state_zero(const struct sector_model *m, const uint64_t *s)
{
    for (uint32_t i = 0; i < m->lbas_per_unit; i++) {
        if (s[i]) {
            return false;
        }
    }
    return true;
}

static gpointer unit_key(uint64_t u)
{
    return GSIZE_TO_POINTER((gsize)u + 1);
}

static void free_hist(gpointer p)
{
    g_array_free(p, TRUE);
}

void sector_model_init(struct sector_model *m, uint32_t lba_bytes, uint64_t lbas, bool plp)
{
    memset(m, 0, sizeof(*m));
    m->lba_bytes = lba_bytes;
    m->lbas_per_unit = KVFTL_BLOCK_UNIT_BYTES / lba_bytes;
    m->max_nlb = KVFTL_BLOCK_MAX_XFER_BYTES / lba_bytes;
    m->lbas = lbas;
    m->units = (lbas + m->lbas_per_unit - 1) / m->lbas_per_unit;
    m->plp = plp;
    m->cur = g_new0(uint64_t, m->units * m->lbas_per_unit);
    m->mapped = g_malloc0(m->units); /* SECTOR_UNMAPPED */
    m->pending = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_hist);
    m->exp = g_malloc(lba_bytes);
}

void sector_model_destroy(struct sector_model *m)
{
    g_free(m->cur);
    g_free(m->mapped);
    g_free(m->exp);
    g_hash_table_destroy(m->pending);
    m->cur = NULL;
    m->exp = NULL;
    m->pending = NULL;
}

uint64_t sector_model_next_gen(struct sector_model *m)
{
    return ++m->gen;
}

/* Remember @s as a state a remount may return for unit @u (cur is always one). */
static void note_possible(struct sector_model *m, uint64_t u, const uint64_t *s)
{
    size_t w = m->lbas_per_unit;
    GArray *h = g_hash_table_lookup(m->pending, unit_key(u));
    if (!h) {
        h = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_array_append_vals(h, unit_state(m, u), (guint)w);
        g_hash_table_insert(m->pending, unit_key(u), h);
    }
    /* the same state twice in a row (a unit zeroed again) is remembered once */
    if (memcmp(&g_array_index(h, uint64_t, h->len - w), s, w * sizeof(uint64_t)) != 0) {
        g_array_append_vals(h, s, (guint)w);
    }
}

/* Unit @u is now in state @s, given by an operation that completed now. */
static void set_unit(struct sector_model *m, uint64_t u, const uint64_t *s, bool durable)
{
    uint64_t *cur = unit_state(m, u);
    if (durable) {
        g_hash_table_remove(m->pending, unit_key(u));
    } else if (!m->plp) {
        note_possible(m, u, s);
    }
    bool was = !state_zero(m, cur), now = !state_zero(m, s);
    m->nonzero_units += (uint64_t)now - (uint64_t)was;
    memcpy(cur, s, m->lbas_per_unit * sizeof(uint64_t));
}

/* ---------------- power cuts ---------------- */

void sector_model_cut_armed(struct sector_model *m, uint64_t nand_programs)
{
    m->armed = nand_programs != 0;
}

void sector_model_durable(struct sector_model *m)
{
    g_hash_table_remove_all(m->pending);
}

void sector_model_remounted(struct sector_model *m)
{
    m->armed = m->fired = false;
    m->ops_after_fire = 0;
}

static bool in_time(struct sector_model *m, const char *op, const struct kvftl_cpl *c,
                    uint64_t arrival)
{
    if (c->done_ns < arrival) {
        return mismatch(m, "%s: done_ns %" PRIu64 " before arrival %" PRIu64, op, c->done_ns,
                        arrival);
    }
    return true;
}

/*
 * What every judge checks first: the completion's time, then a cut that has
 * fired (every operation fails with INTERNAL_ERROR, or with @arg_err when
 * its range is invalid). Returns true when they settle the verdict, in *@ok.
 */
static bool settled(struct sector_model *m, const char *op, const struct kvftl_cpl *c,
                    uint64_t arrival, enum kvftl_status arg_err, bool *ok)
{
    if (!in_time(m, op, c, arrival)) {
        *ok = false;
        return true;
    }
    if (!m->fired) {
        return false;
    }
    m->ops_after_fire++;
    *ok = c->status == KVFTL_INTERNAL_ERROR || (arg_err != KVFTL_OK && c->status == arg_err);
    if (!*ok) {
        mismatch(m, "%s after the power cut fired: status %s, expected INTERNAL_ERROR%s%s", op,
                 kvftl_status_name(c->status), arg_err != KVFTL_OK ? " or " : "",
                 arg_err != KVFTL_OK ? kvftl_status_name(arg_err) : "");
    }
    return true;
}

/* An INTERNAL_ERROR while a cut is armed is the cut firing. */
static bool fires_now(struct sector_model *m, enum kvftl_status st)
{
    if (st == KVFTL_INTERNAL_ERROR && m->armed && !m->fired) {
        m->fired = true;
        m->cuts_fired++;
        return true;
    }
    return false;
}

/* ---------------- operations ---------------- */

/* @xfer: a command that moves data (read, write), bounded by max_nlb. */
static bool range_ok(const struct sector_model *m, uint64_t slba, uint32_t nlb, bool xfer)
{
    return nlb >= 1 && (!xfer || nlb <= m->max_nlb) && slba < m->lbas && nlb <= m->lbas - slba;
}

enum range_op {
    OP_WRITE,   /* every block of the range gets the generation */
    OP_ZEROES,  /* every block of the range reads zeroes */
    OP_DEALLOC, /* the units the range covers whole read zeroes */
};

static const char *const op_names[] = {"write", "write zeroes", "deallocate"};

/*
 * The judge of a write, write zeroes or deallocate of [@slba, @slba + @nlb)
 * that answered @c.
 */
static bool range_op(struct sector_model *m, enum range_op op, uint64_t slba, uint32_t nlb,
                     uint64_t gen, bool fua, uint64_t arrival, const struct kvftl_cpl *c)
{
    const char *name = op_names[op];
    bool valid = range_ok(m, slba, nlb, op == OP_WRITE);
    bool ok;
    if (settled(m, name, c, arrival, valid ? KVFTL_OK : KVFTL_INVALID_FIELD, &ok)) {
        return ok;
    }
    bool fired = fires_now(m, c->status);
    if (!valid) {
        if (fired || c->status == KVFTL_INVALID_FIELD) {
            return true;
        }
        char limit[40] = "";
        if (op == OP_WRITE) {
            snprintf(limit, sizeof(limit), ", at most %u a command", m->max_nlb);
        }
        return mismatch(m,
                        "%s of %u blocks at lba %" PRIu64 " (namespace %" PRIu64 " blocks%s): "
                        "status %s, expected INVALID_FIELD",
                        name, nlb, slba, m->lbas, limit, kvftl_status_name(c->status));
    }
    if (!fired && c->status != KVFTL_OK) {
        return mismatch(m, "%s of %u blocks at lba %" PRIu64 ": status %s, expected OK", name, nlb,
                        slba, kvftl_status_name(c->status));
    }
    uint32_t lpu = m->lbas_per_unit;
    uint64_t end = slba + nlb;
    uint64_t next[KVFTL_BLOCK_UNIT_BYTES / 512];
    for (uint64_t u = slba / lpu; u * lpu < end; u++) {
        uint64_t first = u * lpu, last = first + unit_blocks(m, u); /* [first, last) */
        bool whole = first >= slba && last <= end;
        memcpy(next, unit_state(m, u), lpu * sizeof(uint64_t));
        if (op == OP_DEALLOC) {
            if (!whole) {
                continue; /* a partial unit at an end is left as it was */
            }
            memset(next, 0, sizeof(next));
        } else {
            for (uint64_t l = first > slba ? first : slba; l < last && l < end; l++) {
                next[l - first] = op == OP_WRITE ? gen : 0;
            }
        }
        if (fired) {
            note_possible(m, u, next); /* it may have reached this unit, whole */
            continue;
        }
        set_unit(m, u, next, fua);
        /* a write maps the unit; zeroes or deallocate of the whole unit unmap it; a partial
         * write zeroes read-modify-writes a mapped unit and leaves an unmapped one */
        if (op == OP_WRITE) {
            m->mapped[u] = SECTOR_MAPPED;
        } else if (whole) {
            m->mapped[u] = SECTOR_UNMAPPED;
        }
    }
    return true;
}

bool sector_model_write(struct sector_model *m, uint64_t slba, uint32_t nlb, uint64_t gen, bool fua,
                        uint64_t arrival_ns, const struct kvftl_cpl *c)
{
    if (gen == 0 || gen > m->gen) {
        return mismatch(
            m, "harness: write of generation %" PRIu64 ", which the model did not hand out", gen);
    }
    return range_op(m, OP_WRITE, slba, nlb, gen, fua, arrival_ns, c);
}

bool sector_model_write_zeroes(struct sector_model *m, uint64_t slba, uint32_t nlb,
                               uint64_t arrival_ns, const struct kvftl_cpl *c)
{
    return range_op(m, OP_ZEROES, slba, nlb, 0, false, arrival_ns, c);
}

bool sector_model_deallocate(struct sector_model *m, uint64_t slba, uint32_t nlb,
                             uint64_t arrival_ns, const struct kvftl_cpl *c)
{
    return range_op(m, OP_DEALLOC, slba, nlb, 0, false, arrival_ns, c);
}

bool sector_model_flush(struct sector_model *m, uint64_t arrival_ns, const struct kvftl_cpl *c)
{
    bool ok;
    if (settled(m, "flush", c, arrival_ns, KVFTL_OK, &ok)) {
        return ok;
    }
    if (fires_now(m, c->status)) {
        return true; /* what the flush reached is open: everything since the last one stays allowed
                      */
    }
    if (c->status != KVFTL_OK) {
        return mismatch(m, "flush: status %s, expected OK", kvftl_status_name(c->status));
    }
    sector_model_durable(m);
    return true;
}

bool sector_model_format(struct sector_model *m, uint64_t arrival_ns, const struct kvftl_cpl *c)
{
    bool ok;
    if (settled(m, "format", c, arrival_ns, KVFTL_OK, &ok)) {
        return ok;
    }
    if (fires_now(m, c->status)) {
        /* Whether the format reached a unit is open: each may read zeroes. */
        uint64_t zero[KVFTL_BLOCK_UNIT_BYTES / 512] = {0};
        for (uint64_t u = 0; u < m->units; u++) {
            if (!state_zero(m, unit_state(m, u)) ||
                g_hash_table_contains(m->pending, unit_key(u))) {
                note_possible(m, u, zero);
            }
        }
        return true;
    }
    if (c->status != KVFTL_OK) {
        return mismatch(m, "format: status %s, expected OK", kvftl_status_name(c->status));
    }
    memset(m->cur, 0, m->units * m->lbas_per_unit * sizeof(uint64_t));
    memset(m->mapped, SECTOR_UNMAPPED, m->units);
    m->nonzero_units = 0;
    sector_model_durable(m);
    return true;
}

/* ---------------- reads ---------------- */

static size_t guard_len(size_t want, size_t buf_cap)
{
    if (want >= buf_cap) {
        return 0;
    }
    return buf_cap - want < SECTOR_MODEL_GUARD_BYTES ? buf_cap - want : SECTOR_MODEL_GUARD_BYTES;
}

void sector_model_guard(const struct sector_model *m, uint32_t nlb, uint8_t *buf, size_t buf_cap)
{
    size_t want = (size_t)nlb * m->lba_bytes;
    memset(buf + (want < buf_cap ? want : buf_cap), GUARD_BYTE, guard_len(want, buf_cap));
}

/* Block @lba read as @blk on a live device: its current state, or a sentence why not. */
static bool judge_block(struct sector_model *m, uint64_t lba, const uint8_t *blk, const char *why)
{
    uint64_t gen = m->cur[lba];
    if (block_is(m, lba, gen, blk)) {
        return true;
    }
    sector_model_fill(m->lba_bytes, lba, gen, m->exp);
    uint32_t i = 0;
    while (i < m->lba_bytes && blk[i] == m->exp[i]) {
        i++;
    }
    uint8_t want = m->exp[i];
    return mismatch(m,
                    "%s: lba %" PRIu64 " byte %u is 0x%02x, expected 0x%02x: it reads as %s; "
                    "model: %s",
                    why, lba, i, blk[i], want, describe(m, blk).s, gen_desc(gen).s);
}

bool sector_model_read(struct sector_model *m, uint64_t slba, uint32_t nlb, uint64_t arrival_ns,
                       const struct kvftl_cpl *c, const uint8_t *buf, size_t buf_cap)
{
    bool valid = range_ok(m, slba, nlb, true);
    bool ok;
    if (settled(m, "read", c, arrival_ns, valid ? KVFTL_OK : KVFTL_INVALID_FIELD, &ok)) {
        return ok;
    }
    if (fires_now(m, c->status)) {
        return true;
    }
    enum kvftl_status want = valid ? KVFTL_OK : KVFTL_INVALID_FIELD;
    if (c->status != want) {
        return mismatch(m,
                        "read of %u blocks at lba %" PRIu64 " (namespace %" PRIu64 " blocks): "
                        "status %s, expected %s",
                        nlb, slba, m->lbas, kvftl_status_name(c->status), kvftl_status_name(want));
    }
    size_t bytes = (size_t)nlb * m->lba_bytes;
    size_t g = guard_len(bytes, buf_cap);
    for (size_t i = 0; i < g; i++) {
        if (buf[bytes + i] != GUARD_BYTE) {
            return mismatch(
                m, "read of %u blocks (status %s) wrote past its %zu-byte buffer (byte %zu)", nlb,
                kvftl_status_name(c->status), bytes, bytes + i);
        }
    }
    if (!valid) {
        return true;
    }
    char why[64];
    snprintf(why, sizeof(why), "read of %u blocks at lba %" PRIu64, nlb, slba);
    for (uint32_t i = 0; i < nlb; i++) {
        if (!judge_block(m, slba + i, buf + (size_t)i * m->lba_bytes, why)) {
            return false;
        }
    }
    return true;
}

/* Do the blocks of unit @u in @buf read as state @s? */
NO_COVERAGE static bool unit_is(struct sector_model *m, uint64_t u, const uint64_t *s,
                                const uint8_t *buf)
{
    uint32_t n = unit_blocks(m, u);
    for (uint32_t i = 0; i < n; i++) {
        if (!block_is(m, u * m->lbas_per_unit + i, s[i], buf + (size_t)i * m->lba_bytes)) {
            return false;
        }
    }
    return true;
}

/*
 * A remount returned unit @u as state @s, one of several it may have
 * returned: whether it is mapped follows from its contents, except for a
 * zero unit of several blocks, which a partial Write Zeroes may have left
 * mapped (read-modify-written) in any of those states.
 */
static void remount_mapped(struct sector_model *m, uint64_t u, const uint64_t *s)
{
    if (!state_zero(m, s)) {
        m->mapped[u] = SECTOR_MAPPED;
    } else if (m->lbas_per_unit == 1) {
        m->mapped[u] = SECTOR_UNMAPPED;
    } else {
        m->mapped[u] = SECTOR_MAYBE_MAPPED;
    }
}

bool sector_model_judge_unit(struct sector_model *m, uint64_t u, const uint8_t *buf, bool remounted,
                             const char *why)
{
    uint64_t *cur = unit_state(m, u);
    GArray *h = remounted ? g_hash_table_lookup(m->pending, unit_key(u)) : NULL;
    if (unit_is(m, u, cur, buf)) {
        if (h) {
            remount_mapped(m, u, cur);
            g_hash_table_remove(m->pending, unit_key(u)); /* what was read is durable */
        }
        return true;
    }
    uint32_t lpu = m->lbas_per_unit;
    for (guint i = 0; h && i < h->len; i += lpu) {
        const uint64_t *s = &g_array_index(h, uint64_t, i);
        if (unit_is(m, u, s, buf)) {
            uint64_t adopted[KVFTL_BLOCK_UNIT_BYTES / 512];
            memcpy(adopted, s, lpu * sizeof(uint64_t));
            if (m->trace) {
                /* state 0 is the one of the last durable point */
                fprintf(m->trace, "    %s: unit %" PRIu64 " came back in its state %u of %u\n", why,
                        u, i / lpu, h->len / lpu);
            }
            remount_mapped(m, u, adopted);
            set_unit(m, u, adopted, true); /* the state recovery chose (frees h) */
            m->adopted++;
            return true;
        }
    }
    /* The first block that differs from the current state, named. */
    uint32_t n = unit_blocks(m, u), b = 0;
    while (b + 1 < n && block_is(m, u * lpu + b, cur[b], buf + (size_t)b * m->lba_bytes)) {
        b++;
    }
    char allowed[80] = "";
    if (h) {
        snprintf(allowed, sizeof(allowed), " (nor any of the %u other states a remount may return)",
                 h->len / lpu - 1);
    }
    return mismatch(m,
                    "%s: unit %" PRIu64 " (lba %" PRIu64 "-%" PRIu64 "): lba %" PRIu64
                    " reads as %s; model: %s%s",
                    why, u, u * lpu, u * lpu + n - 1, u * lpu + b,
                    describe(m, buf + (size_t)b * m->lba_bytes).s, gen_desc(cur[b]).s, allowed);
}

/* One read-back read's completion: in time and OK. */
static bool read_back_ok(struct sector_model *m, const struct kvftl_cpl *c, uint64_t arrival_ns,
                         const char *why, uint64_t slba, uint64_t nlb)
{
    if (!in_time(m, "read-back", c, arrival_ns)) {
        return false;
    }
    if (c->status != KVFTL_OK) {
        return mismatch(m,
                        "%s: read of %" PRIu64 " blocks at lba %" PRIu64 ": status %s, "
                        "expected OK",
                        why, nlb, slba, kvftl_status_name(c->status));
    }
    return true;
}

/*
 * The namespace read back in windows of as many units as @buf_bytes holds,
 * from unit 0 on: each window as one read of at most the largest transfer
 * (@batched false) or as one kvftl_block_read_batch() of a read per unit,
 * at most SECTOR_MODEL_READ_BATCH of them; every unit judged.
 */
static bool read_back(struct sector_model *m, struct kvftl *ftl, uint64_t arrival_ns, uint8_t *buf,
                      size_t buf_bytes, bool batched, const char *why, bool remounted,
                      uint64_t *units_read)
{
    uint64_t per = buf_bytes / KVFTL_BLOCK_UNIT_BYTES;
    uint64_t max_units = batched ? SECTOR_MODEL_READ_BATCH : m->max_nlb / m->lbas_per_unit;
    if (per > max_units) {
        per = max_units;
    }
    if (per == 0) {
        return mismatch(m, "harness: a read-back buffer of %zu bytes holds no unit", buf_bytes);
    }
    struct kvftl_block_read_req req[SECTOR_MODEL_READ_BATCH];
    struct kvftl_cpl cpl[SECTOR_MODEL_READ_BATCH];
    for (uint64_t u = 0; u < m->units; u += per) {
        uint64_t slba = u * m->lbas_per_unit;
        uint64_t nlb = per * m->lbas_per_unit;
        if (nlb > m->lbas - slba) {
            nlb = m->lbas - slba;
        }
        uint64_t n = per < m->units - u ? per : m->units - u;
        if (batched) {
            for (uint64_t i = 0; i < n; i++) {
                uint64_t s = slba + i * m->lbas_per_unit;
                uint64_t k = m->lbas - s < m->lbas_per_unit ? m->lbas - s : m->lbas_per_unit;
                req[i] = (struct kvftl_block_read_req){.slba = s,
                                                       .nlb = (uint32_t)k,
                                                       .buf = buf + i * KVFTL_BLOCK_UNIT_BYTES,
                                                       .arrival_ns = arrival_ns};
            }
            kvftl_block_read_batch(ftl, req, cpl, n);
            for (uint64_t i = 0; i < n; i++) {
                if (!read_back_ok(m, &cpl[i], arrival_ns, why, req[i].slba, req[i].nlb)) {
                    return false;
                }
            }
        } else {
            struct kvftl_cpl c;
            kvftl_block_read(ftl, slba, (uint32_t)nlb, buf, arrival_ns, &c);
            if (!read_back_ok(m, &c, arrival_ns, why, slba, nlb)) {
                return false;
            }
        }
        for (uint64_t v = u; v < u + n; v++) {
            if (!sector_model_judge_unit(m, v, buf + (v - u) * KVFTL_BLOCK_UNIT_BYTES, remounted,
                                         why)) {
                return false;
            }
        }
        if (units_read) {
            *units_read += n;
        }
    }
    if (remounted) {
        sector_model_durable(m); /* what was read is what is durable */
    }
    return true;
}

bool sector_model_read_back(struct sector_model *m, struct kvftl *ftl, uint64_t arrival_ns,
                            uint8_t *buf, size_t buf_bytes, const char *why, bool remounted,
                            uint64_t *units_read)
{
    return read_back(m, ftl, arrival_ns, buf, buf_bytes, false, why, remounted, units_read);
}

bool sector_model_read_back_batched(struct sector_model *m, struct kvftl *ftl, uint64_t arrival_ns,
                                    uint8_t *buf, size_t buf_bytes, const char *why, bool remounted,
                                    uint64_t *units_read)
{
    return read_back(m, ftl, arrival_ns, buf, buf_bytes, true, why, remounted, units_read);
}

bool sector_model_check_device(struct sector_model *m, struct kvftl *ftl, const char *why)
{
    char err[400] = "";
    if (kvftl_check(ftl, err, sizeof(err)) != 0) {
        return mismatch(m, "%s: kvftl_check: %s", why, err);
    }
    return sector_model_check_gauges(m, ftl, why);
}

bool sector_model_check_gauges(struct sector_model *m, struct kvftl *ftl, const char *why)
{
    uint64_t lbas = kvftl_block_lbas(ftl);
    if (lbas != m->lbas) {
        return mismatch(m, "%s: kvftl_block_lbas() is %" PRIu64 ", the model's namespace %" PRIu64,
                        why, lbas, m->lbas);
    }
    uint64_t mapped = 0, maybe = 0;
    for (uint64_t u = 0; u < m->units; u++) {
        mapped += m->mapped[u] == SECTOR_MAPPED;
        maybe += m->mapped[u] == SECTOR_MAYBE_MAPPED;
    }
    struct kvftl_stats st;
    kvftl_stats_get(ftl, &st);
    if (st.live_keys < mapped || st.live_keys > mapped + maybe) {
        char range[48] = "";
        if (maybe) {
            snprintf(range, sizeof(range), " to %" PRIu64, mapped + maybe);
        }
        return mismatch(m, "%s: stats live_keys (mapped units) %" PRIu64 ", model %" PRIu64 "%s",
                        why, st.live_keys, mapped, range);
    }
    return true;
}
