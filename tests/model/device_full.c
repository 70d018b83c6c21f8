/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Device full: Store refuses only when the device is really full, and nothing is lost. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kvftl_capacity.h"
#include "model.h"

/*
 * Fill a small device with 256 KiB..2 MiB values until Store returns
 * CAPACITY_EXCEEDED; it must not come while the firmware's capacity check
 * (tests/common/kvftl_capacity.h) still has room. Then every stored key reads back, deleting half
 * the keys makes room again (GC reclaims their blocks), a power cycle keeps everything, and
 * kvftl_check() passes at each step.
 */
void test_device_full(void)
{
    static const struct scenario sc = {
        .name = "device_full",
        .seed = 0xf011,
        .packing = KVFTL_PACK_ALL,
        .placement_unit_bytes = 1024,
        .plp = true,
        .bloom = true,
        .page_size_bytes = 16384,
        .blocks_per_die = 10,
        .pool_keys = 1,
    };
    if (model_test_skipped(sc.name)) {
        return;
    }
    struct run *r = run_new(&sc);
    printf("# scenario %s: seed 0x%" PRIx64 ", %" PRIu64 "-byte device\n", sc.name, sc.seed,
           raw_bytes(&r->cfg));
    if (!open_device(r)) {
        goto out;
    }
    uint64_t nkeys = 0, full_at = 0;
    struct kvftl_cpl c;
    for (uint64_t i = 0; i < 10000 && !r->failed; i++, r->opno++) {
        uint8_t key[16];
        memset(key, 0, sizeof(key));
        memcpy(key, "full", 4);
        key[8] = (uint8_t)(i >> 8);
        key[9] = (uint8_t)i;
        uint32_t vlen = (uint32_t)rng_range(&r->rng, 256 * 1024, KVFTL_VALUE_MAX_BYTES);
        uint64_t vseed = rng_next(&r->rng);
        value_fill(vseed, 0, r->val, vlen);
        struct kvftl_store_req req = {.key = key,
                                      .key_bytes = 16,
                                      .value = r->val,
                                      .value_bytes = vlen,
                                      .arrival_ns = r->now};
        oplog_add(r, "fill store #%" PRIu64 " of %u B", i, vlen);
        kvftl_store(r->ftl, &req, &c);
        if (c.status == KVFTL_CAPACITY_EXCEEDED) {
            struct kvftl_stats st;
            kvftl_stats_get(r->ftl, &st);
            printf("# device full after %" PRIu64 " keys: live_nand_bytes %" PRIu64 " of %" PRIu64
                   " raw (%.1f%%)\n",
                   nkeys, st.live_nand_bytes, raw_bytes(&r->cfg),
                   100.0 * (double)st.live_nand_bytes / (double)raw_bytes(&r->cfg));
            if (!kvftl_refusal_plausible(r->ftl, 16, vlen, true)) {
                fail(r, "CAPACITY_EXCEEDED with only %" PRIu64 " live NAND bytes",
                     st.live_nand_bytes);
            }
            full_at = i;
            break;
        }
        if (!expect_status(r, "fill store", &c, req.arrival_ns, KVFTL_OK)) {
            break;
        }
        struct kv_model_key *k = kv_model_find(&r->m, key, 16, true);
        kv_model_set(&r->m, k, (struct kv_model_state){true, vlen, vseed}, false);
        nkeys++;
        r->now = c.done_ns;
    }
    CU_ASSERT(full_at > 0);
    if (r->failed || !full_at) {
        if (!full_at) {
            fail(r, "10000 stores of >= 256 KiB never filled a %" PRIu64 "-byte device",
                 raw_bytes(&r->cfg));
        }
        goto out;
    }
    /* Nothing already stored is lost, and the failed store changed nothing. */
    verify_after_recovery(r, "device full", false);
    if (!r->failed) {
        CU_ASSERT(check_consistency(r, "device full"));
    }
    /* Delete every other key: room again once GC reclaims it. */
    GHashTableIter it;
    gpointer kp;
    uint64_t deleted = 0;
    g_hash_table_iter_init(&it, r->m.keys);
    while (!r->failed && g_hash_table_iter_next(&it, &kp, NULL)) {
        struct kv_model_key *k = kp;
        if (k->cur.present && (k->key[9] & 1)) {
            kvftl_delete(r->ftl, k->key, k->klen, r->now, &c);
            if (expect_status(r, "delete on a full device", &c, r->now, KVFTL_OK)) {
                kv_model_set(&r->m, k, (struct kv_model_state){0}, false);
                deleted++;
            }
        }
    }
    CU_ASSERT(deleted >= 2);
    /* At least two values of >= 256 KiB were freed: two 256 KiB stores must succeed. */
    for (unsigned i = 0; i < 2 && !r->failed; i++) {
        uint8_t key[16] = "after-full-0000";
        key[15] = (uint8_t)i;
        uint64_t vseed = rng_next(&r->rng);
        uint32_t vlen = 256 * 1024;
        value_fill(vseed, 0, r->val, vlen);
        struct kvftl_store_req req = {.key = key,
                                      .key_bytes = 16,
                                      .value = r->val,
                                      .value_bytes = vlen,
                                      .arrival_ns = r->now};
        kvftl_store(r->ftl, &req, &c);
        if (expect_status(r, "store after deleting half the keys", &c, r->now, KVFTL_OK)) {
            struct kv_model_key *k = kv_model_find(&r->m, key, 16, true);
            kv_model_set(&r->m, k, (struct kv_model_state){true, vlen, vseed}, false);
        }
    }
    if (!r->failed) {
        power_cycle(r, "power cycle after device full");
    }
out:
    run_free(r);
}
