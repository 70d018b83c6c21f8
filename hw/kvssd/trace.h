/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Trace points of hw/kvssd (generated from trace-events by QEMU's tracetool). */
#include "hw/kvssd/trace-hw_kvssd.h"
