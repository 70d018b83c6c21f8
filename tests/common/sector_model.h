/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reference model of a block device that may lose power: the nvm
 * personality of kvftl (include/kvftl/block.h) as its tests see it. What
 * each read must return and what every logical block may hold after a
 * remount. Shared by the block model suite (tests/model/block_*.c) and the
 * block API fuzzer (tests/fuzz/fuzz_block_api.c);
 * tests/model/test_sector_model.c shows that it says no.
 *
 * Contents are not stored. Every logical block (LBA) holds a generation:
 * 0 for zeroes (never written, written with zeroes, deallocated), else the
 * number of the write that put it there; the bytes are regenerated from
 * (lba, generation) by sector_model_fill(), which also writes both into the
 * block's first 16 bytes, so that a wrong read can be named ("reads as the
 * data of lba 17, generation 40"). Host memory: 8 bytes per LBA and 1 per
 * unit of the namespace, plus 8 x (LBAs per unit) bytes per state a unit
 * may return after a crash (at most one per unit and per write since the
 * last durable point).
 *
 * Crash semantics are per 4 KiB mapping unit (KVFTL_BLOCK_UNIT_BYTES: the
 * FTL maps, programs and recovers whole units, read-modify-writing a
 * partial one):
 *  - plp on: every write, write zeroes and deallocate that completed (a
 *    status other than INTERNAL_ERROR) survives a power cut exactly.
 *  - plp off: after a cut every unit holds its state at the last durable
 *    point (Flush, Format, an orderly close, the read-back after a remount,
 *    or a FUA write of that unit) or any state an acknowledged operation
 *    gave it since, never a mix of two states inside one unit. Deallocate
 *    follows the same rule (durable after Flush); a unit deallocated and
 *    then flushed must never read its old data again.
 *  - the operation that returned INTERNAL_ERROR when the cut fired may or
 *    may not have reached each unit it covers, per unit and whole.
 *  - once the cut has fired, every operation returns INTERNAL_ERROR (or
 *    INVALID_FIELD, if its range is invalid) until the remount.
 *  - a block never written, deallocated or written with zeroes reads as
 *    zeroes (DLFEAT = 001b). Deallocate unmaps the units the range covers
 *    whole and leaves the partial units at its ends as they were.
 *  - ranges: @nlb at least 1 (at most KVFTL_BLOCK_MAX_XFER_BYTES / lba_bytes
 *    for a read or write, the commands that move data) and
 *    [@slba, @slba + @nlb) within kvftl_block_lbas(), else INVALID_FIELD.
 *  - CAPACITY_EXCEEDED and UNRECOVERED_ERROR are always wrong here (the
 *    contract calls the first a firmware bug; the model never damages an
 *    image).
 *
 * A harness calls the firmware, then hands the model the request and the
 * completion. The model answers true when a correct firmware may have
 * answered so, and follows it (a state recovery chose is adopted); false
 * when not, with the mismatch in a sentence in m->mismatch. The read-back
 * calls the firmware itself.
 */
#ifndef KVSSD_TESTS_SECTOR_MODEL_H
#define KVSSD_TESTS_SECTOR_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

#include <kvftl/block.h>
#include <kvftl/kvftl.h>

struct sector_model {
    uint32_t lba_bytes;     /* 512..4096 */
    uint32_t lbas_per_unit; /* KVFTL_BLOCK_UNIT_BYTES / lba_bytes */
    uint32_t max_nlb;       /* KVFTL_BLOCK_MAX_XFER_BYTES / lba_bytes */
    uint64_t lbas;          /* the namespace: kvftl_block_lbas() */
    uint64_t units;         /* ceil(lbas / lbas_per_unit) */
    bool plp;
    uint64_t *cur;          /* units x lbas_per_unit generations; 0 = zeroes */
    uint64_t gen;           /* the last generation sector_model_next_gen() handed out */
    /*
     * The units changed since the last durable point that a remount may
     * return in another state than cur: unit + 1 -> GArray of uint64_t,
     * whole states of lbas_per_unit generations each, the durable one first.
     */
    GHashTable *pending;
    uint64_t nonzero_units; /* units whose cur holds a generation other than 0 */
    uint8_t *mapped;        /* [units]: SECTOR_UNMAPPED, SECTOR_MAPPED, SECTOR_MAYBE_MAPPED */
    /* power cut */
    bool armed, fired;
    uint64_t ops_after_fire; /* operations judged since the cut fired */
    uint64_t cuts_fired;     /* over the model's life */
    uint64_t adopted;        /* units a remount returned in an older state than cur */
    uint8_t *exp;            /* one logical block of expected bytes */
    FILE *trace;             /* non-NULL: the read-back prints every unit it adopts there */
    char mismatch[512];
};

/*
 * Whether a unit holds flash (the live_keys gauge counts the mapped ones):
 * a write maps it; Write Zeroes or Deallocate of the whole unit unmaps it;
 * a partial Write Zeroes read-modify-writes a mapped unit and leaves an
 * unmapped one as it is. After a remount a zero unit of several blocks may
 * be either.
 */
#define SECTOR_UNMAPPED 0
#define SECTOR_MAPPED 1
#define SECTOR_MAYBE_MAPPED 2

/* The bytes a read's guard covers, past the buffer it was given. */
#define SECTOR_MODEL_GUARD_BYTES 16

/*
 * sector_model_init() - an empty (all zeroes) model of a namespace of
 * @lbas blocks of @lba_bytes on a device with power-loss protection @plp.
 */
void sector_model_init(struct sector_model *m, uint32_t lba_bytes, uint64_t lbas, bool plp);
void sector_model_destroy(struct sector_model *m);

/* The generation of the next write (1, 2, ...). */
uint64_t sector_model_next_gen(struct sector_model *m);

/*
 * sector_model_fill() - the @lba_bytes bytes of block @lba written by
 * generation @gen (0: zeroes) into @dst. Bytes 0-7 are @lba and 8-15 @gen,
 * little-endian; the rest is generated from both.
 */
void sector_model_fill(uint32_t lba_bytes, uint64_t lba, uint64_t gen, uint8_t *dst);
/* The @nlb blocks from @slba, all written by @gen, into @dst (@nlb x lba_bytes bytes). */
void sector_model_fill_range(const struct sector_model *m, uint64_t slba, uint32_t nlb,
                             uint64_t gen, uint8_t *dst);

/* kvftl_power_cut_after(@nand_programs) was called (0 disarms). */
void sector_model_cut_armed(struct sector_model *m, uint64_t nand_programs);
/* Everything so far is durable (an orderly close). */
void sector_model_durable(struct sector_model *m);
/* The device was remounted (kvftl_power_cycle(), or close and open): no cut armed. */
void sector_model_remounted(struct sector_model *m);

/*
 * Judges: the firmware answered @c to the operation described by the other
 * arguments. true: a correct answer (the model follows it); false: see
 * m->mismatch.
 */
/* kvftl_block_write() of @nlb blocks from @slba, filled by sector_model_fill_range(@gen). */
bool sector_model_write(struct sector_model *m, uint64_t slba, uint32_t nlb, uint64_t gen, bool fua,
                        uint64_t arrival_ns, const struct kvftl_cpl *c);
bool sector_model_write_zeroes(struct sector_model *m, uint64_t slba, uint32_t nlb,
                               uint64_t arrival_ns, const struct kvftl_cpl *c);
bool sector_model_deallocate(struct sector_model *m, uint64_t slba, uint32_t nlb,
                             uint64_t arrival_ns, const struct kvftl_cpl *c);
bool sector_model_flush(struct sector_model *m, uint64_t arrival_ns, const struct kvftl_cpl *c);
bool sector_model_format(struct sector_model *m, uint64_t arrival_ns, const struct kvftl_cpl *c);

/*
 * Before kvftl_block_read() of @nlb blocks into @buf (which holds @buf_cap
 * bytes): fill the guard past the @nlb blocks.
 */
void sector_model_guard(const struct sector_model *m, uint32_t nlb, uint8_t *buf, size_t buf_cap);
/*
 * kvftl_block_read() of @nlb blocks from @slba into @buf answered @c: the
 * status, every byte (each block as its current state) and the guard.
 */
bool sector_model_read(struct sector_model *m, uint64_t slba, uint32_t nlb, uint64_t arrival_ns,
                       const struct kvftl_cpl *c, const uint8_t *buf, size_t buf_cap);

/*
 * sector_model_judge_unit() - @buf holds the blocks of unit @unit as a
 * read returned them. Live (@remounted false), they must be the unit's
 * current state; @remounted, any state a remount may return (which the
 * model then adopts). @why starts the mismatch.
 */
bool sector_model_judge_unit(struct sector_model *m, uint64_t unit, const uint8_t *buf,
                             bool remounted, const char *why);

/*
 * sector_model_read_back() - read the whole namespace through
 * kvftl_block_read() into @buf (@buf_bytes, at least one unit) and judge
 * every unit (sector_model_judge_unit); @remounted: right after a remount,
 * which then becomes a durable point. Adds the units read to *@units_read
 * (if not NULL).
 */
bool sector_model_read_back(struct sector_model *m, struct kvftl *ftl, uint64_t arrival_ns,
                            uint8_t *buf, size_t buf_bytes, const char *why, bool remounted,
                            uint64_t *units_read);

/*
 * sector_model_read_back_batched() - the same through
 * kvftl_block_read_batch(): a read per unit, SECTOR_MODEL_READ_BATCH reads
 * (or as many units as @buf holds) a call.
 */
#define SECTOR_MODEL_READ_BATCH 32
bool sector_model_read_back_batched(struct sector_model *m, struct kvftl *ftl, uint64_t arrival_ns,
                                    uint8_t *buf, size_t buf_bytes, const char *why, bool remounted,
                                    uint64_t *units_read);

/*
 * kvftl_check() passes, kvftl_block_lbas() is still the model's namespace
 * and the live_keys gauge (mapped units) is the model's count.
 */
bool sector_model_check_device(struct sector_model *m, struct kvftl *ftl, const char *why);
/* The same without kvftl_check(): the namespace and the gauge. */
bool sector_model_check_gauges(struct sector_model *m, struct kvftl *ftl, const char *why);

#endif
