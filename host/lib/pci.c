/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pci transport: a polled user-space NVMe driver for one PCI function,
 * in the manner of SPDK and ixy, so that the library writes whole SQEs
 * (CDW4-9 included) and can send BandSlim's full inline layout (89h/8Dh),
 * which Linux passthrough cannot carry.
 *
 * No kernel module and no VFIO: the function is unbound from its kernel
 * driver through sysfs, BAR0 is mapped from sysfs resource0, bus mastering
 * is switched on in the config space file, and DMA memory is hugetlbfs
 * pages whose physical addresses come from /proc/self/pagemap. That is
 * only correct without an IOMMU (bus address = physical address), which is
 * the case in the kvssd guest. Needs root.
 *
 * One admin queue pair and one I/O queue pair, no interrupts: a command is
 * written at the SQ tail, the tail doorbell is rung, and the CQ is polled
 * for the phase bit. One command is in flight at a time (a mutex), so the
 * synchronous API stays thread safe. Data goes through a 2 MiB bounce
 * buffer; PRP1/PRP2 or one PRP list page describe it (prp.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kvssd_priv.h"

/* Registers, their fields and admin opcodes: <kvssd/nvme.h>. */

#define QUEUE_ENTRIES 64u /* per queue, bounded by CAP.MQES */
#define IO_QID 1
#define HUGE_BYTES (2u * 1024 * 1024)
/* DMA region: the data bounce (2 MiB), then 4 queues and the PRP list. */
#define REGION_BYTES (2u * HUGE_BYTES)
#define OFF_ASQ (KVSSD_PCI_DATA_BYTES + 0 * KVSSD_PCI_PAGE_BYTES)
#define OFF_ACQ (KVSSD_PCI_DATA_BYTES + 1 * KVSSD_PCI_PAGE_BYTES)
#define OFF_IOSQ (KVSSD_PCI_DATA_BYTES + 2 * KVSSD_PCI_PAGE_BYTES)
#define OFF_IOCQ (KVSSD_PCI_DATA_BYTES + 3 * KVSSD_PCI_PAGE_BYTES)
#define OFF_PRP_LIST (KVSSD_PCI_DATA_BYTES + 4 * KVSSD_PCI_PAGE_BYTES)
#define REGION_PAGES (REGION_BYTES / KVSSD_PCI_PAGE_BYTES)

struct pci_queue {
    uint16_t qid;
    uint16_t entries;
    uint16_t sq_tail;
    uint16_t cq_head;
    uint8_t phase;
    volatile uint32_t *sq; /* entries x 16 dwords */
    volatile uint32_t *cq; /* entries x 4 dwords */
    uint64_t sq_phys, cq_phys;
    volatile uint32_t *sq_doorbell;
    volatile uint32_t *cq_doorbell;
};

struct kvssd_pci {
    char bdf[32];
    char driver[64]; /* the kernel driver to rebind at detach ("" = none) */
    bool was_unbound; /* no driver was bound at attach */
    volatile uint8_t *bar;
    size_t bar_len;
    uint64_t cap;
    uint32_t timeout_ms; /* per command */
    uint8_t *region;     /* DMA memory */
    bool region_huge;
    long hugepages_added; /* reserved by us in nr_hugepages; released at detach */
    uint64_t page_phys[REGION_PAGES];
    struct pci_queue admin, io;
    uint16_t next_cid;
    bool enabled;
    bool broken; /* a command timed out: the queues' state is unknown */
    pthread_mutex_t lock;
};

static void say(const struct kvssd_pci *p, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "libkvssd: pci %s: ", p->bdf);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- sysfs --------------------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A number from a sysfs file in @base (10, or 16 for "0x144d"); -1 if unreadable. */
static long read_num(const char *path, int base)
{
    char buf[32] = "";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return n > 0 ? strtol(buf, NULL, base) : -1;
}

/*
 * Taking a function from its kernel driver takes its namespaces away from
 * the system: a wrong BDF (or nvmeN) could be the disk the system runs
 * from. So only the emulated KV-SSD's PCI IDs (include/kvssd/ext.h) are
 * driven, unless KVSSD_PCI_ANY=1 says the caller knows the function is a
 * KV-SSD nobody else uses.
 */
static int check_identity(struct kvssd_pci *p)
{
    const char *any = getenv(KVSSD_PCI_ANY_ENV);
    if (any && !strcmp(any, "1")) {
        return 0;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", p->bdf);
    long vendor = read_num(path, 16);
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device", p->bdf);
    long device = read_num(path, 16);
    if (vendor != KVSSD_PCI_VENDOR_ID || device != KVSSD_PCI_DEVICE_ID) {
        say(p,
            "its PCI IDs are %04lx:%04lx, not the emulated KV-SSD's (%04x:%04x); taking it "
            "from its kernel driver could take a disk away from the system, so it is refused "
            "(set %s=1 to drive another KV-SSD this way)",
            vendor & 0xffff, device & 0xffff, KVSSD_PCI_VENDOR_ID, KVSSD_PCI_DEVICE_ID,
            KVSSD_PCI_ANY_ENV);
        errno = ENODEV;
        return -1;
    }
    return 0;
}

/* "0000:00:04.0", "00:04.0" or "nvme0" -> the canonical BDF. */
static int resolve_bdf(const char *spec, char *bdf, size_t len)
{
    unsigned dom, bus, dev, fn;
    char path[PATH_MAX], link[PATH_MAX];

    if (sscanf(spec, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4) {
        snprintf(bdf, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    } else if (sscanf(spec, "%x:%x.%x", &bus, &dev, &fn) == 3) {
        snprintf(bdf, len, "0000:%02x:%02x.%x", bus, dev, fn);
    } else if (!strncmp(spec, "nvme", 4)) {
        snprintf(path, sizeof(path), "/sys/class/nvme/%s/device", spec);
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n <= 0) {
            return -1;
        }
        link[n] = '\0';
        const char *base = strrchr(link, '/');
        if (snprintf(bdf, len, "%s", base ? base + 1 : link) >= (int)len) {
            errno = ENAMETOOLONG;
            return -1;
        }
    } else {
        errno = EINVAL;
        return -1;
    }
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
    return access(path, F_OK);
}

static int unbind_driver(struct kvssd_pci *p)
{
    char path[PATH_MAX], link[PATH_MAX];
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", p->bdf);
    ssize_t n = readlink(path, link, sizeof(link) - 1);
    if (n <= 0) {
        /*
         * Unbound (e.g. left so by KVSSD_PCI_REBIND=0): an NVMe function
         * (class 010802h) still goes to the nvme driver at close.
         */
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", p->bdf);
        char cls[16] = "";
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (read(fd, cls, sizeof(cls) - 1) < 0) {
                cls[0] = '\0';
            }
            close(fd);
        }
        if (!strncmp(cls, "0x010802", 8)) {
            snprintf(p->driver, sizeof(p->driver), "nvme");
        }
        p->was_unbound = true;
        return 0;
    }
    link[n] = '\0';
    const char *base = strrchr(link, '/');
    if (snprintf(p->driver, sizeof(p->driver), "%s", base ? base + 1 : link) >=
        (int)sizeof(p->driver)) {
        say(p, "its driver's name (%s) is too long", link);
        p->driver[0] = '\0';
        return -1;
    }
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver/unbind", p->bdf);
    if (write_file(path, p->bdf)) {
        say(p, "cannot unbind it from the kernel driver %s (%s): %s", p->driver, path,
            strerror(errno));
        p->driver[0] = '\0';
        return -1;
    }
    return 0;
}

/*
 * Give the function back to its kernel driver and wait (up to 10 s) for the
 * namespace's generic char device to reappear, so a caller that opens
 * /dev/ngXnY right after kvssd_close() finds it.
 */
static void rebind_driver(struct kvssd_pci *p)
{
    char path[PATH_MAX];
    const char *keep = getenv(KVSSD_PCI_REBIND_ENV);
    if (!p->driver[0] || (keep && !strcmp(keep, "0"))) {
        return;
    }
    snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/bind", p->driver);
    if (write_file(path, p->bdf)) {
        int e = errno;
        /* without a driver at attach, a driver that is not loaded is no error */
        if (!p->was_unbound || access(path, F_OK) == 0) {
            say(p, "cannot rebind it to the kernel driver %s (%s): %s", p->driver, path,
                strerror(e));
        }
        return;
    }
    if (strcmp(p->driver, "nvme")) {
        return;
    }
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof(pattern), "/sys/bus/pci/devices/%s/nvme/nvme*/ng*n*", p->bdf);
    for (int i = 0; i < 1000; i++) {
        glob_t g;
        bool found = false;
        /* the generic char device is a child of the controller in sysfs */
        if (glob(pattern, 0, NULL, &g) == 0) {
            for (size_t k = 0; k < g.gl_pathc && !found; k++) {
                char dev[PATH_MAX];
                snprintf(dev, sizeof(dev), "/dev/%s", strrchr(g.gl_pathv[k], '/') + 1);
                found = access(dev, F_OK) == 0;
            }
            globfree(&g);
        }
        if (found) {
            return;
        }
        usleep(10000);
    }
    say(p, "rebound to %s, but no /dev/ng*n* of it appeared within 10 s", p->driver);
}

static int map_bar(struct kvssd_pci *p)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", p->bdf);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st)) {
        say(p, "cannot open BAR0 (%s): %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    p->bar_len = (size_t)st.st_size;
    void *m = mmap(NULL, p->bar_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED) {
        errno = e;
        say(p, "cannot mmap BAR0 (%s, %zu bytes): %s", path, p->bar_len, strerror(e));
        return -1;
    }
    p->bar = m;
    return 0;
}

/* PCI command register (config offset 4): memory space (bit 1), bus master (bit 2). */
static int enable_bus_master(struct kvssd_pci *p)
{
    char path[PATH_MAX];
    uint16_t cmd;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", p->bdf);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 || pread(fd, &cmd, 2, 4) != 2) {
        say(p, "cannot read the PCI command register (%s): %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    cmd |= 0x6;
    ssize_t n = pwrite(fd, &cmd, 2, 4);
    int e = errno;
    close(fd);
    if (n != 2) {
        say(p, "cannot enable bus mastering (%s): %s", path, strerror(e));
        errno = e;
        return -1;
    }
    return 0;
}

/* ---- DMA memory ------------------------------------------------------------ */

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define FREE_HUGEPAGES "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"

static void *map_huge(void)
{
    void *m = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

/*
 * Huge pages cannot move and are physically contiguous; reserve the two we
 * need in nr_hugepages when none are free. Without hugetlbfs, locked 4 KiB
 * pages (translated one by one) are the fallback.
 */
static int alloc_region(struct kvssd_pci *p)
{
    void *m = map_huge();
    if (!m) {
        long free_pages = read_num(FREE_HUGEPAGES, 10), total = read_num(NR_HUGEPAGES, 10);
        long need = REGION_BYTES / HUGE_BYTES - (free_pages > 0 ? free_pages : 0);
        char buf[32];
        if (total >= 0 && need > 0) {
            snprintf(buf, sizeof(buf), "%ld", total + need);
            if (write_file(NR_HUGEPAGES, buf) == 0) {
                p->hugepages_added = read_num(NR_HUGEPAGES, 10) - total;
                m = map_huge();
            }
        }
    }
    if (m) {
        p->region_huge = true;
    } else {
        m = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0);
        if (m == MAP_FAILED) {
            say(p, "cannot allocate %u bytes of DMA memory: %s", REGION_BYTES, strerror(errno));
            return -1;
        }
    }
    p->region = m;
    memset(p->region, 0, REGION_BYTES);

    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        say(p, "cannot open /proc/self/pagemap: %s", strerror(errno));
        return -1;
    }
    for (uint32_t i = 0; i < REGION_PAGES; i++) {
        uint64_t va = (uint64_t)(uintptr_t)(p->region + (size_t)i * KVSSD_PCI_PAGE_BYTES), entry;
        if (pread(fd, &entry, 8, (off_t)(va / KVSSD_PCI_PAGE_BYTES * 8)) != 8 ||
            kvssd_pagemap_phys(entry, va, &p->page_phys[i])) {
            say(p, "/proc/self/pagemap gives no physical address for DMA page %u (root is needed)",
                i);
            close(fd);
            errno = EPERM;
            return -1;
        }
    }
    close(fd);
    return 0;
}

static void free_region(struct kvssd_pci *p)
{
    if (p->region) {
        munmap(p->region, REGION_BYTES);
    }
    p->region = NULL;
    if (p->hugepages_added > 0) {
        long total = read_num(NR_HUGEPAGES, 10);
        char buf[32];
        snprintf(buf, sizeof(buf), "%ld", total - p->hugepages_added);
        if (total >= p->hugepages_added) {
            write_file(NR_HUGEPAGES, buf);
        }
    }
    p->hugepages_added = 0;
}

static uint64_t phys_of(const struct kvssd_pci *p, size_t off)
{
    return p->page_phys[off / KVSSD_PCI_PAGE_BYTES] + off % KVSSD_PCI_PAGE_BYTES;
}

/* ---- registers and queues ---------------------------------------------------- */

static uint32_t rd32(const struct kvssd_pci *p, uint32_t off)
{
    return *(volatile uint32_t *)(p->bar + off);
}

static void wr32(struct kvssd_pci *p, uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(p->bar + off) = v;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int wait_ready(struct kvssd_pci *p, bool ready)
{
    uint64_t deadline = now_ms() + kvssd_cap_to_ms(p->cap) + 500;
    for (;;) {
        uint32_t csts = rd32(p, KVSSD_REG_CSTS);
        if (csts == 0xffffffffu) {
            say(p, "CSTS reads all ones: the function does not answer");
            return -KVSSD_ERR_NO_DEVICE;
        }
        if (ready && (csts & KVSSD_CSTS_CFS)) {
            say(p, "the controller reports a fatal status (CSTS.CFS) while enabling");
            return -KVSSD_ERR_INTERNAL;
        }
        if (!!(csts & KVSSD_CSTS_RDY) == ready) {
            return 0;
        }
        if (now_ms() > deadline) {
            say(p, "CSTS.RDY did not become %d within CAP.TO (%u ms)", ready,
                kvssd_cap_to_ms(p->cap));
            return -KVSSD_ERR_TIMEOUT;
        }
        usleep(1000);
    }
}

static void queue_init(struct kvssd_pci *p, struct pci_queue *q, uint16_t qid, size_t sq_off,
                       size_t cq_off, uint16_t entries)
{
    uint32_t dstrd = kvssd_cap_dstrd(p->cap);

    memset(q, 0, sizeof(*q));
    q->qid = qid;
    q->entries = entries;
    q->phase = 1;
    q->sq = (volatile uint32_t *)(p->region + sq_off);
    q->cq = (volatile uint32_t *)(p->region + cq_off);
    q->sq_phys = phys_of(p, sq_off);
    q->cq_phys = phys_of(p, cq_off);
    q->sq_doorbell = (volatile uint32_t *)(p->bar + kvssd_sq_tail_doorbell(qid, dstrd));
    q->cq_doorbell = (volatile uint32_t *)(p->bar + kvssd_cq_head_doorbell(qid, dstrd));
    memset((void *)q->cq, 0, (size_t)entries * KVSSD_CQE_BYTES);
}

/*
 * Spin briefly, then sleep between looks: the device model runs on the
 * host's main loop, and a guest CPU that spins takes host time from it.
 */
static int poll_cqe(struct kvssd_pci *p, struct pci_queue *q, uint16_t cid, uint32_t cqe[4])
{
    uint64_t start = now_ms(), deadline = start + p->timeout_ms;
    for (uint32_t spins = 0;; spins++) {
        volatile uint32_t *e = q->cq + (size_t)q->cq_head * 4;
        uint32_t dw3 = e[3];
        if (kvssd_cqe_phase(dw3) == q->phase) {
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            cqe[0] = e[0];
            cqe[1] = e[1];
            cqe[2] = e[2];
            cqe[3] = dw3;
            if (++q->cq_head == q->entries) {
                q->cq_head = 0;
                q->phase ^= 1;
            }
            *q->cq_doorbell = q->cq_head;
            if (kvssd_cqe_cid(dw3) != cid) {
                say(p, "queue %u completed command id %u while %u was outstanding", q->qid,
                    kvssd_cqe_cid(dw3), cid);
                return -KVSSD_ERR_INTERNAL;
            }
            return 0;
        }
        if ((spins & 63) == 63) {
            uint64_t t = now_ms();
            if (t > deadline) {
                say(p,
                    "no completion on queue %u within %u ms (%s=%u); the transport stops "
                    "here: close and reopen the device",
                    q->qid, p->timeout_ms, KVSSD_PCI_TIMEOUT_ENV, p->timeout_ms);
                return -KVSSD_ERR_TIMEOUT;
            }
            if (t > start + 1) {
                usleep(20);
            }
        }
    }
}

static int queue_exec(struct kvssd_pci *p, struct pci_queue *q, const struct kvssd_sqe *sqe,
                      uint32_t cqe[4])
{
    uint16_t cid = p->next_cid++;
    volatile uint32_t *slot = q->sq + (size_t)q->sq_tail * 16;

    for (int i = 0; i < 16; i++) {
        slot[i] = sqe->cdw[i];
    }
    /* CDW0: the opcode, FUSE and PSDT 0 (PRPs), our command identifier */
    slot[0] = kvssd_cdw0(kvssd_sqe_opcode(sqe), cid);
    if (++q->sq_tail == q->entries) {
        q->sq_tail = 0;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *q->sq_doorbell = q->sq_tail;
    int rc = poll_cqe(p, q, cid, cqe);
    if (rc) {
        p->broken = true;
    }
    return rc;
}

/* An admin command without data, for queue setup and teardown. */
static int admin_simple(struct kvssd_pci *p, uint8_t opc, uint32_t cdw10, uint32_t cdw11,
                        uint64_t prp1, const char *what)
{
    struct kvssd_sqe sqe;
    uint32_t cqe[4];
    memset(&sqe, 0, sizeof(sqe));
    sqe.cdw[0] = opc;
    sqe.cdw[6] = (uint32_t)prp1;
    sqe.cdw[7] = (uint32_t)(prp1 >> 32);
    sqe.cdw[10] = cdw10;
    sqe.cdw[11] = cdw11;
    int rc = queue_exec(p, &p->admin, &sqe, cqe);
    if (rc) {
        return rc;
    }
    uint16_t st = kvssd_cqe_status(cqe[3]) & KVSSD_STATUS_CODE_MASK;
    if (st) {
        say(p, "%s failed: status %03xh (%s)", what, st, kvssd_status_str(st));
        return kvssd_status_to_err(st);
    }
    return 0;
}

static int controller_start(struct kvssd_pci *p)
{
    p->cap = (uint64_t)rd32(p, KVSSD_REG_CAP) | (uint64_t)rd32(p, KVSSD_REG_CAP + 4) << 32;
    if (kvssd_cap_mpsmin(p->cap) != 0) {
        say(p, "CAP.MPSMIN is %u: the controller does not take 4 KiB memory pages",
            kvssd_cap_mpsmin(p->cap));
        return -KVSSD_ERR_NO_DEVICE;
    }
    /* CAP.MQES is 0-based */
    uint32_t max_entries = kvssd_cap_mqes(p->cap) + 1;
    uint16_t entries = max_entries < QUEUE_ENTRIES ? (uint16_t)max_entries : QUEUE_ENTRIES;
    if (entries < 2) {
        say(p, "CAP.MQES allows %u entries per queue; 2 are needed", max_entries);
        return -KVSSD_ERR_NO_DEVICE;
    }
    uint32_t cc = rd32(p, KVSSD_REG_CC);
    if (cc & KVSSD_CC_EN) {
        wr32(p, KVSSD_REG_CC, cc & ~KVSSD_CC_EN);
    }
    int rc = wait_ready(p, false);
    if (rc) {
        return rc;
    }

    queue_init(p, &p->admin, 0, OFF_ASQ, OFF_ACQ, entries);
    queue_init(p, &p->io, IO_QID, OFF_IOSQ, OFF_IOCQ, entries);
    wr32(p, KVSSD_REG_AQA, kvssd_aqa(entries, entries));
    wr32(p, KVSSD_REG_ASQ, (uint32_t)p->admin.sq_phys);
    wr32(p, KVSSD_REG_ASQ + 4, (uint32_t)(p->admin.sq_phys >> 32));
    wr32(p, KVSSD_REG_ACQ, (uint32_t)p->admin.cq_phys);
    wr32(p, KVSSD_REG_ACQ + 4, (uint32_t)(p->admin.cq_phys >> 32));
    /* CSS 110b (every I/O command set) as Linux does, so the KV set is enabled */
    cc = kvssd_cc_enable((p->cap & KVSSD_CAP_CSS_IOCS) ? KVSSD_CC_CSS_ALL : KVSSD_CC_CSS_NVM);
    wr32(p, KVSSD_REG_CC, cc);
    rc = wait_ready(p, true);
    if (rc) {
        return rc;
    }
    p->enabled = true;

    /* one I/O queue pair; completion queue polled (interrupts disabled) */
    rc = admin_simple(p, KVSSD_ADM_SET_FEATURES, KVSSD_FID_NUM_QUEUES, 0, 0,
                      "Set Features (Number of Queues)");
    if (!rc) {
        rc = admin_simple(p, KVSSD_ADM_CREATE_CQ, kvssd_create_queue_cdw10(IO_QID, entries),
                          KVSSD_QUEUE_PC, p->io.cq_phys, "Create I/O Completion Queue");
    }
    if (!rc) {
        rc = admin_simple(p, KVSSD_ADM_CREATE_SQ, kvssd_create_queue_cdw10(IO_QID, entries),
                          (uint32_t)IO_QID << 16 | KVSSD_QUEUE_PC, p->io.sq_phys,
                          "Create I/O Submission Queue");
    }
    return rc;
}

static void controller_stop(struct kvssd_pci *p)
{
    if (!p->bar) {
        return;
    }
    if (p->enabled && !p->broken) {
        admin_simple(p, KVSSD_ADM_DELETE_SQ, IO_QID, 0, 0, "Delete I/O Submission Queue");
        admin_simple(p, KVSSD_ADM_DELETE_CQ, IO_QID, 0, 0, "Delete I/O Completion Queue");
    }
    /* stop DMA into memory we are about to free */
    wr32(p, KVSSD_REG_CC, rd32(p, KVSSD_REG_CC) & ~KVSSD_CC_EN);
    wait_ready(p, false);
    p->enabled = false;
}

/* ---- the transport ------------------------------------------------------------- */

int kvssd_pci_attach(const char *spec, struct kvssd_pci **pp, char *bdf, size_t bdf_len)
{
    struct kvssd_pci *p = calloc(1, sizeof(*p));
    int rc = -KVSSD_ERR_SYSTEM;

    if (!p) {
        return -KVSSD_ERR_SYSTEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    if (resolve_bdf(spec, p->bdf, sizeof(p->bdf))) {
        int e = errno;
        snprintf(p->bdf, sizeof(p->bdf), "%s", spec);
        say(p, "no such PCI function (give pci:DDDD:BB:DD.F, pci:BB:DD.F or pci:nvmeN): %s",
            strerror(e));
        free(p);
        errno = e;
        return -KVSSD_ERR_NO_DEVICE;
    }
    const char *t = getenv(KVSSD_PCI_TIMEOUT_ENV);
    p->timeout_ms = KVSSD_PCI_TIMEOUT_MS_DEFAULT;
    if (t && *t) {
        char *end;
        unsigned long v = strtoul(t, &end, 10);
        if (*end || v < 1 || v > 3600000) {
            say(p, "%s='%s' is not valid: give milliseconds, 1..3600000", KVSSD_PCI_TIMEOUT_ENV, t);
            free(p);
            return -KVSSD_ERR_INVALID_ARGUMENT;
        }
        p->timeout_ms = (uint32_t)v;
    }
    if (check_identity(p)) {
        rc = -KVSSD_ERR_NO_DEVICE;
        goto fail;
    }
    if (unbind_driver(p) || map_bar(p) || enable_bus_master(p) || alloc_region(p)) {
        goto fail;
    }
    rc = controller_start(p);
    if (rc) {
        goto fail;
    }
    snprintf(bdf, bdf_len, "%s", p->bdf);
    *pp = p;
    return 0;
fail: {
    int e = errno;
    kvssd_pci_detach(p);
    errno = e;
}
    return rc;
}

void kvssd_pci_detach(struct kvssd_pci *p)
{
    if (!p) {
        return;
    }
    controller_stop(p);
    if (p->bar) {
        munmap((void *)p->bar, p->bar_len);
    }
    free_region(p);
    rebind_driver(p);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int kvssd_pci_submit(struct kvssd_pci *p, struct kvssd_cmd *cmd, struct kvssd_result *res)
{
    struct kvssd_sqe sqe = cmd->sqe;
    uint8_t opc = kvssd_sqe_opcode(&cmd->sqe);
    uint8_t *data = p->region; /* the bounce: offset 0 of the DMA region */
    uint64_t *list = (uint64_t *)(p->region + OFF_PRP_LIST);
    struct kvssd_prp prp;
    uint32_t cqe[4];
    int rc;

    res->commands++;
    if (cmd->data_len > KVSSD_PCI_DATA_BYTES || (cmd->data_len && !cmd->data)) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&p->lock);
    if (p->broken) {
        rc = -KVSSD_ERR_TIMEOUT;
        goto out;
    }
    /*
     * The data pointer is ours to fill (CDW6-9) only for commands with
     * data; the full inline layout uses CDW4-9 for payload and has none.
     */
    if (cmd->data_len) {
        rc = kvssd_prp_build(p->page_phys, KVSSD_PCI_DATA_BYTES / KVSSD_PCI_PAGE_BYTES,
                             cmd->data_len, list, phys_of(p, OFF_PRP_LIST), &prp);
        if (rc) {
            goto out;
        }
        /* opcode bits 1:0: 01b host-to-device, 10b device-to-host */
        if (opc & 1) {
            memcpy(data, cmd->data, cmd->data_len);
        }
        sqe.cdw[6] = (uint32_t)prp.prp1;
        sqe.cdw[7] = (uint32_t)(prp.prp1 >> 32);
        sqe.cdw[8] = (uint32_t)prp.prp2;
        sqe.cdw[9] = (uint32_t)(prp.prp2 >> 32);
    }
    rc = queue_exec(p, cmd->admin ? &p->admin : &p->io, &sqe, cqe);
    if (rc) {
        goto out;
    }
    if (cmd->data_len && (opc & 2)) {
        memcpy(cmd->data, data, cmd->data_len);
    }
    res->dw0 = cqe[0];
    res->dw1 = cqe[1];
    res->status = kvssd_cqe_status(cqe[3]) & KVSSD_STATUS_CODE_MASK;
    rc = kvssd_status_to_err(res->status);
out:
    pthread_mutex_unlock(&p->lock);
    return rc;
}
