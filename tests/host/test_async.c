/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libkvssd's async engine (host/lib/async.c) over a fake io_uring: which
 * io_uring_submit() calls hand how many SQEs to the kernel. The fake ring
 * (below, in place of liburing's io_uring_queue_init, io_uring_submit,
 * __io_uring_get_cqe and io_uring_queue_exit) records each submit's SQE
 * count and completes the commands handed to it only when the engine
 * waits, like a device that is slower than its host: the queue then fills,
 * and what the engine does with a full queue is visible call by call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <kvssd/libkvssd.h>
#include <liburing.h>
#include <linux/nvme_ioctl.h>

#include "kvssd_priv.h"
#include "tap_cunit.h"

#define DEPTH 32u
#define MAX_CALLS 256

/* ---- the fake ring ---------------------------------------------------- */

static struct {
    unsigned sq_head, sq_tail, sq_mask, sq_entries, sq_flags, sq_dropped;
    unsigned cq_head, cq_tail, cq_mask, cq_entries, cq_flags, cq_overflow;
    unsigned sq_array[DEPTH];
    struct io_uring_sqe sqes[2 * DEPTH];     /* SQE128: two slots each */
    struct io_uring_cqe cqes[2 * 2 * DEPTH]; /* CQE32, 2 * DEPTH entries */
    uint64_t with_device[DEPTH];             /* user_data handed over, not completed */
    unsigned n_with_device;
    unsigned submits;            /* io_uring_submit calls */
    unsigned per_submit[MAX_CALLS];
    unsigned waits;              /* waits that completed what the device held */
    uint8_t opcodes[4 * DEPTH];  /* NVMe opcode of each command, in submit order */
    unsigned commands;
    unsigned setup_flags; /* io_uring_queue_init's flags */
    unsigned inits;       /* io_uring_queue_init calls */
} fr;

int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
    if (entries != DEPTH || !(flags & IORING_SETUP_SQE128) || !(flags & IORING_SETUP_CQE32)) {
        return -EINVAL;
    }
    unsigned inits = fr.inits;
    memset(&fr, 0, sizeof(fr));
    fr.setup_flags = flags;
    fr.inits = inits + 1;
    memset(ring, 0, sizeof(*ring));
    fr.sq_mask = DEPTH - 1;
    fr.sq_entries = DEPTH;
    fr.cq_mask = 2 * DEPTH - 1;
    fr.cq_entries = 2 * DEPTH;
    ring->sq.khead = &fr.sq_head;
    ring->sq.ktail = &fr.sq_tail;
    ring->sq.kring_mask = &fr.sq_mask;
    ring->sq.kring_entries = &fr.sq_entries;
    ring->sq.kflags = &fr.sq_flags;
    ring->sq.kdropped = &fr.sq_dropped;
    ring->sq.array = fr.sq_array;
    ring->sq.sqes = fr.sqes;
    ring->sq.ring_mask = DEPTH - 1;
    ring->sq.ring_entries = DEPTH;
    ring->cq.khead = &fr.cq_head;
    ring->cq.ktail = &fr.cq_tail;
    ring->cq.kring_mask = &fr.cq_mask;
    ring->cq.kring_entries = &fr.cq_entries;
    ring->cq.kflags = &fr.cq_flags;
    ring->cq.koverflow = &fr.cq_overflow;
    ring->cq.cqes = fr.cqes;
    ring->cq.ring_mask = 2 * DEPTH - 1;
    ring->cq.ring_entries = 2 * DEPTH;
    ring->flags = flags;
    ring->ring_fd = -1;
    ring->enter_ring_fd = -1;
    ring->features = IORING_FEAT_EXT_ARG;
    return 0;
}

void io_uring_queue_exit(struct io_uring *ring)
{
    memset(ring, 0, sizeof(*ring));
}

/* One "io_uring_enter": every SQE prepared since the last call goes to the device. */
int io_uring_submit(struct io_uring *ring)
{
    unsigned n = 0;

    while (ring->sq.sqe_head != ring->sq.sqe_tail) {
        const struct io_uring_sqe *sqe = &fr.sqes[(ring->sq.sqe_head & (DEPTH - 1)) << 1];
        const struct nvme_uring_cmd *uc = (const void *)sqe->cmd;
        if (fr.n_with_device == DEPTH || fr.commands == sizeof(fr.opcodes)) {
            break;
        }
        fr.opcodes[fr.commands++] = uc->opcode;
        fr.with_device[fr.n_with_device++] = sqe->user_data;
        ring->sq.sqe_head++;
        fr.sq_head = ring->sq.sqe_head; /* the slot is free again */
        n++;
    }
    if (fr.submits < MAX_CALLS) {
        fr.per_submit[fr.submits] = n;
    }
    fr.submits++;
    return (int)n;
}

/* Waiting completes everything the device holds, in order, with status 0. */
int __io_uring_get_cqe(struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned submit,
                       unsigned wait_nr, sigset_t *sigmask)
{
    (void)sigmask;
    if (submit) {
        io_uring_submit(ring);
    }
    if (fr.cq_tail == fr.cq_head && wait_nr && fr.n_with_device) {
        for (unsigned i = 0; i < fr.n_with_device; i++) {
            struct io_uring_cqe *c = &fr.cqes[(fr.cq_tail & (2 * DEPTH - 1)) << 1];
            memset(c, 0, 2 * sizeof(*c));
            c->user_data = fr.with_device[i];
            fr.cq_tail++;
        }
        fr.n_with_device = 0;
        fr.waits++;
    }
    if (fr.cq_tail == fr.cq_head) {
        *cqe_ptr = NULL;
        return -EAGAIN;
    }
    *cqe_ptr = &fr.cqes[(fr.cq_head & (2 * DEPTH - 1)) << 1];
    return 0;
}

/* ---- the cases -------------------------------------------------------- */

static struct kvssd_dev *fake_dev(void)
{
    struct kvssd_dev *dev = calloc(1, sizeof(*dev));
    CU_ASSERT_FATAL(dev != NULL);
    dev->fd = 3; /* only copied into each SQE */
    dev->ctrl_fd = -1;
    dev->info.nsid = 1;
    dev->mode = KVSSD_XFER_PRP;
    return dev;
}

static unsigned callbacks, callback_errors;

static void count_cb(void *arg, int err, const struct kvssd_result *res)
{
    (void)arg, (void)res;
    callbacks++;
    callback_errors += err != 0;
}

/*
 * kvbench's async loop: a free slot gets the next Store, then a poll that
 * does not wait; a full queue polls until one completes; the end drains.
 */
static void run_like_kvbench(struct kvssd_queue *q, unsigned ops)
{
    static const uint8_t key[16] = "0123456789abcdef";
    static const uint8_t value[64];
    unsigned started = 0;

    while (started < ops) {
        if (kvssd_queue_outstanding(q) == DEPTH) {
            CU_ASSERT_FATAL(kvssd_queue_poll(q, 1) >= 1);
            continue;
        }
        CU_ASSERT_FATAL(
            kvssd_store_async(q, key, sizeof(key), value, sizeof(value), 0, count_cb, NULL) == 0);
        started++;
        CU_ASSERT_FATAL(kvssd_queue_poll(q, 0) >= 0);
    }
    while (kvssd_queue_outstanding(q)) {
        CU_ASSERT_FATAL(kvssd_queue_poll(q, 1) >= 1);
    }
}

/*
 * 64 PRP Stores (one command each) at depth 32. The first 16 go one per
 * submit while fewer than half the depth are with the device; the next 16
 * wait in the ring and go together, in the one submit made before the
 * engine blocks on the full queue. The wait completes all 32; the second
 * 32 repeat the pattern: 34 submits for 64 commands, 2 waits.
 */
static void test_poll_batches_refills(void)
{
    struct kvssd_dev *dev = fake_dev();
    struct kvssd_queue *q;
    unsigned expect[34];

    callbacks = callback_errors = 0;
    CU_ASSERT_FATAL(kvssd_queue_create(dev, DEPTH, &q) == 0);
    run_like_kvbench(q, 64);
    for (unsigned i = 0; i < 34; i++) {
        expect[i] = i == 16 || i == 33 ? 16 : 1;
    }
    CU_ASSERT_EQUAL(fr.commands, 64);
    CU_ASSERT_EQUAL(fr.submits, 34);
    CU_ASSERT_EQUAL(memcmp(fr.per_submit, expect, sizeof(expect)), 0);
    CU_ASSERT_EQUAL(fr.waits, 2);
    CU_ASSERT_EQUAL(callbacks, 64);
    CU_ASSERT_EQUAL(callback_errors, 0);
    for (unsigned i = 0; i < 64; i++) {
        CU_ASSERT_EQUAL(fr.opcodes[i], KVSSD_OPC_STORE);
    }
    kvssd_queue_destroy(q);
    free(dev);
}

/*
 * Polling without ever waiting still gets every command to the device: 20
 * Stores queued, then polls with min_ops 0. The first poll hands over all 20
 * at once (none was with the device); nothing completes until a wait.
 */
static void test_poll_without_wait_submits(void)
{
    static const uint8_t key[16] = "fedcba9876543210";
    static const uint8_t value[64];
    struct kvssd_dev *dev = fake_dev();
    struct kvssd_queue *q;

    callbacks = callback_errors = 0;
    CU_ASSERT_FATAL(kvssd_queue_create(dev, DEPTH, &q) == 0);
    for (unsigned i = 0; i < 20; i++) {
        CU_ASSERT_FATAL(
            kvssd_store_async(q, key, sizeof(key), value, sizeof(value), 0, count_cb, NULL) == 0);
    }
    CU_ASSERT_EQUAL(fr.submits, 0); /* queued in the ring only */
    CU_ASSERT_EQUAL(kvssd_queue_poll(q, 0), 0);
    CU_ASSERT_EQUAL(fr.submits, 1);
    CU_ASSERT_EQUAL(fr.per_submit[0], 20);
    CU_ASSERT_EQUAL(kvssd_queue_poll(q, 0), 0);
    CU_ASSERT_EQUAL(fr.submits, 1);
    CU_ASSERT_EQUAL(kvssd_queue_poll(q, 1), 20);
    CU_ASSERT_EQUAL(fr.waits, 1);
    CU_ASSERT_EQUAL(callbacks, 20);
    CU_ASSERT_EQUAL(kvssd_queue_outstanding(q), 0);
    kvssd_queue_destroy(q);
    free(dev);
}

/*
 * KVSSD_QUEUE_POLLED sets the ring up with IORING_SETUP_IOPOLL (besides
 * SQE128 and CQE32, which every queue has); without it, or through
 * kvssd_queue_create(), the ring has no IOPOLL. A flag the library does not
 * know is -KVSSD_ERR_INVALID_ARGUMENT before any ring is made. A polled
 * queue runs kvbench's loop like any other: 64 Stores, 64 callbacks.
 */
static void test_polled_queue_sets_iopoll(void)
{
    struct kvssd_dev *dev = fake_dev();
    struct kvssd_queue *q;
    const unsigned base = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;

    fr.inits = 0;
    CU_ASSERT_EQUAL(kvssd_queue_create_flags(dev, DEPTH, 1u << 1, &q), -KVSSD_ERR_INVALID_ARGUMENT);
    CU_ASSERT_EQUAL(fr.inits, 0);
    CU_ASSERT_FATAL(kvssd_queue_create(dev, DEPTH, &q) == 0);
    CU_ASSERT_EQUAL(fr.setup_flags, base);
    kvssd_queue_destroy(q);
    CU_ASSERT_FATAL(kvssd_queue_create_flags(dev, DEPTH, 0, &q) == 0);
    CU_ASSERT_EQUAL(fr.setup_flags, base);
    kvssd_queue_destroy(q);
    CU_ASSERT_FATAL(kvssd_queue_create_flags(dev, DEPTH, KVSSD_QUEUE_POLLED, &q) == 0);
    CU_ASSERT_EQUAL(fr.setup_flags, base | IORING_SETUP_IOPOLL);
    CU_ASSERT_EQUAL(fr.inits, 3);
    callbacks = callback_errors = 0;
    run_like_kvbench(q, 64);
    CU_ASSERT_EQUAL(callbacks, 64);
    CU_ASSERT_EQUAL(callback_errors, 0);
    kvssd_queue_destroy(q);
    free(dev);
}

static const struct tap_test host_async_tests[] = {
    TAP_TEST(poll_batches_refills),
    TAP_TEST(poll_without_wait_submits),
    TAP_TEST(polled_queue_sets_iopoll),
};

int main(void)
{
    const struct tap_suite suites[] = {
        TAP_SUITE("host_async", NULL, NULL, host_async_tests),
    };

    return tap_main(suites, sizeof(suites) / sizeof(suites[0]));
}
