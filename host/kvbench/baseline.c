/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench baseline: 4 KiB NVM Reads (opcode 02h) through the same
 * passthrough path libkvssd uses (kvssd_submit(): NVME_IOCTL_IO64_CMD),
 * against any NVMe namespace - e.g. QEMU's stock -device nvme - as the
 * yardstick for the per-command cost of the KV commands.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvbench.h"

#define READ_BYTES 4096u

struct baseline {
    struct kvssd_dev *dev;
    uint32_t nsid;
    uint64_t blocks;      /* namespace size in logical blocks */
    uint32_t lba_bytes;
    uint64_t total_ops;
    uint64_t deadline_ns;
    _Atomic uint64_t next;
    _Atomic bool stop;
};

struct baseline_thread {
    struct baseline *b;
    pthread_t tid;
    struct kb_result res;
};

/* Identify Namespace (CNS 00h): the namespace's size and logical block size. */
static int identify_nvm(struct baseline *b)
{
    static uint8_t id[KVSSD_IDENTIFY_BYTES] __attribute__((aligned(4096)));
    struct kvssd_cmd cmd;
    struct kvssd_result r;
    kvssd_cmd_identify(&cmd, b->nsid, KVSSD_CNS_NS, KVSSD_CSI_NVM, id);
    int rc = kvssd_submit(b->dev, &cmd, &r);
    if (rc) {
        return rc;
    }
    memcpy(&b->blocks, id + KVSSD_ID_NS_NSZE, 8);
    unsigned ds = kvssd_id_ns_lbads(id);
    if (ds < 9 || ds > 12 || !b->blocks) {
        return -KVSSD_ERR_NO_DEVICE;
    }
    b->lba_bytes = 1u << ds;
    return 0;
}

static void *baseline_main(void *arg)
{
    struct baseline_thread *t = arg;
    struct baseline *b = t->b;
    uint8_t *buf;
    uint32_t nlb = READ_BYTES / b->lba_bytes;
    uint64_t span = b->blocks / nlb;

    if (posix_memalign((void **)&buf, 4096, READ_BYTES)) {
        return NULL;
    }
    while (!atomic_load(&b->stop)) {
        uint64_t i = atomic_fetch_add(&b->next, 1);
        if ((b->total_ops && i >= b->total_ops) ||
            (b->deadline_ns && kb_now_ns() >= b->deadline_ns)) {
            atomic_store(&b->stop, true);
            break;
        }
        struct kvssd_cmd cmd;
        struct kvssd_result r;
        uint64_t slba = (i % span) * nlb;
        memset(&cmd, 0, sizeof(cmd));
        cmd.sqe.cdw[0] = KVSSD_NVM_OPC_READ;
        cmd.sqe.cdw[1] = b->nsid;
        cmd.sqe.cdw[10] = (uint32_t)slba;
        cmd.sqe.cdw[11] = (uint32_t)(slba >> 32);
        cmd.sqe.cdw[12] = nlb - 1; /* zero-based number of logical blocks */
        cmd.data = buf;
        cmd.data_len = READ_BYTES;
        uint64_t t0 = kb_now_ns();
        int rc = kvssd_submit(b->dev, &cmd, &r);
        kb_hist_add(&t->res.hist, kb_now_ns() - t0);
        t->res.ops++;
        t->res.op_count[KB_OP_READ]++;
        t->res.commands++;
        t->res.user_bytes += READ_BYTES;
        if (rc) {
            t->res.errors++;
        }
    }
    free(buf);
    return NULL;
}

int kb_baseline(struct kb_config *c)
{
    struct baseline b;
    memset(&b, 0, sizeof(b));
    int rc = kvssd_open_passthru(c->device, &b.dev);
    if (rc) {
        fprintf(stderr, "kvbench: cannot open %s: %s\n", c->device, strerror(errno));
        return 1;
    }
    b.nsid = kvssd_dev_info(b.dev)->nsid;
    kb_provenance_read(b.dev);
    rc = identify_nvm(&b);
    if (rc) {
        fprintf(stderr, "kvbench: %s is not an NVM namespace with 512 B-4 KiB blocks (%s)\n",
                c->device, kvssd_strerror(rc));
        kvssd_close(b.dev);
        return 1;
    }
    b.total_ops = c->run.ops;
    uint64_t t0 = kb_now_ns();
    if (c->run.duration_s > 0) {
        b.deadline_ns = t0 + (uint64_t)(c->run.duration_s * 1e9);
    }
    struct baseline_thread *th = calloc(c->threads, sizeof(*th));
    for (unsigned i = 0; i < c->threads; i++) {
        th[i].b = &b;
        pthread_create(&th[i].tid, NULL, baseline_main, &th[i]);
    }
    struct kb_result res;
    memset(&res, 0, sizeof(res));
    res.phase = "baseline";
    for (unsigned i = 0; i < c->threads; i++) {
        pthread_join(th[i].tid, NULL);
        res.ops += th[i].res.ops;
        res.op_count[KB_OP_READ] += th[i].res.op_count[KB_OP_READ];
        res.commands += th[i].res.commands;
        res.errors += th[i].res.errors;
        res.user_bytes += th[i].res.user_bytes;
        kb_hist_merge(&res.hist, &th[i].res.hist);
    }
    res.elapsed_s = (double)(kb_now_ns() - t0) / 1e9;
    free(th);
    snprintf(c->preset, sizeof(c->preset), "baseline-read-4k");
    if (c->json) {
        kb_report_json(c, &res, 1);
    } else {
        kb_report_table(c, &res);
    }
    kvssd_close(b.dev);
    return res.errors ? 3 : 0;
}
