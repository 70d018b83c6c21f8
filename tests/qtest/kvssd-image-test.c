/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtests of the image= file as hostile input: a damaged image either
 * mounts by scanning its log (QEMU starts, answers, holds every key, and
 * says on stderr what the scan found) or stops QEMU with a sentence naming
 * the file; and two QEMUs on one image: the second is refused with a
 * sentence naming the file and the process that holds it.
 *
 * The device is small (1 channel x 1 die x 10 blocks x 576 pages of 4 KiB:
 * a 23 MiB sparse image), so the file offsets below are computed by hand
 * from the layout in kvftl/media/nand.h and kvftl/kv/recovery.h: a 4 KiB header,
 * the NAND pages, the 16-byte spare areas (rounded up to 4 KiB), the
 * checkpoint.
 */
#include "kvssd-common.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define IMG_PROPS                                                          \
    "channels=1,dies-per-channel=1,blocks-per-die=10,pages-per-block=576," \
    "page-size-bytes=4096,gc-high-watermark-blocks=3,gc-low-watermark-blocks=2"
#define IMG_PAGES (10ull * 576)
#define IMG_NAND_OFF 4096ull
#define IMG_OOB_OFF (IMG_NAND_OFF + IMG_PAGES * 4096)
#define IMG_CKPT_OFF (IMG_OOB_OFF + ((IMG_PAGES * 16 + 4095) & ~4095ull))
#define IMG_KIND_INDEX 0x494e4458u /* "INDX": NAND_PAGE_INDEX in a spare area */
#define IMG_KEYS 300

typedef struct ImgDir {
    char *dir, *img, *props, *log;
} ImgDir;

static ImgDir *img_new(void)
{
    ImgDir *t = g_new0(ImgDir, 1);
    t->dir = g_dir_make_tmp("kvssd-image-XXXXXX", NULL);
    g_assert(t->dir);
    t->img = g_build_filename(t->dir, "nand.img", NULL);
    t->log = g_build_filename(t->dir, "stderr.log", NULL);
    t->props = g_strdup_printf(IMG_PROPS ",image=%s", t->img);
    return t;
}

static void img_free(ImgDir *t)
{
    unlink(t->img);
    unlink(t->log);
    rmdir(t->dir);
    g_free(t->dir);
    g_free(t->img);
    g_free(t->log);
    g_free(t->props);
    g_free(t);
}

static void img_key(char *key, int i)
{
    snprintf(key, 16, "img-%04d", i);
}

static void img_value(uint8_t *v, int i)
{
    for (int j = 0; j < 100; j++) {
        v[j] = (uint8_t)(i * 7 + j * 13 + 1);
    }
}

/* A QEMU stores IMG_KEYS keys (100-byte values) and exits (SIGTERM: the image is checkpointed). */
static void img_fill(ImgDir *t)
{
    KvDev *d = kv_ready(t->props);
    uint8_t v[100];
    char key[16];
    for (int i = 0; i < IMG_KEYS; i++) {
        img_key(key, i);
        img_value(v, i);
        g_assert_cmphex(kv_store(d, key, v, sizeof(v), 0), ==, 0);
    }
    kv_stop(d);
}

/* Start QEMU on the image with its stderr going to t->log (warnings of realize land there). */
static KvDev *img_start_logged(ImgDir *t)
{
    int saved = dup(2);
    int fd = open(t->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    g_assert(saved >= 0 && fd >= 0);
    fflush(stderr);
    dup2(fd, 2);
    close(fd);
    KvDev *d = kv_ready(t->props);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    return d;
}

/* Every key is back with its exact bytes, and the FTL check passes. */
static void img_check_all(KvDev *d)
{
    uint8_t v[100], back[128];
    char key[16];
    for (int i = 0; i < IMG_KEYS; i++) {
        img_key(key, i);
        img_value(v, i);
        KvCqe c = kv_retrieve(d, key, back, sizeof(back));
        g_assert_cmphex(c.status, ==, 0);
        g_assert_cmpuint(c.dw0, ==, sizeof(v));
        g_assert(memcmp(v, back, sizeof(v)) == 0);
    }
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
}

static char *img_read_log(ImgDir *t)
{
    char *text = NULL;
    g_assert(g_file_get_contents(t->log, &text, NULL, NULL));
    return text;
}

/*
 * Run QEMU with the device directly (as tests/qtest/run.sh's realize
 * checks do) and return its exit status and output. A QEMU that started
 * would run forever: timeout(1) stops it after 60 s, which fails the test.
 */
static int img_run_direct(ImgDir *t, char **out)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    const char *bios = g_getenv("KVSSD_BIOS_DIR") ? g_getenv("KVSSD_BIOS_DIR")
                                                  : "/usr/share/seabios";
    g_autofree char *dev = g_strdup_printf("kvssd,serial=QT02,%s", t->props);
    const char *argv[] = {
        "timeout",  "60", qemu,     "-L",    bios,       "-L",   "/usr/share/qemu",
        "-machine", "pc", "-accel", "qtest", "-display", "none", "-nodefaults",
        "-device",  dev,  NULL};
    int status = -1;
    g_autoptr(GError) err = NULL;
    g_assert(qemu);
    g_assert(g_spawn_sync(NULL, (char **)argv, NULL,
                          G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, out,
                          &status, &err));
    return status;
}

/* Run QEMU with the device directly, as img_run_direct(), with @setup run in the child first. */
static int img_run_direct_setup(ImgDir *t, GSpawnChildSetupFunc setup, char **out)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    const char *bios = g_getenv("KVSSD_BIOS_DIR") ? g_getenv("KVSSD_BIOS_DIR")
                                                  : "/usr/share/seabios";
    g_autofree char *dev = g_strdup_printf("kvssd,serial=QT02,%s", t->props);
    const char *argv[] = {
        "timeout",  "60", qemu,     "-L",    bios,       "-L",   "/usr/share/qemu",
        "-machine", "pc", "-accel", "qtest", "-display", "none", "-nodefaults",
        "-device",  dev,  NULL};
    int status = -1;
    g_autoptr(GError) err = NULL;
    g_assert(qemu);
    g_assert(g_spawn_sync(NULL, (char **)argv, NULL,
                          G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, setup, NULL, NULL, out,
                          &status, &err));
    return status;
}

static void fsize_limit_16m(gpointer unused)
{
    struct rlimit rl = {.rlim_cur = 16 << 20, .rlim_max = 16 << 20};
    (void)unused;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) {
        _exit(127);
    }
}

/*
 * A new image under a 16 MiB file-size limit (RLIMIT_FSIZE; the image is
 * 23,691,264 bytes): QEMU used to die of SIGXFSZ (exit 153, nothing on
 * stderr) and leave a 0-byte file. Now realize fails with the sentence
 * naming the file, its size and the limit, QEMU exits 1, and the file it
 * created is gone.
 */
static void test_fsize_limit_refused(void)
{
    ImgDir *t = img_new();
    g_autofree char *out = NULL;
    int status = img_run_direct_setup(t, fsize_limit_16m, &out);
    g_autofree char *want = g_strdup_printf(
        "image_path %s cannot grow to %llu bytes: the process's file-size "
        "limit (RLIMIT_FSIZE, ulimit -f) is 16777216 bytes",
        t->img, (unsigned long long)IMG_CKPT_OFF);
    if (!strstr(out, want)) {
        g_printerr("QEMU's output: %s (status %d)\n", out, status);
    }
    g_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(out, want));
    struct stat st;
    g_assert(stat(t->img, &st) != 0 && errno == ENOENT);
    img_free(t);
}

#define FULL_VALUE_BYTES 16384
#define FULL_MAX_STORES 2000

static void full_value(uint8_t *v, int i)
{
    for (int j = 0; j < FULL_VALUE_BYTES; j++) {
        v[j] = (uint8_t)(i * 31 + j * 7 + 3);
    }
}

static uint16_t full_flush(KvDev *d)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_FLUSH, 1);
    return kv_cmd(d, 1, &s).status;
}

/* Count the occurrences of @needle in @hay. */
static int count_in(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/*
 * The image on a 2 MiB tmpfs (a private mount namespace; skipped where
 * mount(2) is not allowed), 16 KiB Stores with a Flush after every 4:
 * QEMU used to die of SIGBUS once the file system was full. Now the
 * Store that needs a page the file system cannot give fails with
 * Internal Error (0006h), stderr says why in one sentence naming the
 * file and ENOSPC, later Stores and Flushes fail the same way, reads and
 * admin commands are served (key 0 exact, Identify, CSTS.RDY). After a
 * restart with 64 MiB every flushed value reads back exact, the refused
 * key does not exist, and Stores succeed again.
 */
static void test_full_file_system(void)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        g_autofree char *why = g_strdup_printf("needs a private mount namespace (root): %s",
                                               g_strerror(errno));
        g_test_skip(why);
        return;
    }
    ImgDir *t = img_new();
    g_autofree char *fs = g_build_filename(t->dir, "fs", NULL);
    g_assert(mkdir(fs, 0755) == 0);
    if (mount("tmpfs", fs, "tmpfs", 0, "size=2M") != 0) {
        g_autofree char *why = g_strdup_printf("mount -t tmpfs: %s", g_strerror(errno));
        rmdir(fs);
        img_free(t);
        g_test_skip(why);
        return;
    }
    g_free(t->img);
    t->img = g_build_filename(fs, "nand.img", NULL);
    g_free(t->props);
    t->props = g_strdup_printf(IMG_PROPS ",image=%s", t->img);

    KvDev *d = img_start_logged(t); /* the log stays outside the tmpfs */
    static uint8_t v[FULL_VALUE_BYTES], back[FULL_VALUE_BYTES];
    char key[16];
    int acked = 0, flushed = 0, i;
    uint16_t st = 0;
    for (i = 0; i < FULL_MAX_STORES; i++) {
        img_key(key, i);
        full_value(v, i);
        st = kv_store(d, key, v, sizeof(v), 0);
        if (st != 0) {
            break;
        }
        acked = i + 1;
        if (acked % 4 == 0) {
            st = full_flush(d);
            if (st != 0) {
                break;
            }
            flushed = acked;
        }
    }
    g_test_message("%d Stores acknowledged, %d flushed", acked, flushed);
    /* 2 MiB less the header and spare areas (96 KiB) holds fewer than 128 such values */
    g_assert_cmpint(acked, >, 64);
    g_assert_cmpint(acked, <, 128);
    g_assert_cmpint(flushed, >, acked - 4);
    g_assert_cmphex(st, ==, KVSSD_SC_INTERNAL_ERROR);
    /* the device now refuses writes and serves everything else */
    g_assert_cmphex(kv_store(d, "small", v, 8, 0), ==, KVSSD_SC_INTERNAL_ERROR);
    g_assert_cmphex(full_flush(d), ==, KVSSD_SC_INTERNAL_ERROR);
    img_key(key, 0);
    full_value(v, 0);
    KvCqe c = kv_retrieve(d, key, back, sizeof(back));
    g_assert_cmphex(c.status, ==, 0);
    g_assert(memcmp(v, back, sizeof(v)) == 0);
    static uint8_t id[KVSSD_IDENTIFY_BYTES];
    g_assert_cmphex(kv_identify(d, KVSSD_CNS_CTRL, 0, 0, id), ==, 0);
    g_assert_cmphex(kv_rd32(d, KVSSD_REG_CSTS) & KVSSD_CSTS_RDY, ==, KVSSD_CSTS_RDY);
    kv_stop(d);
    g_autofree char *log = img_read_log(t);
    g_autofree char *want = g_strdup_printf("kvssd: image_path %s cannot allocate NAND page ",
                                            t->img);
    if (count_in(log, want) != 1 || !strstr(log, g_strerror(ENOSPC))) {
        g_printerr("QEMU's stderr: %s\n", log);
    }
    g_assert_cmpint(count_in(log, want), ==, 1);
    g_assert(strstr(log, g_strerror(ENOSPC)));

    g_assert(mount("tmpfs", fs, NULL, MS_REMOUNT, "size=64M") == 0);
    d = img_start_logged(t);
    for (i = 0; i < flushed; i++) {
        img_key(key, i);
        full_value(v, i);
        c = kv_retrieve(d, key, back, sizeof(back));
        g_assert_cmphex(c.status, ==, 0);
        g_assert_cmpuint(c.dw0, ==, sizeof(v));
        g_assert(memcmp(v, back, sizeof(v)) == 0);
    }
    img_key(key, acked);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, key), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_store(d, "after", v, 8, 0), ==, 0);
    kv_stop(d);
    unlink(t->img);
    umount(fs);
    rmdir(fs);
    img_free(t);
}

/*
 * Every copy of every index page overwritten after a clean exit (one
 * overwritten index page used to crash QEMU at the next List): the index
 * pages no longer match their checksums, so the mount rebuilds the index
 * from the log; QEMU starts, answers, every key is there, and stderr says
 * what happened.
 */
static void test_damaged_index_pages(void)
{
    ImgDir *t = img_new();
    img_fill(t);
    int fd = open(t->img, O_RDWR);
    g_assert(fd >= 0);
    static uint32_t oob[IMG_PAGES * 4];
    g_assert(pread(fd, oob, sizeof(oob), IMG_OOB_OFF) == (ssize_t)sizeof(oob));
    static uint8_t junk[4096];
    memset(junk, 0xa5, sizeof(junk));
    int damaged = 0;
    for (uint64_t p = 0; p < IMG_PAGES; p++) {
        if (le32_to_cpu(oob[p * 4]) == IMG_KIND_INDEX) {
            g_assert(pwrite(fd, junk, sizeof(junk), IMG_NAND_OFF + p * 4096) ==
                     (ssize_t)sizeof(junk));
            damaged++;
        }
    }
    close(fd);
    g_assert_cmpint(damaged, >=, 2);

    KvDev *d = img_start_logged(t);
    img_check_all(d);
    kv_stop(d);
    g_autofree char *log = img_read_log(t);
    /* the lsm design names its sorted pages so */
    const char *page = kv_qtest_index_is("lsm") ? "lsm" : "index";
    g_autofree char *want1 = g_strdup_printf("warning: image_path %s: %s page 0 (NAND page ",
                                             t->img, page);
    g_autofree char *want2 = g_strdup_printf(
        ") does not match its checksum in the checkpoint; the index "
        "was rebuilt by scanning the log: %d keys found.",
        IMG_KEYS);
    if (!strstr(log, want1) || !strstr(log, want2)) {
        g_printerr("QEMU's stderr: %s\n", log);
    }
    g_assert(strstr(log, want1) && strstr(log, want2));
    img_free(t);
}

/* A byte of the checkpoint flipped: it fails its checksum; the log scan brings every key back. */
static void test_damaged_checkpoint(void)
{
    ImgDir *t = img_new();
    img_fill(t);
    int fd = open(t->img, O_RDWR);
    g_assert(fd >= 0);
    uint8_t b;
    g_assert(pread(fd, &b, 1, IMG_CKPT_OFF + 100) == 1);
    b ^= 0x10;
    g_assert(pwrite(fd, &b, 1, IMG_CKPT_OFF + 100) == 1);
    close(fd);

    KvDev *d = img_start_logged(t);
    img_check_all(d);
    kv_stop(d);
    g_autofree char *log = img_read_log(t);
    g_autofree char *want = g_strdup_printf(
        "warning: image_path %s: the checkpoint does not match its "
        "checksum; the index was rebuilt by scanning the log: %d "
        "keys found.",
        t->img, IMG_KEYS);
    if (!strstr(log, want)) {
        g_printerr("QEMU's stderr: %s\n", log);
    }
    g_assert(strstr(log, want));
    /* the orderly exit wrote a new checkpoint: the next start is quiet */
    d = img_start_logged(t);
    img_check_all(d);
    kv_stop(d);
    g_autofree char *log2 = img_read_log(t);
    g_assert(!strstr(log2, "warning:") && !strstr(log2, "image_path"));
    img_free(t);
}

/*
 * The image truncated to half (it used to start empty and grow back, the
 * data gone without a word): QEMU stops with a sentence naming the file,
 * and the file is left as it was.
 */
static void test_truncated_image(void)
{
    ImgDir *t = img_new();
    img_fill(t);
    struct stat st;
    g_assert(stat(t->img, &st) == 0);
    off_t half = st.st_size / 2;
    g_assert(truncate(t->img, half) == 0);
    g_autofree char *out = NULL;
    int status = img_run_direct(t, &out);
    g_autofree char *want = g_strdup_printf(
        "image_path %s is %lld bytes, shorter than the %llu "
        "bytes of NAND and spare areas its header describes: the "
        "file was truncated, and what it lost cannot be recovered",
        t->img, (long long)half, (unsigned long long)IMG_CKPT_OFF);
    if (!strstr(out, want)) {
        g_printerr("QEMU's output: %s\n", out);
    }
    g_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(out, want));
    g_assert(stat(t->img, &st) == 0);
    g_assert_cmpint(st.st_size, ==, half);
    img_free(t);
}

/*
 * Two QEMUs on one image (they used to corrupt it silently): the second
 * stops with a sentence naming the file and the first QEMU's process id;
 * once the first has exited, the image starts again with its keys.
 */
static void test_image_locked(void)
{
    ImgDir *t = img_new();
    img_fill(t);
    KvDev *d = kv_ready(t->props);
    g_autofree char *out = NULL;
    int status = img_run_direct(t, &out);
    g_autofree char *want = g_strdup_printf(
        "image_path %s is in use by process %d (another QEMU "
        "or kvftl program has it open); an image can back only one "
        "device at a time",
        t->img, (int)qtest_pid(d->qts));
    if (!strstr(out, want)) {
        g_printerr("QEMU's output: %s\n", out);
    }
    g_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    g_assert(strstr(out, want));
    img_check_all(d);
    kv_stop(d);

    d = kv_ready(t->props);
    img_check_all(d);
    kv_stop(d);
    img_free(t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/image/damaged-index-pages", test_damaged_index_pages);
    qtest_add_func("/kvssd/image/damaged-checkpoint", test_damaged_checkpoint);
    qtest_add_func("/kvssd/image/truncated", test_truncated_image);
    qtest_add_func("/kvssd/image/locked", test_image_locked);
    qtest_add_func("/kvssd/image/fsize-limit", test_fsize_limit_refused);
    qtest_add_func("/kvssd/image/full-file-system", test_full_file_system);
    return g_test_run();
}
