/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvssd transport under a hostile guest (issue 10, items 1 and 2): PRP lists
 * that chain back into themselves, SGL segments that cycle, and Delete I/O
 * SQ repeated against a completion queue that is never drained. Each case
 * names the exact status the NVMe base specification gives, or the bound on
 * QEMU's memory read from /proc/<pid>/status.
 */
#include "kvssd-common.h"

#define LIST_A KV_PRPLIST                  /* two PRP list / SGL segment pages */
#define LIST_B (KV_PRPLIST + 0x1000)
#define LAST_ENTRY 0xff8                   /* page offset of a list page's last entry */

static void put_qword(KvDev *d, uint64_t addr, uint64_t v)
{
    uint64_t le = cpu_to_le64(v);
    qtest_memwrite(d->qts, addr, &le, sizeof(le));
}

static uint16_t store_prp(KvDev *d, const char *key, uint32_t vlen, uint64_t prp1, uint64_t prp2)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_STORE, 1);
    uint32_t klen = strlen(key);

    kvssd_sqe_set_key(&s, key, klen);
    s.cdw[10] = vlen;
    s.cdw[11] = kvssd_cdw11(klen, 0);
    kv_set_prp(&s, prp1, prp2);
    return kv_cmd(d, 1, &s).status;
}

/* A 12 KiB Store (PRP1 + a list of two data pages) whose PRP2 points at the
 * last entry of a list page, and that entry holds its own address: the
 * chain pointer is a PRP entry inside a list, so its page offset must be 0;
 * FF8h gets 13h Invalid PRP Offset (DNR). Nothing is stored, the device
 * keeps answering. Before the fix the walk looped in the bottom half. */
static void test_prp_list_self_chain(void)
{
    KvDev *d = kv_ready(NULL);

    put_qword(d, LIST_A + LAST_ENTRY, LIST_A + LAST_ENTRY);
    g_assert_cmphex(store_prp(d, "loop", 3 * 4096, KV_DATA, LIST_A + LAST_ENTRY), ==,
                    KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "loop"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    kv_stop(d);
}

/* Two list pages whose last entries point at each other's last entry
 * (A+FF8h -> B+FF8h -> A+FF8h): 13h Invalid PRP Offset (DNR). */
static void test_prp_list_two_page_cycle(void)
{
    KvDev *d = kv_ready(NULL);

    put_qword(d, LIST_A + LAST_ENTRY, LIST_B + LAST_ENTRY);
    put_qword(d, LIST_B + LAST_ENTRY, LIST_A + LAST_ENTRY);
    g_assert_cmphex(store_prp(d, "cycle", 3 * 4096, KV_DATA, LIST_A + LAST_ENTRY), ==,
                    KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "cycle"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    kv_stop(d);
}

/* The chain pointer's own offset: PRP2 = A+FF8h (a list pointer in the
 * command may have an offset) whose only entry chains to B+8 (a list entry
 * with an offset) gets 13h even though B+8 holds two valid data pages.
 * Chaining to B itself (offset 0) stores the 12 KiB and reads them back. */
static void test_prp_chain_pointer_offset(void)
{
    KvDev *d = kv_ready(NULL);
    static uint8_t val[3 * 4096], back[3 * 4096];

    for (size_t i = 0; i < sizeof(val); i++) {
        val[i] = (uint8_t)(i * 13 + 5);
    }
    qtest_memwrite(d->qts, KV_DATA, val, sizeof(val));
    put_qword(d, LIST_A + LAST_ENTRY, LIST_B + 8);
    put_qword(d, LIST_B + 8, KV_DATA + 4096);
    put_qword(d, LIST_B + 16, KV_DATA + 2 * 4096);
    g_assert_cmphex(store_prp(d, "chain", sizeof(val), KV_DATA, LIST_A + LAST_ENTRY), ==,
                    KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "chain"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);

    put_qword(d, LIST_A + LAST_ENTRY, LIST_B);
    put_qword(d, LIST_B, KV_DATA + 4096);
    put_qword(d, LIST_B + 8, KV_DATA + 2 * 4096);
    g_assert_cmphex(store_prp(d, "chain", sizeof(val), KV_DATA, LIST_A + LAST_ENTRY), ==, 0);
    KvCqe c = kv_retrieve(d, "chain", back, sizeof(back));
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, sizeof(val));
    g_assert(memcmp(val, back, sizeof(val)) == 0);
    kv_stop(d);
}

/* Get Log Page (error log, NUMD for 12 KiB) on the admin queue walks the same
 * PRP code: a self-chained list gets 13h Invalid PRP Offset (DNR), and the
 * admin queue keeps answering (Identify Controller succeeds). */
static void test_get_log_page_self_chain(void)
{
    KvDev *d = kv_ready(NULL);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_GET_LOG_PAGE, KVSSD_NSID_ALL);
    uint32_t numd = 3 * 4096 / 4 - 1;

    put_qword(d, LIST_A + LAST_ENTRY, LIST_A + LAST_ENTRY);
    s.cdw[10] = kvssd_get_log_cdw10(KVSSD_LID_ERROR, numd);
    s.cdw[11] = kvssd_get_log_cdw11(numd);
    kv_set_prp(&s, KV_DATA2, LIST_A + LAST_ENTRY);
    g_assert_cmphex(kv_admin_status(d, &s), ==, KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR);
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CTRL, 0, 0, NULL), ==, 0);
    kv_stop(d);
}

static void sgl_desc(KvDev *d, uint64_t at, uint64_t addr, uint32_t len, uint8_t type)
{
    uint8_t p[16];
    uint64_t a = cpu_to_le64(addr);
    uint32_t l = cpu_to_le32(len);

    memset(p, 0, sizeof(p));
    memcpy(p, &a, 8);
    memcpy(p + 8, &l, 4);
    p[15] = type;
    qtest_memwrite(d->qts, at, p, sizeof(p));
}

/* A Store of @vlen bytes whose SGL1 is a Segment descriptor (20h) of @seg_len
 * bytes at @seg. */
static KvCqe store_sgl_segment(KvDev *d, const char *key, uint32_t vlen, uint64_t seg,
                               uint32_t seg_len)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_STORE, 1);
    uint32_t klen = strlen(key);
    uint64_t a = cpu_to_le64(seg);
    uint32_t l = cpu_to_le32(seg_len);
    uint8_t desc[16];

    kvssd_sqe_set_key(&s, key, klen);
    s.cdw[10] = vlen;
    s.cdw[11] = kvssd_cdw11(klen, 0);
    memset(desc, 0, sizeof(desc));
    memcpy(desc, &a, 8);
    memcpy(desc + 8, &l, 4);
    desc[15] = 0x20;
    s.cdw[0] |= 1u << 14;                              /* PSDT = 01b: SGL */
    memcpy(&s.cdw[6], desc, sizeof(desc));
    return kv_cmd(d, 1, &s);
}

/* SGL segments that cycle. A segment that only points at itself, and two
 * that point at each other, describe no data however long they are walked:
 * 0Eh Invalid Number of SGL Descriptors (DNR) after 256 descriptors. A
 * segment of one 1-byte data block and a pointer back at itself, for a
 * 300-byte Store: 128 rounds reach the 256-descriptor limit first, 0Eh. A
 * segment holding the whole 300 bytes and then a pointer back at itself:
 * the transfer is described by the first pass, the walk stops there (it
 * never needs more segments than the data it moves), and the Store
 * succeeds with exactly those 300 bytes. */
static void test_sgl_segment_cycles(void)
{
    KvDev *d = kv_ready(NULL);
    uint8_t val[300], back[300];

    for (int i = 0; i < 300; i++) {
        val[i] = (uint8_t)(i ^ 0x5a);
    }
    qtest_memwrite(d->qts, KV_DATA, val, sizeof(val));

    sgl_desc(d, LIST_A, LIST_A, 16, 0x20);
    g_assert_cmphex(store_sgl_segment(d, "s", 300, LIST_A, 16).status, ==,
                    KVSSD_SC_INVALID_NUM_SGL_DESCRS | KVSSD_SC_DNR);

    sgl_desc(d, LIST_A, LIST_B, 16, 0x20);
    sgl_desc(d, LIST_B, LIST_A, 16, 0x20);
    g_assert_cmphex(store_sgl_segment(d, "s", 300, LIST_A, 16).status, ==,
                    KVSSD_SC_INVALID_NUM_SGL_DESCRS | KVSSD_SC_DNR);

    sgl_desc(d, LIST_A, KV_DATA, 1, 0x00);
    sgl_desc(d, LIST_A + 16, LIST_A, 32, 0x20);
    g_assert_cmphex(store_sgl_segment(d, "s", 300, LIST_A, 32).status, ==,
                    KVSSD_SC_INVALID_NUM_SGL_DESCRS | KVSSD_SC_DNR);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "s"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);

    sgl_desc(d, LIST_A, KV_DATA, 300, 0x00);
    g_assert_cmphex(store_sgl_segment(d, "s", 300, LIST_A, 32).status, ==, 0);
    KvCqe c = kv_retrieve(d, "s", back, sizeof(back));
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 300);
    g_assert(memcmp(val, back, sizeof(val)) == 0);
    kv_stop(d);
}

/* Poll @qid's next CQE slot a bounded number of times; true if one arrived. */
static bool cqe_arrives(KvDev *d, uint16_t qid, KvCqe *c)
{
    for (int i = 0; i < 1000; i++) {
        if (kv_try_cqe(d, qid, c)) {
            return true;
        }
    }
    return false;
}

/* Delete I/O SQ while its CQ (2 entries: one usable slot) is full: 6
 * Exists on SQ 1, the first is posted, two more are fetched and wait, three
 * are not fetched. The Delete succeeds at once (a full I/O CQ never stalls
 * an admin command), and every command of the deleted SQ that did not fit
 * into the CQ before the Delete completed is implicitly completed: after
 * the host frees the slot, no completion of the old SQ 1 appears. SQ 1
 * created again on the same CQ sees exactly its own completions (sqid 1,
 * its cids, 87h Key Does Not Exist). */
static void test_sq_delete_full_cq(void)
{
    KvDev *d = kv_start(NULL);
    uint16_t cids[6];
    KvCqe c = {0};

    kv_enable(d);
    kv_six_exists_on_full_cq(d, cids);
    g_assert(cqe_arrives(d, 1, &c));
    g_assert_cmpuint(c.cid, ==, cids[0]);
    g_assert_cmphex(c.status, ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_delete_sq(d, 1), ==, 0);
    kv_cq_doorbell(d, 1);                               /* the slot is free again */
    g_assert_cmphex(kv_create_sq(d, 1, 16, 1), ==, 0);
    for (int round = 0; round < 2; round++) {
        struct kvssd_sqe s = kv_sqe(KVSSD_OPC_EXIST, 1);
        kvssd_sqe_set_key(&s, "new", 3);
        s.cdw[11] = 3;
        uint16_t cid = kv_put(d, 1, &s, false);
        kv_ring(d, 1);
        c = kv_wait(d, 1);
        g_assert_cmpuint(c.sqid, ==, 1);
        g_assert_cmpuint(c.cid, ==, cid);
        g_assert_cmphex(c.status, ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    }
    kv_stop(d);
}

/*
 * latency=on holds completions until their simulated NAND time, which the
 * virtual clock under qtest reaches only when stepped. A CQ of 8 entries
 * (7 slots) and 12 Retrieves of a value on NAND: the device fetches 8 (as
 * many as the CQ has entries) and holds them; 4 stay unfetched. Delete I/O
 * SQ places 7 of the fetched commands' completions in the CQ with their
 * real status before its own completion (the explicit completions the
 * specification orders before the Delete's CQE), in submission order; the
 * eighth fetched and the 4 unfetched commands are implicitly completed:
 * nothing more appears after the clock is stepped and the CQ drained.
 */
static void test_sq_delete_latency_explicit(void)
{
    KvDev *d = kv_ready("latency=on");
    uint16_t cids[12];
    KvCqe c;

    g_assert_cmphex(kv_store(d, "v", "value", 5, 0), ==, 0);
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_FLUSH, 1);   /* the value goes to NAND */
    kv_put(d, 1, &s, false);
    kv_ring(d, 1);
    qtest_clock_step(d->qts, 1000000000);
    g_assert_cmphex(kv_wait(d, 1).status, ==, 0);

    g_assert_cmphex(kv_create_cq(d, 2, 8, 0, 1), ==, 0);
    g_assert_cmphex(kv_create_sq(d, 3, 16, 2), ==, 0);
    for (int i = 0; i < 12; i++) {
        s = kv_sqe(KVSSD_OPC_RETRIEVE, 1);
        kvssd_sqe_set_key(&s, "v", 1);
        s.cdw[10] = 4096;
        s.cdw[11] = 1;
        kv_set_prp(&s, KV_DATA2, 0);
        cids[i] = kv_put(d, 3, &s, false);
    }
    kv_ring(d, 3);
    /* an admin round trip: the bottom half that answers it has fetched SQ 3 */
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CTRL, 0, 0, NULL), ==, 0);
    g_assert(!kv_try_cqe(d, 2, &c));                    /* held: not due yet */
    g_assert_cmphex(kv_delete_sq(d, 3), ==, 0);
    for (int i = 0; i < 7; i++) {
        g_assert(kv_try_cqe(d, 2, &c));
        g_assert_cmpuint(c.sqid, ==, 3);
        g_assert_cmpuint(c.cid, ==, cids[i]);
        g_assert_cmphex(c.status, ==, 0);
        g_assert_cmpuint(c.dw0, ==, 5);
    }
    kv_cq_doorbell(d, 2);
    qtest_clock_step(d->qts, 1000000000);
    g_assert(!cqe_arrives(d, 2, &c));
    kv_stop(d);
}

/* QEMU's resident set size in KiB (VmRSS of /proc/<pid>/status). */
static uint64_t qemu_rss_kib(KvDev *d)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/status", (int)qtest_pid(d->qts));
    g_autofree char *text = NULL;
    uint64_t kib = 0;

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    const char *line = strstr(text, "\nVmRSS:");
    g_assert(line);
    g_assert(sscanf(line + strlen("\nVmRSS:"), "%" SCNu64, &kib) == 1);
    return kib;
}

#define DELETE_ROUNDS 4000
#define DELETE_SQ_ENTRIES 1024

/*
 * Delete I/O SQ against an undrained CQ, repeated: a 2-entry CQ that is
 * never drained; each round creates a 1024-entry SQ on it, rings tail 1023
 * and deletes the SQ. What the device may hold for a CQ is bounded by the
 * queues (docs/device.md, Robustness): at most CQ size completions per I/O
 * CQ (here 2) and admin CQ size + AERL + 1 (32 + 4) for the admin CQ, a few
 * KiB in all, whatever the number of rounds. The old device kept ~1021
 * aborted completions per round on the heap: 4000 rounds x 1021 x >= 32
 * bytes >= 125 MiB (measured: +188 MB). Growth over 4000 rounds after a
 * warm-up must stay under 16 MiB, the allocator's and QEMU's own noise,
 * plus the ASan quarantine of an ASan build (freed blocks it holds back:
 * the test bounds it to ASAN_QUARANTINE_MB for QEMU).
 */
#define ASAN_QUARANTINE_MB 4

static void sq_delete_rounds(const char *props)
{
    const char *env = g_getenv("ASAN_OPTIONS");
    g_autofree char *asan = g_strdup_printf("%s%squarantine_size_mb=%d", env ? env : "",
                                            env ? ":" : "", ASAN_QUARANTINE_MB);
    g_setenv("ASAN_OPTIONS", asan, true);      /* QEMU inherits the environment */
    KvDev *d = kv_start(props);
    uint64_t before = 0;

    kv_enable(d);
    g_assert_cmphex(kv_create_cq(d, 2, 2, 0, 1), ==, 0);   /* never drained */
    for (int round = 0; round < 100 + DELETE_ROUNDS; round++) {
        if (round == 100) {
            before = qemu_rss_kib(d);
        }
        g_assert_cmphex(kv_create_sq(d, 1, DELETE_SQ_ENTRIES, 2), ==, 0);
        kv_wr32(d, KVSSD_REG_SQ0TDBL + 8 * 1, DELETE_SQ_ENTRIES - 1);
        g_assert_cmphex(kv_delete_sq(d, 1), ==, 0);
    }
    uint64_t after = qemu_rss_kib(d);
    g_test_message("QEMU RSS %" PRIu64 " KiB -> %" PRIu64 " KiB over %d rounds (%s)", before, after,
                   DELETE_ROUNDS, props ? props : "latency=off");
    g_assert_cmpuint(after, <, before + (16 + ASAN_QUARANTINE_MB) * 1024);
    kv_stop(d);
}

static void test_sq_delete_rounds_rss(void)
{
    sq_delete_rounds(NULL);
}

static void test_sq_delete_rounds_rss_latency(void)
{
    sq_delete_rounds("latency=on");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/transport/prp-list-self-chain", test_prp_list_self_chain);
    qtest_add_func("/kvssd/transport/prp-list-two-page-cycle", test_prp_list_two_page_cycle);
    qtest_add_func("/kvssd/transport/prp-chain-pointer-offset", test_prp_chain_pointer_offset);
    qtest_add_func("/kvssd/transport/get-log-page-self-chain", test_get_log_page_self_chain);
    qtest_add_func("/kvssd/transport/sgl-segment-cycles", test_sgl_segment_cycles);
    qtest_add_func("/kvssd/transport/sq-delete-full-cq", test_sq_delete_full_cq);
    qtest_add_func("/kvssd/transport/sq-delete-latency-explicit", test_sq_delete_latency_explicit);
    qtest_add_func("/kvssd/transport/sq-delete-rounds-rss", test_sq_delete_rounds_rss);
    qtest_add_func("/kvssd/transport/sq-delete-rounds-rss-latency",
                   test_sq_delete_rounds_rss_latency);
    return g_test_run();
}
