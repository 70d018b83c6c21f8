/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The standard NVMe Key Value Command Set (NVM Express KV Command Set
 * Specification 1.0) as this device speaks it: opcodes, command dword
 * layouts, status codes and the KV Identify Namespace structure.
 *
 * Defined once here; the device (hw/kvssd) and the host library
 * (host/lib) both include it. All multi-byte fields are little endian.
 * The base specification (registers, queue entries, admin commands, the
 * status field and generic statuses) is <kvssd/nvme.h>, included here; our
 * vendor extensions live in <kvssd/ext.h>.
 */
#ifndef KVSSD_NVME_KV_H
#define KVSSD_NVME_KV_H

#include <stdint.h>
#include <string.h>

#include "nvme.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Command Set Identifier of the KV command set (CC.CSS / CNS 03h / CNS 05h). */
#define KVSSD_CSI_NVM 0x00
#define KVSSD_CSI_KV 0x01

/*
 * I/O opcodes of the KV command set: the STD rows of <kvssd/kv_opcodes.def>
 * (Flush 00h, Store 01h, Retrieve 02h, List 06h, Delete 10h, Exist 14h).
 * Bits 1:0 are the data direction (enum kvssd_data_dir).
 */
#define KVSSD_KV_OPCODE_STD(sym, opc) KVSSD_OPC_##sym = (opc),
#define KVSSD_KV_OPCODE_VENDOR(sym, opc)
enum kvssd_kv_opcode {
#define KVSSD_KV_OPCODE(sym, opc, set, name, dir, effects, handler, trace, counter, encoder, verb) \
    KVSSD_KV_OPCODE_##set(sym, opc)
#include "kv_opcodes.def"
};
#undef KVSSD_KV_OPCODE_STD
#undef KVSSD_KV_OPCODE_VENDOR

/* Each row's direction is its opcode's bits 1:0, and STD rows are 00h-7Fh. */
#define KVSSD_KV_OPCODE_IS_VENDOR_STD 0
#define KVSSD_KV_OPCODE_IS_VENDOR_VENDOR 1
#define KVSSD_KV_OPCODE(sym, opc, set, name, dir, effects, handler, trace, counter, encoder, verb) \
    _Static_assert(((opc) & 3) == KVSSD_DATA_##dir, name ": the direction is opcode bits 1:0");    \
    _Static_assert(((opc) >= 0x80) == KVSSD_KV_OPCODE_IS_VENDOR_##set,                             \
                   name ": STD opcodes are 00h-7Fh, VENDOR 80h-FFh");
#include "kv_opcodes.def"
#undef KVSSD_KV_OPCODE_IS_VENDOR_STD
#undef KVSSD_KV_OPCODE_IS_VENDOR_VENDOR

/*
 * Key field: up to 16 bytes, bytes 0-7 in CDW2-CDW3 and bytes 8-15 in
 * CDW14-CDW15, each dword little endian (key byte 0 is the low byte of
 * CDW2). Bytes past the key length are zero.
 */
#define KVSSD_KEY_INLINE_MAX 16

static inline void kvssd_sqe_set_key(struct kvssd_sqe *sqe, const void *key, uint32_t len)
{
    uint8_t b[16] = {0};
    memcpy(b, key, len > 16 ? 16 : len);
    for (int i = 0; i < 2; i++) {
        sqe->cdw[2 + i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
                          (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
        sqe->cdw[14 + i] = (uint32_t)b[8 + 4 * i] | (uint32_t)b[9 + 4 * i] << 8 |
                           (uint32_t)b[10 + 4 * i] << 16 | (uint32_t)b[11 + 4 * i] << 24;
    }
}

static inline void kvssd_sqe_get_key(const struct kvssd_sqe *sqe, uint8_t key[16])
{
    for (int i = 0; i < 4; i++) {
        uint32_t d = sqe->cdw[i < 2 ? 2 + i : 12 + i];
        key[4 * i] = d & 0xff;
        key[4 * i + 1] = (d >> 8) & 0xff;
        key[4 * i + 2] = (d >> 16) & 0xff;
        key[4 * i + 3] = (d >> 24) & 0xff;
    }
}

/*
 * Store (01h)     CDW10 = value size in bytes
 *                 CDW11 bits 7:0 = key length, bits 15:8 = Store Options
 * Retrieve (02h)  CDW10 = host buffer size in bytes; CDW11 bits 7:0 = key length
 *                 CQE DW0 = the value's full size
 * Delete (10h), Exist (14h)   CDW11 bits 7:0 = key length
 * List (06h)      CDW10 = host buffer size; CDW11 bits 7:0 = start key length
 *                 (0 = from the beginning); CQE DW0 = number of keys returned
 */
#define KVSSD_CDW11_KEY_LEN_MASK 0xffu
#define KVSSD_CDW11_OPTIONS_SHIFT 8
#define KVSSD_CDW11_OPTIONS_MASK 0xffu

/* Store Options (CDW11 bits 15:8). */
#define KVSSD_STORE_OPT_ONLY_IF_EXISTS (1u << 0) /* "must exist": else 87h */
#define KVSSD_STORE_OPT_ONLY_IF_ABSENT (1u << 1) /* "must not exist": else 89h */
#define KVSSD_STORE_OPT_VALID_MASK 0x03u

static inline uint32_t kvssd_cdw11(uint32_t key_len, uint32_t options)
{
    return (key_len & KVSSD_CDW11_KEY_LEN_MASK) | (options & KVSSD_CDW11_OPTIONS_MASK)
                                                      << KVSSD_CDW11_OPTIONS_SHIFT;
}

/*
 * List data returned to the host: a 4-byte number of returned keys, then
 * per key a 2-byte key length, the key, and zero padding to a 4-byte
 * boundary.
 */
#define KVSSD_LIST_HEADER_BYTES 4
static inline uint32_t kvssd_list_entry_bytes(uint32_t key_len)
{
    return (2 + key_len + 3) & ~3u;
}

/*
 * The KV Command Set's own statuses (SCT 0). They continue the generic
 * status table's I/O-command-set range (80h-BFh) after the NVM set's 80h-84h,
 * as SPDK's spdk_nvme_generic_command_status_code lists them; a standard host
 * decodes them only with SCT 0. The generic statuses and the status field's
 * accessors (SCT, SC, DNR) are in <kvssd/nvme.h>.
 */
enum kvssd_kv_status {
    KVSSD_SC_INVALID_VALUE_SIZE = 0x0085,
    KVSSD_SC_INVALID_KEY_SIZE = 0x0086,
    KVSSD_SC_KEY_DOES_NOT_EXIST = 0x0087,
    KVSSD_SC_UNRECOVERED_ERROR = 0x0088,
    KVSSD_SC_KEY_EXISTS = 0x0089,
};

/*
 * KV format descriptor (16 bytes). KVMKL is the longest key a standard
 * command carries, KVSSD_KEY_INLINE_MAX (16); longer keys are our extension
 * (<kvssd/ext.h>, long keys), advertised in the page's vendor area.
 */
struct kvssd_kv_format {
    uint16_t kvmkl;     /* KV Key Max Length, bytes */
    uint8_t rsvd2;
    uint8_t kvfattr;
    uint32_t kvmvl;     /* KV Value Max Length, bytes */
    uint32_t kvmnk;     /* KV Max Number of Keys (0 = not reported) */
    uint8_t rsvd12[4];
} __attribute__((packed));

/* KV Command Set Identify Namespace (CNS 05h, CSI 01h), 4096 bytes. */
struct kvssd_id_ns_kv {
    uint64_t nsze;        /* namespace size, bytes */
    uint8_t rsvd8[8];
    uint64_t nuse;        /* namespace utilization, bytes */
    uint8_t nsfeat;
    uint8_t nkvf;         /* number of KV formats - 1 (0 = one format) */
    uint8_t nmic;
    uint8_t rescap;
    uint8_t fpi;
    uint8_t rsvd37[3];
    uint32_t novg;        /* namespace optimal value granularity, bytes */
    uint32_t anagrpid;
    uint8_t rsvd48[3];
    uint8_t nsattr;
    uint16_t nvmsetid;
    uint16_t endgid;
    uint8_t nguid[16];
    uint64_t eui64;
    struct kvssd_kv_format kvf[16]; /* at byte 72 */
    uint8_t rsvd328[3512];
    uint8_t vs[256];
} __attribute__((packed));

_Static_assert(sizeof(struct kvssd_kv_format) == 16, "KV format is 16 bytes");
_Static_assert(sizeof(struct kvssd_id_ns_kv) == 4096, "KV identify namespace is 4096 bytes");

/* Feature Identifier of the Key Value Configuration feature. */
#define KVSSD_FID_KV_CONFIG 0x20
/* Key Value Configuration CDW11 bit 0: Error on Deletion of Non-Existing Key. */
#define KVSSD_KV_CONFIG_EDNEK (1u << 0)

#ifdef __cplusplus
}
#endif

#endif /* KVSSD_NVME_KV_H */
