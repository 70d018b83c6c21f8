/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The admin command set (hw/kvssd/admin.c) on the real firmware: the
 * controller's checks and accounting around an I/O command, and Get Log
 * Page against MDTS. NUMDU:NUMDL (0's based dwords) name the transfer;
 * one longer than MDTS is Invalid Field in Command with DNR whatever the
 * log's size, as QEMU's hw/nvme does, and nothing is transferred; one of
 * exactly MDTS moves the log (the transfer capped at the log's size).
 */
#include <string.h>

#include <CUnit/CUnit.h>

#include "admin.h"
#include "fixture.h"
#include "tap_cunit.h"

#define DNR KVSSD_SC_DNR
#define MDTS_2MIB 9 /* 4 KiB << 9 = 2 MiB, the device's default */

static struct kvssd_admin adm;
static uint8_t page[8192];

/* The admin command set over the fixture's KV namespace, MDTS @mdts (0: no limit). */
static void admin_open(uint8_t mdts)
{
    memset(&adm, 0, sizeof(adm));
    snprintf(adm.serial, sizeof(adm.serial), "ADM01");
    snprintf(adm.firmware, sizeof(adm.firmware), "1.0");
    adm.ftl = fx.ftl;
    adm.ns = fx.ns;
    adm.xfer = &fx.xfer;
    adm.max_ioqpairs = 1;
    adm.mdts = mdts;
    kvssd_admin_init(&adm);
}

static void admin_setup(void)
{
    fx_setup();
    admin_open(MDTS_2MIB);
}

/*
 * Run admin command @s with its data pointer over the 8 KiB host page
 * (0xa5 first); the status, *@h its transfers. The clock moves 1 us.
 */
static uint16_t admin_exec(const struct kvssd_sqe *s, struct fake_host *h)
{
    struct kvssd_req io = {0};

    memset(page, 0xa5, sizeof(page));
    *h = fake_host_over(page, sizeof(page));
    fake_host_dptr(&io, h);

    struct kvssd_admin_req req = {.sqe = s, .now_ns = fx.now, .dptr = io.dptr};
    req.status = 0xdead;
    kvssd_admin_execute(&adm, &req);
    fx.now += 1000;
    return req.status;
}

/*
 * Get Log Page @lid of NUMD @numd (0's based, split into NUMDL and NUMDU)
 * into the 8 KiB host page (0xa5 first); the status, *@h its transfers.
 */
static uint16_t get_log_ns(uint8_t lid, uint32_t nsid, uint8_t csi, uint32_t numd, uint64_t offset,
                           struct fake_host *h)
{
    struct kvssd_sqe s = sqe_new(KVSSD_ADM_GET_LOG_PAGE);

    s.cdw[1] = nsid;
    s.cdw[10] = kvssd_get_log_cdw10(lid, numd);
    s.cdw[11] = kvssd_get_log_cdw11(numd);
    s.cdw[12] = (uint32_t)offset;
    s.cdw[13] = (uint32_t)(offset >> 32);
    s.cdw[14] = (uint32_t)csi << 24;
    return admin_exec(&s, h);
}

static uint16_t get_log_at(uint8_t lid, uint8_t csi, uint32_t numd, uint64_t offset,
                           struct fake_host *h)
{
    return get_log_ns(lid, KVSSD_NSID_ALL, csi, numd, offset, h);
}

static uint16_t get_log(uint8_t lid, uint8_t csi, uint32_t numd, struct fake_host *h)
{
    return get_log_at(lid, csi, numd, 0, h);
}

/* Each log page the device has, the NSID and the CSI its Get Log Page names. */
static const struct {
    uint8_t lid, csi;
    uint32_t nsid;
    uint32_t bytes; /* what a transfer of MDTS moves: the whole log */
} logs[] = {
    {KVSSD_LID_ERROR, 0, KVSSD_NSID_ALL, KVSSD_ERROR_LOG_ENTRIES * 64},
    {KVSSD_LID_SMART, 0, KVSSD_NSID_ALL, 512},
    {KVSSD_LID_FW_SLOT, 0, KVSSD_NSID_ALL, 512},
    {KVSSD_LID_EFFECTS, KVSSD_CSI_KV, KVSSD_NSID_ALL, 4096},
    {KVSSD_LID_STATS, 0, KVSSD_NSID_ALL, sizeof(struct kvssd_stats_log)},
    {KVSSD_LID_CONFIG, 0, KVSSD_NSID_ALL, 512},
    {KVSSD_LID_ID_NS_KV, 0, 1, 4096},
};

/*
 * MDTS 2 MiB: NUMD 524287 (exactly 2 MiB) succeeds for every log and moves
 * the whole log in one transfer; NUMD 524288 (2 MiB + 4 bytes) and NUMD
 * FFFFFFFFh (NUMDU:NUMDL all ones: 16 GiB) are 0002h with DNR and
 * transfer nothing, for every log.
 */
static void test_get_log_mdts(void)
{
    const uint32_t at_mdts = (2u << 20) / 4 - 1;
    struct fake_host h;

    CU_ASSERT_EQUAL(at_mdts, 524287);
    for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
        CU_ASSERT_EQUAL(get_log_ns(logs[i].lid, logs[i].nsid, logs[i].csi, at_mdts, 0, &h),
                        KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(h.to_calls, 1);
        CU_ASSERT_EQUAL(h.to_bytes, logs[i].bytes);

        CU_ASSERT_EQUAL(get_log_ns(logs[i].lid, logs[i].nsid, logs[i].csi, at_mdts + 1, 0, &h),
                        KVSSD_SC_INVALID_FIELD | DNR);
        CU_ASSERT_EQUAL(h.to_calls, 0);
        CU_ASSERT_EQUAL(page[0], 0xa5);

        CU_ASSERT_EQUAL(get_log_ns(logs[i].lid, logs[i].nsid, logs[i].csi, UINT32_MAX, 0, &h),
                        KVSSD_SC_INVALID_FIELD | DNR);
        CU_ASSERT_EQUAL(h.to_calls, 0);
    }
}

/*
 * The transfer is checked before the log identifier, as in QEMU: an
 * unknown LID (7Fh) past MDTS is 0002h with DNR, at MDTS 0109h Invalid
 * Log Page (DNR).
 */
static void test_get_log_mdts_before_lid(void)
{
    struct fake_host h;

    CU_ASSERT_EQUAL(get_log(0x7f, 0, (2u << 20) / 4, &h), KVSSD_SC_INVALID_FIELD | DNR);
    CU_ASSERT_EQUAL(get_log(0x7f, 0, (2u << 20) / 4 - 1, &h), KVSSD_SC_INVALID_LOG_PAGE | DNR);
}

/* MDTS 16 MiB (mdts=12): NUMD 4194303 (16 MiB) succeeds, 4194304 is 0002h with DNR. */
static void test_get_log_mdts_16mib(void)
{
    struct fake_host h;

    admin_open(12);
    CU_ASSERT_EQUAL(get_log(KVSSD_LID_SMART, 0, (16u << 20) / 4 - 1, &h), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.to_bytes, 512);
    CU_ASSERT_EQUAL(get_log(KVSSD_LID_SMART, 0, (16u << 20) / 4, &h), KVSSD_SC_INVALID_FIELD | DNR);
    CU_ASSERT_EQUAL(h.to_calls, 0);
}

static uint32_t le32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64_at(const uint8_t *p)
{
    return le32_at(p) | (uint64_t)le32_at(p + 4) << 32;
}

/*
 * The configuration log (C1h) of the fixture's device: the "default"
 * preset on 2 channels x 2 dies x 32 blocks x 64 pages of 16 KiB, firmware
 * "1.0", latency=on. Every byte of the 512 is as the layout in
 * <kvssd/ext.h> says: names NUL padded, numbers little endian at their
 * offsets, the reserved tail zero.
 */
static void test_config_log_bytes(void)
{
    struct fake_host h;
    uint8_t want[512] = {0};

    adm.latency = true;
    CU_ASSERT_EQUAL(get_log(KVSSD_LID_CONFIG, 0, 512 / 4 - 1, &h), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.to_bytes, 512);
    CU_ASSERT_EQUAL(page[512], 0xa5); /* nothing past the log */

    want[0] = 1; /* version */
    memcpy(want + 8, "1.0", 3);
    memcpy(want + 16, "default", 7);
    memcpy(want + 32, "kv", 2);
    memcpy(want + 48, "all", 3);
    memcpy(want + 64, "hash", 4);
    memcpy(want + 80, "greedy", 6);
    CU_ASSERT_EQUAL(memcmp(page, want, 96), 0);
    CU_ASSERT_EQUAL(le32_at(page + 96), 2);      /* channels */
    CU_ASSERT_EQUAL(le32_at(page + 100), 2);     /* dies per channel */
    CU_ASSERT_EQUAL(le32_at(page + 104), 32);    /* blocks per die */
    CU_ASSERT_EQUAL(le32_at(page + 108), 64);    /* pages per block */
    CU_ASSERT_EQUAL(le32_at(page + 112), 16384); /* page size */
    CU_ASSERT_EQUAL(le32_at(page + 116), 1024);  /* placement unit */
    CU_ASSERT_EQUAL(le32_at(page + 120), 16384); /* index page: 0 = the NAND page */
    CU_ASSERT_EQUAL(le32_at(page + 124), 7);     /* over-provisioning percent */
    /* user capacity: what Identify reports as NSZE */
    CU_ASSERT_EQUAL(le64_at(page + 128), kvssd_admin_capacity_bytes(&adm));
    CU_ASSERT_EQUAL(le64_at(page + 136), 64ull << 20); /* index DRAM */
    CU_ASSERT_EQUAL(le64_at(page + 144), 50000);       /* tR */
    CU_ASSERT_EQUAL(le64_at(page + 152), 500000);      /* tPROG */
    CU_ASSERT_EQUAL(le64_at(page + 160), 3000000);     /* tBERS */
    CU_ASSERT_EQUAL(le64_at(page + 168), 800);         /* channel bytes/us */
    CU_ASSERT_EQUAL(le64_at(page + 176), 2000);        /* DRAM copy bytes/us */
    for (uint32_t off = 184; off < 224; off += 8) {
        CU_ASSERT_EQUAL(le64_at(page + off), 0); /* firmware time: none in "default" */
    }
    CU_ASSERT_EQUAL(page[224], 1); /* latency */
    CU_ASSERT_EQUAL(page[225], 1); /* plp */
    CU_ASSERT_EQUAL(page[226], 1); /* bloom */
    CU_ASSERT_EQUAL(memcmp(page + 227, want + 227, 512 - 227), 0);
}

/* The preset the transport names is the one reported: "pm983" at byte 16. */
static void test_config_log_preset(void)
{
    struct fake_host h;

    adm.preset = 1;
    CU_ASSERT_EQUAL(get_log(KVSSD_LID_CONFIG, 0, 512 / 4 - 1, &h), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(page + 16, "pm983\0\0\0\0\0\0\0\0\0\0\0", 16), 0);
}

/*
 * The index design reported is the firmware's own: a device opened with
 * index=lsm says "lsm" at byte 64 and one with index=pm983 "pm983", NUL
 * padded to 16 bytes (the log said "hash" whatever the design).
 */
static void test_config_log_index(void)
{
    static const struct {
        enum kvftl_index design;
        const char *name;
    } cases[] = {{KVFTL_INDEX_LSM, "lsm"}, {KVFTL_INDEX_PM983, "pm983"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kvftl_config c;
        struct fake_host h;
        char err[256], want[16] = {0};

        fx_ftl_config(&c);
        c.index = cases[i].design;
        struct kvftl *ftl = kvftl_open(&c, err, sizeof(err));
        CU_ASSERT_PTR_NOT_NULL_FATAL(ftl);
        adm.ftl = ftl;
        CU_ASSERT_EQUAL(get_log(KVSSD_LID_CONFIG, 0, 512 / 4 - 1, &h), KVSSD_SC_SUCCESS);
        memcpy(want, cases[i].name, strlen(cases[i].name));
        CU_ASSERT_EQUAL(memcmp(page + 64, want, 16), 0);
        adm.ftl = fx.ftl;
        kvftl_close(ftl);
    }
}

/*
 * Offsets into the configuration log are checked as for the statistics
 * log: offset 2 (not a dword) and offset 516 (past the 512 bytes) are
 * 0002h with DNR and move nothing; offset 508 moves the last dword only
 * (a 4 KiB request capped at the log's end); offset 512 succeeds with
 * nothing to move.
 */
static void test_config_log_offsets(void)
{
    static const uint8_t lids[] = {KVSSD_LID_CONFIG, KVSSD_LID_STATS};
    const uint32_t size[] = {512, sizeof(struct kvssd_stats_log)};
    struct fake_host h;

    for (size_t i = 0; i < 2; i++) {
        CU_ASSERT_EQUAL(get_log_at(lids[i], 0, 1023, 2, &h), KVSSD_SC_INVALID_FIELD | DNR);
        CU_ASSERT_EQUAL(h.to_calls, 0);
        CU_ASSERT_EQUAL(get_log_at(lids[i], 0, 1023, size[i] + 4, &h),
                        KVSSD_SC_INVALID_FIELD | DNR);
        CU_ASSERT_EQUAL(h.to_calls, 0);
        CU_ASSERT_EQUAL(get_log_at(lids[i], 0, 1023, size[i] - 4, &h), KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(h.to_bytes, 4);
        CU_ASSERT_EQUAL(get_log_at(lids[i], 0, 1023, size[i], &h), KVSSD_SC_SUCCESS);
        CU_ASSERT_EQUAL(h.to_bytes, 0);
    }
}

/* Identify CNS @cns, CSI @csi of @nsid into the host page (0xa5 first); the status. */
static uint16_t identify(uint32_t nsid, uint8_t cns, uint8_t csi, struct fake_host *h)
{
    struct kvssd_sqe s = sqe_new(KVSSD_ADM_IDENTIFY);

    s.cdw[1] = nsid;
    s.cdw[10] = cns;
    s.cdw[11] = kvssd_identify_cdw11(csi);
    return admin_exec(&s, h);
}

/*
 * Log C2h is Identify Namespace CNS 05h, CSI 01h of NSID 1, byte for byte:
 * the 4096 bytes of each are equal (KVMKL 16, KVMVL 2097152, the vendor
 * area's "KVSSDEXT" with long keys of 255 bytes), nothing is written past
 * them; offset 4092 moves the page's last dword only.
 */
static void test_id_ns_kv_log_is_identify(void)
{
    static uint8_t want[4096];
    struct fake_host h;

    CU_ASSERT_EQUAL(identify(1, KVSSD_CNS_CSI_NS, KVSSD_CSI_KV, &h), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.to_bytes, 4096);
    memcpy(want, page, sizeof(want));
    CU_ASSERT_EQUAL(le32_at(want + 72) & 0xffff, 16);          /* KVMKL */
    CU_ASSERT_EQUAL(le32_at(want + 76), 2097152);              /* KVMVL */
    CU_ASSERT_EQUAL(memcmp(want + 3840, "KVSSDEXT", 8), 0);    /* vendor area */
    CU_ASSERT_EQUAL(le32_at(want + 3850) & 0xffff, 255);       /* long-key maximum */

    CU_ASSERT_EQUAL(get_log_ns(KVSSD_LID_ID_NS_KV, 1, 0, 1023, 0, &h), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.to_calls, 1);
    CU_ASSERT_EQUAL(h.to_bytes, 4096);
    CU_ASSERT_EQUAL(memcmp(page, want, sizeof(want)), 0);
    CU_ASSERT_EQUAL(page[4096], 0xa5);

    CU_ASSERT_EQUAL(get_log_ns(KVSSD_LID_ID_NS_KV, 1, 0, 1023, 4092, &h), KVSSD_SC_SUCCESS);
    CU_ASSERT_EQUAL(h.to_bytes, 4);
    CU_ASSERT_EQUAL(memcmp(page, want + 4092, 4), 0);
}

/*
 * Log C2h names one namespace: NSID 0, 2 and FFFFFFFFh are 400Bh (Invalid
 * Namespace or Format, DNR) and move nothing, as Identify CNS 05h does.
 */
static void test_id_ns_kv_log_bad_nsid(void)
{
    static const uint32_t bad_nsid[] = {0, 2, KVSSD_NSID_ALL};
    struct fake_host h;

    for (size_t i = 0; i < sizeof(bad_nsid) / sizeof(bad_nsid[0]); i++) {
        CU_ASSERT_EQUAL(get_log_ns(KVSSD_LID_ID_NS_KV, bad_nsid[i], 0, 1023, 0, &h), 0x400b);
        CU_ASSERT_EQUAL(h.to_calls, 0);
        CU_ASSERT_EQUAL(page[0], 0xa5);
    }
}

/*
 * The nvm personality's namespace is not KV: log C2h of NSID 1 is 4109h
 * (Invalid Log Page, DNR), as any log the device does not have, and moves
 * nothing.
 */
static void test_id_ns_kv_log_nvm(void)
{
    struct kvftl_config c;
    struct fake_host h;
    char err[256];

    fx_ftl_config(&c);
    c.command_set = KVFTL_CMDSET_NVM;
    struct kvftl *nvm = kvftl_open(&c, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(nvm);
    adm.ftl = nvm;
    adm.ns = NULL;
    CU_ASSERT_EQUAL(get_log_ns(KVSSD_LID_ID_NS_KV, 1, 0, 1023, 0, &h), 0x4109);
    CU_ASSERT_EQUAL(h.to_calls, 0);
    adm.ftl = fx.ftl;
    adm.ns = fx.ns;
    kvftl_close(nvm);
}

/*
 * The controller's part of an I/O command, which queues.c and the sim:
 * transport both run (kvssd_admin_io_check, kvssd_admin_io_done).
 * Check: a Store with FUSE 01b is 4002h (Invalid Field, DNR); a Store to
 * NSID 0, 2 or FFFFFFFFh is 400Bh (Invalid Namespace or Format, DNR); a
 * Flush to FFFFFFFFh, and the full-layout inline transfer whatever its
 * CDW1, run. Done: a 100-byte Store with WCE set keeps its done_ns; with
 * a volatile cache and WCE cleared it is written through (done_ns moves
 * to the flush's end); a Store that fails (Only If Exists, absent key) is
 * not. SMART counts all three: 3 write commands, 300 bytes, their busy
 * time.
 */
static void test_io_check_and_done(void)
{
    static const uint32_t bad_nsid[] = {0, 2, KVSSD_NSID_ALL};
    struct kvssd_sqe s = sqe_store("k", 1, 100, 0);
    uint8_t value[100] = {0};
    uint64_t busy = 0;

    CU_ASSERT_EQUAL(kvssd_admin_io_check(&adm, &s), KVSSD_SC_SUCCESS);
    s.cdw[0] |= 1u << 8;
    CU_ASSERT_EQUAL(kvssd_admin_io_check(&adm, &s), 0x4002);
    s.cdw[0] &= ~(3u << 8);
    for (size_t i = 0; i < sizeof(bad_nsid) / sizeof(bad_nsid[0]); i++) {
        s.cdw[1] = bad_nsid[i];
        CU_ASSERT_EQUAL(kvssd_admin_io_check(&adm, &s), 0x400b);
    }
    struct kvssd_sqe flush = sqe_new(KVSSD_OPC_FLUSH);
    flush.cdw[1] = KVSSD_NSID_ALL;
    CU_ASSERT_EQUAL(kvssd_admin_io_check(&adm, &flush), KVSSD_SC_SUCCESS);
    flush.cdw[1] = 2;
    CU_ASSERT_EQUAL(kvssd_admin_io_check(&adm, &flush), 0x400b);
    struct kvssd_sqe xfer = sqe_new(KVSSD_OPC_INLINE_XFER_FULL);
    xfer.cdw[1] = 0x12345678;
    CU_ASSERT_EQUAL(kvssd_admin_io_check(&adm, &xfer), KVSSD_SC_SUCCESS);

    adm.vwc_present = true;
    for (int i = 0; i < 3; i++) {
        struct kvssd_sqe st = sqe_store("k", 1, sizeof(value), 0);
        struct fake_host h = fake_host_over(value, sizeof(value));

        if (i == 2) {
            st = sqe_store("absent", 6, sizeof(value), KVSSD_STORE_OPT_ONLY_IF_EXISTS);
        }
        adm.feat.wce = i == 0;
        struct kvssd_req r = fx_exec(&st, &h);
        uint64_t executed = r.done_ns;

        CU_ASSERT_EQUAL(r.status, i == 2 ? KVSSD_SC_KEY_DOES_NOT_EXIST : KVSSD_SC_SUCCESS);
        kvssd_admin_io_done(&adm, &r, 0, sizeof(value));
        if (i == 1) {
            CU_ASSERT(r.done_ns > executed);
        } else {
            CU_ASSERT_EQUAL(r.done_ns, executed);
        }
        busy += r.done_ns - r.now_ns;
    }
    CU_ASSERT_EQUAL(adm.write_cmds, 3);
    CU_ASSERT_EQUAL(adm.read_cmds, 0);
    CU_ASSERT_EQUAL(adm.bytes_written, 300);
    CU_ASSERT_EQUAL(adm.bytes_read, 0);
    CU_ASSERT_EQUAL(adm.busy_ns, busy);
}

static const struct tap_test tests[] = {
    TAP_TEST(config_log_bytes),         TAP_TEST(config_log_preset),
    TAP_TEST(config_log_offsets),       TAP_TEST(config_log_index),
    TAP_TEST(io_check_and_done),        TAP_TEST(get_log_mdts),
    TAP_TEST(get_log_mdts_before_lid),  TAP_TEST(get_log_mdts_16mib),
    TAP_TEST(id_ns_kv_log_is_identify), TAP_TEST(id_ns_kv_log_bad_nsid),
    TAP_TEST(id_ns_kv_log_nvm),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE_FIXTURE("admin", admin_setup, fx_teardown,
                                                            tests);

    return tap_main(&suite, 1);
}
