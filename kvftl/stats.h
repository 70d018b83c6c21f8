/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Statistics: counters of struct kvftl_stats and simulated-latency
 * histograms (log-linear buckets, 32 per power of two: <= 3.2% error;
 * exact below 64 ns and for the maximum).
 */
#ifndef KVFTL_STATS_H
#define KVFTL_STATS_H

#include <stdint.h>

#include <kvftl/kvftl.h>

#define HIST_BUCKETS (64 + 58 * 32)

struct latency_hist {
    uint64_t count;
    uint64_t max_ns;
    uint64_t bucket[HIST_BUCKETS];
};

unsigned hist_bucket(uint64_t ns);
/* hist_bucket_upper() - largest value that falls in bucket @b. */
uint64_t hist_bucket_upper(unsigned b);

static inline void hist_record(struct latency_hist *h, uint64_t ns)
{
    h->count++;
    h->bucket[hist_bucket(ns)]++;
    if (ns > h->max_ns) {
        h->max_ns = ns;
    }
}

/* hist_percentile() - value at @per_mille (500 = p50, 999 = p99.9). */
uint64_t hist_percentile(const struct latency_hist *h, uint32_t per_mille_x10);

struct kvftl;

/* stats_record_op() - count one operation of @op and its latency. */
void stats_record_op(struct kvftl *ftl, enum kvftl_op op, uint64_t arrival_ns, uint64_t done_ns);

#endif
