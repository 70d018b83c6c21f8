/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The firmware's configuration: the presets and the checks of struct
 * kvftl_config, and the description of every tunable for the tools that set
 * them (the QEMU device, kvftl-bench, the docs/properties.md check), all from
 * the one table include/kvftl/tunables.def.
 */
#include <kvftl/kvftl.h>

#include <bench/units.h> /* header-only, libc only: the parser every tool shares */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refuse.h"
#include "value_log.h"

#define MIB (1024ull * 1024)
#define MIN_STRIPE_BYTES (2 * MIB + 8192)

const char *const kvftl_preset_names[KVFTL_PRESETS] = {"default", "pm983", "cosmos"};

const char *const kvftl_packing_names[KVFTL_PACK_BACKFILL + 1] = {
    [KVFTL_PACK_BLOCK] = "block",
    [KVFTL_PACK_ALL] = "all",
    [KVFTL_PACK_SELECTIVE] = "selective",
    [KVFTL_PACK_BACKFILL] = "backfill",
};

const char *const kvftl_gc_policy_names[KVFTL_GC_COST_BENEFIT + 1] = {
    [KVFTL_GC_GREEDY] = "greedy",
    [KVFTL_GC_COST_BENEFIT] = "cost-benefit",
};

const char *const kvftl_command_set_names[KVFTL_CMDSET_NVM + 1] = {
    [KVFTL_CMDSET_KV] = "kv",
    [KVFTL_CMDSET_NVM] = "nvm",
};

const char *const kvftl_index_names[KVFTL_INDEX_LSM + 1] = {
    [KVFTL_INDEX_HASH] = "hash",
    [KVFTL_INDEX_PM983] = "pm983",
    [KVFTL_INDEX_LSM] = "lsm",
};

/* ---- the table, as data ---- */

#define TUNABLE_VALUE_U32(v) ((uint64_t)(v))
#define TUNABLE_VALUE_U64(v) ((uint64_t)(v))
#define TUNABLE_VALUE_BOOL(v) ((uint64_t)(v))
#define TUNABLE_VALUE_ENUM(v) ((uint64_t)(v))
#define TUNABLE_VALUE_STR(v) 0
#define TUNABLE_NAMES_U32(field) NULL
#define TUNABLE_NAMES_U64(field) NULL
#define TUNABLE_NAMES_BOOL(field) NULL
#define TUNABLE_NAMES_ENUM(field) kvftl_##field##_names
#define TUNABLE_NAMES_STR(field) NULL

const struct kvftl_tunable kvftl_tunables[] = {
#define KVFTL_TUNABLE(f, kind_, where, prop_, unit_, d, pm, cos, min_, max_, flags_, range_, \
                      help_)                                                                 \
    {                                                                                        \
        .field = #f,                                                                         \
        .prop = prop_,                                                                       \
        .unit = unit_,                                                                       \
        .range = range_,                                                                     \
        .help = help_,                                                                       \
        .kind = KVFTL_TUNABLE_##kind_,                                                       \
        .qemu = KVFTL_TUNABLE_WHERE_##where,                                                 \
        .flags = (flags_),                                                                   \
        .min = (min_),                                                                       \
        .max = (max_),                                                                       \
        .preset = {TUNABLE_VALUE_##kind_(d), TUNABLE_VALUE_##kind_(pm),                      \
                   TUNABLE_VALUE_##kind_(cos)},                                              \
        .names = TUNABLE_NAMES_##kind_(f),                                                   \
        .offset = offsetof(struct kvftl_config, f),                                          \
        .size = sizeof(((struct kvftl_config *)0)->f),                                       \
    },
#include <kvftl/tunables.def>
};

const size_t kvftl_tunable_count = sizeof(kvftl_tunables) / sizeof(kvftl_tunables[0]);

/* ---- presets ---- */

static const struct kvftl_config presets[KVFTL_PRESETS] = {
    {
#define KVFTL_TUNABLE(f, kind, where, prop, unit, d, pm, cos, ...) .f = d,
#include <kvftl/tunables.def>
    },
    {
#define KVFTL_TUNABLE(f, kind, where, prop, unit, d, pm, cos, ...) .f = pm,
#include <kvftl/tunables.def>
    },
    {
#define KVFTL_TUNABLE(f, kind, where, prop, unit, d, pm, cos, ...) .f = cos,
#include <kvftl/tunables.def>
    },
};

int kvftl_config_preset(struct kvftl_config *cfg, const char *name)
{
    for (int i = 0; i < KVFTL_PRESETS; i++) {
        if (!name ? i == 0 : strcmp(name, kvftl_preset_names[i]) == 0) {
            *cfg = presets[i];
            return 0;
        }
    }
    return -1;
}

/* ---- one tunable ---- */

const struct kvftl_tunable *kvftl_tunable_find(const char *name)
{
    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        if (strcmp(name, kvftl_tunables[i].field) == 0 ||
            strcmp(name, kvftl_tunables[i].prop) == 0) {
            return &kvftl_tunables[i];
        }
    }
    return NULL;
}

uint64_t kvftl_tunable_get(const struct kvftl_config *c, const struct kvftl_tunable *t)
{
    const char *p = (const char *)c + t->offset;
    uint32_t v32;
    uint64_t v64;
    bool b;

    switch (t->size) {
    case sizeof(bool):
        memcpy(&b, p, sizeof(b));
        return b;
    case sizeof(uint32_t):
        memcpy(&v32, p, sizeof(v32));
        return v32;
    default:
        memcpy(&v64, p, sizeof(v64));
        return v64;
    }
}

void kvftl_tunable_put(struct kvftl_config *c, const struct kvftl_tunable *t, uint64_t v)
{
    char *p = (char *)c + t->offset;
    uint32_t v32 = (uint32_t)v;
    bool b = v != 0;

    switch (t->size) {
    case sizeof(bool):
        memcpy(p, &b, sizeof(b));
        break;
    case sizeof(uint32_t):
        memcpy(p, &v32, sizeof(v32));
        break;
    default:
        memcpy(p, &v, sizeof(v));
        break;
    }
}

/* "a, b, c or d" */
static size_t names_text(const struct kvftl_tunable *t, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = 0;
    for (uint64_t i = 0; i <= t->max; i++) {
        const char *sep = i == 0 ? "" : i == t->max ? " or " : ", ";
        n += (size_t)snprintf(buf + (n < len ? n : len - 1), n < len ? len - n : 1, "%s%s", sep,
                              t->names[i]);
    }
    return n;
}

size_t kvftl_tunable_range(const struct kvftl_tunable *t, char *buf, size_t len)
{
    if (t->range[0]) {
        return (size_t)snprintf(buf, len, "%s", t->range);
    }
    switch (t->kind) {
    case KVFTL_TUNABLE_BOOL:
        return (size_t)snprintf(buf, len, "on or off");
    case KVFTL_TUNABLE_ENUM:
        return names_text(t, buf, len);
    case KVFTL_TUNABLE_STR:
        return (size_t)snprintf(buf, len, "a file name");
    default:
        break;
    }
    uint64_t type_max = t->kind == KVFTL_TUNABLE_U32 ? UINT32_MAX : UINT64_MAX;
    const char *pow2 = t->flags & KVFTL_TUNABLE_POW2 ? "a power of two " : "";
    if (t->max == type_max && t->min == 0) {
        return (size_t)snprintf(buf, len, "any %snumber", pow2);
    }
    if (t->max == type_max) {
        return (size_t)snprintf(buf, len, "%sat least %llu", pow2, (unsigned long long)t->min);
    }
    return (size_t)snprintf(buf, len, "%sfrom %llu to %llu", pow2, (unsigned long long)t->min,
                            (unsigned long long)t->max);
}

size_t kvftl_tunable_value_text(const struct kvftl_tunable *t, uint64_t v, char *buf, size_t len)
{
    switch (t->kind) {
    case KVFTL_TUNABLE_BOOL:
        return (size_t)snprintf(buf, len, "%s", v ? "on" : "off");
    case KVFTL_TUNABLE_ENUM:
        return (size_t)snprintf(buf, len, "%s", v <= t->max ? t->names[v] : "?");
    case KVFTL_TUNABLE_STR:
        return (size_t)snprintf(buf, len, "unset");
    default:
        if (strcmp(t->unit, "bytes") == 0 && v >= MIB && v % MIB == 0) {
            return (size_t)snprintf(buf, len, "%llu MiB", (unsigned long long)(v / MIB));
        }
        return (size_t)snprintf(buf, len, "%llu", (unsigned long long)v);
    }
}

/* Is @v within a number tunable's own range (not counting other fields)? */
static bool number_in_range(const struct kvftl_tunable *t, uint64_t v)
{
    return v >= t->min && v <= t->max && (!(t->flags & KVFTL_TUNABLE_POW2) || is_pow2(v));
}

int kvftl_tunable_parse(struct kvftl_config *c, const struct kvftl_tunable *t, const char *name,
                        const char *text, char *err, size_t err_len)
{
    char range[256];

    kvftl_tunable_range(t, range, sizeof(range));
    switch (t->kind) {
    case KVFTL_TUNABLE_STR:
        /* the caller keeps @text alive as long as @c */
        memcpy((char *)c + t->offset, &text, sizeof(text));
        return 0;
    case KVFTL_TUNABLE_BOOL:
        if (strcmp(text, "on") == 0 || strcmp(text, "off") == 0) {
            kvftl_tunable_put(c, t, text[1] == 'n');
            return 0;
        }
        break;
    case KVFTL_TUNABLE_ENUM:
        for (uint64_t i = 0; i <= t->max; i++) {
            if (strcmp(text, t->names[i]) == 0) {
                kvftl_tunable_put(c, t, i);
                return 0;
            }
        }
        break;
    default: {
        /* as every tool reads a number: a byte count (4k, 64Mi) or a count (1e6, 100k) */
        enum units_kind kind = t->flags & KVFTL_TUNABLE_SIZE ? UNITS_BYTES : UNITS_COUNT;
        uint64_t v;
        uint64_t type_max = t->kind == KVFTL_TUNABLE_U32 ? UINT32_MAX : UINT64_MAX;
        if (units_u64(text, kind, &v) && v <= type_max &&
            ((t->flags & KVFTL_TUNABLE_CROSS) || number_in_range(t, v))) {
            kvftl_tunable_put(c, t, v);
            return 0;
        }
        break;
    }
    }
    if (err && err_len) {
        snprintf(err, err_len, "%s is '%s'; it must be %s", name, text, range);
    }
    return -1;
}

/* ---- checks ---- */

#define FAIL(...) return refuse(err, err_len, __VA_ARGS__)

/* Every field on its own: the table's min, max and flags. */
static int check_each_field(const struct kvftl_config *c, char *err, size_t err_len)
{
    char range[256];

    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        const struct kvftl_tunable *t = &kvftl_tunables[i];
        uint64_t v = t->kind == KVFTL_TUNABLE_STR ? 0 : kvftl_tunable_get(c, t);

        if ((t->flags & KVFTL_TUNABLE_CROSS) || t->kind == KVFTL_TUNABLE_BOOL ||
            t->kind == KVFTL_TUNABLE_STR) {
            continue;
        }
        if (t->kind == KVFTL_TUNABLE_ENUM) {
            if (v > t->max) {
                /* "0 (block), 1 (all), 2 (selective) or 3 (backfill)" */
                size_t n = 0;
                for (uint64_t k = 0; k <= t->max && n < sizeof(range); k++) {
                    n += (size_t)snprintf(range + n, sizeof(range) - n, "%s%llu (%s)",
                                          k == 0        ? ""
                                          : k == t->max ? " or "
                                                        : ", ",
                                          (unsigned long long)k, t->names[k]);
                }
                FAIL("%s is %llu; it must be %s", t->field, (unsigned long long)v, range);
            }
            continue;
        }
        if (!number_in_range(t, v)) {
            kvftl_tunable_range(t, range, sizeof(range));
            FAIL("%s is %llu; it must be %s", t->field, (unsigned long long)v, range);
        }
    }
    return 0;
}

int kvftl_config_check(const struct kvftl_config *c, char *err, size_t err_len)
{
    if (check_each_field(c, err, err_len) != 0) {
        return -1;
    }
    /* the fields whose range depends on others (KVFTL_TUNABLE_CROSS) */
    if (c->gc_high_watermark_blocks < c->gc_low_watermark_blocks) {
        FAIL("gc_high_watermark_blocks is %u; it must be at least gc_low_watermark_blocks (%u)",
             c->gc_high_watermark_blocks, c->gc_low_watermark_blocks);
    }
    uint32_t min_blocks = c->gc_high_watermark_blocks + 4;
    if (c->blocks_per_die < min_blocks || c->blocks_per_die > 1u << 20) {
        FAIL("blocks_per_die is %u; it must be from %u (gc_high_watermark_blocks + 4) to %u",
             c->blocks_per_die, min_blocks, 1u << 20);
    }
    uint64_t stripe = (uint64_t)c->channels * c->dies_per_channel * c->pages_per_block *
                      c->page_size_bytes;
    if (stripe < MIN_STRIPE_BYTES || stripe > 4096 * MIB) {
        FAIL("an erase stripe (channels x dies_per_channel x pages_per_block x page_size_bytes) "
             "is %llu bytes; it must be from %llu (the largest blob) to %llu",
             (unsigned long long)stripe, (unsigned long long)MIN_STRIPE_BYTES,
             (unsigned long long)(4096 * MIB));
    }
    uint64_t total = stripe * c->blocks_per_die;
    if (total > (1ull << LOC_ADDR_BITS) || total / c->page_size_bytes >= UINT32_MAX) {
        FAIL("the device is %llu bytes; it must be at most %llu", (unsigned long long)total,
             (unsigned long long)(1ull << LOC_ADDR_BITS));
    }
    if (c->large_blob_unit_bytes && (c->large_blob_unit_bytes > c->placement_unit_bytes ||
                                     !is_pow2(c->large_blob_unit_bytes))) {
        FAIL("large_blob_unit_bytes is %u; it must be 0 or a power of two from 1 to "
             "placement_unit_bytes (%u)",
             c->large_blob_unit_bytes, c->placement_unit_bytes);
    }
    /* a blob that fits the data area must still fit it once rounded to its unit */
    uint32_t large_unit = c->large_blob_unit_bytes ? c->large_blob_unit_bytes
                                                   : c->placement_unit_bytes;
    if (c->page_data_bytes &&
        (c->page_data_bytes < 4096 || c->page_data_bytes > c->page_size_bytes ||
         c->page_data_bytes % large_unit)) {
        FAIL("page_data_bytes is %u; it must be 0 (the whole page) or a multiple of the large "
             "blob unit (%u) from 4096 to page_size_bytes (%u)",
             c->page_data_bytes, large_unit, c->page_size_bytes);
    }
    if (c->page_data_bytes) {
        /* the largest blob occupies one whole page per data area's worth */
        uint64_t largest = BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES + KVFTL_VALUE_MAX_BYTES;
        uint64_t need = (largest + c->page_data_bytes - 1) / c->page_data_bytes *
                        c->page_size_bytes;
        if (stripe < need) {
            FAIL("page_data_bytes is %u; the largest blob would occupy %llu bytes of whole pages, "
                 "more than an erase stripe (%llu bytes): raise it or enlarge the stripe",
                 c->page_data_bytes, (unsigned long long)need, (unsigned long long)stripe);
        }
    }
    if (c->write_buffer_pages_per_die > c->pages_per_block) {
        FAIL("write_buffer_pages_per_die is %u; it must be from 0 to pages_per_block (%u): the "
             "power-loss dump of the write buffer must fit one erase stripe",
             c->write_buffer_pages_per_die, c->pages_per_block);
    }
    if (c->dlt_entries > c->buffer_entries) {
        FAIL("dlt_entries is %u; it must be from 1 to buffer_entries (%u), or 0 for buffer_entries",
             c->dlt_entries, c->buffer_entries);
    }
    uint32_t ipb = c->index_page_bytes ? c->index_page_bytes : c->page_size_bytes;
    if (ipb < 4096 || ipb > c->page_size_bytes || !is_pow2(ipb)) {
        FAIL("index_page_bytes is %u; it must be a power of two from 4096 to page_size_bytes (%u), "
             "or 0 for page_size_bytes",
             c->index_page_bytes, c->page_size_bytes);
    }
    if (c->bloom && (c->bloom_bits_per_key < 1 || c->bloom_bits_per_key > 64)) {
        FAIL("bloom_bits_per_key is %u; it must be from 1 to 64", c->bloom_bits_per_key);
    }
    uint64_t min_dram = 2ull * ipb + (c->bloom ? 64 : 0);
    if (c->index_dram_bytes < min_dram) {
        FAIL("index_dram_bytes is %llu; it must be at least %llu (two index pages%s)",
             (unsigned long long)c->index_dram_bytes, (unsigned long long)min_dram,
             c->bloom ? " and a Bloom block" : "");
    }
    return 0;
}
