/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Iterators. Keys are grouped by their first 4 bytes (Samsung's iterator
 * buckets): a key matches when (first4(key) & mask) == (prefix & mask).
 * The walk goes through the index in increasing key-hash order, one index
 * page (a contiguous hash range) at a time; each candidate's key is read
 * from its blob. The cursor is (hash, entries of that hash already
 * handled), so index splits, overwrites and GC relocation never make the
 * walk repeat or skip a key.
 *
 * Semantics: every key live for the whole iteration is returned exactly
 * once; a deleted key is never returned (an entry is checked when it is
 * emitted); a key stored after the open is returned iff its hash is above
 * the cursor when it is stored ("may be seen").
 */
#include "iterator.h"

#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "ftl.h"
#include "fw_time.h"
#include "kv_index.h"
#include "stats.h"
#include "value_log.h"

uint32_t iter_first4(const void *key, uint32_t key_bytes)
{
    uint8_t b[4] = {0};
    memcpy(b, key, key_bytes < 4 ? key_bytes : 4);
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void iter_done(struct kvftl *ftl, const struct fw_cmd *fc, uint64_t arrival_ns, uint64_t now,
                      struct kvftl_cpl *cpl)
{
    if (!ftl_powered(ftl)) {
        cpl->status = KVFTL_INTERNAL_ERROR;
    }
    fw_cmd_end(ftl, fc, 0, KVFTL_OP_ITERATE, &now);
    cpl->done_ns = now;
    stats_record_op(ftl, KVFTL_OP_ITERATE, arrival_ns, now);
}

void kvftl_iter_open(struct kvftl *ftl, uint32_t prefix, uint32_t mask, enum kvftl_iter_kind kind,
                     uint64_t arrival_ns, uint32_t *handle, struct kvftl_cpl *cpl)
{
    memset(cpl, 0, sizeof(*cpl));
    cpl->done_ns = arrival_ns;
    if (ftl->nvm) {
        cpl->status = KVFTL_INVALID_FIELD; /* a KV command on the nvm personality */
        return;
    }
    if (!ftl_powered(ftl)) {
        cpl->status = KVFTL_INTERNAL_ERROR;
        return;
    }
    if ((kind != KVFTL_ITER_KEYS && kind != KVFTL_ITER_KEY_VALUES) || !handle) {
        cpl->status = KVFTL_INVALID_FIELD;
        return;
    }
    for (uint32_t i = 0; i < KVFTL_MAX_ITERATORS; i++) {
        struct iterator *it = &ftl->iters[i];
        if (!it->open) {
            memset(it, 0, sizeof(*it));
            it->open = true;
            it->prefix = prefix;
            it->mask = mask;
            it->kind = kind;
            *handle = i;
            uint64_t now = arrival_ns;
            struct fw_cmd fc;
            fw_cmd_begin(ftl, &fc, 0, &now);
            iter_done(ftl, &fc, arrival_ns, now, cpl);
            return;
        }
    }
    cpl->status = KVFTL_ITERATOR_LIMIT;
}

/*
 * The opening of the calls on a handle: reset @cpl to success at the
 * arrival time, then refuse a device that lost power (INTERNAL_ERROR) and
 * a handle that is not open (INVALID_ITERATOR). Returns its iterator, or
 * NULL when the call may not proceed.
 */
static struct iterator *iter_begin(struct kvftl *ftl, uint32_t handle, uint64_t arrival_ns,
                                   struct kvftl_cpl *cpl)
{
    memset(cpl, 0, sizeof(*cpl));
    cpl->done_ns = arrival_ns;
    if (ftl->nvm) {
        cpl->status = KVFTL_INVALID_FIELD; /* a KV command on the nvm personality */
        return NULL;
    }
    if (!ftl_powered(ftl)) {
        cpl->status = KVFTL_INTERNAL_ERROR;
        return NULL;
    }
    if (handle >= KVFTL_MAX_ITERATORS || !ftl->iters[handle].open) {
        cpl->status = KVFTL_INVALID_ITERATOR;
        return NULL;
    }
    return &ftl->iters[handle];
}

void kvftl_iter_close(struct kvftl *ftl, uint32_t handle, uint64_t arrival_ns,
                      struct kvftl_cpl *cpl)
{
    struct iterator *it = iter_begin(ftl, handle, arrival_ns, cpl);
    if (it) {
        it->open = false;
    }
}

void kvftl_iter_next(struct kvftl *ftl, uint32_t handle, uint32_t max_entries,
                     kvftl_iter_emit_fn emit, void *opaque, uint64_t arrival_ns,
                     struct kvftl_cpl *cpl)
{
    kvftl_iter_step(ftl, handle, max_entries, UINT32_MAX, emit, opaque, arrival_ns, cpl);
}

/* What one step of an iteration emits to, and how much (kvftl_iter_step()). */
struct iter_sink {
    kvftl_iter_emit_fn emit;
    void *opaque;
    uint32_t max_entries;
    uint32_t emitted;
    bool refused;     /* emit() refused, or damage after something was emitted */
    bool unrecovered; /* damage with nothing emitted: Unrecovered Error */
};

/*
 * The live entries of the index's chunk holding the cursor, from the
 * cursor on, sorted by hash (*@n of them in *@cand; *@last ends the
 * chunk); returns the first one not yet handled (those with the cursor's
 * hash already done are skipped).
 */
static uint32_t iter_candidates(struct kvftl *ftl, const struct iterator *it,
                                const struct kv_index_entry **cand, uint32_t *n, uint64_t *last,
                                uint64_t *now)
{
    kv_index_walk(&ftl->index, it->next_hash, cand, n, last, now);
    uint32_t i = 0, same = 0;
    while (i < *n && (*cand)[i].hash == it->next_hash && same < it->same_done) {
        i++;
        same++;
    }
    return i;
}

/*
 * Candidate entry @c: read its key (and value), emit it if it matches, and
 * move the cursor past it. true when the step stops here: emit() refused,
 * or damage after something was emitted (both leave the cursor on the
 * entry), a full batch, or damage with nothing emitted.
 */
static bool iter_visit(struct kvftl *ftl, struct iterator *it, const struct kv_index_entry *c,
                       struct iter_sink *k, uint64_t *now)
{
    uint64_t loc = c->loc;
    uint32_t hdr_len = loc_len(loc) < BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES
                           ? loc_len(loc)
                           : BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES;
    uint64_t last_ppn;
    /* in place: a stripe is contiguous in the backing store, buffered pages included */
    const uint8_t *p = vlog_bytes(&ftl->vl, loc_addr(loc), hdr_len, UINT64_MAX, &last_ppn, now);
    uint32_t kb = p[1];
    const uint8_t *key = p + BLOB_HEADER_BYTES;
    /*
     * A blob damaged in the image after its index entry was made: its
     * key no longer hashes to the entry (a cheap check of the key
     * alone), or, when the value is returned too, the record fails
     * its checksum. Reported as Unrecovered Error, never skipped.
     */
    bool damaged = !kb || BLOB_HEADER_BYTES + kb > hdr_len || p[0] != REC_PAIR ||
                   kv_index_hash(&ftl->index, key, kb) != c->hash;
    bool match = !damaged && (iter_first4(key, kb) & it->mask) == (it->prefix & it->mask);
    const uint8_t *blob = NULL;
    if (match && it->kind == KVFTL_ITER_KEY_VALUES) {
        blob = vlog_read_record(&ftl->vl, loc, REC_PAIR, kb,
                                loc_addr(loc) / ftl->nand.geo.page_size, NULL, now);
        damaged = !blob;
    }
    if (damaged) {
        if (k->emitted) {
            /* deliver what was emitted; the next step starts at this entry */
            k->refused = true;
            return true;
        }
        k->unrecovered = true;
        ftl->st.media_errors++;
    } else if (match) {
        const uint8_t *value = NULL;
        uint32_t vbytes = 0;
        if (it->kind == KVFTL_ITER_KEY_VALUES) {
            vbytes = loc_len(loc) - BLOB_HEADER_BYTES - kb;
            if (!ftl->iter_value) {
                ftl->iter_value = g_malloc(KVFTL_VALUE_MAX_BYTES);
            }
            memcpy(ftl->iter_value, blob + BLOB_HEADER_BYTES + kb, vbytes);
            value = ftl->iter_value;
        }
        if (k->emit(k->opaque, key, kb, value, vbytes) != 0) {
            k->refused = true;
            return true;
        }
        k->emitted++;
        ftl->st.host_bytes_out += vbytes;
    }
    if (c->hash == it->next_hash) {
        it->same_done++;
    } else {
        it->next_hash = c->hash;
        it->same_done = 1;
    }
    return k->emitted == k->max_entries || k->unrecovered;
}

/* The cursor moves past an index page whose hashes end at @last. */
static void iter_past_page(struct iterator *it, uint64_t last)
{
    if (last == UINT64_MAX) {
        it->done = true;
    } else {
        it->next_hash = last + 1;
        it->same_done = 0;
    }
}

/*
 * The walk behind both calls. A step ends after @max_pages index pages
 * (at least one) even if nothing matched: each page costs a bounded amount
 * of work (its slots, one blob-header read per live entry), so a device can
 * run a long iteration in slices that each hold its main loop briefly. The
 * cursor is advanced past every page walked, so the next step goes on
 * where this one stopped.
 */
void kvftl_iter_step(struct kvftl *ftl, uint32_t handle, uint32_t max_entries, uint32_t max_pages,
                     kvftl_iter_emit_fn emit, void *opaque, uint64_t arrival_ns,
                     struct kvftl_cpl *cpl)
{
    uint64_t now = arrival_ns;
    struct iterator *it = iter_begin(ftl, handle, arrival_ns, cpl);
    if (!it) {
        return;
    }
    if (!emit) {
        cpl->status = KVFTL_INVALID_FIELD;
        return;
    }
    /* firmware time per call: a device that runs one command in slices pays it per slice */
    struct fw_cmd fc;
    fw_cmd_begin(ftl, &fc, 0, &now);
    ftl->st.iterates++;
    if (it->done) {
        cpl->status = KVFTL_ITERATOR_END;
        iter_done(ftl, &fc, arrival_ns, now, cpl);
        return;
    }

    struct iter_sink k = {.emit = emit, .opaque = opaque, .max_entries = max_entries};
    uint32_t pages = 0;
    if (max_pages == 0) {
        max_pages = 1;
    }
    while (k.emitted < max_entries && !k.refused && !it->done && pages < max_pages) {
        uint64_t last;
        pages++;
        uint32_t n;
        const struct kv_index_entry *cand;
        uint32_t i = iter_candidates(ftl, it, &cand, &n, &last, &now);
        for (; i < n; i++) {
            if (iter_visit(ftl, it, &cand[i], &k, &now)) {
                break;
            }
        }
        if (k.refused || k.emitted == max_entries || k.unrecovered) {
            if (i + 1 >= n && !k.refused) {
                iter_past_page(it, last); /* the page is exhausted too */
            }
            break;
        }
        iter_past_page(it, last);
    }
    cpl->value_bytes = k.emitted;
    if (k.unrecovered) {
        cpl->status = KVFTL_UNRECOVERED_ERROR; /* the cursor is past the damaged entry */
    } else if (k.emitted == 0 && it->done && !k.refused) {
        cpl->status = KVFTL_ITERATOR_END;
    }
    iter_done(ftl, &fc, arrival_ns, now, cpl);
}
