/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kvssd engine: the KV-SSD itself through libkvssd (Store, Retrieve,
 * Delete, Exist, iterators) on benchmark.device. Its own C0h log describes
 * it; the async I/O path (io_uring, queue_depth > 1) lives in runner.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvbench.h"

struct kvssd_engine {
    struct kvssd_dev *dev;
};

static const char *const kv_device_ops[5] = {"store", "retrieve", "delete", "exist", "iterate"};

static int kv_open(const struct kb_config *c, void **stp, char *err, size_t errlen)
{
    struct kvssd_engine *e = calloc(1, sizeof(*e));
    char xerr[256];
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = kvssd_open(c->device, &e->dev);
    if (rc == -KVSSD_ERR_CONFIG) {
        /* the threshold file, not the device: reload it for its sentence (file and line) */
        const char *env = getenv(KVSSD_CONFIG_ENV);
        struct kvssd_xfer_config x;
        kvssd_xfer_config_default(&x);
        if (kvssd_xfer_config_load(env && *env ? env : KVSSD_DEFAULT_CONFIG_PATH, &x, xerr,
                                   sizeof(xerr)) != 0) {
            snprintf(err, errlen, "%s%s", xerr,
                     env && *env ? " (named by $" KVSSD_CONFIG_ENV ")" : "");
            free(e);
            return -1;
        }
    }
    if (rc == -KVSSD_ERR_SYSTEM && errno == ENOTTY) { /* NVME_IOCTL_ID refused */
        snprintf(err, errlen,
                 "cannot open %s: not an NVMe namespace; give a KV namespace's generic char "
                 "device with --device /dev/ngXnY (or pci:BDF)",
                 c->device);
        free(e);
        return -1;
    }
    if (rc) {
        snprintf(err, errlen, "cannot open %s: %s", c->device,
                 rc == -KVSSD_ERR_SYSTEM ? strerror(errno) : kvssd_strerror(rc));
        free(e);
        return -1;
    }
    if (c->xfer_config[0]) {
        struct kvssd_xfer_config x = *kvssd_get_xfer_config(e->dev);
        if (kvssd_xfer_config_load(c->xfer_config, &x, xerr, sizeof(xerr))) {
            snprintf(err, errlen, "%s", xerr);
            kvssd_close(e->dev);
            free(e);
            return -1;
        }
        kvssd_set_xfer_config(e->dev, &x);
    }
    if (c->alpha >= 0 || c->beta >= 0) {
        struct kvssd_xfer_config x = *kvssd_get_xfer_config(e->dev);
        if (c->alpha >= 0) {
            x.alpha = c->alpha;
        }
        if (c->beta >= 0) {
            x.beta = c->beta;
        }
        kvssd_set_xfer_config(e->dev, &x);
    }
    kvssd_set_xfer_mode(e->dev, c->mode);
    *stp = e;
    return 0;
}

static void kv_close(void *st)
{
    struct kvssd_engine *e = st;
    if (e) {
        kvssd_close(e->dev);
        free(e);
    }
}

static int kv_put(void *st, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl,
                  uint32_t *commands)
{
    struct kvssd_result r = {0};
    int rc = kvssd_store(((struct kvssd_engine *)st)->dev, k, kl, v, vl, 0, &r);
    *commands += r.commands;
    return rc;
}

static int kv_get(void *st, const uint8_t *k, uint32_t kl, uint8_t *buf, uint32_t cap,
                  uint32_t *vlen, uint32_t *commands)
{
    struct kvssd_result r = {0};
    int rc = kvssd_retrieve(((struct kvssd_engine *)st)->dev, k, kl, buf, cap, vlen, &r);
    *commands += r.commands;
    return rc;
}

static int kv_del(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands)
{
    struct kvssd_result r = {0};
    int rc = kvssd_delete(((struct kvssd_engine *)st)->dev, k, kl, &r);
    *commands += r.commands;
    return rc;
}

static int kv_exist(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands)
{
    struct kvssd_result r = {0};
    int rc = kvssd_exist(((struct kvssd_engine *)st)->dev, k, kl, &r);
    *commands += r.commands;
    return rc;
}

/* Iter Open on the prefix, Iter Reads of 64 KiB, Iter Close. */
static int kv_iterate(void *st, const uint8_t *prefix, uint32_t plen, uint32_t max, uint64_t *bytes,
                      uint32_t *commands)
{
    struct kvssd_iter it;
    const uint8_t *k, *v;
    uint32_t kl, vl, n = 0;
    int rc = kvssd_iter_open(((struct kvssd_engine *)st)->dev, &it, prefix, plen, false, 64 * 1024);
    if (rc) {
        return rc;
    }
    *commands += 2;
    while (n < max && (rc = kvssd_iter_next(&it, &k, &kl, &v, &vl)) == 1) {
        n++;
        *bytes += kl;
    }
    *commands += 1 + n / 256; /* Iter Read batches, approximately */
    int crc = kvssd_iter_close(&it);
    return rc < 0 ? rc : crc;
}

/*
 * Flush (00h): with plp=on (the default) stores are durable when
 * acknowledged and Flush is nearly free; with plp=off it programs the page
 * buffer, as fsync does for the other engines.
 */
static int kv_sync(void *st)
{
    int rc = kvssd_flush(((struct kvssd_engine *)st)->dev, NULL);
    if (rc) {
        kb_engine_set_error("Flush: %s", kvssd_strerror(rc));
    }
    return rc;
}

static struct kvssd_dev *kv_stats_dev(void *st)
{
    return ((struct kvssd_engine *)st)->dev;
}

struct kvssd_dev *kb_engine_kvssd_dev(void *st)
{
    return ((struct kvssd_engine *)st)->dev;
}

const struct kb_engine_ops kb_engine_kvssd = {
    .name = "kvssd",
    .open = kv_open,
    .close = kv_close,
    .put = kv_put,
    .get = kv_get,
    .del = kv_del,
    .exist = kv_exist,
    .iterate = kv_iterate,
    .sync = kv_sync,
    .footprint = NULL,
    .stats_dev = kv_stats_dev,
    .device_ops = kv_device_ops,
};
