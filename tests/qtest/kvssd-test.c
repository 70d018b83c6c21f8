/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtests of the kvssd device: registers, admin and KV commands driven
 * directly through BAR0, each case checking exact NVMe statuses.
 * Statuses are written (DNR << 14) | (SCT << 8) | SC.
 */
#include "kvssd-common.h"

/* CAP, VS and enable: CAP advertises MQES 1023, contiguous queues, 7.5 s
 * timeout, NVM + I/O command sets (bits 37 and 43); VS is 2.0; enabling
 * with valid AQA/ASQ/ACQ sets CSTS.RDY; clearing CC.EN clears it. */
static void test_enable_disable(void)
{
    KvDev *d = kv_start(NULL);
    uint64_t cap = kv_rd64(d, KVSSD_REG_CAP);

    g_assert_cmphex(kvssd_cap_mqes(cap), ==, 1023);
    g_assert_cmphex(!!(cap & KVSSD_CAP_CQR), ==, 1);
    g_assert_cmphex(kvssd_cap_to(cap), ==, 15);
    g_assert_cmphex(kvssd_cap_dstrd(cap), ==, 0);
    g_assert_cmphex((cap >> 37) & 0xff, ==, 0x41);  /* CSS: NVM + I/O command sets */
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_VS), ==, KVSSD_VS(2, 0, 0));
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS), ==, 0);
    kv_enable(d);
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS), ==, KVSSD_CSTS_RDY);
    kv_disable(d);
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS), ==, 0);
    kv_enable(d);
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS), ==, KVSSD_CSTS_RDY);
    kv_stop(d);
}

/* Enabling with an unsupported memory page size (CC.MPS=1), an unsupported
 * command set (CC.CSS=001b) or a one-entry admin queue sets CSTS.CFS and
 * never RDY; a reset (CC.EN=0) clears CFS. */
static void test_enable_invalid(void)
{
    KvDev *d = kv_start(NULL);
    uint32_t aqa = kvssd_aqa(32, 32);

    g_assert_cmphex(kv_enable_with(d, KV_CC_ENABLE | 1u << KVSSD_CC_MPS_SHIFT, aqa), ==,
                    KVSSD_CSTS_CFS);
    kv_wr32(d, KVSSD_REG_CC, 0);
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS), ==, 0);
    g_assert_cmphex(
        kv_enable_with(d, (KV_CC_ENABLE & ~(7u << KVSSD_CC_CSS_SHIFT)) | 1u << KVSSD_CC_CSS_SHIFT,
                       aqa),
        ==, KVSSD_CSTS_CFS);
    kv_wr32(d, KVSSD_REG_CC, 0);
    g_assert_cmphex(kv_enable_with(d, KV_CC_ENABLE, 0), ==, KVSSD_CSTS_CFS);
    kv_wr32(d, KVSSD_REG_CC, 0);
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS), ==, 0);
    kv_enable(d);
    kv_stop(d);
}

/* Shutdown: CC.SHN=01b reports CSTS.SHST=10b (complete); a later reset and
 * enable clears SHST and the device still stores and retrieves. */
static void test_shutdown(void)
{
    KvDev *d = kv_ready(NULL);
    char buf[16];

    g_assert_cmphex(kv_store(d, "persist", "0123456789", 10, 0), ==, 0);
    kv_wr32(d, KVSSD_REG_CC, KV_CC_ENABLE | KVSSD_CC_SHN_NORMAL << KVSSD_CC_SHN_SHIFT);
    g_assert(kv_wait_csts(d, KVSSD_CSTS_SHST_MASK, KVSSD_CSTS_SHST_DONE));
    kv_disable(d);
    kv_enable(d);
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS) & KVSSD_CSTS_SHST_MASK, ==, 0);
    kv_io_queue(d, 16);
    KvCqe c = kv_retrieve(d, "persist", buf, 16);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 10);
    g_assert(memcmp(buf, "0123456789", 10) == 0);
    kv_stop(d);
}

/* Identify Controller: Samsung VID, our serial, MDTS 9 (2 MiB), version 2.0,
 * I/O controller type, 64/16-byte SQ/CQ entries, one namespace, SGLs. */
static void test_identify_ctrl(void)
{
    KvDev *d = kv_start(NULL);
    uint8_t id[4096];

    kv_enable(d);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CTRL, 0, 0, id), ==, 0);
    g_assert_cmphex(le16p(id + 0), ==, 0x144d);
    g_assert(memcmp(id + 4, "QT01                ", 20) == 0);
    g_assert_cmpuint(id[77], ==, 9);
    g_assert_cmphex(le32p(id + 80), ==, 0x00020000);
    g_assert_cmpuint(id[111], ==, 1);
    g_assert_cmphex(id[512], ==, 0x66);
    g_assert_cmphex(id[513], ==, 0x44);
    g_assert_cmpuint(le32p(id + 516), ==, 1);
    g_assert_cmphex(le32p(id + 536) & 3, ==, 1);
    g_assert_cmpuint(id[259], ==, 3);               /* AERL */
    g_assert_cmphex(id[261] & 2, ==, 2);            /* LPA: effects log */
    kv_stop(d);
}

/* The KV namespace as Linux finds it: active list [1]; descriptor list with
 * a CSI descriptor = 01h; CNS 08h ready; CNS 05h/CSI 01h with KV format 0's
 * max key length 16 (what a standard command carries), max value length
 * 2 MiB, a max number of keys, and our extension's long-key maximum 255 in
 * the vendor area (signature "KVSSDEXT", version 1); CNS 1Ch with NVM and KV.
 * Wrong CSI, NSID or CNS get 2Ch, 0Bh, 02h (with DNR). */
static void test_identify_ns(void)
{
    KvDev *d = kv_start(NULL);
    uint8_t id[4096];

    kv_enable(d);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_ACTIVE_NS_LIST, 0, 0, id), ==, 0);
    g_assert_cmpuint(le32p(id), ==, 1);
    g_assert_cmpuint(le32p(id + 4), ==, 0);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_ACTIVE_NS_LIST, 0, 1, id), ==, 0);
    g_assert_cmpuint(le32p(id), ==, 0);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_NS_DESCR_LIST, 0, 1, id), ==, 0);
    g_assert_cmpuint(id[0], ==, 2);                 /* NGUID descriptor */
    g_assert_cmpuint(id[1], ==, 16);
    g_assert_cmpuint(id[20], ==, 4);                /* CSI descriptor */
    g_assert_cmpuint(id[21], ==, 1);
    g_assert_cmpuint(id[24], ==, KVSSD_CSI_KV);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CSI_INDEPENDENT_NS, 0, 1, id), ==, 0);
    g_assert_cmpuint(id[14] & 1, ==, 1);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CSI_NS, KVSSD_CSI_KV, 1, id), ==, 0);
    struct kvssd_id_ns_kv *kv = (struct kvssd_id_ns_kv *)id;
    g_assert_cmpuint(kv->nkvf, ==, 0);
    g_assert_cmpuint(le16_to_cpu(kv->kvf[0].kvmkl), ==, 16);
    g_assert(memcmp(kv->vs, "KVSSDEXT", 8) == 0);
    g_assert_cmpuint(le16p(kv->vs + 8), ==, 1);
    g_assert_cmpuint(le16p(kv->vs + 10), ==, 255);
    g_assert_cmpuint(kvssd_id_ns_kv_long_key_max(kv), ==, 255);
    g_assert_cmpuint(le32_to_cpu(kv->kvf[0].kvmvl), ==, 2 * 1024 * 1024);
    g_assert_cmpuint(le32_to_cpu(kv->kvf[0].kvmnk), >, 0);
    /*
     * NSZE is the firmware's user capacity (default preset: 128 stripes of
     * 32 MiB less GC's reserve of 3 + 2, x 93 %), not the raw NAND: a host
     * never sees more room than Stores may fill. A fresh device uses none.
     */
    g_assert_cmpuint(le64_to_cpu(kv->nsze), ==, 123ull * 33554432 / 100 * 93);
    g_assert_cmpuint(le64_to_cpu(kv->nuse), ==, 0);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_IO_CMD_SET_PROFILES, 0, 0, id), ==, 0);
    g_assert_cmphex(le64p(id), ==, 3);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CSI_CTRL, KVSSD_CSI_KV, 0, id), ==, 0);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CSI_NS, KVSSD_CSI_NVM, 1, NULL), ==,
                    KVSSD_SC_INVALID_IOCS | KVSSD_SC_DNR);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CSI_NS, KVSSD_CSI_KV, 2, NULL), ==,
                    KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_NS, 0, 7, NULL), ==,
                    KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_NS_DESCR_LIST, 0, 0, NULL), ==,
                    KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_identify(d, 0x10, 0, 0, NULL), ==, KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    kv_stop(d);
}

/* Queue management misuse, each with the status the specification names:
 * qid 0 or beyond the allocated queues -> 01h Invalid Queue Identifier;
 * size 0 (one entry) or beyond MQES -> 02h Invalid Queue Size; non-
 * contiguous -> Invalid Field; interrupt vector 65 -> 08h; SQ on a missing
 * CQ -> 00h Completion Queue Invalid; duplicate qid -> 01h; CQ deleted
 * before its SQ -> 0Ch Invalid Queue Deletion; unaligned base -> 13h. */
static void test_queue_misuse(void)
{
    KvDev *d = kv_start(NULL);

    kv_enable(d);
    g_assert_cmphex(kv_create_cq(d, 0, 16, 0, 3), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_cq(d, 65, 16, 0, 3), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_cq(d, 1, 1, 0, 3), ==, KVSSD_SC_INVALID_QSIZE | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_cq(d, 1, 1025, 0, 3), ==, KVSSD_SC_INVALID_QSIZE | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_cq(d, 1, 16, 0, 2), ==, KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_cq(d, 1, 16, 65, 3), ==, KVSSD_SC_INVALID_IRQ_VECTOR | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_sq(d, 1, 16, 1), ==, KVSSD_SC_CQ_INVALID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_cq(d, 1, 16, 1, 3), ==, 0);
    g_assert_cmphex(kv_create_cq(d, 1, 16, 1, 3), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_sq(d, 1, 1, 1), ==, KVSSD_SC_INVALID_QSIZE | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_sq(d, 0, 16, 1), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_sq(d, 1, 16, 1), ==, 0);
    g_assert_cmphex(kv_create_sq(d, 1, 16, 1), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);

    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_CREATE_CQ, 0); /* CQ at an unaligned base */
    kv_set_prp(&s, KV_CQ(2) + 8, 0);
    s.cdw[10] = 15u << 16 | 2;
    s.cdw[11] = 3;
    g_assert_cmphex(kv_admin_status(d, &s), ==, KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR);

    s = kv_sqe(KVSSD_ADM_DELETE_CQ, 0); /* delete CQ 1: SQ 1 uses it */
    s.cdw[10] = 1;
    g_assert_cmphex(kv_admin_status(d, &s), ==, KVSSD_SC_INVALID_QUEUE_DELETION | KVSSD_SC_DNR);
    s = kv_sqe(KVSSD_ADM_DELETE_SQ, 0); /* delete SQ 5: none */
    s.cdw[10] = 5;
    g_assert_cmphex(kv_admin_status(d, &s), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);
    s.cdw[10] = 0; /* the admin SQ */
    g_assert_cmphex(kv_admin_status(d, &s), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);
    s.cdw[10] = 1;
    g_assert_cmphex(kv_admin_status(d, &s), ==, 0);
    s = kv_sqe(KVSSD_ADM_DELETE_CQ, 0);
    s.cdw[10] = 1;
    g_assert_cmphex(kv_admin_status(d, &s), ==, 0);
    g_assert_cmphex(kv_admin_status(d, &s), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);

    /* Number of Queues = 2 pairs: qid 3 is now beyond the allocation */
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_NUM_QUEUES, 0x00010001, 0).dw0,
                    ==, 0x00010001);
    g_assert_cmphex(kv_create_cq(d, 3, 16, 0, 3), ==, KVSSD_SC_INVALID_QID | KVSSD_SC_DNR);
    g_assert_cmphex(kv_create_cq(d, 2, 16, 0, 3), ==, 0);
    kv_stop(d);
}

/* Deleting an SQ with commands submitted but not fetched: the CQ (2 entries)
 * is full, so the device stops fetching; Delete I/O SQ completes at once and
 * the commands whose completions do not fit into the CQ before its own (two
 * fetched, three not fetched) are implicitly completed: no CQE of the
 * deleted SQ appears after the host frees the slot (NVMe: explicit
 * completions precede the Delete's; kvssd-transport-test covers them). */
static void test_sq_delete_aborts(void)
{
    KvDev *d = kv_start(NULL);
    uint16_t cids[6];

    kv_enable(d);
    kv_six_exists_on_full_cq(d, cids);
    /* The first completion is posted; two more wait inside the device. */
    KvCqe c = {0};
    for (int i = 0; i < 200000 && !kv_try_cqe(d, 1, &c); i++) {
    }
    g_assert_cmpuint(c.cid, ==, cids[0]);
    g_assert_cmphex(c.status, ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_delete_sq(d, 1), ==, 0);
    kv_cq_doorbell(d, 1); /* room again: nothing left */
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CTRL, 0, 0, NULL), ==, 0);
    g_assert(!kv_try_cqe(d, 1, &c));
    kv_stop(d);
}

/* Doorbell misuse is ignored and reported by an Asynchronous Event: an SQ
 * tail equal to the queue size gives DW0 = 00010100h (error, Invalid
 * Doorbell Write Value, log 01h); a doorbell of a queue that does not exist
 * gives 00010000h. A fifth outstanding AER gets 05h AER Limit Exceeded. */
static void test_doorbell_misuse(void)
{
    KvDev *d = kv_ready(NULL);
    struct kvssd_sqe s;

    s = kv_sqe(KVSSD_ADM_ASYNC_EVENT, 0);
    uint16_t aer = kv_put(d, 0, &s, false);
    kv_ring(d, 0);
    kv_wr32(d, KVSSD_REG_SQ0TDBL + 8 * 1, 64); /* SQ 1 has 64 entries */
    KvCqe c = kv_wait(d, 0);
    g_assert_cmpuint(c.cid, ==, aer);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmphex(c.dw0, ==, 0x00010100);

    s = kv_sqe(KVSSD_ADM_ASYNC_EVENT, 0);
    aer = kv_put(d, 0, &s, false);
    kv_ring(d, 0);
    kv_wr32(d, KVSSD_REG_SQ0TDBL + 8 * 9, 1); /* SQ 9 does not exist */
    c = kv_wait(d, 0);
    g_assert_cmpuint(c.cid, ==, aer);
    g_assert_cmphex(c.dw0, ==, 0x00010000);

    for (int i = 0; i < 4; i++) {
        s = kv_sqe(KVSSD_ADM_ASYNC_EVENT, 0);
        kv_put(d, 0, &s, false);
    }
    kv_ring(d, 0);
    s = kv_sqe(KVSSD_ADM_ASYNC_EVENT, 0);
    g_assert_cmphex(kv_admin_status(d, &s), ==, KVSSD_SC_AER_LIMIT_EXCEEDED | KVSSD_SC_DNR);
    /* the I/O queue still works */
    g_assert_cmphex(kv_store(d, "alive", "x", 1, 0), ==, 0);
    kv_stop(d);
}

/* Unknown opcodes and reserved fields: admin 7Fh -> 4001h; I/O 7Eh -> 0001h;
 * an I/O command for NSID 5 -> 400Bh; fused bits -> 4002h; Key Stage with
 * reserved CDW12 -> 0002h; Get Log Page with an unaligned offset -> 4002h;
 * an unknown log page -> 4109h; Set Features with Save -> 410Dh;
 * Format NVM with LBA format 1 -> 410Ah. */
static void test_bad_opcodes_reserved(void)
{
    KvDev *d = kv_ready(NULL);
    struct kvssd_sqe s;

    s = kv_sqe(0x7f, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, KVSSD_SC_INVALID_OPCODE | KVSSD_SC_DNR);
    s = kv_sqe(0x7e, 1);
    g_assert_cmphex(kvssd_status_sc(kv_cmd(d, 1, &s).status), ==, KVSSD_SC_INVALID_OPCODE);
    s = kv_sqe(KVSSD_OPC_EXIST, 5);
    kvssd_sqe_set_key(&s, "k", 1);
    s.cdw[11] = 1;
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_NSID | KVSSD_SC_DNR);
    s = kv_sqe(KVSSD_OPC_EXIST, 1);
    s.cdw[0] |= 1u << 8;
    kvssd_sqe_set_key(&s, "k", 1);
    s.cdw[11] = 1;
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    s = kv_sqe(KVSSD_OPC_KEY_STAGE, 1);
    s.cdw[10] = 20;
    s.cdw[12] = 1;
    kv_set_prp(&s, KV_DATA, 0);
    g_assert_cmphex(kvssd_status_sc(kv_cmd(d, 1, &s).status), ==, KVSSD_SC_INVALID_FIELD);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_SMART, 0, 512, 2, NULL), ==,
                    KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    g_assert_cmphex(kv_get_log(d, 0x7a, 0, 512, 0, NULL), ==,
                    KVSSD_SC_INVALID_LOG_PAGE | KVSSD_SC_DNR);
    g_assert_cmphex(
        kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FEAT_SAVE | KVSSD_FID_ARBITRATION, 0, 0).status,
        ==, KVSSD_SC_FID_NOT_SAVEABLE | KVSSD_SC_DNR);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_NUM_QUEUES, 0xffff, 0).status,
                    ==, KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_GET_FEATURES, 0x55, 0, 0).status, ==,
                    KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    s = kv_sqe(KVSSD_ADM_FORMAT_NVM, 1);
    s.cdw[10] = 1;
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, KVSSD_SC_INVALID_FORMAT | KVSSD_SC_DNR);
    s = kv_sqe(KVSSD_ADM_IDENTIFY, 0); /* admin SGL: not allowed */
    s.cdw[0] |= 1u << 14;
    s.cdw[10] = 1;
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    kv_stop(d);
}

/* Data pointers outside guest RAM fail with 04h Data Transfer Error and
 * change nothing: a Store whose PRP1 is at 4 TiB stores no key; Identify and
 * Retrieve into such a buffer fail the same way. */
static void test_prp_outside_ram(void)
{
    KvDev *d = kv_ready(NULL);
    struct kvssd_sqe s;

    s = kv_sqe(KVSSD_OPC_STORE, 1);
    kvssd_sqe_set_key(&s, "far", 3);
    s.cdw[10] = 100;
    s.cdw[11] = 3;
    kv_set_prp(&s, KV_OUTSIDE_RAM, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_DATA_XFER_ERROR);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "far"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);

    s = kv_sqe(KVSSD_ADM_IDENTIFY, 0);
    s.cdw[10] = 1;
    kv_set_prp(&s, KV_OUTSIDE_RAM, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, KVSSD_SC_DATA_XFER_ERROR);

    g_assert_cmphex(kv_store(d, "near", "value", 5, 0), ==, 0);
    s = kv_sqe(KVSSD_OPC_RETRIEVE, 1);
    kvssd_sqe_set_key(&s, "near", 4);
    s.cdw[10] = 4096;
    s.cdw[11] = 4;
    kv_set_prp(&s, KV_OUTSIDE_RAM, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_DATA_XFER_ERROR);

    /* a 3-page Store whose PRP list lives outside RAM */
    s = kv_sqe(KVSSD_OPC_STORE, 1);
    kvssd_sqe_set_key(&s, "far", 3);
    s.cdw[10] = 3 * 4096;
    s.cdw[11] = 3;
    kv_set_prp(&s, KV_DATA, KV_OUTSIDE_RAM);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_DATA_XFER_ERROR);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "far"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    kv_stop(d);
}

/* Malformed PRPs get 13h Invalid PRP Offset (DNR): PRP2 of a two-page
 * transfer with an offset; a PRP list pointer not 8-byte aligned; a list
 * entry with an offset. A well-formed 3-page list stores and reads back. */
static void test_malformed_prp(void)
{
    KvDev *d = kv_ready(NULL);
    struct kvssd_sqe s;
    static uint8_t val[3 * 4096], back[3 * 4096];

    for (size_t i = 0; i < sizeof(val); i++) {
        val[i] = (uint8_t)(i * 7 + 1);
    }
    qtest_memwrite(d->qts, KV_DATA, val, sizeof(val));
    s = kv_sqe(KVSSD_OPC_STORE, 1);
    kvssd_sqe_set_key(&s, "prp", 3);
    s.cdw[10] = 2 * 4096;
    s.cdw[11] = 3;
    kv_set_prp(&s, KV_DATA, KV_DATA + 4096 + 512);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR);

    s.cdw[10] = 3 * 4096;
    kv_set_prp(&s, KV_DATA, KV_PRPLIST + 4);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR);

    uint64_t list[2] = {cpu_to_le64(KV_DATA + 4096), cpu_to_le64(KV_DATA + 2 * 4096 + 16)};
    qtest_memwrite(d->qts, KV_PRPLIST, list, sizeof(list));
    kv_set_prp(&s, KV_DATA, KV_PRPLIST);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "prp"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);

    g_assert_cmphex(kv_store(d, "prp", val, sizeof(val), 0), ==, 0);
    KvCqe c = kv_retrieve(d, "prp", back, sizeof(back));
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, sizeof(val));
    g_assert(memcmp(val, back, sizeof(val)) == 0);
    kv_stop(d);
}

static void sgl_desc(uint8_t *p, uint64_t addr, uint32_t len, uint8_t type)
{
    uint64_t a = cpu_to_le64(addr);
    uint32_t l = cpu_to_le32(len);
    memset(p, 0, 16);
    memcpy(p, &a, 8);
    memcpy(p + 8, &l, 4);
    p[15] = type;
}

static void sqe_sgl(struct kvssd_sqe *s, uint64_t addr, uint32_t len, uint8_t type)
{
    uint8_t desc[16];
    sgl_desc(desc, addr, len, type);
    s->cdw[0] |= 1u << 14; /* PSDT = 01b: SGL */
    memcpy(&s->cdw[6], desc, 16);
}

/* SGLs: a Store whose data is a Last Segment of two data blocks (100 + 200
 * bytes) stores the 300 bytes in order; a data block alone works; an unknown
 * descriptor type gets 11h; a zero-length segment 0Dh; a chained segment
 * inside a Last Segment 0Dh; too little data 0Fh; more than 256
 * descriptors 0Eh. */
static void test_sgl(void)
{
    KvDev *d = kv_ready(NULL);
    struct kvssd_sqe s;
    uint8_t val[300], back[512], seg[2 * 16];

    for (int i = 0; i < 300; i++) {
        val[i] = (uint8_t)(255 - i);
    }
    qtest_memwrite(d->qts, KV_DATA, val, 100);
    qtest_memwrite(d->qts, KV_DATA + 8192, val + 100, 200);
    sgl_desc(seg, KV_DATA, 100, 0x00);
    sgl_desc(seg + 16, KV_DATA + 8192, 200, 0x00);
    qtest_memwrite(d->qts, KV_PRPLIST, seg, sizeof(seg));
    s = kv_sqe(KVSSD_OPC_STORE, 1);
    kvssd_sqe_set_key(&s, "sgl", 3);
    s.cdw[10] = 300;
    s.cdw[11] = 3;
    sqe_sgl(&s, KV_PRPLIST, sizeof(seg), 0x30);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);
    KvCqe c = kv_retrieve(d, "sgl", back, sizeof(back));
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 300);
    g_assert(memcmp(back, val, 300) == 0);

    s = kv_sqe(KVSSD_OPC_RETRIEVE, 1); /* data block, device to host */
    kvssd_sqe_set_key(&s, "sgl", 3);
    s.cdw[10] = 300;
    s.cdw[11] = 3;
    qtest_memset(d->qts, KV_DATA2, 0, 300);
    sqe_sgl(&s, KV_DATA2, 300, 0x00);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);
    qtest_memread(d->qts, KV_DATA2, back, 300);
    g_assert(memcmp(back, val, 300) == 0);

    s = kv_sqe(KVSSD_OPC_STORE, 1);
    kvssd_sqe_set_key(&s, "bad", 3);
    s.cdw[10] = 300;
    s.cdw[11] = 3;
    sqe_sgl(&s, KV_DATA, 300, 0xf0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_SGL_DESCR_TYPE_INVALID | KVSSD_SC_DNR);
    sqe_sgl(&s, KV_PRPLIST, 0, 0x30);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_SGL_SEG_DESCR | KVSSD_SC_DNR);
    sgl_desc(seg, KV_DATA, 100, 0x00);
    sgl_desc(seg + 16, KV_PRPLIST + 64, 16, 0x20); /* chain inside a last segment */
    qtest_memwrite(d->qts, KV_PRPLIST, seg, sizeof(seg));
    sqe_sgl(&s, KV_PRPLIST, sizeof(seg), 0x30);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_SGL_SEG_DESCR | KVSSD_SC_DNR);
    sqe_sgl(&s, KV_DATA, 299, 0x00);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_DATA_SGL_LEN_INVALID | KVSSD_SC_DNR);
    sqe_sgl(&s, KV_PRPLIST, 257 * 16, 0x30);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_NUM_SGL_DESCRS | KVSSD_SC_DNR);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "bad"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    kv_stop(d);
}

/* KV round trip: Store 5000 bytes; Retrieve with an 8 KiB buffer returns
 * them and DW0 = 5000; a 100-byte buffer gets the first 100 bytes and still
 * DW0 = 5000; Exist, Delete, Exist -> 87h; Store options only-if-exists on
 * a missing key -> 87h, only-if-absent on a present key -> 89h; a value of
 * 2 MiB + 1 -> 85h; a key length of 0 -> 86h; a 2 MiB value round trips. */
static void test_kv_roundtrip(void)
{
    KvDev *d = kv_ready(NULL);
    static uint8_t val[5000], back[8192];

    for (int i = 0; i < 5000; i++) {
        val[i] = (uint8_t)(i ^ (i >> 8));
    }
    g_assert_cmphex(kv_store(d, "hello", val, 5000, 0), ==, 0);
    KvCqe c = kv_retrieve(d, "hello", back, 8192);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 5000);
    g_assert(memcmp(back, val, 5000) == 0);
    c = kv_retrieve(d, "hello", back, 100);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 5000);
    g_assert(memcmp(back, val, 100) == 0);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "hello"), ==, 0);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_DELETE, "hello"), ==, 0);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "hello"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    c = kv_retrieve(d, "hello", back, 100);
    g_assert_cmphex(c.status, ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_store(d, "hello", val, 10, KVSSD_STORE_OPT_ONLY_IF_EXISTS), ==,
                    KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_store(d, "hello", val, 10, KVSSD_STORE_OPT_ONLY_IF_ABSENT), ==, 0);
    g_assert_cmphex(kv_store(d, "hello", val, 10, KVSSD_STORE_OPT_ONLY_IF_ABSENT), ==,
                    KVSSD_SC_KEY_EXISTS);

    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_STORE, 1);
    kvssd_sqe_set_key(&s, "big", 3);
    s.cdw[10] = 2 * 1024 * 1024 + 1;
    s.cdw[11] = 3;
    kv_set_prp(&s, KV_DATA, KV_PRPLIST);
    g_assert_cmphex(kv_cmd(d, 1, &s).status & KVSSD_STATUS_CODE_MASK, ==,
                    KVSSD_SC_INVALID_VALUE_SIZE);
    s = kv_sqe(KVSSD_OPC_STORE, 1);
    s.cdw[10] = 10;
    s.cdw[11] = 0;
    kv_set_prp(&s, KV_DATA, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status & KVSSD_STATUS_CODE_MASK, ==,
                    KVSSD_SC_INVALID_KEY_SIZE);

    uint8_t *big = g_malloc(2 * 1024 * 1024), *bigback = g_malloc(2 * 1024 * 1024);
    for (int i = 0; i < 2 * 1024 * 1024; i++) {
        big[i] = (uint8_t)(i * 13 + (i >> 12));
    }
    g_assert_cmphex(kv_store(d, "two-mib", big, 2 * 1024 * 1024, 0), ==, 0);
    c = kv_retrieve(d, "two-mib", bigback, 2 * 1024 * 1024);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 2 * 1024 * 1024);
    g_assert(memcmp(big, bigback, 2 * 1024 * 1024) == 0);
    g_free(big);
    g_free(bigback);
    kv_stop(d);
}

/*
 * Get Log Page of NUMD @numd (0's based) of @lid at KV_DATA2, its data
 * pointer describing @prp_bytes there (PRP list when needed); its status.
 */
static uint16_t get_log_numd(KvDev *d, uint8_t lid, uint32_t numd, uint32_t prp_bytes)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_GET_LOG_PAGE, KVSSD_NSID_ALL);

    kv_prp_for(d, &s, KV_DATA2, prp_bytes);
    s.cdw[10] = kvssd_get_log_cdw10(lid, numd);
    s.cdw[11] = kvssd_get_log_cdw11(numd);
    return kv_admin_read(d, &s, 4096, NULL);
}

/*
 * Get Log Page checks MDTS, as QEMU's hw/nvme does: with the default
 * mdts=9 (2 MiB) a transfer of exactly 2 MiB (NUMD 524287, PRP list)
 * succeeds for the SMART, error and statistics logs (the log moves, the
 * transfer capped at its size); 2 MiB + 4 bytes (NUMD 524288) and NUMD
 * FFFFFFFFh (16 GiB) are Invalid Field in Command with DNR for every log
 * (their data pointer describes 2 MiB + 4 bytes: the transport resolves
 * MDTS of it), before the log identifier is looked at (an unknown LID
 * too). With mdts=12 NUMD 4194304 (16 MiB + 4 bytes) is refused the same
 * way.
 */
static void test_log_page_mdts(void)
{
    static const uint8_t lids[] = {KVSSD_LID_ERROR, KVSSD_LID_SMART, KVSSD_LID_FW_SLOT,
                                   KVSSD_LID_STATS};
    const uint32_t at_mdts = (2u << 20) / 4 - 1, past = (2u << 20) + 4;
    KvDev *d = kv_ready(NULL);
    uint8_t log[512];

    for (size_t i = 0; i < sizeof(lids); i++) {
        g_assert_cmphex(kv_get_log(d, lids[i], 0, 2u << 20, 0, NULL), ==, 0);
        g_assert_cmphex(get_log_numd(d, lids[i], at_mdts + 1, past), ==,
                        KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
        g_assert_cmphex(get_log_numd(d, lids[i], UINT32_MAX, past), ==,
                        KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    }
    g_assert_cmphex(get_log_numd(d, 0x7a, at_mdts + 1, past), ==,
                    KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    /* the SMART log read at MDTS is the one a 512-byte read returns: byte 0 (critical warning) */
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_SMART, 0, 512, 0, log), ==, 0);
    g_assert_cmphex(log[0], ==, 0);
    kv_stop(d);

    d = kv_ready("mdts=12");
    g_assert_cmphex(get_log_numd(d, KVSSD_LID_SMART, (16u << 20) / 4, 4096), ==,
                    KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    g_assert_cmphex(get_log_numd(d, KVSSD_LID_SMART, 127, 512), ==, 0);
    kv_stop(d);
}

/* Log pages: SMART counts data units of 512,000 bytes rounded up (one 300 KiB
 * store = 1 unit written) and host commands; the effects log for the KV CSI
 * marks Store/Retrieve/Delete/Exist supported and for CSI 00h lists no I/O
 * command; the Error Information log's newest entry is the last failed
 * command; the statistics log (C0h) counts 64 bytes per SQE fetched and
 * 16 per CQE posted, and Set Features C0h zeroes it. */
static void test_log_pages(void)
{
    KvDev *d = kv_ready(NULL);
    static uint8_t val[300 * 1024];
    uint8_t log[4096];

    g_assert_cmphex(kv_store(d, "s", val, sizeof(val), 0), ==, 0);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_SMART, 0, 512, 0, log), ==, 0);
    g_assert_cmpuint(le64p(log + 48), ==, 1); /* data units written */
    g_assert_cmpuint(le64p(log + 32), ==, 0); /* data units read */
    g_assert_cmpuint(le64p(log + 80), ==, 1); /* host write commands */

    g_assert_cmphex(kv_get_log(d, KVSSD_LID_EFFECTS, KVSSD_CSI_KV, 4096, 0, log), ==, 0);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_OPC_STORE) & 1, ==, 1);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_OPC_RETRIEVE) & 1, ==, 1);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_OPC_DELETE) & 1, ==, 1);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_OPC_EXIST) & 1, ==, 1);
    g_assert_cmphex(le32p(log + 1024 + 4 * 0x7e), ==, 0);
    g_assert_cmphex(le32p(log + 4 * KVSSD_ADM_IDENTIFY) & 1, ==, 1);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_EFFECTS, KVSSD_CSI_NVM, 4096, 0, log), ==, 0);
    g_assert_cmphex(le32p(log + 1024 + 4 * KVSSD_OPC_STORE), ==, 0);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_EFFECTS, 0x02, 4096, 0, log), ==,
                    KVSSD_SC_INVALID_IOCS | KVSSD_SC_DNR);

    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "missing"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_ERROR, 0, 64, 0, log), ==, 0);
    g_assert_cmpuint(le16p(log + 8), ==, 1); /* SQ 1 */
    g_assert_cmphex(le16p(log + 12) >> 1, ==, 0x0087);

    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_RESET_STATS, 0, 0).status, ==,
                    0);
    /* After the reset: Get Log Page itself is 1 SQE; CQEs posted: the
     * Set Features completion was posted after the reset (16 bytes). */
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_STATS, 0, 4096, 0, log), ==, 0);
    struct kvssd_stats_log *st = (struct kvssd_stats_log *)log;
    g_assert_cmpuint(le32_to_cpu(st->version), ==, KVSSD_STATS_LOG_VERSION);
    g_assert_cmpuint(le32_to_cpu(st->dma_unit_bytes), ==, 4096);
    g_assert_cmpuint(le64_to_cpu(st->xfer.sqe_fetch_bytes), ==, 64);
    g_assert_cmpuint(le64_to_cpu(st->xfer.cqe_post_bytes), ==, 16);
    g_assert_cmpuint(le64_to_cpu(st->stores), ==, 0);
    g_assert_cmpuint(le64_to_cpu(st->live_keys), ==, 1);

    /* One 5000-byte store: 2 dma units of 4 KiB moved host-to-device. */
    g_assert_cmphex(kv_store(d, "t", val, 5000, 0), ==, 0);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_STATS, 0, 4096, 0, log), ==, 0);
    g_assert_cmpuint(le64_to_cpu(st->xfer.data_h2d_bytes), ==, 8192);
    g_assert_cmpuint(le64_to_cpu(st->stores), ==, 1);
    g_assert_cmpuint(le64_to_cpu(st->xfer.commands), ==, 1);
    /* version 2 fields: the capacity check's terms; default preset 128 stripes */
    g_assert_cmpuint(le64_to_cpu(st->capacity_bytes), ==, 123ull * 33554432 / 100 * 93);
    g_assert_cmpuint(le64_to_cpu(st->index_nand_bytes), ==, 0);
    g_assert_cmpuint(le64_to_cpu(st->total_stripes), ==, 128);
    /* one Store since the reset: its latency sum is its only sample, the max */
    g_assert_cmpuint(le64_to_cpu(st->latency[0][0]), ==, 1);
    g_assert_cmpuint(le64_to_cpu(st->latency_sum_ns[0]), ==, le64_to_cpu(st->latency[0][4]));
    g_assert_cmpuint(le64_to_cpu(st->latency_sum_ns[0]), >, 0);
    kv_stop(d);
}

/* dma-unit=1 (an ideal DMA engine) counts exactly the bytes moved. */
static void test_dma_unit_ideal(void)
{
    KvDev *d = kv_ready("dma-unit=1");
    static uint8_t val[5000];
    uint8_t log[4096];

    g_assert_cmphex(kv_store(d, "t", val, 5000, 0), ==, 0);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_STATS, 0, 4096, 0, log), ==, 0);
    struct kvssd_stats_log *st = (struct kvssd_stats_log *)log;
    g_assert_cmpuint(le32_to_cpu(st->dma_unit_bytes), ==, 1);
    g_assert_cmpuint(le64_to_cpu(st->xfer.data_h2d_bytes), ==, 5000);
    kv_stop(d);
}

/* Features: Number of Queues is clamped to max-ioqpairs (4 -> DW0 3/3 for a
 * request of 10/10); KV Configuration 20h: with EDNEK set, deleting a missing
 * key fails with 87h, without it succeeds; Get returns what was set; the
 * temperature threshold reads back; power state 1 is 4002h. */
static void test_features(void)
{
    KvDev *d = kv_start("max-ioqpairs=4");

    kv_enable(d);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_NUM_QUEUES, 0x00090009, 0).dw0,
                    ==, 0x00030003);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_GET_FEATURES, KVSSD_FID_NUM_QUEUES, 0, 0).dw0, ==,
                    0x00030003);
    kv_io_queue(d, 16);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_DELETE, "nothing"), ==, 0);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_KV_CONFIG, 1, 1).status, ==, 0);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_GET_FEATURES, KVSSD_FID_KV_CONFIG, 0, 1).dw0, ==, 1);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_DELETE, "nothing"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_KV_CONFIG, 0, 1).status, ==, 0);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_DELETE, "nothing"), ==, 0);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_KV_CONFIG, 2, 1).status, ==,
                    KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_TEMP_THRESHOLD, 350, 0).status,
                    ==, 0);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_GET_FEATURES, KVSSD_FID_TEMP_THRESHOLD, 0, 0).dw0, ==,
                    350);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_POWER_MGMT, 1, 0).status, ==,
                    KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    g_assert_cmphex(
        kv_feature(d, KVSSD_ADM_GET_FEATURES, KVSSD_FID_ASYNC_EVENT_CONFIG, 0, 0).status, ==, 0);
    kv_stop(d);
}

/* Format NVM erases every key; the vendor FTL check (C4h) passes after it. */
static void test_format_and_check(void)
{
    KvDev *d = kv_ready(NULL);
    struct kvssd_sqe s;

    g_assert_cmphex(kv_store(d, "a", "1", 1, 0), ==, 0);
    g_assert_cmphex(kv_store(d, "b", "2", 1, 0), ==, 0);
    s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    s = kv_sqe(KVSSD_ADM_FORMAT_NVM, 1);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "a"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "b"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
}

/*
 * A device with @props holds a Flush's completion (the Flush programs the
 * page buffer, which takes simulated time) until the virtual clock reaches
 * it: 100 looks at the CQ while the clock stands still (the device's bottom
 * half and timers run between them) find nothing; after the clock is
 * stepped one second the completion is there, status 0.
 */
static void check_flush_held(const char *props)
{
    KvDev *d = kv_ready(props);
    struct kvssd_sqe s;
    KvCqe c;

    g_assert_cmphex(kv_store(d, "k", "v", 1, 0), ==, 0);
    s = kv_sqe(KVSSD_OPC_FLUSH, 1);
    kv_put(d, 1, &s, false);
    kv_ring(d, 1);
    for (int i = 0; i < 100; i++) {
        g_assert(!kv_try_cqe(d, 1, &c));
    }
    qtest_clock_step(d->qts, 1000000000);
    c = kv_wait(d, 1);
    g_assert_cmphex(c.status, ==, 0);
    kv_stop(d);
}

/* latency=on holds a completion until its simulated NAND time on the virtual clock (the timer). */
static void test_latency_on(void)
{
    check_flush_held("latency=on");
}

/*
 * completion-poll-ns: a held completion due within 10 ms is waited for by
 * running the queues at every main-loop iteration instead of by the timer
 * alone, and is still posted at its due time, not before.
 */
static void test_latency_on_polled(void)
{
    check_flush_held("latency=on,completion-poll-ns=10000000");
}

/* Resetting the controller while commands are queued: CC.EN=0 right after
 * the doorbell, then enable again; the device answers normally and the
 * firmware is consistent. */
static void test_reset_mid_io(void)
{
    KvDev *d = kv_ready(NULL);

    for (int i = 0; i < 20; i++) {
        struct kvssd_sqe s = kv_sqe(KVSSD_OPC_STORE, 1);
        char key[8];
        snprintf(key, sizeof(key), "r%d", i);
        kvssd_sqe_set_key(&s, key, strlen(key));
        s.cdw[10] = 4096;
        s.cdw[11] = strlen(key);
        kv_set_prp(&s, KV_DATA, 0);
        kv_put(d, 1, &s, false);
    }
    kv_ring(d, 1);
    kv_disable(d);
    kv_enable(d);
    kv_io_queue(d, 16);
    g_assert_cmphex(kv_store(d, "after", "x", 1, 0), ==, 0);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "after"), ==, 0);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
}

/* image=FILE: keys stored before QEMU exits (SIGTERM from qtest_quit) are
 * there after a restart with the same image, with their exact bytes; a key
 * deleted before the exit stays deleted; the FTL check passes. */
static void test_image_persistence(void)
{
    g_autofree char *dir = g_dir_make_tmp("kvssd-qtest-XXXXXX", NULL);
    g_autofree char *img = g_build_filename(dir, "nand.img", NULL);
    g_autofree char *props = g_strdup_printf("image=%s", img);
    static uint8_t val[6000], back[8192];

    for (int i = 0; i < 6000; i++) {
        val[i] = (uint8_t)(i * 3 + 11);
    }
    KvDev *d = kv_ready(props);
    g_assert_cmphex(kv_store(d, "durable", val, sizeof(val), 0), ==, 0);
    g_assert_cmphex(kv_store(d, "gone", val, 10, 0), ==, 0);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_DELETE, "gone"), ==, 0);
    kv_stop(d);

    d = kv_ready(props);
    KvCqe c = kv_retrieve(d, "durable", back, sizeof(back));
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, sizeof(val));
    g_assert(memcmp(val, back, sizeof(val)) == 0);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "gone"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
    unlink(img);
    rmdir(dir);
}

/* image=FILE and a killed QEMU (SIGKILL, no exit handlers): every Store
 * whose completion was posted is there after a restart, with its bytes,
 * and the FTL check passes. The first QEMU runs in a subprocess that kills
 * it, because libqtest treats a QEMU that died of a signal as a failure. */
static void test_image_killed(void)
{
    static uint8_t val[3000], back[4096];

    for (int i = 0; i < 3000; i++) {
        val[i] = (uint8_t)(i * 5 + 1);
    }
    if (g_test_subprocess()) {
        g_autofree char *props = g_strdup_printf("image=%s", g_getenv("KVSSD_KILL_IMAGE"));
        KvDev *d = kv_ready(props);
        for (int i = 0; i < 20; i++) {
            char key[16];
            snprintf(key, sizeof(key), "killed-%d", i);
            g_assert_cmphex(kv_store(d, key, val, sizeof(val) - i, 0), ==, 0);
        }
        kill(qtest_pid(d->qts), SIGKILL);
        _exit(0); /* no qtest_quit: QEMU is gone */
    }
    g_autofree char *dir = g_dir_make_tmp("kvssd-qtest-XXXXXX", NULL);
    g_autofree char *img = g_build_filename(dir, "nand.img", NULL);
    g_autofree char *props = g_strdup_printf("image=%s", img);
    g_setenv("KVSSD_KILL_IMAGE", img, true);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
    g_test_trap_assert_passed();
    g_usleep(200 * 1000); /* let the killed QEMU's image be closed by the kernel */

    KvDev *d = kv_ready(props);
    for (int i = 0; i < 20; i++) {
        char key[16];
        snprintf(key, sizeof(key), "killed-%d", i);
        KvCqe c = kv_retrieve(d, key, back, sizeof(back));
        g_assert_cmphex(c.status, ==, 0);
        g_assert_cmpuint(c.dw0, ==, sizeof(val) - i);
        g_assert(memcmp(val, back, sizeof(val) - i) == 0);
    }
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
    unlink(img);
    rmdir(dir);
}

/* A standard host (nvme-cli, SPDK, xNVMe) that ignores the KV format's key
 * maximum and sends Store, Retrieve, Delete, Exist and List with a 17-byte
 * key (first 16 bytes in CDW2-3/CDW14-15) and no Key Stage gets exactly
 * 0086h (Invalid Key Size, no DNR) for each, and nothing is stored under the
 * 16-byte prefix. The same Store with the key staged (91h) succeeds and the
 * value comes back byte-identical through a staged Retrieve. */
static void test_standard_long_key(void)
{
    KvDev *d = kv_ready(NULL);
    const char *key17 = "standard-host-17"; /* 16 bytes + 1 below */
    char key[18];
    uint8_t val[100], back[128];
    struct kvssd_sqe s;

    snprintf(key, sizeof(key), "%sX", key17);
    g_assert_cmpuint(strlen(key), ==, 17);
    for (int i = 0; i < 100; i++) {
        val[i] = (uint8_t)(i * 7 + 3);
    }
    g_assert_cmphex(kv_store(d, key, val, sizeof(val), 0), ==, KVSSD_SC_INVALID_KEY_SIZE);
    g_assert_cmphex(kv_retrieve(d, key, back, sizeof(back)).status, ==, KVSSD_SC_INVALID_KEY_SIZE);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, key), ==, KVSSD_SC_INVALID_KEY_SIZE);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_DELETE, key), ==, KVSSD_SC_INVALID_KEY_SIZE);
    s = kv_sqe(KVSSD_OPC_LIST, 1);
    kvssd_sqe_set_key(&s, key, 17);
    s.cdw[10] = 4096;
    s.cdw[11] = kvssd_cdw11(17, 0);
    kv_set_prp(&s, KV_DATA2, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, KVSSD_SC_INVALID_KEY_SIZE);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, key17), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);

    /* Our extension: stage the 17-byte key under tag 9, then Store and Retrieve. */
    for (int op = 0; op < 2; op++) {
        qtest_memwrite(d->qts, KV_DATA2 + 8192, key, 17);
        s = kv_sqe(KVSSD_OPC_KEY_STAGE, 1);
        s.cdw[10] = 17;
        s.cdw[11] = 9;
        kv_set_prp(&s, KV_DATA2 + 8192, 0);
        g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);
        if (op == 0) {
            qtest_memwrite(d->qts, KV_DATA, val, sizeof(val));
            s = kv_sqe(KVSSD_OPC_STORE, 1);
            s.cdw[10] = sizeof(val);
            kv_set_prp(&s, KV_DATA, 0);
        } else {
            qtest_memset(d->qts, KV_DATA2, 0, sizeof(back));
            s = kv_sqe(KVSSD_OPC_RETRIEVE, 1);
            s.cdw[10] = sizeof(back);
            kv_set_prp(&s, KV_DATA2, 0);
        }
        s.cdw[2] = 9;
        s.cdw[11] = kvssd_cdw11(17, 0);
        KvCqe c = kv_cmd(d, 1, &s);
        g_assert_cmphex(c.status, ==, 0);
        if (op == 1) {
            g_assert_cmpuint(c.dw0, ==, sizeof(val));
            qtest_memread(d->qts, KV_DATA2, back, sizeof(back));
            g_assert(memcmp(back, val, sizeof(val)) == 0);
        }
    }
    kv_stop(d);
}

/* Put @len bytes into the dwords @dw (in order, each little endian). */
static void put_payload(struct kvssd_sqe *s, const uint8_t *dw, int ndw, const uint8_t *b,
                        uint32_t len)
{
    for (int i = 0; i < ndw; i++) {
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            uint32_t at = 4 * i + k;
            v |= (uint32_t)(at < len ? b[at] : 0) << (8 * k);
        }
        s->cdw[dw[i]] = v;
    }
}

/* Inline Store through the transport. Stock layout: a 50-byte value under
 * key "inl" is a head (3 key + 21 value bytes) and two transfers of 28 and
 * 1 bytes, sent on two different I/O queues with sequence 2 before 1; the
 * last fragment completes with DW1 = 1 (stored). Full layout: the transfer
 * (8Dh) carries tag and sequence in CDW1 instead of an NSID and still
 * executes. Hybrid: 4096 bytes by PRP + a 10-byte inline tail in the head.
 * Each value reads back exactly. */
static void test_inline_store(void)
{
    KvDev *d = kv_ready(NULL);
    static const uint8_t head_dw[] = {2, 3, 12, 13, 14, 15};
    static const uint8_t xfer_dw[] = {2, 3, 11, 12, 13, 14, 15};
    uint8_t val[50], buf[64], back[4200];
    struct kvssd_sqe s;

    g_assert_cmphex(kv_create_cq(d, 2, 16, 2, 3), ==, 0);
    g_assert_cmphex(kv_create_sq(d, 2, 16, 2), ==, 0);
    for (int i = 0; i < 50; i++) {
        val[i] = (uint8_t)(0xa0 + i);
    }
    s = kv_sqe(KVSSD_OPC_INLINE_HEAD, 1);
    s.cdw[10] = kvssd_inline_head_cdw10(50, 0, 3);
    s.cdw[11] = 7; /* tag */
    memcpy(buf, "inl", 3);
    memcpy(buf + 3, val, 21);
    put_payload(&s, head_dw, 6, buf, 24);
    KvCqe c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 21);
    g_assert_cmpuint(c.dw1, ==, 0);
    s = kv_sqe(KVSSD_OPC_INLINE_XFER, 1); /* sequence 2 first, on SQ 2 */
    s.cdw[10] = kvssd_inline_tag_seq(7, 2);
    put_payload(&s, xfer_dw, 7, val + 49, 1);
    c = kv_cmd(d, 2, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw1, ==, 0);
    s = kv_sqe(KVSSD_OPC_INLINE_XFER, 1);
    s.cdw[10] = kvssd_inline_tag_seq(7, 1);
    put_payload(&s, xfer_dw, 7, val + 21, 28);
    c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw1, ==, KVSSD_INLINE_DW1_STORED);
    c = kv_retrieve(d, "inl", back, 64);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 50);
    g_assert(memcmp(back, val, 50) == 0);

    /* full layout: 35-byte head payload, then one transfer of 5 bytes */
    static const uint8_t full_dw[] = {4, 5, 6, 7, 8, 9, 12, 13};
    s = kv_sqe(KVSSD_OPC_INLINE_HEAD_FULL, 1);
    kvssd_sqe_set_key(&s, "full", 4);
    s.cdw[10] = kvssd_inline_head_cdw10(40, 0, 4);
    s.cdw[11] = 9 | (uint32_t)val[0] << 8 | (uint32_t)val[1] << 16 | (uint32_t)val[2] << 24;
    put_payload(&s, full_dw, 8, val + 3, 32);
    c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw1, ==, 0);
    s = kv_sqe(KVSSD_OPC_INLINE_XFER_FULL, kvssd_inline_tag_seq(9, 1));
    static const uint8_t full_xfer_dw[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    put_payload(&s, full_xfer_dw, 14, val + 35, 5);
    c = kv_cmd(d, 2, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw1, ==, KVSSD_INLINE_DW1_STORED);
    c = kv_retrieve(d, "full", back, 64);
    g_assert_cmpuint(c.dw0, ==, 40);
    g_assert(memcmp(back, val, 40) == 0);

    /* hybrid: one page by PRP, the 10-byte tail inline in the head */
    static uint8_t page[4106];
    for (int i = 0; i < 4106; i++) {
        page[i] = (uint8_t)(i * 11);
    }
    qtest_memwrite(d->qts, KV_DATA, page, 4096);
    s = kv_sqe(KVSSD_OPC_INLINE_HEAD, 1);
    s.cdw[10] = kvssd_inline_head_cdw10(4106, 0, 3);
    s.cdw[11] = 3 | KVSSD_INLINE_HYBRID;
    memcpy(buf, "hyb", 3);
    memcpy(buf + 3, page + 4096, 10);
    put_payload(&s, head_dw, 6, buf, 13);
    kv_set_prp(&s, KV_DATA, 0);
    c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw1, ==, KVSSD_INLINE_DW1_STORED);
    c = kv_retrieve(d, "hyb", back, sizeof(back));
    g_assert_cmpuint(c.dw0, ==, 4106);
    g_assert(memcmp(back, page, 4106) == 0);
    kv_stop(d);
}

/* Full tail (CDW11[17], docs/protocol.md 7.3a) through the transport: a
 * hybrid 81h head for 4096 + 100 bytes under key "ftl" carries the first
 * page by PRP and 21 tail bytes; two 8Dh transfers (tag and sequence in
 * CDW1, no NSID) carry 56 and 23; an 85h transfer into that stream gets
 * 01C0h and consumes nothing. The device counts 4 inline commands and 100
 * inline bytes, 4096 data bytes host-to-device; the value reads back
 * exactly. A full-tail head with tag 256 gets 0002h. */
static void test_inline_full_tail(void)
{
    KvDev *d = kv_ready(NULL);
    static const uint8_t head_dw[] = {2, 3, 12, 13, 14, 15};
    static const uint8_t xfer_dw[] = {2, 3, 11, 12, 13, 14, 15};
    static const uint8_t full_xfer_dw[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    static uint8_t val[4196], back[4300];
    uint8_t buf[24], log[4096];
    struct kvssd_stats_log *st = (struct kvssd_stats_log *)log;
    struct kvssd_sqe s;
    KvCqe c;

    for (int i = 0; i < 4196; i++) {
        val[i] = (uint8_t)(i * 7 + 3);
    }
    qtest_memwrite(d->qts, KV_DATA, val, 4096);
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_RESET_STATS, 0, 0).status, ==,
                    0);
    s = kv_sqe(KVSSD_OPC_INLINE_HEAD, 1);
    s.cdw[10] = kvssd_inline_head_cdw10(4196, 0, 3);
    s.cdw[11] = 12 | KVSSD_INLINE_HYBRID | KVSSD_INLINE_FULL_TAIL;
    memcpy(buf, "ftl", 3);
    memcpy(buf + 3, val + 4096, 21);
    put_payload(&s, head_dw, 6, buf, 24);
    kv_set_prp(&s, KV_DATA, 0);
    c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 4117);
    g_assert_cmpuint(c.dw1, ==, 0);

    s = kv_sqe(KVSSD_OPC_INLINE_XFER, 1); /* the stock transfer: refused */
    s.cdw[10] = kvssd_inline_tag_seq(12, 1);
    put_payload(&s, xfer_dw, 7, val + 4117, 28);
    g_assert_cmphex(kv_cmd(d, 1, &s).status & KVSSD_STATUS_CODE_MASK, ==,
                    KVSSD_SC_INLINE_UNKNOWN_TAG);

    s = kv_sqe(KVSSD_OPC_INLINE_XFER_FULL, kvssd_inline_tag_seq(12, 1));
    put_payload(&s, full_xfer_dw, 14, val + 4117, 56);
    c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 4173);
    g_assert_cmpuint(c.dw1, ==, 0);
    s = kv_sqe(KVSSD_OPC_INLINE_XFER_FULL, kvssd_inline_tag_seq(12, 2));
    put_payload(&s, full_xfer_dw, 14, val + 4173, 23);
    c = kv_cmd(d, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 4196);
    g_assert_cmpuint(c.dw1, ==, KVSSD_INLINE_DW1_STORED);

    g_assert_cmphex(kv_get_log(d, KVSSD_LID_STATS, 0, 4096, 0, log), ==, 0);
    g_assert_cmpuint(le64_to_cpu(st->xfer.inline_commands), ==, 4);
    g_assert_cmpuint(le64_to_cpu(st->xfer.inline_bytes), ==, 100);
    g_assert_cmpuint(le64_to_cpu(st->xfer.data_h2d_bytes), ==, 4096);
    c = kv_retrieve(d, "ftl", back, sizeof(back));
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 4196);
    g_assert(memcmp(back, val, 4196) == 0);

    s = kv_sqe(KVSSD_OPC_INLINE_HEAD, 1);
    s.cdw[10] = kvssd_inline_head_cdw10(4196, 0, 3);
    s.cdw[11] = 256 | KVSSD_INLINE_HYBRID | KVSSD_INLINE_FULL_TAIL;
    put_payload(&s, head_dw, 6, buf, 24);
    kv_set_prp(&s, KV_DATA, 0);
    g_assert_cmphex(kv_cmd(d, 1, &s).status & KVSSD_STATUS_CODE_MASK, ==, KVSSD_SC_INVALID_FIELD);
    kv_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/regs/enable-disable", test_enable_disable);
    qtest_add_func("/kvssd/regs/enable-invalid", test_enable_invalid);
    qtest_add_func("/kvssd/regs/shutdown", test_shutdown);
    qtest_add_func("/kvssd/regs/reset-mid-io", test_reset_mid_io);
    qtest_add_func("/kvssd/admin/identify-ctrl", test_identify_ctrl);
    qtest_add_func("/kvssd/admin/identify-ns", test_identify_ns);
    qtest_add_func("/kvssd/admin/queue-misuse", test_queue_misuse);
    qtest_add_func("/kvssd/admin/sq-delete-aborts", test_sq_delete_aborts);
    qtest_add_func("/kvssd/admin/doorbell-misuse", test_doorbell_misuse);
    qtest_add_func("/kvssd/admin/bad-opcodes-reserved", test_bad_opcodes_reserved);
    qtest_add_func("/kvssd/admin/log-pages", test_log_pages);
    qtest_add_func("/kvssd/admin/log-page-mdts", test_log_page_mdts);
    qtest_add_func("/kvssd/admin/features", test_features);
    qtest_add_func("/kvssd/admin/format-and-check", test_format_and_check);
    qtest_add_func("/kvssd/dma/prp-outside-ram", test_prp_outside_ram);
    qtest_add_func("/kvssd/dma/malformed-prp", test_malformed_prp);
    qtest_add_func("/kvssd/dma/sgl", test_sgl);
    qtest_add_func("/kvssd/dma/dma-unit-ideal", test_dma_unit_ideal);
    qtest_add_func("/kvssd/kv/roundtrip", test_kv_roundtrip);
    qtest_add_func("/kvssd/kv/standard-long-key", test_standard_long_key);
    qtest_add_func("/kvssd/kv/latency-on", test_latency_on);
    qtest_add_func("/kvssd/kv/latency-on-polled", test_latency_on_polled);
    qtest_add_func("/kvssd/kv/inline-store", test_inline_store);
    qtest_add_func("/kvssd/kv/inline-full-tail", test_inline_full_tail);
    qtest_add_func("/kvssd/kv/image-persistence", test_image_persistence);
    qtest_add_func("/kvssd/kv/image-killed", test_image_killed);
    return g_test_run();
}
