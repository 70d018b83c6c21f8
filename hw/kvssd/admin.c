/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The admin command set (see admin.h). No QEMU types: structures are built
 * in plain byte buffers with explicit little-endian stores and moved to the
 * host through the command's struct kvssd_dptr.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"

#define ID_BYTES 4096
#define ADMIN_MDTS_UNIT_BYTES 4096u /* MDTS counts pages of CAP.MPSMIN = 0: 4 KiB */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = v;
    p[1] = v >> 8;
}
static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v);
    put16(p + 2, v >> 16);
}
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, v);
    put32(p + 4, v >> 32);
}

/* ASCII field padded with spaces (Identify SN/MN/FR). */
static void put_str(uint8_t *p, size_t len, const char *s)
{
    size_t n = strlen(s);
    memset(p, ' ', len);
    memcpy(p, s, n < len ? n : len);
}

static uint16_t to_host(struct kvssd_admin_req *req, const void *buf, uint32_t len)
{
    if (len == 0) {
        return KVSSD_SC_SUCCESS;
    }
    return req->dptr.to_host(req->dptr.opaque, 0, buf, len);
}

/*
 * The firmware's user capacity: what Stores may fill (live blobs rounded to
 * the placement unit plus index pages), after GC's reserve and
 * over-provisioning. Reported as NSZE/NCAP/TNVMCAP so that a host never sees
 * more room than the FTL admits.
 */
uint64_t kvssd_admin_capacity_bytes(const struct kvssd_admin *a)
{
    struct kvftl_stats st;

    if (kvssd_admin_nvm(a)) {
        return kvftl_block_lbas(a->ftl) * kvftl_get_config(a->ftl)->lba_bytes;
    }
    kvftl_stats_get(a->ftl, &st);
    return st.capacity_bytes;
}

bool kvssd_admin_nvm(const struct kvssd_admin *a)
{
    return kvftl_get_config(a->ftl)->command_set == KVFTL_CMDSET_NVM;
}

/* The namespace's Command Set Identifier: NVM (00h) or KV (01h), by the personality. */
static uint8_t ns_csi(const struct kvssd_admin *a)
{
    return kvssd_admin_nvm(a) ? KVSSD_CSI_NVM : KVSSD_CSI_KV;
}

/* What NUSE counts: the bytes the capacity check counts. */
static uint64_t used_bytes(const struct kvftl_stats *st)
{
    return st->live_nand_bytes + st->index_nand_bytes;
}

void kvssd_admin_init(struct kvssd_admin *a)
{
    memset(&a->feat, 0, sizeof(a->feat));
    a->feat.temp_over_k = 343;       /* = WCTEMP */
    a->feat.temp_under_k = 0;
    a->feat.wce = a->vwc_present;
    a->feat.nsqa = a->max_ioqpairs - 1;
    a->feat.ncqa = a->max_ioqpairs - 1;
    a->feat.iocs_profile = 0;
    for (uint32_t v = 0; v < KVSSD_ADMIN_MAX_VECTORS; v++) {
        a->feat.irq_vector_config[v] = v;
    }
    a->nr_aer = 0;
    a->nr_events = 0;
}

void kvssd_admin_reset(struct kvssd_admin *a)
{
    a->nr_aer = 0;
    a->nr_events = 0;
}

bool kvssd_admin_event(struct kvssd_admin *a, uint32_t event, uint16_t *cid)
{
    if (a->nr_aer > 0) {
        *cid = a->aer_cids[0];
        memmove(a->aer_cids, a->aer_cids + 1, (a->nr_aer - 1) * sizeof(a->aer_cids[0]));
        a->nr_aer--;
        return true;
    }
    if (a->nr_events < KVSSD_ADMIN_MAX_EVENTS) {
        a->events[a->nr_events++] = event;
    }
    return false;
}

void kvssd_admin_record_error(struct kvssd_admin *a, uint16_t sqid, uint16_t cid, uint16_t status,
                              uint32_t nsid)
{
    struct kvssd_error_entry *e = &a->errors[a->error_count % KVSSD_ERROR_LOG_ENTRIES];

    a->error_count++;
    memset(e, 0, sizeof(*e));
    e->error_count = a->error_count;
    e->sqid = sqid;
    e->cid = cid;
    e->status = status;
    e->param_loc = 0xffff;
    e->nsid = nsid;
}

void kvssd_admin_count_io(struct kvssd_admin *a, uint8_t opcode, uint64_t bytes_read,
                          uint64_t bytes_written, uint64_t busy_ns)
{
    if (kvssd_admin_nvm(a)) {
        /*
         * The NVM command set's user data commands: Write and Read. A
         * Dataset Management's range list is not user data.
         */
        if (opcode == KVSSD_NVM_OPC_DSM) {
            bytes_written = 0;
        }
        if (opcode == KVSSD_NVM_OPC_WRITE) {
            a->write_cmds++;
        } else if (opcode == KVSSD_NVM_OPC_READ) {
            a->read_cmds++;
        }
    } else if (opcode & 1) {
        a->write_cmds++;
    } else if (kvssd_kv_opcode_info(opcode) &&
               kvssd_kv_opcode_info(opcode)->dir == KVSSD_DATA_D2H) {
        a->read_cmds++;
    }
    a->bytes_read += bytes_read;
    a->bytes_written += bytes_written;
    a->busy_ns += busy_ns;
}

uint16_t kvssd_admin_io_check(const struct kvssd_admin *a, const struct kvssd_sqe *sqe)
{
    uint8_t opc = kvssd_sqe_opcode(sqe);
    uint32_t nsid = sqe->cdw[1];

    if (kvssd_sqe_fuse(sqe)) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR; /* fused: not supported */
    }
    if (!kvssd_admin_nvm(a) && opc != KVSSD_OPC_INLINE_XFER_FULL && nsid != 1 &&
        !(opc == KVSSD_OPC_FLUSH && nsid == KVSSD_NSID_ALL)) {
        return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
    }
    return KVSSD_SC_SUCCESS;
}

void kvssd_admin_io_done(struct kvssd_admin *a, struct kvssd_req *req, uint64_t bytes_read,
                         uint64_t bytes_written)
{
    uint8_t opc = kvssd_sqe_opcode(req->sqe);
    bool writes = kvssd_admin_nvm(a)
                      ? opc == KVSSD_NVM_OPC_WRITE || opc == KVSSD_NVM_OPC_WRITE_ZEROES ||
                            opc == KVSSD_NVM_OPC_DSM
                      : (opc & 1);

    if (req->status == KVSSD_SC_SUCCESS && a->vwc_present && !a->feat.wce && writes) {
        struct kvftl_cpl cpl;

        kvftl_flush(a->ftl, req->done_ns, &cpl);
        req->done_ns = cpl.done_ns > req->done_ns ? cpl.done_ns : req->done_ns;
    }
    kvssd_admin_count_io(a, opc, bytes_read, bytes_written,
                         req->done_ns > req->now_ns ? req->done_ns - req->now_ns : 0);
}

/* ---- Identify ------------------------------------------------------------ */

static void build_id_ctrl(const struct kvssd_admin *a, uint8_t *id)
{
    put16(id + 0, a->vid);
    put16(id + 2, a->ssvid);
    put_str(id + 4, 20, a->serial);
    put_str(id + 24, 40, a->model);
    put_str(id + 64, 8, a->firmware);
    id[72] = 6;                      /* RAB */
    id[73] = 0x38;
    id[74] = 0x25;
    id[75] = 0x00; /* IEEE OUI (Samsung 002538h) */
    id[76] = 0;                      /* CMIC: one port, one controller */
    id[77] = a->mdts;
    put16(id + 78, 0);               /* CNTLID */
    put32(id + 80, 0x00020000);      /* VER 2.0 */
    put32(id + 92, 0);               /* OAES: no notices */
    put32(id + 96, 0);               /* CTRATT */
    id[111] = 1;                     /* CNTRLTYPE: I/O controller */
    put16(id + 256, 1u << 1 | 1u << 8); /* OACS: Format NVM, Doorbell Buffer Config (queues.c) */
    id[258] = 3;                     /* ACL: 4 outstanding Aborts */
    id[259] = KVSSD_AERL;
    id[260] = 1u << 1 | 1u << 0;     /* FRMW: one slot, slot 1 read only */
    id[261] = 1u << 1 | 1u << 2;     /* LPA: effects log, extended data */
    id[262] = KVSSD_ERROR_LOG_ENTRIES - 1;
    id[263] = 0;                     /* NPSS: one power state */
    put16(id + 266, 343);            /* WCTEMP (K) */
    put16(id + 268, 373);            /* CCTEMP (K) */
    uint64_t cap = kvssd_admin_capacity_bytes(a);
    put64(id + 280, cap);            /* TNVMCAP (low 8 of 16 bytes) */
    id[512] = 0x66;                  /* SQES: 64 B */
    id[513] = 0x44;                  /* CQES: 16 B */
    put16(id + 514, 0);              /* MAXCMD: not reported */
    put32(id + 516, 1);              /* NN */
    if (kvssd_admin_nvm(a)) {
        /* ONCS: Dataset Management, Write Zeroes; Flush takes NSID FFFFFFFFh */
        put16(id + KVSSD_ID_CTRL_ONCS, KVSSD_ONCS_DSM | KVSSD_ONCS_WRITE_ZEROES);
        id[KVSSD_ID_CTRL_VWC] = (a->vwc_present ? KVSSD_VWC_PRESENT : 0) |
                                KVSSD_VWC_FLUSH_BROADCAST;
    } else {
        put16(id + KVSSD_ID_CTRL_ONCS, 0);
        id[KVSSD_ID_CTRL_VWC] = a->vwc_present ? KVSSD_VWC_PRESENT : 0;
    }
    put32(id + 536, 1u << 0);        /* SGLS: SGLs supported, no alignment rules */
    put32(id + 540, 0);              /* MNAN */
    snprintf((char *)id + 768, 256, "nqn.2026-01.org.kvssd:ctrl-%s", a->serial);
    /* Power state 0: 25 W, entry/exit latency 0 */
    put16(id + 2048, 2500);
}

/*
 * CNS 00h of the kv personality: an NVM-style page in 4 KiB units of the
 * KV capacity, for hosts that read CNS 00h of any namespace.
 */
static void build_id_ns_kv_as_nvm(const struct kvssd_admin *a, uint8_t *id)
{
    struct kvftl_stats st;

    kvftl_stats_get(a->ftl, &st);
    uint64_t blocks = st.capacity_bytes / 4096;
    put64(id + KVSSD_ID_NS_NSZE, blocks);
    put64(id + KVSSD_ID_NS_NCAP, blocks);
    put64(id + KVSSD_ID_NS_NUSE, (used_bytes(&st) + 4095) / 4096);
    id[KVSSD_ID_NS_NLBAF] = 0;                /* one format */
    id[KVSSD_ID_NS_FLBAS] = 0;                /* format 0 in use */
    put32(id + KVSSD_ID_NS_LBAF, 12u << 16);  /* LBAF0: LBADS 12 (4096-byte units), no metadata */
}

static void build_nguid(const struct kvssd_admin *a, uint8_t nguid[16]);

/*
 * Identify Namespace CNS 05h, CSI 01h of NSID 1, which log C2h
 * (KVSSD_LID_ID_NS_KV) also carries byte for byte.
 */
static void build_id_ns_kv(const struct kvssd_admin *a, uint8_t *buf)
{
    struct kvssd_id_ns_kv *id = (struct kvssd_id_ns_kv *)buf;
    const struct kvftl_config *c = kvftl_get_config(a->ftl);
    struct kvftl_stats st;
    uint8_t b[8];

    kvftl_stats_get(a->ftl, &st);
    put64(b, st.capacity_bytes);
    memcpy(&id->nsze, b, 8);
    put64(b, used_bytes(&st));
    memcpy(&id->nuse, b, 8);
    id->nkvf = 0;
    put32(b, c->placement_unit_bytes);
    memcpy(&id->novg, b, 4);
    /*
     * KVMKL is what a standard command carries (16 bytes in CDW2-3/CDW14-15):
     * standard hosts size their keys by it. Longer keys need our Key Stage
     * (91h); their maximum is in the vendor area, which standard hosts ignore.
     */
    put16(b, KVSSD_KEY_INLINE_MAX);
    memcpy(&id->kvf[0].kvmkl, b, 2);
    put32(b, KVSSD_VALUE_MAX_BYTES);
    memcpy(&id->kvf[0].kvmvl, b, 4);
    put32(b, c->max_keys > UINT32_MAX ? UINT32_MAX : (uint32_t)c->max_keys);
    memcpy(&id->kvf[0].kvmnk, b, 4);
    memcpy(id->vs, KVSSD_ID_VS_SIGNATURE, KVSSD_ID_VS_SIGNATURE_BYTES);
    put16(id->vs + 8, KVSSD_ID_VS_VERSION);
    put16(id->vs + 10, KVSSD_LONG_KEY_MAX);
    build_nguid(a, id->nguid);
}

/*
 * The blocks NUSE counts: the mapped 4 KiB units (live_user_bytes is
 * mapped units x 4 KiB for nvm: docs/kvftl.md, "The nvm personality") in
 * logical blocks, at most NSZE.
 */
static uint64_t nvm_used_lbas(const struct kvssd_admin *a, uint64_t nsze, uint32_t lba_bytes)
{
    struct kvftl_stats st;
    uint64_t used;

    kvftl_stats_get(a->ftl, &st);
    used = st.live_user_bytes / lba_bytes;
    return used < nsze ? used : nsze;
}

/*
 * CNS 00h of the nvm personality (NVM Command Set Specification, Identify
 * Namespace): one LBA format of lba-bytes, no metadata, no protection
 * information; thin provisioning (NUSE = what is mapped); deallocated
 * blocks read as zeroes (DLFEAT 001b) and Write Zeroes' DEAC is supported.
 * Atomicity: a 4 KiB unit is written whole or not at all, also across a
 * power loss (the firmware never tears a unit: tests/common/sector_model),
 * so NAWUN = NAWUPF = one unit within unit boundaries (NABSN = NABSPF = one
 * unit, NABO 0); Linux's physical block size is min(NPWG, NAWUPF).
 * NPWG = NPWA = NPDG = NPDA = NOWS = the 4 KiB mapping unit (a smaller
 * write is read-modify-written; Linux takes NPWG as the physical block
 * size). NOIOB stays 0: Linux would split every I/O at that boundary.
 */
static void build_id_ns_nvm(const struct kvssd_admin *a, uint8_t *id)
{
    uint32_t lba_bytes = kvftl_get_config(a->ftl)->lba_bytes;
    uint64_t nsze = kvftl_block_lbas(a->ftl);
    uint16_t unit_lbas0 = (uint16_t)(KVFTL_BLOCK_UNIT_BYTES / lba_bytes - 1);
    uint8_t lbads = 0;

    while ((1u << lbads) < lba_bytes) {
        lbads++;
    }
    put64(id + KVSSD_ID_NS_NSZE, nsze);
    put64(id + KVSSD_ID_NS_NCAP, nsze);
    put64(id + KVSSD_ID_NS_NUSE, nvm_used_lbas(a, nsze, lba_bytes));
    id[KVSSD_ID_NS_NSFEAT] = KVSSD_NSFEAT_THINP | KVSSD_NSFEAT_NSABP | KVSSD_NSFEAT_OPTPERF;
    id[KVSSD_ID_NS_NLBAF] = 0;  /* one format */
    id[KVSSD_ID_NS_FLBAS] = 0;  /* format 0 in use, no extended metadata */
    id[KVSSD_ID_NS_DLFEAT] = KVSSD_DLFEAT_READ_ZEROES | KVSSD_DLFEAT_WZ_DEAC;
    /* a mapping unit is never torn: a write within one is atomic, across power loss too */
    put16(id + KVSSD_ID_NS_NAWUN, unit_lbas0);
    put16(id + KVSSD_ID_NS_NAWUPF, unit_lbas0);
    put16(id + KVSSD_ID_NS_NABSN, unit_lbas0);
    put16(id + KVSSD_ID_NS_NABO, 0);
    put16(id + KVSSD_ID_NS_NABSPF, unit_lbas0);
    put64(id + KVSSD_ID_NS_NVMCAP, nsze * lba_bytes);
    put16(id + KVSSD_ID_NS_NPWG, unit_lbas0);
    put16(id + KVSSD_ID_NS_NPWA, unit_lbas0);
    put16(id + KVSSD_ID_NS_NPDG, unit_lbas0);
    put16(id + KVSSD_ID_NS_NPDA, unit_lbas0);
    put16(id + KVSSD_ID_NS_NOWS, unit_lbas0);
    build_nguid(a, id + KVSSD_ID_NS_NGUID);
    put32(id + KVSSD_ID_NS_LBAF, (uint32_t)lbads << 16); /* LBAF0: LBADS, MS 0, RP 0 (best) */
}

static void build_nguid(const struct kvssd_admin *a, uint8_t nguid[16])
{
    /* Stable and unique per serial: "KVSSD" + serial bytes. */
    memset(nguid, 0, 16);
    memcpy(nguid, "KV", 2);
    size_t n = strlen(a->serial);
    memcpy(nguid + 2, a->serial, n > 13 ? 13 : n);
    nguid[15] = 1;                   /* NSID */
}

static uint16_t admin_identify(struct kvssd_admin *a, struct kvssd_admin_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint8_t cns = sqe->cdw[10] & 0xff;
    uint8_t csi = sqe->cdw[11] >> 24;
    uint32_t nsid = sqe->cdw[1];
    uint8_t id[ID_BYTES];

    memset(id, 0, sizeof(id));
    switch (cns) {
    case KVSSD_CNS_NS:
        if (nsid == 0 || (nsid != 1 && nsid != 0xffffffff)) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        if (kvssd_admin_nvm(a)) {
            build_id_ns_nvm(a, id);
        } else {
            build_id_ns_kv_as_nvm(a, id);
        }
        break;
    case KVSSD_CNS_CTRL:
        build_id_ctrl(a, id);
        break;
    case KVSSD_CNS_ACTIVE_NS_LIST:
        if (nsid >= 0xfffffffe) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        if (nsid < 1) {
            put32(id, 1);
        }
        break;
    case KVSSD_CNS_NS_DESCR_LIST:
        if (nsid != 1) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        /* NGUID (type 2, 16 bytes), then CSI (type 4, 1 byte) */
        id[0] = 2;
        id[1] = 16;
        build_nguid(a, id + 4);
        id[20] = 4;
        id[21] = 1;
        id[24] = ns_csi(a);
        break;
    case KVSSD_CNS_CSI_NS:
        if (nsid != 1) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        if (csi != ns_csi(a)) {
            return KVSSD_SC_INVALID_IOCS | KVSSD_SC_DNR;
        }
        if (csi == KVSSD_CSI_KV) {
            build_id_ns_kv(a, id);
        }
        /*
         * NVM: the NVM Command Set's own page (LBSTM, PIC, extended LBA
         * formats) is all zeroes without protection information.
         */
        break;
    case KVSSD_CNS_CSI_CTRL:
        /*
         * No command-set-specific controller fields: zeroes for NVM and KV.
         * For NVM that is VSL, WZSL, WUSL, DMRL, DMRSL, DMSL = 0: no limits
         * but MDTS (Write Zeroes and Dataset Management take any size).
         */
        if (csi != KVSSD_CSI_NVM && csi != KVSSD_CSI_KV) {
            return KVSSD_SC_INVALID_IOCS | KVSSD_SC_DNR;
        }
        break;
    case KVSSD_CNS_CSI_INDEPENDENT_NS:
        if (nsid != 1) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        id[0] = 0;                   /* NSFEAT */
        id[1] = 0;                   /* NMIC */
        id[14] = 1;                  /* NSTAT: namespace ready */
        break;
    case KVSSD_CNS_IO_CMD_SET_PROFILES:
        /* Vector 0: NVM and KV command sets. */
        put64(id, 1u << KVSSD_CSI_NVM | 1u << KVSSD_CSI_KV);
        break;
    default:
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    return to_host(req, id, sizeof(id));
}

/* ---- Get Log Page ----------------------------------------------------- */

static void build_error_log(const struct kvssd_admin *a, uint8_t *log)
{
    /* newest first */
    uint64_t n = a->error_count < KVSSD_ERROR_LOG_ENTRIES ? a->error_count
                                                          : KVSSD_ERROR_LOG_ENTRIES;
    for (uint64_t i = 0; i < n; i++) {
        const struct kvssd_error_entry *e =
            &a->errors[(a->error_count - 1 - i) % KVSSD_ERROR_LOG_ENTRIES];
        uint8_t *p = log + i * 64;
        put64(p + 0, e->error_count);
        put16(p + 8, e->sqid);
        put16(p + 10, e->cid);
        put16(p + 12, (uint16_t)(e->status << 1));
        put16(p + 14, e->param_loc);
        put64(p + 16, e->lba);
        put32(p + 24, e->nsid);
    }
}

static void build_smart_log(const struct kvssd_admin *a, uint64_t now_ns, uint8_t *log)
{
    struct kvftl_stats st;
    kvftl_stats_get(a->ftl, &st);

    log[0] = 0;                              /* critical warning */
    put16(log + 1, 310);                     /* composite temperature, K */
    uint64_t spare = st.total_stripes ? st.free_stripes * 100 / st.total_stripes : 100;
    log[3] = spare > 100 ? 100 : (uint8_t)spare; /* available spare: free erase stripes */
    log[4] = 0;                              /* available spare threshold */
    /* wear: physical blocks erased (an erase stripe is one block of every die) */
    const struct kvftl_config *c = kvftl_get_config(a->ftl);
    uint64_t blocks = st.total_stripes * c->channels * c->dies_per_channel;
    uint64_t used = blocks ? st.nand_blocks_erased * 100 / (blocks * KVSSD_PE_CYCLES) : 0;
    log[5] = used > 255 ? 255 : (uint8_t)used; /* percentage used */
    /* data units of 1000 x 512 bytes, rounded up */
    put64(log + 32, (a->bytes_read + 511999) / 512000);
    put64(log + 48, (a->bytes_written + 511999) / 512000);
    put64(log + 64, a->read_cmds);
    put64(log + 80, a->write_cmds);
    put64(log + 96, a->busy_ns / 60000000000ull);  /* minutes */
    put64(log + 112, a->power_cycles);
    put64(log + 128, (now_ns - a->created_ns) / 3600000000000ull); /* hours */
    put64(log + 144, a->unsafe_shutdowns);
    put64(
        log + 160,
        st.media_errors); /* media and data integrity errors: records that failed their checksum */
    put64(log + 176, a->error_count);
}

static void effects_admin(uint8_t *log)
{
    static const uint8_t ops[] = {
        KVSSD_ADM_DELETE_SQ,   KVSSD_ADM_CREATE_SQ,    KVSSD_ADM_GET_LOG_PAGE,
        KVSSD_ADM_DELETE_CQ,   KVSSD_ADM_CREATE_CQ,    KVSSD_ADM_IDENTIFY,
        KVSSD_ADM_ABORT,       KVSSD_ADM_SET_FEATURES, KVSSD_ADM_GET_FEATURES,
        KVSSD_ADM_ASYNC_EVENT, KVSSD_ADM_FTL_CHECK,    KVSSD_ADM_DBBUF_CONFIG,
    };
    for (size_t i = 0; i < sizeof(ops); i++) {
        put32(log + 4 * ops[i], 1u << 0); /* CSUPP */
    }
    /* Format NVM: content and capability change, all namespaces (CSE 001b) */
    put32(log + 4 * KVSSD_ADM_FORMAT_NVM, 1u << 0 | 1u << 1 | 1u << 2 | 1u << 3 | 1u << 16);
}

/*
 * The I/O commands of @csi's command set, when the namespace speaks it: KV,
 * each row's effects (<kvssd/kv_opcodes.def>); NVM, CSUPP, and for the
 * commands that change blocks LBCC (logical block content change).
 */
static void build_effects_log(const struct kvssd_admin *a, uint8_t csi, uint8_t *log)
{
    effects_admin(log);
    if (csi != ns_csi(a)) {
        return; /* no namespace of that command set: no I/O commands */
    }
    for (unsigned op = 0; op < 256; op++) {
        if (csi == KVSSD_CSI_KV && kvssd_kv_opcode_info(op)) {
            put32(log + 1024 + 4 * op, kvssd_kv_opcode_info(op)->effects);
        }
        if (csi == KVSSD_CSI_NVM && kvssd_nvm_opcode_supported(op)) {
            bool lbcc = op == KVSSD_NVM_OPC_WRITE || op == KVSSD_NVM_OPC_WRITE_ZEROES ||
                        op == KVSSD_NVM_OPC_DSM;
            put32(log + 1024 + 4 * op, 1u << 0 | (lbcc ? 1u << 1 : 0)); /* CSUPP, LBCC */
        }
    }
}

static void build_stats_log(const struct kvssd_admin *a, uint8_t *buf)
{
    struct kvssd_stats_log *l = (struct kvssd_stats_log *)buf;
    struct kvftl_stats st;

    kvftl_stats_get(a->ftl, &st);
    l->version = KVSSD_STATS_LOG_VERSION;
    l->dma_unit_bytes = a->dma_unit_bytes;
    l->xfer = *a->xfer;
    l->host_bytes_in_inline = st.host_bytes_in_inline;
    l->host_bytes_in_dma = st.host_bytes_in_dma;
    l->host_bytes_out = st.host_bytes_out;
    l->user_bytes_written = st.user_bytes_written;
    l->stores = st.stores;
    l->retrieves = st.retrieves;
    l->deletes = st.deletes;
    l->exists = st.exists;
    l->iterates = st.iterates;
    l->nand_pages_read = st.nand_pages_read;
    l->nand_pages_programmed = st.nand_pages_programmed;
    l->nand_data_pages_programmed = st.nand_data_pages_programmed;
    l->nand_blocks_erased = st.nand_blocks_erased;
    l->memcpy_bytes = st.memcpy_bytes;
    l->padding_bytes = st.padding_bytes;
    l->dlt_backfills = st.dlt_backfills;
    l->live_keys = st.live_keys;
    l->live_user_bytes = st.live_user_bytes;
    l->live_nand_bytes = st.live_nand_bytes;
    l->index_cache_hits = st.index_cache_hits;
    l->index_cache_misses = st.index_cache_misses;
    l->index_pages_evicted_dirty = st.index_pages_evicted_dirty;
    l->bloom_negatives = st.bloom_negatives;
    l->index_host_bytes = st.index_host_bytes;
    l->gc_runs = st.gc_runs;
    l->gc_relocated_bytes = st.gc_relocated_bytes;
    l->gc_foreground_stalls = st.gc_foreground_stalls;
    l->gc_stall_ns = st.gc_stall_ns;
    l->free_stripes = st.free_stripes;
    l->total_stripes = st.total_stripes;
    l->waf_milli = (uint64_t)(st.write_amplification * 1000.0 + 0.5);
    l->space_amp_milli = (uint64_t)(st.space_amplification * 1000.0 + 0.5);
    l->sim_now_ns = st.sim_now_ns;
    l->capacity_bytes = st.capacity_bytes;
    l->index_nand_bytes = st.index_nand_bytes;
    l->fw_cpu_ns = st.fw_cpu_ns;
    for (int op = 0; op < KVFTL_OP__COUNT && op < 5; op++) {
        l->latency_sum_ns[op] = st.latency[op].sum_ns;
        l->fw_op_ns[op] = st.fw_op_ns[op];
    }
    for (int op = 0; op < KVFTL_OP__COUNT && op < 5; op++) {
        l->latency[op][0] = st.latency[op].count;
        l->latency[op][1] = st.latency[op].p50_ns;
        l->latency[op][2] = st.latency[op].p99_ns;
        l->latency[op][3] = st.latency[op].p999_ns;
        l->latency[op][4] = st.latency[op].max_ns;
    }
}

/* @names[@v] into a NUL-padded name field, "?" for a value past @count. */
static void put_name(char *field, const char *const *names, size_t count, unsigned v)
{
    const char *s = v < count && names[v] ? names[v] : "?";

    memset(field, 0, KVSSD_CONFIG_NAME_BYTES);
    memcpy(field, s, strnlen(s, KVSSD_CONFIG_NAME_BYTES - 1));
}

#define NAMES(a) (a), sizeof(a) / sizeof((a)[0])

void kvssd_config_log_fill(struct kvssd_config_log *l, const struct kvftl_config *c,
                           const char *firmware, unsigned preset, bool latency,
                           uint64_t capacity_bytes)
{
    memset(l, 0, sizeof(*l));
    l->version = KVSSD_CONFIG_LOG_VERSION;
    memcpy(l->firmware, firmware, strnlen(firmware, sizeof(l->firmware)));
    put_name(l->preset, NAMES(kvftl_preset_names), preset);
    put_name(l->command_set, NAMES(kvftl_command_set_names), c->command_set);
    put_name(l->packing, NAMES(kvftl_packing_names), c->packing);
    put_name(l->index, NAMES(kvftl_index_names), c->index);
    put_name(l->gc_policy, NAMES(kvftl_gc_policy_names), c->gc_policy);
    l->channels = c->channels;
    l->dies_per_channel = c->dies_per_channel;
    l->blocks_per_die = c->blocks_per_die;
    l->pages_per_block = c->pages_per_block;
    l->page_size_bytes = c->page_size_bytes;
    l->placement_unit_bytes = c->placement_unit_bytes;
    l->index_page_bytes = c->index_page_bytes ? c->index_page_bytes : c->page_size_bytes;
    l->overprovision_percent = c->overprovision_percent;
    l->capacity_bytes = capacity_bytes;
    l->index_dram_bytes = c->index_dram_bytes;
    l->read_latency_ns = c->read_latency_ns;
    l->program_latency_ns = c->program_latency_ns;
    l->erase_latency_ns = c->erase_latency_ns;
    l->channel_bytes_per_us = c->channel_bytes_per_us;
    l->dram_copy_bytes_per_us = c->dram_copy_bytes_per_us;
    l->fw_fetch_decode_ns = c->fw_fetch_decode_ns;
    l->fw_index_probe_ns = c->fw_index_probe_ns;
    l->fw_inline_fragment_ns = c->fw_inline_fragment_ns;
    l->fw_dma_setup_ns = c->fw_dma_setup_ns;
    l->fw_completion_ns = c->fw_completion_ns;
    l->latency = latency;
    l->plp = c->plp;
    l->bloom = c->bloom;
}

static uint16_t admin_get_log_page(struct kvssd_admin *a, struct kvssd_admin_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint8_t lid = sqe->cdw[10] & 0xff;
    uint8_t lsp = (sqe->cdw[10] >> 8) & 0x7f;
    bool rae = sqe->cdw[10] & (1u << 15);
    uint64_t len = kvssd_get_log_bytes(sqe->cdw[10], sqe->cdw[11]); /* NUMDU:NUMDL, 0's based */
    uint64_t off = (uint64_t)sqe->cdw[13] << 32 | sqe->cdw[12];
    uint8_t csi = sqe->cdw[14] >> 24;
    uint8_t log[ID_BYTES];
    uint32_t size;

    memset(log, 0, sizeof(log));
    if (off & 3) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    /* longer than MDTS, whatever the log's size: refused, as QEMU's nvme_get_log() does */
    if (a->mdts && len > (uint64_t)ADMIN_MDTS_UNIT_BYTES << a->mdts) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    switch (lid) {
    case KVSSD_LID_ERROR:
        size = KVSSD_ERROR_LOG_ENTRIES * 64;
        build_error_log(a, log);
        break;
    case KVSSD_LID_SMART:
        if (sqe->cdw[1] != 0 && sqe->cdw[1] != 1 && sqe->cdw[1] != 0xffffffff) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        size = 512;
        build_smart_log(a, req->now_ns, log);
        break;
    case KVSSD_LID_FW_SLOT:
        size = 512;
        log[0] = 1; /* AFI: slot 1 active */
        memcpy(log + 8, a->firmware, strnlen(a->firmware, 8));
        break;
    case KVSSD_LID_EFFECTS:
        if (csi != KVSSD_CSI_NVM && csi != KVSSD_CSI_KV) {
            return KVSSD_SC_INVALID_IOCS | KVSSD_SC_DNR;
        }
        size = 4096;
        build_effects_log(a, csi, log);
        break;
    case KVSSD_LID_STATS:
        size = sizeof(struct kvssd_stats_log);
        build_stats_log(a, log);
        break;
    case KVSSD_LID_CONFIG:
        size = sizeof(struct kvssd_config_log);
        kvssd_config_log_fill((struct kvssd_config_log *)log, kvftl_get_config(a->ftl), a->firmware,
                              a->preset, a->latency, kvssd_admin_capacity_bytes(a));
        break;
    case KVSSD_LID_ID_NS_KV:
        /* the nvm personality has no KV page: an unknown log, as for any LID */
        if (kvssd_admin_nvm(a)) {
            return KVSSD_SC_INVALID_LOG_PAGE | KVSSD_SC_DNR;
        }
        if (sqe->cdw[1] != 1) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        size = ID_BYTES;
        build_id_ns_kv(a, log);
        break;
    default:
        return KVSSD_SC_INVALID_LOG_PAGE | KVSSD_SC_DNR;
    }
    (void)lsp;
    if (off > size) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    uint32_t n = (uint32_t)(len < size - off ? len : size - off);
    uint16_t st = to_host(req, log + off, n);
    if (st == KVSSD_SC_SUCCESS && !rae && lid == KVSSD_LID_ERROR) {
        a->nr_events = 0; /* reading the log clears the error events */
    }
    return st;
}

/* ---- Features ---------------------------------------------------------- */

/* Key Value Configuration (20h) exists on a KV namespace only. */
static bool fid_supported(const struct kvssd_admin *a, uint8_t fid)
{
    if (fid == KVSSD_FID_KV_CONFIG) {
        return !kvssd_admin_nvm(a);
    }
    switch (fid) {
    case KVSSD_FID_ARBITRATION:
    case KVSSD_FID_POWER_MGMT:
    case KVSSD_FID_TEMP_THRESHOLD:
    case KVSSD_FID_ERROR_RECOVERY:
    case KVSSD_FID_VOLATILE_WC:
    case KVSSD_FID_NUM_QUEUES:
    case KVSSD_FID_IRQ_COALESCING:
    case KVSSD_FID_IRQ_VECTOR_CONFIG:
    case KVSSD_FID_WRITE_ATOMICITY:
    case KVSSD_FID_ASYNC_EVENT_CONFIG:
    case KVSSD_FID_IOCS_PROFILE:
    case KVSSD_FID_RESET_STATS:
        return true;
    default:
        return false;
    }
}

static uint16_t admin_get_features(struct kvssd_admin *a, struct kvssd_admin_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint8_t fid = sqe->cdw[10] & 0xff;
    uint8_t sel = (sqe->cdw[10] >> 8) & 0x7;
    struct kvssd_features *f = &a->feat;

    if (!fid_supported(a, fid) || (fid == KVSSD_FID_VOLATILE_WC && !a->vwc_present)) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    if (sel > 3) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    if (sel == 3) {
        /* supported capabilities: changeable; KV config is namespace specific */
        req->dw0 = 1u << 2 | (fid == KVSSD_FID_KV_CONFIG ? 1u << 1 : 0);
        return KVSSD_SC_SUCCESS;
    }
    bool dflt = sel != 0; /* default and saved values are the defaults */
    switch (fid) {
    case KVSSD_FID_ARBITRATION:
        req->dw0 = dflt ? 0 : f->arbitration;
        break;
    case KVSSD_FID_POWER_MGMT:
        req->dw0 = dflt ? 0 : f->power_mgmt;
        break;
    case KVSSD_FID_TEMP_THRESHOLD: {
        uint8_t tmpsel = (sqe->cdw[11] >> 16) & 0xf;
        uint8_t thsel = (sqe->cdw[11] >> 20) & 0x3;
        if ((tmpsel != 0 && tmpsel != 0xf) || thsel > 1) {
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        if (thsel == 0) {
            req->dw0 = dflt ? 343 : f->temp_over_k;
        } else {
            req->dw0 = dflt ? 0 : f->temp_under_k;
        }
        break;
    }
    case KVSSD_FID_ERROR_RECOVERY:
        req->dw0 = dflt ? 0 : f->error_recovery;
        break;
    case KVSSD_FID_VOLATILE_WC:
        req->dw0 = dflt ? 1 : f->wce;
        break;
    case KVSSD_FID_NUM_QUEUES:
        req->dw0 = dflt ? ((a->max_ioqpairs - 1) << 16 | (a->max_ioqpairs - 1))
                        : ((uint32_t)f->ncqa << 16 | f->nsqa);
        break;
    case KVSSD_FID_IRQ_COALESCING:
        req->dw0 = dflt ? 0 : f->irq_coalescing;
        break;
    case KVSSD_FID_IRQ_VECTOR_CONFIG: {
        uint16_t iv = sqe->cdw[11] & 0xffff;
        if (iv > a->max_ioqpairs) {
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        req->dw0 = dflt ? iv : f->irq_vector_config[iv];
        break;
    }
    case KVSSD_FID_WRITE_ATOMICITY:
        req->dw0 = dflt ? 0 : f->write_atomicity;
        break;
    case KVSSD_FID_ASYNC_EVENT_CONFIG:
        req->dw0 = dflt ? 0 : f->async_event_config;
        break;
    case KVSSD_FID_IOCS_PROFILE:
        req->dw0 = dflt ? 0 : f->iocs_profile;
        break;
    case KVSSD_FID_KV_CONFIG:
        if (sqe->cdw[1] != 1 && sqe->cdw[1] != 0xffffffff) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        req->dw0 = dflt ? 0 : (kvssd_ns_get_ednek(a->ns) ? KVSSD_KV_CONFIG_EDNEK : 0);
        break;
    case KVSSD_FID_RESET_STATS:
        req->dw0 = 0;
        break;
    }
    return KVSSD_SC_SUCCESS;
}

static uint16_t admin_set_features(struct kvssd_admin *a, struct kvssd_admin_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint8_t fid = sqe->cdw[10] & 0xff;
    bool sv = sqe->cdw[10] & (1u << 31);
    uint32_t v = sqe->cdw[11];
    struct kvssd_features *f = &a->feat;

    if (!fid_supported(a, fid) || (fid == KVSSD_FID_VOLATILE_WC && !a->vwc_present)) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    if (sv) {
        return KVSSD_SC_FID_NOT_SAVEABLE | KVSSD_SC_DNR;
    }
    switch (fid) {
    case KVSSD_FID_ARBITRATION:
        f->arbitration = v;
        break;
    case KVSSD_FID_POWER_MGMT:
        if ((v & 0x1f) != 0) { /* only power state 0 exists */
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        f->power_mgmt = v & 0xff;
        break;
    case KVSSD_FID_TEMP_THRESHOLD: {
        uint8_t tmpsel = (v >> 16) & 0xf;
        uint8_t thsel = (v >> 20) & 0x3;
        if ((tmpsel != 0 && tmpsel != 0xf) || thsel > 1) {
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        if (thsel == 0) {
            f->temp_over_k = v & 0xffff;
        } else {
            f->temp_under_k = v & 0xffff;
        }
        break;
    }
    case KVSSD_FID_ERROR_RECOVERY:
        f->error_recovery = v & 0x1ffff;
        break;
    case KVSSD_FID_VOLATILE_WC:
        f->wce = v & 1;
        req->dw0 = f->wce;
        break;
    case KVSSD_FID_NUM_QUEUES: {
        uint32_t nsqr = v & 0xffff, ncqr = v >> 16;
        if (nsqr == 0xffff || ncqr == 0xffff) {
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        f->nsqa = nsqr < a->max_ioqpairs - 1 ? nsqr : a->max_ioqpairs - 1;
        f->ncqa = ncqr < a->max_ioqpairs - 1 ? ncqr : a->max_ioqpairs - 1;
        req->dw0 = (uint32_t)f->ncqa << 16 | f->nsqa;
        break;
    }
    case KVSSD_FID_IRQ_COALESCING:
        f->irq_coalescing = v & 0xffff;
        break;
    case KVSSD_FID_IRQ_VECTOR_CONFIG: {
        uint16_t iv = v & 0xffff;
        if (iv > a->max_ioqpairs) {
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        f->irq_vector_config[iv] = v & 0x1ffff;
        break;
    }
    case KVSSD_FID_WRITE_ATOMICITY:
        f->write_atomicity = v & 1;
        break;
    case KVSSD_FID_ASYNC_EVENT_CONFIG:
        f->async_event_config = v;
        break;
    case KVSSD_FID_IOCS_PROFILE:
        if ((v & 0x1ff) != 0) { /* one command set combination: index 0 */
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        f->iocs_profile = 0;
        break;
    case KVSSD_FID_KV_CONFIG:
        if (sqe->cdw[1] != 1 && sqe->cdw[1] != 0xffffffff) {
            return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        }
        if (v & ~KVSSD_KV_CONFIG_EDNEK) {
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        kvssd_ns_set_ednek(a->ns, v & KVSSD_KV_CONFIG_EDNEK);
        break;
    case KVSSD_FID_RESET_STATS:
        kvftl_stats_reset(a->ftl);
        memset(a->xfer, 0, sizeof(*a->xfer));
        break;
    }
    return KVSSD_SC_SUCCESS;
}

/* ---- The rest --------------------------------------------------------- */

static uint16_t admin_aer(struct kvssd_admin *a, struct kvssd_admin_req *req)
{
    uint16_t cid = req->sqe->cdw[0] >> 16;

    if (a->nr_events > 0) {
        req->dw0 = a->events[0];
        memmove(a->events, a->events + 1, (a->nr_events - 1) * sizeof(a->events[0]));
        a->nr_events--;
        return KVSSD_SC_SUCCESS;
    }
    if (a->nr_aer > KVSSD_AERL) {
        return KVSSD_SC_AER_LIMIT_EXCEEDED | KVSSD_SC_DNR;
    }
    a->aer_cids[a->nr_aer++] = cid;
    req->deferred = true;
    return KVSSD_SC_SUCCESS;
}

static uint16_t admin_format(struct kvssd_admin *a, struct kvssd_admin_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t nsid = sqe->cdw[1];
    uint32_t lbaf = sqe->cdw[10] & 0xf;
    uint32_t ses = (sqe->cdw[10] >> 9) & 0x7;
    uint32_t pi = (sqe->cdw[10] >> 5) & 0x7;
    uint32_t mset = (sqe->cdw[10] >> 4) & 1;
    struct kvftl_cpl cpl;

    if (nsid != 1 && nsid != 0xffffffff) {
        return KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
    }
    if (lbaf != 0 || pi != 0 || mset != 0) {
        return KVSSD_SC_INVALID_FORMAT | KVSSD_SC_DNR;
    }
    if (ses > 1) { /* no cryptographic erase */
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    if (a->ns) {
        kvssd_ns_reset(a->ns);
    }
    kvftl_format(a->ftl, req->now_ns, &cpl);
    return kvssd_status_from_ftl(cpl.status);
}

/* A parked FTL check: the firmware's walk and the slices it has run. */
struct admin_check {
    struct kvftl_check_walk *walk;
    uint32_t slices;
};

/*
 * Vendor FTL check (C4h): success with DW0 = the slices the check took, or
 * INTERNAL_ERROR with the reason on stderr. Parked, it checks
 * KVSSD_SLICE_CHECK_BYTES of index pages and blobs per call, so checking
 * millions of blobs never holds the main loop.
 */
static uint16_t admin_ftl_check(struct kvssd_admin *a, struct kvssd_admin_req *req)
{
    struct admin_check *c = req->cont;
    char err[256];
    int rc;

    req->cont = NULL;
    if (!c) {
        c = g_new0(struct admin_check, 1);
        c->walk = kvftl_check_begin(a->ftl);
        if (req->may_park) {
            /* the walk runs in the transport's slices, not in the fetch */
            req->cont = c;
            req->in_progress = true;
            return KVSSD_SC_SUCCESS;
        }
    }
    do {
        c->slices++;
        rc = kvftl_check_step(a->ftl, c->walk, req->may_park ? KVSSD_SLICE_CHECK_BYTES : UINT64_MAX,
                              err, sizeof(err));
    } while (rc == 1 && !req->may_park);
    if (rc == 1) {
        req->cont = c;
        req->in_progress = true;
        return KVSSD_SC_SUCCESS;
    }
    req->dw0 = c->slices;
    kvssd_admin_cancel(a, c);
    if (rc != 0) {
        fprintf(stderr, "kvssd: FTL check failed: %s\n", err);
        return KVSSD_SC_INTERNAL_ERROR;
    }
    return KVSSD_SC_SUCCESS;
}

void kvssd_admin_cancel(struct kvssd_admin *a, void *cont)
{
    struct admin_check *c = cont; /* C4h is the only admin command that parks */

    (void)a;
    if (c) {
        kvftl_check_end(c->walk);
        g_free(c);
    }
}

void kvssd_admin_execute(struct kvssd_admin *a, struct kvssd_admin_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint8_t opc = kvssd_sqe_opcode(sqe);
    uint32_t c10 = sqe->cdw[10], c11 = sqe->cdw[11];
    uint64_t prp1 = (uint64_t)sqe->cdw[7] << 32 | sqe->cdw[6];
    uint16_t st;

    req->dw0 = req->dw1 = 0;
    req->deferred = false;
    req->in_progress = false;
    if (req->cont && opc != KVSSD_ADM_FTL_CHECK) {
        /* the transport broke the parking contract: drop the state, fail the command */
        kvssd_admin_cancel(a, req->cont);
        req->cont = NULL;
        req->status = KVSSD_SC_INTERNAL_ERROR;
        return;
    }
    /* fused operations and SGLs are not supported for admin commands */
    if ((sqe->cdw[0] >> 8) & 0x3) {
        req->status = KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        return;
    }
    if ((sqe->cdw[0] >> 14) & 0x3) {
        req->status = KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        return;
    }
    switch (opc) {
    case KVSSD_ADM_DELETE_SQ:
        st = a->ops->delete_sq(a->opaque, c10 & 0xffff);
        break;
    case KVSSD_ADM_CREATE_SQ:
        st = a->ops->create_sq(a->opaque, c10 & 0xffff, c10 >> 16, prp1, c11 >> 16, c11 & 1);
        break;
    case KVSSD_ADM_DELETE_CQ:
        st = a->ops->delete_cq(a->opaque, c10 & 0xffff);
        break;
    case KVSSD_ADM_CREATE_CQ:
        st = a->ops->create_cq(a->opaque, c10 & 0xffff, c10 >> 16, prp1, c11 >> 16, c11 & 2,
                               c11 & 1);
        break;
    case KVSSD_ADM_GET_LOG_PAGE:
        st = admin_get_log_page(a, req);
        break;
    case KVSSD_ADM_IDENTIFY:
        st = admin_identify(a, req);
        break;
    case KVSSD_ADM_ABORT:
        /* Commands run to completion when fetched: nothing is ever abortable. */
        req->dw0 = 1;
        st = KVSSD_SC_SUCCESS;
        break;
    case KVSSD_ADM_SET_FEATURES:
        st = admin_set_features(a, req);
        break;
    case KVSSD_ADM_GET_FEATURES:
        st = admin_get_features(a, req);
        break;
    case KVSSD_ADM_ASYNC_EVENT:
        st = admin_aer(a, req);
        break;
    case KVSSD_ADM_FORMAT_NVM:
        st = admin_format(a, req);
        break;
    case KVSSD_ADM_FTL_CHECK:
        st = admin_ftl_check(a, req);
        break;
    default:
        st = KVSSD_SC_INVALID_OPCODE | KVSSD_SC_DNR;
        break;
    }
    req->status = st;
}
