/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the two personalities' checkpoints share (recovery.c writes and
 * loads the KV one, block_recovery.c the nvm one): the bytes after the
 * image's NAND and spare areas, whose length and XXH3-64 are in the image
 * header; the stripe table each holds after its head; the open streams
 * each names; and the index stream's pages each points at.
 */
#ifndef KVFTL_CHECKPOINT_H
#define KVFTL_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "recovery.h"

struct kvftl;
struct nand;
struct stripe_info;

/* checkpoint_image_header() - the image's header (the first 4 KiB of the mapping). */
struct image_header *checkpoint_image_header(struct kvftl *ftl);

/* checkpoint_header_sync() - make the header durable (an image file only). */
void checkpoint_header_sync(struct kvftl *ftl);

/*
 * checkpoint_write() - write checkpoint bytes @b after the image's NAND and
 * spare areas, put their length and checksum in the header and mark the
 * image clean; @b is freed. 0, or -1 if the file cannot be written.
 */
int checkpoint_write(struct kvftl *ftl, GByteArray *b);

/*
 * checkpoint_read() - the checkpoint bytes the header names (its length in
 * *@len), once they fit in the file, their length is @max (@exact) or at
 * most @max, and they match the header's checksum. NULL with a sentence
 * fragment in @why otherwise. g_free() the bytes.
 */
uint8_t *checkpoint_read(struct kvftl *ftl, uint64_t max, bool exact, uint64_t *len, char *why,
                         size_t why_len);

/* The streams a checkpoint says are open, which its stripe table must agree with. */
struct checkpoint_streams {
    uint32_t data_stripe;  /* the open data stripe, UINT32_MAX if none */
    uint64_t data_wp;      /* its write pointer (a page boundary inside it) */
    uint32_t index_stripe; /* the index stream's stripe, UINT32_MAX if none */
    uint32_t index_idx;    /* its next page */
    uint64_t stripe_seq;   /* the next stripe open sequence number */
};

/*
 * checkpoint_stripes_parse() - the stripe table at @p (one struct
 * stripe_info per stripe, host layout) into @st: each record's enum and
 * bool bytes, its state against the open streams @cs, its valid bytes, the
 * erased pages the streams will program (spare areas, and unit spare areas
 * on nvm), its open sequence number before @cs->stripe_seq. 0, or -1 with
 * a sentence fragment in @why about the first bad stripe.
 */
int checkpoint_stripes_parse(const struct kvftl *ftl, const uint8_t *p,
                             const struct checkpoint_streams *cs, struct stripe_info *st, char *why,
                             size_t why_len);

/*
 * checkpoint_first_used_page() - the first page of stripe @s from page
 * @from on that is not erased (its spare area, or on nvm one of its unit
 * spare areas, is written), or -1.
 */
int64_t checkpoint_first_used_page(const struct nand *n, uint32_t s, uint32_t from);

/*
 * checkpoint_valid_match() - 0 if every stripe's valid bytes in @st are
 * the @counted ones, else -1 with "stripe S has N valid bytes but @source
 * references M" in @why.
 */
int checkpoint_valid_match(const struct kvftl *ftl, const struct stripe_info *st,
                           const uint64_t *counted, const char *source, char *why, size_t why_len);

/*
 * checkpoint_install_space() - a checked checkpoint's stripe table @st,
 * free count, allocation cursor, stripe sequence number and streams @cs
 * become the space layer's: the index stream's stripe (its next page is
 * the personality's to set) and the data stream reopened at its write
 * pointer. The caller has forgotten the old data stream (its buffer).
 */
void checkpoint_install_space(struct kvftl *ftl, const struct stripe_info *st,
                              const struct checkpoint_streams *cs, uint32_t alloc_cursor);

/* What checkpoint_index_page_at() found at a NAND page a checkpoint names. */
enum index_page_at {
    INDEX_PAGE_HELD,     /* the index stream's page with that tag */
    INDEX_PAGE_PAST_END, /* a page number past the device's last page */
    INDEX_PAGE_NOT_HELD, /* a page outside the programmed index stream, or another page */
};

/*
 * checkpoint_index_page_at() - does NAND page @ppn hold the index stream's
 * page @tag (a KV index page, an nvm translation page), as the
 * checkpoint's stripes @st (the open index stripe programmed up to its
 * page @open_idx) and the page's spare area say?
 */
enum index_page_at checkpoint_index_page_at(const struct kvftl *ftl, const struct stripe_info *st,
                                            uint32_t open_idx, uint32_t ppn, uint32_t tag);

#endif
