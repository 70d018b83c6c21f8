/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The lsm design's answers to the index seam (lsm_index.h). */
#include "lsm_index.h"

#include <string.h>

#include <glib.h>
#include <xxhash.h>

#include "index.h"
#include "kv_index.h"
#include "nand.h"
#include "refuse.h"
#include "space.h"
#include "value_log.h"

static struct lsm_index *L(struct kv_index *ix)
{
    return &ix->lsm;
}

static struct nand *nand_of(struct kv_index *ix)
{
    return ix->hash.idx.sp->nand;
}

static const struct kv_index_entry *page_entries(const uint8_t *mem)
{
    return (const struct kv_index_entry *)(mem + sizeof(struct lsm_page_header));
}

/* ---- entries: a key is its signature and the LSM_DUP bit of its location ---- */

static bool ent_del(uint64_t v)
{
    return (v | LSM_DUP) == UINT64_MAX;
}

/* Which key of its signature entry value @v is, 0 or 1 (a marker holds LSM_DUP inverted). */
static uint32_t ent_dup(uint64_t v)
{
    return ent_del(v) ? v != LSM_DEL : (v & LSM_DUP) != 0;
}

/* The blob location of entry value @v (LSM_DEL for a marker), without the key's bit. */
static uint64_t ent_loc(uint64_t v)
{
    return ent_del(v) ? LSM_DEL : v & ~LSM_DUP;
}

/* The entry value of key @d of a signature at location @loc (or LSM_DEL). */
static uint64_t ent_make(uint64_t loc, uint32_t d)
{
    if (loc == LSM_DEL) {
        return d ? LSM_DEL & ~LSM_DUP : LSM_DEL;
    }
    return d ? loc | LSM_DUP : loc;
}

/* Entries sort by (signature, key of it). */
static int ent_order(const struct kv_index_entry *x, const struct kv_index_entry *y)
{
    if (x->hash != y->hash) {
        return x->hash < y->hash ? -1 : 1;
    }
    return (int)ent_dup(x->loc) - (int)ent_dup(y->loc);
}

static struct kv_index_pos pos_of(uint64_t hash, uint32_t d)
{
    struct kv_index_pos p = kv_index_pos_of_hash(hash);
    p.c = d;
    return p;
}

/* ---- memtable ---- */

static uint32_t mem_home(const struct lsm_index *l, uint64_t hash)
{
    return (uint32_t)(hash ^ (hash >> 29)) & (l->mcap - 1);
}

/* The slot of key @d of @hash, or UINT32_MAX. */
static uint32_t mem_find(const struct lsm_index *l, uint64_t hash, uint32_t d)
{
    uint32_t i = mem_home(l, hash);
    for (uint32_t n = 0; n < l->mcap && l->mused[i]; n++) {
        if (l->mhash[i] == hash && ent_dup(l->mloc[i]) == d) {
            return i;
        }
        i = (i + 1) & (l->mcap - 1);
    }
    return UINT32_MAX;
}

/* Entry value @v (its key's bit included) of @hash into the memtable. */
static void mem_put(struct lsm_index *l, uint64_t hash, uint64_t v)
{
    uint32_t i = mem_home(l, hash), d = ent_dup(v);
    while (l->mused[i] && (l->mhash[i] != hash || ent_dup(l->mloc[i]) != d)) {
        i = (i + 1) & (l->mcap - 1);
    }
    if (!l->mused[i]) {
        l->mcount++;
    }
    l->mused[i] = 1;
    l->mhash[i] = hash;
    l->mloc[i] = v;
}

/* The first entry of the frozen run with signature @hash or above. */
static uint32_t imm_lower(const struct lsm_index *l, uint64_t hash)
{
    uint32_t lo = l->imm_at, hi = l->imm_n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l->imm[mid].hash < hash) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The frozen run's entry of key @d of @hash, or UINT32_MAX. */
static uint32_t imm_find(const struct lsm_index *l, uint64_t hash, uint32_t d)
{
    for (uint32_t k = imm_lower(l, hash); k < l->imm_n && l->imm[k].hash == hash; k++) {
        if (ent_dup(l->imm[k].loc) == d) {
            return k;
        }
    }
    return UINT32_MAX;
}

static void buf_reserve(struct lsm_index *l, uint64_t n)
{
    if (n > l->buf_cap) {
        uint32_t cap = l->buf_cap ? l->buf_cap : 256;
        while (cap < n) {
            cap *= 2;
        }
        l->buf = g_renew(struct kv_index_entry, l->buf, cap);
        l->buf_cap = cap;
    }
}

static int entry_cmp(const void *a, const void *b)
{
    return ent_order(a, b);
}

/* ---- pages ---- */

/* The page of level @lv holding @hash, or UINT32_MAX. DRAM only (fences). */
static uint32_t level_page_of(const struct lsm_level *lv, uint64_t hash)
{
    uint32_t lo = 0, hi = lv->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (lv->pg[mid].last < hash) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < lv->n && lv->pg[lo].first <= hash ? lo : UINT32_MAX;
}

/*
 * The bytes of page @p of level @lvl: its pinned copy, else its NAND page,
 * read on *@now_ns (one tR, counted) when @now_ns is not NULL.
 */
static const uint8_t *page_bytes(struct kv_index *ix, const struct lsm_page *p, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    if (p->mem) {
        l->hits += now_ns != NULL;
        return p->mem;
    }
    struct nand *n = nand_of(ix);
    uint32_t ppn = l->id_ppn[p->id];
    if (now_ns) {
        *now_ns = nand_read(n, ppn, l->page_bytes, *now_ns);
        l->misses++;
        l->pages_read++;
    }
    return nand_page_ptr(n, ppn);
}

/* The first entry of signature @hash or above in page bytes @mem (@count entries). */
static uint32_t page_lower(const uint8_t *mem, uint32_t count, uint64_t hash)
{
    const struct kv_index_entry *e = page_entries(mem);
    uint32_t lo = 0, hi = count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (e[mid].hash < hash) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The entry of key @d of @hash in page bytes @mem (@count entries): its index, or UINT32_MAX. */
static uint32_t page_search(const uint8_t *mem, uint32_t count, uint64_t hash, uint32_t d)
{
    const struct kv_index_entry *e = page_entries(mem);
    for (uint32_t k = page_lower(mem, count, hash); k < count && e[k].hash == hash; k++) {
        if (ent_dup(e[k].loc) == d) {
            return k;
        }
    }
    return UINT32_MAX;
}

/*
 * The newest entry of key @d of @hash: the memtable, the frozen run, then
 * L0, L1, ... (a page not pinned costs a tR when @now_ns is given). true
 * with its entry value (ent_del(): a deletion marker).
 */
static bool newest(struct kv_index *ix, uint64_t hash, uint32_t d, uint64_t *val, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    if (d && !l->dup_keys) {
        return false;
    }
    uint32_t i = mem_find(l, hash, d);
    if (i != UINT32_MAX) {
        *val = l->mloc[i];
        return true;
    }
    i = imm_find(l, hash, d);
    if (i != UINT32_MAX) {
        *val = l->imm[i].loc;
        return true;
    }
    for (uint32_t v = 0; v < l->nlevels; v++) {
        const struct lsm_level *lv = &l->lv[v];
        uint32_t p = level_page_of(lv, hash);
        if (p == UINT32_MAX) {
            continue;
        }
        const uint8_t *mem = page_bytes(ix, &lv->pg[p], now_ns);
        uint32_t k = page_search(mem, lv->pg[p].count, hash, d);
        if (k != UINT32_MAX) {
            *val = page_entries(mem)[k].loc;
            return true;
        }
    }
    return false;
}

/* Called with each key's newest entry value; true stops the walk. */
typedef bool (*lsm_key_fn)(struct kv_index *ix, void *ctx, uint32_t d, uint64_t val,
                           uint64_t *now_ns);

/*
 * The keys of signature @hash, newest level first, in one walk: @fn gets
 * each key's newest entry (markers too) until it returns true (then true).
 * The walk ends when every key the signature can have was met (one while
 * no LSM_DUP entry was ever made), so without a second key it reads the
 * pages newest() reads. A page not pinned costs a tR when @now_ns is given.
 */
static bool keys_of(struct kv_index *ix, uint64_t hash, lsm_key_fn fn, void *ctx, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    uint32_t keys = l->dup_keys ? 2 : 1, all = (1u << keys) - 1, met = 0;
    for (uint32_t d = 0; d < keys; d++) {
        uint32_t i = mem_find(l, hash, d);
        if (i != UINT32_MAX) {
            met |= 1u << d;
            if (fn(ix, ctx, d, l->mloc[i], now_ns)) {
                return true;
            }
        }
    }
    for (uint32_t k = imm_lower(l, hash); k < l->imm_n && l->imm[k].hash == hash; k++) {
        uint32_t d = ent_dup(l->imm[k].loc);
        if (d >= keys || (met & 1u << d)) {
            continue;
        }
        met |= 1u << d;
        if (fn(ix, ctx, d, l->imm[k].loc, now_ns)) {
            return true;
        }
    }
    for (uint32_t v = 0; v < l->nlevels && met != all; v++) {
        const struct lsm_level *lv = &l->lv[v];
        uint32_t p = level_page_of(lv, hash);
        if (p == UINT32_MAX) {
            continue;
        }
        const uint8_t *mem = page_bytes(ix, &lv->pg[p], now_ns);
        const struct kv_index_entry *e = page_entries(mem);
        uint32_t count = lv->pg[p].count;
        for (uint32_t k = page_lower(mem, count, hash); k < count && e[k].hash == hash; k++) {
            uint32_t d = ent_dup(e[k].loc);
            if (d >= keys || (met & 1u << d)) {
                continue;
            }
            met |= 1u << d;
            if (fn(ix, ctx, d, e[k].loc, now_ns)) {
                return true;
            }
        }
    }
    return false;
}

/* The id table holds ids below @need. */
static void ids_grow(struct lsm_index *l, uint64_t need)
{
    if (need <= l->ids_cap) {
        return;
    }
    uint32_t cap = l->ids_cap ? l->ids_cap : 64;
    while (cap < need) {
        cap *= 2;
    }
    l->id_ppn = g_renew(uint32_t, l->id_ppn, cap);
    for (uint32_t i = l->ids_cap; i < cap; i++) {
        l->id_ppn[i] = UINT32_MAX;
    }
    l->ids_cap = cap;
}

/* A free page id: the table is grown to twice the ids in use, so a scan from the hint is short. */
static uint32_t id_take(struct lsm_index *l)
{
    ids_grow(l, 2 * ((uint64_t)l->ids_used + 1));
    for (uint32_t n = 0; n < l->ids_cap; n++) {
        uint32_t i = (l->id_hint + n) % l->ids_cap;
        if (l->id_ppn[i] == UINT32_MAX) {
            l->id_hint = i + 1;
            return i;
        }
    }
    g_assert_not_reached(); /* ids_cap > ids_used */
}

/* The NAND copy of page @id stops being live. */
static void page_drop(struct kv_index *ix, struct lsm_page *p)
{
    struct lsm_index *l = L(ix);
    struct nand *n = nand_of(ix);
    space_valid_add(ix->hash.idx.sp, (uint64_t)l->id_ppn[p->id] * n->geo.page_size,
                    -(int64_t)n->geo.page_size, 0);
    l->nand_bytes -= n->geo.page_size;
    l->id_ppn[p->id] = UINT32_MAX;
    l->ids_used--;
    if (p->mem) {
        l->pinned_bytes -= l->page_bytes;
        g_free(p->mem);
        p->mem = NULL;
    }
}

/*
 * Program entries @e (@count, 1..slots, sorted) as a new page of level
 * @lvl into *@out. 0, or -1 (no stripe, power lost) with nothing written.
 */
static int page_write(struct kv_index *ix, uint32_t lvl, const struct kv_index_entry *e,
                      uint32_t count, struct lsm_page *out, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    struct nand *n = nand_of(ix);
    uint32_t id = id_take(l);
    memset(l->wbuf, 0, n->geo.page_size);
    struct lsm_page_header h = {LSM_PAGE_MAGIC, id, lvl, count};
    memcpy(l->wbuf, &h, sizeof(h));
    memcpy(l->wbuf + sizeof(h), e, (size_t)count * sizeof(*e));
    uint64_t ppn = stream_program_index(ix->hash.idx.sp, id, l->wbuf, now_ns);
    if (ppn == UINT64_MAX) {
        return -1;
    }
    l->id_ppn[id] = (uint32_t)ppn;
    l->ids_used++;
    space_valid_add(ix->hash.idx.sp, ppn * n->geo.page_size, n->geo.page_size, 0);
    l->nand_bytes += n->geo.page_size;
    l->pages_written++;
    *out = (struct lsm_page){id, count, e[0].hash, e[count - 1].hash, NULL};
    if (l->lv[lvl].pinned) {
        out->mem = g_memdup2(l->wbuf, l->page_bytes);
        l->pinned_bytes += l->page_bytes;
    }
    return 0;
}

/*
 * Pages of level @lvl from sorted entries @e (@count): *@out (g_free it),
 * *@nout. A page ends one entry early rather than split a signature's two
 * keys, so that pages' signature ranges stay disjoint.
 */
static int pages_write(struct kv_index *ix, uint32_t lvl, const struct kv_index_entry *e,
                       uint64_t count, struct lsm_page **out, uint32_t *nout, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    /* every page but the last holds at least slots - 1 entries (slots >= 255: 4 KiB pages) */
    uint64_t np = count / (l->slots - 1) + 1;
    *out = g_new0(struct lsm_page, np);
    *nout = 0;
    for (uint64_t at = 0, i = 0; at < count; i++) {
        uint32_t c = (uint32_t)(count - at < l->slots ? count - at : l->slots);
        if (at + c < count && e[at + c].hash == e[at + c - 1].hash) {
            c--;
        }
        int rc = page_write(ix, lvl, e + at, c, &(*out)[i], now_ns);
        at += c;
        if (rc != 0) {
            for (uint32_t k = 0; k < i; k++) {
                page_drop(ix, &(*out)[k]);
            }
            g_free(*out);
            *out = NULL;
            return -1;
        }
        (*nout)++;
    }
    return 0;
}

/* Level @lvl's pages [@from, @to) become @np pages @pg (their old NAND copies dropped). */
static void level_replace(struct kv_index *ix, uint32_t lvl, uint32_t from, uint32_t to,
                          const struct lsm_page *pg, uint32_t np)
{
    struct lsm_index *l = L(ix);
    struct lsm_level *lv = &l->lv[lvl];
    for (uint32_t i = from; i < to; i++) {
        page_drop(ix, &lv->pg[i]);
    }
    uint32_t n = lv->n - (to - from) + np;
    if (n > lv->cap) {
        lv->cap = n * 2;
        lv->pg = g_renew(struct lsm_page, lv->pg, lv->cap);
    }
    if (lv->n > to) {
        memmove(&lv->pg[from + np], &lv->pg[to], (size_t)(lv->n - to) * sizeof(*lv->pg));
    }
    if (np) {
        memcpy(&lv->pg[from], pg, (size_t)np * sizeof(*pg));
    }
    lv->n = n;
    if (np && lvl + 1 > l->nlevels) {
        l->nlevels = lvl + 1;
    }
}

/* Is level @lvl the deepest holding pages (a deletion marker written there drops)? */
static bool deepest(const struct lsm_index *l, uint32_t lvl)
{
    for (uint32_t v = lvl + 1; v < l->nlevels; v++) {
        if (l->lv[v].n) {
            return false;
        }
    }
    return true;
}

/*
 * Merge sorted @a (@na, newer) and @b (@nb, older) into l->buf: the newer
 * entry of a key (signature and LSM_DUP) wins; deletion markers drop when
 * @drop. The count.
 */
static uint64_t merge_runs(struct lsm_index *l, const struct kv_index_entry *a, uint64_t na,
                           const struct kv_index_entry *b, uint64_t nb, bool drop)
{
    buf_reserve(l, na + nb);
    uint64_t i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        struct kv_index_entry e;
        if (j >= nb || (i < na && ent_order(&a[i], &b[j]) <= 0)) {
            e = a[i];
            if (j < nb && ent_order(&a[i], &b[j]) == 0) {
                j++; /* shadowed */
            }
            i++;
        } else {
            e = b[j++];
        }
        if (drop && ent_del(e.loc)) {
            l->dels_dropped++;
            continue;
        }
        l->buf[n++] = e;
    }
    return n;
}

/* The entries of pages [@from, @to) of level @lvl, read (tR each unless pinned), appended to @g. */
static void level_gather(struct kv_index *ix, uint32_t lvl, uint32_t from, uint32_t to, GArray *g,
                         uint64_t *now_ns)
{
    struct lsm_level *lv = &L(ix)->lv[lvl];
    for (uint32_t p = from; p < to; p++) {
        const uint8_t *mem = page_bytes(ix, &lv->pg[p], now_ns);
        g_array_append_vals(g, page_entries(mem), lv->pg[p].count);
    }
}

/* The memtable, sorted, becomes the frozen run (which is empty): DRAM only. */
static void mem_freeze(struct lsm_index *l)
{
    g_assert(l->imm_at == l->imm_n);
    if (l->mcount > l->imm_cap) {
        l->imm_cap = l->mcount;
        l->imm = g_renew(struct kv_index_entry, l->imm, l->imm_cap);
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < l->mcap; i++) {
        if (l->mused[i]) {
            l->imm[k++] = (struct kv_index_entry){l->mhash[i], l->mloc[i]};
        }
    }
    qsort(l->imm, k, sizeof(*l->imm), entry_cmp);
    l->imm_at = 0;
    l->imm_n = k;
    memset(l->mused, 0, l->mcap);
    l->mcount = 0;
    l->flushes++;
}

/*
 * One step of the frozen run into L0: its first entries (at most a page,
 * a signature's two keys together), cut before the L0 page past the
 * LSM_OVERLAP_MAX their range meets, merged with the pages they meet.
 * At least one entry goes: the first L0 page met holds or follows it.
 */
int lsm_merge_step(struct kv_index *ix, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    if (l->imm_at >= l->imm_n) {
        return 0;
    }
    struct lsm_level *lv = &l->lv[0];
    const struct kv_index_entry *a = l->imm + l->imm_at;
    uint32_t na = l->imm_n - l->imm_at;
    uint32_t cut = na < l->slots ? na : l->slots;
    if (cut < na && a[cut].hash == a[cut - 1].hash) {
        cut--; /* a signature's two keys go together */
    }
    uint64_t hi = a[cut - 1].hash;
    uint32_t j0 = 0, j1 = lv->n;
    while (j0 < j1) {
        uint32_t mid = j0 + (j1 - j0) / 2;
        if (lv->pg[mid].last < a[0].hash) {
            j0 = mid + 1;
        } else {
            j1 = mid;
        }
    }
    j1 = j0;
    while (j1 < lv->n && lv->pg[j1].first <= hi && j1 - j0 < LSM_OVERLAP_MAX) {
        j1++;
    }
    if (j1 < lv->n && lv->pg[j1].first <= hi) {
        hi = lv->pg[j1 - 1].last; /* >= a[0].hash: page j0 holds or follows it */
    }
    uint32_t take = 0;
    while (take < na && a[take].hash <= hi) {
        take++;
    }
    GArray *old = g_array_new(FALSE, FALSE, sizeof(struct kv_index_entry));
    level_gather(ix, 0, j0, j1, old, now_ns);
    uint64_t n = merge_runs(l, a, take, (const struct kv_index_entry *)old->data, old->len,
                            deepest(l, 0));
    g_array_free(old, TRUE);
    struct lsm_page *pg;
    uint32_t np;
    if (pages_write(ix, 0, l->buf, n, &pg, &np, now_ns) != 0) {
        return -1;
    }
    level_replace(ix, 0, j0, j1, pg, np);
    g_free(pg);
    l->imm_at += take;
    if (l->imm_at == l->imm_n) {
        l->imm_at = l->imm_n = 0;
    }
    l->merges++;
    return 0;
}

/* Merge steps until the frozen run is in L0, then the memtable frozen and merged likewise. */
int lsm_flush(struct kv_index *ix, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    for (uint32_t round = 0; round < 2; round++) {
        /* bounded: each step takes at least one of the run's entries */
        while (l->imm_at < l->imm_n) {
            if (lsm_merge_step(ix, now_ns) != 0) {
                return -1;
            }
        }
        if (!l->mcount) {
            return 0;
        }
        mem_freeze(l);
    }
    return 0;
}

/*
 * One compaction step of level @v into @v + 1: the page at the level's
 * cursor, merged with the lower pages its range overlaps (at most
 * LSM_OVERLAP_MAX: past them its entries stay, rewritten as a smaller
 * page). Reads 1 + overlapped pages, programs the merged pages (and the
 * rest). 0, or -1 with nothing changed.
 */
int lsm_compact_step(struct kv_index *ix, uint32_t v, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    if (v + 1 >= LSM_MAX_LEVELS || !l->lv[v].n) {
        return -1;
    }
    struct lsm_level *up = &l->lv[v], *lo = &l->lv[v + 1];
    uint32_t c = up->cursor % up->n;
    struct lsm_page src = up->pg[c];
    /* the lower pages whose range meets [src.first, src.last] */
    uint32_t j0 = 0;
    while (j0 < lo->n && lo->pg[j0].last < src.first) {
        j0++;
    }
    uint32_t j1 = j0;
    while (j1 < lo->n && lo->pg[j1].first <= src.last && j1 - j0 < LSM_OVERLAP_MAX) {
        j1++;
    }
    uint64_t hi = src.last;
    if (j1 < lo->n && lo->pg[j1].first <= src.last) {
        hi = lo->pg[j1 - 1].last; /* bounded: the rest of the page stays above */
    }
    const uint8_t *smem = page_bytes(ix, &up->pg[c], now_ns);
    const struct kv_index_entry *se = page_entries(smem);
    uint32_t take = 0;
    while (take < src.count && se[take].hash <= hi) {
        take++;
    }
    struct kv_index_entry *a = g_memdup2(se, (size_t)src.count * sizeof(*se));
    GArray *old = g_array_new(FALSE, FALSE, sizeof(struct kv_index_entry));
    level_gather(ix, v + 1, j0, j1, old, now_ns);
    uint64_t n = merge_runs(l, a, take, (const struct kv_index_entry *)old->data, old->len,
                            deepest(l, v + 1));
    g_array_free(old, TRUE);
    struct lsm_page *pg, rest;
    uint32_t np;
    int rc = -1;
    if (pages_write(ix, v + 1, l->buf, n, &pg, &np, now_ns) == 0) {
        if (take == src.count ||
            page_write(ix, v, a + take, src.count - take, &rest, now_ns) == 0) {
            level_replace(ix, v + 1, j0, j1, pg, np);
            level_replace(ix, v, c, c + 1, &rest, take == src.count ? 0 : 1);
            up->cursor = take == src.count ? c : c + 1;
            l->compactions++;
            rc = 0;
        } else {
            for (uint32_t k = 0; k < np; k++) {
                page_drop(ix, &pg[k]);
            }
        }
        g_free(pg);
    }
    g_free(a);
    return rc;
}

uint64_t lsm_command_pages_max(const struct kv_index *ix)
{
    const struct lsm_index *l = &ix->lsm;
    /* a step merges <= 1 + LSM_OVERLAP_MAX pages of entries: pages_write() programs <= this */
    uint64_t merged = (LSM_OVERLAP_MAX + 1) * (uint64_t)l->slots / (l->slots - 1) + 1;
    /* merge step: L0 pages read, merged programmed; compaction step: its page too, and the rest */
    return (LSM_OVERLAP_MAX + merged) + (1 + LSM_OVERLAP_MAX + merged + 1);
}

/* The first level over its target, or UINT32_MAX. */
static uint32_t over_target(const struct lsm_index *l)
{
    for (uint32_t v = 0; v + 1 < LSM_MAX_LEVELS && v < l->nlevels; v++) {
        if (l->lv[v].n > l->lv[v].target) {
            return v;
        }
    }
    return UINT32_MAX;
}

/*
 * Before a new memtable entry, the work of one (docs/kvftl.md, "Index
 * design lsm"): one merge step of the frozen run, a full memtable frozen
 * (the run is empty by then: mmax steps each took an entry), and one
 * compaction step if a level is over its target: at most
 * lsm_command_pages_max() index pages. Only after steps that found no
 * stripe is the run left when the memtable is full: then -1 while they
 * fail, and past its budget (lsm_add() grows it) while they succeed.
 */
static int make_room(struct kv_index *ix, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    int merged = lsm_merge_step(ix, now_ns); /* a failed step changes nothing; the next retries */
    if (l->mcount >= l->mmax) {
        if (l->imm_at < l->imm_n && merged != 0) {
            return -1;
        }
        if (l->imm_at == l->imm_n) {
            mem_freeze(l);
        }
    }
    uint32_t cap = 16;
    while (cap < 2 * l->mmax) {
        cap *= 2;
    }
    if (l->mcap > cap && !l->mcount) {
        /* frozen after growing past its budget: back to its size */
        g_free(l->mhash);
        g_free(l->mloc);
        g_free(l->mused);
        l->mcap = cap;
        l->mhash = g_new0(uint64_t, l->mcap);
        l->mloc = g_new0(uint64_t, l->mcap);
        l->mused = g_new0(uint8_t, l->mcap);
    }
    uint32_t v = over_target(l);
    if (v != UINT32_MAX) {
        (void)lsm_compact_step(ix, v, now_ns); /* a failed step changes nothing; the next retries */
    }
    return 0;
}

/* ---- the seam ---- */

static void levels_free(struct lsm_index *l)
{
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        for (uint32_t p = 0; p < l->lv[v].n; p++) {
            g_free(l->lv[v].pg[p].mem);
        }
        g_free(l->lv[v].pg);
        l->lv[v].pg = NULL;
        l->lv[v].n = l->lv[v].cap = l->lv[v].cursor = 0;
    }
    l->nlevels = 0;
    l->imm_at = l->imm_n = 0;
    for (uint32_t i = 0; i < l->ids_cap; i++) {
        l->id_ppn[i] = UINT32_MAX;
    }
    l->ids_used = 0;
    l->nand_bytes = l->pinned_bytes = 0;
    l->dup_keys = 0;
    l->free_hash = 0;
}

static void lsm_init(struct kv_index *ix, struct space *sp, struct value_log *vl,
                     const struct kvftl_config *cfg)
{
    struct lsm_index *l = L(ix);
    index_init(&ix->hash.idx, sp, vl, cfg); /* the key hash: its seed and a test's function */
    l->page_bytes = cfg->index_page_bytes;
    l->slots = (l->page_bytes - sizeof(struct lsm_page_header)) / sizeof(struct kv_index_entry);
    /*
     * The memtable: one index page of entries per page-buffer entry, at
     * most a quarter of index-dram-bytes (17 bytes a slot, twice the
     * entries; its frozen run 16 an entry); the rest pins levels from L0
     * down, whole levels by target.
     */
    uint64_t mmax = (uint64_t)cfg->buffer_entries * l->slots;
    uint64_t cap_dram = cfg->index_dram_bytes / 4 / (2 * 17 + 16);
    mmax = mmax < cap_dram ? mmax : cap_dram;
    l->mmax = (uint32_t)(mmax < l->slots ? l->slots : mmax);
    l->mcap = 16;
    while (l->mcap < 2 * l->mmax) {
        l->mcap *= 2;
    }
    l->mhash = g_new0(uint64_t, l->mcap);
    l->mloc = g_new0(uint64_t, l->mcap);
    l->mused = g_new0(uint8_t, l->mcap);
    uint64_t mem_pages = (l->mmax + l->slots - 1) / l->slots;
    uint64_t mbytes = (uint64_t)l->mcap * 17 + (uint64_t)l->mmax * 16, pinned = 0;
    uint64_t budget = cfg->index_dram_bytes > mbytes ? cfg->index_dram_bytes - mbytes : 0;
    uint64_t target = mem_pages * LSM_RATIO;
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        l->lv[v].target = target;
        pinned += target * l->page_bytes;
        l->lv[v].pinned = pinned <= budget;
        target = target > UINT64_MAX / LSM_RATIO ? UINT64_MAX : target * LSM_RATIO;
    }
    l->wbuf = g_malloc0(sp->nand->geo.page_size);
}

static void lsm_fini(struct kv_index *ix)
{
    struct lsm_index *l = L(ix);
    levels_free(l);
    g_free(l->mhash);
    g_free(l->mloc);
    g_free(l->mused);
    g_free(l->imm);
    g_free(l->id_ppn);
    g_free(l->wbuf);
    g_free(l->buf);
    index_fini(&ix->hash.idx);
}

static void lsm_reset(struct kv_index *ix)
{
    struct lsm_index *l = L(ix);
    levels_free(l);
    memset(l->mused, 0, l->mcap);
    l->mcount = 0;
    struct index *x = &ix->hash.idx;
    x->hash_seed = x->cfg_seed ? x->cfg_seed : index_new_seed();
}

static uint64_t lsm_hash(const struct kv_index *ix, const void *key, uint32_t key_bytes)
{
    return index_hash(&ix->hash.idx, key, key_bytes);
}

static void lsm_prefetch(const struct kv_index *ix, uint64_t hash, bool for_update)
{
    (void)for_update;
    __builtin_prefetch(&ix->lsm.mused[mem_home(&ix->lsm, hash)]);
}

/* The memtable, the frozen run and the pinned levels, down to the first level not pinned. */
static uint64_t lsm_peek(const struct kv_index *ix, uint64_t hash)
{
    const struct lsm_index *l = &ix->lsm;
    uint32_t i = mem_find(l, hash, 0);
    if (i != UINT32_MAX) {
        return ent_del(l->mloc[i]) ? 0 : l->mloc[i];
    }
    i = imm_find(l, hash, 0);
    if (i != UINT32_MAX) {
        return ent_del(l->imm[i].loc) ? 0 : l->imm[i].loc;
    }
    for (uint32_t v = 0; v < l->nlevels && l->lv[v].pinned; v++) {
        uint32_t p = level_page_of(&l->lv[v], hash);
        if (p != UINT32_MAX) {
            uint32_t k = page_search(l->lv[v].pg[p].mem, l->lv[v].pg[p].count, hash, 0);
            if (k != UINT32_MAX) {
                uint64_t loc = page_entries(l->lv[v].pg[p].mem)[k].loc;
                return ent_del(loc) ? 0 : loc;
            }
        }
    }
    return 0;
}

/* What a key check looks for, and what it found. */
struct key_check {
    const void *key;
    uint32_t key_bytes;
    bool charged; /* a read's: the blob's key read on the clock */
    const uint8_t **record; /* the read's view of the blob, or NULL */
    uint32_t d; /* found: which key of the signature */
    uint64_t loc; /* found: its location */
    uint32_t taken; /* the keys met holding a blob or tombstone, a bit each */
};

/* Does the blob at @loc hold @key? Its header and key copied, no time or statistics. */
static bool blob_holds_key(struct kv_index *ix, uint64_t loc, const void *key, uint32_t key_bytes)
{
    uint8_t buf[BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES];
    if (loc_len(loc) < BLOB_HEADER_BYTES + key_bytes) {
        return false;
    }
    nand_copy_out(nand_of(ix), loc_addr(loc), buf, BLOB_HEADER_BYTES + key_bytes);
    return buf[1] == key_bytes && memcmp(buf + BLOB_HEADER_BYTES, key, key_bytes) == 0;
}

/* lsm_key_fn: is the key's newest entry @val a blob (or tombstone) of the key wanted? */
static bool key_is(struct kv_index *ix, void *ctx, uint32_t d, uint64_t val, uint64_t *now_ns)
{
    struct key_check *q = ctx;
    if (ent_del(val)) {
        return false;
    }
    q->taken |= 1u << d;
    uint64_t loc = ent_loc(val);
    bool match;
    if (q->charged) {
        const uint8_t *view = NULL;
        match = vlog_key_matches(ix->hash.idx.vl, loc, q->key, q->key_bytes, now_ns, &view);
        if (match && q->record) {
            *q->record = view;
        }
    } else {
        match = blob_holds_key(ix, loc, q->key, q->key_bytes);
    }
    if (match) {
        q->d = d;
        q->loc = loc;
    }
    return match;
}

/*
 * A Store's (and the crash scan's) look-up: the signature's keys and each
 * one's blob key compared, no flash read charged: in an LSM-tree a put is
 * blind, and the old version is found (and paid for) by the compaction
 * that meets it. The memtable insert is one probe of firmware time.
 */
static bool lsm_find(struct kv_index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                     uint64_t *loc, struct kv_index_pos *pos, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    l->mem_probes += now_ns != NULL; /* the memtable insert's search */
    struct key_check q = {key, key_bytes, false, NULL, 0, 0, 0};
    bool found = keys_of(ix, hash, key_is, &q, NULL);
    *pos = pos_of(hash, q.d);
    *loc = q.loc;
    if (!found) {
        /* every key of the signature was met: the one a new key takes, for reserve() and add() */
        l->free_hash = hash;
        l->free_dup = !(q.taken & 1) ? 0 : !l->dup_keys ? 1 : (q.taken & 2) ? 2 : 1;
    }
    return found;
}

/*
 * A read's: the memtable, then each level (a tR for a page not pinned);
 * each key of the signature met is confirmed by its blob's key (a read,
 * as the hash design's), newest first, until one matches.
 */
static bool lsm_lookup(struct kv_index *ix, uint64_t hash, const void *key, uint32_t key_bytes,
                       uint64_t *loc, struct kv_index_pos *pos, uint64_t *now_ns,
                       const uint8_t **record, bool *filtered)
{
    (void)filtered;
    if (record) {
        *record = NULL;
    }
    L(ix)->mem_probes += now_ns != NULL;
    struct key_check q = {key, key_bytes, true, record, 0, 0, 0};
    bool found = keys_of(ix, hash, key_is, &q, now_ns);
    *pos = pos_of(hash, q.d);
    *loc = q.loc;
    return found;
}

/*
 * The key a new key of @hash becomes: the first of the two whose newest
 * entry is absent or a deletion marker; 2 when both hold a blob or a
 * tombstone. Nothing charged. A Store's find() that missed left it for
 * its reserve() and add(): until an add() no key turns from free to taken
 * (set() and remove() act on keys found taken, flushes and compactions
 * on none).
 */
static uint32_t free_dup(struct kv_index *ix, uint64_t hash)
{
    struct lsm_index *l = L(ix);
    if (l->free_hash == hash) {
        return l->free_dup;
    }
    for (uint32_t d = 0; d < 2; d++) {
        uint64_t val;
        if (!newest(ix, hash, d, &val, NULL) || ent_del(val)) {
            return d;
        }
    }
    return 2;
}

/* Room for a new key: refused when two keys of @hash have entries (a third signature match). */
static int lsm_reserve(struct kv_index *ix, uint64_t hash, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    uint32_t d = free_dup(ix, hash);
    if (d > 1) {
        return -1;
    }
    if (mem_find(l, hash, d) != UINT32_MAX) {
        return 0;
    }
    return make_room(ix, now_ns);
}

/* The memtable's table twice as large (merge steps that found no stripe: over its budget). */
static void mem_grow(struct lsm_index *l)
{
    uint64_t *h = l->mhash, *lo = l->mloc;
    uint8_t *u = l->mused;
    uint32_t cap = l->mcap;
    l->mcap *= 2;
    l->mhash = g_new0(uint64_t, l->mcap);
    l->mloc = g_new0(uint64_t, l->mcap);
    l->mused = g_new0(uint8_t, l->mcap);
    l->mcount = 0;
    for (uint32_t i = 0; i < cap; i++) {
        if (u[i]) {
            mem_put(l, h[i], lo[i]); /* the entry value: its key's bit too */
        }
    }
    g_free(h);
    g_free(lo);
    g_free(u);
}

static void lsm_add(struct kv_index *ix, uint64_t hash, uint64_t loc, uint64_t *now_ns)
{
    (void)now_ns;
    struct lsm_index *l = L(ix);
    uint32_t d = free_dup(ix, hash);
    g_assert(d <= 1); /* reserve() found it free, and only add() takes one */
    l->free_hash = 0;
    l->dup_keys += d;
    if (l->mcount + 1 > l->mcap / 2) {
        mem_grow(l); /* past its budget while the frozen run merges after a stripe was lacking */
    }
    mem_put(l, hash, ent_make(loc, d));
}

/*
 * A change of a key the memtable lacks takes a memtable entry
 * (make_room()). It cannot be refused: while merge steps find no stripe
 * the memtable grows past its budget, as the hash design keeps a page it
 * cannot evict (each key at most once: bounded by the keys).
 */
static void lsm_put(struct kv_index *ix, uint64_t hash, uint64_t val, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    if (mem_find(l, hash, ent_dup(val)) == UINT32_MAX) {
        (void)make_room(ix, now_ns);
        if (l->mcount + 1 > l->mcap / 2) {
            mem_grow(l);
        }
    }
    mem_put(l, hash, val);
}

static void lsm_set(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t loc,
                    uint64_t *now_ns)
{
    lsm_put(ix, kv_index_pos_hash(pos), ent_make(loc, pos->c), now_ns);
}

static void lsm_remove(struct kv_index *ix, const struct kv_index_pos *pos, uint64_t *now_ns)
{
    lsm_put(ix, kv_index_pos_hash(pos), ent_make(LSM_DEL, pos->c), now_ns);
}

/* lsm_key_fn: is the key's newest entry @val at the location wanted (struct key_check)? */
static bool key_at(struct kv_index *ix, void *ctx, uint32_t d, uint64_t val, uint64_t *now_ns)
{
    (void)ix;
    (void)now_ns;
    struct key_check *q = ctx;
    q->d = d;
    return !ent_del(val) && ent_loc(val) == q->loc;
}

/* GC's: a blob is live when it is the newest entry of one of its signature's keys. */
static bool lsm_find_loc(struct kv_index *ix, uint64_t hash, uint64_t loc, struct kv_index_pos *pos,
                         uint64_t *now_ns)
{
    struct key_check q = {NULL, 0, false, NULL, 0, loc, 0};
    bool found = keys_of(ix, hash, key_at, &q, now_ns);
    *pos = pos_of(hash, found ? q.d : 0);
    return found;
}

/* GC moves page @tag: its bytes read and programmed again; the level keeps its range. */
static int lsm_page_relocate(struct kv_index *ix, uint64_t ppn, uint32_t tag, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    if (tag >= l->ids_cap || l->id_ppn[tag] != ppn) {
        return 0; /* an older copy */
    }
    struct nand *n = nand_of(ix);
    *now_ns = nand_read(n, ppn, l->page_bytes, *now_ns);
    l->pages_read++;
    memcpy(l->wbuf, nand_page_ptr(n, ppn), n->geo.page_size);
    uint64_t to = stream_program_index(ix->hash.idx.sp, tag, l->wbuf, now_ns);
    if (to == UINT64_MAX) {
        return -1;
    }
    space_valid_add(ix->hash.idx.sp, ppn * n->geo.page_size, -(int64_t)n->geo.page_size, 0);
    space_valid_add(ix->hash.idx.sp, to * n->geo.page_size, n->geo.page_size, 0);
    l->id_ppn[tag] = (uint32_t)to;
    l->pages_written++;
    return 1;
}

/*
 * The prefix walk's chunk: from @from to the end of the deepest level's
 * page holding it (or to the next page's start), the memtable and every
 * level merged, newest first, live entries only.
 */
static void lsm_walk(struct kv_index *ix, uint64_t from, const struct kv_index_entry **ents,
                     uint32_t *n, uint64_t *last, uint64_t *now_ns)
{
    struct lsm_index *l = L(ix);
    *last = UINT64_MAX;
    for (uint32_t v = l->nlevels; v-- > 0;) {
        const struct lsm_level *lv = &l->lv[v];
        if (!lv->n) {
            continue;
        }
        uint32_t p = 0;
        while (p < lv->n && lv->pg[p].last < from) {
            p++;
        }
        if (p < lv->n) {
            *last = lv->pg[p].last; /* the gap before the page is the chunk's too */
        }
        break;
    }
    /* newest first: memtable, frozen run, L0, L1, ...; a later copy of a key is shadowed */
    GArray *g = g_array_new(FALSE, FALSE, sizeof(struct kv_index_entry));
    for (uint32_t i = 0; i < l->mcap; i++) {
        if (l->mused[i] && l->mhash[i] >= from && l->mhash[i] <= *last) {
            struct kv_index_entry e = {l->mhash[i], l->mloc[i]};
            g_array_append_val(g, e);
        }
    }
    if (g->len) {
        qsort(g->data, g->len, sizeof(struct kv_index_entry), entry_cmp);
    }
    uint32_t f0 = imm_lower(l, from), f1 = f0;
    while (f1 < l->imm_n && l->imm[f1].hash <= *last) {
        f1++;
    }
    /* no frozen run: imm is NULL, and NULL + 0 is undefined behaviour (UBSan) */
    uint64_t fm = merge_runs(l, (const struct kv_index_entry *)g->data, g->len,
                             l->imm ? l->imm + f0 : NULL, f1 - f0, false);
    g_array_set_size(g, 0);
    g_array_append_vals(g, l->buf, (guint)fm);
    for (uint32_t v = 0; v < l->nlevels; v++) {
        const struct lsm_level *lv = &l->lv[v];
        GArray *lvl = g_array_new(FALSE, FALSE, sizeof(struct kv_index_entry));
        for (uint32_t p = 0; p < lv->n; p++) {
            if (lv->pg[p].last < from || lv->pg[p].first > *last) {
                continue;
            }
            const uint8_t *mem = page_bytes(ix, &lv->pg[p], now_ns);
            const struct kv_index_entry *e = page_entries(mem);
            for (uint32_t k = 0; k < lv->pg[p].count; k++) {
                if (e[k].hash >= from && e[k].hash <= *last) {
                    g_array_append_val(lvl, e[k]);
                }
            }
        }
        uint64_t m = merge_runs(l, (const struct kv_index_entry *)g->data, g->len,
                                (const struct kv_index_entry *)lvl->data, lvl->len, false);
        g_array_set_size(g, 0);
        g_array_append_vals(g, l->buf, (guint)m);
        g_array_free(lvl, TRUE);
    }
    buf_reserve(l, g->len ? g->len : 1);
    uint32_t k = 0;
    const struct kv_index_entry *e = (const struct kv_index_entry *)g->data;
    for (uint32_t i = 0; i < g->len; i++) {
        if (!ent_del(e[i].loc) && !loc_tombstone(e[i].loc)) {
            l->buf[k] = (struct kv_index_entry){e[i].hash, ent_loc(e[i].loc)};
            /* the seam's order is (hash, loc): a signature's two keys by location */
            if (k && l->buf[k - 1].hash == e[i].hash && l->buf[k - 1].loc > l->buf[k].loc) {
                struct kv_index_entry t = l->buf[k - 1];
                l->buf[k - 1] = l->buf[k];
                l->buf[k] = t;
            }
            k++;
        }
    }
    g_array_free(g, TRUE);
    *n = k;
    *ents = l->buf;
}

static int lsm_write_back(struct kv_index *ix, uint64_t *now_ns)
{
    return lsm_flush(ix, now_ns);
}

static void lsm_settle(struct kv_index *ix, uint64_t *now_ns)
{
    (void)lsm_flush(ix, now_ns);
}

static void lsm_rebuilt(struct kv_index *ix)
{
    (void)ix; /* no filter: the fences and pinned pages are the levels themselves */
}

static uint64_t lsm_nand_bytes(const struct kv_index *ix)
{
    return ix->lsm.nand_bytes;
}

static uint64_t lsm_host_bytes(const struct kv_index *ix)
{
    const struct lsm_index *l = &ix->lsm;
    uint64_t b = (uint64_t)l->mcap * 17 + (uint64_t)l->imm_cap * sizeof(struct kv_index_entry) +
                 (uint64_t)l->ids_cap * sizeof(uint32_t) + l->pinned_bytes +
                 (uint64_t)l->buf_cap * sizeof(struct kv_index_entry);
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        b += (uint64_t)l->lv[v].cap * sizeof(struct lsm_page);
    }
    return b;
}

static void lsm_counters(const struct kv_index *ix, struct kv_index_counters *c)
{
    c->cache_hits = ix->lsm.hits + ix->lsm.mem_probes;
    c->cache_misses = ix->lsm.misses;
    c->pages_evicted_dirty = 0;
}

/* ---- checkpoint: the level manifest ---- */

/* One page in the manifest: where it is, its range and count, its XXH3-64. */
struct lsm_manifest_page {
    uint32_t id, ppn, level, count;
    uint64_t first, last, sum;
};

#define LSM_MANIFEST_HEAD (LSM_MAX_LEVELS * sizeof(uint32_t))

static void lsm_ckpt_save(struct kv_index *ix, struct kv_index_ckpt_head *h, GByteArray *b)
{
    struct lsm_index *l = L(ix);
    struct nand *n = nand_of(ix);
    uint32_t total = 0, counts[LSM_MAX_LEVELS];
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        counts[v] = l->lv[v].n;
        total += counts[v];
    }
    g_byte_array_append(b, (const guint8 *)counts, sizeof(counts));
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        for (uint32_t p = 0; p < l->lv[v].n; p++) {
            const struct lsm_page *pg = &l->lv[v].pg[p];
            uint32_t ppn = l->id_ppn[pg->id];
            struct lsm_manifest_page m = {pg->id,
                                          ppn,
                                          v,
                                          pg->count,
                                          pg->first,
                                          pg->last,
                                          XXH3_64bits(nand_page_ptr(n, ppn), l->page_bytes)};
            g_byte_array_append(b, (const guint8 *)&m, sizeof(m));
        }
    }
    *h = (struct kv_index_ckpt_head){
        .count_a = l->nlevels,
        .count_b = total,
        .hash_seed = ix->hash.idx.hash_seed,
        .nand_bytes = l->nand_bytes,
    };
}

static uint64_t lsm_ckpt_length(const struct kv_index *ix, const struct kv_index_ckpt_head *h,
                                uint64_t total_pages, char *why, size_t why_len)
{
    (void)ix;
    if (h->count_a > LSM_MAX_LEVELS) {
        refuse(why, why_len, "it holds %u levels; there are at most %u", h->count_a,
               LSM_MAX_LEVELS);
        return UINT64_MAX;
    }
    if (h->count_b > total_pages) {
        refuse(why, why_len, "it holds %u index pages; the device has %llu", h->count_b,
               (unsigned long long)total_pages);
        return UINT64_MAX;
    }
    return LSM_MANIFEST_HEAD + (uint64_t)h->count_b * sizeof(struct lsm_manifest_page);
}

static uint64_t lsm_ckpt_max_length(const struct kv_index *ix, uint64_t total_pages)
{
    (void)ix;
    return LSM_MANIFEST_HEAD + total_pages * sizeof(struct lsm_manifest_page);
}

/* The manifest's records, the first of level @v at *first_of[v]. */
static void manifest_starts(const uint8_t *p, uint32_t *counts, uint64_t *start)
{
    memcpy(counts, p, LSM_MANIFEST_HEAD);
    uint64_t at = 0;
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        start[v] = at;
        at += counts[v];
    }
}

static struct lsm_manifest_page manifest_rec(const uint8_t *p, uint64_t i)
{
    struct lsm_manifest_page m;
    memcpy(&m, p + LSM_MANIFEST_HEAD + i * sizeof(m), sizeof(m));
    return m;
}

/* In the manifest's levels above @v, is key @d of @hash's newest entry there? (pages checked) */
static bool shadowed(struct kv_index *ix, const uint8_t *p, const uint32_t *counts,
                     const uint64_t *start, uint32_t v, uint64_t hash, uint32_t d)
{
    struct nand *n = nand_of(ix);
    for (uint32_t u = 0; u < v; u++) {
        uint64_t lo = 0, hi = counts[u];
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (manifest_rec(p, start[u] + mid).last < hash) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if (lo < counts[u]) {
            struct lsm_manifest_page m = manifest_rec(p, start[u] + lo);
            if (m.first <= hash &&
                page_search(nand_page_ptr(n, m.ppn), m.count, hash, d) != UINT32_MAX) {
                return true;
            }
        }
    }
    return false;
}

/* Record @m's page: place, checksum, header, sorted entries of possible lengths. */
static int manifest_page_check(struct kv_index *ix, const struct lsm_manifest_page *m, uint32_t v,
                               uint64_t prev_last, bool has_prev, uint8_t *ids,
                               struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len)
{
    struct lsm_index *l = L(ix);
    struct nand *n = nand_of(ix);
    if (m->level != v || m->id >= n->geo.total_pages || ids[m->id]) {
        return refuse(why, why_len,
                      "lsm page %u of level %u is recorded at level %u (or its id "
                      "repeats or is out of range)",
                      m->id, v, m->level);
    }
    ids[m->id] = 1;
    if (m->count == 0 || m->count > l->slots || m->first > m->last ||
        (has_prev && m->first <= prev_last)) {
        return refuse(why, why_len,
                      "lsm page %u holds %u entries from %#llx to %#llx, which do not fit its "
                      "level (at most %u, after %#llx)",
                      m->id, m->count, (unsigned long long)m->first, (unsigned long long)m->last,
                      l->slots, (unsigned long long)prev_last);
    }
    if (ctx->page_at(ctx->opaque, m->ppn, m->id, why, why_len) != 0) {
        return -1;
    }
    const uint8_t *mem = nand_page_ptr(n, m->ppn);
    if (XXH3_64bits(mem, l->page_bytes) != m->sum) {
        return refuse(why, why_len,
                      "lsm page %u (NAND page %u) does not match its checksum in the checkpoint",
                      m->id, m->ppn);
    }
    struct lsm_page_header ph;
    memcpy(&ph, mem, sizeof(ph));
    if (ph.magic != LSM_PAGE_MAGIC || ph.id != m->id || ph.level != v || ph.count != m->count) {
        return refuse(why, why_len,
                      "lsm page %u has a bad header (magic %#x, id %u, level %u, %u "
                      "entries)",
                      m->id, ph.magic, ph.id, ph.level, ph.count);
    }
    const struct kv_index_entry *e = page_entries(mem);
    for (uint32_t k = 0; k < m->count; k++) {
        if (!e[k].hash || (k && ent_order(&e[k], &e[k - 1]) <= 0) ||
            (k == 0 && e[k].hash != m->first) || (k == m->count - 1 && e[k].hash != m->last)) {
            return refuse(why, why_len, "lsm page %u entry %u is out of order or range", m->id, k);
        }
        uint64_t loc = ent_loc(e[k].loc);
        if (loc == LSM_DEL) {
            continue;
        }
        uint32_t len = loc_len(loc);
        uint64_t max = BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES +
                       (loc_tombstone(loc) ? 0 : KVFTL_VALUE_MAX_BYTES);
        if (len < BLOB_HEADER_BYTES + 1 || len > max) {
            return refuse(why, why_len, "lsm page %u entry %u names a blob of %u bytes", m->id, k,
                          len);
        }
    }
    return 0;
}

/*
 * The live entries of record @m's page (level @v; each key's newest, the
 * pages checked): each inside the value log, the first one's blob key
 * hashing to it under the checkpoint's seed, and the valid bytes they
 * reference added up. A shadowed entry's blob may be gone (GC moved it and
 * freed its stripe): it is never read again.
 */
static int manifest_page_live(struct kv_index *ix, const struct kv_index_ckpt_head *h,
                              const uint8_t *p, const uint32_t *counts, const uint64_t *start,
                              uint32_t v, const struct lsm_manifest_page *m,
                              struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len)
{
    struct nand *n = nand_of(ix);
    const struct kv_index_entry *e = page_entries(nand_page_ptr(n, m->ppn));
    bool keyed = false;
    for (uint32_t k = 0; k < m->count; k++) {
        uint64_t loc = ent_loc(e[k].loc);
        if (loc == LSM_DEL || shadowed(ix, p, counts, start, v, e[k].hash, ent_dup(e[k].loc))) {
            continue;
        }
        if (!ctx->blob_inside(ctx->opaque, loc_addr(loc), loc_len(loc))) {
            return refuse(why, why_len,
                          "lsm page %u entry %u points outside the value log (address %llu, %u "
                          "bytes)",
                          m->id, k, (unsigned long long)loc_addr(loc), loc_len(loc));
        }
        if (!keyed) {
            uint8_t buf[BLOB_HEADER_BYTES + KVFTL_KEY_MAX_BYTES];
            uint32_t kb;
            const uint8_t *key = ctx->blob_key(ctx->opaque, loc, buf, &kb);
            const struct index *x = &ix->hash.idx;
            uint64_t h2 = 0;
            if (key) {
                h2 = x->hash ? x->hash(key, kb) : XXH3_64bits_withSeed(key, kb, h->hash_seed);
                h2 = h2 ? h2 : 1;
            }
            if (h2 != e[k].hash) {
                return refuse(why, why_len,
                              "lsm page %u entry %u names the blob at %llu, which holds another "
                              "key (or the hash seed is wrong)",
                              m->id, k, (unsigned long long)loc_addr(loc));
            }
            keyed = true;
        }
        uint32_t s = (uint32_t)(loc_addr(loc) / n->geo.stripe_bytes);
        ctx->valid[s] += vlog_live_count(ix->hash.idx.vl, ctx->t, loc);
    }
    return 0;
}

static int lsm_ckpt_check(struct kv_index *ix, const struct kv_index_ckpt_head *h, const uint8_t *p,
                          struct kv_index_ckpt_ctx *ctx, char *why, size_t why_len)
{
    struct nand *n = nand_of(ix);
    uint32_t counts[LSM_MAX_LEVELS];
    uint64_t start[LSM_MAX_LEVELS], total = 0;
    manifest_starts(p, counts, start);
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        total += counts[v];
        if (counts[v] && v >= h->count_a) {
            return refuse(why, why_len, "level %u holds %u pages; the checkpoint has %u levels", v,
                          counts[v], h->count_a);
        }
    }
    if (total != h->count_b) {
        return refuse(why, why_len, "its levels hold %llu pages; it counts %u",
                      (unsigned long long)total, h->count_b);
    }
    uint8_t *ids = g_new0(uint8_t, n->geo.total_pages);
    int rc = 0;
    for (uint32_t v = 0; v < LSM_MAX_LEVELS && rc == 0; v++) {
        for (uint32_t i = 0; i < counts[v] && rc == 0; i++) {
            struct lsm_manifest_page m = manifest_rec(p, start[v] + i);
            struct lsm_manifest_page prev = i ? manifest_rec(p, start[v] + i - 1) : m;
            rc = manifest_page_check(ix, &m, v, prev.last, i > 0, ids, ctx, why, why_len);
        }
    }
    g_free(ids);
    for (uint32_t v = 0; v < LSM_MAX_LEVELS && rc == 0; v++) {
        for (uint32_t i = 0; i < counts[v] && rc == 0; i++) {
            struct lsm_manifest_page m = manifest_rec(p, start[v] + i);
            rc = manifest_page_live(ix, h, p, counts, start, v, &m, ctx, why, why_len);
            ctx->valid[nand_stripe_of(n, m.ppn)] += n->geo.page_size;
            ctx->index_bytes += n->geo.page_size;
        }
    }
    return rc;
}

static void lsm_ckpt_install(struct kv_index *ix, const struct kv_index_ckpt_head *h,
                             const uint8_t *p)
{
    struct lsm_index *l = L(ix);
    struct nand *n = nand_of(ix);
    levels_free(l);
    memset(l->mused, 0, l->mcap);
    l->mcount = 0;
    uint32_t counts[LSM_MAX_LEVELS];
    uint64_t start[LSM_MAX_LEVELS];
    manifest_starts(p, counts, start);
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        struct lsm_level *lv = &l->lv[v];
        lv->cap = counts[v];
        lv->pg = g_new0(struct lsm_page, counts[v] ? counts[v] : 1);
        lv->n = counts[v];
        for (uint32_t i = 0; i < counts[v]; i++) {
            struct lsm_manifest_page m = manifest_rec(p, start[v] + i);
            ids_grow(l, (uint64_t)m.id + 1);
            l->id_ppn[m.id] = m.ppn;
            l->ids_used++;
            lv->pg[i] = (struct lsm_page){m.id, m.count, m.first, m.last, NULL};
            const struct kv_index_entry *e = page_entries(nand_page_ptr(n, m.ppn));
            for (uint32_t k = 0; k < m.count; k++) {
                l->dup_keys += ent_dup(e[k].loc);
            }
            if (lv->pinned) {
                lv->pg[i].mem = g_memdup2(nand_page_ptr(n, m.ppn), l->page_bytes);
                l->pinned_bytes += l->page_bytes;
            }
        }
    }
    l->nlevels = h->count_a;
    l->nand_bytes = h->nand_bytes;
    ix->hash.idx.hash_seed = h->hash_seed;
}

/* ---- kvftl_check()'s walk: the pages level by level ---- */

static uint32_t lsm_check_pages(const struct kv_index *ix)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < LSM_MAX_LEVELS; v++) {
        n += ix->lsm.lv[v].n;
    }
    return n;
}

static int lsm_check_page(struct kv_index *ix, uint32_t p, const struct kv_index_entry **ents,
                          uint32_t *n, uint32_t *ppn, uint32_t *bytes, char *err, size_t err_len)
{
    struct lsm_index *l = L(ix);
    uint32_t v = 0;
    while (v < LSM_MAX_LEVELS && p >= l->lv[v].n) {
        p -= l->lv[v].n;
        v++;
    }
    const struct lsm_page *pg = &l->lv[v].pg[p];
    const uint8_t *mem = page_bytes(ix, pg, NULL);
    struct lsm_page_header h;
    memcpy(&h, mem, sizeof(h));
    if (h.magic != LSM_PAGE_MAGIC || h.id != pg->id || h.level != v || h.count != pg->count) {
        return refuse(err, err_len, "lsm page %u has a bad header (magic %#x, id %u, level %u)",
                      pg->id, h.magic, h.id, h.level);
    }
    if (p && l->lv[v].pg[p - 1].last >= pg->first) {
        return refuse(err, err_len, "lsm page %u overlaps the page before it in level %u", pg->id,
                      v);
    }
    const struct kv_index_entry *e = page_entries(mem);
    buf_reserve(l, pg->count);
    *n = 0;
    for (uint32_t k = 0; k < pg->count; k++) {
        if ((k && ent_order(&e[k], &e[k - 1]) <= 0) || e[k].hash < pg->first ||
            e[k].hash > pg->last) {
            return refuse(err, err_len, "lsm page %u entry %u is out of order or range", pg->id, k);
        }
        uint64_t val;
        /* the newest entry of the key is this one (the memtable is empty: settled) */
        if (!ent_del(e[k].loc) && newest(ix, e[k].hash, ent_dup(e[k].loc), &val, NULL) &&
            val == e[k].loc) {
            l->buf[(*n)++] = (struct kv_index_entry){e[k].hash, ent_loc(e[k].loc)};
        }
    }
    *ents = l->buf;
    *ppn = l->id_ppn[pg->id];
    *bytes = l->page_bytes;
    return 0;
}

const struct kv_index_ops lsm_index_ops = {
    .init = lsm_init,
    .fini = lsm_fini,
    .reset = lsm_reset,
    .hash = lsm_hash,
    .prefetch = lsm_prefetch,
    .peek = lsm_peek,
    .find = lsm_find,
    .lookup = lsm_lookup,
    .reserve = lsm_reserve,
    .add = lsm_add,
    .set = lsm_set,
    .remove = lsm_remove,
    .find_loc = lsm_find_loc,
    .page_relocate = lsm_page_relocate,
    .walk = lsm_walk,
    .write_back = lsm_write_back,
    .settle = lsm_settle,
    .rebuilt = lsm_rebuilt,
    .nand_bytes = lsm_nand_bytes,
    .host_bytes = lsm_host_bytes,
    .counters = lsm_counters,
    .ckpt_save = lsm_ckpt_save,
    .ckpt_length = lsm_ckpt_length,
    .ckpt_max_length = lsm_ckpt_max_length,
    .ckpt_check = lsm_ckpt_check,
    .ckpt_install = lsm_ckpt_install,
    .check_pages = lsm_check_pages,
    .check_page = lsm_check_page,
};
