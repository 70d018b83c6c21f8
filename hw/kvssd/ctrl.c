/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvssd: an emulated NVMe Key-Value SSD. This file is the PCI function:
 * properties, realize/unrealize, the BAR0 registers (CAP, VS, INTMS/INTMC,
 * CC, CSTS, AQA, ASQ, ACQ), controller enable, reset and shutdown.
 * Queues and doorbells are in queues.c, data pointers in dma.c, the admin
 * command set in admin.c, the KV command set in kv.c and, with
 * command-set=nvm, the NVM command set in nvm.c.
 *
 *   -device kvssd,serial=KV0001[,image=/path/nand.img][,latency=on][,...]
 *   -device kvssd,serial=BLK0001,command-set=nvm[,lba-bytes=512][,...]  a block SSD
 *   -device kvssd,help   lists every property (docs/properties.md explains them)
 */
#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/cutils.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "system/system.h"

#include "compat.h"
#include "kvssd.h"
#include "trace.h"

/* Controller reset (CC.EN 1 -> 0, or a PCI reset): queues gone, streams dropped. */
static void kvssd_ctrl_reset(KvssdState *n)
{
    kvssd_queues_reset(n);
    kvssd_admin_reset(&n->admin);
    if (n->ns) {
        kvssd_ns_reset(n->ns);
    }
    n->csts &= ~(KVSSD_CSTS_RDY | KVSSD_CSTS_CFS);
    n->intms = 0;
}

/* A guest's register write the device refuses or ignores: a trace point and a guest-error line. */
static void kvssd_reg_guest_error(KvssdState *n, hwaddr addr, unsigned size, uint64_t val,
                                  const char *why)
{
    trace_kvssd_reg_guest_error(addr, size, val, why);
    kvssd_guest_error(n, "register write at 0x%" HWADDR_PRIx " (%u bytes, value 0x%" PRIx64 "): %s",
                      addr, size, val, why);
}

static void kvssd_ctrl_enable(KvssdState *n)
{
    uint32_t css = KVSSD_CC_CSS(n->cc);
    const char *why = css != KVSSD_CC_CSS_NVM && css != KVSSD_CC_CSS_ALL
                          ? "CC.CSS is neither 000b (NVM) nor 110b (all I/O command sets)"
                      : KVSSD_CC_MPS(n->cc) != 0 ? "CC.MPS is not 0 (4 KiB pages, CAP.MPSMAX = 0)"
                      : KVSSD_CC_AMS(n->cc) != 0 ? "CC.AMS is not 0 (round robin)"
                      : !kvssd_admin_queue_setup(n) ? "the admin queues (AQA, ASQ, ACQ) are invalid"
                                                    : NULL;

    if (why) {
        trace_kvssd_enable_fail(n->cc, n->aqa, n->asq, n->acq);
        kvssd_guest_error(n,
                          "controller enable refused (CSTS.CFS set): %s (CC 0x%" PRIx32
                          " AQA 0x%" PRIx32 " ASQ 0x%" PRIx64 " ACQ 0x%" PRIx64 ")",
                          why, n->cc, n->aqa, n->asq, n->acq);
        n->csts |= KVSSD_CSTS_CFS;
        return;
    }
    n->csts = KVSSD_CSTS_RDY;
    trace_kvssd_enable(n->cc);
}

static void kvssd_shutdown(KvssdState *n)
{
    struct kvftl_cpl cpl;

    kvftl_flush(n->ftl, kvssd_now_ns(), &cpl);
    n->csts = (n->csts & ~KVSSD_CSTS_SHST_MASK) | KVSSD_CSTS_SHST_DONE;
    trace_kvssd_shutdown(cpl.status);
}

static void kvssd_write_cc(KvssdState *n, uint32_t val)
{
    uint32_t old = n->cc;

    n->cc = val;
    if ((val & KVSSD_CC_EN) && !(old & KVSSD_CC_EN)) {
        n->csts &= ~KVSSD_CSTS_SHST_MASK;
        kvssd_ctrl_enable(n);
    } else if (!(val & KVSSD_CC_EN) && (old & KVSSD_CC_EN)) {
        kvssd_ctrl_reset(n);
    }
    if (KVSSD_CC_SHN(val) && !KVSSD_CC_SHN(old)) {
        kvssd_shutdown(n);
    } else if (!KVSSD_CC_SHN(val) && KVSSD_CC_SHN(old)) {
        n->csts &= ~KVSSD_CSTS_SHST_MASK;
    }
}

static uint64_t kvssd_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    KvssdState *n = opaque;
    uint8_t regs[KVSSD_REG_ACQ + 8];
    uint64_t v = 0;

    n->xfer.mmio_other_bytes += size;
    if (addr >= sizeof(regs) || addr + size > sizeof(regs)) {
        return 0;                    /* reserved and doorbells read as zero */
    }
    memset(regs, 0, sizeof(regs));
    stq_le_p(regs + KVSSD_REG_CAP, n->cap);
    stl_le_p(regs + KVSSD_REG_VS, n->vs);
    stl_le_p(regs + KVSSD_REG_INTMS, n->intms);
    stl_le_p(regs + KVSSD_REG_INTMC, n->intms);
    stl_le_p(regs + KVSSD_REG_CC, n->cc);
    stl_le_p(regs + KVSSD_REG_CSTS, n->csts);
    stl_le_p(regs + KVSSD_REG_AQA, n->aqa);
    stq_le_p(regs + KVSSD_REG_ASQ, n->asq);
    stq_le_p(regs + KVSSD_REG_ACQ, n->acq);
    v = ldn_le_p(regs + addr, size);
    trace_kvssd_mmio_read(addr, size, v);
    return v;
}

static void kvssd_mmio_write(void *opaque, hwaddr addr, uint64_t data, unsigned size)
{
    KvssdState *n = opaque;

    if (addr >= KVSSD_REG_SQ0TDBL) {
        if (size == 4) {
            kvssd_doorbell_write(n, addr, (uint32_t)data);
        } else {
            n->xfer.mmio_other_bytes += size;
            kvssd_reg_guest_error(n, addr, size, data, "a doorbell takes 4-byte writes; ignored");
        }
        return;
    }
    n->xfer.mmio_other_bytes += size;
    trace_kvssd_mmio_write(addr, size, data);
    switch (addr) {
    case KVSSD_REG_INTMS:
    case KVSSD_REG_INTMC:
    case KVSSD_REG_CC:
    case KVSSD_REG_AQA:
        if (size != 4) {
            kvssd_reg_guest_error(n, addr, size, data, "a 32-bit register; ignored");
            return;
        }
        break;
    default:
        break;
    }
    switch (addr) {
    case KVSSD_REG_INTMS:
        n->intms |= data & 1;
        kvssd_irq_update(n);
        break;
    case KVSSD_REG_INTMC:
        n->intms &= ~(data & 1);
        kvssd_irq_update(n);
        break;
    case KVSSD_REG_CC:
        kvssd_write_cc(n, (uint32_t)data);
        break;
    case KVSSD_REG_AQA:
        if (!(n->cc & KVSSD_CC_EN)) {
            n->aqa = data & KVSSD_AQA_MASK;
        } else {
            kvssd_reg_guest_error(n, addr, size, data, "AQA is read-only while CC.EN = 1; ignored");
        }
        break;
    case KVSSD_REG_ASQ:
    case KVSSD_REG_ASQ + 4:
    case KVSSD_REG_ACQ:
    case KVSSD_REG_ACQ + 4: {
        if (n->cc & KVSSD_CC_EN) {
            kvssd_reg_guest_error(n, addr, size, data,
                                  "ASQ and ACQ are read-only while CC.EN = 1; ignored");
            break;
        }
        if ((addr == KVSSD_REG_ASQ || addr == KVSSD_REG_ACQ) && (data & 0xfffull)) {
            kvssd_reg_guest_error(n, addr, size, data,
                                  "bits 11:0 are reserved (the queue is 4 KiB aligned); cleared");
        }
        uint64_t *reg = addr < KVSSD_REG_ACQ ? &n->asq : &n->acq;
        hwaddr lo = addr < KVSSD_REG_ACQ ? KVSSD_REG_ASQ : KVSSD_REG_ACQ;
        if (size == 8 && addr == lo) {
            *reg = data;
        } else if (size == 4 && addr == lo) {
            *reg = (*reg & 0xffffffff00000000ull) | (uint32_t)data;
        } else if (size == 4) {
            *reg = (*reg & 0xffffffffull) | data << 32;
        }
        *reg &= ~0xfffull;           /* bits 11:0 reserved */
        break;
    }
    default:
        /* CAP, VS, CSTS are read only; NSSR is not supported (CAP.NSSRS = 0) */
        kvssd_reg_guest_error(n, addr, size, data,
                              "not a writable register (CAP, VS and CSTS are read-only, "
                              "NSSR is not supported); ignored");
        break;
    }
}

static const MemoryRegionOps kvssd_mmio_ops = {
    .read = kvssd_mmio_read,
    .write = kvssd_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = {.min_access_size = 4, .max_access_size = 8},
    .valid = {.min_access_size = 4, .max_access_size = 8},
};

/* ---- realize ------------------------------------------------------------- */

/*
 * Enum properties: preset (properties.def) and every firmware tunable of
 * kind ENUM (tunables.def: command-set, packing, gc-policy). The field is an
 * int, the index of the value; the property's QEnumLookup holds the names,
 * so QOM and -device kvssd,help know them and QEMU refuses any other name
 * before realize. The names are the firmware's (kvftl_*_names[]): not
 * constant expressions, so class_init copies them into the lookups. A
 * tunable's enum has one more value, "auto", after the firmware's last: the
 * preset's value, the default.
 */
#define KVSSD_ENUM_AUTO "auto"

/* "block, all, selective, backfill or auto (the preset's)" */
static void kvssd_enum_values_text(const QEnumLookup *lookup, char *buf, size_t size)
{
    size_t n = 0;

    buf[0] = 0;
    for (int i = 0; i < lookup->size && n < size; i++) {
        n += (size_t)snprintf(buf + n, size - n, "%s%s",
                              i == 0                  ? ""
                              : i == lookup->size - 1 ? " or "
                                                      : ", ",
                              lookup->array[i]);
    }
    if (n < size && strcmp(lookup->array[lookup->size - 1], KVSSD_ENUM_AUTO) == 0) {
        snprintf(buf + n, size - n, " (the preset's)");
    }
}

static void kvssd_enum_get(Object *obj, Visitor *v, const char *name, void *opaque, Error **errp)
{
    const Property *prop = opaque;
    int *field = object_field_prop_ptr(obj, prop);

    visit_type_enum(v, name, field, prop->info->enum_table, errp);
}

/* A name of the lookup, else the sentence naming the value and the allowed ones. */
static void kvssd_enum_set(Object *obj, Visitor *v, const char *name, void *opaque, Error **errp)
{
    const Property *prop = opaque;
    const QEnumLookup *lookup = prop->info->enum_table;
    int *field = object_field_prop_ptr(obj, prop);
    g_autofree char *text = NULL;
    char values[256];

    if (!visit_type_str(v, name, &text, errp)) {
        return;
    }
    for (int i = 0; i < lookup->size; i++) {
        if (strcmp(text, lookup->array[i]) == 0) {
            *field = i;
            return;
        }
    }
    kvssd_enum_values_text(lookup, values, sizeof(values));
    error_setg(errp, "%s is '%s'; it must be %s", name, text, values);
}

static void kvssd_enum_set_default(ObjectProperty *op, const Property *prop)
{
    object_property_set_default_str(op,
                                    qapi_enum_lookup(prop->info->enum_table, (int)prop->defval.i));
}

/* The lookup, PropertyInfo and value names of one enum property. */
#define KVSSD_ENUM_INFO(name, count)                                                  \
    static const char *kvssd_##name##_values[(count)];                                \
    static const QEnumLookup kvssd_##name##_lookup = {.array = kvssd_##name##_values, \
                                                      .size = (count)};               \
    static const PropertyInfo kvssd_##name##_info = {                                 \
        .type = "kvftl_" #name,                                                       \
        .enum_table = &kvssd_##name##_lookup,                                         \
        .get = kvssd_enum_get,                                                        \
        .set = kvssd_enum_set,                                                        \
        .set_default_value = kvssd_enum_set_default,                                  \
    };

KVSSD_ENUM_INFO(preset, KVFTL_PRESETS)
#define KVSSD_ENUM_OF_LIB(kind, field, max)
#define KVSSD_ENUM_OF_QEMU(kind, field, max) KVSSD_ENUM_OF_##kind(field, max)
#define KVSSD_ENUM_OF_U32(field, max)
#define KVSSD_ENUM_OF_U64(field, max)
#define KVSSD_ENUM_OF_BOOL(field, max)
#define KVSSD_ENUM_OF_STR(field, max)
#define KVSSD_ENUM_OF_ENUM(field, max) KVSSD_ENUM_INFO(field, (max) + 2)
#define KVFTL_TUNABLE(field, kind, where, prop, unit, d, pm, cos, min, max, ...) \
    KVSSD_ENUM_OF_##where(kind, field, max)
#include <kvftl/tunables.def>

/* The value of an enum tunable's property that means "the preset's". */
static int kvssd_enum_auto(const struct kvftl_tunable *t)
{
    return (int)t->max + 1;
}

/* Fill the lookups' names (class_init, before the properties are added). */
static void kvssd_enum_names_init(void)
{
    for (int i = 0; i < KVFTL_PRESETS; i++) {
        kvssd_preset_values[i] = kvftl_preset_names[i];
    }
#define KVSSD_ENUM_NAMES_LIB(kind, field)
#define KVSSD_ENUM_NAMES_QEMU(kind, field) KVSSD_ENUM_NAMES_##kind(field)
#define KVSSD_ENUM_NAMES_U32(field)
#define KVSSD_ENUM_NAMES_U64(field)
#define KVSSD_ENUM_NAMES_BOOL(field)
#define KVSSD_ENUM_NAMES_STR(field)
#define KVSSD_ENUM_NAMES_ENUM(field)                                  \
    {                                                                 \
        const struct kvftl_tunable *t = kvftl_tunable_find(#field);   \
        for (uint64_t i = 0; i <= t->max; i++) {                      \
            kvssd_##field##_values[i] = t->names[i];                  \
        }                                                             \
        kvssd_##field##_values[kvssd_enum_auto(t)] = KVSSD_ENUM_AUTO; \
    }
#define KVFTL_TUNABLE(field, kind, where, ...) KVSSD_ENUM_NAMES_##where(kind, field)
#include <kvftl/tunables.def>
}

/*
 * Number properties: properties.def's U8, U32 and SIZE32 rows and every U32
 * or U64 firmware tunable. QEMU's integer and size properties would read
 * the text themselves (no 64Mi, no 1e6); these read it as sim: and every
 * tool do, through kvssd_property_parse() and kvssd_tunable_property_parse()
 * (properties.h, <bench/units.h>), and refuse a bad one with the same
 * sentence. The value is text, in JSON too ("index-dram-bytes": "64Mi");
 * it reads back (qom-get) as a number. The type names are QEMU's (uint32,
 * size), which -device kvssd,help shows; the info gives the field's width.
 */
static void kvssd_number_get(Object *obj, Visitor *v, const char *name, void *opaque, Error **errp);
static void kvssd_number_set(Object *obj, Visitor *v, const char *name, void *opaque, Error **errp);
static void kvssd_number_set_default(ObjectProperty *op, const Property *prop);

#define KVSSD_NUMBER_INFO(name, type_name)             \
    static const PropertyInfo kvssd_##name##_info = {  \
        .type = type_name,                             \
        .get = kvssd_number_get,                       \
        .set = kvssd_number_set,                       \
        .set_default_value = kvssd_number_set_default, \
    };
KVSSD_NUMBER_INFO(u8, "uint8")
KVSSD_NUMBER_INFO(u32, "uint32")
KVSSD_NUMBER_INFO(u64, "uint64")
KVSSD_NUMBER_INFO(size32, "size")
KVSSD_NUMBER_INFO(size64, "size")

/* The width of a number property's field, by its info. */
static size_t kvssd_number_bytes(const Property *prop)
{
    if (prop->info == &kvssd_u8_info) {
        return sizeof(uint8_t);
    }
    if (prop->info == &kvssd_u32_info || prop->info == &kvssd_size32_info) {
        return sizeof(uint32_t);
    }
    return sizeof(uint64_t);
}

static uint64_t kvssd_number_load(Object *obj, const Property *prop)
{
    void *field = object_field_prop_ptr(obj, prop);

    switch (kvssd_number_bytes(prop)) {
    case sizeof(uint8_t):
        return *(uint8_t *)field;
    case sizeof(uint32_t):
        return *(uint32_t *)field;
    default:
        return *(uint64_t *)field;
    }
}

static void kvssd_number_store(Object *obj, const Property *prop, uint64_t value)
{
    void *field = object_field_prop_ptr(obj, prop);

    switch (kvssd_number_bytes(prop)) {
    case sizeof(uint8_t):
        *(uint8_t *)field = (uint8_t)value;
        break;
    case sizeof(uint32_t):
        *(uint32_t *)field = (uint32_t)value;
        break;
    default:
        *(uint64_t *)field = value;
        break;
    }
}

/* The row of properties.def named @prop, or NULL (a firmware tunable). */
static const struct kvssd_property *kvssd_property_lookup(const char *prop)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);

    for (size_t i = 0; i < count; i++) {
        if (strcmp(p[i].prop, prop) == 0) {
            return &p[i];
        }
    }
    return NULL;
}

static void kvssd_number_get(Object *obj, Visitor *v, const char *name, void *opaque, Error **errp)
{
    const Property *prop = opaque;
    uint64_t value = kvssd_number_load(obj, prop);

    if (prop->info == &kvssd_size32_info || prop->info == &kvssd_size64_info) {
        visit_type_size(v, name, &value, errp);
    } else {
        visit_type_uint64(v, name, &value, errp);
    }
}

static void kvssd_number_set(Object *obj, Visitor *v, const char *name, void *opaque, Error **errp)
{
    const Property *prop = opaque;
    const struct kvssd_property *row = kvssd_property_lookup(prop->name);
    g_autofree char *text = NULL;
    char err[512];
    uint64_t value;
    bool ok;

    if (!visit_type_str(v, name, &text, errp)) {
        return;
    }
    if (row) {
        ok = kvssd_property_parse(row, text, &value, err, sizeof(err));
    } else {
        ok = kvssd_tunable_property_parse(kvftl_tunable_find(prop->name), text, &value, err,
                                          sizeof(err));
    }
    if (!ok) {
        error_setg(errp, "%s", err);
        return;
    }
    kvssd_number_store(obj, prop, value);
}

/* The default as text, as the value comes (set reads text only). */
static void kvssd_number_set_default(ObjectProperty *op, const Property *prop)
{
    g_autofree char *text = g_strdup_printf("%" PRIu64, prop->defval.u);

    object_property_set_default_str(op, text);
}

/* The device's own properties (properties.def): where each one's field is in KvssdState. */
static const size_t kvssd_property_offset[] = {
#define KVSSD_PROPERTY(field, ...) offsetof(KvssdState, field),
#include "properties.def"
};

static const struct kvssd_property *kvssd_property_find(const char *prop)
{
    const struct kvssd_property *p = kvssd_property_lookup(prop);

    g_assert(p);
    return p;
}

/*
 * Each unset string property gets its default. No other property needs a
 * check here: each number was read and checked by its set
 * (kvssd_number_set()), each enum by its own (kvssd_enum_set()).
 */
static void kvssd_string_defaults(KvssdState *n)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);

    for (size_t i = 0; i < count; i++) {
        char **field = (char **)((char *)n + kvssd_property_offset[i]);

        if (p[i].kind == KVSSD_PROPERTY_STR && !*field) {
            *field = g_strdup(p[i].dflt_text);
        }
    }
}

/*
 * The value of each firmware tunable's property in the config, unless unset
 * (then the preset's stays), by tunables.def's kind column. An enum's value
 * is its index, "auto" (the preset's) the one past the firmware's last.
 */
#define KVSSD_OVERRIDE_LIB(kind, prop, field, flags)
#define KVSSD_OVERRIDE_QEMU(kind, prop, field, flags) KVSSD_OVERRIDE_##kind(prop, field, flags)
#define KVSSD_OVERRIDE_U32(prop, field, flags)                              \
    if (n->field != ((flags) & KVFTL_TUNABLE_UNSET_MAX ? UINT32_MAX : 0)) { \
        c->field = n->field;                                                \
    }
#define KVSSD_OVERRIDE_U64(prop, field, flags)                              \
    if (n->field != ((flags) & KVFTL_TUNABLE_UNSET_MAX ? UINT64_MAX : 0)) { \
        c->field = n->field;                                                \
    }
#define KVSSD_OVERRIDE_BOOL(prop, field, flags) \
    if (n->field != ON_OFF_AUTO_AUTO) {         \
        c->field = n->field == ON_OFF_AUTO_ON;  \
    }
#define KVSSD_OVERRIDE_ENUM(prop, field, flags)                             \
    if (n->field != kvssd_enum_auto(kvftl_tunable_find(prop))) {            \
        kvftl_tunable_put(c, kvftl_tunable_find(prop), (uint64_t)n->field); \
    }
#define KVSSD_OVERRIDE_STR(prop, field, flags) \
    if (n->field) {                            \
        c->field = n->field;                   \
    }

static bool kvssd_build_config(KvssdState *n, struct kvftl_config *c, Error **errp)
{
    char err[256];

    if (n->preset < 0 || n->preset >= KVFTL_PRESETS ||
        kvftl_config_preset(c, kvftl_preset_names[n->preset]) != 0) {
        kvssd_property_range(kvssd_property_find("preset"), err, sizeof(err));
        error_setg(errp, "preset is %d; it must be %s", n->preset, err);
        return false;
    }
#define KVFTL_TUNABLE(field, kind, where, prop, unit, d, pm, cos, min, max, flags, ...) \
    KVSSD_OVERRIDE_##where(kind, prop, field, flags)
#include <kvftl/tunables.def>
    if (n->index == kvssd_enum_auto(kvftl_tunable_find("index"))) {
        kvftl_config_image_index(c); /* an existing image keeps its design, not the preset's */
    }
    if (kvftl_config_check(c, err, sizeof(err)) != 0) {
        error_setg(errp, "%s", err);
        return false;
    }
    return true;
}

/* Close the firmware once: flush the page buffer and write the checkpoint. */
static void kvssd_close_firmware(KvssdState *n)
{
    if (n->ns) {
        kvssd_ns_free(n->ns);
        n->ns = NULL;
    }
    if (n->nvm) {
        kvssd_nvm_ns_free(n->nvm);
        n->nvm = NULL;
    }
    if (n->ftl) {
        const char *image = kvftl_get_config(n->ftl)->image_path;
        g_autofree char *path = image ? g_strdup(image) : NULL;
        struct kvftl_stats st = {0};
        int64_t start_us = g_get_monotonic_time();

        if (path && trace_event_get_state_backends(TRACE_KVSSD_CHECKPOINT)) {
            kvftl_stats_get(n->ftl, &st);
        }
        kvftl_close(n->ftl);        /* with an image: flush, then the checkpoint */
        n->ftl = NULL;
        if (path) {
            trace_kvssd_checkpoint(path, st.live_keys, g_get_monotonic_time() - start_us);
        }
    }
    kvssd_guest_log_flush(n);
}

/*
 * QEMU does not unrealize devices when it exits (quit, SIGTERM, guest
 * poweroff with -no-reboot): checkpoint the image then, so the next start
 * mounts from the checkpoint instead of scanning the log.
 */
static void kvssd_exit_notify(Notifier *notifier, void *data)
{
    KvssdState *n = container_of(notifier, KvssdState, exit_notifier);

    kvssd_close_firmware(n);
}

static void kvssd_realize(PCIDevice *pci, Error **errp)
{
    KvssdState *n = KVSSD(pci);
    struct kvftl_config c;
    char err[256];

    kvssd_string_defaults(n);
    if (!kvssd_build_config(n, &c, errp)) {
        return;
    }
    n->ftl = kvftl_open(&c, err, sizeof(err));
    if (!n->ftl) {
        error_setg(errp, "%s", err);
        return;
    }
    /* an image mounted by scanning its log (a crash, or damage): say what was found */
    const char *note = kvftl_mount_note(n->ftl);
    if (note) {
        warn_report("%s", note);    /* QEMU names the -device option first */
    }
    trace_kvssd_mount(c.image_path ? c.image_path : "", note ? note : "clean");
    /* the namespace of the firmware's personality: KV (CSI 01h) or NVM (CSI 00h) */
    if (c.command_set == KVFTL_CMDSET_NVM) {
        struct kvssd_nvm_config vc = {.mdts_bytes = kvssd_mdts_bytes(n)};

        n->nvm_lba_bytes = c.lba_bytes; /* the property may be unset: the config's value */
        n->nvm = kvssd_nvm_ns_new(n->ftl, &vc, &n->xfer, err, sizeof(err));
    } else {
        struct kvssd_ns_config nc = {
            .tag_table_entries = n->tag_table_entries,
            .inline_timeout_ns = (uint64_t)n->inline_timeout_ms * 1000000,
            .ednek = false,
        };
        n->ns = kvssd_ns_new(n->ftl, &nc, &n->xfer, err, sizeof(err));
    }
    if (!n->ns && !n->nvm) {
        kvftl_close(n->ftl);
        n->ftl = NULL;
        error_setg(errp, "%s", err);
        return;
    }

    struct kvssd_admin *a = &n->admin;
    pstrcpy(a->serial, sizeof(a->serial), n->serial);
    pstrcpy(a->model, sizeof(a->model),
            n->nvm ? "QEMU KVSSD NVMe Block SSD" : "QEMU KVSSD NVMe Key-Value SSD");
    pstrcpy(a->firmware, sizeof(a->firmware), KVSSD_FIRMWARE_REVISION);
    a->vid = KVSSD_PCI_VENDOR_ID;
    a->ssvid = KVSSD_PCI_VENDOR_ID;
    a->mdts = n->mdts;
    a->max_ioqpairs = n->max_ioqpairs;
    a->vwc_present = !c.plp;
    a->preset = (uint8_t)n->preset; /* checked against KVFTL_PRESETS above */
    a->latency = n->latency;
    a->ftl = n->ftl;
    a->ns = n->ns;
    a->xfer = &n->xfer;
    a->dma_unit_bytes = n->dma_unit;
    a->ops = &kvssd_queue_ops;
    a->opaque = n;
    a->created_ns = kvssd_now_ns();
    a->power_cycles = 1;
    kvssd_admin_init(a);

    n->cap = (uint64_t)KVSSD_MQES << KVSSD_CAP_MQES_SHIFT | KVSSD_CAP_CQR |
             15ull << KVSSD_CAP_TO_SHIFT | KVSSD_CAP_CSS_NVM | KVSSD_CAP_CSS_IOCS;
    n->vs = KVSSD_VS(2, 0, 0);

    pci->config[PCI_INTERRUPT_PIN] = 1;
    if (pci_is_express(pci)) {
        pcie_endpoint_cap_init(pci, 0x80);      /* on a PCIe bus (q35): an endpoint */
    }
    pci_config_set_prog_interface(pci->config, 0x2);   /* NVMe */
    memory_region_init_io(&n->iomem, OBJECT(n), &kvssd_mmio_ops, n, "kvssd-bar0", KVSSD_BAR0_BYTES);
    pci_register_bar(pci, 0, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &n->iomem);
    if (msix_init_exclusive_bar(pci, n->max_ioqpairs + 1, 4, errp)) {
        kvssd_close_firmware(n);
        return;
    }
    for (uint32_t v = 0; v <= n->max_ioqpairs; v++) {
        msix_vector_use(pci, v);
    }
    kvssd_queues_init(n);
    n->exit_notifier.notify = kvssd_exit_notify;
    qemu_add_exit_notifier(&n->exit_notifier);
}

static void kvssd_exit(PCIDevice *pci)
{
    KvssdState *n = KVSSD(pci);

    kvssd_queues_reset(n);
    qemu_bh_delete(n->bh);
    timer_free(n->timer);
    msix_uninit_exclusive_bar(pci);
    qemu_remove_exit_notifier(&n->exit_notifier);
    kvssd_close_firmware(n);        /* flush + checkpoint into the image */
}

static void kvssd_reset_hold(Object *obj, ResetType type)
{
    KvssdState *n = KVSSD(obj);

    kvssd_ctrl_reset(n);
    n->cc = 0;
    n->csts = 0;
    n->aqa = 0;
    n->asq = n->acq = 0;
}

/*
 * The property of a firmware tunable, by tunables.def's kind column; unset =
 * the preset's. A number is a number property (kvssd_number_set()), a byte
 * count (KVFTL_TUNABLE_SIZE) of type size.
 */
#define KVSSD_PROP_LIB(kind, prop, field, flags, max)
#define KVSSD_PROP_QEMU(kind, prop, field, flags, max) KVSSD_PROP_##kind(prop, field, flags, max),
#define KVSSD_PROP_U32(prop, field, flags, max)                                        \
    DEFINE_PROP_UNSIGNED(                                                              \
        prop, KvssdState, field, ((flags) & KVFTL_TUNABLE_UNSET_MAX ? UINT32_MAX : 0), \
        *((flags) & KVFTL_TUNABLE_SIZE ? &kvssd_size32_info : &kvssd_u32_info), uint32_t)
#define KVSSD_PROP_U64(prop, field, flags, max)                                        \
    DEFINE_PROP_UNSIGNED(                                                              \
        prop, KvssdState, field, ((flags) & KVFTL_TUNABLE_UNSET_MAX ? UINT64_MAX : 0), \
        *((flags) & KVFTL_TUNABLE_SIZE ? &kvssd_size64_info : &kvssd_u64_info), uint64_t)
#define KVSSD_PROP_BOOL(prop, field, flags, max) \
    DEFINE_PROP_ON_OFF_AUTO(prop, KvssdState, field, ON_OFF_AUTO_AUTO)
#define KVSSD_PROP_ENUM(prop, field, flags, max) \
    DEFINE_PROP_SIGNED(prop, KvssdState, field, (max) + 1, kvssd_##field##_info, int)
#define KVSSD_PROP_STR(prop, field, flags, max) DEFINE_PROP_STRING(prop, KvssdState, field)

/* The QEMU property of a row of properties.def, by its kind column. */
#define KVSSD_DEVICE_PROP_STR(prop, field, dflt) DEFINE_PROP_STRING(prop, KvssdState, field)
#define KVSSD_DEVICE_PROP_PRESET(prop, field, dflt) \
    DEFINE_PROP_SIGNED(prop, KvssdState, field, 0, kvssd_preset_info, int)
#define KVSSD_DEVICE_PROP_BOOL(prop, field, dflt) DEFINE_PROP_BOOL(prop, KvssdState, field, dflt)
#define KVSSD_DEVICE_PROP_U8(prop, field, dflt) \
    DEFINE_PROP_UNSIGNED(prop, KvssdState, field, dflt, kvssd_u8_info, uint8_t)
#define KVSSD_DEVICE_PROP_U32(prop, field, dflt) \
    DEFINE_PROP_UNSIGNED(prop, KvssdState, field, dflt, kvssd_u32_info, uint32_t)
#define KVSSD_DEVICE_PROP_SIZE32(prop, field, dflt) \
    DEFINE_PROP_UNSIGNED(prop, KvssdState, field, dflt, kvssd_size32_info, uint32_t)

static const Property kvssd_props[] = {
#define KVSSD_PROPERTY(field, kind, prop, unit, dflt, ...) \
    KVSSD_DEVICE_PROP_##kind(prop, field, dflt),
#include "properties.def"
#define KVFTL_TUNABLE(field, kind, where, prop, unit, d, pm, cos, min, max, flags, ...) \
    KVSSD_PROP_##where(kind, prop, field, flags, max)
#include <kvftl/tunables.def>
};

static const VMStateDescription kvssd_vmstate = {
    .name = "kvssd",
    .unmigratable = 1,
};

/*
 * One line per property for -device kvssd,help, from the two tables: the
 * device's own (properties.def, kvssd_property_desc()) and the firmware
 * tunables (tunables.def, kvssd_tunable_desc()). docs/properties.md has both.
 */

/* "I/O SQ/CQ pairs; MSI-X vectors = this + 1; from 1 to 64" (QEMU adds the default) */
static char *kvssd_property_desc(const struct kvssd_property *p)
{
    char range[256], dflt[64];

    kvssd_property_range(p, range, sizeof(range));
    kvssd_property_default(p, dflt, sizeof(dflt));
    if (p->kind == KVSSD_PROPERTY_BOOL) {
        return g_strdup(p->help);
    }
    if (p->kind == KVSSD_PROPERTY_STR) {
        return g_strdup_printf("%s; %s (default: %s)", p->help, range, dflt);
    }
    return g_strdup_printf("%s; %s", p->help, range);
}

/*
 * "NAND channels; from 1 to 64 (0 = the preset's: default 4, pm983 8, cosmos 4)",
 * "GC victim policy; greedy, cost-benefit or auto (auto = the preset's: ...)"
 */
static char *kvssd_tunable_desc(const struct kvftl_tunable *t)
{
    char range[256], v[KVFTL_PRESETS][32];
    const char *unset = t->kind == KVFTL_TUNABLE_BOOL || t->kind == KVFTL_TUNABLE_ENUM ? "auto"
                        : (t->flags & KVFTL_TUNABLE_UNSET_MAX)                         ? "unset"
                                                                                       : "0";

    kvftl_tunable_range(t, range, sizeof(range));
    if (t->kind == KVFTL_TUNABLE_ENUM) {
        /* the property's values: the firmware's, then auto */
        size_t n = 0;
        for (uint64_t i = 0; i <= t->max && n < sizeof(range); i++) {
            n += (size_t)snprintf(range + n, sizeof(range) - n, "%s, ", t->names[i]);
        }
        if (n >= 2 && n < sizeof(range)) {
            snprintf(range + n - 2, sizeof(range) - (n - 2), " or %s", KVSSD_ENUM_AUTO);
        }
    }
    if (t->kind == KVFTL_TUNABLE_STR) {
        return g_strdup_printf("%s", t->help);
    }
    for (int i = 0; i < KVFTL_PRESETS; i++) {
        kvftl_tunable_value_text(t, t->preset[i], v[i], sizeof(v[i]));
    }
    QEMU_BUILD_BUG_ON(KVFTL_PRESETS != 3);
    return g_strdup_printf("%s; %s (%s = the preset's: %s %s, %s %s, %s %s)", t->help, range, unset,
                           kvftl_preset_names[0], v[0], kvftl_preset_names[1], v[1],
                           kvftl_preset_names[2], v[2]);
}

static void kvssd_class_init(ObjectClass *oc, KvssdClassData data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);
    ResettableClass *rc = RESETTABLE_CLASS(oc);

    pc->realize = kvssd_realize;
    pc->exit = kvssd_exit;
    pc->vendor_id = KVSSD_PCI_VENDOR_ID;
    pc->device_id = KVSSD_PCI_DEVICE_ID;
    pc->class_id = PCI_CLASS_STORAGE_EXPRESS;
    pc->revision = 1;
    rc->phases.hold = kvssd_reset_hold;
    set_bit(DEVICE_CATEGORY_STORAGE, dc->categories);
    dc->desc = "NVMe Key-Value SSD (kvssd, KV command set + kvftl firmware; "
               "command-set=nvm: a block SSD on the same flash)";
    dc->vmsd = &kvssd_vmstate;
    kvssd_enum_names_init();
    device_class_set_props(dc, kvssd_props);
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);
    for (size_t i = 0; i < count; i++) {
        g_autofree char *desc = kvssd_property_desc(&p[i]);
        object_class_property_set_description(oc, p[i].prop, desc);
    }
    for (size_t i = 0; i < kvftl_tunable_count; i++) {
        if (kvftl_tunables[i].qemu) {
            g_autofree char *desc = kvssd_tunable_desc(&kvftl_tunables[i]);
            object_class_property_set_description(oc, kvftl_tunables[i].prop, desc);
        }
    }
}

static const TypeInfo kvssd_info = {
    .name = TYPE_KVSSD,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(KvssdState),
    .class_init = kvssd_class_init,
    .interfaces = (InterfaceInfo[]){{INTERFACE_PCIE_DEVICE}, {}},
};

static void kvssd_register_types(void)
{
    type_register_static(&kvssd_info);
}

type_init(kvssd_register_types)
