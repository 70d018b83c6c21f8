/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every status the device posts, with its name and whether only a malformed
 * command gets it (guest_log.c logs those with LOG_GUEST_ERROR). QEMU-free,
 * so that a unit test (tests/cmdset/test_guest_log.c) holds it against the
 * status enumerations of <kvssd/nvme.h>, <kvssd/nvme_kv.h> and <kvssd/ext.h>:
 * a status added there without a row here fails that test.
 */
#ifndef HW_KVSSD_GUEST_LOG_H
#define HW_KVSSD_GUEST_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kvssd/ext.h>
#include <kvssd/nvme.h>
#include <kvssd/nvme_kv.h>

/* X(code, guest_error, name): one row per status (SCT << 8 | SC). */
#define KVSSD_GUEST_LOG_STATUSES(X)                                                          \
    /* generic (SCT 0) */                                                                    \
    X(KVSSD_SC_SUCCESS, false, "Successful Completion")                                      \
    X(KVSSD_SC_INVALID_OPCODE, true, "Invalid Command Opcode")                               \
    X(KVSSD_SC_INVALID_FIELD, true, "Invalid Field in Command")                              \
    X(KVSSD_SC_CID_CONFLICT, true, "Command ID Conflict")                                    \
    X(KVSSD_SC_DATA_XFER_ERROR, true, "Data Transfer Error")                                 \
    X(KVSSD_SC_ABORTED_POWER_LOSS, false, "Commands Aborted due to Power Loss Notification") \
    X(KVSSD_SC_INTERNAL_ERROR, false, "Internal Error")                                      \
    X(KVSSD_SC_ABORT_REQUESTED, false, "Command Abort Requested")                            \
    X(KVSSD_SC_ABORTED_SQ_DELETION, false, "Command Aborted due to SQ Deletion")             \
    X(KVSSD_SC_INVALID_NSID, true, "Invalid Namespace or Format")                            \
    X(KVSSD_SC_CMD_SEQ_ERROR, true, "Command Sequence Error")                                \
    X(KVSSD_SC_INVALID_SGL_SEG_DESCR, true, "Invalid SGL Segment Descriptor")                \
    X(KVSSD_SC_INVALID_NUM_SGL_DESCRS, true, "Invalid Number of SGL Descriptors")            \
    X(KVSSD_SC_DATA_SGL_LEN_INVALID, true, "Data SGL Length Invalid")                        \
    X(KVSSD_SC_SGL_DESCR_TYPE_INVALID, true, "SGL Descriptor Type Invalid")                  \
    X(KVSSD_SC_INVALID_PRP_OFFSET, true, "PRP Offset Invalid")                               \
    X(KVSSD_SC_INVALID_IOCS, true, "Invalid I/O Command Set")                                \
    /* I/O command set range (SCT 0, 80h-BFh): NVM, then KV */                               \
    X(KVSSD_SC_LBA_OUT_OF_RANGE, true, "LBA Out of Range")                                   \
    X(KVSSD_SC_CAPACITY_EXCEEDED, false, "Capacity Exceeded")                                \
    X(KVSSD_SC_NS_NOT_READY, false, "Namespace Not Ready")                                   \
    X(KVSSD_SC_INVALID_VALUE_SIZE, true, "KV Invalid Value Size")                            \
    X(KVSSD_SC_INVALID_KEY_SIZE, true, "KV Invalid Key Size")                                \
    X(KVSSD_SC_KEY_DOES_NOT_EXIST, false, "KV Key Does Not Exist")                           \
    X(KVSSD_SC_UNRECOVERED_ERROR, false, "KV Unrecovered Error")                             \
    X(KVSSD_SC_KEY_EXISTS, false, "KV Key Exists")                                           \
    /* admin command specific (SCT 1) */                                                     \
    X(KVSSD_SC_CQ_INVALID, true, "Completion Queue Invalid")                                 \
    X(KVSSD_SC_INVALID_QID, true, "Invalid Queue Identifier")                                \
    X(KVSSD_SC_INVALID_QSIZE, true, "Invalid Queue Size")                                    \
    X(KVSSD_SC_AER_LIMIT_EXCEEDED, true, "Asynchronous Event Request Limit Exceeded")        \
    X(KVSSD_SC_INVALID_IRQ_VECTOR, true, "Invalid Interrupt Vector")                         \
    X(KVSSD_SC_INVALID_LOG_PAGE, true, "Invalid Log Page")                                   \
    X(KVSSD_SC_INVALID_FORMAT, true, "Invalid Format")                                       \
    X(KVSSD_SC_INVALID_QUEUE_DELETION, true, "Invalid Queue Deletion")                       \
    X(KVSSD_SC_FID_NOT_SAVEABLE, true, "Feature Identifier Not Saveable")                    \
    X(KVSSD_SC_FEAT_NOT_CHANGEABLE, true, "Feature Not Changeable")                          \
    /* media errors (SCT 2) */                                                               \
    X(KVSSD_SC_WRITE_FAULT, false, "Write Fault")                                            \
    X(KVSSD_SC_UNRECOVERED_READ_ERROR, false, "Unrecovered Read Error")                      \
    /* our extensions (SCT 1, C0h-FFh: <kvssd/ext.h>) */                                     \
    X(KVSSD_SC_INLINE_UNKNOWN_TAG, true, "Inline Unknown Tag")                               \
    X(KVSSD_SC_INLINE_BAD_SEQUENCE, true, "Inline Bad Sequence")                             \
    X(KVSSD_SC_INLINE_OVERFLOW, true, "Inline Overflow")                                     \
    X(KVSSD_SC_INLINE_TAG_IN_USE, true, "Inline Tag In Use")                                 \
    X(KVSSD_SC_INLINE_EXPIRED, false, "Inline Stream Expired")                               \
    X(KVSSD_SC_TAG_TABLE_FULL, false, "Tag Table Full")                                      \
    X(KVSSD_SC_STAGED_KEY_UNKNOWN, true, "Staged Key Unknown")                               \
    X(KVSSD_SC_ITERATOR_LIMIT, true, "Iterator Limit")                                       \
    X(KVSSD_SC_INVALID_ITERATOR, true, "Invalid Iterator")                                   \
    X(KVSSD_SC_ITERATOR_END, false, "Iterator End")

/* One status: its code, whether only a malformed command gets it, its name, its C symbol. */
struct kvssd_status_info {
    uint16_t code;
    bool guest_error;
    const char *name;
    const char *symbol;
};

#define KVSSD_STATUS_ROW(code, guest_error, name) {(code), (guest_error), (name), #code},
static const struct kvssd_status_info kvssd_status_table[] = {
    KVSSD_GUEST_LOG_STATUSES(KVSSD_STATUS_ROW)};
#undef KVSSD_STATUS_ROW
#define KVSSD_STATUS_TABLE_ROWS (sizeof(kvssd_status_table) / sizeof(kvssd_status_table[0]))

/* kvssd_status_lookup() - the row of @status (CRD, More and DNR ignored), or NULL. */
static inline const struct kvssd_status_info *kvssd_status_lookup(uint16_t status)
{
    uint16_t code = status & KVSSD_STATUS_CODE_MASK;

    for (size_t i = 0; i < KVSSD_STATUS_TABLE_ROWS; i++) {
        if (kvssd_status_table[i].code == code) {
            return &kvssd_status_table[i];
        }
    }
    return NULL;
}

#endif
