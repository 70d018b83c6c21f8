/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A run of the model suite: its device, model, randomness and failure report (model.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"

extern uint32_t pm983_test_fanout_log; /* kvftl/kv/index/pm983/pm983_levels.h */

/* ---------------- values and keys ---------------- */

/*
 * Value bytes: byte p of the value with seed s is byte (p % 8) of
 * mix64(s ^ (p / 8) * K). Counter-based, so any window can be generated
 * without the bytes before it.
 */
void value_fill(uint64_t seed, uint32_t off, uint8_t *dst, uint32_t n)
{
    uint64_t word_ix = off / 8;
    uint32_t skip = off % 8;
    while (n) {
        uint64_t w = mix64(seed ^ (word_ix * 0xd6e8feb86659fd93ull));
        uint8_t b[8];
        memcpy(b, &w, 8);
        uint32_t take = 8 - skip;
        if (take > n) {
            take = n;
        }
        memcpy(dst, b + skip, take);
        dst += take;
        n -= take;
        skip = 0;
        word_ix++;
    }
}

/*
 * A small set of 4-byte prefixes, several differing in one byte or one bit,
 * so that iterator masks select interesting subsets and keys shorter than
 * 4 bytes (zero-padded for grouping) share buckets with longer ones.
 */
static const uint32_t key_prefixes[] = {
    0x00000000, 0x00000001, 0x00000100, 0x61626364, 0x61626365, 0x61626400,
    0x75736572, 0x75736500, 0x80000000, 0xffffffff, 0xffffff00, 0x12345678,
};
#define N_PREFIXES (sizeof(key_prefixes) / sizeof(key_prefixes[0]))

/* Lengths skewed short. */
uint32_t make_key(uint64_t kseed, uint64_t k, uint8_t *out)
{
    uint64_t h = mix64(kseed ^ (k * 0x9e3779b97f4a7c15ull));
    uint32_t c = h % 100, len;
    if (c < 5) {
        len = 1 + (uint32_t)((h >> 8) % 3);       /* 1..3: tiny, collide a lot */
    } else if (c < 70) {
        len = 4 + (uint32_t)((h >> 8) % 21);      /* 4..24 */
    } else if (c < 92) {
        len = 25 + (uint32_t)((h >> 8) % 104);    /* 25..128 */
    } else if (c < 99) {
        len = 129 + (uint32_t)((h >> 8) % 126);   /* 129..254 */
    } else {
        len = 255;
    }
    uint32_t p = key_prefixes[(h >> 20) % N_PREFIXES];
    uint8_t pb[4] = {(uint8_t)(p >> 24), (uint8_t)(p >> 16), (uint8_t)(p >> 8), (uint8_t)p};
    memcpy(out, pb, len < 4 ? len : 4);
    if (len >= 8) {
        uint32_t kk = (uint32_t)k;
        out[4] = (uint8_t)(kk >> 24);
        out[5] = (uint8_t)(kk >> 16);
        out[6] = (uint8_t)(kk >> 8);
        out[7] = (uint8_t)kk;
        value_fill(h, 0, out + 8, len - 8);
    } else if (len > 4) {
        value_fill(h, 0, out + 4, len - 4);
    }
    return len;
}

/* ---------------- the run ---------------- */

bool model_test_skipped(const char *name)
{
    const char *only = getenv("KVFTL_MODEL_ONLY");
    if (only && *only && strcmp(only, name) != 0) {
        printf("# %s: not run (KVFTL_MODEL_ONLY=%s)\n", name, only);
        return true;
    }
    return false;
}

/* header + longest key + largest value */
#define BLOB_MAX (24u + KVFTL_KEY_MAX_BYTES + KVFTL_VALUE_MAX_BYTES)

static void make_config(struct run *r)
{
    const struct scenario *sc = r->sc;
    CU_ASSERT_FATAL(kvftl_config_preset(&r->cfg, "default") == 0);
    /*
     * A small device, so that GC runs constantly: 1 channel x 2 dies unless
     * the scenario says otherwise, blocks just big enough that an erase
     * stripe (one block per die) holds the largest blob (2 MiB + header,
     * which kvftl requires), and the fewest blocks per die the GC
     * watermarks allow plus a few.
     */
    r->cfg.channels = sc->channels ? sc->channels : 1;
    r->cfg.dies_per_channel = sc->dies_per_channel ? sc->dies_per_channel : 2;
    uint32_t dies = r->cfg.channels * r->cfg.dies_per_channel;
    r->cfg.blocks_per_die = sc->blocks_per_die;
    r->cfg.pages_per_block = (2300000 / dies + sc->page_size_bytes - 1) / sc->page_size_bytes;
    if (sc->page_data_bytes) {
        /* the largest blob takes one whole page per data area's worth */
        uint32_t pages = (BLOB_MAX + sc->page_data_bytes - 1) / sc->page_data_bytes;
        uint32_t per_die = (pages + dies - 1) / dies + 1;
        if (r->cfg.pages_per_block < per_die) {
            r->cfg.pages_per_block = per_die;
        }
    }
    r->cfg.large_blob_unit_bytes = sc->large_blob_unit_bytes;
    r->cfg.page_data_bytes = sc->page_data_bytes;
    r->cfg.gc_high_watermark_blocks = 4;
    r->cfg.gc_low_watermark_blocks = 2;
    r->cfg.page_size_bytes = sc->page_size_bytes;
    r->cfg.index_page_bytes = sc->index_page_bytes ? sc->index_page_bytes : sc->page_size_bytes;
    r->cfg.placement_unit_bytes = sc->placement_unit_bytes;
    r->cfg.packing = sc->packing;
    r->cfg.buffer_entries = 8;
    r->cfg.dlt_entries = 8;
    r->cfg.plp = sc->plp;
    r->cfg.bloom = sc->bloom;
    r->cfg.gc_policy = sc->gc_policy;
    r->cfg.max_keys = 0; /* derived */
    r->cfg.hash_seed = 1; /* one index layout per scenario: a failure reproduces (the default is a
                             random secret) */
    if (sc->index_dram_bytes) {
        r->cfg.index_dram_bytes = sc->index_dram_bytes;
    }
    /* KVFTL_MODEL_INDEX=<design>: the scenarios with another index design (meson: model-<design>)
     */
    const char *design = getenv("KVFTL_MODEL_INDEX");
    for (uint32_t d = 0; design && d <= KVFTL_INDEX_LSM; d++) {
        if (strcmp(design, kvftl_index_names[d]) == 0) {
            r->cfg.index = (enum kvftl_index)d;
        }
    }
    /* KVFTL_TEST_PM983_FANOUT_LOG=n: pm983's directory pages of 2^n entries (model_pm983_levels) */
    const char *fanout = getenv("KVFTL_TEST_PM983_FANOUT_LOG");
    if (fanout) {
        pm983_test_fanout_log = (uint32_t)atoi(fanout);
    }
    if (sc->file_backed) {
        snprintf(r->image, sizeof(r->image), "/tmp/kvftl-model-%d-%s.img", (int)getpid(), sc->name);
        unlink(r->image);
        r->cfg.image_path = r->image;
    }
}

struct run *run_new(const struct scenario *sc)
{
    struct run *r = g_new0(struct run, 1);
    r->sc = sc;
    r->rng.s = sc->seed;
    r->kseed = mix64(sc->seed ^ 0x6b6579ull);
    r->now = 1000;
    r->buf = g_malloc(RETRIEVE_BUF_CAP);
    r->exp = g_malloc(RETRIEVE_BUF_BYTES);
    r->val = g_malloc(KVFTL_VALUE_MAX_BYTES + 1000001);
    make_config(r);
    kv_model_init(&r->m, r->cfg.plp, value_fill, r->exp);
    return r;
}

void run_free(struct run *r)
{
    if (r->ftl) {
        kvftl_close(r->ftl);
    }
    if (r->image[0]) {
        unlink(r->image);
    }
    kv_model_destroy(&r->m);
    g_free(r->buf);
    g_free(r->exp);
    g_free(r->val);
    g_free(r);
}

bool open_device(struct run *r)
{
    char err[256] = "";
    r->ftl = kvftl_open(&r->cfg, err, sizeof(err));
    if (!r->ftl) {
        fail(r, "kvftl_open: %s", err);
        return false;
    }
    return true;
}

uint64_t raw_bytes(const struct kvftl_config *c)
{
    return (uint64_t)c->channels * c->dies_per_channel * c->blocks_per_die * c->pages_per_block *
           c->page_size_bytes;
}

/* ---------------- reporting ---------------- */

void oplog_add(struct run *r, const char *fmt, ...)
{
    struct oplog *l = &r->log[r->opno % OPLOG_LEN];
    l->n = r->opno;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->what, sizeof(l->what), fmt, ap);
    va_end(ap);
}

void fail(struct run *r, const char *fmt, ...)
{
    if (r->failed) {
        return;
    }
    r->failed = true;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    printf("# FAIL scenario %s seed 0x%" PRIx64 " op %" PRIu64 ": %s\n", r->sc->name, r->sc->seed,
           r->opno, msg);
    printf("# last operations:\n");
    for (uint64_t i = r->opno + 1 > OPLOG_LEN ? r->opno + 1 - OPLOG_LEN : 0; i <= r->opno; i++) {
        struct oplog *l = &r->log[i % OPLOG_LEN];
        if (l->n == i && l->what[0]) {
            printf("#   %" PRIu64 ": %s\n", l->n, l->what);
        }
    }
    fflush(stdout);
    CU_FAIL(msg);
}

bool expect_status(struct run *r, const char *op, const struct kvftl_cpl *c, uint64_t arrival,
                   enum kvftl_status want)
{
    if (c->status != want) {
        fail(r, "%s: status 0x%04x (%s), expected 0x%04x (%s)", op, c->status,
             kvftl_status_name(c->status), want, kvftl_status_name(want));
        return false;
    }
    if (c->done_ns < arrival) {
        fail(r, "%s: done_ns %" PRIu64 " before arrival %" PRIu64, op, c->done_ns, arrival);
        return false;
    }
    return true;
}

bool judged(struct run *r, bool ok, const struct kvftl_cpl *c)
{
    if (!ok) {
        fail(r, "%s", r->m.mismatch);
        return false;
    }
    if (c && c->status != KVFTL_INTERNAL_ERROR && c->status != KVFTL_CAPACITY_EXCEEDED) {
        next_arrival(r, c);
    }
    return true;
}

uint64_t next_arrival(struct run *r, const struct kvftl_cpl *c)
{
    uint64_t x = rng_below(&r->rng, 8);
    if (x == 0) {
        r->now = c->done_ns > r->now ? c->done_ns : r->now; /* QD1: wait for it */
    } else if (x == 1) {
        r->now += rng_below(&r->rng, 2000000); /* idle up to 2 ms */
    } else {
        r->now += rng_below(&r->rng, 5000); /* queued */
    }
    return r->now;
}

/* ---------------- whole-device checks ---------------- */

bool check_consistency(struct run *r, const char *why)
{
    if (!kv_model_check_device(&r->m, r->ftl, why)) {
        fail(r, "%s", r->m.mismatch);
        return false;
    }
    return true;
}

bool verify_all_batched(struct run *r, const char *why)
{
    if (!kv_model_read_back_batched(&r->m, r->ftl, r->now, why, false, &r->batch_reads)) {
        fail(r, "%s", r->m.mismatch);
    }
    return !r->failed;
}
