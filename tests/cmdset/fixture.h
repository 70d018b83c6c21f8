/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the command-set unit tests: a KV namespace over a real kvftl
 * instance, a fake data pointer over a plain buffer (with an injectable
 * failure), byte-exact SQE builders written from the wire-format headers,
 * and an independent encoder of inline Store commands.
 */
#ifndef TESTS_CMDSET_FIXTURE_H
#define TESTS_CMDSET_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "cmdset.h"
#include "kv_internal.h"

/* The host buffer a command's data pointer describes. */
struct fake_host {
    uint8_t *buf;
    uint32_t len;         /* bytes past len are "outside guest RAM": DATA_XFER_ERROR */
    uint16_t fail_status; /* nonzero: every transfer fails with this status */
    uint32_t from_calls, to_calls;
    uint64_t from_bytes, to_bytes;
};

struct fixture {
    struct kvftl *ftl;
    struct kvssd_ns *ns;
    struct kvssd_xfer_counters xfer;
    uint64_t now;         /* test clock, ns; advanced 1000 per command */
};

extern struct fixture fx;

/* The firmware configuration every test uses unless it asks for another. */
void fx_ftl_config(struct kvftl_config *cfg);
/* Open a fresh firmware + namespace (NULL = defaults); close the previous one. */
void fx_open(const struct kvssd_ns_config *ns_cfg, const struct kvftl_config *ftl_cfg);
void fx_close(void);
/* CUnit per-test setup/teardown: default fixture. */
void fx_setup(void);
void fx_teardown(void);

/* Execute one command at fx.now (then advance the clock); @host may be NULL. */
struct kvssd_req fx_exec(const struct kvssd_sqe *sqe, struct fake_host *host);
struct kvssd_req fx_exec_at(const struct kvssd_sqe *sqe, struct fake_host *host, uint64_t now);

struct fake_host fake_host_over(void *buf, uint32_t len);
/* Point @req's data pointer at @host (which must outlive the command, parked or not). */
void fake_host_dptr(struct kvssd_req *req, struct fake_host *host);

/* SQE builders: every field as the headers define it, all else zero. */
struct kvssd_sqe sqe_new(uint8_t opcode);
struct kvssd_sqe sqe_store(const void *key, uint32_t key_len, uint32_t value_len, uint32_t options);
struct kvssd_sqe sqe_retrieve(const void *key, uint32_t key_len, uint32_t buf_len);
struct kvssd_sqe sqe_delete(const void *key, uint32_t key_len);
struct kvssd_sqe sqe_exist(const void *key, uint32_t key_len);
struct kvssd_sqe sqe_list(const void *key, uint32_t key_len, uint32_t buf_len);
struct kvssd_sqe sqe_key_stage(uint32_t key_len, uint32_t tag);
struct kvssd_sqe sqe_iter_open(uint32_t prefix, uint32_t mask, bool key_values);
struct kvssd_sqe sqe_iter_read(uint32_t handle, uint32_t buf_len);
struct kvssd_sqe sqe_iter_close(uint32_t handle);
/* A long-key command: the key field is replaced by the staged-key tag. */
void sqe_use_staged_key(struct kvssd_sqe *sqe, uint32_t tag);

/* Stage @key (17..255 bytes) under @tag; returns the Key Stage status. */
uint16_t fx_stage(const void *key, uint32_t key_len, uint32_t tag);
/* Store/Retrieve/Delete/Exist by key of any length (staging long keys under tag 7). */
uint16_t fx_store(const void *key, uint32_t key_len, const void *value, uint32_t value_len,
                  uint32_t options);
uint16_t fx_retrieve(const void *key, uint32_t key_len, void *buf, uint32_t buf_len, uint32_t *dw0);
uint16_t fx_delete(const void *key, uint32_t key_len);
uint16_t fx_exist(const void *key, uint32_t key_len);

/* Retrieve @key into a buffer of @n + 1 bytes: success, DW0 = @n, the exact @n bytes of @value. */
void fx_assert_stored(const void *key, uint32_t key_len, const void *value, uint32_t n);

/* Deterministic value bytes: byte i of a value with seed s. */
void fill_pattern(uint8_t *buf, uint32_t len, uint32_t seed);

/*
 * Inline Store commands, encoded from <kvssd/ext.h> independently of the
 * device: cmds[0] is the head, cmds[s] the transfer with sequence s.
 */
struct inline_cmds {
    struct kvssd_sqe *sqe;
    uint32_t n;
    uint32_t dma_bytes;   /* hybrid: value bytes the head's data pointer carries */
};

/* Stock layout (81h/85h). key_len > 16: the key is staged under @staged_tag. */
void encode_inline_stock(const uint8_t *key, uint32_t key_len, const uint8_t *value,
                         uint32_t value_len, uint32_t options, uint32_t tag, bool hybrid,
                         uint32_t staged_tag, struct inline_cmds *out);
/* BandSlim full layout (89h/8Dh), keys of 1..16 bytes. */
void encode_inline_full(const uint8_t *key, uint32_t key_len, const uint8_t *value,
                        uint32_t value_len, uint32_t options, uint32_t tag,
                        struct inline_cmds *out);
/*
 * Stock head (81h) with the full-tail bit (CDW11[17]) and full-layout
 * transfers (8Dh, 56 bytes each); hybrid and staged keys as the stock encoder.
 */
void encode_inline_full_tail(const uint8_t *key, uint32_t key_len, const uint8_t *value,
                             uint32_t value_len, uint32_t options, uint32_t tag, bool hybrid,
                             uint32_t staged_tag, struct inline_cmds *out);
void inline_cmds_free(struct inline_cmds *c);

#endif
