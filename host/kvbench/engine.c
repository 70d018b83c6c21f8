/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine layer's shared parts: which engines this build has, the
 * per-thread error sentence, and finding the block personality's
 * statistics log for the engines that run on a file system or a raw
 * namespace (the device keeps the C0h log and transfer counters for the
 * nvm command set too: docs/device.md, docs/kvbench.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kvbench.h"

static __thread char engine_error[256];

void kb_engine_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(engine_error, sizeof(engine_error), fmt, ap);
    va_end(ap);
}

const char *kb_engine_error(void)
{
    return engine_error;
}

#ifndef KVBENCH_HAVE_ROCKSDB
#define KVBENCH_HAVE_ROCKSDB 0
#endif
#ifndef KVBENCH_HAVE_RAWHASH
#define KVBENCH_HAVE_RAWHASH 0
#endif

const struct kb_engine_ops *kb_engine_ops_of(enum kb_store s)
{
    switch (s) {
    case KB_STORE_KVSSD:
        return &kb_engine_kvssd;
#if KVBENCH_HAVE_ROCKSDB
    case KB_STORE_ROCKSDB:
        return &kb_engine_rocksdb;
#endif
#if KVBENCH_HAVE_RAWHASH
    case KB_STORE_RAWHASH:
        return &kb_engine_rawhash;
#endif
    default:
        return NULL;
    }
}

int kb_nvme_namespace_of(const char *sysfs_target, char *out, size_t len)
{
    char t[512];
    unsigned c, ns, part;
    snprintf(t, sizeof(t), "%s", sysfs_target);
    char *base = strrchr(t, '/');
    base = base ? base + 1 : t;
    if (sscanf(base, "nvme%un%up%u", &c, &ns, &part) == 3) {
        /* a partition: its parent directory is the namespace */
        char *slash = strrchr(t, '/');
        if (slash) {
            *slash = '\0';
        }
        base = strrchr(t, '/');
        base = base ? base + 1 : t;
    }
    char tail;
    if (sscanf(base, "nvme%un%u%c", &c, &ns, &tail) != 2) {
        return -1;
    }
    snprintf(out, len, "/dev/nvme%un%u", c, ns);
    return 0;
}

/* The NVMe namespace holding block device @dev, through /sys/dev/block/M:m. */
static int namespace_of(dev_t dev, char *out, size_t len)
{
    char link[64], target[512];
    snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(dev), minor(dev));
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0) {
        return -1;
    }
    target[n] = '\0';
    return kb_nvme_namespace_of(target, out, len);
}

struct kvssd_dev *kb_nvm_stats_open(const char *explicit_dev, const char *path, char *why,
                                    size_t whylen)
{
    char found[64];
    const char *dev = explicit_dev;
    struct kvssd_dev *h = NULL;

    if (!dev || !dev[0]) {
        struct stat st;
        if (!path || stat(path, &st)) {
            snprintf(why, whylen, "cannot stat %s: %s", path ? path : "(none)", strerror(errno));
            return NULL;
        }
        if (namespace_of(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev, found, sizeof(found))) {
            snprintf(why, whylen, "%s is not on an NVMe namespace; give --nvm-ctrl", path);
            return NULL;
        }
        dev = found;
    }
    /*
     * A controller (/dev/nvmeX) has no NSID for libkvssd's handle; the log
     * page is the controller's, so read it through its namespace 1 (admin
     * passthrough on a namespace reaches the same controller).
     */
    unsigned c;
    char tail, ns1[64];
    if (sscanf(dev, "/dev/nvme%u%c", &c, &tail) == 1) {
        snprintf(ns1, sizeof(ns1), "/dev/ng%un1", c);
        if (access(ns1, F_OK)) {
            snprintf(ns1, sizeof(ns1), "/dev/nvme%un1", c);
        }
        dev = ns1;
    }
    int rc = kvssd_open_passthru(dev, &h);
    if (rc) {
        snprintf(why, whylen, "cannot open %s: %s", dev, strerror(errno));
        return NULL;
    }
    struct kvssd_stats_log log;
    if (kvssd_get_stats(h, &log, NULL) || log.version < 1 ||
        log.version > KVSSD_STATS_LOG_VERSION) {
        snprintf(why, whylen,
                 "%s has no kvssd statistics log (C0h): not a -device kvssd,command-set=nvm", dev);
        kvssd_close(h);
        return NULL;
    }
    return h;
}

void kb_provenance_read(struct kvssd_dev *dev)
{
    struct kvssd_config_log l;

    if (dev && kvssd_get_config(dev, &l, NULL) == 0) {
        kb_report_provenance_device(&l);
    }
}
