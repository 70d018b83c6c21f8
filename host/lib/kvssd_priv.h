/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libkvssd internals shared by dev.c, sync.c, async.c and the pci transport. */
#ifndef KVSSD_PRIV_H
#define KVSSD_PRIV_H

#include <stdatomic.h>

#include <kvssd/libkvssd.h>

#define KVSSD_TAG_WORDS (KVSSD_MAX_TAGS / 64)
#define KVSSD_IOCTL_TIMEOUT_MS 0 /* the kernel's default */

struct kvssd_pci;
struct kvssd_sim;

struct kvssd_dev {
    int fd;      /* /dev/ngXnY: I/O and admin passthrough; -1 on the pci transport */
    int ctrl_fd; /* /dev/nvmeX for Format NVM; -1 = use fd */
    struct kvssd_pci *pci; /* the user-space PCI transport (pci.c), or NULL */
    struct kvssd_sim *sim; /* the in-process device (sim.c), or NULL */
    struct kvssd_dev_info info;
    enum kvssd_xfer_mode mode;
    struct kvssd_xfer_config xfer;
    _Atomic uint64_t tags[KVSSD_TAG_WORDS]; /* bit set = tag in use */
    _Atomic uint32_t tag_hint;
};

/*
 * The longest key this handle sends: what Identify advertised (our long-key
 * extension, or 16 on a standard device); a handle opened without Identify
 * (kvssd_open_passthru) keeps the library's own limit.
 */
static inline uint32_t kvssd_dev_key_max(const struct kvssd_dev *dev)
{
    uint32_t max = dev->info.max_key_bytes;
    return max && max < KVSSD_KEY_MAX ? max : KVSSD_KEY_MAX;
}

/*
 * The bytes a Retrieve asks for: the caller's @buf_len, shortened to the
 * controller's maximum transfer (info.max_transfer_bytes), which a value
 * of that size or less fills whole.
 */
static inline uint32_t kvssd_dev_retrieve_len(const struct kvssd_dev *dev, uint32_t buf_len)
{
    uint32_t max = dev->info.max_transfer_bytes;
    return max && buf_len > max ? max : buf_len;
}

/*
 * Data transfers above this go through a huge-page bounce buffer (dma.c):
 * well under the ~500 KiB that 127 discontiguous 4 KiB pages can carry.
 */
#define KVSSD_BOUNCE_MIN_BYTES (256u * 1024)
void *kvssd_dma_alloc(size_t len);
void kvssd_dma_free(void *p, size_t len);
void *kvssd_dma_thread_bounce(void); /* KVSSD_VALUE_MAX bytes, per thread; NULL if out of memory */

/* Issue one command by ioctl (sync.c). Returns 0/-err; fills res. */
int kvssd_submit_ioctl(int fd, struct kvssd_cmd *cmd, struct kvssd_result *res);
/* Issue one command on the handle's transport (ioctl or pci); counts it in res. */
int kvssd_dev_submit(struct kvssd_dev *dev, struct kvssd_cmd *cmd, struct kvssd_result *res);
/* The inline layout the handle's transport can carry. */
enum kvssd_wire_layout kvssd_dev_wire(const struct kvssd_dev *dev);

/* ---- the pci transport (pci.c, prp.c) ----------------------------------- */
#define KVSSD_PCI_PREFIX "pci:"
#define KVSSD_PCI_PAGE_BYTES 4096u /* CC.MPS = 0 */
#define KVSSD_PCI_PRP_LIST_ENTRIES (KVSSD_PCI_PAGE_BYTES / 8)
#define KVSSD_PCI_DATA_BYTES KVSSD_VALUE_MAX /* largest transfer: one bounce */
#define KVSSD_PCI_TIMEOUT_ENV "KVSSD_PCI_TIMEOUT_MS"
#define KVSSD_PCI_TIMEOUT_MS_DEFAULT 30000u
#define KVSSD_PCI_REBIND_ENV "KVSSD_PCI_REBIND" /* "0": leave the function unbound at close */
/* "1": drive a function whose PCI IDs are not the emulated KV-SSD's (at your own risk) */
#define KVSSD_PCI_ANY_ENV "KVSSD_PCI_ANY"

/*
 * Attach to the PCI function named by @spec ("0000:00:04.0", "00:04.0" or
 * "nvme0"): unbind its kernel driver, map BAR0, enable bus mastering,
 * reset and enable the controller with one polled I/O queue pair.
 * @bdf receives the canonical address. Errors print one sentence to stderr.
 */
int kvssd_pci_attach(const char *spec, struct kvssd_pci **pp, char *bdf, size_t bdf_len);
/* Delete the queues, disable the controller, rebind the driver found at attach. */
void kvssd_pci_detach(struct kvssd_pci *pci);
/* One command, polled to completion; admin or I/O queue by cmd->admin. */
int kvssd_pci_submit(struct kvssd_pci *pci, struct kvssd_cmd *cmd, struct kvssd_result *res);

/* PRP1/PRP2 of a transfer (prp.c, pure). */
struct kvssd_prp {
    uint64_t prp1;
    uint64_t prp2;
    uint32_t list_entries; /* entries written to the PRP list (0: no list) */
};
/*
 * @page_phys: physical address of each 4 KiB page of the data buffer (page
 * aligned), @npages of them; @list / @list_phys: one 4 KiB PRP list page.
 * Return: 0, or -KVSSD_ERR_INVALID_ARGUMENT when @len needs more pages than
 * @npages or one list page holds, or a page address is not page aligned.
 */
int kvssd_prp_build(const uint64_t *page_phys, uint32_t npages, uint32_t len, uint64_t *list,
                    uint64_t list_phys, struct kvssd_prp *out);
/* Physical address of @vaddr from its /proc/self/pagemap entry; -KVSSD_ERR_SYSTEM if absent. */
int kvssd_pagemap_phys(uint64_t entry, uint64_t vaddr, uint64_t *phys);

/* ---- the sim transport (sim.c; sim.h has its spec parser) ------------------- */
#define KVSSD_SIM_PREFIX "sim:"
#ifdef KVSSD_HAVE_SIM
/*
 * kvssd_sim_open() - parse @spec (without "sim:"), open or create the image
 * (kvftl_open: its lock refuses a second opener, a damaged image is
 * refused or recovered as the device does) and start the command sets.
 * Return: 0, -KVSSD_ERR_INVALID_ARGUMENT (a bad spec or property),
 * -KVSSD_ERR_NO_DEVICE (the firmware refused the image: locked, damaged,
 * another geometry) or -KVSSD_ERR_SYSTEM; a sentence in @err.
 */
int kvssd_sim_open(const char *spec, struct kvssd_sim **simp, char *err, size_t err_len);
/* kvssd_sim_close() - flush and checkpoint the image, release its lock. NULL is a no-op. */
void kvssd_sim_close(struct kvssd_sim *sim);
/*
 * kvssd_sim_submit() - run one command to completion as the device runs it,
 * on the firmware's simulated clock: it arrives when the previous one
 * completed. Thread-safe (one lock per device). Returns as kvssd_submit_ioctl().
 */
int kvssd_sim_submit(struct kvssd_sim *sim, struct kvssd_cmd *cmd, struct kvssd_result *res);
#else
/* Built without the firmware (-Dfirmware=disabled): kvssd_open() refuses "sim:". */
static inline void kvssd_sim_close(struct kvssd_sim *sim)
{
    (void)sim;
}
static inline int kvssd_sim_submit(struct kvssd_sim *sim, struct kvssd_cmd *cmd,
                                   struct kvssd_result *res)
{
    (void)sim, (void)cmd, (void)res;
    return -KVSSD_ERR_NOT_SUPPORTED;
}
#endif

/* A free tag below @limit (the full layout's heads carry 8-bit tags). */
int kvssd_tag_alloc_below(struct kvssd_dev *dev, uint32_t limit);

/* Tags a Store needs: key tag for long keys, stream tag for inline/hybrid. */
int kvssd_store_tags(struct kvssd_dev *dev, uint32_t key_len, enum kvssd_xfer_mode method,
                     uint32_t *key_tag, uint32_t *stream_tag);
void kvssd_store_tags_free(struct kvssd_dev *dev, uint32_t key_len, enum kvssd_xfer_mode method,
                           uint32_t key_tag, uint32_t stream_tag);

#endif
