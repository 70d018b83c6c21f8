/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Busy intervals of one resource in simulated time (calendar.h). */
#include "calendar.h"

#include <string.h>

/* The first span that ends after @t (c->n when none): spans are sorted by their ends too. */
static uint32_t first_ending_after(const struct calendar *c, uint64_t t)
{
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->span[mid].end_ns <= t) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint64_t cal_fit(const struct calendar *c, uint64_t ready_ns, uint64_t work_ns)
{
    uint64_t s = ready_ns;
    for (uint32_t i = first_ending_after(c, s); i < c->n; i++) {
        if (c->span[i].start_ns >= s + work_ns) {
            break;
        }
        s = c->span[i].end_ns;
    }
    return s;
}

uint64_t cal_mark(struct calendar *c, uint64_t s, uint64_t e)
{
    if (e <= s) {
        return 0;
    }
    /* spans [lo, hi) touch [s, e) */
    uint32_t lo = first_ending_after(c, s);
    while (lo > 0 && c->span[lo - 1].end_ns == s) {
        lo--; /* one ending exactly at s touches it */
    }
    uint32_t hi = lo;
    uint64_t covered = 0;
    while (hi < c->n && c->span[hi].start_ns <= e) {
        uint64_t a = c->span[hi].start_ns > s ? c->span[hi].start_ns : s;
        uint64_t b = c->span[hi].end_ns < e ? c->span[hi].end_ns : e;
        covered += b > a ? b - a : 0;
        hi++;
    }
    if (lo == hi && c->n == CAL_SPANS) {
        /* full: the earliest span is forgotten */
        if (lo == 0) {
            return e - s; /* the new span is the earliest */
        }
        memmove(&c->span[0], &c->span[1], (c->n - 1) * sizeof(c->span[0]));
        c->n--;
        lo--;
        hi--;
    }
    struct cal_span m = {s, e};
    if (lo < hi) {
        m.start_ns = c->span[lo].start_ns < s ? c->span[lo].start_ns : s;
        m.end_ns = c->span[hi - 1].end_ns > e ? c->span[hi - 1].end_ns : e;
    }
    memmove(&c->span[lo + 1], &c->span[hi], (c->n - hi) * sizeof(m));
    c->span[lo] = m;
    c->n = c->n - (hi - lo) + 1;
    return e - s - covered;
}

uint64_t cal_book(struct calendar *c, uint64_t ready_ns, uint64_t work_ns, uint64_t *added_ns)
{
    uint64_t s = cal_fit(c, ready_ns, work_ns);
    uint64_t added = cal_mark(c, s, s + work_ns);
    if (added_ns) {
        *added_ns = added;
    }
    return s + work_ns;
}
