/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvssd - poke a KV namespace from the shell.
 *
 *   kvssd COMMAND [DEVICE] [args] [options]     (nvme-cli's order)
 *   kvssd [options] COMMAND [args]              (-d DEVICE or $KVSSD_DEVICE)
 *
 * Human output by default, one JSON object with -o json (or --json), built
 * with json-c: docs/host.md's "JSON output" gives each command's schema.
 * Errors are sentences on stderr; the exit status is 0 on success, 1 when
 * the device refused (or the key does not exist), 2 for a usage error.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>
#include <kvssd/libkvssd.h>
#include <kvssd_version.h>

#include "bench/provenance.h"
#include "bench/units.h"
#include "bench/usage.h"
#include "cli.h"

#define EXIT_REFUSED 1
#define EXIT_USAGE TOOL_EXIT_USAGE
#define LIST_BUF_BYTES (64u * 1024)

static struct {
    const char *device;
    bool json;
    bool key_hex;
    bool value_hex;
    const char *file;
    const char *out;
    const char *mode;
    const char *config;
    const char *start;
    const char *prefix;
    bool values;
    bool if_exists;
    bool if_absent;
    bool size_only;
    long max_bytes; /* -1 = whole value */
    long max_keys;
    bool yes;
    bool help;
} opt = {.max_bytes = -1, .max_keys = -1};

/* One line of help per option; commands name the ones they read. */
struct option_help {
    const char *name;
    const char *text;
};

static const struct option_help option_help[] = {
    {"device", "  -d, --device PATH         /dev/ngXnY, or pci:BDF / pci:nvmeN for the user-space\n"
               "                            PCI transport, or sim:IMAGE[,prop=value...] for the\n"
               "                            simulator in this process (no VM); also the first\n"
               "                            argument after the command. Default: $KVSSD_DEVICE,\n"
               "                            else the first found.\n"},
    {"output-format",
     "  -o, --output-format FMT   normal or json: one JSON object on stdout. Default:\n"
     "                            normal.\n"},
    {"json", "  -j, --json                the same as --output-format json\n"},
    {"key-hex", "  -x, --key-hex             KEY (and --start/--prefix) are hex strings; JSON\n"
                "                            shows keys in the hex form\n"},
    {"mode", "  -m, --mode M              transfer method: prp, inline, hybrid, adaptive\n"},
    {"config",
     "  -c, --config F            transfer threshold file (as kvbench calibrate writes)\n"},
    {"value-hex", "      --value-hex           VALUE is a hex string; get prints hex (JSON: the\n"
                  "                            hex form)\n"},
    {"file", "  -f, --file F              put: read the value from file F ('-' = stdin)\n"},
    {"output",
     "      --output F            get: write the value to file F (--out F is the same)\n"},
    {"if-exists", "      --if-exists           put: only replace an existing key\n"},
    {"if-absent", "      --if-absent           put: only create a new key\n"},
    {"size-only", "      --size-only           get: print only the value's size\n"},
    {"max-bytes", "      --max-bytes N         get: read only the first N bytes\n"},
    {"start", "      --start KEY           list: begin at KEY (included when it exists)\n"},
    {"max-keys", "      --max-keys N          list/iter: stop after N keys\n"},
    {"prefix", "      --prefix P            iter: key prefix\n"},
    {"values", "      --values              iter: print values too\n"},
    {"yes", "      --yes                 format: really erase\n"},
    {"version",
     "      --version             print the version (and the git describe of the build)\n"},
    {"help", "  -h, --help                this text; after a command, that command's help\n"},
};

#define COMMON_OPTIONS "device output-format json key-hex mode config help"

struct command {
    const char *name;
    const char *args;
    const char *summary;
    const char *options; /* besides COMMON_OPTIONS */
    int (*run)(int argc, char **argv);
};

static const struct command *find_command(const char *name);

static void print_options(FILE *f, const char *names)
{
    for (size_t i = 0; i < sizeof(option_help) / sizeof(option_help[0]); i++) {
        const char *p = names;
        size_t n = strlen(option_help[i].name);
        while ((p = strstr(p, option_help[i].name))) {
            if ((p == names || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) {
                fputs(option_help[i].text, f);
                break;
            }
            p += n;
        }
    }
}

static void usage(FILE *f);

static void command_help(FILE *f, const struct command *c)
{
    fprintf(f, "usage: kvssd %s%s%s [options]\n%s\n", c->name, c->args[0] ? " " : "", c->args,
            c->summary);
    if (c->options[0]) {
        fprintf(f, "options:\n");
        print_options(f, c->options);
    }
    fprintf(f, "common options:\n");
    print_options(f, COMMON_OPTIONS);
}

/* The command being run, the "operation" of a failure's JSON ("kvssd" before one is known). */
static const char *cli_operation = "kvssd";

static json_object *json_result(const char *operation);

/*
 * A failure that is not the device's: "kvssd: SENTENCE" on stderr (say())
 * and, with -o json, the failure object on stdout (json_failure(); status
 * 0: no NVMe status), so that every failure prints JSON, once.
 */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static bool json_emitted; /* one JSON object a run: a failure after a result prints none */

static void json_failure(const char *msg)
{
    if (opt.json && !json_emitted) {
        json_object *o = json_result(cli_operation);
        json_object_object_add(o, "ok", json_object_new_boolean(false));
        json_object_object_add(o, "error", json_object_new_string(msg));
        json_object_object_add(o, "status", json_object_new_int(0));
        json_object_object_add(o, "status_name", json_object_new_string(""));
        puts(kvssd_cli_json_string(o));
        json_object_put(o);
        json_emitted = true;
    }
}

static void say(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "kvssd: %s\n", msg);
    json_failure(msg);
}

/*
 * A usage error (<bench/usage.h>): "kvssd: SENTENCE" and "(run HELP for
 * usage)" on stderr, HELP "kvssd --help" when NULL; the failure object
 * with -o json; exit 2.
 */
static void __attribute__((noreturn)) usage_fail(const char *help, const char *msg)
{
    tool_usage_error("kvssd", help, "%s", msg);
    json_failure(msg);
    exit(EXIT_USAGE);
}

static void __attribute__((format(printf, 1, 2), noreturn)) die_usage(const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    usage_fail(NULL, msg);
}

static int hexval(int c)
{
    if (isdigit(c)) {
        return c - '0';
    }
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode a hex string into a malloc'd buffer; exits with a sentence on bad input. */
static uint8_t *from_hex(const char *s, uint32_t *len, const char *what)
{
    size_t n = strlen(s);
    if (n % 2) {
        die_usage("%s: a hex string needs an even number of digits", what);
    }
    uint8_t *b = malloc(n / 2 + 1);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            die_usage("%s: not a hex string", what);
        }
        b[i] = (uint8_t)(hi << 4 | lo);
    }
    *len = (uint32_t)(n / 2);
    return b;
}

static uint8_t *key_arg(const char *s, uint32_t *len, const char *what)
{
    if (opt.key_hex) {
        return from_hex(s, len, what);
    }
    *len = (uint32_t)strlen(s);
    return (uint8_t *)strdup(s);
}

static void print_hex(FILE *f, const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "%02x", p[i]);
    }
}

static bool printable(const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (p[i] < 0x20 || p[i] >= 0x7f) {
            return false;
        }
    }
    return true;
}

/* A key for humans: as text when it is printable UTF-8 (not "0x..."), else 0x-hex; -x: hex. */
static void print_key(FILE *f, const uint8_t *k, uint32_t n)
{
    if (!opt.key_hex && kvssd_cli_key_is_text(k, n)) {
        fwrite(k, 1, n, f);
    } else {
        fputs("0x", f);
        print_hex(f, k, n);
    }
}

/* Print one JSON object as a line and free it. */
static void emit_json(json_object *o)
{
    json_emitted = true;
    puts(kvssd_cli_json_string(o));
    json_object_put(o);
}

static json_object *json_result(const char *operation)
{
    json_object *o = kvssd_cli_json_new();
    json_object_object_add(o, "ok", json_object_new_boolean(true));
    json_object_object_add(o, "operation", json_object_new_string(operation));
    return o;
}

/* The error sentence for a failed operation; returns the exit status. */
static int report(const char *what, int rc, const struct kvssd_result *r)
{
    if (opt.json) {
        json_object *o = kvssd_cli_json_new();
        json_object_object_add(o, "ok", json_object_new_boolean(false));
        json_object_object_add(o, "operation", json_object_new_string(what));
        json_object_object_add(o, "error", json_object_new_string(kvssd_strerror(rc)));
        json_object_object_add(o, "status", json_object_new_int(r ? r->status : 0));
        json_object_object_add(
            o, "status_name",
            json_object_new_string(r && r->status ? kvssd_status_str(r->status) : ""));
        emit_json(o);
    }
    if (rc == -KVSSD_ERR_SYSTEM && r && r->sys_errno) {
        fprintf(stderr, "kvssd: %s failed: %s (%s)\n", what, kvssd_strerror(rc),
                strerror(r->sys_errno));
    } else if (r && r->status) {
        fprintf(stderr, "kvssd: %s failed: %s (NVMe status %s, SCT %xh SC %02xh)\n", what,
                kvssd_strerror(rc), kvssd_status_str(r->status), r->status >> 8, r->status & 0xff);
    } else {
        fprintf(stderr, "kvssd: %s failed: %s\n", what, kvssd_strerror(rc));
    }
    return EXIT_REFUSED;
}

/* "cannot open PATH: ..." with what to do when it is a permission problem. */
static void say_open_error(const char *prefix, const char *path, int err)
{
    char msg[600];
    struct stat st;

    if ((err == EACCES || err == EPERM) && stat(path, &st) == 0) {
        struct passwd *pw = getpwuid(st.st_uid);
        struct group *gr = getgrgid(st.st_gid);
        kvssd_cli_access_hint(msg, sizeof(msg), path, err, st.st_mode, st.st_uid, st.st_gid,
                              pw ? pw->pw_name : NULL, gr ? gr->gr_name : NULL);
    } else if (err == EACCES || err == EPERM) {
        snprintf(msg, sizeof(msg), "cannot open %s: %s; run as root", path, strerror(err));
    } else {
        kvssd_cli_access_hint(msg, sizeof(msg), path, err, 0, 0, 0, NULL, NULL);
    }
    say("%s%s", prefix, msg);
}

/*
 * Discovery skips namespaces it cannot open: when it found none, name the
 * first generic char device that refused us, and what to do about it.
 */
static bool say_denied_devices(void)
{
    glob_t g;
    bool said = false;

    if (glob("/dev/ng*n*", 0, NULL, &g) != 0) {
        return false;
    }
    for (size_t i = 0; i < g.gl_pathc && i < 1024 && !said; i++) {
        int fd = open(g.gl_pathv[i], O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            close(fd);
        } else if (errno == EACCES || errno == EPERM) {
            say_open_error("no KV namespace found: ", g.gl_pathv[i], errno);
            said = true;
        }
    }
    globfree(&g);
    return said;
}

/* kvssd_open() refused the transfer config file: reload it for its sentence. */
static void say_config_error(void)
{
    const char *env = getenv(KVSSD_CONFIG_ENV);
    bool from_env = env && *env;
    const char *path = from_env ? env : KVSSD_DEFAULT_CONFIG_PATH;
    struct kvssd_xfer_config cfg;
    char detail[400], msg[700];

    kvssd_xfer_config_default(&cfg);
    if (kvssd_xfer_config_load(path, &cfg, detail, sizeof(detail)) == 0) {
        snprintf(detail, sizeof(detail), "transfer config file %s: %s", path,
                 kvssd_strerror(-KVSSD_ERR_CONFIG));
    }
    kvssd_cli_config_hint(msg, sizeof(msg), path, from_env, detail);
    say("%s", msg);
}

/*
 * The open device, closed at exit whatever the path (the pci transport
 * rebinds the kernel driver there); the commands' buffers are g_autofree.
 */
static struct kvssd_dev *cli_dev;
static int cli_argc;
static char **cli_argv;

static void close_device(void)
{
    kvssd_close(cli_dev);
    cli_dev = NULL;
}

static struct kvssd_dev *open_device(void)
{
    const char *path = opt.device ? opt.device : getenv("KVSSD_DEVICE");
    char found[8][64];
    struct kvssd_dev *dev;

    if (!path) {
        int n = kvssd_discover(found, 8);
        if (n <= 0) {
            if (!say_denied_devices()) {
                say("no KV namespace found; name one after the command "
                    "(kvssd info /dev/ngXnY) or with -d");
            }
            exit(EXIT_REFUSED);
        }
        path = found[0];
    }
    errno = 0;
    int rc = kvssd_open(path, &dev);
    if (rc) {
        if (rc == -KVSSD_ERR_CONFIG) {
            say_config_error();
        } else if (rc == -KVSSD_ERR_SYSTEM) {
            say_open_error("", path, errno);
        } else {
            say("cannot open %s: %s", path, kvssd_strerror(rc));
        }
        exit(EXIT_REFUSED);
    }
    cli_dev = dev;
    struct kvssd_config_log cfg_log;
    kvssd_cli_json_provenance(provenance_json(
        "kvssd", cli_argc, cli_argv,
        kvssd_get_config(dev, &cfg_log, NULL) == 0 ? provenance_device_json(&cfg_log) : NULL));
    if (opt.config) {
        struct kvssd_xfer_config cfg = *kvssd_get_xfer_config(dev);
        char err[400];
        if (kvssd_xfer_config_load(opt.config, &cfg, err, sizeof(err))) {
            say("%s (given with --config)", err);
            exit(EXIT_USAGE);
        }
        kvssd_set_xfer_config(dev, &cfg);
    }
    if (opt.mode) {
        kvssd_set_xfer_mode(dev, (enum kvssd_xfer_mode)kvssd_xfer_mode_parse(opt.mode));
    }
    cli_dev = dev;
    return dev;
}

/* Key length check with the device's own limit in the sentence. */
static void check_key(struct kvssd_dev *dev, uint32_t len)
{
    uint32_t max = kvssd_dev_info(dev)->max_key_bytes;
    if (!max || max > KVSSD_KEY_MAX) {
        max = KVSSD_KEY_MAX;
    }
    if (len < 1 || len > max) {
        die_usage("key is %u bytes; this device accepts 1-%u", len, max);
    }
}

static uint8_t *read_all(FILE *f, uint32_t *len, const char *name)
{
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            b = realloc(b, cap);
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            break;
        }
        if (n > KVSSD_VALUE_MAX) {
            break;
        }
    }
    if (ferror(f)) {
        say("cannot read %s: %s", name, strerror(errno));
        exit(EXIT_USAGE);
    }
    *len = (uint32_t)(n > KVSSD_VALUE_MAX ? KVSSD_VALUE_MAX + 1 : n);
    return b;
}

static void no_args(const char *cmd, int argc, char **argv)
{
    if (argc > 0) {
        g_autofree char *msg = g_strdup_printf(
            "%s takes no argument besides the device; \"%s\" is one too many", cmd, argv[0]);
        g_autofree char *help = g_strdup_printf("kvssd help %s", cmd);
        usage_fail(help, msg);
    }
}

static int cmd_info(int argc, char **argv)
{
    no_args("info", argc, argv);
    if (!opt.device && !getenv("KVSSD_DEVICE")) {
        char found[32][64];
        int n = kvssd_discover(found, 32);
        if (n < 0) {
            return report("discover", n, NULL);
        }
        if (opt.json) {
            json_object *o = kvssd_cli_json_new(), *a = json_object_new_array();
            for (int i = 0; i < n && i < 32; i++) {
                json_object_array_add(a, kvssd_cli_json_text(found[i]));
            }
            json_object_object_add(o, "namespaces", a);
            emit_json(o);
        } else {
            for (int i = 0; i < n && i < 32; i++) {
                printf("%s\n", found[i]);
            }
        }
        if (n == 0 && !say_denied_devices()) {
            say("no KV namespace found; name one after the command (kvssd info /dev/ngXnY) or "
                "with -d");
        }
        return n ? 0 : EXIT_REFUSED;
    }
    struct kvssd_dev *dev = open_device();
    const struct kvssd_dev_info *i = kvssd_dev_info(dev);
    const struct kvssd_xfer_config *x = kvssd_get_xfer_config(dev);
    if (opt.json) {
        json_object *o = kvssd_cli_json_new(), *t = json_object_new_object();
        json_object_object_add(o, "path", kvssd_cli_json_text(i->path));
        json_object_object_add(o, "controller", kvssd_cli_json_text(i->ctrl_path));
        json_object_object_add(o, "nsid", json_object_new_int64(i->nsid));
        json_object_object_add(o, "model", kvssd_cli_json_text(i->model));
        json_object_object_add(o, "serial", kvssd_cli_json_text(i->serial));
        json_object_object_add(o, "firmware", kvssd_cli_json_text(i->firmware));
        json_object_object_add(o, "nsze_bytes", json_object_new_uint64(i->nsze_bytes));
        json_object_object_add(o, "nuse_bytes", json_object_new_uint64(i->nuse_bytes));
        json_object_object_add(o, "max_key_bytes", json_object_new_int64(i->max_key_bytes));
        json_object_object_add(o, "max_value_bytes", json_object_new_int64(i->max_value_bytes));
        json_object_object_add(o, "max_keys", json_object_new_int64(i->max_keys));
        json_object_object_add(o, "optimal_value_granularity_bytes",
                               json_object_new_int64(i->optimal_value_granularity_bytes));
        json_object_object_add(
            t, "mode", json_object_new_string(kvssd_xfer_mode_name(kvssd_get_xfer_mode(dev))));
        json_object_object_add(t, "threshold1_bytes", json_object_new_int64(x->threshold1_bytes));
        json_object_object_add(t, "threshold2_bytes", json_object_new_int64(x->threshold2_bytes));
        json_object_object_add(t, "alpha", json_object_new_double(x->alpha));
        json_object_object_add(t, "beta", json_object_new_double(x->beta));
        json_object_object_add(o, "transfer", t);
        emit_json(o);
    } else {
        printf("device            %s (controller %s, nsid %u)\n", i->path, i->ctrl_path, i->nsid);
        printf("model             %s\nserial            %s\nfirmware          %s\n", i->model,
               i->serial, i->firmware);
        printf("size              %llu bytes (%llu used)\n", (unsigned long long)i->nsze_bytes,
               (unsigned long long)i->nuse_bytes);
        printf("max key           %u bytes\nmax value         %u bytes\n", i->max_key_bytes,
               i->max_value_bytes);
        printf("max keys          %u%s\n", i->max_keys, i->max_keys ? "" : " (not reported)");
        printf("value granularity %u bytes\n", i->optimal_value_granularity_bytes);
        printf("transfer          %s (threshold1 %u B x alpha %g, threshold2 %u B x beta %g)\n",
               kvssd_xfer_mode_name(kvssd_get_xfer_mode(dev)), x->threshold1_bytes, x->alpha,
               x->threshold2_bytes, x->beta);
    }
    return 0;
}

static int cmd_put(int argc, char **argv)
{
    struct kvssd_result r;
    uint32_t klen, vlen;
    g_autofree uint8_t *value = NULL;

    if (argc < 1 || argc > 2) {
        die_usage("%s", "put needs KEY and optionally VALUE");
    }
    if (opt.if_exists && opt.if_absent) {
        die_usage("%s", "--if-exists and --if-absent cannot be combined");
    }
    struct kvssd_dev *dev = open_device();
    g_autofree uint8_t *key = key_arg(argv[0], &klen, "KEY");
    check_key(dev, klen);
    if (argc == 2) {
        if (opt.file) {
            die_usage("%s", "give the value either as an argument or with --file, not both");
        }
        if (opt.value_hex) {
            value = from_hex(argv[1], &vlen, "VALUE");
        } else {
            vlen = (uint32_t)strlen(argv[1]);
            value = (uint8_t *)strdup(argv[1]);
        }
    } else if (opt.file && strcmp(opt.file, "-")) {
        FILE *f = fopen(opt.file, "rb");
        if (!f) {
            say("cannot open %s: %s", opt.file, strerror(errno));
            return EXIT_USAGE;
        }
        value = read_all(f, &vlen, opt.file);
        fclose(f);
    } else {
        value = read_all(stdin, &vlen, "stdin");
    }
    uint32_t vmax = kvssd_dev_info(dev)->max_value_bytes;
    if (!vmax || vmax > KVSSD_VALUE_MAX) {
        vmax = KVSSD_VALUE_MAX;
    }
    if (vlen > vmax) {
        die_usage("value is %s%u bytes; this device accepts 0-%u",
                  vlen > KVSSD_VALUE_MAX ? "more than " : "",
                  vlen > KVSSD_VALUE_MAX ? KVSSD_VALUE_MAX : vlen, vmax);
    }
    char why[256];
    if (kvssd_store_check(dev, vlen, why, sizeof(why))) {
        say("%s", why); /* past the controller's transfer limit (MDTS): nothing was sent */
        return EXIT_USAGE;
    }
    uint32_t options = opt.if_exists   ? KVSSD_STORE_OPT_ONLY_IF_EXISTS
                       : opt.if_absent ? KVSSD_STORE_OPT_ONLY_IF_ABSENT
                                       : 0;
    enum kvssd_xfer_mode method = kvssd_xfer_choose(kvssd_get_xfer_mode(dev),
                                                    kvssd_get_xfer_config(dev), vlen);
    int rc = kvssd_store(dev, key, klen, value, vlen, options, &r);
    if (rc) {
        return report("put", rc, &r);
    }
    if (opt.json) {
        json_object *o = json_result("put");
        json_object_object_add(o, "key_bytes", json_object_new_int64(klen));
        json_object_object_add(o, "value_bytes", json_object_new_int64(vlen));
        json_object_object_add(o, "method", json_object_new_string(kvssd_xfer_mode_name(method)));
        json_object_object_add(o, "commands", json_object_new_int64(r.commands));
        emit_json(o);
    } else {
        printf("stored %u bytes (%s, %u command%s)\n", vlen, kvssd_xfer_mode_name(method),
               r.commands, r.commands == 1 ? "" : "s");
    }
    return 0;
}

static int cmd_get(int argc, char **argv)
{
    struct kvssd_result r;
    uint32_t klen, size = 0;

    if (argc != 1) {
        die_usage("%s", "get needs exactly one KEY");
    }
    struct kvssd_dev *dev = open_device();
    g_autofree uint8_t *key = key_arg(argv[0], &klen, "KEY");
    check_key(dev, klen);
    uint32_t buf_len = KVSSD_VALUE_MAX;
    if (opt.size_only) {
        buf_len = 0;
    } else if (opt.max_bytes >= 0) {
        buf_len = (uint32_t)opt.max_bytes;
    }
    g_autofree uint8_t *buf = buf_len ? g_malloc(buf_len) : NULL;
    int rc = kvssd_retrieve(dev, key, klen, buf, buf_len, &size, &r);
    if (rc) {
        return report("get", rc, &r);
    }
    uint32_t got = size < buf_len ? size : buf_len;
    if (opt.out) {
        FILE *f = fopen(opt.out, "wb");
        if (!f || fwrite(buf, 1, got, f) != got || fclose(f)) {
            say("cannot write %s: %s", opt.out, strerror(errno));
            return EXIT_USAGE;
        }
    }
    if (opt.json) {
        json_object *o = json_result("get");
        json_object_object_add(o, "value_bytes", json_object_new_int64(size));
        json_object_object_add(o, "returned_bytes", json_object_new_int64(opt.out ? 0 : got));
        if (!opt.out && !opt.size_only) {
            json_object_object_add(o, "value", kvssd_cli_json_bytes(buf, got, opt.value_hex));
        }
        emit_json(o);
    } else if (opt.size_only) {
        printf("%u\n", size);
    } else if (!opt.out) {
        if (opt.value_hex) {
            print_hex(stdout, buf, got);
            printf("\n");
        } else {
            fwrite(buf, 1, got, stdout);
        }
    }
    return 0;
}

static int cmd_del_exist(int argc, char **argv, bool del)
{
    struct kvssd_result r;
    uint32_t klen;
    const char *what = del ? "del" : "exist";

    if (argc != 1) {
        die_usage("%s needs exactly one KEY", what);
    }
    struct kvssd_dev *dev = open_device();
    g_autofree uint8_t *key = key_arg(argv[0], &klen, "KEY");
    check_key(dev, klen);
    /*
     * A device with Error on Deletion of Non-Existing Key off (the KV
     * Configuration feature's default) deletes a missing key successfully:
     * ask Exist first so that del can say the key was not there.
     */
    int rc = kvssd_exist(dev, key, klen, &r);
    if (del && rc == -KVSSD_ERR_KEY_NOT_FOUND) {
        return report("del", rc, &r);
    }
    if (del && rc == 0) {
        rc = kvssd_delete(dev, key, klen, &r);
    }
    if (!del && rc == -KVSSD_ERR_KEY_NOT_FOUND) {
        if (opt.json) {
            json_object *o = json_result("exist");
            json_object_object_add(o, "exists", json_object_new_boolean(false));
            emit_json(o);
        } else {
            printf("does not exist\n");
        }
        return EXIT_REFUSED;
    }
    if (rc) {
        return report(what, rc, &r);
    }
    if (opt.json) {
        json_object *o = json_result(what);
        if (!del) {
            json_object_object_add(o, "exists", json_object_new_boolean(true));
        }
        emit_json(o);
    } else {
        printf("%s\n", del ? "deleted" : "exists");
    }
    return 0;
}

static int cmd_del(int argc, char **argv)
{
    return cmd_del_exist(argc, argv, true);
}

static int cmd_exist(int argc, char **argv)
{
    return cmd_del_exist(argc, argv, false);
}

/* One key of list output: a line, or an element of the JSON array @keys. */
static void emit_key(json_object *keys, const uint8_t *k, uint32_t kl)
{
    if (keys) {
        json_object_array_add(keys, kvssd_cli_json_bytes(k, kl, opt.key_hex));
    } else {
        print_key(stdout, k, kl);
        printf("\n");
    }
}

static int cmd_list(int argc, char **argv)
{
    struct kvssd_result r;
    g_autofree uint8_t *start = NULL;
    g_autofree uint8_t *buf = g_malloc(LIST_BUF_BYTES);
    uint32_t start_len = 0, printed = 0;
    json_object *keys = opt.json ? json_object_new_array() : NULL;

    no_args("list", argc, argv);
    struct kvssd_dev *dev = open_device();
    if (opt.start) {
        start = key_arg(opt.start, &start_len, "--start");
        check_key(dev, start_len);
    }
    /*
     * "list --start KEY" prints the keys from KEY on. The device's List
     * returns keys after the start key (sorted, as many as fit the buffer),
     * so an Exist decides whether KEY itself comes first; a device that
     * includes the start key is handled too (the duplicate is skipped). To
     * continue, list again from the last key returned.
     */
    g_autofree uint8_t *first = NULL;
    uint32_t first_len = 0;
    if (start && kvssd_exist(dev, start, start_len, &r) == 0) {
        first = malloc(start_len);
        memcpy(first, start, start_len);
        first_len = start_len;
        if (opt.max_keys != 0) {
            emit_key(keys, first, first_len);
            printed++;
        }
    }
    for (;;) {
        int n = kvssd_list(dev, start, start_len, buf, LIST_BUF_BYTES, &r);
        if (n < 0) {
            json_object_put(keys);
            return report("list", n, &r);
        }
        uint32_t off = 0, kl, in_batch = 0, last_len = 0;
        const uint8_t *k;
        uint8_t last[KVSSD_KEY_MAX];
        bool full = false;
        while (in_batch < (uint32_t)n &&
               kvssd_list_parse(buf, LIST_BUF_BYTES, &off, &k, &kl) == 1) {
            in_batch++;
            memcpy(last, k, kl);
            last_len = kl;
            if (first && kl == first_len && !memcmp(k, first, kl)) {
                continue; /* already printed */
            }
            if (opt.max_keys >= 0 && printed >= (uint32_t)opt.max_keys) {
                full = true;
                break;
            }
            emit_key(keys, k, kl);
            printed++;
        }
        if (full || n == 0 || last_len == 0) {
            break;
        }
        free(start);
        start = malloc(last_len);
        memcpy(start, last, last_len);
        start_len = last_len;
    }
    if (keys) {
        json_object *o = kvssd_cli_json_new();
        json_object_object_add(o, "keys", keys);
        json_object_object_add(o, "count", json_object_new_int64(printed));
        emit_json(o);
    }
    return 0;
}

static int cmd_iter(int argc, char **argv)
{
    struct kvssd_iter it;
    g_autofree uint8_t *prefix = NULL;
    uint32_t plen = 0, count = 0;
    json_object *entries = opt.json ? json_object_new_array() : NULL;

    no_args("iter", argc, argv);
    struct kvssd_dev *dev = open_device();
    if (opt.prefix) {
        prefix = key_arg(opt.prefix, &plen, "--prefix");
    }
    int rc = kvssd_iter_open(dev, &it, prefix, plen, opt.values, LIST_BUF_BYTES);
    if (rc) {
        json_object_put(entries);
        return report("iter", rc, NULL);
    }
    const uint8_t *k, *v;
    uint32_t kl, vl;
    while ((rc = kvssd_iter_next(&it, &k, &kl, &v, &vl)) == 1) {
        if (opt.max_keys >= 0 && count >= (uint32_t)opt.max_keys) {
            break;
        }
        if (entries) {
            json_object *e = json_object_new_object();
            json_object_object_add(e, "key", kvssd_cli_json_bytes(k, kl, opt.key_hex));
            if (opt.values) {
                json_object_object_add(e, "value_bytes", json_object_new_int64(vl));
                json_object_object_add(e, "value", kvssd_cli_json_bytes(v, vl, opt.value_hex));
            }
            json_object_array_add(entries, e);
        } else {
            print_key(stdout, k, kl);
            if (opt.values) {
                printf("\t");
                if (!opt.value_hex && printable(v, vl)) {
                    fwrite(v, 1, vl, stdout);
                } else {
                    printf("0x");
                    print_hex(stdout, v, vl);
                }
            }
            printf("\n");
        }
        count++;
    }
    int crc = kvssd_iter_close(&it);
    if (rc < 0) {
        json_object_put(entries);
        return report("iter", rc, NULL);
    }
    if (crc) {
        json_object_put(entries);
        return report("iter close", crc, NULL);
    }
    if (entries) {
        json_object *o = kvssd_cli_json_new();
        json_object_object_add(o, "entries", entries);
        json_object_object_add(o, "count", json_object_new_int64(count));
        emit_json(o);
    }
    return 0;
}

static int cmd_stats(int argc, char **argv)
{
    static struct kvssd_stats_log log;
    struct kvssd_result r;
    size_t n;

    no_args("stats", argc, argv);
    struct kvssd_dev *dev = open_device();
    int rc = kvssd_get_stats(dev, &log, &r);
    if (rc) {
        return report("stats", rc, &r);
    }
    const struct kvssd_stats_field *f = kvssd_stats_fields(&n);
    if (opt.json) {
        /* "version" is the log page's own layout version, not the schema's */
        json_object *o = kvssd_cli_json_new();
        json_object_object_add(o, "version", json_object_new_int64(log.version));
        json_object_object_add(o, "dma_unit_bytes", json_object_new_int64(log.dma_unit_bytes));
        for (size_t i = 0; i < n; i++) {
            json_object_object_add(o, f[i].name,
                                   json_object_new_uint64(kvssd_stats_get(&log, &f[i])));
        }
        emit_json(o);
    } else {
        printf("%-28s %u\n%-28s %u\n", "version", log.version, "dma_unit_bytes",
               log.dma_unit_bytes);
        for (size_t i = 0; i < n; i++) {
            printf("%-28s %llu\n", f[i].name, (unsigned long long)kvssd_stats_get(&log, &f[i]));
        }
        printf("%-28s %.3f\n%-28s %.3f\n", "waf", log.waf_milli / 1000.0, "space_amp",
               log.space_amp_milli / 1000.0);
    }
    return 0;
}

static int cmd_simple(const char *what, int argc, char **argv)
{
    struct kvssd_result r;
    int rc;

    no_args(what, argc, argv);
    struct kvssd_dev *dev = open_device();
    if (!strcmp(what, "format")) {
        if (!opt.yes) {
            die_usage("format erases every key of %s; add --yes to do it",
                      kvssd_dev_info(dev)->path);
        }
        rc = kvssd_format(dev, &r);
    } else if (!strcmp(what, "flush")) {
        rc = kvssd_flush(dev, &r);
    } else {
        rc = kvssd_reset_stats(dev, &r);
    }
    if (rc) {
        return report(what, rc, &r);
    }
    if (opt.json) {
        emit_json(json_result(what));
    } else {
        printf("%s\n", !strcmp(what, "format")  ? "formatted"
                       : !strcmp(what, "flush") ? "flushed"
                                                : "statistics reset");
    }
    return 0;
}

static int cmd_reset_stats(int argc, char **argv)
{
    return cmd_simple("reset-stats", argc, argv);
}

static int cmd_flush(int argc, char **argv)
{
    return cmd_simple("flush", argc, argv);
}

static int cmd_format(int argc, char **argv)
{
    return cmd_simple("format", argc, argv);
}

static int cmd_help(int argc, char **argv)
{
    if (argc == 0) {
        usage(stdout);
        return 0;
    }
    const struct command *c = find_command(argv[0]);
    if (!c || argc > 1) {
        die_usage("help takes one command name; \"%s\" is not one", argv[argc > 1 ? 1 : 0]);
    }
    command_help(stdout, c);
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    no_args("version", argc, argv);
    kvssd_print_version("kvssd");
    return 0;
}

static const struct command commands[] = {
    {"info", "[DEVICE]",
     "list the KV namespaces found or, given a device, its Identify data and transfer settings", "",
     cmd_info},
    {"put", "[DEVICE] KEY [VALUE]",
     "store VALUE (or --file F, or stdin when VALUE is absent); prints the method and commands",
     "value-hex file if-exists if-absent", cmd_put},
    {"get", "[DEVICE] KEY", "print the value (raw bytes, or --output F to write a file)",
     "value-hex output size-only max-bytes", cmd_get},
    {"del", "[DEVICE] KEY", "delete a key (exit 1 if it does not exist)", "", cmd_del},
    {"exist", "[DEVICE] KEY", "exit 0 if the key exists, 1 if not", "", cmd_exist},
    {"list", "[DEVICE]", "list keys in order (from --start KEY on)", "start max-keys", cmd_list},
    {"iter", "[DEVICE]", "iterate keys (and --values) matching --prefix P",
     "prefix values value-hex max-keys", cmd_iter},
    {"stats", "[DEVICE]", "print the device statistics log page", "", cmd_stats},
    {"reset-stats", "[DEVICE]", "zero the device statistics", "", cmd_reset_stats},
    {"flush", "[DEVICE]", "make every completed Store and Delete durable (KV Flush)", "",
     cmd_flush},
    {"format", "[DEVICE]", "erase every key (needs --yes)", "yes", cmd_format},
    {"help", "[COMMAND]", "the usage, or COMMAND's options", "", cmd_help},
    {"version", "", "print the version (as --version)", "", cmd_version},
};

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (!strcmp(commands[i].name, name)) {
            return &commands[i];
        }
    }
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kvssd <command> [DEVICE] [args] [options]\n"
               "       kvssd [options] <command> [args]   (device from -d or $KVSSD_DEVICE)\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        char head[64];
        snprintf(head, sizeof(head), "%s %s", commands[i].name, commands[i].args);
        fprintf(f, "  %-27s %s\n", head, commands[i].summary);
    }
    fprintf(f, "options:\n");
    for (size_t i = 0; i < sizeof(option_help) / sizeof(option_help[0]); i++) {
        fputs(option_help[i].text, f);
    }
    fprintf(f, "  DEVICE: an argument after the command that starts with /dev/, pci: or sim:.\n"
               "  kvssd help COMMAND (or kvssd COMMAND --help): that command's options.\n"
               "See kvssd(1).\n");
}

/* A count or, for --max-bytes, a byte count, as every tool reads one (<bench/units.h>). */
static long parse_count(const char *s, const char *flag, long max)
{
    uint64_t v;
    if (!units_u64(s, strcmp(flag, "--max-bytes") ? UNITS_COUNT : UNITS_BYTES, &v) ||
        v > (uint64_t)max) {
        die_usage("%s is '%s'; it must be from 0 to %ld", flag, s, max);
    }
    return (long)v;
}

static void set_output_format(const char *fmt, const char *flag)
{
    enum kvssd_cli_o_arg a = kvssd_cli_classify_o(fmt);
    if (a == KVSSD_CLI_O_UNKNOWN) {
        die_usage("%s is '%s'; it must be json or normal (a file goes with --output FILE)", flag,
                  fmt);
    }
    opt.json = a == KVSSD_CLI_O_JSON;
}

/*
 * kvssd --list-completions (not in --help): what host/completions/kvssd.bash
 * offers, from the tables above. Lines of words: "options OPT..." (every
 * spelling), "argument OPT..." (those taking a value), "command NAME
 * OPT..." (a command and the options it reads), "first NAME ARG" (its
 * first argument), "values OPT VALUE...".
 */
static void print_spellings(const struct option *longopts, const char *name, bool with_arg)
{
    for (const struct option *o = longopts; o->name; o++) {
        if (strcmp(o->name, name) || (with_arg && o->has_arg == no_argument)) {
            continue;
        }
        printf(" --%s", o->name);
        if (o->val < 256 && isalpha(o->val)) {
            printf(" -%c", o->val);
        } else if (!strcmp(o->name, "output-format")) {
            printf(" -o"); /* getopt's -o alone: it also takes the old output file */
        }
    }
}

static int list_completions(const struct option *longopts)
{
    printf("options");
    for (const struct option *o = longopts; o->name; o++) {
        print_spellings(longopts, o->name, false);
    }
    printf("\nargument");
    for (const struct option *o = longopts; o->name; o++) {
        print_spellings(longopts, o->name, true);
    }
    printf("\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        g_autofree char *names = g_strconcat(commands[i].options, " " COMMON_OPTIONS, NULL);
        g_auto(GStrv) v = g_strsplit(names, " ", -1);
        /* its first argument, DEVICE or COMMAND (the completion offers those) */
        const char *first = commands[i].args[0] == '[' ? commands[i].args + 1 : commands[i].args;
        if (first[0]) {
            printf("first %s %.*s\n", commands[i].name, (int)strcspn(first, "] "), first);
        }
        printf("command %s", commands[i].name);
        for (size_t j = 0; v[j]; j++) {
            if (v[j][0]) {
                print_spellings(longopts, v[j], false);
            }
        }
        printf("\n");
    }
    for (const char *const *spelling = (const char *const[]){"--mode", "-m", NULL}; *spelling;
         spelling++) {
        printf("values %s", *spelling);
        for (int m = 0; strcmp(kvssd_xfer_mode_name(m), "unknown"); m++) {
            printf(" %s", kvssd_xfer_mode_name(m));
        }
        printf("\n");
    }
    /* set_output_format()'s words */
    printf("values --output-format normal json\nvalues -o normal json\n");
    return 0;
}

int main(int argc, char **argv)
{
    cli_argc = argc;
    cli_argv = g_strdupv(argv); /* before getopt permutes it */
    kvssd_cli_json_provenance(provenance_json("kvssd", cli_argc, cli_argv, NULL));
    /* JSON asked for anywhere: a failure before getopt_long reaches it prints JSON too */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        bool next_json = i + 1 < argc && !strcmp(argv[i + 1], "json");
        opt.json |= !strcmp(argv[i], "-j") || !strcmp(argv[i], "--json") ||
                    !strcmp(argv[i], "-ojson") || !strcmp(argv[i], "--output-format=json") ||
                    ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output-format")) && next_json);
    }
    enum {
        O_VALUE_HEX = 256,
        O_IF_EXISTS,
        O_IF_ABSENT,
        O_SIZE_ONLY,
        O_MAX_BYTES,
        O_START,
        O_MAX_KEYS,
        O_PREFIX,
        O_VALUES,
        O_YES,
        O_VERSION,
        O_OUTPUT,
        O_OUTPUT_FORMAT,
    };
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},
        {"key-hex", no_argument, NULL, 'x'},
        {"value-hex", no_argument, NULL, O_VALUE_HEX},
        {"file", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, O_OUTPUT},
        {"out", required_argument, NULL, O_OUTPUT},
        {"output-format", required_argument, NULL, O_OUTPUT_FORMAT},
        {"mode", required_argument, NULL, 'm'},
        {"config", required_argument, NULL, 'c'},
        {"if-exists", no_argument, NULL, O_IF_EXISTS},
        {"if-absent", no_argument, NULL, O_IF_ABSENT},
        {"size-only", no_argument, NULL, O_SIZE_ONLY},
        {"max-bytes", required_argument, NULL, O_MAX_BYTES},
        {"start", required_argument, NULL, O_START},
        {"max-keys", required_argument, NULL, O_MAX_KEYS},
        {"prefix", required_argument, NULL, O_PREFIX},
        {"values", no_argument, NULL, O_VALUES},
        {"yes", no_argument, NULL, O_YES},
        {"version", no_argument, NULL, O_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    if (argc == 2 && !strcmp(argv[1], "--list-completions")) {
        return list_completions(longopts);
    }

    opterr = 0; /* the message below names the option */
    while ((c = getopt_long(argc, argv, "d:jxf:o:m:c:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            opt.device = optarg;
            break;
        case 'j':
            opt.json = true;
            break;
        case 'x':
            opt.key_hex = true;
            break;
        case O_VALUE_HEX:
            opt.value_hex = true;
            break;
        case 'f':
            opt.file = optarg;
            break;
        case 'o': /* nvme-cli's -o: the output format */
            set_output_format(optarg, "-o");
            break;
        case O_OUTPUT:
            opt.out = optarg;
            break;
        case O_OUTPUT_FORMAT:
            set_output_format(optarg, "--output-format");
            break;
        case 'm':
            if (kvssd_xfer_mode_parse(optarg) < 0) {
                die_usage("transfer mode is '%s'; it must be prp, inline, hybrid or adaptive",
                          optarg);
            }
            opt.mode = optarg;
            break;
        case 'c':
            opt.config = optarg;
            break;
        case O_IF_EXISTS:
            opt.if_exists = true;
            break;
        case O_IF_ABSENT:
            opt.if_absent = true;
            break;
        case O_SIZE_ONLY:
            opt.size_only = true;
            break;
        case O_MAX_BYTES:
            opt.max_bytes = parse_count(optarg, "--max-bytes", KVSSD_VALUE_MAX);
            break;
        case O_START:
            opt.start = optarg;
            break;
        case O_MAX_KEYS:
            opt.max_keys = parse_count(optarg, "--max-keys", 1L << 40);
            break;
        case O_PREFIX:
            opt.prefix = optarg;
            break;
        case O_VALUES:
            opt.values = true;
            break;
        case O_YES:
            opt.yes = true;
            break;
        case 'h':
            opt.help = true;
            break;
        case O_VERSION:
            kvssd_print_version("kvssd");
            return 0;
        default:
            die_usage("unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        if (opt.help) {
            usage(stdout);
            return 0;
        }
        usage(stderr); /* no command: the whole usage, as nvme-cli */
        json_failure("no command given; kvssd --help lists them");
        return EXIT_USAGE;
    }
    const struct command *cmd = find_command(argv[optind]);
    if (cmd) {
        cli_operation = cmd->name;
    }
    if (!cmd) {
        GString *msg = g_string_new(NULL);
        g_string_printf(msg, "unknown command \"%s\"; commands:", argv[optind]);
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
            g_string_append_printf(msg, " %s", commands[i].name);
        }
        usage_fail(NULL, msg->str);
    }
    if (opt.help) {
        command_help(stdout, cmd);
        return 0;
    }
    int n = argc - optind - 1;
    char **args = argv + optind + 1;
    /* nvme-cli's order: the device is the first argument after the command */
    if (!opt.device && n > 0 && kvssd_cli_is_device_arg(args[0]) && cmd->run != cmd_help) {
        opt.device = args[0];
        n--;
        args++;
    }
    atexit(close_device);
    int rc = cmd->run(n, args);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "kvssd: cannot write the output: %s\n", strerror(errno));
        return EXIT_REFUSED;
    }
    return rc;
}
