/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs the libFuzzer target fuzz_cmdset.c without libFuzzer: a fixed number
 * of deterministic pseudo-random inputs whose commands are biased towards
 * the opcodes, key lengths, tags and sequence numbers the command set
 * knows, so that most of them get past decoding. Part of the 'cmdset'
 * suite (and of the sanitizer phase): one TAP line per batch of inputs.
 *
 *   fuzz_cmdset_smoke [INPUTS]              run INPUTS inputs (default 400)
 *   fuzz_cmdset_smoke --corpus DIR [COUNT]  write COUNT (default 64) generated
 *                                           inputs to DIR as a libFuzzer seed corpus
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static uint32_t pick(const uint32_t *v, uint32_t n)
{
    return v[rnd() % n];
}

/* One 72-byte record: an SQE a guest could plausibly send, often slightly wrong. */
static void make_record(uint8_t *rec)
{
    static const uint32_t ops[] = {0x00, 0x01, 0x02, 0x06, 0x10, 0x14, 0x81, 0x85, 0x85,
                                   0x85, 0x89, 0x8d, 0x8d, 0x90, 0x91, 0x92, 0x94};
    static const uint32_t klens[] = {0, 1, 4, 16, 17, 40, 255};
    static const uint32_t vsizes[] = {0,    1,    20,   21,   35,      100,
                                      4095, 4096, 4100, 9000, 2097152, 2097153};
    struct kvssd_sqe s;
    uint32_t op = rnd() % 16 ? pick(ops, 17) : rnd() & 0xff;
    uint32_t klen = pick(klens, 7), tag = rnd() % 6, seq = rnd() % 6;
    uint32_t step = rnd() % 8 ? rnd() % 5000 : rnd();
    uint32_t ctl = (rnd() % 8 ? 0 : (rnd() % 2 ? KVSSD_SC_DATA_XFER_ERROR : rnd() & 0xffff)) |
                   (uint32_t)(rnd() % 200) << 16;

    memset(&s, 0, sizeof(s));
    for (int i = 2; i < 16; i++) {
        s.cdw[i] = rnd() % 3 ? rnd() & 0x0f0f0f0f : 0;
    }
    s.cdw[0] = op | (rnd() & 0xffff) << 16;
    s.cdw[1] = 1;
    switch (op) {
    case 0x01:
    case 0x02:
    case 0x06:
    case 0x10:
    case 0x14:
        s.cdw[10] = op == 0x01 ? pick(vsizes, 12) : rnd() % 9000;
        if ((op == 0x10 || op == 0x14) && rnd() % 16) {
            s.cdw[10] = 0;
        }
        s.cdw[11] = klen | (rnd() % 8 ? 0 : rnd() % 4) << 8;
        if (klen > 16) {
            s.cdw[2] = tag;
            s.cdw[3] = s.cdw[14] = s.cdw[15] = 0;
        }
        s.cdw[12] = s.cdw[13] = rnd() % 16 ? 0 : 1;
        break;
    case 0x81:
    case 0x89:
        if (rnd() % 5) {
            klen = 1 + rnd() % 16;
        }
        s.cdw[10] = kvssd_inline_head_cdw10(pick(vsizes, 12), rnd() % 8 ? 0 : rnd() % 4, klen);
        s.cdw[11] = op == 0x81 ? (tag | (rnd() % 4 ? 0 : KVSSD_INLINE_HYBRID))
                               : (tag | (rnd() << 8));
        if (op == 0x81 && klen > 16) {
            s.cdw[2] = tag;
        }
        break;
    case 0x85:
        s.cdw[10] = kvssd_inline_tag_seq(tag, seq);
        break;
    case 0x8d:
        s.cdw[1] = kvssd_inline_tag_seq(tag, seq);
        break;
    case 0x91:
        s.cdw[2] = s.cdw[3] = s.cdw[12] = s.cdw[13] = s.cdw[14] = s.cdw[15] = 0;
        s.cdw[10] = klen;
        s.cdw[11] = tag;
        break;
    case 0x90:
        s.cdw[2] = s.cdw[3] = s.cdw[13] = s.cdw[14] = s.cdw[15] = 0;
        s.cdw[12] = rnd() % 2;
        break;
    case 0x92:
    case 0x94:
        memset(&s.cdw[2], 0, 14 * 4);
        s.cdw[10] = op == 0x92 ? rnd() % 5000 : rnd() % 17;
        s.cdw[11] = op == 0x92 ? rnd() % 17 : 0;
        break;
    default:
        break;
    }
    memcpy(rec, &s, 64);
    memcpy(rec + 64, &step, 4);
    memcpy(rec + 68, &ctl, 4);
}

/* One generated input in @buf; returns its length. */
static size_t make_input(uint8_t *buf)
{
    uint32_t records = 1 + rnd() % 256;

    for (uint32_t r = 0; r < records; r++) {
        make_record(buf + r * 72);
    }
    for (uint32_t t = 0; t < 512; t++) {
        buf[records * 72 + t] = (uint8_t)rnd();
    }
    return records * 72 + 1 + rnd() % 512;
}

static int write_corpus(const char *dir, uint32_t count)
{
    static uint8_t buf[256 * 72 + 512];

    for (uint32_t i = 0; i < count; i++) {
        char path[4096];
        size_t n = make_input(buf);
        FILE *f;

        snprintf(path, sizeof(path), "%s/seed-%04u", dir, i);
        f = fopen(path, "wb");
        if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0) {
            fprintf(stderr, "fuzz_cmdset_smoke: cannot write %s\n", path);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t inputs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 400;
    static uint8_t buf[256 * 72 + 512];
    uint32_t batches = 4, per = (inputs + batches - 1) / batches;
    uint64_t commands = 0;

    if (argc > 2 && strcmp(argv[1], "--corpus") == 0) {
        return write_corpus(argv[2], argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 64);
    }

    printf("1..%u\n", batches);
    for (uint32_t b = 0; b < batches; b++) {
        for (uint32_t i = 0; i < per; i++) {
            size_t n = make_input(buf);

            LLVMFuzzerTestOneInput(buf, n);
            commands += n / 72;
        }
        /* Reaching here means no crash, no abort and no sanitizer report. */
        printf("ok %u - fuzz_smoke/batch_%u (%u inputs, %llu commands so far, kvftl_check clean)\n",
               b + 1, b, per, (unsigned long long)commands);
        fflush(stdout);
    }
    return 0;
}
