/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A part of a Markdown file generated from a table (a .def): the lines from
 * a begin marker to an end marker. One main for the programs that check it
 * (tests/cmdset/readme_properties.c, tests/kvftl/readme_tunables.c); each
 * gives only the lines between the markers, written with doc_put():
 *
 *   TOOL FILE           TAP: ok when the section of FILE is the expected one
 *   TOOL --write FILE   rewrite that section of FILE
 *   TOOL --print        print the expected section
 *
 * Header-only (harness_dep).
 */
#ifndef TESTS_COMMON_DOC_SECTION_H
#define TESTS_COMMON_DOC_SECTION_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC_SECTION_FILE_MAX_BYTES (1u << 20)
#define DOC_SECTION_MAX_BYTES (64u * 1024)   /* the generated section, markers included */

/* The section being generated: DOC_SECTION_MAX_BYTES at the most. */
struct doc_text {
    char *buf;
    size_t n;       /* bytes written; > DOC_SECTION_MAX_BYTES: it did not fit */
};

/* Append to the section (what does not fit is counted, not written). */
static inline void __attribute__((format(printf, 2, 3))) doc_put(struct doc_text *t,
                                                                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(t->buf + (t->n < DOC_SECTION_MAX_BYTES ? t->n : DOC_SECTION_MAX_BYTES),
                        t->n < DOC_SECTION_MAX_BYTES ? DOC_SECTION_MAX_BYTES - t->n : 0, fmt, ap);
    va_end(ap);
    t->n += len > 0 ? (size_t)len : 0;
}

struct doc_section {
    const char *tool;           /* the program's name, for messages */
    const char *begin_mark;     /* the first line of the section */
    const char *end_mark;       /* its last line */
    const char *what;           /* "the device property table", for the TAP line */
    const char *source;         /* "properties.def", the table it comes from */
};

/* The whole of @path in a malloc'd string, or NULL (unreadable or too large). */
static inline char *doc_section_read(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    char *buf = malloc(DOC_SECTION_FILE_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, DOC_SECTION_FILE_MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (!buf || n > DOC_SECTION_FILE_MAX_BYTES) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

/* Print the first line where @want and @got differ. */
static inline void doc_section_first_difference(const struct doc_section *s, const char *want,
                                                const char *got)
{
    int line = 1;
    while (*want || *got) {
        const char *we = strchr(want, '\n'), *ge = strchr(got, '\n');
        size_t wl = we ? (size_t)(we - want) : strlen(want);
        size_t gl = ge ? (size_t)(ge - got) : strlen(got);
        if (wl != gl || memcmp(want, got, wl) != 0) {
            printf("# line %d of the section differs\n# file:  %.*s\n# %s: %.*s\n", line, (int)gl,
                   got, s->source, (int)wl, want);
            return;
        }
        want += wl + (we ? 1 : 0);
        got += gl + (ge ? 1 : 0);
        line++;
    }
}

/* Check, write or print @want, the expected section. */
static inline int doc_section_run(const struct doc_section *s, const char *want, int argc,
                                  char **argv)
{
    bool write = argc == 3 && strcmp(argv[1], "--write") == 0;
    if (argc == 2 && strcmp(argv[1], "--print") == 0) {
        fputs(want, stdout);
        return 0;
    }
    if (argc != 2 && !write) {
        fprintf(stderr, "usage: %s [--write] FILE | --print\n", s->tool);
        return 2;
    }
    const char *path = argv[argc - 1];
    char *text = doc_section_read(path);
    if (!text) {
        fprintf(stderr, "%s: cannot read %s (or it is larger than %u bytes)\n", s->tool, path,
                DOC_SECTION_FILE_MAX_BYTES);
        return 2;
    }
    char *begin = strstr(text, s->begin_mark);
    char *end = begin ? strstr(begin, s->end_mark) : NULL;
    if (!begin || !end) {
        printf("1..1\nnot ok 1 - %s has the markers of %s\n", path, s->what);
        printf("# expected a line \"%s\" and, below it, \"%s\"\n", s->begin_mark, s->end_mark);
        free(text);
        return 1;
    }
    end += strlen(s->end_mark);
    if (*end == '\n') {
        end++;
    }
    if (write) {
        FILE *f = fopen(path, "wb");
        if (!f) {
            fprintf(stderr, "%s: cannot write %s\n", s->tool, path);
            free(text);
            return 2;
        }
        fwrite(text, 1, (size_t)(begin - text), f);
        fputs(want, f);
        fputs(end, f);
        free(text);
        return fclose(f) == 0 ? 0 : 2;
    }
    *end = 0;
    bool same = strcmp(begin, want) == 0;
    printf("1..1\n%s 1 - %s of %s is %s's\n", same ? "ok" : "not ok", s->what, path, s->source);
    if (!same) {
        doc_section_first_difference(s, want, begin);
        printf("# regenerate it: %s --write %s\n", s->tool, path);
    }
    free(text);
    return same ? 0 : 1;
}

/* The main of a checker: @rows writes the lines between the markers. */
static inline int doc_section_main(const struct doc_section *s, void (*rows)(struct doc_text *),
                                   int argc, char **argv)
{
    struct doc_text t = {malloc(DOC_SECTION_MAX_BYTES + 1), 0};
    if (!t.buf) {
        return 2;
    }
    doc_put(&t, "%s\n", s->begin_mark);
    rows(&t);
    doc_put(&t, "%s\n", s->end_mark);
    if (t.n >= DOC_SECTION_MAX_BYTES) {
        fprintf(stderr, "%s: the section does not fit %u bytes\n", s->tool, DOC_SECTION_MAX_BYTES);
        free(t.buf);
        return 2;
    }
    int rc = doc_section_run(s, t.buf, argc, argv);
    free(t.buf);
    return rc;
}

#endif /* TESTS_COMMON_DOC_SECTION_H */
