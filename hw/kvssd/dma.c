/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The data pointer of a command: PRP entries and PRP lists, or an SGL of
 * data block / segment / last segment descriptors, resolved once into a
 * bounded list of guest-physical extents. Every access goes through
 * pci_dma_read/pci_dma_write, so an address outside guest RAM (or with bus
 * mastering off) fails with DATA_XFER_ERROR. The transfer counters get
 * the PRP list / SGL segment bytes fetched and the data moved, rounded up
 * per extent to the dma-unit a page-granular DMA engine moves.
 */
#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "system/dma.h"

#include "kvssd.h"
#include "trace.h"

#define PAGE KVSSD_PAGE_BYTES

uint32_t kvssd_mdts_bytes(const KvssdState *n)
{
    return n->mdts ? (uint32_t)PAGE << n->mdts : UINT32_MAX;
}

/*
 * The bytes a KV command's data pointer describes (the NVM command set's:
 * kvssd_nvm_data_len()). The KV command set puts
 * the length in CDW10 for the commands that move a buffer; Key Stage moves
 * the key; a hybrid inline head moves the whole 4 KiB pages of its value.
 */
uint32_t kvssd_io_data_len(const struct kvssd_sqe *sqe)
{
    switch (kvssd_sqe_opcode(sqe)) {
    case KVSSD_OPC_STORE:
    case KVSSD_OPC_RETRIEVE:
    case KVSSD_OPC_LIST:
    case KVSSD_OPC_ITER_READ:
        return sqe->cdw[10];
    case KVSSD_OPC_KEY_STAGE:
        return sqe->cdw[10] & 0xff;
    case KVSSD_OPC_INLINE_HEAD:
        if (sqe->cdw[11] & KVSSD_INLINE_HYBRID) {
            return (sqe->cdw[10] & KVSSD_INLINE_VSIZE_MASK) & ~(KVSSD_HYBRID_PAGE_BYTES - 1);
        }
        return 0;
    default:
        return 0;
    }
}

void kvssd_dptr_init(KvssdDptr *d, KvssdState *n, const struct kvssd_sqe *sqe, uint32_t len)
{
    memset(d, 0, sizeof(*d));
    d->n = n;
    d->sqe = sqe;
    d->len = len;
}

static uint16_t add_extent(KvssdDptr *d, uint64_t addr, uint32_t len)
{
    if (len == 0) {
        return KVSSD_SC_SUCCESS;
    }
    if (d->nr_extents == d->cap_extents) {
        return KVSSD_SC_INVALID_NUM_SGL_DESCRS | KVSSD_SC_DNR;
    }
    d->extents[d->nr_extents].addr = addr;
    d->extents[d->nr_extents].len = len;
    d->nr_extents++;
    return KVSSD_SC_SUCCESS;
}

static uint16_t resolve_prp(KvssdDptr *d)
{
    KvssdState *n = d->n;
    const struct kvssd_sqe *sqe = d->sqe;
    uint64_t prp1 = (uint64_t)sqe->cdw[7] << 32 | sqe->cdw[6];
    uint64_t prp2 = (uint64_t)sqe->cdw[9] << 32 | sqe->cdw[8];
    uint32_t first = MIN(d->len, PAGE - (uint32_t)(prp1 & (PAGE - 1)));
    uint32_t remaining = d->len - first;
    uint64_t list[PAGE / 8];

    d->cap_extents = d->len / PAGE + 2;
    d->extents = g_new(KvssdExtent, d->cap_extents);
    add_extent(d, prp1, first);
    if (remaining == 0) {
        return KVSSD_SC_SUCCESS;
    }
    if (remaining <= PAGE) {
        if (prp2 & (PAGE - 1)) {
            trace_kvssd_prp_bad_offset(prp2);
            return KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR;
        }
        return add_extent(d, prp2, remaining);
    }
    if (prp2 & 7) {
        trace_kvssd_prp_bad_offset(prp2);
        return KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR;
    }
    /*
     * A PRP list: pages of 8-byte entries; the last entry of a list page
     * points to the next list page when more entries are needed. Only the
     * list pointer in PRP2 may start inside a page; every entry in a list,
     * the chain pointer included, has a page offset of 0 (the PRP Entry
     * layout of the NVMe base specification), so every list page after the
     * first holds 511 data entries and a list that points back into itself
     * either ends with Invalid PRP Offset or runs out of data pages. The walk therefore never needs
     * more list pages than the transfer has data pages in the list; that bound is enforced too, so
     * no list can keep the bottom half walking.
     */
    uint64_t list_addr = prp2;
    uint32_t pages = DIV_ROUND_UP(remaining, PAGE);
    uint32_t max_list_pages = pages;
    for (uint32_t list_pages = 0; pages > 0; list_pages++) {
        if (list_pages == max_list_pages) {
            trace_kvssd_prp_bad_offset(list_addr);
            return KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR;
        }
        uint32_t in_page = (PAGE - (uint32_t)(list_addr & (PAGE - 1))) / 8;
        uint32_t take = pages > in_page ? in_page : pages;   /* entries read */
        bool chained = pages > in_page;
        if (pci_dma_read(PCI_DEVICE(n), list_addr, list, take * 8) != MEMTX_OK) {
            trace_kvssd_dma_error(list_addr, take * 8);
            return KVSSD_SC_DATA_XFER_ERROR;
        }
        n->xfer.prp_list_bytes += take * 8;
        uint32_t data_entries = chained ? take - 1 : take;
        for (uint32_t i = 0; i < data_entries; i++) {
            uint64_t e = le64_to_cpu(list[i]);
            uint32_t l = MIN(remaining, PAGE);
            if (e & (PAGE - 1)) {
                trace_kvssd_prp_bad_offset(e);
                return KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR;
            }
            add_extent(d, e, l);
            remaining -= l;
        }
        pages -= data_entries;
        if (chained) {
            list_addr = le64_to_cpu(list[take - 1]);
            if (list_addr & (PAGE - 1)) {
                trace_kvssd_prp_bad_offset(list_addr);
                return KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR;
            }
        }
    }
    return KVSSD_SC_SUCCESS;
}

enum {
    SGL_DATA_BLOCK = 0x0,
    SGL_BIT_BUCKET = 0x1,
    SGL_SEGMENT = 0x2,
    SGL_LAST_SEGMENT = 0x3,
};

typedef struct SglDesc {
    uint64_t addr;
    uint32_t len;
    uint8_t rsvd[3];
    uint8_t type;
} QEMU_PACKED SglDesc;

static uint16_t sgl_data(KvssdDptr *d, const SglDesc *s, uint64_t *total)
{
    uint8_t type = s->type >> 4, subtype = s->type & 0xf;

    if (type != SGL_DATA_BLOCK || subtype != 0) {
        return KVSSD_SC_SGL_DESCR_TYPE_INVALID | KVSSD_SC_DNR;
    }
    uint32_t len = le32_to_cpu(s->len);
    uint64_t want = d->len - *total;
    if (want == 0) {
        return KVSSD_SC_SUCCESS;     /* descriptors past the transfer are not used */
    }
    len = MIN(len, want);
    *total += len;
    return add_extent(d, le64_to_cpu(s->addr), len);
}

/*
 * The walk is bounded by what the SGL may describe: at most
 * KVSSD_MAX_SGL_DESCRS descriptors over all its segments (so at most 4 KiB
 * of segment bytes fetched, however the segments point at each other),
 * and no segment after the one that completes the transfer.
 */
static uint16_t resolve_sgl(KvssdDptr *d)
{
    KvssdState *n = d->n;
    const struct kvssd_sqe *sqe = d->sqe;
    SglDesc s, seg[KVSSD_MAX_SGL_DESCRS];
    uint64_t total = 0;
    uint32_t walked = 0;
    uint16_t st;

    d->cap_extents = KVSSD_MAX_SGL_DESCRS;
    d->extents = g_new(KvssdExtent, d->cap_extents);
    memcpy(&s, &sqe->cdw[6], sizeof(s));
    for (;;) {
        uint8_t type = s.type >> 4;
        if (type == SGL_DATA_BLOCK || type == SGL_BIT_BUCKET) {
            st = sgl_data(d, &s, &total);
            if (st) {
                return st;
            }
            break;                   /* a data descriptor in the command ends the list */
        }
        if (type != SGL_SEGMENT && type != SGL_LAST_SEGMENT) {
            return KVSSD_SC_SGL_DESCR_TYPE_INVALID | KVSSD_SC_DNR;
        }
        if ((s.type & 0xf) != 0) {
            return KVSSD_SC_SGL_DESCR_TYPE_INVALID | KVSSD_SC_DNR;
        }
        uint32_t len = le32_to_cpu(s.len);
        if (len == 0 || len % sizeof(SglDesc) != 0) {
            return KVSSD_SC_INVALID_SGL_SEG_DESCR | KVSSD_SC_DNR;
        }
        uint32_t nd = len / sizeof(SglDesc);
        if (nd > KVSSD_MAX_SGL_DESCRS - walked) {
            return KVSSD_SC_INVALID_NUM_SGL_DESCRS | KVSSD_SC_DNR;
        }
        walked += nd;
        uint64_t addr = le64_to_cpu(s.addr);
        if (pci_dma_read(PCI_DEVICE(n), addr, seg, len) != MEMTX_OK) {
            trace_kvssd_dma_error(addr, len);
            return KVSSD_SC_DATA_XFER_ERROR;
        }
        n->xfer.prp_list_bytes += len;
        bool last = type == SGL_LAST_SEGMENT;
        for (uint32_t i = 0; i < nd; i++) {
            uint8_t t = seg[i].type >> 4;
            if (t == SGL_SEGMENT || t == SGL_LAST_SEGMENT) {
                /* only the last descriptor of a (non-last) segment may chain */
                if (last || i != nd - 1) {
                    return KVSSD_SC_INVALID_SGL_SEG_DESCR | KVSSD_SC_DNR;
                }
                s = seg[i];
                /* the transfer is described: nothing further can add to it,
                 * so a chain that cycles back is never walked again */
                if (total == d->len) {
                    return KVSSD_SC_SUCCESS;
                }
                goto next_segment;
            }
            st = sgl_data(d, &seg[i], &total);
            if (st) {
                return st;
            }
        }
        if (!last) {
            /* a Segment must end with a pointer to the next segment */
            return KVSSD_SC_INVALID_SGL_SEG_DESCR | KVSSD_SC_DNR;
        }
        break;
next_segment:
        continue;
    }
    if (total < d->len) {
        return KVSSD_SC_DATA_SGL_LEN_INVALID | KVSSD_SC_DNR;
    }
    return KVSSD_SC_SUCCESS;
}

static uint16_t resolve(KvssdDptr *d)
{
    if (d->resolved) {
        return d->resolve_status;
    }
    d->resolved = true;
    uint8_t psdt = kvssd_sqe_psdt(d->sqe);
    if (d->len > kvssd_mdts_bytes(d->n)) {
        d->resolve_status = KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    } else if (psdt == 0) {
        d->resolve_status = resolve_prp(d);
    } else if (psdt == 3) {
        d->resolve_status = KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    } else {
        d->resolve_status = resolve_sgl(d);
    }
    return d->resolve_status;
}

static uint16_t dptr_rw(KvssdDptr *d, uint64_t offset, void *buf, uint32_t len, bool to_dev)
{
    uint16_t st = resolve(d);
    if (st) {
        return st;
    }
    if (offset > d->len || len > d->len - offset) {
        return KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR;
    }
    uint64_t pos = 0, end = offset + len;
    uint8_t *p = buf;
    for (uint32_t i = 0; i < d->nr_extents && offset < end; i++) {
        KvssdExtent *e = &d->extents[i];
        if (offset >= pos + e->len) {
            pos += e->len;
            continue;
        }
        uint64_t in = offset - pos;
        uint32_t chunk = (uint32_t)MIN(e->len - in, end - offset);
        MemTxResult r = to_dev ? pci_dma_read(PCI_DEVICE(d->n), e->addr + in, p, chunk)
                               : pci_dma_write(PCI_DEVICE(d->n), e->addr + in, p, chunk);
        if (r != MEMTX_OK) {
            trace_kvssd_dma_error(e->addr + in, chunk);
            return KVSSD_SC_DATA_XFER_ERROR;
        }
        p += chunk;
        offset += chunk;
        pos += e->len;
    }
    if (to_dev) {
        d->max_h2d = MAX(d->max_h2d, end);
        d->moved_h2d += len;
    } else {
        d->max_d2h = MAX(d->max_d2h, end);
        d->moved_d2h += len;
    }
    return KVSSD_SC_SUCCESS;
}

static uint16_t dptr_from_host(void *opaque, uint64_t offset, void *buf, uint32_t len)
{
    return dptr_rw(opaque, offset, buf, len, true);
}

static uint16_t dptr_to_host(void *opaque, uint64_t offset, const void *buf, uint32_t len)
{
    return dptr_rw(opaque, offset, (void *)buf, len, false);
}

struct kvssd_dptr kvssd_dptr_ops(KvssdDptr *d)
{
    return (struct kvssd_dptr){
        .opaque = d,
        .from_host = dptr_from_host,
        .to_host = dptr_to_host,
    };
}

/* The bytes a page-granular engine moves for the first @max bytes: per extent, rounded up. */
static uint64_t dma_units(const KvssdDptr *d, uint64_t max)
{
    uint64_t unit = d->n->dma_unit, pos = 0, bytes = 0;

    for (uint32_t i = 0; i < d->nr_extents && pos < max; i++) {
        uint64_t used = MIN(d->extents[i].len, max - pos);
        bytes += DIV_ROUND_UP(used, unit) * unit;
        pos += d->extents[i].len;
    }
    return bytes;
}

void kvssd_dptr_finish(KvssdDptr *d)
{
    d->n->xfer.data_h2d_bytes += dma_units(d, d->max_h2d);
    d->n->xfer.data_d2h_bytes += dma_units(d, d->max_d2h);
    g_free(d->extents);
    d->extents = NULL;
}
