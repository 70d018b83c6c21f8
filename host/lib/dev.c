/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Opening a KV namespace by its generic char device (or, with a "pci:"
 * path, through the user-space PCI transport of pci.c; with a "sim:" path,
 * the device in this process, sim.c), discovering KV
 * namespaces with libnvme's topology scan, and the tag allocator shared by
 * inline streams and staged keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <libnvme.h>

#include "kvssd_priv.h"

/* Copy a space-padded Identify string and drop the padding. */
static void id_string(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
    dst[n] = '\0';
    for (size_t i = n; i > 0 && (dst[i - 1] == ' ' || dst[i - 1] == '\0'); i--) {
        dst[i - 1] = '\0';
    }
}

/* "/dev/ng0n1" -> "/dev/nvme0"; empty when the name does not parse. */
static void ctrl_path_of(const char *path, char *out, size_t len)
{
    const char *base = strrchr(path, '/');
    unsigned ctrl, ns;
    base = base ? base + 1 : path;
    out[0] = '\0';
    if (sscanf(base, "ng%un%u", &ctrl, &ns) == 2) {
        snprintf(out, len, "/dev/nvme%u", ctrl);
    }
}

/* 4 KiB << MDTS, or 0 for no limit (MDTS 0) and for limits past what a uint32_t length reaches. */
static uint32_t max_transfer_bytes(uint8_t mdts)
{
    return mdts == 0 || mdts > 19 ? 0 : 4096u << mdts;
}

/*
 * Identify the namespace as KV (CNS 05h, CSI 01h) and fill the limits.
 * Linux's nvmet passthru target (NVMe over fabrics) answers that Identify
 * with Invalid Opcode for every CSI but ZNS (drivers/nvme/target/passthru.c)
 * and passes every Get Log Page: on Invalid Opcode or Invalid Field the same
 * page is read from log C2h, which only this device has (its vendor area
 * must be ours).
 */
static int identify_kv(struct kvssd_dev *dev, uint32_t nsid, struct kvssd_dev_info *info)
{
    struct kvssd_id_ns_kv *id = NULL;
    struct nvme_id_ctrl *ctrl = NULL;
    struct kvssd_cmd cmd;
    struct kvssd_result res;
    int rc;

    if (posix_memalign((void **)&id, 4096, sizeof(*id)) ||
        posix_memalign((void **)&ctrl, 4096, sizeof(*ctrl))) {
        free(id);
        return -KVSSD_ERR_SYSTEM;
    }
    memset(id, 0, sizeof(*id));
    memset(ctrl, 0, sizeof(*ctrl));
    kvssd_cmd_identify(&cmd, nsid, KVSSD_CNS_CSI_NS, KVSSD_CSI_KV, id);
    memset(&res, 0, sizeof(res));
    rc = kvssd_dev_submit(dev, &cmd, &res);
    if (rc == -KVSSD_ERR_INVALID_OPCODE || rc == -KVSSD_ERR_INVALID_FIELD) {
        memset(id, 0, sizeof(*id));
        kvssd_cmd_get_id_ns_kv_log(&cmd, nsid, id);
        rc = kvssd_dev_submit(dev, &cmd, &res);
        if (rc == 0 && kvssd_id_ns_kv_long_key_max(id) == 0) {
            rc = -KVSSD_ERR_NO_DEVICE; /* another vendor's log C2h */
        }
    }
    if (rc == -KVSSD_ERR_SYSTEM || rc == -KVSSD_ERR_TIMEOUT) {
        goto out;
    }
    if (rc || kvssd_id_ns_kv_decode(id, info) != 0) {
        rc = -KVSSD_ERR_NO_DEVICE; /* answers, but not as a KV namespace */
        goto out;
    }

    kvssd_cmd_identify(&cmd, 0, KVSSD_CNS_CTRL, KVSSD_CSI_NVM, ctrl);
    if (kvssd_dev_submit(dev, &cmd, &res) == 0) {
        id_string(info->model, ctrl->mn, sizeof(ctrl->mn));
        id_string(info->serial, ctrl->sn, sizeof(ctrl->sn));
        id_string(info->firmware, ctrl->fr, sizeof(ctrl->fr));
        info->mdts = ctrl->mdts;
        info->max_transfer_bytes = max_transfer_bytes(ctrl->mdts);
    }
    rc = 0;
out:
    free(id);
    free(ctrl);
    return rc;
}

static int probe(const char *path, int *fdp, uint32_t *nsidp, struct kvssd_dev_info *info)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return -KVSSD_ERR_SYSTEM;
    }
    int nsid = ioctl(fd, NVME_IOCTL_ID);
    if (nsid <= 0) {
        int e = errno;
        close(fd);
        errno = e ? e : ENOTTY;
        return nsid < 0 ? -KVSSD_ERR_SYSTEM : -KVSSD_ERR_NO_DEVICE;
    }
    struct kvssd_dev tmp = {.fd = fd, .ctrl_fd = -1};
    int rc = identify_kv(&tmp, (uint32_t)nsid, info);
    if (rc) {
        int e = errno;
        close(fd);
        errno = e;
        return rc;
    }
    *fdp = fd;
    *nsidp = (uint32_t)nsid;
    return 0;
}

static uint32_t tag_start(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_nsec;
    x ^= x >> 29;
    return (uint32_t)(x % KVSSD_MAX_TAGS);
}

/*
 * The pci transport: attach to the function, then take the first active
 * namespace (Identify CNS 02h) that identifies as KV (CNS 05h, CSI 01h).
 */
static int open_pci(struct kvssd_dev *dev, const char *spec)
{
    char bdf[32];
    uint32_t *list = NULL;
    struct kvssd_cmd cmd;
    struct kvssd_result res = {0};

    int rc = kvssd_pci_attach(spec, &dev->pci, bdf, sizeof(bdf));
    if (rc) {
        return rc;
    }
    if (posix_memalign((void **)&list, 4096, KVSSD_IDENTIFY_BYTES)) {
        return -KVSSD_ERR_SYSTEM;
    }
    memset(list, 0, KVSSD_IDENTIFY_BYTES);
    kvssd_cmd_identify(&cmd, 0, KVSSD_CNS_ACTIVE_NS_LIST, KVSSD_CSI_NVM, list);
    rc = kvssd_dev_submit(dev, &cmd, &res);
    if (!rc) {
        rc = -KVSSD_ERR_NO_DEVICE;
        for (int i = 0; i < 1024 && list[i] && rc == -KVSSD_ERR_NO_DEVICE; i++) {
            rc = identify_kv(dev, list[i], &dev->info);
            if (!rc) {
                dev->info.nsid = list[i];
            }
        }
    }
    free(list);
    if (rc) {
        return rc;
    }
    snprintf(dev->info.path, sizeof(dev->info.path), "%s%s", KVSSD_PCI_PREFIX, bdf);
    snprintf(dev->info.ctrl_path, sizeof(dev->info.ctrl_path), "%s%s", KVSSD_PCI_PREFIX, bdf);
    return 0;
}

/*
 * The sim transport: the device in this process, on the image of @spec
 * ("IMAGE[,prop=value...]"); its one namespace, NSID 1, identifies as KV.
 */
static int open_sim(struct kvssd_dev *dev, const char *spec)
{
#ifdef KVSSD_HAVE_SIM
    char err[512];
    int rc = kvssd_sim_open(spec, &dev->sim, err, sizeof(err));
    if (rc) {
        fprintf(stderr, "libkvssd: sim: %s\n", err);
        return rc;
    }
    rc = identify_kv(dev, 1, &dev->info);
    if (rc) {
        return rc;
    }
    dev->info.nsid = 1;
    snprintf(dev->info.path, sizeof(dev->info.path), "%s%s", KVSSD_SIM_PREFIX, spec);
    snprintf(dev->info.ctrl_path, sizeof(dev->info.ctrl_path), "%s", dev->info.path);
    return 0;
#else
    (void)dev, (void)spec;
    fprintf(stderr, "libkvssd: sim: this libkvssd was built without the firmware "
                    "(meson -Dfirmware=enabled, which needs libxxhash-dev)\n");
    return -KVSSD_ERR_INVALID_ARGUMENT;
#endif
}

int kvssd_open(const char *path, struct kvssd_dev **devp)
{
    struct kvssd_dev *dev;
    int rc;

    if (!path || !devp) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    dev = calloc(1, sizeof(*dev));
    if (!dev) {
        return -KVSSD_ERR_SYSTEM;
    }
    dev->ctrl_fd = -1;
    dev->fd = -1;
    if (!strncmp(path, KVSSD_PCI_PREFIX, strlen(KVSSD_PCI_PREFIX)) ||
        !strncmp(path, KVSSD_SIM_PREFIX, strlen(KVSSD_SIM_PREFIX))) {
        rc = path[0] == 'p' ? open_pci(dev, path + strlen(KVSSD_PCI_PREFIX))
                            : open_sim(dev, path + strlen(KVSSD_SIM_PREFIX));
        if (rc) {
            int e = errno;
            kvssd_close(dev);
            errno = e;
            return rc;
        }
    } else {
        rc = probe(path, &dev->fd, &dev->info.nsid, &dev->info);
        if (rc) {
            free(dev);
            return rc;
        }
        snprintf(dev->info.path, sizeof(dev->info.path), "%s", path);
        ctrl_path_of(path, dev->info.ctrl_path, sizeof(dev->info.ctrl_path));
    }
    dev->mode = KVSSD_XFER_ADAPTIVE;
    kvssd_xfer_config_default(&dev->xfer);
    /* processes share the device's tag table: start each at its own place */
    atomic_store(&dev->tag_hint, tag_start());

    /*
     * A config file that is named but missing, unreadable or malformed is
     * -KVSSD_ERR_CONFIG, never the device's failure: the caller reloads it
     * with kvssd_xfer_config_load() for the sentence (FILE:LINE: KEY ...).
     */
    const char *cfg = getenv(KVSSD_CONFIG_ENV);
    if (cfg && *cfg) {
        rc = kvssd_xfer_config_load(cfg, &dev->xfer, NULL, 0);
    } else if (access(KVSSD_DEFAULT_CONFIG_PATH, R_OK) == 0) {
        rc = kvssd_xfer_config_load(KVSSD_DEFAULT_CONFIG_PATH, &dev->xfer, NULL, 0);
    }
    if (rc) {
        int e = errno;
        kvssd_close(dev);
        errno = e;
        return -KVSSD_ERR_CONFIG;
    }
    *devp = dev;
    return 0;
}

int kvssd_open_passthru(const char *path, struct kvssd_dev **devp)
{
    struct kvssd_dev *dev;

    if (!path || !devp) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    if (!strncmp(path, KVSSD_PCI_PREFIX, strlen(KVSSD_PCI_PREFIX)) ||
        !strncmp(path, KVSSD_SIM_PREFIX, strlen(KVSSD_SIM_PREFIX))) {
        /* raw commands need a namespace: the pci and sim transports find the KV one */
        int rc = kvssd_open(path, devp);
        if (!rc) {
            (*devp)->mode = KVSSD_XFER_PRP;
        }
        return rc;
    }
    dev = calloc(1, sizeof(*dev));
    if (!dev) {
        return -KVSSD_ERR_SYSTEM;
    }
    dev->ctrl_fd = -1;
    dev->fd = open(path, O_RDWR | O_CLOEXEC);
    int nsid = dev->fd < 0 ? -1 : ioctl(dev->fd, NVME_IOCTL_ID);
    if (nsid <= 0) {
        int e = errno ? errno : ENOTTY;
        if (dev->fd >= 0) {
            close(dev->fd);
        }
        free(dev);
        errno = e;
        return -KVSSD_ERR_SYSTEM;
    }
    dev->info.nsid = (uint32_t)nsid;
    snprintf(dev->info.path, sizeof(dev->info.path), "%s", path);
    ctrl_path_of(path, dev->info.ctrl_path, sizeof(dev->info.ctrl_path));
    dev->mode = KVSSD_XFER_PRP;
    kvssd_xfer_config_default(&dev->xfer);
    *devp = dev;
    return 0;
}

void kvssd_close(struct kvssd_dev *dev)
{
    if (!dev) {
        return;
    }
    if (dev->fd >= 0) {
        close(dev->fd);
    }
    kvssd_pci_detach(dev->pci);
    kvssd_sim_close(dev->sim);
    if (dev->ctrl_fd >= 0) {
        close(dev->ctrl_fd);
    }
    free(dev);
}

const struct kvssd_dev_info *kvssd_dev_info(const struct kvssd_dev *dev)
{
    return &dev->info;
}

static int add_path(char (*paths)[64], int max, int n, const char *path)
{
    for (int i = 0; i < n && i < max; i++) {
        if (!strcmp(paths[i], path)) {
            return n;
        }
    }
    if (n < max) {
        snprintf(paths[n], 64, "%s", path);
    }
    return n + 1;
}

int kvssd_discover(char (*paths)[64], int max)
{
    nvme_root_t r;
    nvme_host_t h;
    nvme_subsystem_t s;
    nvme_ctrl_t c;
    nvme_ns_t ns;
    int n = 0;
    char path[64];

    /* 1. libnvme's view of the topology: namespaces reporting CSI KV */
    r = nvme_create_root(NULL, LOG_ERR);
    if (r) {
        if (nvme_scan_topology(r, NULL, NULL) == 0) {
            nvme_for_each_host(r, h)
            {
                nvme_for_each_subsystem(h, s)
                {
                    nvme_subsystem_for_each_ctrl(s, c)
                    {
                        nvme_ctrl_for_each_ns(c, ns)
                        {
                            const char *g = nvme_ns_get_generic_name(ns);
                            if (nvme_ns_get_csi(ns) != NVME_CSI_KV || !g) {
                                continue;
                            }
                            snprintf(path, sizeof(path), "/dev/%s", g);
                            n = add_path(paths, max, n, path);
                        }
                    }
                }
            }
        }
        nvme_free_tree(r);
    }

    /*
     * 2. A KV namespace has no block driver, so older libnvme scans (which
     * walk block devices) may not see it: probe every generic char device.
     */
    glob_t g;
    if (glob("/dev/ng*n*", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            struct kvssd_dev_info info;
            int fd;
            uint32_t nsid;
            memset(&info, 0, sizeof(info));
            if (probe(g.gl_pathv[i], &fd, &nsid, &info) == 0) {
                close(fd);
                n = add_path(paths, max, n, g.gl_pathv[i]);
            }
        }
        globfree(&g);
    }
    return n;
}

/*
 * A Store's data pointer carries the whole value (prp) or its whole 4 KiB
 * pages (hybrid); an initiator refuses a transfer past MDTS before sending
 * anything (Linux: EINVAL from blk_rq_map_user). Inline Stores send none.
 */
int kvssd_store_check(const struct kvssd_dev *dev, uint32_t value_len, char *msg, size_t msg_len)
{
    uint32_t max = dev->info.max_transfer_bytes;
    enum kvssd_xfer_mode method = kvssd_xfer_choose(dev->mode, &dev->xfer, value_len);
    uint32_t dptr_bytes = method == KVSSD_XFER_PRP      ? value_len
                          : method == KVSSD_XFER_HYBRID ? value_len & ~(KVSSD_HYBRID_PAGE_BYTES - 1)
                                                        : 0;

    if (value_len > KVSSD_VALUE_MAX) {
        if (msg && msg_len) {
            snprintf(msg, msg_len, "value of %u bytes exceeds the largest value, %u bytes",
                     value_len, KVSSD_VALUE_MAX);
        }
        return -KVSSD_ERR_VALUE_SIZE;
    }
    if (max && dptr_bytes > max) {
        if (msg && msg_len) {
            snprintf(msg, msg_len,
                     "value of %u bytes exceeds the controller's maximum transfer of %u bytes "
                     "(MDTS %u); a %s Store carries at most %u bytes, an inline one any size",
                     value_len, max, dev->info.mdts, kvssd_xfer_mode_name(method),
                     method == KVSSD_XFER_HYBRID ? max + KVSSD_HYBRID_PAGE_BYTES - 1 : max);
        }
        return -KVSSD_ERR_VALUE_SIZE;
    }
    return 0;
}

void kvssd_set_xfer_mode(struct kvssd_dev *dev, enum kvssd_xfer_mode mode)
{
    dev->mode = mode;
}

enum kvssd_xfer_mode kvssd_get_xfer_mode(const struct kvssd_dev *dev)
{
    return dev->mode;
}

void kvssd_set_xfer_config(struct kvssd_dev *dev, const struct kvssd_xfer_config *cfg)
{
    dev->xfer = *cfg;
}

const struct kvssd_xfer_config *kvssd_get_xfer_config(const struct kvssd_dev *dev)
{
    return &dev->xfer;
}

/*
 * A bitmap of 4096 tags claimed with atomic fetch-or; the rotating hint
 * keeps a just-freed tag from being reused at once, so a late completion of
 * an abandoned stream cannot be confused with a new one.
 */
int kvssd_tag_alloc(struct kvssd_dev *dev)
{
    return kvssd_tag_alloc_below(dev, KVSSD_MAX_TAGS);
}

int kvssd_tag_alloc_below(struct kvssd_dev *dev, uint32_t limit)
{
    uint32_t start = atomic_fetch_add(&dev->tag_hint, 1);
    if (limit > KVSSD_MAX_TAGS) {
        limit = KVSSD_MAX_TAGS;
    }
    for (uint32_t i = 0; i < limit; i++) {
        uint32_t tag = (start + i) % limit;
        uint64_t bit = 1ull << (tag % 64);
        uint64_t old = atomic_fetch_or(&dev->tags[tag / 64], bit);
        if (!(old & bit)) {
            return (int)tag;
        }
    }
    return -KVSSD_ERR_TAG_TABLE_FULL;
}

void kvssd_tag_free(struct kvssd_dev *dev, uint32_t tag)
{
    tag &= KVSSD_TAG_MASK;
    atomic_fetch_and(&dev->tags[tag / 64], ~(1ull << (tag % 64)));
}

int kvssd_store_tags(struct kvssd_dev *dev, uint32_t key_len, enum kvssd_xfer_mode method,
                     uint32_t *key_tag, uint32_t *stream_tag)
{
    int t;
    *key_tag = 0;
    *stream_tag = 0;
    if (key_len > KVSSD_KEY_INLINE_MAX) {
        if ((t = kvssd_tag_alloc(dev)) < 0) {
            return t;
        }
        *key_tag = (uint32_t)t;
    }
    if (method == KVSSD_XFER_INLINE || method == KVSSD_XFER_HYBRID) {
        bool full = kvssd_store_layout(kvssd_dev_wire(dev), method, key_len) == KVSSD_WIRE_FULL;
        if ((t = kvssd_tag_alloc_below(dev, full ? KVSSD_INLINE_FULL_MAX_TAG + 1
                                                 : KVSSD_MAX_TAGS)) < 0) {
            if (key_len > KVSSD_KEY_INLINE_MAX) {
                kvssd_tag_free(dev, *key_tag);
            }
            return t;
        }
        *stream_tag = (uint32_t)t;
    }
    return 0;
}

void kvssd_store_tags_free(struct kvssd_dev *dev, uint32_t key_len, enum kvssd_xfer_mode method,
                           uint32_t key_tag, uint32_t stream_tag)
{
    if (key_len > KVSSD_KEY_INLINE_MAX) {
        kvssd_tag_free(dev, key_tag);
    }
    if (method == KVSSD_XFER_INLINE || method == KVSSD_XFER_HYBRID) {
        kvssd_tag_free(dev, stream_tag);
    }
}
