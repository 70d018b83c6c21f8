/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rocksdb engine: RocksDB through its C API (Debian's librocksdb-dev;
 * bookworm ships 7.8.3) in rocksdb.dir - in the comparison, a directory of
 * an ext4 file system on the block personality (-device
 * kvssd,command-set=nvm), as the characterization paper ran RocksDB on the
 * PM983 with block firmware ("What can Key-Value SSDs do for you?").
 *
 * Options: RocksDB's defaults except those kvbench sets (docs/kvbench.md):
 * WAL on and not synced per write (db_bench's default; rocksdb.sync=true
 * syncs each write), compression off (the values are random bytes and the
 * KV-SSD does not compress), direct I/O on (reads must reach the device as
 * the other engines' do; the block cache, rocksdb.block_cache_bytes, is the
 * one cache), a 64 MiB write buffer. The phase's closing sync flushes and
 * syncs the WAL (or, without a WAL, the memtable) and the file system, so
 * that the device's counters hold the phase's writes.
 */
/* syncfs: meson defines _GNU_SOURCE for the whole project */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "kvbench.h"

struct rocksdb_engine {
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *table;
    rocksdb_cache_t *cache;
    rocksdb_writeoptions_t *wo;
    rocksdb_readoptions_t *ro;
    struct kb_rocksdb_opts o;
    struct kvssd_dev *stats;
};

static const char *const nvm_device_ops[5] = {"write", "read", "deallocate", "op3", "op4"};

/* RocksDB's error strings are malloc'd: keep the sentence, free the string. */
static int failed(const char *what, char *e)
{
    kb_engine_set_error("rocksdb %s: %s", what, e);
    free(e);
    return -KVSSD_ERR_SYSTEM;
}

static void rdb_close(void *st)
{
    struct rocksdb_engine *e = st;
    if (!e) {
        return;
    }
    if (e->db) {
        rocksdb_close(e->db);
    }
    if (e->wo) {
        rocksdb_writeoptions_destroy(e->wo);
    }
    if (e->ro) {
        rocksdb_readoptions_destroy(e->ro);
    }
    if (e->opts) {
        rocksdb_options_destroy(e->opts);
    }
    if (e->table) {
        rocksdb_block_based_options_destroy(e->table);
    }
    if (e->cache) {
        rocksdb_cache_destroy(e->cache);
    }
    kvssd_close(e->stats);
    free(e);
}

static int rdb_open(const struct kb_config *c, void **stp, char *err, size_t errlen)
{
    struct rocksdb_engine *e = calloc(1, sizeof(*e));
    char *rerr = NULL, why[256];
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    e->o = c->rocksdb;
    if (mkdir(e->o.dir, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "cannot create rocksdb.dir %s: %s", e->o.dir, strerror(errno));
        free(e);
        return -1;
    }
    e->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(e->opts, 1);
    rocksdb_options_set_compression(e->opts, e->o.compression);
    rocksdb_options_set_write_buffer_size(e->opts, (size_t)e->o.write_buffer_bytes);
    rocksdb_options_set_use_direct_reads(e->opts, e->o.direct_io);
    rocksdb_options_set_use_direct_io_for_flush_and_compaction(e->opts, e->o.direct_io);
    e->table = rocksdb_block_based_options_create();
    if (e->o.block_cache_bytes) {
        e->cache = rocksdb_cache_create_lru((size_t)e->o.block_cache_bytes);
        rocksdb_block_based_options_set_block_cache(e->table, e->cache);
    } else {
        rocksdb_block_based_options_set_no_block_cache(e->table, 1);
    }
    rocksdb_options_set_block_based_table_factory(e->opts, e->table);
    if (!e->o.keep) {
        rocksdb_destroy_db(e->opts, e->o.dir, &rerr); /* a fresh database per run */
        if (rerr) {
            snprintf(err, errlen, "cannot clear the database in %s: %s", e->o.dir, rerr);
            free(rerr);
            rdb_close(e);
            return -1;
        }
    }
    e->db = rocksdb_open(e->opts, e->o.dir, &rerr);
    if (rerr) {
        snprintf(err, errlen, "cannot open RocksDB in %s: %s", e->o.dir, rerr);
        free(rerr);
        e->db = NULL;
        rdb_close(e);
        return -1;
    }
    e->wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(e->wo, e->o.sync);
    rocksdb_writeoptions_disable_WAL(e->wo, !e->o.wal);
    e->ro = rocksdb_readoptions_create();
    e->stats = kb_nvm_stats_open(c->nvm_ctrl, e->o.dir, why, sizeof(why));
    if (!e->stats) {
        fprintf(stderr, "kvbench: rocksdb: no device statistics: %s\n", why);
    }
    *stp = e;
    return 0;
}

static int rdb_put(void *st, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl,
                   uint32_t *commands)
{
    struct rocksdb_engine *e = st;
    char *rerr = NULL;
    (void)commands;
    rocksdb_put(e->db, e->wo, (const char *)k, kl, (const char *)v, vl, &rerr);
    return rerr ? failed("Put", rerr) : 0;
}

static int rdb_get(void *st, const uint8_t *k, uint32_t kl, uint8_t *buf, uint32_t cap,
                   uint32_t *vlen, uint32_t *commands)
{
    struct rocksdb_engine *e = st;
    char *rerr = NULL;
    (void)commands;
    rocksdb_pinnableslice_t *p = rocksdb_get_pinned(e->db, e->ro, (const char *)k, kl, &rerr);
    if (rerr) {
        return failed("Get", rerr);
    }
    if (!p) {
        return -KVSSD_ERR_KEY_NOT_FOUND;
    }
    size_t n;
    const char *v = rocksdb_pinnableslice_value(p, &n);
    *vlen = (uint32_t)n;
    memcpy(buf, v, n < cap ? n : cap);
    rocksdb_pinnableslice_destroy(p);
    return 0;
}

/*
 * RocksDB's Delete: a tombstone, success whether or not the key exists -
 * as the KV-SSD's Delete (10h) succeeds on a missing key unless EDNEK is
 * set (docs/protocol.md), so both engines count the same outcomes.
 */
static int rdb_del(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands)
{
    struct rocksdb_engine *e = st;
    char *rerr = NULL;
    (void)commands;
    rocksdb_delete(e->db, e->wo, (const char *)k, kl, &rerr);
    return rerr ? failed("Delete", rerr) : 0;
}

static int rdb_exist(void *st, const uint8_t *k, uint32_t kl, uint32_t *commands)
{
    struct rocksdb_engine *e = st;
    char *rerr = NULL;
    (void)commands;
    rocksdb_pinnableslice_t *p = rocksdb_get_pinned(e->db, e->ro, (const char *)k, kl, &rerr);
    if (rerr) {
        return failed("Get", rerr);
    }
    if (!p) {
        return -KVSSD_ERR_KEY_NOT_FOUND;
    }
    rocksdb_pinnableslice_destroy(p);
    return 0;
}

static int rdb_iterate(void *st, const uint8_t *prefix, uint32_t plen, uint32_t max,
                       uint64_t *bytes, uint32_t *commands)
{
    struct rocksdb_engine *e = st;
    char *rerr = NULL;
    uint32_t n = 0;
    (void)commands;
    rocksdb_iterator_t *it = rocksdb_create_iterator(e->db, e->ro);
    for (rocksdb_iter_seek(it, (const char *)prefix, plen); n < max && rocksdb_iter_valid(it);
         rocksdb_iter_next(it)) {
        size_t kl;
        const char *k = rocksdb_iter_key(it, &kl);
        if (kl < plen || memcmp(k, prefix, plen)) {
            break;
        }
        *bytes += kl;
        n++;
    }
    rocksdb_iter_get_error(it, &rerr);
    rocksdb_iter_destroy(it);
    return rerr ? failed("iterator", rerr) : 0;
}

static int rdb_sync(void *st)
{
    struct rocksdb_engine *e = st;
    char *rerr = NULL;
    if (e->o.wal) {
        rocksdb_flush_wal(e->db, 1, &rerr);
    } else {
        rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
        rocksdb_flushoptions_set_wait(fo, 1);
        rocksdb_flush(e->db, fo, &rerr);
        rocksdb_flushoptions_destroy(fo);
    }
    if (rerr) {
        return failed("sync", rerr);
    }
    int fd = open(e->o.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd < 0 || syncfs(fd) ? -KVSSD_ERR_SYSTEM : 0;
    if (rc) {
        kb_engine_set_error("syncfs of %s: %s", e->o.dir, strerror(errno));
    }
    if (fd >= 0) {
        close(fd);
    }
    return rc;
}

/* Bytes the database's files occupy (allocated blocks, not their sizes). */
static int64_t rdb_footprint(void *st)
{
    struct rocksdb_engine *e = st;
    DIR *d = opendir(e->o.dir);
    if (!d) {
        return -1;
    }
    int64_t sum = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct stat sb;
        if (de->d_name[0] != '.' && !fstatat(dirfd(d), de->d_name, &sb, 0) && S_ISREG(sb.st_mode)) {
            sum += (int64_t)sb.st_blocks * 512;
        }
    }
    closedir(d);
    return sum;
}

static struct kvssd_dev *rdb_stats_dev(void *st)
{
    return ((struct rocksdb_engine *)st)->stats;
}

const struct kb_engine_ops kb_engine_rocksdb = {
    .name = "rocksdb",
    .open = rdb_open,
    .close = rdb_close,
    .put = rdb_put,
    .get = rdb_get,
    .del = rdb_del,
    .exist = rdb_exist,
    .iterate = rdb_iterate,
    .sync = rdb_sync,
    .footprint = rdb_footprint,
    .stats_dev = rdb_stats_dev,
    .device_ops = nvm_device_ops,
};
