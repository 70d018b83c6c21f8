/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Plain driver for the fuzz targets: replays the files named on the command
 * line (a directory means every file in it but dotfiles and *.md, sorted) through
 * LLVMFuzzerTestOneInput and prints one TAP line per file. Lets the targets
 * build with gcc in the normal build and keeps the committed corpus and any
 * crash file reproducible without clang. Each input runs in a child
 * process: a model mismatch (abort) or a crash is reported as "not ok" for
 * that file and the next file still runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void collect(const char *path, GPtrArray *files)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
        GDir *d = g_dir_open(path, 0, NULL);
        if (!d) {
            return;
        }
        const char *n;
        while ((n = g_dir_read_name(d))) {
            if (n[0] != '.' && !g_str_has_suffix(n, ".md")) {
                g_ptr_array_add(files, g_build_filename(path, n, NULL));
            }
        }
        g_dir_close(d);
    } else {
        g_ptr_array_add(files, g_strdup(path));
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    for (int i = 1; i < argc; i++) {
        collect(argv[i], files);
    }
    qsort(files->pdata, files->len, sizeof(char *), cmp_str);
    printf("1..%u\n", files->len);
    int failed = 0;
    for (unsigned i = 0; i < files->len; i++) {
        const char *path = g_ptr_array_index(files, i);
        gchar *data = NULL;
        gsize len = 0;
        GError *err = NULL;
        printf("# replaying %s\n", path);
        fflush(stdout);
        if (!g_file_get_contents(path, &data, &len, &err)) {
            printf("not ok %u - replay %s (%s)\n", i + 1, path, err->message);
            g_error_free(err);
            failed++;
            continue;
        }
        /* Each input in a child, so that a crash is one "not ok" line, not the end. */
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            LLVMFuzzerTestOneInput((const uint8_t *)data, len);
            fflush(NULL);
            _exit(0);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid) {
            status = -1;
        }
        g_free(data);
        gchar *base = g_path_get_basename(path);
        if (status == 0) {
            printf("ok %u - replay %s\n", i + 1, base);
        } else {
            failed++;
            if (status != -1 && WIFSIGNALED(status)) {
                printf("not ok %u - replay %s (signal %d)\n", i + 1, base, WTERMSIG(status));
            } else {
                printf("not ok %u - replay %s (exit status %d)\n", i + 1, base,
                       status == -1 ? -1 : WEXITSTATUS(status));
            }
        }
        fflush(stdout);
        g_free(base);
        fflush(stdout);
    }
    g_ptr_array_free(files, TRUE);
    return failed ? 1 : 0;
}
