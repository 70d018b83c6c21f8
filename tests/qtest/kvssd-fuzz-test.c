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
 * shutdowns. Among them, weighted, the attack classes of issue 10, each
 * checked exactly:
 *   - PRP chains that loop (a list entry at FF8h naming itself, two list
 *     pages naming each other, a chain pointer with an offset) under Store,
 *     a hybrid inline head and Get Log Page: Invalid PRP Offset (4013h),
 *     and the device answers the next command;
 *   - SQ deletion with an undrained CQ: rounds of "create a deep SQ on a
 *     tiny CQ nobody reads, ring it full, delete it"; the completions the
 *     host finds afterwards are bounded by the queue sizes, each one is
 *     Aborted due to SQ Deletion or the status of the command that ran;
 *   - a controller reset with a full tag table of open inline streams of
 *     up to 2 MiB: heads succeed with the bytes received, one more gets Tag
 *     Table Full, after the reset every tag is unknown (01C0h) and a new
 *     stream stores exact bytes (or is refused with Capacity Exceeded);
 *   - keys that collide in the index: keys sharing the top 10 bits of the
 *     device's key hash under its secret seed (read from the checkpoint of
 *     its image= file; brute force at small depth, 4 KiB index pages),
 *     stored, read back byte-exact (or refused with Capacity Exceeded by
 *     the directory bound), deleted, with a sentinel key that must survive;
 * and the test as a whole proves that
 *   - every submitted command completes exactly once with its CID (no hang,
 *     no lost or duplicated completion) and never with Internal Error,
 *   - the controller never reports Controller Fatal Status (queues always
 *     live in RAM here, so no guest action may make it fatal),
 *   - QEMU survives (and, under ASan, touches no memory it should not),
 *   - afterwards the FTL consistency check (vendor admin C4h, kvftl_check)
 *     passes, a store/retrieve round trip returns the exact bytes, and
 *     QEMU's resident memory is within the bound the properties give.
 * The second case runs the same with latency=on (completions held until
 * their simulated time; the test steps the virtual clock).
 *
 * Reproducible: the command stream depends only on the seed,
 * KVSSD_QTEST_SEED (default 1), printed first. The device's own key-hash
 * seed is a fresh secret on every run (no property pins it), so index
 * layouts, and which colliding keys the directory bound refuses, differ.
 */
#include "kvssd-common.h"

#include "kvssd-image.h"

#define NQ 5                      /* I/O queue ids used: 1..4 */
#define DATA_PAGES 1024           /* 4 MiB of random bytes at KV_DATA */
#define OUT_PAGES 1024            /* 4 MiB of retrieve buffers at KV_DATA2 */
#define PRPL_IN KV_PRPLIST        /* list of all KV_DATA pages */
#define PRPL_OUT (KV_PRPLIST + 0x4000)
#define SGL_AREA (KV_PRPLIST + 0x10000)
/*
 * KV_DATA pages whose bytes never change: random Retrieves reach the first
 * eight through the SGL segment at SGL_AREA. Exact checks store values
 * of up to two pages from these.
 */
#define STABLE_PAGE(i) (16 + (uint32_t)(i) % (DATA_PAGES - 18))
/* Areas of the attack classes, above everything kvssd-common.h places. */
#define CHAIN_AREA 0x4000000ull   /* 8 pages of looping PRP lists */
#define SQDEL_SQ 0x4010000ull     /* a 1024-entry SQ (64 KiB) */
#define SQDEL_CQ 0x4020000ull     /* its tiny CQ */
#define DPTR_LIST 0x4030000ull    /* the PRP list of the exact checks' Stores */
#define COLL_OUT 0x4100000ull     /* retrieve buffer of the exact checks (64 KiB) */
#define SQDEL_QID 5               /* the queue pair of the SQ-deletion rounds */
#define VALUE_MAX_BYTES (2u * 1024 * 1024)   /* KV max value length (KVMVL) */

/*
 * The device: a small NAND (2 x 2 dies of 32 blocks of 64 x 16 KiB pages:
 * 32 erase stripes of 4 MiB, the smallest that holds a 2 MiB blob; 128 MiB)
 * so that GC and capacity limits are reached, 4 KiB index pages
 * and a 1 MiB index cache so that pages split and are evicted, a 16-entry
 * tag table and a 50 ms inline timeout.
 */
#define FUZZ_PROPS                                                        \
    "channels=2,dies-per-channel=2,blocks-per-die=32,pages-per-block=64," \
    "index-page-bytes=4096,index-dram-bytes=1048576,"                     \
    "tag-table-entries=16,inline-timeout-ms=50"
#define FUZZ_NAND_BYTES (2ull * 2 * 32 * 64 * 16384)
#define FUZZ_INDEX_DRAM_BYTES (1ull << 20)
#define FUZZ_TAGS 16
#define LATENCY_PROPS                                           \
    ",latency=on,read-latency-ns=2000,program-latency-ns=5000," \
    "erase-latency-ns=10000"

/* Statuses as the CQE carries them without the phase bit (DNR = 4000h). */
#define ST_INVALID_PRP_OFFSET (KVSSD_SC_INVALID_PRP_OFFSET | KVSSD_SC_DNR)
#define ST_INVALID_QID 0x4101     /* Invalid Queue Identifier (SCT 1, SC 01h), DNR */

/*
 * The command stream: a function of KVSSD_QTEST_SEED only. What depends on
 * the device's answers (its secret key-hash seed, a restart a Format
 * forced) draws from side_rng instead, so that it cannot shift the stream.
 */
static uint64_t rng, side_rng;

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
    bool latency;                 /* latency=on: step the virtual clock to get completions */
    char *props;                  /* the device's properties (image= included) */
    char *dir, *image;            /* a temporary directory and the image in it */
    uint64_t hash_seed;           /* the device's key-hash seed, read from its image */
    bool hash_seed_known;         /* false from a Format on (a new seed) */
    uint64_t rss0;                /* QEMU's VmRSS after the last start (KiB) */
    uint64_t restarts;
    uint16_t next_qid;            /* the I/O queue of the next exact check */
    uint8_t *data;                /* copy of the DATA_PAGES random pages at KV_DATA */
    uint64_t commands;
    uint64_t io_ok, io_err, admin_ok, admin_err, resets, aer_done;
    uint64_t prp_chains, sqdel_rounds, sqdel_seen, stream_resets, streams_opened;
    uint64_t coll_keys, coll_stored, coll_refused;
    uint16_t outstanding_aers;
    uint16_t aer_cids[8];
} Fuzz;

static void fuzz_fail_if_fatal(Fuzz *f)
{
    uint32_t csts = kv_rd32(f->d, KVSSD_REG_CSTS);
    if (csts & 2) {
        g_error("controller fatal status after %" PRIu64 " commands (seed-dependent)", f->commands);
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

/*
 * A valid data pointer for @len bytes (at most 2 MiB + 4 KiB) of the
 * KV_DATA pages from @first: PRP1, and PRP2 or a PRP list in one page at
 * DPTR_LIST. (PRPL_IN is no valid list for more than a page of entries:
 * the last entry of its list pages is a data page, not a chain pointer.)
 */
static void data_prp(KvDev *d, struct kvssd_sqe *s, uint32_t first, uint32_t len)
{
    uint32_t pages = (len + 4095) / 4096;
    uint64_t prp2 = 0;

    g_assert(first + pages <= DATA_PAGES && pages <= 513);
    if (pages == 2) {
        prp2 = KV_DATA + (uint64_t)(first + 1) * 4096;
    } else if (pages > 2) {
        uint64_t list[512];
        for (uint32_t i = 1; i < pages; i++) {
            list[i - 1] = cpu_to_le64(KV_DATA + (uint64_t)(first + i) * 4096);
        }
        qtest_memwrite(d->qts, DPTR_LIST, list, (pages - 1) * 8);
        prp2 = DPTR_LIST;
    }
    kv_set_prp(s, KV_DATA + (uint64_t)first * 4096, prp2);
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
    "a",         "b",         "key1", "key2", "0123456789abcdef", "zz", "prefix-01",
    "prefix-02", "prefix-03", "x",    "yy",   "long-key-16bytes", "k9", "\x01\x02\x03\x04",
    "kv",        "q",
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
        KVSSD_OPC_STORE,
        KVSSD_OPC_STORE,
        KVSSD_OPC_STORE,
        KVSSD_OPC_RETRIEVE,
        KVSSD_OPC_RETRIEVE,
        KVSSD_OPC_DELETE,
        KVSSD_OPC_EXIST,
        KVSSD_OPC_LIST,
        KVSSD_OPC_FLUSH,
        KVSSD_OPC_INLINE_HEAD,
        KVSSD_OPC_INLINE_XFER,
        KVSSD_OPC_INLINE_HEAD_FULL,
        KVSSD_OPC_INLINE_XFER_FULL,
        KVSSD_OPC_KEY_STAGE,
        KVSSD_OPC_ITER_OPEN,
        KVSSD_OPC_ITER_READ,
        KVSSD_OPC_ITER_CLOSE,
        0xff,
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
    /* 0xff: a random opcode */
    static const uint8_t ops[] = {
        KVSSD_ADM_IDENTIFY,     KVSSD_ADM_IDENTIFY,     KVSSD_ADM_GET_LOG_PAGE,
        KVSSD_ADM_GET_LOG_PAGE, KVSSD_ADM_SET_FEATURES, KVSSD_ADM_GET_FEATURES,
        KVSSD_ADM_GET_FEATURES, KVSSD_ADM_ABORT,        KVSSD_ADM_FTL_CHECK,
        KVSSD_ADM_FORMAT_NVM,   KVSSD_ADM_CREATE_SQ,    KVSSD_ADM_CREATE_CQ,
        KVSSD_ADM_DELETE_SQ,    KVSSD_ADM_DELETE_CQ,    0xff};
    uint8_t opc = ops[below(sizeof(ops))];
    if (opc == 0xff) {
        opc = (uint8_t)rnd();
    }
    if (opc == KVSSD_ADM_ASYNC_EVENT) {
        opc = KVSSD_ADM_IDENTIFY;    /* AERs are sent on purpose only */
    }
    if (opc == KVSSD_ADM_DBBUF_CONFIG) {
        opc = KVSSD_ADM_IDENTIFY; /* this fuzzer rings MMIO doorbells only */
    }
    if (opc == KVSSD_ADM_FORMAT_NVM && !chance(50)) {
        opc = KVSSD_ADM_IDENTIFY; /* Format rarely */
    }
    if (opc == KVSSD_ADM_FORMAT_NVM) {
        f->hash_seed_known = false; /* a Format draws a new seed */
    }
    struct kvssd_sqe s = kv_sqe(opc, chance(500) ? 1 : (chance(500) ? KVSSD_NSID_ALL : rnd()));
    kv_set_prp(&s, KV_DATA2 + below(256) * 4096ull, KV_DATA2 + 256 * 4096ull);
    switch (opc) {
    case KVSSD_ADM_IDENTIFY:
        s.cdw[10] = chance(800) ? (uint32_t)(uint8_t[]){KVSSD_CNS_NS,
                                                        KVSSD_CNS_CTRL,
                                                        KVSSD_CNS_ACTIVE_NS_LIST,
                                                        KVSSD_CNS_NS_DESCR_LIST,
                                                        KVSSD_CNS_CSI_NS,
                                                        KVSSD_CNS_CSI_CTRL,
                                                        KVSSD_CNS_CSI_INDEPENDENT_NS,
                                                        KVSSD_CNS_IO_CMD_SET_PROFILES}[below(8)]
                                : rnd();
        s.cdw[11] = below(3) << 24;
        break;
    case KVSSD_ADM_GET_LOG_PAGE:
        s.cdw[10] = (chance(800) ? (uint32_t)(uint8_t[]){KVSSD_LID_ERROR, KVSSD_LID_SMART,
                                                         KVSSD_LID_FW_SLOT, KVSSD_LID_EFFECTS,
                                                         KVSSD_LID_STATS}[below(5)]
                                 : below(256)) |
                    (chance(900) ? below(1024) : below(2048)) << 16 | (rnd() & 0x8000);
        s.cdw[11] = chance(950) ? 0 : rnd();
        s.cdw[12] = chance(900) ? below(8) * 4 : rnd();
        s.cdw[14] = below(3) << 24;
        break;
    case KVSSD_ADM_SET_FEATURES:
    case KVSSD_ADM_GET_FEATURES:
        s.cdw[10] = (chance(800)
                         ? (uint32_t)(uint8_t[]){KVSSD_FID_ARBITRATION, KVSSD_FID_POWER_MGMT,
                                                 KVSSD_FID_TEMP_THRESHOLD, KVSSD_FID_ERROR_RECOVERY,
                                                 KVSSD_FID_VOLATILE_WC, KVSSD_FID_NUM_QUEUES,
                                                 KVSSD_FID_IRQ_COALESCING,
                                                 KVSSD_FID_IRQ_VECTOR_CONFIG,
                                                 KVSSD_FID_WRITE_ATOMICITY,
                                                 KVSSD_FID_ASYNC_EVENT_CONFIG,
                                                 KVSSD_FID_IOCS_PROFILE, KVSSD_FID_KV_CONFIG,
                                                 KVSSD_FID_RESET_STATS}[below(13)]
                         : below(256)) |
                    (chance(900) ? below(4) << 8 : rnd() & 0xffffff00);
        s.cdw[11] = chance(500) ? below(4) : rnd();
        if ((s.cdw[10] & 0xff) == KVSSD_FID_NUM_QUEUES && opc == KVSSD_ADM_SET_FEATURES) {
            s.cdw[11] = below(8) | below(8) << 16; /* keep queues usable */
        }
        break;
    case KVSSD_ADM_ABORT:
        s.cdw[10] = rnd();
        break;
    case KVSSD_ADM_FORMAT_NVM:
        s.cdw[10] = chance(700) ? 0 : rnd() & 0xfff;
        break;
    case KVSSD_ADM_CREATE_SQ:
    case KVSSD_ADM_CREATE_CQ:
        /* queue creation with random (mostly invalid) parameters; never ids 1..4 */
        s.cdw[10] = (uint32_t)below(1100) << 16 | (chance(500) ? 0 : 5 + below(70));
        s.cdw[11] = rnd();
        /* bases in RAM (aligned, or misaligned and refused): a queue the
         * device accepts must never make it fetch or post outside RAM */
        kv_set_prp(&s, KV_SQ(40) + (chance(500) ? 0 : 1 + below(4095)), 0);
        break;
    case KVSSD_ADM_DELETE_SQ:
    case KVSSD_ADM_DELETE_CQ:
        s.cdw[10] = chance(500) ? 0 : 5 + below(70);
        break;
    default:
        for (int i = 10; i < 16; i++) {
            s.cdw[i] = chance(500) ? rnd() : 0;
        }
        break;
    }
    return s;
}

/*
 * latency=on: move the virtual clock by a small step, so that the device
 * posts the completions due by then. Small, so that a wait never jumps
 * over the inline timeout (50 ms) of the streams a test has open.
 */
static void step_clock(Fuzz *f)
{
    qtest_clock_step(f->d->qts, 100 * 1000);
}

/*
 * Collect completions of queue @qid until @want CIDs from @cids are seen
 * (each into @out[i] when @out is given). With latency=on the device holds
 * completions until their simulated time: when none is there, step the
 * virtual clock to the device's next deadline.
 */
static void drain(Fuzz *f, uint16_t qid, uint16_t *cids, int want, KvCqe *out)
{
    int got = 0;
    bool seen[64] = {false};

    g_assert(want <= 64);
    for (long polls = 0; got < want; polls++) {
        KvCqe c;
        if (!kv_try_cqe(f->d, qid, &c)) {
            if (polls > 2000000) {
                fuzz_fail_if_fatal(f);
                g_error("queue %u: %d of %d completions after %ld polls", qid, got, want, polls);
            }
            if (f->latency && polls % 16 == 15) {
                step_clock(f);
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
        if (out) {
            out[idx] = c;
        }
        g_assert_cmphex(c.status & KVSSD_STATUS_CODE_MASK, !=,
                        KVSSD_SC_INTERNAL_ERROR); /* never Internal Error */
        if (qid == 0) {
            c.status ? f->admin_err++ : f->admin_ok++;
        } else {
            c.status ? f->io_err++ : f->io_ok++;
        }
    }
}

/* One command on @qid, waited for (AERs and latency=on handled). */
static KvCqe fz_cmd(Fuzz *f, uint16_t qid, struct kvssd_sqe *s)
{
    uint16_t cid = kv_put(f->d, qid, s, false);
    KvCqe c;

    kv_ring(f->d, qid);
    f->commands++;
    drain(f, qid, &cid, 1, &c);
    return c;
}

static uint16_t fz_status(Fuzz *f, uint16_t qid, struct kvssd_sqe *s)
{
    return fz_cmd(f, qid, s).status;
}

static void setup_queues(Fuzz *f)
{
    KvDev *d = f->d;

    kv_enable(d);
    f->outstanding_aers = 0;
    g_assert_cmphex(
        kv_feature(d, KVSSD_ADM_SET_FEATURES, KVSSD_FID_NUM_QUEUES, 0x00070007, 0).status, ==, 0);
    for (uint16_t q = 1; q < NQ; q++) {
        uint16_t entries = 2 + below(63);
        g_assert_cmphex(kv_create_cq(d, q, entries, q, 3), ==, 0);
        g_assert_cmphex(kv_create_sq(d, q, 2 + below(63), q), ==, 0);
    }
}

/*
 * Up to @n of @sqes (as many as @qid's SQ takes) into the queue, rung.
 * Callers draw all @n commands whatever the queue size, so that the random
 * stream does not depend on queue sizes (those chosen at a restart come
 * from the side stream), and the budget counts all @n. Returns the number
 * submitted.
 */
static int put_batch(Fuzz *f, uint16_t qid, struct kvssd_sqe *sqes, int n, uint16_t *cids)
{
    int m = MIN(n, f->d->q[qid].sq_size - 1);

    for (int i = 0; i < m; i++) {
        cids[i] = kv_put(f->d, qid, &sqes[i], false);
    }
    kv_ring(f->d, qid);
    f->commands += n;
    return m;
}

static void submit_batch(Fuzz *f, uint16_t qid, bool admin)
{
    int n = 1 + below(admin ? 3 : 8);
    struct kvssd_sqe sqes[8];
    uint16_t cids[8];

    for (int i = 0; i < n; i++) {
        sqes[i] = admin ? random_admin(f) : random_io();
    }
    int m = put_batch(f, qid, sqes, n, cids);
    drain(f, qid, cids, m, NULL);
}

static void invalid_doorbell(Fuzz *f)
{
    KvDev *d = f->d;
    uint32_t qid = below(70);
    bool cq = chance(500);

    if (qid < NQ && d->q[qid].live) {
        /* a value beyond the queue: ignored by the device */
        kv_wr32(d, KVSSD_REG_SQ0TDBL + 8 * qid + (cq ? 4 : 0),
                (cq ? d->q[qid].size : d->q[qid].sq_size) + below(1000));
    } else if (qid >= NQ) {
        kv_wr32(d, KVSSD_REG_SQ0TDBL + 8 * qid + (cq ? 4 : 0), below(64));
    }
    f->commands++;
}

static void send_aer(Fuzz *f)
{
    if (f->outstanding_aers >= 3) {
        return;
    }
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_ASYNC_EVENT, 0);
    uint16_t cid = kv_put(f->d, 0, &s, false);
    f->aer_cids[f->outstanding_aers++] = cid;
    kv_ring(f->d, 0);
    f->commands++;
}

static void reset_in_flight(Fuzz *f)
{
    KvDev *d = f->d;
    uint16_t qid = 1 + below(NQ - 1);
    int n = 1 + (int)below(8);
    struct kvssd_sqe sqes[8];
    uint16_t cids[8];

    for (int i = 0; i < n; i++) {
        sqes[i] = random_io();
    }
    put_batch(f, qid, sqes, n, cids);
    if (chance(300)) {
        /* shutdown: normal or abrupt */
        kv_wr32(d, KVSSD_REG_CC, KV_CC_ENABLE | (1 + below(2)) << KVSSD_CC_SHN_SHIFT);
        g_assert(kv_wait_csts(d, 0xc, 0x8));
    }
    kv_disable(d);
    f->resets++;
    setup_queues(f);
}

static struct kvssd_sqe stream_xfer(uint32_t tag, uint32_t seq);
static KvCqe key_cmd(Fuzz *f, uint8_t opc, const char *key, uint32_t len, uint32_t first_page);
static bool is_capacity_exceeded(uint16_t st);
static void check_bytes(Fuzz *f, const char *key, const uint8_t *want, uint32_t len);

/* ---- Attack class: PRP chains that loop ---------------------------------- */

static void put_le64(KvDev *d, uint64_t addr, uint64_t v)
{
    uint64_t le = cpu_to_le64(v);
    qtest_memwrite(d->qts, addr, &le, 8);
}

/*
 * A PRP list whose walk loops: (0) the entry at FF8h of a list page, the
 * only entry PRP2 names, points at itself; (1) two list pages whose FF8h
 * entries point at each other; (2) PRP2 names the last k entries of a page,
 * k - 1 data pages and a chain pointer back to PRP2 (an offset, so each
 * pass makes progress but the chain is malformed). A chain pointer is a
 * PRP entry inside a list and must have offset 0: each is refused with
 * Invalid PRP Offset, by Store, by a hybrid inline head (which then opens
 * no stream) and by Get Log Page on the admin queue, and the device
 * answers the next command. Returns PRP2; *@len is the transfer length.
 */
static uint64_t looping_prp_list(Fuzz *f, uint32_t *len)
{
    KvDev *d = f->d;
    uint64_t l1 = CHAIN_AREA + below(4) * 4096ull, l2 = CHAIN_AREA + (4 + below(4)) * 4096ull;
    uint32_t k;

    qtest_memset(d->qts, CHAIN_AREA, 0, 8 * 4096);
    switch (below(3)) {
    case 0:
        put_le64(d, l1 + 0xff8, l1 + 0xff8);
        *len = 4096 * (3 + below(30));
        return l1 + 0xff8;
    case 1:
        put_le64(d, l1 + 0xff8, l2 + 0xff8);
        put_le64(d, l2 + 0xff8, l1 + 0xff8);
        *len = 4096 * (3 + below(30));
        return l1 + 0xff8;
    default:
        k = 2 + below(8);
        for (uint32_t i = 0; i + 1 < k; i++) {
            put_le64(d, l1 + 0x1000 - 8 * k + 8 * i, KV_DATA + (uint64_t)below(DATA_PAGES) * 4096);
        }
        put_le64(d, l1 + 0xff8, l1 + 0x1000 - 8 * k);
        /* more data pages than one pass over the list gives: the walk must chain */
        *len = 4096 * (1 + k + below(k));
        return l1 + 0x1000 - 8 * k;
    }
}

static void prp_chain(Fuzz *f)
{
    uint32_t len;
    uint64_t prp2 = looping_prp_list(f, &len);
    uint16_t qid = 1 + below(NQ - 1);
    struct kvssd_sqe s;
    const char *key = "prp-chain";
    uint32_t kind = below(3);

    if (kind == 0) {
        s = kv_sqe(KVSSD_OPC_STORE, 1);
        kvssd_sqe_set_key(&s, key, strlen(key));
        s.cdw[10] = len;
        s.cdw[11] = kvssd_cdw11(strlen(key), 0);
    } else if (kind == 1) {
        /* a whole number of pages: no inline tail, so no stream slot is needed;
         * tags from 4000 on are never used by the random commands */
        s = kv_sqe(KVSSD_OPC_INLINE_HEAD, 1);
        s.cdw[10] = kvssd_inline_head_cdw10(len, 0, strlen(key));
        s.cdw[11] = (4000 + below(16)) | KVSSD_INLINE_HYBRID;
        uint8_t payload[24] = {0};
        memcpy(payload, key, strlen(key));
        static const uint8_t dw[] = {2, 3, 12, 13, 14, 15};
        for (int i = 0; i < 6; i++) {
            s.cdw[dw[i]] = le32p(payload + 4 * i);
        }
    } else {
        qid = 0;
        s = kv_sqe(KVSSD_ADM_GET_LOG_PAGE, KVSSD_NSID_ALL);
        s.cdw[10] = kvssd_get_log_cdw10(KVSSD_LID_SMART, len / 4 - 1); /* len bytes */
    }
    kv_set_prp(&s, KV_DATA + (uint64_t)below(DATA_PAGES) * 4096, prp2);
    KvCqe c = fz_cmd(f, qid, &s);
    if (c.status != ST_INVALID_PRP_OFFSET) {
        g_error("looping PRP list (PRP2 %" PRIx64 ", %u bytes, %s): status 0x%x, "
                "want 0x%x (Invalid PRP Offset)",
                prp2, len,
                kind == 0   ? "Store"
                : kind == 1 ? "hybrid inline head"
                            : "Get Log Page",
                c.status, ST_INVALID_PRP_OFFSET);
    }
    if (kind == 1) {
        /* the head opened no stream */
        struct kvssd_sqe x = stream_xfer(s.cdw[11] & KVSSD_TAG_MASK, 1);
        g_assert_cmphex(fz_status(f, 1 + below(NQ - 1), &x), ==, KVSSD_SC_INLINE_UNKNOWN_TAG);
    }
    /* the device answers, and nothing was stored under the key */
    s = kv_sqe(KVSSD_OPC_EXIST, 1);
    kvssd_sqe_set_key(&s, key, strlen(key));
    s.cdw[11] = strlen(key);
    g_assert_cmphex(fz_status(f, 1 + below(NQ - 1), &s), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    f->prp_chains++;
}

/* ---- Attack class: SQ deletion with an undrained CQ ---------------------- */

static uint16_t admin_queue_cmd(Fuzz *f, uint8_t opc, uint16_t qid, uint16_t entries, uint64_t base,
                                uint32_t cdw11)
{
    struct kvssd_sqe s = kv_sqe(opc, 0);
    s.cdw[10] = (uint32_t)(entries ? entries - 1 : 0) << 16 | qid;
    s.cdw[11] = cdw11;
    kv_set_prp(&s, base, 0);
    return fz_status(f, 0, &s);
}

/*
 * Rounds of: create a deep SQ on a CQ of 2..4 entries that nobody reads,
 * fill it (tail = size - 1), delete it. The device may run a few of the
 * commands before the deletion (as many as the CQ can take); the rest are
 * aborted. Afterwards the host drains the CQ: every completion is either
 * the status of the command that ran (Exist of an absent key: 0087h) or
 * Aborted due to SQ Deletion (0008h), and there are no more of them than
 * the queues can hold (the CQ's entries once posted, plus as many waiting
 * as it has entries), however many rounds ran: completions the device
 * keeps for a CQ never exceed what the queues can hold.
 */
static void sq_delete_undrained(Fuzz *f)
{
    KvDev *d = f->d;
    uint16_t cq_entries = 2 + below(3);
    uint32_t rounds = 2 + below(15);
    uint64_t bound = 2 * (uint64_t)cq_entries;
    const char *key = "sqdel-absent";

    /* queue ids 5..8 may hold queues the random admin commands created */
    struct kvssd_sqe nq = kv_sqe(KVSSD_ADM_SET_FEATURES, 0);
    nq.cdw[10] = KVSSD_FID_NUM_QUEUES; /* 8 SQs, 8 CQs */
    nq.cdw[11] = 0x00070007;
    g_assert_cmphex(fz_status(f, 0, &nq), ==, 0);
    for (uint16_t q = SQDEL_QID; q <= 8; q++) {
        uint16_t st = admin_queue_cmd(f, KVSSD_ADM_DELETE_SQ, q, 0, 0, 0);
        g_assert(st == 0 || st == ST_INVALID_QID);
    }
    uint16_t st = admin_queue_cmd(f, KVSSD_ADM_DELETE_CQ, SQDEL_QID, 0, 0, 0);
    g_assert(st == 0 || st == ST_INVALID_QID);

    /* 1023 well-formed commands with distinct CIDs, written once */
    struct kvssd_sqe *sq = g_new0(struct kvssd_sqe, 1024);
    for (int i = 0; i < 1024; i++) {
        struct kvssd_sqe s = kv_sqe(KVSSD_OPC_EXIST, 1);
        kvssd_sqe_set_key(&s, key, strlen(key));
        s.cdw[11] = strlen(key);
        s.cdw[0] |= (uint32_t)(0xf000 + i) << 16;
        for (int j = 0; j < 16; j++) {
            sq[i].cdw[j] = cpu_to_le32(s.cdw[j]);
        }
    }
    for (int i = 0; i < 1024; i += 64) {
        qtest_memwrite(d->qts, SQDEL_SQ + i * sizeof(*sq), sq + i, 64 * sizeof(*sq));
    }
    g_free(sq);
    qtest_memset(d->qts, SQDEL_CQ, 0, 4096);
    g_assert_cmphex(admin_queue_cmd(f, KVSSD_ADM_CREATE_CQ, SQDEL_QID, cq_entries, SQDEL_CQ, 1), ==,
                    0);

    for (uint32_t r = 0; r < rounds; r++) {
        uint16_t sq_entries = chance(700) ? 1024 : 2 + below(1023);
        g_assert_cmphex(admin_queue_cmd(f, KVSSD_ADM_CREATE_SQ, SQDEL_QID, sq_entries, SQDEL_SQ,
                                        (uint32_t)SQDEL_QID << 16 | 1),
                        ==, 0);
        kv_wr32(d, KVSSD_REG_SQ0TDBL + 8 * SQDEL_QID, sq_entries - 1);
        f->commands++; /* the doorbell; the SQEs are mostly never run */
        g_assert_cmphex(admin_queue_cmd(f, KVSSD_ADM_DELETE_SQ, SQDEL_QID, 0, 0, 0), ==, 0);
        f->sqdel_rounds++;
    }

    /* drain: the completions the device kept for the CQ */
    d->q[SQDEL_QID] = (KvQueue){.cq = SQDEL_CQ, .size = cq_entries, .phase = true};
    uint64_t seen = 0;
    for (int idle = 0; idle < 2000; idle++) {
        KvCqe c;
        if (!kv_try_cqe(d, SQDEL_QID, &c)) {
            if (f->latency && idle % 16 == 15) {
                step_clock(f);
            }
            continue;
        }
        kv_cq_doorbell(d, SQDEL_QID);
        idle = 0;
        seen++;
        g_assert_cmpuint(c.cid, >=, 0xf000);
        g_assert_cmpuint(c.sqid, ==, SQDEL_QID);
        if (c.status != (KVSSD_SC_ABORTED_SQ_DELETION) &&
            c.status != (KVSSD_SC_ABORTED_SQ_DELETION | KVSSD_SC_DNR) &&
            c.status != KVSSD_SC_KEY_DOES_NOT_EXIST) {
            g_error("SQ deletion: completion cid 0x%x status 0x%x, want 0x8 or 0x87", c.cid,
                    c.status);
        }
        if (seen > bound) {
            g_error("SQ deletion: more than %" PRIu64 " completions for a %u-entry CQ after "
                    "%u rounds: the device keeps completions without bound",
                    bound, cq_entries, rounds);
        }
    }
    d->q[SQDEL_QID] = (KvQueue){0};
    f->sqdel_seen += seen;
    g_assert_cmphex(admin_queue_cmd(f, KVSSD_ADM_DELETE_CQ, SQDEL_QID, 0, 0, 0), ==, 0);
}

/* ---- Attack class: reset with a full tag table of open streams ----------- */

/* A stock inline head (81h) for @tag: key @key, @value bytes; hybrid sends the
 * whole pages through a PRP pointer into the KV_DATA pages from @first. */
static struct kvssd_sqe stream_head(KvDev *d, const char *key, uint32_t tag, uint32_t value,
                                    bool hybrid, uint32_t first)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_INLINE_HEAD, 1);
    uint8_t payload[24];
    static const uint8_t dw[] = {2, 3, 12, 13, 14, 15};
    uint32_t klen = strlen(key);

    for (int i = 0; i < 24; i++) {
        payload[i] = (uint8_t)(0x40 + i);
    }
    memcpy(payload, key, klen);
    for (int i = 0; i < 6; i++) {
        s.cdw[dw[i]] = le32p(payload + 4 * i);
    }
    s.cdw[10] = kvssd_inline_head_cdw10(value, 0, klen);
    s.cdw[11] = tag | (hybrid ? KVSSD_INLINE_HYBRID : 0);
    if (hybrid) {
        data_prp(d, &s, first, value & ~4095u);
    }
    return s;
}

static struct kvssd_sqe stream_xfer(uint32_t tag, uint32_t seq)
{
    struct kvssd_sqe s = kv_sqe(KVSSD_OPC_INLINE_XFER, 1);
    s.cdw[10] = kvssd_inline_tag_seq(tag, seq);
    for (int i = 11; i < 16; i++) {
        s.cdw[i] = 0x01010101u * (uint32_t)(i + seq);
    }
    s.cdw[2] = 0x0a0b0c0d;
    s.cdw[3] = 0x0e0f1011;
    return s;
}

/*
 * Reset first (so the table is empty), then fill the tag table with
 * streams of up to 2 MiB (hybrid ones bring their pages by DMA, so their
 * buffers are real memory): each head succeeds with DW0 = bytes received;
 * one more head gets Tag Table Full (01C5h), a head for an open tag Tag In
 * Use (01C3h); a transfer succeeds with DW0 grown by 28. Then a reset with
 * transfers in flight: afterwards every tag is unknown (01C0h: the reset
 * dropped the streams and the expiry memory), and a new stream on one of
 * the tags completes its Store.
 */
static void reset_with_streams(Fuzz *f)
{
    KvDev *d = f->d;
    uint32_t tag0 = 100 + below(3000), received[FUZZ_TAGS];
    char key[8];

    kv_disable(d);
    setup_queues(f);
    for (uint32_t i = 0; i < FUZZ_TAGS; i++) {
        bool hybrid = chance(500);
        uint32_t value = 4096 + below(VALUE_MAX_BYTES - 4096);
        uint32_t klen;
        /* an inline part longer than the head and one transfer: the stream stays open */
        if ((value & 4095) < 100) {
            value += 100;
        }
        snprintf(key, sizeof(key), "sr%u", i);
        klen = strlen(key);
        struct kvssd_sqe s = stream_head(d, key, tag0 + i, value, hybrid,
                                         below(DATA_PAGES - VALUE_MAX_BYTES / 4096));
        KvCqe c = fz_cmd(f, 1 + below(NQ - 1), &s);
        uint32_t dma = hybrid ? value & ~4095u : 0;
        received[i] = dma + 24 - klen;
        if (c.status != 0 || c.dw0 != received[i] || c.dw1 != 0) {
            g_error("stream head %u (tag %u, %u bytes%s): status 0x%x dw0 %u dw1 %u, "
                    "want 0 %u 0",
                    i, tag0 + i, value, hybrid ? ", hybrid" : "", c.status, c.dw0, c.dw1,
                    received[i]);
        }
        f->streams_opened++;
    }
    struct kvssd_sqe s = stream_head(d, "full", tag0 + FUZZ_TAGS, 1000, false, 0);
    g_assert_cmphex(fz_status(f, 1, &s), ==, KVSSD_SC_TAG_TABLE_FULL);
    s = stream_head(d, "inuse", tag0, 1000, false, 0);
    g_assert_cmphex(fz_status(f, 2, &s), ==, KVSSD_SC_INLINE_TAG_IN_USE);
    for (uint32_t i = 0; i < FUZZ_TAGS; i += 1 + below(4)) {
        s = stream_xfer(tag0 + i, 1);
        KvCqe c = fz_cmd(f, 1 + below(NQ - 1), &s);
        g_assert_cmphex(c.status, ==, 0);
        g_assert_cmpuint(c.dw0, ==, received[i] + KVSSD_INLINE_XFER_PAYLOAD);
    }
    /* transfers in flight, then the reset */
    uint16_t qid = 1 + below(NQ - 1), cids[8];
    struct kvssd_sqe xfers[8];
    int n = 1 + (int)below(8);
    for (int i = 0; i < n; i++) {
        uint32_t tag = tag0 + below(FUZZ_TAGS);
        xfers[i] = stream_xfer(tag, 2 + below(3));
    }
    put_batch(f, qid, xfers, n, cids);
    kv_disable(d);
    f->resets++;
    f->stream_resets++;
    setup_queues(f);
    for (uint32_t i = 0; i < FUZZ_TAGS; i++) {
        s = stream_xfer(tag0 + i, 2);
        g_assert_cmphex(fz_status(f, 1 + below(NQ - 1), &s), ==, KVSSD_SC_INLINE_UNKNOWN_TAG);
    }
    /* the table is free again: a 40-byte stream (head 24 - 3, one transfer of 19) */
    s = stream_head(d, "srx", tag0, 40, false, 0);
    KvCqe c = fz_cmd(f, 1, &s);
    g_assert_cmphex(c.status, ==, 0);
    g_assert_cmpuint(c.dw0, ==, 21);
    s = stream_xfer(tag0, 1);
    c = fz_cmd(f, 2, &s);
    g_assert(c.status == 0 || is_capacity_exceeded(c.status));
    g_assert_cmpuint(c.dw0, ==, 40);
    g_assert_cmpuint(c.dw1, ==, KVSSD_INLINE_DW1_STORED);
    if (c.status == 0) {
        /* the head's 21 payload bytes after the key, then 19 of the transfer's
         * (CDW2, CDW3, CDW11, CDW12, CDW13 little endian) */
        uint8_t want[40];
        static const uint8_t dw[] = {2, 3, 11, 12, 13};
        for (int i = 0; i < 21; i++) {
            want[i] = (uint8_t)(0x40 + 3 + i);
        }
        for (int i = 0; i < 19; i++) {
            want[21 + i] = (uint8_t)(s.cdw[dw[i / 4]] >> (8 * (i % 4)));
        }
        check_bytes(f, "srx", want, sizeof(want));
        g_assert_cmphex(key_cmd(f, KVSSD_OPC_DELETE, "srx", 0, 0).status, ==, 0);
    }
}

/* ---- Attack class: keys that collide in the index ------------------------ */

/*
 * The index hash of @key as kvftl/kv/index/hash/index.h computes it (XXH3-64
 * seeded; 0 becomes 1).
 */
static uint64_t device_key_hash(Fuzz *f, const void *key, size_t len)
{
    uint64_t h = XXH3_64bits_withSeed(key, len, f->hash_seed);
    return h ? h : 1;
}

static void fuzz_reboot(Fuzz *f);

static KvCqe key_cmd(Fuzz *f, uint8_t opc, const char *key, uint32_t len, uint32_t first_page)
{
    struct kvssd_sqe s = kv_sqe(opc, 1);
    uint32_t klen = strlen(key);

    kvssd_sqe_set_key(&s, key, klen);
    s.cdw[11] = kvssd_cdw11(klen, 0);
    if (opc == KVSSD_OPC_STORE) {
        s.cdw[10] = len;
        data_prp(f->d, &s, first_page, len);
    } else if (opc == KVSSD_OPC_RETRIEVE) {
        s.cdw[10] = len;
        kv_set_prp(&s, COLL_OUT, COLL_OUT + 4096);
    }
    /* the queues in turn, not at random: exact checks run as the device
     * answers (a Store stored or refused), so they draw nothing */
    f->next_qid = f->next_qid % (NQ - 1) + 1;
    return fz_cmd(f, f->next_qid, &s);
}

static bool is_capacity_exceeded(uint16_t st)
{
    return (st & ~KVSSD_SC_DNR) == KVSSD_SC_CAPACITY_EXCEEDED;
}

/* Retrieve @key and compare with the @len bytes at @want. */
static void check_bytes(Fuzz *f, const char *key, const uint8_t *want, uint32_t len)
{
    uint8_t back[8192];

    g_assert(len <= sizeof(back));
    qtest_memset(f->d->qts, COLL_OUT, 0, sizeof(back));
    KvCqe c = key_cmd(f, KVSSD_OPC_RETRIEVE, key, sizeof(back), 0);
    if (c.status != 0 || c.dw0 != len) {
        g_error("key %s: retrieve status 0x%x size %u, want 0 and %u", key, c.status, c.dw0, len);
    }
    qtest_memread(f->d->qts, COLL_OUT, back, len);
    if (memcmp(back, want, len) != 0) {
        g_error("key %s: the value read back differs from the %u bytes stored", key, len);
    }
}

/* Retrieve @key and compare with @len bytes of the KV_DATA page @page. */
static void check_value(Fuzz *f, const char *key, uint32_t page, uint32_t len)
{
    check_bytes(f, key, f->data + (uint64_t)page * 4096, len);
}

/*
 * 224..263 keys (more than one 4 KiB index page holds before it splits:
 * 255 slots, a split past 217) whose hashes under the device's seed share
 * their top 10 bits: the page that holds them splits again and again along
 * one side until the directory bound (ceil(log2(index pages)) + 4) stops
 * it. Found by brute force (about 1,000 tries a key) with the seed read
 * from the device's image (QEMU restarted when a Format drew a new one).
 * Each Store succeeds or, when the bound is hit or the device is full,
 * gets Capacity Exceeded; every key stored reads back byte-exact, every
 * refused one does not exist; a sentinel key stored before survives; then
 * all are deleted.
 */
static void colliding_keys(Fuzz *f)
{
    const uint32_t depth = 10, nkeys = 224 + below(40);
    typedef char Key[17];
    Key *k = g_new0(Key, nkeys);
    bool *stored = g_new0(bool, nkeys);
    uint64_t prefix = (uint64_t)rnd() >> (32 - depth);

    /* the sentinel: a full device is emptied by Format first */
    uint16_t st = key_cmd(f, KVSSD_OPC_STORE, "coll-sentinel", 5000, STABLE_PAGE(1)).status;
    if (is_capacity_exceeded(st)) {
        struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FORMAT_NVM, 1);
        g_assert_cmphex(fz_status(f, 0, &s), ==, 0);
        f->hash_seed_known = false;
        st = key_cmd(f, KVSSD_OPC_STORE, "coll-sentinel", 5000, STABLE_PAGE(1)).status;
    }
    g_assert_cmphex(st, ==, 0);
    if (!f->hash_seed_known) {
        fuzz_reboot(f); /* the image's checkpoint then names the seed */
    }
    /* how many tries a key takes depends on the device's seed: side stream */
    uint64_t stream = rng;
    rng = side_rng;
    for (uint32_t i = 0; i < nkeys; i++) {
        do {
            snprintf(k[i], sizeof(k[i]), "c%08x%06x", rnd(), i);
        } while (device_key_hash(f, k[i], strlen(k[i])) >> (64 - depth) != prefix);
    }
    side_rng = rng;
    rng = stream;
    for (uint32_t i = 0; i < nkeys; i++) {
        st = key_cmd(f, KVSSD_OPC_STORE, k[i], 1 + i % 200, STABLE_PAGE(i)).status;
        if (st == 0) {
            stored[i] = true;
            f->coll_stored++;
        } else if (is_capacity_exceeded(st)) {
            f->coll_refused++;
            if (kv_qtest_index_is("lsm")) {
                /* no directory bound: only a full device refuses, any key alike */
                g_assert_true(is_capacity_exceeded(
                    key_cmd(f, KVSSD_OPC_STORE, "coll-other-prefix", 1 + i % 200, STABLE_PAGE(i))
                        .status));
            }
        } else {
            g_error("colliding key %u (%s): Store status 0x%x, want 0 or Capacity Exceeded", i,
                    k[i], st);
        }
    }
    f->coll_keys += nkeys;
    for (uint32_t i = 0; i < nkeys; i++) {
        if (stored[i]) {
            check_value(f, k[i], STABLE_PAGE(i), 1 + i % 200);
        } else {
            g_assert_cmphex(key_cmd(f, KVSSD_OPC_EXIST, k[i], 0, 0).status, ==,
                            KVSSD_SC_KEY_DOES_NOT_EXIST);
        }
    }
    check_value(f, "coll-sentinel", STABLE_PAGE(1), 5000);
    for (uint32_t i = 0; i < nkeys; i++) {
        if (stored[i]) {
            g_assert_cmphex(key_cmd(f, KVSSD_OPC_DELETE, k[i], 0, 0).status, ==, 0);
        }
    }
    g_assert_cmphex(key_cmd(f, KVSSD_OPC_DELETE, "coll-sentinel", 0, 0).status, ==, 0);
    g_assert_cmphex(key_cmd(f, KVSSD_OPC_EXIST, k[below(nkeys)], 0, 0).status, ==,
                    KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_free(k);
    g_free(stored);
}

/* ---- The run ------------------------------------------------------------- */

static uint64_t fuzz_seed(void)
{
    const char *env = g_getenv("KVSSD_QTEST_SEED");
    return env && *env ? g_ascii_strtoull(env, NULL, 0) : 1;
}

/*
 * Resident memory QEMU may grow by during the run (KiB): the NAND (memory
 * backed, touched as it is programmed), the index cache, every stream slot
 * holding a 2 MiB value (+ 9 KiB of bookkeeping), the completions the
 * queues can hold (65 CQs of up to 1024 entries, twice, 64 bytes each with
 * the allocator's overhead), the 2 MiB value buffers of the command set,
 * and 64 MiB for everything the run warms up once (TCG, glib, firmware
 * tables). Under ASan, every byte costs 1/8 more of shadow, and freed
 * blocks wait in a quarantine of KVSSD_FUZZ_ASAN_QUARANTINE_MB (set for
 * QEMU's run below).
 */
#define FUZZ_ASAN_QUARANTINE_MB 64
static uint64_t rss_bound_kib(void)
{
    uint64_t b = FUZZ_NAND_BYTES + FUZZ_INDEX_DRAM_BYTES +
                 FUZZ_TAGS * (2ull * 1024 * 1024 + 9 * 1024) + 65ull * 2 * 1024 * 64 +
                 4ull * 1024 * 1024 + 64ull * 1024 * 1024;
#ifdef __SANITIZE_ADDRESS__
    b += b / 8 + FUZZ_ASAN_QUARANTINE_MB * 1024ull * 1024;
#endif
    return b / 1024;
}

/* Start QEMU on the image, fill guest memory, set up the queues. */
static void fuzz_boot(Fuzz *f)
{
    KvDev *d = f->d = kv_start(f->props);

    /* 4 MiB of random bytes, and a PRP list of all its pages (and of the
     * retrieve buffers) so that any run of pages has a valid list */
    /* a page a qtest command: QEMU's qtest server rescans a long line for
     * its end as each chunk arrives, so one 4 MiB write would take seconds */
    for (int p = 0; p < DATA_PAGES; p++) {
        qtest_memwrite(d->qts, KV_DATA + p * 4096ull, f->data + p * 4096ull, 4096);
    }
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
    /* restarts follow the device's answers: their queue sizes from the side stream */
    uint64_t stream = rng;
    rng = side_rng;
    setup_queues(f);
    side_rng = rng;
    rng = stream;
    f->rss0 = kv_qemu_status_kib(d, "VmRSS");
}

/* An orderly QEMU exit (the checkpoint names the seed), the seed, a new start. */
static void fuzz_reboot(Fuzz *f)
{
    kv_stop(f->d);
    f->hash_seed = kv_image_hash_seed(f->image);
    f->hash_seed_known = true;
    f->restarts++;
    fuzz_boot(f);
}

static void run_fuzz(bool latency)
{
    const char *env = g_getenv("KVSSD_FUZZ_COMMANDS");
    uint64_t target = env ? g_ascii_strtoull(env, NULL, 10) : 100000;
    uint64_t seed = fuzz_seed();
    Fuzz f = {.latency = latency};

    if (latency) {
        /* completions wait for the virtual clock: a fifth of the commands */
        target = target / 5;
    }
    rng = seed * 0x9e3779b97f4a7c15ull ^ 0x2545f4914f6cdd1dull ^ latency;
    rng = rng ? rng : 1;
    side_rng = rng ^ 0x6a09e667f3bcc909ull;
    g_test_message("kvssd fuzz%s: seed %" PRIu64 " (KVSSD_QTEST_SEED=%" PRIu64
                   " reproduces), %" PRIu64 " commands",
                   latency ? " latency=on" : "", seed, seed, target);
#ifdef __SANITIZE_ADDRESS__
    /* QEMU inherits the environment: a bounded quarantine keeps RSS meaningful */
    g_autofree char *asan = g_strdup_printf(
        "%s%squarantine_size_mb=%d", g_getenv("ASAN_OPTIONS") ? g_getenv("ASAN_OPTIONS") : "",
        g_getenv("ASAN_OPTIONS") ? ":" : "", FUZZ_ASAN_QUARANTINE_MB);
    g_setenv("ASAN_OPTIONS", asan, true);
#endif
    f.dir = g_dir_make_tmp("kvssd-fuzz-XXXXXX", NULL);
    g_assert(f.dir);
    f.image = g_build_filename(f.dir, "kvssd.img", NULL);
    f.props = g_strdup_printf("%s%s,image=%s", FUZZ_PROPS, latency ? LATENCY_PROPS : "", f.image);
    f.data = g_malloc((size_t)DATA_PAGES * 4096);
    for (size_t i = 0; i < (size_t)DATA_PAGES * 4096; i++) {
        f.data[i] = (uint8_t)rnd();
    }
    /* a first start creates the image; the restart learns its seed */
    f.d = kv_start(f.props);
    fuzz_reboot(&f);
    while (f.commands < target) {
        uint32_t r = below(10000); /* weights per 10,000 actions */
        if (r < 8480) {
            submit_batch(&f, 1 + below(NQ - 1), false);
        } else if (r < 9530) {
            submit_batch(&f, 0, true);
        } else if (r < 9780) {
            invalid_doorbell(&f);
        } else if (r < 9880) {
            send_aer(&f);
        } else if (r < 9900) {
            qtest_clock_step(f.d->qts, 100 * 1000 * 1000); /* expire inline streams */
            f.commands++;
        } else if (r < 9930) {
            reset_in_flight(&f);
        } else if (r < 9970) {
            prp_chain(&f);
        } else if (r < 9980) {
            sq_delete_undrained(&f);
        } else if (r < 9996) {
            reset_with_streams(&f);
        } else {
            colliding_keys(&f);
        }
        if (r % 64 == 0) {
            fuzz_fail_if_fatal(&f);
        }
    }
    fuzz_fail_if_fatal(&f);
    g_test_message("io ok %" PRIu64 " err %" PRIu64 ", admin ok %" PRIu64 " err %" PRIu64
                   ", resets %" PRIu64 ", AERs completed %" PRIu64,
                   f.io_ok, f.io_err, f.admin_ok, f.admin_err, f.resets, f.aer_done);
    g_test_message("kvssd fuzz classes: %" PRIu64 " looping PRP lists, %" PRIu64
                   " SQ deletions on undrained CQs (%" PRIu64 " completions kept), %" PRIu64
                   " resets with %" PRIu64 " streams open, %" PRIu64 " colliding keys (%" PRIu64
                   " stored, %" PRIu64 " refused)",
                   f.prp_chains, f.sqdel_rounds, f.sqdel_seen, f.stream_resets, f.streams_opened,
                   f.coll_keys, f.coll_stored, f.coll_refused);
    g_assert_cmpuint(f.io_ok, >, 0);
    g_assert_cmpuint(f.io_err, >, 0);
    /* the first batch of colliding keys on a small index always reaches the
     * directory bound of the hash and pm983 designs: a refusal proves the
     * keys collide under the device's hash, i.e. that the seed read from the
     * image is the device's. The lsm design has no directory: its sorted
     * pages take keys sharing a prefix as any others (colliding_keys()
     * checks that each refusal there is a full device's). */
    if (f.coll_keys && !kv_qtest_index_is("lsm")) {
        g_assert_cmpuint(f.coll_refused, >, 0);
    }

    /* the FTL is consistent, and the device still stores exact bytes */
    KvDev *d = f.d;
    kv_disable(d);
    setup_queues(&f);
    struct kvssd_sqe s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(fz_status(&f, 0, &s), ==, 0);
    /* the device may be full after the run: make room first */
    s = kv_sqe(KVSSD_ADM_FORMAT_NVM, 1);
    g_assert_cmphex(fz_status(&f, 0, &s), ==, 0);
    g_assert_cmphex(key_cmd(&f, KVSSD_OPC_STORE, "final", 8000, STABLE_PAGE(2)).status, ==, 0);
    check_value(&f, "final", STABLE_PAGE(2), 8000);
    s = kv_sqe(KVSSD_ADM_FTL_CHECK, 0);
    g_assert_cmphex(fz_status(&f, 0, &s), ==, 0);

    /* QEMU's resident memory (of its last start): within the bound the properties give */
    uint64_t rss = kv_qemu_status_kib(d, "VmRSS"), hwm = kv_qemu_status_kib(d, "VmHWM");
    g_test_message("kvssd fuzz rss: %" PRIu64 " KiB after setup, %" PRIu64 " KiB at the end, "
                   "peak %" PRIu64 " KiB; bound: setup + %" PRIu64 " KiB; %" PRIu64
                   " QEMU restarts (to read the seed)",
                   f.rss0, rss, hwm, rss_bound_kib(), f.restarts);
    g_assert_cmpuint(rss, <=, f.rss0 + rss_bound_kib());
    g_assert_cmpuint(hwm, <=, f.rss0 + rss_bound_kib());
    kv_stop(d);
    unlink(f.image);
    rmdir(f.dir);
    g_free(f.image);
    g_free(f.dir);
    g_free(f.props);
    g_free(f.data);
}

static void test_fuzz(void)
{
    run_fuzz(false);
}

static void test_fuzz_latency(void)
{
    run_fuzz(true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/fuzz/random-commands", test_fuzz);
    qtest_add_func("/kvssd/fuzz/random-commands-latency", test_fuzz_latency);
    return g_test_run();
}
