/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NAND model: geometry, timing (per-die and per-channel busy-until) and backing store. */
#include "nand.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#define HUGE_BYTES (2u << 20)

void nand_geometry_derive(struct nand_geometry *geo)
{
    geo->dies = geo->channels * geo->dies_per_channel;
    geo->page_shift = (uint32_t)__builtin_ctz(geo->page_size);
    geo->stripes = geo->blocks_per_die;
    geo->pages_per_stripe = geo->dies * geo->pages_per_block;
    geo->stripe_bytes = (uint64_t)geo->pages_per_stripe * geo->page_size;
    geo->total_pages = (uint64_t)geo->pages_per_stripe * geo->stripes;
    geo->total_bytes = geo->total_pages * geo->page_size;
}

static size_t oob_bytes(const struct nand_geometry *geo)
{
    size_t b = geo->total_pages * sizeof(struct nand_oob);
    return (b + 4095) & ~(size_t)4095;
}

static size_t unit_spare_bytes(const struct nand_geometry *geo)
{
    size_t b = geo->total_pages * geo->unit_spares_per_page * sizeof(struct nand_unit_spare);
    return (b + 4095) & ~(size_t)4095;
}

/* The unmap log (nand.h): nvm only, like the unit spare areas; a kv image has none. */
static size_t unmap_log_bytes(const struct nand_geometry *geo)
{
    if (!geo->unit_spares_per_page) {
        return 0;
    }
    return (sizeof(struct nand_unmap_log) + 4095) & ~(size_t)4095;
}

uint64_t nand_checkpoint_offset(const struct nand *n)
{
    return NAND_IMAGE_HEADER_BYTES + n->geo.total_bytes + oob_bytes(&n->geo) +
           unit_spare_bytes(&n->geo) + unmap_log_bytes(&n->geo);
}

/*
 * One image backs one device: two writers would each take the NAND for
 * their own and corrupt it. An open file description (OFD) lock on bytes
 * 1.. of the file excludes every other opener, another device of this
 * process included, and goes away with the last descriptor (a killed
 * process leaves no lock behind). OFD locks report no owner, so byte 0
 * also gets a classic POSIX lock, which does (F_GETLK gives its pid): the
 * refused opener names the process. The two ranges do not overlap, so the
 * two kinds never conflict with each other. Closing any descriptor of the
 * file drops the classic lock (POSIX), which only loses that name.
 * Filesystems without locks (ENOLCK, EOPNOTSUPP, EINVAL) are used unlocked.
 */
static int image_lock(int fd, const char *path, char *err, size_t err_len)
{
    struct flock excl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 0};
    if (fcntl(fd, F_OFD_SETLK, &excl) == 0) {
        struct flock owner = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
        (void)fcntl(fd, F_SETLK, &owner); /* best effort: only names us to a refused opener */
        return 0;
    }
    if (errno != EAGAIN && errno != EACCES) {
        if (errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL) {
            return 0;
        }
        snprintf(err, err_len, "image_path %s cannot be locked: %s", path, strerror(errno));
        return -1;
    }
    struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK && who.l_pid > 0) {
        snprintf(err, err_len,
                 "image_path %s is in use by process %ld (another QEMU or kvftl program "
                 "has it open); an image can back only one device at a time",
                 path, (long)who.l_pid);
    } else {
        snprintf(err, err_len,
                 "image_path %s is in use by another device or process (its process id "
                 "is not known); an image can back only one device at a time",
                 path);
    }
    return -1;
}

int nand_init(struct nand *n, const struct nand_geometry *geo, const struct nand_timing *tm,
              const char *path, char *err, size_t err_len)
{
    memset(n, 0, sizeof(*n));
    n->geo = *geo;
    nand_geometry_derive(&n->geo);
    n->tm = *tm;
    n->fd = -1;
    n->torn_ppn = UINT64_MAX;
    n->map_bytes = NAND_IMAGE_HEADER_BYTES + n->geo.total_bytes + oob_bytes(&n->geo) +
                   unit_spare_bytes(&n->geo) + unmap_log_bytes(&n->geo);

    if (path) {
        struct stat st;
        n->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (n->fd < 0) {
            snprintf(err, err_len, "image_path %s cannot be opened: %s", path, strerror(errno));
            return -1;
        }
        if (image_lock(n->fd, path, err, err_len) != 0) {
            close(n->fd);
            return -1;
        }
        if (fstat(n->fd, &st) != 0) {
            snprintf(err, err_len, "image_path %s cannot be examined: %s", path, strerror(errno));
            close(n->fd);
            return -1;
        }
        /*
         * Only a new (empty) file is sized here. An existing one is mapped as
         * it is and its size checked against its header at mount: growing a
         * truncated image would turn its loss into an empty device.
         */
        n->file_bytes = (uint64_t)st.st_size;
        n->file_existed = st.st_size > 0;
        if (!n->file_existed && ftruncate(n->fd, (off_t)n->map_bytes) != 0) {
            snprintf(err, err_len, "image_path %s cannot grow to %zu bytes: %s", path, n->map_bytes,
                     strerror(errno));
            close(n->fd);
            return -1;
        }
        n->map = mmap(NULL, n->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, n->fd,
                      0);
    } else {
        /* reserve 2 MiB more so that page 0 can sit on a huge-page boundary */
        n->raw_bytes = n->map_bytes + HUGE_BYTES;
        n->raw = mmap(NULL, n->raw_bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (n->raw == MAP_FAILED) {
            n->map = MAP_FAILED;
        } else {
            uintptr_t data = ((uintptr_t)n->raw + NAND_IMAGE_HEADER_BYTES + HUGE_BYTES - 1) &
                             ~(uintptr_t)(HUGE_BYTES - 1);
            n->map = (uint8_t *)(data - NAND_IMAGE_HEADER_BYTES);
        }
    }
    if (n->map == MAP_FAILED) {
        snprintf(err, err_len, "cannot map %zu bytes of NAND backing store: %s", n->map_bytes,
                 strerror(errno));
        if (n->fd >= 0) {
            close(n->fd);
        }
        n->map = NULL;
        return -1;
    }
    if (n->fd < 0) {
        /* 2 MiB pages where the kernel allows: blob reads are random, TLB misses dominate */
        madvise(n->map + NAND_IMAGE_HEADER_BYTES, n->map_bytes - NAND_IMAGE_HEADER_BYTES,
                MADV_HUGEPAGE);
    }
    n->data = n->map + NAND_IMAGE_HEADER_BYTES;
    n->oob = (struct nand_oob *)(n->data + n->geo.total_bytes);
    n->unit_spare = n->geo.unit_spares_per_page
                        ? (struct nand_unit_spare *)((uint8_t *)n->oob + oob_bytes(&n->geo))
                        : NULL;
    n->unmap_log = n->unit_spare ? (struct nand_unmap_log *)((uint8_t *)n->unit_spare +
                                                             unit_spare_bytes(&n->geo))
                                 : NULL;
    n->die_busy_ns = g_new0(uint64_t, n->geo.dies);
    n->chan_busy_ns = g_new0(uint64_t, n->geo.channels);
    return 0;
}

void nand_fini(struct nand *n)
{
    if (n->raw) {
        munmap(n->raw, n->raw_bytes);
    } else if (n->map) {
        munmap(n->map, n->map_bytes);
    }
    if (n->fd >= 0) {
        close(n->fd);
    }
    g_free(n->die_busy_ns);
    g_free(n->chan_busy_ns);
    nand_scratch_free(&n->view_scratch);
    memset(n, 0, sizeof(*n));
    n->fd = -1;
}

void *nand_scratch_get(struct nand_scratch *s, size_t len)
{
    if (len > s->cap) {
        s->buf = g_realloc(s->buf, len);
        s->cap = len;
    }
    return s->buf;
}

void nand_scratch_free(struct nand_scratch *s)
{
    g_free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

void nand_sync(struct nand *n)
{
    if (n->fd >= 0 && n->map) {
        msync(n->map, n->map_bytes, MS_SYNC);
    }
}

void nand_reset_clock(struct nand *n)
{
    memset(n->die_busy_ns, 0, n->geo.dies * sizeof(uint64_t));
    memset(n->chan_busy_ns, 0, n->geo.channels * sizeof(uint64_t));
}

uint64_t nand_transfer_ns(const struct nand *n, uint64_t bytes)
{
    /* bytes per microsecond -> ns, rounded up */
    return (bytes * 1000 + n->tm.channel_bytes_per_us - 1) / n->tm.channel_bytes_per_us;
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

uint64_t nand_read(struct nand *n, uint64_t ppn, uint32_t bytes, uint64_t at_ns)
{
    uint32_t die = nand_die_of(n, ppn);
    uint32_t ch = nand_channel_of_die(n, die);
    uint64_t sense_done = max_u64(at_ns, n->die_busy_ns[die]) + n->tm.read_ns;
    uint64_t xfer_start = max_u64(sense_done, n->chan_busy_ns[ch]);
    uint64_t done = xfer_start + nand_transfer_ns(n, bytes);
    n->chan_busy_ns[ch] = done;
    n->die_busy_ns[die] = done; /* the page register is busy until moved out */
    n->pages_read++;
    return done;
}

int nand_program(struct nand *n, uint64_t ppn, const void *data, const struct nand_oob *oob,
                 uint64_t at_ns, bool plp_dump, uint64_t *done_ns)
{
    uint32_t die = nand_die_of(n, ppn);
    uint32_t ch = nand_channel_of_die(n, die);
    uint32_t ps = n->geo.page_size;

    if (!plp_dump) {
        if (n->power_lost) {
            return -1; /* dropped: the device has no power */
        }
        if (n->cut_armed) {
            if (n->cut_countdown == 0) {
                /*
                 * Torn: half the page reaches the cells, the spare area does
                 * not. A page programmed in place (from the page buffer)
                 * already holds its bytes; who loses the rest is decided at
                 * the power cycle (PLP completes it, else it is cut in half).
                 */
                if (data != nand_page_ptr(n, ppn)) {
                    memcpy(nand_page_ptr(n, ppn), data, ps / 2);
                }
                n->power_lost = true;
                n->cut_armed = false;
                n->torn_ppn = ppn;
                return -1;
            }
            n->cut_countdown--;
        }
    }
    g_assert(!nand_page_programmed(n, ppn) || ppn == n->torn_ppn);

    uint64_t xfer_start = max_u64(at_ns, n->chan_busy_ns[ch]);
    uint64_t xfer_done = xfer_start + nand_transfer_ns(n, ps);
    n->chan_busy_ns[ch] = xfer_done;
    uint64_t prog_start = max_u64(xfer_done, n->die_busy_ns[die]);
    uint64_t done = prog_start + n->tm.program_ns;
    n->die_busy_ns[die] = done;

    if (data != nand_page_ptr(n, ppn)) {
        memcpy(nand_page_ptr(n, ppn), data, ps);
    }
    n->oob[ppn] = *oob;
    if (ppn == n->torn_ppn) {
        n->torn_ppn = UINT64_MAX;
    }
    n->pages_programmed++;
    *done_ns = done;
    return 0;
}

uint64_t nand_erase_stripe(struct nand *n, uint32_t stripe, uint64_t at_ns)
{
    uint64_t first = (uint64_t)stripe * n->geo.pages_per_stripe;
    uint8_t *p = nand_page_ptr(n, first);
    size_t len = n->geo.stripe_bytes;

    /* Give the memory back: erased pages read as zero and cost nothing. */
    if (n->fd >= 0) {
        off_t off = (off_t)(p - n->map);
        if (fallocate(n->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, (off_t)len) != 0) {
            memset(p, 0, len);
        }
    } else if (madvise(p, len, MADV_DONTNEED) != 0) {
        memset(p, 0, len);
    }
    memset(&n->oob[first], 0, n->geo.pages_per_stripe * sizeof(struct nand_oob));
    if (n->unit_spare) {
        memset(nand_unit_spares(n, first), 0,
               (size_t)n->geo.pages_per_stripe * n->geo.unit_spares_per_page *
                   sizeof(struct nand_unit_spare));
    }
    if (n->torn_ppn >= first && n->torn_ppn < first + n->geo.pages_per_stripe) {
        n->torn_ppn = UINT64_MAX;
    }

    uint64_t done = at_ns;
    for (uint32_t d = 0; d < n->geo.dies; d++) {
        uint64_t end = max_u64(at_ns, n->die_busy_ns[d]) + n->tm.erase_ns;
        n->die_busy_ns[d] = end;
        done = max_u64(done, end);
    }
    n->blocks_erased += n->geo.dies;
    return done;
}
