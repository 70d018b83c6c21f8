/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A resource's busy intervals in simulated time: the controller CPU
 * (value_log.h) and each NAND channel (nand.h). Work booked later may use
 * a gap before work booked earlier, as a work-conserving scheduler would:
 * a channel moves whichever die's data is ready, not the data of the
 * command the firmware handled first. A resource kept as one busy-until
 * time instead idles every gap a later-booked transfer leaves behind it.
 *
 * The intervals are sorted, apart, at most CAL_SPANS, kept in a ring (the
 * earliest at head): when a new one meets none and the calendar is full,
 * the earliest is forgotten (its time counts as free from then on; work
 * is booked near the latest end, so a forgotten span is long past).
 */
#ifndef KVFTL_CALENDAR_H
#define KVFTL_CALENDAR_H

#include <stdint.h>

#define CAL_SPANS 64u /* a power of two */

struct calendar {
    struct cal_span {
        uint64_t start_ns, end_ns;
    } span[CAL_SPANS];
    uint32_t head, n; /* the earliest span's slot; spans kept */
};

/* cal_at() - the @i-th earliest span kept (@i < n). */
static inline struct cal_span *cal_at(const struct calendar *c, uint32_t i)
{
    return (struct cal_span *)&c->span[(c->head + i) & (CAL_SPANS - 1)];
}

/* cal_fit() - the start of the first gap from @ready_ns on that holds @work_ns. */
uint64_t cal_fit(const struct calendar *c, uint64_t ready_ns, uint64_t work_ns);

/* cal_mark() - [@s, @e) busy, merged with the spans it touches; the busy time it adds. */
uint64_t cal_mark(struct calendar *c, uint64_t s, uint64_t e);

/* cal_book() - @work_ns at the first gap from @ready_ns on; returns its end. */
uint64_t cal_book(struct calendar *c, uint64_t ready_ns, uint64_t work_ns, uint64_t *added_ns);

/* cal_end() - the end of the latest span (0: none). */
static inline uint64_t cal_end(const struct calendar *c)
{
    return c->n ? cal_at(c, c->n - 1)->end_ns : 0;
}

#endif
