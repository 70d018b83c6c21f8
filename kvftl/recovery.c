/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Durability: checkpoint on orderly close, crash mount by scanning the value log. */
#include "ftl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib.h>
#include <xxhash.h>

struct checkpoint_head {
    uint64_t magic;
    uint64_t next_seq, stripe_seq;
    uint64_t live_keys, live_user_bytes, live_nand_bytes, tombstone_bytes, index_nand_bytes;
    uint64_t vl_wp;
    uint32_t global_depth, npages;
    uint32_t stream_stripe, stream_idx;
    uint32_t vl_stripe, alloc_cursor;
    uint32_t stripes, reserved;
    uint64_t hash_seed;      /* the index's secret key-hash seed: the pages below are hashed with it */
};

static struct image_header *image_header(struct kvftl *ftl)
{
    return (struct image_header *)ftl->nand.map;
}

static void header_sync(struct kvftl *ftl)
{
    if (ftl->nand.fd >= 0) {
        msync(ftl->nand.map, NAND_IMAGE_HEADER_BYTES, MS_SYNC);
    }
}

void recovery_format_image(struct kvftl *ftl)
{
    if (ftl->nand.fd < 0) {
        return;
    }
    struct image_header *h = image_header(ftl);
    memset(h, 0, sizeof(*h));
    h->magic = IMAGE_MAGIC;
    h->version = IMAGE_VERSION;
    h->clean = 0;
    h->channels = ftl->cfg.channels;
    h->dies_per_channel = ftl->cfg.dies_per_channel;
    h->blocks_per_die = ftl->cfg.blocks_per_die;
    h->pages_per_block = ftl->cfg.pages_per_block;
    h->page_size = ftl->cfg.page_size_bytes;
    h->placement_unit_bytes = ftl->cfg.placement_unit_bytes;
    h->index_page_bytes = ftl->cfg.index_page_bytes;
    h->large_blob_unit_bytes = ftl->cfg.large_blob_unit_bytes;
    h->page_data_bytes = ftl->cfg.page_data_bytes;
    header_sync(ftl);
}

void recovery_mark_dirty(struct kvftl *ftl)
{
    if (ftl->nand.fd >= 0) {
        image_header(ftl)->clean = 0;
        header_sync(ftl);
    }
}

/* Add every live key of the index to the Bloom filter (mount). */
static void bloom_rebuild(struct kvftl *ftl)
{
    if (!ftl->bloom_on) {
        return;
    }
    bloom_clear(&ftl->bloom);
    for (uint32_t p = 0; p < ftl->idx.npages; p++) {
        const uint8_t *mem = index_page_peek(ftl, p);
        if (!mem) {
            continue;
        }
        const struct index_entry *e = (const struct index_entry *)(mem + sizeof(struct index_page_header));
        for (uint32_t i = 0; i < ftl->idx.slots; i++) {
            if (e[i].loc && !loc_tombstone(e[i].loc)) {
                bloom_add(&ftl->bloom, e[i].hash);
            }
        }
    }
}

int recovery_checkpoint(struct kvftl *ftl)
{
    uint64_t now = ftl->now_max_ns;
    if (vlog_flush(ftl, &now) != 0 || index_cache_write_back(ftl, &now) != 0) {
        return -1;
    }
    struct index *ix = &ftl->idx;
    struct checkpoint_head ch = {
        .magic = IMAGE_MAGIC,
        .next_seq = ftl->vl.next_seq,
        .stripe_seq = ftl->stripe_seq,
        .live_keys = ftl->live_keys,
        .live_user_bytes = ftl->live_user_bytes,
        .live_nand_bytes = ftl->live_nand_bytes,
        .tombstone_bytes = ftl->tombstone_bytes,
        .index_nand_bytes = ftl->index_nand_bytes,
        .vl_wp = ftl->vl.wp,
        .global_depth = ix->global_depth,
        .npages = ix->npages,
        .stream_stripe = ix->stream_stripe,
        .stream_idx = ix->stream_idx,
        .vl_stripe = ftl->vl.stripe,
        .alloc_cursor = ftl->alloc_cursor,
        .stripes = ftl->nand.geo.stripes,
        .hash_seed = ix->hash_seed,
    };
    GByteArray *b = g_byte_array_new();
    g_byte_array_append(b, (const guint8 *)&ch, sizeof(ch));
    g_byte_array_append(b, (const guint8 *)ftl->stripes, ch.stripes * sizeof(struct stripe_info));
    g_byte_array_append(b, (const guint8 *)ix->dir, (sizeof(uint32_t) << ix->global_depth));
    g_byte_array_append(b, (const guint8 *)ix->page_ppn, ix->npages * sizeof(uint32_t));
    g_byte_array_append(b, (const guint8 *)ix->page_depth, ix->npages);

    int rc = 0;
    off_t off = (off_t)nand_checkpoint_offset(&ftl->nand);
    if (pwrite(ftl->nand.fd, b->data, b->len, off) != (ssize_t)b->len) {
        rc = -1;
    } else {
        nand_sync(&ftl->nand);
        struct image_header *h = image_header(ftl);
        h->checkpoint_bytes = b->len;
        h->checkpoint_checksum = XXH3_64bits(b->data, b->len);
        h->clean = 1;
        header_sync(ftl);
    }
    g_byte_array_free(b, TRUE);
    return rc;
}

static int load_checkpoint(struct kvftl *ftl)
{
    struct image_header *h = image_header(ftl);
    size_t len = h->checkpoint_bytes;
    if (len < sizeof(struct checkpoint_head) || len > (1ull << 34)) {
        return -1;
    }
    uint8_t *b = g_malloc(len);
    off_t off = (off_t)nand_checkpoint_offset(&ftl->nand);
    if (pread(ftl->nand.fd, b, len, off) != (ssize_t)len || XXH3_64bits(b, len) != h->checkpoint_checksum) {
        g_free(b);
        return -1;
    }
    struct checkpoint_head ch;
    memcpy(&ch, b, sizeof(ch));
    size_t need = sizeof(ch) + ch.stripes * sizeof(struct stripe_info) +
                  (sizeof(uint32_t) << ch.global_depth) + ch.npages * (sizeof(uint32_t) + 1);
    if (ch.magic != IMAGE_MAGIC || ch.stripes != ftl->nand.geo.stripes || ch.global_depth > INDEX_MAX_DEPTH ||
        need != len) {
        g_free(b);
        return -1;
    }
    struct index *ix = &ftl->idx;
    index_cache_drop(ftl);
    const uint8_t *p = b + sizeof(ch);
    memcpy(ftl->stripes, p, ch.stripes * sizeof(struct stripe_info));
    p += ch.stripes * sizeof(struct stripe_info);
    g_free(ix->dir);
    ix->global_depth = ch.global_depth;
    ix->dir = g_memdup2(p, sizeof(uint32_t) << ch.global_depth);
    p += sizeof(uint32_t) << ch.global_depth;
    ix->npages = 0;
    ix->pages_cap = 0;
    g_free(ix->page_ppn);
    g_free(ix->page_frame);
    g_free(ix->page_depth);
    ix->page_ppn = ix->page_frame = NULL;
    ix->page_depth = NULL;
    uint32_t cap = 16;
    while (cap < ch.npages) {
        cap *= 2;
    }
    ix->page_ppn = g_new(uint32_t, cap);
    ix->page_frame = g_new(uint32_t, cap);
    ix->page_depth = g_new(uint8_t, cap);
    ix->pages_cap = cap;
    ix->npages = ch.npages;
    memcpy(ix->page_ppn, p, ch.npages * sizeof(uint32_t));
    p += ch.npages * sizeof(uint32_t);
    memcpy(ix->page_depth, p, ch.npages);
    for (uint32_t i = 0; i < ch.npages; i++) {
        ix->page_frame[i] = UINT32_MAX;
    }
    ix->stream_stripe = ch.stream_stripe;
    ix->stream_idx = ch.stream_idx;
    ix->hash_seed = ch.hash_seed;

    ftl->vl.next_seq = ch.next_seq;
    ftl->stripe_seq = ch.stripe_seq;
    ftl->live_keys = ch.live_keys;
    ftl->live_user_bytes = ch.live_user_bytes;
    ftl->live_nand_bytes = ch.live_nand_bytes;
    ftl->tombstone_bytes = ch.tombstone_bytes;
    ftl->index_nand_bytes = ch.index_nand_bytes;
    ftl->alloc_cursor = ch.alloc_cursor;
    ftl->free_stripes = 0;
    for (uint32_t s = 0; s < ch.stripes; s++) {
        ftl->free_stripes += ftl->stripes[s].state == STRIPE_FREE;
    }

    struct value_log *vl = &ftl->vl;
    vlog_forget(ftl);
    if (ch.vl_stripe != UINT32_MAX) {
        uint32_t ps = ftl->nand.geo.page_size;
        vl->stripe = ch.vl_stripe;
        vl->base_ppn = (uint64_t)ch.vl_stripe * ftl->nand.geo.pages_per_stripe;
        vl->wp = vl->frontier = ch.vl_wp;
        vl->prog_idx = vl->open_idx = (uint32_t)(ch.vl_wp / ps);
    }
    g_free(b);
    bloom_rebuild(ftl);
    return 0;
}

int recovery_mount(struct kvftl *ftl, char *err, size_t err_len)
{
    struct image_header *h = image_header(ftl);
    const struct kvftl_config *c = &ftl->cfg;
    if (h->magic != IMAGE_MAGIC || h->version != IMAGE_VERSION) {
        snprintf(err, err_len, "image_path %s is not a kvftl image (bad magic or version)",
                 c->image_path);
        return -1;
    }
#define SAME(field, cfgfield)                                                                 \
    if (h->field != c->cfgfield) {                                                            \
        snprintf(err, err_len, "image_path %s was made with " #cfgfield " %u; the "           \
                 "configuration says %u", c->image_path, h->field, c->cfgfield);              \
        return -1;                                                                            \
    }
    SAME(channels, channels)
    SAME(dies_per_channel, dies_per_channel)
    SAME(blocks_per_die, blocks_per_die)
    SAME(pages_per_block, pages_per_block)
    SAME(page_size, page_size_bytes)
    SAME(placement_unit_bytes, placement_unit_bytes)
    SAME(index_page_bytes, index_page_bytes)
    SAME(large_blob_unit_bytes, large_blob_unit_bytes)
    SAME(page_data_bytes, page_data_bytes)
#undef SAME
    if (h->clean && load_checkpoint(ftl) == 0) {
        recovery_mark_dirty(ftl);
        return 0;
    }
    if (recovery_scan(ftl, err, err_len) != 0) {
        return -1;
    }
    recovery_mark_dirty(ftl);
    return 0;
}

struct scan_stripe {
    uint32_t stripe;
    uint64_t seq;
};

static int scan_cmp(const void *a, const void *b)
{
    const struct scan_stripe *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Apply one intact record found by the scan. */
static void scan_apply(struct kvftl *ftl, const struct blob_header *h, const uint8_t *key,
                       uint64_t addr, uint64_t *now)
{
    uint32_t len = BLOB_HEADER_BYTES + h->key_bytes + h->value_bytes;
    bool tomb = h->type == REC_TOMBSTONE;
    uint64_t newloc = loc_make(addr, len, tomb);
    uint64_t hash = index_hash(&ftl->idx, key, h->key_bytes);
    uint64_t oldloc = 0;
    struct index_pos pos;
    if (index_find(ftl, hash, key, h->key_bytes, &oldloc, &pos, now)) {
        struct blob_header old;
        memcpy(&old, ftl->nand.data + loc_addr(oldloc), sizeof(old));
        if (old.seq > h->seq) {
            return; /* a newer record of this key was already seen */
        }
        index_set(ftl, &pos, newloc, now);
    } else {
        oldloc = 0;
        if (index_insert(ftl, hash, newloc, now) != 0) {
            return;
        }
    }
    /* account_replace() equivalent */
    if (oldloc) {
        uint32_t occ = vlog_occupied(&ftl->vl, loc_len(oldloc));
        gc_valid_add(ftl, loc_addr(oldloc), -(int64_t)occ, 0);
        if (loc_tombstone(oldloc)) {
            ftl->tombstone_bytes -= occ;
        } else {
            ftl->live_keys--;
            ftl->live_nand_bytes -= occ;
            ftl->live_user_bytes -= loc_len(oldloc) - BLOB_HEADER_BYTES;
        }
    }
    uint32_t occ = vlog_occupied(&ftl->vl, len);
    gc_valid_add(ftl, addr, occ, h->seq);
    if (tomb) {
        ftl->tombstone_bytes += occ;
    } else {
        ftl->live_keys++;
        ftl->live_nand_bytes += occ;
        ftl->live_user_bytes += len - BLOB_HEADER_BYTES;
    }
}

/* Scan one data stripe; returns the largest sequence number seen. */
static uint64_t scan_stripe(struct kvftl *ftl, uint32_t s, uint64_t *now)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    uint64_t base = (uint64_t)s * geo->stripe_bytes;
    uint64_t base_ppn = (uint64_t)s * geo->pages_per_stripe;
    uint64_t max_seq = 0, pos = 0, read_upto = 0;
    struct stripe_info *si = &ftl->stripes[s];

    while (pos < geo->stripe_bytes) {
        uint64_t idx = pos / geo->page_size;
        if (!nand_page_programmed(&ftl->nand, base_ppn + idx)) {
            break;
        }
        for (; read_upto <= idx; read_upto++) {
            *now = nand_read(&ftl->nand, base_ppn + read_upto, geo->page_size, *now);
        }
        const uint8_t *p = ftl->nand.data + base + pos;
        if (p[0] == REC_PAD1) {
            pos++;
            continue;
        }
        if (p[0] == REC_PAD) {
            uint32_t len;
            memcpy(&len, p + 4, 4);
            if (len < 8) {
                break;
            }
            pos += len;
            continue;
        }
        if ((p[0] != REC_PAIR && p[0] != REC_TOMBSTONE) || pos + BLOB_HEADER_BYTES > geo->stripe_bytes) {
            break;
        }
        struct blob_header h;
        memcpy(&h, p, sizeof(h));
        uint64_t len = BLOB_HEADER_BYTES + (uint64_t)h.key_bytes + h.value_bytes;
        if (h.key_bytes == 0 || h.value_bytes > KVFTL_VALUE_MAX_BYTES ||
            (h.type == REC_TOMBSTONE && h.value_bytes) || pos + len > geo->stripe_bytes) {
            break;
        }
        const uint8_t *key = p + BLOB_HEADER_BYTES;
        if (blob_checksum(h.type, h.key_bytes, h.value_bytes, h.seq, key, key + h.key_bytes) ==
            h.checksum) {
            scan_apply(ftl, &h, key, base + pos, now);
            if (h.seq > max_seq) {
                max_seq = h.seq;
            }
            if (h.seq < si->min_blob_seq) {
                si->min_blob_seq = h.seq;
            }
        }
        /* a record that fails its checksum was half written: skip it */
        pos += vlog_occupied(&ftl->vl, (uint32_t)len);
    }
    return max_seq;
}

/* Write a pad record over stripe bytes [from, to) at @p (the bytes are zero). */
static void pad_gap(uint8_t *p, uint64_t from, uint64_t to)
{
    uint64_t gap = to - from;
    if (gap >= 8) {
        uint32_t len = (uint32_t)gap;
        p[from] = REC_PAD;
        memcpy(p + from + 4, &len, 4);
    } else {
        memset(p + from, REC_PAD1, gap);
    }
}

/*
 * Replay the PLP dump for stripe @s whose pages [@first, @last] are still
 * marked buffered (the process died with them in the page buffer): do what
 * vlog_flush() would have done -- pad every gap (backfill leaves zero gaps
 * before values placed ahead of the write pointer) and the rest of the last
 * page -- then mark the pages programmed. Records are walked from the start
 * of the stripe; a zero byte inside a buffered page starts a gap that ends
 * at the next non-zero byte (every record starts with a non-zero type
 * byte). A blob whose copy was cut short keeps its header's length and
 * fails its checksum, so the scan skips it. The pads go in before the
 * pages change kind, so a replay cut short is simply done again.
 */
static void replay_buffered_stripe(struct kvftl *ftl, uint32_t s, uint32_t first, uint32_t last)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    uint64_t base_ppn = (uint64_t)s * geo->pages_per_stripe;
    uint8_t *p = ftl->nand.data + (uint64_t)s * geo->stripe_bytes;
    uint64_t start = (uint64_t)first * geo->page_size;
    uint64_t end = ((uint64_t)last + 1) * geo->page_size;
    uint64_t pos = 0;

    while (pos < end) {
        uint8_t type = p[pos];
        if (type == REC_ERASED) {
            if (pos < start) {
                break; /* a programmed page ends the log: nothing was buffered after it */
            }
            uint64_t q = pos;
            while (q < end && p[q] == 0) {
                q++;
            }
            pad_gap(p, pos, q);
            pos = q;
            continue;
        }
        if (type == REC_PAD1) {
            pos++;
            continue;
        }
        if (type == REC_PAD) {
            uint32_t len;
            memcpy(&len, p + pos + 4, 4);
            if (len < 8) {
                break;
            }
            pos += len;
            continue;
        }
        struct blob_header h;
        if ((type != REC_PAIR && type != REC_TOMBSTONE) || pos + BLOB_HEADER_BYTES > geo->stripe_bytes) {
            break;
        }
        memcpy(&h, p + pos, sizeof(h));
        uint64_t len = BLOB_HEADER_BYTES + (uint64_t)h.key_bytes + h.value_bytes;
        if (h.key_bytes == 0 || h.value_bytes > KVFTL_VALUE_MAX_BYTES || pos + len > geo->stripe_bytes) {
            break; /* not a record: the scan stops here too */
        }
        pos += vlog_occupied(&ftl->vl, (uint32_t)len);
    }
    for (uint32_t i = first; i <= last; i++) {
        if (ftl->nand.oob[base_ppn + i].kind == NAND_PAGE_BUFFERED) {
            ftl->nand.oob[base_ppn + i].kind = NAND_PAGE_DATA;
        }
    }
}

/*
 * Pages a dead process left marked buffered: with PLP they were durable
 * (replayed as programmed); without it they never reached NAND (their
 * marks are dropped; the bytes stay until the stripe is erased, unread,
 * because the scan stops at the first page not programmed).
 */
static void resolve_buffered(struct kvftl *ftl)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    for (uint32_t s = 0; s < geo->stripes; s++) {
        uint64_t base_ppn = (uint64_t)s * geo->pages_per_stripe;
        uint32_t first = UINT32_MAX, last = 0;
        for (uint32_t i = 0; i < geo->pages_per_stripe; i++) {
            struct nand_oob *o = &ftl->nand.oob[base_ppn + i];
            if (o->kind != NAND_PAGE_BUFFERED) {
                continue;
            }
            if (!ftl->cfg.plp) {
                o->kind = NAND_PAGE_ERASED;
                continue;
            }
            first = first == UINT32_MAX ? i : first;
            last = i;
        }
        if (first != UINT32_MAX) {
            replay_buffered_stripe(ftl, s, first, last);
        }
    }
}

int recovery_scan(struct kvftl *ftl, char *err, size_t err_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    uint64_t now = ftl->now_max_ns;
    ftl_reset_state(ftl);
    resolve_buffered(ftl);

    struct scan_stripe *order = g_new(struct scan_stripe, geo->stripes);
    uint32_t ndata = 0;
    uint64_t max_stripe_seq = 0;
    for (uint32_t s = 0; s < geo->stripes; s++) {
        uint64_t first = (uint64_t)s * geo->pages_per_stripe;
        struct stripe_info *si = &ftl->stripes[s];
        bool any = ftl->nand.torn_ppn >= first && ftl->nand.torn_ppn < first + geo->pages_per_stripe;
        for (uint32_t i = 0; i < geo->pages_per_stripe && !any; i++) {
            any = nand_page_programmed(&ftl->nand, first + i);
        }
        /* bytes left by a page buffer that never reached NAND also need an erase */
        si->erased = !any && ftl->nand.data[first * geo->page_size] == 0;
        si->state = STRIPE_FREE;
        const struct nand_oob *oob = &ftl->nand.oob[first];
        if (oob->kind != NAND_PAGE_ERASED) {
            now = nand_read(&ftl->nand, first, 0, now);
            if (oob->seq + 1 > max_stripe_seq) {
                max_stripe_seq = oob->seq + 1;
            }
        }
        if (oob->kind == NAND_PAGE_DATA) {
            order[ndata].stripe = s;
            order[ndata].seq = oob->seq;
            ndata++;
        }
        /* index stripes are rebuilt from the log: they become free */
    }
    qsort(order, ndata, sizeof(*order), scan_cmp);
    uint64_t max_seq = 0;
    for (uint32_t i = 0; i < ndata; i++) {
        struct stripe_info *si = &ftl->stripes[order[i].stripe];
        si->state = STRIPE_DATA; /* the log continues in a fresh stripe */
        si->open_seq = order[i].seq;
        si->last_write_ns = now;
        ftl->free_stripes--;
    }
    for (uint32_t i = 0; i < ndata; i++) {
        uint64_t m = scan_stripe(ftl, order[i].stripe, &now);
        max_seq = m > max_seq ? m : max_seq;
    }
    g_free(order);
    if (max_seq + 1 > ftl->vl.next_seq) {
        ftl->vl.next_seq = max_seq + 1;
    }
    if (max_stripe_seq > ftl->stripe_seq) {
        ftl->stripe_seq = max_stripe_seq;
    }
    bloom_rebuild(ftl);
    if (now > ftl->now_max_ns) {
        ftl->now_max_ns = now;
    }
    (void)err;
    (void)err_len;
    return 0;
}
