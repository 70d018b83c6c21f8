/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NVM command set of the nvm personality (hw/kvssd/nvm.c) on the real
 * block firmware: every command's data byte for byte, and the exact status
 * (DNR included) the NVM Command Set Specification names for each error,
 * with the transfers the command made (none before a refusal).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "fixture.h"
#include "tap_cunit.h"

#define DNR KVSSD_SC_DNR
#define MIB (1024u * 1024)

static struct {
    struct kvftl *ftl;
    struct kvssd_nvm_ns *ns;
    struct kvssd_xfer_counters xfer;
    uint64_t nsze;
    uint32_t lba;
    uint64_t now;
} nv;

static void nv_close(void)
{
    kvssd_nvm_ns_free(nv.ns);
    if (nv.ftl) {
        kvftl_close(nv.ftl);
    }
    memset(&nv, 0, sizeof(nv));
}

/* The fixture's 128 MiB flash with the nvm personality, @lba_bytes blocks, MDTS @mdts_bytes. */
static void nv_open(uint32_t lba_bytes, uint32_t mdts_bytes)
{
    struct kvftl_config c;
    struct kvssd_nvm_config vc = {.mdts_bytes = mdts_bytes};
    char err[256] = "";

    nv_close();
    fx_ftl_config(&c);
    c.command_set = KVFTL_CMDSET_NVM;
    c.lba_bytes = lba_bytes;
    nv.ftl = kvftl_open(&c, err, sizeof(err));
    if (!nv.ftl) {
        fprintf(stderr, "kvftl_open: %s\n", err);
        abort();
    }
    nv.ns = kvssd_nvm_ns_new(nv.ftl, &vc, &nv.xfer, err, sizeof(err));
    if (!nv.ns) {
        fprintf(stderr, "kvssd_nvm_ns_new: %s\n", err);
        abort();
    }
    nv.nsze = kvftl_block_lbas(nv.ftl);
    nv.lba = lba_bytes;
    nv.now = 1000000;
}

static void nv_setup(void)
{
    nv_open(4096, 2 * MIB);
}

static void nv_teardown(void)
{
    nv_close();
}

/* Run @sqe at nv.now (then advance the clock); @host may be NULL. Results are poisoned first. */
static struct kvssd_req nv_exec(const struct kvssd_sqe *sqe, struct fake_host *host)
{
    struct kvssd_req req = {.sqe = sqe, .now_ns = nv.now};

    if (host) {
        fake_host_dptr(&req, host);
    }
    req.status = 0xdead;
    req.dw0 = req.dw1 = 0xdeadbeef;
    kvssd_nvm_execute(nv.ns, &req);
    nv.now += 1000;
    return req;
}

static struct kvssd_sqe sqe_rw(uint8_t opcode, uint64_t slba, uint32_t blocks, uint32_t flags)
{
    struct kvssd_sqe s = sqe_new(opcode);

    kvssd_nvm_set_range(&s, slba, blocks, flags);
    return s;
}

/* Write @blocks from @buf at @slba; the status. */
static uint16_t nv_write(uint64_t slba, uint32_t blocks, const void *buf)
{
    struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_WRITE, slba, blocks, 0);
    struct fake_host h = fake_host_over((void *)buf, blocks * nv.lba);

    return nv_exec(&s, &h).status;
}

/* Read @blocks at @slba into @buf; the status. */
static uint16_t nv_read(uint64_t slba, uint32_t blocks, void *buf)
{
    struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_READ, slba, blocks, 0);
    struct fake_host h = fake_host_over(buf, blocks * nv.lba);

    memset(buf, 0xa5, (size_t)blocks * nv.lba);
    return nv_exec(&s, &h).status;
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

/* Blocks [@first, @first + @count) of @got equal those of @want. */
static bool same_blocks(const uint8_t *got, const uint8_t *want, uint32_t first, uint32_t count)
{
    return memcmp(got + (size_t)first * nv.lba, want + (size_t)first * nv.lba,
                  (size_t)count * nv.lba) == 0;
}

/* ---- Data ---------------------------------------------------------------- */

static void test_write_read_round_trip(void)
{
    uint8_t w[8 * 4096], r[8 * 4096];
    struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_WRITE, 10, 8, 0);
    struct fake_host h = fake_host_over(w, sizeof(w));

    fill_pattern(w, sizeof(w), 1);
    struct kvssd_req q = nv_exec(&s, &h);
    CU_ASSERT_EQUAL(q.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(q.dw0, 0);
    CU_ASSERT_EQUAL(q.dw1, 0);
    CU_ASSERT_TRUE(q.done_ns >= q.now_ns);
    CU_ASSERT_FALSE(q.in_progress);
    CU_ASSERT_EQUAL(h.from_bytes, sizeof(w));
    CU_ASSERT_EQUAL(h.to_calls, 0);
    CU_ASSERT_EQUAL(nv_read(10, 8, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w, sizeof(w)), 0);
    /* one block out of the middle */
    CU_ASSERT_EQUAL(nv_read(13, 1, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w + 3 * 4096, 4096), 0);
    CU_ASSERT_EQUAL(nv.xfer.commands, 3);
}

static void test_unwritten_blocks_read_zeroes(void)
{
    uint8_t r[4 * 4096];

    CU_ASSERT_EQUAL(nv_read(0, 4, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(all_zero(r, sizeof(r)));
    CU_ASSERT_EQUAL(nv_read(nv.nsze - 4, 4, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(all_zero(r, sizeof(r)));
}

static void test_overwrite_last_wins(void)
{
    uint8_t a[2 * 4096], b[4096], r[2 * 4096];

    fill_pattern(a, sizeof(a), 2);
    fill_pattern(b, sizeof(b), 3);
    CU_ASSERT_EQUAL(nv_write(100, 2, a), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_write(101, 1, b), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_read(100, 2, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, a, 4096), 0);
    CU_ASSERT_EQUAL(memcmp(r + 4096, b, 4096), 0);
}

/* The first and the last block of the namespace. */
static void test_edges_of_namespace(void)
{
    uint8_t w[4096], r[4096];

    fill_pattern(w, sizeof(w), 4);
    CU_ASSERT_EQUAL(nv_write(nv.nsze - 1, 1, w), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_read(nv.nsze - 1, 1, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w, sizeof(w)), 0);
    CU_ASSERT_EQUAL(nv_write(0, 1, w), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_read(0, 1, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w, sizeof(w)), 0);
}

/* 512-byte blocks: writes inside and across 4 KiB units leave their neighbours as they were. */
static void test_lba_512_partial_units(void)
{
    uint8_t a[3 * 512], b[512], r[16 * 512], want[16 * 512];

    nv_open(512, 2 * MIB);
    CU_ASSERT_EQUAL(nv.nsze % 8, 0);
    fill_pattern(a, sizeof(a), 5);
    fill_pattern(b, sizeof(b), 6);
    memset(want, 0, sizeof(want));
    /* blocks 7, 8, 9: the end of unit 0 and the start of unit 1 */
    CU_ASSERT_EQUAL(nv_write(7, 3, a), KVSSD_SC_SUCCESS);
    memcpy(want + 7 * 512, a, sizeof(a));
    CU_ASSERT_EQUAL(nv_write(1, 1, b), KVSSD_SC_SUCCESS);
    memcpy(want + 1 * 512, b, sizeof(b));
    CU_ASSERT_EQUAL(nv_read(0, 16, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, want, sizeof(want)), 0);
    /* one block of the middle, read alone */
    CU_ASSERT_EQUAL(nv_read(8, 1, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, a + 512, 512), 0);
}

/*
 * A transfer larger than the bounce buffer (5 MiB of 512-byte blocks with
 * MDTS 16 MiB, starting 3 blocks into a unit) moves in three pieces: up to
 * the first 2 MiB boundary of units (4093 blocks), 4096, the rest (2051).
 */
static void test_large_transfer_in_bounded_pieces(void)
{
    const uint32_t blocks = 10240;
    uint8_t *w = malloc((size_t)blocks * 512), *r = malloc((size_t)blocks * 512);

    nv_open(512, 16 * MIB);
    fill_pattern(w, blocks * 512, 7);
    struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_WRITE, 3, blocks, 0);
    struct fake_host h = fake_host_over(w, blocks * 512);
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.from_calls, 3);
    CU_ASSERT_EQUAL(h.from_bytes, (uint64_t)blocks * 512);

    s = sqe_rw(KVSSD_NVM_OPC_READ, 3, blocks, 0);
    h = fake_host_over(r, blocks * 512);
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.to_calls, 3);
    CU_ASSERT_EQUAL(memcmp(r, w, (size_t)blocks * 512), 0);
    free(w);
    free(r);
}

/* ---- LBA range, MDTS ------------------------------------------------------- */

/* Read, Write and Write Zeroes past NSZE: 80h LBA Out of Range, nothing moved. */
static void test_lba_out_of_range_at_nsze(void)
{
    static const uint8_t ops[] = {KVSSD_NVM_OPC_READ, KVSSD_NVM_OPC_WRITE,
                                  KVSSD_NVM_OPC_WRITE_ZEROES};
    const struct {
        uint64_t slba;
        uint32_t blocks;
    } bad[] = {
        {nv.nsze, 1},    {nv.nsze - 1, 2},    {nv.nsze + 1000, 1},
        {UINT64_MAX, 1}, {UINT64_MAX - 1, 8}, /* SLBA + NLB wraps around */
    };
    uint8_t buf[8 * 4096];

    for (size_t o = 0; o < sizeof(ops); o++) {
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            struct kvssd_sqe s = sqe_rw(ops[o], bad[i].slba, bad[i].blocks, 0);
            struct fake_host h = fake_host_over(buf, sizeof(buf));
            struct kvssd_req q = nv_exec(&s, &h);

            CU_ASSERT_EQUAL(q.status, KVSSD_SC_LBA_OUT_OF_RANGE | DNR);
            CU_ASSERT_EQUAL(h.from_calls + h.to_calls, 0);
            CU_ASSERT_EQUAL(q.done_ns, q.now_ns);
        }
    }
}

/*
 * NLB is 16 bits (65536 blocks). With MDTS 2 MiB the most a Read or Write
 * moves is 512 blocks of 4 KiB: 513 and NLB's maximum are Invalid Field,
 * checked before the range (as QEMU's hw/nvme does). Without MDTS the
 * firmware's 64 MiB per call is the limit.
 */
static void test_nlb_max_and_mdts(void)
{
    uint8_t *w = malloc(2 * MIB), *r = malloc(2 * MIB);
    struct kvssd_sqe s;
    struct fake_host h = fake_host_over(w, 2 * MIB);

    fill_pattern(w, 2 * MIB, 8);
    CU_ASSERT_EQUAL(nv_write(0, 512, w), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_read(0, 512, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w, 2 * MIB), 0);

    const uint8_t ops[] = {KVSSD_NVM_OPC_READ, KVSSD_NVM_OPC_WRITE};
    for (size_t o = 0; o < sizeof(ops); o++) {
        s = sqe_rw(ops[o], 0, 513, 0);
        CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD | DNR);
        s = sqe_rw(ops[o], 0, 65536, 0);
        CU_ASSERT_EQUAL(s.cdw[12] & 0xffff, 0xffff);
        CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD | DNR);
        s = sqe_rw(ops[o], nv.nsze, 65536, 0); /* both wrong: MDTS first */
        CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD | DNR);
    }
    CU_ASSERT_EQUAL(h.from_calls + h.to_calls, 0);

    nv_open(4096, 0);
    s = sqe_rw(KVSSD_NVM_OPC_READ, 0, KVFTL_BLOCK_MAX_XFER_BYTES / 4096 + 1, 0);
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD | DNR);
    CU_ASSERT_EQUAL(h.from_calls + h.to_calls, 0);
    free(w);
    free(r);
}

/* ---- Write Zeroes, Dataset Management --------------------------------------- */

static void test_write_zeroes_then_read_zeroes(void)
{
    uint8_t w[16 * 4096], r[16 * 4096];
    const uint32_t flags[] = {0, KVSSD_NVM_WZ_DEAC, KVSSD_NVM_RW_FUA | KVSSD_NVM_WZ_DEAC};

    for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
        fill_pattern(w, sizeof(w), 9 + (uint32_t)f);
        CU_ASSERT_EQUAL(nv_write(200, 16, w), KVSSD_SC_SUCCESS);
        struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_WRITE_ZEROES, 204, 8, flags[f]);
        struct kvssd_req q = nv_exec(&s, NULL); /* no data pointer */
        CU_ASSERT_EQUAL(q.status, KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(nv_read(200, 16, r), KVSSD_SC_SUCCESS);
        CU_ASSERT_TRUE(same_blocks(r, w, 0, 4));
        CU_ASSERT_TRUE(all_zero(r + 4 * 4096, 8 * 4096));
        CU_ASSERT_TRUE(same_blocks(r, w, 12, 4));
    }
}

/* Write Zeroes of 512-byte blocks inside a unit (read-modify-write), and NLB's maximum. */
static void test_write_zeroes_512_and_nlb_max(void)
{
    uint8_t w[16 * 512], r[16 * 512];

    nv_open(512, 2 * MIB);
    fill_pattern(w, sizeof(w), 12);
    CU_ASSERT_EQUAL(nv_write(0, 16, w), KVSSD_SC_SUCCESS);
    struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_WRITE_ZEROES, 3, 7, 0); /* blocks 3..9 */
    CU_ASSERT_EQUAL(nv_exec(&s, NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_read(0, 16, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(same_blocks(r, w, 0, 3));
    CU_ASSERT_TRUE(all_zero(r + 3 * 512, 7 * 512));
    CU_ASSERT_TRUE(same_blocks(r, w, 10, 6));

    /* 65536 blocks (32 MiB): no MDTS for a command that moves no data */
    CU_ASSERT_FATAL(nv.nsze >= 65536 + 16);
    CU_ASSERT_EQUAL(nv_write(16 + 65535, 1, w), KVSSD_SC_SUCCESS);
    s = sqe_rw(KVSSD_NVM_OPC_WRITE_ZEROES, 16, 65536, 0);
    CU_ASSERT_EQUAL(nv_exec(&s, NULL).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_read(16 + 65535, 1, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(all_zero(r, 512));
}

/* A Dataset Management range (16 bytes) at @p. */
static void put_range(uint8_t *p, uint32_t context, uint32_t blocks, uint64_t slba)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(context >> (8 * i));
        p[4 + i] = (uint8_t)(blocks >> (8 * i));
    }
    for (int i = 0; i < 8; i++) {
        p[8 + i] = (uint8_t)(slba >> (8 * i));
    }
}

static struct kvssd_sqe sqe_dsm(uint32_t ranges, uint32_t attrs)
{
    struct kvssd_sqe s = sqe_new(KVSSD_NVM_OPC_DSM);

    s.cdw[10] = ranges - 1;
    s.cdw[11] = attrs;
    return s;
}

/*
 * 256 ranges (NR = 255), one 4 KiB block each at every other block of 512:
 * those read as zeroes, the others keep their data.
 */
static void test_dsm_deallocate_256_ranges(void)
{
    const uint32_t blocks = 512;
    uint8_t *w = malloc(blocks * 4096), *r = malloc(blocks * 4096);
    uint8_t list[256 * 16];

    fill_pattern(w, blocks * 4096, 13);
    CU_ASSERT_EQUAL(nv_write(1000, blocks, w), KVSSD_SC_SUCCESS);
    for (uint32_t i = 0; i < 256; i++) {
        put_range(list + 16 * i, 0, 1, 1000 + 2 * i);
    }
    struct kvssd_sqe s = sqe_dsm(256, KVSSD_NVM_DSM_AD);
    struct fake_host h = fake_host_over(list, sizeof(list));
    CU_ASSERT_EQUAL(s.cdw[10], 255);
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.from_bytes, sizeof(list));
    CU_ASSERT_EQUAL(nv_read(1000, blocks, r), KVSSD_SC_SUCCESS);
    for (uint32_t b = 0; b < blocks; b++) {
        if (b % 2 == 0) {
            CU_ASSERT_TRUE(all_zero(r + (size_t)b * 4096, 4096));
        } else {
            CU_ASSERT_TRUE(same_blocks(r, w, b, 1));
        }
    }
    free(w);
    free(r);
}

/*
 * A bad range anywhere in the list: LBA Out of Range and nothing
 * deallocated; a range of 0 blocks is skipped; without AD (IDR, IDW: hints)
 * nothing is read or done; reserved bits: Invalid Field.
 */
static void test_dsm_statuses(void)
{
    uint8_t w[4 * 4096], r[4 * 4096], list[3 * 16];
    struct kvssd_sqe s;
    struct fake_host h;

    fill_pattern(w, sizeof(w), 14);
    CU_ASSERT_EQUAL(nv_write(50, 4, w), KVSSD_SC_SUCCESS);
    put_range(list, 0, 2, 50);
    put_range(list + 16, 0, 0, UINT64_MAX); /* 0 blocks: skipped */
    put_range(list + 32, 0, 2, nv.nsze - 1);
    s = sqe_dsm(3, KVSSD_NVM_DSM_AD);
    h = fake_host_over(list, sizeof(list));
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_LBA_OUT_OF_RANGE | DNR);
    CU_ASSERT_EQUAL(nv_read(50, 4, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w, sizeof(w)), 0);

    put_range(list + 32, 0, 1, nv.nsze - 1);
    s = sqe_dsm(3, KVSSD_NVM_DSM_IDR | KVSSD_NVM_DSM_IDW);
    h = fake_host_over(list, sizeof(list));
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.from_calls, 0);
    CU_ASSERT_EQUAL(nv_read(50, 4, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w, sizeof(w)), 0);

    s = sqe_dsm(3, KVSSD_NVM_DSM_AD | KVSSD_NVM_DSM_IDW);
    h = fake_host_over(list, sizeof(list));
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_read(50, 4, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(all_zero(r, 2 * 4096));
    CU_ASSERT_TRUE(same_blocks(r, w, 2, 2));

    s = sqe_dsm(3, KVSSD_NVM_DSM_AD | 1u << 3);
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD | DNR);
    s = sqe_dsm(3, KVSSD_NVM_DSM_AD);
    s.cdw[10] |= 1u << 8;
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_FIELD | DNR);

    /* the list is longer than the host buffer: the transfer's status */
    s = sqe_dsm(4, KVSSD_NVM_DSM_AD);
    h = fake_host_over(list, sizeof(list));
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_DATA_XFER_ERROR);
}

/*
 * Run @sqe with may_park at nv.now, and again (the transport's next slice,
 * 1000 ns later each) while it is in progress, at most @max_calls calls.
 * The last call's request; *@calls the calls it took.
 */
static struct kvssd_req nv_exec_parked(const struct kvssd_sqe *sqe, struct fake_host *host,
                                       uint32_t max_calls, uint32_t *calls)
{
    struct kvssd_req req = {.sqe = sqe, .may_park = true};

    fake_host_dptr(&req, host);
    *calls = 0;
    do {
        req.now_ns = nv.now;
        req.status = 0xdead;
        kvssd_nvm_execute(nv.ns, &req);
        nv.now += 1000;
        (*calls)++;
        if (!req.in_progress) {
            CU_ASSERT_PTR_NULL(req.cont);
        }
    } while (req.in_progress && *calls < max_calls);
    return req;
}

/* Ranges 0..@n-1 of @list: blocks [@slba, @slba + @blocks) each. */
static void same_ranges(uint8_t *list, uint32_t n, uint64_t slba, uint32_t blocks)
{
    for (uint32_t i = 0; i < n; i++) {
        put_range(list + 16 * i, 0, blocks, slba);
    }
}

/*
 * 256 ranges, each the whole namespace, with may_park: the fetch reads the
 * list once and parks; every call unmaps KVSSD_SLICE_DEALLOC_UNITS units,
 * so the command takes exactly ceil(256 x NSZE / 65536) calls, completes
 * with success on the last, counts as one command (and as 256 ranges in
 * the firmware's deletes), and every block reads zeroes afterwards, as
 * after the one-call Deallocate.
 */
static void test_dsm_parked_whole_namespace(void)
{
    uint8_t w[8 * 4096], r[8 * 4096];
    static uint8_t list[256 * 16];
    uint32_t calls;

    fill_pattern(w, sizeof(w), 21);
    CU_ASSERT_EQUAL(nv_write(0, 8, w), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_write(nv.nsze - 8, 8, w), KVSSD_SC_SUCCESS);
    same_ranges(list, 256, 0, (uint32_t)nv.nsze);
    struct kvssd_sqe s = sqe_dsm(256, KVSSD_NVM_DSM_AD);
    struct fake_host h = fake_host_over(list, sizeof(list));
    uint64_t commands = nv.xfer.commands;
    struct kvssd_req req = nv_exec_parked(&s, &h, 100000, &calls);
    CU_ASSERT_EQUAL(req.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_FALSE(req.in_progress);
    CU_ASSERT_EQUAL(calls,
                    (256 * nv.nsze + KVSSD_SLICE_DEALLOC_UNITS - 1) / KVSSD_SLICE_DEALLOC_UNITS);
    CU_ASSERT_TRUE(calls > 2);
    CU_ASSERT_EQUAL(h.from_calls, 1);
    CU_ASSERT_EQUAL(h.from_bytes, sizeof(list));
    CU_ASSERT_EQUAL(nv.xfer.commands, commands + 1);
    CU_ASSERT_EQUAL(nv_read(0, 8, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(all_zero(r, sizeof(r)));
    CU_ASSERT_EQUAL(nv_read(nv.nsze - 8, 8, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(all_zero(r, sizeof(r)));
    struct kvftl_stats st;
    kvftl_stats_get(nv.ftl, &st);
    CU_ASSERT_EQUAL(st.live_keys, 0);
    CU_ASSERT_EQUAL(st.deletes, 256); /* one per range, however it was sliced */
}

/*
 * Ranges touching exactly KVSSD_SLICE_DEALLOC_UNITS units (16 of 4096
 * blocks) and a 0-block range after them complete in the fetch: one call,
 * nothing parked (a range done or empty costs no slice of its own).
 */
static void test_dsm_parked_exact_budget(void)
{
    uint8_t list[17 * 16];
    uint32_t calls;

    CU_ASSERT_EQUAL(16 * 4096, KVSSD_SLICE_DEALLOC_UNITS);
    CU_ASSERT_TRUE(nv.nsze >= 4096);
    same_ranges(list, 16, 0, 4096);
    put_range(list + 16 * 16, 0, 0, 0);
    struct kvssd_sqe s = sqe_dsm(17, KVSSD_NVM_DSM_AD);
    struct fake_host h = fake_host_over(list, sizeof(list));
    struct kvssd_req req = nv_exec_parked(&s, &h, 1000, &calls);
    CU_ASSERT_EQUAL(req.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(calls, 1);
    CU_ASSERT_FALSE(req.in_progress);
}

/*
 * 512-byte blocks, 4 ranges [3, NSZE - 3), each touching every unit (the
 * first and last in part): parked, the slices end inside a range, yet the
 * partial units keep their data (blocks 0..7 and the last 8) and the whole
 * ones read zeroes, exactly as one call without may_park does.
 */
static void test_dsm_parked_partial_units(void)
{
    uint8_t w[16 * 512], r[16 * 512];
    uint8_t list[4 * 16];
    uint32_t calls;

    nv_open(512, 2 * MIB);
    fill_pattern(w, sizeof(w), 22);
    for (int pass = 0; pass < 2; pass++) {
        CU_ASSERT_EQUAL(nv_write(0, 16, w), KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(nv_write(nv.nsze - 16, 16, w), KVSSD_SC_SUCCESS);
        same_ranges(list, 4, 3, (uint32_t)(nv.nsze - 6));
        struct kvssd_sqe s = sqe_dsm(4, KVSSD_NVM_DSM_AD);
        struct fake_host h = fake_host_over(list, sizeof(list));
        if (pass == 0) {
            struct kvssd_req req = nv_exec_parked(&s, &h, 1000, &calls);
            CU_ASSERT_EQUAL(req.status, KVSSD_SC_SUCCESS);
            CU_ASSERT_EQUAL(calls, (4 * nv.nsze / 8 + KVSSD_SLICE_DEALLOC_UNITS - 1) /
                                       KVSSD_SLICE_DEALLOC_UNITS);
            CU_ASSERT_TRUE(calls > 1);
        } else {
            CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_SUCCESS);
        }
        CU_ASSERT_EQUAL(nv_read(0, 16, r), KVSSD_SC_SUCCESS);
        CU_ASSERT_TRUE(same_blocks(r, w, 0, 8));
        CU_ASSERT_TRUE(all_zero(r + 8 * 512, 8 * 512));
        CU_ASSERT_EQUAL(nv_read(nv.nsze - 16, 16, r), KVSSD_SC_SUCCESS);
        CU_ASSERT_TRUE(all_zero(r, 8 * 512));
        CU_ASSERT_TRUE(same_blocks(r, w, 8, 8));
    }
}

/*
 * Every range is checked before anything is unmapped, parked or not: 256
 * ranges of the whole namespace with the last one block past NSZE are
 * 4080h at the fetch, nothing parked, nothing deallocated.
 */
static void test_dsm_parked_bad_range_first(void)
{
    uint8_t w[4096], r[4096];
    static uint8_t list[256 * 16];
    uint32_t calls;

    fill_pattern(w, sizeof(w), 23);
    CU_ASSERT_EQUAL(nv_write(0, 1, w), KVSSD_SC_SUCCESS);
    same_ranges(list, 256, 0, (uint32_t)nv.nsze);
    put_range(list + 255 * 16, 0, (uint32_t)nv.nsze + 1, 0);
    struct kvssd_sqe s = sqe_dsm(256, KVSSD_NVM_DSM_AD);
    struct fake_host h = fake_host_over(list, sizeof(list));
    struct kvssd_req req = nv_exec_parked(&s, &h, 1000, &calls);
    CU_ASSERT_EQUAL(req.status, KVSSD_SC_LBA_OUT_OF_RANGE | DNR);
    CU_ASSERT_EQUAL(calls, 1);
    CU_ASSERT_FALSE(req.in_progress);
    CU_ASSERT_EQUAL(nv_read(0, 1, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w, sizeof(w)), 0);
}

/*
 * A parked Deallocate cancelled (SQ deletion, reset) does no more work: 8
 * ranges of the whole namespace; after the fetch's slice a block is
 * written at the namespace's end (past where the fetch got in its range);
 * cancelled, it keeps its data (under ASan: the state is freed, no leak).
 * Resumed instead, the rest of the ranges unmap it.
 */
static void test_dsm_parked_cancel(void)
{
    uint8_t w[4096], r[4096];
    uint8_t list[8 * 16];

    fill_pattern(w, sizeof(w), 24);
    /* the first slice ends inside a range, before the namespace's last block */
    CU_ASSERT_TRUE((KVSSD_SLICE_DEALLOC_UNITS % nv.nsze) < nv.nsze - 1);
    CU_ASSERT_TRUE(8 * nv.nsze > KVSSD_SLICE_DEALLOC_UNITS);
    for (int resume = 0; resume < 2; resume++) {
        same_ranges(list, 8, 0, (uint32_t)nv.nsze);
        struct kvssd_sqe s = sqe_dsm(8, KVSSD_NVM_DSM_AD);
        struct fake_host h = fake_host_over(list, sizeof(list));
        uint32_t calls;
        struct kvssd_req req = nv_exec_parked(&s, &h, 1, &calls);
        CU_ASSERT_TRUE(req.in_progress);
        CU_ASSERT_PTR_NOT_NULL(req.cont);
        CU_ASSERT_EQUAL(nv_write(nv.nsze - 1, 1, w), KVSSD_SC_SUCCESS);
        if (resume) {
            do {
                req.now_ns = nv.now;
                kvssd_nvm_execute(nv.ns, &req);
                calls++;
            } while (req.in_progress && calls < 1000);
            CU_ASSERT_EQUAL(req.status, KVSSD_SC_SUCCESS);
            CU_ASSERT_EQUAL(nv_read(nv.nsze - 1, 1, r), KVSSD_SC_SUCCESS);
            CU_ASSERT_TRUE(all_zero(r, sizeof(r)));
        } else {
            kvssd_nvm_cancel(nv.ns, req.cont);
            CU_ASSERT_EQUAL(nv_read(nv.nsze - 1, 1, r), KVSSD_SC_SUCCESS);
            CU_ASSERT_EQUAL(memcmp(r, w, sizeof(w)), 0);
        }
    }
}

/*
 * The transport breaking the parking contract (another opcode resumed with
 * a Deallocate's state): the state is freed, the command fails with
 * Internal Error.
 */
static void test_dsm_parked_wrong_opcode(void)
{
    uint8_t list[8 * 16];
    uint32_t calls;

    same_ranges(list, 8, 0, (uint32_t)nv.nsze);
    struct kvssd_sqe s = sqe_dsm(8, KVSSD_NVM_DSM_AD);
    struct fake_host h = fake_host_over(list, sizeof(list));
    struct kvssd_req req = nv_exec_parked(&s, &h, 1, &calls);
    CU_ASSERT_TRUE(req.in_progress);
    struct kvssd_sqe f = sqe_new(KVSSD_NVM_OPC_FLUSH);
    f.cdw[1] = 1;
    req.sqe = &f;
    kvssd_nvm_execute(nv.ns, &req);
    CU_ASSERT_EQUAL(req.status, KVSSD_SC_INTERNAL_ERROR);
    CU_ASSERT_FALSE(req.in_progress);
    CU_ASSERT_PTR_NULL(req.cont);
}

/* ---- Fields, opcodes, namespaces, transfers, firmware failures -------------- */

static void test_fields(void)
{
    uint8_t buf[4096];
    const struct {
        uint8_t opcode;
        uint32_t cdw12, cdw13;
        uint16_t status;
    } cases[] = {
        {KVSSD_NVM_OPC_WRITE, KVSSD_NVM_RW_FUA | KVSSD_NVM_RW_LR, 0x07, KVSSD_SC_SUCCESS},
        {KVSSD_NVM_OPC_WRITE, 0, 0xabcd0000u, KVSSD_SC_SUCCESS}, /* DSPEC */
        {KVSSD_NVM_OPC_READ, KVSSD_NVM_RW_FUA | KVSSD_NVM_RW_LR, 0x83, KVSSD_SC_SUCCESS},
        {KVSSD_NVM_OPC_READ, 1u << KVSSD_NVM_RW_PRINFO_SHIFT, 0, KVSSD_SC_INVALID_FIELD | DNR},
        {KVSSD_NVM_OPC_WRITE, 8u << KVSSD_NVM_RW_PRINFO_SHIFT, 0, KVSSD_SC_INVALID_FIELD | DNR},
        {KVSSD_NVM_OPC_WRITE, KVSSD_NVM_RW_STC, 0, KVSSD_SC_INVALID_FIELD | DNR},
        {KVSSD_NVM_OPC_WRITE, 2u << KVSSD_NVM_RW_DTYPE_SHIFT, 0, KVSSD_SC_INVALID_FIELD | DNR},
        {KVSSD_NVM_OPC_READ, 1u << 25, 0, KVSSD_SC_INVALID_FIELD | DNR},
        {KVSSD_NVM_OPC_READ, 1u << 16, 0, KVSSD_SC_INVALID_FIELD | DNR},
        {KVSSD_NVM_OPC_READ, 0, 1u << 8, KVSSD_SC_INVALID_FIELD | DNR},
        {KVSSD_NVM_OPC_WRITE_ZEROES, 2u << KVSSD_NVM_RW_PRINFO_SHIFT, 0,
         KVSSD_SC_INVALID_FIELD | DNR},
        {KVSSD_NVM_OPC_WRITE_ZEROES, 0, 1, KVSSD_SC_INVALID_FIELD | DNR},
    };

    fill_pattern(buf, sizeof(buf), 15);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kvssd_sqe s = sqe_rw(cases[i].opcode, 5, 1, cases[i].cdw12);
        struct fake_host h = fake_host_over(buf, sizeof(buf));

        s.cdw[13] = cases[i].cdw13;
        CU_ASSERT_EQUAL(nv_exec(&s, &h).status, cases[i].status);
        if (cases[i].status != KVSSD_SC_SUCCESS) {
            CU_ASSERT_EQUAL(h.from_calls + h.to_calls, 0);
        }
    }
}

static void test_invalid_opcodes(void)
{
    /* Compare, Write Uncorrectable, Verify, KV List/Delete/Exist, KV inline head, vendor */
    static const uint8_t ops[] = {0x04, 0x05, 0x06, 0x0c, 0x0d, 0x10, 0x11, 0x14, 0x81, 0x91, 0xff};

    for (size_t i = 0; i < sizeof(ops); i++) {
        struct kvssd_sqe s = sqe_new(ops[i]);

        CU_ASSERT_EQUAL(nv_exec(&s, NULL).status, KVSSD_SC_INVALID_OPCODE | DNR);
        CU_ASSERT_FALSE(kvssd_nvm_opcode_supported(ops[i]));
    }
    CU_ASSERT_TRUE(kvssd_nvm_opcode_supported(KVSSD_NVM_OPC_FLUSH));
    CU_ASSERT_TRUE(kvssd_nvm_opcode_supported(KVSSD_NVM_OPC_WRITE));
    CU_ASSERT_TRUE(kvssd_nvm_opcode_supported(KVSSD_NVM_OPC_READ));
    CU_ASSERT_TRUE(kvssd_nvm_opcode_supported(KVSSD_NVM_OPC_WRITE_ZEROES));
    CU_ASSERT_TRUE(kvssd_nvm_opcode_supported(KVSSD_NVM_OPC_DSM));
}

/* NSID 1 only (Flush: FFFFFFFFh too); else 0Bh Invalid Namespace or Format, checked first. */
static void test_invalid_namespace(void)
{
    static const uint32_t nsids[] = {0, 2, 0xfffffffeu, KVSSD_NSID_ALL};
    uint8_t buf[4096];

    for (size_t i = 0; i < sizeof(nsids) / sizeof(nsids[0]); i++) {
        struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_READ, 0, 1, 0);
        struct fake_host h = fake_host_over(buf, sizeof(buf));

        s.cdw[1] = nsids[i];
        CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_NSID | DNR);
        s = sqe_new(0x7f); /* an unknown opcode too: the namespace is checked first */
        s.cdw[1] = nsids[i];
        CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_NSID | DNR);
        s = sqe_new(KVSSD_NVM_OPC_FLUSH);
        s.cdw[1] = nsids[i];
        CU_ASSERT_EQUAL(nv_exec(&s, NULL).status, nsids[i] == KVSSD_NSID_ALL
                                                      ? KVSSD_SC_SUCCESS
                                                      : KVSSD_SC_INVALID_NSID | DNR);
        CU_ASSERT_EQUAL(h.from_calls + h.to_calls, 0);
    }
}

/* Flush: success, at or after its arrival; the data written before it stays. */
static void test_flush(void)
{
    uint8_t w[4096], r[4096];

    fill_pattern(w, sizeof(w), 16);
    CU_ASSERT_EQUAL(nv_write(7, 1, w), KVSSD_SC_SUCCESS);
    struct kvssd_sqe s = sqe_new(KVSSD_NVM_OPC_FLUSH);
    struct kvssd_req q = nv_exec(&s, NULL);
    CU_ASSERT_EQUAL(q.status, KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(q.done_ns >= q.now_ns);
    CU_ASSERT_EQUAL(nv_read(7, 1, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(r, w, sizeof(w)), 0);
}

/* The data pointer's failure is the command's status: injected, and a host buffer too short. */
static void test_data_transfer_errors(void)
{
    uint8_t w[2 * 4096], r[2 * 4096];
    struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_WRITE, 20, 2, 0);
    struct fake_host h = fake_host_over(w, sizeof(w));

    fill_pattern(w, sizeof(w), 17);
    h.fail_status = KVSSD_SC_DATA_XFER_ERROR;
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_DATA_XFER_ERROR);
    h = fake_host_over(w, sizeof(w));
    h.fail_status = KVSSD_SC_INVALID_PRP_OFFSET | DNR;
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_INVALID_PRP_OFFSET | DNR);
    /* the failed writes wrote nothing */
    CU_ASSERT_EQUAL(nv_read(20, 2, r), KVSSD_SC_SUCCESS);
    CU_ASSERT_TRUE(all_zero(r, sizeof(r)));

    CU_ASSERT_EQUAL(nv_write(20, 2, w), KVSSD_SC_SUCCESS);
    s = sqe_rw(KVSSD_NVM_OPC_READ, 20, 2, 0);
    h = fake_host_over(r, 4096); /* one block of room for two */
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_DATA_XFER_ERROR);
    h = fake_host_over(r, sizeof(r));
    h.fail_status = KVSSD_SC_DATA_XFER_ERROR;
    CU_ASSERT_EQUAL(nv_exec(&s, &h).status, KVSSD_SC_DATA_XFER_ERROR);
    /* no data pointer at all */
    CU_ASSERT_EQUAL(nv_exec(&s, NULL).status, KVSSD_SC_DATA_XFER_ERROR);
}

/*
 * After a power cut the firmware fails every call: Internal Error (06h, no
 * DNR: the host may retry after a reset). What a power cycle brings back is
 * the firmware's (tests/kvftl, tests/model).
 */
static void test_firmware_failure_internal_error(void)
{
    uint8_t w[4096], r[4096];
    struct kvssd_sqe flush = sqe_new(KVSSD_NVM_OPC_FLUSH);
    uint16_t st = KVSSD_SC_SUCCESS;

    fill_pattern(w, sizeof(w), 18);
    CU_ASSERT_EQUAL(nv_write(3, 1, w), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(nv_exec(&flush, NULL).status, KVSSD_SC_SUCCESS);
    kvftl_power_cut_after(nv.ftl, 1);
    for (int i = 0; i < 1000 && st == KVSSD_SC_SUCCESS; i++) {
        st = nv_write(100 + i, 1, w);
        if (st == KVSSD_SC_SUCCESS) {
            st = nv_exec(&flush, NULL).status;
        }
    }
    CU_ASSERT_EQUAL(st, KVSSD_SC_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(nv_read(3, 1, r), KVSSD_SC_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(nv_exec(&flush, NULL).status, KVSSD_SC_INTERNAL_ERROR);
}

/* kvssd_nvm_ns_new(): a kv firmware and a too small MDTS are refused with a sentence. */
static void test_namespace_refusals(void)
{
    struct kvftl_config c;
    struct kvssd_nvm_config vc = {.mdts_bytes = 2048};
    char err[256] = "";
    struct kvftl *kv;

    fx_ftl_config(&c);
    kv = kvftl_open(&c, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_PTR_NULL(kvssd_nvm_ns_new(kv, NULL, NULL, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(
        err, "the NVM namespace needs the nvm personality; the firmware runs command_set kv");
    kvftl_close(kv);
    CU_ASSERT_PTR_NULL(kvssd_nvm_ns_new(nv.ftl, &vc, NULL, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "mdts_bytes is 2048; it must be 0 (no limit) or at least 4096");
    CU_ASSERT_PTR_NULL(kvssd_nvm_ns_new(NULL, NULL, NULL, err, sizeof(err)));
}

/* The data pointer's length per command, as the transport sizes it. */
static void test_data_len(void)
{
    struct kvssd_sqe s = sqe_rw(KVSSD_NVM_OPC_WRITE, 0, 65536, 0);

    CU_ASSERT_EQUAL(kvssd_nvm_data_len(&s, 4096), 256u * MIB);
    CU_ASSERT_EQUAL(kvssd_nvm_data_len(&s, 512), 32u * MIB);
    s = sqe_rw(KVSSD_NVM_OPC_READ, 0, 3, 0);
    CU_ASSERT_EQUAL(kvssd_nvm_data_len(&s, 512), 1536);
    s = sqe_rw(KVSSD_NVM_OPC_WRITE_ZEROES, 0, 3, 0);
    CU_ASSERT_EQUAL(kvssd_nvm_data_len(&s, 512), 0);
    s = sqe_dsm(256, KVSSD_NVM_DSM_AD);
    CU_ASSERT_EQUAL(kvssd_nvm_data_len(&s, 4096), 4096);
    s = sqe_dsm(1, 0);
    CU_ASSERT_EQUAL(kvssd_nvm_data_len(&s, 4096), 16);
    s = sqe_new(KVSSD_NVM_OPC_FLUSH);
    CU_ASSERT_EQUAL(kvssd_nvm_data_len(&s, 4096), 0);
}

static const struct tap_test tests[] = {
    TAP_TEST(write_read_round_trip),
    TAP_TEST(unwritten_blocks_read_zeroes),
    TAP_TEST(overwrite_last_wins),
    TAP_TEST(edges_of_namespace),
    TAP_TEST(lba_512_partial_units),
    TAP_TEST(large_transfer_in_bounded_pieces),
    TAP_TEST(lba_out_of_range_at_nsze),
    TAP_TEST(nlb_max_and_mdts),
    TAP_TEST(write_zeroes_then_read_zeroes),
    TAP_TEST(write_zeroes_512_and_nlb_max),
    TAP_TEST(dsm_deallocate_256_ranges),
    TAP_TEST(dsm_statuses),
    TAP_TEST(dsm_parked_whole_namespace),
    TAP_TEST(dsm_parked_exact_budget),
    TAP_TEST(dsm_parked_partial_units),
    TAP_TEST(dsm_parked_bad_range_first),
    TAP_TEST(dsm_parked_cancel),
    TAP_TEST(dsm_parked_wrong_opcode),
    TAP_TEST(fields),
    TAP_TEST(invalid_opcodes),
    TAP_TEST(invalid_namespace),
    TAP_TEST(flush),
    TAP_TEST(data_transfer_errors),
    TAP_TEST(firmware_failure_internal_error),
    TAP_TEST(namespace_refusals),
    TAP_TEST(data_len),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE_FIXTURE("nvm", nv_setup, nv_teardown, tests);

    return tap_main(&suite, 1);
}
