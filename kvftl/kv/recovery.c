/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Durability: checkpoint on orderly close, crash mount by scanning the value log. */
#include "recovery.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <xxhash.h>

#include "block_recovery.h"
#include "checkpoint.h"
#include "ftl.h"
#include "nand.h"
#include "refuse.h"
#include "space.h"
#include "value_log.h"

uint64_t checkpoint_length(uint32_t stripes, uint32_t global_depth, uint32_t npages)
{
    return sizeof(struct checkpoint_head) + (uint64_t)stripes * sizeof(struct stripe_info) +
           ((uint64_t)sizeof(uint32_t) << global_depth) +
           (uint64_t)npages * (sizeof(uint32_t) + 1 + sizeof(uint64_t));
}

const char *kvftl_mount_note(const struct kvftl *ftl)
{
    return ftl->mount.note[0] ? ftl->mount.note : NULL;
}

/* Only the header is read, through a bounded pread: nothing of the image is trusted but it. */
bool kvftl_config_image_index(struct kvftl_config *cfg)
{
    struct image_header h;
    if (cfg->command_set != KVFTL_CMDSET_KV || !cfg->image_path) {
        return false;
    }
    int fd = open(cfg->image_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    ssize_t got = pread(fd, &h, sizeof(h), 0);
    close(fd);
    if (got != (ssize_t)sizeof(h) || h.magic != IMAGE_MAGIC || h.version != IMAGE_VERSION ||
        h.command_set != KVFTL_CMDSET_KV || h.index_design > KVFTL_INDEX_LSM) {
        return false; /* no kv image with a known design: kvftl_open() says what it is */
    }
    cfg->index = (enum kvftl_index)h.index_design;
    return true;
}

void recovery_format_image(struct kvftl *ftl)
{
    if (ftl->nand.fd < 0) {
        return;
    }
    struct image_header *h = checkpoint_image_header(ftl);
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
    h->command_set = ftl->cfg.command_set;
    h->lba_bytes = ftl->cfg.command_set == KVFTL_CMDSET_NVM ? ftl->cfg.lba_bytes : 0;
    h->units = ftl->nvm ? ftl->pmap.units : 0;
    h->index_design = ftl->nvm ? 0 : ftl->cfg.index;
    checkpoint_header_sync(ftl);
}

void recovery_mark_dirty(struct kvftl *ftl)
{
    if (ftl->nand.fd >= 0) {
        checkpoint_image_header(ftl)->clean = 0;
        checkpoint_header_sync(ftl);
    }
}

int recovery_checkpoint(struct kvftl *ftl)
{
    if (ftl->nvm) {
        GByteArray *b = block_recovery_checkpoint(ftl);
        return b ? checkpoint_write(ftl, b) : -1;
    }
    uint64_t now = ftl->now_max_ns;
    if (vlog_flush(&ftl->vl, &now) != 0 || kv_index_write_back(&ftl->index, &now) != 0) {
        return -1;
    }
    /* the design's part is built first: it names the head's index fields */
    GByteArray *part = g_byte_array_new();
    struct kv_index_ckpt_head ih;
    kv_index_ckpt_save(&ftl->index, &ih, part);
    struct checkpoint_head ch = {
        .magic = IMAGE_MAGIC,
        .next_seq = ftl->vl.next_seq,
        .stripe_seq = ftl->space.stripe_seq,
        .live_keys = ftl->vl.live.keys,
        .live_user_bytes = ftl->vl.live.user_bytes,
        .live_nand_bytes = ftl->vl.live.nand_bytes,
        .tombstone_bytes = ftl->vl.live.tombstone_bytes,
        .index_nand_bytes = ih.nand_bytes,
        .vl_wp = ftl->space.data.wp,
        .global_depth = ih.count_a,
        .npages = ih.count_b,
        .stream_stripe = ftl->space.index.stripe,
        .stream_idx = ftl->space.index.idx,
        .vl_stripe = ftl->space.data.stripe,
        .alloc_cursor = ftl->space.alloc_cursor,
        .stripes = ftl->nand.geo.stripes,
        .layout = CHECKPOINT_LAYOUT,
        .hash_seed = ih.hash_seed,
    };
    GByteArray *b = g_byte_array_new();
    g_byte_array_append(b, (const guint8 *)&ch, sizeof(ch));
    g_byte_array_append(b, (const guint8 *)ftl->space.stripes,
                        ch.stripes * sizeof(struct stripe_info));
    g_byte_array_append(b, part->data, part->len);
    g_byte_array_free(part, TRUE);
    return checkpoint_write(ftl, b);
}

/* The largest checkpoint this geometry can have (the design's longest index part). */
static uint64_t checkpoint_max_length(const struct kvftl *ftl)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    return sizeof(struct checkpoint_head) + (uint64_t)geo->stripes * sizeof(struct stripe_info) +
           kv_index_ckpt_max_length(&ftl->index, geo->total_pages);
}

/*
 * A KV checkpoint being checked (load_checkpoint()): its bytes, read from
 * the image file and hostile until checked, and what the checks derive.
 * Each step returns 0, or -1 with a sentence fragment in (why, why_len)
 * that the mount note quotes: the first problem found.
 */
struct kv_checkpoint {
    uint8_t *b;
    uint64_t len;
    struct checkpoint_head ch;
    struct kv_index_ckpt_head ih; /* the head's index fields */
    struct checkpoint_streams cs;
    struct stripe_info *st; /* the stripe table */
    const uint8_t *part;    /* the index design's part after it */
    uint64_t *valid;        /* [stripes]: the valid bytes the index references */
    struct live_gauges t;   /* the gauges its entries add up to */
    uint64_t index_bytes;   /* NAND bytes of its index pages */
    const struct kvftl *ftl;
};

/* May a live blob be at (@addr, @len): a data stripe, before the open one's write pointer? */
static bool ckpt_blob_inside(const void *opaque, uint64_t addr, uint32_t len)
{
    const struct kv_checkpoint *c = opaque;
    const struct nand_geometry *geo = &c->ftl->nand.geo;
    if (addr + len > geo->total_bytes) {
        return false;
    }
    uint32_t s = (uint32_t)(addr / geo->stripe_bytes);
    const struct stripe_info *st = c->st;
    return (addr + len - 1) / geo->stripe_bytes == s &&
           (st[s].state == STRIPE_DATA ||
            (st[s].state == STRIPE_OPEN_DATA && s == c->ch.vl_stripe &&
             addr % geo->stripe_bytes + len <= c->ch.vl_wp));
}

/* Does NAND page @ppn hold index page @tag, as the checkpoint's stripes say? */
static int ckpt_page_at(const void *opaque, uint32_t ppn, uint32_t tag, char *why, size_t why_len)
{
    const struct kv_checkpoint *c = opaque;
    const struct kvftl *ftl = c->ftl;
    enum index_page_at at = checkpoint_index_page_at(ftl, c->st, c->ch.stream_idx, ppn, tag);
    if (at == INDEX_PAGE_PAST_END) {
        return refuse(why, why_len, "index page %u is at NAND page %u, past the last page (%llu)",
                      tag, ppn, (unsigned long long)ftl->nand.geo.total_pages - 1);
    }
    if (at == INDEX_PAGE_NOT_HELD) {
        return refuse(why, why_len,
                      "index page %u is at NAND page %u, which is not an index page (spare "
                      "area kind %#x, page %u)",
                      tag, ppn, ftl->nand.oob[ppn].kind, ftl->nand.oob[ppn].tag);
    }
    return 0;
}

/* The key of the blob at @loc if its header matches @loc (a sample read back). */
static const uint8_t *ckpt_blob_key(const void *opaque, uint64_t loc, uint8_t *buf,
                                    uint32_t *key_bytes)
{
    const struct kv_checkpoint *c = opaque;
    uint32_t len = loc_len(loc);
    uint32_t cap = BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES; /* key_bytes is 8 bits */
    const uint8_t *blob = nand_view(&c->ftl->nand, loc_addr(loc), len < cap ? len : cap, buf);
    struct blob_header bh;
    memcpy(&bh, blob, sizeof(bh));
    if (bh.type != (loc_tombstone(loc) ? REC_TOMBSTONE : REC_PAIR) || !bh.key_bytes ||
        BLOB_HEADER_BYTES + (uint64_t)bh.key_bytes + bh.value_bytes != len) {
        return NULL;
    }
    *key_bytes = bh.key_bytes;
    return blob + BLOB_HEADER_BYTES;
}

/* Read the checkpoint's bytes and its head. */
static int kv_checkpoint_read(struct kvftl *ftl, struct kv_checkpoint *c, char *why, size_t why_len)
{
    uint64_t len = checkpoint_image_header(ftl)->checkpoint_bytes;
    if (len < sizeof(struct checkpoint_head)) {
        return refuse(why, why_len, "the checkpoint is %llu bytes, shorter than its %zu-byte head",
                      (unsigned long long)len, sizeof(struct checkpoint_head));
    }
    c->b = checkpoint_read(ftl, checkpoint_max_length(ftl), false, &c->len, why, why_len);
    if (!c->b) {
        return -1;
    }
    memcpy(&c->ch, c->b, sizeof(c->ch));
    c->ih = (struct kv_index_ckpt_head){
        .count_a = c->ch.global_depth,
        .count_b = c->ch.npages,
        .hash_seed = c->ch.hash_seed,
        .nand_bytes = c->ch.index_nand_bytes,
    };
    return 0;
}

/* The head's identity and counts: the geometry's, and the checkpoint's length. */
static int kv_head_check(const struct kvftl *ftl, const struct kv_checkpoint *c, char *why,
                         size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct checkpoint_head *ch = &c->ch;
    if (ch->magic != IMAGE_MAGIC) {
        return refuse(why, why_len, "the checkpoint has a bad magic number");
    }
    if (ch->layout != CHECKPOINT_LAYOUT) {
        return refuse(why, why_len,
                      "the checkpoint was written by %s kvftl (layout %u; this one reads layout "
                      "%u)",
                      ch->layout < CHECKPOINT_LAYOUT ? "an older" : "another", ch->layout,
                      CHECKPOINT_LAYOUT);
    }
    if (ch->stripes != geo->stripes) {
        return refuse(why, why_len, "it describes %u stripes; the image has %u", ch->stripes,
                      geo->stripes);
    }
    uint64_t part = kv_index_ckpt_length(&ftl->index, &c->ih, geo->total_pages, why, why_len);
    if (part == UINT64_MAX) {
        return -1;
    }
    uint64_t want = sizeof(struct checkpoint_head) +
                    (uint64_t)ch->stripes * sizeof(struct stripe_info) + part;
    if (c->len != want) {
        return refuse(why, why_len, "the checkpoint is %llu bytes; its counts make %llu",
                      (unsigned long long)c->len, (unsigned long long)want);
    }
    return 0;
}

/* The open streams and the allocation cursor inside the geometry. */
static int kv_streams_check(const struct kvftl *ftl, struct kv_checkpoint *c, char *why,
                            size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    const struct checkpoint_head *ch = &c->ch;
    if (ch->vl_stripe != UINT32_MAX && ch->vl_stripe >= geo->stripes) {
        return refuse(why, why_len, "the open data stripe is %u; it must be below %u (or none)",
                      ch->vl_stripe, geo->stripes);
    }
    if (ch->vl_stripe != UINT32_MAX &&
        (ch->vl_wp % geo->page_size || ch->vl_wp >= geo->stripe_bytes)) {
        return refuse(why, why_len,
                      "the write pointer %llu of the open data stripe is not a page boundary "
                      "inside the stripe (%llu bytes)",
                      (unsigned long long)ch->vl_wp, (unsigned long long)geo->stripe_bytes);
    }
    if (ch->stream_stripe != UINT32_MAX && ch->stream_stripe >= geo->stripes) {
        return refuse(why, why_len,
                      "the index stream's stripe is %u; it must be below %u (or none)",
                      ch->stream_stripe, geo->stripes);
    }
    if (ch->stream_stripe != UINT32_MAX && ch->stream_idx > geo->pages_per_stripe) {
        return refuse(why, why_len, "the index stream's next page is %u; a stripe has %u pages",
                      ch->stream_idx, geo->pages_per_stripe);
    }
    if (ch->alloc_cursor >= geo->stripes) {
        return refuse(why, why_len, "the allocation cursor is %u; it must be below %u",
                      ch->alloc_cursor, geo->stripes);
    }
    c->cs = (struct checkpoint_streams){
        .data_stripe = ch->vl_stripe,
        .data_wp = ch->vl_wp,
        .index_stripe = ch->stream_stripe,
        .index_idx = ch->stream_idx,
        .stripe_seq = ch->stripe_seq,
    };
    return 0;
}

/* The stripe table (checkpoint_stripes_parse()) and the blobs' sequence numbers it bounds. */
static int kv_stripes_check(const struct kvftl *ftl, struct kv_checkpoint *c, char *why,
                            size_t why_len)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    c->st = g_new(struct stripe_info, geo->stripes);
    if (checkpoint_stripes_parse(ftl, c->b + sizeof(c->ch), &c->cs, c->st, why, why_len) != 0) {
        return -1;
    }
    uint64_t max_blob_seq = 0;
    for (uint32_t s = 0; s < geo->stripes; s++) {
        const struct stripe_info *si = &c->st[s];
        if (si->state != STRIPE_FREE && si->min_blob_seq != UINT64_MAX &&
            si->min_blob_seq > max_blob_seq) {
            max_blob_seq = si->min_blob_seq;
        }
    }
    if (max_blob_seq >= c->ch.next_seq) {
        return refuse(why, why_len, "the next sequence number %llu is not above the blobs' (%llu)",
                      (unsigned long long)c->ch.next_seq, (unsigned long long)max_blob_seq);
    }
    c->part = c->b + sizeof(c->ch) + (uint64_t)geo->stripes * sizeof(struct stripe_info);
    return 0;
}

/* The index design's part: its structure and pages, and what they reference. */
static int kv_index_part_check(struct kvftl *ftl, struct kv_checkpoint *c, char *why,
                               size_t why_len)
{
    c->valid = g_new0(uint64_t, ftl->nand.geo.stripes);
    struct kv_index_ckpt_ctx ctx = {
        .opaque = c,
        .blob_inside = ckpt_blob_inside,
        .page_at = ckpt_page_at,
        .blob_key = ckpt_blob_key,
        .valid = c->valid,
        .t = &c->t,
    };
    int rc = kv_index_ckpt_check(&ftl->index, &c->ih, c->part, &ctx, why, why_len);
    c->index_bytes = ctx.index_bytes;
    return rc;
}

/* The accounting the entries imply: valid bytes per stripe, the live gauges. */
static int kv_accounting_check(const struct kvftl *ftl, const struct kv_checkpoint *c, char *why,
                               size_t why_len)
{
    if (checkpoint_valid_match(ftl, c->st, c->valid, "its index", why, why_len) != 0) {
        return -1;
    }
    const struct checkpoint_head *ch = &c->ch;
    const struct {
        const char *name;
        uint64_t said, counted;
    } gauges[] = {
        {"live keys", ch->live_keys, c->t.keys},
        {"live user bytes", ch->live_user_bytes, c->t.user_bytes},
        {"live NAND bytes", ch->live_nand_bytes, c->t.nand_bytes},
        {"tombstone bytes", ch->tombstone_bytes, c->t.tombstone_bytes},
        {"index NAND bytes", ch->index_nand_bytes, c->index_bytes},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(gauges); i++) {
        if (gauges[i].said != gauges[i].counted) {
            return refuse(why, why_len, "the checkpoint counts %s %llu but its index holds %llu",
                          gauges[i].name, (unsigned long long)gauges[i].said,
                          (unsigned long long)gauges[i].counted);
        }
    }
    return 0;
}

/* All checked: the checkpoint becomes the index, the value log's state and the space's. */
static void kv_checkpoint_install(struct kvftl *ftl, const struct kv_checkpoint *c)
{
    const struct checkpoint_head *ch = &c->ch;
    kv_index_ckpt_install(&ftl->index, &c->ih, c->part);

    ftl->vl.next_seq = ch->next_seq;
    ftl->vl.live = (struct live_gauges){
        .keys = ch->live_keys,
        .user_bytes = ch->live_user_bytes,
        .nand_bytes = ch->live_nand_bytes,
        .tombstone_bytes = ch->tombstone_bytes,
    };
    vlog_forget(&ftl->vl);
    checkpoint_install_space(ftl, c->st, &c->cs, ch->alloc_cursor);
    ftl->space.index.idx = ch->stream_idx;
    kv_index_rebuilt(&ftl->index);
}

/*
 * Mount from the checkpoint. Every field is checked against the geometry
 * and against the others (the directory's structure, each index page's
 * checksum and entries, the accounting the entries imply, the open stripes
 * against the spare areas) before anything is loaded; on the first problem
 * nothing is changed and a sentence fragment in @why says what it was.
 */
static int load_checkpoint(struct kvftl *ftl, char *why, size_t why_len)
{
    if (ftl->nvm) {
        /* the nvm checkpoint: read and checked here, its fields in block_recovery.c */
        uint64_t len;
        uint8_t *b = checkpoint_read(
            ftl, block_checkpoint_length(ftl->nand.geo.stripes, ftl->pmap.tpages), true, &len, why,
            why_len);
        int rc = b ? block_recovery_load(ftl, b, len, why, why_len) : -1;
        g_free(b);
        return rc;
    }
    struct kv_checkpoint c = {.ftl = ftl};
    int rc = -1;
    if (kv_checkpoint_read(ftl, &c, why, why_len) == 0 &&
        kv_head_check(ftl, &c, why, why_len) == 0 && kv_streams_check(ftl, &c, why, why_len) == 0 &&
        kv_stripes_check(ftl, &c, why, why_len) == 0 &&
        kv_index_part_check(ftl, &c, why, why_len) == 0 &&
        kv_accounting_check(ftl, &c, why, why_len) == 0) {
        kv_checkpoint_install(ftl, &c);
        rc = 0;
    }
    g_free(c.b);
    g_free(c.st);
    g_free(c.valid);
    return rc;
}

/* The sentence kvftl_mount_note() gives after a mount that scanned the log. */
static void mount_note(struct kvftl *ftl)
{
    struct recovery_report *r = &ftl->mount;
    GString *s = g_string_new(NULL);
    if (r->why[0]) {
        g_string_append_printf(s, "image_path %s: %s; the index was rebuilt by scanning the log",
                               ftl->cfg.image_path, r->why);
    } else {
        g_string_append_printf(s,
                               "image_path %s was not closed cleanly; the index was rebuilt by "
                               "scanning the log",
                               ftl->cfg.image_path);
    }
    g_string_append_printf(s, ": %llu keys found", (unsigned long long)r->keys);
    if (r->bad_checksums) {
        bool one = r->bad_checksums == 1;
        g_string_append_printf(s,
                               "; %llu record%s whose checksum%s fail%s %s skipped (a Store cut "
                               "short by the crash, or damage)",
                               (unsigned long long)r->bad_checksums, one ? "" : "s", one ? "" : "s",
                               one ? "s" : "", one ? "was" : "were");
    }
    if (r->unindexed) {
        bool one = r->unindexed == 1;
        g_string_append_printf(s,
                               "; %llu intact record%s could not be indexed (too many keys share "
                               "a hash prefix) and %s lost",
                               (unsigned long long)r->unindexed, one ? "" : "s",
                               one ? "is" : "are");
    }
    if (r->cut_stripes) {
        g_string_append_printf(s,
                               "; the log of %u stripe%s cannot be parsed to its end (stripe %u "
                               "from offset %llu, %s): %llu programmed bytes after that were not "
                               "read, and the records in them are lost",
                               r->cut_stripes, r->cut_stripes == 1 ? "" : "s", r->cut_stripe,
                               (unsigned long long)r->cut_offset, r->cut_what,
                               (unsigned long long)r->unread_bytes);
    }
    if (r->bad_spares) {
        g_string_append_printf(s,
                               "; %u page%s %s a damaged spare area (the first: page %llu, kind "
                               "%#x)",
                               r->bad_spares, r->bad_spares == 1 ? "" : "s",
                               r->bad_spares == 1 ? "has" : "have",
                               (unsigned long long)r->bad_spare_page, r->bad_spare_kind);
    }
    g_string_append_c(s, '.');
    g_strlcpy(r->note, s->str, sizeof(r->note));
    g_string_free(s, TRUE);
}

/* What a personality's device is, in words, for the refusal of an image of the other one. */
static const char *personality_words(uint32_t command_set)
{
    return command_set == KVFTL_CMDSET_NVM ? "block (NVM command set)" : "key-value";
}

/*
 * An image keeps the personality it was made with (checked first: a kv
 * image asked to be nvm would fail a later check obscurely) and, for kv,
 * its index design: another cannot read its index pages or checkpoint.
 */
static int personality_check(const struct kvftl_config *c, const struct image_header *h, char *err,
                             size_t err_len)
{
    if (h->command_set != c->command_set) {
        if (h->command_set > KVFTL_CMDSET_NVM) {
            snprintf(err, err_len,
                     "image_path %s names command_set %u, which is neither kv (0) nor nvm (1): "
                     "the header is damaged or the image is not a kvftl image",
                     c->image_path, h->command_set);
        } else {
            snprintf(err, err_len,
                     "image_path %s holds a %s device (command_set %s); the configuration asks "
                     "for command_set %s, and an image keeps the personality it was made with",
                     c->image_path, personality_words(h->command_set),
                     kvftl_command_set_names[h->command_set],
                     kvftl_command_set_names[c->command_set]);
        }
        return -1;
    }
    if (c->command_set != KVFTL_CMDSET_KV || h->index_design == c->index) {
        return 0;
    }
    snprintf(err, err_len,
             "image_path %s holds a key-value device made with index %s; the configuration "
             "asks for index %s, and an image keeps the index design it was made with",
             c->image_path,
             h->index_design <= KVFTL_INDEX_LSM ? kvftl_index_names[h->index_design]
                                                : "(unknown: the header is damaged)",
             kvftl_index_names[c->index]);
    return -1;
}

int recovery_mount(struct kvftl *ftl, char *err, size_t err_len)
{
    const struct kvftl_config *c = &ftl->cfg;
    struct recovery_report *r = &ftl->mount;
    uint64_t file = ftl->nand.file_bytes;
    memset(r, 0, sizeof(*r));
    /* nothing past the end of the file may be touched: the mapping there is not backed */
    if (file < NAND_IMAGE_HEADER_BYTES) {
        snprintf(err, err_len,
                 "image_path %s is %llu bytes, too short for a kvftl image header "
                 "(%u bytes): it is not a kvftl image",
                 c->image_path, (unsigned long long)file, NAND_IMAGE_HEADER_BYTES);
        return -1;
    }
    struct image_header *h = checkpoint_image_header(ftl);
    if (h->magic != IMAGE_MAGIC || h->version != IMAGE_VERSION) {
        snprintf(err, err_len, "image_path %s is not a kvftl image (bad magic or version)",
                 c->image_path);
        return -1;
    }
    if (personality_check(c, h, err, err_len) != 0) {
        return -1;
    }
#define SAME(field, cfgfield)                                         \
    if (h->field != c->cfgfield) {                                    \
        snprintf(err, err_len,                                        \
                 "image_path %s was made with " #cfgfield " %u; the " \
                 "configuration says %u",                             \
                 c->image_path, h->field, c->cfgfield);               \
        return -1;                                                    \
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
    if (c->command_set == KVFTL_CMDSET_NVM) {
        SAME(lba_bytes, lba_bytes)
        if (h->units != ftl->pmap.units) {
            snprintf(err, err_len,
                     "image_path %s holds a namespace of %llu units of 4 KiB; the configuration "
                     "makes %llu (the geometry, overprovision_percent and "
                     "gc_low_watermark_blocks decide it: open it with the values it was made "
                     "with)",
                     c->image_path, (unsigned long long)h->units,
                     (unsigned long long)ftl->pmap.units);
            return -1;
        }
    }
#undef SAME
    if (file < ftl->nand.map_bytes) {
        snprintf(
            err, err_len,
            "image_path %s is %llu bytes, shorter than the %llu bytes of NAND and "
            "spare areas its header describes: the file was truncated, and what it lost cannot "
            "be recovered (restore it from a copy, or delete it to start an empty device)",
            c->image_path, (unsigned long long)file, (unsigned long long)ftl->nand.map_bytes);
        return -1;
    }
    char why[sizeof(r->why)] = "";
    if (h->clean == 1) {
        if (load_checkpoint(ftl, why, sizeof(why)) == 0) {
            recovery_mark_dirty(ftl);
            return 0;
        }
    } else if (h->clean != 0) {
        snprintf(why, sizeof(why), "the header's clean flag is %u, neither 0 nor 1", h->clean);
    }
    if (recovery_scan(ftl, err, err_len) != 0) {
        return -1;
    }
    r->scanned = true;
    g_strlcpy(r->why, why, sizeof(r->why));
    if (ftl->nvm) {
        block_recovery_note(ftl);
    } else {
        mount_note(ftl);
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

/* Apply one intact record found by the scan. false: the index could not take it. */
static bool scan_apply(struct kvftl *ftl, const struct blob_header *h, const uint8_t *key,
                       uint64_t addr, uint64_t *now)
{
    uint32_t len = BLOB_HEADER_BYTES + h->key_bytes + h->value_bytes;
    bool tomb = h->type == REC_TOMBSTONE;
    uint64_t newloc = loc_make(addr, len, tomb);
    uint64_t hash = kv_index_hash(&ftl->index, key, h->key_bytes);
    uint64_t oldloc = 0;
    struct kv_index_pos pos;
    if (kv_index_find(&ftl->index, hash, key, h->key_bytes, &oldloc, &pos, now)) {
        struct blob_header old;
        nand_copy_out(&ftl->nand, loc_addr(oldloc), &old, sizeof(old));
        if (old.seq > h->seq) {
            return true; /* a newer record of this key was already seen */
        }
        kv_index_set(&ftl->index, &pos, newloc, now);
    } else {
        oldloc = 0;
        if (kv_index_reserve(&ftl->index, hash, now) != 0) {
            return false;
        }
        kv_index_add(&ftl->index, hash, newloc, now);
    }
    vlog_account_replace(&ftl->vl, oldloc, newloc, h->seq);
    return true;
}

/*
 * The parse of stripe @s stopped at @pos: if programmed pages after it
 * still hold bytes, the log was damaged there (the records past it cannot
 * be found: a record's length is the only way to the next one), and the
 * report says where and how much. Zero bytes or unprogrammed pages after
 * the stop are the normal end of the log.
 */
static void scan_cut(struct kvftl *ftl, uint32_t s, uint64_t pos, const char *what)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    uint64_t base_ppn = (uint64_t)s * geo->pages_per_stripe;
    uint64_t base = (uint64_t)s * geo->stripe_bytes;
    uint8_t *page = g_malloc(geo->page_size);
    uint64_t end = 0;
    for (uint64_t pg = geo->pages_per_stripe; pg-- > pos / geo->page_size;) {
        if (!nand_page_programmed(&ftl->nand, base_ppn + pg)) {
            continue;
        }
        uint64_t from = pg * geo->page_size > pos ? pg * geo->page_size : pos;
        uint64_t n = (pg + 1) * geo->page_size - from;
        const uint8_t *q = nand_view(&ftl->nand, base + from, n, page);
        if (q[0] || memcmp(q, q + 1, n - 1) != 0) {
            end = (pg + 1) * geo->page_size;
            break;
        }
    }
    g_free(page);
    if (!end) {
        return;
    }
    struct recovery_report *r = &ftl->mount;
    if (!r->cut_stripes++) {
        r->cut_stripe = s;
        r->cut_offset = pos;
        g_strlcpy(r->cut_what, what, sizeof(r->cut_what));
    }
    r->unread_bytes += end - pos;
}

/* Scan one data stripe; returns the largest sequence number seen. */
static uint64_t scan_stripe(struct kvftl *ftl, uint32_t s, uint64_t *now)
{
    const struct nand_geometry *geo = &ftl->nand.geo;
    uint64_t base = (uint64_t)s * geo->stripe_bytes;
    uint64_t base_ppn = (uint64_t)s * geo->pages_per_stripe;
    uint64_t max_seq = 0, pos = 0, read_upto = 0;
    struct stripe_info *si = &ftl->space.stripes[s];
    char what[64];
    struct nand_scratch scratch = {0}; /* a record that is not contiguous in the store */

    while (pos < geo->stripe_bytes) {
        uint64_t idx = pos / geo->page_size;
        if (!nand_page_programmed(&ftl->nand, base_ppn + idx)) {
            snprintf(what, sizeof(what), "page %llu of the stripe is not programmed",
                     (unsigned long long)idx);
            scan_cut(ftl, s, pos, what);
            break;
        }
        for (; read_upto <= idx; read_upto++) {
            *now = nand_read(&ftl->nand, base_ppn + read_upto, geo->page_size, *now);
        }
        uint8_t hbuf[BLOB_HEADER_BYTES];
        uint64_t avail = geo->stripe_bytes - pos;
        const uint8_t *p = nand_view(&ftl->nand, base + pos,
                                     avail < sizeof(hbuf) ? avail : sizeof(hbuf), hbuf);
        if (p[0] == REC_PAD1) {
            pos++;
            continue;
        }
        if (p[0] == REC_PAD) {
            uint32_t len = 0;
            if (pos + 8 <= geo->stripe_bytes) {
                memcpy(&len, p + 4, 4);
            }
            if (len < 8) {
                snprintf(what, sizeof(what), "a pad record of %u bytes", len);
                scan_cut(ftl, s, pos, what);
                break;
            }
            pos += len;
            continue;
        }
        if (p[0] != REC_PAIR && p[0] != REC_TOMBSTONE) {
            snprintf(what, sizeof(what), "record type 0x%02x", p[0]);
            scan_cut(ftl, s, pos, what);
            break;
        }
        struct blob_header h;
        uint64_t len = 0;
        if (pos + BLOB_HEADER_BYTES <= geo->stripe_bytes) {
            memcpy(&h, p, sizeof(h));
            len = BLOB_HEADER_BYTES + (uint64_t)h.key_bytes + h.value_bytes;
        }
        if (!len || h.key_bytes == 0 || h.value_bytes > KVFTL_VALUE_MAX_BYTES ||
            (h.type == REC_TOMBSTONE && h.value_bytes) || pos + len > geo->stripe_bytes) {
            scan_cut(ftl, s, pos, "a record header with impossible lengths");
            break;
        }
        /*
         * A record running into a page with no blocks in the image (a Store
         * cut short, or one the full file system refused) is not read: its
         * zeros fail the checksum anyway, and on tmpfs the read fault would
         * allocate a page (SIGBUS when the file system is full).
         */
        bool torn = false;
        for (uint64_t q = idx + 1; q <= (pos + len - 1) / geo->page_size && !torn; q++) {
            torn = !nand_page_programmed(&ftl->nand, base_ppn + q) &&
                   nand_page_hole(&ftl->nand, base_ppn + q);
        }
        p = torn ? NULL : nand_view(&ftl->nand, base + pos, len, nand_scratch_get(&scratch, len));
        const uint8_t *key = p ? p + BLOB_HEADER_BYTES : NULL;
        if (!torn && blob_checksum(h.type, h.key_bytes, h.value_bytes, h.seq, key,
                                   key + h.key_bytes) == h.checksum) {
            if (!scan_apply(ftl, &h, key, base + pos, now)) {
                ftl->mount.unindexed++;
            }
            if (h.seq > max_seq) {
                max_seq = h.seq;
            }
            if (h.seq < si->min_blob_seq) {
                si->min_blob_seq = h.seq;
            }
        } else {
            /* half written by a crash, or damaged: skipped, its length still leads to the next */
            ftl->mount.bad_checksums++;
        }
        pos += vlog_occupied(&ftl->vl, (uint32_t)len);
    }
    nand_scratch_free(&scratch);
    return max_seq;
}

/* Write a pad record over device bytes [from, to) of buffered pages (the bytes are zero). */
static void pad_gap(const struct nand *n, uint64_t from, uint64_t to)
{
    uint8_t rec[8];
    nand_fill(n, from, rec, stream_pad_record(rec, to - from));
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
    const struct nand *n = &ftl->nand;
    uint64_t base = (uint64_t)s * geo->stripe_bytes;
    uint64_t start = (uint64_t)first * geo->page_size;
    uint64_t end = ((uint64_t)last + 1) * geo->page_size;
    uint64_t pos = 0;

    while (pos < end) {
        uint8_t type = nand_byte(n, base + pos);
        if (type == REC_ERASED) {
            if (pos < start) {
                break; /* a programmed page ends the log: nothing was buffered after it */
            }
            uint64_t q = pos;
            while (q < end && nand_byte(n, base + q) == 0) {
                q++;
            }
            pad_gap(n, base + pos, base + q);
            pos = q;
            continue;
        }
        if (type == REC_PAD1) {
            pos++;
            continue;
        }
        if (type == REC_PAD) {
            uint32_t len = 0;
            if (pos + 8 <= geo->stripe_bytes) {
                nand_copy_out(n, base + pos + 4, &len, 4);
            }
            if (len < 8) {
                break;
            }
            pos += len;
            continue;
        }
        struct blob_header h;
        if ((type != REC_PAIR && type != REC_TOMBSTONE) ||
            pos + BLOB_HEADER_BYTES > geo->stripe_bytes) {
            break;
        }
        nand_copy_out(n, base + pos, &h, sizeof(h));
        uint64_t len = BLOB_HEADER_BYTES + (uint64_t)h.key_bytes + h.value_bytes;
        if (h.key_bytes == 0 || h.value_bytes > KVFTL_VALUE_MAX_BYTES ||
            pos + len > geo->stripe_bytes) {
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
    if (ftl->nvm) {
        return block_recovery_scan(ftl, err, err_len);
    }
    const struct nand_geometry *geo = &ftl->nand.geo;
    struct recovery_report *r = &ftl->mount;
    uint64_t now = ftl->now_max_ns;
    ftl->recovery_owner.reset_state(ftl);
    resolve_buffered(ftl);
    r->keys = r->bad_checksums = r->unindexed = r->unread_bytes = 0;
    r->cut_stripes = r->bad_spares = 0;

    struct scan_stripe *order = g_new(struct scan_stripe, geo->stripes);
    uint32_t ndata = 0;
    uint64_t max_stripe_seq = 0;
    for (uint32_t s = 0; s < geo->stripes; s++) {
        uint64_t first = (uint64_t)s * geo->pages_per_stripe;
        struct stripe_info *si = &ftl->space.stripes[s];
        bool any = ftl->nand.torn_ppn >= first &&
                   ftl->nand.torn_ppn < first + geo->pages_per_stripe;
        /*
         * What the stripe holds, by a vote of its pages' spare areas: one
         * damaged spare area (the first page's used to decide alone) does
         * not hide a stripe of data from the scan.
         */
        uint32_t ndata_pages = 0, nindex_pages = 0, first_data = UINT32_MAX,
                 first_index = UINT32_MAX;
        for (uint32_t i = 0; i < geo->pages_per_stripe; i++) {
            uint32_t kind = ftl->nand.oob[first + i].kind;
            any |= nand_page_programmed(&ftl->nand, first + i);
            if (kind == NAND_PAGE_DATA) {
                first_data = ndata_pages++ ? first_data : i;
            } else if (kind == NAND_PAGE_INDEX) {
                first_index = nindex_pages++ ? first_index : i;
            }
        }
        uint32_t kind = ndata_pages >= nindex_pages
                            ? (ndata_pages ? NAND_PAGE_DATA : NAND_PAGE_ERASED)
                            : NAND_PAGE_INDEX;
        for (uint32_t i = 0; i < geo->pages_per_stripe; i++) {
            uint32_t k = ftl->nand.oob[first + i].kind;
            if (k != NAND_PAGE_ERASED && k != kind) {
                if (!r->bad_spares++) {
                    r->bad_spare_page = first + i;
                    r->bad_spare_kind = k;
                }
            }
        }
        /* bytes left by a page buffer that never reached NAND also need an erase */
        si->erased = !any && (nand_page_hole(&ftl->nand, first) ||
                              nand_byte(&ftl->nand, first * geo->page_size) == 0);
        si->state = STRIPE_FREE;
        if (kind != NAND_PAGE_ERASED) {
            const struct nand_oob *oob =
                &ftl->nand.oob[first + (kind == NAND_PAGE_DATA ? first_data : first_index)];
            now = nand_read(&ftl->nand, first, 0, now);
            uint64_t next = oob->seq == UINT64_MAX ? UINT64_MAX : oob->seq + 1;
            max_stripe_seq = next > max_stripe_seq ? next : max_stripe_seq;
            if (kind == NAND_PAGE_DATA) {
                order[ndata].stripe = s;
                order[ndata].seq = oob->seq;
                ndata++;
            }
        }
        /* index stripes are rebuilt from the log: they become free */
    }
    qsort(order, ndata, sizeof(*order), scan_cmp);
    uint64_t max_seq = 0;
    for (uint32_t i = 0; i < ndata; i++) {
        struct stripe_info *si = &ftl->space.stripes[order[i].stripe];
        si->state = STRIPE_DATA; /* the log continues in a fresh stripe */
        si->open_seq = order[i].seq;
        si->last_write_ns = now;
        ftl->space.free_stripes--;
    }
    for (uint32_t i = 0; i < ndata; i++) {
        uint64_t m = scan_stripe(ftl, order[i].stripe, &now);
        max_seq = m > max_seq ? m : max_seq;
    }
    g_free(order);
    if (max_seq != UINT64_MAX && max_seq + 1 > ftl->vl.next_seq) {
        ftl->vl.next_seq = max_seq + 1;
    }
    if (max_stripe_seq > ftl->space.stripe_seq) {
        ftl->space.stripe_seq = max_stripe_seq;
    }
    r->keys = ftl->vl.live.keys;
    kv_index_rebuilt(&ftl->index);
    if (now > ftl->now_max_ns) {
        ftl->now_max_ns = now;
    }
    (void)err;
    (void)err_len;
    return 0;
}
