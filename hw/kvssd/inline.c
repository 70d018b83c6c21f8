/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inline (piggybacked) Store, BandSlim §3.2, and the bounded tag table it
 * shares with staged long keys. No QEMU types.
 *
 * A stream is one Store whose value travels inside commands: a head (81h
 * stock layout, 89h full layout) declares key, value size and options and
 * carries the first bytes; transfer commands (85h, 8Dh) carry the tag, a
 * sequence number and the next bytes. Linux picks the submission queue by
 * CPU, so fragments of one stream may arrive on different queues in any
 * order: reassembly is by tag and sequence number only. The command that
 * delivers the last byte hands the value to kvftl_store() and completes
 * with the Store's status. A stock head with the full-tail bit
 * (KVSSD_INLINE_FULL_TAIL) opens a stream whose transfers are 8Dh: the
 * stream's layout is that of its transfers, not of its head.
 *
 * Memory is bounded: at most tag_table_entries streams and staged keys,
 * each stream buffer sized by its declared value size (<= 2 MiB) and
 * allocated once by its head; streams idle longer than inline_timeout_ns
 * are freed, and their tags remembered in a small ring so that a late
 * fragment gets INLINE_EXPIRED.
 *
 * This file is below kv.c: kv.c dispatches the inline opcodes here and
 * keeps its staged keys in the tag table; what a stream needs of kv.c (a
 * head's Store fields, storing the whole value) it asks through the
 * namespace's struct kvssd_inline_owner, never by calling kv.c.
 */
#include <glib.h>
#include <string.h>

#include "cmdset.h"
#include "kv_internal.h"

/* ---- The tag table ------------------------------------------------------ */

void kvssd_tags_init(struct kvssd_ns *ns)
{
    uint32_t n = ns->cfg.tag_table_entries;

    ns->slots = g_new0(struct kvssd_slot, n);
    ns->free_slots = g_new(uint16_t, n);
    for (uint32_t i = 0; i < n; i++) {
        ns->free_slots[i] = (uint16_t)(n - 1 - i); /* slot 0 is taken first */
    }
    ns->free_count = n;
    for (uint32_t t = 0; t < KVSSD_MAX_TAGS; t++) {
        ns->stream_slot[t] = KVSSD_SLOT_NONE;
        ns->staged_slot[t] = KVSSD_SLOT_NONE;
    }
    ns->expired_next = 0;
    ns->expired_count = 0;
    ns->stream_bytes_held = 0;
    ns->idle_floor_ns = UINT64_MAX;
}

/* Activity on slot @s at @now_ns: its last_ns, and the table's floor below it. */
static void slot_touch(struct kvssd_ns *ns, struct kvssd_slot *s, uint64_t now_ns)
{
    s->last_ns = now_ns;
    if (now_ns < ns->idle_floor_ns) {
        ns->idle_floor_ns = now_ns;
    }
}

static bool slot_idle(const struct kvssd_ns *ns, const struct kvssd_slot *s, uint64_t now_ns)
{
    return now_ns > s->last_ns && now_ns - s->last_ns > ns->cfg.inline_timeout_ns;
}

static void slot_release(struct kvssd_ns *ns, uint16_t idx)
{
    struct kvssd_slot *s = &ns->slots[idx];

    if (s->kind == KVSSD_SLOT_STREAM) {
        ns->stream_slot[s->tag] = KVSSD_SLOT_NONE;
        ns->stream_bytes_held -= s->stream.alloc_bytes;
        g_free(s->stream.value); /* the sequence bitmap is its tail */
    } else if (s->kind == KVSSD_SLOT_STAGED_KEY) {
        ns->staged_slot[s->tag] = KVSSD_SLOT_NONE;
    } else {
        return;
    }
    memset(s, 0, sizeof(*s));
    ns->free_slots[ns->free_count++] = idx;
    if (ns->free_count == ns->cfg.tag_table_entries) {
        ns->idle_floor_ns = UINT64_MAX;
    }
}

static void expired_remember(struct kvssd_ns *ns, uint16_t tag)
{
    ns->expired[ns->expired_next] = tag;
    ns->expired_next = (ns->expired_next + 1) % KVSSD_EXPIRED_RING_ENTRIES;
    if (ns->expired_count < KVSSD_EXPIRED_RING_ENTRIES) {
        ns->expired_count++;
    }
}

/* Index in the ring of @tag's most recent expiry, or -1. */
static int expired_find(const struct kvssd_ns *ns, uint16_t tag)
{
    for (uint32_t i = 0; i < ns->expired_count; i++) {
        uint32_t at = (ns->expired_next + KVSSD_EXPIRED_RING_ENTRIES - 1 - i) %
                      KVSSD_EXPIRED_RING_ENTRIES;

        if (ns->expired[at] == tag) {
            return (int)at;
        }
    }
    return -1;
}

/* A new head for @tag: forget that an earlier stream of it expired. */
static void expired_forget(struct kvssd_ns *ns, uint16_t tag)
{
    uint16_t keep[KVSSD_EXPIRED_RING_ENTRIES];
    uint32_t kept = 0;

    if (expired_find(ns, tag) < 0) {
        return;
    }
    for (uint32_t i = 0; i < ns->expired_count; i++) {
        uint32_t at = (ns->expired_next + KVSSD_EXPIRED_RING_ENTRIES - ns->expired_count + i) %
                      KVSSD_EXPIRED_RING_ENTRIES;

        if (ns->expired[at] != tag) {
            keep[kept++] = ns->expired[at];
        }
    }
    memcpy(ns->expired, keep, kept * sizeof(keep[0]));
    ns->expired_count = kept;
    ns->expired_next = kept % KVSSD_EXPIRED_RING_ENTRIES;
}

static void stream_expire(struct kvssd_ns *ns, uint16_t idx)
{
    expired_remember(ns, ns->slots[idx].tag);
    slot_release(ns, idx);
}

void kvssd_tags_expire(struct kvssd_ns *ns, uint64_t now_ns)
{
    uint64_t floor_ns = UINT64_MAX;

    /* every slot in use was active at idle_floor_ns or later: none is idle yet */
    if (now_ns <= ns->idle_floor_ns || now_ns - ns->idle_floor_ns <= ns->cfg.inline_timeout_ns) {
        return;
    }
    for (uint32_t i = 0; i < ns->cfg.tag_table_entries; i++) {
        struct kvssd_slot *s = &ns->slots[i];

        if (s->kind == KVSSD_SLOT_FREE) {
            continue;
        }
        if (!slot_idle(ns, s, now_ns)) {
            floor_ns = MIN(floor_ns, s->last_ns);
            continue;
        }
        if (s->kind == KVSSD_SLOT_STREAM) {
            stream_expire(ns, (uint16_t)i);
        } else {
            slot_release(ns, (uint16_t)i);
        }
    }
    ns->idle_floor_ns = floor_ns;
}

void kvssd_tags_reset(struct kvssd_ns *ns)
{
    for (uint32_t i = 0; i < ns->cfg.tag_table_entries; i++) {
        slot_release(ns, (uint16_t)i);
    }
    ns->expired_next = 0;
    ns->expired_count = 0;
    ns->idle_floor_ns = UINT64_MAX;
}

void kvssd_tags_free(struct kvssd_ns *ns)
{
    kvssd_tags_reset(ns);
    g_free(ns->slots);
    g_free(ns->free_slots);
    ns->slots = NULL;
    ns->free_slots = NULL;
}

/* A free slot, expiring idle entries if the table is full; NONE if none. */
static uint16_t slot_alloc(struct kvssd_ns *ns, enum kvssd_slot_kind kind, uint16_t tag,
                           uint64_t now_ns)
{
    uint16_t idx;

    if (ns->free_count == 0) {
        kvssd_tags_expire(ns, now_ns);
    }
    if (ns->free_count == 0) {
        return KVSSD_SLOT_NONE;
    }
    idx = ns->free_slots[--ns->free_count];
    ns->slots[idx].kind = (uint8_t)kind;
    ns->slots[idx].tag = tag;
    slot_touch(ns, &ns->slots[idx], now_ns);
    return idx;
}

uint32_t kvssd_tags_in_use(const struct kvssd_ns *ns)
{
    return ns->cfg.tag_table_entries - ns->free_count;
}

uint64_t kvssd_tags_stream_bytes(const struct kvssd_ns *ns)
{
    return ns->stream_bytes_held;
}

/* ---- Staged long keys ---------------------------------------------------- */

uint16_t kvssd_tags_stage_key(struct kvssd_ns *ns, uint32_t tag, const uint8_t *key,
                              uint32_t key_bytes, uint64_t now_ns)
{
    uint16_t idx = ns->staged_slot[tag & KVSSD_TAG_MASK];

    if (idx != KVSSD_SLOT_NONE) {
        if (!slot_idle(ns, &ns->slots[idx], now_ns)) {
            return KVSSD_SC_INLINE_TAG_IN_USE;
        }
        slot_release(ns, idx);
    }
    idx = slot_alloc(ns, KVSSD_SLOT_STAGED_KEY, (uint16_t)(tag & KVSSD_TAG_MASK), now_ns);
    if (idx == KVSSD_SLOT_NONE) {
        return KVSSD_SC_TAG_TABLE_FULL;
    }
    ns->slots[idx].key_bytes = key_bytes;
    memcpy(ns->slots[idx].key, key, key_bytes);
    ns->staged_slot[tag & KVSSD_TAG_MASK] = idx;
    return KVSSD_SC_SUCCESS;
}

bool kvssd_tags_key_staged(const struct kvssd_ns *ns, uint32_t tag, uint64_t now_ns)
{
    uint16_t idx = ns->staged_slot[tag & KVSSD_TAG_MASK];

    return idx != KVSSD_SLOT_NONE && !slot_idle(ns, &ns->slots[idx], now_ns);
}

uint16_t kvssd_tags_take_key(struct kvssd_ns *ns, uint32_t tag, uint32_t key_bytes, uint8_t *key,
                             uint64_t now_ns)
{
    uint16_t idx = ns->staged_slot[tag & KVSSD_TAG_MASK];
    struct kvssd_slot *s;

    if (idx == KVSSD_SLOT_NONE) {
        return KVSSD_SC_STAGED_KEY_UNKNOWN;
    }
    s = &ns->slots[idx];
    if (slot_idle(ns, s, now_ns)) {
        slot_release(ns, idx);
        return KVSSD_SC_STAGED_KEY_UNKNOWN;
    }
    if (s->key_bytes != key_bytes) {
        return KVSSD_SC_INVALID_KEY_SIZE;
    }
    memcpy(key, s->key, key_bytes);
    slot_release(ns, idx);
    return KVSSD_SC_SUCCESS;
}

/* ---- Inline commands ----------------------------------------------------- */

/* The layout an inline opcode names: 81h/85h stock, 89h/8Dh full. */
static enum kvssd_inline_layout inline_layout(const struct kvssd_sqe *sqe)
{
    uint8_t opcode = kvssd_sqe_opcode(sqe);

    return opcode == KVSSD_OPC_INLINE_HEAD_FULL || opcode == KVSSD_OPC_INLINE_XFER_FULL
               ? KVSSD_LAYOUT_FULL
               : KVSSD_LAYOUT_STOCK;
}

/* Append the little-endian bytes of @n dwords of @sqe, in the order of @which. */
static uint32_t gather_dwords(const struct kvssd_sqe *sqe, const uint8_t *which, uint32_t n,
                              uint8_t *out)
{
    for (uint32_t i = 0; i < n; i++) {
        kvssd_put_le32(out + 4 * i, sqe->cdw[which[i]]);
    }
    return 4 * n;
}

static const uint8_t stock_head_dwords[] = {2, 3, 12, 13, 14, 15};
static const uint8_t stock_xfer_dwords[] = {2, 3, 11, 12, 13, 14, 15};
static const uint8_t full_head_dwords[] = {4, 5, 6, 7, 8, 9, 12, 13};
static const uint8_t full_xfer_dwords[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* The full layout head's payload: CDW11[31:8], CDW4..CDW9, CDW12, CDW13. */
static void full_head_payload(const struct kvssd_sqe *sqe, uint8_t *out)
{
    uint32_t cdw11 = sqe->cdw[11];

    out[0] = (cdw11 >> 8) & 0xff;
    out[1] = (cdw11 >> 16) & 0xff;
    out[2] = (cdw11 >> 24) & 0xff;
    gather_dwords(sqe, full_head_dwords, G_N_ELEMENTS(full_head_dwords), out + 3);
}

/* An inline head as its dwords declare it. */
struct inline_head {
    struct kvssd_store_fields store;  /* key length, value size, options, staged key */
    uint16_t tag;                     /* the stream's */
    uint8_t stream_layout;            /* enum kvssd_inline_layout: that of its transfers */
    uint32_t xfer_payload;            /* inline bytes per transfer of that layout */
    uint32_t dma_bytes;               /* hybrid: the value's first bytes, by data pointer */
};

/*
 * Decode a head: its own fields (the tag; for the stock layout, CDW11's
 * hybrid and full-tail bits, the rest reserved), then its Store fields
 * (the owner's store_decode()). Returns the status of the first fault.
 */
static uint16_t head_decode(const struct kvssd_ns *ns, const struct kvssd_sqe *sqe,
                            enum kvssd_inline_layout layout, struct inline_head *h)
{
    uint32_t cdw11 = sqe->cdw[11];
    uint16_t st;

    h->stream_layout = (uint8_t)layout;
    h->xfer_payload = KVSSD_INLINE_XFER_FULL_PAYLOAD;
    if (layout == KVSSD_LAYOUT_FULL) {
        h->tag = cdw11 & KVSSD_INLINE_FULL_MAX_TAG; /* CDW11[31:8] is payload */
    } else {
        if (KVSSD_RESERVED(cdw11, KVSSD_TAG_MASK | KVSSD_INLINE_HYBRID | KVSSD_INLINE_FULL_TAIL)) {
            return KVSSD_SC_INVALID_FIELD;
        }
        h->tag = cdw11 & KVSSD_TAG_MASK;
        if (cdw11 & KVSSD_INLINE_FULL_TAIL) {
            /* the tail comes in 8Dh transfers, whose tags are those of the full layout */
            if (h->tag > KVSSD_INLINE_FULL_MAX_TAG) {
                return KVSSD_SC_INVALID_FIELD;
            }
            h->stream_layout = KVSSD_LAYOUT_FULL;
        } else {
            h->xfer_payload = KVSSD_INLINE_XFER_PAYLOAD;
        }
    }
    st = ns->inline_owner->store_decode(sqe, &h->store);
    h->dma_bytes = (layout == KVSSD_LAYOUT_STOCK && (cdw11 & KVSSD_INLINE_HYBRID))
                       ? h->store.value_bytes & ~(KVSSD_HYBRID_PAGE_BYTES - 1)
                       : 0;
    return st;
}

/* A head for @tag: its open stream is INLINE_TAG_IN_USE, unless idle too long (it expires). */
static uint16_t head_claim_tag(struct kvssd_ns *ns, uint16_t tag, uint64_t now_ns)
{
    uint16_t idx = ns->stream_slot[tag];

    if (idx != KVSSD_SLOT_NONE) {
        if (!slot_idle(ns, &ns->slots[idx], now_ns)) {
            return KVSSD_SC_INLINE_TAG_IN_USE;
        }
        stream_expire(ns, idx);
    }
    return KVSSD_SC_SUCCESS;
}

/*
 * Where the key and the value bytes sit in the head: the key is copied to
 * @key (unless staged), @payload holds the head's payload area; returns the
 * first value byte and sets *@cap to how many value bytes the head can hold.
 */
static const uint8_t *head_payload(const struct kvssd_sqe *sqe, enum kvssd_inline_layout layout,
                                   const struct kvssd_store_fields *f, uint8_t *payload,
                                   uint8_t *key, uint32_t *cap)
{
    if (layout == KVSSD_LAYOUT_FULL) {
        uint8_t k[KVSSD_KEY_INLINE_MAX];

        kvssd_sqe_get_key(sqe, k);
        memcpy(key, k, f->key_bytes);
        full_head_payload(sqe, payload);
        *cap = KVSSD_INLINE_HEAD_FULL_PAYLOAD;
        return payload;
    }
    if (f->staged) {
        /* CDW2 names the staged key: the payload area starts at CDW3 */
        gather_dwords(sqe, stock_head_dwords + 1, G_N_ELEMENTS(stock_head_dwords) - 1, payload);
        *cap = KVSSD_INLINE_HEAD_PAYLOAD - 4;
        return payload;
    }
    gather_dwords(sqe, stock_head_dwords, G_N_ELEMENTS(stock_head_dwords), payload);
    memcpy(key, payload, f->key_bytes);
    *cap = KVSSD_INLINE_HEAD_PAYLOAD - f->key_bytes;
    return payload + f->key_bytes;
}

/* Transfer commands of a stream whose transfers carry @rest bytes. */
static uint32_t stream_xfers(const struct inline_head *h, uint32_t rest)
{
    return (rest + h->xfer_payload - 1) / h->xfer_payload;
}

/* Bytes of a stream's sequence bitmap: a bit per sequence 0..xfers. */
static uint32_t stream_seen_bytes(uint32_t xfers)
{
    return (xfers + 8) / 8;
}

/*
 * The buffer the value is assembled in: the scratch area when the head
 * completes the Store, else, for a stream that outlives this command (@rest
 * bytes to come in transfers), one allocation of the value's size followed
 * by the stream's zeroed sequence bitmap, in a slot of the tag table
 * (*@idx). A staged key's own slot is freed by taking it, so the key is
 * taken first; a short key must find a slot before anything is consumed.
 */
static uint16_t head_buffer(struct kvssd_ns *ns, struct kvssd_req *req, const struct inline_head *h,
                            uint32_t rest, uint8_t *key, uint16_t *idx, uint8_t **buf)
{
    const struct kvssd_store_fields *f = &h->store;

    *idx = KVSSD_SLOT_NONE;
    *buf = ns->scratch;
    if (f->staged) {
        uint16_t st = kvssd_tags_take_key(ns, f->staged_tag, f->key_bytes, key, req->now_ns);

        if (st != KVSSD_SC_SUCCESS) {
            return st;
        }
    }
    if (rest) {
        uint32_t seen_bytes = stream_seen_bytes(stream_xfers(h, rest));

        *idx = slot_alloc(ns, KVSSD_SLOT_STREAM, h->tag, req->now_ns);
        if (*idx == KVSSD_SLOT_NONE) {
            return KVSSD_SC_TAG_TABLE_FULL;
        }
        *buf = g_malloc((size_t)f->value_bytes + seen_bytes);
        memset(*buf + f->value_bytes, 0, seen_bytes);
    }
    return KVSSD_SC_SUCCESS;
}

/*
 * A head that leaves @rest inline bytes to its transfers: the stream keeps
 * the key, the value assembled so far in @buf and a bit per sequence number
 * in slot @idx. DW0 is the value bytes received.
 */
static void stream_open(struct kvssd_ns *ns, struct kvssd_req *req, const struct inline_head *h,
                        uint16_t idx, const uint8_t *key, uint8_t *buf, uint32_t head_bytes,
                        uint32_t rest)
{
    struct kvssd_slot *s = &ns->slots[idx];
    uint32_t xfers = stream_xfers(h, rest);
    uint32_t seen_bytes = stream_seen_bytes(xfers);

    s->key_bytes = h->store.key_bytes;
    memcpy(s->key, key, h->store.key_bytes);
    s->stream = (struct kvssd_stream){
        .layout = h->stream_layout,
        .options = h->store.options,
        .value_bytes = h->store.value_bytes,
        .dma_bytes = h->dma_bytes,
        .head_bytes = head_bytes,
        .xfer_payload = h->xfer_payload,
        .xfers = xfers,
        .received_bytes = h->dma_bytes + head_bytes,
        .value = buf,
        .seen = buf + h->store.value_bytes, /* zeroed by head_buffer() */
        .alloc_bytes = (size_t)h->store.value_bytes + seen_bytes,
    };
    ns->stream_bytes_held += s->stream.alloc_bytes;
    ns->stream_slot[h->tag] = idx;
    req->dw0 = s->stream.received_bytes;
}

/* The Store of a whole value is done: DW0 its size, DW1 STORED. */
static uint16_t inline_stored(struct kvssd_ns *ns, struct kvssd_req *req, const uint8_t *key,
                              uint32_t key_bytes, const uint8_t *value, uint32_t value_bytes,
                              uint32_t options, uint32_t inline_bytes, uint32_t inline_xfers)
{
    uint16_t st = ns->inline_owner->store_value(ns, req, key, key_bytes, value, value_bytes,
                                                options, inline_bytes, inline_xfers);

    req->dw0 = value_bytes;
    req->dw1 = KVSSD_INLINE_DW1_STORED;
    return st;
}

/*
 * Head (81h, 89h): decode, claim the tag, find the key and the head's value
 * bytes, take the staged key and the buffer, read the hybrid part by data
 * pointer; then store the value at once, or open a stream for the rest.
 */
uint16_t kvssd_inline_head(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    enum kvssd_inline_layout layout = inline_layout(sqe);
    uint8_t payload[KVSSD_INLINE_HEAD_FULL_PAYLOAD];
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    struct inline_head h;
    const uint8_t *head_value;
    uint32_t head_cap, inline_total, head_bytes, rest;
    uint16_t idx, st;
    uint8_t *buf;

    st = head_decode(ns, sqe, layout, &h);
    if (st == KVSSD_SC_SUCCESS) {
        st = head_claim_tag(ns, h.tag, req->now_ns);
    }
    if (st != KVSSD_SC_SUCCESS) {
        return st;
    }
    head_value = head_payload(sqe, layout, &h.store, payload, key, &head_cap);
    inline_total = h.store.value_bytes - h.dma_bytes;
    head_bytes = MIN(inline_total, head_cap);
    rest = inline_total - head_bytes;

    st = head_buffer(ns, req, &h, rest, key, &idx, &buf);
    if (st == KVSSD_SC_SUCCESS) {
        st = kvssd_dptr_from_host(req, 0, buf, h.dma_bytes);
        if (st != KVSSD_SC_SUCCESS && idx != KVSSD_SLOT_NONE) {
            g_free(buf);
            slot_release(ns, idx);
        }
    }
    if (st != KVSSD_SC_SUCCESS) {
        return st;
    }
    memcpy(buf + h.dma_bytes, head_value, head_bytes);
    ns->xfer->inline_bytes += head_bytes;
    expired_forget(ns, h.tag);

    if (!rest) {
        return inline_stored(ns, req, key, h.store.key_bytes, buf, h.store.value_bytes,
                             h.store.options, inline_total, 0);
    }
    stream_open(ns, req, &h, idx, key, buf, head_bytes, rest);
    return KVSSD_SC_SUCCESS;
}

/*
 * Transfer (85h, 8Dh): the next bytes of the stream of its tag, at the
 * place its sequence number names; the one that delivers the last byte
 * stores the value and completes with the Store's status.
 */
uint16_t kvssd_inline_xfer(struct kvssd_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    enum kvssd_inline_layout layout = inline_layout(sqe);
    uint32_t tag_seq = layout == KVSSD_LAYOUT_STOCK ? sqe->cdw[10] : sqe->cdw[1];
    uint16_t tag = tag_seq & KVSSD_TAG_MASK;
    uint32_t seq = tag_seq >> KVSSD_INLINE_SEQ_SHIFT;
    uint8_t payload[KVSSD_INLINE_XFER_FULL_PAYLOAD];
    uint16_t idx = ns->stream_slot[tag];
    struct kvssd_slot *s;
    struct kvssd_stream *sm;
    uint32_t offset, len;
    uint16_t st;

    if (idx == KVSSD_SLOT_NONE || ns->slots[idx].stream.layout != layout) {
        return expired_find(ns, tag) >= 0 ? KVSSD_SC_INLINE_EXPIRED : KVSSD_SC_INLINE_UNKNOWN_TAG;
    }
    s = &ns->slots[idx];
    if (slot_idle(ns, s, req->now_ns)) {
        stream_expire(ns, idx);
        return KVSSD_SC_INLINE_EXPIRED;
    }
    sm = &s->stream;
    if (seq == 0) {
        return KVSSD_SC_INLINE_BAD_SEQUENCE;
    }
    if (seq > sm->xfers) {
        /* Its bytes would lie past the value size the head declared. */
        return KVSSD_SC_INLINE_OVERFLOW;
    }
    if (sm->seen[seq / 8] & (1u << (seq % 8))) {
        return KVSSD_SC_INLINE_BAD_SEQUENCE;
    }

    if (layout == KVSSD_LAYOUT_STOCK) {
        gather_dwords(sqe, stock_xfer_dwords, G_N_ELEMENTS(stock_xfer_dwords), payload);
    } else {
        gather_dwords(sqe, full_xfer_dwords, G_N_ELEMENTS(full_xfer_dwords), payload);
    }
    offset = sm->dma_bytes + sm->head_bytes + (seq - 1) * sm->xfer_payload;
    len = MIN(sm->xfer_payload, sm->value_bytes - offset);
    memcpy(sm->value + offset, payload, len);
    sm->seen[seq / 8] |= (uint8_t)(1u << (seq % 8));
    sm->xfers_received++;
    sm->received_bytes += len;
    slot_touch(ns, s, req->now_ns);
    ns->xfer->inline_bytes += len;

    if (sm->xfers_received < sm->xfers) {
        req->dw0 = sm->received_bytes;
        return KVSSD_SC_SUCCESS;
    }
    st = inline_stored(ns, req, s->key, s->key_bytes, sm->value, sm->value_bytes, sm->options,
                       sm->value_bytes - sm->dma_bytes, sm->xfers);
    slot_release(ns, idx);
    return st;
}
