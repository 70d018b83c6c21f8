/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Random NVM commands, as a guest could send them, against the NVM command
 * set (hw/kvssd/nvm.c) on the real block firmware, each checked against an
 * independent model: the exact status (in the specification's order of
 * checks: NSID, opcode, fields, MDTS, LBA range, then the transfer), and
 * every Read's data against a shadow copy of the namespace. The shadow
 * follows block.h: Write and Write Zeroes set their blocks; Deallocate
 * zeroes the 4 KiB units it covers whole and leaves the blocks of a partly
 * covered unit as they are; a refused command changes nothing. The
 * namespace is written whole first, so that GC relocates live data. Commands
 * are biased towards valid ones near the edges (NSZE, MDTS, unit
 * boundaries) with one in five malformed; a fifth of the data pointers
 * fail (as a guest's would, outside RAM). At the end kvftl_check() passes.
 *
 *   random_nvm [COMMANDS [SEED]]   default 20000 commands, seed 1
 *
 * One TAP line per configuration (4 KiB and 512-byte blocks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdset.h"
#include "kvftl_small.h"

#define MDTS_BYTES (256u * 1024) /* small, so that the limit is often met */
#define DNR KVSSD_SC_DNR
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static uint64_t rng;

static uint64_t rnd64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint32_t rnd(uint32_t n)
{
    return n ? (uint32_t)(rnd64() >> 20) % n : 0;
}

struct host {
    uint8_t *buf;
    uint32_t len;
    uint16_t fail;
};

static uint16_t host_from(void *opaque, uint64_t offset, void *buf, uint32_t len)
{
    struct host *h = opaque;

    if (h->fail) {
        return h->fail;
    }
    if (offset > h->len || len > h->len - offset) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(buf, h->buf + offset, len);
    return KVSSD_SC_SUCCESS;
}

static uint16_t host_to(void *opaque, uint64_t offset, const void *buf, uint32_t len)
{
    struct host *h = opaque;

    if (h->fail) {
        return h->fail;
    }
    if (offset > h->len || len > h->len - offset) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(h->buf + offset, buf, len);
    return KVSSD_SC_SUCCESS;
}

struct run {
    struct kvftl *ftl;
    struct kvssd_nvm_ns *ns;
    struct kvssd_xfer_counters xfer;
    uint64_t nsze;
    uint32_t lba, per_unit;
    uint8_t *shadow; /* nsze x lba bytes */
    uint8_t *buf;    /* the host buffer: up to 2 x MDTS */
    uint64_t now;
    unsigned failures;
    uint64_t reads_checked, writes, zeroes, deallocates, refused;
};

static void fail(struct run *r, uint64_t i, const char *what, const struct kvssd_sqe *s,
                 uint16_t got, uint16_t want)
{
    if (r->failures++ < 10) {
        printf("# command %llu: %s (opcode %02xh cdw10-12 %08x %08x %08x status %04xh, "
               "expected %04xh)\n",
               (unsigned long long)i, what, kvssd_sqe_opcode(s), s->cdw[10], s->cdw[11], s->cdw[12],
               got, want);
    }
}

/* An SLBA: near 0, near NSZE, past it, or anywhere. */
static uint64_t pick_slba(const struct run *r)
{
    switch (rnd(16)) {
    case 0:
        return rnd(16);
    case 1:
        return r->nsze - 1 - rnd(16);
    case 2:
        return r->nsze + rnd(4) - (rnd(2) ? 2 : 0);
    case 3:
        return rnd(2) ? UINT64_MAX - rnd(8) : ((uint64_t)rnd(1u << 31) << 32);
    default:
        return rnd64() % r->nsze;
    }
}

/* A block count 1..65536: small, at the MDTS edge, or NLB's maximum. */
static uint32_t pick_blocks(const struct run *r)
{
    uint32_t mdts = MDTS_BYTES / r->lba;

    switch (rnd(16)) {
    case 0:
        return mdts + rnd(3) - 1;
    case 1:
        return 65536 - rnd(2);
    case 2:
        return r->per_unit * (1 + rnd(4));
    default:
        return 1 + rnd(rnd(2) ? 16 : mdts);
    }
}

static bool in_range(const struct run *r, uint64_t slba, uint64_t blocks)
{
    return slba < r->nsze && blocks <= r->nsze - slba;
}

/* Zero the blocks of [slba, slba + blocks) that lie in units it covers whole. */
static void shadow_deallocate(struct run *r, uint64_t slba, uint64_t blocks)
{
    uint64_t first = (slba + r->per_unit - 1) / r->per_unit * r->per_unit;
    uint64_t end = (slba + blocks) / r->per_unit * r->per_unit;

    if (end > first) {
        memset(r->shadow + first * r->lba, 0, (size_t)(end - first) * r->lba);
    }
}

/* Run @s at r->now; its status; *@early: it completed before it arrived (or parked, or set DW0/1).
 */
static uint16_t exec(struct run *r, const struct kvssd_sqe *s, struct host *h, bool *early)
{
    struct kvssd_req q = {.sqe = s, .now_ns = r->now};

    q.dptr.opaque = h;
    q.dptr.from_host = host_from;
    q.dptr.to_host = host_to;
    q.status = 0xdead;
    kvssd_nvm_execute(r->ns, &q);
    *early = q.done_ns < q.now_ns || q.in_progress || q.dw0 || q.dw1;
    r->now += 1 + rnd(5000);
    return q.status;
}

/* One random command, its expected status and effect. */
static void step(struct run *r, uint64_t i)
{
    static const uint8_t ops[] = {
        KVSSD_NVM_OPC_WRITE, KVSSD_NVM_OPC_WRITE,        KVSSD_NVM_OPC_READ, KVSSD_NVM_OPC_READ,
        KVSSD_NVM_OPC_READ,  KVSSD_NVM_OPC_WRITE_ZEROES, KVSSD_NVM_OPC_DSM,  KVSSD_NVM_OPC_FLUSH};
    uint8_t op = rnd(20) ? ops[rnd(sizeof(ops))] : (uint8_t)rnd(256);
    bool malformed = rnd(5) == 0;
    struct kvssd_sqe s;
    struct host h = {.buf = r->buf, .len = 2 * MDTS_BYTES};
    uint16_t want = KVSSD_SC_SUCCESS, got;
    uint64_t slba = pick_slba(r);
    bool early;
    uint32_t blocks = pick_blocks(r);

    memset(&s, 0, sizeof(s));
    s.cdw[0] = op | (uint32_t)rnd(65536) << 16;
    s.cdw[1] = 1;
    kvssd_nvm_set_range(&s, slba, blocks, 0);
    if (rnd(5) == 0) {
        h.fail = rnd(2) ? KVSSD_SC_DATA_XFER_ERROR : (KVSSD_SC_INVALID_PRP_OFFSET | DNR);
    }
    bool bad_nsid = malformed && rnd(4) == 0;
    bool bad_field = malformed && !bad_nsid;
    if (bad_nsid) {
        s.cdw[1] = rnd(2) ? 0 : 2 + rnd(1000);
    }

    bool rw = op == KVSSD_NVM_OPC_WRITE || op == KVSSD_NVM_OPC_READ;
    if (op == KVSSD_NVM_OPC_WRITE || op == KVSSD_NVM_OPC_READ || op == KVSSD_NVM_OPC_WRITE_ZEROES) {
        uint32_t flags = rnd(2) ? KVSSD_NVM_RW_FUA : 0;
        /* large zeroing is rare: it would leave GC nothing to relocate */
        if (op == KVSSD_NVM_OPC_WRITE_ZEROES && blocks > 64 && rnd(16)) {
            blocks = 1 + rnd(64);
            kvssd_nvm_set_range(&s, slba, blocks, 0);
        }
        if (op == KVSSD_NVM_OPC_WRITE_ZEROES && rnd(2)) {
            flags |= KVSSD_NVM_WZ_DEAC;
        }
        if (bad_field) {
            flags |= rnd(2) ? (1u + rnd(15)) << KVSSD_NVM_RW_PRINFO_SHIFT : KVSSD_NVM_RW_STC;
        }
        s.cdw[12] |= flags;
        if (bad_field) {
            want = KVSSD_SC_INVALID_FIELD | DNR;
        } else if (rw && blocks * (uint64_t)r->lba > MDTS_BYTES) {
            want = KVSSD_SC_INVALID_FIELD | DNR;
        } else if (!in_range(r, slba, blocks)) {
            want = KVSSD_SC_LBA_OUT_OF_RANGE | DNR;
        } else if (rw && h.fail) {
            want = h.fail;
        }
        if (op == KVSSD_NVM_OPC_WRITE && want == KVSSD_SC_SUCCESS) {
            for (uint32_t k = 0; k < blocks * r->lba; k += 8) {
                uint64_t v = rnd64();
                memcpy(r->buf + k, &v, 8);
            }
        }
    } else if (op == KVSSD_NVM_OPC_DSM) {
        uint32_t nr = 1 + (rnd(4) ? rnd(8) : rnd(256));
        bool any_bad = false;

        s.cdw[10] = nr - 1;
        s.cdw[11] = rnd(8) ? KVSSD_NVM_DSM_AD : rnd(4);
        s.cdw[12] = 0;
        for (uint32_t k = 0; k < nr; k++) {
            uint64_t rs = rnd(3) ? rnd64() % r->nsze : pick_slba(r);
            uint32_t rb = rnd(8) == 0 ? 0 : rnd(2) ? 1 + rnd(64) : (uint32_t)rnd64();
            uint8_t *p = r->buf + 16 * k;

            if (rb && rb <= 64 && !in_range(r, rs, rb)) {
                rs = r->nsze - rb; /* the edge, within range */
            }
            memset(p, 0, 16);
            for (int b = 0; b < 4; b++) {
                p[4 + b] = (uint8_t)(rb >> (8 * b));
            }
            for (int b = 0; b < 8; b++) {
                p[8 + b] = (uint8_t)(rs >> (8 * b));
            }
            any_bad |= rb && !in_range(r, rs, rb);
        }
        if (bad_field) {
            s.cdw[11] |= 1u << (3 + rnd(29));
            want = KVSSD_SC_INVALID_FIELD | DNR;
        } else if (!(s.cdw[11] & KVSSD_NVM_DSM_AD)) {
            want = KVSSD_SC_SUCCESS;
        } else if (h.fail) {
            want = h.fail;
        } else if (any_bad) {
            want = KVSSD_SC_LBA_OUT_OF_RANGE | DNR;
        }
    } else if (op != KVSSD_NVM_OPC_FLUSH) {
        want = KVSSD_SC_INVALID_OPCODE | DNR;
    }
    if (bad_nsid) {
        want = KVSSD_SC_INVALID_NSID | DNR;
    }

    got = exec(r, &s, &h, &early);
    if (got != want) {
        fail(r, i, "status", &s, got, want);
        return;
    }
    if (early) {
        fail(r, i, "completion before arrival, parked, or DW0/DW1 set", &s, got, want);
    }
    if (got != KVSSD_SC_SUCCESS) {
        r->refused++;
        return;
    }
    switch (op) {
    case KVSSD_NVM_OPC_WRITE:
        r->writes++;
        memcpy(r->shadow + slba * r->lba, r->buf, (size_t)blocks * r->lba);
        break;
    case KVSSD_NVM_OPC_WRITE_ZEROES:
        r->zeroes++;
        memset(r->shadow + slba * r->lba, 0, (size_t)blocks * r->lba);
        break;
    case KVSSD_NVM_OPC_READ:
        r->reads_checked++;
        if (memcmp(r->buf, r->shadow + slba * r->lba, (size_t)blocks * r->lba) != 0) {
            fail(r, i, "read data differs from the shadow", &s, got, want);
        }
        break;
    case KVSSD_NVM_OPC_DSM:
        if (s.cdw[11] & KVSSD_NVM_DSM_AD) {
            r->deallocates++;
            for (uint32_t k = 0; k <= (s.cdw[10] & 0xff); k++) {
                const uint8_t *p = r->buf + 16 * k;
                uint32_t rb = 0;
                uint64_t rs = 0;

                for (int b = 3; b >= 0; b--) {
                    rb = rb << 8 | p[4 + b];
                }
                for (int b = 7; b >= 0; b--) {
                    rs = rs << 8 | p[8 + b];
                }
                if (rb) {
                    shadow_deallocate(r, rs, rb);
                }
            }
        }
        break;
    default:
        break;
    }
}

static bool run_config(uint32_t lba, uint64_t commands, uint64_t seed)
{
    struct run r;
    struct kvftl_config c;
    struct kvssd_nvm_config vc = {.mdts_bytes = MDTS_BYTES};
    char err[256];
    bool ok;

    memset(&r, 0, sizeof(r));
    rng = seed * 0x9e3779b97f4a7c15ull + lba;
    /* 1 x 2 dies x 16 blocks x 128 pages x 16 KiB = 64 MiB: GC runs under the writes */
    kvftl_config_small(&c, (struct kvftl_small_geometry){.channels = 1,
                                                         .dies_per_channel = 2,
                                                         .blocks_per_die = 16,
                                                         .pages_per_block = 128,
                                                         .page_size_bytes = 16384});
    c.command_set = KVFTL_CMDSET_NVM;
    c.lba_bytes = lba;
    r.ftl = kvftl_open(&c, err, sizeof(err));
    if (!r.ftl) {
        printf("# kvftl_open: %s\n", err);
        return false;
    }
    r.ns = kvssd_nvm_ns_new(r.ftl, &vc, &r.xfer, err, sizeof(err));
    if (!r.ns) {
        printf("# kvssd_nvm_ns_new: %s\n", err);
        kvftl_close(r.ftl);
        return false;
    }
    r.nsze = kvftl_block_lbas(r.ftl);
    r.lba = lba;
    r.per_unit = KVFTL_BLOCK_UNIT_BYTES / lba;
    r.shadow = calloc(r.nsze, lba);
    r.buf = malloc(2 * MDTS_BYTES);
    r.now = 1000;
    /* fill the namespace first, so that GC finds valid data to relocate */
    for (uint64_t b = 0; b < r.nsze && r.failures == 0;) {
        uint32_t n = (uint32_t)MIN((uint64_t)MDTS_BYTES / lba, r.nsze - b);
        struct kvssd_sqe s;
        struct host h = {.buf = r.shadow + b * lba, .len = n * lba};
        bool early;

        for (uint32_t k = 0; k < n * lba; k += 8) {
            uint64_t v = rnd64();
            memcpy(r.shadow + b * lba + k, &v, 8);
        }
        memset(&s, 0, sizeof(s));
        s.cdw[0] = KVSSD_NVM_OPC_WRITE;
        s.cdw[1] = 1;
        kvssd_nvm_set_range(&s, b, n, 0);
        if (exec(&r, &s, &h, &early) != KVSSD_SC_SUCCESS) {
            fail(&r, 0, "fill", &s, 0, 0);
        }
        b += n;
    }
    for (uint64_t i = 0; i < commands && r.failures == 0; i++) {
        step(&r, i);
    }
    /* every block against the shadow, a unit at a time */
    for (uint64_t b = 0; b < r.nsze && r.failures == 0; b += r.per_unit) {
        struct kvssd_sqe s;
        struct host h = {.buf = r.buf, .len = KVFTL_BLOCK_UNIT_BYTES};
        bool early;

        memset(&s, 0, sizeof(s));
        s.cdw[0] = KVSSD_NVM_OPC_READ;
        s.cdw[1] = 1;
        kvssd_nvm_set_range(&s, b, r.per_unit, 0);
        if (exec(&r, &s, &h, &early) != KVSSD_SC_SUCCESS ||
            memcmp(r.buf, r.shadow + b * lba, KVFTL_BLOCK_UNIT_BYTES) != 0) {
            fail(&r, commands + b, "final read differs from the shadow", &s, 0, 0);
        }
    }
    if (r.failures == 0 && kvftl_check(r.ftl, err, sizeof(err)) != 0) {
        printf("# kvftl_check: %s\n", err);
        r.failures++;
    }
    ok = r.failures == 0;
    struct kvftl_stats st;
    kvftl_stats_get(r.ftl, &st);
    printf("# GC: %llu runs, %llu bytes relocated; %llu units mapped\n",
           (unsigned long long)st.gc_runs, (unsigned long long)st.gc_relocated_bytes,
           (unsigned long long)st.live_keys);
    printf("# %llu writes, %llu reads checked, %llu write zeroes, %llu deallocates, %llu "
           "refused with their exact status\n",
           (unsigned long long)r.writes, (unsigned long long)r.reads_checked,
           (unsigned long long)r.zeroes, (unsigned long long)r.deallocates,
           (unsigned long long)r.refused);
    printf("# %u-byte blocks: NSZE %llu, %llu commands, seed %llu (random_nvm %llu %llu "
           "reproduces)\n",
           lba, (unsigned long long)r.nsze, (unsigned long long)commands, (unsigned long long)seed,
           (unsigned long long)commands, (unsigned long long)seed);
    kvssd_nvm_ns_free(r.ns);
    kvftl_close(r.ftl);
    free(r.shadow);
    free(r.buf);
    return ok;
}

int main(int argc, char **argv)
{
    uint64_t commands = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    static const uint32_t lbas[] = {4096, 512};
    int failed = 0;

    printf("1..%zu\n", sizeof(lbas) / sizeof(lbas[0]));
    for (size_t i = 0; i < sizeof(lbas) / sizeof(lbas[0]); i++) {
        bool ok = run_config(lbas[i], commands, seed);

        printf("%s %zu - nvm random commands, %u-byte blocks, against the shadow\n",
               ok ? "ok" : "not ok", i + 1, lbas[i]);
        failed += !ok;
    }
    return failed ? 1 : 0;
}
