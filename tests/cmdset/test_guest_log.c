/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hw/kvssd/guest_log.h's status table against the device's status
 * definitions: every enumerator KVSSD_SC_* = value of an enum in
 * include/kvssd/X.h (the directory is argv[1]) has a row with that symbol
 * and that code, and every row is one of them. A status added to the
 * headers without a row in guest_log.h fails here, naming it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "guest_log.h"
#include "tap_cunit.h"

static const char *include_dir;

/* One enumerator found in a header: where it is, its symbol and its value. */
struct enum_status {
    char file[64];
    unsigned line;
    char symbol[80];
    unsigned value;
};

#define MAX_STATUSES 256

/*
 * Every "KVSSD_SC_NAME = VALUE" line inside an "enum ... {" block of the
 * headers in @dir (the #defines KVSSD_SC_MORE / KVSSD_SC_DNR are status
 * bits, not statuses). Returns how many, at most @max; -1 if @dir cannot be read.
 */
static int scan_headers(const char *dir, struct enum_status *out, int max)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    if (!d) {
        return -1;
    }
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 3 || strcmp(de->d_name + len - 2, ".h")) {
            continue;
        }
        char path[512], buf[512];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) {
            continue;
        }
        bool in_enum = false;
        for (unsigned line = 1; fgets(buf, sizeof(buf), f); line++) {
            char name[64];
            unsigned value;
            if (!strncmp(buf, "enum ", 5) && strchr(buf, '{')) {
                in_enum = true;
            } else if (in_enum && strstr(buf, "};")) {
                in_enum = false;
            } else if (in_enum && n < max &&
                       sscanf(buf, " KVSSD_SC_%60[A-Z0-9_] = %i", name, &value) == 2) {
                snprintf(out[n].file, sizeof(out[n].file), "%s", de->d_name);
                out[n].line = line;
                snprintf(out[n].symbol, sizeof(out[n].symbol), "KVSSD_SC_%s", name);
                out[n].value = value;
                n++;
            }
        }
        fclose(f);
    }
    closedir(d);
    return n;
}

/* The enumerators among @st[0..@n) without a row of the same symbol and code; each printed. */
static int statuses_without_row(const struct enum_status *st, int n)
{
    int missing = 0;
    for (int i = 0; i < n; i++) {
        bool found = false;
        for (size_t r = 0; r < KVSSD_STATUS_TABLE_ROWS; r++) {
            found |= !strcmp(kvssd_status_table[r].symbol, st[i].symbol) &&
                     kvssd_status_table[r].code == st[i].value;
        }
        if (!found) {
            printf("# %s (0x%04x, include/kvssd/%s:%u) has no row in hw/kvssd/guest_log.h\n",
                   st[i].symbol, st[i].value, st[i].file, st[i].line);
            missing++;
        }
    }
    return missing;
}

/* The headers define 47 statuses today; each has its row, symbol and code alike. */
static void test_every_status_has_a_row(void)
{
    static struct enum_status st[MAX_STATUSES];
    int n = scan_headers(include_dir, st, MAX_STATUSES);
    CU_ASSERT_EQUAL(n, 47);
    CU_ASSERT_EQUAL(statuses_without_row(st, n), 0);
}

/* No row names a code the headers do not define, and no code has two rows. */
static void test_every_row_is_a_status(void)
{
    static struct enum_status st[MAX_STATUSES];
    int n = scan_headers(include_dir, st, MAX_STATUSES);
    CU_ASSERT_EQUAL(KVSSD_STATUS_TABLE_ROWS, 47);
    for (size_t r = 0; r < KVSSD_STATUS_TABLE_ROWS; r++) {
        bool defined = false;
        for (int i = 0; i < n; i++) {
            defined |= !strcmp(kvssd_status_table[r].symbol, st[i].symbol);
        }
        CU_ASSERT_TRUE(defined);
        for (size_t q = r + 1; q < KVSSD_STATUS_TABLE_ROWS; q++) {
            CU_ASSERT_NOT_EQUAL(kvssd_status_table[r].code, kvssd_status_table[q].code);
        }
    }
}

/*
 * The check catches an addition: the headers copied with one more
 * enumerator in ext.h's enum (KVSSD_SC_TEST_ADDED = 0x01ca) miss exactly
 * that one row.
 */
static void test_added_status_is_caught(void)
{
    char tmp[] = "/tmp/kvssd-guest-log-XXXXXX";
    static struct enum_status st[MAX_STATUSES];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp));
    DIR *d = opendir(include_dir);
    struct dirent *de;
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 3 || strcmp(de->d_name + len - 2, ".h")) {
            continue;
        }
        char from[512], to[512], buf[512];
        snprintf(from, sizeof(from), "%s/%s", include_dir, de->d_name);
        snprintf(to, sizeof(to), "%s/%s", tmp, de->d_name);
        FILE *in = fopen(from, "r"), *out = fopen(to, "w");
        CU_ASSERT_FATAL(in && out);
        while (fgets(buf, sizeof(buf), in)) {
            fputs(buf, out);
            if (strstr(buf, "KVSSD_SC_ITERATOR_END = 0x01c9")) {
                fputs("    KVSSD_SC_TEST_ADDED = 0x01ca,\n", out);
            }
        }
        fclose(in);
        fclose(out);
    }
    closedir(d);
    int n = scan_headers(tmp, st, MAX_STATUSES);
    CU_ASSERT_EQUAL(n, 48);
    CU_ASSERT_EQUAL(statuses_without_row(st, n), 1);
    bool named = false;
    for (int i = 0; i < n; i++) {
        named |= !strcmp(st[i].symbol, "KVSSD_SC_TEST_ADDED") && st[i].value == 0x01ca &&
                 !strcmp(st[i].file, "ext.h");
    }
    CU_ASSERT_TRUE(named);
    d = opendir(tmp);
    while (d && (de = readdir(d))) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", tmp, de->d_name);
        if (de->d_name[0] != '.') {
            unlink(p);
        }
    }
    if (d) {
        closedir(d);
    }
    rmdir(tmp);
}

/* The lookup ignores DNR/More: Invalid Field | DNR is a guest error; Key Does Not Exist is not. */
static void test_lookup(void)
{
    const struct kvssd_status_info *si;
    si = kvssd_status_lookup(KVSSD_SC_INVALID_FIELD | KVSSD_SC_DNR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(si);
    CU_ASSERT_STRING_EQUAL(si->name, "Invalid Field in Command");
    CU_ASSERT_TRUE(si->guest_error);
    si = kvssd_status_lookup(KVSSD_SC_KEY_DOES_NOT_EXIST | KVSSD_SC_DNR | KVSSD_SC_MORE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(si);
    CU_ASSERT_STRING_EQUAL(si->name, "KV Key Does Not Exist");
    CU_ASSERT_STRING_EQUAL(si->symbol, "KVSSD_SC_KEY_DOES_NOT_EXIST");
    CU_ASSERT_FALSE(si->guest_error);
    si = kvssd_status_lookup(KVSSD_SC_ITERATOR_END);
    CU_ASSERT_PTR_NOT_NULL_FATAL(si);
    CU_ASSERT_EQUAL(si->code, 0x01c9);
    CU_ASSERT_PTR_NULL(kvssd_status_lookup(0x01ca));
    CU_ASSERT_PTR_NULL(kvssd_status_lookup(0x0010));
}

static const struct tap_test tests[] = {
    TAP_TEST(every_status_has_a_row),
    TAP_TEST(every_row_is_a_status),
    TAP_TEST(added_status_is_caught),
    TAP_TEST(lookup),
};

int main(int argc, char **argv)
{
    const struct tap_suite suite = TAP_SUITE("guest-log", NULL, NULL, tests);

    if (argc != 2) {
        fprintf(stderr, "usage: %s INCLUDE_KVSSD_DIR\n", argv[0]);
        return 2;
    }
    include_dir = argv[1];
    return tap_main(&suite, 1);
}
