/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Private to the KV command set (kv.c, inline.c) and its unit tests: the
 * namespace state, the bounded tag table that holds staged long keys and
 * open inline streams, and the interface between the two files: kv.c
 * calls down into inline.c (the tag table, the inline opcodes), inline.c
 * asks kv.c only through struct kvssd_inline_owner.
 *
 * No QEMU types: this is compiled natively and inside QEMU's tree alike.
 */
#ifndef HW_KVSSD_KV_INTERNAL_H
#define HW_KVSSD_KV_INTERNAL_H

#include "cmdset.h"

/* Defaults of struct kvssd_ns_config (kvssd_ns_new() with cfg == NULL). */
#define KVSSD_NS_DEFAULT_TAG_TABLE_ENTRIES 256u
#define KVSSD_NS_MAX_TAG_TABLE_ENTRIES KVSSD_MAX_TAGS
#define KVSSD_NS_DEFAULT_INLINE_TIMEOUT_NS 5000000000ull

/*
 * Tags of streams freed by expiry, remembered so that a late fragment gets
 * INLINE_EXPIRED rather than INLINE_UNKNOWN_TAG. The oldest is forgotten
 * first.
 */
#define KVSSD_EXPIRED_RING_ENTRIES 64u

/*
 * One bounce buffer per namespace, allocated once: a whole value (Store,
 * Retrieve), a List or Iter Read page. Host buffers larger than this are
 * used up to this size.
 */
#define KVSSD_SCRATCH_BYTES (KVFTL_VALUE_MAX_BYTES + 4096u)

#define KVSSD_SLOT_NONE 0xffffu

/* True if @v has a set bit outside @allowed (a reserved bit: INVALID_FIELD). */
#define KVSSD_RESERVED(v, allowed) (((v) & ~(uint32_t)(allowed)) != 0)

enum kvssd_slot_kind {
    KVSSD_SLOT_FREE = 0,
    KVSSD_SLOT_STAGED_KEY = 1,
    KVSSD_SLOT_STREAM = 2,
};

enum kvssd_inline_layout {
    KVSSD_LAYOUT_STOCK = 0, /* 81h head / 85h transfer */
    KVSSD_LAYOUT_FULL = 1,  /* 89h head / 8Dh transfer */
};

/* An open inline Store: everything the head declared, and what arrived. */
struct kvssd_stream {
    uint8_t layout;          /* enum kvssd_inline_layout */
    uint32_t options;        /* KVFTL_STORE_*, as the head declared them */
    uint32_t value_bytes;    /* declared value size */
    uint32_t dma_bytes;      /* hybrid: bytes that came by data pointer with the head */
    uint32_t head_bytes;     /* inline bytes the head carried */
    uint32_t xfer_payload;   /* inline bytes per transfer command of the layout */
    uint32_t xfers;          /* transfer commands needed: sequences 1..xfers */
    uint32_t xfers_received;
    uint32_t received_bytes; /* value bytes so far, data pointer part included */
    uint8_t *value;          /* value_bytes, allocated once by the head, then seen */
    uint8_t *seen;           /* bit per sequence number 1..xfers: value's tail */
    size_t alloc_bytes;      /* bytes held by value + seen */
};

/* A tag table entry: a staged long key, or a stream (with its key). */
struct kvssd_slot {
    uint8_t kind;            /* enum kvssd_slot_kind */
    uint16_t tag;
    uint64_t last_ns;        /* last activity, host clock */
    uint32_t key_bytes;
    uint8_t key[KVFTL_KEY_MAX_BYTES];
    struct kvssd_stream stream;
};

struct kvssd_inline_owner;

struct kvssd_ns {
    struct kvftl *ftl;
    const struct kvssd_inline_owner *inline_owner; /* kv.c's, for inline.c */
    struct kvssd_ns_config cfg;
    struct kvssd_xfer_counters *xfer;
    struct kvssd_xfer_counters own_xfer; /* when the caller gave none */
    uint8_t *scratch;                    /* KVSSD_SCRATCH_BYTES */

    /* The tag table: cfg.tag_table_entries slots shared by keys and streams. */
    struct kvssd_slot *slots;
    uint16_t *free_slots;                /* stack of free slot indexes */
    uint32_t free_count;
    uint16_t stream_slot[KVSSD_MAX_TAGS]; /* tag -> slot of its open stream */
    uint16_t staged_slot[KVSSD_MAX_TAGS]; /* tag -> slot of its staged key */
    uint16_t expired[KVSSD_EXPIRED_RING_ENTRIES];
    uint32_t expired_next, expired_count;
    /*
     * At most the last_ns of every slot in use (UINT64_MAX when none is in
     * use), exact after each scan. The transport runs the expiry scan before every
     * batch of commands, one command each at queue depth 1: while nothing
     * can have been idle longer than the timeout, it returns at once instead
     * of reading the whole table.
     */
    uint64_t idle_floor_ns;
    uint64_t stream_bytes_held;          /* gauge: memory of open streams */

    /*
     * Parked commands (kv.c): one List at a time walks (it holds this slot
     * and firmware iterator list_handle; others wait, holding only their
     * small state); epoch counts resets and Formats, after which a parked
     * command's iterator is no longer its own.
     */
    bool list_busy;
    uint32_t list_handle;
    uint32_t epoch;

    uint32_t host_iterators;             /* bit per kvftl handle the host opened */
    uint32_t host_iterator_kv;           /* bit per handle opened for key+value entries */
    uint32_t
        host_iterator_unrecovered;  /* bit per handle: its next Iter Read is Unrecovered Error */
};

/*
 * A Store as the command that carries it declares it: Store (01h), or an
 * inline head (81h stock, 89h full layout), whose CDW10 packs the same
 * fields. Filled and checked by struct kvssd_inline_owner's store_decode().
 */
struct kvssd_store_fields {
    uint32_t key_bytes;
    uint32_t value_bytes;
    uint32_t options;        /* KVFTL_STORE_*, converted from the wire's KVSSD_STORE_OPT_* */
    bool staged;             /* the key is longer than an SQE holds: staged under staged_tag */
    uint32_t staged_tag;     /* CDW2[11:0] */
};

/*
 * What inline.c, which reassembles an inline Store's value, asks of the KV
 * command set that owns it: kv.c registers it in struct kvssd_ns
 * (inline_owner) in kvssd_ns_new(), and inline.c calls kv.c only through
 * it, as kvftl's GC asks its owner through struct gc_owner.
 */
struct kvssd_inline_owner {
    /*
     * store_decode() - the Store fields of @sqe (opcode 01h, 81h or 89h),
     * checked once for all three, in this order: the reserved fields around
     * them (INVALID_FIELD; a stock head's CDW11 is its caller's), then the
     * firmware's own rules, kvftl_store_check() (options, key length, value
     * size), where a full-layout head's key, which must fit its 16 bytes,
     * takes the key length's place. Returns the status of the first fault.
     * A staged key is named, not taken: each command takes it at its own
     * step.
     */
    uint16_t (*store_decode)(const struct kvssd_sqe *sqe, struct kvssd_store_fields *f);
    /*
     * store_value() - the one place a value reaches kvftl_store().
     * @inline_xfers: the inline transfer commands (85h/8Dh) that carried
     * part of the value after its head, each charged fw_inline_fragment_ns
     * of firmware time to this Store. Returns the Store's status.
     */
    uint16_t (*store_value)(struct kvssd_ns *ns, struct kvssd_req *req, const uint8_t *key,
                            uint32_t key_bytes, const uint8_t *value, uint32_t value_bytes,
                            uint32_t options, uint32_t inline_bytes, uint32_t inline_xfers);
};

/* inline.c: the tag table. */
void kvssd_tags_init(struct kvssd_ns *ns);
void kvssd_tags_free(struct kvssd_ns *ns);
void kvssd_tags_reset(struct kvssd_ns *ns);
void kvssd_tags_expire(struct kvssd_ns *ns, uint64_t now_ns);

/* Key Stage: keep @key under @tag. SUCCESS, INLINE_TAG_IN_USE, TAG_TABLE_FULL. */
uint16_t kvssd_tags_stage_key(struct kvssd_ns *ns, uint32_t tag, const uint8_t *key,
                              uint32_t key_bytes, uint64_t now_ns);

/* Whether a key is staged under @tag and not expired (nothing is consumed). */
bool kvssd_tags_key_staged(const struct kvssd_ns *ns, uint32_t tag, uint64_t now_ns);

/*
 * Take (copy out and free) the key staged under @tag for a command whose
 * key length is @key_bytes. SUCCESS; STAGED_KEY_UNKNOWN (none, or expired);
 * INVALID_KEY_SIZE if the staged key has another length (it stays staged).
 */
uint16_t kvssd_tags_take_key(struct kvssd_ns *ns, uint32_t tag, uint32_t key_bytes, uint8_t *key,
                             uint64_t now_ns);

/*
 * inline.c: the four inline opcodes, as handlers of kv.c's dispatcher: the
 * head (81h, 89h) and the transfer (85h, 8Dh), in the layout their opcode
 * names. Each returns the command's status.
 */
uint16_t kvssd_inline_head(struct kvssd_ns *ns, struct kvssd_req *req);
uint16_t kvssd_inline_xfer(struct kvssd_ns *ns, struct kvssd_req *req);

/* For tests: slots in use, and bytes held by open streams. */
uint32_t kvssd_tags_in_use(const struct kvssd_ns *ns);
uint64_t kvssd_tags_stream_bytes(const struct kvssd_ns *ns);

/*
 * Move @len bytes between the host buffer of @req's data pointer (from byte
 * @offset on) and @buf: SUCCESS, or the status of the transfer's failure.
 * Nothing to move is success, with or without a data pointer.
 */
static inline uint16_t kvssd_dptr_from_host(struct kvssd_req *req, uint64_t offset, void *buf,
                                            uint32_t len)
{
    if (len == 0) {
        return KVSSD_SC_SUCCESS;
    }
    if (!req->dptr.from_host) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    return req->dptr.from_host(req->dptr.opaque, offset, buf, len);
}

static inline uint16_t kvssd_dptr_to_host(struct kvssd_req *req, uint64_t offset, const void *buf,
                                          uint32_t len)
{
    if (len == 0) {
        return KVSSD_SC_SUCCESS;
    }
    if (!req->dptr.to_host) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    return req->dptr.to_host(req->dptr.opaque, offset, buf, len);
}

/* Little-endian byte helpers shared by both files. */
static inline void kvssd_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = v & 0xff;
    p[1] = v >> 8;
}

static inline void kvssd_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = v & 0xff;
    p[1] = (v >> 8) & 0xff;
    p[2] = (v >> 16) & 0xff;
    p[3] = (v >> 24) & 0xff;
}

#endif /* HW_KVSSD_KV_INTERNAL_H */
