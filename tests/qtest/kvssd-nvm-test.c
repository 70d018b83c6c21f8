/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nvm personality through the transport (-device kvssd,command-set=nvm):
 * what a Linux host reads to bind it as /dev/nvmeXnY (Identify Controller
 * ONCS and VWC, Identify Namespace CNS 00h, the CSI 00h descriptor, the
 * effects log), data round trips through PRP lists, and the NVM statuses
 * with their DNR bit as the CQE carries them. The command set's every
 * field and status are tests/cmdset/test_nvm.c's; these prove the wiring.
 */
#include "kvssd-common.h"

/* 2 x 2 dies x 32 blocks x 64 pages x 16 KiB = 128 MiB of NAND, as the random qtest's */
#define NVM_PROPS \
    "command-set=nvm,channels=2,dies-per-channel=2,blocks-per-die=32,pages-per-block=64"

#define ST_LBA_RANGE (KVSSD_SC_LBA_OUT_OF_RANGE | KVSSD_SC_DNR)
#define ST_INVALID_FIELD (KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR)

static KvDev *nvm_ready(const char *extra)
{
    g_autofree char *props = g_strdup_printf("%s%s", NVM_PROPS, extra ? extra : "");

    return kv_ready(props);
}

/* Identify Namespace CNS 00h of NSID 1. */
static void nvm_id_ns(KvDev *d, uint8_t *id)
{
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_NS, 0, 1, id), ==, 0);
}

static uint64_t nvm_nsze(KvDev *d)
{
    uint8_t id[4096];

    nvm_id_ns(d, id);
    return le64p(id + KVSSD_ID_NS_NSZE);
}

/* A Read or Write of @blocks at @slba with the data at @buf (PRP list when it spans pages). */
static KvCqe nvm_rw(KvDev *d, uint8_t opc, uint64_t slba, uint32_t blocks, uint32_t lba,
                    uint64_t buf, uint32_t flags)
{
    struct kvssd_sqe s = kv_sqe(opc, 1);

    kvssd_nvm_set_range(&s, slba, blocks, flags);
    kv_prp_for(d, &s, buf, blocks * lba);
    return kv_cmd(d, 1, &s);
}

static void pattern(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 12));
    }
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

/*
 * What Linux 6.1's nvme driver reads: ONCS (DSM, Write Zeroes), VWC, NN;
 * CNS 00h with NSZE = NCAP = TNVMCAP / 4096, NUSE 0 on a new device, one LBA
 * format of 4 KiB, DLFEAT read-zeroes + DEAC, NPWG = 0 (one 4 KiB block);
 * the descriptor list's CSI 00h; CNS 05h/06h for CSI 00h and 2Ch for the KV
 * CSI; the effects log of CSI 00h lists the five I/O commands (LBCC on the
 * three that change blocks) and that of CSI 01h none; the KV feature 20h
 * does not exist.
 */
static void test_identify(void)
{
    KvDev *d = nvm_ready(NULL);
    uint8_t id[4096], log[4096];

    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CTRL, 0, 0, id), ==, 0);
    g_assert_cmphex(le16p(id + KVSSD_ID_CTRL_ONCS), ==, KVSSD_ONCS_DSM | KVSSD_ONCS_WRITE_ZEROES);
    /* plp on (the default): no volatile cache; Flush takes NSID FFFFFFFFh */
    g_assert_cmphex(id[KVSSD_ID_CTRL_VWC], ==, KVSSD_VWC_FLUSH_BROADCAST);
    g_assert_cmpuint(le32p(id + 516), ==, 1);
    g_assert(memcmp(id + 24, "QEMU KVSSD NVMe Block SSD ", 26) == 0);
    uint64_t tnvmcap = le64p(id + 280);

    nvm_id_ns(d, id);
    uint64_t nsze = le64p(id + KVSSD_ID_NS_NSZE);
    g_assert_cmpuint(nsze, >, 1000);
    g_assert_cmpuint(le64p(id + KVSSD_ID_NS_NCAP), ==, nsze);
    g_assert_cmpuint(le64p(id + KVSSD_ID_NS_NUSE), ==, 0);
    g_assert_cmpuint(nsze * 4096, ==, tnvmcap);
    g_assert_cmpuint(le64p(id + KVSSD_ID_NS_NVMCAP), ==, tnvmcap);
    g_assert_cmphex(id[KVSSD_ID_NS_NSFEAT], ==,
                    KVSSD_NSFEAT_THINP | KVSSD_NSFEAT_NSABP | KVSSD_NSFEAT_OPTPERF);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NAWUPF), ==, 0);
    g_assert_cmpuint(id[KVSSD_ID_NS_NLBAF], ==, 0);
    g_assert_cmpuint(id[KVSSD_ID_NS_FLBAS], ==, 0);
    g_assert_cmpuint(kvssd_id_ns_lbads(id), ==, 12);
    g_assert_cmphex(le32p(id + KVSSD_ID_NS_LBAF), ==, 12u << 16);
    g_assert_cmphex(id[KVSSD_ID_NS_DLFEAT], ==, KVSSD_DLFEAT_READ_ZEROES | KVSSD_DLFEAT_WZ_DEAC);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NPWG), ==, 0);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NOWS), ==, 0);
    g_assert(!all_zero(id + KVSSD_ID_NS_NGUID, 16));

    g_assert_cmphex(kv_identify(d, KVSSD_CNS_NS_DESCR_LIST, 0, 1, id), ==, 0);
    g_assert_cmpuint(id[20], ==, 4); /* after the NGUID: the CSI descriptor */
    g_assert_cmpuint(id[21], ==, 1);
    g_assert_cmpuint(id[24], ==, KVSSD_CSI_NVM);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CSI_NS, KVSSD_CSI_NVM, 1, id), ==, 0);
    g_assert(all_zero(id, sizeof(id)));
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CSI_NS, KVSSD_CSI_KV, 1, id), ==,
                    KVSSD_SC_INVALID_IOCS | KVSSD_SC_DNR);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CSI_CTRL, KVSSD_CSI_NVM, 0, id), ==, 0);
    g_assert(all_zero(id, sizeof(id)));
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_ACTIVE_NS_LIST, 0, 0, id), ==, 0);
    g_assert_cmpuint(le32p(id), ==, 1);
    g_assert_cmpuint(le32p(id + 4), ==, 0);

    g_assert_cmphex(kv_get_log(d, KVSSD_LID_EFFECTS, KVSSD_CSI_NVM, 4096, 0, log), ==, 0);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_NVM_OPC_FLUSH), ==, 1);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_NVM_OPC_WRITE), ==, 3);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_NVM_OPC_READ), ==, 1);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_NVM_OPC_WRITE_ZEROES), ==, 3);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_NVM_OPC_DSM), ==, 3);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_OPC_EXIST), ==, 0);
    g_assert_cmphex(le32p(log + 4 * KVSSD_ADM_IDENTIFY), ==, 1);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_EFFECTS, KVSSD_CSI_KV, 4096, 0, log), ==, 0);
    g_assert(all_zero(log + 1024, 1024));

    KvCqe c = kv_feature(d, KVSSD_ADM_GET_FEATURES, KVSSD_FID_KV_CONFIG, 0, 1);
    g_assert_cmphex(c.status, ==, ST_INVALID_FIELD);
    kv_stop(d);
}

/*
 * Write 40 KiB through a PRP list (PRP1 page aligned) and 3 blocks whose
 * PRP1 starts 512 bytes into a page (PRP2 the next page), read both back
 * through PRP lists byte for byte; NUSE counts the 13 blocks; SMART counts
 * two writes and two reads, and their data units.
 */
static void test_rw_prp_lists(void)
{
    KvDev *d = nvm_ready(NULL);
    static uint8_t w[40960], w2[3 * 4096], r[40960];
    uint8_t id[4096], smart[512];

    pattern(w, sizeof(w), 1);
    pattern(w2, sizeof(w2), 2);
    qtest_memwrite(d->qts, KV_DATA, w, sizeof(w));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, 100, 10, 4096, KV_DATA, 0).status, ==, 0);
    qtest_memwrite(d->qts, KV_DATA + 0x10200, w2, sizeof(w2));
    g_assert_cmphex(
        nvm_rw(d, KVSSD_NVM_OPC_WRITE, 7, 3, 4096, KV_DATA + 0x10200, KVSSD_NVM_RW_FUA).status, ==,
        0);

    qtest_memset(d->qts, KV_DATA2, 0, sizeof(r));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 100, 10, 4096, KV_DATA2, 0).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2, r, sizeof(w));
    g_assert(memcmp(r, w, sizeof(w)) == 0);
    qtest_memset(d->qts, KV_DATA2, 0, sizeof(r));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 6, 5, 4096, KV_DATA2 + 0x800, 0).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2 + 0x800, r, 5 * 4096);
    g_assert(all_zero(r, 4096)); /* block 6 was never written */
    g_assert(memcmp(r + 4096, w2, sizeof(w2)) == 0);
    g_assert(all_zero(r + 4 * 4096, 4096));

    nvm_id_ns(d, id);
    g_assert_cmpuint(le64p(id + KVSSD_ID_NS_NUSE), ==, 13);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_SMART, 0, 512, 0, smart), ==, 0);
    g_assert_cmpuint(le64p(smart + 64), ==, 2); /* host read commands */
    g_assert_cmpuint(le64p(smart + 80), ==, 2); /* host write commands */
    g_assert_cmpuint(le64p(smart + 48), ==, 1); /* 53,248 bytes written: one unit of 512,000 */
    g_assert_cmpuint(le64p(smart + 32), ==, 1);
    kv_stop(d);
}

/*
 * The statuses the CQE carries: LBA Out of Range (4080h) at NSZE, Invalid
 * Field past MDTS (mdts=9: 512 blocks of 4 KiB) and for PRINFO, Invalid
 * Namespace (400Bh), Invalid Opcode (4001h), Data Transfer Error (0004h)
 * for a buffer outside guest RAM; Flush with NSID FFFFFFFFh succeeds.
 */
static void test_statuses(void)
{
    KvDev *d = nvm_ready(NULL);
    uint64_t nsze = nvm_nsze(d);
    struct kvssd_sqe s;

    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, nsze - 1, 1, 4096, KV_DATA2, 0).status, ==, 0);
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, nsze, 1, 4096, KV_DATA2, 0).status, ==,
                    ST_LBA_RANGE);
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, nsze - 1, 2, 4096, KV_DATA, 0).status, ==,
                    ST_LBA_RANGE);
    s = kv_sqe(KVSSD_NVM_OPC_WRITE_ZEROES, 1);
    kvssd_nvm_set_range(&s, nsze, 1, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, ST_LBA_RANGE);

    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 512, 4096, KV_DATA2, 0).status, ==, 0);
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 511, 4096, KV_DATA2 + 0x200, 0).status, ==, 0);
    s = kv_sqe(KVSSD_NVM_OPC_READ, 1);
    kvssd_nvm_set_range(&s, 0, 513, 0);
    kv_set_prp(&s, KV_DATA2, KV_PRPLIST);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, ST_INVALID_FIELD);
    kvssd_nvm_set_range(&s, 0, 65536, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, ST_INVALID_FIELD);
    g_assert_cmphex(
        nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 1, 4096, KV_DATA2, 1u << KVSSD_NVM_RW_PRINFO_SHIFT).status,
        ==, ST_INVALID_FIELD);

    s = kv_sqe(KVSSD_NVM_OPC_READ, 2);
    kvssd_nvm_set_range(&s, 0, 1, 0);
    kv_set_prp(&s, KV_DATA2, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR);
    s = kv_sqe(KVSSD_OPC_EXIST, 1);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_OPCODE | KVSSD_SC_DNR);
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 1, 4096, KV_OUTSIDE_RAM, 0).status, ==,
                    KVSSD_SC_DATA_XFER_ERROR);
    s = kv_sqe(KVSSD_NVM_OPC_FLUSH, KVSSD_NSID_ALL);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);
    s = kv_sqe(KVSSD_NVM_OPC_FLUSH, 1);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);
    kv_stop(d);
}

/*
 * Write Zeroes (no data pointer) and Dataset Management with 256 ranges
 * from a 4 KiB list: the blocks they name read as zeroes, their neighbours
 * keep their data; Format NVM unmaps everything; the FTL check (C4h) passes.
 */
static void test_write_zeroes_dsm_format(void)
{
    KvDev *d = nvm_ready(NULL);
    static uint8_t w[512 * 4096], r[512 * 4096];
    uint8_t list[4096];
    struct kvssd_sqe s;

    pattern(w, sizeof(w), 3);
    qtest_memwrite(d->qts, KV_DATA, w, sizeof(w));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, 0, 512, 4096, KV_DATA, 0).status, ==, 0);

    s = kv_sqe(KVSSD_NVM_OPC_WRITE_ZEROES, 1);
    kvssd_nvm_set_range(&s, 1, 2, KVSSD_NVM_WZ_DEAC);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);

    for (uint32_t i = 0; i < 256; i++) { /* ranges: block 4 + 2i, one block each */
        uint8_t *p = list + 16 * i;
        memset(p, 0, 16);
        p[4] = 1;
        p[8] = (uint8_t)(4 + 2 * i);
        p[9] = (uint8_t)((4 + 2 * i) >> 8);
    }
    qtest_memwrite(d->qts, KV_DATA2, list, sizeof(list));
    s = kv_sqe(KVSSD_NVM_OPC_DSM, 1);
    s.cdw[10] = 255;
    s.cdw[11] = KVSSD_NVM_DSM_AD;
    kv_set_prp(&s, KV_DATA2, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);

    qtest_memset(d->qts, KV_DATA2, 0xa5, sizeof(r));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 512, 4096, KV_DATA2, 0).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2, r, sizeof(r));
    for (uint32_t b = 0; b < 512; b++) {
        bool zero = b == 1 || b == 2 || (b >= 4 && b < 4 + 512 && b % 2 == 0);
        if (zero) {
            g_assert(all_zero(r + (size_t)b * 4096, 4096));
        } else {
            g_assert(memcmp(r + (size_t)b * 4096, w + (size_t)b * 4096, 4096) == 0);
        }
    }
    s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);

    s = kv_sqe(KVSSD_ADM_FORMAT_NVM, 1);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 8, 4096, KV_DATA2, 0).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2, r, 8 * 4096);
    g_assert(all_zero(r, 8 * 4096));
    uint8_t id[4096];
    nvm_id_ns(d, id);
    g_assert_cmpuint(le64p(id + KVSSD_ID_NS_NUSE), ==, 0);
    s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
}

/* The default flash (4 GiB): NSZE 936,162, a whole-namespace Deallocate takes many slices. */
#define NVM_DEFAULT_FLASH "command-set=nvm"

/* @n Dataset Management ranges at guest address @addr, each the whole namespace [0, @nsze). */
static void nvm_whole_ranges(KvDev *d, uint64_t addr, uint32_t n, uint64_t nsze)
{
    uint8_t list[256 * 16];

    g_assert_cmpuint(n, <=, 256);
    memset(list, 0, sizeof(list));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t blocks = (uint32_t)nsze;
        for (int b = 0; b < 4; b++) {
            list[16 * i + 4 + b] = (uint8_t)(blocks >> (8 * b));
        }
    }
    qtest_memwrite(d->qts, addr, list, (size_t)n * 16);
}

/* A Deallocate (AD) of @n ranges listed at KV_DATA2, put on SQ 1 and rung; its cid. */
static uint16_t nvm_ring_dsm(KvDev *d, uint32_t n)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_NVM_OPC_DSM, 1);

    s.cdw[10] = n - 1;
    s.cdw[11] = KVSSD_NVM_DSM_AD;
    kv_set_prp(&s, KV_DATA2, 0);
    uint16_t cid = kv_put(d, 1, &s, false);
    kv_ring(d, 1);
    return cid;
}

/* Wall time of one CSTS read (the main loop must answer it), microseconds; CSTS in *@csts. */
static int64_t nvm_csts_us(KvDev *d, uint32_t *csts)
{
    int64_t t0 = g_get_monotonic_time();

    *csts = kv_rd32(d, KVSSD_REG_CSTS);
    return g_get_monotonic_time() - t0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * 256 ranges each covering the whole namespace of the default device
 * (NSZE 936,162: 240 M units of map work, 1.1-1.8 s of the main loop when
 * done in one go) run in slices of KVSSD_SLICE_DEALLOC_UNITS units: the
 * first CSTS read after the doorbell, and the median of every read while
 * the command is in flight, answer within 50 ms; the command is still in
 * flight at the first read; it completes with success, the data it names
 * reads as zeroes (blocks 0..7 and the last 8, written first), NUSE is 0
 * and the FTL check passes.
 */
static void test_dsm_sliced(void)
{
    KvDev *d = kv_ready(NVM_DEFAULT_FLASH);
    uint64_t nsze = nvm_nsze(d);
    static uint8_t w[8 * 4096], r[8 * 4096];
    GArray *lat = g_array_new(false, false, sizeof(int64_t));
    int64_t deadline = g_get_monotonic_time() + 600 * G_USEC_PER_SEC;
    uint32_t csts;
    KvCqe c;

    g_assert_cmpuint(nsze, ==, 936162); /* the size of the finding: every walk is long */
    pattern(w, sizeof(w), 9);
    qtest_memwrite(d->qts, KV_DATA, w, sizeof(w));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, 0, 8, 4096, KV_DATA, 0).status, ==, 0);
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, nsze - 8, 8, 4096, KV_DATA, 0).status, ==, 0);
    nvm_whole_ranges(d, KV_DATA2, 256, nsze);

    uint16_t cid = nvm_ring_dsm(d, 256);
    for (;;) {
        int64_t us = nvm_csts_us(d, &csts);
        g_assert_cmphex(csts & (KVSSD_CSTS_RDY | KVSSD_CSTS_CFS), ==, KVSSD_CSTS_RDY);
        g_array_append_val(lat, us);
        if (kv_try_cqe(d, 1, &c)) {
            break;
        }
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
    }
    kv_cq_doorbell(d, 1);
    int64_t first = g_array_index(lat, int64_t, 0);
    g_array_sort(lat, cmp_i64);
    int64_t median = g_array_index(lat, int64_t, lat->len / 2);
    g_test_message("dsm-sliced: %u CSTS reads in flight, first %" PRId64 " us, median %" PRId64
                   " us, max %" PRId64 " us",
                   lat->len, first, median, g_array_index(lat, int64_t, lat->len - 1));
    g_assert_cmpuint(lat->len, >, 1); /* in flight at the first read */
    g_assert_cmpint(first, <, 50000);
    g_assert_cmpint(median, <, 50000);
    g_array_free(lat, true);
    g_assert_cmpuint(c.cid, ==, cid);
    g_assert_cmphex(c.status, ==, 0);

    qtest_memset(d->qts, KV_DATA2, 0xa5, sizeof(r));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 8, 4096, KV_DATA2, 0).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2, r, sizeof(r));
    g_assert(all_zero(r, sizeof(r)));
    qtest_memset(d->qts, KV_DATA2, 0xa5, sizeof(r));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, nsze - 8, 8, 4096, KV_DATA2, 0).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2, r, sizeof(r));
    g_assert(all_zero(r, sizeof(r)));
    uint8_t id[4096];
    nvm_id_ns(d, id);
    g_assert_cmpuint(le64p(id + KVSSD_ID_NS_NUSE), ==, 0);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
}

/* One block written at @slba and read back through SQ 1: the device still works. */
static void nvm_round_trip(KvDev *d, uint64_t slba, uint32_t seed)
{
    uint8_t w[4096], r[4096];

    pattern(w, sizeof(w), seed);
    qtest_memwrite(d->qts, KV_DATA, w, sizeof(w));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, slba, 1, 4096, KV_DATA, 0).status, ==, 0);
    qtest_memset(d->qts, KV_DATA2 + 0x100000, 0, sizeof(r));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, slba, 1, 4096, KV_DATA2 + 0x100000, 0).status, ==,
                    0);
    qtest_memread(d->qts, KV_DATA2 + 0x100000, r, sizeof(r));
    g_assert(memcmp(r, w, sizeof(w)) == 0);
}

/*
 * A controller reset while a whole-namespace Deallocate is parked between
 * slices drops it: 5 times, ring one (the CSTS read lets slices run), then
 * CC.EN 1 -> 0 -> 1 and new I/O queues. No completion of the dropped
 * command reaches the new CQ (the next CQE is the next command's), a block
 * round-trips, and the FTL check passes. Under ASan a use after free of the
 * parked state aborts QEMU.
 */
static void test_dsm_reset_while_sliced(void)
{
    KvDev *d = kv_ready(NVM_DEFAULT_FLASH);
    uint64_t nsze = nvm_nsze(d);
    uint32_t csts;
    KvCqe c;

    nvm_whole_ranges(d, KV_DATA2, 256, nsze);
    for (int round = 0; round < 5; round++) {
        nvm_ring_dsm(d, 256);
        nvm_csts_us(d, &csts);
        g_assert(!kv_try_cqe(d, 1, &c)); /* still parked */
        kv_disable(d);
        kv_enable(d);
        kv_io_queue(d, 64);
    }
    nvm_csts_us(d, &csts);
    g_assert(!kv_try_cqe(d, 1, &c));
    nvm_round_trip(d, 100, 11);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
}

/*
 * Delete I/O SQ while a whole-namespace Deallocate is parked: the command
 * completes once, as Aborted due to SQ Deletion (0008h), before the
 * Delete's own completion; nothing more arrives on the CQ; SQ 1 is created
 * again, a block round-trips and the FTL check passes.
 */
static void test_dsm_delete_sq_while_sliced(void)
{
    KvDev *d = kv_ready(NVM_DEFAULT_FLASH);
    uint64_t nsze = nvm_nsze(d);
    uint32_t csts;
    KvCqe c;

    nvm_whole_ranges(d, KV_DATA2, 256, nsze);
    uint16_t cid = nvm_ring_dsm(d, 256);
    nvm_csts_us(d, &csts);
    g_assert_cmphex(kv_delete_sq(d, 1), ==, 0);
    g_assert(kv_try_cqe(d, 1, &c));
    g_assert_cmpuint(c.cid, ==, cid);
    g_assert_cmphex(c.status, ==, KVSSD_SC_ABORTED_SQ_DELETION);
    kv_cq_doorbell(d, 1);
    for (int i = 0; i < 20; i++) {
        nvm_csts_us(d, &csts);
    }
    g_assert(!kv_try_cqe(d, 1, &c));
    g_assert_cmphex(kv_create_sq(d, 1, 64, 1), ==, 0);
    nvm_round_trip(d, nsze - 1, 12);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
}

/*
 * lba-bytes=512: LBADS 9, NSZE eight times the 4 KiB device's, NPWG = 7
 * (a 4 KiB physical block); three blocks across a unit boundary round trip.
 */
static void test_lba_512(void)
{
    KvDev *d = nvm_ready(NULL);
    uint64_t nsze4k = nvm_nsze(d);
    uint8_t id[4096], w[3 * 512], r[16 * 512];

    kv_stop(d);
    d = nvm_ready(",lba-bytes=512");
    nvm_id_ns(d, id);
    g_assert_cmpuint(kvssd_id_ns_lbads(id), ==, 9);
    g_assert_cmpuint(le64p(id + KVSSD_ID_NS_NSZE), ==, nsze4k * 8);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NPWG), ==, 7);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NPDG), ==, 7);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NAWUN), ==, 7);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NAWUPF), ==, 7);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NABSPF), ==, 7);
    g_assert_cmpuint(le16p(id + KVSSD_ID_NS_NABO), ==, 0);

    pattern(w, sizeof(w), 4);
    qtest_memwrite(d->qts, KV_DATA, w, sizeof(w));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, 7, 3, 512, KV_DATA, 0).status, ==, 0);
    qtest_memset(d->qts, KV_DATA2, 0xa5, sizeof(r));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 16, 512, KV_DATA2, 0).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2, r, sizeof(r));
    g_assert(all_zero(r, 7 * 512));
    g_assert(memcmp(r + 7 * 512, w, sizeof(w)) == 0);
    g_assert(all_zero(r + 10 * 512, 6 * 512));
    kv_stop(d);
}

/*
 * The statistics log C0h on the nvm personality: the transfer counters
 * count the commands and the data DMA (dma-unit 4096), and the reset
 * feature zeroes them.
 */
static void test_stats_log(void)
{
    KvDev *d = nvm_ready(NULL);
    static uint8_t buf[4096];
    struct kvssd_stats_log st;

    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_RESET_STATS, 0, 0).status, ==,
                    0);
    qtest_memwrite(d->qts, KV_DATA, buf, sizeof(buf));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, 0, 1, 4096, KV_DATA, 0).status, ==, 0);
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 0, 1, 4096, KV_DATA2, 0).status, ==, 0);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_STATS, 0, sizeof(st), 0, &st), ==, 0);
    g_assert_cmpuint(le32_to_cpu(st.version), ==, KVSSD_STATS_LOG_VERSION);
    g_assert_cmpuint(le64_to_cpu(st.xfer.commands), ==, 2);
    g_assert_cmpuint(le64_to_cpu(st.xfer.data_h2d_bytes), ==, 4096);
    g_assert_cmpuint(le64_to_cpu(st.xfer.data_d2h_bytes), ==, 4096);
    g_assert_cmpuint(le64_to_cpu(st.xfer.inline_bytes), ==, 0);
    g_assert_cmpuint(le64_to_cpu(st.total_stripes), >, 0);
    kv_stop(d);
}

/*
 * latency=on: a Flush after a write is held until its simulated time on the
 * virtual clock (the page buffer is programmed), then completes; the Write
 * before it may complete at once (it only fills the page buffer).
 */
static void test_latency_on(void)
{
    KvDev *d = nvm_ready(",latency=on");
    static uint8_t buf[8192];
    struct kvssd_sqe s;
    uint16_t flush_cid;
    int seen = 0;
    KvCqe c;

    qtest_memwrite(d->qts, KV_DATA, buf, sizeof(buf));
    s = kv_sqe(KVSSD_NVM_OPC_WRITE, 1);
    kvssd_nvm_set_range(&s, 0, 2, 0);
    kv_prp_for(d, &s, KV_DATA, sizeof(buf));
    kv_put(d, 1, &s, false);
    s = kv_sqe(KVSSD_NVM_OPC_FLUSH, 1);
    flush_cid = kv_put(d, 1, &s, false);
    kv_ring(d, 1);
    for (int i = 0; i < 100; i++) {
        if (kv_try_cqe(d, 1, &c)) {
            g_assert_cmpuint(c.cid, !=, flush_cid);
            g_assert_cmphex(c.status, ==, 0);
            seen++;
        }
    }
    kv_cq_doorbell(d, 1);
    qtest_clock_step(d->qts, 1000000000);
    while (seen < 2) {
        c = kv_wait(d, 1);
        g_assert_cmphex(c.status, ==, 0);
        seen++;
    }
    g_assert_cmpuint(c.cid, ==, flush_cid);
    kv_stop(d);
}

/* image=FILE: blocks written before QEMU exits read back after a restart on the same image. */
static void test_image_persistence(void)
{
    g_autofree char *dir = g_dir_make_tmp("kvssd-qtest-XXXXXX", NULL);
    g_autofree char *img = g_build_filename(dir, "nand.img", NULL);
    g_autofree char *props = g_strdup_printf(",image=%s", img);
    static uint8_t w[5 * 4096], r[5 * 4096];

    pattern(w, sizeof(w), 5);
    KvDev *d = nvm_ready(props);
    qtest_memwrite(d->qts, KV_DATA, w, sizeof(w));
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_WRITE, 1000, 5, 4096, KV_DATA, 0).status, ==, 0);
    kv_stop(d);

    d = nvm_ready(props);
    g_assert_cmphex(nvm_rw(d, KVSSD_NVM_OPC_READ, 1000, 5, 4096, KV_DATA2, 0).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2, r, sizeof(r));
    g_assert(memcmp(r, w, sizeof(w)) == 0);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
    unlink(img);
    rmdir(dir);
}

/*
 * Both personalities in one machine: two kvssd functions, a KV one at 04.0
 * and an nvm one at 05.0, each its own firmware. Each answers its own
 * command set: a Store on the KV one, a Write/Read on the nvm one.
 */
static void test_two_devices(void)
{
    KvDev *kv = kv_ready(NULL); /* starts QEMU with the KV device at 04.0 */
    kv_stop(kv);

    const char *bios = g_getenv("KVSSD_BIOS_DIR") ? g_getenv("KVSSD_BIOS_DIR")
                                                  : "/usr/share/seabios";
    const char *machine = g_getenv("KVSSD_QTEST_MACHINE") ? g_getenv("KVSSD_QTEST_MACHINE") : "pc";
    QTestState *qts = qtest_initf("-L %s -L /usr/share/qemu -machine %s -m 256M -nodefaults "
                                  "-device kvssd,addr=04.0,serial=QTKV "
                                  "-device kvssd,addr=05.0,serial=QTBLK," NVM_PROPS,
                                  bios, machine);
    QPCIBus *bus = qpci_new_pc(qts, NULL);
    KvDev *dev[2];
    uint8_t id[4096];
    static uint8_t w[4096], r[4096];

    for (int i = 0; i < 2; i++) {
        dev[i] = g_new0(KvDev, 1);
        dev[i]->qts = qts;
        dev[i]->bus = bus;
        dev[i]->dev = qpci_device_find(bus, QPCI_DEVFN(4 + i, 0));
        g_assert(dev[i]->dev);
        qpci_device_enable(dev[i]->dev);
        dev[i]->bar = qpci_iomap(dev[i]->dev, 0, NULL);
    }
    /* one at a time: both use the same guest-physical queue layout */
    kv_enable(dev[0]);
    kv_io_queue(dev[0], 16);
    g_assert_cmphex(kv_identify(dev[0], KVSSD_CNS_NS_DESCR_LIST, 0, 1, id), ==, 0);
    g_assert_cmpuint(id[24], ==, KVSSD_CSI_KV);
    g_assert_cmphex(kv_store(dev[0], "key", "value", 5, 0), ==, 0);
    kv_disable(dev[0]);

    kv_enable(dev[1]);
    kv_io_queue(dev[1], 16);
    g_assert_cmphex(kv_identify(dev[1], KVSSD_CNS_NS_DESCR_LIST, 0, 1, id), ==, 0);
    g_assert_cmpuint(id[24], ==, KVSSD_CSI_NVM);
    pattern(w, sizeof(w), 6);
    qtest_memwrite(qts, KV_DATA, w, sizeof(w));
    g_assert_cmphex(nvm_rw(dev[1], KVSSD_NVM_OPC_WRITE, 9, 1, 4096, KV_DATA, 0).status, ==, 0);
    g_assert_cmphex(nvm_rw(dev[1], KVSSD_NVM_OPC_READ, 9, 1, 4096, KV_DATA2, 0).status, ==, 0);
    qtest_memread(qts, KV_DATA2, r, sizeof(r));
    g_assert(memcmp(r, w, sizeof(w)) == 0);
    kv_disable(dev[1]);

    kv_enable(dev[0]);
    kv_io_queue(dev[0], 16);
    KvCqe c = kv_retrieve(dev[0], "key", r, 16);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 5);
    g_assert(memcmp(r, "value", 5) == 0);

    for (int i = 0; i < 2; i++) {
        g_free(dev[i]->dev);
        g_free(dev[i]);
    }
    qpci_free_pc(bus);
    qtest_quit(qts);
}

/*
 * Random NVM commands through the transport, 8 in flight on one SQ: Writes
 * and Reads of 1..16 blocks with PRP1 at any 512-byte offset and PRP lists
 * of their own (one in twelve with a list entry that has an offset: 4013h;
 * one in twelve with its buffer outside guest RAM: 0004h), Write Zeroes,
 * Dataset Management, Flush, and ranges past NSZE (4080h). Every command
 * completes exactly once with its CID and the status a model predicts, every
 * Read's data equals a shadow of blocks 0..1023, CSTS.CFS never rises, and
 * the FTL check passes at the end. KVSSD_QTEST_SEED picks the stream.
 */
#define RT_SLOTS 8
#define RT_BLOCKS 1024u
#define RT_SLOT_BYTES (64u * 1024)

typedef struct RtCmd {
    uint8_t opc;
    uint64_t slba;
    uint32_t blocks;
    uint16_t cid, want;
    uint64_t buf;
    bool done;
} RtCmd;

static uint32_t rt_rnd(uint64_t *x, uint32_t n)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return (uint32_t)(*x >> 33) % n;
}

/* PRP1/PRP2 for @len bytes at @buf, the list (if any) at @list; @bad_entry: one entry off by 8. */
static void rt_prp(KvDev *d, struct kvssd_sqe *s, uint64_t buf, uint32_t len, uint64_t list,
                   bool bad_entry)
{
    uint32_t pages = (uint32_t)((len + (buf & 4095) + 4095) / 4096);
    uint64_t e[32];

    if (pages <= 1) {
        kv_set_prp(s, buf, 0);
        return;
    }
    if (pages == 2) {
        kv_set_prp(s, buf, (buf & ~4095ull) + 4096 + (bad_entry ? 8 : 0));
        return;
    }
    g_assert(pages - 1 <= 32);
    for (uint32_t i = 1; i < pages; i++) {
        e[i - 1] = cpu_to_le64((buf & ~4095ull) + (uint64_t)i * 4096 +
                               (bad_entry && i == 1 ? 8 : 0));
    }
    qtest_memwrite(d->qts, list, e, (pages - 1) * 8);
    kv_set_prp(s, buf, list);
}

static void test_random_transport(void)
{
    KvDev *d = nvm_ready(NULL);
    uint64_t nsze = nvm_nsze(d);
    const char *seed_env = g_getenv("KVSSD_QTEST_SEED");
    uint64_t x = (seed_env ? g_ascii_strtoull(seed_env, NULL, 10) : 1) * 0x9e3779b97f4a7c15ull + 1;
    uint8_t *shadow = g_malloc0((size_t)RT_BLOCKS * 4096);
    static uint8_t data[RT_SLOT_BYTES], expect[RT_SLOTS][RT_SLOT_BYTES];
    RtCmd cmd[RT_SLOTS];
    unsigned checked = 0, refused = 0;

    for (int batch = 0; batch < 150; batch++) {
        for (int k = 0; k < RT_SLOTS; k++) {
            RtCmd *c = &cmd[k];
            struct kvssd_sqe s;
            uint32_t pick = rt_rnd(&x, 12);
            bool bad_prp = false, outside = false;

            memset(c, 0, sizeof(*c));
            c->opc = pick < 4    ? KVSSD_NVM_OPC_WRITE
                     : pick < 8  ? KVSSD_NVM_OPC_READ
                     : pick < 9  ? KVSSD_NVM_OPC_WRITE_ZEROES
                     : pick < 10 ? KVSSD_NVM_OPC_DSM
                     : pick < 11 ? KVSSD_NVM_OPC_FLUSH
                                 : 0x0c; /* Verify: not supported */
            c->blocks = 1 + rt_rnd(&x, 16);
            if (rt_rnd(&x, 16)) {
                c->slba = rt_rnd(&x, RT_BLOCKS - c->blocks + 1);
            } else if (rt_rnd(&x, 2)) {
                c->slba = nsze + rt_rnd(&x, 4); /* past NSZE */
            } else {
                c->slba = nsze - 1; /* the last block and one past it */
                c->blocks = 2 + rt_rnd(&x, 15);
            }
            bool in_range = c->slba < nsze && c->blocks <= nsze - c->slba;
            s = kv_sqe(c->opc, 1);
            c->want = KVSSD_SC_SUCCESS;
            if (c->opc == KVSSD_NVM_OPC_WRITE || c->opc == KVSSD_NVM_OPC_READ) {
                uint32_t len = c->blocks * 4096;
                uint64_t base = (c->opc == KVSSD_NVM_OPC_WRITE ? KV_DATA : KV_DATA2) +
                                (uint64_t)k * (RT_SLOT_BYTES + 4096);
                c->buf = base + 512 * rt_rnd(&x, 8);
                bad_prp = rt_rnd(&x, 12) == 0 && (len + (c->buf & 4095)) > 4096;
                outside = !bad_prp && rt_rnd(&x, 12) == 0;
                kvssd_nvm_set_range(&s, c->slba, c->blocks, 0);
                rt_prp(d, &s, outside ? KV_OUTSIDE_RAM : c->buf, len,
                       KV_PRPLIST + (uint64_t)k * 4096, bad_prp);
                if (c->opc == KVSSD_NVM_OPC_WRITE) {
                    for (uint32_t i = 0; i < len; i++) {
                        data[i] = (uint8_t)rt_rnd(&x, 256);
                    }
                    qtest_memwrite(d->qts, c->buf, data, len);
                }
                c->want = !in_range ? KVSSD_SC_LBA_OUT_OF_RANGE | KVSSD_SC_DNR
                          : bad_prp ? KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR
                          : outside ? KVSSD_SC_DATA_XFER_ERROR
                                    : KVSSD_SC_SUCCESS;
                if (c->want == KVSSD_SC_SUCCESS && c->opc == KVSSD_NVM_OPC_WRITE) {
                    memcpy(shadow + c->slba * 4096, data, len);
                }
            } else if (c->opc == KVSSD_NVM_OPC_WRITE_ZEROES) {
                kvssd_nvm_set_range(&s, c->slba, c->blocks, 0);
                c->want = in_range ? KVSSD_SC_SUCCESS : KVSSD_SC_LBA_OUT_OF_RANGE | KVSSD_SC_DNR;
                if (in_range) {
                    memset(shadow + c->slba * 4096, 0, (size_t)c->blocks * 4096);
                }
            } else if (c->opc == KVSSD_NVM_OPC_DSM) {
                uint8_t r[16] = {0};
                c->buf = KV_DATA + (uint64_t)k * (RT_SLOT_BYTES + 4096) + RT_SLOT_BYTES;
                r[4] = (uint8_t)c->blocks;
                for (int b = 0; b < 8; b++) {
                    r[8 + b] = (uint8_t)(c->slba >> (8 * b));
                }
                qtest_memwrite(d->qts, c->buf, r, sizeof(r));
                s.cdw[10] = 0;
                s.cdw[11] = KVSSD_NVM_DSM_AD;
                kv_set_prp(&s, c->buf, 0);
                c->want = in_range ? KVSSD_SC_SUCCESS : KVSSD_SC_LBA_OUT_OF_RANGE | KVSSD_SC_DNR;
                if (in_range) {
                    memset(shadow + c->slba * 4096, 0, (size_t)c->blocks * 4096);
                }
            } else if (c->opc != KVSSD_NVM_OPC_FLUSH) {
                c->want = KVSSD_SC_INVALID_OPCODE | KVSSD_SC_DNR;
            }
            c->cid = kv_put(d, 1, &s, false);
            /*
             * Commands run in submission order, and the shadow already has
             * the effects of those before: a Read's expected data is the
             * shadow now.
             */
            if (c->opc == KVSSD_NVM_OPC_READ && c->want == KVSSD_SC_SUCCESS) {
                qtest_memset(d->qts, c->buf, 0xa5, (size_t)c->blocks * 4096);
                memcpy(expect[k], shadow + c->slba * 4096, (size_t)c->blocks * 4096);
            }
        }
        kv_ring(d, 1);
        for (int n = 0; n < RT_SLOTS; n++) {
            KvCqe c = kv_wait(d, 1);
            int k;
            for (k = 0; k < RT_SLOTS && cmd[k].cid != c.cid; k++) {
            }
            g_assert_cmpint(k, <, RT_SLOTS);
            g_assert(!cmd[k].done);
            cmd[k].done = true;
            g_assert_cmphex(c.status, ==, cmd[k].want);
            refused += c.status != 0;
            if (cmd[k].opc == KVSSD_NVM_OPC_READ && c.status == 0) {
                qtest_memread(d->qts, cmd[k].buf, data, (size_t)cmd[k].blocks * 4096);
                g_assert(memcmp(data, expect[k], (size_t)cmd[k].blocks * 4096) == 0);
                checked++;
            }
        }
        g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS) & KVSSD_CSTS_CFS, ==, 0);
    }
    g_test_message("random-transport: 1200 commands, %u reads checked against the shadow, %u "
                   "refused with their exact status",
                   checked, refused);
    g_assert_cmpuint(checked, >, 100);
    g_assert_cmpuint(refused, >, 50);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    g_free(shadow);
    kv_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/nvm/identify", test_identify);
    qtest_add_func("/kvssd/nvm/rw-prp-lists", test_rw_prp_lists);
    qtest_add_func("/kvssd/nvm/statuses", test_statuses);
    qtest_add_func("/kvssd/nvm/write-zeroes-dsm-format", test_write_zeroes_dsm_format);
    qtest_add_func("/kvssd/nvm/dsm-sliced", test_dsm_sliced);
    qtest_add_func("/kvssd/nvm/dsm-reset-while-sliced", test_dsm_reset_while_sliced);
    qtest_add_func("/kvssd/nvm/dsm-delete-sq-while-sliced", test_dsm_delete_sq_while_sliced);
    qtest_add_func("/kvssd/nvm/lba-512", test_lba_512);
    qtest_add_func("/kvssd/nvm/stats-log", test_stats_log);
    qtest_add_func("/kvssd/nvm/latency-on", test_latency_on);
    qtest_add_func("/kvssd/nvm/image-persistence", test_image_persistence);
    qtest_add_func("/kvssd/nvm/two-devices", test_two_devices);
    qtest_add_func("/kvssd/nvm/random-transport", test_random_transport);
    return g_test_run();
}
