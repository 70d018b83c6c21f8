/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kvssd CLI's pure parts (cli_util.c): the JSON form of byte strings,
 * argument classification and the sentences that say what to do. No
 * device and no I/O besides what each comment names, so tests/host/test_cli.c
 * checks them exactly.
 */
#ifndef KVSSD_CLI_H
#define KVSSD_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

/* The value of "schema_version" in every JSON object kvssd prints (docs/host.md). */
#define KVSSD_CLI_SCHEMA_VERSION 1

/*
 * kvssd_cli_json_bytes() - a key, value or device string as JSON
 * @p, @n: the bytes
 * @force_hex: the hex form even for text (--key-hex / --value-hex)
 *
 * A JSON string when the bytes are valid UTF-8 without NUL bytes, else
 * (or when @force_hex) the object {"hex": "<2 lowercase digits a byte>"}:
 * a string can never be mistaken for the hex form, whatever it holds.
 *
 * Return: a new json_object (the caller owns it).
 */
json_object *kvssd_cli_json_bytes(const uint8_t *p, uint32_t n, bool force_hex);

/* kvssd_cli_json_text() - kvssd_cli_json_bytes() of a C string, never forced to hex. */
json_object *kvssd_cli_json_text(const char *s);

/*
 * kvssd_cli_json_new() - an object holding "schema_version" first, then
 * "provenance" once kvssd_cli_json_provenance() set it; every object the
 * CLI prints starts here.
 */
json_object *kvssd_cli_json_new(void);

/* kvssd_cli_json_provenance() - the "provenance" object of what follows (takes @p over). */
void kvssd_cli_json_provenance(json_object *p);

/* kvssd_cli_json_string() - one line: compact, '/' unescaped (the caller frees nothing). */
const char *kvssd_cli_json_string(json_object *o);

/*
 * kvssd_cli_key_is_text() - whether a key prints as itself: printable UTF-8
 * that does not start with "0x". Every other key prints as 0x and its hex,
 * so that the two forms never meet (the bytes 00 ff are 0x00ff, the text
 * key "0x41" is 0x30783431).
 */
bool kvssd_cli_key_is_text(const uint8_t *k, uint32_t n);

/* How a subcommand argument that names a device is recognized. */
bool kvssd_cli_is_device_arg(const char *arg);

/* What `-o ARG` / `--output-format ARG` means: the output format, as in nvme-cli. */
enum kvssd_cli_o_arg {
    KVSSD_CLI_O_JSON,    /* json */
    KVSSD_CLI_O_NORMAL,  /* normal */
    KVSSD_CLI_O_UNKNOWN, /* anything else: a usage error (a file goes with --output) */
};
enum kvssd_cli_o_arg kvssd_cli_classify_o(const char *arg);

/* What kvssd says of a path that is no NVMe namespace (NVME_IOCTL_ID fails with ENOTTY). */
#define KVSSD_CLI_NOT_NVME \
    "not an NVMe namespace; give a KV namespace's generic char device (/dev/ngXnY) or pci:BDF"

/*
 * kvssd_cli_access_hint() - why a device cannot be opened and what to do
 * @buf, @len: the sentence (no "kvssd: " prefix, no newline)
 * @path: the device
 * @err: the errno of open() (EACCES or EPERM give the advice below)
 * @mode, @uid, @gid: the device's stat (mode bits and owner)
 * @owner, @group: their names (NULL: shown as numbers)
 *
 * "cannot open PATH: permission denied (crw-rw---- root:disk); run as root
 * or as a member of group disk" when the group may read and write it, else
 * "...; run as root" (or as its owner when that is not root). Other errors:
 * "cannot open PATH: <strerror>".
 */
void kvssd_cli_access_hint(char *buf, size_t len, const char *path, int err, mode_t mode, uid_t uid,
                           gid_t gid, const char *owner, const char *group);

/*
 * kvssd_cli_config_hint() - the sentence for a transfer config file that
 * kvssd_open() could not use (-KVSSD_ERR_CONFIG)
 * @from_env: the file came from $KVSSD_TRANSFER_CONFIG (else the default path)
 * @detail: kvssd_xfer_config_load()'s sentence for it (names the file)
 */
void kvssd_cli_config_hint(char *buf, size_t len, const char *path, bool from_env,
                           const char *detail);

#endif
