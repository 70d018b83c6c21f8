/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: mounting damaged images.
 *
 * Each input builds a real image in a temporary file (a small device and a
 * workload chosen by its first bytes), closes it cleanly or loses power
 * after a Flush, damages the file as the rest of the input says (image
 * header, checkpoint bytes raw or with its checksums re-sealed, index
 * pages, bytes at record starts in data pages, spare areas, the clean
 * flag, truncation) and mounts it. What must hold, besides no crash, no
 * sanitizer report and no leak:
 *   - the mount refuses only when the header or the file's length was
 *     damaged, and then with a sentence naming the file;
 *   - otherwise every operation (Retrieve and Exist of every workload key,
 *     an iteration over keys and values, the FTL check, Stores, a Delete,
 *     Flush, close and a second mount) returns a status it documents, and
 *     the second mount is clean (no note), except that it may scan when
 *     the log was damaged under a checkpoint the first mount took;
 *   - unless forged checksums (re-sealed over changed bytes) got a
 *     checkpoint past every check: with the log intact (no data page, spare
 *     area or truncation damage) every workload key reads back exactly and
 *     the FTL check passes, whatever the mount had to do; after a scan of a
 *     damaged log, a key that is found holds one of the values stored under
 *     it, and the FTL check passes.
 * Data damaged in place under a clean checkpoint is not detected by the
 * mount (it reads one blob per index page): the FTL check finds it, and
 * Retrieve and the iteration return Unrecovered Error for it (never its bytes).
 *
 * Encoding (tests/fuzz/make_image_corpus.py writes the seed corpus):
 *   byte 0: config: bits 0-1 packing, bit 2 plp, bits 3-4 placement unit
 *           (1, 64, 1024, 4096 B), bit 5 page_fit_blobs, bit 6 bloom
 *   byte 1: workload: bits 0-1 keys (5, 40, 250, 700), bits 2-3 value
 *           lengths (1-64, 1-2000, 2000-9000 B, mixed), bit 4 deletes,
 *           bit 5 overwrites, bit 6 power lost after the last Flush
 *           (a dirty image) instead of an orderly close
 *   then up to 16 damages, each a byte t (t & 7 = kind, t & 0x80 = re-seal
 *   the checkpoint's checksums afterwards) and its operands:
 *   0 header      off:u16 (% 256), n:u8 (1 + n % 8), n bytes
 *   1 checkpoint  off:u32 (% its length), n, bytes
 *   2 index page  page:u8 (% index pages), off:u16 (% page), n, bytes
 *   3 data page   page:u16 (% data pages), unit:u16 (% units in a page), off:u8 (% 32), n, bytes
 *   4 spare area  page:u16 (% written pages), off:u8 (% 16), n, bytes
 *   5 truncate    sel:u8: < 128 file x sel / 128, else into the checkpoint
 *   6 clean flag  v:u8 (v % 4)
 *   7 fill page   which:u8 (even: an index page, odd: a data page), fill:u8
 * KVFTL_FUZZ_TRACE=1 prints the workload and each damage to stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include <kvftl/kvftl.h>

#include "fuzz_input.h"
#include "kvftl_image.h"
#include "kvftl_small.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 700
#define MAX_VERSIONS 3
#define MAX_DAMAGES 16
#define VBUF_BYTES 16384

static int trace = -1;

static void say(const char *fmt, ...)
{
    if (trace) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
}

static char image[128];

static void G_GNUC_NORETURN die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_image: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    unlink(image);
    abort();
}

/* The workload's model: per key, the length of each version stored (0: none) and what is live. */
struct model {
    uint32_t nkeys;
    uint32_t len[MAX_KEYS][MAX_VERSIONS + 1];
    uint8_t versions[MAX_KEYS];   /* versions stored */
    bool live[MAX_KEYS];          /* the latest operation on the key was a successful Store */
};

static void key_of(char *key, uint32_t k)
{
    snprintf(key, 10, "img-%05u", k % 100000);
}

static uint8_t value_byte(uint32_t k, uint32_t v, uint32_t j)
{
    return (uint8_t)(k * 131 + v * 29 + j * 7 + (j >> 8));
}

static void value_of(uint8_t *buf, uint32_t k, uint32_t v, uint32_t len)
{
    for (uint32_t j = 0; j < len; j++) {
        buf[j] = value_byte(k, v, j);
    }
}

/* Is @buf (@len bytes) version @v of key @k? */
static bool is_version(const struct model *m, uint32_t k, uint32_t v, const uint8_t *buf,
                       uint32_t len)
{
    if (m->len[k][v] != len) {
        return false;
    }
    for (uint32_t j = 0; j < len; j++) {
        if (buf[j] != value_byte(k, v, j)) {
            return false;
        }
    }
    return true;
}

static void setup(struct kvftl_config *c, uint8_t cb)
{
    static const uint32_t units[] = {1, 64, 1024, 4096};
    /* 18 MiB sparse: 8 stripes of 576 4 KiB pages, the fewest the GC watermarks allow plus one */
    kvftl_config_small(c, (struct kvftl_small_geometry){.channels = 1,
                                                        .dies_per_channel = 1,
                                                        .blocks_per_die = 8,
                                                        .pages_per_block = 576,
                                                        .page_size_bytes = 4096});
    c->gc_high_watermark_blocks = 3;
    c->gc_low_watermark_blocks = 2;
    c->index_page_bytes = 4096;
    c->index_dram_bytes = 64 * 1024;
    c->buffer_entries = 4;
    c->dlt_entries = 4;
    c->packing = (enum kvftl_packing)(cb & 3);
    c->plp = (cb >> 2) & 1;
    c->placement_unit_bytes = units[(cb >> 3) & 3];
    c->page_fit_blobs = (cb >> 5) & 1;
    c->bloom = (cb >> 6) & 1;
    c->image_path = image;
    c->hash_seed = 0x6b7673736466757aull; /* a pinned key-hash seed: an input replays the same */
    kvftl_config_fuzz_index(c);
}

static uint16_t store(struct kvftl *f, uint32_t k, uint32_t v, uint32_t len, uint8_t *vbuf)
{
    char key[10];
    key_of(key, k);
    value_of(vbuf, k, v, len);
    struct kvftl_store_req r = {
        .key = key,
        .key_bytes = 9,
        .value = vbuf,
        .value_bytes = len,
        .inline_bytes = (k & 1) ? len : 0,
    };
    struct kvftl_cpl c;
    kvftl_store(f, &r, &c);
    return c.status;
}

static uint16_t delete_key(struct kvftl *f, uint32_t k)
{
    char key[10];
    key_of(key, k);
    struct kvftl_cpl c;
    kvftl_delete(f, key, 9, 0, &c);
    return c.status;
}

/* Build the image: the workload of byte @wb, then an orderly close or a power loss after a Flush.
 */
static void build(const struct kvftl_config *cfg, uint8_t wb, struct model *m, uint8_t *vbuf)
{
    static const uint32_t nkeys[] = {5, 40, 250, 700};
    char err[256];
    struct kvftl *f = kvftl_open(cfg, err, sizeof(err));
    if (!f) {
        die("building the image: %s", err);
    }
    m->nkeys = nkeys[wb & 3];
    uint32_t lens = (wb >> 2) & 3;
    bool deletes = (wb >> 4) & 1, overwrites = (wb >> 5) & 1;
    uint32_t rounds = overwrites ? MAX_VERSIONS : 1;
    /* at most ~3 MiB of values: the device's user capacity is ~8 MiB */
    uint32_t cap = 3 * 1024 * 1024 / (m->nkeys * rounds);
    for (uint32_t v = 1; v <= rounds; v++) {
        for (uint32_t k = 0; k < m->nkeys; k++) {
            uint32_t h = (k * 2654435761u) ^ (v * 40503u);
            uint32_t len = lens == 0   ? 1 + h % 64
                           : lens == 1 ? 1 + h % 2000
                           : lens == 2 ? 2000 + h % 7000
                                       : (h % 3 == 0 ? 9000 : 1 + h % 300);
            len = len > cap ? cap : len;
            uint16_t st = store(f, k, v, len, vbuf);
            if (st == KVFTL_OK) {
                m->len[k][v] = len;
                m->versions[k] = (uint8_t)v;
                m->live[k] = true;
            } else if (st != KVFTL_CAPACITY_EXCEEDED) {
                die("building the image: store of key %u got status 0x%x", k, st);
            }
        }
    }
    if (deletes) {
        for (uint32_t k = 0; k < m->nkeys; k += 3) {
            uint16_t st = delete_key(f, k);
            if (st == KVFTL_OK) {
                m->live[k] = false;
            } else if (st != KVFTL_KEY_DOES_NOT_EXIST || m->live[k]) {
                die("building the image: delete of key %u got status 0x%x", k, st);
            }
        }
    }
    struct kvftl_cpl c;
    kvftl_flush(f, 0, &c);
    if (c.status) {
        die("building the image: flush got status 0x%x", c.status);
    }
    if ((wb >> 6) & 1) {
        /* the power goes: no checkpoint, the header stays dirty (everything was flushed) */
        f->nand.power_lost = true;
    }
    say("built: %u keys, lengths %u, deletes %d, overwrites %d, %s\n", m->nkeys, lens, deletes,
        overwrites, (wb >> 6) & 1 ? "power lost" : "closed");
    kvftl_close(f);
}

/* What the damages did, for the assertions. */
struct damage {
    bool header; /* image header bytes changed */
    bool log; /* data pages, spare areas changed, or the file cut into its NAND */
    bool truncated; /* the file was made shorter */
    bool forged; /* checksums re-sealed over changed bytes */
};

/* The k-th page (mod their number) whose spare area says @kind (0: any written), or UINT64_MAX. */
static uint64_t nth_page(struct kvftl_image *im, uint32_t kind, uint32_t k)
{
    uint64_t n = 0, found = UINT64_MAX;
    struct nand_oob *oob = g_new(struct nand_oob, im->geo.total_pages);
    if (kvftl_image_read(im, kvftl_image_oob_off(im, 0), oob, im->geo.total_pages * sizeof(*oob))) {
        for (uint64_t p = 0; p < im->geo.total_pages; p++) {
            n += kind ? oob[p].kind == kind : oob[p].kind != 0;
        }
        uint64_t want = n ? k % n : 0;
        for (uint64_t p = 0; p < im->geo.total_pages && n; p++) {
            if ((kind ? oob[p].kind == kind : oob[p].kind != 0) && want-- == 0) {
                found = p;
                break;
            }
        }
    }
    g_free(oob);
    return found;
}

static void damage_bytes(struct kvftl_image *im, uint64_t off, struct input *in, const char *what)
{
    uint8_t n = 1 + in_u8(in) % 8, b[8];
    for (uint8_t i = 0; i < n; i++) {
        b[i] = in_u8(in);
    }
    say("damage: %s, %u bytes at file offset %" PRIu64 "\n", what, n, off);
    if (off + n <= im->file_bytes && !kvftl_image_write(im, off, b, n)) {
        die("pwrite: %s", strerror(errno));
    }
}

static void apply_damage(struct input *in, struct damage *d)
{
    struct kvftl_image im;
    if (!kvftl_image_open(&im, image)) {
        die("the built image has no header");
    }
    size_t ckpt_len = 0;
    uint8_t *ckpt = kvftl_image_checkpoint(&im, &ckpt_len);
    struct checkpoint_head ch = {0};
    if (ckpt) {
        memcpy(&ch, ckpt, sizeof(ch));
        g_free(ckpt);
    }
    /*
     * The index pages as the undamaged checkpoint names them (a damaged one
     * may name data pages). kvftl_image.h reads the hash design's part of
     * a checkpoint; under another design the index pages are those whose
     * spare area says so (older copies too), and a re-seal sets only the
     * header's checksum over the damaged checkpoint.
     */
    struct kvftl_config design = {.index = KVFTL_INDEX_HASH};
    bool hash = kvftl_config_fuzz_index(&design) == KVFTL_INDEX_HASH;
    uint32_t npages = hash ? (ch.npages < 64 ? ch.npages : 64) : 0, ppns[64];
    for (uint32_t p = 0; p < npages; p++) {
        ppns[p] = kvftl_image_index_ppn(&im, p);
    }
    bool reseal = false;
    int64_t cut = -1;
    for (int i = 0; i < MAX_DAMAGES && in->n; i++) {
        uint8_t t = in_u8(in);
        bool rs = t & 0x80;
        switch (t & 7) {
        case 0:
            d->header = true;
            damage_bytes(&im, in_u16(in) % 256, in, "header");
            break;
        case 1: {
            uint32_t off = in_u32(in);
            if (ckpt_len) {
                damage_bytes(&im, im.ckpt_off + off % ckpt_len, in, "checkpoint");
                reseal |= rs;
            }
            break;
        }
        case 2: {
            uint8_t pg = in_u8(in);
            uint16_t off = in_u16(in);
            uint64_t ppn = !hash    ? nth_page(&im, NAND_PAGE_INDEX, pg)
                           : npages ? ppns[pg % npages]
                                    : UINT64_MAX;
            if (ppn < im.geo.total_pages) {
                damage_bytes(&im, kvftl_image_page_off(&im, ppn) + off % im.h.index_page_bytes, in,
                             "index page");
                reseal |= rs;
            }
            break;
        }
        case 3: {
            uint16_t pg = in_u16(in), unit = in_u16(in);
            uint8_t off = in_u8(in);
            uint64_t ppn = nth_page(&im, NAND_PAGE_DATA, pg);
            uint32_t pu = im.h.placement_unit_bytes, units = im.geo.page_size / pu;
            if (ppn != UINT64_MAX) {
                d->log = true;
                damage_bytes(
                    &im, kvftl_image_page_off(&im, ppn) + (uint64_t)(unit % units) * pu + off % 32,
                    in, "data page near a record start");
            }
            break;
        }
        case 4: {
            uint16_t pg = in_u16(in);
            uint8_t off = in_u8(in);
            uint64_t ppn = nth_page(&im, 0, pg);
            if (ppn != UINT64_MAX) {
                d->log = true;
                damage_bytes(&im, kvftl_image_oob_off(&im, ppn) + off % 16, in, "spare area");
            }
            break;
        }
        case 5: {
            uint8_t sel = in_u8(in);
            cut = sel < 128 ? (int64_t)(im.file_bytes * sel / 128)
                            : (int64_t)(im.ckpt_off + ckpt_len * (sel - 128) / 128);
            say("damage: truncate to %" PRId64 " bytes\n", cut);
            break;
        }
        case 6: {
            uint32_t v = in_u8(in) % 4;
            say("damage: clean flag %u\n", v);
            im.h.clean = v;
            kvftl_image_write(&im, offsetof(struct image_header, clean), &v, 4);
            d->header = true;
            break;
        }
        default: {
            uint8_t which = in_u8(in), fill = in_u8(in);
            static uint8_t page[4096];
            memset(page, fill, sizeof(page));
            uint64_t ppn = which & 1 ? nth_page(&im, NAND_PAGE_DATA, which >> 1)
                           : !hash   ? nth_page(&im, NAND_PAGE_INDEX, which >> 1)
                           : npages  ? ppns[(which >> 1) % npages]
                                     : UINT32_MAX;
            if (ppn < im.geo.total_pages) {
                say("damage: page %" PRIu64 " filled with %#x\n", ppn, fill);
                kvftl_image_write(&im, kvftl_image_page_off(&im, ppn), page, sizeof(page));
                d->log |= which & 1;
                reseal |= rs;
            }
            break;
        }
        }
    }
    if (reseal) {
        size_t len = 0;
        uint8_t *b = kvftl_image_checkpoint(&im, &len);
        if (b) {
            say("damage: checksums re-sealed\n");
            if (hash) {
                kvftl_image_reseal(&im, b, len);
            } else {
                kvftl_image_seal_header(&im, b, len);
            }
            d->forged = true;
            g_free(b);
        }
    }
    if (cut >= 0 && (uint64_t)cut < im.file_bytes) {
        if (ftruncate(im.fd, cut) != 0) {
            die("ftruncate: %s", strerror(errno));
        }
        d->truncated = true;
        d->log |= (uint64_t)cut < im.ckpt_off;
    }
    kvftl_image_close(&im);
}

struct iter_count {
    uint64_t n;
    bool bad_key;
};

static int count_entry(void *opaque, const void *key, uint32_t key_bytes, const void *value,
                       uint32_t value_bytes)
{
    struct iter_count *ic = opaque;
    ic->n++;
    ic->bad_key |= key_bytes != 9 || memcmp(key, "img-", 4) != 0;
    return 0;
}

/* Exercise the mounted device; @exact: every workload key must read back exactly. */
static void exercise(struct kvftl *f, struct model *m, const struct damage *d, bool exact,
                     bool scanned, uint8_t *vbuf)
{
    uint64_t live = 0;
    for (uint32_t k = 0; k < m->nkeys; k++) {
        char key[10];
        key_of(key, k);
        struct kvftl_cpl c;
        kvftl_retrieve(f, key, 9, vbuf, 0, VBUF_BYTES, 0, &c);
        if (c.status != KVFTL_OK && c.status != KVFTL_KEY_DOES_NOT_EXIST &&
            c.status != KVFTL_UNRECOVERED_ERROR) {
            die("retrieve of key %u: status 0x%x", k, c.status);
        }
        live += m->live[k];
        if (exact) {
            bool ok = m->live[k]
                          ? c.status == 0 && is_version(m, k, m->versions[k], vbuf, c.xfer_bytes)
                          : c.status == KVFTL_KEY_DOES_NOT_EXIST;
            if (!ok) {
                die("key %u: status 0x%x, %u bytes; expected %s (version %u, %u bytes)", k,
                    c.status, c.value_bytes, m->live[k] ? "its value" : "absent", m->versions[k],
                    m->live[k] ? m->len[k][m->versions[k]] : 0);
            }
        } else if (scanned && c.status == 0) {
            bool any = false;
            for (uint32_t v = 1; v <= m->versions[k] && !any; v++) {
                any = is_version(m, k, v, vbuf, c.xfer_bytes);
            }
            if (!any) {
                die("key %u: the scan returned %u bytes that no Store put there", k, c.xfer_bytes);
            }
        }
        kvftl_exist(f, key, 9, 0, &c);
        if (c.status != KVFTL_OK && c.status != KVFTL_KEY_DOES_NOT_EXIST) {
            die("exist of key %u: status 0x%x", k, c.status);
        }
    }
    struct kvftl_stats st;
    kvftl_stats_get(f, &st);
    if (exact && st.live_keys != live) {
        die("live_keys %" PRIu64 ", the workload left %" PRIu64, st.live_keys, live);
    }
    struct iter_count ic = {0};
    struct kvftl_cpl c;
    uint32_t h;
    kvftl_iter_open(f, 0, 0, KVFTL_ITER_KEY_VALUES, 0, &h, &c);
    if (c.status) {
        die("iter_open: status 0x%x", c.status);
    }
    for (uint32_t calls = 0;; calls++) {
        kvftl_iter_next(f, h, 32, count_entry, &ic, 0, &c);
        if (c.status == KVFTL_ITERATOR_END) {
            break;
        }
        /* a damaged blob is one Unrecovered Error step; the iteration goes on past it */
        if ((c.status != KVFTL_OK && c.status != KVFTL_UNRECOVERED_ERROR) ||
            calls > 2 * MAX_KEYS + 16) {
            die("iter_next: status 0x%x after %u calls", c.status, calls);
        }
    }
    kvftl_iter_close(f, h, 0, &c);
    if (exact && (ic.n != live || ic.bad_key)) {
        die("iteration returned %" PRIu64 " keys (a foreign one: %d); %" PRIu64 " are live", ic.n,
            ic.bad_key, live);
    }
    char err[512];
    int rc = kvftl_check(f, err, sizeof(err));
    if (rc != 0 && (exact || scanned)) {
        die("kvftl_check after the mount: %s", err);
    }
    /* the device carries on: new keys, a Delete, a Flush */
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t nk = MAX_KEYS - 1 - k;
        uint16_t s = store(f, nk, 1, 100 + k, vbuf);
        if (s != KVFTL_OK && (s != KVFTL_CAPACITY_EXCEEDED || !d->forged || scanned)) {
            die("store after the mount: status 0x%x", s);
        }
    }
    uint16_t s = delete_key(f, 0);
    if (s != KVFTL_OK && s != KVFTL_KEY_DOES_NOT_EXIST) {
        die("delete after the mount: status 0x%x", s);
    }
    kvftl_flush(f, 0, &c);
    if (c.status) {
        die("flush after the mount: status 0x%x", c.status);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *vbuf;
    static struct model m;
    if (!vbuf) {
        vbuf = g_malloc(VBUF_BYTES);
    }
    if (trace < 0) {
        trace = getenv("KVFTL_FUZZ_TRACE") != NULL;
    }
    if (!image[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : g_get_tmp_dir();
        snprintf(image, sizeof(image), "%s/kvssd-fuzz-image-%d.img", dir, (int)getpid());
    }
    unlink(image);
    struct input in = {data, size};
    struct kvftl_config cfg;
    setup(&cfg, in_u8(&in));
    char err[512] = "";
    if (kvftl_config_check(&cfg, err, sizeof(err)) != 0) {
        die("config rejected: %s", err);
    }
    memset(&m, 0, sizeof(m));
    build(&cfg, in_u8(&in), &m, vbuf);

    struct damage d = {0};
    apply_damage(&in, &d);

    struct kvftl *f = kvftl_open(&cfg, err, sizeof(err));
    if (!f) {
        say("mount refused: %s\n", err);
        if (!strstr(err, image)) {
            die("the refusal does not name the image: %s", err);
        }
        if (!d.header && !d.truncated) {
            die("an image whose header and length are intact was refused: %s", err);
        }
        unlink(image);
        return 0;
    }
    const char *note = kvftl_mount_note(f);
    say("mounted%s%s\n", note ? ": " : " clean", note ? note : "");
    if (note && !strstr(note, image)) {
        die("the mount note does not name the image: %s", note);
    }
    /*
     * A state the device can be held to: rebuilt by the scan, or a
     * checkpoint nobody forged. A forged checkpoint that passes every check
     * is a consistent device with other contents: only statuses are checked.
     */
    bool scanned = note != NULL; /* the note goes with the device */
    bool trusted = scanned || !d.forged;
    bool exact = trusted && !d.log;
    exercise(f, &m, &d, exact, scanned, vbuf);
    kvftl_close(f);

    /*
     * The orderly close wrote a checkpoint the next mount takes as it is --
     * unless the log was damaged under a checkpoint the first mount took:
     * the second may then read one of the damaged blobs (one per index page)
     * and scan. After a scan, nothing indexed is damaged.
     */
    f = kvftl_open(&cfg, err, sizeof(err));
    if (!f) {
        die("the mount after an orderly close was refused: %s", err);
    }
    bool rescanned = kvftl_mount_note(f) != NULL;
    say("mounted again%s%s\n", rescanned ? ": " : " clean", rescanned ? kvftl_mount_note(f) : "");
    if (rescanned && (!d.log || scanned)) {
        die("the mount after an orderly close had to scan: %s", kvftl_mount_note(f));
    }
    if (kvftl_check(f, err, sizeof(err)) != 0 && (exact || scanned || rescanned)) {
        die("kvftl_check after the second mount: %s", err);
    }
    for (uint32_t k = 0; k < 3; k++) {
        char key[10];
        key_of(key, MAX_KEYS - 1 - k);
        struct kvftl_cpl c;
        kvftl_retrieve(f, key, 9, vbuf, 0, VBUF_BYTES, 0, &c);
        if (trusted && (c.status || c.xfer_bytes != 100 + k)) {
            die("a key stored after the mount: status 0x%x, %u bytes", c.status, c.xfer_bytes);
        }
    }
    kvftl_close(f);
    unlink(image);
    return 0;
}
