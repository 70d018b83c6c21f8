/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NVM command set of the nvm personality (-device kvssd,command-set=nvm),
 * without QEMU types: decode one I/O command's dwords, validate every field
 * in the order QEMU's hw/nvme does (NSID, opcode, fields, MDTS, the LBA
 * range), move data through the command's struct kvssd_dptr in bounded
 * pieces, call the block firmware (include/kvftl/block.h) and fill in the
 * completion with the status the NVM Command Set Specification names.
 *
 * The namespace has no protection information, no metadata and no
 * directives: a command that asks for any of them gets Invalid Field.
 * docs/device.md ("The nvm personality") lists every command and status.
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "cmdset.h"
#include "kv_internal.h"

/*
 * A Deallocate parked between main-loop slices (docs/device.md, "Work per
 * main-loop slice"): its validated ranges and where it stands.
 */
struct nvm_dsm_cont {
    uint32_t nr;      /* ranges */
    uint32_t range;   /* the range being unmapped */
    uint32_t done;    /* its blocks unmapped so far */
    uint64_t done_ns; /* the latest completion time of its firmware calls */
    uint8_t ranges[KVSSD_NVM_DSM_MAX_RANGES * KVSSD_NVM_DSM_RANGE_BYTES];
};

struct kvssd_nvm_ns {
    struct kvftl *ftl;
    struct kvssd_xfer_counters *xfer;
    struct kvssd_xfer_counters own_xfer; /* when the caller gave none */
    uint64_t nsze;                       /* kvftl_block_lbas(): NSZE = NCAP */
    uint32_t lba_bytes;
    uint32_t lbas_per_unit;              /* logical blocks per 4 KiB mapping unit */
    uint32_t max_xfer_lbas;              /* the most blocks one Read/Write moves (MDTS) */
    uint32_t chunk_lbas;                 /* KVSSD_NVM_CHUNK_BYTES in blocks */
    uint32_t ftl_max_lbas;               /* the most blocks one firmware call takes */
    uint8_t *bounce;                     /* KVSSD_NVM_CHUNK_BYTES */
    struct nvm_dsm_cont dsm;             /* a Deallocate's ranges until it parks */
};

static uint32_t le32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64_at(const uint8_t *p)
{
    return (uint64_t)le32_at(p) | (uint64_t)le32_at(p + 4) << 32;
}

/*
 * A firmware outcome as the NVM command set names it. The KV statuses
 * cannot come from the block calls: one that does is the firmware's bug,
 * reported as Internal Error rather than as a KV status the host cannot
 * decode.
 */
static uint16_t nvm_status_from_ftl(enum kvftl_status s)
{
    switch (s) {
    case KVFTL_OK:
        return KVSSD_SC_SUCCESS;
    case KVFTL_INVALID_FIELD:
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    case KVFTL_CAPACITY_EXCEEDED:
        return KVSSD_SC_CAPACITY_EXCEEDED | KVSSD_SC_DNR;
    case KVFTL_UNRECOVERED_ERROR:
        /* the stored copy failed its check: retrying reads the same damage */
        return KVSSD_SC_UNRECOVERED_READ_ERROR | KVSSD_SC_DNR;
    case KVFTL_INTERNAL_ERROR:
        /* after a power cut, until the firmware mounts again */
        return KVSSD_SC_INTERNAL_ERROR;
    default:
        return KVSSD_SC_INTERNAL_ERROR;
    }
}

/* The firmware's completion time becomes the command's (the latest of its pieces). */
static uint16_t nvm_ftl_done(struct kvssd_req *req, const struct kvftl_cpl *cpl)
{
    if (cpl->done_ns > req->done_ns) {
        req->done_ns = cpl->done_ns;
    }
    return nvm_status_from_ftl(cpl->status);
}

/*
 * [@slba, @slba + @blocks) within the namespace? @blocks >= 1; the sum is
 * computed without overflow (SLBA is a guest's 64-bit field).
 */
static bool nvm_range_ok(const struct kvssd_nvm_ns *ns, uint64_t slba, uint64_t blocks)
{
    return slba < ns->nsze && blocks <= ns->nsze - slba;
}

/*
 * The blocks of the next firmware call for a range at @lba with @remaining
 * blocks, at most @max (a multiple of the mapping unit in blocks): all of
 * them if they fit, else up to a mapping-unit boundary, so that no unit is
 * read-modify-written twice because a command was split.
 */
static uint32_t nvm_piece(const struct kvssd_nvm_ns *ns, uint64_t lba, uint64_t remaining,
                          uint32_t max)
{
    if (remaining <= max) {
        return (uint32_t)remaining;
    }
    return max - (uint32_t)(lba % ns->lbas_per_unit);
}

/*
 * Read, Write and Write Zeroes CDW12-13 (<kvssd/nvme.h>): what the command
 * may set. PRINFO and STC ask for protection information this namespace
 * does not have; DTYPE a directive it does not support: Invalid Field. LR
 * and FUA are accepted everywhere, DEAC on Write Zeroes, the DSM hint byte
 * of CDW13 on Read and Write (hints, no effect) and DSPEC with Write.
 */
static bool nvm_rw_fields_ok(uint8_t opcode, const struct kvssd_sqe *sqe)
{
    uint32_t cdw12_allowed = KVSSD_NVM_RW_LR | KVSSD_NVM_RW_FUA | KVSSD_NVM_RW_NLB_MASK;
    uint32_t cdw13_allowed = KVSSD_NVM_RW_DSM_MASK;

    switch (opcode) {
    case KVSSD_NVM_OPC_WRITE:
        cdw13_allowed |= 0xffff0000u; /* DSPEC: meaningful only with a DTYPE, which must be 0 */
        break;
    case KVSSD_NVM_OPC_WRITE_ZEROES:
        cdw12_allowed |= KVSSD_NVM_WZ_DEAC;
        cdw13_allowed = 0;
        break;
    default:
        break;
    }
    return !KVSSD_RESERVED(sqe->cdw[12], cdw12_allowed) &&
           !KVSSD_RESERVED(sqe->cdw[13], cdw13_allowed);
}

/*
 * The checks every command with an LBA range makes, in hw/nvme's order:
 * its fields, the transfer size (Read/Write: MDTS), the range.
 */
static uint16_t nvm_check_rw(const struct kvssd_nvm_ns *ns, const struct kvssd_sqe *sqe,
                             bool moves_data)
{
    uint8_t opcode = kvssd_sqe_opcode(sqe);
    uint32_t blocks = kvssd_nvm_blocks(sqe);

    if (!nvm_rw_fields_ok(opcode, sqe)) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    if (moves_data && blocks > ns->max_xfer_lbas) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    if (!nvm_range_ok(ns, kvssd_nvm_slba(sqe), blocks)) {
        return KVSSD_SC_LBA_OUT_OF_RANGE | KVSSD_SC_DNR;
    }
    return KVSSD_SC_SUCCESS;
}

/* ---- Commands ------------------------------------------------------------ */

/* Flush (00h): the page buffer and the map's dirty pages reach flash. */
static uint16_t nvm_flush(struct kvssd_nvm_ns *ns, struct kvssd_req *req)
{
    struct kvftl_cpl cpl = {0};

    kvftl_flush(ns->ftl, req->now_ns, &cpl);
    return nvm_ftl_done(req, &cpl);
}

/*
 * Write (01h): the host's blocks come in through the bounce buffer, a
 * piece at a time, each piece written before the next is fetched. A
 * transfer error stops the command (the pieces before it are written: the
 * specification leaves a failed write's blocks undefined).
 */
static uint16_t nvm_write(struct kvssd_nvm_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint16_t st = nvm_check_rw(ns, sqe, true);
    uint64_t slba = kvssd_nvm_slba(sqe);
    uint32_t blocks = kvssd_nvm_blocks(sqe);
    bool fua = sqe->cdw[12] & KVSSD_NVM_RW_FUA;

    for (uint32_t done = 0; st == KVSSD_SC_SUCCESS && done < blocks;) {
        uint32_t n = nvm_piece(ns, slba + done, blocks - done, ns->chunk_lbas);
        struct kvftl_cpl cpl = {0};

        st = kvssd_dptr_from_host(req, (uint64_t)done * ns->lba_bytes, ns->bounce,
                                  n * ns->lba_bytes);
        if (st != KVSSD_SC_SUCCESS) {
            break;
        }
        kvftl_block_write(ns->ftl, slba + done, n, ns->bounce, fua, req->now_ns, &cpl);
        st = nvm_ftl_done(req, &cpl);
        done += n;
    }
    return st;
}

/* Read (02h): a piece at a time from the firmware to the host. FUA: every read is from NVM. */
static uint16_t nvm_read(struct kvssd_nvm_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint16_t st = nvm_check_rw(ns, sqe, true);
    uint64_t slba = kvssd_nvm_slba(sqe);
    uint32_t blocks = kvssd_nvm_blocks(sqe);

    for (uint32_t done = 0; st == KVSSD_SC_SUCCESS && done < blocks;) {
        uint32_t n = nvm_piece(ns, slba + done, blocks - done, ns->chunk_lbas);
        struct kvftl_cpl cpl = {0};

        kvftl_block_read(ns->ftl, slba + done, n, ns->bounce, req->now_ns, &cpl);
        st = nvm_ftl_done(req, &cpl);
        if (st != KVSSD_SC_SUCCESS) {
            break;
        }
        st = kvssd_dptr_to_host(req, (uint64_t)done * ns->lba_bytes, ns->bounce, n * ns->lba_bytes);
        done += n;
    }
    return st;
}

/*
 * Write Zeroes (08h): no data pointer, no MDTS (the command moves no data;
 * Identify Controller NVM reports no WZSL); the firmware call's own limit
 * is met by splitting. DEAC (deallocate as well) is what the firmware does
 * anyway: a zero unit holds no flash. FUA: flushed before completing.
 */
static uint16_t nvm_write_zeroes(struct kvssd_nvm_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint16_t st = nvm_check_rw(ns, sqe, false);
    uint64_t slba = kvssd_nvm_slba(sqe);
    uint32_t blocks = kvssd_nvm_blocks(sqe);

    for (uint32_t done = 0; st == KVSSD_SC_SUCCESS && done < blocks;) {
        uint32_t n = nvm_piece(ns, slba + done, blocks - done, ns->ftl_max_lbas);
        struct kvftl_cpl cpl = {0};

        kvftl_block_write_zeroes(ns->ftl, slba + done, n, req->now_ns, &cpl);
        st = nvm_ftl_done(req, &cpl);
        done += n;
    }
    if (st == KVSSD_SC_SUCCESS && (sqe->cdw[12] & KVSSD_NVM_RW_FUA)) {
        struct kvftl_cpl cpl = {0};

        kvftl_flush(ns->ftl, req->done_ns, &cpl);
        st = nvm_ftl_done(req, &cpl);
    }
    return st;
}

/* The 4 KiB units [@lba, @lba + @blocks) touches, whole or in part. */
static uint64_t nvm_units_touched(const struct kvssd_nvm_ns *ns, uint64_t lba, uint32_t blocks)
{
    return (lba + blocks + ns->lbas_per_unit - 1) / ns->lbas_per_unit - lba / ns->lbas_per_unit;
}

/*
 * Unmap the ranges of @c from where it stands, at most
 * KVSSD_SLICE_DEALLOC_UNITS units (whole or in part) of map work; a range
 * of 0 blocks is skipped. The firmware stops a range on a unit boundary,
 * so a whole unit is unmapped whole whatever the slicing. Returns the
 * status; c->range == c->nr when every range is done.
 */
static uint16_t nvm_dsm_slice(struct kvssd_nvm_ns *ns, struct kvssd_req *req,
                              struct nvm_dsm_cont *c)
{
    uint64_t budget = KVSSD_SLICE_DEALLOC_UNITS;

    while (c->range < c->nr) {
        const uint8_t *r = c->ranges + c->range * KVSSD_NVM_DSM_RANGE_BYTES;
        uint32_t blocks = le32_at(r + 4);
        uint64_t lba = le64_at(r + 8) + c->done;
        struct kvftl_cpl cpl = {0};
        uint32_t n;
        uint16_t st;

        if (c->done == blocks) {
            /* done, or 0 blocks: costs no slice of its own */
            c->range++;
            c->done = 0;
            continue;
        }
        if (budget == 0) {
            break;
        }
        n = kvftl_block_deallocate_units(ns->ftl, lba, blocks - c->done, (uint32_t)budget,
                                         req->now_ns, &cpl);
        st = nvm_ftl_done(req, &cpl);
        if (st != KVSSD_SC_SUCCESS) {
            return st;
        }
        budget -= nvm_units_touched(ns, lba, n);
        c->done += n;
    }
    return KVSSD_SC_SUCCESS;
}

/*
 * Dataset Management (09h): NR + 1 ranges (up to 256, 4 KiB) read from the
 * host. IDR and IDW are hints: accepted, nothing done, no data read.
 * Deallocate checks every range first (a range past NSZE: LBA Out of Range,
 * nothing deallocated), then unmaps them in order, at most
 * KVSSD_SLICE_DEALLOC_UNITS units per call when the transport lets the
 * command park (the first slice in the fetch: a Deallocate that fits
 * completes at once and allocates nothing), else all in this call.
 */
static uint16_t nvm_dsm(struct kvssd_nvm_ns *ns, struct kvssd_req *req)
{
    const struct kvssd_sqe *sqe = req->sqe;
    uint32_t nr = (sqe->cdw[10] & KVSSD_NVM_DSM_NR_MASK) + 1;
    uint32_t attrs = sqe->cdw[11];
    struct nvm_dsm_cont *c = req->cont;
    uint16_t st;

    req->cont = NULL;
    if (c) {
        /* resumed: the simulated time goes on from the last slice */
        req->done_ns = MAX(req->done_ns, c->done_ns);
        st = nvm_dsm_slice(ns, req, c);
    } else {
        if (KVSSD_RESERVED(sqe->cdw[10], KVSSD_NVM_DSM_NR_MASK) ||
            KVSSD_RESERVED(attrs, KVSSD_NVM_DSM_IDR | KVSSD_NVM_DSM_IDW | KVSSD_NVM_DSM_AD)) {
            return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
        }
        if (!(attrs & KVSSD_NVM_DSM_AD)) {
            return KVSSD_SC_SUCCESS;
        }
        c = &ns->dsm;
        memset(c, 0, offsetof(struct nvm_dsm_cont, ranges));
        c->nr = nr;
        st = kvssd_dptr_from_host(req, 0, c->ranges, nr * KVSSD_NVM_DSM_RANGE_BYTES);
        if (st != KVSSD_SC_SUCCESS) {
            return st;
        }
        for (uint32_t i = 0; i < nr; i++) {
            const uint8_t *r = c->ranges + i * KVSSD_NVM_DSM_RANGE_BYTES;
            uint32_t blocks = le32_at(r + 4);
            uint64_t slba = le64_at(r + 8);

            if (blocks && !nvm_range_ok(ns, slba, blocks)) {
                return KVSSD_SC_LBA_OUT_OF_RANGE | KVSSD_SC_DNR;
            }
        }
        do {
            st = nvm_dsm_slice(ns, req, c);
        } while (st == KVSSD_SC_SUCCESS && c->range < c->nr && !req->may_park);
    }
    if (st != KVSSD_SC_SUCCESS || c->range == c->nr) {
        if (c != &ns->dsm) {
            g_free(c);
        }
        return st;
    }
    /* more to do: parked until the transport's next slice */
    if (c == &ns->dsm) {
        c = g_memdup2(&ns->dsm, sizeof(ns->dsm));
    }
    c->done_ns = req->done_ns;
    req->cont = c;
    req->in_progress = true;
    return KVSSD_SC_SUCCESS;
}

/* ---- The seam ------------------------------------------------------------ */

typedef uint16_t nvm_handler(struct kvssd_nvm_ns *ns, struct kvssd_req *req);

static nvm_handler *nvm_handler_of(uint8_t opcode)
{
    switch (opcode) {
    case KVSSD_NVM_OPC_FLUSH:
        return nvm_flush;
    case KVSSD_NVM_OPC_WRITE:
        return nvm_write;
    case KVSSD_NVM_OPC_READ:
        return nvm_read;
    case KVSSD_NVM_OPC_WRITE_ZEROES:
        return nvm_write_zeroes;
    case KVSSD_NVM_OPC_DSM:
        return nvm_dsm;
    default:
        return NULL;
    }
}

bool kvssd_nvm_opcode_supported(uint8_t opcode)
{
    return nvm_handler_of(opcode) != NULL;
}

void kvssd_nvm_execute(struct kvssd_nvm_ns *ns, struct kvssd_req *req)
{
    uint8_t opcode = kvssd_sqe_opcode(req->sqe);
    uint32_t nsid = req->sqe->cdw[1];
    nvm_handler *run = nvm_handler_of(opcode);

    req->dw0 = 0;
    req->dw1 = 0;
    req->done_ns = req->now_ns;
    req->in_progress = false;
    if (!req->cont) {
        ns->xfer->commands++; /* once per command, not per slice */
    } else if (opcode != KVSSD_NVM_OPC_DSM) {
        /* the transport broke the parking contract: drop the state, fail the command */
        kvssd_nvm_cancel(ns, req->cont);
        req->cont = NULL;
        req->status = KVSSD_SC_INTERNAL_ERROR;
        return;
    }

    if (nsid != 1 && !(opcode == KVSSD_NVM_OPC_FLUSH && nsid == KVSSD_NSID_ALL)) {
        req->status = KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR;
        return;
    }
    req->status = run ? run(ns, req) : KVSSD_SC_INVALID_OPCODE | KVSSD_SC_DNR;
}

void kvssd_nvm_cancel(struct kvssd_nvm_ns *ns, void *cont)
{
    (void)ns; /* a parked Deallocate holds only its memory */
    g_free(cont);
}

uint32_t kvssd_nvm_data_len(const struct kvssd_sqe *sqe, uint32_t lba_bytes)
{
    switch (kvssd_sqe_opcode(sqe)) {
    case KVSSD_NVM_OPC_WRITE:
    case KVSSD_NVM_OPC_READ:
        /* at most 65536 x 4096 = 256 MiB: fits; MDTS is checked before any transfer */
        return kvssd_nvm_blocks(sqe) * lba_bytes;
    case KVSSD_NVM_OPC_DSM:
        return ((sqe->cdw[10] & KVSSD_NVM_DSM_NR_MASK) + 1) * KVSSD_NVM_DSM_RANGE_BYTES;
    default:
        return 0;
    }
}

/* ---- Namespace life cycle ------------------------------------------------ */

struct kvssd_nvm_ns *kvssd_nvm_ns_new(struct kvftl *ftl, const struct kvssd_nvm_config *cfg,
                                      struct kvssd_xfer_counters *xfer, char *err, size_t err_len)
{
    const struct kvftl_config *fc;
    uint32_t max_bytes = KVFTL_BLOCK_MAX_XFER_BYTES;
    struct kvssd_nvm_ns *ns;

    if (!ftl) {
        snprintf(err, err_len, "the NVM namespace needs an opened kvftl instance");
        return NULL;
    }
    fc = kvftl_get_config(ftl);
    if (fc->command_set != KVFTL_CMDSET_NVM) {
        snprintf(err, err_len,
                 "the NVM namespace needs the nvm personality; the firmware runs command_set %s",
                 kvftl_command_set_names[fc->command_set]);
        return NULL;
    }
    if (fc->lba_bytes < 512 || fc->lba_bytes > KVFTL_BLOCK_UNIT_BYTES ||
        (fc->lba_bytes & (fc->lba_bytes - 1))) {
        snprintf(err, err_len, "lba_bytes is %u; it must be a power of two from 512 to %u",
                 fc->lba_bytes, KVFTL_BLOCK_UNIT_BYTES);
        return NULL;
    }
    if (cfg && cfg->mdts_bytes) {
        if (cfg->mdts_bytes < KVFTL_BLOCK_UNIT_BYTES) {
            snprintf(err, err_len, "mdts_bytes is %u; it must be 0 (no limit) or at least %u",
                     cfg->mdts_bytes, KVFTL_BLOCK_UNIT_BYTES);
            return NULL;
        }
        max_bytes = MIN(max_bytes, cfg->mdts_bytes);
    }
    ns = g_new0(struct kvssd_nvm_ns, 1);
    ns->ftl = ftl;
    ns->xfer = xfer ? xfer : &ns->own_xfer;
    ns->nsze = kvftl_block_lbas(ftl);
    ns->lba_bytes = fc->lba_bytes;
    ns->lbas_per_unit = KVFTL_BLOCK_UNIT_BYTES / fc->lba_bytes;
    ns->max_xfer_lbas = max_bytes / fc->lba_bytes;
    ns->chunk_lbas = KVSSD_NVM_CHUNK_BYTES / fc->lba_bytes;
    ns->ftl_max_lbas = KVFTL_BLOCK_MAX_XFER_BYTES / fc->lba_bytes;
    ns->bounce = g_malloc(KVSSD_NVM_CHUNK_BYTES);
    return ns;
}

void kvssd_nvm_ns_free(struct kvssd_nvm_ns *ns)
{
    if (!ns) {
        return;
    }
    g_free(ns->bounce);
    g_free(ns);
}
