/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Firmware time: the controller CPU's work per command (fw_time.h). */
#include "fw_time.h"

#include "ftl.h"
#include "kv_index.h"
#include "page_map.h"
#include "value_log.h"

/* Index pages searched (kv) or map entries looked up (nvm) so far, GC's included. */
static uint64_t probes_so_far(const struct kvftl *ftl)
{
    if (ftl->nvm) {
        return ftl->pmap.hits + ftl->pmap.misses;
    }
    struct kv_index_counters ic;
    kv_index_counters(&ftl->index, &ic);
    return ic.cache_hits + ic.cache_misses;
}

void fw_cmd_begin_work(struct kvftl *ftl, struct fw_cmd *c, uint32_t inline_xfers, uint64_t *now_ns)
{
    const struct kvftl_config *cfg = &ftl->cfg;
    c->probes = probes_so_far(ftl);
    *now_ns = vlog_cpu_run(&ftl->vl, *now_ns,
                           cfg->fw_fetch_decode_ns + inline_xfers * cfg->fw_inline_fragment_ns);
}

void fw_cmd_end_work(struct kvftl *ftl, const struct fw_cmd *c, uint64_t dma_units,
                     uint64_t *now_ns)
{
    const struct kvftl_config *cfg = &ftl->cfg;
    uint64_t seen = probes_so_far(ftl);
    uint64_t probes = seen >= c->probes ? seen - c->probes : 0; /* an open (Format) starts anew */
    *now_ns = vlog_cpu_run(&ftl->vl, *now_ns,
                           probes * cfg->fw_index_probe_ns + dma_units * cfg->fw_dma_setup_ns +
                               cfg->fw_completion_ns);
}
