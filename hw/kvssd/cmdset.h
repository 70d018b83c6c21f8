/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The seam between the transport (ctrl.c, queues.c, dma.c: QEMU types) and
 * the command sets (kv.c, inline.c: the KV command set; nvm.c: the NVM
 * command set of the nvm personality; no QEMU types, built and tested
 * natively). The transport fetches an SQE, wraps its data pointer in a
 * struct kvssd_dptr, calls kvssd_kv_execute() or kvssd_nvm_execute() (by
 * the firmware's command_set), and posts a CQE with the status, DW0 and
 * DW1 it gets back, at done_ns when latency=on.
 */
#ifndef HW_KVSSD_CMDSET_H
#define HW_KVSSD_CMDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvftl/block.h"
#include "kvftl/kvftl.h"
#include "kvssd/ext.h"
#include "kvssd/nvme_kv.h"

/*
 * kvssd_status_from_ftl() - the NVMe status (SCT << 8 | SC, without DNR) the
 * KV Command Set and our extensions name for a firmware outcome. The one
 * place the firmware's words meet the wire.
 */
static inline uint16_t kvssd_status_from_ftl(enum kvftl_status s)
{
    switch (s) {
    case KVFTL_OK:
        return KVSSD_SC_SUCCESS;
    case KVFTL_INVALID_FIELD:
        return KVSSD_SC_INVALID_FIELD;
    case KVFTL_INVALID_KEY_SIZE:
        return KVSSD_SC_INVALID_KEY_SIZE;
    case KVFTL_INVALID_VALUE_SIZE:
        return KVSSD_SC_INVALID_VALUE_SIZE;
    case KVFTL_KEY_DOES_NOT_EXIST:
        return KVSSD_SC_KEY_DOES_NOT_EXIST;
    case KVFTL_KEY_EXISTS:
        return KVSSD_SC_KEY_EXISTS;
    case KVFTL_CAPACITY_EXCEEDED:
        return KVSSD_SC_CAPACITY_EXCEEDED;
    case KVFTL_UNRECOVERED_ERROR:
        return KVSSD_SC_UNRECOVERED_ERROR;
    case KVFTL_ITERATOR_LIMIT:
        return KVSSD_SC_ITERATOR_LIMIT;
    case KVFTL_INVALID_ITERATOR:
        return KVSSD_SC_INVALID_ITERATOR;
    case KVFTL_ITERATOR_END:
        return KVSSD_SC_ITERATOR_END;
    case KVFTL_INTERNAL_ERROR:
        return KVSSD_SC_INTERNAL_ERROR;
    }
    return KVSSD_SC_INTERNAL_ERROR;
}

/*
 * The command's data pointer (PRP or SGL), as the transport resolves it.
 * Each call moves @len bytes starting at byte @offset of the host buffer the
 * command describes, and returns KVSSD_SC_SUCCESS or the NVMe status of the
 * failure (DATA_XFER_ERROR for an address outside guest RAM, INVALID_PRP_OFFSET,
 * the SGL statuses...). The transport counts the bytes in dma units.
 */
struct kvssd_dptr {
    void *opaque;
    uint16_t (*from_host)(void *opaque, uint64_t offset, void *buf, uint32_t len);
    uint16_t (*to_host)(void *opaque, uint64_t offset, const void *buf, uint32_t len);
};

/* Tunables of the KV namespace that are not firmware parameters. */
struct kvssd_ns_config {
    uint32_t tag_table_entries;   /* open inline streams + staged keys, default 256; 1..4096 */
    uint64_t inline_timeout_ns; /* an idle stream expires after this (host clock), default 5 s */
    bool ednek; /* Error on Deletion of Non-Existing Key (feature 20h) */
};

struct kvssd_ns;

/*
 * kvssd_ns_new() - the KV namespace over an opened firmware instance.
 * @xfer: the transfer counters the namespace adds inline/key-stage counts to
 *        (owned by the caller, read by the statistics log page).
 * Returns NULL with a sentence in @err on a bad @cfg.
 */
struct kvssd_ns *kvssd_ns_new(struct kvftl *ftl, const struct kvssd_ns_config *cfg,
                              struct kvssd_xfer_counters *xfer, char *err, size_t err_len);
void kvssd_ns_free(struct kvssd_ns *ns);
struct kvftl *kvssd_ns_ftl(struct kvssd_ns *ns);
void kvssd_ns_set_ednek(struct kvssd_ns *ns, bool on);
bool kvssd_ns_get_ednek(const struct kvssd_ns *ns);

/* One I/O command in, one completion out. */
struct kvssd_req {
    const struct kvssd_sqe *sqe;
    struct kvssd_dptr dptr;
    uint64_t now_ns; /* arrival, host clock (QEMU_CLOCK_VIRTUAL or a test clock) */
    /* results */
    uint16_t status; /* (SCT << 8) | SC */
    uint32_t dw0, dw1;
    uint64_t done_ns; /* simulated completion time */
    /*
     * Parking (docs/device.md, "Work per main-loop slice"). A transport that
     * can run a command again later sets may_park: List and Iter Read then
     * return from the first call once validated, with in_progress set and
     * their state in cont, and do a bounded part of their walk per later
     * call (KVSSD_SLICE_*), with in_progress set until they are done. The
     * transport keeps the SQE and cont, and calls kvssd_kv_execute() again
     * with both (in a later main-loop slice) until in_progress is clear, or
     * kvssd_kv_cancel() to drop the command. An NVM Deallocate parks the
     * same way (kvssd_nvm_execute(), kvssd_nvm_cancel()). Without may_park
     * every command runs to completion in one call.
     */
    bool may_park; /* in */
    void *cont; /* in: NULL for a new command; out: the parked state */
    bool in_progress; /* out: not complete, no completion to post yet */
};

/*
 * Work per call of a parked command. A List or Iter Read walks whole index
 * pages, as many as hold KVSSD_SLICE_INDEX_ENTRIES slots (at least one
 * page): each slot is scanned, each live entry costs a blob-header read.
 * A List then writes its keys out KVSSD_SLICE_LIST_KEYS per call.
 */
#define KVSSD_SLICE_INDEX_ENTRIES 2048u
#define KVSSD_SLICE_LIST_KEYS 512u

/*
 * kvssd_kv_execute() - decode, validate, run one KV or extension I/O command.
 * Never aborts on guest input: every malformed command gets its status.
 */
void kvssd_kv_execute(struct kvssd_ns *ns, struct kvssd_req *req);

/*
 * kvssd_kv_cancel() - drop a parked command (SQ deleted, controller reset):
 * its firmware iterator and memory are released; no completion. @ns may be
 * NULL when the namespace is already gone (only memory is freed then).
 */
void kvssd_kv_cancel(struct kvssd_ns *ns, void *cont);

/* kvssd_ns_expire() - free inline streams and staged keys idle since before now - timeout. */
void kvssd_ns_expire(struct kvssd_ns *ns, uint64_t now_ns);

/* kvssd_ns_reset() - controller reset: drop every open stream, staged key and iterator. */
void kvssd_ns_reset(struct kvssd_ns *ns);

/* One row of <kvssd/kv_opcodes.def>, as data. */
struct kvssd_kv_opcode_info {
    uint8_t opcode;
    const char *name;       /* "Store" */
    enum kvssd_data_dir dir;
    uint32_t effects;       /* Commands Supported and Effects entry (KVSSD_CSE_*) */
    const char *trace;      /* trace event: "kvssd_" + this */
    const char *counter;    /* struct kvssd_xfer_counters field counted besides "commands" */
};

/*
 * kvssd_kv_opcode_info() - @opcode's row of the KV command set and our
 * extensions, or NULL when there is no such command (Invalid Command Opcode).
 */
const struct kvssd_kv_opcode_info *kvssd_kv_opcode_info(uint8_t opcode);

/* kvssd_kv_opcode_supported() - whether @opcode has a row (Commands Supported and Effects). */
bool kvssd_kv_opcode_supported(uint8_t opcode);

/* kvssd_kv_opcodes() - every row, in the table's order; *@count of them. */
const struct kvssd_kv_opcode_info *kvssd_kv_opcodes(size_t *count);

/* ---- The NVM command set (nvm.c): the nvm personality's namespace -------- */

/*
 * Read and Write move data between the host buffer and the firmware through
 * one bounce buffer per namespace of this many bytes, allocated once: a
 * transfer of up to MDTS (at most 16 MiB, the mdts property's maximum) is
 * moved in pieces of at most this size, each ending on a 4 KiB mapping-unit
 * boundary unless it is the last. Host memory of a namespace: this + a few
 * hundred bytes, whatever NLB (16 bits: up to 65536 blocks, 256 MiB of
 * 4 KiB blocks) or a Dataset Management range says.
 */
#define KVSSD_NVM_CHUNK_BYTES (2u * 1024 * 1024)

/* Tunables of the NVM namespace that are not firmware parameters. */
struct kvssd_nvm_config {
    /*
     * Maximum Data Transfer Size in bytes (Identify MDTS): a Read or Write
     * moving more gets Invalid Field in Command. 0 = no limit but the
     * firmware's KVFTL_BLOCK_MAX_XFER_BYTES.
     */
    uint32_t mdts_bytes;
};

struct kvssd_nvm_ns;

/*
 * kvssd_nvm_ns_new() - the NVM namespace (NSID 1, CSI 00h) over a firmware
 * instance opened with command_set = nvm. @xfer as for kvssd_ns_new().
 * Returns NULL with a sentence in @err on a kv firmware or a bad @cfg.
 */
struct kvssd_nvm_ns *kvssd_nvm_ns_new(struct kvftl *ftl, const struct kvssd_nvm_config *cfg,
                                      struct kvssd_xfer_counters *xfer, char *err, size_t err_len);
void kvssd_nvm_ns_free(struct kvssd_nvm_ns *ns);

/*
 * Work per call of a parked Deallocate: the 4 KiB units (whole or in part)
 * its ranges touch, as many as the largest Write Zeroes (NLB 65536 of
 * 4 KiB blocks) updates in one call.
 */
#define KVSSD_SLICE_DEALLOC_UNITS 65536u

/*
 * kvssd_nvm_execute() - decode, validate and run one NVM I/O command: Flush,
 * Write, Read, Write Zeroes, Dataset Management (docs/device.md, "The nvm
 * personality", lists every status). The NSID is checked here (Invalid
 * Namespace or Format for anything but 1, and FFFFFFFFh for Flush). With
 * @req->may_park a Deallocate whose ranges touch more than
 * KVSSD_SLICE_DEALLOC_UNITS units parks as List does (in_progress, its
 * state in cont; every range validated before any is unmapped) and
 * unmaps that many per later call; every other command, and every
 * command without may_park, completes in one call.
 */
void kvssd_nvm_execute(struct kvssd_nvm_ns *ns, struct kvssd_req *req);

/*
 * kvssd_nvm_cancel() - drop a parked Deallocate (SQ deleted, controller
 * reset): its memory is freed, no completion; the units it unmapped stay
 * unmapped. @ns may be NULL.
 */
void kvssd_nvm_cancel(struct kvssd_nvm_ns *ns, void *cont);

/* The command-supported bitmap for the Commands Supported and Effects log (NVM CSI). */
bool kvssd_nvm_opcode_supported(uint8_t opcode);

/*
 * kvssd_nvm_data_len() - the bytes @sqe's data pointer describes on a
 * namespace of @lba_bytes blocks: (NLB + 1) x @lba_bytes for Read and
 * Write, (NR + 1) x 16 for Dataset Management, 0 otherwise. The transport
 * sizes the data pointer with it.
 */
uint32_t kvssd_nvm_data_len(const struct kvssd_sqe *sqe, uint32_t lba_bytes);

/*
 * Where the wire and the firmware must agree. The firmware keeps its own
 * constants (it does not include the wire headers); the command set sees
 * both, so the ties are stated here: the device advertises the firmware's
 * limits (Identify KVMVL, the long-key maximum), and Store passes the
 * command's options to kvftl_store().
 */
_Static_assert(KVFTL_KEY_MAX_BYTES == KVSSD_LONG_KEY_MAX,
               "the longest key the firmware stores is the one the device advertises");
_Static_assert(KVFTL_VALUE_MAX_BYTES == KVSSD_VALUE_MAX_BYTES,
               "the largest value the firmware stores is the one the device advertises");
_Static_assert(KVFTL_VALUE_MAX_BYTES <= KVSSD_INLINE_VSIZE_MASK,
               "an inline head's value size field holds the largest value");
_Static_assert(KVFTL_STORE_ONLY_IF_EXISTS == KVSSD_STORE_OPT_ONLY_IF_EXISTS &&
                   KVFTL_STORE_ONLY_IF_ABSENT == KVSSD_STORE_OPT_ONLY_IF_ABSENT,
               "Store Options bits are the firmware's store options");

#endif /* HW_KVSSD_CMDSET_H */
