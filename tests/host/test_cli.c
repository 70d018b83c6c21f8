/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kvssd CLI's pure parts (host/cli/cli_util.c) and the transfer config
 * sentences it passes on (host/lib/transfer.c): the JSON form of bytes,
 * -o's meaning, and the exact error sentences of issue 15 item 6.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <kvssd/libkvssd.h>

#include "cli.h"
#include "tap_cunit.h"

/* The JSON text of kvssd_cli_json_bytes(p, n, force), compared whole. */
static void expect_bytes_json(const char *p, uint32_t n, bool force, const char *want)
{
    json_object *o = kvssd_cli_json_bytes((const uint8_t *)p, n, force);
    const char *got = kvssd_cli_json_string(o);
    if (strcmp(got, want)) {
        fprintf(stderr, "# got %s, want %s\n", got, want);
    }
    CU_ASSERT_STRING_EQUAL(got, want);
    json_object_put(o);
}

/* Valid UTF-8 is a string (raw UTF-8 bytes, JSON escapes only for " \ and controls). */
static void test_bytes_text(void)
{
    expect_bytes_json("alpha", 5, false, "\"alpha\"");
    expect_bytes_json("cl\xc3\xa9", 4, false, "\"cl\xc3\xa9\"");
    expect_bytes_json("a\"b\\c\n", 6, false, "\"a\\\"b\\\\c\\n\"");
    expect_bytes_json("/dev/ng0n1", 10, false, "\"/dev/ng0n1\"");
    expect_bytes_json("", 0, false, "\"\"");
}

/* A text key that starts with 0x stays a string: it cannot look like the hex form. */
static void test_bytes_0x_text(void)
{
    expect_bytes_json("0x41", 4, false, "\"0x41\"");
}

/* Invalid UTF-8, a NUL byte, or bytes >= 0x80 alone: {"hex": ...}, two lowercase digits a byte. */
static void test_bytes_hex(void)
{
    expect_bytes_json("\x00\xff", 2, false, "{\"hex\":\"00ff\"}");
    expect_bytes_json("bad\xc3(", 5, false, "{\"hex\":\"626164c328\"}");
    expect_bytes_json("\x80", 1, false, "{\"hex\":\"80\"}");
    expect_bytes_json("a\0b", 3, false, "{\"hex\":\"610062\"}");
    /* overlong encoding of '/' and a UTF-16 surrogate are not valid UTF-8 */
    expect_bytes_json("\xc0\xaf", 2, false, "{\"hex\":\"c0af\"}");
    expect_bytes_json("\xed\xa0\x80", 3, false, "{\"hex\":\"eda080\"}");
}

/* --key-hex / --value-hex force the hex form, even for text and the empty value. */
static void test_bytes_forced(void)
{
    expect_bytes_json("alpha", 5, true, "{\"hex\":\"616c706861\"}");
    expect_bytes_json("", 0, true, "{\"hex\":\"\"}");
}

/* Every object starts with "schema_version": 1. */
static void test_json_new(void)
{
    json_object *o = kvssd_cli_json_new();
    json_object_object_add(o, "path", kvssd_cli_json_text("/dev/ng0n1"));
    CU_ASSERT_STRING_EQUAL(kvssd_cli_json_string(o),
                           "{\"schema_version\":1,\"path\":\"/dev/ng0n1\"}");
    json_object_put(o);
}

/* -o json / -o normal are formats; any other word is unknown (a file goes with --output). */
static void test_classify_o(void)
{
    CU_ASSERT_EQUAL(kvssd_cli_classify_o("json"), KVSSD_CLI_O_JSON);
    CU_ASSERT_EQUAL(kvssd_cli_classify_o("normal"), KVSSD_CLI_O_NORMAL);
    CU_ASSERT_EQUAL(kvssd_cli_classify_o("/tmp/value"), KVSSD_CLI_O_UNKNOWN);
    CU_ASSERT_EQUAL(kvssd_cli_classify_o("JSON"), KVSSD_CLI_O_UNKNOWN);
}

/*
 * Keys print as text when printable UTF-8 not starting with "0x": "alpha"
 * and "clé" do; the bytes 00 ff, a tab, invalid UTF-8 (62 61 64 c3 28), an
 * empty key and the text "0x41" (which would read as the byte 41h) do not.
 */
static void test_key_is_text(void)
{
    CU_ASSERT_TRUE(kvssd_cli_key_is_text((const uint8_t *)"alpha", 5));
    CU_ASSERT_TRUE(kvssd_cli_key_is_text((const uint8_t *)"cl\xc3\xa9", 4));
    CU_ASSERT_TRUE(kvssd_cli_key_is_text((const uint8_t *)"x0", 2));
    CU_ASSERT_FALSE(kvssd_cli_key_is_text((const uint8_t *)"\x00\xff", 2));
    CU_ASSERT_FALSE(kvssd_cli_key_is_text((const uint8_t *)"a\tb", 3));
    CU_ASSERT_FALSE(kvssd_cli_key_is_text((const uint8_t *)"bad\xc3(", 5));
    CU_ASSERT_FALSE(kvssd_cli_key_is_text((const uint8_t *)"", 0));
    CU_ASSERT_FALSE(kvssd_cli_key_is_text((const uint8_t *)"0x41", 4));
}

/* A positional device starts with /dev/ or pci:; keys do not. */
static void test_device_arg(void)
{
    CU_ASSERT_TRUE(kvssd_cli_is_device_arg("/dev/ng0n1"));
    CU_ASSERT_TRUE(kvssd_cli_is_device_arg("pci:0000:00:04.0"));
    CU_ASSERT_TRUE(kvssd_cli_is_device_arg("pci:nvme0"));
    CU_ASSERT_TRUE(kvssd_cli_is_device_arg("sim:kv.img"));
    CU_ASSERT_FALSE(kvssd_cli_is_device_arg("alpha"));
    CU_ASSERT_FALSE(kvssd_cli_is_device_arg("dev/ng0n1"));
    CU_ASSERT_FALSE(kvssd_cli_is_device_arg("pci"));
}

/* Permission denied on a root-only device: name it, its mode and owner, and say run as root. */
static void test_access_root_only(void)
{
    char msg[300];
    kvssd_cli_access_hint(msg, sizeof(msg), "/dev/ng0n1", EACCES, S_IFCHR | 0600, 0, 0, "root",
                          "root");
    CU_ASSERT_STRING_EQUAL(msg, "cannot open /dev/ng0n1: permission denied (crw------- root:root); "
                                "run as root");
}

/* A device the group may read and write: name the group as the other way in. */
static void test_access_group(void)
{
    char msg[300];
    kvssd_cli_access_hint(msg, sizeof(msg), "/dev/ng1n1", EACCES, S_IFCHR | 0660, 0, 6, "root",
                          "disk");
    CU_ASSERT_STRING_EQUAL(msg, "cannot open /dev/ng1n1: permission denied (crw-rw---- root:disk); "
                                "run as root or as a member of group disk");
}

/* An owner other than root with rw: "or as OWNER"; unknown names are shown as numbers. */
static void test_access_owner(void)
{
    char msg[300];
    kvssd_cli_access_hint(msg, sizeof(msg), "/dev/ng2n1", EPERM, S_IFCHR | 0600, 1000, 0, "alice",
                          NULL);
    CU_ASSERT_STRING_EQUAL(msg, "cannot open /dev/ng2n1: permission denied (crw------- alice:0); "
                                "run as root or as alice");
    kvssd_cli_access_hint(msg, sizeof(msg), "/dev/ng2n1", EACCES, S_IFCHR | 0640, 0, 6, NULL, NULL);
    CU_ASSERT_STRING_EQUAL(msg, "cannot open /dev/ng2n1: permission denied (crw-r----- 0:6); "
                                "run as root");
}

/* Other errors are the system's sentence, without advice. */
static void test_access_other(void)
{
    char msg[300];
    kvssd_cli_access_hint(msg, sizeof(msg), "/dev/ng9n1", ENOENT, 0, 0, 0, NULL, NULL);
    CU_ASSERT_STRING_EQUAL(msg, "cannot open /dev/ng9n1: No such file or directory");
    /* NVME_IOCTL_ID on a file that is no namespace: what to give instead */
    kvssd_cli_access_hint(msg, sizeof(msg), "/dev/null", ENOTTY, 0, 0, 0, NULL, NULL);
    CU_ASSERT_STRING_EQUAL(msg, "cannot open /dev/null: not an NVMe namespace; give a KV "
                                "namespace's generic char device (/dev/ngXnY) or pci:BDF");
}

static char *write_tmp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/kvssd-test-cli-XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* A missing $KVSSD_TRANSFER_CONFIG is named as a missing config file, with what to do. */
static void test_config_missing_env(void)
{
    struct kvssd_xfer_config cfg;
    char detail[300], msg[600];
    kvssd_xfer_config_default(&cfg);
    CU_ASSERT_EQUAL(kvssd_xfer_config_load("/nonexistent/t.conf", &cfg, detail, sizeof(detail)),
                    -KVSSD_ERR_SYSTEM);
    CU_ASSERT_STRING_EQUAL(detail, "transfer config file /nonexistent/t.conf does not exist");
    kvssd_cli_config_hint(msg, sizeof(msg), "/nonexistent/t.conf", true, detail);
    CU_ASSERT_STRING_EQUAL(msg, "transfer config file /nonexistent/t.conf does not exist (named by "
                                "$KVSSD_TRANSFER_CONFIG); fix the file, or unset "
                                "KVSSD_TRANSFER_CONFIG to use the default thresholds");
}

/* A malformed file: FILE:LINE, the offending key and its value. */
static void test_config_malformed(void)
{
    struct kvssd_xfer_config cfg;
    char detail[300], want[400], msg[700];
    kvssd_xfer_config_default(&cfg);
    char *path = write_tmp("[transfer]\nalpha=1\nthreshold2_bytes=lots\n");
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, detail, sizeof(detail)), -KVSSD_ERR_CONFIG);
    snprintf(want, sizeof(want), "%s:3: threshold2_bytes must be 0..2097152 bytes, not \"lots\"",
             path);
    CU_ASSERT_STRING_EQUAL(detail, want);
    kvssd_cli_config_hint(msg, sizeof(msg), "/etc/kvssd/transfer.conf", false, detail);
    snprintf(
        want, sizeof(want),
        "%s:3: threshold2_bytes must be 0..2097152 bytes, not \"lots\" (the default transfer "
        "config file); fix it (kvbench calibrate writes it) or remove /etc/kvssd/transfer.conf",
        path);
    CU_ASSERT_STRING_EQUAL(msg, want);
    unlink(path);

    path = write_tmp("[transfer]\nbeta=-1\n");
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, detail, sizeof(detail)), -KVSSD_ERR_CONFIG);
    snprintf(want, sizeof(want), "%s:2: beta must be a number 0..1000000, not \"-1\"", path);
    CU_ASSERT_STRING_EQUAL(detail, want);
    unlink(path);

    path = write_tmp("\n[transfer]\ngamma = 2\n");
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, detail, sizeof(detail)), -KVSSD_ERR_CONFIG);
    snprintf(want, sizeof(want), "%s:3: unknown key \"gamma\" in [transfer]", path);
    CU_ASSERT_STRING_EQUAL(detail, want);
    unlink(path);
}

/* A line past the 255-byte buffer is refused at its own line number, not split in two. */
static void test_config_long_line(void)
{
    struct kvssd_xfer_config cfg;
    char detail[300], want[400], text[400];
    kvssd_xfer_config_default(&cfg);
    snprintf(text, sizeof(text), "[transfer]\n# %0300d\nalpha=2\n", 0);
    char *path = write_tmp(text);
    CU_ASSERT_EQUAL(kvssd_xfer_config_load(path, &cfg, detail, sizeof(detail)), -KVSSD_ERR_CONFIG);
    snprintf(want, sizeof(want), "%s:2: the line is longer than 254 characters", path);
    CU_ASSERT_STRING_EQUAL(detail, want);
    CU_ASSERT_DOUBLE_EQUAL(cfg.alpha, 1.0, 1e-12);
    unlink(path);
}

static const struct tap_test host_cli_tests[] = {
    TAP_TEST(bytes_text),         TAP_TEST(bytes_0x_text),    TAP_TEST(bytes_hex),
    TAP_TEST(bytes_forced),       TAP_TEST(json_new),         TAP_TEST(classify_o),
    TAP_TEST(key_is_text),        TAP_TEST(device_arg),       TAP_TEST(access_root_only),
    TAP_TEST(access_group),       TAP_TEST(access_owner),     TAP_TEST(access_other),
    TAP_TEST(config_missing_env), TAP_TEST(config_malformed), TAP_TEST(config_long_line),
};

int main(void)
{
    const struct tap_suite suites[] = {
        TAP_SUITE("host_cli", NULL, NULL, host_cli_tests),
    };

    return tap_main(suites, sizeof(suites) / sizeof(suites[0]));
}
