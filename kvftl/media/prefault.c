/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Host memory in 2 MiB pages, populated on a helper thread ahead of its writer (prefault.h). */
#include "prefault.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older headers lack the name */
#endif

uint8_t *huge_map(size_t bytes, uint8_t **raw, size_t *raw_bytes)
{
    size_t len = huge_round_up(bytes);
    void *m = mmap(NULL, len + HUGE_PAGE_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        *raw = NULL;
        *raw_bytes = 0;
        return NULL;
    }
    uint8_t *at = (uint8_t *)(((uintptr_t)m + HUGE_PAGE_BYTES - 1) &
                              ~(uintptr_t)(HUGE_PAGE_BYTES - 1));
    madvise(at, len, MADV_HUGEPAGE);
    *raw = m;
    *raw_bytes = len + HUGE_PAGE_BYTES;
    return at;
}

void prefault_init(struct prefault *pf)
{
    memset(pf, 0, sizeof(*pf));
    g_mutex_init(&pf->queue_mu);
    g_mutex_init(&pf->populate_mu);
    g_cond_init(&pf->queue_cv);
}

static gpointer prefault_main(gpointer opaque)
{
    struct prefault *pf = opaque;
    for (;;) {
        g_mutex_lock(&pf->queue_mu);
        while (!pf->count && !pf->stop) {
            g_cond_wait(&pf->queue_cv, &pf->queue_mu);
        }
        bool stop = pf->stop;
        g_mutex_unlock(&pf->queue_mu);
        if (stop) {
            return NULL;
        }
        /* populate_mu before queue_mu, as prefault_forget() takes them */
        g_mutex_lock(&pf->populate_mu);
        g_mutex_lock(&pf->queue_mu);
        struct prefault_range r = {0};
        if (pf->count) { /* a prefault_forget() between the two locks may have taken it */
            r = pf->q[pf->head];
            pf->head = (pf->head + 1) % PREFAULT_QUEUE;
            pf->count--;
            pf->busy = true;
        }
        g_mutex_unlock(&pf->queue_mu);
        int rc = 0, err = 0;
        if (r.len) {
            rc = madvise(r.addr, r.len, MADV_POPULATE_WRITE);
            err = errno;
        }
        g_mutex_unlock(&pf->populate_mu);
        g_mutex_lock(&pf->queue_mu);
        pf->busy = false;
        if (r.len && rc == 0) {
            pf->bytes_done += r.len;
        } else if (r.len && err == EINVAL) {
            pf->unsupported = true; /* a kernel before 5.14: the writer faults, as before */
        }
        g_cond_broadcast(&pf->queue_cv); /* prefault_drain() */
        g_mutex_unlock(&pf->queue_mu);
    }
}

bool prefault_ask(struct prefault *pf, void *addr, size_t len)
{
    if (!len) {
        return false;
    }
    g_mutex_lock(&pf->queue_mu);
    bool queued = false;
    if (!pf->unsupported && !pf->stop && pf->count < PREFAULT_QUEUE) {
        if (!pf->thread) {
            pf->thread = g_thread_try_new("kvftl-prefault", prefault_main, pf, NULL);
            if (!pf->thread) {
                pf->unsupported = true; /* no thread to spare: the writer faults */
            }
        }
        if (pf->thread) {
            pf->q[(pf->head + pf->count) % PREFAULT_QUEUE] = (struct prefault_range){.addr = addr,
                                                                                     .len = len};
            pf->count++;
            pf->bytes_asked += len;
            queued = true;
            g_cond_broadcast(&pf->queue_cv);
        }
    }
    if (!queued) {
        pf->dropped++;
    }
    g_mutex_unlock(&pf->queue_mu);
    return queued;
}

void prefault_forget(struct prefault *pf, const void *addr, size_t len)
{
    const uint8_t *lo = addr, *hi = lo + len;
    g_mutex_lock(&pf->populate_mu); /* a request in progress ends first */
    g_mutex_lock(&pf->queue_mu);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < pf->count; i++) {
        struct prefault_range r = pf->q[(pf->head + i) % PREFAULT_QUEUE];
        if (r.addr < hi && r.addr + r.len > lo) {
            continue;
        }
        pf->q[(pf->head + kept) % PREFAULT_QUEUE] = r;
        kept++;
    }
    pf->count = kept;
    g_mutex_unlock(&pf->queue_mu);
    g_mutex_unlock(&pf->populate_mu);
}

void prefault_drain(struct prefault *pf)
{
    g_mutex_lock(&pf->queue_mu);
    while (pf->thread && (pf->count || pf->busy)) {
        g_cond_wait(&pf->queue_cv, &pf->queue_mu);
    }
    g_mutex_unlock(&pf->queue_mu);
}

void prefault_fini(struct prefault *pf)
{
    g_mutex_lock(&pf->queue_mu);
    pf->stop = true;
    pf->count = 0;
    g_cond_broadcast(&pf->queue_cv);
    GThread *t = pf->thread;
    pf->thread = NULL;
    g_mutex_unlock(&pf->queue_mu);
    if (t) {
        g_thread_join(t);
    }
    g_mutex_clear(&pf->queue_mu);
    g_mutex_clear(&pf->populate_mu);
    g_cond_clear(&pf->queue_cv);
}
