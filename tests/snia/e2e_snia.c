/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every call of the SNIA KV API from C, against the device named by
 * argv[1], printing TAP; <kvs_api.h> and libc only, so that it builds
 * wherever libkvapi is installed:
 *
 *   cc e2e_snia.c $(pkg-config --cflags --libs kvapi) -o e2e_snia && ./e2e_snia /dev/ng0n1
 *
 * It ERASES the namespace first (kvs_delete_key_space = Format NVM), so its
 * expected values are exact on any device. The unit suite links it with
 * loopdev_boot.c and runs it on the in-process device ("/dev/null").
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kvs_api.h>

static int test_no, failures;

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        int ok_ = (cond);                                                                   \
        printf("%s %d - line %d: %s\n", ok_ ? "ok" : "not ok", ++test_no, __LINE__, #cond); \
        failures += !ok_;                                                                   \
    } while (0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int calls, failed_calls;
static kvs_context last_context;

static void on_complete(kvs_postprocess_context *ctx)
{
    pthread_mutex_lock(&lock);
    calls++;
    failed_calls += ctx->result != KVS_SUCCESS;
    last_context = ctx->context;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* Wait (10 s at most) until @n callbacks ran since the last reset; then reset. */
static int wait_calls(int n)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&lock);
    while (calls < n && pthread_cond_timedwait(&cond, &lock, &deadline) == 0) {
    }
    int ok = calls == n && failed_calls == 0;
    calls = failed_calls = 0;
    pthread_mutex_unlock(&lock);
    return ok;
}

/* Keys of the iterator list, in OpenMPDK's layout, all of @klen bytes and prefix @prefix? */
static int list_ok(const kvs_iterator_list *l, uint32_t klen, const char *prefix)
{
    const uint8_t *p = l->it_list;
    for (uint32_t i = 0; i < l->num_entries; i++) {
        uint32_t kl;
        memcpy(&kl, p, 4);
        if (kl != klen || memcmp(p + 4, prefix, strlen(prefix))) {
            return 0;
        }
        p += 4 + kl;
    }
    return (uint32_t)(p - l->it_list) == l->size;
}

int main(int argc, char **argv)
{
    kvs_device_handle dev;
    kvs_key_space_handle ks;
    char name[] = "e2e_snia";
    kvs_key_space_name ks_name = {(uint32_t)strlen(name), name};
    kvs_option_key_space ks_opt = {KVS_KEY_ORDER_NONE};

    if (argc != 2) {
        printf("Bail out! usage: %s /dev/ngXnY\n", argv[0]);
        return 1;
    }
    kvs_result r = kvs_open_device(argv[1], &dev);
    if (r != KVS_SUCCESS) {
        printf("Bail out! kvs_open_device(%s): %s\n", argv[1], kvs_errstr(r));
        return 1;
    }
    CHECK(kvs_create_key_space(dev, &ks_name, 0, ks_opt) == KVS_SUCCESS);
    CHECK(kvs_delete_key_space(dev, &ks_name) == KVS_SUCCESS); /* an empty namespace */

    /* device */
    kvs_device info;
    uint64_t capacity = 0;
    uint32_t v = 0;
    CHECK(kvs_get_device_info(dev, &info) == KVS_SUCCESS && info.max_key_len == 255 &&
          info.max_value_len == KVS_MAX_VALUE_LENGTH);
    CHECK(kvs_get_device_capacity(dev, &capacity) == KVS_SUCCESS && capacity == info.capacity &&
          capacity > 0);
    CHECK(kvs_get_device_utilization(dev, &v) == KVS_SUCCESS && v == 0);
    CHECK(kvs_get_min_key_length(dev, &v) == KVS_SUCCESS && v == 4);
    CHECK(kvs_get_max_key_length(dev, &v) == KVS_SUCCESS && v == 255);
    CHECK(kvs_get_min_value_length(dev, &v) == KVS_SUCCESS && v == 0);
    CHECK(kvs_get_max_value_length(dev, &v) == KVS_SUCCESS && v == KVS_MAX_VALUE_LENGTH);
    CHECK(kvs_get_optimal_value_length(dev, &v) == KVS_SUCCESS &&
          v == info.optimal_value_granularity);

    /* key space */
    char nbuf[64];
    kvs_key_space_name names[1] = {{sizeof(nbuf), nbuf}};
    uint32_t cnt = 9;
    CHECK(kvs_create_key_space(dev, &ks_name, 0, ks_opt) == KVS_SUCCESS);
    CHECK(kvs_list_key_spaces(dev, 1, sizeof(names), names, &cnt) == KVS_SUCCESS && cnt == 1 &&
          strcmp(nbuf, name) == 0);
    CHECK(kvs_open_key_space(dev, name, &ks) == KVS_SUCCESS);

    /* sync pairs: 8 keys "pair000N", values of N * 1000 bytes; a 200-byte key */
    char keys[8][9];
    kvs_key k[8];
    static uint8_t val[8000], back[8192];
    for (int i = 0; i < 8; i++) {
        snprintf(keys[i], sizeof(keys[i]), "pair%04d", i);
        k[i] = (kvs_key){keys[i], 8};
        memset(val, 'a' + i, sizeof(val));
        kvs_value kv = {val, (uint32_t)i * 1000, 0, 0};
        CHECK(kvs_store_kvp(ks, &k[i], &kv, NULL) == KVS_SUCCESS);
    }
    kvs_value rv = {back, sizeof(back), 0, 0};
    CHECK(kvs_retrieve_kvp(ks, &k[5], NULL, &rv) == KVS_SUCCESS && rv.length == 5000 &&
          rv.actual_value_size == 5000 && back[0] == 'f' && back[4999] == 'f');
    kvs_value part = {back, 1024, 0, 2048};
    CHECK(kvs_retrieve_kvp(ks, &k[5], NULL, &part) == KVS_ERR_BUFFER_SMALL && part.length == 1024 &&
          part.actual_value_size == 5000);
    char long_key[200];
    memset(long_key, 'L', sizeof(long_key));
    kvs_key lk = {long_key, sizeof(long_key)};
    kvs_value lv = {(void *)"long", 4, 0, 0};
    kvs_option_store noover = {KVS_STORE_NOOVERWRITE, NULL};
    CHECK(kvs_store_kvp(ks, &lk, &lv, &noover) == KVS_SUCCESS);
    CHECK(kvs_store_kvp(ks, &lk, &lv, &noover) == KVS_ERR_VALUE_UPDATE_NOT_ALLOWED);
    uint8_t kbuf[255];
    kvs_kvp_info kvp = {0, kbuf, 0};
    CHECK(kvs_get_kvp_info(ks, &lk, &kvp) == KVS_SUCCESS && kvp.key_len == 200 &&
          kvp.value_len == 4);
    kvs_key_space ksi;
    kvs_key_space_name ksi_name = {sizeof(nbuf), nbuf};
    ksi.name = &ksi_name;
    CHECK(kvs_get_key_space_info(ks, &ksi) == KVS_SUCCESS && ksi.count == 9 && ksi.opened);

    uint8_t bits[2] = {0xff, 0xff};
    kvs_exist_list el = {0, NULL, sizeof(bits), bits};
    kvs_option_delete strict = {true};
    CHECK(kvs_delete_kvp(ks, &k[3], &strict) == KVS_SUCCESS);
    CHECK(kvs_delete_kvp(ks, &k[3], &strict) == KVS_ERR_KEY_NOT_EXIST);
    CHECK(kvs_exist_kv_pairs(ks, 8, k, &el) == KVS_SUCCESS && bits[0] == 0xf7 && bits[1] == 0xff &&
          el.length == 1);

    /* iterator over "pair": 7 keys, 3 per 36-byte call */
    kvs_key_group_filter pair = {{0xff, 0xff, 0xff, 0xff}, {'p', 'a', 'i', 'r'}};
    kvs_option_iterator keys_only = {KVS_ITERATOR_KEY};
    kvs_iterator_handle it;
    static uint8_t itbuf[KVS_ITERATOR_BUFFER_SIZE];
    kvs_iterator_list il = {0, false, 36, itbuf};
    CHECK(kvs_create_iterator(ks, &keys_only, &pair, &it) == KVS_SUCCESS);
    uint32_t total = 0;
    int shaped = 1;
    for (int round = 0; round < 10; round++) {
        il.size = 36;
        if (kvs_iterate_next(ks, it, &il) != KVS_SUCCESS) {
            shaped = 0;
            break;
        }
        shaped &= il.num_entries <= 3 && list_ok(&il, 8, "pair");
        total += il.num_entries;
        if (il.end) {
            break;
        }
    }
    CHECK(shaped && total == 7 && il.end);
    CHECK(kvs_delete_iterator(ks, it) == KVS_SUCCESS);

    /* async: 16 stores, 16 retrieves, an exist, an iterator read, deletes, a key group */
    char akeys[16][9];
    kvs_key ak[16];
    static uint8_t avals[16][600], aback[16][600];
    kvs_value av[16], arv[16];
    kvs_option_store post = {KVS_STORE_POST, NULL};
    int queued = 1;
    for (int i = 0; i < 16; i++) {
        snprintf(akeys[i], sizeof(akeys[i]), "asyn%04d", i);
        ak[i] = (kvs_key){akeys[i], 8};
        memset(avals[i], 'A' + i, sizeof(avals[i]));
        av[i] = (kvs_value){avals[i], sizeof(avals[i]), 0, 0};
        queued &= kvs_store_kvp_async(ks, &ak[i], &av[i], &post, NULL, NULL, on_complete) ==
                  KVS_SUCCESS;
    }
    CHECK(queued && wait_calls(16) && last_context == KVS_CMD_STORE);
    for (int i = 0; i < 16; i++) {
        arv[i] = (kvs_value){aback[i], sizeof(aback[i]), 0, 0};
        queued &= kvs_retrieve_kvp_async(ks, &ak[i], NULL, NULL, NULL, &arv[i], on_complete) ==
                  KVS_SUCCESS;
    }
    int same = 1;
    CHECK(queued && wait_calls(16));
    for (int i = 0; i < 16; i++) {
        same &= arv[i].actual_value_size == 600 && memcmp(aback[i], avals[i], 600) == 0;
    }
    CHECK(same);
    uint8_t abits[2] = {0, 0};
    kvs_exist_list ael = {0, NULL, sizeof(abits), abits};
    CHECK(kvs_exist_kv_pairs_async(ks, 16, ak, &ael, NULL, NULL, on_complete) == KVS_SUCCESS &&
          wait_calls(1) && abits[0] == 0xff && abits[1] == 0xff);
    kvs_key_group_filter asyn = {{0xff, 0xff, 0xff, 0xff}, {'a', 's', 'y', 'n'}};
    CHECK(kvs_create_iterator(ks, &keys_only, &asyn, &it) == KVS_SUCCESS);
    il.size = sizeof(itbuf);
    CHECK(kvs_iterate_next_async(ks, it, &il, NULL, NULL, on_complete) == KVS_SUCCESS &&
          wait_calls(1) && il.num_entries == 16 && il.end && list_ok(&il, 8, "asyn"));
    CHECK(kvs_delete_iterator(ks, it) == KVS_SUCCESS);
    CHECK(kvs_delete_kvp_async(ks, &ak[0], &strict, NULL, NULL, on_complete) == KVS_SUCCESS &&
          wait_calls(1) && last_context == KVS_CMD_DELETE);
    CHECK(kvs_delete_key_group_async(ks, &asyn, NULL, NULL, on_complete) == KVS_SUCCESS &&
          wait_calls(1) && last_context == KVS_CMD_DELETE_GROUP);
    CHECK(kvs_delete_key_group(ks, &pair) == KVS_SUCCESS);
    CHECK(kvs_get_key_space_info(ks, &ksi) == KVS_SUCCESS && ksi.count == 1); /* the long key */

    /* refusals */
    kvs_key short_key = {(void *)"abc", 3};
    kvs_option_store append = {KVS_STORE_APPEND, NULL};
    CHECK(kvs_store_kvp(ks, &short_key, &lv, NULL) == KVS_ERR_KEY_LENGTH_INVALID);
    CHECK(kvs_store_kvp(ks, &lk, &lv, &append) == KVS_ERR_OPTION_INVALID);
    CHECK(kvs_store_kvp(ks, NULL, &lv, NULL) == KVS_ERR_PARAM_INVALID);
    CHECK(kvs_retrieve_kvp(ks, &k[3], NULL, &rv) == KVS_ERR_KEY_NOT_EXIST);

    /* close and erase */
    CHECK(kvs_close_key_space(ks) == KVS_SUCCESS);
    CHECK(kvs_delete_key_space(dev, &ks_name) == KVS_SUCCESS);
    CHECK(kvs_close_device(dev) == KVS_SUCCESS);
    CHECK(strncmp(kvs_errstr(KVS_ERR_SYS_IO), "KVS_ERR_SYS_IO", 14) == 0);
    void *m = kvs_zalloc(100, 512);
    CHECK(m && ((uintptr_t)m % 512) == 0);
    kvs_free(m);
    printf("1..%d\n", test_no);
    return failures ? 1 : 0;
}
