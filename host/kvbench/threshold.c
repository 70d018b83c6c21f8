/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The threshold rule of kvbench calibrate, apart from its device loop so
 * that the unit tests check it: a method keeps winning up to the first
 * measured size where it is slower (BandSlim §3.2: "the size at which
 * piggybacking becomes less efficient than PRP-based transfers").
 */
#include "kvbench.h"

uint32_t kb_pick_threshold(const uint32_t *sizes, const double *a_ns, const double *b_ns, size_t n)
{
    uint32_t t = 0;
    for (size_t i = 0; i < n; i++) {
        if (a_ns[i] > b_ns[i]) {
            break;
        }
        t = sizes[i];
    }
    return t;
}
