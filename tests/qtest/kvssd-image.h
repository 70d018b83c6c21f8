/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the qtests read from a device's image file (image=): the key-hash
 * seed its checkpoint names after an orderly QEMU exit. Include after
 * kvssd-common.h.
 */
#ifndef KVSSD_QTEST_IMAGE_H
#define KVSSD_QTEST_IMAGE_H

#define XXH_INLINE_ALL
#include <xxhash.h>

/* The image layout (hw/kvssd/kvftl is the firmware's tree in QEMU's). */
#include "../../hw/kvssd/kvftl/kv/recovery.h"
#include "../../hw/kvssd/kvftl/media/nand.h"

/*
 * The key-hash seed of the device that last ran on @image, read from the
 * checkpoint its orderly exit wrote (a test-only path: no command returns
 * the seed). The image header names the geometry; the checkpoint follows
 * the NAND and its spare areas and must match the header's checksum.
 */
static inline uint64_t kv_image_hash_seed(const char *image)
{
    struct image_header h;
    int fd = open(image, O_RDONLY);

    g_assert(fd >= 0);
    g_assert(pread(fd, &h, sizeof(h), 0) == sizeof(h));
    g_assert(h.magic == IMAGE_MAGIC && h.clean == 1);
    g_assert(h.checkpoint_bytes >= sizeof(struct checkpoint_head) &&
             h.checkpoint_bytes < 64 * 1024 * 1024);
    uint64_t pages = (uint64_t)h.channels * h.dies_per_channel * h.blocks_per_die *
                     h.pages_per_block;
    uint64_t off = NAND_IMAGE_HEADER_BYTES + pages * h.page_size +
                   ((pages * sizeof(struct nand_oob) + 4095) & ~4095ull);
    g_autofree uint8_t *ckpt = g_malloc(h.checkpoint_bytes);
    g_assert(pread(fd, ckpt, h.checkpoint_bytes, off) == (ssize_t)h.checkpoint_bytes);
    close(fd);
    g_assert_cmphex(XXH3_64bits(ckpt, h.checkpoint_bytes), ==, h.checkpoint_checksum);
    struct checkpoint_head head;
    memcpy(&head, ckpt, sizeof(head));
    return head.hash_seed;
}

#endif
