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

#define FILL_VALUE_BYTES 16384u
#define FILL_MAX_STORES 2000u

static void key_n(char *key, uint32_t i)
{
    snprintf(key, 17, "key-%012u", i);
}

static uint8_t fill_byte(uint32_t i)
{
    return (uint8_t)(i * 37 + 1);
}

/*
 * In a private mount namespace: the small device on a 2 MiB tmpfs, 16 KiB
 * Stores with a Flush after every 4 until one fails; then a Store, a Flush
 * and a Retrieve; then the tmpfs grown to 64 MiB and the device reopened.
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
    char path[64], key[17];
    snprintf(path, sizeof(path), "%s/img", dir);
    struct kvftl_config c = small_config();
    c.image_path = path;
    struct kvftl *f = kvftl_open(&c, r->err, sizeof(r->err));
    if (!f) {
        r->rc = -1;
        return;
    }
    uint32_t i;
    for (i = 0; i < FILL_MAX_STORES; i++) {
        key_n(key, i);
        uint16_t st = put(f, key, FILL_VALUE_BYTES, fill_byte(i), true);
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
    r->next_store_status = put(f, "small", 8, 0x5a, false);
    struct kvftl_cpl cpl;
    kvftl_flush(f, 0, &cpl);
    r->flush_status = cpl.status;
    r->first_key_status = get_check(f, "key-000000000000", FILL_VALUE_BYTES, fill_byte(0));
    kvftl_close(f);

    if (mount("tmpfs", dir, NULL, MS_REMOUNT, "size=64M") != 0) {
        snprintf(r->skip, sizeof(r->skip), "mount -o remount,size=64M: %s", strerror(errno));
        return;
    }
    char err[400];
    f = kvftl_open(&c, err, sizeof(err));
    if (!f) {
        snprintf(r->err, sizeof(r->err), "reopen: %s", err);
        r->rc = -2;
        return;
    }
    for (i = 0; i < r->flushed; i++) {
        key_n(key, i);
        r->exact_after_restart += get_check(f, key, FILL_VALUE_BYTES, fill_byte(i)) == 0;
    }
    key_n(key, failed_key);
    r->failed_key_status = get_check(f, key, FILL_VALUE_BYTES, fill_byte(failed_key));
    r->store_after_restart = put(f, "after", 8, 0x33, false);
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
 * INTERNAL_ERROR) while reads are served (key 0 exact). Restarted with
 * 64 MiB, every flushed key reads back exact, the refused key does not
 * exist, and Stores succeed again.
 */
static void test_full_file_system_fails_store(void)
{
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
    CU_ASSERT_EQUAL(r->exact_after_restart, r->flushed);
    CU_ASSERT_EQUAL(r->failed_key_status, KVFTL_KEY_DOES_NOT_EXIST);
    CU_ASSERT_EQUAL(r->store_after_restart, KVFTL_OK);
    munmap(r, sizeof(*r));
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_fsize_limit_refused_new_image),
    TAP_TEST_FN(test_fsize_limit_keeps_existing_empty_file),
    TAP_TEST_FN(test_full_file_system_fails_store),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("backing", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
