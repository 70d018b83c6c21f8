/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * refuse(): say no with a sentence. The checks that return -1 and a
 * sentence in (err, err_len) at many places — the configuration check
 * (config.c) and kvftl_check() (check.c) — write it through here, so that a
 * NULL or empty buffer is handled once.
 */
#ifndef KVFTL_REFUSE_H
#define KVFTL_REFUSE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Format the sentence into @err (if there is room for one) and return -1. */
static inline int __attribute__((format(printf, 3, 4))) refuse(char *err, size_t err_len,
                                                               const char *fmt, ...)
{
    if (err && err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#endif /* KVFTL_REFUSE_H */
