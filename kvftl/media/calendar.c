/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Busy intervals of one resource in simulated time (calendar.h). */
#include "calendar.h"

/* The first span that ends after @t (c->n when none): spans are sorted by their ends too. */
static uint32_t first_ending_after(const struct calendar *c, uint64_t t)
{
    uint32_t lo = 0, hi = c->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cal_at(c, mid)->end_ns <= t) {
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
        const struct cal_span *sp = cal_at(c, i);
        if (sp->start_ns >= s + work_ns) {
            break;
        }
        s = sp->end_ns;
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
    if (lo > 0 && cal_at(c, lo - 1)->end_ns == s) {
        lo--; /* the one ending exactly at s touches it (spans are apart: one at most) */
    }
    uint32_t hi = lo;
    uint64_t covered = 0;
    while (hi < c->n && cal_at(c, hi)->start_ns <= e) {
        const struct cal_span *sp = cal_at(c, hi);
        uint64_t a = sp->start_ns > s ? sp->start_ns : s;
        uint64_t b = sp->end_ns < e ? sp->end_ns : e;
        covered += b > a ? b - a : 0;
        hi++;
    }
    if (lo == hi && c->n == CAL_SPANS) {
        /* full: the earliest span is forgotten */
        if (lo == 0) {
            return e - s; /* the new span is the earliest */
        }
        c->head = (c->head + 1) & (CAL_SPANS - 1);
        c->n--;
        lo--;
        hi--;
    }
    struct cal_span m = {s, e};
    if (lo < hi) {
        m.start_ns = cal_at(c, lo)->start_ns < s ? cal_at(c, lo)->start_ns : s;
        m.end_ns = cal_at(c, hi - 1)->end_ns > e ? cal_at(c, hi - 1)->end_ns : e;
    }
    /* [lo, hi) becomes m: the later spans move by 1 - (hi - lo) */
    if (lo == hi) {
        for (uint32_t i = c->n; i > hi; i--) {
            *cal_at(c, i) = *cal_at(c, i - 1); /* slot n is free: n < CAL_SPANS here */
        }
        c->n++;
    } else {
        uint32_t gone = hi - lo - 1;
        for (uint32_t i = hi; i < c->n && gone; i++) {
            *cal_at(c, i - gone) = *cal_at(c, i);
        }
        c->n -= gone;
    }
    *cal_at(c, lo) = m;
    return e - s - covered;
}

uint64_t cal_book(struct calendar *c, uint64_t ready_ns, uint64_t work_ns, uint64_t *added_ns)
{
    struct cal_span *last = c->n ? cal_at(c, c->n - 1) : 0;
    if (last && work_ns && ready_ns >= last->end_ns) {
        /* from the end of every span on (the common case): as cal_mark() would, at once */
        if (ready_ns == last->end_ns) {
            last->end_ns += work_ns;
        } else {
            if (c->n == CAL_SPANS) {
                c->head = (c->head + 1) & (CAL_SPANS - 1); /* the earliest forgotten */
                c->n--;
            }
            *cal_at(c, c->n++) = (struct cal_span){ready_ns, ready_ns + work_ns};
        }
        if (added_ns) {
            *added_ns = work_ns;
        }
        return ready_ns + work_ns;
    }
    uint64_t s = cal_fit(c, ready_ns, work_ns);
    uint64_t added = cal_mark(c, s, s + work_ns);
    if (added_ns) {
        *added_ns = added;
    }
    return s + work_ns;
}
