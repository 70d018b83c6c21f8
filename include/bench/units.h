/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The numbers every tool and config file takes (kvbench's flags and INI
 * file, kvftl-bench's and kvssd-cmd-bench's flags, the kvssd CLI's counts,
 * the number properties of -device kvssd and sim: through
 * hw/kvssd/properties.h, and the firmware's tunables through
 * kvftl_tunable_parse(): those properties, the tools' tunable flags),
 * parsed once (the cases: tests/common/units_cases.h):
 *
 *   bytes    4096, 4k, 4K, 4Ki, 64M, 64Mi, 1G, 1Gi, 1T: K/M/G/T and
 *            Ki/Mi/Gi/Ti are binary (1K = 1024), as QEMU's sizes
 *   counts   1000000, 1e6, 2.5e5, 100k, 1M, 1G: K/M/G are decimal
 *   both     0x1f (hexadecimal, exact)
 *   seconds  10, 10s, 0.5, 500ms, 250us (none = seconds)
 *
 * A number must come out whole (1.5k bytes is 1536; 1.5 bytes is not a
 * number of bytes) and within 64 bits. The callers word the error, with
 * the range, as "NAME is 'X'; it must be RANGE". Header-only and libc
 * only, as key_order.h, so the firmware (kvftl/, also built inside QEMU
 * with the whole include/) uses it as the host tools do.
 */
#ifndef BENCH_UNITS_H
#define BENCH_UNITS_H

#include <ctype.h>
#include <errno.h>
#include <math.h> /* isfinite, a macro: no libm */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum units_kind {
    UNITS_COUNT, /* K, M, G = 10^3, 10^6, 10^9 */
    UNITS_BYTES, /* K, M, G, T (and Ki, Mi, Gi, Ti) = 2^10 .. 2^40 */
};

/* The multiplier of suffix @s (the text after the number), 0 if it is none of @kind's. */
static inline long double units_multiplier(const char *s, enum units_kind kind)
{
    static const char letters[] = "KMGT";
    const char *p;

    if (!*s) {
        return 1;
    }
    p = strchr(letters, toupper((unsigned char)s[0]));
    if (!p || !*p) {
        return 0;
    }
    int n = (int)(p - letters) + 1;
    if (kind == UNITS_BYTES && (!s[1] || (s[1] == 'i' && !s[2]))) {
        return (long double)(1ull << (10 * n));
    }
    if (kind == UNITS_COUNT && !s[1] && n <= 3) {
        return n == 1 ? 1e3L : n == 2 ? 1e6L : 1e9L;
    }
    return 0;
}

/* units_u64() - @s as a whole number of @kind in *@out; false when it is none. */
static inline bool units_u64(const char *s, enum units_kind kind, uint64_t *out)
{
    char *end;

    if (!isdigit((unsigned char)s[0]) && s[0] != '.') {
        return false; /* no sign, no space, no "inf" */
    }
    errno = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        unsigned long long v = strtoull(s + 2, &end, 16);
        if (errno || end == s + 2 || *end) {
            return false;
        }
        *out = v;
        return true;
    }
    if (strspn(s, "0123456789") == strlen(s)) {
        unsigned long long v = strtoull(s, &end, 10); /* exact to 2^64 - 1 */
        if (errno) {
            return false;
        }
        *out = v;
        return true;
    }
    long double v = strtold(s, &end), mul = units_multiplier(end, kind);
    if (errno || end == s || mul == 0) {
        return false;
    }
    v *= mul;
    if (!(v >= 0) || v >= 18446744073709551616.0L || v != (long double)(uint64_t)v) {
        return false; /* negative, NaN, past 64 bits, or not whole */
    }
    *out = (uint64_t)v;
    return true;
}

/* units_seconds() - @s as a time in seconds in *@out (suffix s, ms or us); false when none. */
static inline bool units_seconds(const char *s, double *out)
{
    char *end;
    double v;

    if (!isdigit((unsigned char)s[0]) && s[0] != '.') {
        return false;
    }
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || !isfinite(v)) {
        return false;
    }
    if (!strcmp(end, "ms")) {
        v /= 1e3;
    } else if (!strcmp(end, "us")) {
        v /= 1e6;
    } else if (*end && strcmp(end, "s") != 0) {
        return false;
    }
    *out = v;
    return true;
}

#endif /* BENCH_UNITS_H */
