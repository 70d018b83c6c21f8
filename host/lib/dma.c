/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bounce buffers for large data transfers.
 *
 * Linux maps a passthrough buffer page by page and refuses a request with
 * more physical segments than the queue allows (NVMe PCI: 127 or 128), so
 * a value of more than ~500 KiB in ordinary 4 KiB pages fails with EINVAL.
 * Physically contiguous memory is one segment: large transfers go through
 * a 2 MiB-aligned buffer backed by a transparent huge page
 * (MADV_HUGEPAGE), one per thread for the synchronous path and one per
 * operation for the asynchronous path.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "kvssd_priv.h"

#define HUGE_BYTES (2u * 1024 * 1024)

static size_t dma_round(size_t len)
{
    return (len + HUGE_BYTES - 1) & ~(size_t)(HUGE_BYTES - 1);
}

void *kvssd_dma_alloc(size_t len)
{
    size_t want = dma_round(len ? len : 1);
    uint8_t *p = mmap(NULL, want + HUGE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    /* trim to a 2 MiB-aligned window so that a huge page can back it */
    uintptr_t start = ((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1);
    size_t head = start - (uintptr_t)p, tail = HUGE_BYTES - head;
    if (head) {
        munmap(p, head);
    }
    if (tail) {
        munmap((uint8_t *)start + want, tail);
    }
#ifdef MADV_HUGEPAGE
    madvise((void *)start, want, MADV_HUGEPAGE);
#endif
    memset((void *)start, 0, want); /* fault it in now, as huge pages if the kernel can */
    return (void *)start;
}

void kvssd_dma_free(void *p, size_t len)
{
    if (p) {
        munmap(p, dma_round(len ? len : 1));
    }
}

static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void bounce_release(void *p)
{
    kvssd_dma_free(p, KVSSD_VALUE_MAX);
}

static void bounce_key_init(void)
{
    pthread_key_create(&bounce_key, bounce_release);
}

void *kvssd_dma_thread_bounce(void)
{
    pthread_once(&bounce_once, bounce_key_init);
    void *p = pthread_getspecific(bounce_key);
    if (!p) {
        p = kvssd_dma_alloc(KVSSD_VALUE_MAX);
        if (p) {
            pthread_setspecific(bounce_key, p);
        }
    }
    return p;
}
