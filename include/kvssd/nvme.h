/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NVMe base specification (NVM Express Base Specification 2.0) as this
 * device and its hosts use it: the controller registers of BAR0 and their
 * fields, the submission and completion queue entries, the admin opcodes,
 * Identify CNS values, log page and feature identifiers, asynchronous event
 * completions, and the status field of a completion with the generic and
 * admin command-specific status codes.
 *
 * Defined once here; the device (hw/kvssd), the host library (host/lib) and
 * the qtests' small NVMe driver (tests/qtest/kvssd-common.h) include it.
 * The KV command set is <kvssd/nvme_kv.h> (which includes this header), our
 * vendor extensions are <kvssd/ext.h>. All multi-byte fields are little
 * endian.
 *
 * Names: the specification's names behind our KVSSD_ prefix (KVSSD_REG_CC,
 * KVSSD_CC_EN, KVSSD_ADM_IDENTIFY). Not NVME_: libnvme's <libnvme.h> (which
 * host/lib includes beside this header), Linux's <linux/nvme.h> and QEMU's
 * include/block/nvme.h all define NVME_REG_CAP, NVME_CC_EN and friends.
 */
#ifndef KVSSD_NVME_H
#define KVSSD_NVME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Controller registers (BAR0, §3.1.4) ------------------------------- */
enum kvssd_reg {
    KVSSD_REG_CAP = 0x00,   /* Controller Capabilities, 64 bits */
    KVSSD_REG_VS = 0x08,    /* Version */
    KVSSD_REG_INTMS = 0x0c, /* Interrupt Mask Set */
    KVSSD_REG_INTMC = 0x10, /* Interrupt Mask Clear */
    KVSSD_REG_CC = 0x14,    /* Controller Configuration */
    KVSSD_REG_CSTS = 0x1c,  /* Controller Status */
    KVSSD_REG_NSSR = 0x20,  /* NVM Subsystem Reset */
    KVSSD_REG_AQA = 0x24,   /* Admin Queue Attributes */
    KVSSD_REG_ASQ = 0x28,   /* Admin Submission Queue Base Address, 64 bits */
    KVSSD_REG_ACQ = 0x30,   /* Admin Completion Queue Base Address, 64 bits */
    KVSSD_REG_SQ0TDBL = 0x1000, /* the first doorbell: Submission Queue 0 Tail */
};

/*
 * Doorbells: SQ y Tail at 1000h + (2y) * (4 << CAP.DSTRD), CQ y Head at
 * 1000h + (2y + 1) * (4 << CAP.DSTRD).
 */
static inline uint32_t kvssd_sq_tail_doorbell(uint32_t qid, uint32_t dstrd)
{
    return KVSSD_REG_SQ0TDBL + (2 * qid) * (4u << dstrd);
}

static inline uint32_t kvssd_cq_head_doorbell(uint32_t qid, uint32_t dstrd)
{
    return KVSSD_REG_SQ0TDBL + (2 * qid + 1) * (4u << dstrd);
}

/* CAP fields. MQES is 0-based; TO in 500 ms units; MPSMIN: 4 KiB << MPSMIN. */
#define KVSSD_CAP_MQES_SHIFT 0
#define KVSSD_CAP_MQES_MASK 0xffffull
#define KVSSD_CAP_CQR (1ull << 16)           /* Contiguous Queues Required */
#define KVSSD_CAP_TO_SHIFT 24
#define KVSSD_CAP_TO_MASK 0xffull
#define KVSSD_CAP_TO_UNIT_MS 500u
#define KVSSD_CAP_DSTRD_SHIFT 32
#define KVSSD_CAP_DSTRD_MASK 0xfull
#define KVSSD_CAP_CSS_NVM (1ull << 37)       /* CAP.CSS bit 0: the NVM command set */
#define KVSSD_CAP_CSS_IOCS (1ull << 43)      /* CAP.CSS bit 6: I/O command sets (CC.CSS = 110b) */
#define KVSSD_CAP_MPSMIN_SHIFT 48
#define KVSSD_CAP_MPSMIN_MASK 0xfull

static inline uint32_t kvssd_cap_mqes(uint64_t cap)
{
    return (uint32_t)((cap >> KVSSD_CAP_MQES_SHIFT) & KVSSD_CAP_MQES_MASK);
}

static inline uint32_t kvssd_cap_to(uint64_t cap)
{
    return (uint32_t)((cap >> KVSSD_CAP_TO_SHIFT) & KVSSD_CAP_TO_MASK);
}

/* CAP.TO: the worst-case time to CSTS.RDY after a change of CC.EN, in ms. */
static inline uint32_t kvssd_cap_to_ms(uint64_t cap)
{
    return kvssd_cap_to(cap) * KVSSD_CAP_TO_UNIT_MS;
}

static inline uint32_t kvssd_cap_dstrd(uint64_t cap)
{
    return (uint32_t)((cap >> KVSSD_CAP_DSTRD_SHIFT) & KVSSD_CAP_DSTRD_MASK);
}

static inline uint32_t kvssd_cap_mpsmin(uint64_t cap)
{
    return (uint32_t)((cap >> KVSSD_CAP_MPSMIN_SHIFT) & KVSSD_CAP_MPSMIN_MASK);
}

/* VS: major in bits 31:16, minor in 15:8, tertiary in 7:0. */
#define KVSSD_VS(major, minor, tertiary) \
    ((uint32_t)(major) << 16 | (uint32_t)(minor) << 8 | (uint32_t)(tertiary))

/* CC fields. */
#define KVSSD_CC_EN (1u << 0)
#define KVSSD_CC_CSS_SHIFT 4
#define KVSSD_CC_MPS_SHIFT 7
#define KVSSD_CC_AMS_SHIFT 11
#define KVSSD_CC_SHN_SHIFT 14
#define KVSSD_CC_IOSQES_SHIFT 16
#define KVSSD_CC_IOCQES_SHIFT 20
#define KVSSD_CC_CSS(cc) (((cc) >> KVSSD_CC_CSS_SHIFT) & 0x7)
#define KVSSD_CC_MPS(cc) (((cc) >> KVSSD_CC_MPS_SHIFT) & 0xf)
#define KVSSD_CC_AMS(cc) (((cc) >> KVSSD_CC_AMS_SHIFT) & 0x7)
#define KVSSD_CC_SHN(cc) (((cc) >> KVSSD_CC_SHN_SHIFT) & 0x3)
#define KVSSD_CC_CSS_NVM 0u  /* CC.CSS 000b: NVM command set only */
#define KVSSD_CC_CSS_ALL 6u  /* CC.CSS 110b: all I/O command sets CAP.CSS names */
#define KVSSD_CC_SHN_NORMAL 1u
#define KVSSD_CC_SHN_ABRUPT 2u

/* CSTS fields. */
#define KVSSD_CSTS_RDY (1u << 0)
#define KVSSD_CSTS_CFS (1u << 1)
#define KVSSD_CSTS_SHST_MASK (3u << 2)
#define KVSSD_CSTS_SHST_DONE (2u << 2)

/* AQA: admin SQ size (0-based) in bits 11:0, admin CQ size in 27:16. */
#define KVSSD_AQA_MASK 0x0fff0fffu
static inline uint32_t kvssd_aqa(uint32_t asq_entries, uint32_t acq_entries)
{
    return (acq_entries - 1) << 16 | (asq_entries - 1);
}

/* ---- Queue entries (§4.2, §4.6) ------------------------------------------ */
/*
 * The 64-byte submission queue entry as 16 dwords. Dword numbering is the
 * specification's: cdw[0] holds opcode (bits 7:0), FUSE (9:8), PSDT (15:14)
 * and the command identifier (31:16); cdw[1] is the NSID; CDW6-9 the data
 * pointer (PRP1, PRP2 or SGL1).
 */
#define KVSSD_SQE_BYTES 64
#define KVSSD_CQE_BYTES 16
#define KVSSD_SQES_LOG2 6    /* CC.IOSQES and Identify SQES: 64 bytes */
#define KVSSD_CQES_LOG2 4    /* CC.IOCQES and Identify CQES: 16 bytes */
_Static_assert(KVSSD_SQE_BYTES == 1 << KVSSD_SQES_LOG2, "SQE size");
_Static_assert(KVSSD_CQE_BYTES == 1 << KVSSD_CQES_LOG2, "CQE size");

/* CC of an enabled controller with our entry sizes: EN, CSS, 4 KiB pages. */
static inline uint32_t kvssd_cc_enable(uint32_t css)
{
    return (uint32_t)KVSSD_SQES_LOG2 << KVSSD_CC_IOSQES_SHIFT |
           (uint32_t)KVSSD_CQES_LOG2 << KVSSD_CC_IOCQES_SHIFT | (css & 0x7) << KVSSD_CC_CSS_SHIFT |
           KVSSD_CC_EN;
}

#define KVSSD_NSID_ALL 0xffffffffu /* every namespace (broadcast) */

struct kvssd_sqe {
    uint32_t cdw[16];
};

static inline uint8_t kvssd_sqe_opcode(const struct kvssd_sqe *sqe)
{
    return (uint8_t)(sqe->cdw[0] & 0xff);
}

static inline uint8_t kvssd_sqe_fuse(const struct kvssd_sqe *sqe)
{
    return (uint8_t)((sqe->cdw[0] >> 8) & 0x3);
}

/* PSDT: 0 = PRPs, 1 or 2 = SGLs. */
static inline uint8_t kvssd_sqe_psdt(const struct kvssd_sqe *sqe)
{
    return (uint8_t)((sqe->cdw[0] >> 14) & 0x3);
}

static inline uint16_t kvssd_sqe_cid(const struct kvssd_sqe *sqe)
{
    return (uint16_t)(sqe->cdw[0] >> 16);
}

/* CDW0 of a command: @opcode, no fused operation, PRPs, command identifier @cid. */
static inline uint32_t kvssd_cdw0(uint8_t opcode, uint16_t cid)
{
    return (uint32_t)opcode | (uint32_t)cid << 16;
}

/*
 * Completion queue entry: DW0 and DW1 command specific, DW2 SQ head (15:0)
 * and SQ identifier (31:16), DW3 command identifier (15:0), phase tag (16)
 * and the status field (31:17).
 */
static inline uint16_t kvssd_cqe_cid(uint32_t dw3)
{
    return (uint16_t)(dw3 & 0xffff);
}
static inline uint8_t kvssd_cqe_phase(uint32_t dw3)
{
    return (uint8_t)((dw3 >> 16) & 1);
}
static inline uint16_t kvssd_cqe_status(uint32_t dw3)
{
    return (uint16_t)((dw3 >> 17) & 0x7fff);
}
static inline uint16_t kvssd_cqe_sqhd(uint32_t dw2)
{
    return (uint16_t)(dw2 & 0xffff);
}
static inline uint16_t kvssd_cqe_sqid(uint32_t dw2)
{
    return (uint16_t)(dw2 >> 16);
}

static inline uint32_t kvssd_cqe_dw2(uint16_t sqhd, uint16_t sqid)
{
    return (uint32_t)sqhd | (uint32_t)sqid << 16;
}

static inline uint32_t kvssd_cqe_dw3(uint16_t cid, uint16_t status, uint8_t phase)
{
    return (uint32_t)cid | (uint32_t)((status & 0x7fffu) << 1 | (phase & 1u)) << 16;
}

/* ---- Status field (§4.6.1) ------------------------------------------------ */
/*
 * A status here is the CQE's status field without the phase bit, as in
 * QEMU's hw/nvme: SC in bits 7:0, SCT in 10:8, CRD in 12:11, More (13),
 * DNR (14). Without CRD, More and DNR it is (SCT << 8) | SC.
 */
#define KVSSD_SCT_GENERIC 0x0
#define KVSSD_SCT_CMD_SPECIFIC 0x1
#define KVSSD_SC_MORE 0x2000
#define KVSSD_SC_DNR 0x4000          /* Do Not Retry */
#define KVSSD_STATUS_CODE_MASK 0x07ffu /* SCT and SC */

static inline uint8_t kvssd_status_sct(uint16_t st)
{
    return (st >> 8) & 0x7;
}
static inline uint8_t kvssd_status_sc(uint16_t st)
{
    return st & 0xff;
}
static inline int kvssd_status_dnr(uint16_t st)
{
    return !!(st & KVSSD_SC_DNR);
}

/*
 * Generic command statuses (SCT 0), and those of the I/O command set range
 * (80h-BFh) that any command set may return. The KV command set's own (85h-
 * 89h) are in <kvssd/nvme_kv.h>, our vendor statuses in <kvssd/ext.h>.
 */
enum kvssd_status {
    KVSSD_SC_SUCCESS = 0x0000,
    KVSSD_SC_INVALID_OPCODE = 0x0001,
    KVSSD_SC_INVALID_FIELD = 0x0002,
    KVSSD_SC_CID_CONFLICT = 0x0003,
    KVSSD_SC_DATA_XFER_ERROR = 0x0004,
    KVSSD_SC_ABORTED_POWER_LOSS = 0x0005,
    KVSSD_SC_INTERNAL_ERROR = 0x0006,
    KVSSD_SC_ABORT_REQUESTED = 0x0007,
    KVSSD_SC_ABORTED_SQ_DELETION = 0x0008,
    KVSSD_SC_INVALID_NSID = 0x000b,
    KVSSD_SC_CMD_SEQ_ERROR = 0x000c,
    KVSSD_SC_INVALID_SGL_SEG_DESCR = 0x000d,
    KVSSD_SC_INVALID_NUM_SGL_DESCRS = 0x000e,
    KVSSD_SC_DATA_SGL_LEN_INVALID = 0x000f,
    KVSSD_SC_SGL_DESCR_TYPE_INVALID = 0x0011,
    KVSSD_SC_INVALID_PRP_OFFSET = 0x0013,
    KVSSD_SC_INVALID_IOCS = 0x002c,  /* Invalid I/O Command Set */
    KVSSD_SC_CAPACITY_EXCEEDED = 0x0081,
    KVSSD_SC_NS_NOT_READY = 0x0082,
};

/* Admin command-specific statuses (SCT 1). */
enum kvssd_admin_status {
    KVSSD_SC_CQ_INVALID = 0x0100,
    KVSSD_SC_INVALID_QID = 0x0101,
    KVSSD_SC_INVALID_QSIZE = 0x0102,
    KVSSD_SC_AER_LIMIT_EXCEEDED = 0x0105,
    KVSSD_SC_INVALID_IRQ_VECTOR = 0x0108,
    KVSSD_SC_INVALID_LOG_PAGE = 0x0109,
    KVSSD_SC_INVALID_FORMAT = 0x010a,
    KVSSD_SC_INVALID_QUEUE_DELETION = 0x010c,
    KVSSD_SC_FID_NOT_SAVEABLE = 0x010d,
    KVSSD_SC_FEAT_NOT_CHANGEABLE = 0x010e,
};

/* ---- Admin commands (§5, Figure 84) --------------------------------------- */
enum kvssd_admin_opcode {
    KVSSD_ADM_DELETE_SQ = 0x00,
    KVSSD_ADM_CREATE_SQ = 0x01,
    KVSSD_ADM_GET_LOG_PAGE = 0x02,
    KVSSD_ADM_DELETE_CQ = 0x04,
    KVSSD_ADM_CREATE_CQ = 0x05,
    KVSSD_ADM_IDENTIFY = 0x06,
    KVSSD_ADM_ABORT = 0x08,
    KVSSD_ADM_SET_FEATURES = 0x09,
    KVSSD_ADM_GET_FEATURES = 0x0a,
    KVSSD_ADM_ASYNC_EVENT = 0x0c,
    KVSSD_ADM_DBBUF_CONFIG = 0x7c, /* Doorbell Buffer Config (NVMe 1.3: shadow doorbells) */
    KVSSD_ADM_FORMAT_NVM = 0x80,
};

/*
 * Create I/O Completion Queue: CDW10 = QSIZE (0-based, 31:16) | QID (15:0),
 * CDW11 = IV (31:16) | IEN (1) | PC (0).
 * Create I/O Submission Queue: CDW10 as above, CDW11 = CQID (31:16) |
 * QPRIO (2:1) | PC (0). Delete I/O SQ/CQ: CDW10 = QID.
 */
#define KVSSD_QUEUE_PC (1u << 0)   /* physically contiguous */
#define KVSSD_CQ_IEN (1u << 1)     /* interrupts enabled */

static inline uint32_t kvssd_create_queue_cdw10(uint16_t qid, uint32_t entries)
{
    return (entries - 1) << 16 | qid;
}

/* Identify (06h): CNS in CDW10[7:0], CSI in CDW11[31:24]. 4096 bytes. */
#define KVSSD_IDENTIFY_BYTES 4096u
enum kvssd_cns {
    KVSSD_CNS_NS = 0x00,
    KVSSD_CNS_CTRL = 0x01,
    KVSSD_CNS_ACTIVE_NS_LIST = 0x02,
    KVSSD_CNS_NS_DESCR_LIST = 0x03,
    KVSSD_CNS_CSI_NS = 0x05,
    KVSSD_CNS_CSI_CTRL = 0x06,
    KVSSD_CNS_CSI_INDEPENDENT_NS = 0x08,
    KVSSD_CNS_IO_CMD_SET_PROFILES = 0x1c,
};

static inline uint32_t kvssd_identify_cdw11(uint8_t csi)
{
    return (uint32_t)csi << 24;
}

/*
 * Get Log Page (02h): CDW10 = NUMDL (31:16) | LSP (14:8) | LID (7:0),
 * CDW11 = NUMDU (15:0), CDW12-13 = offset in bytes, CDW14[31:24] = CSI.
 * NUMD is the 0-based number of dwords.
 */
enum kvssd_lid {
    KVSSD_LID_ERROR = 0x01,
    KVSSD_LID_SMART = 0x02,
    KVSSD_LID_FW_SLOT = 0x03,
    KVSSD_LID_EFFECTS = 0x05, /* Commands Supported and Effects */
};

/* Commands Supported and Effects log entry bits (one 32-bit entry per opcode). */
#define KVSSD_CSE_CSUPP (1u << 0) /* command supported */
#define KVSSD_CSE_LBCC (1u << 1)  /* logical block content change */

/* An opcode's data transfer direction, which is its bits 1:0. */
enum kvssd_data_dir {
    KVSSD_DATA_NONE = 0,
    KVSSD_DATA_H2D = 1, /* host to device */
    KVSSD_DATA_D2H = 2, /* device to host */
    KVSSD_DATA_BIDIR = 3,
};

static inline uint32_t kvssd_get_log_cdw10(uint8_t lid, uint32_t numd)
{
    return (uint32_t)lid | (numd & 0xffffu) << 16;
}

static inline uint32_t kvssd_get_log_cdw11(uint32_t numd)
{
    return numd >> 16;
}

/* Bytes a Get Log Page asks for: (NUMD + 1) dwords. */
static inline uint64_t kvssd_get_log_bytes(uint32_t cdw10, uint32_t cdw11)
{
    return (((uint64_t)(cdw11 & 0xffff) << 16 | cdw10 >> 16) + 1) * 4;
}

/* Get / Set Features: FID in CDW10[7:0]. */
enum kvssd_fid {
    KVSSD_FID_ARBITRATION = 0x01,
    KVSSD_FID_POWER_MGMT = 0x02,
    KVSSD_FID_TEMP_THRESHOLD = 0x04,
    KVSSD_FID_ERROR_RECOVERY = 0x05,
    KVSSD_FID_VOLATILE_WC = 0x06,
    KVSSD_FID_NUM_QUEUES = 0x07,
    KVSSD_FID_IRQ_COALESCING = 0x08,
    KVSSD_FID_IRQ_VECTOR_CONFIG = 0x09,
    KVSSD_FID_WRITE_ATOMICITY = 0x0a,
    KVSSD_FID_ASYNC_EVENT_CONFIG = 0x0b,
    KVSSD_FID_IOCS_PROFILE = 0x19,
};
#define KVSSD_FEAT_SAVE (1u << 31)   /* Set Features CDW10 SV */
/* Interrupt Vector Configuration (09h) CDW11: Coalescing Disable */
#define KVSSD_IV_CONFIG_CD (1u << 16)

/*
 * Asynchronous Event Request completion DW0: event type (2:0), event
 * information (15:8), the log page to read (23:16).
 */
static inline uint32_t kvssd_aen(uint8_t type, uint8_t info, uint8_t lid)
{
    return (uint32_t)type | (uint32_t)info << 8 | (uint32_t)lid << 16;
}
#define KVSSD_AEN_TYPE_ERROR 0x0
#define KVSSD_AEN_INFO_INVALID_DB_REG 0x00   /* write to an invalid doorbell register */
#define KVSSD_AEN_INFO_INVALID_DB_VALUE 0x01 /* invalid doorbell write value */
#define KVSSD_AEN_INVALID_DB_REG                                           \
    ((uint32_t)KVSSD_AEN_TYPE_ERROR | KVSSD_AEN_INFO_INVALID_DB_REG << 8 | \
     (uint32_t)KVSSD_LID_ERROR << 16)
#define KVSSD_AEN_INVALID_DB_VALUE                                           \
    ((uint32_t)KVSSD_AEN_TYPE_ERROR | KVSSD_AEN_INFO_INVALID_DB_VALUE << 8 | \
     (uint32_t)KVSSD_LID_ERROR << 16)

/*
 * ---- NVM command set (NVM Command Set Specification 1.0) ------------------
 * The I/O commands of a conventional block namespace (CSI 00h), which
 * `-device kvssd,command-set=nvm` speaks (hw/kvssd/nvm.c; docs/device.md,
 * "The nvm personality"), and kvbench's baseline sends to a stock
 * namespace. Logical block addresses: SLBA in CDW10 (low) and CDW11
 * (high); NLB, the number of logical blocks minus one, in CDW12[15:0].
 */
enum kvssd_nvm_opcode {
    KVSSD_NVM_OPC_FLUSH = 0x00,
    KVSSD_NVM_OPC_WRITE = 0x01,
    KVSSD_NVM_OPC_READ = 0x02,
    KVSSD_NVM_OPC_WRITE_ZEROES = 0x08,
    KVSSD_NVM_OPC_DSM = 0x09, /* Dataset Management */
};

/*
 * Read / Write / Write Zeroes CDW12: LR (31), FUA (30), PRINFO (29:26),
 * Write Zeroes' DEAC (25), STC (24), Write's DTYPE (23:20), NLB (15:0).
 * CDW13[7:0] is the DSM hint byte of Read and Write, Write's CDW13[31:16]
 * DSPEC; CDW14-15 are the protection information's reference and tags.
 */
#define KVSSD_NVM_RW_NLB_MASK 0xffffu
#define KVSSD_NVM_RW_LR (1u << 31)
#define KVSSD_NVM_RW_FUA (1u << 30)
#define KVSSD_NVM_RW_PRINFO_SHIFT 26
#define KVSSD_NVM_RW_PRINFO_MASK (0xfu << KVSSD_NVM_RW_PRINFO_SHIFT)
#define KVSSD_NVM_WZ_DEAC (1u << 25)
#define KVSSD_NVM_RW_STC (1u << 24)
#define KVSSD_NVM_RW_DTYPE_SHIFT 20
#define KVSSD_NVM_RW_DTYPE_MASK (0xfu << KVSSD_NVM_RW_DTYPE_SHIFT)
#define KVSSD_NVM_RW_DSM_MASK 0xffu /* CDW13: access frequency, latency... hints */

static inline uint64_t kvssd_nvm_slba(const struct kvssd_sqe *sqe)
{
    return (uint64_t)sqe->cdw[11] << 32 | sqe->cdw[10];
}

/* Blocks a Read, Write or Write Zeroes names: NLB + 1 (1..65536). */
static inline uint32_t kvssd_nvm_blocks(const struct kvssd_sqe *sqe)
{
    return (sqe->cdw[12] & KVSSD_NVM_RW_NLB_MASK) + 1;
}

/* SLBA and NLB (@blocks - 1) into a command's CDW10-12, the rest of CDW12 from @cdw12_flags. */
static inline void kvssd_nvm_set_range(struct kvssd_sqe *sqe, uint64_t slba, uint32_t blocks,
                                       uint32_t cdw12_flags)
{
    sqe->cdw[10] = (uint32_t)slba;
    sqe->cdw[11] = (uint32_t)(slba >> 32);
    sqe->cdw[12] = cdw12_flags | ((blocks - 1) & KVSSD_NVM_RW_NLB_MASK);
}

/*
 * Dataset Management: CDW10[7:0] NR, the number of ranges minus one (up to
 * 256 ranges); CDW11 the attributes IDR (0), IDW (1), AD (2, Deallocate).
 * The data pointer holds the ranges, 16 bytes each: context attributes
 * (dword 0), the length in logical blocks (dword 1, not 0-based), SLBA
 * (dwords 2-3).
 */
#define KVSSD_NVM_DSM_NR_MASK 0xffu
#define KVSSD_NVM_DSM_MAX_RANGES 256u
#define KVSSD_NVM_DSM_RANGE_BYTES 16u
#define KVSSD_NVM_DSM_IDR (1u << 0)
#define KVSSD_NVM_DSM_IDW (1u << 1)
#define KVSSD_NVM_DSM_AD (1u << 2)

/* Statuses of the NVM command set (SCT 0: 80h-84h; SCT 2, media errors). */
enum kvssd_nvm_status {
    KVSSD_SC_LBA_OUT_OF_RANGE = 0x0080,
    /* 81h Capacity Exceeded and 82h Namespace Not Ready: enum kvssd_status */
    KVSSD_SC_WRITE_FAULT = 0x0280,
    KVSSD_SC_UNRECOVERED_READ_ERROR = 0x0281,
};

/*
 * Identify Controller ONCS (bytes 521:520), the optional NVM commands, and
 * VWC (byte 525): bit 0 a volatile write cache is present, bits 2:1 = 11b
 * Flush takes NSID FFFFFFFFh.
 */
#define KVSSD_ID_CTRL_ONCS 520
#define KVSSD_ID_CTRL_VWC 525
#define KVSSD_ONCS_DSM (1u << 2)
#define KVSSD_ONCS_WRITE_ZEROES (1u << 3)
#define KVSSD_VWC_PRESENT (1u << 0)
#define KVSSD_VWC_FLUSH_BROADCAST (3u << 1)

/*
 * Identify Namespace (CNS 00h, CSI NVM): NSZE, NCAP, NUSE (bytes 7:0,
 * 15:8, 23:16, in logical blocks), NSFEAT (byte 24), NLBAF (byte 25:
 * formats - 1), FLBAS (byte 26: the LBA format in use, bits 3:0), DLFEAT
 * (byte 33), the namespace's atomicity (NAWUN, NAWUPF, NABSN, NABO, NABSPF:
 * bytes 34..45, 0-based blocks, valid with NSFEAT.NSABP), NVMCAP (bytes
 * 63:48, bytes), NPWG / NPWA / NPDG / NPDA / NOWS
 * (bytes 64..73, 0-based logical blocks, valid with NSFEAT.OPTPERF), NGUID
 * (bytes 119:104) and the LBA formats from byte 128, 4 bytes each, LBADS
 * (log2 of the block size) in the third byte.
 */
#define KVSSD_ID_NS_NSZE 0
#define KVSSD_ID_NS_NCAP 8
#define KVSSD_ID_NS_NUSE 16
#define KVSSD_ID_NS_NSFEAT 24
#define KVSSD_ID_NS_NLBAF 25
#define KVSSD_ID_NS_FLBAS 26
#define KVSSD_ID_NS_DLFEAT 33
#define KVSSD_ID_NS_NAWUN 34  /* atomic write unit, normal (0-based blocks) */
#define KVSSD_ID_NS_NAWUPF 36 /* atomic write unit, power fail */
#define KVSSD_ID_NS_NABSN 40  /* atomic boundary size, normal */
#define KVSSD_ID_NS_NABO 42   /* atomic boundary offset */
#define KVSSD_ID_NS_NABSPF 44 /* atomic boundary size, power fail */
#define KVSSD_ID_NS_NVMCAP 48
#define KVSSD_ID_NS_NPWG 64
#define KVSSD_ID_NS_NPWA 66
#define KVSSD_ID_NS_NPDG 68
#define KVSSD_ID_NS_NPDA 70
#define KVSSD_ID_NS_NOWS 72
#define KVSSD_ID_NS_NGUID 104
#define KVSSD_ID_NS_LBAF 128
#define KVSSD_NSFEAT_THINP (1u << 0)   /* NUSE may be less than NCAP */
#define KVSSD_NSFEAT_NSABP (1u << 1)   /* NAWUN..NABSPF are valid */
#define KVSSD_NSFEAT_OPTPERF (1u << 4) /* NPWG..NOWS are valid */
#define KVSSD_DLFEAT_READ_ZEROES 0x1u  /* bits 2:0 = 001b: deallocated blocks read as zeroes */
#define KVSSD_DLFEAT_WZ_DEAC (1u << 3) /* Write Zeroes' DEAC bit is supported */

/* LBADS of the LBA format in use in an Identify Namespace page @id. */
static inline uint8_t kvssd_id_ns_lbads(const uint8_t *id)
{
    unsigned lbaf = id[KVSSD_ID_NS_FLBAS] & 0xf;
    return id[KVSSD_ID_NS_LBAF + 4 * lbaf + 2];
}

#ifdef __cplusplus
}
#endif

#endif /* KVSSD_NVME_H */
