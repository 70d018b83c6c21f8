/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the KV and the nvm checkpoint share (checkpoint.h). */
#include "checkpoint.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xxhash.h>

#include "ftl.h"
#include "nand.h"
#include "refuse.h"
#include "space.h"

struct image_header *checkpoint_image_header(struct kvftl *ftl)
{
    return (struct image_header *)ftl->nand.map;
}

void checkpoint_header_sync(struct kvftl *ftl)
{
    if (ftl->nand.fd >= 0) {
        msync(ftl->nand.map, NAND_IMAGE_HEADER_BYTES, MS_SYNC);
    }
}

int checkpoint_write(struct kvftl *ftl, GByteArray *b)
{
    int rc = 0;
    off_t off = (off_t)nand_checkpoint_offset(&ftl->nand);
    if (nand_pwrite(&ftl->nand, b->data, b->len, (uint64_t)off) != 0) {
        rc = -1;
    } else {
        nand_sync(&ftl->nand);
        struct image_header *h = checkpoint_image_header(ftl);
        h->checkpoint_bytes = b->len;
        h->checkpoint_checksum = XXH3_64bits(b->data, b->len);
        h->clean = 1;
        checkpoint_header_sync(ftl);
    }
    g_byte_array_free(b, TRUE);
    return rc;
}

uint8_t *checkpoint_read(struct kvftl *ftl, uint64_t max, bool exact, uint64_t *len, char *why,
                         size_t why_len)
{
    const struct image_header *hd = checkpoint_image_header(ftl);
    uint64_t off = nand_checkpoint_offset(&ftl->nand);
    uint64_t n = hd->checkpoint_bytes;
    uint64_t file = ftl->nand.file_bytes;
    if (file < off || n > file - off) {
        refuse(
            why, why_len,
            "the checkpoint (%llu bytes at offset %llu) is past the end of the file (%llu bytes)",
            (unsigned long long)n, (unsigned long long)off, (unsigned long long)file);
        return NULL;
    }
    if (exact && n != max) {
        refuse(why, why_len, "the checkpoint is %llu bytes; one of this device is %llu",
               (unsigned long long)n, (unsigned long long)max);
        return NULL;
    }
    if (!exact && n > max) {
        refuse(why, why_len, "the checkpoint is %llu bytes; one of this geometry is at most %llu",
               (unsigned long long)n, (unsigned long long)max);
        return NULL;
    }
    uint8_t *b = g_malloc(n);
    if (pread(ftl->nand.fd, b, n, (off_t)off) != (ssize_t)n) {
        refuse(why, why_len, "the checkpoint cannot be read: %s", strerror(errno));
        g_free(b);
        return NULL;
    }
    if (XXH3_64bits(b, n) != hd->checkpoint_checksum) {
        refuse(why, why_len, "the checkpoint does not match its checksum");
        g_free(b);
        return NULL;
    }
    *len = n;
    return b;
}

/* A stripe_info as stored (host layout), its enum and bool bytes checked before being loaded. */
static int stripe_info_parse(const uint8_t *p, uint32_t s, struct stripe_info *si, char *why,
                             size_t why_len)
{
    uint8_t state = p[offsetof(struct stripe_info, state)];
    uint8_t erased = p[offsetof(struct stripe_info, erased)];
    if (state > STRIPE_INDEX) {
        return refuse(why, why_len, "stripe %u has state %u; it must be from 0 to %u", s, state,
                      STRIPE_INDEX);
    }
    if (erased > 1) {
        return refuse(why, why_len, "stripe %u has erased flag %u; it must be 0 or 1", s, erased);
    }
    memset(si, 0, sizeof(*si));
    si->state = state;
    si->erased = erased;
    memcpy(&si->valid_bytes, p + offsetof(struct stripe_info, valid_bytes),
           sizeof(si->valid_bytes));
    memcpy(&si->open_seq, p + offsetof(struct stripe_info, open_seq), sizeof(si->open_seq));
    memcpy(&si->min_blob_seq, p + offsetof(struct stripe_info, min_blob_seq),
           sizeof(si->min_blob_seq));
    memcpy(&si->last_write_ns, p + offsetof(struct stripe_info, last_write_ns),
           sizeof(si->last_write_ns));
    return 0;
}

int64_t checkpoint_first_used_page(const struct nand *n, uint32_t s, uint32_t from)
{
    const struct nand_geometry *geo = &n->geo;
    uint64_t base = (uint64_t)s * geo->pages_per_stripe;
    for (uint32_t i = from; i < geo->pages_per_stripe; i++) {
        if (n->oob[base + i].kind != NAND_PAGE_ERASED) {
            return i;
        }
        const struct nand_unit_spare *us = nand_unit_spares(n, base + i);
        for (uint32_t j = 0; j < geo->unit_spares_per_page; j++) {
            if (us[j].seq || us[j].unit) {
                return i;
            }
        }
    }
    return -1;
}

/* Does stripe @s's state agree with the open streams? The personalities word it differently. */
static int stripe_streams_check(const struct kvftl *ftl, uint32_t s, const struct stripe_info *si,
                                const struct checkpoint_streams *cs, char *why, size_t why_len)
{
    bool data = si->state == STRIPE_OPEN_DATA, index = si->state == STRIPE_OPEN_INDEX;
    int data_stripe = cs->data_stripe == UINT32_MAX ? -1 : (int)cs->data_stripe;
    int index_stripe = cs->index_stripe == UINT32_MAX ? -1 : (int)cs->index_stripe;
    if (ftl->nvm && (data != (s == cs->data_stripe) || index != (s == cs->index_stripe))) {
        return refuse(why, why_len,
                      "stripe %u has state %u, which disagrees with the open streams (data %d, "
                      "index %d)",
                      s, si->state, data_stripe, index_stripe);
    }
    if (data != (s == cs->data_stripe)) {
        return refuse(why, why_len, "stripe %u has state %u but the open data stripe is %d", s,
                      si->state, data_stripe);
    }
    if (index != (s == cs->index_stripe)) {
        return refuse(why, why_len, "stripe %u has state %u but the index stream's stripe is %d", s,
                      si->state, index_stripe);
    }
    return 0;
}

/* Stripe @s's record at @p: see checkpoint_stripes_parse(). */
static int stripe_check(const struct kvftl *ftl, const uint8_t *p, uint32_t s,
                        const struct checkpoint_streams *cs, struct stripe_info *si, char *why,
                        size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    if (stripe_info_parse(p, s, si, why, why_len) != 0 ||
        stripe_streams_check(ftl, s, si, cs, why, why_len) != 0) {
        return -1;
    }
    if (si->valid_bytes > geo->stripe_bytes) {
        return refuse(why, why_len, "stripe %u has %llu valid bytes; a stripe holds %llu", s,
                      (unsigned long long)si->valid_bytes, (unsigned long long)geo->stripe_bytes);
    }
    /* later programs must find erased pages (the model asserts it, as NAND requires) */
    int64_t from = -1;
    const char *what = NULL;
    if (si->state == STRIPE_OPEN_DATA) {
        from = (int64_t)(cs->data_wp / geo->page_size);
        what = "after the write pointer of the open data stripe";
    } else if (si->state == STRIPE_OPEN_INDEX) {
        from = cs->index_idx;
        what = "after the index stream's last page";
    } else if (si->state == STRIPE_FREE && si->erased) {
        from = 0;
        what = "of a stripe marked erased";
    }
    int64_t w = from < 0 ? -1 : checkpoint_first_used_page(&ftl->nand, s, (uint32_t)from);
    if (w >= 0) {
        /* kv has no unit spare areas: only a page's spare area says it was programmed */
        return refuse(why, why_len, "page %lld of stripe %u, %s, is already %s", (long long)w, s,
                      what, ftl->nvm ? "written" : "programmed");
    }
    if (si->state != STRIPE_FREE && si->open_seq >= cs->stripe_seq) {
        return refuse(why, why_len,
                      "stripe %u was opened at sequence %llu, not before the next one (%llu)", s,
                      (unsigned long long)si->open_seq, (unsigned long long)cs->stripe_seq);
    }
    return 0;
}

int checkpoint_stripes_parse(const struct kvftl *ftl, const uint8_t *p,
                             const struct checkpoint_streams *cs, struct stripe_info *st, char *why,
                             size_t why_len)
{
    for (uint32_t s = 0; s < ftl->nand.geo.stripes; s++, p += sizeof(struct stripe_info)) {
        if (stripe_check(ftl, p, s, cs, &st[s], why, why_len) != 0) {
            return -1;
        }
    }
    return 0;
}

int checkpoint_valid_match(const struct kvftl *ftl, const struct stripe_info *st,
                           const uint64_t *counted, const char *source, char *why, size_t why_len)
{
    for (uint32_t s = 0; s < ftl->nand.geo.stripes; s++) {
        if (counted[s] != st[s].valid_bytes) {
            return refuse(why, why_len, "stripe %u has %llu valid bytes but %s references %llu", s,
                          (unsigned long long)st[s].valid_bytes, source,
                          (unsigned long long)counted[s]);
        }
    }
    return 0;
}

void checkpoint_install_space(struct kvftl *ftl, const struct stripe_info *st,
                              const struct checkpoint_streams *cs, uint32_t alloc_cursor)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    struct space *sp = &ftl->space;
    memcpy(sp->stripes, st, geo->stripes * sizeof(*st));
    sp->free_stripes = 0;
    for (uint32_t s = 0; s < geo->stripes; s++) {
        sp->free_stripes += st[s].state == STRIPE_FREE;
    }
    sp->alloc_cursor = alloc_cursor;
    sp->stripe_seq = cs->stripe_seq;
    sp->index.stripe = cs->index_stripe;
    if (cs->data_stripe != UINT32_MAX) {
        struct data_stream *ds = &sp->data;
        ds->stripe = cs->data_stripe;
        ds->base_ppn = (uint64_t)cs->data_stripe * geo->pages_per_stripe;
        ds->wp = ds->frontier = cs->data_wp;
        ds->prog_idx = ds->open_idx = (uint32_t)(cs->data_wp / geo->page_size);
    }
}

enum index_page_at checkpoint_index_page_at(const struct kvftl *ftl, const struct stripe_info *st,
                                            uint32_t open_idx, uint32_t ppn, uint32_t tag)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    if (ppn >= geo->total_pages) {
        return INDEX_PAGE_PAST_END;
    }
    uint32_t s = nand_stripe_of(&ftl->nand, ppn);
    const struct nand_oob *oob = &ftl->nand.oob[ppn];
    bool in_stream = st[s].state == STRIPE_INDEX ||
                     (st[s].state == STRIPE_OPEN_INDEX && ppn % geo->pages_per_stripe < open_idx);
    return in_stream && oob->kind == NAND_PAGE_INDEX && oob->tag == tag ? INDEX_PAGE_HELD
                                                                        : INDEX_PAGE_NOT_HELD;
}
