/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Model-based test of kvftl's nvm personality (include/kvftl/block.h),
 * through its public API only: the block FTL's counterpart of the KV
 * model suite (model.h).
 *
 * Each scenario drives one small nvm device (25-30 MiB of NAND, so that GC
 * collects hundreds of stripes) with a long stream of random writes (1 to
 * 256 blocks, aligned to the 4 KiB mapping unit or not, FUA sometimes),
 * reads, Write Zeroes, Deallocates, Flushes and invalid ranges, and checks
 * every status and every byte of every read against the reference model of
 * tests/common/sector_model.h (the one the block API fuzzer uses): a
 * block's bytes name its lba and the write that put them there, so the
 * model keeps 8 bytes per block. kvftl_check() and the mapped-units gauge
 * run every CHECK_EVERY operations; the whole namespace is read back every
 * VERIFY_EVERY operations and at the end.
 *
 * Power cuts (kvftl_power_cut_after at a random program count, then
 * kvftl_power_cycle) are judged by the model's rules: plp on, every
 * completed command survives; plp off, every 4 KiB unit comes back in a
 * state it had since the last Flush (or FUA write of it), never torn; a
 * flushed Deallocate stays deallocated. After each recovery every unit is
 * read back and kvftl_check() must pass. A file-backed scenario also
 * closes the device and opens its image again (a clean mount from the
 * checkpoint): every block must read exactly as before.
 *
 * The suite, one concern a file:
 *   block_fixture.c     a run: its device, model, randomness, failure report, checks
 *   block_random_ops.c  the random commands, each judged by the model
 *   block_power_loss.c  power cuts, clean restarts, format, and what must hold after
 *   block_scenarios.c   the scenarios (configurations), their driver and the GC
 *                       bound, the suite's volume, main()
 *   block_occupancy.c   95 % of the namespace filled, then overwritten 3 times
 *   block_extremes.c    the transfer limit, the namespace's ends, whole-namespace ranges
 *
 * Seeds are fixed and printed as TAP diagnostics; KVFTL_MODEL_SEED=<n>
 * replaces every scenario's seed, KVFTL_MODEL_OPS=<n> every scenario's
 * operation count, KVFTL_MODEL_ONLY=<test> runs just that one (as in the
 * KV suite). A failure prints the scenario, the seed, the operation number
 * and the last operations.
 */
#ifndef KVSSD_TESTS_BLOCK_MODEL_H
#define KVSSD_TESTS_BLOCK_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include <kvftl/block.h>
#include <kvftl/kvftl.h>

#include "rng.h"
#include "sector_model.h"
#include "tap_cunit.h"

#define CHECK_EVERY 5000   /* operations between kvftl_check() + gauge checks */
#define VERIFY_EVERY 25000 /* operations between whole-namespace read-backs */
#define MAX_CMD_BLOCKS 256 /* the longest random read or write */

struct block_scenario {
    const char *name;
    uint64_t seed;
    uint32_t ops; /* random operations */
    uint32_t lba_bytes;
    bool plp;
    uint32_t page_size_bytes;
    uint32_t pages_per_block; /* per die: an erase stripe is one block of every die */
    uint32_t blocks_per_die;
    uint32_t channels, dies_per_channel; /* 0: 1 channel x 2 dies */
    uint64_t index_dram_bytes;           /* the map's DRAM budget; 0 = the preset's */
    uint32_t write_buffer_pages_per_die; /* the write buffer of partial units; 0 = none */
    enum kvftl_gc_policy gc_policy;
    uint32_t hot_pct;    /* share of writes that go to the first eighth of the namespace */
    uint32_t power_cuts; /* kvftl_power_cut_after cuts, each followed by a power cycle */
    bool format_midway;
    uint32_t restarts; /* clean restarts (close, open the image again); needs an image */
    bool file_backed;  /* the device in an image file in /tmp */
};

/* One operation, kept in a ring for the failure report. */
struct block_oplog {
    uint64_t n;
    char what[96];
};
#define BLOCK_OPLOG_LEN 24

struct block_run {
    const struct block_scenario *sc;
    struct kvftl_config cfg;
    struct kvftl *ftl;
    struct sector_model m;
    struct rng rng;
    uint64_t now; /* arrival time of the next request */
    uint64_t opno;
    bool failed;
    uint8_t *buf;   /* reads and read-backs: RUN_BUF_BYTES + the guard */
    uint8_t *wbuf;  /* write source: MAX_CMD_BLOCKS x 4096 bytes */
    /* accounting */
    uint64_t writes, fua_writes, reads, zeroes, deallocs, flushes, invalid, cuts;
    uint64_t blocks_written, blocks_read;
    uint64_t units_programmed_since_format; /* units the writes covered (each programs one) */
    uint64_t gc_runs_at_format, erased_at_format; /* the counters at the format or the open */
    uint64_t gc_runs_carried, erased_carried;    /* since the format, before the last reopen */
    uint64_t units_verified; /* units read back by whole-namespace checks */
    uint64_t restarts;       /* clean restarts done */
    char image[128];         /* the image file, if file_backed */
    struct block_oplog log[BLOCK_OPLOG_LEN];
};

/* The read buffer: a whole MAX_CMD_BLOCKS read of 4 KiB blocks, and the read-back's chunk. */
#define RUN_BUF_BYTES ((size_t)MAX_CMD_BLOCKS * KVFTL_BLOCK_UNIT_BYTES)
#define RUN_BUF_CAP (RUN_BUF_BYTES + SECTOR_MODEL_GUARD_BYTES)

/* ---------------- block_fixture.c ---------------- */

/* Is test @name left out by KVFTL_MODEL_ONLY? (Says so in a TAP diagnostic.) */
bool block_test_skipped(const char *name);
/* KVFTL_MODEL_SEED / KVFTL_MODEL_OPS, or @dflt. */
uint64_t block_env_u64(const char *name, uint64_t dflt);
/* A run of scenario @sc: its configuration and buffers; no device or model yet. */
struct block_run *block_run_new(const struct block_scenario *sc);
/* Close the device, remove its image, free the run. */
void block_run_free(struct block_run *r);
/* Open the device and start the model of its namespace (empty). */
bool block_open_device(struct block_run *r);
/* The device's raw NAND bytes. */
uint64_t block_raw_bytes(const struct kvftl_config *c);

void block_oplog_add(struct block_run *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Fail the scenario (once): the message, the seed, the operation and the last operations. */
void block_fail(struct block_run *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/*
 * The model's verdict @ok on a command that completed @c: a mismatch fails
 * the scenario; otherwise time moves on (unless the cut fired).
 */
bool block_judged(struct block_run *r, bool ok, const struct kvftl_cpl *c);
/* kvftl_check(), the namespace size and the mapped-units gauge against the model. */
bool block_check(struct block_run *r, const char *why);
/* Every unit of the namespace read back and judged; @remounted: right after a remount. */
bool block_verify_all(struct block_run *r, const char *why, bool remounted);

/* ---------------- block_random_ops.c ---------------- */

/* One random command (write, read, zeroes, deallocate, flush, invalid range), judged. */
void block_random_op(struct block_run *r);
/* Write [@slba, @slba + @nlb) as a new generation (FUA if @fua) and judge it. */
bool block_write(struct block_run *r, uint64_t slba, uint32_t nlb, bool fua);
/* Read [@slba, @slba + @nlb) and judge every byte. */
bool block_read(struct block_run *r, uint64_t slba, uint32_t nlb);

/* ---------------- block_power_loss.c ---------------- */

/* Cut the power now (or after the armed cut fired), remount, verify every unit. */
void block_power_cycle(struct block_run *r, const char *why);
/* Arm a cut after a random number of NAND programs. */
void block_arm_cut(struct block_run *r);
/* Format: every block reads zeroes; the GC bound counts from here. */
void block_format(struct block_run *r);
/* Close and open the image again: every block reads as before (close flushes). */
void block_clean_restart(struct block_run *r);

/* ---------------- block_occupancy.c ---------------- */

void test_block_occupancy_4k(void);
void test_block_occupancy_512(void);

/* ---------------- block_extremes.c ---------------- */

void test_block_extremes_4k(void);
void test_block_extremes_512(void);

#endif
