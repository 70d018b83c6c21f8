/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Submission and completion queues: doorbells, SQE fetch, command dispatch
 * to the admin and KV command sets, CQE posting (at once, or at the
 * simulated completion time with latency=on), MSI-X / INTx interrupts.
 *
 * Doorbell writes only record the new value and schedule a bottom half;
 * the bottom half fetches at most KVSSD_BATCH commands per run, so a guest
 * with deep queues never holds the main loop for long. Completions that do
 * not fit into a full CQ wait on its pending heap; an I/O CQ's pending heap
 * is bounded by its size because no SQE is fetched for a CQ that has as
 * many completions pending as entries, and Delete I/O SQ leaves nothing of
 * the deleted SQ pending.
 *
 * Shadow doorbells (Doorbell Buffer Config, admin 7Ch): once the host gave
 * a shadow doorbell page and an event index page, an I/O queue's tail
 * (SQ) or head (CQ) is read from the host's memory at each bottom half,
 * and the host rings the MMIO doorbell only when its new value passes the
 * event index the device published (the tail it has fetched up to): one
 * MMIO write per batch instead of one per command and per interrupt. An
 * MMIO write (the BQL, under TCG a vCPU waiting for the bottom half) is
 * what a guest's deep queue paid per command.
 */
#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci.h"
#include "system/dma.h"

#include "compat.h"
#include "kvssd.h"
#include "trace.h"

int64_t kvssd_now_ns(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/*
 * The device cannot reach the guest's memory for a queue or a doorbell
 * page: Controller Fatal Status (CSTS.CFS) until the guest resets it.
 */
static void queues_fatal(KvssdState *n, const char *why)
{
    trace_kvssd_fatal(why);
    n->csts |= KVSSD_CSTS_CFS;
}

/*
 * Run the queues soon: normally from the bottom half, the next main-loop
 * iteration. Under icount from the virtual-clock timer, due now: QEMU then
 * stops the vCPU at the instruction that armed it and runs the timer before
 * the guest runs on (qemu_timer_notify_cb, icount_handle_deadline). With a
 * bottom half the guest's clock ran on, or jumped to its next timer when it
 * idled (sleep=off), for however long the host took to get to it, so when
 * a command was taken, when its completion came and what the guest did
 * next depended on the host (issue 13, docs/reproduce.md).
 *
 * yield: continuing after a slice (the batch budget, a long command's
 * slice). Under icount one nanosecond later: QEMU runs every timer already
 * due in one pass without returning to its loop, so a timer due now would
 * run every slice of a long command back to back and hold the main loop
 * for all of them; one instruction of the guest runs between slices instead.
 */
static void queues_schedule(KvssdState *n, bool yield)
{
    if (icount_enabled()) {
        timer_mod_anticipate_ns(n->timer, kvssd_now_ns() + (yield ? 1 : 0));
    } else {
        qemu_bh_schedule(n->bh);
    }
}

/* ---- interrupts --------------------------------------------------------- */

void kvssd_irq_update(KvssdState *n)
{
    PCIDevice *pci = PCI_DEVICE(n);
    bool level = false;

    if (msix_enabled(pci)) {
        return;
    }
    /* INTx: asserted while an interrupt-enabled CQ holds unconsumed entries. */
    for (int i = 0; i <= KVSSD_MAX_IOQPAIRS; i++) {
        KvssdCQ *cq = n->cq[i];
        uint32_t head;
        if (cq && i && n->dbbuf_dbs &&
            pci_dma_read(pci, n->dbbuf_dbs + (hwaddr)i * 8 + 4, &head, sizeof(head)) == MEMTX_OK &&
            le32_to_cpu(head) < cq->size) {
            cq->head = le32_to_cpu(head); /* shadow doorbell (a bad one: queues.c refuses it) */
        }
        if (cq && cq->ien && cq->head != cq->tail && !(n->intms & 1)) {
            level = true;
            break;
        }
    }
    if (level != n->irq_level) {
        n->irq_level = level;
        pci_set_irq(pci, level);
    }
}

/*
 * Interrupt coalescing as Set Features 08h asks: THR (bits 7:0, 0's based)
 * completions per message, or TIME (bits 15:8, 100 us units) after the
 * first one held, whichever comes first. Either field 0 means no
 * coalescing (the reset value); a vector whose Interrupt Vector
 * Configuration (09h) has CD set, and the admin CQ, are never coalesced.
 * True with the threshold in entries and the time in ns.
 *
 * Vectors index agg_count[], agg_due_ns[] and irq_vector_config[] without
 * a check: Create I/O CQ refuses a vector above max-ioqpairs, which the
 * property bounds by KVSSD_MAX_IOQPAIRS.
 */
QEMU_BUILD_BUG_ON(KVSSD_ADMIN_MAX_VECTORS < KVSSD_MAX_IOQPAIRS + 1);

static bool coalescing(KvssdState *n, uint16_t vector, uint32_t *entries, int64_t *time_ns)
{
    uint32_t f = n->admin.feat.irq_coalescing;
    uint32_t thr = f & 0xff, time = (f >> 8) & 0xff;

    if (thr == 0 || time == 0 || (n->admin.feat.irq_vector_config[vector] & KVSSD_IV_CONFIG_CD)) {
        return false;
    }
    *entries = thr + 1;
    *time_ns = (int64_t)time * 100000;
    return true;
}

static void vector_fire(KvssdState *n, uint16_t vector)
{
    PCIDevice *pci = PCI_DEVICE(n);

    n->agg_count[vector] = 0;
    n->agg_due_ns[vector] = 0;
    if (msix_enabled(pci) && vector < msix_nr_vectors_allocated(pci)) {
        msix_notify(pci, vector);
    }
}

/* @posted completions were just posted on @cq: signal them, or hold them (coalescing). */
static void cq_notify(KvssdState *n, KvssdCQ *cq, uint32_t posted)
{
    uint32_t entries;
    int64_t time_ns;
    uint16_t v = cq->vector;

    if (!cq->ien) {
        return;
    }
    if (!msix_enabled(PCI_DEVICE(n))) {
        kvssd_irq_update(n);
        return;
    }
    if (cq->qid && coalescing(n, v, &entries, &time_ns)) {
        n->agg_count[v] = MIN((uint32_t)n->agg_count[v] + posted, UINT16_MAX);
        if (n->agg_count[v] < entries) {
            if (!n->agg_due_ns[v]) {
                n->agg_due_ns[v] = kvssd_now_ns() + time_ns;
            }
            return;
        }
    }
    vector_fire(n, v);
}

/*
 * Signal the vectors whose held completions are due (or whose coalescing
 * was turned off meanwhile); return the earliest time still held.
 */
static int64_t coalescing_expire(KvssdState *n, int64_t now)
{
    int64_t next = INT64_MAX;
    uint32_t entries;
    int64_t time_ns;

    for (uint16_t v = 0; v < KVSSD_ADMIN_MAX_VECTORS; v++) {
        if (!n->agg_count[v]) {
            continue;
        }
        if (!coalescing(n, v, &entries, &time_ns) || n->agg_due_ns[v] <= now) {
            vector_fire(n, v);
        } else {
            next = MIN(next, n->agg_due_ns[v]);
        }
    }
    return next;
}

/* ---- shadow doorbells (Doorbell Buffer Config) -------------------------- */

/* CAP.DSTRD = 0: SQ y's shadow tail (and event index) at 8y, CQ y's head at 8y + 4. */
static hwaddr shadow_sq_off(uint16_t qid)
{
    return (hwaddr)qid * 8;
}

static hwaddr shadow_cq_off(uint16_t qid)
{
    return (hwaddr)qid * 8 + 4;
}

static bool shadow_read(KvssdState *n, hwaddr addr, uint32_t *val)
{
    uint32_t le;

    if (pci_dma_read(PCI_DEVICE(n), addr, &le, sizeof(le)) != MEMTX_OK) {
        trace_kvssd_dma_error(addr, sizeof(le));
        queues_fatal(n, "shadow doorbell outside guest memory");
        return false;
    }
    *val = le32_to_cpu(le);
    return true;
}

static bool shadow_write(KvssdState *n, hwaddr addr, uint32_t val)
{
    uint32_t le = cpu_to_le32(val);

    if (pci_dma_write(PCI_DEVICE(n), addr, &le, sizeof(le)) != MEMTX_OK) {
        trace_kvssd_dma_error(addr, sizeof(le));
        queues_fatal(n, "shadow event index outside guest memory");
        return false;
    }
    return true;
}

static void invalid_doorbell(KvssdState *n, uint32_t event, hwaddr off, uint32_t val);

/*
 * An I/O SQ's tail from its shadow doorbell. A value past the queue is
 * refused as an MMIO one is (Invalid Doorbell Write Value event) and the
 * tail stays. Returns false on a DMA failure (the controller is fatal).
 */
static bool sq_shadow_tail(KvssdState *n, KvssdSQ *sq)
{
    uint32_t val;

    if (!n->dbbuf_dbs || sq->qid == 0) {
        return true;
    }
    if (!shadow_read(n, n->dbbuf_dbs + shadow_sq_off(sq->qid), &val)) {
        return false;
    }
    smp_rmb(); /* the SQEs up to the tail are read after it */
    if (val >= sq->size) {
        invalid_doorbell(n, KVSSD_AEN_INVALID_DB_VALUE, KVSSD_REG_SQ0TDBL + shadow_sq_off(sq->qid),
                         val);
        return true;
    }
    sq->tail = val;
    return true;
}

/* An I/O CQ's head from its shadow doorbell (a value past the queue: as for the SQ). */
static bool cq_shadow_head(KvssdState *n, KvssdCQ *cq)
{
    uint32_t val;

    if (!n->dbbuf_dbs || cq->qid == 0) {
        return true;
    }
    if (!shadow_read(n, n->dbbuf_dbs + shadow_cq_off(cq->qid), &val)) {
        return false;
    }
    if (val >= cq->size) {
        invalid_doorbell(n, KVSSD_AEN_INVALID_DB_VALUE, KVSSD_REG_SQ0TDBL + shadow_cq_off(cq->qid),
                         val);
        return true;
    }
    cq->head = val;
    return true;
}

/*
 * Publish @sq's tail as its event index, then read the shadow tail again:
 * a host that wrote its shadow before seeing the new event index rang no
 * MMIO doorbell, and its commands are found here (the host writes the
 * shadow, then reads the event index; the device the other way round).
 * Returns true if the tail moved.
 */
static bool sq_shadow_publish(KvssdState *n, KvssdSQ *sq)
{
    uint16_t seen = sq->tail;

    if (!n->dbbuf_dbs || sq->qid == 0) {
        return false;
    }
    if (!shadow_write(n, n->dbbuf_eis + shadow_sq_off(sq->qid), seen)) {
        return false;
    }
    smp_mb();
    return sq_shadow_tail(n, sq) && sq->tail != seen;
}

/*
 * Doorbell Buffer Config: PRP1 the shadow doorbell page, PRP2 the event
 * index page, both page aligned (else Invalid Field in Command). The
 * queues that exist get their current tail / head and event index written.
 */
static uint16_t dbbuf_config(KvssdState *n, const struct kvssd_sqe *sqe)
{
    uint64_t dbs = (uint64_t)sqe->cdw[7] << 32 | sqe->cdw[6];
    uint64_t eis = (uint64_t)sqe->cdw[9] << 32 | sqe->cdw[8];

    if (kvssd_sqe_psdt(sqe) != 0 || !dbs || !eis || (dbs & (KVSSD_PAGE_BYTES - 1)) ||
        (eis & (KVSSD_PAGE_BYTES - 1))) {
        trace_kvssd_queue_err("doorbell buffer config: PRP1/PRP2 not page aligned", 0);
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    n->dbbuf_dbs = dbs;
    n->dbbuf_eis = eis;
    for (int i = 1; i <= KVSSD_MAX_IOQPAIRS; i++) {
        if (n->sq[i] && (!shadow_write(n, dbs + shadow_sq_off(i), n->sq[i]->tail) ||
                         !shadow_write(n, eis + shadow_sq_off(i), n->sq[i]->tail))) {
            return KVSSD_SC_INTERNAL_ERROR | KVSSD_SC_DNR;
        }
        if (n->cq[i] && (!shadow_write(n, dbs + shadow_cq_off(i), n->cq[i]->head) ||
                         !shadow_write(n, eis + shadow_cq_off(i), n->cq[i]->head))) {
            return KVSSD_SC_INTERNAL_ERROR | KVSSD_SC_DNR;
        }
    }
    return KVSSD_SC_SUCCESS;
}

/* ---- completions -------------------------------------------------------- */

static bool cq_full(const KvssdCQ *cq)
{
    return (cq->tail + 1) % cq->size == cq->head;
}

/*
 * Completions not yet posted wait in a binary min-heap on (due_ns, seq)
 * (kvssd.h): with latency=on the simulated times arrive in any order, and
 * an insert or a removal must not walk everything that waits.
 */
static bool cqe_before(const KvssdCqe *a, const KvssdCqe *b)
{
    return a->due_ns != b->due_ns ? a->due_ns < b->due_ns : a->seq < b->seq;
}

static void pending_sift_down(KvssdCQ *cq, uint32_t i)
{
    KvssdCqe *h = cq->pending;

    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < cq->waiting && cqe_before(&h[l], &h[m])) {
            m = l;
        }
        if (r < cq->waiting && cqe_before(&h[r], &h[m])) {
            m = r;
        }
        if (m == i) {
            return;
        }
        KvssdCqe t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void pending_push(KvssdCQ *cq, KvssdCqe *e)
{
    uint32_t i;

    if (cq->waiting == cq->pending_cap) {
        cq->pending_cap = MAX(16u, cq->pending_cap * 2);
        cq->pending = g_renew(KvssdCqe, cq->pending, cq->pending_cap);
    }
    e->seq = cq->next_seq++;
    for (i = cq->waiting++; i > 0; i = (i - 1) / 2) {
        KvssdCqe *parent = &cq->pending[(i - 1) / 2];
        if (!cqe_before(e, parent)) {
            break;
        }
        cq->pending[i] = *parent;
    }
    cq->pending[i] = *e;
}

static void pending_pop(KvssdCQ *cq)
{
    cq->pending[0] = cq->pending[--cq->waiting];
    pending_sift_down(cq, 0);
}

/* Write @e at the tail of @cq, which has room. Returns false on a DMA failure. */
static bool cq_post(KvssdState *n, KvssdCQ *cq, const KvssdCqe *e)
{
    KvssdSQ *sq = e->sqid <= KVSSD_MAX_IOQPAIRS ? n->sq[e->sqid] : NULL;
    uint32_t cqe[4];

    cqe[0] = cpu_to_le32(e->dw0);
    cqe[1] = cpu_to_le32(e->dw1);
    cqe[2] = cpu_to_le32(kvssd_cqe_dw2(sq ? sq->head : 0, e->sqid));
    cqe[3] = cpu_to_le32(kvssd_cqe_dw3(e->cid, e->status, cq->phase));
    hwaddr addr = cq->dma_addr + (hwaddr)cq->tail * KVSSD_CQE_BYTES;
    if (pci_dma_write(PCI_DEVICE(n), addr, cqe, sizeof(cqe)) != MEMTX_OK) {
        trace_kvssd_dma_error(addr, sizeof(cqe));
        queues_fatal(n, "CQE post outside guest memory");
        return false;
    }
    trace_kvssd_cqe_post(cq->qid, e->sqid, e->cid, e->status, e->dw0);
    n->xfer.cqe_post_bytes += KVSSD_CQE_BYTES;
    cq->tail++;
    if (cq->tail == cq->size) {
        cq->tail = 0;
        cq->phase = !cq->phase;
    }
    return true;
}

/* Post as many due completions of @cq as fit. Returns false on a DMA failure. */
static bool cq_drain(KvssdState *n, KvssdCQ *cq, int64_t now)
{
    uint32_t posted = 0; /* completions posted */

    if (cq->waiting && cq->pending[0].due_ns <= now && !cq_shadow_head(n, cq)) {
        return false;
    }
    for (;;) {
        while (cq->waiting && cq->pending[0].due_ns <= now && !cq_full(cq)) {
            if (!cq_post(n, cq, &cq->pending[0])) {
                return false;
            }
            pending_pop(cq);
            posted++;
        }
        if (!n->dbbuf_dbs || cq->qid == 0 || !cq->waiting || cq->pending[0].due_ns > now) {
            break;
        }
        /*
         * Full with completions due: the host's next head update must ring
         * the MMIO doorbell (event index = the head seen), unless it already
         * consumed some meanwhile.
         */
        uint16_t seen = cq->head;
        if (!shadow_write(n, n->dbbuf_eis + shadow_cq_off(cq->qid), seen)) {
            return false;
        }
        smp_mb();
        if (!cq_shadow_head(n, cq)) {
            return false;
        }
        if (cq->head == seen) {
            break;
        }
    }
    if (posted) {
        /* INTx: the level follows the head, so every head update rings the MMIO doorbell */
        if (n->dbbuf_dbs && cq->qid && cq->ien && !msix_enabled(PCI_DEVICE(n)) &&
            !shadow_write(n, n->dbbuf_eis + shadow_cq_off(cq->qid), cq->head)) {
            return false;
        }
        cq_notify(n, cq, posted);
    }
    return true;
}

/* Queue a completion on @cq, ordered by its due time (FIFO among equals). */
static void cq_enqueue(KvssdState *n, KvssdCQ *cq, uint16_t sqid, uint16_t cid, uint16_t status,
                       uint32_t dw0, uint32_t dw1, int64_t due_ns)
{
    KvssdCqe e = {
        .due_ns = due_ns,
        .dw0 = dw0,
        .dw1 = dw1,
        .sqid = sqid,
        .cid = cid,
        .status = status,
    };

    pending_push(cq, &e);
    if (status != KVSSD_SC_SUCCESS) {
        kvssd_admin_record_error(&n->admin, sqid, cid, status, 0);
    }
}

static void cq_free_pending(KvssdCQ *cq)
{
    g_free(cq->pending);
    cq->pending = NULL;
    cq->waiting = cq->pending_cap = 0;
}

static int cqe_by_seq(const void *a, const void *b)
{
    const KvssdCqe *x = a, *y = b;

    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- queue management (admin command callbacks) ------------------------ */

static uint16_t create_cq(void *opaque, uint16_t qid, uint16_t qsize0, uint64_t base,
                          uint16_t vector, bool ien, bool pc)
{
    KvssdState *n = opaque;
    KvssdCQ *cq;

    if (qid == 0 || qid > n->admin.feat.ncqa + 1 || n->cq[qid]) {
        trace_kvssd_queue_err("create cq: invalid qid", qid);
        return KVSSD_SC_INVALID_QID | KVSSD_SC_DNR;
    }
    if (qsize0 == 0 || qsize0 > KVSSD_MQES) {
        trace_kvssd_queue_err("create cq: invalid size", qsize0);
        return KVSSD_SC_INVALID_QSIZE | KVSSD_SC_DNR;
    }
    if (!pc) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR; /* CAP.CQR: contiguous only */
    }
    if (base & (KVSSD_PAGE_BYTES - 1) || base == 0) {
        return KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR;
    }
    if (vector > n->max_ioqpairs) {
        return KVSSD_SC_INVALID_IRQ_VECTOR | KVSSD_SC_DNR;
    }
    cq = g_new0(KvssdCQ, 1);
    cq->qid = qid;
    cq->size = qsize0 + 1;
    cq->dma_addr = base;
    cq->vector = vector;
    cq->ien = ien;
    cq->phase = 1;
    n->cq[qid] = cq;
    trace_kvssd_create_cq(qid, cq->size, vector, ien);
    return KVSSD_SC_SUCCESS;
}

static uint16_t create_sq(void *opaque, uint16_t qid, uint16_t qsize0, uint64_t base, uint16_t cqid,
                          bool pc)
{
    KvssdState *n = opaque;
    KvssdSQ *sq;

    if (qid == 0 || qid > n->admin.feat.nsqa + 1 || n->sq[qid]) {
        trace_kvssd_queue_err("create sq: invalid qid", qid);
        return KVSSD_SC_INVALID_QID | KVSSD_SC_DNR;
    }
    if (cqid == 0 || cqid > KVSSD_MAX_IOQPAIRS || !n->cq[cqid]) {
        trace_kvssd_queue_err("create sq: invalid cqid", cqid);
        return KVSSD_SC_CQ_INVALID | KVSSD_SC_DNR;
    }
    if (qsize0 == 0 || qsize0 > KVSSD_MQES) {
        trace_kvssd_queue_err("create sq: invalid size", qsize0);
        return KVSSD_SC_INVALID_QSIZE | KVSSD_SC_DNR;
    }
    if (!pc) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    if (base & (KVSSD_PAGE_BYTES - 1) || base == 0) {
        return KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR;
    }
    sq = g_new0(KvssdSQ, 1);
    sq->qid = qid;
    sq->cqid = cqid;
    sq->size = qsize0 + 1;
    sq->dma_addr = base;
    n->sq[qid] = sq;
    n->cq[cqid]->sq_refs++;
    trace_kvssd_create_sq(qid, sq->size, cqid);
    return KVSSD_SC_SUCCESS;
}

/*
 * Drop the command parked on @sq (SQ deletion, controller reset) and free
 * its state. Its completion, if any, is the caller's: SQ deletion posts it
 * when the CQ has room (sq_complete_on_delete), a reset posts nothing.
 */
static void sq_unpark(KvssdState *n, KvssdSQ *sq)
{
    if (!sq->parked) {
        return;
    }
    if (sq->qid == 0) {
        kvssd_admin_cancel(&n->admin, sq->parked_cont);
    } else if (n->nvm_lba_bytes) {
        /* the nvm personality (set at realize, kept after the firmware closes) */
        kvssd_nvm_cancel(n->nvm, sq->parked_cont);
    } else {
        kvssd_kv_cancel(n->ns, sq->parked_cont);
    }
    sq->parked = false;
    sq->parked_cont = NULL;
}

/*
 * Delete I/O SQ completes every command of @sq, explicitly (a CQE placed in
 * @cq before the Delete's own completion) or implicitly (no CQE: the host
 * treats the command as aborted). Explicitly as far as @cq has room now:
 * first the completions already due, then the deleted SQ's fetched
 * commands in submission order (with latency=on ahead of their simulated
 * time), then 08h Command Aborted due to SQ Deletion for a command parked
 * between slices and for the commands not fetched yet; the rest
 * implicitly. Nothing of a deleted SQ stays waiting, so the Delete never
 * waits for the host to drain an I/O CQ, and however often SQs are created
 * and deleted on a CQ, the completions it holds stay within its size.
 */
static void sq_complete_on_delete(KvssdState *n, KvssdSQ *sq, KvssdCQ *cq)
{
    uint32_t posted = 0; /* completions posted */
    uint32_t kept = 0, own;

    if (!cq_drain(n, cq, kvssd_now_ns())) {
        return;
    }
    /* the SQ's own completions to the end of the array, the rest re-heaped */
    for (uint32_t i = 0; i < cq->waiting; i++) {
        if (cq->pending[i].sqid != sq->qid) {
            KvssdCqe t = cq->pending[kept];
            cq->pending[kept++] = cq->pending[i];
            cq->pending[i] = t;
        }
    }
    own = cq->waiting - kept;
    cq->waiting = kept;
    for (uint32_t i = kept / 2; i-- > 0;) {
        pending_sift_down(cq, i);
    }
    if (own > 0) {
        KvssdCqe *mine = cq->pending + kept; /* past waiting: untouched until the next push */
        qsort(mine, own, sizeof(*mine), cqe_by_seq);
        for (uint32_t i = 0; i < own && !cq_full(cq); i++) {
            if (!cq_post(n, cq, &mine[i])) {
                return;
            }
            posted++;
        }
    }
    /* a command parked between slices was fetched before any still in the SQ */
    if (sq->parked && !cq_full(cq)) {
        KvssdCqe e = {
            .sqid = sq->qid,
            .cid = kvssd_sqe_cid(&sq->parked_sqe),
            .status = KVSSD_SC_ABORTED_SQ_DELETION,
        };
        kvssd_admin_record_error(&n->admin, e.sqid, e.cid, e.status, 0);
        if (!cq_post(n, cq, &e)) {
            return;
        }
        posted++;
    }
    while (sq->head != sq->tail && !cq_full(cq)) {
        uint32_t dw0;
        hwaddr addr = sq->dma_addr + (hwaddr)sq->head * KVSSD_SQE_BYTES;
        if (pci_dma_read(PCI_DEVICE(n), addr, &dw0, sizeof(dw0)) != MEMTX_OK) {
            trace_kvssd_dma_error(addr, sizeof(dw0));
            break;
        }
        n->xfer.sqe_fetch_bytes += KVSSD_SQE_BYTES;
        sq->head = (sq->head + 1) % sq->size;
        KvssdCqe e = {
            .sqid = sq->qid,
            .cid = le32_to_cpu(dw0) >> 16,
            .status = KVSSD_SC_ABORTED_SQ_DELETION,
        };
        kvssd_admin_record_error(&n->admin, e.sqid, e.cid, e.status, 0);
        if (!cq_post(n, cq, &e)) {
            return;
        }
        posted++;
    }
    sq->head = sq->tail;
    sq_unpark(n, sq);
    if (posted) {
        cq_notify(n, cq, posted);
    }
}

static void sq_free(KvssdState *n, KvssdSQ *sq)
{
    KvssdCQ *cq = n->cq[sq->cqid];

    sq_unpark(n, sq);
    if (cq) {
        cq->sq_refs--;
    }
    n->sq[sq->qid] = NULL;
    g_free(sq);
}

static uint16_t delete_sq(void *opaque, uint16_t qid)
{
    KvssdState *n = opaque;
    KvssdSQ *sq = qid && qid <= KVSSD_MAX_IOQPAIRS ? n->sq[qid] : NULL;

    if (!sq) {
        trace_kvssd_queue_err("delete sq: invalid qid", qid);
        return KVSSD_SC_INVALID_QID | KVSSD_SC_DNR;
    }
    KvssdCQ *cq = n->cq[sq->cqid];
    if (cq) {
        sq_complete_on_delete(n, sq, cq);
    }
    trace_kvssd_delete_sq(qid);
    sq_free(n, sq);
    queues_schedule(n, false);
    return KVSSD_SC_SUCCESS;
}

static uint16_t delete_cq(void *opaque, uint16_t qid)
{
    KvssdState *n = opaque;
    KvssdCQ *cq = qid && qid <= KVSSD_MAX_IOQPAIRS ? n->cq[qid] : NULL;

    if (!cq) {
        trace_kvssd_queue_err("delete cq: invalid qid", qid);
        return KVSSD_SC_INVALID_QID | KVSSD_SC_DNR;
    }
    if (cq->sq_refs) {
        trace_kvssd_queue_err("delete cq: SQs still attached", qid);
        return KVSSD_SC_INVALID_QUEUE_DELETION | KVSSD_SC_DNR;
    }
    cq_free_pending(cq);
    n->cq[qid] = NULL;
    g_free(cq);
    trace_kvssd_delete_cq(qid);
    kvssd_irq_update(n);
    return KVSSD_SC_SUCCESS;
}

const struct kvssd_admin_ops kvssd_queue_ops = {
    .create_cq = create_cq,
    .create_sq = create_sq,
    .delete_sq = delete_sq,
    .delete_cq = delete_cq,
};

bool kvssd_admin_queue_setup(KvssdState *n)
{
    uint32_t asqs = (n->aqa & 0xfff) + 1, acqs = ((n->aqa >> 16) & 0xfff) + 1;
    KvssdSQ *sq;
    KvssdCQ *cq;

    if (asqs < 2 || acqs < 2) {
        return false;
    }
    if ((n->asq & (KVSSD_PAGE_BYTES - 1)) || (n->acq & (KVSSD_PAGE_BYTES - 1))) {
        return false;
    }
    cq = g_new0(KvssdCQ, 1);
    cq->qid = 0;
    cq->size = acqs;
    cq->dma_addr = n->acq;
    cq->vector = 0;
    cq->ien = true;
    cq->phase = 1;
    n->cq[0] = cq;
    sq = g_new0(KvssdSQ, 1);
    sq->qid = 0;
    sq->cqid = 0;
    sq->size = asqs;
    sq->dma_addr = n->asq;
    n->sq[0] = sq;
    cq->sq_refs = 1;
    return true;
}

void kvssd_queues_free(KvssdState *n)
{
    for (int i = 0; i <= KVSSD_MAX_IOQPAIRS; i++) {
        if (n->sq[i]) {
            sq_unpark(n, n->sq[i]);
        }
        g_free(n->sq[i]);
        n->sq[i] = NULL;
        if (n->cq[i]) {
            cq_free_pending(n->cq[i]);
            g_free(n->cq[i]);
            n->cq[i] = NULL;
        }
    }
    n->rr_next = 0;
}

/* Controller reset: every queue is gone, interrupts deasserted. */
void kvssd_queues_reset(KvssdState *n)
{
    kvssd_queues_free(n);
    n->dbbuf_dbs = n->dbbuf_eis = 0;
    memset(n->agg_count, 0, sizeof(n->agg_count));
    memset(n->agg_due_ns, 0, sizeof(n->agg_due_ns));
    timer_del(n->timer);
    if (n->irq_level) {
        n->irq_level = false;
        pci_set_irq(PCI_DEVICE(n), 0);
    }
}

/* ---- doorbells ---------------------------------------------------------- */

static void invalid_doorbell(KvssdState *n, uint32_t event, hwaddr off, uint32_t val)
{
    uint16_t cid;

    trace_kvssd_doorbell_invalid(off, val);
    kvssd_guest_error(n,
                      "doorbell write at 0x%" HWADDR_PRIx " (value %" PRIu32
                      ") names no live queue or an entry out of its range; ignored",
                      off, val);
    if (kvssd_admin_event(&n->admin, event, &cid) && n->cq[0]) {
        cq_enqueue(n, n->cq[0], 0, cid, KVSSD_SC_SUCCESS, event, 0, INT64_MIN);
        queues_schedule(n, false);
    }
}

void kvssd_doorbell_write(KvssdState *n, hwaddr off, uint32_t val)
{
    uint32_t idx = (off - KVSSD_REG_SQ0TDBL) / 4; /* CAP.DSTRD = 0 */
    uint32_t qid = idx / 2;
    bool is_cq = idx & 1;

    n->xfer.doorbell_bytes += 4;
    if (!(n->csts & KVSSD_CSTS_RDY) || (n->csts & KVSSD_CSTS_CFS)) {
        return;
    }
    if (off & 3 || qid > KVSSD_MAX_IOQPAIRS) {
        invalid_doorbell(n, KVSSD_AEN_INVALID_DB_REG, off, val);
        return;
    }
    if (is_cq) {
        KvssdCQ *cq = n->cq[qid];
        if (!cq) {
            invalid_doorbell(n, KVSSD_AEN_INVALID_DB_REG, off, val);
            return;
        }
        if (val >= cq->size) {
            invalid_doorbell(n, KVSSD_AEN_INVALID_DB_VALUE, off, val);
            return;
        }
        cq->head = val;
        if (n->dbbuf_dbs && qid && cq->ien && !msix_enabled(PCI_DEVICE(n))) {
            shadow_write(n, n->dbbuf_eis + shadow_cq_off(qid), val);
        }
        kvssd_irq_update(n);
        if (cq->waiting) {
            queues_schedule(n, false);
        }
    } else {
        KvssdSQ *sq = n->sq[qid];
        if (!sq) {
            invalid_doorbell(n, KVSSD_AEN_INVALID_DB_REG, off, val);
            return;
        }
        if (val >= sq->size) {
            invalid_doorbell(n, KVSSD_AEN_INVALID_DB_VALUE, off, val);
            return;
        }
        sq->tail = val;
        /* the commands up to here arrived by now, whenever the queues run */
        sq->db_ns = kvssd_now_ns();
        sq->db_pending = (val + sq->size - sq->head) % sq->size;
        queues_schedule(n, false);
    }
}

/* ---- command execution -------------------------------------------------- */

static void execute_admin(KvssdState *n, const struct kvssd_sqe *sqe, int64_t now, uint16_t *status,
                          uint32_t *dw0, uint32_t *dw1, bool *deferred, void **cont)
{
    KvssdDptr d;
    struct kvssd_admin_req req = {.sqe = sqe, .now_ns = now, .may_park = true, .cont = *cont};

    if (kvssd_sqe_opcode(sqe) == KVSSD_ADM_DBBUF_CONFIG) {
        *status = dbbuf_config(n, sqe); /* the transport's own: it names queue memory */
        *dw0 = *dw1 = 0;
        *deferred = false;
        *cont = NULL;
        return;
    }
    /* Admin data is at most 4 KiB (Identify, log pages); the dptr bounds it. */
    uint32_t len = 4096;
    if (kvssd_sqe_opcode(sqe) == KVSSD_ADM_GET_LOG_PAGE) {
        len = (uint32_t)MIN(kvssd_get_log_bytes(sqe->cdw[10], sqe->cdw[11]),
                            (uint64_t)kvssd_mdts_bytes(n));
    }
    kvssd_dptr_init(&d, n, sqe, len);
    req.dptr = kvssd_dptr_ops(&d);
    kvssd_admin_execute(&n->admin, &req);
    kvssd_dptr_finish(&d);
    *status = req.status;
    *dw0 = req.dw0;
    *dw1 = req.dw1;
    *deferred = req.deferred;
    *cont = req.in_progress ? req.cont : NULL;
}

static int64_t execute_io(KvssdState *n, const struct kvssd_sqe *sqe, int64_t now, uint16_t *status,
                          uint32_t *dw0, uint32_t *dw1, void **cont)
{
    KvssdDptr d;
    struct kvssd_req req = {.sqe = sqe, .now_ns = now, .may_park = true, .cont = *cont};

    *dw0 = *dw1 = 0;
    *status = kvssd_admin_io_check(&n->admin, sqe); /* fused; the KV namespace's NSID */
    if (*status != KVSSD_SC_SUCCESS) {
        return now;
    }
    uint64_t inline_before = n->xfer.inline_bytes;
    if (n->nvm) {
        kvssd_dptr_init(&d, n, sqe, kvssd_nvm_data_len(sqe, n->nvm_lba_bytes));
        req.dptr = kvssd_dptr_ops(&d);
        kvssd_nvm_execute(n->nvm, &req);
    } else {
        kvssd_dptr_init(&d, n, sqe, kvssd_io_data_len(sqe));
        req.dptr = kvssd_dptr_ops(&d);
        kvssd_kv_execute(n->ns, &req);
    }
    *cont = req.in_progress ? req.cont : NULL;
    if (req.in_progress) {
        /* a slice's data counts now (SMART data units); the command counts when it completes */
        n->admin.bytes_read += d.moved_d2h;
        n->admin.bytes_written += d.moved_h2d;
        n->batch_bytes += d.moved_h2d + d.moved_d2h;
        kvssd_dptr_finish(&d);
        return (int64_t)req.done_ns;
    }
    /* write-through with the write cache disabled, SMART */
    kvssd_admin_io_done(&n->admin, &req, d.moved_d2h,
                        d.moved_h2d + (n->xfer.inline_bytes - inline_before));
    n->batch_bytes += d.moved_h2d + d.moved_d2h;
    kvssd_dptr_finish(&d);
    *status = req.status;
    *dw0 = req.dw0;
    *dw1 = req.dw1;
    return (int64_t)req.done_ns;
}

/*
 * Run one command: @sqe fetched now, or parked on @sq (@cont its state) and
 * resumed. It completes (its CQE is queued), or the command set says it is
 * not done: it is then parked on @sq with its state. Returns true if parked.
 */
static bool sq_run(KvssdState *n, KvssdSQ *sq, KvssdCQ *cq, const struct kvssd_sqe *sqe, void *cont,
                   int64_t now)
{
    uint16_t cid = kvssd_sqe_cid(sqe);
    uint16_t status = KVSSD_SC_SUCCESS;
    uint32_t dw0 = 0, dw1 = 0;
    bool deferred = false;
    int64_t due = INT64_MIN;

    if (sq->qid == 0) {
        execute_admin(n, sqe, now, &status, &dw0, &dw1, &deferred, &cont);
    } else {
        int64_t done_ns = execute_io(n, sqe, now, &status, &dw0, &dw1, &cont);
        if (n->latency) {
            due = done_ns;
        }
    }
    if (cont) {
        if (sqe != &sq->parked_sqe) {
            sq->parked_sqe = *sqe;
        }
        sq->parked = true;
        sq->parked_cont = cont;
        return true;
    }
    sq->parked = false;
    sq->parked_cont = NULL;
    kvssd_command_done(n, sq->qid, sqe, status);
    if (!deferred) {
        cq_enqueue(n, cq, sq->qid, cid, status, dw0, dw1, due);
    }
    return false;
}

/*
 * Fetch and run up to @budget commands of @sq. Returns the number run, -1 on
 * fatal. A parked command is resumed first, only if no slice of a parked
 * command has run in this bottom half yet (*@sliced); while it stays parked
 * the SQ fetches nothing.
 */
static int sq_process(KvssdState *n, KvssdSQ *sq, int budget, int64_t now, bool *sliced)
{
    KvssdCQ *cq = n->cq[sq->cqid];
    int done = 0;

    if (sq->parked) {
        if (*sliced || !cq || cq->waiting >= cq->size) {
            return 0;
        }
        *sliced = true;
        done++;
        if (sq_run(n, sq, cq, &sq->parked_sqe, sq->parked_cont, now)) {
            return done;
        }
    }
    while (done < budget && sq->head != sq->tail && cq && cq->waiting < cq->size &&
           n->batch_bytes < KVSSD_BATCH_BYTES) {
        struct kvssd_sqe sqe;
        hwaddr addr = sq->dma_addr + (hwaddr)sq->head * KVSSD_SQE_BYTES;

        if (pci_dma_read(PCI_DEVICE(n), addr, &sqe, sizeof(sqe)) != MEMTX_OK) {
            trace_kvssd_dma_error(addr, sizeof(sqe));
            queues_fatal(n, "SQE fetch outside guest memory");
            return -1;
        }
        for (int i = 0; i < 16; i++) {
            sqe.cdw[i] = le32_to_cpu(sqe.cdw[i]);
        }
        n->xfer.sqe_fetch_bytes += KVSSD_SQE_BYTES;
        sq->head = (sq->head + 1) % sq->size;
        /* its arrival: the doorbell write that covered it, else (shadow doorbell) now */
        int64_t arrival = sq->db_pending ? MIN(sq->db_ns, now) : now;
        sq->db_pending -= sq->db_pending > 0;
        trace_kvssd_sqe(sq->qid, kvssd_sqe_cid(&sqe), kvssd_sqe_opcode(&sqe), sqe.cdw[10],
                        sqe.cdw[11]);

        done++;
        if (sq_run(n, sq, cq, &sqe, NULL, arrival)) {
            break; /* it waits for its next slice */
        }
        /* an admin command may have deleted this very queue or reset state */
        if (!n->sq[sq->qid] || n->sq[sq->qid] != sq || !(n->csts & KVSSD_CSTS_RDY)) {
            break;
        }
    }
    return done;
}

static void kvssd_process(void *opaque)
{
    KvssdState *n = opaque;
    int64_t now = kvssd_now_ns();
    int budget = KVSSD_BATCH;
    bool more = false;
    bool sliced = false; /* a parked command ran its slice in this run */

    n->batch_bytes = 0;
    if (!(n->csts & KVSSD_CSTS_RDY) || (n->csts & KVSSD_CSTS_CFS)) {
        return;
    }
    if (n->ns) {
        kvssd_ns_expire(n->ns, now);
    }
    /* round robin over the SQs, admin included */
    for (int k = 0; k <= KVSSD_MAX_IOQPAIRS && budget > 0; k++) {
        int qid = (n->rr_next + k) % (KVSSD_MAX_IOQPAIRS + 1);
        KvssdSQ *sq = n->sq[qid];
        if (!sq) {
            continue;
        }
        /* the FTL check (C4h) needs a firmware that does not change: no I/O meanwhile */
        if (qid != 0 && n->sq[0] && n->sq[0]->parked) {
            continue;
        }
        if (!sq_shadow_tail(n, sq)) {
            return;
        }
        int r = sq_process(n, sq, MIN(budget, 32), now, &sliced);
        if (r < 0) {
            return;
        }
        /*
         * Left in the SQ by the device's own limits (budget, CQ room, a
         * parked command): those start when fetched, as on a device that
         * had them waiting in its SQ.
         */
        if (n->sq[qid] == sq) {
            sq->db_pending = 0;
        }
        budget -= r;
        if (!(n->csts & KVSSD_CSTS_RDY)) {
            return;
        }
    }
    n->rr_next = (n->rr_next + 1) % (KVSSD_MAX_IOQPAIRS + 1);

    int64_t next_due = INT64_MAX;
    for (int i = 0; i <= KVSSD_MAX_IOQPAIRS; i++) {
        KvssdCQ *cq = n->cq[i];
        if (!cq) {
            continue;
        }
        if (!cq_drain(n, cq, now)) {
            return;
        }
        if (cq->waiting && cq->pending[0].due_ns > now) {
            next_due = MIN(next_due, cq->pending[0].due_ns);
        }
    }
    for (int i = 0; i <= KVSSD_MAX_IOQPAIRS; i++) {
        KvssdSQ *sq = n->sq[i];
        KvssdCQ *cq = sq ? n->cq[sq->cqid] : NULL;
        if (sq && sq_shadow_publish(n, sq)) {
            more = true; /* written while the event index was old: no MMIO doorbell came */
        }
        if (!(n->csts & KVSSD_CSTS_RDY) || (n->csts & KVSSD_CSTS_CFS)) {
            return;
        }
        if (sq && cq && (sq->head != sq->tail || sq->parked) && cq->waiting < cq->size) {
            more = true;
        }
    }
    if (more) {
        queues_schedule(n, true);
    }
    /*
     * latency=on holds completions; also wake to expire idle inline streams.
     * Only ever earlier: a timer that fires before it is needed costs one
     * run that arms it again, a timer_mod per run (per command at queue
     * depth 1) costs the timer list's lock and often a main-loop wake-up.
     */
    int64_t wake = now + (int64_t)n->inline_timeout_ms * 1000000;
    /*
     * completion-poll-ns: a held completion due that soon is not left to the
     * timer, whose wake-up a busy host delays (by 40 us at the median on the
     * project's VM, a 200 us read's fifth): the bottom half runs again at
     * the next main-loop iteration, until it is due. Each run is one pass
     * over the queues; the main loop still polls its file descriptors and
     * drops the BQL between runs. Under icount the timer is exact and
     * polling would not let virtual time advance.
     */
    if (next_due != INT64_MAX && n->completion_poll_ns && !icount_enabled() &&
        next_due - now <= (int64_t)n->completion_poll_ns) {
        qemu_bh_schedule(n->bh);
    }
    next_due = MIN(next_due, coalescing_expire(n, now));
    if (next_due != INT64_MAX) {
        wake = MIN(wake, next_due);
    }
    timer_mod_anticipate_ns(n->timer, wake);
}

/*
 * The timer runs the queues itself rather than scheduling the bottom half
 * (one main-loop iteration later): a held completion is posted in the
 * callback that found it due, with the bottom half's re-entrancy guard.
 */
static void kvssd_timer_cb(void *opaque)
{
    KvssdState *n = opaque;
    MemReentrancyGuard *guard = &DEVICE(n)->mem_reentrancy_guard;
    bool engaged = guard->engaged_in_io;

    guard->engaged_in_io = true;
    kvssd_process(n);
    guard->engaged_in_io = engaged;
}

void kvssd_queues_kick(KvssdState *n)
{
    queues_schedule(n, false);
}

void kvssd_queues_init(KvssdState *n)
{
    n->bh = qemu_bh_new_guarded(kvssd_process, n, &DEVICE(n)->mem_reentrancy_guard);
    n->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, kvssd_timer_cb, n);
}
