/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure half of the pci transport: decoding /proc/self/pagemap entries
 * and building the PRP entries (PRP1, PRP2 or a PRP list) of a transfer
 * from the physical addresses of its 4 KiB pages. No I/O, so the unit
 * tests feed it a fake page table.
 */
#include <kvssd/libkvssd.h>

#include "kvssd_priv.h"

#define PAGEMAP_PRESENT (1ull << 63)
#define PAGEMAP_PFN_MASK ((1ull << 55) - 1)

int kvssd_pagemap_phys(uint64_t entry, uint64_t vaddr, uint64_t *phys)
{
    uint64_t pfn = entry & PAGEMAP_PFN_MASK;
    /* not present, or a PFN of 0: the kernel hides PFNs without CAP_SYS_ADMIN */
    if (!(entry & PAGEMAP_PRESENT) || pfn == 0) {
        return -KVSSD_ERR_SYSTEM;
    }
    *phys = pfn * KVSSD_PCI_PAGE_BYTES + (vaddr & (KVSSD_PCI_PAGE_BYTES - 1));
    return 0;
}

int kvssd_prp_build(const uint64_t *page_phys, uint32_t npages, uint32_t len, uint64_t *list,
                    uint64_t list_phys, struct kvssd_prp *out)
{
    uint32_t pages = (uint32_t)(((uint64_t)len + KVSSD_PCI_PAGE_BYTES - 1) / KVSSD_PCI_PAGE_BYTES);

    out->prp1 = 0;
    out->prp2 = 0;
    out->list_entries = 0;
    if (pages > npages || pages > KVSSD_PCI_PRP_LIST_ENTRIES + 1) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < pages; i++) {
        if (page_phys[i] & (KVSSD_PCI_PAGE_BYTES - 1)) {
            return -KVSSD_ERR_INVALID_ARGUMENT; /* the buffer starts on a page boundary */
        }
    }
    if (pages == 0) {
        return 0;
    }
    out->prp1 = page_phys[0];
    if (pages == 2) {
        out->prp2 = page_phys[1];
    } else if (pages > 2) {
        /* one list page: entries for pages 1..pages-1, no chaining needed */
        for (uint32_t i = 1; i < pages; i++) {
            list[i - 1] = page_phys[i];
        }
        out->prp2 = list_phys;
        out->list_entries = pages - 1;
    }
    return 0;
}
