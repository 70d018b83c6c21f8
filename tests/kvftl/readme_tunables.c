/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The README's firmware parameter table is tunables.def's, row for row.
 *
 *   readme-tunables README.md           TAP: ok when the table between the
 *                                       markers is the one the table gives
 *   readme-tunables --write README.md   rewrite that part of README.md
 *   readme-tunables --print             print the expected rows
 *
 * Every tunable that is a device property (where = QEMU) has a row: its
 * property name, its value in each preset, its unit, its range and its help.
 */
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

int main(int argc, char **argv)
{
    static const struct doc_section s = {
        .tool = "readme-tunables",
        .begin_mark = BEGIN_MARK,
        .end_mark = END_MARK,
        .what = "the firmware tunables table",
        .source = "tunables.def",
    };
    return doc_section_main(&s, rows, argc, argv);
}
