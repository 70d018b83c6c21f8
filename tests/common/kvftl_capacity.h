/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one rule both random harnesses (tests/model, tests/fuzz) check a
 * CAPACITY_EXCEEDED Store against: the firmware may refuse a Store only
 * when its documented capacity check fails (docs/kvftl.md): the live blobs
 * plus the index pages in NAND plus the new blob would pass the user
 * capacity, or a new key would pass max_keys. Anything below is a firmware
 * bug: GC failing to make the room its reserve promises.
 */
#ifndef KVSSD_TESTS_KVFTL_CAPACITY_H
#define KVSSD_TESTS_KVFTL_CAPACITY_H

#include <stdbool.h>
#include <stdint.h>

#include <kvftl/kvftl.h>

/*
 * The new blob is over-estimated: a 64-byte header allowance, one
 * placement unit of rounding and two index pages (a split the insert may
 * write); an overwrite's old blob is not subtracted.
 */
static inline bool kvftl_refusal_plausible(struct kvftl *ftl, uint32_t key_bytes,
                                           uint32_t value_bytes, bool new_key)
{
    struct kvftl_stats st;
    kvftl_stats_get(ftl, &st);
    const struct kvftl_config *c = kvftl_get_config(ftl);
    if (new_key && c->max_keys && st.live_keys >= c->max_keys) {
        return true;
    }
    uint64_t unit = c->placement_unit_bytes;
    if (c->large_blob_unit_bytes > unit) {
        unit = c->large_blob_unit_bytes;
    }
    uint64_t blob = 64 + (uint64_t)key_bytes + value_bytes + unit + 2ull * c->page_size_bytes;
    if (c->page_data_bytes) {
        /* a blob over one page's data area occupies whole pages, one per data area */
        uint64_t len = 64 + (uint64_t)key_bytes + value_bytes;
        blob = (len + c->page_data_bytes - 1) / c->page_data_bytes * c->page_size_bytes +
               2ull * c->page_size_bytes;
    }
    return st.live_nand_bytes + st.index_nand_bytes + blob > st.capacity_bytes;
}

#endif
