/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The workload runner: one phase (load or run) of the workload on one
 * engine. Threads claim operations from a shared counter; each operation's
 * key index, type and value size come from per-thread seeded generators,
 * so every engine gets the same operations (same keys, sizes, order, mix)
 * for a seed (with one thread, also in the same order). The kvssd engine
 * may instead run queue_depth operations per thread through io_uring.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
    struct kb_engine *eng;
    unsigned dev, ndev; /* device dev of ndev: key index k is key k * ndev + dev */
    struct kvssd_dev *dev_async; /* the kvssd engine's handle (async path), else NULL */
    struct kb_live *live;
    const struct kb_phase *phase;
    bool is_load;
    uint64_t total_ops; /* 0 = by duration */
    uint64_t deadline_ns;
    uint64_t key_count;
    struct kb_zipf zipf;   /* zipfian unscrambled, latest (each thread grows a copy) */
    struct kb_szipf szipf; /* zipfian scrambled (YCSB's "zipfian") */
    struct kb_scanlen scan;
    struct kb_perm perm;
    struct kb_window win;
    double mix_cum[KB_OP_COUNT];
    _Atomic uint64_t done_ops;
    _Atomic uint64_t next_insert; /* run-phase inserts: new indexes past key_count */
    _Atomic uint64_t inserts_done; /* ... of which completed: reads choose below this */
    _Atomic uint64_t seq_cursor;
    _Atomic bool stop;
};

struct kb_slot {
    struct kb_thread *t;
    enum kb_op op;
    uint64_t index;  /* in this device's key space */
    uint64_t gindex; /* the key's index over all devices: its bytes, size and value */
    uint32_t key_len, value_len;
    uint32_t scan_len; /* an iterate: keys to read at most */
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
    uint64_t quota, claimed; /* this thread's share of an op-count phase */
    bool writer;             /* run.writer's extra thread: updates until the others end */
    struct kb_rate rate;     /* ... paced by write_rate_limit_bytes_per_s */
    struct kb_zipf latest;   /* the latest order's zipfian over the keys inserted so far */
    uint64_t end_ns;         /* when its last operation completed */
    /* --report-interval: this period's latencies, taken and cleared by the main thread */
    pthread_mutex_t iv_lock;
    struct kb_hist *iv_hist; /* [KB_OP_COUNT], NULL without intervals */
};

/* ---- choosing the next operation ------------------------------------ */

/*
 * Each thread issues a fixed share of an op-count phase (ops / threads, the
 * first ops % threads one more): its operations come from its own seeded
 * stream, so every engine gets the same operations from each thread
 * whatever the scheduling. A duration ends every thread at the deadline.
 */
static bool claim_op(struct kb_thread *t)
{
    struct kb_shared *sh = t->sh;
    if (atomic_load(&sh->stop)) {
        return false;
    }
    if (t->writer) {
        /* no quota: it writes until the readers are done (stop) or the deadline */
        if (sh->deadline_ns && kb_now_ns() >= sh->deadline_ns) {
            return false;
        }
        t->claimed++;
        return true;
    }
    if (sh->total_ops && t->claimed >= t->quota) {
        return false;
    }
    if (sh->deadline_ns && kb_now_ns() >= sh->deadline_ns) {
        atomic_store(&sh->stop, true);
        return false;
    }
    t->claimed++;
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
        if (!sh->phase->zipfian_scrambled) {
            return kb_zipf_next(&sh->zipf, &t->rng);
        }
        /*
         * YCSB's nextKeynum(): the item space includes the inserts expected
         * in the phase; a key not inserted yet is drawn again (bounded here).
         */
        for (int i = 0; i < 1000; i++) {
            uint64_t k = kb_szipf_next(&sh->szipf, &t->rng);
            if (k < n) {
                return k;
            }
        }
        return kb_szipf_next(&sh->szipf, &t->rng) % n;
    case KB_ORDER_LATEST: {
        /* YCSB's SkewedLatestGenerator: an unscrambled zipfian over the keys so far, newest first
         */
        kb_zipf_grow(&t->latest, n);
        uint64_t z = kb_zipf_next(&t->latest, &t->rng);
        return z < n ? n - 1 - z : 0;
    }
    case KB_ORDER_WINDOW:
        return kb_window_at(&sh->win, atomic_fetch_add(&sh->seq_cursor, 1));
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
            s->index = sh->phase->zipfian_scrambled ? kb_szipf_next(&sh->szipf, &t->rng)
                                                    : kb_zipf_next(&sh->zipf, &t->rng);
            break;
        case KB_ORDER_WINDOW:
            s->index = kb_window_at(&sh->win, i);
            break;
        default:
            s->index = i % sh->key_count;
            break;
        }
    } else if (t->writer) {
        s->op = KB_OP_UPDATE;
        s->index = kb_rng_below(&t->rng, sh->key_count);
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
        if (s->op == KB_OP_ITERATE) {
            s->scan_len = kb_scanlen_next(&sh->scan, &t->rng);
        }
    }
    s->gindex = s->index * sh->ndev + sh->dev;
    s->key_len = kb_key_size(&c->key_size, s->gindex, c->seed);
    kb_key_encode(s->gindex, s->key_len, c->seed, s->key);
    if (s->op == KB_OP_INSERT || s->op == KB_OP_UPDATE || s->op == KB_OP_RMW) {
        s->value_len = kb_size_draw(&c->value_size, &t->rng);
        kb_value_fill(s->gindex, s->value_len, c->seed, s->value);
    }
}

/* ---- completing an operation ---------------------------------------- */

/* Record @index as live with @bytes (key + value), or absent when @bytes is -1. */
static void live_set(struct kb_live *l, uint64_t index, int64_t bytes)
{
    if (!l || !l->len) {
        return;
    }
    if (index >= l->n) {
        atomic_store(&l->overflow, true);
        return;
    }
    atomic_store(&l->len[index], bytes < 0 ? 0u : (uint32_t)bytes + 1u);
}

static void finish(struct kb_thread *t, struct kb_slot *s, int err, const struct kvssd_result *r)
{
    struct kb_result *res = &t->res;
    uint64_t ns = kb_now_ns() - s->start_ns;
    kb_hist_add(&res->hist, ns);
    kb_hist_add(&res->hist_op[s->op], ns);
    if (t->iv_hist) {
        pthread_mutex_lock(&t->iv_lock);
        kb_hist_add(&t->iv_hist[s->op], ns);
        pthread_mutex_unlock(&t->iv_lock);
    }
    res->ops++;
    res->op_count[s->op]++;
    res->commands += r ? r->commands : 0;
    res->user_bytes += s->key_len;
    if (!t->writer) {
        atomic_fetch_add(&t->sh->done_ops, 1);
    }
    if (err == -KVSSD_ERR_KEY_NOT_FOUND) {
        res->not_found++;
        res->not_found_op[s->op]++;
        return;
    }
    if (err) {
        res->errors++;
        if (res->errors <= 3) {
            const char *why = kb_engine_error();
            fprintf(stderr, "\nkvbench: %s: %s of key #%llu failed: %s%s%s\n",
                    t->sh->eng->ops->name, kb_op_names[s->op], (unsigned long long)s->gindex,
                    kvssd_strerror(err), why[0] ? ": " : "", why);
        }
        return;
    }
    if (s->op == KB_OP_DELETE) {
        live_set(t->sh->live, s->index, -1);
    }
    if (s->op == KB_OP_INSERT || s->op == KB_OP_UPDATE || s->op == KB_OP_RMW) {
        res->user_bytes += s->value_len;
        res->written_bytes += s->key_len + s->value_len;
        live_set(t->sh->live, s->index, (int64_t)s->key_len + s->value_len);
        if (s->op == KB_OP_INSERT && !t->sh->is_load) {
            atomic_fetch_add(&t->sh->inserts_done, 1);
        }
    } else if (s->op == KB_OP_READ) {
        uint32_t full = r->dw0, got = full < s->value_cap ? full : s->value_cap;
        res->user_bytes += got;
        if (t->sh->cfg->verify &&
            kb_value_check(s->gindex, full, t->sh->cfg->seed, s->value, got)) {
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

/* An iterate op: up to scan_len keys from the first with the key's first bytes. */
static int run_iterate(struct kb_thread *t, struct kb_slot *s, struct kvssd_result *r)
{
    uint32_t plen = s->key_len < 4 ? s->key_len : 4;
    uint64_t bytes = 0;
    memset(r, 0, sizeof(*r));
    int rc = t->sh->eng->ops->iterate(t->sh->eng->st, s->key, plen, s->scan_len, &bytes,
                                      &r->commands);
    t->res.user_bytes += bytes;
    return rc;
}

/*
 * A read-modify-write (YCSB f): read the key (verified like a read), then
 * store its new value; one operation, its latency both commands'.
 */
static int run_rmw(struct kb_thread *t, struct kb_slot *s, struct kvssd_result *r)
{
    const struct kb_engine_ops *ops = t->sh->eng->ops;
    const struct kb_config *c = t->sh->cfg;
    uint32_t full = 0, c1 = 0, c2 = 0;
    memset(r, 0, sizeof(*r));
    int rc = ops->get(t->sh->eng->st, s->key, s->key_len, s->value, s->value_cap, &full, &c1);
    r->commands = c1;
    if (rc) {
        return rc;
    }
    uint32_t got = full < s->value_cap ? full : s->value_cap;
    t->res.user_bytes += got;
    if (c->verify && kb_value_check(s->gindex, full, c->seed, s->value, got)) {
        t->res.mismatches++;
    }
    kb_value_fill(s->gindex, s->value_len, c->seed, s->value);
    rc = ops->put(t->sh->eng->st, s->key, s->key_len, s->value, s->value_len, &c2);
    r->commands += c2;
    return rc;
}

static int run_sync(struct kb_thread *t, struct kb_slot *s, struct kvssd_result *r)
{
    const struct kb_engine_ops *ops = t->sh->eng->ops;
    void *st = t->sh->eng->st;
    switch (s->op) {
    case KB_OP_INSERT:
    case KB_OP_UPDATE:
        return ops->put(st, s->key, s->key_len, s->value, s->value_len, &r->commands);
    case KB_OP_READ:
        return ops->get(st, s->key, s->key_len, s->value, s->value_cap, &r->dw0, &r->commands);
    case KB_OP_DELETE:
        return ops->del(st, s->key, s->key_len, &r->commands);
    case KB_OP_EXIST:
        return ops->exist(st, s->key, s->key_len, &r->commands);
    case KB_OP_RMW:
        return run_rmw(t, s, r);
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

static void thread_body(struct kb_thread *t);

/*
 * The writer's rate limit (db_bench's --benchmark_write_rate_limit): wait
 * until the limiter grants the write's key + value bytes, in naps of at
 * most 5 ms so that the end of the phase is noticed. False when the phase
 * ended meanwhile (the write is then not issued).
 */
static bool writer_pace(struct kb_thread *t, const struct kb_slot *s)
{
    if (!t->writer || !t->rate.bytes_per_s) {
        return true;
    }
    uint64_t at = kb_rate_request(&t->rate, (uint64_t)s->key_len + s->value_len, kb_now_ns());
    for (;;) {
        if (atomic_load(&t->sh->stop) ||
            (t->sh->deadline_ns && kb_now_ns() >= t->sh->deadline_ns)) {
            return false;
        }
        uint64_t now = kb_now_ns();
        if (now >= at) {
            return true;
        }
        uint64_t nap = at - now < 5000000ull ? at - now : 5000000ull;
        struct timespec ts = {0, (long)nap};
        nanosleep(&ts, NULL);
    }
}

/* The phase ends when its last thread does, not when the main thread notices. */
static void *thread_main(void *arg)
{
    struct kb_thread *t = arg;
    thread_body(t);
    t->end_ns = kb_now_ns();
    return NULL;
}

static void thread_body(struct kb_thread *t)
{
    struct kvssd_result r;

    if (!t->q) {
        struct kb_slot *s = &t->slots[0];
        while (claim_op(t)) {
            pick(t, s);
            if (!writer_pace(t, s)) {
                break;
            }
            s->start_ns = kb_now_ns();
            memset(&r, 0, sizeof(r));
            int rc = run_sync(t, s, &r);
            finish(t, s, rc, &r);
        }
        return;
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
        if (!claim_op(t)) {
            break;
        }
        pick(t, s);
        if (!writer_pace(t, s)) {
            break;
        }
        s->start_ns = kb_now_ns();
        if (s->op == KB_OP_ITERATE || s->op == KB_OP_RMW) {
            /* libkvssd's iterators are synchronous; a rmw's store waits for its read */
            memset(&r, 0, sizeof(r));
            int rc = s->op == KB_OP_RMW ? run_rmw(t, s, &r) : run_iterate(t, s, &r);
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
}

/* ---- a phase --------------------------------------------------------- */

static void progress_line(struct kb_shared *sh, unsigned ndev, const char *name, uint64_t t0,
                          bool final, bool tty)
{
    uint64_t done = 0, total = 0;
    for (unsigned d = 0; d < ndev; d++) {
        done += atomic_load(&sh[d].done_ops);
        total += sh[d].total_ops;
    }
    double el = (double)(kb_now_ns() - t0) / 1e9;
    double frac = total ? (double)done / (double)total
                        : (el / ((double)(sh[0].deadline_ns - t0) / 1e9));
    if (frac > 1) {
        frac = 1;
    }
    char bar[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++) {
        bar[i] = i < fill ? '#' : '.';
    }
    bar[30] = '\0';
    /* a terminal: one line redrawn; a log or a serial console: a line each time */
    fprintf(stderr, "%s%-5s [%s] %5.1f%% %llu ops %.0f ops/s %s", tty ? "\r" : "", name, bar,
            frac * 100, (unsigned long long)done, el > 0 ? (double)done / el : 0.0,
            final || !tty ? "\n" : "");
    fflush(stderr);
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The C0h log, when the page is ours (version) - a stock controller's C0h is something else. */
static bool read_stats(struct kvssd_dev *dev, struct kvssd_stats_log *log)
{
    return dev && kvssd_get_stats(dev, log, NULL) == 0 && log->version >= 1 &&
           log->version <= KVSSD_STATS_LOG_VERSION;
}

/*
 * One --report-interval period [@from, @to]: take and clear every thread's
 * period histograms, keep the summary in @out and print its line (stdout
 * in table mode, stderr under --json, whose stdout is the JSON alone).
 */
static void interval_take(const struct kb_config *c, struct kb_thread *th, unsigned nthreads,
                          struct kb_hist *acc, const char *name, uint64_t t0, uint64_t from,
                          uint64_t to, bool clear_bar, struct kb_result *out)
{
    struct kb_interval iv;
    struct kb_hist *all = calloc(1, sizeof(*all));
    if (!all) {
        return;
    }
    memset(acc, 0, KB_OP_COUNT * sizeof(*acc));
    for (unsigned i = 0; i < nthreads; i++) {
        pthread_mutex_lock(&th[i].iv_lock);
        for (int k = 0; k < KB_OP_COUNT; k++) {
            kb_hist_merge(&acc[k], &th[i].iv_hist[k]);
        }
        memset(th[i].iv_hist, 0, KB_OP_COUNT * sizeof(struct kb_hist));
        pthread_mutex_unlock(&th[i].iv_lock);
    }
    memset(&iv, 0, sizeof(iv));
    iv.start_s = (double)(from - t0) / 1e9;
    iv.end_s = (double)(to - t0) / 1e9;
    for (int k = 0; k < KB_OP_COUNT; k++) {
        kb_hist_merge(all, &acc[k]);
        kb_lat_summarize(c, &acc[k], &iv.op[k]);
    }
    kb_lat_summarize(c, all, &iv.all);
    iv.ops = all->count;
    free(all);
    char line[512];
    kb_interval_line(c, name, &iv, line, sizeof(line));
    if (clear_bar) {
        fprintf(stderr, "\r%-79s\r", "");
    }
    fprintf(c->json ? stderr : stdout, "%s\n", line);
    fflush(c->json ? stderr : stdout);
    if (out->nintervals >= KB_INTERVALS_MAX) {
        out->intervals_dropped++;
        return;
    }
    if (!(out->nintervals & (out->nintervals - 1))) { /* grow at 0, 1, 2, 4, ... */
        unsigned want = out->nintervals ? out->nintervals * 2 : 1;
        struct kb_interval *n = realloc(out->intervals, want * sizeof(*n));
        if (!n) {
            out->intervals_dropped++;
            return;
        }
        out->intervals = n;
    }
    out->intervals[out->nintervals++] = iv;
}

/* Whether a device's threads still have operations to issue (the main loop's condition). */
static bool phase_running(struct kb_shared *sh, unsigned ndev)
{
    for (unsigned d = 0; d < ndev; d++) {
        if (atomic_load(&sh[d].done_ops) < sh[d].total_ops ||
            (!sh[d].total_ops && !atomic_load(&sh[d].stop))) {
            return true;
        }
    }
    return false;
}

/* Add the counters and histograms of @from (a thread's, a device's) to @into. */
static void result_add(struct kb_result *into, const struct kb_result *from)
{
    into->ops += from->ops;
    for (int k = 0; k < KB_OP_COUNT; k++) {
        into->op_count[k] += from->op_count[k];
        into->not_found_op[k] += from->not_found_op[k];
        kb_hist_merge(&into->hist_op[k], &from->hist_op[k]);
    }
    into->commands += from->commands;
    into->errors += from->errors;
    into->not_found += from->not_found;
    into->mismatches += from->mismatches;
    into->user_bytes += from->user_bytes;
    into->written_bytes += from->written_bytes;
    kb_hist_merge(&into->hist, &from->hist);
}

int kb_run_phase(const struct kb_config *c, struct kb_engine *e, const struct kb_phase *ph,
                 const char *name, bool is_load, struct kb_live *live, struct kb_result *out)
{
    return kb_run_phase_devices(c, e, 1, ph, name, is_load, live, out, NULL);
}

int kb_run_phase_devices(const struct kb_config *c, struct kb_engine *e, unsigned ndev,
                         const struct kb_phase *ph, const char *name, bool is_load,
                         struct kb_live *live, struct kb_result *out, struct kb_result *agg)
{
    struct kb_shared *sh = calloc(ndev, sizeof(*sh));
    if (!sh) {
        fprintf(stderr, "kvbench: out of memory for %u devices\n", ndev);
        return 1;
    }
    double total = 0, acc = 0;
    for (int i = 0; i < KB_OP_COUNT; i++) {
        total += ph->mix[i];
    }
    bool async = c->engine == KB_ENGINE_ASYNC && e[0].ops == &kb_engine_kvssd;
    for (unsigned d = 0; d < ndev; d++) {
        struct kb_shared *s = &sh[d];
        s->cfg = c;
        s->eng = &e[d];
        s->dev = d;
        s->ndev = ndev;
        s->live = live ? &live[d] : NULL;
        s->dev_async = async ? kb_engine_kvssd_dev(e[d].st) : NULL;
        s->phase = ph;
        s->is_load = is_load;
        s->key_count = c->key_count;
        /* a duration without an explicit op count runs for the duration alone */
        if (is_load) {
            s->total_ops = ph->ops ? ph->ops : c->key_count;
        } else {
            s->total_ops = ph->duration_s > 0 && !ph->ops_set ? 0 : ph->ops;
        }
        kb_perm_init(&s->perm, c->key_count, c->seed);
        if ((ph->order == KB_ORDER_ZIPFIAN && !ph->zipfian_scrambled) ||
            (ph->order == KB_ORDER_LATEST && !is_load)) {
            kb_zipf_init(&s->zipf, c->key_count, ph->theta);
        }
        if (ph->order == KB_ORDER_ZIPFIAN && ph->zipfian_scrambled) {
            kb_szipf_init(&s->szipf, kb_szipf_itemcount(c, ph, is_load), ph->theta);
        }
        kb_scanlen_init(&s->scan, c->scan_dist, c->scan_min, c->iterate_entries);
        kb_window_init(&s->win, c->key_count, ph->window_keys, ph->window_step, c->seed);
        acc = 0;
        for (int i = 0; i < KB_OP_COUNT; i++) {
            acc += ph->mix[i];
            s->mix_cum[i] = acc / total;
        }
        struct kb_result *o = &out[d];
        memset(o, 0, sizeof(*o));
        o->phase = name;
        o->engine = e[d].ops->name;
        o->device_ops = e[d].ops->device_ops;
        o->device = ndev > 1 || c->ndevices ? c->devices[d] : c->device;
        if (c->reset_stats && e[d].stats) {
            kvssd_reset_stats(e[d].stats, NULL);
        }
        o->have_device = read_stats(e[d].stats, &o->before);
    }

    unsigned nslots = async ? c->queue_depth : 1;
    uint32_t cap = kb_size_max(&c->value_size);
    cap = cap < 4096 ? 4096 : (cap + 4095) & ~4095u;
    /* run.writer: one more thread per device, after its readers, that only updates */
    unsigned nper = c->threads + (!is_load && ph->writer ? 1 : 0);
    unsigned nthreads = nper * ndev;
    bool intervals = c->report_interval_s > 0;
    struct kb_thread *th = calloc(nthreads, sizeof(*th));
    struct kb_hist *iv_acc = intervals ? calloc(KB_OP_COUNT, sizeof(*iv_acc)) : NULL;
    if (!th || (intervals && !iv_acc)) {
        fprintf(stderr, "kvbench: out of memory for %u threads\n", nthreads);
        free(th);
        free(iv_acc);
        free(sh);
        return 1;
    }
    int rc = 0;
    for (unsigned n = 0; n < nthreads; n++) {
        unsigned d = n / nper, i = n % nper; /* thread i of device d */
        struct kb_shared *s = &sh[d];
        th[n].sh = s;
        th[n].id = i;
        th[n].writer = i >= c->threads;
        th[n].latest = s->zipf;
        /* thread i of every device draws the same stream: each device the same workload */
        kb_rng_seed(&th[n].rng, c->seed * 1000003u + i + (is_load ? 0 : 0x5eed));
        th[n].nslots = nslots;
        th[n].quota = s->total_ops / c->threads + (i < s->total_ops % c->threads ? 1 : 0);
        th[n].slots = calloc(nslots, sizeof(struct kb_slot));
        pthread_mutex_init(&th[n].iv_lock, NULL);
        if (intervals) {
            th[n].iv_hist = calloc(KB_OP_COUNT, sizeof(struct kb_hist));
        }
        if (!th[n].slots || (intervals && !th[n].iv_hist)) {
            abort(); /* a few KiB per thread */
        }
        for (unsigned j = 0; j < nslots; j++) {
            th[n].slots[j].t = &th[n];
            th[n].slots[j].value_cap = cap;
            if (posix_memalign((void **)&th[n].slots[j].value, 4096, cap)) {
                abort();
            }
        }
        if (async) {
            int qrc = kvssd_queue_create_flags(s->dev_async, c->queue_depth,
                                               c->poll ? KVSSD_QUEUE_POLLED : 0, &th[n].q);
            if (qrc) {
                fprintf(stderr, "kvbench: cannot create an io_uring of depth %u: %s (%s)\n",
                        c->queue_depth, kvssd_strerror(qrc), strerror(errno));
                rc = 1;
            }
        }
    }
    /* an interval line per device names it: "run dev1" (the phase's name with one device) */
    char(*iv_name)[32] = calloc(ndev, sizeof(*iv_name));
    if (!iv_name) {
        abort();
    }
    for (unsigned d = 0; d < ndev; d++) {
        snprintf(iv_name[d], sizeof(iv_name[d]), ndev > 1 ? "%s dev%u" : "%s", name, d);
    }
    bool tty = isatty(2);
    bool progress = c->progress == 1 || (c->progress == -1 && tty);
    /* a terminal redraws one line 5 times a second; a log gets a line every 2 s */
    uint64_t progress_ns = tty ? 200000000ull : 2000000000ull;
    uint64_t interval_ns = (uint64_t)(c->report_interval_s * 1e9);
    double cpu0 = cpu_seconds();
    uint64_t t0 = kb_now_ns();
    for (unsigned d = 0; d < ndev; d++) {
        if (ph->duration_s > 0 && !is_load) {
            sh[d].deadline_ns = t0 + (uint64_t)(ph->duration_s * 1e9);
        }
    }
    uint64_t *t_end = calloc(ndev, sizeof(*t_end));
    if (!t_end) {
        abort();
    }
    for (unsigned n = 0; n < nthreads; n++) {
        kb_rate_init(&th[n].rate, th[n].writer ? c->write_rate_bytes_per_s : 0, t0);
    }
    for (unsigned n = 0; !rc && n < nthreads; n++) {
        pthread_create(&th[n].tid, NULL, thread_main, &th[n]);
    }
    if (!rc) {
        uint64_t iv_start = t0, next_iv = t0 + interval_ns;
        uint64_t next_progress = tty ? t0 : t0 + progress_ns; /* a log: no 0% line */
        while ((progress || intervals) && phase_running(sh, ndev)) {
            uint64_t now = kb_now_ns();
            if (progress && now >= next_progress) {
                progress_line(sh, ndev, name, t0, false, tty);
                next_progress = now + progress_ns;
            }
            if (intervals && now >= next_iv) {
                for (unsigned d = 0; d < ndev; d++) {
                    interval_take(c, &th[d * nper], nper, iv_acc, iv_name[d], t0, iv_start, now,
                                  progress && tty && !d, &out[d]);
                }
                iv_start = now;
                next_iv += interval_ns;
                if (next_iv <= now) {
                    next_iv = now + interval_ns;
                }
            }
            uint64_t wake = progress ? next_progress : UINT64_MAX;
            if (intervals && next_iv < wake) {
                wake = next_iv;
            }
            now = kb_now_ns();
            uint64_t nap = wake > now ? wake - now : 0;
            if (nap > 5000000ull) {
                nap = 5000000ull; /* notice the end of the phase within 5 ms */
            }
            struct timespec ts = {(time_t)(nap / 1000000000ull), (long)(nap % 1000000000ull)};
            nanosleep(&ts, NULL);
            bool stopped = true;
            for (unsigned d = 0; d < ndev; d++) {
                stopped &= atomic_load(&sh[d].stop);
            }
            if (stopped) {
                break;
            }
        }
        for (unsigned n = 0; n < nthreads; n++) {
            if (!th[n].writer) {
                pthread_join(th[n].tid, NULL);
            }
        }
        /* the readers are done: the writers stop at their next operation */
        for (unsigned d = 0; d < ndev; d++) {
            atomic_store(&sh[d].stop, true);
        }
        for (unsigned n = 0; n < nthreads; n++) {
            if (th[n].writer) {
                pthread_join(th[n].tid, NULL);
            }
        }
        for (unsigned n = 0; n < nthreads; n++) {
            unsigned d = n / nper;
            t_end[d] = th[n].end_ns > t_end[d] ? th[n].end_ns : t_end[d];
        }
        if (progress) {
            progress_line(sh, ndev, name, t0, true, tty);
        }
        for (unsigned d = 0; intervals && d < ndev; d++) {
            uint64_t te = t_end[d] > t0 ? t_end[d] : t0;
            if (te > iv_start || !out[d].nintervals) {
                interval_take(c, &th[d * nper], nper, iv_acc, iv_name[d], t0, iv_start,
                              te > iv_start ? te : iv_start, false, &out[d]);
            }
        }
    }
    free(iv_acc);
    free(iv_name);
    /* what the engine acknowledged reaches the device inside the phase (and its counters) */
    for (unsigned d = 0; d < ndev; d++) {
        uint64_t ts = kb_now_ns();
        if (!rc && e[d].ops->sync && e[d].ops->sync(e[d].st)) {
            const char *why = kb_engine_error();
            fprintf(stderr, "kvbench: %s: the closing sync of %s failed%s%s\n", e[d].ops->name,
                    out[d].device, why[0] ? ": " : "", why);
            out[d].errors++;
        }
        uint64_t t1 = kb_now_ns();
        out[d].sync_s = (double)(t1 - ts) / 1e9;
        /* the operations (to the device's last thread's end) and its closing sync */
        out[d].elapsed_s = (double)((rc || t_end[d] < t0 ? ts : t_end[d]) - t0) / 1e9 +
                           out[d].sync_s;
    }
    uint64_t t_all = kb_now_ns();
    double cpu = cpu_seconds() - cpu0;
    for (unsigned n = 0; n < nthreads; n++) {
        unsigned d = n / nper;
        result_add(&out[d], &th[n].res);
        kvssd_queue_destroy(th[n].q);
        for (unsigned j = 0; j < nslots; j++) {
            free(th[n].slots[j].value);
        }
        free(th[n].slots);
        free(th[n].iv_hist);
        pthread_mutex_destroy(&th[n].iv_lock);
    }
    free(th);
    free(t_end);
    for (unsigned d = 0; d < ndev; d++) {
        /* the process's CPU: with several devices, every device's threads together */
        out[d].cpu_s = cpu;
        if (out[d].have_device) {
            out[d].have_device = read_stats(e[d].stats, &out[d].after);
        }
        out[d].live_user_bytes = kb_live_bytes(live ? &live[d] : NULL);
        out[d].footprint_bytes = e[d].ops->footprint ? e[d].ops->footprint(e[d].st) : -1;
    }
    if (agg) {
        /* all devices: their sums, from the phase's start to the last device's closing sync */
        memset(agg, 0, sizeof(*agg));
        agg->phase = name;
        agg->engine = e[0].ops->name;
        agg->device_ops = e[0].ops->device_ops;
        agg->elapsed_s = (double)(t_all - t0) / 1e9;
        agg->cpu_s = cpu;
        agg->live_user_bytes = 0;
        agg->footprint_bytes = -1;
        for (unsigned d = 0; d < ndev; d++) {
            result_add(agg, &out[d]);
            agg->sync_s += out[d].sync_s;
            agg->live_user_bytes = out[d].live_user_bytes < 0 || agg->live_user_bytes < 0
                                       ? -1
                                       : agg->live_user_bytes + out[d].live_user_bytes;
        }
    }
    free(sh);
    return rc;
}

int kb_live_init(struct kb_live *l, const struct kb_config *c)
{
    memset(l, 0, sizeof(*l));
    uint64_t n = c->key_count;
    if (c->run.enabled && c->run.mix[KB_OP_INSERT] > 0) {
        /* a run by duration: room for 4 x key_count (at least 2^20) new keys */
        uint64_t extra = c->key_count * 4 > (1u << 20) ? c->key_count * 4 : (1u << 20);
        n += c->run.ops ? c->run.ops : extra;
    }
    if (n > KB_LIVE_MAX) {
        n = KB_LIVE_MAX;
    }
    l->len = calloc(n, sizeof(l->len[0]));
    if (!l->len) {
        return -1;
    }
    l->n = n;
    return 0;
}

void kb_live_free(struct kb_live *l)
{
    free(l->len);
    l->len = NULL;
}

int64_t kb_live_bytes(struct kb_live *l)
{
    if (!l || !l->len || atomic_load(&l->overflow)) {
        return -1;
    }
    int64_t sum = 0;
    for (uint64_t i = 0; i < l->n; i++) {
        uint32_t v = atomic_load_explicit(&l->len[i], memory_order_relaxed);
        sum += v ? (int64_t)v - 1 : 0;
    }
    return sum;
}
