/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nvm personality of kvftl: a page-mapping block FTL on the same flash
 * model as the KV personality (NAND, page buffer, stripes, GC, image
 * persistence, statistics). A device opened with
 * cfg->command_set == KVFTL_CMDSET_NVM by kvftl_open() answers these calls
 * and refuses the KV ones (and the reverse) with KVFTL_INVALID_FIELD.
 *
 * Addressing: logical blocks of cfg->lba_bytes (512..4096); the FTL maps
 * 4 KiB units (KVFTL_BLOCK_UNIT_BYTES), so a write that covers part of a
 * unit merges in the DRAM write buffer (cfg->write_buffer_pages_per_die),
 * reading the rest of it from NAND when the unit leaves the buffer, or at
 * once without a buffer (read-modify-write). The map is held in the
 * same DRAM budget as the KV index (index_dram_bytes): when the map is
 * larger than the budget its pages are cached DFTL-style (a miss reads a
 * translation page from flash; an evicted dirty one is programmed).
 *
 * Every call takes the arrival time and returns the simulated completion
 * time in cpl->done_ns, as the KV calls do. Everything else of
 * include/kvftl/kvftl.h applies to both personalities: kvftl_open/close,
 * kvftl_mount_note, kvftl_get_config, kvftl_stats_get/reset (the fields'
 * meaning for nvm is in docs/kvftl.md), kvftl_power_cut_after/cycle,
 * kvftl_check (map vs spare areas vs valid-byte accounting).
 */
#ifndef KVFTL_BLOCK_H
#define KVFTL_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <kvftl/kvftl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVFTL_BLOCK_UNIT_BYTES 4096u /* the mapping unit */

/*
 * The most logical blocks one call moves: 64 MiB / lba_bytes (the NVMe
 * NLB field allows 65536 blocks of any size). A larger @nlb is
 * INVALID_FIELD.
 */
#define KVFTL_BLOCK_MAX_XFER_BYTES (64u * 1024 * 1024)

/*
 * kvftl_block_lbas() - the namespace's size in logical blocks (NSZE = NCAP):
 * the user capacity (what is left of the flash after over-provisioning and
 * the map's translation pages) in lba_bytes units. 0 for a kv device.
 */
uint64_t kvftl_block_lbas(const struct kvftl *ftl);

/*
 * kvftl_block_read() - copy @nlb (>= 1) blocks from @slba into @buf
 * (@nlb * lba_bytes bytes). A block never written, deallocated or written
 * with zeroes reads as zeroes (Identify DLFEAT = 001b). Status:
 * INVALID_FIELD when [@slba, @slba + @nlb) passes kvftl_block_lbas() or
 * @nlb is 0 or more than KVFTL_BLOCK_MAX_XFER_BYTES / lba_bytes (the
 * command set maps the range case to LBA Out of Range before calling);
 * UNRECOVERED_ERROR when a unit's stored copy fails its check (damaged
 * image: its slot's unit spare area does not name it), counted in
 * media_errors; @buf's contents are then undefined.
 */
void kvftl_block_read(struct kvftl *ftl, uint64_t slba, uint32_t nlb, void *buf,
                      uint64_t arrival_ns, struct kvftl_cpl *cpl);

/* One read of kvftl_block_read_batch(): the arguments of kvftl_block_read(). */
struct kvftl_block_read_req {
    uint64_t slba;
    uint32_t nlb;
    void *buf;
    uint64_t arrival_ns;
};

/*
 * kvftl_block_read_batch() - the same as kvftl_block_read() on
 * @reqs[0..@n-1] in order (statuses, bytes, simulated times and statistics
 * identical), into @cpls[0..@n-1], but faster on the host: the map entries
 * of several reads are loaded together, then their data, instead of each
 * read waiting on its own loads (as kvftl_retrieve_batch()). For a caller
 * with several Reads queued.
 */
void kvftl_block_read_batch(struct kvftl *ftl, const struct kvftl_block_read_req *reqs,
                            struct kvftl_cpl *cpls, size_t n);

/*
 * kvftl_block_write() - write @nlb blocks from @buf at @slba. Durable on
 * success when plp is on; otherwise after kvftl_flush() (or @fua).
 * Status: INVALID_FIELD as for read; CAPACITY_EXCEEDED only if GC cannot
 * free a stripe (cannot happen while the map fits the user capacity; a
 * firmware bug if it does); INTERNAL_ERROR after a power cut.
 */
void kvftl_block_write(struct kvftl *ftl, uint64_t slba, uint32_t nlb, const void *buf, bool fua,
                       uint64_t arrival_ns, struct kvftl_cpl *cpl);

/*
 * kvftl_block_write_zeroes() - the blocks read as zeroes afterwards, at the
 * cost of a map update only (no data programmed); @deallocate: they are
 * also unmapped (the same here: a zero unit holds no flash). A partial
 * unit is written zeroes as by kvftl_block_write(). Status: INVALID_FIELD when the range passes
 * kvftl_block_lbas() or @nlb is 0 (no transfer limit: no data moves);
 * CAPACITY_EXCEEDED and INTERNAL_ERROR as for write.
 */
void kvftl_block_write_zeroes(struct kvftl *ftl, uint64_t slba, uint32_t nlb, uint64_t arrival_ns,
                              struct kvftl_cpl *cpl);

/*
 * kvftl_block_deallocate() - Dataset Management, Deallocate, one range:
 * whole units in the range are unmapped (their flash becomes garbage) and
 * read as zeroes; partial units at its ends are left as they are (the
 * specification lets a deallocated block read its old data or zeroes, and
 * DLFEAT's zeroes promise is for whole units here: docs/kvftl.md).
 * Status: INVALID_FIELD when the range passes kvftl_block_lbas() or @nlb
 * is 0 (no transfer limit); INTERNAL_ERROR after a power cut.
 */
void kvftl_block_deallocate(struct kvftl *ftl, uint64_t slba, uint32_t nlb, uint64_t arrival_ns,
                            struct kvftl_cpl *cpl);

/*
 * kvftl_block_deallocate_units() - kvftl_block_deallocate() of the front
 * of [@slba, @slba + @nlb) only: of the 4 KiB units the range touches
 * (whole or partial), the first @max_units, so that one call's map work is
 * bounded and a caller can go on from where it stopped with a later call
 * (the device's Deallocate does, one main-loop slice at a time). Returns
 * the blocks done: @nlb when the range touches at most @max_units units,
 * else fewer, ending on a unit boundary (a unit is never split between two
 * calls, so a whole unit of the rest is still unmapped whole). 0 with
 * cpl->status set when refused as kvftl_block_deallocate() (and for a
 * @max_units of 0: INVALID_FIELD) or failed. Each call is one DELETE
 * operation (latency, firmware time); the deletes counter counts a range
 * once, on the call that reaches its end.
 */
uint32_t kvftl_block_deallocate_units(struct kvftl *ftl, uint64_t slba, uint32_t nlb,
                                      uint32_t max_units, uint64_t arrival_ns,
                                      struct kvftl_cpl *cpl);

/*
 * Flush is kvftl_flush() and Format is kvftl_format() for both
 * personalities: the write buffer, the page buffer and the map's dirty
 * pages reach flash;
 * Format unmaps every block.
 */

#ifdef __cplusplus
}
#endif

#endif /* KVFTL_BLOCK_H */
