/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rawhash engine: a raw-block hash store in the manner of Aerospike's
 * storage engine ("Aerospike: Architecture of a Real-Time Operational DBMS",
 * VLDB 2016; its SSD layout: a DRAM primary index of key digests, records
 * appended to large write blocks, defragmentation of blocks whose live share
 * fell under defrag-lwm-pct). Aerospike itself is not packaged by Debian;
 * this is the same design, small enough to read:
 *
 *   device:  [superblock 4 KiB][write block 0][write block 1]...
 *   block:   [header 64 B][record][record]...   (records 16-byte aligned)
 *   record:  [header 32 B][key][value]          (xxh64 over all three)
 *
 * Index: open addressing on a 128-bit digest of the key (XXH3-128, as
 * Aerospike keys by a 160-bit RIPEMD digest) -> (device offset, record
 * size, generation). Writes append into the open block's DRAM buffer; a
 * full block is written whole (one pwrite of write_block_bytes, O_DIRECT);
 * commit_to_device also writes the buffer's tail pages before each
 * acknowledgement. Reads pread the record's pages (O_DIRECT) unless it is
 * still in the open block's buffer. A delete appends a tombstone record, so
 * that the index rebuilt from the device on reopen does not resurrect the
 * key; tombstones are kept (in the index and relocated by defragmentation):
 * dropping one safely needs to know no older copy of the key survives on
 * the device, which this store does not track. A delete of a missing key
 * succeeds and writes nothing, as the KV-SSD's Delete does without EDNEK.
 *
 * Defragmentation: a sealed block whose live bytes fall below
 * defrag_lwm_pct % is queued; each write then defragments at most one
 * queued block (its live records appended to the open block, the open
 * block's tail flushed, the block freed - and deallocated with trim), and
 * allocation defragments the emptiest blocks when only RH_RESERVE free
 * blocks remain (those are kept for relocation itself).
 *
 * Host memory: the index is 48 bytes x a power-of-two capacity kept under
 * 3/4 full: at most 128 bytes per distinct key ever written (+ tombstones);
 * blocks: 40 bytes per write block (state, free stack, defragmentation
 * queue); buffers: 2 x write_block_bytes.
 */
/* O_DIRECT, fallocate and syncfs: meson defines _GNU_SOURCE for the whole project */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "kvbench.h"

#define RH_ALIGN 4096u
#define RH_SUPER_BYTES 4096u
#define RH_BLOCK_HDR 64u
#define RH_REC_HDR 32u
#define RH_REC_ALIGN 16u
#define RH_RESERVE 2u
#define RH_VERSION 1u
#define RH_SUPER_MAGIC 0x31534852u /* "RHS1" */
#define RH_BLOCK_MAGIC 0x31424852u /* "RHB1" */
#define RH_REC_MAGIC 0x31524852u   /* "RHR1" */
#define RH_TOMBSTONE 1u
#define RH_NONE UINT64_MAX

struct rh_super {
    uint32_t magic, version, write_block_bytes, pad;
    uint64_t epoch, blocks, check;
};

struct rh_block_hdr {
    uint32_t magic, write_block_bytes;
    uint64_t epoch, seq, check;
    uint8_t pad[RH_BLOCK_HDR - 32];
};
_Static_assert(sizeof(struct rh_block_hdr) == RH_BLOCK_HDR, "block header is 64 bytes");

struct rh_rec_hdr {
    uint32_t magic, value_len;
    uint64_t gen;
    uint64_t
        seq; /* the block incarnation it was written in: stale records of a reused block differ */
    uint16_t key_len, flags;
    uint32_t check; /* low 32 bits of xxh64 over this header (check = 0), key and value */
};
_Static_assert(sizeof(struct rh_rec_hdr) == RH_REC_HDR, "record header is 32 bytes");

struct rh_entry {
    uint64_t d0, d1; /* the key's digest; both 0 = an empty slot */
    uint64_t off;    /* the record's device offset */
    uint64_t gen;
    uint32_t size;   /* record bytes, aligned */
    uint32_t flags;  /* RH_TOMBSTONE */
    uint64_t pad;
};

enum rh_state { RH_FREE, RH_OPEN, RH_SEALED };

struct rh_block {
    uint64_t live_bytes;
    uint64_t seq;
    uint32_t used;
    uint8_t state;
    uint8_t queued;
};

struct rh_store {
    struct kb_rawhash_opts o;
    int fd;
    bool direct, is_blockdev;
    uint32_t wb;
    uint64_t nblocks;
    uint64_t epoch;
    uint64_t gen, block_seq;
    struct rh_block *blocks;
    uint64_t *free_stack, nfree;
    uint64_t *queue, qhead, qlen; /* defragmentation candidates, a ring of nblocks */
    struct rh_entry *tab;
    uint64_t cap, used_slots;
    uint64_t cur; /* the open block or RH_NONE */
    uint8_t *wbuf;   /* the open block */
    uint32_t flushed; /* bytes of wbuf on the device, a multiple of RH_ALIGN */
    uint8_t *gcbuf;
    pthread_rwlock_t lock;
    struct rh_stats st;
};

static uint64_t block_off(const struct rh_store *s, uint64_t b)
{
    return RH_SUPER_BYTES + b * s->wb;
}

static uint32_t rec_size(uint32_t kl, uint32_t vl)
{
    return (RH_REC_HDR + kl + vl + RH_REC_ALIGN - 1) & ~(RH_REC_ALIGN - 1);
}

static void digest(const uint8_t *k, uint32_t kl, uint64_t *d0, uint64_t *d1)
{
    XXH128_hash_t h = XXH3_128bits(k, kl);
    *d0 = h.low64;
    *d1 = h.high64;
    if (!*d0 && !*d1) {
        *d0 = 1; /* 0:0 marks an empty slot */
    }
}

/* ---- device I/O (whole aligned ranges) -------------------------------- */

static int dev_write(struct rh_store *s, const void *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(s->fd, (const uint8_t *)buf + done, len - done, (off_t)(off + done));
        if (n <= 0) {
            kb_engine_set_error("rawhash: write of %zu bytes at %llu: %s", len,
                                (unsigned long long)off, n < 0 ? strerror(errno) : "short");
            return -KVSSD_ERR_SYSTEM;
        }
        done += (size_t)n;
    }
    s->st.device_bytes_written += len;
    s->st.device_writes++;
    return 0;
}

static int dev_read(struct rh_store *s, void *buf, size_t len, uint64_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(s->fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
        if (n <= 0) {
            kb_engine_set_error("rawhash: read of %zu bytes at %llu: %s", len,
                                (unsigned long long)off, n < 0 ? strerror(errno) : "short");
            return -KVSSD_ERR_SYSTEM;
        }
        done += (size_t)n;
    }
    __atomic_fetch_add(&s->st.device_bytes_read, len, __ATOMIC_RELAXED);
    return 0;
}

static void trim_block(struct rh_store *s, uint64_t b)
{
    if (!s->o.trim) {
        return;
    }
    uint64_t range[2] = {block_off(s, b), s->wb};
    if (s->is_blockdev) {
        ioctl(s->fd, BLKDISCARD, range);
    } else {
        fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)range[0],
                  (off_t)range[1]);
    }
}

/* ---- index --------------------------------------------------------- */

static struct rh_entry *slot_of(struct rh_entry *tab, uint64_t cap, uint64_t d0, uint64_t d1)
{
    uint64_t i = d0 & (cap - 1);
    for (;;) {
        struct rh_entry *e = &tab[i];
        if ((!e->d0 && !e->d1) || (e->d0 == d0 && e->d1 == d1)) {
            return e;
        }
        i = (i + 1) & (cap - 1);
    }
}

static int index_grow(struct rh_store *s)
{
    uint64_t ncap = s->cap * 2;
    struct rh_entry *nt = calloc(ncap, sizeof(*nt));
    if (!nt) {
        kb_engine_set_error("rawhash: cannot grow the index to %llu entries",
                            (unsigned long long)ncap);
        return -KVSSD_ERR_CAPACITY;
    }
    for (uint64_t i = 0; i < s->cap; i++) {
        if (s->tab[i].d0 || s->tab[i].d1) {
            *slot_of(nt, ncap, s->tab[i].d0, s->tab[i].d1) = s->tab[i];
        }
    }
    free(s->tab);
    s->tab = nt;
    s->cap = ncap;
    return 0;
}

/* The entry of a digest, inserted empty (off RH_NONE) when absent and @create. */
static struct rh_entry *lookup(struct rh_store *s, uint64_t d0, uint64_t d1, bool create)
{
    if (create && (s->used_slots + 1) * 4 > s->cap * 3 && index_grow(s)) {
        return NULL;
    }
    struct rh_entry *e = slot_of(s->tab, s->cap, d0, d1);
    if (!e->d0 && !e->d1) {
        if (!create) {
            return NULL;
        }
        e->d0 = d0;
        e->d1 = d1;
        e->off = RH_NONE;
        s->used_slots++;
    }
    return e;
}

/* ---- blocks --------------------------------------------------------- */

static uint64_t block_of_off(const struct rh_store *s, uint64_t off)
{
    return (off - RH_SUPER_BYTES) / s->wb;
}

static void maybe_queue(struct rh_store *s, uint64_t b)
{
    struct rh_block *bl = &s->blocks[b];
    if (bl->state != RH_SEALED || bl->queued ||
        bl->live_bytes * 100 >= (uint64_t)s->wb * s->o.defrag_lwm_pct) {
        return;
    }
    bl->queued = 1;
    s->queue[(s->qhead + s->qlen) % s->nblocks] = b;
    s->qlen++;
}

/* Make the record at @off (of @size bytes) dead: its block loses the bytes. */
static void kill_record(struct rh_store *s, uint64_t off, uint32_t size)
{
    uint64_t b = block_of_off(s, off);
    s->blocks[b].live_bytes -= size;
    maybe_queue(s, b);
}

/* Write the open block's unwritten pages (the last partial page again). */
static int flush_open(struct rh_store *s)
{
    if (s->cur == RH_NONE) {
        return 0;
    }
    uint32_t used = s->blocks[s->cur].used;
    uint32_t end = (used + RH_ALIGN - 1) & ~(RH_ALIGN - 1);
    if (end <= s->flushed) {
        return 0;
    }
    int rc = dev_write(s, s->wbuf + s->flushed, end - s->flushed,
                       block_off(s, s->cur) + s->flushed);
    if (!rc) {
        s->flushed = used & ~(RH_ALIGN - 1);
    }
    return rc;
}

static int seal_open(struct rh_store *s)
{
    if (s->cur == RH_NONE) {
        return 0;
    }
    int rc = flush_open(s);
    if (rc) {
        return rc;
    }
    uint64_t b = s->cur;
    s->blocks[b].state = RH_SEALED;
    s->cur = RH_NONE;
    if (!s->blocks[b].live_bytes) {
        s->blocks[b].state = RH_FREE;
        s->free_stack[s->nfree++] = b;
        trim_block(s, b);
    } else {
        maybe_queue(s, b);
    }
    return 0;
}

static int defrag(struct rh_store *s, uint64_t b);

/*
 * The sealed block with the fewest live bytes, if relocating them leaves
 * room for @need more bytes in the block they move to.
 */
static uint64_t emptiest_sealed(const struct rh_store *s, uint32_t need)
{
    uint64_t best = RH_NONE, best_live = (uint64_t)s->wb - RH_BLOCK_HDR - need + 1;
    for (uint64_t b = 0; b < s->nblocks; b++) {
        if (s->blocks[b].state == RH_SEALED && s->blocks[b].live_bytes < best_live) {
            best = b;
            best_live = s->blocks[b].live_bytes;
        }
    }
    return best;
}

static int open_block(struct rh_store *s, bool for_gc, uint32_t need)
{
    /* the last RH_RESERVE free blocks are for relocation: reclaim before using them */
    for (uint64_t guard = 0; !for_gc && s->nfree <= RH_RESERVE && guard < s->nblocks; guard++) {
        uint64_t v = emptiest_sealed(s, need);
        if (v == RH_NONE) {
            break;
        }
        int rc = defrag(s, v);
        if (rc) {
            return rc;
        }
    }
    if (s->cur != RH_NONE) {
        return 0; /* relocation opened a block: the caller writes there first */
    }
    if (s->nfree == 0 || (!for_gc && s->nfree <= RH_RESERVE)) {
        kb_engine_set_error("rawhash: no free write block (%llu blocks of %u bytes, all live)",
                            (unsigned long long)s->nblocks, s->wb);
        return -KVSSD_ERR_CAPACITY;
    }
    uint64_t b = s->free_stack[--s->nfree];
    struct rh_block *bl = &s->blocks[b];
    bl->state = RH_OPEN;
    bl->seq = ++s->block_seq;
    bl->live_bytes = 0;
    bl->used = RH_BLOCK_HDR;
    memset(s->wbuf, 0, s->wb);
    struct rh_block_hdr *h = (struct rh_block_hdr *)s->wbuf;
    h->magic = RH_BLOCK_MAGIC;
    h->write_block_bytes = s->wb;
    h->epoch = s->epoch;
    h->seq = bl->seq;
    h->check = XXH64(h, offsetof(struct rh_block_hdr, check), 0);
    s->cur = b;
    s->flushed = 0;
    return 0;
}

/*
 * Append a record (already encoded: @hdr, @k, @v) to the open block; its
 * offset in *@off. @for_gc: relocation may use the reserve.
 */
static int append(struct rh_store *s, struct rh_rec_hdr *hdr, const uint8_t *k, const uint8_t *v,
                  bool for_gc, uint64_t *off)
{
    uint32_t size = rec_size(hdr->key_len, hdr->value_len);
    for (uint64_t guard = 0; s->cur == RH_NONE || s->blocks[s->cur].used + size > s->wb; guard++) {
        int rc = guard > s->nblocks ? -KVSSD_ERR_CAPACITY : seal_open(s);
        if (!rc) {
            rc = open_block(s, for_gc, size);
        }
        if (rc) {
            return rc;
        }
    }
    struct rh_block *bl = &s->blocks[s->cur];
    uint8_t *p = s->wbuf + bl->used;
    hdr->magic = RH_REC_MAGIC;
    hdr->seq = bl->seq;
    hdr->check = 0;
    memcpy(p, hdr, RH_REC_HDR);
    memcpy(p + RH_REC_HDR, k, hdr->key_len);
    if (hdr->value_len) {
        memcpy(p + RH_REC_HDR + hdr->key_len, v, hdr->value_len);
    }
    memset(p + RH_REC_HDR + hdr->key_len + hdr->value_len, 0,
           size - RH_REC_HDR - hdr->key_len - hdr->value_len);
    uint32_t check = (uint32_t)XXH64(p, RH_REC_HDR + hdr->key_len + hdr->value_len, 0);
    memcpy(p + offsetof(struct rh_rec_hdr, check), &check, sizeof(check));
    *off = block_off(s, s->cur) + bl->used;
    bl->used += size;
    bl->live_bytes += size;
    return 0;
}

/* Is the record at @p (@avail bytes) a whole, intact record of block incarnation @seq? */
static bool record_ok(const uint8_t *p, uint32_t avail, uint64_t seq, struct rh_rec_hdr *h)
{
    if (avail < RH_REC_HDR) {
        return false;
    }
    memcpy(h, p, RH_REC_HDR);
    if (h->magic != RH_REC_MAGIC || h->seq != seq || h->key_len < 1 ||
        h->key_len > KB_KEY_BYTES_MAX || h->value_len > avail ||
        rec_size(h->key_len, h->value_len) > avail) {
        return false;
    }
    uint32_t check = h->check;
    uint8_t tmp[RH_REC_HDR];
    memcpy(tmp, p, RH_REC_HDR);
    memset(tmp + offsetof(struct rh_rec_hdr, check), 0, sizeof(check));
    XXH64_state_t st;
    XXH64_reset(&st, 0);
    XXH64_update(&st, tmp, RH_REC_HDR);
    XXH64_update(&st, p + RH_REC_HDR, h->key_len + h->value_len);
    return (uint32_t)XXH64_digest(&st) == check;
}

/* Relocate block @b's live records to the open block, make them durable, free @b. */
static int defrag(struct rh_store *s, uint64_t b)
{
    struct rh_block *bl = &s->blocks[b];
    if (bl->state != RH_SEALED) {
        return -1;
    }
    int rc = dev_read(s, s->gcbuf, s->wb, block_off(s, b));
    if (rc) {
        return rc;
    }
    s->st.defrags++;
    uint32_t used = bl->used;
    for (uint32_t off = RH_BLOCK_HDR; off < used && bl->live_bytes;) {
        struct rh_rec_hdr h;
        if (!record_ok(s->gcbuf + off, used - off, bl->seq, &h)) {
            kb_engine_set_error("rawhash: block %llu holds a damaged record at %u",
                                (unsigned long long)b, off);
            return -KVSSD_ERR_UNRECOVERED;
        }
        uint32_t size = rec_size(h.key_len, h.value_len);
        const uint8_t *k = s->gcbuf + off + RH_REC_HDR;
        uint64_t d0, d1, here = block_off(s, b) + off;
        digest(k, h.key_len, &d0, &d1);
        struct rh_entry *e = lookup(s, d0, d1, false);
        if (e && e->off == here) {
            uint64_t noff;
            rc = append(s, &h, k, k + h.key_len, true, &noff);
            if (rc) {
                return rc;
            }
            e = lookup(s, d0, d1, false); /* append does not grow the index; same slot */
            e->off = noff;
            bl->live_bytes -= size;
            s->st.relocated_records++;
            s->st.relocated_bytes += size;
        }
        off += size;
    }
    /* the copies must be on the device before the originals may be overwritten */
    rc = flush_open(s);
    if (rc) {
        return rc;
    }
    bl->state = RH_FREE;
    bl->live_bytes = 0;
    s->free_stack[s->nfree++] = b;
    trim_block(s, b);
    return 0;
}

/* At most one queued block per write: defragmentation keeps pace with the writes. */
static int defrag_queued(struct rh_store *s)
{
    while (s->qlen) {
        uint64_t b = s->queue[s->qhead];
        s->qhead = (s->qhead + 1) % s->nblocks;
        s->qlen--;
        s->blocks[b].queued = 0;
        if (s->blocks[b].state == RH_SEALED &&
            s->blocks[b].live_bytes * 100 < (uint64_t)s->wb * s->o.defrag_lwm_pct) {
            return defrag(s, b);
        }
    }
    return 0;
}

/* ---- the store's operations ------------------------------------------ */

static int write_record(struct rh_store *s, const uint8_t *k, uint32_t kl, const uint8_t *v,
                        uint32_t vl, uint32_t flags)
{
    if (kl < 1 || kl > KB_KEY_BYTES_MAX) {
        return -KVSSD_ERR_KEY_SIZE;
    }
    if (rec_size(kl, vl) > s->wb - RH_BLOCK_HDR) {
        kb_engine_set_error("rawhash: a %u-byte record does not fit a %u-byte write block",
                            rec_size(kl, vl), s->wb);
        return -KVSSD_ERR_VALUE_SIZE;
    }
    uint64_t d0, d1;
    digest(k, kl, &d0, &d1);
    pthread_rwlock_wrlock(&s->lock);
    struct rh_entry *e = lookup(s, d0, d1, flags != RH_TOMBSTONE);
    int rc = 0;
    if (!e) {
        rc = flags == RH_TOMBSTONE ? 0 : -KVSSD_ERR_CAPACITY; /* a delete of a key never seen */
        goto out;
    }
    if (flags == RH_TOMBSTONE && (e->off == RH_NONE || (e->flags & RH_TOMBSTONE))) {
        goto out; /* nothing to delete: success, as the KV-SSD's Delete without EDNEK */
    }
    struct rh_rec_hdr h = {
        .value_len = vl, .gen = ++s->gen, .key_len = (uint16_t)kl, .flags = (uint16_t)flags};
    uint64_t off;
    rc = append(s, &h, k, v, false, &off);
    if (rc) {
        goto out;
    }
    e = lookup(s, d0, d1, false); /* open_block may have defragmented: the slot is stable */
    if (e->off != RH_NONE) {
        kill_record(s, e->off, e->size);
    }
    e->off = off;
    e->size = rec_size(kl, vl);
    e->gen = h.gen;
    e->flags = flags;
    if (s->o.commit_to_device) {
        rc = flush_open(s);
    }
    if (!rc) {
        rc = defrag_queued(s);
    }
out:
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

int rh_put(struct rh_store *s, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl)
{
    return write_record(s, k, kl, v, vl, 0);
}

int rh_del(struct rh_store *s, const uint8_t *k, uint32_t kl)
{
    return write_record(s, k, kl, NULL, 0, RH_TOMBSTONE);
}

int rh_get(struct rh_store *s, const uint8_t *k, uint32_t kl, uint8_t *buf, uint32_t cap,
           uint32_t *vlen)
{
    if (kl < 1 || kl > KB_KEY_BYTES_MAX) {
        return -KVSSD_ERR_KEY_SIZE;
    }
    uint64_t d0, d1;
    digest(k, kl, &d0, &d1);
    pthread_rwlock_rdlock(&s->lock);
    struct rh_entry *e = lookup(s, d0, d1, false);
    int rc = 0;
    uint8_t *io = NULL;
    if (!e || e->off == RH_NONE || (e->flags & RH_TOMBSTONE)) {
        rc = -KVSSD_ERR_KEY_NOT_FOUND;
        goto out;
    }
    uint64_t b = block_of_off(s, e->off);
    const uint8_t *p;
    uint32_t in = (uint32_t)(e->off - block_off(s, b));
    if (b == s->cur) {
        p = s->wbuf + in; /* still in the open block's buffer, as Aerospike reads it */
    } else {
        uint64_t start = e->off & ~(uint64_t)(RH_ALIGN - 1);
        uint64_t end = (e->off + e->size + RH_ALIGN - 1) & ~(uint64_t)(RH_ALIGN - 1);
        if (posix_memalign((void **)&io, RH_ALIGN, end - start)) {
            rc = -KVSSD_ERR_SYSTEM;
            goto out;
        }
        rc = dev_read(s, io, end - start, start);
        if (rc) {
            goto out;
        }
        p = io + (e->off - start);
    }
    struct rh_rec_hdr h;
    if (!record_ok(p, e->size, s->blocks[b].seq, &h) || h.key_len != kl ||
        memcmp(p + RH_REC_HDR, k, kl)) {
        kb_engine_set_error("rawhash: the record at %llu is not the key's (damaged or a digest "
                            "collision)",
                            (unsigned long long)e->off);
        rc = -KVSSD_ERR_UNRECOVERED;
        goto out;
    }
    *vlen = h.value_len;
    memcpy(buf, p + RH_REC_HDR + kl, h.value_len < cap ? h.value_len : cap);
out:
    pthread_rwlock_unlock(&s->lock);
    free(io);
    return rc;
}

int rh_sync(struct rh_store *s)
{
    pthread_rwlock_wrlock(&s->lock);
    int rc = flush_open(s);
    if (!rc && fdatasync(s->fd)) {
        kb_engine_set_error("rawhash: fdatasync: %s", strerror(errno));
        rc = -KVSSD_ERR_SYSTEM;
    }
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

int rh_defrag_block(struct rh_store *s, uint64_t b)
{
    pthread_rwlock_wrlock(&s->lock);
    int rc = b < s->nblocks ? defrag(s, b) : -1;
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

int64_t rh_block_of(struct rh_store *s, const uint8_t *k, uint32_t kl)
{
    uint64_t d0, d1;
    digest(k, kl, &d0, &d1);
    pthread_rwlock_rdlock(&s->lock);
    struct rh_entry *e = lookup(s, d0, d1, false);
    int64_t b = e && e->off != RH_NONE ? (int64_t)block_of_off(s, e->off) : -1;
    pthread_rwlock_unlock(&s->lock);
    return b;
}

void rh_get_stats(struct rh_store *s, struct rh_stats *st)
{
    pthread_rwlock_rdlock(&s->lock);
    *st = s->st;
    st->blocks = s->nblocks;
    st->free_blocks = s->nfree;
    st->sealed_blocks = 0;
    for (uint64_t b = 0; b < s->nblocks; b++) {
        st->sealed_blocks += s->blocks[b].state == RH_SEALED;
        st->live_bytes += s->blocks[b].live_bytes;
    }
    st->live_records = st->tombstones = 0;
    for (uint64_t i = 0; i < s->cap; i++) {
        const struct rh_entry *e = &s->tab[i];
        if ((e->d0 || e->d1) && e->off != RH_NONE) {
            if (e->flags & RH_TOMBSTONE) {
                st->tombstones++;
            } else {
                st->live_records++;
            }
        }
    }
    st->index_bytes = s->cap * sizeof(struct rh_entry);
    pthread_rwlock_unlock(&s->lock);
}

/* ---- open: format, or rebuild the index from the device ---------------- */

static int write_super(struct rh_store *s)
{
    uint8_t *page;
    if (posix_memalign((void **)&page, RH_ALIGN, RH_SUPER_BYTES)) {
        return -KVSSD_ERR_SYSTEM;
    }
    memset(page, 0, RH_SUPER_BYTES);
    struct rh_super *sb = (struct rh_super *)page;
    sb->magic = RH_SUPER_MAGIC;
    sb->version = RH_VERSION;
    sb->write_block_bytes = s->wb;
    sb->epoch = s->epoch;
    sb->blocks = s->nblocks;
    sb->check = XXH64(sb, offsetof(struct rh_super, check), 0);
    int rc = dev_write(s, page, RH_SUPER_BYTES, 0);
    free(page);
    return rc;
}

/* Apply block @b's records (read into gcbuf) to the index. */
static int rebuild_block(struct rh_store *s, uint64_t b, uint64_t seq)
{
    struct rh_block *bl = &s->blocks[b];
    uint32_t off = RH_BLOCK_HDR;
    bl->seq = seq;
    bl->state = RH_SEALED;
    while (off < s->wb) {
        struct rh_rec_hdr h;
        if (!record_ok(s->gcbuf + off, s->wb - off, seq, &h)) {
            break; /* the end of what this incarnation wrote (or a torn tail) */
        }
        uint32_t size = rec_size(h.key_len, h.value_len);
        uint64_t d0, d1;
        digest(s->gcbuf + off + RH_REC_HDR, h.key_len, &d0, &d1);
        struct rh_entry *e = lookup(s, d0, d1, true);
        if (!e) {
            return -KVSSD_ERR_CAPACITY;
        }
        /* the newest generation wins; a relocated copy (same generation) in the newer block */
        bool newer = e->off == RH_NONE || h.gen > e->gen ||
                     (h.gen == e->gen && seq > s->blocks[block_of_off(s, e->off)].seq);
        if (newer) {
            if (e->off != RH_NONE) {
                s->blocks[block_of_off(s, e->off)].live_bytes -= e->size;
            }
            e->off = block_off(s, b) + off;
            e->size = size;
            e->gen = h.gen;
            e->flags = h.flags & RH_TOMBSTONE;
            bl->live_bytes += size;
            s->st.rebuilt_records++;
        }
        if (h.gen > s->gen) {
            s->gen = h.gen;
        }
        off += size;
    }
    bl->used = off;
    return 0;
}

static int rebuild(struct rh_store *s, char *err, size_t errlen)
{
    int rc = dev_read(s, s->gcbuf, RH_SUPER_BYTES, 0);
    if (rc) {
        snprintf(err, errlen, "%s", kb_engine_error());
        return -1;
    }
    struct rh_super sb;
    memcpy(&sb, s->gcbuf, sizeof(sb));
    if (sb.magic != RH_SUPER_MAGIC || sb.check != XXH64(&sb, offsetof(struct rh_super, check), 0)) {
        snprintf(err, errlen, "%s holds no rawhash store (no valid superblock); run without keep",
                 s->o.dev);
        return -1;
    }
    if (sb.version != RH_VERSION || sb.write_block_bytes != s->wb || sb.blocks != s->nblocks) {
        snprintf(err, errlen,
                 "%s holds a rawhash store of version %u with %llu write blocks of %u bytes; "
                 "this one is version %u with %llu of %u",
                 s->o.dev, sb.version, (unsigned long long)sb.blocks, sb.write_block_bytes,
                 RH_VERSION, (unsigned long long)s->nblocks, s->wb);
        return -1;
    }
    s->epoch = sb.epoch;
    for (uint64_t b = 0; b < s->nblocks; b++) {
        rc = dev_read(s, s->gcbuf, s->wb, block_off(s, b));
        if (rc) {
            snprintf(err, errlen, "%s", kb_engine_error());
            return -1;
        }
        struct rh_block_hdr h;
        memcpy(&h, s->gcbuf, sizeof(h));
        if (h.magic != RH_BLOCK_MAGIC || h.epoch != s->epoch || h.write_block_bytes != s->wb ||
            h.check != XXH64(&h, offsetof(struct rh_block_hdr, check), 0)) {
            continue; /* never written in this epoch: free */
        }
        if (h.seq > s->block_seq) {
            s->block_seq = h.seq;
        }
        if (rebuild_block(s, b, h.seq)) {
            snprintf(err, errlen, "out of memory for the index");
            return -1;
        }
    }
    return 0;
}

int rh_open(const struct kb_rawhash_opts *o, struct rh_store **sp, char *err, size_t errlen)
{
    struct rh_store *s = calloc(1, sizeof(*s));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->o = *o;
    s->wb = o->write_block_bytes;
    s->cur = RH_NONE;
    s->direct = true;
    s->fd = open(o->dev, O_RDWR | O_CLOEXEC | O_DIRECT | (o->size_bytes ? O_CREAT : 0), 0644);
    if (s->fd < 0 && errno == EINVAL) {
        s->direct = false; /* a file system without O_DIRECT (tmpfs before Linux 6.6) */
        s->fd = open(o->dev, O_RDWR | O_CLOEXEC | (o->size_bytes ? O_CREAT : 0), 0644);
    }
    struct stat st;
    uint64_t bytes = 0;
    if (s->fd < 0 || fstat(s->fd, &st)) {
        snprintf(err, errlen, "cannot open %s: %s", o->dev, strerror(errno));
        goto fail;
    }
    s->is_blockdev = S_ISBLK(st.st_mode);
    if (s->is_blockdev) {
        if (ioctl(s->fd, BLKGETSIZE64, &bytes)) {
            snprintf(err, errlen, "cannot size %s: %s", o->dev, strerror(errno));
            goto fail;
        }
        if (o->size_bytes && o->size_bytes < bytes) {
            bytes = o->size_bytes;
        }
    } else if (S_ISREG(st.st_mode)) {
        bytes = o->size_bytes ? o->size_bytes : (uint64_t)st.st_size;
        if ((uint64_t)st.st_size < bytes && ftruncate(s->fd, (off_t)bytes)) {
            snprintf(err, errlen, "cannot extend %s to %llu bytes: %s", o->dev,
                     (unsigned long long)bytes, strerror(errno));
            goto fail;
        }
    } else {
        snprintf(err, errlen, "%s is neither a block device nor a regular file", o->dev);
        goto fail;
    }
    s->nblocks = bytes > RH_SUPER_BYTES ? (bytes - RH_SUPER_BYTES) / s->wb : 0;
    if (s->nblocks < RH_RESERVE + 2) {
        snprintf(err, errlen,
                 "%s has %llu bytes: room for %llu write blocks of %u bytes; the store needs at "
                 "least %u (give rawhash.size_bytes for a file)",
                 o->dev, (unsigned long long)bytes, (unsigned long long)s->nblocks, s->wb,
                 RH_RESERVE + 2);
        goto fail;
    }
    s->blocks = calloc(s->nblocks, sizeof(*s->blocks));
    s->free_stack = calloc(s->nblocks, sizeof(*s->free_stack));
    s->queue = calloc(s->nblocks, sizeof(*s->queue));
    s->cap = 1024;
    s->tab = calloc(s->cap, sizeof(*s->tab));
    if (!s->blocks || !s->free_stack || !s->queue || !s->tab ||
        posix_memalign((void **)&s->wbuf, RH_ALIGN, s->wb) ||
        posix_memalign((void **)&s->gcbuf, RH_ALIGN, s->wb)) {
        snprintf(err, errlen, "out of memory for %llu write blocks",
                 (unsigned long long)s->nblocks);
        goto fail;
    }
    pthread_rwlock_init(&s->lock, NULL);
    if (o->keep) {
        if (rebuild(s, err, errlen)) {
            goto fail;
        }
    } else {
        /* a new epoch: every block written before is free, whatever it holds */
        struct rh_super old;
        s->epoch = 1;
        if (!dev_read(s, s->gcbuf, RH_SUPER_BYTES, 0)) {
            memcpy(&old, s->gcbuf, sizeof(old));
            if (old.magic == RH_SUPER_MAGIC &&
                old.check == XXH64(&old, offsetof(struct rh_super, check), 0)) {
                s->epoch = old.epoch + 1;
            }
        }
        if (write_super(s)) {
            snprintf(err, errlen, "%s", kb_engine_error());
            goto fail;
        }
    }
    /* free blocks, highest index on top of the stack: blocks are used from the start */
    for (uint64_t b = s->nblocks; b-- > 0;) {
        if (s->blocks[b].live_bytes == 0) {
            s->blocks[b].state = RH_FREE;
            s->free_stack[s->nfree++] = b;
        } else {
            maybe_queue(s, b);
        }
    }
    s->st.device_bytes_written = s->st.device_bytes_read = s->st.device_writes = 0;
    *sp = s;
    return 0;
fail:
    rh_close(s);
    return -1;
}

void rh_close(struct rh_store *s)
{
    if (!s) {
        return;
    }
    if (s->fd >= 0) {
        if (s->tab) {
            flush_open(s);
        }
        close(s->fd);
    }
    free(s->blocks);
    free(s->free_stack);
    free(s->queue);
    free(s->tab);
    free(s->wbuf);
    free(s->gcbuf);
    free(s);
}

/* ---- the engine -------------------------------------------------------- */

static const char *const nvm_device_ops[5] = {"write", "read", "deallocate", "op3", "op4"};

struct rawhash_engine {
    struct rh_store *s;
    struct kvssd_dev *stats;
};

static int rhe_open(const struct kb_config *c, void **stp, char *err, size_t errlen)
{
    struct rawhash_engine *e = calloc(1, sizeof(*e));
    char why[256];
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (rh_open(&c->rawhash, &e->s, err, errlen)) {
        free(e);
        return -1;
    }
    e->stats = kb_nvm_stats_open(c->nvm_ctrl, c->rawhash.dev, why, sizeof(why));
    if (!e->stats) {
        fprintf(stderr, "kvbench: rawhash: no device statistics: %s\n", why);
    }
    *stp = e;
    return 0;
}

static void rhe_close(void *st)
{
    struct rawhash_engine *e = st;
    if (e) {
        rh_close(e->s);
        kvssd_close(e->stats);
        free(e);
    }
}

static int rhe_put(void *st, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl,
                   uint32_t *commands)
{
    (void)commands;
    return rh_put(((struct rawhash_engine *)st)->s, k, kl, v, vl);
}

static int rhe_get(void *st, const uint8_t *k, uint32_t kl, uint8_t *buf, uint32_t cap,
                   uint32_t *vlen, uint32_t *commands)
{
    (void)commands;
    return rh_get(((struct rawhash_engine *)st)->s, k, kl, buf, cap, vlen);
}

static int rhe_del(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands)
{
    (void)commands;
    return rh_del(((struct rawhash_engine *)st)->s, k, kl);
}

/* Aerospike answers exists from the index alone */
static int rhe_exist(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands)
{
    struct rh_store *s = ((struct rawhash_engine *)st)->s;
    uint64_t d0, d1;
    (void)commands;
    digest(k, kl, &d0, &d1);
    pthread_rwlock_rdlock(&s->lock);
    struct rh_entry *e = lookup(s, d0, d1, false);
    int rc = e && e->off != RH_NONE && !(e->flags & RH_TOMBSTONE) ? 0 : -KVSSD_ERR_KEY_NOT_FOUND;
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

static int rhe_iterate(void *st, const uint8_t *prefix, uint32_t plen, uint32_t max,
                       uint64_t *bytes, uint32_t *commands)
{
    (void)st, (void)prefix, (void)plen, (void)max, (void)bytes, (void)commands;
    kb_engine_set_error("rawhash has no key order to iterate");
    return -KVSSD_ERR_NOT_SUPPORTED;
}

static int rhe_sync(void *st)
{
    return rh_sync(((struct rawhash_engine *)st)->s);
}

/* Write blocks not free (sealed or open) x their size. */
static int64_t rhe_footprint(void *st)
{
    struct rh_stats s;
    rh_get_stats(((struct rawhash_engine *)st)->s, &s);
    return (int64_t)((s.blocks - s.free_blocks) * ((struct rawhash_engine *)st)->s->wb);
}

static struct kvssd_dev *rhe_stats_dev(void *st)
{
    return ((struct rawhash_engine *)st)->stats;
}

const struct kb_engine_ops kb_engine_rawhash = {
    .name = "rawhash",
    .open = rhe_open,
    .close = rhe_close,
    .put = rhe_put,
    .get = rhe_get,
    .del = rhe_del,
    .exist = rhe_exist,
    .iterate = rhe_iterate,
    .sync = rhe_sync,
    .footprint = rhe_footprint,
    .stats_dev = rhe_stats_dev,
    .device_ops = nvm_device_ops,
};
