/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The in-process device behind libkvssd's OS boundary: see loopdev.h. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <liburing.h>
#include <linux/nvme_ioctl.h>

#include "admin.h"
#include "cmdset.h"
#include "kvftl_small.h"
#include "loopdev.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct kvftl *ftl;
static struct kvssd_ns *ns;
static struct kvssd_admin admin;
static struct kvssd_xfer_counters xfer;
static struct loopdev_counts counts;
static uint64_t now_ns = 1000000;
static uint8_t passthru_mdts; /* nonzero: answer as nvmet's passthru target (loopdev.h) */

int loopdev_start(void)
{
    struct kvftl_config c;
    char err[256];

    kvftl_config_small(&c, (struct kvftl_small_geometry){.channels = 2,
                                                         .dies_per_channel = 2,
                                                         .blocks_per_die = 32,
                                                         .pages_per_block = 64,
                                                         .page_size_bytes = 16384});
    ftl = kvftl_open(&c, err, sizeof(err));
    if (!ftl) {
        fprintf(stderr, "loopdev: kvftl_open: %s\n", err);
        return -1;
    }
    memset(&xfer, 0, sizeof(xfer));
    ns = kvssd_ns_new(ftl, NULL, &xfer, err, sizeof(err));
    if (!ns) {
        fprintf(stderr, "loopdev: kvssd_ns_new: %s\n", err);
        kvftl_close(ftl);
        return -1;
    }
    memset(&admin, 0, sizeof(admin));
    snprintf(admin.serial, sizeof(admin.serial), "SNIA01");
    snprintf(admin.model, sizeof(admin.model), "kvssd loopback");
    snprintf(admin.firmware, sizeof(admin.firmware), "loop");
    admin.ftl = ftl;
    admin.ns = ns;
    admin.xfer = &xfer;
    admin.max_ioqpairs = 1;
    kvssd_admin_init(&admin);
    memset(&counts, 0, sizeof(counts));
    passthru_mdts = 0;
    return 0;
}

void loopdev_passthru_target(uint8_t mdts)
{
    pthread_mutex_lock(&lock);
    passthru_mdts = mdts;
    admin.mdts = mdts;
    pthread_mutex_unlock(&lock);
}

/* The initiator's refusal of a transfer past MDTS (blk-map.c): true with errno EINVAL. */
static bool past_passthru_mdts(uint32_t data_len)
{
    pthread_mutex_lock(&lock);
    bool past = passthru_mdts && data_len > 4096u << passthru_mdts;
    pthread_mutex_unlock(&lock);
    if (past) {
        errno = EINVAL;
    }
    return past;
}

void loopdev_stop(void)
{
    kvssd_ns_free(ns);
    kvftl_close(ftl);
    ns = NULL;
    ftl = NULL;
}

struct loopdev_counts loopdev_counts(void)
{
    pthread_mutex_lock(&lock);
    struct loopdev_counts c = counts;
    pthread_mutex_unlock(&lock);
    return c;
}

struct host_buf {
    uint8_t *p;
    uint32_t len;
};

static uint16_t from_host(void *opaque, uint64_t off, void *buf, uint32_t len)
{
    struct host_buf *h = opaque;
    if (off > h->len || len > h->len - off) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(buf, h->p + off, len);
    return KVSSD_SC_SUCCESS;
}

static uint16_t to_host(void *opaque, uint64_t off, const void *buf, uint32_t len)
{
    struct host_buf *h = opaque;
    if (off > h->len || len > h->len - off) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(h->p + off, buf, len);
    return KVSSD_SC_SUCCESS;
}

/* One command, as the transport would run it: what reaches the device through passthrough. */
static uint16_t execute(bool is_admin, uint8_t opcode, uint32_t nsid, uint32_t cdw2, uint32_t cdw3,
                        const uint32_t cdw10_15[6], void *data, uint32_t data_len, uint64_t *result)
{
    struct kvssd_sqe sqe;
    struct host_buf h = {data, data_len};
    uint16_t status;
    uint32_t dw0, dw1;

    memset(&sqe, 0, sizeof(sqe));
    sqe.cdw[0] = opcode;
    sqe.cdw[1] = nsid;
    sqe.cdw[2] = cdw2;
    sqe.cdw[3] = cdw3;
    memcpy(&sqe.cdw[10], cdw10_15, 6 * sizeof(uint32_t));
    pthread_mutex_lock(&lock);
    now_ns += 1000;
    uint8_t cns = cdw10_15[0] & 0xff, csi = cdw10_15[1] >> 24;
    if (passthru_mdts && is_admin && opcode == KVSSD_ADM_IDENTIFY &&
        (cns == KVSSD_CNS_CSI_NS || cns == KVSSD_CNS_CSI_CTRL) && csi != 2) {
        pthread_mutex_unlock(&lock); /* refused by the target: the device never sees it */
        if (result) {
            *result = 0;
        }
        return KVSSD_SC_INVALID_OPCODE | KVSSD_SC_DNR;
    }
    if (is_admin) {
        struct kvssd_admin_req req = {.sqe = &sqe, .now_ns = now_ns};
        if (data_len) {
            req.dptr = (struct kvssd_dptr){&h, from_host, to_host};
        }
        kvssd_admin_execute(&admin, &req);
        status = req.status;
        dw0 = req.dw0;
        dw1 = req.dw1;
    } else {
        struct kvssd_req req = {.sqe = &sqe, .now_ns = now_ns};
        if (data_len) {
            req.dptr = (struct kvssd_dptr){&h, from_host, to_host};
        }
        kvssd_kv_execute(ns, &req);
        status = req.status;
        dw0 = req.dw0;
        dw1 = req.dw1;
        counts.opcode[opcode]++;
    }
    pthread_mutex_unlock(&lock);
    if (result) {
        *result = (uint64_t)dw1 << 32 | dw0;
    }
    return status;
}

/* ---- libnvme ----------------------------------------------------------------- */

int nvme_io_passthru64(int fd, __u8 opcode, __u8 flags, __u16 rsvd, __u32 nsid, __u32 cdw2,
                       __u32 cdw3, __u32 cdw10, __u32 cdw11, __u32 cdw12, __u32 cdw13, __u32 cdw14,
                       __u32 cdw15, __u32 data_len, void *data, __u32 metadata_len, void *metadata,
                       __u32 timeout_ms, __u64 *result)
{
    const uint32_t d[6] = {cdw10, cdw11, cdw12, cdw13, cdw14, cdw15};
    (void)fd, (void)flags, (void)rsvd, (void)metadata_len, (void)metadata, (void)timeout_ms;
    pthread_mutex_lock(&lock);
    counts.io_ioctls++;
    pthread_mutex_unlock(&lock);
    if (past_passthru_mdts(data_len)) {
        return -1;
    }
    uint64_t r = 0;
    uint16_t st = execute(false, opcode, nsid, cdw2, cdw3, d, data, data_len, &r);
    if (result) {
        *result = r;
    }
    return st; /* the ioctl's return value: the NVMe status, 0 on success */
}

int nvme_admin_passthru64(int fd, __u8 opcode, __u8 flags, __u16 rsvd, __u32 nsid, __u32 cdw2,
                          __u32 cdw3, __u32 cdw10, __u32 cdw11, __u32 cdw12, __u32 cdw13,
                          __u32 cdw14, __u32 cdw15, __u32 data_len, void *data, __u32 metadata_len,
                          void *metadata, __u32 timeout_ms, __u64 *result)
{
    const uint32_t d[6] = {cdw10, cdw11, cdw12, cdw13, cdw14, cdw15};
    (void)fd, (void)flags, (void)rsvd, (void)metadata_len, (void)metadata, (void)timeout_ms;
    pthread_mutex_lock(&lock);
    counts.admin_ioctls++;
    pthread_mutex_unlock(&lock);
    if (past_passthru_mdts(data_len)) {
        return -1;
    }
    uint64_t r = 0;
    uint16_t st = execute(true, opcode, nsid, cdw2, cdw3, d, data, data_len, &r);
    if (result) {
        *result = r;
    }
    return st;
}

/* ---- ioctl: the namespace ID of LOOPDEV_PATH ------------------------------------------ */

static int is_loopdev(int fd)
{
    struct stat st, want;
    return fstat(fd, &st) == 0 && stat(LOOPDEV_PATH, &want) == 0 && S_ISCHR(st.st_mode) &&
           st.st_rdev == want.st_rdev;
}

int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (request == NVME_IOCTL_ID && is_loopdev(fd)) {
        return 1;
    }
    return (int)syscall(SYS_ioctl, fd, request, arg);
}

/* ---- liburing: a ring in process memory --------------------------------------------- */

struct fake_ring {
    unsigned sq_head, sq_tail, sq_mask, sq_entries, sq_flags, sq_dropped;
    unsigned cq_head, cq_tail, cq_mask, cq_entries, cq_flags, cq_overflow;
    unsigned *sq_array;
};

int io_uring_queue_init(unsigned entries, struct io_uring *ring, unsigned flags)
{
    unsigned n = 1;
    if (entries == 0 || entries > 4096 || !(flags & IORING_SETUP_SQE128) ||
        !(flags & IORING_SETUP_CQE32)) {
        return -EINVAL; /* libkvssd asks for SQE128 | CQE32, 1..256 entries */
    }
    while (n < entries) {
        n <<= 1;
    }
    struct fake_ring *f = calloc(1, sizeof(*f));
    void *sqes = calloc(2 * n, sizeof(struct io_uring_sqe));
    void *cqes = calloc(2 * 2 * n, sizeof(struct io_uring_cqe)); /* 2n CQEs of 32 bytes */
    unsigned *array = calloc(n, sizeof(unsigned));
    if (!f || !sqes || !cqes || !array) {
        free(f), free(sqes), free(cqes), free(array);
        return -ENOMEM;
    }
    memset(ring, 0, sizeof(*ring));
    f->sq_mask = n - 1;
    f->sq_entries = n;
    f->cq_mask = 2 * n - 1;
    f->cq_entries = 2 * n;
    f->sq_array = array;
    ring->sq.khead = &f->sq_head;
    ring->sq.ktail = &f->sq_tail;
    ring->sq.kring_mask = &f->sq_mask;
    ring->sq.kring_entries = &f->sq_entries;
    ring->sq.kflags = &f->sq_flags;
    ring->sq.kdropped = &f->sq_dropped;
    ring->sq.array = array;
    ring->sq.sqes = sqes;
    ring->sq.ring_ptr = f;
    ring->sq.ring_mask = n - 1;
    ring->sq.ring_entries = n;
    ring->cq.khead = &f->cq_head;
    ring->cq.ktail = &f->cq_tail;
    ring->cq.kring_mask = &f->cq_mask;
    ring->cq.kring_entries = &f->cq_entries;
    ring->cq.kflags = &f->cq_flags;
    ring->cq.koverflow = &f->cq_overflow;
    ring->cq.cqes = cqes;
    ring->cq.ring_mask = 2 * n - 1;
    ring->cq.ring_entries = 2 * n;
    ring->flags = flags;
    ring->ring_fd = -1;
    ring->enter_ring_fd = -1;
    ring->features = IORING_FEAT_EXT_ARG; /* no timeout CQEs to skip */
    return 0;
}

void io_uring_queue_exit(struct io_uring *ring)
{
    struct fake_ring *f = ring->sq.ring_ptr;
    free(ring->sq.sqes);
    free(ring->cq.cqes);
    if (f) {
        free(f->sq_array);
        free(f);
    }
    memset(ring, 0, sizeof(*ring));
}

/* Run every SQE prepared since the last submit, in order, and post its CQE. */
int io_uring_submit(struct io_uring *ring)
{
    struct fake_ring *f = ring->sq.ring_ptr;
    int done = 0;

    while (ring->sq.sqe_head != ring->sq.sqe_tail) {
        struct io_uring_sqe *sqe = &ring->sq.sqes[(ring->sq.sqe_head & ring->sq.ring_mask) << 1];
        struct io_uring_cqe *cqe = &ring->cq.cqes[(f->cq_tail & ring->cq.ring_mask) << 1];
        if (f->cq_tail - f->cq_head >= ring->cq.ring_entries) {
            return done ? done : -EBUSY; /* a full CQ ring: libkvssd never lets it happen */
        }
        ring->sq.sqe_head++;
        memset(cqe, 0, 2 * sizeof(*cqe));
        cqe->user_data = sqe->user_data;
        if (sqe->opcode != IORING_OP_URING_CMD || sqe->cmd_op != NVME_URING_CMD_IO) {
            cqe->res = -EOPNOTSUPP;
        } else {
            const struct nvme_uring_cmd *uc = (const void *)sqe->cmd;
            const uint32_t d[6] = {uc->cdw10, uc->cdw11, uc->cdw12,
                                   uc->cdw13, uc->cdw14, uc->cdw15};
            uint64_t r = 0;
            pthread_mutex_lock(&lock);
            counts.uring_cmds++;
            pthread_mutex_unlock(&lock);
            cqe->res = past_passthru_mdts(uc->data_len)
                           ? -EINVAL
                           : execute(false, uc->opcode, uc->nsid, uc->cdw2, uc->cdw3, d,
                                     (void *)(uintptr_t)uc->addr, uc->data_len, &r);
            cqe->big_cqe[0] = r;
        }
        __atomic_store_n(&f->cq_tail, f->cq_tail + 1, __ATOMIC_RELEASE);
        /* the kernel's side of the SQ ring: the slot is consumed, io_uring_get_sqe may reuse it */
        __atomic_store_n(&f->sq_head, ring->sq.sqe_head, __ATOMIC_RELEASE);
        done++;
    }
    return done;
}

/* Waiting: every CQE is posted by io_uring_submit, so there is only what is there. */
int __io_uring_get_cqe(struct io_uring *ring, struct io_uring_cqe **cqe_ptr, unsigned submit,
                       unsigned wait_nr, sigset_t *sigmask)
{
    struct fake_ring *f = ring->sq.ring_ptr;
    (void)sigmask, (void)wait_nr;
    if (submit) {
        io_uring_submit(ring);
    }
    if (f->cq_tail == f->cq_head) {
        *cqe_ptr = NULL;
        return -EAGAIN; /* nothing in flight: waiting would never end */
    }
    *cqe_ptr = &ring->cq.cqes[(f->cq_head & ring->cq.ring_mask) << 1];
    return 0;
}
