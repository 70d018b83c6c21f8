/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Statistics: counters and simulated-latency histograms. */
#include "stats.h"

#include <string.h>

#include "ftl.h"
#include "kv_index.h"
#include "nand.h"
#include "page_map.h"
#include "space.h"
#include "value_log.h"

unsigned hist_bucket(uint64_t ns)
{
    if (ns < 64) {
        return (unsigned)ns;
    }
    unsigned msb = 63u - (unsigned)__builtin_clzll(ns);
    unsigned sub = (unsigned)(ns >> (msb - 5)) & 31u;
    return 64u + (msb - 6u) * 32u + sub;
}

uint64_t hist_bucket_upper(unsigned b)
{
    if (b < 64) {
        return b;
    }
    unsigned msb = (b - 64) / 32 + 6, sub = (b - 64) % 32;
    uint64_t lower = (uint64_t)(32 + sub) << (msb - 5);
    return lower + ((uint64_t)1 << (msb - 5)) - 1;
}

uint64_t hist_percentile(const struct latency_hist *h, uint32_t per_mille_x10)
{
    if (!h->count) {
        return 0;
    }
    /* smallest value v with at least ceil(count * p) samples <= v */
    uint64_t want = (h->count * per_mille_x10 + 9999) / 10000;
    if (want == 0) {
        want = 1;
    }
    uint64_t seen = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= want) {
            return h->bucket_max[b];
        }
    }
    return h->max_ns;
}

void stats_record_op(struct kvftl *ftl, enum kvftl_op op, uint64_t arrival_ns, uint64_t done_ns)
{
    hist_record(&ftl->hist[op], done_ns - arrival_ns);
    if (done_ns > ftl->now_max_ns) {
        ftl->now_max_ns = done_ns;
    }
}

void kvftl_stats_get(struct kvftl *ftl, struct kvftl_stats *st)
{
    *st = ftl->st;
    st->nand_pages_read = ftl->nand.pages_read - ftl->base_pages_read;
    st->nand_pages_programmed = ftl->nand.pages_programmed - ftl->base_pages_programmed;
    st->nand_blocks_erased = ftl->nand.blocks_erased - ftl->base_blocks_erased;
    st->nand_data_pages_programmed = ftl->space.data.pages_programmed - ftl->base_data_pages;
    st->memcpy_bytes = ftl->vl.memcpy_bytes - ftl->base_memcpy;
    st->padding_bytes = ftl->vl.pk.padding_bytes - ftl->base_padding;
    st->dlt_backfills = ftl->vl.pk.dlt_backfills - ftl->base_backfills;
    struct kv_index_counters ic;
    kv_index_counters(&ftl->index, &ic);
    st->index_cache_hits = ic.cache_hits - ftl->base_hits;
    st->index_cache_misses = ic.cache_misses - ftl->base_misses;
    st->index_pages_evicted_dirty = ic.pages_evicted_dirty - ftl->base_evicted;
    st->live_keys = ftl->vl.live.keys;
    st->live_user_bytes = ftl->vl.live.user_bytes;
    st->live_nand_bytes = ftl->vl.live.nand_bytes;
    st->index_nand_bytes = kv_index_nand_bytes(&ftl->index);
    st->capacity_bytes = ftl->capacity_bytes;
    st->index_host_bytes = kv_index_host_bytes(&ftl->index);
    st->free_stripes = ftl->space.free_stripes;
    st->total_stripes = ftl->nand.geo.stripes;
    st->write_amplification = st->user_bytes_written
                                  ? (double)st->nand_pages_programmed * ftl->nand.geo.page_size /
                                        (double)st->user_bytes_written
                                  : 0.0;
    st->space_amplification = ftl->vl.live.user_bytes ? (double)ftl->vl.live.nand_bytes /
                                                            (double)ftl->vl.live.user_bytes
                                                      : 0.0;
    if (ftl->nvm) {
        /* the nvm personality's meaning of the fields (docs/kvftl.md, "The nvm personality") */
        const struct page_map *pm = &ftl->pmap;
        st->memcpy_bytes = ftl->blk_memcpy_bytes - ftl->base_memcpy;
        st->padding_bytes = ftl->blk_padding_bytes - ftl->base_padding;
        st->dlt_backfills = 0;
        st->index_cache_hits = pm->hits - ftl->base_hits;
        st->index_cache_misses = pm->misses - ftl->base_misses;
        st->index_pages_evicted_dirty = pm->evicted_dirty - ftl->base_evicted;
        st->live_keys = page_map_live_units(pm);
        st->live_user_bytes = st->live_keys * PAGE_MAP_UNIT_BYTES;
        st->live_nand_bytes = pm->mapped * PAGE_MAP_UNIT_BYTES;
        st->index_nand_bytes = pm->nand_bytes;
        st->capacity_bytes = ftl->blk_lbas * ftl->cfg.lba_bytes;
        st->index_host_bytes = page_map_host_bytes(pm);
        st->space_amplification = pm->mapped ? 1.0 : 0.0;
    }
    st->sim_now_ns = ftl->now_max_ns;
    st->fw_cpu_ns = ftl->vl.cpu_work_ns - ftl->base_cpu_work_ns;
    for (int op = 0; op < KVFTL_OP__COUNT; op++) {
        const struct latency_hist *h = &ftl->hist[op];
        st->latency[op].count = h->count;
        st->latency[op].p50_ns = hist_percentile(h, 5000);
        st->latency[op].p99_ns = hist_percentile(h, 9900);
        st->latency[op].p999_ns = hist_percentile(h, 9990);
        st->latency[op].max_ns = h->max_ns;
        st->latency[op].sum_ns = h->sum_ns;
    }
}

void kvftl_stats_reset(struct kvftl *ftl)
{
    /* SMART reports media errors over the device's life: a statistics reset keeps them */
    uint64_t media_errors = ftl->st.media_errors;
    memset(&ftl->st, 0, sizeof(ftl->st));
    ftl->st.media_errors = media_errors;
    memset(ftl->hist, 0, sizeof(ftl->hist));
    ftl->base_pages_read = ftl->nand.pages_read;
    ftl->base_pages_programmed = ftl->nand.pages_programmed;
    ftl->base_blocks_erased = ftl->nand.blocks_erased;
    ftl->base_data_pages = ftl->space.data.pages_programmed;
    ftl->base_memcpy = ftl->vl.memcpy_bytes;
    ftl->base_padding = ftl->vl.pk.padding_bytes;
    ftl->base_backfills = ftl->vl.pk.dlt_backfills;
    struct kv_index_counters ic;
    kv_index_counters(&ftl->index, &ic);
    ftl->base_hits = ic.cache_hits;
    ftl->base_misses = ic.cache_misses;
    ftl->base_evicted = ic.pages_evicted_dirty;
    ftl->base_cpu_work_ns = ftl->vl.cpu_work_ns;
    if (ftl->nvm) {
        ftl->base_memcpy = ftl->blk_memcpy_bytes;
        ftl->base_padding = ftl->blk_padding_bytes;
        ftl->base_hits = ftl->pmap.hits;
        ftl->base_misses = ftl->pmap.misses;
        ftl->base_evicted = ftl->pmap.evicted_dirty;
    }
}
