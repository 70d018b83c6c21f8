/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Iterators and key-group deletion over the device's prefix iterators
 * (Iter Open 90h, Iter Read 92h, Iter Close 94h; docs/protocol.md 6). A
 * kvs_key_group_filter is exactly Iter Open's prefix and mask: the first 4
 * key bytes as a big-endian word, any bits masked.
 *
 * kvs_iterate_next() repacks the device's entries (u16 key length, key,
 * padding) into OpenMPDK's iterator list layout: per entry a host-endian
 * u32 key length and the key, then for key+value iterators a u32 value
 * length and the value, with no padding. An entry that does not fit in the
 * caller's buffer stays in the iterator's batch for the next call.
 */
#include <stdlib.h>
#include <string.h>

#include "snia_priv.h"

static int iter_open(struct _kvs_device_handle *d, struct snia_iter *it, uint32_t word,
                     uint32_t mask, bool with_values)
{
    struct kvssd_cmd cmd;
    struct kvssd_result res;

    memset(it, 0, sizeof(*it));
    it->buf_len = with_values ? SNIA_ITER_VALUES_BUF : SNIA_ITER_KEYS_BUF;
    it->buf = malloc(it->buf_len);
    if (!it->buf) {
        return -KVSSD_ERR_SYSTEM;
    }
    kvssd_cmd_iter_open(&cmd, d->nsid, word, mask, with_values);
    int rc = kvssd_submit(d->dev, &cmd, &res);
    if (rc) {
        free(it->buf);
        it->buf = NULL;
        return rc;
    }
    it->handle = res.dw0;
    it->with_values = with_values;
    it->open = true;
    return 0;
}

static void iter_close(struct _kvs_device_handle *d, struct snia_iter *it)
{
    struct kvssd_cmd cmd;
    struct kvssd_result res;

    if (it->open) {
        kvssd_cmd_iter_close(&cmd, d->nsid, it->handle);
        kvssd_submit(d->dev, &cmd, &res); /* a failed close leaves nothing to undo here */
    }
    free(it->buf);
    memset(it, 0, sizeof(*it));
}

/* The next batch from the device; at_end when it has none. */
static int iter_read(struct _kvs_device_handle *d, struct snia_iter *it)
{
    struct kvssd_cmd cmd;
    struct kvssd_result res;
    struct kvssd_iter_header hdr;

    kvssd_cmd_iter_read(&cmd, d->nsid, it->handle, it->buf, it->buf_len);
    int rc = kvssd_submit(d->dev, &cmd, &res);
    if (rc == -KVSSD_ERR_ITERATOR_END) {
        it->at_end = true;
        it->left = 0;
        return 0;
    }
    if (rc) {
        return rc;
    }
    memcpy(&hdr, it->buf, sizeof(hdr));
    if (hdr.bytes > it->buf_len - sizeof(hdr)) {
        return -KVSSD_ERR_TRANSFER; /* the device overstated its data: do not walk past buf */
    }
    if (hdr.entries == 0) {
        /* the next entry is larger than our batch buffer (a value near 2 MiB) */
        return -KVSSD_ERR_VALUE_SIZE;
    }
    it->filled = (uint32_t)sizeof(hdr) + hdr.bytes;
    it->off = sizeof(hdr);
    it->left = hdr.entries;
    return 0;
}

/* The entry at the cursor, not consumed; 0 when malformed. */
static uint32_t iter_peek(const struct snia_iter *it, const uint8_t **key, uint32_t *key_len,
                          const uint8_t **value, uint32_t *value_len)
{
    return kvssd_iter_parse_entry(it->buf + it->off, it->filled - it->off, it->with_values, key,
                                  key_len, value, value_len);
}

static struct snia_iter *iter_of(kvs_key_space_handle ks, kvs_iterator_handle hd)
{
    if (hd < 1 || hd > KVS_MAX_ITERATE_HANDLE || !ks->iters[hd - 1].open) {
        return NULL;
    }
    return &ks->iters[hd - 1];
}

static void put_u32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4); /* host endian, as OpenMPDK's kernel-driver path hands it out */
}

kvs_result snia_iter_next(kvs_key_space_handle ks, kvs_iterator_handle hd, kvs_iterator_list *l)
{
    struct _kvs_device_handle *d = ks->dev;
    const uint8_t *key, *value;
    uint32_t key_len, value_len, used = 0, n = 0;
    kvs_result r = KVS_SUCCESS;

    pthread_mutex_lock(&ks->iter_lock);
    struct snia_iter *it = iter_of(ks, hd);
    if (!it) {
        pthread_mutex_unlock(&ks->iter_lock);
        return KVS_ERR_ITERATOR_NOT_EXIST;
    }
    l->end = false;
    for (;;) {
        if (it->left == 0) {
            if (it->at_end) {
                l->end = true;
                break;
            }
            int rc = iter_read(d, it);
            if (rc) {
                r = rc == -KVSSD_ERR_VALUE_SIZE ? KVS_ERR_BUFFER_SMALL : snia_result(rc);
                break;
            }
            continue;
        }
        uint32_t step = iter_peek(it, &key, &key_len, &value, &value_len);
        if (!step) {
            r = KVS_ERR_SYS_IO; /* malformed Iter Read data */
            break;
        }
        uint64_t need = 4ull + key_len + (it->with_values ? 4ull + value_len : 0);
        if (need > l->size - used) {
            if (n == 0) {
                r = KVS_ERR_BUFFER_SMALL; /* not even one entry fits */
            }
            break;
        }
        put_u32(l->it_list + used, key_len);
        memcpy(l->it_list + used + 4, key, key_len);
        used += 4 + key_len;
        if (it->with_values) {
            put_u32(l->it_list + used, value_len);
            memcpy(l->it_list + used + 4, value, value_len);
            used += 4 + value_len;
        }
        it->off += step;
        it->left--;
        n++;
    }
    pthread_mutex_unlock(&ks->iter_lock);
    l->num_entries = n;
    l->size = used;
    return r;
}

kvs_result kvs_create_iterator(kvs_key_space_handle ks_hd, kvs_option_iterator *iter_op,
                               kvs_key_group_filter *iter_fltr, kvs_iterator_handle *iter_hd)
{
    uint32_t word, mask;
    kvs_result r = snia_check_ks(ks_hd);
    if (r) {
        return r;
    }
    if (!iter_op || !iter_hd) {
        return KVS_ERR_PARAM_INVALID;
    }
    if ((r = snia_filter(iter_fltr, &word, &mask))) {
        return r;
    }
    if (iter_op->iter_type != KVS_ITERATOR_KEY && iter_op->iter_type != KVS_ITERATOR_KEY_VALUE) {
        return KVS_ERR_OPTION_INVALID;
    }
    pthread_mutex_lock(&ks_hd->iter_lock);
    int slot = -1;
    for (int i = 0; i < KVS_MAX_ITERATE_HANDLE && slot < 0; i++) {
        if (!ks_hd->iters[i].open) {
            slot = i;
        }
    }
    if (slot < 0) {
        r = KVS_ERR_ITERATOR_MAX;
    } else {
        int rc = iter_open(ks_hd->dev, &ks_hd->iters[slot], word, mask,
                           iter_op->iter_type == KVS_ITERATOR_KEY_VALUE);
        r = snia_result(rc);
        if (!rc) {
            *iter_hd = (kvs_iterator_handle)(slot + 1);
        }
    }
    pthread_mutex_unlock(&ks_hd->iter_lock);
    return r;
}

kvs_result kvs_delete_iterator(kvs_key_space_handle ks_hd, kvs_iterator_handle iter_hd)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r) {
        return r;
    }
    pthread_mutex_lock(&ks_hd->iter_lock);
    struct snia_iter *it = iter_of(ks_hd, iter_hd);
    if (it) {
        iter_close(ks_hd->dev, it);
    }
    pthread_mutex_unlock(&ks_hd->iter_lock);
    return it ? KVS_SUCCESS : KVS_ERR_ITERATOR_NOT_EXIST;
}

kvs_result kvs_iterate_next(kvs_key_space_handle ks_hd, kvs_iterator_handle iter_hd,
                            kvs_iterator_list *iter_list)
{
    kvs_result r = snia_check_ks(ks_hd);
    if (r) {
        return r;
    }
    if (!iter_list || !iter_list->it_list) {
        return KVS_ERR_PARAM_INVALID;
    }
    return snia_iter_next(ks_hd, iter_hd, iter_list);
}

void snia_iter_close_all(kvs_key_space_handle ks)
{
    pthread_mutex_lock(&ks->iter_lock);
    for (int i = 0; i < KVS_MAX_ITERATE_HANDLE; i++) {
        if (ks->iters[i].open) {
            iter_close(ks->dev, &ks->iters[i]);
        }
    }
    pthread_mutex_unlock(&ks->iter_lock);
}

/*
 * Key groups: a keys-only iterator over the filter, each batch's keys
 * deleted before the next Iter Read. The device returns every key live
 * for the whole iteration exactly once, and deleting keys it already
 * returned does not disturb the walk. Not atomic: a key stored meanwhile
 * may survive.
 */
kvs_result snia_delete_group(struct _kvs_device_handle *d, const kvs_key_group_filter *f)
{
    struct snia_iter it;
    const uint8_t *key, *value;
    uint32_t key_len, value_len, word, mask;
    kvs_result r = snia_filter(f, &word, &mask);
    if (r) {
        return r;
    }
    int rc = iter_open(d, &it, word, mask, false);
    while (!rc) {
        if (it.left == 0) {
            if (it.at_end) {
                break;
            }
            rc = iter_read(d, &it);
            continue;
        }
        uint32_t step = iter_peek(&it, &key, &key_len, &value, &value_len);
        if (!step) {
            rc = -KVSSD_ERR_TRANSFER;
            break;
        }
        rc = kvssd_delete(d->dev, key, key_len, NULL);
        if (rc == -KVSSD_ERR_KEY_NOT_FOUND) {
            rc = 0; /* deleted meanwhile by someone else */
        }
        it.off += step;
        it.left--;
    }
    if (it.buf || it.open) {
        iter_close(d, &it);
    }
    return snia_result(rc);
}
