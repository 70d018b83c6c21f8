/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The image file's backing (kvftl/nand.c): a full file system and a
 * file-size limit become a status or a sentence, never SIGBUS or SIGXFSZ.
 * Each scenario runs in a forked child (a signal there is the failure the
 * test guards against) and reports through shared memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include <kvftl/block.h>

/* What a child saw, written into shared memory. */
struct child_report {
    char skip[160]; /* set: the scenario could not run here, and why */
    char err[512];  /* a refusal's sentence */
    int rc;
    int image_exists; /* after the refusal: 1, 0, or -1 (stat failed otherwise) */
    int64_t image_bytes;
    uint32_t acked, flushed;       /* Stores acknowledged; of them, covered by a Flush */
    uint16_t fail_status;          /* the first Store that failed */
    uint16_t next_store_status;    /* a small Store after it */
    uint16_t flush_status;         /* a Flush after it */
    uint16_t first_key_status;     /* Retrieve of key 0 after it (0: exact bytes) */
    int full_reopen_rc;            /* reopened on the still full file system: 0 or -1 */
    char reopen_err[400];          /* its refusal */
    uint16_t full_reopen_key0;     /* then key 0 (0: exact bytes) */
    uint16_t full_reopen_store;    /* and a Store */
    uint32_t exact_after_restart;  /* flushed keys exact after a restart with room */
    uint16_t failed_key_status;    /* the refused key after the restart */
    uint16_t store_after_restart;  /* a Store after the restart */
};

static struct child_report *report_map(void)
{
    void *p = mmap(NULL, sizeof(struct child_report), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CU_ASSERT_FATAL(p != MAP_FAILED);
    memset(p, 0, sizeof(struct child_report));
    return p;
}

/* Run @fn(@r, @arg) in a child; true if it exited 0, else says how it ended. */
static bool run_child(void (*fn)(struct child_report *, const char *), struct child_report *r,
                      const char *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        fn(r, arg);
        _exit(0);
    }
    int ws;
    CU_ASSERT_FATAL(waitpid(pid, &ws, 0) == pid);
    if (WIFSIGNALED(ws)) {
        printf("# child killed by signal %d (%s)\n", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    } else if (WEXITSTATUS(ws) != 0) {
        printf("# child exited %d\n", WEXITSTATUS(ws));
    }
    return WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

static void image_state(struct child_report *r, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        r->image_exists = 1;
        r->image_bytes = st.st_size;
    } else {
        r->image_exists = errno == ENOENT ? 0 : -1;
    }
}

/* The small device (helpers.h) on @path with a 64 KiB file-size limit. */
static void open_under_fsize_limit(struct child_report *r, const char *path)
{
    struct rlimit rl = {.rlim_cur = 65536, .rlim_max = 65536};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) {
        snprintf(r->skip, sizeof(r->skip), "setrlimit(RLIMIT_FSIZE): %s", strerror(errno));
        return;
    }
    struct kvftl_config c = small_config();
    c.image_path = path;
    struct kvftl *f = kvftl_open(&c, r->err, sizeof(r->err));
    r->rc = f ? 0 : -1;
    if (f) {
        kvftl_close(f);
    }
    image_state(r, path);
}

/*
 * A new image under RLIMIT_FSIZE 64 KiB (the small device's is 23,691,264
 * bytes): kvftl_open() refuses with the sentence naming the file, both sizes
 * and the limit; the process is not killed by SIGXFSZ (before: the
 * ftruncate() raised it) and the file it created is gone.
 */
static void test_fsize_limit_refused_new_image(void)
{
    char dir[] = "/tmp/kvftl-fsize-XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    char path[64], want[256];
    snprintf(path, sizeof(path), "%s/img", dir);
    struct child_report *r = report_map();
    CU_ASSERT_TRUE(run_child(open_under_fsize_limit, r, path));
    snprintf(want, sizeof(want),
             "image_path %s cannot grow to 23691264 bytes: the process's file-size limit "
             "(RLIMIT_FSIZE, ulimit -f) is 65536 bytes",
             path);
    CU_ASSERT_EQUAL(r->rc, -1);
    CU_ASSERT_STRING_EQUAL(r->err, want);
    CU_ASSERT_EQUAL(r->image_exists, 0);
    munmap(r, sizeof(*r));
    unlink(path);
    rmdir(dir);
}

/*
 * The same with the file already there and empty (made by the user): it is
 * refused the same way and left as it was, empty -- never removed.
 */
static void test_fsize_limit_keeps_existing_empty_file(void)
{
    char dir[] = "/tmp/kvftl-fsize-XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    char path[64];
    snprintf(path, sizeof(path), "%s/img", dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    struct child_report *r = report_map();
    CU_ASSERT_TRUE(run_child(open_under_fsize_limit, r, path));
    CU_ASSERT_EQUAL(r->rc, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err, "RLIMIT_FSIZE"));
    CU_ASSERT_EQUAL(r->image_exists, 1);
    CU_ASSERT_EQUAL(r->image_bytes, 0);
    munmap(r, sizeof(*r));
    unlink(path);
    rmdir(dir);
}

/*
 * A second opener refused by the image lock leaves the image as it was:
 * 23,691,264 bytes, key 0 readable by the holder. (The refusal's cleanup
 * emptied a file it took for its own, new one: the holder then died of
 * SIGBUS at its next access.)
 */
static void test_refused_opener_leaves_image(void)
{
    char dir[] = "/tmp/kvftl-lock-XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    char path[64], err[400];
    snprintf(path, sizeof(path), "%s/img", dir);
    struct kvftl_config c = small_config();
    c.image_path = path;
    struct kvftl *f = open_or_die(&c);
    CU_ASSERT_EQUAL(put(f, "key-0", 100, 0x42, false), 0);
    CU_ASSERT_PTR_NULL(kvftl_open(&c, err, sizeof(err)));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "an image can back only one device at a time"));
    struct stat st;
    CU_ASSERT_FATAL(stat(path, &st) == 0);
    CU_ASSERT_EQUAL(st.st_size, 23691264);
    CU_ASSERT_EQUAL(get_check(f, "key-0", 100, 0x42), 0);
    kvftl_close(f);
    unlink(path);
    rmdir(dir);
}

#define FILL_VALUE_BYTES 16384u
#define FILL_MAX_STORES 400u
#define FILL_EXTRA 500u /* a write after the failure: LBA 2000 for nvm */

static void key_n(char *key, uint32_t i)
{
    snprintf(key, 17, "key-%012u", i);
}

static uint8_t fill_byte(uint32_t i)
{
    return (uint8_t)(i * 37 + 1);
}

/* The personality fill_small_tmpfs() runs (set before the fork). */
static bool fill_nvm;

/* Write number @i: kv, a Store of key i; nvm, a Write of 16 KiB at LBA 4i (4 KiB LBAs). */
static uint16_t fill_write(struct kvftl *f, uint32_t i)
{
    static uint8_t buf[FILL_VALUE_BYTES];
    char key[17];
    if (!fill_nvm) {
        key_n(key, i);
        return put(f, key, FILL_VALUE_BYTES, fill_byte(i), true);
    }
    struct kvftl_cpl cpl;
    memset(buf, fill_byte(i), sizeof(buf));
    kvftl_block_write(f, (uint64_t)i * 4, 4, buf, false, 0, &cpl);
    return cpl.status;
}

/* Write @i read back: 0 if exact, 0xffff on a mismatch, else the status. */
static uint16_t fill_check(struct kvftl *f, uint32_t i)
{
    static uint8_t buf[FILL_VALUE_BYTES];
    char key[17];
    if (!fill_nvm) {
        key_n(key, i);
        return get_check(f, key, FILL_VALUE_BYTES, fill_byte(i));
    }
    struct kvftl_cpl cpl;
    kvftl_block_read(f, (uint64_t)i * 4, 4, buf, 0, &cpl);
    if (cpl.status) {
        return cpl.status;
    }
    for (uint32_t b = 0; b < sizeof(buf); b++) {
        if (buf[b] != fill_byte(i)) {
            return 0xffff;
        }
    }
    return 0;
}

/*
 * In a private mount namespace: the small device on a 2 MiB tmpfs, 16 KiB
 * writes with a Flush after every 4 until one fails; then a write, a
 * Flush and a read; the device reopened on the full file system; then the
 * tmpfs grown to 64 MiB and the device reopened.
 */
static void fill_small_tmpfs(struct child_report *r, const char *dir)
{
    if (unshare(CLONE_NEWNS) != 0) {
        snprintf(r->skip, sizeof(r->skip), "unshare(CLONE_NEWNS): %s (needs root)",
                 strerror(errno));
        return;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", dir, "tmpfs", 0, "size=2M") != 0) {
        snprintf(r->skip, sizeof(r->skip), "mount -t tmpfs: %s", strerror(errno));
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "%s/img", dir);
    struct kvftl_config c = small_config();
    c.image_path = path;
    if (fill_nvm) {
        c.command_set = KVFTL_CMDSET_NVM;
    }
    struct kvftl *f = kvftl_open(&c, r->err, sizeof(r->err));
    if (!f) {
        r->rc = -1;
        return;
    }
    uint32_t i;
    for (i = 0; i < FILL_MAX_STORES; i++) {
        uint16_t st = fill_write(f, i);
        if (st != KVFTL_OK) {
            r->fail_status = st;
            break;
        }
        r->acked = i + 1;
        if (r->acked % 4 == 0) {
            struct kvftl_cpl cpl;
            kvftl_flush(f, 0, &cpl);
            if (cpl.status != KVFTL_OK) {
                r->fail_status = (uint16_t)(0x100 | cpl.status); /* a Flush failed first */
                break;
            }
            r->flushed = r->acked;
        }
    }
    uint32_t failed_key = i;
    snprintf(r->err, sizeof(r->err), "%s", f->nand.backing_err);
    r->next_store_status = fill_write(f, FILL_EXTRA);
    struct kvftl_cpl cpl;
    kvftl_flush(f, 0, &cpl);
    r->flush_status = cpl.status;
    r->first_key_status = fill_check(f, 0);
    kvftl_close(f);

    char err[400];
    f = kvftl_open(&c, err, sizeof(err));
    r->full_reopen_rc = f ? 0 : -1;
    if (!f) {
        snprintf(r->reopen_err, sizeof(r->reopen_err), "%s", err);
    }
    if (f) {
        r->full_reopen_key0 = fill_check(f, 0);
        r->full_reopen_store = fill_write(f, FILL_EXTRA);
        kvftl_close(f);
    }

    if (mount("tmpfs", dir, NULL, MS_REMOUNT, "size=64M") != 0) {
        snprintf(r->skip, sizeof(r->skip), "mount -o remount,size=64M: %s", strerror(errno));
        return;
    }
    f = kvftl_open(&c, err, sizeof(err));
    if (!f) {
        snprintf(r->err, sizeof(r->err), "reopen: %s", err);
        r->rc = -2;
        return;
    }
    for (i = 0; i < r->flushed; i++) {
        r->exact_after_restart += fill_check(f, i) == 0;
    }
    /* nvm: a failed Write may have written part of its range (NVMe leaves that undefined) */
    r->failed_key_status = fill_nvm ? 0 : fill_check(f, failed_key);
    r->store_after_restart = fill_write(f, FILL_EXTRA);
    kvftl_close(f);
    unlink(path);
    umount(dir);
}

/*
 * The small device (22.5 MiB of NAND, a sparse 23,691,264-byte image) on a
 * 2 MiB tmpfs. Stores succeed until the file system has no block for a
 * page: that Store fails with INTERNAL_ERROR (before: the process died of
 * SIGBUS), stderr and backing_err get the sentence naming the file and
 * ENOSPC's text, and from then on writes fail (a Store, a Flush:
 * INTERNAL_ERROR) while reads are served (key 0 exact). Reopened on the
 * still full file system, the crash mount reads no page the image has no
 * blocks for (on tmpfs that read fault raised SIGBUS): kv mounts, key 0
 * is exact, a Store fails with INTERNAL_ERROR; nvm, whose crash mount
 * programs the rebuilt map, is refused with a sentence. Restarted with 64 MiB,
 * every flushed key reads back exact, the refused key does not exist,
 * and Stores succeed again.
 */
static void full_file_system(bool nvm)
{
    fill_nvm = nvm;
    char dir[] = "/tmp/kvftl-full-XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    struct child_report *r = report_map();
    bool clean = run_child(fill_small_tmpfs, r, dir);
    rmdir(dir);
    if (r->skip[0]) {
        printf("# skipped: %s\n", r->skip);
        munmap(r, sizeof(*r));
        return;
    }
    char want[128];
    snprintf(want, sizeof(want), "kvssd: image_path %s/img cannot allocate NAND page ", dir);
    CU_ASSERT_TRUE(clean);
    CU_ASSERT_EQUAL(r->rc, 0);
    printf("# %u Stores acknowledged, %u flushed; %s\n", r->acked, r->flushed, r->err);
    /* 2 MiB less the header and spare areas, in 16 KiB values: more than 64, fewer than 128 */
    CU_ASSERT_TRUE(r->acked > 64 && r->acked < 128);
    CU_ASSERT_TRUE(r->flushed + 4 > r->acked && r->flushed <= r->acked);
    CU_ASSERT_EQUAL(r->fail_status, KVFTL_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(strncmp(r->err, want, strlen(want)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->err, strerror(ENOSPC)));
    CU_ASSERT_EQUAL(r->next_store_status, KVFTL_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(r->flush_status, KVFTL_INTERNAL_ERROR);
    CU_ASSERT_EQUAL(r->first_key_status, 0);
    if (nvm) {
        /* the crash mount must program the rebuilt map's translation pages: refused */
        char refused[256];
        snprintf(refused, sizeof(refused),
                 "image_path %s/img: the rebuilt map's translation pages cannot be programmed: "
                 "the image file has no room for them",
                 dir);
        CU_ASSERT_EQUAL(r->full_reopen_rc, -1);
        CU_ASSERT_STRING_EQUAL(r->reopen_err, refused);
    } else {
        CU_ASSERT_EQUAL(r->full_reopen_rc, 0);
        CU_ASSERT_EQUAL(r->full_reopen_key0, 0);
        CU_ASSERT_EQUAL(r->full_reopen_store, KVFTL_INTERNAL_ERROR);
    }
    CU_ASSERT_EQUAL(r->exact_after_restart, r->flushed);
    CU_ASSERT_EQUAL(r->failed_key_status, nvm ? 0 : KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(r->store_after_restart, KVFTL_OK);
    munmap(r, sizeof(*r));
}

static void test_full_file_system_fails_store(void)
{
    full_file_system(false);
}

/*
 * The same with the nvm personality: 16 KiB Writes (4 LBAs of 4 KiB) with
 * a Flush after every 4; the Write that needs an unbacked page fails with
 * INTERNAL_ERROR (the NVM command set's Internal Error, 0006h), as do a
 * later Write and Flush; reads are served; a reopen on the full file
 * system is refused with a sentence (its crash mount must program the
 * rebuilt map; before: SIGBUS reading an erased stripe's hole); every
 * flushed range is exact after a restart with room.
 */
static void test_full_file_system_fails_nvm_write(void)
{
    full_file_system(true);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_fsize_limit_refused_new_image),
    TAP_TEST_FN(test_fsize_limit_keeps_existing_empty_file),
    TAP_TEST_FN(test_refused_opener_leaves_image),
    TAP_TEST_FN(test_full_file_system_fails_store),
    TAP_TEST_FN(test_full_file_system_fails_nvm_write),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("backing", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
