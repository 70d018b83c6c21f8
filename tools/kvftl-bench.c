/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvftl-bench: host-CPU throughput of the kvftl firmware library.
 *
 * Single thread. Stores --keys distinct keys (phase 1), then retrieves every
 * one of them in a pseudo-random order (phase 2), and reports wall-clock
 * operations per second of the library itself, the host memory the index
 * uses per key, and the simulated device throughput of the same run (what
 * the modelled SSD would deliver, from the completion times the firmware
 * returns). Requests are issued closed-loop at --queue-depth: request i
 * arrives when request i - depth completed.
 *
 * --slices replaces the retrieve phase: it runs List, an Iter Read whose
 * prefix matches nothing and the FTL check over the stored keys in the
 * bounded slices the device runs them in (one call per main-loop slice), and
 * prints each walk's total time and its worst slice: the longest the device
 * would hold QEMU's main loop.
 *
 * --command-set nvm runs the block personality instead (include/kvftl/block.h):
 * --keys native 4 KiB writes, one to each logical unit in a pseudo-random
 * order, then as many reads in another, with the host memory of the map per
 * mapped page (run_block()).
 *
 * Documented in docs/kvftl-bench.md. This is a benchmark that prints numbers,
 * not a test: it asserts nothing about speed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef KVFTL_BENCH_HAVE_JSONC
#include <bench/provenance.h>
#include <json-c/json.h>
#endif

#include <bench/key_order.h>
#include <bench/units.h>
#include <bench/usage.h>
#include <kvftl/block.h>
#include <kvftl/kvftl.h>
#include <kvssd/nvme_kv.h>
#include <kvssd_version.h>

#include "admin.h"     /* hw/kvssd: the command sets and their slice budgets */
#include "cmdset.h"
#include "kvftl/media/prefault.h" /* huge_map(): the memory floor's regions as the store's */

struct opts {
    uint64_t keys;
    uint32_t key_bytes;
    uint32_t value_bytes;
    const char *preset;
    /*
     * A firmware tunable's flag (one per row of include/kvftl/tunables.def,
     * named like its QEMU property): its text, NULL for the preset's value;
     * set on the preset after every flag is read. --index-dram-bytes unset:
     * sized to cache the whole index.
     */
    const char **tunable_text; /* [kvftl_tunable_count] */
    uint32_t queue_depth;
    uint32_t batch; /* stores and retrieves per batch call; 1: one kvftl_store()/_retrieve() each */
    bool inline_values;
    bool json;
    bool slices; /* run the long walks in device slices instead of retrieves */
    bool memory_floor; /* measure this host's memory floor of a Retrieve after the run */
    uint64_t seed;
    bool keys_set; /* --keys given (the block mode's default differs) */
};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: kvftl-bench [options]\n"
        "options:\n"
        "  --keys N                  distinct keys stored then retrieved (1..1000000000); with\n"
        "                            --command-set nvm: 4 KiB units written then read.\n"
        "                            Default: 10000000 (nvm: 500000).\n"
        "  --key-bytes N             key size in bytes (1..255). Default: 16.\n"
        "  --value-bytes N           value size in bytes (0..2097152). Default: 64.\n"
        "  --preset NAME             device preset: default, pm983, cosmos. Default: default.\n"
        "  --queue-depth N           requests in flight in simulated time (1..65536).\n"
        "                            Default: 64.\n"
        "  --batch N                 stores per kvftl_store_batch() and retrieves per\n"
        "                            kvftl_retrieve_batch() call (nvm: reads per\n"
        "                            kvftl_block_read_batch() call), at most the queue depth;\n"
        "                            1 calls kvftl_store() and kvftl_retrieve() (1..256).\n"
        "                            Default: 16.\n"
        "  --arrival KIND            how values arrive: dma or inline (inline: in a head and\n"
        "                            transfer commands of the device's full layout).\n"
        "                            Default: dma.\n"
        "  --slices                  after the stores, run List, an Iter Read matching nothing\n"
        "                            and the FTL check in device slices; print each one's\n"
        "                            worst slice\n"
        "  --memory-floor            after the run, measure this host's memory floor of a\n"
        "                            Retrieve: two dependent random loads per request,\n"
        "                            overlapped as the batch overlaps them, over the run's\n"
        "                            index and store sizes; and what a dependent load costs\n"
        "                            in few 4 KiB pages and in many\n"
        "  --seed N                  seed of the retrieve order and value bytes. Default: 1.\n"
        "  --json                    print one JSON object instead of the table\n"
        "  --version                 print the version (and the git describe of the build)\n"
        "  --help                    this text\n"
        "firmware tunables (include/kvftl/tunables.def; numbers as kvbench's: 4Ki, 1e6; default:\n"
        "the preset's, except --index-dram-bytes: enough to cache the whole index):\n");
    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        const struct kvftl_tunable *t = &kvftl_tunables[i];
        char range[256];
        kvftl_tunable_range(t, range, sizeof(range));
        if (strlen(t->prop) <= 23) {
            fprintf(f, "  --%-23s %s; %s\n", t->prop, t->help, range);
        } else {
            fprintf(f, "  --%s\n%28s%s; %s\n", t->prop, "", t->help, range);
        }
    }
    fprintf(f, "  --placement-unit N        the same as --placement-unit-bytes\n"
               "See kvftl-bench(1).\n");
}

static void bad(const char *flag, const char *val, const char *range)
{
    tool_usage_error("kvftl-bench", NULL, "%s is '%s'; it must be %s", flag, val, range);
    exit(TOOL_EXIT_USAGE);
}

/*
 * A number as every tool reads one (<bench/units.h>): with @suffixes a byte
 * count (64M, 4Ki), else a count (1e6, 100k); 0x for hexadecimal.
 */
static bool parse_u64(const char *s, bool suffixes, uint64_t *out)
{
    return units_u64(s, suffixes ? UNITS_BYTES : UNITS_COUNT, out);
}

static uint64_t num_arg(const char *flag, const char *val, uint64_t lo, uint64_t hi, bool suffixes,
                        const char *range)
{
    uint64_t v;
    if (!parse_u64(val, suffixes, &v) || v < lo || v > hi) {
        bad(flag, val, range);
    }
    return v;
}

/* A tunable's flag: checked now against the field's own range, set on the preset later. */
static void tunable_arg(struct opts *o, const char *flag, const struct kvftl_tunable *t,
                        const char *text)
{
    struct kvftl_config tmp;
    char err[512];
    kvftl_config_preset(&tmp, NULL);
    if (kvftl_tunable_parse(&tmp, t, flag, text, err, sizeof(err)) != 0) {
        tool_usage_error("kvftl-bench", NULL, "%s", err);
        exit(TOOL_EXIT_USAGE);
    }
    o->tunable_text[t - kvftl_tunables] = text;
}

static void parse(int argc, char **argv, struct opts *o)
{
    enum {
        O_KEYS = 256,
        O_KB,
        O_VB,
        O_PRESET,
        O_PU,
        O_QD,
        O_BATCH,
        O_ARR,
        O_SEED,
        O_JSON,
        O_SLICES,
        O_FLOOR,
        O_HELP,
        O_VERSION,
        O_TUNABLE /* + the tunable's index */
    };
    static const struct option fixed[] = {
        {"keys", required_argument, NULL, O_KEYS},
        {"key-bytes", required_argument, NULL, O_KB},
        {"value-bytes", required_argument, NULL, O_VB},
        {"preset", required_argument, NULL, O_PRESET},
        {"placement-unit", required_argument, NULL, O_PU},
        {"queue-depth", required_argument, NULL, O_QD},
        {"batch", required_argument, NULL, O_BATCH},
        {"arrival", required_argument, NULL, O_ARR},
        {"seed", required_argument, NULL, O_SEED},
        {"json", no_argument, NULL, O_JSON},
        {"slices", no_argument, NULL, O_SLICES},
        {"memory-floor", no_argument, NULL, O_FLOOR},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
    };
    size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
    struct option *lo = calloc(nfixed + kvftl_tunable_count + 1, sizeof(*lo));
    const char **tunable_text = calloc(kvftl_tunable_count, sizeof(*tunable_text));
    if (!lo || !tunable_text) {
        fprintf(stderr, "kvftl-bench: out of memory\n");
        exit(1);
    }
    memcpy(lo, fixed, sizeof(fixed));
    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        lo[nfixed + i] = (struct option){kvftl_tunables[i].prop, required_argument, NULL,
                                         O_TUNABLE + (int)i};
    }
    *o = (struct opts){.keys = 10000000,
                       .key_bytes = 16,
                       .value_bytes = 64,
                       .preset = "default",
                       .tunable_text = tunable_text,
                       .queue_depth = 64,
                       .batch = 16,
                       .seed = 1};
    bool batch_set = false;
    o->keys_set = false;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case O_KEYS:
            o->keys = num_arg("--keys", optarg, 1, 1000000000, false,
                              "a number from 1 to 1000000000");
            o->keys_set = true;
            break;
        case O_KB:
            o->key_bytes = (uint32_t)num_arg("--key-bytes", optarg, KVFTL_KEY_MIN_BYTES,
                                             KVFTL_KEY_MAX_BYTES, false, "a number from 1 to 255");
            break;
        case O_VB:
            o->value_bytes = (uint32_t)num_arg("--value-bytes", optarg, 0, KVFTL_VALUE_MAX_BYTES,
                                               false, "a number from 0 to 2097152");
            break;
        case O_PRESET: {
            struct kvftl_config tmp;
            if (kvftl_config_preset(&tmp, optarg) != 0) {
                bad("--preset", optarg, "one of default, pm983, cosmos");
            }
            o->preset = optarg;
            break;
        }
        case O_PU:
            tunable_arg(o, "--placement-unit", kvftl_tunable_find("placement_unit_bytes"), optarg);
            break;
        case O_QD:
            o->queue_depth = (uint32_t)num_arg("--queue-depth", optarg, 1, 65536, false,
                                               "a number from 1 to 65536");
            break;
        case O_BATCH:
            o->batch = (uint32_t)num_arg("--batch", optarg, 1, 256, false,
                                         "a number from 1 to 256");
            batch_set = true;
            break;
        case O_ARR:
            if (strcmp(optarg, "dma") == 0) {
                o->inline_values = false;
            } else if (strcmp(optarg, "inline") == 0) {
                o->inline_values = true;
            } else {
                bad("--arrival", optarg, "dma or inline");
            }
            break;
        case O_SEED:
            o->seed = num_arg("--seed", optarg, 0, UINT64_MAX, false, "a number from 0 to 2^64-1");
            break;
        case O_JSON:
#ifndef KVFTL_BENCH_HAVE_JSONC
            fprintf(stderr, "kvftl-bench: --json needs json-c, which this build was made without; "
                            "install libjson-c-dev and set the build up again\n");
            exit(2);
#endif
            o->json = true;
            break;
        case O_SLICES:
            o->slices = true;
            break;
        case O_FLOOR:
            o->memory_floor = true;
            break;
        case O_HELP:
            usage(stdout);
            exit(0);
        case O_VERSION:
            kvssd_print_version("kvftl-bench");
            exit(0);
        default:
            if (c >= O_TUNABLE && (size_t)(c - O_TUNABLE) < kvftl_tunable_count) {
                const struct kvftl_tunable *t = &kvftl_tunables[c - O_TUNABLE];
                char flag[64];
                snprintf(flag, sizeof(flag), "--%s", t->prop);
                tunable_arg(o, flag, t, optarg);
                break;
            }
            tool_usage_error("kvftl-bench", NULL, "unknown or incomplete option '%s'",
                             argv[optind - 1]);
            exit(TOOL_EXIT_USAGE);
        }
    }
    free(lo);
    if (optind < argc) {
        tool_usage_error("kvftl-bench", NULL, "unexpected argument '%s'", argv[optind]);
        exit(TOOL_EXIT_USAGE);
    }
    if (o->batch > o->queue_depth) {
        if (batch_set) {
            tool_usage_error("kvftl-bench", NULL,
                             "--batch is %u but the queue depth is %u; a batch holds requests in "
                             "flight at once, so it must be from 1 to %u",
                             o->batch, o->queue_depth, o->queue_depth);
            exit(TOOL_EXIT_USAGE);
        }
        o->batch = o->queue_depth;
    }
    if (o->memory_floor && o->slices) {
        tool_usage_error("kvftl-bench", NULL,
                         "--memory-floor is the floor of the retrieve phase, which --slices "
                         "replaces; give one of them");
        exit(TOOL_EXIT_USAGE);
    }
    if (o->key_bytes < 8) {
        uint64_t space = 1ull << (8 * o->key_bytes);
        if (o->keys > space) {
            tool_usage_error("kvftl-bench", NULL,
                             "--keys is %" PRIu64 " but %u-byte keys allow only %" PRIu64
                             " distinct keys; use fewer keys or longer keys",
                             o->keys, o->key_bytes, space);
            exit(TOOL_EXIT_USAGE);
        }
    }
}

/* ---------------- keys and values ---------------- */

/* A bijection on 64-bit numbers: distinct i give distinct keys, spread over the hash space. */
/*
 * Inline arrival: the transfer commands after the head that a value of
 * --value-bytes takes in the device's full layout (89h head of
 * KVSSD_INLINE_HEAD_FULL_PAYLOAD bytes, 8Dh transfers of
 * KVSSD_INLINE_XFER_FULL_PAYLOAD), each charged fw_inline_fragment_ns.
 */
static uint32_t inline_xfers(const struct opts *o)
{
    if (!o->inline_values || o->value_bytes <= KVSSD_INLINE_HEAD_FULL_PAYLOAD) {
        return 0;
    }
    return (o->value_bytes - KVSSD_INLINE_HEAD_FULL_PAYLOAD + KVSSD_INLINE_XFER_FULL_PAYLOAD - 1) /
           KVSSD_INLINE_XFER_FULL_PAYLOAD;
}

static inline uint64_t scramble(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    x ^= x >> 33;
    return x;
}

static inline void make_key(uint64_t i, uint32_t kb, uint8_t *key)
{
    if (kb >= 8) {
        uint64_t s = scramble(i);
        memcpy(key, &s, 8);
        /* bytes past 8 stay as filled once by the caller */
    } else {
        for (uint32_t b = 0; b < kb; b++) {
            key[kb - 1 - b] = (uint8_t)(i >> (8 * b));
        }
    }
}

static inline void make_value(uint64_t i, uint32_t vb, uint8_t *val)
{
    if (vb >= 8) {
        memcpy(val, &i, 8);
    }
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* User CPU time of the process: the firmware's own work, without the kernel's page faults. */
static double user_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Resident memory of the process now (/proc/self/statm), 0 if unknown. */
static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (!f) {
        return 0;
    }
    if (fscanf(f, "%llu %llu", &size, &resident) != 2) {
        resident = 0;
    }
    fclose(f);
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * The host's cost of memory touched for the first time, in seconds per GiB:
 * 256 MiB of anonymous memory mapped as the NAND backing store is
 * (MAP_NORESERVE, MADV_HUGEPAGE), written once every 4 KiB, unmapped. Run
 * after the phases, so that the memory it frees cannot speed them up. The
 * store phase pays this for every byte of NAND backing it writes first:
 * the kernel zeroes each new page, and a hypervisor may first have to back
 * it. 0 if the mapping fails.
 */
#define TOUCH_PROBE_BYTES (256ull << 20)

static double first_touch_s_per_gib(void)
{
    uint8_t *p = mmap(NULL, TOUCH_PROBE_BYTES, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        return 0;
    }
    madvise(p, TOUCH_PROBE_BYTES, MADV_HUGEPAGE);
    double t = now_s();
    for (uint64_t off = 0; off < TOUCH_PROBE_BYTES; off += 4096) {
        ((volatile uint8_t *)p)[off] = 1;
    }
    t = now_s() - t;
    munmap(p, TOUCH_PROBE_BYTES);
    return t * (double)(1ull << 30) / (double)TOUCH_PROBE_BYTES;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

#define FLOOR_MIN_BYTES (64ull << 20)
#define FLOOR_MAX_WINDOW 256u

/* A probe region's size: @bytes in whole 2 MiB pages, at least FLOOR_MIN_BYTES. */
static uint64_t floor_region_bytes(uint64_t bytes)
{
    uint64_t b = huge_round_up(bytes);
    return b < FLOOR_MIN_BYTES ? FLOOR_MIN_BYTES : b;
}

/*
 * What a dependent load costs this host when the lines it walks lie in few 4
 * KiB pages, and when each lies in a 4 KiB page of its own (--memory-floor). A
 * random Retrieve at 10 M keys touches three random 4 KiB pages of some 400,000
 * (the index slot, the chunk store's page entry, the blob). The difference of
 * the two costs is what address translation adds to a far load: little where
 * the memory is mapped in huge pages all the way down, a walk of the nested
 * page tables on a VM whose host maps its guests' memory in 4 KiB pages
 * (docs/kvftl-bench.md, "Far 4 KiB pages"). Both chains visit the same number
 * of lines, one per 4 KiB page of @region (at most PROBE_MAX_LINES), in one
 * random cycle (Sattolo's algorithm), so they hold the same bytes in the
 * caches: "dense" packs them 64 to a 4 KiB page at the region's start, "sparse"
 * puts each in its own 4 KiB page, at a line offset that varies from page to
 * page (so that the lines do not all fall into one cache set). Each chain is
 * walked once to warm the caches and then PROBE_LOADS times, timed. Writes the
 * chains into @region (all of it written already), and takes a word of scratch
 * per line (at most 4 MiB). ns per load; 0 if @region holds fewer than 64 pages
 * or the scratch cannot be had.
 */
#define PROBE_MAX_LINES (1u << 20) /* 4 GiB of region */
#define PROBE_LOADS 1000000u

static double chase_ns(uint8_t *region, uint64_t region_bytes, bool sparse, uint64_t seed)
{
    uint64_t pages = region_bytes / 4096;
    uint32_t lines = pages < PROBE_MAX_LINES ? (uint32_t)pages : PROBE_MAX_LINES;
    uint32_t *order = lines >= 64 ? calloc(lines, sizeof(*order)) : NULL;
    if (!order) {
        return 0;
    }
#define PROBE_LINE(k)                                                                            \
    (sparse ? region + (uint64_t)(k) * (pages / lines) * 4096 + (scramble((k) + seed) % 64) * 64 \
            : region + (uint64_t)(k) * 64)
    for (uint32_t k = 0; k < lines; k++) {
        order[k] = k;
    }
    for (uint32_t k = lines - 1; k > 0; k--) { /* Sattolo: one cycle through all lines */
        uint32_t r = (uint32_t)(scramble(seed ^ k) % k);
        uint32_t t = order[k];
        order[k] = order[r];
        order[r] = t;
    }
    for (uint32_t k = 0; k < lines; k++) {
        uint8_t *next = PROBE_LINE(order[(k + 1) % lines]);
        memcpy(PROBE_LINE(order[k]), &next, sizeof(next));
    }
    uint8_t *p = PROBE_LINE(order[0]);
#undef PROBE_LINE
    free(order);
    for (uint32_t k = 0; k < lines; k++) {
        memcpy(&p, p, sizeof(p));
    }
    double t = now_s();
    for (uint32_t k = 0; k < PROBE_LOADS; k++) {
        memcpy(&p, p, sizeof(p));
    }
    t = now_s() - t;
    /* p keeps the chain: a compiler may not drop what it returns through */
    return p && t > 0 ? t * 1e9 / PROBE_LOADS : 0;
}

/*
 * The memory floor of a Retrieve on this host (--memory-floor), in requests
 * per second: what a retrieve costs when it does nothing but its two
 * dependent random memory accesses, an index slot and then the record the
 * slot names, overlapped as kvftl_retrieve_batch() overlaps them (a window
 * of @batch requests hashes and hints its slots while the window before
 * reads its slots and hints its records and the one before that reads its
 * records). Region I has the index's size, region S the rest of what the
 * store phase added to the process (page entries and chunks), each at
 * least 64 MiB; both mapped as the firmware maps its memory (anonymous, 2 MiB
 * pages advised), written through before the timed part (an untouched page
 * reads the kernel's one zero page, which would make the probe a cache
 * hit), and unmapped after it. @requests requests, as many as the retrieve
 * phase made. The retrieve's rate over this is the share of a retrieve's
 * time that those two misses account for; the rest is the firmware's own:
 * its instructions, and the further loads its layout needs (the chunk
 * store's page entry, the cache frame). Run after the firmware
 * is closed, so that the run's peak memory stays the firmware's. Then the
 * two dependent-load chases of chase_ns() over region S. All 0 if a mapping
 * fails.
 */
struct memory_floor {
    double ops_per_s; /* the floor of a batched Retrieve */
    double dense_ns; /* a dependent load among lines packed 64 to a 4 KiB page */
    double sparse_ns; /* the same lines, each in a 4 KiB page of its own */
};

static struct memory_floor memory_floor(uint64_t index_bytes, uint64_t store_bytes,
                                        uint64_t requests, uint32_t batch, uint64_t seed)
{
    struct memory_floor f = {0};
    uint64_t ib = floor_region_bytes(index_bytes), sb = floor_region_bytes(store_bytes);
    uint8_t *iraw, *sraw;
    size_t iraw_bytes, sraw_bytes;
    uint8_t *ireg = huge_map(ib, &iraw, &iraw_bytes);
    if (!ireg) {
        return f;
    }
    uint8_t *sreg = huge_map(sb, &sraw, &sraw_bytes);
    if (!sreg) {
        munmap(iraw, iraw_bytes);
        return f;
    }
    uint64_t ilines = ib / 64, slines = sb / 64;
    /* each index line names a random record line; every store line is written */
    for (uint64_t l = 0; l < ilines; l++) {
        uint64_t to = scramble(seed ^ (l * 0x9e3779b97f4a7c15ull)) % slines;
        memcpy(ireg + l * 64, &to, sizeof(to));
    }
    for (uint64_t off = 0; off < sb; off += 4096) {
        sreg[off] = 1;
    }
    uint32_t w = batch < FLOOR_MAX_WINDOW ? batch : FLOOR_MAX_WINDOW;
    uint64_t slot[3][FLOOR_MAX_WINDOW], rec[3][FLOOR_MAX_WINDOW];
    uint64_t windows = (requests + w - 1) / w, sum = 0;
    double t = now_s();
    /* window x: hash and hint its slots; x - 1: read slots, hint records; x - 2: read records */
    for (uint64_t x = 0; x < windows + 2; x++) {
        if (x < windows) {
            uint64_t *sl = slot[x % 3];
            for (uint32_t i = 0; i < w; i++) {
                sl[i] = scramble(seed + x * w + i) % ilines;
                __builtin_prefetch(ireg + sl[i] * 64);
            }
        }
        if (x >= 1 && x - 1 < windows) {
            const uint64_t *sl = slot[(x - 1) % 3];
            uint64_t *rc = rec[(x - 1) % 3];
            for (uint32_t i = 0; i < w; i++) {
                memcpy(&rc[i], ireg + sl[i] * 64, sizeof(rc[i]));
                __builtin_prefetch(sreg + rc[i] * 64);
            }
        }
        if (x >= 2) {
            const uint64_t *rc = rec[(x - 2) % 3];
            for (uint32_t i = 0; i < w; i++) {
                sum += sreg[rc[i] * 64];
            }
        }
    }
    t = now_s() - t;
    /* sum keeps the record loads: a compiler may not drop what it returns through */
    f.ops_per_s = t > 0 && sum != UINT64_MAX ? (double)(windows * w) / t : 0;
    munmap(iraw, iraw_bytes);
    f.dense_ns = chase_ns(sreg, sb, false, seed);
    f.sparse_ns = chase_ns(sreg, sb, true, seed);
    munmap(sraw, sraw_bytes);
    return f;
}

/*
 * Issue 16's targets for the defaults (16 B keys, 64 B values, 10 M keys,
 * 1 KiB placement, a fresh process): printed beside the run's numbers,
 * never asserted.
 */
#define TARGET_STORE_OPS 2000000.0
#define TARGET_RETRIEVE_OPS 6000000.0
#define TARGET_INDEX_BYTES_PER_KEY 24.0

/* ---------------- configuration ---------------- */

/*
 * Size the device for the run: every blob (a 64-byte header allowance, key,
 * value) rounded up to the placement unit (4 KiB for block packing), plus
 * the over-provisioning and a quarter more for GC headroom and index pages.
 */
static void size_device(struct kvftl_config *cfg, const struct opts *o)
{
    uint64_t unit = cfg->packing == KVFTL_PACK_BLOCK ? 4096 : cfg->placement_unit_bytes;
    uint64_t blob = round_up(64 + o->key_bytes + o->value_bytes, unit);
    uint64_t need = o->keys * blob;
    need = need / (100 - cfg->overprovision_percent) * 100;
    need += need / 4;
    uint64_t per_block_row = (uint64_t)cfg->channels * cfg->dies_per_channel *
                             cfg->pages_per_block * cfg->page_size_bytes;
    uint64_t blocks = (need + per_block_row - 1) / per_block_row;
    uint64_t min_blocks = cfg->gc_high_watermark_blocks + 16;
    if (blocks < min_blocks) {
        blocks = min_blocks;
    }
    if (blocks > cfg->blocks_per_die) {
        cfg->blocks_per_die = (uint32_t)blocks;
    }
}

static void fmt_bytes(char *out, size_t n, double b)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < 4) {
        b /= 1024;
        i++;
    }
    snprintf(out, n, "%.1f %s", b, u[i]);
}

/*
 * --json: one object built with json-c (strings escaped by the library),
 * its fields and types the schema of docs/kvftl-bench.md
 * (tests/kvftl/kvftl-bench.schema.json). KVFTL_BENCH_SCHEMA_VERSION changes when a
 * field is removed, renamed or changes meaning; added fields keep it.
 */
#define KVFTL_BENCH_SCHEMA_VERSION 1

#ifdef KVFTL_BENCH_HAVE_JSONC
static void j_u64(json_object *o, const char *k, uint64_t v)
{
    json_object_object_add(o, k, json_object_new_uint64(v));
}

/* A number printed with @decimals digits after the point (rates: 0, seconds: 3). */
static void j_num(json_object *o, const char *k, double v, int decimals)
{
    char text[64];
    snprintf(text, sizeof(text), "%.*f", decimals, v);
    json_object_object_add(o, k, json_object_new_double_s(v, text));
}

static void j_str(json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, json_object_new_string(v));
}

static void j_bool(json_object *o, const char *k, bool v)
{
    json_object_object_add(o, k, json_object_new_boolean(v));
}

static int bench_argc; /* main()'s, for the provenance */
static char **bench_argv;

/*
 * The fields every object starts with: which schema, which tool, which
 * build, and the provenance (include/bench/provenance.h) whose device is
 * the firmware this run configured (@used, preset @preset), as the device
 * would report it in its configuration log page.
 */
static json_object *j_begin(const char *command_set, const char *preset,
                            const struct kvftl_config *used, uint64_t capacity_bytes)
{
    json_object *o = json_object_new_object();
    struct kvssd_config_log l;
    unsigned p = 0;

    while (p < KVFTL_PRESETS && strcmp(kvftl_preset_names[p], preset) != 0) {
        p++;
    }
    kvssd_config_log_fill(&l, used, KVSSD_FIRMWARE_REVISION, p, false, capacity_bytes);
    j_u64(o, "schema_version", KVFTL_BENCH_SCHEMA_VERSION);
    json_object_object_add(
        o, "provenance",
        provenance_json("kvftl-bench", bench_argc, bench_argv, provenance_device_json(&l)));
    j_str(o, "tool", "kvftl-bench");
    j_str(o, "version", KVSSD_VERSION);
    j_str(o, "command_set", command_set);
    return o;
}

static void j_print(json_object *o)
{
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}
#endif

struct phase {
    double wall_s;
    double cpu_s; /* user + system CPU time of the process during the phase */
    double user_s; /* user CPU time alone (block mode: without the kernel zeroing new pages) */
    uint64_t ops, errors;
    uint64_t first_arrival_ns, last_done_ns;
};

/* The host clocks when a phase began, for phase_clock_stop(). */
struct phase_clock {
    double cpu_s, user_s, wall_s;
};

static struct phase_clock phase_clock_start(void)
{
    struct phase_clock c;
    c.cpu_s = cpu_s();
    c.user_s = user_cpu_s();
    c.wall_s = now_s();
    return c;
}

/* The host time @p took since @c. */
static void phase_clock_stop(const struct phase_clock *c, struct phase *p)
{
    p->wall_s = now_s() - c->wall_s;
    p->cpu_s = cpu_s() - c->cpu_s;
    p->user_s = user_cpu_s() - c->user_s;
}

/*
 * Request @j of @p completed at @done_ns: the next request of its queue
 * slot (of @depth in @ring) arrives then.
 */
static void phase_done(struct phase *p, uint64_t *ring, uint32_t depth, uint64_t j,
                       uint64_t done_ns)
{
    ring[j % depth] = done_ns;
    if (done_ns > p->last_done_ns) {
        p->last_done_ns = done_ns;
    }
}

static double ops_per_s(const struct phase *p)
{
    return p->wall_s > 0 ? (double)p->ops / p->wall_s : 0;
}

static double ops_per_cpu_s(const struct phase *p)
{
    return p->cpu_s > 0 ? (double)p->ops / p->cpu_s : 0;
}

static double ops_per_user_s(const struct phase *p)
{
    return p->user_s > 0 ? (double)p->ops / p->user_s : 0;
}

static double sim_span_s(const struct phase *p)
{
    return (double)(p->last_done_ns - p->first_arrival_ns) / 1e9;
}

static double sim_ops_per_s(const struct phase *p)
{
    double s = sim_span_s(p);
    return s > 0 ? (double)p->ops / s : 0;
}

/* ---------------- --slices: long walks in device slices ---------------- */

/* The host buffer of one command: what the device's data pointer reaches. */
struct host_buf {
    uint8_t *bytes;
    uint32_t len;
};

static uint16_t host_from(void *opaque, uint64_t off, void *buf, uint32_t len)
{
    struct host_buf *h = opaque;
    if (off > h->len || len > h->len - off) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(buf, h->bytes + off, len);
    return KVSSD_SC_SUCCESS;
}

static uint16_t host_to(void *opaque, uint64_t off, const void *buf, uint32_t len)
{
    struct host_buf *h = opaque;
    if (off > h->len || len > h->len - off) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(h->bytes + off, buf, len);
    return KVSSD_SC_SUCCESS;
}

/* CPU time of this thread: a slice's own work, even on a machine shared with other jobs. */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct slice_stats {
    double total_s, worst_s, worst_cpu_s;
    uint64_t slices, worst_at;
};

/* Account one slice that took @wall seconds (@cpu of CPU). */
static void slice_add(struct slice_stats *st, double wall, double cpu)
{
    if (wall > st->worst_s) {
        st->worst_s = wall;
    }
    if (cpu > st->worst_cpu_s) {
        st->worst_cpu_s = cpu;
        st->worst_at = st->slices;
    }
    st->slices++;
}

static void slice_report(const char *what, const struct slice_stats *st, const char *result)
{
    printf("%-32s total %8.3f s   worst slice %7.3f ms (CPU %7.3f ms, slice %" PRIu64
           ") over %7" PRIu64 " slices   %s\n",
           what, st->total_s, st->worst_s * 1e3, st->worst_cpu_s * 1e3, st->worst_at, st->slices,
           result);
}

/*
 * Run one KV command the way the transport does: kvssd_kv_execute() with
 * may_park, again and again with the same SQE and state while it is in
 * progress; time every call.
 */
static struct kvssd_req run_parked(struct kvssd_ns *ns, const struct kvssd_sqe *sqe,
                                   struct host_buf *hb, uint64_t *now, struct slice_stats *st)
{
    struct kvssd_req req = {.sqe = sqe, .may_park = true};
    req.dptr = (struct kvssd_dptr){.opaque = hb, .from_host = host_from, .to_host = host_to};
    double t0 = now_s();
    do {
        req.now_ns = *now;
        double a = now_s(), ac = thread_cpu_s();
        kvssd_kv_execute(ns, &req);
        slice_add(st, now_s() - a, thread_cpu_s() - ac);
        if (req.done_ns > *now) {
            *now = req.done_ns;
        }
    } while (req.in_progress);
    st->total_s = now_s() - t0;
    return req;
}

static int run_slices(struct kvftl *ftl, const struct opts *o, uint64_t now)
{
    char err[512], result[128];
    struct kvssd_ns *ns = kvssd_ns_new(ftl, NULL, NULL, err, sizeof(err));
    if (!ns) {
        fprintf(stderr, "kvftl-bench: kvssd_ns_new: %s\n", err);
        return 1;
    }
    /* the largest host buffer the device uses: List keeps the most keys then */
    struct host_buf hb = {.len = KVFTL_VALUE_MAX_BYTES + 4096};
    hb.bytes = calloc(1, hb.len);
    if (!hb.bytes) {
        fprintf(stderr, "kvftl-bench: out of memory\n");
        return 1;
    }
    int rc = 0;
    printf("\nlong commands in device slices (List/Iter Read: index pages of %u slots per "
           "slice, List output: %u keys per slice; FTL check: %u KiB of index pages and blobs "
           "per slice)\n",
           KVSSD_SLICE_INDEX_ENTRIES, KVSSD_SLICE_LIST_KEYS, KVSSD_SLICE_CHECK_BYTES >> 10);

    /* List (06h) from the first key into a 2 MiB + 4 KiB buffer */
    struct slice_stats ls = {0};
    struct kvssd_sqe sqe = {0};
    sqe.cdw[0] = KVSSD_OPC_LIST;
    sqe.cdw[1] = 1;
    sqe.cdw[10] = hb.len;
    struct kvssd_req r = run_parked(ns, &sqe, &hb, &now, &ls);
    uint64_t want = (hb.len - KVSSD_LIST_HEADER_BYTES) / kvssd_list_entry_bytes(o->key_bytes);
    if (want > o->keys) {
        want = o->keys;
    }
    snprintf(result, sizeof(result), "status %04x, %u keys (expected %" PRIu64 ")", r.status, r.dw0,
             want);
    rc |= r.status != KVSSD_SC_SUCCESS || r.dw0 != want;
    slice_report("List", &ls, result);

    /* Iter Open "\xff\xff\xff\xff" (no key of this run starts so), then one Iter Read */
    struct slice_stats is = {0}, unused = {0};
    memset(&sqe, 0, sizeof(sqe));
    sqe.cdw[0] = KVSSD_OPC_ITER_OPEN;
    sqe.cdw[1] = 1;
    sqe.cdw[10] = 0xffffffffu;
    sqe.cdw[11] = 0xffffffffu;
    r = run_parked(ns, &sqe, &hb, &now, &unused);
    uint32_t handle = r.dw0;
    rc |= r.status != KVSSD_SC_SUCCESS;
    memset(&sqe, 0, sizeof(sqe));
    sqe.cdw[0] = KVSSD_OPC_ITER_READ;
    sqe.cdw[1] = 1;
    sqe.cdw[10] = hb.len;
    sqe.cdw[11] = handle;
    r = run_parked(ns, &sqe, &hb, &now, &is);
    snprintf(result, sizeof(result), "status %04x (expected %04x Iterator End), %u entries",
             r.status, KVSSD_SC_ITERATOR_END, r.dw0);
    rc |= r.status != KVSSD_SC_ITERATOR_END;
    slice_report("Iter Read, prefix matching none", &is, result);
    memset(&sqe, 0, sizeof(sqe));
    sqe.cdw[0] = KVSSD_OPC_ITER_CLOSE;
    sqe.cdw[1] = 1;
    sqe.cdw[10] = handle;
    run_parked(ns, &sqe, &hb, &now, &unused);

    /* FTL check (C4h): the firmware steps with the admin command's budget */
    struct slice_stats cs = {0};
    double t0 = now_s();
    struct kvftl_check_walk *w = kvftl_check_begin(ftl);
    int crc;
    do {
        double a = now_s(), ac = thread_cpu_s();
        crc = kvftl_check_step(ftl, w, KVSSD_SLICE_CHECK_BYTES, err, sizeof(err));
        slice_add(&cs, now_s() - a, thread_cpu_s() - ac);
    } while (crc == 1);
    uint64_t pages, blobs, bytes;
    kvftl_check_progress(w, &pages, &blobs, &bytes);
    kvftl_check_end(w);
    cs.total_s = now_s() - t0;
    snprintf(result, sizeof(result), "%s, %" PRIu64 " index pages, %" PRIu64 " blobs",
             crc == 0 ? "passed" : "FAILED", pages, blobs);
    rc |= crc != 0;
    slice_report("FTL check (C4h)", &cs, result);
    if (crc != 0) {
        fprintf(stderr, "kvftl-bench: FTL check: %s\n", err);
    }
    kvssd_ns_free(ns);
    free(hb.bytes);
    return rc;
}

/* ---------------- --command-set nvm: the block personality ---------------- */

#define BLOCK_DEFAULT_UNITS 500000u

/* The device for @units 4 KiB units: the map's pages, over-provisioning and 25% headroom. */
static void size_block_device(struct kvftl_config *cfg, uint64_t units)
{
    uint64_t need = units * (KVFTL_BLOCK_UNIT_BYTES + 8);
    need = need / (100 - cfg->overprovision_percent) * 100;
    need += need / 4;
    uint64_t per_block_row = (uint64_t)cfg->channels * cfg->dies_per_channel *
                             cfg->pages_per_block * cfg->page_size_bytes;
    uint64_t blocks = (need + per_block_row - 1) / per_block_row + cfg->gc_low_watermark_blocks + 2;
    uint64_t min_blocks = cfg->gc_high_watermark_blocks + 16;
    if (blocks < min_blocks) {
        blocks = min_blocks;
    }
    if (blocks > cfg->blocks_per_die) {
        cfg->blocks_per_die = (uint32_t)blocks;
    }
}

/* A pseudo-random permutation of 0..n-1: j -> (a*j + c) mod n, a coprime to n. */
struct perm {
    uint64_t a, c, n, i;
};

static struct perm perm_make(uint64_t seed, uint64_t n)
{
    uint64_t a = (scramble(seed) | 1) % n;
    if (!a) {
        a = 1;
    }
    while (!key_order_coprime(a, n)) {
        a++;
    }
    return (struct perm){.a = a, .c = scramble(seed + 1) % n, .n = n, .i = scramble(seed + 1) % n};
}

static uint64_t perm_next(struct perm *p)
{
    uint64_t v = p->i;
    p->i += p->a;
    if (p->i >= p->n) {
        p->i -= p->n;
    }
    return v;
}

/*
 * A block run's device and buffers: the unit each write sends (the seed's
 * pattern, its unit number in the first 8 bytes), a batch of reads, and
 * the queue-depth ring both phases chain their requests through.
 */
struct block_run {
    struct kvftl *ftl;
    uint32_t lb, per_unit; /* LBA bytes; LBAs per 4 KiB unit */
    uint64_t units;
    uint64_t *ring; /* [queue_depth]: the completion time of each slot's last request */
    uint8_t *buf;
    uint8_t *bbuf; /* [batch] units read */
    uint64_t *bunit; /* the unit number of each read of a batch */
    struct kvftl_block_read_req *breq;
    struct kvftl_cpl *bcpl;
    enum kvftl_status first_err; /* the first failed request's, either phase */
};

/* What a block run's report reads. */
struct block_result {
    struct phase wr, rd; /* the write phase, the read phase */
    uint64_t mismatches; /* reads that returned another unit's bytes */
    struct kvftl_stats s1, s2; /* after the write phase, after the read phase */
    struct rusage ru;
    double host_per_page; /* map host memory per mapped page */
    double host_per_unit; /* ... per unit of the namespace */
    uint64_t read_misses; /* map cache misses of the read phase */
};

/* Write every unit once, in one pseudo-random order, one kvftl_block_write() each. */
static void block_write_phase(struct block_run *r, const struct opts *o, struct phase *wr)
{
    struct kvftl_cpl cpl;
    *wr = (struct phase){.ops = r->units};
    struct perm p = perm_make(o->seed, r->units);
    struct phase_clock clk = phase_clock_start();
    for (uint64_t j = 0; j < r->units; j++) {
        uint64_t u = perm_next(&p);
        memcpy(r->buf, &u, 8);
        kvftl_block_write(r->ftl, u * r->per_unit, r->per_unit, r->buf, false,
                          r->ring[j % o->queue_depth], &cpl);
        if (cpl.status != KVFTL_OK && !wr->errors++) {
            r->first_err = cpl.status;
        }
        phase_done(wr, r->ring, o->queue_depth, j, cpl.done_ns);
    }
    phase_clock_stop(&clk, wr);
}

/*
 * Read every unit once in another order, each checked against its number;
 * --batch reads per kvftl_block_read_batch() call (1: kvftl_block_read()),
 * as the KV phase.
 */
static void block_read_phase(struct block_run *r, const struct opts *o, struct block_result *res)
{
    struct phase *rd = &res->rd;
    *rd = (struct phase){.ops = r->units,
                         .first_arrival_ns = res->wr.last_done_ns,
                         .last_done_ns = res->wr.last_done_ns};
    for (uint32_t q = 0; q < o->queue_depth; q++) {
        r->ring[q] = res->wr.last_done_ns;
    }
    struct perm p = perm_make(o->seed + 2, r->units);
    struct phase_clock clk = phase_clock_start();
    for (uint64_t j = 0; j < r->units; j += o->batch) {
        uint32_t nb = r->units - j < o->batch ? (uint32_t)(r->units - j) : o->batch;
        for (uint32_t k = 0; k < nb; k++) {
            uint64_t u = perm_next(&p);
            r->breq[k] = (struct kvftl_block_read_req){
                .slba = u * r->per_unit,
                .nlb = r->per_unit,
                .buf = r->bbuf + (size_t)k * KVFTL_BLOCK_UNIT_BYTES,
                .arrival_ns = r->ring[(j + k) % o->queue_depth]};
            r->bunit[k] = u;
        }
        if (nb == 1) {
            kvftl_block_read(r->ftl, r->breq[0].slba, r->breq[0].nlb, r->breq[0].buf,
                             r->breq[0].arrival_ns, &r->bcpl[0]);
        } else {
            kvftl_block_read_batch(r->ftl, r->breq, r->bcpl, nb);
        }
        for (uint32_t k = 0; k < nb; k++) {
            if (r->bcpl[k].status != KVFTL_OK) {
                if (!rd->errors++) {
                    r->first_err = r->bcpl[k].status;
                }
            } else if (memcmp(r->breq[k].buf, &r->bunit[k], 8) != 0) {
                res->mismatches++;
            }
            phase_done(rd, r->ring, o->queue_depth, j + k, r->bcpl[k].done_ns);
        }
    }
    phase_clock_stop(&clk, rd);
}

#ifdef KVFTL_BENCH_HAVE_JSONC
/* --json: the block run as one object (docs/kvftl-bench.schema.json). */
static void block_report_json(const struct block_run *r, const struct opts *o,
                              const struct block_result *res)
{
    const struct phase *wr = &res->wr, *rd = &res->rd;
    const struct kvftl_stats *s2 = &res->s2;
    json_object *j = j_begin("nvm", o->preset, kvftl_get_config(r->ftl),
                             kvftl_block_lbas(r->ftl) * r->lb);
    j_u64(j, "units", r->units);
    j_u64(j, "lba_bytes", r->lb);
    j_str(j, "preset", o->preset);
    j_u64(j, "namespace_lbas", kvftl_block_lbas(r->ftl));
    j_u64(j, "index_dram_bytes", kvftl_get_config(r->ftl)->index_dram_bytes);
    j_u64(j, "queue_depth", o->queue_depth);
    j_u64(j, "batch", o->batch);
    j_u64(j, "seed", o->seed);
    j_num(j, "write_ops_per_s", ops_per_s(wr), 0);
    j_num(j, "read_ops_per_s", ops_per_s(rd), 0);
    j_num(j, "write_ops_per_cpu_s", ops_per_cpu_s(wr), 0);
    j_num(j, "read_ops_per_cpu_s", ops_per_cpu_s(rd), 0);
    j_num(j, "write_ops_per_user_cpu_s", ops_per_user_s(wr), 0);
    j_num(j, "read_ops_per_user_cpu_s", ops_per_user_s(rd), 0);
    j_num(j, "write_wall_s", wr->wall_s, 3);
    j_num(j, "read_wall_s", rd->wall_s, 3);
    j_num(j, "host_bytes_per_mapped_page", res->host_per_page, 2);
    j_num(j, "host_bytes_per_namespace_unit", res->host_per_unit, 2);
    j_u64(j, "map_host_bytes", res->s1.index_host_bytes);
    j_u64(j, "read_map_cache_misses", res->read_misses);
    j_num(j, "sim_write_ops_per_s", sim_ops_per_s(wr), 0);
    j_num(j, "sim_read_ops_per_s", sim_ops_per_s(rd), 0);
    j_u64(j, "write_p50_ns", s2->latency[KVFTL_OP_STORE].p50_ns);
    j_u64(j, "write_p99_ns", s2->latency[KVFTL_OP_STORE].p99_ns);
    j_u64(j, "read_p50_ns", s2->latency[KVFTL_OP_RETRIEVE].p50_ns);
    j_u64(j, "read_p99_ns", s2->latency[KVFTL_OP_RETRIEVE].p99_ns);
    j_num(j, "write_amplification", s2->write_amplification, 3);
    j_u64(j, "gc_runs", s2->gc_runs);
    j_u64(j, "write_errors", wr->errors);
    j_u64(j, "read_errors", rd->errors);
    j_u64(j, "read_mismatches", res->mismatches);
    j_u64(j, "max_rss_bytes", (uint64_t)res->ru.ru_maxrss * 1024);
    j_print(j);
}
#endif

/* The block run's text report: its parameters, a row per phase, the map and the NAND. */
static void block_report_text(const struct block_run *r, const struct opts *o,
                              const struct block_result *res)
{
    const struct phase *wr = &res->wr, *rd = &res->rd;
    const struct kvftl_stats *s2 = &res->s2;
    const struct kvftl_config *used = kvftl_get_config(r->ftl);
    char map[32], rss[32], budget[32];
    fmt_bytes(map, sizeof(map), (double)res->s1.index_host_bytes);
    fmt_bytes(rss, sizeof(rss), (double)res->ru.ru_maxrss * 1024);
    fmt_bytes(budget, sizeof(budget), (double)used->index_dram_bytes);
    printf("kvftl-bench: nvm personality, %" PRIu64 " units of 4 KiB, %u B LBAs "
           "(namespace %" PRIu64 " LBAs), preset %s, queue depth %u, batch %u, seed %" PRIu64 "\n",
           r->units, r->lb, kvftl_block_lbas(r->ftl), o->preset, o->queue_depth, o->batch, o->seed);
    printf("device %u x %u dies, %u blocks/die, %u pages/block, %u B pages; map DRAM budget "
           "%s\n\n",
           used->channels, used->dies_per_channel, used->blocks_per_die, used->pages_per_block,
           used->page_size_bytes, budget);
    printf("%-10s %12s %10s %14s %9s %14s %9s %14s %12s %12s %7s\n", "phase", "host ops/s",
           "wall s", "ops/CPU-s", "CPU s", "ops/user-s", "user s", "sim ops/s", "sim p50 ns",
           "sim p99 ns", "errors");
    printf("%-10s %12.0f %10.3f %14.0f %9.3f %14.0f %9.3f %14.0f %12" PRIu64 " %12" PRIu64
           " %7" PRIu64 "\n",
           "write 4K", ops_per_s(wr), wr->wall_s, ops_per_cpu_s(wr), wr->cpu_s, ops_per_user_s(wr),
           wr->user_s, sim_ops_per_s(wr), s2->latency[KVFTL_OP_STORE].p50_ns,
           s2->latency[KVFTL_OP_STORE].p99_ns, wr->errors);
    printf("%-10s %12.0f %10.3f %14.0f %9.3f %14.0f %9.3f %14.0f %12" PRIu64 " %12" PRIu64
           " %7" PRIu64 "\n",
           "read 4K", ops_per_s(rd), rd->wall_s, ops_per_cpu_s(rd), rd->cpu_s, ops_per_user_s(rd),
           rd->user_s, sim_ops_per_s(rd), s2->latency[KVFTL_OP_RETRIEVE].p50_ns,
           s2->latency[KVFTL_OP_RETRIEVE].p99_ns, rd->errors + res->mismatches);
    printf("\nmap host memory        %s = %.2f bytes per mapped page, %.2f per namespace unit "
           "(%s during reads: %" PRIu64 " map cache misses)\n",
           map, res->host_per_page, res->host_per_unit,
           res->read_misses ? "NOT fully cached" : "fully cached", res->read_misses);
    printf("write amplification    %.3f   GC runs %" PRIu64 "\n", s2->write_amplification,
           s2->gc_runs);
    printf("simulated time         %.3f s   max RSS %s\n", (double)s2->sim_now_ns / 1e9, rss);
}

/*
 * The block mode (--command-set nvm): write every unit once in one
 * pseudo-random order, then read each once in another and check the
 * number; closed loop at --queue-depth in simulated time, as the KV phases.
 */
static int run_block(struct kvftl *ftl, const struct opts *o, uint64_t units)
{
    const uint32_t lb = kvftl_get_config(ftl)->lba_bytes;
    struct block_run r = {.ftl = ftl,
                          .lb = lb,
                          .per_unit = KVFTL_BLOCK_UNIT_BYTES / lb,
                          .units = units,
                          .ring = calloc(o->queue_depth, sizeof(uint64_t)),
                          .buf = calloc(1, KVFTL_BLOCK_UNIT_BYTES),
                          .bbuf = calloc(o->batch, KVFTL_BLOCK_UNIT_BYTES),
                          .bunit = calloc(o->batch, sizeof(uint64_t)),
                          .breq = calloc(o->batch, sizeof(struct kvftl_block_read_req)),
                          .bcpl = calloc(o->batch, sizeof(struct kvftl_cpl))};
    int rc = 1;
    if (!r.ring || !r.buf || !r.bbuf || !r.bunit || !r.breq || !r.bcpl) {
        fprintf(stderr, "kvftl-bench: out of memory\n");
        goto out; /* frees what was allocated */
    }
    for (uint32_t i = 0; i < KVFTL_BLOCK_UNIT_BYTES; i++) {
        r.buf[i] = (uint8_t)(o->seed + i * 131);
    }
    struct block_result res = {0};
    block_write_phase(&r, o, &res.wr);
    kvftl_stats_get(ftl, &res.s1);
    block_read_phase(&r, o, &res);
    kvftl_stats_get(ftl, &res.s2);
    if (res.wr.errors || res.rd.errors || res.mismatches) {
        fprintf(stderr,
                "kvftl-bench: %" PRIu64 " writes and %" PRIu64 " reads failed (first status %s), "
                "%" PRIu64 " reads returned wrong bytes\n",
                res.wr.errors, res.rd.errors, kvftl_status_name(r.first_err), res.mismatches);
    }
    res.host_per_page = res.s1.live_keys
                            ? (double)res.s1.index_host_bytes / (double)res.s1.live_keys
                            : 0;
    uint64_t ns_units = kvftl_block_lbas(ftl) / r.per_unit;
    res.host_per_unit = ns_units ? (double)res.s1.index_host_bytes / (double)ns_units : 0;
    res.read_misses = res.s2.index_cache_misses - res.s1.index_cache_misses;
    getrusage(RUSAGE_SELF, &res.ru);
    if (o->json) {
#ifdef KVFTL_BENCH_HAVE_JSONC
        block_report_json(&r, o, &res);
#endif
    } else {
        block_report_text(&r, o, &res);
    }
    rc = res.wr.errors || res.rd.errors || res.mismatches ? 1 : 0;
out:
    free(r.ring);
    free(r.buf);
    free(r.bbuf);
    free(r.bunit);
    free(r.breq);
    free(r.bcpl);
    return rc;
}

/*
 * The firmware configuration of a run: the preset, then every tunable flag
 * given. Returns whether --index-dram-bytes was left unset (the run sizes
 * it to cache the whole index).
 */
static bool config_from_opts(struct kvftl_config *cfg, struct opts *o)
{
    kvftl_config_preset(cfg, o->preset);
    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        if (o->tunable_text[i]) {
            kvftl_tunable_parse(cfg, &kvftl_tunables[i], kvftl_tunables[i].prop, o->tunable_text[i],
                                NULL, 0); /* checked by tunable_arg() */
        }
    }
    if (!o->tunable_text[kvftl_tunable_find("index") - kvftl_tunables]) {
        kvftl_config_image_index(cfg); /* an existing --image keeps its design */
    }
    bool auto_index = !o->tunable_text[kvftl_tunable_find("index_dram_bytes") - kvftl_tunables];
    /* the options' texts are in cfg now: no return below has them to free */
    free(o->tunable_text);
    o->tunable_text = NULL;
    return auto_index;
}

/* --command-set nvm: size and open the block device, then run_block(). Returns the exit status. */
static int block_main(struct kvftl_config *cfg, const struct opts *o, bool auto_index)
{
    uint64_t units = o->keys_set ? o->keys : BLOCK_DEFAULT_UNITS;
    size_block_device(cfg, units);
    if (auto_index) {
        /* enough for the whole map: 4 bytes per unit and the pages' headers */
        cfg->index_dram_bytes = units * 8 + (64ull << 20);
    }
    char berr[512];
    if (kvftl_config_check(cfg, berr, sizeof(berr)) != 0) {
        tool_usage_error("kvftl-bench", NULL,
                         "the device configuration for this run is invalid: %s", berr);
        return TOOL_EXIT_USAGE;
    }
    struct kvftl *bftl = kvftl_open(cfg, berr, sizeof(berr));
    if (!bftl) {
        fprintf(stderr, "kvftl-bench: kvftl_open: %s\n", berr);
        return 1;
    }
    uint64_t per_unit = KVFTL_BLOCK_UNIT_BYTES / cfg->lba_bytes;
    if (kvftl_block_lbas(bftl) / per_unit < units) {
        fprintf(stderr,
                "kvftl-bench: the namespace holds %" PRIu64 " units, fewer than %" PRIu64 "\n",
                kvftl_block_lbas(bftl) / per_unit, units);
        kvftl_close(bftl);
        return 1;
    }
    int brc = run_block(bftl, o, units);
    kvftl_close(bftl);
    return brc;
}

/*
 * The KV device of a run: sized for --keys (size_device()), its index
 * cached whole unless --index-dram-bytes was given, max_keys at least
 * --keys. NULL after a sentence on stderr, with *@rc the exit status.
 */
static struct kvftl *kv_open(struct kvftl_config *cfg, const struct opts *o, bool auto_index,
                             int *rc)
{
    size_device(cfg, o);
    /* Enough to cache the whole index: 256 bytes of index page per key is far above any layout. */
    if (auto_index) {
        cfg->index_dram_bytes = o->keys * 256 + (64ull << 20);
    }
    if (cfg->max_keys && cfg->max_keys < o->keys) {
        cfg->max_keys = o->keys;
    }
    char err[512];
    *rc = TOOL_EXIT_USAGE;
    if (kvftl_config_check(cfg, err, sizeof(err)) != 0) {
        tool_usage_error("kvftl-bench", NULL,
                         "the device configuration for this run is invalid: %s", err);
        return NULL;
    }
    *rc = 1;
    struct kvftl *ftl = kvftl_open(cfg, err, sizeof(err));
    if (!ftl) {
        fprintf(stderr, "kvftl-bench: kvftl_open: %s\n", err);
        return NULL;
    }
    const struct kvftl_config *used = kvftl_get_config(ftl);
    if (used->max_keys && used->max_keys < o->keys) {
        kvftl_close(ftl);
        cfg->max_keys = o->keys;
        ftl = kvftl_open(cfg, err, sizeof(err));
        if (!ftl) {
            fprintf(stderr, "kvftl-bench: kvftl_open with max_keys %" PRIu64 ": %s\n", o->keys,
                    err);
            return NULL;
        }
    }
    *rc = 0;
    return ftl;
}

/*
 * A KV run's device and the buffers both phases share. Both phases go in
 * batches of --batch requests: request j arrives at the completion of
 * request j - depth (ring), known for the whole batch since a batch is
 * never larger than the queue depth. breq[k] reads into bbufs the key that
 * sreq[k] names in bkeys.
 */
struct kv_run {
    struct kvftl *ftl;
    const struct kvftl_config *used;
    uint8_t *val; /* the value pattern, --value-bytes */
    uint64_t *ring; /* [queue_depth]: the completion time of each slot's last request */
    uint8_t *bkeys, *bvals, *bbufs;
    uint64_t *bidx; /* the key number of each Retrieve of a batch */
    struct kvftl_store_req *sreq;
    struct kvftl_retrieve_req *breq;
    struct kvftl_cpl *bcpl;
    enum kvftl_status first_err_status; /* the first failed request's, either phase */
};

/* The buffers of @r, the batch's requests pointing into them; false (said on stderr) if out of
 * memory. */
static bool kv_run_alloc(struct kv_run *r, const struct opts *o)
{
    r->val = calloc(1, o->value_bytes + 8);
    r->ring = calloc(o->queue_depth, sizeof(uint64_t));
    r->bkeys = calloc(o->batch, KVFTL_KEY_MAX_BYTES);
    r->bvals = calloc(o->batch, (size_t)o->value_bytes + 8);
    r->bbufs = calloc(o->batch, (size_t)o->value_bytes + 8);
    r->bidx = calloc(o->batch, sizeof(uint64_t));
    r->sreq = calloc(o->batch, sizeof(*r->sreq));
    r->breq = calloc(o->batch, sizeof(*r->breq));
    r->bcpl = calloc(o->batch, sizeof(*r->bcpl));
    if (!r->val || !r->ring || !r->bkeys || !r->bvals || !r->bbufs || !r->bidx || !r->sreq ||
        !r->breq || !r->bcpl) {
        fprintf(stderr, "kvftl-bench: out of memory\n");
        return false;
    }
    for (uint32_t i = 0; i < o->value_bytes; i++) {
        r->val[i] = (uint8_t)(o->seed + i * 131);
    }
    memset(r->bkeys, 0x6b, (size_t)o->batch * KVFTL_KEY_MAX_BYTES);
    for (uint32_t k = 0; k < o->batch; k++) {
        uint8_t *v = r->bvals + (size_t)k * (o->value_bytes + 8);
        memcpy(v, r->val, o->value_bytes);
        r->sreq[k] = (struct kvftl_store_req){.key = r->bkeys + (size_t)k * KVFTL_KEY_MAX_BYTES,
                                              .key_bytes = o->key_bytes,
                                              .value = v,
                                              .value_bytes = o->value_bytes,
                                              .inline_bytes = o->inline_values ? o->value_bytes : 0,
                                              .inline_xfer_commands = inline_xfers(o)};
        r->breq[k] = (struct kvftl_retrieve_req){.key = r->sreq[k].key,
                                                 .key_bytes = o->key_bytes,
                                                 .buf = r->bbufs + (size_t)k * (o->value_bytes + 8),
                                                 .buf_bytes = o->value_bytes};
    }
    return true;
}

/* Close @r's device (an --image is closed cleanly, with its checkpoint) and free its buffers. */
static void kv_run_free(struct kv_run *r)
{
    kvftl_close(r->ftl);
    free(r->val);
    free(r->ring);
    free(r->bkeys);
    free(r->bvals);
    free(r->bbufs);
    free(r->bidx);
    free(r->sreq);
    free(r->breq);
    free(r->bcpl);
}

/* What a KV run's report reads. */
struct kv_result {
    struct phase st, rt; /* the store phase, the retrieve phase */
    uint64_t mismatches; /* Retrieves that returned another key's bytes */
    uint64_t store_rss_growth; /* memory the store phase first-touched */
    struct kvftl_stats s1, s2; /* after the store phase, after the retrieve phase */
    struct kvftl_config used; /* the device's, kept past its close */
    double touch_s_per_gib; /* first_touch_s_per_gib() after the run */
    struct rusage ru;
    double host_bytes_per_key; /* index host memory per live key */
    uint64_t pair_bytes; /* key + value */
    uint64_t retrieve_misses; /* index cache misses of the retrieve phase */
    uint64_t nand_bytes;
    bool fully_cached; /* no index cache miss while retrieving */
    struct memory_floor floor; /* --memory-floor */
    uint64_t floor_store_bytes; /* the store phase's growth beyond the index */
};

/* Phase 1: store every key once. Returns the memory the phase first-touched. */
static uint64_t store_phase(struct kv_run *r, const struct opts *o, struct phase *st)
{
    *st = (struct phase){.ops = o->keys, .first_arrival_ns = 0};
    uint64_t rss0 = rss_bytes();
    struct phase_clock clk = phase_clock_start();
    for (uint64_t j = 0; j < o->keys; j += o->batch) {
        uint32_t nb = o->keys - j < o->batch ? (uint32_t)(o->keys - j) : o->batch;
        for (uint32_t k = 0; k < nb; k++) {
            make_key(j + k, o->key_bytes, (uint8_t *)r->sreq[k].key);
            make_value(j + k, o->value_bytes, (uint8_t *)r->sreq[k].value);
            r->sreq[k].arrival_ns = r->ring[(j + k) % o->queue_depth];
        }
        if (nb == 1) {
            kvftl_store(r->ftl, &r->sreq[0], &r->bcpl[0]);
        } else {
            kvftl_store_batch(r->ftl, r->sreq, r->bcpl, nb);
        }
        for (uint32_t k = 0; k < nb; k++) {
            const struct kvftl_cpl *cp = &r->bcpl[k];
            if (cp->status != KVFTL_OK && !st->errors++) {
                r->first_err_status = cp->status;
            }
            phase_done(st, r->ring, o->queue_depth, j + k, cp->done_ns);
        }
    }
    phase_clock_stop(&clk, st);
    uint64_t rss1 = rss_bytes();
    if (st->errors) {
        fprintf(stderr, "kvftl-bench: %" PRIu64 " stores failed (first status %s)\n", st->errors,
                kvftl_status_name(r->first_err_status));
    }
    return rss1 > rss0 ? rss1 - rss0 : 0;
}

/*
 * Phase 2: retrieve every key, in the order j -> (a*j + c) mod N (a coprime
 * to N), each checked against its number in the value's first 8 bytes.
 */
static void retrieve_phase(struct kv_run *r, const struct opts *o, struct kv_result *res)
{
    uint64_t a = (scramble(o->seed) | 1) % o->keys;
    if (!a) {
        a = 1;
    }
    while (!key_order_coprime(a, o->keys)) {
        a++;
    }
    uint64_t c = scramble(o->seed + 1) % o->keys;
    struct phase *rt = &res->rt;
    *rt = (struct phase){.ops = o->keys,
                         .first_arrival_ns = res->st.last_done_ns,
                         .last_done_ns = res->st.last_done_ns};
    for (uint32_t q = 0; q < o->queue_depth; q++) {
        r->ring[q] = res->st.last_done_ns;
    }
    uint64_t i = c;
    struct phase_clock clk = phase_clock_start();
    for (uint64_t j = 0; j < o->keys; j += o->batch) {
        uint32_t nb = o->keys - j < o->batch ? (uint32_t)(o->keys - j) : o->batch;
        for (uint32_t k = 0; k < nb; k++) {
            make_key(i, o->key_bytes, r->bkeys + (size_t)k * KVFTL_KEY_MAX_BYTES);
            r->bidx[k] = i;
            r->breq[k].arrival_ns = r->ring[(j + k) % o->queue_depth];
            i += a;
            if (i >= o->keys) {
                i -= o->keys;
            }
        }
        if (nb == 1) {
            kvftl_retrieve(r->ftl, r->breq[0].key, o->key_bytes, r->breq[0].buf, 0, o->value_bytes,
                           r->breq[0].arrival_ns, &r->bcpl[0]);
        } else {
            kvftl_retrieve_batch(r->ftl, r->breq, r->bcpl, nb);
        }
        for (uint32_t k = 0; k < nb; k++) {
            const struct kvftl_cpl *cp = &r->bcpl[k];
            if (cp->status != KVFTL_OK || cp->value_bytes != o->value_bytes) {
                if (!rt->errors++) {
                    r->first_err_status = cp->status;
                }
            } else if (o->value_bytes >= 8 && memcmp(r->breq[k].buf, &r->bidx[k], 8) != 0) {
                res->mismatches++;
            }
            phase_done(rt, r->ring, o->queue_depth, j + k, cp->done_ns);
        }
    }
    phase_clock_stop(&clk, rt);
    if (rt->errors || res->mismatches) {
        fprintf(stderr,
                "kvftl-bench: %" PRIu64 " retrieves failed (first status %s), %" PRIu64
                " returned wrong bytes\n",
                rt->errors, kvftl_status_name(r->first_err_status), res->mismatches);
    }
}

/*
 * After both phases: the firmware's counters, this host's first-touch cost
 * and peak memory, what the report derives from them, and with
 * --memory-floor the floor (the device closed first, its memory back).
 */
static void kv_measure(struct kv_run *r, const struct opts *o, struct kv_result *res)
{
    kvftl_stats_get(r->ftl, &res->s2);
    res->touch_s_per_gib = first_touch_s_per_gib();
    getrusage(RUSAGE_SELF, &res->ru);
    res->host_bytes_per_key = res->s1.live_keys
                                  ? (double)res->s1.index_host_bytes / (double)res->s1.live_keys
                                  : 0;
    res->pair_bytes = (uint64_t)o->key_bytes + o->value_bytes;
    res->retrieve_misses = res->s2.index_cache_misses - res->s1.index_cache_misses;
    res->used = *r->used;
    r->used = NULL;
    const struct kvftl_config *used = &res->used;
    res->nand_bytes = (uint64_t)used->channels * used->dies_per_channel * used->blocks_per_die *
                      used->pages_per_block * used->page_size_bytes;
    res->fully_cached = res->retrieve_misses == 0;
    res->floor_store_bytes = res->store_rss_growth > res->s1.index_host_bytes
                                 ? res->store_rss_growth - res->s1.index_host_bytes
                                 : 0;
    if (o->memory_floor) {
        kvftl_close(r->ftl); /* its memory back first: the probe maps as much again */
        r->ftl = NULL;
        res->floor = memory_floor(res->s1.index_host_bytes, res->floor_store_bytes, o->keys,
                                  o->batch, o->seed);
    }
}

#ifdef KVFTL_BENCH_HAVE_JSONC
/* --json: the KV run as one object (docs/kvftl-bench.schema.json). */
static void kv_report_json(const struct opts *o, const struct kv_result *res)
{
    const struct phase *st = &res->st, *rt = &res->rt;
    const struct kvftl_stats *s2 = &res->s2;
    const struct kvftl_config *used = &res->used;
    json_object *j = j_begin("kv", o->preset, used, s2->capacity_bytes);
    j_u64(j, "keys", o->keys);
    j_u64(j, "key_bytes", o->key_bytes);
    j_u64(j, "value_bytes", o->value_bytes);
    j_str(j, "preset", o->preset);
    j_str(j, "packing", kvftl_packing_names[used->packing]);
    j_str(j, "index", kvftl_index_names[used->index]);
    j_u64(j, "placement_unit_bytes", used->placement_unit_bytes);
    j_u64(j, "index_dram_bytes", used->index_dram_bytes);
    j_u64(j, "queue_depth", o->queue_depth);
    j_u64(j, "batch", o->batch);
    j_str(j, "arrival", o->inline_values ? "inline" : "dma");
    j_u64(j, "seed", o->seed);
    j_u64(j, "device_bytes", res->nand_bytes);
    j_num(j, "store_ops_per_s", ops_per_s(st), 0);
    j_num(j, "retrieve_ops_per_s", ops_per_s(rt), 0);
    j_num(j, "store_wall_s", st->wall_s, 3);
    j_num(j, "retrieve_wall_s", rt->wall_s, 3);
    j_num(j, "store_cpu_s", st->cpu_s, 3);
    j_num(j, "retrieve_cpu_s", rt->cpu_s, 3);
    j_num(j, "store_user_cpu_s", st->user_s, 3);
    j_num(j, "retrieve_user_cpu_s", rt->user_s, 3);
    j_num(j, "store_ops_per_cpu_s", ops_per_cpu_s(st), 0);
    j_num(j, "retrieve_ops_per_cpu_s", ops_per_cpu_s(rt), 0);
    j_num(j, "store_ops_per_user_cpu_s", ops_per_user_s(st), 0);
    j_num(j, "retrieve_ops_per_user_cpu_s", ops_per_user_s(rt), 0);
    j_num(j, "host_bytes_per_key", res->host_bytes_per_key, 2);
    j_u64(j, "index_host_bytes", res->s1.index_host_bytes);
    j_bool(j, "index_fully_cached", res->fully_cached);
    j_u64(j, "retrieve_index_cache_misses", res->retrieve_misses);
    j_num(j, "sim_store_ops_per_s", sim_ops_per_s(st), 0);
    j_num(j, "sim_store_mb_per_s", sim_ops_per_s(st) * (double)res->pair_bytes / 1e6, 1);
    j_num(j, "sim_retrieve_ops_per_s", sim_ops_per_s(rt), 0);
    j_num(j, "sim_retrieve_mb_per_s", sim_ops_per_s(rt) * (double)res->pair_bytes / 1e6, 1);
    j_u64(j, "sim_now_ns", s2->sim_now_ns);
    j_u64(j, "store_p50_ns", s2->latency[KVFTL_OP_STORE].p50_ns);
    j_u64(j, "store_p99_ns", s2->latency[KVFTL_OP_STORE].p99_ns);
    j_u64(j, "retrieve_p50_ns", s2->latency[KVFTL_OP_RETRIEVE].p50_ns);
    j_u64(j, "retrieve_p99_ns", s2->latency[KVFTL_OP_RETRIEVE].p99_ns);
    j_num(j, "write_amplification", s2->write_amplification, 3);
    j_num(j, "space_amplification", s2->space_amplification, 3);
    j_u64(j, "nand_pages_programmed", s2->nand_pages_programmed);
    j_u64(j, "nand_pages_read", s2->nand_pages_read);
    j_u64(j, "gc_runs", s2->gc_runs);
    j_u64(j, "store_errors", st->errors);
    j_u64(j, "retrieve_errors", rt->errors);
    j_u64(j, "retrieve_mismatches", res->mismatches);
    j_u64(j, "max_rss_bytes", (uint64_t)res->ru.ru_maxrss * 1024);
    j_u64(j, "store_rss_growth_bytes", res->store_rss_growth);
    j_num(j, "host_first_touch_s_per_gib", res->touch_s_per_gib, 3);
    if (o->memory_floor) {
        j_num(j, "host_memory_floor_ops_per_s", res->floor.ops_per_s, 0);
        j_num(j, "host_load_ns_dense_pages", res->floor.dense_ns, 1);
        j_num(j, "host_load_ns_sparse_pages", res->floor.sparse_ns, 1);
    }
    j_print(j);
}
#endif

/* The text report's table: the run's parameters, then a row per phase. */
static void kv_report_phases(const struct opts *o, const struct kv_result *res)
{
    const struct phase *st = &res->st, *rt = &res->rt;
    const struct kvftl_stats *s2 = &res->s2;
    const struct kvftl_config *used = &res->used;
    double pair = (double)res->pair_bytes;
    char dev[32], budget[32];
    fmt_bytes(dev, sizeof(dev), (double)res->nand_bytes);
    fmt_bytes(budget, sizeof(budget), (double)used->index_dram_bytes);
    printf("kvftl-bench: %" PRIu64 " keys, %u B keys, %u B values, preset %s, index %s, "
           "packing %s, placement %u B, %s arrival, queue depth %u, batch %u, seed %" PRIu64 "\n",
           o->keys, o->key_bytes, o->value_bytes, o->preset, kvftl_index_names[used->index],
           kvftl_packing_names[used->packing], used->placement_unit_bytes,
           o->inline_values ? "inline" : "DMA", o->queue_depth, o->batch, o->seed);
    printf("device %s (%u x %u dies, %u blocks/die, %u pages/block, %u B pages), "
           "index DRAM budget %s\n\n",
           dev, used->channels, used->dies_per_channel, used->blocks_per_die, used->pages_per_block,
           used->page_size_bytes, budget);
    printf("%-10s %12s %10s %14s %9s %14s %10s %12s %12s %7s\n", "phase", "host ops/s", "wall s",
           "ops/CPU-s", "CPU s", "sim ops/s", "sim MB/s", "sim p50 ns", "sim p99 ns", "errors");
    printf("%-10s %12.0f %10.3f %14.0f %9.3f %14.0f %10.1f %12" PRIu64 " %12" PRIu64 " %7" PRIu64
           "\n",
           "store", ops_per_s(st), st->wall_s, ops_per_cpu_s(st), st->cpu_s, sim_ops_per_s(st),
           sim_ops_per_s(st) * pair / 1e6, s2->latency[KVFTL_OP_STORE].p50_ns,
           s2->latency[KVFTL_OP_STORE].p99_ns, st->errors);
    printf("%-10s %12.0f %10.3f %14.0f %9.3f %14.0f %10.1f %12" PRIu64 " %12" PRIu64 " %7" PRIu64
           "\n",
           "retrieve", ops_per_s(rt), rt->wall_s, ops_per_cpu_s(rt), rt->cpu_s, sim_ops_per_s(rt),
           sim_ops_per_s(rt) * pair / 1e6, s2->latency[KVFTL_OP_RETRIEVE].p50_ns,
           s2->latency[KVFTL_OP_RETRIEVE].p99_ns, rt->errors + res->mismatches);
}

/* The text report after the table: the index, the NAND, memory and issue 16's targets. */
static void kv_report_host(const struct opts *o, const struct kv_result *res)
{
    const struct kvftl_stats *s2 = &res->s2;
    char idx[32], rss[32];
    fmt_bytes(idx, sizeof(idx), (double)res->s1.index_host_bytes);
    fmt_bytes(rss, sizeof(rss), (double)res->ru.ru_maxrss * 1024);
    printf("\nindex host memory      %s = %.2f bytes/key (%s during retrieve: %" PRIu64
           " cache misses)\n",
           idx, res->host_bytes_per_key, res->fully_cached ? "fully cached" : "NOT fully cached",
           res->retrieve_misses);
    printf("write amplification    %.3f   space amplification %.3f\n", s2->write_amplification,
           s2->space_amplification);
    printf("NAND pages programmed  %" PRIu64 "   read %" PRIu64 "   GC runs %" PRIu64 "\n",
           s2->nand_pages_programmed, s2->nand_pages_read, s2->gc_runs);
    printf("simulated time         %.3f s   max RSS %s\n", (double)s2->sim_now_ns / 1e9, rss);
    double grown_gib = (double)res->store_rss_growth / (double)(1ull << 30);
    printf("first-touched memory   store phase %.2f GiB; this host: %.3f s/GiB (256 MiB probe "
           "after the run), so ~%.1f s of the store phase's %.1f s\n",
           grown_gib, res->touch_s_per_gib, grown_gib * res->touch_s_per_gib, res->st.wall_s);
    if (o->memory_floor) {
        char ib[32], sb[32];
        fmt_bytes(ib, sizeof(ib), (double)floor_region_bytes(res->s1.index_host_bytes));
        fmt_bytes(sb, sizeof(sb), (double)floor_region_bytes(res->floor_store_bytes));
        printf("memory floor           %.2f M ops/s on this host (two dependent random loads "
               "per request over %s and %s, windows of %u); retrieve at %.0f %% of it\n",
               res->floor.ops_per_s / 1e6, ib, sb,
               o->batch < FLOOR_MAX_WINDOW ? o->batch : FLOOR_MAX_WINDOW,
               res->floor.ops_per_s > 0 ? 100.0 * ops_per_s(&res->rt) / res->floor.ops_per_s : 0.0);
        printf("far 4 KiB pages        a dependent load costs %.1f ns among lines packed 64 "
               "to a 4 KiB page, %.1f ns with each in a 4 KiB page of its own (one line per "
               "4 KiB page of the %s region, at most %u)\n",
               res->floor.dense_ns, res->floor.sparse_ns, sb, PROBE_MAX_LINES);
    }
    double st_ops = ops_per_s(&res->st), rt_ops = ops_per_s(&res->rt);
    printf("issue 16 targets       store %.2f M ops/s (%s), retrieve %.2f M ops/s (%s), "
           "index %.0f B/key (%s)\n",
           TARGET_STORE_OPS / 1e6, st_ops >= TARGET_STORE_OPS ? "met" : "not met",
           TARGET_RETRIEVE_OPS / 1e6, rt_ops >= TARGET_RETRIEVE_OPS ? "met" : "not met",
           TARGET_INDEX_BYTES_PER_KEY,
           res->host_bytes_per_key <= TARGET_INDEX_BYTES_PER_KEY ? "met" : "not met");
}

/*
 * --slices: the long walks over the stored keys in device slices
 * (run_slices()) instead of the retrieve phase. Returns the exit status.
 */
static int kv_slices(struct kv_run *r, const struct opts *o, const struct kv_result *res)
{
    printf("kvftl-bench: %" PRIu64 " keys stored (%u B keys, %u B values) in %.3f s, %" PRIu64
           " failed; index: %" PRIu64 " bytes of host memory\n",
           o->keys, o->key_bytes, o->value_bytes, res->st.wall_s, res->st.errors,
           res->s1.index_host_bytes);
    int src = run_slices(r->ftl, o, res->st.last_done_ns);
    return res->st.errors || src ? 1 : 0;
}

/* The KV mode: open, store every key, retrieve every key (or --slices), report. */
static int kv_main(struct kvftl_config *cfg, const struct opts *o, bool auto_index)
{
    int rc;
    struct kv_run r = {.ftl = kv_open(cfg, o, auto_index, &rc)};
    if (!r.ftl) {
        return rc;
    }
    r.used = kvftl_get_config(r.ftl);
    if (!kv_run_alloc(&r, o)) {
        kv_run_free(&r);
        return 1;
    }
    struct kv_result res = {0};
    res.store_rss_growth = store_phase(&r, o, &res.st);
    kvftl_stats_get(r.ftl, &res.s1);
    if (o->slices) {
        rc = kv_slices(&r, o, &res);
        kv_run_free(&r);
        return rc;
    }
    retrieve_phase(&r, o, &res);
    kv_measure(&r, o, &res);
    if (o->json) {
#ifdef KVFTL_BENCH_HAVE_JSONC
        kv_report_json(o, &res);
#endif
    } else {
        kv_report_phases(o, &res);
        kv_report_host(o, &res);
    }
    kv_run_free(&r);
    return res.st.errors || res.rt.errors || res.mismatches ? 1 : 0;
}

int main(int argc, char **argv)
{
    struct opts o;
#ifdef KVFTL_BENCH_HAVE_JSONC
    /* the command line as typed: getopt_long permutes argv */
    bench_argv = calloc((size_t)argc + 1, sizeof(*bench_argv));
    if (bench_argv) {
        memcpy(bench_argv, argv, (size_t)argc * sizeof(*argv));
        bench_argc = argc;
    }
#endif
    parse(argc, argv, &o);

    struct kvftl_config cfg;
    bool auto_index = config_from_opts(&cfg, &o);
    if (cfg.command_set == KVFTL_CMDSET_NVM && o.memory_floor) {
        tool_usage_error("kvftl-bench", NULL,
                         "--memory-floor is the floor of a KV Retrieve; the block mode "
                         "(--command-set nvm) has none");
        return TOOL_EXIT_USAGE;
    }
    if (cfg.command_set == KVFTL_CMDSET_NVM) {
        return block_main(&cfg, &o, auto_index);
    }
    return kv_main(&cfg, &o, auto_index);
}
