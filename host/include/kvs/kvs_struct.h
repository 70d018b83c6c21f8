/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SNIA Key Value Storage API: data structures, with the member names, types
 * and order of OpenMPDK's kvs_struct.h (SNIA-aligned KV API), so that
 * positional initializers such as `kvs_value v = {buf, len, 0, 0};` keep
 * their meaning.
 */
#ifndef KVS_STRUCT_H
#define KVS_STRUCT_H

#include <stdbool.h>
#include <stdint.h>

#include "kvs_const.h"
#include "kvs_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* version of the API library */
typedef struct {
    uint8_t major;
    uint8_t minor;
    uint8_t micro;
} kvs_api_version;

/* the operation a kvs_postprocess_context reports */
typedef enum {
    KVS_CMD_DELETE = 0x01,
    KVS_CMD_DELETE_GROUP = 0x02,
    KVS_CMD_EXIST = 0x03,
    KVS_CMD_ITER_CREATE = 0x04,
    KVS_CMD_ITER_DELETE = 0x05,
    KVS_CMD_ITER_NEXT = 0x06,
    KVS_CMD_RETRIEVE = 0x07,
    KVS_CMD_STORE = 0x08,
} kvs_context;

typedef enum {
    KVS_KEY_ORDER_NONE = 0,    /* [default] no key order within the key space */
    KVS_KEY_ORDER_ASCEND = 1,  /* pairs kept in ascending key order */
    KVS_KEY_ORDER_DESCEND = 2, /* pairs kept in descending key order */
} kvs_key_order;

typedef struct {
    kvs_key_order ordering;
} kvs_option_key_space;

typedef struct {
    bool kvs_delete_error; /* report KVS_ERR_KEY_NOT_EXIST for a missing key */
} kvs_option_delete;

typedef enum {
    KVS_ITERATOR_KEY = 0,       /* [default] entries are keys */
    KVS_ITERATOR_KEY_VALUE = 1, /* entries are key-value pairs */
} kvs_iterator_type;

typedef struct {
    kvs_iterator_type iter_type;
} kvs_option_iterator;

typedef struct {
    bool kvs_retrieve_delete; /* retrieve, then delete the pair */
} kvs_option_retrieve;

typedef enum {
    KVS_STORE_POST = 0,        /* [default] create, or overwrite an existing value */
    KVS_STORE_UPDATE_ONLY = 1, /* overwrite only; KVS_ERR_KEY_NOT_EXIST if absent */
    KVS_STORE_NOOVERWRITE = 2, /* create only; KVS_ERR_VALUE_UPDATE_NOT_ALLOWED if present */
    KVS_STORE_APPEND = 3,      /* append to an existing value, else create */
} kvs_store_type;

typedef enum {
    KVS_NOASSOCIATION = 0,
    KVS_ASSOCIATION_STREAM = 1,
} kvs_association_type;

typedef struct {
    void *key;       /* the key bytes */
    uint16_t length; /* key length in bytes */
} kvs_key;

typedef struct {
    void *value;                /* the value buffer */
    uint32_t length;            /* in: buffer size; out (retrieve): bytes returned */
    uint32_t actual_value_size; /* out (retrieve): the stored value's full size */
    uint32_t offset;            /* first value byte to return (retrieve) */
} kvs_value;

typedef struct {
    kvs_association_type assoc_type;
    uint16_t assoc_hint; /* e.g. a stream id */
} kvs_association;

typedef struct {
    kvs_store_type st_type;
    kvs_association *assoc;
} kvs_option_store;

struct _kvs_device_handle;
struct _kvs_key_space_handle;
typedef struct _kvs_device_handle *kvs_device_handle;
typedef struct _kvs_key_space_handle *kvs_key_space_handle;
typedef uint8_t kvs_iterator_handle;

typedef struct {
    uint32_t name_len; /* name length in bytes, without a terminating NUL */
    char *name;
} kvs_key_space_name;

typedef struct {
    bool opened;
    uint64_t capacity;  /* bytes */
    uint64_t free_size; /* bytes */
    uint64_t count;     /* key-value pairs */
    kvs_key_space_name *name;
} kvs_key_space;

typedef struct {
    uint64_t capacity;                  /* bytes */
    uint64_t unalloc_capacity;          /* bytes not given to any key space */
    uint32_t max_value_len;             /* bytes */
    uint32_t max_key_len;               /* bytes */
    uint32_t optimal_value_len;         /* bytes */
    uint32_t optimal_value_granularity; /* bytes */
    void *extended_info;                /* vendor specific */
} kvs_device;

typedef struct {
    uint32_t num_keys;      /* keys checked */
    kvs_key *keys;          /* the keys checked */
    uint32_t length;        /* in: result_buffer size in bytes; out: bytes filled */
    uint8_t *result_buffer; /* bit i (LSB first) set = keys[i] exists */
} kvs_exist_list;

typedef struct {
    uint8_t bitmask[KVS_MAX_KEY_GROUP_BYTES];     /* which bits of the first 4 key bytes match */
    uint8_t bit_pattern[KVS_MAX_KEY_GROUP_BYTES]; /* what they must be */
} kvs_key_group_filter;

typedef struct {
    uint32_t num_entries; /* out: entries in it_list */
    bool end;             /* out: true when the iteration is over */
    uint32_t size;        /* in: it_list size in bytes; out: bytes filled */
    uint8_t *it_list;     /* entries (docs/snia.md, "Iterator buffer") */
} kvs_iterator_list;

typedef struct {
    kvs_context context;
    kvs_key_space_handle ks_hd;
    kvs_key *key;
    kvs_value *value;
    void *option;
    void *private1;
    void *private2;
    kvs_result result;
    kvs_iterator_handle iter_hd;
    union {
        kvs_iterator_list *iter_list;
        kvs_exist_list *list;
    } result_buffer;
} kvs_postprocess_context;

/* completion callback of the _async calls */
typedef void (*kvs_postprocess_function)(kvs_postprocess_context *ctx);

typedef struct {
    uint16_t key_len;
    uint8_t *key;       /* caller's buffer of at least key_len bytes */
    uint32_t value_len; /* out */
} kvs_kvp_info;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KVS_STRUCT_H */
