/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A tiny NVMe host driver for the kvssd qtests: it drives BAR0 directly
 * through qtest, keeps queues at fixed guest-physical addresses and polls
 * completion phase bits. Statuses are compared as (DNR << 14) | (SCT << 8) | SC,
 * i.e. the CQE status field without the phase bit.
 */
#ifndef KVSSD_QTEST_COMMON_H
#define KVSSD_QTEST_COMMON_H

#include "qemu/osdep.h"
#include "libqos/pci-pc.h"
#include "libqos/pci.h"
#include "libqtest.h"
#include "qemu/bswap.h"

#include "../../hw/kvssd/include/kvssd/ext.h"
#include "../../hw/kvssd/include/kvssd/nvme.h"
#include "../../hw/kvssd/include/kvssd/nvme_kv.h"

#define KV_DEVFN QPCI_DEVFN(4, 0)

/* Guest-physical layout (the machine has 256 MiB). */
#define KV_ASQ 0x100000ull
#define KV_ACQ 0x101000ull
#define KV_SQ(q) (0x200000ull + (uint64_t)(q) * 0x10000)   /* up to 1024 entries */
#define KV_CQ(q) (0x208000ull + (uint64_t)(q) * 0x10000)
#define KV_PRPLIST 0x1000000ull
#define KV_DATA 0x2000000ull          /* 8 MiB of data buffers */
#define KV_DATA2 0x3000000ull
#define KV_OUTSIDE_RAM 0x40000000000ull /* 4 TiB: no RAM there */
#define KV_ADMIN_ENTRIES 32
#define KV_MAX_Q 65

/* Registers and their fields: <kvssd/nvme.h>. */
/* EN, CSS=110b, 64 B SQE, 16 B CQE */
#define KV_CC_ENABLE kvssd_cc_enable(KVSSD_CC_CSS_ALL)

typedef struct KvQueue {
    uint64_t sq, cq;
    uint16_t size, sq_size, sq_tail, cq_head;   /* size: CQ entries */
    bool phase;
    bool live;
} KvQueue;

typedef struct KvDev {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    KvQueue q[KV_MAX_Q];
    uint16_t next_cid;
} KvDev;

typedef struct KvCqe {
    uint32_t dw0, dw1;
    uint16_t sqhd, sqid, cid, status;
} KvCqe;

static inline uint32_t kv_rd32(KvDev *d, uint64_t off)
{
    return qpci_io_readl(d->dev, d->bar, off);
}

static inline uint64_t kv_rd64(KvDev *d, uint64_t off)
{
    return qpci_io_readq(d->dev, d->bar, off);
}

static inline void kv_wr32(KvDev *d, uint64_t off, uint32_t v)
{
    qpci_io_writel(d->dev, d->bar, off, v);
}

static inline void kv_wr64(KvDev *d, uint64_t off, uint64_t v)
{
    qpci_io_writeq(d->dev, d->bar, off, v);
}

/* A little-endian 32-bit word of guest RAM (shadow doorbells, MSI-X messages). */
static inline uint32_t kv_mem_rd32(KvDev *d, uint64_t addr)
{
    uint32_t v;

    qtest_memread(d->qts, addr, &v, 4);
    return le32_to_cpu(v);
}

static inline void kv_mem_wr32(KvDev *d, uint64_t addr, uint32_t v)
{
    v = cpu_to_le32(v);
    qtest_memwrite(d->qts, addr, &v, 4);
}

/* Does the suite run on index design @design (KVSSD_QTEST_INDEX; unset: the preset's, hash)? */
static inline bool kv_qtest_index_is(const char *design)
{
    return g_strcmp0(g_getenv("KVSSD_QTEST_INDEX"), design) == 0;
}

/* Start QEMU with the device (@props after serial=QT01) and @qemu_args (e.g. "-d guest_errors"). */
static inline KvDev *kv_start_with(const char *props, const char *qemu_args)
{
    KvDev *d = g_new0(KvDev, 1);

    /* Debian's QEMU source has no firmware blobs: SeaBIOS from its package */
    const char *bios = g_getenv("KVSSD_BIOS_DIR") ? g_getenv("KVSSD_BIOS_DIR")
                                                  : "/usr/share/seabios";

    /* KVSSD_QTEST_MACHINE=q35 runs the suite on a PCIe root bus */
    const char *machine = g_getenv("KVSSD_QTEST_MACHINE") ? g_getenv("KVSSD_QTEST_MACHINE") : "pc";

    /*
     * KVSSD_QTEST_INDEX=pm983|lsm runs the suite on that index design (run.sh
     * runs kvssd-test and kvssd-fuzz-test under each); a test whose @props
     * name an index or a preset keeps its own.
     */
    const char *index = g_getenv("KVSSD_QTEST_INDEX");
    g_autofree char *design = NULL;
    if (index && *index && !(props && (strstr(props, "index=") || strstr(props, "preset=")))) {
        design = g_strdup_printf(",index=%s", index);
    }

    d->qts = qtest_initf("-L %s -L /usr/share/qemu -machine %s -m 256M -nodefaults "
                         "-device kvssd,addr=04.0,serial=QT01%s%s%s %s",
                         bios, machine, design ? design : "", props && *props ? "," : "",
                         props ? props : "", qemu_args ? qemu_args : "");
    d->bus = qpci_new_pc(d->qts, NULL);
    d->dev = qpci_device_find(d->bus, KV_DEVFN);
    g_assert(d->dev);
    qpci_device_enable(d->dev);
    d->bar = qpci_iomap(d->dev, 0, NULL);
    return d;
}

static inline KvDev *kv_start(const char *props)
{
    return kv_start_with(props, NULL);
}

static inline void kv_stop(KvDev *d)
{
    g_free(d->dev);
    qpci_free_pc(d->bus);
    qtest_quit(d->qts);
    g_free(d);
}

/* Wait (bounded by polls, not by time) until CSTS & mask == want. */
static inline bool kv_wait_csts(KvDev *d, uint32_t mask, uint32_t want)
{
    for (int i = 0; i < 100000; i++) {
        if ((kv_rd32(d, KVSSD_REG_CSTS) & mask) == want) {
            return true;
        }
    }
    return false;
}

/* Program the admin queue and enable; returns CSTS. */
static inline uint32_t kv_enable_with(KvDev *d, uint32_t cc, uint32_t aqa)
{
    kv_wr32(d, KVSSD_REG_AQA, aqa);
    kv_wr64(d, KVSSD_REG_ASQ, KV_ASQ);
    kv_wr64(d, KVSSD_REG_ACQ, KV_ACQ);
    qtest_memset(d->qts, KV_ACQ, 0, 4096);
    kv_wr32(d, KVSSD_REG_CC, cc);
    memset(d->q, 0, sizeof(d->q));
    d->q[0] = (KvQueue){.sq = KV_ASQ,
                        .cq = KV_ACQ,
                        .size = KV_ADMIN_ENTRIES,
                        .sq_size = KV_ADMIN_ENTRIES,
                        .phase = true,
                        .live = true};
    return kv_rd32(d, KVSSD_REG_CSTS);
}

static inline void kv_enable(KvDev *d)
{
    kv_enable_with(d, KV_CC_ENABLE, kvssd_aqa(KV_ADMIN_ENTRIES, KV_ADMIN_ENTRIES));
    g_assert(kv_wait_csts(d, KVSSD_CSTS_RDY | KVSSD_CSTS_CFS, KVSSD_CSTS_RDY));
}

static inline void kv_disable(KvDev *d)
{
    kv_wr32(d, KVSSD_REG_CC, 0);
    g_assert(kv_wait_csts(d, KVSSD_CSTS_RDY, 0));
    memset(d->q, 0, sizeof(d->q));
}

/* Put @sqe (cid filled in unless keep_cid) into queue @qid without ringing. */
static inline uint16_t kv_put(KvDev *d, uint16_t qid, struct kvssd_sqe *sqe, bool keep_cid)
{
    KvQueue *q = &d->q[qid];
    uint16_t cid = keep_cid ? kvssd_sqe_cid(sqe) : d->next_cid++;
    struct kvssd_sqe le;

    sqe->cdw[0] = (sqe->cdw[0] & 0xffff) | (uint32_t)cid << 16;
    for (int i = 0; i < 16; i++) {
        le.cdw[i] = cpu_to_le32(sqe->cdw[i]);
    }
    qtest_memwrite(d->qts, q->sq + (uint64_t)q->sq_tail * 64, &le, 64);
    q->sq_tail = (q->sq_tail + 1) % q->sq_size;
    return cid;
}

static inline void kv_ring(KvDev *d, uint16_t qid)
{
    kv_wr32(d, kvssd_sq_tail_doorbell(qid, 0), d->q[qid].sq_tail);
}

/* Read the next CQE of queue @qid if it is there; advances the head (no doorbell). */
static inline bool kv_try_cqe(KvDev *d, uint16_t qid, KvCqe *c)
{
    KvQueue *q = &d->q[qid];
    uint32_t e[4];

    qtest_memread(d->qts, q->cq + (uint64_t)q->cq_head * 16, e, 16);
    uint32_t dw3 = le32_to_cpu(e[3]);
    if (kvssd_cqe_phase(dw3) != q->phase) {
        return false;
    }
    c->dw0 = le32_to_cpu(e[0]);
    c->dw1 = le32_to_cpu(e[1]);
    c->sqhd = kvssd_cqe_sqhd(le32_to_cpu(e[2]));
    c->sqid = kvssd_cqe_sqid(le32_to_cpu(e[2]));
    c->cid = kvssd_cqe_cid(dw3);
    c->status = kvssd_cqe_status(dw3);
    q->cq_head++;
    if (q->cq_head == q->size) {
        q->cq_head = 0;
        q->phase = !q->phase;
    }
    return true;
}

static inline void kv_cq_doorbell(KvDev *d, uint16_t qid)
{
    kv_wr32(d, kvssd_cq_head_doorbell(qid, 0), d->q[qid].cq_head);
}

/* Wait for the next CQE of @qid (bounded polls) and ring its head doorbell. */
static inline KvCqe kv_wait(KvDev *d, uint16_t qid)
{
    KvCqe c;
    for (int i = 0; i < 200000; i++) {
        if (kv_try_cqe(d, qid, &c)) {
            kv_cq_doorbell(d, qid);
            return c;
        }
    }
    g_assert_not_reached();
}

/* Submit one command to @qid and wait for its completion. */
static inline KvCqe kv_cmd(KvDev *d, uint16_t qid, struct kvssd_sqe *sqe)
{
    uint16_t cid = kv_put(d, qid, sqe, false);
    kv_ring(d, qid);
    KvCqe c = kv_wait(d, qid);
    g_assert_cmpuint(c.cid, ==, cid);
    return c;
}

static inline struct kvssd_sqe kv_sqe(uint8_t opc, uint32_t nsid)
{
    struct kvssd_sqe s;
    memset(&s, 0, sizeof(s));
    s.cdw[0] = opc;
    s.cdw[1] = nsid;
    return s;
}

static inline void kv_set_prp(struct kvssd_sqe *s, uint64_t prp1, uint64_t prp2)
{
    s->cdw[6] = (uint32_t)prp1;
    s->cdw[7] = prp1 >> 32;
    s->cdw[8] = (uint32_t)prp2;
    s->cdw[9] = prp2 >> 32;
}

static inline uint16_t kv_admin_status(KvDev *d, struct kvssd_sqe *s)
{
    return kv_cmd(d, 0, s).status;
}

static inline uint16_t kv_create_cq(KvDev *d, uint16_t qid, uint16_t entries, uint16_t vector,
                                    uint32_t flags_pc_ien)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_CREATE_CQ, 0);
    kv_set_prp(&s, KV_CQ(qid), 0);
    s.cdw[10] = kvssd_create_queue_cdw10(qid, entries);
    s.cdw[11] = (uint32_t)vector << 16 | flags_pc_ien;
    uint16_t st = kv_admin_status(d, &s);
    if (st == 0 && qid < KV_MAX_Q) {
        d->q[qid].cq = KV_CQ(qid);
        d->q[qid].size = entries;
        d->q[qid].cq_head = 0;
        d->q[qid].phase = true;
        qtest_memset(d->qts, KV_CQ(qid), 0, (size_t)entries * 16);
    }
    return st;
}

static inline uint16_t kv_create_sq(KvDev *d, uint16_t qid, uint16_t entries, uint16_t cqid)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_CREATE_SQ, 0);
    kv_set_prp(&s, KV_SQ(qid), 0);
    s.cdw[10] = kvssd_create_queue_cdw10(qid, entries);
    s.cdw[11] = (uint32_t)cqid << 16 | KVSSD_QUEUE_PC;
    uint16_t st = kv_admin_status(d, &s);
    if (st == 0 && qid < KV_MAX_Q) {
        d->q[qid].sq = KV_SQ(qid);
        d->q[qid].sq_tail = 0;
        d->q[qid].sq_size = entries;
        d->q[qid].live = true;
    }
    return st;
}

/* One I/O queue pair (qid 1, @entries deep) on an enabled controller. */
static inline void kv_io_queue(KvDev *d, uint16_t entries)
{
    g_assert_cmphex(kv_create_cq(d, 1, entries, 1, KVSSD_CQ_IEN | KVSSD_QUEUE_PC), ==, 0);
    g_assert_cmphex(kv_create_sq(d, 1, entries, 1), ==, 0);
}

static inline KvDev *kv_ready(const char *props)
{
    KvDev *d = kv_start(props);
    kv_enable(d);
    kv_io_queue(d, 64);
    return d;
}

/* Store @vlen bytes at KV_DATA (PRP list at KV_PRPLIST when needed) under @key. */
static inline void kv_prp_for(KvDev *d, struct kvssd_sqe *s, uint64_t buf, uint32_t len)
{
    uint32_t pages = (uint32_t)((len + (buf & 4095) + 4095) / 4096);
    if (pages <= 1) {
        kv_set_prp(s, buf, 0);
    } else if (pages == 2) {
        kv_set_prp(s, buf, (buf & ~4095ull) + 4096);
    } else {
        g_assert(pages - 1 <= 512);
        uint64_t list[512];
        for (uint32_t i = 1; i < pages; i++) {
            list[i - 1] = cpu_to_le64((buf & ~4095ull) + (uint64_t)i * 4096);
        }
        qtest_memwrite(d->qts, KV_PRPLIST, list, (pages - 1) * 8);
        kv_set_prp(s, buf, KV_PRPLIST);
    }
}

static inline uint16_t kv_store(KvDev *d, const char *key, const void *val, uint32_t vlen,
                                uint32_t options)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_STORE, 1);
    uint32_t klen = strlen(key);
    if (vlen) {
        qtest_memwrite(d->qts, KV_DATA, val, vlen);
    }
    kvssd_sqe_set_key(&s, key, klen);
    s.cdw[10] = vlen;
    s.cdw[11] = kvssd_cdw11(klen, options);
    kv_prp_for(d, &s, KV_DATA, vlen);
    return kv_cmd(d, 1, &s).status;
}

static inline KvCqe kv_retrieve(KvDev *d, const char *key, void *buf, uint32_t buflen)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_RETRIEVE, 1);
    uint32_t klen = strlen(key);
    qtest_memset(d->qts, KV_DATA2, 0, buflen ? buflen : 1);
    kvssd_sqe_set_key(&s, key, klen);
    s.cdw[10] = buflen;
    s.cdw[11] = kvssd_cdw11(klen, 0);
    kv_prp_for(d, &s, KV_DATA2, buflen);
    KvCqe c = kv_cmd(d, 1, &s);
    if (buflen) {
        qtest_memread(d->qts, KV_DATA2, buf, buflen);
    }
    return c;
}

static inline uint16_t kv_keyop(KvDev *d, uint8_t opc, const char *key)
{
    struct kvssd_sqe s = kv_sqe(opc, 1);
    uint32_t klen = strlen(key);
    kvssd_sqe_set_key(&s, key, klen);
    s.cdw[11] = kvssd_cdw11(klen, 0);
    return kv_cmd(d, 1, &s).status;
}

/*
 * Run admin command @s whose @len bytes of data the device writes to
 * KV_DATA2 (zeroed first); copy them to @out unless NULL. Its status.
 */
static inline uint16_t kv_admin_read(KvDev *d, struct kvssd_sqe *s, uint32_t len, void *out)
{
    qtest_memset(d->qts, KV_DATA2, 0, len);
    uint16_t st = kv_admin_status(d, s);
    if (out) {
        qtest_memread(d->qts, KV_DATA2, out, len);
    }
    return st;
}

/* Identify into KV_DATA2; returns the status. */
static inline uint16_t kv_identify(KvDev *d, uint8_t cns, uint8_t csi, uint32_t nsid, void *out)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_IDENTIFY, nsid);
    kv_set_prp(&s, KV_DATA2, 0);
    s.cdw[10] = cns;
    s.cdw[11] = kvssd_identify_cdw11(csi);
    return kv_admin_read(d, &s, KVSSD_IDENTIFY_BYTES, out);
}

static inline uint16_t kv_get_log(KvDev *d, uint8_t lid, uint8_t csi, uint32_t len, uint64_t off,
                                  void *out)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_GET_LOG_PAGE, KVSSD_NSID_ALL);
    uint32_t numd = len / 4 - 1;
    kv_prp_for(d, &s, KV_DATA2, len);
    s.cdw[10] = kvssd_get_log_cdw10(lid, numd);
    s.cdw[11] = kvssd_get_log_cdw11(numd);
    s.cdw[12] = (uint32_t)off;
    s.cdw[13] = off >> 32;
    s.cdw[14] = (uint32_t)csi << 24;
    return kv_admin_read(d, &s, len, out);
}

static inline KvCqe kv_feature(KvDev *d, uint8_t opc, uint32_t cdw10, uint32_t cdw11, uint32_t nsid)
{
    struct kvssd_sqe s = kv_sqe(opc, nsid);
    s.cdw[10] = cdw10;
    s.cdw[11] = cdw11;
    return kv_cmd(d, 0, &s);
}

static inline uint16_t le16p(const uint8_t *p)
{
    return p[0] | p[1] << 8;
}
static inline uint32_t le32p(const uint8_t *p)
{
    return le16p(p) | (uint32_t)le16p(p + 2) << 16;
}
static inline uint64_t le64p(const uint8_t *p)
{
    return le32p(p) | (uint64_t)le32p(p + 4) << 32;
}

/*
 * A "Vm..." line of QEMU's /proc/<pid>/status in KiB (@field: "VmRSS" for the
 * resident set, "VmHWM" for its peak); fails the test if it cannot be read.
 */
static inline uint64_t kv_qemu_status_kib(KvDev *d, const char *field)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/status", (int)qtest_pid(d->qts));
    g_autofree char *text = NULL;
    g_autofree char *want = g_strdup_printf("\n%s:", field);

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    const char *p = strstr(text, want);
    g_assert(p);
    return g_ascii_strtoull(p + strlen(want), NULL, 10);
}

/* Delete I/O SQ @qid (admin opcode 00h); its status. */
static inline uint16_t kv_delete_sq(KvDev *d, uint16_t qid)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_DELETE_SQ, 0);

    s.cdw[10] = qid;
    return kv_admin_status(d, &s);
}

/*
 * An I/O CQ that fills at once (on an enabled device): CQ 1 of 2 entries
 * (one usable slot, no interrupts), SQ 1 of 16 entries on it, and six
 * Exists of key "k" (each 87h Key Does Not Exist) submitted and rung: the
 * first completion fills the CQ, two more are fetched and wait, three are
 * not fetched. Their cids in @cids, in submission order.
 */
static inline void kv_six_exists_on_full_cq(KvDev *d, uint16_t cids[6])
{
    g_assert_cmphex(kv_create_cq(d, 1, 2, 0, KVSSD_QUEUE_PC), ==, 0); /* no interrupts */
    g_assert_cmphex(kv_create_sq(d, 1, 16, 1), ==, 0);
    for (int i = 0; i < 6; i++) {
        struct kvssd_sqe s = kv_sqe(KVSSD_OPC_EXIST, 1);
        kvssd_sqe_set_key(&s, "k", 1);
        s.cdw[11] = 1;
        cids[i] = kv_put(d, 1, &s, false);
    }
    kv_ring(d, 1);
}

#endif /* KVSSD_QTEST_COMMON_H */
