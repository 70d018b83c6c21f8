/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The _async calls: one completion thread per device handle owns a
 * libkvssd io_uring queue (IORING_OP_URING_CMD passthrough). Callers
 * append an operation to a pending list and return; the thread issues
 * pending operations into the queue as slots free up, polls completions
 * and runs each operation's kvs_postprocess_function exactly once, after
 * its last command completed. Callbacks may submit further _async calls
 * (they only take the pending-list lock, which the thread does not hold
 * while polling). Iterator reads and key-group deletes have no
 * asynchronous libkvssd path: the thread runs them synchronously.
 *
 * Host memory: one struct snia_op per accepted call until its callback
 * returns (~200 bytes; a retrieve with an offset adds a bounce buffer of
 * offset + length bytes, at most 2 MiB), plus libkvssd's queue of
 * $KVSSD_QUEUE_DEPTH slots.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snia_priv.h"

struct snia_op {
    kvs_postprocess_context ctx; /* handed to the callback */
    kvs_postprocess_function fn;
    struct _kvs_device_handle *dev;
    kvs_key key;    /* copied at submission: the caller may reuse its kvs_key */
    kvs_value *value;
    uint32_t options;      /* store: KVSSD_STORE_OPT_* */
    bool delete_error;     /* delete: Exist first */
    bool exist_done;       /* delete: the Exist phase completed */
    uint8_t *bounce;       /* retrieve with an offset */
    uint32_t bounce_len;
    uint32_t key_cnt;      /* exist: keys; other kinds 1 */
    kvs_key *keys;
    uint32_t issued, done; /* sub-operations (exist: one per key) */
    kvs_result result;     /* first failure */
    kvs_iterator_list *iter_list;
    kvs_key_group_filter filter;
    struct snia_op *next;
};

struct snia_async {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work; /* pending operations or stop */
    pthread_cond_t idle; /* accepted == completed */
    struct snia_op *head, *tail;
    uint64_t accepted, completed;
    bool stop;
    struct kvssd_queue *q; /* the thread's only */
    struct snia_op *ready, *ready_tail; /* the thread's: taken from pending, not fully issued */
};

static void ready_push_front(struct snia_async *a, struct snia_op *op)
{
    op->next = a->ready;
    a->ready = op;
    if (!a->ready_tail) {
        a->ready_tail = op;
    }
}

static void finish(struct snia_async *a, struct snia_op *op)
{
    op->ctx.result = op->result;
    if (op->ctx.context == KVS_CMD_EXIST && op->result == KVS_SUCCESS) {
        op->ctx.result_buffer.list->length = (op->key_cnt + 7) / 8;
    }
    op->fn(&op->ctx);
    free(op->bounce);
    free(op);
    pthread_mutex_lock(&a->lock);
    a->completed++;
    if (a->completed == a->accepted) {
        pthread_cond_broadcast(&a->idle);
    }
    pthread_mutex_unlock(&a->lock);
}

static void note(struct snia_op *op, kvs_result r)
{
    if (r && !op->result) {
        op->result = r;
    }
}

/* libkvssd completion of one sub-operation; runs inside kvssd_queue_poll() on the thread. */
static void sub_done(void *arg, int err, const struct kvssd_result *res)
{
    struct snia_op *op = arg;
    struct snia_async *a = op->dev->async;

    op->done++;
    switch (op->ctx.context) {
    case KVS_CMD_STORE:
        note(op, snia_result(err));
        break;
    case KVS_CMD_RETRIEVE:
        if (err) {
            note(op, snia_result(err));
        } else {
            note(op, snia_retrieve_finish(op->value, op->bounce, res->dw0));
        }
        break;
    case KVS_CMD_DELETE:
        if (op->delete_error && !op->exist_done) {
            op->exist_done = true;
            if (err) {
                note(op, snia_result(err));
            } else {
                /* the key exists: now the Delete itself */
                op->issued = 0;
                op->done = 0;
                ready_push_front(a, op);
                return;
            }
        } else {
            note(op, snia_result(err == -KVSSD_ERR_KEY_NOT_FOUND && !op->delete_error ? 0 : err));
        }
        break;
    default: /* exist sub-operations complete in exist_done() */
        break;
    }
    if (op->done == op->key_cnt && op->issued == op->key_cnt) {
        finish(a, op);
    }
}

/* Exist sub-operations carry their key index: one small record each. */
struct exist_arg {
    struct snia_op *op;
    uint32_t index;
};

static void exist_done(void *arg, int err, const struct kvssd_result *res)
{
    struct exist_arg *ea = arg;
    struct snia_op *op = ea->op;
    (void)res;
    if (err == 0) {
        op->ctx.result_buffer.list->result_buffer[ea->index / 8] |= (uint8_t)(1u
                                                                              << (ea->index % 8));
    } else if (err != -KVSSD_ERR_KEY_NOT_FOUND) {
        note(op, snia_result(err));
    }
    free(ea);
    op->done++;
    if (op->done == op->key_cnt && op->issued == op->key_cnt) {
        finish(op->dev->async, op);
    }
}

/*
 * Issue what the operation still has to issue. Returns false when the
 * queue is full (the operation keeps its place at the head of the ready
 * list), true when it issued everything or completed.
 */
static bool issue(struct snia_async *a, struct snia_op *op)
{
    struct _kvs_device_handle *d = op->dev;
    int rc = 0;

    switch (op->ctx.context) {
    case KVS_CMD_STORE:
        rc = kvssd_store_async(a->q, op->key.key, op->key.length, op->value->value,
                               op->value->length, op->options, sub_done, op);
        break;
    case KVS_CMD_RETRIEVE:
        rc = kvssd_retrieve_async(a->q, op->key.key, op->key.length,
                                  op->bounce ? (void *)op->bounce : op->value->value,
                                  op->bounce ? op->bounce_len : op->value->length, sub_done, op);
        break;
    case KVS_CMD_DELETE:
        if (op->delete_error && !op->exist_done) {
            rc = kvssd_exist_async(a->q, op->key.key, op->key.length, sub_done, op);
        } else {
            rc = kvssd_delete_async(a->q, op->key.key, op->key.length, sub_done, op);
        }
        break;
    case KVS_CMD_EXIST:
        while (op->issued < op->key_cnt) {
            struct exist_arg *ea = malloc(sizeof(*ea));
            if (!ea) {
                rc = -KVSSD_ERR_SYSTEM;
                break;
            }
            ea->op = op;
            ea->index = op->issued;
            const kvs_key *k = &op->keys[op->issued];
            rc = kvssd_exist_async(a->q, k->key, k->length, exist_done, ea);
            if (rc) {
                free(ea);
                break;
            }
            op->issued++;
        }
        if (rc == -KVSSD_ERR_BUSY) {
            return false;
        }
        if (rc) {
            /* account the keys never issued as done, with the failure */
            note(op, snia_result(rc));
            op->done += op->key_cnt - op->issued;
            op->issued = op->key_cnt;
            if (op->done == op->key_cnt) {
                finish(a, op);
            }
        }
        return true;
    case KVS_CMD_ITER_NEXT:
        op->result = snia_iter_next(op->ctx.ks_hd, op->ctx.iter_hd, op->iter_list);
        finish(a, op);
        return true;
    case KVS_CMD_DELETE_GROUP:
        op->result = snia_delete_group(d, &op->filter);
        finish(a, op);
        return true;
    default:
        op->result = KVS_ERR_SYS_IO;
        finish(a, op);
        return true;
    }
    if (rc == -KVSSD_ERR_BUSY) {
        return false;
    }
    op->issued = 1;
    if (rc) {
        /* refused before any command went out: no libkvssd callback will come */
        note(op, snia_result(rc));
        op->done = 1;
        finish(a, op);
    }
    return true;
}

static void *completion_thread(void *arg)
{
    struct _kvs_device_handle *d = arg;
    struct snia_async *a = d->async;

    pthread_mutex_lock(&a->lock);
    for (;;) {
        while (!a->head && !a->stop && !a->ready && !kvssd_queue_outstanding(a->q)) {
            pthread_cond_wait(&a->work, &a->lock);
        }
        if (a->stop && !a->head && !a->ready && !kvssd_queue_outstanding(a->q)) {
            break;
        }
        /* move the pending operations behind the ready ones, in submission order */
        if (a->head) {
            if (a->ready_tail) {
                a->ready_tail->next = a->head;
            } else {
                a->ready = a->head;
            }
            a->ready_tail = a->tail;
            a->head = a->tail = NULL;
        }
        pthread_mutex_unlock(&a->lock);

        while (a->ready) {
            struct snia_op *op = a->ready;
            a->ready = op->next;
            if (!a->ready) {
                a->ready_tail = NULL;
            }
            op->next = NULL;
            if (!issue(a, op)) {
                ready_push_front(a, op);
                break;
            }
        }
        if (kvssd_queue_outstanding(a->q)) {
            /* wait for at least one completion; callbacks run in here */
            if (kvssd_queue_poll(a->q, 1) < 0) {
                fprintf(stderr, "kvapi: polling io_uring completions failed: %s\n",
                        strerror(errno));
            }
        }
        pthread_mutex_lock(&a->lock);
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* The handle's engine, created by the first _async call. */
static kvs_result async_get(struct _kvs_device_handle *d, struct snia_async **ap)
{
    kvs_result r = KVS_SUCCESS;
    pthread_mutex_lock(&d->lock);
    if (!d->async) {
        struct snia_async *a = calloc(1, sizeof(*a));
        int rc = a ? kvssd_queue_create(d->dev, d->queue_depth, &a->q) : -KVSSD_ERR_SYSTEM;
        if (rc) {
            /* no io_uring (pci transport, kernel without passthrough): every _async call fails */
            free(a);
            r = KVS_ERR_SYS_IO;
        } else {
            pthread_mutex_init(&a->lock, NULL);
            pthread_cond_init(&a->work, NULL);
            pthread_cond_init(&a->idle, NULL);
            d->async = a;
            if (pthread_create(&a->thread, NULL, completion_thread, d)) {
                d->async = NULL;
                kvssd_queue_destroy(a->q);
                free(a);
                r = KVS_ERR_SYS_IO;
            }
        }
    }
    *ap = d->async;
    pthread_mutex_unlock(&d->lock);
    return r;
}

kvs_result snia_async_submit(kvs_key_space_handle ks, kvs_context kind, kvs_key *key,
                             kvs_value *value, void *option, void *private1, void *private2,
                             kvs_postprocess_function fn, uint32_t key_cnt, kvs_exist_list *list,
                             kvs_iterator_handle iter_hd, kvs_iterator_list *iter_list,
                             const kvs_key_group_filter *filter)
{
    struct _kvs_device_handle *d = ks->dev;
    struct snia_async *a;
    kvs_result r = async_get(d, &a);
    if (r) {
        return r;
    }
    struct snia_op *op = calloc(1, sizeof(*op));
    if (!op) {
        return KVS_ERR_SYS_IO;
    }
    op->dev = d;
    op->fn = fn;
    op->key_cnt = 1;
    op->ctx.context = kind;
    op->ctx.ks_hd = ks;
    op->ctx.key = key;
    op->ctx.value = value;
    /* option stays NULL: OpenMPDK's adapters take options by value and never set it */
    op->ctx.private1 = private1;
    op->ctx.private2 = private2;
    op->ctx.iter_hd = iter_hd;
    op->value = value;
    if (key) {
        op->key = *key;
    }
    switch (kind) {
    case KVS_CMD_STORE:
        r = snia_store_options(d, value, option, &op->options);
        break;
    case KVS_CMD_RETRIEVE:
        if (value->offset) {
            uint64_t want = (uint64_t)value->offset + value->length;
            op->bounce_len = want < d->max_value ? (uint32_t)want : d->max_value;
            op->bounce = malloc(op->bounce_len ? op->bounce_len : 1);
            r = op->bounce ? KVS_SUCCESS : KVS_ERR_SYS_IO;
        }
        break;
    case KVS_CMD_DELETE:
        op->delete_error = option && ((kvs_option_delete *)option)->kvs_delete_error;
        break;
    case KVS_CMD_EXIST:
        op->key_cnt = key_cnt;
        op->keys = key;
        op->ctx.key = key; /* the array submitted, as OpenMPDK's adapters hand it back */
        op->ctx.result_buffer.list = list;
        list->keys = key;
        list->num_keys = key_cnt;
        memset(list->result_buffer, 0, (key_cnt + 7) / 8);
        break;
    case KVS_CMD_ITER_NEXT:
        op->iter_list = iter_list;
        op->ctx.result_buffer.iter_list = iter_list;
        break;
    case KVS_CMD_DELETE_GROUP:
        op->filter = *filter;
        break;
    default:
        r = KVS_ERR_PARAM_INVALID;
    }
    if (r) {
        free(op->bounce);
        free(op);
        return r;
    }
    pthread_mutex_lock(&a->lock);
    if (a->stop) {
        pthread_mutex_unlock(&a->lock);
        free(op->bounce);
        free(op);
        return KVS_ERR_DEV_NOT_OPENED;
    }
    if (a->tail) {
        a->tail->next = op;
    } else {
        a->head = op;
    }
    a->tail = op;
    a->accepted++;
    pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->lock);
    return KVS_SUCCESS;
}

kvs_result snia_async_drain(struct _kvs_device_handle *d)
{
    pthread_mutex_lock(&d->lock);
    struct snia_async *a = d->async;
    pthread_mutex_unlock(&d->lock);
    if (!a) {
        return KVS_SUCCESS;
    }
    if (pthread_equal(pthread_self(), a->thread)) {
        return KVS_ERR_SYS_IO; /* from a callback: waiting for ourselves would never end */
    }
    pthread_mutex_lock(&a->lock);
    while (a->completed != a->accepted) {
        pthread_cond_wait(&a->idle, &a->lock);
    }
    pthread_mutex_unlock(&a->lock);
    return KVS_SUCCESS;
}

void snia_async_destroy(struct _kvs_device_handle *d)
{
    struct snia_async *a = d->async;
    if (!a) {
        return;
    }
    pthread_mutex_lock(&a->lock);
    a->stop = true;
    pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL);
    kvssd_queue_destroy(a->q);
    pthread_cond_destroy(&a->work);
    pthread_cond_destroy(&a->idle);
    pthread_mutex_destroy(&a->lock);
    free(a);
    d->async = NULL;
}

/* ---- the API's _async entry points: the sync path's checks, then queue ------------ */

kvs_result kvs_store_kvp_async(kvs_key_space_handle ks_hd, kvs_key *key, kvs_value *value,
                               kvs_option_store *opt, void *private1, void *private2,
                               kvs_postprocess_function post_fn)
{
    uint32_t options;
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_check_key(ks_hd->dev, key)) ||
        (r = snia_store_options(ks_hd->dev, value, opt, &options))) {
        return r;
    }
    if (!post_fn) {
        return KVS_ERR_PARAM_INVALID;
    }
    return snia_async_submit(ks_hd, KVS_CMD_STORE, key, value, opt, private1, private2, post_fn, 1,
                             NULL, 0, NULL, NULL);
}

kvs_result kvs_retrieve_kvp_async(kvs_key_space_handle ks_hd, kvs_key *key,
                                  kvs_option_retrieve *opt, void *private1, void *private2,
                                  kvs_value *value, kvs_postprocess_function post_fn)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_check_key(ks_hd->dev, key)) || (r = snia_retrieve_check(value, opt))) {
        return r;
    }
    if (!post_fn) {
        return KVS_ERR_PARAM_INVALID;
    }
    return snia_async_submit(ks_hd, KVS_CMD_RETRIEVE, key, value, opt, private1, private2, post_fn,
                             1, NULL, 0, NULL, NULL);
}

kvs_result kvs_delete_kvp_async(kvs_key_space_handle ks_hd, kvs_key *key, kvs_option_delete *opt,
                                void *private1, void *private2, kvs_postprocess_function post_fn)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_check_key(ks_hd->dev, key))) {
        return r;
    }
    if (!post_fn) {
        return KVS_ERR_PARAM_INVALID;
    }
    return snia_async_submit(ks_hd, KVS_CMD_DELETE, key, NULL, opt, private1, private2, post_fn, 1,
                             NULL, 0, NULL, NULL);
}

kvs_result kvs_exist_kv_pairs_async(kvs_key_space_handle ks_hd, uint32_t key_cnt, kvs_key *keys,
                                    kvs_exist_list *list, void *private1, void *private2,
                                    kvs_postprocess_function post_fn)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_exist_check(ks_hd->dev, key_cnt, keys, list))) {
        return r;
    }
    if (!post_fn) {
        return KVS_ERR_PARAM_INVALID;
    }
    return snia_async_submit(ks_hd, KVS_CMD_EXIST, keys, NULL, NULL, private1, private2, post_fn,
                             key_cnt, list, 0, NULL, NULL);
}

kvs_result kvs_iterate_next_async(kvs_key_space_handle ks_hd, kvs_iterator_handle iter_hd,
                                  kvs_iterator_list *iter_list, void *private1, void *private2,
                                  kvs_postprocess_function post_fn)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r) {
        return r;
    }
    if (!iter_list || !iter_list->it_list || !post_fn) {
        return KVS_ERR_PARAM_INVALID;
    }
    return snia_async_submit(ks_hd, KVS_CMD_ITER_NEXT, NULL, NULL, NULL, private1, private2,
                             post_fn, 1, NULL, iter_hd, iter_list, NULL);
}

kvs_result kvs_delete_key_group_async(kvs_key_space_handle ks_hd, kvs_key_group_filter *grp_fltr,
                                      void *private1, void *private2,
                                      kvs_postprocess_function post_fn)
{
    uint32_t word, mask;
    kvs_result r = snia_check_ks(ks_hd);
    if (r || (r = snia_filter(grp_fltr, &word, &mask))) {
        return r;
    }
    if (!post_fn) {
        return KVS_ERR_PARAM_INVALID;
    }
    return snia_async_submit(ks_hd, KVS_CMD_DELETE_GROUP, NULL, NULL, NULL, private1, private2,
                             post_fn, 1, NULL, 0, NULL, grp_fltr);
}
