/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device property table of docs/properties.md is hw/kvssd/properties.def's,
 * row for row: each property's name, default, unit, allowed values (the words
 * of its refusal's sentence) and meaning (the test keeps its README-era name).
 *
 *   readme-properties docs/properties.md          TAP: ok when the table matches
 *   readme-properties --write docs/properties.md  rewrite it
 *   readme-properties --print                     print the expected rows
 *
 * Before comparing, it checks that every byte count (unit "bytes") is a SIZE32
 * row and nothing else is: those are the size properties (64K accepted).
 */
#include "doc_section.h"
#include "properties.h"

/* The table's lines between the markers. */
static void rows(struct doc_text *t)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);

    doc_put(t, "| property | default | unit | allowed | meaning |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < count; i++) {
        char dflt[64], range[256];
        bool text = p[i].kind == KVSSD_PROPERTY_STR || p[i].kind == KVSSD_PROPERTY_PRESET;
        kvssd_property_default(&p[i], dflt, sizeof(dflt));
        kvssd_property_range(&p[i], range, sizeof(range));
        doc_put(t, "| `%s` | %s%s%s | %s | %s | %s |\n", p[i].prop, text ? "`" : "", dflt,
                text ? "`" : "", p[i].unit, range, p[i].help);
    }
}

/* Is every byte count a SIZE32 row, and only they? Else a TAP failure naming the first. */
static int sizes_are_size32(void)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);

    for (size_t i = 0; i < count; i++) {
        bool bytes = strcmp(p[i].unit, "bytes") == 0;
        if (bytes != (p[i].kind == KVSSD_PROPERTY_SIZE32)) {
            printf("1..1\nnot ok 1 - %s: unit '%s' but kind %s; every byte count (unit bytes) "
                   "is a SIZE32 property and nothing else is\n",
                   p[i].prop, p[i].unit,
                   p[i].kind == KVSSD_PROPERTY_SIZE32 ? "SIZE32" : "not SIZE32");
            return -1;
        }
    }
    return 0;
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
    if (sizes_are_size32() != 0) {
        return 1;
    }
    return doc_section_main(&s, rows, argc, argv);
}
