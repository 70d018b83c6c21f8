/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading every key of a random harness's reference model back from the
 * device, a window at a time through kvftl_retrieve_batch() (which must
 * answer exactly as kvftl_retrieve()). Shared by tests/model and tests/fuzz;
 * each harness says how to find a record's key and how to judge an answer.
 */
#ifndef KVSSD_TESTS_KVFTL_READBACK_H
#define KVSSD_TESTS_KVFTL_READBACK_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include <kvftl/kvftl.h>

#define KVFTL_READBACK_WINDOW 8
#define KVFTL_READBACK_BUF_BYTES (KVFTL_VALUE_MAX_BYTES + 64)

/* The key of model record @rec. */
typedef void (*kvftl_readback_key_fn)(gpointer rec, const void **key, uint32_t *key_bytes);
/* Judge the retrieve of @rec: completion @c, value in @buf. false stops the read-back. */
typedef bool (*kvftl_readback_check_fn)(void *ctx, gpointer rec, const struct kvftl_cpl *c,
                                        const uint8_t *buf);

/*
 * kvftl_read_back_all() - retrieve every record of @recs (a GHashTable whose
 * keys are the harness's key records), all arriving at @arrival_ns, whole
 * values into KVFTL_READBACK_BUF_BYTES buffers, KVFTL_READBACK_WINDOW per
 * batch call, and hand each answer to @check. Returns the keys read back.
 */
static inline uint64_t kvftl_read_back_all(struct kvftl *ftl, GHashTable *recs, uint64_t arrival_ns,
                                           kvftl_readback_key_fn key_of,
                                           kvftl_readback_check_fn check, void *ctx)
{
    static uint8_t *bufs;
    if (!bufs) {
        bufs = g_malloc((size_t)KVFTL_READBACK_WINDOW * KVFTL_READBACK_BUF_BYTES);
    }
    gpointer recs_of[KVFTL_READBACK_WINDOW];
    struct kvftl_retrieve_req req[KVFTL_READBACK_WINDOW];
    struct kvftl_cpl cpl[KVFTL_READBACK_WINDOW];
    GHashTableIter it;
    gpointer rec;
    uint64_t done = 0;
    bool more = true;
    g_hash_table_iter_init(&it, recs);
    while (more) {
        unsigned n = 0;
        while (n < KVFTL_READBACK_WINDOW && (more = g_hash_table_iter_next(&it, &rec, NULL))) {
            recs_of[n] = rec;
            req[n] = (struct kvftl_retrieve_req){
                .buf = bufs + (size_t)n * KVFTL_READBACK_BUF_BYTES,
                .buf_bytes = KVFTL_READBACK_BUF_BYTES,
                .arrival_ns = arrival_ns,
            };
            key_of(rec, &req[n].key, &req[n].key_bytes);
            n++;
        }
        kvftl_retrieve_batch(ftl, req, cpl, n);
        done += n;
        for (unsigned i = 0; i < n; i++) {
            if (!check(ctx, recs_of[i], &cpl[i], req[i].buf)) {
                return done;
            }
        }
    }
    return done;
}

#endif
