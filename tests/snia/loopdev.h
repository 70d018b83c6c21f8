/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An in-process kvssd behind the operating-system boundary libkvssd uses,
 * so that the SNIA API library and the real libkvssd.so run natively
 * against the device's firmware (kvftl) and command sets (hw/kvssd kv.c,
 * inline.c, admin.c) without QEMU or an NVMe driver.
 *
 * The test executable defines the functions libkvssd.so imports at that
 * boundary, and the dynamic linker binds libkvssd's references to them
 * (an executable's definitions come first in symbol lookup):
 *   - nvme_io_passthru64 / nvme_admin_passthru64 (libnvme): the
 *     NVME_IOCTL_IO64_CMD / ADMIN64 ioctls of the synchronous path;
 *   - io_uring_queue_init / io_uring_queue_exit / io_uring_submit /
 *     __io_uring_get_cqe (liburing): a ring in process memory whose
 *     submit executes each IORING_OP_URING_CMD (NVME_URING_CMD_IO) and
 *     posts its 32-byte CQE, as the kernel does;
 *   - ioctl: NVME_IOCTL_ID on LOOPDEV_PATH answers namespace 1; every
 *     other ioctl goes to the kernel.
 * Everything above that boundary - libkvssd's command encoding, transfer
 * methods, long-key staging, tag retries, the async engine - is the code
 * a guest runs.
 */
#ifndef TESTS_SNIA_LOOPDEV_H
#define TESTS_SNIA_LOOPDEV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The URI the tests open: a character device every system has. */
#define LOOPDEV_PATH "/dev/null"

struct loopdev_counts {
    uint64_t io_ioctls;    /* I/O commands through nvme_io_passthru64 */
    uint64_t admin_ioctls; /* admin commands through nvme_admin_passthru64 */
    uint64_t uring_cmds;   /* I/O commands through the io_uring ring */
    uint64_t opcode[256];  /* I/O commands per opcode, both paths */
};

/* loopdev_start() - a fresh device (empty firmware); 0, or -1 with a sentence on stderr. */
int loopdev_start(void);
void loopdev_stop(void);
/* loopdev_counts() - a snapshot of the counters since loopdev_start(). */
struct loopdev_counts loopdev_counts(void);
/*
 * loopdev_passthru_target() - from now on, answer as Linux 6.12's nvmet
 * passthru target answers its NVMe/TCP initiator: Identify CNS 05h and 06h
 * of any CSI but ZNS (02h) complete 4001h, Invalid Opcode with DNR
 * (drivers/nvme/target/passthru.c:547-568); Identify Controller reports
 * MDTS @mdts (the target exports 7 behind nvme-pci, passthru.c:114-126);
 * a command with more data than 4 KiB << @mdts fails with EINVAL before
 * it is sent, as the initiator's blk_rq_map_user does. @mdts 0: a local
 * controller again (no MDTS). loopdev_start() starts as a local one.
 */
void loopdev_passthru_target(uint8_t mdts);

#ifdef __cplusplus
}
#endif

#endif
