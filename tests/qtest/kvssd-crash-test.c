/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Crash consistency: kill -9 QEMU during a Store storm, restart on the same
 * image, and check what survived against what the device acknowledged
 * (docs/kvftl.md, "Durability").
 *
 * A subprocess starts QEMU with -device kvssd,image=<file> and a key limit
 * (max-keys), then runs a storm of Stores, eight outstanding at a time on
 * one I/O queue, with value sizes from 0 B to 300 KiB, overwrites, and
 * Stores that fail on purpose with exact statuses: only-if-absent on a
 * stored key (0089h), only-if-exists on a missing key (0087h), a value of
 * 2 MiB + 1 (0085h), a 17-byte key with no staged key (0086h) and a new key
 * past max-keys (0081h). It Flushes, runs more acknowledged overwrites,
 * submits a last batch and sends SIGKILL to QEMU without waiting for it.
 * The test then starts QEMU on the image again and checks that
 *  - every key Stored before the Flush is present, and its value is
 *    byte-identical (exact length and bytes) to the version acknowledged
 *    last before the Flush, or to a version Stored after it;
 *  - with plp=on (a power-loss protected page buffer) every acknowledged
 *    Store is present: the newest acknowledged version or an in-flight one;
 *  - no Store that failed left anything: those keys do not exist, and the
 *    only-if-absent key keeps its earlier value;
 *  - the vendor FTL check (C4h) passes on the recovered image.
 * The plan is a pure function of a fixed seed, so the subprocess (which
 * asserts every completion status) and the checker compute the same one.
 */
#include <sys/wait.h>

#include "kvssd-common.h"

#define CRASH_MAX_KEYS 40          /* max-keys: the 41st live key gets 0081h */
#define CRASH_DEPTH 8              /* Stores outstanding at once */
#define CRASH_SLOT_DATA(j) (0x4000000ull + (uint64_t)(j) * 0x80000) /* 512 KiB each */
#define CRASH_SLOT_PRPLIST(j) (0x3800000ull + (uint64_t)(j) * 4096)
#define CRASH_READ_BYTES (512u * 1024)
#define CRASH_MAX_OPS 128
#define CRASH_KEYS 28              /* "key-00".."key-27" */
#define CRASH_PADS 12              /* "pad-00".."pad-11": 28 + 12 = max-keys */
#define STATUS_IN_FLIGHT 0xffffu   /* submitted, never awaited: QEMU is killed */

enum crash_phase { BEFORE_FLUSH, AFTER_FLUSH, IN_FLIGHT };

typedef struct CrashOp {
    char key[24];
    uint32_t key_len;
    uint32_t value_len;
    uint32_t seed;                 /* the value's bytes: crash_byte(seed, i) */
    uint32_t options;
    uint16_t want;                 /* the exact status the subprocess asserts */
    int batch;                     /* ops of one batch are outstanding together */
    enum crash_phase phase;
} CrashOp;

typedef struct CrashPlan {
    CrashOp op[CRASH_MAX_OPS];
    int n;
    int flush_after_batch;         /* Flush once this batch has completed */
} CrashPlan;

static const uint32_t value_sizes[] = {
    0, 1, 3, 511, 512, 4095, 4096, 4097, 8191, 12293, 65536, 100000, 262144, 300001,
};

static uint8_t crash_byte(uint32_t seed, uint32_t i)
{
    return (uint8_t)(seed * 131u + i * 7u + (i >> 8) + (seed >> 3));
}

static CrashOp *plan_add(CrashPlan *p, int batch, enum crash_phase phase, const char *key,
                         uint32_t value_len, uint32_t options, uint16_t want)
{
    CrashOp *o = &p->op[p->n++];

    g_assert(p->n <= CRASH_MAX_OPS);
    memset(o, 0, sizeof(*o));
    g_strlcpy(o->key, key, sizeof(o->key));
    o->key_len = strlen(key);
    o->value_len = value_len;
    o->seed = 1000u + (uint32_t)p->n;
    o->options = options;
    o->want = want;
    o->batch = batch;
    o->phase = phase;
    return o;
}

static void key_name(char *buf, size_t len, const char *prefix, int i)
{
    snprintf(buf, len, "%s-%02d", prefix, i);
}

/*
 * Batches 0-3: key-00..27 (28 Stores, 7 a batch, sizes cycling through the
 * table); batch 4: overwrite key-00..05, only-if-absent on key-06 (0089h),
 * only-if-exists on "missing" (0087h); batch 5: pad-00..07 and the
 * 2 MiB + 1 value (0085h) and the 17-byte key (0086h); batch 6: pad-08..11
 * (40 live keys); batch 7: a new key past max-keys (0081h). Flush. Batches
 * 8-9 (acknowledged): overwrite key-10..17, and two more failures (0081h,
 * 0087h). Batch 10, in flight at the kill: overwrite key-18..25 with
 * 256-300 KiB values, one doorbell write each, then SIGKILL at once.
 */
static void crash_plan(CrashPlan *p)
{
    char k[24];
    int b = 0;

    memset(p, 0, sizeof(*p));
    for (int i = 0; i < CRASH_KEYS; i++) {
        key_name(k, sizeof(k), "key", i);
        plan_add(p, i / 7, BEFORE_FLUSH, k, value_sizes[i % G_N_ELEMENTS(value_sizes)], 0, 0);
    }
    b = 4;
    for (int i = 0; i < 6; i++) {
        key_name(k, sizeof(k), "key", i);
        plan_add(p, b, BEFORE_FLUSH, k, value_sizes[(i + 5) % G_N_ELEMENTS(value_sizes)], 0, 0);
    }
    plan_add(p, b, BEFORE_FLUSH, "key-06", 777, KVSSD_STORE_OPT_ONLY_IF_ABSENT, 0x0089);
    plan_add(p, b, BEFORE_FLUSH, "missing", 100, KVSSD_STORE_OPT_ONLY_IF_EXISTS, 0x0087);
    b = 5;
    for (int i = 0; i < 8; i++) {
        key_name(k, sizeof(k), "pad", i);
        plan_add(p, i < 6 ? b : b + 1, BEFORE_FLUSH, k, 64 + 100 * i, 0, 0);
    }
    plan_add(p, b, BEFORE_FLUSH, "too-big", 2 * 1024 * 1024 + 1, 0, 0x0085);
    plan_add(p, b, BEFORE_FLUSH, "standard-17-byte", 10, 0, 0x0086); /* 16 + 1 below */
    g_strlcat(p->op[p->n - 1].key, "X", sizeof(p->op[0].key));
    p->op[p->n - 1].key_len = 17;
    b = 6;
    for (int i = 8; i < CRASH_PADS; i++) {
        key_name(k, sizeof(k), "pad", i);
        plan_add(p, b, BEFORE_FLUSH, k, 64 + 100 * i, 0, 0);
    }
    b = 7;
    plan_add(p, b, BEFORE_FLUSH, "over-cap", 5000, 0, 0x0081);
    p->flush_after_batch = b;
    b = 8;
    for (int i = 10; i < 18; i++) {
        key_name(k, sizeof(k), "key", i);
        plan_add(p, i < 16 ? b : b + 1, AFTER_FLUSH, k,
                 value_sizes[(i + 9) % G_N_ELEMENTS(value_sizes)], 0, 0);
    }
    plan_add(p, b + 1, AFTER_FLUSH, "over-cap-2", 4096, 0, 0x0081);
    plan_add(p, b + 1, AFTER_FLUSH, "missing-2", 4096, KVSSD_STORE_OPT_ONLY_IF_EXISTS, 0x0087);
    b = 10;
    for (int i = 18; i < 26; i++) {
        key_name(k, sizeof(k), "key", i);
        plan_add(p, b, IN_FLIGHT, k, i % 2 ? 300001 : 262144 + 4096 * (i - 18), 0,
                 STATUS_IN_FLIGHT);
    }
}

/* The Store SQE of @o with its value in slot @j's buffer (PRP list of its own). */
static struct kvssd_sqe crash_sqe(KvDev *d, const CrashOp *o, int j)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_STORE, 1);
    uint64_t buf = CRASH_SLOT_DATA(j);
    uint32_t len = o->value_len;

    if (len <= CRASH_READ_BYTES) {
        g_autofree uint8_t *v = g_malloc(len ? len : 1);
        for (uint32_t i = 0; i < len; i++) {
            v[i] = crash_byte(o->seed, i);
        }
        if (len) {
            qtest_memwrite(d->qts, buf, v, len);
        }
    } else {
        len = 0;                   /* 0085h is decided before any data moves */
    }
    uint32_t pages = (len + 4095) / 4096;
    if (pages <= 1) {
        kv_set_prp(&s, buf, 0);
    } else if (pages == 2) {
        kv_set_prp(&s, buf, buf + 4096);
    } else {
        uint64_t list[512];
        for (uint32_t i = 1; i < pages; i++) {
            list[i - 1] = cpu_to_le64(buf + (uint64_t)i * 4096);
        }
        qtest_memwrite(d->qts, CRASH_SLOT_PRPLIST(j), list, (pages - 1) * 8);
        kv_set_prp(&s, buf, CRASH_SLOT_PRPLIST(j));
    }
    /* a standard host's 17-byte key: its first 16 bytes in the SQE, no Key Stage */
    kvssd_sqe_set_key(&s, o->key, o->key_len);
    s.cdw[10] = o->value_len;
    s.cdw[11] = kvssd_cdw11(o->key_len, o->options);
    return s;
}

/* Submit batch @b (all of it, one doorbell write); unless in flight, await every CQE. */
static void run_batch(KvDev *d, const CrashPlan *p, int b)
{
    uint16_t cids[CRASH_DEPTH];
    const CrashOp *ops[CRASH_DEPTH];
    int n = 0;

    for (int i = 0; i < p->n; i++) {
        if (p->op[i].batch != b) {
            continue;
        }
        g_assert(n < CRASH_DEPTH);
        struct kvssd_sqe s = crash_sqe(d, &p->op[i], n);
        ops[n] = &p->op[i];
        cids[n++] = kv_put(d, 1, &s, false);
        if (p->op[i].want == STATUS_IN_FLIGHT) {
            kv_ring(d, 1);           /* one doorbell each: the kill lands among them */
        }
    }
    if (n && ops[0]->want == STATUS_IN_FLIGHT) {
        return;
    }
    kv_ring(d, 1);
    for (int k = 0; k < n; k++) {
        KvCqe c = kv_wait(d, 1);
        int m = -1;
        for (int i = 0; i < n; i++) {
            if (cids[i] == c.cid) {
                m = i;
            }
        }
        g_assert_cmpint(m, >=, 0);
        if (c.status != ops[m]->want) {
            g_test_message("Store of %s (%u B): status %04x, expected %04x", ops[m]->key,
                           ops[m]->value_len, c.status, ops[m]->want);
        }
        g_assert_cmphex(c.status, ==, ops[m]->want);
        cids[m] = 0xffff;          /* each command completes once */
    }
}

/* The storm in the subprocess: every batch, the Flush, the last batch, SIGKILL. */
static void crash_storm(const char *image, const char *plp)
{
    g_autofree char *props = g_strdup_printf("image=%s,max-keys=%d,plp=%s", image, CRASH_MAX_KEYS,
                                             plp);
    KvDev *d = kv_ready(props);
    CrashPlan *p = g_new(CrashPlan, 1);
    int last = 0;

    crash_plan(p);
    for (int i = 0; i < p->n; i++) {
        last = MAX(last, p->op[i].batch);
    }
    for (int b = 0; b <= last; b++) {
        run_batch(d, p, b);
        if (b == p->flush_after_batch) {
            struct kvssd_sqe s = kv_sqe(KVSSD_OPC_FLUSH, 1);
            g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);
        }
    }
    /* SIGKILL, not libqtest's SIGTERM: no exit path of QEMU runs */
    pid_t pid = qtest_pid(d->qts);
    int st = 0;
    g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
    g_assert_cmpint(waitpid(pid, &st, 0), ==, pid);
    g_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    g_free(p);
    _exit(0);                      /* no qtest_quit: QEMU is gone */
}

/* Whether the @len bytes in @buf are version @o's value. */
static bool is_version(const CrashOp *o, const uint8_t *buf, uint32_t len)
{
    if (o->value_len != len) {
        return false;
    }
    for (uint32_t i = 0; i < len; i++) {
        if (buf[i] != crash_byte(o->seed, i)) {
            return false;
        }
    }
    return true;
}

static void crash_check(KvDev *d, const CrashPlan *p, bool plp)
{
    g_autofree uint8_t *buf = g_malloc(CRASH_READ_BYTES);
    int present_in_flight = 0, newer = 0;

    for (int i = 0; i < p->n; i++) {
        const CrashOp *o = &p->op[i];
        const CrashOp *must = NULL;  /* the version the guarantee names */
        bool dup = false;

        if (o->want != 0 || o->phase != BEFORE_FLUSH) {
            continue;
        }
        for (int j = 0; j < i; j++) {
            dup |= p->op[j].want == 0 && strcmp(p->op[j].key, o->key) == 0;
        }
        if (dup) {
            continue;                /* checked at the key's first Store */
        }
        /* the last acknowledged version before the Flush (or, with plp, at all) */
        for (int j = i; j < p->n; j++) {
            const CrashOp *v = &p->op[j];
            if (strcmp(v->key, o->key) || v->want != 0) {
                continue;
            }
            if (v->phase == BEFORE_FLUSH || (plp && v->phase == AFTER_FLUSH)) {
                must = v;
            }
        }
        KvCqe c = kv_retrieve(d, o->key, buf, CRASH_READ_BYTES);
        g_assert_cmphex(c.status, ==, 0);
        uint32_t len = c.dw0;
        bool ok = len <= CRASH_READ_BYTES && is_version(must, buf, len);
        for (int j = 0; j < p->n && !ok && len <= CRASH_READ_BYTES; j++) {
            const CrashOp *v = &p->op[j];
            if (v > must && !strcmp(v->key, o->key) &&
                (v->want == 0 || v->want == STATUS_IN_FLIGHT) && is_version(v, buf, len)) {
                ok = true;
                present_in_flight += v->phase == IN_FLIGHT;
                newer++;
            }
        }
        if (!ok) {
            g_test_message("%s: %u bytes back, neither the version of %u bytes that must "
                           "survive nor a later one",
                           o->key, len, must->value_len);
        }
        g_assert(ok);
    }
    /* Stores that failed left nothing behind */
    /* (the 17-byte key's Store was refused before the firmware: nothing under
     * its 16-byte prefix either) */
    static const char *const failed[] = {"missing",    "too-big",   "over-cap",
                                         "over-cap-2", "missing-2", "standard-17-byte"};
    for (size_t i = 0; i < G_N_ELEMENTS(failed); i++) {
        g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, failed[i]), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    }
    g_test_message("after the kill: %d keys hold a version newer than the one required "
                   "(%d of them from the batch in flight)",
                   newer, present_in_flight);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
}

static void crash_case(const char *plp)
{
    if (g_test_subprocess()) {
        crash_storm(g_getenv("KVSSD_CRASH_IMAGE"), plp);
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("kvssd-crash-XXXXXX", NULL);
    g_autofree char *img = g_build_filename(dir, "nand.img", NULL);
    g_autofree char *props = g_strdup_printf("image=%s,max-keys=%d,plp=%s", img, CRASH_MAX_KEYS,
                                             plp);
    CrashPlan *p = g_new(CrashPlan, 1);

    g_setenv("KVSSD_CRASH_IMAGE", img, true);
    g_test_trap_subprocess(NULL, 300 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
    g_test_trap_assert_passed();

    /* the killed QEMU's image lock went with it: the restart must be admitted */
    KvDev *d = kv_ready(props);
    crash_plan(p);
    crash_check(d, p, !strcmp(plp, "on"));
    kv_stop(d);
    g_free(p);
    unlink(img);
    rmdir(dir);
}

/* plp=off (a volatile write cache): what the Flush covered survives. */
static void test_crash_plp_off(void)
{
    crash_case("off");
}
/* plp=on: every acknowledged Store survives, the Flush changes nothing. */
static void test_crash_plp_on(void)
{
    crash_case("on");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/crash/kill9-storm-plp-off", test_crash_plp_off);
    qtest_add_func("/kvssd/crash/kill9-storm-plp-on", test_crash_plp_on);
    return g_test_run();
}
