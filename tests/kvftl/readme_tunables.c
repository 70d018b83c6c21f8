/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The firmware tunable table of docs/properties.md is tunables.def's, row
 * for row (the test keeps its README-era name).
 *
 *   readme-tunables docs/properties.md          TAP: ok when the table between
 *                                               the markers is the one the
 *                                               table gives
 *   readme-tunables --write docs/properties.md  rewrite that part of the file
 *   readme-tunables --print                     print the expected rows
 *
 * Every tunable that is a device property (where = QEMU) has a row: its
 * property name, its value in each preset, its unit, its range and its help.
 * Before comparing, it checks that every byte count (unit "bytes") is flagged
 * KVFTL_TUNABLE_SIZE and nothing else is: the device makes exactly those
 * size properties (64M = 64Mi accepted), as docs/properties.md says.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvftl/kvftl.h>

#include "doc_section.h"

#define BEGIN_MARK                                                          \
    "<!-- firmware tunables: generated from include/kvftl/tunables.def by " \
    "tests/kvftl/readme_tunables.c; do not edit by hand -->"
#define END_MARK "<!-- firmware tunables: end -->"

/* The table's lines between the markers. */
static void rows(struct doc_text *out)
{
    doc_put(out, "| property |");
    for (int p = 0; p < KVFTL_PRESETS; p++) {
        doc_put(out, " %s |", kvftl_preset_names[p]);
    }
    doc_put(out, " unit | allowed | meaning |\n|---|");
    for (int p = 0; p < KVFTL_PRESETS; p++) {
        doc_put(out, "---|");
    }
    doc_put(out, "---|---|---|\n");
    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        const struct kvftl_tunable *t = &kvftl_tunables[i];
        char buf[512];
        if (!t->qemu) {
            continue;
        }
        doc_put(out, "| `%s` |", t->prop);
        for (int p = 0; p < KVFTL_PRESETS; p++) {
            kvftl_tunable_value_text(t, t->preset[p], buf, sizeof(buf));
            doc_put(out, " %s |", buf);
        }
        kvftl_tunable_range(t, buf, sizeof(buf));
        doc_put(out, " %s | %s | %s |\n", t->unit, buf, t->help);
    }
}

/* Is KVFTL_TUNABLE_SIZE on exactly the byte counts? Else a TAP failure naming the first. */
static int sizes_flagged(void)
{
    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        const struct kvftl_tunable *t = &kvftl_tunables[i];
        bool bytes = strcmp(t->unit, "bytes") == 0;
        bool size = (t->flags & KVFTL_TUNABLE_SIZE) != 0;
        if (bytes != size ||
            (size && t->kind != KVFTL_TUNABLE_U32 && t->kind != KVFTL_TUNABLE_U64)) {
            printf("1..1\nnot ok 1 - %s: unit '%s' %s KVFTL_TUNABLE_SIZE; every byte count (unit "
                   "bytes, kind U32 or U64) is a size property and nothing else is\n",
                   t->prop, t->unit, size ? "with" : "without");
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct doc_section s = {
        .tool = "readme-tunables",
        .begin_mark = BEGIN_MARK,
        .end_mark = END_MARK,
        .what = "the firmware tunables table",
        .source = "tunables.def",
    };
    if (sizes_flagged() != 0) {
        return 1;
    }
    return doc_section_main(&s, rows, argc, argv);
}
