/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The README's device property table is hw/kvssd/properties.def's, row for
 * row: each property's name, default, unit, allowed values (the words of
 * realize's sentence) and meaning.
 *
 *   readme-properties README.md           TAP: ok when the table matches
 *   readme-properties --write README.md   rewrite it
 *   readme-properties --print             print the expected rows
 */
#include <stdio.h>
#include <stdlib.h>

#include "doc_section.h"
#include "properties.h"

#define SECTION_BYTES (16u * 1024)

/* The expected section, markers included, in a malloc'd string (NULL: too long). */
static char *expected_section(const struct doc_section *s)
{
    size_t count, n = 0, cap = SECTION_BYTES;
    const struct kvssd_property *p = kvssd_properties(&count);
    char *out = malloc(cap);
    if (!out) {
        return NULL;
    }
#define PUT(...) (n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__))
    PUT("%s\n| property | default | unit | allowed | meaning |\n|---|---|---|---|---|\n",
        s->begin_mark);
    for (size_t i = 0; i < count; i++) {
        char dflt[64], range[256];
        bool text = p[i].kind == KVSSD_PROPERTY_STR || p[i].kind == KVSSD_PROPERTY_PRESET;
        kvssd_property_default(&p[i], dflt, sizeof(dflt));
        kvssd_property_range(&p[i], range, sizeof(range));
        PUT("| `%s` | %s%s%s | %s | %s | %s |\n", p[i].prop, text ? "`" : "", dflt, text ? "`" : "",
            p[i].unit, range, p[i].help);
    }
    PUT("%s\n", s->end_mark);
#undef PUT
    if (n >= cap) {
        free(out);
        return NULL;
    }
    return out;
}

int main(int argc, char **argv)
{
    static const struct doc_section s = {
        .tool = "readme-properties",
        .begin_mark = "<!-- device properties: generated from hw/kvssd/properties.def by "
                      "tests/cmdset/readme_properties.c; do not edit by hand -->",
        .end_mark = "<!-- device properties: end -->",
        .what = "the device property table",
        .source = "properties.def",
    };
    char *want = expected_section(&s);
    if (!want) {
        fprintf(stderr, "readme-properties: the table does not fit %u bytes\n", SECTION_BYTES);
        return 2;
    }
    int rc = doc_section_main(&s, want, argc, argv);
    free(want);
    return rc;
}
