/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QEMU device-API differences between the series the device builds on
 * (10.0 and 10.2; scripts/build-qemu.sh --qemu), in one place: the device's
 * .c files use these names and never test QEMU's version themselves.
 *
 * QEMU_VERSION_MAJOR/MINOR come from config-host.h (qemu/osdep.h, which
 * every QEMU .c file includes first). Each entry is keyed by the release
 * that changed the API, so a later series (11.x) adds an entry here, not a
 * redesign.
 *
 * Already common to every supported series (10.0 made them so), used
 * directly: `static const Property x[]` without DEFINE_PROP_END_OF_LIST,
 * device_class_set_props(), ResettableClass phases, system/ headers.
 */
#ifndef HW_KVSSD_COMPAT_H
#define HW_KVSSD_COMPAT_H

#ifndef QEMU_VERSION_MAJOR
#error "include qemu/osdep.h (config-host.h: QEMU_VERSION_MAJOR) before compat.h"
#endif

/* 1 when the QEMU being built is MAJOR.MINOR or newer. */
#define KVSSD_QEMU_AT_LEAST(major, minor) \
    (QEMU_VERSION_MAJOR > (major) ||      \
     (QEMU_VERSION_MAJOR == (major) && QEMU_VERSION_MINOR >= (minor)))

/*
 * TypeInfo.class_init's class_data: `const void *` since 10.1 (QOM made
 * class_data const), `void *` before. Declare class_init as
 *     static void x_class_init(ObjectClass *oc, KvssdClassData data)
 */
#if KVSSD_QEMU_AT_LEAST(10, 1)
typedef const void *KvssdClassData;
#else
typedef void *KvssdClassData;
#endif

/*
 * icount_enabled(): exec/icount.h in 10.2, system/cpu-timers.h in 10.0 (the
 * icount API left cpu-timers.h after 10.0; keyed by the first release after
 * it, 10.1, which this device is not built against).
 */
#if KVSSD_QEMU_AT_LEAST(10, 1)
#include "exec/icount.h"
#else
#include "system/cpu-timers.h"
#endif

#endif /* HW_KVSSD_COMPAT_H */
