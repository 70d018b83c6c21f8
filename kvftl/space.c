/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Space: the stripe table, allocation and valid-byte accounting. */
#include "space.h"

#include <glib.h>

#include "nand.h"

void space_init(struct space *sp, struct nand *nand)
{
    uint32_t n = nand->geo.stripes;
    sp->nand = nand;
    sp->stripes = g_new0(struct stripe_info, n);
    for (uint32_t s = 0; s < n; s++) {
        sp->stripes[s].state = STRIPE_FREE;
        sp->stripes[s].erased = true;
        sp->stripes[s].min_blob_seq = UINT64_MAX;
    }
    sp->free_stripes = n;
    sp->alloc_cursor = 0;
}

void space_fini(struct space *sp)
{
    g_free(sp->stripes);
    sp->stripes = NULL;
}

void space_reset(struct space *sp)
{
    for (uint32_t s = 0; s < sp->nand->geo.stripes; s++) {
        struct stripe_info *si = &sp->stripes[s];
        si->state = STRIPE_FREE;
        si->valid_bytes = 0;
        si->min_blob_seq = UINT64_MAX;
    }
    sp->free_stripes = sp->nand->geo.stripes;
}

uint32_t space_alloc(struct space *sp, enum stripe_state state, uint64_t *now_ns)
{
    uint32_t n = sp->nand->geo.stripes;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = (sp->alloc_cursor + i) % n;
        struct stripe_info *si = &sp->stripes[s];
        if (si->state != STRIPE_FREE) {
            continue;
        }
        if (!si->erased) {
            /* erase ahead of use: the dies are busy, the caller does not wait */
            nand_erase_stripe(sp->nand, s, *now_ns);
            si->erased = true;
        }
        si->state = (uint8_t)state;
        si->valid_bytes = 0;
        si->open_seq = sp->stripe_seq++;
        si->min_blob_seq = UINT64_MAX;
        si->last_write_ns = *now_ns;
        sp->free_stripes--;
        sp->alloc_cursor = (s + 1) % n;
        return s;
    }
    return UINT32_MAX;
}

void space_valid_add(struct space *sp, uint64_t addr, int64_t delta, uint64_t blob_seq)
{
    struct stripe_info *si = &sp->stripes[addr / sp->nand->geo.stripe_bytes];
    si->valid_bytes = (uint64_t)((int64_t)si->valid_bytes + delta);
    if (delta > 0 && blob_seq && blob_seq < si->min_blob_seq) {
        si->min_blob_seq = blob_seq;
    }
}

uint64_t space_release(struct space *sp, uint32_t stripe, uint64_t at_ns)
{
    struct stripe_info *si = &sp->stripes[stripe];
    uint64_t done = nand_erase_stripe(sp->nand, stripe, at_ns);
    si->state = STRIPE_FREE;
    si->erased = true;
    si->valid_bytes = 0;
    si->min_blob_seq = UINT64_MAX;
    sp->free_stripes++;
    return done;
}

uint64_t space_erase_all(struct space *sp, uint64_t at_ns)
{
    uint64_t done = at_ns;
    for (uint32_t s = 0; s < sp->nand->geo.stripes; s++) {
        if (!sp->stripes[s].erased) {
            uint64_t d = nand_erase_stripe(sp->nand, s, at_ns);
            done = d > done ? d : done;
            sp->stripes[s].erased = true;
        }
    }
    return done;
}
