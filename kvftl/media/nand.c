/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NAND model: geometry, timing (per-die and per-channel busy-until) and backing store. */
#include "nand.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <glib.h>
#ifdef NAND_LSAN
#include <sanitizer/lsan_interface.h>
#endif

static bool cpu_has_popcnt(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt");
#else
    return false;
#endif
}

static struct nand_page_entry *entry_of(const struct nand *n, uint64_t ppn)
{
    return (struct nand_page_entry *)(n->pages + ppn * n->page_entry_bytes);
}

void nand_geometry_derive(struct nand_geometry *geo)
{
    geo->dies = geo->channels * geo->dies_per_channel;
    geo->page_shift = (uint32_t)__builtin_ctz(geo->page_size);
    geo->stripes = geo->blocks_per_die;
    geo->pages_per_stripe = geo->dies * geo->pages_per_block;
    geo->stripe_bytes = (uint64_t)geo->pages_per_stripe * geo->page_size;
    geo->total_pages = (uint64_t)geo->pages_per_stripe * geo->stripes;
    geo->total_bytes = geo->total_pages * geo->page_size;
    geo->dies_mask = is_pow2(geo->dies) ? geo->dies - 1 : 0;
    geo->channels_mask = is_pow2(geo->channels) ? geo->channels - 1 : 0;
    geo->stripe_pow2 = is_pow2(geo->pages_per_stripe);
    geo->stripe_shift = geo->stripe_pow2 ? (uint32_t)__builtin_ctz(geo->pages_per_stripe) : 0;
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

/* Bytes free to an unprivileged writer on @fd's file system, or UINT64_MAX if unknown. */
static uint64_t fs_free_bytes(int fd)
{
    struct statvfs vfs;
    if (fstatvfs(fd, &vfs) != 0) {
        return UINT64_MAX;
    }
    return (uint64_t)vfs.f_bavail * vfs.f_frsize;
}

/* The process's file-size limit (RLIMIT_FSIZE) in bytes, or UINT64_MAX if none. */
static uint64_t fsize_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
        return UINT64_MAX;
    }
    return (uint64_t)rl.rlim_cur;
}

/*
 * Allocate the file's blocks for bytes [off, off + len) (inside the file):
 * fallocate() mode 0, which reports ENOSPC where a store into the mapping
 * would raise SIGBUS. A file system without it (EOPNOTSUPP) gets the
 * bytes written as zeros (they are zero: erased or never written), which
 * allocates them the same way. 0, or an errno.
 */
static int file_allocate(int fd, uint64_t off, uint64_t len)
{
    if (fallocate(fd, 0, (off_t)off, (off_t)len) == 0) {
        return 0;
    }
    if (errno != EOPNOTSUPP) {
        return errno;
    }
    static const uint8_t zeros[4096];
    while (len) {
        size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
        ssize_t w = pwrite(fd, zeros, n, (off_t)off);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        if (w == 0) {
            return ENOSPC;
        }
        off += (uint64_t)w;
        len -= (uint64_t)w;
    }
    return 0;
}

/*
 * The image regions that erase never punches -- the header, and the spare
 * areas and unmap log after the NAND pages -- allocated once, up to @end
 * (the file's size: an existing image is not grown here). 0, or an errno.
 */
static int reserve_metadata(struct nand *n, uint64_t end)
{
    uint64_t hdr = NAND_IMAGE_HEADER_BYTES < end ? NAND_IMAGE_HEADER_BYTES : end;
    uint64_t meta = NAND_IMAGE_HEADER_BYTES + n->geo.total_bytes;
    int e = hdr ? file_allocate(n->fd, 0, hdr) : 0;
    if (!e && meta < end) {
        e = file_allocate(n->fd, meta, end - meta);
    }
    return e;
}

/*
 * Undo a failed open of the image: a file this call created goes, an empty
 * one it sized is emptied again; anything else (another device's image
 * among them) is left as it was.
 */
static void image_abandon(struct nand *n, const char *path, bool created)
{
    if (created) {
        unlink(path);
    } else if (n->file_sized && ftruncate(n->fd, 0) != 0) {
        /* nothing more to do: it was sized by us and stays so */
    }
    close(n->fd);
    n->fd = -1;
}

/* Open (creating if missing) and size the image file @path. 0 or -1 with a sentence. */
static int image_open(struct nand *n, const char *path, char *err, size_t err_len)
{
    struct stat st;
    bool created = false;
    n->fd = open(path, O_RDWR | O_CLOEXEC);
    if (n->fd < 0 && errno == ENOENT) {
        n->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        created = n->fd >= 0;
        n->file_created = created;
        if (n->fd < 0 && errno == EEXIST) {
            n->fd = open(path, O_RDWR | O_CLOEXEC); /* created by someone else meanwhile */
        }
    }
    if (n->fd < 0) {
        snprintf(err, err_len, "image_path %s cannot be opened: %s", path, strerror(errno));
        return -1;
    }
    if (image_lock(n->fd, path, err, err_len) != 0) {
        image_abandon(n, path, created);
        return -1;
    }
    if (fstat(n->fd, &st) != 0) {
        snprintf(err, err_len, "image_path %s cannot be examined: %s", path, strerror(errno));
        image_abandon(n, path, created);
        return -1;
    }
    /*
     * Only a new (empty) file is sized here. An existing one is mapped as
     * it is and its size checked against its header at mount: growing a
     * truncated image would turn its loss into an empty device.
     */
    n->file_bytes = (uint64_t)st.st_size;
    n->file_existed = st.st_size > 0;
    if (!n->file_existed) {
        /* past the limit, ftruncate() raises SIGXFSZ (and kills the process) before EFBIG */
        uint64_t limit = fsize_limit();
        if (n->map_bytes > limit) {
            snprintf(err, err_len,
                     "image_path %s cannot grow to %zu bytes: the process's file-size limit "
                     "(RLIMIT_FSIZE, ulimit -f) is %" PRIu64 " bytes",
                     path, n->map_bytes, limit);
            image_abandon(n, path, created);
            return -1;
        }
        if (ftruncate(n->fd, (off_t)n->map_bytes) != 0) {
            snprintf(err, err_len, "image_path %s cannot grow to %zu bytes: %s", path, n->map_bytes,
                     strerror(errno));
            image_abandon(n, path, created);
            return -1;
        }
        n->file_sized = true;
    }
    uint64_t end = n->file_existed && n->file_bytes < n->map_bytes ? n->file_bytes : n->map_bytes;
    int e = reserve_metadata(n, end);
    if (e) {
        uint64_t meta = NAND_IMAGE_HEADER_BYTES + n->geo.total_bytes;
        uint64_t need = (end < NAND_IMAGE_HEADER_BYTES ? end : NAND_IMAGE_HEADER_BYTES) +
                        (end > meta ? end - meta : 0);
        uint64_t free_bytes = fs_free_bytes(n->fd);
        char free_text[64];
        if (free_bytes == UINT64_MAX) {
            snprintf(free_text, sizeof(free_text), "an unknown number of");
        } else {
            snprintf(free_text, sizeof(free_text), "%" PRIu64, free_bytes);
        }
        snprintf(err, err_len,
                 "image_path %s (%zu bytes, sparse) needs %" PRIu64
                 " bytes allocated for its header and spare areas, and its file system has %s "
                 "bytes free: %s",
                 path, n->map_bytes, need, free_text, strerror(e));
        image_abandon(n, path, created);
        return -1;
    }
    n->path = g_strdup(path);
    return 0;
}

int nand_init(struct nand *n, const struct nand_geometry *geo, const struct nand_timing *tm,
              const char *path, char *err, size_t err_len)
{
    memset(n, 0, sizeof(*n));
    prefault_init(&n->prefault);
    n->geo = *geo;
    nand_geometry_derive(&n->geo);
    n->tm = *tm;
    n->fd = -1;
    n->torn_ppn = UINT64_MAX;
    n->map_bytes = NAND_IMAGE_HEADER_BYTES + n->geo.total_bytes + oob_bytes(&n->geo) +
                   unit_spare_bytes(&n->geo) + unmap_log_bytes(&n->geo);
    /* anonymous: page contents live in the sparse store (nand.h), not in the mapping */
    n->sparse = !path;
    n->popcnt = cpu_has_popcnt();
    if (n->sparse) {
        n->map_bytes -= n->geo.total_bytes;
    }

    if (path) {
        if (image_open(n, path, err, err_len) != 0) {
            return -1;
        }
        n->map = mmap(NULL, n->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, n->fd,
                      0);
    } else {
        /* reserve 2 MiB more so that page 0 can sit on a huge-page boundary */
        n->raw_bytes = n->map_bytes + HUGE_PAGE_BYTES;
        n->raw = mmap(NULL, n->raw_bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (n->raw == MAP_FAILED) {
            n->map = MAP_FAILED;
        } else {
            uintptr_t data = ((uintptr_t)n->raw + NAND_IMAGE_HEADER_BYTES + HUGE_PAGE_BYTES - 1) &
                             ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
            n->map = (uint8_t *)(data - NAND_IMAGE_HEADER_BYTES);
        }
    }
    if (n->map == MAP_FAILED) {
        snprintf(err, err_len, "cannot map %zu bytes of NAND backing store: %s", n->map_bytes,
                 strerror(errno));
        if (n->fd >= 0) {
            image_abandon(n, path, n->file_created);
        }
        g_free(n->path);
        n->path = NULL;
        n->map = NULL;
        return -1;
    }
    if (n->fd < 0) {
        /* 2 MiB pages where the kernel allows: blob reads are random, TLB misses dominate */
        madvise(n->map + NAND_IMAGE_HEADER_BYTES, n->map_bytes - NAND_IMAGE_HEADER_BYTES,
                MADV_HUGEPAGE);
    }
    if (n->sparse) {
        uint32_t chunks = (n->geo.page_size + NAND_CHUNK_BYTES - 1) / NAND_CHUNK_BYTES;
        n->data = NULL;
        n->oob = (struct nand_oob *)(n->map + NAND_IMAGE_HEADER_BYTES);
        n->bitmap_bytes = (chunks + 63) / 64 * 8;
        n->page_entry_bytes = (uint32_t)sizeof(struct nand_page_entry) + n->bitmap_bytes;
        n->pages_bytes = n->geo.total_pages * n->page_entry_bytes;
        n->pages = huge_map(n->pages_bytes, &n->pages_raw, &n->pages_raw_bytes);
        if (!n->pages) {
            snprintf(err, err_len, "cannot map %" PRIu64 " bytes of NAND page entries: %s",
                     n->pages_bytes, strerror(errno));
            munmap(n->raw, n->raw_bytes);
            n->raw = NULL;
            n->map = NULL;
            return -1;
        }
        n->arena = g_new0(struct nand_arena, n->geo.stripes);
#ifdef NAND_LSAN
        __lsan_register_root_region(n->pages, n->pages_bytes);
#endif
    } else {
        n->data = n->map + NAND_IMAGE_HEADER_BYTES;
        n->oob = (struct nand_oob *)(n->data + n->geo.total_bytes);
    }
    n->unit_spare = n->geo.unit_spares_per_page
                        ? (struct nand_unit_spare *)((uint8_t *)n->oob + oob_bytes(&n->geo))
                        : NULL;
    n->unmap_log = n->unit_spare ? (struct nand_unmap_log *)((uint8_t *)n->unit_spare +
                                                             unit_spare_bytes(&n->geo))
                                 : NULL;
    n->die_busy_ns = g_new0(uint64_t, n->geo.dies);
    n->chan = g_new0(struct calendar, n->geo.channels);
    if (n->fd >= 0) {
        n->backed_bytes = g_new0(uint64_t, n->geo.stripes);
    }
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
    g_free(n->path);
    g_free(n->backed_bytes);
    g_free(n->die_busy_ns);
    g_free(n->chan);
    nand_scratch_free(&n->view_scratch);
    prefault_fini(&n->prefault); /* its helper populates nothing from here on */
    if (n->sparse) {
        for (uint64_t p = 0; p < n->geo.total_pages; p++) {
            g_free(entry_of(n, p)->whole);
        }
        for (uint32_t s = 0; s < n->geo.stripes; s++) {
            if (n->arena[s].raw) {
                munmap(n->arena[s].raw, n->arena[s].raw_bytes);
            }
        }
        if (n->spare.raw) {
            munmap(n->spare.raw, n->spare.raw_bytes);
        }
#ifdef NAND_LSAN
        __lsan_unregister_root_region(n->pages, n->pages_bytes);
#endif
        munmap(n->pages_raw, n->pages_raw_bytes);
        g_free(n->arena);
    }
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

/* Latch the failure to back the image (nand.h): the sentence, once. */
static void backing_fail(struct nand *n, const char *what, int e)
{
    if (n->backing_errno) {
        return;
    }
    n->backing_errno = e;
    snprintf(n->backing_err, sizeof(n->backing_err),
             "kvssd: image_path %s %s: %s; the device refuses writes from now on (reads are "
             "served, acknowledged data is kept): give the file system room and restart",
             n->path, what, strerror(e));
    fprintf(stderr, "%s\n", n->backing_err);
}

int nand_check_file(struct nand *n)
{
    struct stat st;
    if (n->fd < 0) {
        return 0;
    }
    if (n->backing_errno) {
        return -1;
    }
    if (fstat(n->fd, &st) != 0) {
        backing_fail(n, "cannot be examined", errno);
        return -1;
    }
    if ((uint64_t)st.st_size < n->map_bytes) {
        char what[160];
        snprintf(what, sizeof(what), "shrank to %" PRIu64 " bytes under the device (it maps %zu)",
                 (uint64_t)st.st_size, n->map_bytes);
        backing_fail(n, what, EIO);
        return -1;
    }
    return 0;
}

/*
 * The blocks of a stripe come and go with its erase (hole punched), so a
 * reservation made once would not last: a page is allocated when it is
 * first written. Streams write a stripe's pages in order, so the stripe
 * keeps a watermark (backed_bytes: bytes from its start known to have
 * blocks, 0 after an erase and at start) and allocates up to
 * NAND_BACK_AHEAD_BYTES past the page at a time: one fallocate() (and one
 * fstat()) per 1 MiB instead of per page. When the run does not fit, the
 * page alone is tried, so the file system is used to its last block.
 */
#define NAND_BACK_AHEAD_BYTES (1u << 20)

int nand_back_page(struct nand *n, uint64_t ppn)
{
    if (n->fd < 0) {
        return 0;
    }
    uint32_t s = nand_stripe_of(n, ppn);
    uint64_t ps = n->geo.page_size;
    uint64_t in = (ppn - (uint64_t)s * n->geo.pages_per_stripe) * ps; /* page's offset in stripe */
    if (n->backed_bytes[s] >= in + ps) {
        return 0;
    }
    if (nand_check_file(n) != 0) {
        return -1;
    }
    uint64_t base = NAND_IMAGE_HEADER_BYTES + (uint64_t)s * n->geo.stripe_bytes;
    uint64_t from = n->backed_bytes[s] < in ? n->backed_bytes[s] : in;
    uint64_t to = in + (NAND_BACK_AHEAD_BYTES > ps ? NAND_BACK_AHEAD_BYTES : ps);
    to = to < n->geo.stripe_bytes ? to : n->geo.stripe_bytes;
    int e = file_allocate(n->fd, base + from, to - from);
    if (e == ENOSPC || e == EDQUOT) {
        from = in;
        to = in + ps;
        e = file_allocate(n->fd, base + from, ps);
    }
    if (e) {
        char what[200];
        uint64_t free_bytes = fs_free_bytes(n->fd);
        if (free_bytes == UINT64_MAX) {
            snprintf(what, sizeof(what), "cannot allocate NAND page %" PRIu64 " (%u bytes)", ppn,
                     n->geo.page_size);
        } else {
            snprintf(what, sizeof(what),
                     "cannot allocate NAND page %" PRIu64 " (%u bytes; %" PRIu64
                     " bytes free on its file system)",
                     ppn, n->geo.page_size, free_bytes);
        }
        backing_fail(n, what, e);
        return -1;
    }
    n->backed_bytes[s] = to;
    return 0;
}

bool nand_page_hole(const struct nand *n, uint64_t ppn)
{
    if (n->fd < 0) {
        return false;
    }
    off_t off = (off_t)(NAND_IMAGE_HEADER_BYTES + ppn * n->geo.page_size);
    off_t data = lseek(n->fd, off, SEEK_DATA);
    /* ENXIO: no data from there to the end of the file */
    return (data < 0 && errno == ENXIO) || (data >= 0 && data >= off + (off_t)n->geo.page_size);
}

int nand_pwrite(struct nand *n, const void *buf, size_t len, uint64_t off)
{
    if (off + len > fsize_limit()) {
        errno = EFBIG; /* pwrite() would raise SIGXFSZ first */
        return -1;
    }
    const uint8_t *p = buf;
    while (len) {
        ssize_t w = pwrite(n->fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            if (w == 0) {
                errno = ENOSPC;
            }
            return -1;
        }
        p += w;
        off += (uint64_t)w;
        len -= (size_t)w;
    }
    return 0;
}

uint64_t nand_idle_ns(const struct nand *n)
{
    uint64_t t = 0;
    for (uint32_t d = 0; d < n->geo.dies; d++) {
        t = t > n->die_busy_ns[d] ? t : n->die_busy_ns[d];
    }
    for (uint32_t c = 0; c < n->geo.channels; c++) {
        uint64_t e = cal_end(&n->chan[c]);
        t = t > e ? t : e;
    }
    return t;
}

void nand_reset_clock(struct nand *n)
{
    memset(n->die_busy_ns, 0, n->geo.dies * sizeof(uint64_t));
    memset(n->chan, 0, n->geo.channels * sizeof(struct calendar));
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

uint64_t nand_read_more(struct nand *n, uint64_t ppn, uint32_t bytes, uint64_t at_ns)
{
    uint32_t die = nand_die_of(n, ppn);
    uint32_t ch = nand_channel_of_die(n, die);
    /* the first gap on the channel once the die's register holds the data */
    uint64_t done = cal_book(&n->chan[ch], max_u64(at_ns, n->die_busy_ns[die]),
                             nand_transfer_ns(n, bytes), NULL);
    n->die_busy_ns[die] = done; /* the page register is busy until moved out */
    return done;
}

uint64_t nand_read(struct nand *n, uint64_t ppn, uint32_t bytes, uint64_t at_ns)
{
    uint64_t sense_done = max_u64(at_ns, n->die_busy_ns[nand_die_of(n, ppn)]) + n->tm.read_ns;
    n->pages_read++;
    return nand_read_more(n, ppn, bytes, sense_done);
}

/* ---- the sparse store (nand.h) ---- */

static uint32_t chunks_per_page(const struct nand *n)
{
    return (n->geo.page_size + NAND_CHUNK_BYTES - 1) / NAND_CHUNK_BYTES;
}

/* Bytes of chunk @c of a page (the last one may be short if a page is not a chunk multiple). */
static uint32_t chunk_len(const struct nand *n, uint32_t c)
{
    uint32_t off = c * NAND_CHUNK_BYTES;
    return n->geo.page_size - off < NAND_CHUNK_BYTES ? n->geo.page_size - off : NAND_CHUNK_BYTES;
}

static bool chunk_zero(const uint8_t *p, uint32_t len)
{
    if (len == NAND_CHUNK_BYTES) {
        /*
         * Four 16-byte loads ORed as a tree (GCC/Clang vector extension):
         * a program scans every chunk of its page,
         * 16 KiB per page, and the one-word-at-a-time loop was a chain of
         * 8 dependent ORs per chunk, 10-15 % of a Store's time.
         */
        typedef uint64_t v2 __attribute__((vector_size(16)));
        v2 a, b, c, d;
        memcpy(&a, p, 16);
        memcpy(&b, p + 16, 16);
        memcpy(&c, p + 32, 16);
        memcpy(&d, p + 48, 16);
        v2 o = (a | b) | (c | d);
        return (o[0] | o[1]) == 0;
    }
    uint64_t acc = 0;
    uint32_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        acc |= w;
    }
    for (; i < len; i++) {
        acc |= p[i];
    }
    return acc == 0;
}

/* The most a stripe's arena holds: every chunk of every page. */
static uint64_t arena_most(const struct nand *n)
{
    return (uint64_t)n->geo.pages_per_stripe * chunks_per_page(n) * NAND_CHUNK_BYTES;
}

/* Rank of chunk @c among the page's stored chunks. */
static inline __attribute__((always_inline)) uint32_t chunk_rank_of(const uint64_t *bm, uint32_t c)
{
    uint32_t idx = 0;
    for (uint32_t w = 0; w < c / 64; w++) {
        idx += (uint32_t)__builtin_popcountll(bm[w]);
    }
    if (c % 64) {
        idx += (uint32_t)__builtin_popcountll(bm[c / 64] & ((1ull << (c % 64)) - 1));
    }
    return idx;
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * The same with the CPU's POPCNT instruction. The x86-64 baseline that
 * distributions build for has no POPCNT, so without this every count is a
 * call into libgcc's bit-twiddling (about 180 instructions per Retrieve of
 * a 64 B value: a page's rank is counted at the prefetch, the key check and
 * the read). Chosen at run time: nand_init() asks the CPU.
 */
__attribute__((target("popcnt"))) static uint32_t chunk_rank_popcnt(const uint64_t *bm, uint32_t c)
{
    return chunk_rank_of(bm, c);
}
#endif

static uint32_t chunk_rank(const struct nand *n, const uint64_t *bm, uint32_t c)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (n->popcnt) {
        return chunk_rank_popcnt(bm, c);
    }
#endif
    return chunk_rank_of(bm, c); /* n->popcnt is false off x86-64 */
}

/*
 * An arena's memory is populated by the prefault helper (prefault.h) one
 * 2 MiB page ahead of its chunks, so a program rarely waits on the host
 * for fresh memory: a stripe's next page is asked for when its chunks
 * enter the one before, and a new stripe takes the spare arena, whose
 * first 2 MiB were asked for when it was reserved. Host memory beyond the
 * chunks: the 2 MiB page ahead of each stripe being programmed (given back
 * when the stripe's last page is programmed, and at its erase) and the
 * spare's 2 MiB. Nothing else depends on it: the helper maps memory only.
 */
static void arena_ahead(struct nand *n, struct nand_arena *a)
{
    uint64_t written = huge_round_up(a->used); /* the programs faulted these themselves */
    if (a->populated < written) {
        a->populated = written;
    }
    uint64_t want = written + HUGE_PAGE_BYTES < a->cap ? written + HUGE_PAGE_BYTES : a->cap;
    if (want > a->populated &&
        prefault_ask(&n->prefault, a->mem + a->populated, want - a->populated)) {
        a->populated = want;
    }
}

/* Reserve stripe arena @a's memory: the spare's, then a new spare for the next. */
static void arena_open(struct nand *n, struct nand_arena *a)
{
    if (n->spare.mem) {
        *a = n->spare;
        n->spare = (struct nand_arena){0};
    } else {
        /*
         * The stripe's bound, reserved (not committed: only what is
         * written costs memory) in 2 MiB pages where the kernel allows:
         * reads of chunks are random, and TLB misses dominate them.
         */
        a->cap = arena_most(n);
        a->mem = huge_map(a->cap, &a->raw, &a->raw_bytes);
        g_assert(a->mem); /* address space only; the device's size was mapped before */
    }
    struct nand_arena *s = &n->spare;
    s->cap = arena_most(n);
    s->mem = huge_map(s->cap, &s->raw, &s->raw_bytes);
    if (!s->mem) {
        *s = (struct nand_arena){0}; /* address space exhausted: the next stripe maps its own */
        return;
    }
    uint64_t first = s->cap < HUGE_PAGE_BYTES ? s->cap : HUGE_PAGE_BYTES;
    if (prefault_ask(&n->prefault, s->mem, first)) {
        s->populated = first;
    }
}

/* Stripe arena @a's last page is programmed: give back what was populated past its chunks. */
static void arena_seal(struct nand *n, struct nand_arena *a)
{
    uint64_t keep = huge_round_up(a->used);
    if (!a->mem || a->populated <= keep) {
        return;
    }
    prefault_forget(&n->prefault, a->mem + keep, a->populated - keep);
    madvise(a->mem + keep, a->populated - keep, MADV_DONTNEED);
    a->populated = keep;
}

/* Store page @ppn's bytes @data as its chunk bitmap and chunks (none for a zero page). */
static void sparse_pack(struct nand *n, uint64_t ppn, const uint8_t *data)
{
    struct nand_page_entry *e = entry_of(n, ppn);
    uint64_t *bm = e->bitmap;
    uint32_t chunks = chunks_per_page(n), nz = 0;
    struct nand_arena *a = &n->arena[nand_stripe_of(n, ppn)];
    uint8_t *out = NULL;
    memset(bm, 0, n->bitmap_bytes);
    e->chunks = 0;
    /* one pass: each chunk is tested and, when not zero, appended at once */
    for (uint32_t c = 0; c < chunks; c++) {
        const uint8_t *src = data + (size_t)c * NAND_CHUNK_BYTES;
        uint32_t len = chunk_len(n, c);
        if (chunk_zero(src, len)) {
            continue;
        }
        if (!a->mem) {
            arena_open(n, a);
        }
        if (!out) {
            out = a->mem + a->used;
        }
        /* one program per page between erases: a page's chunks fit its share */
        g_assert(a->used + (uint64_t)(nz + 1) * NAND_CHUNK_BYTES <= a->cap);
        if (len == NAND_CHUNK_BYTES) {
            memcpy(out, src, NAND_CHUNK_BYTES);
        } else {
            memcpy(out, src, len);
            memset(out + len, 0, NAND_CHUNK_BYTES - len);
        }
        out += NAND_CHUNK_BYTES;
        bm[c / 64] |= 1ull << (c % 64);
        nz++;
    }
    if (nz) {
        e->chunks = a->used + 1;
        a->used += (uint64_t)nz * NAND_CHUNK_BYTES;
        arena_ahead(n, a);
    }
}

/* Copy bytes [off, off + len) of page @ppn (within the page) to @dst. */
static void sparse_page_bytes(const struct nand *n, uint64_t ppn, uint32_t off, uint32_t len,
                              uint8_t *dst)
{
    const struct nand_page_entry *e = entry_of(n, ppn);
    if (e->whole) {
        memcpy(dst, e->whole + off, len);
        return;
    }
    if (!e->chunks) {
        memset(dst, 0, len);
        return;
    }
    const uint64_t *bm = e->bitmap;
    const uint8_t *chunk = n->arena[nand_stripe_of(n, ppn)].mem + e->chunks - 1;
    uint32_t c = off / NAND_CHUNK_BYTES;
    uint32_t idx = chunk_rank(n, bm, c);
    uint32_t in = off % NAND_CHUNK_BYTES;
    while (len) {
        uint32_t take = NAND_CHUNK_BYTES - in < len ? NAND_CHUNK_BYTES - in : len;
        if (bm[c / 64] >> (c % 64) & 1) {
            memcpy(dst, chunk + (size_t)idx * NAND_CHUNK_BYTES + in, take);
            idx++;
        } else {
            memset(dst, 0, take);
        }
        dst += take;
        len -= take;
        in = 0;
        c++;
    }
}

uint8_t *nand_sparse_page(const struct nand *cn, uint64_t ppn)
{
    struct nand *n = (struct nand *)cn; /* the store's own state, not the caller's view of it */
    struct nand_page_entry *e = entry_of(n, ppn);
    if (!e->whole) {
        uint8_t *w = g_malloc(n->geo.page_size);
        sparse_page_bytes(n, ppn, 0, n->geo.page_size, w);
        e->whole = w;
        e->chunks = 0; /* its arena bytes are dead until the erase */
        n->whole_pages++;
    }
    return e->whole;
}

void nand_sparse_copy_out(const struct nand *n, uint64_t addr, void *dst, size_t len)
{
    uint8_t *d = dst;
    uint32_t ps = n->geo.page_size;
    while (len) {
        uint64_t ppn = addr >> n->geo.page_shift;
        uint32_t in = (uint32_t)(addr & (ps - 1));
        uint32_t take = len < ps - in ? (uint32_t)len : ps - in;
        sparse_page_bytes(n, ppn, in, take, d);
        d += take;
        addr += take;
        len -= take;
    }
}

const uint8_t *nand_sparse_view(const struct nand *n, uint64_t addr, size_t len, void *scratch)
{
    uint64_t ppn = addr >> n->geo.page_shift;
    uint32_t in = (uint32_t)(addr & (n->geo.page_size - 1));
    const struct nand_page_entry *e = entry_of(n, ppn);
    if (e->whole && in + len <= n->geo.page_size) {
        return e->whole + in;
    }
    if (!e->whole && e->chunks && len && in + len <= n->geo.page_size) {
        /*
         * Every chunk of the range stored: they are consecutive in the
         * arena, so the bytes are too (a Retrieve's blob, read in place as
         * from the flat store, instead of copied chunk by chunk).
         */
        uint32_t c = in / NAND_CHUNK_BYTES, last = (in + (uint32_t)len - 1) / NAND_CHUNK_BYTES;
        uint32_t k = c;
        while (k <= last && (e->bitmap[k / 64] >> (k % 64) & 1)) {
            k++;
        }
        if (k > last) {
            const uint8_t *chunk = n->arena[nand_stripe_of(n, ppn)].mem + e->chunks - 1;
            return chunk + (size_t)chunk_rank(n, e->bitmap, c) * NAND_CHUNK_BYTES +
                   in % NAND_CHUNK_BYTES;
        }
    }
    nand_sparse_copy_out(n, addr, scratch, len);
    return scratch;
}

/*
 * The page's entry (with its bitmap) is loaded here, so that the chunks the
 * read will start at can be prefetched too: a read then misses nothing.
 * The chunks of [addr, addr + len) are hinted as if all were stored (at
 * most 64, 4 KiB): a hint past a zero chunk only loads a useless line.
 */
void nand_sparse_prefetch(const struct nand *n, uint64_t addr, uint32_t len)
{
    uint64_t ppn = addr >> n->geo.page_shift;
    uint32_t in = (uint32_t)(addr & (n->geo.page_size - 1));
    const struct nand_page_entry *e = entry_of(n, ppn);
    if (e->whole) {
        __builtin_prefetch(e->whole + in);
    } else if (e->chunks) {
        const uint8_t *chunk = n->arena[nand_stripe_of(n, ppn)].mem + e->chunks - 1;
        uint32_t c = in / NAND_CHUNK_BYTES;
        uint32_t last = (in + (len ? len : 1) - 1) / NAND_CHUNK_BYTES;
        uint32_t idx = chunk_rank(n, e->bitmap, c);
        for (uint32_t k = 0; k <= last - c && k < 64; k++) {
            __builtin_prefetch(chunk + (size_t)(idx + k) * NAND_CHUNK_BYTES);
        }
    }
}

uint64_t nand_store_bytes(const struct nand *n)
{
    if (!n->sparse) {
        return 0;
    }
    uint64_t b = n->whole_pages * n->geo.page_size;
    for (uint32_t s = 0; s < n->geo.stripes; s++) {
        b += n->arena[s].used;
    }
    return b;
}

/* Program @data into page @ppn of the sparse store. */
static void sparse_program(struct nand *n, uint64_t ppn, const void *data, uint32_t kind)
{
    if (kind != NAND_PAGE_DATA) {
        /* index pages stay whole: the index cache reads them in place */
        uint8_t *w = nand_sparse_page(n, ppn);
        if (data != w) {
            memcpy(w, data, n->geo.page_size);
        }
        return;
    }
    sparse_pack(n, ppn, data); /* before the free: data may be the whole buffer */
    struct nand_arena *a = &n->arena[nand_stripe_of(n, ppn)];
    if (++a->programmed == n->geo.pages_per_stripe) {
        arena_seal(n, a);
    }
    struct nand_page_entry *e = entry_of(n, ppn);
    if (e->whole) {
        g_free(e->whole);
        e->whole = NULL;
        n->whole_pages--;
    }
}

static void sparse_erase(struct nand *n, uint64_t first)
{
    for (uint64_t p = first; p < first + n->geo.pages_per_stripe; p++) {
        struct nand_page_entry *e = entry_of(n, p);
        if (e->whole) {
            g_free(e->whole);
            n->whole_pages--;
        }
        memset(e, 0, n->page_entry_bytes);
    }
    struct nand_arena *a = &n->arena[nand_stripe_of(n, first)];
    if (a->raw) {
        prefault_forget(&n->prefault, a->raw, a->raw_bytes);
        munmap(a->raw, a->raw_bytes);
    }
    *a = (struct nand_arena){0};
}

int nand_program(struct nand *n, uint64_t ppn, const void *data, const struct nand_oob *oob,
                 uint64_t at_ns, bool plp_dump, uint64_t *done_ns)
{
    uint32_t die = nand_die_of(n, ppn);
    uint32_t ch = nand_channel_of_die(n, die);
    uint32_t ps = n->geo.page_size;

    if (n->fd >= 0 && data != nand_page_ptr(n, ppn) && nand_back_page(n, ppn) != 0) {
        return -1; /* written from elsewhere: its blocks first (a buffer page has them) */
    }
    if (!plp_dump) {
        if (n->power_lost) {
            return -1; /* dropped: the device has no power */
        }
        if (!nand_writable(n)) {
            return -1; /* the device stopped acknowledging writes (nand_back_page()) */
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

    uint64_t xfer_done = cal_book(&n->chan[ch], at_ns, nand_transfer_ns(n, ps), NULL);
    uint64_t prog_start = max_u64(xfer_done, n->die_busy_ns[die]);
    uint64_t done = prog_start + n->tm.program_ns;
    n->die_busy_ns[die] = done;

    if (n->sparse) {
        sparse_program(n, ppn, data, oob->kind);
    } else if (data != nand_page_ptr(n, ppn)) {
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

    /* Give the memory back: erased pages read as zero and cost nothing. */
    if (n->sparse) {
        sparse_erase(n, first);
    } else {
        uint8_t *p = n->data + first * n->geo.page_size;
        size_t len = n->geo.stripe_bytes;
        off_t off = (off_t)(p - n->map);
        if (fallocate(n->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, (off_t)len) != 0) {
            /* zeros by pwrite(): it fails where a store would raise SIGBUS */
            static const uint8_t zeros[65536];
            for (size_t done = 0; done < len && nand_writable(n);) {
                size_t chunk = len - done < sizeof(zeros) ? len - done : sizeof(zeros);
                if (nand_pwrite(n, zeros, chunk, (uint64_t)off + done) != 0) {
                    backing_fail(n, "cannot erase a stripe (punch a hole or write zeros)", errno);
                }
                done += chunk;
            }
        }
        n->backed_bytes[stripe] = 0; /* the hole has no blocks (nand_back_page()) */
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
