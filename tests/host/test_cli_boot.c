/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Linked into kvssd_loop, the kvssd CLI over the in-process device
 * (tests/snia/loopdev.c behind libkvssd.so): before main() the device
 * starts, so that /dev/null (LOOPDEV_PATH) is a KV namespace, and holds the
 * keys test_cli_json.py reads back. Each run of the CLI is a new process
 * with the same fixture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvssd/libkvssd.h>

#include "loopdev.h"

struct fixture_key {
    const char *key;
    uint32_t key_len;
    const char *value;
    uint32_t value_len;
};

/* Text, text that looks like hex, UTF-8, binary with a NUL, invalid UTF-8. */
static const struct fixture_key fixture[] = {
    {"alpha", 5, "one", 3},
    {"0x41", 4, "text that starts with 0x", 24},
    {"cl\xc3\xa9", 4, "v\xc3\xa4lue", 6},
    {"\x00\xff", 2, "\x80\x00\x01", 3},
    {"bad\xc3(", 5, "x/y\"z", 5},
};

__attribute__((constructor)) static void cli_loop_boot(void)
{
    struct kvssd_dev *dev;
    struct kvssd_result r;

    if (loopdev_start() != 0) {
        fprintf(stderr, "kvssd_loop: the in-process device did not start\n");
        exit(3);
    }
    /* the fixture ignores $KVSSD_TRANSFER_CONFIG: the CLI's own open reads it */
    char *cfg = getenv(KVSSD_CONFIG_ENV) ? strdup(getenv(KVSSD_CONFIG_ENV)) : NULL;
    unsetenv(KVSSD_CONFIG_ENV);
    int rc = kvssd_open(LOOPDEV_PATH, &dev);
    if (cfg) {
        setenv(KVSSD_CONFIG_ENV, cfg, 1);
        free(cfg);
    }
    if (rc != 0) {
        fprintf(stderr, "kvssd_loop: cannot open the in-process device: %s\n", kvssd_strerror(rc));
        exit(3);
    }
    for (size_t i = 0; i < sizeof(fixture) / sizeof(fixture[0]); i++) {
        const struct fixture_key *f = &fixture[i];
        if (kvssd_store(dev, f->key, f->key_len, f->value, f->value_len, 0, &r) != 0) {
            fprintf(stderr, "kvssd_loop: fixture key %zu not stored\n", i);
            exit(3);
        }
    }
    kvssd_close(dev);
    /* KVSSD_LOOP_PASSTHRU_MDTS=7: the CLI sees the device as nvmet's passthru target exports it */
    const char *mdts = getenv("KVSSD_LOOP_PASSTHRU_MDTS");
    if (mdts && *mdts) {
        loopdev_passthru_target((uint8_t)atoi(mdts));
    }
}

__attribute__((destructor)) static void cli_loop_halt(void)
{
    loopdev_stop();
}
