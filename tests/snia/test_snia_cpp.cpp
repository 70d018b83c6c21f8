// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A C++ program in the style of OpenMPDK's sample_code (test_sync.cpp,
 * test_async.cpp): kvs_malloc'd buffers, positional initializers,
 * std::atomic completion counters, callbacks that are plain functions.
 * It uses <kvs_api.h> only and exercises every call of the API against
 * the device named by argv[1], printing TAP:
 *
 *   c++ test_snia_cpp.cpp $(pkg-config --cflags --libs kvapi) && ./a.out /dev/ng0n1
 *
 * It ERASES the namespace first (kvs_delete_key_space = Format NVM), so
 * its counts are exact on any device. The unit suite links it with
 * loopdev_boot.c, which starts the in-process device behind "/dev/null".
 */
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <kvs_api.h>

static int test_no = 0;
static int failures = 0;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        bool ok_ = (cond);                                                                         \
        printf("%s %d - %s:%d %s\n", ok_ ? "ok" : "not ok", ++test_no, __FILE__, __LINE__, #cond); \
        failures += ok_ ? 0 : 1;                                                                   \
    } while (0)

struct completions {
    std::atomic<int> calls{0};
    std::atomic<int> failed{0};
};

static void on_complete(kvs_postprocess_context *ctx)
{
    completions *c = static_cast<completions *>(ctx->private1);
    if (ctx->result != KVS_SUCCESS) {
        c->failed++;
    }
    c->calls++;
}

static bool wait_calls(completions &c, int n)
{
    for (int i = 0; i < 10000 && c.calls.load() < n; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return c.calls.load() == n;
}

int main(int argc, char **argv)
{
    kvs_device_handle dev;
    if (argc != 2) {
        printf("Bail out! usage: %s /dev/ngXnY\n", argv[0]);
        return 1;
    }
    kvs_result r = kvs_open_device(argv[1], &dev);
    if (r != KVS_SUCCESS) {
        printf("Bail out! kvs_open_device(%s): %s\n", argv[1], kvs_errstr(r));
        return 1;
    }
    // start from an empty namespace: name the key space and delete it (Format NVM)
    char ks_name[] = "keyspace_test";
    kvs_key_space_name ks_nm = {(uint32_t)strlen(ks_name), ks_name};
    kvs_option_key_space ks_opt = {KVS_KEY_ORDER_NONE};
    CHECK(kvs_create_key_space(dev, &ks_nm, 0, ks_opt) == KVS_SUCCESS);
    CHECK(kvs_delete_key_space(dev, &ks_nm) == KVS_SUCCESS);

    // device information, as the samples print it
    kvs_device info;
    uint64_t capacity = 0;
    uint32_t util = 1, len = 0;
    CHECK(kvs_get_device_info(dev, &info) == KVS_SUCCESS);
    CHECK(info.max_key_len == 255 && info.max_value_len == 2 * 1024 * 1024);
    CHECK(kvs_get_device_capacity(dev, &capacity) == KVS_SUCCESS && capacity == info.capacity);
    CHECK(kvs_get_device_utilization(dev, &util) == KVS_SUCCESS && util == 0);
    CHECK(kvs_get_min_key_length(dev, &len) == KVS_SUCCESS && len == KVS_MIN_KEY_LENGTH);
    CHECK(kvs_get_max_key_length(dev, &len) == KVS_SUCCESS && len == KVS_MAX_KEY_LENGTH);
    CHECK(kvs_get_min_value_length(dev, &len) == KVS_SUCCESS && len == KVS_MIN_VALUE_LENGTH);
    CHECK(kvs_get_max_value_length(dev, &len) == KVS_SUCCESS && len == KVS_MAX_VALUE_LENGTH);
    CHECK(kvs_get_optimal_value_length(dev, &len) == KVS_SUCCESS &&
          len == info.optimal_value_granularity);

    // the samples' _env_init: list, delete what is listed, create, open
    const uint32_t retrieve_cnt = 2;
    kvs_key_space_name names[retrieve_cnt];
    for (uint32_t i = 0; i < retrieve_cnt; i++) {
        names[i].name_len = MAX_KEYSPACE_NAME_LEN;
        names[i].name = (char *)malloc(MAX_KEYSPACE_NAME_LEN);
    }
    uint32_t valid_cnt = 9;
    CHECK(kvs_list_key_spaces(dev, 1, retrieve_cnt * sizeof(kvs_key_space_name), names,
                              &valid_cnt) == KVS_SUCCESS &&
          valid_cnt == 0);
    CHECK(kvs_create_key_space(dev, &ks_nm, 0, ks_opt) == KVS_SUCCESS);
    CHECK(kvs_list_key_spaces(dev, 1, retrieve_cnt * sizeof(kvs_key_space_name), names,
                              &valid_cnt) == KVS_SUCCESS &&
          valid_cnt == 1 && std::string(names[0].name) == ks_name);
    kvs_key_space_handle ks;
    CHECK(kvs_open_key_space(dev, ks_name, &ks) == KVS_SUCCESS);

    // synchronous stores and reads of 16-byte keys and 4 KiB values
    const uint16_t klen = 16;
    const uint32_t vlen = 4096;
    char *key = (char *)kvs_malloc(klen, 4096);
    char *value = (char *)kvs_malloc(vlen, 4096);
    char *back = (char *)kvs_zalloc(vlen, 4096);
    bool stored = true, read_back = true;
    for (int i = 0; i < 20; i++) {
        snprintf(key, klen, "%015d", i); // 15 digits and the NUL: 16 key bytes
        memset(value, 'a' + i, vlen);
        kvs_option_store option;
        option.st_type = KVS_STORE_POST;
        option.assoc = NULL;
        kvs_key kvskey = {key, klen};
        kvs_value kvsvalue = {value, vlen, 0, 0};
        stored = stored && kvs_store_kvp(ks, &kvskey, &kvsvalue, &option) == KVS_SUCCESS;
        kvs_option_retrieve ropt;
        ropt.kvs_retrieve_delete = false;
        kvs_value rvalue = {back, vlen, 0, 0};
        read_back = read_back && kvs_retrieve_kvp(ks, &kvskey, &ropt, &rvalue) == KVS_SUCCESS &&
                    rvalue.actual_value_size == vlen && memcmp(back, value, vlen) == 0;
    }
    CHECK(stored);
    CHECK(read_back);

    kvs_kvp_info kvp;
    uint8_t kvp_key[16];
    kvp.key = kvp_key;
    kvs_key first = {(void *)"000000000000000", klen};
    CHECK(kvs_get_kvp_info(ks, &first, &kvp) == KVS_SUCCESS && kvp.value_len == vlen &&
          kvp.key_len == klen);

    kvs_key_space ks_info;
    kvs_key_space_name info_name = {MAX_CONT_PATH_LEN, (char *)malloc(MAX_CONT_PATH_LEN)};
    ks_info.name = &info_name;
    CHECK(kvs_get_key_space_info(ks, &ks_info) == KVS_SUCCESS && ks_info.count == 20 &&
          std::string(info_name.name) == ks_name);
    free(info_name.name);

    // exist: keys 0..19 present, 20..23 not
    std::vector<std::string> names_e;
    std::vector<kvs_key> keys(24);
    for (int i = 0; i < 24; i++) {
        char k[17];
        snprintf(k, sizeof(k), "%015d", i);
        names_e.push_back(k);
    }
    for (int i = 0; i < 24; i++) {
        keys[i] = {(void *)names_e[i].c_str(), klen};
    }
    uint8_t exist_bits[3] = {0, 0, 0};
    kvs_exist_list list;
    list.result_buffer = exist_bits;
    list.length = sizeof(exist_bits);
    CHECK(kvs_exist_kv_pairs(ks, 24, keys.data(), &list) == KVS_SUCCESS && exist_bits[0] == 0xff &&
          exist_bits[1] == 0xff && exist_bits[2] == 0x0f);

    // iterator over the "0000" bucket: all 20 keys, as the samples parse them
    kvs_option_iterator iter_mode;
    iter_mode.iter_type = KVS_ITERATOR_KEY;
    kvs_key_group_filter iter_fltr;
    iter_fltr.bitmask[0] = 0xff;
    iter_fltr.bitmask[1] = 0xff;
    iter_fltr.bitmask[2] = 0;
    iter_fltr.bitmask[3] = 0;
    iter_fltr.bit_pattern[0] = '0';
    iter_fltr.bit_pattern[1] = '0';
    iter_fltr.bit_pattern[2] = 0;
    iter_fltr.bit_pattern[3] = 0;
    kvs_iterator_handle iter_handle;
    CHECK(kvs_create_iterator(ks, &iter_mode, &iter_fltr, &iter_handle) == KVS_SUCCESS);
    uint8_t *buffer = (uint8_t *)kvs_malloc(KVS_ITERATOR_BUFFER_SIZE, 4096);
    kvs_iterator_list iter_list;
    iter_list.it_list = buffer;
    int total_entries = 0, well_formed = 1;
    for (int rounds = 0; rounds < 100; rounds++) {
        iter_list.size = KVS_ITERATOR_BUFFER_SIZE;
        iter_list.end = 0;
        iter_list.num_entries = 0;
        if (kvs_iterate_next(ks, iter_handle, &iter_list) != KVS_SUCCESS) {
            well_formed = 0;
            break;
        }
        uint8_t *p = iter_list.it_list;
        for (uint32_t i = 0; i < iter_list.num_entries; i++) {
            unsigned int key_size = *((unsigned int *)p);
            p += sizeof(unsigned int);
            well_formed &= key_size == klen && memcmp(p, "0000000000000", 13) == 0;
            p += key_size;
        }
        total_entries += iter_list.num_entries;
        if (iter_list.end) {
            break;
        }
    }
    CHECK(well_formed && total_entries == 20);
    CHECK(kvs_delete_iterator(ks, iter_handle) == KVS_SUCCESS);

    // async, as test_async.cpp: one counter, callbacks on the library's thread
    completions done;
    std::vector<std::string> akeys;
    std::vector<kvs_key> ak(32);
    std::vector<kvs_value> av(32);
    std::vector<std::vector<char>> abuf(32, std::vector<char>(512));
    for (int i = 0; i < 32; i++) {
        char k[17];
        snprintf(k, sizeof(k), "async%011d", i);
        akeys.push_back(k);
    }
    kvs_option_store aopt = {KVS_STORE_POST, NULL};
    bool queued = true;
    for (int i = 0; i < 32; i++) {
        memset(abuf[i].data(), 'A' + i % 26, abuf[i].size());
        ak[i] = {(void *)akeys[i].c_str(), klen};
        av[i] = {abuf[i].data(), (uint32_t)abuf[i].size(), 0, 0};
        queued = queued && kvs_store_kvp_async(ks, &ak[i], &av[i], &aopt, &done, NULL,
                                               on_complete) == KVS_SUCCESS;
    }
    CHECK(queued && wait_calls(done, 32) && done.failed == 0);

    completions rdone;
    std::vector<std::vector<char>> rbuf(32, std::vector<char>(512, 0));
    std::vector<kvs_value> rv(32);
    kvs_option_retrieve aropt = {false};
    queued = true;
    for (int i = 0; i < 32; i++) {
        rv[i] = {rbuf[i].data(), 512, 0, 0};
        queued = queued && kvs_retrieve_kvp_async(ks, &ak[i], &aropt, &rdone, NULL, &rv[i],
                                                  on_complete) == KVS_SUCCESS;
    }
    bool same = true;
    CHECK(queued && wait_calls(rdone, 32) && rdone.failed == 0);
    for (int i = 0; i < 32; i++) {
        same = same && rv[i].actual_value_size == 512 && rbuf[i] == abuf[i];
    }
    CHECK(same);

    completions edone;
    uint8_t abits[4] = {0, 0, 0, 0};
    kvs_exist_list alist = {0, NULL, sizeof(abits), abits};
    CHECK(kvs_exist_kv_pairs_async(ks, 32, ak.data(), &alist, &edone, NULL, on_complete) ==
          KVS_SUCCESS);
    CHECK(wait_calls(edone, 1) && abits[0] == 0xff && abits[3] == 0xff);

    completions idone;
    kvs_key_group_filter afltr = {{0xff, 0xff, 0xff, 0xff}, {'a', 's', 'y', 'n'}};
    CHECK(kvs_create_iterator(ks, &iter_mode, &afltr, &iter_handle) == KVS_SUCCESS);
    iter_list.size = KVS_ITERATOR_BUFFER_SIZE;
    CHECK(kvs_iterate_next_async(ks, iter_handle, &iter_list, &idone, NULL, on_complete) ==
          KVS_SUCCESS);
    CHECK(wait_calls(idone, 1) && iter_list.num_entries == 32 && iter_list.end);
    CHECK(kvs_delete_iterator(ks, iter_handle) == KVS_SUCCESS);

    completions ddone;
    kvs_option_delete dopt = {true};
    CHECK(kvs_delete_kvp_async(ks, &ak[0], &dopt, &ddone, NULL, on_complete) == KVS_SUCCESS);
    CHECK(wait_calls(ddone, 1) && ddone.failed == 0);
    CHECK(kvs_delete_kvp(ks, &ak[1], &dopt) == KVS_SUCCESS);
    CHECK(kvs_delete_kvp(ks, &ak[1], &dopt) == KVS_ERR_KEY_NOT_EXIST);

    completions gdone;
    CHECK(kvs_delete_key_group_async(ks, &afltr, &gdone, NULL, on_complete) == KVS_SUCCESS);
    CHECK(wait_calls(gdone, 1) && gdone.failed == 0);
    CHECK(kvs_delete_key_group(ks, &iter_fltr) == KVS_SUCCESS);
    CHECK(kvs_exist_kv_pairs(ks, 24, keys.data(), &list) == KVS_SUCCESS && exist_bits[0] == 0 &&
          exist_bits[1] == 0 && exist_bits[2] == 0);

    // the samples' _env_exit
    CHECK(kvs_close_key_space(ks) == KVS_SUCCESS);
    CHECK(kvs_delete_key_space(dev, &ks_nm) == KVS_SUCCESS);
    CHECK(kvs_close_device(dev) == KVS_SUCCESS);
    CHECK(std::string(kvs_errstr(KVS_ERR_ITERATOR_MAX)).rfind("KVS_ERR_ITERATOR_MAX", 0) == 0);

    kvs_free(key);
    kvs_free(value);
    kvs_free(back);
    kvs_free(buffer);
    for (uint32_t i = 0; i < retrieve_cnt; i++) {
        free(names[i].name);
    }
    kvs_memstat();
    printf("1..%d\n", test_no);
    return failures ? 1 : 0;
}
