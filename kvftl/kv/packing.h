/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Packing policy: where in the open data stripe the next blob goes, given
 * its size and how its value arrived (BandSlim §3.3; the policies are
 * described in packing.c). The packer moves the data stream's write
 * pointer and frontier (space.h), pads the gaps it skips and keeps the DMA
 * Log Table of blobs placed ahead of the write pointer; the value log
 * writes the blob where it says.
 *
 * A different placement policy plugs in here: implement pack_place() (and
 * pack_drain_dlt() for what it leaves ahead of the write pointer) over the
 * data stream; the value log, the index and GC do not change.
 */
#ifndef KVFTL_PACKING_H
#define KVFTL_PACKING_H

#include <stdbool.h>
#include <stdint.h>

#include <kvftl/kvftl.h>

#include "dlt.h"
#include "space.h"

#define DMA_UNIT_BYTES 4096u  /* page-unit DMA lands on 4 KiB boundaries */

struct packer {
    struct space *sp;             /* its data stream is where blobs are placed */
    struct dlt dlt;
    uint32_t policy;              /* enum kvftl_packing */
    bool page_fit;                /* start a blob on a fresh page rather than straddle (cfg) */
    uint32_t page_data;           /* data area of a page (cfg page_data_bytes), 0 = whole page */
    uint32_t page_bytes;          /* NAND page size */

    /* counters */
    uint64_t
        padding_bytes; /* bytes left unused: unit rounding, gaps, flush and stripe-end padding */
    uint64_t dlt_backfills; /* inline blobs placed in a gap before a DMA blob */
};

void pack_init(struct packer *pk, struct space *sp, const struct kvftl_config *cfg);
void pack_fini(struct packer *pk);

/* pack_forget() - nothing is ahead of the write pointer (a fresh stripe, power cycle, format). */
void pack_forget(struct packer *pk);

enum pack_result {
    PACK_OK = 0,
    PACK_STRIPE_FULL = 1, /* the blob does not fit in the rest of the stripe */
};

/*
 * pack_place() - decide the stripe offset *@off of a blob of @occupied
 * bytes (@dma: its value arrived by page-unit DMA) under the policy,
 * writing pad records over skipped gaps and updating wp / frontier / the
 * DLT. *@ahead: placed ahead of the write pointer (backfill). Returns
 * PACK_OK, or PACK_STRIPE_FULL (nothing changed but pads and DLT drains).
 */
int pack_place(struct packer *pk, uint32_t occupied, bool dma, uint64_t *off, bool *ahead,
               uint64_t *now_ns);

/*
 * pack_skip() - mark [from, to) of the open stripe as padding (a pad record
 * in the buffer) and count it.
 */
void pack_skip(struct packer *pk, uint64_t from, uint64_t to, uint64_t *now_ns);

/* pack_drain_dlt() - consume every DLT entry: wp moves past each DMA value, gaps padded. */
void pack_drain_dlt(struct packer *pk, uint64_t *now_ns);

#endif
