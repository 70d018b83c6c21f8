/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Durability: the checkpoint written on orderly close (fast clean mount),
 * and crash mount, which rebuilds the index by scanning the value log
 * stripe by stripe in the order they were opened, keeping for each key the
 * record with the highest sequence number (a tombstone deletes it).
 */
#ifndef KVFTL_RECOVERY_H
#define KVFTL_RECOVERY_H

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
