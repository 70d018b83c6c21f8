/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvftl_check(): cross-check the index against the value log and the
 * free-space accounting. Reads without touching the clock, the cache or
 * the counters.
 */
#include "ftl.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>

#define BAD(...)                                      \
    do {                                              \
        if (err && err_len) {                         \
            snprintf(err, err_len, __VA_ARGS__);      \
        }                                             \
        rc = -1;                                      \
        goto out;                                     \
    } while (0)

/* Copy @len bytes at @addr (buffered or programmed), no accounting. */
static void raw_read(const struct kvftl *ftl, uint64_t addr, uint32_t len, uint8_t *dst)
{
    memcpy(dst, ftl->nand.data + addr, len);
}

int kvftl_check(struct kvftl *ftl, char *err, size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct index *ix = &ftl->idx;
    uint32_t n = geo->stripes;
    uint64_t *valid = g_new0(uint64_t, n);
    uint8_t *blob = NULL;
    uint64_t keys = 0, user = 0, nandb = 0, tomb = 0, index_bytes = 0;
    int rc = 0;

    for (uint32_t p = 0; p < ix->npages; p++) {
        const uint8_t *mem = index_page_peek(ftl, p);
        if (!mem) {
            BAD("index page %u is neither cached nor in NAND", p);
        }
        const struct index_page_header *h = (const struct index_page_header *)mem;
        const struct index_entry *e = (const struct index_entry *)(mem + sizeof(*h));
        if (h->magic != INDEX_PAGE_MAGIC || h->page_id != p) {
            BAD("index page %u has a bad header (magic %#x, id %u)", p, h->magic, h->page_id);
        }
        uint32_t count = 0;
        for (uint32_t i = 0; i < ix->slots; i++) {
            if (!e[i].loc) {
                continue;
            }
            count++;
            uint64_t first, last;
            if (index_page_of(ix, e[i].hash, &first, &last) != p) {
                BAD("index page %u holds hash %#llx that the directory sends elsewhere", p,
                    (unsigned long long)e[i].hash);
            }
            uint64_t addr = loc_addr(e[i].loc);
            uint32_t len = loc_len(e[i].loc);
            uint32_t s = (uint32_t)(addr / geo->stripe_bytes);
            if (addr + len > geo->total_bytes || len < BLOB_HEADER_BYTES + 1 ||
                (ftl->stripes[s].state != STRIPE_DATA && ftl->stripes[s].state != STRIPE_OPEN_DATA)) {
                BAD("index entry %#llx points outside the value log (address %llu, %u bytes)",
                    (unsigned long long)e[i].hash, (unsigned long long)addr, len);
            }
            blob = g_realloc(blob, len);
            raw_read(ftl, addr, len, blob);
            struct blob_header bh;
            memcpy(&bh, blob, sizeof(bh));
            bool is_tomb = loc_tombstone(e[i].loc);
            if (bh.type != (is_tomb ? REC_TOMBSTONE : REC_PAIR) ||
                BLOB_HEADER_BYTES + bh.key_bytes + bh.value_bytes != len) {
                BAD("blob at %llu does not match its index entry (type %#x, %u+%u bytes)",
                    (unsigned long long)addr, bh.type, bh.key_bytes, bh.value_bytes);
            }
            const uint8_t *key = blob + BLOB_HEADER_BYTES;
            if (blob_checksum(bh.type, bh.key_bytes, bh.value_bytes, bh.seq, key,
                              key + bh.key_bytes) != bh.checksum) {
                BAD("blob at %llu fails its checksum", (unsigned long long)addr);
            }
            if (index_hash(ix, key, bh.key_bytes) != e[i].hash) {
                BAD("blob at %llu has a key whose hash is not its entry's", (unsigned long long)addr);
            }
            uint32_t occ = vlog_occupied(&ftl->vl, len);
            valid[s] += occ;
            if (is_tomb) {
                tomb += occ;
            } else {
                keys++;
                user += len - BLOB_HEADER_BYTES;
                nandb += occ;
            }
        }
        if (count != h->count) {
            BAD("index page %u counts %u entries but holds %u", p, h->count, count);
        }
        if (ix->page_ppn[p] != UINT32_MAX) {
            valid[ix->page_ppn[p] / geo->pages_per_stripe] += geo->page_size;
            index_bytes += geo->page_size;
        }
    }
    uint32_t free_count = 0;
    for (uint32_t s = 0; s < n; s++) {
        free_count += ftl->stripes[s].state == STRIPE_FREE;
        if (valid[s] != ftl->stripes[s].valid_bytes) {
            BAD("stripe %u accounts %llu valid bytes; the index references %llu", s,
                (unsigned long long)ftl->stripes[s].valid_bytes, (unsigned long long)valid[s]);
        }
    }
    if (free_count != ftl->free_stripes) {
        BAD("%u stripes are free but the free count is %u", free_count, ftl->free_stripes);
    }
    if (keys != ftl->live_keys || user != ftl->live_user_bytes || nandb != ftl->live_nand_bytes ||
        tomb != ftl->tombstone_bytes || index_bytes != ftl->index_nand_bytes) {
        BAD("gauges disagree with the index: keys %llu/%llu, user bytes %llu/%llu, nand bytes "
            "%llu/%llu, tombstone bytes %llu/%llu, index bytes %llu/%llu",
            (unsigned long long)ftl->live_keys, (unsigned long long)keys,
            (unsigned long long)ftl->live_user_bytes, (unsigned long long)user,
            (unsigned long long)ftl->live_nand_bytes, (unsigned long long)nandb,
            (unsigned long long)ftl->tombstone_bytes, (unsigned long long)tomb,
            (unsigned long long)ftl->index_nand_bytes, (unsigned long long)index_bytes);
    }
out:
    g_free(valid);
    g_free(blob);
    return rc;
}
