/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kvftl API: open/close, and the KV operations composing the components. */
#include "ftl.h"

#include <stdio.h>
#include <string.h>

#include <glib.h>

#include <kvftl/block.h>

#include "fw_time.h"
#include "gc.h"
#include "kv_index.h"
#include "nand.h"
#include "page_map.h"
#include "recovery.h"
#include "space.h"
#include "stats.h"
#include "value_log.h"

const char *kvftl_status_name(enum kvftl_status s)
{
    switch (s) {
    case KVFTL_OK:
        return "OK";
    case KVFTL_INVALID_FIELD:
        return "INVALID_FIELD";
    case KVFTL_INVALID_KEY_SIZE:
        return "INVALID_KEY_SIZE";
    case KVFTL_INVALID_VALUE_SIZE:
        return "INVALID_VALUE_SIZE";
    case KVFTL_KEY_DOES_NOT_EXIST:
        return "KEY_DOES_NOT_EXIST";
    case KVFTL_KEY_EXISTS:
        return "KEY_EXISTS";
    case KVFTL_CAPACITY_EXCEEDED:
        return "CAPACITY_EXCEEDED";
    case KVFTL_UNRECOVERED_ERROR:
        return "UNRECOVERED_ERROR";
    case KVFTL_ITERATOR_LIMIT:
        return "ITERATOR_LIMIT";
    case KVFTL_INVALID_ITERATOR:
        return "INVALID_ITERATOR";
    case KVFTL_ITERATOR_END:
        return "ITERATOR_END";
    case KVFTL_INTERNAL_ERROR:
        return "INTERNAL_ERROR";
    }
    return "unknown status";
}

/* Fill the fields whose default is derived from others. */
static void config_derive(struct kvftl_config *c, uint64_t capacity_bytes)
{
    if (!c->dlt_entries) {
        c->dlt_entries = c->buffer_entries;
    }
    if (!c->index_page_bytes) {
        c->index_page_bytes = c->page_size_bytes;
    }
    if (!c->max_keys) {
        uint32_t unit = c->placement_unit_bytes > 32 ? c->placement_unit_bytes : 32;
        c->max_keys = capacity_bytes / unit;
    }
}

void kvftl_set_hash_for_test(struct kvftl *ftl, index_hash_fn fn)
{
    ftl->index.hash.idx.hash = fn; /* NULL: the seeded XXH3 again */
}

void ftl_reset_state(struct kvftl *ftl)
{
    vlog_forget(&ftl->vl);
    space_reset(&ftl->space);
    if (ftl->nvm) {
        page_map_reset(&ftl->pmap);
    }
    ftl->vl.live = (struct live_gauges){0};
    memset(ftl->iters, 0, sizeof(ftl->iters));
    kv_index_reset(&ftl->index);
}

/*
 * The KV personality answers GC (struct gc_owner): a blob is live when the
 * index still points at it, and a relocated blob or index page is
 * re-pointed in the index.
 */
static bool kv_blob_live(void *ctx, const struct blob_header *h, const uint8_t *key, uint64_t loc,
                         uint64_t *now_ns)
{
    struct kvftl *ftl = ctx;
    uint64_t hash = kv_index_hash(&ftl->index, key, h->key_bytes);
    return kv_index_find_loc(&ftl->index, hash, loc, &ftl->gc_pos, now_ns);
}

static void kv_relocate(void *ctx, uint64_t old_loc, uint64_t new_loc, uint64_t *now_ns)
{
    struct kvftl *ftl = ctx;
    (void)old_loc; /* gc_pos holds its entry, found by kv_blob_live() */
    if (new_loc) {
        kv_index_set(&ftl->index, &ftl->gc_pos, new_loc, now_ns);
    } else {
        kv_index_remove(&ftl->index, &ftl->gc_pos, now_ns);
    }
}

static int kv_page_relocate(void *ctx, uint64_t ppn, uint32_t tag, uint64_t *now_ns)
{
    struct kvftl *ftl = ctx;
    return kv_index_page_relocate(&ftl->index, ppn, tag, now_ns);
}

static void ftl_free(struct kvftl *ftl);

struct kvftl *kvftl_open(const struct kvftl_config *cfg, char *err, size_t err_len)
{
    if (kvftl_config_check(cfg, err, err_len) != 0) {
        return NULL;
    }
    struct kvftl *ftl = g_new0(struct kvftl, 1);
    ftl->cfg = *cfg;
    ftl->nvm = cfg->command_set == KVFTL_CMDSET_NVM;
    ftl->fw_on = cfg->fw_fetch_decode_ns || cfg->fw_index_probe_ns || cfg->fw_inline_fragment_ns ||
                 cfg->fw_dma_setup_ns || cfg->fw_completion_ns;
    struct nand_geometry geo = {
        .channels = cfg->channels,
        .dies_per_channel = cfg->dies_per_channel,
        .blocks_per_die = cfg->blocks_per_die,
        .pages_per_block = cfg->pages_per_block,
        .page_size = cfg->page_size_bytes,
        /* nvm: a reverse-map spare area per 4 KiB slot (nand.h) */
        .unit_spares_per_page = ftl->nvm ? cfg->page_size_bytes / KVFTL_BLOCK_UNIT_BYTES : 0,
    };
    nand_geometry_derive(&geo);
    uint64_t reserve = cfg->gc_low_watermark_blocks + 2;
    /*
     * Blobs fill only a page's data area (page_data_bytes; the rest is no
     * one's to fill), so the KV personality counts that part of a stripe.
     */
    uint64_t stripe_data = geo.stripe_bytes;
    if (!ftl->nvm && cfg->page_data_bytes) {
        stripe_data = geo.stripe_bytes / cfg->page_size_bytes * cfg->page_data_bytes;
    }
    ftl->capacity_bytes = (geo.stripes - reserve) * stripe_data / 100 *
                          (100 - cfg->overprovision_percent);
    config_derive(&ftl->cfg, ftl->capacity_bytes);
    if (ftl->cfg.image_path) {
        ftl->cfg.image_path = g_strdup(cfg->image_path);
    }

    struct nand_timing tm = {
        .read_ns = cfg->read_latency_ns,
        .program_ns = cfg->program_latency_ns,
        .erase_ns = cfg->erase_latency_ns,
        .channel_bytes_per_us = cfg->channel_bytes_per_us,
    };
    if (nand_init(&ftl->nand, &geo, &tm, ftl->cfg.image_path, err, err_len) != 0) {
        g_free((char *)ftl->cfg.image_path);
        g_free(ftl);
        return NULL;
    }

    space_init(&ftl->space, &ftl->nand, ftl->cfg.buffer_entries, ftl->cfg.plp);
    ftl->gc_owner = (struct gc_owner){
        .ctx = ftl,
        .blob_live = kv_blob_live,
        .relocate = kv_relocate,
        .page_relocate = kv_page_relocate,
    };
    ftl->recovery_owner = (struct recovery_owner){.reset_state = ftl_reset_state};
    /*
     * An nvm device has an empty value log and index too (cheap, and the
     * shared code that looks at them finds them consistent); its own state
     * is the page map, and it registers itself as GC's owner instead.
     */
    vlog_init(&ftl->vl, &ftl->space, &ftl->cfg);
    kv_index_init(&ftl->index, &ftl->space, &ftl->vl, &ftl->cfg);
    if (ftl->nvm) {
        blockftl_open(ftl);
    }
    ftl_reset_state(ftl);

    if (ftl->cfg.image_path && ftl->nand.file_existed) {
        if (recovery_mount(ftl, err, err_len) != 0) {
            /* not kvftl_close(): a checkpoint would write over the image it refused */
            ftl_free(ftl);
            return NULL;
        }
    } else {
        recovery_format_image(ftl);
    }
    return ftl;
}

static void ftl_free(struct kvftl *ftl)
{
    if (ftl->nvm) {
        blockftl_free(ftl);
    }
    kv_index_fini(&ftl->index);
    vlog_fini(&ftl->vl);
    space_fini(&ftl->space);
    nand_fini(&ftl->nand);
    g_free(ftl->iter_value);
    g_free((char *)ftl->cfg.image_path);
    g_free(ftl);
}

void kvftl_close(struct kvftl *ftl)
{
    if (!ftl) {
        return;
    }
    if (ftl_powered(ftl)) {
        if (ftl->cfg.image_path) {
            recovery_checkpoint(ftl);
        }
    } else if (ftl->cfg.plp) {
        /* closed after a power cut: NAND keeps what the capacitors could save */
        if (ftl->nvm) {
            blockftl_plp_dump(ftl, ftl->now_max_ns);
        } else {
            vlog_plp_dump(&ftl->vl, ftl->now_max_ns);
        }
    } else {
        stream_discard_unprogrammed(&ftl->space);
    }
    ftl_free(ftl);
}

const struct kvftl_config *kvftl_get_config(const struct kvftl *ftl)
{
    return &ftl->cfg;
}

/* ---- operations ---- */

static void cpl_init(struct kvftl_cpl *cpl, uint64_t arrival_ns)
{
    cpl->status = KVFTL_OK;
    cpl->done_ns = arrival_ns;
    cpl->value_bytes = 0;
    cpl->xfer_bytes = 0;
}

static bool key_size_ok(uint32_t key_bytes)
{
    return key_bytes >= KVFTL_KEY_MIN_BYTES && key_bytes <= KVFTL_KEY_MAX_BYTES;
}

static bool key_ok(const void *key, uint32_t key_bytes)
{
    return key && key_size_ok(key_bytes);
}

/*
 * The opening every operation shares: reset @cpl to success at the arrival
 * time; unless the device lost power (then no firmware runs), fetch and
 * decode the command on the controller CPU (with @inline_xfers inline
 * transfer commands: fw_time.h; *@now moves to its end); then refuse a KV
 * command (@keyed) on an nvm device (INVALID_FIELD), a device that lost
 * power (INTERNAL_ERROR), an operation that @writes on a device whose image
 * file could not back a page (INTERNAL_ERROR: nand_back_page()) and, when
 * the operation names a key, an invalid key (INVALID_KEY_SIZE). Returns
 * true when the operation may proceed.
 */
static bool op_begin(struct kvftl *ftl, struct kvftl_cpl *cpl, struct fw_cmd *fc,
                     uint32_t inline_xfers, uint64_t *now, bool writes, bool keyed, const void *key,
                     uint32_t key_bytes)
{
    bool powered = ftl_powered(ftl);
    cpl_init(cpl, *now);
    if (powered) {
        fw_cmd_begin(ftl, fc, inline_xfers, now);
    }
    if (keyed && ftl->nvm) {
        cpl->status = KVFTL_INVALID_FIELD;
    } else if (!powered || (writes && !nand_writable(&ftl->nand))) {
        cpl->status = KVFTL_INTERNAL_ERROR;
    } else if (keyed && !key_ok(key, key_bytes)) {
        cpl->status = KVFTL_INVALID_KEY_SIZE;
    }
    if (cpl->status != KVFTL_OK) {
        if (powered) {
            fw_cmd_refuse(ftl, fc, *now, cpl);
        }
        return false;
    }
    return true;
}

enum kvftl_status kvftl_store_check(uint32_t key_bytes, uint32_t value_bytes, uint32_t options)
{
    const uint32_t known = KVFTL_STORE_ONLY_IF_EXISTS | KVFTL_STORE_ONLY_IF_ABSENT;

    if ((options & ~known) || options == known) {
        return KVFTL_INVALID_FIELD;
    }
    if (!key_size_ok(key_bytes)) {
        return KVFTL_INVALID_KEY_SIZE;
    }
    if (value_bytes > KVFTL_VALUE_MAX_BYTES) {
        return KVFTL_INVALID_VALUE_SIZE;
    }
    return KVFTL_OK;
}

/*
 * The index slot, page header, frame record and Bloom block a Store of @req
 * will wait on are random lines: start them loading (a hint only: the
 * Stores and GC in between may move what it names) and return the key's
 * hash; 0 when the Store will be refused before it looks (nvm, power lost,
 * a bad key).
 */
static uint64_t store_hint(struct kvftl *ftl, const struct kvftl_store_req *req)
{
    if (ftl->nvm || !ftl_powered(ftl) || !key_ok(req->key, req->key_bytes)) {
        return 0;
    }
    uint64_t hash = kv_index_hash(&ftl->index, req->key, req->key_bytes);
    kv_index_prefetch(&ftl->index, hash, true);
    return hash;
}

/*
 * Store's conditions on the key's state (@live: it has a value; @oldloc:
 * its blob or tombstone, 0 if none) and the room its blob needs:
 * KVFTL_OK, or the status that refuses the Store.
 */
static enum kvftl_status store_admit(const struct kvftl *ftl, const struct kvftl_store_req *req,
                                     bool live, uint64_t oldloc)
{
    if ((req->options & KVFTL_STORE_ONLY_IF_EXISTS) && !live) {
        return KVFTL_KEY_DOES_NOT_EXIST;
    }
    if ((req->options & KVFTL_STORE_ONLY_IF_ABSENT) && live) {
        return KVFTL_KEY_EXISTS;
    }
    uint32_t len = BLOB_HEADER_BYTES + req->key_bytes + req->value_bytes;
    uint64_t occ = vlog_occupied(&ftl->vl, len);
    uint64_t old_occ = oldloc ? vlog_occupied(&ftl->vl, loc_len(oldloc)) : 0;
    /* tombstones are not user data: they live in the reserve until GC drops them */
    uint64_t used = ftl->vl.live.nand_bytes + kv_index_nand_bytes(&ftl->index);
    if (used + occ - old_occ > ftl->capacity_bytes ||
        (!live && ftl->vl.live.keys >= ftl->cfg.max_keys)) {
        return KVFTL_CAPACITY_EXCEEDED;
    }
    return KVFTL_OK;
}

/* kvftl_store() with the key's hash already computed and its loads hinted (or 0: both here). */
static void store(struct kvftl *ftl, const struct kvftl_store_req *req, uint64_t hash,
                  struct kvftl_cpl *cpl)
{
    uint64_t now = req->arrival_ns;
    struct fw_cmd fc;
    /*
     * Alone, the hints go out before anything else, so that the checks, the
     * firmware bookkeeping and GC's watermark tests run while they load.
     */
    if (!hash) {
        hash = store_hint(ftl, req);
    }
    if (!op_begin(ftl, cpl, &fc, req->inline_xfer_commands, &now, true, true, req->key,
                  req->key_bytes)) {
        return;
    }
    cpl->status = kvftl_store_check(req->key_bytes, req->value_bytes, req->options);
    if (cpl->status == KVFTL_OK &&
        ((req->value_bytes && !req->value) || req->inline_bytes > req->value_bytes)) {
        cpl->status = KVFTL_INVALID_FIELD;
    }
    if (cpl->status != KVFTL_OK) {
        fw_cmd_refuse(ftl, &fc, now, cpl);
        return;
    }
    /* the value's DMA part was moved before the firmware looked at the key */
    uint64_t dma = fw_dma_units(req->value_bytes - req->inline_bytes);

    gc_background(ftl, req->arrival_ns);
    gc_before_write(ftl, &now);

    uint64_t oldloc = 0;
    struct kv_index_pos pos;
    bool found = kv_index_find(&ftl->index, hash, req->key, req->key_bytes, &oldloc, &pos, &now);
    bool live = found && !loc_tombstone(oldloc);
    if (!found) {
        oldloc = 0;
    }
    cpl->status = store_admit(ftl, req, live, oldloc);
    if (cpl->status != KVFTL_OK) {
        fw_cmd_finish(ftl, KVFTL_OP_STORE, req->arrival_ns, now, &fc, dma, cpl);
        return;
    }

    /*
     * A new key needs an index entry: make room before the blob goes to the
     * log. A refused Store must leave nothing there, or a crash scan would
     * find the blob and bring back a key whose Store failed.
     */
    if (!found && kv_index_reserve(&ftl->index, hash, &now) != 0) {
        /* an index page that could not be written back (the image is full) is no capacity limit */
        cpl->status = nand_writable(&ftl->nand) ? KVFTL_CAPACITY_EXCEEDED : KVFTL_INTERNAL_ERROR;
        fw_cmd_finish(ftl, KVFTL_OP_STORE, req->arrival_ns, now, &fc, dma, cpl);
        return;
    }

    struct blob_header h = {
        .type = REC_PAIR,
        .key_bytes = (uint8_t)req->key_bytes,
        .value_bytes = req->value_bytes,
        .seq = ftl->vl.next_seq++,
    };
    h.checksum = blob_checksum(h.type, h.key_bytes, h.value_bytes, h.seq, req->key, req->value);
    struct placement pl;
    int rc = vlog_append(&ftl->vl, &h, req->key, req->value, req->inline_bytes < req->value_bytes,
                         req->inline_bytes, false, &pl, &now);
    if (rc != 0) {
        cpl->status = rc == -1 && nand_writable(&ftl->nand) ? KVFTL_CAPACITY_EXCEEDED
                                                            : KVFTL_INTERNAL_ERROR;
        fw_cmd_finish(ftl, KVFTL_OP_STORE, req->arrival_ns, now, &fc, dma, cpl);
        return;
    }
    uint64_t newloc = loc_make(pl.addr, BLOB_HEADER_BYTES + req->key_bytes + req->value_bytes,
                               false);
    if (found) {
        kv_index_set(&ftl->index, &pos, newloc, &now);
    } else {
        kv_index_add(&ftl->index, hash, newloc, &now); /* room reserved before the append */
    }
    vlog_account_replace(&ftl->vl, oldloc, newloc, h.seq);
    ftl->st.stores++;
    ftl->st.user_bytes_written += req->key_bytes + req->value_bytes;
    ftl->st.host_bytes_in_inline += req->inline_bytes;
    ftl->st.host_bytes_in_dma += req->value_bytes - req->inline_bytes;
    cpl->value_bytes = req->value_bytes;
    fw_cmd_finish(ftl, KVFTL_OP_STORE, req->arrival_ns, now, &fc, dma, cpl);
}

void kvftl_store(struct kvftl *ftl, const struct kvftl_store_req *req, struct kvftl_cpl *cpl)
{
    store(ftl, req, 0, cpl);
}

/*
 * A batch of Stores hints window w + 1's loads (store_hint()) before it
 * runs window w's Stores one by one, in order, exactly as kvftl_store()
 * would: each Store's index slot and Bloom block have a window of Stores to
 * arrive in, instead of the few hundred instructions before its own lookup.
 * A hint made stale by a Store before it (a split, an eviction, GC) only
 * loads a useless line, and a key's hash does not change within a batch
 * (only a format draws a new secret), so results, simulated times,
 * statistics and the NAND's contents are those of the same calls one at a
 * time. A Store refused before its lookup gets no hint (hash 0) and is
 * refused as alone.
 */
#define STORE_WINDOW 16u

/* store_hint() of the window @reqs[0 .. min(@n, STORE_WINDOW) - 1], into @hash. */
static void store_hint_window(struct kvftl *ftl, const struct kvftl_store_req *reqs, size_t n,
                              uint64_t *hash)
{
    for (size_t i = 0; i < n && i < STORE_WINDOW; i++) {
        hash[i] = store_hint(ftl, &reqs[i]);
    }
}

void kvftl_store_batch(struct kvftl *ftl, const struct kvftl_store_req *reqs,
                       struct kvftl_cpl *cpls, size_t n)
{
    uint64_t hash[2][STORE_WINDOW];
    store_hint_window(ftl, reqs, n, hash[0]);
    for (size_t base = 0, x = 0; base < n; base += STORE_WINDOW, x++) {
        size_t next = base + STORE_WINDOW;
        if (next < n) {
            store_hint_window(ftl, reqs + next, n - next, hash[(x + 1) % 2]);
        }
        for (size_t i = 0; base + i < n && i < STORE_WINDOW; i++) {
            store(ftl, &reqs[base + i], hash[x % 2][i], &cpls[base + i]);
        }
    }
}

/*
 * Find a live key; false = absent (filter or index or tombstone). @record:
 * NULL, or where kv_index_lookup() returns the found blob's bytes.
 */
static bool lookup_live_hashed(struct kvftl *ftl, uint64_t hash, const void *key,
                               uint32_t key_bytes, uint64_t *loc, struct kv_index_pos *pos,
                               uint64_t *now, const uint8_t **record)
{
    bool filtered = false;
    bool found = kv_index_lookup(&ftl->index, hash, key, key_bytes, loc, pos, now, record,
                                 &filtered);
    if (filtered) {
        ftl->st.bloom_negatives++;
    }
    return found && !loc_tombstone(*loc);
}

static bool lookup_live(struct kvftl *ftl, const void *key, uint32_t key_bytes, uint64_t *loc,
                        struct kv_index_pos *pos, uint64_t *now)
{
    return lookup_live_hashed(ftl, kv_index_hash(&ftl->index, key, key_bytes), key, key_bytes, loc,
                              pos, now, NULL);
}

/* kvftl_retrieve() with the key's hash already computed (or 0: compute it). */
static void retrieve(struct kvftl *ftl, const void *key, uint32_t key_bytes, uint64_t hash,
                     void *buf, uint32_t offset, uint32_t buf_bytes, uint64_t arrival_ns,
                     struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct fw_cmd fc;
    if (!op_begin(ftl, cpl, &fc, 0, &now, false, true, key, key_bytes)) {
        return;
    }
    if (buf_bytes && !buf) {
        cpl->status = KVFTL_INVALID_FIELD;
        fw_cmd_refuse(ftl, &fc, now, cpl);
        return;
    }
    if (!hash) {
        hash = kv_index_hash(&ftl->index, key, key_bytes);
        kv_index_prefetch(&ftl->index, hash, false); /* a batch hinted it a window ago */
    }
    uint64_t loc;
    struct kv_index_pos pos;
    const uint8_t *record;
    if (!lookup_live_hashed(ftl, hash, key, key_bytes, &loc, &pos, &now, &record)) {
        cpl->status = KVFTL_KEY_DOES_NOT_EXIST;
        fw_cmd_finish(ftl, KVFTL_OP_RETRIEVE, arrival_ns, now, &fc, fw_dma_units(cpl->xfer_bytes),
                      cpl);
        return;
    }
    uint32_t vbytes = loc_len(loc) - BLOB_HEADER_BYTES - key_bytes;
    cpl->value_bytes = vbytes;
    if (offset > vbytes) {
        cpl->status = KVFTL_INVALID_FIELD;
        fw_cmd_finish(ftl, KVFTL_OP_RETRIEVE, arrival_ns, now, &fc, fw_dma_units(cpl->xfer_bytes),
                      cpl);
        return;
    }
    uint32_t n = vbytes - offset < buf_bytes ? vbytes - offset : buf_bytes;
    if (n) {
        /*
         * The record is read and verified whole, even for a part of its
         * value: its one checksum covers key and value. A damaged record
         * moves no byte (a drive whose ECC fails returns no data either).
         */
        uint64_t addr = loc_addr(loc);
        const uint8_t *blob = vlog_read_record(&ftl->vl, loc, REC_PAIR, key_bytes,
                                               addr >> ftl->nand.geo.page_shift, record, &now);
        if (!blob) {
            cpl->status = KVFTL_UNRECOVERED_ERROR;
            cpl->value_bytes = 0;
            ftl->st.media_errors++;
            fw_cmd_finish(ftl, KVFTL_OP_RETRIEVE, arrival_ns, now, &fc,
                          fw_dma_units(cpl->xfer_bytes), cpl);
            return;
        }
        memcpy(buf, blob + BLOB_HEADER_BYTES + key_bytes + offset, n);
    }
    cpl->xfer_bytes = n;
    ftl->st.retrieves++;
    ftl->st.host_bytes_out += n;
    fw_cmd_finish(ftl, KVFTL_OP_RETRIEVE, arrival_ns, now, &fc, fw_dma_units(cpl->xfer_bytes), cpl);
}

void kvftl_retrieve(struct kvftl *ftl, const void *key, uint32_t key_bytes, void *buf,
                    uint32_t offset, uint32_t buf_bytes, uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    retrieve(ftl, key, key_bytes, 0, buf, offset, buf_bytes, arrival_ns, cpl);
}

/*
 * A batch is a software pipeline over windows of requests, four stages
 * deep: (1) hash every key of a window and start loading its index slot
 * (and the cached page's frame record, which the lookup's LRU bookkeeping
 * writes); (2) peek at each slot (no state change) and start loading what
 * the backing store needs to find the blob it names (the page's entry in
 * the chunk store); (3) start loading the blob itself; (4) run the requests
 * one by one, in order, exactly as kvftl_retrieve() would. While window w
 * runs, window w + 1's blobs, w + 2's page entries and w + 3's slots are
 * loading, so each of the three dependent loads has a window's work to
 * arrive in. The hints change nothing but which cache lines are already
 * loaded (a hint made stale by a request before it only loads a useless
 * line), so results, simulated times and statistics are those of the same
 * calls one at a time.
 */
#define BATCH_WINDOW 16u
#define BATCH_STAGES 4u

static void batch_hash(struct kvftl *ftl, const struct kvftl_retrieve_req *r, size_t w,
                       uint64_t *hash)
{
    for (size_t i = 0; i < w; i++) {
        hash[i] = 0;
        if (key_ok(r[i].key, r[i].key_bytes)) {
            hash[i] = kv_index_hash(&ftl->index, r[i].key, r[i].key_bytes);
            kv_index_prefetch(&ftl->index, hash[i], false);
        }
    }
}

static void batch_peek(struct kvftl *ftl, size_t w, const uint64_t *hash, uint64_t *loc)
{
    for (size_t i = 0; i < w; i++) {
        loc[i] = hash[i] ? kv_index_peek(&ftl->index, hash[i]) : 0;
        if (loc[i] && loc_tombstone(loc[i])) {
            loc[i] = 0;
        }
        if (loc[i]) {
            vlog_prefetch_entry(&ftl->vl, loc[i]);
        }
    }
}

static void batch_blobs(struct kvftl *ftl, size_t w, const uint64_t *loc)
{
    for (size_t i = 0; i < w; i++) {
        if (loc[i]) {
            vlog_prefetch(&ftl->vl, loc[i]);
        }
    }
}

void kvftl_retrieve_batch(struct kvftl *ftl, const struct kvftl_retrieve_req *reqs,
                          struct kvftl_cpl *cpls, size_t n)
{
    /* per stage's window: w (run), w + 1 (blobs), w + 2 (entries), w + 3 (slots) */
    uint64_t hash[BATCH_STAGES][BATCH_WINDOW];
    uint64_t loc[BATCH_STAGES][BATCH_WINDOW];
    size_t windows = (n + BATCH_WINDOW - 1) / BATCH_WINDOW;
#define WIN_LEN(x) (n - (x) * BATCH_WINDOW < BATCH_WINDOW ? n - (x) * BATCH_WINDOW : BATCH_WINDOW)
#define RING(x) ((x) % BATCH_STAGES)
    for (size_t x = 0; x < 3 && x < windows; x++) {
        batch_hash(ftl, reqs + x * BATCH_WINDOW, WIN_LEN(x), hash[x]);
    }
    for (size_t x = 0; x < 2 && x < windows; x++) {
        batch_peek(ftl, WIN_LEN(x), hash[x], loc[x]);
    }
    if (windows) {
        batch_blobs(ftl, WIN_LEN(0), loc[0]);
    }
    for (size_t x = 0; x < windows; x++) {
        if (x + 3 < windows) {
            batch_hash(ftl, reqs + (x + 3) * BATCH_WINDOW, WIN_LEN(x + 3), hash[RING(x + 3)]);
        }
        if (x + 2 < windows) {
            batch_peek(ftl, WIN_LEN(x + 2), hash[RING(x + 2)], loc[RING(x + 2)]);
        }
        if (x + 1 < windows) {
            batch_blobs(ftl, WIN_LEN(x + 1), loc[RING(x + 1)]);
        }
        const struct kvftl_retrieve_req *r = reqs + x * BATCH_WINDOW;
        const uint64_t *h = hash[RING(x)];
        for (size_t i = 0; i < WIN_LEN(x); i++) {
            retrieve(ftl, r[i].key, r[i].key_bytes, h[i], r[i].buf, r[i].offset, r[i].buf_bytes,
                     r[i].arrival_ns, &cpls[x * BATCH_WINDOW + i]);
        }
    }
#undef RING
#undef WIN_LEN
}

void kvftl_delete(struct kvftl *ftl, const void *key, uint32_t key_bytes, uint64_t arrival_ns,
                  struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct fw_cmd fc;
    if (!op_begin(ftl, cpl, &fc, 0, &now, true, true, key, key_bytes)) {
        return;
    }
    gc_background(ftl, arrival_ns);
    gc_before_write(ftl, &now);
    uint64_t loc;
    struct kv_index_pos pos;
    if (!lookup_live(ftl, key, key_bytes, &loc, &pos, &now)) {
        cpl->status = KVFTL_KEY_DOES_NOT_EXIST;
        fw_cmd_finish(ftl, KVFTL_OP_DELETE, arrival_ns, now, &fc, 0, cpl);
        return;
    }
    /* a durable tombstone, so that recovery does not resurrect an older version */
    struct blob_header h = {
        .type = REC_TOMBSTONE,
        .key_bytes = (uint8_t)key_bytes,
        .value_bytes = 0,
        .seq = ftl->vl.next_seq++,
    };
    h.checksum = blob_checksum(h.type, h.key_bytes, 0, h.seq, key, NULL);
    struct placement pl;
    int rc = vlog_append(&ftl->vl, &h, key, NULL, false, 0, false, &pl, &now);
    if (rc != 0) {
        cpl->status = rc == -1 && nand_writable(&ftl->nand) ? KVFTL_CAPACITY_EXCEEDED
                                                            : KVFTL_INTERNAL_ERROR;
        fw_cmd_finish(ftl, KVFTL_OP_DELETE, arrival_ns, now, &fc, 0, cpl);
        return;
    }
    uint64_t newloc = loc_make(pl.addr, BLOB_HEADER_BYTES + key_bytes, true);
    kv_index_set(&ftl->index, &pos, newloc, &now);
    vlog_account_replace(&ftl->vl, loc, newloc, h.seq);
    ftl->st.deletes++;
    fw_cmd_finish(ftl, KVFTL_OP_DELETE, arrival_ns, now, &fc, 0, cpl);
}

void kvftl_exist(struct kvftl *ftl, const void *key, uint32_t key_bytes, uint64_t arrival_ns,
                 struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct fw_cmd fc;
    if (!op_begin(ftl, cpl, &fc, 0, &now, false, true, key, key_bytes)) {
        return;
    }
    uint64_t loc;
    struct kv_index_pos pos;
    if (!lookup_live(ftl, key, key_bytes, &loc, &pos, &now)) {
        cpl->status = KVFTL_KEY_DOES_NOT_EXIST;
    }
    ftl->st.exists++;
    fw_cmd_finish(ftl, KVFTL_OP_EXIST, arrival_ns, now, &fc, 0, cpl);
}

void kvftl_flush(struct kvftl *ftl, uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct fw_cmd fc;
    if (!op_begin(ftl, cpl, &fc, 0, &now, true, false, NULL, 0)) {
        return;
    }
    /*
     * nvm: the buffer, and the dirty translation pages (a flushed Deallocate
     * is durable). First the image's size (fstat): a file shrunk under the
     * device cannot hold what the Flush promises.
     */
    if (nand_check_file(&ftl->nand) != 0 ||
        (ftl->nvm ? blockftl_flush(ftl, &now) : vlog_flush(&ftl->vl, &now)) != 0) {
        cpl->status = KVFTL_INTERNAL_ERROR;
    }
    /* the program of the last page must finish before the data is durable */
    for (uint32_t d = 0; d < ftl->nand.geo.dies; d++) {
        if (ftl->nand.die_busy_ns[d] > now) {
            now = ftl->nand.die_busy_ns[d];
        }
    }
    fw_cmd_end(ftl, &fc, 0, KVFTL_OP__COUNT, &now);
    cpl->done_ns = now;
    if (now > ftl->now_max_ns) {
        ftl->now_max_ns = now;
    }
    if (!ftl_powered(ftl)) {
        cpl->status = KVFTL_INTERNAL_ERROR;
    }
}

void kvftl_format(struct kvftl *ftl, uint64_t arrival_ns, struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct fw_cmd fc;
    if (!op_begin(ftl, cpl, &fc, 0, &now, true, false, NULL, 0)) {
        return;
    }
    uint64_t done = space_erase_all(&ftl->space, now);
    ftl_reset_state(ftl);
    fw_cmd_end(ftl, &fc, 0, KVFTL_OP__COUNT, &done);
    cpl->done_ns = done;
    if (done > ftl->now_max_ns) {
        ftl->now_max_ns = done;
    }
}

void kvftl_power_cut_after(struct kvftl *ftl, uint64_t nand_programs)
{
    ftl->nand.cut_armed = nand_programs != 0;
    ftl->nand.cut_countdown = nand_programs;
}

int kvftl_power_cycle(struct kvftl *ftl, char *err, size_t err_len)
{
    ftl->nand.power_lost = true;
    ftl->nand.cut_armed = false;
    if (ftl->cfg.plp) {
        /* the capacitors keep the controller up long enough to program the buffer */
        if (ftl->nvm) {
            blockftl_plp_dump(ftl, ftl->now_max_ns);
        } else {
            vlog_plp_dump(&ftl->vl, ftl->now_max_ns);
        }
    } else {
        stream_discard_unprogrammed(&ftl->space);
    }
    ftl->nand.power_lost = false;
    /* nvm: the map rebuilt from the translation pages and unit spare areas (block_recovery.c) */
    return recovery_scan(ftl, err, err_len);
}
