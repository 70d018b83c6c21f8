/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench - KV workloads against a kvssd namespace, in the spirit of
 * OpenMPDK's kvbench and RocksDB's db_bench.
 *
 *   kvbench [run] [--config FILE] [--preset NAME] [flags]
 *   kvbench calibrate [flags]
 *
 * A load phase inserts key_count keys; a run phase issues an operation mix
 * for a number of operations or a duration. Threads x queue depth (sync
 * ioctl engine, or io_uring async engine). Every read is verified against
 * the self-checking payload. Results as a table, or one JSON object.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvbench.h"

uint64_t kb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct kb_shared {
    const struct kb_config *cfg;
    struct kvssd_dev *dev;
    const struct kb_phase *phase;
    bool is_load;
    uint64_t total_ops; /* 0 = by duration */
    uint64_t deadline_ns;
    uint64_t key_count;
    struct kb_zipf zipf;
    struct kb_perm perm;
    double mix_cum[KB_OP_COUNT];
    _Atomic uint64_t next_op;
    _Atomic uint64_t done_ops;
    _Atomic uint64_t next_insert; /* run-phase inserts: new indexes past key_count */
    _Atomic uint64_t inserts_done; /* ... of which completed: reads choose below this */
    _Atomic uint64_t seq_cursor;
    _Atomic bool stop;
};

struct kb_slot {
    struct kb_thread *t;
    enum kb_op op;
    uint64_t index;
    uint32_t key_len, value_len;
    uint64_t start_ns;
    uint8_t key[KB_KEY_BYTES_MAX];
    uint8_t *value;
    uint32_t value_cap;
    bool busy;
};

struct kb_thread {
    struct kb_shared *sh;
    unsigned id;
    pthread_t tid;
    struct kb_rng rng;
    struct kb_result res;
    struct kb_slot *slots;
    unsigned nslots;
    struct kvssd_queue *q;
};

/* ---- choosing the next operation ------------------------------------ */

static bool claim_op(struct kb_shared *sh)
{
    if (atomic_load(&sh->stop)) {
        return false;
    }
    uint64_t i = atomic_fetch_add(&sh->next_op, 1);
    if (sh->total_ops && i >= sh->total_ops) {
        atomic_store(&sh->stop, true);
        return false;
    }
    if (sh->deadline_ns && kb_now_ns() >= sh->deadline_ns) {
        atomic_store(&sh->stop, true);
        return false;
    }
    return true;
}

static uint64_t existing_index(struct kb_thread *t)
{
    struct kb_shared *sh = t->sh;
    /* only keys whose insert completed, so that a read does not race its insert */
    uint64_t n = sh->key_count + atomic_load(&sh->inserts_done);
    switch (sh->phase->order) {
    case KB_ORDER_SEQUENTIAL:
        return atomic_fetch_add(&sh->seq_cursor, 1) % n;
    case KB_ORDER_ZIPFIAN:
        return kb_zipf_next(&sh->zipf, &t->rng);
    case KB_ORDER_LATEST: {
        uint64_t z = kb_zipf_next(&sh->zipf, &t->rng);
        return z < n ? n - 1 - z : 0;
    }
    case KB_ORDER_UNIFORM:
    default:
        return kb_rng_below(&t->rng, n);
    }
}

static void pick(struct kb_thread *t, struct kb_slot *s)
{
    struct kb_shared *sh = t->sh;
    const struct kb_config *c = sh->cfg;

    if (sh->is_load) {
        uint64_t i = atomic_fetch_add(&sh->seq_cursor, 1);
        s->op = KB_OP_INSERT;
        switch (sh->phase->order) {
        case KB_ORDER_UNIFORM:
            s->index = kb_perm_at(&sh->perm, i);
            break;
        case KB_ORDER_ZIPFIAN:
            s->index = kb_zipf_next(&sh->zipf, &t->rng);
            break;
        default:
            s->index = i % sh->key_count;
            break;
        }
    } else {
        double u = kb_rng_double(&t->rng);
        s->op = KB_OP_READ;
        for (int i = 0; i < KB_OP_COUNT; i++) {
            if (u < sh->mix_cum[i]) {
                s->op = (enum kb_op)i;
                break;
            }
        }
        if (s->op == KB_OP_INSERT) {
            s->index = sh->key_count + atomic_fetch_add(&sh->next_insert, 1);
        } else {
            s->index = existing_index(t);
        }
    }
    s->key_len = kb_key_size(&c->key_size, s->index, c->seed);
    kb_key_encode(s->index, s->key_len, c->seed, s->key);
    if (s->op == KB_OP_INSERT || s->op == KB_OP_UPDATE) {
        s->value_len = kb_size_draw(&c->value_size, &t->rng);
        kb_value_fill(s->index, s->value_len, c->seed, s->value);
    }
}

/* ---- completing an operation ---------------------------------------- */

static void finish(struct kb_thread *t, struct kb_slot *s, int err, const struct kvssd_result *r)
{
    struct kb_result *res = &t->res;
    kb_hist_add(&res->hist, kb_now_ns() - s->start_ns);
    res->ops++;
    res->op_count[s->op]++;
    res->commands += r ? r->commands : 0;
    res->user_bytes += s->key_len;
    atomic_fetch_add(&t->sh->done_ops, 1);
    if (err == -KVSSD_ERR_KEY_NOT_FOUND) {
        res->not_found++;
        return;
    }
    if (err) {
        res->errors++;
        if (res->errors <= 3) {
            fprintf(stderr, "\nkvbench: %s of key #%llu failed: %s\n", kb_op_names[s->op],
                    (unsigned long long)s->index, kvssd_strerror(err));
        }
        return;
    }
    if (s->op == KB_OP_INSERT || s->op == KB_OP_UPDATE) {
        res->user_bytes += s->value_len;
        if (s->op == KB_OP_INSERT && !t->sh->is_load) {
            atomic_fetch_add(&t->sh->inserts_done, 1);
        }
    } else if (s->op == KB_OP_READ) {
        uint32_t full = r->dw0, got = full < s->value_cap ? full : s->value_cap;
        res->user_bytes += got;
        if (t->sh->cfg->verify && kb_value_check(s->index, full, t->sh->cfg->seed, s->value, got)) {
            res->mismatches++;
        }
    }
}

static void async_done(void *arg, int err, const struct kvssd_result *r)
{
    struct kb_slot *s = arg;
    finish(s->t, s, err, r);
    s->busy = false;
}

/* An iterate op: open on the key's first bytes, read up to iterate_entries, close. */
static int run_iterate(struct kb_thread *t, struct kb_slot *s, struct kvssd_result *r)
{
    struct kvssd_iter it;
    uint32_t plen = s->key_len < 4 ? s->key_len : 4;
    const uint8_t *k, *v;
    uint32_t kl, vl, n = 0;
    memset(r, 0, sizeof(*r));
    int rc = kvssd_iter_open(t->sh->dev, &it, s->key, plen, false, 64 * 1024);
    if (rc) {
        return rc;
    }
    r->commands = 2;
    while (n < t->sh->cfg->iterate_entries && (rc = kvssd_iter_next(&it, &k, &kl, &v, &vl)) == 1) {
        n++;
        t->res.user_bytes += kl;
    }
    r->commands += 1 + n / 256; /* Iter Read batches, approximately */
    int crc = kvssd_iter_close(&it);
    return rc < 0 ? rc : crc;
}

static int run_sync(struct kb_thread *t, struct kb_slot *s, struct kvssd_result *r)
{
    struct kvssd_dev *dev = t->sh->dev;
    switch (s->op) {
    case KB_OP_INSERT:
    case KB_OP_UPDATE:
        return kvssd_store(dev, s->key, s->key_len, s->value, s->value_len, 0, r);
    case KB_OP_READ:
        return kvssd_retrieve(dev, s->key, s->key_len, s->value, s->value_cap, NULL, r);
    case KB_OP_DELETE:
        return kvssd_delete(dev, s->key, s->key_len, r);
    case KB_OP_EXIST:
        return kvssd_exist(dev, s->key, s->key_len, r);
    default:
        return run_iterate(t, s, r);
    }
}

static int start_async(struct kb_thread *t, struct kb_slot *s)
{
    switch (s->op) {
    case KB_OP_INSERT:
    case KB_OP_UPDATE:
        return kvssd_store_async(t->q, s->key, s->key_len, s->value, s->value_len, 0, async_done,
                                 s);
    case KB_OP_READ:
        return kvssd_retrieve_async(t->q, s->key, s->key_len, s->value, s->value_cap, async_done,
                                    s);
    case KB_OP_DELETE:
        return kvssd_delete_async(t->q, s->key, s->key_len, async_done, s);
    case KB_OP_EXIST:
        return kvssd_exist_async(t->q, s->key, s->key_len, async_done, s);
    default:
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
}

static void *thread_main(void *arg)
{
    struct kb_thread *t = arg;
    struct kvssd_result r;

    if (t->sh->cfg->engine == KB_ENGINE_SYNC) {
        struct kb_slot *s = &t->slots[0];
        while (claim_op(t->sh)) {
            pick(t, s);
            s->start_ns = kb_now_ns();
            memset(&r, 0, sizeof(r));
            int rc = run_sync(t, s, &r);
            finish(t, s, rc, &r);
        }
        return NULL;
    }
    for (;;) {
        struct kb_slot *s = NULL;
        for (unsigned i = 0; i < t->nslots && !s; i++) {
            if (!t->slots[i].busy) {
                s = &t->slots[i];
            }
        }
        if (!s) {
            if (kvssd_queue_poll(t->q, 1) < 0) {
                break;
            }
            continue;
        }
        if (!claim_op(t->sh)) {
            break;
        }
        pick(t, s);
        s->start_ns = kb_now_ns();
        if (s->op == KB_OP_ITERATE) {
            /* libkvssd's iterators are synchronous */
            memset(&r, 0, sizeof(r));
            int rc = run_iterate(t, s, &r);
            finish(t, s, rc, &r);
            continue;
        }
        s->busy = true;
        int rc;
        while ((rc = start_async(t, s)) == -KVSSD_ERR_BUSY) {
            kvssd_queue_poll(t->q, 1);
        }
        if (rc) {
            s->busy = false;
            finish(t, s, rc, NULL);
        }
        kvssd_queue_poll(t->q, 0);
    }
    while (kvssd_queue_outstanding(t->q)) {
        if (kvssd_queue_poll(t->q, 1) < 0) {
            break;
        }
    }
    return NULL;
}

/* ---- a phase --------------------------------------------------------- */

static void progress_line(struct kb_shared *sh, const char *name, uint64_t t0, bool final)
{
    uint64_t done = atomic_load(&sh->done_ops);
    double el = (double)(kb_now_ns() - t0) / 1e9;
    double frac = sh->total_ops ? (double)done / (double)sh->total_ops
                                : (el / ((double)(sh->deadline_ns - t0) / 1e9));
    if (frac > 1) {
        frac = 1;
    }
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++) {
        bar[i] = i < fill ? '#' : '.';
    }
    bar[30] = '\0';
    fprintf(stderr, "\r%-5s [%s] %5.1f%% %llu ops %.0f ops/s %s", name, bar, frac * 100,
            (unsigned long long)done, el > 0 ? (double)done / el : 0.0, final ? "\n" : "");
    fflush(stderr);
}

static int run_phase(const struct kb_config *c, struct kvssd_dev *dev, const struct kb_phase *ph,
                     const char *name, bool is_load, struct kb_result *out)
{
    struct kb_shared sh;
    memset(&sh, 0, sizeof(sh));
    sh.cfg = c;
    sh.dev = dev;
    sh.phase = ph;
    sh.is_load = is_load;
    sh.key_count = c->key_count;
    /* a duration without an explicit op count runs for the duration alone */
    if (is_load) {
        sh.total_ops = ph->ops ? ph->ops : c->key_count;
    } else {
        sh.total_ops = ph->duration_s > 0 && !ph->ops_set ? 0 : ph->ops;
    }
    kb_perm_init(&sh.perm, c->key_count, c->seed);
    if (ph->order == KB_ORDER_ZIPFIAN || ph->order == KB_ORDER_LATEST) {
        kb_zipf_init(&sh.zipf, c->key_count, ph->theta);
    }
    double total = 0, acc = 0;
    for (int i = 0; i < KB_OP_COUNT; i++) {
        total += ph->mix[i];
    }
    for (int i = 0; i < KB_OP_COUNT; i++) {
        acc += ph->mix[i];
        sh.mix_cum[i] = acc / total;
    }

    memset(out, 0, sizeof(*out));
    out->phase = name;
    if (c->reset_stats) {
        kvssd_reset_stats(dev, NULL);
    }
    out->have_device = kvssd_get_stats(dev, &out->before, NULL) == 0;

    unsigned nslots = c->engine == KB_ENGINE_ASYNC ? c->queue_depth : 1;
    uint32_t cap = kb_size_max(&c->value_size);
    cap = cap < 4096 ? 4096 : (cap + 4095) & ~4095u;
    struct kb_thread *th = calloc(c->threads, sizeof(*th));
    int rc = 0;
    for (unsigned i = 0; i < c->threads; i++) {
        th[i].sh = &sh;
        th[i].id = i;
        kb_rng_seed(&th[i].rng, c->seed * 1000003u + i + (is_load ? 0 : 0x5eed));
        th[i].nslots = nslots;
        th[i].slots = calloc(nslots, sizeof(struct kb_slot));
        for (unsigned j = 0; j < nslots; j++) {
            th[i].slots[j].t = &th[i];
            th[i].slots[j].value_cap = cap;
            if (posix_memalign((void **)&th[i].slots[j].value, 4096, cap)) {
                abort();
            }
        }
        if (c->engine == KB_ENGINE_ASYNC) {
            int qrc = kvssd_queue_create(dev, c->queue_depth, &th[i].q);
            if (qrc) {
                fprintf(stderr, "kvbench: cannot create an io_uring of depth %u: %s (%s)\n",
                        c->queue_depth, kvssd_strerror(qrc), strerror(errno));
                rc = 1;
            }
        }
    }
    bool progress = c->progress == 1 || (c->progress == -1 && isatty(2));
    uint64_t t0 = kb_now_ns();
    if (ph->duration_s > 0 && !is_load) {
        sh.deadline_ns = t0 + (uint64_t)(ph->duration_s * 1e9);
    }
    for (unsigned i = 0; !rc && i < c->threads; i++) {
        pthread_create(&th[i].tid, NULL, thread_main, &th[i]);
    }
    if (!rc) {
        if (progress) {
            while (atomic_load(&sh.done_ops) < sh.total_ops ||
                   (!sh.total_ops && !atomic_load(&sh.stop))) {
                progress_line(&sh, name, t0, false);
                struct timespec ts = {0, 200000000};
                nanosleep(&ts, NULL);
                if (atomic_load(&sh.stop)) {
                    break;
                }
            }
        }
        for (unsigned i = 0; i < c->threads; i++) {
            pthread_join(th[i].tid, NULL);
        }
        if (progress) {
            progress_line(&sh, name, t0, true);
        }
    }
    out->elapsed_s = (double)(kb_now_ns() - t0) / 1e9;
    for (unsigned i = 0; i < c->threads; i++) {
        struct kb_result *r = &th[i].res;
        out->ops += r->ops;
        for (int k = 0; k < KB_OP_COUNT; k++) {
            out->op_count[k] += r->op_count[k];
        }
        out->commands += r->commands;
        out->errors += r->errors;
        out->not_found += r->not_found;
        out->mismatches += r->mismatches;
        out->user_bytes += r->user_bytes;
        kb_hist_merge(&out->hist, &r->hist);
        kvssd_queue_destroy(th[i].q);
        for (unsigned j = 0; j < nslots; j++) {
            free(th[i].slots[j].value);
        }
        free(th[i].slots);
    }
    free(th);
    if (out->have_device) {
        out->have_device = kvssd_get_stats(dev, &out->after, NULL) == 0;
    }
    return rc;
}

/* ---- command line ---------------------------------------------------- */

struct flag {
    const char *name;
    int has_arg;
    const char *group, *key, *value; /* value: for flags without an argument */
};

static const struct flag flags[] = {
    {"device", 1, "benchmark", "device", NULL},
    {"seed", 1, "benchmark", "seed", NULL},
    {"threads", 1, "benchmark", "threads", NULL},
    {"qd", 1, "benchmark", "queue_depth", NULL},
    {"queue-depth", 1, "benchmark", "queue_depth", NULL},
    {"engine", 1, "benchmark", "engine", NULL},
    {"mode", 1, "benchmark", "transfer_mode", NULL},
    {"xfer-config", 1, "benchmark", "transfer_config", NULL},
    {"alpha", 1, "benchmark", "alpha", NULL},
    {"beta", 1, "benchmark", "beta", NULL},
    {"keys", 1, "benchmark", "key_count", NULL},
    {"iterate-entries", 1, "benchmark", "iterate_entries", NULL},
    {"no-verify", 0, "benchmark", "verify", "false"},
    {"no-reset-stats", 0, "benchmark", "reset_stats", "false"},
    {"json", 0, "benchmark", "json", "true"},
    {"progress", 1, "benchmark", "progress", NULL},
    {"key-size", 1, "keys", "size", NULL},
    {"value-size", 1, "values", "size", NULL},
    {"load-ops", 1, "load", "ops", NULL},
    {"load-order", 1, "load", "order", NULL},
    {"load-theta", 1, "load", "theta", NULL},
    {"no-load", 0, "load", "enabled", "false"},
    {"ops", 1, "run", "ops", NULL},
    {"duration", 1, "run", "duration_s", NULL},
    {"order", 1, "run", "order", NULL},
    {"theta", 1, "run", "theta", NULL},
    {"mix", 1, "run", "mix", NULL},
    {"no-run", 0, "run", "enabled", "false"},
    {"samples", 1, "calibrate", "samples", NULL},
    {"output", 1, "calibrate", "output", NULL},
};
#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kvbench [run|calibrate|baseline] [--config FILE] [--preset NAME] [flags]\n"
            "  --config FILE  INI config (groups benchmark, keys, values, load, run, calibrate)\n"
            "  --preset NAME  start from a preset (--list-presets)\n"
            "  -d PATH        same as --device: /dev/ngXnY, or pci:BDF / pci:nvmeN (the\n"
            "                 user-space PCI transport: full inline layout; sync engine)\n");
    for (size_t i = 0; i < NFLAGS; i++) {
        fprintf(f, "  --%-16s %s.%s%s\n", flags[i].name, flags[i].group, flags[i].key,
                flags[i].has_arg ? "" : " (no argument)");
    }
    fprintf(f, "  --list-presets\n  -h, --help\nSee docs/host.md for every key.\n");
}

int main(int argc, char **argv)
{
    struct kb_config c;
    char err[512];
    struct option longopts[NFLAGS + 5];
    bool calibrate = false, baseline = false;

    kb_config_default(&c);
    if (argc > 1 && (!strcmp(argv[1], "calibrate") || !strcmp(argv[1], "run") ||
                     !strcmp(argv[1], "baseline"))) {
        calibrate = argv[1][0] == 'c';
        baseline = argv[1][0] == 'b';
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    for (size_t i = 0; i < NFLAGS; i++) {
        longopts[i] = (struct option){flags[i].name, flags[i].has_arg, NULL, (int)(1000 + i)};
    }
    longopts[NFLAGS] = (struct option){"config", 1, NULL, 'c'};
    longopts[NFLAGS + 1] = (struct option){"preset", 1, NULL, 'p'};
    longopts[NFLAGS + 2] = (struct option){"list-presets", 0, NULL, 'L'};
    longopts[NFLAGS + 3] = (struct option){"help", 0, NULL, 'h'};
    longopts[NFLAGS + 4] = (struct option){NULL, 0, NULL, 0};

    /* pass 1: preset, then config file; pass 2: flags override both */
    int o;
    const char *preset = NULL, *config = NULL;
    while ((o = getopt_long(argc, argv, "d:c:p:h", longopts, NULL)) != -1) {
        if (o == 'p') {
            preset = optarg;
        } else if (o == 'c') {
            config = optarg;
        } else if (o == 'h') {
            usage(stdout);
            return 0;
        } else if (o == 'L') {
            for (int i = 0; kb_preset_names[i]; i++) {
                printf("%-22s %s\n", kb_preset_names[i], kb_preset_help[i]);
            }
            return 0;
        } else if (o == '?') {
            usage(stderr);
            return 2;
        }
    }
    if (preset && kb_preset_apply(&c, preset, err, sizeof(err))) {
        fprintf(stderr, "kvbench: %s\n", err);
        return 2;
    }
    if (config && kb_config_load_file(&c, config, err, sizeof(err))) {
        fprintf(stderr, "kvbench: %s\n", err);
        return 2;
    }
    optind = 1;
    while ((o = getopt_long(argc, argv, "d:c:p:h", longopts, NULL)) != -1) {
        const char *g, *k, *v;
        char flagname[64];
        if (o == 'd') {
            g = "benchmark";
            k = "device";
            v = optarg;
        } else if (o >= 1000 && o < 1000 + (int)NFLAGS) {
            const struct flag *f = &flags[o - 1000];
            g = f->group;
            k = f->key;
            v = f->has_arg ? optarg : f->value;
        } else {
            continue;
        }
        snprintf(flagname, sizeof(flagname), "%s", k);
        if (kb_config_set(&c, g, k, v, err, sizeof(err))) {
            fprintf(stderr, "kvbench: %s\n", err);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kvbench: unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    if (c.queue_depth > 1 && !c.engine_explicit) {
        c.engine = KB_ENGINE_ASYNC;
    }
    if (baseline) {
        if (!c.device[0]) {
            fprintf(stderr, "kvbench: baseline needs --device /dev/ngXnY (an NVM namespace)\n");
            return 2;
        }
        return kb_baseline(&c);
    }
    if (kb_config_check(&c, err, sizeof(err))) {
        fprintf(stderr, "kvbench: %s\n", err);
        return 2;
    }
    if (!c.device[0]) {
        const char *env = getenv("KVSSD_DEVICE");
        char found[4][64];
        if (env) {
            snprintf(c.device, sizeof(c.device), "%s", env);
        } else if (kvssd_discover(found, 4) > 0) {
            snprintf(c.device, sizeof(c.device), "%s", found[0]);
        } else {
            fprintf(stderr, "kvbench: no KV namespace found; give one with --device /dev/ngXnY\n");
            return 1;
        }
    }
    if (calibrate) {
        return kb_calibrate(&c);
    }

    struct kvssd_dev *dev;
    int rc = kvssd_open(c.device, &dev);
    if (rc) {
        fprintf(stderr, "kvbench: cannot open %s: %s\n", c.device,
                rc == -KVSSD_ERR_SYSTEM ? strerror(errno) : kvssd_strerror(rc));
        return 1;
    }
    if (c.xfer_config[0]) {
        struct kvssd_xfer_config x = *kvssd_get_xfer_config(dev);
        if (kvssd_xfer_config_load(c.xfer_config, &x, err, sizeof(err))) {
            fprintf(stderr, "kvbench: %s\n", err);
            return 2;
        }
        kvssd_set_xfer_config(dev, &x);
    }
    if (c.alpha >= 0 || c.beta >= 0) {
        struct kvssd_xfer_config x = *kvssd_get_xfer_config(dev);
        if (c.alpha >= 0) {
            x.alpha = c.alpha;
        }
        if (c.beta >= 0) {
            x.beta = c.beta;
        }
        kvssd_set_xfer_config(dev, &x);
    }
    kvssd_set_xfer_mode(dev, c.mode);

    struct kb_result res[2];
    int n = 0;
    if (c.load.enabled) {
        rc |= run_phase(&c, dev, &c.load, "load", true, &res[n++]);
    }
    if (!rc && c.run.enabled) {
        rc |= run_phase(&c, dev, &c.run, "run", false, &res[n++]);
    }
    if (c.json) {
        kb_report_json(&c, res, n);
    } else {
        for (int i = 0; i < n; i++) {
            kb_report_table(&c, &res[i]);
        }
    }
    kvssd_close(dev);
    uint64_t bad = 0;
    for (int i = 0; i < n; i++) {
        bad += res[i].errors + res[i].mismatches;
    }
    return rc ? 1 : bad ? 3 : 0;
}
