/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A user's program against the installed libkvssd: built by install_check.py
 * with `pkg-config --cflags --libs libkvssd` against a `meson install
 * --destdir` tree. Needs no device: it calls the library's pure functions
 * (the same a program calls to report an error) and prints TAP.
 */
#include <stdio.h>
#include <string.h>

#include <kvssd/libkvssd.h>

int main(void)
{
    printf("1..2\n");
    const char *inl = kvssd_xfer_mode_name(KVSSD_XFER_INLINE);
    printf("%s 1 - kvssd_xfer_mode_name(KVSSD_XFER_INLINE) is \"inline\" (got \"%s\")\n",
           inl && !strcmp(inl, "inline") ? "ok" : "not ok", inl ? inl : "(null)");
    int mode = kvssd_xfer_mode_parse("hybrid");
    printf("%s 2 - kvssd_xfer_mode_parse(\"hybrid\") is KVSSD_XFER_HYBRID (got %d)\n",
           mode == KVSSD_XFER_HYBRID ? "ok" : "not ok", mode);
    return !(inl && !strcmp(inl, "inline") && mode == KVSSD_XFER_HYBRID);
}
