/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Iterators: walk the index in increasing key-hash order and return the
 * keys whose first 4 bytes match (prefix, mask). The cursor is a hash
 * value, so index page splits and GC moves never repeat or skip a key.
 */
#ifndef KVFTL_ITERATOR_H
#define KVFTL_ITERATOR_H

#include <stdbool.h>
#include <stdint.h>

#include <kvftl/kvftl.h>

struct iterator {
    bool open;
    bool done;
    uint32_t prefix, mask;
    enum kvftl_iter_kind kind;
    uint64_t next_hash;   /* every entry with a smaller hash has been handled */
    uint32_t same_done;   /* entries with hash == next_hash already handled */
};

/* iter_first4() - a key's first 4 bytes as a big-endian number, zero padded. */
uint32_t iter_first4(const void *key, uint32_t key_bytes);

#endif
