/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SNIA KV API library (libkvapi) with the real libkvssd.so over the
 * in-process device of loopdev.c: every call, its exact results and each
 * refusal's exact kvs_result. Written against <kvs_api.h> only, as an
 * OpenMPDK program would be.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <kvs_api.h>

#include "loopdev.h"
#include "tap_cunit.h"

#define KS_NAME "ks_test"
#define MiB (1024u * 1024u)

static kvs_device_handle dev;
static kvs_key_space_handle ks;

/* A fresh device, opened with its key space: a fixture that cannot be built ends the run. */
static void fixture_open(void)
{
    kvs_key_space_name name = {(uint32_t)strlen(KS_NAME), (char *)KS_NAME};
    kvs_option_key_space opt = {KVS_KEY_ORDER_NONE};
    kvs_result r = KVS_ERR_SYS_IO;

    if (loopdev_start() != 0 || (r = kvs_open_device((char *)LOOPDEV_PATH, &dev)) ||
        (r = kvs_create_key_space(dev, &name, 0, opt)) ||
        (r = kvs_open_key_space(dev, (char *)KS_NAME, &ks))) {
        printf("Bail out! fixture: %s\n", kvs_errstr(r));
        exit(1);
    }
}

static void fixture_close(void)
{
    kvs_close_key_space(ks); /* may already be closed by the test */
    CU_ASSERT_EQUAL(kvs_close_device(dev), KVS_SUCCESS);
    loopdev_stop();
}

static uint8_t *pattern(uint32_t len, uint32_t seed)
{
    uint8_t *v = malloc(len ? len : 1);
    for (uint32_t i = 0; i < len; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (uint8_t)(seed >> 16);
    }
    return v;
}

static kvs_result put(const char *k, const void *v, uint32_t len)
{
    kvs_key key = {(void *)k, (uint16_t)strlen(k)};
    kvs_value val = {(void *)v, len, 0, 0};
    return kvs_store_kvp(ks, &key, &val, NULL);
}

static kvs_result get(const char *k, void *buf, uint32_t len, uint32_t offset, kvs_value *out)
{
    kvs_key key = {(void *)k, (uint16_t)strlen(k)};
    kvs_value val = {buf, len, 0, offset};
    kvs_result r = kvs_retrieve_kvp(ks, &key, NULL, &val);
    if (out) {
        *out = val;
    }
    return r;
}

/* Device limits come from Identify: 255-byte keys, 2 MiB values, capacity and NOVG. */
static void test_device_info(void)
{
    kvs_device info;
    uint64_t cap = 0;
    uint32_t v = 99, util = 99;

    CU_ASSERT_EQUAL(kvs_get_device_info(dev, &info), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_get_device_capacity(dev, &cap), KVS_SUCCESS);
    CU_ASSERT(cap > 0);
    CU_ASSERT_EQUAL(info.capacity, cap);
    CU_ASSERT_EQUAL(info.unalloc_capacity, 0);
    CU_ASSERT_EQUAL(info.max_key_len, 255);
    CU_ASSERT_EQUAL(info.max_value_len, 2 * MiB);
    CU_ASSERT(info.optimal_value_granularity > 0);
    CU_ASSERT_EQUAL(info.optimal_value_len, info.optimal_value_granularity);
    CU_ASSERT_PTR_NULL(info.extended_info);
    CU_ASSERT_EQUAL(kvs_get_min_key_length(dev, &v), KVS_SUCCESS);
    CU_ASSERT_EQUAL(v, 4);
    CU_ASSERT_EQUAL(kvs_get_max_key_length(dev, &v), KVS_SUCCESS);
    CU_ASSERT_EQUAL(v, 255);
    CU_ASSERT_EQUAL(kvs_get_min_value_length(dev, &v), KVS_SUCCESS);
    CU_ASSERT_EQUAL(v, 0);
    CU_ASSERT_EQUAL(kvs_get_max_value_length(dev, &v), KVS_SUCCESS);
    CU_ASSERT_EQUAL(v, 2 * MiB);
    CU_ASSERT_EQUAL(kvs_get_optimal_value_length(dev, &v), KVS_SUCCESS);
    CU_ASSERT_EQUAL(v, info.optimal_value_granularity);

    CU_ASSERT_EQUAL(kvs_get_device_utilization(dev, &util), KVS_SUCCESS);
    CU_ASSERT_EQUAL(util, 0);
    uint8_t *big = pattern(MiB, 1);
    for (int i = 0; i < 4; i++) {
        char k[16];
        snprintf(k, sizeof(k), "fill%04d", i);
        CU_ASSERT_EQUAL(put(k, big, MiB), KVS_SUCCESS);
    }
    free(big);
    CU_ASSERT_EQUAL(kvs_get_device_utilization(dev, &util), KVS_SUCCESS);
    CU_ASSERT(util > 0 && util <= 10000);

    CU_ASSERT_EQUAL(kvs_get_device_info(dev, NULL), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_get_device_capacity(dev, NULL), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_get_device_utilization(NULL, &util), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_get_max_key_length(dev, NULL), KVS_ERR_PARAM_INVALID);
}

/* The namespace's one key space: create, list, open, info, close, delete (Format NVM). */
static void test_key_space(void)
{
    kvs_key_space_name other = {5, (char *)"other"};
    kvs_key_space_name mine = {(uint32_t)strlen(KS_NAME), (char *)KS_NAME};
    kvs_key_space_name bad_len = {3, (char *)KS_NAME};
    kvs_option_key_space none = {KVS_KEY_ORDER_NONE}, asc = {KVS_KEY_ORDER_ASCEND};
    kvs_key_space_handle ks2 = NULL;
    char name_buf[64], small_buf[4];
    kvs_key_space_name names[2] = {{sizeof(name_buf), name_buf}, {0, NULL}};
    uint32_t cnt = 99;

    CU_ASSERT_EQUAL(kvs_list_key_spaces(dev, 1, sizeof(names), names, &cnt), KVS_SUCCESS);
    CU_ASSERT_EQUAL(cnt, 1);
    CU_ASSERT_EQUAL(names[0].name_len, 7);
    CU_ASSERT_STRING_EQUAL(name_buf, KS_NAME);
    CU_ASSERT_EQUAL(kvs_list_key_spaces(dev, 0, sizeof(names), names, &cnt), KVS_ERR_KS_INDEX);
    CU_ASSERT_EQUAL(kvs_list_key_spaces(dev, 2, sizeof(names), names, &cnt), KVS_ERR_KS_INDEX);
    CU_ASSERT_EQUAL(kvs_list_key_spaces(dev, 1, 0, names, &cnt), KVS_ERR_BUFFER_SMALL);
    names[0] = (kvs_key_space_name){sizeof(small_buf), small_buf};
    CU_ASSERT_EQUAL(kvs_list_key_spaces(dev, 1, sizeof(names), names, &cnt), KVS_ERR_BUFFER_SMALL);
    CU_ASSERT_EQUAL(kvs_list_key_spaces(dev, 1, sizeof(names), NULL, &cnt), KVS_ERR_PARAM_INVALID);

    CU_ASSERT_EQUAL(kvs_create_key_space(dev, &mine, 0, none), KVS_ERR_KS_EXIST);
    CU_ASSERT_EQUAL(kvs_create_key_space(dev, &other, 0, none), KVS_ERR_DEV_CAPAPCITY);
    CU_ASSERT_EQUAL(kvs_create_key_space(dev, &mine, 4096, none), KVS_ERR_DEV_CAPAPCITY);
    CU_ASSERT_EQUAL(kvs_create_key_space(dev, &mine, 0, asc), KVS_ERR_OPTION_INVALID);
    CU_ASSERT_EQUAL(kvs_create_key_space(dev, &bad_len, 0, none), KVS_ERR_KS_NAME);
    CU_ASSERT_EQUAL(kvs_create_key_space(dev, NULL, 0, none), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_open_key_space(dev, (char *)"other", &ks2), KVS_ERR_KS_NOT_EXIST);
    CU_ASSERT_EQUAL(kvs_open_key_space(dev, (char *)KS_NAME, &ks2), KVS_ERR_KS_OPEN);
    CU_ASSERT_EQUAL(kvs_open_key_space(dev, (char *)"", &ks2), KVS_ERR_KS_NAME);
    CU_ASSERT_EQUAL(kvs_open_key_space(dev, NULL, &ks2), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_delete_key_space(dev, &mine), KVS_ERR_KS_OPEN);
    CU_ASSERT_EQUAL(kvs_delete_key_space(dev, &other), KVS_ERR_KS_NOT_EXIST);

    /* info: pair count from the firmware's live keys, capacity from Identify */
    kvs_key_space info;
    kvs_key_space_name info_name = {sizeof(name_buf), name_buf};
    uint64_t cap;
    memset(name_buf, 0, sizeof(name_buf));
    info.name = &info_name;
    CU_ASSERT_EQUAL(kvs_get_key_space_info(ks, &info), KVS_SUCCESS);
    CU_ASSERT_EQUAL(info.count, 0);
    CU_ASSERT_EQUAL(info.opened, true);
    CU_ASSERT_EQUAL(put("pair0001", "a", 1), KVS_SUCCESS);
    CU_ASSERT_EQUAL(put("pair0002", "bb", 2), KVS_SUCCESS);
    CU_ASSERT_EQUAL(put("pair0003", "ccc", 3), KVS_SUCCESS);
    info_name.name_len = sizeof(name_buf);
    CU_ASSERT_EQUAL(kvs_get_key_space_info(ks, &info), KVS_SUCCESS);
    CU_ASSERT_EQUAL(info.count, 3);
    CU_ASSERT_EQUAL(kvs_get_device_capacity(dev, &cap), KVS_SUCCESS);
    CU_ASSERT_EQUAL(info.capacity, cap);
    CU_ASSERT(info.free_size > 0 && info.free_size < cap);
    CU_ASSERT_EQUAL(info_name.name_len, 7);
    CU_ASSERT_STRING_EQUAL(name_buf, KS_NAME);
    CU_ASSERT_EQUAL(kvs_get_key_space_info(ks, NULL), KVS_ERR_PARAM_INVALID);

    /* close, then delete: every pair goes; the handle is stale */
    CU_ASSERT_EQUAL(kvs_close_key_space(ks), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_close_key_space(ks), KVS_ERR_KS_NOT_OPEN);
    CU_ASSERT_EQUAL(put("pair0004", "d", 1), KVS_ERR_KS_NOT_OPEN);
    CU_ASSERT_EQUAL(kvs_delete_key_space(dev, &mine), KVS_SUCCESS);
    names[0] = (kvs_key_space_name){sizeof(name_buf), name_buf};
    CU_ASSERT_EQUAL(kvs_list_key_spaces(dev, 1, sizeof(names), names, &cnt), KVS_SUCCESS);
    CU_ASSERT_EQUAL(cnt, 0);

    /* a handle that has not named it adopts the name it is opened by */
    CU_ASSERT_EQUAL(kvs_open_key_space(dev, (char *)"reopened", &ks), KVS_SUCCESS);
    char buf[8];
    CU_ASSERT_EQUAL(get("pair0001", buf, sizeof(buf), 0, NULL), KVS_ERR_KEY_NOT_EXIST);
    info_name.name_len = 7; /* "reopened" needs 8 (and its NUL one more byte) */
    CU_ASSERT_EQUAL(kvs_get_key_space_info(ks, &info), KVS_ERR_BUFFER_SMALL);
    info_name.name_len = sizeof(name_buf);
    CU_ASSERT_EQUAL(kvs_get_key_space_info(ks, &info), KVS_SUCCESS);
    CU_ASSERT_STRING_EQUAL(name_buf, "reopened");
    CU_ASSERT_EQUAL(info.count, 0);
}

/* Values of 0 B, 100 B, 4 KiB + 30, 2 MiB and a 255-byte key read back byte for byte. */
static void test_store_retrieve(void)
{
    static const uint32_t sizes[] = {0, 100, 4096 + 30, 2 * MiB};
    uint8_t *buf = malloc(2 * MiB);
    kvs_value out;

    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char k[16];
        uint8_t *v = pattern(sizes[i], i + 10);
        snprintf(k, sizeof(k), "size%04u", i);
        CU_ASSERT_EQUAL(put(k, v, sizes[i]), KVS_SUCCESS);
        memset(buf, 0, 2 * MiB);
        CU_ASSERT_EQUAL(get(k, buf, 2 * MiB, 0, &out), KVS_SUCCESS);
        CU_ASSERT_EQUAL(out.actual_value_size, sizes[i]);
        CU_ASSERT_EQUAL(out.length, sizes[i]);
        CU_ASSERT_EQUAL(memcmp(buf, v, sizes[i]), 0);
        free(v);
    }

    uint8_t long_key[255];
    for (unsigned i = 0; i < sizeof(long_key); i++) {
        long_key[i] = (uint8_t)(i * 7 + 1);
    }
    kvs_key lk = {long_key, 255};
    kvs_value lv = {(void *)"long key value", 14, 0, 0};
    kvs_option_store post = {KVS_STORE_POST, NULL};
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &lk, &lv, &post), KVS_SUCCESS);
    kvs_value back = {buf, 64, 0, 0};
    kvs_option_retrieve ro = {false};
    CU_ASSERT_EQUAL(kvs_retrieve_kvp(ks, &lk, &ro, &back), KVS_SUCCESS);
    CU_ASSERT_EQUAL(back.length, 14);
    CU_ASSERT_EQUAL(memcmp(buf, "long key value", 14), 0);
    free(buf);
}

/* Every malformed argument gets its own code and sends nothing. */
static void test_store_refusals(void)
{
    uint8_t k256[256];
    memset(k256, 'k', sizeof(k256));
    kvs_key short_key = {(void *)"abc", 3}, long_key = {k256, 256}, null_bytes = {NULL, 8};
    kvs_key ok_key = {(void *)"refuse01", 8};
    kvs_value val = {(void *)"v", 1, 0, 0};
    kvs_value too_big = {k256, 2 * MiB + 1, 0, 0};
    kvs_value null_val = {NULL, 4, 0, 0};
    struct loopdev_counts before = loopdev_counts();

    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &short_key, &val, NULL), KVS_ERR_KEY_LENGTH_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &long_key, &val, NULL), KVS_ERR_KEY_LENGTH_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &null_bytes, &val, NULL), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, NULL, &val, NULL), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &ok_key, NULL, NULL), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &ok_key, &null_val, NULL), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &ok_key, &too_big, NULL), KVS_ERR_VALUE_LENGTH_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(NULL, &ok_key, &val, NULL), KVS_ERR_PARAM_INVALID);
    int not_a_handle = 0;
    CU_ASSERT_EQUAL(kvs_store_kvp((kvs_key_space_handle)&not_a_handle, &ok_key, &val, NULL),
                    KVS_ERR_KS_NOT_OPEN);
    struct loopdev_counts after = loopdev_counts();
    CU_ASSERT_EQUAL(after.io_ioctls, before.io_ioctls);
}

/* Store types map to Store's option bits; what the device lacks is KVS_ERR_OPTION_INVALID. */
static void test_store_options(void)
{
    kvs_key key = {(void *)"option01", 8};
    kvs_value one = {(void *)"one", 3, 0, 0}, two = {(void *)"two", 3, 0, 0};
    kvs_option_store update = {KVS_STORE_UPDATE_ONLY, NULL};
    kvs_option_store noover = {KVS_STORE_NOOVERWRITE, NULL};
    kvs_option_store append = {KVS_STORE_APPEND, NULL};
    kvs_option_store garbage = {(kvs_store_type)7, NULL};
    kvs_association stream = {KVS_ASSOCIATION_STREAM, 3}, none = {KVS_NOASSOCIATION, 0};
    kvs_option_store streamed = {KVS_STORE_POST, &stream}, plain = {KVS_STORE_POST, &none};
    char buf[8];
    kvs_value out;

    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &one, &update), KVS_ERR_KEY_NOT_EXIST);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &one, &noover), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &two, &noover), KVS_ERR_VALUE_UPDATE_NOT_ALLOWED);
    CU_ASSERT_EQUAL(get("option01", buf, sizeof(buf), 0, &out), KVS_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(buf, "one", 3), 0);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &two, &update), KVS_SUCCESS);
    CU_ASSERT_EQUAL(get("option01", buf, sizeof(buf), 0, &out), KVS_SUCCESS);
    CU_ASSERT_EQUAL(memcmp(buf, "two", 3), 0);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &one, &append), KVS_ERR_OPTION_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &one, &garbage), KVS_ERR_OPTION_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &one, &streamed), KVS_ERR_OPTION_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &one, &plain), KVS_SUCCESS);
    kvs_value at512 = {(void *)"x", 1, 0, 512}, at100 = {(void *)"x", 1, 0, 100};
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &at512, NULL), KVS_ERR_VALUE_OFFSET_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp(ks, &key, &at100, NULL), KVS_ERR_VALUE_OFFSET_MISALIGNED);
}

/* Short buffers, offsets (host side: Retrieve has no offset) and the retrieve options. */
static void test_retrieve_partial(void)
{
    uint8_t *v = pattern(2000, 5), buf[4096];
    kvs_value out;

    CU_ASSERT_EQUAL(put("partial1", v, 2000), KVS_SUCCESS);
    memset(buf, 0, sizeof(buf));
    CU_ASSERT_EQUAL(get("partial1", buf, 1000, 0, &out), KVS_ERR_BUFFER_SMALL);
    CU_ASSERT_EQUAL(out.length, 1000);
    CU_ASSERT_EQUAL(out.actual_value_size, 2000);
    CU_ASSERT_EQUAL(memcmp(buf, v, 1000), 0);
    CU_ASSERT_EQUAL(buf[1000], 0);

    memset(buf, 0, sizeof(buf));
    CU_ASSERT_EQUAL(get("partial1", buf, 1024, 512, &out), KVS_ERR_BUFFER_SMALL);
    CU_ASSERT_EQUAL(out.length, 1024);
    CU_ASSERT_EQUAL(out.actual_value_size, 2000);
    CU_ASSERT_EQUAL(memcmp(buf, v + 512, 1024), 0);

    memset(buf, 0, sizeof(buf));
    CU_ASSERT_EQUAL(get("partial1", buf, 2048, 1024, &out), KVS_SUCCESS);
    CU_ASSERT_EQUAL(out.length, 976);
    CU_ASSERT_EQUAL(memcmp(buf, v + 1024, 976), 0);

    CU_ASSERT_EQUAL(get("partial1", buf, 64, 2048, &out), KVS_ERR_VALUE_OFFSET_INVALID);
    CU_ASSERT_EQUAL(out.actual_value_size, 2000);
    CU_ASSERT_EQUAL(get("partial1", buf, 64, 100, &out), KVS_ERR_VALUE_OFFSET_MISALIGNED);
    CU_ASSERT_EQUAL(get("missing1", buf, 64, 0, &out), KVS_ERR_KEY_NOT_EXIST);

    kvs_key key = {(void *)"partial1", 8};
    kvs_value val = {buf, 64, 0, 0}, null_buf = {NULL, 64, 0, 0};
    kvs_option_retrieve and_delete = {true};
    CU_ASSERT_EQUAL(kvs_retrieve_kvp(ks, &key, &and_delete, &val), KVS_ERR_OPTION_INVALID);
    CU_ASSERT_EQUAL(kvs_retrieve_kvp(ks, &key, NULL, &null_buf), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_retrieve_kvp(ks, &key, NULL, NULL), KVS_ERR_PARAM_INVALID);
    free(v);
}

/* kvs_get_kvp_info: a 0-byte Retrieve answers the size. */
static void test_kvp_info(void)
{
    uint8_t kbuf[16];
    kvs_key key = {(void *)"kvpinfo1", 8}, missing = {(void *)"kvpinfo2", 8};
    kvs_kvp_info info = {0, kbuf, 0}, no_buf = {0, NULL, 0};
    uint8_t *v = pattern(12345, 3);

    CU_ASSERT_EQUAL(put("kvpinfo1", v, 12345), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_get_kvp_info(ks, &key, &info), KVS_SUCCESS);
    CU_ASSERT_EQUAL(info.key_len, 8);
    CU_ASSERT_EQUAL(info.value_len, 12345);
    CU_ASSERT_EQUAL(memcmp(kbuf, "kvpinfo1", 8), 0);
    CU_ASSERT_EQUAL(kvs_get_kvp_info(ks, &missing, &info), KVS_ERR_KEY_NOT_EXIST);
    CU_ASSERT_EQUAL(kvs_get_kvp_info(ks, &key, &no_buf), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_get_kvp_info(ks, &key, NULL), KVS_ERR_PARAM_INVALID);
    free(v);
}

/* Delete; a missing key is an error only with kvs_delete_error. */
static void test_delete(void)
{
    kvs_key key = {(void *)"delete01", 8};
    kvs_option_delete strict = {true}, lax = {false};
    char buf[8];

    CU_ASSERT_EQUAL(put("delete01", "gone", 4), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_delete_kvp(ks, &key, &strict), KVS_SUCCESS);
    CU_ASSERT_EQUAL(get("delete01", buf, sizeof(buf), 0, NULL), KVS_ERR_KEY_NOT_EXIST);
    CU_ASSERT_EQUAL(kvs_delete_kvp(ks, &key, &lax), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_delete_kvp(ks, &key, NULL), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_delete_kvp(ks, &key, &strict), KVS_ERR_KEY_NOT_EXIST);
    CU_ASSERT_EQUAL(kvs_delete_kvp(ks, NULL, NULL), KVS_ERR_PARAM_INVALID);
}

static kvs_key *ten_keys(char names[10][9])
{
    kvs_key *keys = calloc(10, sizeof(*keys));
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], 9, "exist%03d", i);
        keys[i] = (kvs_key){names[i], 8};
    }
    return keys;
}

/* Exist of 10 keys, 4 present (0, 2, 5, 9): result bits 0x25 0x02, 2 bytes. */
static void test_exist(void)
{
    char names[10][9];
    kvs_key *keys = ten_keys(names);
    uint8_t result[4] = {0xff, 0xff, 0xff, 0xff};
    kvs_exist_list list = {0, NULL, sizeof(result), result};

    for (int i = 0; i < 10; i++) {
        if (i == 0 || i == 2 || i == 5 || i == 9) {
            CU_ASSERT_EQUAL(put(names[i], "x", 1), KVS_SUCCESS);
        }
    }
    CU_ASSERT_EQUAL(kvs_exist_kv_pairs(ks, 10, keys, &list), KVS_SUCCESS);
    CU_ASSERT_EQUAL(result[0], 0x25);
    CU_ASSERT_EQUAL(result[1], 0x02);
    CU_ASSERT_EQUAL(result[2], 0xff); /* beyond the 2 bytes: untouched */
    CU_ASSERT_EQUAL(list.length, 2);
    CU_ASSERT_EQUAL(list.num_keys, 10);
    CU_ASSERT_PTR_EQUAL(list.keys, keys);

    list.length = 1;
    CU_ASSERT_EQUAL(kvs_exist_kv_pairs(ks, 10, keys, &list), KVS_ERR_BUFFER_SMALL);
    list.length = sizeof(result);
    CU_ASSERT_EQUAL(kvs_exist_kv_pairs(ks, 0, keys, &list), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_exist_kv_pairs(ks, 10, keys, NULL), KVS_ERR_PARAM_INVALID);
    keys[3].length = 2;
    CU_ASSERT_EQUAL(kvs_exist_kv_pairs(ks, 10, keys, &list), KVS_ERR_KEY_LENGTH_INVALID);
    free(keys);
}

/* Parse an iterator list into "key" strings (keys are 8 printable bytes here). */
static int parse_keys(const kvs_iterator_list *l, char out[][9], int max, bool with_values,
                      uint32_t *value_lens)
{
    const uint8_t *p = l->it_list;
    int n = 0;
    for (uint32_t i = 0; i < l->num_entries && n < max; i++) {
        uint32_t kl, vl;
        memcpy(&kl, p, 4);
        memset(out[n], 0, 9);
        memcpy(out[n], p + 4, kl < 8 ? kl : 8);
        p += 4 + kl;
        if (with_values) {
            memcpy(&vl, p, 4);
            value_lens[n] = vl;
            p += 4 + vl;
        }
        n++;
    }
    return (uint32_t)(p - l->it_list) == l->size ? n : -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Buckets "aaaa" (5 keys), "bbbb" (2) and "bbbc" (1); key i's value is 8 + i bytes. */
static void store_buckets(void)
{
    static const char *const keys[] = {"aaaa0001", "aaaa0002", "aaaa0003", "aaaa0004",
                                       "aaaa0005", "bbbb0001", "bbbb0002", "bbbc0003"};
    char value[32];
    for (unsigned i = 0; i < 8; i++) {
        memset(value, '0' + (int)i, sizeof(value));
        CU_ASSERT_EQUAL(put(keys[i], value, 8 + i), KVS_SUCCESS);
    }
}

/* Iterators return exactly the keys of the bucket, across calls when the buffer is small. */
static void test_iterator(void)
{
    kvs_key_group_filter aaaa = {{0xff, 0xff, 0xff, 0xff}, {'a', 'a', 'a', 'a'}};
    kvs_key_group_filter b_any = {{0xff, 0, 0, 0}, {'b', 0, 0, 0}};
    kvs_key_group_filter bbb_hi = {{0xff, 0xff, 0xff, 0xfe}, {'b', 'b', 'b', 'b'}};
    kvs_option_iterator keys_only = {KVS_ITERATOR_KEY}, with_values = {KVS_ITERATOR_KEY_VALUE};
    kvs_iterator_handle it = 0;
    uint8_t buf[KVS_ITERATOR_BUFFER_SIZE];
    kvs_iterator_list list = {0, false, sizeof(buf), buf};
    char got[16][9];
    uint32_t vl[16];

    store_buckets();
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &aaaa, &it), KVS_SUCCESS);
    CU_ASSERT_EQUAL(it, 1);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, it, &list), KVS_SUCCESS);
    CU_ASSERT_EQUAL(list.num_entries, 5);
    CU_ASSERT_EQUAL(list.size, 5 * (4 + 8));
    CU_ASSERT_EQUAL(list.end, true);
    CU_ASSERT_EQUAL(parse_keys(&list, got, 16, false, NULL), 5);
    qsort(got, 5, 9, cmp_str);
    CU_ASSERT_STRING_EQUAL(got[0], "aaaa0001");
    CU_ASSERT_STRING_EQUAL(got[4], "aaaa0005");
    list.size = sizeof(buf);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, it, &list), KVS_SUCCESS);
    CU_ASSERT_EQUAL(list.num_entries, 0);
    CU_ASSERT_EQUAL(list.end, true);
    CU_ASSERT_EQUAL(kvs_delete_iterator(ks, it), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_delete_iterator(ks, it), KVS_ERR_ITERATOR_NOT_EXIST);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, it, &list), KVS_ERR_ITERATOR_NOT_EXIST);

    /* a 30-byte buffer holds two 12-byte entries: 2 + 2 + 1 */
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &aaaa, &it), KVS_SUCCESS);
    int total = 0;
    uint32_t per_call[4] = {0};
    bool ends[4] = {false};
    for (int call = 0; call < 4; call++) {
        list.size = 30;
        CU_ASSERT_EQUAL(kvs_iterate_next(ks, it, &list), KVS_SUCCESS);
        per_call[call] = list.num_entries;
        ends[call] = list.end;
        int n = parse_keys(&list, got + total, 16 - total, false, NULL);
        CU_ASSERT(n >= 0);
        total += n > 0 ? n : 0;
        if (list.end) {
            break;
        }
    }
    CU_ASSERT_EQUAL(per_call[0], 2);
    CU_ASSERT_EQUAL(per_call[1], 2);
    CU_ASSERT_EQUAL(per_call[2], 1);
    CU_ASSERT_EQUAL(ends[1], false);
    CU_ASSERT_EQUAL(ends[2], true);
    CU_ASSERT_EQUAL(total, 5);
    qsort(got, 5, 9, cmp_str);
    CU_ASSERT_STRING_EQUAL(got[0], "aaaa0001");
    CU_ASSERT_STRING_EQUAL(got[1], "aaaa0002");
    CU_ASSERT_STRING_EQUAL(got[2], "aaaa0003");
    CU_ASSERT_STRING_EQUAL(got[3], "aaaa0004");
    CU_ASSERT_STRING_EQUAL(got[4], "aaaa0005");
    list.size = 10; /* not even one entry */
    CU_ASSERT_EQUAL(kvs_delete_iterator(ks, it), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &aaaa, &it), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, it, &list), KVS_ERR_BUFFER_SMALL);
    CU_ASSERT_EQUAL(list.num_entries, 0);
    CU_ASSERT_EQUAL(kvs_delete_iterator(ks, it), KVS_SUCCESS);

    /* key+value entries; a one-byte mask; a mask with a low bit clear */
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &with_values, &b_any, &it), KVS_SUCCESS);
    list.size = sizeof(buf);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, it, &list), KVS_SUCCESS);
    CU_ASSERT_EQUAL(list.num_entries, 3);
    CU_ASSERT_EQUAL(list.size, 3 * (4 + 8 + 4) + 13 + 14 + 15);
    CU_ASSERT_EQUAL(parse_keys(&list, got, 16, true, vl), 3);
    for (int i = 0; i < 3; i++) {
        uint32_t want = !strcmp(got[i], "bbbb0001") ? 13 : !strcmp(got[i], "bbbb0002") ? 14 : 15;
        CU_ASSERT_EQUAL(vl[i], want);
    }
    CU_ASSERT_EQUAL(kvs_delete_iterator(ks, it), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &bbb_hi, &it), KVS_SUCCESS);
    list.size = sizeof(buf);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, it, &list), KVS_SUCCESS);
    CU_ASSERT_EQUAL(list.num_entries, 3); /* 'b' (62h) and 'c' (63h) differ in bit 0 only */
    CU_ASSERT_EQUAL(kvs_delete_iterator(ks, it), KVS_SUCCESS);
}

/* Iterator refusals: filter, type, the 16-handle limit, NULLs. */
static void test_iterator_refusals(void)
{
    kvs_key_group_filter outside = {{0xff, 0, 0, 0}, {'a', 'a', 0, 0}};
    kvs_key_group_filter all = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    kvs_option_iterator keys_only = {KVS_ITERATOR_KEY}, garbage = {(kvs_iterator_type)5};
    kvs_iterator_handle its[KVS_MAX_ITERATE_HANDLE], extra = 0;
    uint8_t buf[64];
    kvs_iterator_list list = {0, false, sizeof(buf), buf}, no_buf = {0, false, 64, NULL};

    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &outside, &extra),
                    KVS_ERR_ITERATOR_FILTER_INVALID);
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &garbage, &all, &extra), KVS_ERR_OPTION_INVALID);
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, NULL, &all, &extra), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, NULL, &extra), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &all, NULL), KVS_ERR_PARAM_INVALID);
    for (int i = 0; i < KVS_MAX_ITERATE_HANDLE; i++) {
        CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &all, &its[i]), KVS_SUCCESS);
        CU_ASSERT_EQUAL(its[i], i + 1);
    }
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &all, &extra), KVS_ERR_ITERATOR_MAX);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, 0, &list), KVS_ERR_ITERATOR_NOT_EXIST);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, 17, &list), KVS_ERR_ITERATOR_NOT_EXIST);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, its[0], &no_buf), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_iterate_next(ks, its[0], NULL), KVS_ERR_PARAM_INVALID);
    /* closing the key space closes its iterators: the device has all 16 back */
    CU_ASSERT_EQUAL(kvs_close_key_space(ks), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_open_key_space(dev, (char *)KS_NAME, &ks), KVS_SUCCESS);
    for (int i = 0; i < KVS_MAX_ITERATE_HANDLE; i++) {
        CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &all, &its[i]), KVS_SUCCESS);
    }
}

/* Delete a key group: exactly the bucket's keys go. */
static void test_delete_key_group(void)
{
    kvs_key_group_filter aaaa = {{0xff, 0xff, 0xff, 0xff}, {'a', 'a', 'a', 'a'}};
    kvs_key_group_filter bad = {{0, 0, 0, 0}, {1, 0, 0, 0}};
    static const char *const keys[] = {"aaaa0001", "aaaa0002", "aaaa0003", "aaaa0004",
                                       "aaaa0005", "bbbb0001", "bbbb0002", "bbbc0003"};
    kvs_key k[8];
    uint8_t result[1];
    kvs_exist_list list = {0, NULL, 1, result};

    store_buckets();
    for (int i = 0; i < 8; i++) {
        k[i] = (kvs_key){(void *)keys[i], 8};
    }
    CU_ASSERT_EQUAL(kvs_delete_key_group(ks, &aaaa), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_exist_kv_pairs(ks, 8, k, &list), KVS_SUCCESS);
    CU_ASSERT_EQUAL(result[0], 0xe0);
    CU_ASSERT_EQUAL(kvs_delete_key_group(ks, &bad), KVS_ERR_ITERATOR_FILTER_INVALID);
    CU_ASSERT_EQUAL(kvs_delete_key_group(ks, NULL), KVS_ERR_PARAM_INVALID);
}

/* ---- async ----------------------------------------------------------------------------- */

#define NOPS 40

struct tally {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int calls[NOPS];
    kvs_result result[NOPS];
    kvs_context context[NOPS];
    void *private2[NOPS];
    kvs_key *key[NOPS];     /* the context's key: the kvs_key (exist: array) submitted */
    kvs_value *value[NOPS]; /* the context's value: the kvs_value submitted, or NULL */
    kvs_postprocess_context ctx[NOPS]; /* the whole context, as the callback saw it */
    int total;
};

static struct tally tally;

static void tally_reset(void)
{
    memset(tally.calls, 0, sizeof(tally.calls));
    tally.total = 0;
}

static void on_done(kvs_postprocess_context *ctx)
{
    int i = (int)(intptr_t)ctx->private1;
    pthread_mutex_lock(&tally.lock);
    if (i >= 0 && i < NOPS) {
        tally.calls[i]++;
        tally.result[i] = ctx->result;
        tally.context[i] = ctx->context;
        tally.private2[i] = ctx->private2;
        tally.key[i] = ctx->key;
        tally.value[i] = ctx->value;
        tally.ctx[i] = *ctx;
    }
    tally.total++;
    pthread_cond_broadcast(&tally.cond);
    pthread_mutex_unlock(&tally.lock);
}

/* Wait (10 s at most: a hang fails the test, it does not block it) for @n callbacks. */
static bool wait_for(int n)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&tally.lock);
    while (tally.total < n) {
        if (pthread_cond_timedwait(&tally.cond, &tally.lock, &deadline)) {
            break;
        }
    }
    bool ok = tally.total == n;
    pthread_mutex_unlock(&tally.lock);
    return ok;
}

static void async_key(char *k, int i)
{
    snprintf(k, 9, "asyn%04d", i);
}

/*
 * 40 stores, retrieves, an exist of all 40 and deletes through io_uring,
 * 4 in flight ($KVSSD_QUEUE_DEPTH=4 set by main): each callback fires
 * once, with its private pointers and the right result; the synchronous
 * ioctl path carries none of it.
 */
static void test_async_roundtrip(void)
{
    static char keys[NOPS][9];
    static kvs_key k[NOPS];
    static kvs_value v[NOPS];
    static uint8_t *vals[NOPS], *back[NOPS];
    kvs_option_store post = {KVS_STORE_POST, NULL};

    tally_reset();
    struct loopdev_counts before = loopdev_counts();
    for (int i = 0; i < NOPS; i++) {
        async_key(keys[i], i);
        k[i] = (kvs_key){keys[i], 8};
        uint32_t len = i % 4 == 3 ? 5000u + (uint32_t)i : 10u + (uint32_t)i * 13;
        vals[i] = pattern(len, (uint32_t)i);
        v[i] = (kvs_value){vals[i], len, 0, 0};
        CU_ASSERT_EQUAL(
            kvs_store_kvp_async(ks, &k[i], &v[i], &post, (void *)(intptr_t)i, &tally, on_done),
            KVS_SUCCESS);
    }
    CU_ASSERT(wait_for(NOPS));
    struct loopdev_counts mid = loopdev_counts();
    CU_ASSERT_EQUAL(mid.io_ioctls, before.io_ioctls);
    CU_ASSERT(mid.uring_cmds - before.uring_cmds >= NOPS);
    for (int i = 0; i < NOPS; i++) {
        CU_ASSERT_EQUAL(tally.calls[i], 1);
        CU_ASSERT_EQUAL(tally.result[i], KVS_SUCCESS);
        CU_ASSERT_EQUAL(tally.context[i], KVS_CMD_STORE);
        CU_ASSERT_PTR_EQUAL(tally.private2[i], &tally);
        CU_ASSERT_PTR_EQUAL(tally.key[i], &k[i]);
        CU_ASSERT_PTR_EQUAL(tally.value[i], &v[i]);
    }

    tally_reset();
    for (int i = 0; i < NOPS; i++) {
        back[i] = calloc(1, 8192);
        v[i] = (kvs_value){back[i], 8192, 0, 0};
        CU_ASSERT_EQUAL(
            kvs_retrieve_kvp_async(ks, &k[i], NULL, (void *)(intptr_t)i, NULL, &v[i], on_done),
            KVS_SUCCESS);
    }
    CU_ASSERT(wait_for(NOPS));
    for (int i = 0; i < NOPS; i++) {
        uint32_t len = i % 4 == 3 ? 5000u + (uint32_t)i : 10u + (uint32_t)i * 13;
        CU_ASSERT_EQUAL(tally.calls[i], 1);
        CU_ASSERT_EQUAL(tally.result[i], KVS_SUCCESS);
        CU_ASSERT_EQUAL(tally.context[i], KVS_CMD_RETRIEVE);
        CU_ASSERT_PTR_EQUAL(tally.key[i], &k[i]);
        CU_ASSERT_PTR_EQUAL(tally.value[i], &v[i]);
        CU_ASSERT_EQUAL(v[i].actual_value_size, len);
        CU_ASSERT_EQUAL(v[i].length, len);
        CU_ASSERT_EQUAL(memcmp(back[i], vals[i], len), 0);
    }

    /* exist of all 40 in one call after deleting every 8th */
    tally_reset();
    kvs_option_delete lax = {false};
    for (int i = 0; i < NOPS; i += 8) {
        CU_ASSERT_EQUAL(kvs_delete_kvp_async(ks, &k[i], &lax, (void *)(intptr_t)i, NULL, on_done),
                        KVS_SUCCESS);
    }
    CU_ASSERT(wait_for(NOPS / 8));
    for (int i = 0; i < NOPS; i += 8) {
        CU_ASSERT_EQUAL(tally.calls[i], 1);
        CU_ASSERT_EQUAL(tally.result[i], KVS_SUCCESS);
        CU_ASSERT_EQUAL(tally.context[i], KVS_CMD_DELETE);
        CU_ASSERT_PTR_EQUAL(tally.key[i], &k[i]);
        CU_ASSERT_PTR_NULL(tally.value[i]);
    }
    tally_reset();
    uint8_t bits[NOPS / 8] = {0};
    kvs_exist_list list = {0, NULL, sizeof(bits), bits};
    CU_ASSERT_EQUAL(
        kvs_exist_kv_pairs_async(ks, NOPS, k, &list, (void *)(intptr_t)0, NULL, on_done),
        KVS_SUCCESS);
    CU_ASSERT(wait_for(1));
    CU_ASSERT_EQUAL(tally.calls[0], 1);
    CU_ASSERT_EQUAL(tally.result[0], KVS_SUCCESS);
    CU_ASSERT_EQUAL(tally.context[0], KVS_CMD_EXIST);
    /* OpenMPDK's adapters hand the callback the keys submitted (its sample frees them) */
    CU_ASSERT_PTR_EQUAL(tally.key[0], k);
    CU_ASSERT_PTR_NULL(tally.value[0]);
    for (int b = 0; b < NOPS / 8; b++) {
        CU_ASSERT_EQUAL(bits[b], 0xfe); /* key 8b deleted, 8b+1..8b+7 present */
    }
    CU_ASSERT_EQUAL(list.length, NOPS / 8);
    for (int i = 0; i < NOPS; i++) {
        free(vals[i]);
        free(back[i]);
    }
}

/* Async refusals come back at once (no callback); device refusals come back in the callback. */
static void test_async_results(void)
{
    kvs_key key = {(void *)"asyncres", 8}, short_key = {(void *)"ab", 2};
    kvs_value one = {(void *)"one", 3, 0, 0};
    kvs_option_store noover = {KVS_STORE_NOOVERWRITE, NULL};
    kvs_option_delete strict = {true};
    kvs_option_retrieve and_delete = {true};
    uint8_t buf[4096];
    kvs_value back = {buf, sizeof(buf), 0, 0};

    tally_reset();
    CU_ASSERT_EQUAL(kvs_store_kvp_async(ks, &key, &one, NULL, NULL, NULL, NULL),
                    KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp_async(ks, &short_key, &one, NULL, NULL, NULL, on_done),
                    KVS_ERR_KEY_LENGTH_INVALID);
    CU_ASSERT_EQUAL(kvs_retrieve_kvp_async(ks, &key, &and_delete, NULL, NULL, &back, on_done),
                    KVS_ERR_OPTION_INVALID);
    CU_ASSERT_EQUAL(kvs_delete_kvp_async(ks, NULL, NULL, NULL, NULL, on_done),
                    KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_exist_kv_pairs_async(ks, 1, &key, NULL, NULL, NULL, on_done),
                    KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_iterate_next_async(ks, 1, NULL, NULL, NULL, on_done),
                    KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_delete_key_group_async(ks, NULL, NULL, NULL, on_done),
                    KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_store_kvp_async(NULL, &key, &one, NULL, NULL, NULL, on_done),
                    KVS_ERR_PARAM_INVALID);

    CU_ASSERT_EQUAL(kvs_retrieve_kvp_async(ks, &key, NULL, (void *)1, NULL, &back, on_done),
                    KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_delete_kvp_async(ks, &key, &strict, (void *)2, NULL, on_done), KVS_SUCCESS);
    CU_ASSERT(wait_for(2));
    CU_ASSERT_EQUAL(tally.result[1], KVS_ERR_KEY_NOT_EXIST);
    CU_ASSERT_EQUAL(tally.result[2], KVS_ERR_KEY_NOT_EXIST);

    tally_reset();
    CU_ASSERT_EQUAL(kvs_store_kvp_async(ks, &key, &one, &noover, (void *)3, NULL, on_done),
                    KVS_SUCCESS);
    CU_ASSERT(wait_for(1));
    CU_ASSERT_EQUAL(kvs_store_kvp_async(ks, &key, &one, &noover, (void *)4, NULL, on_done),
                    KVS_SUCCESS);
    CU_ASSERT(wait_for(2));
    CU_ASSERT_EQUAL(tally.result[3], KVS_SUCCESS);
    CU_ASSERT_EQUAL(tally.result[4], KVS_ERR_VALUE_UPDATE_NOT_ALLOWED);

    /* an offset retrieve and a strict delete of a present key */
    tally_reset();
    uint8_t *v = pattern(3000, 9);
    CU_ASSERT_EQUAL(put("asyncoff", v, 3000), KVS_SUCCESS);
    kvs_key off_key = {(void *)"asyncoff", 8};
    kvs_value part = {buf, 1000, 0, 2048};
    memset(buf, 0, sizeof(buf));
    CU_ASSERT_EQUAL(kvs_retrieve_kvp_async(ks, &off_key, NULL, (void *)5, NULL, &part, on_done),
                    KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_delete_kvp_async(ks, &key, &strict, (void *)6, NULL, on_done), KVS_SUCCESS);
    CU_ASSERT(wait_for(2));
    CU_ASSERT_EQUAL(tally.result[5], KVS_SUCCESS);
    CU_ASSERT_EQUAL(part.length, 952);
    CU_ASSERT_EQUAL(part.actual_value_size, 3000);
    CU_ASSERT_EQUAL(memcmp(buf, v + 2048, 952), 0);
    CU_ASSERT_EQUAL(tally.result[6], KVS_SUCCESS);
    CU_ASSERT_EQUAL(get("asyncres", buf, 16, 0, NULL), KVS_ERR_KEY_NOT_EXIST);
    free(v);
}

/* kvs_iterate_next_async and kvs_delete_key_group_async run on the completion thread. */
static void test_async_iterator_group(void)
{
    kvs_key_group_filter aaaa = {{0xff, 0xff, 0xff, 0xff}, {'a', 'a', 'a', 'a'}};
    kvs_key_group_filter b = {{0xff, 0, 0, 0}, {'b', 0, 0, 0}};
    kvs_option_iterator keys_only = {KVS_ITERATOR_KEY};
    kvs_iterator_handle it;
    uint8_t buf[KVS_ITERATOR_BUFFER_SIZE];
    kvs_iterator_list list = {0, false, sizeof(buf), buf};
    char got[8][9];

    store_buckets();
    tally_reset();
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &aaaa, &it), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_iterate_next_async(ks, it, &list, (void *)7, NULL, on_done), KVS_SUCCESS);
    CU_ASSERT(wait_for(1));
    CU_ASSERT_EQUAL(tally.result[7], KVS_SUCCESS);
    CU_ASSERT_EQUAL(tally.context[7], KVS_CMD_ITER_NEXT);
    CU_ASSERT_EQUAL(list.num_entries, 5);
    CU_ASSERT_EQUAL(list.end, true);
    CU_ASSERT_EQUAL(parse_keys(&list, got, 8, false, NULL), 5);
    CU_ASSERT_EQUAL(kvs_delete_iterator(ks, it), KVS_SUCCESS);
    CU_ASSERT_EQUAL(kvs_iterate_next_async(ks, it, &list, (void *)8, NULL, on_done), KVS_SUCCESS);
    CU_ASSERT(wait_for(2));
    CU_ASSERT_EQUAL(tally.result[8], KVS_ERR_ITERATOR_NOT_EXIST);

    tally_reset();
    CU_ASSERT_EQUAL(kvs_delete_key_group_async(ks, &b, (void *)9, NULL, on_done), KVS_SUCCESS);
    CU_ASSERT(wait_for(1));
    CU_ASSERT_EQUAL(tally.result[9], KVS_SUCCESS);
    CU_ASSERT_EQUAL(tally.context[9], KVS_CMD_DELETE_GROUP);
    kvs_key k[3] = {{(void *)"bbbb0001", 8}, {(void *)"bbbc0003", 8}, {(void *)"aaaa0003", 8}};
    uint8_t bits = 0;
    kvs_exist_list el = {0, NULL, 1, &bits};
    CU_ASSERT_EQUAL(kvs_exist_kv_pairs(ks, 3, k, &el), KVS_SUCCESS);
    CU_ASSERT_EQUAL(bits, 0x04);
}

/*
 * The context of call @i (private1 = i) holds what OpenMPDK's adapters
 * (kvkdd.cpp, kvemuldriver.cpp: prep_io_context()) put there: the
 * kvs_key (exist: the array) and kvs_value submitted or NULL, no option,
 * the result buffer of exist and iterate-next, the iterator handle of
 * iterate-next, 0 for the others.
 */
static void check_ctx(int i, kvs_context kind, kvs_result result, const kvs_key *key,
                      const kvs_value *value, kvs_iterator_handle it, const void *result_buffer)
{
    const kvs_postprocess_context *c = &tally.ctx[i];
    CU_ASSERT_EQUAL(tally.calls[i], 1);
    CU_ASSERT_EQUAL(c->context, kind);
    CU_ASSERT_PTR_EQUAL(c->ks_hd, ks);
    CU_ASSERT_PTR_EQUAL(c->key, key);
    CU_ASSERT_PTR_EQUAL(c->value, value);
    CU_ASSERT_PTR_NULL(c->option);
    CU_ASSERT_PTR_EQUAL(c->private1, (void *)(intptr_t)i);
    CU_ASSERT_PTR_EQUAL(c->private2, &tally.calls[i]);
    CU_ASSERT_EQUAL(c->result, result);
    CU_ASSERT_EQUAL(c->iter_hd, it);
    CU_ASSERT_PTR_EQUAL((void *)c->result_buffer.list, result_buffer);
}

/* Every field of the post-process context, for every _async call, on success and failure. */
static void test_async_context(void)
{
    kvs_key key = {(void *)"ctx0aaaa", 8}, absent = {(void *)"ctx0zzzz", 8};
    kvs_key pair[2] = {{(void *)"ctx0aaaa", 8}, {(void *)"ctx0zzzz", 8}};
    kvs_value one = {(void *)"one", 3, 0, 0};
    uint8_t buf[4096];
    kvs_value back = {buf, sizeof(buf), 0, 0};
    kvs_option_store post = {KVS_STORE_POST, NULL}, noover = {KVS_STORE_NOOVERWRITE, NULL};
    kvs_option_retrieve plain = {false};
    kvs_option_delete strict = {true};
    int n = 0;

    tally_reset();
#define ASYNC(call)                         \
    do {                                    \
        CU_ASSERT_EQUAL(call, KVS_SUCCESS); \
        CU_ASSERT(wait_for(++n));           \
    } while (0)
    ASYNC(kvs_store_kvp_async(ks, &key, &one, &post, (void *)0, &tally.calls[0], on_done));
    check_ctx(0, KVS_CMD_STORE, KVS_SUCCESS, &key, &one, 0, NULL);
    ASYNC(kvs_store_kvp_async(ks, &key, &one, &noover, (void *)1, &tally.calls[1], on_done));
    check_ctx(1, KVS_CMD_STORE, KVS_ERR_VALUE_UPDATE_NOT_ALLOWED, &key, &one, 0, NULL);

    ASYNC(kvs_retrieve_kvp_async(ks, &key, &plain, (void *)2, &tally.calls[2], &back, on_done));
    check_ctx(2, KVS_CMD_RETRIEVE, KVS_SUCCESS, &key, &back, 0, NULL);
    CU_ASSERT_EQUAL(back.length, 3);
    ASYNC(kvs_retrieve_kvp_async(ks, &absent, &plain, (void *)3, &tally.calls[3], &back, on_done));
    check_ctx(3, KVS_CMD_RETRIEVE, KVS_ERR_KEY_NOT_EXIST, &absent, &back, 0, NULL);

    uint8_t bits = 0xff;
    kvs_exist_list list = {0, NULL, 1, &bits};
    ASYNC(kvs_exist_kv_pairs_async(ks, 2, pair, &list, (void *)4, &tally.calls[4], on_done));
    check_ctx(4, KVS_CMD_EXIST, KVS_SUCCESS, pair, NULL, 0, &list);
    CU_ASSERT_EQUAL(bits, 0x01);

    kvs_key_group_filter ctx0 = {{0xff, 0xff, 0xff, 0xff}, {'c', 't', 'x', '0'}};
    kvs_option_iterator keys_only = {KVS_ITERATOR_KEY};
    kvs_iterator_handle it;
    uint8_t ibuf[KVS_ITERATOR_BUFFER_SIZE];
    kvs_iterator_list ilist = {0, false, sizeof(ibuf), ibuf};
    CU_ASSERT_EQUAL(kvs_create_iterator(ks, &keys_only, &ctx0, &it), KVS_SUCCESS);
    ASYNC(kvs_iterate_next_async(ks, it, &ilist, (void *)5, &tally.calls[5], on_done));
    check_ctx(5, KVS_CMD_ITER_NEXT, KVS_SUCCESS, NULL, NULL, it, &ilist);
    CU_ASSERT_EQUAL(ilist.num_entries, 1);
    CU_ASSERT_EQUAL(kvs_delete_iterator(ks, it), KVS_SUCCESS);
    ASYNC(kvs_iterate_next_async(ks, it, &ilist, (void *)6, &tally.calls[6], on_done));
    check_ctx(6, KVS_CMD_ITER_NEXT, KVS_ERR_ITERATOR_NOT_EXIST, NULL, NULL, it, &ilist);

    ASYNC(kvs_delete_kvp_async(ks, &key, &strict, (void *)7, &tally.calls[7], on_done));
    check_ctx(7, KVS_CMD_DELETE, KVS_SUCCESS, &key, NULL, 0, NULL);
    ASYNC(kvs_delete_kvp_async(ks, &key, &strict, (void *)8, &tally.calls[8], on_done));
    check_ctx(8, KVS_CMD_DELETE, KVS_ERR_KEY_NOT_EXIST, &key, NULL, 0, NULL);

    ASYNC(kvs_delete_key_group_async(ks, &ctx0, (void *)9, &tally.calls[9], on_done));
    check_ctx(9, KVS_CMD_DELETE_GROUP, KVS_SUCCESS, NULL, NULL, 0, NULL);
#undef ASYNC
}

/* Closing the device waits for the async calls in flight: every callback has run. */
static void test_async_close_drains(void)
{
    static char keys[NOPS][9];
    static kvs_key k[NOPS];
    static kvs_value v[NOPS];
    tally_reset();
    for (int i = 0; i < NOPS; i++) {
        async_key(keys[i], i + 100);
        k[i] = (kvs_key){keys[i], 8};
        v[i] = (kvs_value){keys[i], 8, 0, 0};
        CU_ASSERT_EQUAL(
            kvs_store_kvp_async(ks, &k[i], &v[i], NULL, (void *)(intptr_t)i, NULL, on_done),
            KVS_SUCCESS);
    }
    CU_ASSERT_EQUAL(kvs_close_key_space(ks), KVS_SUCCESS);
    pthread_mutex_lock(&tally.lock);
    CU_ASSERT_EQUAL(tally.total, NOPS);
    pthread_mutex_unlock(&tally.lock);
}

/* ---- hostile handles and URIs -------------------------------------------------------- */

static void test_hostile(void)
{
    kvs_device_handle d2 = NULL;
    char long_uri[100];
    uint64_t cap;
    int junk[64] = {0};
    char path[] = "/tmp/snia-not-a-device-XXXXXX";
    int fd = mkstemp(path);

    memset(long_uri, 'x', sizeof(long_uri) - 1);
    long_uri[sizeof(long_uri) - 1] = '\0';
    CU_ASSERT_EQUAL(kvs_open_device(NULL, &d2), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_open_device((char *)LOOPDEV_PATH, NULL), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_open_device((char *)"", &d2), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_open_device(long_uri, &d2), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_open_device((char *)"/dev/ng-does-not-exist", &d2), KVS_ERR_DEV_NOT_EXIST);
    CU_ASSERT(fd >= 0);
    CU_ASSERT_EQUAL(kvs_open_device(path, &d2), KVS_ERR_DEV_NOT_EXIST);
    close(fd);
    unlink(path);
    CU_ASSERT_EQUAL(kvs_open_device((char *)LOOPDEV_PATH, &d2), KVS_ERR_SYS_IO); /* open twice */
    CU_ASSERT_EQUAL(kvs_get_device_capacity((kvs_device_handle)junk, &cap), KVS_ERR_DEV_NOT_OPENED);
    CU_ASSERT_EQUAL(kvs_close_device((kvs_device_handle)junk), KVS_ERR_DEV_NOT_OPENED);
    CU_ASSERT_EQUAL(kvs_close_device(NULL), KVS_ERR_PARAM_INVALID);
    CU_ASSERT_EQUAL(kvs_close_key_space((kvs_key_space_handle)junk), KVS_ERR_KS_NOT_OPEN);
    CU_ASSERT_EQUAL(kvs_delete_iterator((kvs_key_space_handle)junk, 1), KVS_ERR_KS_NOT_OPEN);
    CU_ASSERT_STRING_EQUAL(kvs_errstr(KVS_ERR_KEY_NOT_EXIST),
                           "KVS_ERR_KEY_NOT_EXIST: the key does not exist");
    CU_ASSERT_STRING_EQUAL(kvs_errstr(0x99), "unknown kvs_result");
    CU_ASSERT_STRING_EQUAL(kvs_errstr(-1), "unknown kvs_result");

    /* a bad $KVSSD_QUEUE_DEPTH is refused when the device is opened */
    CU_ASSERT_EQUAL(kvs_close_device(dev), KVS_SUCCESS);
    setenv("KVSSD_QUEUE_DEPTH", "0", 1);
    CU_ASSERT_EQUAL(kvs_open_device((char *)LOOPDEV_PATH, &dev), KVS_ERR_OPTION_INVALID);
    setenv("KVSSD_QUEUE_DEPTH", "257", 1);
    CU_ASSERT_EQUAL(kvs_open_device((char *)LOOPDEV_PATH, &dev), KVS_ERR_OPTION_INVALID);
    setenv("KVSSD_QUEUE_DEPTH", "4k", 1);
    CU_ASSERT_EQUAL(kvs_open_device((char *)LOOPDEV_PATH, &dev), KVS_ERR_OPTION_INVALID);
    setenv("KVSSD_QUEUE_DEPTH", "4", 1);
    CU_ASSERT_EQUAL(kvs_open_device((char *)LOOPDEV_PATH, &dev), KVS_SUCCESS);
}

/* kvs_malloc honours the alignment; a non-power-of-two alignment gets NULL. */
static void test_memory(void)
{
    void *p = kvs_malloc(100, 4096);
    uint8_t *z = (uint8_t *)kvs_zalloc(64, 64);
    CU_ASSERT_PTR_NOT_NULL(p);
    CU_ASSERT_EQUAL((uintptr_t)p % 4096, 0);
    CU_ASSERT_PTR_NOT_NULL(z);
    CU_ASSERT_EQUAL((uintptr_t)z % 64, 0);
    CU_ASSERT_EQUAL(z ? z[0] | z[63] : 1, 0);
    CU_ASSERT_PTR_NULL(kvs_malloc(16, 48));
    kvs_free(p);
    kvs_free(z);
    kvs_free(NULL);
}

static const struct tap_test tests[] = {
    TAP_TEST(device_info),
    TAP_TEST(key_space),
    TAP_TEST(store_retrieve),
    TAP_TEST(store_refusals),
    TAP_TEST(store_options),
    TAP_TEST(retrieve_partial),
    TAP_TEST(kvp_info),
    TAP_TEST(delete),
    TAP_TEST(exist),
    TAP_TEST(iterator),
    TAP_TEST(iterator_refusals),
    TAP_TEST(delete_key_group),
    TAP_TEST(async_roundtrip),
    TAP_TEST(async_results),
    TAP_TEST(async_iterator_group),
    TAP_TEST(async_context),
    TAP_TEST(async_close_drains),
    TAP_TEST(hostile),
    TAP_TEST(memory),
};

int main(void)
{
    /* 4 operations in flight: the queue-full path runs in every async test */
    setenv("KVSSD_QUEUE_DEPTH", "4", 1);
    pthread_mutex_init(&tally.lock, NULL);
    pthread_cond_init(&tally.cond, NULL);
    const struct tap_suite suite = TAP_SUITE_FIXTURE("snia", fixture_open, fixture_close, tests);
    return tap_main(&suite, 1);
}
