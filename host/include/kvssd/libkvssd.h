/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libkvssd - userspace driver for the emulated NVMe Key-Value SSD.
 *
 * Commands travel through the stock Linux NVMe passthrough path of a
 * namespace's generic character device (/dev/ngXnY): synchronously through
 * NVME_IOCTL_IO64_CMD (libnvme), asynchronously through io_uring
 * (IORING_OP_URING_CMD). No kernel module is needed.
 *
 * The wire format is <kvssd/nvme_kv.h> and <kvssd/ext.h>; this header adds
 * the library's view: a device handle, operations, transfer methods
 * (prp / inline / hybrid / adaptive) and error codes.
 *
 * Conventions: every function returning int returns 0 (or a non-negative
 * count) on success and a negative enum kvssd_err value on failure;
 * kvssd_strerror() turns it into a sentence. When the device answered with
 * an NVMe status, the status is available in the struct kvssd_result an
 * operation fills (optional argument, may be NULL).
 *
 * Sizes: keys are 1..255 bytes (17..255 travel by a preceding Key Stage
 * command), values 0 B .. 2 MiB.
 */
#ifndef KVSSD_LIBKVSSD_H
#define KVSSD_LIBKVSSD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kvssd/ext.h>
#include <kvssd/nvme_kv.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library's key and value limits are the device's (<kvssd/ext.h>): the
 * longest key through Key Stage and the largest value Identify advertises.
 */
#define KVSSD_KEY_MIN 1u
#define KVSSD_KEY_MAX KVSSD_LONG_KEY_MAX
#define KVSSD_VALUE_MAX KVSSD_VALUE_MAX_BYTES
#define KVSSD_QUEUE_DEPTH_MAX 256u

/**
 * enum kvssd_err - library error codes (returned negated)
 * @KVSSD_OK:                   success
 * @KVSSD_ERR_INVALID_ARGUMENT: a library-side check failed (NULL pointer, bad mode, ...)
 * @KVSSD_ERR_KEY_SIZE:         key length outside 1..255 (library) or status 86h
 * @KVSSD_ERR_VALUE_SIZE:       value size outside 0..2 MiB (library) or status 85h
 * @KVSSD_ERR_KEY_NOT_FOUND:    status 87h: the key does not exist
 * @KVSSD_ERR_KEY_EXISTS:       status 89h: only-if-absent store of a present key
 * @KVSSD_ERR_UNRECOVERED:      status 88h: unrecovered read error
 * @KVSSD_ERR_CAPACITY:         status 81h: capacity exceeded
 * @KVSSD_ERR_NOT_READY:        status 82h: namespace not ready
 * @KVSSD_ERR_INVALID_OPCODE:   status 01h
 * @KVSSD_ERR_INVALID_FIELD:    status 02h
 * @KVSSD_ERR_TRANSFER:         data transfer / PRP / SGL errors (04h, 0Dh-13h)
 * @KVSSD_ERR_INTERNAL:         status 06h: device internal error
 * @KVSSD_ERR_ABORTED:          command aborted (05h, 07h, 08h)
 * @KVSSD_ERR_INVALID_NSID:     status 0Bh
 * @KVSSD_ERR_SEQUENCE:         status 0Ch: command sequence error
 * @KVSSD_ERR_CID_CONFLICT:     status 03h
 * @KVSSD_ERR_INLINE_UNKNOWN_TAG:  C0h: inline transfer for a tag with no open stream
 * @KVSSD_ERR_INLINE_BAD_SEQUENCE: C1h: duplicate or out-of-range inline sequence
 * @KVSSD_ERR_INLINE_OVERFLOW:  C2h: more inline bytes than the head declared
 * @KVSSD_ERR_INLINE_TAG_IN_USE: C3h: head for a tag whose stream is open
 * @KVSSD_ERR_INLINE_EXPIRED:   C4h: the device abandoned the stream
 * @KVSSD_ERR_TAG_TABLE_FULL:   C5h: no free stream / staged-key slot (retry later)
 * @KVSSD_ERR_STAGED_KEY_UNKNOWN: C6h: an inline head's long key names a tag with no
 *   staged key (standard commands get 86h: KVSSD_ERR_KEY_SIZE)
 * @KVSSD_ERR_ITERATOR_LIMIT:   C7h: 16 iterators already open
 * @KVSSD_ERR_INVALID_ITERATOR: C8h: iterator handle not open
 * @KVSSD_ERR_ITERATOR_END:     C9h: nothing left to read (kvssd_iter_next() returns 0 instead)
 * @KVSSD_ERR_NVME:             any other NVMe status (see struct kvssd_result)
 * @KVSSD_ERR_SYSTEM:           a system call failed (errno kept in struct kvssd_result)
 * @KVSSD_ERR_NO_DEVICE:        the path is not a KV namespace of this device, or a sim:
 *   image the firmware refused (locked, damaged, another geometry)
 * @KVSSD_ERR_BUSY:             async queue full: poll completions, then retry
 * @KVSSD_ERR_CONFIG:           malformed transfer-threshold config file
 * @KVSSD_ERR_TIMEOUT:          the pci transport: no completion (or controller ready) in time
 * @KVSSD_ERR_NOT_SUPPORTED:    the operation is not available on this transport
 * @KVSSD_ERR_LAST:             number of codes
 */
enum kvssd_err {
    KVSSD_OK = 0,
    KVSSD_ERR_INVALID_ARGUMENT,
    KVSSD_ERR_KEY_SIZE,
    KVSSD_ERR_VALUE_SIZE,
    KVSSD_ERR_KEY_NOT_FOUND,
    KVSSD_ERR_KEY_EXISTS,
    KVSSD_ERR_UNRECOVERED,
    KVSSD_ERR_CAPACITY,
    KVSSD_ERR_NOT_READY,
    KVSSD_ERR_INVALID_OPCODE,
    KVSSD_ERR_INVALID_FIELD,
    KVSSD_ERR_TRANSFER,
    KVSSD_ERR_INTERNAL,
    KVSSD_ERR_ABORTED,
    KVSSD_ERR_INVALID_NSID,
    KVSSD_ERR_SEQUENCE,
    KVSSD_ERR_CID_CONFLICT,
    KVSSD_ERR_INLINE_UNKNOWN_TAG,
    KVSSD_ERR_INLINE_BAD_SEQUENCE,
    KVSSD_ERR_INLINE_OVERFLOW,
    KVSSD_ERR_INLINE_TAG_IN_USE,
    KVSSD_ERR_INLINE_EXPIRED,
    KVSSD_ERR_TAG_TABLE_FULL,
    KVSSD_ERR_STAGED_KEY_UNKNOWN,
    KVSSD_ERR_ITERATOR_LIMIT,
    KVSSD_ERR_INVALID_ITERATOR,
    KVSSD_ERR_ITERATOR_END,
    KVSSD_ERR_NVME,
    KVSSD_ERR_SYSTEM,
    KVSSD_ERR_NO_DEVICE,
    KVSSD_ERR_BUSY,
    KVSSD_ERR_CONFIG,
    KVSSD_ERR_TIMEOUT,
    KVSSD_ERR_NOT_SUPPORTED,
    KVSSD_ERR_LAST
};

/**
 * kvssd_strerror() - a sentence describing an error code
 * @err: a value returned by a libkvssd function (negative) or an enum kvssd_err
 *
 * Return: a static string; never NULL ("unknown error" for foreign values).
 */
const char *kvssd_strerror(int err);

/**
 * kvssd_status_to_err() - map an NVMe status to a library error code
 * @status: (SCT << 8) | SC as in <kvssd/nvme.h>; DNR/More bits are ignored
 *
 * Return: 0 for success, else the negative enum kvssd_err value.
 */
int kvssd_status_to_err(uint16_t status);

/**
 * kvssd_status_str() - name of an NVMe / KV / extension status
 * @status: (SCT << 8) | SC; DNR/More bits are ignored
 *
 * Return: a static string such as "KEY_DOES_NOT_EXIST (SCT 0h SC 87h)"'s name part.
 */
const char *kvssd_status_str(uint16_t status);

/**
 * struct kvssd_result - what one operation saw on the wire
 * @status:   the NVMe status of the failing (or last) command, (SCT << 8) | SC
 * @dw0:      CQE DW0 of the last command (Retrieve: the value's full size)
 * @dw1:      CQE DW1 of the last command
 * @commands: NVMe commands the operation issued (Key Stage, head, transfers)
 * @sys_errno: errno when the error was KVSSD_ERR_SYSTEM
 */
struct kvssd_result {
    uint16_t status;
    uint32_t dw0;
    uint32_t dw1;
    uint32_t commands;
    int sys_errno;
};

/* ------------------------------------------------------------------ */
/* Command encoding (cmd.c): pure, no I/O                              */
/* ------------------------------------------------------------------ */

/**
 * struct kvssd_cmd - one NVMe command ready to submit
 * @sqe:      the 64-byte submission queue entry (CDW0 holds only the opcode;
 *            the kernel assigns the command identifier)
 * @data:     host buffer for the data pointer (PRP), or NULL
 * @data_len: bytes of @data
 * @admin:    true for an admin command (controller queue)
 *
 * Through Linux passthrough only opcode, NSID, CDW2, CDW3 and CDW10-15
 * reach the device; CDW4-9 are filled by the kernel. The full-layout
 * inline encoders set CDW1/CDW4-9 too; such commands need a driver that
 * writes SQEs itself.
 */
struct kvssd_cmd {
    struct kvssd_sqe sqe;
    void *data;
    uint32_t data_len;
    bool admin;
};

/**
 * kvssd_cmd_store() - Store (01h), value by data pointer
 * @cmd: filled in
 * @nsid: namespace
 * @key: key bytes (used when @key_len <= 16)
 * @key_len: 1..255
 * @key_tag: staged-key tag when @key_len > 16 (from a preceding Key Stage)
 * @value: value buffer (data pointer)
 * @value_len: value bytes
 * @options: KVSSD_STORE_OPT_* bits
 */
void kvssd_cmd_store(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                     uint32_t key_tag, const void *value, uint32_t value_len, uint32_t options);
/** kvssd_cmd_retrieve() - Retrieve (02h) into @buf of @buf_len bytes (0 = size only). */
void kvssd_cmd_retrieve(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                        uint32_t key_tag, void *buf, uint32_t buf_len);
/** kvssd_cmd_delete() - Delete (10h). */
void kvssd_cmd_delete(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                      uint32_t key_tag);
/** kvssd_cmd_exist() - Exist (14h). */
void kvssd_cmd_exist(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                     uint32_t key_tag);
/** kvssd_cmd_list() - List (06h) from a start key (@key_len 0 = from the beginning). */
void kvssd_cmd_list(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                    uint32_t key_tag, void *buf, uint32_t buf_len);
/** kvssd_cmd_flush() - Flush (00h). */
void kvssd_cmd_flush(struct kvssd_cmd *cmd, uint32_t nsid);
/**
 * kvssd_cmd_key_stage() - Key Stage (91h): stage a 17..255-byte key under @tag
 *
 * The data pointer carries the key itself (@key, @key_len bytes).
 */
void kvssd_cmd_key_stage(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                         uint32_t tag);
/**
 * kvssd_cmd_iter_open() - Iter Open (90h)
 * @prefix: first 4 key bytes as a big-endian number (key byte 0 in bits 31:24)
 * @mask: which bits of @prefix must match
 * @with_values: entries carry values too
 */
void kvssd_cmd_iter_open(struct kvssd_cmd *cmd, uint32_t nsid, uint32_t prefix, uint32_t mask,
                         bool with_values);
/** kvssd_cmd_iter_read() - Iter Read (92h) of @handle into @buf. */
void kvssd_cmd_iter_read(struct kvssd_cmd *cmd, uint32_t nsid, uint32_t handle, void *buf,
                         uint32_t buf_len);
/** kvssd_cmd_iter_close() - Iter Close (94h). */
void kvssd_cmd_iter_close(struct kvssd_cmd *cmd, uint32_t nsid, uint32_t handle);

/**
 * kvssd_cmd_inline_head() - stock-layout inline head (81h)
 * @key_tag: staged-key tag when @key_len > 16
 * @stream_tag: the stream's tag (0..4095)
 * @value_len: the whole value's size
 * @hybrid: the data pointer carries the first (value_len & ~4095) bytes
 * @tail: the bytes that travel inline (the whole value, or the hybrid tail)
 * @tail_len: bytes of @tail
 *
 * Packs the key (when <= 16 bytes) then as many @tail bytes as fit into the
 * payload area CDW2, CDW3, CDW12..CDW15.
 *
 * Return: number of @tail bytes carried by this head.
 */
uint32_t kvssd_cmd_inline_head(struct kvssd_cmd *cmd, uint32_t nsid, const void *key,
                               uint32_t key_len, uint32_t key_tag, uint32_t stream_tag,
                               uint32_t value_len, uint32_t options, bool hybrid,
                               const void *page_data, const void *tail, uint32_t tail_len);
/**
 * kvssd_cmd_inline_head_full_tail() - stock head (81h) whose transfers are 8Dh
 * @stream_tag: the stream's tag, 0..255 (the full layout's; the device refuses more with 0002h)
 *
 * kvssd_cmd_inline_head() with the full-tail bit (CDW11[17],
 * KVSSD_INLINE_FULL_TAIL): the head keeps its data pointer (@hybrid) and
 * its staged-key form, and the rest of the inline bytes follow in
 * kvssd_cmd_inline_xfer_full() commands of 56 bytes (docs/protocol.md 7.3a).
 * Only transports that write whole SQEs can send those (the pci transport).
 *
 * Return: number of @tail bytes carried by this head.
 */
uint32_t kvssd_cmd_inline_head_full_tail(struct kvssd_cmd *cmd, uint32_t nsid, const void *key,
                                         uint32_t key_len, uint32_t key_tag, uint32_t stream_tag,
                                         uint32_t value_len, uint32_t options, bool hybrid,
                                         const void *page_data, const void *tail,
                                         uint32_t tail_len);
/**
 * kvssd_cmd_inline_xfer() - stock-layout inline transfer (85h)
 * @seq: sequence number, 1..
 * @bytes: the next value bytes; at most KVSSD_INLINE_XFER_PAYLOAD are taken
 *
 * Return: number of bytes carried.
 */
uint32_t kvssd_cmd_inline_xfer(struct kvssd_cmd *cmd, uint32_t nsid, uint32_t stream_tag,
                               uint32_t seq, const void *bytes, uint32_t len);
/**
 * kvssd_cmd_inline_head_full() - BandSlim full-layout head (89h), keys <= 16 bytes
 *
 * Payload: CDW11[31:8], CDW4..CDW9, CDW12, CDW13 (35 bytes).
 * Return: number of value bytes carried.
 */
uint32_t kvssd_cmd_inline_head_full(struct kvssd_cmd *cmd, uint32_t nsid, const void *key,
                                    uint32_t key_len, uint32_t stream_tag, uint32_t value_len,
                                    uint32_t options, const void *value, uint32_t len);
/**
 * kvssd_cmd_inline_xfer_full() - BandSlim full-layout transfer (8Dh)
 *
 * CDW1 = tag | seq << 12; payload CDW2..CDW15 (56 bytes).
 * Return: number of value bytes carried.
 */
uint32_t kvssd_cmd_inline_xfer_full(struct kvssd_cmd *cmd, uint32_t stream_tag, uint32_t seq,
                                    const void *bytes, uint32_t len);

/** kvssd_cmd_identify() - admin Identify (06h) with @cns and @csi into a 4096-byte @buf. */
void kvssd_cmd_identify(struct kvssd_cmd *cmd, uint32_t nsid, uint8_t cns, uint8_t csi, void *buf);
/** kvssd_cmd_get_stats_log() - admin Get Log Page (02h), LID C0h, 4096 bytes into @log. */
void kvssd_cmd_get_stats_log(struct kvssd_cmd *cmd, struct kvssd_stats_log *log);
/** kvssd_cmd_get_config_log() - admin Get Log Page (02h), LID C1h, 512 bytes into @log. */
void kvssd_cmd_get_config_log(struct kvssd_cmd *cmd, struct kvssd_config_log *log);
/**
 * kvssd_cmd_get_id_ns_kv_log() - admin Get Log Page (02h), LID C2h of @nsid:
 * the 4096 bytes of Identify CNS 05h, CSI 01h into @id, for a target that
 * refuses that Identify (Linux's nvmet passthru).
 */
void kvssd_cmd_get_id_ns_kv_log(struct kvssd_cmd *cmd, uint32_t nsid, struct kvssd_id_ns_kv *id);
/** kvssd_cmd_reset_stats() - admin Set Features (09h), FID C0h. */
void kvssd_cmd_reset_stats(struct kvssd_cmd *cmd);
/** kvssd_cmd_format() - admin Format NVM (80h) of @nsid (LBAF 0, no secure erase). */
void kvssd_cmd_format(struct kvssd_cmd *cmd, uint32_t nsid);

/* ------------------------------------------------------------------ */
/* Transfer methods (transfer.c)                                       */
/* ------------------------------------------------------------------ */

/**
 * enum kvssd_xfer_mode - how a Store moves its value
 * @KVSSD_XFER_PRP:      Store (01h), the value by PRP DMA (baseline)
 * @KVSSD_XFER_INLINE:   the whole value inside inline head + transfer commands
 * @KVSSD_XFER_HYBRID:   whole 4 KiB pages by PRP in the head, the tail inline
 *                       (a value of whole pages only, or under one page,
 *                       degenerates to PRP resp. inline)
 * @KVSSD_XFER_ADAPTIVE: BandSlim §3.2: inline up to alpha*threshold1 bytes;
 *                       above it hybrid when the value is past a 4 KiB
 *                       multiple by at most beta*threshold2 bytes; else PRP
 */
enum kvssd_xfer_mode {
    KVSSD_XFER_PRP,
    KVSSD_XFER_INLINE,
    KVSSD_XFER_HYBRID,
    KVSSD_XFER_ADAPTIVE,
};

/**
 * struct kvssd_xfer_config - adaptive transfer thresholds
 * @threshold1_bytes: value size where inline stops beating PRP (default 128)
 * @threshold2_bytes: bytes past a 4 KiB multiple where PRP starts beating
 *                    hybrid (default 64)
 * @alpha: scale of threshold1 (default 1.0; > 1 favours inline)
 * @beta: scale of threshold2 (default 1.0; > 1 favours hybrid)
 */
struct kvssd_xfer_config {
    uint32_t threshold1_bytes;
    uint32_t threshold2_bytes;
    double alpha;
    double beta;
};

#define KVSSD_DEFAULT_THRESHOLD1_BYTES 128u
#define KVSSD_DEFAULT_THRESHOLD2_BYTES 64u
/* Where kvbench calibrate writes and kvssd_open() reads the thresholds. */
#define KVSSD_DEFAULT_CONFIG_PATH "/etc/kvssd/transfer.conf"
#define KVSSD_CONFIG_ENV "KVSSD_TRANSFER_CONFIG"

/** kvssd_xfer_config_default() - the defaults above. */
void kvssd_xfer_config_default(struct kvssd_xfer_config *cfg);
/**
 * kvssd_xfer_config_load() - read an INI file with a [transfer] group
 * @path: file to read
 * @cfg: updated with the keys present (threshold1_bytes, threshold2_bytes, alpha, beta)
 * @errbuf: a sentence naming the bad line on failure (may be NULL)
 *
 * Return: 0, -KVSSD_ERR_SYSTEM (cannot read; errno set) or -KVSSD_ERR_CONFIG.
 */
int kvssd_xfer_config_load(const char *path, struct kvssd_xfer_config *cfg, char *errbuf,
                           size_t errlen);
/** kvssd_xfer_config_save() - write @cfg as an INI file. Return 0 or -KVSSD_ERR_SYSTEM. */
int kvssd_xfer_config_save(const char *path, const struct kvssd_xfer_config *cfg,
                           const char *comment);
/**
 * kvssd_xfer_choose() - the method a Store of @value_len bytes uses
 * @mode: requested mode; PRP/INLINE/HYBRID are returned as is except that
 *        HYBRID falls back to PRP for whole pages and to INLINE below a page
 *
 * Return: KVSSD_XFER_PRP, KVSSD_XFER_INLINE or KVSSD_XFER_HYBRID.
 */
enum kvssd_xfer_mode kvssd_xfer_choose(enum kvssd_xfer_mode mode,
                                       const struct kvssd_xfer_config *cfg, uint32_t value_len);
/** kvssd_xfer_mode_name() - "prp", "inline", "hybrid", "adaptive". */
const char *kvssd_xfer_mode_name(enum kvssd_xfer_mode mode);
/** kvssd_xfer_mode_parse() - the inverse; returns -1 for an unknown name. */
int kvssd_xfer_mode_parse(const char *name);
/**
 * kvssd_store_commands() - NVMe commands a Store issues
 * @method: PRP, INLINE or HYBRID (as returned by kvssd_xfer_choose())
 *
 * Return: the count including the Key Stage command for keys > 16 bytes.
 */
uint32_t kvssd_store_commands(enum kvssd_xfer_mode method, uint32_t key_len, uint32_t value_len);

/**
 * enum kvssd_wire_layout - which inline layout a transport can carry
 * @KVSSD_WIRE_STOCK: heads 81h / transfers 85h in CDW2-3, CDW10-15 only
 *                    (24 / 28 payload bytes): Linux passthrough
 * @KVSSD_WIRE_FULL:  heads 89h / transfers 8Dh that also fill CDW4-9
 *                    (35 / 56 payload bytes): a driver that writes SQEs
 *                    itself (the pci transport)
 */
enum kvssd_wire_layout {
    KVSSD_WIRE_STOCK = 0,
    KVSSD_WIRE_FULL = 1,
};

/**
 * kvssd_store_layout() - the inline layout a Store uses on a transport
 * @transport: what the transport can carry
 * @method: PRP, INLINE or HYBRID
 *
 * On a full transport an inline Store of a 1..16-byte key is one 89h head
 * and 8Dh transfers; an inline Store of a long (staged) key uses the stock
 * layout, because the full head has no staged-key tag (docs/protocol.md
 * 7.4). A hybrid Store on a full transport, any key length, is
 * KVSSD_WIRE_FULL too: a stock head (81h, with its data pointer) carrying
 * the full-tail bit, then 8Dh transfers of 56 bytes (docs/protocol.md 7.3a).
 * On a stock transport every Store is stock.
 *
 * Return: KVSSD_WIRE_FULL or KVSSD_WIRE_STOCK.
 */
enum kvssd_wire_layout kvssd_store_layout(enum kvssd_wire_layout transport,
                                          enum kvssd_xfer_mode method, uint32_t key_len);
/**
 * kvssd_store_commands_layout() - kvssd_store_commands() on a transport
 * @transport: KVSSD_WIRE_FULL counts 35-byte heads and 56-byte transfers
 *             where kvssd_store_layout() picks the full layout (a hybrid
 *             head stays a stock head: 24 bytes minus the key, or 20 for a
 *             staged key; its transfers carry 56)
 */
uint32_t kvssd_store_commands_layout(enum kvssd_wire_layout transport, enum kvssd_xfer_mode method,
                                     uint32_t key_len, uint32_t value_len);

/**
 * struct kvssd_store_plan - a Store split into the commands that carry it
 *
 * Fill with kvssd_store_plan_init(), then call kvssd_store_plan_next() until
 * it returns false. Commands come in submission order: Key Stage (long
 * keys), then the Store or the inline head, then transfers by sequence.
 * The plan holds pointers to the caller's key and value.
 */
struct kvssd_store_plan {
    uint32_t nsid;
    const uint8_t *key;
    uint32_t key_len;
    uint32_t key_tag;
    uint32_t stream_tag;
    const uint8_t *value;
    uint32_t value_len;
    uint32_t options;
    enum kvssd_xfer_mode method;
    /* progress */
    uint32_t next_index; /* commands produced */
    uint32_t inline_off; /* value offset of the next inline byte */
    uint32_t seq;        /* next transfer sequence number */
    uint32_t total;      /* commands in the plan */
    enum kvssd_wire_layout layout; /* the inline layout the plan's commands use */
};

/**
 * kvssd_store_plan_init() - split a Store
 * @key_tag: staged-key tag (used when @key_len > 16)
 * @stream_tag: inline stream tag (used for INLINE / HYBRID)
 * @method: PRP, INLINE or HYBRID
 *
 * Return: 0, -KVSSD_ERR_KEY_SIZE, -KVSSD_ERR_VALUE_SIZE or -KVSSD_ERR_INVALID_ARGUMENT.
 */
int kvssd_store_plan_init(struct kvssd_store_plan *p, uint32_t nsid, const void *key,
                          uint32_t key_len, uint32_t key_tag, uint32_t stream_tag,
                          const void *value, uint32_t value_len, uint32_t options,
                          enum kvssd_xfer_mode method);
/**
 * kvssd_store_plan_init_layout() - kvssd_store_plan_init() on a transport
 * @transport: KVSSD_WIRE_FULL: an inline Store of a 1..16-byte key is split
 *             into one 89h head and 8Dh transfers (@stream_tag 0..255); a
 *             hybrid Store into a stock 81h head with the full-tail bit and
 *             8Dh transfers (@stream_tag 0..255)
 *
 * Return: as kvssd_store_plan_init(); -KVSSD_ERR_INVALID_ARGUMENT also for a
 * full-layout plan (inline or hybrid) whose @stream_tag is above 255.
 */
int kvssd_store_plan_init_layout(struct kvssd_store_plan *p, enum kvssd_wire_layout transport,
                                 uint32_t nsid, const void *key, uint32_t key_len, uint32_t key_tag,
                                 uint32_t stream_tag, const void *value, uint32_t value_len,
                                 uint32_t options, enum kvssd_xfer_mode method);
/** kvssd_store_plan_next() - encode the next command; false when the plan is done. */
bool kvssd_store_plan_next(struct kvssd_store_plan *p, struct kvssd_cmd *cmd);

/* ------------------------------------------------------------------ */
/* Devices (dev.c)                                                     */
/* ------------------------------------------------------------------ */

struct kvssd_dev;

/**
 * struct kvssd_dev_info - what Identify told about a KV namespace
 * @path: the generic char device opened (/dev/ngXnY)
 * @ctrl_path: the controller char device (/dev/nvmeX)
 * @nsid: namespace identifier
 * @model, @serial, @firmware: from Identify Controller
 * @nsze_bytes, @nuse_bytes: namespace size and utilization
 * @max_key_bytes: the longest key the library sends: the long-key maximum
 *   our extension advertises in the Identify page's vendor area (255), or,
 *   on a device without it, what a standard command carries (KVMKL, at most
 *   16); longer keys get -KVSSD_ERR_KEY_SIZE before any command is sent
 * @format_max_key_bytes: KV format 0's KV Key Max Length (KVMKL), what
 *   standard hosts size keys by (16 on this device)
 * @max_value_bytes, @max_keys: KV format 0 limits
 * @optimal_value_granularity_bytes: NOVG
 * @mdts: Identify Controller's MDTS (0: no limit, or Identify Controller failed)
 * @max_transfer_bytes: the longest data transfer of one command, 4 KiB << @mdts
 *   (pages of CAP.MPSMIN 0, as on this device and Linux's nvmet); 0 when
 *   there is no limit below 4 GiB. Linux's nvmet passthru target exports 7
 *   (512 KiB): larger Stores are refused before any command is sent
 *   (kvssd_store_check()), larger Retrieve buffers shortened to it.
 */
struct kvssd_dev_info {
    char path[64];
    char ctrl_path[64];
    uint32_t nsid;
    char model[41];
    char serial[21];
    char firmware[9];
    uint64_t nsze_bytes;
    uint64_t nuse_bytes;
    uint32_t max_key_bytes;
    uint32_t format_max_key_bytes;
    uint32_t max_value_bytes;
    uint32_t max_keys;
    uint32_t optimal_value_granularity_bytes;
    uint32_t mdts;
    uint32_t max_transfer_bytes;
};

/**
 * kvssd_open() - open a KV namespace
 * @path: its generic char device, e.g. "/dev/ng0n1"
 * @devp: the handle, on success
 *
 * Learns the NSID (NVME_IOCTL_ID), identifies controller and namespace,
 * checks the namespace speaks the KV command set, and loads the transfer
 * thresholds from $KVSSD_TRANSFER_CONFIG or KVSSD_DEFAULT_CONFIG_PATH when
 * present. The transfer mode starts as KVSSD_XFER_ADAPTIVE.
 *
 * Return: 0, -KVSSD_ERR_SYSTEM (open/ioctl failed; errno set),
 * -KVSSD_ERR_NO_DEVICE (not a KV namespace) or -KVSSD_ERR_CONFIG.
 */
int kvssd_open(const char *path, struct kvssd_dev **devp);
/**
 * kvssd_open_passthru() - open any NVMe namespace for raw commands
 * @path: a generic char device, e.g. "/dev/ng1n1" (need not be KV)
 * @devp: the handle, on success
 *
 * Learns the NSID only; no Identify, no KV check. Meant for kvssd_submit()
 * of commands the caller encodes (kvbench's baseline reads on a stock NVMe
 * namespace); the KV operations on such a handle get whatever status the
 * device returns.
 *
 * Return: 0 or -KVSSD_ERR_SYSTEM (errno set).
 */
int kvssd_open_passthru(const char *path, struct kvssd_dev **devp);
/** kvssd_close() - close the handle (NULL is allowed). */
void kvssd_close(struct kvssd_dev *dev);
/** kvssd_dev_info() - identify data learned by kvssd_open(). */
const struct kvssd_dev_info *kvssd_dev_info(const struct kvssd_dev *dev);
/**
 * kvssd_id_ns_kv_decode() - the limits of an Identify Namespace (KV) page
 * @page: the 4096 bytes of Identify CNS 05h, CSI 01h
 * @info: its nsze/nuse/key/value/keys/NOVG fields are filled
 *
 * @info->max_key_bytes comes from our extension's vendor area when it is
 * there (kvssd_id_ns_kv_long_key_max()), else from KVMKL capped at the 16
 * bytes a standard command carries: a device without Key Stage (91h) never
 * gets a staged key.
 *
 * Return: 0, or -KVSSD_ERR_NO_DEVICE when KVMKL is 0 (not a KV namespace).
 */
int kvssd_id_ns_kv_decode(const void *page, struct kvssd_dev_info *info);
/**
 * kvssd_discover() - list the KV namespaces of this machine
 * @paths: array of @max buffers of 64 bytes, filled with /dev/ngXnY paths
 *
 * Walks the NVMe topology with libnvme's scan API (namespaces whose CSI is
 * KV) and, for namespaces without a block driver that the scan does not
 * report, probes each /dev/ng* char device with Identify.
 *
 * Return: number of namespaces found (may exceed @max), or a negative error.
 */
int kvssd_discover(char (*paths)[64], int max);
/**
 * kvssd_store_check() - whether kvssd_store() can send a value of @value_len bytes
 * @dev: the handle; its transfer mode picks the method, as kvssd_store() does
 * @msg: on refusal, a sentence naming the size, the limit and what fits, e.g.
 *   "value of 2097152 bytes exceeds the controller's maximum transfer of
 *   524288 bytes (MDTS 7); a prp Store carries at most 524288 bytes, an
 *   inline one any size" (may be NULL)
 *
 * kvssd_store() and kvssd_store_async() make the same check before sending
 * anything.
 *
 * Return: 0, or -KVSSD_ERR_VALUE_SIZE (past 2 MiB, or a data pointer past
 * info.max_transfer_bytes).
 */
int kvssd_store_check(const struct kvssd_dev *dev, uint32_t value_len, char *msg, size_t msg_len);
/** kvssd_set_xfer_mode() - method Stores use from now on. */
void kvssd_set_xfer_mode(struct kvssd_dev *dev, enum kvssd_xfer_mode mode);
/** kvssd_get_xfer_mode() - the mode Stores use (KVSSD_XFER_ADAPTIVE after kvssd_open()). */
enum kvssd_xfer_mode kvssd_get_xfer_mode(const struct kvssd_dev *dev);
/** kvssd_set_xfer_config() - replace the adaptive thresholds. */
void kvssd_set_xfer_config(struct kvssd_dev *dev, const struct kvssd_xfer_config *cfg);
/** kvssd_get_xfer_config() - the adaptive thresholds in force. */
const struct kvssd_xfer_config *kvssd_get_xfer_config(const struct kvssd_dev *dev);

/**
 * kvssd_tag_alloc() - reserve a tag for an inline stream or a staged key
 * Return: a tag 0..4095, or -KVSSD_ERR_TAG_TABLE_FULL. Thread safe.
 */
int kvssd_tag_alloc(struct kvssd_dev *dev);
/** kvssd_tag_free() - release a tag from kvssd_tag_alloc(). */
void kvssd_tag_free(struct kvssd_dev *dev, uint32_t tag);

/* ------------------------------------------------------------------ */
/* Synchronous operations (sync.c); thread safe on one handle          */
/* ------------------------------------------------------------------ */

/**
 * kvssd_submit() - issue one command and wait for it
 * @res: status, DW0, DW1 (may be NULL)
 *
 * Return: 0, the mapped negative error of a non-zero status, or -KVSSD_ERR_SYSTEM.
 */
int kvssd_submit(struct kvssd_dev *dev, struct kvssd_cmd *cmd, struct kvssd_result *res);

/**
 * kvssd_store() - store a key-value pair
 * @options: 0, KVSSD_STORE_OPT_ONLY_IF_EXISTS or KVSSD_STORE_OPT_ONLY_IF_ABSENT
 *
 * The transfer method follows kvssd_set_xfer_mode(). Return: 0 or an error;
 * -KVSSD_ERR_KEY_NOT_FOUND / -KVSSD_ERR_KEY_EXISTS when an option refused;
 * -KVSSD_ERR_VALUE_SIZE, nothing sent, as kvssd_store_check() says.
 */
int kvssd_store(struct kvssd_dev *dev, const void *key, uint32_t key_len, const void *value,
                uint32_t value_len, uint32_t options, struct kvssd_result *res);
/**
 * kvssd_retrieve() - read a value (whole or its first @buf_len bytes)
 * @buf: destination; may be NULL when @buf_len is 0 (size only)
 * @value_len: the value's full size (may be NULL)
 *
 * Return: 0 or an error (-KVSSD_ERR_KEY_NOT_FOUND for a missing key).
 * min(@buf_len, *@value_len) bytes of @buf are valid. The Retrieve asks for
 * at most info.max_transfer_bytes: a longer value that @buf could hold is
 * -KVSSD_ERR_VALUE_SIZE (*@value_len set), never a short read.
 */
int kvssd_retrieve(struct kvssd_dev *dev, const void *key, uint32_t key_len, void *buf,
                   uint32_t buf_len, uint32_t *value_len, struct kvssd_result *res);
/** kvssd_delete() - delete a key. */
int kvssd_delete(struct kvssd_dev *dev, const void *key, uint32_t key_len,
                 struct kvssd_result *res);
/** kvssd_exist() - 0 when the key exists, -KVSSD_ERR_KEY_NOT_FOUND when not. */
int kvssd_exist(struct kvssd_dev *dev, const void *key, uint32_t key_len, struct kvssd_result *res);
/**
 * kvssd_list() - keys from a start key, raw List data
 * @start: start key (NULL/0 = from the beginning)
 * @buf: receives the List data (see kvssd_list_parse())
 *
 * Return: number of keys returned, or an error.
 */
int kvssd_list(struct kvssd_dev *dev, const void *start, uint32_t start_len, void *buf,
               uint32_t buf_len, struct kvssd_result *res);
/**
 * kvssd_list_parse() - walk List data
 * @off: cursor; start at 0
 *
 * Return: 1 with @key/@key_len set, 0 at the end, -KVSSD_ERR_TRANSFER if
 * the data is malformed.
 */
int kvssd_list_parse(const void *buf, uint32_t buf_len, uint32_t *off, const uint8_t **key,
                     uint32_t *key_len);
/** kvssd_flush() - Flush (00h). */
int kvssd_flush(struct kvssd_dev *dev, struct kvssd_result *res);
/** kvssd_format() - Format NVM of the namespace through the controller: erases everything. */
int kvssd_format(struct kvssd_dev *dev, struct kvssd_result *res);
/** kvssd_get_stats() - read the statistics log page (LID C0h). */
int kvssd_get_stats(struct kvssd_dev *dev, struct kvssd_stats_log *log, struct kvssd_result *res);
/**
 * kvssd_get_config() - read the device's configuration log page (LID C1h):
 * its preset, packing, index design, geometry, timing and firmware version.
 * The name fields come back NUL terminated.
 *
 * Return: 0; -KVSSD_ERR_TRANSFER when the page is not of version
 * KVSSD_CONFIG_LOG_VERSION; or the command's error (a device without the
 * page: Invalid Log Page).
 */
int kvssd_get_config(struct kvssd_dev *dev, struct kvssd_config_log *log, struct kvssd_result *res);
/** kvssd_reset_stats() - Set Features C0h: zero every counter. */
int kvssd_reset_stats(struct kvssd_dev *dev, struct kvssd_result *res);

/**
 * struct kvssd_stats_field - one 64-bit counter of struct kvssd_stats_log
 * @name: its name, e.g. "data_h2d_bytes" or "latency_store_p99_ns"
 * @offset: byte offset in the log page
 */
struct kvssd_stats_field {
    const char *name;
    size_t offset;
};

/** kvssd_stats_fields() - every counter of the log page, in layout order. */
const struct kvssd_stats_field *kvssd_stats_fields(size_t *count);
/** kvssd_stats_get() - read one counter. */
uint64_t kvssd_stats_get(const struct kvssd_stats_log *log, const struct kvssd_stats_field *f);

/**
 * struct kvssd_iter - a prefix iterator (Iter Open/Read/Close)
 *
 * Opaque to callers except through the functions below.
 */
struct kvssd_iter {
    struct kvssd_dev *dev;
    uint32_t handle;
    bool with_values;
    bool at_end;
    uint8_t *buf;
    uint32_t buf_len;
    uint32_t filled; /* bytes of entries in buf */
    uint32_t off;    /* cursor into the entries */
    uint32_t left;   /* entries left in buf */
    uint8_t prefix[KVSSD_KEY_MAX]; /* bytes past the 4th are matched on the host */
    uint32_t prefix_len;
};

/**
 * kvssd_iter_open() - open a prefix iterator
 * @prefix: the prefix bytes (0..4 are significant; longer prefixes are
 *          filtered on the host by kvssd_iter_next())
 * @buf_len: bytes per Iter Read batch (e.g. 64 KiB)
 *
 * Return: 0 or an error (-KVSSD_ERR_ITERATOR_LIMIT when 16 are open).
 */
int kvssd_iter_open(struct kvssd_dev *dev, struct kvssd_iter *it, const void *prefix,
                    uint32_t prefix_len, bool with_values, uint32_t buf_len);
/**
 * kvssd_iter_next() - the next entry
 *
 * Return: 1 with @key (and @value when opened with values) pointing into
 * the iterator's buffer (valid until the next call), 0 at the end, or an error.
 */
int kvssd_iter_next(struct kvssd_iter *it, const uint8_t **key, uint32_t *key_len,
                    const uint8_t **value, uint32_t *value_len);
/** kvssd_iter_close() - Iter Close and free the buffer. */
int kvssd_iter_close(struct kvssd_iter *it);
/**
 * kvssd_iter_parse_entry() - decode one Iter Read entry (pure, for tests)
 * Return: bytes the entry occupies (padded), or 0 if it overruns @len.
 */
uint32_t kvssd_iter_parse_entry(const uint8_t *p, uint32_t len, bool with_values,
                                const uint8_t **key, uint32_t *key_len, const uint8_t **value,
                                uint32_t *value_len);
/** kvssd_prefix_word() - CDW10/CDW11 of Iter Open for a prefix of 0..4 significant bytes. */
void kvssd_prefix_word(const void *prefix, uint32_t prefix_len, uint32_t *word, uint32_t *mask);

/* ------------------------------------------------------------------ */
/* Asynchronous operations (async.c): one queue per thread            */
/* ------------------------------------------------------------------ */

struct kvssd_queue;

/**
 * kvssd_cb - completion callback
 * @arg: the caller's argument
 * @err: 0 or a negative enum kvssd_err
 * @res: status, DW0 (Retrieve: full value size), commands issued
 */
typedef void (*kvssd_cb)(void *arg, int err, const struct kvssd_result *res);

/**
 * kvssd_queue_create() - an io_uring for passthrough commands
 * @depth: 1..256 commands in flight (and operations outstanding)
 *
 * The same as kvssd_queue_create_flags() with @flags 0.
 *
 * Return: 0, -KVSSD_ERR_INVALID_ARGUMENT (depth out of range) or
 * -KVSSD_ERR_SYSTEM (io_uring_queue_init failed; errno set).
 */
int kvssd_queue_create(struct kvssd_dev *dev, unsigned depth, struct kvssd_queue **qp);

/*
 * KVSSD_QUEUE_POLLED - completions are polled for, not waited for: the ring
 * is set up with IORING_SETUP_IOPOLL, so kvssd_queue_poll() spins in the
 * kernel on the NVMe completion queue instead of sleeping until its
 * interrupt. The driver sends polled commands to its poll queues, which
 * have no interrupt at all, when it has some (Linux's nvme.poll_queues=N;
 * scripts/run-guest.sh --poll-queues N); without them the commands go to
 * an interrupt-driven queue and the poll waits for the interrupt. Costs a
 * CPU spinning while commands are in flight.
 */
#define KVSSD_QUEUE_POLLED (1u << 0)

/**
 * kvssd_queue_create_flags() - an io_uring for passthrough commands
 * @depth: 1..256 commands in flight (and operations outstanding)
 * @flags: 0 or KVSSD_QUEUE_POLLED
 *
 * Return: 0, -KVSSD_ERR_INVALID_ARGUMENT (depth out of range, an unknown
 * flag), -KVSSD_ERR_NOT_SUPPORTED (a pci: device) or -KVSSD_ERR_SYSTEM
 * (io_uring_queue_init failed; errno set).
 */
int kvssd_queue_create_flags(struct kvssd_dev *dev, unsigned depth, unsigned flags,
                             struct kvssd_queue **qp);
/**
 * kvssd_queue_destroy() - wait for the commands in flight, then free the ring
 * @q: a queue from kvssd_queue_create(), or NULL
 *
 * Operations still outstanding are driven to completion (their callbacks run).
 */
void kvssd_queue_destroy(struct kvssd_queue *q);
/**
 * kvssd_store_async() - queue a Store; @cb runs from kvssd_queue_poll()
 *
 * @key and @value must stay valid until the callback. Return: 0,
 * -KVSSD_ERR_BUSY when @depth operations are outstanding, or a size error.
 */
int kvssd_store_async(struct kvssd_queue *q, const void *key, uint32_t key_len, const void *value,
                      uint32_t value_len, uint32_t options, kvssd_cb cb, void *arg);
/**
 * kvssd_retrieve_async() - queue a Retrieve into @buf (@buf_len 0: size only)
 *
 * The callback's res->dw0 is the value's full size; min(@buf_len, dw0)
 * bytes of @buf are valid. @key and @buf must stay valid until the callback.
 * Return: 0, -KVSSD_ERR_BUSY, -KVSSD_ERR_KEY_SIZE or -KVSSD_ERR_INVALID_ARGUMENT.
 */
int kvssd_retrieve_async(struct kvssd_queue *q, const void *key, uint32_t key_len, void *buf,
                         uint32_t buf_len, kvssd_cb cb, void *arg);
/** kvssd_delete_async() - queue a Delete; returns like kvssd_retrieve_async(). */
int kvssd_delete_async(struct kvssd_queue *q, const void *key, uint32_t key_len, kvssd_cb cb,
                       void *arg);
/** kvssd_exist_async() - queue an Exist: the callback gets 0 or -KVSSD_ERR_KEY_NOT_FOUND. */
int kvssd_exist_async(struct kvssd_queue *q, const void *key, uint32_t key_len, kvssd_cb cb,
                      void *arg);
/**
 * kvssd_queue_poll() - submit what is queued, reap completions, run callbacks
 * @min_ops: wait until at least this many operations completed (0 = don't wait)
 *
 * With @min_ops 0, queued commands are handed to the kernel only while fewer
 * than half the queue's depth are with the device; the rest wait for the
 * next poll, so that refills go in batches (one io_uring_enter for several
 * commands). A poll that has to wait hands over everything queued first.
 *
 * Return: operations completed, or -KVSSD_ERR_SYSTEM.
 */
int kvssd_queue_poll(struct kvssd_queue *q, unsigned min_ops);
/** kvssd_queue_outstanding() - operations queued and not yet completed. */
unsigned kvssd_queue_outstanding(const struct kvssd_queue *q);

#ifdef __cplusplus
}
#endif

#endif /* KVSSD_LIBKVSSD_H */
