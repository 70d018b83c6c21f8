/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench calibrate: BandSlim's exploratory runs (§3.2, §4.1). Store values
 * of 4 B .. 8 KiB by PRP and inline, and of 4 KiB + 4 B .. 4 KiB + 4 KiB by
 * PRP and hybrid; threshold1 is the size up to which inline is no slower
 * than PRP, threshold2 the tail up to which hybrid is no slower than PRP.
 * The result is written as the [transfer] config libkvssd loads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "kvbench.h"

#define CAL_KEY_BYTES 8
#define CAL_SMALL 12 /* 4 B .. 8 KiB, powers of two */
#define CAL_TAILS 11 /* a hybrid page (4 KiB) + 4 B .. + 4 KiB */

/* Mean ns of @samples Stores of @len bytes in @mode; the keys are deleted afterwards. */
static double measure(struct kvssd_dev *dev, enum kvssd_xfer_mode mode, uint32_t len,
                      uint32_t samples, uint64_t *key_base, uint8_t *value, uint64_t *errors)
{
    uint8_t key[CAL_KEY_BYTES];
    uint64_t total = 0, ok = 0;
    kvssd_set_xfer_mode(dev, mode);
    for (uint32_t i = 0; i < samples; i++) {
        kb_key_encode(*key_base + i, CAL_KEY_BYTES, 0, key);
        uint64_t t0 = kb_now_ns();
        int rc = kvssd_store(dev, key, CAL_KEY_BYTES, value, len, 0, NULL);
        uint64_t t1 = kb_now_ns();
        if (rc) {
            (*errors)++;
            continue;
        }
        total += t1 - t0;
        ok++;
    }
    for (uint32_t i = 0; i < samples; i++) {
        kb_key_encode(*key_base + i, CAL_KEY_BYTES, 0, key);
        kvssd_delete(dev, key, CAL_KEY_BYTES, NULL);
    }
    *key_base += samples;
    return ok ? (double)total / (double)ok : 1e18;
}

int kb_calibrate(struct kb_config *c)
{
    struct kvssd_dev *dev;
    uint32_t small[CAL_SMALL], tails[CAL_TAILS];
    double prp_small[CAL_SMALL], inl_small[CAL_SMALL], prp_tail[CAL_TAILS], hyb_tail[CAL_TAILS];
    uint64_t key_base = 0xca1b000000000000ull, errors = 0;
    uint8_t *value = malloc(8192);

    int rc = kvssd_open(c->device, &dev);
    if (rc) {
        fprintf(stderr, "kvbench: cannot open %s: %s\n", c->device,
                rc == -KVSSD_ERR_SYSTEM ? strerror(errno) : kvssd_strerror(rc));
        free(value);
        return 1;
    }
    kb_provenance_read(dev);
    kb_value_fill(0, 8192, c->seed, value);
    fprintf(stderr, "kvbench calibrate: %u stores per point on %s\n", c->calibrate_samples,
            c->device);
    for (int i = 0; i < CAL_SMALL; i++) {
        small[i] = 4u << i;
        prp_small[i] = measure(dev, KVSSD_XFER_PRP, small[i], c->calibrate_samples, &key_base,
                               value, &errors);
        inl_small[i] = measure(dev, KVSSD_XFER_INLINE, small[i], c->calibrate_samples, &key_base,
                               value, &errors);
        if (!c->json) {
            printf("%8u B   prp %10.1f us   inline %10.1f us\n", small[i], prp_small[i] / 1e3,
                   inl_small[i] / 1e3);
        }
    }
    for (int i = 0; i < CAL_TAILS; i++) {
        tails[i] = 4u << i;
        uint32_t len = KVSSD_HYBRID_PAGE_BYTES + tails[i];
        prp_tail[i] = measure(dev, KVSSD_XFER_PRP, len, c->calibrate_samples, &key_base, value,
                              &errors);
        hyb_tail[i] = measure(dev, KVSSD_XFER_HYBRID, len, c->calibrate_samples, &key_base, value,
                              &errors);
        if (!c->json) {
            printf("%u+%-5u B prp %10.1f us   hybrid %10.1f us\n", KVSSD_HYBRID_PAGE_BYTES,
                   tails[i], prp_tail[i] / 1e3, hyb_tail[i] / 1e3);
        }
    }
    struct kvssd_xfer_config cfg;
    kvssd_xfer_config_default(&cfg);
    cfg.threshold1_bytes = kb_pick_threshold(small, inl_small, prp_small, CAL_SMALL);
    cfg.threshold2_bytes = kb_pick_threshold(tails, hyb_tail, prp_tail, CAL_TAILS);
    if (c->alpha >= 0) {
        cfg.alpha = c->alpha;
    }
    if (c->beta >= 0) {
        cfg.beta = c->beta;
    }

    char comment[200];
    snprintf(comment, sizeof(comment),
             "written by kvbench calibrate: %u stores per point, %llu errors", c->calibrate_samples,
             (unsigned long long)errors);
    char *slash = strrchr(c->calibrate_output, '/');
    if (slash && slash != c->calibrate_output) {
        *slash = '\0';
        mkdir(c->calibrate_output, 0755); /* e.g. /etc/kvssd; fine if it exists */
        *slash = '/';
    }
    int wrc = kvssd_xfer_config_save(c->calibrate_output, &cfg, comment);
    if (c->json) {
        /* fields as before json-c; schema_version as kvbench run's (docs/kvbench.md) */
        struct json_object *o = json_object_new_object(), *sz = json_object_new_array(),
                           *tl = json_object_new_array();
        json_object_object_add(o, "schema_version", json_object_new_int(KB_JSON_SCHEMA_VERSION));
        json_object_object_add(o, "provenance", kb_report_provenance_json());
        json_object_object_add(o, "threshold1_bytes", json_object_new_uint64(cfg.threshold1_bytes));
        json_object_object_add(o, "threshold2_bytes", json_object_new_uint64(cfg.threshold2_bytes));
        json_object_object_add(o, "alpha", kb_json_double(cfg.alpha, "%g"));
        json_object_object_add(o, "beta", kb_json_double(cfg.beta, "%g"));
        json_object_object_add(o, "errors", json_object_new_uint64(errors));
        json_object_object_add(o, "output", kb_json_str(c->calibrate_output));
        json_object_object_add(o, "written", json_object_new_boolean(!wrc));
        for (int i = 0; i < CAL_SMALL; i++) {
            struct json_object *e = json_object_new_object();
            json_object_object_add(e, "bytes", json_object_new_uint64(small[i]));
            json_object_object_add(e, "prp_us", kb_json_double(prp_small[i] / 1e3, "%.3f"));
            json_object_object_add(e, "inline_us", kb_json_double(inl_small[i] / 1e3, "%.3f"));
            json_object_array_add(sz, e);
        }
        json_object_object_add(o, "sizes", sz);
        for (int i = 0; i < CAL_TAILS; i++) {
            struct json_object *e = json_object_new_object();
            json_object_object_add(e, "bytes",
                                   json_object_new_uint64(KVSSD_HYBRID_PAGE_BYTES + tails[i]));
            json_object_object_add(e, "prp_us", kb_json_double(prp_tail[i] / 1e3, "%.3f"));
            json_object_object_add(e, "hybrid_us", kb_json_double(hyb_tail[i] / 1e3, "%.3f"));
            json_object_array_add(tl, e);
        }
        json_object_object_add(o, "tails", tl);
        kb_json_print(o);
    } else {
        printf("threshold1 %u B, threshold2 %u B (alpha %g, beta %g)%s%s\n", cfg.threshold1_bytes,
               cfg.threshold2_bytes, cfg.alpha, cfg.beta, wrc ? "; could not write " : " -> ",
               c->calibrate_output);
    }
    kvssd_close(dev);
    free(value);
    if (wrc) {
        fprintf(stderr, "kvbench: cannot write %s: %s\n", c->calibrate_output, strerror(errno));
    }
    return wrc || errors ? 1 : 0;
}
