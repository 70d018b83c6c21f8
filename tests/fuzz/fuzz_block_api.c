/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target over the nvm personality's API (include/kvftl/block.h).
 *
 * The input is decoded into a device configuration and a sequence of block
 * commands with arbitrary ranges (valid and invalid: 0 blocks, past the
 * namespace, past the transfer limit, the largest start), run against a
 * small nvm device (17 MiB of NAND, so GC comes quickly) and the reference
 * model of tests/common/sector_model.h (the one the block model suite
 * uses). Besides crashes and sanitizer reports, any disagreement with the
 * model aborts: the status of every command, every byte of every read
 * (the read-backs too, most through kvftl_block_read_batch()),
 * survival of completed writes across power cuts (per 4 KiB unit, never
 * torn), the mapped-units gauge and kvftl_check().
 *
 * KVFTL_FUZZ_TRACE=1 prints every decoded operation to stderr (for replays).
 *
 * Encoding (see make_block_corpus.py, which writes the seed corpus):
 *   byte 0: config: bit 0 plp, bit 1 512 B blocks (else 4096), bit 2 a map
 *           DRAM budget of 3 translation pages (DFTL misses and evictions),
 *           bit 3 cost-benefit GC, bits 4-5 page size (4, 8, 16, 4 KiB),
 *           bit 6 the device in an image file (/tmp, removed after the input)
 *   then operations, each an opcode byte (value % 13) and its operands:
 *   0 write     slba nlb fua:u8 (bit 0)     1 read  slba nlb
 *   2 write zeroes  slba nlb                3 deallocate slba nlb
 *   4 flush     5 format     6 power_cut_after n:u8     7 power_cycle
 *   8 check (read every unit back, gauges, kvftl_check); 7, 8 and 12
 *     together MAX_FULL_CHECKS times an input, later ones skipped
 *   9 idle time:u16 (x 1 us)
 *  10 write then read the same range: slba nlb
 *  11 fill: slba, count:u8 writes of 256 blocks from slba on (wrapping;
 *     MAX_FILL_WRITES an input)
 *  12 reopen (image only): close and open the image again. Without a cut
 *     armed every block reads as before (close flushes; a clean mount from
 *     the checkpoint); with one armed the close is a power loss (a crash
 *     mount, judged as after a power cycle)
 *   slba = kind:u8 [operand], nlb = kind:u8 [operand]: see decode_slba(),
 *   decode_nlb().
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include <kvftl/block.h>
#include <kvftl/kvftl.h>

#include "fuzz_input.h"
#include "kvftl_small.h"
#include "sector_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 2048
#define MAX_FILL_WRITES 512 /* the fill operations' 256-block writes per input: ~0.5 GiB */
/*
 * Power cycles and check operations an input may run (later ones are
 * decoded and skipped): each reads the whole namespace back and runs
 * kvftl_check(), a cycle mounts by scanning every spare area too, and
 * under the fuzz build on a loaded machine an input of 96 cycles took 26 s.
 */
#define MAX_FULL_CHECKS 16
#define BUF_BYTES ((size_t)KVFTL_BLOCK_MAX_XFER_BYTES)

/* ---------------- the run ---------------- */

struct fuzz {
    struct kvftl_config cfg;
    struct kvftl *ftl;
    struct sector_model m;
    uint64_t now;
    uint8_t *wbuf, *rbuf;
    uint64_t opno;
    uint32_t fill_writes; /* of MAX_FILL_WRITES */
    uint32_t full_checks; /* of MAX_FULL_CHECKS */
    char image[64];       /* the image file, or "" */
};

static int trace = -1; /* KVFTL_FUZZ_TRACE */

static void die(struct fuzz *f, const char *fmt, ...) G_GNUC_PRINTF(2, 3) G_GNUC_NORETURN;
static void die(struct fuzz *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kvftl block fuzz: model mismatch at op %" PRIu64 ": ", f->opno);
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

static void trace_op(struct fuzz *f, const char *op, uint64_t slba, uint32_t nlb,
                     const struct kvftl_cpl *c)
{
    if (trace > 0) {
        fprintf(stderr, "    %s lba %" PRIu64 " + %u -> %s\n", op, slba, nlb,
                kvftl_status_name(c->status));
    }
    (void)f;
}

/*
 * Every unit read back and judged, then the gauges (and kvftl_check);
 * @remounted: after a crash mount. That is read back in reads of the
 * largest transfer; a check op, a clean reopen and the end of the input in
 * batches of a read per unit (kvftl_block_read_batch()).
 */
static void verify_all(struct fuzz *f, const char *why, bool remounted)
{
    if (remounted) {
        judged(f,
               sector_model_read_back(&f->m, f->ftl, f->now, f->rbuf, BUF_BYTES, why, true, NULL));
    } else {
        judged(f, sector_model_read_back_batched(&f->m, f->ftl, f->now, f->rbuf, BUF_BYTES, why,
                                                 false, NULL));
    }
    judged(f, sector_model_check_device(&f->m, f->ftl, why));
}

/* ---------------- input decoding ---------------- */

/* A start: inside the namespace mostly (unit-aligned or not), near or past its end, extremes. */
static uint64_t decode_slba(struct input *in, const struct sector_model *m)
{
    uint8_t k = in_u8(in);
    if (k < 128) {
        return in_u16(in) % m->lbas;
    }
    if (k < 192) {
        uint64_t s = in_u16(in) % m->lbas;
        return s - s % m->lbas_per_unit;
    }
    if (k < 224) {
        return m->lbas - 1 - in_u8(in) % (m->lbas < 64 ? m->lbas : 64);
    }
    if (k < 240) {
        return m->lbas + in_u8(in) % 4;
    }
    if (k < 255) {
        return in_u32(in);
    }
    return UINT64_MAX - in_u8(in);
}

/*
 * A length: short, up to 256, whole units, 0, the transfer limit and one
 * past it, or (@long_ok: Write Zeroes and Deallocate, which move no data)
 * up to the whole namespace.
 */
static uint32_t decode_nlb(struct input *in, const struct sector_model *m, bool long_ok)
{
    uint8_t k = in_u8(in);
    if (k < 128) {
        return 1 + k % 16;
    }
    if (k < 192) {
        return 1 + in_u8(in);
    }
    if (k < 224) {
        return m->lbas_per_unit * (1 + in_u8(in) % 32);
    }
    if (k < 232) {
        return 0;
    }
    if (k < 240) {
        return m->max_nlb + in_u8(in) % 2;
    }
    uint32_t v = in_u32(in);
    return long_ok ? (uint32_t)(v % (m->lbas + 2)) : v;
}

/* ---------------- operations ---------------- */

/* The bytes a write of @nlb blocks from @slba takes, when the range is one the firmware accepts. */
static bool write_fits(const struct sector_model *m, uint64_t slba, uint32_t nlb)
{
    return nlb >= 1 && nlb <= m->max_nlb && slba < m->lbas && nlb <= m->lbas - slba;
}

static void op_write(struct fuzz *f, uint64_t slba, uint32_t nlb, bool fua)
{
    uint64_t g = sector_model_next_gen(&f->m);
    if (write_fits(&f->m, slba, nlb)) {
        sector_model_fill_range(&f->m, slba, nlb, g, f->wbuf);
    }
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_block_write(f->ftl, slba, nlb, f->wbuf, fua, t, &c);
    trace_op(f, fua ? "write fua" : "write", slba, nlb, &c);
    f->now = t + 1000;
    judged(f, sector_model_write(&f->m, slba, nlb, g, fua, t, &c));
}

static void op_read(struct fuzz *f, uint64_t slba, uint32_t nlb)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    sector_model_guard(&f->m, nlb, f->rbuf, BUF_BYTES + SECTOR_MODEL_GUARD_BYTES);
    kvftl_block_read(f->ftl, slba, nlb, f->rbuf, t, &c);
    trace_op(f, "read", slba, nlb, &c);
    f->now = t + 1000;
    judged(f, sector_model_read(&f->m, slba, nlb, t, &c, f->rbuf,
                                BUF_BYTES + SECTOR_MODEL_GUARD_BYTES));
}

static void op_zeroes(struct fuzz *f, uint64_t slba, uint32_t nlb)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_block_write_zeroes(f->ftl, slba, nlb, t, &c);
    trace_op(f, "write zeroes", slba, nlb, &c);
    f->now = t + 1000;
    judged(f, sector_model_write_zeroes(&f->m, slba, nlb, t, &c));
}

static void op_deallocate(struct fuzz *f, uint64_t slba, uint32_t nlb)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_block_deallocate(f->ftl, slba, nlb, t, &c);
    trace_op(f, "deallocate", slba, nlb, &c);
    f->now = t + 1000;
    judged(f, sector_model_deallocate(&f->m, slba, nlb, t, &c));
}

static void op_flush(struct fuzz *f)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_flush(f->ftl, t, &c);
    f->now = t + 1000;
    judged(f, sector_model_flush(&f->m, t, &c));
}

static void op_format(struct fuzz *f)
{
    struct kvftl_cpl c;
    uint64_t t = f->now;
    kvftl_format(f->ftl, t, &c);
    f->now = t + 1000;
    judged(f, sector_model_format(&f->m, t, &c));
}

static void power_cycle(struct fuzz *f)
{
    char err[256] = "";
    if (kvftl_power_cycle(f->ftl, err, sizeof(err)) != 0) {
        die(f, "kvftl_power_cycle: %s", err);
    }
    sector_model_remounted(&f->m);
    struct kvftl_stats st;
    kvftl_stats_get(f->ftl, &st);
    if (st.sim_now_ns > f->now) {
        f->now = st.sim_now_ns;
    }
    verify_all(f, "after power cycle", true);
}

/* Close the device and open its image again; judged as a clean restart or, armed, a crash. */
static void reopen(struct fuzz *f)
{
    bool crash = f->m.armed;
    kvftl_close(f->ftl);
    char err[256] = "";
    f->ftl = kvftl_open(&f->cfg, err, sizeof(err));
    if (!f->ftl) {
        die(f, "reopening %s: %s", f->image, err);
    }
    if (!crash && kvftl_mount_note(f->ftl)) {
        die(f, "a clean reopen scanned the log: %s", kvftl_mount_note(f->ftl));
    }
    if (!crash) {
        sector_model_durable(&f->m); /* an orderly close is a durable point */
    }
    sector_model_remounted(&f->m);
    verify_all(f, crash ? "after a close with a cut armed" : "after a clean reopen", crash);
}

static void setup(struct fuzz *f, uint8_t cb)
{
    static const uint32_t page[] = {4096, 8192, 16384, 4096};
    uint32_t ps = page[(cb >> 4) & 3];
    /*
     * ~17 MiB: 1 channel x 2 dies x 8 blocks of 2.125 MiB stripes (the
     * least stripe kvftl takes), the fewest blocks the GC watermarks allow
     * plus one, so GC comes quickly.
     */
    kvftl_config_small(&f->cfg, (struct kvftl_small_geometry){.channels = 1,
                                                              .dies_per_channel = 2,
                                                              .blocks_per_die = 8,
                                                              .pages_per_block = 272 * 4096 / ps,
                                                              .page_size_bytes = ps});
    f->cfg.command_set = KVFTL_CMDSET_NVM;
    f->cfg.plp = cb & 1;
    f->cfg.lba_bytes = cb & 2 ? 512 : 4096;
    f->cfg.index_page_bytes = ps;
    f->cfg.index_dram_bytes = cb & 4 ? 3ull * ps : 256 * 1024;
    f->cfg.gc_policy = cb & 8 ? KVFTL_GC_COST_BENEFIT : KVFTL_GC_GREEDY;
    f->cfg.gc_high_watermark_blocks = 3;
    f->cfg.gc_low_watermark_blocks = 2;
    f->cfg.buffer_entries = 4;
    f->cfg.dlt_entries = 4;
    f->cfg.hash_seed = 1;
    f->cfg.image_path = NULL;
    if (cb & 0x40) {
        snprintf(f->image, sizeof(f->image), "/tmp/kvftl-fuzz-block-%d.img", (int)getpid());
        unlink(f->image);
        f->cfg.image_path = f->image;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *wbuf, *rbuf;
    if (!wbuf) {
        wbuf = g_malloc(BUF_BYTES);
        rbuf = g_malloc(BUF_BYTES + SECTOR_MODEL_GUARD_BYTES);
    }
    if (trace < 0) {
        trace = getenv("KVFTL_FUZZ_TRACE") != NULL;
    }
    struct input in = {data, size};
    struct fuzz f;
    memset(&f, 0, sizeof(f));
    f.wbuf = wbuf;
    f.rbuf = rbuf;
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
    sector_model_init(&f.m, f.cfg.lba_bytes, kvftl_block_lbas(f.ftl), f.cfg.plp);
    f.m.trace = trace > 0 ? stderr : NULL;
    if (trace > 0) {
        fprintf(stderr,
                "config 0x%02x: plp %d, lba %u B, page %u B, map DRAM %" PRIu64
                " B, namespace %" PRIu64 " blocks\n",
                data && size ? data[0] : 0, f.cfg.plp, f.cfg.lba_bytes, f.cfg.page_size_bytes,
                f.cfg.index_dram_bytes, f.m.lbas);
    }

    while (in.n && f.opno < MAX_OPS) {
        f.opno++;
        uint8_t op = in_u8(&in) % 13;
        if (trace > 0) {
            static const char *const names[] = {"write", "read",   "write zeroes",    "deallocate",
                                                "flush", "format", "power_cut_after", "power_cycle",
                                                "check", "idle",   "write+read",      "fill",
                                                "reopen"};
            fprintf(stderr, "op %" PRIu64 ": %s (armed %d fired %d, %" PRIu64 " nonzero units)\n",
                    f.opno, names[op], f.m.armed, f.m.fired, f.m.nonzero_units);
        }
        switch (op) {
        case 0: {
            uint64_t slba = decode_slba(&in, &f.m);
            uint32_t nlb = decode_nlb(&in, &f.m, false);
            op_write(&f, slba, nlb, in_u8(&in) & 1);
            break;
        }
        case 1: {
            uint64_t slba = decode_slba(&in, &f.m);
            op_read(&f, slba, decode_nlb(&in, &f.m, false));
            break;
        }
        case 2: {
            uint64_t slba = decode_slba(&in, &f.m);
            op_zeroes(&f, slba, decode_nlb(&in, &f.m, true));
            break;
        }
        case 3: {
            uint64_t slba = decode_slba(&in, &f.m);
            op_deallocate(&f, slba, decode_nlb(&in, &f.m, true));
            break;
        }
        case 4:
            op_flush(&f);
            break;
        case 5:
            op_format(&f);
            break;
        case 6: {
            uint8_t n = in_u8(&in);
            if (!f.m.armed) {
                kvftl_power_cut_after(f.ftl, n);
                sector_model_cut_armed(&f.m, n);
            }
            break;
        }
        case 7:
            if (f.full_checks < MAX_FULL_CHECKS) {
                f.full_checks++;
                power_cycle(&f);
            }
            break;
        case 8:
            if (!f.m.armed && f.full_checks < MAX_FULL_CHECKS) {
                f.full_checks++;
                verify_all(&f, "check op", false);
            }
            break;
        case 9:
            f.now += (uint64_t)in_u16(&in) * 1000;
            break;
        case 10: {
            uint64_t slba = decode_slba(&in, &f.m);
            uint32_t nlb = decode_nlb(&in, &f.m, false);
            op_write(&f, slba, nlb, false);
            op_read(&f, slba, nlb);
            break;
        }
        case 12:
            if (f.image[0] && f.full_checks < MAX_FULL_CHECKS) {
                f.full_checks++;
                reopen(&f);
            }
            break;
        default: {
            /* a sequential fill: GC and a nearly full device within a short input */
            uint64_t slba = decode_slba(&in, &f.m);
            uint32_t count = in_u8(&in);
            uint64_t lba = slba < f.m.lbas ? slba : 0;
            for (uint32_t i = 0; i < count && f.fill_writes < MAX_FILL_WRITES; i++) {
                f.fill_writes++;
                uint32_t nlb = f.m.lbas - lba < 256 ? (uint32_t)(f.m.lbas - lba) : 256;
                op_write(&f, lba, nlb, false);
                lba = lba + nlb == f.m.lbas ? 0 : lba + nlb;
            }
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
    if (f.image[0]) {
        unlink(f.image);
    }
    sector_model_destroy(&f.m);
    return 0;
}
