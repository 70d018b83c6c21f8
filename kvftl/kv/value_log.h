/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Value log: every key-value pair is a blob appended to the open data
 * stripe through the NAND page buffer.
 *
 * Blob = 24-byte header { type, key length, value length, sequence number,
 * checksum } + key + value. The checksum is XXH3-64 over the key and value,
 * seeded with the other header fields, so a blob that was half written is
 * recognised and never returned. A blob starts on a placement-unit
 * boundary and occupies whole units; it may span pages but never stripes.
 * Gaps the packer leaves are marked with pad records so the log can be
 * scanned without the index (crash recovery, GC).
 *
 * Below it: the packer decides where each blob goes (packing.h) and the
 * space layer's data stream holds the open stripe, its pages in the buffer
 * and the stripes' valid bytes (space.h). It knows nothing of the index.
 */
#ifndef KVFTL_VALUE_LOG_H
#define KVFTL_VALUE_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <kvftl/kvftl.h>

#include "calendar.h"
#include "packing.h"
#include "space.h"

#define BLOB_HEADER_BYTES 24u

/* Record types of blobs (the first byte; pad records are the stream's, space.h). */
enum blob_type {
    REC_PAIR = 0xb1,       /* key-value pair */
    REC_TOMBSTONE = 0xb2,  /* deletion of the key */
};

struct blob_header {
    uint8_t type;
    uint8_t key_bytes;
    uint16_t reserved;
    uint32_t value_bytes;
    uint64_t seq;
    uint64_t checksum;
};

/* Blob location as kept in the index: byte address, stored length, tombstone flag. */
#define LOC_ADDR_BITS 40
#define LOC_LEN_BITS 23
#define LOC_TOMBSTONE (1ULL << 63)

static inline uint64_t loc_make(uint64_t addr, uint32_t len, bool tombstone)
{
    return addr | (uint64_t)len << LOC_ADDR_BITS | (tombstone ? LOC_TOMBSTONE : 0);
}
static inline uint64_t loc_addr(uint64_t loc)
{
    return loc & ((1ULL << LOC_ADDR_BITS) - 1);
}
static inline uint32_t loc_len(uint64_t loc)
{
    return (uint32_t)((loc >> LOC_ADDR_BITS) & ((1ULL << LOC_LEN_BITS) - 1));
}
static inline bool loc_tombstone(uint64_t loc)
{
    return (loc & LOC_TOMBSTONE) != 0;
}

uint64_t blob_checksum(uint8_t type, uint32_t key_bytes, uint32_t value_bytes, uint64_t seq,
                       const void *key, const void *value);

/*
 * Live-data gauges: the blobs the index references. The checkpoint keeps
 * them; kvftl_check() and the mount's checkpoint check count them again
 * from the index entries (vlog_live_count()) and compare.
 */
struct live_gauges {
    uint64_t keys;             /* live keys */
    uint64_t user_bytes;       /* their key + value bytes */
    uint64_t nand_bytes;       /* their blobs incl. padding to the unit (not tombstones) */
    uint64_t tombstone_bytes;  /* NAND bytes held by tombstones still needed */
};

struct value_log {
    struct space *sp;             /* the data stream the blobs go to, and the valid bytes */
    struct packer pk;             /* placement in the open stripe (packing.h) */
    uint32_t pu;                  /* placement unit */
    uint32_t pu_large;            /* alignment of blobs of at least pu bytes (<= pu) */

    /* the open stripe, its write pointer and its buffered pages: space.data */

    uint32_t
        copy_bytes_per_us; /* the firmware CPU's copy rate (cfg dram_copy_bytes_per_us), 0 = free */
    /*
     * The one controller CPU (docs/kvftl.md, "Firmware time"): the
     * intervals it is busy with commands' firmware work (fw_time.c) and
     * packing memcpys (calendar.h); cpu_work_ns counts its busy time (a
     * counter).
     */
    struct calendar cpu;
    uint64_t cpu_work_ns;

    uint64_t next_seq;
    struct live_gauges live;

    /* counters */
    uint64_t memcpy_bytes;
};

/* Where a blob was placed (also returned to tests). */
struct placement {
    uint64_t addr; /* byte address on the device */
    uint32_t occupied; /* bytes occupied (rounded to the placement unit) */
    bool ahead_of_wp; /* backfill: placed ahead of the write pointer, recorded in the DLT */
};

void vlog_init(struct value_log *vl, struct space *sp, const struct kvftl_config *cfg);
void vlog_fini(struct value_log *vl);
/* vlog_forget() - drop the open stripe, buffer and DLT state (power cycle, format). */
void vlog_forget(struct value_log *vl);

static inline uint32_t vlog_occupied(const struct value_log *vl, uint32_t len)
{
    /* a small blob takes one whole unit; larger ones are rounded to pu_large */
    if (len < vl->pu) {
        return vl->pu;
    }
    if (vl->pk.page_data && len > vl->pk.page_data) {
        /* more than one page's data area: whole pages, one per data area's worth */
        return (len + vl->pk.page_data - 1) / vl->pk.page_data * vl->pk.page_bytes;
    }
    return (len + vl->pu_large - 1) & ~(vl->pu_large - 1);
}

/*
 * vlog_live_count() - count the blob at @loc (a pair or a tombstone) in @g.
 * Returns the NAND bytes it occupies.
 */
uint32_t vlog_live_count(const struct value_log *vl, struct live_gauges *g, uint64_t loc);

/*
 * vlog_account_replace() - the one live-data accounting: the blob at
 * @newloc (sequence number @seq) became live in place of the one at
 * @oldloc. @oldloc 0: a new key; @newloc 0: the blob at @oldloc is dropped
 * (GC drops a tombstone no longer needed). Updates the gauges and the
 * valid bytes of the stripes both lie in.
 */
void vlog_account_replace(struct value_log *vl, uint64_t oldloc, uint64_t newloc, uint64_t seq);

/*
 * vlog_append() - place and write one blob. @dma: the value arrived by
 * page-unit DMA (placed as such by the packing policy); @inline_bytes:
 * value bytes that arrived in commands (copied by the controller).
 * @relocation: GC moving a blob (no packing counters). *@now_ns advances by
 * the controller copy time and any wait for a buffer entry.
 * Returns 0, -1 if no free stripe was available (nothing written), or -2 on
 * power loss mid-write.
 */
int vlog_append(struct value_log *vl, const struct blob_header *h, const void *key,
                const void *value, bool dma, uint32_t inline_bytes, bool relocation,
                struct placement *out, uint64_t *now_ns);

/*
 * vlog_bytes() - pointer to @len contiguous bytes at device address @addr
 * (buffered or programmed). Accounts the NAND page reads (pages in the
 * buffer and @skip_ppn cost none) in *@now_ns. *@last_ppn returns the last
 * NAND page read (UINT64_MAX if none). The bytes are those of the backing
 * store, where a stripe is contiguous (buffered pages included): no copy.
 */
const uint8_t *vlog_bytes(struct value_log *vl, uint64_t addr, uint32_t len, uint64_t skip_ppn,
                          uint64_t *last_ppn, uint64_t *now_ns);

/* vlog_copy() - copy @len bytes at @addr into @dst, accounting reads. */
void vlog_copy(struct value_log *vl, uint64_t addr, uint32_t len, void *dst, uint64_t skip_ppn,
               uint64_t *now_ns);

/*
 * vlog_read_record() - read the whole blob at @loc from NAND, as a drive
 * reads a sector whole to check its ECC, and verify it: its header must be a
 * record of @type holding @key_bytes key bytes and exactly loc_len(@loc)
 * bytes, and its checksum must match. Accounts the NAND page reads of the
 * whole record: @skip_ppn, the page the lookup already sensed and moved
 * the header and key from, costs no tR, only the channel for the rest.
 * Returns a pointer to the verified blob (header first), or NULL when it is
 * damaged: the caller returns Unrecovered Error and moves no byte of it.
 * @record: the blob's bytes from vlog_key_matches() of this @loc in the same
 * command (NULL: read them here); the reads are accounted all the same.
 */
const uint8_t *vlog_read_record(struct value_log *vl, uint64_t loc, uint8_t type,
                                uint32_t key_bytes, uint64_t skip_ppn, const uint8_t *record,
                                uint64_t *now_ns);

/* vlog_prefetch() - start loading the first 256 bytes of the blob at @loc (a hint only). */
void vlog_prefetch(const struct value_log *vl, uint64_t loc);

/*
 * vlog_prefetch_entry() - the stage before vlog_prefetch(): start loading
 * what the backing store needs to find the blob at @loc (its page's entry,
 * nand_prefetch_entry()). A hint only.
 */
void vlog_prefetch_entry(const struct value_log *vl, uint64_t loc);

/*
 * vlog_key_matches() - does the blob at @loc hold @key? Reads its header and
 * key (the NAND read is of those bytes). With @record not NULL and a blob
 * within one NAND page, the backing store is asked for the whole blob at
 * once and *@record returns it (NULL otherwise): the caller's
 * vlog_read_record() of the same @loc then needs no second lookup in the
 * store. Simulated time and statistics are the same either way.
 */
bool vlog_key_matches(struct value_log *vl, uint64_t loc, const void *key, uint32_t key_bytes,
                      uint64_t *now_ns, const uint8_t **record);

/*
 * vlog_flush() - make everything written durable in NAND: backfill gaps are
 * padded, the partial page is padded and programmed. Returns 0 or -1 on power loss.
 */
int vlog_flush(struct value_log *vl, uint64_t *now_ns);

/* vlog_plp_dump() - after a power cut with PLP: program what the buffer holds. */
void vlog_plp_dump(struct value_log *vl, uint64_t now_ns);

/*
 * vlog_cpu_run() - @work_ns of work on the controller CPU, run at the
 * earliest time from @now_ns on when the CPU is free for all of it (a
 * command's work may run in a gap before work already planned for a later
 * time, e.g. an earlier command's completion after its NAND read): returns
 * when it ends. 0 ns of work returns @now_ns and plans nothing.
 */
uint64_t vlog_cpu_run(struct value_log *vl, uint64_t now_ns, uint64_t work_ns);

/*
 * vlog_cpu_busy_until() - the controller CPU waits from @now_ns until
 * @until_ns (a busy-wait: no other command's work runs in it, whatever was
 * placed there already stays); returns the later of the two.
 */
uint64_t vlog_cpu_busy_until(struct value_log *vl, uint64_t now_ns, uint64_t until_ns);

#endif
