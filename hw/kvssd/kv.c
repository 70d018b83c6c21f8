/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KV command set of the emulated KV-SSD, without QEMU types: decode one
 * I/O command's dwords, validate every field, move data through the
 * command's struct kvssd_dptr, call the kvftl firmware and fill in the
 * completion. The standard commands (Flush, Store, Retrieve, List, Delete,
 * Exist) and the vendor extensions for long keys and iterators live here;
 * the inline Store and the tag table live in inline.c.
 *
 * The wire format is <kvssd/nvme_kv.h> and <kvssd/ext.h>; docs/protocol.md
 * describes every command, reserved field and status in prose.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdset.h"
#include "kv_internal.h"

/*
 * The key of a standard command whose key length field says @key_bytes
 * (1..255): up to 16 bytes in CDW2-3/CDW14-15, or, for 17..255, the key
 * staged under the tag in CDW2[11:0] (the rest of CDW2, CDW3, CDW14 and
 * CDW15 are then reserved). Taking a staged key consumes it.
 *
 * A standard host (nvme-cli, SPDK, xNVMe) knows only the KV format's key
 * maximum, 16, and has no Key Stage: a key length of 17..255 with no
 * staged key under that tag is its key that does not fit, and gets the
 * status the KV Command Set names for it, Invalid Key Size (86h), whatever
 * key bytes it left in the reserved dwords.
 */
static uint16_t kv_command_key(struct kvssd_ns *ns, const struct kvssd_req *req, uint32_t key_bytes,
                               uint8_t *key)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t tag = sqe->cdw[2] & KVSSD_TAG_MASK;
    uint16_t st;

    if (key_bytes == 0 || key_bytes > KVFTL_KEY_MAX_BYTES) {
        return KVSSD_SC_INVALID_KEY_SIZE;
    }
    if (key_bytes <= KVSSD_KEY_INLINE_MAX) {
        uint8_t k[KVSSD_KEY_INLINE_MAX];

        kvssd_sqe_get_key(sqe, k);
        memcpy(key, k, key_bytes);
        return KVSSD_SC_SUCCESS;
    }
    if (!kvssd_tags_key_staged(ns, tag, req->now_ns)) {
        return KVSSD_SC_INVALID_KEY_SIZE;
    }
    if (KVSSD_RESERVED(sqe->cdw[2], KVSSD_TAG_MASK) || sqe->cdw[3] || sqe->cdw[14] ||
        sqe->cdw[15]) {
        return KVSSD_SC_INVALID_FIELD;
    }
    st = kvssd_tags_take_key(ns, tag, key_bytes, key, req->now_ns);
    return st == KVSSD_SC_STAGED_KEY_UNKNOWN ? KVSSD_SC_INVALID_KEY_SIZE : st;
}

/* The firmware's completion: its time becomes the command's, its status the wire's. */
static uint16_t kv_ftl_status(struct kvssd_req *req, const struct kvftl_cpl *cpl)
{
    req->done_ns = cpl->done_ns;
    return kvssd_status_from_ftl(cpl->status);
}

/* The one place a value reaches kvftl_store() (struct kvssd_inline_owner's store_value). */
static uint16_t kv_store_value(struct kvssd_ns *ns, struct kvssd_req *req, const uint8_t *key,
                               uint32_t key_bytes, const uint8_t *value, uint32_t value_bytes,
                               uint32_t options, uint32_t inline_bytes, uint32_t inline_xfers)
{
    struct kvftl_store_req sr = {
        .key = key,
        .key_bytes = key_bytes,
        .value = value,
        .value_bytes = value_bytes,
        .options = options,
        .inline_bytes = inline_bytes,
        .inline_xfer_commands = inline_xfers,
        .arrival_ns = req->now_ns,
    };
    struct kvftl_cpl cpl = {0};

    kvftl_store(ns->ftl, &sr, &cpl);
    return kv_ftl_status(req, &cpl);
}

/* ---- Standard commands ------------------------------------------------ */

/* The Store Options bits of the wire (KVSSD_STORE_OPT_*) as the firmware's (KVFTL_STORE_*). */
static uint32_t store_options_from_wire(uint32_t wire)
{
    uint32_t options = 0;

    if (wire & KVSSD_STORE_OPT_ONLY_IF_EXISTS) {
        options |= KVFTL_STORE_ONLY_IF_EXISTS;
    }
    if (wire & KVSSD_STORE_OPT_ONLY_IF_ABSENT) {
        options |= KVFTL_STORE_ONLY_IF_ABSENT;
    }
    return options;
}

/* The Store fields of Store, 81h and 89h (struct kvssd_inline_owner's store_decode). */
static uint16_t kv_store_decode(const struct kvssd_sqe *sqe, struct kvssd_store_fields *f)
{
    uint8_t opcode = kvssd_sqe_opcode(sqe);
    uint32_t key_max = KVFTL_KEY_MAX_BYTES; /* the longest key the command's form can name */
    uint32_t wire_options;
    enum kvftl_status fst;
    bool reserved;

    if (opcode == KVSSD_OPC_STORE) {
        /* CDW10 value size, CDW11 key length | options << 8 */
        f->value_bytes = sqe->cdw[10];
        f->key_bytes = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;
        wire_options = (sqe->cdw[11] >> KVSSD_CDW11_OPTIONS_SHIFT) & KVSSD_CDW11_OPTIONS_MASK;
        reserved = KVSSD_RESERVED(sqe->cdw[11], 0xffffu) || sqe->cdw[12] || sqe->cdw[13] ||
                   KVSSD_RESERVED(wire_options, KVSSD_STORE_OPT_VALID_MASK);
    } else {
        /* an inline head's CDW10: value size | options << 22 | key length << 24 */
        f->value_bytes = sqe->cdw[10] & KVSSD_INLINE_VSIZE_MASK;
        f->key_bytes = sqe->cdw[10] >> KVSSD_INLINE_KLEN_SHIFT;
        wire_options = (sqe->cdw[10] >> KVSSD_INLINE_OPT_SHIFT) & KVSSD_STORE_OPT_VALID_MASK;
        reserved = false;
        if (opcode == KVSSD_OPC_INLINE_HEAD_FULL) {
            key_max = KVSSD_KEY_INLINE_MAX; /* no staged key: the key is in the SQE */
        }
    }
    f->staged = key_max > KVSSD_KEY_INLINE_MAX && f->key_bytes > KVSSD_KEY_INLINE_MAX;
    f->staged_tag = sqe->cdw[2] & KVSSD_TAG_MASK;
    /*
     * A stock head's CDW2 names its staged key, the rest of CDW2 is reserved
     * (CDW3 on is payload). Store's long-key form is checked by
     * kv_command_key(), once a staged key is found: without one, its key
     * length is a standard host's key that does not fit.
     */
    if (opcode == KVSSD_OPC_INLINE_HEAD && f->staged &&
        KVSSD_RESERVED(sqe->cdw[2], KVSSD_TAG_MASK)) {
        reserved = true;
    }
    if (reserved) {
        return KVSSD_SC_INVALID_FIELD;
    }
    f->options = store_options_from_wire(wire_options);
    fst = kvftl_store_check(f->key_bytes, f->value_bytes, f->options);
    /*
     * The firmware checks the key length before the value size; a key longer
     * than the form can name (a full-layout head's 17..255) is a key length
     * fault in that same place.
     */
    if ((fst == KVFTL_OK || fst == KVFTL_INVALID_VALUE_SIZE) && f->key_bytes > key_max) {
        return KVSSD_SC_INVALID_KEY_SIZE;
    }
    return kvssd_status_from_ftl(fst);
}

/* Store (01h): its fields by kv_store_decode(), its key, its value by data pointer. */
static uint16_t kv_store(struct kvssd_ns *ns, struct kvssd_req *req)
{
    struct kvssd_store_fields f;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint16_t st = kv_store_decode(req->sqe, &f);

    if (st == KVSSD_SC_SUCCESS) {
        st = kv_command_key(ns, req, f.key_bytes, key);
    }
    if (st == KVSSD_SC_SUCCESS) {
        st = kvssd_dptr_from_host(req, 0, ns->scratch, f.value_bytes);
    }
    if (st != KVSSD_SC_SUCCESS) {
        return st;
    }
    return kv_store_value(ns, req, key, f.key_bytes, ns->scratch, f.value_bytes, f.options, 0, 0);
}

/*
 * Retrieve (02h): CDW10 host buffer size, CDW11[7:0] key length. A short
 * buffer gets the value's first bytes and success; DW0 is the full size.
 */
static uint16_t kv_retrieve(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t buf_bytes = MIN(sqe->cdw[10], (uint32_t)KVFTL_VALUE_MAX_BYTES);
    uint32_t key_bytes = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    struct kvftl_cpl cpl = {0};
    uint16_t st;

    if (KVSSD_RESERVED(sqe->cdw[11], KVSSD_CDW11_KEY_LEN_MASK) || sqe->cdw[12] || sqe->cdw[13]) {
        return KVSSD_SC_INVALID_FIELD;
    }
    st = kv_command_key(ns, req, key_bytes, key);
    if (st != KVSSD_SC_SUCCESS) {
        return st;
    }
    kvftl_retrieve(ns->ftl, key, key_bytes, ns->scratch, 0, buf_bytes, req->now_ns, &cpl);
    st = kv_ftl_status(req, &cpl);
    if (st != KVSSD_SC_SUCCESS) {
        return st;
    }
    req->dw0 = cpl.value_bytes;
    return kvssd_dptr_to_host(req, 0, ns->scratch, MIN(cpl.xfer_bytes, buf_bytes));
}

/*
 * A command that names a key and moves no data (Delete, Exist): CDW10,
 * CDW12, CDW13 and CDW11 above the key length are reserved. Runs @op, the
 * firmware's call, on the key; returns the status and fills @cpl.
 */
static uint16_t kv_keyed_no_data(struct kvssd_ns *ns, struct kvssd_req *req,
                                 void (*op)(struct kvftl *ftl, const void *key, uint32_t key_bytes,
                                            uint64_t arrival_ns, struct kvftl_cpl *cpl),
                                 struct kvftl_cpl *cpl)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t key_bytes = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint16_t st;

    if (sqe->cdw[10] || KVSSD_RESERVED(sqe->cdw[11], KVSSD_CDW11_KEY_LEN_MASK) || sqe->cdw[12] ||
        sqe->cdw[13]) {
        return KVSSD_SC_INVALID_FIELD;
    }
    st = kv_command_key(ns, req, key_bytes, key);
    if (st != KVSSD_SC_SUCCESS) {
        return st;
    }
    op(ns->ftl, key, key_bytes, req->now_ns, cpl);
    return kv_ftl_status(req, cpl);
}

/* Delete (10h): a missing key is success unless EDNEK is on. */
static uint16_t kv_delete(struct kvssd_ns *ns, struct kvssd_req *req)
{
    struct kvftl_cpl cpl = {0};
    uint16_t st = kv_keyed_no_data(ns, req, kvftl_delete, &cpl);

    if (cpl.status == KVFTL_KEY_DOES_NOT_EXIST && !ns->cfg.ednek) {
        return KVSSD_SC_SUCCESS;
    }
    return st;
}

/* Exist (14h): success if the key is stored, KEY_DOES_NOT_EXIST if not. */
static uint16_t kv_exist(struct kvssd_ns *ns, struct kvssd_req *req)
{
    struct kvftl_cpl cpl = {0};

    return kv_keyed_no_data(ns, req, kvftl_exist, &cpl);
}

/* Flush (00h): program the page buffer. No fields. */
static uint16_t kv_flush(struct kvssd_ns *ns, struct kvssd_req *req)
{
    struct kvftl_cpl cpl = {0};

    kvftl_flush(ns->ftl, req->now_ns, &cpl);
    return kv_ftl_status(req, &cpl);
}

/* ---- List (06h) --------------------------------------------------------
 *
 * Keys in byte-wise lexicographic order (memcmp; a key that is a prefix of
 * another sorts first), strictly after the start key, as many as fit the
 * host buffer. The firmware iterates in its own (hash) order, so the device
 * walks every key with an internal iterator and keeps the smallest ones
 * that fit in a max-heap: memory is bounded by the host buffer size.
 */
/*
 * The selected keys live in one arena of records { u8 length, u32 heap
 * index, key }, and the heap holds their offsets: no allocation per key, so
 * neither the walk nor freeing 100,000 keys at the end leaves work for the
 * allocator (glibc consolidates that many freed small chunks in one go,
 * stalling whoever allocates next). A record is live while the heap slot it
 * names holds its offset; an evicted key's record becomes garbage. The
 * arena has a fixed size, 4 x budget + 1 KiB (live records take at most
 * 1.75 x budget + one record, since an entry is at least its key + 2 bytes
 * rounded up to 4 and at least 4); when it is full the live records are
 * slid down in arena order (a sequential pass, no random reads), and the
 * heap slots they name are updated. Each pass frees more than 2 x budget,
 * so it costs O(1) per key selected. In all: the arena + 4 bytes of heap
 * per key (at most budget / 4 keys), under 5 x budget + 2 KiB.
 */
#define LIST_REC_HDR 5u

struct list_select {
    const uint8_t *start;
    uint32_t start_bytes;    /* 0: from the first key */
    uint32_t budget;         /* bytes for entries */
    uint32_t used;           /* entry bytes of the keys in the heap */
    uint32_t *heap;          /* max-heap by key order: arena offsets */
    uint32_t count, cap;
    uint8_t *arena;
    uint32_t arena_used, arena_cap;
    bool bounded;            /* bound holds the smallest key evicted: nothing >= it can fit */
    uint8_t bound_len;
    uint8_t bound[KVFTL_KEY_MAX_BYTES];
};

static int key_order(const uint8_t *a, uint32_t a_len, const uint8_t *b, uint32_t b_len)
{
    uint32_t n = MIN(a_len, b_len);
    int c = n ? memcmp(a, b, n) : 0;

    if (c) {
        return c;
    }
    return a_len < b_len ? -1 : a_len > b_len;
}

static int list_key_order(const struct list_select *sel, uint32_t a, uint32_t b)
{
    return key_order(sel->arena + a + LIST_REC_HDR, sel->arena[a], sel->arena + b + LIST_REC_HDR,
                     sel->arena[b]);
}

/* Heap slot @i holds the record at @off; the record learns its slot. */
static void list_heap_set(struct list_select *sel, uint32_t i, uint32_t off)
{
    sel->heap[i] = off;
    memcpy(sel->arena + off + 1, &i, sizeof(i));
}

static bool list_rec_live(const struct list_select *sel, uint32_t off)
{
    uint32_t i;

    memcpy(&i, sel->arena + off + 1, sizeof(i));
    return i < sel->count && sel->heap[i] == off;
}

/* Room for @need more arena bytes: when full, slide the live records down. */
static void list_arena_reserve(struct list_select *sel, uint32_t need)
{
    uint32_t from = 0, to = 0;

    if (!sel->arena) {
        sel->arena_cap = 4 * sel->budget + 1024;
        sel->arena = g_malloc(sel->arena_cap);
    }
    if (sel->arena_used + need <= sel->arena_cap) {
        return;
    }
    while (from < sel->arena_used) {
        uint32_t n = LIST_REC_HDR + sel->arena[from];

        if (list_rec_live(sel, from)) {
            uint32_t i;

            memcpy(&i, sel->arena + from + 1, sizeof(i));
            memmove(sel->arena + to, sel->arena + from, n);
            sel->heap[i] = to;
            to += n;
        }
        from += n;
    }
    sel->arena_used = to;
}

static void list_heap_push(struct list_select *sel, const uint8_t *key, uint32_t key_bytes)
{
    uint32_t i, k;

    list_arena_reserve(sel, LIST_REC_HDR + key_bytes);
    k = sel->arena_used;
    sel->arena[k] = (uint8_t)key_bytes;
    memcpy(sel->arena + k + LIST_REC_HDR, key, key_bytes);
    sel->arena_used += LIST_REC_HDR + key_bytes;
    if (sel->count == sel->cap) {
        sel->cap = sel->cap ? sel->cap * 2 : 64;
        sel->heap = g_renew(uint32_t, sel->heap, sel->cap);
    }
    i = sel->count++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;

        if (list_key_order(sel, sel->heap[parent], k) >= 0) {
            break;
        }
        list_heap_set(sel, i, sel->heap[parent]);
        i = parent;
    }
    list_heap_set(sel, i, k);
}

/* Remove the largest key; returns its record's offset (valid until the next push). */
static uint32_t list_heap_pop(struct list_select *sel)
{
    uint32_t top = sel->heap[0];
    uint32_t last = sel->heap[--sel->count];
    uint32_t i = 0;

    for (;;) {
        uint32_t c = 2 * i + 1;

        if (c >= sel->count) {
            break;
        }
        if (c + 1 < sel->count && list_key_order(sel, sel->heap[c + 1], sel->heap[c]) > 0) {
            c++;
        }
        if (list_key_order(sel, sel->heap[c], last) <= 0) {
            break;
        }
        list_heap_set(sel, i, sel->heap[c]);
        i = c;
    }
    if (sel->count) {
        list_heap_set(sel, i, last);
    }
    return top;
}

static int list_emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                     uint32_t value_bytes)
{
    struct list_select *sel = opaque;

    if (sel->start_bytes && key_order(key, key_bytes, sel->start, sel->start_bytes) <= 0) {
        return 0;
    }
    if (sel->bounded && key_order(key, key_bytes, sel->bound, sel->bound_len) >= 0) {
        return 0;
    }
    list_heap_push(sel, key, key_bytes);
    sel->used += kvssd_list_entry_bytes(key_bytes);
    while (sel->used > sel->budget) {
        uint32_t evicted = list_heap_pop(sel);

        sel->used -= kvssd_list_entry_bytes(sel->arena[evicted]);
        sel->bounded = true;
        sel->bound_len = sel->arena[evicted];
        memcpy(sel->bound, sel->arena + evicted + LIST_REC_HDR, sel->bound_len);
    }
    return 0;
}

/*
 * The state of a List or Iter Read that is walking the index in slices
 * (parked by the transport between calls): everything the command needs
 * again, since the SQE alone cannot give a staged start key back.
 */
struct kv_cont {
    uint8_t opcode;
    uint32_t epoch;          /* ns->epoch at the start */
    uint64_t t;              /* simulated time reached */
    /* List */
    bool started;            /* holds ns's List slot and firmware iterator */
    bool output;             /* the walk is over: writing the keys out */
    uint32_t keys;           /* keys selected (the header's N) */
    uint32_t end;            /* host buffer offset of the end of the keys not yet written */
    struct list_select sel;
    uint8_t start[KVFTL_KEY_MAX_BYTES];
    /* Iter Read */
    uint32_t handle;
    uint32_t cap;            /* entry bytes the host buffer holds */
    uint32_t used, entries;  /* entry bytes and entries written to the host so far */
    bool key_values;
};

static void list_select_free(struct list_select *sel)
{
    g_free(sel->heap);
    g_free(sel->arena);
    sel->heap = NULL;
    sel->arena = NULL;
    sel->count = sel->cap = sel->used = 0;
    sel->arena_used = sel->arena_cap = 0;
    sel->bounded = false;
}

/* Give up List's slot and firmware iterator, if it still holds them. */
static void list_release(struct kvssd_ns *ns, struct kv_cont *c, uint64_t t)
{
    struct kvftl_cpl cpl;

    if (c->started && ns && c->epoch == ns->epoch) {
        kvftl_iter_close(ns->ftl, ns->list_handle, t, &cpl);
        ns->list_busy = false;
    }
    c->started = false;
}

/*
 * Index pages per slice of a parked List or Iter Read: KVSSD_SLICE_INDEX_ENTRIES
 * index slots' worth (each live slot costs a blob-header read), at least one page.
 */
static uint32_t kv_slice_pages(const struct kvssd_ns *ns)
{
    uint32_t slots = (kvftl_get_config(ns->ftl)->index_page_bytes - 16u) / 16u;

    return MAX(1u, KVSSD_SLICE_INDEX_ENTRIES / MAX(slots, 1u));
}

/* Park @c in @req: the transport runs the command again later. No completion yet. */
static uint16_t kv_park(struct kvssd_req *req, struct kv_cont *c)
{
    req->cont = c;
    req->in_progress = true;
    req->done_ns = c->t;
    return KVSSD_SC_SUCCESS;
}

/*
 * The walk state of a command that runs in slices (List, Iter Read): the
 * one it was parked with, or a new one from @begin. A new one is parked at
 * once when the command may park, so that the walk runs in the transport's
 * slices, not in the fetch. *@c is NULL when there is nothing more to do in
 * this call: @begin refused the command (its status is returned), or the
 * new state was parked. A state taken runs from now on in simulated time.
 */
static uint16_t kv_cont_take(struct kvssd_ns *ns, struct kvssd_req *req,
                             uint16_t (*begin)(struct kvssd_ns *ns, struct kvssd_req *req,
                                               struct kv_cont **c),
                             struct kv_cont **c)
{
    uint16_t st;

    *c = req->cont;
    req->cont = NULL;
    if (*c) {
        (*c)->t = MAX((*c)->t, req->now_ns);
        return KVSSD_SC_SUCCESS;
    }
    st = begin(ns, req, c);
    if (*c && req->may_park) {
        st = kv_park(req, *c);
        *c = NULL;
    }
    return st;
}

/* A new List: validate, take the start key. Its status; the new state in *@out. */
static uint16_t list_begin(struct kvssd_ns *ns, struct kvssd_req *req, struct kv_cont **out)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t buf_bytes = MIN(sqe->cdw[10], (uint32_t)KVSSD_SCRATCH_BYTES);
    uint32_t key_bytes = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;
    uint8_t start[KVFTL_KEY_MAX_BYTES];
    struct kv_cont *c;
    uint16_t st;

    *out = NULL;
    if (KVSSD_RESERVED(sqe->cdw[11], KVSSD_CDW11_KEY_LEN_MASK) || sqe->cdw[12] || sqe->cdw[13] ||
        buf_bytes < KVSSD_LIST_HEADER_BYTES) {
        return KVSSD_SC_INVALID_FIELD;
    }
    if (key_bytes) {
        st = kv_command_key(ns, req, key_bytes, start);
        if (st != KVSSD_SC_SUCCESS) {
            return st;
        }
    }
    c = g_new0(struct kv_cont, 1);
    c->opcode = KVSSD_OPC_LIST;
    c->epoch = ns->epoch;
    c->t = req->now_ns;
    memcpy(c->start, start, key_bytes);
    c->sel.start = c->start;
    c->sel.start_bytes = key_bytes;
    c->sel.budget = buf_bytes - KVSSD_LIST_HEADER_BYTES;
    *out = c;
    return KVSSD_SC_SUCCESS;
}

/* The List is over with @st (an error, or success once every key is written): @st. */
static uint16_t list_complete(struct kvssd_ns *ns, struct kvssd_req *req, struct kv_cont *c,
                              uint16_t st)
{
    list_release(ns, c, c->t);
    list_select_free(&c->sel);
    req->dw0 = st == KVSSD_SC_SUCCESS ? c->keys : 0;
    req->done_ns = c->t;
    g_free(c);
    return st;
}

/*
 * Write up to KVSSD_SLICE_LIST_KEYS selected keys to the host. The heap pops
 * the largest first, so the keys are written from the end of their area
 * towards its start, a contiguous chunk per call; the header goes last.
 * Returns true when the List is complete, with its status in *@st.
 */
static bool list_output(struct kvssd_ns *ns, struct kvssd_req *req, struct kv_cont *c, uint16_t *st)
{
    /* room for the largest chunk: KVSSD_SLICE_LIST_KEYS keys of 255 bytes */
    const uint32_t top = KVSSD_SLICE_LIST_KEYS * ((2 + KVFTL_KEY_MAX_BYTES + 3) & ~3u);
    struct list_select *sel = &c->sel;
    uint32_t n = 0, pos = top;

    G_STATIC_ASSERT(KVSSD_SLICE_LIST_KEYS * ((2 + KVFTL_KEY_MAX_BYTES + 3) & ~3u) <=
                    KVSSD_SCRATCH_BYTES);
    /* descending pops, laid out from the top of the scratch area down: ascending */
    while (n < KVSSD_SLICE_LIST_KEYS && sel->count) {
        uint32_t k = list_heap_pop(sel);
        uint32_t len = sel->arena[k];
        uint32_t eb = kvssd_list_entry_bytes(len);

        pos -= eb;
        memset(ns->scratch + pos, 0, eb);
        kvssd_put_le16(ns->scratch + pos, (uint16_t)len);
        memcpy(ns->scratch + pos + 2, sel->arena + k + LIST_REC_HDR, len);
        n++;
    }
    c->end -= top - pos;
    sel->used -= top - pos;
    *st = kvssd_dptr_to_host(req, c->end, ns->scratch + pos, top - pos);
    if (*st == KVSSD_SC_SUCCESS && !sel->count) {
        kvssd_put_le32(ns->scratch, c->keys);
        *st = kvssd_dptr_to_host(req, 0, ns->scratch, KVSSD_LIST_HEADER_BYTES);
        *st = list_complete(ns, req, c, *st);
        return true;
    }
    if (*st != KVSSD_SC_SUCCESS) {
        *st = list_complete(ns, req, c, *st);
        return true;
    }
    return false;
}

/* Write the selected keys out: all of them, or with may_park a chunk per call. */
static uint16_t list_write_out(struct kvssd_ns *ns, struct kvssd_req *req, struct kv_cont *c)
{
    uint16_t st;

    while (!list_output(ns, req, c, &st)) {
        if (req->may_park) {
            return kv_park(req, c);
        }
    }
    return st;
}

/*
 * List walks every key (see above). Parked, it walks
 * kv_slice_pages() index pages per call, then writes KVSSD_SLICE_LIST_KEYS
 * keys per call; only one List walks at a time (the others wait parked,
 * holding their start key only), so the selection heap exists once. A
 * Format or reset in between restarts the walk on what is stored then.
 */
static uint16_t kv_list(struct kvssd_ns *ns, struct kvssd_req *req)
{
    struct kv_cont *c;
    uint16_t st = kv_cont_take(ns, req, list_begin, &c);
    struct kvftl_cpl cpl = {0};

    if (!c) {
        return st;
    }
    if (c->output) {
        return list_write_out(ns, req, c);
    }
    if (c->epoch != ns->epoch) {
        list_select_free(&c->sel);
        c->started = false;
        c->epoch = ns->epoch;
    }
    if (!c->started) {
        if (ns->list_busy && req->may_park) {
            return kv_park(req, c);
        }
        kvftl_iter_open(ns->ftl, 0, 0, KVFTL_ITER_KEYS, c->t, &ns->list_handle, &cpl);
        c->t = MAX(c->t, cpl.done_ns);
        if (cpl.status != KVFTL_OK) {
            return list_complete(ns, req, c, kvssd_status_from_ftl(cpl.status));
        }
        ns->list_busy = true;
        c->started = true;
    }
    for (;;) {
        kvftl_iter_step(ns->ftl, ns->list_handle, UINT32_MAX,
                        req->may_park ? kv_slice_pages(ns) : UINT32_MAX, list_emit, &c->sel, c->t,
                        &cpl);
        c->t = MAX(c->t, cpl.done_ns);
        if (cpl.status == KVFTL_ITERATOR_END) {
            break;
        }
        if (cpl.status != KVFTL_OK) {
            return list_complete(ns, req, c, kvssd_status_from_ftl(cpl.status));
        }
        if (req->may_park) {
            return kv_park(req, c);
        }
    }
    /* the walk is over: the output starts in the next slice */
    list_release(ns, c, c->t);
    c->output = true;
    c->keys = c->sel.count;
    c->end = KVSSD_LIST_HEADER_BYTES + c->sel.used;
    if (req->may_park) {
        return kv_park(req, c);
    }
    return list_write_out(ns, req, c);
}

/* ---- Extension: Key Stage (91h) ---------------------------------------- */

static uint16_t kv_key_stage(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t key_bytes = sqe->cdw[10] & 0xffu;
    uint32_t tag = sqe->cdw[11] & KVSSD_TAG_MASK;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint16_t st;

    if (sqe->cdw[2] || sqe->cdw[3] || KVSSD_RESERVED(sqe->cdw[10], 0xffu) ||
        KVSSD_RESERVED(sqe->cdw[11], KVSSD_TAG_MASK) || sqe->cdw[12] || sqe->cdw[13] ||
        sqe->cdw[14] || sqe->cdw[15]) {
        return KVSSD_SC_INVALID_FIELD;
    }
    if (key_bytes <= KVSSD_KEY_INLINE_MAX) {
        return KVSSD_SC_INVALID_KEY_SIZE;
    }
    st = kvssd_dptr_from_host(req, 0, key, key_bytes);
    if (st != KVSSD_SC_SUCCESS) {
        return st;
    }
    return kvssd_tags_stage_key(ns, tag, key, key_bytes, req->now_ns);
}

/* ---- Extension: iterators (90h, 92h, 94h) ------------------------------- */

static uint16_t kv_iter_open(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    bool key_values = sqe->cdw[12] & KVSSD_ITER_FLAG_KEY_VALUE;
    struct kvftl_cpl cpl = {0};
    uint32_t handle = 0;
    uint16_t st;

    if (sqe->cdw[2] || sqe->cdw[3] || KVSSD_RESERVED(sqe->cdw[12], KVSSD_ITER_FLAG_KEY_VALUE) ||
        sqe->cdw[13] || sqe->cdw[14] || sqe->cdw[15]) {
        return KVSSD_SC_INVALID_FIELD;
    }
    kvftl_iter_open(ns->ftl, sqe->cdw[10], sqe->cdw[11],
                    key_values ? KVFTL_ITER_KEY_VALUES : KVFTL_ITER_KEYS, req->now_ns, &handle,
                    &cpl);
    st = kv_ftl_status(req, &cpl);
    if (st != KVSSD_SC_SUCCESS) {
        return st;
    }
    if (handle >= KVSSD_ITER_MAX_HANDLES) {
        /* The firmware broke its own contract: do not hand it out. */
        kvftl_iter_close(ns->ftl, handle, cpl.done_ns, &cpl);
        return KVSSD_SC_INTERNAL_ERROR;
    }
    ns->host_iterators |= 1u << handle;
    ns->host_iterator_unrecovered &= ~(1u << handle);
    if (key_values) {
        ns->host_iterator_kv |= 1u << handle;
    } else {
        ns->host_iterator_kv &= ~(1u << handle);
    }
    req->dw0 = handle;
    return KVSSD_SC_SUCCESS;
}

struct iter_fill {
    uint8_t *buf;
    uint32_t cap;
    uint32_t used;
    uint32_t entries;
    bool key_values;
    bool full;               /* an entry did not fit */
};

static int iter_emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                     uint32_t value_bytes)
{
    struct iter_fill *f = opaque;
    uint32_t eb = kvssd_iter_entry_bytes(key_bytes, f->key_values, value_bytes);
    uint8_t *p = f->buf + f->used;

    if (eb > f->cap - f->used) {
        f->full = true;
        return 1;
    }
    memset(p, 0, eb);
    kvssd_put_le16(p, (uint16_t)key_bytes);
    memcpy(p + 2, key, key_bytes);
    if (f->key_values) {
        kvssd_put_le32(p + 2 + key_bytes, value_bytes);
        if (value_bytes) {
            memcpy(p + 6 + key_bytes, value, value_bytes);
        }
    }
    f->used += eb;
    f->entries++;
    return 0;
}

static bool kv_host_iterator(const struct kvssd_ns *ns, uint32_t handle)
{
    return handle < KVSSD_ITER_MAX_HANDLES && (ns->host_iterators & (1u << handle));
}

/* A new Iter Read: validate. Its status; the new state in *@out. */
static uint16_t iter_read_begin(struct kvssd_ns *ns, struct kvssd_req *req, struct kv_cont **out)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t buf_bytes = MIN(sqe->cdw[10], (uint32_t)KVSSD_SCRATCH_BYTES);
    uint32_t handle = sqe->cdw[11] & 0xffu;
    struct kv_cont *c;

    *out = NULL;
    if (sqe->cdw[2] || sqe->cdw[3] || KVSSD_RESERVED(sqe->cdw[11], 0xffu) || sqe->cdw[12] ||
        sqe->cdw[13] || sqe->cdw[14] || sqe->cdw[15] ||
        buf_bytes < sizeof(struct kvssd_iter_header)) {
        return KVSSD_SC_INVALID_FIELD;
    }
    if (!kv_host_iterator(ns, handle)) {
        return KVSSD_SC_INVALID_ITERATOR;
    }
    if (ns->host_iterator_unrecovered & (1u << handle)) {
        /* the damaged blob the last read stopped before (the firmware's cursor is past it) */
        ns->host_iterator_unrecovered &= ~(1u << handle);
        return KVSSD_SC_UNRECOVERED_ERROR;
    }
    c = g_new0(struct kv_cont, 1);
    c->opcode = KVSSD_OPC_ITER_READ;
    c->epoch = ns->epoch;
    c->t = req->now_ns;
    c->handle = handle;
    c->cap = buf_bytes - sizeof(struct kvssd_iter_header);
    c->key_values = ns->host_iterator_kv & (1u << handle);
    *out = c;
    return KVSSD_SC_SUCCESS;
}

/*
 * Iter Read fills the host buffer until an entry does not fit or the
 * iterator ends. Parked, each call walks kv_slice_pages() index pages
 * and writes the entries it found straight to their place in the host
 * buffer (after the header, written last), so a parked read holds no buffer.
 */
static uint16_t kv_iter_read(struct kvssd_ns *ns, struct kvssd_req *req)
{
    struct kv_cont *c;
    uint16_t st = kv_cont_take(ns, req, iter_read_begin, &c);
    struct kvftl_cpl cpl = {0};

    if (!c) {
        return st;
    }
    for (;;) {
        struct iter_fill fill = {
            .buf = ns->scratch,
            .cap = c->cap - c->used,
            .key_values = c->key_values,
        };

        /* the host closed it (or a reset or Format did) while this read was parked */
        if (c->epoch != ns->epoch || !kv_host_iterator(ns, c->handle)) {
            st = KVSSD_SC_INVALID_ITERATOR;
            break;
        }
        kvftl_iter_step(ns->ftl, c->handle, UINT32_MAX,
                        req->may_park ? kv_slice_pages(ns) : UINT32_MAX, iter_emit, &fill, c->t,
                        &cpl);
        c->t = MAX(c->t, cpl.done_ns);
        st = kvssd_status_from_ftl(cpl.status);
        if (st == KVSSD_SC_UNRECOVERED_ERROR && c->entries) {
            /* a damaged blob after entries: they are this read's result, the error comes next time
             */
            ns->host_iterator_unrecovered |= 1u << c->handle;
            st = KVSSD_SC_SUCCESS;
            break;
        }
        if (st == KVSSD_SC_SUCCESS && fill.used) {
            st = kvssd_dptr_to_host(req, sizeof(struct kvssd_iter_header) + c->used, ns->scratch,
                                    fill.used);
        }
        if (st != KVSSD_SC_SUCCESS) {
            break;
        }
        c->used += fill.used;
        c->entries += fill.entries;
        if (fill.full) {
            break;
        }
        if (req->may_park) {
            return kv_park(req, c);
        }
    }
    /* the end after some entries: they are this read's result, End comes next time */
    if (st == KVSSD_SC_ITERATOR_END && c->entries) {
        st = KVSSD_SC_SUCCESS;
    }
    if (st == KVSSD_SC_SUCCESS) {
        kvssd_put_le32(ns->scratch, c->entries);
        kvssd_put_le32(ns->scratch + 4, c->used);
        req->dw0 = c->entries;
        st = kvssd_dptr_to_host(req, 0, ns->scratch, sizeof(struct kvssd_iter_header));
    }
    req->done_ns = c->t;
    g_free(c);
    return st;
}

static uint16_t kv_iter_close(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t handle = sqe->cdw[10] & 0xffu;
    struct kvftl_cpl cpl = {0};

    if (sqe->cdw[2] || sqe->cdw[3] || KVSSD_RESERVED(sqe->cdw[10], 0xffu) || sqe->cdw[11] ||
        sqe->cdw[12] || sqe->cdw[13] || sqe->cdw[14] || sqe->cdw[15]) {
        return KVSSD_SC_INVALID_FIELD;
    }
    if (!kv_host_iterator(ns, handle)) {
        return KVSSD_SC_INVALID_ITERATOR;
    }
    kvftl_iter_close(ns->ftl, handle, req->now_ns, &cpl);
    ns->host_iterators &= ~(1u << handle);
    ns->host_iterator_kv &= ~(1u << handle);
    ns->host_iterator_unrecovered &= ~(1u << handle);
    return kv_ftl_status(req, &cpl);
}

void kvssd_kv_cancel(struct kvssd_ns *ns, void *cont)
{
    struct kv_cont *c = cont;

    if (!c) {
        return;
    }
    if (c->opcode == KVSSD_OPC_LIST) {
        list_release(ns, c, 0);
        list_select_free(&c->sel);
    }
    g_free(c);
}

static void kv_close_host_iterators(struct kvssd_ns *ns)
{
    struct kvftl_cpl cpl;

    /* a parked List's iterator: the List restarts (or is cancelled) after this */
    if (ns->list_busy) {
        kvftl_iter_close(ns->ftl, ns->list_handle, 0, &cpl);
        ns->list_busy = false;
    }
    ns->epoch++;

    for (uint32_t h = 0; h < KVSSD_ITER_MAX_HANDLES; h++) {
        if (ns->host_iterators & (1u << h)) {
            kvftl_iter_close(ns->ftl, h, 0, &cpl);
        }
    }
    ns->host_iterators = 0;
    ns->host_iterator_kv = 0;
    ns->host_iterator_unrecovered = 0;
}

/* ---- The seam ----------------------------------------------------------- */

/* A command's handler: its status; DW0, DW1, done_ns and parking in @req. */
typedef uint16_t kv_handler(struct kvssd_ns *ns, struct kvssd_req *req);

/* The handler of each row of <kvssd/kv_opcodes.def>; NULL for any other opcode. */
static kv_handler *kv_handler_of(uint8_t opcode)
{
    switch (opcode) {
#define KVSSD_KV_OPCODE(sym, opc, set, name, dir, effects, handler, trace, counter, encoder, verb) \
    case KVSSD_OPC_##sym:                                                                          \
        return handler;
#include "kvssd/kv_opcodes.def"
    default:
        return NULL;
    }
}

/* The transfer counter a command counts in besides "commands" (its row's); NULL for none. */
static uint64_t *kv_class_counter(struct kvssd_xfer_counters *x, uint8_t opcode)
{
    uint64_t *c;

    switch (opcode) {
#define KVSSD_KV_OPCODE(sym, opc, set, name, dir, effects, handler, trace, counter, encoder, verb) \
    case KVSSD_OPC_##sym:                                                                          \
        c = &x->counter;                                                                           \
        break;
#include "kvssd/kv_opcodes.def"
    default:
        return NULL;
    }
    return c == &x->commands ? NULL : c;
}

static const struct kvssd_kv_opcode_info kv_opcode_rows[] = {
#define KVSSD_KV_OPCODE(sym, opc, set, name, dir, effects, handler, trace, counter, encoder, verb) \
    {KVSSD_OPC_##sym, name, KVSSD_DATA_##dir, effects, #trace, #counter},
#include "kvssd/kv_opcodes.def"
};

const struct kvssd_kv_opcode_info *kvssd_kv_opcodes(size_t *count)
{
    *count = sizeof(kv_opcode_rows) / sizeof(kv_opcode_rows[0]);
    return kv_opcode_rows;
}

const struct kvssd_kv_opcode_info *kvssd_kv_opcode_info(uint8_t opcode)
{
    for (size_t i = 0; i < sizeof(kv_opcode_rows) / sizeof(kv_opcode_rows[0]); i++) {
        if (kv_opcode_rows[i].opcode == opcode) {
            return &kv_opcode_rows[i];
        }
    }
    return NULL;
}

bool kvssd_kv_opcode_supported(uint8_t opcode)
{
    return kvssd_kv_opcode_info(opcode) != NULL;
}

void kvssd_kv_execute(struct kvssd_ns *ns, struct kvssd_req *req)
{
    kv_handler *run = kv_handler_of(kvssd_sqe_opcode(req->sqe));

    req->dw0 = 0;
    req->dw1 = 0;
    req->done_ns = req->now_ns;
    req->in_progress = false;
    if (!req->cont) {
        uint64_t *counter = kv_class_counter(ns->xfer, kvssd_sqe_opcode(req->sqe));

        ns->xfer->commands++; /* once per command, not per slice */
        if (counter) {
            (*counter)++;
        }
    }

    if (req->cont && ((struct kv_cont *)req->cont)->opcode != kvssd_sqe_opcode(req->sqe)) {
        /* the transport broke the parking contract: drop the state, fail the command */
        kvssd_kv_cancel(ns, req->cont);
        req->cont = NULL;
        req->status = KVSSD_SC_INTERNAL_ERROR;
        return;
    }
    req->status = run ? run(ns, req) : KVSSD_SC_INVALID_OPCODE;
    if (req->done_ns < req->now_ns) {
        req->done_ns = req->now_ns;
    }
}

/* ---- Namespace life cycle ----------------------------------------------- */

/* What inline.c asks of this command set. */
static const struct kvssd_inline_owner kv_inline_owner = {
    .store_decode = kv_store_decode,
    .store_value = kv_store_value,
};

struct kvssd_ns *kvssd_ns_new(struct kvftl *ftl, const struct kvssd_ns_config *cfg,
                              struct kvssd_xfer_counters *xfer, char *err, size_t err_len)
{
    struct kvssd_ns_config c = {
        .tag_table_entries = KVSSD_NS_DEFAULT_TAG_TABLE_ENTRIES,
        .inline_timeout_ns = KVSSD_NS_DEFAULT_INLINE_TIMEOUT_NS,
        .ednek = false,
    };
    struct kvssd_ns *ns;

    if (cfg) {
        c = *cfg;
    }
    if (!ftl) {
        snprintf(err, err_len, "the KV namespace needs an opened kvftl instance");
        return NULL;
    }
    if (c.tag_table_entries < 1 || c.tag_table_entries > KVSSD_NS_MAX_TAG_TABLE_ENTRIES) {
        snprintf(err, err_len, "tag_table_entries is %u; it must be from 1 to %u",
                 c.tag_table_entries, KVSSD_NS_MAX_TAG_TABLE_ENTRIES);
        return NULL;
    }
    if (c.inline_timeout_ns == 0) {
        snprintf(err, err_len, "inline_timeout_ns is 0; it must be at least 1 (ns)");
        return NULL;
    }
    ns = g_new0(struct kvssd_ns, 1);
    ns->ftl = ftl;
    ns->inline_owner = &kv_inline_owner;
    ns->cfg = c;
    ns->xfer = xfer ? xfer : &ns->own_xfer;
    ns->scratch = g_malloc(KVSSD_SCRATCH_BYTES);
    kvssd_tags_init(ns);
    return ns;
}

void kvssd_ns_free(struct kvssd_ns *ns)
{
    if (!ns) {
        return;
    }
    kv_close_host_iterators(ns);
    kvssd_tags_free(ns);
    g_free(ns->scratch);
    g_free(ns);
}

struct kvftl *kvssd_ns_ftl(struct kvssd_ns *ns)
{
    return ns->ftl;
}

void kvssd_ns_set_ednek(struct kvssd_ns *ns, bool on)
{
    ns->cfg.ednek = on;
}

bool kvssd_ns_get_ednek(const struct kvssd_ns *ns)
{
    return ns->cfg.ednek;
}

void kvssd_ns_expire(struct kvssd_ns *ns, uint64_t now_ns)
{
    kvssd_tags_expire(ns, now_ns);
}

void kvssd_ns_reset(struct kvssd_ns *ns)
{
    kv_close_host_iterators(ns);
    kvssd_tags_reset(ns);
}
