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

static uint16_t dptr_from_host(struct kvssd_req *req, uint64_t offset, void *buf, uint32_t len)
{
    if (len == 0) {
        return KVSSD_SC_SUCCESS;
    }
    if (!req->dptr.from_host) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    return req->dptr.from_host(req->dptr.opaque, offset, buf, len);
}

static uint16_t dptr_to_host(struct kvssd_req *req, uint64_t offset, const void *buf, uint32_t len)
{
    if (len == 0) {
        return KVSSD_SC_SUCCESS;
    }
    if (!req->dptr.to_host) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    return req->dptr.to_host(req->dptr.opaque, offset, buf, len);
}

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
static uint16_t kv_command_key(struct kvssd_ns *ns, const struct kvssd_req *req,
                               uint32_t key_bytes, uint8_t *key)
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

void kvssd_kv_store_value(struct kvssd_ns *ns, struct kvssd_req *req,
                          const uint8_t *key, uint32_t key_bytes,
                          const uint8_t *value, uint32_t value_bytes,
                          uint32_t options, uint32_t inline_bytes)
{
    struct kvftl_store_req sr = {
        .key = key,
        .key_bytes = key_bytes,
        .value = value,
        .value_bytes = value_bytes,
        .options = options,
        .inline_bytes = inline_bytes,
        .arrival_ns = req->now_ns,
    };
    struct kvftl_cpl cpl = {0};

    kvftl_store(ns->ftl, &sr, &cpl);
    req->status = cpl.status;
    req->done_ns = cpl.done_ns;
}

/* ---- Standard commands ------------------------------------------------ */

/* Store (01h): CDW10 value size, CDW11 key length | options << 8. */
static void kv_store(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t value_bytes = sqe->cdw[10];
    uint32_t key_bytes = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;
    uint32_t options = (sqe->cdw[11] >> KVSSD_CDW11_OPTIONS_SHIFT) & KVSSD_CDW11_OPTIONS_MASK;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint16_t st;

    if (KVSSD_RESERVED(sqe->cdw[11], 0xffffu) || sqe->cdw[12] || sqe->cdw[13] ||
        KVSSD_RESERVED(options, KVSSD_STORE_OPT_VALID_MASK) ||
        options == (KVSSD_STORE_OPT_ONLY_IF_EXISTS | KVSSD_STORE_OPT_ONLY_IF_ABSENT)) {
        req->status = KVSSD_SC_INVALID_FIELD;
        return;
    }
    if (key_bytes == 0) {
        req->status = KVSSD_SC_INVALID_KEY_SIZE;
        return;
    }
    if (value_bytes > KVFTL_VALUE_MAX_BYTES) {
        req->status = KVSSD_SC_INVALID_VALUE_SIZE;
        return;
    }
    st = kv_command_key(ns, req, key_bytes, key);
    if (st == KVSSD_SC_SUCCESS) {
        st = dptr_from_host(req, 0, ns->scratch, value_bytes);
    }
    if (st != KVSSD_SC_SUCCESS) {
        req->status = st;
        return;
    }
    kvssd_kv_store_value(ns, req, key, key_bytes, ns->scratch, value_bytes, options, 0);
}

/*
 * Retrieve (02h): CDW10 host buffer size, CDW11[7:0] key length. A short
 * buffer gets the value's first bytes and success; DW0 is the full size.
 */
static void kv_retrieve(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t buf_bytes = MIN(sqe->cdw[10], (uint32_t)KVFTL_VALUE_MAX_BYTES);
    uint32_t key_bytes = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    struct kvftl_cpl cpl = {0};
    uint16_t st;

    if (KVSSD_RESERVED(sqe->cdw[11], KVSSD_CDW11_KEY_LEN_MASK) || sqe->cdw[12] || sqe->cdw[13]) {
        req->status = KVSSD_SC_INVALID_FIELD;
        return;
    }
    st = kv_command_key(ns, req, key_bytes, key);
    if (st != KVSSD_SC_SUCCESS) {
        req->status = st;
        return;
    }
    kvftl_retrieve(ns->ftl, key, key_bytes, ns->scratch, 0, buf_bytes, req->now_ns, &cpl);
    req->done_ns = cpl.done_ns;
    req->status = cpl.status;
    if (cpl.status != KVSSD_SC_SUCCESS) {
        return;
    }
    req->dw0 = cpl.value_bytes;
    req->status = dptr_to_host(req, 0, ns->scratch, MIN(cpl.xfer_bytes, buf_bytes));
}

/*
 * The fields of a command that names a key and moves no data (Delete,
 * Exist): CDW10, CDW12, CDW13 and CDW11 above the key length are reserved.
 * Returns the status and, on success, the key in @key / *@key_bytes.
 */
static uint16_t kv_keyed_no_data(struct kvssd_ns *ns, struct kvssd_req *req,
                                 uint8_t key[KVFTL_KEY_MAX_BYTES], uint32_t *key_bytes)
{
    const struct kvssd_sqe *sqe = req->sqe;

    *key_bytes = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;
    if (sqe->cdw[10] || KVSSD_RESERVED(sqe->cdw[11], KVSSD_CDW11_KEY_LEN_MASK) ||
        sqe->cdw[12] || sqe->cdw[13]) {
        return KVSSD_SC_INVALID_FIELD;
    }
    return kv_command_key(ns, req, *key_bytes, key);
}

/* Delete (10h): a missing key is success unless EDNEK is on. */
static void kv_delete(struct kvssd_ns *ns, struct kvssd_req *req)
{
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint32_t key_bytes;
    struct kvftl_cpl cpl = {0};

    req->status = kv_keyed_no_data(ns, req, key, &key_bytes);
    if (req->status != KVSSD_SC_SUCCESS) {
        return;
    }
    kvftl_delete(ns->ftl, key, key_bytes, req->now_ns, &cpl);
    req->done_ns = cpl.done_ns;
    req->status = cpl.status;
    if (cpl.status == KVSSD_SC_KEY_DOES_NOT_EXIST && !ns->cfg.ednek) {
        req->status = KVSSD_SC_SUCCESS;
    }
}

/* Exist (14h): success if the key is stored, KEY_DOES_NOT_EXIST if not. */
static void kv_exist(struct kvssd_ns *ns, struct kvssd_req *req)
{
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint32_t key_bytes;
    struct kvftl_cpl cpl = {0};

    req->status = kv_keyed_no_data(ns, req, key, &key_bytes);
    if (req->status != KVSSD_SC_SUCCESS) {
        return;
    }
    kvftl_exist(ns->ftl, key, key_bytes, req->now_ns, &cpl);
    req->done_ns = cpl.done_ns;
    req->status = cpl.status;
}

/* Flush (00h): program the page buffer. No fields. */
static void kv_flush(struct kvssd_ns *ns, struct kvssd_req *req)
{
    struct kvftl_cpl cpl = {0};

    kvftl_flush(ns->ftl, req->now_ns, &cpl);
    req->done_ns = cpl.done_ns;
    req->status = cpl.status;
}

/* ---- List (06h) --------------------------------------------------------
 *
 * Keys in byte-wise lexicographic order (memcmp; a key that is a prefix of
 * another sorts first), strictly after the start key, as many as fit the
 * host buffer. The firmware iterates in its own (hash) order, so the device
 * walks every key with an internal iterator and keeps the smallest ones
 * that fit in a max-heap: memory is bounded by the host buffer size.
 */
struct list_key {
    uint32_t len;
    uint8_t bytes[];
};

struct list_select {
    const uint8_t *start;
    uint32_t start_bytes;    /* 0: from the first key */
    uint32_t budget;         /* bytes for entries */
    uint32_t used;           /* entry bytes of the keys in the heap */
    struct list_key **heap;  /* max-heap by key order */
    uint32_t count, cap;
    struct list_key *bound;  /* smallest key evicted: nothing >= it can fit */
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

static int list_key_order(const struct list_key *a, const struct list_key *b)
{
    return key_order(a->bytes, a->len, b->bytes, b->len);
}

static int list_key_qsort(const void *a, const void *b)
{
    return list_key_order(*(struct list_key *const *)a, *(struct list_key *const *)b);
}

static void list_heap_push(struct list_select *sel, struct list_key *k)
{
    uint32_t i;

    if (sel->count == sel->cap) {
        sel->cap = sel->cap ? sel->cap * 2 : 64;
        sel->heap = g_renew(struct list_key *, sel->heap, sel->cap);
    }
    i = sel->count++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;

        if (list_key_order(sel->heap[parent], k) >= 0) {
            break;
        }
        sel->heap[i] = sel->heap[parent];
        i = parent;
    }
    sel->heap[i] = k;
}

static struct list_key *list_heap_pop(struct list_select *sel)
{
    struct list_key *top = sel->heap[0];
    struct list_key *last = sel->heap[--sel->count];
    uint32_t i = 0;

    for (;;) {
        uint32_t c = 2 * i + 1;

        if (c >= sel->count) {
            break;
        }
        if (c + 1 < sel->count && list_key_order(sel->heap[c + 1], sel->heap[c]) > 0) {
            c++;
        }
        if (list_key_order(sel->heap[c], last) <= 0) {
            break;
        }
        sel->heap[i] = sel->heap[c];
        i = c;
    }
    if (sel->count) {
        sel->heap[i] = last;
    }
    return top;
}

static int list_emit(void *opaque, const void *key, uint32_t key_bytes,
                     const void *value, uint32_t value_bytes)
{
    struct list_select *sel = opaque;
    struct list_key *k;

    if (sel->start_bytes &&
        key_order(key, key_bytes, sel->start, sel->start_bytes) <= 0) {
        return 0;
    }
    if (sel->bound && key_order(key, key_bytes, sel->bound->bytes, sel->bound->len) >= 0) {
        return 0;
    }
    k = g_malloc(sizeof(*k) + key_bytes);
    k->len = key_bytes;
    memcpy(k->bytes, key, key_bytes);
    list_heap_push(sel, k);
    sel->used += kvssd_list_entry_bytes(key_bytes);
    while (sel->used > sel->budget) {
        struct list_key *evicted = list_heap_pop(sel);

        sel->used -= kvssd_list_entry_bytes(evicted->len);
        g_free(sel->bound);
        sel->bound = evicted;
    }
    return 0;
}

static void kv_list(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t buf_bytes = MIN(sqe->cdw[10], (uint32_t)KVSSD_SCRATCH_BYTES);
    uint32_t key_bytes = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;
    uint8_t start[KVFTL_KEY_MAX_BYTES];
    struct list_select sel = {0};
    struct kvftl_cpl cpl = {0};
    uint64_t t = req->now_ns;
    uint32_t handle = 0;
    uint32_t off;
    uint16_t st;

    if (KVSSD_RESERVED(sqe->cdw[11], KVSSD_CDW11_KEY_LEN_MASK) || sqe->cdw[12] || sqe->cdw[13] ||
        buf_bytes < KVSSD_LIST_HEADER_BYTES) {
        req->status = KVSSD_SC_INVALID_FIELD;
        return;
    }
    if (key_bytes) {
        st = kv_command_key(ns, req, key_bytes, start);
        if (st != KVSSD_SC_SUCCESS) {
            req->status = st;
            return;
        }
    }
    sel.start = start;
    sel.start_bytes = key_bytes;
    sel.budget = buf_bytes - KVSSD_LIST_HEADER_BYTES;

    kvftl_iter_open(ns->ftl, 0, 0, KVFTL_ITER_KEYS, t, &handle, &cpl);
    if (cpl.status != KVSSD_SC_SUCCESS) {
        req->status = cpl.status;
        req->done_ns = cpl.done_ns;
        return;
    }
    t = cpl.done_ns;
    for (;;) {
        kvftl_iter_next(ns->ftl, handle, UINT32_MAX, list_emit, &sel, t, &cpl);
        t = cpl.done_ns;
        if (cpl.status != KVSSD_SC_SUCCESS || cpl.value_bytes == 0) {
            break;
        }
    }
    st = cpl.status == KVSSD_SC_ITERATOR_END ? KVSSD_SC_SUCCESS : cpl.status;
    kvftl_iter_close(ns->ftl, handle, t, &cpl);
    t = MAX(t, cpl.done_ns);

    if (st == KVSSD_SC_SUCCESS) {
        if (sel.count) {
            qsort(sel.heap, sel.count, sizeof(*sel.heap), list_key_qsort);
        }
        kvssd_put_le32(ns->scratch, sel.count);
        off = KVSSD_LIST_HEADER_BYTES;
        for (uint32_t i = 0; i < sel.count; i++) {
            uint32_t eb = kvssd_list_entry_bytes(sel.heap[i]->len);

            memset(ns->scratch + off, 0, eb);
            kvssd_put_le16(ns->scratch + off, (uint16_t)sel.heap[i]->len);
            memcpy(ns->scratch + off + 2, sel.heap[i]->bytes, sel.heap[i]->len);
            off += eb;
        }
        st = dptr_to_host(req, 0, ns->scratch, off);
        req->dw0 = sel.count;
    }
    for (uint32_t i = 0; i < sel.count; i++) {
        g_free(sel.heap[i]);
    }
    g_free(sel.heap);
    g_free(sel.bound);
    req->status = st;
    req->done_ns = t;
}

/* ---- Extension: Key Stage (91h) ---------------------------------------- */

static void kv_key_stage(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t key_bytes = sqe->cdw[10] & 0xffu;
    uint32_t tag = sqe->cdw[11] & KVSSD_TAG_MASK;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    uint16_t st;

    ns->xfer->key_stage_commands++;
    if (sqe->cdw[2] || sqe->cdw[3] || KVSSD_RESERVED(sqe->cdw[10], 0xffu) ||
        KVSSD_RESERVED(sqe->cdw[11], KVSSD_TAG_MASK) || sqe->cdw[12] || sqe->cdw[13] ||
        sqe->cdw[14] || sqe->cdw[15]) {
        req->status = KVSSD_SC_INVALID_FIELD;
        return;
    }
    if (key_bytes <= KVSSD_KEY_INLINE_MAX) {
        req->status = KVSSD_SC_INVALID_KEY_SIZE;
        return;
    }
    st = dptr_from_host(req, 0, key, key_bytes);
    if (st == KVSSD_SC_SUCCESS) {
        st = kvssd_tags_stage_key(ns, tag, key, key_bytes, req->now_ns);
    }
    req->status = st;
}

/* ---- Extension: iterators (90h, 92h, 94h) ------------------------------- */

static void kv_iter_open(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    bool key_values = sqe->cdw[12] & KVSSD_ITER_FLAG_KEY_VALUE;
    struct kvftl_cpl cpl = {0};
    uint32_t handle = 0;

    if (sqe->cdw[2] || sqe->cdw[3] || KVSSD_RESERVED(sqe->cdw[12], KVSSD_ITER_FLAG_KEY_VALUE) ||
        sqe->cdw[13] || sqe->cdw[14] || sqe->cdw[15]) {
        req->status = KVSSD_SC_INVALID_FIELD;
        return;
    }
    kvftl_iter_open(ns->ftl, sqe->cdw[10], sqe->cdw[11],
                    key_values ? KVFTL_ITER_KEY_VALUES : KVFTL_ITER_KEYS,
                    req->now_ns, &handle, &cpl);
    req->status = cpl.status;
    req->done_ns = cpl.done_ns;
    if (cpl.status == KVSSD_SC_SUCCESS) {
        if (handle >= KVSSD_ITER_MAX_HANDLES) {
            /* The firmware broke its own contract: do not hand it out. */
            kvftl_iter_close(ns->ftl, handle, cpl.done_ns, &cpl);
            req->status = KVSSD_SC_INTERNAL_ERROR;
            return;
        }
        ns->host_iterators |= 1u << handle;
        if (key_values) {
            ns->host_iterator_kv |= 1u << handle;
        } else {
            ns->host_iterator_kv &= ~(1u << handle);
        }
        req->dw0 = handle;
    }
}

struct iter_fill {
    uint8_t *buf;
    uint32_t cap;
    uint32_t used;
    uint32_t entries;
    bool key_values;
};

static int iter_emit(void *opaque, const void *key, uint32_t key_bytes,
                     const void *value, uint32_t value_bytes)
{
    struct iter_fill *f = opaque;
    uint32_t eb = kvssd_iter_entry_bytes(key_bytes, f->key_values, value_bytes);
    uint8_t *p = f->buf + f->used;

    if (eb > f->cap - f->used) {
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

static void kv_iter_read(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t buf_bytes = MIN(sqe->cdw[10], (uint32_t)KVSSD_SCRATCH_BYTES);
    uint32_t handle = sqe->cdw[11] & 0xffu;
    struct iter_fill fill = {0};
    struct kvftl_cpl cpl = {0};

    if (sqe->cdw[2] || sqe->cdw[3] || KVSSD_RESERVED(sqe->cdw[11], 0xffu) || sqe->cdw[12] ||
        sqe->cdw[13] || sqe->cdw[14] || sqe->cdw[15] ||
        buf_bytes < sizeof(struct kvssd_iter_header)) {
        req->status = KVSSD_SC_INVALID_FIELD;
        return;
    }
    if (!kv_host_iterator(ns, handle)) {
        req->status = KVSSD_SC_INVALID_ITERATOR;
        return;
    }
    fill.buf = ns->scratch + sizeof(struct kvssd_iter_header);
    fill.cap = buf_bytes - sizeof(struct kvssd_iter_header);
    fill.key_values = ns->host_iterator_kv & (1u << handle);
    kvftl_iter_next(ns->ftl, handle, UINT32_MAX, iter_emit, &fill, req->now_ns, &cpl);
    req->done_ns = cpl.done_ns;
    req->status = cpl.status;
    if (cpl.status != KVSSD_SC_SUCCESS) {
        return;
    }
    kvssd_put_le32(ns->scratch, fill.entries);
    kvssd_put_le32(ns->scratch + 4, fill.used);
    req->dw0 = fill.entries;
    req->status = dptr_to_host(req, 0, ns->scratch, sizeof(struct kvssd_iter_header) + fill.used);
}

static void kv_iter_close(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t handle = sqe->cdw[10] & 0xffu;
    struct kvftl_cpl cpl = {0};

    if (sqe->cdw[2] || sqe->cdw[3] || KVSSD_RESERVED(sqe->cdw[10], 0xffu) || sqe->cdw[11] ||
        sqe->cdw[12] || sqe->cdw[13] || sqe->cdw[14] || sqe->cdw[15]) {
        req->status = KVSSD_SC_INVALID_FIELD;
        return;
    }
    if (!kv_host_iterator(ns, handle)) {
        req->status = KVSSD_SC_INVALID_ITERATOR;
        return;
    }
    kvftl_iter_close(ns->ftl, handle, req->now_ns, &cpl);
    ns->host_iterators &= ~(1u << handle);
    ns->host_iterator_kv &= ~(1u << handle);
    req->done_ns = cpl.done_ns;
    req->status = cpl.status;
}

static void kv_close_host_iterators(struct kvssd_ns *ns)
{
    struct kvftl_cpl cpl;

    for (uint32_t h = 0; h < KVSSD_ITER_MAX_HANDLES; h++) {
        if (ns->host_iterators & (1u << h)) {
            kvftl_iter_close(ns->ftl, h, 0, &cpl);
        }
    }
    ns->host_iterators = 0;
    ns->host_iterator_kv = 0;
}

/* ---- The seam ----------------------------------------------------------- */

void kvssd_kv_execute(struct kvssd_ns *ns, struct kvssd_req *req)
{
    req->status = KVSSD_SC_SUCCESS;
    req->dw0 = 0;
    req->dw1 = 0;
    req->done_ns = req->now_ns;
    ns->xfer->commands++;

    switch (kvssd_sqe_opcode(req->sqe)) {
    case KVSSD_OPC_FLUSH:
        kv_flush(ns, req);
        break;
    case KVSSD_OPC_STORE:
        kv_store(ns, req);
        break;
    case KVSSD_OPC_RETRIEVE:
        kv_retrieve(ns, req);
        break;
    case KVSSD_OPC_LIST:
        kv_list(ns, req);
        break;
    case KVSSD_OPC_DELETE:
        kv_delete(ns, req);
        break;
    case KVSSD_OPC_EXIST:
        kv_exist(ns, req);
        break;
    case KVSSD_OPC_INLINE_HEAD:
        kvssd_inline_head(ns, req, KVSSD_LAYOUT_STOCK);
        break;
    case KVSSD_OPC_INLINE_XFER:
        kvssd_inline_xfer(ns, req, KVSSD_LAYOUT_STOCK);
        break;
    case KVSSD_OPC_INLINE_HEAD_FULL:
        kvssd_inline_head(ns, req, KVSSD_LAYOUT_FULL);
        break;
    case KVSSD_OPC_INLINE_XFER_FULL:
        kvssd_inline_xfer(ns, req, KVSSD_LAYOUT_FULL);
        break;
    case KVSSD_OPC_KEY_STAGE:
        kv_key_stage(ns, req);
        break;
    case KVSSD_OPC_ITER_OPEN:
        kv_iter_open(ns, req);
        break;
    case KVSSD_OPC_ITER_READ:
        kv_iter_read(ns, req);
        break;
    case KVSSD_OPC_ITER_CLOSE:
        kv_iter_close(ns, req);
        break;
    default:
        req->status = KVSSD_SC_INVALID_OPCODE;
        break;
    }
    if (req->done_ns < req->now_ns) {
        req->done_ns = req->now_ns;
    }
}

bool kvssd_kv_opcode_supported(uint8_t opcode)
{
    switch (opcode) {
    case KVSSD_OPC_FLUSH:
    case KVSSD_OPC_STORE:
    case KVSSD_OPC_RETRIEVE:
    case KVSSD_OPC_LIST:
    case KVSSD_OPC_DELETE:
    case KVSSD_OPC_EXIST:
    case KVSSD_OPC_INLINE_HEAD:
    case KVSSD_OPC_INLINE_XFER:
    case KVSSD_OPC_INLINE_HEAD_FULL:
    case KVSSD_OPC_INLINE_XFER_FULL:
    case KVSSD_OPC_KEY_STAGE:
    case KVSSD_OPC_ITER_OPEN:
    case KVSSD_OPC_ITER_READ:
    case KVSSD_OPC_ITER_CLOSE:
        return true;
    default:
        return false;
    }
}

/* ---- Namespace life cycle ----------------------------------------------- */

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
