/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtests of MSI-X interrupts and interrupt coalescing (Set Features 08h,
 * Interrupt Vector Configuration 09h): every completion is signalled at
 * once by default; with THR/TIME set, an I/O vector's message waits for
 * THR + 1 completions or TIME x 100 us of virtual time after the first,
 * whichever comes first; the admin CQ and a vector with Coalescing Disable
 * are never held, and turning coalescing off signals what was held.
 *
 * Each vector's MSI-X message is a 32-bit write of MSG_DATA(v) to guest
 * RAM at MSG_ADDR(v): irq_seen() reads and clears it, so it says whether
 * at least one message came since the last look.
 */
#include "hw/pci/pci_regs.h"
#include "kvssd-common.h"

#define MSG_ADDR(v) (0x4000000ull + (uint64_t)(v) * 4)
#define MSG_DATA(v) (0x4b560000u + (v))
#define COALESCE(thr, time) ((uint32_t)(time) << 8 | (thr))

/* Vector @v's table entry: message to MSG_ADDR(v) with MSG_DATA(v), unmasked. */
static void msix_vector(KvDev *d, uint16_t v)
{
    uint64_t e = d->dev->msix_table_off + (uint64_t)v * PCI_MSIX_ENTRY_SIZE;

    qpci_io_writel(d->dev, d->dev->msix_table_bar, e + PCI_MSIX_ENTRY_LOWER_ADDR,
                   (uint32_t)MSG_ADDR(v));
    qpci_io_writel(d->dev, d->dev->msix_table_bar, e + PCI_MSIX_ENTRY_UPPER_ADDR,
                   MSG_ADDR(v) >> 32);
    qpci_io_writel(d->dev, d->dev->msix_table_bar, e + PCI_MSIX_ENTRY_DATA, MSG_DATA(v));
    qpci_io_writel(d->dev, d->dev->msix_table_bar, e + PCI_MSIX_ENTRY_VECTOR_CTRL, 0);
    kv_mem_wr32(d, MSG_ADDR(v), 0);
}

/* Did vector @v send a message since the last look? (clears it) */
static bool irq_seen(KvDev *d, uint16_t v)
{
    uint32_t got = kv_mem_rd32(d, MSG_ADDR(v));

    kv_mem_wr32(d, MSG_ADDR(v), 0);
    if (got && got != MSG_DATA(v)) {
        g_error("vector %u: unexpected message data 0x%x", v, got);
    }
    return got == MSG_DATA(v);
}

/* Controller with MSI-X on, vectors 0 (admin) and 1 (I/O pair 1) at MSG_ADDR. */
static KvDev *msix_ready(void)
{
    KvDev *d = kv_start(NULL);

    qpci_msix_enable(d->dev);
    msix_vector(d, 0);
    msix_vector(d, 1);
    kv_enable(d);
    kv_io_queue(d, 64);
    g_assert_true(irq_seen(d, 0)); /* the queue creations' completions */
    return d;
}

static uint16_t set_feature(KvDev *d, uint8_t fid, uint32_t cdw11)
{
    return kv_feature(d, KVSSD_ADM_SET_FEATURES, fid, cdw11, 0).status;
}

static void exist(KvDev *d)
{
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "irq"), ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
}

/* THR = 3: three Exists are held on vector 1, the 4th sends the message. */
static void three_held_fourth_signals(KvDev *d)
{
    for (int i = 0; i < 3; i++) {
        exist(d);
        g_assert_false(irq_seen(d, 1));
    }
    exist(d);
    g_assert_true(irq_seen(d, 1));
}

/* Reset value 0: each completion is signalled when it is posted. */
static void test_each_completion(void)
{
    KvDev *d = msix_ready();

    for (int i = 0; i < 3; i++) {
        exist(d);
        g_assert_true(irq_seen(d, 1));
    }
    g_assert_cmphex(kv_feature(d, KVSSD_ADM_GET_FEATURES, KVSSD_FID_IRQ_COALESCING, 0, 0).dw0, ==,
                    0);
    kv_stop(d);
}

/* THR = 3 (4 completions): the 4th posts the message, not the 1st to 3rd. */
static void test_threshold(void)
{
    KvDev *d = msix_ready();

    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_COALESCING, COALESCE(3, 10)), ==, 0);
    g_assert_true(irq_seen(d, 0)); /* admin completions are never held */
    three_held_fourth_signals(d);
    three_held_fourth_signals(d);
    kv_stop(d);
}

/* TIME = 10 (1 ms): one held completion is signalled 1 ms of virtual time after it was posted. */
static void test_time(void)
{
    KvDev *d = msix_ready();

    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_COALESCING, COALESCE(3, 10)), ==, 0);
    exist(d);
    g_assert_false(irq_seen(d, 1));
    qtest_clock_step(d->qts, 999999);
    g_assert_false(irq_seen(d, 1));
    qtest_clock_step(d->qts, 1);
    g_assert_true(irq_seen(d, 1));
    three_held_fourth_signals(d); /* the count started again */
    kv_stop(d);
}

/* Either field 0 turns coalescing off: THR 0 means one completion per message, TIME 0 no delay. */
static void test_zero_field_off(void)
{
    KvDev *d = msix_ready();

    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_COALESCING, COALESCE(0, 10)), ==, 0);
    exist(d);
    g_assert_true(irq_seen(d, 1));
    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_COALESCING, COALESCE(3, 0)), ==, 0);
    exist(d);
    g_assert_true(irq_seen(d, 1));
    kv_stop(d);
}

/*
 * 09h with CD set on vector 1: not held; CD cleared: held; 08h set to 0:
 * the held one is signalled.
 */
static void test_vector_disable_and_off(void)
{
    KvDev *d = msix_ready();

    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_COALESCING, COALESCE(3, 10)), ==, 0);
    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_VECTOR_CONFIG, 1 | KVSSD_IV_CONFIG_CD), ==, 0);
    exist(d);
    g_assert_true(irq_seen(d, 1));
    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_VECTOR_CONFIG, 1), ==, 0);
    exist(d);
    g_assert_false(irq_seen(d, 1));
    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_COALESCING, 0), ==, 0);
    g_assert_true(irq_seen(d, 1));
    kv_stop(d);
}

/* Four completions posted in one batch reach the threshold at once. */
static void test_batch(void)
{
    KvDev *d = msix_ready();
    KvCqe c;

    g_assert_cmphex(set_feature(d, KVSSD_FID_IRQ_COALESCING, COALESCE(3, 10)), ==, 0);
    for (int i = 0; i < 4; i++) {
        struct kvssd_sqe s = kv_sqe(KVSSD_OPC_EXIST, 1);
        kvssd_sqe_set_key(&s, "irq", 3);
        s.cdw[11] = kvssd_cdw11(3, 0);
        kv_put(d, 1, &s, false);
    }
    kv_ring(d, 1);
    for (int i = 0; i < 4; i++) {
        c = kv_wait(d, 1);
        g_assert_cmphex(c.status, ==, KVSSD_SC_KEY_DOES_NOT_EXIST);
    }
    g_assert_true(irq_seen(d, 1));
    kv_stop(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/irq/each-completion", test_each_completion);
    qtest_add_func("/kvssd/irq/coalescing-threshold", test_threshold);
    qtest_add_func("/kvssd/irq/coalescing-time", test_time);
    qtest_add_func("/kvssd/irq/coalescing-zero-field-off", test_zero_field_off);
    qtest_add_func("/kvssd/irq/coalescing-vector-disable-and-off", test_vector_disable_and_off);
    qtest_add_func("/kvssd/irq/coalescing-batch", test_batch);
    return g_test_run();
}
