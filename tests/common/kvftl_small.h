/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The small devices of the tests: the "default" preset on a geometry of a
 * few MiB, so that GC and device-full come within a short test. One call,
 * so that a test's setup shows only the geometry and what it changes.
 */
#ifndef KVSSD_TESTS_KVFTL_SMALL_H
#define KVSSD_TESTS_KVFTL_SMALL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <kvftl/kvftl.h>

struct kvftl_small_geometry {
    uint32_t channels;
    uint32_t dies_per_channel;
    uint32_t blocks_per_die;
    uint32_t pages_per_block;
    uint32_t page_size_bytes;
};

/* kvftl_config_small() - @cfg = the "default" preset with geometry @g. */
static inline void kvftl_config_small(struct kvftl_config *cfg, struct kvftl_small_geometry g)
{
    kvftl_config_preset(cfg, "default");
    cfg->channels = g.channels;
    cfg->dies_per_channel = g.dies_per_channel;
    cfg->blocks_per_die = g.blocks_per_die;
    cfg->pages_per_block = g.pages_per_block;
    cfg->page_size_bytes = g.page_size_bytes;
}

/*
 * kvftl_config_fuzz_index() - the index design KVFTL_FUZZ_INDEX names
 * (hash, pm983, lsm: the fuzz targets' inputs again against another
 * design; tests/fuzz/meson.build, tests/fuzz/run.sh), else @cfg's own.
 * Read as the index tunable is everywhere: another name stops the run.
 */
static inline enum kvftl_index kvftl_config_fuzz_index(struct kvftl_config *cfg)
{
    const char *design = getenv("KVFTL_FUZZ_INDEX");
    char err[256];
    if (design && kvftl_tunable_parse(cfg, kvftl_tunable_find("index"), "KVFTL_FUZZ_INDEX", design,
                                      err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        abort();
    }
    return cfg->index;
}

#endif
