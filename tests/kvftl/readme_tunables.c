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

#define BEGIN_MARK "<!-- firmware tunables: generated from include/kvftl/tunables.def by " \
                   "tests/kvftl/readme_tunables.c; do not edit by hand -->"
#define END_MARK "<!-- firmware tunables: end -->"
#define README_MAX_BYTES (1u << 20)

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

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    char *buf = malloc(README_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, README_MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (!buf || n > README_MAX_BYTES) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

/* Print the first line where @want and @got differ. */
static void first_difference(const char *want, const char *got)
{
    int line = 1;
    while (*want || *got) {
        const char *we = strchr(want, '\n'), *ge = strchr(got, '\n');
        size_t wl = we ? (size_t)(we - want) : strlen(want);
        size_t gl = ge ? (size_t)(ge - got) : strlen(got);
        if (wl != gl || memcmp(want, got, wl) != 0) {
            printf("# line %d of the section differs\n# README:      %.*s\n# tunables.def: %.*s\n",
                   line, (int)gl, got, (int)wl, want);
            return;
        }
        want += wl + (we ? 1 : 0);
        got += gl + (ge ? 1 : 0);
        line++;
    }
}

int main(int argc, char **argv)
{
    bool write = argc == 3 && strcmp(argv[1], "--write") == 0;
    char *want = expected_section();
    if (!want) {
        fprintf(stderr, "readme-tunables: the table does not fit 64 KiB\n");
        return 2;
    }
    if (argc == 2 && strcmp(argv[1], "--print") == 0) {
        fputs(want, stdout);
        return 0;
    }
    if (argc != 2 && !write) {
        fprintf(stderr, "usage: readme-tunables [--write] README.md | --print\n");
        return 2;
    }
    const char *path = argv[argc - 1];
    char *readme = read_file(path);
    if (!readme) {
        fprintf(stderr, "readme-tunables: cannot read %s (or it is larger than %u bytes)\n", path,
                README_MAX_BYTES);
        return 2;
    }
    char *begin = strstr(readme, BEGIN_MARK);
    char *end = begin ? strstr(begin, END_MARK) : NULL;
    if (!begin || !end) {
        printf("1..1\nnot ok 1 - %s has the markers of the firmware tunables table\n", path);
        printf("# expected a line \"%s\" and, below it, \"%s\"\n", BEGIN_MARK, END_MARK);
        return 1;
    }
    end += strlen(END_MARK);
    if (*end == '\n') {
        end++;
    }
    if (write) {
        FILE *f = fopen(path, "wb");
        if (!f) {
            fprintf(stderr, "readme-tunables: cannot write %s\n", path);
            return 2;
        }
        fwrite(readme, 1, (size_t)(begin - readme), f);
        fputs(want, f);
        fputs(end, f);
        return fclose(f) == 0 ? 0 : 2;
    }
    *end = 0;
    bool same = strcmp(begin, want) == 0;
    printf("1..1\n%s 1 - the firmware tunables table of %s is tunables.def's\n", same ? "ok" : "not ok",
           path);
    if (!same) {
        first_difference(want, begin);
        printf("# regenerate it: readme-tunables --write %s\n", path);
    }
    free(readme);
    free(want);
    return same ? 0 : 1;
}
