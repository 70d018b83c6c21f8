/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NAND model: geometry, timing and the backing store of page contents.
 *
 * The FTL's erase unit is a *stripe*: block b of every die, erased
 * together. Page i of a stripe lives on die (i % dies), at page
 * (i / dies) of that die's block, so consecutive log pages are programmed
 * on different dies and channels in parallel. A NAND page number (ppn) is
 * stripe * pages_per_stripe + i, and the backing store holds pages in ppn
 * order, so a stripe is one contiguous byte range.
 *
 * Erased NAND reads as zero bytes here (anonymous or sparse-file memory
 * that was never written), which is what the log scanner treats as "end".
 * Every page has a 16-byte spare (OOB) area written with the page.
 */
#ifndef KVFTL_NAND_H
#define KVFTL_NAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "calendar.h"
#include "prefault.h"

#define NAND_IMAGE_HEADER_BYTES 4096u

struct nand_geometry {
    uint32_t channels;
    uint32_t dies_per_channel;
    uint32_t blocks_per_die;   /* = number of stripes */
    uint32_t pages_per_block;
    uint32_t page_size;
    uint32_t unit_spares_per_page; /* nvm personality: page_size / 4096; 0 for kv (no area) */
    /* derived */
    uint32_t page_shift;       /* log2(page_size) */
    uint32_t dies;
    uint32_t stripes;
    uint32_t pages_per_stripe;
    uint64_t stripe_bytes;
    uint64_t total_pages;
    uint64_t total_bytes;
    uint32_t dies_mask;     /* dies - 1 when dies is a power of two, else 0 */
    uint32_t channels_mask; /* channels - 1 when channels is a power of two, else 0 */
    bool stripe_pow2;       /* pages_per_stripe is a power of two ... */
    uint32_t stripe_shift;  /* ... its log2 */
};

struct nand_timing {
    uint64_t read_ns;
    uint64_t program_ns;
    uint64_t erase_ns;
    uint64_t channel_bytes_per_us;
};

/*
 * Spare area of a page. kind 0 = never programmed (erased).
 *
 * NAND_PAGE_BUFFERED is not a NAND state: it is the page buffer's
 * directory entry for a value-log page that is open in the (power-loss
 * protected) buffer, written into the spare-area slot when the page enters
 * the buffer. The spare areas of a file-backed device live in the shared
 * mapping of the image, so the entry reaches the file without a syscall
 * and survives the death of the process; a crash mount with PLP replays
 * such pages as the capacitor dump would have programmed them
 * (recovery.c). The page program overwrites it with NAND_PAGE_DATA.
 */
enum nand_page_kind {
    NAND_PAGE_ERASED = 0,
    NAND_PAGE_DATA = 0x44415441,     /* "DATA": value-log page */
    NAND_PAGE_INDEX = 0x494e4458,    /* "INDX": index page */
    NAND_PAGE_BUFFERED = 0x42554644, /* "BUFD": value-log page open in the PLP buffer */
};

struct nand_oob {
    uint32_t kind;
    uint32_t tag;      /* index page id for index pages */
    uint64_t seq;      /* open sequence number of the stripe */
};

/*
 * The nvm personality's per-unit spare area: one per 4 KiB slot of every
 * page (geo.unit_spares_per_page of them), the slot's logical unit and
 * write sequence number -- the reverse map that GC reads to ask "is this
 * slot still the copy the map names?" and that a crash mount replays. It
 * lies in the image after the page spare areas (so a kv image, which has
 * none, keeps its layout). Erased slots read as zero (seq 0 = never
 * written).
 */
struct nand_unit_spare {
    uint64_t unit; /* logical 4 KiB unit (LBA * lba_bytes / 4096) */
    uint64_t seq;  /* write sequence number, 1.. ; 0 = nothing written here */
};

/*
 * The nvm personality's unmap log: Deallocate and Write Zeroes change only
 * the map, whose translation pages reach NAND later (Flush, eviction,
 * close). With PLP the controller keeps the unmaps it has completed in
 * capacitor-backed DRAM until their translation pages are programmed; this
 * log models that DRAM in the backing store (after the unit spare areas,
 * nvm only), so that in an image file it outlives a killed process as the
 * BUFD marks do. An entry: units [first_unit, first_unit + units) were
 * unmapped when the last slot written had sequence number seq; a crash
 * mount unmaps each of them whose newest copy is not newer
 * (kvftl/block_recovery.c). check = XXH3-64 of the other three fields
 * seeded with the entry's index, so a torn or stale entry is ignored.
 * Written only with PLP; emptied when every dirty translation page is
 * programmed.
 */
#define NAND_UNMAP_LOG_ENTRIES 1024u
#define NAND_UNMAP_LOG_MAGIC 0x50414d4e55ULL /* "UNMAP" */

struct nand_unmap_entry {
    uint64_t first_unit;
    uint64_t units;
    uint64_t seq;
    uint64_t check;
};

struct nand_unmap_log {
    uint64_t magic; /* NAND_UNMAP_LOG_MAGIC once written; 0 = empty (never written) */
    uint32_t used;  /* entries [0, used) are the log; at most NAND_UNMAP_LOG_ENTRIES */
    uint32_t reserved;
    struct nand_unmap_entry e[NAND_UNMAP_LOG_ENTRIES];
};

/*
 * The anonymous (no image file) backing store holds what was written, not
 * the device. Every page has an entry: a pointer to its whole buffer, the
 * position of its chunks in its stripe's arena, and a bitmap of its
 * NAND_CHUNK_BYTES-byte chunks (bit set = chunk not all zero). A page is
 *   - zero (never written since its erase): nothing but the entry;
 *   - chunks: a programmed data page's non-zero chunks, in order, appended
 *     to its stripe's arena when it is programmed;
 *   - whole: a page-size buffer (pages open in the page buffer, index
 *     pages, and a page whose writable memory nand_page_ptr() was asked for).
 * An erase frees the stripe's arena and whole pages. docs/kvftl.md ("Host
 * memory of the NAND") bounds it. An image file is mapped as it is.
 */
#define NAND_CHUNK_BYTES 64u

/*
 * NAND_LSAN: built with AddressSanitizer, whose LeakSanitizer scans only
 * the heap, globals and stacks. The page entries live in an mmap()ed table,
 * so nand_init() registers it as a root region (and nand_fini() withdraws
 * it): otherwise every whole page alive at exit is reported as leaked.
 */
#if defined(__SANITIZE_ADDRESS__)
#define NAND_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NAND_LSAN 1
#endif
#endif

struct nand_page_entry {
    uint8_t *whole;    /* the page whole, or NULL */
    uint64_t chunks;   /* 1 + offset of its chunks in its stripe's arena, or 0 */
    uint64_t bitmap[]; /* nand.bitmap_bytes of chunk bits */
};

struct nand_arena {
    uint8_t *mem;       /* reserved at the stripe's bound, on its first chunk */
    uint64_t used, cap; /* bytes of chunks; bytes reserved */
    uint8_t *raw;       /* the mapping holding mem (2 MiB-aligned inside it) */
    size_t raw_bytes;
    uint64_t populated; /* bytes from mem mapped in: written, or asked of the prefault helper */
    uint32_t programmed; /* data pages of the stripe programmed since its erase */
};

/* A grow-only buffer for nand_view() of records of any length. */
struct nand_scratch {
    uint8_t *buf;
    size_t cap;
};

struct nand {
    struct nand_geometry geo;
    struct nand_timing tm;

    uint8_t *map;          /* whole mapping (image header first when file-backed) */
    size_t map_bytes;
    uint8_t *raw;          /* anonymous reservation holding map (aligned inside it) */
    size_t raw_bytes;
    uint8_t *data;         /* page 0 */
    struct nand_oob *oob;  /* one per page */
    struct nand_unit_spare *unit_spare; /* geo.unit_spares_per_page per page, or NULL */
    struct nand_unmap_log *unmap_log;   /* nvm (unit_spare set): the unmap log, else NULL */
    struct nand_scratch view_scratch; /* vlog_bytes()'s (kvftl/value_log.c) */
    bool sparse;               /* anonymous store of chunk records (above); data is NULL */
    uint8_t *pages;            /* sparse: per page a struct nand_page_entry + bitmap */
    uint8_t *pages_raw;        /* sparse: the mapping holding pages (2 MiB-aligned in it) */
    size_t pages_raw_bytes;
    uint64_t pages_bytes; /* the entry table: total_pages x page_entry_bytes */
    uint32_t page_entry_bytes; /* sparse: their size */
    struct nand_arena *arena;  /* sparse: per stripe */
    struct nand_arena spare;   /* sparse: the next new arena, its first 2 MiB prefaulted */
    struct prefault prefault;  /* populates arenas and index frames ahead of their writers */
    uint64_t whole_pages;      /* sparse: pages held whole */
    uint32_t bitmap_bytes;     /* sparse: bytes of a record's chunk bitmap */
    bool popcnt;               /* sparse: the CPU counts bits (chunk ranks) */
    int fd;                /* -1 for anonymous memory */
    bool file_existed;     /* the image file was not empty when opened */
    uint64_t file_bytes;   /* its size then (an existing image is never resized) */
    bool file_created;     /* nand_init() created it (removed again if it cannot be sized) */
    bool file_sized;       /* nand_init() grew it from empty (emptied again on failure) */
    char *path;            /* the image file's name, or NULL */
    uint64_t *backed_bytes; /* image: per stripe, bytes from its start with blocks allocated */
    int backing_errno; /* a page could not be backed by the file: writes refused (nand_back_page())
                        */
    char backing_err[512]; /* then the sentence saying so, printed once to stderr */

    uint64_t *die_busy_ns;
    struct calendar *chan; /* per channel: its transfers (calendar.h) */

    uint64_t pages_read;
    uint64_t pages_programmed;
    uint64_t blocks_erased; /* physical blocks (dies per stripe erase) */

    /* power-loss harness */
    uint64_t cut_countdown; /* programs left before the cut; valid when cut_armed */
    bool cut_armed;
    bool power_lost;
    uint64_t torn_ppn; /* page whose program was torn, or UINT64_MAX */
};

/* is_pow2() - is @v a power of two (the geometry's masks, the tunables' checks)? */
static inline bool is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* nand_geometry_derive() - fill the derived fields of @geo. */
void nand_geometry_derive(struct nand_geometry *geo);

/*
 * nand_init() - map the backing store: anonymous memory when @path is NULL,
 * else the file @path (created sparse if missing or empty), locked against
 * every other opener. An existing file is mapped at the size the geometry
 * needs but not resized: the caller checks file_bytes before touching it.
 * The header and spare areas (never punched) get their blocks allocated
 * here; a NAND page gets its own before it is written (nand_back_page()).
 * A file this call created and could not size or allocate is removed; a
 * file that existed empty is left empty. Returns 0 or -1 with a sentence
 * in @err.
 */
int nand_init(struct nand *n, const struct nand_geometry *geo, const struct nand_timing *tm,
              const char *path, char *err, size_t err_len);
void nand_fini(struct nand *n);

/*
 * nand_back_page() - make the image file hold blocks for page @ppn before
 * anything is stored into its mapped memory: a store to a page the file
 * system cannot back raises SIGBUS, fallocate() reports ENOSPC (EDQUOT,
 * EFBIG, a file shrunk under the device). On the first failure the store
 * latches: backing_errno and backing_err are set, the sentence goes to
 * stderr once, and this and every later call (and nand_program()) fail,
 * so that the device acknowledges no write it could not persist.
 * Anonymous memory needs nothing. Returns 0 or -1.
 */
int nand_back_page(struct nand *n, uint64_t ppn);

/* nand_writable() - false once a page could not be backed (nand_back_page()). */
static inline bool nand_writable(const struct nand *n)
{
    return !n->backing_errno;
}

/*
 * nand_check_file() - latch as nand_back_page() does if the image file is
 * now shorter than its mapping (shrunk under the device: its cut-off pages
 * would raise SIGBUS). 0, or -1 (latched, now or before).
 */
int nand_check_file(struct nand *n);

/*
 * nand_pwrite() - pwrite() @len bytes at @off of the image file, refused
 * with EFBIG (instead of SIGXFSZ) when the end passes the process's
 * file-size limit (RLIMIT_FSIZE). Returns 0, or -1 with errno set.
 */
int nand_pwrite(struct nand *n, const void *buf, size_t len, uint64_t off);

/* Byte offset in the image file where the checkpoint area starts. */
uint64_t nand_checkpoint_offset(const struct nand *n);

/*
 * Access to page contents. Everything outside nand.c reads the backing
 * store through these, never through n->data:
 *
 * nand_copy_out() copies the device bytes [addr, addr + len) (addr =
 * ppn * page_size + offset; the range may cross pages) to @dst.
 *
 * nand_view() gives the same bytes read-only: a pointer into the store
 * when it holds them contiguously, else @scratch (at least @len bytes)
 * filled by nand_copy_out(). The pointer is valid until the next program
 * or erase of those pages or the next use of @scratch.
 *
 * nand_page_ptr() is the writable memory of page @ppn, for the page
 * buffer (an unprogrammed page is filled in place, then programmed from
 * there) and for index pages.
 */
uint8_t *nand_sparse_page(const struct nand *n, uint64_t ppn);
void nand_sparse_copy_out(const struct nand *n, uint64_t addr, void *dst, size_t len);
const uint8_t *nand_sparse_view(const struct nand *n, uint64_t addr, size_t len, void *scratch);
void nand_sparse_prefetch(const struct nand *n, uint64_t addr, uint32_t len);

static inline uint8_t *nand_page_ptr(const struct nand *n, uint64_t ppn)
{
    if (n->sparse) {
        return nand_sparse_page(n, ppn);
    }
    return n->data + ppn * n->geo.page_size;
}

static inline void nand_copy_out(const struct nand *n, uint64_t addr, void *dst, size_t len)
{
    if (n->sparse) {
        nand_sparse_copy_out(n, addr, dst, len);
        return;
    }
    memcpy(dst, n->data + addr, len);
}

static inline const uint8_t *nand_view(const struct nand *n, uint64_t addr, size_t len,
                                       void *scratch)
{
    if (n->sparse) {
        return nand_sparse_view(n, addr, len, scratch);
    }
    return n->data + addr;
}

/*
 * nand_store_bytes() - bytes the sparse store holds for page contents
 * (chunks in the arenas + whole pages); 0 for a mapped store.
 */
uint64_t nand_store_bytes(const struct nand *n);

/* nand_page_view() - nand_view() of the whole page @ppn (@scratch: page size bytes). */
static inline const uint8_t *nand_page_view(const struct nand *n, uint64_t ppn, void *scratch)
{
    return nand_view(n, ppn * n->geo.page_size, n->geo.page_size, scratch);
}

/* nand_scratch_get() - @s's buffer, grown to at least @len bytes. */
void *nand_scratch_get(struct nand_scratch *s, size_t len);
void nand_scratch_free(struct nand_scratch *s);

/*
 * nand_fill() - copy @len bytes from @src to device address @addr, into
 * the memory of pages that are not programmed yet (the page buffer's);
 * the range may cross pages.
 */
static inline void nand_fill(const struct nand *n, uint64_t addr, const void *src, size_t len)
{
    const uint8_t *s = src;
    while (len) {
        uint64_t ppn = addr >> n->geo.page_shift;
        uint32_t in = (uint32_t)(addr & (n->geo.page_size - 1));
        size_t chunk = len < n->geo.page_size - in ? len : n->geo.page_size - in;
        memcpy(nand_page_ptr(n, ppn) + in, s, chunk);
        s += chunk;
        addr += chunk;
        len -= chunk;
    }
}

/*
 * nand_prefetch() - a hint: the bytes [addr, addr + len) will be read soon.
 * The sparse store reads the page's entry here to name the chunks, so a
 * caller with time to spare hints the entry first (nand_prefetch_entry())
 * and calls this once that has arrived: two dependent misses, each
 * overlapped with other work instead of the second waiting on the first.
 */
static inline void nand_prefetch(const struct nand *n, uint64_t addr, uint32_t len)
{
    if (n->sparse) {
        nand_sparse_prefetch(n, addr, len);
        return;
    }
    uintptr_t p = (uintptr_t)(n->data + addr), end = p + (len ? len : 1);
    for (p &= ~(uintptr_t)63; p < end; p += 64) {
        __builtin_prefetch((const void *)p);
    }
}

/*
 * nand_prefetch_entry() - a hint: nand_prefetch() of an address in page
 * @ppn will follow; loads the sparse store's entry of that page (pointer,
 * chunk offset, bitmap). A mapped store has no entry: nothing to do.
 */
static inline void nand_prefetch_entry(const struct nand *n, uint64_t ppn)
{
    if (!n->sparse) {
        return;
    }
    uintptr_t p = (uintptr_t)(n->pages + ppn * n->page_entry_bytes);
    uintptr_t end = p + n->page_entry_bytes;
    for (p &= ~(uintptr_t)63; p < end; p += 64) {
        __builtin_prefetch((const void *)p);
    }
}

/*
 * nand_page_hole() - true if page @ppn of an image file has no blocks
 * (never written since its erase: it reads as zeros). A mount asks this
 * before reading a page that may be erased: on tmpfs a read fault on a
 * hole allocates a page, which on a full file system raises SIGBUS.
 * Always false for anonymous memory.
 */
bool nand_page_hole(const struct nand *n, uint64_t ppn);

/* nand_byte() - the byte at device address @addr. */
static inline uint8_t nand_byte(const struct nand *n, uint64_t addr)
{
    uint8_t b;
    nand_copy_out(n, addr, &b, 1);
    return b;
}

/* nand_unit_spares() - the unit spare areas of page @ppn (NULL for kv). */
static inline struct nand_unit_spare *nand_unit_spares(const struct nand *n, uint64_t ppn)
{
    return n->unit_spare ? n->unit_spare + ppn * n->geo.unit_spares_per_page : NULL;
}

/*
 * Page ppn of a stripe is on die (ppn mod pages_per_stripe) mod dies, which
 * is ppn mod dies (dies divide pages_per_stripe); a mask where the count is
 * a power of two (the presets'): each read and program asks, and a 64-bit
 * division is tens of cycles.
 */
static inline uint32_t nand_die_of(const struct nand *n, uint64_t ppn)
{
    return n->geo.dies_mask ? (uint32_t)(ppn & n->geo.dies_mask) : (uint32_t)(ppn % n->geo.dies);
}

static inline uint32_t nand_channel_of_die(const struct nand *n, uint32_t die)
{
    return n->geo.channels_mask ? die & n->geo.channels_mask : die % n->geo.channels;
}

/* nand_stripe_of() - the stripe of page @ppn; a shift, as above, where the count allows. */
static inline uint32_t nand_stripe_of(const struct nand *n, uint64_t ppn)
{
    return (uint32_t)(n->geo.stripe_pow2 ? ppn >> n->geo.stripe_shift
                                         : ppn / n->geo.pages_per_stripe);
}

/* nand_transfer_ns() - time to move @bytes over one channel. */
uint64_t nand_transfer_ns(const struct nand *n, uint64_t bytes);

/*
 * nand_read() - account a read of @bytes (<= page size) of page @ppn issued
 * at @at_ns: the die is busy for tR, then the channel moves the bytes.
 * Returns the completion time. The caller reads the bytes via nand_page_ptr().
 */
uint64_t nand_read(struct nand *n, uint64_t ppn, uint32_t bytes, uint64_t at_ns);

/*
 * nand_read_more() - @bytes more of page @ppn, which a read of this command
 * has sensed already: no tR, only the channel moves them out of the die's
 * page register, from @at_ns on. Returns the completion time.
 */
uint64_t nand_read_more(struct nand *n, uint64_t ppn, uint32_t bytes, uint64_t at_ns);

/*
 * nand_program() - program page @ppn with @data (page size bytes) and @oob.
 * Returns 0 and the completion time in *@done_ns, or -1 if power is lost
 * (the program is torn or dropped; see kvftl_power_cut_after()) or the
 * image file cannot back pages (nand_back_page()).
 * @plp_dump: the capacitor-powered dump after a cut, which completes a torn
 * program and is not subject to the cut.
 */
int nand_program(struct nand *n, uint64_t ppn, const void *data, const struct nand_oob *oob,
                 uint64_t at_ns, bool plp_dump, uint64_t *done_ns);

/* nand_erase_stripe() - erase block @stripe of every die. Returns completion time. */
uint64_t nand_erase_stripe(struct nand *n, uint32_t stripe, uint64_t at_ns);

/* nand_page_programmed() - true if the spare area of @ppn says programmed. */
static inline bool nand_page_programmed(const struct nand *n, uint64_t ppn)
{
    return n->oob[ppn].kind != NAND_PAGE_ERASED && n->oob[ppn].kind != NAND_PAGE_BUFFERED;
}

/* nand_idle_ns() - when every die and channel has finished what was issued (at most that far). */
uint64_t nand_idle_ns(const struct nand *n);

/* nand_reset_clock() - forget busy-until times (after a power cycle). */
void nand_reset_clock(struct nand *n);

/* nand_sync() - write a file-backed mapping to disk. */
void nand_sync(struct nand *n);

#endif
