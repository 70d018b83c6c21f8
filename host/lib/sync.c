/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Synchronous operations. On a /dev/ngXnY handle each command goes through
 * libnvme's nvme_io_passthru64() / nvme_admin_passthru64(), i.e.
 * NVME_IOCTL_IO64_CMD on the namespace's generic char device: only opcode,
 * NSID, CDW2-3 and CDW10-15 reach the device; the kernel builds the data
 * pointer. The 64-bit result is CQE DW0 (low) and DW1 (high). On a pci:
 * handle the same commands go whole through the user-space driver (pci.c),
 * and inline Stores use the full layout; hybrid Stores a stock head (data
 * pointer) with the full-tail bit and 8Dh transfers (docs/protocol.md 7.3a).
 * On a sim: handle they run whole in this process (sim.c), as on pci:.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libnvme.h>

#include "kvssd_priv.h"

int kvssd_submit_ioctl(int fd, struct kvssd_cmd *cmd, struct kvssd_result *res)
{
    const uint32_t *d = cmd->sqe.cdw;
    uint8_t opc = kvssd_sqe_opcode(&cmd->sqe);
    bool h2d = opc & 1; /* opcode bit 0: host-to-device data */
    void *data = cmd->data, *bounce = NULL;
    __u64 result = 0;
    int st;

    if (cmd->data_len > KVSSD_BOUNCE_MIN_BYTES && cmd->data_len <= KVSSD_VALUE_MAX &&
        (bounce = kvssd_dma_thread_bounce())) {
        if (h2d) {
            memcpy(bounce, cmd->data, cmd->data_len);
        }
        data = bounce;
    }
    if (cmd->admin) {
        st = nvme_admin_passthru64(fd, opc, 0, 0, d[1], d[2], d[3], d[10], d[11], d[12], d[13],
                                   d[14], d[15], cmd->data_len, data, 0, NULL,
                                   KVSSD_IOCTL_TIMEOUT_MS, &result);
    } else {
        st = nvme_io_passthru64(fd, opc, 0, 0, d[1], d[2], d[3], d[10], d[11], d[12], d[13], d[14],
                                d[15], cmd->data_len, data, 0, NULL, KVSSD_IOCTL_TIMEOUT_MS,
                                &result);
    }
    res->commands++;
    if (st < 0) {
        res->sys_errno = errno;
        return -KVSSD_ERR_SYSTEM;
    }
    if (bounce && !h2d) {
        memcpy(cmd->data, bounce, cmd->data_len);
    }
    res->status = (uint16_t)st & KVSSD_STATUS_CODE_MASK;
    res->dw0 = (uint32_t)result;
    res->dw1 = (uint32_t)(result >> 32);
    return kvssd_status_to_err((uint16_t)st);
}

int kvssd_dev_submit(struct kvssd_dev *dev, struct kvssd_cmd *cmd, struct kvssd_result *res)
{
    if (dev->pci) {
        return kvssd_pci_submit(dev->pci, cmd, res);
    }
    if (dev->sim) {
        return kvssd_sim_submit(dev->sim, cmd, res);
    }
    return kvssd_submit_ioctl(dev->fd, cmd, res);
}

enum kvssd_wire_layout kvssd_dev_wire(const struct kvssd_dev *dev)
{
    return dev->pci || dev->sim ? KVSSD_WIRE_FULL : KVSSD_WIRE_STOCK;
}

int kvssd_submit(struct kvssd_dev *dev, struct kvssd_cmd *cmd, struct kvssd_result *res)
{
    struct kvssd_result r = {0};
    int rc = kvssd_dev_submit(dev, cmd, &r);
    if (res) {
        *res = r;
    }
    return rc;
}

static int check_key(const struct kvssd_dev *dev, const void *key, uint32_t key_len)
{
    if (key_len < KVSSD_KEY_MIN || key_len > kvssd_dev_key_max(dev)) {
        return -KVSSD_ERR_KEY_SIZE;
    }
    return key ? 0 : -KVSSD_ERR_INVALID_ARGUMENT;
}

/* Stage a long key; returns its tag in *tag. Short keys need nothing. */
static int stage_key(struct kvssd_dev *dev, const void *key, uint32_t key_len, uint32_t *tag,
                     struct kvssd_result *r)
{
    struct kvssd_cmd cmd;
    *tag = 0;
    if (key_len <= KVSSD_KEY_INLINE_MAX) {
        return 0;
    }
    int rc = -KVSSD_ERR_INLINE_TAG_IN_USE;
    /* another process may hold the tag: the device refuses it, try another */
    for (int tries = 0; rc == -KVSSD_ERR_INLINE_TAG_IN_USE && tries < 16; tries++) {
        int t = kvssd_tag_alloc(dev);
        if (t < 0) {
            return t;
        }
        *tag = (uint32_t)t;
        kvssd_cmd_key_stage(&cmd, dev->info.nsid, key, key_len, *tag);
        rc = kvssd_dev_submit(dev, &cmd, r);
        if (rc) {
            kvssd_tag_free(dev, *tag);
        }
    }
    return rc;
}

static void unstage_key(struct kvssd_dev *dev, uint32_t key_len, uint32_t tag)
{
    if (key_len > KVSSD_KEY_INLINE_MAX) {
        kvssd_tag_free(dev, tag);
    }
}

static int finish(struct kvssd_result *res, const struct kvssd_result *r, int rc)
{
    if (res) {
        *res = *r;
    }
    return rc;
}

int kvssd_store(struct kvssd_dev *dev, const void *key, uint32_t key_len, const void *value,
                uint32_t value_len, uint32_t options, struct kvssd_result *res)
{
    struct kvssd_result r = {0};
    struct kvssd_store_plan plan;
    struct kvssd_cmd cmd;
    uint32_t key_tag, stream_tag;
    int rc = check_key(dev, key, key_len);

    if (rc) {
        return finish(res, &r, rc);
    }
    rc = kvssd_store_check(dev, value_len, NULL, 0);
    if (rc) {
        return finish(res, &r, rc);
    }
    enum kvssd_xfer_mode method = kvssd_xfer_choose(dev->mode, &dev->xfer, value_len);
    rc = kvssd_store_tags(dev, key_len, method, &key_tag, &stream_tag);
    if (rc) {
        return finish(res, &r, rc);
    }
    rc = kvssd_store_plan_init_layout(&plan, kvssd_dev_wire(dev), dev->info.nsid, key, key_len,
                                      key_tag, stream_tag, value, value_len, options, method);
    for (uint32_t retries = 0; !rc && kvssd_store_plan_next(&plan, &cmd);) {
        rc = kvssd_dev_submit(dev, &cmd, &r);
        /*
         * Tags are chosen per process: another process may hold this one.
         * The device refuses the Key Stage or head without consuming
         * anything, so take another tag and resume from that command.
         */
        uint32_t at = plan.next_index - 1;
        bool stage = key_len > KVSSD_KEY_INLINE_MAX && at == 0;
        bool head = method != KVSSD_XFER_PRP && at == (key_len > KVSSD_KEY_INLINE_MAX ? 1u : 0u);
        int t;
        if (rc == -KVSSD_ERR_INLINE_TAG_IN_USE && (stage || head) && retries < 16 &&
            (t = kvssd_tag_alloc_below(dev, stage || plan.layout == KVSSD_WIRE_STOCK
                                                ? KVSSD_MAX_TAGS
                                                : KVSSD_INLINE_FULL_MAX_TAG + 1)) >= 0) {
            retries++;
            if (stage) {
                kvssd_tag_free(dev, key_tag);
                key_tag = (uint32_t)t;
            } else {
                kvssd_tag_free(dev, stream_tag);
                stream_tag = (uint32_t)t;
            }
            rc = kvssd_store_plan_init_layout(&plan, kvssd_dev_wire(dev), dev->info.nsid, key,
                                              key_len, key_tag, stream_tag, value, value_len,
                                              options, method);
            for (uint32_t i = 0; !rc && i < at; i++) {
                kvssd_store_plan_next(&plan, &cmd);
            }
        }
    }
    /* an inline stream is stored only when its last command says so */
    if (!rc && method != KVSSD_XFER_PRP && !(r.dw1 & KVSSD_INLINE_DW1_STORED)) {
        rc = -KVSSD_ERR_NVME;
    }
    kvssd_store_tags_free(dev, key_len, method, key_tag, stream_tag);
    return finish(res, &r, rc);
}

int kvssd_retrieve(struct kvssd_dev *dev, const void *key, uint32_t key_len, void *buf,
                   uint32_t buf_len, uint32_t *value_len, struct kvssd_result *res)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd cmd;
    uint32_t tag;
    int rc = check_key(dev, key, key_len);

    if (!rc && buf_len && !buf) {
        rc = -KVSSD_ERR_INVALID_ARGUMENT;
    }
    if (!rc) {
        rc = stage_key(dev, key, key_len, &tag, &r);
    }
    if (rc) {
        return finish(res, &r, rc);
    }
    uint32_t xfer_len = kvssd_dev_retrieve_len(dev, buf_len);
    kvssd_cmd_retrieve(&cmd, dev->info.nsid, key, key_len, tag, buf, xfer_len);
    rc = kvssd_dev_submit(dev, &cmd, &r);
    unstage_key(dev, key_len, tag);
    if (!rc && value_len) {
        *value_len = r.dw0;
    }
    /* the buffer had room for the value, one transfer did not: never a silent short read */
    if (!rc && r.dw0 > xfer_len && buf_len > xfer_len) {
        rc = -KVSSD_ERR_VALUE_SIZE;
    }
    return finish(res, &r, rc);
}

typedef void (*key_cmd_fn)(struct kvssd_cmd *, uint32_t, const void *, uint32_t, uint32_t);

static int key_only_op(struct kvssd_dev *dev, key_cmd_fn fn, const void *key, uint32_t key_len,
                       struct kvssd_result *res)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd cmd;
    uint32_t tag;
    int rc = check_key(dev, key, key_len);

    if (!rc) {
        rc = stage_key(dev, key, key_len, &tag, &r);
    }
    if (rc) {
        return finish(res, &r, rc);
    }
    fn(&cmd, dev->info.nsid, key, key_len, tag);
    rc = kvssd_dev_submit(dev, &cmd, &r);
    unstage_key(dev, key_len, tag);
    return finish(res, &r, rc);
}

int kvssd_delete(struct kvssd_dev *dev, const void *key, uint32_t key_len, struct kvssd_result *res)
{
    return key_only_op(dev, kvssd_cmd_delete, key, key_len, res);
}

int kvssd_exist(struct kvssd_dev *dev, const void *key, uint32_t key_len, struct kvssd_result *res)
{
    return key_only_op(dev, kvssd_cmd_exist, key, key_len, res);
}

int kvssd_list(struct kvssd_dev *dev, const void *start, uint32_t start_len, void *buf,
               uint32_t buf_len, struct kvssd_result *res)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd cmd;
    uint32_t tag = 0;
    int rc = 0;

    if (start_len > kvssd_dev_key_max(dev)) {
        rc = -KVSSD_ERR_KEY_SIZE;
    } else if (!buf || buf_len < KVSSD_LIST_HEADER_BYTES || (start_len && !start)) {
        rc = -KVSSD_ERR_INVALID_ARGUMENT;
    }
    if (!rc && start_len) {
        rc = stage_key(dev, start, start_len, &tag, &r);
    }
    if (rc) {
        return finish(res, &r, rc);
    }
    kvssd_cmd_list(&cmd, dev->info.nsid, start, start_len, tag, buf, buf_len);
    rc = kvssd_dev_submit(dev, &cmd, &r);
    if (start_len) {
        unstage_key(dev, start_len, tag);
    }
    return finish(res, &r, rc ? rc : (int)r.dw0);
}

int kvssd_flush(struct kvssd_dev *dev, struct kvssd_result *res)
{
    struct kvssd_cmd cmd;
    kvssd_cmd_flush(&cmd, dev->info.nsid);
    return kvssd_submit(dev, &cmd, res);
}

int kvssd_format(struct kvssd_dev *dev, struct kvssd_result *res)
{
    struct kvssd_cmd cmd;

    if (dev->pci || dev->sim) {
        struct kvssd_result r = {0};
        kvssd_cmd_format(&cmd, dev->info.nsid);
        return finish(res, &r, kvssd_dev_submit(dev, &cmd, &r));
    }
    /* Format NVM is an admin command: prefer the controller's char device */
    if (dev->ctrl_fd < 0 && dev->info.ctrl_path[0]) {
        dev->ctrl_fd = open(dev->info.ctrl_path, O_RDWR | O_CLOEXEC);
    }
    kvssd_cmd_format(&cmd, dev->info.nsid);
    struct kvssd_result r = {0};
    int rc = kvssd_submit_ioctl(dev->ctrl_fd >= 0 ? dev->ctrl_fd : dev->fd, &cmd, &r);
    return finish(res, &r, rc);
}

int kvssd_get_stats(struct kvssd_dev *dev, struct kvssd_stats_log *log, struct kvssd_result *res)
{
    struct kvssd_cmd cmd;
    kvssd_cmd_get_stats_log(&cmd, log);
    return kvssd_submit(dev, &cmd, res);
}

int kvssd_get_config(struct kvssd_dev *dev, struct kvssd_config_log *log, struct kvssd_result *res)
{
    struct kvssd_cmd cmd;
    kvssd_cmd_get_config_log(&cmd, log);
    int rc = kvssd_submit(dev, &cmd, res);
    if (rc == 0 && log->version != KVSSD_CONFIG_LOG_VERSION) {
        return -KVSSD_ERR_TRANSFER; /* not the layout of <kvssd/ext.h> */
    }
    /* names are NUL padded on the wire; a hostile device may not pad them */
    log->preset[sizeof(log->preset) - 1] = '\0';
    log->command_set[sizeof(log->command_set) - 1] = '\0';
    log->packing[sizeof(log->packing) - 1] = '\0';
    log->index[sizeof(log->index) - 1] = '\0';
    log->gc_policy[sizeof(log->gc_policy) - 1] = '\0';
    return rc;
}

int kvssd_reset_stats(struct kvssd_dev *dev, struct kvssd_result *res)
{
    struct kvssd_cmd cmd;
    kvssd_cmd_reset_stats(&cmd);
    return kvssd_submit(dev, &cmd, res);
}

/* ---- prefix iterators --------------------------------------------- */

int kvssd_iter_open(struct kvssd_dev *dev, struct kvssd_iter *it, const void *prefix,
                    uint32_t prefix_len, bool with_values, uint32_t buf_len)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd cmd;
    uint32_t word, mask;

    if (prefix_len > KVSSD_KEY_MAX || (prefix_len && !prefix) ||
        buf_len < sizeof(struct kvssd_iter_header) + 4) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    memset(it, 0, sizeof(*it));
    it->buf = malloc(buf_len);
    if (!it->buf) {
        return -KVSSD_ERR_SYSTEM;
    }
    it->dev = dev;
    it->buf_len = buf_len;
    it->with_values = with_values;
    if (prefix_len) {
        memcpy(it->prefix, prefix, prefix_len);
    }
    it->prefix_len = prefix_len;
    kvssd_prefix_word(prefix, prefix_len, &word, &mask);
    kvssd_cmd_iter_open(&cmd, dev->info.nsid, word, mask, with_values);
    int rc = kvssd_dev_submit(dev, &cmd, &r);
    if (rc) {
        free(it->buf);
        it->buf = NULL;
        return rc;
    }
    it->handle = r.dw0;
    return 0;
}

static int iter_fill(struct kvssd_iter *it)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd cmd;
    struct kvssd_iter_header hdr;

    kvssd_cmd_iter_read(&cmd, it->dev->info.nsid, it->handle, it->buf, it->buf_len);
    int rc = kvssd_dev_submit(it->dev, &cmd, &r);
    if (rc == -KVSSD_ERR_ITERATOR_END) {
        it->at_end = true;
        return 0;
    }
    if (rc) {
        return rc;
    }
    memcpy(&hdr, it->buf, sizeof(hdr));
    if (hdr.bytes > it->buf_len - sizeof(hdr)) {
        return -KVSSD_ERR_TRANSFER;
    }
    it->filled = sizeof(hdr) + hdr.bytes;
    it->off = sizeof(hdr);
    it->left = hdr.entries;
    if (it->left == 0) {
        it->at_end = true;
    }
    return 0;
}

int kvssd_iter_next(struct kvssd_iter *it, const uint8_t **key, uint32_t *key_len,
                    const uint8_t **value, uint32_t *value_len)
{
    const uint8_t *v;
    uint32_t vl;

    for (;;) {
        while (it->left == 0) {
            if (it->at_end) {
                return 0;
            }
            int rc = iter_fill(it);
            if (rc) {
                return rc;
            }
        }
        uint32_t n = kvssd_iter_parse_entry(it->buf + it->off, it->filled - it->off,
                                            it->with_values, key, key_len, &v, &vl);
        if (!n) {
            return -KVSSD_ERR_TRANSFER;
        }
        it->off += n;
        it->left--;
        /* the device matches 4 prefix bytes; the rest is checked here */
        if (it->prefix_len > 4 &&
            (*key_len < it->prefix_len || memcmp(*key, it->prefix, it->prefix_len))) {
            continue;
        }
        if (value) {
            *value = v;
        }
        if (value_len) {
            *value_len = vl;
        }
        return 1;
    }
}

int kvssd_iter_close(struct kvssd_iter *it)
{
    struct kvssd_result r = {0};
    struct kvssd_cmd cmd;
    int rc = 0;

    if (it->buf) {
        kvssd_cmd_iter_close(&cmd, it->dev->info.nsid, it->handle);
        rc = kvssd_dev_submit(it->dev, &cmd, &r);
        free(it->buf);
        it->buf = NULL;
    }
    return rc;
}
