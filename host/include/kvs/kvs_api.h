/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SNIA Key Value Storage API over libkvssd.
 *
 * Source compatible with the kvs_api.h of Samsung OpenMPDK's SNIA-aligned
 * KV API (OpenMPDK/KVSSD, PDK/core/include: kvs_open_device(URI, ...),
 * key spaces, kvs_store_kvp, kvs_retrieve_kvp, ...): the same function
 * names, parameter types, structures and result codes, so a program
 * written against that header compiles unchanged and links with
 * `pkg-config --libs kvapi`. The descriptions below are this
 * implementation's; docs/snia.md maps every call to the device command it
 * sends, or to the result code it returns when the device cannot do it.
 *
 * Calls return KVS_SUCCESS or a kvs_result code and never crash on NULL
 * pointers, stale handles or out-of-range sizes. Handles may be used from
 * several threads. The _async calls queue the operation and return at once;
 * their kvs_postprocess_function runs exactly once per accepted call, on
 * the device handle's completion thread, after the device answered (an
 * _async call that returns an error never calls back).
 */
#ifndef KVS_API_H
#define KVS_API_H

/* what OpenMPDK's header pulls in, which its sample programs rely on */
#include <memory.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "kvs_const.h"
#include "kvs_result.h"
#include "kvs_struct.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory --------------------------------------------------------------- */

#define _FUNCTIONIZE(a, b) a(b)
#define _STRINGIZE(a) #a
#define _INT2STRING(i) _FUNCTIONIZE(_STRINGIZE, i)
#define _LOCATION __FILE__ ":" _INT2STRING(__LINE__)

/* @alignment 0 or a power of two; NULL when it is neither or memory ran out */
void *_kvs_zalloc(size_t size_bytes, size_t alignment, const char *file);
void *_kvs_malloc(size_t size_bytes, size_t alignment, const char *file);
void _kvs_free(void *buf, const char *file);
/* prints the number of kvs_malloc/kvs_zalloc buffers not yet freed to stdout */
void _kvs_report_memstat(void);

#define kvs_malloc(size, alignment) _kvs_malloc(size, alignment, _LOCATION)
#define kvs_zalloc(size, alignment) _kvs_zalloc(size, alignment, _LOCATION)
#define kvs_free(buf) _kvs_free(buf, _LOCATION)
#define kvs_memstat() _kvs_report_memstat()

/* ---- devices ------------------------------------------------------------------ */

/*
 * kvs_open_device() - open a KV namespace: URI is its generic char device
 * ("/dev/ng0n1") or libkvssd's user-space PCI transport ("pci:0000:00:04.0").
 * KVS_ERR_PARAM_INVALID (NULL, empty or > 63 bytes), KVS_ERR_DEV_NOT_EXIST
 * (no such file, or not a KV namespace), KVS_ERR_SYS_IO (already open in
 * this process, or the device did not answer), KVS_ERR_OPTION_INVALID
 * ($KVSSD_QUEUE_DEPTH is not 1..256).
 */
kvs_result kvs_open_device(char *URI, kvs_device_handle *dev_hd);
kvs_result kvs_close_device(kvs_device_handle dev_hd);
/* Identify, read now: capacity, key/value limits, NOVG */
kvs_result kvs_get_device_info(kvs_device_handle dev_hd, kvs_device *dev_info);
kvs_result kvs_get_device_capacity(kvs_device_handle dev_hd, uint64_t *dev_capacity);
/* used share of the capacity in 1/10000 (0 = empty, 10000 = full) */
kvs_result kvs_get_device_utilization(kvs_device_handle dev_hd, uint32_t *dev_utilization);
kvs_result kvs_get_min_key_length(kvs_device_handle dev_hd, uint32_t *min_key_length);
kvs_result kvs_get_max_key_length(kvs_device_handle dev_hd, uint32_t *max_key_length);
kvs_result kvs_get_min_value_length(kvs_device_handle dev_hd, uint32_t *min_value_length);
kvs_result kvs_get_max_value_length(kvs_device_handle dev_hd, uint32_t *max_value_length);
kvs_result kvs_get_optimal_value_length(kvs_device_handle dev_hd, uint32_t *opt_value_length);

/* ---- key spaces: the namespace is one key space (docs/snia.md) ------------------------ */

/* @size 0 (the whole namespace); KVS_ERR_DEV_CAPAPCITY for any other size or a second name */
kvs_result kvs_create_key_space(kvs_device_handle dev_hd, kvs_key_space_name *key_space_name,
                                uint64_t size, kvs_option_key_space opt);
/* erases every pair of the namespace (Format NVM) */
kvs_result kvs_delete_key_space(kvs_device_handle dev_hd, kvs_key_space_name *key_space_name);
/* @index starts at 1; @buffer_size is the bytes of the @names array */
kvs_result kvs_list_key_spaces(kvs_device_handle dev_hd, uint32_t index, uint32_t buffer_size,
                               kvs_key_space_name *names, uint32_t *ks_cnt);
kvs_result kvs_open_key_space(kvs_device_handle dev_hd, char *name, kvs_key_space_handle *ks_hd);
/* waits for the key space's _async operations, closes its iterators */
kvs_result kvs_close_key_space(kvs_key_space_handle ks_hd);
kvs_result kvs_get_key_space_info(kvs_key_space_handle ks_hd, kvs_key_space *ks);

/* ---- key-value pairs -------------------------------------------------------------- */

kvs_result kvs_get_kvp_info(kvs_key_space_handle ks_hd, kvs_key *key, kvs_kvp_info *info);
/* @opt may be NULL (defaults) */
kvs_result kvs_retrieve_kvp(kvs_key_space_handle ks_hd, kvs_key *key, kvs_option_retrieve *opt,
                            kvs_value *value);
kvs_result kvs_retrieve_kvp_async(kvs_key_space_handle ks_hd, kvs_key *key,
                                  kvs_option_retrieve *opt, void *private1, void *private2,
                                  kvs_value *value, kvs_postprocess_function post_fn);
/* @opt may be NULL (KVS_STORE_POST) */
kvs_result kvs_store_kvp(kvs_key_space_handle ks_hd, kvs_key *key, kvs_value *value,
                         kvs_option_store *opt);
kvs_result kvs_store_kvp_async(kvs_key_space_handle ks_hd, kvs_key *key, kvs_value *value,
                               kvs_option_store *opt, void *private1, void *private2,
                               kvs_postprocess_function post_fn);
/* @opt may be NULL (a missing key is not an error) */
kvs_result kvs_delete_kvp(kvs_key_space_handle ks_hd, kvs_key *key, kvs_option_delete *opt);
kvs_result kvs_delete_kvp_async(kvs_key_space_handle ks_hd, kvs_key *key, kvs_option_delete *opt,
                                void *private1, void *private2, kvs_postprocess_function post_fn);
/* deletes every pair whose first 4 key bytes match the filter (iterator + Deletes) */
kvs_result kvs_delete_key_group(kvs_key_space_handle ks_hd, kvs_key_group_filter *grp_fltr);
kvs_result kvs_delete_key_group_async(kvs_key_space_handle ks_hd, kvs_key_group_filter *grp_fltr,
                                      void *private1, void *private2,
                                      kvs_postprocess_function post_fn);
/* bit i of list->result_buffer (LSB of byte 0 first) = keys[i] exists */
kvs_result kvs_exist_kv_pairs(kvs_key_space_handle ks_hd, uint32_t key_cnt, kvs_key *keys,
                              kvs_exist_list *list);
kvs_result kvs_exist_kv_pairs_async(kvs_key_space_handle ks_hd, uint32_t key_cnt, kvs_key *keys,
                                    kvs_exist_list *list, void *private1, void *private2,
                                    kvs_postprocess_function post_fn);

/* ---- iterators ----------------------------------------------------------------------- */

kvs_result kvs_create_iterator(kvs_key_space_handle ks_hd, kvs_option_iterator *iter_op,
                               kvs_key_group_filter *iter_fltr, kvs_iterator_handle *iter_hd);
kvs_result kvs_delete_iterator(kvs_key_space_handle ks_hd, kvs_iterator_handle iter_hd);
kvs_result kvs_iterate_next(kvs_key_space_handle ks_hd, kvs_iterator_handle iter_hd,
                            kvs_iterator_list *iter_list);
kvs_result kvs_iterate_next_async(kvs_key_space_handle ks_hd, kvs_iterator_handle iter_hd,
                                  kvs_iterator_list *iter_list, void *private1, void *private2,
                                  kvs_postprocess_function post_fn);

/* ---- extension of this implementation ------------------------------------------------ */

/* "KVS_ERR_KEY_NOT_EXIST: the key does not exist"; never NULL */
const char *kvs_errstr(int32_t result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KVS_API_H */
