/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a JSON report came from, the same object in every tool's report
 * (kvssd -o json, kvbench --json, kvftl-bench --json, kvssd-cmd-bench
 * --json), under the key "provenance":
 *
 *   {"tool": "kvbench", "version": "0.1.0", "git_describe": "v0.1.0-3-gabc",
 *    "time_utc": "2026-12-02T07:00:00Z", "command_line": ["kvbench", ...],
 *    "host": "guest", "device": {...} or null}
 *
 * The command line's arguments and the host name are strings when valid
 * UTF-8, else {"hex": "..."} (their bytes), as the tools write paths.
 *
 * "device" is the device's configuration log page (LID C1h, struct
 * kvssd_config_log in <kvssd/ext.h>) as the device reported it, or null
 * when the tool measured no device (it could not open one, or an engine
 * other than the KV-SSD). Header-only, as key_order.h: the tools build in
 * different places and link json-c each.
 */
#ifndef BENCH_PROVENANCE_H
#define BENCH_PROVENANCE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kvssd/ext.h>
#include <kvssd_version.h>

/* Whether @s is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF). */
static inline bool provenance_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned char c = s[i];
        size_t len = c < 0x80             ? 1
                     : (c & 0xe0) == 0xc0 ? 2
                     : (c & 0xf0) == 0xe0 ? 3
                     : (c & 0xf8) == 0xf0 ? 4
                                          : 0;
        uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1fu : len == 3 ? c & 0x0fu : c & 0x07u;
        if (len == 0 || n - i < len) {
            return false;
        }
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) {
                return false;
            }
            cp = cp << 6 | (s[i + k] & 0x3fu);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            return false;
        }
        i += len;
    }
    return true;
}

/* @s as the tools write text: a string when valid UTF-8, else {"hex": its bytes}. */
static inline json_object *provenance_text(const char *s)
{
    size_t n = strlen(s);
    json_object *o;
    char *hex;

    if (provenance_utf8((const unsigned char *)s, n)) {
        return json_object_new_string(s);
    }
    hex = (char *)malloc(2 * n + 1);
    if (!hex) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s[i]);
    }
    o = json_object_new_object();
    json_object_object_add(o, "hex", json_object_new_string_len(hex, (int)(2 * n)));
    free(hex);
    return o;
}

/* A name field of the log page as JSON text: up to @n bytes, NUL ended, non-ASCII as '?'. */
static inline json_object *provenance_name(const char *field, size_t n)
{
    char s[64];
    size_t len = strnlen(field, n < sizeof(s) - 1 ? n : sizeof(s) - 1);

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)field[i];
        s[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    while (len > 0 && s[len - 1] == ' ') {
        len--; /* Identify's FR is space padded */
    }
    s[len] = '\0';
    return json_object_new_string(s);
}

/* provenance_device_json() - @l, the configuration log page, as a JSON object. */
static inline json_object *provenance_device_json(const struct kvssd_config_log *l)
{
    json_object *o = json_object_new_object();

#define PROV_NAME(f) json_object_object_add(o, #f, provenance_name(l->f, sizeof(l->f)))
#define PROV_U64(f) json_object_object_add(o, #f, json_object_new_uint64(l->f))
#define PROV_BOOL(f) json_object_object_add(o, #f, json_object_new_boolean(l->f != 0))
    PROV_NAME(firmware);
    PROV_NAME(preset);
    PROV_NAME(command_set);
    PROV_NAME(packing);
    PROV_NAME(index);
    PROV_NAME(gc_policy);
    PROV_U64(channels);
    PROV_U64(dies_per_channel);
    PROV_U64(blocks_per_die);
    PROV_U64(pages_per_block);
    PROV_U64(page_size_bytes);
    PROV_U64(placement_unit_bytes);
    PROV_U64(index_page_bytes);
    PROV_U64(overprovision_percent);
    PROV_U64(capacity_bytes);
    PROV_U64(index_dram_bytes);
    PROV_U64(read_latency_ns);
    PROV_U64(program_latency_ns);
    PROV_U64(erase_latency_ns);
    PROV_U64(channel_bytes_per_us);
    PROV_U64(dram_copy_bytes_per_us);
    PROV_U64(fw_fetch_decode_ns);
    PROV_U64(fw_index_probe_ns);
    PROV_U64(fw_inline_fragment_ns);
    PROV_U64(fw_dma_setup_ns);
    PROV_U64(fw_completion_ns);
    PROV_BOOL(latency);
    PROV_BOOL(plp);
    PROV_BOOL(bloom);
#undef PROV_NAME
#undef PROV_U64
#undef PROV_BOOL
    return o;
}

/*
 * provenance_json() - the provenance object of a report by @tool, run as
 * @argv[0..@argc-1], about @device (provenance_device_json(), or NULL for
 * null; the object takes it over).
 */
static inline json_object *provenance_json(const char *tool, int argc, char *const *argv,
                                           json_object *device)
{
    json_object *o = json_object_new_object(), *cmd = json_object_new_array();
    char when[32] = "", host[256] = "";
    time_t now = time(NULL);
    struct tm tm;

    if (gmtime_r(&now, &tm)) {
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    if (gethostname(host, sizeof(host) - 1) != 0) {
        host[0] = '\0';
    }
    for (int i = 0; i < argc && argv[i]; i++) {
        json_object_array_add(cmd, provenance_text(argv[i]));
    }
    json_object_object_add(o, "tool", json_object_new_string(tool));
    json_object_object_add(o, "version", json_object_new_string(KVSSD_VERSION));
    json_object_object_add(o, "git_describe", json_object_new_string(KVSSD_GIT_DESCRIBE));
    json_object_object_add(o, "time_utc", json_object_new_string(when));
    json_object_object_add(o, "command_line", cmd);
    json_object_object_add(o, "host", provenance_text(host));
    json_object_object_add(o, "device", device);
    return o;
}

#endif /* BENCH_PROVENANCE_H */
