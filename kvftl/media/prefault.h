/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host memory of the firmware's large tables: anonymous mappings in 2 MiB
 * pages, and the prefault helper that populates them ahead of their writer.
 *
 * huge_map() maps @bytes of anonymous memory (zeroed, committed only where
 * touched) starting on a 2 MiB boundary and advised into 2 MiB pages where
 * the kernel allows (MADV_HUGEPAGE): tables read at random, one line per
 * request (the NAND's page entries and arenas, the Bloom filter), in 4 KiB
 * pages also missed the TLB at each read (a nested page walk on a VM).
 * *@raw and *@raw_bytes receive what to munmap(); NULL when the address
 * space is exhausted.
 *
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

/* The host's huge page: the unit huge_map() aligns to and rounds up to. */
#define HUGE_PAGE_BYTES (2u << 20)

static inline uint64_t huge_round_up(uint64_t x)
{
    return (x + HUGE_PAGE_BYTES - 1) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
}

uint8_t *huge_map(size_t bytes, uint8_t **raw, size_t *raw_bytes);

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
