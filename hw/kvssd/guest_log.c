/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the guest's commands did, for the user watching the device: every
 * completed command passes here once with its status (queues.c, sq_run), for
 * the trace points and for the guest-error log (-d guest_errors).
 *
 * Trace points (hw/kvssd/trace-events, docs/device.md "Trace events"): each
 * KV, inline, staged-key and iterator command decoded from its SQE; a GC
 * run during a command, from the firmware's counters before and after it.
 *
 * Guest errors (docs/device.md "Guest errors"): a status that says the
 * guest's command was malformed is one LOG_GUEST_ERROR line naming the queue,
 * the command identifier, the opcode and the status; an outcome a correct
 * guest also sees (a key that does not exist, the end of an iteration, a
 * full device, a media error, an abort it asked for) is not logged. At most
 * KVSSD_GUEST_ERROR_LINES lines per second of QEMU_CLOCK_VIRTUAL, then one
 * line saying how many were not logged. Each status's name and class are
 * guest_log.h's table.
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"

#include "guest_log.h"
#include "kvssd.h"
#include "trace.h"

#define SECOND_NS 1000000000ll

/*
 * Command names, by queue (admin or I/O) and the namespace's command set;
 * the KV set's are its rows' (<kvssd/kv_opcodes.def>).
 */
struct opcode_info {
    uint8_t opc;
    const char *name;
};

static const struct opcode_info admin_opcodes[] = {
    {KVSSD_ADM_DELETE_SQ, "Delete I/O SQ"},
    {KVSSD_ADM_CREATE_SQ, "Create I/O SQ"},
    {KVSSD_ADM_GET_LOG_PAGE, "Get Log Page"},
    {KVSSD_ADM_DELETE_CQ, "Delete I/O CQ"},
    {KVSSD_ADM_CREATE_CQ, "Create I/O CQ"},
    {KVSSD_ADM_IDENTIFY, "Identify"},
    {KVSSD_ADM_ABORT, "Abort"},
    {KVSSD_ADM_SET_FEATURES, "Set Features"},
    {KVSSD_ADM_GET_FEATURES, "Get Features"},
    {KVSSD_ADM_ASYNC_EVENT, "Asynchronous Event Request"},
    {KVSSD_ADM_DBBUF_CONFIG, "Doorbell Buffer Config"},
    {KVSSD_ADM_FORMAT_NVM, "Format NVM"},
    {KVSSD_ADM_FTL_CHECK, "FTL Check"},
};

static const struct opcode_info nvm_opcodes[] = {
    {KVSSD_NVM_OPC_FLUSH, "Flush"},
    {KVSSD_NVM_OPC_WRITE, "Write"},
    {KVSSD_NVM_OPC_READ, "Read"},
    {KVSSD_NVM_OPC_WRITE_ZEROES, "Write Zeroes"},
    {KVSSD_NVM_OPC_DSM, "Dataset Management"},
};

static const char *opcode_name(KvssdState *n, uint16_t sqid, uint8_t opc)
{
    const struct opcode_info *t = sqid == 0 ? admin_opcodes : nvm_opcodes;
    size_t count = sqid == 0 ? ARRAY_SIZE(admin_opcodes) : ARRAY_SIZE(nvm_opcodes);

    if (sqid != 0 && !n->nvm) {
        const struct kvssd_kv_opcode_info *row = kvssd_kv_opcode_info(opc);
        return row ? row->name : "unknown KV command";
    }
    for (size_t i = 0; i < count; i++) {
        if (t[i].opc == opc) {
            return t[i].name;
        }
    }
    return sqid == 0 ? "unknown admin command" : "unknown NVM command";
}

/* ---- the guest-error log ------------------------------------------------- */

/*
 * May one more line be logged now? Starts a new second when the current one
 * is over, first logging how many errors the last one did not.
 */
static bool guest_log_admit(KvssdState *n)
{
    KvssdGuestLog *g = &n->glog;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (now - g->window_start_ns >= SECOND_NS || now < g->window_start_ns) {
        kvssd_guest_log_flush(n);
        g->window_start_ns = now;
        g->lines = 0;
    }
    if (g->lines >= KVSSD_GUEST_ERROR_LINES) {
        g->suppressed++;
        return false;
    }
    g->lines++;
    return true;
}

void kvssd_guest_log_flush(KvssdState *n)
{
    KvssdGuestLog *g = &n->glog;

    if (g->suppressed) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "kvssd: %" PRIu64 " more guest errors not logged (at most %d lines a "
                      "second)\n",
                      g->suppressed, KVSSD_GUEST_ERROR_LINES);
        g->suppressed = 0;
    }
}

void kvssd_guest_error(KvssdState *n, const char *fmt, ...)
{
    va_list ap;
    g_autofree char *text = NULL;

    if (!qemu_loglevel_mask(LOG_GUEST_ERROR) || !guest_log_admit(n)) {
        return;
    }
    va_start(ap, fmt);
    text = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qemu_log_mask(LOG_GUEST_ERROR, "kvssd: %s\n", text);
}

/* ---- trace points -------------------------------------------------------- */

/* A KV command's key: its length, and the staged-key tag a long key names (-1: in the SQE). */
static int staged_tag(const struct kvssd_sqe *sqe, uint32_t key_len)
{
    return key_len > KVSSD_KEY_INLINE_MAX ? (int)(sqe->cdw[2] & KVSSD_TAG_MASK) : -1;
}

/*
 * The trace points of the KV personality's commands, each decoded from the
 * SQE: trace_row_<trace>() for each trace event a row of
 * <kvssd/kv_opcodes.def> names.
 */
static void trace_row_kv_flush(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    trace_kvssd_kv_flush(sqid, kvssd_sqe_cid(sqe), status);
}

static void trace_row_kv_store(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    const uint32_t *d = sqe->cdw;
    uint32_t klen = d[11] & KVSSD_CDW11_KEY_LEN_MASK;

    trace_kvssd_kv_store(sqid, kvssd_sqe_cid(sqe), klen, staged_tag(sqe, klen), d[10],
                         (d[11] >> KVSSD_CDW11_OPTIONS_SHIFT) & KVSSD_CDW11_OPTIONS_MASK, status);
}

static void trace_row_kv_retrieve(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    uint32_t klen = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;

    trace_kvssd_kv_retrieve(sqid, kvssd_sqe_cid(sqe), klen, staged_tag(sqe, klen), sqe->cdw[10],
                            status);
}

static void trace_row_kv_delete(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    uint32_t klen = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;

    trace_kvssd_kv_delete(sqid, kvssd_sqe_cid(sqe), klen, staged_tag(sqe, klen), status);
}

static void trace_row_kv_exist(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    uint32_t klen = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;

    trace_kvssd_kv_exist(sqid, kvssd_sqe_cid(sqe), klen, staged_tag(sqe, klen), status);
}

static void trace_row_kv_list(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    uint32_t klen = sqe->cdw[11] & KVSSD_CDW11_KEY_LEN_MASK;

    trace_kvssd_kv_list(sqid, kvssd_sqe_cid(sqe), klen, staged_tag(sqe, klen), sqe->cdw[10],
                        status);
}

static void trace_row_inline_head(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    const uint32_t *d = sqe->cdw;
    bool full = kvssd_sqe_opcode(sqe) == KVSSD_OPC_INLINE_HEAD_FULL;
    uint32_t hklen = d[10] >> KVSSD_INLINE_KLEN_SHIFT;
    uint32_t tag = full ? d[11] & KVSSD_INLINE_FULL_MAX_TAG : d[11] & KVSSD_TAG_MASK;

    trace_kvssd_inline_head(sqid, kvssd_sqe_cid(sqe), tag, full ? "full" : "stock", hklen,
                            full ? -1 : staged_tag(sqe, hklen), d[10] & KVSSD_INLINE_VSIZE_MASK,
                            !full && (d[11] & KVSSD_INLINE_HYBRID),
                            !full && (d[11] & KVSSD_INLINE_FULL_TAIL), status);
}

static void trace_row_inline_xfer(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    bool full = kvssd_sqe_opcode(sqe) == KVSSD_OPC_INLINE_XFER_FULL;
    uint32_t ts = full ? sqe->cdw[1] : sqe->cdw[10]; /* the full layout has no NSID: CDW1 */

    trace_kvssd_inline_xfer(sqid, kvssd_sqe_cid(sqe), ts & KVSSD_TAG_MASK, full ? "full" : "stock",
                            ts >> KVSSD_INLINE_SEQ_SHIFT, status);
}

static void trace_row_key_stage(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    trace_kvssd_key_stage(sqid, kvssd_sqe_cid(sqe), sqe->cdw[11] & KVSSD_TAG_MASK,
                          sqe->cdw[10] & 0xffu, status);
}

static void trace_row_iter_open(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    const uint32_t *d = sqe->cdw;

    trace_kvssd_iter_open(sqid, kvssd_sqe_cid(sqe), d[10], d[11],
                          (d[12] & KVSSD_ITER_FLAG_KEY_VALUE) != 0, status);
}

static void trace_row_iter_read(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    trace_kvssd_iter_read(sqid, kvssd_sqe_cid(sqe), sqe->cdw[11] & 0xffu, sqe->cdw[10], status);
}

static void trace_row_iter_close(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    trace_kvssd_iter_close(sqid, kvssd_sqe_cid(sqe), sqe->cdw[10] & 0xffu, status);
}

/* The trace point of a KV-personality command: its row's. */
static void trace_kv_command(uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    switch (kvssd_sqe_opcode(sqe)) {
#define KVSSD_KV_OPCODE(sym, opc, set, name, dir, effects, handler, trace, counter, encoder, verb) \
    case KVSSD_OPC_##sym:                                                                          \
        trace_row_##trace(sqid, sqe, status);                                                      \
        break;
#include "kvssd/kv_opcodes.def"
    default:
        break;
    }
}

/*
 * A GC run during the command: the firmware's GC counters moved since the
 * previous command. Reads the statistics only while the trace point is on
 * (the first command after it is turned on takes the counters as the base;
 * a statistics reset, counters going down, does too).
 */
static void trace_gc(KvssdState *n, uint16_t sqid, const struct kvssd_sqe *sqe)
{
    KvssdGuestLog *g = &n->glog;
    struct kvftl_stats st;

    if (!trace_event_get_state_backends(TRACE_KVSSD_GC) || !n->ftl) {
        g->gc_valid = false;
        return;
    }
    kvftl_stats_get(n->ftl, &st);
    if (g->gc_valid && st.gc_runs > g->gc_runs && st.gc_relocated_bytes >= g->gc_relocated_bytes &&
        st.nand_blocks_erased >= g->gc_blocks_erased && st.gc_foreground_stalls >= g->gc_stalls) {
        trace_kvssd_gc(sqid, kvssd_sqe_cid(sqe), kvssd_sqe_opcode(sqe), st.gc_runs - g->gc_runs,
                       st.gc_relocated_bytes - g->gc_relocated_bytes,
                       st.nand_blocks_erased - g->gc_blocks_erased,
                       st.gc_foreground_stalls - g->gc_stalls, st.free_stripes, st.total_stripes);
    }
    g->gc_valid = true;
    g->gc_runs = st.gc_runs;
    g->gc_relocated_bytes = st.gc_relocated_bytes;
    g->gc_blocks_erased = st.nand_blocks_erased;
    g->gc_stalls = st.gc_foreground_stalls;
}

void kvssd_command_done(KvssdState *n, uint16_t sqid, const struct kvssd_sqe *sqe, uint16_t status)
{
    uint8_t opc = kvssd_sqe_opcode(sqe);

    trace_kvssd_cmd_done(sqid, kvssd_sqe_cid(sqe), opc, status);
    if (sqid != 0 && n->ns) {
        trace_kv_command(sqid, sqe, status);
    }
    trace_gc(n, sqid, sqe);
    if (status == KVSSD_SC_SUCCESS || !qemu_loglevel_mask(LOG_GUEST_ERROR)) {
        return;
    }
    const struct kvssd_status_info *si = kvssd_status_lookup(status);
    if (si && si->guest_error) {
        kvssd_guest_error(n,
                          "sq %" PRIu16 " cid %" PRIu16 " opcode 0x%02" PRIx8
                          " (%s): %s (status 0x%04" PRIx16 ")",
                          sqid, kvssd_sqe_cid(sqe), opc, opcode_name(n, sqid, opc), si->name,
                          status);
    }
}
