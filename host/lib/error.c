/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every NVMe, KV and extension status the device can return, mapped to a
 * library error code, a status name and a sentence.
 */
#include <stddef.h>

#include <kvssd/libkvssd.h>

struct status_map {
    uint16_t status;
    int err;
    const char *name;
};

static const struct status_map status_map[] = {
    {KVSSD_SC_SUCCESS, KVSSD_OK, "SUCCESS"},
    {KVSSD_SC_INVALID_OPCODE, KVSSD_ERR_INVALID_OPCODE, "INVALID_OPCODE"},
    {KVSSD_SC_INVALID_FIELD, KVSSD_ERR_INVALID_FIELD, "INVALID_FIELD"},
    {KVSSD_SC_CID_CONFLICT, KVSSD_ERR_CID_CONFLICT, "CID_CONFLICT"},
    {KVSSD_SC_DATA_XFER_ERROR, KVSSD_ERR_TRANSFER, "DATA_XFER_ERROR"},
    {KVSSD_SC_ABORTED_POWER_LOSS, KVSSD_ERR_ABORTED, "ABORTED_POWER_LOSS"},
    {KVSSD_SC_INTERNAL_ERROR, KVSSD_ERR_INTERNAL, "INTERNAL_ERROR"},
    {KVSSD_SC_ABORT_REQUESTED, KVSSD_ERR_ABORTED, "ABORT_REQUESTED"},
    {KVSSD_SC_ABORTED_SQ_DELETION, KVSSD_ERR_ABORTED, "ABORTED_SQ_DELETION"},
    {KVSSD_SC_INVALID_NSID, KVSSD_ERR_INVALID_NSID, "INVALID_NSID"},
    {KVSSD_SC_CMD_SEQ_ERROR, KVSSD_ERR_SEQUENCE, "CMD_SEQ_ERROR"},
    {KVSSD_SC_INVALID_SGL_SEG_DESCR, KVSSD_ERR_TRANSFER, "INVALID_SGL_SEG_DESCR"},
    {KVSSD_SC_INVALID_NUM_SGL_DESCRS, KVSSD_ERR_TRANSFER, "INVALID_NUM_SGL_DESCRS"},
    {KVSSD_SC_DATA_SGL_LEN_INVALID, KVSSD_ERR_TRANSFER, "DATA_SGL_LEN_INVALID"},
    {KVSSD_SC_SGL_DESCR_TYPE_INVALID, KVSSD_ERR_TRANSFER, "SGL_DESCR_TYPE_INVALID"},
    {KVSSD_SC_INVALID_PRP_OFFSET, KVSSD_ERR_TRANSFER, "INVALID_PRP_OFFSET"},
    {KVSSD_SC_CAPACITY_EXCEEDED, KVSSD_ERR_CAPACITY, "CAPACITY_EXCEEDED"},
    {KVSSD_SC_NS_NOT_READY, KVSSD_ERR_NOT_READY, "NS_NOT_READY"},
    {KVSSD_SC_INVALID_VALUE_SIZE, KVSSD_ERR_VALUE_SIZE, "INVALID_VALUE_SIZE"},
    {KVSSD_SC_INVALID_KEY_SIZE, KVSSD_ERR_KEY_SIZE, "INVALID_KEY_SIZE"},
    {KVSSD_SC_KEY_DOES_NOT_EXIST, KVSSD_ERR_KEY_NOT_FOUND, "KEY_DOES_NOT_EXIST"},
    {KVSSD_SC_UNRECOVERED_ERROR, KVSSD_ERR_UNRECOVERED, "UNRECOVERED_ERROR"},
    {KVSSD_SC_KEY_EXISTS, KVSSD_ERR_KEY_EXISTS, "KEY_EXISTS"},
    {KVSSD_SC_INLINE_UNKNOWN_TAG, KVSSD_ERR_INLINE_UNKNOWN_TAG, "INLINE_UNKNOWN_TAG"},
    {KVSSD_SC_INLINE_BAD_SEQUENCE, KVSSD_ERR_INLINE_BAD_SEQUENCE, "INLINE_BAD_SEQUENCE"},
    {KVSSD_SC_INLINE_OVERFLOW, KVSSD_ERR_INLINE_OVERFLOW, "INLINE_OVERFLOW"},
    {KVSSD_SC_INLINE_TAG_IN_USE, KVSSD_ERR_INLINE_TAG_IN_USE, "INLINE_TAG_IN_USE"},
    {KVSSD_SC_INLINE_EXPIRED, KVSSD_ERR_INLINE_EXPIRED, "INLINE_EXPIRED"},
    {KVSSD_SC_TAG_TABLE_FULL, KVSSD_ERR_TAG_TABLE_FULL, "TAG_TABLE_FULL"},
    {KVSSD_SC_STAGED_KEY_UNKNOWN, KVSSD_ERR_STAGED_KEY_UNKNOWN, "STAGED_KEY_UNKNOWN"},
    {KVSSD_SC_ITERATOR_LIMIT, KVSSD_ERR_ITERATOR_LIMIT, "ITERATOR_LIMIT"},
    {KVSSD_SC_INVALID_ITERATOR, KVSSD_ERR_INVALID_ITERATOR, "INVALID_ITERATOR"},
    {KVSSD_SC_ITERATOR_END, KVSSD_ERR_ITERATOR_END, "ITERATOR_END"},
};

static const struct status_map *status_lookup(uint16_t status)
{
    status &= KVSSD_STATUS_CODE_MASK; /* drops CRD, More and DNR */
    for (size_t i = 0; i < sizeof(status_map) / sizeof(status_map[0]); i++) {
        if (status_map[i].status == status) {
            return &status_map[i];
        }
    }
    return NULL;
}

int kvssd_status_to_err(uint16_t status)
{
    const struct status_map *m = status_lookup(status);
    if (!m) {
        return -KVSSD_ERR_NVME;
    }
    return -m->err;
}

const char *kvssd_status_str(uint16_t status)
{
    const struct status_map *m = status_lookup(status);
    return m ? m->name : "UNKNOWN_STATUS";
}

static const char *const messages[KVSSD_ERR_LAST] = {
    [KVSSD_OK] = "success",
    [KVSSD_ERR_INVALID_ARGUMENT] = "invalid argument",
    [KVSSD_ERR_KEY_SIZE] = "key size is outside what the device accepts (1-255 bytes)",
    [KVSSD_ERR_VALUE_SIZE] = "value size is outside what the device accepts (0-2097152 bytes)",
    [KVSSD_ERR_KEY_NOT_FOUND] = "the key does not exist",
    [KVSSD_ERR_KEY_EXISTS] = "the key already exists (store was only-if-absent)",
    [KVSSD_ERR_UNRECOVERED] = "the device could not read the value back (unrecovered error)",
    [KVSSD_ERR_CAPACITY] = "the device is full (capacity exceeded)",
    [KVSSD_ERR_NOT_READY] = "the namespace is not ready",
    [KVSSD_ERR_INVALID_OPCODE] = "the device does not support this command (invalid opcode)",
    [KVSSD_ERR_INVALID_FIELD] = "the device rejected a field of the command (invalid field)",
    [KVSSD_ERR_TRANSFER] = "the data transfer failed (PRP/SGL or DMA error)",
    [KVSSD_ERR_INTERNAL] = "the device reported an internal error",
    [KVSSD_ERR_ABORTED] = "the command was aborted",
    [KVSSD_ERR_INVALID_NSID] = "the namespace ID is not valid on this controller",
    [KVSSD_ERR_SEQUENCE] = "command sequence error",
    [KVSSD_ERR_CID_CONFLICT] = "command identifier conflict",
    [KVSSD_ERR_INLINE_UNKNOWN_TAG] = "inline transfer for a tag with no open stream",
    [KVSSD_ERR_INLINE_BAD_SEQUENCE] =
        "inline transfer with a duplicate or out-of-range sequence number",
    [KVSSD_ERR_INLINE_OVERFLOW] = "inline transfer carried more bytes than the head declared",
    [KVSSD_ERR_INLINE_TAG_IN_USE] = "inline head for a tag whose stream is still open",
    [KVSSD_ERR_INLINE_EXPIRED] = "the device abandoned the inline stream (it expired)",
    [KVSSD_ERR_TAG_TABLE_FULL] = "the device's stream/staged-key table is full; retry later",
    [KVSSD_ERR_STAGED_KEY_UNKNOWN] = "the long key's staged-key tag has no staged key",
    [KVSSD_ERR_ITERATOR_LIMIT] = "16 iterators are already open; close one first",
    [KVSSD_ERR_INVALID_ITERATOR] = "the iterator handle is not open",
    [KVSSD_ERR_ITERATOR_END] = "the iterator has no more entries",
    [KVSSD_ERR_NVME] = "the device returned an unexpected NVMe status",
    [KVSSD_ERR_SYSTEM] = "a system call failed",
    [KVSSD_ERR_NO_DEVICE] = "not a KV namespace of a kvssd device, or (sim:) an image the "
                            "firmware refused",
    [KVSSD_ERR_BUSY] = "the queue is full; poll for completions and retry",
    [KVSSD_ERR_CONFIG] = "the transfer config file ($KVSSD_TRANSFER_CONFIG, else "
                         "/etc/kvssd/transfer.conf) is missing, unreadable or malformed",
    [KVSSD_ERR_TIMEOUT] = "the device did not complete the command in time (pci transport; "
                          "see KVSSD_PCI_TIMEOUT_MS)",
    [KVSSD_ERR_NOT_SUPPORTED] = "not supported on the pci transport (the asynchronous API "
                                "needs io_uring on a /dev/ngXnY device)",
};

const char *kvssd_strerror(int err)
{
    if (err < 0) {
        err = -err;
    }
    if (err >= KVSSD_ERR_LAST) {
        return "unknown error";
    }
    return messages[err];
}
