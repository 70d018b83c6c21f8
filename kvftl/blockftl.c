/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nvm personality (include/kvftl/block.h): not built yet. Every call
 * refuses; kvftl_open() refuses command_set = nvm.
 */
#include <kvftl/block.h>

#include <string.h>

static void refuse_call(uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    memset(cpl, 0, sizeof(*cpl));
    cpl->status = KVFTL_INVALID_FIELD;
    cpl->done_ns = arrival_ns;
}

uint64_t kvftl_block_lbas(const struct kvftl *ftl)
{
    (void)ftl;
    return 0;
}

void kvftl_block_read(struct kvftl *ftl, uint64_t slba, uint32_t nlb, void *buf,
                      uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    (void)ftl, (void)slba, (void)nlb, (void)buf;
    refuse_call(arrival_ns, cpl);
}

void kvftl_block_write(struct kvftl *ftl, uint64_t slba, uint32_t nlb, const void *buf, bool fua,
                       uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    (void)ftl, (void)slba, (void)nlb, (void)buf, (void)fua;
    refuse_call(arrival_ns, cpl);
}

void kvftl_block_write_zeroes(struct kvftl *ftl, uint64_t slba, uint32_t nlb,
                              uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    (void)ftl, (void)slba, (void)nlb;
    refuse_call(arrival_ns, cpl);
}

void kvftl_block_deallocate(struct kvftl *ftl, uint64_t slba, uint32_t nlb, uint64_t arrival_ns,
                            struct kvftl_cpl *cpl)
{
    (void)ftl, (void)slba, (void)nlb;
    refuse_call(arrival_ns, cpl);
}
