/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Firmware time: the controller CPU's work per command (docs/kvftl.md,
 * "Firmware time"). A command holds the one CPU (value_log.h's
 * vlog_cpu_run()) twice: at its start to fetch and decode it (and, for an
 * inline Store, to handle each of its transfer commands), and at its end
 * to search the index pages or map entries it touched, set up its
 * page-unit DMAs and post its completion. Its media work and memcpys lie
 * between. A command that finds the CPU busy waits: firmware time shows in
 * throughput as well as latency.
 */
#ifndef KVFTL_FW_TIME_H
#define KVFTL_FW_TIME_H

#include <stdint.h>

#include <kvftl/kvftl.h>

#include "ftl.h"
#include "stats.h"

/* What fw_cmd_end() needs of its fw_cmd_begin(). */
struct fw_cmd {
    uint64_t probes;  /* index page or map accesses counted at the start */
    uint64_t work_ns; /* the CPU's busy time counted at the start */
};

void fw_cmd_begin_work(struct kvftl *ftl, struct fw_cmd *c, uint32_t inline_xfers,
                       uint64_t *now_ns);
void fw_cmd_end_work(struct kvftl *ftl, const struct fw_cmd *c, uint64_t dma_units,
                     uint64_t *now_ns);

/*
 * fw_cmd_begin() - a command arrives at *@now_ns: fetch and decode it and
 * handle its @inline_xfers inline transfer commands; *@now_ns becomes the
 * time that work ends. (Inline, and nothing but a snapshot when every
 * firmware-time tunable is 0: the host cost of the default preset.)
 */
static inline void fw_cmd_begin(struct kvftl *ftl, struct fw_cmd *c, uint32_t inline_xfers,
                                uint64_t *now_ns)
{
    c->work_ns = ftl->vl.cpu_work_ns;
    if (ftl->fw_on) {
        fw_cmd_begin_work(ftl, c, inline_xfers, now_ns);
    }
}

/*
 * fw_cmd_end() - the command's media work ended at *@now_ns: charge the
 * index probes since fw_cmd_begin(), @dma_units page-unit DMA setups and
 * the completion; *@now_ns becomes the completion time. The CPU time from
 * begin to end (memcpys included) is added to the firmware-time counters,
 * under @op unless it is KVFTL_OP__COUNT (Flush, Format, refusals).
 */
static inline void fw_cmd_end(struct kvftl *ftl, const struct fw_cmd *c, uint64_t dma_units,
                              enum kvftl_op op, uint64_t *now_ns)
{
    if (ftl->fw_on) {
        fw_cmd_end_work(ftl, c, dma_units, now_ns);
    }
    if (op < KVFTL_OP__COUNT) {
        ftl->st.fw_op_ns[op] += ftl->vl.cpu_work_ns - c->work_ns;
    }
}

/*
 * fw_cmd_finish() - the end of a command of either personality: firmware
 * time (@dma_units page-unit DMAs) and the completion, at *@now on; its
 * latency from @arrival_ns counted under @op. A command during which the
 * device lost power fails with INTERNAL_ERROR.
 */
static inline void fw_cmd_finish(struct kvftl *ftl, enum kvftl_op op, uint64_t arrival_ns,
                                 uint64_t now, const struct fw_cmd *fc, uint64_t dma_units,
                                 struct kvftl_cpl *cpl)
{
    if (!ftl_powered(ftl)) {
        cpl->status = KVFTL_INTERNAL_ERROR;
    }
    fw_cmd_end(ftl, fc, dma_units, op, &now);
    cpl->done_ns = now;
    stats_record_op(ftl, op, arrival_ns, now);
}

/*
 * fw_cmd_refuse() - the end of a command refused with cpl->status after
 * fw_cmd_begin(), before any media work: its completion is posted at the
 * device's time from @now (firmware time: fetch, decode, any probes,
 * completion) but it counts as no operation.
 */
static inline void fw_cmd_refuse(struct kvftl *ftl, const struct fw_cmd *fc, uint64_t now,
                                 struct kvftl_cpl *cpl)
{
    fw_cmd_end(ftl, fc, 0, KVFTL_OP__COUNT, &now);
    cpl->done_ns = now; /* not the device's latest completion: a refusal changed nothing */
}

/* fw_dma_units() - page-unit (4 KiB) DMA transfers that move @bytes. */
static inline uint64_t fw_dma_units(uint64_t bytes)
{
    return (bytes + 4095) / 4096;
}

#endif
