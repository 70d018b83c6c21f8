/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvssd-cmd-bench: the device's own cost per command, measured natively.
 *
 * Drives raw SQEs, encoded by libkvssd's command encoder (host/lib/cmd.c,
 * transfer.c: the commands a guest application sends), through the
 * QEMU-free KV command set (hw/kvssd/kv.c, inline.c) into the kvftl
 * firmware: the path QEMU's transport takes after it fetched an SQE, minus
 * QEMU. The data pointer is a memcpy over a host buffer, where the transport
 * does DMA from guest RAM; kvssd_ns_expire() runs once per KVSSD_BH_BATCH
 * commands, as the transport's bottom half does.
 *
 * Each scenario (Store / Retrieve / Exist of 64 B and 4 KiB values by data
 * pointer; inline Stores in the stock and the full layout; hybrid Stores)
 * runs --keys operations per repetition. The same operations also run on a
 * second, identical firmware instance called directly (kvftl_store() with
 * the same key, value, inline byte and transfer counts and arrival time,
 * kvftl_retrieve(), kvftl_exist()): the difference is the command set's
 * share (decode, validation, key and payload gathering, reassembly, the
 * data pointer's copy). Repetitions interleave the two, and the table gives
 * the median, the best and the spread of the repetitions.
 *
 * Every command's status (and DW0/DW1 where the protocol fixes them) is
 * checked, and every value is read back at the end: a run that saw an
 * unexpected completion says so and exits 1. Documented in docs/cmd-bench.md.
 * It prints numbers; nothing here asserts a speed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <bench/provenance.h>
#include <bench/units.h>
#include <bench/usage.h>
#include <json-c/json.h>
#include <kvftl/kvftl.h>
#include <kvssd/libkvssd.h>
#include <kvssd_version.h>

#include "admin.h"  /* hw/kvssd: kvssd_config_log_fill(), for the provenance */
#include "cmdset.h" /* hw/kvssd: the command set's seam */

#define TOOL "kvssd-cmd-bench"
#define KEY_BYTES 16u
/* hw/kvssd/kvssd.h's KVSSD_BATCH (a QEMU header): SQEs per bottom-half run, one expiry scan each.
 */
#define KVSSD_BH_BATCH 128u
/* Host clock between two commands' arrivals (the inline streams' timeout is 5 s). */
#define STEP_NS 1000u
#define TARGET_NS 2000.0
#define MAX_REPS 1000u
#define MAX_KEYS 100000u
#define MAX_SETS 32
#define MAX_WARMUP_ROUNDS 1000u

enum op_kind { OP_STORE, OP_RETRIEVE, OP_EXIST };

/* One row of the table: a kind of operation, a value size, how the value travels. */
struct scenario {
    const char *name;
    enum op_kind kind;
    uint32_t value_bytes;
    enum kvssd_xfer_mode method; /* stores: PRP, INLINE or HYBRID */
    enum kvssd_wire_layout layout;
    char key_set; /* the keys (and their values) it uses: one set per value size */
};

static const struct scenario scenarios[] = {
    {"store-64", OP_STORE, 64, KVSSD_XFER_PRP, KVSSD_WIRE_STOCK, 'a'},
    {"store-4k", OP_STORE, 4096, KVSSD_XFER_PRP, KVSSD_WIRE_STOCK, 'b'},
    {"retrieve-64", OP_RETRIEVE, 64, KVSSD_XFER_PRP, KVSSD_WIRE_STOCK, 'a'},
    {"retrieve-4k", OP_RETRIEVE, 4096, KVSSD_XFER_PRP, KVSSD_WIRE_STOCK, 'b'},
    {"exist-64", OP_EXIST, 64, KVSSD_XFER_PRP, KVSSD_WIRE_STOCK, 'a'},
    {"exist-4k", OP_EXIST, 4096, KVSSD_XFER_PRP, KVSSD_WIRE_STOCK, 'b'},
    {"inline-stock-64", OP_STORE, 64, KVSSD_XFER_INLINE, KVSSD_WIRE_STOCK, 'a'},
    {"inline-full-64", OP_STORE, 64, KVSSD_XFER_INLINE, KVSSD_WIRE_FULL, 'a'},
    {"inline-stock-4k", OP_STORE, 4096, KVSSD_XFER_INLINE, KVSSD_WIRE_STOCK, 'b'},
    {"inline-full-4k", OP_STORE, 4096, KVSSD_XFER_INLINE, KVSSD_WIRE_FULL, 'b'},
    {"hybrid-stock-4k+64", OP_STORE, 4096 + 64, KVSSD_XFER_HYBRID, KVSSD_WIRE_STOCK, 'c'},
    {"hybrid-full-4k+64", OP_STORE, 4096 + 64, KVSSD_XFER_HYBRID, KVSSD_WIRE_FULL, 'c'},
};
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

struct opts {
    uint32_t keys;
    uint32_t reps;
    uint32_t batch; /* commands per bottom-half run: one kvssd_ns_expire() each */
    bool json;
    bool only[N_SCENARIOS]; /* all false: every scenario */
    const char *preset;
    const char *set[MAX_SETS]; /* --set FIELD=VALUE */
    uint32_t n_set;
};

/* ---- The host side: keys, values, pre-encoded commands ------------------- */

/* A key set: --keys keys of 16 bytes and their values (value i: a pattern seeded by i). */
struct key_set {
    char id;
    uint32_t value_bytes;
    uint8_t *keys;   /* keys x KEY_BYTES */
    uint8_t *values; /* keys x value_bytes: "guest memory" a Store's data pointer reads */
};

/* One command as the transport hands it over: the SQE and what its data pointer describes. */
struct host_cmd {
    struct kvssd_sqe sqe;
    uint8_t *data;
    uint32_t data_len;
};

/* A scenario's commands for one pass over its keys, in execution order. */
struct prepared {
    const struct scenario *sc;
    struct key_set *ks;
    uint32_t cmds_per_op;
    uint32_t n_ops;         /* --keys */
    uint32_t *order;        /* keys: op i works on key order[i] */
    struct host_cmd *cmds;  /* keys x cmds_per_op */
    uint32_t inline_bytes;  /* stores: value bytes that travel inline */
    uint32_t inline_xfers;  /* stores: transfer commands after the head */
    uint8_t *out;           /* retrieves: the host buffer the value goes to */
    /* per repetition: CPU ns per op through the command set, and of the firmware alone */
    double *cmd_ns, *fw_ns;
    double *cmd_wall_ns; /* wall-clock ns per op through the command set */
    uint64_t cmd_faults, fw_faults; /* page faults in the timed passes */
    uint64_t errors;
    char first_error[256];
};

static void fill_value(uint8_t *buf, uint32_t len, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;

    for (uint32_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (uint8_t)x;
    }
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);

    if (!p) {
        fprintf(stderr, TOOL ": out of memory (%zu x %zu bytes)\n", n, size);
        exit(1);
    }
    return p;
}

static void key_set_init(struct key_set *ks, char id, uint32_t value_bytes, uint32_t keys)
{
    ks->id = id;
    ks->value_bytes = value_bytes;
    ks->keys = xcalloc(keys, KEY_BYTES);
    ks->values = xcalloc(keys, value_bytes);
    for (uint32_t i = 0; i < keys; i++) {
        char k[KEY_BYTES + 1];

        snprintf(k, sizeof(k), "%c-key-%010" PRIu32, id, i);
        memcpy(ks->keys + (size_t)i * KEY_BYTES, k, KEY_BYTES);
        fill_value(ks->values + (size_t)i * value_bytes, value_bytes, i + 1);
    }
}

/* A fixed pseudo-random permutation of 0..n-1 (lookups in another order than the stores). */
static uint32_t *shuffled(uint32_t n, uint64_t seed)
{
    uint32_t *p = xcalloc(n, sizeof(*p));
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

    for (uint32_t i = 0; i < n; i++) {
        p[i] = i;
    }
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j;

        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        j = (uint32_t)((x * 2685821657736338717ull) % i);
        uint32_t t = p[i - 1];
        p[i - 1] = p[j];
        p[j] = t;
    }
    return p;
}

static void prepare(struct prepared *p, const struct scenario *sc, struct key_set *ks,
                    uint32_t keys, uint32_t reps)
{
    const uint32_t nsid = 1, stream_tag = 5;

    memset(p, 0, sizeof(*p));
    p->sc = sc;
    p->ks = ks;
    p->n_ops = keys;
    p->cmd_ns = xcalloc(reps, sizeof(double));
    p->fw_ns = xcalloc(reps, sizeof(double));
    p->cmd_wall_ns = xcalloc(reps, sizeof(double));
    if (sc->kind == OP_STORE) {
        p->order = xcalloc(keys, sizeof(*p->order)); /* stores in key order... */
        for (uint32_t i = 0; i < keys; i++) {
            p->order[i] = i;
        }
        p->cmds_per_op = kvssd_store_commands_layout(sc->layout, sc->method, KEY_BYTES,
                                                     sc->value_bytes);
    } else {
        p->order = shuffled(keys, sc->kind + 1); /* ...lookups in a shuffled one */
        p->cmds_per_op = 1;
        p->out = xcalloc(1, sc->value_bytes);
    }
    p->cmds = xcalloc((size_t)keys * p->cmds_per_op, sizeof(*p->cmds));
    for (uint32_t i = 0; i < keys; i++) {
        uint32_t k = p->order[i];
        const uint8_t *key = ks->keys + (size_t)k * KEY_BYTES;
        uint8_t *value = ks->values + (size_t)k * ks->value_bytes;
        struct host_cmd *hc = &p->cmds[(size_t)i * p->cmds_per_op];
        struct kvssd_cmd cmd;

        if (sc->kind == OP_STORE) {
            struct kvssd_store_plan plan;
            uint32_t n = 0;
            int rc = kvssd_store_plan_init_layout(&plan, sc->layout, nsid, key, KEY_BYTES, 0,
                                                  stream_tag, value, sc->value_bytes, 0,
                                                  sc->method);

            if (rc != 0) {
                fprintf(stderr, TOOL ": %s: libkvssd refused the store plan (%s)\n", sc->name,
                        kvssd_strerror(rc));
                exit(1);
            }
            while (n < p->cmds_per_op && kvssd_store_plan_next(&plan, &cmd)) {
                hc[n++] = (struct host_cmd){cmd.sqe, cmd.data, cmd.data_len};
            }
            if (n != p->cmds_per_op || kvssd_store_plan_next(&plan, &cmd)) {
                fprintf(stderr, TOOL ": %s: the plan has other than %u commands\n", sc->name,
                        p->cmds_per_op);
                exit(1);
            }
        } else if (sc->kind == OP_RETRIEVE) {
            kvssd_cmd_retrieve(&cmd, nsid, key, KEY_BYTES, 0, p->out, sc->value_bytes);
            hc[0] = (struct host_cmd){cmd.sqe, cmd.data, cmd.data_len};
        } else {
            kvssd_cmd_exist(&cmd, nsid, key, KEY_BYTES, 0);
            hc[0] = (struct host_cmd){cmd.sqe, NULL, 0};
        }
    }
    if (sc->kind == OP_STORE) {
        uint32_t dma = sc->method == KVSSD_XFER_HYBRID
                           ? sc->value_bytes & ~(KVSSD_HYBRID_PAGE_BYTES - 1)
                       : sc->method == KVSSD_XFER_PRP ? sc->value_bytes
                                                      : 0;

        p->inline_bytes = sc->value_bytes - dma;
        p->inline_xfers = sc->method == KVSSD_XFER_PRP ? 0 : p->cmds_per_op - 1;
    }
}

/* ---- The data pointer: memcpy where the transport does DMA ---------------- */

struct host_mem {
    uint8_t *buf;
    uint32_t len;
};

static uint16_t mem_from_host(void *opaque, uint64_t offset, void *buf, uint32_t len)
{
    const struct host_mem *m = opaque;

    if (offset > m->len || len > m->len - offset) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(buf, m->buf + offset, len);
    return KVSSD_SC_SUCCESS;
}

static uint16_t mem_to_host(void *opaque, uint64_t offset, const void *buf, uint32_t len)
{
    const struct host_mem *m = opaque;

    if (offset > m->len || len > m->len - offset) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(m->buf + offset, buf, len);
    return KVSSD_SC_SUCCESS;
}

/* ---- The two devices ----------------------------------------------------- */

struct device {
    struct kvftl *ftl;
    struct kvssd_ns *ns; /* NULL: the firmware alone */
    struct kvssd_xfer_counters xfer;
    uint64_t now; /* host clock, STEP_NS per command */
    uint32_t batch; /* commands per bottom-half run */
    uint32_t since_expire;
};

static void device_open(struct device *d, const struct kvftl_config *cfg, bool with_ns)
{
    char err[256] = "";

    memset(d, 0, sizeof(*d));
    d->ftl = kvftl_open(cfg, err, sizeof(err));
    if (!d->ftl) {
        fprintf(stderr, TOOL ": %s\n", err);
        exit(2);
    }
    if (with_ns) {
        d->ns = kvssd_ns_new(d->ftl, NULL, &d->xfer, err, sizeof(err));
        if (!d->ns) {
            fprintf(stderr, TOOL ": %s\n", err);
            exit(1);
        }
    }
    d->now = 1000000;
}

static void device_close(struct device *d)
{
    kvssd_ns_free(d->ns);
    kvftl_close(d->ftl);
}

static void note_error(struct prepared *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Count an unexpected completion; keep the first one's sentence. */
static void note_error(struct prepared *p, const char *fmt, ...)
{
    va_list ap;

    if (p->errors++ == 0) {
        va_start(ap, fmt);
        vsnprintf(p->first_error, sizeof(p->first_error), fmt, ap);
        va_end(ap);
    }
}

/* The command set's pass: every command of every op, as the transport runs them. */
static void run_cmdset(struct device *d, struct prepared *p, uint32_t keys)
{
    const struct scenario *sc = p->sc;
    uint32_t per = p->cmds_per_op;
    bool inline_store = sc->kind == OP_STORE && sc->method != KVSSD_XFER_PRP;

    for (uint32_t i = 0; i < keys; i++) {
        for (uint32_t c = 0; c < per; c++) {
            const struct host_cmd *hc = &p->cmds[(size_t)i * per + c];
            struct host_mem mem = {hc->data, hc->data_len};
            struct kvssd_req req = {.sqe = &hc->sqe, .now_ns = d->now};
            bool last = c + 1 == per;

            if (hc->data) {
                req.dptr = (struct kvssd_dptr){&mem, mem_from_host, mem_to_host};
            }
            if (++d->since_expire == d->batch) {
                kvssd_ns_expire(d->ns, d->now);
                d->since_expire = 0;
            }
            kvssd_kv_execute(d->ns, &req);
            d->now += STEP_NS;
            if (req.status != KVSSD_SC_SUCCESS) {
                note_error(p, "%s op %u command %u: status %04x, expected %04x (success)", sc->name,
                           i, c, req.status, KVSSD_SC_SUCCESS);
            } else if (sc->kind == OP_RETRIEVE && req.dw0 != sc->value_bytes) {
                note_error(p, "%s op %u: DW0 %u, expected the value size %u", sc->name, i, req.dw0,
                           sc->value_bytes);
            } else if (inline_store && last &&
                       (req.dw1 != KVSSD_INLINE_DW1_STORED || req.dw0 != sc->value_bytes)) {
                note_error(
                    p, "%s op %u last command %u: DW0 %u DW1 %u, expected %u and %u (stored)",
                    sc->name, i, c, req.dw0, req.dw1, sc->value_bytes, KVSSD_INLINE_DW1_STORED);
            } else if (inline_store && !last && req.dw1 != 0) {
                note_error(p, "%s op %u command %u: DW1 %u before the last fragment, expected 0",
                           sc->name, i, c, req.dw1);
            }
        }
    }
}

/* The firmware alone: the calls the command set makes, with the same arguments and times. */
static void run_firmware(struct device *d, struct prepared *p, uint32_t keys)
{
    const struct scenario *sc = p->sc;
    struct key_set *ks = p->ks;

    for (uint32_t i = 0; i < keys; i++) {
        uint32_t k = p->order[i];
        const uint8_t *key = ks->keys + (size_t)k * KEY_BYTES;
        struct kvftl_cpl cpl = {0};
        uint64_t at = d->now + (uint64_t)(p->cmds_per_op - 1) * STEP_NS; /* its last command's */

        if (sc->kind == OP_STORE) {
            struct kvftl_store_req sr = {
                .key = key,
                .key_bytes = KEY_BYTES,
                .value = ks->values + (size_t)k * ks->value_bytes,
                .value_bytes = sc->value_bytes,
                .inline_bytes = p->inline_bytes,
                .inline_xfer_commands = p->inline_xfers,
                .arrival_ns = at,
            };
            kvftl_store(d->ftl, &sr, &cpl);
        } else if (sc->kind == OP_RETRIEVE) {
            kvftl_retrieve(d->ftl, key, KEY_BYTES, p->out, 0, sc->value_bytes, at, &cpl);
        } else {
            kvftl_exist(d->ftl, key, KEY_BYTES, at, &cpl);
        }
        d->now += (uint64_t)p->cmds_per_op * STEP_NS;
        if (cpl.status != KVFTL_OK) {
            note_error(p, "%s op %u (firmware alone): %s, expected OK", sc->name, i,
                       kvftl_status_name(cpl.status));
        }
    }
}

/*
 * The clock of a pass: this thread's CPU time (user + system), so that time
 * the scheduler gave other processes of a shared machine is not counted;
 * the page faults it took with it.
 */
struct stamp {
    double cpu_ns, wall_ns;
    uint64_t faults;
};

static struct stamp stamp_now(void)
{
    struct timespec cpu, wall;
    struct rusage ru;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    clock_gettime(CLOCK_MONOTONIC, &wall);
    getrusage(RUSAGE_THREAD, &ru);
    return (struct stamp){(double)cpu.tv_sec * 1e9 + (double)cpu.tv_nsec,
                          (double)wall.tv_sec * 1e9 + (double)wall.tv_nsec,
                          (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt};
}

/* Read every value of @ks back through the command set: the bytes that were stored. */
static uint64_t verify(struct device *d, struct key_set *ks, uint32_t keys)
{
    uint8_t *buf = xcalloc(1, ks->value_bytes + 1);
    uint64_t bad = 0;

    for (uint32_t k = 0; k < keys; k++) {
        struct kvssd_cmd cmd;
        struct host_mem mem = {buf, ks->value_bytes + 1};
        struct kvssd_req req = {.now_ns = d->now};

        kvssd_cmd_retrieve(&cmd, 1, ks->keys + (size_t)k * KEY_BYTES, KEY_BYTES, 0, buf,
                           ks->value_bytes + 1);
        req.sqe = &cmd.sqe;
        req.dptr = (struct kvssd_dptr){&mem, mem_from_host, mem_to_host};
        kvssd_kv_execute(d->ns, &req);
        d->now += STEP_NS;
        if (req.status != KVSSD_SC_SUCCESS || req.dw0 != ks->value_bytes ||
            memcmp(buf, ks->values + (size_t)k * ks->value_bytes, ks->value_bytes) != 0) {
            bad++;
        }
    }
    free(buf);
    return bad;
}

static uint64_t device_pages(const struct kvftl_config *cfg)
{
    return (uint64_t)cfg->channels * cfg->dies_per_channel * cfg->blocks_per_die *
           cfg->pages_per_block;
}

/* ---- Statistics ------------------------------------------------------------ */

struct summary {
    double median, best, worst, spread_pct; /* spread: (worst - best) / median */
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static struct summary summarize(const double *v, uint32_t n)
{
    double *s = xcalloc(n, sizeof(double));
    struct summary r;

    memcpy(s, v, n * sizeof(double));
    qsort(s, n, sizeof(double), cmp_double);
    r.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    r.best = s[0];
    r.worst = s[n - 1];
    r.spread_pct = r.median > 0 ? 100.0 * (r.worst - r.best) / r.median : 0;
    free(s);
    return r;
}

/* What the table and the JSON show of one scenario. */
struct result {
    struct summary op; /* ns per op through the command set */
    struct summary cmd; /* ns per command */
    struct summary fw; /* ns per op, firmware alone */
    struct summary cmdset; /* ns per op, command set minus firmware alone, paired per repetition */
    struct summary wall; /* wall-clock ns per op through the command set */
    double cmdset_per_cmd; /* its median per command */
    double cmdset_best; /* best through the command set minus best of the firmware alone */
    double fw_share; /* median over repetitions of firmware alone / total */
    double faults_per_op, fw_faults_per_op; /* page faults per op in the timed passes */
};

static struct result result_of(const struct prepared *p, uint32_t reps)
{
    double *per_cmd = xcalloc(reps, sizeof(double));
    double *diff = xcalloc(reps, sizeof(double));
    double *share = xcalloc(reps, sizeof(double));
    struct result r;

    for (uint32_t i = 0; i < reps; i++) {
        per_cmd[i] = p->cmd_ns[i] / p->cmds_per_op;
        diff[i] = p->cmd_ns[i] - p->fw_ns[i];
        share[i] = p->cmd_ns[i] > 0 ? p->fw_ns[i] / p->cmd_ns[i] : 0;
    }
    r.op = summarize(p->cmd_ns, reps);
    r.cmd = summarize(per_cmd, reps);
    r.fw = summarize(p->fw_ns, reps);
    r.cmdset = summarize(diff, reps);
    r.cmdset_per_cmd = r.cmdset.median / p->cmds_per_op;
    r.cmdset_best = r.op.best - r.fw.best;
    r.fw_share = summarize(share, reps).median;
    r.wall = summarize(p->cmd_wall_ns, reps);
    r.faults_per_op = (double)p->cmd_faults / ((double)reps * p->n_ops);
    r.fw_faults_per_op = (double)p->fw_faults / ((double)reps * p->n_ops);
    free(per_cmd);
    free(diff);
    free(share);
    return r;
}

static const char *kind_name(enum op_kind k)
{
    return k == OP_STORE ? "store" : k == OP_RETRIEVE ? "retrieve" : "exist";
}

static const char *layout_name(const struct scenario *sc)
{
    if (sc->kind != OP_STORE || sc->method == KVSSD_XFER_PRP) {
        return "none";
    }
    return sc->layout == KVSSD_WIRE_FULL ? "full" : "stock";
}

/*
 * The figure a target applies to (issue 16: <= 2 us per 64 B Store and per
 * inline fragment): ns per op of a 64 B Store by data pointer, ns per
 * command of an inline Store (a hybrid Store's commands carry a 4 KiB
 * data pointer Store each: not fragments). NULL: none.
 */
static const char *target_of(const struct scenario *sc, const struct result *r, double *value)
{
    if (sc->kind == OP_STORE && sc->method == KVSSD_XFER_PRP && sc->value_bytes == 64) {
        *value = r->op.median;
        return "ns per 64 B Store";
    }
    if (sc->kind == OP_STORE && sc->method == KVSSD_XFER_INLINE) {
        *value = r->cmd.median;
        return "ns per inline fragment";
    }
    return NULL;
}

/* ---- Options --------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " TOOL " [options]\n"
            "Host ns per command of the device's KV command set (hw/kvssd/kv.c, inline.c) and\n"
            "the kvftl firmware, driven natively with raw SQEs (docs/cmd-bench.md).\n"
            "options:\n"
            "  --keys N                  operations per scenario and repetition, on N distinct\n"
            "                            16-byte keys (1..%u). Default: 2048.\n"
            "  --reps N                  timed repetitions after one warm-up (1..%u). Default: 7.\n"
            "  --batch N                 commands per run of the transport's bottom half, each\n"
            "                            run starting with the inline-stream expiry scan (1: one\n"
            "                            command per doorbell, as a synchronous host at queue\n"
            "                            depth 1; 1..%u). Default: %u, the transport's most: a\n"
            "                            deep queue.\n"
            "  --only LIST               comma-separated scenarios (--list names them).\n"
            "                            Default: all.\n"
            "  --list                    print the scenarios and exit\n"
            "  --preset NAME             firmware preset: default, pm983, cosmos. Default:\n"
            "                            default, on a 256 MiB device: 2 channels x 2 dies x 64\n"
            "                            blocks x 64 pages.\n"
            "  --set NAME=VALUE          a firmware tunable (include/kvftl/tunables.def), by\n"
            "                            field or property name, e.g. --set blocks-per-die=128;\n"
            "                            repeatable\n"
            "  --json                    print one JSON object instead of the table\n"
            "  --version                 print the version\n"
            "  --help                    this text\n"
            "See docs/cmd-bench.md.\n",
            MAX_KEYS, MAX_REPS, KVSSD_BH_BATCH, KVSSD_BH_BATCH);
}

/* A count as every tool reads one (<bench/units.h>): 8, 1e3, 10k, 0x10. */
static uint32_t num_arg(const char *flag, const char *val, uint32_t lo, uint32_t hi)
{
    uint64_t v;

    if (!units_u64(val, UNITS_COUNT, &v) || v < lo || v > hi) {
        tool_usage_error(TOOL, NULL, "%s is '%s'; it must be a number from %u to %u", flag, val, lo,
                         hi);
        exit(TOOL_EXIT_USAGE);
    }
    return (uint32_t)v;
}

static void parse_only(struct opts *o, const char *list)
{
    char *copy = strdup(list), *save = NULL;

    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t i;

        for (i = 0; i < N_SCENARIOS && strcmp(scenarios[i].name, tok) != 0; i++) {
        }
        if (i == N_SCENARIOS) {
            tool_usage_error(TOOL, NULL,
                             "--only names '%s'; it must be one of the scenarios --list prints",
                             tok);
            exit(TOOL_EXIT_USAGE);
        }
        o->only[i] = true;
    }
    free(copy);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
    enum {
        O_KEYS = 256,
        O_REPS,
        O_BATCH,
        O_ONLY,
        O_LIST,
        O_PRESET,
        O_SET,
        O_JSON,
        O_VERSION,
        O_HELP
    };
    static const struct option longopts[] = {
        {"keys", required_argument, NULL, O_KEYS},
        {"reps", required_argument, NULL, O_REPS},
        {"batch", required_argument, NULL, O_BATCH},
        {"only", required_argument, NULL, O_ONLY},
        {"list", no_argument, NULL, O_LIST},
        {"preset", required_argument, NULL, O_PRESET},
        {"set", required_argument, NULL, O_SET},
        {"json", no_argument, NULL, O_JSON},
        {"version", no_argument, NULL, O_VERSION},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    int c;

    *o = (struct opts){.keys = 2048, .reps = 7, .batch = KVSSD_BH_BATCH, .preset = "default"};
    opterr = 0; /* the message below names the option */
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_KEYS:
            o->keys = num_arg("--keys", optarg, 1, MAX_KEYS);
            break;
        case O_REPS:
            o->reps = num_arg("--reps", optarg, 1, MAX_REPS);
            break;
        case O_BATCH:
            o->batch = num_arg("--batch", optarg, 1, KVSSD_BH_BATCH);
            break;
        case O_ONLY:
            parse_only(o, optarg);
            break;
        case O_LIST:
            for (size_t i = 0; i < N_SCENARIOS; i++) {
                printf("%s\n", scenarios[i].name);
            }
            exit(0);
        case O_PRESET:
            o->preset = optarg;
            break;
        case O_SET:
            if (o->n_set == MAX_SETS) {
                tool_usage_error(TOOL, NULL, "--set is given more than %d times", MAX_SETS);
                exit(TOOL_EXIT_USAGE);
            }
            o->set[o->n_set++] = optarg;
            break;
        case O_JSON:
            o->json = true;
            break;
        case O_VERSION:
            kvssd_print_version(TOOL);
            exit(0);
        case O_HELP:
            usage(stdout);
            exit(0);
        default:
            tool_usage_error(TOOL, NULL, "unknown or incomplete option '%s'", argv[optind - 1]);
            exit(TOOL_EXIT_USAGE);
        }
    }
    if (optind < argc) {
        tool_usage_error(TOOL, NULL, "unexpected argument '%s'", argv[optind]);
        exit(TOOL_EXIT_USAGE);
    }
}

static void build_config(const struct opts *o, struct kvftl_config *cfg)
{
    char err[512];

    if (kvftl_config_preset(cfg, o->preset) != 0) {
        tool_usage_error(TOOL, NULL, "--preset is '%s'; it must be default, pm983 or cosmos",
                         o->preset);
        exit(TOOL_EXIT_USAGE);
    }
    /* 256 MiB: the two instances' backing stores stay small on a shared machine */
    cfg->channels = 2;
    cfg->dies_per_channel = 2;
    cfg->blocks_per_die = 64;
    cfg->pages_per_block = 64;
    for (uint32_t i = 0; i < o->n_set; i++) {
        char name[128];
        const char *eq = strchr(o->set[i], '=');
        const struct kvftl_tunable *t;

        if (!eq || eq == o->set[i] || (size_t)(eq - o->set[i]) >= sizeof(name)) {
            tool_usage_error(TOOL, NULL, "--set is '%s'; it must be NAME=VALUE", o->set[i]);
            exit(TOOL_EXIT_USAGE);
        }
        memcpy(name, o->set[i], (size_t)(eq - o->set[i]));
        name[eq - o->set[i]] = '\0';
        t = kvftl_tunable_find(name);
        if (!t) {
            tool_usage_error(TOOL, NULL,
                             "--set names '%s'; it must be a field or property of "
                             "include/kvftl/tunables.def",
                             name);
            exit(TOOL_EXIT_USAGE);
        }
        if (kvftl_tunable_parse(cfg, t, name, eq + 1, err, sizeof(err)) != 0) {
            tool_usage_error(TOOL, NULL, "%s", err);
            exit(TOOL_EXIT_USAGE);
        }
    }
    if (kvftl_config_check(cfg, err, sizeof(err)) != 0) {
        tool_usage_error(TOOL, NULL, "%s", err);
        exit(TOOL_EXIT_USAGE);
    }
}

/* ---- Output ----------------------------------------------------------------- */

static void print_table(const struct opts *o, const struct kvftl_config *cfg, struct prepared *p,
                        const struct result *r, size_t n, uint64_t errors, uint64_t mismatches,
                        uint32_t warmup_rounds)
{
    printf(TOOL
           ": %u ops per scenario (16-byte keys), %u repetitions after %u warm-up rounds, "
           "%u commands per bottom half;\npreset %s, %u x %u dies x %u blocks x %u pages of %u B\n",
           o->keys, o->reps, warmup_rounds, o->batch, o->preset, cfg->channels,
           cfg->dies_per_channel, cfg->blocks_per_die, cfg->pages_per_block, cfg->page_size_bytes);
    printf("host CPU ns of this thread: median of the repetitions [best, spread = (worst - best) / "
           "median];\n"
           "fw = the firmware alone on the same calls; cmdset = the difference (median of the "
           "per-repetition differences [best - best]);\n"
           "wall = wall-clock ns per op (median); faults = page faults per op (command set / "
           "firmware alone)\n\n");
    printf("%-19s %4s %21s %23s %13s %13s %10s %5s %8s %11s\n", "scenario", "cmds",
           "ns/cmd [best spread]", "ns/op [best spread]", "fw/op [best]", "cmdset [best]",
           "cmdset/cmd", "fw %", "wall/op", "faults/op");
    for (size_t i = 0; i < n; i++) {
        char a[64], b[64], c[64], d[64], f[64];

        snprintf(a, sizeof(a), "%.0f [%.0f %3.0f%%]", r[i].cmd.median, r[i].cmd.best,
                 r[i].cmd.spread_pct);
        snprintf(b, sizeof(b), "%.0f [%.0f %3.0f%%]", r[i].op.median, r[i].op.best,
                 r[i].op.spread_pct);
        snprintf(c, sizeof(c), "%.0f [%.0f]", r[i].fw.median, r[i].fw.best);
        snprintf(d, sizeof(d), "%.0f [%.0f]", r[i].cmdset.median, r[i].cmdset_best);
        snprintf(f, sizeof(f), "%.3f/%.3f", r[i].faults_per_op, r[i].fw_faults_per_op);
        printf("%-19s %4u %21s %23s %13s %13s %10.1f %4.0f%% %8.0f %11s\n", p[i].sc->name,
               p[i].cmds_per_op, a, b, c, d, r[i].cmdset_per_cmd, 100.0 * r[i].fw_share,
               r[i].wall.median, f);
    }
    printf("\ntargets (<= %.0f ns, medians):\n", TARGET_NS);
    for (size_t i = 0; i < n; i++) {
        double v;
        const char *what = target_of(p[i].sc, &r[i], &v);

        if (what) {
            printf("  %-19s %-24s %7.0f  %s\n", p[i].sc->name, what, v,
                   v <= TARGET_NS ? "met" : "NOT met");
        }
    }
    printf("\nunexpected completions %" PRIu64 ", values read back wrong %" PRIu64 "\n", errors,
           mismatches);
    for (size_t i = 0; i < n; i++) {
        if (p[i].errors) {
            printf("  %s: %" PRIu64 " (first: %s)\n", p[i].sc->name, p[i].errors, p[i].first_error);
        }
    }
}

static int bench_argc; /* main()'s, as typed, for the provenance */
static char **bench_argv;

/* A number printed as printf's @fmt prints it (the digits the report always had). */
static void j_num(json_object *o, const char *k, double v, const char *fmt)
{
    char text[64];

    snprintf(text, sizeof(text), fmt, v);
    json_object_object_add(o, k, json_object_new_double_s(v, text));
}

static void j_u64(json_object *o, const char *k, uint64_t v)
{
    json_object_object_add(o, k, json_object_new_uint64(v));
}

static void j_str(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(v));
}

static void json_samples(json_object *o, const char *name, const double *v, uint32_t n)
{
    json_object *a = json_object_new_array();

    for (uint32_t i = 0; i < n; i++) {
        char text[64];
        snprintf(text, sizeof(text), "%.1f", v[i]);
        json_object_array_add(a, json_object_new_double_s(v[i], text));
    }
    json_object_object_add(o, name, a);
}

static void json_summary(json_object *o, const char *name, const struct summary *s)
{
    json_object *m = json_object_new_object();

    j_num(m, "median", s->median, "%.1f");
    j_num(m, "best", s->best, "%.1f");
    j_num(m, "worst", s->worst, "%.1f");
    j_num(m, "spread_pct", s->spread_pct, "%.2f");
    json_object_object_add(o, name, m);
}

/*
 * The provenance object (include/bench/provenance.h): the device is the
 * configuration log page the device with @ftl (configured as @cfg from
 * preset @o->preset) would report.
 */
static json_object *json_provenance(const struct opts *o, const struct kvftl_config *cfg,
                                    struct kvftl *ftl)
{
    struct kvssd_config_log l;
    struct kvftl_stats st;
    unsigned preset = 0;

    while (preset < KVFTL_PRESETS && strcmp(kvftl_preset_names[preset], o->preset) != 0) {
        preset++;
    }
    kvftl_stats_get(ftl, &st);
    kvssd_config_log_fill(&l, cfg, KVSSD_FIRMWARE_REVISION, preset, false, st.capacity_bytes);
    return provenance_json(TOOL, bench_argc, bench_argv, provenance_device_json(&l));
}

/* --json: one object built with json-c, which escapes every string. */
static void print_json(const struct opts *o, const struct kvftl_config *cfg, struct kvftl *ftl,
                       struct prepared *p, const struct result *r, size_t n, uint64_t errors,
                       uint64_t mismatches, uint32_t warmup_rounds)
{
    json_object *j = json_object_new_object(), *scenarios = json_object_new_array();

    json_object_object_add(j, "provenance", json_provenance(o, cfg, ftl));
    j_str(j, "tool", TOOL);
    j_str(j, "version", KVSSD_VERSION);
    j_u64(j, "keys", o->keys);
    j_u64(j, "reps", o->reps);
    j_u64(j, "warmup_rounds", warmup_rounds);
    j_u64(j, "batch", o->batch);
    j_u64(j, "key_bytes", KEY_BYTES);
    j_str(j, "preset", o->preset);
    j_u64(j, "channels", cfg->channels);
    j_u64(j, "dies_per_channel", cfg->dies_per_channel);
    j_u64(j, "blocks_per_die", cfg->blocks_per_die);
    j_u64(j, "pages_per_block", cfg->pages_per_block);
    j_u64(j, "page_size_bytes", cfg->page_size_bytes);
    j_num(j, "target_ns", TARGET_NS, "%.0f");
    for (size_t i = 0; i < n; i++) {
        const struct scenario *sc = p[i].sc;
        json_object *e = json_object_new_object();
        double v;
        const char *what = target_of(sc, &r[i], &v);

        j_str(e, "name", sc->name);
        j_str(e, "kind", kind_name(sc->kind));
        j_str(e, "method", sc->kind == OP_STORE ? kvssd_xfer_mode_name(sc->method) : "none");
        j_str(e, "layout", layout_name(sc));
        j_u64(e, "value_bytes", sc->value_bytes);
        j_u64(e, "commands_per_op", p[i].cmds_per_op);
        j_u64(e, "inline_bytes", p[i].inline_bytes);
        j_u64(e, "inline_transfers", p[i].inline_xfers);
        j_u64(e, "ops", o->keys);
        json_summary(e, "ns_per_command", &r[i].cmd);
        json_summary(e, "ns_per_op", &r[i].op);
        json_summary(e, "firmware_ns_per_op", &r[i].fw);
        json_summary(e, "cmdset_ns_per_op", &r[i].cmdset);
        json_summary(e, "wall_ns_per_op", &r[i].wall);
        json_samples(e, "ns_per_op_samples", p[i].cmd_ns, o->reps);
        json_samples(e, "firmware_ns_per_op_samples", p[i].fw_ns, o->reps);
        j_num(e, "cmdset_best_ns_per_op", r[i].cmdset_best, "%.1f");
        j_num(e, "cmdset_ns_per_command", r[i].cmdset_per_cmd, "%.1f");
        j_num(e, "firmware_share", r[i].fw_share, "%.4f");
        j_num(e, "page_faults_per_op", r[i].faults_per_op, "%.3f");
        j_num(e, "firmware_page_faults_per_op", r[i].fw_faults_per_op, "%.3f");
        if (what) {
            json_object *t = json_object_new_object();
            j_str(t, "what", what);
            j_num(t, "ns", v, "%.1f");
            json_object_object_add(t, "met", json_object_new_boolean(v <= TARGET_NS));
            json_object_object_add(e, "target", t);
        }
        j_u64(e, "errors", p[i].errors);
        json_object_array_add(scenarios, e);
    }
    json_object_object_add(j, "scenarios", scenarios);
    j_u64(j, "errors", errors);
    j_u64(j, "verify_mismatches", mismatches);
    printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
    struct opts o;
    struct kvftl_config cfg;
    struct key_set sets[3];
    struct prepared p[N_SCENARIOS];
    struct result r[N_SCENARIOS];
    struct device dev, fw;
    bool any_only = false;
    uint64_t errors = 0, mismatches = 0;
    uint32_t warmup_rounds = 0;
    size_t n = 0;

    /* the command line as typed: getopt_long permutes argv */
    bench_argv = calloc((size_t)argc + 1, sizeof(*bench_argv));
    if (bench_argv) {
        memcpy(bench_argv, argv, (size_t)argc * sizeof(*argv));
        bench_argc = argc;
    }
    parse_opts(argc, argv, &o);
    build_config(&o, &cfg);
    key_set_init(&sets[0], 'a', 64, o.keys);
    key_set_init(&sets[1], 'b', 4096, o.keys);
    key_set_init(&sets[2], 'c', 4096 + 64, o.keys);
    for (size_t i = 0; i < N_SCENARIOS; i++) {
        any_only |= o.only[i];
    }
    for (size_t i = 0; i < N_SCENARIOS; i++) {
        const struct scenario *sc = &scenarios[i];
        /* a lookup of a set needs its values stored: the first store scenario of the set */
        bool needed = !any_only || o.only[i];

        if (any_only && !needed && sc->kind == OP_STORE && sc->method == KVSSD_XFER_PRP) {
            for (size_t j = 0; j < N_SCENARIOS; j++) {
                needed |= o.only[j] && scenarios[j].kind != OP_STORE &&
                          scenarios[j].key_set == sc->key_set;
            }
        }
        if (needed) {
            prepare(&p[n++], sc, &sets[sc->key_set - 'a'], o.keys, o.reps);
        }
    }

    device_open(&dev, &cfg, true);
    dev.batch = o.batch;
    device_open(&fw, &cfg, false);
    /*
     * Untimed rounds until every NAND page of the (small) device has been
     * programmed once, so the firmware's backing memory is touched and GC is
     * in its steady state (docs/cmd-bench.md: first-touch is another cost),
     * and at least one round: caches warm, every key stored.
     */
    for (;;) {
        struct kvftl_stats st;

        for (size_t i = 0; i < n; i++) {
            run_cmdset(&dev, &p[i], o.keys);
            run_firmware(&fw, &p[i], o.keys);
        }
        warmup_rounds++;
        kvftl_stats_get(fw.ftl, &st);
        if (st.nand_pages_programmed >= device_pages(&cfg) || warmup_rounds == MAX_WARMUP_ROUNDS) {
            break;
        }
    }
    /*
     * The two passes alternate which goes first, so that a burst of load from
     * other processes does not always fall on the same one.
     */
    for (uint32_t rep = 0; rep < o.reps; rep++) {
        for (size_t i = 0; i < n; i++) {
            struct stamp c0, c1, f0 = {0}, f1 = {0};

            if (rep % 2) {
                f0 = stamp_now();
                run_firmware(&fw, &p[i], o.keys);
                f1 = stamp_now();
            }
            c0 = stamp_now();
            run_cmdset(&dev, &p[i], o.keys);
            c1 = stamp_now();
            if (rep % 2 == 0) {
                f0 = stamp_now();
                run_firmware(&fw, &p[i], o.keys);
                f1 = stamp_now();
            }
            p[i].cmd_ns[rep] = (c1.cpu_ns - c0.cpu_ns) / o.keys;
            p[i].fw_ns[rep] = (f1.cpu_ns - f0.cpu_ns) / o.keys;
            p[i].cmd_wall_ns[rep] = (c1.wall_ns - c0.wall_ns) / o.keys;
            p[i].cmd_faults += c1.faults - c0.faults;
            p[i].fw_faults += f1.faults - f0.faults;
        }
    }
    for (size_t s = 0; s < 3; s++) {
        for (size_t i = 0; i < n; i++) {
            if (p[i].ks == &sets[s] && p[i].sc->kind == OP_STORE) {
                mismatches += verify(&dev, &sets[s], o.keys);
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        r[i] = result_of(&p[i], o.reps);
        errors += p[i].errors;
    }
    if (o.json) {
        print_json(&o, &cfg, dev.ftl, p, r, n, errors, mismatches, warmup_rounds);
    } else {
        print_table(&o, &cfg, p, r, n, errors, mismatches, warmup_rounds);
    }
    if (errors || mismatches) {
        for (size_t i = 0; i < n && o.json; i++) {
            if (p[i].errors) {
                fprintf(stderr, TOOL ": %s: %" PRIu64 " unexpected completions (first: %s)\n",
                        p[i].sc->name, p[i].errors, p[i].first_error);
            }
        }
        fprintf(stderr,
                TOOL ": %" PRIu64 " unexpected completions, %" PRIu64 " values read back wrong\n",
                errors, mismatches);
    }
    device_close(&dev);
    device_close(&fw);
    for (size_t i = 0; i < n; i++) {
        free(p[i].order);
        free(p[i].cmds);
        free(p[i].out);
        free(p[i].cmd_ns);
        free(p[i].fw_ns);
        free(p[i].cmd_wall_ns);
    }
    for (size_t s = 0; s < 3; s++) {
        free(sets[s].keys);
        free(sets[s].values);
    }
    return errors || mismatches ? 1 : 0;
}
