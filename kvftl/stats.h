/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Statistics: counters of struct kvftl_stats and simulated-latency
 * histograms (log-linear buckets, 32 per power of two). A percentile is
 * the largest sample in the bucket that holds it: never above the true
 * value by more than 3.2%, exact when the bucket holds one distinct value.
 */
#ifndef KVFTL_STATS_H
#define KVFTL_STATS_H

#include <stdint.h>

#include <kvftl/kvftl.h>

#define HIST_BUCKETS (64 + 58 * 32)

struct latency_hist {
    uint64_t count;
    uint64_t sum_ns; /* for the mean */
    uint64_t max_ns;
    uint64_t bucket[HIST_BUCKETS];
    uint64_t bucket_max[HIST_BUCKETS]; /* largest sample in each bucket */
};

unsigned hist_bucket(uint64_t ns);
/* hist_bucket_upper() - largest value that falls in bucket @b. */
uint64_t hist_bucket_upper(unsigned b);

static inline void hist_record(struct latency_hist *h, uint64_t ns)
{
    unsigned b = hist_bucket(ns);
    h->count++;
    h->sum_ns += ns;
    h->bucket[b]++;
    if (ns > h->bucket_max[b]) {
        h->bucket_max[b] = ns;
    }
    if (ns > h->max_ns) {
        h->max_ns = ns;
    }
}

/* hist_percentile() - value at @per_mille_x10 / 10000 (5000 = p50, 9990 = p99.9). */
uint64_t hist_percentile(const struct latency_hist *h, uint32_t per_mille_x10);

struct kvftl;

/* stats_record_op() - count one operation of @op and its latency. */
void stats_record_op(struct kvftl *ftl, enum kvftl_op op, uint64_t arrival_ns, uint64_t done_ns);

#endif
