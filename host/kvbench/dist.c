/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvbench random numbers, key orders and size distributions. Everything is
 * a pure function of the seed so that a run is reproducible.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bench/key_order.h>
#include <bench/units.h>

#include "kvbench.h"

uint64_t kb_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void kb_rng_seed(struct kb_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        r->s[i] = kb_splitmix64(&seed);
    }
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t kb_rng_next(struct kb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double kb_rng_double(struct kb_rng *r)
{
    return (double)(kb_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t kb_rng_below(struct kb_rng *r, uint64_t n)
{
    if (n <= 1) {
        return 0;
    }
    /* Lemire's multiply-shift with rejection: unbiased */
    unsigned __int128 m = (unsigned __int128)kb_rng_next(r) * n;
    uint64_t l = (uint64_t)m;
    if (l < n) {
        uint64_t t = -n % n;
        while (l < t) {
            m = (unsigned __int128)kb_rng_next(r) * n;
            l = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/*
 * zeta(n, theta) = sum of i^-theta for i = 1..n. Summed term by term up to
 * KB_ZETA_EXACT_MAX items; above, the first 999 terms and the Euler-Maclaurin
 * tail (the integral, the end points and three Bernoulli corrections: the
 * error is far below a double's precision at these n), so that YCSB's item
 * space of 10^10 costs microseconds instead of the minutes YCSB spends.
 */
#define KB_ZETA_EXACT_MAX 1000000u

double kb_zeta(uint64_t n, double theta)
{
    double s = 0;
    if (n <= KB_ZETA_EXACT_MAX) {
        for (uint64_t i = 1; i <= n; i++) {
            s += 1.0 / pow((double)i, theta);
        }
        return s;
    }
    const double m = 1000, x = (double)n, t = theta;
    for (uint64_t i = 1; i < 1000; i++) {
        s += 1.0 / pow((double)i, t);
    }
    /* f(x) = x^-t and its first, third and fifth derivatives' factors */
    double d1 = -t, d3 = -t * (t + 1) * (t + 2), d5 = d3 * (t + 3) * (t + 4);
    s += (pow(x, 1 - t) - pow(m, 1 - t)) / (1 - t);
    s += (pow(x, -t) + pow(m, -t)) / 2;
    s += d1 * (pow(x, -t - 1) - pow(m, -t - 1)) / 12;
    s -= d3 * (pow(x, -t - 3) - pow(m, -t - 3)) / 720;
    s += d5 * (pow(x, -t - 5) - pow(m, -t - 5)) / 30240;
    return s;
}

static void zipf_set(struct kb_zipf *z, uint64_t n, double theta, double zetan)
{
    z->n = n ? n : 1;
    z->theta = theta;
    z->alpha = 1.0 / (1.0 - theta);
    z->zetan = zetan;
    z->zeta2 = kb_zeta(2, theta);
    z->eta = (1.0 - pow(2.0 / (double)z->n, 1.0 - theta)) / (1.0 - z->zeta2 / z->zetan);
}

void kb_zipf_init(struct kb_zipf *z, uint64_t n, double theta)
{
    zipf_set(z, n, theta, kb_zeta(n ? n : 1, theta));
}

void kb_zipf_grow(struct kb_zipf *z, uint64_t n)
{
    if (n <= z->n) {
        return;
    }
    /* YCSB's ZipfianGenerator.nextLong(itemcount) adds the new items' terms the same way */
    double zetan = z->zetan;
    for (uint64_t i = z->n + 1; i <= n; i++) {
        zetan += 1.0 / pow((double)i, z->theta);
    }
    zipf_set(z, n, z->theta, zetan);
}

/* Gray et al.'s inversion as YCSB's ZipfianGenerator.nextLong() computes it, unclamped. */
static uint64_t zipf_draw(const struct kb_zipf *z, double u)
{
    double uz = u * z->zetan;
    if (uz < 1.0) {
        return 0;
    }
    if (uz < 1.0 + pow(0.5, z->theta)) {
        return 1;
    }
    return (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
}

uint64_t kb_zipf_next(const struct kb_zipf *z, struct kb_rng *r)
{
    uint64_t v = zipf_draw(z, kb_rng_double(r));
    return v < z->n ? v : z->n - 1;
}

uint64_t kb_fnvhash64(uint64_t v)
{
    /* YCSB's Utils.fnvhash64: FNV-1a over the 8 bytes, low byte first, then Math.abs() */
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 8; i++) {
        h ^= v & 0xff;
        h *= 1099511628211ull;
        v >>= 8;
    }
    /* Math.abs(Long.MIN_VALUE) stays negative in Java; here it is 2^63 (one value in 2^64) */
    return (int64_t)h < 0 ? (uint64_t)0 - h : h;
}

void kb_szipf_init(struct kb_szipf *s, uint64_t itemcount, double theta)
{
    s->itemcount = itemcount ? itemcount : 1;
    /* ZipfianGenerator(0, ITEM_COUNT) has ITEM_COUNT + 1 items; at 0.99 YCSB's constant zetan */
    zipf_set(&s->z, KB_SZIPF_ITEMS + 1, theta,
             theta == 0.99 ? KB_SZIPF_ZETAN : kb_zeta(KB_SZIPF_ITEMS + 1, theta));
}

uint64_t kb_szipf_next(const struct kb_szipf *s, struct kb_rng *r)
{
    return kb_fnvhash64(zipf_draw(&s->z, kb_rng_double(r))) % s->itemcount;
}

void kb_scanlen_init(struct kb_scanlen *s, enum kb_scan_dist kind, uint32_t min, uint32_t max)
{
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    s->min = min ? min : 1;
    s->max = max < s->min ? s->min : max;
    if (kind == KB_SCAN_ZIPFIAN) {
        /* YCSB's ZipfianGenerator(minscanlength, maxscanlength): the shortest is the most common */
        kb_zipf_init(&s->z, (uint64_t)s->max - s->min + 1, 0.99);
    }
}

uint32_t kb_scanlen_next(const struct kb_scanlen *s, struct kb_rng *r)
{
    switch (s->kind) {
    case KB_SCAN_UNIFORM:
        return s->min + (uint32_t)kb_rng_below(r, (uint64_t)s->max - s->min + 1);
    case KB_SCAN_ZIPFIAN:
        return s->min + (uint32_t)kb_zipf_next(&s->z, r);
    case KB_SCAN_FIXED:
    default:
        return s->max;
    }
}

static const char *const scan_dist_names[] = {"fixed", "uniform", "zipfian"};

int kb_scan_dist_parse(const char *s, enum kb_scan_dist *out)
{
    for (int i = 0; i < 3; i++) {
        if (!strcmp(s, scan_dist_names[i])) {
            *out = (enum kb_scan_dist)i;
            return 0;
        }
    }
    return -1;
}

const char *kb_scan_dist_name(enum kb_scan_dist d)
{
    return (unsigned)d < 3 ? scan_dist_names[d] : "unknown";
}

void kb_rate_init(struct kb_rate *rl, uint64_t bytes_per_s, uint64_t now_ns)
{
    memset(rl, 0, sizeof(*rl));
    rl->bytes_per_s = bytes_per_s;
    /* GenericRateLimiter(rate): a refill every 100 ms of rate * 100000 / 10^6 bytes */
    rl->refill_bytes = (uint64_t)(((unsigned __int128)bytes_per_s * KB_RATE_PERIOD_NS) /
                                  1000000000u);
    rl->next_refill_ns = now_ns;
}

uint64_t kb_rate_request(struct kb_rate *rl, uint64_t bytes, uint64_t now_ns)
{
    if (!rl->bytes_per_s || !rl->refill_bytes) {
        return now_ns;
    }
    /* what is left of the last refill goes first, as in GenericRateLimiter::Request() */
    uint64_t through = rl->available < bytes ? rl->available : bytes;
    rl->available -= through;
    bytes -= through;
    if (!bytes) {
        return now_ns;
    }
    /*
     * Then one refill per period (none before next_refill_ns), each adding
     * refill_bytes to an empty bucket and granting them to the request: it is
     * granted at the refill that completes it, the rest stays available.
     */
    uint64_t first = rl->next_refill_ns > now_ns ? rl->next_refill_ns : now_ns;
    uint64_t k = (bytes + rl->refill_bytes - 1) / rl->refill_bytes;
    uint64_t grant = first + (k - 1) * KB_RATE_PERIOD_NS;
    rl->available = k * rl->refill_bytes - bytes;
    rl->next_refill_ns = grant + KB_RATE_PERIOD_NS;
    return grant;
}

/* i -> (mul * i + add) mod n with gcd(mul, n) = 1 visits every index once (key_order.h). */
void kb_perm_init(struct kb_perm *p, uint64_t n, uint64_t seed)
{
    uint64_t x = seed ^ 0x5bd1e995u;
    p->n = n ? n : 1;
    p->add = kb_splitmix64(&x) % p->n;
    do {
        p->mul = (kb_splitmix64(&x) % p->n) | 1;
    } while (p->n > 2 && (!key_order_coprime(p->mul, p->n) || p->mul == 1));
    if (p->n <= 2) {
        p->mul = 1;
    }
}

uint64_t kb_perm_at(const struct kb_perm *p, uint64_t i)
{
    return (uint64_t)(((unsigned __int128)p->mul * (i % p->n) + p->add) % p->n);
}

void kb_window_init(struct kb_window *w, uint64_t n, uint64_t keys, uint64_t step, uint64_t seed)
{
    w->n = n ? n : 1;
    w->keys = keys ? keys : 1024;
    if (w->keys > w->n) {
        w->keys = w->n;
    }
    w->step = step ? step : w->keys;
    w->seed = seed;
}

uint64_t kb_window_at(const struct kb_window *w, uint64_t i)
{
    uint64_t j = i / w->keys, r = i % w->keys;
    uint64_t base = (uint64_t)(((unsigned __int128)j * w->step) % w->n);
    struct kb_perm p;
    /* each window its own bijection: the order inside one says nothing about the next */
    kb_perm_init(&p, w->keys, w->seed + j * 0x9e3779b97f4a7c15ull);
    return (uint64_t)(((unsigned __int128)base + kb_perm_at(&p, r)) % w->n);
}

static void size_err(char *err, size_t errlen, const char *what, const char *val, uint32_t lo,
                     uint32_t hi)
{
    snprintf(err, errlen, "%s is '%s'; it must be from %u to %u bytes", what, val, lo, hi);
}

/* Parse an unsigned size in [lo, hi]; the error names the value and the range. */
static int parse_size(const char *s, size_t len, uint32_t lo, uint32_t hi, const char *what,
                      uint32_t *out, char *err, size_t errlen)
{
    char buf[32];
    if (len == 0 || len >= sizeof(buf)) {
        snprintf(err, errlen, "%s is '%.*s'; it must be a number of bytes", what, (int)len, s);
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (buf[0] == '-' || buf[0] == '+') {
        size_err(err, errlen, what, buf, lo, hi);
        return -1;
    }
    uint64_t v; /* 4096, 4k, 4Ki: <bench/units.h> */
    if (!units_u64(buf, UNITS_BYTES, &v)) {
        snprintf(err, errlen,
                 "%s is '%s'; it must be a number of bytes (suffixes K, M, G: KiB, MiB, GiB)", what,
                 buf);
        return -1;
    }
    if (v < lo || v > hi) {
        size_err(err, errlen, what, buf, lo, hi);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int kb_size_parse(const char *spec, uint32_t lo, uint32_t hi, const char *what,
                  struct kb_size_dist *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof(*d));
    const char *colon = strchr(spec, ':');
    const char *arg = colon ? colon + 1 : spec;
    size_t kind_len = colon ? (size_t)(colon - spec) : strlen(spec);

    /* a bare "N" (arg is then spec) is "fixed:N" */
    if ((!colon && strcmp(spec, "mixgraph") != 0) ||
        (kind_len == 5 && !strncmp(spec, "fixed", 5))) {
        d->kind = KB_SIZE_FIXED;
        if (parse_size(arg, strlen(arg), lo, hi, what, &d->min, err, errlen)) {
            return -1;
        }
        d->max = d->min;
        return 0;
    }
    if (kind_len == 7 && !strncmp(spec, "uniform", 7)) {
        const char *dash = strchr(arg, '-');
        d->kind = KB_SIZE_UNIFORM;
        if (!dash) {
            snprintf(err, errlen, "%s is '%s'; it must be uniform:MIN-MAX", what, spec);
            return -1;
        }
        if (parse_size(arg, (size_t)(dash - arg), lo, hi, what, &d->min, err, errlen) ||
            parse_size(dash + 1, strlen(dash + 1), lo, hi, what, &d->max, err, errlen)) {
            return -1;
        }
        if (d->min > d->max) {
            snprintf(err, errlen, "%s is '%s'; it must be MIN-MAX with MIN at most MAX (%u > %u)",
                     what, spec, d->min, d->max);
            return -1;
        }
        return 0;
    }
    if (kind_len == 8 && !strncmp(spec, "weighted", 8)) {
        const char *p = arg;
        double total = 0;
        d->kind = KB_SIZE_WEIGHTED;
        while (*p) {
            const char *comma = strchr(p, ',');
            size_t n = comma ? (size_t)(comma - p) : strlen(p);
            const char *c2 = memchr(p, ':', n);
            if (!c2) {
                snprintf(err, errlen, "%s is '%s'; it must be weighted:SIZE:WEIGHT,...", what,
                         spec);
                return -1;
            }
            if (d->n == KB_WEIGHTED_MAX) {
                snprintf(err, errlen, "%s is '%s'; it must give at most %d sizes", what, spec,
                         KB_WEIGHTED_MAX);
                return -1;
            }
            if (parse_size(p, (size_t)(c2 - p), lo, hi, what, &d->sizes[d->n], err, errlen)) {
                return -1;
            }
            char wbuf[32], *end;
            size_t wl = n - (size_t)(c2 + 1 - p);
            if (wl == 0 || wl >= sizeof(wbuf)) {
                snprintf(err, errlen, "%s is '%s'; it must give each size a weight", what, spec);
                return -1;
            }
            memcpy(wbuf, c2 + 1, wl);
            wbuf[wl] = '\0';
            double w = strtod(wbuf, &end);
            if (*end || !(w > 0) || w > 1e12) {
                snprintf(err, errlen, "%s weight is '%s'; it must be a number above 0", what, wbuf);
                return -1;
            }
            total += w;
            d->cum[d->n++] = total;
            p = comma ? comma + 1 : p + n;
        }
        if (!d->n) {
            snprintf(err, errlen, "%s is '%s'; it must give a size", what, spec);
            return -1;
        }
        d->min = d->max = d->sizes[0];
        for (uint32_t i = 0; i < d->n; i++) {
            d->cum[i] /= total;
            if (d->sizes[i] < d->min) {
                d->min = d->sizes[i];
            }
            if (d->sizes[i] > d->max) {
                d->max = d->sizes[i];
            }
        }
        d->cum[d->n - 1] = 1.0;
        return 0;
    }
    if (kind_len == 8 && !strncmp(spec, "mixgraph", 8)) {
        /* db_bench's defaults: value_k 0.2615, value_sigma 25.45, value_theta 0 */
        d->kind = KB_SIZE_MIXGRAPH;
        d->k = 0.2615;
        d->sigma = 25.45;
        d->theta = 0;
        d->min = 10 < lo ? lo : 10;
        d->max = 1024 < hi ? 1024 : hi;
        const char *p = colon ? arg : "";
        while (*p) {
            const char *comma = strchr(p, ',');
            size_t n = comma ? (size_t)(comma - p) : strlen(p);
            char kv[64], *eq, *end;
            if (n >= sizeof(kv)) {
                snprintf(err, errlen, "%s is '%s'; it must have shorter parameters", what, spec);
                return -1;
            }
            memcpy(kv, p, n);
            kv[n] = '\0';
            eq = strchr(kv, '=');
            if (!eq) {
                snprintf(err, errlen, "%s is '%s'; it must give mixgraph parameters as NAME=VALUE",
                         what, spec);
                return -1;
            }
            *eq++ = '\0';
            if (!strcmp(kv, "max")) {
                if (parse_size(eq, strlen(eq), lo > 10 ? lo : 10, hi, what, &d->max, err, errlen)) {
                    return -1;
                }
            } else {
                double v = strtod(eq, &end);
                if (*end || end == eq || !isfinite(v)) {
                    snprintf(err, errlen, "mixgraph %s is '%s'; it must be a number", kv, eq);
                    return -1;
                }
                if (!strcmp(kv, "k")) {
                    d->k = v;
                } else if (!strcmp(kv, "sigma") && v > 0) {
                    d->sigma = v;
                } else if (!strcmp(kv, "theta") && v >= 0) {
                    d->theta = v;
                } else {
                    snprintf(err, errlen,
                             "mixgraph parameter is '%s=%s'; it must be k, sigma > 0, "
                             "theta >= 0 or max",
                             kv, eq);
                    return -1;
                }
            }
            p = comma ? comma + 1 : p + n;
        }
        if (d->min > d->max) {
            d->min = d->max;
        }
        return 0;
    }
    snprintf(err, errlen,
             "%s is '%s'; it must be N, fixed:N, uniform:MIN-MAX, "
             "weighted:SIZE:WEIGHT,... or mixgraph",
             what, spec);
    return -1;
}

uint32_t kb_mixgraph_size(const struct kb_size_dist *d, double u)
{
    double v;
    if (u <= 0) {
        u = 1e-12;
    }
    if (d->k == 0) {
        v = d->theta - d->sigma * log(u);
    } else {
        v = d->theta + d->sigma * (pow(u, -d->k) - 1.0) / d->k;
    }
    if (!(v < 1e12)) {
        v = 1e12;
    }
    uint64_t s = (uint64_t)v;
    if (s < d->min) {
        s = d->min;
    } else if (s > d->max) {
        s = s % d->max; /* db_bench folds oversize values back */
    }
    if (s < d->min) {
        s = d->min;
    }
    return (uint32_t)s;
}

uint32_t kb_size_draw(const struct kb_size_dist *d, struct kb_rng *r)
{
    switch (d->kind) {
    case KB_SIZE_UNIFORM:
        return d->min + (uint32_t)kb_rng_below(r, (uint64_t)d->max - d->min + 1);
    case KB_SIZE_WEIGHTED: {
        double u = kb_rng_double(r);
        for (uint32_t i = 0; i < d->n; i++) {
            if (u < d->cum[i]) {
                return d->sizes[i];
            }
        }
        return d->sizes[d->n - 1];
    }
    case KB_SIZE_MIXGRAPH:
        return kb_mixgraph_size(d, kb_rng_double(r));
    case KB_SIZE_FIXED:
    default:
        return d->min;
    }
}

int kb_size_counts(const struct kb_size_dist *d, uint64_t seed, uint64_t draws, uint64_t *counts,
                   size_t ncounts)
{
    struct kb_rng r;
    if (draws > KB_SIZE_DRAWS_MAX || ncounts <= kb_size_max(d)) {
        return -1;
    }
    memset(counts, 0, ncounts * sizeof(*counts));
    kb_rng_seed(&r, seed);
    for (uint64_t i = 0; i < draws; i++) {
        counts[kb_size_draw(d, &r)]++;
    }
    return 0;
}

uint32_t kb_size_max(const struct kb_size_dist *d)
{
    return d->max;
}

void kb_size_format(const struct kb_size_dist *d, char *buf, size_t len)
{
    size_t o = 0;
    switch (d->kind) {
    case KB_SIZE_FIXED:
        snprintf(buf, len, "fixed:%u", d->min);
        break;
    case KB_SIZE_UNIFORM:
        snprintf(buf, len, "uniform:%u-%u", d->min, d->max);
        break;
    case KB_SIZE_WEIGHTED:
        o = (size_t)snprintf(buf, len, "weighted:");
        for (uint32_t i = 0; i < d->n && o < len; i++) {
            double w = d->cum[i] - (i ? d->cum[i - 1] : 0);
            o += (size_t)snprintf(buf + o, len - o, "%s%u:%.4g", i ? "," : "", d->sizes[i], w);
        }
        break;
    case KB_SIZE_MIXGRAPH:
        snprintf(buf, len, "mixgraph:max=%u,k=%g,sigma=%g,theta=%g", d->max, d->k, d->sigma,
                 d->theta);
        break;
    }
}
