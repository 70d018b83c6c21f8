/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The statistics log page (LID C0h) as a table of named 64-bit counters, so
 * that the CLI and kvbench print every field under one name.
 */
#include <stddef.h>

#include <kvssd/libkvssd.h>

#define F(field) {#field, offsetof(struct kvssd_stats_log, field)}
#define X(field) {#field, offsetof(struct kvssd_stats_log, xfer.field)}
#define LAT(op, i)                                                                    \
    {"latency_" #op "_count", offsetof(struct kvssd_stats_log, latency[i][0])},       \
        {"latency_" #op "_p50_ns", offsetof(struct kvssd_stats_log, latency[i][1])},  \
        {"latency_" #op "_p99_ns", offsetof(struct kvssd_stats_log, latency[i][2])},  \
        {"latency_" #op "_p999_ns", offsetof(struct kvssd_stats_log, latency[i][3])}, \
        {"latency_" #op "_max_ns", offsetof(struct kvssd_stats_log, latency[i][4])},  \
    {                                                                                 \
        "latency_" #op "_sum_ns", offsetof(struct kvssd_stats_log, latency_sum_ns[i]) \
    }

static const struct kvssd_stats_field fields[] = {
    X(sqe_fetch_bytes),
    X(cqe_post_bytes),
    X(doorbell_bytes),
    X(mmio_other_bytes),
    X(prp_list_bytes),
    X(data_h2d_bytes),
    X(data_d2h_bytes),
    X(inline_bytes),
    X(commands),
    X(inline_commands),
    X(key_stage_commands),
    F(host_bytes_in_inline),
    F(host_bytes_in_dma),
    F(host_bytes_out),
    F(user_bytes_written),
    F(stores),
    F(retrieves),
    F(deletes),
    F(exists),
    F(iterates),
    F(nand_pages_read),
    F(nand_pages_programmed),
    F(nand_data_pages_programmed),
    F(nand_blocks_erased),
    F(memcpy_bytes),
    F(padding_bytes),
    F(dlt_backfills),
    F(live_keys),
    F(live_user_bytes),
    F(live_nand_bytes),
    F(index_cache_hits),
    F(index_cache_misses),
    F(index_pages_evicted_dirty),
    F(bloom_negatives),
    F(index_host_bytes),
    F(gc_runs),
    F(gc_relocated_bytes),
    F(gc_foreground_stalls),
    F(gc_stall_ns),
    F(free_stripes),
    F(total_stripes),
    F(waf_milli),
    F(space_amp_milli),
    F(sim_now_ns),
    LAT(store, 0),
    LAT(retrieve, 1),
    LAT(delete, 2),
    LAT(exist, 3),
    LAT(iterate, 4),
    F(capacity_bytes),
    F(index_nand_bytes),
    F(fw_cpu_ns),
    {"fw_store_ns", offsetof(struct kvssd_stats_log, fw_op_ns[0])},
    {"fw_retrieve_ns", offsetof(struct kvssd_stats_log, fw_op_ns[1])},
    {"fw_delete_ns", offsetof(struct kvssd_stats_log, fw_op_ns[2])},
    {"fw_exist_ns", offsetof(struct kvssd_stats_log, fw_op_ns[3])},
    {"fw_iterate_ns", offsetof(struct kvssd_stats_log, fw_op_ns[4])},
};

const struct kvssd_stats_field *kvssd_stats_fields(size_t *count)
{
    *count = sizeof(fields) / sizeof(fields[0]);
    return fields;
}

uint64_t kvssd_stats_get(const struct kvssd_stats_log *log, const struct kvssd_stats_field *f)
{
    uint64_t v;
    const unsigned char *p = (const unsigned char *)log + f->offset;
    __builtin_memcpy(&v, p, sizeof(v)); /* the log is packed */
    return v;
}
