/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench results: a log-linear latency histogram, the human table and the
 * --json object (fields documented in docs/host.md), the engines side by
 * side and their derived metrics (docs/kvbench.md).
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
    static const char *const kv_ops[5] = {"store", "retrieve", "delete", "exist", "iterate"};
    const char *const *ops = r->device_ops ? r->device_ops : kv_ops;
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

/* A number, or null when not available (NaN). */
static void json_num(const char *name, double v, bool comma)
{
    if (isnan(v) || isinf(v)) {
        printf("\"%s\":null%s", name, comma ? "," : "");
    } else {
        printf("\"%s\":%.6g%s", name, v, comma ? "," : "");
    }
}

static void json_engine_fields(const struct kb_result *r)
{
    struct kb_metrics m;
    kb_metrics(r, &m);
    if (r->engine) {
        printf("\"engine\":\"%s\",", r->engine);
    }
    printf("\"cpu_s\":%.6f,\"sync_s\":%.6f,\"written_bytes\":%llu,\"live_user_bytes\":%lld,"
           "\"footprint_bytes\":%lld,",
           r->cpu_s, r->sync_s, (unsigned long long)r->written_bytes, (long long)r->live_user_bytes,
           (long long)r->footprint_bytes);
    printf("\"latency_by_op_us\":{");
    bool first = true;
    for (int i = 0; i < KB_OP_COUNT; i++) {
        const struct kb_hist *h = &r->hist_op[i];
        if (!h->count) {
            continue;
        }
        printf("%s\"%s\":{\"count\":%llu,\"mean\":%.3f,\"p50\":%.3f,\"p90\":%.3f,"
               "\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f}",
               first ? "" : ",", kb_op_names[i], (unsigned long long)h->count,
               ratio((double)h->sum_ns, (double)h->count) / 1e3, kb_hist_percentile(h, 50) / 1e3,
               kb_hist_percentile(h, 90) / 1e3, kb_hist_percentile(h, 99) / 1e3,
               kb_hist_percentile(h, 99.9) / 1e3, h->max_ns / 1e3);
        first = false;
    }
    printf("},\"not_found_by_op\":{");
    for (int i = 0; i < KB_OP_COUNT; i++) {
        printf("%s\"%s\":%llu", i ? "," : "", kb_op_names[i],
               (unsigned long long)r->not_found_op[i]);
    }
    printf("},\"metrics\":{");
    json_num("ops_per_s_wall", m.ops_per_s_wall, true);
    json_num("ops_per_s_sim", m.ops_per_s_sim, true);
    json_num("sim_time_s", m.sim_s, true);
    json_num("device_busy_s", m.device_busy_s, true);
    json_num("ops_per_s_device_busy", m.ops_per_s_busy, true);
    json_num("cpu_us_per_op", m.cpu_us_per_op, true);
    json_num("h2d_bytes_per_op", m.h2d_bytes_per_op, true);
    json_num("pcie_bytes_per_op", m.pcie_bytes_per_op, true);
    json_num("nand_page_bytes", m.nand_page_bytes, true);
    json_num("nand_bytes_programmed", m.nand_bytes_programmed, true);
    json_num("waf", m.waf, true);
    json_num("device_waf", m.device_waf, true);
    json_num("space_amp_engine", m.space_amp_engine, true);
    json_num("space_amp_device", m.space_amp_device, false);
    printf("},");
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
    json_engine_fields(r);
    printf("\"device\":");
    json_device(r);
    printf("}");
}

/* The configuration and, for one engine, the headline numbers of its last phase. */
static void json_head(const struct kb_config *c, const struct kb_result *res, int n)
{
    char ks[256], vs[256];
    kb_size_format(&c->key_size, ks, sizeof(ks));
    kb_size_format(&c->value_size, vs, sizeof(vs));
    printf("{\"preset\":\"%s\",\"device_path\":\"%s\",\"seed\":%llu,\"threads\":%u,"
           "\"queue_depth\":%u,\"engine\":\"%s\",\"io\":\"%s\",\"transfer_mode\":\"%s\","
           "\"key_count\":%llu,\"key_size\":\"%s\",\"value_size\":\"%s\",",
           c->preset, c->device, (unsigned long long)c->seed, c->threads, c->queue_depth,
           c->engine == KB_ENGINE_ASYNC ? "async" : "sync",
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
}

void kb_report_json(const struct kb_config *c, const struct kb_result *res, int n)
{
    json_head(c, res, n);
    printf("}\n");
}

static const char *engine_target(const struct kb_config *c, const char *engine)
{
    if (!strcmp(engine, "rocksdb")) {
        return c->rocksdb.dir;
    }
    if (!strcmp(engine, "rawhash")) {
        return c->rawhash.dev;
    }
    return c->device;
}

void kb_report_json_engines(const struct kb_config *c, const struct kb_result *res, int nengines,
                            int nphases)
{
    /* one engine: its phases are also the top level's, as before engines existed */
    json_head(c, res, nengines == 1 ? nphases : 0);
    printf(",\"rocksdb\":{\"dir\":\"%s\",\"wal\":%s,\"sync\":%s,\"direct_io\":%s,"
           "\"block_cache_bytes\":%llu,\"write_buffer_bytes\":%llu,\"compression\":\"%s\"}",
           c->rocksdb.dir, c->rocksdb.wal ? "true" : "false", c->rocksdb.sync ? "true" : "false",
           c->rocksdb.direct_io ? "true" : "false",
           (unsigned long long)c->rocksdb.block_cache_bytes,
           (unsigned long long)c->rocksdb.write_buffer_bytes,
           kb_compression_name(c->rocksdb.compression));
    printf(",\"rawhash\":{\"device\":\"%s\",\"write_block_bytes\":%u,\"defrag_lwm_pct\":%u,"
           "\"commit_to_device\":%s,\"trim\":%s}",
           c->rawhash.dev, c->rawhash.write_block_bytes, c->rawhash.defrag_lwm_pct,
           c->rawhash.commit_to_device ? "true" : "false", c->rawhash.trim ? "true" : "false");
    printf(",\"engines\":[");
    for (int e = 0; e < nengines; e++) {
        const struct kb_result *r = &res[e * nphases];
        const char *name = r->engine ? r->engine : "kvssd";
        printf("%s{\"engine\":\"%s\",\"target\":\"%s\",\"phases\":[", e ? "," : "", name,
               engine_target(c, name));
        for (int p = 0; p < nphases; p++) {
            if (p) {
                printf(",");
            }
            json_phase(c, &r[p]);
        }
        printf("]}");
    }
    printf("]}\n");
}

void kb_metrics(const struct kb_result *r, struct kb_metrics *m)
{
    double ops = (double)r->ops;
    m->ops_per_s_wall = r->elapsed_s > 0 ? ops / r->elapsed_s : NAN;
    m->cpu_us_per_op = ops > 0 ? r->cpu_s * 1e6 / ops : NAN;
    m->sim_s = m->ops_per_s_sim = m->h2d_bytes_per_op = m->pcie_bytes_per_op = NAN;
    m->device_busy_s = m->ops_per_s_busy = NAN;
    m->nand_page_bytes = m->nand_bytes_programmed = m->waf = m->device_waf = NAN;
    m->space_amp_device = NAN;
    m->space_amp_engine = r->footprint_bytes >= 0 && r->live_user_bytes > 0
                              ? (double)r->footprint_bytes / (double)r->live_user_bytes
                              : NAN;
    if (!r->have_device) {
        return;
    }
    const struct kvssd_stats_log *b = &r->before, *a = &r->after;
    m->sim_s = (double)(a->sim_now_ns - b->sim_now_ns) / 1e9;
    m->ops_per_s_sim = m->sim_s > 0 ? ops / m->sim_s : NAN;
    /*
     * The simulated clock advances with the guest's (a command arrives at the
     * virtual clock's time), so it measures the device only when the device
     * is the bottleneck. The sum of the commands' simulated latencies is the
     * device's own time: ops per second of it is what the device would
     * sustain one command at a time with a host that takes no time.
     */
    uint64_t busy = 0;
    for (int i = 0; i < 5; i++) {
        busy += a->latency_sum_ns[i] - b->latency_sum_ns[i];
    }
    m->device_busy_s = (double)busy / 1e9;
    m->ops_per_s_busy = busy ? ops / m->device_busy_s : NAN;
    double h2d = (double)((a->xfer.sqe_fetch_bytes - b->xfer.sqe_fetch_bytes) +
                          (a->xfer.doorbell_bytes - b->xfer.doorbell_bytes) +
                          (a->xfer.mmio_other_bytes - b->xfer.mmio_other_bytes) +
                          (a->xfer.prp_list_bytes - b->xfer.prp_list_bytes) +
                          (a->xfer.data_h2d_bytes - b->xfer.data_h2d_bytes));
    m->h2d_bytes_per_op = ops > 0 ? h2d / ops : NAN;
    m->pcie_bytes_per_op = ops > 0 ? (double)kb_pcie_bytes(b, a) / ops : NAN;
    /*
     * The log has no page size; its waf (since the last reset) is pages x
     * page size / user_bytes_written, so the page size is recovered from it
     * and rounded to the power of two NAND pages are.
     */
    if (a->nand_pages_programmed && a->user_bytes_written && a->waf_milli) {
        double pb = (double)a->waf_milli / 1000.0 * (double)a->user_bytes_written /
                    (double)a->nand_pages_programmed;
        double p2 = 512;
        while (p2 * 1.5 < pb && p2 < (1 << 24)) {
            p2 *= 2;
        }
        m->nand_page_bytes = p2;
        m->nand_bytes_programmed = p2 *
                                   (double)(a->nand_pages_programmed - b->nand_pages_programmed);
        m->waf = r->written_bytes ? m->nand_bytes_programmed / (double)r->written_bytes : NAN;
    }
    m->device_waf = a->waf_milli ? (double)a->waf_milli / 1000.0 : NAN;
    /* the device's bytes for live data: kv: live blobs' NAND bytes; nvm: mapped units */
    double dev_live = a->live_nand_bytes ? (double)a->live_nand_bytes : (double)a->live_user_bytes;
    if (dev_live > 0 && r->live_user_bytes > 0) {
        m->space_amp_device = dev_live / (double)r->live_user_bytes;
    }
}

/* One row: a label and a value per engine ("-" where not available). */
static void row(const char *label, const double *v, int n, const char *fmt)
{
    printf("  %-34s", label);
    for (int i = 0; i < n; i++) {
        char cell[32];
        if (isnan(v[i]) || isinf(v[i])) {
            snprintf(cell, sizeof(cell), "-");
        } else {
            snprintf(cell, sizeof(cell), fmt, v[i]);
        }
        printf(" %14s", cell);
    }
    printf("\n");
}

void kb_report_side_by_side(const struct kb_config *c, const struct kb_result *res, int nengines,
                            int nphases, int phase)
{
    enum { MAXE = KB_STORE_COUNT };
    int n = nengines < MAXE ? nengines : MAXE;
    const struct kb_result *r[MAXE];
    struct kb_metrics m[MAXE];
    double v[MAXE];
    char ks[256], vs[256];
    kb_size_format(&c->key_size, ks, sizeof(ks));
    kb_size_format(&c->value_size, vs, sizeof(vs));
    for (int e = 0; e < n; e++) {
        r[e] = &res[e * nphases + phase];
        kb_metrics(r[e], &m[e]);
    }
    if (!n) {
        return;
    }
    printf("== %s: the same workload on each engine (seed %llu, %llu keys, key size %s, value "
           "size %s, %u thread%s)\n",
           r[0]->phase, (unsigned long long)c->seed, (unsigned long long)c->key_count, ks, vs,
           c->threads, c->threads == 1 ? "" : "s");
    printf("  %-34s", "");
    for (int e = 0; e < n; e++) {
        printf(" %14s", r[e]->engine);
    }
    printf("\n");
#define ROW(label, expr, fmt)         \
    do {                              \
        for (int e = 0; e < n; e++) { \
            v[e] = (expr);            \
        }                             \
        row(label, v, n, fmt);        \
    } while (0)
    ROW("operations", (double)r[e]->ops, "%.0f");
    for (int k = 0; k < KB_OP_COUNT; k++) {
        bool any = false;
        for (int e = 0; e < n; e++) {
            any |= r[e]->op_count[k] != 0;
        }
        if (any) {
            char label[64];
            snprintf(label, sizeof(label), "  %s", kb_op_names[k]);
            ROW(label, (double)r[e]->op_count[k], "%.0f");
        }
    }
    ROW("ops/s, device simulated time", m[e].ops_per_s_sim, "%.0f");
    ROW("ops/s, device busy time (QD1)", m[e].ops_per_s_busy, "%.0f");
    ROW("ops/s, guest wall clock", m[e].ops_per_s_wall, "%.0f");
    ROW("device simulated time, s", m[e].sim_s, "%.4f");
    ROW("device busy time, s", m[e].device_busy_s, "%.4f");
    ROW("guest wall clock, s", r[e]->elapsed_s, "%.4f");
    ROW("  of which closing sync, s", r[e]->sync_s, "%.4f");
    ROW("guest CPU us/op (user+sys)", m[e].cpu_us_per_op, "%.2f");
    ROW("host->device bytes/op", m[e].h2d_bytes_per_op, "%.1f");
    ROW("PCIe bytes/op (both ways)", m[e].pcie_bytes_per_op, "%.1f");
    ROW("device commands/op",
        r[e]->have_device && r[e]->ops
            ? (double)(r[e]->after.xfer.commands - r[e]->before.xfer.commands) / (double)r[e]->ops
            : NAN,
        "%.3f");
    ROW("user bytes written", (double)r[e]->written_bytes, "%.0f");
    ROW("NAND bytes programmed", m[e].nand_bytes_programmed, "%.0f");
    ROW("WAF (NAND / user bytes written)", m[e].waf, "%.3f");
    ROW("  device's own WAF", m[e].device_waf, "%.3f");
    ROW("live user bytes", r[e]->live_user_bytes >= 0 ? (double)r[e]->live_user_bytes : NAN,
        "%.0f");
    ROW("space amp, engine (files/blocks)", m[e].space_amp_engine, "%.3f");
    ROW("space amp, device (mapped/live)", m[e].space_amp_device, "%.3f");
    for (int k = 0; k < KB_OP_COUNT; k++) {
        bool any = false;
        for (int e = 0; e < n; e++) {
            any |= r[e]->hist_op[k].count != 0;
        }
        if (!any) {
            continue;
        }
        char label[64];
        snprintf(label, sizeof(label), "%s p50 us (wall)", kb_op_names[k]);
        ROW(label, r[e]->hist_op[k].count ? kb_hist_percentile(&r[e]->hist_op[k], 50) / 1e3 : NAN,
            "%.1f");
        snprintf(label, sizeof(label), "%s p99 us (wall)", kb_op_names[k]);
        ROW(label, r[e]->hist_op[k].count ? kb_hist_percentile(&r[e]->hist_op[k], 99) / 1e3 : NAN,
            "%.1f");
    }
    /* the device's own latency rows: store/retrieve on kv, write/read on nvm */
    for (int k = 0; k < 3; k++) {
        char label[64];
        snprintf(label, sizeof(label), "device row %d p50/p99 us (sim)", k);
        bool any = false;
        for (int e = 0; e < n; e++) {
            any |= r[e]->have_device && r[e]->after.latency[k][0] > r[e]->before.latency[k][0];
        }
        if (!any) {
            continue;
        }
        printf("  %-34s", label);
        for (int e = 0; e < n; e++) {
            char cell[40];
            if (r[e]->have_device && r[e]->after.latency[k][0] > r[e]->before.latency[k][0]) {
                snprintf(cell, sizeof(cell), "%s %.0f/%.0f",
                         r[e]->device_ops ? r[e]->device_ops[k] : "?",
                         r[e]->after.latency[k][1] / 1e3, r[e]->after.latency[k][2] / 1e3);
            } else {
                snprintf(cell, sizeof(cell), "-");
            }
            printf(" %14s", cell);
        }
        printf("\n");
    }
    ROW("errors", (double)r[e]->errors, "%.0f");
    ROW("not found", (double)r[e]->not_found, "%.0f");
    for (int k = 0; k < KB_OP_COUNT; k++) {
        bool any = false;
        for (int e = 0; e < n; e++) {
            any |= r[e]->not_found_op[k] != 0;
        }
        if (any) {
            char label[64];
            snprintf(label, sizeof(label), "  %s", kb_op_names[k]);
            ROW(label, (double)r[e]->not_found_op[k], "%.0f");
        }
    }
    ROW("mismatches", (double)r[e]->mismatches, "%.0f");
#undef ROW
}
