/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvssd: the QEMU NVMe KV-SSD device, transport half (QEMU types only here).
 *
 * ctrl.c       PCI function, BAR0 registers, CC/CSTS, reset/shutdown, properties
 * queues.c     SQ/CQ, doorbells, SQE fetch, CQE post, interrupts, batching
 * dma.c        PRP lists / SGL walking (bounded), transfer accounting
 * guest_log.c  trace points and the guest-error log of every completed command
 * admin.c      the admin command set (QEMU-free, see admin.h)
 * kv.c         the KV command set (QEMU-free, see cmdset.h)
 * inline.c     its inline-Store reassembly and tag table (QEMU-free, see kv_internal.h)
 * nvm.c        the NVM command set of command-set=nvm (QEMU-free, see cmdset.h)
 *
 * Calls go one way, down: ctrl.c calls the others; queues.c calls dma.c,
 * guest_log.c and the command sets; none calls back up (the admin command
 * set asks for queues through struct kvssd_admin_ops, inline.c asks kv.c
 * through struct kvssd_inline_owner).
 */
#ifndef HW_KVSSD_KVSSD_H
#define HW_KVSSD_KVSSD_H

#include "hw/pci/pci_device.h"
#include "qemu/queue.h"
#include "qemu/timer.h"
#include "qom/object.h"

#include "admin.h"
#include "cmdset.h"
#include "properties.h"

#define TYPE_KVSSD "kvssd"
OBJECT_DECLARE_SIMPLE_TYPE(KvssdState, KVSSD)

/* KVSSD_PCI_VENDOR_ID / KVSSD_PCI_DEVICE_ID: include/kvssd/ext.h */
/* KVSSD_MAX_IOQPAIRS: properties.h */
#define KVSSD_MQES 1023              /* CAP.MQES: queues of up to 1024 entries */
#define KVSSD_PAGE_BYTES 4096        /* the only memory page size (CAP.MPSMIN = MPSMAX = 0) */
#define KVSSD_BAR0_BYTES 0x4000
#define KVSSD_BATCH 128              /* SQEs fetched per bottom-half run */
#define KVSSD_BATCH_BYTES (8u << 20)  /* ... or this much data moved, whichever first */
#define KVSSD_MAX_SGL_DESCRS 256     /* data descriptors walked per command */

/* BAR0 registers, their fields and the doorbells: <kvssd/nvme.h>. */

typedef struct KvssdState KvssdState;

/* The property field of a firmware tunable, by tunables.def's where and kind columns. */
#define KVSSD_TUNABLE_FIELD_LIB(kind, field)
#define KVSSD_TUNABLE_FIELD_QEMU(kind, field) KVSSD_TUNABLE_CTYPE_##kind field;
#define KVSSD_TUNABLE_CTYPE_U32 uint32_t
#define KVSSD_TUNABLE_CTYPE_U64 uint64_t
#define KVSSD_TUNABLE_CTYPE_BOOL OnOffAuto
#define KVSSD_TUNABLE_CTYPE_ENUM int /* the value's index; its last + 1 = auto (ctrl.c) */
#define KVSSD_TUNABLE_CTYPE_STR char *

/*
 * guest_log.c's state: the guest-error log's rate limit (at most
 * KVSSD_GUEST_ERROR_LINES lines per second of QEMU_CLOCK_VIRTUAL, then one
 * line counting the rest) and the GC trace point's counters after the
 * previous command.
 */
#define KVSSD_GUEST_ERROR_LINES 10
typedef struct KvssdGuestLog {
    int64_t window_start_ns; /* the current second began here */
    uint32_t lines;          /* lines logged in it */
    uint64_t suppressed;     /* guest errors not logged in it */
    bool gc_valid;           /* the gc_* counters are the previous command's */
    uint64_t gc_runs, gc_relocated_bytes, gc_blocks_erased, gc_stalls;
} KvssdGuestLog;

/* A completion waiting to be posted: CQ full, or held until its simulated time. */
typedef struct KvssdCqe {
    int64_t due_ns;
    uint64_t seq;            /* enqueue order: FIFO among equal due times */
    uint32_t dw0, dw1;
    uint16_t sqid, cid, status;
} KvssdCqe;

typedef struct KvssdCQ {
    uint16_t qid, size, head, tail, vector;
    bool phase, ien;
    uint64_t dma_addr;
    uint32_t sq_refs;        /* SQs that complete here */
    /*
     * Completions not yet posted: a binary min-heap on (due_ns, seq) in
     * pending[0 .. waiting), so queuing and posting one is O(log waiting)
     * whatever order the simulated times come in. waiting <= size for an
     * I/O CQ (no SQE is fetched for a CQ with that many waiting, and Delete
     * I/O SQ leaves none of its SQ's), <= size + KVSSD_AERL + 1 for the
     * admin CQ (asynchronous events complete outstanding AERs).
     */
    KvssdCqe *pending;
    uint32_t waiting, pending_cap;
    uint64_t next_seq;
} KvssdCQ;

typedef struct KvssdSQ {
    uint16_t qid, cqid, size, head, tail;
    uint64_t dma_addr;
    /*
     * A fetched command that is not done (List, Iter Read, FTL check walk in
     * bounded slices): its SQE and the command set's state. At most one per
     * SQ; the SQ fetches nothing more until it completes.
     */
    bool parked;
    struct kvssd_sqe parked_sqe;
    void *parked_cont;
    /*
     * Arrival: the commands up to the tail an MMIO doorbell write gave
     * (db_pending of them not fetched yet) arrived by db_ns; any other (a
     * shadow doorbell's) by its fetch.
     */
    int64_t db_ns;
    uint16_t db_pending;
} KvssdSQ;

/* The data pointer of one command, resolved into at most a bounded list of extents. */
typedef struct KvssdExtent {
    uint64_t addr;
    uint32_t len;
} KvssdExtent;

typedef struct KvssdDptr {
    KvssdState *n;
    const struct kvssd_sqe *sqe;
    uint32_t len;            /* bytes the command describes */
    bool resolved;
    uint16_t resolve_status; /* the status of resolving, once resolved */
    uint32_t nr_extents, cap_extents;
    KvssdExtent *extents;
    uint64_t max_h2d, max_d2h;   /* furthest byte moved, per direction */
    uint64_t moved_h2d, moved_d2h;
} KvssdDptr;

struct KvssdState {
    PCIDevice parent_obj;
    MemoryRegion iomem;
    MemoryRegion msix_bar;

    /* registers */
    uint64_t cap;
    uint32_t vs, intms, cc, csts, aqa;
    uint64_t asq, acq;

    /* queues */
    KvssdSQ *sq[KVSSD_MAX_IOQPAIRS + 1];
    KvssdCQ *cq[KVSSD_MAX_IOQPAIRS + 1];
    uint16_t rr_next;        /* round-robin start for the next batch */
    uint64_t batch_bytes;    /* data moved in this bottom-half run */
    QEMUBH *bh;
    QEMUTimer *timer;        /* latency=on completions; inline stream expiry */
    uint64_t dbbuf_dbs, dbbuf_eis; /* Doorbell Buffer Config's pages, 0 = off */
    Notifier exit_notifier;  /* QEMU exits: checkpoint the firmware */
    bool irq_level;
    /*
     * Interrupt coalescing (Set Features 08h, per vector off with 09h's
     * Coalescing Disable; MSI-X, I/O CQs only): completions posted on a
     * vector since its last message, and the virtual time by which the
     * oldest of them is signalled (0: none held).
     */
    uint16_t agg_count[KVSSD_ADMIN_MAX_VECTORS];
    int64_t agg_due_ns[KVSSD_ADMIN_MAX_VECTORS];

    /* firmware and command sets: one namespace, by the firmware's command_set */
    struct kvftl *ftl;
    struct kvssd_ns *ns;          /* kv personality: the KV namespace (kv.c), else NULL */
    struct kvssd_nvm_ns *nvm;     /* nvm personality: the NVM namespace (nvm.c), else NULL */
    uint32_t nvm_lba_bytes;       /* nvm personality: the namespace's block size; kv: 0 */
    struct kvssd_admin admin;
    struct kvssd_xfer_counters xfer;
    KvssdGuestLog glog;

    /* the device's own properties: one per row of properties.def */
#define KVSSD_PROPERTY(field, kind, ...) KVSSD_PROPERTY_CTYPE_##kind field;
#include "properties.def"
    /*
     * One per firmware tunable of <kvftl/tunables.def> (where = QEMU), named
     * like its kvftl_config field; unset (0, all ones for
     * KVFTL_TUNABLE_UNSET_MAX, auto, NULL) = the preset's value.
     */
#define KVFTL_TUNABLE(field, kind, where, ...) KVSSD_TUNABLE_FIELD_##where(kind, field)
#include <kvftl/tunables.def>
};

/* queues.c (ctrl.c calls down into it; it never calls ctrl.c) */
int64_t kvssd_now_ns(void);
void kvssd_queues_init(KvssdState *n);
void kvssd_queues_reset(KvssdState *n);
void kvssd_queues_free(KvssdState *n);
bool kvssd_admin_queue_setup(KvssdState *n);
void kvssd_doorbell_write(KvssdState *n, hwaddr off, uint32_t val);
void kvssd_irq_update(KvssdState *n);
void kvssd_queues_kick(KvssdState *n);
extern const struct kvssd_admin_ops kvssd_queue_ops;

/*
 * guest_log.c: every completed command, once, with its status: its trace
 * points, and a LOG_GUEST_ERROR line when the status says the guest's
 * command was malformed (docs/device.md, "Guest errors").
 */
void kvssd_command_done(KvssdState *n, uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status);
/* A guest mistake outside a command (a register or doorbell write): one rate-limited line. */
void G_GNUC_PRINTF(2, 3) kvssd_guest_error(KvssdState *n, const char *fmt, ...);
/* The count of guest errors not logged yet, as one line (QEMU exits, the device goes). */
void kvssd_guest_log_flush(KvssdState *n);

/* dma.c */
void kvssd_dptr_init(KvssdDptr *d, KvssdState *n, const struct kvssd_sqe *sqe, uint32_t len);
void kvssd_dptr_finish(KvssdDptr *d);
struct kvssd_dptr kvssd_dptr_ops(KvssdDptr *d);
uint32_t kvssd_io_data_len(const struct kvssd_sqe *sqe);
uint32_t kvssd_mdts_bytes(const KvssdState *n);

#endif /* HW_KVSSD_KVSSD_H */
