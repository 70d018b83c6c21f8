/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench: the benchmark users run inside the guest. Shared declarations
 * of its parts: config (INI + flags + presets), dist (random numbers, key
 * orders, size distributions), payload (self-checking values), report
 * (latency histogram, results table, JSON) and calibrate.
 */
#ifndef KVBENCH_H
#define KVBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kvssd/libkvssd.h>

/* ---- dist.c ---------------------------------------------------------- */

/* xoshiro256** seeded by splitmix64: fast, reproducible per seed. */
struct kb_rng {
    uint64_t s[4];
};
void kb_rng_seed(struct kb_rng *r, uint64_t seed);
uint64_t kb_rng_next(struct kb_rng *r);
double kb_rng_double(struct kb_rng *r);              /* [0, 1) */
uint64_t kb_rng_below(struct kb_rng *r, uint64_t n); /* [0, n) */
uint64_t kb_splitmix64(uint64_t *x);

enum kb_order { KB_ORDER_SEQUENTIAL, KB_ORDER_UNIFORM, KB_ORDER_ZIPFIAN, KB_ORDER_LATEST };

/* YCSB's ZipfianGenerator (Gray et al.): item 0 is the most popular. */
struct kb_zipf {
    uint64_t n;
    double theta, alpha, zetan, eta, zeta2;
};
void kb_zipf_init(struct kb_zipf *z, uint64_t n, double theta);
uint64_t kb_zipf_next(const struct kb_zipf *z, struct kb_rng *r);

/* A bijection on [0, n): the order a uniform load phase inserts keys in. */
struct kb_perm {
    uint64_t n, mul, add;
};
void kb_perm_init(struct kb_perm *p, uint64_t n, uint64_t seed);
uint64_t kb_perm_at(const struct kb_perm *p, uint64_t i);

enum kb_size_kind { KB_SIZE_FIXED, KB_SIZE_UNIFORM, KB_SIZE_WEIGHTED, KB_SIZE_MIXGRAPH };
#define KB_WEIGHTED_MAX 32

struct kb_size_dist {
    enum kb_size_kind kind;
    uint32_t min, max; /* FIXED: min == max; UNIFORM: inclusive range; MIXGRAPH: clamp */
    uint32_t n;        /* WEIGHTED */
    uint32_t sizes[KB_WEIGHTED_MAX];
    double cum[KB_WEIGHTED_MAX]; /* cumulative, last = 1 */
    double k, sigma, theta;      /* MIXGRAPH: generalized Pareto (db_bench value_k/sigma/theta) */
};

/*
 * kb_size_parse() - "16", "fixed:16", "uniform:8-32", "weighted:8:9,2048:1",
 * "mixgraph" or "mixgraph:max=1024,k=0.2615,sigma=25.45,theta=0".
 * @lo/@hi: allowed sizes (keys 1..255, values 0..2 MiB); @what: "key size"/"value size".
 * Returns 0, or -1 with a sentence in @err.
 */
int kb_size_parse(const char *spec, uint32_t lo, uint32_t hi, const char *what,
                  struct kb_size_dist *d, char *err, size_t errlen);
uint32_t kb_size_draw(const struct kb_size_dist *d, struct kb_rng *r);
uint32_t kb_size_max(const struct kb_size_dist *d);
/* db_bench mixgraph: Pareto inversion of @u, clamped: < 10 -> 10, > max -> % max. */
uint32_t kb_mixgraph_size(const struct kb_size_dist *d, double u);
void kb_size_format(const struct kb_size_dist *d, char *buf, size_t len);

/* ---- payload.c ------------------------------------------------------- */

#define KB_KEY_BYTES_MAX 255
/* Key bytes of key @index with @len bytes: big-endian index, then filler. */
void kb_key_encode(uint64_t index, uint32_t len, uint64_t seed, uint8_t *out);
/* The key size key @index always has (drawn from the key distribution by hash). */
uint32_t kb_key_size(const struct kb_size_dist *d, uint64_t index, uint64_t seed);
/* Value bytes of key @index at size @len: a stream seeded by (index, len, seed). */
void kb_value_fill(uint64_t index, uint32_t len, uint64_t seed, uint8_t *out);
/* Number of bytes of @buf (@len of a @full_len value) that differ from the fill. */
uint32_t kb_value_check(uint64_t index, uint32_t full_len, uint64_t seed, const uint8_t *buf,
                        uint32_t len);

/* ---- config.c -------------------------------------------------------- */

enum kb_op {
    KB_OP_INSERT,
    KB_OP_UPDATE,
    KB_OP_READ,
    KB_OP_DELETE,
    KB_OP_EXIST,
    KB_OP_ITERATE,
    KB_OP_COUNT
};
extern const char *const kb_op_names[KB_OP_COUNT];

struct kb_phase {
    bool enabled;
    uint64_t ops;       /* 0 = by duration */
    bool ops_set;       /* ops given explicitly: with duration_s too, whichever ends first */
    double duration_s;  /* 0 = by ops */
    enum kb_order order;
    double theta;       /* zipfian / latest */
    double mix[KB_OP_COUNT]; /* weights; normalized when used */
};

enum kb_engine { KB_ENGINE_SYNC, KB_ENGINE_ASYNC };

struct kb_config {
    char device[128];
    char preset[32];
    uint64_t seed;
    unsigned threads;
    unsigned queue_depth;
    enum kb_engine engine;
    bool engine_explicit; /* engine was set, not implied by queue_depth */
    enum kvssd_xfer_mode mode;
    char xfer_config[256];
    double alpha, beta; /* < 0 = keep the library's */
    uint64_t key_count;
    struct kb_size_dist key_size, value_size;
    struct kb_phase load, run;
    uint32_t iterate_entries;
    bool verify;
    bool reset_stats;
    bool json;
    int progress; /* -1 auto (tty), 0 off, 1 on */
    /* calibrate */
    uint32_t calibrate_samples;
    char calibrate_output[256];
};

void kb_config_default(struct kb_config *c);
/* kb_preset_apply() - one of kb_preset_names; -1 + sentence if unknown. */
int kb_preset_apply(struct kb_config *c, const char *name, char *err, size_t errlen);
extern const char *const kb_preset_names[];
extern const char *const kb_preset_help[];
/* kb_config_load_file() - an INI file (GKeyFile); keys documented in docs/host.md. */
int kb_config_load_file(struct kb_config *c, const char *path, char *err, size_t errlen);
/* kb_config_set() - one setting by its INI group and key (flags go through here too). */
int kb_config_set(struct kb_config *c, const char *group, const char *key, const char *value,
                  char *err, size_t errlen);
int kb_order_parse(const char *s, enum kb_order *o);
const char *kb_order_name(enum kb_order o);
int kb_mix_parse(const char *spec, double mix[KB_OP_COUNT], char *err, size_t errlen);
/* kb_config_check() - cross-field checks (key sizes vs key count ...). */
int kb_config_check(const struct kb_config *c, char *err, size_t errlen);

/* ---- report.c -------------------------------------------------------- */

/* Log-linear latency histogram in ns: 64 sub-buckets per power of two (<1.6% error). */
#define KB_HIST_SUB 64
#define KB_HIST_BUCKETS (64 * KB_HIST_SUB)
struct kb_hist {
    uint64_t count;
    uint64_t max_ns;
    uint64_t sum_ns;
    uint64_t b[KB_HIST_BUCKETS];
};
void kb_hist_add(struct kb_hist *h, uint64_t ns);
void kb_hist_merge(struct kb_hist *into, const struct kb_hist *from);
uint64_t kb_hist_percentile(const struct kb_hist *h, double p); /* ns, p in [0,100] */

struct kb_result {
    const char *phase;
    uint64_t ops;
    uint64_t op_count[KB_OP_COUNT];
    uint64_t commands;
    uint64_t errors;
    uint64_t not_found;
    uint64_t mismatches;
    uint64_t user_bytes; /* key + value bytes the workload moved */
    double elapsed_s;
    struct kb_hist hist;
    bool have_device;
    struct kvssd_stats_log before, after;
};

void kb_report_table(const struct kb_config *c, const struct kb_result *r);
void kb_report_json(const struct kb_config *c, const struct kb_result *res, int n);
uint64_t kb_pcie_bytes(const struct kvssd_stats_log *before, const struct kvssd_stats_log *after);

/* ---- calibrate.c ----------------------------------------------------- */

/*
 * kb_pick_threshold() - the largest @sizes[i] up to which @a_ns[j] <= @b_ns[j]
 * for every j <= i (the first crossing ends it); 0 if @a is slower at once.
 */
uint32_t kb_pick_threshold(const uint32_t *sizes, const double *a_ns, const double *b_ns, size_t n);
int kb_calibrate(struct kb_config *c);

/* ---- baseline.c ------------------------------------------------------ */
/* 4 KiB NVM Reads through passthrough on any NVMe namespace (run.ops / run.duration_s, threads). */
int kb_baseline(struct kb_config *c);

/* ---- kvbench.c ------------------------------------------------------- */
uint64_t kb_now_ns(void);

#endif
