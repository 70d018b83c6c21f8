/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SNIA Key Value Storage API: constants, with OpenMPDK's names and values
 * (kvs_const.h of the SNIA-aligned KV API). What this device actually
 * accepts is reported by kvs_get_device_info() and the kvs_get_*_length()
 * calls; docs/snia.md lists where the two differ.
 */
#ifndef KVS_CONST_H
#define KVS_CONST_H

#ifdef __cplusplus
extern "C" {
#endif

#define KVS_MIN_KEY_LENGTH 4
#define KVS_MAX_KEY_LENGTH 255
#define KVS_MIN_VALUE_LENGTH 0
#define KVS_MAX_VALUE_LENGTH (2 * 1024 * 1024)
#define KVS_OPTIMAL_VALUE_LENGTH 4096
/* a value offset (partial retrieve) is a multiple of this; a power of 2 */
#define KVS_ALIGNMENT_UNIT 512
#define KVS_VALUE_LENGTH_ALIGNMENT_UNIT 4
#define KVS_MAX_ITERATE_HANDLE 16
#define G_ITER_KEY_SIZE_FIXED 16
/* a key group filter covers the first 4 key bytes */
#define KVS_MAX_KEY_GROUP_BYTES 4
#define KVS_ITERATOR_BUFFER_SIZE (32 * 1024)
#define MAX_CONT_PATH_LEN 255
#define MAX_KEYSPACE_NAME_LEN MAX_CONT_PATH_LEN

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KVS_CONST_H */
