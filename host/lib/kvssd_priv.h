/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libkvssd internals shared by dev.c, sync.c and async.c. */
#ifndef KVSSD_PRIV_H
#define KVSSD_PRIV_H

#include <stdatomic.h>

#include <kvssd/libkvssd.h>

#define KVSSD_TAG_WORDS (KVSSD_MAX_TAGS / 64)
#define KVSSD_IOCTL_TIMEOUT_MS 0 /* the kernel's default */

struct kvssd_dev {
    int fd;      /* /dev/ngXnY: I/O and admin passthrough */
    int ctrl_fd; /* /dev/nvmeX for Format NVM; -1 = use fd */
    struct kvssd_dev_info info;
    enum kvssd_xfer_mode mode;
    struct kvssd_xfer_config xfer;
    _Atomic uint64_t tags[KVSSD_TAG_WORDS]; /* bit set = tag in use */
    _Atomic uint32_t tag_hint;
};

/*
 * Data transfers above this go through a huge-page bounce buffer (dma.c):
 * well under the ~500 KiB that 127 discontiguous 4 KiB pages can carry.
 */
#define KVSSD_BOUNCE_MIN_BYTES (256u * 1024)
void *kvssd_dma_alloc(size_t len);
void kvssd_dma_free(void *p, size_t len);
void *kvssd_dma_thread_bounce(void); /* KVSSD_VALUE_MAX bytes, per thread; NULL if out of memory */

/* Issue one command by ioctl (sync.c). Returns 0/-err; fills res. */
int kvssd_submit_ioctl(int fd, struct kvssd_cmd *cmd, struct kvssd_result *res);

/* Tags a Store needs: key tag for long keys, stream tag for inline/hybrid. */
int kvssd_store_tags(struct kvssd_dev *dev, uint32_t key_len, enum kvssd_xfer_mode method,
                     uint32_t *key_tag, uint32_t *stream_tag);
void kvssd_store_tags_free(struct kvssd_dev *dev, uint32_t key_len, enum kvssd_xfer_mode method,
                           uint32_t key_tag, uint32_t stream_tag);

#endif
