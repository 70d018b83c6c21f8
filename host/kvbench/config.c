/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench configuration: defaults, presets, the INI file (glib GKeyFile)
 * and single settings (command-line flags map onto the same group/key
 * names). Every refusal is a sentence naming the value and the range.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bench/units.h>
#include <glib.h>

#include "kvbench.h"

const char *const kb_op_names[KB_OP_COUNT] = {"insert", "update",  "read", "delete",
                                              "exist",  "iterate", "rmw"};

const char *const kb_store_names[KB_STORE_COUNT] = {"kvssd", "rocksdb", "rawhash"};

static const char *const order_names[KB_ORDER_COUNT] = {"sequential", "uniform", "zipfian",
                                                        "latest", "window"};

int kb_order_parse(const char *s, enum kb_order *o)
{
    for (int i = 0; i < KB_ORDER_COUNT; i++) {
        if (!strcmp(s, order_names[i])) {
            *o = (enum kb_order)i;
            return 0;
        }
    }
    return -1;
}

const char *kb_order_name(enum kb_order o)
{
    return (unsigned)o < KB_ORDER_COUNT ? order_names[o] : "unknown";
}

static void size_dist(struct kb_size_dist *d, const char *spec, uint32_t lo, uint32_t hi)
{
    char err[256];
    if (kb_size_parse(spec, lo, hi, "size", d, err, sizeof(err))) {
        abort(); /* presets are constants: a parse failure is a bug here */
    }
}

void kb_config_default(struct kb_config *c)
{
    memset(c, 0, sizeof(*c));
    c->seed = 1;
    c->threads = 1;
    c->queue_depth = 1;
    c->engine = KB_ENGINE_SYNC;
    c->mode = KVSSD_XFER_ADAPTIVE;
    c->alpha = -1;
    c->beta = -1;
    c->key_count = 100000;
    size_dist(&c->key_size, "16", 1, 255);
    size_dist(&c->value_size, "4096", 0, KVSSD_VALUE_MAX);
    c->load.enabled = true;
    c->load.order = KB_ORDER_SEQUENTIAL;
    c->load.theta = 0.99;
    c->load.zipfian_scrambled = true;
    c->load.mix[KB_OP_INSERT] = 1;
    c->run.enabled = true;
    c->run.ops = 100000;
    c->run.order = KB_ORDER_UNIFORM;
    c->run.theta = 0.99;
    c->run.zipfian_scrambled = true;
    c->run.mix[KB_OP_READ] = 50;
    c->run.mix[KB_OP_UPDATE] = 50;
    c->iterate_entries = 100;
    c->scan_min = 1;
    c->scan_dist = KB_SCAN_FIXED;
    c->verify = true;
    c->reset_stats = true;
    c->progress = -1;
    static const double pct[] = {50, 90, 99, 99.9, 99.99};
    c->npercentiles = 5;
    memcpy(c->percentiles, pct, sizeof(pct));
    c->stores[0] = KB_STORE_KVSSD;
    c->nstores = 1;
    /*
     * RocksDB as db_bench runs it by default, except: compression off (the
     * values are random bytes, incompressible, and the KV-SSD does not
     * compress: it would cost CPU for nothing) and direct I/O on (the guest's
     * page cache would otherwise serve reads the other engines take from the
     * device; the block cache is then the one cache, sized explicitly).
     */
    snprintf(c->rocksdb.dir, sizeof(c->rocksdb.dir), "%s", "/mnt/nvm/kvbench-rocksdb");
    c->rocksdb.wal = true;
    c->rocksdb.sync = false;
    c->rocksdb.direct_io = true;
    c->rocksdb.block_cache_bytes = 8ull << 20;
    c->rocksdb.compression = 0;
    c->rocksdb.write_buffer_bytes = 64ull << 20;
    /* Aerospike's defaults: 1 MiB write blocks, defrag-lwm-pct 50, no commit-to-device */
    c->rawhash.write_block_bytes = 1u << 20;
    c->rawhash.defrag_lwm_pct = 50;
    c->calibrate_samples = 200;
    snprintf(c->calibrate_output, sizeof(c->calibrate_output), "%s", KVSSD_DEFAULT_CONFIG_PATH);
}

/*
 * BandSlim's write workloads were called A-D and M before YCSB's core
 * workloads joined (whose a-d users would assume): the old names still
 * work, with a notice on stderr.
 */
static const struct {
    const char *old, *now;
} preset_renamed[] = {
    {"A", "bandslim-a"}, {"B", "bandslim-b"}, {"C", "bandslim-c"},
    {"D", "bandslim-d"}, {"M", "bandslim-m"},
};

const char *kb_preset_canonical(const char *name)
{
    for (size_t i = 0; i < sizeof(preset_renamed) / sizeof(preset_renamed[0]); i++) {
        if (!strcmp(name, preset_renamed[i].old)) {
            return preset_renamed[i].now;
        }
    }
    return name;
}

static void mix_only(double mix[KB_OP_COUNT], enum kb_op op)
{
    for (int i = 0; i < KB_OP_COUNT; i++) {
        mix[i] = 0;
    }
    mix[op] = 1;
}

/* A run phase of @ops operations (a --duration still overrides them) in @order. */
static void run_phase(struct kb_phase *p, uint64_t ops, enum kb_order order)
{
    p->enabled = true;
    p->ops = ops;
    p->ops_set = false;
    p->duration_s = 0;
    p->order = order;
    p->theta = 0.99;
    p->zipfian_scrambled = true;
    p->writer = false;
}

static void preset_bandslim(struct kb_config *c, int idx)
{
    /* BandSlim §4: write-only, 1 M PUTs, 4-byte keys */
    c->key_count = 1000000;
    size_dist(&c->key_size, "4", 1, 255);
    c->load.enabled = true;
    c->load.ops = 0; /* = key_count */
    c->load.order = idx == 0 ? KB_ORDER_SEQUENTIAL : KB_ORDER_UNIFORM;
    c->run.enabled = false;
    static const char *const values[] = {
        "32", "weighted:8:9,2048:1", "weighted:8:1,2048:9",
        "weighted:8:1,16:1,32:1,64:1,128:1,256:1,512:1,1024:1,2048:1", "mixgraph:max=1024"};
    size_dist(&c->value_size, values[idx], 0, KVSSD_VALUE_MAX);
}

static void preset_char(struct kb_config *c, int idx)
{
    /* the characterization paper: 16 B keys, 4 KiB values */
    static const enum kb_order orders[] = {KB_ORDER_SEQUENTIAL, KB_ORDER_UNIFORM, KB_ORDER_ZIPFIAN};
    int kind = idx / 3, o = idx % 3;
    c->key_count = 100000;
    size_dist(&c->key_size, "16", 1, 255);
    size_dist(&c->value_size, "4096", 0, KVSSD_VALUE_MAX);
    c->load.enabled = true;
    c->load.ops = 0;
    c->load.theta = 0.99;
    c->run.theta = 0.99;
    if (kind == 0) {
        c->load.order = orders[o];
        c->run.enabled = false;
    } else {
        c->load.order = KB_ORDER_SEQUENTIAL;
        run_phase(&c->run, c->key_count, orders[o]);
        mix_only(c->run.mix, kind == 1 ? KB_OP_UPDATE : KB_OP_READ);
    }
}

/*
 * YCSB's core workloads (workloads/workload[a-f] of YCSB 0.17): a load of
 * recordcount records in hashed (here: uniform permutation) order, then the
 * workload's operation mix. A record is fieldcount 10 x fieldlength 100 =
 * 1000 bytes, its key "user" + a number (24 bytes here). recordcount and
 * operationcount are 100000 (YCSB's files say 1000, too few to measure).
 */
static void preset_ycsb(struct kb_config *c, int w)
{
    c->key_count = 100000;
    size_dist(&c->key_size, "24", 1, 255);
    size_dist(&c->value_size, "1000", 0, KVSSD_VALUE_MAX);
    c->load.enabled = true;
    c->load.ops = 0;
    c->load.order = KB_ORDER_UNIFORM;
    run_phase(&c->run, 100000, w == 3 ? KB_ORDER_LATEST : KB_ORDER_ZIPFIAN);
    double *m = c->run.mix;
    mix_only(m, KB_OP_READ);
    switch (w) {
    case 0: /* a */
        m[KB_OP_READ] = 50;
        m[KB_OP_UPDATE] = 50;
        break;
    case 1: /* b */
        m[KB_OP_READ] = 95;
        m[KB_OP_UPDATE] = 5;
        break;
    case 2: /* c */
        m[KB_OP_READ] = 100;
        break;
    case 3: /* d */
        m[KB_OP_READ] = 95;
        m[KB_OP_INSERT] = 5;
        break;
    case 4: /* e: scanlengthdistribution uniform, minscanlength 1, maxscanlength 100 */
        m[KB_OP_READ] = 0;
        m[KB_OP_ITERATE] = 95;
        m[KB_OP_INSERT] = 5;
        c->scan_dist = KB_SCAN_UNIFORM;
        c->scan_min = 1;
        c->iterate_entries = 100;
        break;
    default: /* f */
        m[KB_OP_READ] = 50;
        m[KB_OP_RMW] = 50;
        break;
    }
}

/* db_bench's defaults: --num 1000000, --key_size 16, --value_size 100. */
static void preset_dbbench(struct kb_config *c, int b)
{
    c->key_count = 1000000;
    size_dist(&c->key_size, "16", 1, 255);
    size_dist(&c->value_size, "100", 0, KVSSD_VALUE_MAX);
    c->load.enabled = true;
    c->load.ops = 0;
    c->load.order = KB_ORDER_SEQUENTIAL;
    run_phase(&c->run, c->key_count, KB_ORDER_UNIFORM);
    switch (b) {
    case 0: /* fillseq */
        c->run.enabled = false;
        break;
    case 1: /* fillrandom: key = rand % num, so some keys twice and some never */
        c->load.enabled = false;
        mix_only(c->run.mix, KB_OP_UPDATE);
        break;
    case 2: /* readrandom */
        mix_only(c->run.mix, KB_OP_READ);
        break;
    case 3: /* overwrite */
        mix_only(c->run.mix, KB_OP_UPDATE);
        break;
    default: /* readwhilewriting */
        mix_only(c->run.mix, KB_OP_READ);
        c->run.writer = true;
        break;
    }
}

/*
 * The presets, once, in --list-presets order: the name, what it sets (the
 * --list-presets line), the function that sets it and its argument.
 * --list-presets, --help's list and the unknown-preset sentence come from
 * here; the meson test man_kvbench_options fails when the man page,
 * docs/kvbench.md's table or docs/host.md name other presets.
 */
const struct kb_preset kb_presets[] = {
    {"bandslim-a",
     "BandSlim A: fillseq, 1M PUTs, 4-byte keys, fixed 32-byte values (--value-size to change)",
     preset_bandslim, 0},
    {"bandslim-b", "BandSlim B: 1M PUTs of random keys, 8 B and 2 KiB values 9:1", preset_bandslim,
     1},
    {"bandslim-c", "BandSlim C: 1M PUTs of random keys, 8 B and 2 KiB values 1:9", preset_bandslim,
     2},
    {"bandslim-d", "BandSlim D: 1M PUTs of random keys, nine sizes 8 B..2 KiB in equal shares",
     preset_bandslim, 3},
    {"bandslim-m", "BandSlim M: 1M PUTs of random keys, mixgraph values <= 1 KiB (~70% under 35 B)",
     preset_bandslim, 4},
    {"char-insert-seq", "characterization: sequential insert of 16 B keys / 4 KiB values",
     preset_char, 0},
    {"char-insert-uniform",
     "characterization: uniform (random order) insert of 16 B keys / 4 KiB values", preset_char, 1},
    {"char-insert-zipfian",
     "characterization: zipfian(0.99) insert (hot keys overwritten) of 16 B keys / 4 KiB values",
     preset_char, 2},
    {"char-update-seq", "characterization: load, then sequential updates", preset_char, 3},
    {"char-update-uniform", "characterization: load, then uniform updates", preset_char, 4},
    {"char-update-zipfian", "characterization: load, then zipfian(0.99) updates", preset_char, 5},
    {"char-read-seq", "characterization: load, then sequential reads", preset_char, 6},
    {"char-read-uniform", "characterization: load, then uniform reads", preset_char, 7},
    {"char-read-zipfian", "characterization: load, then zipfian(0.99) reads", preset_char, 8},
    {"ycsb-a", "YCSB workload a: update heavy, read 50% update 50%, zipfian(0.99), 1000 B values",
     preset_ycsb, 0},
    {"ycsb-b", "YCSB workload b: read mostly, read 95% update 5%, zipfian(0.99)", preset_ycsb, 1},
    {"ycsb-c", "YCSB workload c: read only, zipfian(0.99)", preset_ycsb, 2},
    {"ycsb-d", "YCSB workload d: read latest, read 95% insert 5%, latest(0.99)", preset_ycsb, 3},
    {"ycsb-e",
     "YCSB workload e: short scans, scan (iterate) 95% insert 5%, zipfian(0.99), 1-100 keys "
     "(uniform)",
     preset_ycsb, 4},
    {"ycsb-f", "YCSB workload f: read-modify-write, read 50% rmw 50%, zipfian(0.99)", preset_ycsb,
     5},
    {"fillseq", "db_bench fillseq: 1M PUTs in key order, 16 B keys, 100 B values", preset_dbbench,
     0},
    {"fillrandom",
     "db_bench fillrandom: 1M PUTs of uniformly drawn keys (repeats overwrite), no load phase",
     preset_dbbench, 1},
    {"readrandom", "db_bench readrandom: fillseq, then 1M reads of uniformly drawn keys",
     preset_dbbench, 2},
    {"overwrite", "db_bench overwrite: fillseq, then 1M updates of uniformly drawn keys",
     preset_dbbench, 3},
    {"readwhilewriting",
     "db_bench readwhilewriting: fillseq, then 1M uniform reads while one more thread updates",
     preset_dbbench, 4},
};

const size_t kb_preset_count = sizeof(kb_presets) / sizeof(kb_presets[0]);

/* "bandslim-a..bandslim-m, ..., fillseq, ...": each run of names sharing a "family-" prefix as
 * first..last. */
char *kb_preset_summary(void)
{
    GString *s = g_string_new(NULL);

    for (size_t i = 0; i < kb_preset_count;) {
        const char *dash = strchr(kb_presets[i].name, '-');
        size_t family = dash ? (size_t)(dash - kb_presets[i].name) + 1 : 0;
        size_t j = i + 1;

        while (family && j < kb_preset_count &&
               !strncmp(kb_presets[j].name, kb_presets[i].name, family)) {
            j++;
        }
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", kb_presets[i].name);
        if (j - i > 2) {
            g_string_append_printf(s, "..%s", kb_presets[j - 1].name);
        } else {
            j = i + 1;
        }
        i = j;
    }
    return g_string_free(s, FALSE);
}

int kb_preset_apply(struct kb_config *c, const char *name, char *err, size_t errlen)
{
    const char *now = kb_preset_canonical(name);
    const struct kb_preset *p = NULL;
    for (size_t i = 0; i < kb_preset_count; i++) {
        if (!strcmp(now, kb_presets[i].name)) {
            p = &kb_presets[i];
        }
    }
    if (!p) {
        size_t o = (size_t)snprintf(err, errlen, "preset is '%s'; it must be one of", name);
        for (size_t i = 0; i < kb_preset_count && o < errlen; i++) {
            o += (size_t)snprintf(err + o, errlen - o, " %s", kb_presets[i].name);
        }
        return -1;
    }
    if (now != name) {
        fprintf(stderr, "kvbench: preset \"%s\" is now called \"%s\" (the old name still works)\n",
                name, now);
    }
    snprintf(c->preset, sizeof(c->preset), "%s", now);
    /* what only some presets change starts from the defaults in every one */
    c->load.zipfian_scrambled = true;
    c->run.zipfian_scrambled = true;
    c->scan_dist = KB_SCAN_FIXED;
    c->scan_min = 1;
    c->iterate_entries = 100;
    p->apply(c, p->arg);
    return 0;
}

uint64_t kb_szipf_itemcount(const struct kb_config *c, const struct kb_phase *ph, bool is_load)
{
    /*
     * YCSB's CoreWorkload: insertcount + expectednewkeys, where
     * expectednewkeys = (int)(operationcount * insertproportion * 2.0)
     * ("2 is fudge factor"), so that the popular keys stay the same as the
     * inserts grow the key space. A phase by duration predicts none.
     */
    double total = 0;
    for (int i = 0; i < KB_OP_COUNT; i++) {
        total += ph->mix[i];
    }
    uint64_t expected = 0;
    if (!is_load && ph->ops && total > 0) {
        expected = (uint64_t)((double)ph->ops * (ph->mix[KB_OP_INSERT] / total) * 2.0);
    }
    return c->key_count + expected;
}

int kb_percentiles_parse(const char *spec, double *out, unsigned *n, char *err, size_t errlen)
{
    gchar **tok = g_strsplit(spec, ",", -1);
    double v[KB_PCT_MAX];
    unsigned k = 0;
    int rc = 0;
    for (int i = 0; tok[i] && !rc; i++) {
        char *end;
        const char *t = g_strstrip(tok[i]);
        double x = strtod(t, &end);
        if (k == KB_PCT_MAX) {
            snprintf(err, errlen, "percentiles is '%s'; it must name 1 to %d", spec, KB_PCT_MAX);
            rc = -1;
        } else if (!t[0] || *end || !(x > 0 && x <= 100)) {
            snprintf(err, errlen, "percentile is '%s'; it must be above 0 and at most 100", t);
            rc = -1;
        } else if (k && x <= v[k - 1]) {
            snprintf(err, errlen,
                     "percentile %g follows %g; list them in ascending order, each once", x,
                     v[k - 1]);
            rc = -1;
        } else {
            v[k++] = x;
        }
    }
    g_strfreev(tok);
    if (!rc && !k) {
        snprintf(err, errlen, "percentiles is '%s'; it must name 1 or more, e.g. 50,99,99.9", spec);
        rc = -1;
    }
    if (!rc) {
        memcpy(out, v, k * sizeof(v[0]));
        *n = k;
    }
    return rc;
}

int kb_mix_parse(const char *spec, double mix[KB_OP_COUNT], char *err, size_t errlen)
{
    double m[KB_OP_COUNT] = {0}, total = 0;
    char *dup = g_strdup(spec), *save = NULL;
    int rc = 0;

    for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int op = -1;
        if (eq) {
            *eq = '\0';
        }
        const char *name = g_strstrip(tok);
        for (int i = 0; i < KB_OP_COUNT; i++) {
            if (!strcmp(name, kb_op_names[i])) {
                op = i;
            }
        }
        if (!strcmp(name, "scan")) { /* YCSB's word for an iterate */
            op = KB_OP_ITERATE;
        }
        if (op < 0 || !eq) {
            snprintf(err, errlen,
                     "mix entry is '%s'; it must be OP=WEIGHT with OP one of insert, "
                     "update, read, delete, exist, iterate (or scan), rmw",
                     tok);
            rc = -1;
            break;
        }
        char *end;
        double w = strtod(eq + 1, &end);
        if (*end || end == eq + 1 || !(w >= 0) || w > 1e9) {
            snprintf(err, errlen, "mix weight of %s is '%s'; it must be from 0 to 1000000000",
                     kb_op_names[op], eq + 1);
            rc = -1;
            break;
        }
        m[op] = w;
        total += w;
    }
    g_free(dup);
    if (!rc && !(total > 0)) {
        snprintf(err, errlen, "mix is '%s'; it must give an operation a weight above 0", spec);
        rc = -1;
    }
    if (!rc) {
        memcpy(mix, m, sizeof(m));
    }
    return rc;
}

/*
 * A number through <bench/units.h>, as every tool reads one: a byte count
 * when @name says bytes (4k, 64Mi), else a count (1e6, 100k).
 */
static int parse_u64(const char *name, const char *v, uint64_t lo, uint64_t hi, uint64_t *out,
                     char *err, size_t errlen)
{
    bool bytes = strstr(name, "bytes") != NULL;
    uint64_t x;

    if (!units_u64(v, bytes ? UNITS_BYTES : UNITS_COUNT, &x) || x < lo || x > hi) {
        snprintf(err, errlen, "%s is '%s'; it must be from %llu to %llu%s", name, v,
                 (unsigned long long)lo, (unsigned long long)hi,
                 bytes ? " bytes (suffixes K, M, G: KiB, MiB, GiB)" : "");
        return -1;
    }
    *out = x;
    return 0;
}

/* A time through <bench/units.h>: 10, 10s, 500ms, 250us; @range words what is allowed. */
static int parse_seconds(const char *name, const char *v, double lo, double hi, double *out,
                         const char *range, char *err, size_t errlen)
{
    double x;

    if (!units_seconds(v, &x) || x < lo || x > hi) {
        snprintf(err, errlen, "%s is '%s'; it must be %s (suffixes s, ms, us)", name, v, range);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_double(const char *name, const char *v, double lo, double hi, bool open_lo,
                        bool open_hi, double *out, char *err, size_t errlen)
{
    char *end;
    double x = strtod(v, &end);
    if (*end || end == v || !isfinite(x) || (open_lo ? x <= lo : x < lo) ||
        (open_hi ? x >= hi : x > hi)) {
        snprintf(err, errlen, "%s is '%s'; it must be %s%g to %g%s", name, v,
                 open_lo ? "above " : "from ", lo, hi, open_hi ? " (exclusive)" : "");
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_bool(const char *name, const char *v, bool *out, char *err, size_t errlen)
{
    if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on")) {
        *out = true;
    } else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off")) {
        *out = false;
    } else {
        snprintf(err, errlen, "%s is '%s'; it must be true or false", name, v);
        return -1;
    }
    return 0;
}

static int set_phase(struct kb_phase *p, const char *group, const char *key, const char *v,
                     char *err, size_t errlen)
{
    char name[64];
    uint64_t u;
    snprintf(name, sizeof(name), "%s.%s", group, key);
    if (!strcmp(key, "enabled")) {
        return parse_bool(name, v, &p->enabled, err, errlen);
    }
    if (!strcmp(key, "ops")) {
        if (parse_u64(name, v, 0, 1ull << 40, &u, err, errlen)) {
            return -1;
        }
        p->ops = u;
        p->ops_set = true;
        return 0;
    }
    if (!strcmp(key, "duration_s")) {
        return parse_seconds(name, v, 0, 86400 * 7, &p->duration_s, "0 to 604800 seconds", err,
                             errlen);
    }
    if (!strcmp(key, "order")) {
        if (kb_order_parse(v, &p->order)) {
            snprintf(err, errlen,
                     "%s is '%s'; it must be sequential, uniform, zipfian, latest or "
                     "window",
                     name, v);
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "theta")) {
        return parse_double(name, v, 0, 1, true, true, &p->theta, err, errlen);
    }
    if (!strcmp(key, "mix")) {
        return kb_mix_parse(v, p->mix, err, errlen);
    }
    if (!strcmp(key, "window_keys")) {
        return parse_u64(name, v, 1, 1ull << 40, &p->window_keys, err, errlen);
    }
    if (!strcmp(key, "window_step")) {
        return parse_u64(name, v, 1, 1ull << 40, &p->window_step, err, errlen);
    }
    if (!strcmp(key, "writer")) {
        return parse_bool(name, v, &p->writer, err, errlen);
    }
    if (!strcmp(key, "zipfian_scrambled")) {
        return parse_bool(name, v, &p->zipfian_scrambled, err, errlen);
    }
    snprintf(err, errlen,
             "[%s] has no key \"%s\" (enabled, ops, duration_s, order, theta, zipfian_scrambled, "
             "mix, window_keys, window_step, writer)",
             group, key);
    return -1;
}

int kb_engines_parse(const char *spec, enum kb_store *stores, unsigned *n, char *err, size_t errlen)
{
    enum kb_store out[KB_STORE_COUNT];
    unsigned k = 0;
    if (!strcmp(spec, "all")) {
        for (int i = 0; i < KB_STORE_COUNT; i++) {
            stores[i] = (enum kb_store)i;
        }
        *n = KB_STORE_COUNT;
        return 0;
    }
    char *dup = g_strdup(spec), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < KB_STORE_COUNT; i++) {
            if (!strcmp(g_strstrip(tok), kb_store_names[i])) {
                found = i;
            }
        }
        bool dup_entry = false;
        for (unsigned j = 0; found >= 0 && j < k; j++) {
            dup_entry |= out[j] == (enum kb_store)found;
        }
        if (found < 0 || dup_entry) {
            snprintf(err, errlen,
                     "engine is '%s'%s; it must be kvssd, rocksdb, rawhash, a comma-separated list "
                     "of them (each once), all, or sync/async for kvssd's I/O path",
                     tok, found < 0 ? "" : " (listed twice)");
            rc = -1;
            break;
        }
        out[k++] = (enum kb_store)found;
    }
    g_free(dup);
    if (!rc && !k) {
        snprintf(err, errlen, "engine is '%s'; it must name an engine", spec);
        rc = -1;
    }
    if (!rc) {
        memcpy(stores, out, k * sizeof(out[0]));
        *n = k;
    }
    return rc;
}

static const char *const compression_names[] = {"none", "snappy", "zlib",   "bzip2",
                                                "lz4",  "lz4hc",  "xpress", "zstd"};

static int set_rocksdb(struct kb_rocksdb_opts *o, const char *key, const char *v, char *err,
                       size_t errlen)
{
    uint64_t u;
    if (!strcmp(key, "dir")) {
        if (!v[0] || strlen(v) >= sizeof(o->dir)) {
            snprintf(err, errlen, "rocksdb.dir is '%s'; it must be a path of 1 to %zu bytes", v,
                     sizeof(o->dir) - 1);
            return -1;
        }
        snprintf(o->dir, sizeof(o->dir), "%s", v);
        return 0;
    }
    if (!strcmp(key, "wal")) {
        return parse_bool("rocksdb.wal", v, &o->wal, err, errlen);
    }
    if (!strcmp(key, "sync")) {
        return parse_bool("rocksdb.sync", v, &o->sync, err, errlen);
    }
    if (!strcmp(key, "direct_io")) {
        return parse_bool("rocksdb.direct_io", v, &o->direct_io, err, errlen);
    }
    if (!strcmp(key, "keep")) {
        return parse_bool("rocksdb.keep", v, &o->keep, err, errlen);
    }
    if (!strcmp(key, "block_cache_bytes")) {
        return parse_u64("rocksdb.block_cache_bytes", v, 0, 1ull << 40, &o->block_cache_bytes, err,
                         errlen);
    }
    if (!strcmp(key, "write_buffer_bytes")) {
        if (parse_u64("rocksdb.write_buffer_bytes", v, 1u << 16, 1ull << 34, &u, err, errlen)) {
            return -1;
        }
        o->write_buffer_bytes = u;
        return 0;
    }
    if (!strcmp(key, "compression")) {
        for (int i = 0; i < 8; i++) {
            if (!strcmp(v, compression_names[i])) {
                o->compression = i;
                return 0;
            }
        }
        snprintf(err, errlen,
                 "rocksdb.compression is '%s'; it must be none, snappy, zlib, bzip2, lz4, "
                 "lz4hc, xpress or zstd",
                 v);
        return -1;
    }
    snprintf(err, errlen,
             "[rocksdb] has no key \"%s\" (dir, wal, sync, direct_io, block_cache_bytes, "
             "write_buffer_bytes, compression, keep)",
             key);
    return -1;
}

const char *kb_compression_name(int c)
{
    return c >= 0 && c < 8 ? compression_names[c] : "unknown";
}

static int set_rawhash(struct kb_rawhash_opts *o, const char *key, const char *v, char *err,
                       size_t errlen)
{
    uint64_t u;
    if (!strcmp(key, "device")) {
        if (!v[0] || strlen(v) >= sizeof(o->dev)) {
            snprintf(err, errlen, "rawhash.device is '%s'; it must be a path of 1 to %zu bytes", v,
                     sizeof(o->dev) - 1);
            return -1;
        }
        snprintf(o->dev, sizeof(o->dev), "%s", v);
        return 0;
    }
    if (!strcmp(key, "size_bytes")) {
        return parse_u64("rawhash.size_bytes", v, 0, 1ull << 50, &o->size_bytes, err, errlen);
    }
    if (!strcmp(key, "write_block_bytes")) {
        if (parse_u64("rawhash.write_block_bytes", v, 128u << 10, 8u << 20, &u, err, errlen)) {
            return -1;
        }
        if (u & (u - 1)) {
            snprintf(err, errlen,
                     "rawhash.write_block_bytes is '%s'; it must be a power of two from 131072 to "
                     "8388608",
                     v);
            return -1;
        }
        o->write_block_bytes = (uint32_t)u;
        return 0;
    }
    if (!strcmp(key, "defrag_lwm_pct")) {
        if (parse_u64("rawhash.defrag_lwm_pct", v, 1, 99, &u, err, errlen)) {
            return -1;
        }
        o->defrag_lwm_pct = (uint32_t)u;
        return 0;
    }
    if (!strcmp(key, "commit_to_device")) {
        return parse_bool("rawhash.commit_to_device", v, &o->commit_to_device, err, errlen);
    }
    if (!strcmp(key, "trim")) {
        return parse_bool("rawhash.trim", v, &o->trim, err, errlen);
    }
    if (!strcmp(key, "keep")) {
        return parse_bool("rawhash.keep", v, &o->keep, err, errlen);
    }
    snprintf(err, errlen,
             "[rawhash] has no key \"%s\" (device, size_bytes, write_block_bytes, "
             "defrag_lwm_pct, commit_to_device, trim, keep)",
             key);
    return -1;
}

int kb_config_add_device(struct kb_config *c, const char *v, char *err, size_t errlen)
{
    gchar **paths = g_strsplit(v, ";", -1);
    int rc = 0;
    for (guint i = 0; paths[i] && !rc; i++) {
        const char *p = g_strstrip(paths[i]);
        if (!p[0] && !paths[i + 1] && i) {
            break; /* "a;b;": GKeyFile's lists may end with the separator */
        }
        if (!p[0] || strlen(p) >= KB_DEVICE_PATH_MAX) {
            snprintf(err, errlen, "device is '%s'; it must be a path of 1 to %d bytes", p,
                     KB_DEVICE_PATH_MAX - 1);
            rc = -1;
        } else if (c->ndevices >= KB_DEVICES_MAX) {
            snprintf(err, errlen,
                     "device is '%s'; it must be one of at most %d devices (--device given more "
                     "than once, or a ';' list)",
                     p, KB_DEVICES_MAX);
            rc = -1;
        } else {
            for (unsigned d = 0; d < c->ndevices && !rc; d++) {
                if (!strcmp(c->devices[d], p)) {
                    snprintf(err, errlen,
                             "device is '%s'; it must be given once (each device holds its own "
                             "keys)",
                             p);
                    rc = -1;
                }
            }
            if (!rc) {
                snprintf(c->devices[c->ndevices++], KB_DEVICE_PATH_MAX, "%s", p);
            }
        }
    }
    g_strfreev(paths);
    if (c->ndevices) {
        snprintf(c->device, sizeof(c->device), "%s", c->devices[0]);
    }
    return rc;
}

int kb_config_set(struct kb_config *c, const char *group, const char *key, const char *v, char *err,
                  size_t errlen)
{
    uint64_t u;
    if (!strcmp(group, "keys") || !strcmp(group, "values")) {
        bool keys = group[0] == 'k';
        if (strcmp(key, "size")) {
            snprintf(err, errlen, "[%s] has no key \"%s\" (size)", group, key);
            return -1;
        }
        return kb_size_parse(v, keys ? 1 : 0, keys ? 255 : KVSSD_VALUE_MAX,
                             keys ? "key size" : "value size", keys ? &c->key_size : &c->value_size,
                             err, errlen);
    }
    if (!strcmp(group, "load")) {
        return set_phase(&c->load, group, key, v, err, errlen);
    }
    if (!strcmp(group, "run")) {
        return set_phase(&c->run, group, key, v, err, errlen);
    }
    if (!strcmp(group, "calibrate")) {
        if (!strcmp(key, "samples")) {
            if (parse_u64("calibrate.samples", v, 1, 1000000, &u, err, errlen)) {
                return -1;
            }
            c->calibrate_samples = (uint32_t)u;
            return 0;
        }
        if (!strcmp(key, "output")) {
            snprintf(c->calibrate_output, sizeof(c->calibrate_output), "%s", v);
            return 0;
        }
        snprintf(err, errlen, "[calibrate] has no key \"%s\" (samples, output)", key);
        return -1;
    }
    if (!strcmp(group, "rocksdb")) {
        return set_rocksdb(&c->rocksdb, key, v, err, errlen);
    }
    if (!strcmp(group, "rawhash")) {
        return set_rawhash(&c->rawhash, key, v, err, errlen);
    }
    if (strcmp(group, "benchmark")) {
        snprintf(err, errlen,
                 "unknown group [%s]; groups are benchmark, keys, values, load, run, "
                 "calibrate, rocksdb, rawhash",
                 group);
        return -1;
    }
    if (!strcmp(key, "device")) {
        c->ndevices = 0;
        c->device[0] = '\0';
        return kb_config_add_device(c, v, err, errlen);
    } else if (!strcmp(key, "preset")) {
        return kb_preset_apply(c, v, err, errlen);
    } else if (!strcmp(key, "seed")) {
        return parse_u64("seed", v, 0, UINT64_MAX, &c->seed, err, errlen);
    } else if (!strcmp(key, "threads")) {
        if (parse_u64("threads", v, 1, 64, &u, err, errlen)) {
            return -1;
        }
        c->threads = (unsigned)u;
    } else if (!strcmp(key, "queue_depth")) {
        if (parse_u64("queue_depth", v, 1, KVSSD_QUEUE_DEPTH_MAX, &u, err, errlen)) {
            return -1;
        }
        c->queue_depth = (unsigned)u;
    } else if (!strcmp(key, "engine") && (!strcmp(v, "sync") || !strcmp(v, "async"))) {
        /* the I/O path's old name: engine=sync|async still means io=... on kvssd */
        return kb_config_set(c, group, "io", v, err, errlen);
    } else if (!strcmp(key, "engine")) {
        return kb_engines_parse(v, c->stores, &c->nstores, err, errlen);
    } else if (!strcmp(key, "io")) {
        c->engine_explicit = true;
        if (!strcmp(v, "sync")) {
            c->engine = KB_ENGINE_SYNC;
        } else if (!strcmp(v, "async")) {
            c->engine = KB_ENGINE_ASYNC;
        } else {
            snprintf(err, errlen, "io is '%s'; it must be sync or async", v);
            return -1;
        }
    } else if (!strcmp(key, "poll")) {
        return parse_bool("poll", v, &c->poll, err, errlen);
    } else if (!strcmp(key, "nvm_ctrl")) {
        snprintf(c->nvm_ctrl, sizeof(c->nvm_ctrl), "%s", v);
    } else if (!strcmp(key, "transfer_mode")) {
        int m = kvssd_xfer_mode_parse(v);
        if (m < 0) {
            snprintf(err, errlen,
                     "transfer_mode is '%s'; it must be prp, inline, hybrid or "
                     "adaptive",
                     v);
            return -1;
        }
        c->mode = (enum kvssd_xfer_mode)m;
    } else if (!strcmp(key, "transfer_config")) {
        snprintf(c->xfer_config, sizeof(c->xfer_config), "%s", v);
    } else if (!strcmp(key, "alpha")) {
        return parse_double("alpha", v, 0, 1e6, false, false, &c->alpha, err, errlen);
    } else if (!strcmp(key, "beta")) {
        return parse_double("beta", v, 0, 1e6, false, false, &c->beta, err, errlen);
    } else if (!strcmp(key, "key_count")) {
        return parse_u64("key_count", v, 1, 1ull << 40, &c->key_count, err, errlen);
    } else if (!strcmp(key, "iterate_entries") || !strcmp(key, "max_scan_length")) {
        if (parse_u64(key, v, 1, 65536, &u, err, errlen)) {
            return -1;
        }
        c->iterate_entries = (uint32_t)u;
    } else if (!strcmp(key, "min_scan_length")) {
        if (parse_u64(key, v, 1, 65536, &u, err, errlen)) {
            return -1;
        }
        c->scan_min = (uint32_t)u;
    } else if (!strcmp(key, "scan_length_distribution")) {
        if (kb_scan_dist_parse(v, &c->scan_dist)) {
            snprintf(err, errlen,
                     "scan_length_distribution is '%s'; it must be uniform, zipfian or fixed", v);
            return -1;
        }
    } else if (!strcmp(key, "write_rate_limit_bytes_per_s")) {
        /* a refill of rate / 10 bytes every 100 ms must carry at least one byte */
        if (parse_u64(key, v, 0, KB_WRITE_RATE_MAX, &u, err, errlen) || (u > 0 && u < 10)) {
            snprintf(err, errlen,
                     "write_rate_limit_bytes_per_s is '%s'; it must be 0 "
                     "(unlimited) or 10 to %llu bytes per second",
                     v, (unsigned long long)KB_WRITE_RATE_MAX);
            return -1;
        }
        c->write_rate_bytes_per_s = u;
    } else if (!strcmp(key, "verify")) {
        return parse_bool("verify", v, &c->verify, err, errlen);
    } else if (!strcmp(key, "reset_stats")) {
        return parse_bool("reset_stats", v, &c->reset_stats, err, errlen);
    } else if (!strcmp(key, "json")) {
        return parse_bool("json", v, &c->json, err, errlen);
    } else if (!strcmp(key, "percentiles")) {
        return kb_percentiles_parse(v, c->percentiles, &c->npercentiles, err, errlen);
    } else if (!strcmp(key, "report_interval_s")) {
        static const char range[] = "0 (off) and 0.1 to 86400 seconds";
        double s;
        if (parse_seconds("report_interval_s", v, 0, 86400, &s, range, err, errlen) ||
            (s > 0 && s < 0.1 &&
             parse_seconds("report_interval_s", v, 0.1, 86400, &s, range, err, errlen))) {
            return -1;
        }
        c->report_interval_s = s;
    } else if (!strcmp(key, "progress")) {
        if (!strcmp(v, "auto")) {
            c->progress = -1;
        } else {
            bool b;
            if (parse_bool("progress", v, &b, err, errlen)) {
                return -1;
            }
            c->progress = b;
        }
    } else {
        snprintf(err, errlen, "[benchmark] has no key \"%s\"", key);
        return -1;
    }
    return 0;
}

int kb_config_load_file(struct kb_config *c, const char *path, char *err, size_t errlen)
{
    GKeyFile *kf = g_key_file_new();
    GError *gerr = NULL;
    int rc = 0;

    if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &gerr)) {
        snprintf(err, errlen, "cannot read config %s: %s", path, gerr->message);
        g_error_free(gerr);
        g_key_file_free(kf);
        return -1;
    }
    /* a preset sets defaults that the rest of the file refines: apply it first */
    gchar *preset = g_key_file_get_value(kf, "benchmark", "preset", NULL);
    if (preset) {
        rc = kb_preset_apply(c, g_strstrip(preset), err, errlen);
        g_free(preset);
    }
    gsize ngroups = 0;
    gchar **groups = g_key_file_get_groups(kf, &ngroups);
    for (gsize g = 0; !rc && g < ngroups; g++) {
        gsize nkeys = 0;
        gchar **keys = g_key_file_get_keys(kf, groups[g], &nkeys, NULL);
        for (gsize k = 0; !rc && k < nkeys; k++) {
            if (!strcmp(groups[g], "benchmark") && !strcmp(keys[k], "preset")) {
                continue;
            }
            gchar *v = g_key_file_get_value(kf, groups[g], keys[k], NULL);
            char inner[400];
            rc = kb_config_set(c, groups[g], keys[k], g_strstrip(v), inner, sizeof(inner));
            if (rc) {
                snprintf(err, errlen, "%s: %s", path, inner);
            }
            g_free(v);
        }
        g_strfreev(keys);
    }
    g_strfreev(groups);
    g_key_file_free(kf);
    return rc;
}

int kb_config_check(const struct kb_config *c, char *err, size_t errlen)
{
    /* keys shorter than 8 bytes hold fewer distinct indexes */
    uint32_t kmin = c->key_size.min;
    unsigned ndev = c->ndevices > 1 ? c->ndevices : 1;
    if (kmin < 8) {
        uint64_t distinct = 1ull << (8 * kmin);
        uint64_t need = c->key_count;
        if (c->run.enabled && c->run.mix[KB_OP_INSERT] > 0) {
            need += c->run.ops ? c->run.ops : (1ull << 40);
        }
        need *= ndev; /* each device its own keys */
        if (need > distinct) {
            snprintf(err, errlen,
                     "key size %u bytes holds %llu distinct keys; the workload needs up to %llu "
                     "(lower key_count/ops or use longer keys)",
                     kmin, (unsigned long long)distinct, (unsigned long long)need);
            return -1;
        }
    }
    const struct kb_phase *phs[2] = {&c->load, &c->run};
    for (int i = 0; i < 2; i++) {
        const struct kb_phase *p = phs[i];
        uint64_t w = p->window_keys ? p->window_keys : 1024;
        if (p->enabled && p->order == KB_ORDER_WINDOW && p->window_keys > c->key_count) {
            snprintf(err, errlen, "%s.window_keys is %llu; it must be from 1 to key_count (%llu)",
                     i ? "run" : "load", (unsigned long long)p->window_keys,
                     (unsigned long long)c->key_count);
            return -1;
        }
        if (p->enabled && p->order == KB_ORDER_WINDOW && p->window_step > w) {
            snprintf(err, errlen,
                     "%s.window_step is %llu; it must be from 1 to window_keys (%llu): a "
                     "longer step would skip keys",
                     i ? "run" : "load", (unsigned long long)p->window_step, (unsigned long long)w);
            return -1;
        }
    }
    if (c->scan_min > c->iterate_entries) {
        snprintf(err, errlen,
                 "min_scan_length is %u; it must be from 1 to max_scan_length "
                 "(iterate_entries, %u)",
                 c->scan_min, c->iterate_entries);
        return -1;
    }
    if (c->write_rate_bytes_per_s && !(c->run.enabled && c->run.writer)) {
        snprintf(err, errlen,
                 "write_rate_limit_bytes_per_s %llu limits the writer thread (run.writer, "
                 "readwhilewriting's), which this workload does not run; add --writer or drop the "
                 "limit",
                 (unsigned long long)c->write_rate_bytes_per_s);
        return -1;
    }
    if (c->load.writer) {
        snprintf(err, errlen, "load.writer applies to the run phase only (run.writer)");
        return -1;
    }
    if (c->run.enabled && !c->run.ops && !(c->run.duration_s > 0)) {
        snprintf(err, errlen, "the run phase needs ops or duration_s above 0");
        return -1;
    }
    if (c->engine == KB_ENGINE_SYNC && c->engine_explicit && c->queue_depth > 1) {
        snprintf(err, errlen,
                 "queue_depth %u needs engine async (the sync engine has one "
                 "command in flight per thread)",
                 c->queue_depth);
        return -1;
    }
    if (c->poll && c->engine != KB_ENGINE_ASYNC) {
        snprintf(err, errlen,
                 "poll needs io async (io_uring polls for completions; the sync path is an "
                 "ioctl that sleeps until the interrupt)");
        return -1;
    }
    for (unsigned i = 0; i < c->nstores; i++) {
        enum kb_store s = c->stores[i];
        if (s == KB_STORE_KVSSD) {
            continue;
        }
        if (ndev > 1) {
            snprintf(err, errlen,
                     "engine is '%s'; it must be kvssd alone with several devices (%u given): "
                     "the other engines run on one file system or raw device",
                     kb_store_names[s], ndev);
            return -1;
        }
        if (c->queue_depth > 1) {
            snprintf(err, errlen,
                     "queue_depth %u applies to the kvssd engine only; %s issues one operation "
                     "at a time per thread (use threads for concurrency)",
                     c->queue_depth, kb_store_names[s]);
            return -1;
        }
        if (c->poll) {
            snprintf(err, errlen, "poll applies to the kvssd engine only; %s does its own I/O",
                     kb_store_names[s]);
            return -1;
        }
        if (s == KB_STORE_RAWHASH && c->run.enabled && c->run.mix[KB_OP_ITERATE] > 0) {
            snprintf(err, errlen,
                     "the rawhash engine cannot iterate (a hash index has no key order); drop "
                     "iterate from the mix");
            return -1;
        }
        /* a record (32-byte header, key, value, 16-byte aligned) must fit a write block */
        uint64_t rec = (32ull + kb_size_max(&c->key_size) + kb_size_max(&c->value_size) + 15) &
                       ~15ull;
        if (s == KB_STORE_RAWHASH && rec > c->rawhash.write_block_bytes - 64u) {
            snprintf(err, errlen,
                     "the rawhash engine stores a record of up to %llu bytes in a write block of "
                     "%u (64 for its header); raise rawhash.write_block_bytes or lower the value "
                     "size",
                     (unsigned long long)rec, c->rawhash.write_block_bytes);
            return -1;
        }
        if (s == KB_STORE_RAWHASH && !c->rawhash.dev[0]) {
            snprintf(err, errlen,
                     "the rawhash engine needs rawhash.device (--rawhash-dev): a raw block "
                     "device such as /dev/nvme1n1, or a file");
            return -1;
        }
    }
    return 0;
}
