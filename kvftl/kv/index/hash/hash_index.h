/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hash design behind the index seam (kv_index.h): the extendible hash
 * (index.c) over flash index pages, their DRAM cache (index_cache.c) and
 * the Bloom filter for absent keys (bloom.c), sharing index-dram-bytes:
 * the filter first (at most 1/8), cached index pages in the rest.
 */
#ifndef KVFTL_HASH_INDEX_H
#define KVFTL_HASH_INDEX_H

#include <stdbool.h>

#include "bloom.h"
#include "index.h"

struct kv_index_ops;

struct hash_index {
    struct index idx;
    struct bloom bloom;
    bool bloom_on; /* cfg bloom, on a KV device */
};

extern const struct kv_index_ops hash_index_ops;

#endif
