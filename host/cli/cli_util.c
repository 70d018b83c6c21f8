/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kvssd CLI's pure parts: see cli.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <glib.h>

#include "cli.h"

json_object *kvssd_cli_json_bytes(const uint8_t *p, uint32_t n, bool force_hex)
{
    /* g_utf8_validate_len refuses NUL bytes: a key holding one is shown in hex */
    if (!force_hex && (n == 0 || g_utf8_validate_len((const char *)p, n, NULL))) {
        return json_object_new_string_len(n ? (const char *)p : "", (int)n);
    }
    static const char digits[] = "0123456789abcdef";
    char *hex = malloc(2 * (size_t)n + 1);
    if (!hex) {
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        hex[2 * i] = digits[p[i] >> 4];
        hex[2 * i + 1] = digits[p[i] & 15];
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "hex", json_object_new_string_len(hex, (int)(2 * n)));
    free(hex);
    return o;
}

json_object *kvssd_cli_json_text(const char *s)
{
    return kvssd_cli_json_bytes((const uint8_t *)s, (uint32_t)strlen(s), false);
}

static json_object *cli_provenance; /* kvssd_cli_json_provenance() */

void kvssd_cli_json_provenance(json_object *p)
{
    json_object_put(cli_provenance);
    cli_provenance = p;
}

json_object *kvssd_cli_json_new(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "schema_version", json_object_new_int(KVSSD_CLI_SCHEMA_VERSION));
    if (cli_provenance) {
        json_object_object_add(o, "provenance", json_object_get(cli_provenance));
    }
    return o;
}

const char *kvssd_cli_json_string(json_object *o)
{
    return json_object_to_json_string_ext(o,
                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

bool kvssd_cli_key_is_text(const uint8_t *k, uint32_t n)
{
    const gchar *end = (const gchar *)k + n;

    if (n == 0 || (n >= 2 && k[0] == '0' && k[1] == 'x') ||
        !g_utf8_validate_len((const gchar *)k, n, NULL)) {
        return false;
    }
    for (const gchar *p = (const gchar *)k; p < end; p = g_utf8_next_char(p)) {
        if (!g_unichar_isprint(g_utf8_get_char(p))) {
            return false;
        }
    }
    return true;
}

bool kvssd_cli_is_device_arg(const char *arg)
{
    return !strncmp(arg, "/dev/", 5) || !strncmp(arg, "pci:", 4) || !strncmp(arg, "sim:", 4);
}

enum kvssd_cli_o_arg kvssd_cli_classify_o(const char *arg)
{
    if (!strcmp(arg, "json")) {
        return KVSSD_CLI_O_JSON;
    }
    if (!strcmp(arg, "normal")) {
        return KVSSD_CLI_O_NORMAL;
    }
    return KVSSD_CLI_O_UNKNOWN;
}

/* ls -l's ten characters for a device's mode */
static void mode_string(char out[11], mode_t mode)
{
    static const char rwx[] = "rwxrwxrwx";
    out[0] = S_ISCHR(mode) ? 'c' : S_ISBLK(mode) ? 'b' : S_ISDIR(mode) ? 'd' : '-';
    for (int i = 0; i < 9; i++) {
        out[1 + i] = mode & (0400u >> i) ? rwx[i] : '-';
    }
    out[10] = '\0';
}

void kvssd_cli_access_hint(char *buf, size_t len, const char *path, int err, mode_t mode, uid_t uid,
                           gid_t gid, const char *owner, const char *group)
{
    char m[11], o[32], g[32];

    if (err == ENOTTY) { /* NVME_IOCTL_ID refused: a file, a tty, a block device's partition */
        snprintf(buf, len, "cannot open %s: %s", path, KVSSD_CLI_NOT_NVME);
        return;
    }
    if (err != EACCES && err != EPERM) {
        snprintf(buf, len, "cannot open %s: %s", path, strerror(err));
        return;
    }
    mode_string(m, mode);
    snprintf(o, sizeof(o), "%s", owner ? owner : "");
    snprintf(g, sizeof(g), "%s", group ? group : "");
    if (!owner) {
        snprintf(o, sizeof(o), "%u", (unsigned)uid);
    }
    if (!group) {
        snprintf(g, sizeof(g), "%u", (unsigned)gid);
    }
    /* an NVMe passthrough command needs read and write access */
    if (gid != 0 && (mode & 060) == 060) {
        snprintf(buf, len,
                 "cannot open %s: permission denied (%s %s:%s); run as root or as a member of "
                 "group %s",
                 path, m, o, g, g);
    } else if (uid != 0 && (mode & 0600) == 0600) {
        snprintf(buf, len, "cannot open %s: permission denied (%s %s:%s); run as root or as %s",
                 path, m, o, g, o);
    } else {
        snprintf(buf, len, "cannot open %s: permission denied (%s %s:%s); run as root", path, m, o,
                 g);
    }
}

void kvssd_cli_config_hint(char *buf, size_t len, const char *path, bool from_env,
                           const char *detail)
{
    if (from_env) {
        snprintf(buf, len,
                 "%s (named by $KVSSD_TRANSFER_CONFIG); fix the file, or unset "
                 "KVSSD_TRANSFER_CONFIG to use the default thresholds",
                 detail);
    } else {
        snprintf(buf, len,
                 "%s (the default transfer config file); fix it (kvbench calibrate writes it) "
                 "or remove %s",
                 detail, path);
    }
}
