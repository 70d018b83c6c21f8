/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Durability: the checkpoint written on orderly close (fast clean mount),
 * and crash mount, which rebuilds the index by scanning the value log
 * stripe by stripe in the order they were opened, keeping for each key the
 * record with the highest sequence number (a tombstone deletes it). The
 * image header and its checks are both personalities'; for nvm the
 * checkpoint's contents, the clean mount's checks and the crash mount are
 * block_recovery.c's (recovery_mount(), recovery_scan() and
 * recovery_checkpoint() hand them over).
 */
#ifndef KVFTL_RECOVERY_H
#define KVFTL_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kvftl;

#define IMAGE_MAGIC 0x4b56535344494d47ULL /* "KVSSDIMG" */
#define IMAGE_VERSION 1

/* The first 4 KiB of an image file. */
struct image_header {
    uint64_t magic;
    uint32_t version;
    uint32_t clean;            /* 1 after an orderly close: checkpoint valid */
    uint32_t channels, dies_per_channel, blocks_per_die, pages_per_block, page_size;
    uint32_t placement_unit_bytes, index_page_bytes;
    uint32_t large_blob_unit_bytes; /* 0 in images made before the field existed */
    uint64_t checkpoint_bytes;
    uint64_t checkpoint_checksum;
    uint32_t page_data_bytes;       /* 0 in images made before the field existed */
    /*
     * The personality the image was made for (enum kvftl_command_set: 0 = kv,
     * also in images made before the field existed, 1 = nvm) and, for nvm,
     * its logical block size (0 for kv, which has none). The nvm layout also
     * has the unit spare areas (struct nand_unit_spare) after the page spare
     * areas: nand_init() sizes the mapping from the personality's geometry.
     */
    uint32_t command_set;
    uint32_t lba_bytes;
    /*
     * nvm: the namespace's 4 KiB units (the geometry, overprovision_percent
     * and gc_low_watermark_blocks decide it): another count would move the
     * map's translation pages and cut or grow the namespace. 0 for kv.
     */
    uint64_t units;
    /*
     * kv: the index design the image was made with (enum kvftl_index; 0 =
     * hash, also in images made before the field existed): another design
     * cannot read its index pages or checkpoint. 0 for nvm.
     */
    uint32_t index_design;
};

/*
 * The checkpoint, written after the NAND and spare areas of the image on an
 * orderly close (nand_checkpoint_offset()): this head, then
 *   struct stripe_info stripes[stripes]
 *   uint32_t dir[1 << global_depth]      index page id per directory slot
 *   uint32_t page_ppn[npages]            NAND page of each index page
 *   uint8_t page_depth[npages]           local depth of each index page
 *   uint64_t page_sum[npages]            XXH3-64 of each index page's bytes in NAND
 * The image header holds its length and XXH3-64. Every field is validated
 * at mount; anything out of range, or an index page whose bytes do not
 * match page_sum, makes the mount rebuild the index by scanning the log.
 */
#define CHECKPOINT_LAYOUT 2 /* 0: before index page checksums (such a checkpoint is not used) */

struct checkpoint_head {
    uint64_t magic;
    uint64_t next_seq, stripe_seq;
    uint64_t live_keys, live_user_bytes, live_nand_bytes, tombstone_bytes, index_nand_bytes;
    uint64_t vl_wp;
    uint32_t global_depth, npages;
    uint32_t stream_stripe, stream_idx;
    uint32_t vl_stripe, alloc_cursor;
    uint32_t stripes, layout;
    uint64_t hash_seed; /* the index's secret key-hash seed: the pages below are hashed with it */
};

/* checkpoint_length() - bytes of a checkpoint with these counts (layout CHECKPOINT_LAYOUT). */
uint64_t checkpoint_length(uint32_t stripes, uint32_t global_depth, uint32_t npages);

/*
 * What the last mount of an image found (kvftl_open()), kept for
 * kvftl_mount_note() and the tests. A clean mount from a valid checkpoint
 * leaves it zero.
 */
struct recovery_report {
    bool scanned; /* the index was rebuilt by scanning the log */
    char why[256]; /* why the checkpoint was not used ("" = the image was not closed) */
    uint64_t keys; /* live keys after the scan */
    uint64_t bad_checksums; /* records skipped because their checksum fails */
    uint64_t unindexed; /* intact records the index could not take */
    uint32_t cut_stripes; /* data stripes whose log could not be parsed to its end */
    uint32_t cut_stripe; /* the first of them */
    uint64_t cut_offset; /* where its parse stopped (byte offset in the stripe) */
    char cut_what[64]; /* what stopped it */
    uint64_t unread_bytes; /* programmed bytes after those stops, not read */
    uint32_t bad_spares; /* pages whose spare area names a kind the stripe does not have */
    uint64_t bad_spare_page; /* the first of them */
    uint32_t bad_spare_kind; /* and its kind */
    /* the nvm personality's crash mount (block_recovery.c) */
    uint64_t units_mapped; /* units mapped after the scan */
    uint32_t tpages_used; /* translation pages whose copy was the base of the map */
    uint64_t units_replayed; /* units whose newest slot was newer than their translation page */
    uint64_t units_unmapped; /* units the unmap log unmapped */
    uint64_t bad_unit_slots; /* slots whose spare area names a unit beyond the namespace */
    uint64_t bad_unit_slot, bad_unit; /* the first of them, and its unit */
    uint64_t future_slots; /* slots whose spare area holds a sequence number from the future */
    uint64_t future_slot, future_seq; /* the first of them, and its number */
    uint32_t bad_tpages; /* translation page copies failing their check */
    uint64_t bad_tpage_ppn; /* the first of them */
    char bad_tpage_what[96]; /* and what was wrong */
    uint64_t bad_entries; /* map entries naming a slot that does not hold their unit */
    uint64_t bad_entry_unit; /* the first of them */
    uint32_t bad_entry_slot;
    uint32_t bad_unmaps; /* damaged unmap log entries */
    char note[1024]; /* the sentence kvftl_mount_note() returns */
};

/*
 * What recovery asks of the personality on top, which registers it
 * (kvftl_open(), blockftl_open()) as it registers struct gc_owner: the
 * personalities call recovery, never the reverse.
 */
struct recovery_owner {
    /* empty the DRAM state over a device about to be scanned (kvftl.c: ftl_reset_state()) */
    void (*reset_state)(struct kvftl *ftl);
    /* nvm, orderly close: program the buffered data and the dirty map (blockftl.c) */
    int (*flush)(struct kvftl *ftl, uint64_t *now_ns);
};

/* recovery_format_image() - write a fresh image header (new device). */
void recovery_format_image(struct kvftl *ftl);

/*
 * recovery_mount() - bring up the DRAM state of an existing image: from the
 * checkpoint if it is clean, else by scanning. Returns 0 or -1 with @err.
 */
int recovery_mount(struct kvftl *ftl, char *err, size_t err_len);

/* recovery_scan() - crash mount: rebuild everything from the log. */
int recovery_scan(struct kvftl *ftl, char *err, size_t err_len);

/* recovery_checkpoint() - orderly close: write the checkpoint and mark the image clean. */
int recovery_checkpoint(struct kvftl *ftl);

/* recovery_mark_dirty() - the image is in use: a crash now needs a scan. */
void recovery_mark_dirty(struct kvftl *ftl);

#endif
