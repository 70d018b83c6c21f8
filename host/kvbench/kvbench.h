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

enum kb_order {
    KB_ORDER_SEQUENTIAL,
    KB_ORDER_UNIFORM,
    KB_ORDER_ZIPFIAN,
    KB_ORDER_LATEST,
    KB_ORDER_WINDOW,
    KB_ORDER_COUNT
};

/*
 * The sliding-window order (characterization paper Fig. 6's "pseudo-random"
 * updates, docs/kvbench.md "Key orders"): operation i of a phase belongs to
 * window j = i / window_keys, which covers the window_keys keys from
 * (j * window_step) mod n on (wrapping at n); inside a window the keys are
 * taken in the order of a bijection seeded by (seed, j), so each key of a
 * window is touched once per window. With window_step == window_keys (the
 * default) one pass of n operations touches every key once, in an order
 * random within a window and sequential across windows.
 */
struct kb_window {
    uint64_t n, keys, step, seed;
};
void kb_window_init(struct kb_window *w, uint64_t n, uint64_t keys, uint64_t step, uint64_t seed);
uint64_t kb_window_at(const struct kb_window *w, uint64_t i);

/* zeta(n, theta): the sum of i^-theta over 1..n (Euler-Maclaurin above 10^6 items). */
double kb_zeta(uint64_t n, double theta);

/* YCSB's ZipfianGenerator (Gray et al.): item 0 is the most popular. */
struct kb_zipf {
    uint64_t n;
    double theta, alpha, zetan, eta, zeta2;
};
void kb_zipf_init(struct kb_zipf *z, uint64_t n, double theta);
/* kb_zipf_grow() - @n items from now on (more only), zeta extended term by term as YCSB does. */
void kb_zipf_grow(struct kb_zipf *z, uint64_t n);
uint64_t kb_zipf_next(const struct kb_zipf *z, struct kb_rng *r);

/* YCSB's Utils.fnvhash64(): FNV-1a 64 over the value's 8 bytes, low byte first, made positive. */
uint64_t kb_fnvhash64(uint64_t v);

/*
 * YCSB's ScrambledZipfianGenerator (its request distribution "zipfian"): a
 * zipfian draw over ITEM_COUNT = 10^10 items (+1: its ZipfianGenerator(0,
 * ITEM_COUNT) is inclusive), FNV-hashed onto [0, itemcount), so the popular
 * keys are spread over the key space instead of being the lowest indexes.
 * At theta 0.99 zetan is YCSB's constant ZETAN; at another theta it is computed.
 */
#define KB_SZIPF_ITEMS 10000000000ull
#define KB_SZIPF_ZETAN 26.46902820178302
struct kb_szipf {
    struct kb_zipf z;
    uint64_t itemcount;
};
void kb_szipf_init(struct kb_szipf *s, uint64_t itemcount, double theta);
uint64_t kb_szipf_next(const struct kb_szipf *s, struct kb_rng *r);

/*
 * Scan lengths (YCSB's scanlengthdistribution over minscanlength ..
 * maxscanlength): uniform (YCSB's default), zipfian (ZipfianGenerator(min,
 * max), 0.99: the shortest scan the most common) or fixed (every scan the
 * maximum: kvbench before YCSB's workloads).
 */
enum kb_scan_dist { KB_SCAN_FIXED, KB_SCAN_UNIFORM, KB_SCAN_ZIPFIAN };
struct kb_scanlen {
    enum kb_scan_dist kind;
    uint32_t min, max;
    struct kb_zipf z;
};
void kb_scanlen_init(struct kb_scanlen *s, enum kb_scan_dist kind, uint32_t min, uint32_t max);
uint32_t kb_scanlen_next(const struct kb_scanlen *s, struct kb_rng *r);
int kb_scan_dist_parse(const char *s, enum kb_scan_dist *out);
const char *kb_scan_dist_name(enum kb_scan_dist d);

/*
 * db_bench's --benchmark_write_rate_limit: RocksDB's GenericRateLimiter(rate)
 * as its readwhilewriting writer uses it. Every 100 ms (refill_period_us
 * 100000) a refill adds rate / 10 bytes; a request takes what is left first,
 * then waits for as many refills as it still needs. Pure: the caller passes
 * the clock and sleeps until the time returned.
 */
#define KB_RATE_PERIOD_NS 100000000ull
struct kb_rate {
    uint64_t bytes_per_s; /* 0 = unlimited */
    uint64_t refill_bytes;
    uint64_t available;
    uint64_t next_refill_ns;
};
#define KB_WRITE_RATE_MAX (1ull << 40) /* write_rate_limit_bytes_per_s: 0 or 10 to this */
void kb_rate_init(struct kb_rate *rl, uint64_t bytes_per_s, uint64_t now_ns);
/* kb_rate_request() - @bytes at @now_ns: the time (>= @now_ns) the write may be issued. */
uint64_t kb_rate_request(struct kb_rate *rl, uint64_t bytes, uint64_t now_ns);

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
/*
 * kb_size_counts() - draw @draws sizes from @d with a generator seeded by @seed and count
 * each size into @counts[size] (@ncounts entries, zeroed first: more than kb_size_max(@d)).
 * Returns 0, or -1 when @ncounts is too small or @draws exceeds KB_SIZE_DRAWS_MAX.
 */
#define KB_SIZE_DRAWS_MAX 100000000ull
int kb_size_counts(const struct kb_size_dist *d, uint64_t seed, uint64_t draws, uint64_t *counts,
                   size_t ncounts);
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
    KB_OP_RMW, /* read-modify-write (YCSB f): a read, then a store of the same key */
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
    bool zipfian_scrambled; /* zipfian: YCSB's scrambled (default) or item 0 hottest */
    double mix[KB_OP_COUNT]; /* weights; normalized when used */
    uint64_t window_keys;    /* KB_ORDER_WINDOW: keys per window (0 = 1024, at most n) */
    uint64_t window_step;    /* ... keys the window moves by (0 = window_keys) */
    bool writer;             /* run phase: one more thread that only updates (readwhilewriting) */
};

/* Latency percentiles reported (--percentiles): at most KB_PCT_MAX, each in (0, 100]. */
#define KB_PCT_MAX 16

/* The kvssd engine's I/O path (historically "engine"): ioctl or io_uring. */
enum kb_io { KB_ENGINE_SYNC, KB_ENGINE_ASYNC };

/*
 * The key-value stores kvbench compares (docs/kvbench.md): the KV-SSD
 * itself, RocksDB on a file system (on the block personality), and a
 * raw-block hash store in the manner of Aerospike (on the raw namespace).
 */
enum kb_store { KB_STORE_KVSSD, KB_STORE_ROCKSDB, KB_STORE_RAWHASH, KB_STORE_COUNT };
extern const char *const kb_store_names[KB_STORE_COUNT];

/* RocksDB through its C API (engine_rocksdb.c); defaults in config.c. */
struct kb_rocksdb_opts {
    char dir[256];
    bool wal;                  /* write-ahead log on */
    bool sync;                 /* fsync the WAL on every write (WriteOptions.sync) */
    bool direct_io;            /* O_DIRECT reads, flushes and compactions */
    uint64_t block_cache_bytes;
    int compression;           /* rocksdb_*_compression; 0 = none */
    uint64_t write_buffer_bytes;
    bool keep;                 /* reuse the directory's database instead of a fresh one */
};

/* The raw-block hash store (engine_rawhash.c). */
struct kb_rawhash_opts {
    char dev[256];
    uint64_t size_bytes;       /* bytes of a regular file to use (0 = its size) */
    uint32_t write_block_bytes;
    uint32_t defrag_lwm_pct;   /* defragment sealed blocks whose live share falls below this */
    bool commit_to_device;     /* write the open block's tail before acknowledging */
    bool trim;                 /* deallocate a write block when defragmentation frees it */
    bool keep;                 /* rebuild the index from the device instead of formatting */
};

/*
 * Several KV-SSDs at once (--device more than once, or the INI's device
 * key as a ';' list, GKeyFile's list separator): the kvssd engine alone,
 * --threads threads per device, each device the whole workload on its own
 * keys (device i of N: the workload's key index k is key k * N + i).
 */
#define KB_DEVICES_MAX 16
#define KB_DEVICE_PATH_MAX 128

struct kb_config {
    /* devices[0] (or the one found): what one-device code uses */
    char device[KB_DEVICE_PATH_MAX];
    /* ndevices of them; 0: none given (found at run time) */
    char devices[KB_DEVICES_MAX][KB_DEVICE_PATH_MAX];
    unsigned ndevices;
    char preset[32];
    uint64_t seed;
    unsigned threads;
    unsigned queue_depth;
    enum kb_io engine; /* the kvssd engine's I/O path (key io, formerly engine) */
    bool engine_explicit; /* engine was set, not implied by queue_depth */
    bool poll; /* the async path polls for completions (KVSSD_QUEUE_POLLED) */
    enum kvssd_xfer_mode mode;
    char xfer_config[256];
    double alpha, beta; /* < 0 = keep the library's */
    uint64_t key_count;
    struct kb_size_dist key_size, value_size;
    struct kb_phase load, run;
    uint32_t iterate_entries;       /* scans' maximum length (YCSB's maxscanlength) */
    uint32_t scan_min;              /* ... minimum (minscanlength) */
    enum kb_scan_dist scan_dist;    /* ... distribution (scanlengthdistribution) */
    uint64_t write_rate_bytes_per_s; /* run.writer's rate limit (db_bench's); 0 = none */
    bool verify;
    bool reset_stats;
    bool json;
    int progress; /* -1 auto (tty), 0 off, 1 on */
    double report_interval_s; /* 0 = no interval reports */
    unsigned npercentiles;
    double percentiles[KB_PCT_MAX];
    /* the engines to run, in order, and how many */
    enum kb_store stores[KB_STORE_COUNT];
    unsigned nstores;
    char nvm_ctrl[128]; /* the block personality's namespace or controller (its C0h log) */
    struct kb_rocksdb_opts rocksdb;
    struct kb_rawhash_opts rawhash;
    /* calibrate */
    uint32_t calibrate_samples;
    char calibrate_output[256];
};

void kb_config_default(struct kb_config *c);
/* A preset: a named workload that sets every field it depends on. */
struct kb_preset {
    const char *name; /* "ycsb-a" */
    const char *help; /* what it sets, one line (--list-presets) */
    void (*apply)(struct kb_config *c, int arg);
    int arg;          /* which workload of @apply's family */
};
/* The presets, in --list-presets order; kb_preset_count of them. */
extern const struct kb_preset kb_presets[];
extern const size_t kb_preset_count;
/*
 * kb_preset_apply() - one of kb_presets (or an old name of one, with a
 * one-line notice on stderr); -1 + sentence if unknown.
 */
int kb_preset_apply(struct kb_config *c, const char *name, char *err, size_t errlen);
/* kb_preset_summary() - the preset names for --help, runs of a family as first..last (g_free). */
char *kb_preset_summary(void);
/* kb_preset_canonical() - the current name of preset @name (an old one renamed), else @name. */
const char *kb_preset_canonical(const char *name);
/* kb_percentiles_parse() - "50,99,99.9": 1-KB_PCT_MAX values in (0, 100], ascending. */
int kb_percentiles_parse(const char *spec, double *out, unsigned *n, char *err, size_t errlen);
/* kb_config_load_file() - an INI file (GKeyFile); keys documented in docs/host.md. */
int kb_config_load_file(struct kb_config *c, const char *path, char *err, size_t errlen);
/* kb_config_set() - one setting by its INI group and key (flags go through here too). */
int kb_config_set(struct kb_config *c, const char *group, const char *key, const char *value,
                  char *err, size_t errlen);
/*
 * kb_config_add_device() - append the devices of @v (one path, or a ';' list)
 * to benchmark.device; kb_config_set()'s "device" replaces the list instead.
 */
int kb_config_add_device(struct kb_config *c, const char *v, char *err, size_t errlen);
/* kb_engines_parse() - "kvssd", "rocksdb,rawhash", "all": the engines in order, each once. */
int kb_engines_parse(const char *spec, enum kb_store *stores, unsigned *n, char *err,
                     size_t errlen);
const char *kb_compression_name(int c);
int kb_order_parse(const char *s, enum kb_order *o);
const char *kb_order_name(enum kb_order o);
int kb_mix_parse(const char *spec, double mix[KB_OP_COUNT], char *err, size_t errlen);
/* kb_config_check() - cross-field checks (key sizes vs key count ...). */
int kb_config_check(const struct kb_config *c, char *err, size_t errlen);

/* ---- engines (engine.c, engine_kvssd.c, engine_rocksdb.c, engine_rawhash.c) ---- */

/*
 * One key-value store behind the workload runner. Every operation returns
 * 0, -KVSSD_ERR_KEY_NOT_FOUND (get/del/exist of an absent key), or another
 * negative enum kvssd_err (-KVSSD_ERR_SYSTEM with errno, or a sentence
 * through kb_engine_set_error()). @commands: device commands the
 * operation issued when the engine can tell (kvssd), else left alone.
 * Operations are called from several threads at once on one state.
 */
struct kb_engine_ops {
    const char *name;
    int (*open)(const struct kb_config *c, void **st, char *err, size_t errlen);
    void (*close)(void *st);
    int (*put)(void *st, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl,
               uint32_t *commands);
    /* @vlen: the value's full size; min(@cap, *@vlen) bytes of @buf are valid */
    int (*get)(void *st, const uint8_t *k, uint32_t kl, uint8_t *buf, uint32_t cap, uint32_t *vlen,
               uint32_t *commands);
    int (*del)(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands);
    int (*exist)(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands);
    /* up to @max entries from the first key with @prefix's bytes; key bytes read in *@bytes */
    int (*iterate)(void *st, const uint8_t *prefix, uint32_t plen, uint32_t max, uint64_t *bytes,
                   uint32_t *commands);
    /* make every acknowledged write durable on the device (end of a phase) */
    int (*sync)(void *st);
    /* bytes the engine occupies on its medium (files, write blocks in use); -1 if unknown */
    int64_t (*footprint)(void *st);
    /* the namespace whose C0h log page describes this engine's device, or NULL */
    struct kvssd_dev *(*stats_dev)(void *st);
    /* what the firmware's five latency rows count for this engine's device */
    const char *const *device_ops;
};

extern const struct kb_engine_ops kb_engine_kvssd, kb_engine_rocksdb, kb_engine_rawhash;
/* kb_engine_ops_of() - the ops of @s, or NULL when this build lacks it (no librocksdb). */
const struct kb_engine_ops *kb_engine_ops_of(enum kb_store s);
/* A sentence about the calling thread's last engine error (empty when none). */
void kb_engine_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *kb_engine_error(void);
/* kvssd's handle behind an open kvssd engine (its async path and calibrate need it). */
struct kvssd_dev *kb_engine_kvssd_dev(void *st);
/*
 * kb_nvm_stats_open() - a handle for the C0h log of the block personality
 * behind @path: an explicit namespace or controller (--nvm-dev), or, when
 * @explicit_dev is empty, the NVMe namespace holding @path (a file system
 * directory, a file or a block device), found through /sys/dev/block.
 * Returns NULL (and a sentence in @why) when there is none.
 */
struct kvssd_dev *kb_nvm_stats_open(const char *explicit_dev, const char *path, char *why,
                                    size_t whylen);
/*
 * kb_nvme_namespace_of() - "/dev/nvmeXnY" from a /sys/dev/block link target
 * (.../nvme1/nvme1n1, or .../nvme1n1/nvme1n1p2 for a partition); -1 when
 * it is not an NVMe namespace (a loop device, a SCSI disk).
 */
int kb_nvme_namespace_of(const char *sysfs_target, char *out, size_t len);

/* ---- rawhash store (engine_rawhash.c), exposed for the unit tests ---- */
struct rh_store;
struct rh_stats {
    uint64_t blocks, free_blocks, sealed_blocks;
    uint64_t live_records, tombstones, live_bytes; /* bytes of live records incl. headers */
    uint64_t defrags, relocated_records, relocated_bytes;
    uint64_t device_bytes_written, device_bytes_read, device_writes;
    uint64_t index_bytes; /* DRAM of the hash index */
    uint64_t rebuilt_records;
};
int rh_open(const struct kb_rawhash_opts *o, struct rh_store **sp, char *err, size_t errlen);
void rh_close(struct rh_store *s);
int rh_put(struct rh_store *s, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl);
int rh_get(struct rh_store *s, const uint8_t *k, uint32_t kl, uint8_t *buf, uint32_t cap,
           uint32_t *vlen);
int rh_del(struct rh_store *s, const uint8_t *k, uint32_t kl);
int rh_sync(struct rh_store *s);
/* rh_defrag_block() - defragment write block @b now (tests); -1 if it is not sealed. */
int rh_defrag_block(struct rh_store *s, uint64_t b);
/* rh_block_of() - the write block holding @k's record, or -1. */
int64_t rh_block_of(struct rh_store *s, const uint8_t *k, uint32_t kl);
void rh_get_stats(struct rh_store *s, struct rh_stats *st);

/* ---- report.c -------------------------------------------------------- */

/*
 * Log-linear latency histogram in ns (HdrHistogram's layout with 6 bits of
 * sub-bucket): exact below 64 ns; above, each power of two [2^e, 2^(e+1))
 * is split into 64 buckets of width 2^(e-6), so a bucket's width is at most
 * 1/64 of its lower bound. A percentile reports the bucket's midpoint
 * (clamped to the exact maximum): within 1/128 of the true value.
 */
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
/* kb_hist_bucket() - the bucket holding @ns and its bounds [*lo, *hi] in ns (inclusive). */
unsigned kb_hist_bucket(uint64_t ns, uint64_t *lo, uint64_t *hi);

/* One latency distribution reduced to what is reported (us). */
struct kb_lat_summary {
    uint64_t count;
    double mean_us, max_us;
    double pct_us[KB_PCT_MAX]; /* at the config's percentiles */
};
void kb_lat_summarize(const struct kb_config *c, const struct kb_hist *h, struct kb_lat_summary *s);

/* One --report-interval period of a phase. */
struct kb_interval {
    double start_s, end_s; /* from the phase's start */
    uint64_t ops;
    struct kb_lat_summary all, op[KB_OP_COUNT];
};
#define KB_INTERVALS_MAX 100000 /* kept per phase; later ones are counted, not kept */

struct kb_result {
    const char *phase;
    uint64_t ops;
    uint64_t op_count[KB_OP_COUNT];
    uint64_t commands;
    uint64_t errors;
    uint64_t not_found;
    uint64_t not_found_op[KB_OP_COUNT]; /* ... by operation type */
    uint64_t mismatches;
    uint64_t user_bytes; /* key + value bytes the workload moved */
    double elapsed_s;
    struct kb_hist hist;
    bool have_device;
    struct kvssd_stats_log before, after;
    /* per engine (docs/kvbench.md "Metrics") */
    /* the kvssd engine's device path (NULL: the config's) */
    const char *device;
    const char *engine;                   /* kb_store_names[] */
    const char *const *device_ops;        /* names of the device's latency rows */
    struct kb_hist hist_op[KB_OP_COUNT];  /* wall-clock latency per operation type */
    double cpu_s;                         /* process user + system CPU over the phase */
    double sync_s;                        /* part of elapsed_s: the engine's closing sync */
    uint64_t written_bytes;               /* key + value bytes of successful inserts/updates */
    int64_t live_user_bytes;              /* key + value bytes live after the phase; -1 unknown */
    int64_t footprint_bytes;              /* engine's bytes on its medium after it; -1 unknown */
    struct kb_interval *intervals;        /* --report-interval: each period, in order */
    unsigned nintervals;
    uint64_t intervals_dropped;           /* past KB_INTERVALS_MAX */
};
void kb_result_free(struct kb_result *r);

/* ---- runner.c -------------------------------------------------------- */

/*
 * Which keys are live and how large (key + value bytes), for space
 * amplification: 4 bytes per key index, key_count + run-phase inserts,
 * at most KB_LIVE_MAX indexes (4 GiB); beyond that live bytes are unknown.
 */
#define KB_LIVE_MAX (1ull << 28)
struct kb_live {
    _Atomic uint32_t *len; /* key + value + 1; 0 = absent */
    uint64_t n;
    _Atomic bool overflow;
};
int kb_live_init(struct kb_live *l, const struct kb_config *c);
void kb_live_free(struct kb_live *l);
int64_t kb_live_bytes(struct kb_live *l);

struct kb_engine {
    const struct kb_engine_ops *ops;
    void *st;
    struct kvssd_dev *stats; /* its device's C0h log, or NULL */
};
/* kb_szipf_itemcount() - the scrambled zipfian's item space of phase @ph (YCSB's rule). */
uint64_t kb_szipf_itemcount(const struct kb_config *c, const struct kb_phase *ph, bool is_load);
/* kb_run_phase() - one phase of the workload on @e; 0, or 1 on a setup failure. */
int kb_run_phase(const struct kb_config *c, struct kb_engine *e, const struct kb_phase *ph,
                 const char *name, bool is_load, struct kb_live *live, struct kb_result *out);

/*
 * kb_run_phase_devices() - the phase on @ndev engines at once (the kvssd
 * engine on each of several devices: @e[d], @live[d] and @out[d] are device
 * d's), c->threads threads each, every device the whole phase on its own keys
 * (key index k of device d is key k * @ndev + d). @agg (may be NULL): every
 * device's counts and histograms added, elapsed_s from the start to the last
 * device's closing sync. kb_run_phase() is it with one device.
 */
int kb_run_phase_devices(const struct kb_config *c, struct kb_engine *e, unsigned ndev,
                         const struct kb_phase *ph, const char *name, bool is_load,
                         struct kb_live *live, struct kb_result *out, struct kb_result *agg);

void kb_report_table(const struct kb_config *c, const struct kb_result *r);
/*
 * kb_report_devices() - the table of one phase on several devices: each
 * device's table (kb_report_table()), then the aggregate @agg: wall-clock and
 * aggregate device-time throughput (kb_aggregate_device_time()).
 */
void kb_report_devices(const struct kb_config *c, const struct kb_result *dev, unsigned ndev,
                       const struct kb_result *agg);
/*
 * kb_aggregate_device_time() - the aggregate device time of one phase on
 * @ndev devices: the longest device-time elapsed (statistics log sim_now_ns
 * delta) over them, each device having its own simulated clock; NaN when a
 * device has no statistics log. Aggregate device-time throughput is the
 * phase's total ops over it.
 */
double kb_aggregate_device_time(const struct kb_result *dev, unsigned ndev);
struct json_object;
/*
 * kb_report_json_add_devices() - "devices" (each device's path, configuration
 * log and phases, @dev[d * @nphases + p]) and "aggregate" (@agg[p]) on @o.
 */
struct kb_device_info {
    const char *path;
    bool have_config;
    struct kvssd_config_log config;
};
void kb_report_json_add_devices(struct json_object *o, const struct kb_config *c,
                                const struct kb_device_info *info, const struct kb_result *dev,
                                unsigned ndev, int nphases, const struct kb_result *agg);
/* Phase @phase of every engine, a column each; @res[e * nphases + p]. */
void kb_report_side_by_side(const struct kb_config *c, const struct kb_result *res, int nengines,
                            int nphases, int phase);
void kb_report_json_engines(const struct kb_config *c, const struct kb_result *res, int nengines,
                            int nphases);
/* The derived metrics of one phase (docs/kvbench.md); NaN where not available. */
struct kb_metrics {
    double ops_per_s_wall, ops_per_s_sim, sim_s;
    double device_busy_s, ops_per_s_busy; /* sum of the device's simulated command latencies */
    double cpu_us_per_op;
    double h2d_bytes_per_op, pcie_bytes_per_op;
    double nand_bytes_programmed, waf, device_waf;
    double space_amp_engine, space_amp_device;
    double nand_page_bytes;
};
void kb_metrics(const struct kb_result *r, struct kb_metrics *m);
void kb_report_json(const struct kb_config *c, const struct kb_result *res, int n);
/* The JSON schema's version (docs/kvbench.md "JSON"): "schema_version" at the top level. */
#define KB_JSON_SCHEMA_VERSION 1
struct json_object;
/* kb_report_json_object() - the --json object (a new reference); NULL when out of memory. */
struct json_object *kb_report_json_object(const struct kb_config *c, const struct kb_result *res,
                                          int nengines, int nphases);
/* kb_json_double() - @v printed with @fmt (the digits the hand-printed JSON had); NULL if not
 * finite. */
struct json_object *kb_json_double(double v, const char *fmt);
/* kb_json_str() - a string when @s is valid UTF-8, else {"hex": "..."}. */
struct json_object *kb_json_str(const char *s);
/*
 * kb_report_provenance() - the command line every --json report names in
 * its "provenance" (include/bench/provenance.h); @argv must outlive the reports.
 */
void kb_report_provenance(int argc, char **argv);
/*
 * kb_report_provenance_device() - the device the reports describe: its
 * configuration log page (C1h); the first one given stays.
 */
void kb_report_provenance_device(const struct kvssd_config_log *l);
/*
 * kb_provenance_read() - kb_report_provenance_device() of @dev's log page,
 * when @dev is not NULL and has one (the reports say null otherwise).
 */
void kb_provenance_read(struct kvssd_dev *dev);
/* kb_report_provenance_json() - the "provenance" object (a new reference). */
struct json_object *kb_report_provenance_json(void);
/* kb_json_print() - @o on stdout, one line, then drops the reference. */
void kb_json_print(struct json_object *o);
/* kb_pct_key() - a percentile's JSON key: 50 -> "50", 99.9 -> "99.9" (%g). */
void kb_pct_key(double p, char *buf, size_t len);
/* kb_interval_line() - the table line of one interval (no newline). */
void kb_interval_line(const struct kb_config *c, const char *phase, const struct kb_interval *iv,
                      char *buf, size_t len);
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
