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
#include <getopt.h>
#include <kvssd_version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvbench.h"

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
    {"io", 1, "benchmark", "io", NULL},
    {"nvm-ctrl", 1, "benchmark", "nvm_ctrl", NULL},
    {"rocksdb-dir", 1, "rocksdb", "dir", NULL},
    {"rocksdb-wal", 1, "rocksdb", "wal", NULL},
    {"rocksdb-sync", 1, "rocksdb", "sync", NULL},
    {"rocksdb-direct-io", 1, "rocksdb", "direct_io", NULL},
    {"rocksdb-block-cache", 1, "rocksdb", "block_cache_bytes", NULL},
    {"rocksdb-write-buffer", 1, "rocksdb", "write_buffer_bytes", NULL},
    {"rocksdb-compression", 1, "rocksdb", "compression", NULL},
    {"rocksdb-keep", 0, "rocksdb", "keep", "true"},
    {"rawhash-dev", 1, "rawhash", "device", NULL},
    {"rawhash-size", 1, "rawhash", "size_bytes", NULL},
    {"rawhash-write-block", 1, "rawhash", "write_block_bytes", NULL},
    {"rawhash-defrag-lwm", 1, "rawhash", "defrag_lwm_pct", NULL},
    {"rawhash-commit", 1, "rawhash", "commit_to_device", NULL},
    {"rawhash-trim", 1, "rawhash", "trim", NULL},
    {"rawhash-keep", 0, "rawhash", "keep", "true"},
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
            "                 user-space PCI transport: full inline layout; sync engine)\n"
            "  --engine LIST  kvssd, rocksdb, rawhash (comma-separated, run in that order)\n"
            "                 or all: the same workload on each, reported side by side;\n"
            "                 sync/async still choose kvssd's I/O path (= --io)\n");
    for (size_t i = 0; i < NFLAGS; i++) {
        fprintf(f, "  --%-16s %s.%s%s\n", flags[i].name, flags[i].group, flags[i].key,
                flags[i].has_arg ? "" : " (no argument)");
    }
    fprintf(f, "  --list-presets\n  --version\n  -h, --help\nSee docs/host.md and docs/kvbench.md "
               "for every key.\n");
}

int main(int argc, char **argv)
{
    struct kb_config c;
    char err[512];
    struct option longopts[NFLAGS + 5];
    bool calibrate = false, baseline = false;

    kb_config_default(&c);
    /* --version anywhere before "--" (kvbench --version, kvbench run --version) */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--version")) {
            kvssd_print_version("kvbench");
            return 0;
        }
    }
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
    if (calibrate) {
        return kb_calibrate(&c);
    }

    int nph = (c.load.enabled ? 1 : 0) + (c.run.enabled ? 1 : 0);
    struct kb_result *res = calloc((size_t)(c.nstores * (nph ? nph : 1)), sizeof(*res));
    if (!res) {
        fprintf(stderr, "kvbench: out of memory for the results\n");
        return 1;
    }
    int rc = 0;
    unsigned ran = 0;
    for (unsigned i = 0; i < c.nstores && !rc; i++) {
        struct kb_engine e = {.ops = kb_engine_ops_of(c.stores[i])};
        struct kb_live live;
        if (e.ops->open(&c, &e.st, err, sizeof(err))) {
            fprintf(stderr, "kvbench: %s: %s\n", e.ops->name, err);
            rc = 1;
            break;
        }
        e.stats = e.ops->stats_dev(e.st);
        if (kb_live_init(&live, &c)) {
            fprintf(stderr, "kvbench: out of memory for the live-key table\n");
            e.ops->close(e.st);
            rc = 1;
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
    }
    free(res);
    return rc ? 1 : bad ? 3 : 0;
}
