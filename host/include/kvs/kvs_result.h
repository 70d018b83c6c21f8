/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SNIA Key Value Storage API: result codes.
 *
 * Names and values are those of Samsung OpenMPDK's kvs_result.h in the
 * SNIA-aligned KV API (OpenMPDK/KVSSD, PDK/core/include, the release whose
 * kvs_api.h opens devices by URI and stores with kvs_store_kvp), so that a
 * program written against that header compiles unchanged. The spelling
 * KVS_ERR_DEV_CAPAPCITY is the published one.
 */
#ifndef KVS_RESULT_H
#define KVS_RESULT_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    KVS_SUCCESS = 0,                       /* success */
    KVS_ERR_BUFFER_SMALL = 0x001,          /* the caller's buffer is too small */
    KVS_ERR_DEV_CAPAPCITY = 0x002,         /* the device cannot give a key space that size */
    KVS_ERR_DEV_NOT_EXIST = 0x003,         /* no such device */
    KVS_ERR_KS_CAPACITY = 0x004,           /* the key space (device) is full */
    KVS_ERR_KS_EXIST = 0x005,              /* a key space of that name exists */
    KVS_ERR_KS_INDEX = 0x006,              /* key space index out of range */
    KVS_ERR_KS_NAME = 0x007,               /* key space name not acceptable */
    KVS_ERR_KS_NOT_EXIST = 0x008,          /* no key space of that name */
    KVS_ERR_KS_NOT_OPEN = 0x009,           /* the key space handle is not open */
    KVS_ERR_KS_OPEN = 0x00A,               /* the key space is already open */
    KVS_ERR_ITERATOR_FILTER_INVALID = 0x00B, /* bitmask / bit pattern not usable */
    KVS_ERR_ITERATOR_MAX = 0x00C,          /* every iterator the device has is open */
    KVS_ERR_ITERATOR_NOT_EXIST = 0x00D,    /* the iterator handle is not open */
    KVS_ERR_ITERATOR_OPEN = 0x00E,         /* the iterator is already open */
    KVS_ERR_KEY_LENGTH_INVALID = 0x00F,    /* key length outside what the device takes */
    KVS_ERR_KEY_NOT_EXIST = 0x010,         /* the key does not exist */
    KVS_ERR_OPTION_INVALID = 0x011,        /* an option this implementation does not support */
    KVS_ERR_PARAM_INVALID = 0x012,         /* a NULL or malformed parameter */
    KVS_ERR_SYS_IO = 0x013,                /* talking to the device failed */
    KVS_ERR_VALUE_LENGTH_INVALID = 0x014,  /* value length outside what the device takes */
    KVS_ERR_VALUE_OFFSET_INVALID = 0x015,  /* value offset out of range */
    KVS_ERR_VALUE_OFFSET_MISALIGNED = 0x016, /* value offset not a KVS_ALIGNMENT_UNIT multiple */
    KVS_ERR_VALUE_UPDATE_NOT_ALLOWED = 0x017, /* the key exists and the store may not overwrite */
    KVS_ERR_DEV_NOT_OPENED = 0x018,        /* the device handle is not open */
} kvs_result;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KVS_RESULT_H */
