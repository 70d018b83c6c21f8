/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A usage error as every tool words it (CONTRIBUTING.md "Help style"): a
 * refused option, argument or value - an unknown flag, a number out of its
 * range - on stderr as
 *
 *   kvbench: threads is '65'; it must be from 1 to 64
 *   (run kvbench --help for usage)
 *
 * and exit status TOOL_EXIT_USAGE. The tools: kvssd, kvbench, kvftl-bench,
 * kvssd-cmd-bench (the test help_style checks each). Header-only and libc
 * only, as units.h: the tools build in different places.
 */
#ifndef BENCH_USAGE_H
#define BENCH_USAGE_H

#include <stdarg.h>
#include <stdio.h>

#define TOOL_EXIT_USAGE 2

/*
 * tool_usage_error() - "@tool: SENTENCE" (@fmt), then "(run @help for
 * usage)", @help being "@tool --help" when NULL, or a narrower one ("kvssd
 * help info"). The caller exits with TOOL_EXIT_USAGE.
 */
static inline void tool_usage_error(const char *tool, const char *help, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline void tool_usage_error(const char *tool, const char *help, const char *fmt, ...)
{
    char sentence[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(sentence, sizeof(sentence), fmt, ap);
    va_end(ap);
    if (help) {
        fprintf(stderr, "%s: %s\n(run %s for usage)\n", tool, sentence, help);
    } else {
        fprintf(stderr, "%s: %s\n(run %s --help for usage)\n", tool, sentence, tool);
    }
}

#endif /* BENCH_USAGE_H */
