/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The admin command set of the kvssd controller, without QEMU types:
 * Identify, Get Log Page, Get/Set Features, Asynchronous Event Request,
 * Abort, Format NVM, the queue-management commands (through callbacks into
 * the transport) and the vendor FTL-check command. The transport (queues.c)
 * fetches an admin SQE, wraps its data pointer in a struct kvssd_dptr and
 * calls kvssd_admin_execute().
 */
#ifndef HW_KVSSD_ADMIN_H
#define HW_KVSSD_ADMIN_H

#include <stdbool.h>
#include <stdint.h>

#include "cmdset.h"

/*
 * Admin opcodes, statuses, log page and feature identifiers and the
 * asynchronous event encoding: <kvssd/nvme.h>; our vendor FTL-check command
 * (C4h), statistics log and reset feature: <kvssd/ext.h>.
 */

#define KVSSD_AERL 3                 /* Identify AERL: 4 outstanding AERs */
#define KVSSD_ADMIN_MAX_VECTORS 65     /* 64 I/O queue pairs + the admin queue */
#define KVSSD_ADMIN_MAX_EVENTS 8       /* queued asynchronous events */
#define KVSSD_ERROR_LOG_ENTRIES 64   /* Identify ELPE + 1 */
#define KVSSD_PE_CYCLES 3000         /* rated erase cycles per block (SMART percentage used) */
#define KVSSD_FIRMWARE_REVISION "kvftl1.0" /* Identify FR, the firmware slot log, config log */

/* Queue management, implemented by the transport. Each returns an NVMe status. */
struct kvssd_admin_ops {
    uint16_t (*create_cq)(void *opaque, uint16_t qid, uint16_t qsize0, uint64_t base,
                          uint16_t vector, bool ien, bool pc);
    uint16_t (*create_sq)(void *opaque, uint16_t qid, uint16_t qsize0, uint64_t base, uint16_t cqid,
                          bool pc);
    uint16_t (*delete_sq)(void *opaque, uint16_t qid);
    uint16_t (*delete_cq)(void *opaque, uint16_t qid);
};

struct kvssd_features {
    uint32_t arbitration, power_mgmt, error_recovery, irq_coalescing, write_atomicity;
    uint32_t async_event_config, iocs_profile;
    uint16_t temp_over_k, temp_under_k;
    bool wce;
    uint16_t nsqa, ncqa;     /* I/O queues allocated (Number of Queues), 0-based */
    uint32_t irq_vector_config[KVSSD_ADMIN_MAX_VECTORS];
};

struct kvssd_error_entry {
    uint64_t error_count;
    uint16_t sqid, cid, status, param_loc;
    uint64_t lba;
    uint32_t nsid;
};

struct kvssd_admin {
    /* identity, set by the transport before use */
    char serial[21], model[41], firmware[9];
    uint16_t vid, ssvid;
    uint8_t mdts;                /* MDTS: transfers up to 4 KiB << mdts; 0 = no limit */
    uint32_t max_ioqpairs;       /* 1..64; also the interrupt vectors - 1 */
    bool vwc_present;            /* plp off: the page buffer is a volatile cache */
    uint8_t preset;              /* the index in kvftl_preset_names[] (config log) */
    bool latency;                /* completions held to simulated time (config log) */
    struct kvftl *ftl;
    struct kvssd_ns *ns;         /* the KV namespace; NULL for the nvm personality */
    struct kvssd_xfer_counters *xfer;
    uint32_t dma_unit_bytes;
    const struct kvssd_admin_ops *ops;
    void *opaque;

    /* state */
    struct kvssd_features feat;
    uint16_t aer_cids[KVSSD_AERL + 1];
    uint32_t nr_aer;
    uint32_t events[KVSSD_ADMIN_MAX_EVENTS];
    uint32_t nr_events;
    struct kvssd_error_entry errors[KVSSD_ERROR_LOG_ENTRIES];
    uint64_t error_count;
    /* SMART counters (lifetime: not cleared by the statistics reset) */
    uint64_t bytes_read, bytes_written, read_cmds, write_cmds;
    uint64_t busy_ns, power_cycles, unsafe_shutdowns;
    uint64_t created_ns;
};

struct kvssd_admin_req {
    const struct kvssd_sqe *sqe;
    struct kvssd_dptr dptr;
    uint64_t now_ns;
    /* results */
    uint16_t status;
    uint32_t dw0, dw1;
    bool deferred;               /* AER: completes later (kvssd_admin_event) */
    /*
     * Parking, as struct kvssd_req (cmdset.h): with may_park the FTL check
     * (C4h) examines KVSSD_SLICE_CHECK_BYTES per call and returns with
     * in_progress and its walk in cont until it is done. The firmware must
     * not change meanwhile: the transport runs no I/O while it is parked.
     */
    bool may_park;               /* in */
    void *cont;                  /* in: NULL for a new command; out: the parked state */
    bool in_progress;            /* out */
};

/* Index page + blob bytes the FTL check examines per call when parked. */
#define KVSSD_SLICE_CHECK_BYTES (256u << 10)

/* kvssd_admin_cancel() - drop a parked admin command's state (reset, SQ deletion). */
void kvssd_admin_cancel(struct kvssd_admin *a, void *cont);

/* kvssd_admin_init() - defaults of every feature; identity fields stay as set. */
void kvssd_admin_init(struct kvssd_admin *a);

/* kvssd_admin_reset() - controller reset: outstanding AERs are dropped, features kept. */
void kvssd_admin_reset(struct kvssd_admin *a);

/* kvssd_admin_execute() - run one admin command. Never aborts on guest input. */
void kvssd_admin_execute(struct kvssd_admin *a, struct kvssd_admin_req *req);

/*
 * kvssd_admin_event() - an asynchronous event happened. Returns true with the
 * AER's command identifier in *@cid when an outstanding AER completes now
 * (DW0 = @event); otherwise the event is queued (up to 8) for the next AER.
 */
bool kvssd_admin_event(struct kvssd_admin *a, uint32_t event, uint16_t *cid);

/* kvssd_admin_record_error() - add a failed command to the Error Information log. */
void kvssd_admin_record_error(struct kvssd_admin *a, uint16_t sqid, uint16_t cid, uint16_t status,
                              uint32_t nsid);

/* kvssd_admin_count_io() - SMART accounting of one completed I/O command. */
void kvssd_admin_count_io(struct kvssd_admin *a, uint8_t opcode, uint64_t bytes_read,
                          uint64_t bytes_written, uint64_t busy_ns);

/*
 * I/O commands: what the controller does around the command set, the same
 * in every transport (queues.c, host/lib/sim.c).
 *
 * kvssd_admin_io_check() - before the command set: KVSSD_SC_SUCCESS to run
 * @sqe, else its status. A fused command (not supported) is Invalid Field
 * (DNR). On the KV namespace an NSID other than 1 is Invalid Namespace or
 * Format (DNR), except FFFFFFFFh for Flush and any value for the
 * full-layout inline transfer (its CDW1 carries tag and sequence); the NVM
 * command set checks its own NSID (nvm.c).
 */
uint16_t kvssd_admin_io_check(const struct kvssd_admin *a, const struct kvssd_sqe *sqe);

/*
 * kvssd_admin_io_done() - after the command set completed @req (not parked):
 * with a volatile write cache the host disabled (vwc_present, WCE 0), a
 * successful command that writes (KV: opcode bit 0; NVM: Write, Write
 * Zeroes, Dataset Management) is written through, kvftl_flush() at
 * req->done_ns, and req->done_ns becomes the flush's completion if later.
 * Then SMART counts it (kvssd_admin_count_io(), busy from req->now_ns to
 * req->done_ns), whatever its status. @bytes_read / @bytes_written: the
 * data the transport moved to / from the host (inline payload included).
 */
void kvssd_admin_io_done(struct kvssd_admin *a, struct kvssd_req *req, uint64_t bytes_read,
                         uint64_t bytes_written);

/*
 * Size of the namespace in bytes (user capacity after over-provisioning;
 * for the nvm personality NSZE x lba-bytes).
 */
uint64_t kvssd_admin_capacity_bytes(const struct kvssd_admin *a);

/*
 * kvssd_config_log_fill() - the configuration log page (LID C1h) of a device
 * whose firmware runs @cfg: @firmware (Identify FR), @preset (the index in
 * kvftl_preset_names[]), @latency (the latency property) and
 * @capacity_bytes (the user capacity). For tools that run the firmware in
 * process (kvftl-bench, kvssd-cmd-bench) and report the same fields.
 */
void kvssd_config_log_fill(struct kvssd_config_log *l, const struct kvftl_config *cfg,
                           const char *firmware, unsigned preset, bool latency,
                           uint64_t capacity_bytes);

/* Does the firmware run the nvm personality (an NVM namespace, CSI 00h)? */
bool kvssd_admin_nvm(const struct kvssd_admin *a);

#endif /* HW_KVSSD_ADMIN_H */
