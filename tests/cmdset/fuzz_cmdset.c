/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the KV command set: every input is a sequence of
 * commands a guest could send. Each 72-byte record is a 64-byte SQE, a
 * 4-byte clock step (ns) and a 4-byte data-pointer control word:
 *   bits 15:0  status to fail transfers with (0 = transfers succeed)
 *   bits 31:16 host buffer length in 64-byte units
 * The host buffer is the rest of the input (after the last record),
 * repeated. The device must never crash, leak or trip a sanitizer, the
 * firmware must stay consistent (kvftl_check), and streams must never hold
 * more than the table allows.
 *
 * Build: meson setup -Dfuzz=true with CC=clang (adds -fsanitize=fuzzer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdset.h"
#include "kv_internal.h"
#include "kvftl_small.h"

#define RECORD_BYTES 72
#define MAX_RECORDS 256

static struct kvftl *ftl;
static struct kvssd_ns *ns;
static struct kvssd_xfer_counters xfer;
static uint64_t now_ns = 1;

struct fuzz_host {
    const uint8_t *src;
    size_t src_len;
    uint8_t *sink;
    uint32_t len;
    uint16_t fail;
};

static uint16_t fuzz_from_host(void *opaque, uint64_t offset, void *buf, uint32_t len)
{
    struct fuzz_host *h = opaque;
    uint8_t *out = buf;

    if (h->fail) {
        return h->fail;
    }
    if (offset > h->len || len > h->len - offset) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    for (uint32_t i = 0; i < len; i++) {
        out[i] = h->src_len ? h->src[(offset + i) % h->src_len] : 0;
    }
    return KVSSD_SC_SUCCESS;
}

static uint16_t fuzz_to_host(void *opaque, uint64_t offset, const void *buf, uint32_t len)
{
    struct fuzz_host *h = opaque;

    if (h->fail) {
        return h->fail;
    }
    if (offset > h->len || len > h->len - offset) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(h->sink + offset, buf, len);
    return KVSSD_SC_SUCCESS;
}

static void fuzz_init(void)
{
    struct kvftl_config c;
    struct kvssd_ns_config nc = {.tag_table_entries = 16, .inline_timeout_ns = 1000000};
    char err[256];

    /* 1 x 2 dies x 16 blocks x 128 pages x 16 KiB = 64 MiB: fills up under fuzzing. */
    kvftl_config_small(&c, (struct kvftl_small_geometry){.channels = 1,
                                                         .dies_per_channel = 2,
                                                         .blocks_per_die = 16,
                                                         .pages_per_block = 128,
                                                         .page_size_bytes = 16384});
    ftl = kvftl_open(&c, err, sizeof(err));
    if (!ftl) {
        fprintf(stderr, "kvftl_open: %s\n", err);
        abort();
    }
    ns = kvssd_ns_new(ftl, &nc, &xfer, err, sizeof(err));
    if (!ns) {
        fprintf(stderr, "kvssd_ns_new: %s\n", err);
        abort();
    }
}

/* Every status the command set documents (docs/protocol.md section 8). */
static bool documented_status(uint16_t st)
{
    switch (st) {
    case KVSSD_SC_SUCCESS:
    case KVSSD_SC_INVALID_OPCODE:
    case KVSSD_SC_INVALID_FIELD:
    case KVSSD_SC_DATA_XFER_ERROR:
    case KVSSD_SC_INTERNAL_ERROR:
    case KVSSD_SC_CAPACITY_EXCEEDED:
    case KVSSD_SC_INVALID_VALUE_SIZE:
    case KVSSD_SC_INVALID_KEY_SIZE:
    case KVSSD_SC_KEY_DOES_NOT_EXIST:
    case KVSSD_SC_KEY_EXISTS:
    case KVSSD_SC_INLINE_UNKNOWN_TAG:
    case KVSSD_SC_INLINE_BAD_SEQUENCE:
    case KVSSD_SC_INLINE_OVERFLOW:
    case KVSSD_SC_INLINE_TAG_IN_USE:
    case KVSSD_SC_INLINE_EXPIRED:
    case KVSSD_SC_TAG_TABLE_FULL:
    case KVSSD_SC_STAGED_KEY_UNKNOWN:
    case KVSSD_SC_ITERATOR_LIMIT:
    case KVSSD_SC_INVALID_ITERATOR:
    case KVSSD_SC_ITERATOR_END:
        return true;
    default:
        return false;
    }
}

static void violation(const char *what, const struct kvssd_sqe *sqe, const struct kvssd_req *req)
{
    fprintf(stderr, "fuzz_cmdset: %s (opcode %02xh status %04xh dw0 %u dw1 %u)\n", what,
            kvssd_sqe_opcode(sqe), req->status, req->dw0, req->dw1);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t records = size / RECORD_BYTES;
    static uint8_t *sink;
    char err[256];

    if (!ns) {
        fuzz_init();
        sink = malloc((size_t)0xffff * 64);
    } else {
        /* Every input starts from an empty device, so that crashes replay. */
        struct kvftl_cpl cpl;

        kvssd_ns_reset(ns);
        kvftl_format(ftl, now_ns, &cpl);
    }
    if (records > MAX_RECORDS) {
        records = MAX_RECORDS;
    }
    for (size_t i = 0; i < records; i++) {
        const uint8_t *rec = data + i * RECORD_BYTES;
        struct kvssd_sqe sqe;
        uint32_t step, ctl;
        struct fuzz_host host;
        struct kvssd_req req = {0};

        memcpy(&sqe, rec, sizeof(sqe));
        memcpy(&step, rec + 64, 4);
        memcpy(&ctl, rec + 68, 4);
        host.src = data + records * RECORD_BYTES;
        host.src_len = size - records * RECORD_BYTES;
        host.sink = sink;
        host.len = (ctl >> 16) * 64u;
        host.fail = ctl & 0xffff;
        now_ns += step;
        req.sqe = &sqe;
        req.now_ns = now_ns;
        req.dptr.opaque = &host;
        req.dptr.from_host = fuzz_from_host;
        req.dptr.to_host = fuzz_to_host;
        kvssd_kv_execute(ns, &req);
        if (req.done_ns < req.now_ns) {
            violation("completion before arrival", &sqe, &req);
        }
        if (!documented_status(req.status) && !(host.fail && req.status == host.fail)) {
            violation("undocumented status", &sqe, &req);
        }
        if (!kvssd_kv_opcode_supported(kvssd_sqe_opcode(&sqe)) &&
            req.status != KVSSD_SC_INVALID_OPCODE) {
            violation("unknown opcode executed", &sqe, &req);
        }
        if (req.dw1 != 0 && req.dw1 != KVSSD_INLINE_DW1_STORED) {
            violation("DW1 other than 0 or STORED", &sqe, &req);
        }
        if (kvssd_tags_in_use(ns) > 16 ||
            kvssd_tags_stream_bytes(ns) > 16 * (uint64_t)(KVFTL_VALUE_MAX_BYTES + 16384)) {
            violation("tag table beyond its bound", &sqe, &req);
        }
        if ((step & 0xff) == 0xff) {
            kvssd_ns_expire(ns, now_ns);
        }
    }
    if (kvftl_check(ftl, err, sizeof(err)) != 0) {
        fprintf(stderr, "kvftl_check: %s\n", err);
        abort();
    }
    return 0;
}
