/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target over the kvftl public API.
 *
 * The input is decoded into a device configuration and a sequence of API
 * calls with arbitrary sizes, options, offsets, handles and kinds (valid
 * and invalid), run against a small device (17 MiB of NAND, so GC and
 * device-full happen) and the reference model of tests/common/kv_model.h
 * (the one the model suite uses). Besides crashes and sanitizer reports,
 * any disagreement with the model aborts: statuses, sizes and bytes of
 * every retrieve, iterator output, survival of completed operations across
 * power cuts, the live_keys/live_user_bytes gauges and kvftl_check().
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

#include "fuzz_kv_decode.h"
#include "kv_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 4096
#define VALUE_BUF_BYTES (KVFTL_VALUE_MAX_BYTES + 64)

/* ---------------- the run ---------------- */

struct fuzz {
    struct kvftl_config cfg;
    struct kvftl *ftl;
    struct kv_model m;
    uint64_t now;
    uint8_t *val, *buf;
    uint64_t opno;
    uint32_t refuse; /* refusal pattern for the iterator callback */
};

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

/* The model's verdict on the last call: a mismatch aborts. */
static void judged(struct fuzz *f, bool ok)
{
    if (!ok) {
        die(f, "%s", f->m.mismatch);
    }
}

static int trace = -1; /* KVFTL_FUZZ_TRACE */

/* Every key read back and judged, gauges, kvftl_check; @remounted: right after a power cycle. */
static void verify_all(struct fuzz *f, const char *why, bool remounted)
{
    judged(f, kv_model_read_back_batched(&f->m, f->ftl, f->now, why, remounted, NULL));
    judged(f, kv_model_check_device(&f->m, f->ftl, why));
}

/* ---------------- operations ---------------- */

static void trace_cpl(const char *op, const uint8_t *key, uint32_t klen, uint32_t vlen,
                      const struct kvftl_cpl *c)
{
    if (trace > 0) {
        fprintf(stderr, "    %s key %u B fp %08x len %u -> status %s value_bytes %u\n", op, klen,
                kv_model_key_fp(key, klen), vlen, kvftl_status_name(c->status), c->value_bytes);
    }
}

static void op_store(struct fuzz *f, uint8_t *key, uint32_t klen, uint32_t vlen, uint64_t vseed,
                     uint32_t opt, uint32_t inl)
{
    uint32_t src = vlen <= VALUE_BUF_BYTES ? vlen : 0;
    value_fill(vseed, 0, f->val, src);
    struct kvftl_store_req req = {.key = key,
                                  .key_bytes = klen,
                                  .value = f->val,
                                  .value_bytes = vlen,
                                  .options = opt,
                                  .inline_bytes = inl,
                                  .arrival_ns = f->now};
    struct kvftl_cpl c;
    kvftl_store(f->ftl, &req, &c);
    trace_cpl("store", key, klen, vlen, &c);
    f->now = req.arrival_ns + 1000;
    judged(f, kv_model_store(&f->m, f->ftl, &req, vseed, &c));
}

static void op_retrieve(struct fuzz *f, uint8_t *key, uint32_t klen, uint32_t off, uint32_t bufb)
{
    struct kvftl_retrieve_req req = {.key = key,
                                     .key_bytes = klen,
                                     .buf = f->buf,
                                     .offset = off,
                                     .buf_bytes = bufb,
                                     .arrival_ns = f->now};
    struct kvftl_cpl c;
    kv_model_guard(&req, VALUE_BUF_BYTES + KV_MODEL_GUARD_BYTES);
    kvftl_retrieve(f->ftl, key, klen, f->buf, off, bufb, req.arrival_ns, &c);
    f->now = req.arrival_ns + 1000;
    judged(f, kv_model_retrieve(&f->m, &req, VALUE_BUF_BYTES + KV_MODEL_GUARD_BYTES, &c));
}

static void op_delete(struct fuzz *f, uint8_t *key, uint32_t klen)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_delete(f->ftl, key, klen, t, &c);
    trace_cpl("delete", key, klen, 0, &c);
    f->now = t + 1000;
    judged(f, kv_model_delete(&f->m, key, klen, t, &c));
}

static void op_exist(struct fuzz *f, uint8_t *key, uint32_t klen)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_exist(f->ftl, key, klen, t, &c);
    f->now = t + 1000;
    judged(f, kv_model_exist(&f->m, key, klen, t, &c));
}

static void op_flush(struct fuzz *f)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_flush(f->ftl, t, &c);
    f->now = t + 1000;
    judged(f, kv_model_flush(&f->m, t, &c));
}

/* Every entry offered is judged; the refusal pattern decides which the callback takes. */
static int emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                uint32_t value_bytes)
{
    struct fuzz *f = opaque;
    bool refuse = f->refuse & 1;
    f->refuse >>= 1;
    judged(f, kv_model_iter_entry(&f->m, key, key_bytes, value, value_bytes, !refuse));
    return refuse;
}

static void op_iter_open(struct fuzz *f, uint32_t prefix, uint32_t mask, uint8_t kind)
{
    uint32_t h = 0xdeadbeef;
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_iter_open(f->ftl, prefix, mask, (enum kvftl_iter_kind)kind, t, &h, &c);
    f->now = t + 1000;
    judged(f, kv_model_iter_open(&f->m, prefix, mask, kind, t, h, &c));
}

static void op_iter_next(struct fuzz *f, uint32_t handle, uint32_t max, uint32_t refuse)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    f->refuse = refuse;
    kv_model_iter_next_begin(&f->m, handle);
    kvftl_iter_next(f->ftl, handle, max, emit, f, t, &c);
    f->now = t + 1000;
    judged(f, kv_model_iter_next(&f->m, handle, max, t, &c));
}

static void op_iter_close(struct fuzz *f, uint32_t handle)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_iter_close(f->ftl, handle, t, &c);
    f->now = t + 1000;
    judged(f, kv_model_iter_close(&f->m, handle, t, &c));
}

static void power_cycle(struct fuzz *f)
{
    char err[256] = "";
    if (kvftl_power_cycle(f->ftl, err, sizeof(err)) != 0) {
        die(f, "kvftl_power_cycle: %s", err);
    }
    kv_model_remounted(&f->m);
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
    f->now = t + 1000;
    judged(f, kv_model_format(&f->m, t, &c));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *val, *buf, *exp;
    if (!val) {
        val = g_malloc(VALUE_BUF_BYTES);
        buf = g_malloc(VALUE_BUF_BYTES + KV_MODEL_GUARD_BYTES);
        exp = g_malloc(VALUE_BUF_BYTES);
    }
    struct input in = {data, size};
    struct fuzz f;
    memset(&f, 0, sizeof(f));
    f.val = val;
    f.buf = buf;
    f.now = 1000;
    fuzz_kv_config(&f.cfg, in_u8(&in));
    char err[256] = "";
    if (kvftl_config_check(&f.cfg, err, sizeof(err)) != 0) {
        die(&f, "config rejected: %s", err);
    }
    f.ftl = kvftl_open(&f.cfg, err, sizeof(err));
    if (!f.ftl) {
        die(&f, "kvftl_open: %s", err);
    }
    kv_model_init(&f.m, f.cfg.plp, value_fill, exp);

    uint8_t key[KVFTL_KEY_MAX_BYTES + 1];
    if (trace < 0) {
        trace = getenv("KVFTL_FUZZ_TRACE") != NULL;
    }
    f.m.trace = trace > 0 ? stderr : NULL;
    while (in.n && f.opno < MAX_OPS) {
        f.opno++;
        uint8_t op = in_u8(&in) % 14;
        if (trace) {
            static const char *const names[] = {
                "store",     "retrieve",  "delete",     "exist",           "flush",
                "iter_open", "iter_next", "iter_close", "power_cut_after", "power_cycle",
                "format",    "check",     "idle",       "store+retrieve"};
            fprintf(stderr, "op %" PRIu64 ": %s (armed %d fired %d, %" PRIu64 " live keys)\n",
                    f.opno, names[op], f.m.armed, f.m.fired, f.m.present);
        }
        switch (op) {
        case 0: {
            uint32_t klen = decode_key(&in, key);
            uint32_t vlen = decode_vlen(&in);
            uint64_t vseed = mix64(in_u8(&in) + f.opno * 977);
            uint32_t opt, inl;
            decode_store_options(&in, vlen, &opt, &inl);
            op_store(&f, key, klen, vlen, vseed, opt, inl);
            break;
        }
        case 1: {
            uint32_t klen = decode_key(&in, key);
            uint32_t off, bufb;
            decode_read_window(&in, KVFTL_VALUE_MAX_BYTES, &off, &bufb);
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
        case 4:
            op_flush(&f);
            break;
        case 5: {
            uint32_t prefix = in_u32(&in), mask = in_u32(&in);
            op_iter_open(&f, prefix, mask, in_u8(&in));
            break;
        }
        case 6: {
            uint32_t handle = decode_handle(&in);
            uint8_t mb = in_u8(&in), rb = in_u8(&in);
            op_iter_next(&f, handle, mb, rb);
            break;
        }
        case 7:
            op_iter_close(&f, decode_handle(&in));
            break;
        case 8: {
            uint8_t n = in_u8(&in);
            if (!f.m.armed) {
                kvftl_power_cut_after(f.ftl, n);
                kv_model_cut_armed(&f.m, n);
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
            if (!f.m.armed) {
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
            op_store(&f, key, klen, vlen % (KVFTL_VALUE_MAX_BYTES + 1), mix64(f.opno), 0,
                     in_u8(&in) & 1 ? vlen : 0);
            op_retrieve(&f, key, klen, 0, VALUE_BUF_BYTES);
            break;
        }
        }
    }
    if (f.m.armed) {
        power_cycle(&f);
    } else {
        verify_all(&f, "end of input", false);
    }
    kvftl_close(f.ftl);
    kv_model_destroy(&f.m);
    return 0;
}
