/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * <kvssd/kv_opcodes.def> against its users: the dispatch and the transfer
 * counters of kvssd_kv_execute() on a real kvftl instance, and the files
 * that cannot be generated from it — hw/kvssd/trace-events (QEMU's tracetool
 * reads it), docs/protocol.md's list of supported opcodes, docs/device.md's
 * trace table, libkvssd's encoders (host/lib/cmd.c) and kvssd's commands.
 * argv[1] is the source root. A row added without its trace event, its doc
 * entries, its encoder or verb, or with the wrong counter fails here,
 * naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <glib.h>

#include "fixture.h"
#include "tap_cunit.h"

static const char *source_root;

/* The file @rel under the source root, NUL-terminated; NULL (and a failed assertion) if unreadable.
 */
static char *read_source(const char *rel)
{
    g_autofree char *path = g_build_filename(source_root, rel, NULL);
    char *text = NULL;

    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        printf("# cannot read %s\n", path);
        CU_FAIL("a source file is unreadable");
        return NULL;
    }
    return text;
}

/*
 * Every opcode 00h-FFh on a fresh namespace with zeroed dwords: Invalid
 * Command Opcode (0001h) exactly for the opcodes without a row, and
 * kvssd_kv_opcode_info() finds exactly the rows.
 */
static void test_dispatch_is_the_table(void)
{
    size_t count;
    const struct kvssd_kv_opcode_info *rows = kvssd_kv_opcodes(&count);
    unsigned supported = 0;

    for (unsigned op = 0; op < 256; op++) {
        const struct kvssd_kv_opcode_info *row = kvssd_kv_opcode_info((uint8_t)op);
        struct kvssd_sqe s = sqe_new((uint8_t)op);
        uint16_t status = fx_exec(&s, NULL).status;
        bool listed = false;

        for (size_t i = 0; i < count; i++) {
            listed |= rows[i].opcode == op;
        }
        CU_ASSERT_EQUAL(row != NULL, listed);
        CU_ASSERT_EQUAL(kvssd_kv_opcode_supported((uint8_t)op), listed);
        if ((status == KVSSD_SC_INVALID_OPCODE) == listed) {
            printf("# opcode %02Xh: status %04Xh, %s row\n", op, status, listed ? "a" : "no");
            CU_FAIL("dispatch and table disagree");
        }
        supported += listed;
    }
    CU_ASSERT_EQUAL(supported, count);
}

/* Rows: distinct opcodes and names, direction = opcode bits 1:0, effects CSUPP. */
static void test_rows_are_consistent(void)
{
    size_t count;
    const struct kvssd_kv_opcode_info *rows = kvssd_kv_opcodes(&count);

    for (size_t i = 0; i < count; i++) {
        CU_ASSERT_EQUAL(rows[i].dir, rows[i].opcode & 3);
        CU_ASSERT_TRUE(rows[i].effects & KVSSD_CSE_CSUPP);
        CU_ASSERT_TRUE(rows[i].name[0] != '\0');
        for (size_t j = i + 1; j < count; j++) {
            CU_ASSERT_NOT_EQUAL(rows[i].opcode, rows[j].opcode);
            CU_ASSERT_STRING_NOT_EQUAL(rows[i].name, rows[j].name);
        }
    }
}

/* The transfer counters the table's counter column names, by field name. */
static const struct {
    const char *name;
    size_t offset;
} class_counters[] = {
    {"commands", offsetof(struct kvssd_xfer_counters, commands)},
    {"inline_commands", offsetof(struct kvssd_xfer_counters, inline_commands)},
    {"key_stage_commands", offsetof(struct kvssd_xfer_counters, key_stage_commands)},
};

static uint64_t counter_at(const struct kvssd_xfer_counters *x, size_t offset)
{
    uint64_t v;

    memcpy(&v, (const char *)x + offset, sizeof(v));
    return v;
}

/*
 * The statistics log's command counters, as docs/protocol.md defines them:
 * inline heads and transfers of both layouts count in inline_commands, Key
 * Stage in key_stage_commands, every other command only in "commands".
 */
static const char *expected_counter(uint8_t opcode)
{
    switch (opcode) {
    case 0x81:
    case 0x85:
    case 0x89:
    case 0x8d:
        return "inline_commands";
    case 0x91:
        return "key_stage_commands";
    default:
        return "commands";
    }
}

/*
 * Each row's command once, zeroed dwords (most fail validation; a command
 * counts all the same): the row names the expected counter, "commands"
 * moves by 1, the row's counter by 1, the other command counters not.
 */
static void test_counters_are_the_table(void)
{
    size_t count;
    const struct kvssd_kv_opcode_info *rows = kvssd_kv_opcodes(&count);

    for (size_t i = 0; i < count; i++) {
        struct kvssd_xfer_counters before = fx.xfer;
        struct kvssd_sqe s = sqe_new(rows[i].opcode);
        const char *want_name = expected_counter(rows[i].opcode);

        if (strcmp(rows[i].counter, want_name) != 0) {
            printf("# %s (%02Xh): the table names %s, the stats log defines %s\n", rows[i].name,
                   rows[i].opcode, rows[i].counter, want_name);
            CU_FAIL("a row names the wrong counter");
        }
        fx_exec(&s, NULL);
        for (size_t c = 0; c < sizeof(class_counters) / sizeof(class_counters[0]); c++) {
            uint64_t moved = counter_at(&fx.xfer, class_counters[c].offset) -
                             counter_at(&before, class_counters[c].offset);
            uint64_t want = c == 0 || strcmp(want_name, class_counters[c].name) == 0 ? 1 : 0;

            if (moved != want) {
                printf("# %s (%02Xh): %s moved by %llu, expected %llu\n", rows[i].name,
                       rows[i].opcode, class_counters[c].name, (unsigned long long)moved,
                       (unsigned long long)want);
                CU_FAIL("a command counted in other counters than the stats log defines");
            }
        }
    }
}

/*
 * hw/kvssd/trace-events: each row's event is declared, its arguments begin
 * with "uint16_t sqid, uint16_t cid" and end with "uint16_t status"; and
 * every event of the guest_log.c section except kvssd_cmd_done and kvssd_gc
 * is some row's.
 */
static void test_trace_events_are_the_table(void)
{
    g_autofree char *text = read_source("hw/kvssd/trace-events");
    g_auto(GStrv) lines = NULL;
    size_t count;
    const struct kvssd_kv_opcode_info *rows = kvssd_kv_opcodes(&count);
    bool in_section = false;
    unsigned section_events = 0;

    if (!text) {
        return;
    }
    lines = g_strsplit(text, "\n", -1);
    for (size_t i = 0; i < count; i++) {
        g_autofree char *head = g_strdup_printf("kvssd_%s(", rows[i].trace);
        const char *decl = NULL;

        for (char **l = lines; *l; l++) {
            if (g_str_has_prefix(*l, head)) {
                decl = *l;
            }
        }
        if (!decl) {
            printf("# %s (%02Xh): no event kvssd_%s in trace-events\n", rows[i].name,
                   rows[i].opcode, rows[i].trace);
            CU_FAIL("a row's trace event is not declared");
            continue;
        }
        CU_ASSERT_TRUE(g_str_has_prefix(decl + strlen(head), "uint16_t sqid, uint16_t cid"));
        CU_ASSERT_PTR_NOT_NULL(strstr(decl, "uint16_t status) "));
    }
    for (char **l = lines; *l; l++) {
        if ((*l)[0] == '#') {
            /* a section starts at its file's heading, "# queues.c" */
            if (g_regex_match_simple("^# [a-z_]+\\.c", *l, 0, 0)) {
                in_section = g_str_has_prefix(*l, "# guest_log.c");
            }
            continue;
        }
        if (!in_section || !g_str_has_prefix(*l, "kvssd_") ||
            g_str_has_prefix(*l, "kvssd_cmd_done(") || g_str_has_prefix(*l, "kvssd_gc(")) {
            continue;
        }
        bool named = false;
        for (size_t i = 0; i < count; i++) {
            g_autofree char *head = g_strdup_printf("kvssd_%s(", rows[i].trace);
            named |= g_str_has_prefix(*l, head);
        }
        if (!named) {
            printf("# trace-events: %.40s... is no row's event\n", *l);
            CU_FAIL("a guest_log.c event is no row's");
        }
        section_events++;
    }
    CU_ASSERT_TRUE(section_events > 0); /* the section is there */
}

/*
 * docs/protocol.md: "The Commands Supported and Effects log lists exactly:
 * 00h, 01h, ..." names the rows' opcodes, in increasing order.
 */
static void test_protocol_doc_lists_the_table(void)
{
    g_autofree char *text = read_source("docs/protocol.md");
    g_autoptr(GString) want = g_string_new(NULL);
    const char *at;

    for (unsigned op = 0; op < 256; op++) {
        if (kvssd_kv_opcode_info((uint8_t)op)) {
            g_string_append_printf(want, "%s%02Xh", want->len ? ", " : "", op);
        }
    }
    if (!text) {
        return;
    }
    at = strstr(text, "lists exactly:");
    if (!at) {
        CU_FAIL("docs/protocol.md has no \"lists exactly:\" sentence");
        return;
    }
    g_autofree char *got = g_strdup(at + strlen("lists exactly:"));
    char *end = strstr(got, "(`"); /* the sentence ends with the function's name */
    if (end) {
        *end = '\0';
    }
    g_strdelimit(got, "\n", ' '); /* the sentence wraps: a line break is a space */
    g_strstrip(got);
    if (strcmp(got, want->str) != 0) {
        printf("# docs/protocol.md lists: %s\n# the table has:        %s\n", got, want->str);
        CU_FAIL("docs/protocol.md and the table disagree");
    }
}

/* docs/device.md's trace table has a guest_log.c row naming each row's event. */
static void test_device_doc_names_the_trace_events(void)
{
    g_autofree char *text = read_source("docs/device.md");
    g_auto(GStrv) lines = NULL;
    size_t count;
    const struct kvssd_kv_opcode_info *rows = kvssd_kv_opcodes(&count);

    if (!text) {
        return;
    }
    lines = g_strsplit(text, "\n", -1);
    for (size_t i = 0; i < count; i++) {
        g_autofree char *name = g_strdup_printf("`kvssd_%s`", rows[i].trace);
        bool found = false;

        for (char **l = lines; *l; l++) {
            found |= (*l)[0] == '|' && strstr(*l, "| guest_log.c |") && strstr(*l, name);
        }
        if (!found) {
            printf("# docs/device.md's trace table has no %s (%s)\n", name, rows[i].name);
            CU_FAIL("docs/device.md lacks a row's trace event");
        }
    }
}

/* Each row's symbol, libkvssd encoder and kvssd verb, from the table itself. */
static const struct {
    const char *sym, *encoder, *verb;
} lib_rows[] = {
#define KVSSD_KV_OPCODE(sym, opc, set, name, dir, effects, handler, trace, counter, encoder, verb) \
    {"KVSSD_OPC_" #sym, #encoder, verb},
#include "kvssd/kv_opcodes.def"
};

/*
 * The name of the function whose definition encloses offset @at of @text
 * (a C file in the project's style: a definition's name starts a line after
 * its return type, and its body ends at "\n}"); NULL at file scope.
 */
static char *enclosing_function(const char *text, size_t at)
{
    const char *best = NULL;

    for (const char *p = strstr(text, "\n{"); p && (size_t)(p - text) < at;
         p = strstr(p + 1, "\n{")) {
        const char *end = strstr(p, "\n}");
        if (end && (size_t)(end - text) > at) {
            best = p;
        }
    }
    if (!best) {
        return NULL;
    }
    /* back to the line holding "name(" that starts the definition */
    const char *line = best;
    while (line > text && !(line[-1] == '\n' && line[0] != ' ' && strchr(line, '(') < best)) {
        line--;
    }
    const char *paren = strchr(line, '(');
    const char *name = paren;
    while (name > line && (g_ascii_isalnum(name[-1]) || name[-1] == '_')) {
        name--;
    }
    return g_strndup(name, (size_t)(paren - name));
}

/*
 * libkvssd's host/lib/cmd.c uses each row's opcode in exactly one function,
 * the row's encoder, which <kvssd/libkvssd.h> declares; no encoder sends
 * another row's opcode. Each row's verb is one of kvssd's commands
 * (host/cli/kvssd.c's table) and has its entry in kvssd(1).
 */
static void test_library_and_cli_are_the_table(void)
{
    g_autofree char *cmd = read_source("host/lib/cmd.c");
    g_autofree char *api = read_source("host/include/kvssd/libkvssd.h");
    g_autofree char *cli = read_source("host/cli/kvssd.c");
    g_autofree char *man = read_source("docs/man/kvssd.1.in");

    if (!cmd || !api || !cli || !man) {
        return;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(lib_rows); i++) {
        g_autofree char *decl = g_strdup_printf(" %s(struct kvssd_cmd *cmd", lib_rows[i].encoder);
        g_autofree char *entry = g_strdup_printf("{\"%s\", \"", lib_rows[i].verb);
        g_autofree char *verb_man = g_strdup_printf(".TP\n\\fB%s", lib_rows[i].verb);
        size_t uses = 0;

        for (const char *p = strstr(cmd, lib_rows[i].sym); p; p = strstr(p + 1, lib_rows[i].sym)) {
            size_t len = strlen(lib_rows[i].sym);
            if (g_ascii_isalnum(p[len]) || p[len] == '_') {
                continue; /* KVSSD_OPC_INLINE_HEAD in KVSSD_OPC_INLINE_HEAD_FULL */
            }
            g_autofree char *fn = enclosing_function(cmd, (size_t)(p - cmd));
            uses++;
            if (!fn || strcmp(fn, lib_rows[i].encoder)) {
                printf("# host/lib/cmd.c: %s used in %s, its row's encoder is %s\n",
                       lib_rows[i].sym, fn ? fn : "file scope", lib_rows[i].encoder);
                CU_FAIL("an opcode is encoded outside its row's encoder");
            }
        }
        if (uses != 1 || !strstr(api, decl)) {
            printf("# %s: %zu uses in host/lib/cmd.c, %s declared: %s\n", lib_rows[i].sym, uses,
                   lib_rows[i].encoder, strstr(api, decl) ? "yes" : "no");
            CU_FAIL("a row has no encoder in libkvssd");
        }
        const char *in_man = strstr(man, verb_man);
        if (in_man) {
            char next = in_man[strlen(verb_man)];
            in_man = next == ' ' || next == '\\' ? in_man : NULL; /* "put KEY" or "flush\fR" */
        }
        if (!strstr(cli, entry) || !in_man) {
            printf("# %s: verb \"%s\" in kvssd's table: %s, in kvssd(1): %s\n", lib_rows[i].sym,
                   lib_rows[i].verb, strstr(cli, entry) ? "yes" : "no", in_man ? "yes" : "no");
            CU_FAIL("a row's verb is not a kvssd command");
        }
    }
}

static const struct tap_test tests[] = {
    TAP_TEST(dispatch_is_the_table),         TAP_TEST(rows_are_consistent),
    TAP_TEST(counters_are_the_table),        TAP_TEST(trace_events_are_the_table),
    TAP_TEST(protocol_doc_lists_the_table),  TAP_TEST(device_doc_names_the_trace_events),
    TAP_TEST(library_and_cli_are_the_table),
};

int main(int argc, char **argv)
{
    static const struct tap_suite suite = TAP_SUITE_FIXTURE("opcodes", fx_setup, fx_teardown,
                                                            tests);

    if (argc != 2) {
        fprintf(stderr, "usage: %s SOURCE_ROOT\n", argv[0]);
        return 2;
    }
    source_root = argv[1];
    return tap_main(&suite, 1);
}
