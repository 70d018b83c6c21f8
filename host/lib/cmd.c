/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pure command encoding: every KV, extension and admin command the library
 * issues, as the dwords of a struct kvssd_sqe. No I/O happens here, so the
 * unit tests check these byte for byte against <kvssd/nvme.h> (admin
 * commands), <kvssd/nvme_kv.h> and <kvssd/ext.h>.
 */
#include <string.h>

#include <kvssd/libkvssd.h>

static void cmd_init(struct kvssd_cmd *cmd, uint8_t opcode, uint32_t nsid)
{
    memset(cmd, 0, sizeof(*cmd));
    cmd->sqe.cdw[0] = opcode;
    cmd->sqe.cdw[1] = nsid;
}

/*
 * The key field (CDW2-3, CDW14-15) for keys of up to 16 bytes; a longer
 * key was staged, and CDW2[11:0] names its tag instead.
 */
static void cmd_set_key(struct kvssd_cmd *cmd, const void *key, uint32_t key_len, uint32_t key_tag)
{
    if (key_len <= KVSSD_KEY_INLINE_MAX) {
        if (key_len) {
            kvssd_sqe_set_key(&cmd->sqe, key, key_len);
        }
    } else {
        cmd->sqe.cdw[2] = key_tag & KVSSD_TAG_MASK;
    }
}

/*
 * A payload area: an ordered list of byte lanes (dword, byte within the
 * dword, little endian). Writing stream byte j sets lane j.
 */
struct payload_lane {
    uint8_t dw;
    uint8_t byte;
};

static uint32_t payload_put(struct kvssd_sqe *sqe, const struct payload_lane *lanes,
                            uint32_t n_lanes, uint32_t first_lane, const uint8_t *src, uint32_t len)
{
    uint32_t n = 0;
    for (uint32_t l = first_lane; l < n_lanes && n < len; l++, n++) {
        uint32_t shift = 8u * lanes[l].byte;
        sqe->cdw[lanes[l].dw] &= ~(0xffu << shift);
        sqe->cdw[lanes[l].dw] |= (uint32_t)src[n] << shift;
    }
    return n;
}

#define LANES4(d) {d, 0}, {d, 1}, {d, 2}, {d, 3}

/* Stock head payload area: CDW2, CDW3, CDW12, CDW13, CDW14, CDW15. */
static const struct payload_lane head_lanes[KVSSD_INLINE_HEAD_PAYLOAD] = {
    LANES4(2), LANES4(3), LANES4(12), LANES4(13), LANES4(14), LANES4(15),
};
/* Stock transfer payload: CDW2, CDW3, CDW11, CDW12, CDW13, CDW14, CDW15. */
static const struct payload_lane xfer_lanes[KVSSD_INLINE_XFER_PAYLOAD] = {
    LANES4(2), LANES4(3), LANES4(11), LANES4(12), LANES4(13), LANES4(14), LANES4(15),
};
/* Full head payload: CDW11[31:8], CDW4..CDW9, CDW12, CDW13. */
static const struct payload_lane head_full_lanes[KVSSD_INLINE_HEAD_FULL_PAYLOAD] = {
    {11, 1},   {11, 2},   {11, 3},   LANES4(4),  LANES4(5),  LANES4(6),
    LANES4(7), LANES4(8), LANES4(9), LANES4(12), LANES4(13),
};
/* Full transfer payload: CDW2..CDW15. */
static const struct payload_lane xfer_full_lanes[KVSSD_INLINE_XFER_FULL_PAYLOAD] = {
    LANES4(2), LANES4(3),  LANES4(4),  LANES4(5),  LANES4(6),  LANES4(7),  LANES4(8),
    LANES4(9), LANES4(10), LANES4(11), LANES4(12), LANES4(13), LANES4(14), LANES4(15),
};

/* A command on one key: its key field (or staged-key tag) and CDW11 = key length | options. */
static void cmd_keyed(struct kvssd_cmd *cmd, uint8_t opcode, uint32_t nsid, const void *key,
                      uint32_t key_len, uint32_t key_tag, uint32_t options)
{
    cmd_init(cmd, opcode, nsid);
    cmd_set_key(cmd, key, key_len, key_tag);
    cmd->sqe.cdw[11] = kvssd_cdw11(key_len, options);
}

/* A keyed command whose data goes to @buf, @buf_len bytes (CDW10); no buffer when 0. */
static void cmd_keyed_to_host(struct kvssd_cmd *cmd, uint8_t opcode, uint32_t nsid, const void *key,
                              uint32_t key_len, uint32_t key_tag, void *buf, uint32_t buf_len)
{
    cmd_keyed(cmd, opcode, nsid, key, key_len, key_tag, 0);
    cmd->sqe.cdw[10] = buf_len;
    cmd->data = buf_len ? buf : NULL;
    cmd->data_len = buf_len;
}

void kvssd_cmd_store(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                     uint32_t key_tag, const void *value, uint32_t value_len, uint32_t options)
{
    cmd_keyed(cmd, KVSSD_OPC_STORE, nsid, key, key_len, key_tag,
              options & KVSSD_STORE_OPT_VALID_MASK);
    cmd->sqe.cdw[10] = value_len;
    cmd->data = (void *)value;
    cmd->data_len = value_len;
}

void kvssd_cmd_retrieve(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                        uint32_t key_tag, void *buf, uint32_t buf_len)
{
    cmd_keyed_to_host(cmd, KVSSD_OPC_RETRIEVE, nsid, key, key_len, key_tag, buf, buf_len);
}

void kvssd_cmd_delete(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                      uint32_t key_tag)
{
    cmd_keyed(cmd, KVSSD_OPC_DELETE, nsid, key, key_len, key_tag, 0);
}

void kvssd_cmd_exist(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                     uint32_t key_tag)
{
    cmd_keyed(cmd, KVSSD_OPC_EXIST, nsid, key, key_len, key_tag, 0);
}

void kvssd_cmd_list(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                    uint32_t key_tag, void *buf, uint32_t buf_len)
{
    cmd_keyed_to_host(cmd, KVSSD_OPC_LIST, nsid, key, key_len, key_tag, buf, buf_len);
}

void kvssd_cmd_flush(struct kvssd_cmd *cmd, uint32_t nsid)
{
    cmd_init(cmd, KVSSD_OPC_FLUSH, nsid);
}

void kvssd_cmd_key_stage(struct kvssd_cmd *cmd, uint32_t nsid, const void *key, uint32_t key_len,
                         uint32_t tag)
{
    cmd_init(cmd, KVSSD_OPC_KEY_STAGE, nsid);
    cmd->sqe.cdw[10] = key_len & 0xffu;
    cmd->sqe.cdw[11] = tag & KVSSD_TAG_MASK;
    cmd->data = (void *)key;
    cmd->data_len = key_len;
}

void kvssd_cmd_iter_open(struct kvssd_cmd *cmd, uint32_t nsid, uint32_t prefix, uint32_t mask,
                         bool with_values)
{
    cmd_init(cmd, KVSSD_OPC_ITER_OPEN, nsid);
    cmd->sqe.cdw[10] = prefix;
    cmd->sqe.cdw[11] = mask;
    cmd->sqe.cdw[12] = with_values ? KVSSD_ITER_FLAG_KEY_VALUE : 0;
}

void kvssd_cmd_iter_read(struct kvssd_cmd *cmd, uint32_t nsid, uint32_t handle, void *buf,
                         uint32_t buf_len)
{
    cmd_init(cmd, KVSSD_OPC_ITER_READ, nsid);
    cmd->sqe.cdw[10] = buf_len;
    cmd->sqe.cdw[11] = handle & 0xffu;
    cmd->data = buf;
    cmd->data_len = buf_len;
}

void kvssd_cmd_iter_close(struct kvssd_cmd *cmd, uint32_t nsid, uint32_t handle)
{
    cmd_init(cmd, KVSSD_OPC_ITER_CLOSE, nsid);
    cmd->sqe.cdw[10] = handle & 0xffu;
}

uint32_t kvssd_cmd_inline_head(struct kvssd_cmd *cmd, uint32_t nsid, const void *key,
                               uint32_t key_len, uint32_t key_tag, uint32_t stream_tag,
                               uint32_t value_len, uint32_t options, bool hybrid,
                               const void *page_data, const void *tail, uint32_t tail_len)
{
    uint32_t first_lane;

    cmd_init(cmd, KVSSD_OPC_INLINE_HEAD, nsid);
    cmd->sqe.cdw[10] = kvssd_inline_head_cdw10(value_len, options, key_len);
    cmd->sqe.cdw[11] = (stream_tag & KVSSD_TAG_MASK) | (hybrid ? KVSSD_INLINE_HYBRID : 0);
    if (key_len <= KVSSD_KEY_INLINE_MAX) {
        /* the key opens the payload area; value bytes follow without padding */
        payload_put(&cmd->sqe, head_lanes, KVSSD_INLINE_HEAD_PAYLOAD, 0, key, key_len);
        first_lane = key_len;
    } else {
        /* CDW2[11:0] is the staged-key tag; the payload starts at CDW3 */
        cmd->sqe.cdw[2] = key_tag & KVSSD_TAG_MASK;
        first_lane = 4;
    }
    if (hybrid) {
        cmd->data = (void *)page_data;
        cmd->data_len = value_len & ~(KVSSD_HYBRID_PAGE_BYTES - 1);
    }
    return payload_put(&cmd->sqe, head_lanes, KVSSD_INLINE_HEAD_PAYLOAD, first_lane, tail,
                       tail_len);
}

uint32_t kvssd_cmd_inline_head_full_tail(struct kvssd_cmd *cmd, uint32_t nsid, const void *key,
                                         uint32_t key_len, uint32_t key_tag, uint32_t stream_tag,
                                         uint32_t value_len, uint32_t options, bool hybrid,
                                         const void *page_data, const void *tail, uint32_t tail_len)
{
    uint32_t n = kvssd_cmd_inline_head(cmd, nsid, key, key_len, key_tag, stream_tag, value_len,
                                       options, hybrid, page_data, tail, tail_len);

    /* the stream's transfers are 8Dh; a tag above 255 is sent as is (the device: 0002h) */
    cmd->sqe.cdw[11] |= KVSSD_INLINE_FULL_TAIL;
    return n;
}

uint32_t kvssd_cmd_inline_xfer(struct kvssd_cmd *cmd, uint32_t nsid, uint32_t stream_tag,
                               uint32_t seq, const void *bytes, uint32_t len)
{
    cmd_init(cmd, KVSSD_OPC_INLINE_XFER, nsid);
    cmd->sqe.cdw[10] = kvssd_inline_tag_seq(stream_tag, seq);
    return payload_put(&cmd->sqe, xfer_lanes, KVSSD_INLINE_XFER_PAYLOAD, 0, bytes, len);
}

uint32_t kvssd_cmd_inline_head_full(struct kvssd_cmd *cmd, uint32_t nsid, const void *key,
                                    uint32_t key_len, uint32_t stream_tag, uint32_t value_len,
                                    uint32_t options, const void *value, uint32_t len)
{
    cmd_init(cmd, KVSSD_OPC_INLINE_HEAD_FULL, nsid);
    if (key_len) {
        kvssd_sqe_set_key(&cmd->sqe, key, key_len);
    }
    cmd->sqe.cdw[10] = kvssd_inline_head_cdw10(value_len, options, key_len);
    cmd->sqe.cdw[11] = stream_tag & KVSSD_INLINE_FULL_MAX_TAG;
    return payload_put(&cmd->sqe, head_full_lanes, KVSSD_INLINE_HEAD_FULL_PAYLOAD, 0, value, len);
}

uint32_t kvssd_cmd_inline_xfer_full(struct kvssd_cmd *cmd, uint32_t stream_tag, uint32_t seq,
                                    const void *bytes, uint32_t len)
{
    /* the full transfer has no NSID: CDW1 carries tag and sequence */
    cmd_init(cmd, KVSSD_OPC_INLINE_XFER_FULL, kvssd_inline_tag_seq(stream_tag, seq));
    return payload_put(&cmd->sqe, xfer_full_lanes, KVSSD_INLINE_XFER_FULL_PAYLOAD, 0, bytes, len);
}

void kvssd_cmd_identify(struct kvssd_cmd *cmd, uint32_t nsid, uint8_t cns, uint8_t csi, void *buf)
{
    cmd_init(cmd, KVSSD_ADM_IDENTIFY, nsid);
    cmd->admin = true;
    cmd->sqe.cdw[10] = cns;
    cmd->sqe.cdw[11] = kvssd_identify_cdw11(csi);
    cmd->data = buf;
    cmd->data_len = KVSSD_IDENTIFY_BYTES;
}

/* Little-endian fields of a page the device wrote (possibly unaligned). */
static uint32_t le16(const void *p)
{
    const uint8_t *b = p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8;
}

static uint32_t le32(const void *p)
{
    const uint8_t *b = p;
    return le16(b) | le16(b + 2) << 16;
}

static uint64_t le64(const void *p)
{
    const uint8_t *b = p;
    return le32(b) | (uint64_t)le32(b + 4) << 32;
}

int kvssd_id_ns_kv_decode(const void *page, struct kvssd_dev_info *info)
{
    const struct kvssd_id_ns_kv *id = page;
    uint32_t kvmkl = le16(&id->kvf[0].kvmkl);
    uint32_t long_max = kvssd_id_ns_kv_long_key_max(id);

    if (kvmkl == 0) {
        return -KVSSD_ERR_NO_DEVICE;
    }
    info->nsze_bytes = le64(&id->nsze);
    info->nuse_bytes = le64(&id->nuse);
    info->format_max_key_bytes = kvmkl;
    /* Without our Key Stage, a key longer than the SQE's 16 bytes cannot be sent. */
    info->max_key_bytes = long_max ? long_max
                                   : (kvmkl < KVSSD_KEY_INLINE_MAX ? kvmkl : KVSSD_KEY_INLINE_MAX);
    info->max_value_bytes = le32(&id->kvf[0].kvmvl);
    info->max_keys = le32(&id->kvf[0].kvmnk);
    info->optimal_value_granularity_bytes = le32(&id->novg);
    return 0;
}

/* Get Log Page of the whole log @lid of @nsid into @buf of @len bytes (a multiple of 4). */
static void cmd_get_log(struct kvssd_cmd *cmd, uint8_t lid, uint32_t nsid, void *buf, uint32_t len)
{
    uint32_t numd = len / 4 - 1; /* zero-based dword count */

    cmd_init(cmd, KVSSD_ADM_GET_LOG_PAGE, nsid);
    cmd->admin = true;
    cmd->sqe.cdw[10] = kvssd_get_log_cdw10(lid, numd);
    cmd->sqe.cdw[11] = kvssd_get_log_cdw11(numd);
    cmd->data = buf;
    cmd->data_len = len;
}

void kvssd_cmd_get_stats_log(struct kvssd_cmd *cmd, struct kvssd_stats_log *log)
{
    cmd_get_log(cmd, KVSSD_LID_STATS, KVSSD_NSID_ALL, log, sizeof(*log));
}

void kvssd_cmd_get_config_log(struct kvssd_cmd *cmd, struct kvssd_config_log *log)
{
    cmd_get_log(cmd, KVSSD_LID_CONFIG, KVSSD_NSID_ALL, log, sizeof(*log));
}

void kvssd_cmd_get_id_ns_kv_log(struct kvssd_cmd *cmd, uint32_t nsid, struct kvssd_id_ns_kv *id)
{
    cmd_get_log(cmd, KVSSD_LID_ID_NS_KV, nsid, id, sizeof(*id));
}

void kvssd_cmd_reset_stats(struct kvssd_cmd *cmd)
{
    cmd_init(cmd, KVSSD_ADM_SET_FEATURES, 0);
    cmd->admin = true;
    cmd->sqe.cdw[10] = KVSSD_FID_RESET_STATS;
    cmd->sqe.cdw[11] = 1;
}

void kvssd_cmd_format(struct kvssd_cmd *cmd, uint32_t nsid)
{
    cmd_init(cmd, KVSSD_ADM_FORMAT_NVM, nsid);
    cmd->admin = true;
}

/* ---- decoding what List and Iter Read return ---------------------- */

static uint32_t le16_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int kvssd_list_parse(const void *buf, uint32_t buf_len, uint32_t *off, const uint8_t **key,
                     uint32_t *key_len)
{
    const uint8_t *b = buf;

    if (*off == 0) {
        if (buf_len < KVSSD_LIST_HEADER_BYTES) {
            return -KVSSD_ERR_TRANSFER;
        }
        *off = KVSSD_LIST_HEADER_BYTES;
    }
    if (*off + 2 > buf_len) {
        return 0;
    }
    uint32_t kl = le16_at(b + *off);
    if (kl == 0) {
        return 0; /* zero padding after the last entry */
    }
    if (kl > KVSSD_KEY_MAX || *off + 2 + kl > buf_len) {
        return -KVSSD_ERR_TRANSFER;
    }
    *key = b + *off + 2;
    *key_len = kl;
    *off += kvssd_list_entry_bytes(kl);
    return 1;
}

uint32_t kvssd_iter_parse_entry(const uint8_t *p, uint32_t len, bool with_values,
                                const uint8_t **key, uint32_t *key_len, const uint8_t **value,
                                uint32_t *value_len)
{
    if (len < 2) {
        return 0;
    }
    uint32_t kl = le16_at(p);
    if (kl < KVSSD_KEY_MIN || kl > KVSSD_KEY_MAX || 2 + kl > len) {
        return 0;
    }
    uint32_t vl = 0;
    if (with_values) {
        if (2 + kl + 4 > len) {
            return 0;
        }
        vl = le32_at(p + 2 + kl);
        if (vl > KVSSD_VALUE_MAX || 2 + kl + 4 + vl > len) {
            return 0;
        }
        *value = p + 2 + kl + 4;
    } else {
        *value = NULL;
    }
    uint32_t n = kvssd_iter_entry_bytes(kl, with_values, vl);
    if (n > len) {
        n = len; /* last entry's padding may be cut by the batch end */
    }
    *key = p + 2;
    *key_len = kl;
    *value_len = vl;
    return n;
}

void kvssd_prefix_word(const void *prefix, uint32_t prefix_len, uint32_t *word, uint32_t *mask)
{
    const uint8_t *p = prefix;
    *word = 0;
    *mask = 0;
    for (uint32_t i = 0; i < 4 && i < prefix_len; i++) {
        *word |= (uint32_t)p[i] << (24 - 8 * i);
        *mask |= 0xffu << (24 - 8 * i);
    }
}
