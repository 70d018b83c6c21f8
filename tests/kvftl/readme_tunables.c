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

#define BEGIN_MARK "<!-- firmware tunables: generated from include/kvftl/tunables.def by " \
                   "tests/kvftl/readme_tunables.c; do not edit by hand -->"
#define END_MARK "<!-- firmware tunables: end -->"

/* The expected section, markers included, in a malloc'd string. */
static char *expected_section(void)
{
    size_t cap = 64 * 1024, n = 0;
    char *out = malloc(cap);
    if (!out) {
        return NULL;
    }
#define PUT(...) (n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__))
    PUT("%s\n", BEGIN_MARK);
    PUT("| property |");
    for (int p = 0; p < KVFTL_PRESETS; p++) {
        PUT(" %s |", kvftl_preset_names[p]);
    }
    PUT(" unit | allowed | meaning |\n|---|");
    for (int p = 0; p < KVFTL_PRESETS; p++) {
        PUT("---|");
    }
    PUT("---|---|---|\n");
    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        const struct kvftl_tunable *t = &kvftl_tunables[i];
        char buf[512];
        if (!t->qemu) {
            continue;
        }
        PUT("| `%s` |", t->prop);
        for (int p = 0; p < KVFTL_PRESETS; p++) {
            kvftl_tunable_value_text(t, t->preset[p], buf, sizeof(buf));
            PUT(" %s |", buf);
        }
        kvftl_tunable_range(t, buf, sizeof(buf));
        PUT(" %s | %s | %s |\n", t->unit, buf, t->help);
    }
    PUT("%s\n", END_MARK);
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
        .tool = "readme-tunables",
        .begin_mark = BEGIN_MARK,
        .end_mark = END_MARK,
        .what = "the firmware tunables table",
        .source = "tunables.def",
    };
    char *want = expected_section();
    if (!want) {
        fprintf(stderr, "readme-tunables: the table does not fit 64 KiB\n");
        return 2;
    }
    int rc = doc_section_main(&s, want, argc, argv);
    free(want);
    return rc;
}
