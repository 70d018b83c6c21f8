/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench results: a log-linear latency histogram, the human table and the
 * --json object (fields documented in docs/host.md).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kvbench.h"

static unsigned hist_index(uint64_t ns)
{
    if (ns < KB_HIST_SUB) {
        return (unsigned)ns; /* exact below 64 ns */
    }
    unsigned e = 63 - (unsigned)__builtin_clzll(ns); /* 2^e <= ns < 2^(e+1), e >= 6 */
    unsigned sub = (unsigned)((ns >> (e - 6)) & (KB_HIST_SUB - 1));
    return (e - 5) * KB_HIST_SUB + sub;
}

/* The middle of a bucket's range, in ns. */
static uint64_t hist_value(unsigned idx)
{
    if (idx < KB_HIST_SUB) {
        return idx;
    }
    unsigned e = idx / KB_HIST_SUB + 5, sub = idx % KB_HIST_SUB;
    uint64_t lo = (1ull << e) + ((uint64_t)sub << (e - 6));
    return lo + (1ull << (e - 6)) / 2;
}

void kb_hist_add(struct kb_hist *h, uint64_t ns)
{
    unsigned i = hist_index(ns);
    if (i >= KB_HIST_BUCKETS) {
        i = KB_HIST_BUCKETS - 1;
    }
    h->b[i]++;
    h->count++;
    h->sum_ns += ns;
    if (ns > h->max_ns) {
        h->max_ns = ns;
    }
}

void kb_hist_merge(struct kb_hist *into, const struct kb_hist *from)
{
    for (unsigned i = 0; i < KB_HIST_BUCKETS; i++) {
        into->b[i] += from->b[i];
    }
    into->count += from->count;
    into->sum_ns += from->sum_ns;
    if (from->max_ns > into->max_ns) {
        into->max_ns = from->max_ns;
    }
}

uint64_t kb_hist_percentile(const struct kb_hist *h, double p)
{
    if (!h->count) {
        return 0;
    }
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
    if (rank < 1) {
        rank = 1;
    }
    if (rank >= h->count) {
        return h->max_ns; /* the top rank is the exact maximum */
    }
    uint64_t seen = 0;
    for (unsigned i = 0; i < KB_HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t v = hist_value(i);
            return v > h->max_ns ? h->max_ns : v;
        }
    }
    return h->max_ns;
}

uint64_t kb_pcie_bytes(const struct kvssd_stats_log *b, const struct kvssd_stats_log *a)
{
    return (a->xfer.sqe_fetch_bytes - b->xfer.sqe_fetch_bytes) +
           (a->xfer.cqe_post_bytes - b->xfer.cqe_post_bytes) +
           (a->xfer.doorbell_bytes - b->xfer.doorbell_bytes) +
           (a->xfer.mmio_other_bytes - b->xfer.mmio_other_bytes) +
           (a->xfer.prp_list_bytes - b->xfer.prp_list_bytes) +
           (a->xfer.data_h2d_bytes - b->xfer.data_h2d_bytes) +
           (a->xfer.data_d2h_bytes - b->xfer.data_d2h_bytes);
}

#define D(field) ((unsigned long long)(r->after.field - r->before.field))

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

void kb_report_table(const struct kb_config *c, const struct kb_result *r)
{
    const struct kb_hist *h = &r->hist;
    double ops_s = ratio((double)r->ops, r->elapsed_s);
    printf("== %s: %llu ops in %.3f s = %.0f ops/s\n", r->phase, (unsigned long long)r->ops,
           r->elapsed_s, ops_s);
    printf("   ops      ");
    for (int i = 0; i < KB_OP_COUNT; i++) {
        if (r->op_count[i]) {
            printf(" %s=%llu", kb_op_names[i], (unsigned long long)r->op_count[i]);
        }
    }
    printf("\n");
    printf("   latency   p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f  mean %.1f us\n",
           kb_hist_percentile(h, 50) / 1e3, kb_hist_percentile(h, 90) / 1e3,
           kb_hist_percentile(h, 99) / 1e3, kb_hist_percentile(h, 99.9) / 1e3, h->max_ns / 1e3,
           ratio((double)h->sum_ns, (double)h->count) / 1e3);
    printf("   commands  %.3f per op   errors %llu   not found %llu   mismatches %llu\n",
           ratio((double)r->commands, (double)r->ops), (unsigned long long)r->errors,
           (unsigned long long)r->not_found, (unsigned long long)r->mismatches);
    if (!r->have_device) {
        printf("   device    statistics log not available\n");
        return;
    }
    uint64_t pcie = kb_pcie_bytes(&r->before, &r->after);
    double sim_s = (double)D(sim_now_ns) / 1e9;
    printf("   h2d bytes sqe %llu  doorbell %llu  prp-list %llu  data %llu  (inline value "
           "bytes %llu)\n",
           D(xfer.sqe_fetch_bytes), D(xfer.doorbell_bytes), D(xfer.prp_list_bytes),
           D(xfer.data_h2d_bytes), D(xfer.inline_bytes));
    printf("   d2h bytes cqe %llu  data %llu   pcie total %llu   taf %.3f\n",
           D(xfer.cqe_post_bytes), D(xfer.data_d2h_bytes), (unsigned long long)pcie,
           ratio((double)pcie, (double)r->user_bytes));
    printf("   nand      pages programmed %llu  read %llu  blocks erased %llu   waf %.3f  "
           "space amp %.3f\n",
           D(nand_pages_programmed), D(nand_pages_read), D(nand_blocks_erased),
           r->after.waf_milli / 1e3, r->after.space_amp_milli / 1e3);
    printf("   simulated %.3f s device time = %.0f ops/s; store p50 %.1f p99 %.1f us; "
           "retrieve p50 %.1f p99 %.1f us\n",
           sim_s, ratio((double)r->ops, sim_s), r->after.latency[0][1] / 1e3,
           r->after.latency[0][2] / 1e3, r->after.latency[1][1] / 1e3,
           r->after.latency[1][2] / 1e3);
}

/* The "device" object: statistics log deltas over one phase (null without the log). */
static void json_device(const struct kb_result *r)
{
    if (!r->have_device) {
        printf("null");
        return;
    }
    uint64_t pcie = kb_pcie_bytes(&r->before, &r->after);
    double sim_s = (double)D(sim_now_ns) / 1e9;
    printf("{\"h2d_bytes\":{\"sqe\":%llu,\"doorbell\":%llu,\"mmio_other\":%llu,"
           "\"prp_list\":%llu,\"data\":%llu,\"inline_value\":%llu},",
           D(xfer.sqe_fetch_bytes), D(xfer.doorbell_bytes), D(xfer.mmio_other_bytes),
           D(xfer.prp_list_bytes), D(xfer.data_h2d_bytes), D(xfer.inline_bytes));
    printf("\"d2h_bytes\":{\"cqe\":%llu,\"data\":%llu},\"pcie_bytes\":%llu,",
           D(xfer.cqe_post_bytes), D(xfer.data_d2h_bytes), (unsigned long long)pcie);
    printf("\"commands\":%llu,\"inline_commands\":%llu,\"key_stage_commands\":%llu,",
           D(xfer.commands), D(xfer.inline_commands), D(xfer.key_stage_commands));
    printf("\"nand_pages_programmed\":%llu,\"nand_data_pages_programmed\":%llu,"
           "\"nand_pages_read\":%llu,\"nand_blocks_erased\":%llu,\"gc_runs\":%llu,",
           D(nand_pages_programmed), D(nand_data_pages_programmed), D(nand_pages_read),
           D(nand_blocks_erased), D(gc_runs));
    printf("\"waf\":%.3f,\"space_amp\":%.3f,\"taf\":%.4f,", r->after.waf_milli / 1e3,
           r->after.space_amp_milli / 1e3, ratio((double)pcie, (double)r->user_bytes));
    printf("\"sim_time_s\":%.6f,\"sim_ops_per_s\":%.1f,\"sim_latency_us\":{", sim_s,
           ratio((double)r->ops, sim_s));
    static const char *const ops[5] = {"store", "retrieve", "delete", "exist", "iterate"};
    for (int i = 0; i < 5; i++) {
        /* the mean over this phase alone: deltas of the sum and the count */
        uint64_t n = r->after.latency[i][0] - r->before.latency[i][0];
        uint64_t sum = r->after.latency_sum_ns[i] - r->before.latency_sum_ns[i];
        printf("%s\"%s\":{\"count\":%llu,\"mean\":%.3f,\"p50\":%.3f,\"p99\":%.3f,"
               "\"p999\":%.3f,\"max\":%.3f}",
               i ? "," : "", ops[i], (unsigned long long)r->after.latency[i][0],
               n ? (double)sum / (double)n / 1e3 : 0.0, r->after.latency[i][1] / 1e3,
               r->after.latency[i][2] / 1e3, r->after.latency[i][3] / 1e3,
               r->after.latency[i][4] / 1e3);
    }
    printf("}}");
}

static void json_phase(const struct kb_config *c, const struct kb_result *r)
{
    const struct kb_hist *h = &r->hist;
    printf("{\"phase\":\"%s\",\"ops\":%llu,\"elapsed_s\":%.6f,\"ops_per_s\":%.1f,", r->phase,
           (unsigned long long)r->ops, r->elapsed_s, ratio((double)r->ops, r->elapsed_s));
    printf("\"op_counts\":{");
    for (int i = 0; i < KB_OP_COUNT; i++) {
        printf("%s\"%s\":%llu", i ? "," : "", kb_op_names[i], (unsigned long long)r->op_count[i]);
    }
    printf("},\"latency_us\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,"
           "\"max\":%.3f,\"mean\":%.3f},",
           kb_hist_percentile(h, 50) / 1e3, kb_hist_percentile(h, 90) / 1e3,
           kb_hist_percentile(h, 99) / 1e3, kb_hist_percentile(h, 99.9) / 1e3, h->max_ns / 1e3,
           ratio((double)h->sum_ns, (double)h->count) / 1e3);
    printf("\"commands\":%llu,\"commands_per_op\":%.4f,\"errors\":%llu,\"not_found\":%llu,"
           "\"mismatches\":%llu,\"user_bytes\":%llu,",
           (unsigned long long)r->commands, ratio((double)r->commands, (double)r->ops),
           (unsigned long long)r->errors, (unsigned long long)r->not_found,
           (unsigned long long)r->mismatches, (unsigned long long)r->user_bytes);
    printf("\"device\":");
    json_device(r);
    printf("}");
}

void kb_report_json(const struct kb_config *c, const struct kb_result *res, int n)
{
    char ks[256], vs[256];
    kb_size_format(&c->key_size, ks, sizeof(ks));
    kb_size_format(&c->value_size, vs, sizeof(vs));
    printf("{\"preset\":\"%s\",\"device_path\":\"%s\",\"seed\":%llu,\"threads\":%u,"
           "\"queue_depth\":%u,\"engine\":\"%s\",\"transfer_mode\":\"%s\",\"key_count\":%llu,"
           "\"key_size\":\"%s\",\"value_size\":\"%s\",",
           c->preset, c->device, (unsigned long long)c->seed, c->threads, c->queue_depth,
           c->engine == KB_ENGINE_ASYNC ? "async" : "sync", kvssd_xfer_mode_name(c->mode),
           (unsigned long long)c->key_count, ks, vs);
    /* the headline numbers are the last phase's (the run phase when there is one) */
    const struct kb_result *last = n ? &res[n - 1] : NULL;
    if (last) {
        printf("\"ops_per_s\":%.1f,\"latency_us\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,"
               "\"p999\":%.3f,\"max\":%.3f},\"commands_per_op\":%.4f,\"mismatches\":%llu,",
               ratio((double)last->ops, last->elapsed_s), kb_hist_percentile(&last->hist, 50) / 1e3,
               kb_hist_percentile(&last->hist, 90) / 1e3, kb_hist_percentile(&last->hist, 99) / 1e3,
               kb_hist_percentile(&last->hist, 99.9) / 1e3, last->hist.max_ns / 1e3,
               ratio((double)last->commands, (double)last->ops),
               (unsigned long long)last->mismatches);
    }
    printf("\"phases\":[");
    for (int i = 0; i < n; i++) {
        if (i) {
            printf(",");
        }
        json_phase(c, &res[i]);
    }
    printf("]");
    if (last) {
        /* the headline "device" object is the last phase's deltas */
        printf(",\"device_phase\":\"%s\",\"device\":", last->phase);
        json_device(last);
    }
    printf("}\n");
}
