/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SNIA Key Value Storage API (OpenMPDK's kvs_api.h) over libkvssd:
 * devices, the one key space of a namespace, and the synchronous
 * key-value calls. Iterators are in iter.c, the _async calls in async.c.
 * docs/snia.md is the map from each call to the device commands it sends.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "snia_priv.h"

/* ---- results ---------------------------------------------------------------- */

kvs_result snia_result(int err)
{
    switch (err < 0 ? -err : err) {
    case KVSSD_OK:
        return KVS_SUCCESS;
    case KVSSD_ERR_INVALID_ARGUMENT:
        return KVS_ERR_PARAM_INVALID;
    case KVSSD_ERR_KEY_SIZE:
        return KVS_ERR_KEY_LENGTH_INVALID;
    case KVSSD_ERR_VALUE_SIZE:
        return KVS_ERR_VALUE_LENGTH_INVALID;
    case KVSSD_ERR_KEY_NOT_FOUND:
        return KVS_ERR_KEY_NOT_EXIST;
    case KVSSD_ERR_KEY_EXISTS:
        return KVS_ERR_VALUE_UPDATE_NOT_ALLOWED;
    case KVSSD_ERR_CAPACITY:
        return KVS_ERR_KS_CAPACITY;
    case KVSSD_ERR_ITERATOR_LIMIT:
        return KVS_ERR_ITERATOR_MAX;
    case KVSSD_ERR_INVALID_ITERATOR:
        return KVS_ERR_ITERATOR_NOT_EXIST;
    case KVSSD_ERR_NO_DEVICE:
        return KVS_ERR_DEV_NOT_EXIST;
    default:
        /* transport, tag-table, unrecovered-read and other device errors */
        return KVS_ERR_SYS_IO;
    }
}

static const char *const result_text[] = {
    [KVS_SUCCESS] = "KVS_SUCCESS: success",
    [KVS_ERR_BUFFER_SMALL] = "KVS_ERR_BUFFER_SMALL: the buffer is too small for the result",
    [KVS_ERR_DEV_CAPAPCITY] = "KVS_ERR_DEV_CAPAPCITY: the device cannot give a key space of that "
                              "size or a second key space (one per namespace)",
    [KVS_ERR_DEV_NOT_EXIST] = "KVS_ERR_DEV_NOT_EXIST: no KV namespace at that URI",
    [KVS_ERR_KS_CAPACITY] = "KVS_ERR_KS_CAPACITY: the device is full",
    [KVS_ERR_KS_EXIST] = "KVS_ERR_KS_EXIST: the key space already exists",
    [KVS_ERR_KS_INDEX] = "KVS_ERR_KS_INDEX: key space index out of range (the first is 1)",
    [KVS_ERR_KS_NAME] = "KVS_ERR_KS_NAME: key space name must be 1-255 bytes",
    [KVS_ERR_KS_NOT_EXIST] = "KVS_ERR_KS_NOT_EXIST: no key space of that name",
    [KVS_ERR_KS_NOT_OPEN] = "KVS_ERR_KS_NOT_OPEN: the key space handle is not open",
    [KVS_ERR_KS_OPEN] = "KVS_ERR_KS_OPEN: the key space is open",
    [KVS_ERR_ITERATOR_FILTER_INVALID] =
        "KVS_ERR_ITERATOR_FILTER_INVALID: the bit pattern has bits outside the bitmask",
    [KVS_ERR_ITERATOR_MAX] = "KVS_ERR_ITERATOR_MAX: 16 iterators are open; delete one first",
    [KVS_ERR_ITERATOR_NOT_EXIST] = "KVS_ERR_ITERATOR_NOT_EXIST: the iterator handle is not open",
    [KVS_ERR_ITERATOR_OPEN] = "KVS_ERR_ITERATOR_OPEN: the iterator is already open",
    [KVS_ERR_KEY_LENGTH_INVALID] =
        "KVS_ERR_KEY_LENGTH_INVALID: key length outside 4..kvs_get_max_key_length()",
    [KVS_ERR_KEY_NOT_EXIST] = "KVS_ERR_KEY_NOT_EXIST: the key does not exist",
    [KVS_ERR_OPTION_INVALID] = "KVS_ERR_OPTION_INVALID: the option is not supported by this device",
    [KVS_ERR_PARAM_INVALID] = "KVS_ERR_PARAM_INVALID: a NULL or malformed parameter",
    [KVS_ERR_SYS_IO] = "KVS_ERR_SYS_IO: the device did not complete the command",
    [KVS_ERR_VALUE_LENGTH_INVALID] =
        "KVS_ERR_VALUE_LENGTH_INVALID: value length outside 0..kvs_get_max_value_length()",
    [KVS_ERR_VALUE_OFFSET_INVALID] =
        "KVS_ERR_VALUE_OFFSET_INVALID: the offset is past the value's end (or non-zero in a store)",
    [KVS_ERR_VALUE_OFFSET_MISALIGNED] =
        "KVS_ERR_VALUE_OFFSET_MISALIGNED: the offset is not a multiple of KVS_ALIGNMENT_UNIT",
    [KVS_ERR_VALUE_UPDATE_NOT_ALLOWED] =
        "KVS_ERR_VALUE_UPDATE_NOT_ALLOWED: the key exists and the store may not overwrite it",
    [KVS_ERR_DEV_NOT_OPENED] = "KVS_ERR_DEV_NOT_OPENED: the device handle is not open",
};

const char *kvs_errstr(int32_t result)
{
    if (result < 0 || (size_t)result >= sizeof(result_text) / sizeof(result_text[0]) ||
        !result_text[result]) {
        return "unknown kvs_result";
    }
    return result_text[result];
}

/* ---- memory ------------------------------------------------------------------- */

static atomic_long live_buffers;

void *_kvs_malloc(size_t size_bytes, size_t alignment, const char *file)
{
    void *p = NULL;
    (void)file;
    if (alignment & (alignment - 1)) {
        return NULL;
    }
    if (alignment < sizeof(void *)) {
        alignment = sizeof(void *);
    }
    if (posix_memalign(&p, alignment, size_bytes ? size_bytes : 1)) {
        return NULL;
    }
    atomic_fetch_add(&live_buffers, 1);
    return p;
}

void *_kvs_zalloc(size_t size_bytes, size_t alignment, const char *file)
{
    void *p = _kvs_malloc(size_bytes, alignment, file);
    if (p) {
        memset(p, 0, size_bytes);
    }
    return p;
}

void _kvs_free(void *buf, const char *file)
{
    (void)file;
    if (buf) {
        atomic_fetch_sub(&live_buffers, 1);
        free(buf);
    }
}

void _kvs_report_memstat(void)
{
    printf("kvs_malloc/kvs_zalloc buffers not freed: %ld\n", atomic_load(&live_buffers));
}

/* ---- handle registry ----------------------------------------------------------- */

/*
 * Every handle this process opened, so that a stale or foreign pointer
 * gets KVS_ERR_DEV_NOT_OPENED / KVS_ERR_KS_NOT_OPEN instead of being
 * dereferenced. A process opens few devices: a small fixed table.
 */
#define SNIA_MAX_DEVICES 64

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct _kvs_device_handle *devices[SNIA_MAX_DEVICES];

static bool dev_registered(const struct _kvs_device_handle *d)
{
    for (int i = 0; d && i < SNIA_MAX_DEVICES; i++) {
        if (devices[i] == d) {
            return true;
        }
    }
    return false;
}

static kvs_result check_dev(kvs_device_handle d)
{
    if (!d) {
        return KVS_ERR_PARAM_INVALID;
    }
    pthread_mutex_lock(&registry_lock);
    bool ok = dev_registered(d);
    pthread_mutex_unlock(&registry_lock);
    return ok ? KVS_SUCCESS : KVS_ERR_DEV_NOT_OPENED;
}

kvs_result snia_check_ks(kvs_key_space_handle ks)
{
    if (!ks) {
        return KVS_ERR_PARAM_INVALID;
    }
    pthread_mutex_lock(&registry_lock);
    bool ok = false;
    for (int i = 0; i < SNIA_MAX_DEVICES && !ok; i++) {
        ok = devices[i] && devices[i]->ks == ks;
    }
    pthread_mutex_unlock(&registry_lock);
    return ok ? KVS_SUCCESS : KVS_ERR_KS_NOT_OPEN;
}

/* ---- devices ---------------------------------------------------------------------- */

static kvs_result queue_depth_from_env(unsigned *depth)
{
    const char *s = getenv(SNIA_QUEUE_DEPTH_ENV);
    char *end;
    *depth = SNIA_QUEUE_DEPTH_DEFAULT;
    if (!s || !*s) {
        return KVS_SUCCESS;
    }
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < 1 || v > KVSSD_QUEUE_DEPTH_MAX) {
        fprintf(stderr, "kvapi: %s=%s is not a queue depth; it must be 1..%u\n",
                SNIA_QUEUE_DEPTH_ENV, s, KVSSD_QUEUE_DEPTH_MAX);
        return KVS_ERR_OPTION_INVALID;
    }
    *depth = (unsigned)v;
    return KVS_SUCCESS;
}

kvs_result kvs_open_device(char *URI, kvs_device_handle *dev_hd)
{
    struct _kvs_device_handle *d;
    unsigned depth;

    if (!URI || !dev_hd) {
        return KVS_ERR_PARAM_INVALID;
    }
    size_t len = strnlen(URI, sizeof(d->uri));
    if (len == 0 || len >= sizeof(d->uri)) {
        return KVS_ERR_PARAM_INVALID;
    }
    kvs_result r = queue_depth_from_env(&depth);
    if (r) {
        return r;
    }
    pthread_mutex_lock(&registry_lock);
    int slot = -1;
    for (int i = 0; i < SNIA_MAX_DEVICES; i++) {
        if (devices[i] && !strcmp(devices[i]->uri, URI)) {
            pthread_mutex_unlock(&registry_lock);
            return KVS_ERR_SYS_IO; /* as OpenMPDK: one handle per device and process */
        }
        if (!devices[i] && slot < 0) {
            slot = i;
        }
    }
    if (slot < 0) {
        pthread_mutex_unlock(&registry_lock);
        return KVS_ERR_SYS_IO;
    }
    d = calloc(1, sizeof(*d));
    if (!d) {
        pthread_mutex_unlock(&registry_lock);
        return KVS_ERR_SYS_IO;
    }
    int rc = kvssd_open(URI, &d->dev);
    if (rc) {
        pthread_mutex_unlock(&registry_lock);
        free(d);
        /* no such file, or a file that is not an NVMe namespace (NVME_IOCTL_ID refused) */
        if (rc == -KVSSD_ERR_NO_DEVICE ||
            (rc == -KVSSD_ERR_SYSTEM && (errno == ENOENT || errno == ENOTTY || errno == ENODEV))) {
            return KVS_ERR_DEV_NOT_EXIST;
        }
        return KVS_ERR_SYS_IO;
    }
    const struct kvssd_dev_info *info = kvssd_dev_info(d->dev);
    memcpy(d->uri, URI, len + 1);
    d->nsid = info->nsid;
    d->max_key = info->max_key_bytes < KVS_MAX_KEY_LENGTH ? info->max_key_bytes
                                                          : KVS_MAX_KEY_LENGTH;
    d->max_value = info->max_value_bytes < KVSSD_VALUE_MAX ? info->max_value_bytes
                                                           : KVSSD_VALUE_MAX;
    d->queue_depth = depth;
    pthread_mutex_init(&d->lock, NULL);
    devices[slot] = d;
    pthread_mutex_unlock(&registry_lock);
    *dev_hd = d;
    return KVS_SUCCESS;
}

static void ks_free(struct _kvs_key_space_handle *ks)
{
    snia_iter_close_all(ks);
    pthread_mutex_destroy(&ks->iter_lock);
    free(ks);
}

kvs_result kvs_close_device(kvs_device_handle dev_hd)
{
    kvs_result r = check_dev(dev_hd);
    if (r) {
        return r;
    }
    r = snia_async_drain(dev_hd);
    if (r) {
        return r;
    }
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < SNIA_MAX_DEVICES; i++) {
        if (devices[i] == dev_hd) {
            devices[i] = NULL;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    snia_async_destroy(dev_hd);
    if (dev_hd->ks) {
        ks_free(dev_hd->ks);
    }
    kvssd_close(dev_hd->dev);
    pthread_mutex_destroy(&dev_hd->lock);
    free(dev_hd);
    return KVS_SUCCESS;
}

/* Identify Namespace (KV), read now: size and utilization change as pairs come and go. */
static kvs_result identify_now(struct _kvs_device_handle *d, struct kvssd_dev_info *info)
{
    struct kvssd_cmd cmd;
    struct kvssd_result res;
    void *page = NULL;

    if (posix_memalign(&page, 4096, KVSSD_IDENTIFY_BYTES)) {
        return KVS_ERR_SYS_IO;
    }
    memset(page, 0, KVSSD_IDENTIFY_BYTES);
    memset(info, 0, sizeof(*info));
    kvssd_cmd_identify(&cmd, d->nsid, KVSSD_CNS_CSI_NS, KVSSD_CSI_KV, page);
    int rc = kvssd_submit(d->dev, &cmd, &res);
    if (!rc) {
        rc = kvssd_id_ns_kv_decode(page, info);
    }
    free(page);
    return rc ? KVS_ERR_SYS_IO : KVS_SUCCESS;
}

kvs_result kvs_get_device_info(kvs_device_handle dev_hd, kvs_device *dev_info)
{
    struct kvssd_dev_info info;
    kvs_result r = check_dev(dev_hd);
    if (r || !dev_info) {
        return r ? r : KVS_ERR_PARAM_INVALID;
    }
    if ((r = identify_now(dev_hd, &info))) {
        return r;
    }
    dev_info->capacity = info.nsze_bytes;
    dev_info->unalloc_capacity = 0; /* the one key space is the whole namespace */
    dev_info->max_value_len = dev_hd->max_value;
    dev_info->max_key_len = dev_hd->max_key;
    dev_info->optimal_value_len = info.optimal_value_granularity_bytes;
    dev_info->optimal_value_granularity = info.optimal_value_granularity_bytes;
    dev_info->extended_info = NULL;
    return KVS_SUCCESS;
}

kvs_result kvs_get_device_capacity(kvs_device_handle dev_hd, uint64_t *dev_capacity)
{
    struct kvssd_dev_info info;
    kvs_result r = check_dev(dev_hd);
    if (r || !dev_capacity) {
        return r ? r : KVS_ERR_PARAM_INVALID;
    }
    if (!(r = identify_now(dev_hd, &info))) {
        *dev_capacity = info.nsze_bytes;
    }
    return r;
}

kvs_result kvs_get_device_utilization(kvs_device_handle dev_hd, uint32_t *dev_utilization)
{
    struct kvssd_dev_info info;
    kvs_result r = check_dev(dev_hd);
    if (r || !dev_utilization) {
        return r ? r : KVS_ERR_PARAM_INVALID;
    }
    if (!(r = identify_now(dev_hd, &info))) {
        uint64_t use = info.nuse_bytes < info.nsze_bytes ? info.nuse_bytes : info.nsze_bytes;
        /* nsze < 2^44 on any device we emulate, so use * 10000 cannot overflow */
        *dev_utilization = info.nsze_bytes ? (uint32_t)(use * 10000u / info.nsze_bytes) : 0;
    }
    return r;
}

static kvs_result get_u32(kvs_device_handle dev_hd, uint32_t *out, uint32_t v)
{
    kvs_result r = check_dev(dev_hd);
    if (r || !out) {
        return r ? r : KVS_ERR_PARAM_INVALID;
    }
    *out = v;
    return KVS_SUCCESS;
}

kvs_result kvs_get_min_key_length(kvs_device_handle dev_hd, uint32_t *min_key_length)
{
    return get_u32(dev_hd, min_key_length, KVS_MIN_KEY_LENGTH);
}

kvs_result kvs_get_max_key_length(kvs_device_handle dev_hd, uint32_t *max_key_length)
{
    kvs_result r = check_dev(dev_hd);
    return r ? r : get_u32(dev_hd, max_key_length, dev_hd->max_key);
}

kvs_result kvs_get_min_value_length(kvs_device_handle dev_hd, uint32_t *min_value_length)
{
    return get_u32(dev_hd, min_value_length, KVS_MIN_VALUE_LENGTH);
}

kvs_result kvs_get_max_value_length(kvs_device_handle dev_hd, uint32_t *max_value_length)
{
    kvs_result r = check_dev(dev_hd);
    return r ? r : get_u32(dev_hd, max_value_length, dev_hd->max_value);
}

kvs_result kvs_get_optimal_value_length(kvs_device_handle dev_hd, uint32_t *opt_value_length)
{
    kvs_result r = check_dev(dev_hd);
    return r ? r
             : get_u32(dev_hd, opt_value_length,
                       kvssd_dev_info(dev_hd->dev)->optimal_value_granularity_bytes);
}

/* ---- the namespace's one key space -------------------------------------------------- */

/* A name of 1..MAX_KEYSPACE_NAME_LEN bytes, NUL-terminated within that bound. */
static kvs_result check_name(const char *name, uint32_t declared_len, bool check_declared)
{
    if (!name) {
        return KVS_ERR_PARAM_INVALID;
    }
    size_t len = strnlen(name, MAX_KEYSPACE_NAME_LEN + 1);
    if (len == 0 || len > MAX_KEYSPACE_NAME_LEN || (check_declared && len != declared_len)) {
        return KVS_ERR_KS_NAME;
    }
    return KVS_SUCCESS;
}

kvs_result kvs_create_key_space(kvs_device_handle dev_hd, kvs_key_space_name *key_space_name,
                                uint64_t size, kvs_option_key_space opt)
{
    kvs_result r = check_dev(dev_hd);
    if (r) {
        return r;
    }
    if (!key_space_name) {
        return KVS_ERR_PARAM_INVALID;
    }
    if ((r = check_name(key_space_name->name, key_space_name->name_len, true))) {
        return r;
    }
    if (opt.ordering != KVS_KEY_ORDER_NONE) {
        return KVS_ERR_OPTION_INVALID; /* the firmware keeps keys in hash order */
    }
    if (size != 0) {
        return KVS_ERR_DEV_CAPAPCITY; /* no per-key-space quota: the namespace is one */
    }
    pthread_mutex_lock(&dev_hd->lock);
    if (!dev_hd->ks_name[0]) {
        memcpy(dev_hd->ks_name, key_space_name->name, key_space_name->name_len);
        dev_hd->ks_name[key_space_name->name_len] = '\0';
        r = KVS_SUCCESS;
    } else if (!strcmp(dev_hd->ks_name, key_space_name->name)) {
        r = KVS_ERR_KS_EXIST;
    } else {
        r = KVS_ERR_DEV_CAPAPCITY; /* a second key space needs a second namespace */
    }
    pthread_mutex_unlock(&dev_hd->lock);
    return r;
}

kvs_result kvs_delete_key_space(kvs_device_handle dev_hd, kvs_key_space_name *key_space_name)
{
    kvs_result r = check_dev(dev_hd);
    if (r) {
        return r;
    }
    if (!key_space_name) {
        return KVS_ERR_PARAM_INVALID;
    }
    if ((r = check_name(key_space_name->name, 0, false))) {
        return r;
    }
    pthread_mutex_lock(&dev_hd->lock);
    if (dev_hd->ks_name[0] && strcmp(dev_hd->ks_name, key_space_name->name)) {
        r = KVS_ERR_KS_NOT_EXIST;
    } else if (dev_hd->ks) {
        r = KVS_ERR_KS_OPEN; /* close it first: its iterators and async calls use it */
    } else {
        /* every pair of the namespace goes: Format NVM (admin 80h) */
        r = kvssd_format(dev_hd->dev, NULL) ? KVS_ERR_SYS_IO : KVS_SUCCESS;
        if (!r) {
            dev_hd->ks_name[0] = '\0';
        }
    }
    pthread_mutex_unlock(&dev_hd->lock);
    return r;
}

kvs_result kvs_list_key_spaces(kvs_device_handle dev_hd, uint32_t index, uint32_t buffer_size,
                               kvs_key_space_name *names, uint32_t *ks_cnt)
{
    kvs_result r = check_dev(dev_hd);
    if (r) {
        return r;
    }
    if (!names || !ks_cnt) {
        return KVS_ERR_PARAM_INVALID;
    }
    *ks_cnt = 0;
    pthread_mutex_lock(&dev_hd->lock);
    uint32_t count = dev_hd->ks_name[0] ? 1 : 0;
    if (index < 1 || (index > count && count != 0) || (count == 0 && index > 1)) {
        r = KVS_ERR_KS_INDEX; /* OpenMPDK numbers key spaces from 1 */
    } else if (count && buffer_size < sizeof(kvs_key_space_name)) {
        r = KVS_ERR_BUFFER_SMALL;
    } else if (count) {
        size_t len = strlen(dev_hd->ks_name);
        if (!names[0].name) {
            r = KVS_ERR_PARAM_INVALID;
        } else if (names[0].name_len < len) {
            /* as OpenMPDK: name_len is the longest name the buffer holds, without its NUL */
            r = KVS_ERR_BUFFER_SMALL;
        } else {
            memcpy(names[0].name, dev_hd->ks_name, len + 1);
            names[0].name_len = (uint32_t)len;
            *ks_cnt = 1;
        }
    }
    pthread_mutex_unlock(&dev_hd->lock);
    return r;
}

kvs_result kvs_open_key_space(kvs_device_handle dev_hd, char *name, kvs_key_space_handle *ks_hd)
{
    kvs_result r = check_dev(dev_hd);
    if (r) {
        return r;
    }
    if (!ks_hd) {
        return KVS_ERR_PARAM_INVALID;
    }
    if ((r = check_name(name, 0, false))) {
        return r;
    }
    pthread_mutex_lock(&dev_hd->lock);
    if (dev_hd->ks_name[0] && strcmp(dev_hd->ks_name, name)) {
        r = KVS_ERR_KS_NOT_EXIST;
    } else if (dev_hd->ks) {
        r = KVS_ERR_KS_OPEN;
    } else {
        struct _kvs_key_space_handle *ks = calloc(1, sizeof(*ks));
        if (!ks) {
            r = KVS_ERR_SYS_IO;
        } else {
            /*
             * The pairs outlive the process but the name is not stored on the
             * device: a handle that has not named the key space yet adopts
             * the name it is opened by (a program reopening its key space).
             */
            snprintf(dev_hd->ks_name, sizeof(dev_hd->ks_name), "%s", name);
            snprintf(ks->name, sizeof(ks->name), "%s", name);
            ks->dev = dev_hd;
            pthread_mutex_init(&ks->iter_lock, NULL);
            pthread_mutex_lock(&registry_lock);
            dev_hd->ks = ks;
            pthread_mutex_unlock(&registry_lock);
            *ks_hd = ks;
        }
    }
    pthread_mutex_unlock(&dev_hd->lock);
    return r;
}

kvs_result kvs_close_key_space(kvs_key_space_handle ks_hd)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r) {
        return r;
    }
    struct _kvs_device_handle *d = ks_hd->dev;
    if ((r = snia_async_drain(d))) {
        return r;
    }
    pthread_mutex_lock(&d->lock);
    pthread_mutex_lock(&registry_lock);
    d->ks = NULL;
    pthread_mutex_unlock(&registry_lock);
    pthread_mutex_unlock(&d->lock);
    ks_free(ks_hd);
    return KVS_SUCCESS;
}

kvs_result kvs_get_key_space_info(kvs_key_space_handle ks_hd, kvs_key_space *ks)
{
    struct kvssd_dev_info info;
    struct kvssd_stats_log *log = NULL;
    kvs_result r = snia_check_ks(ks_hd);
    if (r) {
        return r;
    }
    if (!ks) {
        return KVS_ERR_PARAM_INVALID;
    }
    size_t len = strlen(ks_hd->name);
    /* as OpenMPDK: name_len is the longest name the buffer holds, without its NUL */
    if (ks->name && (!ks->name->name || ks->name->name_len < len)) {
        return ks->name->name ? KVS_ERR_BUFFER_SMALL : KVS_ERR_PARAM_INVALID;
    }
    if ((r = identify_now(ks_hd->dev, &info))) {
        return r;
    }
    /* the pair count is the firmware's live_keys (statistics log page C0h) */
    if (posix_memalign((void **)&log, 4096, sizeof(*log))) {
        return KVS_ERR_SYS_IO;
    }
    memset(log, 0, sizeof(*log));
    int rc = kvssd_get_stats(ks_hd->dev->dev, log, NULL);
    uint64_t count = log->live_keys;
    free(log);
    if (rc) {
        return KVS_ERR_SYS_IO;
    }
    ks->opened = true;
    ks->capacity = info.nsze_bytes;
    ks->free_size = info.nuse_bytes < info.nsze_bytes ? info.nsze_bytes - info.nuse_bytes : 0;
    ks->count = count;
    if (ks->name) {
        memcpy(ks->name->name, ks_hd->name, len + 1);
        ks->name->name_len = (uint32_t)len;
    }
    return KVS_SUCCESS;
}

/* ---- argument checks ---------------------------------------------------------------- */

kvs_result snia_check_key(const struct _kvs_device_handle *d, const kvs_key *key)
{
    if (!key) {
        return KVS_ERR_PARAM_INVALID;
    }
    if (key->length < KVS_MIN_KEY_LENGTH || key->length > d->max_key) {
        return KVS_ERR_KEY_LENGTH_INVALID;
    }
    return key->key ? KVS_SUCCESS : KVS_ERR_PARAM_INVALID;
}

kvs_result snia_store_options(const struct _kvs_device_handle *d, const kvs_value *value,
                              const kvs_option_store *opt, uint32_t *options)
{
    if (!value || (value->length && !value->value)) {
        return KVS_ERR_PARAM_INVALID;
    }
    if (value->length > d->max_value) {
        return KVS_ERR_VALUE_LENGTH_INVALID;
    }
    if (value->offset % KVS_ALIGNMENT_UNIT) {
        return KVS_ERR_VALUE_OFFSET_MISALIGNED;
    }
    if (value->offset) {
        return KVS_ERR_VALUE_OFFSET_INVALID; /* the device stores whole values */
    }
    *options = 0;
    if (!opt) {
        return KVS_SUCCESS;
    }
    if (opt->assoc && opt->assoc->assoc_type != KVS_NOASSOCIATION) {
        return KVS_ERR_OPTION_INVALID; /* no streams on this device */
    }
    switch (opt->st_type) {
    case KVS_STORE_POST:
        return KVS_SUCCESS;
    case KVS_STORE_UPDATE_ONLY:
        *options = KVSSD_STORE_OPT_ONLY_IF_EXISTS;
        return KVS_SUCCESS;
    case KVS_STORE_NOOVERWRITE:
        *options = KVSSD_STORE_OPT_ONLY_IF_ABSENT;
        return KVS_SUCCESS;
    default: /* KVS_STORE_APPEND: the KV command set has no append; anything else is garbage */
        return KVS_ERR_OPTION_INVALID;
    }
}

kvs_result snia_retrieve_check(const kvs_value *value, const kvs_option_retrieve *opt)
{
    if (!value || (value->length && !value->value)) {
        return KVS_ERR_PARAM_INVALID;
    }
    if (value->offset % KVS_ALIGNMENT_UNIT) {
        return KVS_ERR_VALUE_OFFSET_MISALIGNED;
    }
    if (opt && opt->kvs_retrieve_delete) {
        return KVS_ERR_OPTION_INVALID; /* no atomic retrieve-and-delete command */
    }
    return KVS_SUCCESS;
}

kvs_result snia_exist_check(const struct _kvs_device_handle *d, uint32_t key_cnt,
                            const kvs_key *keys, const kvs_exist_list *list)
{
    if (!keys || !list || key_cnt == 0 || !list->result_buffer) {
        return KVS_ERR_PARAM_INVALID;
    }
    for (uint32_t i = 0; i < key_cnt; i++) {
        kvs_result r = snia_check_key(d, &keys[i]);
        if (r) {
            return r;
        }
    }
    if (list->length < (key_cnt + 7) / 8) {
        return KVS_ERR_BUFFER_SMALL;
    }
    return KVS_SUCCESS;
}

/* The filter as Iter Open's CDW10 (prefix) and CDW11 (mask): key byte 0 in bits 31:24. */
kvs_result snia_filter(const kvs_key_group_filter *f, uint32_t *word, uint32_t *mask)
{
    if (!f) {
        return KVS_ERR_PARAM_INVALID;
    }
    *word = (uint32_t)f->bit_pattern[0] << 24 | (uint32_t)f->bit_pattern[1] << 16 |
            (uint32_t)f->bit_pattern[2] << 8 | f->bit_pattern[3];
    *mask = (uint32_t)f->bitmask[0] << 24 | (uint32_t)f->bitmask[1] << 16 |
            (uint32_t)f->bitmask[2] << 8 | f->bitmask[3];
    /* (bitmask & key) == bit_pattern can never hold: a mistake, not an empty group */
    return (*word & ~*mask) ? KVS_ERR_ITERATOR_FILTER_INVALID : KVS_SUCCESS;
}

/* ---- key-value pairs, synchronous ------------------------------------------------ */

kvs_result kvs_store_kvp(kvs_key_space_handle ks_hd, kvs_key *key, kvs_value *value,
                         kvs_option_store *opt)
{
    uint32_t options;
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_check_key(ks_hd->dev, key)) ||
        (r = snia_store_options(ks_hd->dev, value, opt, &options))) {
        return r;
    }
    return snia_result(kvssd_store(ks_hd->dev->dev, key->key, key->length, value->value,
                                   value->length, options, NULL));
}

kvs_result snia_retrieve_finish(kvs_value *value, const uint8_t *buf, uint32_t actual)
{
    value->actual_value_size = actual;
    if (value->offset > actual) {
        value->length = 0;
        return KVS_ERR_VALUE_OFFSET_INVALID;
    }
    uint32_t rest = actual - value->offset;
    uint32_t n = rest < value->length ? rest : value->length;
    if (buf && n) {
        memcpy(value->value, buf + value->offset, n);
    }
    value->length = n;
    return rest > n ? KVS_ERR_BUFFER_SMALL : KVS_SUCCESS;
}

kvs_result snia_retrieve(struct _kvs_device_handle *d, const kvs_key *key, kvs_value *value)
{
    uint32_t actual = 0;
    if (value->offset == 0) {
        int rc = kvssd_retrieve(d->dev, key->key, key->length, value->value, value->length, &actual,
                                NULL);
        if (rc) {
            return snia_result(rc);
        }
        return snia_retrieve_finish(value, NULL, actual);
    }
    /* Retrieve has no offset field: read the head of the value, hand out its tail */
    uint64_t want = (uint64_t)value->offset + value->length;
    uint32_t n = want < d->max_value ? (uint32_t)want : d->max_value;
    uint8_t *bounce = malloc(n ? n : 1);
    if (!bounce) {
        return KVS_ERR_SYS_IO;
    }
    int rc = kvssd_retrieve(d->dev, key->key, key->length, bounce, n, &actual, NULL);
    kvs_result r = rc ? snia_result(rc) : snia_retrieve_finish(value, bounce, actual);
    free(bounce);
    return r;
}

kvs_result kvs_retrieve_kvp(kvs_key_space_handle ks_hd, kvs_key *key, kvs_option_retrieve *opt,
                            kvs_value *value)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_check_key(ks_hd->dev, key)) || (r = snia_retrieve_check(value, opt))) {
        return r;
    }
    return snia_retrieve(ks_hd->dev, key, value);
}

kvs_result kvs_get_kvp_info(kvs_key_space_handle ks_hd, kvs_key *key, kvs_kvp_info *info)
{
    uint32_t actual = 0;
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_check_key(ks_hd->dev, key))) {
        return r;
    }
    if (!info || !info->key) {
        return KVS_ERR_PARAM_INVALID;
    }
    /* a Retrieve of 0 bytes answers with the value's size in DW0 */
    int rc = kvssd_retrieve(ks_hd->dev->dev, key->key, key->length, NULL, 0, &actual, NULL);
    if (rc) {
        return snia_result(rc);
    }
    memcpy(info->key, key->key, key->length);
    info->key_len = key->length;
    info->value_len = actual;
    return KVS_SUCCESS;
}

kvs_result snia_delete(struct _kvs_device_handle *d, const kvs_key *key, bool delete_error)
{
    /*
     * The device deletes a missing key successfully (Error on Deletion of
     * Non-Existing Key is off by default), so kvs_delete_error asks Exist
     * first; a concurrent delete between the two is not detected.
     */
    if (delete_error) {
        int rc = kvssd_exist(d->dev, key->key, key->length, NULL);
        if (rc) {
            return snia_result(rc);
        }
    }
    int rc = kvssd_delete(d->dev, key->key, key->length, NULL);
    if (rc == -KVSSD_ERR_KEY_NOT_FOUND && !delete_error) {
        rc = 0; /* a device with the feature on */
    }
    return snia_result(rc);
}

kvs_result kvs_delete_kvp(kvs_key_space_handle ks_hd, kvs_key *key, kvs_option_delete *opt)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_check_key(ks_hd->dev, key))) {
        return r;
    }
    return snia_delete(ks_hd->dev, key, opt && opt->kvs_delete_error);
}

kvs_result snia_exist(struct _kvs_device_handle *d, uint32_t key_cnt, const kvs_key *keys,
                      kvs_exist_list *list)
{
    uint32_t bytes = (key_cnt + 7) / 8;
    memset(list->result_buffer, 0, bytes);
    for (uint32_t i = 0; i < key_cnt; i++) {
        int rc = kvssd_exist(d->dev, keys[i].key, keys[i].length, NULL);
        if (rc == 0) {
            list->result_buffer[i / 8] |= (uint8_t)(1u << (i % 8));
        } else if (rc != -KVSSD_ERR_KEY_NOT_FOUND) {
            return snia_result(rc);
        }
    }
    list->length = bytes;
    return KVS_SUCCESS;
}

kvs_result kvs_exist_kv_pairs(kvs_key_space_handle ks_hd, uint32_t key_cnt, kvs_key *keys,
                              kvs_exist_list *list)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_exist_check(ks_hd->dev, key_cnt, keys, list))) {
        return r;
    }
    list->keys = keys;
    list->num_keys = key_cnt;
    return snia_exist(ks_hd->dev, key_cnt, keys, list);
}

kvs_result kvs_delete_key_group(kvs_key_space_handle ks_hd, kvs_key_group_filter *grp_fltr)
{
    uint32_t word, mask;
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_filter(grp_fltr, &word, &mask))) {
        return r;
    }
    return snia_delete_group(ks_hd->dev, grp_fltr);
}
