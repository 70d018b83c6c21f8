/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SNIA KV API library's internals shared by kvs.c, iter.c and async.c. */
#ifndef SNIA_PRIV_H
#define SNIA_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <kvs_api.h>
#include <kvssd/libkvssd.h>

/*
 * Iter Read buffers: 32 KiB for keys-only iterators (a keys-only entry is at
 * most 2 + 255 + 3 bytes); for key+value iterators the largest buffer
 * libkvssd passes through its huge-page bounce (docs/snia.md: a pair whose
 * entry exceeds it cannot be iterated with its value). Host memory per key
 * space: at most KVS_MAX_ITERATE_HANDLE * (2 MiB) plus 16 small structs.
 */
#define SNIA_ITER_KEYS_BUF (32u * 1024)
#define SNIA_ITER_VALUES_BUF KVSSD_VALUE_MAX

/* async queue depth: $KVSSD_QUEUE_DEPTH (OpenMPDK's variable), 1..256 */
#define SNIA_QUEUE_DEPTH_ENV "KVSSD_QUEUE_DEPTH"
#define SNIA_QUEUE_DEPTH_DEFAULT 64u

/* One open device iterator (Iter Open/Read/Close) and its unread entries. */
struct snia_iter {
    bool open;
    bool with_values;
    bool at_end;     /* Iter Read answered Iterator End */
    uint32_t handle; /* the device's */
    uint8_t *buf;
    uint32_t buf_len;
    uint32_t filled; /* header + entries in buf */
    uint32_t off;    /* next entry */
    uint32_t left;   /* entries not yet handed out */
};

struct snia_async;

struct _kvs_key_space_handle {
    struct _kvs_device_handle *dev;
    char name[MAX_KEYSPACE_NAME_LEN + 1];
    pthread_mutex_t iter_lock;
    struct snia_iter iters[KVS_MAX_ITERATE_HANDLE]; /* kvs_iterator_handle = index + 1 */
};

struct _kvs_device_handle {
    struct kvssd_dev *dev;
    char uri[64];
    uint32_t nsid;
    uint32_t max_key;   /* min(255, what Identify advertised) */
    uint32_t max_value; /* Identify's KVMVL */
    unsigned queue_depth;
    pthread_mutex_t lock; /* the key space slot and the async engine's creation */
    /* the namespace's one key space: its name on this handle ("" = not named yet) */
    char ks_name[MAX_KEYSPACE_NAME_LEN + 1];
    struct _kvs_key_space_handle *ks; /* open key space, or NULL */
    struct snia_async *async;         /* created by the first _async call */
};

/* Map a libkvssd return value (0 or -enum kvssd_err) to the API's code. */
kvs_result snia_result(int err);

/* Handle registry: true when @dev / @ks is an open handle of this process. */
kvs_result snia_check_ks(kvs_key_space_handle ks);

/* Argument checks shared by the sync and async paths. */
kvs_result snia_check_key(const struct _kvs_device_handle *d, const kvs_key *key);
kvs_result snia_store_options(const struct _kvs_device_handle *d, const kvs_value *value,
                              const kvs_option_store *opt, uint32_t *options);
kvs_result snia_retrieve_check(const kvs_value *value, const kvs_option_retrieve *opt);
kvs_result snia_exist_check(const struct _kvs_device_handle *d, uint32_t key_cnt,
                            const kvs_key *keys, const kvs_exist_list *list);
kvs_result snia_filter(const kvs_key_group_filter *f, uint32_t *word, uint32_t *mask);

/* Retrieve (with the API's offset and buffer rules) through the sync path. */
kvs_result snia_retrieve(struct _kvs_device_handle *d, const kvs_key *key, kvs_value *value);
/* Finish a retrieve of @got bytes into @buf (offset rules); fills @value. */
kvs_result snia_retrieve_finish(kvs_value *value, const uint8_t *buf, uint32_t actual);
/* Delete honouring kvs_delete_error (Exist first) through the sync path. */
kvs_result snia_delete(struct _kvs_device_handle *d, const kvs_key *key, bool delete_error);
kvs_result snia_exist(struct _kvs_device_handle *d, uint32_t key_cnt, const kvs_key *keys,
                      kvs_exist_list *list);

/* iter.c */
kvs_result snia_iter_next(kvs_key_space_handle ks, kvs_iterator_handle hd, kvs_iterator_list *list);
kvs_result snia_delete_group(struct _kvs_device_handle *d, const kvs_key_group_filter *f);
void snia_iter_close_all(kvs_key_space_handle ks);

/* async.c */
kvs_result snia_async_submit(kvs_key_space_handle ks, kvs_context kind, kvs_key *key,
                             kvs_value *value, void *option, void *private1, void *private2,
                             kvs_postprocess_function fn, uint32_t key_cnt, kvs_exist_list *list,
                             kvs_iterator_handle iter_hd, kvs_iterator_list *iter_list,
                             const kvs_key_group_filter *filter);
/* Wait until every accepted _async operation of @d called back. */
kvs_result snia_async_drain(struct _kvs_device_handle *d);
void snia_async_destroy(struct _kvs_device_handle *d);

#endif /* SNIA_PRIV_H */
