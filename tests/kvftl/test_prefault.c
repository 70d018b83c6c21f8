/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prefault helper: populates what it is asked to, drops what it is told to forget, bounded queue.
 */
#include <sys/mman.h>

#include "helpers.h"
#include "prefault.h"

#define MIB (1u << 20)

/* A fresh mapping of @bytes, in 4 KiB pages (so that residency counts exactly). */
static uint8_t *fresh_map(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    CU_ASSERT_FATAL(m != MAP_FAILED);
    madvise(m, bytes, MADV_NOHUGEPAGE);
    return m;
}

/*
 * Ask for the second MiB of a fresh 4 MiB mapping: once drained, exactly
 * its 256 pages are mapped in (none before it, none after), they read
 * zero, and the helper counts 1 MiB asked and done.
 */
static void test_ask_populates_exactly(void)
{
    struct prefault pf;
    prefault_init(&pf);
    uint8_t *m = fresh_map(4 * MIB);
    CU_ASSERT_EQUAL(resident_pages(m, 4 * MIB), 0);
    CU_ASSERT_TRUE(prefault_ask(&pf, m + MIB, MIB));
    prefault_drain(&pf);
    CU_ASSERT_EQUAL(resident_pages(m, MIB), 0);
    CU_ASSERT_EQUAL(resident_pages(m + MIB, MIB), 256);
    CU_ASSERT_EQUAL(resident_pages(m + 2 * MIB, 2 * MIB), 0);
    CU_ASSERT_EQUAL(m[MIB], 0);
    CU_ASSERT_EQUAL(m[2 * MIB - 1], 0);
    CU_ASSERT_EQUAL(pf.bytes_asked, MIB);
    CU_ASSERT_EQUAL(pf.bytes_done, MIB);
    CU_ASSERT_EQUAL(pf.dropped, 0);
    prefault_fini(&pf);
    munmap(m, 4 * MIB);
}

/*
 * Forget drops the queued requests that overlap the range, and only
 * those, keeping the rest in order: a queue of four (wrapping past the
 * ring's end) loses the two that overlap [0x3000, 0x5000); the one that
 * ends where the range starts and the one that starts where it ends stay.
 * (No helper runs: the queue is set by hand, so nothing is taken from it.)
 */
static void test_forget_drops_overlapping(void)
{
    struct prefault pf;
    prefault_init(&pf);
    uint8_t *base = (uint8_t *)0x100000;
    const struct prefault_range r[4] = {
        {base + 0x1000, 0x2000}, /* [0x1000, 0x3000): ends at the range's start */
        {base + 0x2000, 0x2000}, /* [0x2000, 0x4000): overlaps */
        {base + 0x4800, 0x100},  /* inside */
        {base + 0x5000, 0x1000}, /* starts at the range's end */
    };
    pf.head = PREFAULT_QUEUE - 2;
    for (uint32_t i = 0; i < 4; i++) {
        pf.q[(pf.head + i) % PREFAULT_QUEUE] = r[i];
    }
    pf.count = 4;
    prefault_forget(&pf, base + 0x3000, 0x2000);
    CU_ASSERT_EQUAL(pf.count, 2);
    CU_ASSERT_PTR_EQUAL(pf.q[pf.head].addr, base + 0x1000);
    CU_ASSERT_EQUAL(pf.q[pf.head].len, 0x2000);
    CU_ASSERT_PTR_EQUAL(pf.q[(pf.head + 1) % PREFAULT_QUEUE].addr, base + 0x5000);
    CU_ASSERT_EQUAL(pf.q[(pf.head + 1) % PREFAULT_QUEUE].len, 0x1000);
    pf.count = 0;
    prefault_fini(&pf);
}

/*
 * A full queue drops the request (the writer faults its pages itself):
 * ask() says so, counts it, asks nothing, and starts no helper.
 */
static void test_full_queue_drops(void)
{
    struct prefault pf;
    prefault_init(&pf);
    pf.count = PREFAULT_QUEUE;
    CU_ASSERT_FALSE(prefault_ask(&pf, (void *)0x200000, 4096));
    CU_ASSERT_EQUAL(pf.dropped, 1);
    CU_ASSERT_EQUAL(pf.bytes_asked, 0);
    CU_ASSERT_PTR_NULL(pf.thread);
    CU_ASSERT_FALSE(prefault_ask(&pf, (void *)0x200000, 0)); /* nothing to ask: not a drop */
    CU_ASSERT_EQUAL(pf.dropped, 1);
    pf.count = 0;
    prefault_fini(&pf);
}

static const struct tap_test tests[] = {
    TAP_TEST_FN(test_ask_populates_exactly),
    TAP_TEST_FN(test_forget_drops_overlapping),
    TAP_TEST_FN(test_full_queue_drops),
};

int main(void)
{
    static const struct tap_suite suite = TAP_SUITE("prefault", NULL, NULL, tests);

    return tap_main(&suite, 1);
}
