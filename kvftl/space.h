/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Space: the stripes of the NAND model (block b of every die, the erase
 * unit), their allocation, and the valid bytes each one holds. Everything
 * above that writes flash takes its stripes here and says here how many of
 * their bytes are live; GC reads the same table to pick its victims. It
 * knows nothing of what the bytes are (blobs, index pages).
 */
#ifndef KVFTL_SPACE_H
#define KVFTL_SPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "nand.h"

enum stripe_state {
    STRIPE_FREE = 0,
    STRIPE_OPEN_DATA,
    STRIPE_OPEN_INDEX,
    STRIPE_DATA,
    STRIPE_INDEX,
};

/* One stripe's record; the checkpoint stores the table as it is in memory. */
struct stripe_info {
    uint8_t state;
    bool erased;            /* nothing programmed since the last erase */
    uint64_t valid_bytes;   /* bytes of live blobs (rounded to the unit) or live index pages */
    uint64_t open_seq;      /* order in which stripes were opened */
    uint64_t min_blob_seq;  /* smallest blob sequence number written to it */
    uint64_t last_write_ns; /* for cost-benefit age */
};

struct space {
    struct nand *nand;
    struct stripe_info *stripes;  /* one per stripe of the geometry */
    uint32_t free_stripes;
    uint32_t alloc_cursor;        /* where the next allocation starts looking */
    uint64_t stripe_seq;          /* open sequence counter */
};

/* space_init() - every stripe of @nand free and erased. */
void space_init(struct space *sp, struct nand *nand);
void space_fini(struct space *sp);

/* space_reset() - every stripe free, nothing valid (erased flags kept: NAND is unchanged). */
void space_reset(struct space *sp);

/*
 * space_alloc() - take a free stripe (erasing it if needed) and mark it
 * open in @state. Returns UINT32_MAX if none is free.
 */
uint32_t space_alloc(struct space *sp, enum stripe_state state, uint64_t *now_ns);

/* space_valid_add() - add (or with negative @delta remove) live bytes at device address @addr. */
void space_valid_add(struct space *sp, uint64_t addr, int64_t delta, uint64_t blob_seq);

/*
 * space_release() - erase @stripe, whose contents are all dead, and make it
 * free. Returns the completion time of the erase.
 */
uint64_t space_release(struct space *sp, uint32_t stripe, uint64_t at_ns);

/* space_erase_all() - erase every stripe not erased yet (Format). Returns the last completion time. */
uint64_t space_erase_all(struct space *sp, uint64_t at_ns);

#endif
