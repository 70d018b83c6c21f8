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
 *   -device kvssd,help   lists every property (the README's Device properties explains them)
 */
#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qemu/cutils.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "system/system.h"

#include "compat.h"
#include "kvssd.h"
#include "trace.h"

void kvssd_ctrl_fatal(KvssdState *n, const char *why)
{
    trace_kvssd_fatal(why);
    n->csts |= KVSSD_CSTS_CFS;
}

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

static void kvssd_ctrl_enable(KvssdState *n)
{
    uint32_t css = KVSSD_CC_CSS(n->cc);

    if ((css != KVSSD_CC_CSS_NVM && css != KVSSD_CC_CSS_ALL) || KVSSD_CC_MPS(n->cc) != 0 ||
        KVSSD_CC_AMS(n->cc) != 0 || !kvssd_admin_queue_setup(n)) {
        trace_kvssd_enable_fail(n->cc, n->aqa, n->asq, n->acq);
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
        }
        return;
    }
    n->xfer.mmio_other_bytes += size;
    trace_kvssd_mmio_write(addr, size, data);
    switch (addr) {
    case KVSSD_REG_INTMS:
        if (size == 4) {
            n->intms |= data & 1;
            kvssd_irq_update(n);
        }
        break;
    case KVSSD_REG_INTMC:
        if (size == 4) {
            n->intms &= ~(data & 1);
            kvssd_irq_update(n);
        }
        break;
    case KVSSD_REG_CC:
        if (size == 4) {
            kvssd_write_cc(n, (uint32_t)data);
        }
        break;
    case KVSSD_REG_AQA:
        if (size == 4 && !(n->cc & KVSSD_CC_EN)) {
            n->aqa = data & KVSSD_AQA_MASK;
        }
        break;
    case KVSSD_REG_ASQ:
    case KVSSD_REG_ASQ + 4:
    case KVSSD_REG_ACQ:
    case KVSSD_REG_ACQ + 4: {
        if (n->cc & KVSSD_CC_EN) {
            break;                   /* read-only while enabled */
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

/* The device's own properties (properties.def): where each one's field is in KvssdState. */
static const size_t kvssd_property_offset[] = {
#define KVSSD_PROPERTY(field, ...) offsetof(KvssdState, field),
#include "properties.def"
};

static const struct kvssd_property *kvssd_property_find(const char *prop)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);

    for (size_t i = 0; i < count; i++) {
        if (strcmp(p[i].prop, prop) == 0) {
            return &p[i];
        }
    }
    g_assert_not_reached();
}

/*
 * Each number property within its range (else a sentence naming the value
 * and the range), in properties.def's order; an unset string gets its
 * default. The preset's name is checked where it is applied.
 */
static bool kvssd_check_properties(KvssdState *n, Error **errp)
{
    size_t count;
    const struct kvssd_property *p = kvssd_properties(&count);
    char range[256];

    for (size_t i = 0; i < count; i++) {
        void *field = (char *)n + kvssd_property_offset[i];
        uint64_t v;

        switch (p[i].kind) {
        case KVSSD_PROPERTY_STR:
        case KVSSD_PROPERTY_PRESET:
            if (!*(char **)field) {
                *(char **)field = g_strdup(p[i].dflt_text);
            }
            continue;
        case KVSSD_PROPERTY_BOOL:
            continue;
        case KVSSD_PROPERTY_U8:
            v = *(uint8_t *)field;
            break;
        case KVSSD_PROPERTY_U32:
            v = *(uint32_t *)field;
            break;
        default:
            g_assert_not_reached();
        }
        if (!kvssd_property_allows(&p[i], v)) {
            kvssd_property_range(&p[i], range, sizeof(range));
            error_setg(errp, "kvssd: %s is %" PRIu64 "; it must be %s", p[i].prop, v, range);
            return false;
        }
    }
    return true;
}

/*
 * The value of each firmware tunable's property in the config, unless unset
 * (then the preset's stays), by tunables.def's kind column. A name that is
 * not one of an enum's values stops realize.
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
#define KVSSD_OVERRIDE_ENUM(prop, field, flags)                                                    \
    if (n->field &&                                                                                \
        kvftl_tunable_parse(c, kvftl_tunable_find(prop), prop, n->field, err, sizeof(err)) != 0) { \
        error_setg(errp, "kvssd: %s", err);                                                        \
        return false;                                                                              \
    }
#define KVSSD_OVERRIDE_STR(prop, field, flags) \
    if (n->field) {                            \
        c->field = n->field;                   \
    }

static bool kvssd_build_config(KvssdState *n, struct kvftl_config *c, Error **errp)
{
    char err[256];

    if (kvftl_config_preset(c, n->preset) != 0) {
        kvssd_property_range(kvssd_property_find("preset"), err, sizeof(err));
        error_setg(errp, "kvssd: preset is '%s'; it must be %s", n->preset, err);
        return false;
    }
#define KVFTL_TUNABLE(field, kind, where, prop, unit, d, pm, cos, min, max, flags, ...) \
    KVSSD_OVERRIDE_##where(kind, prop, field, flags)
#include <kvftl/tunables.def>
    if (kvftl_config_check(c, err, sizeof(err)) != 0) {
        error_setg(errp, "kvssd: %s", err);
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
        kvftl_close(n->ftl);
        n->ftl = NULL;
    }
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

    if (!kvssd_check_properties(n, errp)) {
        return;
    }
    if (!kvssd_build_config(n, &c, errp)) {
        return;
    }
    n->ftl = kvftl_open(&c, err, sizeof(err));
    if (!n->ftl) {
        error_setg(errp, "kvssd: %s", err);
        return;
    }
    /* an image mounted by scanning its log (a crash, or damage): say what was found */
    const char *note = kvftl_mount_note(n->ftl);
    if (note) {
        warn_report("kvssd: %s", note);
    }
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
        error_setg(errp, "kvssd: %s", err);
        return;
    }

    struct kvssd_admin *a = &n->admin;
    pstrcpy(a->serial, sizeof(a->serial), n->serial);
    pstrcpy(a->model, sizeof(a->model),
            n->nvm ? "QEMU KVSSD NVMe Block SSD" : "QEMU KVSSD NVMe Key-Value SSD");
    pstrcpy(a->firmware, sizeof(a->firmware), "kvftl1.0");
    a->vid = KVSSD_PCI_VENDOR_ID;
    a->ssvid = KVSSD_PCI_VENDOR_ID;
    a->mdts = n->mdts;
    a->max_ioqpairs = n->max_ioqpairs;
    a->vwc_present = !c.plp;
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

/* The property of a firmware tunable, by tunables.def's kind column; unset = the preset's. */
#define KVSSD_PROP_LIB(kind, prop, field, flags)
#define KVSSD_PROP_QEMU(kind, prop, field, flags) KVSSD_PROP_##kind(prop, field, flags),
#define KVSSD_PROP_U32(prop, field, flags)      \
    DEFINE_PROP_UINT32(prop, KvssdState, field, \
                       ((flags) & KVFTL_TUNABLE_UNSET_MAX ? UINT32_MAX : 0))
#define KVSSD_PROP_U64(prop, field, flags)      \
    DEFINE_PROP_UINT64(prop, KvssdState, field, \
                       ((flags) & KVFTL_TUNABLE_UNSET_MAX ? UINT64_MAX : 0))
#define KVSSD_PROP_BOOL(prop, field, flags) \
    DEFINE_PROP_ON_OFF_AUTO(prop, KvssdState, field, ON_OFF_AUTO_AUTO)
#define KVSSD_PROP_ENUM(prop, field, flags) DEFINE_PROP_STRING(prop, KvssdState, field)
#define KVSSD_PROP_STR(prop, field, flags) DEFINE_PROP_STRING(prop, KvssdState, field)

/* The QEMU property of a row of properties.def, by its kind column. */
#define KVSSD_DEVICE_PROP_STR(prop, field, dflt) DEFINE_PROP_STRING(prop, KvssdState, field)
#define KVSSD_DEVICE_PROP_PRESET(prop, field, dflt) DEFINE_PROP_STRING(prop, KvssdState, field)
#define KVSSD_DEVICE_PROP_BOOL(prop, field, dflt) DEFINE_PROP_BOOL(prop, KvssdState, field, dflt)
#define KVSSD_DEVICE_PROP_U8(prop, field, dflt) DEFINE_PROP_UINT8(prop, KvssdState, field, dflt)
#define KVSSD_DEVICE_PROP_U32(prop, field, dflt) DEFINE_PROP_UINT32(prop, KvssdState, field, dflt)

static const Property kvssd_props[] = {
#define KVSSD_PROPERTY(field, kind, prop, unit, dflt, ...) \
    KVSSD_DEVICE_PROP_##kind(prop, field, dflt),
#include "properties.def"
#define KVFTL_TUNABLE(field, kind, where, prop, unit, d, pm, cos, min, max, flags, ...) \
    KVSSD_PROP_##where(kind, prop, field, flags)
#include <kvftl/tunables.def>
};

static const VMStateDescription kvssd_vmstate = {
    .name = "kvssd",
    .unmigratable = 1,
};

/*
 * One line per property for -device kvssd,help, from the two tables: the
 * device's own (properties.def, kvssd_property_desc()) and the firmware
 * tunables (tunables.def, kvssd_tunable_desc()). The README has both.
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
    if (p->kind == KVSSD_PROPERTY_STR || p->kind == KVSSD_PROPERTY_PRESET) {
        return g_strdup_printf("%s; %s (default: %s)", p->help, range, dflt);
    }
    return g_strdup_printf("%s; %s", p->help, range);
}

/* "NAND channels; from 1 to 64 (0 = the preset's: default 4, pm983 8, cosmos 4)" */
static char *kvssd_tunable_desc(const struct kvftl_tunable *t)
{
    char range[256], v[KVFTL_PRESETS][32];
    const char *unset = t->kind == KVFTL_TUNABLE_BOOL ? "auto"
                        : t->kind == KVFTL_TUNABLE_ENUM || (t->flags & KVFTL_TUNABLE_UNSET_MAX)
                            ? "unset"
                            : "0";

    kvftl_tunable_range(t, range, sizeof(range));
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
