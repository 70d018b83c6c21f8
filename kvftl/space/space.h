/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Space: the stripes of the NAND model (block b of every die, the erase
 * unit), their allocation, the valid bytes each one holds, and the two
 * write streams that fill them. Everything above that writes flash takes
 * its stripes here and says here how many of their bytes are live; GC reads
 * the same table to pick its victims. It knows nothing of what the bytes
 * are (blobs, index pages) beyond the pad records that fill gaps.
 *
 * The data stream writes the open data stripe through the NAND page
 * buffer: pages are opened in buffer entries, written in place (the
 * backing store holds their bytes) and programmed in order up to the write
 * pointer. The index stream programs whole pages, one at a time, to an
 * open index stripe.
 */
#ifndef KVFTL_SPACE_H
#define KVFTL_SPACE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "buffer.h"
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

/*
 * Records a stream writes besides its owner's: the first byte of a record
 * says what it is. Gaps the placement leaves are marked with pad records
 * so a stripe can be scanned from its start without the index.
 */
enum stream_record {
    REC_ERASED = 0x00,     /* nothing written here: end of the stripe's log */
    REC_PAD1 = 0x01,       /* one byte of padding */
    REC_PAD = 0x02,        /* padding; bytes 4..7 hold its length */
};

/*
 * stream_pad_len() - length of the REC_PAD record at @rec, with @avail bytes
 * left in its stripe from @rec on; 0 when it is not a pad record we wrote.
 */
static inline uint32_t stream_pad_len(const uint8_t *rec, uint64_t avail)
{
    uint32_t len;
    if (avail < 8) {
        return 0; /* its length field would lie past the stripe */
    }
    memcpy(&len, rec + 4, 4);
    return len < 8 ? 0 : len;
}

/*
 * stream_pad_record() - the pad record of a @gap-byte gap in @rec: one
 * REC_PAD record when it holds 8 bytes, else @gap REC_PAD1 bytes. Returns
 * the bytes of it to write at the gap's start (the rest of a REC_PAD
 * record's gap is not read).
 */
static inline uint32_t stream_pad_record(uint8_t rec[8], uint64_t gap)
{
    if (gap >= 8) {
        uint32_t len = (uint32_t)gap;
        rec[0] = REC_PAD;
        rec[1] = rec[2] = rec[3] = 0;
        memcpy(rec + 4, &len, 4);
        return 8;
    }
    memset(rec, REC_PAD1, 8);
    return (uint32_t)gap;
}

/* The data stream: the open data stripe and its pages in the page buffer. */
struct data_stream {
    struct page_buffer buf;
    uint32_t stripe;              /* open data stripe, UINT32_MAX if none */
    uint64_t base_ppn;            /* its first page */
    uint64_t wp; /* write pointer: byte offset in the stripe; all before is final */
    uint64_t frontier; /* end of the furthest placement ahead of wp (backfill), >= wp */
    uint32_t prog_idx; /* pages [0, prog_idx) of the stripe are programmed */
    uint32_t open_idx; /* pages [prog_idx, open_idx) are open in the buffer */
    bool streaming; /* a record is being written at wp (may program as it goes) */
    bool plp_dump; /* programs are the capacitor-powered dump after a cut */
    uint64_t pages_programmed; /* counter */
};

/* The index stream: the open index stripe and its next page. */
struct page_stream {
    uint32_t stripe; /* UINT32_MAX if none */
    uint32_t idx; /* next page of the stripe */
};

struct space {
    struct nand *nand;
    bool plp; /* power-loss protection: buffered pages are marked in their spare area */
    /* data pages program one at a time, each when the NAND is idle (kv sync-programs) */
    bool sync_programs;
    struct stripe_info *stripes; /* one per stripe of the geometry */
    uint32_t free_stripes;
    uint32_t alloc_cursor; /* where the next allocation starts looking */
    uint64_t stripe_seq; /* open sequence counter */
    struct data_stream data;
    struct page_stream index;
};

/*
 * space_init() - every stripe of @nand free and erased, no stream open; a
 * page buffer of @buffer_entries pages; @plp: power-loss protection.
 */
void space_init(struct space *sp, struct nand *nand, uint32_t buffer_entries, bool plp);
void space_fini(struct space *sp);

/*
 * space_reset() - every stripe free, nothing valid (erased flags kept: NAND
 * is unchanged), no stream open.
 */
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

/* space_erase_all() - erase every stripe not erased yet (Format). Returns the last completion time.
 */
uint64_t space_erase_all(struct space *sp, uint64_t at_ns);

/* --- the data stream --- */

/* stream_forget() - drop the open data stripe and the buffer's entries (power cycle, format). */
void stream_forget(struct space *sp);

/* stream_open_stripe() - open a fresh data stripe. 0, or -1 if none is free. */
int stream_open_stripe(struct space *sp, uint64_t *now_ns);

/* stream_close_stripe() - the open data stripe is full: closed, no stripe open. */
void stream_close_stripe(struct space *sp);

/*
 * stream_open_page() - memory of page @idx of the open stripe, opening it
 * (and the pages before it) in the buffer if needed; NULL on power loss
 * or when the image file cannot back the page (nand_back_page()).
 */
uint8_t *stream_open_page(struct space *sp, uint32_t idx, uint64_t *now_ns);

/* stream_program_upto() - program open pages [prog_idx, @idx). -1 on power loss. */
int stream_program_upto(struct space *sp, uint32_t idx, uint64_t now_ns);

/* stream_write() - copy @n bytes to stripe offset @off through the buffer. 0, or -1 on power loss.
 */
int stream_write(struct space *sp, uint64_t off, const void *src, uint32_t n, uint64_t *now_ns);

/* stream_pad() - mark [@from, @to) of the open stripe as padding (a pad record in the buffer). */
void stream_pad(struct space *sp, uint64_t from, uint64_t to, uint64_t *now_ns);

/* stream_in_buffer() - is device byte @addr in a page not yet programmed? */
bool stream_in_buffer(const struct space *sp, uint64_t addr);

/*
 * stream_read() - account the NAND reads of device bytes [@addr, @addr+@len):
 * one per page not in the buffer (and not @skip_ppn), issued together so
 * dies work in parallel. *@last_ppn: the last page read (UINT64_MAX if none).
 */
void stream_read(struct space *sp, uint64_t addr, uint32_t len, uint64_t skip_ppn,
                 uint64_t *last_ppn, uint64_t *now_ns);

/*
 * stream_read_more() - account moving device bytes [@addr, @addr+@len),
 * within one page this command has read already, out of the die's page
 * register (the channel's time, no tR); none when the page is in the
 * buffer.
 */
void stream_read_more(struct space *sp, uint64_t addr, uint32_t len, uint64_t *now_ns);

/*
 * stream_discard_unprogrammed() - power lost without PLP: the buffered pages
 * of the open stripe never reach NAND (a torn page keeps its first half;
 * the nvm unit spare areas of all of them are cleared: a torn program
 * writes no spare area, so its units are dropped and older copies win).
 */
void stream_discard_unprogrammed(struct space *sp);

/* --- the index stream --- */

/*
 * stream_program_index() - program @page (one NAND page) as index page @tag
 * at the next page of the index stream, opening a fresh index stripe when
 * the stream has none or it is full. Returns the NAND page, or UINT64_MAX
 * if no stripe is free or power is lost. The program runs in the
 * background: *@now_ns does not move. nvm without PLP: the data stream's
 * buffered pages are programmed first (a translation page never names a
 * slot that has not reached NAND).
 */
uint64_t stream_program_index(struct space *sp, uint32_t tag, const void *page, uint64_t *now_ns);

#endif
