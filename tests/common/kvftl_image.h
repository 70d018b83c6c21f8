/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The layout of a kvftl image file, for tests that damage images on purpose
 * (tests/kvftl/test_recovery.c, tests/fuzz/fuzz_image.c): where the header,
 * a NAND page, a spare area and the checkpoint are, and a re-seal that
 * recomputes the checkpoint's checksums after a test changed a field, so
 * that the mount's field checks (not the checksum) are what is tested.
 * Includes the firmware's internal headers (kvftl/kv/recovery.h and friends).
 */
#ifndef KVSSD_TESTS_KVFTL_IMAGE_H
#define KVSSD_TESTS_KVFTL_IMAGE_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <xxhash.h>

#include "ftl.h"

struct kvftl_image {
    int fd;
    uint64_t file_bytes;
    struct image_header h;
    struct nand_geometry geo;  /* from the header */
    uint64_t ckpt_off;         /* where the checkpoint starts */
};

/* kvftl_image_open() - read the header of the image at @path (false if it has none). */
static inline bool kvftl_image_open(struct kvftl_image *im, const char *path)
{
    struct stat st;
    memset(im, 0, sizeof(*im));
    im->fd = open(path, O_RDWR);
    if (im->fd < 0) {
        return false;
    }
    if (fstat(im->fd, &st) != 0 ||
        pread(im->fd, &im->h, sizeof(im->h), 0) != (ssize_t)sizeof(im->h) ||
        im->h.magic != IMAGE_MAGIC || !im->h.page_size ||
        (im->h.page_size & (im->h.page_size - 1))) {
        close(im->fd);
        im->fd = -1;
        return false;
    }
    im->file_bytes = (uint64_t)st.st_size;
    im->geo = (struct nand_geometry){
        .channels = im->h.channels,
        .dies_per_channel = im->h.dies_per_channel,
        .blocks_per_die = im->h.blocks_per_die,
        .pages_per_block = im->h.pages_per_block,
        .page_size = im->h.page_size,
    };
    nand_geometry_derive(&im->geo);
    /* as nand_checkpoint_offset(): header, NAND, spare areas rounded up to 4 KiB */
    uint64_t oob = (im->geo.total_pages * sizeof(struct nand_oob) + 4095) & ~4095ull;
    im->ckpt_off = NAND_IMAGE_HEADER_BYTES + im->geo.total_bytes + oob;
    return true;
}

static inline void kvftl_image_close(struct kvftl_image *im)
{
    if (im->fd >= 0) {
        close(im->fd);
    }
    im->fd = -1;
}

/* File offset of NAND page @ppn and of its spare area. */
static inline uint64_t kvftl_image_page_off(const struct kvftl_image *im, uint64_t ppn)
{
    return NAND_IMAGE_HEADER_BYTES + ppn * im->geo.page_size;
}

static inline uint64_t kvftl_image_oob_off(const struct kvftl_image *im, uint64_t ppn)
{
    return NAND_IMAGE_HEADER_BYTES + im->geo.total_bytes + ppn * sizeof(struct nand_oob);
}

static inline bool kvftl_image_write(struct kvftl_image *im, uint64_t off, const void *p, size_t n)
{
    return pwrite(im->fd, p, n, (off_t)off) == (ssize_t)n;
}

static inline bool kvftl_image_read(struct kvftl_image *im, uint64_t off, void *p, size_t n)
{
    return pread(im->fd, p, n, (off_t)off) == (ssize_t)n;
}

/*
 * kvftl_image_checkpoint() - the checkpoint's bytes (g_free them), or NULL
 * if the header names none that fits in the file. *@len: its length.
 */
static inline uint8_t *kvftl_image_checkpoint(struct kvftl_image *im, size_t *len)
{
    uint64_t n = im->h.checkpoint_bytes;
    if (n < sizeof(struct checkpoint_head) || im->ckpt_off + n > im->file_bytes) {
        return NULL;
    }
    uint8_t *b = g_malloc(n);
    if (!kvftl_image_read(im, im->ckpt_off, b, n)) {
        g_free(b);
        return NULL;
    }
    *len = n;
    return b;
}

/* Offsets inside a checkpoint of the arrays after the head (layout CHECKPOINT_LAYOUT). */
struct kvftl_image_ckpt_layout {
    uint64_t stripes, dir, page_ppn, page_depth, page_sum, end;
};

static inline struct kvftl_image_ckpt_layout
kvftl_image_ckpt_layout(const struct checkpoint_head *ch)
{
    struct kvftl_image_ckpt_layout l;
    l.stripes = sizeof(*ch);
    l.dir = l.stripes + (uint64_t)ch->stripes * sizeof(struct stripe_info);
    l.page_ppn = l.dir +
                 (ch->global_depth < 40 ? (uint64_t)sizeof(uint32_t) << ch->global_depth : 0);
    l.page_depth = l.page_ppn + (uint64_t)ch->npages * sizeof(uint32_t);
    l.page_sum = l.page_depth + ch->npages;
    l.end = l.page_sum + (uint64_t)ch->npages * sizeof(uint64_t);
    return l;
}

/*
 * kvftl_image_seal_header() - write the checkpoint @b (@len) back and set
 * the header's length and checksum over it, so the mount gets past the
 * checksum whatever the bytes say.
 */
static inline bool kvftl_image_seal_header(struct kvftl_image *im, const uint8_t *b, size_t len)
{
    im->h.checkpoint_bytes = len;
    im->h.checkpoint_checksum = XXH3_64bits(b, len);
    return kvftl_image_write(im, im->ckpt_off, b, len) &&
           kvftl_image_write(im, 0, &im->h, sizeof(im->h));
}

/*
 * kvftl_image_reseal() - after a test changed checkpoint bytes @b (@len):
 * recompute each index page's checksum from the NAND page the checkpoint
 * names (where the arrays fit), then kvftl_image_seal_header().
 */
static inline bool kvftl_image_reseal(struct kvftl_image *im, uint8_t *b, size_t len)
{
    struct checkpoint_head ch;
    if (len >= sizeof(ch)) {
        memcpy(&ch, b, sizeof(ch));
        struct kvftl_image_ckpt_layout l = kvftl_image_ckpt_layout(&ch);
        uint32_t ipb = im->h.index_page_bytes;
        if (ch.global_depth < 40 && l.end <= len && ipb && ipb <= im->geo.page_size) {
            uint8_t *page = g_malloc(ipb);
            for (uint32_t p = 0; p < ch.npages; p++) {
                uint32_t ppn;
                memcpy(&ppn, b + l.page_ppn + 4ull * p, 4);
                uint64_t sum = 0;
                if (ppn < im->geo.total_pages &&
                    kvftl_image_read(im, kvftl_image_page_off(im, ppn), page, ipb)) {
                    sum = XXH3_64bits(page, ipb);
                }
                memcpy(b + l.page_sum + 8ull * p, &sum, 8);
            }
            g_free(page);
        }
    }
    return kvftl_image_seal_header(im, b, len);
}

/* kvftl_image_index_ppn() - NAND page of index page @page_id per the checkpoint (UINT32_MAX if
 * none). */
static inline uint32_t kvftl_image_index_ppn(struct kvftl_image *im, uint32_t page_id)
{
    size_t len;
    uint8_t *b = kvftl_image_checkpoint(im, &len);
    uint32_t ppn = UINT32_MAX;
    if (b) {
        struct checkpoint_head ch;
        memcpy(&ch, b, sizeof(ch));
        struct kvftl_image_ckpt_layout l = kvftl_image_ckpt_layout(&ch);
        if (page_id < ch.npages && l.page_ppn + 4ull * (page_id + 1) <= len) {
            memcpy(&ppn, b + l.page_ppn + 4ull * page_id, 4);
        }
        g_free(b);
    }
    return ppn;
}

#endif
