/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sim transport: the device in this process (sim.h). Where QEMU's
 * transport (hw/kvssd ctrl.c, queues.c, dma.c) fetches an SQE from guest
 * memory and walks its PRPs, this one takes the command libkvssd encoded -
 * the whole SQE, as the pci transport sends it - and the caller's buffer as
 * the data pointer; everything after that is the device's own code.
 *
 * Time: the firmware's simulated clock. Commands run one at a time, each
 * arriving when the previous one completed (a host that takes no time), so
 * the simulated time of a run is the device's busy time at queue depth 1,
 * and the host's wall clock measures the firmware's code at native speed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "cmdset.h"
#include "sim.h"

/* How often (simulated time) idle inline streams and staged keys are expired. */
#define SIM_EXPIRE_PERIOD_NS 1000000ull

struct kvssd_sim {
    pthread_mutex_t lock;
    struct kvssd_sim_config cfg;
    struct kvftl *ftl;
    struct kvssd_ns *ns;
    struct kvssd_admin admin;
    struct kvssd_xfer_counters xfer;
    uint64_t now_ns;      /* the simulated clock */
    uint64_t expired_ns;  /* when streams were last expired */
};

/* ---- the spec ------------------------------------------------------------ */

static const size_t prop_offset[] = {
#define KVSSD_PROPERTY(field, ...) offsetof(struct kvssd_sim_props, field),
#include "properties.def"
};

/* One property of properties.def: its value from @text, or a sentence, as -device kvssd's. */
static int set_device_property(struct kvssd_sim_props *props, size_t row,
                               const struct kvssd_property *p, const char *text, char *err,
                               size_t err_len)
{
    void *field = (char *)props + prop_offset[row];
    char range[256];
    uint64_t v = 0;

    switch (p->kind) {
    case KVSSD_PROPERTY_STR:
        *(const char **)field = text;
        return 0;
    case KVSSD_PROPERTY_PRESET:
        return 0; /* read before the others: kvssd_sim_parse() */
    case KVSSD_PROPERTY_BOOL:
        if (!strcmp(text, "on") || !strcmp(text, "off")) {
            *(bool *)field = text[1] == 'n';
            return 0;
        }
        kvssd_property_range(p, range, sizeof(range));
        snprintf(err, err_len, "%s is '%s'; it must be %s", p->prop, text, range);
        return -1;
    default:
        /* a number as the device reads it (properties.h: <bench/units.h>) */
        if (!kvssd_property_parse(p, text, &v, err, err_len)) {
            return -1;
        }
        if (p->kind == KVSSD_PROPERTY_U8) {
            *(uint8_t *)field = (uint8_t)v;
        } else {
            *(uint32_t *)field = (uint32_t)v;
        }
        return 0;
    }
}

/* The defaults of properties.def, as realize leaves them. */
static void device_defaults(struct kvssd_sim_props *props)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);

    for (size_t i = 0; i < count; i++) {
        void *field = (char *)props + prop_offset[i];
        switch (p[i].kind) {
        case KVSSD_PROPERTY_STR:
            *(const char **)field = p[i].dflt_text;
            break;
        case KVSSD_PROPERTY_PRESET:
            *(int *)field = 0;
            break;
        case KVSSD_PROPERTY_BOOL:
            *(bool *)field = p[i].dflt != 0;
            break;
        case KVSSD_PROPERTY_U8:
            *(uint8_t *)field = (uint8_t)p[i].dflt;
            break;
        default:
            *(uint32_t *)field = (uint32_t)p[i].dflt;
            break;
        }
    }
}

/* The row of properties.def named @name, or -1. */
static long device_property_row(const char *name)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);

    for (size_t i = 0; i < count; i++) {
        if (!strcmp(p[i].prop, name)) {
            return (long)i;
        }
    }
    return -1;
}

/* A firmware tunable that -device kvssd takes, by its property name. */
static const struct kvftl_tunable *device_tunable(const char *name)
{
    const struct kvftl_tunable *t = kvftl_tunable_find(name);
    return t && t->qemu && !strcmp(t->prop, name) ? t : NULL;
}

/* The preset named in the props (the last one), into cfg->ftl; 0 or a sentence. */
static int apply_preset(char **names, char **values, size_t n, struct kvssd_sim_config *cfg,
                        char *err, size_t err_len)
{
    const char *preset = "default";
    char range[256];

    for (size_t i = 0; i < n; i++) {
        if (!strcmp(names[i], "preset")) {
            preset = values[i];
        }
    }
    for (int i = 0; i < KVFTL_PRESETS; i++) {
        if (!strcmp(preset, kvftl_preset_names[i])) {
            cfg->props.preset = i;
            return kvftl_config_preset(&cfg->ftl, preset);
        }
    }
    kvssd_property_range(&kvssd_properties(&(size_t){0})[device_property_row("preset")], range,
                         sizeof(range));
    snprintf(err, err_len, "preset is '%s'; it must be %s", preset, range);
    return -1;
}

/* One "name=value" that is not the preset: a device property or a firmware tunable. */
static int apply_property(struct kvssd_sim_config *cfg, const char *name, const char *value,
                          char *err, size_t err_len)
{
    size_t count;
    const struct kvssd_property *rows = kvssd_properties(&count);
    long row = device_property_row(name);
    const struct kvftl_tunable *t;

    if (!strcmp(name, "image")) {
        snprintf(err, err_len,
                 "image is given before the first comma (sim:IMAGE[,prop=value...]), "
                 "not as a property");
        return -1;
    }
    if (row >= 0) {
        return set_device_property(&cfg->props, (size_t)row, &rows[row], value, err, err_len);
    }
    t = device_tunable(name);
    if (!t) {
        snprintf(err, err_len,
                 "'%s' is not a property of the device; the properties are those of "
                 "-device kvssd (docs/properties.md)",
                 name);
        return -1;
    }
    if ((t->kind == KVFTL_TUNABLE_BOOL || t->kind == KVFTL_TUNABLE_ENUM) &&
        !strcmp(value, "auto")) {
        return 0; /* the preset's, as the QEMU property's "auto" */
    }
    if (t->kind == KVFTL_TUNABLE_U32 || t->kind == KVFTL_TUNABLE_U64) {
        /* as the device reads it: its unset value (0) leaves the preset's too */
        uint64_t v;
        if (!kvssd_tunable_property_parse(t, value, &v, err, err_len)) {
            return -1;
        }
        if (v != kvssd_tunable_unset(t)) {
            kvftl_tunable_put(&cfg->ftl, t, v);
        }
        return 0;
    }
    return kvftl_tunable_parse(&cfg->ftl, t, name, value, err, err_len);
}

int kvssd_sim_parse(const char *spec, struct kvssd_sim_config *cfg, char *err, size_t err_len)
{
    char *names[KVSSD_SIM_PROPS_MAX], *values[KVSSD_SIM_PROPS_MAX];
    size_t n = 0, len = spec ? strnlen(spec, KVSSD_SIM_SPEC_MAX + 1) : 0;

    memset(cfg, 0, sizeof(*cfg));
    if (len > KVSSD_SIM_SPEC_MAX) {
        snprintf(err, err_len, "the image and properties are longer than %u bytes",
                 KVSSD_SIM_SPEC_MAX);
        return -1;
    }
    memcpy(cfg->text, spec ? spec : "", len);
    cfg->text[len] = '\0';
    char *image = cfg->text, *next = strchr(image, ',');
    if (next) {
        *next++ = '\0';
    }
    if (!*image) {
        snprintf(err, err_len, "no image file: give one as sim:IMAGE[,prop=value...]");
        return -1;
    }
    while (next) {
        char *prop = next, *eq;
        next = strchr(prop, ',');
        if (next) {
            *next++ = '\0';
        }
        eq = strchr(prop, '=');
        if (!eq || eq == prop) {
            snprintf(err, err_len, "property '%s' is not prop=value", prop);
            return -1;
        }
        if (n == KVSSD_SIM_PROPS_MAX) {
            snprintf(err, err_len, "more than %u properties", KVSSD_SIM_PROPS_MAX);
            return -1;
        }
        *eq = '\0';
        names[n] = prop;
        values[n++] = eq + 1;
    }
    device_defaults(&cfg->props);
    if (apply_preset(names, values, n, cfg, err, err_len)) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], "preset") && apply_property(cfg, names[i], values[i], err, err_len)) {
            return -1;
        }
    }
    cfg->ftl.image_path = image;
    bool index_asked = false;
    for (size_t i = 0; i < n; i++) {
        index_asked |= !strcmp(names[i], "index") && strcmp(values[i], "auto");
    }
    if (!index_asked) {
        kvftl_config_image_index(&cfg->ftl); /* an existing image keeps its design */
    }
    if (cfg->ftl.command_set != KVFTL_CMDSET_KV) {
        snprintf(err, err_len, "command-set is '%s'; libkvssd opens a KV namespace: it must be kv",
                 kvftl_command_set_names[cfg->ftl.command_set]);
        return -1;
    }
    return kvftl_config_check(&cfg->ftl, err, err_len) ? -1 : 0;
}

/* ---- the device ---------------------------------------------------------- */

/* Queue management: the sim transport has no queues to create or delete. */
static uint16_t no_queue_cq(void *opaque, uint16_t qid, uint16_t qsize0, uint64_t base,
                            uint16_t vector, bool ien, bool pc)
{
    (void)opaque, (void)qid, (void)qsize0, (void)base, (void)vector, (void)ien, (void)pc;
    return KVSSD_SC_INVALID_QID | KVSSD_SC_DNR;
}

static uint16_t no_queue_sq(void *opaque, uint16_t qid, uint16_t qsize0, uint64_t base,
                            uint16_t cqid, bool pc)
{
    (void)opaque, (void)qid, (void)qsize0, (void)base, (void)cqid, (void)pc;
    return KVSSD_SC_INVALID_QID | KVSSD_SC_DNR;
}

static uint16_t no_queue_delete(void *opaque, uint16_t qid)
{
    (void)opaque, (void)qid;
    return KVSSD_SC_INVALID_QID | KVSSD_SC_DNR;
}

static const struct kvssd_admin_ops sim_queue_ops = {
    .create_cq = no_queue_cq,
    .create_sq = no_queue_sq,
    .delete_sq = no_queue_delete,
    .delete_cq = no_queue_delete,
};

int kvssd_sim_open(const char *spec, struct kvssd_sim **simp, char *err, size_t err_len)
{
    struct kvssd_sim *sim = calloc(1, sizeof(*sim));

    if (!sim) {
        snprintf(err, err_len, "out of memory");
        return -KVSSD_ERR_SYSTEM;
    }
    if (kvssd_sim_parse(spec, &sim->cfg, err, err_len)) {
        free(sim);
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    sim->ftl = kvftl_open(&sim->cfg.ftl, err, err_len);
    if (!sim->ftl) {
        free(sim);
        return -KVSSD_ERR_NO_DEVICE;
    }
    const struct kvssd_sim_props *p = &sim->cfg.props;
    struct kvssd_ns_config nc = {
        .tag_table_entries = p->tag_table_entries,
        .inline_timeout_ns = (uint64_t)p->inline_timeout_ms * 1000000,
    };
    sim->ns = kvssd_ns_new(sim->ftl, &nc, &sim->xfer, err, err_len);
    if (!sim->ns) {
        kvftl_close(sim->ftl);
        free(sim);
        return -KVSSD_ERR_INVALID_ARGUMENT;
    }
    struct kvssd_admin *a = &sim->admin;
    snprintf(a->serial, sizeof(a->serial), "%s", p->serial);
    snprintf(a->model, sizeof(a->model), "KVSSD Key-Value SSD simulator (sim:)");
    snprintf(a->firmware, sizeof(a->firmware), "kvftl1.0");
    a->vid = KVSSD_PCI_VENDOR_ID;
    a->ssvid = KVSSD_PCI_VENDOR_ID;
    a->mdts = p->mdts;
    a->max_ioqpairs = p->max_ioqpairs;
    a->vwc_present = !sim->cfg.ftl.plp;
    a->ftl = sim->ftl;
    a->ns = sim->ns;
    a->xfer = &sim->xfer;
    a->dma_unit_bytes = p->dma_unit;
    a->ops = &sim_queue_ops;
    a->opaque = sim;
    a->power_cycles = 1;
    a->preset = (uint8_t)p->preset; /* checked by kvssd_sim_parse() */
    a->latency = p->latency;
    kvssd_admin_init(a);
    pthread_mutex_init(&sim->lock, NULL);
    *simp = sim;
    return 0;
}

void kvssd_sim_close(struct kvssd_sim *sim)
{
    if (!sim) {
        return;
    }
    kvssd_ns_free(sim->ns);
    kvftl_close(sim->ftl); /* flush, then the checkpoint */
    pthread_mutex_destroy(&sim->lock);
    free(sim);
}

/* ---- one command --------------------------------------------------------- */

/* The caller's buffer as the command's data pointer; the furthest byte moved each way. */
struct sim_buf {
    uint8_t *p;
    uint32_t len;
    uint64_t h2d, d2h;
};

static uint16_t sim_from_host(void *opaque, uint64_t off, void *buf, uint32_t len)
{
    struct sim_buf *b = opaque;
    if (off > b->len || len > b->len - off) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(buf, b->p + off, len);
    b->h2d = off + len > b->h2d ? off + len : b->h2d;
    return KVSSD_SC_SUCCESS;
}

static uint16_t sim_to_host(void *opaque, uint64_t off, const void *buf, uint32_t len)
{
    struct sim_buf *b = opaque;
    if (off > b->len || len > b->len - off) {
        return KVSSD_SC_DATA_XFER_ERROR;
    }
    memcpy(b->p + off, buf, len);
    b->d2h = off + len > b->d2h ? off + len : b->d2h;
    return KVSSD_SC_SUCCESS;
}

/* Bytes a DMA engine moving whole dma units moves for @bytes of one buffer. */
static uint64_t dma_units(const struct kvssd_sim *sim, uint64_t bytes)
{
    uint64_t unit = sim->cfg.props.dma_unit;
    return (bytes + unit - 1) / unit * unit;
}

/* An admin command; returns its completion time. */
static uint64_t run_admin(struct kvssd_sim *sim, const struct kvssd_sqe *sqe, struct sim_buf *b,
                          uint16_t *status, uint32_t *dw0, uint32_t *dw1)
{
    struct kvssd_admin_req req = {.sqe = sqe, .now_ns = sim->now_ns};

    if (kvssd_sqe_opcode(sqe) == KVSSD_ADM_ASYNC_EVENT) {
        /* it completes on a later event: a synchronous transport cannot hold it */
        *status = KVSSD_SC_INVALID_OPCODE | KVSSD_SC_DNR;
        return sim->now_ns;
    }
    if (b->len) {
        req.dptr = (struct kvssd_dptr){b, sim_from_host, sim_to_host};
    }
    kvssd_admin_execute(&sim->admin, &req);
    *status = req.status;
    *dw0 = req.dw0;
    *dw1 = req.dw1;
    return sim->now_ns;
}

/* An I/O command, as queues.c's execute_io() runs one; returns its completion time. */
static uint64_t run_io(struct kvssd_sim *sim, const struct kvssd_sqe *sqe, struct sim_buf *b,
                       uint16_t *status, uint32_t *dw0, uint32_t *dw1)
{
    uint64_t now = sim->now_ns;
    struct kvssd_req req = {.sqe = sqe, .now_ns = now};

    *status = kvssd_admin_io_check(&sim->admin, sqe); /* fused; the NSID */
    if (*status != KVSSD_SC_SUCCESS) {
        return now;
    }
    if (now - sim->expired_ns >= SIM_EXPIRE_PERIOD_NS) {
        kvssd_ns_expire(sim->ns, now);
        sim->expired_ns = now;
    }
    uint64_t inline_before = sim->xfer.inline_bytes;
    if (b->len) {
        req.dptr = (struct kvssd_dptr){b, sim_from_host, sim_to_host};
    }
    kvssd_kv_execute(sim->ns, &req);
    /* write-through with the write cache disabled, SMART */
    kvssd_admin_io_done(&sim->admin, &req, b->d2h,
                        b->h2d + (sim->xfer.inline_bytes - inline_before));
    sim->xfer.data_h2d_bytes += dma_units(sim, b->h2d);
    sim->xfer.data_d2h_bytes += dma_units(sim, b->d2h);
    *status = req.status;
    *dw0 = req.dw0;
    *dw1 = req.dw1;
    return req.done_ns;
}

int kvssd_sim_submit(struct kvssd_sim *sim, struct kvssd_cmd *cmd, struct kvssd_result *res)
{
    struct sim_buf b = {cmd->data, cmd->data ? cmd->data_len : 0, 0, 0};
    uint16_t status = KVSSD_SC_SUCCESS;
    uint32_t dw0 = 0, dw1 = 0;
    uint64_t done;

    pthread_mutex_lock(&sim->lock);
    sim->xfer.sqe_fetch_bytes += KVSSD_SQE_BYTES;
    if (cmd->admin) {
        done = run_admin(sim, &cmd->sqe, &b, &status, &dw0, &dw1);
    } else {
        done = run_io(sim, &cmd->sqe, &b, &status, &dw0, &dw1);
    }
    sim->xfer.cqe_post_bytes += KVSSD_CQE_BYTES;
    if (done > sim->now_ns) {
        sim->now_ns = done; /* the next command arrives when this one completed */
    }
    pthread_mutex_unlock(&sim->lock);
    res->commands++;
    res->status = status & KVSSD_STATUS_CODE_MASK;
    res->dw0 = dw0;
    res->dw1 = dw1;
    return kvssd_status_to_err(status);
}
