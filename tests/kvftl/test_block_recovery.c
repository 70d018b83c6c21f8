/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Durability and recovery of the nvm personality (kvftl/block/block_recovery.c,
 * docs/kvftl.md "Durability and recovery of the nvm personality"): clean
 * close and mount, crash mounts with and without PLP (power cuts and a
 * killed process), the unmap log, damaged images, kvftl_check() for nvm.
 *
 * The device: 1 channel x 1 die, 10 blocks of 144 pages of 16 KiB (4 slots
 * of 4 KiB per page; a 2.25 MiB stripe), GC watermarks 3 and 2, 4096-byte
 * LBAs. User capacity (10 - 2 - 2) x 2359296 / 100 x 93 = 13,164,801
 * bytes; a translation page maps (16384 - 32) / 4 = 4088 units, so the
 * namespace is (13,164,801 - 16,384) / 4096 = 3210 units in 1 translation
 * page. Unit u's version v (v >= 1) is 4096 bytes of pat(u, v); v = 0 is
 * zeroes (never written, deallocated).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <kvftl/block.h>

#include "block_recovery.h"
#include "helpers.h"
#include "kvftl_image.h"
#include "page_map.h"

#define UNITS 3210u

static char image[64];

static void image_new(void)
{
    image_path_new(image, sizeof(image), "brec");
}

static struct kvftl_config nvm_config(bool plp, bool with_image)
{
    struct kvftl_config c;
    kvftl_config_small(&c, (struct kvftl_small_geometry){.channels = 1,
                                                         .dies_per_channel = 1,
                                                         .blocks_per_die = 10,
                                                         .pages_per_block = 144,
                                                         .page_size_bytes = 16384});
    c.buffer_entries = 8;
    c.dlt_entries = 0;
    c.index_dram_bytes = 1 << 20;
    c.gc_high_watermark_blocks = 3;
    c.gc_low_watermark_blocks = 2;
    c.command_set = KVFTL_CMDSET_NVM;
    c.lba_bytes = 4096;
    c.plp = plp;
    c.image_path = with_image ? image : NULL;
    return c;
}

static uint8_t pat(uint64_t u, unsigned v)
{
    return v ? (uint8_t)(1 + (u * 13 + v * 101) % 255) : 0;
}

/* Write unit @u as version @v. Returns the status. */
static unsigned wr(struct kvftl *f, uint64_t u, unsigned v)
{
    uint8_t buf[4096];
    memset(buf, pat(u, v), sizeof(buf));
    struct kvftl_cpl cpl;
    kvftl_block_write(f, u, 1, buf, false, 0, &cpl);
    return cpl.status;
}

static void wr_range(struct kvftl *f, uint64_t from, uint64_t to, unsigned v)
{
    for (uint64_t u = from; u < to; u++) {
        CU_ASSERT_EQUAL_FATAL(wr(f, u, v), KVFTL_OK);
    }
}

static unsigned dealloc(struct kvftl *f, uint64_t from, uint32_t n)
{
    struct kvftl_cpl cpl;
    kvftl_block_deallocate(f, from, n, 0, &cpl);
    return cpl.status;
}

static unsigned zeroes(struct kvftl *f, uint64_t from, uint32_t n)
{
    struct kvftl_cpl cpl;
    kvftl_block_write_zeroes(f, from, n, 0, &cpl);
    return cpl.status;
}

/* Units in [@from, @to) that do not read back as version @v in every byte. */
static unsigned bad_units(struct kvftl *f, uint64_t from, uint64_t to, unsigned v)
{
    unsigned bad = 0;
    uint8_t buf[4096];
    for (uint64_t u = from; u < to; u++) {
        struct kvftl_cpl cpl;
        memset(buf, 0xa5, sizeof(buf));
        kvftl_block_read(f, u, 1, buf, 0, &cpl);
        bool ok = cpl.status == KVFTL_OK;
        for (size_t i = 0; ok && i < sizeof(buf); i++) {
            ok = buf[i] == pat(u, v);
        }
        bad += !ok;
    }
    return bad;
}

static void assert_check_ok(struct kvftl *f)
{
    char err[512] = "";
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), 0);
    if (err[0]) {
        fprintf(stderr, "kvftl_check: %s\n", err);
    }
}

static void cycle(struct kvftl *f)
{
    char err[256] = "";
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(err, "");
}

/* The mount note of a crash mount without damage, as block_recovery_note() words it. */
static void assert_crash_note(struct kvftl *f, unsigned mapped, unsigned replayed,
                              unsigned unmapped)
{
    char want[512];
    snprintf(want, sizeof(want),
             "image_path %s was not closed cleanly; the map was rebuilt from 1 translation page "
             "and the unit spare areas: %u units mapped, %u written after their translation "
             "page, %u unmapped by the unmap log.",
             image, mapped, replayed, unmapped);
    const char *note = kvftl_mount_note(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(note);
    CU_ASSERT_STRING_EQUAL(note, want);
}

/*
 * An orderly close programs the buffer and the map and writes the
 * checkpoint: the reopened image mounts from it (no scan, no note, no NAND
 * read) with every unit as it was -- overwritten, deallocated, zeroed or
 * never written -- and the device goes on writing.
 */
static void test_clean_close_reopen_keeps_every_unit(void)
{
    image_new();
    struct kvftl_config c = nvm_config(true, true);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 300, 1);
    wr_range(f, 0, 100, 2);
    CU_ASSERT_EQUAL(dealloc(f, 200, 50), KVFTL_OK);
    CU_ASSERT_EQUAL(zeroes(f, 250, 10), KVFTL_OK);
    wr_range(f, 3000, 3003, 1); /* the last page stays partial in the buffer until close */
    kvftl_close(f);

    f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_PTR_NULL(kvftl_mount_note(f));
    CU_ASSERT_EQUAL(stats(f).nand_pages_read, 0);
    CU_ASSERT_EQUAL(f->pmap.mapped, 243);
    CU_ASSERT_EQUAL(bad_units(f, 0, 100, 2), 0);
    CU_ASSERT_EQUAL(bad_units(f, 100, 200, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 200, 260, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 260, 300, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 300, 3000, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 3000, 3003, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 3003, UNITS, 0), 0);
    assert_check_ok(f);
    wr_range(f, 100, 110, 3);
    CU_ASSERT_EQUAL(bad_units(f, 100, 110, 3), 0);
    assert_check_ok(f);
    kvftl_close(f);

    f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_EQUAL(bad_units(f, 100, 110, 3), 0);
    CU_ASSERT_EQUAL(bad_units(f, 0, 100, 2), 0);
    kvftl_close(f);
    unlink(image);
}

/*
 * PLP on, memory only: a power cut mid-stream keeps every completed write
 * (the buffered partial page is programmed by the capacitors) and every
 * completed unmap (the unmap log), over a map last programmed by a Flush.
 */
static void test_power_cycle_plp_keeps_completed(void)
{
    struct kvftl_config c = nvm_config(true, false);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 10, 1);
    flush(f);
    wr_range(f, 0, 5, 2); /* one page programmed, one slot buffered */
    CU_ASSERT_EQUAL(dealloc(f, 7, 2), KVFTL_OK);
    CU_ASSERT_EQUAL(wr(f, 9, 3), KVFTL_OK);
    cycle(f);
    CU_ASSERT_TRUE(ftl_powered(f));
    CU_ASSERT_EQUAL(f->mount.units_replayed, 6);
    CU_ASSERT_EQUAL(f->mount.units_unmapped, 2);
    CU_ASSERT_EQUAL(bad_units(f, 0, 5, 2), 0);
    CU_ASSERT_EQUAL(bad_units(f, 5, 7, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 7, 9, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 9, 10, 3), 0);
    CU_ASSERT_EQUAL(bad_units(f, 10, 20, 0), 0);
    assert_check_ok(f);
    /* the rebuilt map was programmed: a second cut right away changes nothing */
    cycle(f);
    CU_ASSERT_EQUAL(f->mount.units_replayed, 0);
    CU_ASSERT_EQUAL(bad_units(f, 0, 5, 2), 0);
    CU_ASSERT_EQUAL(bad_units(f, 7, 9, 0), 0);
    assert_check_ok(f);
    kvftl_close(f);
}

/*
 * PLP off: the write whose page program is torn is lost with the units
 * buffered beside it (their older, flushed copies win; no unit is a mix),
 * a page programmed after the Flush survives.
 */
static void test_power_cut_no_plp_torn_page(void)
{
    struct kvftl_config c = nvm_config(false, false);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 8, 1);
    flush(f);
    kvftl_power_cut_after(f, 1);
    wr_range(f, 4, 8, 3); /* the one program allowed */
    wr_range(f, 0, 3, 2); /* buffered */
    CU_ASSERT_EQUAL(wr(f, 3, 2), KVFTL_INTERNAL_ERROR); /* its page's program is torn */
    CU_ASSERT_FALSE(ftl_powered(f));
    cycle(f);
    CU_ASSERT_EQUAL(bad_units(f, 0, 4, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 4, 8, 3), 0);
    CU_ASSERT_EQUAL(bad_units(f, 8, 16, 0), 0);
    assert_check_ok(f);
    kvftl_close(f);
}

/*
 * The unmap's durability. PLP on: durable when Deallocate or Write Zeroes
 * completes. PLP off: durable after Flush; cut before it, the old data is
 * back (the unmap was volatile, as the drive's volatile write cache says).
 */
static void test_unmap_durability(void)
{
    struct kvftl_config c = nvm_config(false, false);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 16, 1);
    flush(f);
    CU_ASSERT_EQUAL(dealloc(f, 0, 4), KVFTL_OK);
    CU_ASSERT_EQUAL(zeroes(f, 4, 4), KVFTL_OK);
    cycle(f);
    CU_ASSERT_EQUAL(bad_units(f, 0, 16, 1), 0);
    CU_ASSERT_EQUAL(dealloc(f, 0, 4), KVFTL_OK);
    CU_ASSERT_EQUAL(zeroes(f, 4, 4), KVFTL_OK);
    flush(f);
    cycle(f);
    CU_ASSERT_EQUAL(bad_units(f, 0, 8, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 8, 16, 1), 0);
    assert_check_ok(f);
    kvftl_close(f);

    c = nvm_config(true, false);
    f = open_or_die(&c);
    wr_range(f, 0, 16, 1);
    flush(f);
    CU_ASSERT_EQUAL(dealloc(f, 0, 4), KVFTL_OK);
    CU_ASSERT_EQUAL(zeroes(f, 4, 4), KVFTL_OK);
    CU_ASSERT_EQUAL(f->nand.unmap_log->used, 2);
    cycle(f);
    CU_ASSERT_EQUAL(f->mount.units_unmapped, 8);
    CU_ASSERT_EQUAL(f->nand.unmap_log->used, 0); /* the rebuilt map holds them now */
    CU_ASSERT_EQUAL(bad_units(f, 0, 8, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 8, 16, 1), 0);
    /* a unit written again after its unmap is newer than the log entry */
    CU_ASSERT_EQUAL(dealloc(f, 8, 2), KVFTL_OK);
    CU_ASSERT_EQUAL(wr(f, 9, 4), KVFTL_OK);
    cycle(f);
    CU_ASSERT_EQUAL(bad_units(f, 8, 9, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 9, 10, 4), 0);
    assert_check_ok(f);
    kvftl_close(f);
}

/*
 * Without PLP, a Deallocate not yet flushed, then GC erasing the stripe of
 * the copies it made dead (tests/fuzz/block-regressions/
 * plp_off_deallocate_gc_resurrects_older_copy): the crash mount must not
 * replay the older copy those had superseded (a state from before the last
 * Flush). GC programs the map before the erase (block_recovery_before_erase()),
 * so the Deallocate became durable: the units read zeroes.
 */
static void test_no_plp_gc_erase_keeps_deallocate(void)
{
    struct kvftl_config c = nvm_config(false, false);
    struct kvftl *f = open_or_die(&c);
    uint64_t n = kvftl_block_lbas(f);
    CU_ASSERT_FATAL(n >= 2400);
    wr_range(f, 0, n, 1);
    flush(f);
    wr_range(f, 1000, 1256, 2); /* the older copy */
    flush(f);
    wr_range(f, 1100, 2300, 3); /* its successor: 1200 slots fill one stripe (576) whole */
    flush(f);
    CU_ASSERT_EQUAL(dealloc(f, 1100, 1200), KVFTL_OK); /* not flushed */
    struct kvftl_stats before, after;
    kvftl_stats_get(f, &before);
    for (unsigned round = 0; round < 3; round++) {
        wr_range(f, 0, 1000, 4 + round);
    }
    kvftl_stats_get(f, &after);
    CU_ASSERT_FATAL(after.nand_blocks_erased > before.nand_blocks_erased);
    cycle(f);
    /* units 0-999 (written after the last Flush) may hold any of versions 1, 4-6 */
    CU_ASSERT_EQUAL(bad_units(f, 1000, 1100, 2), 0);
    CU_ASSERT_EQUAL(bad_units(f, 1100, 2300, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 2300, n, 1), 0);
    assert_check_ok(f);
    kvftl_close(f);
}

/* A full unmap log programs the map and starts empty; every unmap stays durable. */
static void test_unmap_log_full_programs_map(void)
{
    struct kvftl_config c = nvm_config(true, false);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 8, 1);
    uint64_t written = f->pmap.tpages_written;
    for (unsigned i = 0; i < NAND_UNMAP_LOG_ENTRIES; i++) {
        CU_ASSERT_EQUAL_FATAL(dealloc(f, i % 4, 1), KVFTL_OK);
    }
    CU_ASSERT_EQUAL(f->nand.unmap_log->used, NAND_UNMAP_LOG_ENTRIES);
    CU_ASSERT_EQUAL(f->pmap.tpages_written, written);
    CU_ASSERT_EQUAL(dealloc(f, 4, 1), KVFTL_OK);
    CU_ASSERT_EQUAL(f->nand.unmap_log->used, 1);
    CU_ASSERT_EQUAL(f->pmap.tpages_written, written + 1);
    cycle(f);
    CU_ASSERT_EQUAL(bad_units(f, 0, 5, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 5, 8, 1), 0);
    assert_check_ok(f);
    kvftl_close(f);
}

/*
 * A map larger than its DRAM budget (4 translation pages, 2 frames; 4 KiB
 * pages): evictions programmed translation pages while the units were
 * written. A clean reopen loads no translation page until a lookup misses
 * (the first read of each of the 4 costs one NAND read); a crash mount
 * after more writes (power lost, no checkpoint) gets every unit back.
 */
static void test_dftl_map_clean_and_crash(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.command_set = KVFTL_CMDSET_NVM;
    c.index_dram_bytes = 8192;
    c.bloom = false;
    c.image_path = image;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL_FATAL(f->pmap.tpages, 4);
    for (uint64_t u = 0; u < UNITS; u += 7) {
        CU_ASSERT_EQUAL_FATAL(wr(f, u, 1), KVFTL_OK);
    }
    kvftl_close(f);

    f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_EQUAL(stats(f).nand_pages_read, 0);
    unsigned bad = 0;
    for (uint64_t u = 0; u < UNITS; u++) {
        bad += bad_units(f, u, u + 1, u % 7 ? 0 : 1);
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(f->pmap.misses, 4);
    for (uint64_t u = 3; u < UNITS; u += 7) {
        CU_ASSERT_EQUAL_FATAL(wr(f, u, 2), KVFTL_OK);
    }
    CU_ASSERT_EQUAL(dealloc(f, 0, 70), KVFTL_OK);
    f->nand.power_lost = true;
    kvftl_close(f);

    f = open_or_die(&c);
    CU_ASSERT_TRUE(f->mount.scanned);
    bad = 0;
    for (uint64_t u = 0; u < UNITS; u++) {
        unsigned v = u < 70 ? 0 : u % 7 == 0 ? 1 : u % 7 == 3 ? 2 : 0;
        bad += bad_units(f, u, u + 1, v);
    }
    CU_ASSERT_EQUAL(bad, 0);
    assert_check_ok(f);
    kvftl_close(f);
    unlink(image);
}

/* ---- a killed process (kill -9 of QEMU): the image is all that is left ---- */

/*
 * The child opens the image, writes 0..39 (version 1), Flushes, then
 * overwrites 0..9 (version 2: two pages programmed, 8 and 9 buffered),
 * deallocates 20..24, zeroes 25..26 and writes 27 (version 3, buffered
 * beside 8 and 9); it reports through @fd and dies by SIGKILL.
 */
static void child_run(const struct kvftl_config *c, int fd)
{
    struct kvftl *f = open_or_die(c);
    int ok = 1;
    for (uint64_t u = 0; u < 40; u++) {
        ok &= wr(f, u, 1) == KVFTL_OK;
    }
    struct kvftl_cpl cpl;
    kvftl_flush(f, 0, &cpl);
    ok &= cpl.status == KVFTL_OK;
    for (uint64_t u = 0; u < 10; u++) {
        ok &= wr(f, u, 2) == KVFTL_OK;
    }
    ok &= dealloc(f, 20, 5) == KVFTL_OK;
    ok &= zeroes(f, 25, 2) == KVFTL_OK;
    ok &= wr(f, 27, 3) == KVFTL_OK;
    if (write(fd, &ok, sizeof(ok)) != sizeof(ok)) {
        _exit(3);
    }
    raise(SIGKILL);
    _exit(2);
}

static void kill_child(const struct kvftl_config *c)
{
    int p[2];
    CU_ASSERT_FATAL(pipe(p) == 0);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child_run(c, p[1]);
    }
    close(p[1]);
    int ok = 0, status = 0;
    CU_ASSERT_EQUAL(read(p[0], &ok, sizeof(ok)), (ssize_t)sizeof(ok));
    close(p[0]);
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CU_ASSERT_EQUAL(ok, 1);
}

/*
 * PLP on: every write and unmap the child completed is there (its buffered
 * page was marked BUFD in the image; the unmaps are in the unmap log).
 * 40 written, 7 unmapped: 33 mapped; 0..9 and 27 written after the
 * Flush's translation page (11 replayed); 20..26 unmapped by the log.
 */
static void test_sigkill_plp_keeps_completed(void)
{
    image_new();
    struct kvftl_config c = nvm_config(true, true);
    kill_child(&c);
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_TRUE(f->mount.scanned);
    assert_crash_note(f, 33, 11, 7);
    CU_ASSERT_EQUAL(bad_units(f, 0, 10, 2), 0);
    CU_ASSERT_EQUAL(bad_units(f, 10, 20, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 20, 27, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 27, 28, 3), 0);
    CU_ASSERT_EQUAL(bad_units(f, 28, 40, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 40, 60, 0), 0);
    assert_check_ok(f);
    kvftl_close(f);
    f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_EQUAL(bad_units(f, 0, 10, 2), 0);
    CU_ASSERT_EQUAL(bad_units(f, 20, 27, 0), 0);
    kvftl_close(f);
    unlink(image);
}

/*
 * PLP off: what the Flush made durable is there; after it, the two full
 * pages the child programmed (units 0..7, version 2) survive, the
 * buffered last page (8, 9, 27) is lost, and so are the unmaps: 8, 9, 27
 * and 20..26 hold their flushed copies.
 */
static void test_sigkill_no_plp_keeps_flushed(void)
{
    image_new();
    struct kvftl_config c = nvm_config(false, true);
    kill_child(&c);
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_TRUE(f->mount.scanned);
    assert_crash_note(f, 40, 8, 0);
    CU_ASSERT_EQUAL(bad_units(f, 0, 8, 2), 0);
    CU_ASSERT_EQUAL(bad_units(f, 8, 40, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 40, 60, 0), 0);
    assert_check_ok(f);
    kvftl_close(f);
    unlink(image);
}

/* ---- the image is hostile input ---- */

/* An image of one personality is refused under the other, and under another lba_bytes. */
static void test_image_personality_refused(void)
{
    image_new();
    struct kvftl_config kv = nvm_config(true, true);
    kv.command_set = KVFTL_CMDSET_KV;
    kvftl_close(open_or_die(&kv));
    struct kvftl_config nvm = nvm_config(true, true);
    char err[512], want[512];
    CU_ASSERT_PTR_NULL(kvftl_open(&nvm, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s holds a key-value device (command_set kv); the configuration asks "
             "for command_set nvm, and an image keeps the personality it was made with",
             image);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(image);

    image_new();
    kvftl_close(open_or_die(&nvm));
    CU_ASSERT_PTR_NULL(kvftl_open(&kv, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s holds a block (NVM command set) device (command_set nvm); the "
             "configuration asks for command_set kv, and an image keeps the personality it was "
             "made with",
             image);
    CU_ASSERT_STRING_EQUAL(err, want);
    nvm.lba_bytes = 512;
    CU_ASSERT_PTR_NULL(kvftl_open(&nvm, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s was made with lba_bytes 4096; the configuration says 512", image);
    CU_ASSERT_STRING_EQUAL(err, want);
    /* 20 % over-provisioning: 6 x 2359296 / 100 x 80 = 11,324,560 bytes, 2760 units */
    nvm.lba_bytes = 4096;
    nvm.overprovision_percent = 20;
    CU_ASSERT_PTR_NULL(kvftl_open(&nvm, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s holds a namespace of 3210 units of 4 KiB; the configuration makes "
             "2760 (the geometry, overprovision_percent and gc_low_watermark_blocks decide it: "
             "open it with the values it was made with)",
             image);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(image);
}

/*
 * A slot whose unit spare area names a unit beyond the namespace is
 * skipped and named; the map entry that pointed at it falls back to the
 * slots (none other holds unit 5, so it reads zeroes), and the note says
 * both. Made by damaging the spare of unit 5's slot after a Flush and
 * losing the power, so that the image was not closed.
 */
static void test_damaged_unit_spare_skipped(void)
{
    image_new();
    struct kvftl_config c = nvm_config(true, true);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 8, 1);
    flush(f);
    uint32_t slot = f->pmap.map[5];
    struct nand_unit_spare *us = nand_unit_spares(&f->nand,
                                                  ((uint64_t)slot << PAGE_MAP_UNIT_SHIFT) >> 14) +
                                 slot % 4;
    CU_ASSERT_EQUAL_FATAL(us->unit, 5);
    us->unit = 5000;
    f->nand.power_lost = true;
    kvftl_close(f); /* no checkpoint without power */

    f = open_or_die(&c);
    char want[1024];
    snprintf(want, sizeof(want),
             "image_path %s was not closed cleanly; the map was rebuilt from 1 translation page "
             "and the unit spare areas: 7 units mapped, 0 written after their translation page, "
             "0 unmapped by the unmap log; 1 slot whose spare area names a unit beyond the "
             "namespace (3210 units) was skipped (the first: slot %u, unit 5000); 1 map entry "
             "named a slot that does not hold its unit, and an older copy or the slots decided "
             "(the first: unit 5, slot %u).",
             image, slot, slot);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kvftl_mount_note(f));
    CU_ASSERT_STRING_EQUAL(kvftl_mount_note(f), want);
    CU_ASSERT_EQUAL(bad_units(f, 0, 5, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 5, 6, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 6, 8, 1), 0);
    assert_check_ok(f);
    kvftl_close(f);
    unlink(image);
}

/*
 * A slot whose spare area holds a write sequence number from the future
 * (2^50, above the 2^48 a mount believes) is skipped, and so is an index
 * page whose tag names no translation page (this device has one, 0); both
 * are named in the note. Unit 6, whose slot it was, has no other copy and
 * reads zeroes; the write sequence number does not jump to 2^50.
 */
static void test_future_seq_and_bad_tag_skipped(void)
{
    image_new();
    struct kvftl_config c = nvm_config(true, true);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 8, 1);
    flush(f);
    uint32_t slot = f->pmap.map[6];
    struct nand_unit_spare *us = nand_unit_spares(&f->nand,
                                                  ((uint64_t)slot << PAGE_MAP_UNIT_SHIFT) >> 14) +
                                 slot % 4;
    us->seq = 1ull << 50;
    uint8_t page[16384] = {0};
    uint64_t now = 0;
    uint64_t ppn = stream_program_index(&f->space, 7, page, &now);
    CU_ASSERT_FATAL(ppn != UINT64_MAX);
    f->nand.power_lost = true;
    kvftl_close(f);

    f = open_or_die(&c);
    char want[1024];
    snprintf(want, sizeof(want),
             "image_path %s was not closed cleanly; the map was rebuilt from 1 translation page "
             "and the unit spare areas: 7 units mapped, 0 written after their translation page, "
             "0 unmapped by the unmap log; 1 slot whose spare area holds a write sequence number "
             "from the future (above 281474976710656) was skipped (the first: slot %u, sequence "
             "1125899906842624); 1 translation page copy failed its check and was skipped (the "
             "first: NAND page %llu, its tag names no translation page); 1 map entry named a "
             "slot that does not hold its unit, and an older copy or the slots decided (the "
             "first: unit 6, slot %u).",
             image, slot, (unsigned long long)ppn, slot);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kvftl_mount_note(f));
    CU_ASSERT_STRING_EQUAL(kvftl_mount_note(f), want);
    CU_ASSERT_EQUAL(bad_units(f, 0, 6, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 6, 7, 0), 0);
    CU_ASSERT_EQUAL(bad_units(f, 7, 8, 1), 0);
    CU_ASSERT_TRUE(f->pmap.write_seq < 100);
    assert_check_ok(f);
    kvftl_close(f);
    unlink(image);
}

/*
 * A cleanly closed image whose translation page was damaged in place: the
 * checkpoint is not used (the note says why), the damaged copy is skipped
 * and named, and every unit comes back from the unit spare areas.
 */
static void test_damaged_tpage_rescanned(void)
{
    image_new();
    struct kvftl_config c = nvm_config(true, true);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 8, 1);
    wr_range(f, 0, 2, 2);
    kvftl_close(f);

    f = open_or_die(&c);
    uint32_t ppn = f->pmap.tpage_ppn[0];
    CU_ASSERT_FATAL(ppn != PAGE_MAP_NO_PAGE);
    kvftl_close(f);
    FILE *fp = fopen(image, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    /* one byte of its first entry, inside the image's NAND area */
    uint64_t off = NAND_IMAGE_HEADER_BYTES + (uint64_t)ppn * 16384 + sizeof(struct tpage_header);
    CU_ASSERT_EQUAL(fseek(fp, (long)off, SEEK_SET), 0);
    int b = fgetc(fp);
    CU_ASSERT_EQUAL(fseek(fp, (long)off, SEEK_SET), 0);
    fputc(b ^ 0x40, fp);
    fclose(fp);

    f = open_or_die(&c);
    CU_ASSERT_TRUE(f->mount.scanned);
    char want[1024];
    snprintf(want, sizeof(want),
             "image_path %s: translation page 0 (NAND page %u): its entries fail their checksum; "
             "the map was rebuilt from 0 translation pages and the unit spare areas: 8 units "
             "mapped, 8 written after their translation page, 0 unmapped by the unmap log; 1 "
             "translation page copy failed its check and was skipped (the first: NAND page %u, "
             "its entries fail their checksum).",
             image, ppn, ppn);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kvftl_mount_note(f));
    CU_ASSERT_STRING_EQUAL(kvftl_mount_note(f), want);
    CU_ASSERT_EQUAL(bad_units(f, 0, 2, 2), 0);
    CU_ASSERT_EQUAL(bad_units(f, 2, 8, 1), 0);
    CU_ASSERT_EQUAL(bad_units(f, 8, 16, 0), 0);
    assert_check_ok(f);
    kvftl_close(f);
    unlink(image);
}

/*
 * A cleanly closed image whose checkpoint names translation page 0 at a
 * NAND page that does not hold it (the page after it), then past the last
 * page, the checkpoint's checksum made to match: the mount names the page
 * and where the checkpoint put it, and rebuilds the map from the spare
 * areas with every unit back.
 */
static void test_checkpoint_tpage_address(void)
{
    for (int k = 0; k < 2; k++) { /* 0: an erased page; 1: past the last */
        image_new();
        struct kvftl_config c = nvm_config(true, true);
        struct kvftl *f = open_or_die(&c);
        wr_range(f, 0, 8, 1);
        kvftl_close(f); /* programs the translation page */
        f = open_or_die(&c);
        uint32_t ppn = f->pmap.tpage_ppn[0];
        uint32_t total = (uint32_t)f->nand.geo.total_pages;
        uint64_t ckpt_off = nand_checkpoint_offset(&f->nand); /* past the nvm unit spares */
        kvftl_close(f);
        CU_ASSERT_FATAL(ppn != PAGE_MAP_NO_PAGE);

        struct kvftl_image im;
        CU_ASSERT_FATAL(kvftl_image_open(&im, image));
        size_t len = (size_t)im.h.checkpoint_bytes;
        uint8_t *b = g_malloc(len);
        CU_ASSERT_FATAL(kvftl_image_read(&im, ckpt_off, b, len));
        struct block_checkpoint_head ch;
        memcpy(&ch, b, sizeof(ch));
        uint64_t at = sizeof(ch) + (uint64_t)ch.stripes * sizeof(struct stripe_info);
        CU_ASSERT_FATAL(at + 4 <= len);
        uint32_t named = k == 0 ? ppn + 1 : total;
        memcpy(b + at, &named, 4);
        im.h.checkpoint_checksum = XXH3_64bits(b, len);
        CU_ASSERT_FATAL(kvftl_image_write(&im, ckpt_off, b, len));
        CU_ASSERT_FATAL(kvftl_image_write(&im, 0, &im.h, sizeof(im.h)));
        g_free(b);
        kvftl_image_close(&im);

        f = open_or_die(&c);
        CU_ASSERT_TRUE(f->mount.scanned);
        char where[128], want[512];
        if (k == 0) {
            /* the page after it: erased, outside the programmed index stream */
            snprintf(where, sizeof(where), "which does not hold it (spare area kind 0, tag 0)");
        } else {
            snprintf(where, sizeof(where), "past the last page (%u)", total - 1);
        }
        snprintf(want, sizeof(want),
                 "image_path %s: translation page 0 is at NAND page %u, %s; the map was rebuilt "
                 "from 1 translation page and the unit spare areas: 8 units mapped, 0 written "
                 "after their translation page, 0 unmapped by the unmap log.",
                 image, named, where);
        CU_ASSERT_PTR_NOT_NULL_FATAL(kvftl_mount_note(f));
        CU_ASSERT_STRING_EQUAL(kvftl_mount_note(f), want);
        CU_ASSERT_EQUAL(bad_units(f, 0, 8, 1), 0);
        CU_ASSERT_EQUAL(bad_units(f, 8, 16, 0), 0);
        assert_check_ok(f);
        kvftl_close(f);
        unlink(image);
    }
}

/* Write @len bytes of @img to @path, leaving its 4 KiB blocks of zeroes as holes (fast). */
static void write_sparse(const char *path, const gchar *img, gsize len)
{
    static const char zero[4096];
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(ftruncate(fd, (off_t)len) == 0);
    for (gsize off = 0; off < len; off += 4096) {
        gsize n = len - off < 4096 ? len - off : 4096;
        if (memcmp(img + off, zero, n) != 0) {
            CU_ASSERT_FATAL(pwrite(fd, img + off, n, (off_t)off) == (ssize_t)n);
        }
    }
    close(fd);
}

/*
 * Random damage: a cleanly closed image (units written, overwritten,
 * deallocated; a map programmed several times) gets a few bytes flipped in
 * its metadata -- page spare areas, unit spare areas, translation pages,
 * the unmap log, the checkpoint, the header's clean flag -- 200 times over
 * (each from a fresh copy). Every open either refuses with a sentence or
 * mounts a device whose every unit reads OK or UNRECOVERED_ERROR and whose
 * kvftl_check() passes or names the damage (a spare area damaged into
 * another plausible {unit, seq}: fewer than 1 mount in 10); under ASan
 * nothing is read out of bounds.
 */
static void test_random_damage_mounts_or_refuses(void)
{
    image_new();
    if (g_file_test("/dev/shm", G_FILE_TEST_IS_DIR)) {
        /* tmpfs: the 200 mounts' header msync()s cost no disk flush */
        snprintf(image, sizeof(image), "/dev/shm/kvftl-brec-%d", (int)getpid());
        unlink(image);
    }
    struct kvftl_config c = nvm_config(true, true);
    struct kvftl *f = open_or_die(&c);
    for (unsigned v = 1; v <= 3; v++) {
        wr_range(f, 0, 150, v);
        CU_ASSERT_EQUAL(dealloc(f, 25 * v, 10), KVFTL_OK);
        flush(f);
    }
    CU_ASSERT_EQUAL(dealloc(f, 120, 20), KVFTL_OK);
    kvftl_close(f);
    gchar *orig = NULL;
    gsize len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(image, &orig, &len, NULL));
    uint64_t nand_bytes = 10ull * 144 * 16384, pages = 10ull * 144;
    uint64_t oob = NAND_IMAGE_HEADER_BYTES + nand_bytes;
    uint64_t spares = oob + ((pages * sizeof(struct nand_oob) + 4095) & ~4095ull);
    uint64_t log = spares + ((pages * 4 * sizeof(struct nand_unit_spare) + 4095) & ~4095ull);
    uint64_t ckpt = log + ((sizeof(struct nand_unmap_log) + 4095) & ~4095ull);
    CU_ASSERT_FATAL(ckpt < len);
    uint64_t x = 0x2545f4914f6cdd1dull;
    unsigned refused = 0, mounted = 0, failed = 0, checks_failed = 0;
    uint8_t buf[4096];
    for (int it = 0; it < 200; it++) {
        gchar *img = g_memdup2(orig, len);
        for (int k = 0; k < 4; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t off;
            switch (x % 5) {
            case 0: /* page spare areas of the first two stripes */
                off = oob + (x >> 8) % (2 * 144 * sizeof(struct nand_oob));
                break;
            case 1: /* unit spare areas of the first two stripes */
                off = spares + (x >> 8) % (2 * 144 * 4 * sizeof(struct nand_unit_spare));
                break;
            case 2: /* the first bytes of every NAND page (translation page headers, entries) */
                off = NAND_IMAGE_HEADER_BYTES + (x >> 8) % pages * 16384 + (x >> 40) % 64;
                break;
            case 3: /* the unmap log's head and first entries */
                off = log + (x >> 8) % 256;
                break;
            default: /* the checkpoint, or the clean flag */
                off = (x >> 32) % 4 ? ckpt + (x >> 8) % (len - ckpt) : 12;
                break;
            }
            img[off] ^= (char)(1u << ((x >> 56) % 8));
        }
        write_sparse(image, img, len);
        g_free(img);
        char err[512] = "";
        f = kvftl_open(&c, err, sizeof(err));
        if (!f) {
            refused++;
            failed += err[0] == 0;
            continue;
        }
        mounted++;
        /*
         * A spare area damaged into another plausible {unit, seq} cannot be
         * told from a real slot by the mount (no checksum covers it); the
         * check names it, with a sentence.
         */
        char cerr[512] = "";
        if (kvftl_check(f, cerr, sizeof(cerr)) != 0) {
            checks_failed++;
            failed += cerr[0] == 0;
        }
        for (uint64_t u = 0; u < 200; u++) {
            struct kvftl_cpl cpl;
            kvftl_block_read(f, u, 1, buf, 0, &cpl);
            failed += cpl.status != KVFTL_OK && cpl.status != KVFTL_UNRECOVERED_ERROR;
        }
        f->nand.power_lost = true; /* no checkpoint over the damaged copy */
        kvftl_close(f);
    }
    CU_ASSERT_EQUAL(failed, 0);
    CU_ASSERT_EQUAL(refused + mounted, 200);
    CU_ASSERT_TRUE(mounted > 0);
    CU_ASSERT_TRUE(checks_failed < mounted / 10);
    printf("# %u mounted (%u failing the check), %u refused\n", mounted, checks_failed, refused);
    g_free(orig);
    unlink(image);
}

/* ---- kvftl_check() for nvm ---- */

/*
 * The check finds a stripe whose valid bytes disagree with the map, and a
 * mapped unit whose slot holds another unit; the stepwise walk with a
 * budget of 64 bytes per step agrees with the whole check.
 */
static void test_check_finds_damage(void)
{
    struct kvftl_config c = nvm_config(true, false);
    struct kvftl *f = open_or_die(&c);
    wr_range(f, 0, 40, 1);
    wr_range(f, 0, 10, 2);
    flush(f);
    assert_check_ok(f);

    struct kvftl_check_walk *w = kvftl_check_begin(f);
    char err[512] = "";
    int rc, steps = 0;
    while ((rc = kvftl_check_step(f, w, 64, err, sizeof(err))) == 1) {
        steps++;
    }
    CU_ASSERT_EQUAL(rc, 0);
    uint64_t pages, units, bytes;
    kvftl_check_progress(w, &pages, &units, &bytes);
    CU_ASSERT_EQUAL(pages, 1);
    CU_ASSERT_EQUAL(units, 40);
    CU_ASSERT_EQUAL(bytes, 40 * 16 + 16384);
    /* 64 bytes a step: one page of slots (16 + 64 bytes), 4 other pages, or 1 unit */
    CU_ASSERT_TRUE(steps > 40);
    kvftl_check_end(w);

    uint32_t s = f->pmap.map[0] * 4096ull / f->nand.geo.stripe_bytes;
    uint64_t v = f->space.stripes[s].valid_bytes;
    f->space.stripes[s].valid_bytes += 4096;
    char want[512];
    snprintf(want, sizeof(want), "stripe %u accounts %llu valid bytes; the map references %llu", s,
             (unsigned long long)v + 4096, (unsigned long long)v);
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, want);
    f->space.stripes[s].valid_bytes = v;

    uint32_t a = f->pmap.map[20], b2 = f->pmap.map[21];
    f->pmap.map[20] = b2;
    f->pmap.map[21] = a;
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unit 20 maps to slot"));
    f->pmap.map[20] = a;
    f->pmap.map[21] = b2;
    assert_check_ok(f);
    kvftl_close(f);
}

/* ---- random crashes against a model of what may survive ---- */

/* Unit @u's version @v: its number and version, then a pattern of both (0: zeroes). */
static void stamp(uint8_t *b, uint64_t u, uint32_t v)
{
    if (!v) {
        memset(b, 0, 4096);
        return;
    }
    for (uint32_t i = 0; i < 4096 / 8; i++) {
        uint64_t w = (u << 32 | v) * 0x9e3779b97f4a7c15ull + i;
        memcpy(b + 8 * i, &w, 8);
    }
}

/* The version unit @u holds (0 zeroes), or UINT32_MAX when it is no whole version (torn). */
static uint32_t version_of(const uint8_t *b, uint64_t u, uint32_t max_v)
{
    uint8_t want[4096];
    uint64_t w0;
    memcpy(&w0, b, 8);
    stamp(want, u, 0);
    if (!memcmp(b, want, 4096)) {
        return 0;
    }
    for (uint32_t v = 1; v <= max_v; v++) {
        if ((u << 32 | v) * 0x9e3779b97f4a7c15ull == w0) {
            stamp(want, u, v);
            return memcmp(b, want, 4096) ? UINT32_MAX : v;
        }
    }
    return UINT32_MAX;
}

#define MAX_OK 64 /* versions a unit may hold after a cut without PLP */

struct unit_model {
    uint32_t next;        /* versions given so far */
    uint32_t n;           /* acceptable versions after a cut */
    uint32_t ok[MAX_OK];
};

static void model_add(struct unit_model *m, uint32_t v)
{
    if (m->n < MAX_OK) {
        m->ok[m->n++] = v;
    } else {
        m->ok[MAX_OK - 1] = v; /* never reached: flushes keep the sets short */
    }
}

static bool model_has(const struct unit_model *m, uint32_t v)
{
    for (uint32_t i = 0; i < m->n; i++) {
        if (m->ok[i] == v) {
            return true;
        }
    }
    return false;
}

/*
 * Random Writes (1..4 units), Deallocates, Write Zeroes and Flushes on
 * the first @span units, with a power cut after 1..@programs NAND
 * programs (or 300 operations), then power cycled; after each cycle
 * every unit must hold a version the durability rules allow: with PLP
 * its last completed one (the operation cut short: its old or new
 * version, per unit); without PLP, any version it had since the last
 * completed Flush. Never a torn unit. Then kvftl_check().
 */
static void random_cuts(struct kvftl_config *c, uint64_t span, uint32_t rounds, uint32_t programs,
                        uint64_t seed)
{
    struct kvftl *f = open_or_die(c);
    struct unit_model *m = g_new0(struct unit_model, span);
    for (uint64_t u = 0; u < span; u++) {
        m[u].n = 1; /* version 0 */
    }
    uint8_t *buf = g_malloc(4 * 4096);
    uint64_t x = seed;
    unsigned bad = 0, torn = 0, checks_failed = 0;
    for (uint32_t r = 0; r < rounds; r++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        kvftl_power_cut_after(f, 1 + x % programs);
        for (uint32_t op = 0; op < 300 && ftl_powered(f); op++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t u0 = (x >> 8) % span;
            uint32_t n = 1 + (uint32_t)((x >> 40) % 4);
            n = u0 + n > span ? (uint32_t)(span - u0) : n;
            struct kvftl_cpl cpl;
            uint32_t kind = (uint32_t)(x % 16);
            if (kind < 12) {
                for (uint32_t i = 0; i < n; i++) {
                    stamp(buf + 4096 * i, u0 + i, m[u0 + i].next + 1);
                }
                kvftl_block_write(f, u0, n, buf, false, 0, &cpl);
                for (uint32_t i = 0; i < n; i++) {
                    struct unit_model *um = &m[u0 + i];
                    um->next++;
                    if (c->plp && cpl.status == KVFTL_OK) {
                        um->n = 0;
                    }
                    model_add(um, um->next);
                }
            } else if (kind < 14) {
                if (kind == 12) {
                    kvftl_block_deallocate(f, u0, n, 0, &cpl);
                } else {
                    kvftl_block_write_zeroes(f, u0, n, 0, &cpl);
                }
                for (uint32_t i = 0; i < n; i++) {
                    struct unit_model *um = &m[u0 + i];
                    if (c->plp && cpl.status == KVFTL_OK) {
                        um->n = 0;
                    }
                    model_add(um, 0); /* the last entry is always the newest state */
                }
            } else {
                kvftl_flush(f, 0, &cpl);
                if (cpl.status == KVFTL_OK) {
                    for (uint64_t u = 0; u < span; u++) {
                        /* the newest state is durable: only it remains possible */
                        m[u].ok[0] = m[u].ok[m[u].n - 1];
                        m[u].n = 1;
                    }
                }
            }
        }
        if (ftl_powered(f)) {
            f->nand.power_lost = true; /* cut between two operations */
        }
        char err[256] = "";
        int rc = kvftl_power_cycle(f, err, sizeof(err));
        if (rc != 0) {
            fprintf(stderr, "round %u: kvftl_power_cycle: %s\n", r, err);
        }
        CU_ASSERT_EQUAL_FATAL(rc, 0);
        for (uint64_t u = 0; u < span; u++) {
            struct kvftl_cpl cpl;
            kvftl_block_read(f, u, 1, buf, 0, &cpl);
            uint32_t v = cpl.status == KVFTL_OK ? version_of(buf, u, m[u].next) : UINT32_MAX;
            torn += v == UINT32_MAX;
            if (v == UINT32_MAX || !model_has(&m[u], v)) {
                if (!bad++) {
                    fprintf(stderr, "round %u unit %llu holds version %d; allowed:", r,
                            (unsigned long long)u, (int)v);
                    for (uint32_t i = 0; i < m[u].n; i++) {
                        fprintf(stderr, " %u", m[u].ok[i]);
                    }
                    fprintf(stderr, "\n");
                }
                v = v == UINT32_MAX ? 0 : v;
            }
            m[u].ok[0] = v;
            m[u].n = 1;
        }
        char cerr[512] = "";
        if (kvftl_check(f, cerr, sizeof(cerr)) != 0 && !checks_failed++) {
            fprintf(stderr, "round %u: kvftl_check: %s\n", r, cerr);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(torn, 0);
    CU_ASSERT_EQUAL(checks_failed, 0);
    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    CU_ASSERT(st.gc_runs > 0);
    g_free(buf);
    g_free(m);
    kvftl_close(f);
}

/* Rounds of random_cuts(): 150 (enough for GC to run), or KVFTL_CUT_ROUNDS for a soak. */
static uint32_t cut_rounds(void)
{
    const char *e = getenv("KVFTL_CUT_ROUNDS");
    return e && atoi(e) > 0 ? (uint32_t)atoi(e) : 150;
}

/* 16 KiB pages (4 slots: cuts tear pages holding several units), the whole map cached. */
static void test_random_cuts_plp(void)
{
    struct kvftl_config c = nvm_config(true, false);
    random_cuts(&c, 2600, cut_rounds(), 40, 88172645463325252ull);
}

static void test_random_cuts_no_plp(void)
{
    struct kvftl_config c = nvm_config(false, false);
    random_cuts(&c, 2600, cut_rounds(), 40, 88172645463325252ull);
}

/* 4 KiB pages, 4 translation pages and a DRAM budget of 2: evictions program them mid-stream. */
static void test_random_cuts_dftl_plp(void)
{
    struct kvftl_config c = small_config();
    c.command_set = KVFTL_CMDSET_NVM;
    c.index_dram_bytes = 8192;
    c.bloom = false;
    random_cuts(&c, 3000, cut_rounds(), 160, 1234567ull);
}

static void test_random_cuts_dftl_no_plp(void)
{
    struct kvftl_config c = small_config();
    c.command_set = KVFTL_CMDSET_NVM;
    c.index_dram_bytes = 8192;
    c.bloom = false;
    c.plp = false;
    random_cuts(&c, 3000, cut_rounds(), 160, 1234567ull);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_clean_close_reopen_keeps_every_unit),
    TAP_TEST_FN(test_power_cycle_plp_keeps_completed),
    TAP_TEST_FN(test_power_cut_no_plp_torn_page),
    TAP_TEST_FN(test_unmap_durability),
    TAP_TEST_FN(test_no_plp_gc_erase_keeps_deallocate),
    TAP_TEST_FN(test_unmap_log_full_programs_map),
    TAP_TEST_FN(test_dftl_map_clean_and_crash),
    TAP_TEST_FN(test_sigkill_plp_keeps_completed),
    TAP_TEST_FN(test_sigkill_no_plp_keeps_flushed),
    TAP_TEST_FN(test_image_personality_refused),
    TAP_TEST_FN(test_damaged_unit_spare_skipped),
    TAP_TEST_FN(test_future_seq_and_bad_tag_skipped),
    TAP_TEST_FN(test_damaged_tpage_rescanned),
    TAP_TEST_FN(test_checkpoint_tpage_address),
    TAP_TEST_FN(test_random_damage_mounts_or_refuses),
    TAP_TEST_FN(test_check_finds_damage),
    TAP_TEST_FN(test_random_cuts_plp),
    TAP_TEST_FN(test_random_cuts_no_plp),
    TAP_TEST_FN(test_random_cuts_dftl_plp),
    TAP_TEST_FN(test_random_cuts_dftl_no_plp),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("block_recovery", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
