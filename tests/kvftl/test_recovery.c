/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Durability: checkpoint on close, crash mount by scanning the log, the
 * power-loss harness (PLP on and off, torn programs), tombstones.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "kvftl_image.h"

static char image[64];

static void image_new(void)
{
    image_path_new(image, sizeof(image), "rec");
}

static int count_absent(struct kvftl *f, int from, int to)
{
    char key[17];
    int n = 0;
    for (int i = from; i < to; i++) {
        key_of(key, i);
        n += exist(f, key) == KVFTL_KEY_DOES_NOT_EXIST;
    }
    return n;
}

static void cycle(struct kvftl *f)
{
    char err[256];
    CU_ASSERT_EQUAL(kvftl_power_cycle(f, err, sizeof(err)), 0);
}

/*
 * PLP off, power lost during the write after a flush: the flush programs
 * the partial last page (the one program allowed), then "late" (a value of
 * @late_bytes inline, which needs a program) is torn: INTERNAL_ERROR and no
 * power. Closed without a checkpoint; returns the image crash-mounted.
 */
static struct kvftl *crash_after_flush(struct kvftl *f, const struct kvftl_config *c,
                                       uint32_t late_bytes)
{
    kvftl_power_cut_after(f, 1);
    flush(f);
    CU_ASSERT_TRUE(ftl_powered(f));
    CU_ASSERT_EQUAL(put(f, "late", late_bytes, 1, false), KVFTL_INTERNAL_ERROR);
    CU_ASSERT_FALSE(ftl_powered(f));
    kvftl_close(f); /* no checkpoint without power */
    return open_or_die(c);
}

/* Opening the image under @c is refused: "image_path <image> was made with @mismatch". */
static void assert_mount_refused(const struct kvftl_config *c, const char *mismatch)
{
    char err[512], want[512];
    CU_ASSERT_PTR_NULL(kvftl_open(c, err, sizeof(err)));
    snprintf(want, sizeof(want), "image_path %s was made with %s", image, mismatch);
    CU_ASSERT_STRING_EQUAL(err, want);
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
    f = crash_after_flush(f, &c, 5000); /* page 13 programmed, page 14 torn */
    CU_ASSERT(stats(f).nand_pages_read > 0);
    CU_ASSERT_EQUAL(count_bad(f, 0, 50, 5), 0);
    CU_ASSERT_EQUAL(count_bad(f, 50, 52, 6), 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 52);
    CU_ASSERT_EQUAL(exist(f, "late"), KVFTL_KEY_DOES_NOT_EXIST);
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
    c.index = KVFTL_INDEX_HASH; /* "after" in stripe 1: no index page took a stripe */
    c.buffer_entries = 2;
    c.plp = plp;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "small", 50, 0x11, false), 0);
    kvftl_power_cut_after(f, 1);
    CU_ASSERT_EQUAL(put(f, "big", 20000, 0x22, true), KVFTL_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(f->nand.torn_ppn, 1);
    CU_ASSERT_EQUAL(stats(f).nand_data_pages_programmed, 1);
    CU_ASSERT_EQUAL(get_check(f, "small", 50, 0x11), KVFTL_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(put(f, "other", 1, 1, false), KVFTL_INTERNAL_ERROR);
    cycle(f);
    CU_ASSERT_EQUAL(get_check(f, "small", 50, 0x11), 0);
    CU_ASSERT_EQUAL(exist(f, "big"), KVFTL_KEY_DOES_NOT_EXIST);
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
    CU_ASSERT_EQUAL(exist(f, "doomed"), KVFTL_KEY_DOES_NOT_EXIST);
    kvftl_close(f);

    c.plp = false;
    f = open_or_die(&c);
    put(f, "doomed", 50, 1, false);
    flush(f);
    CU_ASSERT_EQUAL(del(f, "doomed"), 0);
    flush(f);
    cycle(f);
    CU_ASSERT_EQUAL(exist(f, "doomed"), KVFTL_KEY_DOES_NOT_EXIST);
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

/* After GC moved blobs around (relocated copies keep their sequence numbers), a crash mount agrees.
 */
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
    assert_mount_refused(&c, "pages_per_block 576; the configuration says 600");
    unlink(image);
}

/*
 * The image header keeps the index design: a header naming a design this
 * firmware does not have (index_design 1, as a damaged header or a newer
 * firmware's image would) is refused with a sentence, not mounted by the
 * hash design; a header naming hash (0, also images made before the
 * field) mounts.
 */
static void test_image_index_design_kept(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    kvftl_close(open_or_die(&c));
    int fd = open(image, O_RDWR);
    CU_ASSERT_FATAL(fd >= 0);
    uint32_t design = G_N_ELEMENTS(kvftl_index_names); /* past the last design */
    off_t at = (off_t)offsetof(struct image_header, index_design);
    CU_ASSERT_FATAL(pwrite(fd, &design, sizeof(design), at) == (ssize_t)sizeof(design));
    char err[512], want[512];
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s holds a key-value device made with index (unknown: the header is "
             "damaged); the configuration asks for index %s, and an image keeps the index "
             "design it was made with",
             image, kvftl_index_names[c.index]);
    CU_ASSERT_STRING_EQUAL(err, want);
    design = c.index;
    CU_ASSERT_FATAL(pwrite(fd, &design, sizeof(design), at) == (ssize_t)sizeof(design));
    close(fd);
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->index.design, c.index);
    kvftl_close(f);
    unlink(image);
}

/*
 * An image made with hash, opened with a config naming pm983 (a preset's
 * design, no index asked for), keeps hash: kvftl_config_image_index() reads
 * it from the header, and the image mounts with its key; without the call
 * the mount is refused with the sentence naming both designs. With no
 * image, the config is left as it is.
 */
static void test_image_index_design_read(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    c.index = KVFTL_INDEX_PM983;
    CU_ASSERT_FALSE(kvftl_config_image_index(&c)); /* no file yet */
    CU_ASSERT_EQUAL(c.index, KVFTL_INDEX_PM983);
    c.index = KVFTL_INDEX_HASH;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "kept", 100, 7, false), KVFTL_OK);
    kvftl_close(f);
    c.index = KVFTL_INDEX_PM983;
    char err[512], want[512];
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s holds a key-value device made with index hash; the configuration "
             "asks for index pm983, and an image keeps the index design it was made with",
             image);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_TRUE(kvftl_config_image_index(&c));
    CU_ASSERT_EQUAL(c.index, KVFTL_INDEX_HASH);
    f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->index.design, KVFTL_INDEX_HASH);
    CU_ASSERT_EQUAL(get_check(f, "kept", 100, 7), KVFTL_OK);
    kvftl_close(f);
    unlink(image);
}

/*
 * A crash mount scans a log written with large_blob_unit_bytes 1 and
 * page_fit_blobs (the pm983 preset's placement): small blobs padded to
 * 1 KiB, larger ones byte-granular and not 1 KiB-aligned, pads before
 * blobs moved to a fresh page. Every pair is found at the address it was
 * written to; a mount with another large_blob_unit_bytes is refused.
 */
static void test_crash_scan_fine_units_and_page_fit(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    c.plp = false;
    c.large_blob_unit_bytes = 1;
    c.page_fit_blobs = true;
    struct kvftl *f = open_or_die(&c);
    /* occupied: A 1024 (padded), B 1032, C 3032, D 1024 (padded), E 2032, F 5032 */
    static const struct placed_pair pairs[] = {
        {"A-------", 50, 1, false, 0},
        {"B-------", 1000, 2, false, 1024},
        {"C-------", 3000, 3, false, 4096}, /* 2056 + 3032 passes 4096: fresh page, 2040 padded */
        {"D-------", 10, 4, false, 7128},
        {"E-------", 2000, 5, false, 8192}, /* 8152 + 2032 passes 8192: fresh page */
        {"F-------", 5000, 6, false, 10224}, /* 5032 > one page: straddles */
    };
    put_placed(f, pairs, 6);
    f = crash_after_flush(f, &c, 5000); /* the partial page 3 programmed */
    CU_ASSERT_EQUAL(stats(f).live_keys, 6);
    assert_placed_read_back(f, pairs, 6);
    assert_placed_at(f, pairs, 6);
    assert_consistent(f);
    kvftl_close(f);
    c.large_blob_unit_bytes = 0;
    assert_mount_refused(&c, "large_blob_unit_bytes 1; the configuration says 0");
    unlink(image);
}

/*
 * A crash mount scans a log laid out with a per-page data area (8 KiB
 * pages, 6144 data bytes, 1 KiB unit for small blobs only, 8-byte keys):
 *   A   50 B -> 1024 (padded) at 0
 *   B 5000 B -> blob 5032 at 1024 (ends at 6056, inside the data area)
 *   C  100 B -> 1024 (padded) would pass 6144: next page, 8192
 *   D 7000 B -> blob 7032, two whole pages from 16384
 *   E 2000 B -> blob 2032 at 32768, right after D's pages
 * Every pair is found where it was written; a mount with another
 * page_data_bytes is refused.
 */
static void test_crash_scan_data_area(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    c.plp = false;
    c.page_size_bytes = 8192;
    c.large_blob_unit_bytes = 1;
    c.page_data_bytes = 6144;
    struct kvftl *f = open_or_die(&c);
    static const struct placed_pair pairs[] = {
        {"A-------", 50, 1, false, 0},       {"B-------", 5000, 2, false, 1024},
        {"C-------", 100, 3, false, 8192},   {"D-------", 7000, 4, false, 16384},
        {"E-------", 2000, 5, false, 32768},
    };
    put_placed(f, pairs, 5);
    f = crash_after_flush(f, &c, 7000); /* the partial page 4 programmed */
    CU_ASSERT_EQUAL(stats(f).live_keys, 5);
    assert_placed_read_back(f, pairs, 5);
    assert_placed_at(f, pairs, 5);
    /* writing resumes with the same rules */
    CU_ASSERT_EQUAL(put(f, "F-------", 7000, 6, false), 0);
    CU_ASSERT_EQUAL(addr_of(f, "F-------") % 8192, 0);
    CU_ASSERT_EQUAL(get_check(f, "F-------", 7000, 6), 0);
    assert_consistent(f);
    kvftl_close(f);
    c.page_data_bytes = 0;
    assert_mount_refused(&c, "page_data_bytes 6144; the configuration says 0");
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
    CU_ASSERT_EQUAL(st.free_stripes, 10);
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
    CU_ASSERT_FALSE(f->space.stripes[0].erased);
    CU_ASSERT_EQUAL(put(f, "new", 50, 2, false), 0);
    CU_ASSERT_EQUAL(addr_of(f, "new"), 0);
    CU_ASSERT_EQUAL(stats(f).nand_blocks_erased, 1);
    CU_ASSERT_EQUAL(exist(f, "lost-1"), KVFTL_KEY_DOES_NOT_EXIST);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

/* ---- a process killed by SIGKILL (kill -9 of QEMU) ---- */

/* One step of the killed child's workload: a Store of @key version @ver, or a Delete. */
struct kill_op {
    int key;
    int ver; /* > 0: Store of this version; 0: Delete */
    uint32_t vlen;
    bool dma;
};

/* What the child reports through the pipe once its last operation completed. */
struct kill_report {
    int completed; /* operations whose completion the child saw (status 0) */
    int flushed; /* operations before the child's Flush, -1 if none */
    uint64_t pages_programmed; /* value-log pages programmed when it died */
    uint32_t buffered_pages; /* pages open in the page buffer when it died */
    uint32_t dlt_entries; /* backfill: values placed ahead of the write pointer */
};

#define KILL_KEYS 64

static void kill_key(char *key, int k)
{
    snprintf(key, 17, "kill-%011d", k);
}

/* Value byte j of version @ver of key @k: every version and key differ. */
static uint8_t kill_byte(int k, int ver, uint32_t j)
{
    return (uint8_t)(k * 31 + ver * 7 + j * 13 + (j >> 8));
}

static int kill_store(struct kvftl *f, const struct kill_op *op)
{
    static uint8_t v[8192];
    char key[17];
    kill_key(key, op->key);
    for (uint32_t j = 0; j < op->vlen; j++) {
        v[j] = kill_byte(op->key, op->ver, j);
    }
    struct kvftl_store_req r = {
        .key = key,
        .key_bytes = 16,
        .value = v,
        .value_bytes = op->vlen,
        .inline_bytes = op->dma ? 0 : op->vlen,
    };
    struct kvftl_cpl cpl;
    kvftl_store(f, &r, &cpl);
    return cpl.status;
}

/*
 * The child: open the image, run ops [0, n) (a Flush after the first
 * @flush_after of them when >= 0), report, and die by SIGKILL without
 * kvftl_close(). Never returns.
 */
static void kill_child(const struct kvftl_config *c, const struct kill_op *ops, int n,
                       int flush_after, int wfd)
{
    struct kvftl *f = open_or_die(c);
    struct kill_report rep = {.completed = 0, .flushed = -1};
    for (int i = 0; i < n; i++) {
        if (i == flush_after) {
            struct kvftl_cpl cpl;
            kvftl_flush(f, 0, &cpl);
            if (cpl.status) {
                break;
            }
            rep.flushed = i;
        }
        char key[17];
        kill_key(key, ops[i].key);
        uint16_t st = ops[i].ver ? kill_store(f, &ops[i]) : del(f, key);
        if (st) {
            break;
        }
        rep.completed = i + 1;
    }
    rep.pages_programmed = f->space.data.pages_programmed;
    rep.buffered_pages = f->space.data.open_idx - f->space.data.prog_idx;
    rep.dlt_entries = f->vl.pk.dlt.count;
    if (write(wfd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
        _exit(3);
    }
    raise(SIGKILL);
    _exit(4); /* not reached */
}

/* Run the child, read its report, check it died by SIGKILL. */
static struct kill_report kill_run(const struct kvftl_config *c, const struct kill_op *ops, int n,
                                   int flush_after)
{
    struct kill_report rep;
    memset(&rep, 0, sizeof(rep));
    int fds[2];
    CU_ASSERT_FATAL(pipe(fds) == 0);
    fflush(stdout);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        kill_child(c, ops, n, flush_after, fds[1]);
    }
    close(fds[1]);
    CU_ASSERT_EQUAL(read(fds[0], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
    close(fds[0]);
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFSIGNALED(status));
    CU_ASSERT_EQUAL(WTERMSIG(status), SIGKILL);
    return rep;
}

/*
 * Check the mounted device holds exactly the outcome of ops [0, upto):
 * every key's latest version with exact bytes, deleted and never-stored
 * keys absent, and live_keys equal to the model's count.
 */
static void kill_verify(struct kvftl *f, const struct kill_op *ops, int upto)
{
    int ver[KILL_KEYS];
    uint32_t vlen[KILL_KEYS];
    memset(ver, 0, sizeof(ver));
    memset(vlen, 0, sizeof(vlen));
    for (int i = 0; i < upto; i++) {
        ver[ops[i].key] = ops[i].ver;
        vlen[ops[i].key] = ops[i].vlen;
    }
    static uint8_t buf[8192];
    int live = 0, bad = 0;
    for (int k = 0; k < KILL_KEYS; k++) {
        char key[17];
        kill_key(key, k);
        struct kvftl_cpl cpl;
        kvftl_retrieve(f, key, 16, buf, 0, sizeof(buf), 0, &cpl);
        if (!ver[k]) {
            bad += cpl.status != KVFTL_KEY_DOES_NOT_EXIST;
            continue;
        }
        live++;
        bool ok = cpl.status == 0 && cpl.value_bytes == vlen[k];
        for (uint32_t j = 0; ok && j < vlen[k]; j++) {
            ok = buf[j] == kill_byte(k, ver[k], j);
        }
        if (!ok) {
            printf("# key %d: status 0x%x, %u bytes, expected version %d (%u bytes)\n", k,
                   cpl.status, cpl.value_bytes, ver[k], vlen[k]);
        }
        bad += !ok;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, (uint64_t)live);
}

/*
 * The workload: stores of keys 0..39 (values of 50..3049 bytes, every
 * fifth by DMA), then overwrites of keys 0..9, deletes of keys 10..14 and
 * stores of new keys 40..44, so the last operations sit in the page
 * buffer when the process dies.
 */
static int kill_workload(struct kill_op *ops)
{
    int n = 0;
    for (int k = 0; k < 40; k++) {
        ops[n++] = (struct kill_op){k, 1, 50 + (uint32_t)(k * 397) % 3000, k % 5 == 0};
    }
    for (int k = 0; k < 15; k++) {
        if (k < 10) {
            ops[n++] = (struct kill_op){k, 2, 100 + (uint32_t)k * 211, k % 3 == 0};
        } else {
            ops[n++] = (struct kill_op){k, 0, 0, false};
        }
        if (k >= 10) {
            ops[n++] = (struct kill_op){30 + k, 1, 700 + (uint32_t)k * 50, k % 2 == 0};
        }
    }
    return n;
}

/* Mount after the kill, check, and show the device carries on (write, clean close, reopen). */
static void kill_mount_and_check(const struct kvftl_config *c, const struct kill_op *ops, int upto)
{
    struct kvftl *f = open_or_die(c);
    kill_verify(f, ops, upto);
    assert_consistent(f);
    struct kill_op extra = {63, 1, 1000, false};
    CU_ASSERT_EQUAL(kill_store(f, &extra), 0);
    kvftl_close(f);
    f = open_or_die(c);
    struct kill_op all[128];
    memcpy(all, ops, (size_t)upto * sizeof(*ops));
    all[upto] = extra;
    kill_verify(f, all, upto + 1);
    assert_consistent(f);
    kvftl_close(f);
}

/*
 * PLP on, the process killed by SIGKILL without kvftl_close(): every
 * Store and Delete whose completion the child saw survives, with exact
 * bytes, including those whose pages were still in the page buffer (the
 * child reports that some were). Packing "all".
 */
static void test_sigkill_plp_keeps_completed(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    struct kill_op ops[128];
    int n = kill_workload(ops);
    CU_ASSERT_EQUAL(n, 60);
    struct kill_report rep = kill_run(&c, ops, n, -1);
    CU_ASSERT_EQUAL(rep.completed, 60);
    CU_ASSERT(rep.buffered_pages > 0);
    CU_ASSERT(rep.pages_programmed > 0);
    kill_mount_and_check(&c, ops, rep.completed);
    unlink(image);
}

/*
 * The same with backfill packing: DMA values placed ahead of the write
 * pointer leave zero gaps in the buffered pages (the child reports DLT
 * entries outstanding when it died); the mount pads them as the PLP dump
 * would and every completed operation survives.
 */
static void test_sigkill_plp_backfill_gaps(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    c.packing = KVFTL_PACK_BACKFILL;
    c.placement_unit_bytes = 1;
    struct kill_op ops[128];
    int n = kill_workload(ops);
    /* end on a DMA value followed by one small inline value: a gap stays open */
    ops[n++] = (struct kill_op){50, 1, 5000, true};
    ops[n++] = (struct kill_op){51, 1, 30, false};
    struct kill_report rep = kill_run(&c, ops, n, -1);
    CU_ASSERT_EQUAL(rep.completed, n);
    CU_ASSERT(rep.buffered_pages > 0);
    CU_ASSERT(rep.dlt_entries > 0);
    kill_mount_and_check(&c, ops, rep.completed);
    unlink(image);
}

/*
 * PLP off: only what the Flush programmed survives the kill. 40 stores,
 * Flush, then an overwrite of key 0, a delete of key 1 and a store of key
 * 40 (3 KiB of blobs in one 4 KiB page, never programmed): after the
 * mount keys 0..39 hold exactly their flushed version (key 0 the old one,
 * key 1 not deleted), key 40 is absent, live_keys = 40.
 */
static void test_sigkill_no_plp_keeps_flushed(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    c.plp = false;
    struct kill_op ops[64];
    int n = 0;
    for (int k = 0; k < 40; k++) {
        ops[n++] = (struct kill_op){k, 1, 50 + (uint32_t)(k * 397) % 3000, k % 5 == 0};
    }
    ops[n++] = (struct kill_op){0, 2, 500, false};
    ops[n++] = (struct kill_op){1, 0, 0, false};
    ops[n++] = (struct kill_op){40, 1, 600, false};
    struct kill_report rep = kill_run(&c, ops, n, 40);
    CU_ASSERT_EQUAL(rep.completed, 43);
    CU_ASSERT_EQUAL(rep.flushed, 40);
    CU_ASSERT_EQUAL(rep.buffered_pages, 1);
    kill_mount_and_check(&c, ops, 40);
    unlink(image);
}

/* ---- damaged images: every field read from the file is checked ---- */

#define DMG_KEYS 600

/*
 * A cleanly closed image of DMG_KEYS keys (50-byte values of byte 7) spread
 * over several index pages. The key hash's seed is fixed: a clean mount
 * reads back one blob per index page (the first in slot order), and under
 * a random seed that was now and then the very blob a test damages (key 5
 * or 7), so the mount rescanned and the test failed (3 runs in 100).
 */
static struct kvftl_config damaged_setup(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_HASH; /* the damage is to the hash design's pages (lsm: test_lsm.c) */
    c.image_path = image;
    c.hash_seed = 0x0123456789abcdefull;
    struct kvftl *f = open_or_die(&c);
    fill(f, 0, DMG_KEYS, 7);
    CU_ASSERT_EQUAL(f->index.hash.idx.npages, 4);
    kvftl_close(f);
    return c;
}

/*
 * The damaged image mounts by scanning the log, says why (@why is part of
 * the reason) in a note that names the image, and every key is back with
 * its bytes; the next orderly close makes the image clean again.
 */
static void expect_rescan(const struct kvftl_config *c, const char *why)
{
    struct kvftl *f = open_or_die(c);
    CU_ASSERT_TRUE(f->mount.scanned);
    char got[sizeof(f->mount.why)];
    memcpy(got, f->mount.why, sizeof(got));
    bool found = strstr(got, why) != NULL;
    if (!found) {
        printf("# expected a reason with \"%s\", got \"%s\"\n", why, got);
    }
    CU_ASSERT_TRUE(found);
    const char *note = kvftl_mount_note(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(note);
    char want[512];
    snprintf(want, sizeof(want),
             "image_path %s: %s; the index was rebuilt by scanning the log: "
             "%d keys found.",
             image, f->mount.why, DMG_KEYS);
    CU_ASSERT_STRING_EQUAL(note, want);
    CU_ASSERT_EQUAL(stats(f).live_keys, DMG_KEYS);
    CU_ASSERT_EQUAL(count_bad(f, 0, DMG_KEYS, 7), 0);
    assert_consistent(f);
    kvftl_close(f);
    f = open_or_die(c);
    CU_ASSERT_PTR_NULL(kvftl_mount_note(f));
    CU_ASSERT_EQUAL(count_bad(f, 0, DMG_KEYS, 7), 0);
    kvftl_close(f);
    unlink(image);
}

/* A clean mount says nothing; the note is only for mounts that had to scan. */
static void test_clean_mount_has_no_note(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    CU_ASSERT_PTR_NULL(kvftl_mount_note(f));
    CU_ASSERT_EQUAL(count_bad(f, 0, DMG_KEYS, 7), 0);
    kvftl_close(f);
    unlink(image);
}

/*
 * One index page overwritten in NAND after a clean close (it used to be
 * trusted: a SIGSEGV at the next lookup): its bytes no longer match the
 * checksum the checkpoint keeps for it, so the index is rebuilt from the log.
 */
static void test_overwritten_index_page_rescanned(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint32_t ppn = kvftl_image_index_ppn(&im, 0);
    CU_ASSERT_FATAL(ppn != UINT32_MAX);
    static uint8_t junk[4096];
    memset(junk, 0xa5, sizeof(junk));
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_page_off(&im, ppn), junk, sizeof(junk)));
    kvftl_image_close(&im);
    char why[128];
    snprintf(why, sizeof(why), "index page 0 (NAND page %u) does not match its checksum", ppn);
    expect_rescan(&c, why);
}

/*
 * An index entry that points outside the value log, in a page whose
 * checksum was recomputed to match (the copy of host memory past the
 * image it used to cause): the page's entries are checked one by one.
 */
static void test_index_entry_outside_log_rescanned(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint32_t ppn = kvftl_image_index_ppn(&im, 0);
    CU_ASSERT_FATAL(ppn != UINT32_MAX);
    static uint8_t page[4096];
    CU_ASSERT(kvftl_image_read(&im, kvftl_image_page_off(&im, ppn), page, sizeof(page)));
    struct index_entry *e = (struct index_entry *)(page + sizeof(struct index_page_header));
    uint32_t slot = 0;
    while (!e[slot].loc) {
        slot++;
    }
    e[slot].loc = loc_make(im.geo.total_bytes + 8192, 90, false);
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_page_off(&im, ppn), page, sizeof(page)));
    size_t len = 0;
    uint8_t *b = kvftl_image_checkpoint(&im, &len);
    CU_ASSERT_FATAL(b != NULL);
    CU_ASSERT(kvftl_image_reseal(&im, b, len));
    g_free(b);
    kvftl_image_close(&im);
    char why[128];
    snprintf(why, sizeof(why), "index page 0 slot %u points outside the value log", slot);
    expect_rescan(&c, why);
}

/* One change to a checkpoint field (the checksums recomputed afterwards) and the reason it gives.
 */
struct ckpt_case {
    const char *what;
    void (*change)(struct checkpoint_head *ch, uint8_t *b, const struct kvftl_image_ckpt_layout *l);
    const char *why;
};

static void ck_vl_stripe(struct checkpoint_head *ch, uint8_t *b,
                         const struct kvftl_image_ckpt_layout *l)
{
    ch->vl_stripe = 13;
}
static void ck_depth(struct checkpoint_head *ch, uint8_t *b,
                     const struct kvftl_image_ckpt_layout *l)
{
    ch->global_depth = 31;
}
static void ck_npages(struct checkpoint_head *ch, uint8_t *b,
                      const struct kvftl_image_ckpt_layout *l)
{
    ch->npages = 0;
}
static void ck_dir(struct checkpoint_head *ch, uint8_t *b, const struct kvftl_image_ckpt_layout *l)
{
    uint32_t v = 9;
    memcpy(b + l->dir, &v, 4);
}
static void ck_wp(struct checkpoint_head *ch, uint8_t *b, const struct kvftl_image_ckpt_layout *l)
{
    ch->vl_wp = 576 * 4096 + 4096;
}
static void ck_state(struct checkpoint_head *ch, uint8_t *b,
                     const struct kvftl_image_ckpt_layout *l)
{
    b[l->stripes + 2 * sizeof(struct stripe_info) + offsetof(struct stripe_info, state)] = 7;
}
static void ck_erased(struct checkpoint_head *ch, uint8_t *b,
                      const struct kvftl_image_ckpt_layout *l)
{
    b[l->stripes + 4 * sizeof(struct stripe_info) + offsetof(struct stripe_info, erased)] = 2;
}
static void ck_cursor(struct checkpoint_head *ch, uint8_t *b,
                      const struct kvftl_image_ckpt_layout *l)
{
    ch->alloc_cursor = 50;
}
static void ck_keys(struct checkpoint_head *ch, uint8_t *b, const struct kvftl_image_ckpt_layout *l)
{
    ch->live_keys++;
}
static void ck_page_depth(struct checkpoint_head *ch, uint8_t *b,
                          const struct kvftl_image_ckpt_layout *l)
{
    b[l->page_depth] = 9;
}
static void ck_stream(struct checkpoint_head *ch, uint8_t *b,
                      const struct kvftl_image_ckpt_layout *l)
{
    ch->stream_idx = 577;
}
static void ck_stripes(struct checkpoint_head *ch, uint8_t *b,
                       const struct kvftl_image_ckpt_layout *l)
{
    ch->stripes = 11;
}
static void ck_page_ppn(struct checkpoint_head *ch, uint8_t *b,
                        const struct kvftl_image_ckpt_layout *l)
{
    uint32_t v = 3; /* a data page of stripe 0 */
    memcpy(b + l->page_ppn, &v, 4);
}
static void ck_valid(struct checkpoint_head *ch, uint8_t *b,
                     const struct kvftl_image_ckpt_layout *l)
{
    uint64_t v = 4096;
    memcpy(b + l->stripes + 0 * sizeof(struct stripe_info) +
               offsetof(struct stripe_info, valid_bytes),
           &v, 8);
}
static void ck_seed(struct checkpoint_head *ch, uint8_t *b, const struct kvftl_image_ckpt_layout *l)
{
    ch->hash_seed ^= 1;
}
static void ck_layout(struct checkpoint_head *ch, uint8_t *b,
                      const struct kvftl_image_ckpt_layout *l)
{
    ch->layout = 0;
}

/*
 * Each checkpoint field out of range, with the checksums made to match
 * (the global depth used in a shift before it was checked, a write
 * pointer or open stripe that sent later programs over programmed pages,
 * a directory naming a page that does not exist, gauges the index
 * contradicts, a hash seed the keys were not hashed with, ...): the mount
 * names the field and rebuilds from the log.
 */
static void test_checkpoint_fields_out_of_range(void)
{
    static const struct ckpt_case cases[] = {
        {"open data stripe", ck_vl_stripe, "the open data stripe is 13; it must be below 10"},
        {"global depth", ck_depth,
         "its global depth is 31; it must be at most 6 for 4 index pages"},
        {"index pages", ck_npages, "it holds 0 index pages"},
        {"directory", ck_dir, "directory slot 0 names index page 9; there are 4"},
        {"write pointer", ck_wp, "the write pointer 2363392 of the open data stripe"},
        {"stripe state", ck_state, "stripe 2 has state 7"},
        {"erased flag", ck_erased, "stripe 4 has erased flag 2"},
        {"allocation cursor", ck_cursor, "the allocation cursor is 50"},
        {"live keys", ck_keys, "live keys 601 but its index holds 600"},
        {"local depth", ck_page_depth, "index page 0 has local depth 9"},
        {"index stream", ck_stream, "the index stream's next page is 577"},
        {"stripe count", ck_stripes, "it describes 11 stripes; the image has 10"},
        {"index page address", ck_page_ppn,
         "index page 0 is at NAND page 3, which is not an index page"},
        {"valid bytes", ck_valid, "stripe 0 has 4096 valid bytes but its index references"},
        {"hash seed", ck_seed, "holds another key (or the hash seed is wrong)"},
        {"layout", ck_layout, "written by an older kvftl (layout 0; this one reads layout 2)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        printf("# checkpoint field: %s\n", cases[i].what);
        struct kvftl_config c = damaged_setup();
        struct kvftl_image im;
        CU_ASSERT_FATAL(kvftl_image_open(&im, image));
        size_t len = 0;
        uint8_t *b = kvftl_image_checkpoint(&im, &len);
        CU_ASSERT_FATAL(b != NULL);
        struct checkpoint_head ch;
        memcpy(&ch, b, sizeof(ch));
        struct kvftl_image_ckpt_layout l = kvftl_image_ckpt_layout(&ch);
        cases[i].change(&ch, b, &l);
        memcpy(b, &ch, sizeof(ch));
        CU_ASSERT(kvftl_image_reseal(&im, b, len));
        g_free(b);
        kvftl_image_close(&im);
        expect_rescan(&c, cases[i].why);
    }
}

static int count_emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                      uint32_t value_bytes)
{
    (*(int *)opaque)++;
    return 0;
}

/*
 * A blob damaged in place after a clean close (key 5's key-length byte
 * set past its blob): the clean mount does not read blobs, so the index
 * still names it. Iterating keys and values reports it once as Unrecovered
 * Error and goes on past it (it used to copy ~4 GiB from past the blob),
 * a Retrieve does not find the key, and the
 * FTL check names the blob.
 */
static void test_damaged_blob_after_clean_close(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint8_t kb = 250;
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_page_off(&im, 0) + 5 * 1024 + 1, &kb, 1));
    kvftl_image_close(&im);
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    struct kvftl_cpl cpl;
    uint32_t h;
    int n = 0;
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEY_VALUES, 0, &h, &cpl);
    CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
    int unrecovered = 0;
    for (int step = 0; step < DMG_KEYS; step++) {
        kvftl_iter_next(f, h, 64, count_emit, &n, 0, &cpl);
        unrecovered += cpl.status == KVFTL_UNRECOVERED_ERROR;
        if (cpl.status != KVFTL_OK && cpl.status != KVFTL_UNRECOVERED_ERROR) {
            break;
        }
    }
    CU_ASSERT_EQUAL(cpl.status, KVFTL_ITERATOR_END);
    CU_ASSERT_EQUAL(n, DMG_KEYS - 1);
    CU_ASSERT_EQUAL(unrecovered, 1); /* the damaged blob is reported, once, not skipped */
    kvftl_iter_close(f, h, 0, &cpl);
    CU_ASSERT_EQUAL(exist(f, "key-000000000005"), KVFTL_KEY_DOES_NOT_EXIST);
    char err[512];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err,
                           "blob at 5120 does not match its index entry (type 0xb1, 250+50 bytes)");
    kvftl_close(f);
    unlink(image);
}

/*
 * One byte of a value flipped in the image after a clean close (the mount
 * reads no blob, so it mounts clean): Retrieve of that key, whole or any
 * part of it, is Unrecovered Error with no byte moved, as a drive whose ECC
 * fails; every other key reads back exactly. Key i is the blob at i KiB
 * (24-byte header, 16-byte key, 50-byte value): byte 10 of key 5's value is
 * at 5 * 1024 + 24 + 16 + 10.
 */
static void test_damaged_value_unrecovered(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint64_t off = kvftl_image_page_off(&im, 0) + 5 * 1024 + 24 + 16 + 10;
    uint8_t b;
    CU_ASSERT(kvftl_image_read(&im, off, &b, 1));
    CU_ASSERT_EQUAL(b, 7);
    b ^= 0x01;
    CU_ASSERT(kvftl_image_write(&im, off, &b, 1));
    kvftl_image_close(&im);

    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_FALSE(f->mount.scanned);
    static const char key[] = "key-000000000005";
    uint8_t buf[64];
    struct kvftl_cpl cpl;
    memset(buf, 0xee, sizeof(buf));
    kvftl_retrieve(f, key, 16, buf, 0, sizeof(buf), 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_UNRECOVERED_ERROR);
    CU_ASSERT_EQUAL(cpl.xfer_bytes, 0);
    /* a part that does not hold the damaged byte: the whole record is verified */
    kvftl_retrieve(f, key, 16, buf, 0, 5, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_UNRECOVERED_ERROR);
    CU_ASSERT_EQUAL(cpl.xfer_bytes, 0);
    kvftl_retrieve(f, key, 16, buf, 40, 10, 0, &cpl);
    CU_ASSERT_EQUAL(cpl.status, KVFTL_UNRECOVERED_ERROR);
    CU_ASSERT_EQUAL(cpl.xfer_bytes, 0);
    int moved = 0;
    for (size_t i = 0; i < sizeof(buf); i++) {
        moved += buf[i] != 0xee;
    }
    CU_ASSERT_EQUAL(moved, 0);

    /* the batch path: the damaged key in the middle of three */
    uint8_t bufs[3][64];
    memset(bufs, 0xee, sizeof(bufs));
    struct kvftl_retrieve_req reqs[3] = {
        {.key = "key-000000000004", .key_bytes = 16, .buf = bufs[0], .buf_bytes = 64},
        {.key = key, .key_bytes = 16, .buf = bufs[1], .buf_bytes = 64},
        {.key = "key-000000000006", .key_bytes = 16, .buf = bufs[2], .buf_bytes = 64},
    };
    struct kvftl_cpl cpls[3];
    kvftl_retrieve_batch(f, reqs, cpls, 3);
    CU_ASSERT_EQUAL(cpls[0].status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpls[0].xfer_bytes, 50);
    CU_ASSERT_EQUAL(cpls[1].status, KVFTL_UNRECOVERED_ERROR);
    CU_ASSERT_EQUAL(cpls[1].xfer_bytes, 0);
    CU_ASSERT_EQUAL(cpls[2].status, KVFTL_OK);
    CU_ASSERT_EQUAL(cpls[2].xfer_bytes, 50);
    moved = 0;
    for (size_t i = 0; i < 64; i++) {
        moved += bufs[1][i] != 0xee;
    }
    CU_ASSERT_EQUAL(moved, 0);
    CU_ASSERT_EQUAL(bufs[0][49], 7);
    CU_ASSERT_EQUAL(bufs[2][0], 7);
    /* each refusal counts once as a media error (SMART's Media and Data Integrity Errors) */
    CU_ASSERT_EQUAL(stats(f).media_errors, 4);

    /* the damage is the record's alone: every other key is intact */
    CU_ASSERT_EQUAL(count_bad(f, 0, 5, 7), 0);
    CU_ASSERT_EQUAL(count_bad(f, 6, DMG_KEYS, 7), 0);
    /* the key still exists (its entry is intact); only its bytes cannot be read */
    CU_ASSERT_EQUAL(exist(f, key), KVFTL_OK);
    char err[512];
    CU_ASSERT_EQUAL(kvftl_check(f, err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "blob at 5120 fails its checksum");
    kvftl_close(f);
    unlink(image);
}

/* Collects what an iteration emits: the keys, and whether every value byte was 7. */
struct iter_seen {
    int keys;
    int bad_values;
    int key5;
};

static int seen_emit(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                     uint32_t value_bytes)
{
    struct iter_seen *s = opaque;
    s->keys++;
    s->key5 += key_bytes == 16 && memcmp(key, "key-000000000005", 16) == 0;
    for (uint32_t i = 0; i < value_bytes; i++) {
        if (((const uint8_t *)value)[i] != 7) {
            s->bad_values++;
            break;
        }
    }
    return 0;
}

/* Iterate @kind to the end, 64 entries a step; returns the Unrecovered Error steps. */
static int iterate_all(struct kvftl *f, enum kvftl_iter_kind kind, struct iter_seen *seen)
{
    struct kvftl_cpl cpl;
    uint32_t h;
    int unrecovered = 0;
    memset(seen, 0, sizeof(*seen));
    kvftl_iter_open(f, 0, 0, kind, 0, &h, &cpl);
    CU_ASSERT_EQUAL_FATAL(cpl.status, 0);
    for (int step = 0; step < 2 * DMG_KEYS; step++) {
        kvftl_iter_next(f, h, 64, seen_emit, seen, 0, &cpl);
        if (cpl.status == KVFTL_UNRECOVERED_ERROR) {
            CU_ASSERT_EQUAL(cpl.value_bytes, 0); /* an error step emits nothing */
            unrecovered++;
        } else if (cpl.status != KVFTL_OK) {
            break;
        }
    }
    CU_ASSERT_EQUAL(cpl.status, KVFTL_ITERATOR_END);
    kvftl_iter_close(f, h, 0, &cpl);
    return unrecovered;
}

/*
 * Iterators read what Retrieve reads. Key 5's value damaged (one byte, as
 * above): iterating keys and values reports it once as Unrecovered Error,
 * emits every other pair with its exact bytes, and goes on to the end;
 * iterating keys alone returns all 600 keys (it reads no value, and each
 * key is checked against its index entry's hash). Key 7's key damaged
 * (one byte): both kinds report it once and return the other 599 keys.
 */
static void test_damaged_blob_iterators(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint64_t off = kvftl_image_page_off(&im, 0) + 5 * 1024 + 24 + 16 + 10;
    uint8_t b = 7 ^ 0x01;
    CU_ASSERT(kvftl_image_write(&im, off, &b, 1));
    kvftl_image_close(&im);

    struct kvftl *f = open_or_die(&c);
    struct iter_seen seen;
    CU_ASSERT_EQUAL(iterate_all(f, KVFTL_ITER_KEY_VALUES, &seen), 1);
    CU_ASSERT_EQUAL(seen.keys, DMG_KEYS - 1);
    CU_ASSERT_EQUAL(seen.key5, 0);
    CU_ASSERT_EQUAL(seen.bad_values, 0);
    CU_ASSERT_EQUAL(iterate_all(f, KVFTL_ITER_KEYS, &seen), 0);
    CU_ASSERT_EQUAL(seen.keys, DMG_KEYS);
    CU_ASSERT_EQUAL(stats(f).media_errors, 1);
    kvftl_close(f);

    /* key 7's last key byte: '7' becomes '6' */
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    b = '6';
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_page_off(&im, 0) + 7 * 1024 + 24 + 15, &b, 1));
    kvftl_image_close(&im);
    f = open_or_die(&c);
    CU_ASSERT_EQUAL(iterate_all(f, KVFTL_ITER_KEYS, &seen), 1);
    CU_ASSERT_EQUAL(seen.keys, DMG_KEYS - 1);
    CU_ASSERT_EQUAL(iterate_all(f, KVFTL_ITER_KEY_VALUES, &seen), 2);
    CU_ASSERT_EQUAL(seen.keys, DMG_KEYS - 2);
    CU_ASSERT_EQUAL(seen.bad_values, 0);
    CU_ASSERT_EQUAL(stats(f).media_errors, 3);
    kvftl_close(f);
    unlink(image);
}

/* A flipped byte in the checkpoint: its checksum fails, and the mount says so. */
static void test_checkpoint_checksum_mismatch(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint8_t b;
    CU_ASSERT(kvftl_image_read(&im, im.ckpt_off + 100, &b, 1));
    b ^= 0x10;
    CU_ASSERT(kvftl_image_write(&im, im.ckpt_off + 100, &b, 1));
    kvftl_image_close(&im);
    expect_rescan(&c, "the checkpoint does not match its checksum");
}

/* The file cut just after the spare areas: the checkpoint is gone, the log is intact. */
static void test_checkpoint_cut_off(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint64_t ckpt = im.ckpt_off, bytes = im.h.checkpoint_bytes;
    kvftl_image_close(&im);
    CU_ASSERT_EQUAL(truncate(image, (off_t)ckpt), 0);
    char why[160];
    snprintf(why, sizeof(why),
             "the checkpoint (%llu bytes at offset %llu) is past the end of the file "
             "(%llu bytes)",
             (unsigned long long)bytes, (unsigned long long)ckpt, (unsigned long long)ckpt);
    expect_rescan(&c, why);
}

/*
 * An image truncated to half (it used to mount empty and be grown back:
 * the data gone without a word): refused with a sentence naming the file,
 * and the file is left as it was.
 */
static void test_truncated_image_refused(void)
{
    struct kvftl_config c = damaged_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint64_t need = im.ckpt_off;
    kvftl_image_close(&im);
    struct stat st;
    CU_ASSERT_EQUAL(stat(image, &st), 0);
    off_t half = st.st_size / 2;
    CU_ASSERT_EQUAL(truncate(image, half), 0);
    char err[512], want[512];
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s is %lld bytes, shorter than the %llu bytes of NAND and "
             "spare areas its header describes: the file was truncated, and what it lost cannot be "
             "recovered (restore it from a copy, or delete it to start an empty device)",
             image, (long long)half, (unsigned long long)need);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT_EQUAL(stat(image, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, half);
    unlink(image);
}

/* A short file that is not an image at all is refused and left untouched (it used to be grown). */
static void test_short_foreign_file_refused(void)
{
    image_new();
    FILE *fp = fopen(image, "w");
    CU_ASSERT_FATAL(fp != NULL);
    fputs("not an image\n", fp);
    fclose(fp);
    struct kvftl_config c = small_config();
    c.image_path = image;
    char err[512], want[512];
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s is 13 bytes, too short for a kvftl image header "
             "(4096 bytes): it is not a kvftl image",
             image);
    CU_ASSERT_STRING_EQUAL(err, want);
    struct stat st;
    CU_ASSERT_EQUAL(stat(image, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 13);
    unlink(image);
}

/*
 * A dirty image (its process died without closing): a child opens it,
 * stores keys 0..99 (50-byte values of byte 9; blob i at byte i x 1024 of
 * stripe 0), flushes and exits without kvftl_close().
 */
static struct kvftl_config dirty_setup(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    c.plp = false;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct kvftl *f = open_or_die(&c);
        fill(f, 0, 100, 9);
        flush(f);
        _exit(addr_of(f, "key-000000000040") == 40 * 1024 ? 0 : 1);
    }
    int status;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return c;
}

/* The dirty image, undamaged: the scan finds every key and the note says only that. */
static void test_dirty_image_note(void)
{
    struct kvftl_config c = dirty_setup();
    struct kvftl *f = open_or_die(&c);
    char want[512];
    snprintf(want, sizeof(want),
             "image_path %s was not closed cleanly; the index was rebuilt by "
             "scanning the log: 100 keys found.",
             image);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kvftl_mount_note(f));
    CU_ASSERT_STRING_EQUAL(kvftl_mount_note(f), want);
    CU_ASSERT_EQUAL(count_bad(f, 0, 100, 9), 0);
    kvftl_close(f);
    unlink(image);
}

/*
 * A blob header overwritten in the middle of a scanned stripe (key 40's
 * type byte): the scan cannot find where the next record starts, so the
 * 60 keys after it are lost -- and the note says where and how much.
 */
static void test_scan_reports_unparseable_record(void)
{
    struct kvftl_config c = dirty_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint8_t t = 0x77;
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_page_off(&im, 0) + 40 * 1024, &t, 1));
    kvftl_image_close(&im);
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->mount.cut_stripes, 1);
    CU_ASSERT_EQUAL(f->mount.cut_stripe, 0);
    CU_ASSERT_EQUAL(f->mount.cut_offset, 40960);
    CU_ASSERT_EQUAL(f->mount.unread_bytes, 61440);
    char want[768];
    snprintf(want, sizeof(want),
             "image_path %s was not closed cleanly; the index was rebuilt by "
             "scanning the log: 40 keys found; the log of 1 stripe cannot be parsed to its end "
             "(stripe 0 from offset 40960, record type 0x77): 61440 programmed bytes after that "
             "were not read, and the records in them are lost.",
             image);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kvftl_mount_note(f));
    CU_ASSERT_STRING_EQUAL(kvftl_mount_note(f), want);
    CU_ASSERT_EQUAL(count_bad(f, 0, 40, 9), 0);
    CU_ASSERT_EQUAL(count_absent(f, 40, 100), 60);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

/* A value byte flipped in the dirty image: that record fails its checksum, is skipped and counted.
 */
static void test_scan_counts_bad_checksum(void)
{
    struct kvftl_config c = dirty_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint8_t v;
    uint64_t off = kvftl_image_page_off(&im, 0) + 40 * 1024 + BLOB_HEADER_BYTES + 16 + 10;
    CU_ASSERT(kvftl_image_read(&im, off, &v, 1));
    CU_ASSERT_EQUAL(v, 9);
    v ^= 0xff;
    CU_ASSERT(kvftl_image_write(&im, off, &v, 1));
    kvftl_image_close(&im);
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->mount.bad_checksums, 1);
    char want[512];
    snprintf(want, sizeof(want),
             "image_path %s was not closed cleanly; the index was rebuilt by "
             "scanning the log: 99 keys found; 1 record whose checksum fails was skipped (a Store "
             "cut short by the crash, or damage).",
             image);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kvftl_mount_note(f));
    CU_ASSERT_STRING_EQUAL(kvftl_mount_note(f), want);
    CU_ASSERT_EQUAL(count_bad(f, 0, 40, 9), 0);
    CU_ASSERT_EQUAL(exist(f, "key-000000000040"), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(count_bad(f, 41, 100, 9), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

/*
 * The spare area of the first page of the data stripe overwritten with an
 * unknown kind (the stripe used to be skipped: every key lost silently):
 * its other pages say it holds data, so it is scanned, and the damaged
 * spare area is counted.
 */
static void test_scan_survives_damaged_spare_area(void)
{
    struct kvftl_config c = dirty_setup();
    struct kvftl_image im;
    CU_ASSERT_FATAL(kvftl_image_open(&im, image));
    uint32_t kind = 0x12345678;
    CU_ASSERT(kvftl_image_write(&im, kvftl_image_oob_off(&im, 0), &kind, 4));
    kvftl_image_close(&im);
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(f->mount.bad_spares, 1);
    char want[512];
    snprintf(
        want, sizeof(want),
        "image_path %s was not closed cleanly; the index was rebuilt by "
        "scanning the log: 100 keys found; 1 page has a damaged spare area (the first: page 0, "
        "kind 0x12345678).",
        image);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kvftl_mount_note(f));
    CU_ASSERT_STRING_EQUAL(kvftl_mount_note(f), want);
    CU_ASSERT_EQUAL(count_bad(f, 0, 100, 9), 0);
    assert_consistent(f);
    kvftl_close(f);
    unlink(image);
}

/*
 * Image locking: while one process has the image open, another gets a
 * sentence naming the file and that process; a second device on the same
 * image in the same process is refused too. Once the holder is gone the
 * image opens.
 */
static void test_image_locked(void)
{
    image_new();
    struct kvftl_config c = small_config();
    c.image_path = image;
    int up[2], down[2];
    CU_ASSERT_FATAL(pipe(up) == 0 && pipe(down) == 0);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct kvftl *f = open_or_die(&c);
        char b = 1;
        if (write(up[1], &b, 1) != 1 || read(down[0], &b, 1) != 1) {
            _exit(1);
        }
        kvftl_close(f);
        _exit(0);
    }
    char b;
    CU_ASSERT_EQUAL(read(up[0], &b, 1), 1);
    char err[512], want[512];
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s is in use by process %d (another QEMU or kvftl "
             "program has it open); an image can back only one device at a time",
             image, (int)pid);
    CU_ASSERT_STRING_EQUAL(err, want);
    CU_ASSERT(write(down[1], &b, 1) == 1);
    int status;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    snprintf(want, sizeof(want),
             "image_path %s is in use by another device or process (its process "
             "id is not known); an image can back only one device at a time",
             image);
    CU_ASSERT_STRING_EQUAL(err, want);
    kvftl_close(f);
    f = open_or_die(&c);
    kvftl_close(f);
    close(up[0]);
    close(up[1]);
    close(down[0]);
    close(down[1]);
    unlink(image);
}

/*
 * A Store refused with CAPACITY_EXCEEDED leaves nothing a crash mount
 * could bring back. With the device's seed known (test hook), 218 keys
 * sharing their top 10 hash bits: 217 are stored, the 218th is refused by
 * the directory bound (its blob must never reach the log). 40 ordinary
 * keys are stored after it. Power is cut (PLP dumps the page buffer) and
 * the crash mount rebuilds the index by scanning the log, under a new
 * seed. The refused key is absent (KEY_DOES_NOT_EXIST), every one of the
 * 257 acknowledged keys reads back with its bytes, and the counts agree.
 */
static void test_refused_store_not_resurrected(void)
{
    static char keys[218][17];
    struct kvftl_config c = small_config();
    c.index = KVFTL_INDEX_HASH; /* the hash design refuses at the Store (pm983: at its merge) */
    c.index_page_bytes = 4096;
    struct kvftl *f = open_or_die(&c);
    store_colliding_keys(f, keys, 50, 0xaa);
    fill(f, 0, 40, 7);
    CU_ASSERT_EQUAL(stats(f).live_keys, 257);
    cycle(f);
    CU_ASSERT_NOT_EQUAL(f->index.hash.idx.hash_seed, KNOWN_SEED);
    CU_ASSERT_EQUAL(get_check(f, keys[217], 50, 0xaa), KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(count_bad_colliding(f, keys, 50), 0);
    CU_ASSERT_EQUAL(count_bad(f, 0, 40, 7), 0);
    CU_ASSERT_EQUAL(stats(f).live_keys, 257);
    assert_consistent(f);
    kvftl_close(f);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_clean_reopen_uses_checkpoint),
    TAP_TEST_FN(test_crash_reopen_scans_log),
    TAP_TEST_FN(test_plp_on_buffer_survives),
    TAP_TEST_FN(test_plp_off_buffer_lost),
    TAP_TEST_FN(test_power_cut_mid_spanning_blob_plp),
    TAP_TEST_FN(test_power_cut_mid_spanning_blob_no_plp),
    TAP_TEST_FN(test_deleted_stays_deleted),
    TAP_TEST_FN(test_latest_version_wins),
    TAP_TEST_FN(test_recovery_after_gc),
    TAP_TEST_FN(test_image_geometry_mismatch),
    TAP_TEST_FN(test_image_index_design_kept),
    TAP_TEST_FN(test_image_index_design_read),
    TAP_TEST_FN(test_crash_scan_fine_units_and_page_fit),
    TAP_TEST_FN(test_crash_scan_data_area),
    TAP_TEST_FN(test_format),
    TAP_TEST_FN(test_killed_process_image),
    TAP_TEST_FN(test_sigkill_plp_keeps_completed),
    TAP_TEST_FN(test_sigkill_plp_backfill_gaps),
    TAP_TEST_FN(test_sigkill_no_plp_keeps_flushed),
    TAP_TEST_FN(test_refused_store_not_resurrected),
    TAP_TEST_FN(test_clean_mount_has_no_note),
    TAP_TEST_FN(test_overwritten_index_page_rescanned),
    TAP_TEST_FN(test_index_entry_outside_log_rescanned),
    TAP_TEST_FN(test_checkpoint_fields_out_of_range),
    TAP_TEST_FN(test_damaged_blob_after_clean_close),
    TAP_TEST_FN(test_damaged_value_unrecovered),
    TAP_TEST_FN(test_damaged_blob_iterators),
    TAP_TEST_FN(test_checkpoint_checksum_mismatch),
    TAP_TEST_FN(test_checkpoint_cut_off),
    TAP_TEST_FN(test_truncated_image_refused),
    TAP_TEST_FN(test_short_foreign_file_refused),
    TAP_TEST_FN(test_dirty_image_note),
    TAP_TEST_FN(test_scan_reports_unparseable_record),
    TAP_TEST_FN(test_scan_counts_bad_checksum),
    TAP_TEST_FN(test_scan_survives_damaged_spare_area),
    TAP_TEST_FN(test_image_locked),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("recovery", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
