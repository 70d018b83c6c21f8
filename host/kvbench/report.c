/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench results: a log-linear latency histogram, the human table and the
 * --json object (fields documented in docs/host.md), the engines side by
 * side and their derived metrics (docs/kvbench.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <json-c/json.h>

#include "bench/provenance.h"
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

/* Bucket @i's bounds [*lo, *hi] in ns (inclusive); @i below hist_index(UINT64_MAX). */
static void hist_bounds(unsigned i, uint64_t *lo, uint64_t *hi)
{
    if (i < KB_HIST_SUB) {
        *lo = *hi = i;
    } else {
        unsigned e = i / KB_HIST_SUB + 5, sub = i % KB_HIST_SUB;
        *lo = (1ull << e) + ((uint64_t)sub << (e - 6));
        *hi = *lo + (1ull << (e - 6)) - 1;
    }
}

unsigned kb_hist_bucket(uint64_t ns, uint64_t *lo, uint64_t *hi)
{
    unsigned i = hist_index(ns);
    hist_bounds(i, lo, hi);
    return i;
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

/*
 * Whose arrivals the device's simulated clock follows: "sim" (a sim:
 * device in this process, each command arriving when the previous one
 * completed) or "vm" (a device in QEMU, commands arriving on its clock).
 */
static const char *device_clock(const struct kb_config *c, const struct kb_result *r)
{
    const char *path = r->device ? r->device : c->device;
    return !strncmp(path, "sim:", 4) ? "sim" : "vm";
}

/* The table of @r, its first line naming it @label (the phase, or the phase on a device). */
static void report_table(const struct kb_config *c, const struct kb_result *r, const char *label)
{
    const struct kb_hist *h = &r->hist;
    double ops_s = ratio((double)r->ops, r->elapsed_s);
    printf("== %s: %llu ops in %.3f s = %.0f ops/s\n", label, (unsigned long long)r->ops,
           r->elapsed_s, ops_s);
    printf("   ops      ");
    for (int i = 0; i < KB_OP_COUNT; i++) {
        if (r->op_count[i]) {
            printf(" %s=%llu", kb_op_names[i], (unsigned long long)r->op_count[i]);
        }
    }
    printf("\n");
    /* all operations, then each type that ran: the --percentiles, max and mean (wall clock) */
    for (int k = -1; k < KB_OP_COUNT; k++) {
        struct kb_lat_summary s;
        const struct kb_hist *hk = k < 0 ? h : &r->hist_op[k];
        if (!hk->count && k >= 0) {
            continue;
        }
        kb_lat_summarize(c, hk, &s);
        printf("   %-9s", k < 0 ? "latency" : kb_op_names[k]);
        for (unsigned i = 0; i < c->npercentiles; i++) {
            printf(" p%g %.1f ", c->percentiles[i], s.pct_us[i]);
        }
        printf(" max %.1f  mean %.1f us (%llu ops)\n", s.max_us, s.mean_us,
               (unsigned long long)s.count);
    }
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
    if (!strcmp(device_clock(c, r), "sim")) {
        printf("   clock     sim: device time is the firmware's simulated clock, each command "
               "arriving when the previous one completed (no VM)\n");
    }
}

void kb_report_table(const struct kb_config *c, const struct kb_result *r)
{
    report_table(c, r, r->phase);
}

double kb_aggregate_device_time(const struct kb_result *dev, unsigned ndev)
{
    double longest = 0;
    for (unsigned d = 0; d < ndev; d++) {
        if (!dev[d].have_device) {
            return NAN;
        }
        double s = (double)(dev[d].after.sim_now_ns - dev[d].before.sim_now_ns) / 1e9;
        longest = s > longest ? s : longest;
    }
    return longest;
}

void kb_report_devices(const struct kb_config *c, const struct kb_result *dev, unsigned ndev,
                       const struct kb_result *agg)
{
    for (unsigned d = 0; d < ndev; d++) {
        g_autofree char *label = g_strdup_printf("%s on device %u of %u, %s", dev[d].phase, d + 1,
                                                 ndev, dev[d].device ? dev[d].device : "?");
        report_table(c, &dev[d], label);
    }
    double dt = kb_aggregate_device_time(dev, ndev);
    printf("== %s on all %u devices: %llu ops in %.3f s = %.0f ops/s wall clock; ", agg->phase,
           ndev, (unsigned long long)agg->ops, agg->elapsed_s,
           ratio((double)agg->ops, agg->elapsed_s));
    if (isnan(dt)) {
        printf("device time not available (no statistics log)\n");
    } else {
        printf("%.3f s device time (the longest device's) = %.0f ops/s aggregate device time\n", dt,
               ratio((double)agg->ops, dt));
    }
    printf("   ops      ");
    for (int i = 0; i < KB_OP_COUNT; i++) {
        if (agg->op_count[i]) {
            printf(" %s=%llu", kb_op_names[i], (unsigned long long)agg->op_count[i]);
        }
    }
    printf("\n   commands  %.3f per op   errors %llu   not found %llu   mismatches %llu\n",
           ratio((double)agg->commands, (double)agg->ops), (unsigned long long)agg->errors,
           (unsigned long long)agg->not_found, (unsigned long long)agg->mismatches);
}

/* ---- JSON (json-c; schema in docs/kvbench.md "JSON") ----------------- */

/*
 * A number with the text the hand-printed JSON had (@fmt), so consumers see
 * the same digits; NULL (JSON null) when not finite.
 */
struct json_object *kb_json_double(double v, const char *fmt)
{
    char buf[64];
    if (!isfinite(v)) {
        return NULL;
    }
    snprintf(buf, sizeof(buf), fmt, v);
    return json_object_new_double_s(v, buf);
}

static struct json_object *ju(uint64_t v)
{
    return json_object_new_uint64(v);
}

/*
 * A string (a path, a name): as is when it is valid UTF-8, else
 * {"hex": "2f6465..."} (lowercase, two digits a byte), the rule of the kvssd
 * CLI's JSON, which no string can be confused with.
 */
struct json_object *kb_json_str(const char *s)
{
    if (g_utf8_validate(s, -1, NULL)) {
        return json_object_new_string(s);
    }
    static const char digits[] = "0123456789abcdef";
    size_t n = strlen(s);
    char *hex = g_malloc(2 * n + 1);
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[(uint8_t)s[i] >> 4];
        hex[2 * i + 1] = digits[(uint8_t)s[i] & 15];
    }
    hex[2 * n] = '\0';
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "hex", json_object_new_string(hex));
    g_free(hex);
    return o;
}

static void jadd(struct json_object *o, const char *key, struct json_object *v)
{
    json_object_object_add(o, key, v);
}

void kb_pct_key(double p, char *buf, size_t len)
{
    snprintf(buf, len, "%g", p);
}

void kb_lat_summarize(const struct kb_config *c, const struct kb_hist *h, struct kb_lat_summary *s)
{
    memset(s, 0, sizeof(*s));
    s->count = h->count;
    s->mean_us = ratio((double)h->sum_ns, (double)h->count) / 1e3;
    s->max_us = (double)h->max_ns / 1e3;
    for (unsigned i = 0; i < c->npercentiles && i < KB_PCT_MAX; i++) {
        s->pct_us[i] = (double)kb_hist_percentile(h, c->percentiles[i]) / 1e3;
    }
}

/* {"50": us, "99.9": us, ...} at the configured percentiles. */
static struct json_object *json_percentiles(const struct kb_config *c,
                                            const struct kb_lat_summary *s)
{
    struct json_object *o = json_object_new_object();
    for (unsigned i = 0; i < c->npercentiles && i < KB_PCT_MAX; i++) {
        char key[32];
        kb_pct_key(c->percentiles[i], key, sizeof(key));
        jadd(o, key, kb_json_double(s->pct_us[i], "%.3f"));
    }
    return o;
}

/*
 * A latency object: the fixed fields every version had (p50 p90 p99 p999
 * max mean; @count adds "count" first, as latency_by_op_us has it), then
 * p9999 and the configured "percentiles".
 */
static struct json_object *json_latency(const struct kb_config *c, const struct kb_hist *h,
                                        bool count, bool mean)
{
    struct json_object *o = json_object_new_object();
    struct kb_lat_summary s;
    kb_lat_summarize(c, h, &s);
    if (count) {
        jadd(o, "count", ju(h->count));
        jadd(o, "mean", kb_json_double(s.mean_us, "%.3f"));
    }
    jadd(o, "p50", kb_json_double(kb_hist_percentile(h, 50) / 1e3, "%.3f"));
    jadd(o, "p90", kb_json_double(kb_hist_percentile(h, 90) / 1e3, "%.3f"));
    jadd(o, "p99", kb_json_double(kb_hist_percentile(h, 99) / 1e3, "%.3f"));
    jadd(o, "p999", kb_json_double(kb_hist_percentile(h, 99.9) / 1e3, "%.3f"));
    jadd(o, "max", kb_json_double(s.max_us, "%.3f"));
    if (!count && mean) {
        jadd(o, "mean", kb_json_double(s.mean_us, "%.3f"));
    }
    jadd(o, "p9999", kb_json_double(kb_hist_percentile(h, 99.99) / 1e3, "%.3f"));
    jadd(o, "percentiles", json_percentiles(c, &s));
    return o;
}

/*
 * The histogram itself (docs/kvbench.md "JSON"): {"unit": "ns", "count",
 * "sum", "max", "buckets": [[lower, upper, count], ...]}, the non-empty
 * buckets in ascending order, bounds inclusive. The bounds follow from the
 * layout alone, the same in every report, so reports merge by adding the
 * counts of equal buckets (and the sums; the max of the maxima).
 */
static struct json_object *json_histogram(const struct kb_hist *h)
{
    struct json_object *o = json_object_new_object(), *a = json_object_new_array();
    jadd(o, "unit", json_object_new_string("ns"));
    jadd(o, "count", ju(h->count));
    jadd(o, "sum", ju(h->sum_ns));
    jadd(o, "max", ju(h->max_ns));
    for (unsigned i = 0; i < KB_HIST_BUCKETS; i++) {
        if (!h->b[i]) {
            continue;
        }
        uint64_t lo, hi;
        hist_bounds(i, &lo, &hi);
        struct json_object *b = json_object_new_array();
        json_object_array_add(b, ju(lo));
        json_object_array_add(b, ju(hi));
        json_object_array_add(b, ju(h->b[i]));
        json_object_array_add(a, b);
    }
    jadd(o, "buckets", a);
    return o;
}

/* The "device" object: statistics log deltas over one phase (null without the log). */
static struct json_object *json_device(const struct kb_config *c, const struct kb_result *r)
{
    if (!r->have_device) {
        return NULL;
    }
    uint64_t pcie = kb_pcie_bytes(&r->before, &r->after);
    double sim_s = (double)D(sim_now_ns) / 1e9;
    struct json_object *o = json_object_new_object(), *h2d = json_object_new_object(),
                       *d2h = json_object_new_object(), *lat = json_object_new_object();
    jadd(h2d, "sqe", ju(D(xfer.sqe_fetch_bytes)));
    jadd(h2d, "doorbell", ju(D(xfer.doorbell_bytes)));
    jadd(h2d, "mmio_other", ju(D(xfer.mmio_other_bytes)));
    jadd(h2d, "prp_list", ju(D(xfer.prp_list_bytes)));
    jadd(h2d, "data", ju(D(xfer.data_h2d_bytes)));
    jadd(h2d, "inline_value", ju(D(xfer.inline_bytes)));
    jadd(o, "h2d_bytes", h2d);
    jadd(d2h, "cqe", ju(D(xfer.cqe_post_bytes)));
    jadd(d2h, "data", ju(D(xfer.data_d2h_bytes)));
    jadd(o, "d2h_bytes", d2h);
    jadd(o, "pcie_bytes", ju(pcie));
    jadd(o, "commands", ju(D(xfer.commands)));
    jadd(o, "inline_commands", ju(D(xfer.inline_commands)));
    jadd(o, "key_stage_commands", ju(D(xfer.key_stage_commands)));
    jadd(o, "nand_pages_programmed", ju(D(nand_pages_programmed)));
    jadd(o, "nand_data_pages_programmed", ju(D(nand_data_pages_programmed)));
    jadd(o, "nand_pages_read", ju(D(nand_pages_read)));
    jadd(o, "nand_blocks_erased", ju(D(nand_blocks_erased)));
    jadd(o, "gc_runs", ju(D(gc_runs)));
    jadd(o, "waf", kb_json_double(r->after.waf_milli / 1e3, "%.3f"));
    jadd(o, "space_amp", kb_json_double(r->after.space_amp_milli / 1e3, "%.3f"));
    jadd(o, "taf", kb_json_double(ratio((double)pcie, (double)r->user_bytes), "%.4f"));
    jadd(o, "clock", kb_json_str(device_clock(c, r)));
    jadd(o, "sim_time_s", kb_json_double(sim_s, "%.6f"));
    jadd(o, "sim_ops_per_s", kb_json_double(ratio((double)r->ops, sim_s), "%.1f"));
    static const char *const kv_ops[5] = {"store", "retrieve", "delete", "exist", "iterate"};
    const char *const *ops = r->device_ops ? r->device_ops : kv_ops;
    for (int i = 0; i < 5; i++) {
        /* the mean over this phase alone: deltas of the sum and the count */
        uint64_t n = r->after.latency[i][0] - r->before.latency[i][0];
        uint64_t sum = r->after.latency_sum_ns[i] - r->before.latency_sum_ns[i];
        struct json_object *l = json_object_new_object();
        jadd(l, "count", ju(r->after.latency[i][0]));
        jadd(l, "mean", kb_json_double(n ? (double)sum / (double)n / 1e3 : 0.0, "%.3f"));
        jadd(l, "p50", kb_json_double(r->after.latency[i][1] / 1e3, "%.3f"));
        jadd(l, "p99", kb_json_double(r->after.latency[i][2] / 1e3, "%.3f"));
        jadd(l, "p999", kb_json_double(r->after.latency[i][3] / 1e3, "%.3f"));
        jadd(l, "max", kb_json_double(r->after.latency[i][4] / 1e3, "%.3f"));
        jadd(lat, ops[i], l);
    }
    jadd(o, "sim_latency_us", lat);
    return o;
}

/* A number, or null when not available (NaN). */
static void json_num(struct json_object *o, const char *name, double v)
{
    jadd(o, name, kb_json_double(v, "%.6g"));
}

static struct json_object *json_summary(const struct kb_config *c, const struct kb_lat_summary *s)
{
    struct json_object *o = json_object_new_object();
    jadd(o, "count", ju(s->count));
    jadd(o, "mean", kb_json_double(s->mean_us, "%.3f"));
    jadd(o, "max", kb_json_double(s->max_us, "%.3f"));
    jadd(o, "percentiles", json_percentiles(c, s));
    return o;
}

/* The phase's --report-interval periods: [{start_s, end_s, ops, ops_per_s, latency_us, ...}]. */
static struct json_object *json_intervals(const struct kb_config *c, const struct kb_result *r)
{
    struct json_object *a = json_object_new_array();
    for (unsigned i = 0; i < r->nintervals; i++) {
        const struct kb_interval *iv = &r->intervals[i];
        struct json_object *o = json_object_new_object(), *by = json_object_new_object();
        jadd(o, "start_s", kb_json_double(iv->start_s, "%.6f"));
        jadd(o, "end_s", kb_json_double(iv->end_s, "%.6f"));
        jadd(o, "ops", ju(iv->ops));
        jadd(o, "ops_per_s",
             kb_json_double(ratio((double)iv->ops, iv->end_s - iv->start_s), "%.1f"));
        jadd(o, "latency_us", json_summary(c, &iv->all));
        for (int k = 0; k < KB_OP_COUNT; k++) {
            if (iv->op[k].count) {
                jadd(by, kb_op_names[k], json_summary(c, &iv->op[k]));
            }
        }
        jadd(o, "latency_by_op_us", by);
        json_object_array_add(a, o);
    }
    return a;
}

static void json_engine_fields(const struct kb_config *c, const struct kb_result *r,
                               struct json_object *o)
{
    struct kb_metrics m;
    kb_metrics(r, &m);
    if (r->engine) {
        jadd(o, "engine", kb_json_str(r->engine));
    }
    jadd(o, "cpu_s", kb_json_double(r->cpu_s, "%.6f"));
    jadd(o, "sync_s", kb_json_double(r->sync_s, "%.6f"));
    jadd(o, "written_bytes", ju(r->written_bytes));
    jadd(o, "live_user_bytes", json_object_new_int64(r->live_user_bytes));
    jadd(o, "footprint_bytes", json_object_new_int64(r->footprint_bytes));
    struct json_object *by = json_object_new_object();
    for (int i = 0; i < KB_OP_COUNT; i++) {
        if (r->hist_op[i].count) {
            jadd(by, kb_op_names[i], json_latency(c, &r->hist_op[i], true, true));
        }
    }
    jadd(o, "latency_by_op_us", by);
    struct json_object *hist = json_object_new_object();
    for (int i = 0; i < KB_OP_COUNT; i++) {
        if (r->hist_op[i].count) {
            jadd(hist, kb_op_names[i], json_histogram(&r->hist_op[i]));
        }
    }
    jadd(o, "latency_histogram", hist);
    struct json_object *nf = json_object_new_object();
    for (int i = 0; i < KB_OP_COUNT; i++) {
        jadd(nf, kb_op_names[i], ju(r->not_found_op[i]));
    }
    jadd(o, "not_found_by_op", nf);
    struct json_object *mo = json_object_new_object();
    json_num(mo, "ops_per_s_wall", m.ops_per_s_wall);
    json_num(mo, "ops_per_s_sim", m.ops_per_s_sim);
    json_num(mo, "sim_time_s", m.sim_s);
    json_num(mo, "device_busy_s", m.device_busy_s);
    json_num(mo, "ops_per_s_device_busy", m.ops_per_s_busy);
    json_num(mo, "cpu_us_per_op", m.cpu_us_per_op);
    json_num(mo, "h2d_bytes_per_op", m.h2d_bytes_per_op);
    json_num(mo, "pcie_bytes_per_op", m.pcie_bytes_per_op);
    json_num(mo, "nand_page_bytes", m.nand_page_bytes);
    json_num(mo, "nand_bytes_programmed", m.nand_bytes_programmed);
    json_num(mo, "waf", m.waf);
    json_num(mo, "device_waf", m.device_waf);
    json_num(mo, "space_amp_engine", m.space_amp_engine);
    json_num(mo, "space_amp_device", m.space_amp_device);
    jadd(o, "metrics", mo);
}

static struct json_object *json_phase(const struct kb_config *c, const struct kb_result *r)
{
    struct json_object *o = json_object_new_object(), *counts = json_object_new_object();
    jadd(o, "phase", kb_json_str(r->phase));
    jadd(o, "ops", ju(r->ops));
    jadd(o, "elapsed_s", kb_json_double(r->elapsed_s, "%.6f"));
    jadd(o, "ops_per_s", kb_json_double(ratio((double)r->ops, r->elapsed_s), "%.1f"));
    for (int i = 0; i < KB_OP_COUNT; i++) {
        jadd(counts, kb_op_names[i], ju(r->op_count[i]));
    }
    jadd(o, "op_counts", counts);
    jadd(o, "latency_us", json_latency(c, &r->hist, false, true));
    jadd(o, "commands", ju(r->commands));
    jadd(o, "commands_per_op", kb_json_double(ratio((double)r->commands, (double)r->ops), "%.4f"));
    jadd(o, "errors", ju(r->errors));
    jadd(o, "not_found", ju(r->not_found));
    jadd(o, "mismatches", ju(r->mismatches));
    jadd(o, "user_bytes", ju(r->user_bytes));
    json_engine_fields(c, r, o);
    jadd(o, "device", json_device(c, r));
    jadd(o, "intervals", json_intervals(c, r));
    jadd(o, "intervals_dropped", ju(r->intervals_dropped));
    return o;
}

static struct {
    int argc;
    char **argv;
    bool have_device;
    struct kvssd_config_log device;
} prov;

void kb_report_provenance(int argc, char **argv)
{
    prov.argc = argc;
    prov.argv = argv;
}

void kb_report_provenance_device(const struct kvssd_config_log *l)
{
    if (!prov.have_device) {
        prov.device = *l;
        prov.have_device = true;
    }
}

struct json_object *kb_report_provenance_json(void)
{
    return provenance_json("kvbench", prov.argc, prov.argv,
                           prov.have_device ? provenance_device_json(&prov.device) : NULL);
}

/* The configuration and, for one engine, the headline numbers of its last phase. */
static struct json_object *json_head(const struct kb_config *c, const struct kb_result *res, int n)
{
    char ks[256], vs[256];
    struct json_object *o = json_object_new_object();
    kb_size_format(&c->key_size, ks, sizeof(ks));
    kb_size_format(&c->value_size, vs, sizeof(vs));
    jadd(o, "schema_version", json_object_new_int(KB_JSON_SCHEMA_VERSION));
    jadd(o, "provenance", kb_report_provenance_json());
    jadd(o, "preset", kb_json_str(c->preset));
    jadd(o, "device_path", kb_json_str(c->device));
    jadd(o, "seed", ju(c->seed));
    jadd(o, "threads", ju(c->threads));
    jadd(o, "queue_depth", ju(c->queue_depth));
    jadd(o, "engine", kb_json_str(c->engine == KB_ENGINE_ASYNC ? "async" : "sync"));
    jadd(o, "io", kb_json_str(c->engine == KB_ENGINE_ASYNC ? "async" : "sync"));
    jadd(o, "poll", json_object_new_boolean(c->poll));
    jadd(o, "transfer_mode", kb_json_str(kvssd_xfer_mode_name(c->mode)));
    jadd(o, "key_count", ju(c->key_count));
    jadd(o, "key_size", kb_json_str(ks));
    jadd(o, "value_size", kb_json_str(vs));
    jadd(o, "report_interval_s", kb_json_double(c->report_interval_s, "%g"));
    struct json_object *pl = json_object_new_array();
    for (unsigned i = 0; i < c->npercentiles; i++) {
        json_object_array_add(pl, kb_json_double(c->percentiles[i], "%g"));
    }
    jadd(o, "percentiles", pl);
    /* the headline numbers are the last phase's (the run phase when there is one) */
    const struct kb_result *last = n ? &res[n - 1] : NULL;
    if (last) {
        jadd(o, "ops_per_s", kb_json_double(ratio((double)last->ops, last->elapsed_s), "%.1f"));
        jadd(o, "latency_us", json_latency(c, &last->hist, false, false));
        jadd(o, "commands_per_op",
             kb_json_double(ratio((double)last->commands, (double)last->ops), "%.4f"));
        jadd(o, "mismatches", ju(last->mismatches));
    }
    struct json_object *ph = json_object_new_array();
    for (int i = 0; i < n; i++) {
        json_object_array_add(ph, json_phase(c, &res[i]));
    }
    jadd(o, "phases", ph);
    if (last) {
        /* the headline "device" object is the last phase's deltas */
        jadd(o, "device_phase", kb_json_str(last->phase));
        jadd(o, "device", json_device(c, last));
    }
    return o;
}

void kb_json_print(struct json_object *o)
{
    if (!o) {
        fprintf(stderr, "kvbench: out of memory for the JSON report\n");
        return;
    }
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

void kb_report_json(const struct kb_config *c, const struct kb_result *res, int n)
{
    kb_json_print(json_head(c, res, n));
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

struct json_object *kb_report_json_object(const struct kb_config *c, const struct kb_result *res,
                                          int nengines, int nphases)
{
    /* one engine: its phases are also the top level's, as before engines existed */
    struct json_object *o = json_head(c, res, nengines == 1 ? nphases : 0);
    struct json_object *rdb = json_object_new_object(), *rh = json_object_new_object();
    jadd(rdb, "dir", kb_json_str(c->rocksdb.dir));
    jadd(rdb, "wal", json_object_new_boolean(c->rocksdb.wal));
    jadd(rdb, "sync", json_object_new_boolean(c->rocksdb.sync));
    jadd(rdb, "direct_io", json_object_new_boolean(c->rocksdb.direct_io));
    jadd(rdb, "block_cache_bytes", ju(c->rocksdb.block_cache_bytes));
    jadd(rdb, "write_buffer_bytes", ju(c->rocksdb.write_buffer_bytes));
    jadd(rdb, "compression", kb_json_str(kb_compression_name(c->rocksdb.compression)));
    jadd(o, "rocksdb", rdb);
    jadd(rh, "device", kb_json_str(c->rawhash.dev));
    jadd(rh, "write_block_bytes", ju(c->rawhash.write_block_bytes));
    jadd(rh, "defrag_lwm_pct", ju(c->rawhash.defrag_lwm_pct));
    jadd(rh, "commit_to_device", json_object_new_boolean(c->rawhash.commit_to_device));
    jadd(rh, "trim", json_object_new_boolean(c->rawhash.trim));
    jadd(o, "rawhash", rh);
    struct json_object *engines = json_object_new_array();
    for (int e = 0; e < nengines; e++) {
        const struct kb_result *r = &res[e * nphases];
        const char *name = r->engine ? r->engine : "kvssd";
        struct json_object *eo = json_object_new_object(), *ph = json_object_new_array();
        jadd(eo, "engine", kb_json_str(name));
        jadd(eo, "target", kb_json_str(engine_target(c, name)));
        for (int p = 0; p < nphases; p++) {
            json_object_array_add(ph, json_phase(c, &r[p]));
        }
        jadd(eo, "phases", ph);
        json_object_array_add(engines, eo);
    }
    jadd(o, "engines", engines);
    return o;
}

void kb_report_json_add_devices(struct json_object *o, const struct kb_config *c,
                                const struct kb_device_info *info, const struct kb_result *dev,
                                unsigned ndev, int nphases, const struct kb_result *agg)
{
    struct json_object *devs = json_object_new_array(), *ag = json_object_new_object(),
                       *aph = json_object_new_array();
    for (unsigned d = 0; d < ndev; d++) {
        struct json_object *dobj = json_object_new_object(), *ph = json_object_new_array();
        jadd(dobj, "device_path", kb_json_str(info[d].path));
        jadd(dobj, "config", info[d].have_config ? provenance_device_json(&info[d].config) : NULL);
        for (int p = 0; p < nphases; p++) {
            json_object_array_add(ph, json_phase(c, &dev[d * (unsigned)nphases + (unsigned)p]));
        }
        jadd(dobj, "phases", ph);
        json_object_array_add(devs, dobj);
    }
    jadd(o, "devices", devs);
    jadd(ag, "devices", ju(ndev));
    for (int p = 0; p < nphases; p++) {
        const struct kb_result *a = &agg[p];
        struct json_object *po = json_object_new_object(), *counts = json_object_new_object();
        /* device d's result of phase p, for the longest device time */
        struct kb_result *col = calloc(ndev, sizeof(*col));
        double dt = NAN;
        if (col) {
            for (unsigned d = 0; d < ndev; d++) {
                col[d] = dev[d * (unsigned)nphases + (unsigned)p];
            }
            dt = kb_aggregate_device_time(col, ndev);
            free(col);
        }
        jadd(po, "phase", kb_json_str(a->phase));
        jadd(po, "ops", ju(a->ops));
        for (int i = 0; i < KB_OP_COUNT; i++) {
            jadd(counts, kb_op_names[i], ju(a->op_count[i]));
        }
        jadd(po, "op_counts", counts);
        jadd(po, "errors", ju(a->errors));
        jadd(po, "not_found", ju(a->not_found));
        jadd(po, "mismatches", ju(a->mismatches));
        jadd(po, "elapsed_s", kb_json_double(a->elapsed_s, "%.6f"));
        jadd(po, "ops_per_s_wall", kb_json_double(ratio((double)a->ops, a->elapsed_s), "%.1f"));
        jadd(po, "device_time_s", kb_json_double(dt, "%.6f"));
        jadd(po, "ops_per_s_device_time",
             kb_json_double(dt > 0 ? (double)a->ops / dt : NAN, "%.1f"));
        json_object_array_add(aph, po);
    }
    jadd(ag, "phases", aph);
    jadd(o, "aggregate", ag);
}

void kb_report_json_engines(const struct kb_config *c, const struct kb_result *res, int nengines,
                            int nphases)
{
    kb_json_print(kb_report_json_object(c, res, nengines, nphases));
}

void kb_interval_line(const struct kb_config *c, const char *phase, const struct kb_interval *iv,
                      char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "[%s %.1f-%.1f s] %.0f ops/s, latency us", phase,
                                iv->start_s, iv->end_s,
                                ratio((double)iv->ops, iv->end_s - iv->start_s));
    for (unsigned i = 0; i < c->npercentiles && o < len; i++) {
        o += (size_t)snprintf(buf + o, len - o, " p%g %.1f", c->percentiles[i], iv->all.pct_us[i]);
    }
    if (o < len) {
        snprintf(buf + o, len - o, " max %.1f", iv->all.max_us);
    }
}

void kb_result_free(struct kb_result *r)
{
    free(r->intervals);
    r->intervals = NULL;
    r->nintervals = 0;
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
        for (unsigned p = 0; p < c->npercentiles; p++) {
            snprintf(label, sizeof(label), "%s p%g us (wall)", kb_op_names[k], c->percentiles[p]);
            ROW(label,
                r[e]->hist_op[k].count
                    ? kb_hist_percentile(&r[e]->hist_op[k], c->percentiles[p]) / 1e3
                    : NAN,
                "%.1f");
        }
        snprintf(label, sizeof(label), "%s max us (wall)", kb_op_names[k]);
        ROW(label, r[e]->hist_op[k].count ? r[e]->hist_op[k].max_ns / 1e3 : NAN, "%.1f");
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
