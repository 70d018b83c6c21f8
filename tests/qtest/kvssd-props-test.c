/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device's QEMU conventions (docs/device.md): enum properties whose
 * values -device kvssd,help lists, number properties that read their text
 * as every tool and sim: do (64Mi, 1e6; tests/cmdset/test_properties.c),
 * realize's sentences without a doubled "kvssd:" prefix, and the
 * LOG_GUEST_ERROR lines of guest mistakes (one per malformed command, none
 * for a normal outcome, at most KVSSD_GUEST_ERROR_LINES a second of the
 * virtual clock, which qtest advances only when told).
 *
 * The help and realize cases run the emulator of QTEST_QEMU_BINARY
 * directly: QEMU prints the help, or refuses the device, and exits before a
 * qtest connection exists.
 */
#include "kvssd-common.h"
#include "kvssd-image.h"

/* At most this many guest-error lines per second (hw/kvssd/kvssd.h). */
#define LINES_PER_SECOND 10

/* Run the emulator with @args; its exit status, stdout and stderr. */
static int run_qemu(const char *args, char **out, char **err)
{
    const char *bin = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *cmd = NULL;
    g_auto(GStrv) argv = NULL;
    g_autoptr(GError) gerr = NULL;
    int status = -1;

    g_assert(bin);
    cmd = g_strdup_printf("%s %s", bin, args);
    g_assert(g_shell_parse_argv(cmd, NULL, &argv, &gerr));
    g_assert(g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, &status, &gerr));
    return status;
}

/* Does @text have the line @line, whole? */
static bool has_line(const char *text, const char *line)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

    for (int i = 0; lines[i]; i++) {
        if (strcmp(lines[i], line) == 0) {
            return true;
        }
    }
    return false;
}

/*
 * -device kvssd,help: each enum property lists its values (the firmware's and
 * auto = the preset's), with its type and QEMU's default; byte counts are sizes.
 */
static void test_help_lists_enum_values(void)
{
    g_autofree char *out = NULL, *err = NULL;

    g_assert_cmpint(run_qemu("-device kvssd,help", &out, &err), ==, 0);
    g_assert(has_line(out, "  preset=<kvftl_preset>  - firmware preset, the values of the firmware "
                           "parameters left unset: pm983 is the Samsung PM983 KV (32 KiB pages, "
                           "1 KiB placement), cosmos the Cosmos+ OpenSSD (BandSlim's testbed); "
                           "default, pm983 or cosmos (default: default)"));
    g_assert(has_line(out, "  packing=<kvftl_packing> - placement policy of values in the page "
                           "buffer (BandSlim \xc2\xa7"
                           "3.3; backfill: with the DMA Log Table); "
                           "block, all, selective, backfill or auto (auto = the preset's: default "
                           "all, pm983 all, cosmos backfill) (default: auto)"));
    g_assert(has_line(out, "  gc-policy=<kvftl_gc_policy> - GC victim policy; greedy, cost-benefit "
                           "or auto (auto = the preset's: default greedy, pm983 greedy, cosmos "
                           "greedy) (default: auto)"));
    g_assert(strstr(out, "  command-set=<kvftl_command_set> - "));
    g_assert(strstr(out, "; kv, nvm or auto (auto = the preset's: default kv, pm983 kv, cosmos kv) "
                         "(default: auto)\n"));
    /* byte counts are sizes */
    g_assert(strstr(out, "  index-dram-bytes=<size> - "));
    g_assert(strstr(out, "  page-size-bytes=<size> - "));
    g_assert(strstr(out, "  dma-unit=<size>        - "));
    /* not a byte count: a plain number */
    g_assert(strstr(out, "  channels=<uint32>      - "));
}

/* Property @prop of the device kv0, as qom-get returns it (a number). */
static int64_t qom_get_int(KvDev *d, const char *prop)
{
    QDict *r = qtest_qmp(d->qts,
                         "{'execute': 'qom-get', 'arguments': {'path': '/machine/peripheral/kv0', "
                         "'property': %s}}",
                         prop);
    int64_t v = qdict_get_int(r, "return");

    qobject_unref(r);
    return v;
}

/*
 * Sizes take suffixes: index-dram-bytes=64M is 67108864 in QOM, and
 * dma-unit=64K reaches the device (the statistics log page reports it).
 */
static void test_size_suffixes(void)
{
    KvDev *d = kv_start("id=kv0,index-dram-bytes=64M,dma-unit=64K,page-size-bytes=32K");
    uint8_t log[4096];

    g_assert_cmpint(qom_get_int(d, "index-dram-bytes"), ==, 64ll << 20);
    g_assert_cmpint(qom_get_int(d, "page-size-bytes"), ==, 32768);
    kv_enable(d);
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_STATS, 0, sizeof(log), 0, log), ==, 0);
    g_assert_cmpuint(le32p(log + offsetof(struct kvssd_stats_log, dma_unit_bytes)), ==, 65536);
    kv_stop(d);
}

/*
 * Numbers as sim: and every tool read them (QEMU's own integer and size
 * properties refused these): 64Mi, 1e6, 10k and 0x10, in a tunable and in
 * a device property; channels=0 is unset, the preset's.
 */
static void test_units(void)
{
    KvDev *d = kv_start("id=kv0,index-dram-bytes=64Mi,max-keys=1e6,dma-unit=4Ki,"
                        "inline-timeout-ms=10k,tag-table-entries=0x10,channels=0");

    g_assert_cmpint(qom_get_int(d, "index-dram-bytes"), ==, 64ll << 20);
    g_assert_cmpint(qom_get_int(d, "max-keys"), ==, 1000000);
    g_assert_cmpint(qom_get_int(d, "dma-unit"), ==, 4096);
    g_assert_cmpint(qom_get_int(d, "inline-timeout-ms"), ==, 10000);
    g_assert_cmpint(qom_get_int(d, "tag-table-entries"), ==, 16);
    g_assert_cmpint(qom_get_int(d, "channels"), ==, 0);
    kv_stop(d);
}

/* QEMU's error line for -device kvssd,@props: the exact sentence after QEMU's own prefix. */
static void check_refused(const char *props, const char *sentence)
{
    g_autofree char *args = g_strdup_printf(
        "-L /usr/share/seabios -L /usr/share/qemu -machine pc "
        "-accel qtest -display none -nodefaults -device kvssd,%s",
        props);
    g_autofree char *out = NULL, *err = NULL;
    g_autofree char *want = g_strdup_printf(": -device kvssd,%s: %s\n", props, sentence);

    g_assert_cmpint(run_qemu(args, &out, &err), !=, 0);
    /* one line: "<qemu>: -device kvssd,<props>: <sentence>", no "kvssd: " before the sentence */
    g_assert(g_str_has_suffix(err, want));
    /* and no other line but a sanitizer's own notes ("==PID==WARNING: ASan ...makecontext") */
    g_auto(GStrv) lines = g_strsplit(err, "\n", -1);
    int ours = 0;
    for (int i = 0; lines[i]; i++) {
        ours += lines[i][0] && !g_str_has_prefix(lines[i], "==");
    }
    g_assert_cmpint(ours, ==, 1);
    g_assert(!strstr(err, ": kvssd: "));
}

/* A name that is not one of an enum's values: its sentence names it and the allowed ones. */
static void test_bad_enum_sentence(void)
{
    check_refused("packing=tight",
                  "packing is 'tight'; it must be block, all, selective, backfill or auto (the "
                  "preset's)");
    check_refused("preset=nosuch", "preset is 'nosuch'; it must be default, pm983 or cosmos");
    check_refused("gc-policy=lru",
                  "gc-policy is 'lru'; it must be greedy, cost-benefit or auto (the preset's)");
}

/*
 * A number out of range or no number, refused by its property as sim:
 * refuses it ("NAME is 'TEXT'; it must be RANGE"), and a range that
 * depends on other properties by the firmware's check at realize: no
 * doubled prefix either.
 */
static void test_bad_number_sentence(void)
{
    check_refused("mdts=2", "mdts is '2'; it must be from 9 (2 MiB) to 12 (16 MiB) (a power of two "
                            "of 4 KiB pages)");
    check_refused("dma-unit=3K", "dma-unit is '3K'; it must be a power of two from 1 to 65536");
    check_refused("completion-poll-ns=10000001",
                  "completion-poll-ns is '10000001'; it must be from 0 to 10000000");
    check_refused("page-size-bytes=64M",
                  "page-size-bytes is '64M'; it must be a power of two from 4096 to 65536");
    check_refused("index-dram-bytes=64x", "index-dram-bytes is '64x'; it must be at least two "
                                          "index pages (and 64 with bloom)");
    check_refused("max-keys=1Mi", "max-keys is '1Mi'; it must be any number");
    check_refused("blocks-per-die=5", "blocks_per_die is 5; it must be from 12 "
                                      "(gc_high_watermark_blocks + 4) to 1048576");
}

/* The kvssd lines of the guest-error log @path (after QEMU quit). */
static GStrv kvssd_log_lines(const char *path)
{
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    GPtrArray *kv = g_ptr_array_new();

    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        if (g_str_has_prefix(lines[i], "kvssd: ")) {
            g_ptr_array_add(kv, g_strdup(lines[i]));
        }
    }
    g_ptr_array_add(kv, NULL);
    return (GStrv)g_ptr_array_free(kv, false);
}

/* A device whose guest errors go to a new log file (*@path, to unlink). */
static KvDev *start_logged(char **path)
{
    g_autofree char *args = NULL;
    int fd = g_file_open_tmp("kvssd-guest-errors-XXXXXX", path, NULL);

    g_assert(fd >= 0);
    close(fd);
    args = g_strdup_printf("-d guest_errors -D %s", *path);
    return kv_start_with("", args);
}

/* An admin command with an opcode the device does not have: Invalid Command Opcode, DNR. */
static KvCqe bad_admin_opcode(KvDev *d)
{
    struct kvssd_sqe s = kv_sqe(0x7f, 0);
    KvCqe c = kv_cmd(d, 0, &s);

    g_assert_cmphex(c.status, ==, KVSSD_SC_INVALID_OPCODE | KVSSD_SC_DNR);
    return c;
}

static char *bad_admin_line(const KvCqe *c)
{
    return g_strdup_printf("kvssd: sq 0 cid %u opcode 0x7f (unknown admin command): Invalid "
                           "Command Opcode (status 0x%04x)",
                           c->cid, c->status);
}

/*
 * One malformed command, one line naming queue, cid, opcode and status; a
 * Store with a 0-byte key too (KV Invalid Key Size); a Retrieve and an Exist
 * of a missing key are normal outcomes: no line.
 */
static void test_guest_error_one_line(void)
{
    g_autofree char *path = NULL;
    KvDev *d = start_logged(&path);
    struct kvssd_sqe s;
    KvCqe bad, store;

    kv_enable(d);
    kv_io_queue(d, 64);
    bad = bad_admin_opcode(d);
    s = kv_sqe(KVSSD_OPC_STORE, 1);
    s.cdw[10] = 16;
    s.cdw[11] = kvssd_cdw11(0, 0);
    kv_set_prp(&s, KV_DATA, 0);
    store = kv_cmd(d, 1, &s);
    g_assert_cmphex(store.status & KVSSD_STATUS_CODE_MASK, ==, KVSSD_SC_INVALID_KEY_SIZE);
    g_assert_cmphex(kv_retrieve(d, "absent", NULL, 0).status & KVSSD_STATUS_CODE_MASK, ==,
                    KVSSD_SC_KEY_DOES_NOT_EXIST);
    g_assert_cmphex(kv_keyop(d, KVSSD_OPC_EXIST, "absent") & KVSSD_STATUS_CODE_MASK, ==,
                    KVSSD_SC_KEY_DOES_NOT_EXIST);
    kv_stop(d);

    g_auto(GStrv) lines = kvssd_log_lines(path);
    g_autofree char *want_admin = bad_admin_line(&bad);
    g_autofree char *want_store = g_strdup_printf(
        "kvssd: sq 1 cid %u opcode 0x01 (Store): KV Invalid Key Size (status 0x%04x)", store.cid,
        store.status);
    g_assert_cmpuint(g_strv_length(lines), ==, 2);
    g_assert_cmpstr(lines[0], ==, want_admin);
    g_assert_cmpstr(lines[1], ==, want_store);
    unlink(path);
}

/*
 * 25 malformed commands within one second of virtual time: 10 lines. A
 * second later the next one first logs the 15 left out, then itself.
 */
static void test_guest_error_rate_limit(void)
{
    g_autofree char *path = NULL;
    KvDev *d = start_logged(&path);
    KvCqe c[26];

    kv_enable(d);
    for (int i = 0; i < 25; i++) {
        c[i] = bad_admin_opcode(d);
    }
    qtest_clock_step(d->qts, 1000000000);
    c[25] = bad_admin_opcode(d);
    kv_stop(d);

    g_auto(GStrv) lines = kvssd_log_lines(path);
    g_assert_cmpuint(g_strv_length(lines), ==, LINES_PER_SECOND + 2);
    for (int i = 0; i < LINES_PER_SECOND; i++) {
        g_autofree char *want = bad_admin_line(&c[i]);
        g_assert_cmpstr(lines[i], ==, want);
    }
    g_assert_cmpstr(lines[LINES_PER_SECOND], ==,
                    "kvssd: 15 more guest errors not logged (at most 10 lines a second)");
    g_autofree char *last = bad_admin_line(&c[25]);
    g_assert_cmpstr(lines[LINES_PER_SECOND + 1], ==, last);
    unlink(path);
}

/* A register write the device ignores (AQA while enabled): one line naming it. */
static void test_register_guest_error(void)
{
    g_autofree char *path = NULL;
    KvDev *d = start_logged(&path);

    kv_enable(d);
    kv_wr32(d, KVSSD_REG_AQA, 0x00030003);
    kv_stop(d);

    g_auto(GStrv) lines = kvssd_log_lines(path);
    g_assert_cmpuint(g_strv_length(lines), ==, 1);
    g_assert_cmpstr(lines[0], ==,
                    "kvssd: register write at 0x24 (4 bytes, value 0x30003): AQA is read-only "
                    "while CC.EN = 1; ignored");
    unlink(path);
}

/*
 * The kvssd_gc trace event: a small device (10 stripes of 2.25 MiB) takes
 * 48 MiB of overwrites of four keys, so GC runs; the runs the events report
 * add up to the statistics log page's gc_runs, exactly (each run during a
 * command is in that command's event, none twice).
 */
static void test_gc_trace_event(void)
{
    g_autofree char *path = NULL;
    g_autofree char *args = NULL;
    g_autofree char *text = NULL;
    int fd = g_file_open_tmp("kvssd-trace-XXXXXX", &path, NULL);
    const uint32_t vlen = 256 * 1024;
    g_autofree uint8_t *val = g_malloc(vlen);
    uint8_t log[4096];
    uint64_t traced_runs = 0;
    int events = 0;

    g_assert(fd >= 0);
    close(fd);
    args = g_strdup_printf("-trace kvssd_gc -D %s", path);
    KvDev *d = kv_start_with("channels=1,dies-per-channel=1,blocks-per-die=10,pages-per-block=576,"
                             "page-size-bytes=4K,gc-high-watermark-blocks=3,"
                             "gc-low-watermark-blocks=2",
                             args);
    kv_enable(d);
    kv_io_queue(d, 64);
    memset(val, 0x5a, vlen);
    qtest_memwrite(d->qts, KV_DATA, val, vlen);
    for (int i = 0; i < 192; i++) {
        struct kvssd_sqe s = kv_sqe(KVSSD_OPC_STORE, 1);
        char key[8];
        snprintf(key, sizeof(key), "gc%d", i % 4);
        kvssd_sqe_set_key(&s, key, strlen(key));
        s.cdw[10] = vlen;
        s.cdw[11] = kvssd_cdw11(strlen(key), 0);
        kv_prp_for(d, &s, KV_DATA, vlen);
        g_assert_cmphex(kv_cmd(d, 1, &s).status, ==, 0);
    }
    g_assert_cmphex(kv_get_log(d, KVSSD_LID_STATS, 0, sizeof(log), 0, log), ==, 0);
    kv_stop(d);

    uint64_t gc_runs = le64p(log + offsetof(struct kvssd_stats_log, gc_runs));
    g_assert_cmpuint(gc_runs, >, 0);
    g_assert(g_file_get_contents(path, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        const char *ev = strstr(lines[i], "kvssd_gc during sq 1 cid ");
        unsigned long long runs;
        if (ev && sscanf(strstr(ev, ": ") + 2, "%llu runs", &runs) == 1) {
            g_assert_cmpuint(runs, >, 0);
            traced_runs += runs;
            events++;
        }
    }
    g_test_message("%d kvssd_gc events, %llu GC runs traced, %llu in the statistics log", events,
                   (unsigned long long)traced_runs, (unsigned long long)gc_runs);
    g_assert_cmpint(events, >, 0);
    g_assert_cmpuint(traced_runs, ==, gc_runs);
    unlink(path);
}

/*
 * hash-seed=N pins the key-hash seed: a new image gets N, and so does a
 * Format (which draws a fresh secret without the property); the checkpoint
 * of an orderly exit names it.
 */
static void test_hash_seed_pins(void)
{
    const uint64_t seed = 81985529216486895ull; /* 0x0123456789abcdef */
    g_autofree char *dir = g_dir_make_tmp("kvssd-qtest-XXXXXX", NULL);
    g_autofree char *img = g_build_filename(dir, "nand.img", NULL);
    g_autofree char *pinned = g_strdup_printf("image=%s,hash-seed=%" PRIu64, img, seed);
    g_autofree char *secret = g_strdup_printf("image=%s", img);
    struct kvssd_sqe s;

    KvDev *d = kv_ready(pinned);
    g_assert_cmphex(kv_store(d, "k", "v", 1, 0), ==, 0);
    kv_stop(d);
    g_assert_cmphex(kv_image_hash_seed(img), ==, seed);

    /* without the property, a Format draws a secret */
    d = kv_ready(secret);
    s = kv_sqe(KVSSD_ADM_FORMAT_NVM, 1);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    kv_stop(d);
    g_assert_cmphex(kv_image_hash_seed(img), !=, seed);

    /* with it, a Format takes the pinned seed again */
    d = kv_ready(pinned);
    s = kv_sqe(KVSSD_ADM_FORMAT_NVM, 1);
    g_assert_cmphex(kv_cmd(d, 0, &s).status, ==, 0);
    g_assert_cmphex(kv_store(d, "k", "v", 1, 0), ==, 0);
    kv_stop(d);
    g_assert_cmphex(kv_image_hash_seed(img), ==, seed);
    unlink(img);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/kvssd/props/help-lists-enum-values", test_help_lists_enum_values);
    qtest_add_func("/kvssd/props/size-suffixes", test_size_suffixes);
    qtest_add_func("/kvssd/props/units", test_units);
    qtest_add_func("/kvssd/props/bad-enum-sentence", test_bad_enum_sentence);
    qtest_add_func("/kvssd/props/bad-number-sentence", test_bad_number_sentence);
    qtest_add_func("/kvssd/props/guest-error-one-line", test_guest_error_one_line);
    qtest_add_func("/kvssd/props/guest-error-rate-limit", test_guest_error_rate_limit);
    qtest_add_func("/kvssd/props/register-guest-error", test_register_guest_error);
    qtest_add_func("/kvssd/props/gc-trace-event", test_gc_trace_event);
    qtest_add_func("/kvssd/props/hash-seed", test_hash_seed_pins);
    return g_test_run();
}
