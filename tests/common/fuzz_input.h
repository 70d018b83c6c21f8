/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading a fuzz input: the bytes libFuzzer (or a replayed corpus file)
 * hands a target, taken front to back, multi-byte fields big-endian, and
 * zeros once the input is used up, so that every input, however short,
 * decodes to a whole run. Shared by tests/fuzz/fuzz_kvftl_api.c and
 * tests/fuzz/fuzz_image.c: the committed corpora and regressions were
 * written against this decoding, so it must not change.
 */
#ifndef KVSSD_TESTS_FUZZ_INPUT_H
#define KVSSD_TESTS_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct input {
    const uint8_t *p;
    size_t n;
};

/* The next byte, or 0 past the end. */
static inline uint8_t in_u8(struct input *in)
{
    if (!in->n) {
        return 0;
    }
    in->n--;
    return *in->p++;
}

/* The next two bytes, big-endian. */
static inline uint16_t in_u16(struct input *in)
{
    uint16_t v = in_u8(in);
    return (uint16_t)(v << 8 | in_u8(in));
}

/* The next four bytes, big-endian. */
static inline uint32_t in_u32(struct input *in)
{
    uint32_t v = in_u16(in);
    return v << 16 | in_u16(in);
}

#endif
