/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Randomized qtest of the kvssd device, meant for a QEMU built with
 * AddressSanitizer (scripts/build-qemu.sh with KVSSD_QEMU_ASAN=1).
 *
 * Sends KVSSD_FUZZ_COMMANDS (default 100,000) random commands and queue
 * operations: KV and extension commands with mostly well-formed and partly
 * mutated dwords, data pointers inside RAM, outside RAM, malformed PRP
 * lists and SGLs; random admin commands (identify, logs, features, queue
 * create/delete with random parameters, abort, format, AERs); invalid
 * doorbell writes; controller resets with commands in flight and
 * shutdowns. It proves that
 *   - every submitted command completes exactly once with its CID (no hang,
 *     no lost or duplicated completion) and never with Internal Error,
 *   - the controller never reports Controller Fatal Status (queues always
 *     live in RAM here, so no guest action may make it fatal),
 *   - QEMU survives (and, under ASan, touches no memory it should not),
 *   - afterwards the FTL consistency check (vendor admin C4h, kvftl_check)
 *     passes and a store/retrieve round trip returns the exact bytes.
 * The seed is printed (glib --seed reproduces a run).
 */
#include "kvssd-common.h"

#define NQ 5                      /* I/O queue ids used: 1..4 */
#define DATA_PAGES 1024           /* 4 MiB of random bytes at KV_DATA */
#define OUT_PAGES 1024            /* 4 MiB of retrieve buffers at KV_DATA2 */
#define PRPL_IN KV_PRPLIST        /* list of all KV_DATA pages */
#define PRPL_OUT (KV_PRPLIST + 0x4000)
#define SGL_AREA (KV_PRPLIST + 0x10000)

static uint64_t rng;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static uint32_t below(uint32_t n)
{
    return n ? rnd() % n : 0;
}

static bool chance(uint32_t per_mille)
{
    return below(1000) < per_mille;
}

typedef struct Fuzz {
    KvDev *d;
    uint64_t commands;
    uint64_t io_ok, io_err, admin_ok, admin_err, resets, aer_done;
    uint16_t outstanding_aers;
    uint16_t aer_cids[8];
} Fuzz;

static void fuzz_fail_if_fatal(Fuzz *f)
{
    uint32_t csts = kv_rd32(f->d, KV_REG_CSTS);
    if (csts & 2) {
        g_error("controller fatal status after %" PRIu64 " commands (seed-dependent)",
                f->commands);
    }
}

static uint32_t value_size(void)
{
    uint32_t r = below(100);
    if (r < 60) {
        return below(4097);
    } else if (r < 90) {
        return below(64 * 1024);
    } else if (r < 98) {
        return below(2 * 1024 * 1024 + 1);
    }
    return 2 * 1024 * 1024 + below(8192);   /* too large */
}

/* A data pointer for @len bytes: mostly valid PRPs, sometimes broken. */
static void random_dptr(struct kvssd_sqe *s, uint32_t len, bool to_device)
{
    uint64_t base = to_device ? KV_DATA : KV_DATA2;
    uint64_t list = to_device ? PRPL_IN : PRPL_OUT;
    uint32_t pages_total = to_device ? DATA_PAGES : OUT_PAGES;
    uint32_t off = chance(300) ? below(4096) & ~3u : 0;
    uint32_t pages = (len + off + 4095) / 4096;
    uint32_t first = pages < pages_total ? below(pages_total - pages + 1) : 0;
    uint64_t prp1 = base + (uint64_t)first * 4096 + off;
    uint32_t r = below(100);

    if (r < 80) {
        uint64_t prp2 = 0;
        if (pages == 2) {
            prp2 = base + (uint64_t)(first + 1) * 4096;
        } else if (pages > 2) {
            prp2 = list + (uint64_t)(first + 1) * 8;
        }
        kv_set_prp(s, prp1, prp2);
    } else if (r < 85) {
        kv_set_prp(s, KV_OUTSIDE_RAM + below(1u << 20) * 4096ull, KV_OUTSIDE_RAM);
    } else if (r < 90) {
        kv_set_prp(s, (uint64_t)rnd() << 12 | rnd(), (uint64_t)rnd() << 16 | rnd());
    } else if (r < 95) {
        /* SGL: one data block, or a last segment in SGL_AREA */
        s->cdw[0] |= 1u << 14;
        if (chance(500)) {
            s->cdw[6] = (uint32_t)prp1;
            s->cdw[7] = prp1 >> 32;
            s->cdw[8] = chance(900) ? len : below(len + 1);
            s->cdw[9] = 0;
        } else {
            uint64_t a = SGL_AREA;
            s->cdw[6] = (uint32_t)a;
            s->cdw[7] = 0;
            s->cdw[8] = 16 * (1 + below(4));
            s->cdw[9] = 0x30u << 24;
        }
    } else {
        /* SGL garbage: random type, length, address */
        s->cdw[0] |= (1 + below(3)) << 14;
        for (int i = 6; i < 10; i++) {
            s->cdw[i] = rnd();
        }
    }
}

static const char *const keys[] = {
    "a", "b", "key1", "key2", "0123456789abcdef", "zz", "prefix-01", "prefix-02",
    "prefix-03", "x", "yy", "long-key-16bytes", "k9", "\x01\x02\x03\x04", "kv", "q",
};

static void random_key(struct kvssd_sqe *s, uint32_t *klen)
{
    const char *k = keys[below(G_N_ELEMENTS(keys))];
    *klen = strlen(k);
    kvssd_sqe_set_key(s, k, *klen);
}

/* One random I/O command. */
static struct kvssd_sqe random_io(void)
{
    static const uint8_t ops[] = {
        KVSSD_OPC_STORE, KVSSD_OPC_STORE, KVSSD_OPC_STORE, KVSSD_OPC_RETRIEVE,
        KVSSD_OPC_RETRIEVE, KVSSD_OPC_DELETE, KVSSD_OPC_EXIST, KVSSD_OPC_LIST,
        KVSSD_OPC_FLUSH, KVSSD_OPC_INLINE_HEAD, KVSSD_OPC_INLINE_XFER,
        KVSSD_OPC_INLINE_HEAD_FULL, KVSSD_OPC_INLINE_XFER_FULL, KVSSD_OPC_KEY_STAGE,
        KVSSD_OPC_ITER_OPEN, KVSSD_OPC_ITER_READ, KVSSD_OPC_ITER_CLOSE, 0xff,
    };
    uint8_t opc = ops[below(sizeof(ops))];
    if (opc == 0xff) {
        opc = (uint8_t)rnd();
    }
    struct kvssd_sqe s = kv_sqe(opc, chance(970) ? 1 : rnd());
    uint32_t klen, v;

    switch (opc) {
    case KVSSD_OPC_STORE:
        random_key(&s, &klen);
        v = value_size();
        s.cdw[10] = v;
        s.cdw[11] = kvssd_cdw11(klen, chance(100) ? below(4) : 0);
        random_dptr(&s, v, true);
        break;
    case KVSSD_OPC_RETRIEVE:
    case KVSSD_OPC_LIST:
    case KVSSD_OPC_ITER_READ:
        random_key(&s, &klen);
        v = value_size();
        s.cdw[10] = v;
        s.cdw[11] = opc == KVSSD_OPC_ITER_READ ? below(17) : kvssd_cdw11(klen, 0);
        random_dptr(&s, v, false);
        break;
    case KVSSD_OPC_DELETE:
    case KVSSD_OPC_EXIST:
        random_key(&s, &klen);
        s.cdw[11] = klen;
        break;
    case KVSSD_OPC_INLINE_HEAD:
        v = below(200);
        s.cdw[10] = kvssd_inline_head_cdw10(v, 0, 1 + below(16));
        s.cdw[11] = below(16) | (chance(100) ? KVSSD_INLINE_HYBRID : 0);
        s.cdw[2] = rnd();
        s.cdw[3] = rnd();
        for (int i = 12; i < 16; i++) {
            s.cdw[i] = rnd();
        }
        if (s.cdw[11] & KVSSD_INLINE_HYBRID) {
            s.cdw[10] = kvssd_inline_head_cdw10(4096 + below(100), 0, 1 + below(16));
            random_dptr(&s, 4096, true);
        }
        break;
    case KVSSD_OPC_INLINE_XFER:
        s.cdw[10] = kvssd_inline_tag_seq(below(16), below(10));
        for (int i = 11; i < 16; i++) {
            s.cdw[i] = rnd();
        }
        s.cdw[2] = rnd();
        s.cdw[3] = rnd();
        break;
    case KVSSD_OPC_INLINE_HEAD_FULL:
        random_key(&s, &klen);
        s.cdw[10] = kvssd_inline_head_cdw10(below(200), 0, klen);
        s.cdw[11] = below(16) | rnd() << 8;
        for (int i = 4; i < 10; i++) {
            s.cdw[i] = rnd();
        }
        break;
    case KVSSD_OPC_INLINE_XFER_FULL:
        s.cdw[1] = kvssd_inline_tag_seq(below(16), below(10));
        for (int i = 2; i < 16; i++) {
            s.cdw[i] = rnd();
        }
        break;
    case KVSSD_OPC_KEY_STAGE:
        v = 17 + below(239);
        s.cdw[10] = v;
        s.cdw[11] = below(16);
        random_dptr(&s, v, true);
        break;
    case KVSSD_OPC_ITER_OPEN:
        s.cdw[10] = chance(500) ? 0x70726566 : rnd();   /* "pref" */
        s.cdw[11] = chance(500) ? 0xffffffff : rnd();
        s.cdw[12] = below(2);
        break;
    case KVSSD_OPC_ITER_CLOSE:
        s.cdw[10] = below(18);
        break;
    default:
        for (int i = 2; i < 16; i++) {
            s.cdw[i] = chance(500) ? rnd() : 0;
        }
        break;
    }
    /* mutate: flip bits in a random dword (never CDW0's CID, set later) */
    if (chance(80)) {
        s.cdw[1 + below(15)] ^= 1u << below(32);
    }
    if (chance(10)) {
        s.cdw[0] ^= 1u << (8 + below(8));               /* fused / PSDT bits */
    }
    return s;
}

static struct kvssd_sqe random_admin(Fuzz *f)
{
    static const uint8_t ops[] = { 0x06, 0x06, 0x02, 0x02, 0x09, 0x0a, 0x0a, 0x08, 0xc4, 0x80,
                                   0x01, 0x05, 0x00, 0x04, 0xff };
    uint8_t opc = ops[below(sizeof(ops))];
    if (opc == 0xff) {
        opc = (uint8_t)rnd();
    }
    if (opc == 0x0c) {
        opc = 0x06;                  /* AERs are sent on purpose only */
    }
    if (opc == 0x80 && !chance(50)) {
        opc = 0x06;                  /* Format rarely */
    }
    struct kvssd_sqe s = kv_sqe(opc, chance(500) ? 1 : (chance(500) ? 0xffffffff : rnd()));
    kv_set_prp(&s, KV_DATA2 + below(256) * 4096ull, KV_DATA2 + 256 * 4096ull);
    switch (opc) {
    case 0x06:
        s.cdw[10] = chance(800) ? (uint32_t)(uint8_t[]){0, 1, 2, 3, 5, 6, 8, 0x1c}[below(8)]
                                : rnd();
        s.cdw[11] = below(3) << 24;
        break;
    case 0x02:
        s.cdw[10] = (chance(800) ? (uint32_t)(uint8_t[]){1, 2, 3, 5, 0xc0}[below(5)] : below(256)) |
                    (chance(900) ? below(1024) : below(2048)) << 16 | (rnd() & 0x8000);
        s.cdw[11] = chance(950) ? 0 : rnd();
        s.cdw[12] = chance(900) ? below(8) * 4 : rnd();
        s.cdw[14] = below(3) << 24;
        break;
    case 0x09:
    case 0x0a:
        s.cdw[10] = (chance(800) ? (uint32_t)(uint8_t[]){1, 2, 4, 5, 6, 7, 8, 9, 0xa, 0xb,
                                                         0x19, 0x20, 0xc0}[below(13)]
                                 : below(256)) |
                    (chance(900) ? below(4) << 8 : rnd() & 0xffffff00);
        s.cdw[11] = chance(500) ? below(4) : rnd();
        if ((s.cdw[10] & 0xff) == 0x07 && opc == 0x09) {
            s.cdw[11] = below(8) | below(8) << 16;      /* keep queues usable */
        }
        break;
    case 0x08:
        s.cdw[10] = rnd();
        break;
    case 0x80:
        s.cdw[10] = chance(700) ? 0 : rnd() & 0xfff;
        break;
    case 0x01:
    case 0x05:
        /* queue creation with random (mostly invalid) parameters; never ids 1..4 */
        s.cdw[10] = (uint32_t)below(1100) << 16 | (chance(500) ? 0 : 5 + below(70));
        s.cdw[11] = rnd();
        /* bases in RAM (aligned, or misaligned and refused): a queue the
         * device accepts must never make it fetch or post outside RAM */
        kv_set_prp(&s, KV_SQ(40) + (chance(500) ? 0 : 1 + below(4095)), 0);
        break;
    case 0x00:
    case 0x04:
        s.cdw[10] = chance(500) ? 0 : 5 + below(70);
        break;
    default:
        for (int i = 10; i < 16; i++) {
            s.cdw[i] = chance(500) ? rnd() : 0;
        }
        break;
    }
    (void)f;
    return s;
}

/* Collect completions of queue @qid until @want CIDs from @cids are seen. */
static void drain(Fuzz *f, uint16_t qid, uint16_t *cids, int want)
{
    int got = 0;
    bool seen[64] = { false };

    for (long polls = 0; got < want; polls++) {
        KvCqe c;
        if (!kv_try_cqe(f->d, qid, &c)) {
            if (polls > 2000000) {
                fuzz_fail_if_fatal(f);
                g_error("queue %u: %d of %d completions after %ld polls", qid, got, want, polls);
            }
            continue;
        }
        kv_cq_doorbell(f->d, qid);
        if (qid == 0) {
            bool aer = false;
            for (int i = 0; i < f->outstanding_aers; i++) {
                if (f->aer_cids[i] == c.cid) {
                    f->aer_cids[i] = f->aer_cids[--f->outstanding_aers];
                    f->aer_done++;
                    aer = true;
                    break;
                }
            }
            if (aer) {
                continue;
            }
        }
        int idx = -1;
        for (int i = 0; i < want; i++) {
            if (cids[i] == c.cid && !seen[i]) {
                idx = i;
                break;
            }
        }
        if (idx < 0) {
            g_error("queue %u: unexpected completion cid %u status 0x%x", qid, c.cid, c.status);
        }
        seen[idx] = true;
        got++;
        g_assert_cmphex(c.status & 0x7ff, !=, 0x0006);  /* never Internal Error */
        if (qid == 0) {
            c.status ? f->admin_err++ : f->admin_ok++;
        } else {
            c.status ? f->io_err++ : f->io_ok++;
        }
    }
}

static void setup_queues(Fuzz *f)
{
    KvDev *d = f->d;

    kv_enable(d);
    f->outstanding_aers = 0;
    g_assert_cmphex(kv_feature(d, 0x09, 0x07, 0x00070007, 0).status, ==, 0);
    for (uint16_t q = 1; q < NQ; q++) {
        uint16_t entries = 2 + below(63);
        g_assert_cmphex(kv_create_cq(d, q, entries, q, 3), ==, 0);
        g_assert_cmphex(kv_create_sq(d, q, 2 + below(63), q), ==, 0);
    }
}

static void submit_batch(Fuzz *f, uint16_t qid, bool admin)
{
    KvDev *d = f->d;
    KvQueue *q = &d->q[qid];
    int n = 1 + below(admin ? 3 : 8);
    uint16_t cids[64];

    n = MIN(n, q->sq_size - 1);
    for (int i = 0; i < n; i++) {
        struct kvssd_sqe s = admin ? random_admin(f) : random_io();
        cids[i] = kv_put(d, qid, &s, false);
    }
    kv_ring(d, qid);
    f->commands += n;
    drain(f, qid, cids, n);
}

static void invalid_doorbell(Fuzz *f)
{
    KvDev *d = f->d;
    uint32_t qid = below(70);
    bool cq = chance(500);

    if (qid < NQ && d->q[qid].live) {
        /* a value beyond the queue: ignored by the device */
        kv_wr32(d, 0x1000 + 8 * qid + (cq ? 4 : 0), (cq ? d->q[qid].size : d->q[qid].sq_size) +
                                                    below(1000));
    } else if (qid >= NQ) {
        kv_wr32(d, 0x1000 + 8 * qid + (cq ? 4 : 0), below(64));
    }
    f->commands++;
}

static void send_aer(Fuzz *f)
{
    if (f->outstanding_aers >= 3) {
        return;
    }
    struct kvssd_sqe s = kv_sqe(0x0c, 0);
    uint16_t cid = kv_put(f->d, 0, &s, false);
    f->aer_cids[f->outstanding_aers++] = cid;
    kv_ring(f->d, 0);
    f->commands++;
}

static void reset_in_flight(Fuzz *f)
{
    KvDev *d = f->d;
    uint16_t qid = 1 + below(NQ - 1);
    int n = MIN(1 + (int)below(8), d->q[qid].sq_size - 1);

    for (int i = 0; i < n; i++) {
        struct kvssd_sqe s = random_io();
        kv_put(d, qid, &s, false);
    }
    kv_ring(d, qid);
    if (chance(300)) {
        kv_wr32(d, KV_REG_CC, KV_CC_ENABLE | (1 + below(2)) << 14);   /* shutdown */
        g_assert(kv_wait_csts(d, 0xc, 0x8));
    }
    kv_disable(d);
    f->commands += n;
    f->resets++;
    setup_queues(f);
}

static void test_fuzz(void)
{
    const char *env = g_getenv("KVSSD_FUZZ_COMMANDS");
    uint64_t target = env ? g_ascii_strtoull(env, NULL, 10) : 100000;
    Fuzz f = { 0 };

    rng = (uint64_t)(uint32_t)g_test_rand_int() << 32 | (uint32_t)g_test_rand_int() | 1;
    g_test_message("kvssd fuzz: %" PRIu64 " commands, rng 0x%" PRIx64, target, rng);
    /* small NAND so that GC and capacity limits are reached */
    f.d = kv_start("blocks-per-die=32,pages-per-block=32,tag-table-entries=16,"
                   "inline-timeout-ms=50");
    KvDev *d = f.d;

    /* 4 MiB of random bytes, and a PRP list of all its pages (and of the
     * retrieve buffers) so that any run of pages has a valid list */
    uint8_t *page = g_malloc(4096);
    for (int p = 0; p < DATA_PAGES; p++) {
        for (int i = 0; i < 4096; i++) {
            page[i] = (uint8_t)rnd();
        }
        qtest_memwrite(d->qts, KV_DATA + p * 4096ull, page, 4096);
    }
    g_free(page);
    uint64_t *list = g_new(uint64_t, DATA_PAGES + 1);
    for (int p = 0; p <= DATA_PAGES; p++) {
        list[p] = cpu_to_le64(KV_DATA + p * 4096ull);
    }
    qtest_memwrite(d->qts, PRPL_IN, list, (DATA_PAGES + 1) * 8);
    for (int p = 0; p <= OUT_PAGES; p++) {
        list[p] = cpu_to_le64(KV_DATA2 + p * 4096ull);
    }
    qtest_memwrite(d->qts, PRPL_OUT, list, (OUT_PAGES + 1) * 8);
    g_free(list);
    /* an SGL segment: 4 data blocks in RAM */
    uint8_t seg[64];
    for (int i = 0; i < 4; i++) {
        uint64_t a = cpu_to_le64(KV_DATA + i * 8192ull);
        uint32_t l = cpu_to_le32(1000 + i * 3000);
        memset(seg + 16 * i, 0, 16);
        memcpy(seg + 16 * i, &a, 8);
        memcpy(seg + 16 * i + 8, &l, 4);
    }
    qtest_memwrite(d->qts, SGL_AREA, seg, sizeof(seg));

    setup_queues(&f);
    while (f.commands < target) {
        uint32_t r = below(1000);
        if (r < 850) {
            submit_batch(&f, 1 + below(NQ - 1), false);
        } else if (r < 960) {
            submit_batch(&f, 0, true);
        } else if (r < 985) {
            invalid_doorbell(&f);
        } else if (r < 995) {
            send_aer(&f);
        } else if (r < 997) {
            qtest_clock_step(d->qts, 100 * 1000 * 1000);   /* expire inline streams */
            f.commands++;
        } else {
            reset_in_flight(&f);
        }
        if (r % 64 == 0) {
            fuzz_fail_if_fatal(&f);
        }
    }
    fuzz_fail_if_fatal(&f);
    g_test_message("io ok %" PRIu64 " err %" PRIu64 ", admin ok %" PRIu64 " err %" PRIu64
                   ", resets %" PRIu64 ", AERs completed %" PRIu64,
                   f.io_ok, f.io_err, f.admin_ok, f.admin_err, f.resets, f.aer_done);
    g_assert_cmpuint(f.io_ok, >, 0);
    g_assert_cmpuint(f.io_err, >, 0);

    /* the FTL is consistent, and the device still stores exact bytes */
    kv_disable(d);
    kv_enable(d);
    struct kvssd_sqe s = kv_sqe(0xc4, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_io_queue(d, 16);
    static uint8_t val[10000], back[10000];
    for (int i = 0; i < 10000; i++) {
        val[i] = (uint8_t)(i * 31 + 7);
    }
    /* the device may be full after the run: make room first */
    s = kv_sqe(0x80, 1);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    g_assert_cmphex(kv_store(d, "final", val, sizeof(val), 0), ==, 0);
    KvCqe c = kv_retrieve(d, "final", back, sizeof(back));
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, sizeof(val));
    g_assert(memcmp(val, back, sizeof(val)) == 0);
    s = kv_sqe(0xc4, 0);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/fuzz/random-commands", test_fuzz);
    return g_test_run();
}
