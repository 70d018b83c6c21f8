/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Model-based test of the kvftl firmware, through its public API only.
 *
 * Each scenario drives one small device (a few MiB of NAND, so that garbage
 * collection runs hundreds of times) with a long stream of random operations
 * and checks every status, every size and every byte against the reference
 * model of tests/common/kv_model.h (the one the kvftl API fuzzer uses).
 * Values are not stored in the model: a value is (length, seed) and its
 * bytes are regenerated on demand from a counter-based generator, so 2 MiB
 * values cost nothing to remember and partial reads at any offset are cheap
 * to check.
 *
 * Power cuts (kvftl_power_cut_after + kvftl_power_cycle) are checked by the
 * model's rules (plp on: every completed operation survives; plp off: a key
 * comes back in a state it had since the last Flush; after the cut every
 * operation fails). After each recovery every key ever touched is read
 * back, a full-range iterator must return exactly the live keys, the
 * live_keys/live_user_bytes gauges must equal the model's, and kvftl_check()
 * must pass.
 *
 * The suite, one concern a file:
 *   fixture.c     a run: its device, model, randomness, failure report
 *   random_ops.c  the random operations and iterations, each judged by the model
 *   power_loss.c  power cuts, clean restarts, format, and what must hold after
 *   scenarios.c   the scenarios (configurations), their driver and the GC bound,
 *                 the suite's volume, main()
 *   device_full.c filling a device until Store refuses
 *
 * Seeds are fixed and printed as TAP diagnostics; KVFTL_MODEL_SEED=<n>
 * replaces every scenario's seed, KVFTL_MODEL_OPS=<n> every scenario's
 * operation count (for soak runs; fewer than the default fails the volume
 * and GC-bound checks), KVFTL_MODEL_ONLY=<test> runs just that one. A
 * failure prints the scenario, the seed, the operation number and the last
 * operations, which is enough to replay it.
 */
#ifndef KVSSD_TESTS_MODEL_H
#define KVSSD_TESTS_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include <kvftl/kvftl.h>

#include "kv_model.h"
#include "rng.h"
#include "tap_cunit.h"

/* Bytes [@off, @off + @n) of the value (or key tail) generated from @seed. */
void value_fill(uint64_t seed, uint32_t off, uint8_t *dst, uint32_t n);

/* Key number @k of a scenario's key space into @out: 1..255 bytes. Returns its length. */
uint32_t make_key(uint64_t kseed, uint64_t k, uint8_t *out);

/* ---------------- a run ---------------- */

struct scenario {
    const char *name;
    uint64_t seed;
    uint32_t ops;            /* random operations */
    enum kvftl_packing packing;
    uint32_t placement_unit_bytes;
    bool plp;
    bool bloom;
    uint64_t index_dram_bytes;   /* 0 = preset default */
    uint32_t index_page_bytes;   /* 0 = preset default */
    enum kvftl_gc_policy gc_policy;
    uint32_t page_size_bytes;
    uint32_t blocks_per_die;
    uint32_t channels, dies_per_channel; /* 0: 1 channel x 2 dies */
    uint32_t pool_keys;      /* size of the key space stores draw from */
    uint32_t power_cuts;     /* kvftl_power_cut_after cuts (plus one plain power cycle) */
    bool file_backed;        /* image_path in /tmp; clean close/open restarts too */
    bool format_midway;
    uint32_t large_blob_unit_bytes; /* 0 = placement_unit_bytes */
    uint32_t page_data_bytes;       /* 0 = the whole page */
};

/* One operation, kept in a ring for the failure report. */
struct oplog {
    uint64_t n;
    char what[96];
};
#define OPLOG_LEN 24

struct run {
    const struct scenario *sc;
    struct kvftl_config cfg;
    struct kvftl *ftl;
    struct kv_model m;
    struct rng rng;
    uint64_t kseed;
    uint64_t now;            /* arrival time of the next request */
    uint64_t opno;
    bool failed;
    uint8_t *buf;            /* retrieve buffer: 2 MiB + guard */
    uint8_t *exp;            /* expected bytes (the model's scratch) */
    uint8_t *val;            /* store source */
    uint32_t refuse_pct;     /* the iteration in progress refuses this share of entries */
    /* accounting for the GC bound */
    uint64_t user_bytes_since_format;
    uint64_t gc_runs_at_format, erased_at_format;
    /* GC runs and erases since the format in instances closed since (clean restarts) */
    uint64_t gc_runs_carried, erased_carried;
    uint64_t stores_ok, cap_exceeded, retrieves, deletes, iterations, cuts;
    uint64_t batch_reads;    /* keys read back by verify_all_batched() */
    char image[128];
    struct oplog log[OPLOG_LEN];
};

#define RETRIEVE_BUF_BYTES (KVFTL_VALUE_MAX_BYTES + 64)
#define RETRIEVE_BUF_CAP (RETRIEVE_BUF_BYTES + KV_MODEL_GUARD_BYTES)

/* ---------------- fixture.c ---------------- */

/* Is test @name left out by KVFTL_MODEL_ONLY? (Says so in a TAP diagnostic.) */
bool model_test_skipped(const char *name);
/* A run of scenario @sc: its configuration, buffers and an empty model; no device yet. */
struct run *run_new(const struct scenario *sc);
/* Close the device, remove its image, free the run. */
void run_free(struct run *r);
bool open_device(struct run *r);
/* The device's raw NAND bytes. */
uint64_t raw_bytes(const struct kvftl_config *c);

void oplog_add(struct run *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Fail the scenario (once): the message, the seed, the operation and the last operations. */
void fail(struct run *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Check a completion's exact status and timing; false (and fails) on mismatch. */
bool expect_status(struct run *r, const char *op, const struct kvftl_cpl *c, uint64_t arrival,
                   enum kvftl_status want);
/*
 * The model's verdict @ok on a random operation that completed @c: a
 * mismatch fails the scenario. With @c, an answer other than the power
 * cut's or a refusal for capacity moves time on (next_arrival()).
 */
bool judged(struct run *r, bool ok, const struct kvftl_cpl *c);
/* Arrival of the next request: sometimes right after the last one (queued), sometimes idle. */
uint64_t next_arrival(struct run *r, const struct kvftl_cpl *c);
/* kvftl_check() and the gauges against the model. */
bool check_consistency(struct run *r, const char *why);
/* Every key the model knows read back through kvftl_retrieve_batch(); only where the model is
 * definite. */
bool verify_all_batched(struct run *r, const char *why);

/* ---------------- random_ops.c ---------------- */

/* One random operation (store, retrieve, delete, exist, flush, invalid sizes, iterations). */
void random_op(struct run *r);
/*
 * Iterate (prefix, mask) to the end, in batches of random size with a
 * callback that sometimes refuses an entry; with @interleave, random stores
 * and deletes run between batches.
 */
void iterate_and_check(struct run *r, uint32_t prefix, uint32_t mask, bool kv, bool interleave);

/* ---------------- power_loss.c ---------------- */

/*
 * Read every key back (@remounted: each in one of the states a remount may
 * return, which the model adopts), iterate the whole key space, check
 * consistency and gauges.
 */
void verify_after_recovery(struct run *r, const char *why, bool remounted);
/* Cut the power now (or after the armed cut fired) and verify what recovery kept. */
void power_cycle(struct run *r, const char *why);
/* Clean restart through the image file: everything survives exactly (close flushes). */
void clean_restart(struct run *r);
/* Format: every key gone; the GC bound counts from here. */
void format_device(struct run *r);

/* ---------------- device_full.c ---------------- */

void test_device_full(void);

#endif
