/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench - KV workloads against a kvssd namespace, in the spirit of
 * OpenMPDK's kvbench and RocksDB's db_bench.
 *
 *   kvbench [run] [--config FILE] [--preset NAME] [--engine LIST] [flags]
 *   kvbench calibrate [flags]
 *
 * A load phase inserts key_count keys; a run phase issues an operation mix
 * for a number of operations or a duration. Threads x queue depth (sync
 * ioctl path, or io_uring async path, on the kvssd engine). Every read is
 * verified against the self-checking payload. The same workload runs on
 * each engine given (kvssd, rocksdb, rawhash: runner.c, engine_*.c) and
 * the results are reported side by side, as a table or one JSON object.
 */
#include <errno.h>
#include <kvssd_version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>

#include "bench/usage.h"

#include "kvbench.h"

/* ---- command line ---------------------------------------------------- */

/*
 * Every flag maps onto an INI group.key (kb_config_set): a flag is the
 * same setting as the config file's key, applied after the preset and the
 * file. @arg names the value in --help; @help says what it is, its unit
 * and its default.
 */
struct flag {
    const char *name;
    char short_name;
    int has_arg;
    const char *group, *key, *value; /* value: for flags without an argument */
    const char *arg, *help;
};

static const struct flag flags[] = {
    {"device", 'd', 1, "benchmark", "device", NULL, "PATH",
     "the KV namespace: /dev/ngXnY, pci:BDF / pci:nvmeN (user-space PCI transport), or "
     "sim:IMAGE[,prop=value...] (the simulator in this process, no VM). Given more than once "
     "(up to 16; the INI: a ';' list), the kvssd engine runs the whole workload on each device "
     "at once, --threads threads per device, on its own keys (device i of N holds key indexes "
     "i, i+N, i+2N, ...): --keys and --ops are per device. The report has each device's "
     "numbers and the aggregate: wall-clock ops/s (all ops over the time until the last "
     "device finished) and aggregate device-time ops/s (all ops over the longest device time "
     "of any device, each device's simulated clock its own). Default: $KVSSD_DEVICE, else the "
     "first KV namespace found"},
    {"seed", 0, 1, "benchmark", "seed", NULL, "N",
     "seed of every key order, size draw and payload (0-2^64-1). Default: 1"},
    {"threads", 0, 1, "benchmark", "threads", NULL, "N",
     "threads issuing operations (1-64). Default: 1"},
    {"qd", 0, 1, "benchmark", "queue_depth", NULL, "N",
     "commands in flight per thread on the kvssd engine (1-256; above 1 selects --io async). "
     "Default: 1"},
    {"queue-depth", 0, 1, "benchmark", "queue_depth", NULL, "N", "same as --qd"},
    {"engine", 0, 1, "benchmark", "engine", NULL, "LIST",
     "stores to run: kvssd, rocksdb, rawhash, a comma-separated list (run in that order) or all; "
     "sync/async still mean --io. Default: kvssd"},
    {"io", 0, 1, "benchmark", "io", NULL, "sync|async",
     "the kvssd engine's I/O path: sync (ioctl) or async (io_uring). Default: sync (async when "
     "--qd > 1)"},
    {"poll", 0, 0, "benchmark", "poll", "true", NULL,
     "the async path polls for completions (io_uring IOPOLL) instead of sleeping until the "
     "interrupt; with Linux's NVMe poll queues (nvme.poll_queues=N) the commands go to queues "
     "without interrupts. Needs --io async (or --qd > 1). Default: off"},
    {"nvm-ctrl", 0, 1, "benchmark", "nvm_ctrl", NULL, "PATH",
     "block personality whose statistics log describes rocksdb/rawhash (/dev/nvmeX or a "
     "namespace). Default: found from the target"},
    {"rocksdb-dir", 0, 1, "rocksdb", "dir", NULL, "DIR",
     "RocksDB's database directory. Default: /mnt/nvm/kvbench-rocksdb"},
    {"rocksdb-wal", 0, 1, "rocksdb", "wal", NULL, "BOOL",
     "RocksDB write-ahead log on (true/false). Default: true"},
    {"rocksdb-sync", 0, 1, "rocksdb", "sync", NULL, "BOOL",
     "fsync RocksDB's WAL on every write (true/false). Default: false"},
    {"rocksdb-direct-io", 0, 1, "rocksdb", "direct_io", NULL, "BOOL",
     "O_DIRECT reads, flushes and compactions (true/false). Default: true"},
    {"rocksdb-block-cache", 0, 1, "rocksdb", "block_cache_bytes", NULL, "BYTES",
     "RocksDB LRU block cache in bytes (0 = none, up to 2^40). Default: 8388608"},
    {"rocksdb-write-buffer", 0, 1, "rocksdb", "write_buffer_bytes", NULL, "BYTES",
     "RocksDB memtable size in bytes (65536-2^34). Default: 67108864"},
    {"rocksdb-compression", 0, 1, "rocksdb", "compression", NULL, "NAME",
     "none, snappy, zlib, bzip2, lz4, lz4hc, xpress or zstd. Default: none"},
    {"rocksdb-keep", 0, 0, "rocksdb", "keep", "true", NULL,
     "open the database in --rocksdb-dir instead of destroying it first. Default: off"},
    {"rawhash-dev", 0, 1, "rawhash", "device", NULL, "PATH",
     "raw block device or regular file of the rawhash engine. Default: none (required by it)"},
    {"rawhash-size", 0, 1, "rawhash", "size_bytes", NULL, "BYTES",
     "bytes of --rawhash-dev to use (a file is created/extended; 0 = all of it). Default: 0"},
    {"rawhash-write-block", 0, 1, "rawhash", "write_block_bytes", NULL, "BYTES",
     "rawhash write block in bytes, a power of two 131072-8388608. Default: 1048576"},
    {"rawhash-defrag-lwm", 0, 1, "rawhash", "defrag_lwm_pct", NULL, "PCT",
     "defragment a sealed block whose live bytes fall below this percentage (1-99). Default: 50"},
    {"rawhash-commit", 0, 1, "rawhash", "commit_to_device", NULL, "BOOL",
     "write the open block's tail before acknowledging each write (true/false). Default: false"},
    {"rawhash-trim", 0, 1, "rawhash", "trim", NULL, "BOOL",
     "deallocate a write block when it becomes free (true/false). Default: false"},
    {"rawhash-keep", 0, 0, "rawhash", "keep", "true", NULL,
     "rebuild the index from --rawhash-dev instead of formatting it. Default: off"},
    {"mode", 0, 1, "benchmark", "transfer_mode", NULL, "MODE",
     "value transfer of the kvssd engine: prp, inline, hybrid or adaptive. Default: adaptive"},
    {"xfer-config", 0, 1, "benchmark", "transfer_config", NULL, "FILE",
     "adaptive mode's thresholds (written by kvbench calibrate). Default: $KVSSD_TRANSFER_CONFIG, "
     "else " KVSSD_DEFAULT_CONFIG_PATH},
    {"alpha", 0, 1, "benchmark", "alpha", NULL, "X",
     "adaptive mode's alpha, overriding the config file's (0-1e6). Default: the file's"},
    {"beta", 0, 1, "benchmark", "beta", NULL, "X",
     "adaptive mode's beta, overriding the config file's (0-1e6). Default: the file's"},
    {"keys", 0, 1, "benchmark", "key_count", NULL, "N",
     "keys the load phase inserts, the key space of the run (1-2^40). Default: 100000"},
    {"iterate-entries", 0, 1, "benchmark", "iterate_entries", NULL, "N",
     "keys one iterate (scan) operation reads at most: YCSB's maxscanlength (1-65536). "
     "Default: 100"},
    {"scan-length-distribution", 0, 1, "benchmark", "scan_length_distribution", NULL,
     "uniform|zipfian|fixed",
     "each scan's length: YCSB's scanlengthdistribution, uniform or zipfian from "
     "min_scan_length (an INI key, 1 unless set) to --iterate-entries, or fixed (always --iterate-entries). "
     "Default: fixed (ycsb-e: uniform)"},
    {"write-rate-limit", 0, 1, "benchmark", "write_rate_limit_bytes_per_s", NULL, "BYTES/S",
     "key + value bytes per second the --writer thread writes at most, through db_bench's rate "
     "limiter (0 = unlimited, or 10-2^40). Default: 0"},
    {"no-verify", 0, 0, "benchmark", "verify", "false", NULL,
     "do not check read values against the payload. Default: every read is checked"},
    {"no-reset-stats", 0, 0, "benchmark", "reset_stats", "false", NULL,
     "do not reset the device's statistics log before each phase. Default: reset"},
    {"json", 0, 0, "benchmark", "json", "true", NULL,
     "print one JSON object on stdout (docs/kvbench.md \"JSON\") instead of the table. Default: "
     "table"},
    {"progress", 0, 1, "benchmark", "progress", NULL, "on|off|auto",
     "progress on stderr: a redrawn line on a terminal, a line every 2 s otherwise. Default: auto "
     "(on when stderr is a terminal)"},
    {"percentiles", 0, 1, "benchmark", "percentiles", NULL, "LIST",
     "latency percentiles to report, ascending, 1-16 of them in (0, 100]; max is always "
     "reported. Default: 50,90,99,99.9,99.99"},
    {"report-interval", 0, 1, "benchmark", "report_interval_s", NULL, "SECONDS",
     "print ops/s and latency percentiles every SECONDS (0.1-86400; 0 = off) and keep them in "
     "the JSON's \"intervals\". Default: 0"},
    {"key-size", 0, 1, "keys", "size", NULL, "SPEC",
     "key size in bytes, 1-255: N, uniform:MIN-MAX or weighted:SIZE:W,... Default: 16"},
    {"value-size", 0, 1, "values", "size", NULL, "SPEC",
     "value size in bytes, 0-2 MiB: N, uniform:MIN-MAX, weighted:SIZE:W,... or mixgraph. "
     "Default: 4096"},
    {"load-ops", 0, 1, "load", "ops", NULL, "N",
     "inserts of the load phase (0 = --keys). Default: 0"},
    {"load-order", 0, 1, "load", "order", NULL, "ORDER",
     "key order of the load: sequential, uniform (a permutation), zipfian or window. Default: "
     "sequential"},
    {"load-theta", 0, 1, "load", "theta", NULL, "X",
     "zipfian constant of the load, in (0, 1). Default: 0.99"},
    {"load-window-keys", 0, 1, "load", "window_keys", NULL, "N",
     "keys per window of the load's window order (1 to --keys). Default: 1024"},
    {"no-load", 0, 0, "load", "enabled", "false", NULL, "skip the load phase. Default: load"},
    {"ops", 0, 1, "run", "ops", NULL, "N",
     "operations of the run phase (with --duration, whichever ends first). Default: 100000"},
    {"duration", 0, 1, "run", "duration_s", NULL, "SECONDS",
     "length of the run phase in seconds (0-604800; 0 = by --ops). Default: 0"},
    {"order", 0, 1, "run", "order", NULL, "ORDER",
     "key order of the run: sequential, uniform, zipfian, latest or window. Default: uniform"},
    {"theta", 0, 1, "run", "theta", NULL, "X",
     "zipfian/latest constant of the run, in (0, 1). Default: 0.99"},
    {"window-keys", 0, 1, "run", "window_keys", NULL, "N",
     "keys per window of the run's window order (1 to --keys). Default: 1024"},
    {"window-step", 0, 1, "run", "window_step", NULL, "N",
     "keys the run's window moves by after each window (1 to --window-keys). Default: "
     "--window-keys"},
    {"mix", 0, 1, "run", "mix", NULL, "OP=W,...",
     "operation weights of the run: insert, update, read, delete, exist, iterate (scan), rmw. "
     "Default: read=50,update=50"},
    {"writer", 0, 0, "run", "writer", "true", NULL,
     "one more thread that updates uniformly drawn keys until the others finish "
     "(readwhilewriting). Default: off"},
    {"no-run", 0, 0, "run", "enabled", "false", NULL, "skip the run phase. Default: run"},
    {"samples", 0, 1, "calibrate", "samples", NULL, "N",
     "kvbench calibrate: stores per measured size (1-1000000). Default: 200"},
    {"output", 0, 1, "calibrate", "output", NULL, "FILE",
     "run and baseline: write the report (the table, or --json's object) to FILE instead of "
     "stdout; kvbench calibrate: where the thresholds are written. Default: stdout; calibrate: " KVSSD_DEFAULT_CONFIG_PATH},
};
#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

/* Other spellings of a flag, accepted and not listed by --help: db_bench's own for its users. */
static const struct {
    const char *name, *flag;
} aliases[] = {
    {"benchmark_write_rate_limit", "write-rate-limit"},
};
#define NALIASES (sizeof(aliases) / sizeof(aliases[0]))

/* The command line as given: preset and config first, then the flags in order. */
struct cmdline {
    char *preset, *config;
    char *preset_help; /* --preset's help: the presets' names (kb_preset_summary()) */
    bool list_presets, version;
    GPtrArray *set; /* pairs: const struct flag *, value (owned) */
};

/* What the command line parse allocated: the flags' values, the preset and config names. */
static void cmdline_free(struct cmdline *cl)
{
    for (guint i = 0; i + 1 < cl->set->len; i += 2) {
        g_free(g_ptr_array_index(cl->set, i + 1));
    }
    g_ptr_array_free(cl->set, TRUE);
    g_free(cl->preset);
    g_free(cl->config);
    g_free(cl->preset_help);
}

static const struct flag *flag_named(const char *opt)
{
    const char *n = opt[0] == '-' && opt[1] == '-' ? opt + 2 : opt;
    for (size_t i = 0; i < NALIASES; i++) {
        if (!strcmp(n, aliases[i].name)) {
            n = aliases[i].flag;
        }
    }
    for (size_t i = 0; i < NFLAGS; i++) {
        if (n[0] == '-' ? n[1] == flags[i].short_name && flags[i].short_name
                        : !strcmp(n, flags[i].name)) {
            return &flags[i];
        }
    }
    return NULL;
}

static gboolean on_flag(const gchar *opt, const gchar *value, gpointer data, GError **error)
{
    struct cmdline *cl = data;
    const struct flag *f = flag_named(opt);
    if (!f) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION, "unknown option %s", opt);
        return FALSE;
    }
    g_ptr_array_add(cl->set, (gpointer)f);
    g_ptr_array_add(cl->set, g_strdup(f->has_arg ? value : f->value));
    return TRUE;
}

static gboolean on_preset(const gchar *opt, const gchar *value, gpointer data, GError **error)
{
    struct cmdline *cl = data;
    g_free(cl->preset);
    cl->preset = g_strdup(value); /* GOption's @value does not outlive the callback */
    return TRUE;
}

static gboolean on_config(const gchar *opt, const gchar *value, gpointer data, GError **error)
{
    struct cmdline *cl = data;
    g_free(cl->config);
    cl->config = g_strdup(value);
    return TRUE;
}

/* The words a flag's value is one of, named in C: a table's names up to "unknown". */
static void print_names(const char *(*name)(int))
{
    for (int i = 0; strcmp(name(i), "unknown"); i++) {
        printf(" %s", name(i));
    }
}

static const char *mode_name(int i)
{
    return kvssd_xfer_mode_name(i);
}
static const char *order_name(int i)
{
    return kb_order_name(i);
}
static const char *store_name(int i)
{
    return i < KB_STORE_COUNT ? kb_store_names[i] : "unknown";
}

/*
 * kvbench --list-completions (not in --help): what host/completions/kvssd.bash
 * offers for kvbench, from its tables: make_context()'s entries and usage line
 * (call it after make_context()), kb_presets[], the name tables. Lines of words: "command NAME",
 * "options OPT..." (every spelling), "argument OPT..." (those taking a value), "values OPT
 * VALUE..." and "list OPT VALUE..." (a comma-separated list).
 */
static void print_entries(const GOptionEntry *e, bool with_arg)
{
    for (; e->long_name; e++) {
        if (!(e->flags & G_OPTION_FLAG_HIDDEN) &&
            (!with_arg || (e->arg != G_OPTION_ARG_NONE && !(e->flags & G_OPTION_FLAG_NO_ARG)))) {
            printf(e->short_name ? " --%s -%c" : " --%s", e->long_name, e->short_name);
        }
    }
}

/* The commands: the [a|b|...] of the usage line make_context() writes. */
static void print_commands(GOptionContext *ctx)
{
    g_autofree char *help = g_option_context_get_help(ctx, TRUE, NULL);
    char *end = strstr(help, " - ");
    for (char *open = help; end && (open = strchr(open, '[')) && open < end; open++) {
        size_t n = strcspn(open + 1, "]");
        if (memchr(open + 1, '|', n)) {
            g_autofree char *words = g_strndup(open + 1, n);
            g_auto(GStrv) v = g_strsplit(words, "|", -1);
            for (size_t i = 0; v[i]; i++) {
                printf("command %s\n", v[i]);
            }
        }
    }
}

static int list_completions(GOptionContext *ctx, const GOptionEntry *e)
{
    static const struct {
        const char *flag, *kind;
        const char *(*name)(int);
    } named[] = {
        {"mode", "values", mode_name},
        {"order", "values", order_name},
        {"load-order", "values", order_name},
        {"rocksdb-compression", "values", kb_compression_name},
        {"engine", "list", store_name},
    };
    print_commands(ctx);
    printf("options --help -h");
    print_entries(e, false);
    printf("\nargument");
    print_entries(e, true);
    printf("\n");
    for (const char *const *spelling = (const char *const[]){"--preset", "-p", NULL}; *spelling;
         spelling++) {
        printf("values %s", *spelling);
        for (size_t i = 0; i < kb_preset_count; i++) {
            printf(" %s", kb_presets[i].name);
        }
        printf("\n");
    }
    for (size_t i = 0; i < NFLAGS; i++) {
        const char *arg = flags[i].arg;
        if (arg && strchr(arg, '|')) { /* sync|async */
            g_autofree char *words = g_strdelimit(g_strdup(arg), "|", ' ');
            printf("values --%s %s\n", flags[i].name, words);
        } else if (arg && !strcmp(arg, "BOOL")) {
            printf("values --%s true false\n", flags[i].name);
        }
        for (size_t j = 0; j < sizeof(named) / sizeof(named[0]); j++) {
            if (!strcmp(named[j].flag, flags[i].name)) {
                printf("%s --%s", named[j].kind, flags[i].name);
                print_names(named[j].name);
                printf(named[j].name == store_name ? " all\n" : "\n");
            }
        }
    }
    return 0;
}

/*
 * The options of GOptionContext: the flag table, then --config, --preset,
 * --list-presets. Values are taken as bytes (G_OPTION_FLAG_FILENAME), as
 * getopt took them: a path need not be UTF-8, nor the locale's charset.
 */
static GOptionContext *make_context(struct cmdline *cl, GOptionEntry *e)
{
    size_t n = 0;
    for (size_t i = 0; i < NFLAGS; i++) {
        e[n++] = (GOptionEntry){flags[i].name,
                                flags[i].short_name,
                                flags[i].has_arg ? G_OPTION_FLAG_FILENAME : G_OPTION_FLAG_NO_ARG,
                                G_OPTION_ARG_CALLBACK,
                                (gpointer)on_flag,
                                flags[i].help,
                                flags[i].arg};
    }
    for (size_t i = 0; i < NALIASES; i++) {
        e[n++] = (GOptionEntry){aliases[i].name,
                                0,
                                G_OPTION_FLAG_FILENAME | G_OPTION_FLAG_HIDDEN,
                                G_OPTION_ARG_CALLBACK,
                                (gpointer)on_flag,
                                NULL,
                                NULL};
    }
    e[n++] = (GOptionEntry){"config",
                            'c',
                            G_OPTION_FLAG_FILENAME,
                            G_OPTION_ARG_CALLBACK,
                            (gpointer)on_config,
                            "INI file of settings (groups benchmark, keys, values, load, run, "
                            "calibrate, rocksdb, rawhash), applied after --preset; flags override "
                            "it. Default: none",
                            "FILE"};
    g_autofree char *presets = kb_preset_summary();
    cl->preset_help = g_strdup_printf(
        "start from a named workload (--list-presets): %s. Default: none", presets);
    e[n++] = (GOptionEntry){
        "preset",        'p',   G_OPTION_FLAG_FILENAME, G_OPTION_ARG_CALLBACK, (gpointer)on_preset,
        cl->preset_help, "NAME"};
    e[n++] = (GOptionEntry){"list-presets",
                            0,
                            0,
                            G_OPTION_ARG_NONE,
                            &cl->list_presets,
                            "list the presets and exit",
                            NULL};
    e[n++] = (GOptionEntry){
        "version", 0, 0, G_OPTION_ARG_NONE, &cl->version, "print the version and exit", NULL};
    e[n] = (GOptionEntry){NULL, 0, 0, 0, NULL, NULL, NULL};

    GOptionContext *ctx = g_option_context_new(
        "[run|calibrate|baseline|sizes] - KV workloads against a kvssd "
        "namespace, RocksDB or a raw hash store");
    GOptionGroup *g = g_option_group_new("kvbench", "kvbench options", "kvbench options", cl, NULL);
    g_option_group_add_entries(g, e);
    g_option_context_set_main_group(ctx, g);
    g_option_context_set_help_enabled(ctx, FALSE); /* print_help() is --help */
    return ctx;
}

/*
 * kvbench --help, in the help style of every tool (CONTRIBUTING.md "Help style"):
 * the usage line, the commands, the options of @e at column 28 (a longer option's
 * text on the next line), "Default: X." last, the man page.
 */
static void print_help(FILE *f, const GOptionEntry *e)
{
    fprintf(f, "usage: kvbench [run|calibrate|baseline|sizes] [options]\n"
               "KV workloads against a kvssd namespace, RocksDB or a raw hash store.\n"
               "commands:\n"
               "  run                       load and run the workload (the default)\n"
               "  calibrate                 measure the adaptive mode's thresholds\n"
               "  baseline                  run 4 KiB reads on an NVM namespace\n"
               "  sizes                     count the value sizes the load phase would draw (one\n"
               "                            per --keys, no device)\n"
               "options:\n"
               "  -h, --help                this text\n");
    for (; e->long_name; e++) {
        if (e->flags & G_OPTION_FLAG_HIDDEN) {
            continue;
        }
        g_autofree char *spec = g_strdup_printf(
            "%s%c%s--%s%s%s", e->short_name ? "-" : " ", e->short_name ? e->short_name : ' ',
            e->short_name ? ", " : "  ", e->long_name, e->arg_description ? " " : "",
            e->arg_description ? e->arg_description : "");
        size_t len = strlen(e->description);
        const char *dot = len && e->description[len - 1] != '.' &&
                                  strstr(e->description, "Default: ")
                              ? "."
                              : "";
        if (strlen(spec) <= 25) {
            fprintf(f, "  %-25s %s%s\n", spec, e->description, dot);
        } else {
            fprintf(f, "  %s\n%28s%s%s\n", spec, "", e->description, dot);
        }
    }
    fprintf(f, "Every flag is also an INI key of --config FILE.\n"
               "See docs/kvbench.md and kvbench(1).\n");
}

/* From here on stdout is @report (--output FILE), when there is one. */
static void report_to(FILE *report)
{
    if (report) {
        fflush(stdout);
        dup2(fileno(report), STDOUT_FILENO);
        fclose(report);
    }
}

/*
 * kvbench sizes: the value sizes of the workload's load phase without a device: one draw
 * of its --value-size per key (--keys), seeded as the load phase's first thread, counted
 * per size; as "SIZE COUNT CUMULATIVE%" lines or, with --json, one object.
 */
static int print_sizes(const struct kb_config *c)
{
    char spec[256];
    size_t n = (size_t)kb_size_max(&c->value_size) + 1;
    uint64_t *counts = calloc(n, sizeof(*counts));
    if (!counts) {
        fprintf(stderr, "kvbench: out of memory for %zu size counts\n", n);
        return 1;
    }
    if (kb_size_counts(&c->value_size, c->seed * 1000003u, c->key_count, counts, n)) {
        tool_usage_error("kvbench", NULL, "sizes draws at most %llu values; --keys is %llu",
                         (unsigned long long)KB_SIZE_DRAWS_MAX, (unsigned long long)c->key_count);
        free(counts);
        return TOOL_EXIT_USAGE;
    }
    kb_size_format(&c->value_size, spec, sizeof(spec));
    uint64_t cum = 0;
    if (c->json) {
        printf("{\"value_size\":\"%s\",\"seed\":%llu,\"draws\":%llu,\"counts\":[", spec,
               (unsigned long long)c->seed, (unsigned long long)c->key_count);
    }
    for (size_t v = 0; v < n; v++) {
        if (!counts[v]) {
            continue;
        }
        cum += counts[v];
        if (c->json) {
            printf("%s[%zu,%llu]", cum == counts[v] ? "" : ",", v, (unsigned long long)counts[v]);
        } else {
            printf("%zu %llu %.3f\n", v, (unsigned long long)counts[v],
                   100.0 * (double)cum / (double)c->key_count);
        }
    }
    if (c->json) {
        printf("]}\n");
    }
    free(counts);
    return 0;
}

/*
 * kvbench run on several devices (the kvssd engine alone, kb_config_check()):
 * each device opened as --device alone would be, every phase on all of them
 * at once (kb_run_phase_devices()), one report: each device's and the aggregate.
 */
static int run_devices(const struct kb_config *c, int nph, FILE *report)
{
    unsigned ndev = c->ndevices;
    struct kb_engine e[KB_DEVICES_MAX];
    struct kb_live live[KB_DEVICES_MAX];
    struct kb_device_info info[KB_DEVICES_MAX];
    struct kb_config *one = malloc(sizeof(*one));
    struct kb_result *dev = calloc((size_t)ndev * (size_t)(nph ? nph : 1), sizeof(*dev));
    struct kb_result *agg = calloc((size_t)(nph ? nph : 1), sizeof(*agg));
    struct kb_result *col = calloc(ndev, sizeof(*col)); /* one phase, a device each */
    char err[512];
    unsigned opened = 0, lives = 0;
    int rc = 0;

    memset(e, 0, sizeof(e));
    memset(info, 0, sizeof(info));
    if (!one || !dev || !agg || !col) {
        fprintf(stderr, "kvbench: out of memory for the results\n");
        rc = 1;
    }
    for (unsigned d = 0; !rc && d < ndev; d++) {
        *one = *c;
        snprintf(one->device, sizeof(one->device), "%s", c->devices[d]);
        e[d].ops = &kb_engine_kvssd;
        if (e[d].ops->open(one, &e[d].st, err, sizeof(err))) {
            fprintf(stderr, "kvbench: %s: %s\n", e[d].ops->name, err);
            rc = 1;
            break;
        }
        opened++;
        e[d].stats = e[d].ops->stats_dev(e[d].st);
        kb_provenance_read(e[d].stats);
        info[d].path = c->devices[d];
        info[d].have_config = e[d].stats &&
                              kvssd_get_config(e[d].stats, &info[d].config, NULL) == 0;
        if (kb_live_init(&live[d], c)) {
            fprintf(stderr, "kvbench: out of memory for the live-key table\n");
            rc = 1;
            break;
        }
        lives++;
    }
    int n = 0;
    bool setup_failed = rc != 0;
    if (!rc && c->load.enabled) {
        /* device d's result of phase p: dev[d * nph + p]; a phase fills a column */
        rc |= kb_run_phase_devices(c, e, ndev, &c->load, "load", true, live, col, &agg[n]);
        for (unsigned d = 0; d < ndev; d++) {
            dev[d * (unsigned)nph + (unsigned)n] = col[d];
        }
        n++;
    }
    if (!rc && c->run.enabled) {
        rc |= kb_run_phase_devices(c, e, ndev, &c->run, "run", false, live, col, &agg[n]);
        for (unsigned d = 0; d < ndev; d++) {
            dev[d * (unsigned)nph + (unsigned)n] = col[d];
        }
        n++;
    }
    for (unsigned d = 0; d < lives; d++) {
        kb_live_free(&live[d]);
    }
    for (unsigned d = 0; d < opened; d++) {
        e[d].ops->close(e[d].st);
    }
    uint64_t bad = 0;
    if (!setup_failed) {
        report_to(report);
        report = NULL;
        if (c->json) {
            struct json_object *o = kb_report_json_object(c, agg, 1, nph);
            if (o) {
                kb_report_json_add_devices(o, c, info, dev, ndev, nph, agg);
            }
            kb_json_print(o);
        } else {
            for (int p = 0; p < nph; p++) {
                for (unsigned d = 0; d < ndev; d++) {
                    col[d] = dev[d * (unsigned)nph + (unsigned)p];
                }
                kb_report_devices(c, col, ndev, &agg[p]);
            }
        }
        for (int p = 0; p < n; p++) {
            bad += agg[p].errors + agg[p].mismatches;
        }
    }
    if (report) {
        fclose(report);
    }
    if (dev) {
        for (unsigned i = 0; i < ndev * (unsigned)nph; i++) {
            kb_result_free(&dev[i]);
        }
    }
    free(dev);
    free(agg);
    free(col);
    free(one);
    return rc ? 1 : bad ? 3 : 0;
}

int main(int argc, char **argv)
{
    struct kb_config c;
    char err[512];
    bool calibrate = false, baseline = false, sizes = false, help = false;
    /* no arguments: the usage (as kvssd and nvme-cli), not a run on a device nobody named */
    bool bare = argc == 1;
    struct cmdline cl = {.set = g_ptr_array_new()};
    static GOptionEntry entries[NFLAGS + NALIASES + 5];

    kb_config_default(&c);
    /* the command line as typed, for the reports (GOption removes what it parses) */
    kb_report_provenance(argc, g_strdupv(argv));
    /* --version anywhere before "--" (kvbench --version, kvbench run --version) */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--version")) {
            kvssd_print_version("kvbench");
            return 0;
        }
        help = help || !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
    }
    if (argc > 1 && (!strcmp(argv[1], "calibrate") || !strcmp(argv[1], "run") ||
                     !strcmp(argv[1], "baseline") || !strcmp(argv[1], "sizes"))) {
        calibrate = argv[1][0] == 'c';
        baseline = argv[1][0] == 'b';
        sizes = argv[1][0] == 's';
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    GOptionContext *ctx = make_context(&cl, entries);
    if (argc == 2 && !strcmp(argv[1], "--list-completions")) {
        int rc = list_completions(ctx, entries);
        g_option_context_free(ctx);
        cmdline_free(&cl);
        return rc;
    }
    if (help || bare) {
        print_help(bare ? stderr : stdout, entries);
        g_option_context_free(ctx);
        cmdline_free(&cl);
        return bare ? TOOL_EXIT_USAGE : 0;
    }
    GError *gerr = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &gerr)) {
        tool_usage_error("kvbench", NULL, "%s", gerr->message);
        g_error_free(gerr);
        g_option_context_free(ctx);
        cmdline_free(&cl);
        return TOOL_EXIT_USAGE;
    }
    g_option_context_free(ctx);
    if (cl.list_presets) {
        for (size_t i = 0; i < kb_preset_count; i++) {
            printf("%-22s %s\n", kb_presets[i].name, kb_presets[i].help);
        }
        cmdline_free(&cl);
        return 0;
    }
    if (argc > 1) {
        tool_usage_error("kvbench", NULL, "unexpected argument \"%s\"", argv[1]);
        cmdline_free(&cl);
        return TOOL_EXIT_USAGE;
    }
    /* the preset, then the config file; the flags override both, in their order */
    if ((cl.preset && kb_preset_apply(&c, cl.preset, err, sizeof(err))) ||
        (cl.config && kb_config_load_file(&c, cl.config, err, sizeof(err)))) {
        tool_usage_error("kvbench", NULL, "%s", err);
        cmdline_free(&cl);
        return TOOL_EXIT_USAGE;
    }
    FILE *report = NULL; /* --output outside calibrate: the report goes there */
    bool device_flag = false; /* the first --device replaces the file's; the next ones add */
    for (guint i = 0; i + 1 < cl.set->len; i += 2) {
        const struct flag *f = g_ptr_array_index(cl.set, i);
        if (!strcmp(f->name, "device") && device_flag) {
            if (kb_config_add_device(&c, g_ptr_array_index(cl.set, i + 1), err, sizeof(err))) {
                tool_usage_error("kvbench", NULL, "%s", err);
                cmdline_free(&cl);
                return TOOL_EXIT_USAGE;
            }
            continue;
        }
        device_flag |= !strcmp(f->name, "device");
        if (!calibrate && !strcmp(f->name, "output")) {
            const char *path = g_ptr_array_index(cl.set, i + 1);
            if (report) {
                fclose(report);
            }
            report = fopen(path, "w");
            if (!report) {
                fprintf(stderr, "kvbench: cannot write the report to %s (--output): %s\n", path,
                        strerror(errno));
                cmdline_free(&cl);
                return 2;
            }
        }
        int rc = kb_config_set(&c, f->group, f->key, g_ptr_array_index(cl.set, i + 1), err,
                               sizeof(err));
        if (rc) {
            tool_usage_error("kvbench", NULL, "%s", err);
            cmdline_free(&cl);
            return TOOL_EXIT_USAGE;
        }
    }
    cmdline_free(&cl);
    if (c.queue_depth > 1 && !c.engine_explicit) {
        c.engine = KB_ENGINE_ASYNC;
    }
    if (sizes) {
        return print_sizes(&c);
    }
    if ((baseline || calibrate) && c.ndevices > 1) {
        GString *all = g_string_new(c.devices[0]);
        for (unsigned d = 1; d < c.ndevices; d++) {
            g_string_append_printf(all, ";%s", c.devices[d]);
        }
        tool_usage_error("kvbench", NULL,
                         "device is '%s'; it must be one device for %s (several devices are for "
                         "run)",
                         all->str, baseline ? "baseline" : "calibrate");
        g_string_free(all, TRUE);
        return TOOL_EXIT_USAGE;
    }
    if (baseline) {
        if (!c.device[0]) {
            tool_usage_error("kvbench", NULL,
                             "baseline needs --device /dev/ngXnY (an NVM namespace)");
            return TOOL_EXIT_USAGE;
        }
        report_to(report);
        return kb_baseline(&c);
    }
    if (kb_config_check(&c, err, sizeof(err))) {
        tool_usage_error("kvbench", NULL, "%s", err);
        return TOOL_EXIT_USAGE;
    }
    bool want_kv = calibrate;
    for (unsigned i = 0; i < c.nstores; i++) {
        want_kv |= c.stores[i] == KB_STORE_KVSSD;
        if (!kb_engine_ops_of(c.stores[i])) {
            fprintf(stderr,
                    "kvbench: this kvbench was built without %s; the %s engine "
                    "is not available\n",
                    c.stores[i] == KB_STORE_RAWHASH ? "xxhash.h (libxxhash-dev)"
                                                    : "librocksdb (librocksdb-dev)",
                    kb_store_names[c.stores[i]]);
            return 2;
        }
    }
    if (want_kv && !c.device[0]) {
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
    if (want_kv && !c.ndevices) {
        snprintf(c.devices[0], sizeof(c.devices[0]), "%s", c.device);
        c.ndevices = 1;
    }
    if (calibrate) {
        return kb_calibrate(&c);
    }

    int nph = (c.load.enabled ? 1 : 0) + (c.run.enabled ? 1 : 0);
    if (c.ndevices > 1) {
        return run_devices(&c, nph, report);
    }
    struct kb_result *res = calloc((size_t)(c.nstores * (nph ? nph : 1)), sizeof(*res));
    if (!res) {
        fprintf(stderr, "kvbench: out of memory for the results\n");
        return 1;
    }
    int rc = 0;
    unsigned ran = 0;
    bool setup_failed = false;
    for (unsigned i = 0; i < c.nstores && !rc; i++) {
        struct kb_engine e = {.ops = kb_engine_ops_of(c.stores[i])};
        struct kb_live live;
        if (e.ops->open(&c, &e.st, err, sizeof(err))) {
            fprintf(stderr, "kvbench: %s: %s\n", e.ops->name, err);
            rc = 1;
            setup_failed = true;
            break;
        }
        e.stats = e.ops->stats_dev(e.st);
        kb_provenance_read(e.stats);
        if (kb_live_init(&live, &c)) {
            fprintf(stderr, "kvbench: out of memory for the live-key table\n");
            e.ops->close(e.st);
            rc = 1;
            setup_failed = true;
            break;
        }
        int n = 0;
        struct kb_result *r = &res[i * (unsigned)nph];
        if (c.load.enabled) {
            rc |= kb_run_phase(&c, &e, &c.load, "load", true, &live, &r[n++]);
        }
        if (!rc && c.run.enabled) {
            rc |= kb_run_phase(&c, &e, &c.run, "run", false, &live, &r[n++]);
        }
        kb_live_free(&live);
        e.ops->close(e.st);
        ran++;
    }
    if (setup_failed) {
        /* an engine that never ran has no numbers: no report, not an empty one */
        for (unsigned i = 0; i < ran * (unsigned)nph; i++) {
            kb_result_free(&res[i]);
        }
        free(res);
        return 1;
    }
    report_to(report);
    bool legacy = c.nstores == 1 && c.stores[0] == KB_STORE_KVSSD;
    if (c.json) {
        kb_report_json_engines(&c, res, (int)ran, nph);
    } else if (legacy) {
        for (int i = 0; i < nph; i++) {
            kb_report_table(&c, &res[i]);
        }
    } else {
        for (int p = 0; p < nph; p++) {
            kb_report_side_by_side(&c, res, (int)ran, nph, p);
        }
    }
    uint64_t bad = 0;
    for (unsigned i = 0; i < ran * (unsigned)nph; i++) {
        bad += res[i].errors + res[i].mismatches;
        kb_result_free(&res[i]);
    }
    free(res);
    return rc ? 1 : bad ? 3 : 0;
}
