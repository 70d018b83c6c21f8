/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device's own properties (properties.def) as data, QEMU-free: ctrl.c
 * checks, defaults and describes them from it, and docs/properties.md's table is
 * generated from it (tests/cmdset/readme_properties.c). Also the text of
 * every number property, the firmware tunables' too, read once for
 * -device kvssd (ctrl.c) and sim: (host/lib/sim.c).
 */
#ifndef HW_KVSSD_PROPERTIES_H
#define HW_KVSSD_PROPERTIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench/units.h"        /* the numbers every tool takes */
#include "kvftl/kvftl.h"        /* kvftl_preset_names: the values of preset */
#include "kvssd/ext.h"          /* KVSSD_MAX_TAGS: the most tag-table-entries */

/* I/O queue pairs the device has room for (KvssdState's queue arrays): the most max-ioqpairs. */
#define KVSSD_MAX_IOQPAIRS 64

enum kvssd_property_kind {
    KVSSD_PROPERTY_STR,
    KVSSD_PROPERTY_PRESET,
    KVSSD_PROPERTY_BOOL,
    KVSSD_PROPERTY_U8,
    KVSSD_PROPERTY_U32,
    KVSSD_PROPERTY_SIZE32,
};

#define KVSSD_PROPERTY_POW2 1u

/* One row of properties.def. */
struct kvssd_property {
    const char *prop, *unit, *range, *help;
    enum kvssd_property_kind kind;
    const char *dflt_text;      /* STR, PRESET */
    uint64_t dflt, min, max;    /* BOOL, U8, U32 */
    unsigned flags;
};

/* The C type of a property's KvssdState field, by its kind. */
#define KVSSD_PROPERTY_CTYPE_STR char *
#define KVSSD_PROPERTY_CTYPE_PRESET int /* the index in kvftl_preset_names[] */
#define KVSSD_PROPERTY_CTYPE_BOOL bool
#define KVSSD_PROPERTY_CTYPE_U8 uint8_t
#define KVSSD_PROPERTY_CTYPE_U32 uint32_t
#define KVSSD_PROPERTY_CTYPE_SIZE32 uint32_t

/* The dflt column as a string (STR, PRESET) or as a number (the others). */
#define KVSSD_PROPERTY_TEXT_STR(d) (d)
#define KVSSD_PROPERTY_TEXT_PRESET(d) (d)
#define KVSSD_PROPERTY_TEXT_BOOL(d) NULL
#define KVSSD_PROPERTY_TEXT_U8(d) NULL
#define KVSSD_PROPERTY_TEXT_U32(d) NULL
#define KVSSD_PROPERTY_TEXT_SIZE32(d) NULL
#define KVSSD_PROPERTY_NUMBER_STR(d) 0
#define KVSSD_PROPERTY_NUMBER_PRESET(d) 0
#define KVSSD_PROPERTY_NUMBER_BOOL(d) (d)
#define KVSSD_PROPERTY_NUMBER_U8(d) (d)
#define KVSSD_PROPERTY_NUMBER_U32(d) (d)
#define KVSSD_PROPERTY_NUMBER_SIZE32(d) (d)

/* The rows of properties.def, in its order; *@count of them. */
static inline const struct kvssd_property *kvssd_properties(size_t *count)
{
    static const struct kvssd_property rows[] = {
#define KVSSD_PROPERTY(field, kind, prop, unit, dflt, min, max, flags, range, help) \
    {prop,                                                                          \
     unit,                                                                          \
     range,                                                                         \
     help,                                                                          \
     KVSSD_PROPERTY_##kind,                                                         \
     KVSSD_PROPERTY_TEXT_##kind(dflt),                                              \
     KVSSD_PROPERTY_NUMBER_##kind(dflt),                                            \
     min,                                                                           \
     max,                                                                           \
     flags},
#include "properties.def"
    };
    *count = sizeof(rows) / sizeof(rows[0]);
    return rows;
}

/* Is @v an allowed value of the number property @p? */
static inline bool kvssd_property_allows(const struct kvssd_property *p, uint64_t v)
{
    return v >= p->min && v <= p->max && (!(p->flags & KVSSD_PROPERTY_POW2) || (v & (v - 1)) == 0);
}

/*
 * The allowed values in words, the end of realize's sentence ("it must be
 * ..."): "from 1 to 64", "a power of two from 1 to 65536", "default, pm983
 * or cosmos", or the range column.
 */
static inline void kvssd_property_range(const struct kvssd_property *p, char *buf, size_t size)
{
    size_t n = 0;

    if (p->range[0]) {
        snprintf(buf, size, "%s", p->range);
        return;
    }
    switch (p->kind) {
    case KVSSD_PROPERTY_PRESET:
        buf[0] = 0;
        for (int i = 0; i < KVFTL_PRESETS && n < size; i++) {
            n += (size_t)snprintf(buf + n, size - n, "%s%s",
                                  i == 0                   ? ""
                                  : i == KVFTL_PRESETS - 1 ? " or "
                                                           : ", ",
                                  kvftl_preset_names[i]);
        }
        break;
    case KVSSD_PROPERTY_BOOL:
        snprintf(buf, size, "on or off");
        break;
    case KVSSD_PROPERTY_STR:
        snprintf(buf, size, "any text");
        break;
    default:
        snprintf(buf, size, "%sfrom %llu to %llu",
                 p->flags & KVSSD_PROPERTY_POW2 ? "a power of two " : "",
                 (unsigned long long)p->min, (unsigned long long)p->max);
        break;
    }
}

/*
 * kvssd_property_parse() - number property @p's value (U8, U32, SIZE32) from
 * @text, as every tool reads a number (<bench/units.h>: a SIZE32 a byte
 * count, 64K = 64Ki; the others a count, 1e6, 10k), within its range.
 * False with "PROP is 'TEXT'; it must be RANGE" in @err.
 */
static inline bool kvssd_property_parse(const struct kvssd_property *p, const char *text,
                                        uint64_t *v, char *err, size_t err_len)
{
    char range[256];

    if (units_u64(text, p->kind == KVSSD_PROPERTY_SIZE32 ? UNITS_BYTES : UNITS_COUNT, v) &&
        kvssd_property_allows(p, *v)) {
        return true;
    }
    kvssd_property_range(p, range, sizeof(range));
    snprintf(err, err_len, "%s is '%s'; it must be %s", p->prop, text, range);
    return false;
}

/*
 * The value of number tunable @t's property (U32, U64) that leaves the
 * preset's: 0, or all ones with KVFTL_TUNABLE_UNSET_MAX (0 is a value).
 */
static inline uint64_t kvssd_tunable_unset(const struct kvftl_tunable *t)
{
    if (!(t->flags & KVFTL_TUNABLE_UNSET_MAX)) {
        return 0;
    }
    return t->kind == KVFTL_TUNABLE_U32 ? UINT32_MAX : UINT64_MAX;
}

/*
 * kvssd_tunable_property_parse() - number tunable @t's property value from
 * @text: what kvftl_tunable_parse() takes (the tools' tunable flags), or the
 * unset value (kvssd_tunable_unset(): the preset's). False with that
 * function's sentence in @err.
 */
static inline bool kvssd_tunable_property_parse(const struct kvftl_tunable *t, const char *text,
                                                uint64_t *v, char *err, size_t err_len)
{
    struct kvftl_config c;

    memset(&c, 0, sizeof(c));
    if (kvftl_tunable_parse(&c, t, t->prop, text, err, err_len) == 0) {
        *v = kvftl_tunable_get(&c, t);
        return true;
    }
    return units_u64(text, t->flags & KVFTL_TUNABLE_SIZE ? UNITS_BYTES : UNITS_COUNT, v) &&
           *v == kvssd_tunable_unset(t);
}

/* The default in words: "KVSSD0001", "off", "4096". */
static inline void kvssd_property_default(const struct kvssd_property *p, char *buf, size_t size)
{
    if (p->dflt_text) {
        snprintf(buf, size, "%s", p->dflt_text);
    } else if (p->kind == KVSSD_PROPERTY_BOOL) {
        snprintf(buf, size, "%s", p->dflt ? "on" : "off");
    } else {
        snprintf(buf, size, "%llu", (unsigned long long)p->dflt);
    }
}

#endif /* HW_KVSSD_PROPERTIES_H */
