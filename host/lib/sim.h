/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sim transport (sim.c): libkvssd opens "sim:IMAGE[,prop=value...]" as
 * a device. The device's QEMU-free command sets (hw/kvssd admin.c, kv.c,
 * inline.c) and the firmware (kvftl) run in this process, persistent in
 * IMAGE: the image format, lock and checks of -device kvssd,image=IMAGE,
 * and the same properties (hw/kvssd/properties.def and the firmware
 * tunables of include/kvftl/tunables.def that are QEMU properties).
 */
#ifndef KVSSD_SIM_H
#define KVSSD_SIM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvftl/kvftl.h"
#include "properties.h"

#include "kvssd_priv.h"

/* The longest "IMAGE[,prop=value...]" after the prefix, and the most properties in it. */
#define KVSSD_SIM_SPEC_MAX 4096u
#define KVSSD_SIM_PROPS_MAX 64u

/* The device's own properties (properties.def), one field each, as KvssdState has them. */
struct kvssd_sim_props {
#define KVSSD_PROPERTY(field, kind, ...) KVSSD_PROPERTY_CTYPE_##kind field;
#include "properties.def"
};

/* What "IMAGE[,prop=value...]" asks for. */
struct kvssd_sim_config {
    char text[KVSSD_SIM_SPEC_MAX + 1]; /* the spec, cut into its parts (strings point here) */
    struct kvftl_config ftl;           /* the preset, then each tunable given; image_path set */
    struct kvssd_sim_props props;
};

/*
 * kvssd_sim_parse() - read @spec (without "sim:") into @cfg: the preset
 * first (wherever it is), then every other property in order, each checked
 * against its row's range, then the firmware config as a whole.
 * Return: 0, or -1 with a sentence in @err naming the property, its value
 * and what it must be.
 */
int kvssd_sim_parse(const char *spec, struct kvssd_sim_config *cfg, char *err, size_t err_len);

#endif
