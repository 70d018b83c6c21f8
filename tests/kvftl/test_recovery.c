/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Durability: checkpoint on close, crash mount by scanning the log, the
 * power-loss harness (PLP on and off, torn programs), tombstones.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

static char image[64];

static void image_new(void)
{
    snprintf(image, sizeof(image), "/tmp/kvftl-rec-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(image);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    unlink(image); /* a fresh device: kvftl_open creates it */
}

static void key_of(char *key, int i)
{
    snprintf(key, 17, "key-%012d", i);
}

static void fill(struct kvftl *f, int from, int to, uint8_t b)
{
    char key[17];
    for (int i = from; i < to; i++) {
        key_of(key, i);
        CU_ASSERT_EQUAL_FATAL(put(f, key, 50, b, false), 0);
    }
}

static int count_bad(struct kvftl *f, int from, int to, uint8_t b)
{
    char key[17];
    int bad = 0;
    for (int i = from; i < to; i++) {
        key_of(key, i);
        bad += get_check(f, key, 50, b) != 0;
    }
    return bad;
}

static int count_absent(struct kvftl *f, int from, int to)
{
    char key[17];
    int n = 0;
    for (int i = from; i < to; i++) {
        key_of(key, i);
        n += exist(f, key) == KVSSD_SC_KEY_DOES_NOT_EXIST;
    }
    return n;
}

static void cycle(struct kvftl *f)
{
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
}

/*
 * Orderly close writes a checkpoint: reopening the image mounts from it
 * without scanning (no NAND page read during the mount) and every key,
 * value and deletion is as it was.
 */
static void test_clean_reopen_uses_checkpoint(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 100, 3);
    char key[17];
    for (int i = 0; i < 10; i++) {
        key_of(key, i);
        del(f, key);
    }
    kvftl_close(f);
    f = open_or_die(&c);
    CU_ASSERT_EQUAL(stats(f).nand_pages_read, 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 90);
    CU_ASSERT_EQUAL(count_absent(f, 0, 10), 10);
    CU_ASSERT_EQUAL(count_bad(f, 10, 100, 3), 0);
    assert_consistent(f);
    /* and the device keeps working after the mount */
    fill(f, 100, 200, 4);
    kvftl_close(f);
    f = open_or_die(&c);
    CU_ASSERT_EQUAL(count_bad(f, 100, 200, 4), 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 190);
    kvftl_close(f);
    unlink(image);
}

/*
 * A crash (power lost before an orderly close) leaves no clean checkpoint:
 * the next open rebuilds the index by scanning the log (NAND pages are
 * read) and every flushed key is there.
 */
static void test_crash_reopen_scans_log(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    c.plp = false;
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 50, 5);
    flush(f);
    fill(f, 50, 52, 6);            /* in the buffer, page 13 */
    kvftl_power_cut_after(f, 1);
    flush(f);                      /* programs page 13: the one program allowed */
    CU_ASSERT_TRUE(ftl_powered(f));
    CU_ASSERT_EQUAL(put(f, "late", 5000, 1, false), KVSSD_SC_INTERNAL_ERROR); /* page 14 is torn */
    CU_ASSERT_FALSE(ftl_powered(f));
    kvftl_close(f); /* no checkpoint without power */
    f = open_or_die(&c);
    CU_ASSERT(stats(f).nand_pages_read > 0);
    CU_ASSERT_EQUAL(count_bad(f, 0, 50, 5), 0);
    CU_ASSERT_EQUAL(count_bad(f, 50, 52, 6), 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 52);
    CU_ASSERT_EQUAL(exist(f, "late"), KVSSD_SC_KEY_DOES_NOT_EXIST);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

/* PLP on: completed stores still in the page buffer survive a power cycle. */
static void test_plp_on_buffer_survives(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 3, 1);
    CU_ASSERT_EQUAL(stats(f).nand_data_pages_programmed, 0);
    cycle(f);
    CU_ASSERT_EQUAL(count_bad(f, 0, 3, 1), 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 3);
    assert_consistent(f);
    kvftl_close(f);
}

/* PLP off: what was flushed survives, what sat in the buffer is lost. */
static void test_plp_off_buffer_lost(void)
{
    struct kvftl_config c = small_config();
    c.plp = false;
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 3, 1);
    flush(f);
    fill(f, 3, 5, 1);
    cycle(f);
    CU_ASSERT_EQUAL(count_bad(f, 0, 3, 1), 0);
    CU_ASSERT_EQUAL(count_absent(f, 3, 5), 2);
    CU_ASSERT_EQUAL(stats(f).live_keys, 3);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * Power cut in the middle of a page-spanning blob: 2 buffer entries, a
 * 1 KiB blob at 0, then a 20,027-byte blob at 1024 (pages 0-5) streamed
 * through the buffer. Page 0's program completes, page 1's is torn: the
 * store fails, every operation fails until the power cycle, and after it
 * the big key is absent (never half returned) while the small one is
 * intact, with PLP on and off.
 */
static void cut_mid_blob(bool plp)
{
    struct kvftl_config c = small_config();
    c.buffer_entries = 2;
    c.plp = plp;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "small", 50, 0x11, false), 0);
    kvftl_power_cut_after(f, 1);
    CU_ASSERT_EQUAL(put(f, "big", 20000, 0x22, true), KVSSD_SC_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(f->nand.torn_ppn, 1);
    CU_ASSERT_EQUAL(stats(f).nand_data_pages_programmed, 1);
    CU_ASSERT_EQUAL(get_check(f, "small", 50, 0x11), KVSSD_SC_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(put(f, "other", 1, 1, false), KVSSD_SC_INTERNAL_ERROR);
    cycle(f);
    CU_ASSERT_EQUAL(get_check(f, "small", 50, 0x11), 0);
    CU_ASSERT_EQUAL(exist(f, "big"), KVSSD_SC_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(stats(f).live_keys, 1);
    assert_consistent(f);
    /* the log continues in a fresh stripe */
    CU_ASSERT_EQUAL(put(f, "after", 10, 3, false), 0);
    CU_ASSERT_EQUAL(addr_of(f, "after") / 2359296, 1);
    CU_ASSERT_EQUAL(get_check(f, "after", 10, 3), 0);
    kvftl_close(f);
}

static void test_power_cut_mid_spanning_blob_plp(void)
{
    cut_mid_blob(true);
}

static void test_power_cut_mid_spanning_blob_no_plp(void)
{
    cut_mid_blob(false);
}

/* A delete is durable: its tombstone keeps the flushed older version from coming back. */
static void test_deleted_stays_deleted(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    put(f, "doomed", 50, 1, false);
    flush(f);
    CU_ASSERT_EQUAL(del(f, "doomed"), 0);
    cycle(f); /* tombstone still in the buffer: PLP saves it */
    CU_ASSERT_EQUAL(exist(f, "doomed"), KVSSD_SC_KEY_DOES_NOT_EXIST);
    kvftl_close(f);

    c.plp = false;
    f = open_or_die(&c);
    put(f, "doomed", 50, 1, false);
    flush(f);
    CU_ASSERT_EQUAL(del(f, "doomed"), 0);
    flush(f);
    cycle(f);
    CU_ASSERT_EQUAL(exist(f, "doomed"), KVSSD_SC_KEY_DOES_NOT_EXIST);
    assert_consistent(f);
    kvftl_close(f);
}

/* Five versions of a key, each flushed: the scan keeps the highest sequence number. */
static void test_latest_version_wins(void)
{
    struct kvftl_config c = small_config();
    c.plp = false;
    struct kvftl *f = open_or_die(&c);
    for (uint8_t v = 1; v <= 5; v++) {
        put(f, "versioned", 100, v, false);
        flush(f);
    }
    cycle(f);
    CU_ASSERT_EQUAL(get_check(f, "versioned", 100, 5), 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 1);
    CU_ASSERT_EQUAL(f->vl.next_seq, 6);
    assert_consistent(f);
    kvftl_close(f);
}

/* After GC moved blobs around (relocated copies keep their sequence numbers), a crash mount agrees. */
static void test_recovery_after_gc(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    for (int round = 0; round < 10; round++) {
        fill(f, 0, 3000, (uint8_t)round);
    }
    CU_ASSERT(stats(f).gc_runs > 0);
    cycle(f);
    CU_ASSERT_EQUAL(stats(f).live_keys, 3000);
    CU_ASSERT_EQUAL(count_bad(f, 0, 3000, 9), 0);
    assert_consistent(f);
    fill(f, 0, 3000, 10);
    CU_ASSERT_EQUAL(count_bad(f, 0, 3000, 10), 0);
    kvftl_close(f);
}

/* An image made with one geometry is refused under another, with a sentence naming the field. */
static void test_image_geometry_mismatch(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    kvftl_close(open_or_die(&c));
    c.pages_per_block = 600;
    char err[512];
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    char want[512];
    snprintf(want, sizeof(want),
             "image_path %s was made with pages_per_block 576; the configuration says 600", image);
    CU_ASSERT_STRING_EQUAL(err, want);
    unlink(image);
}

/* Format erases every key (also across a crash mount) and keeps the counters. */
static void test_format(void)
{
    struct kvftl_config c = small_config();
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, 100, 1);
    flush(f);
    struct kvftl_cpl cpl;
    kvftl_format(f, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, 0);
    CU_ASSERT(cpl.done_ns >= 3000000);
    struct kvftl_stats st = stats(f);
    CU_ASSERT_EQUAL(st.nand_blocks_erased, 1); /* only stripe 0 was written */
    CU_ASSERT_EQUAL(st.live_keys, 0);
    CU_ASSERT_EQUAL(st.stores, 100);
    CU_ASSERT_EQUAL(st.free_blocks, 10);
    CU_ASSERT_EQUAL(count_absent(f, 0, 100), 100);
    cycle(f);
    CU_ASSERT_EQUAL(count_absent(f, 0, 100), 100);
    fill(f, 0, 10, 2);
    CU_ASSERT_EQUAL(count_bad(f, 0, 10, 2), 0);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * A process that dies without closing (no checkpoint, header still dirty)
 * leaves buffered bytes in the image that never reached NAND: the next
 * open scans, finds no key, and erases that stripe before writing to it.
 */
static void test_killed_process_image(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    c.plp = false;
    pid_t pid = fork();
    if (pid == 0) {
        struct kvftl *f = open_or_die(&c);
        put(f, "lost-1", 50, 1, false);
        put(f, "lost-2", 50, 1, false);
        _exit(0);
    }
    int status;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(stats(f).live_keys, 0);
    CU_ASSERT_FALSE(f->stripes[0].erased);
    CU_ASSERT_EQUAL(put(f, "new", 50, 2, false), 0);
    CU_ASSERT_EQUAL(addr_of(f, "new"), 0);
    CU_ASSERT_EQUAL(stats(f).nand_blocks_erased, 1);
    CU_ASSERT_EQUAL(exist(f, "lost-1"), KVSSD_SC_KEY_DOES_NOT_EXIST);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("recovery", NULL, NULL);
    ADD(s, test_clean_reopen_uses_checkpoint);
    ADD(s, test_crash_reopen_scans_log);
    ADD(s, test_plp_on_buffer_survives);
    ADD(s, test_plp_off_buffer_lost);
    ADD(s, test_power_cut_mid_spanning_blob_plp);
    ADD(s, test_power_cut_mid_spanning_blob_no_plp);
    ADD(s, test_deleted_stays_deleted);
    ADD(s, test_latest_version_wins);
    ADD(s, test_recovery_after_gc);
    ADD(s, test_image_geometry_mismatch);
    ADD(s, test_format);
    ADD(s, test_killed_process_image);
    return tap_cunit_run();
}
