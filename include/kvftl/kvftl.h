/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvftl: the firmware of the emulated KV-SSD, as a plain C library.
 *
 * A hash-indexed FTL in the style of Samsung's KV-SSD: every key-value
 * pair is a blob appended to a log of NAND pages through a NAND page
 * buffer, placed at a configurable granularity (1 KiB like the PM983,
 * finer like BandSlim), located through a multi-level hash index whose
 * pages live in flash behind a DRAM cache, and reclaimed by garbage
 * collection. Time is simulated: every call takes the request's arrival
 * time in nanoseconds and returns its simulated completion time.
 *
 * Threading contract: a struct kvftl is single-threaded. The caller
 * serialises every call on one instance (the QEMU device calls it from one
 * thread; tests and benchmarks call it from one thread). Distinct instances
 * share nothing and may be used from distinct threads.
 *
 * Every operation reports an enum kvftl_status: what happened, in the
 * firmware's words. The firmware knows nothing of the wire: the command set
 * (hw/kvssd/cmdset.h, kvssd_status_from_ftl()) maps each to the NVMe status
 * the KV Command Set names.
 */
#ifndef KVFTL_KVFTL_H
#define KVFTL_KVFTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KVFTL_KEY_MIN_BYTES 1
#define KVFTL_KEY_MAX_BYTES 255
#define KVFTL_VALUE_MAX_BYTES (2u * 1024 * 1024)
#define KVFTL_MAX_ITERATORS 16
#define KVFTL_ITER_PREFIX_BYTES 4

/* Store options: the standard NVMe KV Store Options bits (CDW11[15:8]). */
#define KVFTL_STORE_ONLY_IF_EXISTS (1u << 0) /* fail with KEY_DOES_NOT_EXIST */
#define KVFTL_STORE_ONLY_IF_ABSENT (1u << 1) /* fail with KEY_EXISTS */

/* How values are placed in the NAND page buffer (BandSlim §3.3). */
enum kvftl_packing {
    KVFTL_PACK_BLOCK = 0,     /* every value at a 4 KiB boundary (block-SSD buffer) */
    KVFTL_PACK_ALL = 1,       /* KAML: everything packed at the write pointer */
    KVFTL_PACK_SELECTIVE = 2, /* inline values packed; DMA values at next 4 KiB, WP moves past */
    KVFTL_PACK_BACKFILL = 3,  /* selective + inline values backfill the gaps (DMA Log Table) */
};

/* The personality the firmware runs (docs/kvftl.md): its command set on the wire. */
enum kvftl_command_set {
    KVFTL_CMDSET_KV = 0,  /* hash index + value log: the KV command set (include/kvftl/kvftl.h) */
    KVFTL_CMDSET_NVM = 1, /* page-mapping block FTL: the NVM command set (include/kvftl/block.h) */
};

/* The KV personality's index design (docs/kvftl.md, "Index designs"). */
enum kvftl_index {
    KVFTL_INDEX_HASH = 0, /* extendible hash over flash index pages, DRAM cache, Bloom filter */
    KVFTL_INDEX_PM983 = 1, /* DRAM local index merged in batches into the hash as global index */
    KVFTL_INDEX_LSM = 2, /* memtable and leveled LSM-tree of index pages, upper levels pinned */
};

enum kvftl_gc_policy {
    KVFTL_GC_GREEDY = 0, /* victim = fewest valid bytes */
    KVFTL_GC_COST_BENEFIT = 1, /* victim = max (1-u)*age / (1+u) */
};

/* The names of the values above, as properties and flags spell them ("block", "cost-benefit"). */
extern const char *const kvftl_packing_names[KVFTL_PACK_BACKFILL + 1];
extern const char *const kvftl_gc_policy_names[KVFTL_GC_COST_BENEFIT + 1];
extern const char *const kvftl_command_set_names[KVFTL_CMDSET_NVM + 1];
extern const char *const kvftl_index_names[KVFTL_INDEX_LSM + 1];

/* The presets, in the order of tunables.def's columns: "default", "pm983", "cosmos". */
#define KVFTL_PRESETS 3
extern const char *const kvftl_preset_names[KVFTL_PRESETS];

/* The C type of each kind of tunable (tunables.def's kind column). */
#define KVFTL_TUNABLE_CTYPE_U32(field) uint32_t
#define KVFTL_TUNABLE_CTYPE_U64(field) uint64_t
#define KVFTL_TUNABLE_CTYPE_BOOL(field) bool
#define KVFTL_TUNABLE_CTYPE_ENUM(field) enum kvftl_##field
#define KVFTL_TUNABLE_CTYPE_STR(field) const char *

/*
 * Every tunable, with its unit in its name: one field per row of
 * <kvftl/tunables.def>, where each one's default in every preset, its range
 * and its meaning are. kvftl_config_preset() fills them.
 */
struct kvftl_config {
#define KVFTL_TUNABLE(field, kind, ...) KVFTL_TUNABLE_CTYPE_##kind(field) field;
#include <kvftl/tunables.def>
};

/*
 * kvftl_config_preset() - fill @cfg with a named preset.
 * @name: "default", "pm983" (32 KiB pages, 1 KiB placement, like the device of
 *        the characterization paper) or "cosmos" (16 KiB pages, 4 channels x
 *        8 ways, BandSlim's Cosmos+ OpenSSD testbed); NULL = "default".
 * Returns 0, or -1 with @cfg untouched if @name is unknown.
 */
int kvftl_config_preset(struct kvftl_config *cfg, const char *name);

/*
 * kvftl_config_check() - validate every field.
 * Returns 0, or -1 with a sentence in @err naming the field, the bad value and
 * the allowed range (e.g. "placement_unit_bytes is 3; it must be a power of
 * two from 1 to 4096").
 */
int kvftl_config_check(const struct kvftl_config *cfg, char *err, size_t err_len);

/* One row of tunables.def, as data: for tools that set, check or list tunables. */
enum kvftl_tunable_kind {
    KVFTL_TUNABLE_U32,
    KVFTL_TUNABLE_U64,
    KVFTL_TUNABLE_BOOL,
    KVFTL_TUNABLE_ENUM,
    KVFTL_TUNABLE_STR,
};

/* tunables.def's flags column */
#define KVFTL_TUNABLE_POW2 1u /* a power of two within min..max */
#define KVFTL_TUNABLE_CROSS 2u /* the range depends on other fields: checked by code */
#define KVFTL_TUNABLE_UNSET_MAX 4u /* 0 is a value: a property's "unset" is all ones */
#define KVFTL_TUNABLE_SIZE 8u /* a byte count: read as one (64M = 64Mi); the property a size */
/* tunables.def's where column */
#define KVFTL_TUNABLE_WHERE_QEMU true
#define KVFTL_TUNABLE_WHERE_LIB false

struct kvftl_tunable {
    const char *field; /* "read_latency_ns" */
    const char *prop; /* "read-latency-ns": the QEMU property and kvftl-bench flag */
    const char *unit; /* "ns", "" for none */
    const char *range; /* the range in words if min/max/flags cannot say it, else "" */
    const char *help; /* one line */
    enum kvftl_tunable_kind kind;
    bool qemu; /* a property of the QEMU device */
    unsigned flags; /* KVFTL_TUNABLE_* */
    uint64_t min, max; /* numbers: the range; ENUM: 0 .. the last value */
    uint64_t preset[KVFTL_PRESETS]; /* the value in each preset (STR: 0 = NULL) */
    const char *const *names; /* ENUM: the names of 0..max */
    size_t offset, size; /* of the field in struct kvftl_config */
};

extern const struct kvftl_tunable kvftl_tunables[];
extern const size_t kvftl_tunable_count;

/* kvftl_tunable_find() - the tunable of field or property name @name, or NULL. */
const struct kvftl_tunable *kvftl_tunable_find(const char *name);

/* kvftl_tunable_get/put() - a U32, U64, BOOL or ENUM field of @c as a number. */
uint64_t kvftl_tunable_get(const struct kvftl_config *c, const struct kvftl_tunable *t);
void kvftl_tunable_put(struct kvftl_config *c, const struct kvftl_tunable *t, uint64_t v);

/*
 * kvftl_tunable_parse() - set @t in @c from @text: a number as every tool
 * reads one (<bench/units.h>: a byte count 4k, 64Mi, 1G for a SIZE field,
 * else a count 1e6, 100k; 0x10), on/off, a value's name, or a string
 * (which must outlive @c).
 * A number is checked against the field's own range (not the cross-field
 * checks: kvftl_config_check() does those).
 * Returns 0, or -1 with "@name is '@text'; it must be <range>" in @err.
 */
int kvftl_tunable_parse(struct kvftl_config *c, const struct kvftl_tunable *t, const char *name,
                        const char *text, char *err, size_t err_len);

/* kvftl_tunable_range() - the allowed values in words ("a power of two from 1 to 4096"). */
size_t kvftl_tunable_range(const struct kvftl_tunable *t, char *buf, size_t len);

/* kvftl_tunable_value_text() - value @v of @t as a table shows it ("64 MiB", "on", "all"). */
size_t kvftl_tunable_value_text(const struct kvftl_tunable *t, uint64_t v, char *buf, size_t len);

/* What an operation's outcome was. */
enum kvftl_status {
    KVFTL_OK = 0,
    KVFTL_INVALID_FIELD, /* an argument outside its documented range */
    KVFTL_INVALID_KEY_SIZE, /* key length outside 1..KVFTL_KEY_MAX_BYTES */
    KVFTL_INVALID_VALUE_SIZE, /* value larger than KVFTL_VALUE_MAX_BYTES */
    KVFTL_KEY_DOES_NOT_EXIST, /* no such key (or ONLY_IF_EXISTS and absent) */
    KVFTL_KEY_EXISTS, /* ONLY_IF_ABSENT and present */
    KVFTL_CAPACITY_EXCEEDED, /* no room for the pair, even after GC */
    KVFTL_UNRECOVERED_ERROR, /* the stored record fails its checksum */
    KVFTL_ITERATOR_LIMIT, /* KVFTL_MAX_ITERATORS already open */
    KVFTL_INVALID_ITERATOR, /* handle not open */
    KVFTL_ITERATOR_END, /* the iterator has nothing left */
    KVFTL_INTERNAL_ERROR, /* the firmware could not do it (e.g. out of memory) */
};

/* kvftl_status_name() - the status's name ("KEY_DOES_NOT_EXIST"), for messages. */
const char *kvftl_status_name(enum kvftl_status s);

/* The result of every operation. */
struct kvftl_cpl {
    enum kvftl_status status;
    uint64_t done_ns; /* simulated completion time, >= the arrival time */
    uint32_t value_bytes; /* retrieve: the value's full size; store: bytes stored */
    uint32_t xfer_bytes; /* retrieve: bytes copied to the caller's buffer */
};

struct kvftl;

/*
 * kvftl_open() - create or mount a device.
 * With cfg->image_path naming an existing image, the image is mounted: from
 * its checkpoint after a clean close, otherwise by scanning the log (crash
 * recovery). Otherwise the device starts empty.
 * Returns the device, or NULL with a sentence in @err.
 */
struct kvftl *kvftl_open(const struct kvftl_config *cfg, char *err, size_t err_len);

/*
 * kvftl_config_image_index() - an image keeps the index design it was made
 * with: when @cfg is kv and @cfg->image_path names a kv image whose header
 * names a design this firmware has, set @cfg->index to it. A front-end calls
 * it when no index was asked for (the preset's); an asked-for design that
 * differs is refused by kvftl_open(). Returns whether @cfg->index was read.
 */
bool kvftl_config_image_index(struct kvftl_config *cfg);

/*
 * kvftl_mount_note() - when kvftl_open() mounted an existing image by
 * scanning its log rather than from a valid checkpoint, a sentence naming
 * the image, why, and what the scan found (keys, skipped or unreadable
 * records, damaged spare areas); NULL after a clean mount or for a new
 * device. The device prints it (stderr) so that no damage goes unsaid.
 */
const char *kvftl_mount_note(const struct kvftl *ftl);

/* kvftl_close() - orderly shutdown: flush the page buffer, write a checkpoint, free. */
void kvftl_close(struct kvftl *ftl);

/* The configuration in force (after defaults were derived). */
const struct kvftl_config *kvftl_get_config(const struct kvftl *ftl);

struct kvftl_store_req {
    const void *key;
    uint32_t key_bytes; /* 1..255 */
    const void *value;
    uint32_t value_bytes; /* 0..KVFTL_VALUE_MAX_BYTES */
    uint32_t options; /* KVFTL_STORE_* */
    uint32_t inline_bytes; /* bytes of the value that arrived inline in commands;
                            * the rest arrived by page-unit DMA. A value with any
                            * DMA part is placed as a DMA value. */
    uint32_t inline_xfer_commands; /* inline transfer commands that carried part of the
                                    * value after the head (BandSlim's trailing
                                    * commands): each costs fw_inline_fragment_ns of
                                    * firmware time, charged to this Store */
    uint64_t arrival_ns;
};

/*
 * kvftl_store() - store (insert or overwrite) a key-value pair.
 * Status: success; KEY_DOES_NOT_EXIST / KEY_EXISTS for the options;
 * INVALID_KEY_SIZE, INVALID_VALUE_SIZE; CAPACITY_EXCEEDED when live data would
 * not fit (nothing already stored is lost). The pair is durable on success
 * when plp is on (it sits in the protected page buffer or in NAND).
 */
void kvftl_store(struct kvftl *ftl, const struct kvftl_store_req *req, struct kvftl_cpl *cpl);

/*
 * kvftl_store_batch() - the same as kvftl_store() on @reqs[0..@n-1] in order
 * (statuses, simulated times, statistics and what is stored identical), into
 * @cpls[0..@n-1], but faster on the host: each Store's index and Bloom
 * filter loads start a window of Stores ahead instead of at its own start.
 * For a device that has several Stores queued.
 */
void kvftl_store_batch(struct kvftl *ftl, const struct kvftl_store_req *reqs,
                       struct kvftl_cpl *cpls, size_t n);

/*
 * kvftl_store_check() - the rules of a Store's declared sizes and options,
 * in the order they are checked: the options (a bit other than
 * KVFTL_STORE_*, or both: INVALID_FIELD), the key length (1..255:
 * INVALID_KEY_SIZE), the value size (at most KVFTL_VALUE_MAX_BYTES:
 * INVALID_VALUE_SIZE); KVFTL_OK when all hold. kvftl_store() applies them;
 * a command set calls this to refuse a Store before it moves the value.
 */
enum kvftl_status kvftl_store_check(uint32_t key_bytes, uint32_t value_bytes, uint32_t options);

/*
 * kvftl_retrieve() - copy up to @buf_bytes of the value, starting at
 * @offset, into @buf. cpl->value_bytes is the full size, cpl->xfer_bytes what
 * was copied (a short buffer gets a partial copy and success).
 * Status: KEY_DOES_NOT_EXIST; INVALID_KEY_SIZE; INVALID_FIELD if @offset is
 * beyond the value's size; UNRECOVERED_ERROR (nothing copied, xfer_bytes and
 * value_bytes 0) when bytes are to be copied and the whole record fails its
 * checksum (damaged in the image), counted in media_errors.
 */
void kvftl_retrieve(struct kvftl *ftl, const void *key, uint32_t key_bytes, void *buf,
                    uint32_t offset, uint32_t buf_bytes, uint64_t arrival_ns,
                    struct kvftl_cpl *cpl);

/* One retrieve of kvftl_retrieve_batch(): the arguments of kvftl_retrieve(). */
struct kvftl_retrieve_req {
    const void *key;
    uint32_t key_bytes;
    void *buf;
    uint32_t offset;
    uint32_t buf_bytes;
    uint64_t arrival_ns;
};

/*
 * kvftl_retrieve_batch() - the same as kvftl_retrieve() on @reqs[0..@n-1] in
 * order (statuses, copied bytes, simulated times and statistics identical),
 * into @cpls[0..@n-1], but faster on the host: the memory loads of several
 * lookups overlap (index slots first, then the blobs they name) instead of
 * each waiting on the last. For a device that has several Retrieves queued.
 */
void kvftl_retrieve_batch(struct kvftl *ftl, const struct kvftl_retrieve_req *reqs,
                          struct kvftl_cpl *cpls, size_t n);

/* kvftl_delete() - Status: KEY_DOES_NOT_EXIST, INVALID_KEY_SIZE. */
void kvftl_delete(struct kvftl *ftl, const void *key, uint32_t key_bytes, uint64_t arrival_ns,
                  struct kvftl_cpl *cpl);

/* kvftl_exist() - Status: success if present, KEY_DOES_NOT_EXIST otherwise. */
void kvftl_exist(struct kvftl *ftl, const void *key, uint32_t key_bytes, uint64_t arrival_ns,
                 struct kvftl_cpl *cpl);

/* kvftl_flush() - program the page buffer to NAND (durable without PLP too). */
void kvftl_flush(struct kvftl *ftl, uint64_t arrival_ns, struct kvftl_cpl *cpl);

/* kvftl_format() - erase every key; statistics are kept. */
void kvftl_format(struct kvftl *ftl, uint64_t arrival_ns, struct kvftl_cpl *cpl);

/*
 * Iterators (Samsung's iterator buckets: keys grouped by their first 4 bytes;
 * a key shorter than 4 bytes is zero-padded for grouping).
 * A key matches when (first4(key) & mask) == (prefix & mask), first4 read as
 * a big-endian 32-bit number (key byte 0 is the most significant byte).
 * Semantics: every key live for the whole iteration is returned exactly once;
 * a deleted key is never returned; a key stored after open may or may not be
 * returned (documented in docs/protocol.md as "may be seen").
 */
enum kvftl_iter_kind {
    KVFTL_ITER_KEYS = 0,
    KVFTL_ITER_KEY_VALUES = 1,
};

/*
 * kvftl_iter_open() - open a handle (0..KVFTL_MAX_ITERATORS-1) in *@handle.
 * Status: ITERATOR_LIMIT when 16 are open, INVALID_FIELD for a bad kind.
 */
void kvftl_iter_open(struct kvftl *ftl, uint32_t prefix, uint32_t mask, enum kvftl_iter_kind kind,
                     uint64_t arrival_ns, uint32_t *handle, struct kvftl_cpl *cpl);

/*
 * Called once per entry by kvftl_iter_next(). @value is NULL for
 * KVFTL_ITER_KEYS. Return 0 to take the entry, nonzero if it does not fit:
 * iteration stops and that entry is offered first by the next call.
 */
typedef int (*kvftl_iter_emit_fn)(void *opaque, const void *key, uint32_t key_bytes,
                                  const void *value, uint32_t value_bytes);

/*
 * kvftl_iter_next() - emit up to @max_entries entries.
 * cpl->value_bytes = entries emitted. Status: success (possibly 0 entries only
 * if the callback refused the first one), ITERATOR_END when nothing is left,
 * INVALID_ITERATOR for a handle not open, UNRECOVERED_ERROR with 0 entries
 * for a damaged blob (its key does not hash to its entry, or with values the
 * record fails its checksum): a call that meets one after emitting entries
 * stops before it with success; the next call reports it and moves past it.
 */
void kvftl_iter_next(struct kvftl *ftl, uint32_t handle, uint32_t max_entries,
                     kvftl_iter_emit_fn emit, void *opaque, uint64_t arrival_ns,
                     struct kvftl_cpl *cpl);

/*
 * kvftl_iter_step() - kvftl_iter_next() that walks at most @max_index_pages
 * index pages (0 counts as 1), the bounded unit of work a device runs per
 * main-loop slice. Status as kvftl_iter_next(), except that success with 0
 * entries also means "the page budget ran out before a match": call again
 * until ITERATOR_END (or until the callback refuses an entry).
 */
void kvftl_iter_step(struct kvftl *ftl, uint32_t handle, uint32_t max_entries,
                     uint32_t max_index_pages, kvftl_iter_emit_fn emit, void *opaque,
                     uint64_t arrival_ns, struct kvftl_cpl *cpl);

/* kvftl_iter_close() - Status: INVALID_ITERATOR for a handle not open. */
void kvftl_iter_close(struct kvftl *ftl, uint32_t handle, uint64_t arrival_ns,
                      struct kvftl_cpl *cpl);

/* Simulated latency percentiles of one operation kind, in ns. */
struct kvftl_latency {
    uint64_t count;
    uint64_t p50_ns, p99_ns, p999_ns, max_ns;
    uint64_t sum_ns; /* total of all samples: the mean is sum_ns / count */
};

enum kvftl_op {
    KVFTL_OP_STORE,
    KVFTL_OP_RETRIEVE,
    KVFTL_OP_DELETE,
    KVFTL_OP_EXIST,
    KVFTL_OP_ITERATE,
    KVFTL_OP__COUNT
};

struct kvftl_stats {
    /* host traffic as the firmware saw it */
    uint64_t host_bytes_in_inline; /* value bytes that arrived inline */
    uint64_t host_bytes_in_dma; /* value bytes that arrived by DMA */
    uint64_t host_bytes_out; /* value bytes returned by retrieve/iterate */
    uint64_t user_bytes_written; /* key + value bytes of successful stores */
    uint64_t stores, retrieves, deletes, exists, iterates;
    uint64_t media_errors; /* reads refused with Unrecovered Error (the record failed its
                              checksum); SMART's Media Errors; kept by kvftl_stats_reset() */

    /* NAND */
    uint64_t nand_pages_read;
    uint64_t nand_pages_programmed; /* all programs: data, index, GC, checkpoint */
    uint64_t nand_data_pages_programmed; /* value-log pages only */
    uint64_t nand_blocks_erased;

    /* value log and packing */
    uint64_t memcpy_bytes; /* bytes the controller copied to pack values */
    uint64_t padding_bytes; /* bytes left unused by placement */
    uint64_t dlt_backfills; /* inline values placed in a gap before a DMA value */
    uint64_t live_keys;
    uint64_t live_user_bytes; /* key + value bytes of live pairs */
    uint64_t live_nand_bytes; /* NAND bytes held by live blobs, incl. headers and padding */
    uint64_t index_nand_bytes; /* NAND bytes held by live index pages */
    uint64_t capacity_bytes; /* user capacity: live_nand_bytes + index_nand_bytes may not pass it */

    /* index */
    uint64_t index_cache_hits, index_cache_misses;
    uint64_t index_pages_evicted_dirty;
    uint64_t bloom_negatives; /* lookups answered by the Bloom filter */
    uint64_t index_host_bytes; /* host memory the index uses now */

    /* GC */
    uint64_t gc_runs;
    uint64_t gc_relocated_bytes;
    uint64_t gc_foreground_stalls;
    uint64_t gc_stall_ns;
    uint64_t free_stripes, total_stripes;

    /* derived */
    double write_amplification; /* NAND bytes programmed / user bytes written */
    double space_amplification; /* live_nand_bytes / live_user_bytes */

    /* simulated time */
    uint64_t sim_now_ns; /* latest completion time seen */
    /*
     * Firmware time (docs/kvftl.md, "Firmware time"): the controller CPU's
     * busy time, every command's and memcpy's (fw_cpu_ns), and the part
     * spent on the commands of each kind (fw_op_ns[op]; Flush, Format and
     * refused commands count in fw_cpu_ns only). An nvm Read counts as
     * RETRIEVE, a Write or Write Zeroes as STORE, a Deallocate as DELETE.
     */
    uint64_t fw_cpu_ns;
    uint64_t fw_op_ns[KVFTL_OP__COUNT];
    struct kvftl_latency latency[KVFTL_OP__COUNT];
};

/* kvftl_stats_get() - fill @st (all counters since open or the last reset). */
void kvftl_stats_get(struct kvftl *ftl, struct kvftl_stats *st);

/* kvftl_stats_reset() - zero the counters (not the live_* or free_* gauges). */
void kvftl_stats_reset(struct kvftl *ftl);

/*
 * Test hooks (power-loss harness).
 * kvftl_power_cut_after() arms a cut: after @nand_programs more page programs
 * complete, every later program is lost (a torn write) and every operation
 * fails with INTERNAL_ERROR until kvftl_power_cycle(). 0 disarms.
 * kvftl_power_cycle() - cut power now (if not cut already) and mount again
 * from what NAND holds, as after a crash: the page buffer survives iff plp is
 * on. Returns 0, or -1 with a sentence in @err.
 */
void kvftl_power_cut_after(struct kvftl *ftl, uint64_t nand_programs);
int kvftl_power_cycle(struct kvftl *ftl, char *err, size_t err_len);

/*
 * kvftl_check() - verify internal consistency (index vs value log, valid-byte
 * accounting, free-block counts). Returns 0, or -1 with a sentence in @err.
 */
int kvftl_check(struct kvftl *ftl, char *err, size_t err_len);

/*
 * The same check in bounded steps, for a device that must not hold its main
 * loop for the whole walk (the vendor admin command C4h). Nothing may change
 * the firmware between kvftl_check_begin() and the last step.
 * kvftl_check_step() examines index pages and blobs, at most @max_bytes
 * bytes of them (index page bytes + blob bytes), but always at least one
 * (so a step that starts with a blob larger than @max_bytes checks it).
 * Returns 1 if there is more to check, 0 when the check passed, -1 with a
 * sentence in @err when it failed (the same sentence kvftl_check() gives).
 * kvftl_check_progress() gives the index pages and blobs examined so far.
 */
struct kvftl_check_walk;
struct kvftl_check_walk *kvftl_check_begin(struct kvftl *ftl);
int kvftl_check_step(struct kvftl *ftl, struct kvftl_check_walk *w, uint64_t max_bytes, char *err,
                     size_t err_len);
void kvftl_check_progress(const struct kvftl_check_walk *w, uint64_t *index_pages, uint64_t *blobs,
                          uint64_t *bytes);
void kvftl_check_end(struct kvftl_check_walk *w);

#ifdef __cplusplus
}
#endif

#endif /* KVFTL_KVFTL_H */
