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

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

struct kv_index;
struct kv_index_ckpt_ctx;
struct kv_index_ckpt_head;
struct kv_index_entry;
struct kv_index_ops;

struct hash_index {
    struct index idx;
    struct bloom bloom;
    bool bloom_on; /* cfg bloom, on a KV device */
};

extern const struct kv_index_ops hash_index_ops;

/* The hash design's checkpoint part and check walk (hash_ckpt.c; kv_index.h's ckpt_*, check_*). */
void hash_ckpt_save(struct kv_index *ix, struct kv_index_ckpt_head *h, GByteArray *b);
uint64_t hash_ckpt_length(const struct kv_index *ix, const struct kv_index_ckpt_head *h,
                          uint64_t total_pages, char *why, size_t why_len);
uint64_t hash_ckpt_max_length(const struct kv_index *ix, uint64_t total_pages);
int hash_ckpt_check(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p,
                    struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len);
void hash_ckpt_install(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p);
uint32_t hash_check_pages(const struct kv_index *ix);
int hash_check_page(struct kv_index *ix, uint32_t p, const struct kv_index_entry **ents,
                    uint32_t *n, uint32_t *ppn, uint32_t *bytes, char *err, size_t err_len);

#endif
