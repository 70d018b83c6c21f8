/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvssd - poke a KV namespace from the shell.
 *
 *   kvssd [options] info|put|get|del|exist|list|iter|stats|reset-stats|format [args]
 *
 * Human output by default, one JSON object with --json. Errors are
 * sentences on stderr; the exit status is 0 on success, 1 when the device
 * refused (or the key does not exist), 2 for a usage error.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kvssd/libkvssd.h>
#include <kvssd_version.h>

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
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
} opt = {.max_bytes = -1, .max_keys = -1};

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: kvssd [options] <command> [args]\n"
        "commands:\n"
        "  info                      list KV namespaces, or show the one given by -d\n"
        "  put KEY [VALUE]           store VALUE (or --file F, or stdin when VALUE is absent)\n"
        "  get KEY                   print the value (raw bytes; --out F to write a file)\n"
        "  del KEY                   delete a key (exit 1 if it does not exist)\n"
        "  exist KEY                 exit 0 if the key exists, 1 if not\n"
        "  list                      list keys in order (from --start KEY on)\n"
        "  iter                      iterate keys (and --values) matching --prefix P\n"
        "  stats                     print the device statistics log page\n"
        "  reset-stats               zero the device statistics\n"
        "  format                    erase every key (needs --yes)\n"
        "options:\n"
        "  -d, --device PATH         /dev/ngXnY, or pci:BDF / pci:nvmeN for the user-space\n"
        "                            PCI transport (default: $KVSSD_DEVICE, else the first found)\n"
        "  -j, --json                one JSON object on stdout\n"
        "  -x, --key-hex             KEY (and --start/--prefix) are hex strings\n"
        "      --value-hex           VALUE is a hex string; get prints hex\n"
        "  -f, --file F              put: read the value from file F ('-' = stdin)\n"
        "  -o, --out F               get: write the value to file F\n"
        "  -m, --mode M              transfer method: prp, inline, hybrid, adaptive\n"
        "  -c, --config F            transfer threshold file (as kvbench calibrate writes)\n"
        "      --if-exists           put: only replace an existing key\n"
        "      --if-absent           put: only create a new key\n"
        "      --size-only           get: print only the value's size\n"
        "      --max-bytes N         get: read only the first N bytes\n"
        "      --start KEY           list: begin at KEY (included when it exists)\n"
        "      --max-keys N          list/iter: stop after N keys\n"
        "      --prefix P            iter: key prefix\n"
        "      --values              iter: print values too\n"
        "      --yes                 format: really erase\n"
        "      --version             print the version (and the git describe of the build)\n"
        "  -h, --help                this text\n");
}

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "kvssd: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run kvssd --help for usage)\n");
    exit(EXIT_USAGE);
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

static void print_json_string(FILE *f, const uint8_t *p, uint32_t n)
{
    fputc('"', f);
    for (uint32_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20 || c >= 0x7f) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc((int)c, f);
        }
    }
    fputc('"', f);
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

/* A key for humans: as text when printable, else 0x-hex. */
static void print_key(FILE *f, const uint8_t *k, uint32_t n)
{
    if (!opt.key_hex && printable(k, n)) {
        fwrite(k, 1, n, f);
    } else {
        fputs("0x", f);
        print_hex(f, k, n);
    }
}

/* The error sentence for a failed operation; returns the exit status. */
static int report(const char *what, int rc, const struct kvssd_result *r)
{
    if (opt.json) {
        printf("{\"ok\":false,\"operation\":\"%s\",\"error\":\"%s\",\"status\":%u,"
               "\"status_name\":\"%s\"}\n",
               what, kvssd_strerror(rc), r ? r->status : 0,
               r && r->status ? kvssd_status_str(r->status) : "");
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

static struct kvssd_dev *open_device(void)
{
    const char *path = opt.device ? opt.device : getenv("KVSSD_DEVICE");
    char found[8][64];
    struct kvssd_dev *dev;

    if (!path) {
        int n = kvssd_discover(found, 8);
        if (n <= 0) {
            fprintf(stderr, "kvssd: no KV namespace found; give one with -d /dev/ngXnY\n");
            exit(EXIT_REFUSED);
        }
        path = found[0];
    }
    int rc = kvssd_open(path, &dev);
    if (rc) {
        if (rc == -KVSSD_ERR_SYSTEM) {
            fprintf(stderr, "kvssd: cannot open %s: %s\n", path, strerror(errno));
        } else {
            fprintf(stderr, "kvssd: cannot open %s: %s\n", path, kvssd_strerror(rc));
        }
        exit(EXIT_REFUSED);
    }
    if (opt.config) {
        struct kvssd_xfer_config cfg = *kvssd_get_xfer_config(dev);
        char err[300];
        if (kvssd_xfer_config_load(opt.config, &cfg, err, sizeof(err))) {
            fprintf(stderr, "kvssd: %s\n", err);
            exit(EXIT_USAGE);
        }
        kvssd_set_xfer_config(dev, &cfg);
    }
    if (opt.mode) {
        int m = kvssd_xfer_mode_parse(opt.mode);
        if (m < 0) {
            die_usage("transfer mode \"%s\" is unknown; use prp, inline, hybrid or adaptive",
                      opt.mode);
        }
        kvssd_set_xfer_mode(dev, (enum kvssd_xfer_mode)m);
    }
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
        fprintf(stderr, "kvssd: key is %u bytes; this device accepts 1-%u\n", len, max);
        exit(EXIT_USAGE);
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
        fprintf(stderr, "kvssd: cannot read %s: %s\n", name, strerror(errno));
        exit(EXIT_USAGE);
    }
    *len = (uint32_t)(n > KVSSD_VALUE_MAX ? KVSSD_VALUE_MAX + 1 : n);
    return b;
}

static int cmd_info(int argc, char **argv)
{
    if (!opt.device && !getenv("KVSSD_DEVICE")) {
        char found[32][64];
        int n = kvssd_discover(found, 32);
        if (n < 0) {
            return report("discover", n, NULL);
        }
        if (opt.json) {
            printf("{\"namespaces\":[");
            for (int i = 0; i < n && i < 32; i++) {
                printf("%s\"%s\"", i ? "," : "", found[i]);
            }
            printf("]}\n");
        } else if (n == 0) {
            printf("no KV namespace found\n");
        } else {
            for (int i = 0; i < n && i < 32; i++) {
                printf("%s\n", found[i]);
            }
        }
        return n ? 0 : EXIT_REFUSED;
    }
    struct kvssd_dev *dev = open_device();
    const struct kvssd_dev_info *i = kvssd_dev_info(dev);
    const struct kvssd_xfer_config *x = kvssd_get_xfer_config(dev);
    if (opt.json) {
        printf("{\"path\":\"%s\",\"controller\":\"%s\",\"nsid\":%u,\"model\":", i->path,
               i->ctrl_path, i->nsid);
        print_json_string(stdout, (const uint8_t *)i->model, (uint32_t)strlen(i->model));
        printf(",\"serial\":");
        print_json_string(stdout, (const uint8_t *)i->serial, (uint32_t)strlen(i->serial));
        printf(",\"firmware\":");
        print_json_string(stdout, (const uint8_t *)i->firmware, (uint32_t)strlen(i->firmware));
        printf(",\"nsze_bytes\":%llu,\"nuse_bytes\":%llu,\"max_key_bytes\":%u,"
               "\"max_value_bytes\":%u,\"max_keys\":%u,\"optimal_value_granularity_bytes\":%u,"
               "\"transfer\":{\"mode\":\"%s\",\"threshold1_bytes\":%u,\"threshold2_bytes\":%u,"
               "\"alpha\":%g,\"beta\":%g}}\n",
               (unsigned long long)i->nsze_bytes, (unsigned long long)i->nuse_bytes,
               i->max_key_bytes, i->max_value_bytes, i->max_keys,
               i->optimal_value_granularity_bytes, kvssd_xfer_mode_name(kvssd_get_xfer_mode(dev)),
               x->threshold1_bytes, x->threshold2_bytes, x->alpha, x->beta);
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
    kvssd_close(dev);
    return 0;
}

static int cmd_put(int argc, char **argv)
{
    struct kvssd_result r;
    uint32_t klen, vlen;
    uint8_t *value;

    if (argc < 1 || argc > 2) {
        die_usage("%s", "put needs KEY and optionally VALUE");
    }
    if (opt.if_exists && opt.if_absent) {
        die_usage("%s", "--if-exists and --if-absent cannot be combined");
    }
    struct kvssd_dev *dev = open_device();
    uint8_t *key = key_arg(argv[0], &klen, "KEY");
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
            fprintf(stderr, "kvssd: cannot open %s: %s\n", opt.file, strerror(errno));
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
        fprintf(stderr, "kvssd: value is %s%u bytes; this device accepts 0-%u\n",
                vlen > KVSSD_VALUE_MAX ? "more than " : "",
                vlen > KVSSD_VALUE_MAX ? KVSSD_VALUE_MAX : vlen, vmax);
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
        printf("{\"ok\":true,\"operation\":\"put\",\"key_bytes\":%u,\"value_bytes\":%u,"
               "\"method\":\"%s\",\"commands\":%u}\n",
               klen, vlen, kvssd_xfer_mode_name(method), r.commands);
    } else {
        printf("stored %u bytes (%s, %u command%s)\n", vlen, kvssd_xfer_mode_name(method),
               r.commands, r.commands == 1 ? "" : "s");
    }
    free(key);
    free(value);
    kvssd_close(dev);
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
    uint8_t *key = key_arg(argv[0], &klen, "KEY");
    check_key(dev, klen);
    uint32_t buf_len = KVSSD_VALUE_MAX;
    if (opt.size_only) {
        buf_len = 0;
    } else if (opt.max_bytes >= 0) {
        buf_len = (uint32_t)opt.max_bytes;
    }
    uint8_t *buf = buf_len ? malloc(buf_len) : NULL;
    int rc = kvssd_retrieve(dev, key, klen, buf, buf_len, &size, &r);
    if (rc) {
        return report("get", rc, &r);
    }
    uint32_t got = size < buf_len ? size : buf_len;
    if (opt.out) {
        FILE *f = fopen(opt.out, "wb");
        if (!f || fwrite(buf, 1, got, f) != got || fclose(f)) {
            fprintf(stderr, "kvssd: cannot write %s: %s\n", opt.out, strerror(errno));
            return EXIT_USAGE;
        }
    }
    if (opt.json) {
        printf("{\"ok\":true,\"operation\":\"get\",\"value_bytes\":%u,\"returned_bytes\":%u", size,
               opt.out ? 0 : got);
        if (!opt.out && !opt.size_only) {
            if (!opt.value_hex && printable(buf, got)) {
                printf(",\"value\":");
                print_json_string(stdout, buf, got);
            } else {
                printf(",\"value_hex\":\"");
                print_hex(stdout, buf, got);
                printf("\"");
            }
        }
        printf("}\n");
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
    free(buf);
    free(key);
    kvssd_close(dev);
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
    uint8_t *key = key_arg(argv[0], &klen, "KEY");
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
            printf("{\"ok\":true,\"operation\":\"exist\",\"exists\":false}\n");
        } else {
            printf("does not exist\n");
        }
        return EXIT_REFUSED;
    }
    if (rc) {
        return report(what, rc, &r);
    }
    if (opt.json) {
        printf("{\"ok\":true,\"operation\":\"%s\"%s}\n", what, del ? "" : ",\"exists\":true");
    } else {
        printf("%s\n", del ? "deleted" : "exists");
    }
    free(key);
    kvssd_close(dev);
    return 0;
}

/* One key of list output: a line, or a JSON array element (@n = keys before it). */
static void emit_key(const uint8_t *k, uint32_t kl, uint32_t n)
{
    if (opt.json) {
        printf("%s", n ? "," : "");
        if (!opt.key_hex && printable(k, kl)) {
            print_json_string(stdout, k, kl);
        } else {
            printf("\"0x");
            print_hex(stdout, k, kl);
            printf("\"");
        }
    } else {
        print_key(stdout, k, kl);
        printf("\n");
    }
}

static int cmd_list(int argc, char **argv)
{
    struct kvssd_result r;
    uint8_t *start = NULL, *buf = malloc(LIST_BUF_BYTES);
    uint32_t start_len = 0, printed = 0;

    struct kvssd_dev *dev = open_device();
    if (opt.start) {
        start = key_arg(opt.start, &start_len, "--start");
        check_key(dev, start_len);
    }
    if (opt.json) {
        printf("{\"keys\":[");
    }
    /*
     * "list --start KEY" prints the keys from KEY on. The device's List
     * returns keys after the start key (sorted, as many as fit the buffer),
     * so an Exist decides whether KEY itself comes first; a device that
     * includes the start key is handled too (the duplicate is skipped). To
     * continue, list again from the last key returned.
     */
    uint8_t *first = NULL;
    uint32_t first_len = 0;
    if (start && kvssd_exist(dev, start, start_len, &r) == 0) {
        first = malloc(start_len);
        memcpy(first, start, start_len);
        first_len = start_len;
        if (opt.max_keys != 0) {
            emit_key(first, first_len, printed);
            printed++;
        }
    }
    for (;;) {
        int n = kvssd_list(dev, start, start_len, buf, LIST_BUF_BYTES, &r);
        if (n < 0) {
            if (opt.json) {
                printf("]}\n");
            }
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
            emit_key(k, kl, printed);
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
    if (opt.json) {
        printf("],\"count\":%u}\n", printed);
    }
    free(first);
    free(start);
    free(buf);
    kvssd_close(dev);
    return 0;
}

static int cmd_iter(int argc, char **argv)
{
    struct kvssd_iter it;
    uint8_t *prefix = NULL;
    uint32_t plen = 0, count = 0;

    struct kvssd_dev *dev = open_device();
    if (opt.prefix) {
        prefix = key_arg(opt.prefix, &plen, "--prefix");
    }
    int rc = kvssd_iter_open(dev, &it, prefix, plen, opt.values, LIST_BUF_BYTES);
    if (rc) {
        return report("iter", rc, NULL);
    }
    if (opt.json) {
        printf("{\"entries\":[");
    }
    const uint8_t *k, *v;
    uint32_t kl, vl;
    while ((rc = kvssd_iter_next(&it, &k, &kl, &v, &vl)) == 1) {
        if (opt.max_keys >= 0 && count >= (uint32_t)opt.max_keys) {
            break;
        }
        if (opt.json) {
            printf("%s{\"key\":", count ? "," : "");
            print_json_string(stdout, k, kl);
            if (opt.values) {
                printf(",\"value_bytes\":%u,\"value\":", vl);
                print_json_string(stdout, v, vl);
            }
            printf("}");
        } else {
            print_key(stdout, k, kl);
            if (opt.values) {
                printf("\t");
                if (printable(v, vl)) {
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
    if (opt.json) {
        printf("],\"count\":%u}\n", count);
    }
    int crc = kvssd_iter_close(&it);
    if (rc < 0) {
        return report("iter", rc, NULL);
    }
    if (crc) {
        return report("iter close", crc, NULL);
    }
    free(prefix);
    kvssd_close(dev);
    return 0;
}

static int cmd_stats(void)
{
    static struct kvssd_stats_log log;
    struct kvssd_result r;
    size_t n;

    struct kvssd_dev *dev = open_device();
    int rc = kvssd_get_stats(dev, &log, &r);
    if (rc) {
        return report("stats", rc, &r);
    }
    const struct kvssd_stats_field *f = kvssd_stats_fields(&n);
    if (opt.json) {
        printf("{\"version\":%u,\"dma_unit_bytes\":%u", log.version, log.dma_unit_bytes);
        for (size_t i = 0; i < n; i++) {
            printf(",\"%s\":%llu", f[i].name, (unsigned long long)kvssd_stats_get(&log, &f[i]));
        }
        printf("}\n");
    } else {
        printf("%-28s %u\n%-28s %u\n", "version", log.version, "dma_unit_bytes",
               log.dma_unit_bytes);
        for (size_t i = 0; i < n; i++) {
            printf("%-28s %llu\n", f[i].name, (unsigned long long)kvssd_stats_get(&log, &f[i]));
        }
        printf("%-28s %.3f\n%-28s %.3f\n", "waf", log.waf_milli / 1000.0, "space_amp",
               log.space_amp_milli / 1000.0);
    }
    kvssd_close(dev);
    return 0;
}

static int cmd_simple(const char *what)
{
    struct kvssd_result r;
    struct kvssd_dev *dev = open_device();
    int rc;

    if (!strcmp(what, "format")) {
        if (!opt.yes) {
            fprintf(stderr, "kvssd: format erases every key of %s; add --yes to do it\n",
                    kvssd_dev_info(dev)->path);
            return EXIT_USAGE;
        }
        rc = kvssd_format(dev, &r);
    } else {
        rc = kvssd_reset_stats(dev, &r);
    }
    if (rc) {
        return report(what, rc, &r);
    }
    if (opt.json) {
        printf("{\"ok\":true,\"operation\":\"%s\"}\n", what);
    } else {
        printf("%s\n", !strcmp(what, "format") ? "formatted" : "statistics reset");
    }
    kvssd_close(dev);
    return 0;
}

static long parse_count(const char *s, const char *flag, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > max) {
        fprintf(stderr, "kvssd: %s \"%s\" is not a number in 0-%ld\n", flag, s, max);
        exit(EXIT_USAGE);
    }
    return v;
}

int main(int argc, char **argv)
{
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
        O_VERSION
    };
    static const struct option longopts[] = {
        {"device", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},
        {"key-hex", no_argument, NULL, 'x'},
        {"value-hex", no_argument, NULL, O_VALUE_HEX},
        {"file", required_argument, NULL, 'f'},
        {"out", required_argument, NULL, 'o'},
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
        case 'o':
            opt.out = optarg;
            break;
        case 'm':
            if (kvssd_xfer_mode_parse(optarg) < 0) {
                die_usage("transfer mode \"%s\" is unknown; use prp, inline, hybrid or adaptive",
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
            usage(stdout);
            return 0;
        case O_VERSION:
            kvssd_print_version("kvssd");
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[optind];
    int n = argc - optind - 1;
    char **args = argv + optind + 1;
    if (!strcmp(cmd, "info")) {
        return cmd_info(n, args);
    }
    if (!strcmp(cmd, "put")) {
        return cmd_put(n, args);
    }
    if (!strcmp(cmd, "get")) {
        return cmd_get(n, args);
    }
    if (!strcmp(cmd, "del")) {
        return cmd_del_exist(n, args, true);
    }
    if (!strcmp(cmd, "exist")) {
        return cmd_del_exist(n, args, false);
    }
    if (!strcmp(cmd, "list")) {
        return cmd_list(n, args);
    }
    if (!strcmp(cmd, "iter")) {
        return cmd_iter(n, args);
    }
    if (!strcmp(cmd, "stats")) {
        return cmd_stats();
    }
    if (!strcmp(cmd, "reset-stats")) {
        return cmd_simple("reset-stats");
    }
    if (!strcmp(cmd, "format")) {
        return cmd_simple("format");
    }
    die_usage("unknown command \"%s\"; commands: info put get del exist list iter stats "
              "reset-stats format",
              cmd);
    return EXIT_USAGE;
}
