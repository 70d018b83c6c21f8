/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Asynchronous operations through io_uring passthrough: IORING_OP_URING_CMD
 * with NVME_URING_CMD_IO on a ring set up with IORING_SETUP_SQE128 |
 * IORING_SETUP_CQE32 (the NVMe command lives in the SQE's second half, the
 * 64-bit result in the CQE's big_cqe[0]).
 *
 * An operation may need several commands (Key Stage, inline head,
 * transfers). Commands are issued in order as ring slots free up; a Key
 * Stage is a barrier (the KV command waits for it to complete). One queue
 * belongs to one thread.
 *
 * On a sim: handle (sim.c) there is no kernel: the same operations issue
 * the same commands into a list of the queue's depth, which submit runs in
 * order through the device in this process, and their completions wait in
 * a second list to be reaped as CQEs are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>
#include <linux/nvme_ioctl.h>

#include "kvssd_priv.h"

enum aop_kind { AOP_STORE, AOP_RETRIEVE, AOP_DELETE, AOP_EXIST };

struct aop {
    enum aop_kind kind;
    const uint8_t *key;
    uint32_t key_len;
    uint32_t key_tag;
    uint32_t stream_tag;
    enum kvssd_xfer_mode method;
    struct kvssd_store_plan plan; /* AOP_STORE */
    void *buf;                    /* AOP_RETRIEVE */
    uint32_t buf_len;             /* what the Retrieve asks for (kvssd_dev_retrieve_len) */
    uint32_t caller_len;          /* the caller's buffer */
    void *bounce;                 /* huge-page buffer for a large transfer (dma.c) */
    uint32_t issued, completed, total;
    uint32_t retries; /* tags found in use by another process, replaced */
    int err;
    struct kvssd_result res;
    kvssd_cb cb;
    void *arg;
    struct aop *next; /* free list or active list */
    bool active;
};

/*
 * kvssd_queue_poll() without waiting holds back queued commands while at
 * least this many of @depth are with the device (see submit()).
 */
#define KVSSD_ASYNC_HOLD(depth) (((depth) + 1) / 2)

/* One completion: a CQE's user data, result (status or -errno) and 64-bit result. */
struct completion {
    uint64_t user_data;
    int res;
    uint64_t result;
};

struct kvssd_queue {
    struct kvssd_dev *dev;
    struct io_uring ring; /* not on a sim: handle */
    /* a sim: handle: commands prepared, then completions not yet reaped (depth each) */
    struct kvssd_cmd *sim_cmds;
    uint64_t *sim_user_data;
    unsigned sim_ncmds;
    struct completion *sim_done;
    unsigned sim_done_head, sim_done_count;
    unsigned depth;
    unsigned inflight; /* commands in the ring */
    unsigned outstanding; /* operations not yet called back */
    struct aop *ops;
    struct aop *free;
    struct aop *active; /* operations with commands left to issue, FIFO */
    struct aop *active_tail;
    unsigned to_submit; /* SQEs prepared, not yet handed to the kernel */
};

/* Back on the free list: an op that finished or never started. */
static void aop_put(struct kvssd_queue *q, struct aop *op)
{
    op->next = q->free;
    q->free = op;
}

int kvssd_queue_create(struct kvssd_dev *dev, unsigned depth, struct kvssd_queue **qp)
{
    return kvssd_queue_create_flags(dev, depth, 0, qp);
}

int kvssd_queue_create_flags(struct kvssd_dev *dev, unsigned depth, unsigned flags,
                             struct kvssd_queue **qp)
{
    struct kvssd_queue *q;
    unsigned setup = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
    int rc;

    if (!dev || !qp || depth < 1 || depth > KVSSD_QUEUE_DEPTH_MAX ||
        (flags & ~KVSSD_QUEUE_POLLED)) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    if (flags & KVSSD_QUEUE_POLLED) {
        /* io_uring_peek_cqe() and io_uring_wait_cqe() enter the kernel to poll */
        setup |= IORING_SETUP_IOPOLL;
    }
    if (dev->pci) {
        return -KVSSD_ERR_NOT_SUPPORTED; /* io_uring needs a kernel char device */
    }
    q = calloc(1, sizeof(*q));
    if (!q) {
        return -KVSSD_ERR_SYSTEM;
    }
    q->ops = calloc(depth, sizeof(*q->ops));
    if (!q->ops) {
        free(q);
        return -KVSSD_ERR_SYSTEM;
    }
    if (dev->sim) {
        q->sim_cmds = calloc(depth, sizeof(*q->sim_cmds));
        q->sim_user_data = calloc(depth, sizeof(*q->sim_user_data));
        q->sim_done = calloc(depth, sizeof(*q->sim_done));
        rc = q->sim_cmds && q->sim_user_data && q->sim_done ? 0 : -ENOMEM;
    } else {
        rc = io_uring_queue_init(depth, &q->ring, setup);
    }
    if (rc < 0) {
        free(q->sim_cmds);
        free(q->sim_user_data);
        free(q->sim_done);
        free(q->ops);
        free(q);
        errno = -rc;
        return -KVSSD_ERR_SYSTEM;
    }
    q->dev = dev;
    q->depth = depth;
    for (unsigned i = 0; i < depth; i++) {
        aop_put(q, &q->ops[i]);
    }
    *qp = q;
    return 0;
}

void kvssd_queue_destroy(struct kvssd_queue *q)
{
    if (!q) {
        return;
    }
    /* let commands in flight finish so that no buffer is written after free */
    while (q->inflight && kvssd_queue_poll(q, 1) >= 0 && q->outstanding)
        ;
    if (q->dev->sim) {
        free(q->sim_cmds);
        free(q->sim_user_data);
        free(q->sim_done);
    } else {
        io_uring_queue_exit(&q->ring);
    }
    free(q->ops);
    free(q);
}

unsigned kvssd_queue_outstanding(const struct kvssd_queue *q)
{
    return q->outstanding;
}

static void active_push(struct kvssd_queue *q, struct aop *op)
{
    op->next = NULL;
    op->active = true;
    if (q->active_tail) {
        q->active_tail->next = op;
    } else {
        q->active = op;
    }
    q->active_tail = op;
}

/* A cleared op of @kind on @key from the free list, or NULL when all are in flight. */
static struct aop *aop_get(struct kvssd_queue *q, enum aop_kind kind, const void *key,
                           uint32_t key_len)
{
    struct aop *op = q->free;
    if (!op) {
        return NULL;
    }
    q->free = op->next;
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->key = key;
    op->key_len = key_len;
    return op;
}

static bool key_len_fits(const struct kvssd_queue *q, uint32_t key_len)
{
    return key_len >= KVSSD_KEY_MIN && key_len <= kvssd_dev_key_max(q->dev);
}

static bool long_key(const struct aop *op)
{
    return op->key_len > KVSSD_KEY_INLINE_MAX;
}

/* The op's next command; false when it has issued all of them. */
static bool aop_next_cmd(struct kvssd_queue *q, struct aop *op, struct kvssd_cmd *cmd)
{
    uint32_t nsid = q->dev->info.nsid;

    if (op->issued >= op->total) {
        return false;
    }
    if (op->kind == AOP_STORE) {
        if (!kvssd_store_plan_next(&op->plan, cmd)) {
            return false;
        }
        if (op->bounce && cmd->data_len > KVSSD_BOUNCE_MIN_BYTES) {
            memcpy(op->bounce, cmd->data, cmd->data_len);
            cmd->data = op->bounce;
        }
        return true;
    }
    if (long_key(op) && op->issued == 0) {
        kvssd_cmd_key_stage(cmd, nsid, op->key, op->key_len, op->key_tag);
        return true;
    }
    switch (op->kind) {
    case AOP_RETRIEVE:
        kvssd_cmd_retrieve(cmd, nsid, op->key, op->key_len, op->key_tag,
                           op->bounce ? op->bounce : op->buf, op->buf_len);
        break;
    case AOP_DELETE:
        kvssd_cmd_delete(cmd, nsid, op->key, op->key_len, op->key_tag);
        break;
    default:
        kvssd_cmd_exist(cmd, nsid, op->key, op->key_len, op->key_tag);
        break;
    }
    return true;
}

/* May the op issue its next command now? Not past an error or an unfinished Key Stage. */
static uint32_t head_index(const struct aop *op)
{
    return long_key(op) ? 1 : 0;
}

/*
 * Barriers: a Key Stage completes before the command that takes its key,
 * and an inline head before its transfers. Tags are chosen per process, so
 * another process may hold the same tag: the device then refuses the head
 * (INLINE_TAG_IN_USE) and transfers sent behind it would land in the other
 * process's stream. Waiting for the head rules that out.
 */
static bool aop_ready(const struct aop *op)
{
    if (op->err || op->issued >= op->total) {
        return false;
    }
    if (long_key(op) && op->issued == 1 && op->completed == 0) {
        return false;
    }
    if (op->kind == AOP_STORE && op->method != KVSSD_XFER_PRP && op->issued == head_index(op) + 1 &&
        op->completed < op->issued) {
        return false;
    }
    return true;
}

#define TAG_RETRIES 16

/*
 * The Key Stage or head at @index was refused with INLINE_TAG_IN_USE: take
 * another tag and issue again from @index (nothing after it was sent).
 */
static bool aop_retry_tag(struct kvssd_queue *q, struct aop *op, uint32_t index)
{
    struct kvssd_cmd skip;
    bool stage = long_key(op) && index == 0;
    int t;

    if (op->retries >= TAG_RETRIES || (!stage && index != head_index(op)) ||
        (!stage && op->kind != AOP_STORE) || (t = kvssd_tag_alloc(q->dev)) < 0) {
        return false;
    }
    op->retries++;
    if (stage) {
        kvssd_tag_free(q->dev, op->key_tag);
        op->key_tag = (uint32_t)t;
    } else {
        kvssd_tag_free(q->dev, op->stream_tag);
        op->stream_tag = (uint32_t)t;
    }
    if (op->kind == AOP_STORE) {
        if (kvssd_store_plan_init(&op->plan, q->dev->info.nsid, op->key, op->key_len, op->key_tag,
                                  op->stream_tag, op->plan.value, op->plan.value_len,
                                  op->plan.options, op->method)) {
            return false;
        }
        for (uint32_t i = 0; i < index; i++) {
            kvssd_store_plan_next(&op->plan, &skip);
        }
    }
    op->issued = op->completed = index;
    if (!op->active) {
        active_push(q, op);
    }
    return true;
}

static void prep_uring_cmd(struct kvssd_queue *q, struct io_uring_sqe *sqe,
                           const struct kvssd_cmd *cmd, uint64_t user_data)
{
    const uint32_t *d = cmd->sqe.cdw;
    struct nvme_uring_cmd *uc;

    memset(sqe, 0, 2 * sizeof(*sqe)); /* SQE128: the command occupies the second half */
    sqe->opcode = IORING_OP_URING_CMD;
    sqe->fd = q->dev->fd;
    sqe->cmd_op = NVME_URING_CMD_IO;
    uc = (struct nvme_uring_cmd *)sqe->cmd;
    uc->opcode = kvssd_sqe_opcode(&cmd->sqe);
    uc->nsid = d[1];
    uc->cdw2 = d[2];
    uc->cdw3 = d[3];
    uc->addr = (uint64_t)(uintptr_t)cmd->data;
    uc->data_len = cmd->data_len;
    uc->cdw10 = d[10];
    uc->cdw11 = d[11];
    uc->cdw12 = d[12];
    uc->cdw13 = d[13];
    uc->cdw14 = d[14];
    uc->cdw15 = d[15];
    io_uring_sqe_set_data64(sqe, user_data);
}

/* Fill free ring slots from the active operations, oldest first. */
static void pump(struct kvssd_queue *q)
{
    struct aop *prev = NULL, *op = q->active;

    while (op && q->inflight < q->depth) {
        struct kvssd_cmd cmd;
        while (q->inflight < q->depth && aop_ready(op)) {
            /* the SQ ring has depth slots, so inflight < depth leaves one free */
            struct io_uring_sqe *sqe = q->dev->sim ? NULL : io_uring_get_sqe(&q->ring);
            if ((!sqe && !q->dev->sim) || !aop_next_cmd(q, op, &cmd)) {
                return;
            }
            uint64_t ud = (uint64_t)(op - q->ops) << 32 | op->issued;
            if (sqe) {
                prep_uring_cmd(q, sqe, &cmd, ud);
            } else {
                /* inflight < depth bounds the prepared commands */
                q->sim_cmds[q->sim_ncmds] = cmd;
                q->sim_user_data[q->sim_ncmds++] = ud;
            }
            op->issued++;
            q->inflight++;
            q->to_submit++;
        }
        struct aop *next = op->next;
        if (op->issued >= op->total || op->err) {
            /* nothing left to issue: leave the active list */
            if (prev) {
                prev->next = next;
            } else {
                q->active = next;
            }
            if (q->active_tail == op) {
                q->active_tail = prev;
            }
            op->active = false;
            op->next = NULL;
        } else {
            prev = op;
        }
        op = next;
    }
}

static void aop_finish(struct kvssd_queue *q, struct aop *op)
{
    if (op->bounce) {
        if (op->kind == AOP_RETRIEVE && !op->err) {
            memcpy(op->buf, op->bounce, op->res.dw0 < op->buf_len ? op->res.dw0 : op->buf_len);
        }
        kvssd_dma_free(op->bounce, KVSSD_VALUE_MAX);
        op->bounce = NULL;
    }
    if (op->kind == AOP_RETRIEVE && !op->err && op->res.dw0 > op->buf_len &&
        op->caller_len > op->buf_len) {
        op->err = -KVSSD_ERR_VALUE_SIZE; /* as kvssd_retrieve(): never a silent short read */
    }
    if (op->kind == AOP_STORE) {
        if (!op->err && op->method != KVSSD_XFER_PRP && !(op->res.dw1 & KVSSD_INLINE_DW1_STORED)) {
            op->err = -KVSSD_ERR_NVME;
        }
        kvssd_store_tags_free(q->dev, op->key_len, op->method, op->key_tag, op->stream_tag);
    } else if (long_key(op)) {
        kvssd_tag_free(q->dev, op->key_tag);
    }
    op->res.commands = op->issued;
    q->outstanding--;
    kvssd_cb cb = op->cb;
    void *arg = op->arg;
    int err = op->err;
    struct kvssd_result res = op->res;
    aop_put(q, op);
    if (cb) {
        cb(arg, err, &res);
    }
}

static void complete_one(struct kvssd_queue *q, const struct completion *cqe, int *done)
{
    uint64_t ud = cqe->user_data;
    struct aop *op = &q->ops[ud >> 32];
    uint32_t index = (uint32_t)ud;
    uint64_t result = cqe->result;

    q->inflight--;
    op->completed++;
    if (cqe->res < 0) {
        if (!op->err) {
            op->err = -KVSSD_ERR_SYSTEM;
            op->res.sys_errno = -cqe->res;
        }
    } else {
        uint16_t st = (uint16_t)cqe->res;
        if ((st & KVSSD_STATUS_CODE_MASK) == KVSSD_SC_INLINE_TAG_IN_USE && !op->err &&
            op->completed == op->issued && aop_retry_tag(q, op, index)) {
            return;
        }
        if (st && !op->err) {
            op->err = kvssd_status_to_err(st);
            op->res.status = st & KVSSD_STATUS_CODE_MASK;
            op->res.dw0 = (uint32_t)result;
            op->res.dw1 = (uint32_t)(result >> 32);
        } else if (!op->err && index == op->total - 1) {
            op->res.status = 0;
            op->res.dw0 = (uint32_t)result;
            op->res.dw1 = (uint32_t)(result >> 32);
        }
    }
    /* done when every issued command is back and nothing more will be issued */
    if (op->completed == op->issued && (op->err || op->issued == op->total)) {
        if (op->active) {
            /* remove from the active list before recycling */
            struct aop *p = NULL, *c = q->active;
            while (c && c != op) {
                p = c;
                c = c->next;
            }
            if (c) {
                if (p) {
                    p->next = c->next;
                } else {
                    q->active = c->next;
                }
                if (q->active_tail == c) {
                    q->active_tail = p;
                }
            }
            op->active = false;
        }
        aop_finish(q, op);
        (*done)++;
    }
}

/* The sim: run the prepared commands in order; their completions wait to be reaped. */
static void sim_run(struct kvssd_queue *q)
{
    for (unsigned i = 0; i < q->sim_ncmds; i++) {
        struct kvssd_result r = {0};
        int rc = kvssd_sim_submit(q->dev->sim, &q->sim_cmds[i], &r);
        struct completion *c = &q->sim_done[(q->sim_done_head + q->sim_done_count++) % q->depth];
        c->user_data = q->sim_user_data[i];
        c->res = rc == -KVSSD_ERR_SYSTEM ? -(r.sys_errno ? r.sys_errno : EIO) : r.status;
        c->result = (uint64_t)r.dw1 << 32 | r.dw0;
    }
    q->sim_ncmds = 0;
}

/* The next completion to reap, consumed; false when there is none yet. */
static bool reap(struct kvssd_queue *q, struct completion *c)
{
    struct io_uring_cqe *cqe;

    if (q->dev->sim) {
        if (!q->sim_done_count) {
            return false;
        }
        *c = q->sim_done[q->sim_done_head];
        q->sim_done_head = (q->sim_done_head + 1) % q->depth;
        q->sim_done_count--;
        return true;
    }
    if (io_uring_peek_cqe(&q->ring, &cqe) != 0) {
        return false;
    }
    c->user_data = io_uring_cqe_get_data64(cqe);
    c->res = cqe->res;
    c->result = cqe->big_cqe[0];
    io_uring_cqe_seen(&q->ring, cqe);
    return true;
}

/*
 * Hand what pump() queued to the kernel. Without @wait, only while fewer
 * than half the queue's depth are with the device: a caller that refills
 * freed slots one operation at a time and polls with min_ops 0 after each
 * (kvbench's async engine) then hands them over in batches, N SQEs in one
 * io_uring_enter (which the kernel also issues under one plug: one doorbell
 * run), while a device running dry is fed at once. With @wait, everything
 * queued goes before the caller blocks, then one completion is waited for.
 * On a sim: handle the same rule runs them (sim_run), with nothing to wait for.
 * Returns 0 or -errno.
 */
static int submit(struct kvssd_queue *q, bool wait)
{
    unsigned with_device = q->inflight - q->to_submit;

    if (q->dev->sim) {
        /* every command completes as it runs: nothing to wait for after */
        if (q->to_submit && (wait || with_device < KVSSD_ASYNC_HOLD(q->depth))) {
            sim_run(q);
            q->to_submit = 0;
        }
        return 0;
    }
    if (q->to_submit && (wait || with_device < KVSSD_ASYNC_HOLD(q->depth))) {
        int rc = io_uring_submit(&q->ring);
        if (rc < 0) {
            return rc;
        }
        q->to_submit -= (unsigned)rc < q->to_submit ? (unsigned)rc : q->to_submit;
    }
    if (wait) {
        struct io_uring_cqe *cqe;
        return io_uring_wait_cqe(&q->ring, &cqe);
    }
    return 0;
}

int kvssd_queue_poll(struct kvssd_queue *q, unsigned min_ops)
{
    int done = 0;

    for (;;) {
        struct completion cqe;
        unsigned seen = 0;
        int rc;

        pump(q);
        while (reap(q, &cqe)) {
            complete_one(q, &cqe, &done);
            seen++;
        }
        if ((unsigned)done >= min_ops || q->outstanding == 0) {
            pump(q); /* the slots the completions freed, and the callbacks' operations */
            rc = submit(q, false);
            if (rc < 0) {
                errno = -rc;
                return -KVSSD_ERR_SYSTEM;
            }
            return done;
        }
        if (!seen) {
            if (!q->inflight) {
                continue; /* a barrier was released; pump again */
            }
            rc = submit(q, true);
            if (rc < 0 && rc != -EINTR) {
                errno = -rc;
                return -KVSSD_ERR_SYSTEM;
            }
        }
    }
}

static int aop_start(struct kvssd_queue *q, struct aop *op)
{
    q->outstanding++;
    active_push(q, op);
    pump(q);
    return 0;
}

int kvssd_store_async(struct kvssd_queue *q, const void *key, uint32_t key_len, const void *value,
                      uint32_t value_len, uint32_t options, kvssd_cb cb, void *arg)
{
    if (!key_len_fits(q, key_len)) {
        return -KVSSD_ERR_KEY_SIZE;
    }
    int rc = kvssd_store_check(q->dev, value_len, NULL, 0);
    if (rc) {
        return rc;
    }
    struct aop *op = aop_get(q, AOP_STORE, key, key_len);
    if (!op) {
        return -KVSSD_ERR_BUSY;
    }
    op->method = kvssd_xfer_choose(q->dev->mode, &q->dev->xfer, value_len);
    rc = kvssd_store_tags(q->dev, key_len, op->method, &op->key_tag, &op->stream_tag);
    if (!rc) {
        rc = kvssd_store_plan_init(&op->plan, q->dev->info.nsid, key, key_len, op->key_tag,
                                   op->stream_tag, value, value_len, options, op->method);
        if (rc) {
            kvssd_store_tags_free(q->dev, key_len, op->method, op->key_tag, op->stream_tag);
        }
    }
    if (rc) {
        aop_put(q, op);
        return rc;
    }
    op->total = op->plan.total;
    if (op->method != KVSSD_XFER_INLINE && value_len > KVSSD_BOUNCE_MIN_BYTES) {
        op->bounce = kvssd_dma_alloc(KVSSD_VALUE_MAX);
    }
    op->cb = cb;
    op->arg = arg;
    return aop_start(q, op);
}

static int key_op_async(struct kvssd_queue *q, enum aop_kind kind, const void *key,
                        uint32_t key_len, void *buf, uint32_t buf_len, kvssd_cb cb, void *arg)
{
    if (!key_len_fits(q, key_len)) {
        return -KVSSD_ERR_KEY_SIZE;
    }
    if (!key || (buf_len && !buf)) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    struct aop *op = aop_get(q, kind, key, key_len);
    if (!op) {
        return -KVSSD_ERR_BUSY;
    }
    op->buf = buf;
    op->caller_len = buf_len;
    op->buf_len = buf_len = kvssd_dev_retrieve_len(q->dev, buf_len);
    if (buf_len > KVSSD_BOUNCE_MIN_BYTES && buf_len <= KVSSD_VALUE_MAX) {
        op->bounce = kvssd_dma_alloc(KVSSD_VALUE_MAX);
    }
    op->total = 1;
    if (long_key(op)) {
        int t = kvssd_tag_alloc(q->dev);
        if (t < 0) {
            aop_put(q, op);
            return t;
        }
        op->key_tag = (uint32_t)t;
        op->total = 2;
    }
    op->cb = cb;
    op->arg = arg;
    return aop_start(q, op);
}

int kvssd_retrieve_async(struct kvssd_queue *q, const void *key, uint32_t key_len, void *buf,
                         uint32_t buf_len, kvssd_cb cb, void *arg)
{
    return key_op_async(q, AOP_RETRIEVE, key, key_len, buf, buf_len, cb, arg);
}

int kvssd_delete_async(struct kvssd_queue *q, const void *key, uint32_t key_len, kvssd_cb cb,
                       void *arg)
{
    return key_op_async(q, AOP_DELETE, key, key_len, NULL, 0, cb, arg);
}

int kvssd_exist_async(struct kvssd_queue *q, const void *key, uint32_t key_len, kvssd_cb cb,
                      void *arg)
{
    return key_op_async(q, AOP_EXIST, key, key_len, NULL, 0, cb, arg);
}
