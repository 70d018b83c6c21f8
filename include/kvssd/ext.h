/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Vendor extensions of the emulated KV-SSD, on top of <kvssd/nvme_kv.h>:
 *
 *  1. long keys (17-255 bytes) staged by a preceding Key Stage command;
 *  2. prefix iterators (open / read / close);
 *  3. inline (piggybacked) Store, BandSlim §3.2: a head command and transfer
 *     commands, in two layouts, plus hybrid (whole pages by PRP, tail inline);
 *  4. a statistics log page and a feature that resets the counters;
 *  5. a configuration log page; 6. KV Identify Namespace as a log page.
 *
 * Every number that crosses the PCIe boundary is defined here once; the
 * device and the host library include this header. docs/protocol.md
 * describes each command in prose.
 *
 * Vendor I/O opcodes are 80h-FFh; bit 0 set means host-to-device data,
 * which is how Linux passthrough picks the DMA direction.
 */
#ifndef KVSSD_EXT_H
#define KVSSD_EXT_H

#include <stdint.h>

#include "nvme_kv.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The emulated controller's PCI IDs (Samsung's vendor ID; the device ID is
 * our own, not a real Samsung product). The host library's pci transport
 * drives only functions with these IDs unless told otherwise.
 */
#define KVSSD_PCI_VENDOR_ID 0x144d
#define KVSSD_PCI_DEVICE_ID 0xa8ff

/* Vendor I/O opcodes: the VENDOR rows of <kvssd/kv_opcodes.def>. */
#define KVSSD_KV_OPCODE_STD(sym, opc)
#define KVSSD_KV_OPCODE_VENDOR(sym, opc) KVSSD_OPC_##sym = (opc),
enum kvssd_ext_opcode {
#define KVSSD_KV_OPCODE(sym, opc, set, name, dir, effects, handler, trace, counter, encoder, verb) \
    KVSSD_KV_OPCODE_##set(sym, opc)
#include "kv_opcodes.def"
};
#undef KVSSD_KV_OPCODE_STD
#undef KVSSD_KV_OPCODE_VENDOR

/* ---- 1. Long keys ---------------------------------------------------- */
/*
 * A KV command (Store, Retrieve, Delete, Exist, List, inline head) whose
 * key length (CDW11[7:0], or the head's key length field) is 17..255 does
 * not carry the key: its CDW2[11:0] names a staged-key tag instead, and the
 * device takes (and frees) the key staged under that tag.
 *
 * Key Stage (91h): data pointer -> the key bytes;
 *   CDW10[7:0]  = key length (17..255); data length must be >= key length
 *   CDW11[11:0] = staged-key tag chosen by the host
 * Staged keys live in the same bounded table as inline streams.
 */
#define KVSSD_TAG_BITS 12
#define KVSSD_TAG_MASK ((1u << KVSSD_TAG_BITS) - 1)
#define KVSSD_MAX_TAGS (1u << KVSSD_TAG_BITS)

/*
 * A standard command whose key length is 17..255 and whose tag holds no
 * staged key (a standard host's key that does not fit the SQE) gets
 * KVSSD_SC_INVALID_KEY_SIZE, as the KV Command Set names it.
 *
 * Discovery. The KV format of Identify Namespace (CNS 05h, CSI 01h) reports
 * KVMKL = 16 (KVSSD_KEY_INLINE_MAX): the longest key a standard command can
 * carry, which is what standard hosts size their keys by. The long-key
 * maximum is advertised in that page's vendor-specific area (bytes
 * 3840-4095), which standard hosts ignore: struct kvssd_id_ns_kv_vs.
 */
#define KVSSD_LONG_KEY_MAX 255u
/*
 * The largest value the device stores: Identify KVMVL (struct
 * kvssd_kv_format) advertises it, and the inline head's value size field
 * (KVSSD_INLINE_VSIZE_MASK) holds it.
 */
#define KVSSD_VALUE_MAX_BYTES (2u * 1024 * 1024)
#define KVSSD_ID_VS_SIGNATURE "KVSSDEXT"
#define KVSSD_ID_VS_SIGNATURE_BYTES 8
#define KVSSD_ID_VS_VERSION 1

struct kvssd_id_ns_kv_vs {
    uint8_t signature[KVSSD_ID_VS_SIGNATURE_BYTES]; /* KVSSD_ID_VS_SIGNATURE, no NUL */
    uint16_t version;             /* KVSSD_ID_VS_VERSION */
    uint16_t long_key_max_bytes;  /* largest key through Key Stage (91h): 255 */
    uint8_t rsvd12[244];
} __attribute__((packed));

_Static_assert(sizeof(struct kvssd_id_ns_kv_vs) == 256, "vendor area of the KV identify page");

/*
 * The long-key maximum an Identify Namespace (KV) page advertises, or 0 when
 * its vendor area is not ours (a standard KV device: keys of at most KVMKL).
 * A value outside 17..255 is not trusted (0).
 */
static inline uint32_t kvssd_id_ns_kv_long_key_max(const struct kvssd_id_ns_kv *id)
{
    const uint8_t *vs = id->vs;
    uint32_t max = (uint32_t)vs[10] | (uint32_t)vs[11] << 8;

    if (memcmp(vs, KVSSD_ID_VS_SIGNATURE, KVSSD_ID_VS_SIGNATURE_BYTES) != 0 ||
        max <= KVSSD_KEY_INLINE_MAX || max > KVSSD_LONG_KEY_MAX) {
        return 0;
    }
    return max;
}

/* ---- 2. Iterators ---------------------------------------------------- */
/*
 * Iter Open (90h): CDW10 = prefix (first 4 key bytes, big-endian number:
 *   key byte 0 in bits 31:24), CDW11 = bit mask, CDW12[0] = 1 for
 *   key+value entries, 0 for keys only. CQE DW0 = handle (0..15).
 * Iter Read (92h): CDW10 = host buffer size, CDW11[7:0] = handle.
 *   Data: struct kvssd_iter_header, then entries. A keys-only entry is a
 *   2-byte key length and the key; a key+value entry adds a 4-byte value
 *   length and the value; each entry is zero padded to a 4-byte boundary.
 *   CQE DW0 = entries returned. Status ITERATOR_END when none is left.
 * Iter Close (94h): CDW10[7:0] = handle.
 */
#define KVSSD_ITER_FLAG_KEY_VALUE (1u << 0)
#define KVSSD_ITER_MAX_HANDLES 16

struct kvssd_iter_header {
    uint32_t entries;
    uint32_t bytes;    /* bytes of entries after this header */
} __attribute__((packed));

static inline uint32_t kvssd_iter_entry_bytes(uint32_t key_len, int with_value, uint32_t value_len)
{
    uint32_t n = 2 + key_len + (with_value ? 4 + value_len : 0);
    return (n + 3) & ~3u;
}

/* ---- 3. Inline (piggybacked) Store ------------------------------------ */
/*
 * A stream is one Store whose value travels inside commands. The host picks
 * a tag (0..4095 stock, 0..255 full layout) unused by its open streams. The
 * head declares key length, value size and options; transfer commands carry
 * the tag, a sequence number (1, 2, ...) and the next bytes. Fragments may
 * arrive on different queues in any order; the device reassembles by tag and
 * sequence, and the command that delivers the last byte completes with the
 * Store's status (CQE DW1 = KVSSD_INLINE_DW1_STORED). Every other fragment
 * completes with success and DW0 = value bytes received so far.
 *
 * Stock layout (only CDW2-3 and CDW10-15: what Linux passthrough lets an
 * application fill):
 *   Head (81h):
 *     CDW10[21:0]  value size (0..2 MiB)
 *     CDW10[23:22] store options (KVSSD_STORE_OPT_* << 22)
 *     CDW10[31:24] key length
 *     CDW11[11:0]  tag; CDW11[16] hybrid; CDW11[17] full tail (the
 *       stream's transfers are full-layout 8Dh, 56 bytes each; tag 0..255);
 *       other bits reserved (0)
 *     payload area, in order: CDW2, CDW3, CDW12, CDW13, CDW14, CDW15
 *       (24 bytes): the key first when key length <= 16 (else the key is
 *       staged and CDW2[11:0] is not payload but the staged-key tag, and the
 *       payload area starts at CDW3), then value bytes.
 *     Hybrid: the data pointer carries the first (value size & ~4095) bytes
 *       of the value; the inline bytes are the tail.
 *   Transfer (85h):
 *     CDW10[11:0]  tag; CDW10[31:12] sequence number (1..)
 *     payload area: CDW2, CDW3, CDW11, CDW12, CDW13, CDW14, CDW15 (28 bytes)
 *
 * Full layout (BandSlim Fig. 6, for drivers that write SQEs themselves):
 *   Head (89h): key in CDW2-3/CDW14-15 as in Store (keys <= 16 bytes only);
 *     CDW10 as the stock head; CDW11[7:0] tag;
 *     payload: CDW11[31:8] (3 bytes), CDW4..CDW9 (24), CDW12, CDW13 (8) = 35 bytes
 *   Transfer (8Dh): CDW1 = tag[11:0] | sequence[31:12] (there is no NSID);
 *     payload: CDW2..CDW15 = 56 bytes
 */
#define KVSSD_INLINE_VSIZE_MASK 0x003fffffu
#define KVSSD_INLINE_OPT_SHIFT 22
#define KVSSD_INLINE_KLEN_SHIFT 24
#define KVSSD_INLINE_HYBRID (1u << 16)
/*
 * Stock head (81h) only: the stream's transfers use the full layout (8Dh,
 * 56 bytes each) instead of 85h. For hosts that write whole SQEs: the head
 * keeps its data pointer (hybrid) and its staged-key form, the tail costs
 * half the commands. The tag must be 0..255.
 */
#define KVSSD_INLINE_FULL_TAIL (1u << 17)
#define KVSSD_INLINE_SEQ_SHIFT 12
#define KVSSD_INLINE_SEQ_MAX 0xfffffu

#define KVSSD_INLINE_HEAD_PAYLOAD 24       /* stock head payload area */
#define KVSSD_INLINE_XFER_PAYLOAD 28       /* stock transfer payload */
#define KVSSD_INLINE_HEAD_FULL_PAYLOAD 35  /* full layout head */
#define KVSSD_INLINE_XFER_FULL_PAYLOAD 56  /* full layout transfer */
#define KVSSD_INLINE_FULL_MAX_TAG 0xffu

#define KVSSD_HYBRID_PAGE_BYTES 4096

/* CQE DW1 of the command that completed the stream's Store. */
#define KVSSD_INLINE_DW1_STORED 0x1u

static inline uint32_t kvssd_inline_head_cdw10(uint32_t value_size, uint32_t options,
                                               uint32_t key_len)
{
    return (value_size & KVSSD_INLINE_VSIZE_MASK) | (options & 0x3u) << KVSSD_INLINE_OPT_SHIFT |
           (key_len & 0xffu) << KVSSD_INLINE_KLEN_SHIFT;
}

static inline uint32_t kvssd_inline_tag_seq(uint32_t tag, uint32_t seq)
{
    return (tag & KVSSD_TAG_MASK) | (seq & KVSSD_INLINE_SEQ_MAX) << KVSSD_INLINE_SEQ_SHIFT;
}

/* ---- Extension status codes (SCT 1, vendor-specific range C0h-FFh) ---- */
enum kvssd_ext_status {
    KVSSD_SC_INLINE_UNKNOWN_TAG = 0x01c0,  /* transfer for a tag with no open stream */
    KVSSD_SC_INLINE_BAD_SEQUENCE = 0x01c1, /* duplicate or out-of-range sequence number */
    KVSSD_SC_INLINE_OVERFLOW = 0x01c2,     /* more bytes than the head declared */
    KVSSD_SC_INLINE_TAG_IN_USE = 0x01c3,   /* head for a tag whose stream is open */
    KVSSD_SC_INLINE_EXPIRED = 0x01c4,      /* stream abandoned: expired, memory freed */
    KVSSD_SC_TAG_TABLE_FULL = 0x01c5,      /* no free stream/staged-key slot */
    KVSSD_SC_STAGED_KEY_UNKNOWN = 0x01c6,  /* long key refers to a tag with no staged key */
    KVSSD_SC_ITERATOR_LIMIT = 0x01c7,      /* 16 iterators already open */
    KVSSD_SC_INVALID_ITERATOR = 0x01c8,    /* handle not open */
    KVSSD_SC_ITERATOR_END = 0x01c9,        /* nothing left to read */
};

/* ---- 4. Statistics and the FTL check ------------------------------------ */
/* Get Log Page, vendor LID C0h: struct kvssd_stats_log (4096 bytes). */
#define KVSSD_LID_STATS 0xc0
/* Set Features, vendor FID C0h: any value resets every counter of the log. */
#define KVSSD_FID_RESET_STATS 0xc0

#define KVSSD_STATS_LOG_VERSION 3

/*
 * Vendor admin command C4h (no data, NSID 0): run the firmware's consistency
 * check (kvftl_check()); success, or Internal Error when it finds a fault.
 * A debug and test path.
 */
#define KVSSD_ADM_FTL_CHECK 0xc4

/*
 * Transfer counters as a page-granular DMA engine moves data: data DMA in
 * units of the device's dma-unit property. "h2d" = host-to-device.
 */
struct kvssd_xfer_counters {
    uint64_t sqe_fetch_bytes;     /* 64 per SQE fetched (h2d) */
    uint64_t cqe_post_bytes;      /* 16 per CQE posted (d2h) */
    uint64_t doorbell_bytes;      /* doorbell MMIO writes (h2d) */
    uint64_t mmio_other_bytes;    /* other register accesses */
    uint64_t prp_list_bytes;      /* PRP list / SGL segment fetches (h2d) */
    uint64_t data_h2d_bytes;      /* data DMA host-to-device, in dma units */
    uint64_t data_d2h_bytes;      /* data DMA device-to-host, in dma units */
    uint64_t inline_bytes;        /* value bytes carried inside commands */
    uint64_t commands;            /* I/O commands completed */
    uint64_t inline_commands;     /* inline head + transfer commands */
    uint64_t key_stage_commands;  /* extra commands for long keys */
};

/* The statistics log page: fields are little endian, 8-byte counters. */
struct kvssd_stats_log {
    uint32_t version;             /* KVSSD_STATS_LOG_VERSION */
    uint32_t dma_unit_bytes;
    struct kvssd_xfer_counters xfer;
    /* firmware counters (kvftl_stats) */
    uint64_t host_bytes_in_inline, host_bytes_in_dma, host_bytes_out, user_bytes_written;
    uint64_t stores, retrieves, deletes, exists, iterates;
    uint64_t nand_pages_read, nand_pages_programmed, nand_data_pages_programmed, nand_blocks_erased;
    uint64_t memcpy_bytes, padding_bytes, dlt_backfills;
    uint64_t live_keys, live_user_bytes, live_nand_bytes;
    uint64_t index_cache_hits, index_cache_misses, index_pages_evicted_dirty, bloom_negatives,
        index_host_bytes;
    uint64_t gc_runs, gc_relocated_bytes, gc_foreground_stalls, gc_stall_ns;
    uint64_t free_stripes, total_stripes;
    uint64_t waf_milli;           /* write amplification x 1000 */
    uint64_t space_amp_milli;     /* space amplification x 1000 */
    uint64_t sim_now_ns;
    /* per op (store, retrieve, delete, exist, iterate): count, p50, p99, p99.9, max ns */
    uint64_t latency[5][5];
    /* version 2: the capacity check's terms (kvftl_stats) */
    uint64_t capacity_bytes, index_nand_bytes;
    /* per op as in latency[]: total simulated latency, ns (the mean is this / count) */
    uint64_t latency_sum_ns[5];
    /*
     * version 3: firmware time (kvftl_stats, docs/kvftl.md "Firmware time"):
     * the controller CPU's busy ns, all of it, and the part spent on each
     * op's commands (order as in latency[])
     */
    uint64_t fw_cpu_ns;
    uint64_t fw_op_ns[5];
    uint8_t rsvd[4096 - 8 - 11 * 8 - 33 * 8 - 25 * 8 - 2 * 8 - 5 * 8 - 6 * 8];
} __attribute__((packed));

_Static_assert(sizeof(struct kvssd_stats_log) == 4096, "stats log is 4096 bytes");

/* ---- 5. Device configuration -------------------------------------------- */
/*
 * Get Log Page, vendor LID C1h: struct kvssd_config_log (512 bytes), what
 * the device is and how it was set up (its properties after the preset),
 * so that a report made in a guest names the device it measured. Offsets
 * and lengths are checked as for every log page. Names are NUL padded;
 * numbers little endian.
 */
#define KVSSD_LID_CONFIG 0xc1
#define KVSSD_CONFIG_LOG_VERSION 1
#define KVSSD_CONFIG_NAME_BYTES 16

struct kvssd_config_log {
    uint32_t version;                          /* 0: KVSSD_CONFIG_LOG_VERSION */
    uint32_t rsvd4;
    char firmware[8];                          /* 8: Identify Controller FR */
    char preset[KVSSD_CONFIG_NAME_BYTES];      /* 16: "default", "pm983", "cosmos" */
    char command_set[KVSSD_CONFIG_NAME_BYTES]; /* 32: "kv" or "nvm" */
    char packing[KVSSD_CONFIG_NAME_BYTES];     /* 48: "block" .. "backfill" */
    char index[KVSSD_CONFIG_NAME_BYTES];       /* 64: index design: hash, pm983, lsm */
    char gc_policy[KVSSD_CONFIG_NAME_BYTES];   /* 80: "greedy", "cost-benefit" */
    /* 96: geometry */
    uint32_t channels, dies_per_channel, blocks_per_die, pages_per_block;
    uint32_t page_size_bytes, placement_unit_bytes, index_page_bytes, overprovision_percent;
    uint64_t capacity_bytes;                   /* 128: user capacity (NSZE in bytes) */
    uint64_t index_dram_bytes;                 /* 136 */
    /* 144: timing */
    uint64_t read_latency_ns, program_latency_ns, erase_latency_ns;
    uint64_t channel_bytes_per_us, dram_copy_bytes_per_us;
    uint64_t fw_fetch_decode_ns, fw_index_probe_ns, fw_inline_fragment_ns, fw_dma_setup_ns,
        fw_completion_ns;
    uint8_t latency;                           /* 224: completions held to simulated time */
    uint8_t plp;                               /* 225: power-loss protected page buffer */
    uint8_t bloom;                             /* 226 */
    uint8_t rsvd227[512 - 227];
} __attribute__((packed));

_Static_assert(sizeof(struct kvssd_config_log) == 512, "config log is 512 bytes");

/* ---- 6. KV Identify Namespace as a log page ----------------------------- */
/*
 * Get Log Page, vendor LID C2h, NSID 1: the 4096 bytes of Identify
 * Namespace CNS 05h, CSI 01h (struct kvssd_id_ns_kv), byte for byte. Linux's
 * nvmet passthru target answers that Identify with Invalid Opcode for every
 * CSI but ZNS and passes every Get Log Page; libkvssd reads this page when
 * the Identify is refused. Offsets and lengths are checked as for every log
 * page; another NSID is Invalid Namespace, the nvm personality has no such
 * log (Invalid Log Page).
 */
#define KVSSD_LID_ID_NS_KV 0xc2

#ifdef __cplusplus
}
#endif

#endif /* KVSSD_EXT_H */
