/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Prefault: anonymous memory populated on a helper thread, ahead of the
 * thread that will write it.
 *
 * The first write of a fresh page of anonymous memory costs the kernel a
 * zeroed page and, on a VM, the hypervisor a page of its own: 2-7 s per
 * GiB on the project's VM (kvftl-bench's `host_first_touch_s_per_gib`),
 * more than the firmware's own work for the bytes a Store writes. The
 * helper asks the kernel for those pages (MADV_POPULATE_WRITE, Linux 5.14)
 * while the firmware works on, so the writer finds them mapped. It only
 * maps memory: no byte changes, nothing of the model depends on it, and a
 * request that is dropped (queue full, kernel without the call) only
 * leaves the fault to the writer, as without a helper.
 *
 * prefault_ask() queues [addr, addr + len) and returns at once (the thread
 * starts on the first request). prefault_forget() must precede unmapping or
 * discarding a range that was asked for: it drops the queued requests that
 * overlap it and waits for one in progress, so the helper never populates
 * memory that is no longer the caller's. prefault_drain() waits until every
 * queued request is done (tests, and nothing else needs it);
 * prefault_fini() stops and joins the thread.
 */
#ifndef KVFTL_PREFAULT_H
#define KVFTL_PREFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

/* Requests in flight at most: a writer needs one or two ahead of it. */
#define PREFAULT_QUEUE 8u

struct prefault_range {
    uint8_t *addr;
    size_t len;
};

struct prefault {
    GThread *thread;   /* NULL until the first request */
    GMutex queue_mu;   /* q, head, count, stop, busy */
    GCond queue_cv;    /* a request or stop (helper); the queue empty and idle (drain) */
    GMutex populate_mu; /* held while the helper populates: prefault_forget() waits on it */
    struct prefault_range q[PREFAULT_QUEUE];
    uint32_t head, count;
    bool stop;
    bool busy;        /* the helper holds a request */
    bool unsupported; /* the kernel refused MADV_POPULATE_WRITE, or no thread: requests dropped */
    uint64_t bytes_asked, bytes_done, dropped;
};

void prefault_init(struct prefault *pf);
void prefault_fini(struct prefault *pf);
bool prefault_ask(struct prefault *pf, void *addr, size_t len);
void prefault_forget(struct prefault *pf, const void *addr, size_t len);
void prefault_drain(struct prefault *pf);

#endif
