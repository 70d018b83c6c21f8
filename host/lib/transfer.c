/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Transfer methods (BandSlim §3.2): which of PRP, inline and hybrid a Store
 * uses, and how a Store is split into Key Stage + head + transfer commands
 * in the stock layout (the only one Linux passthrough can carry) or, on the
 * pci transport, BandSlim's full layout (89h/8Dh; hybrid: a stock head with
 * the full-tail bit and 8Dh transfers). Pure: no
 * I/O besides reading and writing the threshold config file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvssd/libkvssd.h>

#define PAGE_MASK (KVSSD_HYBRID_PAGE_BYTES - 1u)

void kvssd_xfer_config_default(struct kvssd_xfer_config *cfg)
{
    cfg->threshold1_bytes = KVSSD_DEFAULT_THRESHOLD1_BYTES;
    cfg->threshold2_bytes = KVSSD_DEFAULT_THRESHOLD2_BYTES;
    cfg->alpha = 1.0;
    cfg->beta = 1.0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) {
        *--e = '\0';
    }
    return s;
}

static void set_err(char *errbuf, size_t errlen, const char *fmt, const char *path, int line,
                    const char *what)
{
    if (errbuf && errlen) {
        snprintf(errbuf, errlen, fmt, path, line, what);
    }
}

/* A bad value's sentence: FILE:LINE: KEY must be RANGE, not "VALUE". */
static void set_value_err(char *errbuf, size_t errlen, const char *path, int line, const char *key,
                          const char *range, const char *val)
{
    if (errbuf && errlen) {
        snprintf(errbuf, errlen, "%s:%d: %s must be %s, not \"%s\"", path, line, key, range, val);
    }
}

/*
 * The config is an INI file with one [transfer] group; keys of other groups
 * are ignored so that kvbench can keep its own notes beside them. Comments
 * are lines starting with '#' or ';', or the rest of a value line from a
 * '#' or ';' after white space.
 */
int kvssd_xfer_config_load(const char *path, struct kvssd_xfer_config *cfg, char *errbuf,
                           size_t errlen)
{
    FILE *f = fopen(path, "r");
    char line[256], group[64] = "";
    int lineno = 0, rc = 0;

    if (!f) {
        int e = errno;
        if (errbuf && errlen && e == ENOENT) {
            snprintf(errbuf, errlen, "transfer config file %s does not exist", path);
        } else if (errbuf && errlen) {
            snprintf(errbuf, errlen, "transfer config file %s cannot be read: %s", path,
                     strerror(e));
        }
        errno = e;
        return -KVSSD_ERR_SYSTEM;
    }
    struct kvssd_xfer_config c = *cfg;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            set_err(errbuf, errlen, "%s:%d: the line is longer than %s characters", path, lineno,
                    "254");
            rc = -KVSSD_ERR_CONFIG;
            break;
        }
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';') {
            continue;
        }
        if (*s == '[') {
            char *e = strchr(s, ']');
            if (!e) {
                set_err(errbuf, errlen, "%s:%d: unterminated group header \"%s\"", path, lineno, s);
                rc = -KVSSD_ERR_CONFIG;
                break;
            }
            *e = '\0';
            snprintf(group, sizeof(group), "%s", s + 1);
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            set_err(errbuf, errlen, "%s:%d: \"%s\" is not key=value", path, lineno, s);
            rc = -KVSSD_ERR_CONFIG;
            break;
        }
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1), *end;
        /* an inline comment, as docs/host.md's example has: '#' or ';' after white space */
        for (char *p = val; *p; p++) {
            if ((*p == '#' || *p == ';') && p > val && isspace((unsigned char)p[-1])) {
                *p = '\0';
                val = trim(val);
                break;
            }
        }
        if (strcmp(group, "transfer") != 0) {
            continue;
        }
        errno = 0;
        if (!strcmp(key, "threshold1_bytes") || !strcmp(key, "threshold2_bytes")) {
            unsigned long v = strtoul(val, &end, 10);
            if (errno || end == val || *end || v > KVSSD_VALUE_MAX || val[0] == '-') {
                set_value_err(errbuf, errlen, path, lineno, key, "0..2097152 bytes", val);
                rc = -KVSSD_ERR_CONFIG;
                break;
            }
            if (key[9] == '1') {
                c.threshold1_bytes = (uint32_t)v;
            } else {
                c.threshold2_bytes = (uint32_t)v;
            }
        } else if (!strcmp(key, "alpha") || !strcmp(key, "beta")) {
            double v = strtod(val, &end);
            if (errno || end == val || *end || !(v >= 0.0) || v > 1e6) {
                set_value_err(errbuf, errlen, path, lineno, key, "a number 0..1000000", val);
                rc = -KVSSD_ERR_CONFIG;
                break;
            }
            if (key[0] == 'a') {
                c.alpha = v;
            } else {
                c.beta = v;
            }
        } else {
            set_err(errbuf, errlen, "%s:%d: unknown key \"%s\" in [transfer]", path, lineno, key);
            rc = -KVSSD_ERR_CONFIG;
            break;
        }
    }
    fclose(f);
    if (!rc) {
        *cfg = c;
    }
    return rc;
}

int kvssd_xfer_config_save(const char *path, const struct kvssd_xfer_config *cfg,
                           const char *comment)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        return -KVSSD_ERR_SYSTEM;
    }
    if (comment) {
        fprintf(f, "# %s\n", comment);
    }
    fprintf(f, "[transfer]\nthreshold1_bytes=%u\nthreshold2_bytes=%u\nalpha=%g\nbeta=%g\n",
            cfg->threshold1_bytes, cfg->threshold2_bytes, cfg->alpha, cfg->beta);
    if (fclose(f)) {
        return -KVSSD_ERR_SYSTEM;
    }
    return 0;
}

enum kvssd_xfer_mode kvssd_xfer_choose(enum kvssd_xfer_mode mode,
                                       const struct kvssd_xfer_config *cfg, uint32_t value_len)
{
    uint32_t tail = value_len & PAGE_MASK;

    switch (mode) {
    case KVSSD_XFER_PRP:
    case KVSSD_XFER_INLINE:
        return mode;
    case KVSSD_XFER_HYBRID:
        if (value_len < KVSSD_HYBRID_PAGE_BYTES) {
            return KVSSD_XFER_INLINE; /* no whole page to DMA */
        }
        return tail ? KVSSD_XFER_HYBRID : KVSSD_XFER_PRP;
    case KVSSD_XFER_ADAPTIVE:
    default:
        if ((double)value_len <= cfg->alpha * cfg->threshold1_bytes) {
            return KVSSD_XFER_INLINE;
        }
        if (value_len > KVSSD_HYBRID_PAGE_BYTES && tail &&
            (double)tail <= cfg->beta * cfg->threshold2_bytes) {
            return KVSSD_XFER_HYBRID;
        }
        return KVSSD_XFER_PRP;
    }
}

static const char *const mode_names[] = {"prp", "inline", "hybrid", "adaptive"};

const char *kvssd_xfer_mode_name(enum kvssd_xfer_mode mode)
{
    return (unsigned)mode < 4 ? mode_names[mode] : "unknown";
}

int kvssd_xfer_mode_parse(const char *name)
{
    for (int i = 0; i < 4; i++) {
        if (name && !strcmp(name, mode_names[i])) {
            return i;
        }
    }
    return -1;
}

enum kvssd_wire_layout kvssd_store_layout(enum kvssd_wire_layout transport,
                                          enum kvssd_xfer_mode method, uint32_t key_len)
{
    if (transport != KVSSD_WIRE_FULL) {
        return KVSSD_WIRE_STOCK;
    }
    /*
     * A hybrid Store keeps the stock head (81h: data pointer, staged-key
     * form) with the full-tail bit, so its tail travels in 8Dh transfers
     * whatever the key length (docs/protocol.md 7.3a).
     */
    if (method == KVSSD_XFER_HYBRID) {
        return KVSSD_WIRE_FULL;
    }
    /* the full head has no staged-key tag */
    if (method == KVSSD_XFER_INLINE && key_len <= KVSSD_KEY_INLINE_MAX) {
        return KVSSD_WIRE_FULL;
    }
    return KVSSD_WIRE_STOCK;
}

/* Value bytes the head carries: a stock head unless it is a full-layout inline head. */
static uint32_t head_capacity(bool full_head, uint32_t key_len)
{
    if (full_head) {
        return KVSSD_INLINE_HEAD_FULL_PAYLOAD; /* the key has its own dwords */
    }
    /* a long key's tag takes CDW2; a short key takes its own bytes */
    return key_len <= KVSSD_KEY_INLINE_MAX ? KVSSD_INLINE_HEAD_PAYLOAD - key_len
                                           : KVSSD_INLINE_HEAD_PAYLOAD - 4;
}

static uint32_t inline_commands(enum kvssd_wire_layout layout, enum kvssd_xfer_mode method,
                                uint32_t key_len, uint32_t inline_bytes)
{
    uint32_t cap = head_capacity(layout == KVSSD_WIRE_FULL && method != KVSSD_XFER_HYBRID, key_len);
    uint32_t xfer = layout == KVSSD_WIRE_FULL ? KVSSD_INLINE_XFER_FULL_PAYLOAD
                                              : KVSSD_INLINE_XFER_PAYLOAD;
    if (inline_bytes <= cap) {
        return 1;
    }
    return 1 + (inline_bytes - cap + xfer - 1) / xfer;
}

uint32_t kvssd_store_commands_layout(enum kvssd_wire_layout transport, enum kvssd_xfer_mode method,
                                     uint32_t key_len, uint32_t value_len)
{
    enum kvssd_wire_layout layout = kvssd_store_layout(transport, method, key_len);
    uint32_t n = key_len > KVSSD_KEY_INLINE_MAX ? 1 : 0;
    switch (method) {
    case KVSSD_XFER_INLINE:
        return n + inline_commands(layout, method, key_len, value_len);
    case KVSSD_XFER_HYBRID:
        return n + inline_commands(layout, method, key_len, value_len & PAGE_MASK);
    default:
        return n + 1;
    }
}

uint32_t kvssd_store_commands(enum kvssd_xfer_mode method, uint32_t key_len, uint32_t value_len)
{
    return kvssd_store_commands_layout(KVSSD_WIRE_STOCK, method, key_len, value_len);
}

int kvssd_store_plan_init(struct kvssd_store_plan *p, uint32_t nsid, const void *key,
                          uint32_t key_len, uint32_t key_tag, uint32_t stream_tag,
                          const void *value, uint32_t value_len, uint32_t options,
                          enum kvssd_xfer_mode method)
{
    return kvssd_store_plan_init_layout(p, KVSSD_WIRE_STOCK, nsid, key, key_len, key_tag,
                                        stream_tag, value, value_len, options, method);
}

int kvssd_store_plan_init_layout(struct kvssd_store_plan *p, enum kvssd_wire_layout transport,
                                 uint32_t nsid, const void *key, uint32_t key_len, uint32_t key_tag,
                                 uint32_t stream_tag, const void *value, uint32_t value_len,
                                 uint32_t options, enum kvssd_xfer_mode method)
{
    if (key_len < KVSSD_KEY_MIN || key_len > KVSSD_KEY_MAX) {
        return -KVSSD_ERR_KEY_SIZE;
    }
    if (value_len > KVSSD_VALUE_MAX) {
        return -KVSSD_ERR_VALUE_SIZE;
    }
    if (!key || (value_len && !value) || (options & ~KVSSD_STORE_OPT_VALID_MASK) ||
        options == KVSSD_STORE_OPT_VALID_MASK) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    if (method != KVSSD_XFER_PRP && method != KVSSD_XFER_INLINE && method != KVSSD_XFER_HYBRID) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    if (method == KVSSD_XFER_HYBRID && value_len < KVSSD_HYBRID_PAGE_BYTES) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    if (transport != KVSSD_WIRE_STOCK && transport != KVSSD_WIRE_FULL) {
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    enum kvssd_wire_layout layout = kvssd_store_layout(transport, method, key_len);
    if (layout == KVSSD_WIRE_FULL && stream_tag > KVSSD_INLINE_FULL_MAX_TAG) {
        return -KVSSD_ERR_INVALID_ARGUMENT; /* full-layout streams have 8-bit tags */
    }
    memset(p, 0, sizeof(*p));
    p->nsid = nsid;
    p->key = key;
    p->key_len = key_len;
    p->key_tag = key_tag & KVSSD_TAG_MASK;
    p->stream_tag = stream_tag & KVSSD_TAG_MASK;
    p->value = value ? value : (const uint8_t *)""; /* never offset a NULL pointer */
    p->value_len = value_len;
    p->options = options;
    p->method = method;
    p->inline_off = method == KVSSD_XFER_HYBRID ? value_len & ~PAGE_MASK : 0;
    p->seq = 1;
    p->layout = layout;
    p->total = kvssd_store_commands_layout(transport, method, key_len, value_len);
    return 0;
}

bool kvssd_store_plan_next(struct kvssd_store_plan *p, struct kvssd_cmd *cmd)
{
    bool long_key = p->key_len > KVSSD_KEY_INLINE_MAX;

    if (p->next_index >= p->total) {
        return false;
    }
    if (long_key && p->next_index == 0) {
        kvssd_cmd_key_stage(cmd, p->nsid, p->key, p->key_len, p->key_tag);
    } else if (p->next_index == (long_key ? 1u : 0u)) {
        if (p->method == KVSSD_XFER_PRP) {
            kvssd_cmd_store(cmd, p->nsid, p->key, p->key_len, p->key_tag, p->value, p->value_len,
                            p->options);
        } else if (p->method == KVSSD_XFER_HYBRID && p->layout == KVSSD_WIRE_FULL) {
            p->inline_off += kvssd_cmd_inline_head_full_tail(
                cmd, p->nsid, p->key, p->key_len, p->key_tag, p->stream_tag, p->value_len,
                p->options, true, p->value, p->value + p->inline_off, p->value_len - p->inline_off);
        } else if (p->layout == KVSSD_WIRE_FULL) {
            p->inline_off += kvssd_cmd_inline_head_full(
                cmd, p->nsid, p->key, p->key_len, p->stream_tag, p->value_len, p->options,
                p->value + p->inline_off, p->value_len - p->inline_off);
        } else {
            p->inline_off += kvssd_cmd_inline_head(
                cmd, p->nsid, p->key, p->key_len, p->key_tag, p->stream_tag, p->value_len,
                p->options, p->method == KVSSD_XFER_HYBRID, p->value, p->value + p->inline_off,
                p->value_len - p->inline_off);
        }
    } else if (p->layout == KVSSD_WIRE_FULL) {
        p->inline_off += kvssd_cmd_inline_xfer_full(
            cmd, p->stream_tag, p->seq++, p->value + p->inline_off, p->value_len - p->inline_off);
    } else {
        p->inline_off += kvssd_cmd_inline_xfer(cmd, p->nsid, p->stream_tag, p->seq++,
                                               p->value + p->inline_off,
                                               p->value_len - p->inline_off);
    }
    p->next_index++;
    return true;
}
