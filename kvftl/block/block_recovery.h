/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Durability of the nvm personality (docs/kvftl.md, "Durability and
 * recovery of the nvm personality"): the checkpoint an orderly close
 * writes (after every dirty translation page and the buffered data), the
 * clean mount that loads it, the crash mount that rebuilds the page map
 * from the newest copy of each translation page and the unit spare areas
 * of the slots written after it, and the unmap log that keeps a completed
 * Deallocate or Write Zeroes durable with PLP.
 *
 * The image file of an nvm device: header, NAND, page spare areas, unit
 * spare areas (nand.h), the unmap log (nand.h), then this checkpoint.
 */
#ifndef KVFTL_BLOCK_RECOVERY_H
#define KVFTL_BLOCK_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

struct kvftl;

#define BLOCK_CHECKPOINT_MAGIC 0x3154504b434d564eULL /* "NVMCKPT1" */
#define BLOCK_CHECKPOINT_LAYOUT 1

/*
 * The largest write sequence number a mount believes: 2^48 4-KiB writes
 * (an exabyte) is more than any device of this model writes in its life,
 * so a larger one in a spare area, a translation page or the unmap log is
 * damage ("from the future"), and is skipped rather than allowed to make
 * every later write look older than it.
 */
#define BLOCK_SEQ_LIMIT (1ull << 48)

/*
 * The checkpoint: this head, then
 *   struct stripe_info stripes[stripes]   (the stripe table as in memory)
 *   uint32_t tpage_ppn[tpages]            NAND page of each translation page's
 *                                         live copy, UINT32_MAX if never written
 * Its length and XXH3-64 are in the image header (as the KV checkpoint's).
 * The map itself is in the translation pages, all programmed before it.
 */
struct block_checkpoint_head {
    uint64_t magic;
    uint32_t layout;
    uint32_t stripes;
    uint64_t units;       /* namespace units (must match the configuration's) */
    uint32_t tpages;      /* translation pages */
    uint32_t per;         /* entries per translation page */
    uint64_t write_seq;   /* the last sequence number given to a slot */
    uint64_t stripe_seq;  /* the next stripe open sequence number */
    uint64_t mapped;      /* units mapped */
    uint64_t tpage_bytes; /* NAND bytes of live translation pages */
    uint32_t alloc_cursor;
    uint32_t data_stripe; /* the open data stripe, UINT32_MAX if none */
    uint64_t data_wp;     /* its write pointer (a page boundary) */
    uint32_t index_stripe; /* the index stream's stripe, UINT32_MAX if none */
    uint32_t index_idx;    /* its next page */
};

/* block_checkpoint_length() - bytes of an nvm checkpoint with these counts. */
uint64_t block_checkpoint_length(uint32_t stripes, uint32_t tpages);

/*
 * block_recovery_checkpoint() - orderly close: program the buffered data
 * and every dirty translation page, empty the unmap log, and return the
 * checkpoint's bytes (recovery.c writes them and marks the image clean),
 * or NULL on power loss or no free stripe.
 */
GByteArray *block_recovery_checkpoint(struct kvftl *ftl);

/*
 * block_recovery_load() - clean mount from checkpoint bytes @b (@len, its
 * checksum already verified): every field is checked (the stripe table, the
 * streams, each translation page's copy, header and checksum, each map
 * entry's slot against its unit spare area, the valid bytes and counts they
 * add up to) before anything is loaded. 0, or -1 with @why and nothing
 * changed.
 */
int block_recovery_load(struct kvftl *ftl, const uint8_t *b, uint64_t len, char *why,
                        size_t why_len);

/*
 * block_recovery_scan() - crash mount (also kvftl_power_cycle()): the map
 * from flash, the stripe states, valid bytes, free count and write sequence
 * number rebuilt; what was skipped is in ftl->mount. 0, or -1 with @err
 * (no free stripe to program the rebuilt translation pages).
 */
int block_recovery_scan(struct kvftl *ftl, char *err, size_t err_len);

/* block_recovery_note() - the mount note (kvftl_mount_note()) after a scan. */
void block_recovery_note(struct kvftl *ftl);

/*
 * block_recovery_log_unmap() - with PLP, units [@first, @first + @units)
 * were just unmapped: record it in the unmap log, so that it survives a
 * power cut or a killed process as a completed write does. A full log
 * first programs every dirty translation page (*@now_ns moves) and starts
 * empty. Without PLP nothing is logged: the unmap is durable after Flush.
 * 0, or -1 (no free stripe or power lost: the unmap is then not durable).
 */
int block_recovery_log_unmap(struct kvftl *ftl, uint64_t first, uint64_t units, uint64_t *now_ns);

/* block_recovery_log_clear() - every dirty translation page was programmed: the log is empty. */
void block_recovery_log_clear(struct kvftl *ftl);

/*
 * block_recovery_before_erase() - without PLP, before GC erases data
 * stripe @victim (its live slots already copied and programmed): if a slot
 * in it names a unit that is now unmapped (Deallocate, Write Zeroes) in a
 * dirty translation page, program the dirty translation pages first. That
 * slot may be the copy that supersedes an older one still on flash; erased
 * while the unmap is only in DRAM, a crash mount would replay the older
 * copy, a state the unit had before its last Flush. 0, or -1 (no free
 * stripe, power lost).
 */
int block_recovery_before_erase(struct kvftl *ftl, uint32_t victim, uint64_t *now_ns);

#endif
